/*
 * test_notify_policy_exhaustive.c -- notify_policy_kick() and
 * notify_policy_ring_full() (guest-stub/notify_policy.c, the functions the
 * guest stub runs, linked from the same source) checked over whole input
 * spaces instead of hand-worked traces (those are in test_notify_policy.c).
 * Every expected answer is written out here from the rule it comes from,
 * never by calling the code under test.
 *
 * event-idx.  The device publishes avail_event = e: "notify me when you
 * make entry e available".  A kick that moved avail idx from old to new made
 * entries old, old+1, ..., new-1 available, so it must notify iff e is one
 * of them.  The spec's formula (virtio 1.x, and vring_need_event() in
 * <linux/virtio_ring.h>):
 *
 *	need_event(e, new, old) = (u16)(new - e - 1) < (u16)(new - old)
 *
 * There are 2^48 (old, new, e) triples -- too many.  But the formula only
 * involves new - old and new - e = (new - old) - (e - old), all mod 2^16: it
 * is a function of d = new - old and f = e - old alone (and is then exactly
 * "f < d": e lies in the d entries just published).  So one sweep of the
 * 2^32 (d, f) plane covers every behaviour the formula has; further old
 * values add nothing *for the formula*.  They could for the
 * implementation, were it wrongly to depend on old itself (a missing u16
 * cast, a signed comparison, an argument in the wrong place, used_idx
 * mixed in).  So:
 *   (1) the plane, every (d, f), through notify_policy_kick, compared with
 *       both the spec's formula and "f < d"; row d is run at origin
 *       old = origins[d % 8] (0, 1, 0x7fff, 0x8000, 0xffff and three random
 *       ones), so each origin sees 8192 complete rows and the plane is
 *       covered once.  A call costs ~1.5 ns, so the plane is ~6 s; the
 *       full plane at *every* origin (8x, about a minute) runs when the
 *       test is given the argument "full".
 *   (2) translation invariance of notify_policy_kick itself: adding the
 *       same t to old, new, avail_event (and used_idx) never changes the
 *       answer -- for all 2^16 t with the rest random, and for all 2^16
 *       avail_event with the rest (t included) random.
 *   (3) the inputs event-idx must ignore (NO_NOTIFY, used_idx) vary across
 *       the plane, and the policy state must not change.
 * Together: exhaustive for the formula, exhaustive along each dimension for
 * the implementation, and the full plane at eight origins in "full" mode.
 *
 * event-desc (the packed ring).  The device names one descriptor (offset,
 * wrap counter); a kick that moved the driver from (slot, wrap) over d <=
 * ring descriptors must notify iff that descriptor was one of them.  The
 * input space for a ring of n is 2n starts x (n + 1) sizes x 2n events:
 * every ring 1..64 and 128, 256 whole, each answer checked against the
 * descriptor-by-descriptor model and against Linux's form of the rule
 * (the event moved into the driver's index space -- minus n if its wrap
 * differs from the driver's new one -- then vring_need_event); ring 1024
 * by 2^22 random triples.  And every other policy must decide on a packed
 * view (its DISABLE as host_no_notify, whatever its positions and event
 * fields hold) exactly as on the split view with the same counts.
 *
 * The other policies.  They are functions of the state (threshold,
 * last_outstanding), NO_NOTIFY, the outstanding count before publishing
 * (o = (old - used) mod ring, or the exact u16 count) and added = new - old:
 *   - NO_NOTIFY clear: every non-event policy notifies and keeps its state,
 *     whatever the numbers; 'always' with NO_NOTIFY set never notifies.
 *     Checked along every 16-bit input dimension exhaustively.
 *   - static:N with NO_NOTIFY: notify iff o < N and added >= N - o, state
 *     unchanged -- every N, o and added in [0, ring] (plus a large added)
 *     for every power-of-two ring up to 128, o reached through a random
 *     multiple of the ring on top (the seed's modulo); 2^20 random
 *     (N, o, added) at rings 256..1024.
 *   - dynamic / dynamic-exact with NO_NOTIFY: the static decision with the
 *     current threshold, then the seed's update, written out again below --
 *     every state (threshold 0..ring, last 0..2 ring) x o x added in a box,
 *     rings 2..32.
 *   - ring_full: threshold - 1 iff dynamic, NO_NOTIFY and threshold > 0.
 *   - translation invariance: shifting old, new, used, avail_event by the
 *     same t changes neither decision nor new state, for all 2^16 t (the
 *     modulo form is invariant because rings are powers of two, which
 *     divide 2^16 and 2^32).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/virtio_ring.h>

#include "check.h"
#include "notify_policy.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The spec's formula, as the spec writes it. */
static bool spec_need_event(uint16_t event_idx, uint16_t new_idx, uint16_t old)
{
	return (uint16_t)(new_idx - event_idx - 1) < (uint16_t)(new_idx - old);
}

static bool same_state(const struct notify_policy *a, const struct notify_policy *b)
{
	return a->kind == b->kind && a->ring == b->ring && a->threshold == b->threshold &&
	       a->last_outstanding == b->last_outstanding;
}

static struct kick_view random_view(void)
{
	return (struct kick_view){ .old_idx = (uint16_t)rnd(), .new_idx = (uint16_t)rnd(), .used_idx = (uint16_t)rnd(),
				   .host_no_notify = rnd() & 1, .avail_event = (uint16_t)rnd() };
}

/* ---- event-idx ----------------------------------------------------------- */

/* Row d at origin old: every f.  Returns the mismatches; *notifies counts
 * the notifies, which must be d. */
static uint64_t event_row(struct notify_policy *p, uint16_t old, uint16_t d, uint32_t *notifies)
{
	struct kick_view v = { .old_idx = old, .new_idx = (uint16_t)(old + d) };
	uint64_t bad = 0;
	uint32_t n = 0;

	for (uint32_t f = 0; f < 65536; f++) {
		unsigned got;

		v.avail_event = (uint16_t)(old + f);
		v.used_idx = (uint16_t)(f + d);          /* must not matter */
		v.host_no_notify = f & 1;                /* must not matter */
		got = notify_policy_kick(p, &v);
		n += got;
		/* branch-free: this runs 2^32 times */
		bad += (got ^ spec_need_event(v.avail_event, v.new_idx, old)) | (got ^ (f < d));
	}
	*notifies = n;
	return bad;
}

static void test_event_idx_plane(bool full)
{
	uint16_t origins[8] = { 0, 1, 0x7fff, 0x8000, 0xffff };
	struct notify_policy p, p0;
	uint64_t bad = 0, bad_count = 0, rows = 0;
	double t0 = seconds();

	for (unsigned i = 5; i < 8; i++)
		origins[i] = (uint16_t)rnd();
	notify_policy_init(&p, NOTIFY_EVENT_IDX, 256, 0);
	p0 = p;
	for (unsigned o = 0; o < 8; o++) {
		for (uint32_t d = 0; d < 65536; d++) {
			uint32_t n;

			if (!full && d % 8 != o)
				continue;
			bad += event_row(&p, origins[o], (uint16_t)d, &n);
			bad_count += n != d;
			rows++;
		}
	}
	printf("  event-idx plane: %llu rows of 65536 at origins 0 1 0x7fff 0x8000 0xffff 0x%x 0x%x 0x%x, %.2f s wall\n",
	       (unsigned long long)rows, origins[5], origins[6], origins[7], seconds() - t0);
	CHECK(bad == 0, "event-idx: notify_policy_kick == spec need_event == \"e in [old, new)\" over %s (%llu bad)",
	      full ? "the full (new-old, event-old) plane at each of 8 origins" :
		     "the full (new-old, event-old) plane, spread over 8 origins",
	      (unsigned long long)bad);
	CHECK(bad_count == 0, "event-idx: a kick publishing d entries notifies for exactly d avail_event values (%llu bad rows)",
	      (unsigned long long)bad_count);
	CHECK(same_state(&p, &p0), "event-idx: 2^32 kicks, NO_NOTIFY and used_idx varied, state unchanged");
}

static void test_event_idx_invariance(void)
{
	struct notify_policy p;
	uint64_t bad_t = 0, bad_e = 0;

	notify_policy_init(&p, NOTIFY_EVENT_IDX, 256, 0);
	/* every shift t of one random kick */
	for (unsigned k = 0; k < 128; k++) {
		struct kick_view v = random_view(), w;
		bool want;

		if (k < 32)   /* e at the edges of the window: old (in), new (out) */
			v.avail_event = k & 1 ? v.old_idx : v.new_idx;
		want = notify_policy_kick(&p, &v);
		w = v;
		for (uint32_t t = 0; t < 65536; t++) {
			w.old_idx = (uint16_t)(v.old_idx + t);
			w.new_idx = (uint16_t)(v.new_idx + t);
			w.avail_event = (uint16_t)(v.avail_event + t);
			w.used_idx = (uint16_t)(v.used_idx + t);
			bad_t += notify_policy_kick(&p, &w) != want;
		}
	}
	/* every avail_event, a random kick and a random shift */
	for (unsigned k = 0; k < 128; k++) {
		struct kick_view v = random_view(), w = v;
		uint16_t t = (uint16_t)rnd();

		w.old_idx = (uint16_t)(v.old_idx + t);
		w.new_idx = (uint16_t)(v.new_idx + t);
		w.used_idx = (uint16_t)rnd();
		for (uint32_t e = 0; e < 65536; e++) {
			v.avail_event = (uint16_t)e;
			w.avail_event = (uint16_t)(e + t);
			bad_e += notify_policy_kick(&p, &v) != notify_policy_kick(&p, &w);
		}
	}
	CHECK(bad_t == 0, "event-idx: shifting old, new, avail_event, used by any t keeps the answer (128 kicks x 2^16 t, %llu bad)",
	      (unsigned long long)bad_t);
	CHECK(bad_e == 0, "event-idx: for every avail_event, a shifted kick answers alike (128 kicks x 2^16 e, %llu bad)",
	      (unsigned long long)bad_e);
}

/* ---- the threshold policies ---------------------------------------------- */

/* The seed's crossing rule, as the text says it: below the threshold before
 * this kick, at or above it after. */
static bool crosses(uint32_t threshold, uint32_t o, uint32_t added)
{
	return o < threshold && added >= threshold - o;
}

/* The seed's dynamic update after a kick under NO_NOTIFY, written out again:
 * the new outstanding count; a fall below the last one means the last was
 * a peak -- over the threshold moves it halfway up to the ring, under
 * decays it by an eighth toward the peak. */
static void dynamic_update(struct notify_policy *m, uint32_t o, uint32_t added)
{
	uint32_t now = o + added, peak = m->last_outstanding;

	if (now < peak) {
		if (peak >= m->threshold)
			m->threshold = (peak + m->ring) / 2;
		else
			m->threshold = m->threshold - m->threshold / 8 + peak / 8;
	}
	m->last_outstanding = now;
}

static const char *kind_name(enum notify_kind k)
{
	static const char *names[] = { "always", "static", "dynamic", "dynamic-exact", "event-idx" };

	return names[k];
}

/* A random state a policy of this kind could be in (and some it could not). */
static struct notify_policy random_policy(enum notify_kind kind)
{
	struct notify_policy p;
	uint16_t ring = (uint16_t)(2u << (rnd() % 10));   /* 2 .. 1024 */

	notify_policy_init(&p, kind, ring, rnd() % (ring + 1u));
	if (kind == NOTIFY_DYNAMIC || kind == NOTIFY_DYNAMIC_EXACT) {
		p.threshold = rnd() % (2u * ring + 1);
		p.last_outstanding = rnd() % (2u * ring + 1);
	}
	return p;
}

/* NO_NOTIFY clear: notify, state untouched.  'always' with NO_NOTIFY set:
 * quiet, state untouched.  Each 16-bit input swept in turn. */
static void test_flag_rules(void)
{
	static const enum notify_kind kinds[] = { NOTIFY_ALWAYS, NOTIFY_STATIC, NOTIFY_DYNAMIC, NOTIFY_DYNAMIC_EXACT };
	uint64_t bad_clear[4] = { 0 }, bad_always = 0;

	for (unsigned k = 0; k < 4; k++) {
		for (unsigned base = 0; base < 8; base++) {
			struct notify_policy p0 = random_policy(kinds[k]);
			struct kick_view v0 = random_view();

			for (unsigned field = 0; field < 4; field++) {
				for (uint32_t x = 0; x < 65536; x++) {
					struct notify_policy p = p0;
					struct kick_view v = v0;
					uint16_t *f = field == 0 ? &v.old_idx : field == 1 ? &v.new_idx :
						      field == 2 ? &v.used_idx : &v.avail_event;

					*f = (uint16_t)x;
					v.host_no_notify = false;
					bad_clear[k] += !notify_policy_kick(&p, &v) || !same_state(&p, &p0);
					if (kinds[k] == NOTIFY_ALWAYS) {
						v.host_no_notify = true;
						bad_always += notify_policy_kick(&p, &v) || !same_state(&p, &p0);
					}
				}
			}
		}
		CHECK(bad_clear[k] == 0, "%s: NO_NOTIFY clear -> notify, state unchanged, every value of each input (%llu bad)",
		      kind_name(kinds[k]), (unsigned long long)bad_clear[k]);
	}
	CHECK(bad_always == 0, "always: NO_NOTIFY set -> never notifies, state unchanged, every value of each input (%llu bad)",
	      (unsigned long long)bad_always);
}

/* A kick with outstanding o (as the policy counts it) and `added` new
 * entries, at a random place in index space.  For the seed's modulo count,
 * a random multiple of the ring goes on top of o: it must not matter. */
static struct kick_view kick_at(const struct notify_policy *p, uint32_t o, uint32_t added, bool no_notify)
{
	uint16_t used = (uint16_t)rnd(), delta = (uint16_t)o;
	struct kick_view v;

	if (p->kind != NOTIFY_DYNAMIC_EXACT)
		delta = (uint16_t)(o + p->ring * (rnd() % (65536u / p->ring)));
	v.used_idx = used;
	v.old_idx = (uint16_t)(used + delta);
	v.new_idx = (uint16_t)(v.old_idx + added);
	v.host_no_notify = no_notify;
	v.avail_event = (uint16_t)rnd();   /* must not matter */
	return v;
}

static void test_static(void)
{
	uint64_t bad = 0, kicks = 0;

	for (uint32_t ring = 2; ring <= 1024; ring *= 2) {
		/* every (N, o, a) up to ring 128; 2^20 random ones above */
		bool exhaustive = ring <= 128;
		uint32_t samples = exhaustive ? (ring + 1) * ring * (ring + 2) : 1u << 20;

		for (uint32_t i = 0; i < samples; i++) {
			uint32_t n = exhaustive ? i / (ring * (ring + 2)) : rnd() % (ring + 1);
			uint32_t o = exhaustive ? i / (ring + 2) % ring : rnd() % ring;
			uint32_t a = exhaustive ? i % (ring + 2) : rnd() % (ring + 2);
			/* a = ring + 1 stands for any larger count, up to 65535 */
			uint32_t added = a <= ring ? a : ring + 1 + rnd() % (65535 - ring);
			struct notify_policy p0, p;
			struct kick_view v;

			notify_policy_init(&p0, NOTIFY_STATIC, (uint16_t)ring, n);
			p = p0;
			v = kick_at(&p, o, added, true);
			bad += notify_policy_kick(&p, &v) != crosses(n, o, added) || !same_state(&p, &p0);
			kicks++;
		}
	}
	CHECK(bad == 0,
	      "static:N under NO_NOTIFY: notify iff o < N <= o + added, state unchanged -- every N, o, added for rings 2..128, "
	      "2^20 random ones at 256..1024 (%llu kicks, %llu bad)",
	      (unsigned long long)kicks, (unsigned long long)bad);
}

static void test_dynamic(void)
{
	static const enum notify_kind kinds[] = { NOTIFY_DYNAMIC, NOTIFY_DYNAMIC_EXACT };

	for (unsigned k = 0; k < 2; k++) {
		uint64_t bad = 0, kicks = 0;

		for (uint32_t ring = 2; ring <= 32; ring *= 2) {
			/* the exact count can exceed the ring (a host that
			 * claims to have used what was never published) */
			uint32_t o_max = kinds[k] == NOTIFY_DYNAMIC_EXACT ? 2 * ring : ring;

			for (uint32_t t = 0; t <= ring; t++) {
				for (uint32_t last = 0; last <= 2 * ring; last++) {
					for (uint32_t o = 0; o < o_max; o++) {
						for (uint32_t added = 0; added <= ring; added++) {
							struct notify_policy p, m;
							struct kick_view v;
							bool got;

							notify_policy_init(&p, kinds[k], (uint16_t)ring, 0);
							p.threshold = t;
							p.last_outstanding = last;
							m = p;
							v = kick_at(&p, o, added, true);
							got = notify_policy_kick(&p, &v);
							dynamic_update(&m, o, added);
							bad += got != crosses(t, o, added) || !same_state(&p, &m);
							kicks++;
						}
					}
				}
			}
		}
		CHECK(bad == 0,
		      "%s under NO_NOTIFY: the crossing rule on the current threshold, then the seed's update -- every "
		      "threshold 0..ring, last 0..2 ring, o, added 0..ring, rings 2..32 (%llu kicks, %llu bad)",
		      kind_name(kinds[k]), (unsigned long long)kicks, (unsigned long long)bad);
	}
}

static void test_ring_full(void)
{
	static const enum notify_kind kinds[] = { NOTIFY_ALWAYS, NOTIFY_STATIC, NOTIFY_DYNAMIC, NOTIFY_DYNAMIC_EXACT,
						  NOTIFY_EVENT_IDX };
	uint64_t bad = 0;

	for (unsigned k = 0; k < 5; k++) {
		for (uint32_t t = 0; t <= 2048; t++) {
			for (unsigned flag = 0; flag < 2; flag++) {
				struct notify_policy p;
				bool learns = (kinds[k] == NOTIFY_DYNAMIC || kinds[k] == NOTIFY_DYNAMIC_EXACT) && flag && t > 0;

				notify_policy_init(&p, kinds[k], 1024, 0);
				p.threshold = t;
				p.last_outstanding = t ^ 0x155;
				notify_policy_ring_full(&p, flag);
				bad += p.threshold != (learns ? t - 1 : t) || p.last_outstanding != (t ^ 0x155);
			}
		}
	}
	CHECK(bad == 0, "ring_full: threshold - 1 exactly for dynamic policies under NO_NOTIFY above 0, "
			"every threshold 0..2048, all kinds (%llu bad)", (unsigned long long)bad);
}

/* Shifting every index by t: same decision, same new state, all kinds. */
static void test_invariance(void)
{
	static const enum notify_kind kinds[] = { NOTIFY_ALWAYS, NOTIFY_STATIC, NOTIFY_DYNAMIC, NOTIFY_DYNAMIC_EXACT };

	for (unsigned k = 0; k < 4; k++) {
		uint64_t bad = 0;

		for (unsigned base = 0; base < 32; base++) {
			struct notify_policy p0 = random_policy(kinds[k]), pa = p0;
			struct kick_view v = random_view(), w = v;
			bool want;

			if (base % 2)   /* half of them in the region that matters */
				v = kick_at(&p0, rnd() % p0.ring, rnd() % (p0.ring + 1u), true), w = v;
			want = notify_policy_kick(&pa, &v);
			for (uint32_t t = 0; t < 65536; t++) {
				struct notify_policy pb = p0;

				w.old_idx = (uint16_t)(v.old_idx + t);
				w.new_idx = (uint16_t)(v.new_idx + t);
				w.used_idx = (uint16_t)(v.used_idx + t);
				w.avail_event = (uint16_t)(v.avail_event + t);
				bad += notify_policy_kick(&pb, &w) != want || !same_state(&pb, &pa);
			}
		}
		CHECK(bad == 0, "%s: shifting old, new, used, avail_event by any t keeps decision and state (32 kicks x 2^16 t, %llu bad)",
		      kind_name(kinds[k]), (unsigned long long)bad);
	}
}

/* ---- event-desc ---------------------------------------------------------- */

#define WRAP_BIT (1u << VRING_PACKED_EVENT_F_WRAP_CTR)

/* Which descriptors a kick from (slot, wrap) over d published, as a bitmap
 * over (offset, wrap) pairs: walked one descriptor at a time, the counter
 * flipping at the end of the ring. */
static void model_published_set(unsigned slot, unsigned wrap, unsigned d, unsigned ring, uint8_t *set)
{
	memset(set, 0, 2 * ring);
	for (unsigned i = 0; i < d; i++) {
		set[slot * 2 + wrap] = 1;
		if (++slot == ring)
			slot = 0, wrap ^= 1;
	}
}

/* Linux's form: the event offset into the 16-bit index space of the new
 * position (a lap back if its wrap counter is not the driver's), then the
 * split ring's need_event against old = new - d. */
static bool linux_form(uint16_t off_wrap, unsigned nslot, unsigned nwrap, unsigned d, unsigned ring)
{
	uint16_t event = (uint16_t)(off_wrap & ~WRAP_BIT);

	if ((off_wrap >> VRING_PACKED_EVENT_F_WRAP_CTR) != nwrap)
		event = (uint16_t)(event - ring);
	return spec_need_event(event, (uint16_t)nslot, (uint16_t)(nslot - d));
}

static uint64_t event_desc_ring(unsigned ring, uint64_t *cases)
{
	static uint8_t set[2 * 1024];
	uint64_t bad = 0;

	for (unsigned start = 0; start < 2 * ring; start++) {
		unsigned slot = start % ring, wrap = start < ring;   /* wrap 1 first, as the ring starts */

		for (unsigned d = 0; d <= ring; d++) {
			unsigned nslot = (slot + d) % ring, nwrap = wrap ^ ((slot + d) / ring);
			uint16_t old_pos = (uint16_t)(slot | wrap * WRAP_BIT), new_pos = (uint16_t)(nslot | nwrap * WRAP_BIT);

			model_published_set(slot, wrap, d, ring, set);
			for (unsigned e = 0; e < 2 * ring; e++) {
				uint16_t ow = (uint16_t)(e / 2 | (e % 2) * WRAP_BIT);
				bool got = notify_packed_need_event(ow, old_pos, new_pos, (uint16_t)ring);

				bad += (got != set[e]) | (got != linux_form(ow, nslot, nwrap, d, ring));
			}
			*cases += 2 * ring;
		}
	}
	return bad;
}

static void test_event_desc(void)
{
	static const unsigned big[] = { 128, 256 };
	uint64_t cases = 0, bad = 0;

	for (unsigned ring = 1; ring <= 64; ring++)
		bad += event_desc_ring(ring, &cases);
	for (unsigned i = 0; i < 2; i++)
		bad += event_desc_ring(big[i], &cases);
	CHECK(bad == 0, "event-desc: every start, kick size and event of every ring 1..64, 128, 256, as the "
			"model and as Linux's form (%llu cases, %llu bad)", (unsigned long long)cases,
	      (unsigned long long)bad);

	bad = 0;
	for (uint32_t i = 0; i < (1u << 22); i++) {
		const unsigned ring = 1024;
		unsigned slot = rnd() % ring, wrap = rnd() & 1, d = rnd() % (ring + 1);
		unsigned nslot = (slot + d) % ring, nwrap = wrap ^ ((slot + d) / ring);
		unsigned eoff = rnd() % ring, ewrap = rnd() & 1;
		/* published iff the event is 0..d-1 descriptors past the start
		 * on the two-lap circle (wrap 1 is lap 0) */
		unsigned a0 = slot + (wrap ? 0 : ring), ae = eoff + (ewrap ? 0 : ring);
		bool want = (ae + 2 * ring - a0) % (2 * ring) < d;
		uint16_t ow = (uint16_t)(eoff | ewrap * WRAP_BIT);
		bool got = notify_packed_need_event(ow, (uint16_t)(slot | wrap * WRAP_BIT),
						    (uint16_t)(nslot | nwrap * WRAP_BIT), (uint16_t)ring);

		bad += (got != want) | (got != linux_form(ow, nslot, nwrap, d, ring));
	}
	CHECK(bad == 0, "event-desc, ring 1024: 2^22 random (start, size, event), as the model and Linux's form "
			"(%llu bad)", (unsigned long long)bad);
}

/* always, static, dynamic, dynamic-exact: a packed view with the same
 * counts decides and moves the state as the split view, whatever its
 * positions and event fields hold. */
static void test_packed_view_same(void)
{
	static const enum notify_kind kinds[] = { NOTIFY_ALWAYS, NOTIFY_STATIC, NOTIFY_DYNAMIC, NOTIFY_DYNAMIC_EXACT };

	for (unsigned k = 0; k < 4; k++) {
		uint64_t bad = 0, notifies = 0;

		for (uint32_t i = 0; i < (1u << 20); i++) {
			struct notify_policy split = random_policy(kinds[k]), packed = split;
			struct kick_view v = (i & 1) ? kick_at(&split, rnd() % split.ring, rnd() % (split.ring + 1u), true)
						     : random_view();
			struct kick_view w = v;
			bool want;

			v.packed = false;
			w.packed = true;
			w.host_event_desc = !w.host_no_notify && (rnd() & 1);
			w.event_off_wrap = (uint16_t)rnd();
			w.old_pos = (uint16_t)rnd();
			w.new_pos = (uint16_t)rnd();
			want = notify_policy_kick(&split, &v);
			notifies += want;
			bad += notify_policy_kick(&packed, &w) != want || !same_state(&split, &packed);
		}
		CHECK(bad == 0, "%s: a packed view decides and updates as the split view with the same counts "
				"(2^20 kicks, %llu notifies, %llu bad)",
		      kind_name(kinds[k]), (unsigned long long)notifies, (unsigned long long)bad);
	}
}

/* CPU seconds, not wall: the machine running the tests may be shared. */
static void timed(const char *what, void (*fn)(void))
{
	clock_t c0 = clock();

	fn();
	printf("  (%s: %.2f s CPU)\n", what, (double)(clock() - c0) / CLOCKS_PER_SEC);
}

static bool full_plane;
static void event_idx_plane(void) { test_event_idx_plane(full_plane); }

int main(int argc, char **argv)
{
	clock_t c0 = clock();

	full_plane = argc > 1 && !strcmp(argv[1], "full");
	timed("event-idx plane", event_idx_plane);
	timed("event-idx invariance", test_event_idx_invariance);
	timed("NO_NOTIFY rules", test_flag_rules);
	timed("static", test_static);
	timed("dynamic", test_dynamic);
	timed("ring_full", test_ring_full);
	timed("invariance", test_invariance);
	timed("event-desc", test_event_desc);
	timed("packed views", test_packed_view_same);
	printf("  total %.2f s CPU\n", (double)(clock() - c0) / CLOCKS_PER_SEC);
	return check_summary();
}
