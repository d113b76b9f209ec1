/*
 * run.c -- one guest from start to stats, in the order lguest's launcher
 * told its story:
 *
 *   1. Build the guest: VM + RAM, the ELF image, the PVH start info and a
 *      command line that names the devices and the run's parameters.
 *   2. Wire the devices: console (MMIO exits) and net (ioeventfd + device
 *      thread, or MMIO exits + a waker thread in the lguest model).  The
 *      devices create their eventfds; wiring.c registers them with KVM.
 *   3. Leave uid 0 and drop every capability (sandbox.c): nothing after
 *      this point is privileged.  Once the threads run, bound the open
 *      files and lock the process into a seccomp allow-list.
 *   4. Run the vCPU until the guest leaves, crashes, breaks a ring, or a
 *      signal or --max-seconds stops it.
 *   5. Whatever the way out, print the stats block (and the JSON copy).
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "console.h"
#include "clock.h"
#include "diag.h"
#include "elf_loader.h"
#include "host_kind.h"
#include "lguest_kvm_abi.h"
#include "lkvm_frame.h"
#include "net.h"
#include "pvh_boot.h"
#include "sandbox.h"
#include "stats.h"
#include "vm.h"
#include "wiring.h"

#define MAX_EXIT_REASON 64

enum run_end { END_NONE, END_GUEST_EXIT, END_CRASH, END_SIGNAL, END_TIME_LIMIT, END_HOST_ERROR };

struct run_state {
	const struct run_options *o;
	struct vm vm;
	struct wiring wiring;       /* the devices' view of vm */
	struct console con;
	struct net net;
	uint64_t exits[MAX_EXIT_REASON];
	uint64_t exits_interrupted, io_unknown, mmio_unknown, bad_reports;
	enum run_end end;
	int guest_status, signal;
	char why[300];
	struct lkvm_guest_report report;
	int have_report;
	double t_start, t_end;
	struct sandbox_state sandbox;
};

static int stop_signal;     /* written by the signal thread, read by the vCPU */
static pthread_t vcpu_thread;

static void on_kick_signal(int sig) { (void)sig; }

/* SIGINT, SIGTERM and SIGALRM (--max-seconds) are taken here, never by a
 * handler: the vCPU may be spinning in the guest, and only a kick gets it
 * out (vm_kick_vcpu). */
static void *signal_thread(void *arg)
{
	struct run_state *rs = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		__atomic_store_n(&stop_signal, sig, __ATOMIC_SEQ_CST);
		vm_kick_vcpu(&rs->vm, vcpu_thread);
	}
	return NULL;
}

/* ---- 1. the guest ---- */

static const char *default_guest(char *buf, size_t size)
{
	const char *env = getenv("LGUEST_KVM_GUEST");
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return "lguest-stub.elf";
	exe[n] = 0;
	slash = strrchr(exe, '/');
	*slash = 0;
	/* Build tree: <build>/lguest-kvm and <build>/guest-stub/lguest-stub.elf;
	 * installed: <prefix>/bin and <prefix>/lib/lguest-kvm. */
	snprintf(buf, size, "%s/guest-stub/lguest-stub.elf", exe);
	if (access(buf, R_OK) == 0)
		return buf;
	snprintf(buf, size, "%s/../lib/lguest-kvm/lguest-stub.elf", exe);
	return buf;
}

static int build_cmdline(const struct run_options *o, unsigned tsc_khz, char *buf, size_t size)
{
	int n = snprintf(buf, size,
		"console=hvc0 virtio_mmio.device=4K@0x%x:%u virtio_mmio.device=4K@0x%x:%u "
		"lkvm.workload=%s lkvm.policy=%s lkvm.bytes=%llu lkvm.frame=%u lkvm.ring=%u "
		"lkvm.segments=%u lkvm.wait=%s lkvm.indirect=%s lkvm.fault=%s lkvm.status=%u "
		"lkvm.pace_ns=%u lkvm.tsc_khz=%u",
		LKVM_MMIO_BASE, LKVM_IRQ_BASE, LKVM_MMIO_BASE + LKVM_MMIO_SIZE, LKVM_IRQ_BASE + 1,
		o->workload, o->policy, (unsigned long long)o->bytes, o->frame, o->ring,
		o->segments, o->wait, o->indirect, o->fault, o->boot_status, o->pace_ns, tsc_khz);

	if (n > 0 && n < (int)size && !strcmp(o->workload, "tcp"))
		n += snprintf(buf + n, size - (size_t)n, " lkvm.tso=%d lkvm.ip=%u.%u.%u.%u lkvm.peer=%u.%u.%u.%u:%u", o->tso,
			      o->guest_ip >> 24, (o->guest_ip >> 16) & 255, (o->guest_ip >> 8) & 255, o->guest_ip & 255,
			      o->peer_ip >> 24, (o->peer_ip >> 16) & 255, (o->peer_ip >> 8) & 255, o->peer_ip & 255,
			      o->peer_port);
	return n > 0 && n < (int)size ? 0 : diag_fail("guest command line too long");
}

static int build_guest(struct run_state *rs)
{
	char path_buf[PATH_MAX + 64], cmdline[1024];
	const char *path = rs->o->guest ? rs->o->guest : default_guest(path_buf, sizeof(path_buf));
	uint8_t *image;
	size_t size;
	uint32_t entry;
	int rc, tsc_khz;

	if (elf_read_file(path, &image, &size) < 0)
		return -1;
	if (vm_create(&rs->vm, rs->o->mem) < 0) {
		free(image);
		return -1;
	}
	rc = elf_load_pvh(path, image, size, &rs->vm.mem, &entry);
	free(image);
	if (rc < 0 || vm_create_vcpu_pvh(&rs->vm, entry, LKVM_START_INFO_GPA) < 0)
		return -1;
	if (net_open_backend(&rs->net) < 0)
		return -1;
	/* The guest times --pace-ns with its TSC; KVM knows the TSC rate. */
	tsc_khz = ioctl(rs->vm.vcpu_fd, KVM_GET_TSC_KHZ, 0);
	if (tsc_khz <= 0 && (rs->o->pace_ns || !strcmp(rs->o->workload, "tcp")))
		return diag_fail("KVM_GET_TSC_KHZ: %s -- --pace-ns and the tcp workload's timers need the guest TSC rate",
				 strerror(errno));
	if (build_cmdline(rs->o, tsc_khz > 0 ? (unsigned)tsc_khz : 0, cmdline, sizeof(cmdline)) < 0)
		return -1;
	return pvh_write_start_info(&rs->vm.mem, cmdline);
}

/* ---- 3. privileges ---- */

static struct sandbox_config sandbox_config(const struct run_state *rs)
{
	return (struct sandbox_config){
		.user = rs->o->user,
		.stay_root = rs->o->stay_root,
		.seccomp = !rs->o->no_seccomp,
		.seccomp_probe = rs->o->seccomp_probe,
		.model = rs->o->net.model,
		.backend = rs->o->net.backend,
		.vm_fd = rs->vm.vm_fd,
		.vcpu_fd = rs->vm.vcpu_fd,
	};
}

/* ---- 4. the vCPU ---- */

static const char *exception_name(unsigned v)
{
	static const char *const names[] = {
		"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
		"#BR bound range", "#UD invalid opcode", "#NM no FPU", "#DF double fault", "coprocessor",
		"#TS invalid TSS", "#NP segment not present", "#SS stack fault", "#GP general protection",
		"#PF page fault", "reserved", "#MF x87 error", "#AC alignment check", "#MC machine check",
		"#XM SIMD error",
	};

	return v < sizeof(names) / sizeof(names[0]) ? names[v] : "exception";
}

static void guest_crashed_exception(struct run_state *rs, unsigned vector)
{
	struct kvm_regs regs;
	uint64_t *frame = NULL;

	if (ioctl(rs->vm.vcpu_fd, KVM_GET_REGS, &regs) == 0)
		frame = gmem_ptr(&rs->vm.mem, regs.rsp, 7 * 8);
	rs->end = END_CRASH;
	if (frame)
		snprintf(rs->why, sizeof(rs->why),
			 "guest crashed: exception %u (%s) at rip 0x%llx, cs 0x%llx, error code 0x%llx",
			 vector, exception_name(vector), (unsigned long long)frame[2],
			 (unsigned long long)frame[3], (unsigned long long)frame[1]);
	else
		snprintf(rs->why, sizeof(rs->why), "guest crashed: exception %u (%s), stack unreadable",
			 vector, exception_name(vector));
}

static void guest_crashed(struct run_state *rs, const char *what)
{
	struct kvm_regs regs;

	memset(&regs, 0, sizeof(regs));
	ioctl(rs->vm.vcpu_fd, KVM_GET_REGS, &regs);
	rs->end = END_CRASH;
	snprintf(rs->why, sizeof(rs->why), "guest crashed: %s at rip 0x%llx", what, (unsigned long long)regs.rip);
}

static void handle_io(struct run_state *rs)
{
	struct kvm_run *run = rs->vm.run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;
	uint32_t gpa;

	if (run->io.direction == KVM_EXIT_IO_IN) {
		memset(data, 0xff, (size_t)run->io.size * run->io.count);
		rs->io_unknown++;
		return;
	}
	switch (run->io.port) {
	case LKVM_PORT_EXIT:
		rs->end = END_GUEST_EXIT;
		rs->guest_status = data[0];
		return;
	case LKVM_PORT_CRASH:
		guest_crashed_exception(rs, data[0]);
		return;
	case LKVM_PORT_REPORT: {
		struct lkvm_guest_report r;
		const void *src = NULL;

		if (run->io.size == 4) {
			memcpy(&gpa, data, 4);
			src = gmem_ptr(&rs->vm.mem, gpa, sizeof(r));
		}
		/* Copy first (the address may be unaligned, the guest may still be
		 * writing), then check the copy. */
		if (src)
			memcpy(&r, src, sizeof(r));
		if (src && r.magic == LKVM_REPORT_MAGIC && r.version == LKVM_REPORT_VERSION && r.size == sizeof(r)) {
			rs->report = r;
			rs->have_report = 1;
		} else if (!rs->bad_reports++) {
			fprintf(stderr, "lguest-kvm: ignoring a malformed guest report (further ones are only counted)\n");
		}
		return;
	}
	default:
		rs->io_unknown++;
	}
}

static void handle_mmio(struct run_state *rs)
{
	struct kvm_run *run = rs->vm.run;
	uint64_t addr = run->mmio.phys_addr;
	uint32_t len = run->mmio.len > 8 ? 8 : run->mmio.len;
	struct virtio_mmio_dev *devs[] = { &rs->con.mmio, &rs->net.mmio };

	for (unsigned i = 0; i < 2; i++)
		if (addr >= devs[i]->base && addr + len <= devs[i]->base + LKVM_MMIO_SIZE) {
			virtio_mmio_access(devs[i], addr - devs[i]->base, run->mmio.data, len, run->mmio.is_write);
			return;
		}
	/* Nothing lives here: reads return zeros, writes vanish. */
	if (!run->mmio.is_write)
		memset(run->mmio.data, 0, sizeof(run->mmio.data));
	rs->mmio_unknown++;
}

static int set_vcpu_signal_mask(struct run_state *rs)
{
	struct {
		struct kvm_signal_mask hdr;
		uint8_t set[8];
	} m;
	sigset_t inside;

	/* Outside KVM_RUN the kick signal stays blocked (pending); inside it,
	 * it is deliverable and makes KVM_RUN return EINTR.  Nothing is lost. */
	pthread_sigmask(SIG_SETMASK, NULL, &inside);
	sigdelset(&inside, SIGUSR1);
	m.hdr.len = 8;
	memcpy(m.set, &inside, 8);
	if (ioctl(rs->vm.vcpu_fd, KVM_SET_SIGNAL_MASK, &m) < 0)
		return diag_fail("KVM_SET_SIGNAL_MASK: %s", strerror(errno));
	return 0;
}

/* A kick leaves SIGUSR1 pending (blocked outside KVM_RUN); eat it, or every
 * following KVM_RUN would return EINTR at once. */
static void eat_kick_signals(void)
{
	struct timespec zero = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigtimedwait(&set, NULL, &zero) == SIGUSR1)
		;
}

static void run_vcpu(struct run_state *rs)
{
	struct kvm_run *run = rs->vm.run;
	bool lguest = rs->o->net.model == NET_MODEL_LGUEST;

	while (rs->end == END_NONE) {
		int sig = __atomic_load_n(&stop_signal, __ATOMIC_SEQ_CST);

		if (sig) {
			rs->signal = sig;
			rs->end = sig == SIGALRM ? END_TIME_LIMIT : END_SIGNAL;
			break;
		}
		/* lguest model: a TX drain that stopped at its budget is finished
		 * here, one round per turn, before the guest runs again -- so the
		 * flag above is looked at between rounds (devices/net.c). */
		if (lguest && net_tx_continuing(&rs->net)) {
			net_vcpu_poll(&rs->net);
			continue;
		}
		/* Both models: a console notify's output, round by round. */
		if (console_tx_continuing(&rs->con)) {
			console_tx_continue(&rs->con);
			continue;
		}
		if (ioctl(rs->vm.vcpu_fd, KVM_RUN, 0) < 0) {
			if (errno != EINTR && errno != EAGAIN) {
				rs->end = END_HOST_ERROR;
				snprintf(rs->why, sizeof(rs->why), "KVM_RUN: %s", strerror(errno));
				break;
			}
			rs->exits_interrupted++;
			eat_kick_signals();
			if (lguest)
				net_vcpu_poll(&rs->net);
			continue;
		}
		if (run->exit_reason < MAX_EXIT_REASON)
			rs->exits[run->exit_reason]++;
		switch (run->exit_reason) {
		case KVM_EXIT_IO:
			handle_io(rs);
			break;
		case KVM_EXIT_MMIO:
			handle_mmio(rs);
			break;
		case KVM_EXIT_SHUTDOWN:
			guest_crashed(rs, "triple fault (KVM_EXIT_SHUTDOWN)");
			break;
		case KVM_EXIT_INTERNAL_ERROR: {
			char what[64];

			snprintf(what, sizeof(what), "KVM internal error, suberror %u", run->internal.suberror);
			guest_crashed(rs, what);
			break;
		}
		case KVM_EXIT_FAIL_ENTRY:
			guest_crashed(rs, "VM entry failed");
			break;
		case KVM_EXIT_HLT:
			guest_crashed(rs, "halted for good (hlt with no interrupt source)");
			break;
		default: {
			char what[64];

			snprintf(what, sizeof(what), "unexpected exit reason %u", run->exit_reason);
			guest_crashed(rs, what);
		}
		}
		if (lguest)
			net_vcpu_poll(&rs->net);
	}
}

/* ---- 5. stats ---- */

static const char *exit_reason_name(unsigned r)
{
	switch (r) {
	case KVM_EXIT_IO: return "io";
	case KVM_EXIT_MMIO: return "mmio";
	case KVM_EXIT_HLT: return "hlt";
	case KVM_EXIT_SHUTDOWN: return "shutdown";
	case KVM_EXIT_INTERNAL_ERROR: return "internal_error";
	case KVM_EXIT_FAIL_ENTRY: return "fail_entry";
	case KVM_EXIT_UNKNOWN: return "unknown";
	default: return NULL;
	}
}

static const char *end_name(enum run_end e)
{
	switch (e) {
	case END_GUEST_EXIT: return "guest-exit";
	case END_CRASH: return "guest-crash";
	case END_SIGNAL: return "signal";
	case END_TIME_LIMIT: return "time-limit";
	case END_HOST_ERROR: return "host-error";
	default: return "setup";
	}
}

static void collect_stats(struct run_state *rs, struct stats *st)
{
	const struct net_tx_stats *tx = &rs->net.st;
	const struct net_sink *sink = &rs->net.sink;
	const struct net_tap *tap = &rs->net.tap;
	const struct net_slirp *slirp = &rs->net.slirp;
	enum net_backend backend = rs->o->net.backend;
	bool tcp = !strcmp(rs->o->workload, "tcp");
	const struct lkvm_guest_report *g = &rs->report;
	uint64_t frames = backend == NET_BACKEND_TAP ? tap->frames
			: backend == NET_BACKEND_USER ? slirp->frames_from_guest : sink->frames;
	uint64_t bad = backend == NET_BACKEND_TAP ? tap->errors
		     : backend == NET_BACKEND_USER ? slirp->errors : sink->bad_frames;
	/* Payload: the TCP stream bytes the receiver acknowledged, or the raw
	 * workload's frames after their header. */
	uint64_t payload = tcp ? (rs->have_report ? g->tcp_bytes_acked : 0)
			 : backend == NET_BACKEND_TAP ? tap->bytes - tap->frames * LKVM_FRAME_HDR
			 : sink->payload_bytes;
	const char *verify = backend == NET_BACKEND_TAP ? (tap->errors ? tap->first_error : NULL)
			   : backend == NET_BACKEND_USER ? (slirp->errors ? slirp->first_error : NULL)
			   : sink->bad_frames ? sink->first_error : "ok";
	double xfer = tx->t_last > tx->t_first ? tx->t_last - tx->t_first : 0;
	static char names[MAX_EXIT_REASON][40];
	static const char *const backend_names[] = { "sink", "tap", "user" };

	if (!verify)
		verify = tcp ? "checked by the receiver (tcp)" : "not checked by the host (tap)";
	stats_u64(st, "tx_queue_notifies", tx->notifies);
	stats_u64(st, "tx_timer_timeouts", tx->timeouts);
	stats_str(st, "run_end", end_name(rs->end));
	stats_u64(st, "guest_exit_status", rs->end == END_GUEST_EXIT ? (uint64_t)rs->guest_status : 0);
	stats_f64(st, "run_seconds", rs->t_end - rs->t_start);
	stats_f64(st, "boot_to_banner_seconds", rs->con.t_first_output ? rs->con.t_first_output - rs->t_start : 0);
	stats_str(st, "host_hypervisor", host_hypervisor());
	stats_str(st, "net_model", rs->o->net.model == NET_MODEL_LGUEST ? "lguest" : "threaded");
	stats_str(st, "guest_policy", rs->o->policy);
	stats_u64(st, "ring_size", rs->o->ring);
	stats_u64(st, "frame_bytes", rs->o->frame);
	stats_u64(st, "guest_pace_ns", rs->o->pace_ns);
	stats_f64(st, "tx_transfer_seconds", xfer);
	stats_str(st, "guest_workload", rs->o->workload);
	stats_str(st, "net_backend", backend_names[backend]);
	if (backend == NET_BACKEND_TAP)
		stats_str(st, "net_tap_interface", tap->ifname);
	stats_u64(st, "net_tso", rs->o->tso);
	stats_u64(st, "tx_payload_bytes", payload);
	stats_u64(st, "tx_frames", frames);
	stats_f64(st, "tx_gbit_per_second", xfer > 0 ? payload * 8.0 / xfer / 1e9 : 0);
	stats_u64(st, "tx_frames_bad", bad);
	stats_str(st, "tx_verify", verify);
	stats_u64(st, "tx_notify_wakeups", tx->notify_wakeups);
	stats_u64(st, "tx_notify_empty", tx->notifies_empty);
	stats_u64(st, "tx_timer_drains_work", tx->timer_drains_work);
	stats_u64(st, "tx_timer_drains_empty", tx->timer_drains_empty);
	stats_u64(st, "tx_recheck_hits", tx->recheck_hits);
	stats_u64(st, "tx_buffers_by_notify", tx->buffers_by_notify);
	stats_u64(st, "tx_buffers_by_timer", tx->buffers_by_timer);
	stats_u64(st, "tx_budget_continuations", tx->continuations);
	stats_u64(st, "tx_buffers_by_continuation", tx->buffers_by_continuation);
	stats_u64(st, "tx_buffers_indirect", tx->buffers_indirect);
	stats_u64(st, "tx_descriptors", tx->descriptors);
	stats_u64(st, "tx_interrupts", tx->interrupts);
	stats_u64(st, "rx_queue_notifies", rs->net.rx.notifies);
	stats_u64(st, "rx_frames", rs->net.rx.frames);
	stats_u64(st, "rx_bytes", rs->net.rx.bytes);
	stats_u64(st, "rx_frames_dropped_no_buffer", rs->net.rx.dropped_no_buffer);
	stats_u64(st, "rx_frames_dropped_too_big", rs->net.rx.dropped_too_big);
	stats_u64(st, "rx_buffers_starved", rs->net.rx.starved);
	stats_u64(st, "rx_read_errors", rs->net.rx.read_errors);
	stats_u64(st, "rx_interrupts", rs->net.rx.interrupts);
	stats_str(st, "host_timer", rs->o->net.host_timer == HOST_TIMER_ONESHOT ? "oneshot" : "rearm");
	stats_str(st, "host_timeout_mode", rs->o->net.adaptive_timeout ? "adaptive" : "fixed");
	stats_u64(st, "host_timeout_us_final", rs->net.timeout_us);
	stats_u64(st, "interrupts_injected", rs->con.mmio.interrupts + rs->net.mmio.interrupts);
	stats_u64(st, "console_bytes_out", rs->con.bytes_out);
	stats_u64(st, "console_bytes_in", rs->con.bytes_in);
	stats_u64(st, "console_tx_continuations", rs->con.tx_continuations);
	for (unsigned r = 0; r < MAX_EXIT_REASON; r++) {
		const char *name = exit_reason_name(r);

		if (!rs->exits[r] && !(name && (r == KVM_EXIT_IO || r == KVM_EXIT_MMIO)))
			continue;
		if (name)
			snprintf(names[r], sizeof(names[r]), "vm_exits_%s", name);
		else
			snprintf(names[r], sizeof(names[r]), "vm_exits_reason_%u", r);
		stats_u64(st, names[r], rs->exits[r]);
	}
	stats_u64(st, "vm_exits_interrupted", rs->exits_interrupted);
	stats_u64(st, "io_unknown_port", rs->io_unknown);
	stats_u64(st, "mmio_unknown_address", rs->mmio_unknown);
	stats_u64(st, "device_errors", rs->con.mmio.errors + rs->net.mmio.errors);
	stats_u64(st, "device_protocol_violations", rs->con.mmio.violations + rs->net.mmio.violations);
	sandbox_stats(&rs->sandbox, st);
	stats_u64(st, "guest_report", rs->have_report);
	stats_u64(st, "guest_reports_malformed", rs->bad_reports);
	if (rs->have_report) {
		stats_u64(st, "guest_tx_bytes", g->tx_bytes);
		stats_u64(st, "guest_tx_frames", g->tx_frames);
		stats_u64(st, "guest_tx_kicks", g->tx_kicks);
		stats_u64(st, "guest_tx_notifies", g->tx_notifies);
		stats_u64(st, "guest_tx_notifies_suppressed", g->tx_notifies_suppressed);
		stats_u64(st, "guest_tx_notifies_forced", g->tx_notifies_forced);
		stats_u64(st, "guest_tx_ring_full", g->tx_ring_full);
		stats_u64(st, "guest_tx_full_ring_reads_zero", g->tx_full_ring_reads_zero);
		stats_u64(st, "guest_tx_threshold_final", g->tx_threshold_final);
		stats_u64(st, "guest_tx_waits_halted", g->tx_waits_halted);
		stats_u64(st, "guest_tx_buffers_direct", g->tx_buffers_direct);
		stats_u64(st, "guest_tx_buffers_indirect", g->tx_buffers_indirect);
		stats_u64(st, "guest_tx_descriptors_used", g->tx_descriptors_used);
		stats_u64(st, "guest_irqs", g->irq_count);
		stats_u64(st, "guest_workload_tsc", g->tsc_workload);
	}
	if (rs->have_report && tcp) {
		stats_u64(st, "guest_tcp_state", g->tcp_state);
		stats_u64(st, "guest_tcp_bytes_acked", g->tcp_bytes_acked);
		stats_u64(st, "guest_tcp_segments_sent", g->tcp_segments_sent);
		stats_u64(st, "guest_tcp_segments_received", g->tcp_segments_received);
		stats_u64(st, "guest_tcp_retransmits", g->tcp_retransmits);
		stats_u64(st, "guest_tcp_timeouts", g->tcp_timeouts);
		stats_u64(st, "guest_tcp_fast_retransmits", g->tcp_fast_retransmits);
		stats_u64(st, "guest_tcp_dupacks", g->tcp_dupacks);
		stats_u64(st, "guest_tcp_window_probes", g->tcp_window_probes);
		stats_u64(st, "guest_tcp_mss", g->tcp_mss);
		stats_u64(st, "guest_tcp_srtt_ns", g->tcp_srtt_ns);
		stats_u64(st, "guest_tcp_waits_halted", g->tcp_waits_halted);
		stats_u64(st, "guest_rx_frames", g->rx_frames);
		stats_u64(st, "guest_rx_frames_dropped", g->rx_frames_dropped);
	}
	if (rs->why[0])
		stats_str(st, "run_error", rs->why);
}

/* The guest's TCP sender failed: say why from its report (its console may
 * be --quiet).  The numbers are tcp_state values (guest-stub/tcp_sender.h). */
static void explain_tcp_failure(const struct run_state *rs)
{
	const struct lkvm_guest_report *g = &rs->report;
	unsigned long long acked = (unsigned long long)g->tcp_bytes_acked, total = (unsigned long long)rs->o->bytes;

	if (!g->tcp_arp_requests)
		fprintf(stderr, "lguest-kvm: tcp: the guest could not start its network (its console says why)\n");
	else if (!g->tcp_peer_mac_known)
		fprintf(stderr, "lguest-kvm: tcp: no ARP reply for the receiver's address -- check --peer, and that "
			"the host side of the link is up (--host-ip)\n");
	else if (g->tcp_state == 5)
		fprintf(stderr, "lguest-kvm: tcp: the receiver %s the connection after %llu of %llu bytes were "
			"acknowledged\n", acked ? "reset" : "refused or reset", acked, total);
	else if (g->tcp_state == 6)
		fprintf(stderr, "lguest-kvm: tcp: the receiver stopped answering after %llu of %llu bytes (%llu "
			"retransmission timeouts) -- is it listening at --peer?\n", acked, total,
			(unsigned long long)g->tcp_timeouts);
}

/* The exit code, after naming the reason on stderr if it is not success. */
static int finish(struct run_state *rs)
{
	const struct virtio_mmio_dev *broken = rs->net.mmio.errors ? &rs->net.mmio
					     : rs->con.mmio.errors ? &rs->con.mmio : NULL;
	bool raw = !strcmp(rs->o->workload, "raw") && !strcmp(rs->o->fault, "none");

	switch (rs->end) {
	case END_SIGNAL:
		fprintf(stderr, "lguest-kvm: stopped by signal %d (%s)\n", rs->signal, strsignal(rs->signal));
		return 128 + rs->signal;
	case END_TIME_LIMIT:
		fprintf(stderr, "lguest-kvm: the guest did not finish within %u s (--max-seconds)\n",
			rs->o->max_seconds);
		return 124;
	case END_CRASH:
		fprintf(stderr, "lguest-kvm: %s\n", rs->why);
		return EXIT_GUEST_CRASH;
	case END_HOST_ERROR:
		fprintf(stderr, "lguest-kvm: %s\n", rs->why);
		return EXIT_ERROR;
	default:
		break;
	}
	if (broken) {
		fprintf(stderr, "lguest-kvm: %s\n", broken->error);
		return EXIT_DEVICE_ERROR;
	}
	if (raw && rs->guest_status == 0 && rs->o->net.backend == NET_BACKEND_TAP) {
		if (rs->net.tap.errors || !rs->have_report || rs->report.tx_frames != rs->net.tap.frames) {
			fprintf(stderr, "lguest-kvm: net: %llu of %llu frames written to tap %s%s%s\n",
				(unsigned long long)rs->net.tap.frames, (unsigned long long)rs->report.tx_frames,
				rs->net.tap.ifname, rs->net.tap.errors ? "; first error: " : "", rs->net.tap.first_error);
			return EXIT_VERIFY;
		}
	} else if (raw && rs->guest_status == 0) {
		if (rs->net.sink.bad_frames) {
			fprintf(stderr, "lguest-kvm: net: %llu bad frame(s), first: %s\n",
				(unsigned long long)rs->net.sink.bad_frames, rs->net.sink.first_error);
			return EXIT_VERIFY;
		}
		if (!rs->have_report || rs->report.tx_frames != rs->net.sink.frames ||
		    rs->report.tx_bytes != rs->net.sink.payload_bytes) {
			fprintf(stderr, "lguest-kvm: net: the host verified %llu frames / %llu bytes but the guest sent %llu / %llu\n",
				(unsigned long long)rs->net.sink.frames, (unsigned long long)rs->net.sink.payload_bytes,
				(unsigned long long)rs->report.tx_frames, (unsigned long long)rs->report.tx_bytes);
			return EXIT_VERIFY;
		}
	}
	if (rs->guest_status && !strcmp(rs->o->workload, "tcp") && rs->have_report)
		explain_tcp_failure(rs);
	if (rs->guest_status)
		fprintf(stderr, "lguest-kvm: the guest exited with status %d\n", rs->guest_status);
	return rs->guest_status;
}

/* Steps 1-3 and the threads, in order.  Before the guest runs, a failure is
 * one line and no stats: there is no run to describe (a bad image, no
 * /dev/kvm).  The stats file is opened first, while we may still create it
 * anywhere root may. */
static int setup_run(struct run_state *rs, FILE **json, pthread_t *sig_thread)
{
	const struct run_options *o = rs->o;
	struct sandbox_config sb;

	if (o->stats_json && !(*json = fopen(o->stats_json, "w")))
		return diag_fail("--stats-json %s: %s -- give a writable path", o->stats_json, strerror(errno));
	if (build_guest(rs) < 0 || set_vcpu_signal_mask(rs) < 0)
		return -1;
	/* /dev/kvm itself only creates the VM and the vCPU. */
	close(rs->vm.kvm_fd);
	rs->vm.kvm_fd = -1;
	sb = sandbox_config(rs);
	if (sandbox_drop_privileges(&sb, &rs->sandbox) < 0)
		return -1;
	/* The devices' eventfds are routed before any thread could see a kick. */
	if (net_open_fds(&rs->net) < 0 || wiring_register(&rs->wiring, &rs->con.mmio) < 0 ||
	    wiring_register(&rs->wiring, &rs->net.mmio) < 0)
		return -1;
	if (net_start(&rs->net) < 0 || console_start_input(&rs->con, STDIN_FILENO) < 0)
		return -1;
	if (pthread_create(sig_thread, NULL, signal_thread, rs))
		return diag_fail("cannot start the signal thread");
	/* Every thread exists now; the guest has not run yet. */
	pin_thread(vcpu_thread, 0);
	return sandbox_lock_down(&sb, &rs->sandbox);
}

int lkvm_run(const struct run_options *o)
{
	static struct run_state rs;
	struct sigaction kick = { .sa_handler = on_kick_signal };
	struct stats st = { .n = 0 };
	pthread_t sig_thread;
	FILE *json = NULL;
	sigset_t block;
	int code;

	memset(&rs, 0, sizeof(rs));
	rs.vm.kvm_fd = rs.vm.vm_fd = rs.vm.vcpu_fd = -1;   /* vm_destroy before vm_create */
	rs.o = o;
	rs.t_start = monotonic_seconds();
	sandbox_init(&rs.sandbox);
	sandbox_close_inherited_fds();

	/* Every thread blocks these; the signal thread takes the stop signals
	 * and the vCPU takes the kick only inside KVM_RUN. */
	vcpu_thread = pthread_self();
	stop_signal = 0;
	sigaction(SIGUSR1, &kick, NULL);
	/* A closed stdout (run | head) must not kill us before the stats. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGALRM);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, NULL);

	wiring_init(&rs.wiring, &rs.vm, vcpu_thread);
	console_init(&rs.con, &rs.wiring.host, 0, o->quiet ? -1 : STDOUT_FILENO);
	net_init(&rs.net, &rs.wiring.host, 1, &o->net);
	if (setup_run(&rs, &json, &sig_thread) < 0) {
		console_close(&rs.con);
		diag_print();
		if (json)
			fclose(json);
		net_stop(&rs.net);
		net_close(&rs.net);
		vm_destroy(&rs.vm);
		return EXIT_ERROR;
	}
	if (o->max_seconds)
		alarm(o->max_seconds);
	run_vcpu(&rs);
	alarm(0);
	pthread_cancel(sig_thread);
	pthread_join(sig_thread, NULL);
	net_stop(&rs.net);
	console_close(&rs.con);
	rs.t_end = monotonic_seconds();

	collect_stats(&rs, &st);
	stats_print(stderr, &st);
	code = finish(&rs);
	if (json && stats_write_json(json, o->stats_json, &st) < 0) {
		diag_print();
		if (!code)
			code = EXIT_ERROR;
	}
	net_close(&rs.net);
	vm_destroy(&rs.vm);
	return code;
}
