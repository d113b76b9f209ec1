/*
 * virtqueue.c -- resolve, walk and complete split rings, distrusting the guest.
 *
 * Concurrency: the guest writes the avail side while we read it.  Each
 * descriptor is copied once into a local before it is checked and used, so a
 * guest rewriting it under our feet cannot make us use a value we did not
 * check.  Index loads are acquire, used->idx stores are release, and the
 * "ask for notifies, then look again" step has a full barrier between the
 * two, because that is where a lost wakeup would hide.
 */
#include "virtqueue.h"

#include <stdio.h>
#include <string.h>

static int vq_fail(struct vq *vq, const char *fmt, unsigned long long a, unsigned long long b)
{
	char what[160];

	snprintf(what, sizeof(what), fmt, a, b);
	snprintf(vq->error, sizeof(vq->error), "%s queue: %s", vq->name, what);
	vq->broken = true;
	return -1;
}

int vq_enable(struct vq *vq, const struct guest_mem *mem)
{
	uint16_t n = vq->num;
	uint64_t avail_len = 4 + 2ull * n + 2;   /* flags, idx, ring, used_event */
	uint64_t used_len = 4 + 8ull * n + 2;    /* flags, idx, ring, avail_event */

	vq->mem = mem;
	vq->broken = false;
	if (n == 0 || n > VQ_MAX_SIZE || (n & (n - 1)))
		return vq_fail(vq, "size %llu is not a power of two in [1, %llu]", n, VQ_MAX_SIZE);
	if ((vq->desc_gpa & 15) || (vq->avail_gpa & 1) || (vq->used_gpa & 3))
		return vq_fail(vq, "ring areas misaligned (desc 0x%llx, used 0x%llx)", vq->desc_gpa, vq->used_gpa);
	vq->desc = gmem_ptr(mem, vq->desc_gpa, 16ull * n);
	vq->avail = gmem_ptr(mem, vq->avail_gpa, avail_len);
	vq->used = gmem_ptr(mem, vq->used_gpa, used_len);
	if (!vq->desc || !vq->avail || !vq->used)
		return vq_fail(vq, "ring outside guest RAM (desc 0x%llx, avail 0x%llx)", vq->desc_gpa, vq->avail_gpa);
	vq->last_avail = 0;
	vq->used_shadow = 0;
	vq->signalled_used = 0;
	vq->ready = true;
	return 0;
}

void vq_reset(struct vq *vq)
{
	const char *name = vq->name;
	uint64_t max_chain_bytes = vq->max_chain_bytes;

	memset(vq, 0, sizeof(*vq));
	vq->name = name;
	vq->max_chain_bytes = max_chain_bytes;
}

static uint16_t load_avail_idx(const struct vq *vq)
{
	return __atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE);
}

bool vq_has_avail(const struct vq *vq)
{
	return vq->ready && !vq->broken && load_avail_idx(vq) != vq->last_avail;
}

static struct vring_desc read_desc(const struct vring_desc *table, unsigned i)
{
	const volatile struct vring_desc *v = &table[i];

	/* Each field is loaded exactly once: what we check is what we use,
	 * however the guest rewrites the descriptor meanwhile. */
	return (struct vring_desc){ .addr = v->addr, .len = v->len, .flags = v->flags, .next = v->next };
}

/* Append one buffer to the chain after checking it against RAM and order. */
static int add_buf(struct vq *vq, struct vq_chain *c, const struct vring_desc *d)
{
	bool writes = d->flags & VRING_DESC_F_WRITE;
	uint8_t *host = gmem_ptr(vq->mem, d->addr, d->len);

	if (!host)
		return vq_fail(vq, "descriptor buffer 0x%llx+%llu lies outside guest RAM", d->addr, d->len);
	/* The last buffer, not in_len: a zero-length writable one counts too. */
	if (!writes && c->count && c->buf[c->count - 1].device_writes)
		return vq_fail(vq, "device-readable descriptor after a writable one (head %llu, hop %llu)",
			       c->head, c->count);
	if (c->count >= VQ_MAX_CHAIN)
		return vq_fail(vq, "chain longer than %llu descriptors (head %llu)", VQ_MAX_CHAIN, c->head);
	/* Checked per descriptor, so the walk stops where the chain crosses
	 * the cap instead of resolving the rest.  No overflow: at most
	 * VQ_MAX_CHAIN lengths of 32 bits each. */
	if (vq->max_chain_bytes && c->out_len + c->in_len + d->len > vq->max_chain_bytes)
		return vq_fail(vq, "chain longer than %llu bytes (head %llu)", vq->max_chain_bytes, c->head);
	c->buf[c->count++] = (struct vq_buf){ .host = host, .len = d->len, .device_writes = writes };
	if (writes)
		c->in_len += d->len;
	else
		c->out_len += d->len;
	return 0;
}

/* Walk an indirect table: entries in RAM, a non-zero multiple of 16 bytes,
 * no nested INDIRECT, next inside the table, at most one pass over it. */
static int walk_indirect(struct vq *vq, struct vq_chain *c, const struct vring_desc *ind)
{
	const struct vring_desc *table;
	unsigned entries, i = 0, hops = 0;

	if (ind->len == 0 || ind->len % 16)
		return vq_fail(vq, "indirect table length %llu is not a non-zero multiple of 16 (head %llu)",
			       ind->len, c->head);
	entries = ind->len / 16;
	if (entries > VQ_MAX_CHAIN)
		return vq_fail(vq, "indirect table of %llu entries exceeds %llu", entries, VQ_MAX_CHAIN);
	table = gmem_ptr(vq->mem, ind->addr, ind->len);
	if (!table)
		return vq_fail(vq, "indirect table 0x%llx+%llu lies outside guest RAM", ind->addr, ind->len);
	c->indirect = true;
	for (;;) {
		struct vring_desc d = read_desc(table, i);

		if (d.flags & VRING_DESC_F_INDIRECT)
			return vq_fail(vq, "nested indirect descriptor in table entry %llu (head %llu)", i, c->head);
		if (d.flags & ~(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE))
			return vq_fail(vq, "unknown flags 0x%llx in indirect table entry %llu", d.flags, i);
		if (add_buf(vq, c, &d) < 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			return 0;
		if (d.next >= entries)
			return vq_fail(vq, "indirect entry's next %llu is outside the %llu-entry table", d.next, entries);
		if (++hops >= entries)
			return vq_fail(vq, "indirect chain loops (more hops than %llu entries, head %llu)", entries, c->head);
		i = d.next;
	}
}

int vq_pop_avail(struct vq *vq, struct vq_chain *c)
{
	uint16_t avail_idx, head, i;
	unsigned hops = 0;

	if (!vq->ready || vq->broken)
		return vq->broken ? -1 : 0;
	avail_idx = load_avail_idx(vq);
	if (avail_idx == vq->last_avail)
		return 0;
	if ((uint16_t)(avail_idx - vq->last_avail) > vq->num)
		return vq_fail(vq, "avail idx %llu is more than a ring ahead of %llu", avail_idx, vq->last_avail);

	head = __atomic_load_n(&vq->avail->ring[vq->last_avail & (vq->num - 1)], __ATOMIC_RELAXED);
	if (head >= vq->num)
		return vq_fail(vq, "head index %llu >= ring size %llu", head, vq->num);
	c->head = head;
	c->indirect = false;
	c->count = 0;
	c->out_len = c->in_len = 0;

	for (i = head;;) {
		struct vring_desc d = read_desc(vq->desc, i);

		if (d.flags & ~(VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT))
			return vq_fail(vq, "unknown descriptor flags 0x%llx (head %llu)", d.flags, head);
		if (d.flags & VRING_DESC_F_INDIRECT) {
			if (d.flags & VRING_DESC_F_NEXT)
				return vq_fail(vq, "INDIRECT together with NEXT (head %llu, desc %llu)", head, i);
			if (!vq->indirect_ok)
				return vq_fail(vq, "INDIRECT descriptor but the feature was not negotiated (head %llu, desc %llu)",
					       head, i);
			if (walk_indirect(vq, c, &d) < 0)
				return -1;
			break;
		}
		if (add_buf(vq, c, &d) < 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (d.next >= vq->num)
			return vq_fail(vq, "next index %llu >= ring size %llu", d.next, vq->num);
		if (++hops >= vq->num)
			return vq_fail(vq, "descriptor chain loops (more hops than the ring's %llu, head %llu)",
				       vq->num, head);
		i = d.next;
	}
	vq->last_avail++;
	return 1;
}

void vq_unpop_avail(struct vq *vq)
{
	vq->last_avail--;
}

void vq_push_used(struct vq *vq, uint16_t head, uint32_t len)
{
	struct vring_used_elem *e = &vq->used->ring[vq->used_shadow & (vq->num - 1)];

	e->id = head;
	e->len = len;
	vq->used_shadow++;
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
void vq_suppress_notify(struct vq *vq)
{
	if (!vq->ready)         /* reset or never enabled: no rings to write */
		return;
	if (vq->event_idx)
		__atomic_store_n(avail_event_ptr(vq), (uint16_t)(vq->last_avail - 0x8000), __ATOMIC_RELAXED);
	else
		__atomic_store_n(&vq->used->flags, VRING_USED_F_NO_NOTIFY, __ATOMIC_RELAXED);
}

bool vq_enable_notify_and_recheck(struct vq *vq)
{
	if (!vq->ready)         /* a timer can outlive a device reset */
		return false;
	if (vq->event_idx)
		__atomic_store_n(avail_event_ptr(vq), vq->last_avail, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&vq->used->flags, 0, __ATOMIC_RELAXED);
	/* Publish "notify me" before looking at avail->idx again: otherwise the
	 * guest may add a buffer, see the old flag, skip the notify, and we sleep
	 * on a non-empty ring. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return vq_has_avail(vq);
}

bool vq_should_interrupt(struct vq *vq)
{
	uint16_t old = vq->signalled_used, now = vq->used_shadow;

	/* Pairs with the guest's barrier between re-enabling interrupts and
	 * re-reading used->idx. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (vq->event_idx) {
		uint16_t used_event = __atomic_load_n(&vq->avail->ring[vq->num], __ATOMIC_RELAXED);

		vq->signalled_used = now;
		return vring_need_event(used_event, now, old);
	}
	vq->signalled_used = now;
	return !(__atomic_load_n(&vq->avail->flags, __ATOMIC_RELAXED) & VRING_AVAIL_F_NO_INTERRUPT);
}
