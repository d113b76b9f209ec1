/*
 * workload_tcp.c -- send --bytes over a real TCP connection to a receiver on
 * the host: the seed's "1G TCP Guest->Host xmit", made literal.
 *
 * The guest is the whole network stack of a tiny host: it answers and asks
 * ARP, opens a connection to lkvm.peer, and streams the pattern of
 * include/lkvm_frame.h.  The decisions are tcp_sender.c's, the bytes on the
 * wire inet.c's; this file moves frames between them and the device:
 *
 *   transmit  tcp_next() -> inet_build_tcp() into a free buffer -> the TX
 *             ring, kicked through the notification policy under test
 *             (exactly the raw workload's path, so the table compares)
 *   receive   RX buffers are posted up front; the loop polls the used ring
 *             while it has data to send, hands ACKs to tcp_input() and
 *             reposts the buffers (the host keeps NO_NOTIFY set on the
 *             receive queue while it has buffers, so reposting is quiet)
 *   waiting   only when TCP has nothing to send (window full, all in
 *             flight): with --wait halt, RX interrupts on, the local APIC
 *             timer armed for the retransmission deadline, hlt; with
 *             --wait spin, poll until something arrives or the deadline.
 */
#include <linux/virtio_ids.h>

#include "inet.h"
#include "io.h"
#include "lib.h"
#include "net_drv.h"
#include "tcp_sender.h"
#include "trace.h"
#include "workloads.h"

#define RX_RING 128
#define RX_BUF 2048
#define MAX_TCP_FRAME 1514u     /* the tap's MTU of 1500 plus Ethernet */
#define TSO_BUF (NET_HDR + 65536u)

struct tcp_run {
	const struct params *p;
	struct net_drv n;
	struct inet_endpoints ep;
	struct tcp_sender t;
	uint8_t **free_tx;
	unsigned nfree;
	uint32_t tx_buf;            /* bytes per transmit buffer */
	bool peer_mac_known;
	uint64_t ticks_per_ms;
	uint64_t pace_ticks;        /* --pace-ns: a data segment's slot, all in */
	uint64_t next_slot;         /* TSC when the next data segment may go */
	uint64_t lapic_fires_at;    /* TSC when the armed APIC timer should fire ... */
	uint64_t lapic_armed_seq;   /* ... if timer_seq still reads this (0: never armed) */
	uint64_t rx_frames, rx_dropped, waits_halted;
};

static struct tcp_run r;

static void tx_reclaim(void)
{
	void *done;

	while ((done = gvq_get_used(&r.n.tx, 0)))
		r.free_tx[r.nfree++] = done;
}

/* A frame of `len` bytes is in `buf` after the virtio-net header: put it
 * on the ring (waiting for room if the ring is full) and kick. */
static void tx_frame(uint8_t *buf, uint32_t len)
{
	const struct params *p = r.p;
	struct gvq *q = &r.n.tx;
	uint32_t ithreshold = p->indirect_threshold ? p->indirect_threshold
						    : indirect_default_threshold((uint16_t)p->ring);
	struct gvq_seg seg[16];
	unsigned nseg = net_drv_segments(seg, p->segments, buf, len);

	while (!gvq_add(q, seg, nseg, buf, indirect_use(p->indirect, ithreshold, nseg, q->num_free))) {
		gvq_notify_full(q);
		net_drv_wait_tx(&r.n, p->wait_halt);
		tx_reclaim();
	}
	gvq_kick(q);
}

static uint8_t *tx_buffer(void)
{
	while (!r.nfree) {
		net_drv_wait_tx(&r.n, r.p->wait_halt);
		tx_reclaim();
	}
	return r.free_tx[--r.nfree];
}

/* The virtio-net header in front of a frame.  Without offloads it is all
 * zero; with TSO a TCP frame asks the device to finish the checksum and,
 * if it carries more than one MSS, to cut it into MSS-sized segments. */
static void write_net_hdr(uint8_t *buf, bool tcp, uint32_t payload)
{
	struct virtio_net_hdr_v1 h = { 0 };

	if (tcp && r.ep.csum_partial) {
		h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		h.csum_start = ETH_HLEN_ + IP_HLEN;
		h.csum_offset = 16;
		if (payload > r.t.mss) {
			h.gso_type = VIRTIO_NET_HDR_GSO_TCPV4;
			h.gso_size = r.t.mss;
			h.hdr_len = INET_TCP_HDRS;
		}
	}
	memcpy(buf, &h, sizeof(h));
}

static void send_arp(bool reply, const uint8_t *mac, uint32_t ip)
{
	uint8_t *buf = tx_buffer();

	write_net_hdr(buf, false, 0);
	tx_frame(buf, inet_build_arp(buf + NET_HDR, &r.ep, reply, mac, ip));
}

static bool rx_poll(uint64_t now);

/* Everything TCP wants to send now, as long as buffers last.  The ACKs
 * that come back meanwhile are taken before every segment, as a Linux
 * guest's receive interrupt takes them while it transmits: so the window
 * keeps opening, and the receive ring never runs dry and drops them. */
static bool send_segments(uint64_t now)
{
	struct tcp_out out;
	bool sent = false;

	for (;;) {
		uint8_t *buf;

		/* The host's used buffers first, as a 2008 start_xmit freed old
		 * skbs before each packet: their descriptors go back on the free
		 * list now, so the ring is only full when the host is behind. */
		tx_reclaim();
		if (sent)
			rx_poll(now);
		if (!r.nfree || !tcp_next(&r.t, now, &out))
			return sent;
		buf = r.free_tx[--r.nfree];
		/* A 2008 guest's time per packet, all in (its socket copy, stack
		 * and ACK processing): a data segment goes out at most once per
		 * --pace-ns, and this sender's own work between two -- building,
		 * kicking, taking ACKs -- counts toward it.  After a pause (a
		 * drain, a wait) the next slot starts from now: no burst to
		 * catch up. */
		if (out.len && r.pace_ticks) {
			uint64_t t = rdtsc();

			if (t < r.next_slot)
				spin_ticks(r.next_slot - t);
			r.next_slot = (t > r.next_slot ? t : r.next_slot) + r.pace_ticks;
		}
		write_net_hdr(buf, true, out.len);
		tx_frame(buf, inet_build_tcp(buf + NET_HDR, &r.ep, &out));
		sent = true;
	}
}

static void rx_repost(uint8_t *buf)
{
	struct gvq_seg s = { .addr = buf, .len = RX_BUF, .device_writes = true };

	gvq_add(&r.n.rx, &s, 1, buf, false);   /* cannot fail: the slot just came back */
}

static void rx_frame(const uint8_t *frame, uint32_t len, uint64_t now)
{
	struct inet_rx rx;

	switch (inet_parse(&r.ep, frame, len, &rx)) {
	case INET_ARP_REQUEST:
		send_arp(true, rx.sender_mac, rx.sender_ip);
		break;
	case INET_ARP_REPLY:
		if (rx.sender_ip == r.ep.peer_ip) {
			memcpy(r.ep.peer_mac, rx.sender_mac, 6);
			r.peer_mac_known = true;
		}
		break;
	case INET_TCP:
		tcp_input(&r.t, &rx.seg, now);
		break;
	default:
		r.rx_dropped++;
	}
}

/* Take every received frame; true if there was any. */
static bool rx_poll(uint64_t now)
{
	uint32_t len;
	uint8_t *buf;
	bool any = false;

	while ((buf = gvq_get_used(&r.n.rx, &len))) {
		any = true;
		r.rx_frames++;
		if (len > NET_HDR && len <= RX_BUF)
			rx_frame(buf + NET_HDR, len - NET_HDR, now);
		else
			r.rx_dropped++;
		rx_repost(buf);
	}
	if (any)
		gvq_kick(&r.n.rx);
	return any;
}

/* wait_for_peer's wait itself, before `deadline` (TSC; 0: none). */
static void wait_for_peer_untraced(uint64_t deadline)
{
	uint64_t now = rdtsc(), spins = 0;

	if (!r.p->wait_halt) {
		while (!gvq_has_used(&r.n.rx) && !(r.nfree == 0 && gvq_has_used(&r.n.tx)) &&
		       (!deadline || rdtsc() < deadline))
			if (!(++spins & ((1u << 22) - 1)))
				net_drv_give_up_if_broken(&r.n, "tcp");
			else
				cpu_relax();
		return;
	}
	{
		uint64_t seen = irq_seq;
		bool quiet;

		/* A device that holds its line while InterruptStatus is set (QEMU;
		 * virtio 1.2 4.2.3.4) makes no new edge for our edge-triggered
		 * route until it is acknowledged: do that before sleeping. */
		virtio_drv_ack_interrupt(&r.n.dev);
		quiet = gvq_enable_interrupts(&r.n.rx);

		if (quiet && !r.nfree)
			quiet = gvq_enable_interrupts(&r.n.tx);
		if (quiet) {
			/* Arm the APIC timer unless it is still pending and due
			 * before the deadline.  "Still pending" is timer_seq, not
			 * the TSC: the timer's clock is not the TSC's, and one that
			 * fired a little early must not leave us asleep with no
			 * retransmission timer at all. */
			bool pending = r.lapic_armed_seq && timer_seq + 1 == r.lapic_armed_seq;

			if (deadline && !(pending && r.lapic_fires_at <= deadline)) {
				uint64_t ns = (deadline - now) * 1000000 / r.p->tsc_khz;

				r.lapic_armed_seq = timer_seq + 1;
				lapic_timer_arm_ns(ns > 1000000000 ? 1000000000 : (uint32_t)ns);
				r.lapic_fires_at = now + (ns > 1000000000 ? 1000 * r.ticks_per_ms : deadline - now);
			}
			r.waits_halted++;
			halt_until_irq(seen);
		}
		gvq_disable_interrupts(&r.n.rx);
		gvq_disable_interrupts(&r.n.tx);
		if (!(r.waits_halted & 1023))
			net_drv_give_up_if_broken(&r.n, "tcp");
	}
}

/* Nothing to send and nothing received: wait for the peer -- an ACK on the
 * receive queue, or a used TX buffer -- or `deadline`.  On the timeline as
 * one wait on the receive queue. */
static void wait_for_peer(uint64_t deadline)
{
	uint64_t irqs;

	if (deadline && rdtsc() >= deadline)
		return;
	irqs = gtrace_wait_start(r.n.rx.index, r.p->wait_halt);
	wait_for_peer_untraced(deadline);
	gtrace_wait_end(r.n.rx.index, irqs);
}

/* Ask for the receiver's MAC, a few times; false if nobody answers. */
static bool arp_resolve(void)
{
	for (int attempt = 0; attempt < 10 && !r.peer_mac_known; attempt++) {
		uint64_t until = rdtsc() + 200 * r.ticks_per_ms;

		send_arp(false, 0, r.ep.peer_ip);
		guest_report.tcp_arp_requests++;
		while (!r.peer_mac_known && rdtsc() < until) {
			tx_reclaim();
			if (!rx_poll(rdtsc()))
				wait_for_peer(until);
		}
	}
	return r.peer_mac_known;
}

static void print_ip(const char *what, uint32_t ip, uint16_t port)
{
	printf("%s%u.%u.%u.%u:%u", what, ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, port);
}

static void report(uint64_t t0)
{
	struct lkvm_guest_report *g = &guest_report;
	struct gvq *q = &r.n.tx;

	g->tsc_workload = rdtsc() - t0;
	g->tx_bytes = tcp_acked(&r.t);
	g->tx_frames = q->bufs_direct + q->bufs_indirect;
	net_drv_report_tx(&r.n);
	g->tcp_state = r.t.state;
	g->tcp_peer_mac_known = r.peer_mac_known;
	g->tcp_bytes_acked = tcp_acked(&r.t);
	g->tcp_segments_sent = r.t.segments_sent;
	g->tcp_segments_received = r.t.segments_received;
	g->tcp_retransmits = r.t.retransmits;
	g->tcp_timeouts = r.t.timeouts;
	g->tcp_fast_retransmits = r.t.fast_retransmits;
	g->tcp_dupacks = r.t.dupacks_total;
	g->tcp_window_probes = r.t.window_probes;
	g->tcp_mss = r.t.mss;
	g->tcp_srtt_ns = r.t.srtt * 1000000 / r.p->tsc_khz;
	g->tcp_waits_halted = r.waits_halted;
	g->rx_frames = r.rx_frames;
	g->rx_frames_dropped = r.rx_dropped;
}

static int setup(const struct params *p)
{
	const struct mmio_window *w = find_device(p, VIRTIO_ID_NET);
	uint32_t pool = 2 * p->ring;    /* the ring, not the pool, must run out first */
	uint8_t *mem, *rxmem;

	if (!p->tsc_khz || !p->ip || !p->peer_ip || !p->peer_port) {
		printf("tcp: needs lkvm.tsc_khz, lkvm.ip and lkvm.peer on the command line\n");
		return -1;
	}
	if (p->frame > MAX_TCP_FRAME || p->frame < INET_TCP_HDRS + 8) {
		printf("tcp: frames must be %u..%u bytes\n", INET_TCP_HDRS + 8, MAX_TCP_FRAME);
		return -1;
	}
	if (!w || net_drv_init(&r.n, w, p, RX_RING) < 0)
		return -1;
	r.p = p;
	r.ticks_per_ms = p->tsc_khz;
	r.pace_ticks = gvq_ns_to_ticks(p->pace_ns, p->tsc_khz);
	r.tx_buf = p->tso ? TSO_BUF : RX_BUF;
	r.free_tx = alloc_pages(sizeof(*r.free_tx) * pool);
	mem = alloc_pages((uint64_t)pool * r.tx_buf);
	for (uint32_t i = 0; i < pool; i++)
		r.free_tx[r.nfree++] = mem + (uint64_t)i * r.tx_buf;
	rxmem = alloc_pages((uint64_t)RX_RING * RX_BUF);
	for (uint32_t i = 0; i < RX_RING; i++)
		rx_repost(rxmem + (uint64_t)i * RX_BUF);
	gvq_kick(&r.n.rx);
	memcpy(r.ep.mac, r.n.mac, 6);
	r.ep.ip = p->ip;
	r.ep.peer_ip = p->peer_ip;
	r.ep.peer_port = p->peer_port;
	r.ep.port = (uint16_t)(32768 + (rdtsc() >> 4) % 16384);   /* a fresh port each run */
	r.ep.window = 65535;
	r.ep.mss = (uint16_t)(p->frame - INET_TCP_HDRS);
	r.ep.csum_partial = p->tso;
	lapic_timer_setup();
	return 0;
}

int workload_tcp(const struct params *p)
{
	struct tcp_sender_config cfg;
	uint64_t t0, fin_wait_until = 0;

	if (setup(p) < 0)
		return LKVM_STATUS_FAILED;
	print_ip("tcp: ", p->ip, r.ep.port);
	print_ip(" -> ", p->peer_ip, p->peer_port);
	printf(", %lu bytes, MSS %u%s, ring %u, policy %s\n", p->bytes, r.ep.mss, p->tso ? " (TSO)" : "",
	       p->ring, p->policy);
	t0 = rdtsc();
	if (!arp_resolve()) {
		print_ip("tcp: no ARP reply from ", p->peer_ip, p->peer_port);
		printf(" -- is the receiver's interface up?\n");
		report(t0);
		return LKVM_STATUS_FAILED;
	}
	cfg = (struct tcp_sender_config){
		.total = p->bytes, .iss = (uint32_t)rdtsc(), .mss = r.ep.mss,
		.rto_initial = 200 * r.ticks_per_ms, .rto_min = 5 * r.ticks_per_ms,
		.rto_max = 2000 * r.ticks_per_ms, .max_timeouts = 8,
		.tso_max = p->tso ? 65535 - IP_HLEN - TCP_HLEN : 0,
	};
	tcp_sender_init(&r.t, &cfg);
	for (;;) {
		uint64_t now = rdtsc(), deadline;
		bool got;

		tx_reclaim();
		got = rx_poll(now);
		tcp_on_timer(&r.t, now);
		if (tcp_finished(&r.t))
			break;
		/* All acknowledged: give the peer a moment to close its side. */
		if (r.t.state == TCP_FIN_ACKED) {
			if (!fin_wait_until)
				fin_wait_until = now + 2000 * r.ticks_per_ms;
			else if (now >= fin_wait_until)
				break;
		}
		if (send_segments(now) || got)
			continue;
		deadline = tcp_deadline(&r.t);
		if (fin_wait_until && (!deadline || fin_wait_until < deadline))
			deadline = fin_wait_until;
		wait_for_peer(deadline);
	}
	/* The ACK of the peer's FIN; the host's timer collects the tail. */
	send_segments(rdtsc());
	while (gvq_outstanding(&r.n.tx))
		net_drv_wait_tx(&r.n, p->wait_halt);
	tx_reclaim();
	report(t0);
	if (r.t.state != TCP_DONE && r.t.state != TCP_FIN_ACKED) {
		printf("tcp: connection %s after %lu of %lu bytes were acknowledged (%lu timeouts)\n",
		       r.t.state == TCP_RESET ? "reset by the peer" : "abandoned: the peer stopped answering",
		       tcp_acked(&r.t), p->bytes, r.t.timeouts);
		return LKVM_STATUS_FAILED;
	}
	printf("tcp: done, %lu bytes acknowledged, %lu segments (%lu retransmitted, %lu timeouts), "
	       "%lu notifies (%lu forced)\n", tcp_acked(&r.t), r.t.segments_sent, r.t.retransmits,
	       r.t.timeouts, r.n.tx.notifies, r.n.tx.forced);
	return LKVM_STATUS_OK;
}
