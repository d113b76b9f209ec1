/*
 * trace.h -- the guest's half of the timeline (lkvm.trace=N, `run --trace`).
 *
 * The ring buffer lives in the guest's own RAM (struct lkvm_trace_buf,
 * lguest_kvm_abi.h).  gtrace_start allocates it and tells the launcher where
 * it is with one LKVM_PORT_TRACE write, stamped with the TSC on both sides
 * of it -- the launcher stamps the same write with its TSC, which is how the
 * two clocks are checked.  After that, each event is an rdtsc and a 32-byte
 * store: no exit, nothing the launcher sees until it copies the ring out at
 * the end.  Without lkvm.trace every gtrace_emit is one load and a branch.
 *
 * The same file serves the stub and the thread model (hosted_guest.h gives
 * it rdtsc, outl and alloc_pages).
 */
#ifndef GUEST_TRACE_H
#define GUEST_TRACE_H

#include <stdint.h>

#include "io.h"
#include "lguest_kvm_abi.h"

extern struct lkvm_trace_buf *gtrace_buf;   /* 0: not tracing */

/* Allocate a ring of `capacity` events (a power of two, at most
 * LKVM_TRACE_EVENTS_MAX; 0: no trace) and announce it. */
void gtrace_start(uint32_t capacity);

static inline void gtrace_emit(uint16_t type, uint16_t queue, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	struct lkvm_trace_buf *t = gtrace_buf;
	struct lkvm_trace_event *e;
	uint64_t head;

	if (!t)
		return;
	head = t->head;
	e = &t->events[head & (t->capacity - 1)];
	*e = (struct lkvm_trace_event){ .tsc = rdtsc(), .type = type, .queue = queue, .a = a, .b = b, .c = c, .d = d };
	/* The event before the count that covers it (x86 keeps the order; the
	 * compiler must too), so a ring read at any time is consistent. */
	barrier();
	t->head = head + 1;
}

/* A wait for the device (`halt`: in hlt, else spinning): its start, and
 * its end with the interrupts that arrived meanwhile (irq_seq's steps).
 * Returns what gtrace_wait_end needs. */
static inline uint64_t gtrace_wait_start(uint16_t queue, int halt)
{
	gtrace_emit(LKVM_TR_WAIT_START, queue, halt ? 1 : 0, 0, 0, 0);
	return irq_seq;
}

static inline void gtrace_wait_end(uint16_t queue, uint64_t irq_seq_at_start)
{
	uint32_t irqs = (uint32_t)(irq_seq - irq_seq_at_start);

	if (irqs)
		gtrace_emit(LKVM_TR_IRQ_TAKEN, queue, irqs, 0, 0, 0);
	gtrace_emit(LKVM_TR_WAIT_END, queue, irqs, 0, 0, 0);
}

#endif
