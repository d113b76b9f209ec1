/*
 * run_trace.c -- the end of a traced run (`run --trace FILE`): both sides'
 * events into one file, on the host's clock.
 *
 * The host's events are in rs->trace, recorded by the devices and the port
 * handler; every thread that wrote there has stopped.  The guest's are in
 * its own RAM, where it announced them (LKVM_PORT_TRACE), and are guest
 * data like any other: the header is copied out through gmem_ptr and
 * checked (magic, version, the capacity we asked for), the events are
 * copied only from inside RAM, and an event of a type the guest does not
 * record is dropped and counted.  Nothing the guest wrote can make this
 * read outside its RAM or write more than it asked for.
 *
 * The clocks: the guest stamped its announcement before and after the
 * write, and the host stamped the write itself.  With one clock -- the
 * thread model always; a VM whose vCPU TSC offset is 0 (run_guest.c asks
 * KVM for that when tracing) -- the host's stamp falls between the guest's
 * two, and the guest's stamps are used as they are.  Otherwise the guest's
 * are moved by the offset that puts the host's stamp in the middle of that
 * window, and the file says so.
 */
#include "run_state.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "trace_file.h"

/* The guest's ring, checked, into ev[]: returns how many were kept. */
static uint64_t copy_guest_events(const struct run_state *rs, struct trace_file_header *h, struct lkvm_trace_event *ev,
				  struct lkvm_trace_buf *hdr_out)
{
	const struct guest_mem *gm = &rs->vm.mem;
	const struct lkvm_trace_buf *src = gmem_ptr(gm, rs->trace_gpa, sizeof(*src));
	const struct lkvm_trace_event *gev;
	struct lkvm_trace_buf b;
	uint64_t n, kept = 0;

	if (!rs->trace_gpa || !src) {
		snprintf(h->guest_note, sizeof(h->guest_note), "%s",
			 rs->trace_gpa ? "its ring's address is outside RAM" : "the guest announced no ring");
		return 0;
	}
	memcpy(&b, src, sizeof(b));   /* once: the guest cannot change it under the checks */
	if (b.magic != LKVM_TRACE_BUF_MAGIC || b.version != LKVM_TRACE_VERSION || b.capacity != rs->o->trace_events) {
		snprintf(h->guest_note, sizeof(h->guest_note), "its ring's header is not what was asked for");
		return 0;
	}
	gev = gmem_ptr(gm, rs->trace_gpa + sizeof(b), (uint64_t)b.capacity * sizeof(*gev));
	if (!gev) {
		snprintf(h->guest_note, sizeof(h->guest_note), "its ring runs past the end of RAM");
		return 0;
	}
	*hdr_out = b;
	n = b.head < b.capacity ? b.head : b.capacity;
	h->guest_lost = b.head - n;
	for (uint64_t k = b.head - n; k != b.head; k++) {
		struct lkvm_trace_event e;

		memcpy(&e, &gev[k & (b.capacity - 1)], sizeof(e));
		if (trace_event_side(e.type) != 'g') {
			h->guest_invalid++;
			continue;
		}
		e.reserved = 0;
		ev[kept++] = e;
	}
	return kept;
}

/* Put the guest's stamps on the host's clock (see the top of the file). */
static void align_guest_clock(const struct run_state *rs, struct trace_file_header *h, const struct lkvm_trace_buf *b,
			      struct lkvm_trace_event *ev, uint64_t n)
{
	uint64_t mid;

	if (!rs->trace_sync_host || !b->sync_before || b->sync_after < b->sync_before) {
		h->clock = TRACE_CLOCK_UNKNOWN;
		return;
	}
	h->sync_host = rs->trace_sync_host;
	h->sync_window = b->sync_after - b->sync_before;
	if (b->sync_before <= rs->trace_sync_host && rs->trace_sync_host <= b->sync_after) {
		h->clock = TRACE_CLOCK_SHARED;
		return;
	}
	mid = b->sync_before + h->sync_window / 2;
	h->clock = TRACE_CLOCK_CORRECTED;
	h->guest_tsc_offset = (int64_t)(mid - rs->trace_sync_host);
	for (uint64_t k = 0; k < n; k++)
		ev[k].tsc -= (uint64_t)h->guest_tsc_offset;
}

/* Sort ev[0..n) by stamp, keeping the order of equal stamps (the guest's
 * events first, as they were copied first): a bottom-up merge sort through
 * `tmp` (n entries).  Not qsort: glibc's asks the kernel how much memory
 * there is (sysinfo), which the seccomp allow-list rightly refuses. */
static void sort_by_time(struct lkvm_trace_event *ev, struct lkvm_trace_event *tmp, uint64_t n)
{
	for (uint64_t width = 1; width < n; width *= 2) {
		for (uint64_t lo = 0; lo < n; lo += 2 * width) {
			uint64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
			uint64_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				tmp[k++] = ev[j].tsc < ev[i].tsc ? ev[j++] : ev[i++];
			while (i < mid)
				tmp[k++] = ev[i++];
			while (j < hi)
				tmp[k++] = ev[j++];
		}
		memcpy(ev, tmp, n * sizeof(*ev));
	}
}

/* Both axes: the host model, and "no VM" when the guest ran on a thread. */
static const char *model_name(const struct run_options *o)
{
	if (o->no_vm)
		return o->net.model == NET_MODEL_LGUEST ? "lguest, no VM" : "threaded, no VM";
	return o->net.model == NET_MODEL_LGUEST ? "lguest" : "threaded";
}

int run_trace_write(struct run_state *rs)
{
	const struct run_options *o = rs->o;
	struct trace_file_header h = { .version = TRACE_FILE_VERSION, .header_size = sizeof(h) };
	struct lkvm_trace_buf b = { 0 };
	uint64_t host_n = rs->trace.head < rs->trace.capacity ? rs->trace.head : rs->trace.capacity;
	struct lkvm_trace_event *ev = calloc(2 * (host_n + o->trace_events), sizeof(*ev));
	uint64_t n;
	int rc;

	if (!ev)
		return diag_fail("--trace %s: no memory for %llu events", o->trace,
				 (unsigned long long)(host_n + o->trace_events));
	memcpy(h.magic, TRACE_FILE_MAGIC, sizeof(h.magic));
	h.tsc_khz = rs->tsc_khz;
	n = copy_guest_events(rs, &h, ev, &b);
	align_guest_clock(rs, &h, &b, ev, n);
	h.guest_events = n;
	/* The host's ring in the order it was written (the oldest kept first). */
	for (uint64_t k = rs->trace.head - host_n; k != rs->trace.head; k++)
		ev[n++] = rs->trace.ev[k & (rs->trace.capacity - 1)];
	h.host_lost = rs->trace.head - host_n;
	h.events = n;
	sort_by_time(ev, ev + host_n + o->trace_events, n);

	h.stat_guest_notifies = rs->have_report ? rs->report.tx_notifies : 0;
	h.stat_host_notifies = rs->net.st.notifies;
	h.stat_notify_wakeups = rs->net.st.notify_wakeups;
	h.stat_timeouts = rs->net.st.timeouts;
	snprintf(h.model, sizeof(h.model), "%s", model_name(o));
	snprintf(h.policy, sizeof(h.policy), "%s", o->policy);
	snprintf(h.layout, sizeof(h.layout), "%s", run_ring_layout(rs));

	rc = trace_file_fwrite(rs->trace_file, o->trace, &h, ev, n);
	free(ev);
	return rc;
}
