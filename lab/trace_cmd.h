/*
 * trace_cmd.h -- `lguest-kvm trace FILE`: the timeline `run --trace`
 * recorded (trace_file.h), summarised as text or JSON and, with --plot,
 * drawn through gnuplot (trace_cmd.c, docs/trace.md).
 */
#ifndef TRACE_CMD_H
#define TRACE_CMD_H

int trace_main(int argc, char **argv);   /* argv[0] = "trace" */

#endif
