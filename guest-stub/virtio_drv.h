/*
 * virtio_drv.h -- the guest's virtio-mmio driver and its virtqueues: split
 * (virtio_drv.c) or packed (vring_packed_drv.c), behind one interface.
 *
 * A device is found from a virtio_mmio.device= word; virtio_drv_probe() does
 * the status dance and feature negotiation, gvq_setup() allocates and
 * announces a queue -- packed when VIRTIO_F_RING_PACKED was negotiated,
 * split otherwise.  The queue keeps its own copies of what it must not
 * take back from shared memory (published avail index, chain lengths,
 * tokens, indirect table sizes) and checks what the device writes (used ids
 * against outstanding heads).
 *
 * The descriptor table is shared: the device reads it, and a hostile or
 * buggy one can write it too.  So, as Linux does with its desc_extra array,
 * the driver links its descriptors -- the free list, and the chains it has
 * handed out -- through private per-descriptor state (struct
 * gvq_desc_extra), and only copies a link into the shared desc[].next when
 * it hands the chain to the device.  Freeing a chain walks the private
 * links, never the shared ones, so whatever the device scribbles on
 * desc[].next, the descriptors that come back are exactly those that went
 * out.  The free indirect tables are likewise kept on a private stack, not
 * linked through the tables' own (device-visible) bytes.
 *
 * A packed ring has no next links and no indices: a chain is consecutive
 * ring slots, and a buffer is named by a buffer ID the driver picks.  There
 * the same private array is indexed by buffer ID (its free list is the free
 * IDs), and the driver keeps its own counts of buffers made available and
 * reclaimed (avail_shadow, avail_published, last_used), so that the policies
 * and gvq_outstanding() see the numbers a split ring's indices would give.
 */
#ifndef VIRTIO_DRV_H
#define VIRTIO_DRV_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>

#include "notify_policy.h"

struct virtio_dev {
	uint64_t base;
	unsigned irq;
	uint32_t device_id;
	uint64_t features;          /* negotiated */
};

struct gvq_seg {
	const void *addr;
	uint32_t len;
	bool device_writes;
};

/* What the driver remembers about descriptor i (split) or buffer ID i
 * (packed), where the device cannot reach it.  `next` is meaningful for
 * every entry; the rest only for a buffer in flight (chain_len != 0). */
struct gvq_desc_extra {
	void *token;                /* head: the caller's cookie */
	void *itable;               /* head: indirect table to release, or 0 (16-byte
				     * entries: struct vring_desc or vring_packed_desc) */
	uint16_t next;              /* split: next in our chain, or in the free list;
				     * packed: next free buffer ID */
	uint16_t chain_len;         /* ring descriptors it holds; 0 = not in flight */
	uint8_t itable_entries;     /* head: that table's size class */
};

/* Packed: a buffer added but not yet published.  Its head's flags wait
 * here, so that gvq_kick is where buffers become visible on both layouts. */
struct gvq_pending {
	uint16_t slot;              /* ring slot of the head descriptor */
	uint16_t flags;             /* the head's flags, to be written last */
	uint16_t id;                /* its buffer ID */
	uint16_t chain_len;         /* ring slots it holds */
};

/* Packed ring state (virtio 1.2, 2.8).  Positions are slots, each with the
 * ring wrap counter of the lap it is in; both counters start at 1. */
struct gvq_packed {
	struct vring_packed_desc *desc;          /* [num]: the descriptor ring */
	struct vring_packed_desc_event *driver;  /* driver area: ours, for interrupts */
	struct vring_packed_desc_event *device;  /* device area: the device's, for notifies */
	struct gvq_pending *pending;             /* [num], private, by avail_shadow % num */
	uint16_t next_avail;        /* slot the next added descriptor goes to */
	uint16_t next_used;         /* slot the device writes its next used descriptor to */
	uint16_t published_pos;     /* next avail position | wrap << 15 at the last kick */
	bool avail_wrap;            /* driver ring wrap counter at next_avail */
	bool used_wrap;             /* the device's counter at next_used, as we follow it */
};

/* What building one indirect table costs on top of taking it off its free
 * list (lkvm.indirect_cost_ns, lkvm.indirect_cold_lines): the price of the
 * 2011 driver's kmalloc, which this stub's pool pop does not pay.  All zero
 * (the default): tables are free, as before.  The queue's own setting, set
 * by gvq_set_itable_cost; neither the policies nor the workloads see it. */
struct gvq_itable_cost {
	uint64_t ticks;             /* TSC ticks of work per table, spun on rdtsc */
	uint32_t cold_lines;        /* then this many cache lines of `cold`, each load waiting for the last */
	uint8_t *cold;              /* [cold_bytes], private; 0 without cold lines */
	uint64_t cold_bytes;        /* a power of two, far larger than any cache */
	uint64_t cold_line;         /* where the walk goes on (a line index) */
	uint64_t sink;              /* what the loads read (always 0) */
};

struct gvq {
	struct virtio_dev *dev;
	uint16_t index, num;
	bool packed;                /* VIRTIO_F_RING_PACKED: pk below, vr unused */
	struct vring vr;            /* split */
	struct gvq_packed pk;       /* packed */
	/* free list through extra[].next (packed: of buffer IDs); num_free
	 * counts free descriptors (packed: ring slots) on both layouts */
	uint16_t free_head, num_free;
	uint16_t avail_shadow;      /* next avail idx (published at kick); packed: buffers added */
	uint16_t avail_published;   /* packed: buffers published */
	uint16_t last_used;         /* packed: buffers reclaimed */
	bool event_idx;
	bool interrupts_off;
	bool traced;                /* its kicks go on the timeline (trace.h): the network card's, when tracing */
	struct notify_policy policy;
	struct gvq_desc_extra *extra; /* [num], private: never shown to the device */
	/* counters reported to the launcher */
	uint64_t kicks, notifies, suppressed, forced, ring_full, full_reads_zero;
	uint64_t bufs_direct, bufs_indirect, descs_used;
	/* indirect tables built (gvq_itable_alloc) and the TSC ticks that took:
	 * the pool pop, the priced work and the cold lines, two rdtsc apart */
	uint64_t itables_built, itable_ticks;
	struct gvq_itable_cost icost;
};

/* ns of work in TSC ticks at tsc_khz, as --pace-ns is converted: ns *
 * tsc_khz / 10^6, rounded down (0 when either is 0; no overflow for any
 * 32-bit pair). */
static inline uint64_t gvq_ns_to_ticks(uint32_t ns, uint32_t tsc_khz)
{
	return (uint64_t)ns * tsc_khz / 1000000u;
}

/* Reset, ACKNOWLEDGE, DRIVER, negotiate `wanted` & offered, FEATURES_OK and
 * read it back -- one status bit per write, in the spec's order, which the
 * launcher enforces.  0 on success; on a refusal FAILED is set. */
int virtio_drv_probe(struct virtio_dev *dev, uint64_t base, unsigned irq, uint32_t want_id, uint64_t wanted);
void virtio_drv_ready(struct virtio_dev *dev);
/* Give up on the device (spec 3.1.1: set FAILED when a step goes wrong). */
void virtio_drv_fail(struct virtio_dev *dev);
bool virtio_drv_needs_reset(const struct virtio_dev *dev);
void virtio_drv_ack_interrupt(const struct virtio_dev *dev);

/* Allocate and announce queue `index`: packed if dev->features has
 * VIRTIO_F_RING_PACKED, split otherwise. */
int gvq_setup(struct gvq *q, struct virtio_dev *dev, uint16_t index, uint16_t num);

/* The cold walk's next line of `lines` (a power of two) after `line`: an
 * LCG, full period mod 2^k (the multiplier is 1 mod 4, the increment odd),
 * so it visits every line once before any again, with no stride for a
 * prefetcher to follow.  `v`, the value just loaded (always 0), makes each
 * load wait for the one before, as a freelist pointer does. */
static inline uint64_t gvq_cold_next(uint64_t line, uint64_t v, uint64_t lines)
{
	return (line * 1664525u + 1013904223u + v) & (lines - 1);
}

/* Price every indirect table this queue builds from now on: `ticks` of
 * spinning, then `cold_lines` dependent loads from a private buffer of
 * `cold_bytes` (a power of two; allocated here when cold_lines is not 0),
 * visited in a full-period pseudo-random order of its lines so that no
 * cache or prefetcher holds the next one.  After gvq_setup, which clears it. */
void gvq_set_itable_cost(struct gvq *q, uint64_t ticks, uint32_t cold_lines, uint64_t cold_bytes);

/* Add one buffer of `n` segments, as direct descriptors or through an
 * indirect table.  Returns false if the ring lacks room (nothing added). */
bool gvq_add(struct gvq *q, const struct gvq_seg *seg, unsigned n, void *token, bool indirect);
/* Publish what was added and notify if the policy says so. */
void gvq_kick(struct gvq *q);
/* Notify regardless (the ring is full); tells the policy. */
void gvq_notify_full(struct gvq *q);
/* Next completed buffer's token, or 0. */
void *gvq_get_used(struct gvq *q, uint32_t *len);
bool gvq_has_used(const struct gvq *q);
/* Interrupts for this queue: off (NO_INTERRUPT / stale used_event; packed:
 * driver event flags DISABLE) or on (packed: ENABLE, or DESC at the next
 * used position with EVENT_IDX); enabling returns false if buffers were
 * used meanwhile (caller re-polls). */
void gvq_disable_interrupts(struct gvq *q);
bool gvq_enable_interrupts(struct gvq *q);
/* Buffers published and not yet used by the device (not: not yet reclaimed). */
uint16_t gvq_outstanding(const struct gvq *q);

#endif
