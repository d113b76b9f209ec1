/*
 * tcp_sender.c -- the TCP sender's decisions (see tcp_sender.h).
 *
 * Data flows one way: tcp_next() hands out segments from `nxt` while the
 * peer's window allows, tcp_input() moves `una` forward on cumulative ACKs
 * and reopens the window, tcp_on_timer() rewinds `nxt` to `una` when an
 * ACK is overdue.  The FIN is offset `total` of the same space, one byte
 * long, so "everything acknowledged" is simply una == total + 1.
 */
#include "tcp_sender.h"

static uint32_t seq_of(const struct tcp_sender *t, uint64_t off)
{
	return t->cfg.iss + 1 + (uint32_t)off;
}

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

void tcp_sender_init(struct tcp_sender *t, const struct tcp_sender_config *cfg)
{
	*t = (struct tcp_sender){ .cfg = *cfg };
	t->state = TCP_CLOSED;
	t->mss = cfg->mss & ~7u;   /* 8-byte multiples keep stream offsets word-aligned */
	t->rto = cfg->rto_initial;
	t->syn_needed = true;
}

uint64_t tcp_acked(const struct tcp_sender *t)
{
	return min64(t->una, t->cfg.total);
}

bool tcp_finished(const struct tcp_sender *t)
{
	return t->state == TCP_DONE || t->state == TCP_RESET || t->state == TCP_GAVE_UP;
}

const char *tcp_state_name(enum tcp_state s)
{
	static const char *const names[] = {
		[TCP_CLOSED] = "closed", [TCP_SYN_SENT] = "syn-sent", [TCP_ESTABLISHED] = "established",
		[TCP_FIN_ACKED] = "fin-acked", [TCP_DONE] = "done", [TCP_RESET] = "reset",
		[TCP_GAVE_UP] = "gave-up",
	};
	return names[s];
}

uint64_t tcp_deadline(const struct tcp_sender *t)
{
	return t->deadline;
}

/* RFC 6298: SRTT and RTTVAR from one sample; RTO = SRTT + 4 RTTVAR. */
static void rtt_sample(struct tcp_sender *t, uint64_t r)
{
	uint64_t rto;

	t->rtt_samples++;
	if (!t->srtt) {
		t->srtt = r ? r : 1;
		t->rttvar = r / 2;
	} else {
		uint64_t err = t->srtt > r ? t->srtt - r : r - t->srtt;

		t->rttvar = (3 * t->rttvar + err) / 4;
		t->srtt = (7 * t->srtt + r) / 8;
	}
	rto = t->srtt + 4 * t->rttvar;
	t->rto = rto < t->cfg.rto_min ? t->cfg.rto_min : rto > t->cfg.rto_max ? t->cfg.rto_max : rto;
	t->timing = false;
}

static void on_syn_ack(struct tcp_sender *t, const struct tcp_seg *in, uint64_t now)
{
	uint16_t peer_mss = in->mss ? in->mss : 536;   /* RFC 879's default */

	t->irs = in->seq;
	t->rcv_nxt = in->seq + 1;
	if (peer_mss < t->mss)
		t->mss = peer_mss & ~7u;
	if (!t->mss)
		t->mss = 8;
	/* Scaling holds only if both sides offered it; we always do. */
	t->peer_wscale = in->wscale < 0 ? 0 : in->wscale > 14 ? 14 : (uint8_t)in->wscale;
	t->wnd = in->window;    /* a SYN's window is never scaled */
	t->state = TCP_ESTABLISHED;
	t->ack_pending = true;
	t->deadline = 0;
	t->timeouts_in_row = 0;
	if (t->timing)
		rtt_sample(t, now - t->timed_at);
}

/* A cumulative ACK; `d` is how far it moves una (0: a duplicate). */
static void on_ack(struct tcp_sender *t, const struct tcp_seg *in, uint64_t now)
{
	uint32_t d = in->ack - seq_of(t, t->una);
	uint64_t wnd = (uint64_t)in->window << t->peer_wscale;

	if (t->una + d > t->max_sent)
		return;                 /* acknowledges what we never sent (or is old): ignore */
	t->timeouts_in_row = 0;         /* the peer is alive, even if the window is shut */
	if (d == 0) {
		if (in->len == 0 && !(in->flags & (TCP_SYN | TCP_FIN)) && wnd == t->wnd && t->una < t->max_sent) {
			t->dupacks_total++;
			if (++t->dupacks == 3) {
				t->fast_retransmits++;
				t->rexmit_one = true;
			}
		}
		t->wnd = wnd;
		return;
	}
	t->una += d;
	t->wnd = wnd;
	t->dupacks = 0;
	if (t->nxt < t->una)
		t->nxt = t->una;
	if (t->timing && t->una >= t->timed_off)
		rtt_sample(t, now - t->timed_at);
	t->deadline = t->una == t->max_sent ? 0 : now + t->rto;
	if (t->una == t->cfg.total + 1)
		t->state = t->peer_fin ? TCP_DONE : TCP_FIN_ACKED;
}

void tcp_input(struct tcp_sender *t, const struct tcp_seg *in, uint64_t now)
{
	bool fin_in_order;

	t->segments_received++;
	if (tcp_finished(t) && t->state != TCP_DONE)
		return;
	if (in->flags & TCP_RST) {
		/* Acceptable: in SYN_SENT it must acknowledge our SYN; later
		 * it must fall inside the window we advertise. */
		if (t->state == TCP_SYN_SENT ? (in->flags & TCP_ACK) && in->ack == t->cfg.iss + 1
					     : (uint32_t)(in->seq - t->rcv_nxt) < 0xffff) {
			t->state = TCP_RESET;
			t->deadline = 0;
		}
		return;
	}
	if (t->state == TCP_SYN_SENT) {
		if ((in->flags & (TCP_SYN | TCP_ACK)) == (TCP_SYN | TCP_ACK) && in->ack == t->cfg.iss + 1)
			on_syn_ack(t, in, now);
		return;
	}
	if (t->state == TCP_CLOSED)
		return;
	if (in->flags & TCP_SYN) {      /* our ACK of its SYN was lost: say it again */
		t->ack_pending = true;
		return;
	}
	if (in->flags & TCP_ACK)
		on_ack(t, in, now);
	/* We expect no data, but take in-order bytes (and discard them) so a
	 * peer that talks is acknowledged rather than stalled. */
	fin_in_order = in->seq == t->rcv_nxt;
	if (in->len) {
		if (fin_in_order)
			t->rcv_nxt += in->len;
		t->ack_pending = true;
	}
	if (in->flags & TCP_FIN) {
		t->ack_pending = true;
		if (fin_in_order && !t->peer_fin) {
			t->rcv_nxt++;
			t->peer_fin = true;
		}
	}
	if (t->peer_fin && t->state == TCP_FIN_ACKED)
		t->state = TCP_DONE;
}

static void arm_if_idle(struct tcp_sender *t, uint64_t now)
{
	if (!t->deadline)
		t->deadline = now + t->rto;
}

/* Fill `out` with the segment at offset `off` of `len` bytes (or the FIN). */
static void make_segment(struct tcp_sender *t, struct tcp_out *out, uint64_t off, uint32_t len, uint64_t now)
{
	bool fin = off == t->cfg.total;

	*out = (struct tcp_out){
		.seq = seq_of(t, off), .ack = t->rcv_nxt, .off = off,
		.len = fin ? 0 : len,
		.flags = TCP_ACK | (fin ? TCP_FIN : len ? TCP_PSH : 0),
	};
	if (off + (fin ? 1 : len) <= t->max_sent) {
		t->retransmits++;
	} else {
		if (!t->timing) {
			t->timing = true;
			t->timed_off = off + (fin ? 1 : len);
			t->timed_at = now;
		}
		t->max_sent = off + (fin ? 1 : len);
	}
	t->segments_sent++;
	t->bytes_sent += out->len;
	t->ack_pending = false;
	arm_if_idle(t, now);
}

/* Payload per segment: one MSS, or with TSO as many whole MSS as fit in
 * what the device takes at once (it cuts them to MSS on the wire). */
static uint64_t segment_size(const struct tcp_sender *t)
{
	return t->cfg.tso_max >= t->mss ? t->cfg.tso_max / t->mss * t->mss : t->mss;
}

bool tcp_next(struct tcp_sender *t, uint64_t now, struct tcp_out *out)
{
	uint64_t limit;

	if (t->state == TCP_CLOSED || (t->state == TCP_SYN_SENT && t->syn_needed)) {
		*out = (struct tcp_out){ .seq = t->cfg.iss, .flags = TCP_SYN, .syn_options = true };
		if (t->state == TCP_CLOSED) {
			t->timing = true;
			t->timed_at = now;
		}
		t->state = TCP_SYN_SENT;
		t->syn_needed = false;
		t->segments_sent++;
		arm_if_idle(t, now);
		return true;
	}
	if (t->state != TCP_ESTABLISHED && t->state != TCP_FIN_ACKED && t->state != TCP_DONE)
		return false;
	if (t->rexmit_one && t->una <= t->cfg.total) {
		t->rexmit_one = false;
		make_segment(t, out, t->una, (uint32_t)min64(t->mss, t->cfg.total - t->una), now);
		return true;
	}
	if (t->probe_needed && t->nxt < t->cfg.total) {
		/* Zero window and nothing in flight: one byte past the window. */
		t->probe_needed = false;
		t->window_probes++;
		make_segment(t, out, t->nxt, 1, now);
		t->nxt++;
		return true;
	}
	limit = t->una + t->wnd;
	if (t->nxt < t->cfg.total) {
		uint64_t len = min64(min64(segment_size(t), t->cfg.total - t->nxt), limit > t->nxt ? limit - t->nxt : 0);

		/* Sender-side silly-window avoidance: no runt while data is in
		 * flight (its ACK will open the window further). */
		if (len && (len >= t->mss || t->nxt + len == t->cfg.total || t->nxt == t->una)) {
			make_segment(t, out, t->nxt, (uint32_t)len, now);
			t->nxt += len;
			return true;
		}
		if (!len && t->nxt == t->una)
			arm_if_idle(t, now);   /* the persist timer */
	} else if (t->nxt == t->cfg.total) {
		make_segment(t, out, t->nxt, 0, now);   /* FIN: needs no window */
		t->nxt++;
		return true;
	}
	if (t->ack_pending) {
		*out = (struct tcp_out){ .seq = seq_of(t, t->nxt), .ack = t->rcv_nxt, .flags = TCP_ACK, .off = t->nxt };
		t->ack_pending = false;
		t->segments_sent++;
		return true;
	}
	return false;
}

void tcp_on_timer(struct tcp_sender *t, uint64_t now)
{
	if (!t->deadline || now < t->deadline || tcp_finished(t))
		return;
	t->deadline = 0;
	t->timeouts++;
	if (++t->timeouts_in_row > t->cfg.max_timeouts) {
		t->state = TCP_GAVE_UP;
		return;
	}
	t->rto = min64(2 * t->rto, t->cfg.rto_max);
	t->timing = false;              /* Karn: no samples across a retransmission */
	t->dupacks = 0;
	if (t->state == TCP_SYN_SENT) {
		t->syn_needed = true;
		return;
	}
	if (t->una < t->max_sent) {
		t->nxt = t->una;        /* go back N */
		arm_if_idle(t, now);
	} else if (t->nxt < t->cfg.total) {
		t->probe_needed = true; /* nothing in flight, window shut */
	}
}
