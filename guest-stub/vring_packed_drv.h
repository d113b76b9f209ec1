/*
 * vring_packed_drv.h -- between virtio_drv.c (the transport, the split ring
 * and the public gvq_* functions) and vring_packed_drv.c (the packed ring).
 * Only those two include it; workloads see virtio_drv.h alone.
 *
 * virtio_drv.c owns what both layouts share -- the public entry points,
 * which switch on q->packed, the room check, the indirect table pool and
 * the step from a kick_view to a notify -- and lends them here; the packed
 * ring's own work is in gvq_packed_*.
 */
#ifndef VRING_PACKED_DRV_H
#define VRING_PACKED_DRV_H

#include "virtio_drv.h"

/* The most segments an indirect table holds (larger buffers go direct). */
#define GVQ_ITABLE_MAX 16

/* ---- lent by virtio_drv.c ---- */

/* Ring descriptors a buffer of n segments needs -- 1 if it goes indirect,
 * which *indirect says after the call (it cannot beyond GVQ_ITABLE_MAX) --
 * or 0 if it cannot be added: n is 0 or above the ring size, or fewer are
 * free (counted in ring_full). */
unsigned gvq_descs_needed(struct gvq *q, unsigned n, bool *indirect);
/* A private table of n 16-byte entries (struct vring_desc or struct
 * vring_packed_desc: the same size) for queue q, and its return.  The one
 * place both layouts build a table: it pays q's gvq_itable_cost and counts
 * the table and its ticks (itables_built, itable_ticks). */
void *gvq_itable_alloc(struct gvq *q, unsigned n);
void gvq_itable_release(void *table, unsigned n);
/* After publishing: count a full ring read as 0, ask the policy, notify. */
void gvq_kick_decide(struct gvq *q, const struct kick_view *v);

/* ---- the packed ring (vring_packed_drv.c) ---- */

/* Allocate the descriptor ring, the two event suppression areas and the
 * pending list of q (q->num set) and start both wrap counters at 1; the
 * three addresses for QueueDesc, QueueAvail (the driver area) and
 * QueueUsed (the device area) come back guest-physical. */
void gvq_packed_init(struct gvq *q, uint64_t *desc, uint64_t *driver, uint64_t *device);
bool gvq_packed_add(struct gvq *q, const struct gvq_seg *seg, unsigned n, void *token, bool indirect);
void gvq_packed_kick(struct gvq *q);
/* The device's event flags say DISABLE: the packed NO_NOTIFY. */
bool gvq_packed_host_no_notify(const struct gvq *q);
bool gvq_packed_has_used(const struct gvq *q);
void *gvq_packed_get_used(struct gvq *q, uint32_t *len);
void gvq_packed_disable_interrupts(struct gvq *q);
bool gvq_packed_enable_interrupts(struct gvq *q);
uint16_t gvq_packed_outstanding(const struct gvq *q);

#endif
