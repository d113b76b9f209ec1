/*
 * notify_policy.h -- when does the guest notify the host?  The policies of
 * the experiment as pure functions: no memory-mapped rings, no I/O, just the
 * numbers a kick sees.  Compiled into the guest stub and into the host's unit
 * tests, so the algorithm that is measured is the algorithm that is tested.
 *
 *   always      notify whenever the host has not set NO_NOTIFY (2008 before
 *               the patch); a full ring still forces a notify
 *   static:N    the seed's crossing rule with a fixed threshold N
 *   dynamic     the seed, step for step: threshold starts at ring/2, moves
 *               up past peaks, decays 1/8 toward smaller peaks, -1 when a
 *               full ring forced a notify under NO_NOTIFY.  Outstanding is
 *               reduced modulo the ring size as in the seed, so a ring with
 *               every slot outstanding reads 0 (counted).
 *   dynamic-exact  the same with the true outstanding count
 *   event-idx   VIRTIO_RING_F_EVENT_IDX: vring_need_event() on avail_event
 *               (split ring only)
 *   event-desc  the packed ring's event-idx: the device names one descriptor
 *               (off_wrap, with VRING_PACKED_EVENT_FLAG_DESC) and the driver
 *               notifies when a kick makes that one available
 *               (notify_packed_need_event; packed ring only)
 *
 * The same policies decide for both ring layouts.  A packed ring has no
 * indices, so its driver counts buffers itself (kick_view's old/new/used
 * keep their split meaning) and reads "the host does not want to know" from
 * the device's event suppression flags (== DISABLE) instead of NO_NOTIFY.
 *
 * Also the second seed's indirect-descriptor rule (indirect_use).
 */
#ifndef NOTIFY_POLICY_H
#define NOTIFY_POLICY_H

#include <stdbool.h>
#include <stdint.h>

enum notify_kind {
	NOTIFY_ALWAYS,
	NOTIFY_STATIC,
	NOTIFY_DYNAMIC,
	NOTIFY_DYNAMIC_EXACT,
	NOTIFY_EVENT_IDX,
	NOTIFY_EVENT_DESC,
};

struct notify_policy {
	enum notify_kind kind;
	uint16_t ring;              /* ring size (descriptors) */
	uint32_t threshold;
	uint32_t last_outstanding;
};

/* What one kick sees, read by the caller from the rings.  The first three
 * count buffers (free-running, mod 2^16) on either layout: a split ring's
 * avail and used indices, or what a packed driver counts for itself. */
struct kick_view {
	uint16_t old_idx;           /* avail idx before publishing */
	uint16_t new_idx;           /* avail idx after publishing */
	uint16_t used_idx;          /* used idx as last read */
	bool host_no_notify;        /* split: used->flags & VRING_USED_F_NO_NOTIFY;
				     * packed: device event flags == DISABLE */
	uint16_t avail_event;       /* split event-idx only */
	/* Packed ring only.  Positions are written the way off_wrap is:
	 * descriptor offset | ring wrap counter << VRING_PACKED_EVENT_F_WRAP_CTR. */
	bool packed;                /* this view is of a packed ring */
	bool host_event_desc;       /* device event flags == VRING_PACKED_EVENT_FLAG_DESC */
	uint16_t event_off_wrap;    /* the device's event off_wrap (event-desc) */
	uint16_t old_pos;           /* driver's next avail position before publishing */
	uint16_t new_pos;           /* ... and after */
};

/* Parses "always", "static:N", "dynamic", "dynamic-exact", "event-idx",
 * "event-desc".  Returns false on anything else (N must be 0..ring).
 * Which layout a policy needs is the caller's to check (net_drv_init). */
bool notify_policy_parse(struct notify_policy *p, const char *s, uint32_t len, uint16_t ring);
void notify_policy_init(struct notify_policy *p, enum notify_kind kind, uint16_t ring, uint32_t threshold);

/* Buffers the host has not consumed before this kick's publication, as the
 * policy counts them (the seed: modulo the ring size). */
uint32_t notify_policy_outstanding(const struct notify_policy *p, uint16_t avail_idx, uint16_t used_idx);
/* event-desc's rule, pure: a kick moved the driver's next avail position
 * from old_pos to new_pos (both offset | wrap << 15, at most `ring`
 * descriptors apart); the device asked, in off_wrap, to be notified when
 * the descriptor at that offset in that wrap is made available.  True iff
 * it was one of those just published.  An offset outside the ring (a
 * device that cannot mean it) gets a notify: a spare notify costs an exit,
 * a missing one can stall the device. */
bool notify_packed_need_event(uint16_t off_wrap, uint16_t old_pos, uint16_t new_pos, uint16_t ring);
/* The kick decision; updates the dynamic threshold.  event-idx on a packed
 * view, or event-desc on a split one, cannot use their marks and decide as
 * `always` does. */
bool notify_policy_kick(struct notify_policy *p, const struct kick_view *v);
/* An add found the ring full: the caller notifies regardless; a dynamic
 * threshold learns that it should have notified earlier. */
void notify_policy_ring_full(struct notify_policy *p, bool host_no_notify);

/* Sasha Levin 2011: go indirect only if fewer than `threshold` descriptors
 * are free (threshold = max(16, ring/8) by default). */
enum indirect_kind { INDIRECT_NEVER, INDIRECT_ALWAYS, INDIRECT_THRESHOLD };
uint32_t indirect_default_threshold(uint16_t ring);
bool indirect_use(enum indirect_kind kind, uint32_t threshold, unsigned segments, uint32_t num_free);

#endif
