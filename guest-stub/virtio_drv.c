/*
 * virtio_drv.c -- guest-side virtio-mmio transport and split virtqueue, and
 * the public gvq_* entry points of both ring layouts: each one hands a
 * packed queue to vring_packed_drv.c (through vring_packed_drv.h) and runs
 * the split ring here.
 *
 * The hot path is gvq_add + gvq_kick + gvq_get_used, all at CPL3.  Kick is
 * the seed's vring_kick: take the outstanding count, publish the new avail
 * index, full barrier, read the host's NO_NOTIFY (or avail_event) and let the
 * policy decide.  A notify is one 32-bit write to QueueNotify, which the
 * launcher catches with an ioeventfd (threaded model) or an MMIO exit.
 *
 * Descriptors flow: free list (private links in q->extra) -> gvq_add takes
 * a chain off it, writes addr/len/flags and copies the links into the shared
 * desc[].next -> the device reads them -> the used ring hands back the head
 * -> gvq_get_used checks the head is one we have in flight and returns
 * chain_len descriptors to the free list by following q->extra again.  The
 * shared table is written here and read only by the device.
 */
#include "virtio_drv.h"
#include "vring_packed_drv.h"

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>

#include "io.h"
#include "lguest_kvm_abi.h"
#include "lib.h"
#include "race_hooks.h"
#include "trace.h"

static uint32_t rd(const struct virtio_dev *d, uint32_t off) { return mmio_read32(d->base + off); }
static void wr(const struct virtio_dev *d, uint32_t off, uint32_t v) { mmio_write32(d->base + off, v); }
/* A 64-bit address register pair: LOW at off, HIGH at off + 4. */
static void wr64(const struct virtio_dev *d, uint32_t off, uint64_t v)
{
	wr(d, off, (uint32_t)v);
	wr(d, off + 4, (uint32_t)(v >> 32));
}

int virtio_drv_probe(struct virtio_dev *dev, uint64_t base, unsigned irq, uint32_t want_id, uint64_t wanted)
{
	uint64_t offered;

	dev->base = base;
	dev->irq = irq;
	if (rd(dev, VIRTIO_MMIO_MAGIC_VALUE) != 0x74726976 || rd(dev, VIRTIO_MMIO_VERSION) != 2)
		return -1;
	dev->device_id = rd(dev, VIRTIO_MMIO_DEVICE_ID);
	if (dev->device_id != want_id)
		return -1;
	wr(dev, VIRTIO_MMIO_STATUS, 0);
	wr(dev, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	wr(dev, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(dev, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 0);
	offered = rd(dev, VIRTIO_MMIO_DEVICE_FEATURES);
	wr(dev, VIRTIO_MMIO_DEVICE_FEATURES_SEL, 1);
	offered |= (uint64_t)rd(dev, VIRTIO_MMIO_DEVICE_FEATURES) << 32;
	dev->features = offered & (wanted | (1ull << VIRTIO_F_VERSION_1));
	wr(dev, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(dev, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)dev->features);
	wr(dev, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	wr(dev, VIRTIO_MMIO_DRIVER_FEATURES, (uint32_t)(dev->features >> 32));
	wr(dev, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	if (!(rd(dev, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK)) {
		virtio_drv_fail(dev);
		return -1;
	}
	return 0;
}

void virtio_drv_fail(struct virtio_dev *dev)
{
	/* Add FAILED to what is set, never clear a bit: only a reset may, and
	 * the launcher refuses anything else.  NEEDS_RESET is the device's and
	 * is not ours to write back. */
	uint32_t status = rd(dev, VIRTIO_MMIO_STATUS) & ~VIRTIO_CONFIG_S_NEEDS_RESET;

	wr(dev, VIRTIO_MMIO_STATUS, status | VIRTIO_CONFIG_S_FAILED);
}

void virtio_drv_ready(struct virtio_dev *dev)
{
	wr(dev, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	   VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
}

bool virtio_drv_needs_reset(const struct virtio_dev *dev)
{
	return rd(dev, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_NEEDS_RESET;
}

void virtio_drv_ack_interrupt(const struct virtio_dev *dev)
{
	wr(dev, VIRTIO_MMIO_INTERRUPT_ACK, rd(dev, VIRTIO_MMIO_INTERRUPT_STATUS));
}

/* The split ring's three areas in one allocation, as vring_init lays them. */
static void split_init(struct gvq *q, uint64_t *desc, uint64_t *avail, uint64_t *used)
{
	void *mem = alloc_pages(vring_size(q->num, 4096));

	vring_init(&q->vr, q->num, mem, 4096);
	*desc = virt_to_phys(q->vr.desc);
	*avail = virt_to_phys(q->vr.avail);
	*used = virt_to_phys(q->vr.used);
}

int gvq_setup(struct gvq *q, struct virtio_dev *dev, uint16_t index, uint16_t num)
{
	uint64_t desc, driver, device;
	enum notify_kind event_kind;

	memset(q, 0, sizeof(*q));
	wr(dev, VIRTIO_MMIO_QUEUE_SEL, index);
	if (rd(dev, VIRTIO_MMIO_QUEUE_READY) || rd(dev, VIRTIO_MMIO_QUEUE_NUM_MAX) < num)
		return -1;
	q->dev = dev;
	q->index = index;
	q->num = num;
	q->event_idx = dev->features & (1ull << VIRTIO_RING_F_EVENT_IDX);
	q->packed = dev->features & (1ull << VIRTIO_F_RING_PACKED);
	if (q->packed)
		gvq_packed_init(q, &desc, &driver, &device);
	else
		split_init(q, &desc, &driver, &device);
	/* Zeroed: no chain in flight, no tables.  Packed: `next` links the
	 * free buffer IDs instead of descriptors. */
	q->extra = alloc_pages(num * sizeof(*q->extra));
	for (uint16_t i = 0; i + 1 < num; i++)
		q->extra[i].next = i + 1;
	q->num_free = num;
	/* Until a workload picks one: notify unless the host said not to --
	 * which, with EVENT_IDX, it says through avail_event (packed: its
	 * desc event), not the flag. */
	event_kind = q->packed ? NOTIFY_EVENT_DESC : NOTIFY_EVENT_IDX;
	notify_policy_init(&q->policy, q->event_idx ? event_kind : NOTIFY_ALWAYS, num, 0);

	/* Packed: QueueAvail is the driver area (our event suppression),
	 * QueueUsed the device area (theirs). */
	wr(dev, VIRTIO_MMIO_QUEUE_NUM, num);
	wr64(dev, VIRTIO_MMIO_QUEUE_DESC_LOW, desc);
	wr64(dev, VIRTIO_MMIO_QUEUE_AVAIL_LOW, driver);
	wr64(dev, VIRTIO_MMIO_QUEUE_USED_LOW, device);
	wr(dev, VIRTIO_MMIO_QUEUE_READY, 1);
	return rd(dev, VIRTIO_MMIO_QUEUE_READY) ? 0 : -1;
}

/* The indirect tables' memory: a pool per table length, so each packet
 * really allocates and frees, as the driver's kmalloc does.  A free table is
 * kept on a private stack of pointers rather than linked through its own
 * first bytes: the device was given that table's address, and a device that
 * writes there after completing the buffer must not be able to steer the
 * next allocation.  The stack always has room for every table of its size
 * ever made (made <= cap), so a release cannot overflow it; it grows only
 * when a new table is made with the stack empty, so nothing needs copying,
 * and the old, smaller stack is simply dropped (alloc_pages never frees). */
#define ITABLE_MAX GVQ_ITABLE_MAX
struct itable_pool {
	void **free;                /* [cap]: free[0..nfree) are free tables */
	uint32_t nfree, made, cap;
};
static struct itable_pool itable_pool[ITABLE_MAX + 1];

/* A packed table entry is a split one's size, so one pool serves both. */
_Static_assert(sizeof(struct vring_packed_desc) == sizeof(struct vring_desc), "16-byte table entries");

static void *itable_take(unsigned n)
{
	struct itable_pool *p = &itable_pool[n];

	if (p->nfree)
		return p->free[--p->nfree];
	if (p->made == p->cap) {    /* nfree is 0: a new, empty stack will do */
		p->cap = p->cap ? 2 * p->cap : 4096 / sizeof(*p->free);
		p->free = alloc_pages(p->cap * sizeof(*p->free));
	}
	p->made++;
	return alloc_pages(n * sizeof(struct vring_desc));
}

void gvq_set_itable_cost(struct gvq *q, uint64_t ticks, uint32_t cold_lines, uint64_t cold_bytes)
{
	struct gvq_itable_cost *c = &q->icost;

	*c = (struct gvq_itable_cost){ .ticks = ticks };
	if (!cold_lines || cold_bytes < 64 || (cold_bytes & (cold_bytes - 1)))
		return;
	c->cold_lines = cold_lines;
	c->cold_bytes = cold_bytes;
	c->cold = alloc_pages(cold_bytes);  /* zeroed: every load reads 0 */
}

/* The priced part of building a table: spin until `ticks` have passed,
 * then load cold_lines lines of the cold buffer, one after the other
 * (gvq_cold_next). */
static void itable_pay(struct gvq_itable_cost *c)
{
	uint64_t line = c->cold_line, lines = c->cold_bytes / 64, v = 0;

	spin_ticks(c->ticks);
	for (uint32_t k = 0; k < c->cold_lines; k++) {
		v = *(volatile const uint64_t *)(c->cold + line * 64);
		line = gvq_cold_next(line, v, lines);
	}
	c->cold_line = line;
	c->sink += v;
}

void *gvq_itable_alloc(struct gvq *q, unsigned n)
{
	uint64_t t0 = rdtsc();
	void *t = itable_take(n);

	if (q->icost.ticks || q->icost.cold_lines)
		itable_pay(&q->icost);
	q->itables_built++;
	q->itable_ticks += rdtsc() - t0;
	return t;
}

void gvq_itable_release(void *t, unsigned n)
{
	struct itable_pool *p = &itable_pool[n];

	p->free[p->nfree++] = t;    /* nfree < made <= cap: each table is out once */
}

unsigned gvq_descs_needed(struct gvq *q, unsigned n, bool *indirect)
{
	unsigned need = *indirect ? 1 : n;

	if (n == 0 || n > q->num)
		return 0;
	if (*indirect && n > ITABLE_MAX)
		*indirect = false, need = n;
	if (q->num_free < need) {
		q->ring_full++;
		return 0;
	}
	return need;
}

bool gvq_add(struct gvq *q, const struct gvq_seg *seg, unsigned n, void *token, bool indirect)
{
	uint16_t head = q->free_head, i = head;
	unsigned need;

	if (q->packed)
		return gvq_packed_add(q, seg, n, token, indirect);
	need = gvq_descs_needed(q, n, &indirect);
	if (!need)
		return false;
#if LKVM_MUTANT == LKVM_MUT_PUBLISH_BEFORE_DESCS
	/* Mutant: the buffer is published before its descriptors are written. */
	q->vr.avail->ring[q->avail_shadow & (q->num - 1)] = head;
	*(volatile uint16_t *)&q->vr.avail->idx = (uint16_t)(q->avail_shadow + 1);
	RACE_POINT(RACE_G_KICK_PUBLISHED);
#endif
	if (indirect) {
		struct vring_desc *t = gvq_itable_alloc(q, n);

		for (unsigned k = 0; k < n; k++) {
			t[k].addr = virt_to_phys(seg[k].addr);
			t[k].len = seg[k].len;
			t[k].flags = (seg[k].device_writes ? VRING_DESC_F_WRITE : 0) | (k + 1 < n ? VRING_DESC_F_NEXT : 0);
			t[k].next = k + 1;
		}
		q->vr.desc[head].addr = virt_to_phys(t);
		q->vr.desc[head].len = n * sizeof(*t);
		q->vr.desc[head].flags = VRING_DESC_F_INDIRECT;
		q->vr.desc[head].next = 0;
		q->free_head = q->extra[head].next;
		q->extra[head].itable = t;
		q->extra[head].itable_entries = (uint8_t)n;
		q->bufs_indirect++;
	} else {
		/* Follow our own links; the device gets a copy of each one it
		 * needs (under F_NEXT) and 0 in the last, so the shared table
		 * shows nothing of the free list beyond the chain. */
		for (unsigned k = 0; k < n; k++) {
			uint16_t next = q->extra[i].next;

			q->vr.desc[i].addr = virt_to_phys(seg[k].addr);
			q->vr.desc[i].len = seg[k].len;
			q->vr.desc[i].flags = (seg[k].device_writes ? VRING_DESC_F_WRITE : 0) |
					      (k + 1 < n ? VRING_DESC_F_NEXT : 0);
			q->vr.desc[i].next = k + 1 < n ? next : 0;
			i = next;
		}
		q->free_head = i;
		q->extra[head].itable = 0;
		q->bufs_direct++;
	}
	q->num_free -= need;
	q->descs_used += need;
	q->extra[head].chain_len = need;
	q->extra[head].token = token;
	RACE_POINT(RACE_G_ADD_DESCS);
	q->vr.avail->ring[q->avail_shadow & (q->num - 1)] = head;
	q->avail_shadow++;
	return true;
}

void gvq_kick_decide(struct gvq *q, const struct kick_view *v)
{
	uint32_t before = notify_policy_outstanding(&q->policy, v->old_idx, v->used_idx);
	bool notify;

	if (before == 0 && (uint16_t)(v->old_idx - v->used_idx) == q->num)
		q->full_reads_zero++;
	notify = notify_policy_kick(&q->policy, v);
	/* Stamped before the notify's exit, so that the host's notify event
	 * comes after it on the timeline. */
	if (q->traced)
		gtrace_emit(LKVM_TR_KICK, q->index, before, (uint16_t)(v->new_idx - v->used_idx), q->policy.threshold,
			    (notify ? LKVM_TRF_NOTIFIED : 0) | (v->host_no_notify ? LKVM_TRF_HOST_NO_NOTIFY : 0));
	if (notify) {
		q->notifies++;
		mmio_write32(q->dev->base + VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
	} else {
		q->suppressed++;
	}
}

/* Whether the host wants to hear of this kick: NO_NOTIFY, and avail_event
 * (meaningful with EVENT_IDX only; the policy picks). */
static void split_read_host_wish(const struct gvq *q, struct kick_view *v)
{
	v->host_no_notify = *(volatile uint16_t *)&q->vr.used->flags & VRING_USED_F_NO_NOTIFY;
	RACE_POINT(RACE_G_KICK_READ_WISH);
	v->avail_event = *(volatile uint16_t *)&vring_avail_event(&q->vr);
}

void gvq_kick(struct gvq *q)
{
	struct kick_view v = { .packed = false };

	if (q->packed) {
		gvq_packed_kick(q);
		return;
	}
	q->kicks++;
	v.old_idx = q->avail_published;
	v.new_idx = q->avail_shadow;
	v.used_idx = *(volatile uint16_t *)&q->vr.used->idx;
	/* Descriptors and avail entries must be visible before the new index
	 * (x86 keeps store order; the compiler must too). */
	barrier();
#if LKVM_MUTANT == LKVM_MUT_KICK_NO_MB
	/* Mutant: without mb() the CPU may take the loads before the store
	 * leaves its store buffer -- here they simply come first. */
	split_read_host_wish(q, &v);
	RACE_POINT(RACE_G_KICK_PUBLISH);
	*(volatile uint16_t *)&q->vr.avail->idx = v.new_idx;
	q->avail_published = v.new_idx;
	gvq_kick_decide(q, &v);
	return;
#endif
	RACE_POINT(RACE_G_KICK_PUBLISH);
	*(volatile uint16_t *)&q->vr.avail->idx = v.new_idx;
	q->avail_published = v.new_idx;
	RACE_POINT(RACE_G_KICK_PUBLISHED);
	/* Publish the index before reading whether the host wants to know. */
	mb();
	RACE_POINT(RACE_G_KICK_READ_WISH);
	split_read_host_wish(q, &v);
	gvq_kick_decide(q, &v);
}

void gvq_notify_full(struct gvq *q)
{
	bool no_notify = q->packed ? gvq_packed_host_no_notify(q)
				   : *(volatile uint16_t *)&q->vr.used->flags & VRING_USED_F_NO_NOTIFY;

	/* We notify *even if* VRING_USED_F_NO_NOTIFY is set here. */
	q->forced++;
	q->notifies++;
	notify_policy_ring_full(&q->policy, no_notify);
	if (q->traced)
		gtrace_emit(LKVM_TR_RING_FULL, q->index, gvq_outstanding(q), 0, q->policy.threshold,
			    no_notify ? LKVM_TRF_HOST_NO_NOTIFY : 0);
	mmio_write32(q->dev->base + VIRTIO_MMIO_QUEUE_NOTIFY, q->index);
}

bool gvq_has_used(const struct gvq *q)
{
	if (q->packed)
		return gvq_packed_has_used(q);
	return *(volatile uint16_t *)&q->vr.used->idx != q->last_used;
}

void *gvq_get_used(struct gvq *q, uint32_t *len)
{
	struct vring_used_elem e;
	uint16_t head, n, last;
	void *token;

	if (q->packed)
		return gvq_packed_get_used(q, len);
	if (!gvq_has_used(q))
		return 0;
	RACE_POINT(RACE_G_USED_SEEN);
	barrier(); /* read the element after the index that covers it */
	e = q->vr.used->ring[q->last_used & (q->num - 1)];
	head = (uint16_t)e.id;
	if (e.id >= q->num || !q->extra[head].chain_len) {
		printf("guest: device returned bad used id %u on queue %u\n", e.id, q->index);
		guest_exit(LKVM_STATUS_FAILED);
	}
	n = q->extra[head].chain_len;
	if (q->extra[head].itable) {
		/* Our own record of the table and its size, not desc.addr/len:
		 * the device can write those. */
		gvq_itable_release(q->extra[head].itable, q->extra[head].itable_entries);
		q->extra[head].itable = 0;
	}
	/* Return the chain to the free list by our own links, not desc[].next:
	 * exactly the n descriptors gvq_add took, whatever the device wrote. */
	last = head;
	for (uint16_t k = 1; k < n; k++)
		last = q->extra[last].next;
	q->extra[last].next = q->free_head;
	q->free_head = head;
	q->num_free += n;
	q->extra[head].chain_len = 0;
	token = q->extra[head].token;
	q->last_used++;
	if (q->event_idx && q->interrupts_off)   /* keep used_event out of reach */
		vring_used_event(&q->vr) = q->last_used - 0x8000;
	if (len)
		*len = e.len;
	return token;
}

void gvq_disable_interrupts(struct gvq *q)
{
	if (q->packed) {
		gvq_packed_disable_interrupts(q);
		return;
	}
	q->interrupts_off = true;
	RACE_POINT(RACE_G_IRQ_DISABLE);
	if (q->event_idx)
		vring_used_event(&q->vr) = q->last_used - 0x8000; /* half a wrap away */
	else
		q->vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
}

bool gvq_enable_interrupts(struct gvq *q)
{
	if (q->packed)
		return gvq_packed_enable_interrupts(q);
	RACE_POINT(RACE_G_IRQ_ENABLE);
	q->interrupts_off = false;
	if (q->event_idx)
		*(volatile uint16_t *)&vring_used_event(&q->vr) = q->last_used;
	else
		*(volatile uint16_t *)&q->vr.avail->flags = 0;
	RACE_POINT(RACE_G_IRQ_ENABLE_STORED);
	/* Publish before re-checking, or an interrupt could be skipped for a
	 * buffer used just now. */
	mb();
	RACE_POINT(RACE_G_IRQ_RECHECK);
#if LKVM_MUTANT == LKVM_MUT_IRQ_NO_RECHECK
	return true;    /* mutant: sleep without looking again */
#endif
	return !gvq_has_used(q);
}

uint16_t gvq_outstanding(const struct gvq *q)
{
	if (q->packed)
		return gvq_packed_outstanding(q);
	return (uint16_t)(q->avail_published - *(volatile uint16_t *)&q->vr.used->idx);
}
