/*
 * fuzz_devices.c -- a hostile guest and a hostile network against the real
 * register file, console and net device, without KVM.
 *
 * Why: everything a guest can do to the host's devices goes through three
 * doors -- 4-byte (or odd) MMIO accesses to a device's register window, the
 * contents of its own RAM (rings, descriptors, buffers), and the moment it
 * chooses to notify -- and the host adds its own events: timer expiries,
 * frames arriving on the tap, frames slirp hands over.  fuzz_virtqueue.c
 * covers the ring walker alone; this target drives the devices that sit on
 * it, in whatever order the input says.
 *
 * Data flow: the input's first byte configures the net device (model,
 * timer, adaptive timeout, offloads, backend: sink, tap or slirp, and a
 * small drain budget so continued drains are reached); the rest is a
 * program of operations (enum op below), each an opcode byte and its
 * arguments, read until the input ends.  Operations reach the devices only
 * through their real entry points: virtio_mmio_access for the bus,
 * net_tx_on_timeout / net_vcpu_poll for expiries and the lguest vCPU,
 * net_rx_from_backend for a readable tap, net_rx_deliver + net_rx_signal for
 * slirp's deliveries (exactly what net.c's slirp_deliver does).  The tap is
 * a non-blocking datagram socket pair, as in test_net_rx.c: what the device
 * writes arrives at tap_pair[1], frames the "network" sends leave from it.
 * With the slirp backend a real libslirp instance is opened (no poll
 * thread, no sockets unless the gate lets a SYN through to --peer
 * 10.0.2.2:1), so transmitted ARP requests come back as slirp's replies
 * through the device's deliver callback.  Some operations are shortcuts a
 * guest driver would take in several steps (the whole init sequence,
 * posting a valid frame or a receive buffer): they only write registers and
 * RAM, but let the fuzzer reach deep states without guessing them.  The
 * init sequence may ask for VIRTIO_F_RING_PACKED; on such a queue the
 * descriptor shortcuts write packed slots instead, so the same devices run
 * over the packed layout.
 *
 * After every step the invariants are checked and any violation aborts:
 * counters never go backwards; a broken queue stays broken and
 * NEEDS_RESET stays set until a reset, which clears everything; a broken
 * queue always comes with NEEDS_RESET, and every new error with a
 * configuration-change bit and the line high; a ready queue lies in RAM,
 * has a valid size, has the layout the features say and exists only after
 * FEATURES_OK; every popped chain was returned (packed: nothing in flight);
 * each line is high exactly while InterruptStatus is not 0, its host hears
 * only changes, and every interrupt counted is one rise; every transmitted
 * chain is accounted for by the backend; what the tap received matches
 * what the device says it wrote, with a zero header unless offloads were
 * negotiated.  ASan and the guard pages around guest RAM catch accesses
 * outside it; libFuzzer's -timeout catches hangs (every operation is
 * bounded work, and a program has at most MAX_OPS of them).
 *
 * Built two ways, as fuzz_virtqueue.c: with -Dfuzz=true and clang a
 * libFuzzer target (fuzz-devices); always a deterministic smoke test
 * (unit-fuzz-devices-smoke) that first replays the seed corpus, then runs
 * generated programs, and fails unless they reached the interesting states.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "corpus_replay.h"
#include "../unit/irq_line_log.h"
#include "console.h"
#include "lguest_kvm_abi.h"
#include "lkvm_frame.h"
#include "net.h"
#include "net_sink.h"
#include "net_slirp.h"
#include "net_tap.h"

#define RAM      (64u << 10)
#define MAX_OPS  2048u
#define HDR      sizeof(struct virtio_net_hdr_v1)
#define NET_TX   1u
#define SLIRP_PEER_IP 0x0a000202u   /* 10.0.2.2, the host */

enum op {
	OP_REG_WRITE,     /* register (table index), 32-bit value */
	OP_RAW_ACCESS,    /* any offset in the window, size 0-8, read or write */
	OP_RAM_WRITE,     /* any bytes anywhere in guest RAM */
	OP_DESC,          /* one descriptor of a queue's table */
	OP_PUBLISH,       /* a head onto a queue's avail ring */
	OP_NOTIFY,        /* QueueNotify (or, threaded net TX, the ioeventfd kick) */
	OP_INIT,          /* the whole driver init sequence with a queue layout */
	OP_TIMER,         /* the net TX timer expired */
	OP_TAP_FRAME,     /* a frame arrives on the tap and the tap is readable */
	OP_SLIRP_FRAME,   /* slirp hands the device a frame */
	OP_CONTINUE,      /* the thread that drains comes back for the rest */
	OP_CONSOLE_INPUT, /* bytes on the launcher's stdin */
	OP_INT_ACK,       /* read InterruptStatus, acknowledge it */
	OP_RESET,         /* Status = 0 */
	OP_RX_POST,       /* a device-writable buffer posted on a queue */
	OP_TX_FRAME,      /* a frame posted on net TX: the sink's pattern, ARP for slirp, or
			   * (ALT2) IPv4/TCP to the host behind a virtio-net header from the input */
	OP_COUNT = 16
};

/* Opcode byte: low 4 bits the operation, bit 4 the device (console, net),
 * bit 5 the queue, bits 6-7 operation-specific. */
#define OP_ALT2(b)  (((b) >> 7) & 1u)
#define OP_KIND(b)  ((b) & 15u)
#define OP_NET(b)   (((b) >> 4) & 1u)
#define OP_QUEUE(b) (((b) >> 5) & 1u)
#define OP_ALT(b)   (((b) >> 6) & 1u)

static const uint16_t regs[] = {
	VIRTIO_MMIO_MAGIC_VALUE, VIRTIO_MMIO_VERSION, VIRTIO_MMIO_DEVICE_ID, VIRTIO_MMIO_VENDOR_ID,
	VIRTIO_MMIO_DEVICE_FEATURES, VIRTIO_MMIO_DEVICE_FEATURES_SEL, VIRTIO_MMIO_DRIVER_FEATURES,
	VIRTIO_MMIO_DRIVER_FEATURES_SEL, VIRTIO_MMIO_QUEUE_SEL, VIRTIO_MMIO_QUEUE_NUM_MAX,
	VIRTIO_MMIO_QUEUE_NUM, VIRTIO_MMIO_QUEUE_READY, VIRTIO_MMIO_QUEUE_NOTIFY,
	VIRTIO_MMIO_INTERRUPT_STATUS, VIRTIO_MMIO_INTERRUPT_ACK, VIRTIO_MMIO_STATUS,
	VIRTIO_MMIO_QUEUE_DESC_LOW, VIRTIO_MMIO_QUEUE_DESC_HIGH, VIRTIO_MMIO_QUEUE_AVAIL_LOW,
	VIRTIO_MMIO_QUEUE_AVAIL_HIGH, VIRTIO_MMIO_QUEUE_USED_LOW, VIRTIO_MMIO_QUEUE_USED_HIGH,
	VIRTIO_MMIO_CONFIG_GENERATION, VIRTIO_MMIO_CONFIG, VIRTIO_MMIO_CONFIG + 4,
};
#define NREGS (sizeof(regs) / sizeof(regs[0]))

static struct guest_mem gm;
/* The devices' view of their host: RAM, and no KVM.  Their interrupt
 * lines are a log (irq_line_log.h), checked against InterruptStatus after
 * every step. */
static struct irq_line_log lines;
static struct device_host host;
static struct console *con;     /* large (chain scratch): heap */
static struct net *net;
static int tap_pair[2] = { -1, -1 };  /* [0] is the device's "tap", [1] the network */
static int console_out = -1;    /* /dev/null: output must never block */
static uint64_t tx_seq;          /* the next sequence number the sink expects from us */
static uint8_t scratch[HDR + LKVM_FRAME_MAX + 2];

/* What the smoke test demands the programs reached (counted over all runs). */
static struct {
	unsigned long queues_enabled, console_out_bytes, console_in_bytes, tx_chains, sink_good, tap_frames,
		slirp_replies, slirp_refused, tap_hdr_refused, rx_frames, rx_dropped, broken_queues, violations, recovered, continuations,
		timer_work, programs, packed_queues, packed_tx_chains, held_with_work;
} reached;

/* ---- the input ---- */

struct reader {
	const uint8_t *d;
	size_t n, at;
};

static uint8_t take8(struct reader *r)
{
	return r->at < r->n ? r->d[r->at++] : 0;
}

static uint16_t take16(struct reader *r)
{
	uint16_t lo = take8(r);

	return (uint16_t)(lo | take8(r) << 8);
}

static uint32_t take32(struct reader *r)
{
	uint32_t lo = take16(r);

	return lo | (uint32_t)take16(r) << 16;
}

/* Up to `want` bytes of the input, fewer if it ends; *got says how many. */
static const uint8_t *take_bytes(struct reader *r, size_t want, size_t *got)
{
	const uint8_t *p = r->d + r->at;

	*got = want < r->n - r->at ? want : r->n - r->at;
	r->at += *got;
	return p;
}

/* ---- the invariants ---- */

#define CHECK(cond) do { if (!(cond)) failed(#cond, __LINE__); } while (0)

static void failed(const char *what, int line)
{
	fprintf(stderr, "fuzz_devices.c:%d: invariant violated: %s\n", line, what);
	abort();
}

struct dev_snap {
	uint64_t errors, violations, interrupts;
	bool needs_reset, broken[VIRTIO_MMIO_MAX_QUEUES], ready[VIRTIO_MMIO_MAX_QUEUES];
	uint32_t status;
	uint64_t driver_features;
	uint64_t queue_regs[VIRTIO_MMIO_MAX_QUEUES][4];   /* num, desc, driver, device */
};

/* The backend's state, for the backend this program chose; for the other
 * two a zeroed stand-in, so the checks below read all three alike (the
 * device keeps one backend's state, known to it only as `void *be`). */
static struct net_sink *sink_be(void)
{
	static struct net_sink none;

	return net->cfg.backend == NET_BACKEND_SINK ? net->be : &none;
}

static struct net_tap *tap_be(void)
{
	static struct net_tap none;

	return net->cfg.backend == NET_BACKEND_TAP ? net->be : &none;
}

static struct net_slirp *slirp_be(void)
{
	static struct net_slirp none;

	return net->cfg.backend == NET_BACKEND_USER ? net->be : &none;
}

/* The net device's counters: every one of them only ever grows. */
#define TX_WORDS (offsetof(struct net_tx_stats, t_first) / sizeof(uint64_t))
#define RX_WORDS (sizeof(struct net_rx_stats) / sizeof(uint64_t))
#define SLIRP_WORDS 7u   /* frames_from_guest .. connections_refused */
struct net_snap {
	uint64_t tx[TX_WORDS], rx[RX_WORDS], slirp[SLIRP_WORDS];
	uint64_t sink[4], tap[4], console[2];
};

struct snap {
	struct dev_snap dev[2];
	struct net_snap net;
};

static struct virtio_mmio_dev *dev_of(unsigned i)
{
	return i ? &net->mmio : &con->mmio;
}

static void snap_dev(const struct virtio_mmio_dev *d, struct dev_snap *s)
{
	s->errors = d->errors;
	s->violations = d->violations;
	s->interrupts = d->interrupts;
	s->needs_reset = d->needs_reset;
	s->status = __atomic_load_n(&d->status, __ATOMIC_SEQ_CST);
	s->driver_features = d->driver_features;
	for (unsigned q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++) {
		const struct vq *vq = &d->vqs[q];

		s->broken[q] = vq->broken, s->ready[q] = vq->ready;
		s->queue_regs[q][0] = vq->num, s->queue_regs[q][1] = vq->desc_gpa;
		s->queue_regs[q][2] = vq->avail_gpa, s->queue_regs[q][3] = vq->used_gpa;
	}
}

/* Has the device taken anything off this ready queue since it was enabled
 * (which zeroes the positions)? */
static bool consumed_since_enable(const struct vq *vq)
{
	if (vq->packed)
		return vq->pk.next_avail || !vq->pk.avail_wrap || vq->pk.next_used || !vq->pk.used_wrap;
	return vq->last_avail || vq->used_shadow;
}

/*
 * What the device may do in each device status (virtio 1.2):
 *   before DRIVER_OK   consume no buffer and send no used-buffer
 *                      notification (2.1.2); DRIVER_OK is only ever
 *                      cleared by a reset, so "not yet" means "never since
 *                      the reset": every ready queue is untouched and the
 *                      VRING bit was never set;
 *   from FEATURES_OK   the negotiated features stay as they are until a
 *                      reset (3.1.1 step 5);
 *   from DRIVER_OK     no queue is set up or changed any more (3.1.1: queue
 *                      setup is step 7, before DRIVER_OK); one may only be
 *                      stopped (QueueReady = 0, 4.2.2.2);
 *   NEEDS_RESET        stays until a reset (checked in check_dev).
 */
static void check_status_rules(const struct virtio_mmio_dev *d, const struct dev_snap *before, bool was_reset,
			       uint32_t status)
{
	if (!(status & VIRTIO_CONFIG_S_DRIVER_OK)) {
		CHECK(!(d->interrupt_status & VIRTIO_MMIO_INT_VRING));
		for (unsigned q = 0; q < d->ops->num_queues; q++) {
			const struct vq *vq = &d->vqs[q];

			if (!vq->ready)
				continue;
			CHECK(!consumed_since_enable(vq));
			/* The state worth reaching: buffers published on a held queue. */
			if (!vq->packed && !vq->broken && __atomic_load_n(&vq->avail->idx, __ATOMIC_RELAXED))
				reached.held_with_work++;
		}
	}
	if (was_reset)
		return;
	if (before->status & VIRTIO_CONFIG_S_FEATURES_OK)
		CHECK(d->driver_features == before->driver_features);
	if (before->status & VIRTIO_CONFIG_S_DRIVER_OK) {
		for (unsigned q = 0; q < d->ops->num_queues; q++) {
			const struct vq *vq = &d->vqs[q];

			CHECK(!vq->ready || before->ready[q]);
			CHECK(vq->num == before->queue_regs[q][0] && vq->desc_gpa == before->queue_regs[q][1] &&
			      vq->avail_gpa == before->queue_regs[q][2] && vq->used_gpa == before->queue_regs[q][3]);
		}
	}
}

static void snap_take(struct snap *s)
{
	snap_dev(&con->mmio, &s->dev[0]);
	snap_dev(&net->mmio, &s->dev[1]);
	memcpy(s->net.tx, &net->st, sizeof(s->net.tx));
	memcpy(s->net.rx, &net->rx, sizeof(s->net.rx));
	memcpy(s->net.slirp, &slirp_be()->frames_from_guest, sizeof(s->net.slirp));
	memcpy(s->net.sink, &sink_be()->next_seq, sizeof(s->net.sink));
	memcpy(s->net.tap, &tap_be()->frames, sizeof(s->net.tap));
	s->net.console[0] = con->bytes_out, s->net.console[1] = con->bytes_in;
}

static void check_monotone(const uint64_t *before, const uint64_t *now, size_t words)
{
	for (size_t i = 0; i < words; i++)
		CHECK(now[i] >= before[i]);
}

static bool power_of_two(unsigned n)
{
	return n && !(n & (n - 1));
}

/* A ready packed queue (a driver that accepted RING_PACKED): its three
 * areas in RAM where the driver put them, positions inside the ring, and
 * every chain the device took given back (nothing in flight). */
static void check_packed(const struct vq *vq)
{
	CHECK(vq->num >= 1 && vq->num <= VQ_MAX_SIZE);
	CHECK(gmem_ptr(&gm, vq->desc_gpa, 16ull * vq->num) == (void *)vq->pk.desc);
	CHECK(gmem_ptr(&gm, vq->avail_gpa, 4) == (void *)vq->pk.driver);
	CHECK(gmem_ptr(&gm, vq->used_gpa, 4) == (void *)vq->pk.device);
	CHECK(vq->pk.next_avail < vq->num && vq->pk.next_used < vq->num);
	CHECK(vq->pk.in_flight == 0 && vq->pk.next_avail == vq->pk.next_used &&
	      vq->pk.avail_wrap == vq->pk.used_wrap);
}

static void check_dev(unsigned which, const struct dev_snap *before, bool was_reset)
{
	struct virtio_mmio_dev *d = dev_of(which);
	uint32_t status = __atomic_load_n(&d->status, __ATOMIC_SEQ_CST);

	CHECK(d->errors >= before->errors && d->violations >= before->violations);
	CHECK(d->violations <= d->errors);
	CHECK(d->interrupts >= before->interrupts);
	CHECK(d->needs_reset == !!(status & VIRTIO_CONFIG_S_NEEDS_RESET));
	CHECK(!(d->driver_features & ~d->host_features));
	/* The line is InterruptStatus != 0 (virtio 1.2, 4.2.3.4), and the host
	 * was told of changes only. */
	CHECK(lines.level[d->gsi] == (d->interrupt_status != 0) && !lines.repeats && !lines.bad_gsi);
	if (d->errors > before->errors)
		CHECK((d->interrupt_status & VIRTIO_MMIO_INT_CONFIG) && lines.level[d->gsi]);
	check_status_rules(d, before, was_reset, status);
	if (was_reset) {
		CHECK(status == 0 && !d->needs_reset && !d->driver_features && !d->interrupt_status);
	} else {
		CHECK(!before->needs_reset || d->needs_reset);
	}
	for (unsigned q = 0; q < d->ops->num_queues; q++) {
		const struct vq *vq = &d->vqs[q];

		if (was_reset)
			CHECK(!vq->ready && !vq->broken);
		else if (before->broken[q])
			CHECK(vq->broken);
		if (vq->broken)
			CHECK(d->needs_reset);
		if (vq->broken && !before->broken[q])
			reached.broken_queues++;
		if (!vq->ready)
			continue;
		if (!before->ready[q])
			reached.queues_enabled++, reached.packed_queues += vq->packed;
		CHECK(status & VIRTIO_CONFIG_S_FEATURES_OK);
		CHECK(vq->packed == virtio_mmio_has_feature(d, VIRTIO_F_RING_PACKED));
		if (vq->packed) {
			check_packed(vq);
			continue;
		}
		CHECK(power_of_two(vq->num) && vq->num <= VQ_MAX_SIZE);
		CHECK(gmem_ptr(&gm, vq->desc_gpa, 16ull * vq->num) == (void *)vq->desc);
		CHECK(gmem_ptr(&gm, vq->avail_gpa, 6ull + 2 * vq->num) == (void *)vq->avail);
		CHECK(gmem_ptr(&gm, vq->used_gpa, 6ull + 8 * vq->num) == (void *)vq->used);
		/* Every chain the device took went back on the used ring. */
		CHECK(vq->last_avail == vq->used_shadow);
	}
}

/* Frames the device wrote to the tap, read at the network's end. */
static uint64_t drain_tap(bool check_header)
{
	uint64_t frames = 0;
	ssize_t n;

	if (tap_pair[1] < 0)
		return 0;
	while ((n = recv(tap_pair[1], scratch, sizeof(scratch), MSG_DONTWAIT)) >= 0) {
		static const uint8_t zero[HDR];

		struct virtio_net_hdr_v1 h;
		uint64_t negotiated = net->mmio.driver_features;

		CHECK((size_t)n >= HDR);
		memcpy(&h, scratch, HDR);
		/* tun acts on any header it is given: only negotiated offloads,
		 * and only ones that describe this frame, may reach it. */
		if (check_header && !(negotiated & (1ull << VIRTIO_NET_F_CSUM)))
			CHECK(!memcmp(scratch, zero, HDR));
		if (check_header) {
			CHECK(!(h.flags & ~VIRTIO_NET_HDR_F_NEEDS_CSUM) && !h.num_buffers);
			if (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM)
				CHECK((uint32_t)h.csum_start + h.csum_offset + 2 <= (size_t)n - HDR);
			if (h.gso_type != VIRTIO_NET_HDR_GSO_NONE)
				CHECK((negotiated & (1ull << VIRTIO_NET_F_HOST_TSO4)) && (h.flags & VIRTIO_NET_HDR_F_NEEDS_CSUM) &&
				      h.gso_size && h.hdr_len <= (size_t)n - HDR);
		}
		frames++;
	}
	return frames;
}

static void check_all(const struct snap *before, int reset_dev)
{
	uint64_t chains = net->st.buffers_by_notify + net->st.buffers_by_timer;
	/* A step that wrote nothing to the tap is not worth a system call;
	 * the end of the program checks that nothing else arrived. */
	uint64_t tap_got = tap_be()->frames != before->net.tap[0] ? drain_tap(true) : 0;

	check_dev(0, &before->dev[0], reset_dev == 0);
	check_dev(1, &before->dev[1], reset_dev == 1);
	check_monotone(before->net.tx, (const uint64_t *)&net->st, TX_WORDS);
	check_monotone(before->net.rx, (const uint64_t *)&net->rx, RX_WORDS);
	check_monotone(before->net.slirp, &slirp_be()->frames_from_guest, SLIRP_WORDS);
	check_monotone(before->net.sink, &sink_be()->next_seq, 4);
	check_monotone(before->net.tap, &tap_be()->frames, 4);
	CHECK(con->bytes_out >= before->net.console[0] && con->bytes_in >= before->net.console[1]);
	/* Every chain taken off the TX ring went to exactly one backend call. */
	CHECK(net->st.descriptors >= chains && net->st.buffers_by_continuation <= chains);
	switch (net->cfg.backend) {
	case NET_BACKEND_SINK: CHECK(sink_be()->frames + sink_be()->bad_frames == chains); break;
	case NET_BACKEND_TAP: CHECK(tap_be()->frames + tap_be()->errors == chains); break;
	case NET_BACKEND_USER: CHECK(slirp_be()->frames_from_guest + slirp_be()->errors >= chains); break;
	}
	CHECK(tap_got == tap_be()->frames - before->net.tap[0]);
	CHECK(con->pending_off <= con->pending_len && con->pending_len <= sizeof(con->pending));
}

/* ---- one step, and the checks around it ---- */

static void mmio(unsigned which, uint64_t off, uint8_t *data, uint32_t len, bool is_write)
{
	struct virtio_mmio_dev *d = dev_of(which);
	uint32_t value = 0;
	struct snap before;
	bool reset;

	if (len == 4)
		memcpy(&value, data, 4);
	reset = is_write && len == 4 && off == VIRTIO_MMIO_STATUS && value == 0;
	snap_take(&before);
	virtio_mmio_access(d, off, data, len, is_write);
	check_all(&before, reset ? (int)which : -1);
	if (!is_write && len == 4 && off == VIRTIO_MMIO_MAGIC_VALUE)
		CHECK(!memcmp(data, "virt", 4));
	if (!is_write && len == 4 && off == VIRTIO_MMIO_STATUS) {
		memcpy(&value, data, 4);
		CHECK(value == d->status);
	}
	if (reset && (before.dev[which].needs_reset))
		reached.recovered++;
}

static void wr(unsigned which, uint64_t off, uint32_t value)
{
	mmio(which, off, (uint8_t *)&value, 4, true);
}

static uint32_t rd(unsigned which, uint64_t off)
{
	uint32_t value = 0;

	mmio(which, off, (uint8_t *)&value, 4, false);
	return value;
}

/* The queue's rings as the guest registered them, if they fit in RAM
 * (packed: any size, a 4-byte driver area). */
static struct vq *guest_view(unsigned which, unsigned q)
{
	struct vq *vq = &dev_of(which)->vqs[q];
	bool size_ok = vq->packed ? vq->num >= 1 : power_of_two(vq->num);

	if (!size_ok || vq->num > VQ_MAX_SIZE || !gmem_ptr(&gm, vq->desc_gpa, 16ull * vq->num) ||
	    !gmem_ptr(&gm, vq->avail_gpa, vq->packed ? 4 : 6ull + 2 * vq->num))
		return NULL;
	return vq;
}

/* A packed queue's slot i, made available at once: on the lap the device
 * will reach it on (this one from its next_avail on, the next one before
 * it), its ID the slot's own index.  A NEXT chain goes on in slot i + 1,
 * as a packed one must; `next` has no place in a packed descriptor. */
static void put_packed_desc(const struct vq *vq, unsigned i, uint64_t addr, uint32_t len, uint16_t flags)
{
	uint16_t slot = (uint16_t)(i % vq->num);
	bool wrap = slot >= vq->pk.next_avail ? vq->pk.avail_wrap : !vq->pk.avail_wrap;
	struct vring_packed_desc d = {
		.addr = addr, .len = len, .id = slot,
		.flags = (uint16_t)(flags | (wrap ? 1u << VRING_PACKED_DESC_F_AVAIL : 1u << VRING_PACKED_DESC_F_USED)),
	};

	memcpy(gm.host + vq->desc_gpa + 16ull * slot, &d, sizeof(d));
}

static void put_desc(const struct vq *vq, unsigned i, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	struct vring_desc d = { .addr = addr, .len = len, .flags = flags, .next = next };

	if (vq->packed) {
		put_packed_desc(vq, i, addr, len, flags);
		return;
	}
	memcpy(gm.host + vq->desc_gpa + 16ull * (i % vq->num), &d, sizeof(d));
}

static void publish(const struct vq *vq, uint16_t head)
{
	uint8_t *avail = gm.host + vq->avail_gpa;
	uint16_t idx;

	if (vq->packed)
		return;   /* a packed slot is published by its own flags */
	memcpy(&idx, avail + 2, 2);
	memcpy(avail + 4 + 2 * (idx % vq->num), &head, 2);
	idx++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(avail + 2, &idx, 2);
}

/* Bytes into guest RAM at gpa, cut at its end. */
static void ram_write(uint32_t gpa, const void *src, size_t len)
{
	if (gpa >= RAM)
		return;
	memcpy(gm.host + gpa, src, len < RAM - gpa ? len : RAM - gpa);
}

/* Host-side events, with the checks around them. */
static void net_event(enum op what)
{
	struct snap before;
	bool lguest = net->cfg.model == NET_MODEL_LGUEST;

	snap_take(&before);
	if (lguest) {
		/* What the waker announces, taken up on the vCPU thread. */
		if (what == OP_TIMER)
			net->timer_pending = 1;
		else if (what == OP_TAP_FRAME)
			net->rx_pending = 1;
		net_vcpu_poll(net);
	} else {
		/* The device thread's round (net.c, net_tx_thread). */
		pthread_mutex_lock(&net->mmio.lock);
		if (what == OP_TIMER)
			net_tx_on_timeout(net);
		else if (what == OP_CONTINUE)
			net_tx_on_continue(net);
		else if (what == OP_NOTIFY)
			net->st.notifies++, net_tx_on_notify(net);
		else if (what == OP_TAP_FRAME)
			net_rx_from_backend(net, 64), net_rx_signal(net);
		pthread_mutex_unlock(&net->mmio.lock);
	}
	check_all(&before, -1);
}

/* A frame for the sink (header, Ethernet, sequence, pattern) or, for
 * slirp, an ARP request for the host's address; returns its length. */
static size_t make_tx_frame(uint8_t *f, unsigned payload)
{
	static const uint8_t guest_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	uint8_t *eth = f + HDR;

	memset(f, 0, HDR);
	if (net->cfg.backend == NET_BACKEND_USER) {
		static const uint8_t arp[] = { 0, 1, 8, 0, 6, 4, 0, 1 };
		uint8_t *a = eth + 14;

		memset(eth, 0xff, 6);
		memcpy(eth + 6, guest_mac, 6);
		eth[12] = 0x08, eth[13] = 0x06;
		memcpy(a, arp, sizeof(arp));
		memcpy(a + 8, guest_mac, 6);
		memcpy(a + 14, (const uint8_t[]){ 10, 0, 2, 15 }, 4);
		memset(a + 18, 0, 6);
		memcpy(a + 24, (const uint8_t[]){ 10, 0, 2, 2 }, 4);
		return HDR + 14 + 28;
	}
	memset(eth, 0xff, 6);
	memcpy(eth + 6, guest_mac, 6);
	eth[12] = LKVM_ETHERTYPE >> 8, eth[13] = LKVM_ETHERTYPE & 0xff;
	memcpy(eth + LKVM_ETH_HLEN, &tx_seq, 8);
	for (unsigned w = 0; w < (payload + 7) / 8; w++) {
		uint64_t p = lkvm_pattern(tx_seq, w);

		memcpy(eth + LKVM_FRAME_HDR + 8 * w, &p, 8);
	}
	tx_seq++;
	return HDR + LKVM_FRAME_HDR + payload;
}

/* An IPv4/TCP segment from the guest to 10.0.2.2 (slirp's peer when the
 * gate is open) behind a virtio-net header whose offload fields, port,
 * TCP flags and fragment field come from the input: what slirp's gate and
 * the tap's header check judge.  Returns its length. */
static size_t make_tcp_frame(uint8_t *f, unsigned payload, struct reader *r)
{
	static const uint8_t ip_template[20] = { 0x45, 0, 0, 0, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 2, 15, 10, 0, 2, 2 };
	uint8_t *eth = f + HDR, *ip = eth + 14, *tcp = ip + 20;
	uint16_t ip_len = (uint16_t)(20 + 20 + payload), frag, dport;
	uint8_t flags, proto;

	memset(f, 0, HDR + 14 + 40 + payload);
	/* flags, gso_type, hdr_len, gso_size, csum_start, csum_offset */
	f[0] = take8(r), f[1] = take8(r);
	for (unsigned i = 2; i < 10; i++)
		f[i] = take8(r);
	dport = take16(r), flags = take8(r), frag = take16(r), proto = take8(r);
	memset(eth, 0x52, 6);
	memcpy(eth + 6, (const uint8_t[]){ 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, 6);
	eth[12] = 0x08, eth[13] = 0x00;
	memcpy(ip, ip_template, sizeof(ip_template));
	ip[2] = (uint8_t)(ip_len >> 8), ip[3] = (uint8_t)ip_len;
	ip[6] = (uint8_t)(frag >> 8), ip[7] = (uint8_t)frag;
	if (proto & 0x80)
		ip[9] = proto & 0x7f;   /* mostly TCP; sometimes not */
	tcp[0] = 40000 >> 8, tcp[1] = 40000 & 0xff;
	tcp[2] = (uint8_t)(dport >> 8), tcp[3] = (uint8_t)dport;
	tcp[12] = 5 << 4, tcp[13] = flags;
	tcp[14] = 0xff, tcp[15] = 0xff;
	return HDR + 14 + 40 + payload;
}

/* The driver's init sequence (virtio 1.2, 3.1.1) with the input's
 * features and, per queue, a size exponent and where its rings start. */
static void driver_init(unsigned which, struct reader *r, bool before_driver_ok)
{
	uint32_t features = take32(r);
	uint32_t word0 = features & ~(1u << 31);

	wr(which, VIRTIO_MMIO_STATUS, 0);
	wr(which, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);
	wr(which, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	wr(which, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 0);
	wr(which, VIRTIO_MMIO_DRIVER_FEATURES, word0);
	wr(which, VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	/* VERSION_1, and RING_PACKED when the word's bit 31 (offered by no
	 * device) asks for it: the rings then go unrecognised by the split
	 * shortcuts below, which is itself a hostile driver. */
	wr(which, VIRTIO_MMIO_DRIVER_FEATURES, 1 | (features >> 31) << (VIRTIO_F_RING_PACKED - 32));
	wr(which, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	if (!(rd(which, VIRTIO_MMIO_STATUS) & VIRTIO_CONFIG_S_FEATURES_OK))
		return;   /* refused, as a driver would find on its re-read */
	for (unsigned q = 0; q < 2; q++) {
		uint32_t num = 1u << (take8(r) % 11);
		uint32_t desc = take16(r), avail = desc + 16 * num, used = (avail + 6 + 2 * num + 3) & ~3u;

		wr(which, VIRTIO_MMIO_QUEUE_SEL, q);
		wr(which, VIRTIO_MMIO_QUEUE_NUM, num);
		wr(which, VIRTIO_MMIO_QUEUE_DESC_LOW, desc);
		wr(which, VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
		wr(which, VIRTIO_MMIO_QUEUE_AVAIL_LOW, avail);
		wr(which, VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
		wr(which, VIRTIO_MMIO_QUEUE_USED_LOW, used);
		wr(which, VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
		wr(which, VIRTIO_MMIO_QUEUE_READY, 1);
	}
	if (before_driver_ok)
		return;
	wr(which, VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
	   VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
}

static void run_op(struct reader *r)
{
	uint8_t b = take8(r);
	unsigned which = OP_NET(b), q = OP_QUEUE(b);
	struct vq *vq;
	size_t got;
	const uint8_t *p;

	switch ((enum op)OP_KIND(b)) {
	case OP_REG_WRITE: {
		uint8_t reg = take8(r);
		uint32_t value = take32(r);

		if (OP_ALT(b))
			rd(which, regs[reg % NREGS]);
		else
			wr(which, regs[reg % NREGS], value);
		break;
	}
	case OP_RAW_ACCESS: {
		uint16_t off = take16(r) % LKVM_MMIO_SIZE;
		uint8_t data[8] = { 0 };
		uint32_t len = take8(r) % 9;

		p = take_bytes(r, len, &got);
		memcpy(data, p, got);
		mmio(which, off, data, len, OP_ALT(b));
		break;
	}
	case OP_RAM_WRITE: {
		uint16_t gpa = take16(r);

		p = take_bytes(r, take8(r), &got);
		ram_write(gpa, p, got);
		break;
	}
	case OP_DESC: {
		uint8_t i = take8(r);
		uint16_t addr = take16(r), len = take16(r);
		uint8_t flags = take8(r), next = take8(r);

		if ((vq = guest_view(which, q)))
			put_desc(vq, i, addr, len, flags & 7, next);
		break;
	}
	case OP_PUBLISH: {
		uint8_t head = take8(r);

		if ((vq = guest_view(which, q)))
			publish(vq, head);
		break;
	}
	case OP_NOTIFY: {
		uint32_t value = OP_ALT(b) ? take8(r) : q;

		/* Threaded net: the ioeventfd matches a write of NET_TX and the
		 * device thread drains; the MMIO exit never happens. */
		if (which && value == NET_TX && OP_ALT(b) && net->cfg.model == NET_MODEL_THREADED)
			net_event(OP_NOTIFY);
		else
			wr(which, VIRTIO_MMIO_QUEUE_NOTIFY, value);
		break;
	}
	case OP_INIT:   /* ALT: stop before DRIVER_OK, as a driver that populates its queues first */
		driver_init(which, r, OP_ALT(b));
		break;
	case OP_TIMER:
	case OP_CONTINUE:
		net_event((enum op)OP_KIND(b));
		break;
	case OP_TAP_FRAME: {
		p = take_bytes(r, take16(r) % 2048u, &got);
		/* Only the tap backend reads the tap; elsewhere the frame just waits. */
		if (net->cfg.backend != NET_BACKEND_TAP)
			break;
		if (got)
			(void)!send(tap_pair[1], p, got, MSG_DONTWAIT);
		net_event(OP_TAP_FRAME);
		break;
	}
	case OP_SLIRP_FRAME: {
		struct snap before;

		p = take_bytes(r, take16(r) % 2048u, &got);
		snap_take(&before);
		pthread_mutex_lock(&net->mmio.lock);
		net_rx_deliver(net, p, got);
		net_rx_signal(net);
		pthread_mutex_unlock(&net->mmio.lock);
		check_all(&before, -1);
		break;
	}
	case OP_CONSOLE_INPUT:
		p = take_bytes(r, take8(r), &got);
		/* The input thread only reads more once the last bytes are delivered. */
		if (con->pending_off >= con->pending_len && got) {
			pthread_mutex_lock(&con->mmio.lock);
			memcpy(con->pending, p, got);
			con->pending_len = (uint32_t)got;
			con->pending_off = 0;
			pthread_mutex_unlock(&con->mmio.lock);
		}
		break;
	case OP_INT_ACK:
		wr(which, VIRTIO_MMIO_INTERRUPT_ACK, rd(which, VIRTIO_MMIO_INTERRUPT_STATUS));
		break;
	case OP_RESET:
		wr(which, VIRTIO_MMIO_STATUS, 0);
		break;
	case OP_RX_POST: {
		uint8_t i = take8(r);
		uint16_t addr = take16(r), len = take16(r);

		if ((vq = guest_view(which, q))) {
			put_desc(vq, i, addr, len, VRING_DESC_F_WRITE, 0);
			publish(vq, (uint16_t)(i % vq->num));
		}
		break;
	}
	case OP_TX_FRAME: {
		uint8_t i = take8(r);
		uint16_t addr = take16(r);
		unsigned payload = take16(r) % 1500u + 8;
		size_t len;

		if (!(vq = guest_view(1, NET_TX)))
			break;
		len = OP_ALT2(b) ? make_tcp_frame(scratch, payload, r) : make_tx_frame(scratch, payload);
		ram_write(addr, scratch, len);
		/* ALT splits the header off into its own descriptor, as Linux does. */
		if (OP_ALT(b) && vq->num > 1) {
			put_desc(vq, i, addr, HDR, VRING_DESC_F_NEXT, (uint16_t)((i + 1) % vq->num));
			put_desc(vq, i + 1u, addr + HDR, (uint32_t)(len - HDR), 0, 0);
		} else {
			put_desc(vq, i, addr, (uint32_t)len, 0, 0);
		}
		publish(vq, (uint16_t)(i % vq->num));
		break;
	}
	case OP_COUNT:
		break;
	}
}

/* ---- one input ---- */

static void setup_once(void)
{
	if (gm.host)
		return;
	con = calloc(1, sizeof(*con));
	net = calloc(1, sizeof(*net));
	console_out = open("/dev/null", O_WRONLY | O_CLOEXEC);
	host = irq_line_log_host(&gm, &lines);
	if (!con || !net || console_out < 0 || gmem_map(&gm, RAM) < 0 ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, tap_pair) < 0) {
		perror("fuzz_devices: setup");
		abort();
	}
}

/* Nothing may carry over from one input to the next. */
static void drain_host_side(void)
{
	while (recv(tap_pair[0], scratch, sizeof(scratch), MSG_DONTWAIT) >= 0)
		;
	drain_tap(false);
	irq_line_log_clear(&lines);   /* fresh devices: both lines low */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = { .d = data, .n = size };
	struct net_config cfg = { .timeout_us = 50, .mac = { 0x52, 0x54, 0, 0x12, 0x34, 0x57 } };
	uint8_t head;
	unsigned ops = 0;

	setup_once();
	if (size < 1)
		return 0;
	head = take8(&r);
	cfg.model = head & 1 ? NET_MODEL_LGUEST : NET_MODEL_THREADED;
	cfg.host_timer = head & 2 ? HOST_TIMER_ONESHOT : HOST_TIMER_REARM;
	cfg.adaptive_timeout = head & 4;
	cfg.offloads = head & 8;
	cfg.backend = (head >> 4) % 3 == 1 ? NET_BACKEND_TAP : (head >> 4) % 3 == 2 ? NET_BACKEND_USER : NET_BACKEND_SINK;
	if (head & 64)
		cfg.peer_ip = SLIRP_PEER_IP, cfg.peer_port = 1;   /* nothing listens on port 1 */

	drain_host_side();
	memset(gm.host, 0, RAM);
	tx_seq = 0;
	console_init(con, &host, 0, console_out);
	net_init(net, &host, 1, &cfg);
	if (head & 128)
		net->tx_weight_chains = 2;   /* budgets end drains early: continuations */
	if (cfg.backend == NET_BACKEND_TAP)
		tap_be()->fd = tap_pair[0];
	if (cfg.backend == NET_BACKEND_USER && net_open_backend(net) < 0) {
		fprintf(stderr, "fuzz_devices: cannot open libslirp\n");
		abort();
	}

	while (r.at < r.n && ops++ < MAX_OPS)
		run_op(&r);

	/* Every interrupt the devices counted was a rise of their lines, and
	 * the tap got nothing they did not count. */
	for (unsigned i = 0; i < 2; i++)
		CHECK(lines.rises[dev_of(i)->gsi] == dev_of(i)->interrupts);
	CHECK(drain_tap(true) == 0);
	reached.programs++;
	reached.console_out_bytes += con->bytes_out;
	reached.console_in_bytes += con->bytes_in;
	reached.tx_chains += net->st.buffers_by_notify + net->st.buffers_by_timer;
	if (net->mmio.vqs[NET_TX].packed)   /* the net device, unchanged, on a packed ring */
		reached.packed_tx_chains += net->st.buffers_by_notify + net->st.buffers_by_timer;
	reached.sink_good += sink_be()->frames;
	reached.tap_frames += tap_be()->frames;
	reached.slirp_replies += slirp_be()->frames_to_guest;
	reached.slirp_refused += slirp_be()->frames_refused;
	reached.tap_hdr_refused += tap_be()->hdr_refused;
	reached.rx_frames += net->rx.frames;
	reached.rx_dropped += net->rx.dropped_too_big + net->rx.dropped_no_buffer;
	reached.violations += con->mmio.violations + net->mmio.violations;
	reached.continuations += net->st.continuations;
	reached.timer_work += net->st.timer_drains_work;

	if (cfg.backend == NET_BACKEND_USER)
		net_slirp_close(slirp_be());
	pthread_mutex_destroy(&con->mmio.lock);
	pthread_mutex_destroy(&net->mmio.lock);
	return 0;
}

#ifndef LKVM_LIBFUZZER
/* ---- smoke test: generated programs, mostly those a driver would run ---- */

struct prog {
	uint8_t b[16384];
	size_t n;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static unsigned below(unsigned n)
{
	return (unsigned)(next_rand() % n);
}

static void put8(struct prog *p, unsigned v)
{
	if (p->n < sizeof(p->b))
		p->b[p->n++] = (uint8_t)v;
}

static void put16(struct prog *p, unsigned v)
{
	put8(p, v & 0xff), put8(p, v >> 8);
}

static void put32(struct prog *p, uint32_t v)
{
	put16(p, v & 0xffff), put16(p, v >> 16);
}

static void put_op(struct prog *p, enum op kind, unsigned net_dev, unsigned queue, unsigned alt)
{
	put8(p, kind | net_dev << 4 | queue << 5 | alt << 6);
}

/* Rings in the first 16 KiB (size 16: 4 KiB apart), buffers above. */
static void put_init(struct prog *p, unsigned net_dev, uint32_t features, unsigned before_driver_ok)
{
	put_op(p, OP_INIT, net_dev, 0, before_driver_ok);
	put32(p, features);
	for (unsigned q = 0; q < 2; q++) {
		put8(p, below(8) ? 4 : below(11));
		put16(p, 0x1000 * (2 * net_dev + q) + (below(16) ? 0 : below(0x10000)));
	}
}

static void gen_program(struct prog *p, bool plausible)
{
	/* Offered by net: MAC, EVENT_IDX, INDIRECT (+ CSUM, HOST_TSO4). */
	static const uint32_t net_features[] = { 0, 1u << 5, 1u << 29, 1u << 28, (1u << 29) | (1u << 28) | (1u << 5),
						  1u | 1u << 11, 1u << 6 /* not offered */,
						  1u << 31 | 1u << 29 | 1u << 28 /* RING_PACKED (driver_init) */ };
	unsigned steps = 20 + below(120);

	p->n = 0;
	put8(p, (unsigned)next_rand());
	static unsigned programs;
	/* One program in four starts a device's queues before DRIVER_OK, which
	 * some later step sets (2.1.2: nothing is consumed until then).  Chosen
	 * by count, not by next_rand(), so the random stream -- and what the
	 * other steps reach -- stays as it was. */
	programs++;
	put_init(p, 0, below(10) ? 0 : (uint32_t)next_rand(), programs % 4 == 1);
	put_init(p, 1, net_features[below(sizeof(net_features) / sizeof(net_features[0]))], programs % 4 == 3);
	for (unsigned s = 0; s < steps; s++) {
		unsigned k = plausible ? below(24) : below(40);

		if (s % 16 == 8) {   /* DRIVER_OK on one device (a violation if it is out of order) */
			put_op(p, OP_REG_WRITE, (s / 16) & 1, 0, 0);
			put8(p, 15);    /* regs[15]: Status */
			put32(p, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
				 VIRTIO_CONFIG_S_DRIVER_OK);
		}

		switch (k) {
		case 0: case 1: case 2: case 3: {
			bool tcp = below(4) == 0;

			put8(p, OP_TX_FRAME | 1u << 4 | 1u << 5 | below(2) << 6 | (unsigned)tcp << 7);
			put8(p, below(16)), put16(p, 0x8000 + below(8) * 0x800), put16(p, below(1200));
			if (tcp) {   /* a header that asks for a checksum (sometimes GSO), port 1 or not, SYN or not */
				put8(p, below(2)), put8(p, below(4) ? 0 : 1);
				put16(p, 54), put16(p, 100), put16(p, 34), put16(p, 16);
				put16(p, below(2) ? 1 : below(65536)), put8(p, below(2) ? 0x02 : 0x10);
				put16(p, below(8) ? 0x4000 : below(65536)), put8(p, below(8) ? 0 : below(256));
			}
			if (below(2)) {
				bool kick = below(2);

				put_op(p, OP_NOTIFY, 1, 1, kick);
				if (kick)
					put8(p, NET_TX);
			}
			break;
		}
		case 4: case 5:
			put_op(p, OP_RX_POST, 1, 0, 0);
			put8(p, below(16)), put16(p, 0xc000 + below(8) * 0x800), put16(p, below(8) ? 2048 : below(100));
			break;
		case 6:
			put_op(p, OP_TAP_FRAME, 1, 0, 0);
			{
				unsigned len = 12 + below(200);

				put16(p, len);
				for (unsigned i = 0; i < len; i++)
					put8(p, i < 12 ? 0 : (unsigned)next_rand());
			}
			break;
		case 7:
			put_op(p, OP_SLIRP_FRAME, 1, 0, 0);
			{
				unsigned len = below(300);

				put16(p, len);
				for (unsigned i = 0; i < len; i++)
					put8(p, (unsigned)next_rand());
			}
			break;
		case 8: case 9:
			put_op(p, below(2) ? OP_TIMER : OP_CONTINUE, 1, 0, 0);
			break;
		case 10: case 11:   /* a console write: one readable buffer */
			put_op(p, OP_DESC, 0, 1, 0);
			put8(p, s % 16), put16(p, 0x6000 + below(0x1000)), put16(p, below(300)), put8(p, 0), put8(p, 0);
			put_op(p, OP_PUBLISH, 0, 1, 0), put8(p, s % 16);
			put_op(p, OP_NOTIFY, 0, 1, 0);
			break;
		case 12:   /* console input into a posted buffer */
			put_op(p, OP_CONSOLE_INPUT, 0, 0, 0);
			put8(p, 1 + below(40));
			for (unsigned i = 0; i < 40; i++)
				put8(p, 'a' + below(26));
			put_op(p, OP_RX_POST, 0, 0, 0), put8(p, below(16)), put16(p, 0x7000 + below(0x800)), put16(p, 64);
			put_op(p, OP_NOTIFY, 0, 0, 0);
			break;
		case 13:
			put_op(p, OP_INT_ACK, below(2), 0, 0);
			break;
		case 14:   /* the guest scribbles on its own rings */
			put_op(p, OP_RAM_WRITE, 0, 0, 0);
			put16(p, below(0x4000)), put8(p, 4);
			put32(p, (uint32_t)next_rand());
			break;
		case 15:   /* a register out of order: a violation */
			put_op(p, OP_REG_WRITE, below(2), 0, 0);
			put8(p, below(NREGS)), put32(p, below(4) ? below(4) : (uint32_t)next_rand());
			break;
		case 16:   /* reset and start again */
			put_op(p, OP_RESET, 1, 0, 0);
			put_init(p, 1, net_features[below(5)], s & 1);
			break;
		case 17: case 18: case 19: case 20: case 21: case 22: case 23:
			put_op(p, OP_NOTIFY, 1, 1, 0);
			break;
		default:   /* anything at all */
			put8(p, (unsigned)next_rand());
			for (unsigned i = below(12); i; i--)
				put8(p, (unsigned)next_rand());
			break;
		}
	}
}


static void write_seed(const char *dir, const char *name, const struct prog *p)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(p->b, 1, p->n, f) != p->n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* Seeds: a plausible program for each backend and model. */
static void emit_seeds(const char *dir)
{
	static const uint8_t heads[] = { 0x00, 0x81, 0x13, 0x62, 0x20 };
	static const char *const names[] = { "sink-threaded", "sink-lguest-budget", "tap-oneshot-lguest",
					     "slirp-peer-oneshot", "slirp-threaded" };
	static struct prog p;

	for (unsigned i = 0; i < sizeof(heads); i++) {
		rng = 0x1234567ull + i;
		gen_program(&p, true);
		p.b[0] = heads[i];
		write_seed(dir, names[i], &p);
	}
}

int main(int argc, char **argv)
{
	unsigned long iterations = 3000;
	unsigned files = 0;
	static struct prog p;

	if (argc > 2 && !strcmp(argv[1], "--emit-seeds")) {
		emit_seeds(argv[2]);
		return 0;
	}
	if (argc > 1)
		files = corpus_replay("fuzz_devices", argv[1]);
	if (argc > 2)
		iterations = strtoul(argv[2], NULL, 10);
	for (unsigned long it = 0; it < iterations; it++) {
		gen_program(&p, it % 4 != 3);
		LLVMFuzzerTestOneInput(p.b, p.n);
	}
	printf("%u corpus files, %lu programs: %lu queues enabled, %lu console bytes out, %lu in, "
	       "%lu TX chains, %lu good sink frames, %lu tap frames (%lu headers refused), %lu slirp replies (%lu frames refused by the gate), %lu RX frames, "
	       "%lu RX drops, %lu queues broken, %lu violations, %lu recoveries by reset, "
	       "%lu continuations, %lu timer drains with work, %lu packed queues (%lu TX chains), "
	       "%lu steps with work held until DRIVER_OK\n",
	       files, reached.programs, reached.queues_enabled, reached.console_out_bytes, reached.console_in_bytes,
	       reached.tx_chains, reached.sink_good, reached.tap_frames, reached.tap_hdr_refused, reached.slirp_replies, reached.slirp_refused, reached.rx_frames,
	       reached.rx_dropped, reached.broken_queues, reached.violations, reached.recovered,
	       reached.continuations, reached.timer_work, reached.packed_queues, reached.packed_tx_chains,
	       reached.held_with_work);
	/* Worth something only if the programs got past the register file
	 * into every device path, and into its failures. */
	if (!reached.queues_enabled || !reached.console_out_bytes || !reached.console_in_bytes ||
	    !reached.sink_good || !reached.tap_frames || !reached.tap_hdr_refused || !reached.slirp_replies ||
	    !reached.slirp_refused || !reached.rx_frames ||
	    !reached.rx_dropped || !reached.broken_queues || !reached.violations || !reached.recovered ||
	    !reached.continuations || !reached.timer_work || !reached.packed_tx_chains || !reached.held_with_work) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
