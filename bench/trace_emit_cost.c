/*
 * trace_emit_cost.c -- what recording one timeline event costs (run
 * --trace, docs/trace.md), on each side, away from any run's noise.
 *
 * A run's seconds move by more than the whole trace costs (the thread
 * model's speed comes in phases), so bench/trace-cost can show that a
 * traced run's counters stay within the untraced runs' spread, but not
 * the price of an event.  This times the two recorders themselves: the
 * guest's gtrace_emit (guest-stub/trace.h, compiled as the thread model
 * compiles it, with launcher/hosted_guest.h in place of the stub's io.h)
 * and the host's trace_emit (common/trace_ring.h, one atomic add per
 * event), each writing ROUNDS x EVENTS events into a ring of RING events,
 * as a run's ring is written; and, for scale, the same loop with tracing
 * off (a NULL ring: the branch every untraced run pays).
 *
 * Prints ns per event, median [min-max] over the rounds.  The loop's own
 * work (a counter, the arguments) is in every number, so the "off" row is
 * the floor the other two are read against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "stats.h"
#include "trace.h"
#include "trace_ring.h"

#undef printf   /* hosted_guest.h's, for the guest's code: this is a host program */

#define RING   (1u << 20)
#define EVENTS (1u << 24)
#define ROUNDS 9

struct lkvm_trace_buf *gtrace_buf;
volatile uint64_t irq_seq, timer_seq, irqs_at_hlt;   /* hosted_guest.h's, unused here */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void report(const char *what, double *ns)
{
	qsort(ns, ROUNDS, sizeof(*ns), stats_cmp_double);
	printf("  %-44s %6.2f ns [%.2f-%.2f]\n", what, ns[ROUNDS / 2], ns[0], ns[ROUNDS - 1]);
}

int main(void)
{
	struct trace_ring ring, *off = NULL;
	double guest[ROUNDS], host[ROUNDS], none[ROUNDS];

	gtrace_buf = calloc(1, sizeof(*gtrace_buf) + RING * sizeof(struct lkvm_trace_event));
	if (!gtrace_buf || trace_ring_init(&ring, RING) < 0) {
		fprintf(stderr, "bench-trace-emit: out of memory\n");
		return 1;
	}
	gtrace_buf->capacity = RING;
	/* The host's ring pointer through a volatile, as a device reads
	 * net->trace: the compiler must not drop the NULL test. */
	struct trace_ring *volatile host_ring = &ring, *volatile no_ring = off;

	for (unsigned r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();

		for (uint32_t i = 0; i < EVENTS; i++)
			gtrace_emit(LKVM_TR_KICK, 1, i, i & 127, 64, 1);
		guest[r] = (now_ns() - t0) / EVENTS;
		t0 = now_ns();
		for (uint32_t i = 0; i < EVENTS; i++)
			trace_emit(host_ring, LKVM_TR_DRAIN, 1, i, i & 127, 0);
		host[r] = (now_ns() - t0) / EVENTS;
		t0 = now_ns();
		for (uint32_t i = 0; i < EVENTS; i++)
			trace_emit(no_ring, LKVM_TR_DRAIN, 1, i, i & 127, 0);
		none[r] = (now_ns() - t0) / EVENTS;
	}
	printf("bench-trace-emit: %u events per round into a ring of %u, %u rounds (median [min-max])\n", EVENTS, RING,
	       ROUNDS);
	report("guest: gtrace_emit (rdtsc + 32-byte store)", guest);
	report("host: trace_emit (rdtsc + atomic add + store)", host);
	report("off: trace_emit on a NULL ring (a branch)", none);
	return 0;
}
