/*
 * fuzz_virtqueue.c -- throw arbitrary guest memory at the host ring walker.
 *
 * The input becomes 64 KiB of "guest RAM" (repeated to fill it) plus a ring
 * configuration taken from its first bytes: size, where the three areas
 * sit, whether indirect tables are allowed.  The walker may refuse anything
 * it likes, but whatever it accepts must lie inside guest RAM, chains must
 * stay within their bounds, and it must never crash, hang or read outside
 * the mapping (ASan and the guard pages of gmem_map watch that).
 *
 * Built two ways: with -Dfuzz=true and clang, a libFuzzer target
 * (fuzz-virtqueue); always, a deterministic smoke test over pseudo-random
 * inputs (unit-fuzz-smoke) so CI exercises the same code.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_mem.h"
#include "virtqueue.h"

#define RAM (64u << 10)

static struct guest_mem gm;
static struct vq_chain chain;
static unsigned long rings_enabled, chains_accepted, rings_refused;

static uint16_t take16(const uint8_t *d, size_t n, size_t at)
{
	return at + 1 < n ? (uint16_t)(d[at] | d[at + 1] << 8) : 0;
}

static void check_chain(const struct vq *vq, const struct vq_chain *c)
{
	uint64_t out = 0, in = 0;

	if (c->head >= vq->num || c->count == 0 || c->count > VQ_MAX_CHAIN)
		abort();
	for (unsigned i = 0; i < c->count; i++) {
		const struct vq_buf *b = &c->buf[i];

		if (b->host < gm.host || b->host + b->len > gm.host + gm.size)
			abort();
		if (b->device_writes)
			in += b->len;
		else
			out += b->len;
	}
	if (out != c->out_len || in != c->in_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint16_t sizes[] = { 1, 2, 4, 8, 16, 128, 256, 1024 };
	struct vq vq = { .name = "fuzz" };
	unsigned pops = 0;

	if (!gm.host && gmem_map(&gm, RAM) < 0)
		abort();
	if (size < 8)
		return 0;
	for (size_t off = 0; off < RAM; off += size)
		memcpy(gm.host + off, data, off + size <= RAM ? size : RAM - off);

	vq.num = sizes[data[0] & 7];
	vq.indirect_ok = data[0] & 8;
	vq.event_idx = data[0] & 16;
	vq.desc_gpa = (uint64_t)take16(data, size, 1) << 4;
	vq.avail_gpa = (uint64_t)take16(data, size, 3) << 1;
	vq.used_gpa = (uint64_t)take16(data, size, 5) << 2;
	if (vq_enable(&vq, &gm) < 0)
		return 0;
	rings_enabled++;
	/* At most two rings' worth: avail idx may claim no more than one. */
	while (pops < 2u * vq.num) {
		int rc = vq_pop_avail(&vq, &chain);

		if (rc <= 0) {
			rings_refused += rc < 0;
			break;
		}
		check_chain(&vq, &chain);
		chains_accepted++;
		vq_push_used(&vq, chain.head, (uint32_t)chain.in_len);
		pops++;
	}
	vq_should_interrupt(&vq);
	vq_enable_notify_and_recheck(&vq);
	return 0;
}

#ifndef LKVM_LIBFUZZER
/* Smoke test: pseudo-random rings, some built to be mostly valid. */
int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	static uint8_t buf[4096];

	for (unsigned long it = 0; it < iterations; it++) {
		size_t n = 8 + (size_t)(x % (sizeof(buf) - 8));

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[i] = (uint8_t)x;
		}
		if (it & 1) {
			/* A plausible 16-entry ring (desc 0x100, avail 0x400, used
			 * 0x800) whose fields are mostly, not always, in range. */
			n = sizeof(buf);
			buf[0] = 4 | (x & 8) | (x & 16);
			buf[1] = 0x10, buf[2] = 0, buf[3] = 0x00, buf[4] = 0x02, buf[5] = 0x00, buf[6] = 0x02;
			for (unsigned d = 0; d < 16; d++) {
				uint8_t *e = buf + 0x100 + 16 * d;
				uint64_t addr;
				uint32_t len;
				uint16_t flags, next;

				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				addr = 0x1000 + x % 0xe000;
				len = (uint32_t)(x >> 20) % 2048;
				flags = (x >> 40) % 16 == 0 ? (uint16_t)(x >> 44) : (uint16_t)((x >> 36) & 3);
				next = (uint16_t)((x >> 48) % 18);
				memcpy(e, &addr, 8), memcpy(e + 8, &len, 4), memcpy(e + 12, &flags, 2), memcpy(e + 14, &next, 2);
			}
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[0x400] = buf[0x401] = 0;
			buf[0x402] = (uint8_t)(x % 20), buf[0x403] = 0;
			for (unsigned k = 0; k < 16; k++)
				buf[0x404 + 2 * k] = (uint8_t)((x >> (k * 4)) % 17), buf[0x405 + 2 * k] = 0;
		}
		LLVMFuzzerTestOneInput(buf, n);
	}
	/* The smoke test is only worth something if it reaches both sides of
	 * the walker: chains accepted and rings refused. */
	printf("%lu inputs: %lu rings enabled, %lu chains accepted, %lu rings refused\n",
	       iterations, rings_enabled, chains_accepted, rings_refused);
	if (!chains_accepted || !rings_refused) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
