/*
 * net_tap.c -- write guest frames into a TAP device.
 *
 * The chain's readable buffers are gathered into an iovec that points into
 * guest memory (each one already bounds-checked by the ring walker), so the
 * kernel copies the frame once, straight out of guest RAM -- what lguest's
 * launcher did with writev() in 2008.  A write error (interface down, no
 * buffer space) is counted and the frame is dropped, as a NIC would.
 *
 * The virtio-net header is the exception: it is copied out of the chain
 * (the guest may split it across buffers) and tun gets the host's own header
 * in its place.  tun acts on whatever header it is given -- GSO, NEEDS_CSUM --
 * whatever the device negotiated, so the guest's header would otherwise make
 * the host kernel segment and checksum on its behalf.  So: no offloads
 * negotiated, a zero header; CSUM (+ HOST_TSO4) negotiated, only those
 * fields, and only if they describe this frame.  A header that asks for
 * more, or lies about the frame, is refused: the frame is dropped and
 * counted like a failed write, and the ring stays usable (a bad header is a
 * bad frame, not a broken ring -- the descriptors themselves were fine).
 *
 * The other direction: when the tap is readable, net_rx.c pops the guest's
 * receive chain and calls tap_receive with an iovec over its buffers (plus
 * one spare host byte); the kernel copies the frame, header first, straight
 * into guest RAM.  What the read means -- a frame, a too-long frame, nothing
 * queued -- is for net_rx.c to decide: this side only reads.
 */
#include "net_tap.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/virtio_net.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "diag.h"
#include "lkvm_frame.h"
#include "stats.h"

#define TAP_HDR sizeof(struct virtio_net_hdr_v1)

/* SIOCSIFADDR, SIOCSIFNETMASK, then IFF_UP: the host end of the link. */
static int tap_configure(const char *ifname, uint32_t ip, uint8_t prefix)
{
	struct ifreq ifr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc = -1;
	const char *step = "socket";

	if (s < 0)
		goto out;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(ip);
	step = "SIOCSIFADDR";
	if (ioctl(s, SIOCSIFADDR, &ifr) < 0)
		goto out;
	sin->sin_addr.s_addr = htonl(prefix ? ~0u << (32 - prefix) : 0);
	step = "SIOCSIFNETMASK";
	if (ioctl(s, SIOCSIFNETMASK, &ifr) < 0)
		goto out;
	step = "SIOCGIFFLAGS";
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		goto out;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	step = "SIOCSIFFLAGS";
	rc = ioctl(s, SIOCSIFFLAGS, &ifr);
out:
	if (rc < 0)
		diag_fail("configuring tap %s: %s: %s -- needs root (CAP_NET_ADMIN)", ifname, step, strerror(errno));
	if (s >= 0)
		close(s);
	return rc;
}

int net_tap_open(struct net_tap *tap, const char *ifname, uint32_t host_ip, uint8_t prefix)
{
	struct ifreq ifr;
	int hdr = sizeof(struct virtio_net_hdr_v1);

	memset(tap, 0, sizeof(*tap));
	tap->fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);   /* reads stop at "empty" */
	if (tap->fd < 0)
		return diag_fail("/dev/net/tun: %s -- --net tap needs the tun module and root (or CAP_NET_ADMIN)",
				 strerror(errno));
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(tap->fd, TUNSETIFF, &ifr) < 0)
		return diag_fail("TUNSETIFF %s: %s -- check the name, or run as root", ifname[0] ? ifname : "(new)",
				 strerror(errno));
	/* VERSION_1 headers carry num_buffers: 12 bytes, not the legacy 10.
	 * No offloads: the guest sends complete, checksummed frames. */
	if (ioctl(tap->fd, TUNSETVNETHDRSZ, &hdr) < 0 || ioctl(tap->fd, TUNSETOFFLOAD, 0) < 0)
		return diag_fail("configuring tap %s: %s", ifr.ifr_name, strerror(errno));
	snprintf(tap->ifname, sizeof(tap->ifname), "%s", ifr.ifr_name);
	return host_ip ? tap_configure(tap->ifname, host_ip, prefix) : 0;
}

/* Count a dropped frame; the first reason is kept for the stats. */
static int __attribute__((format(printf, 2, 3))) tap_drop(struct net_tap *tap, const char *fmt, ...)
{
	va_list ap;
	size_t used;

	if (tap->errors++)
		return -1;
	va_start(ap, fmt);
	vsnprintf(tap->first_error, sizeof(tap->first_error), fmt, ap);
	va_end(ap);
	used = strlen(tap->first_error);
	snprintf(tap->first_error + used, sizeof(tap->first_error) - used, " (frame %llu)",
		 (unsigned long long)tap->frames);
	return -1;
}

/* The header tun may see for this frame, built field by field from what was
 * negotiated; NULL, or why the guest's header is refused. */
static const char *tap_header(const struct virtio_net_hdr_v1 *in, uint64_t negotiated, uint64_t frame_len,
			      struct virtio_net_hdr_v1 *out)
{
	bool csum = negotiated & (1ull << VIRTIO_NET_F_CSUM);
	/* The spec makes HOST_TSO4 depend on CSUM; without CSUM it means nothing. */
	bool tso4 = csum && (negotiated & (1ull << VIRTIO_NET_F_HOST_TSO4));
	bool ecn = tso4 && (negotiated & (1ull << VIRTIO_NET_F_HOST_ECN));
	uint32_t csum_end = (uint32_t)in->csum_start + in->csum_offset + 2;

	memset(out, 0, sizeof(*out));
	if (!csum)
		return NULL;   /* the guest's header carries nothing we agreed on: tun gets zeros */
	if (in->flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM)
		return "flags other than NEEDS_CSUM";
	if (in->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) {
		if (csum_end > frame_len)
			return "csum_start + csum_offset outside the frame";
		out->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		out->csum_start = in->csum_start;
		out->csum_offset = in->csum_offset;
	}
	if (in->gso_type == VIRTIO_NET_HDR_GSO_NONE)
		return NULL;   /* gso_size and hdr_len mean nothing without GSO: left 0 */
	if ((in->gso_type & ~VIRTIO_NET_HDR_GSO_ECN) != VIRTIO_NET_HDR_GSO_TCPV4 || !tso4)
		return "a GSO type that was not negotiated (only TCPV4 with HOST_TSO4)";
	if ((in->gso_type & VIRTIO_NET_HDR_GSO_ECN) && !ecn)
		return "GSO with ECN, HOST_ECN not negotiated";
	if (!(in->flags & VIRTIO_NET_HDR_F_NEEDS_CSUM))
		return "GSO without NEEDS_CSUM";
	/* The headers copied into every segment must hold the checksum field,
	 * and every segment must carry payload. */
	if (in->hdr_len < csum_end || in->hdr_len > frame_len)
		return "hdr_len not covering the TCP checksum, or past the frame";
	if (!in->gso_size || in->gso_size > frame_len - in->hdr_len)
		return "gso_size 0 or larger than the frame's payload";
	out->gso_type = in->gso_type;
	out->hdr_len = in->hdr_len;
	out->gso_size = in->gso_size;
	return NULL;
}

int net_tap_transmit(struct net_tap *tap, const struct vq_chain *chain, uint64_t negotiated)
{
	struct virtio_net_hdr_v1 guest_hdr, hdr;
	struct iovec iov[64];
	unsigned n = 1;          /* iov[0] is the host's header */
	size_t got = 0, frame_len = 0;
	const char *why;
	ssize_t w;

	for (unsigned i = 0; i < chain->count; i++) {
		const struct vq_buf *b = &chain->buf[i];
		size_t take = 0;

		if (b->device_writes)
			continue;
		if (got < TAP_HDR) {
			take = TAP_HDR - got < b->len ? TAP_HDR - got : b->len;
			memcpy((uint8_t *)&guest_hdr + got, b->host, take);
			got += take;
		}
		if (take == b->len)
			continue;
		if (n == sizeof(iov) / sizeof(iov[0]))
			return tap_drop(tap, "write to tap %s: %s", tap->ifname, strerror(E2BIG));
		iov[n++] = (struct iovec){ .iov_base = b->host + take, .iov_len = b->len - take };
		frame_len += b->len - take;
	}
	if (got < TAP_HDR)
		return tap_drop(tap, "write to tap %s: a %zu-byte chain, shorter than the virtio-net header", tap->ifname,
				got);
	why = tap_header(&guest_hdr, negotiated, frame_len, &hdr);
	if (why) {
		tap->hdr_refused++;
		return tap_drop(tap, "tap %s: refused the guest's virtio-net header: %s", tap->ifname, why);
	}
	iov[0] = (struct iovec){ .iov_base = &hdr, .iov_len = TAP_HDR };
	do
		w = writev(tap->fd, iov, n);
	while (w < 0 && errno == EINTR);
	if (w == (ssize_t)(TAP_HDR + frame_len)) {
		tap->frames++;
		tap->bytes += frame_len;
		return 0;
	}
	return tap_drop(tap, "write to tap %s: %s", tap->ifname, strerror(w < 0 ? errno : EMSGSIZE));
}

void net_tap_close(struct net_tap *tap)
{
	if (tap->fd >= 0)
		close(tap->fd);
	tap->fd = -1;
}

/* ---- the backend table (net_backend.h) ---- */

_Static_assert(sizeof(struct net_tap) <= NET_BACKEND_STATE_BYTES, "struct net_tap outgrew the device's room for it");

static void tap_init(void *be)
{
	struct net_tap *tap = be;

	tap->fd = -1;   /* not open: tap_close has nothing to close */
}

static int tap_open(void *be, const struct net_config *cfg, const struct net_backend_link *link)
{
	(void)link;   /* frames come in through the device's reads, not pushed */
	return net_tap_open(be, cfg->tap_name, cfg->host_ip, cfg->host_prefix);
}

static void tap_close(void *be)
{
	net_tap_close(be);
}

static int tap_transmit(void *be, const struct vq_chain *chain, uint64_t negotiated)
{
	return net_tap_transmit(be, chain, negotiated);
}

static int tap_rx_fd(const void *be)
{
	const struct net_tap *tap = be;

	return tap->fd;
}

static ssize_t tap_receive(void *be, const struct iovec *iov, int iovcnt)
{
	struct net_tap *tap = be;
	ssize_t r;

	do
		r = readv(tap->fd, iov, iovcnt);
	while (r < 0 && errno == EINTR);
	return r;
}

/* The tap does not check frames (the receiver does), so no verdict unless
 * a frame was dropped; its payload is what was written, less the
 * virtio-net header (not counted in bytes) and each raw frame's header. */
static void tap_tx_totals(const void *be, struct net_backend_tx_totals *out)
{
	const struct net_tap *tap = be;

	out->frames = tap->frames;
	out->bad = tap->errors;
	out->payload_bytes = tap->bytes - tap->frames * LKVM_FRAME_HDR;
	out->verdict = tap->errors ? tap->first_error : NULL;
	out->interface = tap->ifname;
}

static void tap_report_stats(const void *be, struct stats *st)
{
	const struct net_tap *tap = be;

	stats_str(st, "net_tap_interface", tap->ifname);
}

const struct net_backend_ops net_tap_ops = {
	.name = "tap",
	.init = tap_init,
	.open = tap_open,
	.close = tap_close,
	.transmit = tap_transmit,
	.rx_fd = tap_rx_fd,
	.receive = tap_receive,
	.tx_totals = tap_tx_totals,
	.report_stats = tap_report_stats,
};
