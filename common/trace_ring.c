/*
 * trace_ring.c -- allocate and free the host's timeline ring (trace_ring.h).
 */
#include "trace_ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

int trace_ring_init(struct trace_ring *r, uint32_t capacity)
{
	memset(r, 0, sizeof(*r));
	if (!capacity || (capacity & (capacity - 1)) || capacity > LKVM_TRACE_EVENTS_MAX)
		return diag_fail("trace ring of %u events: must be a power of two up to %u", capacity,
				 LKVM_TRACE_EVENTS_MAX);
	r->ev = calloc(capacity, sizeof(*r->ev));
	if (!r->ev)
		return diag_fail("trace ring of %u events: %s", capacity, strerror(errno));
	r->capacity = capacity;
	return 0;
}

void trace_ring_free(struct trace_ring *r)
{
	free(r->ev);
	memset(r, 0, sizeof(*r));
}
