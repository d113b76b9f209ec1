/*
 * vring_split.c -- the split ring layout (virtio 1.2, 2.7): resolve its
 * three areas, walk its chains, complete them, and handle its notify and
 * interrupt marks.  The layout-independent half (guards, per-buffer checks,
 * the broken state, the barriers) is virtqueue.c; see vq_layout.h.
 *
 * The three areas, as <linux/virtio_ring.h> lays them out: the descriptor
 * table (desc), the driver's avail ring (flags, idx, ring[num], used_event)
 * and the device's used ring (flags, idx, ring[num], avail_event).  The data
 * flow of one chain: avail->idx (acquire) says how far the driver got ->
 * avail->ring[last_avail] names the head -> desc[head], then desc[next]...,
 * each copied once and checked, or one INDIRECT descriptor naming a table
 * walked the same way -> each buffer goes to vq_chain_add -> the device
 * fills or drains the chain -> used->ring[used_shadow] gets {head, len} and
 * used->idx is stored with release.  avail->idx is loaded again only once
 * the entries the last load published are taken (avail_seen).
 *
 * Every value read from the rings is the guest's and is checked before use;
 * a broken rule ends the walk through vq_fail with its vq_violation.
 */
#include "vq_layout.h"

#include <inttypes.h>

static int split_enable(struct vq *vq)
{
	uint16_t n = vq->num;
	uint64_t avail_len = 4 + 2ull * n + 2;   /* flags, idx, ring, used_event */
	uint64_t used_len = 4 + 8ull * n + 2;    /* flags, idx, ring, avail_event */

	if (n == 0 || n > VQ_MAX_SIZE || (n & (n - 1)))
		return vq_fail(vq, VQV_SIZE, "size %u is not a power of two in [1, %u]", n, VQ_MAX_SIZE);
	if ((vq->desc_gpa & 15) || (vq->avail_gpa & 1) || (vq->used_gpa & 3))
		return vq_fail(vq, VQV_RING_MISALIGNED,
			       "ring areas misaligned (desc 0x%" PRIx64 ", used 0x%" PRIx64 ")", vq->desc_gpa,
			       vq->used_gpa);
	vq->desc = gmem_ptr(vq->mem, vq->desc_gpa, 16ull * n);
	vq->avail = gmem_ptr(vq->mem, vq->avail_gpa, avail_len);
	vq->used = gmem_ptr(vq->mem, vq->used_gpa, used_len);
	if (!vq->desc || !vq->avail || !vq->used)
		return vq_fail(vq, VQV_RING_OUTSIDE_RAM,
			       "ring outside guest RAM (desc 0x%" PRIx64 ", avail 0x%" PRIx64 ")", vq->desc_gpa,
			       vq->avail_gpa);
	return 0;
}

static uint16_t load_avail_idx(const struct vq *vq)
{
	return __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
}

/* The head the driver put at avail entry `i` (unchecked: the guest's). */
static uint16_t avail_entry(const struct vq *vq, uint16_t i)
{
	return __atomic_load_n(&vq->avail->ring[i & (vq->num - 1)], __ATOMIC_RELAXED);
}

static bool split_has_avail(const struct vq *vq)
{
	return load_avail_idx(vq) != vq->last_avail;
}

static struct vring_desc read_desc(const struct vring_desc *table, unsigned i)
{
	const volatile struct vring_desc *v = &table[i];

	/* Each field is loaded exactly once: what we check is what we use,
	 * however the guest rewrites the descriptor meanwhile. */
	return (struct vring_desc){ .addr = v->addr, .len = v->len, .flags = v->flags, .next = v->next };
}

/* One descriptor's buffer into the chain (vq_chain_add's checks). */
static int add_desc(struct vq *vq, struct vq_chain *c, const struct vring_desc *d)
{
	return vq_chain_add(vq, c, d->addr, d->len, d->flags & VRING_DESC_F_WRITE);
}

/* Walk an indirect table: entries in RAM, a non-zero multiple of 16 bytes,
 * no nested INDIRECT, next inside the table, at most one pass over it. */
static int walk_indirect(struct vq *vq, struct vq_chain *c, const struct vring_desc *ind)
{
	unsigned entries, i = 0, hops = 0;
	const struct vring_desc *table = vq_indirect_table(vq, c, ind->addr, ind->len, &entries);

	if (!table)
		return -1;
	for (;;) {
		struct vring_desc d = read_desc(table, i);

		if (d.flags & VRING_DESC_F_INDIRECT)
			return vq_fail(vq, VQV_INDIRECT_NESTED,
				       "nested indirect descriptor in table entry %u (head %u)", i, c->head);
		if (d.flags & ~(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE))
			return vq_fail(vq, VQV_INDIRECT_FLAGS, "unknown flags 0x%x in indirect table entry %u",
				       d.flags, i);
		if (add_desc(vq, c, &d) < 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		if (d.next >= entries)
			return vq_fail(vq, VQV_INDIRECT_NEXT_RANGE,
				       "indirect entry's next %u is outside the %u-entry table", d.next, entries);
		if (++hops >= entries)
			return vq_fail(vq, VQV_INDIRECT_LOOP,
				       "indirect chain loops (more hops than %u entries, head %u)", entries, c->head);
		i = d.next;
	}
}

/*
 * While the device copies the chain just popped, start the fetches the
 * next pops will wait on: the guest wrote those lines on its own CPU, and
 * each is a cache miss that would otherwise come one after the other (avail
 * entry -> descriptor -> buffer).  The next chain's first buffer, through
 * its head descriptor (fetched by the previous pop's hint), and the
 * descriptor of the chain after it.  Hints only: nothing read here is used
 * for anything but an address to prefetch, every index is masked into the
 * table, and a buffer address is prefetched only if gmem_ptr puts it in
 * guest RAM -- pop reads and checks everything again.  Only entries the
 * last avail->idx load published are looked at.
 */
static void prefetch_ahead(const struct vq *vq)
{
	uint16_t mask = vq->num - 1, ahead = (uint16_t)(vq->avail_seen - vq->last_avail);
	const volatile struct vring_desc *d;
	const uint8_t *buf;

	if (!ahead)
		return;
	if (ahead > 1)
		__builtin_prefetch(&vq->desc[avail_entry(vq, (uint16_t)(vq->last_avail + 1)) & mask]);
	d = &vq->desc[avail_entry(vq, vq->last_avail) & mask];
	buf = gmem_ptr(vq->mem, d->addr, 64);
	if (buf)
		__builtin_prefetch(buf);
}

static int split_pop(struct vq *vq, struct vq_chain *c)
{
	uint16_t avail_idx, head, i;
	unsigned hops = 0;

	if (vq->last_avail == vq->avail_seen) {
		avail_idx = load_avail_idx(vq);
		if (avail_idx == vq->last_avail)
			return 0;
		if ((uint16_t)(avail_idx - vq->last_avail) > vq->num)
			return vq_fail(vq, VQV_AVAIL_AHEAD, "avail idx %u is more than a ring ahead of %u",
				       avail_idx, vq->last_avail);
		vq->avail_seen = avail_idx;
	}
	RACE_POINT(RACE_H_AVAIL_SEEN);

	head = avail_entry(vq, vq->last_avail);
	if (head >= vq->num)
		return vq_fail(vq, VQV_HEAD_RANGE, "head index %u >= ring size %u", head, vq->num);
	vq_chain_start(c, head);

	for (i = head;;) {
		struct vring_desc d = read_desc(vq->desc, i);

		if (d.flags & ~(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT))
			return vq_fail(vq, VQV_DESC_FLAGS, "unknown descriptor flags 0x%x (head %u)", d.flags, head);
		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (d.flags & VRING_DESC_F_NEXT)
				return vq_fail(vq, VQV_INDIRECT_WITH_NEXT,
					       "INDIRECT together with NEXT (head %u, desc %u)", head, i);
			if (!vq->indirect_ok)
				return vq_fail(vq, VQV_INDIRECT_NOT_NEGOTIATED,
					       "INDIRECT descriptor but the feature was not negotiated "
					       "(head %u, desc %u)", head, i);
			if (walk_indirect(vq, c, &d) < 0)
				return -1;
			break;
		}
		if (add_desc(vq, c, &d) < 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (d.next >= vq->num)
			return vq_fail(vq, VQV_NEXT_RANGE, "next index %u >= ring size %u", d.next, vq->num);
		if (++hops >= vq->num)
			return vq_fail(vq, VQV_LOOP, "descriptor chain loops (more hops than the ring's %u, head %u)",
				       vq->num, head);
		i = d.next;
	}
	vq->last_avail++;
	prefetch_ahead(vq);
	return 1;
}

static void split_unpop(struct vq *vq)
{
	vq->last_avail--;
}

static void split_push(struct vq *vq, uint16_t head, uint32_t len)
{
	struct vring_used_elem *e = &vq->used->ring[vq->used_shadow & (vq->num - 1)];

	e->id = head;
	e->len = len;
	vq->used_shadow++;
	RACE_POINT(RACE_H_USED_WRITTEN);
	/* The element must be visible before the index that covers it. */
	__atomic_store_n(&vq->used->idx, vq->used_shadow, __ATOMIC_RELEASE);
}

/* avail_event sits just past the used ring (virtio_ring.h, for compatibility). */
static uint16_t *avail_event_ptr(struct vq *vq)
{
	return (uint16_t *)&vq->used->ring[vq->num];
}

/* With EVENT_IDX the flag is ignored; suppression is an avail_event the
 * guest will not cross soon (half a ring-wrap behind us). */
static void split_suppress_notify(struct vq *vq)
{
	RACE_POINT(RACE_H_SUPPRESS);
#if LKVM_MUTANT == LKVM_MUT_NO_AVAIL_EVENT
	if (vq->event_idx)
		return;     /* mutant: avail_event never written */
#endif
	if (vq->event_idx)
		__atomic_store_n(avail_event_ptr(vq), (uint16_t)(vq->last_avail - 0x8000), __ATOMIC_RELAXED);
	else
		__atomic_store_n(&vq->used->flags, VRING_USED_F_NO_NOTIFY, __ATOMIC_RELAXED);
}

static void split_enable_notify(struct vq *vq)
{
	RACE_POINT(RACE_H_NOTIFY_ENABLE);
#if LKVM_MUTANT == LKVM_MUT_NO_AVAIL_EVENT
	if (vq->event_idx)
		return;     /* mutant: avail_event never written */
#endif
	if (vq->event_idx)
		__atomic_store_n(avail_event_ptr(vq), vq->last_avail, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&vq->used->flags, 0, __ATOMIC_RELAXED);
}

/* Read only the field the negotiated features make meaningful, then decide
 * with the pure vq_interrupt_needed. */
static bool split_should_interrupt(struct vq *vq)
{
	uint16_t old = vq->signalled_used, now = vq->used_shadow;
	uint16_t flags = 0, used_event = 0;

	if (vq->event_idx)
		used_event = __atomic_load_n(&vq->avail->ring[vq->num], __ATOMIC_RELAXED);   /* vring_used_event */
	else
		flags = __atomic_load_n(&vq->avail->flags, __ATOMIC_RELAXED);
	vq->signalled_used = now;
	return vq_interrupt_needed(vq->event_idx, flags, used_event, old, now);
}

const struct vq_layout vq_layout_split = {
	.name = "split",
	.enable = split_enable,
	.has_avail = split_has_avail,
	.pop = split_pop,
	.unpop = split_unpop,
	.push = split_push,
	.suppress_notify = split_suppress_notify,
	.enable_notify = split_enable_notify,
	.should_interrupt = split_should_interrupt,
};
