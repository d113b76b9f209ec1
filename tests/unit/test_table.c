/*
 * test_table.c -- the pure parts of `lguest-kvm table`, without a VM: the
 * rows each experiment builds (lab/table.c, table_build_rows), a row's
 * medians and spreads (table_row_summarise, spread_pct), the indirect
 * sweep's crossovers (lab/table_writers.c, table_crossovers and the
 * sentences that say them), the CSV and JSON writers, and the reader of
 * the runs' stats JSON (stats_json_u64).
 *
 * Samples are written into the rows by hand, as the sweep would from its
 * children's stats, so every expected number is known; the JSON file is
 * read back by a small validator here, so a writer that emits broken JSON
 * (an unescaped quote in a failure reason) fails the test.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "diag.h"
#include "stats.h"
#include "table_sweep.h"

static struct table t;   /* large: not on the stack */

static void fresh(const char *experiment, unsigned nmodels)
{
	memset(&t, 0, sizeof(t));
	t.experiment = experiment;
	t.vm = "kvm";
	t.repeat = 3;
	t.models[0] = "threaded", t.models[1] = "lguest", t.nmodels = nmodels;
}

/* Give every model's row i the samples `gbps[0..n)` (seconds 1/gbps). */
static void samples(unsigned i, const double *gbps, unsigned n)
{
	for (unsigned mi = 0; mi < t.nmodels; mi++) {
		struct row *r = &t.rows[mi][i];

		for (unsigned k = 0; k < n; k++) {
			r->v[k][M_GBPS] = gbps[k];
			r->v[k][M_SECONDS] = 1 / gbps[k];
			r->v[k][M_NOTIFIES] = 100 + k;
		}
		r->n = n;
		table_row_summarise(r);
	}
}

/* ---- a JSON validator: just enough to say whether a file is JSON ---- */

static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	for (; *p != '"'; p++) {
		if (!*p || (unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\' && !strchr("\"\\/bfnrtu", *++p))
			return NULL;
	}
	return p + 1;
}

static const char *json_list(const char *p, char close, bool keyed)
{
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (keyed) {
			if (!(p = json_string(p)) || *(p = json_ws(p)) != ':')
				return NULL;
			p++;
		}
		if (!(p = json_value(p)))
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = json_ws(p);
	}
}

static const char *json_value(const char *p)
{
	char *end;

	p = json_ws(p);
	if (*p == '{')
		return json_list(p, '}', true);
	if (*p == '[')
		return json_list(p, ']', false);
	if (*p == '"')
		return json_string(p);
	for (const char *w = "true\0false\0null\0"; *w; w += strlen(w) + 1)
		if (!strncmp(p, w, strlen(w)))
			return p + strlen(w);
	if (*p != '-' && !isdigit((unsigned char)*p))
		return NULL;
	strtod(p, &end);
	return end;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 20];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

/* ---- the rows ---- */

static void test_rows(void)
{
	static const char *const labels[] = { "10", "20", "30", "40", "50", "60", "70", "100", "128",
					      "Dynamic", "Always", "Event-idx" };
	bool all = true;

	fresh("notify", 2);
	CHECK(table_build_rows(&t, NULL) == 0 && t.nrows == 12, "notify: the 2008 sweep's 12 rows (%u)", t.nrows);
	for (unsigned i = 0; i < t.nrows && i < 12; i++)
		all = all && !strcmp(t.rows[0][i].label, labels[i]) && !strcmp(t.rows[1][i].label, labels[i]);
	CHECK(all, "notify: labels 10..128, Dynamic, Always, Event-idx, for both models");
	CHECK(t.rows[0][0].nargs == 2 && !strcmp(t.rows[0][0].args[0], "--policy") &&
	      !strcmp(t.rows[0][0].args[1], "static:10") && !strcmp(t.rows[0][9].policy, "dynamic"),
	      "notify: a number is a static threshold (--policy static:10), a word its own policy");

	fresh("notify", 1);
	CHECK(table_build_rows(&t, "64,dynamic-exact") == 0 && t.nrows == 2 && !strcmp(t.rows[0][1].label,
	      "Dynamic-exact"), "--rows 64,dynamic-exact: two rows");
	fresh("notify", 1);
	CHECK(table_build_rows(&t, "64,fast") == EXIT_USAGE, "--rows with a word that is no policy: a usage error");

	fresh("indirect", 1);
	t.icosts[0] = 0, t.icosts[1] = 500, t.nicosts = 2;
	CHECK(table_build_rows(&t, NULL) == 0 && t.nrows == 12,
	      "indirect with two costs: never/always/threshold x ring 128, 256 x 2 costs = 12 rows (%u)", t.nrows);
	CHECK(!strcmp(t.rows[0][0].mode, "never") && t.rows[0][0].ring == 128 && t.rows[0][0].indirect_cost_ns == 0 &&
	      t.rows[0][1].indirect_cost_ns == 500 && t.rows[0][1].ring == 128,
	      "indirect: the cost innermost (never/128 at 0 ns, then at 500 ns)");

	fresh("cost", 1);
	CHECK(table_build_rows(&t, "always") == 0 && t.nrows == 10,
	      "cost: one policy x 5 exit costs x 2 paces = 10 rows (%u)", t.nrows);

	fresh("linux", 2);
	CHECK(table_build_rows(&t, NULL) == 0 && t.nrows == 4 && !strcmp(t.rows[0][0].label, "Stub-dynamic") &&
	      !strcmp(t.rows[1][1].label, "Stub-event-idx") && !strcmp(t.rows[0][2].label, "Linux") &&
	      !strcmp(t.rows[1][3].label, "Linux-no-evidx"),
	      "linux: the stub's dynamic and event-idx rows, then Linux with and without event-idx, for both models");
	CHECK(t.rows[0][2].nargs == 2 && !strcmp(t.rows[0][2].args[0], "--guest") &&
	      !strcmp(t.rows[0][2].args[1], "linux") && !strcmp(t.rows[0][2].policy, "linux") &&
	      t.rows[0][3].nargs == 4 && !strcmp(t.rows[0][3].args[2], "--withhold-features") &&
	      !strcmp(t.rows[0][3].args[3], "event-idx") && !strcmp(t.rows[0][1].args[1], "event-idx"),
	      "linux: Linux rows are --guest linux (event-idx withheld in the second); stub rows a --policy");
	fresh("linux", 1);
	CHECK(table_build_rows(&t, "linux,windows") == EXIT_USAGE, "linux: a word that is no guest or policy: a "
	      "usage error");
}

/* stats_json_u64 reads what the stats writer writes: numbers, and hex
 * strings such as the negotiated features (the linux experiment's column). */
static void test_json_u64(void)
{
	char path[] = "/tmp/lkvm-test-json-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	uint64_t v = 0;

	fprintf(f, "{\n  \"net_features_negotiated\": \"0x120000020\",\n  \"tx_frames\": 737581,\n"
		   "  \"net_backend\": \"slirp\"\n}\n");
	fclose(f);
	CHECK(stats_json_u64(path, "net_features_negotiated", &v) && v == 0x120000020ull,
	      "a quoted hex string (0x%llx)", (unsigned long long)v);
	CHECK(stats_json_u64(path, "tx_frames", &v) && v == 737581, "a number (%llu)", (unsigned long long)v);
	CHECK(!stats_json_u64(path, "net_backend", &v) && !stats_json_u64(path, "absent", &v),
	      "a string that is no number, and a missing key: not read");
	unlink(path);
}

/* ---- medians and spreads ---- */

static void test_summary(void)
{
	struct row r = { .n = 3 };

	r.v[0][M_GBPS] = 3, r.v[1][M_GBPS] = 1, r.v[2][M_GBPS] = 2;
	table_row_summarise(&r);
	CHECK(r.median[M_GBPS] == 2 && r.min[M_GBPS] == 1 && r.max[M_GBPS] == 3, "3 samples: median 2, min 1, max 3");
	CHECK(spread_pct(&r, M_GBPS) == 100, "spread (max-min)/median = 100%% (%g)", spread_pct(&r, M_GBPS));
	r.n = 4, r.v[3][M_GBPS] = 10;
	table_row_summarise(&r);
	CHECK(r.median[M_GBPS] == 2.5 && r.max[M_GBPS] == 10, "4 samples: the median is the mean of the middle two "
	      "(%g)", r.median[M_GBPS]);
	r.v[0][M_TIMEOUTS] = r.v[1][M_TIMEOUTS] = r.v[2][M_TIMEOUTS] = r.v[3][M_TIMEOUTS] = 0;
	CHECK(spread_pct(&r, M_TIMEOUTS) == 0, "a metric whose median is 0 has spread 0, not a division by zero");
}

/* ---- the indirect sweep's crossover ---- */

/* Rows: always and threshold x ring 128, 256 x costs 0, 100, 200. */
static void crossover_table(void)
{
	static const unsigned costs[] = { 0, 100, 200 };

	fresh("indirect", 1);
	memcpy(t.icosts, costs, sizeof(costs));
	t.nicosts = 3;
	table_build_rows(&t, "always,threshold");
	for (unsigned i = 0; i < t.nrows; i++) {
		const struct row *r = &t.rows[0][i];
		unsigned k = r->indirect_cost_ns / 100;
		/* always falls 10, 9, 8; threshold rises 8, 8.5, 9 on ring 128 and
		 * stays at 7 on ring 256: it overtakes at 200 ns on 128 only */
		double g = !strcmp(r->mode, "always") ? 10 - k : r->ring == 128 ? 8 + 0.5 * k : 7;
		double s[3] = { g - 0.1, g, g + 0.1 };

		samples(i, s, 3);
	}
}

static void test_crossover(void)
{
	struct crossover c[MAX_CROSSOVERS];
	char buf[400];
	unsigned n;

	crossover_table();
	n = table_crossovers(&t, c);
	CHECK(n == 2 && c[0].ring == 128 && c[1].ring == 256, "one crossover per ring (%u)", n);
	CHECK(c[0].found && c[0].cost_ns == 200 && c[0].threshold_gbps == 9 && c[0].always_gbps == 8,
	      "ring 128: threshold overtakes always at 200 ns, 9 vs 8 Gbit/s");
	CHECK(c[0].paired_found && c[0].paired_cost_ns == 200 && c[0].ratio[0] < 1 && c[0].ratio[2] > 1,
	      "ring 128, paired by round: above 1 from 200 ns (%.3f at 0 ns, %.3f at 200)", c[0].ratio[0],
	      c[0].ratio[2]);
	CHECK(!c[1].found && c[1].measured && c[1].up_to_ns == 200, "ring 256: no crossover up to 200 ns");
	crossover_describe(&c[0], buf, sizeof(buf));
	CHECK(strstr(buf, "threshold overtakes always at 200 ns (9.00 [8.90-9.10] vs 8.00 [7.90-8.10]") != NULL,
	      "said: %s", buf);
	crossover_describe(&c[1], buf, sizeof(buf));
	CHECK(strstr(buf, "no crossover up to 200 ns") != NULL, "said: %s", buf);
	crossover_describe_paired(&t, &c[0], buf, sizeof(buf));
	CHECK(strstr(buf, "above 1 from 200 ns") != NULL, "said: %s", buf);

	/* A failed row takes its cost out of the comparison. */
	for (unsigned i = 0; i < t.nrows; i++)
		if (t.rows[0][i].ring == 128 && t.rows[0][i].indirect_cost_ns == 200 && !strcmp(t.rows[0][i].mode, "always"))
			snprintf(t.rows[0][i].failed, sizeof(t.rows[0][i].failed), "exit 3");
	n = table_crossovers(&t, c);
	CHECK(n == 2 && !c[0].found && c[0].up_to_ns == 100, "always failed at 200 ns: no crossover up to 100 ns");
	fresh("notify", 1);
	CHECK(table_crossovers(&t, c) == 0, "the notify experiment has no crossovers");
}

/* ---- the writers ---- */

static void test_writers(void)
{
	char csv[] = "/tmp/lkvm-test-table-XXXXXX", json[] = "/tmp/lkvm-test-table-XXXXXX";
	const char *text, *end;
	unsigned lines = 0;
	int fd1 = mkstemp(csv), fd2 = mkstemp(json);

	close(fd1), close(fd2);
	crossover_table();
	snprintf(t.rows[0][1].failed, sizeof(t.rows[0][1].failed), "the child said \"no\"\\ and exited 1");
	t.csv = csv, t.json = json;
	t.pass[t.npass++] = "--bytes", t.pass[t.npass++] = "64M";

	CHECK(table_write_csv(&t) == 0, "CSV written");
	text = slurp(csv);
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	CHECK(lines == t.nrows + 1, "CSV: a header and one line per row (%u lines, %u rows)", lines, t.nrows);
	CHECK(!strncmp(text, "experiment,vm,model,row,options,samples,seconds_median,seconds_min,seconds_max,", 79),
	      "CSV: the header names each metric's median, min and max");
	CHECK(strstr(text, "\nindirect,kvm,threaded,always/128") != NULL, "CSV: rows carry experiment, vm, model and "
	      "label");
	CHECK(strstr(text, ",,,,,,") != NULL, "CSV: a failed row's metrics are empty");

	CHECK(json_value("{\"a\": [1, -2.5e3, true, null]}") && !json_value("{\"a\": \"x\"y\"}") &&
	      !json_value("{\"a\" 1}"), "the validator takes JSON and refuses a stray quote or a missing colon");
	CHECK(table_write_json(&t) == 0, "JSON written");
	text = slurp(json);
	end = json_value(text);
	CHECK(end && !*json_ws(end), "JSON: the file is one valid JSON value, a failure reason with quotes and a "
	      "backslash included");
	CHECK(strstr(text, "\"options\": [\"--bytes\", \"64M\"]") != NULL, "JSON: the options passed to every run");
	CHECK(strstr(text, "\"median\": {") != NULL && strstr(text, "\"gbit_per_second\": 9") != NULL,
	      "JSON: medians by metric name");
	unlink(csv);
	unlink(json);
}

int main(void)
{
	test_rows();
	test_json_u64();
	test_summary();
	test_crossover();
	test_writers();
	return check_summary();
}
