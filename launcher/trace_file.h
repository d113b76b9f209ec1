/*
 * trace_file.h -- the file `run --trace FILE` writes and `lguest-kvm trace
 * FILE` reads (docs/trace.md).
 *
 * One run, both sides of the ring, on one clock: a fixed header, then every
 * event the guest and the host recorded, merged and sorted by their stamps,
 * which are all host TSC ticks (the guest's were moved onto the host's clock
 * by the offset the header names -- 0 when the two share the TSC, as they do
 * here).  The events are struct lkvm_trace_event, the same 32 bytes the
 * guest writes into its RAM (lguest_kvm_abi.h); which side recorded one
 * follows from its type.  Everything is little-endian, as x86 writes it.
 *
 * The header also carries the run's own counters, so that a reader can check
 * the timeline against the stats block without the run's output.
 */
#ifndef TRACE_FILE_H
#define TRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lguest_kvm_abi.h"

#define TRACE_FILE_MAGIC   "LKVMTRC1"
#define TRACE_FILE_VERSION 1u

/* How the guest's stamps were put on the host's clock (docs/trace.md). */
enum trace_clock {
	TRACE_CLOCK_SHARED = 1,     /* host's stamp of the sync inside the guest's window: offset 0 */
	TRACE_CLOCK_CORRECTED = 2,  /* outside it: the guest's stamps moved by guest_tsc_offset */
	TRACE_CLOCK_UNKNOWN = 3,    /* no sync (no guest buffer): guest events, if any, unmoved */
};

struct trace_file_header {
	char magic[8];              /* TRACE_FILE_MAGIC, no NUL */
	uint32_t version;           /* TRACE_FILE_VERSION */
	uint32_t header_size;       /* sizeof(struct trace_file_header) */
	uint32_t tsc_khz;           /* the TSC's rate: ticks -> time */
	uint32_t clock;             /* enum trace_clock */
	int64_t guest_tsc_offset;   /* guest TSC - host TSC, already taken off the guest's stamps */
	uint64_t sync_window;       /* ticks between the guest's two sync stamps (the check's precision) */
	uint64_t sync_host;         /* host TSC when it took the sync write (0: none) */
	uint64_t events;            /* events that follow the header */
	uint64_t guest_events;      /* of those, the guest's */
	uint64_t guest_lost;        /* the guest's ring wrapped over this many */
	uint64_t guest_invalid;     /* guest events refused (unknown type), not in the file */
	uint64_t host_lost;         /* the host's ring wrapped over this many */
	/* The run's own counters (its stats block), for checking the timeline. */
	uint64_t stat_guest_notifies;   /* guest_tx_notifies: the guest's count */
	uint64_t stat_host_notifies;    /* tx_queue_notifies (threaded: kicks, merged into wakeups here) */
	uint64_t stat_notify_wakeups;   /* tx_notify_wakeups: one LKVM_TR_NOTIFY each */
	uint64_t stat_timeouts;         /* tx_timer_timeouts: one LKVM_TR_TIMER_FIRE each */
	char model[16];             /* lguest, threaded, "lguest, no VM", "threaded, no VM" */
	char policy[32];
	char layout[8];             /* split, packed */
	char guest_note[64];        /* why there are no guest events, or "" */
};

/* Write the header and `n` events (already sorted, host clock) to `path`.
 * 0, or -1 with diag set. */
int trace_file_write(const char *path, const struct trace_file_header *h, const struct lkvm_trace_event *ev,
		     uint64_t n);

/* The same into `f`, already open for writing (the run opens it while it
 * may still create files anywhere), which it closes; `path` names it in
 * errors. */
int trace_file_fwrite(FILE *f, const char *path, const struct trace_file_header *h, const struct lkvm_trace_event *ev,
		      uint64_t n);

/* Read a trace file whole: its header into *h and its events into a new
 * array (*ev, *n; the caller frees it).  Everything is checked: magic,
 * version, sizes, the event count against the file's length, that every
 * event's type is known and the stamps do not go backwards.  0, or -1
 * with diag set naming what is wrong. */
int trace_file_read(const char *path, struct trace_file_header *h, struct lkvm_trace_event **ev, uint64_t *n);

/* Which side records events of `type`: 'g' guest, 'h' host, 0 none. */
static inline char trace_event_side(uint16_t type)
{
	if (type >= LKVM_TR_KICK && type <= LKVM_TR_GUEST_LAST)
		return 'g';
	if (type >= LKVM_TR_NOTIFY && type <= LKVM_TR_HOST_LAST)
		return 'h';
	return 0;
}

/* A name for each type, for the summary and the tests ("?" if unknown). */
const char *trace_event_name(uint16_t type);

#endif
