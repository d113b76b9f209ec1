/*
 * notify_policy.c -- the notification decisions, transcribed from the seed
 * "virtio: threshold for notifications" (vring_kick / vring_add_buf) and
 * from <linux/virtio_ring.h> for event-idx.  Comments give the seed's steps.
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

bool notify_policy_kick(struct notify_policy *p, const struct kick_view *v)
{
	uint32_t added = (uint16_t)(v->new_idx - v->old_idx);
	uint32_t obufs;
	bool notify = false;

	if (p->kind == NOTIFY_EVENT_IDX)
		return vring_need_event(v->avail_event, v->new_idx, v->old_idx);
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
