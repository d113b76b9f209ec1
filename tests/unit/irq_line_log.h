/*
 * irq_line_log.h -- the devices' interrupt lines as a test sees them: a
 * device_host.set_irq_line that writes down every call.
 *
 * The transport holds a line high while InterruptStatus is not 0 (virtio
 * 1.2, 4.2.3.4) and tells its host only of changes (devices/virtio_mmio.c).
 * So a test can count rises -- the interrupts a guest that routes the line
 * edge-triggered would take --, read the level and hold it against
 * InterruptStatus, and catch a call that repeats the level the line already
 * had: on a real IOAPIC that would be a lost fall or a rise that makes no
 * edge.  `trace` keeps the calls in order, '+' a rise and '-' a fall, for
 * the tests that assert an exact sequence.
 *
 * Header-only (static functions), shared by the unit tests and the device
 * fuzzer.
 */
#ifndef IRQ_LINE_LOG_H
#define IRQ_LINE_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "device_host.h"

#define IRQ_LINE_LOG_GSIS  16u
#define IRQ_LINE_LOG_TRACE 64u

struct irq_line_log {
	bool level[IRQ_LINE_LOG_GSIS];
	uint64_t rises[IRQ_LINE_LOG_GSIS], falls[IRQ_LINE_LOG_GSIS];
	uint64_t rises_taken[IRQ_LINE_LOG_GSIS];  /* irq_line_log_take_rises */
	uint64_t repeats;        /* calls with the level the line already had */
	uint64_t bad_gsi;        /* calls for a line no device has */
	char trace[IRQ_LINE_LOG_TRACE + 1];   /* the first calls since the last clear */
	unsigned trace_len;
};

static inline void irq_line_log_set(void *ctx, unsigned gsi, bool level)
{
	struct irq_line_log *log = ctx;

	if (gsi >= IRQ_LINE_LOG_GSIS) {
		log->bad_gsi++;
		return;
	}
	if (log->level[gsi] == level)
		log->repeats++;
	log->level[gsi] = level;
	if (level)
		log->rises[gsi]++;
	else
		log->falls[gsi]++;
	if (log->trace_len < IRQ_LINE_LOG_TRACE)
		log->trace[log->trace_len++] = level ? '+' : '-';
}

/* Every line low, nothing counted: a fresh device's view. */
static inline void irq_line_log_clear(struct irq_line_log *log)
{
	memset(log, 0, sizeof(*log));
}

/* Start a new trace; the lines and their counts stay. */
static inline void irq_line_log_clear_trace(struct irq_line_log *log)
{
	memset(log->trace, 0, sizeof(log->trace));
	log->trace_len = 0;
}

/* Rises of line `gsi` since the last call: what an edge-routed guest would
 * have taken in between. */
static inline uint64_t irq_line_log_take_rises(struct irq_line_log *log, unsigned gsi)
{
	uint64_t n = log->rises[gsi] - log->rises_taken[gsi];

	log->rises_taken[gsi] = log->rises[gsi];
	return n;
}

/* A host that has guest RAM `mem` and whose lines are `log`. */
static inline struct device_host irq_line_log_host(const struct guest_mem *mem, struct irq_line_log *log)
{
	return (struct device_host){ .mem = mem, .set_irq_line = irq_line_log_set, .ctx = log };
}

#endif
