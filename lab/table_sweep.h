/*
 * table_sweep.h -- the rows `lguest-kvm table` measures, shared by the
 * sweep (table.c), which fills them from its children's JSON stats, and the
 * writers (table_writers.c), which turn them into CSV, JSON and a plot.
 * Private to those two files.
 */
#ifndef TABLE_SWEEP_H
#define TABLE_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "paper2008.h"
#include "preset.h"
#include "tcp_lab.h"

#define MAX_ROWS 64
#define MAX_ROW_ARGS 6
#define MAX_REPEAT 25
#define MAX_PASS 40
#define MAX_ICOSTS 16

enum metric { M_SECONDS, M_GBPS, M_TIMEOUTS, M_NOTIFIES, M_THRESHOLD, M_RING_FULL, M_INDIRECT_SHARE,
	      M_BUILD_NS, M_POP_DIRECT_NS, M_POP_INDIRECT_NS,
	      /* the poll and coalesce experiments (issue 26) */
	      M_DEVICE_CPU, M_WAKEUPS, M_INTERRUPTS, M_HALTS, M_POLL_SECONDS, M_FRAMES, M_PAYLOAD,
	      /* every run: 1 if the driver took VIRTIO_RING_F_EVENT_IDX (the linux experiment's point) */
	      M_EVENT_IDX, M_COUNT };
/* The metrics' names in the CSV header and the JSON file (table_writers.c). */
extern const char *const table_metric_key[M_COUNT];

struct row {
	const char *label;          /* "10", "Dynamic", "never/128", "always/256/500ns" */
	char args[MAX_ROW_ARGS][32]; /* child options for this row, e.g. --policy static:10 */
	unsigned nargs;
	const char *policy;         /* notify and cost: the --policy value */
	unsigned exit_cost_us, pace_us;   /* cost: the row's coordinates */
	const char *layout;         /* layout: split | packed */
	const char *mode;           /* indirect: never | always | threshold[:N] */
	unsigned ring;              /* indirect: 128 | 256 */
	unsigned indirect_cost_ns;  /* indirect with --indirect-costs: the row's price of a table */
	const char *poll;           /* poll: the --host-poll-us value, "0" .. "adaptive" */
	unsigned coal_usecs, coal_packets;   /* coalesce: the row's --coalesce */
	double v[MAX_REPEAT][M_COUNT];
	unsigned n;                 /* successful samples */
	double median[M_COUNT], min[M_COUNT], max[M_COUNT];
	char failed[240];
};

struct table {
	const char *experiment;     /* notify | indirect | cost | layout | poll | coalesce | linux */
	const struct preset *preset; /* the machine the rows stand for (notify: 2008 unless --preset none) */
	unsigned icosts[MAX_ICOSTS]; /* indirect: --indirect-costs, ascending (ns) */
	unsigned nicosts;           /* 0: no cost sweep, the 2011 rows alone */
	const char *vm;             /* --vm: kvm | none, for every row */
	const char *models[2];      /* --model: threaded and/or lguest */
	unsigned nmodels;
	unsigned repeat;
	char *pass[MAX_PASS];       /* options passed through to every run */
	unsigned npass;
	const char *csv, *json, *plot;
	const char *trace_dir;      /* --trace-dir: each row's first repeat traced there, or NULL */
	const char *rows_arg;       /* --rows as given, or NULL: the experiment's own */
	const char *net_arg;        /* --net as given, or NULL */
	const char *preset_arg;     /* --preset as given, or NULL: the experiment's own */
	const char *icosts_arg;     /* --indirect-costs as given (parsed into icosts), or NULL */
	bool model_given;           /* --model was given */
	bool model_thread;          /* --model thread: the old spelling of --vm none --model threaded */
	bool vm_given;              /* --vm was given */
	bool workload_given;        /* --workload was given */
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

/* The rows of t->experiment: `spec` (--rows, comma-separated words) or the
 * experiment's own, for every model (table.c).  0, or a usage error. */
int table_build_rows(struct table *t, const char *spec);
/* A row's median, min and max of every metric over its r->n samples. */
void table_row_summarise(struct row *r);

/* (max - min) / median, in percent: how far the samples spread. */
static inline double spread_pct(const struct row *r, enum metric m)
{
	return r->median[m] > 0 ? (r->max[m] - r->min[m]) / r->median[m] * 100 : 0;
}

/* Where, in the indirect cost sweep, a threshold row overtakes always:
 * for one model, ring and threshold word, the first swept cost at which
 * the threshold row's median Gbit/s exceeds always's (both measured). */
struct crossover {
	unsigned model;             /* index into models[] */
	unsigned ring;
	const char *threshold;      /* the threshold row's word */
	bool found;
	unsigned cost_ns;           /* found: the first such cost */
	double threshold_gbps, always_gbps;   /* found: their medians there */
	double threshold_min, threshold_max, always_min, always_max;   /* ... and their ranges */
	unsigned up_to_ns;          /* the largest cost with both measured (not found: none up to it) */
	bool measured;              /* any cost had both rows measured */
	/* Paired by round: at each cost, the median over rounds of threshold's
	 * Gbit/s over always's in the same round (sample k of a sweep row is
	 * round k), which a machine whose speed drifts between rounds moves
	 * less than it moves the medians; 0 where either row has no sample. */
	double ratio[MAX_ICOSTS];
	bool paired_found;          /* some cost's ratio is above 1 ... */
	unsigned paired_cost_ns;    /* ... first at this cost */
};
#define MAX_CROSSOVERS 16
/* The crossovers of every model, ring and threshold word; how many. */
unsigned table_crossovers(const struct table *t, struct crossover *out);
/* One crossover as a sentence, e.g. "ring 128: threshold overtakes always
 * at 250 ns (2.10 [2.01-2.20] vs 1.95 [1.90-1.99] Gbit/s)", which says so
 * when the two ranges overlap; and its paired ratios as another, "ring
 * 128, paired by round, threshold/always: 0 ns 0.95, ...; above 1 from
 * 100 ns". */
void crossover_describe(const struct crossover *c, char *buf, size_t size);
void crossover_describe_paired(const struct table *t, const struct crossover *c, char *buf, size_t size);

/* The factor from one run's --bytes to the seed's 1 GiB. */
double table_per_gib(const struct table *t);
/* Model mi's notify rows, per GiB, against 2008's shape (paper2008.h). */
void table_shape(const struct table *t, unsigned mi, struct shape_verdict *v);

/* Each writes one file named on the command line; -1 with the reason
 * recorded by diag_fail(). */
int table_write_csv(const struct table *t);
int table_write_json(const struct table *t);
/* Through gnuplot; no plot (and 0) when no row has data. */
int table_write_plot(const struct table *t);

#endif
