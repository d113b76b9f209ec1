/*
 * tcp_sender.h -- the guest's TCP sender as a pure state machine.
 *
 * The tcp workload streams --bytes of the pattern in include/lkvm_frame.h to
 * one peer.  Everything TCP decides lives here, with no rings, no packets
 * and no clock of its own: tcp_input() takes a parsed segment, tcp_next()
 * says what to send now, tcp_on_timer() handles the retransmission timer,
 * and time is whatever tick count the caller passes (the guest uses the
 * TSC; the unit tests use plain numbers).  So the algorithm the guest runs
 * is the one tests/unit/test_tcp_sender.c drives with crafted segments.
 *
 * What it does: active open with MSS and window scaling, a sliding window
 * bounded by the peer's advertised window, cumulative ACKs, RTT sampling
 * (one segment timed at a time, Karn's rule) for an RFC 6298 timeout,
 * go-back-N on timeout, fast retransmit of one segment on the third
 * duplicate ACK, zero-window probes, FIN, and RST.  There is no congestion
 * control: the peer is on the same machine, and the ring is the only queue.
 *
 * Sequence numbers are 32-bit on the wire but 64-bit stream offsets here
 * (offset 0 = the first data byte, offset `total` = the FIN), so more than
 * 4 GiB can be sent and every comparison is a plain one.
 */
#ifndef TCP_SENDER_H
#define TCP_SENDER_H

#include <stdbool.h>
#include <stdint.h>

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

enum tcp_state {
	TCP_CLOSED,        /* nothing sent yet */
	TCP_SYN_SENT,
	TCP_ESTABLISHED,   /* data, then our FIN, until the FIN is acknowledged */
	TCP_FIN_ACKED,     /* all data and our FIN acknowledged; waiting for the peer's FIN */
	TCP_DONE,          /* both FINs exchanged (no TIME_WAIT: we never reuse the port) */
	TCP_RESET,         /* the peer sent RST */
	TCP_GAVE_UP,       /* too many timeouts in a row */
};

/* One received segment, already checked (checksums, addresses, ports). */
struct tcp_seg {
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window;        /* raw, unscaled */
	uint32_t len;           /* payload bytes */
	uint16_t mss;           /* MSS option, 0 if absent */
	int8_t wscale;          /* window scale option, -1 if absent */
};

/* One segment to send: the caller builds it (headers, stream bytes). */
struct tcp_out {
	uint32_t seq, ack;
	uint8_t flags;
	uint64_t off;           /* stream offset of the first payload byte */
	uint32_t len;           /* payload bytes */
	bool syn_options;       /* carry MSS and window scale */
};

struct tcp_sender_config {
	uint64_t total;         /* bytes to send */
	uint32_t iss;           /* initial sequence number */
	uint16_t mss;           /* ours: the most payload one frame carries */
	uint32_t tso_max;       /* TSO: payload of one segment handed to the device (0: no TSO) */
	uint64_t rto_initial, rto_min, rto_max;   /* ticks */
	uint32_t max_timeouts;  /* retries: the next expiry in a row gives up */
};

struct tcp_sender {
	struct tcp_sender_config cfg;
	enum tcp_state state;
	uint16_t mss;           /* agreed: min(ours, peer's), rounded down to 8 */
	uint8_t peer_wscale;    /* shift for the peer's windows (0 without the option) */
	uint32_t irs;           /* the peer's initial sequence number */
	uint32_t rcv_nxt;       /* what we acknowledge */
	uint64_t una;           /* oldest unacknowledged offset */
	uint64_t nxt;           /* next offset to send */
	uint64_t max_sent;      /* highest offset sent + 1 (FIN counts as one) */
	uint64_t wnd;           /* peer's window in bytes, from una */
	bool peer_fin, ack_pending, rexmit_one, syn_needed, probe_needed;
	uint32_t dupacks;
	/* retransmission timer */
	uint64_t rto, deadline; /* deadline 0: not armed */
	uint32_t timeouts_in_row;
	bool timing;            /* an RTT sample is in flight */
	uint64_t timed_off, timed_at;
	uint64_t srtt, rttvar;  /* ticks, 0 until the first sample */
	/* counters */
	uint64_t segments_sent, bytes_sent, segments_received;
	uint64_t retransmits, timeouts, fast_retransmits, dupacks_total, window_probes, rtt_samples;
};

void tcp_sender_init(struct tcp_sender *t, const struct tcp_sender_config *cfg);
/* A segment from the peer at time `now`. */
void tcp_input(struct tcp_sender *t, const struct tcp_seg *in, uint64_t now);
/* What to send now, if anything (call until it returns false; each call
 * takes the segment as sent at `now`). */
bool tcp_next(struct tcp_sender *t, uint64_t now, struct tcp_out *out);
/* When the timer expires (0: not armed); call tcp_on_timer at or after it. */
uint64_t tcp_deadline(const struct tcp_sender *t);
void tcp_on_timer(struct tcp_sender *t, uint64_t now);
/* Bytes the peer has acknowledged. */
uint64_t tcp_acked(const struct tcp_sender *t);
bool tcp_finished(const struct tcp_sender *t);   /* DONE, RESET or GAVE_UP */
const char *tcp_state_name(enum tcp_state s);

#endif
