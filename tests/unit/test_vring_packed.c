/*
 * test_vring_packed.c -- the host side of the packed ring
 * (devices/vring_packed.c, behind devices/virtqueue.c).
 *
 * The ring lives in a fake guest RAM, and the driver's side is written out
 * here the way the spec's example (virtio 1.2, 2.8.21) does it: descriptors
 * in consecutive slots with AVAIL = the driver's wrap counter and USED its
 * inverse, NEXT on all but the last, the buffer ID in every descriptor, the
 * head's flags stored last with release; used descriptors read back at the
 * driver's own position, skipping by the slot count it kept per ID.  So a
 * walker that takes a chain from the wrong slot, writes a used descriptor
 * to the wrong slot or with the wrong bits, or moves by the wrong count is
 * caught by a driver that knows nothing of the device's state.
 *
 * What is checked: enable (sizes, alignment, areas in RAM, the layout
 * picked by vq->packed); well-formed chains direct and indirect, completed
 * in and out of order, put back with unpop; several laps round rings of 1
 * to 1024 slots (powers of two and not) with chains that straddle the end;
 * every hostile ring refused with exactly its vq_violation and a one-line
 * error; the device event structure as suppress / enable write it; the
 * interrupt decision as should_interrupt makes it, and the pure
 * vq_packed_interrupt_needed against a slot-by-slot walk over every small
 * ring.  Every violation the packed walker can raise must be reached by
 * some case (test_every_violation_reached).
 */
#include <stdlib.h>
#include <string.h>

#include <linux/virtio_ring.h>

#include "check.h"
#include "virtqueue.h"
#include "vq_layout.h"

#define MEM_SIZE   (1u << 20)   /* 1 MiB of fake guest RAM */
#define RING_GPA   0x1000u      /* descriptor ring: 1024 slots end at 0x5000 */
#define DRIVER_GPA 0x8000u      /* driver event suppression structure */
#define DEVICE_GPA 0x8010u      /* device event suppression structure */
#define BUF_GPA    0x10000u     /* data buffers */
#define TABLE_GPA  0x40000u     /* indirect tables */

#define AVAIL_F ((uint16_t)(1u << VRING_PACKED_DESC_F_AVAIL))
#define USED_F  ((uint16_t)(1u << VRING_PACKED_DESC_F_USED))
#define WRAP_F  ((uint16_t)(1u << VRING_PACKED_EVENT_F_WRAP_CTR))

static struct guest_mem mem;
static struct vq vq;
static struct vq_chain chain;
static uint32_t violations_seen;   /* bit v: some case made vq_violation v fire */

/* ---- the driver ---- */

struct seg {
	uint64_t addr;
	uint32_t len;
	bool writes;
};

static struct {
	struct vring_packed_desc *ring;
	struct vring_packed_desc_event *driver, *device;
	uint16_t num;
	uint16_t next_avail, next_used;
	bool avail_wrap, used_wrap;     /* the Driver Ring Wrap Counter, and where it reads used ones */
	unsigned free_slots;
	uint16_t slots_of[VQ_MAX_SIZE]; /* per ID: slots its chain took */
} drv;

static uint16_t avail_bits(bool wrap)
{
	return wrap ? AVAIL_F : USED_F;
}

static void drv_step(uint16_t *pos, bool *wrap)
{
	if (++*pos == drv.num) {
		*pos = 0;
		*wrap = !*wrap;
	}
}

/* A fresh packed queue of `num` slots on zeroed RAM, enabled. */
static void setup(unsigned num, bool indirect_ok, bool event_idx)
{
	memset(mem.host, 0, MEM_SIZE);
	memset(&vq, 0, sizeof(vq));
	vq.name = "test";
	vq.num = (uint16_t)num;
	vq.packed = true;
	vq.desc_gpa = RING_GPA;
	vq.avail_gpa = DRIVER_GPA;
	vq.used_gpa = DEVICE_GPA;
	vq.indirect_ok = indirect_ok;
	vq.event_idx = event_idx;
	if (vq_enable(&vq, &mem) != 0) {
		printf("FAIL setup: vq_enable: %s\n", vq.error);
		exit(1);
	}
	memset(&drv, 0, sizeof(drv));
	drv.ring = (struct vring_packed_desc *)(mem.host + RING_GPA);
	drv.driver = (struct vring_packed_desc_event *)(mem.host + DRIVER_GPA);
	drv.device = (struct vring_packed_desc_event *)(mem.host + DEVICE_GPA);
	drv.num = (uint16_t)num;
	drv.avail_wrap = drv.used_wrap = true;
	drv.free_slots = num;
}

/* Make a chain available under buffer ID `id`; returns its first slot.
 * The head's flags go last, with release, so the device never sees part
 * of a chain. */
static uint16_t post_chain(const struct seg *s, unsigned n, uint16_t id)
{
	uint16_t head = drv.next_avail, head_flags = 0;

	for (unsigned i = 0; i < n; i++) {
		struct vring_packed_desc *d = &drv.ring[drv.next_avail];
		uint16_t f = avail_bits(drv.avail_wrap) | (s[i].writes ? VRING_DESC_F_WRITE : 0) |
			     (i + 1 < n ? VRING_DESC_F_NEXT : 0);

		d->addr = s[i].addr;
		d->len = s[i].len;
		d->id = id;
		if (i == 0)
			head_flags = f;
		else
			__atomic_store_n(&d->flags, f, __ATOMIC_RELEASE);
		drv_step(&drv.next_avail, &drv.avail_wrap);
	}
	__atomic_store_n(&drv.ring[head].flags, head_flags, __ATOMIC_RELEASE);
	if (id < VQ_MAX_SIZE)   /* a hostile test may post any ID */
		drv.slots_of[id] = (uint16_t)n;
	drv.free_slots -= n;
	return head;
}

static uint16_t post_one(uint64_t addr, uint32_t len, bool writes, uint16_t id)
{
	struct seg s = { addr, len, writes };

	return post_chain(&s, 1, id);
}

/* An indirect table of n entries at table_gpa (WRITE is the only flag the
 * driver may set in it; any address, so written bytewise), named by one
 * ring slot. */
static uint16_t post_indirect(uint64_t table_gpa, const struct seg *s, unsigned n, uint16_t id)
{
	uint16_t head = drv.next_avail;

	for (unsigned i = 0; i < n; i++) {
		struct vring_packed_desc e = { .addr = s[i].addr, .len = s[i].len,
					       .flags = s[i].writes ? VRING_DESC_F_WRITE : 0 };

		memcpy(mem.host + table_gpa + 16 * i, &e, sizeof(e));
	}
	drv.ring[head].addr = table_gpa;
	drv.ring[head].len = 16 * n;
	drv.ring[head].id = id;
	__atomic_store_n(&drv.ring[head].flags, (uint16_t)(avail_bits(drv.avail_wrap) | VRING_DESC_F_INDIRECT),
			 __ATOMIC_RELEASE);
	drv_step(&drv.next_avail, &drv.avail_wrap);
	if (id < VQ_MAX_SIZE)
		drv.slots_of[id] = 1;
	drv.free_slots -= 1;
	return head;
}

/* A descriptor exactly as given, at any slot: the hostile driver. */
static void put_raw(uint16_t pos, uint64_t addr, uint32_t len, uint16_t id, uint16_t flags)
{
	drv.ring[pos] = (struct vring_packed_desc){ .addr = addr, .len = len, .id = id, .flags = flags };
}

struct used {
	uint16_t slot, id, flags;
	uint32_t len;
};

/* The next used descriptor, read as the driver reads it (2.8.22): 1 and
 * *u if the slot at its position is used on its lap, then it skips the
 * slots the ID's chain took. */
static int reap(struct used *u)
{
	struct vring_packed_desc *d = &drv.ring[drv.next_used];
	uint16_t f = __atomic_load_n(&d->flags, __ATOMIC_ACQUIRE);

	if (!!(f & USED_F) != drv.used_wrap || !!(f & AVAIL_F) != drv.used_wrap)
		return 0;
	*u = (struct used){ .slot = drv.next_used, .id = d->id, .flags = f, .len = d->len };
	if (u->id >= drv.num || !drv.slots_of[u->id])
		return -1;
	for (unsigned i = 0; i < drv.slots_of[u->id]; i++)
		drv_step(&drv.next_used, &drv.used_wrap);
	drv.free_slots += drv.slots_of[u->id];
	drv.slots_of[u->id] = 0;
	return 1;
}

/* A hostile ring: pop must fail, break the queue, name the rule and leave
 * one line for the device to print. */
static void expect_broken(const char *what, enum vq_violation want)
{
	int rc = vq_pop_avail(&vq, &chain);

	violations_seen |= 1u << vq.violation;
	CHECK(rc == -1 && vq.broken && vq.violation == want && !strncmp(vq.error, "test queue: ", 12) &&
	      !strchr(vq.error, '\n'),
	      "%s: rc %d, violation %s (want %s), \"%s\"", what, rc, vq_violation_name(vq.violation),
	      vq_violation_name(want), vq.error);
}

/* ---- enable ---- */

static void bad_enable(const char *what, unsigned num, uint64_t desc, uint64_t driver, uint64_t device,
		       enum vq_violation want)
{
	struct vq q = { .name = "test", .num = (uint16_t)num, .packed = true, .desc_gpa = desc,
			.avail_gpa = driver, .used_gpa = device };
	int rc = vq_enable(&q, &mem);

	violations_seen |= 1u << q.violation;
	CHECK(rc == -1 && q.broken && !q.ready && q.violation == want && !strncmp(q.error, "test queue: ", 12),
	      "vq_enable refuses %s: %s (want %s), \"%s\"", what, vq_violation_name(q.violation),
	      vq_violation_name(want), q.error);
}

static bool enables(unsigned num, uint64_t desc, uint64_t driver, uint64_t device)
{
	struct vq q = { .name = "test", .num = (uint16_t)num, .packed = true, .desc_gpa = desc,
			.avail_gpa = driver, .used_gpa = device };

	return vq_enable(&q, &mem) == 0 && q.ready && q.layout == &vq_layout_packed;
}

static void test_enable(void)
{
	struct vq q;

	setup(8, false, false);
	CHECK(vq.ready && !vq.broken && vq.layout == &vq_layout_packed, "vq->packed picks the packed layout");
	CHECK(vq.pk.desc == drv.ring && vq.pk.driver == drv.driver && vq.pk.device == drv.device,
	      "the three areas resolve to descriptor ring, driver area, device area");
	CHECK(vq.pk.avail_wrap && vq.pk.used_wrap && vq.pk.next_avail == 0 && vq.pk.next_used == 0 &&
	      vq.pk.in_flight == 0, "both wrap counters start at 1, positions at 0");
	CHECK(drv.device->flags == VRING_PACKED_EVENT_FLAG_ENABLE, "enable states ENABLE in the device area");
	setup(8, false, true);
	CHECK(drv.device->flags == VRING_PACKED_EVENT_FLAG_DESC && drv.device->off_wrap == (0 | WRAP_F),
	      "with EVENT_IDX: DESC at slot 0 of lap 1 (off_wrap 0x%x)", drv.device->off_wrap);

	q = (struct vq){ .name = "test", .num = 8, .desc_gpa = RING_GPA, .avail_gpa = 0x6000, .used_gpa = 0x7000 };
	CHECK(vq_enable(&q, &mem) == 0 && q.layout == &vq_layout_split, "without vq->packed: the split layout");

	/* sizes: the spec lets a packed ring have any size; ours up to 1024 */
	CHECK(enables(1, RING_GPA, DRIVER_GPA, DEVICE_GPA) && enables(6, RING_GPA, DRIVER_GPA, DEVICE_GPA) &&
	      enables(1000, RING_GPA, DRIVER_GPA, DEVICE_GPA) && enables(1024, RING_GPA, DRIVER_GPA, DEVICE_GPA),
	      "sizes 1, 6, 1000 and 1024 are accepted (no power of two needed)");
	bad_enable("size 0", 0, RING_GPA, DRIVER_GPA, DEVICE_GPA, VQV_SIZE);
	bad_enable("size 1025", 1025, RING_GPA, DRIVER_GPA, DEVICE_GPA, VQV_SIZE);
	bad_enable("size 65535", 65535, RING_GPA, DRIVER_GPA, DEVICE_GPA, VQV_SIZE);
	bad_enable("a ring at 0x1008 (not 16-aligned)", 8, 0x1008, DRIVER_GPA, DEVICE_GPA, VQV_RING_MISALIGNED);
	bad_enable("a driver area at 0x8002 (not 4-aligned)", 8, RING_GPA, 0x8002, DEVICE_GPA, VQV_RING_MISALIGNED);
	bad_enable("a device area at 0x8011 (not 4-aligned)", 8, RING_GPA, DRIVER_GPA, 0x8011, VQV_RING_MISALIGNED);
	bad_enable("a ring of 8 running 16 bytes past RAM", 8, MEM_SIZE - 112, DRIVER_GPA, DEVICE_GPA,
		   VQV_RING_OUTSIDE_RAM);
	bad_enable("a driver area at the end of RAM", 8, RING_GPA, MEM_SIZE, DEVICE_GPA, VQV_RING_OUTSIDE_RAM);
	bad_enable("a device area at the end of RAM", 8, RING_GPA, DRIVER_GPA, MEM_SIZE, VQV_RING_OUTSIDE_RAM);
	bad_enable("a driver area whose extent wraps 64 bits", 8, RING_GPA, 0xfffffffffffffffcull, DEVICE_GPA,
		   VQV_RING_OUTSIDE_RAM);
	CHECK(enables(8, MEM_SIZE - 128, DRIVER_GPA, DEVICE_GPA) && enables(8, RING_GPA, MEM_SIZE - 4, DEVICE_GPA) &&
	      enables(8, RING_GPA, DRIVER_GPA, MEM_SIZE - 4), "each area ending exactly at the end of RAM is accepted");

	q = (struct vq){ .name = "test", .num = 0, .packed = true };
	vq_enable(&q, &mem);
	CHECK(!strcmp(q.error, "test queue: packed ring size 0 is not in [1, 1024]"), "enable's error line \"%s\"",
	      q.error);
	q = (struct vq){ .name = "test", .num = 8, .packed = true, .desc_gpa = RING_GPA, .avail_gpa = 0x8002,
			 .used_gpa = DEVICE_GPA };
	vq_enable(&q, &mem);
	CHECK(!strcmp(q.error, "test queue: packed ring areas misaligned (desc 0x1000, driver 0x8002, device 0x8010)"),
	      "misaligned error line \"%s\"", q.error);
}

/* ---- good chains ---- */

static void test_good_chains(void)
{
	struct seg three[] = { { BUF_GPA + 0x1000, 12, false }, { BUF_GPA + 0x2000, 1000, false },
			       { BUF_GPA + 0x3000, 64, true } };
	struct used u;
	int rc;

	setup(8, false, false);
	CHECK(vq_pop_avail(&vq, &chain) == 0 && !vq_has_avail(&vq), "a zeroed ring: nothing available");

	mem.host[BUF_GPA] = 0xa1;
	post_one(BUF_GPA, 100, false, 5);
	CHECK(vq_has_avail(&vq), "vq_has_avail sees the posted descriptor");
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.head == 5 && chain.count == 1 && !chain.indirect && chain.out_len == 100 &&
	      chain.in_len == 0, "one descriptor: rc 1, ID 5, count 1, out 100 (rc %d, head %u)", rc, chain.head);
	CHECK(chain.buf[0].host == mem.host + BUF_GPA && chain.buf[0].host[0] == 0xa1 && !chain.buf[0].device_writes,
	      "its buffer resolves to the host address of 0x10000, readable");
	CHECK(vq.pk.in_flight == 1 && vq.pk.id_slots[5] == 1 && vq.pk.next_avail == 1 && !vq_has_avail(&vq),
	      "ID 5 in flight with 1 slot, next_avail 1, nothing more");
	vq_push_used(&vq, 5, 0);
	CHECK(reap(&u) == 1 && u.slot == 0 && u.id == 5 && u.flags == (AVAIL_F | USED_F),
	      "used descriptor at slot 0: ID 5, flags AVAIL|USED (lap 1), no WRITE for len 0 (flags 0x%x)", u.flags);
	CHECK(vq.pk.in_flight == 0 && vq.pk.id_slots[5] == 0 && vq.pk.next_used == 1, "ID 5 free again");

	/* three descriptors in slots 1..3, the last writable */
	mem.host[BUF_GPA + 0x1000] = 0xb1, mem.host[BUF_GPA + 0x2000] = 0xb2, mem.host[BUF_GPA + 0x3000] = 0xb3;
	post_chain(three, 3, 2);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.head == 2 && chain.count == 3 && chain.out_len == 1012 && chain.in_len == 64,
	      "chain of 3: ID 2, out 1012, in 64 (rc %d, count %u)", rc, chain.count);
	CHECK(chain.buf[0].host[0] == 0xb1 && chain.buf[1].host[0] == 0xb2 && chain.buf[2].host[0] == 0xb3 &&
	      chain.buf[2].device_writes && !chain.buf[1].device_writes, "in slot order, WRITE carried");
	CHECK(vq.pk.next_avail == 4 && vq.pk.id_slots[2] == 3, "next_avail 4, ID 2 holds 3 slots");
	vq_push_used(&vq, 2, 64);
	CHECK(drv.ring[1].id == 2 && drv.ring[1].len == 64 &&
	      drv.ring[1].flags == (AVAIL_F | USED_F | VRING_DESC_F_WRITE),
	      "one used descriptor at slot 1 for the whole chain: ID 2, len 64, AVAIL|USED|WRITE");
	CHECK(vq.pk.next_used == 4 && reap(&u) == 1 && u.id == 2 && u.len == 64 && drv.next_used == 4,
	      "next_used skips the chain's 3 slots to 4, where the driver goes too");

	/* the ID is the last descriptor's (2.8.6): earlier ones may say anything */
	post_chain(three, 3, 6);
	drv.ring[4].id = 1, drv.ring[5].id = 0xffff;
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.head == 6, "the buffer ID comes from the last descriptor (%u)",
	      chain.head);
	vq_push_used(&vq, 6, 0);
	CHECK(reap(&u) == 1 && u.id == 6 && u.slot == 4, "and goes back at slot 4");

	/* out of order: A (2 slots, ID 0) and B (1 slot, ID 1) taken, B done first */
	setup(8, false, false);
	post_chain(three, 2, 0);
	post_one(BUF_GPA, 8, false, 1);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.head == 0 && vq_pop_avail(&vq, &chain) == 1 && chain.head == 1,
	      "two chains taken: IDs 0 and 1");
	CHECK(vq.pk.in_flight == 3, "3 slots in flight");
	vq_push_used(&vq, 1, 0);
	vq_push_used(&vq, 0, 0);
	CHECK(drv.ring[0].id == 1 && drv.ring[1].id == 0 && vq.pk.next_used == 3 && vq.pk.in_flight == 0,
	      "completed out of order: ID 1 at slot 0, ID 0 at slot 1, next_used 3");
	CHECK(reap(&u) == 1 && u.id == 1 && reap(&u) == 1 && u.id == 0 && drv.next_used == 3 && reap(&u) == 0,
	      "the driver reads ID 1, skips 1, reads ID 0, skips 2: at slot 3 with the device");

	/* unpop puts the last chain back, once */
	setup(8, false, false);
	post_chain(three, 3, 4);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && vq.pk.in_flight == 3, "popped: 3 in flight");
	vq_unpop_avail(&vq);
	CHECK(vq.pk.in_flight == 0 && vq.pk.id_slots[4] == 0 && vq.pk.next_avail == 0 && vq.pk.avail_wrap &&
	      vq_has_avail(&vq), "unpop: nothing in flight, next_avail back at 0, available again");
	vq_unpop_avail(&vq);
	CHECK(vq.pk.next_avail == 0 && vq.pk.in_flight == 0, "a second unpop changes nothing");
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.head == 4 && chain.count == 3, "the same chain pops again");
	vq_push_used(&vq, 4, 0);
	vq_unpop_avail(&vq);
	CHECK(vq.pk.next_avail == 3 && vq.pk.in_flight == 0 && reap(&u) == 1 && u.id == 4,
	      "unpop after push changes nothing");

	/* unpop across the wrap: the chain began on the last lap's end */
	setup(4, false, false);
	for (uint16_t i = 0; i < 3; i++) {
		post_one(BUF_GPA, 4, false, i);
		vq_pop_avail(&vq, &chain);
		vq_push_used(&vq, i, 0);
		reap(&u);
	}
	post_chain(three, 2, 3);   /* slots 3 and 0 */
	CHECK(vq_pop_avail(&vq, &chain) == 1 && vq.pk.next_avail == 1 && !vq.pk.avail_wrap,
	      "a chain over the wrap: next_avail 1 on lap 2");
	vq_unpop_avail(&vq);
	CHECK(vq.pk.next_avail == 3 && vq.pk.avail_wrap && vq_pop_avail(&vq, &chain) == 1 && chain.count == 2,
	      "unpop takes it back to slot 3 on lap 1; it pops again");

	/* a chain as long as the ring is legal; a buffer ending at RAM's end too */
	setup(8, false, false);
	{
		struct seg s[8];

		for (unsigned i = 0; i < 8; i++)
			s[i] = (struct seg){ BUF_GPA, 10, false };
		post_chain(s, 8, 7);
	}
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.count == 8 && vq.pk.in_flight == 8 && vq.pk.next_avail == 0 && !vq.pk.avail_wrap,
	      "a chain of 8 slots in a ring of 8: accepted, next_avail 0 on lap 2 (rc %d, \"%s\")", rc, vq.error);
	vq_push_used(&vq, 7, 0);
	CHECK(vq.pk.next_used == 0 && !vq.pk.used_wrap && reap(&u) == 1 && u.slot == 0,
	      "its used descriptor at slot 0, and the used side on lap 2");
	post_one(MEM_SIZE - 4, 4, false, 0);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.buf[0].host == mem.host + MEM_SIZE - 4,
	      "a buffer ending exactly at the end of RAM, on lap 2");
}

static void test_indirect_good(void)
{
	struct seg t3[] = { { BUF_GPA, 12, false }, { BUF_GPA + 0x1000, 100, false }, { BUF_GPA + 0x2000, 50, true } };
	struct used u;
	int rc;

	setup(8, true, false);
	mem.host[BUF_GPA] = 0xc0, mem.host[BUF_GPA + 0x1000] = 0xc1, mem.host[BUF_GPA + 0x2000] = 0xc2;
	post_indirect(TABLE_GPA, t3, 3, 4);
	rc = vq_pop_avail(&vq, &chain);
	CHECK(rc == 1 && chain.indirect && chain.head == 4 && chain.count == 3 && chain.out_len == 112 &&
	      chain.in_len == 50, "indirect table of 3: ID 4, count 3, out 112, in 50 (rc %d, \"%s\")", rc, vq.error);
	CHECK(chain.buf[0].host[0] == 0xc0 && chain.buf[1].host[0] == 0xc1 && chain.buf[2].host[0] == 0xc2 &&
	      chain.buf[2].device_writes, "entries taken in table order, one after the other");
	CHECK(vq.pk.id_slots[4] == 1 && vq.pk.next_avail == 1, "the table takes one ring slot");
	vq_push_used(&vq, 4, 50);
	CHECK(reap(&u) == 1 && u.id == 4 && u.len == 50 && (u.flags & VRING_DESC_F_WRITE) && vq.pk.next_used == 1,
	      "one used descriptor, next_used 1");

	/* WRITE on the INDIRECT descriptor itself is reserved and ignored */
	post_indirect(TABLE_GPA, t3, 3, 5);
	drv.ring[1].flags |= VRING_DESC_F_WRITE;
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.out_len == 112 && chain.in_len == 50,
	      "INDIRECT|WRITE: the entries' own flags decide");
	vq_push_used(&vq, 5, 0);

	/* direct and indirect chains mixed in one ring (each list of one kind) */
	post_chain(t3, 3, 0);
	post_indirect(TABLE_GPA + 0x100, t3, 2, 1);
	post_one(BUF_GPA, 1, true, 2);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && !chain.indirect && chain.count == 3 &&
	      vq_pop_avail(&vq, &chain) == 1 && chain.indirect && chain.count == 2 &&
	      vq_pop_avail(&vq, &chain) == 1 && !chain.indirect && chain.in_len == 1,
	      "direct, indirect, direct in a row");

	/* a table of VQ_MAX_CHAIN entries */
	setup(8, true, false);
	{
		static struct seg big[VQ_MAX_CHAIN];

		for (unsigned i = 0; i < VQ_MAX_CHAIN; i++)
			big[i] = (struct seg){ BUF_GPA, 1, false };
		post_indirect(TABLE_GPA, big, VQ_MAX_CHAIN, 7);
	}
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.count == VQ_MAX_CHAIN,
	      "an indirect table of VQ_MAX_CHAIN entries is accepted (count %u)", chain.count);
}

/* ---- laps ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static unsigned below(unsigned n)
{
	return (unsigned)(next_rand() % n);
}

struct expect {
	uint16_t id, n;
	bool indirect;
	uint64_t addr0;
};

/*
 * Several laps round a ring of `num`: each round the driver posts what
 * fits (chains of random length, some the whole free space, some
 * indirect), the device takes them all, checks each against what was
 * posted, completes them in a shuffled order, and the driver reads the
 * used descriptors back.  Each used descriptor must sit where the device's
 * used side was, with the ID pushed, AVAIL = USED = that lap's counter,
 * WRITE exactly when len > 0.
 */
static void run_laps(unsigned num, unsigned laps)
{
	static struct expect fifo[VQ_MAX_SIZE];
	static uint16_t order[VQ_MAX_SIZE];
	static struct seg segs[VQ_MAX_SIZE];
	static bool id_busy[VQ_MAX_SIZE];
	unsigned long used_slots = 0, chains = 0, straddled = 0, bad = 0, indirect = 0;
	uint16_t exp_used = 0;
	bool exp_wrap = true;

	setup(num, true, false);
	memset(id_busy, 0, sizeof(id_busy));
	while (used_slots < (unsigned long)laps * num) {
		unsigned posted = 0, taken = 0;

		/* the driver: chains until the ring is full or it stops */
		while (drv.free_slots && posted < num && below(4)) {
			/* mostly short chains, sometimes up to all that is free */
			unsigned n = 1 + below(below(3) == 0 || drv.free_slots < 5 ? drv.free_slots : 5);
			bool ind = below(5) == 0;
			uint16_t id = (uint16_t)below(num);

			while (id_busy[id])
				id = (uint16_t)((id + 1) % num);
			for (unsigned i = 0; i < n; i++)
				segs[i] = (struct seg){ BUF_GPA + 0x100u * id + i, 1 + i, i + 1 == n && below(2) };
			if (ind && n > 8)
				n = 8;          /* tables 0x80 bytes apart */
			fifo[posted] = (struct expect){ id, (uint16_t)n, ind, segs[0].addr };
			if (ind) {
				post_indirect(TABLE_GPA + 0x80u * posted, segs, n, id);
			} else {
				straddled += drv.next_avail + n > num;
				post_chain(segs, n, id);
			}
			id_busy[id] = true;
			posted++;
		}
		/* the device: take them all, in ring order */
		while (vq_pop_avail(&vq, &chain) == 1) {
			const struct expect *e = &fifo[taken];

			if (taken >= posted || chain.head != e->id || chain.count != e->n ||
			    chain.indirect != e->indirect || chain.buf[0].host != mem.host + e->addr0)
				bad++;
			order[taken++] = chain.head;
			indirect += chain.indirect;
		}
		if (vq.broken || taken != posted)
			bad++;
		/* complete them shuffled; each used descriptor where the used side is */
		for (unsigned i = taken; i > 1; i--) {
			unsigned j = below(i);
			uint16_t t = order[i - 1];

			order[i - 1] = order[j], order[j] = t;
		}
		for (unsigned i = 0; i < taken; i++) {
			uint16_t id = order[i];
			uint32_t len = id & 1 ? id + 1u : 0;
			unsigned slots = vq.pk.id_slots[id];
			struct vring_packed_desc *d = &drv.ring[exp_used];
			uint16_t want = (exp_wrap ? AVAIL_F | USED_F : 0) | (len ? VRING_DESC_F_WRITE : 0);

			vq_push_used(&vq, id, len);
			if (d->id != id || d->len != len || d->flags != want)
				bad++;
			for (unsigned k = 0; k < slots; k++)
				if (++exp_used == num)
					exp_used = 0, exp_wrap = !exp_wrap;
			used_slots += slots;
		}
		/* the driver reads them back in the order they were written */
		for (unsigned i = 0; i < taken; i++) {
			struct used u;

			if (reap(&u) != 1 || u.id != order[i])
				bad++;
			id_busy[order[i]] = false;
		}
		chains += taken;
		if (vq.pk.next_used != exp_used || vq.pk.used_wrap != exp_wrap || vq.pk.in_flight != 0 ||
		    drv.free_slots != num)
			bad++;
		if (bad)
			break;
	}
	CHECK(bad == 0 && !vq.broken,
	      "ring of %u: %lu laps, %lu chains (%lu over the wrap, %lu indirect), every used descriptor in its "
	      "slot with its lap's bits (%lu mismatches%s%s)", num, used_slots / num, chains, straddled, indirect, bad,
	      vq.broken ? ", " : "", vq.error);
	CHECK(num < 4 || straddled > 0, "ring of %u: some chains straddled the end of the ring", num);
}

static void test_laps(void)
{
	static const unsigned sizes[] = { 1, 2, 3, 4, 6, 8, 100, 256, 1000, 1024 };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		run_laps(sizes[i], sizes[i] >= 256 ? 6 : 40);
}

/* ---- hostile rings ---- */

/* Use up `n` single-slot chains (IDs 0..n-1), so the next chain starts at slot n. */
static void advance_ring(unsigned n)
{
	struct used u;

	for (unsigned i = 0; i < n; i++) {
		post_one(BUF_GPA, 4, false, (uint16_t)i);
		vq_pop_avail(&vq, &chain);
		vq_push_used(&vq, (uint16_t)i, 0);
		reap(&u);
	}
}

static void test_hostile_wrap(void)
{
	const uint16_t lap1 = AVAIL_F, lap2 = USED_F;

	/* AVAIL == USED != the wrap counter: a used descriptor, or never made available */
	setup(8, false, false);
	put_raw(0, BUF_GPA, 10, 0, 0);
	CHECK(vq_pop_avail(&vq, &chain) == 0 && !vq.broken && !vq_has_avail(&vq),
	      "lap 1, AVAIL = USED = 0: never available, not an error (a used descriptor looks the same)");
	put_raw(0, BUF_GPA, 10, 0, lap2);
	CHECK(vq_pop_avail(&vq, &chain) == 0 && !vq.broken, "lap 1, a descriptor with lap 2's bits: not yet available");

	setup(8, false, false);
	put_raw(0, BUF_GPA, 10, 0, AVAIL_F | USED_F);
	CHECK(vq_has_avail(&vq), "lap 1, AVAIL = USED = 1: has_avail says look (so pop can refuse it)");
	expect_broken("lap 1, AVAIL = USED = 1 at the next slot", VQV_PACKED_WRAP);
	CHECK(vq_pop_avail(&vq, &chain) == -1 && !vq_has_avail(&vq), "a broken queue stays broken");

	/* on lap 2 the same test with the bits the other way round */
	setup(4, false, false);
	advance_ring(4);
	put_raw(0, BUF_GPA, 10, 0, 0);
	expect_broken("lap 2, AVAIL = USED = 0 at the next slot", VQV_PACKED_WRAP);

	/* a slot of a chain not available on its lap */
	setup(8, false, false);
	put_raw(1, BUF_GPA, 10, 0, lap2);
	put_raw(2, BUF_GPA, 10, 0, lap1);
	put_raw(0, BUF_GPA, 10, 0, lap1 | VRING_DESC_F_NEXT);
	expect_broken("a chain whose second slot has lap 2's bits", VQV_PACKED_WRAP);

	setup(8, false, false);
	put_raw(1, BUF_GPA, 10, 0, AVAIL_F | USED_F);
	put_raw(0, BUF_GPA, 10, 0, lap1 | VRING_DESC_F_NEXT);
	expect_broken("a chain whose second slot is marked used", VQV_PACKED_WRAP);

	/* a chain over the end of the ring whose slot 0 kept lap 1's bits */
	setup(4, false, false);
	advance_ring(3);
	put_raw(0, BUF_GPA, 10, 9, lap1);
	put_raw(3, BUF_GPA, 10, 0, lap1 | VRING_DESC_F_NEXT);
	expect_broken("a chain over the wrap whose second slot did not flip", VQV_PACKED_WRAP);

	/* the same with the flip: fine */
	setup(4, false, false);
	advance_ring(3);
	put_raw(0, BUF_GPA, 10, 3, lap2);
	put_raw(3, BUF_GPA, 10, 3, lap1 | VRING_DESC_F_NEXT);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.count == 2 && chain.head == 3,
	      "the chain over the wrap with slot 0 flipped to lap 2 is accepted");
}

static void test_hostile_ids_and_length(void)
{
	setup(8, false, false);
	post_one(BUF_GPA, 10, false, 8);
	expect_broken("buffer ID 8 in a ring of 8", VQV_ID_RANGE);

	setup(8, false, false);
	post_one(BUF_GPA, 10, false, 0xffff);
	expect_broken("buffer ID 0xffff", VQV_ID_RANGE);

	setup(8, false, false);
	post_one(BUF_GPA, 10, false, 3);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.head == 3, "ID 3 taken (not yet completed)");
	post_one(BUF_GPA, 10, false, 3);
	expect_broken("ID 3 again while the device holds it", VQV_ID_IN_FLIGHT);

	/* a chain of NEXTs all round the ring */
	setup(8, false, false);
	for (uint16_t i = 0; i < 8; i++)
		put_raw(i, BUF_GPA, 10, 0, AVAIL_F | VRING_DESC_F_NEXT);
	expect_broken("NEXT on all 8 slots of a ring of 8", VQV_PACKED_CHAIN_TOO_LONG);

	setup(1, false, false);
	put_raw(0, BUF_GPA, 10, 0, AVAIL_F | VRING_DESC_F_NEXT);
	expect_broken("NEXT on the only slot of a ring of 1", VQV_PACKED_CHAIN_TOO_LONG);

	/* with one slot in flight only three are free: a chain of four also
	 * overwrites the slot the device still holds */
	setup(4, false, false);
	post_one(BUF_GPA, 10, false, 0);
	vq_pop_avail(&vq, &chain);
	put_raw(2, BUF_GPA, 10, 1, AVAIL_F | VRING_DESC_F_NEXT);
	put_raw(3, BUF_GPA, 10, 1, AVAIL_F | VRING_DESC_F_NEXT);
	put_raw(0, BUF_GPA, 10, 1, USED_F);
	put_raw(1, BUF_GPA, 10, 1, AVAIL_F | VRING_DESC_F_NEXT);
	expect_broken("a chain of 4 slots with 1 of 4 in flight", VQV_PACKED_CHAIN_TOO_LONG);

	/* every slot in flight, and the driver rewrites one as available */
	setup(2, false, false);
	post_one(BUF_GPA, 10, false, 0);
	post_one(BUF_GPA, 10, false, 1);
	vq_pop_avail(&vq, &chain);
	vq_pop_avail(&vq, &chain);
	put_raw(0, BUF_GPA, 10, 0, USED_F);
	expect_broken("a slot made available while all slots are in flight", VQV_PACKED_CHAIN_TOO_LONG);
	CHECK(!strcmp(vq.error, "test queue: chain from slot 0 needs more than the 0 free slots (2 of 2 in flight)"),
	      "its line: \"%s\"", vq.error);

	setup(8, false, false);
	post_one(BUF_GPA, 10, false, 0);
	post_one(BUF_GPA, 10, false, 9);
	CHECK(vq_pop_avail(&vq, &chain) == 1, "a good chain ahead of a bad one is still delivered");
	expect_broken("then ID 9", VQV_ID_RANGE);
	CHECK(!strcmp(vq.error, "test queue: buffer ID 9 >= ring size 8 (chain from slot 1)"), "its line: \"%s\"",
	      vq.error);
}

static void test_hostile_buffers(void)
{
	struct seg ww[] = { { BUF_GPA, 10, true }, { BUF_GPA, 10, false } };
	struct seg z[] = { { BUF_GPA, 0, true }, { BUF_GPA, 10, false } };

	setup(8, false, false);
	put_raw(0, BUF_GPA, 10, 0, AVAIL_F | 0x8);
	expect_broken("unknown flag 0x8", VQV_DESC_FLAGS);

	setup(8, false, false);
	put_raw(0, BUF_GPA, 10, 0, AVAIL_F | 0x40);
	expect_broken("unknown flag 0x40", VQV_DESC_FLAGS);

	setup(8, false, false);
	post_one(MEM_SIZE - 10, 20, false, 0);
	expect_broken("a buffer 10 bytes past RAM", VQV_BUF_OUTSIDE_RAM);

	setup(8, false, false);
	post_one(0xfffffffffffffff8ull, 16, false, 0);
	expect_broken("addr + len overflowing 64 bits", VQV_BUF_OUTSIDE_RAM);
	CHECK(!strcmp(vq.error, "test queue: descriptor buffer 0xfffffffffffffff8+16 lies outside guest RAM"),
	      "its line: \"%s\"", vq.error);

	setup(8, false, false);
	post_chain(ww, 2, 0);
	expect_broken("readable after writable", VQV_READABLE_AFTER_WRITABLE);

	setup(8, false, false);
	post_chain(z, 2, 0);
	expect_broken("readable after a zero-length writable", VQV_READABLE_AFTER_WRITABLE);

	setup(8, false, false);
	vq.max_chain_bytes = 1000;
	{
		struct seg s[] = { { BUF_GPA, 100, false }, { BUF_GPA, 200, false }, { BUF_GPA, 700, true } };

		post_chain(s, 3, 0);
		CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.out_len + chain.in_len == 1000,
		      "cap 1000: a chain of exactly 1000 bytes");
		vq_push_used(&vq, 0, 0);
		s[2].len = 701;
		post_chain(s, 3, 0);
		expect_broken("cap 1000, a chain of 1001 bytes", VQV_CHAIN_BYTES);
	}

	/* the review's ring: every slot all of RAM, cap 64 KiB: refused at once */
	setup(8, false, false);
	vq.max_chain_bytes = 64 << 10;
	{
		struct seg s[8];

		for (unsigned i = 0; i < 8; i++)
			s[i] = (struct seg){ 0, MEM_SIZE, false };
		post_chain(s, 8, 0);
	}
	expect_broken("8 slots of all of RAM, cap 64 KiB", VQV_CHAIN_BYTES);
	CHECK(chain.count == 0 && vq.pk.next_avail == 0 && vq.pk.in_flight == 0,
	      "the walk stopped at the first descriptor and took nothing");
}

static void test_hostile_indirect(void)
{
	struct vring_packed_desc *t = (struct vring_packed_desc *)(mem.host + TABLE_GPA);
	struct seg one[] = { { BUF_GPA, 10, false } }, two[] = { { BUF_GPA, 10, false }, { BUF_GPA, 10, false } };
	struct seg ww[] = { { BUF_GPA, 10, true }, { BUF_GPA, 10, false } };

	setup(8, false, false);
	post_indirect(TABLE_GPA, one, 1, 0);
	expect_broken("INDIRECT without the feature", VQV_INDIRECT_NOT_NEGOTIATED);

	setup(8, true, false);
	post_indirect(TABLE_GPA, one, 1, 0);
	drv.ring[0].flags |= VRING_DESC_F_NEXT;
	expect_broken("INDIRECT | NEXT", VQV_INDIRECT_WITH_NEXT);

	/* 2.8.7: no INDIRECT in a list linked by NEXT (the split ring allows it last) */
	setup(8, true, false);
	post_indirect(TABLE_GPA, one, 1, 0);   /* slot 0, rewritten below */
	put_raw(1, TABLE_GPA, 16, 0, AVAIL_F | VRING_DESC_F_INDIRECT);
	put_raw(0, BUF_GPA, 10, 0, AVAIL_F | VRING_DESC_F_NEXT);
	expect_broken("a direct descriptor, then an INDIRECT one in the same chain", VQV_INDIRECT_IN_CHAIN);

	setup(8, true, false);
	put_raw(0, TABLE_GPA, 0, 0, AVAIL_F | VRING_DESC_F_INDIRECT);
	expect_broken("an indirect table of length 0", VQV_INDIRECT_LEN);

	setup(8, true, false);
	put_raw(0, TABLE_GPA, 24, 0, AVAIL_F | VRING_DESC_F_INDIRECT);
	expect_broken("an indirect table of length 24", VQV_INDIRECT_LEN);

	setup(8, true, false);
	put_raw(0, TABLE_GPA, (VQ_MAX_CHAIN + 1) * 16, 0, AVAIL_F | VRING_DESC_F_INDIRECT);
	expect_broken("an indirect table of VQ_MAX_CHAIN + 1 entries", VQV_INDIRECT_ENTRIES);

	setup(8, true, false);
	put_raw(0, MEM_SIZE - 16, 32, 0, AVAIL_F | VRING_DESC_F_INDIRECT);
	expect_broken("an indirect table half outside RAM", VQV_INDIRECT_OUTSIDE_RAM);

	setup(8, true, false);
	post_indirect(TABLE_GPA, two, 2, 0);
	t[1].flags = VRING_DESC_F_INDIRECT;
	expect_broken("a nested INDIRECT in table entry 1", VQV_INDIRECT_NESTED);

	setup(8, true, false);
	post_indirect(TABLE_GPA, two, 2, 0);
	t[0].flags = VRING_DESC_F_NEXT;
	expect_broken("NEXT in a packed table entry (only WRITE is allowed)", VQV_INDIRECT_FLAGS);

	setup(8, true, false);
	post_indirect(TABLE_GPA, two, 2, 0);
	t[1].flags = AVAIL_F;
	expect_broken("AVAIL in a table entry", VQV_INDIRECT_FLAGS);

	setup(8, true, false);
	post_indirect(TABLE_GPA, two, 2, 0);
	t[1].addr = MEM_SIZE - 8, t[1].len = 16;
	expect_broken("a table entry's buffer outside RAM", VQV_BUF_OUTSIDE_RAM);

	setup(8, true, false);
	post_indirect(TABLE_GPA, ww, 2, 0);
	expect_broken("readable after writable inside a table", VQV_READABLE_AFTER_WRITABLE);

	setup(8, true, false);
	vq.max_chain_bytes = 15;
	post_indirect(TABLE_GPA, two, 2, 0);
	expect_broken("a 20-byte table chain, cap 15", VQV_CHAIN_BYTES);

	/* a table at an odd address is read bytewise (UBSan would see a misaligned load) */
	setup(8, true, false);
	post_indirect(TABLE_GPA + 3, two, 2, 0);
	CHECK(vq_pop_avail(&vq, &chain) == 1 && chain.count == 2, "a table at an odd address is walked");
}

/* ---- event suppression ---- */

static void test_notify(void)
{
	struct used u;

	/* without EVENT_IDX: DISABLE and ENABLE */
	setup(8, false, false);
	vq_suppress_notify(&vq);
	CHECK(drv.device->flags == VRING_PACKED_EVENT_FLAG_DISABLE, "suppress writes DISABLE (flags %u)",
	      drv.device->flags);
	CHECK(!vq_enable_notify_and_recheck(&vq) && drv.device->flags == VRING_PACKED_EVENT_FLAG_ENABLE,
	      "enable writes ENABLE; nothing new -> recheck false");
	vq_suppress_notify(&vq);
	post_one(BUF_GPA, 10, false, 0);   /* the driver saw DISABLE and did not notify */
	CHECK(vq_enable_notify_and_recheck(&vq), "a buffer that slipped in while suppressed: recheck true");
	CHECK(vq_pop_avail(&vq, &chain) == 1 && !vq_enable_notify_and_recheck(&vq), "popped: recheck false again");

	/* with EVENT_IDX: DESC at our next slot and lap */
	setup(4, false, true);
	for (uint16_t i = 0; i < 3; i++)
		post_one(BUF_GPA, 10, false, i), vq_pop_avail(&vq, &chain);
	vq_suppress_notify(&vq);
	CHECK(drv.device->flags == VRING_PACKED_EVENT_FLAG_DISABLE, "event-idx suppress writes DISABLE");
	CHECK(!vq_enable_notify_and_recheck(&vq) && drv.device->flags == VRING_PACKED_EVENT_FLAG_DESC &&
	      drv.device->off_wrap == (3 | WRAP_F), "event-idx enable: DESC, off_wrap 3 | wrap 1 (0x%x)",
	      drv.device->off_wrap);
	for (uint16_t i = 0; i < 3; i++)
		vq_push_used(&vq, i, 0), reap(&u);
	post_one(BUF_GPA, 10, false, 3);
	vq_pop_avail(&vq, &chain);
	CHECK(!vq_enable_notify_and_recheck(&vq) && drv.device->off_wrap == 0,
	      "after slot 3: off_wrap 0 with wrap 0, lap 2 (0x%x)", drv.device->off_wrap);
	post_one(BUF_GPA, 10, false, 0);
	CHECK(vq_enable_notify_and_recheck(&vq), "event-idx recheck sees slot 0 made available on lap 2");

	/* after a device reset: nothing is written through the old areas */
	setup(8, false, false);
	vq_reset(&vq);
	drv.device->flags = 0x55;
	vq_suppress_notify(&vq);
	CHECK(!vq_enable_notify_and_recheck(&vq) && drv.device->flags == 0x55 && vq.pk.device == NULL,
	      "suppress / enable on a reset queue do nothing");
}

/* The driver's wish read after used descriptors went out. */
static bool interrupt_after(uint16_t id, uint16_t flags, uint16_t off_wrap)
{
	struct used u;

	drv.driver->off_wrap = off_wrap;
	drv.driver->flags = flags;
	vq_push_used(&vq, id, 0);
	reap(&u);
	return vq_should_interrupt(&vq);
}

static void test_should_interrupt(void)
{
	struct seg three[] = { { BUF_GPA, 1, false }, { BUF_GPA, 1, false }, { BUF_GPA, 1, false } };
	bool got[8];

	setup(8, false, false);
	for (uint16_t i = 0; i < 4; i++)
		post_one(BUF_GPA, 10, false, i), vq_pop_avail(&vq, &chain);
	CHECK(interrupt_after(0, VRING_PACKED_EVENT_FLAG_ENABLE, 0), "ENABLE: interrupt");
	CHECK(!interrupt_after(1, VRING_PACKED_EVENT_FLAG_DISABLE, 0), "DISABLE: none");
	CHECK(interrupt_after(2, VRING_PACKED_EVENT_FLAG_DESC, 7 | WRAP_F),
	      "DESC without EVENT_IDX: taken as ENABLE (an interrupt is never lost)");
	CHECK(interrupt_after(3, 3, 0), "the reserved value 3: taken as ENABLE");

	/* with EVENT_IDX: an interrupt once slot 2 of lap 1 is passed */
	setup(4, false, true);
	for (uint16_t i = 0; i < 4; i++)
		post_one(BUF_GPA, 10, false, i), vq_pop_avail(&vq, &chain);
	for (uint16_t i = 0; i < 4; i++)
		got[i] = interrupt_after(i, VRING_PACKED_EVENT_FLAG_DESC, 2 | WRAP_F);
	CHECK(!got[0] && !got[1] && got[2] && !got[3], "DESC slot 2 lap 1: only the push that writes slot 2 (%d%d%d%d)",
	      got[0], got[1], got[2], got[3]);
	CHECK(vq.pk.signalled_pos == 0 && !vq.pk.signalled_wrap, "the decision point moved to slot 0 of lap 2");

	/* lap 2: slot 1 with wrap 0; a wish for lap 1's slot 1 is not met on lap 2 */
	for (uint16_t i = 0; i < 2; i++)
		post_one(BUF_GPA, 10, false, i), vq_pop_avail(&vq, &chain);
	got[0] = interrupt_after(0, VRING_PACKED_EVENT_FLAG_DESC, 1 | WRAP_F);
	got[1] = interrupt_after(1, VRING_PACKED_EVENT_FLAG_DESC, 1 | WRAP_F);
	CHECK(!got[0] && !got[1], "lap 2: DESC for slot 1 of lap 1 is not met by slot 1 of lap 2");
	for (uint16_t i = 0; i < 2; i++)
		post_one(BUF_GPA, 10, false, i), vq_pop_avail(&vq, &chain);
	got[0] = interrupt_after(0, VRING_PACKED_EVENT_FLAG_DESC, 3);
	got[1] = interrupt_after(1, VRING_PACKED_EVENT_FLAG_DESC, 3);
	CHECK(!got[0] && got[1], "lap 2: DESC slot 3 wrap 0 met by the push that writes slot 3");
	CHECK(!interrupt_after(0xffff, VRING_PACKED_EVENT_FLAG_DISABLE, 0), "event idx, DISABLE: none");

	/* a chain's skipped slots count: 3 slots from slot 0, the wish at slot 2 */
	setup(8, false, true);
	post_chain(three, 3, 0);
	vq_pop_avail(&vq, &chain);
	CHECK(interrupt_after(0, VRING_PACKED_EVENT_FLAG_DESC, 2 | WRAP_F),
	      "a chain over slots 0-2 passes a wish at slot 2 (its used descriptor is at slot 0)");

	/* Linux's driver asks with its own next used slot: the next push meets it */
	setup(8, false, true);
	for (uint16_t i = 0; i < 3; i++)
		post_one(BUF_GPA, 10, false, i), vq_pop_avail(&vq, &chain);
	interrupt_after(0, VRING_PACKED_EVENT_FLAG_DISABLE, 0);
	CHECK(interrupt_after(1, VRING_PACKED_EVENT_FLAG_DESC, drv.next_used | (drv.used_wrap ? WRAP_F : 0)),
	      "DESC at the driver's next used slot: the next used descriptor interrupts");
}

/* ---- the pure decision against a walk ---- */

/* The spec's rule literally: step over the slots the used side passed and
 * see whether one of them is the slot and lap the driver named. */
static bool walk_model(bool event_idx, uint16_t flags, uint16_t off_wrap, uint16_t pos, bool wrap,
		       uint32_t advanced, uint16_t num)
{
	uint16_t off = off_wrap & 0x7fff;
	bool ewrap = off_wrap >> 15;

	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC || !event_idx)
		return true;
	for (uint32_t i = 0; i < advanced; i++) {
		if (pos == off && wrap == ewrap)
			return true;
		if (++pos == num)
			pos = 0, wrap = !wrap;
	}
	return false;
}

/* One decision against the walk; prints the first few that differ. */
static bool agrees(uint16_t num, uint16_t flags, bool event_idx, uint16_t ow, uint16_t pos, bool w, uint32_t adv)
{
	static unsigned printed;
	bool a = vq_packed_interrupt_needed(event_idx, flags, ow, pos, w, adv, num);
	bool b = walk_model(event_idx, flags, ow, pos, w, adv, num);

	if (a != b && printed++ < 5)
		printf("     num %u flags 0x%x event_idx %d off_wrap 0x%x from %u/%d +%u: %d, walk says %d\n", num,
		       flags, event_idx, ow, pos, w, adv, a, b);
	return a == b;
}

/* For one ring size, flags value and feature: every offset up to two past
 * the ring and the largest one, both laps of it, every start, and counts up
 * to two laps and three.  Returns the decisions that differ. */
static unsigned long exhaust_one(uint16_t num, uint16_t flags, bool event_idx, unsigned long *decisions)
{
	unsigned long wrong = 0;

	for (uint32_t off = 0; off <= num + 2u; off++)
		for (unsigned ew = 0; ew < 2; ew++) {
			uint16_t ow = (uint16_t)((off == num + 2u ? 0x7fff : off) | ew << 15);

			for (uint16_t pos = 0; pos < num; pos++)
				for (unsigned w = 0; w < 2; w++)
					for (uint32_t adv = 0; adv <= 2u * num + 3; adv++, ++*decisions)
						wrong += !agrees(num, flags, event_idx, ow, pos, w, adv);
		}
	return wrong;
}

static void test_interrupt_exhaustive(void)
{
	static const uint16_t flag_values[] = { VRING_PACKED_EVENT_FLAG_ENABLE, VRING_PACKED_EVENT_FLAG_DISABLE,
						VRING_PACKED_EVENT_FLAG_DESC, 3, 0x8002 };
	unsigned long decisions = 0, wrong = 0;

	for (uint16_t num = 1; num <= 16; num++)
		for (unsigned f = 0; f < sizeof(flag_values) / sizeof(flag_values[0]); f++)
			for (int ev = 0; ev < 2; ev++)
				wrong += exhaust_one(num, flag_values[f], ev, &decisions);
	CHECK(wrong == 0,
	      "vq_packed_interrupt_needed = the slot-by-slot walk for rings of 1..16, every flags value, offset "
	      "(also past the ring), lap, start and count up to 2 laps + 3 (%lu decisions, %lu wrong)",
	      decisions, wrong);
	CHECK(vq_packed_interrupt_needed(true, VRING_PACKED_EVENT_FLAG_DESC, 5 | WRAP_F, 5, true, 1000000, 8) &&
	      !vq_packed_interrupt_needed(true, VRING_PACKED_EVENT_FLAG_DESC, 0x7fff, 5, true, 1000000, 8),
	      "a million slots passed: every slot on both laps met, but never an offset past the ring");
}

/* ---- every rule ---- */

static void test_every_violation_reached(void)
{
	/* What the packed walker can refuse with: the shared rules and its own.
	 * The split-only ones (avail-ahead, head-range, next-range, loop,
	 * indirect-next-range, indirect-loop) have no packed counterpart, and
	 * chain-descs cannot fire: a packed chain is either at most num <=
	 * VQ_MAX_CHAIN slots or one table of at most VQ_MAX_CHAIN entries. */
	static const enum vq_violation packed_rules[] = {
		VQV_SIZE, VQV_RING_MISALIGNED, VQV_RING_OUTSIDE_RAM, VQV_DESC_FLAGS, VQV_BUF_OUTSIDE_RAM,
		VQV_READABLE_AFTER_WRITABLE, VQV_CHAIN_BYTES, VQV_INDIRECT_WITH_NEXT, VQV_INDIRECT_NOT_NEGOTIATED,
		VQV_INDIRECT_LEN, VQV_INDIRECT_ENTRIES, VQV_INDIRECT_OUTSIDE_RAM, VQV_INDIRECT_NESTED,
		VQV_INDIRECT_FLAGS, VQV_PACKED_WRAP, VQV_PACKED_CHAIN_TOO_LONG, VQV_ID_RANGE, VQV_ID_IN_FLIGHT,
		VQV_INDIRECT_IN_CHAIN,
	};
	static const enum vq_violation split_only[] = {
		VQV_AVAIL_AHEAD, VQV_HEAD_RANGE, VQV_NEXT_RANGE, VQV_LOOP, VQV_CHAIN_DESCS,
		VQV_INDIRECT_NEXT_RANGE, VQV_INDIRECT_LOOP,
	};
	unsigned missing = 0, foreign = 0, names = 0;

	for (unsigned i = 0; i < sizeof(packed_rules) / sizeof(packed_rules[0]); i++)
		if (!(violations_seen & 1u << packed_rules[i])) {
			printf("     violation %s never fired\n", vq_violation_name(packed_rules[i]));
			missing++;
		}
	for (unsigned i = 0; i < sizeof(split_only) / sizeof(split_only[0]); i++)
		foreign += !!(violations_seen & 1u << split_only[i]);
	for (unsigned v = VQV_PACKED_WRAP; v <= VQV_INDIRECT_IN_CHAIN; v++) {
		const char *name = vq_violation_name((enum vq_violation)v);

		names += !strcmp(name, "unknown");
		for (unsigned w = VQV_NONE; w < v; w++)
			names += !strcmp(name, vq_violation_name((enum vq_violation)w));
	}
	CHECK(missing == 0, "each of the %zu rules of the packed walker was reached by a case (%u missing)",
	      sizeof(packed_rules) / sizeof(packed_rules[0]), missing);
	CHECK(foreign == 0 && !(violations_seen & 1u << VQV_NONE), "no split-only rule fired on a packed ring");
	CHECK(names == 0, "the packed violations have names of their own (%s, %s, %s, %s, %s)",
	      vq_violation_name(VQV_PACKED_WRAP), vq_violation_name(VQV_PACKED_CHAIN_TOO_LONG),
	      vq_violation_name(VQV_ID_RANGE), vq_violation_name(VQV_ID_IN_FLIGHT),
	      vq_violation_name(VQV_INDIRECT_IN_CHAIN));

	setup(8, false, false);
	post_one(BUF_GPA, 10, false, 8);
	vq_pop_avail(&vq, &chain);
	vq_reset(&vq);
	CHECK(vq.violation == VQV_NONE && !vq.broken && !vq.packed && vq.layout == NULL && vq.pk.desc == NULL,
	      "vq_reset drops the violation, the feature and the packed state");
}

int main(void)
{
	mem.host = aligned_alloc(4096, MEM_SIZE);
	mem.size = MEM_SIZE;
	if (!mem.host)
		return 1;
	test_enable();
	test_good_chains();
	test_indirect_good();
	test_laps();
	test_hostile_wrap();
	test_hostile_ids_and_length();
	test_hostile_buffers();
	test_hostile_indirect();
	test_notify();
	test_should_interrupt();
	test_interrupt_exhaustive();
	test_every_violation_reached();
	free(mem.host);
	return check_summary();
}
