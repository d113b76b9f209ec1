/*
 * trace.c -- set up the guest's timeline ring (trace.h) and hand its
 * address to the launcher.
 */
#include "trace.h"

#include "lib.h"

struct lkvm_trace_buf *gtrace_buf;

void gtrace_start(uint32_t capacity)
{
	struct lkvm_trace_buf *t;

	if (!capacity || capacity > LKVM_TRACE_EVENTS_MAX || (capacity & (capacity - 1)))
		return;
	t = alloc_pages(sizeof(*t) + (uint64_t)capacity * sizeof(t->events[0]));
	t->magic = LKVM_TRACE_BUF_MAGIC;
	t->version = LKVM_TRACE_VERSION;
	t->capacity = capacity;
	/* The clock check: the launcher stamps this write with its TSC; if the
	 * clocks are one, its stamp falls between these two. */
	t->sync_before = rdtsc();
	outl(LKVM_PORT_TRACE, (uint32_t)virt_to_phys(t));
	t->sync_after = rdtsc();
	gtrace_buf = t;
}
