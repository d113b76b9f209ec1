/*
 * stream_pattern.c -- generate and verify the tcp byte stream at memory speed.
 *
 * The receiver checks every byte it reads, so this check bounds how fast a
 * verified transfer can go: it has to stay well ahead of loopback TCP
 * (> 20 Gbit/s).  So the middle of a buffer is handled a 64-bit word at a
 * time, with lkvm_stream_word() inlined (one multiply per word), and a block
 * of words is compared as one OR of differences -- no branch per word, so
 * the compiler may unroll or vectorise it.  Only a block that differs is
 * searched byte by byte for the exact offset.  The bytes before the stream's
 * next word boundary and after the last whole word are done one at a time;
 * there are at most 7 of each per buffer.
 */
#include "stream_pattern.h"

#include <endian.h>
#include <string.h>

#define CHECK_BLOCK_WORDS 64u   /* 512 bytes per OR-reduction */

void stream_fill(uint8_t *buf, size_t len, uint64_t offset)
{
	size_t i = 0;

	for (; i < len && ((offset + i) & 7); i++)
		buf[i] = stream_byte(offset + i);
	{
		uint64_t w = (offset + i) / 8;
		size_t words = (len - i) / 8;

		for (size_t j = 0; j < words; j++) {
			uint64_t v = htole64(lkvm_stream_word(w + j));

			memcpy(buf + i + 8 * j, &v, 8);
		}
		i += 8 * words;
	}
	for (; i < len; i++)
		buf[i] = stream_byte(offset + i);
}

/* Index of the first wrong byte in buf[from, to), or `to`. */
static size_t first_bad_byte(const uint8_t *buf, size_t from, size_t to, uint64_t offset)
{
	for (size_t i = from; i < to; i++)
		if (buf[i] != stream_byte(offset + i))
			return i;
	return to;
}

size_t stream_check(const uint8_t *buf, size_t len, uint64_t offset)
{
	size_t i = 0, words, j;
	uint64_t w;

	for (; i < len && ((offset + i) & 7); i++)
		if (buf[i] != stream_byte(offset + i))
			return i;

	/* Now buf + i is at a word boundary of the stream (not necessarily of
	 * memory: memcpy makes the unaligned load safe and free on x86). */
	w = (offset + i) / 8;
	words = (len - i) / 8;
	for (j = 0; j < words; ) {
		size_t n = words - j < CHECK_BLOCK_WORDS ? words - j : CHECK_BLOCK_WORDS;
		const uint8_t *p = buf + i + 8 * j;
		uint64_t diff = 0;

		for (size_t k = 0; k < n; k++) {
			uint64_t got;

			memcpy(&got, p + 8 * k, 8);
			diff |= le64toh(got) ^ lkvm_stream_word(w + j + k);
		}
		if (diff)
			return first_bad_byte(buf, i + 8 * j, i + 8 * (j + n), offset);
		j += n;
	}
	i += 8 * words;
	return first_bad_byte(buf, i, len, offset);
}
