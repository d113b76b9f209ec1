/*
 * test_net_tx.c -- the host's transmit suppression state machine
 * (net_tx_on_notify / net_tx_on_timeout in devices/net.c; the steps are in
 * docs/architecture.md, "The path of one notify") and the sink's frame
 * check, without KVM.
 *
 * The seed's table counts notifies and timeouts, so each transition must do
 * exactly what the design says: a notify drains and suppresses, a timer that
 * finds work stays suppressed, an idle timer re-enables notifies and looks
 * once more (the lost-wakeup window), the 2.6.27 one-shot variant always
 * unblocks, and the adaptive timeout moves +10 / -1 us.  The test plays the
 * guest by hand: it writes frames the sink accepts (virtio-net header,
 * Ethernet header with ethertype 0x88b5, sequence, pattern) into a fake
 * guest RAM and publishes them on the TX ring.  The interrupt line is a
 * log (irq_line_log.h), so nothing touches KVM.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_net.h>
#include <linux/virtio_ring.h>

#include "check.h"
#include "irq_line_log.h"
#include "lkvm_frame.h"
#include "net.h"
#include "net_sink.h"

#define MEM_SIZE  (1u << 20)
#define RING_GPA  0x1000u        /* desc + avail on this page, used on the next */
#define BUF_GPA   0x10000u       /* 4 KiB of buffer per descriptor slot */
#define TABLE_GPA 0x80000u       /* indirect tables, 64 bytes per slot */
#define NUM       16u
#define HDR       12u            /* sizeof(struct virtio_net_hdr_v1) */

enum layout { ONE_DESC, TWO_DESCS, INDIRECT };

/* Fake guest RAM, and the host a device sees: no VM, its line a log. */
static struct guest_mem ram;
static struct irq_line_log lines;
static struct device_host host;
static struct net *net;          /* large (chain scratch): heap */
static struct vq *tx;
static struct vring vr;          /* the guest's view of the TX ring */
static uint16_t next_desc;       /* the guest's descriptor allocator: round robin */

/* ---- the guest, by hand ---- */

static void write_frame(uint8_t *p, uint64_t seq, unsigned frame_len)
{
	unsigned payload = frame_len - LKVM_FRAME_HDR;

	memset(p, 0, HDR);                       /* virtio_net_hdr_v1: all zero */
	p += HDR;
	memset(p, 0xff, 6);                      /* dst: broadcast */
	memset(p + 6, 0x02, 6);                  /* src: locally administered */
	p[12] = LKVM_ETHERTYPE >> 8;             /* ethertype, big endian */
	p[13] = LKVM_ETHERTYPE & 0xff;
	for (unsigned b = 0; b < 8; b++)         /* sequence, little endian */
		p[LKVM_ETH_HLEN + b] = (uint8_t)(seq >> (8 * b));
	p += LKVM_FRAME_HDR;
	for (unsigned j = 0; 8 * j < payload; j++) {
		uint64_t w = lkvm_pattern(seq, j);
		unsigned n = payload - 8 * j < 8 ? payload - 8 * j : 8;

		memcpy(p + 8 * j, &w, n);            /* host is little endian too */
	}
}

static uint16_t alloc_desc(void)
{
	return next_desc++ % NUM;
}

/* Build one frame chain, publish it, return its head.  `buf` (if not NULL)
 * receives the host address of the frame's first byte (after the header). */
static uint16_t guest_send(uint64_t seq, unsigned frame_len, enum layout lay, uint8_t **frame_out)
{
	uint16_t head = alloc_desc();
	uint8_t *buf = ram.host + BUF_GPA + head * 4096u;

	write_frame(buf, seq, frame_len);
	if (frame_out)
		*frame_out = buf + HDR;
	if (lay == ONE_DESC) {
		vr.desc[head] = (struct vring_desc){ .addr = BUF_GPA + head * 4096u, .len = HDR + frame_len };
	} else if (lay == TWO_DESCS) {
		uint16_t d2 = alloc_desc();
		uint8_t *buf2 = ram.host + BUF_GPA + d2 * 4096u;

		memcpy(buf2, buf + HDR, frame_len);  /* frame in its own buffer */
		if (frame_out)
			*frame_out = buf2;
		vr.desc[head] = (struct vring_desc){ .addr = BUF_GPA + head * 4096u, .len = HDR,
						     .flags = VRING_DESC_F_NEXT, .next = d2 };
		vr.desc[d2] = (struct vring_desc){ .addr = BUF_GPA + d2 * 4096u, .len = frame_len };
	} else {
		struct vring_desc *t = (struct vring_desc *)(ram.host + TABLE_GPA + head * 64u);
		uint64_t gpa = BUF_GPA + head * 4096u;

		t[0] = (struct vring_desc){ .addr = gpa, .len = HDR, .flags = VRING_DESC_F_NEXT, .next = 1 };
		t[1] = (struct vring_desc){ .addr = gpa + HDR, .len = frame_len };
		vr.desc[head] = (struct vring_desc){ .addr = TABLE_GPA + head * 64u, .len = 32,
						     .flags = VRING_DESC_F_INDIRECT };
	}
	vr.avail->ring[vr.avail->idx % NUM] = head;
	__atomic_store_n(&vr.avail->idx, (uint16_t)(vr.avail->idx + 1), __ATOMIC_RELEASE);
	return head;
}

static uint64_t seq;             /* the guest's next sequence number */

static void send_frames(unsigned n, enum layout lay)
{
	for (unsigned i = 0; i < n; i++, seq++)
		guest_send(seq, 60 + (unsigned)(seq % 9) * 50, lay, NULL);  /* 60..460 bytes, tails vary */
}

/* The device's backend here is the sink (net_init's default): its state,
 * which the device itself knows only as `void *be`. */
static struct net_sink *sink(void)
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

/* A fresh device on a fresh ring; `cfg` adjusts the defaults. */
static void setup(enum host_timer timer, bool adaptive, bool indirect_ok)
{
	struct net_config cfg = {
		.model = NET_MODEL_THREADED, .host_timer = timer, .timeout_us = 500, .adaptive_timeout = adaptive,
		.mac = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 },
	};

	memset(ram.host, 0, MEM_SIZE);
	irq_line_log_clear(&lines);
	net_init(net, &host, 1, &cfg);
	vring_init(&vr, NUM, ram.host + RING_GPA, 4096);
	tx = &net->mmio.vqs[1];
	tx->num = NUM;
	tx->desc_gpa = (uint64_t)((uint8_t *)vr.desc - ram.host);
	tx->avail_gpa = (uint64_t)((uint8_t *)vr.avail - ram.host);
	tx->used_gpa = (uint64_t)((uint8_t *)vr.used - ram.host);
	tx->indirect_ok = indirect_ok;
	next_desc = 0;
	seq = 0;
	if (vq_enable(tx, &ram) < 0) {
		printf("FAIL setup: vq_enable: %s\n", tx->error);
		exit(1);
	}
}

/* ---- the state machine ---- */

static void test_notify(void)
{
	bool arm;

	setup(HOST_TIMER_REARM, false, false);
	send_frames(3, TWO_DESCS);
	arm = net_tx_on_notify(net);
	CHECK(arm, "notify with 3 buffers: returns true (arm the timer)");
	CHECK(vr.used->idx == 3 && tx->last_avail == 3, "notify drained all 3 (used idx %u)", vr.used->idx);
	CHECK(vr.used->ring[0].id == 0 && vr.used->ring[1].id == 2 && vr.used->ring[2].id == 4 &&
	      vr.used->ring[2].len == 0, "used ring returns heads 0, 2, 4 with len 0");
	CHECK(no_notify() && net->suppressed, "notify with work: NO_NOTIFY set, suppressed");
	CHECK(net->st.notify_wakeups == 1 && net->st.buffers_by_notify == 3 && net->st.notifies_empty == 0,
	      "counters: 1 wakeup, 3 buffers by notify, 0 empty");
	CHECK(net->st.descriptors == 6 && net->st.buffers_indirect == 0, "counters: 6 descriptors, 0 indirect");
	CHECK(sink()->frames == 3 && sink()->bad_frames == 0 && sink()->next_seq == 3,
	      "sink: 3 good frames, next seq 3 (bad %llu: %s)", (unsigned long long)sink()->bad_frames,
	      sink()->first_error);
	CHECK(net->st.interrupts == 1 && irqs() == 1, "one interrupt for the drain: the line rises");

	arm = net_tx_on_notify(net);
	CHECK(!arm, "notify with nothing: returns false");
	CHECK(net->st.notifies_empty == 1 && net->st.notify_wakeups == 2, "counters: notifies_empty 1, wakeups 2");
	CHECK(net->st.interrupts == 1 && irqs() == 0, "an empty drain raises no interrupt");
	CHECK(!net->mmio.needs_reset, "no device error");
}

static void test_timeout_rearm(void)
{
	bool arm;

	setup(HOST_TIMER_REARM, false, false);
	send_frames(2, ONE_DESC);
	net_tx_on_notify(net);                  /* suppressed, timer armed */
	irqs();

	/* timer with work: drain, stay suppressed, rearm */
	send_frames(4, ONE_DESC);
	CHECK(no_notify(), "guest sees NO_NOTIFY while adding (would not notify)");
	arm = net_tx_on_timeout(net);
	CHECK(arm, "timeout with 4 buffers: returns true (rearm)");
	CHECK(vr.used->idx == 6 && no_notify() && net->suppressed, "drained to used idx 6, still suppressed");
	CHECK(net->st.timeouts == 1 && net->st.timer_drains_work == 1 && net->st.buffers_by_timer == 4 &&
	      net->st.timer_drains_empty == 0, "counters: 1 timeout, 1 work drain, 4 buffers by timer");

	/* a timer that finds avail already advanced is a work drain, not an unblock */
	send_frames(1, TWO_DESCS);
	arm = net_tx_on_timeout(net);
	CHECK(arm && no_notify() && vr.used->idx == 7 && net->st.timer_drains_work == 2 && net->st.recheck_hits == 0,
	      "timeout with 1 already-published buffer: drained as work, still suppressed");

	/* timer with nothing: unblock */
	arm = net_tx_on_timeout(net);
	CHECK(!arm, "timeout with nothing: returns false (no rearm)");
	CHECK(!no_notify() && !net->suppressed, "idle timeout clears NO_NOTIFY");
	CHECK(net->st.timeouts == 3 && net->st.timer_drains_empty == 1 && net->st.recheck_hits == 0,
	      "counters: 3 timeouts, 1 empty drain, 0 recheck hits");
	CHECK(sink()->frames == 7 && sink()->bad_frames == 0, "sink: 7 good frames in order");

	/* the next guest kick sees the flag clear and notifies */
	send_frames(1, ONE_DESC);
	CHECK(!no_notify(), "guest sees NO_NOTIFY clear and would notify");
	CHECK(net_tx_on_notify(net) && no_notify() && vr.used->idx == 8, "that notify drains and suppresses again");
}

/* The lost-wakeup window, made deterministic: the used ring page is made
 * read-only, so the timer's "clear NO_NOTIFY" store faults; the SIGSEGV
 * handler plays a guest that adds a buffer at exactly that moment (it still
 * sees NO_NOTIFY, so it does not notify), then lets the store proceed.  The
 * host's re-check after the barrier must find and drain that buffer. */
static uint8_t *used_page;
static volatile sig_atomic_t trap_armed, trap_fired;

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (!trap_armed || (uint8_t *)si->si_addr < used_page || (uint8_t *)si->si_addr >= used_page + 4096) {
		signal(sig, SIG_DFL);            /* a real crash: fault again, die */
		return;
	}
	trap_armed = 0;
	trap_fired = 1;
	/* the guest: add a buffer, read the flag (still NO_NOTIFY) -> no notify */
	send_frames(1, ONE_DESC);
	mprotect(used_page, 4096, PROT_READ | PROT_WRITE);
}

static void test_recheck_race(void)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO }, old;
	bool arm;

	setup(HOST_TIMER_REARM, false, false);
	send_frames(2, ONE_DESC);
	net_tx_on_notify(net);                  /* suppressed */
	used_page = (uint8_t *)vr.used;
	CHECK(((uintptr_t)used_page & 4095) == 0 && (uint8_t *)vr.avail < used_page,
	      "the used ring sits alone at the start of a page");

	sigaction(SIGSEGV, &sa, &old);
	trap_armed = 1;
	mprotect(used_page, 4096, PROT_READ);
	arm = net_tx_on_timeout(net);           /* empty drain, then clear flag -> trap */
	mprotect(used_page, 4096, PROT_READ | PROT_WRITE);
	trap_armed = 0;
	sigaction(SIGSEGV, &old, NULL);

	CHECK(trap_fired, "the guest's add landed while the host cleared NO_NOTIFY");
	CHECK(arm, "re-check found the slipped-in buffer: returns true (rearm)");
	CHECK(net->st.recheck_hits == 1 && net->st.timer_drains_empty == 1, "counters: 1 recheck hit, 1 empty drain");
	CHECK(vr.used->idx == 3 && tx->last_avail == 3 && net->st.buffers_by_timer == 1,
	      "the slipped-in buffer was drained (used idx %u)", vr.used->idx);
	CHECK(no_notify() && net->suppressed, "and the guest is suppressed again");
	CHECK(sink()->frames == 3 && sink()->bad_frames == 0, "sink: 3 good frames");
}

static void test_oneshot(void)
{
	bool arm;

	setup(HOST_TIMER_ONESHOT, false, false);
	send_frames(2, ONE_DESC);
	CHECK(net_tx_on_notify(net) && no_notify(), "oneshot: notify drains and suppresses like rearm");
	send_frames(3, ONE_DESC);
	arm = net_tx_on_timeout(net);
	CHECK(!arm, "oneshot: timeout with work still returns false (never re-blocks)");
	CHECK(!no_notify() && !net->suppressed, "oneshot: timeout cleared NO_NOTIFY");
	CHECK(vr.used->idx == 5 && net->st.buffers_by_timer == 3 && net->st.timer_drains_work == 1,
	      "oneshot: timeout drained the 3 buffers");
	arm = net_tx_on_timeout(net);
	CHECK(!arm && !no_notify() && net->st.timer_drains_empty == 1 && net->st.timeouts == 2,
	      "oneshot: empty timeout: false, flag clear, counted empty");
	CHECK(sink()->frames == 5 && sink()->bad_frames == 0, "sink: 5 good frames");
}

static void test_adaptive(void)
{
	setup(HOST_TIMER_REARM, true, false);
	CHECK(net->timeout_us == 500, "adaptive timeout starts at 500 us");
	send_frames(5, ONE_DESC);
	net_tx_on_notify(net);
	CHECK(net->timeout_us == 500, "a notify drain does not adapt the timeout");

	send_frames(3, ONE_DESC);
	net_tx_on_timeout(net);                 /* 3 < last 0? no -> 500 - 1 */
	CHECK(net->timeout_us == 499, "timer drain of 3 after 0: -1 -> 499 (got %u)", net->timeout_us);
	send_frames(1, ONE_DESC);
	net_tx_on_timeout(net);                 /* 1 < 3 -> +10 */
	CHECK(net->timeout_us == 509, "timer drain of 1 after 3: +10 -> 509 (got %u)", net->timeout_us);
	send_frames(1, ONE_DESC);
	net_tx_on_timeout(net);                 /* 1 < 1? no -> -1 */
	CHECK(net->timeout_us == 508, "timer drain of 1 after 1: -1 -> 508 (got %u)", net->timeout_us);
	send_frames(4, ONE_DESC);
	net_tx_on_timeout(net);                 /* 4 < 1? no -> -1 */
	CHECK(net->timeout_us == 507, "timer drain of 4 after 1: -1 -> 507 (got %u)", net->timeout_us);
	net_tx_on_timeout(net);                 /* empty: 0 < 4 -> +10 */
	CHECK(net->timeout_us == 517, "empty timer after 4: +10 -> 517 (got %u)", net->timeout_us);
	CHECK(!no_notify(), "the empty timer also unblocked the guest");

	/* without the option the timeout never moves */
	setup(HOST_TIMER_REARM, false, false);
	send_frames(3, ONE_DESC);
	net_tx_on_notify(net);
	send_frames(1, ONE_DESC);
	net_tx_on_timeout(net);
	net_tx_on_timeout(net);
	CHECK(net->timeout_us == 500, "fixed timeout stays 500 (got %u)", net->timeout_us);
}

static void test_interrupt_suppression(void)
{
	setup(HOST_TIMER_REARM, false, true);
	vr.avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	send_frames(2, INDIRECT);
	CHECK(net_tx_on_notify(net) && vr.used->idx == 2, "indirect frames drain");
	CHECK(net->st.buffers_indirect == 2 && net->st.descriptors == 4 && sink()->frames == 2 &&
	      sink()->bad_frames == 0, "counters: 2 indirect buffers, 4 descriptors, 2 good frames");
	CHECK(net->st.interrupts == 0 && irqs() == 0, "VRING_AVAIL_F_NO_INTERRUPT: no interrupt");
	vr.avail->flags = 0;
	send_frames(1, TWO_DESCS);
	net_tx_on_timeout(net);
	CHECK(net->st.interrupts == 1 && irqs() == 1, "flag cleared: the timer drain interrupts");

	/* event idx: suppression via avail_event, the flag is left alone */
	setup(HOST_TIMER_REARM, false, false);
	tx->event_idx = true;
	send_frames(2, ONE_DESC);
	vring_used_event(&vr) = 0;              /* interrupt once the host passes used 0 */
	CHECK(net_tx_on_notify(net) && !no_notify() && vring_avail_event(&vr) == (uint16_t)(2 - 0x8000),
	      "event-idx notify: avail_event parked at last_avail - 0x8000, flags untouched");
	CHECK(net->st.interrupts == 1, "event-idx: used_event 0 crossed -> 1 interrupt");
	CHECK(!net_tx_on_timeout(net) && vring_avail_event(&vr) == 2, "event-idx idle timeout: avail_event = 2");
}

static void test_sink(void)
{
	uint8_t *frame;

	/* wrong sequence number: counted, reported, ring goes on */
	setup(HOST_TIMER_REARM, false, false);
	send_frames(2, ONE_DESC);               /* seq 0, 1 */
	guest_send(5, 100, ONE_DESC, NULL);     /* 2 was due */
	net_tx_on_notify(net);
	CHECK(sink()->frames == 2 && sink()->bad_frames == 1, "wrong sequence: 2 good, 1 bad (bad %llu)",
	      (unsigned long long)sink()->bad_frames);
	CHECK(strstr(sink()->first_error, "sequence 5 where 2 was due") != NULL, "first_error: \"%s\"",
	      sink()->first_error);
	CHECK(vr.used->idx == 3 && !net->mmio.needs_reset, "a bad frame is not a broken ring");
	/* the right one still goes through, then a payload byte flipped */
	guest_send(2, 100, ONE_DESC, NULL);
	guest_send(3, 100, ONE_DESC, &frame);
	frame[40] ^= 0x01;                      /* payload byte 40 - 22 = 18: word 2 */
	net_tx_on_notify(net);
	CHECK(sink()->frames == 3 && sink()->bad_frames == 2, "seq 2 good, corrupted seq 3 bad (%llu bad)",
	      (unsigned long long)sink()->bad_frames);
	CHECK(strstr(sink()->first_error, "sequence") != NULL, "first_error keeps the first reason");

	/* payload corruption as the first error, in a full word and in the cut tail */
	setup(HOST_TIMER_REARM, false, false);
	guest_send(0, 100, TWO_DESCS, &frame);
	frame[40] ^= 0x80;
	net_tx_on_notify(net);
	CHECK(sink()->bad_frames == 1 && strstr(sink()->first_error, "payload mismatch in frame 0 at byte 16"),
	      "corrupted payload byte 18 -> \"%s\"", sink()->first_error);
	setup(HOST_TIMER_REARM, false, false);
	guest_send(0, 100, ONE_DESC, &frame);   /* payload 78 = 9 words + 6 bytes */
	frame[99] ^= 0xff;                      /* the last byte: in the tail at 72 */
	net_tx_on_notify(net);
	CHECK(sink()->bad_frames == 1 && strstr(sink()->first_error, "payload mismatch in frame 0 at byte 72"),
	      "corrupted tail byte -> \"%s\"", sink()->first_error);
	setup(HOST_TIMER_REARM, false, false);
	guest_send(0, 100, ONE_DESC, &frame);
	frame[13] = 0x00;                       /* ethertype 0x8800 */
	net_tx_on_notify(net);
	CHECK(sink()->bad_frames == 1 && strstr(sink()->first_error, "ethertype 0x8800"),
	      "wrong ethertype -> \"%s\"", sink()->first_error);
	setup(HOST_TIMER_REARM, false, false);
	guest_send(0, LKVM_FRAME_HDR, ONE_DESC, NULL);   /* no payload at all */
	net_tx_on_notify(net);
	CHECK(sink()->bad_frames == 1 && strstr(sink()->first_error, "runt"), "runt frame -> \"%s\"",
	      sink()->first_error);
}

/* One frame as a direct chain cut at `cuts` (offsets from the start of the
 * virtio-net header, ascending; equal ones make empty buffers): wherever the
 * buffers end -- inside the header, the sequence number, a payload word --
 * the sink must give the verdict the whole frame gets. */
static void guest_send_cut(uint64_t s, unsigned frame_len, const unsigned *cuts, unsigned ncuts)
{
	uint16_t head = alloc_desc(), d = head;
	uint64_t gpa = 0xa0000;                  /* one contiguous frame, 384 KiB free here */
	unsigned from = 0;

	write_frame(ram.host + gpa, s, frame_len);
	for (unsigned i = 0; i <= ncuts; i++) {
		unsigned to = i < ncuts ? cuts[i] : HDR + frame_len;
		uint16_t next = i < ncuts ? alloc_desc() : 0;

		vr.desc[d] = (struct vring_desc){ .addr = gpa + from, .len = to - from,
						  .flags = i < ncuts ? VRING_DESC_F_NEXT : 0, .next = next };
		from = to;
		d = next;
	}
	vr.avail->ring[vr.avail->idx % NUM] = head;
	__atomic_store_n(&vr.avail->idx, (uint16_t)(vr.avail->idx + 1), __ATOMIC_RELEASE);
}

static void test_sink_in_place(void)
{
	const unsigned len = 100, total = HDR + 100;   /* payload 78: 9 words and 6 bytes */
	unsigned cases = 0, wrong = 0, first_a = 0, first_b = 0;
	uint8_t *frame;
	char expect[120], first_got[400] = "";

	/* every pair of cuts, empty buffers included: all good, in order */
	setup(HOST_TIMER_REARM, false, false);
	for (unsigned a = 0; a <= total; a++)
		for (unsigned b = a; b <= total; b += 3) {
			unsigned cuts[2] = { a, b };
			uint64_t good = sink()->frames;

			guest_send_cut(seq++, len, cuts, 2);
			net_tx_on_notify(net);
			cases++;
			if (sink()->frames != good + 1 && !wrong++) {
				first_a = a, first_b = b;
				snprintf(first_got, sizeof(first_got), "%s", sink()->first_error);
			}
		}
	CHECK(!wrong && sink()->bad_frames == 0 && sink()->payload_bytes == (uint64_t)cases * 78,
	      "%u frames, each cut twice anywhere (empty buffers too): all good, %llu payload bytes "
	      "(first wrong: cuts %u,%u \"%s\")", cases, (unsigned long long)sink()->payload_bytes, first_a,
	      first_b, first_got);

	/* one flipped bit at every byte, the frame cut in three around it: the
	 * same reason and offset as the whole frame's check gives */
	wrong = 0;
	for (unsigned k = 0; k < total; k++) {
		unsigned cuts[2] = { k / 2, k + 1 < total ? k + 1 : total }, word;

		setup(HOST_TIMER_REARM, false, false);
		guest_send_cut(0, len, cuts, 2);
		ram.host[0xa0000 + k] ^= 0x10;
		net_tx_on_notify(net);
		if (k < HDR + 12)               /* virtio-net header, MAC addresses: not checked */
			snprintf(expect, sizeof(expect), "ok");
		else if (k < HDR + 14)
			snprintf(expect, sizeof(expect), "ethertype 0x");
		else if (k < HDR + LKVM_FRAME_HDR)
			snprintf(expect, sizeof(expect), "where 0 was due");
		else {
			word = (k - HDR - LKVM_FRAME_HDR) / 8;
			snprintf(expect, sizeof(expect), "payload mismatch in frame 0 at byte %u", 8 * word);
		}
		if (!strcmp(expect, "ok") ? sink()->frames != 1 || sink()->bad_frames
					  : sink()->bad_frames != 1 || !strstr(sink()->first_error, expect) ||
					    (strstr(expect, "byte") && strcmp(strstr(sink()->first_error, "byte"),
									  strstr(expect, "byte")))) {
			if (!wrong++)
				snprintf(first_got, sizeof(first_got), "byte %u: want \"%s\", got \"%.200s\"", k, expect,
					 sink()->first_error);
		}
	}
	CHECK(!wrong, "a bit flipped at each of the %u bytes: the whole frame's verdict, where it was cut "
	      "(%u wrong; %s)", total, wrong, first_got);

	/* a bad payload still makes the next sequence number due */
	setup(HOST_TIMER_REARM, false, false);
	guest_send(0, 100, ONE_DESC, &frame);
	frame[60] ^= 1;
	guest_send(1, 100, TWO_DESCS, NULL);
	net_tx_on_notify(net);
	CHECK(sink()->frames == 1 && sink()->bad_frames == 1 && sink()->next_seq == 2,
	      "payload bad in frame 0: frame 1 is still the one due and good (next_seq %llu)",
	      (unsigned long long)sink()->next_seq);
}

static void test_hostile(void)
{
	char first[256];

	setup(HOST_TIMER_REARM, false, false);
	send_frames(1, ONE_DESC);
	vr.avail->ring[vr.avail->idx % NUM] = NUM;   /* head 16 in a ring of 16 */
	vr.avail->idx++;
	irqs();
	CHECK(net_tx_on_notify(net), "a good chain before the hostile one is still drained (returns true)");
	CHECK(vr.used->idx == 1 && sink()->frames == 1, "used idx 1, 1 good frame");
	CHECK(net->mmio.needs_reset && (net->mmio.status & VIRTIO_CONFIG_S_NEEDS_RESET) &&
	      (net->mmio.interrupt_status & VIRTIO_MMIO_INT_CONFIG), "device marked DEVICE_NEEDS_RESET + config irq");
	CHECK(strstr(net->mmio.error, "virtio-net: net transmit queue: head index 16 >= ring size 16") &&
	      strstr(net->mmio.error, "needs reset"), "error line: \"%s\"", net->mmio.error);
	strcpy(first, net->mmio.error);
	CHECK(!net_tx_on_timeout(net) && strcmp(first, net->mmio.error) == 0,
	      "later drains of the broken queue do nothing and keep the one error line");
	CHECK(!net_tx_on_notify(net) && vr.used->idx == 1, "a notify on a broken queue drains nothing");

	/* a loop through the device: ends, does not hang */
	setup(HOST_TIMER_REARM, false, false);
	vr.desc[0] = (struct vring_desc){ .addr = BUF_GPA, .len = 100, .flags = VRING_DESC_F_NEXT, .next = 1 };
	vr.desc[1] = (struct vring_desc){ .addr = BUF_GPA, .len = 100, .flags = VRING_DESC_F_NEXT, .next = 0 };
	vr.avail->ring[0] = 0;
	vr.avail->idx = 1;
	CHECK(!net_tx_on_notify(net) && net->mmio.needs_reset && strstr(net->mmio.error, "loops"),
	      "a looping chain: nothing drained, needs reset: \"%s\"", net->mmio.error);
	CHECK(sink()->frames == 0 && vr.used->idx == 0, "nothing reached the sink");
}

/* The guest resets the device (Status = 0) while the host has it suppressed
 * and the timer armed; the expiry then finds a queue without rings.  It must
 * do nothing -- not write through the reset queue's ring pointers. */
static void guest_reset(void)
{
	uint32_t zero = 0;

	virtio_mmio_access(&net->mmio, VIRTIO_MMIO_STATUS, (uint8_t *)&zero, 4, true);
}

static void test_reset_while_suppressed(void)
{
	setup(HOST_TIMER_REARM, false, false);
	send_frames(2, ONE_DESC);
	net_tx_on_notify(net);
	guest_reset();
	CHECK(!tx->ready && tx->used == NULL, "guest reset: the TX queue has no rings any more");
	CHECK(!net_tx_on_timeout(net), "rearm: a timer expiring after the reset returns false (no crash)");
	CHECK(!net_tx_on_notify(net), "a notify after the reset drains nothing");

	setup(HOST_TIMER_ONESHOT, false, false);
	send_frames(2, ONE_DESC);
	net_tx_on_notify(net);
	guest_reset();
	CHECK(!net_tx_on_timeout(net), "oneshot: a timer expiring after the reset returns false (no crash)");

}

/* The driver's side of bringing the TX queue back after a reset, through
 * the registers as the guest does it (no setup(): the device, its sink and
 * its counters stay what the run made them).  Like a driver, it starts
 * from a fresh, zeroed ring. */
static void reg_write(uint32_t off, uint32_t value)
{
	virtio_mmio_access(&net->mmio, off, (uint8_t *)&value, 4, true);
}

static void guest_enable_tx(void)
{
	memset(ram.host + RING_GPA, 0, 2 * 4096);
	vring_init(&vr, NUM, ram.host + RING_GPA, 4096);
	next_desc = 0;
	reg_write(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE);     /* one bit at a time (3.1.1) */
	reg_write(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	reg_write(VIRTIO_MMIO_DRIVER_FEATURES_SEL, 1);
	reg_write(VIRTIO_MMIO_DRIVER_FEATURES, 1);     /* VIRTIO_F_VERSION_1 (bit 32) */
	reg_write(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		  VIRTIO_CONFIG_S_FEATURES_OK);
	reg_write(VIRTIO_MMIO_QUEUE_SEL, 1);
	reg_write(VIRTIO_MMIO_QUEUE_NUM, NUM);
	reg_write(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)((uint8_t *)vr.desc - ram.host));
	reg_write(VIRTIO_MMIO_QUEUE_DESC_HIGH, 0);
	reg_write(VIRTIO_MMIO_QUEUE_AVAIL_LOW, (uint32_t)((uint8_t *)vr.avail - ram.host));
	reg_write(VIRTIO_MMIO_QUEUE_AVAIL_HIGH, 0);
	reg_write(VIRTIO_MMIO_QUEUE_USED_LOW, (uint32_t)((uint8_t *)vr.used - ram.host));
	reg_write(VIRTIO_MMIO_QUEUE_USED_HIGH, 0);
	reg_write(VIRTIO_MMIO_QUEUE_READY, 1);
	reg_write(VIRTIO_MMIO_STATUS, VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
		  VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
}

/* The device comes back after a reset -- from a suppressed queue with the
 * timer armed, and from a ring the guest broke -- with no setup() between:
 * only what the guest can do (reset, enable again) and what the host does
 * on its own (timer expiries, notifies). */
static void test_recovery(void)
{
	setup(HOST_TIMER_REARM, false, false);
	send_frames(3, ONE_DESC);
	CHECK(net_tx_on_notify(net) && no_notify() && net->suppressed, "before the reset: drained, suppressed");
	guest_reset();
	guest_enable_tx();
	CHECK(tx->ready && !tx->broken && tx->last_avail == 0 && !no_notify(),
	      "re-enabled through the registers: ready, a fresh ring, notifies not suppressed (flags %u, err \"%s\")",
	      vr.used->flags, net->mmio.error);
	CHECK(!net_tx_on_timeout(net) && !no_notify() && !net->suppressed,
	      "the timer armed before the reset expires on the new ring: finds nothing, leaves notifies on");
	send_frames(2, TWO_DESCS);              /* seq 3, 4: the sink's count goes on */
	CHECK(net_tx_on_notify(net) && vr.used->idx == 2 && no_notify(),
	      "after the reset the queue drains and suppresses again (used idx %u)", vr.used->idx);
	CHECK(sink()->frames == 5 && sink()->bad_frames == 0 && net->st.buffers_by_notify == 5,
	      "sink: 5 good frames in order across the reset (bad %llu: %s)",
	      (unsigned long long)sink()->bad_frames, sink()->first_error);

	/* a ring the guest broke: NEEDS_RESET, then reset and enable again */
	vr.avail->ring[vr.avail->idx % NUM] = NUM;   /* head 16 in a ring of 16 */
	vr.avail->idx++;
	CHECK(!net_tx_on_notify(net) && net->mmio.needs_reset && net->mmio.errors == 1,
	      "a hostile head breaks the ring: needs reset, 1 error");
	CHECK(!net_tx_on_timeout(net) && vr.used->idx == 2, "the broken queue takes nothing");
	guest_reset();
	CHECK(!net->mmio.needs_reset && !(net->mmio.status & VIRTIO_CONFIG_S_NEEDS_RESET) && net->mmio.errors == 1,
	      "the driver's reset clears NEEDS_RESET; the error stays counted");
	guest_enable_tx();
	send_frames(4, ONE_DESC);               /* seq 5..8 */
	CHECK(tx->ready && !tx->broken && net_tx_on_notify(net) && vr.used->idx == 4 && no_notify(),
	      "after the broken ring's reset the queue drains again (used idx %u, err \"%s\")", vr.used->idx,
	      tx->error);
	CHECK(sink()->frames == 9 && sink()->bad_frames == 0 && !net->mmio.needs_reset,
	      "sink: 9 good frames, the device healthy");
}

/* ---- bounded work per guest action ---- */

/* One TX chain of `len` readable bytes at 0xa0000 (384 KiB of RAM are
 * free up there), as a single descriptor. */
static void send_one_chain(uint32_t len)
{
	uint16_t head = alloc_desc();

	vr.desc[head] = (struct vring_desc){ .addr = 0xa0000, .len = len };
	vr.avail->ring[vr.avail->idx % NUM] = head;
	__atomic_store_n(&vr.avail->idx, (uint16_t)(vr.avail->idx + 1), __ATOMIC_RELEASE);
}

/* The TX cap: the largest frame the negotiated features allow plus the
 * 12-byte virtio-net header.  No offload: 65535; HOST_TSO4: one IPv4
 * datagram (65535) behind an Ethernet header with one VLAN tag (18). */
static void test_tx_chain_cap(void)
{
	setup(HOST_TIMER_REARM, false, false);
	send_one_chain(HDR + 65535);
	CHECK(net_tx_on_notify(net) && !net->mmio.needs_reset && vr.used->idx == 1,
	      "no offloads: a chain of 12 + 65535 bytes is taken (err \"%s\")", net->mmio.error);
	CHECK(sink()->bad_frames == 1 && sink()->frames == 0, "(the sink checks it and finds it is no lkvm frame)");
	send_one_chain(HDR + 65536);
	CHECK(!net_tx_on_notify(net) && net->mmio.needs_reset && vr.used->idx == 1 && net->mmio.errors == 1,
	      "no offloads: a chain of 12 + 65536 bytes breaks the ring, nothing taken");
	CHECK(strstr(net->mmio.error, "virtio-net: net transmit queue: chain longer than 65547 bytes (head 1)") &&
	      strstr(net->mmio.error, "needs reset"), "one clear line: \"%s\"", net->mmio.error);

	setup(HOST_TIMER_REARM, false, false);
	net->mmio.host_features |= 1ull << VIRTIO_NET_F_HOST_TSO4 | 1ull << VIRTIO_NET_F_CSUM;
	net->mmio.driver_features |= 1ull << VIRTIO_NET_F_HOST_TSO4 | 1ull << VIRTIO_NET_F_CSUM;
	send_one_chain(HDR + 18 + 65535);
	CHECK(net_tx_on_notify(net) && !net->mmio.needs_reset,
	      "HOST_TSO4 negotiated: a chain of 12 + 18 + 65535 bytes is taken (err \"%s\")", net->mmio.error);
	send_one_chain(HDR + 18 + 65536);
	CHECK(!net_tx_on_notify(net) && net->mmio.needs_reset && strstr(net->mmio.error, "longer than 65565 bytes"),
	      "HOST_TSO4: one byte more breaks the ring: \"%s\"", net->mmio.error);

	/* the review's ring: every slot, a chain of every descriptor, each
	 * covering all of RAM -- refused at once, nothing reaches the sink */
	setup(HOST_TIMER_REARM, false, false);
	for (unsigned i = 0; i < NUM; i++) {
		vr.desc[i] = (struct vring_desc){ .addr = 0, .len = MEM_SIZE,
						  .flags = i + 1 < NUM ? VRING_DESC_F_NEXT : 0, .next = (uint16_t)(i + 1) };
		vr.avail->ring[i] = 0;
	}
	vr.avail->idx = NUM;
	CHECK(!net_tx_on_notify(net) && net->mmio.needs_reset && sink()->frames + sink()->bad_frames == 0 &&
	      net->st.descriptors == 0, "every slot a chain of %u x all of RAM: refused, the sink saw nothing", NUM);
}

/* The budget per drain round (vhost-net's weights): a drain stops after
 * tx_weight_chains chains or once tx_weight_bytes went through, releases
 * the lock, and a continuation takes the rest.  A continuation is neither
 * a notify nor a timer expiry: it has its own counter, and its chains stay
 * with the notify or expiry whose drain it continues, so
 * buffers_by_notify + buffers_by_timer = frames still holds. */
static void test_budget(void)
{
	setup(HOST_TIMER_REARM, false, false);
	CHECK(net->tx_weight_chains == 256 && net->tx_weight_bytes == 512 * 1024,
	      "default budget: 256 chains or 512 KiB per round (%u, %llu)", net->tx_weight_chains,
	      (unsigned long long)net->tx_weight_bytes);
	CHECK(!net_tx_continuing(net), "a fresh device has nothing to continue");

	net->tx_weight_chains = 4;
	send_frames(10, ONE_DESC);
	CHECK(net_tx_on_notify(net) && vr.used->idx == 4 && tx->last_avail == 4,
	      "notify with 10 chains, budget 4: takes 4, arms the timer (used idx %u)", vr.used->idx);
	CHECK(net_tx_continuing(net) && no_notify() && net->suppressed, "stopped at the budget: more to take, suppressed");
	CHECK(net->st.notify_wakeups == 1 && net->st.buffers_by_notify == 4 && net->st.continuations == 0,
	      "counters: 1 wakeup, 4 by notify, 0 continuations");
	net_tx_on_continue(net);
	CHECK(vr.used->idx == 8 && net_tx_continuing(net) && net->st.continuations == 1 &&
	      net->st.buffers_by_continuation == 4, "continuation 1: 4 more (used idx %u)", vr.used->idx);
	net_tx_on_continue(net);
	CHECK(vr.used->idx == 10 && !net_tx_continuing(net) && net->st.continuations == 2 &&
	      net->st.buffers_by_continuation == 6, "continuation 2: the last 2, done (used idx %u)", vr.used->idx);
	CHECK(net->st.buffers_by_notify == 10 && net->st.buffers_by_timer == 0,
	      "the continued chains count for the notify's drain: by_notify 10");
	CHECK(net->st.notifies == 0 && net->st.notify_wakeups == 1 && net->st.timeouts == 0 &&
	      net->st.notifies_empty == 0, "no notify, wakeup or timeout was invented by the continuations");
	net_tx_on_continue(net);
	CHECK(net->st.continuations == 2 && vr.used->idx == 10, "nothing to continue: a continue call does nothing");
	CHECK(sink()->frames == 10 && sink()->bad_frames == 0 && sink()->next_seq == 10,
	      "nothing lost: 10 good frames in order across three rounds");
	for (unsigned i = 0; i < 10; i++)
		if (vr.used->ring[i].id != i)
			CHECK(0, "used ring entry %u holds head %u", i, vr.used->ring[i].id);
	CHECK(no_notify() && net->suppressed, "the guest stays suppressed: the timer armed by the notify comes next");

	/* a drain a timer started: continued chains count for the timer */
	send_frames(6, ONE_DESC);
	CHECK(net_tx_on_timeout(net) && vr.used->idx == 14 && net_tx_continuing(net),
	      "timer expiry with 6 chains: takes 4, rearms, more to take");
	net_tx_on_continue(net);
	CHECK(vr.used->idx == 16 && !net_tx_continuing(net) && net->st.timeouts == 1 && net->st.timer_drains_work == 1 &&
	      net->st.buffers_by_timer == 6 && net->st.continuations == 3,
	      "its continuation takes 2: 1 timeout, 6 by timer, 3 continuations");
	CHECK(net->st.buffers_by_notify + net->st.buffers_by_timer == sink()->frames + sink()->bad_frames,
	      "by_notify + by_timer = frames (%llu + %llu = %llu)", (unsigned long long)net->st.buffers_by_notify,
	      (unsigned long long)net->st.buffers_by_timer, (unsigned long long)sink()->frames);

	/* the byte weight: 472-byte chains (12 + 460), 1000 bytes per round ->
	 * the round ends with the chain that reaches it, the third */
	setup(HOST_TIMER_REARM, false, false);
	net->tx_weight_bytes = 1000;
	for (unsigned i = 0; i < 7; i++, seq++)
		guest_send(seq, 460, ONE_DESC, NULL);
	CHECK(net_tx_on_notify(net) && vr.used->idx == 3 && net_tx_continuing(net),
	      "byte budget 1000, chains of 472: the round ends after 3 (used idx %u)", vr.used->idx);
	net_tx_on_continue(net);
	net_tx_on_continue(net);
	CHECK(vr.used->idx == 7 && !net_tx_continuing(net) && sink()->frames == 7 && net->st.continuations == 2,
	      "two continuations take 3 and 1: all 7 good (used idx %u)", vr.used->idx);

	/* exactly the budget available: the round stops, but nothing is left */
	setup(HOST_TIMER_REARM, false, false);
	net->tx_weight_chains = 4;
	send_frames(4, ONE_DESC);
	CHECK(net_tx_on_notify(net) && vr.used->idx == 4 && !net_tx_continuing(net),
	      "4 chains, budget 4: all taken, no continuation pending");

	/* a reset while a continuation is pending: the continuation finds no
	 * rings and ends; no write through the reset queue */
	setup(HOST_TIMER_REARM, false, false);
	net->tx_weight_chains = 2;
	send_frames(5, ONE_DESC);
	net_tx_on_notify(net);
	guest_reset();
	net_tx_on_continue(net);
	CHECK(!net_tx_continuing(net) && vr.used->idx == 2, "reset with a continuation pending: it ends, takes nothing");
}

/* The 2.6.27 one-shot timer with event idx drains "until a drain finds
 * nothing"; with a budget, that loop ends at the budget and the
 * continuation carries it on, setting avail_event again at its end. */
static void test_budget_oneshot_event_idx(void)
{
	setup(HOST_TIMER_ONESHOT, false, false);
	tx->event_idx = true;
	net->tx_weight_chains = 4;
	send_frames(2, ONE_DESC);
	net_tx_on_notify(net);
	send_frames(10, ONE_DESC);
	CHECK(!net_tx_on_timeout(net) && !net->suppressed && vr.used->idx == 6 && net_tx_continuing(net),
	      "oneshot + event idx, 10 waiting, budget 4: the expiry takes 4, more to take (used idx %u)",
	      vr.used->idx);
	while (net_tx_continuing(net))
		net_tx_on_continue(net);
	CHECK(vr.used->idx == 12 && vring_avail_event(&vr) == 12 && net->st.continuations == 2,
	      "continuations take the other 6 and leave avail_event at last_avail 12 (%u)", vring_avail_event(&vr));
	CHECK(net->st.timeouts == 1 && net->st.buffers_by_timer == 10, "1 timeout, 10 by timer");
}

/* lguest model: the continuation runs on the vCPU thread in net_vcpu_poll,
 * one round per call, so run_vcpu looks at the stop flag between rounds. */
static void test_budget_vcpu_poll(void)
{
	unsigned rounds = 0;

	setup(HOST_TIMER_REARM, false, false);
	net->cfg.model = NET_MODEL_LGUEST;
	net->tx_weight_chains = 3;
	send_frames(10, ONE_DESC);
	net_tx_on_notify(net);
	while (net_tx_continuing(net) && rounds < 100) {
		net_vcpu_poll(net);
		rounds++;
	}
	CHECK(rounds == 3 && vr.used->idx == 10 && net->st.continuations == 3 && sink()->frames == 10,
	      "net_vcpu_poll takes one round per call: 3 rounds after the notify's, 10 frames (%u rounds)", rounds);
	net_vcpu_poll(net);
	CHECK(net->st.continuations == 3 && net->st.timeouts == 0, "with nothing pending it does nothing");
}

int main(void)
{
	if (gmem_map(&ram, MEM_SIZE) < 0) {
		printf("FAIL cannot map fake guest RAM\n");
		return 1;
	}
	net = calloc(1, sizeof(*net));
	if (!net)
		return 1;
	host = irq_line_log_host(&ram, &lines);
	test_notify();
	test_timeout_rearm();
	test_recheck_race();
	test_oneshot();
	test_adaptive();
	test_interrupt_suppression();
	test_sink();
	test_sink_in_place();
	test_hostile();
	test_reset_while_suppressed();
	test_recovery();
	test_tx_chain_cap();
	test_budget();
	test_budget_oneshot_event_idx();
	test_budget_vcpu_poll();
	pthread_mutex_destroy(&net->mmio.lock);
	free(net);
	gmem_unmap(&ram);
	return check_summary();
}
