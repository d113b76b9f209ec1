/*
 * net_rx.c -- virtio-net's receive queue: frames from the backend into the
 * guest's posted buffers.
 *
 * A frame's way in: the backend has one (its descriptor is readable -- the
 * tap's -- or slirp calls back) -> rx_pop takes the guest's next buffer
 * chain, validated by the ring walker -> the frame is written behind a
 * virtio-net header (for a backend with a receive side this file lays an
 * iovec over the chain and the backend reads into it, one readv straight
 * into guest RAM, net_backend.h; slirp's frame is copied) -> the chain goes
 * on the used ring -> after the batch, net_rx_signal interrupts the guest
 * if it has not masked the interrupt.  This file is the ring side only: it
 * never touches a backend's descriptor itself.
 *
 * Notification suppression is lguest's receive rule: while the guest has
 * buffers posted, NO_NOTIFY stays set, so reposting a buffer costs it no
 * exit.  Only when the host finds the ring empty does it clear the flag,
 * look once more (the guest may have posted meanwhile), and then wait for
 * the guest's notify before reading the tap again.  Frames meanwhile stay in
 * the tap's queue; slirp's are dropped (its TCP retransmits).
 *
 * Both backends treat a frame that does not fit the buffer it got alike: it
 * is dropped and the buffer goes back empty, counted in dropped_too_big --
 * never cut and counted as delivered.  slirp's frame has a known length; a
 * tap's is only known after the read, so the read gets one host byte past
 * the guest's buffers to show that the frame went on.  And the header's
 * num_buffers is written wherever it landed: the guest may split its header
 * across descriptors at any byte.
 */
#include "net.h"

#include <endian.h>
#include <errno.h>
#include <linux/virtio_net.h>
#include <stddef.h>
#include <string.h>
#include <sys/uio.h>

#include "trace_ring.h"

#define RX_HDR sizeof(struct virtio_net_hdr_v1)

static struct vq *rx_vq(struct net *net)
{
	return &net->mmio.vqs[NET_RX];
}

/* The guest's next receive chain, or 0 (none: now waiting for a notify),
 * or -1 (the guest broke the ring). */
static int rx_pop(struct net *net)
{
	struct vq *vq = rx_vq(net);
	int rc;

	if (!vq->ready || net->mmio.needs_reset || net->rx_starved)
		return 0;
	rc = vq_pop_avail(vq, &net->rx_chain);
	if (rc == 0) {
		if (!vq_enable_notify_and_recheck(vq)) {
			__atomic_store_n(&net->rx_starved, true, __ATOMIC_SEQ_CST);   /* the waker reads it */
			net->rx.starved++;
			return 0;
		}
		rc = vq_pop_avail(vq, &net->rx_chain);
	}
	if (rc < 0) {
		virtio_mmio_fail(&net->mmio, vq->error);
		return -1;
	}
	if (rc > 0)
		vq_suppress_notify(vq);   /* we have buffers: reposting needs no notify */
	return rc;
}

/* A receive chain must be all device-writable. */
static bool rx_chain_writable(const struct vq_chain *c)
{
	return c->out_len == 0;
}

/* Write `len` bytes at byte `at` of the chain's buffers, read in order, as
 * the guest will read them; the caller checked that they fit (in_len). */
static void rx_write_at(struct vq_chain *c, uint64_t at, const void *src, size_t len)
{
	const uint8_t *from = src;

	for (unsigned i = 0; i < c->count && len; i++) {
		uint64_t room = c->buf[i].len;
		size_t n;

		if (at >= room) {
			at -= room;
			continue;
		}
		n = room - at < len ? (size_t)(room - at) : len;
		memcpy(c->buf[i].host + at, from, n);
		from += n;
		len -= n;
		at = 0;
	}
}

/* VERSION_1 without MRG_RXBUF: num_buffers must read 1.  tun leaves those
 * two bytes as they were in the guest's buffer. */
static void rx_finish_header(struct vq_chain *c)
{
	uint16_t one = htole16(1);

	rx_write_at(c, offsetof(struct virtio_net_hdr_v1, num_buffers), &one, sizeof(one));
}

/* Return the current chain with `written` bytes in it (0: handed back empty). */
static void rx_return(struct net *net, uint32_t written)
{
	vq_push_used(rx_vq(net), net->rx_chain.head, written);
	if (net_coal_negotiated(net))
		net_coal_used(net, NET_RX);   /* it decides, buffer by buffer */
	else
		net->rx_used_unsignalled = true;
}

static void rx_complete(struct net *net, uint32_t written, size_t frame_len)
{
	rx_return(net, written);
	net->rx.frames++;
	net->rx.bytes += frame_len;
}

int net_rx_deliver(struct net *net, const void *frame, size_t len)
{
	struct vq_chain *c = &net->rx_chain;
	struct virtio_net_hdr_v1 hdr = { .num_buffers = htole16(1) };

	if (rx_pop(net) <= 0) {
		net->rx.dropped_no_buffer++;
		return -1;
	}
	if (!rx_chain_writable(c) || c->in_len < RX_HDR + len) {
		/* Hand the buffer back empty rather than a cut frame. */
		net->rx.dropped_too_big++;
		rx_return(net, 0);
		return -1;
	}
	rx_write_at(c, 0, &hdr, RX_HDR);
	rx_write_at(c, RX_HDR, frame, len);
	rx_complete(net, (uint32_t)(RX_HDR + len), len);
	return 0;
}

unsigned net_rx_from_backend(struct net *net, unsigned budget)
{
	struct vq_chain *c = &net->rx_chain;
	unsigned got = 0;

	if (!net->be_ops->receive)
		return 0;   /* slirp pushes its frames (net_rx_deliver); the sink has none */
	/* No receive queue yet -- a driver still probing; Linux's takes
	 * seconds in the emulator VM -- or a broken one: drop what arrives, as
	 * a NIC without buffers does.  Leaving it unread kept the tap readable
	 * and its level-triggered watch woke the device thread for ever, a
	 * spinning CPU that starved the booting guest (docs/linux-guest.md). */
	if (!rx_vq(net)->ready || net->mmio.needs_reset) {
		uint8_t head[64];
		struct iovec iov = { .iov_base = head, .iov_len = sizeof(head) };

		while (got < budget && net->be_ops->receive(net->be, &iov, 1) >= 0) {
			net->rx.dropped_no_buffer++;
			got++;
		}
		return 0;
	}
	/* The budget counts buffers taken, good or refused, so a guest that
	 * keeps posting unusable ones cannot hold this thread here. */
	for (unsigned taken = 0; taken < budget && rx_pop(net) > 0; taken++) {
		struct iovec iov[64 + 1];
		uint8_t beyond;      /* a byte read here means the frame did not fit */
		unsigned n = 0;
		ssize_t r;

		if (!rx_chain_writable(c) || c->count > 64 || c->in_len < RX_HDR + 60) {
			net->rx.dropped_too_big++;
			rx_return(net, 0);
			continue;
		}
		for (unsigned i = 0; i < c->count; i++)
			iov[n++] = (struct iovec){ .iov_base = c->buf[i].host, .iov_len = c->buf[i].len };
		iov[n++] = (struct iovec){ .iov_base = &beyond, .iov_len = 1 };
		r = net->be_ops->receive(net->be, iov, (int)n);
		if (r < 0) {
			vq_unpop_avail(rx_vq(net));      /* nothing to put in it after all */
			if (errno != EAGAIN)
				net->rx.read_errors++;
			break;
		}
		if ((size_t)r < RX_HDR) {
			net->rx.read_errors++;
			rx_return(net, 0);
			continue;
		}
		/* Longer than the buffers: tun reports the whole length, a datagram
		 * socket fills the extra byte.  The rest of the frame is gone either
		 * way, so it is dropped, not delivered cut. */
		if ((uint64_t)r > c->in_len) {
			net->rx.dropped_too_big++;
			rx_return(net, 0);
			continue;
		}
		rx_finish_header(c);
		rx_complete(net, (uint32_t)r, (size_t)r - RX_HDR);
		got++;
	}
	return got;
}

void net_rx_signal(struct net *net)
{
	if (!net->rx_used_unsignalled)
		return;
	net->rx_used_unsignalled = false;
	if (vq_should_interrupt(rx_vq(net))) {
		net->rx.interrupts++;
		trace_emit(net->trace, LKVM_TR_IRQ_RAISE, NET_RX, 0, 0, 0);
		virtio_mmio_signal_used(&net->mmio);
	}
}

bool net_rx_on_notify(struct net *net)
{
	bool was_starved = net->rx_starved;

	net->rx.notifies++;
	__atomic_store_n(&net->rx_starved, false, __ATOMIC_SEQ_CST);
	vq_suppress_notify(rx_vq(net));   /* buffers are posted: quiet from now on */
	return was_starved;
}
