/*
 * run_thread.c -- `--vm none`: a run with no VM at all, as Linux's
 * tools/virtio/ringtest runs a ring.  It replaces steps 1 and 4 of a run
 * (run_state.h): instead of a VM and a vCPU, guest RAM alone, and the guest
 * stub's own command-line parser, virtio driver, notification policies and
 * raw and tcp workloads -- the same source files, compiled for the host
 * with hosted_guest.h -- run on this thread, the one pinned to CPU 0 that
 * would otherwise sit in KVM_RUN.  The devices are either host model's:
 *
 *   threaded  a QueueNotify write is an eventfd write, as KVM's ioeventfd
 *             makes it; the device thread on CPU 1 drains.
 *   lguest    a QueueNotify write is a call: this thread stops being the
 *             guest, drains the ring itself (devices/net.c, the very code
 *             the KVM lguest model's vCPU runs after an MMIO exit), and
 *             goes back.  The waker thread's kick for a timer expiry is
 *             posted, then SIGUSR1 at this thread, and it interrupts the
 *             guest wherever it is -- at its next spin (cpu_relax) if the
 *             post is seen before the signal lands, which on this machine
 *             takes ~50 us: the handler runs the expiry there and then, unless
 *             the guest is "out of the VM" already (in_host), in which case
 *             the expiry waits for the way back in -- exactly as KVM leaves
 *             a kick that comes outside KVM_RUN pending until the next
 *             entry.  So the handler never takes the device lock over code
 *             that holds it.
 *
 * One frame's trip (lguest): workload_raw or tcp_sender fills a buffer it
 * got from alloc_pages (guest RAM) -> gvq_add/gvq_kick write the ring with
 * virt_to_phys addresses -> the policy says notify: mmio_write32(QueueNotify)
 * -> mmio() below: in_host, --exit-cost-ns of spinning, run_mmio_dispatch ->
 * net_tx_on_notify drains the ring into the backend, returns the buffers
 * on the used ring, sets NO_NOTIFY and arms the timer -> back to the guest.
 * Frames the guest queues meanwhile wait, unnotified, until the timer
 * expires: the waker kicks, the handler (or the next exit) runs
 * net_tx_on_timeout, which drains and stays suppressed or lets the guest
 * notify again.
 *
 * The devices' interrupt lines end here instead of in an IOAPIC
 * (thread_device_host): each rise is one write of an eventfd that the halt
 * sleeps on, as the stub's edge-triggered routes make one interrupt of it
 * in a VM.  The local APIC timer the tcp workload arms for its
 * retransmissions is the halt's poll timeout.
 *
 * What stands in for an exit costs --exit-cost-ns of spinning: every MMIO
 * access (an APIC timer write is one), port write and halt, and every kick
 * of the lguest model -- the places a guest in a VM leaves it.
 */
#include "run_state.h"

#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "clock.h"
#include "cmdline.h"
#include "diag.h"
#include "hosted_guest.h"   /* what the guest's files call, defined below */
#include "workloads.h"

/* Guest RAM below this is left alone, as the stub's image would occupy it. */
#define HOSTED_HEAP_START (2ull << 20)

/* The one hosted guest of this process, as the stub's globals assume. */
static struct {
	struct run_state *rs;
	bool lguest;                /* --model lguest: this thread drains and takes expiries */
	uint64_t heap_next;
	uint64_t exit_cost_ticks;
	jmp_buf exit_jmp;
	int exit_status;
	struct device_host host;    /* the devices': the wiring's, but for the line */
	int irq_efd;                /* one count per rise of a device's line */
	int kick_efd;               /* written by a kick that found this thread in the host */
	int kick_posted;            /* lguest: the waker's kick, before its signal (see hosted_kick) */
	uint64_t apic_due_ns;       /* the APIC timer's expiry, CLOCK_MONOTONIC (0: not armed) */
} hosted;

/* Set while this thread is the host, not the guest: inside an exit, a
 * halt, the console.  A kick then stays posted (hosted.kick_posted), and
 * the way back into the guest (host_leave) serves it -- as a kick outside
 * KVM_RUN stays pending.  kick_pending: a kick taken, to be served by
 * serve_kicks.  Both written by this thread and its own signal handler
 * only. */
static volatile sig_atomic_t in_host = 1, kick_pending;

struct lkvm_guest_report guest_report;
volatile uint64_t irq_seq, timer_seq, irqs_at_hlt;

/* ---- the clock the guest times itself with ---- */

/* The TSC's rate against CLOCK_MONOTONIC_RAW over 20 ms: KVM_GET_TSC_KHZ's
 * stand-in, for --pace-ns and the exit cost. */
static unsigned host_tsc_khz(void)
{
	struct timespec a, b;
	uint64_t t0, t1;
	double ns;

	clock_gettime(CLOCK_MONOTONIC_RAW, &a);
	t0 = rdtsc();
	do {
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
	} while (ns < 20e6);
	t1 = rdtsc();
	return (unsigned)((t1 - t0) / (ns / 1e6));
}

/* A guest in a VM would leave it here. */
static void pay_exit(void)
{
	hosted.rs->thread_exits++;
	spin_ticks(hosted.exit_cost_ticks);   /* hosted_guest.h's, as the guest spins */
}

static bool stop_requested(void)
{
	return __atomic_load_n(&hosted.rs->stop_signal, __ATOMIC_SEQ_CST) != 0;
}

/* ---- leaving the guest and coming back ---- */

static void host_enter(void)
{
	in_host = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* The waker's kick, taken off the post: true if there was one. */
static bool take_posted_kick(void)
{
	return __atomic_exchange_n(&hosted.kick_posted, 0, __ATOMIC_SEQ_CST) != 0;
}

/* lguest: what the vCPU loop does after a kick (run_vcpu.c): the expiry
 * or the tap's frames, then any drain its budget stopped, one round at a
 * time, the stop flag looked at between rounds.  false if a stop came. */
static bool serve_kicks(void)
{
	for (;;) {
		if (take_posted_kick())
			kick_pending = 1;
		if (!kick_pending && !net_tx_continuing(&hosted.rs->net))
			break;
		if (stop_requested())
			return false;
		if (kick_pending) {
			kick_pending = 0;
			hosted.rs->thread_kicks++;
			pay_exit();
		}
		net_vcpu_poll(&hosted.rs->net);
	}
	return !stop_requested();
}

/* Back into the guest: serve what came meanwhile, then let kicks in.  A
 * kick between the last look and in_host = 0 is seen by the look after. */
static void host_leave(void)
{
	for (;;) {
		if (hosted.lguest && !serve_kicks())
			guest_exit(-1);
		in_host = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (!kick_pending && !__atomic_load_n(&hosted.kick_posted, __ATOMIC_SEQ_CST))
			return;
		host_enter();
	}
}

/* SIGUSR1: the lguest model's waker (a timer expiry, the tap readable) or
 * the signal thread (a stop).  In the guest, it is an exit where the guest
 * stands: serve it now.  In the host, leave it to host_leave, and write
 * kick_efd: a halt about to sleep in poll() would otherwise miss a kick
 * that came between its last look and the sleep (KVM closes that window
 * with KVM_SET_SIGNAL_MASK; here the halt polls kick_efd too).  The
 * handler only runs code the interrupted thread is not inside of, and
 * keeps errno for it. */
static void on_kick(int sig)
{
	int saved = errno;
	uint64_t one = 1;

	(void)sig;
	if (in_host || !hosted.lguest) {
		/* A posted kick is served on the way back (host_leave); the
		 * write wakes a halt that is about to sleep. */
		(void)!write(hosted.kick_efd, &one, sizeof(one));
	} else if (take_posted_kick()) {
		kick_pending = 1;
		host_enter();
		serve_kicks();      /* a stop is the guest's to act on, at its next exit or spin */
		in_host = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	/* Else the guest's own spin took this kick already (cpu_relax), or
	 * it is a stop, which the guest acts on at its next exit or spin. */
	errno = saved;
}

/*
 * lguest: the waker's kick.  Posted first, then the signal: a signal to a
 * thread running on the other CPU arrives ~50 us later on this machine (an
 * IPI through its hypervisor), as long as 2008's whole timer period, so the
 * guest's spin loops -- where a paced guest spends its time -- take a
 * posted kick at once (cpu_relax), and the signal still interrupts the
 * guest anywhere else.  Whichever comes first serves it; the other finds
 * nothing posted.
 */
static void hosted_kick(void *ctx)
{
	__atomic_store_n(&hosted.kick_posted, 1, __ATOMIC_SEQ_CST);
	hosted.rs->wiring.host.kick_vcpu(ctx);
}

/* ---- lib.h ---- */

void *alloc_pages(size_t bytes)
{
	const struct guest_mem *gm = &hosted.rs->vm.mem;
	uint64_t at = hosted.heap_next;

	bytes = (bytes + 4095) & ~(size_t)4095;
	if (bytes > gm->size - at) {
		hosted_guest_printf("guest: out of memory (wanted %zu bytes) -- raise --mem\n", bytes);
		guest_exit(LKVM_STATUS_FAILED);
	}
	hosted.heap_next += bytes;
	return memset(gm->host + at, 0, bytes);
}

void guest_exit(int status)
{
	host_enter();       /* the guest is gone: no kick may serve anything on its stack */
	hosted.exit_status = status;
	longjmp(hosted.exit_jmp, 1);
}

int hosted_guest_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (hosted.rs->o->quiet)
		return 0;
	host_enter();       /* stdio's lock: no kick served inside it */
	va_start(ap, fmt);
	n = vfprintf(stdout, fmt, ap);
	va_end(ap);
	fflush(stdout);     /* as promptly as the console would show it */
	host_leave();
	return n;
}

/* ---- io.h ---- */

/* An address outside RAM for a pointer outside it, so that a device
 * refuses the buffer instead of being handed a wrapped offset. */
uint64_t virt_to_phys(const void *p)
{
	const struct guest_mem *gm = &hosted.rs->vm.mem;
	uintptr_t a = (uintptr_t)p, base = (uintptr_t)gm->host;

	return a >= base && a - base < gm->size ? a - base : UINT64_MAX;
}

static void mmio(uint64_t addr, uint8_t *data, uint32_t len, bool is_write)
{
	struct virtio_mmio_dev *net = &hosted.rs->net.mmio;
	uint32_t q;

	host_enter();
	pay_exit();
	memcpy(&q, data, sizeof(q));
	/* What KVM's ioeventfd does for the threaded model: a QueueNotify of a
	 * queue with a notify eventfd never reaches the register file. */
	if (is_write && len == 4 && addr == virtio_mmio_notify_gpa(net) && q < VIRTIO_MMIO_MAX_QUEUES &&
	    net->notify_fd[q] >= 0) {
		uint64_t one = 1;

		if (write(net->notify_fd[q], &one, sizeof(one)) != sizeof(one))
			run_mmio_dispatch(hosted.rs, addr, data, len, is_write);
	} else {
		run_mmio_dispatch(hosted.rs, addr, data, len, is_write);
	}
	host_leave();
}

uint32_t mmio_read32(uint64_t addr)
{
	uint8_t data[8] = { 0 };
	uint32_t v;

	mmio(addr, data, 4, false);
	memcpy(&v, data, 4);
	return v;
}

void mmio_write32(uint64_t addr, uint32_t v)
{
	uint8_t data[8] = { 0 };

	memcpy(data, &v, 4);
	mmio(addr, data, 4, true);
}

/* A port write leaves a VM too (the stub's trace announcement is the one
 * the hosted guest makes). */
void outl(uint16_t port, uint32_t v)
{
	host_enter();
	pay_exit();
	run_port_out(hosted.rs, port, (const uint8_t *)&v, sizeof(v));
	host_leave();
}

uint8_t mmio_read8(uint64_t addr)
{
	uint8_t data[8] = { 0 };

	mmio(addr, data, 1, false);
	return data[0];
}

/* Every spin loop of the guest turns here: where a stop ends it. */
void cpu_relax(void)
{
	if (stop_requested())
		guest_exit(-1);
	if (hosted.lguest && __atomic_load_n(&hosted.kick_posted, __ATOMIC_RELAXED) && !in_host) {
		/* The waker's kick, taken where the guest spins: an interrupt
		 * at this instruction, as the signal would make it. */
		host_enter();
		serve_kicks();
		in_host = 0;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	}
	__builtin_ia32_pause();
}

/* The local APIC timer (tcp's retransmission deadline): each register
 * write an exit, as in a VM; the expiry is the halt's poll timeout. */
void lapic_timer_setup(void)
{
	host_enter();
	pay_exit();
	host_leave();
}

void lapic_timer_arm_ns(uint32_t ns)
{
	host_enter();
	pay_exit();
	hosted.apic_due_ns = monotonic_ns() + (ns ? ns : 1);
	host_leave();
}

/* The halt's timeout for poll(): until the APIC timer's expiry, rounded
 * up to a millisecond (late rather than early, as the guest then re-arms
 * for nothing); -1 with no timer armed. */
static int apic_poll_timeout_ms(void)
{
	uint64_t now;

	if (!hosted.apic_due_ns)
		return -1;
	now = monotonic_ns();
	return now >= hosted.apic_due_ns ? 0 : (int)((hosted.apic_due_ns - now + 999999) / 1000000);
}

/* Sleep until a device's line has risen since the last wake-up, or the
 * APIC timer expires.  A kick wakes the poll (kick_efd, or EINTR): in the
 * lguest model it is served here, and the guest sleeps on unless a line
 * rose, as a halted vCPU does after KVM_RUN returned for a kick. */
void halt_until_irq(uint64_t seen)
{
	uint64_t n;

	if (irq_seq != seen)
		return;
	host_enter();
	pay_exit();
	for (;;) {
		struct pollfd p[2] = { { .fd = hosted.irq_efd, .events = POLLIN },
				       { .fd = hosted.kick_efd, .events = POLLIN } };
		int rc;

		if (hosted.lguest && !serve_kicks())
			guest_exit(-1);
		rc = poll(p, 2, apic_poll_timeout_ms());
		if (rc < 0 && errno != EINTR)
			guest_exit(-1);
		if (stop_requested())
			guest_exit(-1);
		if (rc > 0 && (p[1].revents & POLLIN))
			(void)!read(hosted.kick_efd, &n, sizeof(n));    /* served above, next turn */
		if (rc > 0 && (p[0].revents & POLLIN) && read(hosted.irq_efd, &n, sizeof(n)) == sizeof(n)) {
			irq_seq++;
			break;
		}
		if (hosted.apic_due_ns && monotonic_ns() >= hosted.apic_due_ns) {
			hosted.apic_due_ns = 0;
			timer_seq++;
			irq_seq++;
			break;
		}
	}
	host_leave();
}

/* ---- the devices' interrupt lines ---- */

/* A rise is what an edge-triggered route turns into an interrupt; a fall
 * has nothing to tell a guest that sleeps on edges.  Whichever device's
 * line rose, the halt wakes, as the stub's one interrupt stub does not ask
 * which vector fired either.  The write fails only with 2^64 - 2 rises
 * unread, when a wake-up is pending anyway. */
static void hosted_set_irq_line(void *ctx, unsigned gsi, bool level)
{
	uint64_t one = 1;

	(void)ctx;
	(void)gsi;
	if (level)
		(void)!write(hosted.irq_efd, &one, sizeof(one));
}

const struct device_host *thread_device_host(struct run_state *rs)
{
	hosted.rs = rs;
	hosted.lguest = rs->o->net.model == NET_MODEL_LGUEST;
	hosted.irq_efd = hosted.kick_efd = -1;
	/* Guest RAM and the kick as the wiring has them (the kick needs no
	 * VM: it is SIGUSR1 at this thread); the line goes to the halt's
	 * eventfd, which needs no ctx. */
	hosted.host = rs->wiring.host;
	hosted.host.set_irq_line = hosted_set_irq_line;
	hosted.host.kick_vcpu = hosted_kick;
	return &hosted.host;
}

void release_thread_guest(void)
{
	if (hosted.irq_efd >= 0)
		close(hosted.irq_efd);
	if (hosted.kick_efd >= 0)
		close(hosted.kick_efd);
	hosted.irq_efd = hosted.kick_efd = -1;
}

/* ---- step 1: RAM, backend, command line ---- */

int build_thread_guest(struct run_state *rs)
{
	int rc;
	unsigned tsc_khz;

	hosted.heap_next = HOSTED_HEAP_START;
	hosted.irq_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	hosted.kick_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (hosted.irq_efd < 0 || hosted.kick_efd < 0)
		return diag_fail("eventfd for the no-VM guest's interrupt line and kicks: %s", strerror(errno));
	rc = gmem_map(&rs->vm.mem, rs->o->mem);
	if (rc < 0)
		return diag_fail("cannot allocate %llu MiB of guest RAM: %s -- lower --mem",
				 (unsigned long long)(rs->o->mem >> 20), strerror(-rc));
	if (net_open_backend(&rs->net) < 0)
		return -1;
	tsc_khz = host_tsc_khz();
	rs->tsc_khz = tsc_khz;
	hosted.exit_cost_ticks = (uint64_t)rs->o->exit_cost_ns * tsc_khz / 1000000;
	return build_cmdline(rs->o, tsc_khz, rs->thread_cmdline, sizeof(rs->thread_cmdline));
}

/* ---- step 4: the guest, on this thread ---- */

static void run_stub_workload(void)
{
	static struct params p = {
		.workload = "raw", .policy = "dynamic", .fault = "none",
		.bytes = 1ull << 30, .frame = 1514, .ring = 128, .segments = 3,
	};

	if (cmdline_parse(hosted.rs->thread_cmdline, &p) < 0)
		guest_exit(LKVM_STATUS_FAILED);
	hosted_guest_printf("lguest-kvm " LKVM_VERSION ", --vm none --model %s: no VM; the guest stub's driver and "
			    "%s workload run on a host thread (exit cost %u ns)\ncommand line: %s\n",
			    hosted.lguest ? "lguest" : "threaded", hosted.rs->o->workload, hosted.rs->o->exit_cost_ns,
			    hosted.rs->thread_cmdline);
	/* options.c lets through only what is here. */
	if (strcmp(p.fault, "none"))
		guest_exit(workload_hostile_ring(&p));
	guest_exit(strcmp(p.workload, "tcp") ? workload_raw(&p) : workload_tcp(&p));
}

void run_thread_guest(struct run_state *rs)
{
	struct sigaction kick = { .sa_handler = on_kick };   /* no SA_RESTART: a poll returns EINTR */
	sigset_t usr1;

	sigaction(SIGUSR1, &kick, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	if (!setjmp(hosted.exit_jmp)) {
		host_leave();   /* the guest starts: kicks may interrupt it from here */
		run_stub_workload();
	}
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);

	if (stop_requested()) {
		rs->signal = __atomic_load_n(&rs->stop_signal, __ATOMIC_SEQ_CST);
		rs->end = rs->signal == SIGALRM ? END_TIME_LIMIT : END_SIGNAL;
		return;
	}
	rs->end = END_GUEST_EXIT;
	rs->guest_status = hosted.exit_status;
	guest_report.magic = LKVM_REPORT_MAGIC;
	guest_report.version = LKVM_REPORT_VERSION;
	guest_report.size = sizeof(guest_report);
	guest_report.irq_count = irq_seq;
	guest_report.timer_irqs = timer_seq;
	rs->report = guest_report;
	rs->have_report = 1;
}
