/*
 * trace_ring.h -- the host's half of the timeline (`run --trace`).
 *
 * A fixed ring of struct lkvm_trace_event (lguest_kvm_abi.h), the guest's
 * event format, stamped with the host's TSC.  The devices record into it
 * from whichever thread runs them -- the vCPU thread, the device thread, the
 * waker -- so a slot is claimed with one atomic add; the launcher reads the
 * ring once, after every device thread has stopped (launcher/run_trace.c).
 * A ring that wrapped keeps the newest `capacity` events; head says how
 * many came before them.  In common/ because devices record and the
 * launcher reads.  A device without a ring (no --trace) pays one branch.
 */
#ifndef TRACE_RING_H
#define TRACE_RING_H

#include <stdint.h>

#include "lguest_kvm_abi.h"

struct trace_ring {
	struct lkvm_trace_event *ev;   /* [capacity] */
	uint32_t capacity;             /* a power of two */
	uint64_t head;                 /* events ever recorded (atomic) */
};

/* 0, or -1 with diag set (capacity not a power of two, or no memory). */
int trace_ring_init(struct trace_ring *r, uint32_t capacity);
void trace_ring_free(struct trace_ring *r);

/* An event stamped `tsc` (one that began earlier, as a drain does, and is
 * recorded when its outcome is known).  Two threads never share a slot
 * unless the ring wraps while one of them is writing. */
static inline void trace_emit_at(struct trace_ring *r, uint64_t tsc, uint16_t type, uint16_t queue, uint32_t a,
				 uint32_t b, uint32_t c)
{
	uint64_t k;

	if (!r)
		return;
	k = __atomic_fetch_add(&r->head, 1, __ATOMIC_RELAXED);
	r->ev[k & (r->capacity - 1)] = (struct lkvm_trace_event){
		.tsc = tsc, .type = type, .queue = queue, .a = a, .b = b, .c = c,
	};
}

/* An event stamped now.  No ring (no --trace): nothing, not even rdtsc. */
static inline void trace_emit(struct trace_ring *r, uint16_t type, uint16_t queue, uint32_t a, uint32_t b,
			      uint32_t c)
{
	if (r)
		trace_emit_at(r, __builtin_ia32_rdtsc(), type, queue, a, b, c);
}

#endif
