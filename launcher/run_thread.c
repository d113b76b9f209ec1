/*
 * run_thread.c -- `--model thread`: a run with no VM at all, as Linux's
 * tools/virtio/ringtest runs a ring.  It replaces steps 1 and 4 of a run
 * (run_state.h): instead of a VM and a vCPU, guest RAM alone, and the guest
 * stub's own command-line parser, virtio driver, notification policies and
 * raw workload -- the same source files, compiled for the host with
 * hosted_guest.h -- run on this thread, the one pinned to CPU 0 that would
 * otherwise sit in KVM_RUN.  The devices are the threaded model's, on
 * their thread on CPU 1.
 *
 * One frame's trip: workload_raw fills a buffer it got from alloc_pages
 * (guest RAM) -> gvq_add/gvq_kick write the ring with virt_to_phys
 * addresses -> a notify is mmio_write32(QueueNotify), here an eventfd write
 * as KVM's ioeventfd would make -> the device thread pops, verifies and
 * completes the chain through the same bounds-checked guest memory -> with
 * --wait halt, the rise of its interrupt line wakes halt_until_irq.  When
 * the workload returns, its report is copied as the vCPU loop copies the
 * report port's.
 *
 * The devices' interrupt lines end here instead of in an IOAPIC
 * (thread_device_host): each rise is one write of an eventfd that the halt
 * sleeps on, as the stub's edge-triggered routes make one interrupt of it
 * in a VM.
 *
 * What stands in for an exit costs --exit-cost-ns of spinning: every MMIO
 * access and every halt, the places a guest in a VM leaves it.
 */
#include "run_state.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_mmio.h>

#include "cmdline.h"
#include "diag.h"
#include "hosted_guest.h"   /* what the guest's files call, defined below */
#include "workloads.h"

/* Guest RAM below this is left alone, as the stub's image would occupy it. */
#define HOSTED_HEAP_START (2ull << 20)

/* The one hosted guest of this process, as the stub's globals assume. */
static struct {
	struct run_state *rs;
	uint64_t heap_next;
	uint64_t exit_cost_ticks;
	jmp_buf exit_jmp;
	int exit_status;
	struct device_host host;    /* the devices': the wiring's, but for the line */
	int irq_efd;                /* one count per rise of a device's line */
} hosted;

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
	hosted.exit_status = status;
	longjmp(hosted.exit_jmp, 1);
}

int hosted_guest_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (hosted.rs->o->quiet)
		return 0;
	va_start(ap, fmt);
	n = vfprintf(stdout, fmt, ap);
	va_end(ap);
	fflush(stdout);   /* as promptly as the console would show it */
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

	pay_exit();
	memcpy(&q, data, sizeof(q));
	/* What KVM's ioeventfd does for the threaded model: a QueueNotify of a
	 * queue with a notify eventfd never reaches the register file. */
	if (is_write && len == 4 && addr == virtio_mmio_notify_gpa(net) && q < VIRTIO_MMIO_MAX_QUEUES &&
	    net->notify_fd[q] >= 0) {
		uint64_t one = 1;

		if (write(net->notify_fd[q], &one, sizeof(one)) != sizeof(one))
			run_mmio_dispatch(hosted.rs, addr, data, len, is_write);
		return;
	}
	run_mmio_dispatch(hosted.rs, addr, data, len, is_write);
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
 * the thread model's guest makes). */
void outl(uint16_t port, uint32_t v)
{
	pay_exit();
	run_port_out(hosted.rs, port, (const uint8_t *)&v, sizeof(v));
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
	__builtin_ia32_pause();
}

/* Sleep until a device's line has risen since the last wake-up.  The kick
 * signal, unblocked on this thread for the run, interrupts the read for a
 * stop. */
void halt_until_irq(uint64_t seen)
{
	uint64_t n;

	if (irq_seq != seen)
		return;
	pay_exit();
	while (read(hosted.irq_efd, &n, sizeof(n)) != sizeof(n))
		if (errno != EINTR || stop_requested())
			guest_exit(-1);
	irq_seq++;
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
	hosted.irq_efd = -1;
	/* Guest RAM and the kick as the wiring has them (the kick needs no
	 * VM); the line goes to the halt's eventfd, which needs no ctx. */
	hosted.host = rs->wiring.host;
	hosted.host.set_irq_line = hosted_set_irq_line;
	return &hosted.host;
}

void release_thread_guest(void)
{
	if (hosted.irq_efd >= 0)
		close(hosted.irq_efd);
	hosted.irq_efd = -1;
}

/* ---- step 1: RAM, backend, command line ---- */

int build_thread_guest(struct run_state *rs)
{
	int rc;
	unsigned tsc_khz;

	hosted.heap_next = HOSTED_HEAP_START;
	hosted.irq_efd = eventfd(0, EFD_CLOEXEC);
	if (hosted.irq_efd < 0)
		return diag_fail("eventfd for the thread model's interrupt line: %s", strerror(errno));
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

static void on_kick(int sig)
{
	(void)sig;
}

static void run_stub_workload(void)
{
	static struct params p = {
		.workload = "raw", .policy = "dynamic", .fault = "none",
		.bytes = 1ull << 30, .frame = 1514, .ring = 128, .segments = 3,
	};

	if (cmdline_parse(hosted.rs->thread_cmdline, &p) < 0)
		guest_exit(LKVM_STATUS_FAILED);
	hosted_guest_printf("lguest-kvm " LKVM_VERSION ", --model thread: no VM; the guest stub's driver and raw "
			    "workload run on a host thread (exit cost %u ns)\ncommand line: %s\n",
			    hosted.rs->o->exit_cost_ns, hosted.rs->thread_cmdline);
	guest_exit(workload_raw(&p));
}

void run_thread_guest(struct run_state *rs)
{
	struct sigaction kick = { .sa_handler = on_kick };   /* no SA_RESTART: a read returns EINTR */
	sigset_t usr1;

	sigaction(SIGUSR1, &kick, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	if (!setjmp(hosted.exit_jmp))
		run_stub_workload();
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
	rs->report = guest_report;
	rs->have_report = 1;
}
