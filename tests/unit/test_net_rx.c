/*
 * test_net_rx.c -- the host's receive path (devices/net_rx.c) without KVM:
 * frames into guest-posted buffers, lguest's receive suppression, and what
 * a buggy or hostile guest's receive ring gets.
 *
 * The guest is played by hand as in test_net_tx.c: buffers in a fake guest
 * RAM, published on the receive ring.  The backend is a datagram socket
 * pair standing in for the tap (one message = one frame, readv semantics
 * like a tap's), so net_rx_from_backend runs its real read path, including the
 * "nothing to read" case that must hand the popped buffer back.
 *
 * The same socket pair stands in for the tap on the transmit side: the test
 * posts frames on a transmit ring, net_tx_on_notify drains them through the
 * real device code into the tap backend, and the other end shows the exact
 * virtio-net header that would have reached tun -- zero unless offloads
 * were negotiated, and only valid, negotiated fields when they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "irq_line_log.h"
#include "net.h"
#include "net_tap.h"

#define MEM_SIZE (1u << 20)
#define RING_GPA 0x1000u
#define TX_RING_GPA 0x5000u
#define BUF_GPA  0x10000u        /* 4 KiB per descriptor slot */
#define TX_BUF_GPA 0x40000u      /* 16 KiB per transmit descriptor slot */
#define NUM      8u
#define HDR      12u

/* Fake guest RAM, and the host a device sees: no VM, its line a log. */
static struct guest_mem ram;
static struct irq_line_log lines;
static struct device_host host;
static struct net *net;
static struct vq *rx, *tx;
static struct vring vr, tvr;
static int backend[2];           /* [0] is the "tap" the device reads */

static uint8_t *buf_of(uint16_t d)
{
	return ram.host + BUF_GPA + d * 4096u;
}

static void publish(uint16_t head)
{
	vr.avail->ring[vr.avail->idx % NUM] = head;
	__atomic_store_n(&vr.avail->idx, (uint16_t)(vr.avail->idx + 1), __ATOMIC_RELEASE);
}

/* Post descriptor `d` as one buffer of `len` bytes, device-writable or not. */
static void post(uint16_t d, uint32_t len, bool writable)
{
	vr.desc[d] = (struct vring_desc){ .addr = BUF_GPA + d * 4096u, .len = len,
					  .flags = writable ? VRING_DESC_F_WRITE : 0 };
	publish(d);
}

/* The device's backend here is the tap (setup_offloads): its state, which
 * the device itself knows only as `void *be`. */
static struct net_tap *tap(void)
{
	return net->be;
}

/* Interrupts raised since the last call: rises of the line. */
static uint64_t irqs(void)
{
	return irq_line_log_take_rises(&lines, net->mmio.gsi);
}

static bool no_notify(void)
{
	return vr.used->flags & VRING_USED_F_NO_NOTIFY;
}

static void setup_offloads(bool offloads)
{
	struct net_config cfg = { .model = NET_MODEL_THREADED, .timeout_us = 500, .backend = NET_BACKEND_TAP,
				  .offloads = offloads };

	memset(ram.host, 0, MEM_SIZE);
	irq_line_log_clear(&lines);
	net_init(net, &host, 1, &cfg);
	tap()->fd = backend[0];
	vring_init(&vr, NUM, ram.host + RING_GPA, 4096);
	rx = &net->mmio.vqs[0];
	rx->num = NUM;
	rx->desc_gpa = (uint64_t)((uint8_t *)vr.desc - ram.host);
	rx->avail_gpa = (uint64_t)((uint8_t *)vr.avail - ram.host);
	rx->used_gpa = (uint64_t)((uint8_t *)vr.used - ram.host);
	if (vq_enable(rx, &ram) < 0) {
		printf("FAIL setup: vq_enable: %s\n", rx->error);
		exit(1);
	}
	vring_init(&tvr, NUM, ram.host + TX_RING_GPA, 4096);
	tx = &net->mmio.vqs[1];
	tx->num = NUM;
	tx->desc_gpa = (uint64_t)((uint8_t *)tvr.desc - ram.host);
	tx->avail_gpa = (uint64_t)((uint8_t *)tvr.avail - ram.host);
	tx->used_gpa = (uint64_t)((uint8_t *)tvr.used - ram.host);
	if (vq_enable(tx, &ram) < 0) {
		printf("FAIL setup: transmit vq_enable: %s\n", tx->error);
		exit(1);
	}
}

static void setup(void)
{
	setup_offloads(false);
}

static void make_frame(uint8_t *f, unsigned len, uint8_t seed)
{
	for (unsigned i = 0; i < len; i++)
		f[i] = (uint8_t)(seed + i * 7);
}

static void test_deliver(void)
{
	uint8_t frame[90], got[90];
	struct virtio_net_hdr_v1 h;

	setup();
	make_frame(frame, 60, 1);
	post(0, 2048, true);
	CHECK(net_rx_deliver(net, frame, 60) == 0, "a 60-byte frame into a posted buffer");
	memcpy(&h, buf_of(0), HDR);
	CHECK(vr.used->idx == 1 && vr.used->ring[0].id == 0 && vr.used->ring[0].len == HDR + 60,
	      "used: head 0, length header + frame");
	CHECK(h.num_buffers == 1 && h.flags == 0 && h.gso_type == 0, "header: num_buffers 1, no offloads");
	CHECK(!memcmp(buf_of(0) + HDR, frame, 60), "the frame follows the header");
	CHECK(no_notify(), "buffers posted: NO_NOTIFY set (reposting is quiet)");
	CHECK(net->rx.frames == 1 && net->rx.bytes == 60, "counted: 1 frame, 60 bytes");

	/* Header and frame across two writable descriptors, split mid-header. */
	make_frame(frame, 90, 9);
	vr.desc[1] = (struct vring_desc){ .addr = BUF_GPA + 4096u, .len = 8,
					  .flags = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, .next = 2 };
	vr.desc[2] = (struct vring_desc){ .addr = BUF_GPA + 2 * 4096u, .len = 200, .flags = VRING_DESC_F_WRITE };
	publish(1);
	CHECK(net_rx_deliver(net, frame, 90) == 0, "a frame into a two-descriptor chain");
	memcpy(got, buf_of(2) + 4, 90);
	CHECK(!memcmp(got, frame, 90) && vr.used->ring[1].len == HDR + 90,
	      "the header's last 4 bytes and the frame land in the second buffer");

	net_rx_signal(net);
	CHECK(irqs() == 1 && net->rx.interrupts == 1, "one interrupt for the batch");
}

static void test_refused_buffers(void)
{
	uint8_t frame[60];

	setup();
	make_frame(frame, 60, 3);
	post(0, 40, true);
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net->rx.dropped_too_big == 1,
	      "a 40-byte buffer for a 72-byte frame: dropped, counted");
	CHECK(vr.used->idx == 1 && vr.used->ring[0].len == 0, "the buffer goes back empty, not with a cut frame");
	post(1, 2048, false);
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net->rx.dropped_too_big == 2 && vr.used->ring[1].len == 0,
	      "a read-only buffer is not written: dropped, handed back empty");
	CHECK(!memcmp(buf_of(1), (uint8_t[HDR]){ 0 }, HDR), "and its memory is untouched");
	CHECK(!net->mmio.needs_reset, "neither is a ring violation");
}

static void test_starved(void)
{
	uint8_t frame[60];

	setup();
	make_frame(frame, 60, 5);
	post(0, 2048, true);
	net_rx_deliver(net, frame, 60);
	CHECK(no_notify(), "while buffers last: NO_NOTIFY");
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net->rx.dropped_no_buffer == 1,
	      "no buffer left: the frame is dropped");
	CHECK(net->rx_starved && net->rx.starved == 1 && !no_notify(),
	      "the host asks to be told: NO_NOTIFY cleared, starved");
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net->rx.starved == 1,
	      "starved stays starved without re-asking");
	post(1, 2048, true);
	CHECK(net_rx_on_notify(net) && !net->rx_starved && no_notify(),
	      "the guest's notify: no longer starved, quiet again");
	CHECK(net_rx_deliver(net, frame, 60) == 0, "and the new buffer is used");
	CHECK(!net_rx_on_notify(net), "a notify while not starved asks for nothing");
}

static void test_interrupt_suppression(void)
{
	uint8_t frame[60];

	setup();
	make_frame(frame, 60, 7);
	vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	post(0, 2048, true);
	net_rx_deliver(net, frame, 60);
	net_rx_signal(net);
	CHECK(irqs() == 0, "NO_INTERRUPT: a polling guest gets no interrupt");
	vr.avail->flags = 0;
	post(1, 2048, true);
	net_rx_deliver(net, frame, 60);
	net_rx_signal(net);
	CHECK(irqs() == 1, "interrupts on (the guest is about to sleep): one");
	net_rx_signal(net);
	CHECK(irqs() == 0 && net->rx.interrupts == 1, "nothing new delivered: no second interrupt");
}

static void test_from_tap(void)
{
	uint8_t msg[HDR + 80];
	struct virtio_net_hdr_v1 h;

	setup();
	memset(msg, 0, HDR);
	make_frame(msg + HDR, 80, 11);
	post(0, 2048, true);
	post(1, 2048, true);
	CHECK(write(backend[1], msg, sizeof(msg)) == (ssize_t)sizeof(msg), "one frame queued on the \"tap\"");
	CHECK(net_rx_from_backend(net, 64) == 1, "read one frame, then the tap was empty");
	memcpy(&h, buf_of(0), HDR);
	CHECK(vr.used->idx == 1 && vr.used->ring[0].len == sizeof(msg) && h.num_buffers == 1 &&
	      !memcmp(buf_of(0) + HDR, msg + HDR, 80), "straight into the guest's buffer, num_buffers set to 1");
	CHECK(rx->last_avail == 1, "the buffer popped for the empty read was handed back");
	CHECK(write(backend[1], msg, sizeof(msg)) == (ssize_t)sizeof(msg) && net_rx_from_backend(net, 64) == 1 &&
	      vr.used->ring[1].id == 1, "so the next frame takes it");
	CHECK(net->rx.read_errors == 0, "EAGAIN is not an error");
}

static void test_hostile(void)
{
	uint8_t frame[60];

	setup();
	make_frame(frame, 60, 13);
	vr.desc[0] = (struct vring_desc){ .addr = MEM_SIZE - 16, .len = 2048, .flags = VRING_DESC_F_WRITE };
	publish(0);
	CHECK(net_rx_deliver(net, frame, 60) == -1, "a buffer running past guest RAM: refused");
	CHECK(net->mmio.needs_reset && rx->broken, "the device needs a reset (%s)", rx->error);
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net_rx_from_backend(net, 64) == 0,
	      "a broken device receives nothing more");

	setup();
	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA, .len = 2048, .flags = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
					  .next = 0 };
	publish(0);
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net->mmio.needs_reset, "a chain that loops: refused, reset");
}

/* ---- the receive path's own header and its sizes ---- */

/* Post a two-descriptor chain whose first buffer holds `first` bytes of the
 * header, and fill both with stale bytes, as a reused buffer would be. */
static void post_split(uint16_t d, uint32_t first, uint32_t second)
{
	memset(buf_of(d), 0x77, first);
	memset(buf_of((uint16_t)(d + 1)), 0x77, second);
	vr.desc[d] = (struct vring_desc){ .addr = BUF_GPA + d * 4096u, .len = first,
					  .flags = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, .next = (uint16_t)(d + 1) };
	vr.desc[d + 1] = (struct vring_desc){ .addr = BUF_GPA + (d + 1) * 4096u, .len = second,
					      .flags = VRING_DESC_F_WRITE };
	publish(d);
}

/* The header's num_buffers as the guest will read it, wherever it landed. */
static uint16_t num_buffers_in(uint16_t d, uint32_t first)
{
	uint8_t h[HDR];

	for (unsigned i = 0; i < HDR; i++)
		h[i] = i < first ? buf_of(d)[i] : buf_of((uint16_t)(d + 1))[i - first];
	return (uint16_t)(h[10] | h[11] << 8);
}

static void test_tap_split_header(void)
{
	static const uint32_t firsts[] = { 1, 10, 11 };
	uint8_t msg[HDR + 70];

	setup();
	/* tun leaves num_buffers alone (it writes the 10-byte legacy header and
	 * skips the rest), so whatever is in the guest's buffer stays there
	 * unless the host writes 1.  The stand-in sends 0x7777 to be sure. */
	memset(msg, 0, HDR);
	msg[10] = msg[11] = 0x77;
	make_frame(msg + HDR, 70, 17);
	for (unsigned i = 0; i < 3; i++) {
		uint16_t d = (uint16_t)(2 * i);

		post_split(d, firsts[i], 2048);
		CHECK(write(backend[1], msg, sizeof(msg)) == (ssize_t)sizeof(msg) && net_rx_from_backend(net, 1) == 1,
		      "tap: a frame into a chain with %u header byte(s) in its first buffer", firsts[i]);
		CHECK(num_buffers_in(d, firsts[i]) == 1, "num_buffers reads 1 (got 0x%x) with the header split after byte %u",
		      num_buffers_in(d, firsts[i]), firsts[i]);
		CHECK(!memcmp(buf_of((uint16_t)(d + 1)) + (HDR - firsts[i]), msg + HDR, 70), "and the frame follows it");
	}
	setup();
	post_split(0, 5, 2048);
	CHECK(net_rx_deliver(net, msg + HDR, 70) == 0 && num_buffers_in(0, 5) == 1,
	      "slirp path: num_buffers 1 with the header split after byte 5");
}

static void test_oversize(void)
{
	uint8_t big[HDR + 300], small[HDR + 60];

	setup();
	memset(big, 0, HDR);
	make_frame(big + HDR, 300, 19);
	memset(small, 0, HDR);
	make_frame(small + HDR, 60, 23);
	post(0, HDR + 100, true);
	post(1, 2048, true);
	CHECK(write(backend[1], big, sizeof(big)) == (ssize_t)sizeof(big) &&
	      write(backend[1], small, sizeof(small)) == (ssize_t)sizeof(small), "tap: a 300-byte frame, then a 60-byte one");
	CHECK(net_rx_from_backend(net, 64) == 1, "only one frame delivered");
	CHECK(vr.used->idx == 2 && vr.used->ring[0].id == 0 && vr.used->ring[0].len == 0,
	      "the 112-byte buffer goes back empty, not with a cut frame (used len %u)", vr.used->ring[0].len);
	CHECK(net->rx.dropped_too_big == 1 && net->rx.frames == 1 && net->rx.bytes == 60,
	      "tap: dropped and counted as too big (%llu), not delivered (%llu frames)",
	      (unsigned long long)net->rx.dropped_too_big, (unsigned long long)net->rx.frames);
	CHECK(vr.used->ring[1].id == 1 && vr.used->ring[1].len == sizeof(small) && !memcmp(buf_of(1) + HDR, small + HDR, 60),
	      "the oversize frame was consumed: the next one lands whole in the next buffer");

	setup();
	post(0, HDR + 100, true);
	CHECK(net_rx_deliver(net, big + HDR, 300) == -1 && net->rx.dropped_too_big == 1 && net->rx.frames == 0 &&
	      vr.used->ring[0].len == 0, "slirp path: the same frame into the same buffer is dropped and counted alike");
}

/* ---- what the tap backend hands to tun ---- */

struct tx_case {
	uint64_t features;            /* what the driver accepted (FEATURES_OK is set) */
	struct virtio_net_hdr_v1 h;   /* what the guest put in front of its frame */
	uint32_t frame_len;
	uint32_t split;               /* header bytes in the first descriptor (0: all 12) */
};

#define F_CSUM (1ull << VIRTIO_NET_F_CSUM)
#define F_TSO4 (1ull << VIRTIO_NET_F_HOST_TSO4)
#define F_ECN  (1ull << VIRTIO_NET_F_HOST_ECN)

/* A TSO header as the guest stub writes it for a 54-byte-header TCP segment. */
static const struct virtio_net_hdr_v1 tso_hdr = {
	.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 54,
	.gso_size = 100, .csum_start = 34, .csum_offset = 16, .num_buffers = 5,
};

/* Transmit one frame through the real drain; the bytes tun would get go to
 * *out (length returned, -1 if nothing was written). */
static ssize_t tx_one(bool offered, const struct tx_case *c, uint8_t *out, size_t out_size)
{
	uint8_t *b0 = ram.host + TX_BUF_GPA, *b1 = b0 + 0x4000;
	uint32_t first = c->split ? c->split : HDR;
	ssize_t r;

	setup_offloads(offered);
	net->mmio.driver_features = c->features | (1ull << VIRTIO_F_VERSION_1);
	net->mmio.status = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
			   VIRTIO_CONFIG_S_DRIVER_OK;
	memcpy(b0, &c->h, first);
	memcpy(b1, (const uint8_t *)&c->h + first, HDR - first);
	make_frame(b1 + (HDR - first), c->frame_len, 29);
	tvr.desc[0] = (struct vring_desc){ .addr = TX_BUF_GPA, .len = first, .flags = VRING_DESC_F_NEXT, .next = 1 };
	tvr.desc[1] = (struct vring_desc){ .addr = TX_BUF_GPA + 0x4000, .len = HDR - first + c->frame_len };
	tvr.avail->ring[0] = 0;
	__atomic_store_n(&tvr.avail->idx, 1, __ATOMIC_RELEASE);
	net_tx_on_notify(net);
	r = recv(backend[1], out, out_size, MSG_DONTWAIT);
	if (r < 0 && errno != EAGAIN)
		printf("FAIL recv: %s\n", strerror(errno));
	return r;
}

static bool header_is(const uint8_t *got, const struct virtio_net_hdr_v1 *want)
{
	return !memcmp(got, want, HDR);
}

static void test_tap_header(void)
{
	static uint8_t out[HDR + 20000], frame[20000];
	const struct virtio_net_hdr_v1 zero = { 0 };
	struct virtio_net_hdr_v1 want = tso_hdr;
	struct tx_case c = { .features = 0, .h = tso_hdr, .frame_len = 1000 };
	ssize_t r;

	make_frame(frame, sizeof(frame), 29);
	r = tx_one(false, &c, out, sizeof(out));
	CHECK(r == HDR + 1000 && header_is(out, &zero) && !memcmp(out + HDR, frame, 1000),
	      "nothing offered: a GSO/NEEDS_CSUM header from the guest reaches tun as 12 zero bytes (%zd bytes)", r);
	CHECK(tap()->frames == 1 && tap()->errors == 0, "and the frame is written, not refused");

	r = tx_one(true, &c, out, sizeof(out));
	CHECK(r == HDR + 1000 && header_is(out, &zero), "offered (--tso) but not accepted by the driver: zero header");

	c.features = F_CSUM | F_TSO4;
	want.num_buffers = 0;
	r = tx_one(true, &c, out, sizeof(out));
	CHECK(r == HDR + 1000 && header_is(out, &want) && !memcmp(out + HDR, frame, 1000),
	      "CSUM + HOST_TSO4 negotiated: the TSO header passes, num_buffers zeroed");
	c.split = 5;
	r = tx_one(true, &c, out, sizeof(out));
	CHECK(r == HDR + 1000 && header_is(out, &want) && !memcmp(out + HDR, frame, 1000),
	      "the same header split across two descriptors: read whole, passed the same");
	c.split = 0;

	c.h = (struct virtio_net_hdr_v1){ .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16,
					  .gso_size = 77, .hdr_len = 54 };
	want = (struct virtio_net_hdr_v1){ .flags = VIRTIO_NET_HDR_F_NEEDS_CSUM, .csum_start = 34, .csum_offset = 16 };
	c.features = F_CSUM;
	r = tx_one(true, &c, out, sizeof(out));
	CHECK(r == HDR + 1000 && header_is(out, &want),
	      "CSUM only: NEEDS_CSUM passes; gso_size and hdr_len of a non-GSO frame do not");

	/* Headers that must be refused once offloads are negotiated. */
	struct { uint64_t features; struct virtio_net_hdr_v1 h; uint32_t len; const char *what; } bad[] = {
		{ F_CSUM, tso_hdr, 1000, "GSO without HOST_TSO4 negotiated" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_TCPV6, .hdr_len = 74, .gso_size = 100,
				     .csum_start = 54, .csum_offset = 16 }, 1000, "gso_type TCPV6" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_UDP, .hdr_len = 42, .gso_size = 100,
				     .csum_start = 34, .csum_offset = 6 }, 1000, "gso_type UDP" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4 | VIRTIO_NET_HDR_GSO_ECN,
				     .hdr_len = 54, .gso_size = 100, .csum_start = 34, .csum_offset = 16 }, 1000,
		  "TCPV4 with ECN, HOST_ECN not negotiated" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 54, .gso_size = 0,
				     .csum_start = 34, .csum_offset = 16 }, 1000, "GSO with gso_size 0" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 54, .gso_size = 2000,
				     .csum_start = 34, .csum_offset = 16 }, 1000, "gso_size larger than the frame's payload" },
		{ F_CSUM | F_TSO4, { .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 54, .gso_size = 100 }, 1000,
		  "GSO without NEEDS_CSUM" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 1001, .gso_size = 100,
				     .csum_start = 34, .csum_offset = 16 }, 1000, "hdr_len beyond the frame" },
		{ F_CSUM | F_TSO4, { .flags = 1, .gso_type = VIRTIO_NET_HDR_GSO_TCPV4, .hdr_len = 20, .gso_size = 100,
				     .csum_start = 34, .csum_offset = 16 }, 1000, "hdr_len short of the checksum field" },
		{ F_CSUM, { .flags = 1, .csum_start = 990, .csum_offset = 16 }, 1000, "csum_start + csum_offset past the frame" },
		{ F_CSUM, { .flags = 1, .csum_start = 0xffff, .csum_offset = 0xffff }, 1000, "csum_start + csum_offset overflowing 16 bits" },
		{ F_CSUM, { .flags = VIRTIO_NET_HDR_F_DATA_VALID }, 1000, "flags DATA_VALID (receive-only)" },
		{ F_CSUM, { .flags = 0x80 }, 1000, "an unknown flag" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = (struct tx_case){ .features = bad[i].features, .h = bad[i].h, .frame_len = bad[i].len };
		r = tx_one(true, &c, out, sizeof(out));
		CHECK(r < 0 && tap()->frames == 0 && tap()->hdr_refused == 1 && tap()->errors == 1 &&
		      !net->mmio.needs_reset && tvr.used->idx == 1,
		      "refused, frame dropped and counted, ring intact: %s", bad[i].what);
	}
	CHECK(strstr(tap()->first_error, "virtio-net header") != NULL, "the reason is kept: %s", tap()->first_error);
}

int main(void)
{
	if (gmem_map(&ram, MEM_SIZE) < 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, backend) < 0) {
		printf("FAIL cannot map fake guest RAM or make a socket pair\n");
		return 1;
	}
	fcntl(backend[0], F_SETFL, O_NONBLOCK);
	net = calloc(1, sizeof(*net));
	if (!net)
		return 1;
	host = irq_line_log_host(&ram, &lines);
	test_deliver();
	test_refused_buffers();
	test_starved();
	test_interrupt_suppression();
	test_from_tap();
	test_hostile();
	test_tap_split_header();
	test_oversize();
	test_tap_header();
	close(backend[0]);
	close(backend[1]);
	pthread_mutex_destroy(&net->mmio.lock);
	free(net);
	gmem_unmap(&ram);
	return check_summary();
}
