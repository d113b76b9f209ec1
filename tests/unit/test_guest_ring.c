/*
 * test_guest_ring.c -- the guest's split-virtqueue driver
 * (guest-stub/virtio_drv.c, unmodified, via guest_virtio_drv_hosted.c)
 * driven against the host's ring walker (devices/virtqueue.c).
 *
 * Every chain the guest builds -- direct or through an indirect table -- is
 * popped and validated by the real host code, and every completion the host
 * pushes is reclaimed by the real guest code, so the two halves of the ring
 * protocol are checked against each other rather than against a model.
 * The price of an indirect table (gvq_set_itable_cost) is checked as
 * accounting: tables built against indirect buffers, ticks against the
 * ticks asked, the ns-to-ticks arithmetic and the cold walk's full period.
 *
 * The fake machine (guest RAM mapped twice, the register window,
 * alloc_pages, guest_exit) and why it is built that way: guest_ring_fixture.h.
 */
#include "guest_ring_fixture.h"
#include "lguest_kvm_abi.h"

/* A fresh split guest queue `index` 1 of `num` (policy by name, 0 = the
 * driver's default "always") and the host queue built from its registers. */
static void setup_q(uint16_t num, bool indirect, bool event_idx, const char *policy)
{
	setup_queue(num, indirect, event_idx, policy, false);
}

/* ---- helpers ------------------------------------------------------------- */

#define POOL_SIZE (1u << 20)   /* buffer memory in guest RAM */

/* Segment k of a buffer: at `at`, len bytes filled with pattern(seed+k). */
static struct gvq_seg seg_at(uint8_t *at, uint32_t len, uint32_t seed, bool writes)
{
	for (uint32_t j = 0; j < len; j++)
		at[j] = pattern(seed, j);
	return (struct gvq_seg){ .addr = at, .len = len, .device_writes = writes };
}

/* The guest's free list (its private links, q.extra[].next) is num_free
 * distinct descriptors, none of them the head of an outstanding chain, and
 * free + outstanding = num (no leak). */
static bool free_list_ok(void)
{
	static bool seen[1024];
	uint16_t i = q.free_head;
	unsigned held = 0;

	memset(seen, 0, sizeof(seen));
	for (unsigned k = 0; k < q.num_free; k++) {
		if (i >= q.num || seen[i] || q.extra[i].chain_len)
			return false;
		seen[i] = true;
		i = q.extra[i].next;
	}
	for (unsigned h = 0; h < q.num; h++)
		held += q.extra[h].chain_len;
	return held + q.num_free == q.num;
}

/* The indirect table's guest address in head descriptor `head` (host view). */
static uint64_t table_gpa(uint16_t head)
{
	return vq.desc[head].addr;
}

/* ---- (1) direct buffers -------------------------------------------------- */

static void test_direct(void)
{
	static const unsigned counts[] = { 1, 2, 3, 16 };
	struct gvq_seg seg[16];
	int rc;

	setup_q(32, false, false, NULL);
	CHECK(reg(VIRTIO_MMIO_QUEUE_SEL) == 1 && reg(VIRTIO_MMIO_QUEUE_NUM) == 32 && reg(VIRTIO_MMIO_QUEUE_READY) == 1,
	      "gvq_setup programs QueueSel 1, QueueNum 32, QueueReady 1");
	CHECK(vq.desc == (void *)g2h(q.vr.desc) && vq.avail == (void *)g2h(q.vr.avail) &&
	      vq.used == (void *)g2h(q.vr.used),
	      "the ring addresses in the registers resolve to the guest's desc/avail/used");
	CHECK(q.num_free == 32 && free_list_ok(), "fresh queue: 32 free descriptors in one free list");

	for (unsigned c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		unsigned n = counts[c];
		uint32_t seed = 100 * (c + 1);
		uint16_t free0 = q.num_free, head0 = q.free_head;
		uint64_t direct0 = q.bufs_direct;
		bool ok;

		for (unsigned k = 0; k < n; k++)
			seg[k] = seg_at(pool + 4096 * k, k == 0 ? 12 : 37 * k + (uint32_t)n, seed + k, false);
		ok = gvq_add(&q, seg, n, &seg[0], false);
		CHECK(ok && q.num_free == free0 - n && q.bufs_direct == direct0 + 1,
		      "direct %u-segment add: uses %u descriptors (free %u -> %u)", n, n, free0, q.num_free);
		CHECK(vq_pop_avail(&vq, &chain) == 0, "direct %u: nothing visible to the host before the kick", n);
		gvq_kick(&q);
		rc = vq_pop_avail(&vq, &chain);
		CHECK(rc == 1 && chain.head == head0 && chain_matches(seg, n, false, seed),
		      "direct %u: host pops head %u, %u segments in order, lengths, contents, out_len (rc %d, head %u)",
		      n, head0, n, rc, chain.head);
		vq_push_used(&vq, chain.head, 0);
		CHECK(gvq_get_used(&q, NULL) == &seg[0] && q.num_free == free0 && free_list_ok(),
		      "direct %u: reclaimed, %u free again", n, free0);
	}

	/* readable then writable: the host's ordering rule and in_len */
	{
		uint16_t head;
		uint32_t len = 0;

		seg[0] = seg_at(pool, 14, 900, false);
		seg[1] = seg_at(pool + 4096, 60, 901, false);
		seg[2] = seg_at(pool + 8192, 100, 902, true);
		CHECK(gvq_add(&q, seg, 3, pool, false), "2 readable + 1 writable segment added");
		gvq_kick(&q);
		rc = vq_pop_avail(&vq, &chain);
		CHECK(rc == 1 && chain_matches(seg, 3, false, 900) && chain.out_len == 74 && chain.in_len == 100,
		      "host sees out_len 74, in_len 100, the writable one last (rc %d)", rc);
		head = chain.head;
		memset(chain.buf[2].host, 0x5a, 100);   /* the device writes */
		vq_push_used(&vq, head, 100);
		CHECK(gvq_get_used(&q, &len) == pool && len == 100 && pool[8192] == 0x5a && pool[8192 + 99] == 0x5a,
		      "guest reclaims with len 100 and sees what the device wrote");
	}
	CHECK(!vq.broken && q.num_free == 32 && free_list_ok(), "host never refused a chain; all 32 free");
}

/* ---- (2) indirect buffers ------------------------------------------------ */

static void test_indirect(void)
{
	struct gvq_seg seg[17];
	uint16_t free0;
	int rc;

	setup_q(32, true, false, NULL);
	for (unsigned k = 0; k < 3; k++)
		seg[k] = seg_at(pool + 4096 * k, 50 + 10 * k, 200 + k, false);
	free0 = q.num_free;
	CHECK(gvq_add(&q, seg, 3, seg, true) && q.num_free == free0 - 1 && q.bufs_indirect == 1 &&
	      q.descs_used == 1, "indirect 3-segment add uses 1 ring descriptor (free %u -> %u)", free0, q.num_free);
	gvq_kick(&q);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain_matches(seg, 3, true, 200),
	      "host pops an indirect chain: count 3, same segments, contents, out_len (rc %d)", rc);
	CHECK(vq.desc[chain.head].flags == VRING_DESC_F_INDIRECT && vq.desc[chain.head].len == 3 * 16,
	      "head descriptor: flags INDIRECT only, len 3 * 16");

	free0 = q.num_free;
	CHECK(gvq_add(&q, seg, 3, seg + 1, false) && q.num_free == free0 - 3 && q.bufs_direct == 1,
	      "direct 3-segment add uses 3 (free %u -> %u)", free0, q.num_free);
	gvq_kick(&q);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain_matches(seg, 3, false, 200), "host pops it direct");

	/* 16 segments, with writable ones at the end */
	for (unsigned k = 0; k < 16; k++)
		seg[k] = seg_at(pool + 4096 * k, 1 + 97 * k, 300 + k, k >= 12);
	free0 = q.num_free;
	CHECK(gvq_add(&q, seg, 16, seg + 2, true) && q.num_free == free0 - 1,
	      "indirect 16-segment add (4 writable) uses 1 descriptor");
	gvq_kick(&q);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain_matches(seg, 16, true, 300), "host pops all 16 through the table (rc %d)", rc);

	/* more than ITABLE_MAX (16) segments: the driver falls back to direct */
	for (unsigned k = 0; k < 17; k++)
		seg[k] = seg_at(pool + 4096 * k, 20 + k, 400 + k, false);
	free0 = q.num_free;
	CHECK(gvq_add(&q, seg, 17, seg + 3, true) && q.num_free == free0 - 17 && q.bufs_direct == 2 &&
	      q.bufs_indirect == 2, "17 segments asked indirect go direct (17 descriptors)");
	gvq_kick(&q);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain_matches(seg, 17, false, 400), "host pops 17 direct segments (rc %d)", rc);
	CHECK(q.descs_used == 1 + 3 + 1 + 17 && !vq.broken, "descs_used 22, host content");
}

/* ---- (3) reclaim --------------------------------------------------------- */

static void test_reclaim(void)
{
	struct gvq_seg seg[4], seg3[3];
	uint16_t head_a, head_b, hx, hy, hz;
	uint64_t table_a, table_b, table_c;
	uint32_t len = 0;
	void *tok;
	int tokens[3];

	setup_q(8, true, false, NULL);
	for (unsigned k = 0; k < 4; k++)
		seg[k] = seg_at(pool + 4096 * k, 64, 500 + k, false);
	CHECK(!gvq_has_used(&q) && gvq_get_used(&q, &len) == NULL, "nothing used yet: gvq_get_used returns 0");
	gvq_add(&q, seg, 4, &tokens[0], true);
	gvq_kick(&q);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.indirect, "indirect A popped");
	head_a = chain.head;
	table_a = table_gpa(head_a);
	vq_push_used(&vq, head_a, 123);
	CHECK(gvq_has_used(&q) && gvq_outstanding(&q) == 0, "after push: has_used, nothing outstanding");
	tok = gvq_get_used(&q, &len);
	CHECK(tok == &tokens[0] && len == 123, "get_used returns A's token with len 123");
	CHECK(q.num_free == 8 && free_list_ok() && gvq_get_used(&q, NULL) == NULL, "A reclaimed: 8 free, no more used");

	gvq_add(&q, seg, 4, &tokens[1], true);
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	head_b = chain.head;
	table_b = table_gpa(head_b);
	CHECK(table_b == table_a && chain_matches(seg, 4, true, 500),
	      "next 4-segment indirect add reuses A's table (0x%llx) and is intact",
	      (unsigned long long)table_a);
	for (unsigned k = 0; k < 3; k++)
		seg3[k] = seg_at(pool + 4096 * (k + 4), 33, 600 + k, false);
	gvq_add(&q, seg3, 3, &tokens[2], true);
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	table_c = table_gpa(chain.head);
	CHECK(table_c != table_b && chain_matches(seg3, 3, true, 600),
	      "a 3-segment table comes from another size class (0x%llx)", (unsigned long long)table_c);
	/* complete both, in reverse, then the 3-table is reused by a 3 add */
	vq_push_used(&vq, chain.head, 3);
	CHECK(gvq_get_used(&q, &len) == &tokens[2] && len == 3, "3-segment buffer completed first");
	vq_push_used(&vq, head_b, 4);
	CHECK(gvq_get_used(&q, &len) == &tokens[1] && len == 4 && q.num_free == 8 && free_list_ok(),
	      "4-segment buffer completed second; 8 free");
	gvq_add(&q, seg3, 3, &tokens[0], true);
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	CHECK(table_gpa(chain.head) == table_c, "the 3-segment table is recycled too");
	vq_push_used(&vq, chain.head, 0);
	gvq_get_used(&q, NULL);

	/* out of order: X direct 2, Y indirect 3, Z direct 1; used Y, Z, X */
	gvq_add(&q, seg, 2, &tokens[0], false);
	gvq_add(&q, seg3, 3, &tokens[1], true);
	gvq_add(&q, seg + 2, 1, &tokens[2], false);
	CHECK(q.num_free == 8 - 2 - 1 - 1, "X+Y+Z hold 4 descriptors");
	gvq_kick(&q);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain_matches(seg, 2, false, 500), "host pops X");
	hx = chain.head;
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain_matches(seg3, 3, true, 600), "host pops Y");
	hy = chain.head;
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain_matches(seg + 2, 1, false, 502), "host pops Z");
	hz = chain.head;
	vq_push_used(&vq, hy, 11);
	CHECK(gvq_get_used(&q, &len) == &tokens[1] && len == 11 && q.num_free == 5 && free_list_ok(),
	      "Y used first: its token, 1 descriptor back (free 5)");
	vq_push_used(&vq, hz, 22);
	CHECK(gvq_get_used(&q, &len) == &tokens[2] && len == 22 && q.num_free == 6 && free_list_ok(),
	      "then Z: free 6");
	vq_push_used(&vq, hx, 33);
	CHECK(gvq_get_used(&q, &len) == &tokens[0] && len == 33 && q.num_free == 8 && free_list_ok(),
	      "then X: 2 back, all 8 free, free list intact");
	{
		unsigned added = 0;

		while (gvq_add(&q, seg, 1, &tokens[0], false))
			added++;
		CHECK(added == 8, "the recycled free list holds exactly 8 single-descriptor buffers (got %u)", added);
		gvq_kick(&q);
		for (unsigned i = 0; i < 8; i++)
			if (vq_pop_avail(&vq, &chain) == 1)
				vq_push_used(&vq, chain.head, 0);
		while (gvq_get_used(&q, NULL))
			;
		CHECK(q.num_free == 8 && free_list_ok() && !vq.broken, "drained again, host content");
	}
}

/* ---- (4) full ring and the 16-bit wrap ---------------------------------- */

struct rec {
	struct gvq_seg seg[4];
	unsigned n;
	bool indirect;
	uint32_t seed, used_len;
	uint16_t head;
};

/* The host completes the `added` popped chains in order, reversed or
 * rotated (picked at random); order[i] is the rec completed i-th. */
static void push_used_shuffled(const struct rec *recs, unsigned added, unsigned *order)
{
	for (unsigned i = 0, mode = rnd() % 3, rot = added ? rnd() % added : 0; i < added; i++)
		order[i] = mode == 0 ? i : mode == 1 ? added - 1 - i : (i + rot) % added;
	for (unsigned i = 0; i < added; i++)
		vq_push_used(&vq, recs[order[i]].head, recs[order[i]].used_len);
}

static void test_full_and_wrap(void)
{
	static struct rec recs[8];
	struct gvq_seg seg[3];
	uint64_t adds = 0, full = 0, bad_add = 0, bad_chain = 0, bad_reclaim = 0, bad_free = 0, indirect_adds = 0;
	uint64_t cycles = 0;
	bool all_ok;

	setup_q(8, false, false, NULL);
	for (unsigned k = 0; k < 3; k++)
		seg[k] = seg_at(pool + 4096 * k, 10, 700 + k, false);
	for (unsigned i = 0; i < 8; i++)
		CHECK(gvq_add(&q, seg, 1, &recs[i], false), "ring 8: single add %u fits", i);
	CHECK(!gvq_add(&q, seg, 1, &recs[0], false) && q.ring_full == 1 && q.num_free == 0 && q.avail_shadow == 8,
	      "9th add refused: ring_full 1, nothing added");
	gvq_kick(&q);
	for (unsigned i = 0; i < 8; i++)
		if (vq_pop_avail(&vq, &chain) == 1)
			vq_push_used(&vq, chain.head, 0);
	{
		unsigned got = 0;

		while (gvq_get_used(&q, NULL))
			got++;
		CHECK(got == 8 && q.num_free == 8 && free_list_ok(), "all 8 reclaimed");
	}
	CHECK(gvq_add(&q, seg, 3, &recs[0], false) && gvq_add(&q, seg, 3, &recs[1], false),
	      "two 3-segment buffers fit (6 of 8)");
	CHECK(!gvq_add(&q, seg, 3, &recs[2], false) && q.ring_full == 2 && q.num_free == 2,
	      "a third does not (2 free): ring_full 2");
	CHECK(gvq_add(&q, seg, 2, &recs[2], false) && q.num_free == 0, "a 2-segment one still does");
	gvq_kick(&q);
	for (unsigned i = 0; i < 3; i++)
		if (vq_pop_avail(&vq, &chain) == 1)
			vq_push_used(&vq, chain.head, 0);
	while (gvq_get_used(&q, NULL))
		;
	CHECK(q.num_free == 8 && free_list_ok() && !vq.broken, "reclaimed, host content");

	/* Random batches across the wrap: every chain validated by the host,
	 * completed in a random order, reclaimed by the guest. */
	setup_q(8, true, false, NULL);
	full = 0;
	while (adds < 70000) {
		unsigned batch = 1 + rnd() % 8, added = 0, order[8];

		cycles++;
		for (unsigned b = 0; b < batch; b++) {
			struct rec *r = &recs[b];
			uint16_t before = q.num_free;
			unsigned need;

			r->n = 1 + rnd() % 4;
			r->indirect = rnd() % 3 == 0;
			r->seed = (uint32_t)adds * 5;
			r->used_len = rnd();
			for (unsigned k = 0; k < r->n; k++)
				r->seg[k] = seg_at(pool + 4096 * b + 1024 * k, 1 + rnd() % 200, r->seed + k,
						   k + 1 == r->n && r->n > 1 && (rnd() & 1));
			need = r->indirect ? 1 : r->n;
			if (!gvq_add(&q, r->seg, r->n, r, r->indirect)) {
				full++;
				if (before >= need)
					bad_add++;
				break;
			}
			if (q.num_free != before - need)
				bad_add++;
			indirect_adds += r->indirect;
			added++;
			adds++;
		}
		gvq_kick(&q);
		for (unsigned b = 0; b < added; b++) {
			struct rec *r = &recs[b];

			if (vq_pop_avail(&vq, &chain) != 1 || !chain_matches(r->seg, r->n, r->indirect, r->seed)) {
				bad_chain++;
				continue;
			}
			r->head = chain.head;
			if (chain.buf[chain.count - 1].device_writes)
				chain.buf[chain.count - 1].host[0] = (uint8_t)~r->seed;
		}
		if (vq_pop_avail(&vq, &chain) != 0)
			bad_chain++;
		push_used_shuffled(recs, added, order);
		for (unsigned i = 0; i < added; i++) {
			struct rec *r = &recs[order[i]];
			uint32_t len = 0;
			void *tok = gvq_get_used(&q, &len);

			if (tok != r || len != r->used_len ||
			    (r->seg[r->n - 1].device_writes && *(const uint8_t *)r->seg[r->n - 1].addr != (uint8_t)~r->seed))
				bad_reclaim++;
		}
		if (gvq_get_used(&q, NULL) != NULL || q.num_free != 8 || !free_list_ok())
			bad_free++;
	}
	printf("  %llu buffers (%llu indirect) in %llu cycles, %llu ring-full refusals\n", (unsigned long long)adds,
	       (unsigned long long)indirect_adds, (unsigned long long)cycles, (unsigned long long)full);
	CHECK(bad_add == 0, "every add took exactly its descriptors, refused only when short (%llu bad)",
	      (unsigned long long)bad_add);
	CHECK(bad_chain == 0 && !vq.broken, "the host validated all %llu chains (%llu bad, error \"%s\")",
	      (unsigned long long)adds, (unsigned long long)bad_chain, vq.error);
	CHECK(bad_reclaim == 0, "every completion came back with its token, len and device data (%llu bad)",
	      (unsigned long long)bad_reclaim);
	CHECK(bad_free == 0 && q.num_free == 8 && free_list_ok(), "no descriptor leaked: 8 free after every cycle");
	CHECK(q.ring_full == full && full > 0, "ring_full counts the %llu refusals (%llu)", (unsigned long long)full,
	      (unsigned long long)q.ring_full);
	all_ok = adds > 65536 && q.avail_shadow == (uint16_t)adds && q.avail_published == (uint16_t)adds &&
		 q.vr.avail->idx == (uint16_t)adds && vq.last_avail == (uint16_t)adds &&
		 q.last_used == (uint16_t)adds && vq.used_shadow == (uint16_t)adds;
	CHECK(all_ok, "indices wrapped 16 bits and agree: avail %u, host last_avail %u, used %u (adds %llu)",
	      q.avail_shadow, vq.last_avail, q.last_used, (unsigned long long)adds);
	CHECK(q.bufs_direct + q.bufs_indirect == adds && q.bufs_indirect == indirect_adds,
	      "bufs_direct + bufs_indirect = adds, indirect as asked");
}

/* ---- (5) kick and notification ------------------------------------------ */

static void test_kick(void)
{
	char pattern_got[16], pattern_want[] = "...N....";
	bool ok;

	setup_q(16, false, false, NULL);   /* policy "always" */
	add1();
	CHECK(q.vr.avail->idx == 0 && !vq_has_avail(&vq) && !notified(), "add alone publishes nothing, no notify");
	gvq_kick(&q);
	CHECK(q.vr.avail->idx == 1 && vq_has_avail(&vq), "kick publishes avail idx 1");
	CHECK(reg(VIRTIO_MMIO_QUEUE_NOTIFY) == 1 && notified() && q.notifies == 1 && q.kicks == 1,
	      "NO_NOTIFY clear: kick writes QueueNotify = queue index 1, notifies 1");
	vq_suppress_notify(&vq);
	add1();
	gvq_kick(&q);
	CHECK(!notified() && q.suppressed == 1 && q.notifies == 1 && q.vr.avail->idx == 2,
	      "host set NO_NOTIFY: always-policy kick is suppressed but still publishes");
	host_drain();

	/* static:4 under NO_NOTIFY: notify only when outstanding crosses 4 */
	setup_q(16, false, false, "static:4");
	vq_suppress_notify(&vq);
	for (unsigned i = 0; i < 8; i++) {
		add1();
		gvq_kick(&q);
		pattern_got[i] = notified() ? 'N' : '.';
	}
	pattern_got[8] = 0;
	/* kick i sees outstanding i before publishing: 3 -> 4 crosses on the 4th */
	CHECK(!strcmp(pattern_got, pattern_want) && q.notifies == 1 && q.suppressed == 7,
	      "static:4, 8 single kicks, host idle: notifies \"%s\" (want \"%s\")", pattern_got, pattern_want);
	host_drain();
	CHECK(q.num_free == 16 && gvq_outstanding(&q) == 0, "host drained all 8");
	for (unsigned i = 0; i < 5; i++)
		add1();
	gvq_kick(&q);
	ok = notified();
	add1();
	gvq_kick(&q);
	CHECK(ok && !notified() && q.notifies == 2 && q.suppressed == 8,
	      "batch of 5 from 0 outstanding crosses 4 (notify); the next from 5 does not");
	vq_enable_notify_and_recheck(&vq);
	add1();
	gvq_kick(&q);
	CHECK(notified() && q.notifies == 3, "NO_NOTIFY cleared: the next kick notifies whatever the threshold");
	host_drain();

	/* gvq_notify_full: forced notify; a dynamic threshold learns under NO_NOTIFY */
	setup_q(16, false, false, "dynamic");
	CHECK(q.policy.threshold == 8, "dynamic ring 16 starts at threshold 8");
	vq_suppress_notify(&vq);
	gvq_notify_full(&q);
	CHECK(notified() && q.forced == 1 && q.notifies == 1 && q.policy.threshold == 7,
	      "notify_full under NO_NOTIFY: writes QueueNotify, forced 1, threshold 8 -> 7");
	vq_enable_notify_and_recheck(&vq);
	gvq_notify_full(&q);
	CHECK(notified() && q.forced == 2 && q.notifies == 2 && q.policy.threshold == 7,
	      "notify_full without NO_NOTIFY: forced 2, threshold stays 7");
	setup_q(16, false, false, "static:5");
	vq_suppress_notify(&vq);
	gvq_notify_full(&q);
	CHECK(notified() && q.forced == 1 && q.policy.threshold == 5, "static:5: notify_full leaves the threshold");

	/* event-idx: the host's avail_event decides */
	setup_q(16, false, true, "event-idx");
	CHECK(q.event_idx, "EVENT_IDX negotiated: the queue uses event indices");
	vq_enable_notify_and_recheck(&vq);   /* avail_event = 0 */
	add1();
	gvq_kick(&q);
	ok = notified();
	add1();
	gvq_kick(&q);
	CHECK(ok && !notified() && q.notifies == 1 && q.suppressed == 1,
	      "avail_event 0: kick 0->1 notifies, 1->2 does not");
	host_drain();
	vq_enable_notify_and_recheck(&vq);   /* avail_event = 2 */
	add1();
	gvq_kick(&q);
	CHECK(notified(), "host re-armed at 2: kick 2->3 notifies");
	vq_suppress_notify(&vq);             /* avail_event = last_avail 2 - 0x8000 */
	add1();
	gvq_kick(&q);
	CHECK(!notified() && q.notifies == 2, "host suppressed (stale avail_event): kick 3->4 is quiet");
	host_drain();

	/* interrupt suppression, the other direction */
	setup_q(16, false, false, NULL);
	gvq_disable_interrupts(&q);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(!vq_should_interrupt(&vq), "guest disabled interrupts (NO_INTERRUPT): host does not interrupt");
	CHECK(!gvq_enable_interrupts(&q), "enabling with a buffer used meanwhile returns false (re-poll)");
	gvq_get_used(&q, NULL);
	CHECK(gvq_enable_interrupts(&q), "enabling on a drained ring returns true");
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(vq_should_interrupt(&vq), "interrupts enabled: host interrupts");
	gvq_get_used(&q, NULL);

	setup_q(16, false, true, "event-idx");
	gvq_disable_interrupts(&q);
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(!vq_should_interrupt(&vq), "event-idx: disabled (stale used_event): no interrupt");
	gvq_get_used(&q, NULL);
	CHECK(gvq_enable_interrupts(&q), "event-idx: re-enabled at used 1");
	add1();
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	CHECK(vq_should_interrupt(&vq), "event-idx: used 1 -> 2 crosses used_event 1: interrupt");
	gvq_get_used(&q, NULL);
}

/* ---- (6) indirect_use() as workload_raw.c drives gvq_add ----------------- */

static void test_indirect_rule(void)
{
	static bool want_indirect[128];
	struct gvq_seg seg[2];
	uint32_t thr = indirect_default_threshold(128);
	unsigned added = 0, bad_rule = 0, bad_host = 0;

	setup_q(128, true, false, NULL);
	seg[0] = seg_at(pool, 12, 800, false);
	seg[1] = seg_at(pool + 4096, 1500, 801, false);
	CHECK(thr == 16, "threshold for ring 128: max(16, 128/8) = 16 (got %u)", thr);
	for (;;) {
		uint16_t before = q.num_free;
		bool ind = indirect_use(INDIRECT_THRESHOLD, thr, 2, q.num_free);

		if (!gvq_add(&q, seg, 2, seg, ind))
			break;
		if (ind != (before < 16))
			bad_rule++;
		want_indirect[added++] = ind;
	}
	/* direct at num_free 128, 126, ..., 16: 57 buffers, 114 descriptors,
	 * then 14 indirect at 14..1; at 0 indirect_use says no and 2 don't fit */
	CHECK(bad_rule == 0, "indirect exactly when fewer than 16 descriptors are free");
	CHECK(added == 71 && q.bufs_direct == 57 && q.bufs_indirect == 14 && q.ring_full == 1 && q.num_free == 0 &&
	      q.descs_used == 128,
	      "ring 128 without reclaim: 57 direct + 14 indirect, ring_full 1 (direct %llu, indirect %llu, full %llu)",
	      (unsigned long long)q.bufs_direct, (unsigned long long)q.bufs_indirect, (unsigned long long)q.ring_full);
	gvq_kick(&q);
	for (unsigned i = 0; i < added; i++) {
		if (vq_pop_avail(&vq, &chain) != 1 || !chain_matches(seg, 2, want_indirect[i], 800))
			bad_host++;
		vq_push_used(&vq, chain.head, 0);
	}
	CHECK(bad_host == 0 && vq_pop_avail(&vq, &chain) == 0, "host pops 71 chains, direct/indirect as added");
	while (gvq_get_used(&q, NULL))
		;
	CHECK(q.num_free == 128 && free_list_ok(), "all 128 back");

	/* INDIRECT_ALWAYS: every 2-segment buffer takes one descriptor */
	added = 0;
	while (gvq_add(&q, seg, 2, seg, indirect_use(INDIRECT_ALWAYS, thr, 2, q.num_free)))
		added++;
	CHECK(added == 128 && q.bufs_indirect == 14 + 128, "INDIRECT_ALWAYS: 128 two-segment buffers fit (got %u)",
	      added);
	gvq_kick(&q);
	host_drain();
	CHECK(q.num_free == 128 && free_list_ok() && !vq.broken, "drained, host content");
}

/* ---- (6b) the price of an indirect table (lkvm.indirect_cost_ns) ---------- */

/* Accounting, not timing: every table built is counted once, where both
 * layouts build it (gvq_itable_alloc), and each costs at least the ticks
 * asked, since the spin waits for a TSC deadline; how much more depends on
 * the machine and is never asserted. */
static void test_indirect_cost(void)
{
	const uint64_t ticks = 3000;
	struct gvq_seg seg[17];
	unsigned bad_host = 0, bad_tables = 0;

	CHECK(gvq_ns_to_ticks(250, 2100000) == 525 && gvq_ns_to_ticks(1000, 2096004) == 2096 &&
	      gvq_ns_to_ticks(3, 1000000) == 3 && gvq_ns_to_ticks(1, 999999) == 0,
	      "ns -> ticks: ns * tsc_khz / 10^6, rounded down (250 ns at 2.1 GHz = 525)");
	CHECK(gvq_ns_to_ticks(0, 2100000) == 0 && gvq_ns_to_ticks(1000, 0) == 0,
	      "ns -> ticks: 0 ns, or no TSC rate, is no work");
	CHECK(gvq_ns_to_ticks(1000000, 0xffffffffu) == 4294967295ull,
	      "ns -> ticks: the largest pair (1 ms at 2^32-1 kHz) does not overflow");

	/* the cold walk: every line of a 2^16-line buffer once per 2^16 steps */
	{
		static uint8_t seen[1u << 16];
		uint64_t line = 0, distinct = 0;

		for (uint32_t k = 0; k < (1u << 16); k++) {
			distinct += !seen[line];
			seen[line] = 1;
			line = gvq_cold_next(line, 0, 1u << 16);
		}
		CHECK(distinct == (1u << 16) && line == 0,
		      "cold walk: 65536 steps visit all 65536 lines and come back to the first (%llu distinct)",
		      (unsigned long long)distinct);
	}

	setup_q(32, true, false, NULL);
	CHECK(q.icost.ticks == 0 && q.icost.cold_lines == 0 && q.icost.cold == NULL,
	      "gvq_setup: tables are free until priced");
	gvq_set_itable_cost(&q, ticks, 0, 0);
	for (unsigned k = 0; k < 17; k++)
		seg[k] = seg_at(pool + 4096 * k, 40 + k, 500 + k, false);
	for (unsigned b = 0; b < 40; b++) {
		/* indirect 3-segment, direct 3-segment, and 17 segments asked
		 * indirect (too many for a table: direct) */
		unsigned n = b % 3 == 2 ? 17 : 3;

		if (!gvq_add(&q, seg, n, seg, b % 3 != 1)) {
			bad_host++;
			continue;
		}
		gvq_kick(&q);
		if (vq_pop_avail(&vq, &chain) != 1 || !chain_matches(seg, n, b % 3 == 0, 500))
			bad_host++;
		vq_push_used(&vq, chain.head, 0);
		if (!gvq_get_used(&q, NULL))
			bad_host++;
		bad_tables += q.itables_built != q.bufs_indirect;
	}
	CHECK(bad_host == 0 && !vq.broken, "priced tables: the host walks every chain as added");
	CHECK(bad_tables == 0 && q.itables_built == 14 && q.bufs_indirect == 14 && q.bufs_direct == 26,
	      "tables built = indirect buffers after every add (14 of 40; direct and 17-segment ones build none)");
	CHECK(q.itable_ticks >= q.itables_built * ticks,
	      "priced at %llu ticks a table: %llu tables took %llu ticks, at least tables x ticks",
	      (unsigned long long)ticks, (unsigned long long)q.itables_built, (unsigned long long)q.itable_ticks);

	/* cold lines: a buffer of its own, walked on from where it stopped */
	setup_q(32, true, false, NULL);
	gvq_set_itable_cost(&q, 0, 3, 1u << 20);
	CHECK(q.icost.cold && q.icost.cold_lines == 3 && q.icost.cold_bytes == 1u << 20 && q.icost.cold_line == 0,
	      "3 cold lines: a 1 MiB private buffer, the walk at line 0");
	{
		uint64_t line = 0;

		for (unsigned b = 0; b < 5; b++) {
			CHECK(gvq_add(&q, seg, 3, seg, true), "cold-priced indirect add %u", b);
			for (unsigned k = 0; k < 3; k++)
				line = gvq_cold_next(line, 0, (1u << 20) / 64);
		}
		CHECK(q.itables_built == 5 && q.icost.cold_line == line,
		      "5 tables walked 15 lines: the walk is where 15 steps lead (line %llu)", (unsigned long long)line);
	}
	gvq_kick(&q);
	host_drain();
	CHECK(q.num_free == 32 && free_list_ok() && !vq.broken, "drained, host content");

	/* a buffer that is not a power of two is refused: no cold lines */
	gvq_set_itable_cost(&q, 7, 3, 3u << 20);
	CHECK(q.icost.ticks == 7 && q.icost.cold_lines == 0 && q.icost.cold == NULL,
	      "cold buffer of 3 MiB (not a power of two): the ticks stay, no cold lines");
}

/* ---- (7) a device that returns garbage ---------------------------------- */

static void test_bad_used(void)
{
	struct gvq_seg s = { .addr = pool, .len = 8 };
	void *tok = NULL;
	int st;

	setup_q(8, false, false, NULL);
	gvq_add(&q, &s, 1, pool, false);
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, 8, 0);   /* id == num */
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && q.num_free == 7 && q.last_used == 0,
	      "used id 8 on a ring of 8: guest_exit(FAILED) (status %d), nothing reclaimed", st);

	setup_q(8, false, false, NULL);
	gvq_add(&q, &s, 1, pool, false);   /* head 0 */
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, 5, 0);   /* in range but never handed out */
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED, "used id 5, not outstanding: guest_exit(FAILED) (status %d)", st);

	setup_q(8, false, false, NULL);
	gvq_add(&q, &s, 1, pool, false);
	gvq_kick(&q);
	vq_pop_avail(&vq, &chain);
	vq_push_used(&vq, chain.head, 0);
	vq_push_used(&vq, chain.head, 0);   /* completed twice */
	st = get_used_expecting_exit(&tok);
	CHECK(st == -1 && tok == pool, "first completion reclaims normally");
	st = get_used_expecting_exit(&tok);
	CHECK(st == LKVM_STATUS_FAILED && q.num_free == 8,
	      "the same head completed twice: guest_exit(FAILED) (status %d), free count not inflated", st);
}

/* ---- (8) a device that scribbles on the descriptor table ---------------- */

/* What a scribbling host writes into desc[i].next (mode by round). */
static uint16_t scribble_value(unsigned mode, uint16_t i, uint16_t num)
{
	switch (mode % 6) {
	case 0: return 0;                          /* every chain "ends" at 0 */
	case 1: return i;                          /* every descriptor loops on itself */
	case 2: return (uint16_t)((i + 1) % num);  /* the initial free list again */
	case 3: return (uint16_t)(num - 1 - i);    /* plausible, but all wrong */
	case 4: return (uint16_t)(num + 5);        /* out of range */
	default: return (uint16_t)rnd();
	}
}

static void scribble_all_next(unsigned mode)
{
	for (uint16_t i = 0; i < vq.num; i++)
		vq.desc[i].next = scribble_value(mode, i, vq.num);
}

/* The descriptor table belongs to the driver, but the host can write it: a
 * hostile or buggy one rewrites desc[].next -- of chains it has popped, of
 * chains it has returned, of free descriptors -- whenever it likes.  The
 * guest keeps its free list and its chains' links in private memory
 * (q.extra), so it must still free exactly the descriptors each buffer
 * took, and hand the device correct chains afterwards.  Likewise a freed
 * indirect table's bytes are the device's to scribble on (it knows their
 * address), so the next allocation must not be steered by them.
 *
 * Each round: fill a ring of 16 with random chains (1-4 segments, a third
 * indirect); the real host pops and validates them; the test, as the host,
 * scribbles on every desc[].next before completing them (in a random
 * order) and again before the guest reclaims; after the reclaim it writes
 * each released table's own address into its first word (where a free list
 * threaded through the tables would keep its link: a self-loop that would
 * hand one table to two buffers).  With the shared next fields trusted, the
 * first round already goes wrong: mode 0 makes every chain end at
 * descriptor 0, so freeing a 3-descriptor chain would put back its head and
 * descriptor 0 (perhaps still in flight) and count 3, leaking the other two. */
static void test_scribbled_next(void)
{
	static struct rec recs[16];
	uint64_t adds = 0, bad_add = 0, bad_chain = 0, bad_table = 0, bad_reclaim = 0, bad_free = 0;
	uint64_t indirect_adds = 0, multi_adds = 0;
	unsigned rounds = 600;

	setup_q(16, true, false, NULL);
	for (unsigned round = 0; round < rounds; round++) {
		unsigned added = 0, order[16];
		uint64_t tables[16];
		unsigned ntables = 0;

		/* fill the ring */
		for (;;) {
			struct rec *r = &recs[added];
			uint16_t before = q.num_free;
			unsigned need;

			r->n = 1 + rnd() % 4;
			r->indirect = rnd() % 3 == 0;
			r->seed = (uint32_t)adds * 3 + 1;
			r->used_len = rnd();
			for (unsigned k = 0; k < r->n; k++)
				r->seg[k] = seg_at(pool + 4096 * added + 1024 * k, 1 + rnd() % 100, r->seed + k, false);
			need = r->indirect ? 1 : r->n;
			if (!gvq_add(&q, r->seg, r->n, r, r->indirect)) {
				if (before >= need)
					bad_add++;
				break;
			}
			if (q.num_free != before - need)
				bad_add++;
			indirect_adds += r->indirect;
			multi_adds += !r->indirect && r->n > 1;
			added++;
			adds++;
		}
		gvq_kick(&q);
		/* the host pops and validates every chain; no two buffers in
		 * flight share an indirect table */
		for (unsigned b = 0; b < added; b++) {
			struct rec *r = &recs[b];

			if (vq_pop_avail(&vq, &chain) != 1 || !chain_matches(r->seg, r->n, r->indirect, r->seed)) {
				bad_chain++;
				continue;
			}
			r->head = chain.head;
			if (r->indirect) {
				for (unsigned t = 0; t < ntables; t++)
					if (tables[t] == table_gpa(r->head))
						bad_table++;
				tables[ntables++] = table_gpa(r->head);
			}
		}
		if (vq_pop_avail(&vq, &chain) != 0)
			bad_chain++;
		/* scribble, complete in a random order, scribble again */
		scribble_all_next(round);
		push_used_shuffled(recs, added, order);
		scribble_all_next(round + 3);
		for (unsigned i = 0; i < added; i++) {
			struct rec *r = &recs[order[i]];
			uint32_t len = 0;

			if (gvq_get_used(&q, &len) != r || len != r->used_len)
				bad_reclaim++;
		}
		if (gvq_get_used(&q, NULL) != NULL || q.num_free != 16 || !free_list_ok())
			bad_free++;
		/* the released tables, as the host may still write them */
		for (unsigned t = 0; t < ntables; t++)
			*(uint64_t *)(gm.host + tables[t]) = tables[t];
		scribble_all_next(round + 1);
	}
	printf("  %llu buffers (%llu indirect, %llu direct chains of 2-4) in %u rounds\n", (unsigned long long)adds,
	       (unsigned long long)indirect_adds, (unsigned long long)multi_adds, rounds);
	CHECK(bad_add == 0, "scribbled next: every add took exactly its descriptors, refused only when short (%llu bad)",
	      (unsigned long long)bad_add);
	CHECK(bad_chain == 0 && !vq.broken,
	      "scribbled next: the host validated all %llu chains the guest built afterwards (%llu bad)",
	      (unsigned long long)adds, (unsigned long long)bad_chain);
	CHECK(bad_table == 0, "scribbled tables: no indirect table handed to two buffers at once (%llu bad)",
	      (unsigned long long)bad_table);
	CHECK(bad_reclaim == 0, "scribbled next: every completion came back with its token and len (%llu bad)",
	      (unsigned long long)bad_reclaim);
	CHECK(bad_free == 0 && q.num_free == 16 && free_list_ok(),
	      "scribbled next: all 16 free after every round, free list 16 distinct descriptors (%llu bad rounds)",
	      (unsigned long long)bad_free);

	/* and the ring still holds exactly 16 one-descriptor buffers, 16
	 * distinct heads as the host sees them */
	{
		static bool seen[16];
		unsigned n = 0, distinct = 0;
		struct gvq_seg s = seg_at(pool, 8, 1, false);

		while (gvq_add(&q, &s, 1, pool, false))
			n++;
		gvq_kick(&q);
		while (vq_pop_avail(&vq, &chain) == 1) {
			if (chain.head < 16 && !seen[chain.head]) {
				seen[chain.head] = true;
				distinct++;
			}
			vq_push_used(&vq, chain.head, 0);
		}
		scribble_all_next(5);
		while (gvq_get_used(&q, NULL))
			;
		CHECK(n == 16 && distinct == 16 && q.num_free == 16 && free_list_ok() && !vq.broken,
		      "after the scribbling: 16 single buffers fit, 16 distinct heads, all free again (%u, %u)", n,
		      distinct);
	}
}

int main(void)
{
	fixture_init(POOL_SIZE, 12345);
	test_direct();
	test_indirect();
	test_reclaim();
	test_full_and_wrap();
	test_kick();
	test_indirect_rule();
	test_indirect_cost();
	test_bad_used();
	test_scribbled_next();
	return check_summary();
}
