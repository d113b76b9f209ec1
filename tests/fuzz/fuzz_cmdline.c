/*
 * fuzz_cmdline.c -- every command's option parsing under libFuzzer, ASan
 * and UBSan: run, table (and the command line it hands each child run),
 * receive, send and trace.
 *
 * An input is one command line: the argv words after the command's name,
 * separated by NUL bytes (a real argv word may hold any other byte,
 * newlines included).  Each word is copied into a heap block of exactly its
 * size and argv into one of exactly argc + 1 pointers, and the options
 * struct the parser fills is a heap block of exactly its size, so a read
 * past a word or a write past the struct is an ASan report.  The command's real parser runs --
 * run_options_parse, table_parse, receive_parse, send_parse, trace_parse,
 * which open, create and start nothing -- with stdout and stderr pointed
 * at memory, and the outcome must be one of three:
 *
 *   0           nothing printed; every numeric option of the command's
 *               table holds its default or a value inside its bounds; the
 *               rules between options hold in what was stored; for
 *               table, every row's child command line, built by the very
 *               function the sweep uses (table_child_argv), parses with the
 *               run parser and keeps the table's --vm and --model;
 *   EXIT_USAGE  exactly one line on stderr, "lguest-kvm CMD: ... -- see
 *               'lguest-kvm CMD --help'" (CMD the command, or run for a
 *               table row the run parser refused), nothing on stdout;
 *   -1          --help or --version on stdout, nothing on stderr.
 *
 * Anything else aborts, so libFuzzer keeps the input.
 *
 * Built two ways (meson.build): the libFuzzer binaries fuzz-cmd-<command>,
 * one per command (-DLKVM_LIBFUZZER -DLKVM_FUZZ_COMMAND=...); and always the
 * smoke test unit-fuzz-cmdline-smoke (cmdline_smoke.sh), which replays
 * corpus/cmd-<command>/ for every command (a finding dropped there is a
 * regression test) and the command lines extracted afresh from the docs and
 * tests, then a fixed-seed stream of lines made from the option tables.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "lguest_kvm_abi.h"
#include "notify_policy.h"
#include "options.h"
#include "opt_table.h"
#include "receive.h"
#include "table.h"
#include "table_sweep.h"
#include "trace_cmd.h"

#ifndef LKVM_LIBFUZZER
#include "corpus_replay.h"
#endif

#define MAX_WORDS 512   /* longer lines are cut here: no parser limit is near it */

enum command { CMD_RUN, CMD_TABLE, CMD_RECEIVE, CMD_SEND, CMD_TRACE, NCOMMANDS };

static const char *const command_name[NCOMMANDS] = { "run", "table", "receive", "send", "trace" };
static const struct opt *const command_opts[NCOMMANDS] = { run_opts, table_opts, receive_opts, send_opts,
							   trace_opts };

/* What the parse filled: per command one heap block of exactly its
 * struct's size, allocated once (a table is half a megabyte: one per
 * execution would cost ten times the parse), so that ASan sees a write
 * past the struct.  `parsed` is the current command's; the defaults are
 * kept whole. */
union parsed_options {
	struct run_options run;
	struct table table;
	struct receive_options receive;
	struct send_options send;
	struct trace_options trace;
};
static union parsed_options *parsed, defaults[NCOMMANDS];
static void *block[NCOMMANDS];

static enum command current;
/* Outcomes, for the smoke test's "reaches every outcome" check. */
static unsigned outcome_ok[NCOMMANDS], outcome_usage[NCOMMANDS], outcome_help[NCOMMANDS];

static void fail(const char *what, const char *out, const char *err)
{
	/* Called with stdout and stderr restored. */
	fprintf(stderr, "fuzz-cmdline %s: %s\n--- stdout:\n%s--- stderr:\n%s---\n",
		command_name[current], what, out ? out : "", err ? err : "");
	abort();
}

static const size_t command_size[NCOMMANDS] = { sizeof(struct run_options), sizeof(struct table),
						 sizeof(struct receive_options), sizeof(struct send_options),
						 sizeof(struct trace_options) };

/* Into the command's block, `parsed`. */
static int parse(enum command c, int argc, char **argv)
{
	void *opts = block[c] ? block[c] : (block[c] = malloc(command_size[c]));
	int rc;

	if (!opts)
		abort();
	parsed = opts;
	switch (c) {
	case CMD_RUN:
		run_options_defaults(opts);
		rc = run_options_parse(opts, argc, argv);
		break;
	case CMD_TABLE:
		rc = table_parse(opts, argc, argv);
		break;
	case CMD_RECEIVE:
		rc = receive_parse(opts, argc, argv);
		break;
	case CMD_SEND:
		rc = send_parse(opts, argc, argv);
		break;
	case CMD_TRACE:
		rc = trace_parse(opts, argc, argv);
		break;
	default:
		abort();
	}
	return rc;
}

/* Every bounded number of the command's table: its default, or in bounds. */
static void check_bounds(const char *out, const char *err)
{
	const char *got = (const char *)parsed, *def = (const char *)&defaults[current];

	for (const struct opt *o = command_opts[current]; o->kind != OPT_END; o++) {
		uint64_t v, d;
		char what[160];

		if (o->offset == OPT_NO_FIELD)
			continue;
		if (o->kind == OPT_SIZE) {
			memcpy(&v, got + o->offset, sizeof(v));
			memcpy(&d, def + o->offset, sizeof(d));
		} else if (o->kind == OPT_U32 || o->kind == OPT_POW2) {
			uint32_t v32, d32;

			memcpy(&v32, got + o->offset, sizeof(v32));
			memcpy(&d32, def + o->offset, sizeof(d32));
			v = v32, d = d32;
		} else {
			continue;
		}
		if (v == d)
			continue;
		if (v < o->min || v > o->max || (o->kind == OPT_POW2 && (v & (v - 1)))) {
			snprintf(what, sizeof(what), "accepted --%s = %llu, outside %llu..%llu", o->name,
				 (unsigned long long)v, (unsigned long long)o->min, (unsigned long long)o->max);
			fail(what, out, err);
		}
	}
}

/* What no one option says, but an accepted line must hold: the rules each
 * command checks after its options, read back from what it stored. */
static void check_accepted(const char *out, const char *err)
{
	const struct run_options *r = &parsed->run;
	struct notify_policy pol;

	switch (current) {
	case CMD_RUN:
		if (!run_is_linux(r) &&
		    !notify_policy_parse(&pol, r->policy, (uint32_t)strlen(r->policy), (uint16_t)r->ring))
			fail("accepted a --policy the guest's parser refuses for this --ring", out, err);
		if (!run_is_linux(r) && r->segments > r->ring && !strcmp(r->indirect, "never"))
			fail("accepted more --segments than --ring descriptors, without --indirect", out, err);
		if (!strcmp(r->workload, "tcp") && (r->frame < 62 || r->frame > 1514))
			fail("accepted a tcp --frame outside 62..1514", out, err);
		if (r->trace && (uint64_t)r->trace_events * sizeof(struct lkvm_trace_event) > r->mem / 2)
			fail("accepted a --trace ring larger than half the guest's RAM", out, err);
		if (r->mem & 0xfff)
			fail("accepted a --mem that is not whole pages", out, err);
		break;
	case CMD_RECEIVE:
		if (!parsed->receive.bytes || parsed->receive.close_after > parsed->receive.bytes)
			fail("receive accepted without --bytes, or --close-after past it", out, err);
		break;
	case CMD_SEND:
		if (!parsed->send.have_connect || !parsed->send.bytes ||
		    (parsed->send.corrupt && parsed->send.corrupt_at >= parsed->send.bytes))
			fail("send accepted without --connect or --bytes, or --corrupt-at past the stream", out, err);
		break;
	case CMD_TRACE:
		if (!parsed->trace.file || (parsed->trace.to_ms >= 0 && parsed->trace.to_ms <= parsed->trace.from_ms) ||
		    parsed->trace.from_ms < 0)
			fail("trace accepted without a FILE, or a window that ends before it starts", out, err);
		break;
	default:
		break;
	}
}

/* table: each row's child line as the sweep would exec it, through the run
 * parser, which must take it and keep the table's --vm and --model. */
static void check_table_children(const char *out, const char *err)
{
	const struct table *t = &parsed->table;
	static struct run_options child;

	if (!t->nrows || !t->nmodels || t->nmodels > 2 || t->nrows > MAX_ROWS)
		fail("table parsed with no rows, no model or too many", out, err);
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			char *argv[TABLE_CHILD_ARGV + 1];
			unsigned a;
			int rc;

			argv[TABLE_CHILD_ARGV] = (char *)"guard";
			a = table_child_argv(t, t->models[mi], &t->rows[mi][i], "/tmp/fuzz.json",
					     t->trace_dir ? "/tmp/fuzz-trace.bin" : NULL,
					     t->tcp ? "10.0.2.2:40000" : NULL, argv);
			if (a >= TABLE_CHILD_ARGV || argv[a] || strcmp(argv[TABLE_CHILD_ARGV], "guard"))
				fail("table_child_argv overran its argv", out, err);
			run_options_defaults(&child);
			rc = run_options_parse(&child, (int)a - 1, argv + 1);
			if (rc)
				fail("a row's child command line, accepted by table_parse, is refused by run", out, err);
			if (child.no_vm != !strcmp(t->vm, "none") ||
			    (child.net.model == NET_MODEL_LGUEST) != !strcmp(t->models[mi], "lguest"))
				fail("a row's child does not run on the table's --vm and --model", out, err);
		}
}

/* "lguest-kvm CMD: ... -- see 'lguest-kvm CMD --help'\n", and nothing else. */
static void check_usage_line(const char *out, const char *err)
{
	const char *nl = strchr(err, '\n');
	char prefix[64], suffix[80];
	bool named = false;

	if (*out)
		fail("a usage error also printed on stdout", out, err);
	if (!nl || nl[1])
		fail("a usage error is not exactly one line", out, err);
	for (int k = 0; k < 2 && !named; k++) {
		const char *cmd = k ? "run" : command_name[current];
		size_t n = strlen(err), sn;

		if (k && current != CMD_TABLE)
			break;
		snprintf(prefix, sizeof(prefix), "lguest-kvm %s: ", cmd);
		snprintf(suffix, sizeof(suffix), " -- see 'lguest-kvm %s --help'\n", cmd);
		sn = strlen(suffix);
		named = !strncmp(err, prefix, strlen(prefix)) && n > strlen(prefix) + sn && !strcmp(err + n - sn, suffix);
	}
	if (!named)
		fail("a usage error without the command's prefix and --help pointer", out, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char **argv = malloc((MAX_WORDS + 2) * sizeof(*argv)), **exact;
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0, at = 0;
	FILE *saved_out = stdout, *saved_err = stderr, *mo, *me;
	int argc = 0, rc;

	if (!argv)
		abort();
	argv[argc] = malloc(strlen(command_name[current]) + 1);
	strcpy(argv[argc++], command_name[current]);
	while (at < size && argc <= MAX_WORDS) {
		const uint8_t *end = memchr(data + at, 0, size - at);
		size_t len = end ? (size_t)(end - (data + at)) : size - at;

		argv[argc] = malloc(len + 1);
		if (!argv[argc])
			abort();
		memcpy(argv[argc], data + at, len);
		argv[argc++][len] = 0;
		at += len + 1;
	}
	exact = malloc(((size_t)argc + 1) * sizeof(*exact));
	if (!exact)
		abort();
	memcpy(exact, argv, (size_t)argc * sizeof(*exact));
	exact[argc] = NULL;

	mo = open_memstream(&out, &out_len);
	me = open_memstream(&err, &err_len);
	if (!mo || !me)
		abort();
	fflush(stdout);
	fflush(stderr);
	stdout = mo;
	stderr = me;
	rc = parse(current, argc, exact);
	stdout = saved_out;
	stderr = saved_err;
	fclose(mo);
	fclose(me);

	if (rc == 0) {
		if (*out || *err)
			fail("an accepted command line printed something", out, err);
		check_bounds(out, err);
		check_accepted(out, err);
		if (current == CMD_TABLE)
			check_table_children(out, err);
		outcome_ok[current]++;
	} else if (rc == EXIT_USAGE) {
		check_usage_line(out, err);
		outcome_usage[current]++;
	} else if (rc == -1) {
		char usage[64];

		snprintf(usage, sizeof(usage), "usage: lguest-kvm %s ", command_name[current]);
		if (*err || (strncmp(out, usage, strlen(usage)) && strncmp(out, "lguest-kvm ", 11)))
			fail("--help or --version printed something else", out, err);
		outcome_help[current]++;
	} else {
		fail("the parser returned neither 0, EXIT_USAGE nor -1", out, err);
	}
	free(out);
	free(err);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(exact);
	return 0;
}

/* The defaults each bounded number may keep: the parse of a bare command
 * (receive and trace then refuse the missing --bytes or FILE, after their
 * defaults are set). */
static void init_defaults(void)
{
	FILE *saved = stderr, *null = fopen("/dev/null", "w");

	if (!null)
		abort();
	stderr = null;
	for (int c = 0; c < NCOMMANDS; c++) {
		char name[16], *argv[2] = { name, NULL };

		snprintf(name, sizeof(name), "%s", command_name[c]);
		parse((enum command)c, 1, argv);
		memcpy(&defaults[c], parsed, command_size[c]);
	}
	stderr = saved;
	fclose(null);
}

#ifdef LKVM_LIBFUZZER

#ifndef LKVM_FUZZ_COMMAND
#error "LKVM_FUZZ_COMMAND: the command this binary fuzzes, e.g. \"run\""
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	init_defaults();
	for (int c = 0; c < NCOMMANDS; c++)
		if (!strcmp(command_name[c], LKVM_FUZZ_COMMAND))
			current = (enum command)c;
	if (strcmp(command_name[current], LKVM_FUZZ_COMMAND))
		abort();
	return 0;
}

#else   /* the smoke test */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(uint32_t n)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return n ? (uint32_t)(rng % n) : 0;
}

/* Values no one option's table says, but some option takes. */
static const char *const pool[] = {
	"", "-", "--", "0", "1", "-1", "adaptive", "none", "2008", "linux", "tap", "tap:lkvm0",
	"tap:0123456789abcdef", "user", "sink", "10.0.2.2:5001", "127.0.0.1:0", "1.2.3.4:65536", "1.2.3.4/24",
	"1.2.3.4/33", "static:64", "static:1025", "threshold", "threshold:1024", "threshold:1025", "50:64",
	"1000001:1", "event-idx,csum", "event-idx,,", "x.svg", "x.png", "x.pdf", "dynamic,10,always",
	"0,100,250", "250,100", "99999999999999999999", "18446744073709551615", "16G", "4294967296", "1k",
	"12Q", "0x10", " 5", "nan", "1e3", "a\nb", "--help", "-h",
};

static void value_for(const struct opt *o, char *buf, size_t size)
{
	uint64_t edges[] = { o->min, o->max, o->min - 1, o->max + 1, 0, (uint64_t)next(1u << 31) * next(1u << 31) };

	switch (next(4) ? o->kind : OPT_STRING) {
	case OPT_SIZE:
	case OPT_U32:
	case OPT_POW2:
		snprintf(buf, size, "%llu", (unsigned long long)edges[next(6)]);
		break;
	case OPT_WORD: {
		const char *w = o->words;

		for (unsigned k = next(8); k && strchr(w, '|'); k--)
			w = strchr(w, '|') + 1;
		snprintf(buf, size, "%.*s", (int)strcspn(w, "|"), w);
		break;
	}
	default:
		if (!next(50)) {   /* a long one: buffers sized for a sane value */
			size_t n = next((unsigned)size - 1);

			memset(buf, next(2) ? '9' : 'a', n);
			buf[n] = 0;
		} else {
			snprintf(buf, size, "%s", pool[next(sizeof(pool) / sizeof(pool[0]))]);
		}
	}
}

/* One generated line for command c: up to 8 options of its table (the
 * table's pass-through options included), values near their edges. */
static size_t generate(enum command c, uint8_t *buf, size_t size)
{
	const struct opt *opts = command_opts[c];
	unsigned nopts = 0, n = next(9);
	size_t at = 0;

	while (opts[nopts].kind != OPT_END)
		nopts++;
	for (unsigned k = 0; k < n; k++) {
		const struct opt *o = &opts[next(nopts)];
		char word[6000], value[5000];
		int len;

		if (o->kind == OPT_SECTION)
			continue;
		value_for(o, value, sizeof(value));
		if (!o->arg)
			len = snprintf(word, sizeof(word), "--%s", o->name);
		else if (next(2))
			len = snprintf(word, sizeof(word), "--%s=%s", o->name, value);
		else
			len = snprintf(word, sizeof(word), "--%s%c%s", o->name, 0, value);
		if (at + (size_t)len + 1 > size)
			break;
		memcpy(buf + at, word, (size_t)len + 1);
		at += (size_t)len + 1;
	}
	if ((c == CMD_TRACE || c == CMD_RUN) && next(2) && at + 8 < size) {   /* a FILE / GUEST.elf */
		memcpy(buf + at, "x.bin", 6);
		at += 6;
	}
	return at ? at - 1 : 0;   /* the last NUL ends the last word */
}

/* fuzz-cmdline-smoke LINES ROOT... : each ROOT/cmd-<command>/ replayed,
 * then LINES generated lines, per command. */
int main(int argc, char **argv)
{
	static uint8_t buf[1 << 16];
	unsigned lines = argc > 2 ? (unsigned)strtoul(argv[1], NULL, 10) : 0, bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s LINES_PER_COMMAND CORPUS_ROOT...\n", argv[0]);
		return 2;
	}
	init_defaults();
	for (int c = 0; c < NCOMMANDS; c++) {
		unsigned files = 0;

		current = (enum command)c;
		for (int r = 2; r < argc; r++) {
			char dir[1024];

			snprintf(dir, sizeof(dir), "%s/cmd-%s", argv[r], command_name[c]);
			files += corpus_replay("fuzz-cmdline-smoke", dir);
		}
		for (unsigned i = 0; i < lines; i++) {
			size_t n = generate(current, buf, sizeof(buf));
			uint8_t *exact = malloc(n ? n : 1);

			memcpy(exact, buf, n);
			LLVMFuzzerTestOneInput(exact, n);
			free(exact);
		}
		/* Something accepted, something refused, and a corpus to start from. */
		printf("%s %s: %u corpus files + %u generated lines: %u accepted, %u usage errors, %u help\n",
		       outcome_ok[c] && outcome_usage[c] && files ? "ok  " : "FAIL", command_name[c], files, lines,
		       outcome_ok[c], outcome_usage[c], outcome_help[c]);
		bad += !outcome_ok[c] || !outcome_usage[c] || !files;
	}
	printf("%u passed, %u failed\n", NCOMMANDS - bad, bad);
	return bad ? 1 : 0;
}

#endif
