/*
 * test_virtqueue.c -- the host side of the split ring (devices/virtqueue.c),
 * the only code that reads guest rings.
 *
 * The rings live in a fake guest RAM (an aligned heap buffer standing in for
 * the KVM memory slot) laid out with vring_init() from <linux/virtio_ring.h>,
 * the same layout the guest uses.  Good chains must come back with the right
 * lengths and host pointers; every hostile chain or ring must be refused with
 * -1, a broken queue, the vq_violation of the rule it broke and an error line
 * -- a guest must never make the host read outside its RAM or spin forever.
 * The checks compare the violation, not words of the line, so a reworded
 * message breaks no test and a wrong rule firing cannot pass for the right
 * one; test_error_lines pins the line's format once, and every violation
 * must be reached by some case here (test_every_violation_reached).  The
 * notification helpers are checked at the field level (used->flags,
 * avail_event, used_event), because a wrong field there is a lost wakeup.
 */
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "check.h"
#include "virtqueue.h"

#define MEM_SIZE  (1u << 20)   /* 1 MiB of fake guest RAM */
#define RING_GPA  0x1000u      /* desc here, avail right after, used on the next 4 KiB */
#define BUF_GPA   0x10000u     /* data buffers */
#define TABLE_GPA 0x40000u     /* indirect tables */

static struct guest_mem mem;
static struct vring vr;        /* the guest's view of the ring */
static struct vq vq;
static struct vq_chain chain;
static uint32_t violations_seen;   /* bit v: some case made vq_violation v fire */

#define LAST_VIOLATION VQV_INDIRECT_LOOP

static uint64_t gpa_of(const void *p)
{
	return (uint64_t)((const uint8_t *)p - mem.host);
}

/* A fresh ring of `num` entries: zeroed RAM, vring_init, vq_enable. */
static void setup(unsigned num, bool indirect_ok, bool event_idx)
{
	memset(mem.host, 0, MEM_SIZE);
	vring_init(&vr, num, mem.host + RING_GPA, 4096);
	memset(&vq, 0, sizeof(vq));
	vq.name = "test";
	vq.num = (uint16_t)num;
	vq.desc_gpa = gpa_of(vr.desc);
	vq.avail_gpa = gpa_of(vr.avail);
	vq.used_gpa = gpa_of(vr.used);
	vq.indirect_ok = indirect_ok;
	vq.event_idx = event_idx;
	if (vq_enable(&vq, &mem) != 0) {
		printf("FAIL setup: vq_enable: %s\n", vq.error);
		exit(1);
	}
}

static void set_desc(struct vring_desc *table, unsigned i, uint64_t addr, uint32_t len, uint16_t flags,
		     uint16_t next)
{
	table[i] = (struct vring_desc){ .addr = addr, .len = len, .flags = flags, .next = next };
}

/* The guest publishes chain `head`. */
static void post(uint16_t head)
{
	vr.avail->ring[vr.avail->idx % vr.num] = head;
	vr.avail->idx++;
}

/* A hostile ring: pop must fail, break the queue, name the rule and leave
 * a line for the device to print. */
static void expect_broken(const char *what, enum vq_violation want)
{
	int rc = vq_pop_avail(&vq, &chain);

	violations_seen |= 1u << vq.violation;
	CHECK(rc == -1 && vq.broken && vq.violation == want && !strncmp(vq.error, "test queue: ", 12),
	      "%s: rc %d, broken %d, violation %s (want %s), error \"%s\"", what, rc, vq.broken,
	      vq_violation_name(vq.violation), vq_violation_name(want), vq.error);
}

static void test_enable(void)
{
	struct vq q;

	setup(8, false, false);
	CHECK(vq.ready && !vq.broken && vq.violation == VQV_NONE && vq.last_avail == 0,
	      "vq_enable accepts a good ring of 8");
	/* vring_init for 8 entries at 0x1000: desc 0x1000, avail 0x1080, used 0x2000 */
	CHECK(vq.desc_gpa == 0x1000 && vq.avail_gpa == 0x1080 && vq.used_gpa == 0x2000,
	      "vring_init layout: desc 0x1000, avail 0x1080, used 0x2000");
	CHECK(vq.desc == vr.desc && vq.avail == vr.avail && vq.used == vr.used,
	      "vq_enable resolves the three areas to the right host addresses");

#define BAD_ENABLE(field_setup, want, what)                                                    \
	do {                                                                                   \
		q = vq;                                                                        \
		q.ready = false;                                                               \
		q.error[0] = 0;                                                                \
		field_setup;                                                                   \
		int rc_ = vq_enable(&q, &mem);                                                 \
		violations_seen |= 1u << q.violation;                                          \
		CHECK(rc_ == -1 && q.broken && !q.ready && q.violation == (want) &&            \
		      !strncmp(q.error, "test queue: ", 12),                                   \
		      "vq_enable rejects %s: %s (want %s), \"%s\"", what,                       \
		      vq_violation_name(q.violation), vq_violation_name(want), q.error);       \
	} while (0)

	BAD_ENABLE(q.num = 0, VQV_SIZE, "size 0");
	BAD_ENABLE(q.num = 3, VQV_SIZE, "size 3");
	BAD_ENABLE(q.num = 2048, VQV_SIZE, "size 2048 > VQ_MAX_SIZE");
	BAD_ENABLE(q.desc_gpa = 0x1008, VQV_RING_MISALIGNED, "desc at 0x1008 (not 16-aligned)");
	BAD_ENABLE(q.avail_gpa = 0x1081, VQV_RING_MISALIGNED, "avail at an odd address");
	BAD_ENABLE(q.used_gpa = 0x2002, VQV_RING_MISALIGNED, "used at 0x2002 (not 4-aligned)");
	/* used ring of 8 needs 4 + 64 + 2 = 70 bytes; at MEM_SIZE-68 it pokes 2 bytes out */
	BAD_ENABLE(q.used_gpa = MEM_SIZE - 68, VQV_RING_OUTSIDE_RAM, "used ring 2 bytes past RAM");
	BAD_ENABLE(q.desc_gpa = MEM_SIZE, VQV_RING_OUTSIDE_RAM, "desc at the end of RAM");
	BAD_ENABLE(q.avail_gpa = 0xfffffffffffffff0ull, VQV_RING_OUTSIDE_RAM, "avail whose extent wraps 64 bits");

	/* ending exactly at the end of RAM is fine: desc 8 * 16 = 128 bytes,
	 * avail 4 + 16 + 2 = 22 bytes */
	q = vq;
	q.ready = false;
	q.desc_gpa = MEM_SIZE - 128;
	q.avail_gpa = MEM_SIZE - 128 - 22;
	CHECK(vq_enable(&q, &mem) == 0 && q.ready, "vq_enable accepts desc and avail ending exactly at the end of RAM");
}

static void test_good_chains(void)
{
	int rc;

	setup(8, false, false);
	CHECK(vq_pop_avail(&vq, &chain) == 0, "empty ring: pop returns 0");

	/* single descriptor, head 0 */
	mem.host[BUF_GPA] = 0xa1;
	set_desc(vr.desc, 0, BUF_GPA, 100, 0, 0);
	post(0);
	CHECK(vq_has_avail(&vq), "vq_has_avail sees the posted chain");
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.head == 0 && chain.count == 1 && !chain.indirect,
	      "single descriptor: rc 1, head 0, count 1 (rc %d, count %u)", rc, chain.count);
	CHECK(chain.out_len == 100 && chain.in_len == 0, "single descriptor: out 100, in 0");
	CHECK(chain.buf[0].host == mem.host + BUF_GPA && chain.buf[0].host[0] == 0xa1 && chain.buf[0].len == 100 &&
	      !chain.buf[0].device_writes, "single descriptor: host pointer at gpa 0x10000, len 100, readable");
	CHECK(vq.last_avail == 1 && vq_pop_avail(&vq, &chain) == 0 && !vq_has_avail(&vq),
	      "after one pop: last_avail 1, ring empty");

	/* three descriptors out of order: 3 -> 5 -> 1, the last device-writable */
	mem.host[BUF_GPA + 0x1000] = 0xb3;
	mem.host[BUF_GPA + 0x2000] = 0xb5;
	mem.host[BUF_GPA + 0x3000] = 0xb1;
	set_desc(vr.desc, 3, BUF_GPA + 0x1000, 12, VRING_DESC_F_NEXT, 5);
	set_desc(vr.desc, 5, BUF_GPA + 0x2000, 1000, VRING_DESC_F_NEXT, 1);
	set_desc(vr.desc, 1, BUF_GPA + 0x3000, 64, VRING_DESC_F_WRITE, 0);
	post(3);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.head == 3 && chain.count == 3, "chain 3->5->1: rc 1, head 3, count 3 (count %u)",
	      chain.count);
	CHECK(chain.out_len == 12 + 1000 && chain.in_len == 64, "chain 3->5->1: out 1012, in 64 (%llu, %llu)",
	      (unsigned long long)chain.out_len, (unsigned long long)chain.in_len);
	CHECK(chain.buf[0].host[0] == 0xb3 && chain.buf[1].host[0] == 0xb5 && chain.buf[2].host[0] == 0xb1,
	      "chain 3->5->1: buffers resolved in chain order");
	CHECK(chain.buf[1].len == 1000 && !chain.buf[1].device_writes && chain.buf[2].device_writes,
	      "chain 3->5->1: lengths and the writable flag carried");

	/* vq_push_used: element then index */
	vq_push_used(&vq, 3, 64);
	CHECK(vr.used->ring[0].id == 3 && vr.used->ring[0].len == 64 && vr.used->idx == 1,
	      "push_used(3, 64): used ring[0] = {3, 64}, idx 1");
	vq_push_used(&vq, 0, 0);
	CHECK(vr.used->ring[1].id == 0 && vr.used->ring[1].len == 0 && vr.used->idx == 2,
	      "push_used(0, 0): used ring[1] = {0, 0}, idx 2");

	/* a whole ring's worth of single descriptors: 8 at once is allowed */
	for (unsigned i = 0; i < 8; i++) {
		set_desc(vr.desc, i, BUF_GPA + i * 16, 16, 0, 0);
		post((uint16_t)i);
	}
	unsigned got = 0;
	while (vq_pop_avail(&vq, &chain) == 1) {
		vq_push_used(&vq, chain.head, 0);
		got++;
	}
	CHECK(got == 8 && !vq.broken && vq.last_avail == 10, "a full ring (8 chains) pops 8 times (got %u)", got);
	/* used idx 2 + 8 = 10, slots wrap: the 8th push lands in ring[(2+7) % 8 = 1] */
	CHECK(vr.used->idx == 10 && vr.used->ring[1].id == 7, "used ring wraps: idx 10, ring[1].id 7");

	/* the 16-bit index wrap: last_avail 65535, guest idx 65535 -> 0 */
	setup(8, false, false);
	vq.last_avail = vq.avail_seen = 65535;   /* a device that took all up to 65535 */
	vr.avail->idx = 65535;
	set_desc(vr.desc, 6, BUF_GPA, 40, 0, 0);
	vr.avail->ring[65535 % 8] = 6;
	vr.avail->idx = 0;
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.head == 6 && vq.last_avail == 0, "avail idx wrapping 65535 -> 0 pops ring[7] = head 6");

	/* a chain as long as the ring (8 descriptors, 7 hops) is legal */
	setup(8, false, false);
	for (unsigned i = 0; i < 8; i++)
		set_desc(vr.desc, i, BUF_GPA, 10, i < 7 ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	post(0);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.count == 8 && chain.out_len == 80, "chain of 8 = ring size is accepted (rc %d)", rc);

	/* a buffer ending exactly at the end of RAM is inside RAM */
	setup(8, false, false);
	set_desc(vr.desc, 0, MEM_SIZE - 4, 4, 0, 0);
	post(0);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.buf[0].host == mem.host + MEM_SIZE - 4,
	      "buffer ending exactly at the end of RAM is accepted");
}

/* A batch: avail->idx is loaded once for the entries it published. */
static void test_batches(void)
{
	setup(8, false, false);
	for (unsigned i = 0; i < 3; i++) {
		set_desc(vr.desc, i, BUF_GPA + i * 16, 16, 0, 0);
		post((uint16_t)i);
	}
	CHECK(vq_pop_avail(&vq, &chain) == 1 && vq.avail_seen == 3, "first pop of 3 loads avail->idx 3 once");
	vr.avail->idx = 3 + 100;   /* the guest now lies: more than a ring ahead */
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.head == 1 && vq_pop_avail(&vq, &chain) == 1 && chain.head == 2,
	      "the two entries that load published pop without reading the index again");
	expect_broken("avail->idx more than a ring ahead, seen at the next load", VQV_AVAIL_AHEAD);
}

static void test_indirect_good(void)
{
	struct vring_desc *t;
	int rc;

	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	mem.host[BUF_GPA] = 0xc0;
	mem.host[BUF_GPA + 0x1000] = 0xc1;
	mem.host[BUF_GPA + 0x2000] = 0xc2;
	/* table order 0 -> 2 -> 1: the spec starts at entry 0 and follows next */
	set_desc(t, 0, BUF_GPA, 12, VRING_DESC_F_NEXT, 2);
	set_desc(t, 2, BUF_GPA + 0x1000, 100, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA + 0x2000, 50, VRING_DESC_F_WRITE, 0);
	set_desc(vr.desc, 4, TABLE_GPA, 3 * 16, VRING_DESC_F_INDIRECT, 0);
	post(4);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.indirect && chain.head == 4 && chain.count == 3,
	      "indirect table of 3: rc 1, indirect, head 4, count 3 (rc %d, count %u, err \"%s\")", rc, chain.count,
	      vq.error);
	CHECK(chain.out_len == 112 && chain.in_len == 50, "indirect: out 12 + 100 = 112, in 50");
	CHECK(chain.buf[0].host[0] == 0xc0 && chain.buf[1].host[0] == 0xc1 && chain.buf[2].host[0] == 0xc2 &&
	      chain.buf[2].device_writes, "indirect: entries resolved in next order 0, 2, 1");

	/* spec 2.7.5.3.2: normal descriptors followed by one INDIRECT are legal:
	 * desc 2 (NEXT) -> desc 4 (INDIRECT, 3-entry table 0 -> 2 -> 1) */
	set_desc(vr.desc, 2, BUF_GPA + 0x3000, 8, VRING_DESC_F_NEXT, 4);
	post(2);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.indirect && chain.head == 2 && chain.count == 4 && chain.out_len == 120 &&
	      chain.in_len == 50, "direct descriptor then an indirect table: count 1 + 3, out 8 + 112, in 50 (rc %d)",
	      rc);

	/* a table whose chain ends early (entry 0 without NEXT) uses one entry */
	set_desc(t, 0, BUF_GPA, 12, 0, 0);
	post(4);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.indirect && chain.count == 1 && chain.out_len == 12,
	      "indirect: a 3-entry table with a 1-entry chain gives count 1");
}

/* One hostile case per ring: each starts from a clean, enabled queue. */
static void test_hostile(void)
{
	struct vring_desc *t;

	setup(8, false, false);
	post(8);
	expect_broken("head 8 >= ring size 8", VQV_HEAD_RANGE);
	CHECK(vq_pop_avail(&vq, &chain) == -1 && !vq_has_avail(&vq), "a broken queue stays broken");

	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 10, VRING_DESC_F_NEXT, 8);
	post(0);
	expect_broken("next 8 >= ring size 8", VQV_NEXT_RANGE);

	setup(8, false, false);
	set_desc(vr.desc, 0, MEM_SIZE - 10, 20, 0, 0);
	post(0);
	expect_broken("buffer running 10 bytes past RAM", VQV_BUF_OUTSIDE_RAM);

	setup(8, false, false);
	set_desc(vr.desc, 0, 0xfffffffffffffff8ull, 16, 0, 0);
	post(0);
	expect_broken("addr + len overflowing 64 bits", VQV_BUF_OUTSIDE_RAM);

	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 10, VRING_DESC_F_NEXT, 1);
	set_desc(vr.desc, 1, BUF_GPA, 10, VRING_DESC_F_NEXT, 0);
	post(0);
	expect_broken("chain loop 0 -> 1 -> 0", VQV_LOOP);

	setup(8, false, false);
	set_desc(vr.desc, 2, BUF_GPA, 10, VRING_DESC_F_NEXT, 2);
	post(2);
	expect_broken("self loop 2 -> 2", VQV_LOOP);

	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 10, 0, 0);
	vr.avail->idx = 9;                /* 9 - 0 > 8 */
	expect_broken("avail idx 9 with 0 taken, ring 8", VQV_AVAIL_AHEAD);

	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 10, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(vr.desc, 1, BUF_GPA, 10, 0, 0);
	post(0);
	expect_broken("readable after writable", VQV_READABLE_AFTER_WRITABLE);

	/* the same with a zero-length writable descriptor: in_len stays 0, but
	 * the order is still wrong */
	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 0, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 1);
	set_desc(vr.desc, 1, BUF_GPA, 10, 0, 0);
	post(0);
	expect_broken("readable after a zero-length writable", VQV_READABLE_AFTER_WRITABLE);

	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 10, 0x10, 0);
	post(0);
	expect_broken("unknown flag 0x10", VQV_DESC_FLAGS);

	setup(8, false, false);                /* indirect_ok = false */
	set_desc(vr.desc, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("INDIRECT without the feature", VQV_INDIRECT_NOT_NEGOTIATED);

	setup(8, true, false);
	set_desc(vr.desc, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT, 1);
	post(0);
	expect_broken("INDIRECT | NEXT", VQV_INDIRECT_WITH_NEXT);

	setup(8, true, false);
	set_desc(vr.desc, 0, TABLE_GPA, 0, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect table of length 0", VQV_INDIRECT_LEN);

	setup(8, true, false);
	set_desc(vr.desc, 0, TABLE_GPA, 24, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect table of length 24", VQV_INDIRECT_LEN);

	setup(8, true, false);
	set_desc(vr.desc, 0, MEM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect table half outside RAM", VQV_INDIRECT_OUTSIDE_RAM);

	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	set_desc(t, 0, BUF_GPA, 10, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	set_desc(vr.desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("nested INDIRECT in table entry 1", VQV_INDIRECT_NESTED);

	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	set_desc(t, 0, BUF_GPA, 10, VRING_DESC_F_NEXT, 2);
	set_desc(t, 1, BUF_GPA, 10, 0, 0);
	set_desc(vr.desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect next 2 in a 2-entry table", VQV_INDIRECT_NEXT_RANGE);

	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	set_desc(t, 0, BUF_GPA, 10, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA, 10, VRING_DESC_F_NEXT, 0);
	set_desc(vr.desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect loop 0 -> 1 -> 0", VQV_INDIRECT_LOOP);

	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	set_desc(t, 0, MEM_SIZE - 8, 16, 0, 0);
	set_desc(vr.desc, 0, TABLE_GPA, 16, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect entry's buffer outside RAM", VQV_BUF_OUTSIDE_RAM);

	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	set_desc(t, 0, BUF_GPA, 10, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA, 10, 0x8, 0);
	set_desc(vr.desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("unknown flag 0x8 in indirect table entry 1", VQV_INDIRECT_FLAGS);

	setup(8, true, false);
	set_desc(vr.desc, 0, TABLE_GPA, (VQ_MAX_CHAIN + 1) * 16, VRING_DESC_F_INDIRECT, 0);
	post(0);
	expect_broken("indirect table of VQ_MAX_CHAIN + 1 entries", VQV_INDIRECT_ENTRIES);

	/* A table may hold VQ_MAX_CHAIN entries, but a direct descriptor in
	 * front of a full one makes VQ_MAX_CHAIN + 1 buffers: the one rule
	 * neither the ring's nor the table's hop budget catches. */
	setup(8, true, false);
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	for (unsigned i = 0; i < VQ_MAX_CHAIN; i++)
		set_desc(t, i, BUF_GPA, 1, i + 1 < VQ_MAX_CHAIN ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	set_desc(vr.desc, 1, TABLE_GPA, VQ_MAX_CHAIN * 16, VRING_DESC_F_INDIRECT, 0);
	post(1);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.count == VQ_MAX_CHAIN,
	      "an indirect table of VQ_MAX_CHAIN entries alone is accepted (count %u, \"%s\")", chain.count, vq.error);
	set_desc(vr.desc, 0, BUF_GPA, 1, VRING_DESC_F_NEXT, 1);
	post(0);
	expect_broken("one direct descriptor + VQ_MAX_CHAIN table entries", VQV_CHAIN_DESCS);

	/* a good chain before the bad one is still delivered */
	setup(8, false, false);
	set_desc(vr.desc, 0, BUF_GPA, 10, 0, 0);
	post(0);
	post(9);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && !vq.broken, "good chain ahead of a bad head still pops");
	expect_broken("then head 9", VQV_HEAD_RANGE);
}

/* The device's cap on one chain's total length (vq.max_chain_bytes): the
 * review's attack was every ring slot holding a chain of descriptors that
 * each cover all of RAM, so one notify made the console write terabytes.
 * Over the cap is a broken ring like any other violation; the walk stops at
 * the descriptor that crosses it, not after resolving the whole chain. */
static void test_chain_cap(void)
{
	struct vring_desc *t;
	int rc;

	/* exactly at the cap: 3 descriptors, 100 + 200 readable + 700 writable = 1000 */
	setup(8, false, false);
	vq.max_chain_bytes = 1000;
	set_desc(vr.desc, 0, BUF_GPA, 100, VRING_DESC_F_NEXT, 1);
	set_desc(vr.desc, 1, BUF_GPA, 200, VRING_DESC_F_NEXT, 2);
	set_desc(vr.desc, 2, BUF_GPA, 700, VRING_DESC_F_WRITE, 0);
	post(0);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.count == 3 && chain.out_len + chain.in_len == 1000,
	      "cap 1000: a chain of exactly 1000 bytes (readable + writable) is accepted (rc %d, \"%s\")", rc, vq.error);

	/* one byte over, and the byte that crosses it is a writable one: writable
	 * bytes count, since the walker resolves them too */
	set_desc(vr.desc, 2, BUF_GPA, 701, VRING_DESC_F_WRITE, 0);
	post(0);
	expect_broken("cap 1000, chain of 1001 bytes", VQV_CHAIN_BYTES);

	/* the review's ring: every slot, a chain of all 8 descriptors, each
	 * covering all of RAM.  Refused at the first descriptor. */
	setup(8, false, false);
	vq.max_chain_bytes = 64 << 10;
	for (unsigned i = 0; i < 8; i++) {
		set_desc(vr.desc, i, 0, MEM_SIZE, i < 7 ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
		post(0);
	}
	expect_broken("every slot: 8 descriptors of all of RAM, cap 64 KiB", VQV_CHAIN_BYTES);
	CHECK(chain.count == 0 && vq.last_avail == 0,
	      "the walk stopped at the first descriptor (%u resolved) and took nothing", chain.count);

	/* the cap covers the descriptors inside an indirect table too */
	setup(8, true, false);
	vq.max_chain_bytes = 4096;
	t = (struct vring_desc *)(mem.host + TABLE_GPA);
	set_desc(t, 0, BUF_GPA, 4000, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA, 96, 0, 0);
	set_desc(vr.desc, 0, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	post(0);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.out_len == 4096, "indirect chain of exactly 4096 bytes accepted");
	set_desc(t, 1, BUF_GPA, 97, 0, 0);
	post(0);
	expect_broken("indirect chain of 4097 bytes, cap 4096", VQV_CHAIN_BYTES);

	/* a direct descriptor before the table counts towards the same cap */
	setup(8, true, false);
	vq.max_chain_bytes = 4096;
	set_desc(t, 0, BUF_GPA, 4000, VRING_DESC_F_NEXT, 1);
	set_desc(t, 1, BUF_GPA, 96, 0, 0);
	set_desc(vr.desc, 1, BUF_GPA, 1, VRING_DESC_F_NEXT, 2);
	set_desc(vr.desc, 2, TABLE_GPA, 32, VRING_DESC_F_INDIRECT, 0);
	post(1);
	expect_broken("1 direct byte + a 4096-byte table, cap 4096", VQV_CHAIN_BYTES);

	/* 0 means no cap: the same all-of-RAM chain is legal (the queues whose
	 * device only writes what it has, e.g. receive queues) */
	setup(8, false, false);
	for (unsigned i = 0; i < 8; i++)
		set_desc(vr.desc, i, 0, MEM_SIZE, i < 7 ? VRING_DESC_F_NEXT : 0, (uint16_t)(i + 1));
	post(0);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.out_len == 8ull * MEM_SIZE, "no cap (0): 8 MiB chain accepted");

	/* the cap is the device's, not the driver's: a device reset keeps it */
	setup(8, false, false);
	vq.max_chain_bytes = 512;
	vq_reset(&vq);
	CHECK(vq.max_chain_bytes == 512 && !strcmp(vq.name, "test") && !vq.ready,
	      "vq_reset keeps the name and the cap (%llu), drops the rings", (unsigned long long)vq.max_chain_bytes);
}

/* The line a device prints (virtio_mmio_fail) comes from the printf-checked
 * vq_fail: pinned here whole, once per kind of value in it, so that the
 * formats stay what people and the devices' tests read. */
static void test_error_lines(void)
{
	static const struct {
		const char *line;
		enum vq_violation v;
	} want[] = {
		{ "test queue: head index 9 >= ring size 8", VQV_HEAD_RANGE },
		{ "test queue: unknown descriptor flags 0x10 (head 0)", VQV_DESC_FLAGS },
		{ "test queue: descriptor buffer 0xfffffffffffffff8+16 lies outside guest RAM", VQV_BUF_OUTSIDE_RAM },
		{ "test queue: chain longer than 4096 bytes (head 1)", VQV_CHAIN_BYTES },
		{ "test queue: indirect table 0xffff0+32 lies outside guest RAM", VQV_INDIRECT_OUTSIDE_RAM },
	};
	struct vq q;

	for (unsigned k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		setup(8, true, false);
		vq.max_chain_bytes = 4096;
		switch (k) {
		case 0: post(9); break;
		case 1: set_desc(vr.desc, 0, BUF_GPA, 10, 0x10, 0), post(0); break;
		case 2: set_desc(vr.desc, 0, 0xfffffffffffffff8ull, 16, 0, 0), post(0); break;
		case 3:
			set_desc(vr.desc, 1, BUF_GPA, 4000, VRING_DESC_F_NEXT, 2);
			set_desc(vr.desc, 2, BUF_GPA, 97, 0, 0);
			post(1);
			break;
		case 4: set_desc(vr.desc, 0, MEM_SIZE - 16, 32, VRING_DESC_F_INDIRECT, 0), post(0); break;
		}
		CHECK(vq_pop_avail(&vq, &chain) == -1 && vq.violation == want[k].v && !strcmp(vq.error, want[k].line),
		      "error line \"%s\" (%s)", vq.error, vq_violation_name(vq.violation));
	}

	setup(8, false, false);
	q = vq;
	q.ready = false;
	q.avail_gpa = 0xfffffffffffffff0ull;
	CHECK(vq_enable(&q, &mem) == -1 && q.violation == VQV_RING_OUTSIDE_RAM &&
	      !strcmp(q.error, "test queue: ring outside guest RAM (desc 0x1000, avail 0xfffffffffffffff0)"),
	      "enable's error line \"%s\"", q.error);
	q.num = 3;
	CHECK(vq_enable(&q, &mem) == -1 && q.violation == VQV_SIZE &&
	      !strcmp(q.error, "test queue: size 3 is not a power of two in [1, 1024]"),
	      "re-enabling records the new violation: \"%s\"", q.error);
}

/* Every rule has a case above that makes it fire, and a distinct name. */
static void test_every_violation_reached(void)
{
	unsigned missing = 0;

	for (unsigned v = VQV_NONE + 1; v <= LAST_VIOLATION; v++) {
		const char *name = vq_violation_name((enum vq_violation)v);

		if (!(violations_seen & 1u << v)) {
			printf("     violation %s never fired\n", name);
			missing++;
		}
		for (unsigned w = VQV_NONE; w < v; w++)
			if (!strcmp(name, vq_violation_name((enum vq_violation)w)) || !strcmp(name, "unknown"))
				missing++;
	}
	CHECK(missing == 0, "each of the %u violations was reached by a case and has its own name (%u missing)",
	      (unsigned)LAST_VIOLATION, missing);
	setup(8, false, false);
	post(8);
	vq_pop_avail(&vq, &chain);
	vq_reset(&vq);
	CHECK(vq.violation == VQV_NONE && !vq.broken, "vq_reset clears the violation with the broken state");
}

static void test_notify_flags(void)
{
	/* without EVENT_IDX: the NO_NOTIFY flag */
	setup(8, false, false);
	vq_suppress_notify(&vq);
	CHECK(vr.used->flags == VRING_USED_F_NO_NOTIFY, "suppress sets used->flags NO_NOTIFY (flags %u)",
	      vr.used->flags);
	CHECK(!vq_enable_notify_and_recheck(&vq) && vr.used->flags == 0,
	      "enable clears NO_NOTIFY; nothing new -> recheck false");
	vq_suppress_notify(&vq);
	set_desc(vr.desc, 0, BUF_GPA, 10, 0, 0);
	post(0);                                /* the guest saw NO_NOTIFY and did not notify */
	CHECK(vq_enable_notify_and_recheck(&vq) && vr.used->flags == 0,
	      "avail idx 1 != last_avail 0 -> recheck true (the buffer that slipped in)");
	CHECK(vq_pop_avail(&vq, &chain) == 1 && !vq_enable_notify_and_recheck(&vq),
	      "after popping it the recheck is false again");

	/* with EVENT_IDX: avail_event (= used->ring[num]) instead of the flag */
	setup(8, false, true);
	for (unsigned i = 0; i < 2; i++) {
		set_desc(vr.desc, i, BUF_GPA, 10, 0, 0);
		post((uint16_t)i);
		vq_pop_avail(&vq, &chain);
	}
	/* last_avail 2: suppress parks avail_event half a wrap behind: 2 - 0x8000 = 0x8002 */
	vq_suppress_notify(&vq);
	CHECK(vring_avail_event(&vr) == 0x8002 && vr.used->flags == 0,
	      "event-idx suppress: avail_event 0x8002, flags untouched (avail_event 0x%x)", vring_avail_event(&vr));
	/* the guest adding entry 2 (old 2, new 3) must not need a notify */
	CHECK(!vring_need_event(vring_avail_event(&vr), 3, 2), "guest kick 2->3 after suppress: no notify");
	CHECK(!vq_enable_notify_and_recheck(&vq) && vring_avail_event(&vr) == 2,
	      "event-idx enable: avail_event = last_avail = 2, nothing new");
	CHECK(vring_need_event(vring_avail_event(&vr), 3, 2), "guest kick 2->3 after enable: notify");
	set_desc(vr.desc, 2, BUF_GPA, 10, 0, 0);
	post(2);
	CHECK(vq_enable_notify_and_recheck(&vq), "event-idx recheck true with avail idx 3 != last_avail 2");
	CHECK(vr.used->flags == 0, "event-idx never writes used->flags");

	/* after a device reset (vq_reset) the queue has no rings: a late timer's
	 * suppress / enable must not write through them */
	setup(8, false, false);
	vq_reset(&vq);
	vq_suppress_notify(&vq);
	CHECK(!vq_enable_notify_and_recheck(&vq) && vq.used == NULL && vr.used->flags == 0,
	      "suppress / enable on a reset queue do nothing and report no work");
}

static void test_should_interrupt(void)
{
	/* without EVENT_IDX: the guest's NO_INTERRUPT flag */
	setup(8, false, false);
	vq_push_used(&vq, 0, 0);
	CHECK(vq_should_interrupt(&vq), "avail->flags 0: interrupt");
	vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	vq_push_used(&vq, 1, 0);
	CHECK(!vq_should_interrupt(&vq), "VRING_AVAIL_F_NO_INTERRUPT: no interrupt");

	/* with EVENT_IDX: vring_need_event(used_event, now, signalled) */
	setup(8, false, true);
	vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;   /* ignored with event idx */
	for (unsigned i = 0; i < 3; i++)
		vq_push_used(&vq, (uint16_t)i, 0);
	vring_used_event(&vr) = 1;         /* (3 - 1 - 1) = 1 < (3 - 0) = 3 -> interrupt */
	CHECK(vq_should_interrupt(&vq), "used_event 1, used 0 -> 3: interrupt (flag ignored)");
	CHECK(vq.signalled_used == 3, "signalled_used follows to 3");
	vq_push_used(&vq, 3, 0);           /* (4 - 1 - 1) = 2 < (4 - 3) = 1? no */
	CHECK(!vq_should_interrupt(&vq), "used_event 1, used 3 -> 4: no interrupt");
	vq_push_used(&vq, 4, 0);
	vring_used_event(&vr) = 4;         /* (5 - 4 - 1) = 0 < (5 - 4) = 1 -> interrupt */
	CHECK(vq_should_interrupt(&vq), "used_event 4, used 4 -> 5: interrupt");
	vq_push_used(&vq, 5, 0);
	vring_used_event(&vr) = 7;         /* (6 - 7 - 1) = 65534 < 1? no */
	CHECK(!vq_should_interrupt(&vq), "used_event 7, used 5 -> 6: no interrupt");
}

int main(void)
{
	mem.host = aligned_alloc(4096, MEM_SIZE);
	mem.size = MEM_SIZE;
	if (!mem.host)
		return 1;
	test_enable();
	test_good_chains();
	test_batches();
	test_indirect_good();
	test_hostile();
	test_chain_cap();
	test_error_lines();
	test_notify_flags();
	test_should_interrupt();
	test_every_violation_reached();
	free(mem.host);
	return check_summary();
}
