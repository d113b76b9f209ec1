/*
 * trace_cmd.h -- `lguest-kvm trace FILE`: the timeline `run --trace`
 * recorded (trace_file.h), summarised as text or JSON and, with --plot,
 * drawn through gnuplot (trace_cmd.c, docs/trace.md).
 *
 * Its options and parser are here too, for the command-line fuzzer and the
 * option-bounds test: parsing reads no file.
 */
#ifndef TRACE_CMD_H
#define TRACE_CMD_H

#include <stdbool.h>

#include "opt_table.h"

struct trace_options {
	const char *file;
	const char *plot;
	double from_ms, to_ms;      /* to_ms < 0: to the end */
	bool json;
};

extern const struct opt trace_opts[];   /* each option, described once */

/* Parse (argv[0] = "trace"), defaults first: 0, EXIT_USAGE after the one
 * line, or -1 for --help/--version. */
int trace_parse(struct trace_options *o, int argc, char **argv);

int trace_main(int argc, char **argv);   /* argv[0] = "trace" */

#endif
