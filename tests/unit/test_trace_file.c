/*
 * test_trace_file.c -- the trace file (launcher/trace_file.c) without a
 * guest: a synthetic run's timeline written and read back byte for byte,
 * then every kind of broken file the reader must refuse with -1.
 *
 * The timeline comes from a small simulation of the 2008 mechanism
 * (simulate): a guest adds frames and kicks under an adaptive threshold,
 * the host drains on a notify, sets NO_NOTIFY and polls from a timer whose
 * length follows 2008's +10/-1 us rule.  Its events are not a real run's,
 * but they are consistent the way a real run's are: sorted, every type
 * present, and the header's counters equal to what the events count.
 *
 * The same simulation is the integration test's input (test_trace_cmd.sh):
 *
 *   unit-trace-file --write FILE [--frames N] [--lost]
 *
 * writes one such file and exits, so that `lguest-kvm trace` can be tested
 * with no VM, and the file's layout comes from one place, trace_file.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "diag.h"
#include "trace_file.h"

#define TSC_KHZ     2000000u     /* 2 GHz: 2000 ticks per us */
#define RING        128u
#define TIMEOUT_US0 500u          /* 2008's adaptive timer starts here */

struct sim {
	struct lkvm_trace_event *ev;
	uint64_t n, cap;
	struct trace_file_header h;
};

static void emit(struct sim *s, uint64_t tsc, uint16_t type, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4096;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev) {
			fprintf(stderr, "out of memory\n");
			exit(1);
		}
	}
	s->ev[s->n++] = (struct lkvm_trace_event){ .tsc = tsc, .type = type, .queue = 1, .a = a, .b = b, .c = c, .d = d };
	if (trace_event_side(type) == 'g')
		s->h.guest_events++;
}

static uint64_t us(double v)
{
	return (uint64_t)(v * (TSC_KHZ / 1000));
}

/* Stable by stamp: the simulation emits each side in order, but a timer
 * expiry can land between two guest events already written. */
static int by_tsc(const void *a, const void *b)
{
	const struct lkvm_trace_event *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Both sides' state in the simulation. */
struct ring_state {
	uint64_t t;                 /* the guest's clock */
	uint64_t deadline;          /* the host's timer; 0: not armed */
	uint32_t outstanding, threshold, timeout_us, last_drained;
	bool no_notify;             /* the host has asked not to be notified */
};

/* The host's drain: buffers taken, its duration, NO_NOTIFY and the timer. */
static void drain(struct sim *s, struct ring_state *r, uint64_t t, uint32_t cause)
{
	uint32_t n = r->outstanding;

	emit(s, t, LKVM_TR_DRAIN, n, (uint32_t)us(0.05 * n + 0.3), cause, 0);
	emit(s, t + us(0.1), LKVM_TR_IRQ_RAISE, 0, 0, 0, 0);
	r->outstanding = 0;
	if (cause == LKVM_TRC_TIMER && !n) {
		/* an empty poll: listen again, 2008's "no more work" */
		emit(s, t + us(0.2), LKVM_TR_NO_NOTIFY_CLEAR, 0, 0, 0, 0);
		r->deadline = 0;
		r->no_notify = false;
		return;
	}
	/* 2008's adaptive rule: fewer than last time, the timer was too long */
	r->timeout_us = n < r->last_drained ? r->timeout_us - 1 : r->timeout_us + 10;
	r->last_drained = n;
	if (cause == LKVM_TRC_NOTIFY)
		emit(s, t + us(0.2), LKVM_TR_NO_NOTIFY_SET, 0, 0, 0, 0);
	if (r->deadline && cause != LKVM_TRC_TIMER)
		emit(s, t + us(0.25), LKVM_TR_TIMER_CANCEL, 0, 0, 0, 0);
	emit(s, t + us(0.3), LKVM_TR_TIMER_ARM, r->timeout_us, 0, 0, 0);
	r->deadline = t + us(0.3) + us(r->timeout_us);
	r->no_notify = true;
}

/* Every expiry due by `until`, late by 0-12 us. */
static void run_timer(struct sim *s, struct ring_state *r, uint64_t until)
{
	while (r->deadline && r->deadline <= until) {
		uint64_t fire = r->deadline + us((double)(r->deadline % 13));

		emit(s, fire, LKVM_TR_TIMER_FIRE, 0, 0, 0, 0);
		s->h.stat_timeouts++;
		drain(s, r, fire + us(0.5), LKVM_TRC_TIMER);
		if (!r->no_notify)
			emit(s, fire + us(1), LKVM_TR_IRQ_TAKEN, 1, 0, 0, 0);
		r->t = r->t > fire + us(1) ? r->t : fire + us(1);
	}
}

/* The guest's notify, forced or not, and the host's drain it causes. */
static void notify(struct sim *s, struct ring_state *r, uint64_t t)
{
	s->h.stat_guest_notifies++;
	emit(s, t + us(0.4), LKVM_TR_NOTIFY, 0, 0, 0, 0);
	s->h.stat_notify_wakeups++;
	s->h.stat_host_notifies++;
	drain(s, r, t + us(0.5), LKVM_TRC_NOTIFY);
}

static void simulate(struct sim *s, uint64_t frames, bool lost)
{
	struct ring_state r = { .t = us(1000), .threshold = RING / 2, .timeout_us = TIMEOUT_US0 };

	memset(s, 0, sizeof(*s));
	emit(s, r.t, LKVM_TR_SYNC, 0, 0, 0, 0);
	for (uint64_t f = 0; f < frames; f++) {
		uint32_t before;
		bool notified;

		r.t += us(f % 7 ? 4 : 12);   /* an uneven guest pace, ~5 us a frame */
		run_timer(s, &r, r.t);
		if (r.outstanding == RING) {
			/* the add found no room: a forced notify, then wait */
			emit(s, r.t, LKVM_TR_RING_FULL, r.outstanding, 0, r.threshold,
			     r.no_notify ? LKVM_TRF_HOST_NO_NOTIFY : 0);
			r.threshold = r.threshold > 1 ? r.threshold - 1 : 1;
			emit(s, r.t + us(0.1), LKVM_TR_WAIT_START, f % 2, 0, 0, 0);
			notify(s, &r, r.t);
			emit(s, r.t + us(3), LKVM_TR_WAIT_END, 1, 0, 0, 0);
			r.t += us(3);
		}
		before = r.outstanding++;
		notified = !r.no_notify && r.outstanding >= r.threshold;
		emit(s, r.t, LKVM_TR_KICK, before, r.outstanding, r.threshold, notified ? LKVM_TRF_NOTIFIED : 0);
		if (notified) {
			r.threshold += r.threshold < RING;   /* a notify that was needed: ask for more next time */
			notify(s, &r, r.t);
		}
	}
	/* the guest is done: the timer drains the rest, then finds nothing */
	run_timer(s, &r, UINT64_MAX);
	qsort(s->ev, s->n, sizeof(*s->ev), by_tsc);
	s->h.tsc_khz = TSC_KHZ;
	s->h.clock = TRACE_CLOCK_SHARED;
	s->h.sync_window = us(0.12);
	s->h.sync_host = us(1000);
	s->h.events = s->n;
	if (lost) {
		s->h.guest_lost = 1234;
		s->h.host_lost = 5;
	}
	snprintf(s->h.model, sizeof(s->h.model), "threaded");
	snprintf(s->h.policy, sizeof(s->h.policy), "dynamic");
	snprintf(s->h.layout, sizeof(s->h.layout), "split");
}

/* ---- raw files, good or broken on purpose ---- */

static char path[64];

/* The header, then `bytes` bytes of the events (all of them if -1). */
static void write_raw(const struct trace_file_header *h, const struct lkvm_trace_event *ev, uint64_t n, long bytes)
{
	FILE *f = fopen(path, "wb");
	size_t total = (size_t)n * sizeof(*ev);

	fwrite(h, sizeof(*h), 1, f);
	fwrite(ev, 1, bytes < 0 ? total : (size_t)bytes, f);
	fclose(f);
}

static void cut(off_t size)
{
	CHECK(truncate(path, size) == 0, "cut the file to %lld bytes", (long long)size);
}

static bool refused(const char *what)
{
	struct trace_file_header h;
	struct lkvm_trace_event *ev = (void *)1;
	uint64_t n = 99;
	int rc = trace_file_read(path, &h, &ev, &n);

	/* the reason, on stderr, next to the check's line */
	fflush(stdout);
	if (rc == -1) {
		fprintf(stderr, "     %s: ", what);
		diag_print();
	}
	return rc == -1 && ev == NULL && n == 0;
}

int main(int argc, char **argv)
{
	struct sim s;
	struct trace_file_header h, bad;
	struct lkvm_trace_event *ev, *copy;
	uint64_t n;

	if (argc >= 3 && !strcmp(argv[1], "--write")) {
		uint64_t frames = 20000;
		bool lost = false;

		for (int i = 3; i < argc; i++)
			if (!strcmp(argv[i], "--frames") && i + 1 < argc)
				frames = strtoull(argv[++i], NULL, 0);
			else if (!strcmp(argv[i], "--lost"))
				lost = true;
		simulate(&s, frames, lost);
		if (trace_file_write(argv[2], &s.h, s.ev, s.n)) {
			diag_print();
			return 1;
		}
		printf("%s: %llu events\n", argv[2], (unsigned long long)s.n);
		return 0;
	}

	snprintf(path, sizeof(path), "/tmp/lkvm-trace-test-%d.bin", (int)getpid());
	simulate(&s, 5000, false);

	/* every type appears in the synthetic run */
	for (uint16_t t = 1; t <= LKVM_TR_HOST_LAST; t++) {
		bool seen = false;

		if (!trace_event_side(t))
			continue;
		for (uint64_t i = 0; i < s.n && !seen; i++)
			seen = s.ev[i].type == t;
		CHECK(seen, "the synthetic run has %s events", trace_event_name(t));
	}
	CHECK(!strcmp(trace_event_name(LKVM_TR_KICK), "kick") && !strcmp(trace_event_name(LKVM_TR_SYNC), "sync") &&
	      !strcmp(trace_event_name(7), "?"), "trace_event_name: kick, sync, and ? for an unknown type");

	/* round trip */
	CHECK(trace_file_write(path, &s.h, s.ev, s.n) == 0, "write %llu events", (unsigned long long)s.n);
	CHECK(trace_file_read(path, &h, &ev, &n) == 0, "read them back");
	CHECK(n == s.n && !memcmp(ev, s.ev, n * sizeof(*ev)), "the same events, byte for byte");
	CHECK(!memcmp(h.magic, TRACE_FILE_MAGIC, 8) && h.version == TRACE_FILE_VERSION && h.header_size == sizeof(h) &&
	      h.events == s.n, "the writer filled in magic, version, size and count");
	memcpy(s.h.magic, h.magic, sizeof(h.magic));
	s.h.version = h.version;
	s.h.header_size = h.header_size;
	CHECK(!memcmp(&h, &s.h, sizeof(h)), "the same header");
	free(ev);

	/* an empty file (a run that recorded nothing) is a good file */
	CHECK(trace_file_write(path, &s.h, NULL, 0) != 0, "the writer refuses a header whose guest count is wrong");
	bad = s.h;
	bad.guest_events = 0;
	CHECK(trace_file_write(path, &bad, NULL, 0) == 0 && trace_file_read(path, &h, &ev, &n) == 0 && n == 0 &&
	      !ev, "no events at all round-trips");

	/* the writer keeps to the reader's rules */
	copy = malloc(s.n * sizeof(*copy));
	memcpy(copy, s.ev, s.n * sizeof(*copy));
	copy[10].tsc = copy[11].tsc + 1;
	unlink(path);
	CHECK(trace_file_write(path, &s.h, copy, s.n) == -1 && access(path, F_OK) != 0,
	      "the writer refuses stamps that go back, and leaves no file");
	memcpy(copy, s.ev, s.n * sizeof(*copy));
	copy[10].type = 99;
	CHECK(trace_file_write(path, &s.h, copy, s.n) == -1, "the writer refuses an unknown type");

	/* refusals: each broken file fails with -1, no events, one line */
	bad = s.h;
	memcpy(bad.magic, "LKVMTRC2", 8);
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("bad magic"), "bad magic");

	write_raw(&s.h, s.ev, 0, 0);
	cut(100);
	CHECK(refused("truncated header"), "truncated header");
	cut(0);
	CHECK(refused("empty file"), "an empty file");

	bad = s.h;
	bad.version = 2;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("version"), "another version");

	bad = s.h;
	bad.header_size = 256;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("header size"), "another header size");

	bad = s.h;
	bad.tsc_khz = 0;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("tsc_khz 0"), "no TSC rate");

	bad = s.h;
	bad.clock = 9;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("clock"), "an unknown clock");

	write_raw(&s.h, s.ev, s.n, (long)(s.n * sizeof(*s.ev)) - 10);
	CHECK(refused("truncated events"), "truncated events (part of the last one missing)");

	write_raw(&s.h, s.ev, s.n, (long)(s.n * sizeof(*s.ev)) + 32);
	CHECK(refused("trailing bytes"), "more events than the header counts");

	bad = s.h;
	bad.events = s.n + 5;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("count larger than the file"), "a count larger than the file");

	bad = s.h;
	bad.events = UINT64_MAX / 2;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("huge count"), "a count that would overflow the size");

	bad = s.h;
	bad.guest_events = s.h.guest_events + 1;
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("guest count"), "a guest count the events do not match");

	memcpy(copy, s.ev, s.n * sizeof(*copy));
	copy[s.n / 2].type = 17;   /* between the guest's and the host's types */
	write_raw(&s.h, copy, s.n, -1);
	CHECK(refused("unknown type 17"), "an unknown type (17)");
	copy[s.n / 2].type = 0;
	write_raw(&s.h, copy, s.n, -1);
	CHECK(refused("unknown type 0"), "an unknown type (0)");

	memcpy(copy, s.ev, s.n * sizeof(*copy));
	copy[s.n - 1].tsc = copy[s.n - 2].tsc - 1;
	write_raw(&s.h, copy, s.n, -1);
	CHECK(refused("stamps going back"), "stamps going back");

	bad = s.h;
	memset(bad.model, 'x', sizeof(bad.model));
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("model"), "a model string without its NUL");
	bad = s.h;
	memset(bad.guest_note, 'x', sizeof(bad.guest_note));
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("guest_note"), "a guest_note without its NUL");
	bad = s.h;
	memset(bad.layout, 'x', sizeof(bad.layout));
	write_raw(&bad, s.ev, s.n, -1);
	CHECK(refused("layout"), "a layout without its NUL");

	unlink(path);
	CHECK(refused("missing file"), "a missing file");

	free(copy);
	free(s.ev);
	return check_summary();
}
