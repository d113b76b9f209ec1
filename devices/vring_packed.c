/*
 * vring_packed.c -- the packed ring layout (virtio 1.2, 2.8): resolve its
 * three areas, walk its chains, complete them, and handle its event
 * suppression.  The layout-independent half (guards, per-buffer checks, the
 * broken state, the barriers) is virtqueue.c; see vq_layout.h.
 *
 * The three areas, as <linux/virtio_ring.h> types them: the descriptor ring
 * (num struct vring_packed_desc at QueueDesc), the driver's event
 * suppression structure (QueueDriver, which the split ring calls avail) and
 * the device's (QueueDevice, the split ring's used); each a struct
 * vring_packed_desc_event.  Driver and device share the one ring: a slot is
 * available when its AVAIL bit equals the device's avail wrap counter and
 * its USED bit does not, and used when both equal the used wrap counter.
 *
 * The data flow of one chain: the flags of slot next_avail (acquire) say
 * whether the driver made it available on this lap -> its addr, len and id
 * are copied once and checked -> with NEXT the chain goes on in the next
 * slot (wrapping to slot 0 with the wrap counter flipped), each slot again
 * checked to be available on its lap, or one INDIRECT descriptor names a
 * table of consecutive entries -> each buffer goes to vq_chain_add -> the
 * buffer ID of the last descriptor is checked (in range, not in flight) and
 * marked in flight with the chain's slot count -> the device fills or
 * drains the chain -> the used descriptor {id, len, flags} is written at
 * next_used, the flags last with release, and next_used moves on by the
 * chain's slot count.
 *
 * What the device writes and reads besides: the device event structure
 * (DISABLE to suppress notifies; ENABLE, or with EVENT_IDX a DESC event at
 * our next_avail slot and lap, to ask for them) and the driver event
 * structure, read after each batch of used descriptors to decide on an
 * interrupt with the pure vq_packed_interrupt_needed (virtqueue.h).
 *
 * Sizes: the spec lets a packed ring have any size up to 2^15; this layout
 * takes any size in [1, VQ_MAX_SIZE], powers of two or not.  Every value
 * read from the ring is the guest's and is checked before use; a broken
 * rule ends the walk through vq_fail with its vq_violation.  In error
 * lines, "head" and "slot" name ring positions; the buffer ID is the "ID".
 */
#include "vq_layout.h"

#include <inttypes.h>
#include <string.h>

#define AVAIL_BIT ((uint16_t)(1u << VRING_PACKED_DESC_F_AVAIL))
#define USED_BIT ((uint16_t)(1u << VRING_PACKED_DESC_F_USED))
/* What a driver may set on a descriptor in the ring. */
#define RING_FLAGS (VRING_DESC_F_NEXT | VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT | AVAIL_BIT | USED_BIT)

/* ---- the areas ---- */

/* The device area is ours: state our wish at once rather than leave the
 * driver reading whatever its RAM held. */
static void packed_enable_notify(struct vq *vq);

static int packed_enable(struct vq *vq)
{
	struct vq_packed *pk = &vq->pk;
	uint16_t n = vq->num;

	if (n == 0 || n > VQ_MAX_SIZE)
		return vq_fail(vq, VQV_SIZE, "packed ring size %u is not in [1, %u]", n, VQ_MAX_SIZE);
	if ((vq->desc_gpa & 15) || (vq->avail_gpa & 3) || (vq->used_gpa & 3))
		return vq_fail(vq, VQV_RING_MISALIGNED,
			       "packed ring areas misaligned (desc 0x%" PRIx64 ", driver 0x%" PRIx64
			       ", device 0x%" PRIx64 ")", vq->desc_gpa, vq->avail_gpa, vq->used_gpa);
	memset(pk, 0, sizeof(*pk));
	pk->desc = gmem_ptr(vq->mem, vq->desc_gpa, 16ull * n);
	pk->driver = gmem_ptr(vq->mem, vq->avail_gpa, sizeof(*pk->driver));
	pk->device = gmem_ptr(vq->mem, vq->used_gpa, sizeof(*pk->device));
	if (!pk->desc || !pk->driver || !pk->device)
		return vq_fail(vq, VQV_RING_OUTSIDE_RAM,
			       "packed ring outside guest RAM (desc 0x%" PRIx64 ", driver 0x%" PRIx64
			       ", device 0x%" PRIx64 ")", vq->desc_gpa, vq->avail_gpa, vq->used_gpa);
	pk->avail_wrap = pk->used_wrap = pk->signalled_wrap = true;   /* both counters start at 1 */
	packed_enable_notify(vq);
	return 0;
}

/* ---- reading slots ---- */

/* One slot on: past the last, back to 0 on the next lap. */
static void step(const struct vq *vq, uint16_t *pos, bool *wrap)
{
	if (++*pos == vq->num) {
		*pos = 0;
		*wrap = !*wrap;
	}
}

static uint16_t load_flags(const struct vring_packed_desc *slot)
{
	/* Acquire: the flags publish the rest of the descriptor. */
	return __atomic_load_n(&slot->flags, __ATOMIC_ACQUIRE);
}

enum slot_state {
	SLOT_EMPTY,    /* AVAIL != wrap: last lap's descriptor, or a used one */
	SLOT_AVAIL,    /* AVAIL == wrap, USED != wrap: made available on this lap */
	SLOT_BOGUS,    /* AVAIL == USED == wrap: written by nobody who follows the spec */
};

static enum slot_state slot_state(uint16_t flags, bool wrap)
{
	if (!!(flags & AVAIL_BIT) != wrap)
		return SLOT_EMPTY;
	return !!(flags & USED_BIT) != wrap ? SLOT_AVAIL : SLOT_BOGUS;
}

/* The rest of an available descriptor, each field loaded exactly once:
 * what we check is what we use, however the guest rewrites it meanwhile. */
static struct vring_packed_desc copy_desc(const struct vring_packed_desc *slot, uint16_t flags)
{
	const volatile struct vring_packed_desc *v = slot;

	return (struct vring_packed_desc){ .addr = v->addr, .len = v->len, .id = v->id, .flags = flags };
}

/* ---- one chain ---- */

/* Entry i of an indirect table, copied once.  A table may sit at any
 * address, so it is copied bytewise, and the compiler barrier keeps the
 * compiler from reading the guest's copy again in place of ours. */
static struct vring_packed_desc copy_table_entry(const uint8_t *table, unsigned i)
{
	struct vring_packed_desc e;

	memcpy(&e, table + 16u * i, sizeof(e));
	__asm__ __volatile__("" : : "r"(&e) : "memory");
	return e;
}

/* The table an INDIRECT descriptor names: a non-zero multiple of 16 bytes,
 * in RAM, at most VQ_MAX_CHAIN entries, used in order (packed tables have
 * no next: every entry is one buffer), and the driver may set nothing but
 * WRITE in it (2.8.7), so INDIRECT there is nesting and NEXT is refused. */
static int walk_indirect(struct vq *vq, struct vq_chain *c, const struct vring_packed_desc *ind)
{
	unsigned entries;
	const uint8_t *table = vq_indirect_table(vq, c, ind->addr, ind->len, &entries);

	if (!table)
		return -1;
	for (unsigned i = 0; i < entries; i++) {
		struct vring_packed_desc e = copy_table_entry(table, i);

		if (e.flags & VRING_DESC_F_INDIRECT)
			return vq_fail(vq, VQV_INDIRECT_NESTED,
				       "nested indirect descriptor in table entry %u (slot %u)", i, c->head);
		if (e.flags & ~VRING_DESC_F_WRITE)
			return vq_fail(vq, VQV_INDIRECT_FLAGS,
				       "flags 0x%x in indirect table entry %u (only WRITE is allowed)", e.flags, i);
		if (vq_chain_add(vq, c, e.addr, e.len, e.flags & VRING_DESC_F_WRITE) < 0)
			return -1;
	}
	return 0;
}

/* The rules on one ring descriptor's flags; `nth` counts from 1. */
static int check_ring_flags(struct vq *vq, const struct vq_chain *c, uint16_t flags, uint16_t pos, unsigned nth)
{
	if (flags & ~RING_FLAGS)
		return vq_fail(vq, VQV_DESC_FLAGS, "unknown descriptor flags 0x%x (slot %u)", flags, pos);
	if (!(flags & VRING_DESC_F_INDIRECT))
		return 0;
	if (flags & VRING_DESC_F_NEXT)
		return vq_fail(vq, VQV_INDIRECT_WITH_NEXT, "INDIRECT together with NEXT (slot %u)", pos);
	if (nth > 1)
		return vq_fail(vq, VQV_INDIRECT_IN_CHAIN,
			       "INDIRECT descriptor at slot %u inside a chain from slot %u", pos, c->head);
	if (!vq->indirect_ok)
		return vq_fail(vq, VQV_INDIRECT_NOT_NEGOTIATED,
			       "INDIRECT descriptor but the feature was not negotiated (slot %u)", pos);
	return 0;
}

/* One descriptor of the chain: its buffer, or the indirect table behind it. */
static int take_desc(struct vq *vq, struct vq_chain *c, const struct vring_packed_desc *d, uint16_t pos,
		     unsigned nth)
{
	if (check_ring_flags(vq, c, d->flags, pos, nth) < 0)
		return -1;
	if (d->flags & VRING_DESC_F_INDIRECT)
		return walk_indirect(vq, c, d);
	/* WRITE on an INDIRECT descriptor is reserved and ignored (2.8.7):
	 * only a direct buffer's own WRITE counts. */
	return vq_chain_add(vq, c, d->addr, d->len, d->flags & VRING_DESC_F_WRITE);
}

/* The buffer ID the last descriptor carries (2.8.6): one the ring can hold
 * and one the device is not holding already. */
static int check_id(struct vq *vq, uint16_t id, uint16_t head)
{
	if (id >= vq->num)
		return vq_fail(vq, VQV_ID_RANGE, "buffer ID %u >= ring size %u (chain from slot %u)", id, vq->num,
			       head);
	if (vq->pk.id_slots[id])
		return vq_fail(vq, VQV_ID_IN_FLIGHT, "buffer ID %u is still in flight (chain from slot %u)", id, head);
	return 0;
}

static int chain_too_long(struct vq *vq, const struct vq_chain *c, unsigned budget)
{
	if (vq->pk.in_flight == 0)
		return vq_fail(vq, VQV_PACKED_CHAIN_TOO_LONG,
			       "chain from slot %u is longer than the ring's %u slots", c->head, vq->num);
	return vq_fail(vq, VQV_PACKED_CHAIN_TOO_LONG,
		       "chain from slot %u needs more than the %u free slots (%u of %u in flight)", c->head, budget,
		       vq->pk.in_flight, vq->num);
}

/* Remember where this pop began for unpop, mark the ID in flight with its
 * slot count, and move next_avail past the chain. */
static void commit_pop(struct vq *vq, struct vq_chain *c, uint16_t id, unsigned slots, uint16_t last,
		       bool last_wrap)
{
	struct vq_packed *pk = &vq->pk;

	pk->popped_at = pk->next_avail;
	pk->popped_wrap = pk->avail_wrap;
	pk->popped_id = id;
	pk->can_unpop = true;
	pk->id_slots[id] = (uint16_t)slots;
	pk->in_flight = (uint16_t)(pk->in_flight + slots);
	step(vq, &last, &last_wrap);
	pk->next_avail = last;
	pk->avail_wrap = last_wrap;
	c->head = id;
}

/*
 * Walk the chain at next_avail.  The head decides whether there is one:
 * not available is "nothing yet", AVAIL == USED == wrap is a broken ring.
 * Every later slot must be available on its own lap (a chain that crosses
 * the end of the ring continues on slot 0 with the wrap counter flipped),
 * since the driver makes the head available last.  The chain may use at
 * most the slots not in flight, which also bounds a chain of NEXTs round
 * the ring.
 */
static int packed_pop(struct vq *vq, struct vq_chain *c)
{
	struct vq_packed *pk = &vq->pk;
	uint16_t pos = pk->next_avail;
	bool wrap = pk->avail_wrap;
	unsigned budget = (unsigned)vq->num - pk->in_flight, slots = 0;
	uint16_t flags = load_flags(&pk->desc[pos]);
	struct vring_packed_desc d;

	switch (slot_state(flags, wrap)) {
	case SLOT_EMPTY:
		return 0;
	case SLOT_BOGUS:
		return vq_fail(vq, VQV_PACKED_WRAP, "slot %u has AVAIL and USED both %d, the device's wrap counter",
			       pos, wrap);
	case SLOT_AVAIL:
		break;
	}
	RACE_POINT(RACE_H_AVAIL_SEEN);
	vq_chain_start(c, pos);
	if (budget == 0)        /* the driver rewrote a slot we still hold */
		return chain_too_long(vq, c, budget);
	for (;;) {
		d = copy_desc(&pk->desc[pos], flags);
		if (take_desc(vq, c, &d, pos, ++slots) < 0)
			return -1;
		if (!(d.flags & VRING_DESC_F_NEXT))
			break;
		if (slots == budget)
			return chain_too_long(vq, c, budget);
		step(vq, &pos, &wrap);
		flags = load_flags(&pk->desc[pos]);
		if (slot_state(flags, wrap) != SLOT_AVAIL)
			return vq_fail(vq, VQV_PACKED_WRAP,
				       "slot %u of the chain from slot %u is not available for wrap counter %d "
				       "(flags 0x%x)", pos, c->head, wrap, flags);
	}
	if (check_id(vq, d.id, c->head) < 0)
		return -1;
	commit_pop(vq, c, d.id, slots, pos, wrap);
	return 1;
}

static bool packed_has_avail(const struct vq *vq)
{
	/* The AVAIL bit alone: a bogus slot (USED == wrap too) is no buffer
	 * but a broken ring, which only pop can report, so it counts here
	 * and a device that looks before it pops does not sleep on it. */
	return !!(load_flags(&vq->pk.desc[vq->pk.next_avail]) & AVAIL_BIT) == vq->pk.avail_wrap;
}

/* Only the last pop, and only once: the chain goes back to being the next
 * one, its ID and slots out of flight. */
static void packed_unpop(struct vq *vq)
{
	struct vq_packed *pk = &vq->pk;

	if (!pk->can_unpop)
		return;
	pk->in_flight = (uint16_t)(pk->in_flight - pk->id_slots[pk->popped_id]);
	pk->id_slots[pk->popped_id] = 0;
	pk->next_avail = pk->popped_at;
	pk->avail_wrap = pk->popped_wrap;
	pk->can_unpop = false;
}

/* ---- giving chains back ---- */

static void advance_used(struct vq *vq, unsigned slots)
{
	struct vq_packed *pk = &vq->pk;
	unsigned next = pk->next_used + slots;   /* slots <= num: at most one wrap */

	if (next >= vq->num) {
		next -= vq->num;
		pk->used_wrap = !pk->used_wrap;
	}
	pk->next_used = (uint16_t)next;
	pk->used_since_signal += slots;
	if (pk->used_since_signal > 2u * VQ_MAX_SIZE)
		pk->used_since_signal = 2u * VQ_MAX_SIZE;
}

/*
 * One used descriptor at next_used for the whole chain (2.8.6): ID, the
 * bytes written, and flags AVAIL = USED = our used wrap counter, stored
 * last with release so the driver never sees the flags before the rest.
 * WRITE says that len means something (2.8.3, "whether any data has been
 * written").  An ID we do not hold is the device's bug, not the guest's:
 * writing it would hand the driver a slot it never gave, so it is dropped.
 */
static void packed_push(struct vq *vq, uint16_t id, uint32_t len)
{
	struct vq_packed *pk = &vq->pk;
	unsigned slots = id < vq->num ? pk->id_slots[id] : 0;
	struct vring_packed_desc *slot;
	uint16_t flags;

	if (!slots)
		return;
	slot = &pk->desc[pk->next_used];
	flags = pk->used_wrap ? AVAIL_BIT | USED_BIT : 0;
	if (len)
		flags |= VRING_DESC_F_WRITE;
	__atomic_store_n(&slot->id, id, __ATOMIC_RELAXED);
	__atomic_store_n(&slot->len, len, __ATOMIC_RELAXED);
	RACE_POINT(RACE_H_USED_WRITTEN);
	__atomic_store_n(&slot->flags, flags, __ATOMIC_RELEASE);
	pk->id_slots[id] = 0;
	pk->in_flight = (uint16_t)(pk->in_flight - slots);
	pk->can_unpop = false;
	advance_used(vq, slots);
}

/* ---- event suppression ---- */

static void packed_suppress_notify(struct vq *vq)
{
	RACE_POINT(RACE_H_SUPPRESS);
	__atomic_store_n(&vq->pk.device->flags, VRING_PACKED_EVENT_FLAG_DISABLE, __ATOMIC_RELAXED);
}

/* With EVENT_IDX: notify me when the slot I look at next is made
 * available on my lap (the packed avail_event); off_wrap before the flags
 * that make it count. */
static void packed_enable_notify(struct vq *vq)
{
	struct vq_packed *pk = &vq->pk;

	if (!vq->event_idx) {
		__atomic_store_n(&pk->device->flags, VRING_PACKED_EVENT_FLAG_ENABLE, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&pk->device->off_wrap,
			 (uint16_t)(pk->next_avail | (unsigned)pk->avail_wrap << VRING_PACKED_EVENT_F_WRAP_CTR),
			 __ATOMIC_RELAXED);
	RACE_POINT(RACE_H_NOTIFY_ENABLE);
	__atomic_store_n(&pk->device->flags, VRING_PACKED_EVENT_FLAG_DESC, __ATOMIC_RELEASE);
}

/* The driver writes off_wrap before flags: read flags first (acquire),
 * then decide with the pure vq_packed_interrupt_needed. */
static bool packed_should_interrupt(struct vq *vq)
{
	struct vq_packed *pk = &vq->pk;
	uint16_t flags = __atomic_load_n(&pk->driver->flags, __ATOMIC_ACQUIRE);
	uint16_t off_wrap = __atomic_load_n(&pk->driver->off_wrap, __ATOMIC_RELAXED);
	bool need = vq_packed_interrupt_needed(vq->event_idx, flags, off_wrap, pk->signalled_pos, pk->signalled_wrap,
					       pk->used_since_signal, vq->num);

	pk->signalled_pos = pk->next_used;
	pk->signalled_wrap = pk->used_wrap;
	pk->used_since_signal = 0;
	return need;
}

const struct vq_layout vq_layout_packed = {
	.name = "packed",
	.enable = packed_enable,
	.has_avail = packed_has_avail,
	.pop = packed_pop,
	.unpop = packed_unpop,
	.push = packed_push,
	.suppress_notify = packed_suppress_notify,
	.enable_notify = packed_enable_notify,
	.should_interrupt = packed_should_interrupt,
};
