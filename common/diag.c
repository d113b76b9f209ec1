/*
 * diag.c -- keeps the last one-line error until the command prints it.
 * In common/ because devices report their setup failures (a tap that will
 * not open, a thread that will not start) the same way the launcher does.
 */
#include "diag.h"

#include <stdarg.h>
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#include <stdio.h>
#include <string.h>

static char last[512];

int diag_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last, sizeof(last), fmt, ap);
	va_end(ap);
	return -1;
}

int usage_error(const char *command, const char *fmt, const char *arg)
{
	char what[400];

	snprintf(what, sizeof(what), fmt, arg);
	/* `arg` is the user's word, and argv words may hold any byte: a newline
	 * or escape in it would break the one line (a control character is
	 * shown as '?'). */
	for (char *c = what; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	fprintf(stderr, "lguest-kvm %s: %s -- see 'lguest-kvm %s --help'\n", command, what, command);
	return EXIT_USAGE;
}

void diag_print(void)
{
	fprintf(stderr, "lguest-kvm: %s\n", last[0] ? last : "unknown error");
}

void diag_last_line(const char *path, char *out, size_t size)
{
	char line[512];
	FILE *f = fopen(path, "r");

	snprintf(out, size, "no error message");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "lguest-kvm", 10)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, size, "%.200s", line);
		}
	if (f)
		fclose(f);
}
