/*
 * gnuplot.h -- one figure through gnuplot, for `table --plot` and `trace
 * --plot`.  A command knows its numbers and its drawing; this knows how to
 * get them to gnuplot: the numbers go into a temporary data file, then the
 * script (which names that file) is piped into gnuplot, with the terminal
 * and the output already set from the output's name, and the temporary file
 * is removed whatever happens.  A missing or failing gnuplot becomes one
 * diag line, like any other error.
 */
#ifndef GNUPLOT_H
#define GNUPLOT_H

#include <stdbool.h>
#include <stdio.h>

/* Whether `path` names a file the helper can draw: it ends in .svg or .png
 * (the terminal follows from it).  Commands check this while parsing, so a
 * bad name is a usage error before any work. */
bool plot_file_name_ok(const char *path);

/* `s` as a single-quoted gnuplot string: a quote doubled, a control
 * character (which would end the command) dropped.  For any text that
 * reaches a script from outside -- a file name, a trace's header -- since
 * gnuplot can run shell commands. */
void gnuplot_write_string(FILE *g, const char *s);

/* Draw `out` at width x height: write_data(d, ctx) fills the data file,
 * then write_script(g, ctx, data) writes the script, `data` being the data
 * file's name.  0, or -1 with diag set ("--plot OUT: ..."). */
int gnuplot_draw(const char *out, unsigned width, unsigned height, void (*write_data)(FILE *d, const void *ctx),
		 void (*write_script)(FILE *g, const void *ctx, const char *data), const void *ctx);

#endif
