/*
 * fuzz_vring_packed.c -- arbitrary guest memory against the host's packed
 * ring walker (devices/vring_packed.c behind devices/virtqueue.c).
 *
 * The input becomes 64 KiB of "guest RAM" (repeated to fill it) and a
 * queue taken from its first bytes:
 *
 *   byte 0      size (index into `sizes`: 12 valid ones, powers of two or
 *               not, and 4 invalid), INDIRECT_DESC, EVENT_IDX, whether the
 *               guest rewrites ring bytes between walks, a chain cap
 *   byte 1      how the device completes: chains held before pushing
 *               (1-4), in reverse or shuffled order, unpop now and then,
 *               and whether the harness re-offers each completed batch on
 *               the next lap (a driver that keeps the ring full, so walks
 *               go round it several times), as it was or chained anew
 *   bytes 2-11  descriptor ring (x4), driver area, device area (any byte
 *               address: misaligned ones too), the cap, a seed
 *
 * The walker may refuse anything, but what it does must be right, not
 * only safe: enable must succeed exactly when the size, alignment and
 * extent are valid, and otherwise name the first rule broken; a popped
 * chain must be exactly what the ring holds from the device's position
 * (every slot available on its lap, NEXT on all but the last, the buffers
 * with their addresses, lengths and WRITE, the ID from the last slot, or
 * one INDIRECT slot and its table's entries), inside RAM and the cap; an
 * unpopped chain must pop again the same; every used descriptor must land
 * at the slot the used side has reached, with ID, len and AVAIL = USED =
 * that lap's counter; nothing may stay in flight that was pushed; the
 * interrupt decision must match a slot-by-slot walk over what was used
 * since; and a refusal must name a packed chain rule.  Work is bounded: at
 * most a few laps of pops per input, each chain at most VQ_MAX_CHAIN
 * buffers.  ASan and gmem_map's guard pages catch any access outside RAM.
 *
 * Built two ways, like the other targets: with -Dfuzz=true and clang a
 * libFuzzer target (fuzz-vring-packed); always a deterministic smoke test
 * (unit-fuzz-vring-packed-smoke) that replays the seed corpus in
 * corpus/vring-packed/, then runs generated inputs -- half random bytes,
 * half plausible rings a driver would write with some of its rules broken --
 * and fails unless they reached the states that matter.
 * `fuzz-vring-packed-smoke --emit-seeds DIR` writes the seeds.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_replay.h"
#include "guest_mem.h"
#include "virtqueue.h"

#define RAM (64u << 10)
#define HOLD_MAX 4u
#define AVAIL_F ((uint16_t)(1u << VRING_PACKED_DESC_F_AVAIL))
#define USED_F ((uint16_t)(1u << VRING_PACKED_DESC_F_USED))

#define CHECK(cond) do { if (!(cond)) failed(#cond, __LINE__); } while (0)

static void failed(const char *what, int line)
{
	fprintf(stderr, "fuzz_vring_packed.c:%d: invariant violated: %s\n", line, what);
	abort();
}

/* Indices 0-11 valid, 12-15 not. */
static const uint16_t sizes[16] = { 1, 2, 3, 4, 5, 8, 16, 17, 64, 100, 256, 1024, 0, 1025, 2048, 65535 };

static struct guest_mem gm;

/* What the smoke test demands the inputs reached (over all of them). */
static struct {
	unsigned long rings_enabled, sizes_refused, chains, indirect, straddled, second_lap, unpops, out_of_order,
		mutated, refused, interrupts_checked;
	uint32_t violations;   /* bit v: vq_violation v was raised */
} reached;

/* One chain the device holds: where it began and what its slots held. */
struct held {
	uint16_t id, slots, pos;
	bool wrap;
	struct vring_packed_desc desc[VQ_MAX_SIZE];
};

static struct {
	struct vq vq;
	struct vq_chain chain, again;
	struct vring_packed_desc *ring;
	uint16_t used_pos;      /* where the next used descriptor must land */
	bool used_wrap;
	uint16_t sig_pos;       /* the used side at the last interrupt decision */
	bool sig_wrap;
	uint32_t since_sig;
	struct held held[HOLD_MAX];
	unsigned nheld;
	uint64_t x;
} h;

static uint16_t take16(const uint8_t *d, size_t n, size_t at)
{
	return at + 1 < n ? (uint16_t)(d[at] | d[at + 1] << 8) : 0;
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static void step(uint16_t num, uint16_t *pos, bool *wrap)
{
	if (++*pos == num)
		*pos = 0, *wrap = !*wrap;
}

static bool available(uint16_t flags, bool wrap)
{
	return !!(flags & AVAIL_F) == wrap && !!(flags & USED_F) != wrap;
}

/* ---- enable ---- */

/* The rules a packed pop can break (the split-only ones have no place). */
static bool packed_chain_rule(enum vq_violation v)
{
	switch (v) {
	case VQV_DESC_FLAGS: case VQV_BUF_OUTSIDE_RAM: case VQV_READABLE_AFTER_WRITABLE: case VQV_CHAIN_BYTES:
	case VQV_INDIRECT_WITH_NEXT: case VQV_INDIRECT_NOT_NEGOTIATED: case VQV_INDIRECT_LEN:
	case VQV_INDIRECT_ENTRIES: case VQV_INDIRECT_OUTSIDE_RAM: case VQV_INDIRECT_NESTED: case VQV_INDIRECT_FLAGS:
	case VQV_PACKED_WRAP: case VQV_PACKED_CHAIN_TOO_LONG: case VQV_ID_RANGE: case VQV_ID_IN_FLIGHT:
	case VQV_INDIRECT_IN_CHAIN:
		return true;
	default:
		return false;
	}
}

/* The rule enable must name for these areas, or VQV_NONE: size first,
 * then alignment, then the extent in RAM. */
static enum vq_violation enable_verdict(const struct vq *vq)
{
	if (vq->num == 0 || vq->num > VQ_MAX_SIZE)
		return VQV_SIZE;
	if ((vq->desc_gpa & 15) || (vq->avail_gpa & 3) || (vq->used_gpa & 3))
		return VQV_RING_MISALIGNED;
	if (vq->desc_gpa + 16ull * vq->num > RAM || vq->avail_gpa + 4 > RAM || vq->used_gpa + 4 > RAM)
		return VQV_RING_OUTSIDE_RAM;
	return VQV_NONE;
}

/* ---- what a pop must have taken ---- */

/* A buffer inside RAM, and the one the descriptor names. */
static void check_buf(const struct vq_buf *b, uint64_t addr, uint32_t len, bool writes)
{
	CHECK(b->host >= gm.host && b->len <= gm.size && (size_t)(b->host - gm.host) <= gm.size - b->len);
	CHECK((uint64_t)(b->host - gm.host) == addr && b->len == len && b->device_writes == writes);
}

static void check_table(const struct vq_chain *c, const struct vring_packed_desc *ind)
{
	const uint8_t *table = gmem_ptr(&gm, ind->addr, ind->len);

	CHECK(table && h.vq.indirect_ok && ind->len % 16 == 0 && c->count == ind->len / 16);
	for (unsigned e = 0; e < c->count; e++) {
		struct vring_packed_desc t;

		memcpy(&t, table + 16 * e, sizeof(t));
		CHECK(!(t.flags & ~VRING_DESC_F_WRITE));
		check_buf(&c->buf[e], t.addr, t.len, t.flags & VRING_DESC_F_WRITE);
	}
}

/* The chain just popped must be the slots from (pos, wrap) as the ring
 * holds them (nothing writes RAM during a pop here); they are kept in
 * *k, for the refill and for unpop's re-pop. */
static void check_popped(const struct vq_chain *c, uint16_t pos, bool wrap, struct held *k)
{
	const struct vq *vq = &h.vq;
	uint64_t out = 0, in = 0;

	CHECK(c->head < vq->num && c->count >= 1 && c->count <= VQ_MAX_CHAIN);
	k->id = c->head, k->pos = pos, k->wrap = wrap;
	k->slots = vq->pk.id_slots[c->head];
	CHECK(k->slots >= 1 && k->slots <= vq->num && vq->pk.in_flight <= vq->num);
	for (unsigned s = 0; s < k->slots; s++) {
		struct vring_packed_desc d = h.ring[pos];
		bool last = s + 1 == k->slots;

		CHECK(available(d.flags, wrap) && !!(d.flags & VRING_DESC_F_NEXT) == !last);
		if (d.flags & VRING_DESC_F_INDIRECT) {
			CHECK(k->slots == 1 && c->indirect);
			check_table(c, &d);
		} else {
			check_buf(&c->buf[s], d.addr, d.len, d.flags & VRING_DESC_F_WRITE);
		}
		if (last)
			CHECK(d.id == c->head);
		k->desc[s] = d;
		step(vq->num, &pos, &wrap);
	}
	CHECK(c->indirect || c->count == k->slots);
	CHECK(pos == vq->pk.next_avail && wrap == vq->pk.avail_wrap);
	for (unsigned i = 0; i < c->count; i++)
		*(c->buf[i].device_writes ? &in : &out) += c->buf[i].len;
	CHECK(out == c->out_len && in == c->in_len);
	CHECK(!vq->max_chain_bytes || out + in <= vq->max_chain_bytes);
	reached.straddled += k->pos + k->slots > vq->num;
	reached.second_lap += !k->wrap;
	reached.indirect += c->indirect;
}

/* ---- completing ---- */

/* One chain offered at (*pos, *wrap): n descriptors, NEXT on all but the
 * last, each its own WRITE (kept on the last only when `last_write_only`)
 * and INDIRECT, the ID in every one, the head's flags stored last. */
static void post_run(const struct vring_packed_desc *d, unsigned n, uint16_t id, bool last_write_only,
		     uint16_t *pos, bool *wrap)
{
	uint16_t head = *pos, head_flags = 0;

	for (unsigned s = 0; s < n; s++) {
		uint16_t keep = d[s].flags & (VRING_DESC_F_WRITE | VRING_DESC_F_INDIRECT);
		struct vring_packed_desc e = { .addr = d[s].addr, .len = d[s].len, .id = id };

		if (last_write_only && s + 1 < n)
			keep &= (uint16_t)~VRING_DESC_F_WRITE;
		e.flags = (uint16_t)(keep | (s + 1 < n ? VRING_DESC_F_NEXT : 0) | (*wrap ? AVAIL_F : USED_F));
		if (s == 0)
			head_flags = e.flags, e.flags = 0;
		h.ring[*pos] = e;
		step(h.vq.num, pos, wrap);
	}
	__atomic_store_n(&h.ring[head].flags, head_flags, __ATOMIC_RELEASE);
}

/*
 * A driver that keeps the ring full: once a batch is all used, the slots it
 * took are offered again on the next lap, in the order taken -- where the
 * driver's own position goes next.  As they were, or (`regroup`) chained
 * anew in runs of 1-3 direct descriptors (WRITE only at a run's end, the
 * ID its last slot), so that a run crosses the end of the ring where no
 * chain did before.  An indirect descriptor stays a chain of its own.
 */
static void refill_batch(bool regroup)
{
	static struct vring_packed_desc flat[HOLD_MAX * VQ_MAX_SIZE];
	uint16_t pos = h.held[0].pos;
	bool wrap = !h.held[0].wrap;
	unsigned total = 0;

	if (!regroup) {
		for (unsigned i = 0; i < h.nheld; i++)
			post_run(h.held[i].desc, h.held[i].slots, h.held[i].id, false, &pos, &wrap);
		return;
	}
	for (unsigned i = 0; i < h.nheld; i++)
		for (unsigned k = 0; k < h.held[i].slots; k++)
			flat[total++] = h.held[i].desc[k];
	for (unsigned at = 0, run; at < total; at += run) {
		uint16_t last = pos;
		bool w = wrap;

		run = 1 + (unsigned)(xorshift(&h.x) % 3);
		if (run > total - at)
			run = total - at;
		for (unsigned k = 0; k < run; k++)
			if (flat[at + k].flags & VRING_DESC_F_INDIRECT)
				run = k ? k : 1;
		for (unsigned k = 1; k < run; k++)
			step(h.vq.num, &last, &w);
		post_run(&flat[at], run, last, true, &pos, &wrap);
	}
}

/* The spec's rule, slot by slot: did the used side pass the driver's slot? */
static bool interrupt_walk(uint16_t flags, uint16_t off_wrap)
{
	uint16_t pos = h.sig_pos, off = off_wrap & 0x7fff;
	bool wrap = h.sig_wrap, ewrap = off_wrap >> 15;

	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC || !h.vq.event_idx)
		return true;
	for (uint32_t i = 0; i < h.since_sig && i < 2u * h.vq.num; i++) {
		if (pos == off && wrap == ewrap)
			return true;
		step(h.vq.num, &pos, &wrap);
	}
	return false;
}

static void check_interrupt(void)
{
	const struct vring_packed_desc_event *ev = (const void *)(gm.host + h.vq.avail_gpa);
	bool want = interrupt_walk(ev->flags, ev->off_wrap);

	CHECK(vq_should_interrupt(&h.vq) == want);
	h.sig_pos = h.used_pos, h.sig_wrap = h.used_wrap, h.since_sig = 0;
	reached.interrupts_checked++;
}

/* Push every held chain, in the order byte 1 says; each used descriptor
 * must land where the used side is, and nothing stays in flight. */
static void complete_all(uint8_t ctrl, bool refill_ring)
{
	unsigned order[HOLD_MAX];

	for (unsigned i = 0; i < h.nheld; i++)
		order[i] = ctrl & 4 ? h.nheld - 1 - i : i;
	if (ctrl & 8)
		for (unsigned i = h.nheld; i > 1; i--) {
			unsigned j = (unsigned)(xorshift(&h.x) % i), t = order[i - 1];

			order[i - 1] = order[j], order[j] = t;
		}
	for (unsigned i = 0; i < h.nheld; i++) {
		const struct held *k = &h.held[order[i]];
		uint32_t len = (uint32_t)(xorshift(&h.x) % 3 == 0 ? 0 : h.x >> 40);
		const struct vring_packed_desc *u = &h.ring[h.used_pos];

		reached.out_of_order += order[i] != i;
		vq_push_used(&h.vq, k->id, len);
		CHECK(u->id == k->id && u->len == len &&
		      u->flags == ((h.used_wrap ? AVAIL_F | USED_F : 0) | (len ? VRING_DESC_F_WRITE : 0)));
		CHECK(h.vq.pk.id_slots[k->id] == 0);
		for (unsigned s = 0; s < k->slots; s++)
			step(h.vq.num, &h.used_pos, &h.used_wrap);
		h.since_sig += k->slots;
	}
	/* Only now: a used descriptor of this batch may land on a slot an
	 * earlier chain of it took, which the driver cannot reuse before. */
	if (refill_ring && h.nheld)
		refill_batch(ctrl & 64);
	h.nheld = 0;
	CHECK(h.vq.pk.in_flight == 0 && h.vq.pk.next_used == h.used_pos && h.vq.pk.used_wrap == h.used_wrap);
	check_interrupt();
}

/* The guest at work between two walks: one ring byte and one anywhere. */
static void mutate_ram(void)
{
	uint64_t r = xorshift(&h.x);

	((uint8_t *)h.ring)[r % (16u * h.vq.num)] = (uint8_t)(r >> 32);
	gm.host[xorshift(&h.x) % RAM] = (uint8_t)h.x;
	reached.mutated++;
}

/* Unpop the chain just taken and pop it again: the same chain. */
static void unpop_and_retake(void)
{
	struct held *k = &h.held[h.nheld];

	vq_unpop_avail(&h.vq);
	CHECK(h.vq.pk.next_avail == k->pos && h.vq.pk.avail_wrap == k->wrap && h.vq.pk.id_slots[k->id] == 0);
	CHECK(vq_pop_avail(&h.vq, &h.again) == 1);
	CHECK(h.again.head == h.chain.head && h.again.count == h.chain.count && h.again.out_len == h.chain.out_len &&
	      h.again.in_len == h.chain.in_len && h.again.indirect == h.chain.indirect);
	for (unsigned i = 0; i < h.chain.count; i++)
		CHECK(h.again.buf[i].host == h.chain.buf[i].host && h.again.buf[i].len == h.chain.buf[i].len &&
		      h.again.buf[i].device_writes == h.chain.buf[i].device_writes);
	reached.unpops++;
}

/* After the walks: the device area says what enable_notify and suppress
 * wrote, and the recheck agrees with the ring. */
static void check_notify_marks(void)
{
	const struct vring_packed_desc_event *ev = (const void *)(gm.host + h.vq.used_gpa);
	bool more = vq_enable_notify_and_recheck(&h.vq);

	if (h.vq.event_idx)
		CHECK(ev->flags == VRING_PACKED_EVENT_FLAG_DESC &&
		      ev->off_wrap == (h.vq.pk.next_avail | (unsigned)h.vq.pk.avail_wrap << 15));
	else
		CHECK(ev->flags == VRING_PACKED_EVENT_FLAG_ENABLE);
	CHECK(more == (!h.vq.broken && !!(h.ring[h.vq.pk.next_avail].flags & AVAIL_F) == h.vq.pk.avail_wrap));
	vq_suppress_notify(&h.vq);
	CHECK(ev->flags == VRING_PACKED_EVENT_FLAG_DISABLE);
}

/* ---- one input ---- */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t cfg, ctrl;
	unsigned hold, pops = 0, max_pops;
	enum vq_violation verdict;
	bool mutate;

	if (!gm.host && gmem_map(&gm, RAM) < 0)
		abort();
	if (size < 12)
		return 0;
	for (size_t off = 0; off < RAM; off += size)
		memcpy(gm.host + off, data, off + size <= RAM ? size : RAM - off);

	cfg = data[0], ctrl = data[1];
	memset(&h.vq, 0, sizeof(h.vq));
	h.vq.name = "fuzz";
	h.vq.packed = true;
	h.vq.num = sizes[cfg & 15];
	h.vq.indirect_ok = cfg & 16;
	h.vq.event_idx = cfg & 32;
	mutate = cfg & 64;
	h.vq.max_chain_bytes = cfg & 128 ? 1u + take16(data, size, 8) : 0;
	h.vq.desc_gpa = (uint64_t)take16(data, size, 2) << 2;
	h.vq.avail_gpa = take16(data, size, 4);
	h.vq.used_gpa = take16(data, size, 6);
	verdict = enable_verdict(&h.vq);
	if (vq_enable(&h.vq, &gm) < 0) {
		CHECK(!h.vq.ready && h.vq.broken && h.vq.violation == verdict && verdict != VQV_NONE);
		reached.violations |= 1u << h.vq.violation;
		reached.sizes_refused += verdict == VQV_SIZE;
		return 0;
	}
	CHECK(verdict == VQV_NONE && h.vq.ready && !h.vq.broken);
	reached.rings_enabled++;

	h.ring = (struct vring_packed_desc *)(gm.host + h.vq.desc_gpa);
	h.used_pos = h.sig_pos = 0;
	h.used_wrap = h.sig_wrap = true;
	h.since_sig = 0;
	h.nheld = 0;
	h.x = 0x9e3779b97f4a7c15ull ^ take16(data, size, 10) ^ (uint64_t)size << 20;
	hold = 1 + (ctrl & 3);
	/* A few laps at most, whatever the ring holds: bounded work. */
	max_pops = 4u * h.vq.num + 8;
	while (pops < max_pops) {
		uint16_t pos = h.vq.pk.next_avail;
		bool wrap = h.vq.pk.avail_wrap;
		int rc = vq_pop_avail(&h.vq, &h.chain);

		if (rc < 0) {
			CHECK(h.vq.broken && packed_chain_rule(h.vq.violation) && strchr(h.vq.error, '\n') == NULL &&
			      !strncmp(h.vq.error, "fuzz queue: ", 12));
			CHECK(h.vq.pk.next_avail == pos && h.vq.pk.avail_wrap == wrap);
			reached.violations |= 1u << h.vq.violation;
			reached.refused++;
			break;
		}
		CHECK(!h.vq.broken && h.vq.violation == VQV_NONE);
		if (rc == 0) {
			CHECK(!!(h.ring[pos].flags & AVAIL_F) != wrap && h.vq.pk.next_avail == pos);
			break;
		}
		check_popped(&h.chain, pos, wrap, &h.held[h.nheld]);
		if ((ctrl & 16) && xorshift(&h.x) % 4 == 0)
			unpop_and_retake();
		h.nheld++;
		reached.chains++;
		pops++;
		if (h.nheld == hold)
			complete_all(ctrl, ctrl & 32);
		if (mutate && h.nheld == 0)
			mutate_ram();
	}
	if (!h.vq.broken && h.nheld)
		complete_all(ctrl, false);
	check_notify_marks();
	return 0;
}

#ifndef LKVM_LIBFUZZER
/* ---- smoke test: random bytes and plausible rings ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static unsigned below(unsigned n)
{
	return (unsigned)(xorshift(&rng) % n);
}

static void put16(uint8_t *b, size_t at, unsigned v)
{
	b[at] = (uint8_t)v, b[at + 1] = (uint8_t)(v >> 8);
}

#define PLAUSIBLE_SIZE 0x3000u
#define DESC_AT 0x400u
#define DRIVER_AT 0x300u
#define DEVICE_AT 0x310u
#define TABLE_AT 0x2000u

/* A ring a driver would write for its first lap, with its rules broken
 * here and there: chains of 1-4 slots (some over the end of the ring, and
 * a last one that fills it), some indirect, and now and then an ID out of
 * range or in use, a slot with the wrong wrap bits, an unknown flag, NEXT
 * everywhere, INDIRECT inside a chain. */
static size_t gen_plausible(uint8_t *b)
{
	static const uint8_t small[] = { 1, 2, 3, 4, 5, 6, 7 };   /* sizes 2..17 */
	uint8_t si = small[below(sizeof(small))];
	uint16_t num = sizes[si], slot = 0, next_id = 0;
	unsigned hostile = below(3) == 0 ? 1 + below(6) : 0;

	for (size_t i = 0; i < PLAUSIBLE_SIZE; i++)
		b[i] = (uint8_t)xorshift(&rng);
	b[0] = (uint8_t)(si | (below(4) ? 16 : 0) | (below(2) ? 32 : 0) | (below(4) == 0 ? 64 : 0) |
			 (below(6) == 0 ? 128 : 0));
	b[1] = (uint8_t)(below(256) | (below(4) ? 32 : 0));   /* mostly refilling */
	put16(b, 2, DESC_AT >> 2), put16(b, 4, DRIVER_AT), put16(b, 6, DEVICE_AT);
	put16(b, 8, 200 + below(4000));
	/* the driver's event structure: ENABLE, DISABLE or DESC at some slot */
	put16(b, DRIVER_AT, below(num) | (below(2) ? 0x8000 : 0));
	put16(b, DRIVER_AT + 2, below(3));
	while (slot < num) {
		unsigned n = 1 + below(slot + 4 <= num ? 4 : num - slot);
		bool ind = (b[0] & 16) && below(5) == 0;
		uint16_t id = next_id++;

		if (hostile == 1 && below(4) == 0)
			id = (uint16_t)(num + below(3));                    /* ID out of range */
		if (hostile == 2 && id > 0 && below(3) == 0)
			id = (uint16_t)(id - 1);                            /* ID in flight, if held */
		if (ind)
			n = 1;
		for (unsigned s = 0; s < n; s++) {
			uint8_t *d = b + DESC_AT + 16u * ((slot + s) % num);
			uint64_t addr = 0x1000 + below(0xe000);
			uint32_t len = below(512);
			uint16_t flags = AVAIL_F | (s + 1 < n ? VRING_DESC_F_NEXT : 0) |
					 (s + 1 == n && below(2) ? VRING_DESC_F_WRITE : 0);

			if (ind) {
				unsigned entries = 1 + below(4);

				addr = TABLE_AT + 0x80u * (slot % 32) + (hostile == 6 ? below(16) : 0);
				len = 16 * entries;
				flags |= VRING_DESC_F_INDIRECT;
				for (unsigned e = 0; e < entries; e++) {
					uint8_t *t = b + addr + 16 * e;
					uint64_t ta = 0x1000 + below(0xe000);
					uint32_t tl = below(512);
					uint16_t tf = e + 1 == entries && below(2) ? VRING_DESC_F_WRITE : 0;

					memcpy(t, &ta, 8), memcpy(t + 8, &tl, 4);
					memset(t + 12, 0, 2), memcpy(t + 14, &tf, 2);
				}
			}
			if (hostile == 3 && below(6) == 0)
				flags ^= AVAIL_F | USED_F;                          /* wrong wrap bits */
			if (hostile == 4 && below(8) == 0)
				flags |= (uint16_t)(8u << below(4));                /* an unknown flag */
			if (hostile == 5)
				flags |= VRING_DESC_F_NEXT;                         /* NEXT everywhere */
			if (hostile == 6 && s > 0 && below(3) == 0)
				flags = (uint16_t)((flags & ~VRING_DESC_F_NEXT) | VRING_DESC_F_INDIRECT);
			if (slot + s >= num)                                     /* over the end: lap 2 */
				flags ^= AVAIL_F | USED_F;
			memcpy(d, &addr, 8), memcpy(d + 8, &len, 4), memcpy(d + 12, &id, 2), memcpy(d + 14, &flags, 2);
		}
		slot = (uint16_t)(slot + n);
	}
	return PLAUSIBLE_SIZE;
}

static void write_seed(const char *dir, const char *name, const uint8_t *b, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(b, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void emit_seeds(const char *dir)
{
	static const char *const names[] = { "plausible-a", "plausible-b", "plausible-c", "plausible-d", "plausible-e",
					     "plausible-f" };
	static uint8_t b[PLAUSIBLE_SIZE];

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		rng = 0xabcdef12345ull + i;
		write_seed(dir, names[i], b, gen_plausible(b));
	}
}

int main(int argc, char **argv)
{
	static const enum vq_violation must[] = { VQV_PACKED_WRAP, VQV_PACKED_CHAIN_TOO_LONG, VQV_ID_RANGE,
						  VQV_ID_IN_FLIGHT, VQV_INDIRECT_IN_CHAIN, VQV_DESC_FLAGS,
						  VQV_SIZE, VQV_RING_MISALIGNED, VQV_RING_OUTSIDE_RAM };
	unsigned long iterations = 20000;
	unsigned files = 0, missing = 0;
	static uint8_t b[PLAUSIBLE_SIZE];

	if (argc > 2 && !strcmp(argv[1], "--emit-seeds")) {
		emit_seeds(argv[2]);
		return 0;
	}
	if (argc > 1)
		files = corpus_replay("fuzz_vring_packed", argv[1]);
	if (argc > 2)
		iterations = strtoul(argv[2], NULL, 10);
	for (unsigned long it = 0; it < iterations; it++) {
		size_t n;

		if (it & 1) {
			n = gen_plausible(b);
		} else {
			n = 12 + below(sizeof(b) - 12);
			for (size_t i = 0; i < n; i++)
				b[i] = (uint8_t)xorshift(&rng);
		}
		LLVMFuzzerTestOneInput(b, n);
	}
	for (unsigned i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!(reached.violations & 1u << must[i])) {
			printf("violation %s never reached\n", vq_violation_name(must[i]));
			missing++;
		}
	printf("%u corpus files, %lu inputs: %lu rings enabled, %lu invalid sizes refused, %lu chains (%lu indirect, "
	       "%lu over the wrap, %lu on a second lap), %lu unpops, %lu out of order, %lu walks after RAM changed, "
	       "%lu rings refused, %lu interrupt decisions, %d kinds of violation\n",
	       files, iterations, reached.rings_enabled, reached.sizes_refused, reached.chains, reached.indirect,
	       reached.straddled, reached.second_lap, reached.unpops, reached.out_of_order, reached.mutated,
	       reached.refused, reached.interrupts_checked, __builtin_popcount(reached.violations));
	if (missing || !reached.chains || !reached.indirect || !reached.straddled || !reached.second_lap ||
	    !reached.unpops || !reached.out_of_order || !reached.mutated || !reached.sizes_refused ||
	    !reached.interrupts_checked) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
