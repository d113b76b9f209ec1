/*
 * lkvm_frame.h -- the raw workload's frame format, shared by the guest that
 * writes frames and the sink backend that checks them.
 *
 *   Ethernet header (14 bytes, ethertype 0x88b5 "local experimental")
 *   sequence number (8 bytes, little endian, 0, 1, 2, ...)
 *   payload: 64-bit words pattern(seq, j), the last one possibly cut short
 *
 * The pattern depends on the sequence number, so a buffer the host reads
 * before the guest rewrote it (a ring bug) fails the check, not just a
 * skipped or repeated frame.
 *
 * The tcp workload's byte stream uses the same pattern with one fixed
 * "sequence": byte k of the stream is byte k % 8 (little endian) of
 * lkvm_stream_word(k / 8).  A sender can regenerate any stretch of it (so a
 * retransmission needs no send buffer), and a receiver can check any byte.
 */
#ifndef LKVM_FRAME_H
#define LKVM_FRAME_H

#include <stdint.h>

#define LKVM_ETH_HLEN      14u
#define LKVM_ETHERTYPE     0x88b5u
#define LKVM_FRAME_HDR     (LKVM_ETH_HLEN + 8u)   /* Ethernet + sequence */
#define LKVM_FRAME_MIN     (LKVM_FRAME_HDR + 8u)
#define LKVM_FRAME_MAX     65535u

/* pattern(seq, w) = base(seq) ^ w * LKVM_PATTERN_WORD_MUL, so a checker
 * that walks the words in order adds LKVM_PATTERN_WORD_MUL per word instead
 * of multiplying (net_sink.c).  The constants are part of the format: the
 * guest writes with them, the sink and the receiver check with them. */
#define LKVM_PATTERN_SEQ_MUL  0x9e3779b97f4a7c15ull
#define LKVM_PATTERN_WORD_MUL 0xd1b54a32d192ed03ull
#define LKVM_PATTERN_XOR      0x5bd1e995ull

static inline uint64_t lkvm_pattern_base(uint64_t seq)
{
	return (seq * LKVM_PATTERN_SEQ_MUL) ^ LKVM_PATTERN_XOR;
}

static inline uint64_t lkvm_pattern(uint64_t seq, uint64_t word)
{
	return lkvm_pattern_base(seq) ^ (word * LKVM_PATTERN_WORD_MUL);
}

#define LKVM_STREAM_SEQ 0x54435053u   /* "TCPS" */

static inline uint64_t lkvm_stream_word(uint64_t word)
{
	return lkvm_pattern(LKVM_STREAM_SEQ, word);
}

#endif
