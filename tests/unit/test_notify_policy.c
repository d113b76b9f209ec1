/*
 * test_notify_policy.c -- the guest's notification policies
 * (guest-stub/notify_policy.c), checked against traces worked out by hand
 * from the seed "virtio: threshold for notifications" (docs/architecture.md,
 * "In the guest").
 *
 * These are the exact functions compiled into the guest stub, so a wrong
 * number here would be a wrong row in the reproduced table.  Every expected
 * value below is computed by hand in the comment next to it, not by calling
 * the code under test.
 */
#include <string.h>

#include <linux/virtio_ring.h>

#include "check.h"
#include "notify_policy.h"

/* One kick: avail idx goes old -> new, host last consumed up to `used`. */
static struct kick_view kv(uint16_t old_idx, uint16_t new_idx, uint16_t used_idx, bool no_notify)
{
	return (struct kick_view){ .old_idx = old_idx, .new_idx = new_idx, .used_idx = used_idx,
				   .host_no_notify = no_notify };
}

/* A packed ring's kick: the same buffer counts, the device's event flags
 * (DISABLE, ENABLE or DESC), its off_wrap, and the driver's positions
 * before and after publishing (offset | wrap << 15). */
static struct kick_view pkv(uint16_t old_idx, uint16_t new_idx, uint16_t used_idx, uint16_t event_flags,
			    uint16_t off_wrap, uint16_t old_pos, uint16_t new_pos)
{
	return (struct kick_view){ .old_idx = old_idx, .new_idx = new_idx, .used_idx = used_idx,
				   .host_no_notify = event_flags == VRING_PACKED_EVENT_FLAG_DISABLE,
				   .packed = true, .host_event_desc = event_flags == VRING_PACKED_EVENT_FLAG_DESC,
				   .event_off_wrap = off_wrap, .old_pos = old_pos, .new_pos = new_pos };
}

#define W1 (1u << VRING_PACKED_EVENT_F_WRAP_CTR)   /* wrap counter 1 in a position */

static bool parse(struct notify_policy *p, const char *s, uint16_t ring)
{
	return notify_policy_parse(p, s, (uint32_t)strlen(s), ring);
}

static void test_init(void)
{
	struct notify_policy p;

	/* vring_new_virtqueue: threshold = num/2 = 128/2 = 64, last_outstanding 0 */
	notify_policy_init(&p, NOTIFY_DYNAMIC, 128, 999);
	CHECK(p.threshold == 64, "dynamic ring 128 starts at threshold 64 (got %u)", p.threshold);
	CHECK(p.last_outstanding == 0, "dynamic starts with last_outstanding 0");
	notify_policy_init(&p, NOTIFY_DYNAMIC_EXACT, 256, 0);
	CHECK(p.threshold == 128, "dynamic-exact ring 256 starts at 128 (got %u)", p.threshold);
	notify_policy_init(&p, NOTIFY_STATIC, 128, 40);
	CHECK(p.threshold == 40, "static:40 keeps threshold 40 (got %u)", p.threshold);
}

/* Peak over the threshold: threshold moves halfway to the ring size. */
static void test_peak_over_threshold(void)
{
	struct notify_policy p;
	bool n;

	notify_policy_init(&p, NOTIFY_DYNAMIC, 128, 0);   /* threshold 64 */

	/* Kick 1: avail 0 -> 100, used 0, NO_NOTIFY set.
	 *   added = 100, obufs = (0 + 128 - 0) % 128 = 0
	 *   4a: 0 < 64 and 0 + 100 >= 64 -> notify
	 *   4b: obufs = 100
	 *   4c: 100 < last_outstanding 0? no -> threshold stays 64
	 *   4d: last_outstanding = 100 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 0, .new_idx = 100, .used_idx = 0,
							.host_no_notify = true });
	CHECK(n, "kick 0->100 crosses threshold 64: notify");
	CHECK(p.threshold == 64, "rising edge leaves threshold at 64 (got %u)", p.threshold);
	CHECK(p.last_outstanding == 100, "last_outstanding = 100 (got %u)", p.last_outstanding);

	/* Kick 2: avail 100 -> 101, host used 60.
	 *   added = 1, obufs = (100 + 128 - 60) % 128 = 168 % 128 = 40
	 *   4a: 40 < 64 but 40 + 1 = 41 < 64 -> no notify
	 *   4b: obufs = 41
	 *   4c: 41 < 100: passed a peak; 100 >= 64 -> threshold = (100 + 128) / 2 = 114
	 *   4d: last_outstanding = 41 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 100, .new_idx = 101, .used_idx = 60,
							.host_no_notify = true });
	CHECK(!n, "kick 100->101 with 40 outstanding: no notify");
	CHECK(p.threshold == 114, "peak 100 over 64 -> threshold (100+128)/2 = 114 (got %u)", p.threshold);
	CHECK(p.last_outstanding == 41, "last_outstanding = 41 (got %u)", p.last_outstanding);

	/* Kick 3: avail 101 -> 181 (wraps the modulo), used 101.
	 *   added = 80, obufs = (101 + 128 - 101) % 128 = 0
	 *   4a: 0 < 114 and 80 >= 114? no -> no notify
	 *   4b: obufs = 80
	 *   4c: 80 < 41? no
	 *   4d: last_outstanding = 80 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 101, .new_idx = 181, .used_idx = 101,
							.host_no_notify = true });
	CHECK(!n, "kick 101->181 adds 80 under threshold 114: no notify");
	CHECK(p.threshold == 114 && p.last_outstanding == 80, "threshold 114, last 80 (got %u, %u)",
	      p.threshold, p.last_outstanding);

	/* Kick 4: avail 181 -> 221, used 161.
	 *   added = 40, obufs = (181 + 128 - 161) % 128 = 148 % 128 = 20
	 *   4a: 20 < 114 and 60 >= 114? no
	 *   4b: obufs = 60
	 *   4c: 60 < 80: peak 80 < threshold 114 -> decay:
	 *       114 - 114/8 = 114 - 14 = 100; 100 + 80/8 = 100 + 10 = 110 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 181, .new_idx = 221, .used_idx = 161,
							.host_no_notify = true });
	CHECK(!n, "kick 181->221: no notify");
	CHECK(p.threshold == 110, "peak 80 under 114 decays to 114-14+10 = 110 (got %u)", p.threshold);
	CHECK(p.last_outstanding == 60, "last_outstanding = 60 (got %u)", p.last_outstanding);
}

/* Peak under the threshold: decay by 1/8 toward the peak. */
static void test_peak_under_threshold(void)
{
	struct notify_policy p;
	bool n;

	notify_policy_init(&p, NOTIFY_DYNAMIC, 128, 0);   /* threshold 64 */

	/* Kick 1: 0 -> 40, used 0: obufs 0, 0 + 40 >= 64? no -> no notify;
	 *   obufs = 40; 40 < 0? no; last = 40 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 0, .new_idx = 40, .used_idx = 0,
							.host_no_notify = true });
	CHECK(!n, "kick 0->40 stays under threshold 64: no notify");
	CHECK(p.last_outstanding == 40, "last_outstanding = 40 (got %u)", p.last_outstanding);

	/* Kick 2: 40 -> 41, used 30: obufs = (40+128-30)%128 = 10; 11 >= 64? no;
	 *   obufs = 11 < 40: peak 40 < 64 -> threshold = 64 - 64/8 + 40/8 = 64 - 8 + 5 = 61 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 40, .new_idx = 41, .used_idx = 30,
							.host_no_notify = true });
	CHECK(!n, "kick 40->41: no notify");
	CHECK(p.threshold == 61, "peak 40 under 64 decays to 64 - 8 + 5 = 61 (got %u)", p.threshold);
	CHECK(p.last_outstanding == 11, "last_outstanding = 11 (got %u)", p.last_outstanding);

	/* Kick 3: 41 -> 42, used 41: obufs 0 -> 1 < 11: peak 11 < 61 ->
	 *   61 - 61/8 + 11/8 = 61 - 7 + 1 = 55 */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 41, .new_idx = 42, .used_idx = 41,
							.host_no_notify = true });
	CHECK(!n, "kick 41->42: no notify");
	CHECK(p.threshold == 55, "peak 11 under 61 decays to 61 - 7 + 1 = 55 (got %u)", p.threshold);

	/* Kick 4 with the host asking for notifies: notify, no state change. */
	n = notify_policy_kick(&p, &(struct kick_view){ .old_idx = 42, .new_idx = 43, .used_idx = 42,
							.host_no_notify = false });
	CHECK(n, "NO_NOTIFY clear: dynamic notifies");
	CHECK(p.threshold == 55 && p.last_outstanding == 1, "NO_NOTIFY clear leaves threshold/last alone (%u, %u)",
	      p.threshold, p.last_outstanding);
}

static void test_ring_full(void)
{
	struct notify_policy p;

	notify_policy_init(&p, NOTIFY_DYNAMIC, 128, 0);
	notify_policy_ring_full(&p, true);
	CHECK(p.threshold == 63, "full ring under NO_NOTIFY: 64 -> 63 (got %u)", p.threshold);
	notify_policy_ring_full(&p, false);
	CHECK(p.threshold == 63, "full ring without NO_NOTIFY: stays 63 (got %u)", p.threshold);

	p.threshold = 1;
	notify_policy_ring_full(&p, true);
	CHECK(p.threshold == 0, "full ring: 1 -> 0 (got %u)", p.threshold);
	notify_policy_ring_full(&p, true);
	CHECK(p.threshold == 0, "full ring: never below 0 (got %u)", p.threshold);

	notify_policy_init(&p, NOTIFY_DYNAMIC_EXACT, 128, 0);
	notify_policy_ring_full(&p, true);
	CHECK(p.threshold == 63, "dynamic-exact also learns: 64 -> 63 (got %u)", p.threshold);

	notify_policy_init(&p, NOTIFY_STATIC, 128, 40);
	notify_policy_ring_full(&p, true);
	CHECK(p.threshold == 40, "static:40 never changes on a full ring (got %u)", p.threshold);
}

/* static:N: notify exactly when this kick takes outstanding from below N to >= N. */
static void test_static(void)
{
	struct notify_policy p;
	struct kick_view v;

	CHECK(parse(&p, "static:40", 128), "parse static:40");

	v = kv(0, 39, 0, true);      /* obufs 0, 0 + 39 >= 40? no */
	CHECK(!notify_policy_kick(&p, &v), "static:40, 0 + 39 outstanding: no notify");
	v = kv(39, 40, 0, true);     /* obufs 39 < 40, 39 + 1 = 40 >= 40: crossing */
	CHECK(notify_policy_kick(&p, &v), "static:40, 39 + 1 reaches 40: notify");
	v = kv(40, 41, 0, true);     /* obufs 40 < 40? no: already past */
	CHECK(!notify_policy_kick(&p, &v), "static:40, 40 + 1: already over, no notify");
	v = kv(10, 60, 5, true);     /* obufs 5 < 40, 5 + 50 = 55 >= 40: crossing in one jump */
	CHECK(notify_policy_kick(&p, &v), "static:40, 5 + 50 jumps over 40: notify");
	v = kv(60, 61, 5, false);    /* host wants notifies */
	CHECK(notify_policy_kick(&p, &v), "static:40 with NO_NOTIFY clear: notify");
	v = kv(0, 100, 0, true);     /* a peak of 100 over 40 ... */
	notify_policy_kick(&p, &v);
	v = kv(100, 101, 99, true);  /* ... then outstanding falls: static must not adapt */
	notify_policy_kick(&p, &v);
	CHECK(p.threshold == 40, "static:40 never adapts past a peak (got %u)", p.threshold);

	CHECK(parse(&p, "static:0", 128), "parse static:0");
	v = kv(0, 128, 0, true);     /* obufs 0 < 0 never holds */
	CHECK(!notify_policy_kick(&p, &v), "static:0 under NO_NOTIFY never notifies");
}

static void test_always(void)
{
	struct notify_policy p;
	struct kick_view v;

	CHECK(parse(&p, "always", 128), "parse always");
	v = kv(0, 1, 0, false);
	CHECK(notify_policy_kick(&p, &v), "always: NO_NOTIFY clear -> notify");
	v = kv(0, 100, 0, true);
	CHECK(!notify_policy_kick(&p, &v), "always: NO_NOTIFY set -> no notify even past 64 outstanding");
	v = kv(5, 6, 5, true);
	CHECK(!notify_policy_kick(&p, &v), "always: NO_NOTIFY set, 1 buffer -> no notify");
}

/* NO_NOTIFY clear: every policy but event-idx notifies regardless of numbers. */
static void test_no_notify_clear(void)
{
	static const char *names[] = { "always", "static:0", "static:64", "static:128", "dynamic", "dynamic-exact" };
	struct notify_policy p;

	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct kick_view v = kv(7, 8, 7, false);

		parse(&p, names[i], 128);
		CHECK(notify_policy_kick(&p, &v), "%s notifies when NO_NOTIFY is clear", names[i]);
	}
	/* event-idx ignores the flag: avail_event 10, old 3, new 6 -> no notify */
	CHECK(parse(&p, "event-idx", 128), "parse event-idx");
	struct kick_view v = kv(3, 6, 0, false);
	v.avail_event = 10;
	CHECK(!notify_policy_kick(&p, &v), "event-idx ignores a clear NO_NOTIFY (avail_event 10, 3->6)");
}

static void test_event_idx(void)
{
	struct notify_policy p;
	struct kick_view v;

	notify_policy_init(&p, NOTIFY_EVENT_IDX, 128, 0);
	/* vring_need_event(e, new, old) = (u16)(new - e - 1) < (u16)(new - old) */
	v = kv(3, 6, 0, true);
	v.avail_event = 5;         /* (6-5-1)=0 < 3 -> notify (5 is in (3, 6]) */
	CHECK(notify_policy_kick(&p, &v), "event-idx: avail_event 5, 3->6: notify");
	v.avail_event = 10;        /* (6-10-1)=65531 < 3? no */
	CHECK(!notify_policy_kick(&p, &v), "event-idx: avail_event 10, 3->6: no notify");
	v.avail_event = 3;         /* (6-3-1)=2 < 3 -> notify (the host waits for entry 3) */
	CHECK(notify_policy_kick(&p, &v), "event-idx: avail_event 3 = old: notify");
	v.avail_event = 6;         /* (6-6-1)=65535 < 3? no: entry 6 is not yet published */
	CHECK(!notify_policy_kick(&p, &v), "event-idx: avail_event 6 = new: no notify");
	v = kv(65534, 2, 0, true); /* wrap: added = 4 */
	v.avail_event = 0;         /* (2-0-1)=1 < 4 -> notify */
	CHECK(notify_policy_kick(&p, &v), "event-idx across the 16-bit wrap: notify");
}

/* The seed reduces outstanding modulo the ring, so a full ring reads 0. */
static void test_outstanding(void)
{
	struct notify_policy dyn, exact, stat;

	notify_policy_init(&dyn, NOTIFY_DYNAMIC, 128, 0);
	notify_policy_init(&exact, NOTIFY_DYNAMIC_EXACT, 128, 0);
	notify_policy_init(&stat, NOTIFY_STATIC, 128, 64);
	CHECK(notify_policy_outstanding(&dyn, 128, 0) == 0, "dynamic: avail 128 used 0 -> (128+128-0)%%128 = 0");
	CHECK(notify_policy_outstanding(&exact, 128, 0) == 128, "dynamic-exact: avail 128 used 0 -> 128");
	CHECK(notify_policy_outstanding(&stat, 128, 0) == 0, "static uses the seed's modulo too -> 0");
	CHECK(notify_policy_outstanding(&dyn, 100, 60) == 40, "dynamic: avail 100 used 60 -> 40");
	CHECK(notify_policy_outstanding(&exact, 100, 60) == 40, "dynamic-exact: avail 100 used 60 -> 40");
	/* 16-bit wrap: avail 3, used 65530 -> exact (u16)(3-65530) = 9;
	 * modulo: (3 + 128 - 65530) as u32 = 4294901897, % 128 = 9 as well */
	CHECK(notify_policy_outstanding(&exact, 3, 65530) == 9, "dynamic-exact across the wrap -> 9");
	CHECK(notify_policy_outstanding(&dyn, 3, 65530) == 9, "dynamic across the wrap -> 9");

	/* The consequence, traced for threshold 64 (ring 128, NO_NOTIFY set):
	 * kick 1: avail 0 -> 128, used 0: obufs 0 < 64, 0 + 128 >= 64 -> notify;
	 *         obufs = 128; last = 128 (both variants).
	 * kick 2: nothing added (avail 128 -> 128, the ring is full, used 0):
	 *   dynamic:       obufs = (128+128-0)%128 = 0; 0 + 0 >= 64? no;
	 *                  0 < last 128: a false "peak"; 128 >= 64 ->
	 *                  threshold = (128 + 128)/2 = 128; last = 0
	 *   dynamic-exact: obufs = 128; 128 < 128? no -> threshold stays 64;
	 *                  last = 128 */
	CHECK(notify_policy_kick(&dyn, &(struct kick_view){ .old_idx = 0, .new_idx = 128, .used_idx = 0,
							     .host_no_notify = true }),
	      "dynamic: kick 0->128 crosses 64: notify");
	CHECK(notify_policy_kick(&exact, &(struct kick_view){ .old_idx = 0, .new_idx = 128, .used_idx = 0,
							       .host_no_notify = true }),
	      "dynamic-exact: kick 0->128 crosses 64: notify");
	struct kick_view full = kv(128, 128, 0, true);
	CHECK(!notify_policy_kick(&dyn, &full), "dynamic: empty kick on a full ring: no notify");
	CHECK(!notify_policy_kick(&exact, &full), "dynamic-exact: empty kick on a full ring: no notify");
	CHECK(dyn.threshold == 128 && dyn.last_outstanding == 0,
	      "dynamic reads the full ring as 0: false peak, threshold (128+128)/2 = 128, last 0 (got %u, %u)",
	      dyn.threshold, dyn.last_outstanding);
	CHECK(exact.threshold == 64 && exact.last_outstanding == 128,
	      "dynamic-exact: no peak, threshold 64, last 128 (got %u, %u)", exact.threshold,
	      exact.last_outstanding);
}

static void test_parse(void)
{
	struct notify_policy p;

	CHECK(parse(&p, "always", 128) && p.kind == NOTIFY_ALWAYS, "parse always");
	CHECK(parse(&p, "dynamic", 128) && p.kind == NOTIFY_DYNAMIC && p.threshold == 64 && p.ring == 128,
	      "parse dynamic (ring 128, threshold 64)");
	CHECK(parse(&p, "dynamic-exact", 256) && p.kind == NOTIFY_DYNAMIC_EXACT && p.threshold == 128,
	      "parse dynamic-exact (ring 256, threshold 128)");
	CHECK(parse(&p, "event-idx", 128) && p.kind == NOTIFY_EVENT_IDX, "parse event-idx");
	CHECK(parse(&p, "event-desc", 128) && p.kind == NOTIFY_EVENT_DESC && p.threshold == 0,
	      "parse event-desc (threshold 0)");
	CHECK(!parse(&p, "event-des", 128) && !parse(&p, "event-descx", 128), "reject event-des, event-descx");
	CHECK(parse(&p, "static:128", 128) && p.kind == NOTIFY_STATIC && p.threshold == 128,
	      "parse static:128 (= ring)");
	CHECK(parse(&p, "static:0", 128) && p.threshold == 0, "parse static:0");
	CHECK(parse(&p, "static:007", 128) && p.threshold == 7, "parse static:007 -> 7");
	CHECK(!parse(&p, "static:129", 128), "reject static:129 for ring 128");
	CHECK(!parse(&p, "static:", 128), "reject static:");
	CHECK(!parse(&p, "foo", 128), "reject foo");
	CHECK(!parse(&p, "static:1x", 128), "reject static:1x");
	CHECK(!parse(&p, "static:-1", 128), "reject static:-1");
	CHECK(!parse(&p, "static:99999999999", 1024), "reject a huge static:N without wrapping");
	CHECK(!parse(&p, "", 128), "reject the empty string");
	CHECK(!parse(&p, "dynamic-", 128), "reject dynamic-");
	CHECK(!parse(&p, "dynam", 128), "reject the prefix dynam");
	CHECK(!parse(&p, "alwaysx", 128), "reject alwaysx");
	/* the length bounds the word: "dynamic" followed by junk outside len */
	CHECK(notify_policy_parse(&p, "dynamic,ring=128", 7, 128) && p.kind == NOTIFY_DYNAMIC,
	      "parse honours len (\"dynamic\" out of \"dynamic,ring=128\")");
	CHECK(notify_policy_parse(&p, "static:12,x", 9, 128) && p.threshold == 12,
	      "parse honours len (\"static:12\" out of \"static:12,x\")");
}

static void test_indirect(void)
{
	/* max(16, ring/8) */
	CHECK(indirect_default_threshold(128) == 16, "indirect threshold ring 128 -> max(16, 16) = 16");
	CHECK(indirect_default_threshold(256) == 32, "indirect threshold ring 256 -> 32");
	CHECK(indirect_default_threshold(1024) == 128, "indirect threshold ring 1024 -> 128");
	CHECK(indirect_default_threshold(64) == 16, "indirect threshold ring 64 -> max(16, 8) = 16");

	CHECK(!indirect_use(INDIRECT_NEVER, 16, 2, 1), "never: never indirect");
	CHECK(!indirect_use(INDIRECT_NEVER, 16, 8, 100), "never: never indirect (8 segments)");
	CHECK(indirect_use(INDIRECT_ALWAYS, 16, 2, 100), "always: 2 segments, 100 free -> indirect");
	CHECK(indirect_use(INDIRECT_ALWAYS, 16, 2, 1), "always: 2 segments, 1 free -> indirect");
	CHECK(!indirect_use(INDIRECT_ALWAYS, 16, 2, 0), "always: no free descriptor -> not indirect");
	CHECK(!indirect_use(INDIRECT_ALWAYS, 16, 1, 100), "always: single segment -> not indirect");
	CHECK(indirect_use(INDIRECT_THRESHOLD, 16, 2, 15), "threshold 16: 15 free -> indirect");
	CHECK(!indirect_use(INDIRECT_THRESHOLD, 16, 2, 16), "threshold 16: 16 free -> direct");
	CHECK(!indirect_use(INDIRECT_THRESHOLD, 16, 2, 100), "threshold 16: 100 free -> direct");
	CHECK(!indirect_use(INDIRECT_THRESHOLD, 16, 1, 3), "threshold: single segment -> direct");
	CHECK(!indirect_use(INDIRECT_THRESHOLD, 16, 2, 0), "threshold: 0 free -> not indirect");
}

/* ---- the packed ring ------------------------------------------------------ */

/* The model of event-desc, one descriptor at a time: the driver stands at
 * (slot, wrap) and publishes d descriptors, each at its slot with its wrap
 * counter, stepping to slot 0 and flipping the counter at the end of the
 * ring (virtio 1.2, 2.8.1).  Was (eoff, ewrap) among them? */
static bool model_published(unsigned slot, unsigned wrap, unsigned d, unsigned eoff, unsigned ewrap, unsigned ring)
{
	for (unsigned i = 0; i < d; i++) {
		if (slot == eoff && wrap == ewrap)
			return true;
		if (++slot == ring)
			slot = 0, wrap ^= 1;
	}
	return false;
}

/* Every start position and wrap, every kick size 0..ring, every event
 * offset and wrap, rings 1..16: notify_packed_need_event and the policy's
 * kick against the model. */
static void test_event_desc_model(void)
{
	for (unsigned ring = 1; ring <= 16; ring++) {
		uint64_t cases = 0, bad = 0, bad_kick = 0, flips = 0;
		struct notify_policy p;

		notify_policy_init(&p, NOTIFY_EVENT_DESC, (uint16_t)ring, 0);
		for (unsigned slot = 0; slot < ring; slot++) {
			for (unsigned wrap = 0; wrap < 2; wrap++) {
				for (unsigned d = 0; d <= ring; d++) {
					unsigned nslot = (slot + d) % ring, nwrap = wrap ^ ((slot + d) / ring);
					uint16_t old_pos = (uint16_t)(slot | wrap * W1), new_pos = (uint16_t)(nslot | nwrap * W1);

					flips += nwrap != wrap;
					for (unsigned eoff = 0; eoff < ring; eoff++) {
						for (unsigned ewrap = 0; ewrap < 2; ewrap++) {
							uint16_t ow = (uint16_t)(eoff | ewrap * W1);
							bool want = model_published(slot, wrap, d, eoff, ewrap, ring);
							struct kick_view v = pkv(7, (uint16_t)(7 + d), 3, VRING_PACKED_EVENT_FLAG_DESC,
										 ow, old_pos, new_pos);

							cases++;
							bad += notify_packed_need_event(ow, old_pos, new_pos, (uint16_t)ring) != want;
							bad_kick += notify_policy_kick(&p, &v) != want;
						}
					}
				}
			}
		}
		CHECK(bad == 0 && bad_kick == 0 && p.threshold == 0,
		      "event-desc, ring %2u: every start (slot, wrap), kick 0..%u, event (offset, wrap) as the "
		      "descriptor-by-descriptor model (%llu cases, %llu wrap flips; %llu bad, %llu bad kicks)",
		      ring, ring, (unsigned long long)cases, (unsigned long long)flips, (unsigned long long)bad,
		      (unsigned long long)bad_kick);
	}
}

/* Hand-worked kicks on a ring of 8. */
static void test_event_desc_hand(void)
{
	struct notify_policy p;
	struct kick_view v;

	notify_policy_init(&p, NOTIFY_EVENT_DESC, 8, 0);
	/* A fresh ring: the driver at slot 0, wrap 1; a kick publishes 0, 1,
	 * 2 (wrap 1) and stands at 3|W1.  The device (counter 1 too) asks
	 * for slot 0 of wrap 1: the first descriptor -> notify. */
	v = pkv(0, 3, 0, VRING_PACKED_EVENT_FLAG_DESC, 0 | W1, 0 | W1, 3 | W1);
	CHECK(notify_policy_kick(&p, &v), "ring 8, publish 0..2 (wrap 1), event 0|w1: notify");
	/* event 3|w1 is the next one, not yet published */
	v.event_off_wrap = 3 | W1;
	CHECK(!notify_policy_kick(&p, &v), "event 3|w1 = the new position: not yet published, no notify");
	/* event 2|w0 is slot 2 of the next lap */
	v.event_off_wrap = 2;
	CHECK(!notify_policy_kick(&p, &v), "event 2|w0: slot 2 one lap ahead, no notify");
	/* Across the wrap: from 6|w1 publish 6, 7 (wrap 1), 0 (wrap 0) -> 1|w0. */
	v = pkv(20, 23, 18, VRING_PACKED_EVENT_FLAG_DESC, 0, 6 | W1, 1);
	CHECK(notify_policy_kick(&p, &v), "6|w1 -> 1|w0 (the counter flips): event 0|w0 was published, notify");
	v.event_off_wrap = 7 | W1;
	CHECK(notify_policy_kick(&p, &v), "6|w1 -> 1|w0: event 7|w1 published before the flip, notify");
	v.event_off_wrap = 0 | W1;
	CHECK(!notify_policy_kick(&p, &v), "6|w1 -> 1|w0: event 0|w1 is a lap old, no notify");
	v.event_off_wrap = 5 | W1;
	CHECK(!notify_policy_kick(&p, &v), "6|w1 -> 1|w0: event 5|w1 was published by an earlier kick, no notify");
	v.event_off_wrap = 1;
	CHECK(!notify_policy_kick(&p, &v), "6|w1 -> 1|w0: event 1|w0 is next, no notify");
	/* A whole ring in one kick: from 5|w0 to 5|w1 publishes every slot once. */
	v = pkv(0, 8, 0, VRING_PACKED_EVENT_FLAG_DESC, 4 | W1, 5, 5 | W1);
	CHECK(notify_policy_kick(&p, &v), "a full lap 5|w0 -> 5|w1: event 4|w1 (the last) published, notify");
	v.event_off_wrap = 5 | W1;
	CHECK(!notify_policy_kick(&p, &v), "a full lap 5|w0 -> 5|w1: event 5|w1 is next, no notify");
	v.event_off_wrap = 5;
	CHECK(notify_policy_kick(&p, &v), "a full lap 5|w0 -> 5|w1: event 5|w0 (the first) published, notify");
	/* An empty kick never notifies under DESC. */
	v = pkv(4, 4, 0, VRING_PACKED_EVENT_FLAG_DESC, 4 | W1, 4 | W1, 4 | W1);
	CHECK(!notify_policy_kick(&p, &v), "nothing published: no notify whatever the event");
	/* An offset beyond the ring cannot be meant: notify rather than stall. */
	CHECK(notify_packed_need_event(8 | W1, 0 | W1, 1 | W1, 8) && notify_packed_need_event(0x7fff, 3, 3, 8),
	      "event offset 8 on a ring of 8 (or 0x7fff): notify");

	/* The device's flags come first. */
	v = pkv(0, 3, 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0 | W1, 0 | W1, 3 | W1);
	CHECK(!notify_policy_kick(&p, &v), "flags DISABLE: no notify even though the event was published");
	v = pkv(0, 3, 0, VRING_PACKED_EVENT_FLAG_ENABLE, 6 | W1, 0 | W1, 3 | W1);
	CHECK(notify_policy_kick(&p, &v), "flags ENABLE: notify even though the event was not published");
	v = pkv(0, 3, 0, 3, 6 | W1, 0 | W1, 3 | W1);
	CHECK(notify_policy_kick(&p, &v), "flags 3 (reserved): notify");
	CHECK(p.threshold == 0 && p.last_outstanding == 0, "event-desc keeps no state");
}

/* The other policies read a packed view's buffer counts and its DISABLE
 * exactly as a split view's indices and NO_NOTIFY. */
static void test_packed_views_other_policies(void)
{
	struct notify_policy p;
	struct kick_view v;
	char got[9], want[] = "...N....";

	/* static:4 under DISABLE: kick i sees i outstanding before publishing */
	CHECK(parse(&p, "static:4", 16), "parse static:4");
	for (unsigned i = 0; i < 8; i++) {
		v = pkv((uint16_t)i, (uint16_t)(i + 1), 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0, (uint16_t)(i | W1),
			(uint16_t)((i + 1) | W1));
		got[i] = notify_policy_kick(&p, &v) ? 'N' : '.';
	}
	got[8] = 0;
	CHECK(!strcmp(got, want), "packed, static:4, DISABLE, 8 single kicks, device idle: \"%s\" (want \"%s\")", got,
	      want);
	v = pkv(8, 9, 0, VRING_PACKED_EVENT_FLAG_ENABLE, 0, 8 | W1, 9 | W1);
	CHECK(notify_policy_kick(&p, &v), "packed, static:4, flags ENABLE: notify");
	v = pkv(8, 9, 0, VRING_PACKED_EVENT_FLAG_DESC, 0, 8 | W1, 9 | W1);
	CHECK(notify_policy_kick(&p, &v), "packed, static:4, flags DESC (not DISABLE): notify");

	CHECK(parse(&p, "always", 16), "parse always");
	v = pkv(0, 1, 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0, W1, 1 | W1);
	CHECK(!notify_policy_kick(&p, &v), "packed, always, DISABLE: no notify");
	v = pkv(0, 1, 0, VRING_PACKED_EVENT_FLAG_ENABLE, 0, W1, 1 | W1);
	CHECK(notify_policy_kick(&p, &v), "packed, always, ENABLE: notify");

	/* dynamic, the trace of test_peak_over_threshold on a packed ring of
	 * 128: 0 -> 100 crosses 64 (notify); 100 -> 101 with 60 used: peak 100
	 * over 64 -> threshold (100 + 128) / 2 = 114, last 41. */
	notify_policy_init(&p, NOTIFY_DYNAMIC, 128, 0);
	v = pkv(0, 100, 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0, W1, 100 | W1);
	CHECK(notify_policy_kick(&p, &v), "packed, dynamic: 0 -> 100 crosses 64, notify");
	v = pkv(100, 101, 60, VRING_PACKED_EVENT_FLAG_DISABLE, 0, 100 | W1, 101 | W1);
	CHECK(!notify_policy_kick(&p, &v) && p.threshold == 114 && p.last_outstanding == 41,
	      "packed, dynamic: 100 -> 101, 60 used: threshold 114, last 41 (got %u, %u)", p.threshold,
	      p.last_outstanding);
	/* the seed's modulo: 128 outstanding reads 0 on a packed ring too */
	notify_policy_init(&p, NOTIFY_DYNAMIC, 128, 0);
	v = pkv(0, 128, 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0, W1, 0);
	notify_policy_kick(&p, &v);
	v = pkv(128, 128, 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0, 0, 0);
	CHECK(!notify_policy_kick(&p, &v) && p.threshold == 128 && p.last_outstanding == 0,
	      "packed, dynamic: a full ring reads 0, false peak -> threshold 128 (got %u, %u)", p.threshold,
	      p.last_outstanding);

	/* Each event policy on the other layout's view decides as always. */
	notify_policy_init(&p, NOTIFY_EVENT_IDX, 16, 0);
	v = pkv(0, 1, 0, VRING_PACKED_EVENT_FLAG_ENABLE, 0, W1, 1 | W1);
	v.avail_event = 9;   /* would say no on a split ring */
	CHECK(notify_policy_kick(&p, &v), "event-idx on a packed view (ENABLE): notify, as always");
	v = pkv(0, 1, 0, VRING_PACKED_EVENT_FLAG_DISABLE, 0, W1, 1 | W1);
	v.avail_event = 0;   /* would say yes on a split ring */
	CHECK(!notify_policy_kick(&p, &v), "event-idx on a packed view (DISABLE): no notify, as always");
	notify_policy_init(&p, NOTIFY_EVENT_DESC, 16, 0);
	v = kv(0, 1, 0, false);
	CHECK(notify_policy_kick(&p, &v), "event-desc on a split view (NO_NOTIFY clear): notify, as always");
	v = kv(0, 1, 0, true);
	CHECK(!notify_policy_kick(&p, &v), "event-desc on a split view (NO_NOTIFY): no notify, as always");
}

int main(void)
{
	test_init();
	test_peak_over_threshold();
	test_peak_under_threshold();
	test_ring_full();
	test_static();
	test_always();
	test_no_notify_clear();
	test_event_idx();
	test_outstanding();
	test_parse();
	test_indirect();
	test_event_desc_model();
	test_event_desc_hand();
	test_packed_views_other_policies();
	return check_summary();
}
