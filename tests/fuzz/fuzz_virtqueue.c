/*
 * fuzz_virtqueue.c -- throw arbitrary guest memory at the host ring walker.
 *
 * The input becomes 64 KiB of "guest RAM" (repeated to fill it) plus a ring
 * configuration taken from its first bytes: size (valid or not: zero, not a
 * power of two, too large), where the three areas sit, whether indirect
 * tables are allowed, the device's cap on a chain's length, and whether the
 * "guest" rewrites its RAM between walks (descriptors, avail entries, the
 * avail index, anything), as a running guest may.  The walker may refuse
 * anything it likes, but an invalid size must be refused, whatever it
 * accepts must lie inside guest RAM, chains must stay within their bounds
 * and the cap, a refusal must name its rule (vq->violation: one of the
 * ring-area rules at enable, one of the chain rules at pop, none while the
 * queue works), and it must never crash, hang or read outside the mapping
 * (ASan and the guard pages of gmem_map watch that).
 *
 * Built two ways: with -Dfuzz=true and clang, a libFuzzer target
 * (fuzz-virtqueue); always, a deterministic smoke test over pseudo-random
 * inputs (unit-fuzz-smoke) so CI exercises the same code.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_mem.h"
#include "virtqueue.h"

#define RAM (64u << 10)

static struct guest_mem gm;
static struct vq_chain chain;
static unsigned long rings_enabled, chains_accepted, rings_refused, sizes_refused, walks_mutated;
static uint32_t violations_seen;   /* bit v: vq_violation v was reached */

static uint16_t take16(const uint8_t *d, size_t n, size_t at)
{
	return at + 1 < n ? (uint16_t)(d[at] | d[at + 1] << 8) : 0;
}

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static bool enable_rule(enum vq_violation v)
{
	return v == VQV_SIZE || v == VQV_RING_MISALIGNED || v == VQV_RING_OUTSIDE_RAM;
}

/* The guest at work between two walks: rewrite a descriptor field, an
 * avail entry, sometimes the avail index, and one byte anywhere. */
static void mutate_ram(const struct vq *vq, uint64_t *x)
{
	uint64_t r = xorshift(x);
	uint8_t *desc = gm.host + vq->desc_gpa, *avail = gm.host + vq->avail_gpa;

	desc[r % (16u * vq->num)] = (uint8_t)(r >> 32);
	avail[4 + (r >> 16) % (2u * vq->num)] = (uint8_t)(r >> 40);
	if ((r >> 48) % 4 == 0)
		avail[2 + (r >> 50) % 2] = (uint8_t)(r >> 56);
	gm.host[xorshift(x) % RAM] = (uint8_t)*x;
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
	if (vq->max_chain_bytes && out + in > vq->max_chain_bytes)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Indices 0-7 valid, 8-15 not: zero, no power of two, too large. */
	static const uint16_t sizes[] = { 1, 2, 4, 8, 16, 128, 256, 1024, 0, 3, 6, 100, 1000, 1025, 2048, 65535 };
	struct vq vq = { .name = "fuzz" };
	unsigned pops = 0;
	bool mutate;
	uint64_t x;

	if (!gm.host && gmem_map(&gm, RAM) < 0)
		abort();
	if (size < 8)
		return 0;
	for (size_t off = 0; off < RAM; off += size)
		memcpy(gm.host + off, data, off + size <= RAM ? size : RAM - off);

	vq.num = sizes[data[0] & 15];
	vq.indirect_ok = data[0] & 16;
	vq.event_idx = data[0] & 32;
	mutate = data[0] & 64;
	vq.max_chain_bytes = data[0] & 128 ? 1u + take16(data, size, 7) : 0;
	vq.desc_gpa = (uint64_t)take16(data, size, 1) << 4;
	vq.avail_gpa = (uint64_t)take16(data, size, 3) << 1;
	vq.used_gpa = (uint64_t)take16(data, size, 5) << 2;
	if (vq_enable(&vq, &gm) < 0) {
		if (vq.ready || !vq.broken || !enable_rule(vq.violation))
			abort();
		if ((data[0] & 15) >= 8 && vq.violation != VQV_SIZE)   /* the size is checked first */
			abort();
		violations_seen |= 1u << vq.violation;
		sizes_refused += (data[0] & 15) >= 8;
		return 0;
	}
	if ((data[0] & 15) >= 8)     /* an invalid size was accepted */
		abort();
	rings_enabled++;
	x = 0x9e3779b97f4a7c15ull ^ take16(data, size, 9) ^ (uint64_t)size << 20;
	/* At most two rings' worth: avail idx may claim no more than one. */
	while (pops < 2u * vq.num) {
		int rc = vq_pop_avail(&vq, &chain);

		if (rc <= 0) {
			if (rc < 0 && (!vq.broken || vq.violation == VQV_NONE || enable_rule(vq.violation)))
				abort();
			if (rc == 0 && (vq.broken || vq.violation != VQV_NONE))
				abort();
			rings_refused += rc < 0;
			violations_seen |= (uint32_t)(rc < 0) << vq.violation;
			break;
		}
		if (vq.violation != VQV_NONE)
			abort();
		check_chain(&vq, &chain);
		chains_accepted++;
		vq_push_used(&vq, chain.head, (uint32_t)chain.in_len);
		pops++;
		if (mutate) {
			mutate_ram(&vq, &x);
			walks_mutated++;
		}
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
			buf[0] = (uint8_t)(4 | (x & (16 | 32 | 64 | 128)));   /* size 16; flags vary */
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
	 * the walker (chains accepted, rings refused), invalid sizes and walks
	 * over RAM the guest changed. */
	printf("%lu inputs: %lu rings enabled, %lu chains accepted, %lu rings refused, "
	       "%lu invalid sizes refused, %lu walks after RAM changed, %d kinds of violation\n",
	       iterations, rings_enabled, chains_accepted, rings_refused, sizes_refused, walks_mutated,
	       __builtin_popcount(violations_seen));
	if (!chains_accepted || !rings_refused || !sizes_refused || !walks_mutated) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
