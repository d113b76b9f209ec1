/*
 * memcpy_floor.c -- the floor for the host's device path (bench/device-path):
 * how long one CPU takes to copy what the sink copies for a raw run, and
 * nothing else.
 *
 * A raw run of --bytes payload in --frame-byte frames is ceil(bytes /
 * (frame - 22)) frames (22: Ethernet header + sequence number); the device
 * takes each as one chain of 12 (virtio-net header) + frame bytes, the last
 * frame shorter.  This program copies exactly those pieces, in that order,
 * with memcpy into one destination buffer (the one copy of a backend that
 * takes a frame out of guest memory into its own), from a pool of 2 x --ring
 * source buffers laid out as the guest lays out its own (workload_raw.c:
 * 64-byte aligned stride, twice the ring), taken in turn.  The pool is written before the clock starts and
 * once round before it, so it is as warm as this CPU's caches can keep it.
 *
 * It runs pinned to --cpu (1: where the launcher pins the net device
 * thread), and reports the copy loop's CPU time (CLOCK_THREAD_CPUTIME_ID,
 * comparable with the run's tx_device_cpu_seconds) and its wall time.
 *
 * The copies cannot be elided: after each one an empty asm statement takes
 * the destination as an input with a memory clobber, so the compiler must
 * assume the bytes are read; and a checksum of the destination is printed.
 *
 * --cross-cpu W: the floor of a device on the other core (issue 26).  A
 * writer thread on CPU W writes the frames, in the same pieces and order,
 * into the same pool, one half of it (--ring buffers) at a time, and the
 * copier on --cpu copies each half out as soon as it is written, while the
 * writer fills the other: every line it reads was just modified in the
 * other CPU's cache, as the guest's frames are when the device thread
 * takes them.  The copier times each half's copy with its thread CPU clock
 * (its waits for the writer are not the copy's cost) and reports the sum as
 * seconds_copy; seconds_cpu is then the copier thread's whole CPU time,
 * spinning on the writer included.  The writer times each half it writes
 * the same way: seconds_write, the cheapest a guest on the other CPU can
 * produce the frames (a template copied, the sequence number stamped).
 *
 * Output, one "key value" line each, in this order: mode (same-cpu |
 * cross-cpu), bytes_payload, frames, bytes_copied, piece_bytes,
 * pool_buffers, cpu, seconds_cpu, seconds_wall, seconds_copy (same-cpu:
 * = seconds_cpu), seconds_write (same-cpu: 0), gbyte_per_second (copied
 * bytes / seconds_copy, 10^9), checksum.
 * Exit status: 0, 1 on a host error (pinning, memory), 2 on bad options.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_setaffinity; meson passes it already */
#endif
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lkvm_frame.h"

#define PROG       "bench-memcpy-floor"
#define NET_HDR    12u   /* struct virtio_net_hdr_v1, as the raw workload sends it */

static const char usage[] =
	"usage: " PROG " [--bytes SIZE] [--frame N] [--ring N] [--cpu N] [--cross-cpu W]\n"
	"\n"
	"Copy what the sink copies for a raw run of SIZE payload bytes -- one\n"
	"12 + N byte piece per frame, from a pool of 2 x ring buffers in turn,\n"
	"into one destination -- on one pinned CPU, and print the seconds.\n"
	"\n"
	"  --bytes SIZE   payload bytes, K/M/G suffixes (1G)\n"
	"  --frame N      Ethernet frame size, 30..65523 (1514)\n"
	"  --ring N       TX ring size, a power of two up to 1024: the pool is 2 x N (128)\n"
	"  --cpu N        the CPU to run on, -1 for none (1, the net device thread's)\n"
	"  --cross-cpu W  a writer on CPU W writes each half of the pool just before the\n"
	"                 copier on --cpu copies it out: the floor across CPUs\n"
	"  -h, --help     this text\n";

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (--help)\n");
	return 2;
}

static int parse_u64(const char *s, uint64_t *out, int suffixes)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (suffixes && *end) {
		unsigned shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20
			       : *end == 'G' || *end == 'g' ? 30 : 0;

		if (!shift || end[1] || v > (UINT64_MAX >> shift))
			return -1;
		v <<= shift;
		end++;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static double seconds_of(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The frame the guest would write (workload_raw.c's fill_frame), so the
 * source is real data, not zero pages. */
static void fill(uint8_t *buf, uint32_t frame, uint64_t seq)
{
	uint8_t *f = buf + NET_HDR;
	uint32_t payload = frame - LKVM_FRAME_HDR;

	memset(buf, 0, NET_HDR);
	memset(f, 0xff, LKVM_FRAME_HDR);
	memcpy(f + LKVM_ETH_HLEN, &seq, 8);
	for (uint32_t j = 0; j < payload / 8; j++) {
		uint64_t w = lkvm_pattern(seq, j);

		memcpy(f + LKVM_FRAME_HDR + 8 * j, &w, 8);
	}
}

/* ---- --cross-cpu: a writer on one CPU, the copier on another ---- */

static int pin_to(long long cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The pool's two halves, handed back and forth: full[h] is set by the
 * writer when half h holds its next frames, cleared by the copier when it
 * has copied them. */
struct cross {
	uint8_t *pool;
	uint64_t stride, ring, frames, bytes, frame;
	long long writer_cpu;
	int full[2];
	int failed;
	double write_seconds;   /* the writer's, its halves only (set before it ends) */
};

static void cpu_pause(void)
{
	__builtin_ia32_pause();
}

/* What one timed section costs with nothing in it: the median of 101
 * back-to-back pairs of CLOCK_THREAD_CPUTIME_ID reads (a system call each). */
static double empty_section_seconds(void)
{
	double d[101];

	for (int i = 0; i < 101; i++) {
		double a = seconds_of(CLOCK_THREAD_CPUTIME_ID);

		d[i] = seconds_of(CLOCK_THREAD_CPUTIME_ID) - a;
	}
	for (int i = 1; i < 101; i++)   /* insertion sort: 101 values */
		for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
			double t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return d[50];
}

/* The writer: each frame's bytes, with its sequence number, into its slot
 * of the half whose turn it is -- as the guest writes a frame into the
 * buffer it is about to queue. */
static void *writer_main(void *arg)
{
	struct cross *x = arg;
	uint64_t payload = x->frame - LKVM_FRAME_HDR, left = x->bytes;
	uint8_t *tmpl = malloc(NET_HDR + x->frame);
	double empty;

	if (pin_to(x->writer_cpu) < 0 || !tmpl) {
		__atomic_store_n(&x->failed, 1, __ATOMIC_RELEASE);
		free(tmpl);
		return NULL;
	}
	fill(tmpl, (uint32_t)x->frame, 0);
	empty = empty_section_seconds();
	for (uint64_t seq = 0; seq < x->frames;) {
		unsigned h = (unsigned)((seq / x->ring) & 1);
		double t0;

		while (__atomic_load_n(&x->full[h], __ATOMIC_ACQUIRE))
			cpu_pause();
		t0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
		for (uint64_t i = 0; i < x->ring && seq < x->frames; i++, seq++) {
			uint8_t *b = x->pool + (h * x->ring + i) * x->stride;
			uint64_t len = left < payload ? left : payload;

			memcpy(b, tmpl, NET_HDR + LKVM_FRAME_HDR + len);
			memcpy(b + NET_HDR + LKVM_ETH_HLEN, &seq, 8);
			left -= len;
		}
		x->write_seconds += seconds_of(CLOCK_THREAD_CPUTIME_ID) - t0 - empty;
		__atomic_store_n(&x->full[h], 1, __ATOMIC_RELEASE);
	}
	free(tmpl);
	return NULL;
}

/* The copier, on this thread: returns the CPU seconds spent copying, each
 * half timed with the thread's CPU clock (so time another process had the
 * CPU is not counted on a shared machine) less the clock's own price. */
static double copy_across(struct cross *x, uint8_t *dst, uint64_t *copied)
{
	uint64_t payload = x->frame - LKVM_FRAME_HDR, left = x->bytes;
	double seconds = 0, empty = empty_section_seconds();

	for (uint64_t seq = 0; seq < x->frames;) {
		unsigned h = (unsigned)((seq / x->ring) & 1);
		double t0;

		while (!__atomic_load_n(&x->full[h], __ATOMIC_ACQUIRE))
			if (__atomic_load_n(&x->failed, __ATOMIC_ACQUIRE))
				return 0;
			else
				cpu_pause();
		t0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
		for (uint64_t i = 0; i < x->ring && seq < x->frames; i++, seq++) {
			uint64_t len = left < payload ? left : payload;
			size_t piece = NET_HDR + LKVM_FRAME_HDR + len;

			memcpy(dst, x->pool + (h * x->ring + i) * x->stride, piece);
			__asm__ volatile("" : : "r"(dst) : "memory");
			*copied += piece;
			left -= len;
		}
		seconds += seconds_of(CLOCK_THREAD_CPUTIME_ID) - t0 - empty;
		__atomic_store_n(&x->full[h], 0, __ATOMIC_RELEASE);
	}
	return seconds;
}

int main(int argc, char **argv)
{
	uint64_t bytes = 1ull << 30, frame = 1514, ring = 128, payload, frames, copied = 0, pool_n, stride;
	long long cpu = 1, writer_cpu = -2;   /* -2: no --cross-cpu */
	double write_seconds = 0, copy_seconds;
	uint8_t *pool, *dst;
	double c0, c1, w0, w1;
	uint64_t sum = 0;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		if (strcmp(o, "--bytes") && strcmp(o, "--frame") && strcmp(o, "--ring") && strcmp(o, "--cpu") &&
		    strcmp(o, "--cross-cpu"))
			return bad_usage("unknown option '%s'", o);
		if (!v)
			return bad_usage("%s needs a value", o);
		i++;
		if (!strcmp(o, "--bytes")) {
			if (parse_u64(v, &bytes, 1) < 0 || !bytes || bytes > (1ull << 40))
				return bad_usage("--bytes '%s': give 1 byte to 1T, K/M/G suffixes", v);
		} else if (!strcmp(o, "--frame")) {
			if (parse_u64(v, &frame, 0) < 0 || frame < LKVM_FRAME_MIN || frame > LKVM_FRAME_MAX - NET_HDR)
				return bad_usage("--frame '%s': give 30..65523", v);
		} else if (!strcmp(o, "--ring")) {
			if (parse_u64(v, &ring, 0) < 0 || !ring || ring > 1024 || (ring & (ring - 1)))
				return bad_usage("--ring '%s': give a power of two up to 1024", v);
		} else {
			char *end;
			long long n;

			errno = 0;
			n = strtoll(v, &end, 10);
			if (!strcmp(o, "--cross-cpu")) {
				if (errno || *end || end == v || n < 0 || n >= CPU_SETSIZE)
					return bad_usage("--cross-cpu '%s': give the writer's CPU number", v);
				writer_cpu = n;
			} else {
				if (errno || *end || end == v || n < -1 || n >= CPU_SETSIZE)
					return bad_usage("--cpu '%s': give a CPU number, or -1", v);
				cpu = n;
			}
		}
	}

	if (writer_cpu >= 0 && writer_cpu == cpu)
		return bad_usage("--cross-cpu '%s': the writer needs a CPU other than --cpu's", argv[argc - 1]);
	if (cpu >= 0) {
		if (pin_to(cpu) < 0) {
			fprintf(stderr, PROG ": cannot run on CPU %lld: %s -- give --cpu -1 or another CPU\n", cpu,
				strerror(errno));
			return 1;
		}
	}

	payload = frame - LKVM_FRAME_HDR;
	frames = (bytes + payload - 1) / payload;
	pool_n = 2 * ring;
	stride = (NET_HDR + frame + 63) & ~63ull;
	pool = aligned_alloc(4096, (pool_n * stride + 4095) & ~4095ull);
	dst = aligned_alloc(64, (NET_HDR + LKVM_FRAME_MAX + 63) & ~63ull);
	if (!pool || !dst) {
		fprintf(stderr, PROG ": out of memory for %" PRIu64 " buffers of %" PRIu64 " bytes\n", pool_n,
			stride);
		return 1;
	}
	memset(dst, 0, NET_HDR + LKVM_FRAME_MAX);
	for (uint64_t i = 0; i < pool_n; i++)
		fill(pool + i * stride, (uint32_t)frame, i);
	/* One round untimed: the pool and the destination in this CPU's caches. */
	for (uint64_t i = 0; i < pool_n; i++) {
		memcpy(dst, pool + i * stride, NET_HDR + frame);
		__asm__ volatile("" : : "r"(dst) : "memory");
	}

	if (writer_cpu >= 0) {
		struct cross x = { .pool = pool, .stride = stride, .ring = ring, .frames = frames, .bytes = bytes,
				   .frame = frame, .writer_cpu = writer_cpu };
		pthread_t writer;

		w0 = seconds_of(CLOCK_MONOTONIC);
		c0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
		if (pthread_create(&writer, NULL, writer_main, &x)) {
			fprintf(stderr, PROG ": cannot start the writer thread\n");
			return 1;
		}
		copy_seconds = copy_across(&x, dst, &copied);
		pthread_join(writer, NULL);
		write_seconds = x.write_seconds;
		c1 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
		w1 = seconds_of(CLOCK_MONOTONIC);
		if (x.failed) {
			fprintf(stderr, PROG ": the writer cannot run on CPU %lld: give another --cross-cpu\n", writer_cpu);
			return 1;
		}
		goto report;
	}

	w0 = seconds_of(CLOCK_MONOTONIC);
	c0 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
	for (uint64_t seq = 0, left = bytes, slot = 0; seq < frames; seq++) {
		uint64_t len = left < payload ? left : payload;
		size_t piece = NET_HDR + LKVM_FRAME_HDR + len;

		memcpy(dst, pool + slot * stride, piece);
		/* The copy is "read" here: the compiler must make it. */
		__asm__ volatile("" : : "r"(dst) : "memory");
		copied += piece;
		left -= len;
		if (++slot == pool_n)
			slot = 0;
	}
	c1 = seconds_of(CLOCK_THREAD_CPUTIME_ID);
	w1 = seconds_of(CLOCK_MONOTONIC);
	copy_seconds = c1 - c0;

report:
	for (uint64_t i = 0; i < NET_HDR + frame; i += 8) {
		uint64_t w = 0;

		memcpy(&w, dst + i, NET_HDR + frame - i < 8 ? NET_HDR + frame - i : 8);
		sum = sum * 31 + w;
	}
	printf("mode               %s\n", writer_cpu >= 0 ? "cross-cpu" : "same-cpu");
	printf("bytes_payload      %" PRIu64 "\n", bytes);
	printf("frames             %" PRIu64 "\n", frames);
	printf("bytes_copied       %" PRIu64 "\n", copied);
	printf("piece_bytes        %" PRIu64 "\n", NET_HDR + frame);
	printf("pool_buffers       %" PRIu64 "\n", pool_n);
	printf("cpu                %lld\n", cpu);
	printf("seconds_cpu        %.6f\n", c1 - c0);
	printf("seconds_wall       %.6f\n", w1 - w0);
	printf("seconds_copy       %.6f\n", copy_seconds);
	printf("seconds_write      %.6f\n", write_seconds);
	printf("gbyte_per_second   %.3f\n", copy_seconds > 0 ? copied / copy_seconds / 1e9 : 0.0);
	printf("checksum           0x%016" PRIx64 "\n", sum);
	free(pool);
	free(dst);
	return 0;
}
