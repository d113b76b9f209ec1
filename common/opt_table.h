/*
 * opt_table.h -- a command's options, each described once.
 *
 * A command (run, table, receive, send, trace) lists its options in one
 * array of struct opt: the name, the argument as --help shows it, where
 * the value goes in the command's own options struct, the values it
 * accepts, its default and its help text.  From that one description
 * opt_parse() parses argv (getopt_long underneath) and range-checks every
 * value, with the one-line usage error naming the option and what it
 * accepts; opt_usage() prints the option list of --help.  Nothing about an
 * option is written anywhere else, so the parser, the check, the error and
 * --help cannot drift apart; README's tables are checked against --help by
 * tests/docs/check_option_tables.py.
 *
 * What one option cannot say -- one option's value against another's
 * (--segments against --ring) -- the command checks after opt_parse(),
 * from the struct it filled.
 */
#ifndef OPT_TABLE_H
#define OPT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum opt_kind {
	OPT_END,      /* ends the array */
	OPT_SECTION,  /* no option: a heading --help prints (`help`) */
	OPT_FLAG,     /* no argument: sets the bool at `offset` */
	OPT_STRING,   /* any text: the const char * at `offset` points into argv */
	OPT_SIZE,     /* SIZE[K|M|G] from `min` to `max`: a uint64_t */
	OPT_U32,      /* a number (K/M/G allowed) from `min` to `max`: a uint32_t */
	OPT_POW2,     /* a power of two from `min` to `max`: a uint32_t */
	OPT_WORD,     /* one of `words` ("spin|halt"): the const char * points into argv */
	OPT_CUSTOM,   /* `parse` takes the text and says whether it was good */
	OPT_PASS,     /* handed on as given ("--name", its argument) to the command's
			 pass list, for another command to check (table -> run) */
};

struct opt {
	enum opt_kind kind;
	const char *name;      /* "mem" for --mem */
	const char *arg;       /* "SIZE" as --help shows it; NULL for a flag */
	size_t offset;         /* where the value goes (offsetof in the command's struct),
				  or OPT_NO_FIELD: only `parse` sees it */
	uint64_t min, max;     /* OPT_SIZE, OPT_U32, OPT_POW2 */
	const char *words;     /* OPT_WORD: the accepted words, '|' between them */
	/* OPT_CUSTOM: store `arg` in the struct at `opts`; false if it is not
	 * one of the accepted values.  Also, for any kind, run after a good
	 * value is stored (e.g. to note that the option was given). */
	bool (*parse)(const char *arg, void *opts);
	/* What it accepts, as the error and --help say it ("16M to 3G", "spin
	 * or halt").  NULL: made from min..max or from words. */
	const char *accepts;
	const char *def;       /* the default as --help says it; NULL: the value
				  the defaults struct holds, if any */
	const char *help;      /* what it does; --help wraps it */
};

#define OPT_SECTION_ROW(text) { .kind = OPT_SECTION, .help = (text) }
#define OPT_NO_FIELD SIZE_MAX

/* "SIZE[K|M|G]" -> bytes; false on junk or overflow. */
bool parse_size(const char *s, uint64_t *out);
/* A number (K/M/G allowed) from lo to hi. */
bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);

/* Parse argv (argv[0] = the command's name) into the struct at `opts`,
 * whose defaults are already set.  -h/--help prints `intro`, the option
 * list (opt_usage) and `outro` on stdout; -V/--version the version.
 * Returns 0 with *first_arg the index of the first argument that is not
 * an option, EXIT_USAGE after printing the one line, or -1 for --help or
 * --version (already printed). */
struct opt_command {
	const char *name;          /* "run": for the usage line */
	const struct opt *table;
	const char *intro, *outro; /* --help's text before and after the option list */
	const void *defaults;      /* the options struct as the defaults leave it */
	char **pass;               /* OPT_PASS: where the words go ... */
	unsigned *npass;           /* ... how many are there ... */
	unsigned pass_max;         /* ... and room for how many */
};
int opt_parse(const struct opt_command *cmd, void *opts, int argc, char **argv, int *first_arg);

/* The option list of --help: one entry per option, "  --name ARG", then
 * the help, what it accepts and the default (`def`, or else the value the
 * defaults struct holds), wrapped at 80 columns. */
void opt_usage(FILE *f, const struct opt_command *cmd);

/* What `o` accepts, as the error and --help say it, into buf. */
const char *opt_accepts(const struct opt *o, char *buf, size_t size);

#endif
