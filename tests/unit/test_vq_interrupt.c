/*
 * test_vq_interrupt.c -- the host's interrupt decision (vq_interrupt_needed,
 * virtqueue.h) against the virtio spec, over every index triple.
 *
 * The decision: since the last interrupt the host wrote used entries at
 * indices old, old+1, ..., new-1 (mod 2^16).  With VIRTIO_RING_F_EVENT_IDX
 * the driver asked to be interrupted once the entry at index used_event is
 * written (virtio 1.2, 2.7.10: "until an entry with an index specified by
 * the used_event field is written in the used ring"), and avail->flags is
 * ignored; without it, VRING_AVAIL_F_NO_INTERRUPT says no and used_event is
 * ignored.  The spec's rule is written out here on its own terms, as a walk
 * over the entries written (spec_walk) and as its closed form, "used_event
 * lies in the window" (spec_window); the host uses Linux's vring_need_event,
 * a different expression.  A wrong sign, an off-by-one at the window's ends
 * or a wrap at 0xffff -> 0 is a lost or a spurious interrupt.
 *
 * Why checking 2^32 pairs per old value covers all 2^48 triples: the spec's
 * rule only asks whether used_event is among old, ..., new-1 counted mod
 * 2^16, so adding one constant to all three indices changes nothing: it is a
 * function of (new - old, used_event - old) alone.  So is the host's if it
 * only ever computes differences mod 2^16, which vring_need_event does by
 * reading, and which test_translation checks by running: for every one of
 * the 2^16 old values, random (new - old, used_event - old) pairs, and the
 * pairs at the window's edges, must decide as they do at old = 0.  An
 * implementation that compares indices as plain numbers (old < used_event
 * < new) fails that at once.  Given translation invariance, all 2^32
 * (new - old, used_event - old) pairs at one old value are all 2^48 triples;
 * test_exhaustive enumerates them at several old values (0, 1, 0x7fff,
 * 0x8000, 0xffff, where wraps and sign changes of a 16-bit difference would
 * show, and three random ones), each against the closed form, which
 * test_window_is_the_walk first checks against the literal walk.
 *
 * Cost: 8 x 2^32 decisions.  vq_interrupt_needed is inline and the inner
 * loop is plain 16-bit arithmetic the compiler vectorises: at the default
 * debugoptimized build about 0.5 s of CPU per old value, 4-5 s in all (each
 * line reports its time).  Under ASan+UBSan every decision is instrumented,
 * about 6 s per old value, under a minute in all: still all eight.
 * Unoptimised (-O0), 20-40 s per old value; such a build enumerates one,
 * 0xffff, and leans on test_translation for the rest, which is the argument
 * above with fewer spot checks.
 *
 * What it cannot see: a host that is wrong at a single triple away from the
 * enumerated old values and the sampled pairs.  Such a host is not
 * translation-invariant: it treats some index values specially (compares
 * them as numbers, or singles one out), which vq_interrupt_needed, one line
 * of differences, visibly does not.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/virtio_ring.h>

#include "check.h"
#include "virtqueue.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t xorshift(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* The spec's rule, literally: walk the entries written since the last
 * interrupt; was used_event's one among them? */
static bool spec_walk(uint16_t old, uint16_t new_idx, uint16_t used_event)
{
	for (uint16_t i = old; i != new_idx; i++)
		if (i == used_event)
			return true;
	return false;
}

/* The same rule in closed form: used_event's distance past old is less than
 * the number of entries written.  Distances are taken mod 2^16, as the
 * indices are. */
static inline bool spec_window(uint16_t old, uint16_t new_idx, uint16_t used_event)
{
	return (uint16_t)(used_event - old) < (uint16_t)(new_idx - old);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* The test's own closed form is the walk: every used_event for each short
 * batch (all 2^16 events x 0..64 entries written, from a wrap-straddling
 * old), and random long batches. */
static void test_window_is_the_walk(void)
{
	unsigned bad = 0;

	for (unsigned written = 0; written <= 64; written++)
		for (unsigned ev = 0; ev < 0x10000; ev++) {
			uint16_t old = 0xffe0, new_idx = (uint16_t)(old + written);

			bad += spec_walk(old, new_idx, (uint16_t)ev) != spec_window(old, new_idx, (uint16_t)ev);
		}
	for (unsigned k = 0; k < 2000; k++) {
		uint64_t r = xorshift();
		uint16_t old = (uint16_t)r, new_idx = (uint16_t)(r >> 16), ev = (uint16_t)(r >> 32);

		bad += spec_walk(old, new_idx, ev) != spec_window(old, new_idx, ev);
	}
	CHECK(bad == 0, "the spec's window equals its literal walk (65 x 2^16 short batches, 2000 long; %u differ)",
	      bad);
}

/* Translation: at every old value, the decision depends only on the two
 * differences.  Flags vary too, and must not matter with event idx. */
static void test_translation(void)
{
	static const uint16_t edge[][2] = {   /* (new - old, used_event - old) */
		{ 0, 0 }, { 0, 0xffff }, { 1, 0 }, { 1, 1 }, { 1, 0xffff }, { 2, 1 },
		{ 0x7fff, 0x7ffe }, { 0x7fff, 0x7fff }, { 0x8000, 0x7fff }, { 0x8000, 0x8000 },
		{ 0x8001, 0x8000 }, { 0xffff, 0xfffe }, { 0xffff, 0xffff }, { 0xffff, 0 },
	};
	unsigned long bad = 0, n = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned old = 0; old < 0x10000; old++) {
		for (unsigned k = 0; k < 4096 + sizeof(edge) / sizeof(edge[0]); k++) {
			uint64_t r = xorshift();
			uint16_t d = k < 4096 ? (uint16_t)r : edge[k - 4096][0];
			uint16_t e = k < 4096 ? (uint16_t)(r >> 16) : edge[k - 4096][1];
			uint16_t flags = (uint16_t)(r >> 32);

			uint16_t o = (uint16_t)old;

			bad += vq_interrupt_needed(true, flags, (uint16_t)(o + e), o, (uint16_t)(o + d)) !=
			       vq_interrupt_needed(true, 0, e, 0, d);
			n++;
		}
	}
	CHECK(bad == 0, "translation: all 2^16 old values x %u (new - old, used_event - old) pairs decide as at "
	      "old 0 (%lu of %lu differ, %.2f s)", 4096u + (unsigned)(sizeof(edge) / sizeof(edge[0])), bad, n,
	      seconds_since(&t0));
}

/* All 2^32 (new - old, used_event - old) pairs at one old value, with
 * avail->flags swept along (ignored with event idx).
 *
 * Two details keep this honest and quick.  The host's side gets old and new
 * through an empty asm the compiler cannot see through, the spec's side
 * gets its own copies: with both inlined on the same values GCC proves the
 * two formulas equal and deletes the loop (0.00 s), which proves nothing to
 * a reader and would hide a compiler that got it wrong.  And the 16-bit
 * offsets come from a table, so the loop runs in 16-bit vector lanes (8 per
 * SSE2 instruction) rather than widening a 32-bit counter.  It only asks
 * whether any decision in a row differs; the first one that does is found
 * again, one by one, for the message. */
static uint16_t offsets[0x10000];   /* offsets[i] = i */

static unsigned long exhaustive_at(uint16_t old)
{
	unsigned long bad_rows = 0;

	for (unsigned d = 0; d < 0x10000; d++) {
		uint16_t host_old = old, host_new = (uint16_t)(old + d);
		uint16_t spec_old = old, spec_new = (uint16_t)(old + d);
		uint16_t differ = 0;

		__asm__("" : "+r"(host_old), "+r"(host_new));
		for (unsigned i = 0; i < 0x10000; i++) {
			uint16_t e = offsets[i];

			bool host = vq_interrupt_needed(true, e, (uint16_t)(host_old + e), host_old, host_new);
			bool spec = spec_window(spec_old, spec_new, (uint16_t)(spec_old + e));

			differ |= (uint16_t)(host ^ spec);
		}
		if (!differ)
			continue;
		if (!bad_rows++)
			for (unsigned e = 0; e < 0x10000; e++) {
				uint16_t ev = (uint16_t)(old + e), new_idx = (uint16_t)(old + d);

				if (vq_interrupt_needed(true, (uint16_t)e, ev, old, new_idx) !=
				    spec_window(old, new_idx, ev)) {
					printf("     first difference: old 0x%x, new 0x%x, used_event 0x%x\n", old,
					       new_idx, ev);
					break;
				}
			}
	}
	return bad_rows;
}

static void test_exhaustive(void)
{
#ifdef __OPTIMIZE__
	uint16_t olds[8] = { 0, 1, 0x7fff, 0x8000, 0xffff };
	const unsigned n = 8;
#else
	uint16_t olds[8] = { 0xffff };   /* the wrap comes first: 0xffff -> 0 */
	const unsigned n = 1;

	printf("     unoptimised build: all 2^32 pairs at old 0xffff only (see the comment at the top)\n");
#endif
	struct timespec t0;

	for (unsigned i = 0; i < 0x10000; i++)
		offsets[i] = (uint16_t)i;
	for (unsigned i = 5; i < 8; i++)
		olds[i] = (uint16_t)xorshift();
	for (unsigned i = 0; i < n; i++) {
		unsigned long bad;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		bad = exhaustive_at(olds[i]);
		CHECK(bad == 0, "event idx, old 0x%04x: all 2^32 (new, used_event) agree with the spec (%lu of 65536 "
		      "new values with a difference, %.2f s)", olds[i], bad, seconds_since(&t0));
	}
}

/* Without event idx: only the NO_INTERRUPT bit of avail->flags counts, for
 * every flags value, whatever the indices. */
static void test_flags(void)
{
	unsigned long bad = 0;

	for (unsigned f = 0; f < 0x10000; f++)
		for (unsigned k = 0; k < 64; k++) {
			uint64_t r = xorshift();
			bool want = !(f & VRING_AVAIL_F_NO_INTERRUPT);

			uint16_t old = (uint16_t)r, new_idx = (uint16_t)(r >> 16), used_event = (uint16_t)(r >> 32);

			bad += vq_interrupt_needed(false, (uint16_t)f, used_event, old, new_idx) != want;
		}
	CHECK(bad == 0, "no event idx: every avail->flags value x 64 random triples, NO_INTERRUPT alone decides "
	      "(%lu differ)", bad);
}

/* The host's path decides with this function, from the right fields:
 * vq_should_interrupt on a real ring, random indices, both feature settings. */
static void test_host_path(void)
{
	enum { MEM = 1 << 16, NUM = 8 };
	struct guest_mem mem = { .host = aligned_alloc(4096, MEM), .size = MEM };
	struct vring vr;
	unsigned bad = 0;

	if (!mem.host)
		exit(1);
	for (unsigned k = 0; k < 20000; k++) {
		uint64_t r = xorshift();
		bool event_idx = r & 1;
		struct vq vq = { .name = "irq", .num = NUM, .event_idx = event_idx };
		uint16_t old = (uint16_t)(r >> 8), now = (uint16_t)(r >> 24), used_event = (uint16_t)(r >> 40);
		uint16_t flags = (uint16_t)(r >> 56 & 3);
		bool want;

		memset(mem.host, 0, MEM);
		vring_init(&vr, NUM, mem.host + 0x1000, 4096);
		vq.desc_gpa = (uint64_t)((uint8_t *)vr.desc - mem.host);
		vq.avail_gpa = (uint64_t)((uint8_t *)vr.avail - mem.host);
		vq.used_gpa = (uint64_t)((uint8_t *)vr.used - mem.host);
		if (vq_enable(&vq, &mem) != 0)
			exit(1);
		vr.avail->flags = flags;
		vring_used_event(&vr) = used_event;
		vq.signalled_used = old;
		vq.used_shadow = now;
		want = event_idx ? spec_window(old, now, used_event) : !(flags & VRING_AVAIL_F_NO_INTERRUPT);
		bad += vq_should_interrupt(&vq) != want || vq.signalled_used != now;
	}
	CHECK(bad == 0, "vq_should_interrupt on a ring: 20000 random states decide as the spec (%u differ)", bad);
	free(mem.host);
}

int main(void)
{
	test_window_is_the_walk();
	test_flags();
	test_host_path();
	test_translation();
	test_exhaustive();
	return check_summary();
}
