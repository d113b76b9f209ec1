/*
 * test_option_bounds.c -- bad values get one line (issue 27, item 4): every
 * option of every command, at its bounds and past them, through the
 * command's real parser.
 *
 * The cases are made from the option tables themselves (run_opts,
 * table_opts, receive_opts, send_opts, trace_opts), so a new option cannot
 * escape: a bounded number is tried at min and max (accepted, and stored
 * as given) and at min - 1, max + 1, past 2^64, negative and junk (each
 * refused); a word-valued option with each of its words and with one that
 * is not; a flag alone; table's pass-through options with the bounds of the
 * run option of the same name, through table_parse and each row's child
 * command line.  Options whose values a table row cannot describe (custom
 * parsers, free text, bounds that depend on another option) are listed in
 * `cases` below, and the test fails for any such option that has none.
 *
 * Each refusal must be exit 2 with exactly one line on stderr, naming the
 * option ("--frame") and what it accepts (the table's own text, or the
 * case's); each acceptance must print nothing.  Every parse also gets
 * 64 KiB values, and writes into an options struct fenced by guard bytes
 * that must come back untouched -- in a build with ASan and UBSan (meson
 * adds them where the compiler links them) an overflow is also a report.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "diag.h"
#include "options.h"
#include "opt_table.h"
#include "receive.h"
#include "table.h"
#include "table_sweep.h"
#include "trace_cmd.h"

#define GUARD 64
#define GUARD_BYTE 0xa5
#define MAX_ARGS 32

enum command { CMD_RUN, CMD_TABLE, CMD_RECEIVE, CMD_SEND, CMD_TRACE, NCOMMANDS };

struct command_desc {
	const char *name;
	const struct opt *opts;
	size_t size;              /* its options struct */
	const char *base;         /* what every line needs besides the option tried */
};

/* table: one cheap row on the no-VM host, which any ring takes. */
static const struct command_desc commands[NCOMMANDS] = {
	{ "run", run_opts, sizeof(struct run_options), "" },
	{ "table", table_opts, sizeof(struct table), "--preset none --vm none --model threaded --rows always" },
	{ "receive", receive_opts, sizeof(struct receive_options), "--bytes 1G" },
	{ "send", send_opts, sizeof(struct send_options), "--connect 127.0.0.1:5001 --bytes 1G" },
	{ "trace", trace_opts, sizeof(struct trace_options), "t.bin" },
};

/* The options struct, fenced: GUARD bytes either side must stay GUARD_BYTE. */
static uint8_t arena[GUARD + sizeof(struct table) + sizeof(struct run_options) + GUARD] __attribute__((aligned(64)));

struct outcome {
	int rc;
	char out[8192], err[8192];
	bool guards_ok;
	void *opts;               /* the parsed struct, inside the arena */
};

static int parse_into(enum command c, void *opts, int argc, char **argv)
{
	switch (c) {
	case CMD_RUN:
		run_options_defaults(opts);
		return run_options_parse(opts, argc, argv);
	case CMD_TABLE:
		return table_parse(opts, argc, argv);
	case CMD_RECEIVE:
		return receive_parse(opts, argc, argv);
	case CMD_SEND:
		return send_parse(opts, argc, argv);
	default:
		return trace_parse(opts, argc, argv);
	}
}

/* Parse `base` + `extra` words (extra may hold one word with spaces, as
 * argv can) for command c. */
static void parse(enum command c, const char *const *extra, unsigned nextra, struct outcome *r)
{
	static char base_copy[512];
	char *argv[MAX_ARGS + 1], *save = NULL, *w, *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *mo = open_memstream(&out, &out_len), *me = open_memstream(&err, &err_len);
	FILE *saved_out = stdout, *saved_err = stderr;
	size_t size = commands[c].size;
	int argc = 0;

	argv[argc++] = (char *)commands[c].name;
	snprintf(base_copy, sizeof(base_copy), "%s", commands[c].base);
	for (w = strtok_r(base_copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	for (unsigned i = 0; i < nextra && argc < MAX_ARGS; i++)
		argv[argc++] = (char *)extra[i];
	argv[argc] = NULL;

	memset(arena, GUARD_BYTE, sizeof(arena));
	r->opts = arena + GUARD;
	fflush(stdout);
	stdout = mo, stderr = me;
	r->rc = parse_into(c, r->opts, argc, argv);
	stdout = saved_out, stderr = saved_err;
	fclose(mo);
	fclose(me);
	snprintf(r->out, sizeof(r->out), "%s", out ? out : "");
	snprintf(r->err, sizeof(r->err), "%s", err ? err : "");
	free(out);
	free(err);
	r->guards_ok = true;
	for (size_t i = 0; i < GUARD; i++)
		if (arena[i] != GUARD_BYTE || arena[GUARD + size + i] != GUARD_BYTE)
			r->guards_ok = false;
}

/* An error line as a check's message shows it: without its newline. */
static const char *shown(const char *s)
{
	static char buf[4][400];
	static unsigned k;
	char *b = buf[k++ % 4];

	size_t n = strcspn(s, "\n");

	if (n >= sizeof(buf[0]))
		n = sizeof(buf[0]) - 1;
	memcpy(b, s, n);
	b[n] = 0;
	return b;
}

static bool one_line(const char *s)
{
	const char *nl = strchr(s, '\n');

	return nl && !nl[1] && !strncmp(s, "lguest-kvm ", 11);
}

/* "--name VALUE" refused: exit 2, one line naming --name and `accepts`. */
static const char *const *company_of(enum command c, const char *name);

/* The words for "--name VALUE" (VALUE NULL: a flag), after the option's company. */
static unsigned words_for(enum command c, const char *name, const char *value, char *flag, size_t fsize,
			  const char **extra)
{
	const char *const *with = company_of(c, name);
	unsigned n = 0;

	snprintf(flag, fsize, "--%s", name);
	if (with)
		extra[n++] = with[0], extra[n++] = with[1];
	extra[n++] = flag;
	if (value)
		extra[n++] = value;
	return n;
}

static void expect_refused(enum command c, const char *name, const char *value, const char *accepts)
{
	struct outcome r;
	char flag[80];
	const char *extra[4];

	parse(c, extra, words_for(c, name, value, flag, sizeof(flag), extra), &r);
	CHECK(r.rc == EXIT_USAGE && one_line(r.err) && strstr(r.err, flag) && (!accepts || strstr(r.err, accepts)) &&
	      !r.out[0] && r.guards_ok,
	      "%s --%s '%.40s': refused in one line naming %s and '%s' (rc %d, guards %s): %.300s", commands[c].name,
	      name, value ? value : "", flag, accepts ? accepts : "", r.rc, r.guards_ok ? "ok" : "OVERWRITTEN", shown(r.err));
}

/* "--name VALUE" accepted silently; the struct is returned in r. */
static bool expect_accepted(enum command c, const char *name, const char *value, struct outcome *r)
{
	char flag[80];
	const char *extra[4];
	bool ok;

	parse(c, extra, words_for(c, name, value, flag, sizeof(flag), extra), r);
	ok = r->rc == 0 && !r->err[0] && !r->out[0] && r->guards_ok;
	CHECK(ok, "%s --%s '%.40s': accepted (rc %d, guards %s): %.300s", commands[c].name, name, value ? value : "",
	      r->rc, r->guards_ok ? "ok" : "OVERWRITTEN", shown(r->err));
	return ok;
}

/* A 64 KiB value: refused in one line, or accepted; nothing overwritten. */
static void expect_long_value_safe(enum command c, const struct opt *o, char fill)
{
	static char big[65536];
	struct outcome r;
	char flag[80];
	const char *extra[] = { flag, big };

	memset(big, fill, sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	snprintf(flag, sizeof(flag), "--%s", o->name);
	parse(c, extra, o->arg ? 2 : 1, &r);
	CHECK((r.rc == 0 || (r.rc == EXIT_USAGE && one_line(r.err) && strlen(r.err) < 600)) && r.guards_ok,
	      "%s --%s with 64 KiB of '%c': rc %d, %zu bytes of error, guards %s", commands[c].name, o->name, fill, r.rc,
	      strlen(r.err), r.guards_ok ? "ok" : "OVERWRITTEN");
}

/* Numbers whose edges need another option beside them. */
static const struct {
	enum command cmd;
	const char *option, *with[2];
} company[] = {
	{ CMD_RUN, "ring", { "--segments", "1" } },             /* 3 segments need a ring of 4 */
	{ CMD_RUN, "exit-cost-ns", { "--vm", "none" } },        /* no-VM only */
	{ CMD_RECEIVE, "close-after", { "--bytes", "18446744073709551615" } },   /* at most --bytes */
	{ CMD_SEND, "corrupt-at", { "--bytes", "18446744073709551615" } },       /* below --bytes */
};

static const char *const *company_of(enum command c, const char *name)
{
	for (size_t i = 0; i < sizeof(company) / sizeof(company[0]); i++)
		if (company[i].cmd == c && !strcmp(company[i].option, name))
			return company[i].with;
	return NULL;
}

/* ---- the cases a table row cannot describe ---- */

struct value_case {
	enum command cmd;
	const char *option;       /* without "--" */
	const char *pre;          /* other options the values need (space-separated), or "" */
	const char *good[6];      /* accepted, at the edges where there are edges */
	const char *bad[8];       /* refused ... */
	const char *accepts;      /* ... with this in the line */
};

static const struct value_case cases[] = {
	/* run */
	{ CMD_RUN, "policy", "--ring 128", { "always", "static:0", "static:128", "dynamic", "dynamic-exact", "event-idx" },
	  { "static:129", "static:", "static:-1", "static:99999999999", "event", "" }, "static:N (N <= ring)" },
	{ CMD_RUN, "policy", "--layout packed --ring 2 --segments 1", { "event-desc", "static:2" }, { "static:3", "event-idx" },
	  "--policy" },
	{ CMD_RUN, "indirect", "", { "never", "always", "threshold", "threshold:1", "threshold:1024" },
	  { "threshold:0", "threshold:1025", "threshold:", "sometimes", "threshold:-1" }, "threshold:N (N 1 to 1024)" },
	{ CMD_RUN, "net", "--workload tcp", { "sink", "user", "tap", "tap:a", "tap:0123456789abcde" },
	  { "tap:", "tap:0123456789abcdef", "slirp", "" }, "at most 15 characters" },
	{ CMD_RUN, "peer", "--workload tcp --net user", { "1.2.3.4:1", "10.0.2.2:65535" },
	  { "1.2.3.4:0", "1.2.3.4:65536", "1.2.3:5", "1.2.3.4", ":5", "1.2.3.4:-1", "1.2.3.4:5x" }, "a port 1 to 65535" },
	{ CMD_RUN, "guest-ip", "--workload tcp --net user", { "0.0.0.0", "255.255.255.255" },
	  { "256.0.0.1", "1.2.3", "1.2.3.4/24", "" }, "an IPv4 address" },
	{ CMD_RUN, "host-ip", "--workload tcp --net tap:x", { "10.0.0.1/0", "10.0.0.1/32" },
	  { "10.0.0.1/33", "10.0.0.1", "10.0.0.1/", "10.0.0.1/-1", "10.0.0.256/24" }, "a prefix length 0 to 32" },
	{ CMD_RUN, "timeout-us", "", { "1", "10000000", "adaptive" }, { "0", "10000001", "-1", "adapt", "" },
	  "1 to 10000000 or adaptive" },
	{ CMD_RUN, "host-poll-us", "", { "0", "1000", "adaptive" }, { "1001", "-1", "5us", "Adaptive", "" },
	  "0 to 1000 or adaptive" },
	{ CMD_RUN, "coalesce", "", { "0:0", "1000000:1000000", "50:64" },
	  { "1000001:0", "0:1000001", "50", "50:", ":8", "-1:8", "5:8K" }, "each 0 to 1000000" },
	{ CMD_RUN, "withhold-features", "--kernel k", { "event-idx", "indirect-desc,ring-packed,csum,mac,host-tso4" },
	  { "", "foo", "event-idx,foo" }, "a comma list of event-idx" },
	{ CMD_RUN, "frame", "--workload tcp --net user", { "62", "1514" }, { "61", "1515" }, "62..1514" },
	{ CMD_RUN, "segments", "--ring 4", { "4" }, { "5" }, "expected at most 4" },
	{ CMD_RUN, "trace-events", "--trace t.bin --mem 16M", { "262144" }, { "524288", "4194304" },
	  "expected at most 262144 with --mem 16M" },
	{ CMD_RUN, "indirect-cold-lines", "--mem 128M", { "1", "1024" }, { "1025" }, "0 to 1024" },
	{ CMD_RUN, "indirect-cold-lines", "--mem 127M", { "0" }, { "1" }, "--mem 128M or more" },
	{ CMD_RUN, "stats-json", "", { "s.json", "" }, { NULL }, NULL },
	{ CMD_RUN, "trace", "", { "t.bin" }, { NULL }, NULL },
	{ CMD_RUN, "user", "", { "nobody" }, { NULL }, NULL },
	{ CMD_RUN, "user", "--stay-root", { NULL }, { "nobody" }, "pick one" },
	{ CMD_RUN, "kernel", "", { "bzImage" }, { NULL }, NULL },
	{ CMD_RUN, "initrd", "--kernel k", { "initrd.img" }, { NULL }, NULL },
	{ CMD_RUN, "initrd", "--guest linux", { NULL }, { "initrd.img" }, "give --kernel too" },
	{ CMD_RUN, "append", "--kernel k", { "console=ttyS0 quiet" }, { NULL }, NULL },
	{ CMD_RUN, "exit-cost-ns", "--vm none", { "0", "10000000" }, { "10000001" }, "0 to 10000000" },
	{ CMD_RUN, "exit-cost-ns", "", { NULL }, { "0" }, "only with --vm none" },
	{ CMD_RUN, "tso", "--workload tcp --net tap:x", { NULL }, { NULL }, NULL },
	/* table */
	{ CMD_TABLE, "rows", "--preset none --vm none --model threaded --ring 1024",
	  { "0", "1024", "dynamic,always,event-idx,dynamic-exact" }, { "1025", "-1", "fast" },
	  "0 to 1024, at most --ring" },
	{ CMD_TABLE, "rows", "--preset none --vm none --model threaded", { NULL }, { ",", "" }, "names no rows" },
	{ CMD_TABLE, "rows", "--preset none --vm none --model threaded --ring 16", { "16" }, { "17" },
	  "expected at most --ring 16" },
	{ CMD_TABLE, "rows", "--preset none --vm none --model threaded --experiment cost --repeat 1",
	  { "always,dynamic,event-idx,1,2,3" }, { "always,dynamic,event-idx,1,2,3,4" }, "at most 64" },
	{ CMD_TABLE, "indirect-costs", "--preset none --vm none --model threaded --experiment indirect --rows never",
	  { "0", "1000000", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15" },
	  { "1000001", "-1", "5,5", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", "", "1e3" }, "--indirect-costs" },
	{ CMD_TABLE, "preset", "--vm none --model threaded --rows always", { "none", "2008" }, { "1999", "" },
	  "2008 or none" },
	{ CMD_TABLE, "plot", "--preset none --vm none --model threaded --rows always", { "t.svg", "t.png" },
	  { "t.pdf", "svg", "" }, "ending in .svg or .png" },
	{ CMD_TABLE, "csv", "", { "t.csv" }, { NULL }, NULL },
	{ CMD_TABLE, "json", "", { "t.json" }, { NULL }, NULL },
	{ CMD_TABLE, "trace-dir", "", { "traces" }, { NULL }, NULL },
	{ CMD_TABLE, "net", "--preset none --vm none --model threaded --rows always", { "sink" }, { "slirp" }, "--net" },
	{ CMD_TABLE, "net", "--preset none --vm none --model threaded --rows always --workload tcp", { "user" },
	  { "tap:x", "sink" }, "give tap (root) or user" },
	{ CMD_TABLE, "tso", "--preset none --vm none --model threaded --rows always --workload tcp --net user", { NULL },
	  { NULL }, NULL },   /* a flag passed on: refused by each row's run, see below */
	/* receive */
	{ CMD_RECEIVE, "listen", "", { "0.0.0.0:0", "127.0.0.1:65535" },
	  { "127.0.0.1:65536", "127.0.0.1", "localhost:5001", "1.2.3.4:-1", "" }, "PORT 0 to 65535" },
	{ CMD_RECEIVE, "close-after", "--bytes 1M", { "1", "1M" }, { "1048577", "0" }, "--close-after" },
	{ CMD_RECEIVE, "ready", "", { "r.txt" }, { NULL }, NULL },
	{ CMD_RECEIVE, "json", "", { "r.json" }, { NULL }, NULL },
	/* send */
	{ CMD_SEND, "connect", "", { "127.0.0.1:1", "127.0.0.1:65535" },
	  { "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1", "" }, "PORT 1 to 65535" },
	{ CMD_SEND, "corrupt-at", "--bytes 1M", { "0", "1048575" }, { "1M", "-1" }, "--corrupt-at" },
	/* trace */
	{ CMD_TRACE, "from", "", { "0", "1e6", "0.5" }, { "-1", "nan", "inf", "x", "" }, "0 or more" },
	{ CMD_TRACE, "to", "--from 10", { "10.001", "1e9" }, { "10", "5" }, "--to" },
	{ CMD_TRACE, "plot", "", { "t.svg", "t.png" }, { "t.pdf", "" }, "ending in .svg or .png" },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* One case: the values with the case's other options in front. */
static void run_case(const struct value_case *vc)
{
	char pre[256], *save = NULL, *w;
	const char *extra[MAX_ARGS];
	unsigned n = 0;

	snprintf(pre, sizeof(pre), "%s", vc->pre);
	for (w = strtok_r(pre, " ", &save); w; w = strtok_r(NULL, " ", &save))
		extra[n++] = w;
	for (int good = 1; good >= 0; good--)
		for (unsigned i = 0; i < (good ? 6u : 8u); i++) {
			const char *value = good ? vc->good[i] : vc->bad[i];
			char flag[80];
			struct outcome r;

			if (!value)
				continue;
			snprintf(flag, sizeof(flag), "--%s", vc->option);
			extra[n] = flag;
			extra[n + 1] = value;
			parse(vc->cmd, extra, n + 2, &r);
			if (good)
				CHECK(r.rc == 0 && !r.err[0] && r.guards_ok, "%s %s --%s '%s': accepted: %.300s",
				      commands[vc->cmd].name, vc->pre, vc->option, value, shown(r.err));
			else
				CHECK(r.rc == EXIT_USAGE && one_line(r.err) && strstr(r.err, flag) &&
				      strstr(r.err, vc->accepts) && r.guards_ok,
				      "%s %s --%s '%s': refused in one line naming %s and '%s': %.300s",
				      commands[vc->cmd].name, vc->pre, vc->option, value, flag, vc->accepts, shown(r.err));
		}
}

/* Each good value of a case with 64 KiB after it ("tap:" then a long
 * name): refused in one line or accepted, and nothing written past the
 * options struct. */
static void run_case_long(const struct value_case *vc)
{
	static char big[65536 + 64];
	char pre[256], *save = NULL, *w, flag[80];
	const char *extra[MAX_ARGS];
	unsigned n = 0;

	snprintf(pre, sizeof(pre), "%s", vc->pre);
	for (w = strtok_r(pre, " ", &save); w; w = strtok_r(NULL, " ", &save))
		extra[n++] = w;
	snprintf(flag, sizeof(flag), "--%s", vc->option);
	for (unsigned i = 0; i < 6 && vc->good[i]; i++) {
		struct outcome r;
		size_t len = strlen(vc->good[i]);

		memcpy(big, vc->good[i], len);
		memset(big + len, i % 2 ? '9' : 'a', 65536);
		big[len + 65536] = 0;
		extra[n] = flag;
		extra[n + 1] = big;
		parse(vc->cmd, extra, n + 2, &r);
		CHECK((r.rc == 0 || (r.rc == EXIT_USAGE && one_line(r.err) && strlen(r.err) < 600)) && r.guards_ok,
		      "%s --%s '%s' + 64 KiB: rc %d, %zu bytes of error, guards %s", commands[vc->cmd].name, vc->option,
		      vc->good[i], r.rc, strlen(r.err), r.guards_ok ? "ok" : "OVERWRITTEN");
	}
}

static bool has_case(enum command c, const char *name)
{
	for (size_t i = 0; i < NCASES; i++)
		if (cases[i].cmd == c && !strcmp(cases[i].option, name))
			return true;
	return false;
}

/* The value stored for a bounded number, from the struct the parse filled. */
static uint64_t stored(const struct opt *o, const void *opts)
{
	const char *at = (const char *)opts + o->offset;
	uint32_t v32;
	uint64_t v;

	if (o->kind == OPT_SIZE) {
		memcpy(&v, at, sizeof(v));
		return v;
	}
	memcpy(&v32, at, sizeof(v32));
	return v32;
}

/* A bounded number (`o`, or for table's pass-through options the run
 * option `bounds` of the same name): accepted at both ends, refused past
 * them, in the 2^64 overflow, negative, and as junk. */
static void number_bounds(enum command c, const char *name, const struct opt *o, bool check_stored)
{
	char accepts[400], lo[32], hi[32], below[32], above[32];
	const char *acc = opt_accepts(o, accepts, sizeof(accepts));
	struct outcome r;
	/* the largest value each kind can store: past it is a parse error too */
	uint64_t type_max = o->kind == OPT_SIZE ? UINT64_MAX : UINT32_MAX;

	snprintf(lo, sizeof(lo), "%llu", (unsigned long long)o->min);
	snprintf(hi, sizeof(hi), "%llu", (unsigned long long)o->max);
	if (expect_accepted(c, name, lo, &r) && check_stored)
		CHECK(stored(o, r.opts) == o->min, "%s --%s %s: stored as given", commands[c].name, name, lo);
	if (expect_accepted(c, name, hi, &r) && check_stored)
		CHECK(stored(o, r.opts) == o->max, "%s --%s %s: stored as given (%llu)", commands[c].name, name, hi,
		      (unsigned long long)stored(o, r.opts));
	if (o->min > 0) {
		snprintf(below, sizeof(below), "%llu", (unsigned long long)(o->min - 1));
		expect_refused(c, name, below, acc);
	}
	if (o->max < type_max) {
		snprintf(above, sizeof(above), "%llu", (unsigned long long)o->max + 1);
		expect_refused(c, name, above, acc);
	} else {
		expect_refused(c, name, "18446744073709551616", acc);   /* 2^64 */
	}
	expect_refused(c, name, "99999999999999999999G", acc);
	expect_refused(c, name, "-1", acc);
	expect_refused(c, name, "12Q", acc);
	expect_refused(c, name, "", acc);
	if (o->kind == OPT_POW2 && o->max > 2) {
		snprintf(above, sizeof(above), "%llu", (unsigned long long)o->max - 1);
		expect_refused(c, name, above, acc);
	}
}

/* Each word accepted, and one that is none of them refused. */
static void word_bounds(enum command c, const char *name, const struct opt *o)
{
	char accepts[400], word[64];
	const char *acc = opt_accepts(o, accepts, sizeof(accepts));
	struct outcome r;

	for (const char *w = o->words; *w;) {
		size_t len = strcspn(w, "|");
		char pre_word[128];
		const char *extra[4];
		unsigned n = 0;

		snprintf(word, sizeof(word), "%.*s", (int)len, w);
		w += len + (w[len] == '|');
		/* the words that need company to be taken: what they need */
		snprintf(pre_word, sizeof(pre_word), "--%s", name);
		if (c == CMD_RUN && !strncmp(word, "hostile-trace-", 14))
			extra[n++] = "--trace", extra[n++] = "t.bin";
		if (c == CMD_RUN && !strcmp(name, "layout") && !strcmp(word, "packed"))
			extra[n++] = "--policy", extra[n++] = "always";
		if (c == CMD_RUN && !strcmp(name, "workload") && !strcmp(word, "tcp"))
			extra[n++] = "--net", extra[n++] = "user";
		if (c == CMD_TABLE && !strcmp(name, "experiment") && !strcmp(word, "linux"))
			extra[n++] = "--vm", extra[n++] = "kvm";   /* a Linux guest needs a VM */
		extra[n++] = pre_word;
		extra[n++] = word;
		parse(c, extra, n, &r);
		CHECK(r.rc == 0 && !r.err[0] && r.guards_ok, "%s --%s %s: accepted: %.300s", commands[c].name, name, word,
		      shown(r.err));
	}
	snprintf(word, sizeof(word), "%.20sX", o->words);
	expect_refused(c, name, word, acc);
	expect_refused(c, name, "", acc);
}

/* Table's pass-through options: the run option's bounds, through the table
 * and its rows' child command lines. */
static void pass_bounds(const struct opt *o)
{
	const struct opt *ro = NULL;

	for (const struct opt *r = run_opts; r->kind != OPT_END; r++)
		if (r->kind != OPT_SECTION && !strcmp(r->name, o->name))
			ro = r;
	CHECK(ro != NULL, "table --%s is passed on to run, which has it", o->name);
	if (!ro)
		return;
	if (ro->kind == OPT_SIZE || ro->kind == OPT_U32 || ro->kind == OPT_POW2)
		number_bounds(CMD_TABLE, o->name, ro, false);
	else if (ro->kind == OPT_WORD)
		word_bounds(CMD_TABLE, o->name, ro);
	else if (!has_case(CMD_TABLE, o->name) && !has_case(CMD_RUN, o->name))
		CHECK(false, "table --%s: no case for a passed-on option with a custom parser", o->name);
	else if (has_case(CMD_RUN, o->name))
		for (size_t i = 0; i < NCASES; i++)
			if (cases[i].cmd == CMD_RUN && !strcmp(cases[i].option, o->name) && !cases[i].pre[0])
				for (unsigned k = 0; k < 8 && cases[i].bad[k]; k++)
					expect_refused(CMD_TABLE, o->name, cases[i].bad[k], cases[i].accepts);
}

/* "--flag=x": a flag takes no value, and says so in one line. */
static void flag_with_value(enum command c, const char *name)
{
	char word[80], flag[80];
	const char *extra[] = { word };
	struct outcome r;

	snprintf(word, sizeof(word), "--%s=x", name);
	snprintf(flag, sizeof(flag), "--%s", name);
	parse(c, extra, 1, &r);
	CHECK(r.rc == EXIT_USAGE && one_line(r.err) && strstr(r.err, flag) && r.guards_ok,
	      "%s %s: refused in one line: %.300s", commands[c].name, word, shown(r.err));
}

/* --tso: a flag with a condition, alone, met, and passed on by table. */
static void tso_cases(void)
{
	const char *alone[] = { "--tso" }, *met[] = { "--workload", "tcp", "--net", "tap:x", "--tso" };
	const char *table_user[] = { "--workload", "tcp", "--net", "user", "--tso" };
	struct outcome r;

	parse(CMD_RUN, alone, 1, &r);
	CHECK(r.rc == EXIT_USAGE && one_line(r.err) && strstr(r.err, "--tso: needs --workload tcp over --net tap"),
	      "run --tso alone: refused in one line saying what it needs: %s", shown(r.err));
	parse(CMD_RUN, met, 5, &r);
	CHECK(r.rc == 0 && !r.err[0], "run --workload tcp --net tap:x --tso: accepted: %s", shown(r.err));
	parse(CMD_TABLE, table_user, 5, &r);
	CHECK(r.rc == EXIT_USAGE && one_line(r.err) && strstr(r.err, "--tso"),
	      "table --workload tcp --net user --tso: refused (its rows' runs would be) in one line: %s", shown(r.err));
}

/* glibc's getopt must start afresh each parse: the rest of a short-option
 * cluster left unread by the last one ("-hV" stops at h) is not read again
 * from that argv (freed, or as here, changed) -- opt_parse sets optind = 0. */
static void getopt_restarts(void)
{
	char cluster[] = "-hV", name[] = "run";
	char *argv1[] = { name, cluster, NULL };
	struct run_options o;
	FILE *saved = stdout, *null = fopen("/dev/null", "w");
	struct outcome r;
	const char *extra[] = { "--frame", "100" };
	int rc;

	stdout = null;
	run_options_defaults(&o);
	rc = run_options_parse(&o, 2, argv1);
	stdout = saved;
	fclose(null);
	strcpy(cluster, "-hQ");   /* what the last parse left unread changes under it */
	parse(CMD_RUN, extra, 2, &r);
	CHECK(rc == -1 && r.rc == 0 && !r.err[0], "after 'run -hV' stopped at -h, the next parse starts afresh (rc %d: %s)",
	      r.rc, shown(r.err));
}

int main(void)
{
	unsigned options = 0;

	for (int c = 0; c < NCOMMANDS; c++)
		for (const struct opt *o = commands[c].opts; o->kind != OPT_END; o++) {
			if (o->kind == OPT_SECTION)
				continue;
			options++;
			switch (o->kind) {
			case OPT_SIZE:
			case OPT_U32:
			case OPT_POW2:
				number_bounds((enum command)c, o->name, o, o->offset != OPT_NO_FIELD);
				break;
			case OPT_WORD:
				word_bounds((enum command)c, o->name, o);
				break;
			case OPT_FLAG:
				if (!has_case((enum command)c, o->name)) {
					struct outcome r;

					expect_accepted((enum command)c, o->name, NULL, &r);
				}
				flag_with_value((enum command)c, o->name);
				break;
			case OPT_PASS:
				pass_bounds(o);
				break;
			default:   /* OPT_STRING, OPT_CUSTOM: their cases */
				CHECK(has_case((enum command)c, o->name), "%s --%s has its cases in test_option_bounds.c",
				      commands[c].name, o->name);
			}
			expect_long_value_safe((enum command)c, o, '9');
			expect_long_value_safe((enum command)c, o, 'a');
		}
	for (size_t i = 0; i < NCASES; i++) {
		run_case(&cases[i]);
		run_case_long(&cases[i]);
	}
	tso_cases();
	getopt_restarts();
	printf("%u options of %d commands\n", options, NCOMMANDS);
	return check_summary();
}
