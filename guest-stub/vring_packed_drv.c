/*
 * vring_packed_drv.c -- the guest's packed virtqueue (virtio 1.2, 2.8),
 * behind the same gvq_* interface as the split ring in virtio_drv.c.
 *
 * One ring of descriptors, read and written by both sides, plus two small
 * event suppression areas: the driver's (ours: do we want interrupts) and
 * the device's (do they want notifies).  How one buffer flows:
 *
 *   gvq_add      takes a free buffer ID (private list through q->extra) and
 *                writes the buffer's descriptors into consecutive slots from
 *                next_avail -- addr, len, id, and the flags of all but the
 *                head; the head's flags wait in q->pk.pending
 *   gvq_kick     barrier, then writes each pending head's flags: that makes
 *                the buffers available (AVAIL = our wrap counter, USED = its
 *                inverse), and only then; reads the device's event
 *                suppression and lets the policy decide
 *   the device   reads the chains in ring order and writes one used
 *                descriptor per buffer (id, len, AVAIL = USED = its wrap
 *                counter) at its next used slot, in completion order
 *   gvq_get_used reads the used descriptor at next_used, checks the flags and
 *                that the id is a buffer in flight, returns the ID to the
 *                free list and skips next_used over the slots that buffer held
 *
 * Publishing at kick, not at add, keeps the split ring's contract (an add
 * publishes nothing; a kick publishes what was added since the last one),
 * and bounds what one kick publishes by the ring size, which event-desc's
 * two-lap arithmetic needs.
 *
 * What the device writes is not trusted: the id must be below num and in
 * flight, the AVAIL/USED pair at next_used must be "still available" or
 * "used in this lap" (anything else is a device gone wrong), and the number
 * of slots skipped is ours (extra[id].chain_len), not read back.  Every
 * address handed to the device goes through virt_to_phys().
 *
 * Counters: avail_shadow counts buffers added, avail_published buffers
 * published, last_used buffers reclaimed, all free-running mod 2^16, so
 * the policies see the same numbers as on a split ring.  There is no used
 * index to read, so "used" for a kick (and for gvq_outstanding) is counted
 * (pk_device_used): see there.
 */
#include "vring_packed_drv.h"

#include <linux/virtio_mmio.h>

#include "io.h"
#include "lguest_kvm_abi.h"
#include "lib.h"
#include "race_hooks.h"

#define PK_F_AVAIL (1u << VRING_PACKED_DESC_F_AVAIL)
#define PK_F_USED (1u << VRING_PACKED_DESC_F_USED)
#define PK_MARKS (PK_F_AVAIL | PK_F_USED)
#define PK_EVENT_FLAGS_MASK 3u     /* desc_event_flags is 2 bits; the rest reserved */

/* What the driver writes to make a descriptor available in a lap whose
 * wrap counter is `wrap`: AVAIL = wrap, USED = !wrap. */
static uint16_t pk_avail_marks(bool wrap)
{
	return wrap ? PK_F_AVAIL : PK_F_USED;
}

/* What the device writes to mark it used in that lap: both = wrap. */
static uint16_t pk_used_marks(bool wrap)
{
	return wrap ? PK_MARKS : 0;
}

/* A slot and its wrap counter as the event areas write them. */
static uint16_t pk_position(uint16_t slot, bool wrap)
{
	return (uint16_t)(slot | (unsigned)wrap << VRING_PACKED_EVENT_F_WRAP_CTR);
}

/* Move a slot `by` (at most num) forward; passing the end flips its wrap
 * counter, as the spec has both sides do. */
static void pk_step(uint16_t *slot, bool *wrap, uint16_t by, uint16_t num)
{
	*slot = (uint16_t)(*slot + by);
	if (*slot >= num) {
		*slot = (uint16_t)(*slot - num);
		*wrap = !*wrap;
	}
}

static uint16_t pk_load16(const void *p)
{
	return *(const volatile uint16_t *)p;
}

static void pk_store16(void *p, uint16_t v)
{
	*(volatile uint16_t *)p = v;
}

void gvq_packed_init(struct gvq *q, uint64_t *desc, uint64_t *driver, uint64_t *device)
{
	size_t ring_bytes = (size_t)q->num * sizeof(struct vring_packed_desc);
	uint8_t *mem = alloc_pages(ring_bytes + 2 * sizeof(struct vring_packed_desc_event));

	/* One allocation: the ring at a page (alignment 16), then the two
	 * 4-byte event areas (alignment 4), zeroed like the ring: flags 0 is
	 * ENABLE, and no descriptor is available. */
	q->pk.desc = (struct vring_packed_desc *)mem;
	q->pk.driver = (struct vring_packed_desc_event *)(mem + ring_bytes);
	q->pk.device = q->pk.driver + 1;
	q->pk.pending = alloc_pages(q->num * sizeof(*q->pk.pending));
	q->pk.avail_wrap = q->pk.used_wrap = true;   /* both counters start at 1 */
	q->pk.published_pos = pk_position(0, true);
	*desc = virt_to_phys(q->pk.desc);
	*driver = virt_to_phys(q->pk.driver);
	*device = virt_to_phys(q->pk.device);
}

/* ---- adding and publishing ---------------------------------------------- */

/* The n segments as consecutive descriptors from next_avail, each with its
 * own lap's marks (a chain may straddle the end of the ring).  Every field
 * but the head's flags is written now; the head's flags are returned, for
 * the kick to write last. */
static uint16_t pk_write_chain(struct gvq *q, const struct gvq_seg *seg, unsigned n, uint16_t id)
{
	uint16_t head_flags = 0;

	for (unsigned k = 0; k < n; k++) {
		struct vring_packed_desc *d = &q->pk.desc[q->pk.next_avail];
		uint16_t flags = pk_avail_marks(q->pk.avail_wrap) | (seg[k].device_writes ? VRING_DESC_F_WRITE : 0) |
				 (k + 1 < n ? VRING_DESC_F_NEXT : 0);

#if LKVM_MUTANT == LKVM_MUT_PACKED_HEAD_FIRST
		/* Mutant: the head made available before the rest of it. */
		if (k == 0) {
			pk_store16(&d->flags, flags);
			RACE_POINT(RACE_G_KICK_PUBLISHED);
		}
#endif
		d->addr = virt_to_phys(seg[k].addr);
		d->len = seg[k].len;
		/* The spec wants the ID in the last descriptor; in every one
		 * costs nothing and whichever the device reads is right. */
		d->id = id;
		if (k == 0)
			head_flags = flags;
		else
			d->flags = flags;   /* unseen until the head is: the device polls heads */
		pk_step(&q->pk.next_avail, &q->pk.avail_wrap, 1, q->num);
	}
	q->extra[id].itable = 0;
	q->bufs_direct++;
	return head_flags;
}

/* One INDIRECT descriptor at next_avail naming a private table of n
 * consecutive entries (WRITE is their only flag, their ID is reserved:
 * 0).  Returns the ring descriptor's flags, for the kick. */
static uint16_t pk_write_indirect(struct gvq *q, const struct gvq_seg *seg, unsigned n, uint16_t id)
{
	struct vring_packed_desc *t = gvq_itable_alloc(q, n);
	struct vring_packed_desc *d = &q->pk.desc[q->pk.next_avail];
	uint16_t flags = pk_avail_marks(q->pk.avail_wrap) | VRING_DESC_F_INDIRECT;

	for (unsigned k = 0; k < n; k++)
		t[k] = (struct vring_packed_desc){ .addr = virt_to_phys(seg[k].addr), .len = seg[k].len, .id = 0,
						   .flags = seg[k].device_writes ? VRING_DESC_F_WRITE : 0 };
	d->addr = virt_to_phys(t);
	d->len = n * sizeof(*t);
	d->id = id;
	pk_step(&q->pk.next_avail, &q->pk.avail_wrap, 1, q->num);
	q->extra[id].itable = t;
	q->extra[id].itable_entries = (uint8_t)n;
	q->bufs_indirect++;
	return flags;
}

bool gvq_packed_add(struct gvq *q, const struct gvq_seg *seg, unsigned n, void *token, bool indirect)
{
	unsigned need = gvq_descs_needed(q, n, &indirect);
	struct gvq_pending *p;
	uint16_t id;

	if (!need)
		return false;
	/* A free ID is certain: every buffer holds at least one slot, so IDs
	 * in use never outnumber slots in use, and `need` slots are free.
	 * Both counts are ours; the device cannot move them. */
	id = q->free_head;
	q->free_head = q->extra[id].next;
	p = &q->pk.pending[q->avail_shadow & (q->num - 1)];
	p->slot = q->pk.next_avail;
	p->id = id;
	p->chain_len = (uint16_t)need;
	p->flags = indirect ? pk_write_indirect(q, seg, n, id) : pk_write_chain(q, seg, n, id);
	q->extra[id].token = token;
	q->num_free -= need;
	q->descs_used += need;
	q->avail_shadow++;
	return true;
}

/* Make every pending buffer available: its ID goes in flight (chain_len,
 * which gvq_get_used checks a used id against), then its head's flags. */
static void pk_publish_pending(struct gvq *q)
{
	for (uint16_t b = q->avail_published; b != q->avail_shadow; b++) {
		const struct gvq_pending *p = &q->pk.pending[b & (q->num - 1)];

		q->extra[p->id].chain_len = p->chain_len;
		RACE_POINT(RACE_G_KICK_PUBLISH);
		pk_store16(&q->pk.desc[p->slot].flags, p->flags);
	}
	q->avail_published = q->avail_shadow;
}

/* ---- what the device has used ------------------------------------------- */

/*
 * Buffers the device has used, as a split ring's used->idx would count
 * them: those we reclaimed (last_used), plus the used descriptors the
 * device has already written from our next-used slot on, peeked at without
 * reclaiming.  That is the seed's "outstanding" = avail - used: buffers
 * made available that the device has not yet finished with -- not "not yet
 * reclaimed by the driver", which would count ring slots the device has
 * already handed back.  The packed ring has no index to read, but the used
 * descriptors the device wrote are contiguous from next_used (it writes
 * them in order), so walking them, a buffer's length at a time, counts
 * what used->idx would have added.  The walk stops at the first descriptor
 * that is not a well-formed used one, and after the published buffers not
 * yet reclaimed: the count never exceeds what the device could honestly
 * have used.  Judging a bad descriptor is gvq_get_used's job.
 */
static uint16_t pk_device_used(const struct gvq *q)
{
	uint16_t in_flight = (uint16_t)(q->avail_published - q->last_used), seen = 0, slot = q->pk.next_used;
	bool wrap = q->pk.used_wrap;

	while (seen < in_flight) {
		const struct vring_packed_desc *d = &q->pk.desc[slot];
		uint16_t id;

		if ((pk_load16(&d->flags) & PK_MARKS) != pk_used_marks(wrap))
			break;
		barrier();   /* the id after the flags that cover it */
		id = pk_load16(&d->id);
		if (id >= q->num || !q->extra[id].chain_len)
			break;
		seen++;
		pk_step(&slot, &wrap, q->extra[id].chain_len, q->num);
	}
	return (uint16_t)(q->last_used + seen);
}

uint16_t gvq_packed_outstanding(const struct gvq *q)
{
	return (uint16_t)(q->avail_published - pk_device_used(q));
}

/* The marks at next_used, or the "still available" marks when no
 * published buffer is out (then the slot is ours, not the device's). */
static uint16_t pk_next_used_marks(const struct gvq *q)
{
	if (q->avail_published == q->last_used)
		return pk_avail_marks(q->pk.used_wrap);
	return pk_load16(&q->pk.desc[q->pk.next_used].flags) & PK_MARKS;
}

/* Anything but "still available" at next_used is the device's doing: a
 * used descriptor, or wrong marks, which gvq_get_used refuses -- so a
 * waiter wakes up for both. */
bool gvq_packed_has_used(const struct gvq *q)
{
	return pk_next_used_marks(q) != pk_avail_marks(q->pk.used_wrap);
}

static __attribute__((noreturn)) void pk_give_up(const struct gvq *q, const char *what, unsigned v)
{
	printf("guest: device returned %s %u on queue %u\n", what, v, q->index);
	guest_exit(LKVM_STATUS_FAILED);
}

/* Buffer `id` is back: its table, its ID and its slots. */
static void *pk_reclaim(struct gvq *q, uint16_t id)
{
	struct gvq_desc_extra *x = &q->extra[id];
	uint16_t n = x->chain_len;

	if (x->itable) {
		/* Our own record of the table and its size: the device can
		 * write desc.addr/len, and has overwritten this slot anyway. */
		gvq_itable_release(x->itable, x->itable_entries);
		x->itable = 0;
	}
	x->chain_len = 0;
	x->next = q->free_head;
	q->free_head = id;
	q->num_free += n;
	/* The device skipped the same n slots after writing this used
	 * descriptor; we skip by our count, not by anything it wrote. */
	pk_step(&q->pk.next_used, &q->pk.used_wrap, n, q->num);
	q->last_used++;
	return x->token;
}

void *gvq_packed_get_used(struct gvq *q, uint32_t *len)
{
	const struct vring_packed_desc *d = &q->pk.desc[q->pk.next_used];
	uint16_t marks = pk_next_used_marks(q), flags, id;
	uint32_t written;
	void *token;

	if (marks == pk_avail_marks(q->pk.used_wrap))
		return 0;
	if (marks != pk_used_marks(q->pk.used_wrap))
		pk_give_up(q, "used flags with the wrong wrap counter at slot", q->pk.next_used);
	RACE_POINT(RACE_G_USED_SEEN);
	barrier();   /* id, len and WRITE after the marks that cover them */
	flags = pk_load16(&d->flags);
	id = pk_load16(&d->id);
	written = *(const volatile uint32_t *)&d->len;
	if (id >= q->num || !q->extra[id].chain_len)
		pk_give_up(q, "bad used id", id);
	token = pk_reclaim(q, id);
	/* A used descriptor without WRITE has written nothing; its len is
	 * reserved and the spec has drivers ignore it (2.8.4). */
	if (len)
		*len = flags & VRING_DESC_F_WRITE ? written : 0;
	return token;
}

/* ---- notifications ------------------------------------------------------ */

/* The device's event suppression into the view, as one 32-bit load so
 * that off_wrap and flags are from the same moment (Linux snapshots them
 * the same way): new flags with a stale offset could skip a notify.  The
 * area is little-endian, off_wrap first. */
static void pk_read_device_event(const struct gvq *q, struct kick_view *v)
{
	uint32_t snap = *(const volatile uint32_t *)q->pk.device;
	uint16_t flags = (uint16_t)(snap >> 16) & PK_EVENT_FLAGS_MASK;

	v->event_off_wrap = (uint16_t)snap;
	v->host_no_notify = flags == VRING_PACKED_EVENT_FLAG_DISABLE;
	v->host_event_desc = flags == VRING_PACKED_EVENT_FLAG_DESC;
}

void gvq_packed_kick(struct gvq *q)
{
	struct kick_view v = { .packed = true };

	q->kicks++;
	v.old_idx = q->avail_published;
	v.new_idx = q->avail_shadow;
	v.used_idx = pk_device_used(q);
	v.old_pos = q->pk.published_pos;
	v.new_pos = pk_position(q->pk.next_avail, q->pk.avail_wrap);
	/* Everything the pending buffers hold but their heads' flags must be
	 * visible before any head's flags (x86 keeps store order; the
	 * compiler must too): then the device never sees half a chain. */
	barrier();
	pk_publish_pending(q);
	q->pk.published_pos = v.new_pos;
	RACE_POINT(RACE_G_KICK_PUBLISHED);
	/* Publish the flags before reading whether the device wants to know. */
	mb();
	RACE_POINT(RACE_G_KICK_READ_WISH);
	pk_read_device_event(q, &v);
	gvq_kick_decide(q, &v);
}

bool gvq_packed_host_no_notify(const struct gvq *q)
{
	return (pk_load16(&q->pk.device->flags) & PK_EVENT_FLAGS_MASK) == VRING_PACKED_EVENT_FLAG_DISABLE;
}

void gvq_packed_disable_interrupts(struct gvq *q)
{
	/* DISABLE works with or without EVENT_IDX: no stale-mark trick needed. */
	q->interrupts_off = true;
	RACE_POINT(RACE_G_IRQ_DISABLE);
	pk_store16(&q->pk.driver->flags, VRING_PACKED_EVENT_FLAG_DISABLE);
}

bool gvq_packed_enable_interrupts(struct gvq *q)
{
	RACE_POINT(RACE_G_IRQ_ENABLE);
	q->interrupts_off = false;
	if (q->event_idx) {
		/* Interrupt when the descriptor at our next used slot is used:
		 * the offset first, then the flag that makes the device read it. */
		pk_store16(&q->pk.driver->off_wrap, pk_position(q->pk.next_used, q->pk.used_wrap));
		RACE_POINT(RACE_G_IRQ_ENABLE_STORED);
		barrier();
		pk_store16(&q->pk.driver->flags, VRING_PACKED_EVENT_FLAG_DESC);
	} else {
		pk_store16(&q->pk.driver->flags, VRING_PACKED_EVENT_FLAG_ENABLE);
	}
	RACE_POINT(RACE_G_IRQ_ENABLE_STORED);
	/* Publish before re-checking, or an interrupt could be skipped for a
	 * buffer used just now. */
	mb();
	RACE_POINT(RACE_G_IRQ_RECHECK);
#if LKVM_MUTANT == LKVM_MUT_IRQ_NO_RECHECK
	return true;    /* mutant: sleep without looking again */
#endif
	return !gvq_packed_has_used(q);
}
