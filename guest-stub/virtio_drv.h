/*
 * virtio_drv.h -- the guest's virtio-mmio driver and split virtqueue.
 *
 * A device is found from a virtio_mmio.device= word; virtio_drv_probe() does
 * the status dance and feature negotiation, gvq_setup() allocates and
 * announces a queue.  The queue keeps its own copies of what it must not
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

/* What the driver remembers about descriptor i, where the device cannot
 * reach it.  `next` is meaningful for every descriptor; the rest only for
 * the head of a chain in flight (chain_len != 0). */
struct gvq_desc_extra {
	void *token;                /* head: the caller's cookie */
	struct vring_desc *itable;  /* head: indirect table to release, or 0 */
	uint16_t next;              /* next in our chain, or in the free list */
	uint16_t chain_len;         /* head: ring descriptors it holds; 0 = not in flight */
	uint8_t itable_entries;     /* head: that table's size class */
};

struct gvq {
	struct virtio_dev *dev;
	uint16_t index, num;
	struct vring vr;
	uint16_t free_head, num_free;   /* free list through extra[].next */
	uint16_t avail_shadow;      /* next avail idx (published at kick) */
	uint16_t avail_published;
	uint16_t last_used;
	bool event_idx;
	bool interrupts_off;
	struct notify_policy policy;
	struct gvq_desc_extra *extra; /* [num], private: never shown to the device */
	/* counters reported to the launcher */
	uint64_t kicks, notifies, suppressed, forced, ring_full, full_reads_zero;
	uint64_t bufs_direct, bufs_indirect, descs_used;
};

/* Reset, ACKNOWLEDGE, DRIVER, negotiate `wanted` & offered, FEATURES_OK and
 * read it back -- one status bit per write, in the spec's order, which the
 * launcher enforces.  0 on success; on a refusal FAILED is set. */
int virtio_drv_probe(struct virtio_dev *dev, uint64_t base, unsigned irq, uint32_t want_id, uint64_t wanted);
void virtio_drv_ready(struct virtio_dev *dev);
/* Give up on the device (spec 3.1.1: set FAILED when a step goes wrong). */
void virtio_drv_fail(struct virtio_dev *dev);
bool virtio_drv_needs_reset(const struct virtio_dev *dev);
void virtio_drv_ack_interrupt(const struct virtio_dev *dev);

int gvq_setup(struct gvq *q, struct virtio_dev *dev, uint16_t index, uint16_t num);

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
/* Interrupts for this queue: off (NO_INTERRUPT / stale used_event) or on;
 * enabling returns false if buffers were used meanwhile (caller re-polls). */
void gvq_disable_interrupts(struct gvq *q);
bool gvq_enable_interrupts(struct gvq *q);
uint16_t gvq_outstanding(const struct gvq *q);

#endif
