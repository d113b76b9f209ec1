/*
 * vq_layout.h -- between the layout-independent virtqueue (virtqueue.c) and
 * one ring layout (vring_split.c, vring_packed.c).  Devices never include
 * this: they see only virtqueue.h.
 *
 * The split of the work: virtqueue.c owns what any layout needs -- the
 * public vq_* API and its ready/broken guards, the two full barriers of the
 * notify protocol, the checks on one buffer (inside guest RAM, readable
 * before writable, the chain caps) and the broken state with its violation
 * and error line.  A layout owns where its areas are and what they hold: it
 * validates and resolves them at enable, reads the driver's side (avail
 * index and entries, descriptors, indirect tables, used_event or
 * NO_INTERRUPT; packed: the AVAIL/USED bits, buffer IDs, the driver event
 * structure) and writes the device's side (used entries and index, NO_NOTIFY
 * or avail_event; packed: used descriptors, the device event structure).  It
 * hands every buffer of a chain to vq_chain_add and reports every rule it
 * enforces itself through vq_fail.
 */
#ifndef VQ_LAYOUT_H
#define VQ_LAYOUT_H

#include "race_hooks.h"
#include "virtqueue.h"

/*
 * One ring layout.  virtqueue.c calls these only on a queue the layout was
 * chosen for (vq->layout), and has already done the guards noted.
 */
struct vq_layout {
	const char *name;   /* "split", "packed" */
	/* Validate the driver's size and area addresses and resolve the areas
	 * through gmem_ptr.  0, or -1 through vq_fail.  The split indices are
	 * zeroed by the caller; a layout with state of its own sets it here. */
	int (*enable)(struct vq *vq);
	/* Ready and not broken: is there a chain we have not taken? */
	bool (*has_avail)(const struct vq *vq);
	/* Ready and not broken: take the next chain, walking it with
	 * vq_chain_start and vq_chain_add.  1, 0 (none) or -1 (vq_fail). */
	int (*pop)(struct vq *vq, struct vq_chain *c);
	void (*unpop)(struct vq *vq);
	/* Write one used element, then publish it (release).  `head` is what
	 * pop left in vq_chain.head. */
	void (*push)(struct vq *vq, uint16_t head, uint32_t len);
	/* Ready: the device's "do not notify me" and "notify me" marks.  The
	 * full fence and re-check after the latter are virtqueue.c's. */
	void (*suppress_notify)(struct vq *vq);
	void (*enable_notify)(struct vq *vq);
	/* After virtqueue.c's full fence: read the driver's wish about
	 * interrupts, remember where the used side is now (signalled_used,
	 * or the packed position) and decide. */
	bool (*should_interrupt)(struct vq *vq);
};

extern const struct vq_layout vq_layout_split;
extern const struct vq_layout vq_layout_packed;

/* Break the queue: record the rule, the line "<name> queue: <fmt...>" in
 * vq->error, and set vq->broken.  Returns -1 for `return vq_fail(...)`. */
int vq_fail(struct vq *vq, enum vq_violation v, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The indirect table an INDIRECT descriptor {addr, len} names, checked by
 * the rules both layouts share (length a non-zero multiple of 16, at most
 * VQ_MAX_CHAIN entries, inside RAM), with c->indirect set; NULL through
 * vq_fail.  The entries' own rules are the layout's. */
const void *vq_indirect_table(struct vq *vq, struct vq_chain *c, uint64_t addr, uint32_t len, unsigned *entries);

/* Begin a chain at `head` (a layout calls it once the head is in range;
 * packed: the slot of its first descriptor, replaced by the buffer ID once
 * the chain is walked). */
void vq_chain_start(struct vq_chain *c, uint16_t head);
/* Append one buffer after checking it against RAM, order and the caps.
 * 0, or -1 through vq_fail. */
int vq_chain_add(struct vq *vq, struct vq_chain *c, uint64_t addr, uint32_t len, bool device_writes);

#endif
