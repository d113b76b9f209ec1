/*
 * gnuplot.c -- the data file, the pipe and the exit status of one gnuplot
 * run (gnuplot.h).  The data goes through a file rather than inline in the
 * script because a script plots the same data several times (one block per
 * panel, `index N`), which inline data cannot do.  Whatever gnuplot says
 * goes to stderr, so that a command's stdout (`trace --json`) stays what
 * the command wrote.
 */
#include "gnuplot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"

static bool is_svg(const char *path)
{
	const char *ext = strrchr(path, '.');

	return ext && !strcmp(ext, ".svg");
}

bool plot_file_name_ok(const char *path)
{
	const char *ext = strrchr(path, '.');

	return ext && (!strcmp(ext, ".svg") || !strcmp(ext, ".png"));
}

void gnuplot_write_string(FILE *g, const char *s)
{
	fputc('\'', g);
	for (; *s; s++)
		if (*s == '\'')
			fputs("''", g);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, g);
	fputc('\'', g);
}

int gnuplot_draw(const char *out, unsigned width, unsigned height, void (*write_data)(FILE *d, const void *ctx),
		 void (*write_script)(FILE *g, const void *ctx, const char *data), const void *ctx)
{
	char data[] = "/tmp/lkvm-plot-XXXXXX";
	int fd, rc;
	FILE *d, *g;

	fd = mkstemp(data);
	if (fd < 0)
		return diag_fail("--plot: cannot create a temporary data file: %s", strerror(errno));
	if (!(d = fdopen(fd, "w"))) {
		close(fd);
		unlink(data);
		return diag_fail("--plot: cannot write a temporary data file");
	}
	write_data(d, ctx);
	if (fclose(d)) {
		unlink(data);
		return diag_fail("--plot: cannot write a temporary data file: %s", strerror(errno));
	}
	g = popen("gnuplot 1>&2", "w");
	if (!g) {
		unlink(data);
		return diag_fail("--plot: cannot start a shell for gnuplot: %s", strerror(errno));
	}
	fprintf(g, "set terminal %s size %u,%u font 'sans,11'\nset output ", is_svg(out) ? "svg dynamic" : "pngcairo",
		width, height);
	gnuplot_write_string(g, out);
	fputc('\n', g);
	write_script(g, ctx, data);
	rc = pclose(g);
	unlink(data);
	if (WIFEXITED(rc) && WEXITSTATUS(rc) == 127)   /* the shell's "command not found" */
		return diag_fail("--plot %s: gnuplot is not installed -- apt-get install gnuplot-nox", out);
	if (rc != 0)
		return diag_fail("--plot %s: gnuplot failed (exit %d); its own messages are above", out,
				 WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
	return 0;
}
