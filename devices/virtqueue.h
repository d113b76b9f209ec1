/*
 * virtqueue.h -- the host side of a split virtqueue.
 *
 * This is the only code that reads guest rings.  A queue is resolved once when
 * the driver enables it (size, alignment and the whole extent of the three
 * areas checked through gmem_ptr), then every chain is validated while it is
 * walked: head and next inside the ring, a hop budget so loops end, no
 * readable descriptor after a writable one, indirect tables by the spec's
 * rules, every buffer inside guest RAM, and the chain's total length within
 * the cap its device set (max_chain_bytes), so one chain is bounded work.  The first violation marks the queue
 * broken and leaves a one-line reason in vq->error; the device then sets
 * DEVICE_NEEDS_RESET.  Ring layouts come from <linux/virtio_ring.h>.
 */
#ifndef VIRTQUEUE_H
#define VIRTQUEUE_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>

#include "guest_mem.h"

#define VQ_MAX_SIZE 1024u
#define VQ_MAX_CHAIN VQ_MAX_SIZE  /* an indirect table holds at most this many */

struct vq_buf {
	uint8_t *host;     /* resolved through gmem_ptr, valid for len bytes */
	uint32_t len;
	bool device_writes;
};

struct vq_chain {
	uint16_t head;
	bool indirect;
	unsigned count;     /* descriptors in the chain (inside the table if indirect) */
	uint64_t out_len, in_len;
	struct vq_buf buf[VQ_MAX_CHAIN];
};

struct vq {
	const struct guest_mem *mem;
	const char *name;           /* "net tx" -- for error lines */
	/* The device's cap on one chain's total length, readable plus writable
	 * bytes (0: none).  Like name, it is the device's: a reset keeps it. */
	uint64_t max_chain_bytes;
	uint16_t num;
	bool ready, broken;
	bool event_idx, indirect_ok;  /* negotiated features */
	uint64_t desc_gpa, avail_gpa, used_gpa;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t last_avail;        /* next avail entry to take */
	uint16_t used_shadow;       /* our copy of used->idx */
	uint16_t signalled_used;    /* used idx at the last interrupt (event idx) */
	char error[200];
};

/* Validate and resolve the rings (QueueReady=1).  -1 and vq->error on failure. */
int vq_enable(struct vq *vq, const struct guest_mem *mem);
void vq_reset(struct vq *vq);

/* 1: a validated chain in *chain; 0: nothing available; -1: the guest broke
 * the ring (vq->broken, vq->error). */
int vq_pop_avail(struct vq *vq, struct vq_chain *chain);
/* Put the last popped chain back (the caller found nothing to fill it with). */
void vq_unpop_avail(struct vq *vq);
/* Return a chain to the guest; publishes used->idx (release). */
void vq_push_used(struct vq *vq, uint16_t head, uint32_t len);

/* Ask the guest not to notify (NO_NOTIFY flag, or a stale avail_event). */
void vq_suppress_notify(struct vq *vq);
/* Ask for notifies again, then re-check: true if buffers slipped in meanwhile. */
bool vq_enable_notify_and_recheck(struct vq *vq);
bool vq_has_avail(const struct vq *vq);
/* Does the driver want an interrupt for what was used since the last one? */
bool vq_should_interrupt(struct vq *vq);

#endif
