/*
 * trace_cmd.c -- `lguest-kvm trace FILE`: one run's timeline, both sides of
 * the ring on one clock, turned into numbers a reader can check and a
 * picture a reader can look at (docs/trace.md).
 *
 *   parse options -> trace_file_read (every byte checked; exit 1, one line,
 *   if the file is bad) -> the window: --from/--to in ms since the file's
 *   first event -> one pass over the window's events (summarise) into
 *   struct summary: counts per type, the samples of five distributions, the
 *   series over time -> the summary as text, or as one JSON object
 *   (--json), both from the same struct -> --plot: the same series,
 *   decimated to pixel columns, drawn by gnuplot (gnuplot.h)
 *
 * The checks against the run's counters (the header's stat_* fields) are
 * always made over the whole file, whatever the window: a window holds
 * only part of what the counters counted.
 *
 * The guest's events are those of the transmit queue (NET_TX), the one
 * the threshold governs and the counters count; the host records that
 * queue's notifies, drains and timer (and its interrupt events, of both
 * queues), so its events are all taken.
 *
 * Nothing from the file is trusted on the way out either: the header's
 * strings are made printable before they reach a terminal, a JSON string
 * or a gnuplot script.
 */
#include "trace_cmd.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "gnuplot.h"
#include "json_writer.h"
#include "opt_table.h"
#include "net.h"          /* NET_TX: the queue the guest's events are of */
#include "stats.h"
#include "trace_file.h"

#define TENTHS         10u     /* the series over time: quantiles per tenth of the window */
#define HIST_BUCKETS   40u     /* [0,1), [1,2), [2,4), ... [2^38, 2^39) and above */
#define PLOT_COLUMNS   1500u   /* decimation: at most a few points per pixel column */
#define PLOT_WIDTH     1200u
#define PLOT_HEIGHT    950u

#define TRACE(field) offsetof(struct trace_options, field)

static bool parse_plot(const char *arg, void *opts)
{
	(void)opts;
	return plot_file_name_ok(arg);
}

/* A time in ms: finite, not negative. */
static bool parse_ms(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}

static bool parse_from(const char *arg, void *opts)
{
	return parse_ms(arg, &((struct trace_options *)opts)->from_ms);
}

static bool parse_to(const char *arg, void *opts)
{
	return parse_ms(arg, &((struct trace_options *)opts)->to_ms);
}

/* The options of `trace`, each described once (common/opt_table.h). */
const struct opt trace_opts[] = {
	{ OPT_STRING, "plot", "OUT.svg", TRACE(plot), .parse = parse_plot,
	  .accepts = "a file name ending in .svg or .png",
	  .help = "also draw the window on one time axis: ring occupancy and threshold, the host timer's length, "
		  "notifies and timeouts as marks (gnuplot)" },
	{ OPT_CUSTOM, "from", "MS", OPT_NO_FIELD, .parse = parse_from,
	  .accepts = "a time in ms since the first event, 0 or more", .def = "the first event",
	  .help = "start the window at MS" },
	{ OPT_CUSTOM, "to", "MS", OPT_NO_FIELD, .parse = parse_to,
	  .accepts = "a time in ms since the first event, 0 or more", .def = "the last event",
	  .help = "end it at MS" },
	{ OPT_FLAG, "json", NULL, TRACE(json), .help = "the summary as one JSON object on stdout, instead of text" },
	{ OPT_END },
};

static const char trace_intro[] =
"usage: lguest-kvm trace FILE [--plot OUT.svg] [--from MS] [--to MS] [--json]\n"
"\n"
"Summarise the timeline 'run --trace FILE' recorded: the file's facts and\n"
"clock, the events per type, the checks of the traced notifies and timeouts\n"
"against the run's own counters, histograms of drain sizes, notify intervals,\n"
"timer lateness and drain durations, and the host's timer length and the\n"
"guest's threshold over time (docs/trace.md).  Time is in ms since the file's\n"
"first event.\n"
"\n";

static const char trace_outro[] =
"\n"
"The counter checks always cover the whole file.  Exit status: 0 ok; 1 the\n"
"file is bad (one line saying what), or the plot failed; 2 usage.\n";

int trace_parse(struct trace_options *o, int argc, char **argv)
{
	const struct trace_options defaults = { .to_ms = -1 };
	const struct opt_command cmd = { .name = "trace", .table = trace_opts, .intro = trace_intro, .outro = trace_outro,
					 .defaults = &defaults };
	int first, rc;

	*o = defaults;
	rc = opt_parse(&cmd, o, argc, argv, &first);
	if (rc)
		return rc;
	if (first == argc)
		return usage_error("trace", "%sgive the trace FILE that 'run --trace FILE' wrote", "");
	if (first + 1 < argc)
		return usage_error("trace", "unexpected argument '%s'", argv[first + 1]);
	o->file = argv[first];
	if (o->to_ms >= 0 && o->to_ms <= o->from_ms)
		return usage_error("trace", "--to: the window must end after --from%s", "");
	return 0;
}

/* ---- what one pass collects ---- */

/* A growable list of (time, value) samples, in time order. */
struct series {
	struct point {
		double ms, v;
	} *p;
	size_t n, cap;
	bool oom;                   /* a push failed: the summary cannot be trusted */
};

static void push(struct series *s, double ms, double v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct point *p = realloc(s->p, cap * sizeof(*p));

		if (!p) {
			s->oom = true;
			return;
		}
		s->p = p;
		s->cap = cap;
	}
	s->p[s->n++] = (struct point){ ms, v };
}

/* The distributions (histograms) and the series over time, each with its
 * name in the text and in the JSON. */
enum { D_DRAIN_SIZE, D_TIMER_DRAIN_SIZE, D_NOTIFY_INTERVAL, D_TIMER_LATENESS, D_DRAIN_TIME, D_COUNT };
static const struct {
	const char *key, *title, *unit;
} dist_info[D_COUNT] = {
	[D_DRAIN_SIZE] = { "drain_buffers", "drain sizes (drain.a)", "buffers" },
	[D_TIMER_DRAIN_SIZE] = { "timer_drain_buffers", "an expiry's drain sizes (the first drain after each timer_fire)",
				 "buffers" },
	[D_NOTIFY_INTERVAL] = { "notify_interval_us", "notify intervals (between host notify events)", "us" },
	[D_TIMER_LATENESS] = { "timer_lateness_us", "timer lateness (timer_fire - (latest timer_arm + its length))", "us" },
	[D_DRAIN_TIME] = { "drain_duration_us", "drain durations (drain.b)", "us" },
};

enum { S_TIMER_US, S_THRESHOLD, S_OCCUPANCY, S_NOTIFY, S_FIRE, S_WAIT, S_COUNT };
static const struct {
	const char *key, *title;
} series_info[S_COUNT] = {
	[S_TIMER_US] = { "timer_us", "host timer length (timer_arm.a, us)" },
	[S_THRESHOLD] = { "threshold", "guest threshold (kick.c on the TX queue)" },
	[S_OCCUPANCY] = { "occupancy", "ring occupancy after a kick (kick.b)" },
	[S_NOTIFY] = { "notify", "host notify" },
	[S_FIRE] = { "timer_fire", "timer fire" },
	[S_WAIT] = { "guest_wait", "guest wait (start ms, end ms)" },
};
/* Of those, the ones the summary shows over time. */
static const unsigned over_time[] = { S_TIMER_US, S_THRESHOLD };

/* The whole-file checks: what the trace counts against what the run's
 * stats block counted (trace_file_header.stat_*). */
enum { C_GUEST_NOTIFIES, C_NOTIFY_WAKEUPS, C_TIMEOUTS, C_COUNT };
static const struct {
	const char *key, *title;
} check_info[C_COUNT] = {
	[C_GUEST_NOTIFIES] = { "guest_notifies", "guest notifies (notified kicks + ring_full) vs guest_tx_notifies" },
	[C_NOTIFY_WAKEUPS] = { "notify_wakeups", "host notify events vs tx_notify_wakeups" },
	[C_TIMEOUTS] = { "timeouts", "timer_fire events vs tx_timer_timeouts" },
};

struct summary {
	const struct trace_file_header *h;
	char model[sizeof(((struct trace_file_header *)0)->model)];   /* the header's strings, printable */
	char policy[sizeof(((struct trace_file_header *)0)->policy)];
	char layout[sizeof(((struct trace_file_header *)0)->layout)];
	char guest_note[sizeof(((struct trace_file_header *)0)->guest_note)];
	uint64_t t0;                /* the first event's stamp: time 0 */
	double span_ms;             /* the last event's time */
	double from_ms, to_ms;      /* the window */
	uint64_t window_events;
	uint64_t count[LKVM_TR_HOST_LAST + 1];   /* per type, in the window */
	uint64_t trace_count[C_COUNT], stat_count[C_COUNT];   /* whole file */
	bool lost;                  /* a ring wrapped or guest events were refused */
	bool plotting;              /* collect the series only the plot draws */
	uint64_t fires_without_arm;
	/* 2008's adaptive rule's input: each expiry's drain against the one
	 * before (+10 us when it found fewer buffers, -1 us otherwise) */
	uint64_t expiries_compared, expiries_fewer;
	struct series dist[D_COUNT];
	struct series s[S_COUNT];
};

static double ticks_to_us(const struct summary *sm, double ticks)
{
	return ticks * 1000.0 / sm->h->tsc_khz;
}

static double event_ms(const struct summary *sm, uint64_t tsc)
{
	return (double)(tsc - sm->t0) / sm->h->tsc_khz;
}

static void printable(char *out, const char *in, size_t size)
{
	size_t i;

	for (i = 0; i + 1 < size && in[i]; i++)
		out[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	out[i] = 0;
}

static bool tx_event(const struct lkvm_trace_event *e)
{
	return trace_event_side(e->type) == 'h' || e->queue == NET_TX;
}

/* The whole file against the run's counters. */
static void check_counters(struct summary *sm, const struct lkvm_trace_event *ev, uint64_t n)
{
	const struct trace_file_header *h = sm->h;

	for (uint64_t i = 0; i < n; i++) {
		const struct lkvm_trace_event *e = &ev[i];

		if (!tx_event(e))
			continue;
		if ((e->type == LKVM_TR_KICK && (e->d & LKVM_TRF_NOTIFIED)) || e->type == LKVM_TR_RING_FULL)
			sm->trace_count[C_GUEST_NOTIFIES]++;
		sm->trace_count[C_NOTIFY_WAKEUPS] += e->type == LKVM_TR_NOTIFY;
		sm->trace_count[C_TIMEOUTS] += e->type == LKVM_TR_TIMER_FIRE;
	}
	sm->stat_count[C_GUEST_NOTIFIES] = h->stat_guest_notifies;
	sm->stat_count[C_NOTIFY_WAKEUPS] = h->stat_notify_wakeups;
	sm->stat_count[C_TIMEOUTS] = h->stat_timeouts;
	sm->lost = h->guest_lost || h->host_lost || h->guest_invalid;
}

/* One pass over the window's events.  The timer's lateness pairs each
 * expiry with the latest arm before it (an arm replaces any expiry still
 * pending -- what timer_cancel records -- so an earlier arm is superseded);
 * an arm is used by one expiry at most. */
static void summarise(struct summary *sm, const struct lkvm_trace_event *ev, uint64_t lo, uint64_t hi)
{
	const struct lkvm_trace_event *arm = NULL, *wait = NULL;
	double last_notify = -1;
	bool after_fire = false;    /* the next drain is an expiry's */
	int64_t last_expiry_drain = -1;

	for (uint64_t i = lo; i < hi; i++) {
		const struct lkvm_trace_event *e = &ev[i];
		double ms = event_ms(sm, e->tsc);

		sm->count[e->type]++;
		if (!tx_event(e))
			continue;
		switch (e->type) {
		case LKVM_TR_KICK:
			if (sm->plotting)
				push(&sm->s[S_OCCUPANCY], ms, e->b);
			push(&sm->s[S_THRESHOLD], ms, e->c);
			break;
		case LKVM_TR_WAIT_START:
			wait = e;
			break;
		case LKVM_TR_WAIT_END:
			/* a span as (start, end): v holds the end */
			if (wait && sm->plotting)
				push(&sm->s[S_WAIT], event_ms(sm, wait->tsc), ms);
			wait = NULL;
			break;
		case LKVM_TR_NOTIFY:
			if (sm->plotting)
				push(&sm->s[S_NOTIFY], ms, 1);
			if (last_notify >= 0)
				push(&sm->dist[D_NOTIFY_INTERVAL], ms, (ms - last_notify) * 1000);
			last_notify = ms;
			break;
		case LKVM_TR_DRAIN:
			push(&sm->dist[D_DRAIN_SIZE], ms, e->a);
			push(&sm->dist[D_DRAIN_TIME], ms, ticks_to_us(sm, e->b));
			if (after_fire && e->c == LKVM_TRC_TIMER) {
				push(&sm->dist[D_TIMER_DRAIN_SIZE], ms, e->a);
				if (last_expiry_drain >= 0) {
					sm->expiries_compared++;
					sm->expiries_fewer += e->a < last_expiry_drain;
				}
				last_expiry_drain = e->a;
			}
			after_fire = false;
			break;
		case LKVM_TR_TIMER_ARM:
			push(&sm->s[S_TIMER_US], ms, e->a);
			arm = e;
			break;
		case LKVM_TR_TIMER_FIRE:
			if (sm->plotting)
				push(&sm->s[S_FIRE], ms, 1);
			if (arm)
				push(&sm->dist[D_TIMER_LATENESS], ms, ticks_to_us(sm, (double)(e->tsc - arm->tsc)) - arm->a);
			else
				sm->fires_without_arm++;
			arm = NULL;
			after_fire = true;
			break;
		}
	}
}

static bool summary_oom(const struct summary *sm)
{
	for (unsigned k = 0; k < D_COUNT; k++)
		if (sm->dist[k].oom)
			return true;
	for (unsigned k = 0; k < S_COUNT; k++)
		if (sm->s[k].oom)
			return true;
	return false;
}

static void summary_free(struct summary *sm)
{
	for (unsigned k = 0; k < D_COUNT; k++)
		free(sm->dist[k].p);
	for (unsigned k = 0; k < S_COUNT; k++)
		free(sm->s[k].p);
}

/* ---- numbers from the samples ---- */

/* The values of points [lo, hi), sorted, for quantiles. */
struct sorted {
	double *v;
	size_t n;
	double sum;
};

static bool sort_values(const struct point *p, size_t n, struct sorted *out)
{
	out->n = n;
	out->sum = 0;
	out->v = malloc((n ? n : 1) * sizeof(double));
	if (!out->v)
		return false;
	for (size_t i = 0; i < n; i++) {
		out->v[i] = p[i].v;
		out->sum += p[i].v;
	}
	qsort(out->v, n, sizeof(double), stats_cmp_double);
	return true;
}

/* Nearest rank; only for n > 0. */
static double quantile(const struct sorted *s, double q)
{
	return s->v[(size_t)(q * (double)(s->n - 1) + 0.5)];
}

static const double dist_q[] = { 0.5, 0.9, 0.99 };
static const char *const dist_q_key[] = { "p50", "p90", "p99" };
static const double time_q[] = { 0.1, 0.5, 0.9 };
static const char *const time_q_key[] = { "p10", "p50", "p90" };
#define NQ 3

/* Log2 buckets: 0 holds [0, 1), k >= 1 holds [2^(k-1), 2^k); the last one
 * also everything above.  Negative values (a timer that fired before its
 * deadline) are counted apart. */
struct histogram {
	uint64_t bucket[HIST_BUCKETS];
	uint64_t negative;
	unsigned first, last;       /* the non-empty range; first > last if none */
};

static void histogram_of(const struct sorted *s, struct histogram *hg)
{
	memset(hg, 0, sizeof(*hg));
	hg->first = HIST_BUCKETS;
	for (size_t i = 0; i < s->n; i++) {
		double v = s->v[i];
		unsigned k = 0;

		if (v < 0) {
			hg->negative++;
			continue;
		}
		while (k + 1 < HIST_BUCKETS && v >= ldexp(1, (int)k))
			k++;
		hg->bucket[k]++;
		hg->first = k < hg->first ? k : hg->first;
		hg->last = k > hg->last ? k : hg->last;
	}
}

static double bucket_low(unsigned k)
{
	return k ? ldexp(1, (int)k - 1) : 0;
}

/* The tenth `t` of the window: its time range and the index range of the
 * series' points inside it. */
static void tenth(const struct summary *sm, const struct series *s, unsigned t, double *from, double *to, size_t *lo,
		  size_t *hi)
{
	double w = (sm->to_ms - sm->from_ms) / TENTHS;

	*from = sm->from_ms + w * t;
	*to = t + 1 == TENTHS ? sm->to_ms : sm->from_ms + w * (t + 1);
	for (*lo = 0; *lo < s->n && s->p[*lo].ms < *from; ++*lo)
		;
	for (*hi = *lo; *hi < s->n && (s->p[*hi].ms < *to || (t + 1 == TENTHS && s->p[*hi].ms <= *to)); ++*hi)
		;
}

/* ---- the summary as text ---- */

static const char *clock_name(uint32_t clock)
{
	return clock == TRACE_CLOCK_SHARED ? "shared" : clock == TRACE_CLOCK_CORRECTED ? "corrected" : "unknown";
}

static void clock_sentence(const struct summary *sm, char *buf, size_t size)
{
	const struct trace_file_header *h = sm->h;
	double window_ns = ticks_to_us(sm, (double)h->sync_window) * 1000;

	if (h->clock == TRACE_CLOCK_SHARED)
		snprintf(buf, size, "shared TSC (the host's stamp of the sync fell inside the guest's %.0f ns window)",
			 window_ns);
	else if (h->clock == TRACE_CLOCK_CORRECTED)
		snprintf(buf, size, "corrected: the guest's stamps moved by %lld ticks (%.3f us); sync window %.0f ns",
			 (long long)h->guest_tsc_offset, ticks_to_us(sm, (double)h->guest_tsc_offset), window_ns);
	else
		snprintf(buf, size, "unknown: no sync (no guest buffer); the guest's stamps, if any, unmoved");
}

static void print_facts(const struct summary *sm, const struct trace_options *o)
{
	const struct trace_file_header *h = sm->h;
	char clock[200];

	clock_sentence(sm, clock, sizeof(clock));
	printf("trace %s: model %s, policy %s, layout %s\n", o->file, sm->model, sm->policy, sm->layout);
	printf("  tsc %u kHz; clock: %s\n", h->tsc_khz, clock);
	printf("  events %llu (guest %llu, host %llu) over %.3f ms\n", (unsigned long long)h->events,
	       (unsigned long long)h->guest_events, (unsigned long long)(h->events - h->guest_events), sm->span_ms);
	printf("  lost: guest %llu, host %llu; guest events refused as invalid: %llu\n",
	       (unsigned long long)h->guest_lost, (unsigned long long)h->host_lost, (unsigned long long)h->guest_invalid);
	if (h->guest_lost)
		printf("  WARNING: the guest's trace ring wrapped: its oldest %llu events are missing\n",
		       (unsigned long long)h->guest_lost);
	if (h->host_lost)
		printf("  WARNING: the host's trace ring wrapped: its oldest %llu events are missing\n",
		       (unsigned long long)h->host_lost);
	if (h->guest_invalid)
		printf("  WARNING: %llu guest events were refused (unknown type)\n", (unsigned long long)h->guest_invalid);
	if (sm->guest_note[0])
		printf("  guest note: %s\n", sm->guest_note);
	printf("  window %.3f - %.3f ms: %llu events\n", sm->from_ms, sm->to_ms, (unsigned long long)sm->window_events);
}

static void print_counts(const struct summary *sm)
{
	printf("\nevents per type in the window:\n");
	for (uint16_t t = 1; t <= LKVM_TR_HOST_LAST; t++)
		if (trace_event_side(t))
			printf("  %-16s %c %12llu\n", trace_event_name(t), trace_event_side(t),
			       (unsigned long long)sm->count[t]);
}

static void print_checks(const struct summary *sm)
{
	printf("\nchecks against the run's counters (whole file)%s:\n",
	       sm->lost ? " -- NOT MEANINGFUL: events were lost or refused" : "");
	for (unsigned k = 0; k < C_COUNT; k++) {
		long long diff = (long long)(sm->trace_count[k] - sm->stat_count[k]);

		printf("  %-68s trace %llu, stats %llu: ", check_info[k].title, (unsigned long long)sm->trace_count[k],
		       (unsigned long long)sm->stat_count[k]);
		if (diff)
			printf("differ by %+lld\n", diff);
		else
			printf("match\n");
	}
	printf("  (the host counted %llu notifies, tx_queue_notifies; threaded: kicks merged into wakeups)\n",
	       (unsigned long long)sm->h->stat_host_notifies);
}

/* What 2008's rule makes of the expiries' drains, per expiry, in us. */
static double adaptive_drift_us(const struct summary *sm)
{
	uint64_t k = sm->expiries_fewer, n = sm->expiries_compared;

	return n ? (10.0 * (double)k - (double)(n - k)) / (double)n : 0;
}

static void print_distribution(const struct summary *sm, unsigned d)
{
	const struct series *s = &sm->dist[d];
	struct histogram hg;
	struct sorted v;
	uint64_t top = 0;

	printf("\n%s, %s: ", dist_info[d].title, dist_info[d].unit);
	if (!s->n) {
		printf("none in the window\n");
		return;
	}
	if (!sort_values(s->p, s->n, &v)) {
		printf("out of memory\n");
		return;
	}
	printf("%zu, min %.4g, mean %.4g", v.n, v.v[0], v.sum / (double)v.n);
	for (unsigned q = 0; q < NQ; q++)
		printf(", %s %.4g", dist_q_key[q], quantile(&v, dist_q[q]));
	printf(", max %.4g\n", v.v[v.n - 1]);
	if (d == D_TIMER_LATENESS && sm->fires_without_arm)
		printf("  (%llu fires had no arm before them in the window)\n", (unsigned long long)sm->fires_without_arm);
	if (d == D_TIMER_DRAIN_SIZE && sm->expiries_compared)
		printf("  fewer than the expiry before: %llu of %llu (%.0f%%) -- 2008's adaptive rule adds 10 us for each\n"
		       "  and takes 1 us off for the rest: %+.2f us per expiry\n",
		       (unsigned long long)sm->expiries_fewer, (unsigned long long)sm->expiries_compared,
		       100.0 * (double)sm->expiries_fewer / (double)sm->expiries_compared, adaptive_drift_us(sm));
	histogram_of(&v, &hg);
	for (unsigned k = 0; k < HIST_BUCKETS; k++)
		top = hg.bucket[k] > top ? hg.bucket[k] : top;
	top = hg.negative > top ? hg.negative : top;
	if (hg.negative)
		printf("  %24s %12llu %.*s\n", "< 0", (unsigned long long)hg.negative, (int)(hg.negative * 50 / top),
		       "##################################################");
	for (unsigned k = hg.first; k <= hg.last && k < HIST_BUCKETS; k++) {
		char range[40];

		if (k + 1 == HIST_BUCKETS)
			snprintf(range, sizeof(range), ">= %.0f", bucket_low(k));
		else
			snprintf(range, sizeof(range), "[%.0f, %.0f)", bucket_low(k), bucket_low(k + 1));
		printf("  %24s %12llu %.*s\n", range, (unsigned long long)hg.bucket[k], (int)(hg.bucket[k] * 50 / top),
		       "##################################################");
	}
	free(v.v);
}

static void print_over_time(const struct summary *sm, unsigned si)
{
	const struct series *s = &sm->s[si];

	printf("\n%s over time, per tenth of the window:\n", series_info[si].title);
	if (!s->n) {
		printf("  none in the window\n");
		return;
	}
	printf("  %10s %10s %10s %10s", "from_ms", "to_ms", "n", "min");
	for (unsigned q = 0; q < NQ; q++)
		printf(" %10s", time_q_key[q]);
	printf(" %10s\n", "max");
	for (unsigned t = 0; t < TENTHS; t++) {
		double from, to;
		size_t lo, hi;
		struct sorted v;

		tenth(sm, s, t, &from, &to, &lo, &hi);
		printf("  %10.3f %10.3f %10zu", from, to, hi - lo);
		if (hi == lo || !sort_values(s->p + lo, hi - lo, &v)) {
			printf(" %10s\n", "-");
			continue;
		}
		printf(" %10.4g", v.v[0]);
		for (unsigned q = 0; q < NQ; q++)
			printf(" %10.4g", quantile(&v, time_q[q]));
		printf(" %10.4g\n", v.v[v.n - 1]);
		free(v.v);
	}
}

static void print_text(const struct summary *sm, const struct trace_options *o)
{
	print_facts(sm, o);
	print_counts(sm);
	print_checks(sm);
	for (unsigned d = 0; d < D_COUNT; d++)
		print_distribution(sm, d);
	for (unsigned k = 0; k < sizeof(over_time) / sizeof(over_time[0]); k++)
		print_over_time(sm, over_time[k]);
}

/* ---- the same summary as JSON ---- */

static void json_distribution(struct json_writer *w, const struct summary *sm, unsigned d)
{
	const struct series *s = &sm->dist[d];
	struct histogram hg;
	struct sorted v;

	json_break(w, 4);
	json_begin_object(w, dist_info[d].key);
	json_string(w, "unit", dist_info[d].unit);
	json_u64(w, "n", s->n);
	if (!s->n || !sort_values(s->p, s->n, &v)) {
		json_end(w);
		return;
	}
	json_double(w, "min", "%.9g", v.v[0]);
	json_double(w, "mean", "%.9g", v.sum / (double)v.n);
	for (unsigned q = 0; q < NQ; q++)
		json_double(w, dist_q_key[q], "%.9g", quantile(&v, dist_q[q]));
	json_double(w, "max", "%.9g", v.v[v.n - 1]);
	histogram_of(&v, &hg);
	json_break(w, 6);
	json_u64(w, "negative", hg.negative);
	json_begin_array(w, "log2_buckets");
	for (unsigned k = hg.first; k <= hg.last && k < HIST_BUCKETS; k++) {
		json_begin_object(w, NULL);
		json_double(w, "from", "%.0f", bucket_low(k));
		if (k + 1 == HIST_BUCKETS)
			json_null(w, "to");
		else
			json_double(w, "to", "%.0f", bucket_low(k + 1));
		json_u64(w, "count", hg.bucket[k]);
		json_end(w);
	}
	json_end(w);
	if (d == D_TIMER_LATENESS)
		json_u64(w, "fires_without_arm", sm->fires_without_arm);
	json_end(w);
	free(v.v);
}

static void json_over_time(struct json_writer *w, const struct summary *sm, unsigned si)
{
	const struct series *s = &sm->s[si];

	json_break(w, 4);
	json_begin_array(w, series_info[si].key);
	for (unsigned t = 0; t < TENTHS; t++) {
		double from, to;
		size_t lo, hi;
		struct sorted v;

		tenth(sm, s, t, &from, &to, &lo, &hi);
		json_break(w, 6);
		json_begin_object(w, NULL);
		json_double(w, "from_ms", "%.6f", from);
		json_double(w, "to_ms", "%.6f", to);
		json_u64(w, "n", hi - lo);
		if (hi > lo && sort_values(s->p + lo, hi - lo, &v)) {
			json_double(w, "min", "%.9g", v.v[0]);
			for (unsigned q = 0; q < NQ; q++)
				json_double(w, time_q_key[q], "%.9g", quantile(&v, time_q[q]));
			json_double(w, "max", "%.9g", v.v[v.n - 1]);
			free(v.v);
		}
		json_end(w);
	}
	json_end(w);
}

/* The file's facts and clock, a few to a line. */
static void json_facts(struct json_writer *w, const struct summary *sm, const struct trace_options *o)
{
	const struct trace_file_header *h = sm->h;
	char clock[200];

	clock_sentence(sm, clock, sizeof(clock));
	json_break(w, 2);
	json_string(w, "file", o->file);
	json_break(w, 2);
	json_string(w, "model", sm->model);
	json_string(w, "policy", sm->policy);
	json_string(w, "layout", sm->layout);
	json_break(w, 2);
	json_u64(w, "tsc_khz", h->tsc_khz);
	json_string(w, "clock", clock_name(h->clock));
	json_string(w, "clock_note", clock);
	json_i64(w, "guest_tsc_offset", h->guest_tsc_offset);
	json_double(w, "sync_window_ns", "%.9g", ticks_to_us(sm, (double)h->sync_window) * 1000);
	json_break(w, 2);
	json_u64(w, "events", h->events);
	json_u64(w, "guest_events", h->guest_events);
	json_u64(w, "host_events", h->events - h->guest_events);
	json_double(w, "span_ms", "%.9g", sm->span_ms);
	json_break(w, 2);
	json_u64(w, "guest_lost", h->guest_lost);
	json_u64(w, "host_lost", h->host_lost);
	json_u64(w, "guest_invalid", h->guest_invalid);
	json_string(w, "guest_note", sm->guest_note);
}

/* The window, the counts per type and the checks against the counters. */
static void json_counts_checks(struct json_writer *w, const struct summary *sm)
{
	json_break(w, 2);
	json_begin_object(w, "window");
	json_double(w, "from_ms", "%.6f", sm->from_ms);
	json_double(w, "to_ms", "%.6f", sm->to_ms);
	json_u64(w, "events", sm->window_events);
	json_end(w);
	json_break(w, 2);
	json_begin_object(w, "counts");
	for (uint16_t t = 1; t <= LKVM_TR_HOST_LAST; t++)
		if (trace_event_side(t))
			json_u64(w, trace_event_name(t), sm->count[t]);
	json_end(w);
	json_break(w, 2);
	json_begin_object(w, "checks");
	json_bool(w, "whole_file", true);
	json_bool(w, "meaningful", !sm->lost);
	for (unsigned k = 0; k < C_COUNT; k++) {
		json_break(w, 4);
		json_begin_object(w, check_info[k].key);
		json_u64(w, "trace", sm->trace_count[k]);
		json_u64(w, "stats", sm->stat_count[k]);
		json_bool(w, "match", sm->trace_count[k] == sm->stat_count[k]);
		json_end(w);
	}
	json_break(w, 4);
	json_u64(w, "stat_host_notifies", sm->h->stat_host_notifies);
	json_end(w);
}

static void print_json(const struct summary *sm, const struct trace_options *o)
{
	struct json_writer w;

	json_start(&w, stdout);
	json_begin_object(&w, NULL);
	json_facts(&w, sm, o);
	json_counts_checks(&w, sm);
	json_break(&w, 2);
	json_begin_object(&w, "adaptive_rule");
	json_u64(&w, "expiries_compared", sm->expiries_compared);
	json_u64(&w, "expiries_fewer", sm->expiries_fewer);
	json_double(&w, "drift_us_per_expiry", "%.9g", adaptive_drift_us(sm));
	json_end(&w);
	json_break(&w, 2);
	json_begin_object(&w, "histograms");
	for (unsigned d = 0; d < D_COUNT; d++)
		json_distribution(&w, sm, d);
	json_end(&w);
	json_break(&w, 2);
	json_begin_object(&w, "over_time");
	for (unsigned k = 0; k < sizeof(over_time) / sizeof(over_time[0]); k++)
		json_over_time(&w, sm, over_time[k]);
	json_end(&w);
	json_break(&w, 0);
	json_end(&w);
	putchar('\n');
}

/* ---- the plot ---- */

/* Decimation to PLOT_COLUMNS columns over the window, so that a run of
 * millions of events still makes an SVG of a few MB: a line keeps each
 * column's lowest and highest value (drawn in the order they came, it looks
 * like the full line at this width); marks keep one per column that has
 * any; wait spans closer than a column merge.  An empty block gets one
 * undefined point, so that gnuplot draws nothing rather than failing. */
static double column_ms(const struct summary *sm)
{
	return (sm->to_ms - sm->from_ms) / PLOT_COLUMNS;
}

static unsigned column_of(const struct summary *sm, double ms)
{
	double c = (ms - sm->from_ms) / column_ms(sm);

	return c <= 0 ? 0 : c >= PLOT_COLUMNS - 1 ? PLOT_COLUMNS - 1 : (unsigned)c;
}

static double column_mid(const struct summary *sm, unsigned c)
{
	return sm->from_ms + (c + 0.5) * column_ms(sm);
}

static void plot_line(FILE *d, const struct summary *sm, const struct series *s)
{
	size_t i = 0;

	while (i < s->n) {
		unsigned c = column_of(sm, s->p[i].ms);
		double lo = s->p[i].v, hi = lo, first = lo, last = lo;

		for (i++; i < s->n && column_of(sm, s->p[i].ms) == c; i++) {
			last = s->p[i].v;
			lo = last < lo ? last : lo;
			hi = last > hi ? last : hi;
		}
		fprintf(d, "%.6f %.9g\n", column_mid(sm, c), first <= last ? lo : hi);
		if (lo != hi)
			fprintf(d, "%.6f %.9g\n", column_mid(sm, c), first <= last ? hi : lo);
	}
	if (!s->n)
		fprintf(d, "NaN NaN\n");
	fprintf(d, "\n\n");
}

/* A mark per column with events, as a vector across row `row`. */
static void plot_marks(FILE *d, const struct summary *sm, const struct series *s, unsigned row)
{
	unsigned last = PLOT_COLUMNS;

	for (size_t i = 0; i < s->n; i++) {
		unsigned c = column_of(sm, s->p[i].ms);

		if (c != last)
			fprintf(d, "%.6f %.2f 0 0.7\n", column_mid(sm, c), row - 0.35);
		last = c;
	}
	if (!s->n)
		fprintf(d, "NaN NaN NaN NaN\n");
	fprintf(d, "\n\n");
}

/* Wait spans (p.ms start, p.v end) on row `row`, merged when closer than
 * a column, at least a column wide so that a short one shows. */
static void plot_spans(FILE *d, const struct summary *sm, const struct series *s, unsigned row)
{
	double w = column_ms(sm);
	size_t i = 0;

	while (i < s->n) {
		double from = s->p[i].ms, to = s->p[i].v;

		for (i++; i < s->n && s->p[i].ms - to < w; i++)
			to = s->p[i].v > to ? s->p[i].v : to;
		fprintf(d, "%.6f %u %.6f 0\n", from, row, to - from > w ? to - from : w);
	}
	if (!s->n)
		fprintf(d, "NaN NaN NaN NaN\n");
	fprintf(d, "\n\n");
}

/* Blocks, in the order the script's `index` numbers name them. */
enum { B_OCCUPANCY, B_THRESHOLD, B_TIMER, B_NOTIFY, B_FIRE, B_WAIT };

static void trace_plot_data(FILE *d, const void *ctx)
{
	const struct summary *sm = ctx;

	plot_line(d, sm, &sm->s[S_OCCUPANCY]);
	plot_line(d, sm, &sm->s[S_THRESHOLD]);
	plot_line(d, sm, &sm->s[S_TIMER_US]);
	plot_marks(d, sm, &sm->s[S_NOTIFY], 0);
	plot_marks(d, sm, &sm->s[S_FIRE], 1);
	plot_spans(d, sm, &sm->s[S_WAIT], 2);
}

/* The figure's three panels, top to bottom, and what each draws: the
 * block its data is in, the series it came from (an empty one is left
 * out: gnuplot refuses a panel with no valid point), and its style. */
static const struct panel {
	const char *setup;          /* axis labels and ranges */
	struct {
		unsigned block, series;
		const char *style;
	} item[3];
	unsigned n;
} panels[] = {
	{ "set ylabel 'buffers'\nset yrange [0:*]\n",
	  { { B_OCCUPANCY, S_OCCUPANCY, "using 1:2 with lines lw 1 lc rgb '#1f77b4' title 'ring occupancy (kick.b)'" },
	    { B_THRESHOLD, S_THRESHOLD, "using 1:2 with steps lw 2 lc rgb '#d62728' title 'threshold (kick.c)'" } },
	  2 },
	{ "set ylabel 'us'\nset yrange [0:*]\n",
	  { { B_TIMER, S_TIMER_US, "using 1:2 with steps lw 2 lc rgb '#2ca02c' title 'timer length (timer_arm.a)'" } },
	  1 },
	{ "set ylabel ''\nset yrange [-0.6:2.6]\nset ytics ('notify' 0, 'timeout' 1, 'guest wait' 2)\n"
	  "set xlabel 'ms since the first event'\n",
	  { { B_NOTIFY, S_NOTIFY, "using 1:2:3:4 with vectors nohead lc rgb '#1f77b4' title 'host notify'" },
	    { B_FIRE, S_FIRE, "using 1:2:3:4 with vectors nohead lc rgb '#d62728' title 'timer fire'" },
	    { B_WAIT, S_WAIT, "using 1:2:3:4 with vectors nohead lw 6 lc rgb '#7f7f7f' title 'guest wait'" } },
	  3 },
};

static void plot_panel(FILE *g, const struct summary *sm, const struct panel *p, const char *data)
{
	bool any = false;

	fprintf(g, "%splot ", p->setup);
	for (unsigned i = 0; i < p->n; i++)
		if (sm->s[p->item[i].series].n) {
			fprintf(g, "%s'%s' index %u %s", any ? ", " : "", data, p->item[i].block, p->item[i].style);
			any = true;
		}
	/* nothing in the window: an empty frame on a fixed axis */
	fputs(any ? "\n" : "[:] [0:1] NaN notitle\n", g);
}

static void trace_plot_script(FILE *g, const void *ctx, const char *data)
{
	const struct summary *sm = ctx;
	char line[300], clock[200];

	/* One x range and the same left and right margins on every panel:
	 * one shared time axis.  No enhanced text: a key's '_' is meant
	 * literally.  The title's two lines hold the header's strings, so
	 * each is a quoted string (gnuplot.h), joined by a double-quoted
	 * line break. */
	fprintf(g, "set termoption noenhanced\nset datafile missing 'NaN'\nset grid\nset key outside right top\n"
		   "set lmargin at screen 0.08\nset rmargin at screen 0.76\nset xrange [%.6f:%.6f]\n"
		   "set multiplot layout 3,1 title ",
		sm->from_ms, sm->to_ms);
	snprintf(line, sizeof(line), "lguest-kvm trace: model %s, policy %s, layout %s", sm->model, sm->policy,
		 sm->layout);
	gnuplot_write_string(g, line);
	clock_sentence(sm, clock, sizeof(clock));
	snprintf(line, sizeof(line), "clock: %s", clock);
	fprintf(g, ".\"\\n\".");
	gnuplot_write_string(g, line);
	fprintf(g, "\n");
	for (unsigned p = 0; p < sizeof(panels) / sizeof(panels[0]); p++)
		plot_panel(g, sm, &panels[p], data);
	fprintf(g, "unset multiplot\n");
}

/* ---- the command ---- */

/* The window's first event and the one after its last. */
static void window_range(const struct summary *sm, const struct lkvm_trace_event *ev, uint64_t n, uint64_t *lo,
			 uint64_t *hi)
{
	for (*lo = 0; *lo < n && event_ms(sm, ev[*lo].tsc) < sm->from_ms; ++*lo)
		;
	for (*hi = *lo; *hi < n && event_ms(sm, ev[*hi].tsc) <= sm->to_ms; ++*hi)
		;
}

int trace_main(int argc, char **argv)
{
	struct trace_options o;
	struct trace_file_header h;
	struct lkvm_trace_event *ev;
	struct summary sm;
	uint64_t n, lo, hi;
	int rc;

	rc = trace_parse(&o, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (trace_file_read(o.file, &h, &ev, &n)) {
		diag_print();
		return EXIT_ERROR;
	}
	memset(&sm, 0, sizeof(sm));
	sm.h = &h;
	sm.plotting = o.plot != NULL;
	printable(sm.model, h.model, sizeof(sm.model));
	printable(sm.policy, h.policy, sizeof(sm.policy));
	printable(sm.layout, h.layout, sizeof(sm.layout));
	printable(sm.guest_note, h.guest_note, sizeof(sm.guest_note));
	sm.t0 = n ? ev[0].tsc : 0;
	sm.span_ms = n ? event_ms(&sm, ev[n - 1].tsc) : 0;
	sm.from_ms = o.from_ms;
	sm.to_ms = o.to_ms >= 0 ? o.to_ms : sm.span_ms > o.from_ms ? sm.span_ms : o.from_ms + 1;
	window_range(&sm, ev, n, &lo, &hi);
	sm.window_events = hi - lo;
	check_counters(&sm, ev, n);
	summarise(&sm, ev, lo, hi);
	free(ev);
	rc = 0;
	if (summary_oom(&sm)) {
		diag_fail("%s: out of memory for the summary of %llu events", o.file, (unsigned long long)n);
		rc = EXIT_ERROR;
	} else {
		(o.json ? print_json : print_text)(&sm, &o);
		fflush(stdout);
		if (o.plot && !sm.window_events)
			fprintf(stderr, "lguest-kvm trace: --plot %s: no events in the window, so no plot was drawn\n", o.plot);
		else if (o.plot && gnuplot_draw(o.plot, PLOT_WIDTH, PLOT_HEIGHT, trace_plot_data, trace_plot_script, &sm))
			rc = EXIT_ERROR;
	}
	if (rc)
		diag_print();
	summary_free(&sm);
	return rc;
}
