/*
 * guest_ring_fixture.h -- the fake machine under unit-guest-ring
 * (test_guest_ring.c, split ring) and unit-guest-ring-packed
 * (test_guest_ring_packed.c, packed ring).
 *
 * Both tests run the guest's virtio driver (guest-stub/virtio_drv.c and
 * guest-stub/vring_packed_drv.c, unmodified, via guest_virtio_drv_hosted.c)
 * against the host's ring walker (devices/virtqueue.c with vring_split.c /
 * vring_packed.c).  Neither half knows it is not in a VM; this header fakes
 * what lies between them:
 *
 *   - guest RAM is one memfd mapped twice: the guest's view at a fixed low
 *     address A (the driver's pointers are its "physical" addresses), and the
 *     host's view as a struct guest_mem whose gpa 0 is a PROT_NONE
 *     reservation of A bytes followed by the same memfd, exactly like the
 *     launcher's RAM at gpa 0.  So gmem_ptr(gpa) is a different pointer to
 *     the same bytes, and every host buffer pointer is checked to be the
 *     translated one (g2h()), not the guest's address.  The tempting shortcut,
 *     guest_mem.host = NULL so that gmem_ptr(gpa) == (void *)gpa, is NULL + n:
 *     undefined, and clang 14 -O2 really folds it (gmem_ptr's result is then
 *     treated as NULL and every chain is refused), so it is not used.  If
 *     the double mapping cannot be made the test skips (77).
 *   - the virtio-mmio registers are a plain 0x200-byte array: the driver's
 *     mmio_read32/mmio_write32 are volatile loads/stores, so QueueReady reads
 *     back what was written and QueueNotify keeps the last value written
 *     (setup_queue() presets it to NOTIFY_MARK, notified() reads and re-arms).
 *   - alloc_pages() is a bump allocator over the guest view; guest_exit()
 *     longjmps back to the check that expected it (get_used_expecting_exit();
 *     anything else is a FAIL).
 *
 * Also shared: the one guest queue `q`, the host queue `vq` built from the
 * registers the driver programmed (as the transport would), a popped
 * `chain`, buffer memory `pool`, a seeded pseudo-random sequence, and the
 * small drivers of a test (add1, host_drain, chain_matches).
 *
 * Everything is static except the two guest services, which the driver
 * links against: include this header from exactly one .c per test program.
 */
#ifndef GUEST_RING_FIXTURE_H
#define GUEST_RING_FIXTURE_H

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "guest_lib_hosted.h"
#include "notify_policy.h"
#include "virtio_drv.h"
#include "virtqueue.h"

#define ARENA_SIZE (64ull << 20)   /* guest RAM for rings, tables and buffers */

static uint8_t *arena, *arena_next;   /* the guest's view */
static struct guest_mem gm;           /* the host's view */

static volatile uint32_t regs[0x200 / 4];   /* the virtio-mmio window */
static struct virtio_dev dev;
static struct gvq q;                  /* the guest's queue */
static struct vq vq;                  /* the host's queue */
static struct vq_chain chain;

static uint8_t *pool;                 /* buffer memory in guest RAM (fixture_init) */

/* ---- the guest's services ---------------------------------------------- */

void *alloc_pages(size_t bytes)
{
	uint8_t *p = arena_next;

	bytes = (bytes + 4095) & ~(size_t)4095;
	if (bytes > (size_t)(arena + ARENA_SIZE - arena_next)) {
		CHECK(0, "alloc_pages: fake guest RAM exhausted (%zu bytes wanted)", bytes);
		exit(check_summary());
	}
	arena_next += bytes;
	memset(p, 0, bytes);
	return p;
}

/* The race harness (tests/race/race_torture.c) has its own guest_exit, a
 * verdict rather than a check; it defines FIXTURE_OWN_GUEST_EXIT. */
#ifndef FIXTURE_OWN_GUEST_EXIT
static jmp_buf exit_jmp;
static bool exit_expected;
static int exit_status;

void guest_exit(int status)
{
	exit_status = status;
	if (exit_expected) {
		exit_expected = false;
		longjmp(exit_jmp, 1);
	}
	CHECK(0, "unexpected guest_exit(%d)", status);
	exit(check_summary());
}

/* gvq_get_used when the guest may give up: its exit status, or -1 if it
 * returned (the token in *tok). */
static int get_used_expecting_exit(void **tok)
{
	exit_status = -1;
	if (setjmp(exit_jmp))
		return exit_status;
	exit_expected = true;
	*tok = gvq_get_used(&q, NULL);
	exit_expected = false;
	return -1;
}
#endif

/* ---- fake RAM and registers --------------------------------------------- */

static void fatal(const char *what)
{
	CHECK(0, "setup: %s", what);
	exit(check_summary());
}

static void map_guest_ram(void)
{
	/* The first two lie in ASan's low application range (below 2 GiB);
	 * the host view reserves A + 64 MiB of address space, no memory. */
	static const uint64_t bases[] = { 0x40000000ull, 0x60000000ull, 0x200000000ull, 0x1000000000ull };
	int fd = memfd_create("lkvm-test-guest-ram", 0);

	if (fd >= 0 && ftruncate(fd, (off_t)ARENA_SIZE) == 0) {
		for (unsigned i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
			uint64_t a = bases[i];
			void *g = mmap((void *)(uintptr_t)a, ARENA_SIZE, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
			uint8_t *h;

			if (g == MAP_FAILED)
				continue;
			if (g != (void *)(uintptr_t)a) {   /* old kernel: only a hint */
				munmap(g, ARENA_SIZE);
				continue;
			}
			h = mmap(NULL, a + ARENA_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (h == MAP_FAILED) {
				munmap(g, ARENA_SIZE);
				continue;
			}
			if (mmap(h + a, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
				munmap(h, a + ARENA_SIZE);
				munmap(g, ARENA_SIZE);
				continue;
			}
			close(fd);
			arena = g;
			gm.host = h;
			gm.size = a + ARENA_SIZE;
			printf("note: guest RAM seen by the guest at 0x%llx, by the host at %p (gpa 0)\n",
			       (unsigned long long)a, (void *)h);
			arena_next = arena;
			return;
		}
	}
	printf("SKIP: cannot map the fake guest RAM twice (memfd_create/mmap failed)\n");
	exit(77);
}

/* The host's pointer for a guest address: gpa == the guest's pointer. */
static uint8_t *g2h(const void *guest_addr)
{
	return gm.host + (uintptr_t)guest_addr;
}

static uint32_t reg(unsigned off) { return regs[off / 4]; }
static void set_reg(unsigned off, uint32_t v) { regs[off / 4] = v; }
static uint64_t reg64(unsigned low) { return (uint64_t)reg(low + 4) << 32 | reg(low); }

#define NOTIFY_MARK 0xdeadbeefu   /* QueueNotify before a kick: "not written" */

/* Did the guest write QueueNotify since the last look?  Re-arms the mark. */
static bool notified(void)
{
	bool n = reg(VIRTIO_MMIO_QUEUE_NOTIFY) != NOTIFY_MARK;

	set_reg(VIRTIO_MMIO_QUEUE_NOTIFY, NOTIFY_MARK);
	return n;
}

/* A fresh guest queue `index` 1 of `num` (policy by name, 0 = the driver's
 * default), split or packed (VIRTIO_F_RING_PACKED offered and copied to the
 * host queue), and the host queue built from the registers the driver
 * programmed, as the transport would. */
static void setup_queue(uint16_t num, bool indirect, bool event_idx, const char *policy, bool packed)
{
	for (unsigned i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		regs[i] = 0;
	set_reg(VIRTIO_MMIO_MAGIC_VALUE, 0x74726976);
	set_reg(VIRTIO_MMIO_VERSION, 2);
	set_reg(VIRTIO_MMIO_QUEUE_NUM_MAX, 1024);
	set_reg(VIRTIO_MMIO_QUEUE_NOTIFY, NOTIFY_MARK);
	dev = (struct virtio_dev){
		.base = (uint64_t)(uintptr_t)regs,
		.features = (1ull << VIRTIO_F_VERSION_1) | (packed ? 1ull << VIRTIO_F_RING_PACKED : 0) |
			    (indirect ? 1ull << VIRTIO_RING_F_INDIRECT_DESC : 0) |
			    (event_idx ? 1ull << VIRTIO_RING_F_EVENT_IDX : 0),
	};
	if (gvq_setup(&q, &dev, 1, num) != 0)
		fatal("gvq_setup failed");
	if (policy) {
		struct notify_policy pol;

		if (!notify_policy_parse(&pol, policy, (uint32_t)strlen(policy), num))
			fatal("bad policy");
		q.policy = pol;   /* as net_drv_init does */
	}
	memset(&vq, 0, sizeof(vq));
	vq.name = "guest tx";
	vq.num = (uint16_t)reg(VIRTIO_MMIO_QUEUE_NUM);
	vq.desc_gpa = reg64(VIRTIO_MMIO_QUEUE_DESC_LOW);
	vq.avail_gpa = reg64(VIRTIO_MMIO_QUEUE_AVAIL_LOW);
	vq.used_gpa = reg64(VIRTIO_MMIO_QUEUE_USED_LOW);
	vq.indirect_ok = indirect;
	vq.event_idx = event_idx;
	vq.packed = packed;
	if (vq_enable(&vq, &gm) != 0) {
		printf("%s\n", vq.error);
		fatal(packed ? "vq_enable refused the guest's packed ring" : "vq_enable refused the guest's rings");
	}
}

/* ---- randomness and buffers ---------------------------------------------- */

static uint32_t rng_state;   /* seeded by fixture_init: each test's rounds are reproducible */

static uint32_t rnd(void)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return rng_state >> 16;
}

/* Byte j of a segment filled with seed `seed`. */
static uint8_t pattern(uint32_t seed, uint32_t j) { return (uint8_t)(seed * 131u + j * 7u + (j >> 8)); }

/* Does the host's chain match what the guest added (n segments seeded
 * seed+0, seed+1, ...): count, indirect or not, each segment's translated
 * address, length, direction and contents, out_len and in_len?  Prints the
 * first difference. */
static bool chain_matches(const struct gvq_seg *seg, unsigned n, bool indirect, uint32_t seed)
{
	uint64_t out = 0, in = 0;

	if (chain.count != n || chain.indirect != indirect) {
		printf("  host chain: count %u indirect %d, want %u %d\n", chain.count, chain.indirect, n, indirect);
		return false;
	}
	for (unsigned k = 0; k < n; k++) {
		const struct vq_buf *b = &chain.buf[k];
		bool content = true;

		for (uint32_t j = 0; j < b->len && content; j++)
			content = b->host[j] == pattern(seed + k, j);
		if (b->host != g2h(seg[k].addr) || b->len != seg[k].len || b->device_writes != seg[k].device_writes ||
		    !content) {
			printf("  host chain: segment %u differs (host %p want %p, len %u want %u, writes %d, "
			       "content %d)\n", k, (void *)b->host, (void *)g2h(seg[k].addr), b->len, seg[k].len,
			       b->device_writes, content);
			return false;
		}
		if (seg[k].device_writes)
			in += seg[k].len;
		else
			out += seg[k].len;
	}
	if (chain.out_len != out || chain.in_len != in) {
		printf("  host chain: out %llu in %llu, want %llu %llu\n", (unsigned long long)chain.out_len,
		       (unsigned long long)chain.in_len, (unsigned long long)out, (unsigned long long)in);
		return false;
	}
	return true;
}

/* One 8-byte buffer from the pool (token: pool); the ring must have room. */
static void add1(void)
{
	struct gvq_seg s = { .addr = pool, .len = 8 };

	if (!gvq_add(&q, &s, 1, pool, false))
		fatal("add1: ring full");
}

/* The host pops everything published and completes it in order; the guest
 * reclaims it. */
static void host_drain(void)
{
	while (vq_pop_avail(&vq, &chain) == 1)
		vq_push_used(&vq, chain.head, 0);
	while (gvq_get_used(&q, NULL))
		;
}

/* Before any test: the fake RAM, `pool_size` bytes of pool in it, and the
 * random sequence at `seed`. */
static void fixture_init(size_t pool_size, uint32_t seed)
{
	map_guest_ram();
	pool = alloc_pages(pool_size);
	rng_state = seed;
}

#endif
