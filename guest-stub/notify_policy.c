/*
 * notify_policy.c -- the notification decisions, transcribed from the seed
 * "virtio: threshold for notifications" (vring_kick / vring_add_buf) and
 * from <linux/virtio_ring.h> for event-idx; event-desc is the packed ring's
 * counterpart (virtio 1.2, 2.8.10).  Comments give the seed's steps.
 *
 * Data flow: the driver (virtio_drv.c, vring_packed_drv.c) reads the rings
 * into a struct kick_view; notify_policy_kick turns the view, and the
 * policy's own state, into notify or not.  Nothing here touches memory the
 * device can see.
 */
#include "notify_policy.h"

#include <linux/virtio_ring.h>

static bool is_dynamic(const struct notify_policy *p)
{
	return p->kind == NOTIFY_DYNAMIC || p->kind == NOTIFY_DYNAMIC_EXACT;
}

void notify_policy_init(struct notify_policy *p, enum notify_kind kind, uint16_t ring, uint32_t threshold)
{
	p->kind = kind;
	p->ring = ring;
	/* vring_new_virtqueue: threshold = num/2 for the dynamic policy */
	p->threshold = (kind == NOTIFY_DYNAMIC || kind == NOTIFY_DYNAMIC_EXACT) ? ring / 2u : threshold;
	p->last_outstanding = 0;
}

static bool word_is(const char *s, uint32_t len, const char *w)
{
	uint32_t i = 0;

	for (; i < len && w[i]; i++)
		if (s[i] != w[i])
			return false;
	return i == len && !w[i];
}

bool notify_policy_parse(struct notify_policy *p, const char *s, uint32_t len, uint16_t ring)
{
	uint32_t n = 0;

	if (word_is(s, len, "always"))
		notify_policy_init(p, NOTIFY_ALWAYS, ring, 0);
	else if (word_is(s, len, "dynamic"))
		notify_policy_init(p, NOTIFY_DYNAMIC, ring, 0);
	else if (word_is(s, len, "dynamic-exact"))
		notify_policy_init(p, NOTIFY_DYNAMIC_EXACT, ring, 0);
	else if (word_is(s, len, "event-idx"))
		notify_policy_init(p, NOTIFY_EVENT_IDX, ring, 0);
	else if (word_is(s, len, "event-desc"))
		notify_policy_init(p, NOTIFY_EVENT_DESC, ring, 0);
	else if (len > 7 && word_is(s, 7, "static:")) {
		for (uint32_t i = 7; i < len; i++) {
			if (s[i] < '0' || s[i] > '9' || n > 100000)
				return false;
			n = n * 10 + (s[i] - '0');
		}
		if (n > ring)
			return false;
		notify_policy_init(p, NOTIFY_STATIC, ring, n);
	} else
		return false;
	return true;
}

uint32_t notify_policy_outstanding(const struct notify_policy *p, uint16_t avail_idx, uint16_t used_idx)
{
	uint16_t exact = (uint16_t)(avail_idx - used_idx);

	if (p->kind == NOTIFY_DYNAMIC_EXACT)
		return exact;
	/* outstanding_buffers(): (avail->idx + num - used->idx) % num */
	return ((uint32_t)avail_idx + p->ring - used_idx) % p->ring;
}

/* A packed ring position (offset | wrap << 15) as the number of
 * descriptors made available so far, mod 2 * ring.  The wrap counter
 * starts at 1 and flips each time the position passes the end, so the laps
 * go wrap 1, 0, 1, 0, ...: a lap with wrap 1 is an even lap.  Offset and
 * wrap name a descriptor uniquely within two laps, and that is all the
 * decision needs, because one kick publishes at most one ring's worth. */
static uint32_t packed_lap_count(uint16_t pos, uint16_t ring)
{
	uint32_t off = pos & ~(1u << VRING_PACKED_EVENT_F_WRAP_CTR);

	return pos >> VRING_PACKED_EVENT_F_WRAP_CTR ? off : off + ring;
}

/*
 * The reasoning of Linux's virtqueue_kick_prepare_packed: the device's
 * event offset is a descriptor of the current lap if its wrap counter is
 * the driver's, else of the lap before; the kick made available the
 * descriptors from old to new; notify iff the event is one of them.  Linux
 * moves the event into the driver's 16-bit index space (minus the ring
 * size for the lap before) and asks vring_need_event; here all three go
 * onto the 2-lap circle of packed_lap_count and the question is asked
 * there: is the event's distance from old less than new's?  The same
 * answer for every offset inside the ring and every kick of at most a
 * ring's worth (tests/unit/test_notify_policy.c checks it against a
 * descriptor-by-descriptor model).
 */
bool notify_packed_need_event(uint16_t off_wrap, uint16_t old_pos, uint16_t new_pos, uint16_t ring)
{
	uint32_t span = 2u * ring, event, old, now;

	if (!ring || (off_wrap & ~(1u << VRING_PACKED_EVENT_F_WRAP_CTR)) >= ring)
		return true;
	event = packed_lap_count(off_wrap, ring);
	old = packed_lap_count(old_pos, ring);
	now = packed_lap_count(new_pos, ring);
	return (event + span - old) % span < (now + span - old) % span;
}

/* event-desc: the device's event suppression flags first (DISABLE: never;
 * DESC: its descriptor; ENABLE, or the reserved 3: always), as Linux does. */
static bool event_desc_kick(const struct notify_policy *p, const struct kick_view *v)
{
	if (v->host_no_notify)
		return false;
	if (!v->host_event_desc)
		return true;
	return notify_packed_need_event(v->event_off_wrap, v->old_pos, v->new_pos, p->ring);
}

bool notify_policy_kick(struct notify_policy *p, const struct kick_view *v)
{
	uint32_t added = (uint16_t)(v->new_idx - v->old_idx);
	uint32_t obufs;
	bool notify = false;

	/* Each event policy reads the mark of its own layout; a view of the
	 * other one has no such mark, and gets `always` (which net_drv_init
	 * never lets happen: it pairs them). */
	if (p->kind == NOTIFY_EVENT_IDX && !v->packed)
		return vring_need_event(v->avail_event, v->new_idx, v->old_idx);
	if (p->kind == NOTIFY_EVENT_DESC && v->packed)
		return event_desc_kick(p, v);
	if (p->kind == NOTIFY_EVENT_IDX || p->kind == NOTIFY_EVENT_DESC)
		return !v->host_no_notify;
	/* Prod other side to tell it about changes. */
	if (!v->host_no_notify)
		return true;
	if (p->kind == NOTIFY_ALWAYS)
		return false;

	obufs = notify_policy_outstanding(p, v->old_idx, v->used_idx);
	/* Doesn't want to know?  Prod as we pass threshold. */
	if (obufs < p->threshold && obufs + added >= p->threshold)
		notify = true;
	if (!is_dynamic(p))
		return notify;

	obufs += added;
	/* Did we just pass a peak?  Fold it into threshold. */
	if (obufs < p->last_outstanding) {
		if (p->last_outstanding >= p->threshold) {
			/* Peak over threshold?  Increase towards max. */
			p->threshold = (p->last_outstanding + p->ring) / 2;
		} else {
			/* Decay threshold a little. */
			p->threshold -= p->threshold / 8;
			p->threshold += p->last_outstanding / 8;
		}
	}
	p->last_outstanding = obufs;
	return notify;
}

void notify_policy_ring_full(struct notify_policy *p, bool host_no_notify)
{
	/* This implies we should have prodded other side earlier. */
	if (is_dynamic(p) && host_no_notify && p->threshold)
		p->threshold--;
}

uint32_t indirect_default_threshold(uint16_t ring)
{
	uint32_t eighth = ring >> 3;

	return eighth > 16 ? eighth : 16;
}

bool indirect_use(enum indirect_kind kind, uint32_t threshold, unsigned segments, uint32_t num_free)
{
	if (segments < 2 || num_free == 0 || kind == INDIRECT_NEVER)
		return false;
	if (kind == INDIRECT_ALWAYS)
		return true;   /* mainline: "FIXME: tune this threshold" */
	return num_free < threshold;
}
