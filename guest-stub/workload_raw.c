/*
 * workload_raw.c -- transmit --bytes as Ethernet frames through virtio-net.
 *
 * The loop is the 2008 virtio_net start_xmit in miniature: reclaim what the
 * host has used, write the next frame (sequence number + pattern) into a
 * free buffer, add it as --segments descriptors (virtio-net header in its
 * own descriptor from 2 segments on, as the 2008 driver did), kick.  When
 * the ring is full, notify regardless and wait -- spinning on the used index
 * (default; cheapest here) or in hlt with the TX interrupt enabled.
 */
#include <linux/virtio_ids.h>
#include <linux/virtio_net.h>

#include "io.h"
#include "lib.h"
#include "lkvm_frame.h"
#include "net_drv.h"
#include "workloads.h"

static void fill_frame(uint8_t *f, uint32_t payload, uint64_t seq, const uint8_t *mac)
{
	uint64_t words = payload / 8, j, w;
	uint8_t *p = f + LKVM_FRAME_HDR;

	memset(f, 0xff, 6);                 /* broadcast */
	memcpy(f + 6, mac, 6);
	f[12] = LKVM_ETHERTYPE >> 8;
	f[13] = LKVM_ETHERTYPE & 0xff;
	memcpy(f + LKVM_ETH_HLEN, &seq, 8);
	for (j = 0; j < words; j++) {
		w = lkvm_pattern(seq, j);
		__builtin_memcpy(p + 8 * j, &w, 8);
	}
	if (payload % 8) {
		w = lkvm_pattern(seq, words);
		__builtin_memcpy(p + 8 * words, &w, payload % 8);
	}
}

int workload_raw(const struct params *p)
{
	static struct net_drv n;
	const struct mmio_window *w = find_device(p, VIRTIO_ID_NET);
	uint32_t payload = p->frame - LKVM_FRAME_HDR;
	uint64_t frames, seq, bytes_left = p->bytes, t0, pace_ticks;
	uint32_t stride = (NET_HDR + p->frame + 63) & ~63u;
	uint8_t *pool, **free_bufs;
	unsigned nfree = 0;
	struct gvq *q = &n.tx;
	uint32_t ithreshold = p->indirect_threshold ? p->indirect_threshold : indirect_default_threshold((uint16_t)p->ring);

	if (!w || net_drv_init(&n, w, p, 16) < 0)
		return LKVM_STATUS_FAILED;
	if (p->segments > p->ring && p->indirect == INDIRECT_NEVER) {
		printf("raw: %u segments never fit a ring of %u\n", p->segments, p->ring);
		return LKVM_STATUS_FAILED;
	}
	frames = (p->bytes + payload - 1) / payload;
	/* Twice as many buffers as ring slots: it must be the ring that runs
	 * out first (the seed's full-ring path), even with one descriptor per
	 * buffer. */
	pool = alloc_pages((uint64_t)stride * 2 * p->ring);
	free_bufs = alloc_pages(sizeof(*free_bufs) * 2 * p->ring);
	for (uint32_t i = 0; i < 2 * p->ring; i++)
		free_bufs[nfree++] = pool + (uint64_t)i * stride;   /* headers stay zero: no offloads */

	printf("raw: %lu bytes in %lu frames of %u bytes, ring %u, %u segment(s), policy %s\n",
	       p->bytes, frames, p->frame, p->ring, p->segments, p->policy);
	pace_ticks = gvq_ns_to_ticks(p->pace_ns, p->tsc_khz);
	t0 = rdtsc();
	for (seq = 0; seq < frames; seq++) {
		uint32_t len = bytes_left < payload ? (uint32_t)bytes_left : payload;
		struct gvq_seg seg[16];
		unsigned nseg;
		uint8_t *buf;
		void *done;

		while ((done = gvq_get_used(q, 0)))
			free_bufs[nfree++] = done;
		while (!nfree) {
			net_drv_wait_tx(&n, p->wait_halt);
			while ((done = gvq_get_used(q, 0)))
				free_bufs[nfree++] = done;
		}
		buf = free_bufs[--nfree];
		/* Stand-in for the per-packet work of a 2008 guest (TCP/IP,
		 * socket copy): the host sees frames at that rate. */
		spin_ticks(pace_ticks);
		fill_frame(buf + NET_HDR, len, seq, n.mac);
		nseg = net_drv_segments(seg, p->segments, buf, LKVM_FRAME_HDR + len);
		while (!gvq_add(q, seg, nseg, buf,
				indirect_use(p->indirect, ithreshold, nseg, q->num_free))) {
			gvq_notify_full(q);
			net_drv_wait_tx(&n, p->wait_halt);
			while ((done = gvq_get_used(q, 0)))
				free_bufs[nfree++] = done;
		}
		gvq_kick(q);
		bytes_left -= len;
		/* lkvm.burst: a tail every N frames.  Nothing forces a notify
		 * here (the ring is not full), so the device must find these
		 * buffers through the event-idx handshake alone -- which is
		 * what makes a lost kick show as a stall at once
		 * (docs/qemu.md, the event-idx stall). */
		if (p->burst && (seq + 1) % p->burst == 0)
			while (gvq_outstanding(q))
				net_drv_wait_tx(&n, p->wait_halt);
	}
	/* The host's timer collects the tail; wait until it has. */
	while (gvq_outstanding(q))
		net_drv_wait_tx(&n, p->wait_halt);
	while (gvq_get_used(q, 0))
		;
	guest_report.tsc_workload = rdtsc() - t0;
	guest_report.tx_bytes = p->bytes;
	guest_report.tx_frames = frames;
	net_drv_report_tx(&n);
	printf("raw: done, %lu notifies (%lu forced), final threshold %u\n",
	       q->notifies, q->forced, q->policy.threshold);
	return LKVM_STATUS_OK;
}
