/*
 * trace_file.c -- the trace file's writer and its reader (trace_file.h,
 * docs/trace.md).
 *
 *   run --trace FILE:   merged, sorted events -> trace_file_write -> header,
 *                       then the events, as they lie in memory
 *   lguest-kvm trace:   trace_file_read -> every byte checked -> header and
 *                       events for the summary and the plot (trace_cmd.c)
 *
 * The reader trusts nothing: a file can be cut short, hand-made or from
 * another version, and half of its events came from a guest.  Whatever is
 * wrong, it stops at the first problem with one sentence naming it, so that
 * the summary never has to wonder whether a type is known, whether a string
 * ends, or whether time runs forwards.  The writer holds itself to the same
 * rules, so that `run --trace` cannot leave a file `trace` would refuse.
 *
 * Plain stdio: a full trace (both rings at LKVM_TRACE_EVENTS_MAX, 2^23
 * events of 32 bytes, 256 MiB) is one fwrite from, or one fread into, one
 * array; the length check uses fstat's 64-bit st_size, and the count is
 * checked against it before anything is allocated.
 */
#include "trace_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"

_Static_assert(sizeof(struct lkvm_trace_event) == 32, "an event is 32 bytes (lguest_kvm_abi.h)");
_Static_assert(sizeof(struct trace_file_header) == 240, "the header has no padding, and its size is fixed");

const char *trace_event_name(uint16_t type)
{
	switch (type) {
	case LKVM_TR_KICK: return "kick";
	case LKVM_TR_RING_FULL: return "ring_full";
	case LKVM_TR_WAIT_START: return "wait_start";
	case LKVM_TR_WAIT_END: return "wait_end";
	case LKVM_TR_IRQ_TAKEN: return "irq_taken";
	case LKVM_TR_NOTIFY: return "notify";
	case LKVM_TR_DRAIN: return "drain";
	case LKVM_TR_NO_NOTIFY_SET: return "no_notify_set";
	case LKVM_TR_NO_NOTIFY_CLEAR: return "no_notify_clear";
	case LKVM_TR_TIMER_ARM: return "timer_arm";
	case LKVM_TR_TIMER_FIRE: return "timer_fire";
	case LKVM_TR_TIMER_CANCEL: return "timer_cancel";
	case LKVM_TR_IRQ_RAISE: return "irq_raise";
	case LKVM_TR_SYNC: return "sync";
	}
	return "?";
}

/* The header's string fields must end inside their arrays: the reader
 * prints them, and a missing NUL would read on into the next field. */
static int check_string(const char *where, const char *field, const char *s, size_t size)
{
	if (!memchr(s, 0, size))
		return diag_fail("%s: the header's %s field is not NUL-terminated within its %zu bytes", where, field, size);
	return 0;
}

static int check_header(const char *where, const struct trace_file_header *h)
{
	if (memcmp(h->magic, TRACE_FILE_MAGIC, sizeof(h->magic)))
		return diag_fail("%s: not a trace file: its magic is not %s", where, TRACE_FILE_MAGIC);
	if (h->version != TRACE_FILE_VERSION)
		return diag_fail("%s: trace file version %u; this launcher reads version %u", where, h->version, TRACE_FILE_VERSION);
	if (h->header_size != sizeof(*h))
		return diag_fail("%s: header size %u; version %u's is %zu", where, h->header_size, TRACE_FILE_VERSION, sizeof(*h));
	if (!h->tsc_khz)
		return diag_fail("%s: the header's tsc_khz is 0: the stamps cannot be turned into time", where);
	if (h->clock < TRACE_CLOCK_SHARED || h->clock > TRACE_CLOCK_UNKNOWN)
		return diag_fail("%s: the header's clock is %u, not one of 1 (shared), 2 (corrected), 3 (unknown)", where,
				 h->clock);
	if (h->guest_events > h->events)
		return diag_fail("%s: the header counts %llu guest events among %llu events", where,
				 (unsigned long long)h->guest_events, (unsigned long long)h->events);
	return check_string(where, "model", h->model, sizeof(h->model)) ||
	       check_string(where, "policy", h->policy, sizeof(h->policy)) ||
	       check_string(where, "layout", h->layout, sizeof(h->layout)) ||
	       check_string(where, "guest_note", h->guest_note, sizeof(h->guest_note)) ? -1 : 0;
}

/* Every event's type is known and the stamps never go back; the guest's
 * count is what the header says.  The same rules for writing and reading. */
static int check_events(const char *where, const struct trace_file_header *h, const struct lkvm_trace_event *ev,
			uint64_t n)
{
	uint64_t guest = 0;

	for (uint64_t i = 0; i < n; i++) {
		char side = trace_event_side(ev[i].type);

		if (!side)
			return diag_fail("%s: event %llu has unknown type %u", where, (unsigned long long)i, ev[i].type);
		guest += side == 'g';
		if (i && ev[i].tsc < ev[i - 1].tsc)
			return diag_fail("%s: event %llu (%s) is stamped %llu, before event %llu's %llu: the stamps go backwards",
					 where, (unsigned long long)i, trace_event_name(ev[i].type), (unsigned long long)ev[i].tsc,
					 (unsigned long long)i - 1, (unsigned long long)ev[i - 1].tsc);
	}
	if (guest != h->guest_events)
		return diag_fail("%s: the header counts %llu guest events; the file holds %llu", where,
				 (unsigned long long)h->guest_events, (unsigned long long)guest);
	return 0;
}

/* The caller's header with the fields only the writer can know filled in:
 * magic, version, size and the event count. */
static void complete_header(struct trace_file_header *out, const struct trace_file_header *h, uint64_t n)
{
	*out = *h;
	memcpy(out->magic, TRACE_FILE_MAGIC, sizeof(out->magic));
	out->version = TRACE_FILE_VERSION;
	out->header_size = sizeof(*out);
	out->events = n;
}

/* The header as it will be written, and the reader's checks on it and on
 * the events, before a byte goes out: 0, or -1 with diag set. */
static int prepare(const char *path, struct trace_file_header *out, const struct trace_file_header *h,
		   const struct lkvm_trace_event *ev, uint64_t n)
{
	char where[300];

	snprintf(where, sizeof(where), "--trace %.200s: not written", path);
	complete_header(out, h, n);
	return check_header(where, out) || check_events(where, out, ev, n) ? -1 : 0;
}

/* Write a prepared file and close f.  No unlink of a half-written one: a
 * run writes under its seccomp filter, which allows none; the reader
 * refuses such a file. */
static int write_prepared(FILE *f, const char *path, const struct trace_file_header *out,
			  const struct lkvm_trace_event *ev, uint64_t n)
{
	int ok = fwrite(out, sizeof(*out), 1, f) == 1 && (!n || fwrite(ev, sizeof(*ev), n, f) == n);

	if (fclose(f) || !ok)
		return diag_fail("--trace %s: write failed: %s", path, strerror(errno));
	return 0;
}

int trace_file_fwrite(FILE *f, const char *path, const struct trace_file_header *h, const struct lkvm_trace_event *ev,
		      uint64_t n)
{
	struct trace_file_header out;

	if (prepare(path, &out, h, ev, n) < 0) {
		fclose(f);
		return -1;
	}
	return write_prepared(f, path, &out, ev, n);
}

int trace_file_write(const char *path, const struct trace_file_header *h, const struct lkvm_trace_event *ev,
		     uint64_t n)
{
	struct trace_file_header out;
	FILE *f;

	if (prepare(path, &out, h, ev, n) < 0)
		return -1;      /* and no file */
	f = fopen(path, "wb");
	if (!f)
		return diag_fail("--trace %s: %s", path, strerror(errno));
	return write_prepared(f, path, &out, ev, n);
}

int trace_file_read(const char *path, struct trace_file_header *h, struct lkvm_trace_event **ev, uint64_t *n)
{
	struct lkvm_trace_event *events = NULL;
	struct stat st;
	uint64_t body;
	size_t got;
	FILE *f;

	*ev = NULL;
	*n = 0;
	f = fopen(path, "rb");
	if (!f)
		return diag_fail("%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return diag_fail("%s: not a regular file", path);
	}
	/* A short file that is not a trace at all says so, rather than
	 * "truncated". */
	got = fread(h, 1, sizeof(*h), f);
	if (got >= sizeof(h->magic) && memcmp(h->magic, TRACE_FILE_MAGIC, sizeof(h->magic))) {
		fclose(f);
		return diag_fail("%s: not a trace file: its magic is not %s", path, TRACE_FILE_MAGIC);
	}
	if (got < sizeof(*h)) {
		fclose(f);
		return diag_fail("%s: truncated header: %zu of its %zu bytes", path, got, sizeof(*h));
	}
	if (check_header(path, h)) {
		fclose(f);
		return -1;
	}
	/* The count against the length before any allocation: a hostile
	 * count must not size the array. */
	body = (uint64_t)st.st_size - sizeof(*h);
	if (h->events > body / sizeof(**ev)) {
		fclose(f);
		return diag_fail("%s: truncated: the header counts %llu events, the file holds %llu",
				 path, (unsigned long long)h->events, (unsigned long long)(body / sizeof(**ev)));
	}
	if (body != h->events * sizeof(**ev)) {
		fclose(f);
		return diag_fail("%s: %llu bytes more than the header's %llu events of %zu bytes", path,
				 (unsigned long long)(body - h->events * sizeof(**ev)), (unsigned long long)h->events,
				 sizeof(**ev));
	}
	if (h->events) {
		events = malloc(h->events * sizeof(*events));
		if (!events) {
			fclose(f);
			return diag_fail("%s: out of memory for %llu events", path, (unsigned long long)h->events);
		}
		if (fread(events, sizeof(*events), h->events, f) != h->events) {
			fclose(f);
			free(events);
			return diag_fail("%s: read error after the header: %s", path, strerror(errno));
		}
	}
	fclose(f);
	if (check_events(path, h, events, h->events)) {
		free(events);
		return -1;
	}
	*ev = events;
	*n = h->events;
	return 0;
}
