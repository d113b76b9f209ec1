/*
 * table.h -- `lguest-kvm table`: run the notification sweep and print the
 * 2008 table next to the modern rows.
 *
 * table_parse() is the whole command line's check -- the table's options,
 * the rows they build, and every row's child `run` command line through
 * the run parser -- with no side effect: nothing is created, started or
 * run, so the command-line fuzzer and the option-bounds test drive it
 * directly.  table_main() then makes --trace-dir and runs the sweep.
 */
#ifndef TABLE_H
#define TABLE_H

#include "opt_table.h"

struct table;
struct row;

extern const struct opt table_opts[];   /* each option, described once */

/* Defaults, then argv (argv[0] = "table") into *t, its rows built and each
 * row's child command line checked: 0, EXIT_USAGE after the one line, or
 * -1 for --help/--version (already printed). */
int table_parse(struct table *t, int argc, char **argv);

/* Room for the longest child command line table_child_argv() builds: 17
 * words of its own, every passed-through word, a row's, the NULL. */
#define TABLE_CHILD_ARGV (17 + 40 + 6 + 1)
/* Row r's child command line for `model`, argv[0] the launcher itself:
 * "run --quiet --stats-json JSON ... --trace TRACE (if not NULL) ... --peer
 * PEER (tcp; NULL: where the lab's receiver will listen)", then the
 * passed-through options and the row's own; NULL-terminated.  Returns the
 * word count (without the NULL). */
unsigned table_child_argv(const struct table *t, const char *model, const struct row *r, const char *json,
			  const char *trace, const char *peer, char **argv);

int table_main(int argc, char **argv);

#endif
