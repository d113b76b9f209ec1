/*
 * paper2008.h -- the seed's table (Rusty Russell, "virtio: threshold for
 * notifications", 2008: 1G TCP Guest->Host on lguest, ring 128) and the
 * verdict that sets a measured table beside it.
 *
 * The table command fills one `struct shape_row` per measured row (its
 * medians, scaled to one GiB) and asks shape_judge() how its shape compares
 * with 2008's: where the notify cliff is, how far notifies drop, whether
 * timeouts rise as notifies fall, which regime is fastest and where Dynamic
 * sits.  Pure: no I/O, so a unit test feeds it the seed's own rows and
 * checks that 2008 passes its own verdict.
 */
#ifndef PAPER2008_H
#define PAPER2008_H

#include <stdbool.h>
#include <stddef.h>

/* One row of the seed's table. */
struct paper_row {
	const char *policy;   /* the --policy value: static:N or dynamic */
	double seconds, timeouts, notifies;
};
extern const struct paper_row paper2008[];
extern const size_t paper2008_count;
/* The 2008 row of a --policy value, or NULL (the seed had no such row). */
const struct paper_row *paper2008_find(const char *policy);

/* One measured row, per GiB: medians, and the seconds' range. */
struct shape_row {
	const char *policy;
	double seconds, seconds_min, seconds_max;
	double timeouts, notifies;
};

/* The five points of the shape (issue 24), each with its value and
 * whether it holds; 2008's own values are in the comments. */
struct shape_verdict {
	bool judged;          /* rows enough to judge: static:10 and a later static row */
	unsigned cliff;       /* first static threshold with notifies < 1% of threshold 10's; 0: none (2008: 40) */
	bool cliff_ok;        /* at 40 or 50 */
	double past_notifies; /* the median of the rows from the cliff on, per GiB (2008: 1,002.5) */
	double notify_drop;   /* threshold 10's notifies / past_notifies (2008: 886) */
	bool notify_drop_ok;  /* >= 100 */
	double timeout_rise;  /* median timeouts past the cliff / threshold 10's (2008: 2.16) */
	double timeouts_vs_2008;   /* that median / 2008's, per GiB (2008: 1) */
	bool timeouts_ok;     /* rise >= 2 and within 3x of 2008 */
	unsigned fastest;     /* the static threshold with the least median seconds (2008: 100) */
	bool fastest_separate;     /* its seconds range does not overlap threshold 10's */
	bool fastest_ok;      /* past the cliff */
	double dynamic_notifies;   /* -1: no Dynamic row */
	bool dynamic_ok;      /* between the median past the cliff and threshold 10's */
	unsigned met;         /* how many of the five hold */
};

/* Judge rows[0..n) (any order; rows other than static:N and dynamic are
 * ignored).  Counts must already be per GiB. */
void shape_judge(const struct shape_row *rows, size_t n, struct shape_verdict *v);

/* The verdict as lines of text, one per point, each ending in "yes" or
 * "NO" and 2008's value; `buf` holds them all. */
void shape_describe(const struct shape_verdict *v, char *buf, size_t size);

/* The median of v[0..n), n >= 1; sorts v. */
double median_of(double *v, size_t n);

#endif
