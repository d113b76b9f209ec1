/*
 * opt_table.c -- parse, check and print a command's options from their one
 * description (opt_table.h).
 *
 * opt_parse() builds getopt_long's table from the description, stores each
 * value where the description says, and checks it against what the
 * description says it accepts; a bad value is one usage line naming the
 * option and the accepted values.  opt_usage() prints the same description
 * as --help's option list.
 */
#include "opt_table.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

#define OPT_MAX       64u   /* options per command, --help and --version included */
#define HELP_COLUMN   23u   /* where the help text starts */
#define HELP_WIDTH    80u   /* where --help wraps */

bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end || end == s || (shift && v > (~0ull >> shift)))
		return false;
	*out = v << shift;
	return true;
}

bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;

	if (!parse_size(s, &v) || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* `arg` is one of the '|'-separated `words`. */
static bool is_word(const char *words, const char *arg)
{
	size_t n = strlen(arg);

	for (const char *w = words; *w; ) {
		size_t len = strcspn(w, "|");

		if (len == n && !strncmp(w, arg, n))
			return true;
		w += len + (w[len] == '|');
	}
	return false;
}

const char *opt_accepts(const struct opt *o, char *buf, size_t size)
{
	size_t at = 0;

	if (o->accepts)
		return o->accepts;
	buf[0] = 0;
	switch (o->kind) {
	case OPT_U32:
	case OPT_SIZE:
		snprintf(buf, size, "%llu to %llu", (unsigned long long)o->min, (unsigned long long)o->max);
		break;
	case OPT_POW2:
		snprintf(buf, size, "a power of two from %llu to %llu", (unsigned long long)o->min,
			 (unsigned long long)o->max);
		break;
	case OPT_WORD:
		/* "a|b|c" -> "a, b or c" */
		for (const char *w = o->words; *w && at + 1 < size; ) {
			size_t len = strcspn(w, "|");
			const char *sep = w == o->words ? "" : strchr(w + len, '|') ? ", " : " or ";

			at += (size_t)snprintf(buf + at, size - at, "%s%.*s", sep, (int)len, w);
			w += len + (w[len] == '|');
		}
		break;
	default:
		break;
	}
	return buf;
}

/* Store one option's value; false if it is not one the option accepts. */
static bool store(const struct opt *o, const char *arg, void *opts)
{
	char *at;
	uint64_t v;

	if (o->offset == OPT_NO_FIELD) {   /* before `at`: opts + SIZE_MAX would overflow the pointer */
		if (o->kind == OPT_WORD && !is_word(o->words, arg))
			return false;
		return o->parse(arg, opts);
	}
	at = (char *)opts + o->offset;
	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)at = true;
		break;
	case OPT_STRING:
		*(const char **)at = arg;
		break;
	case OPT_SIZE:
		if (!parse_size(arg, &v) || v < o->min || v > o->max)
			return false;
		*(uint64_t *)at = v;
		break;
	case OPT_U32:
	case OPT_POW2:
		if (!parse_size(arg, &v) || v < o->min || v > o->max || (o->kind == OPT_POW2 && (v & (v - 1))))
			return false;
		*(uint32_t *)at = (uint32_t)v;
		break;
	case OPT_WORD:
		if (!is_word(o->words, arg))
			return false;
		*(const char **)at = arg;
		break;
	case OPT_CUSTOM:
		return o->parse(arg, opts);
	default:
		return false;
	}
	return !o->parse || o->parse(arg, opts);
}

/* OPT_PASS: "--name" and its argument onto the command's pass list. */
static int pass_on(const struct opt_command *cmd, unsigned index, const struct opt *o, char *arg)
{
	static char flags[OPT_MAX][40];   /* "--name", by option: argv words must outlive the parse */

	if (*cmd->npass + 1 + (arg != NULL) > cmd->pass_max)
		return usage_error(cmd->name, "too many options%s", "");
	snprintf(flags[index], sizeof(flags[0]), "--%s", o->name);
	cmd->pass[(*cmd->npass)++] = flags[index];
	if (arg)
		cmd->pass[(*cmd->npass)++] = arg;
	return 0;
}

int opt_parse(const struct opt_command *cmd, void *opts, int argc, char **argv, int *first_arg)
{
	struct option longopts[OPT_MAX + 3];
	const struct opt *by_index[OPT_MAX];
	size_t n = 0;
	int c, index;

	for (const struct opt *o = cmd->table; o->kind != OPT_END; o++) {
		if (o->kind == OPT_SECTION)
			continue;
		if (n == OPT_MAX)
			abort();   /* a command with more options than OPT_MAX: raise it */
		by_index[n] = o;
		longopts[n] = (struct option){ o->name, o->arg ? required_argument : no_argument, NULL, 0 };
		n++;
	}
	longopts[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[n++] = (struct option){ "version", no_argument, NULL, 'V' };
	longopts[n] = (struct option){ 0 };

	/* 0, not 1: glibc then starts afresh.  With 1 it would go on with the
	 * rest of a short-option cluster the last parse left unread ("-hV"
	 * stops at h) -- a pointer into that parse's argv, perhaps freed. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", longopts, &index)) != -1) {
		char accepts[400], what[480];
		const struct opt *o;

		if (c == 'h') {
			fputs(cmd->intro, stdout);
			opt_usage(stdout, cmd);
			fputs(cmd->outro, stdout);
			return -1;
		}
		if (c == 'V') {
			printf("lguest-kvm %s\n", LKVM_VERSION);
			return -1;
		}
		if (c != 0)
			return usage_error(cmd->name, "unknown or incomplete option '%s'", argv[optind - 1]);
		o = by_index[index];
		if (o->kind == OPT_PASS) {
			if (pass_on(cmd, (unsigned)index, o, optarg))
				return EXIT_USAGE;
			continue;
		}
		if (store(o, optarg, opts))
			continue;
		snprintf(what, sizeof(what), "--%s '%s': expected %s", o->name, optarg,
			 opt_accepts(o, accepts, sizeof(accepts)));
		return usage_error(cmd->name, "%s", what);
	}
	*first_arg = optind;
	return 0;
}

/* Words of `text` from column `col`, wrapped at HELP_WIDTH, continuation
 * lines indented to HELP_COLUMN. */
static void print_wrapped(FILE *f, const char *text, size_t col)
{
	bool line_start = true;

	while (*text) {
		size_t len = strcspn(text, " ");

		if (!line_start && col + 1 + len > HELP_WIDTH) {
			fprintf(f, "\n%*s", (int)HELP_COLUMN, "");
			col = HELP_COLUMN;
		} else if (!line_start) {
			fputc(' ', f);
			col++;
		}
		line_start = false;
		fprintf(f, "%.*s", (int)len, text);
		col += len;
		text += len;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

static void usage_entry(FILE *f, const char *left, const char *text)
{
	int n = fprintf(f, "  %s", left);

	if (!*text) {
		fputc('\n', f);
		return;
	}
	if (n + 2 > (int)HELP_COLUMN)
		n += fprintf(f, "  ");
	else
		n += fprintf(f, "%*s", (int)HELP_COLUMN - n, "");
	print_wrapped(f, text, (size_t)n);
}

/* The default --help states: `def`, or the value the defaults hold (none
 * for a flag, an unset text or a field only `parse` sees). */
static const char *default_text(const struct opt *o, const void *defaults, char *buf, size_t size)
{
	const char *at;
	uint64_t v;

	if (o->def || o->offset == OPT_NO_FIELD)
		return o->def;
	at = (const char *)defaults + o->offset;
	switch (o->kind) {
	case OPT_STRING:
	case OPT_WORD:
		return *(const char *const *)at;
	case OPT_U32:
	case OPT_POW2:
		snprintf(buf, size, "%u", *(const uint32_t *)at);
		return buf;
	case OPT_SIZE:
		v = *(const uint64_t *)at;
		if (!v)
			return NULL;   /* a size of 0 is "not given" */
		if (!(v & ((1ull << 30) - 1)))
			snprintf(buf, size, "%lluG", (unsigned long long)(v >> 30));
		else if (!(v & ((1ull << 20) - 1)))
			snprintf(buf, size, "%lluM", (unsigned long long)(v >> 20));
		else if (!(v & ((1ull << 10) - 1)))
			snprintf(buf, size, "%lluK", (unsigned long long)(v >> 10));
		else
			snprintf(buf, size, "%llu", (unsigned long long)v);
		return buf;
	default:
		return NULL;
	}
}

void opt_usage(FILE *f, const struct opt_command *cmd)
{
	for (const struct opt *o = cmd->table; o->kind != OPT_END; o++) {
		char left[64], text[1024], accepts[400], def_buf[32];
		const char *acc, *def;

		if (o->kind == OPT_SECTION) {
			fprintf(f, "%s\n", o->help);
			continue;
		}
		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		acc = opt_accepts(o, accepts, sizeof(accepts));
		def = default_text(o, cmd->defaults, def_buf, sizeof(def_buf));
		snprintf(text, sizeof(text), "%s%s%s%s%s%s%s", o->help, *acc || def ? " (" : "", acc,
			 *acc && def ? "; " : "", def ? "default " : "", def ? def : "", *acc || def ? ")" : "");
		usage_entry(f, left, text);
	}
	usage_entry(f, "-h, --help", "this text");
	usage_entry(f, "-V, --version", "print the version");
}
