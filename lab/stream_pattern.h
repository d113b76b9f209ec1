/*
 * stream_pattern.h -- write and check any stretch of the tcp workload's byte
 * stream (see lkvm_frame.h: byte k is byte k % 8, little endian, of
 * lkvm_stream_word(k / 8)).
 *
 * `send` fills its buffer with stream_fill() before each write, `receive`
 * passes every buffer it reads to stream_check().  Both take the stream
 * offset of the buffer's first byte, so reads and writes of any size, at any
 * offset (not only multiples of 8), line up with the pattern.
 */
#ifndef STREAM_PATTERN_H
#define STREAM_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#include "lkvm_frame.h"

/* Byte k of the stream; for the odd bytes at a buffer's ends, not hot loops. */
static inline uint8_t stream_byte(uint64_t k)
{
	return (uint8_t)(lkvm_stream_word(k / 8) >> (8 * (k % 8)));
}

/* Write stream bytes [offset, offset + len) to buf. */
void stream_fill(uint8_t *buf, size_t len, uint64_t offset);

/* Check buf against stream bytes [offset, offset + len).  Returns len if
 * every byte matches, else the index in buf of the first byte that does not. */
size_t stream_check(const uint8_t *buf, size_t len, uint64_t offset);

#endif
