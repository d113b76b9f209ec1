/*
 * test_paper2008.c -- the shape verdict of lab/paper2008.c: the seed's own
 * table must pass all five points with the values paper2008.h quotes, and
 * each point must fail on a table built to break it alone.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "paper2008.h"

/* The seed's rows as measured rows (its seconds have no range: 0 width). */
static size_t paper_as_rows(struct shape_row *rows)
{
	for (size_t i = 0; i < paper2008_count; i++) {
		const struct paper_row *p = &paper2008[i];

		rows[i] = (struct shape_row){ p->policy, p->seconds, p->seconds, p->seconds, p->timeouts, p->notifies };
	}
	return paper2008_count;
}

static struct shape_row *row_of(struct shape_row *rows, size_t n, const char *policy)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(rows[i].policy, policy))
			return &rows[i];
	return NULL;
}

static void test_paper_passes(void)
{
	struct shape_row rows[16];
	size_t n = paper_as_rows(rows);
	struct shape_verdict v;
	char text[1024];

	shape_judge(rows, n, &v);
	CHECK(v.judged, "2008's table can be judged");
	CHECK(v.cliff == 40 && v.cliff_ok, "2008's cliff is at 40 (got %u)", v.cliff);
	/* 888,650 over the median of 40..128's notifies (816..1,144: 1,002.5) */
	CHECK(fabs(v.notify_drop - 888650 / 1002.5) < 1e-6 && v.notify_drop_ok, "2008's drop is 886x (got %.3f)",
	      v.notify_drop);
	CHECK(fabs(v.timeout_rise - 282794 / 131023.0) < 1e-6 && v.timeouts_ok, "2008's timeouts rise 2.16x (got %.4f)",
	      v.timeout_rise);
	CHECK(fabs(v.timeouts_vs_2008 - 1) < 1e-12, "2008 is 1x itself (got %f)", v.timeouts_vs_2008);
	CHECK(v.fastest == 100 && v.fastest_ok && v.fastest_separate, "2008's fastest row is 100 (got %u)", v.fastest);
	CHECK(v.dynamic_notifies == 64153 && v.dynamic_ok, "2008's Dynamic sits between the regimes");
	CHECK(v.met == 5, "2008 meets all five (got %u)", v.met);
	shape_describe(&v, text, sizeof(text));
	CHECK(strstr(text, "(5 of 5 hold)") && !strstr(text, "NO"), "the description says so:\n%s", text);
}

static void test_rows_in_any_order(void)
{
	struct shape_row rows[16], rev[16];
	size_t n = paper_as_rows(rows);
	struct shape_verdict a, b;

	for (size_t i = 0; i < n; i++)
		rev[i] = rows[n - 1 - i];
	shape_judge(rows, n, &a);
	shape_judge(rev, n, &b);
	CHECK(a.cliff == b.cliff && a.notify_drop == b.notify_drop && a.fastest == b.fastest,
	      "the verdict does not depend on the rows' order");
}

/* The raw workload's table as measured before issue 24 (docs/results.md):
 * notifies fall 6.4x, two timeouts a row -- no 2008 shape at all. */
static void test_raw_table_fails(void)
{
	struct shape_row rows[] = {
		{ "static:10", 1.0, 0.9, 1.1, 2, 17993 }, { "static:20", 1.0, 0.9, 1.1, 2, 9000 },
		{ "static:40", 1.0, 0.9, 1.1, 2, 4500 },  { "static:64", 1.0, 0.9, 1.1, 2, 3000 },
		{ "static:128", 1.0, 0.9, 1.1, 2, 2814 }, { "dynamic", 1.0, 0.9, 1.1, 2, 5000 },
	};
	struct shape_verdict v;
	char text[1024];

	shape_judge(rows, 6, &v);
	CHECK(v.judged && v.cliff == 0 && !v.cliff_ok, "no row falls under 1%%: no cliff");
	CHECK(!v.notify_drop_ok && !v.timeouts_ok && !v.fastest_ok && !v.dynamic_ok && v.met == 0,
	      "and nothing else holds (met %u)", v.met);
	shape_describe(&v, text, sizeof(text));
	CHECK(strstr(text, "none") && strstr(text, "no cliff") && strstr(text, "(0 of 5 hold)"), "described:\n%s", text);
}

/* Each point broken alone, on 2008's table. */
static void test_each_point_can_fail(void)
{
	struct shape_row rows[16];
	size_t n;
	struct shape_verdict v;

	n = paper_as_rows(rows);
	row_of(rows, n, "static:20")->notifies = 800;   /* the cliff one row early */
	shape_judge(rows, n, &v);
	CHECK(v.cliff == 20 && !v.cliff_ok && v.met == 4, "a cliff at 20 is not 2008's (met %u)", v.met);

	n = paper_as_rows(rows);
	for (size_t i = 0; i < n; i++)
		if (strncmp(rows[i].policy, "static:", 7) == 0 && strcmp(rows[i].policy, "static:10") &&
		    strcmp(rows[i].policy, "static:20") && strcmp(rows[i].policy, "static:30") &&
		    strcmp(rows[i].policy, "static:40"))
			rows[i].notifies = 20000;   /* the cliff at 40, then back above 1% */
	shape_judge(rows, n, &v);
	CHECK(v.cliff == 40 && !v.notify_drop_ok, "a drop of 44x past the cliff is not >= 100x (%.1f)", v.notify_drop);

	n = paper_as_rows(rows);
	row_of(rows, n, "static:10")->timeouts = 200000;   /* rise 1.41x */
	shape_judge(rows, n, &v);
	CHECK(!v.timeouts_ok && v.met == 4, "timeouts rising 1.41x fail (%.2f)", v.timeout_rise);

	n = paper_as_rows(rows);
	for (size_t i = 0; i < n; i++)
		rows[i].timeouts /= 4;   /* same rise, a quarter of 2008's count */
	shape_judge(rows, n, &v);
	CHECK(v.timeout_rise > 2 && !v.timeouts_ok, "a quarter of 2008's timeouts fails (%.2fx)", v.timeouts_vs_2008);

	n = paper_as_rows(rows);
	row_of(rows, n, "static:10")->seconds = 10;   /* the notify regime fastest */
	shape_judge(rows, n, &v);
	CHECK(v.fastest == 10 && !v.fastest_ok && v.met == 4, "threshold 10 fastest fails");

	n = paper_as_rows(rows);
	row_of(rows, n, "static:100")->seconds_max = 20;   /* fastest, but its range reaches 10's */
	shape_judge(rows, n, &v);
	CHECK(v.fastest == 100 && v.fastest_ok && !v.fastest_separate, "an overlapping range is said");

	n = paper_as_rows(rows);
	row_of(rows, n, "dynamic")->notifies = 900000;
	shape_judge(rows, n, &v);
	CHECK(!v.dynamic_ok && v.met == 4, "Dynamic above threshold 10's notifies fails");
}

static void test_not_judged(void)
{
	struct shape_row rows[] = { { "static:20", 1, 1, 1, 5, 5 }, { "dynamic", 1, 1, 1, 5, 5 } };
	struct shape_verdict v;

	shape_judge(rows, 2, &v);
	CHECK(!v.judged && v.met == 0, "without threshold 10 there is nothing to judge");
}

int main(void)
{
	test_paper_passes();
	test_rows_in_any_order();
	test_raw_table_fails();
	test_each_point_can_fail();
	test_not_judged();
	return check_summary();
}
