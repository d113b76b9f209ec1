/*
 * run_vcpu.c -- step 4 of a run (run_state.h): the vCPU loop.
 *
 * One turn: look at the stop flag (the signal thread sets it and kicks us
 * out of the guest) -> finish a TX drain or console output that stopped at
 * its budget, one round per turn -> KVM_RUN -> handle the exit: the guest's
 * ports (exit, crash, the end-of-run report), MMIO to the two devices'
 * register files, or a crash (triple fault, internal error, a final hlt) ->
 * in the lguest model, the net device's timer and tap work, which its waker
 * thread kicked us out for.  The loop ends when rs->end is set.
 *
 * The kick is SIGUSR1, unblocked only inside KVM_RUN (KVM_SET_SIGNAL_MASK):
 * it makes KVM_RUN return EINTR and is then eaten, so nothing is lost and
 * no handler ever runs on guest time.
 */
#include "run_state.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "acpi.h"
#include "diag.h"
#include "linux_boot.h"
#include "vcpu_state.h"

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

void run_port_out(struct run_state *rs, uint16_t port, const uint8_t *data, uint32_t size)
{
	uint32_t gpa;

	switch (port) {
	case LKVM_PORT_TRACE: {
		/* Stamped first: the clock check wants this moment, not later. */
		uint64_t tsc = __builtin_ia32_rdtsc();

		if (size != 4 || !rs->o->trace || rs->trace_sync_host)
			return;     /* not asked for, or announced before: the first one stands */
		memcpy(&gpa, data, 4);
		rs->trace_gpa = gpa;
		rs->trace_sync_host = tsc;
		trace_emit_at(&rs->trace, tsc, LKVM_TR_SYNC, 0, 0, 0, 0);
		return;
	}
	case LINUX_SLEEP_PORT:
		/* A Linux guest's ACPI power-off: SLP_TYP S5 with SLP_EN (the
		 * FADT's sleep control register, acpi.c).  Other sleep states
		 * are not offered; their writes are counted as unknown. */
		if (rs->linux_guest && size == 1 && (data[0] & ACPI_SLP_EN) &&
		    ((data[0] >> 2) & 7) == ACPI_S5_SLP_TYP) {
			rs->end = END_GUEST_EXIT;
			rs->guest_status = 0;
			return;
		}
		rs->io_unknown++;
		return;
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

		if (size == 4) {
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

static void handle_io(struct run_state *rs)
{
	struct kvm_run *run = rs->vm.run;
	uint8_t *data = (uint8_t *)run + run->io.data_offset;

	/* A Linux guest's COM1: every byte of a (rep) access, in order. */
	if (rs->linux_guest && run->io.port >= UART_COM1_BASE && run->io.port < UART_COM1_BASE + UART_PORTS) {
		for (uint32_t i = 0; i < (uint32_t)run->io.size * run->io.count; i++)
			uart_access(&rs->uart, run->io.port - UART_COM1_BASE, data + i,
				    run->io.direction == KVM_EXIT_IO_OUT);
		return;
	}
	if (run->io.direction == KVM_EXIT_IO_IN) {
		memset(data, 0xff, (size_t)run->io.size * run->io.count);
		rs->io_unknown++;
		return;
	}
	run_port_out(rs, run->io.port, data, run->io.size);
}

void run_mmio_dispatch(struct run_state *rs, uint64_t addr, uint8_t *data, uint32_t len, bool is_write)
{
	struct virtio_mmio_dev *devs[] = { &rs->con.mmio, &rs->net.mmio };

	for (unsigned i = 0; i < 2; i++)
		if (addr >= devs[i]->base && addr + len <= devs[i]->base + LKVM_MMIO_SIZE) {
			virtio_mmio_access(devs[i], addr - devs[i]->base, data, len, is_write);
			return;
		}
	/* Nothing lives here: reads return zeros, writes vanish. */
	if (!is_write)
		memset(data, 0, len);
	rs->mmio_unknown++;
}

static void handle_mmio(struct run_state *rs)
{
	struct kvm_run *run = rs->vm.run;

	run_mmio_dispatch(rs, run->mmio.phys_addr, run->mmio.data, run->mmio.len > 8 ? 8 : run->mmio.len,
			  run->mmio.is_write);
}

int set_vcpu_signal_mask(struct run_state *rs)
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

/* Stopped from outside: a guest that went quiet left no exit saying where
 * it was, so look (vcpu_state.c); finish() prints it. */
static void describe_stopped_vcpu(struct run_state *rs)
{
	unsigned gsis[] = { rs->con.mmio.gsi, rs->net.mmio.gsi };

	vcpu_state_describe(rs->vm.vm_fd, rs->vm.vcpu_fd, &rs->vm.mem, gsis, 2, rs->stopped_vcpu, sizeof(rs->stopped_vcpu));
}

void run_vcpu(struct run_state *rs)
{
	struct kvm_run *run = rs->vm.run;
	bool lguest = rs->o->net.model == NET_MODEL_LGUEST;

	while (rs->end == END_NONE) {
		int sig = __atomic_load_n(&rs->stop_signal, __ATOMIC_SEQ_CST);

		if (sig) {
			rs->signal = sig;
			rs->end = sig == SIGALRM ? END_TIME_LIMIT : END_SIGNAL;
			describe_stopped_vcpu(rs);
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
