/*
 * test_guest_ring_packed.c -- the guest's packed-virtqueue driver
 * (guest-stub/vring_packed_drv.c behind guest-stub/virtio_drv.c, both
 * unmodified, via guest_virtio_drv_hosted.c) driven against the host's
 * packed ring walker (devices/vring_packed.c behind devices/virtqueue.c).
 *
 * As in test_guest_ring.c, every chain the guest adds is popped and
 * validated by the real host code and every completion the host writes is
 * reclaimed by the real guest code, so the two halves of the packed ring
 * protocol are checked against each other.  On top of that, the test keeps
 * its own count of descriptors made available and used since the start
 * (64-bit, never wrapping), and from it alone works out where every slot,
 * wrap counter and used descriptor must be: the lap of absolute descriptor
 * a is a / num, and its wrap counter is 1 on even laps.  The traces for
 * rings of 4 and 8 also carry those positions worked out by hand.
 *
 *   (1) setup: the three areas, both wrap counters at 1, the default policy
 *   (2) wrap traces at 4, 8 (by hand), 16, 256, 1024: several laps, chains
 *       straddling the end of the ring, direct and indirect, out-of-order
 *       completion; tokens, lengths and device-written bytes come back; the
 *       free ID list is whole after every reclaim and round; then random
 *       rounds on a ring of 8 past the 16-bit buffer counters (70000)
 *   (3) the kick's view: "used" counts completions not yet reclaimed
 *       (gvq_outstanding, a static threshold), a full ring reads 0
 *   (4) notifications both ways: host DISABLE/ENABLE as the guest's
 *       NO_NOTIFY, event-desc against a model of the host's desc event,
 *       the guest's DISABLE/ENABLE/DESC as the host's interrupt decision
 *   (5) indirect_use as the workloads drive it, and priced tables
 *       (gvq_set_itable_cost) counted as on the split ring
 *   (6) a hostile device: used id out of range, not in flight (never
 *       handed out, not yet published, completed twice), used flags with
 *       the wrong wrap counter: the guest gives up (guest_exit caught)
 *
 * The fake machine, shared with test_guest_ring.c (guest RAM mapped twice,
 * the register window, alloc_pages, guest_exit): guest_ring_fixture.h.
 */
#include "guest_ring_fixture.h"
#include "lguest_kvm_abi.h"

#define F_AVAIL ((uint16_t)(1u << VRING_PACKED_DESC_F_AVAIL))
#define F_USED ((uint16_t)(1u << VRING_PACKED_DESC_F_USED))
#define MARKS (F_AVAIL | F_USED)
#define WRAP_BIT (1u << VRING_PACKED_EVENT_F_WRAP_CTR)

/* The test's own count of descriptors (ring slots) made available and
 * used since setup, never wrapping; see the top of the file. */
static uint64_t abs_published, abs_used;

/* A fresh packed guest queue 1 of `num` (policy by name, 0 = the default)
 * and the host queue built from the registers it programmed, with
 * VIRTIO_F_RING_PACKED negotiated as the transport would copy it; the
 * absolute counts start again. */
static void setup_q(uint16_t num, bool indirect, bool event_idx, const char *policy)
{
	setup_queue(num, indirect, event_idx, policy, true);
	abs_published = abs_used = 0;
}

/* ---- positions from the absolute counts ---------------------------------- */

static uint16_t slot_of(uint64_t a) { return (uint16_t)(a % q.num); }
static bool wrap_of(uint64_t a) { return (a / q.num) % 2 == 0; }   /* the counters start at 1 */
static uint16_t avail_marks_of(uint64_t a) { return wrap_of(a) ? F_AVAIL : F_USED; }
static uint16_t used_marks_of(uint64_t a) { return wrap_of(a) ? MARKS : 0; }
static uint16_t marks_at(uint16_t slot) { return q.pk.desc[slot].flags & MARKS; }

/* ---- buffers -------------------------------------------------------------- */

#define POOL_SIZE (4u << 20)
#define BUF_REGION 2048u    /* per buffer in flight: 16 segments of at most 128 bytes */

struct rec {
	struct gvq_seg seg[16];
	unsigned n, need;
	bool indirect;
	uint32_t seed, used_len;
	uint16_t id;           /* the buffer ID, as the host popped it */
	uint64_t head_abs;     /* absolute position of its head */
};

/* Buffer `r` in region `region` of the pool: n segments, the last one
 * device-writable if `writes`, filled with its seed's pattern. */
static void make_rec(struct rec *r, unsigned region, unsigned n, bool indirect, bool writes, uint32_t seed)
{
	uint8_t *base = pool + (size_t)region * BUF_REGION;

	r->n = n;
	r->indirect = indirect && n <= 16;   /* gvq_add goes direct beyond 16 */
	r->need = r->indirect ? 1 : n;
	r->seed = seed;
	r->used_len = writes ? 1 + rnd() % 100 : (rnd() & 1 ? 0 : rnd() % 5000);
	for (unsigned k = 0; k < n; k++) {
		uint32_t len = 1 + (seed + k * 37) % 120;

		for (uint32_t j = 0; j < len; j++)
			base[128 * k + j] = pattern(seed + k, j);
		r->seg[k] = (struct gvq_seg){ .addr = base + 128 * k, .len = len,
					      .device_writes = writes && k + 1 == n };
	}
}

/* All num buffer IDs on the guest's private free list, distinct, none in
 * flight, and num free slots. */
static bool ids_all_free(void)
{
	static bool seen[1024];
	uint16_t i = q.free_head;

	memset(seen, 0, sizeof(seen));
	for (unsigned k = 0; k < q.num; k++) {
		if (i >= q.num || seen[i] || q.extra[i].chain_len || q.extra[i].itable)
			return false;
		seen[i] = true;
		i = q.extra[i].next;
	}
	return q.num_free == q.num;
}

/* In the middle of a round (nothing pending): the IDs in flight hold
 * exactly the slots not free, and the free list has the other IDs. */
static bool ids_consistent(void)
{
	static bool seen[1024];
	unsigned held = 0, busy = 0;
	uint16_t i = q.free_head;

	memset(seen, 0, sizeof(seen));
	for (unsigned id = 0; id < q.num; id++)
		if (q.extra[id].chain_len)
			held += q.extra[id].chain_len, busy++, seen[id] = true;
	for (unsigned k = 0; k < q.num - busy; k++) {
		if (i >= q.num || seen[i])
			return false;
		seen[i] = true;
		i = q.extra[i].next;
	}
	return held + q.num_free == q.num;
}

/* ---- (1) setup ------------------------------------------------------------ */

static void test_setup(void)
{
	setup_q(16, false, false, NULL);
	CHECK(q.packed && reg(VIRTIO_MMIO_QUEUE_SEL) == 1 && reg(VIRTIO_MMIO_QUEUE_NUM) == 16 &&
	      reg(VIRTIO_MMIO_QUEUE_READY) == 1,
	      "VIRTIO_F_RING_PACKED negotiated: gvq_setup makes a packed queue, QueueSel 1, QueueNum 16, ready");
	CHECK(vq.pk.desc == (void *)g2h(q.pk.desc) && vq.pk.driver == (void *)g2h(q.pk.driver) &&
	      vq.pk.device == (void *)g2h(q.pk.device),
	      "QueueDesc / QueueAvail / QueueUsed resolve to the guest's ring, driver area, device area");
	CHECK(((uintptr_t)q.pk.desc & 15) == 0 && ((uintptr_t)q.pk.driver & 3) == 0 && ((uintptr_t)q.pk.device & 3) == 0,
	      "alignment: ring 16, event areas 4 (spec 2.8.10.1)");
	CHECK(q.pk.avail_wrap && q.pk.used_wrap && q.pk.next_avail == 0 && q.pk.next_used == 0 &&
	      q.pk.published_pos == WRAP_BIT,
	      "both wrap counters start at 1, both positions at 0");
	CHECK(q.num_free == 16 && ids_all_free(), "16 free slots, 16 free buffer IDs");
	CHECK(q.policy.kind == NOTIFY_ALWAYS, "no EVENT_IDX: default policy always");
	setup_q(16, false, true, NULL);
	CHECK(q.policy.kind == NOTIFY_EVENT_DESC && q.event_idx, "EVENT_IDX on a packed ring: default policy event-desc");
}

/* ---- (2) wrap traces ------------------------------------------------------- */

#define NONE 0xffff

struct tbuf {
	uint8_t n;
	bool indirect, writes;
	uint16_t head_at;       /* hand-worked head slot (NONE: not given) */
	uint8_t head_wrap;
};

struct tround {
	unsigned count;
	struct tbuf b[8];
	uint8_t order[8];       /* completion order */
	uint16_t used_at[8];    /* hand-worked slot of each used descriptor, in completion order */
	uint16_t end_slot;      /* hand-worked next avail slot and wrap after the round */
	uint8_t end_wrap;
};

struct tstats {
	uint64_t rounds, buffers, straddles, bad_marks, bad_chain, bad_hand, bad_reclaim, bad_ids, bad_pos;
	uint64_t indirect, tables_shared, bad_unkicked;
};

static struct rec recs[1024];
static uint64_t tables[1024];

/* The round's buffers, added: each head where the hand says (if it says),
 * every slot of a chain but its head marked for its own lap at once, the
 * head untouched, so the host sees nothing before the kick. */
static bool add_round(const struct tbuf *bufs, unsigned count, struct tstats *st)
{
	uint64_t a = abs_published;

	for (unsigned b = 0; b < count; b++) {
		struct rec *r = &recs[b];
		uint16_t free0 = q.num_free;

		make_rec(r, b, bufs[b].n, bufs[b].indirect, bufs[b].writes, (uint32_t)(st->buffers * 17 + b + 1));
		r->head_abs = a;
		if (!gvq_add(&q, r->seg, r->n, r, r->indirect) || q.num_free != free0 - r->need) {
			st->bad_chain++;
			return false;
		}
		if (slot_of(a) + r->need > q.num)
			st->straddles++;
		if (bufs[b].head_at != NONE && (slot_of(a) != bufs[b].head_at || wrap_of(a) != bufs[b].head_wrap))
			st->bad_hand++;
		for (unsigned k = 1; k < r->need; k++)
			st->bad_marks += marks_at(slot_of(a + k)) != avail_marks_of(a + k);
		st->bad_marks += marks_at(slot_of(a)) == avail_marks_of(a);
		a += r->need;
	}
	return true;
}

/* The host walks the published chains in ring order: each one where the
 * absolute count puts it, validated against what the guest added; no two
 * indirect buffers in flight share a table.  The device then writes into
 * each writable last segment. */
static void host_pops_round(unsigned count, struct tstats *st)
{
	for (unsigned b = 0; b < count; b++) {
		struct rec *r = &recs[b];

		if (vq.pk.next_avail != slot_of(r->head_abs) || vq.pk.avail_wrap != wrap_of(r->head_abs))
			st->bad_pos++;
		tables[b] = r->indirect ? q.pk.desc[slot_of(r->head_abs)].addr : 0;
		if (vq_pop_avail(&vq, &chain) != 1 || !chain_matches(r->seg, r->n, r->indirect, r->seed)) {
			st->bad_chain++;
			continue;
		}
		r->id = chain.head;
		st->indirect += chain.indirect;
		for (unsigned t = 0; r->indirect && t < b; t++)
			st->tables_shared += tables[t] == tables[b];
		if (chain.buf[chain.count - 1].device_writes)
			chain.buf[chain.count - 1].host[0] = (uint8_t)~r->seed;
	}
	st->bad_chain += vq_pop_avail(&vq, &chain) != 0;
}

/* Complete in order[], each used descriptor at the slot and with the
 * marks the absolute used count gives (and where the hand says), and
 * reclaim it at once: its token, len and the device's byte come back. */
static void complete_round(unsigned count, const unsigned *order, const uint16_t *used_at, struct tstats *st)
{
	for (unsigned i = 0; i < count; i++) {
		struct rec *r = &recs[order[i]];
		uint32_t len = 0;
		void *tok;

		if (used_at && used_at[i] != slot_of(abs_used))
			st->bad_hand++;
		vq_push_used(&vq, r->id, r->used_len);
		if (marks_at(slot_of(abs_used)) != used_marks_of(abs_used) || q.pk.desc[slot_of(abs_used)].id != r->id)
			st->bad_marks++;
		if (q.pk.next_used != slot_of(abs_used) || q.pk.used_wrap != wrap_of(abs_used))
			st->bad_pos++;
		tok = gvq_get_used(&q, &len);
		abs_used += r->need;
		if (tok != r || len != r->used_len ||
		    (r->seg[r->n - 1].device_writes && *(const uint8_t *)r->seg[r->n - 1].addr != (uint8_t)~r->seed))
			st->bad_reclaim++;
		if (!ids_consistent())
			st->bad_ids++;
	}
}

/* One round: add, kick, pop, complete, reclaim; then everything is back:
 * all IDs free, guest and host at the positions the absolute count says. */
static void run_round(const struct tbuf *bufs, unsigned count, const unsigned *order, const uint16_t *used_at,
		      uint16_t end_slot, uint8_t end_wrap, struct tstats *st)
{
	if (!add_round(bufs, count, st))
		return;
	st->bad_unkicked += vq_pop_avail(&vq, &chain) != 0;
	gvq_kick(&q);
	for (unsigned b = 0; b < count; b++)
		st->bad_marks += marks_at(slot_of(recs[b].head_abs)) != avail_marks_of(recs[b].head_abs);
	abs_published = recs[count - 1].head_abs + recs[count - 1].need;
	host_pops_round(count, st);
	complete_round(count, order, used_at, st);
	if (gvq_get_used(&q, NULL) != NULL || !ids_all_free())
		st->bad_ids++;
	if (q.pk.next_avail != slot_of(abs_published) || q.pk.avail_wrap != wrap_of(abs_published) ||
	    q.pk.next_used != slot_of(abs_used) || q.pk.used_wrap != wrap_of(abs_used) ||
	    vq.pk.next_used != q.pk.next_used || vq.pk.used_wrap != q.pk.used_wrap ||
	    vq.pk.next_avail != q.pk.next_avail || vq.pk.avail_wrap != q.pk.avail_wrap || abs_used != abs_published)
		st->bad_pos++;
	if (end_slot != NONE && (q.pk.next_avail != end_slot || q.pk.avail_wrap != end_wrap))
		st->bad_hand++;
	st->rounds++;
	st->buffers += count;
}

static void report_trace(const char *what, const struct tstats *st, uint64_t min_laps)
{
	uint64_t laps = abs_published / q.num;

	printf("  %s: %llu rounds, %llu buffers (%llu indirect), %llu descriptors = %llu laps, %llu chains straddling "
	       "the end\n",
	       what, (unsigned long long)st->rounds, (unsigned long long)st->buffers, (unsigned long long)st->indirect,
	       (unsigned long long)abs_published, (unsigned long long)laps, (unsigned long long)st->straddles);
	CHECK(st->bad_chain == 0 && !vq.broken && st->bad_unkicked == 0,
	      "%s: the host validated every chain, and saw none before its kick (%llu bad, error \"%s\")", what,
	      (unsigned long long)st->bad_chain, vq.error);
	CHECK(st->bad_marks == 0,
	      "%s: every slot carried its lap's AVAIL/USED marks: a chain's tail at add, its head only after the "
	      "kick, each used descriptor its lap's (%llu bad)", what, (unsigned long long)st->bad_marks);
	CHECK(st->bad_pos == 0,
	      "%s: guest and host positions and wrap counters agree with the absolute count throughout (%llu bad)",
	      what, (unsigned long long)st->bad_pos);
	CHECK(st->bad_reclaim == 0, "%s: every completion came back with its token, len and device data (%llu bad)",
	      what, (unsigned long long)st->bad_reclaim);
	CHECK(st->bad_ids == 0, "%s: the free ID list was whole after every reclaim and every round (%llu bad)", what,
	      (unsigned long long)st->bad_ids);
	CHECK(st->tables_shared == 0, "%s: no indirect table shared by two buffers in flight", what);
	CHECK(laps >= min_laps && st->straddles >= 2, "%s: %llu laps (want >= %llu), %llu straddling chains (want >= 2)",
	      what, (unsigned long long)laps, (unsigned long long)min_laps, (unsigned long long)st->straddles);
}

/*
 * Ring 4, by hand.  Absolute descriptor a sits at slot a % 4 with wrap
 * counter 1 on laps 0, 2, ... (a = 0..3, 8..11, ...).
 *   r1  A 3 direct                  A@0w1 (slots 0-2)             used: A@0        -> 3w1
 *   r2  B 2 direct: 3w1, 0w0        B@3w1 C@1w0 D@2w0 (full ring)  used D@3 B@0 C@2 -> 3w0
 *       C indirect 3, D 1 direct    (D first: written at slot 3 w1, then B at 0, C at 2)
 *   r3  E 4 direct: 3w0, 0-2w1      E@3w0                          used: E@3        -> 3w1
 *   r4  F 1, G 2 (writable last),   F@3w1 G@0w0 H@2w0             used H@3 F@0 G@1 -> 3w0
 *       H indirect 2
 *   r5  I indirect 4, J 3 direct    I@3w0 J@0w1                   used J@3 I@2     -> 3w1
 * 19 descriptors: 4.75 laps; B and E straddle the end of the ring.
 */
static const struct tround ring4[] = {
	{ 1, { { 3, false, false, 0, 1 } }, { 0 }, { 0 }, 3, 1 },
	{ 3, { { 2, false, false, 3, 1 }, { 3, true, false, 1, 0 }, { 1, false, false, 2, 0 } }, { 2, 0, 1 },
	  { 3, 0, 2 }, 3, 0 },
	{ 1, { { 4, false, false, 3, 0 } }, { 0 }, { 3 }, 3, 1 },
	{ 3, { { 1, false, false, 3, 1 }, { 2, false, true, 0, 0 }, { 2, true, false, 2, 0 } }, { 2, 0, 1 },
	  { 3, 0, 1 }, 3, 0 },
	{ 2, { { 4, true, false, 3, 0 }, { 3, false, true, 0, 1 } }, { 1, 0 }, { 3, 2 }, 3, 1 },
};

/*
 * Ring 8, by hand.
 *   r1  A 5 @0w1, B ind 4 @5w1, C 2 @6w1      used C@0 A@2 B@7             -> 0w0 (a = 8)
 *   r2  D 3 @0w0, E 1 @3w0, F 4 @4w0          used E@0 F@1 D@5             -> 0w1 (16)
 *   r3  G 7 @0w1, H ind 3 @7w1                used H@0 G@1                 -> 0w0 (24)
 *   r4  I 5 @0w0                              used I@0                     -> 5w0 (29)
 *   r5  J 6 @5w0 (5-7 w0, 0-2 w1),            used K@5 J@7                 -> 5w1 (37)
 *       K 2 writable @3w1
 *   r6  L ind 8 @5w1, M 4 @6w1 (6-7 w1,       used N@5 L@0 M@1             -> 5w0 (45)
 *       0-1 w0), N 3 writable @2w0
 * 45 descriptors: 5.6 laps; J and M straddle the end.
 */
static const struct tround ring8[] = {
	{ 3, { { 5, false, false, 0, 1 }, { 4, true, false, 5, 1 }, { 2, false, false, 6, 1 } }, { 2, 0, 1 },
	  { 0, 2, 7 }, 0, 0 },
	{ 3, { { 3, false, false, 0, 0 }, { 1, false, false, 3, 0 }, { 4, false, false, 4, 0 } }, { 1, 2, 0 },
	  { 0, 1, 5 }, 0, 1 },
	{ 2, { { 7, false, false, 0, 1 }, { 3, true, false, 7, 1 } }, { 1, 0 }, { 0, 1 }, 0, 0 },
	{ 1, { { 5, false, false, 0, 0 } }, { 0 }, { 0 }, 5, 0 },
	{ 2, { { 6, false, false, 5, 0 }, { 2, false, true, 3, 1 } }, { 1, 0 }, { 5, 7 }, 5, 1 },
	{ 3, { { 8, true, false, 5, 1 }, { 4, false, false, 6, 1 }, { 3, false, true, 2, 0 } }, { 2, 0, 1 },
	  { 5, 0, 1 }, 5, 0 },
};

static void run_hand_trace(const char *what, uint16_t num, const struct tround *rounds, unsigned nrounds)
{
	struct tstats st = { 0 };

	setup_q(num, true, false, NULL);
	for (unsigned i = 0; i < nrounds; i++) {
		unsigned order[8];

		for (unsigned k = 0; k < rounds[i].count; k++)
			order[k] = rounds[i].order[k];
		run_round(rounds[i].b, rounds[i].count, order, rounds[i].used_at, rounds[i].end_slot, rounds[i].end_wrap,
			  &st);
	}
	report_trace(what, &st, 4);
	CHECK(st.bad_hand == 0, "%s: heads, used descriptors and end positions where worked out by hand (%llu bad)", what,
	      (unsigned long long)st.bad_hand);
}

/* Rounds that fill the ring (or stop early, one in eight buffers) with
 * chains of 1-16 segments (at most the ring size, as gvq_add wants) -- 3, 7 and 11 often, so that chains straddle
 * the end -- a quarter indirect, a third with a writable last segment;
 * completed in order, reversed, rotated or odd-then-even.  Until `laps`
 * laps and at least `min_buffers` buffers. */
static void run_generated_trace(const char *what, uint16_t num, uint64_t laps, uint64_t min_buffers,
				struct tstats *st)
{
	static struct tbuf bufs[1024];
	static unsigned order[1024];
	static const uint8_t sizes[] = { 3, 7, 1, 2, 16, 5, 3, 7, 11, 4 };

	setup_q(num, true, false, NULL);
	for (unsigned round = 0; abs_published < laps * num || st->buffers < min_buffers; round++) {
		unsigned count = 0, room = num, mode = round % 4, half;

		while (count < 1024) {
			struct tbuf *b = &bufs[count];
			unsigned need;

			b->n = sizes[rnd() % sizeof(sizes)];
			if (b->n > num)   /* gvq_add takes no more segments than slots */
				b->n = (uint8_t)num;
			b->indirect = rnd() % 4 == 0;
			b->writes = rnd() % 3 == 0;
			b->head_at = NONE;
			need = b->indirect ? 1 : b->n;
			if (need > room)
				break;
			room -= need;
			count++;
			if (rnd() % 8 == 0)
				break;
		}
		if (!count)
			continue;
		half = (count + 1) / 2;
		for (unsigned i = 0; i < count; i++)
			order[i] = mode == 0 ? i : mode == 1 ? count - 1 - i : mode == 2 ? (i + round) % count
			    : i < half ? 2 * i : 2 * (i - half) + 1;
		run_round(bufs, count, order, NULL, NONE, 0, st);
		if (st->bad_chain)
			break;
	}
	report_trace(what, st, laps);
}

static void test_wrap_traces(void)
{
	struct tstats st16 = { 0 }, st256 = { 0 }, st1024 = { 0 }, st8 = { 0 };
	bool counters;

	run_hand_trace("ring 4 by hand", 4, ring4, sizeof(ring4) / sizeof(ring4[0]));
	run_hand_trace("ring 8 by hand", 8, ring8, sizeof(ring8) / sizeof(ring8[0]));
	run_generated_trace("ring 16", 16, 6, 0, &st16);
	run_generated_trace("ring 256", 256, 5, 0, &st256);
	run_generated_trace("ring 1024", 1024, 4, 0, &st1024);
	/* past the 16-bit counters: buffers, not descriptors */
	run_generated_trace("ring 8, 70000 buffers", 8, 0, 70000, &st8);
	counters = q.avail_shadow == (uint16_t)st8.buffers && q.avail_published == (uint16_t)st8.buffers &&
		   q.last_used == (uint16_t)st8.buffers && st8.buffers > 65536;
	CHECK(counters, "the buffer counters wrapped 16 bits and agree: added %u, published %u, reclaimed %u (%llu)",
	      q.avail_shadow, q.avail_published, q.last_used, (unsigned long long)st8.buffers);
	CHECK(q.bufs_direct + q.bufs_indirect == st8.buffers && q.bufs_indirect == st8.indirect,
	      "bufs_direct + bufs_indirect = buffers, indirect as the host saw them");
}

/* ---- (3) the kick's view of "used" ----------------------------------------- */

static void test_kick_view(void)
{
	uint16_t ids[4];

	/* static:2 under DISABLE notifies iff obufs < 2 <= obufs + added, so
	 * it shows which "used" the kick saw. */
	setup_q(8, false, false, "static:2");
	vq_suppress_notify(&vq);
	for (unsigned i = 0; i < 3; i++)
		add1();
	gvq_kick(&q);
	CHECK(notified(), "static:2, 0 outstanding + 3: notify");
	for (unsigned i = 0; i < 3; i++) {
		vq_pop_avail(&vq, &chain);
		ids[i] = chain.head;
	}
	vq_push_used(&vq, ids[0], 0);
	vq_push_used(&vq, ids[1], 0);
	CHECK(gvq_outstanding(&q) == 1 && q.last_used == 0,
	      "device used 2 of 3, none reclaimed: gvq_outstanding 1 (got %u)", gvq_outstanding(&q));
	add1();
	gvq_kick(&q);
	/* obufs = 3 published - 2 used = 1 < 2 <= 2: notify.  Counting only
	 * what was reclaimed (0) would give 3 and stay quiet. */
	CHECK(notified(), "kick sees used = 2 (peeked, not reclaimed): 1 + 1 crosses 2, notify");
	CHECK(gvq_get_used(&q, NULL) == pool && gvq_get_used(&q, NULL) == pool && gvq_get_used(&q, NULL) == NULL &&
	      gvq_outstanding(&q) == 2,
	      "2 reclaimed: outstanding stays 2 (4 published, 2 used)");
	vq_pop_avail(&vq, &chain);
	ids[3] = chain.head;
	vq_push_used(&vq, ids[3], 0);   /* out of order: the 4th before the 3rd */
	CHECK(gvq_outstanding(&q) == 1, "the 4th used before the 3rd: outstanding 1 (got %u)", gvq_outstanding(&q));
	vq_push_used(&vq, ids[2], 0);
	CHECK(gvq_outstanding(&q) == 0, "both used: outstanding 0");
	while (gvq_get_used(&q, NULL))
		;
	CHECK(ids_all_free(), "all back");

	/* a full ring, then a kick with nothing added: the seed's modulo reads 0 */
	setup_q(8, false, false, NULL);
	for (unsigned i = 0; i < 8; i++)
		add1();
	CHECK(!gvq_add(&q, &(struct gvq_seg){ .addr = pool, .len = 8 }, 1, pool, false) && q.ring_full == 1,
	      "9th add on a ring of 8 refused: ring_full 1");
	gvq_kick(&q);
	gvq_kick(&q);
	CHECK(q.full_reads_zero == 1 && gvq_outstanding(&q) == 8,
	      "an empty kick with all 8 outstanding counts full_reads_zero 1");
	host_drain();
	CHECK(ids_all_free() && gvq_outstanding(&q) == 0, "drained");
}

/* ---- (4) notifications both ways -------------------------------------------- */

static uint16_t device_flags(void) { return q.pk.device->flags; }

static void test_host_to_guest(void)
{
	char got[16], want[] = "...N....";
	bool ok;

	setup_q(16, false, false, NULL);   /* always */
	CHECK(device_flags() == VRING_PACKED_EVENT_FLAG_ENABLE, "host enabled the queue: device flags ENABLE");
	add1();
	CHECK(!vq_has_avail(&vq) && !notified(), "add alone publishes nothing, no notify");
	gvq_kick(&q);
	CHECK(vq_has_avail(&vq) && reg(VIRTIO_MMIO_QUEUE_NOTIFY) == 1 && notified() && q.notifies == 1,
	      "kick publishes; flags ENABLE: QueueNotify = queue index 1");
	vq_suppress_notify(&vq);
	CHECK(device_flags() == VRING_PACKED_EVENT_FLAG_DISABLE, "host suppress: device flags DISABLE");
	add1();
	gvq_kick(&q);
	CHECK(!notified() && q.suppressed == 1 && q.notifies == 1, "DISABLE is NO_NOTIFY: always keeps quiet");
	CHECK(vq_enable_notify_and_recheck(&vq) && device_flags() == VRING_PACKED_EVENT_FLAG_ENABLE,
	      "host re-enables (ENABLE) and finds the buffers waiting");
	add1();
	gvq_kick(&q);
	CHECK(notified() && q.notifies == 2, "ENABLE again: notify");
	host_drain();

	setup_q(16, false, false, "static:4");
	vq_suppress_notify(&vq);
	for (unsigned i = 0; i < 8; i++) {
		add1();
		gvq_kick(&q);
		got[i] = notified() ? 'N' : '.';
	}
	got[8] = 0;
	CHECK(!strcmp(got, want) && q.notifies == 1 && q.suppressed == 7,
	      "static:4 under DISABLE, 8 single kicks, host idle: \"%s\" (want \"%s\")", got, want);
	host_drain();
	for (unsigned i = 0; i < 5; i++)
		add1();
	gvq_kick(&q);
	ok = notified();
	add1();
	gvq_kick(&q);
	CHECK(ok && !notified(), "batch of 5 from 0 crosses 4 (notify), the next from 5 does not");
	host_drain();

	setup_q(16, false, false, "dynamic");
	vq_suppress_notify(&vq);
	gvq_notify_full(&q);
	CHECK(notified() && q.forced == 1 && q.policy.threshold == 7,
	      "notify_full under DISABLE: forced notify, dynamic threshold 8 -> 7");
	vq_enable_notify_and_recheck(&vq);
	gvq_notify_full(&q);
	CHECK(notified() && q.forced == 2 && q.policy.threshold == 7, "notify_full under ENABLE: threshold stays 7");
}

/*
 * event-desc against a model of the host's desc event.  The test knows,
 * in absolute descriptors, how far the guest has published and how far
 * the host has taken; when the host re-arms, its event is the descriptor
 * it takes next, written as (slot, wrap counter), i.e. absolute position
 * mod 2 * num.  A kick publishing [before, after) must notify iff the
 * flags are ENABLE, or DESC and one of those descriptors has the event's
 * (slot, wrap) -- never under DISABLE.  Two laps apart look the same to
 * the ring, so a host that re-armed and then took more than a lap without
 * re-arming can get a spurious notify (counted as "aliased"; Linux's rule
 * has the same property); what must never happen is a missed one: the
 * event, absolutely, among the published descriptors and no notify.
 * Random adds (chains of 1-3 slots or indirect, so kicks straddle the
 * end), partial pops, re-arms and suppressions over many laps.
 */
static bool event_published(uint64_t event_abs, uint64_t before, uint64_t after, uint16_t num)
{
	for (uint64_t a = before; a < after; a++)
		if (a % (2u * num) == event_abs % (2u * num))
			return true;
	return false;
}

static void event_desc_model_run(uint16_t num, unsigned steps)
{
	uint64_t host_abs = 0, event_abs = 0, kicks = 0, bad = 0, missed = 0, aliased = 0, desc_yes = 0, desc_no = 0;
	uint64_t rearms = 0;
	uint16_t mode = VRING_PACKED_EVENT_FLAG_DESC;   /* vq_enable armed 0|w1 */
	struct gvq_seg seg[3];

	setup_q(num, true, true, "event-desc");
	CHECK(device_flags() == VRING_PACKED_EVENT_FLAG_DESC && q.pk.device->off_wrap == WRAP_BIT,
	      "ring %u, EVENT_IDX: the host armed desc event 0|w1 at enable", num);
	for (unsigned k = 0; k < 3; k++)
		seg[k] = (struct gvq_seg){ .addr = pool + 64 * k, .len = 16 };
	for (unsigned step = 0; step < steps; step++) {
		unsigned r = rnd() % 8;

		if (r < 4) {
			uint64_t before = abs_published, added = 0;
			unsigned nbufs = 1 + rnd() % 3;
			bool want, got, absolute;

			for (unsigned b = 0; b < nbufs; b++) {
				unsigned n = 1 + rnd() % 3;
				bool ind = rnd() % 4 == 0;
				uint16_t free0 = q.num_free;

				if (!gvq_add(&q, seg, n, pool, ind))
					break;
				added += free0 - q.num_free;
			}
			gvq_kick(&q);
			abs_published += added;
			absolute = event_abs >= before && event_abs < abs_published;
			want = mode == VRING_PACKED_EVENT_FLAG_ENABLE ||
			       (mode == VRING_PACKED_EVENT_FLAG_DESC &&
				event_published(event_abs, before, abs_published, num));
			got = notified();
			bad += got != want;
			kicks++;
			if (mode == VRING_PACKED_EVENT_FLAG_DESC) {
				want ? desc_yes++ : desc_no++;
				missed += absolute && !got;
				aliased += got && !absolute;
			}
		} else if (r < 6) {
			/* the host takes some of what is published, completes it */
			unsigned take = rnd() % (num + 1u);
			uint16_t ids[1024];
			unsigned got = 0;

			while (got < take && vq_pop_avail(&vq, &chain) == 1) {
				ids[got++] = chain.head;
				host_abs += chain.indirect ? 1 : chain.count;
			}
			for (unsigned i = got; i-- > 0;)
				vq_push_used(&vq, ids[i], 0);
			while (gvq_get_used(&q, NULL))
				;
		} else if (r == 6) {
			vq_enable_notify_and_recheck(&vq);
			mode = VRING_PACKED_EVENT_FLAG_DESC;
			event_abs = host_abs;
			rearms++;
			bad += q.pk.device->off_wrap != (uint16_t)(slot_of(host_abs) | wrap_of(host_abs) * WRAP_BIT);
		} else {
			vq_suppress_notify(&vq);
			mode = VRING_PACKED_EVENT_FLAG_DISABLE;
		}
		bad += device_flags() != mode;
	}
	printf("  ring %u: %llu kicks over %llu laps, %llu re-arms; under DESC %llu should notify, %llu not; %llu "
	       "aliased (event over a lap stale)\n", num, (unsigned long long)kicks,
	       (unsigned long long)(abs_published / num), (unsigned long long)rearms, (unsigned long long)desc_yes,
	       (unsigned long long)desc_no, (unsigned long long)aliased);
	CHECK(bad == 0 && !vq.broken && desc_yes > 10 && desc_no > 10 && abs_published / num > 20,
	      "event-desc, ring %u: every kick notified exactly when a descriptor it published had the host's "
	      "event slot and wrap (%llu bad)", num, (unsigned long long)bad);
	CHECK(missed == 0, "event-desc, ring %u: no kick that published the host's event descriptor stayed quiet "
			   "(%llu missed)", num, (unsigned long long)missed);
}

static void test_guest_to_host(void)
{
	uint64_t bad = 0;

	setup_q(16, false, false, NULL);
	gvq_disable_interrupts(&q);
	CHECK(q.pk.driver->flags == VRING_PACKED_EVENT_FLAG_DISABLE, "guest disables interrupts: driver flags DISABLE");
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(!vq_should_interrupt(&vq), "DISABLE: the host does not interrupt");
	CHECK(!gvq_enable_interrupts(&q) && q.pk.driver->flags == VRING_PACKED_EVENT_FLAG_ENABLE,
	      "enabling (ENABLE) with a buffer used meanwhile returns false: re-poll");
	gvq_get_used(&q, NULL);
	CHECK(gvq_enable_interrupts(&q), "enabling on a drained ring returns true");
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(vq_should_interrupt(&vq), "ENABLE: the host interrupts");
	gvq_get_used(&q, NULL);

	setup_q(16, false, true, "event-desc");
	gvq_disable_interrupts(&q);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(!vq_should_interrupt(&vq), "EVENT_IDX, DISABLE: no interrupt");
	gvq_get_used(&q, NULL);
	CHECK(gvq_enable_interrupts(&q) && q.pk.driver->flags == VRING_PACKED_EVENT_FLAG_DESC &&
	      q.pk.driver->off_wrap == (1 | WRAP_BIT),
	      "EVENT_IDX: enable writes DESC at the next used slot, 1|w1 (off_wrap 0x%x)", q.pk.driver->off_wrap);
	add1();
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(vq_should_interrupt(&vq), "the used descriptor at slot 1 reaches the event: interrupt");
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(!vq_should_interrupt(&vq), "the next one, past the event and not re-armed: no interrupt");
	while (gvq_get_used(&q, NULL))
		;
	/* one buffer at a time round the ring three times: each re-arm names
	 * the next used slot on its lap, and that one interrupts */
	for (unsigned i = 0; i < 48; i++) {
		uint16_t want_ow = (uint16_t)(q.pk.next_used | q.pk.used_wrap * WRAP_BIT);

		bad += !gvq_enable_interrupts(&q) || q.pk.driver->off_wrap != want_ow;
		add1();
		gvq_kick(&q);
		vq_pop_avail(&vq, &chain);
		vq_push_used(&vq, chain.head, 0);
		bad += !vq_should_interrupt(&vq);
		gvq_get_used(&q, NULL);
		gvq_disable_interrupts(&q);
	}
	CHECK(bad == 0 && q.pk.next_used == 3 && !q.pk.used_wrap,
	      "48 re-arms across three wraps: each DESC names next used slot and lap, each interrupts (%llu bad)",
	      (unsigned long long)bad);
}

/* ---- (5) indirect_use as the workloads drive gvq_add ------------------------ */

static void test_indirect_rule(void)
{
	static bool want_indirect[128];
	struct gvq_seg seg[2] = { { .addr = NULL }, { .addr = NULL } };
	uint32_t thr = indirect_default_threshold(128);
	unsigned added = 0, bad_rule = 0, bad_host = 0;

	setup_q(128, true, false, NULL);
	seg[0] = (struct gvq_seg){ .addr = pool, .len = 12 };
	seg[1] = (struct gvq_seg){ .addr = pool + 4096, .len = 1500 };
	for (;;) {
		uint16_t before = q.num_free;
		bool ind = indirect_use(INDIRECT_THRESHOLD, thr, 2, q.num_free);

		if (!gvq_add(&q, seg, 2, seg, ind))
			break;
		bad_rule += ind != (before < 16);
		want_indirect[added++] = ind;
	}
	/* as on the split ring: 57 direct (128..16 free), 14 indirect (15..1 ... 14
	 * of them down to 2 free, then 1 more at 1), 0 left */
	CHECK(bad_rule == 0 && added == 71 && q.bufs_direct == 57 && q.bufs_indirect == 14 && q.ring_full == 1 &&
	      q.num_free == 0,
	      "ring 128: 57 direct + 14 indirect, ring_full 1 (direct %llu, indirect %llu)",
	      (unsigned long long)q.bufs_direct, (unsigned long long)q.bufs_indirect);
	gvq_kick(&q);
	for (unsigned i = 0; i < added; i++) {
		if (vq_pop_avail(&vq, &chain) != 1 || chain.indirect != want_indirect[i] || chain.count != 2 ||
		    chain.out_len != 1512)
			bad_host++;
		vq_push_used(&vq, chain.head, 0);
	}
	while (gvq_get_used(&q, NULL))
		;
	CHECK(bad_host == 0 && ids_all_free() && !vq.broken, "the host pops 71 chains, direct/indirect as added; all back");
	CHECK(q.itables_built == q.bufs_indirect, "unpriced: tables built = indirect buffers (%llu)",
	      (unsigned long long)q.itables_built);

	/* priced tables: the packed ring builds them where the split ring
	 * does (gvq_itable_alloc), so the same accounting holds */
	{
		const uint64_t ticks = 3000;
		uint64_t built0 = q.itables_built, ticks0 = q.itable_ticks, ind0 = q.bufs_indirect;

		gvq_set_itable_cost(&q, ticks, 2, 1u << 20);
		added = 0;
		while (gvq_add(&q, seg, 2, seg, indirect_use(INDIRECT_THRESHOLD, thr, 2, q.num_free)))
			added++;
		gvq_kick(&q);
		while (vq_pop_avail(&vq, &chain) == 1)
			vq_push_used(&vq, chain.head, 0);
		while (gvq_get_used(&q, NULL))
			;
		CHECK(added == 71 && q.bufs_indirect - ind0 == 14 && q.itables_built - built0 == 14 && ids_all_free() &&
		      !vq.broken, "priced, packed: 71 buffers, 14 tables built for 14 indirect ones, all back");
		CHECK(q.itable_ticks - ticks0 >= 14 * ticks && q.icost.cold_line != 0,
		      "priced, packed: 14 tables took %llu ticks, at least 14 x %llu; the cold walk moved",
		      (unsigned long long)(q.itable_ticks - ticks0), (unsigned long long)ticks);
	}
}

/* ---- (6) a hostile device ---------------------------------------------------- */

/* The device writes a used descriptor at the guest's next used slot. */
static void device_writes_used(uint16_t id, uint16_t flags)
{
	struct vring_packed_desc *d = &vq.pk.desc[q.pk.next_used];

	d->id = id;
	d->len = 0;
	__atomic_store_n(&d->flags, flags, __ATOMIC_RELEASE);
}

static uint16_t used_flags_now(void) { return q.pk.used_wrap ? MARKS : 0; }

static void test_hostile(void)
{
	void *tok = NULL;
	int st;

	setup_q(8, false, false, NULL);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	device_writes_used(8, used_flags_now());
	CHECK(gvq_has_used(&q), "a used descriptor with id 8 wakes a waiter");
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && q.num_free == 7 && q.last_used == 0,
	      "used id 8 on a ring of 8: guest_exit(FAILED) (status %d), nothing reclaimed", st);

	setup_q(8, false, false, NULL);
	add1();   /* ID 0 */
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	device_writes_used(5, used_flags_now());
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && q.num_free == 7, "used id 5, never handed out: guest_exit(FAILED) (status %d)", st);

	setup_q(8, false, false, NULL);
	add1();   /* ID 0, published */
	gvq_kick(&q);
	add1();   /* ID 1, added but not yet published */
	vq_pop_avail(&vq, &chain);
	device_writes_used(1, used_flags_now());
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED, "used id 1, added but not published: not in flight, guest_exit(FAILED) (status %d)",
	      st);

	setup_q(8, false, false, NULL);
	add1();
	gvq_kick(&q);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	st = get_used_expecting_exit(&tok);
	CHECK(st == -1 && tok == pool && q.last_used == 1, "first completion of ID 0 reclaimed normally");
	device_writes_used(chain.head, used_flags_now());   /* ID 0 again, at slot 1 */
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && q.num_free == 7 && q.last_used == 1,
	      "ID 0 completed twice: guest_exit(FAILED) (status %d), free count not inflated", st);

	/* wrong marks at the next used slot, with a buffer in flight: lap 0
	 * (wrap 1) wants AVAIL = USED = 1 for used, AVAIL = 1, USED = 0 for
	 * still available; AVAIL = 0 with either USED is nobody's */
	setup_q(8, false, false, NULL);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	device_writes_used(chain.head, F_USED);
	CHECK(gvq_has_used(&q), "AVAIL 0, USED 1 on lap 0 (wrap 1): a waiter wakes up");
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && q.last_used == 0,
	      "used flags AVAIL 0 / USED 1 against wrap counter 1: guest_exit(FAILED) (status %d)", st);
	setup_q(8, false, false, NULL);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	device_writes_used(chain.head, 0);
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED, "used flags AVAIL 0 / USED 0 (last lap's used) on lap 0: guest_exit(FAILED) (status %d)",
	      st);
	/* and on lap 1 (wrap 0): the lap-0 "used" pattern is wrong there */
	setup_q(8, false, false, NULL);
	for (unsigned i = 0; i < 8; i++)
		add1();
	gvq_kick(&q);
	host_drain();
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	device_writes_used(chain.head, MARKS);
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && !q.pk.used_wrap,
	      "used flags AVAIL 1 / USED 1 on lap 1 (wrap 0): guest_exit(FAILED) (status %d)", st);

	/* a used descriptor without WRITE has written nothing: its len is
	 * reserved, and ignored (2.8.4) */
	setup_q(8, false, false, NULL);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	device_writes_used(chain.head, used_flags_now());
	{
		uint32_t len = 1;

		vq.pk.desc[0].len = 77;   /* no WRITE in the flags */
		CHECK(gvq_get_used(&q, &len) == pool && len == 0, "used without WRITE, len 77: reclaimed with len 0");
	}

	/* nothing published: whatever the device writes is ignored */
	setup_q(8, false, false, NULL);
	device_writes_used(0, used_flags_now());
	st = get_used_expecting_exit(&tok);
	CHECK(!gvq_has_used(&q) && st == -1 && tok == NULL && gvq_outstanding(&q) == 0,
	      "a used descriptor with nothing in flight: not used, no exit, outstanding 0");
	/* a bad id ahead of a good one stops the peek, not the guest */
	setup_q(8, false, false, NULL);
	add1();
	add1();
	gvq_kick(&q);
	device_writes_used(7, used_flags_now());
	CHECK(gvq_outstanding(&q) == 2, "a bad used id: the kick's peek counts nothing (outstanding 2)");
}

int main(void)
{
	fixture_init(POOL_SIZE, 4242);
	test_setup();
	test_wrap_traces();
	test_kick_view();
	test_host_to_guest();
	event_desc_model_run(4, 20000);
	event_desc_model_run(8, 20000);
	event_desc_model_run(16, 20000);
	test_guest_to_host();
	test_indirect_rule();
	test_hostile();
	return check_summary();
}
