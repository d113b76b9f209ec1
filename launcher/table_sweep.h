/*
 * table_sweep.h -- the rows `lguest-kvm table` measures, shared by the
 * sweep (table.c), which fills them from its children's JSON stats, and the
 * writers (table_writers.c), which turn them into CSV, JSON and a plot.
 * Private to those two files.
 */
#ifndef TABLE_SWEEP_H
#define TABLE_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_lab.h"

#define MAX_ROWS 64
#define MAX_ROW_ARGS 6
#define MAX_REPEAT 25
#define MAX_PASS 40

enum metric { M_SECONDS, M_GBPS, M_TIMEOUTS, M_NOTIFIES, M_THRESHOLD, M_RING_FULL, M_INDIRECT_SHARE, M_COUNT };
/* The metrics' names in the CSV header and the JSON file (table_writers.c). */
extern const char *const table_metric_key[M_COUNT];

struct row {
	const char *label;          /* "10", "Dynamic", "never/128", "Dynamic 26us/24us" */
	char args[MAX_ROW_ARGS][24]; /* child options for this row, e.g. --policy static:10 */
	unsigned nargs;
	const char *policy;         /* notify and cost: the --policy value */
	unsigned exit_cost_us, pace_us;   /* cost: the row's coordinates */
	const char *layout;         /* layout: split | packed */
	double v[MAX_REPEAT][M_COUNT];
	unsigned n;                 /* successful samples */
	double median[M_COUNT], min[M_COUNT], max[M_COUNT];
	char failed[240];
};

struct table {
	const char *experiment;     /* notify | indirect | cost */
	const char *models[2];
	unsigned nmodels;
	unsigned repeat;
	char *pass[MAX_PASS];       /* options passed through to every run */
	unsigned npass;
	const char *csv, *json, *plot;
	struct row rows[2][MAX_ROWS];
	unsigned nrows;
	double t0;
	unsigned done, total;
	int interrupted;
	/* --workload tcp: the receiver's side, and the host's loopback ceiling */
	bool tcp, tcp_tap;
	struct tcp_lab lab;
	uint64_t bytes;
	double loopback[MAX_REPEAT];
	unsigned nloopback;
	char loopback_failed[240];
};

/* (max - min) / median, in percent: how far the samples spread. */
static inline double spread_pct(const struct row *r, enum metric m)
{
	return r->median[m] > 0 ? (r->max[m] - r->min[m]) / r->median[m] * 100 : 0;
}

/* Each writes one file named on the command line; -1 with the reason
 * recorded by diag_fail(). */
int table_write_csv(const struct table *t);
int table_write_json(const struct table *t);
/* Through gnuplot; no plot (and 0) when no row has data. */
int table_write_plot(const struct table *t);

#endif
