/*
 * test_net_rx.c -- the host's receive path (devices/net_rx.c) without KVM:
 * frames into guest-posted buffers, lguest's receive suppression, and what
 * a buggy or hostile guest's receive ring gets.
 *
 * The guest is played by hand as in test_net_tx.c: buffers in a fake guest
 * RAM, published on the receive ring.  The backend is a datagram socket
 * pair standing in for the tap (one message = one frame, readv semantics
 * like a tap's), so net_rx_from_tap runs its real read path, including the
 * "nothing to read" case that must hand the popped buffer back.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "net.h"
#include "vm.h"

#define MEM_SIZE (1u << 20)
#define RING_GPA 0x1000u
#define BUF_GPA  0x10000u        /* 4 KiB per descriptor slot */
#define NUM      8u
#define HDR      12u

static struct vm vm;
static struct net *net;
static struct vq *rx;
static struct vring vr;
static int backend[2];           /* [0] is the "tap" the device reads */

static uint8_t *buf_of(uint16_t d)
{
	return vm.mem.host + BUF_GPA + d * 4096u;
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

static uint64_t irqs(void)
{
	uint64_t n = 0;

	return read(net->mmio.irqfd, &n, 8) == 8 ? n : 0;
}

static bool no_notify(void)
{
	return vr.used->flags & VRING_USED_F_NO_NOTIFY;
}

static void setup(void)
{
	struct net_config cfg = { .model = NET_MODEL_THREADED, .timeout_us = 500, .backend = NET_BACKEND_TAP };

	if (net->mmio.irqfd >= 0)
		close(net->mmio.irqfd);
	memset(vm.mem.host, 0, MEM_SIZE);
	net_init(net, &vm, 1, &cfg);
	net->mmio.irqfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	net->tap.fd = backend[0];
	vring_init(&vr, NUM, vm.mem.host + RING_GPA, 4096);
	rx = &net->mmio.vqs[0];
	rx->num = NUM;
	rx->desc_gpa = (uint64_t)((uint8_t *)vr.desc - vm.mem.host);
	rx->avail_gpa = (uint64_t)((uint8_t *)vr.avail - vm.mem.host);
	rx->used_gpa = (uint64_t)((uint8_t *)vr.used - vm.mem.host);
	if (net->mmio.irqfd < 0 || vq_enable(rx, &vm.mem) < 0) {
		printf("FAIL setup: eventfd or vq_enable: %s\n", rx->error);
		exit(1);
	}
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
	CHECK(irqs() == 0, "nothing new delivered: no second interrupt");
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
	CHECK(net_rx_from_tap(net, 64) == 1, "read one frame, then the tap was empty");
	memcpy(&h, buf_of(0), HDR);
	CHECK(vr.used->idx == 1 && vr.used->ring[0].len == sizeof(msg) && h.num_buffers == 1 &&
	      !memcmp(buf_of(0) + HDR, msg + HDR, 80), "straight into the guest's buffer, num_buffers set to 1");
	CHECK(rx->last_avail == 1, "the buffer popped for the empty read was handed back");
	CHECK(write(backend[1], msg, sizeof(msg)) == (ssize_t)sizeof(msg) && net_rx_from_tap(net, 64) == 1 &&
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
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net_rx_from_tap(net, 64) == 0,
	      "a broken device receives nothing more");

	setup();
	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA, .len = 2048, .flags = VRING_DESC_F_WRITE | VRING_DESC_F_NEXT,
					  .next = 0 };
	publish(0);
	CHECK(net_rx_deliver(net, frame, 60) == -1 && net->mmio.needs_reset, "a chain that loops: refused, reset");
}

int main(void)
{
	if (gmem_map(&vm.mem, MEM_SIZE) < 0 || socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, backend) < 0) {
		printf("FAIL cannot map fake guest RAM or make a socket pair\n");
		return 1;
	}
	fcntl(backend[0], F_SETFL, O_NONBLOCK);
	net = calloc(1, sizeof(*net));
	if (!net)
		return 1;
	net->mmio.irqfd = -1;
	test_deliver();
	test_refused_buffers();
	test_starved();
	test_interrupt_suppression();
	test_from_tap();
	test_hostile();
	close(net->mmio.irqfd);
	close(backend[0]);
	close(backend[1]);
	pthread_mutex_destroy(&net->mmio.lock);
	free(net);
	gmem_unmap(&vm.mem);
	return check_summary();
}
