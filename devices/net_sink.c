/*
 * net_sink.c -- copy a frame out of guest memory and check it.
 *
 * The copy goes into one host buffer, as writev() to a tap device would; the
 * check then reads that buffer, which is cache-hot.  A bad frame is counted
 * and the first reason kept, but the ring goes on: a wrong frame is the
 * guest's (or our) data bug, not a broken ring.
 *
 * Checking the frame in place instead, without the copy, was measured with
 * bench/device-path and was no faster: the bytes come from the guest's
 * CPU's cache either way, and libc's memcpy pulls them over at least as
 * fast as a checking loop does; the second pass, in L1, is cheap once it is
 * vectorised (first_bad_word).
 *
 * As a backend (net_sink_ops): the drain's chains come in through
 * sink_transmit; the stats block's verdict is "ok" or the first bad
 * frame's reason, and its payload is what passed verification.
 */
#include "net_sink.h"

#include <linux/virtio_net.h>
#include <stdio.h>
#include <string.h>

static int sink_bad(struct net_sink *sink, const char *fmt, unsigned long long a, unsigned long long b)
{
	if (!sink->bad_frames++)
		snprintf(sink->first_error, sizeof(sink->first_error), fmt, a, b);
	return -1;
}

/* Two 64-bit lanes: one SSE2 register on any x86-64 (GCC's and clang's
 * generic vectors; wider ones would be split and spilled without AVX). */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

/* The first of `words` words at p that differs from pattern(seq, w) --
 * base ^ w * LKVM_PATTERN_WORD_MUL -- or `words` if none does.  The sink's
 * hot loop, on the frame it just copied (in L1): 8 words a step, their
 * differences OR-ed together with no branch per word; only a step that
 * differs is looked at word by word. */
static size_t first_bad_word(const uint8_t *p, size_t words, uint64_t base)
{
	const uint64_t k = LKVM_PATTERN_WORD_MUL;
	const u64x2 vbase = { base, base }, step = { 8 * k, 8 * k };
	u64x2 m0 = { 0, k }, m1 = m0 + 2 * k, m2 = m0 + 4 * k, m3 = m0 + 6 * k;
	size_t i = 0;
	uint64_t m;

	for (; i + 8 <= words; i += 8, m0 += step, m1 += step, m2 += step, m3 += step) {
		u64x2 a, b, c, d, diff;

		memcpy(&a, p + 8 * i, 16);
		memcpy(&b, p + 8 * i + 16, 16);
		memcpy(&c, p + 8 * i + 32, 16);
		memcpy(&d, p + 8 * i + 48, 16);
		diff = (a ^ vbase ^ m0) | (b ^ vbase ^ m1) | (c ^ vbase ^ m2) | (d ^ vbase ^ m3);
		if (diff[0] | diff[1])
			break;
	}
	for (m = i * k; i < words; i++, m += k) {
		uint64_t got;

		memcpy(&got, p + 8 * i, 8);
		if (got != (base ^ m))
			return i;
	}
	return words;
}

int net_sink_consume(struct net_sink *sink, const struct vq_chain *chain)
{
	const size_t hdr = sizeof(struct virtio_net_hdr_v1);
	size_t len = 0, words;
	const uint8_t *f;
	uint16_t ethertype;
	uint64_t seq, w;

	for (unsigned i = 0; i < chain->count; i++) {
		const struct vq_buf *b = &chain->buf[i];

		if (b->device_writes)
			continue;
		if (b->len > sizeof(sink->frame) - len)
			return sink_bad(sink, "frame of more than %llu bytes (frame %llu)",
					sizeof(sink->frame) - hdr, sink->frames);
		memcpy(sink->frame + len, b->host, b->len);
		len += b->len;
	}
	if (len < hdr + LKVM_FRAME_HDR + 1)
		return sink_bad(sink, "runt frame of %llu bytes after frame %llu", len, sink->frames);
	f = sink->frame + hdr;
	len -= hdr;
	ethertype = (uint16_t)(f[12] << 8 | f[13]);
	if (ethertype != LKVM_ETHERTYPE)
		return sink_bad(sink, "ethertype 0x%llx, expected 0x88b5 (frame %llu)", ethertype, sink->frames);
	memcpy(&seq, f + LKVM_ETH_HLEN, 8);
	if (seq != sink->next_seq)
		return sink_bad(sink, "sequence %llu where %llu was due (lost, repeated or reordered frame)",
				seq, sink->next_seq);
	sink->next_seq = seq + 1;

	f += LKVM_FRAME_HDR;
	len -= LKVM_FRAME_HDR;
	words = len / 8;
	w = first_bad_word(f, words, lkvm_pattern_base(seq));
	if (w < words)
		return sink_bad(sink, "payload mismatch in frame %llu at byte %llu", seq, 8 * w);
	if (len % 8) {           /* a cut last word: its first bytes, little endian */
		uint64_t got = 0;

		memcpy(&got, f + 8 * words, len % 8);
		if ((got ^ lkvm_pattern(seq, words)) & ((1ull << 8 * (len % 8)) - 1))
			return sink_bad(sink, "payload mismatch in frame %llu at byte %llu", seq, 8 * words);
	}
	sink->frames++;
	sink->payload_bytes += len;
	return 0;
}

/* ---- the backend table (net_backend.h) ---- */

static int sink_transmit(void *be, const struct vq_chain *chain, uint64_t negotiated)
{
	(void)negotiated;   /* the sink reads the frame, never the header */
	return net_sink_consume(be, chain);
}

_Static_assert(sizeof(struct net_sink) <= NET_BACKEND_STATE_BYTES, "struct net_sink outgrew the device's room for it");

static void sink_tx_totals(const void *be, struct net_backend_tx_totals *out)
{
	const struct net_sink *sink = be;

	out->frames = sink->frames;
	out->bad = sink->bad_frames;
	out->payload_bytes = sink->payload_bytes;
	out->verdict = sink->bad_frames ? sink->first_error : "ok";
}

const struct net_backend_ops net_sink_ops = {
	.name = "sink",
	.transmit = sink_transmit,
	.tx_totals = sink_tx_totals,
};
