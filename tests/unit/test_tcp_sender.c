/*
 * test_tcp_sender.c -- the guest's TCP sender (guest-stub/tcp_sender.c) and
 * its frame code (guest-stub/inet.c), compiled as the guest compiles them,
 * driven with crafted segments and plain-number clocks.
 *
 * Each scenario is a conversation: what the sender says (tcp_next), what
 * the "peer" answers (tcp_input), what the clock does (tcp_on_timer).  The
 * cases are the ones a real network produces rarely and a table run never
 * shows: a lost ACK, duplicate ACKs, a zero window, a reset, and a peer
 * that goes silent.  Then the bytes: checksums against RFC 1071's example,
 * frames built by one side parsed by the other, and the ways a frame can
 * be refused.
 */
#include <string.h>

#include "check.h"
#include "inet.h"
#include "lkvm_frame.h"
#include "tcp_sender.h"

#define ISS 1000u
#define PEER_ISS 5000u

static const struct tcp_sender_config base_cfg = {
	.total = 10000, .iss = ISS, .mss = 1004, .rto_initial = 100, .rto_min = 10, .rto_max = 1000,
	.max_timeouts = 3,
};

static struct tcp_seg peer(uint32_t ack, uint16_t window, uint8_t flags)
{
	return (struct tcp_seg){ .seq = PEER_ISS + 1, .ack = ack, .flags = flags, .window = window, .wscale = -1 };
}

/* SYN out, SYN-ACK (window 4000, wscale 2, MSS 1460) in at time `t`. */
static void connect(struct tcp_sender *t, const struct tcp_sender_config *cfg, uint64_t t_synack)
{
	struct tcp_out o;
	struct tcp_seg synack = { .seq = PEER_ISS, .ack = ISS + 1, .flags = TCP_SYN | TCP_ACK, .window = 4000,
				  .mss = 1460, .wscale = 2 };

	tcp_sender_init(t, cfg);
	tcp_next(t, 0, &o);
	tcp_input(t, &synack, t_synack);
}

/* Send everything the window allows; returns how many data segments. */
static unsigned drain(struct tcp_sender *t, uint64_t now, struct tcp_out *last)
{
	struct tcp_out o;
	unsigned n = 0;

	while (tcp_next(t, now, &o)) {
		if (o.len)
			n++;
		*last = o;
	}
	return n;
}

static void test_handshake(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg synack = { .seq = PEER_ISS, .ack = ISS + 1, .flags = TCP_SYN | TCP_ACK, .window = 4000,
				  .mss = 1460, .wscale = 2 };

	tcp_sender_init(&t, &base_cfg);
	CHECK(t.mss == 1000, "our MSS is rounded down to 8 bytes (1004 -> %u)", t.mss);
	CHECK(tcp_next(&t, 0, &o) && o.flags == TCP_SYN && o.seq == ISS && o.syn_options,
	      "first segment: SYN at the ISS, with MSS and window-scale options");
	CHECK(t.state == TCP_SYN_SENT && tcp_deadline(&t) == 100, "SYN_SENT, timer armed for the initial RTO");
	CHECK(!tcp_next(&t, 1, &o), "nothing more until the SYN-ACK");
	synack.ack = ISS + 7;
	tcp_input(&t, &synack, 40);
	CHECK(t.state == TCP_SYN_SENT, "a SYN-ACK for another SYN is ignored");
	synack.ack = ISS + 1;
	tcp_input(&t, &synack, 40);
	CHECK(t.state == TCP_ESTABLISHED && t.rcv_nxt == PEER_ISS + 1, "SYN-ACK: established, peer's SYN counted");
	CHECK(t.wnd == 4000 && t.peer_wscale == 2, "a SYN's window is not scaled; later ones shift by 2");
	CHECK(t.srtt == 40 && t.rto == 120, "RTT sample from the SYN: srtt 40, rto 120 (got %lu)",
	      (unsigned long)t.rto);
	CHECK(tcp_deadline(&t) == 0, "timer stopped: nothing in flight");
	CHECK(tcp_next(&t, 40, &o) && o.len == 1000 && o.off == 0 && o.seq == ISS + 1 && o.ack == PEER_ISS + 1 &&
	      (o.flags & TCP_ACK), "the first data segment carries the ACK of the SYN-ACK");
}

static void test_window_and_cumulative_ack(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg ack;

	connect(&t, &base_cfg, 40);
	CHECK(drain(&t, 50, &o) == 4 && t.nxt == 4000, "a 4000-byte window: four 1000-byte segments, then stop");
	ack = peer(ISS + 1 + 2000, 1000, TCP_ACK);   /* 1000 << 2 = 4000 */
	tcp_input(&t, &ack, 60);
	CHECK(t.una == 2000 && t.wnd == 4000, "cumulative ACK of 2000 bytes; window 1000 << 2");
	CHECK(drain(&t, 60, &o) == 2 && o.off == 5000, "the window slid: two more segments (up to 6000)");
	CHECK(tcp_deadline(&t) == 60 + t.rto, "the timer restarts on progress");
	ack = peer(ISS + 1 + 500, 1000, TCP_ACK);
	tcp_input(&t, &ack, 61);
	CHECK(t.una == 2000, "an old ACK (below una) changes nothing");
	ack = peer(ISS + 1 + 9000, 1000, TCP_ACK);
	tcp_input(&t, &ack, 61);
	CHECK(t.una == 2000, "an ACK for bytes never sent is ignored");
}

static void test_silly_window(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg ack;

	connect(&t, &base_cfg, 40);
	drain(&t, 50, &o);
	ack = peer(ISS + 1 + 1000, 825, TCP_ACK);   /* window 3300: 300 bytes past nxt */
	tcp_input(&t, &ack, 60);
	CHECK(!tcp_next(&t, 60, &o), "no 300-byte runt while data is in flight");
	ack = peer(ISS + 1 + 4000, 75, TCP_ACK);    /* everything acked, window 300 */
	tcp_input(&t, &ack, 70);
	CHECK(tcp_next(&t, 70, &o) && o.len == 300, "with nothing in flight the small window is used");
}

static void test_duplicate_acks(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg dup = peer(ISS + 1 + 1000, 1000, TCP_ACK);

	connect(&t, &base_cfg, 40);
	drain(&t, 50, &o);
	tcp_input(&t, &dup, 60);        /* new data acked: not a duplicate */
	drain(&t, 60, &o);
	tcp_input(&t, &dup, 61);
	tcp_input(&t, &dup, 62);
	CHECK(t.dupacks == 2 && !t.rexmit_one, "two duplicates: wait");
	tcp_input(&t, &dup, 63);
	CHECK(t.fast_retransmits == 1, "third duplicate ACK: fast retransmit");
	CHECK(tcp_next(&t, 63, &o) && o.off == 1000 && o.len == 1000 && t.retransmits == 1,
	      "exactly the segment at una goes again");
	CHECK(t.nxt == 5000, "nxt is untouched: the rest is still in flight");
	dup.window = 900;
	tcp_input(&t, &dup, 64);
	CHECK(t.dupacks == 3, "an ACK that changes the window is not a duplicate");
}

static void test_lost_ack_timeout(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	uint64_t rto, d;

	connect(&t, &base_cfg, 40);
	drain(&t, 50, &o);
	rto = t.rto;
	d = tcp_deadline(&t);
	tcp_on_timer(&t, d - 1);
	CHECK(t.timeouts == 0, "nothing happens before the deadline");
	tcp_on_timer(&t, d);            /* every ACK was lost */
	CHECK(t.timeouts == 1 && t.nxt == 0 && t.rto == 2 * rto, "timeout: go back to una, RTO doubled");
	CHECK(!t.timing, "Karn: no RTT sample across a retransmission");
	CHECK(drain(&t, d, &o) == 4 && t.retransmits == 4, "the whole window is sent again");
	tcp_input(&t, &(struct tcp_seg){ .seq = PEER_ISS + 1, .ack = ISS + 1 + 4000, .flags = TCP_ACK,
					  .window = 1000, .wscale = -1 }, d + 5);
	CHECK(t.una == 4000 && t.timeouts_in_row == 0 && t.rtt_samples == 1, "the ACK arrives: progress, no new sample");
}

static void test_give_up(void)
{
	struct tcp_sender t;
	struct tcp_out o;

	connect(&t, &base_cfg, 40);
	drain(&t, 50, &o);
	for (int i = 0; i < 10 && !tcp_finished(&t); i++) {
		tcp_on_timer(&t, tcp_deadline(&t));
		drain(&t, tcp_deadline(&t), &o);
	}
	CHECK(t.state == TCP_GAVE_UP && t.timeouts == 4, "a silent peer: give up after max_timeouts + 1 expiries");
	CHECK(!tcp_next(&t, 1000000, &o), "and say nothing more");
	CHECK(t.rto <= base_cfg.rto_max, "the RTO never passes rto_max (%lu)", (unsigned long)t.rto);
}

static void test_zero_window(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg ack;

	connect(&t, &base_cfg, 40);
	drain(&t, 50, &o);
	ack = peer(ISS + 1 + 4000, 0, TCP_ACK);
	tcp_input(&t, &ack, 60);
	CHECK(t.wnd == 0 && !tcp_next(&t, 60, &o), "zero window: nothing to send");
	CHECK(tcp_deadline(&t) != 0, "but the persist timer is armed");
	tcp_on_timer(&t, tcp_deadline(&t));
	CHECK(tcp_next(&t, 500, &o) && o.len == 1 && o.off == 4000 && t.window_probes == 1,
	      "on expiry: a one-byte window probe");
	tcp_input(&t, &ack, 510);      /* probe not taken, window still 0 */
	CHECK(t.state == TCP_ESTABLISHED && t.timeouts_in_row == 0, "a shut window is not a dead peer");
	ack = peer(ISS + 1 + 4001, 1000, TCP_ACK);
	tcp_input(&t, &ack, 520);
	CHECK(drain(&t, 520, &o) == 4 && t.nxt == 8001, "window open again: sending resumes after the probe byte");
}

static void test_reset(void)
{
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg rst = peer(0, 0, TCP_RST);

	tcp_sender_init(&t, &base_cfg);
	tcp_next(&t, 0, &o);
	tcp_input(&t, &rst, 5);
	CHECK(t.state == TCP_SYN_SENT, "SYN_SENT: an RST without our ACK is ignored");
	rst.flags = TCP_RST | TCP_ACK;
	rst.ack = ISS + 1;
	tcp_input(&t, &rst, 5);
	CHECK(t.state == TCP_RESET && tcp_finished(&t), "SYN_SENT: RST acknowledging the SYN -> reset (refused)");

	connect(&t, &base_cfg, 40);
	drain(&t, 50, &o);
	rst = peer(0, 0, TCP_RST);
	rst.seq = PEER_ISS + 1 + 100000;
	tcp_input(&t, &rst, 60);
	CHECK(t.state == TCP_ESTABLISHED, "an RST outside our window is ignored (blind reset)");
	rst.seq = PEER_ISS + 1;
	tcp_input(&t, &rst, 60);
	CHECK(t.state == TCP_RESET && tcp_deadline(&t) == 0, "an in-window RST ends the connection");
	CHECK(!tcp_next(&t, 70, &o) && tcp_acked(&t) == 0, "nothing is sent after a reset");
}

static void test_fin(void)
{
	struct tcp_sender_config cfg = base_cfg;
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg ack, fin;

	cfg.total = 2500;
	connect(&t, &cfg, 40);
	CHECK(drain(&t, 50, &o) == 3 && (o.flags & TCP_FIN) && o.seq == ISS + 1 + 2500 && o.len == 0,
	      "1000 + 1000 + 500 bytes, then a FIN right after the data");
	ack = peer(ISS + 1 + 2500, 1000, TCP_ACK);
	tcp_input(&t, &ack, 60);
	CHECK(t.state == TCP_ESTABLISHED && tcp_acked(&t) == 2500, "data acked, FIN not yet");
	ack.ack++;
	tcp_input(&t, &ack, 61);
	CHECK(t.state == TCP_FIN_ACKED && tcp_deadline(&t) == 0, "FIN acked: waiting for the peer's");
	fin = peer(ISS + 1 + 2501, 1000, TCP_ACK | TCP_FIN);
	tcp_input(&t, &fin, 70);
	CHECK(t.state == TCP_DONE && t.rcv_nxt == PEER_ISS + 2, "peer's FIN: done");
	CHECK(tcp_next(&t, 70, &o) && o.flags == TCP_ACK && o.ack == PEER_ISS + 2 && o.len == 0,
	      "and it is acknowledged");
	CHECK(!tcp_next(&t, 71, &o), "once");
}

static void test_fin_lost(void)
{
	struct tcp_sender_config cfg = base_cfg;
	struct tcp_sender t;
	struct tcp_out o;

	cfg.total = 800;
	connect(&t, &cfg, 40);
	drain(&t, 50, &o);
	tcp_input(&t, &(struct tcp_seg){ .seq = PEER_ISS + 1, .ack = ISS + 1 + 800, .flags = TCP_ACK,
					  .window = 1000, .wscale = -1 }, 60);
	tcp_on_timer(&t, tcp_deadline(&t));
	CHECK(tcp_next(&t, 500, &o) && (o.flags & TCP_FIN) && o.seq == ISS + 1 + 800 && t.retransmits == 1,
	      "a lost FIN is sent again on timeout");
}

static void test_tso_segments(void)
{
	struct tcp_sender_config cfg = base_cfg;
	struct tcp_sender t;
	struct tcp_out o;
	struct tcp_seg ack;

	cfg.tso_max = 3500;
	connect(&t, &cfg, 40);
	ack = peer(ISS + 1, 2500, TCP_ACK);     /* window 10000 */
	tcp_input(&t, &ack, 41);
	CHECK(tcp_next(&t, 50, &o) && o.len == 3000, "TSO: whole MSS multiples up to tso_max (3000 of 3500)");
	CHECK(tcp_next(&t, 50, &o) && o.len == 3000 && tcp_next(&t, 50, &o) && o.len == 3000,
	      "and again while the window lasts");
	CHECK(tcp_next(&t, 50, &o) && o.len == 1000 && o.off == 9000, "the last 1000 bytes of the 10000-byte window");
}

static void test_checksum(void)
{
	/* RFC 1071 section 3's example: the sum is ddf2, the checksum 220d. */
	static const uint8_t data[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint16_t c = inet_csum_fold(inet_csum_add(0, data, sizeof(data)));
	uint8_t b[2];

	memcpy(b, &c, 2);
	CHECK(b[0] == 0x22 && b[1] == 0x0d, "RFC 1071 example: checksum bytes 22 0d (got %02x %02x)", b[0], b[1]);
	c = inet_csum_fold(inet_csum_add(0, data, 7));
	memcpy(b, &c, 2);
	CHECK(b[0] == 0x23 && b[1] == 0x04, "odd length: the last byte is padded with zero (23 04)");
}

static void endpoints(struct inet_endpoints *us, struct inet_endpoints *them)
{
	*us = (struct inet_endpoints){ .mac = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 }, .peer_mac = { 2, 0, 0, 0, 0, 1 },
				       .ip = 0x0a630002, .peer_ip = 0x0a630001, .port = 40000, .peer_port = 5001,
				       .window = 65535, .mss = 1460 };
	*them = (struct inet_endpoints){ .ip = us->peer_ip, .peer_ip = us->ip, .port = us->peer_port,
					 .peer_port = us->port };
	memcpy(them->mac, us->peer_mac, 6);
	memcpy(them->peer_mac, us->mac, 6);
}

static void test_frames(void)
{
	struct inet_endpoints us, them;
	struct tcp_out syn = { .seq = 77, .flags = TCP_SYN, .syn_options = true };
	struct tcp_out data = { .seq = 1234, .ack = 999, .flags = TCP_ACK | TCP_PSH, .off = 8003, .len = 1001 };
	uint8_t f[2048], expect[1100], whole[64];
	struct inet_rx rx;
	uint32_t n;

	endpoints(&us, &them);
	n = inet_build_tcp(f, &us, &syn);
	CHECK(n == 14 + 20 + 28, "SYN frame: 62 bytes with options");
	CHECK(inet_parse(&them, f, n, &rx) == INET_TCP && rx.seg.flags == TCP_SYN && rx.seg.seq == 77 &&
	      rx.seg.mss == 1460 && rx.seg.wscale == 0 && rx.seg.len == 0, "the peer reads our SYN and its options");
	n = inet_build_tcp(f, &us, &data);
	CHECK(inet_parse(&them, f, n, &rx) == INET_TCP && rx.seg.seq == 1234 && rx.seg.ack == 999 &&
	      rx.seg.len == 1001 && rx.seg.window == 65535, "a data segment round-trips (checksums verify)");
	inet_stream_fill(expect, 8003, 1001);
	CHECK(!memcmp(f + 54, expect, 1001), "its payload is the stream at offset 8003");
	inet_stream_fill(whole, 0, 64);
	inet_stream_fill(expect, 3, 50);
	CHECK(!memcmp(expect, whole + 3, 50), "an unaligned stretch of the stream matches the aligned whole");
	{
		uint64_t w = lkvm_stream_word(1000);
		inet_stream_fill(expect, 8000, 8);
		CHECK(!memcmp(expect, &w, 8), "stream byte k is byte k%%8 of lkvm_stream_word(k/8)");
	}
	us.csum_partial = true;
	n = inet_build_tcp(f, &us, &data);
	{
		/* Finish it as the device does: sum from csum_start with the
		 * field as it stands, store the complement. */
		uint16_t c = inet_csum_fold(inet_csum_add(0, f + 34, n - 34));

		CHECK(inet_parse(&them, f, n, &rx) == INET_MALFORMED, "partial checksum: not valid as it stands");
		memcpy(f + 34 + 16, &c, 2);
		CHECK(inet_parse(&them, f, n, &rx) == INET_TCP, "partial checksum, completed by the device: valid");
	}
	f[54 + 500] ^= 1;
	CHECK(inet_parse(&them, f, n, &rx) == INET_MALFORMED, "one flipped payload bit: bad TCP checksum");
	f[54 + 500] ^= 1;
	f[14 + 8] ^= 1;                 /* TTL */
	CHECK(inet_parse(&them, f, n, &rx) == INET_MALFORMED, "a changed TTL: bad IPv4 header checksum");
	f[14 + 8] ^= 1;
	CHECK(inet_parse(&them, f, 40, &rx) == INET_MALFORMED, "a frame shorter than its IPv4 length");
	CHECK(inet_parse(&them, f, 10, &rx) == INET_MALFORMED, "a frame shorter than Ethernet");
	CHECK(inet_parse(&us, f, n, &rx) == INET_IGNORED, "our own frame is not for us (MAC)");
	them.port = 5002;
	CHECK(inet_parse(&them, f, n, &rx) == INET_IGNORED, "another port: not ours");
}

static void test_arp(void)
{
	struct inet_endpoints us, them;
	uint8_t f[64];
	struct inet_rx rx;
	uint32_t n;

	endpoints(&us, &them);
	n = inet_build_arp(f, &us, false, 0, us.peer_ip);
	CHECK(n == 42 && !memcmp(f, "\xff\xff\xff\xff\xff\xff", 6), "ARP request: 42 bytes, broadcast");
	CHECK(inet_parse(&them, f, n, &rx) == INET_ARP_REQUEST && rx.sender_ip == us.ip &&
	      !memcmp(rx.sender_mac, us.mac, 6), "the peer sees who asks");
	n = inet_build_arp(f, &them, true, rx.sender_mac, rx.sender_ip);
	CHECK(inet_parse(&us, f, n, &rx) == INET_ARP_REPLY && rx.sender_ip == us.peer_ip &&
	      !memcmp(rx.sender_mac, us.peer_mac, 6), "and its reply tells us its MAC");
	CHECK(inet_parse(&us, f, 30, &rx) == INET_IGNORED, "a truncated ARP is ignored");
}

int main(void)
{
	test_handshake();
	test_window_and_cumulative_ack();
	test_silly_window();
	test_duplicate_acks();
	test_lost_ack_timeout();
	test_give_up();
	test_zero_window();
	test_reset();
	test_fin();
	test_fin_lost();
	test_tso_segments();
	test_checksum();
	test_frames();
	test_arp();
	return check_summary();
}
