/*
 * race_torture.c -- the guest's real virtio driver and the host's real ring
 * code on two threads, with random delays forced into every publish,
 * barrier and flag or event read, until a lost wakeup or a torn buffer
 * shows (docs/testing.md, "Race torture"; issue 27).  No VM: it runs on
 * every machine.
 *
 * What runs:
 *   guest thread  guest-stub/virtio_drv.c and vring_packed_drv.c, unchanged
 *                 but for the RACE_POINTs of include/race_hooks.h, driven
 *                 the way workload_raw.c drives them: frames in the raw
 *                 workload's format (include/lkvm_frame.h) added in bursts of
 *                 random size, split into 1-3 segments, direct or indirect;
 *                 a full ring forces a notify; waiting for used buffers is
 *                 net_drv_wait_tx's halt loop (ack, re-enable interrupts,
 *                 sleep only if nothing was used meanwhile); now and then the
 *                 guest waits for every buffer to come back, which is where a
 *                 lost notify or interrupt becomes a stall rather than a delay.
 *   host thread   one of two devices over devices/virtqueue.c with
 *                 vring_split.c / vring_packed.c:
 *                   notify  a plain virtio device: on a notify, suppress,
 *                           drain, re-enable and re-check, interrupt if the
 *                           driver wants one;
 *                   timer   devices/net.c's own threaded TX device thread
 *                           (NO_NOTIFY and the one-shot timer, rearm or
 *                           oneshot), started by net_start as the launcher
 *                           does, with its eventfd kick and timerfd.
 *                 Every frame goes through the sink backend's check
 *                 (devices/net_sink.c): sequence in order, payload intact.
 *   main thread   the watchdog: no buffer completed for --stall-ms, and
 *                 the guest asleep on an interrupt that did not come with no
 *                 thread runnable, is a stall (a livelock or a 10x longer
 *                 quiet is one too; a woken or runnable thread that the
 *                 scheduler has not run is a delay, reported, not failed);
 *                 it prints both sides' ring state and fails.
 *
 * Between them: guest RAM mapped twice (tests/unit/guest_ring_fixture.h);
 * a notify is the guest's QueueNotify write, caught by the RACE_MMIO_WRITE
 * hook (the "exit"): a futex wake for the notify host, an eventfd write for
 * net.c (the ioeventfd's role).  An interrupt is a counter the guest sleeps
 * on with futex (halt_until_irq's role): the notify host bumps it when
 * vq_should_interrupt says so; for net.c it is the rise of the transport's
 * interrupt line, which the guest's InterruptACK write lowers again through
 * virtio_mmio_access.
 *
 * The delays: at each RACE_POINT a thread, with probability 1/--odds, spins
 * a random number of pauses (up to --spin), and one time in 64 of those
 * yields the CPU instead, so the other thread runs a long stretch inside
 * the window.  Odds and lengths are per run, from the seed; each thread
 * draws from its own stream (net.c's device thread from its first point).
 *
 * Exit status: 0 clean, 1 a stall or corruption was found (or, with
 * --expect-fail, the mutant was NOT caught), 77 no double-mapped RAM.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>

#include <stdarg.h>

/* The fixture's small test drivers (add1, host_drain, ...) are not used here. */
#define FIXTURE_OWN_GUEST_EXIT 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../unit/guest_ring_fixture.h"
#pragma GCC diagnostic pop
#include "lkvm_frame.h"
#include "net.h"
#include "net_sink.h"
#include "race_hooks.h"

#define NET_HDR 12u   /* struct virtio_net_hdr_v1 */

/* ---- the run's settings ---- */

enum host_kind { HOST_NOTIFY, HOST_TIMER };

struct config {
	const char *name;
	bool packed, event_idx;
	const char *policy;         /* the guest's notify policy (notify_policy.h) */
	enum host_kind host;
	enum host_timer timer;      /* HOST_TIMER only */
};

static const struct config configs[] = {
	{ "split-always", false, false, "always", HOST_NOTIFY, 0 },
	{ "split-event-idx", false, true, "event-idx", HOST_NOTIFY, 0 },
	{ "split-dynamic", false, false, "dynamic", HOST_NOTIFY, 0 },
	{ "split-timer-static", false, false, "static:64", HOST_TIMER, HOST_TIMER_REARM },
	{ "split-timer-dynamic", false, false, "dynamic", HOST_TIMER, HOST_TIMER_REARM },
	{ "split-timer-oneshot-event-idx", false, true, "event-idx", HOST_TIMER, HOST_TIMER_ONESHOT },
	{ "packed-always", true, false, "always", HOST_NOTIFY, 0 },
	{ "packed-event-desc", true, true, "event-desc", HOST_NOTIFY, 0 },
	{ "packed-timer-dynamic-exact", true, false, "dynamic-exact", HOST_TIMER, HOST_TIMER_REARM },
	{ "packed-timer-oneshot-event-desc", true, true, "event-desc", HOST_TIMER, HOST_TIMER_ONESHOT },
};
#define NCONFIGS (sizeof(configs) / sizeof(configs[0]))

static const struct config *cfg;
static uint64_t opt_buffers = 200000;   /* per configuration */
static uint32_t opt_seed = 1;
static unsigned opt_stall_ms = 3000;
static bool opt_expect_fail;
static uint16_t opt_ring = 64;

/* ---- the shared state ---- */

static _Atomic uint32_t irq_seq;        /* interrupts delivered to the guest */
static _Atomic uint32_t notify_seq;     /* notifies (notify host) */
static _Atomic uint64_t completed;      /* buffers the guest got back */
static _Atomic bool stop;
static _Atomic bool guest_done;
static struct net *net;                 /* HOST_TIMER */
/* net.c's backend there is the sink (net_init's default); its state. */
#define NET_SINK(n) ((struct net_sink *)(n)->be)
static struct net_sink sink;            /* HOST_NOTIFY's check (net.c has its own) */
static struct vq *hvq;                  /* the host's queue: &vq, or net's TX queue */
static struct device_host host;
static uint64_t host_interrupts;

static long futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, ts, NULL, 0);
}

static void wake(_Atomic uint32_t *addr)
{
	atomic_fetch_add(addr, 1);
	futex(addr, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Sleep while *addr is `seen`, or until `ns` passed (0: 100 ms, to look at stop). */
static void sleep_on(_Atomic uint32_t *addr, uint32_t seen, uint64_t ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns ? (long)ns : 100000000L };

	futex(addr, FUTEX_WAIT_PRIVATE, seen, &ts);
}

/* ---- the delays ---- */

static _Thread_local uint64_t rs;        /* xorshift64, per thread */
static uint32_t odds_mask = 7, spin_max = 256;
/* The hot site: for a while, one site always delays, and long.  The
 * watchdog picks it (or none) every tick, at random: a window that plain
 * odds hit once in a million buffers is then held open thousands of times.
 * Nothing here knows which site a mutant is next to. */
static _Atomic int hot_site = -1;
static unsigned opt_hot_pct = 20;        /* % of ticks with a hot site */
#define HOT_SPIN 4096u
static uint64_t points_hit[RACE_SITES];

static uint64_t rnd64(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* A thread the harness did not start itself (net.c's device thread, which
 * net_start creates) comes here with rs still 0, and xorshift never leaves
 * 0: every point would then take the longest branch (a sched_yield) every
 * time.  Such a thread gets its own stream, from the run's seed and the
 * order in which threads first arrive. */
static void seed_this_thread(void)
{
	static _Atomic uint32_t late_threads;

	rs = (opt_seed + 0x632be59bd9b4e019ull * (1 + atomic_fetch_add(&late_threads, 1))) | 1;
}

void lkvm_race_point(enum race_site site)
{
	uint64_t r;

	if (__builtin_expect(!rs, 0))
		seed_this_thread();
	r = rnd64();

	points_hit[site]++;   /* racy between threads: a rough count is enough */
	if ((int)site == atomic_load_explicit(&hot_site, memory_order_relaxed)) {
		r >>= 16;
		if ((r & 3) == 0)
			sched_yield();
		else
			for (uint64_t n = (r >> 2) % HOT_SPIN; n; n--)
				__builtin_ia32_pause();
		return;
	}
	if (r & odds_mask)
		return;
	r >>= 16;
	if ((r & 63) == 0) {
		sched_yield();
		return;
	}
	for (uint64_t n = (r >> 6) % spin_max; n; n--)
		__builtin_ia32_pause();
}

/* ---- the guest's register writes ---- */

static void host_interrupt(void)
{
	host_interrupts++;
	wake(&irq_seq);
}

void lkvm_race_mmio_write(uint64_t addr, uint32_t value)
{
	uint64_t off = addr - dev.base;

	if (off == VIRTIO_MMIO_QUEUE_NOTIFY) {
		if (cfg->host == HOST_NOTIFY) {
			wake(&notify_seq);
		} else {
			uint64_t one = 1;

			/* The ioeventfd's write.  Nothing else may fail here. */
			if (write(net->mmio.notify_fd[NET_TX], &one, 8) != 8)
				abort();
		}
	} else if (off == VIRTIO_MMIO_INTERRUPT_ACK && cfg->host == HOST_TIMER) {
		virtio_mmio_access(&net->mmio, VIRTIO_MMIO_INTERRUPT_ACK, (uint8_t *)&value, 4, true);
	}
}

/* net.c's interrupt line: a rise is an interrupt. */
static void set_irq_line(void *ctx, unsigned gsi, bool level)
{
	(void)ctx, (void)gsi;
	if (level)
		host_interrupt();
}

/* ---- failing ---- */

/* Where the guest thread is, for the watchdog's report. */
static const char *volatile guest_where = "running";
static volatile uint32_t guest_seen;
static _Atomic bool guest_asleep;       /* in guest_wait_used's sleep (a woken guest included) */
static uint64_t sched_delays;           /* no progress past --stall-ms, not a stall (watchdog) */
static unsigned opt_hold_woken_ms;      /* --hold-woken-guest-ms (a test of the watchdog) */

static void dump_state(void)
{
	uint64_t done = completed;

	printf("  guest: avail_shadow %u avail_published %u last_used %u num_free %u interrupts_off %d "
	       "kicks %" PRIu64 " notifies %" PRIu64 " suppressed %" PRIu64 " forced %" PRIu64 " policy threshold %u\n",
	       q.avail_shadow, q.avail_published, q.last_used, q.num_free, q.interrupts_off, q.kicks, q.notifies,
	       q.suppressed, q.forced, q.policy.threshold);
	if (!q.packed) {
		printf("  split ring: avail idx %u flags 0x%x used_event %u | used idx %u flags 0x%x avail_event %u\n",
		       q.vr.avail->idx, q.vr.avail->flags, vring_used_event(&q.vr), q.vr.used->idx, q.vr.used->flags,
		       vring_avail_event(&q.vr));
		printf("  host: last_avail %u used_shadow %u signalled_used %u ready %d broken %d (%s)\n",
		       hvq->last_avail, hvq->used_shadow, hvq->signalled_used, hvq->ready, hvq->broken, hvq->error);
	} else {
		printf("  guest packed: next_avail %u wrap %d next_used %u wrap %d | driver event flags %u off_wrap 0x%x "
		       "| device event flags %u off_wrap 0x%x | slot[next_used].flags 0x%x\n",
		       q.pk.next_avail, q.pk.avail_wrap, q.pk.next_used, q.pk.used_wrap, q.pk.driver->flags,
		       q.pk.driver->off_wrap, q.pk.device->flags, q.pk.device->off_wrap,
		       q.pk.desc[q.pk.next_used].flags);
		printf("  host packed: next_avail %u wrap %d next_used %u wrap %d in_flight %u ready %d broken %d (%s)\n",
		       hvq->pk.next_avail, hvq->pk.avail_wrap, hvq->pk.next_used, hvq->pk.used_wrap, hvq->pk.in_flight,
		       hvq->ready, hvq->broken, hvq->error);
	}
	printf("  buffers completed %" PRIu64 ", interrupts %" PRIu64 ", notify seq %u, irq seq %u\n", done,
	       host_interrupts, notify_seq, irq_seq);
	if (net)
		printf("  net.c: suppressed %d timer_armed %d timeout_us %u notifies(wakeups) %" PRIu64
		       " timeouts %" PRIu64 " recheck_hits %" PRIu64 " needs_reset %d interrupt_status 0x%x"
		       " line rises %" PRIu64 " tx interrupts %" PRIu64 "\n",
		       net->suppressed, net->timer_armed, net->timeout_us, net->st.notify_wakeups, net->st.timeouts,
		       net->st.recheck_hits, net->mmio.needs_reset, net->mmio.interrupt_status, net->mmio.interrupts,
		       net->st.interrupts);
	printf("  guest thread: %s (irq seq it sleeps on: %u)\n", guest_where, guest_seen);
}

/* ---- telling a stall from a thread the scheduler has not run ----
 *
 * "No buffer back for --stall-ms" alone cannot tell a lost wake-up from a
 * guest thread that was woken and then not run: on a loaded machine a
 * SCHED_IDLE thread can wait seconds for a CPU, and a stopped process
 * (SIGSTOP, the bench's pauses) waits as long as it is stopped.  So the
 * watchdog looks at what each thread is doing (/proc/self/task/TID/stat:
 * its state and CPU time):
 *   - the guest asleep on an interrupt that did not come (irq_seq still the
 *     value it sleeps on) and no thread runnable: nobody will move again --
 *     a STALL, at once;
 *   - the interrupt came (irq_seq moved) or some thread is runnable: a
 *     delay, which is the scheduler's unless the threads burn CPU without
 *     progress -- more than 10% of a further --stall-ms is a STALL (a
 *     livelock), and so is 10 x --stall-ms with no progress at all. */
static __attribute__((noreturn, format(printf, 2, 3))) void race_fail(const char *kind, const char *fmt, ...);

#define UNWATCHED_NS 100000000ull   /* 10 ticks */

struct thread_look {
	unsigned runnable;     /* threads in state R */
	uint64_t cpu_ticks;    /* utime + stime of every thread but the watchdog */
};

static void look_at_threads(struct thread_look *l)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	*l = (struct thread_look){ 0 };
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		unsigned long long ut = 0, st = 0;
		char state = 0;
		FILE *f;

		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		/* After the name: state, then fields 4..13, then utime and stime. */
		if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &ut, &st) != 3)
			continue;
		l->runnable += state == 'R';
		l->cpu_ticks += ut + st;
	}
	closedir(d);
}

/* Called by the watchdog when nothing came back for `quiet_ms`; `since`
 * is what it saw when the quiet passed --stall-ms.  Fails the run or
 * returns (a delay so far). */
static void judge_quiet(uint64_t quiet_ms, uint64_t done, const struct thread_look *since)
{
	struct thread_look now;
	bool undelivered = guest_asleep && irq_seq == guest_seen;
	long hz = sysconf(_SC_CLK_TCK);

	look_at_threads(&now);
	if (undelivered && !now.runnable)
		race_fail("STALL", "no buffer came back for %" PRIu64 " ms (%" PRIu64 " of %" PRIu64 " done), the guest "
			  "asleep on an interrupt that did not come and no thread runnable", quiet_ms, done, opt_buffers);
	if (quiet_ms >= 2ull * opt_stall_ms &&
	    (now.cpu_ticks - since->cpu_ticks) * 1000 / (uint64_t)hz * 10 > quiet_ms - opt_stall_ms)
		race_fail("STALL", "no buffer came back for %" PRIu64 " ms (%" PRIu64 " of %" PRIu64 " done) while the "
			  "threads ran (%" PRIu64 " CPU ticks): a livelock", quiet_ms, done, opt_buffers,
			  now.cpu_ticks - since->cpu_ticks);
	if (quiet_ms >= 10ull * opt_stall_ms)
		race_fail("STALL", "no buffer came back for %" PRIu64 " ms (%" PRIu64 " of %" PRIu64 " done); the guest "
			  "%s, %u thread(s) runnable", quiet_ms, done, opt_buffers,
			  undelivered ? "waits for an interrupt" : "was woken", now.runnable);
}

/* A stall or corruption: the harness's verdict.  Never returns. */
static __attribute__((noreturn)) void race_fail(const char *kind, const char *fmt, ...)
{
	static atomic_flag once = ATOMIC_FLAG_INIT;
	va_list ap;

	if (atomic_flag_test_and_set(&once))
		for (;;)
			pause();
	printf("%s in %s (seed %u): ", kind, cfg->name, opt_seed);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	dump_state();
	if (opt_expect_fail) {
		printf("CAUGHT: the mutant (LKVM_MUTANT=%d) was detected as a %s\n", LKVM_MUTANT, kind);
		fflush(stdout);
		_exit(0);
	}
	fflush(stdout);
	_exit(1);
}

/* The guest's driver gave up on the device (a used id it never gave out,
 * wrong wrap marks): corruption seen from the guest's side. */
void guest_exit(int status)
{
	race_fail("CORRUPTION", "the guest's driver gave up on the ring (guest_exit(%d))", status);
}

static void check_sink(const struct net_sink *s)
{
	if (s->bad_frames)
		race_fail("CORRUPTION", "the host's sink refused a frame: %s", s->first_error);
}

/* ---- the guest ---- */

struct gbuf {
	uint8_t *mem;       /* NET_HDR + frame */
};

#define BUF_STRIDE 512u
#define FRAME_MAX (BUF_STRIDE - NET_HDR)

static void fill_frame(uint8_t *f, uint32_t len, uint64_t seq)
{
	uint32_t payload = len - LKVM_FRAME_HDR;

	memset(f, 0xff, 12);
	f[12] = LKVM_ETHERTYPE >> 8;
	f[13] = LKVM_ETHERTYPE & 0xff;
	memcpy(f + LKVM_ETH_HLEN, &seq, 8);
	f += LKVM_FRAME_HDR;
	for (uint32_t j = 0; 8 * j < payload; j++) {
		uint64_t w = lkvm_pattern(seq, j);
		uint32_t n = payload - 8 * j < 8 ? payload - 8 * j : 8;

		memcpy(f + 8 * j, &w, n);
	}
}

static void guest_ack(void)
{
	if (cfg->host == HOST_TIMER)
		virtio_drv_ack_interrupt(&dev);
}

/* net_drv_wait_tx's halt loop, with a futex as hlt. */
static void guest_wait_used(void)
{
	while (!gvq_has_used(&q)) {
		uint32_t seen = irq_seq;

		guest_ack();
		if (gvq_enable_interrupts(&q)) {
#if LKVM_MUTANT == LKVM_MUT_IRQ_SEEN_LATE
			/* mutant: the count to sleep on taken after the re-check,
			 * so an interrupt in between is slept through (a hlt
			 * without sti's one-instruction shadow) */
			RACE_POINT(RACE_G_IRQ_RECHECK);
			seen = irq_seq;
#endif
			guest_seen = seen;
			guest_where = "asleep, waiting for an interrupt";
			guest_asleep = true;
			while (irq_seq == seen && !stop)
				sleep_on(&irq_seq, seen, 0);
			if (opt_hold_woken_ms && completed >= opt_buffers / 4) {
				/* The test of the watchdog: once, a woken guest
				 * that is not run for a while, as the scheduler
				 * may leave it on a loaded machine. */
				usleep(opt_hold_woken_ms * 1000u);
				opt_hold_woken_ms = 0;
			}
			guest_asleep = false;
			guest_where = "running";
		}
		if (stop)
			break;
	}
	gvq_disable_interrupts(&q);
}

static uint8_t **free_bufs;
static unsigned nfree;

static void guest_reclaim(void)
{
	void *tok;

	while ((tok = gvq_get_used(&q, NULL))) {
		free_bufs[nfree++] = tok;
		atomic_fetch_add_explicit(&completed, 1, memory_order_relaxed);
	}
}

static void *guest_thread(void *arg)
{
	uint64_t seq = 0;

	(void)arg;
	rs = opt_seed * 0x9e3779b97f4a7c15ull + 1;
	while (seq < opt_buffers && !stop) {
		unsigned burst = 1 + (unsigned)(rnd64() % (rnd64() & 1 ? 4 : opt_ring));

		for (unsigned b = 0; b < burst && seq < opt_buffers; b++, seq++) {
			uint64_t r = rnd64();
			uint32_t len = LKVM_FRAME_HDR + 1 + (uint32_t)(r % (FRAME_MAX - LKVM_FRAME_HDR - 1));
			unsigned nseg = 1 + (unsigned)((r >> 16) % 3);
			bool indirect = nseg > 1 && ((r >> 20) & 1);
			struct gvq_seg seg[3];
			uint32_t total = NET_HDR + len, off = 0;
			uint8_t *buf;

			guest_reclaim();
			while (!nfree) {
				guest_wait_used();
				guest_reclaim();
				if (stop)
					return NULL;
			}
			buf = free_bufs[--nfree];
			memset(buf, 0, NET_HDR);
			fill_frame(buf + NET_HDR, len, seq);
			for (unsigned k = 0; k < nseg; k++) {
				uint32_t part = k + 1 < nseg ? total / nseg : total - off;

				seg[k] = (struct gvq_seg){ .addr = buf + off, .len = part };
				off += part;
			}
			while (!gvq_add(&q, seg, nseg, buf, indirect)) {
				gvq_notify_full(&q);
				guest_wait_used();
				guest_reclaim();
				if (stop)
					return NULL;
			}
			if ((r >> 24) % 3 == 0)   /* sometimes a kick per buffer, sometimes per burst */
				gvq_kick(&q);
		}
		gvq_kick(&q);
		if (rnd64() % 8 == 0) {   /* the tail: everything back before going on */
			while (gvq_outstanding(&q) && !stop)
				guest_wait_used();
			guest_reclaim();
		}
	}
	while (gvq_outstanding(&q) && !stop)
		guest_wait_used();
	guest_reclaim();
	guest_done = true;
	return NULL;
}

/* ---- the notify host ---- */

/* Drain the ring: every chain checked by the sink, then given back.  Did
 * it take any? */
static bool notify_host_drain(void)
{
	bool any = false;
	int rc;

	while ((rc = vq_pop_avail(&vq, &chain)) == 1) {
		net_sink_consume(&sink, &chain);
		check_sink(&sink);
		vq_push_used(&vq, chain.head, 0);
		any = true;
	}
	if (rc < 0)
		race_fail("CORRUPTION", "the host's ring walk refused a chain: %s", vq.error);
	return any;
}

static void *notify_host_thread(void *arg)
{
	(void)arg;
	rs = opt_seed * 0xd1b54a32d192ed03ull + 7;
	for (;;) {
		uint32_t seen = notify_seq;
		bool used = false;

		/* A virtio device's loop: quiet the driver, drain, ask for
		 * notifies again and look once more before sleeping. */
		do {
			vq_suppress_notify(&vq);
			used |= notify_host_drain();
		} while (vq_enable_notify_and_recheck(&vq));
		if (used && vq_should_interrupt(&vq))
			host_interrupt();
		while (notify_seq == seen && !stop)
			sleep_on(&notify_seq, seen, 0);
		if (stop)
			return NULL;
	}
}

/* ---- one configuration ---- */

static void setup_notify_host(void)
{
	memset(&sink, 0, sizeof(sink));
	hvq = &vq;
}

static void setup_timer_host(void)
{
	struct net_config nc = {
		.model = NET_MODEL_THREADED, .host_timer = cfg->timer, .timeout_us = 20, .adaptive_timeout = false,
		.mac = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 },
	};
	struct vq *tx;

	host = (struct device_host){ .mem = &gm, .set_irq_line = set_irq_line };
	net = calloc(1, sizeof(*net));
	if (!net)
		fatal("calloc");
	net_init(net, &host, 1, &nc);
	/* The features the driver took, as the transport would have them. */
	net->mmio.driver_features = dev.features;
	net->mmio.status = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
			   VIRTIO_CONFIG_S_DRIVER_OK;
	tx = &net->mmio.vqs[NET_TX];
	/* The queue the fixture enabled from the driver's registers, as the
	 * transport would have enabled it; keep the device's own name. */
	vq.name = tx->name ? tx->name : "net tx";
	*tx = vq;
	hvq = tx;
	if (net_open_fds(net) < 0 || net_start(net) < 0)
		fatal("net_open_fds/net_start");
}

static int run_config(void)
{
	pthread_t g, h = 0;
	uint64_t last = 0, t_last, t0;
	struct timespec ts;

	printf("%s: %" PRIu64 " buffers, ring %u, seed %u, delay odds 1/%u, spins < %u, a hot site %u%% of the time\n",
	       cfg->name, opt_buffers, opt_ring, opt_seed, odds_mask + 1, spin_max, opt_hot_pct);
	fflush(stdout);
	setup_queue(opt_ring, true, cfg->event_idx, cfg->policy, cfg->packed);
	set_reg(VIRTIO_MMIO_INTERRUPT_STATUS, 1);   /* what the guest's ack writes back */
	free_bufs = malloc(sizeof(*free_bufs) * 2 * opt_ring);
	nfree = 0;
	for (unsigned i = 0; i < 2u * opt_ring; i++)
		free_bufs[nfree++] = pool + (size_t)i * BUF_STRIDE;
	if (cfg->host == HOST_NOTIFY)
		setup_notify_host();
	else
		setup_timer_host();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = t_last = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	pthread_create(&g, NULL, guest_thread, NULL);
	if (cfg->host == HOST_NOTIFY)
		pthread_create(&h, NULL, notify_host_thread, NULL);
	/* The watchdog, which also moves the hot site. */
	rs = opt_seed * 0x5bd1e995ull + 3;
	struct thread_look at_stall_ms = { 0 };
	uint64_t t_tick = t0, quiet_ms = 0;
	bool delayed = false;

	while (!guest_done) {
		uint64_t now, done;

		usleep(10000);
		hot_site = rnd64() % 100 < opt_hot_pct ? (int)(rnd64() % RACE_SITES) : -1;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		done = completed;
		if (net) {
			pthread_mutex_lock(&net->mmio.lock);
			check_sink(NET_SINK(net));
			if (net->mmio.needs_reset)
				race_fail("CORRUPTION", "the device needs a reset: %s", net->mmio.error);
			pthread_mutex_unlock(&net->mmio.lock);
		}
		/* A tick more than UNWATCHED_NS late means the watchdog was not
		 * run (the process stopped, or starved with its threads): the
		 * quiet counts only the time it watched, so a SIGSTOP or a
		 * starved stretch is not a stall, and a real stall still adds
		 * up tick by tick. */
		if (now - t_tick > UNWATCHED_NS)
			t_last += now - t_tick - UNWATCHED_NS;
		t_tick = now;
		if (done != last) {
			if (delayed) {
				sched_delays++;
				printf("delay: %s (seed %u): nothing came back for over %" PRIu64 " ms, then the run went on "
				       "(the guest had been woken, or a thread was runnable: the scheduler's delay)\n",
				       cfg->name, opt_seed, quiet_ms);
				delayed = false;
			}
			last = done;
			t_last = now;
		} else if (now - t_last > opt_stall_ms * 1000000ull) {
			if (!delayed)
				look_at_threads(&at_stall_ms);
			delayed = true;
			quiet_ms = (now - t_last) / 1000000;
			judge_quiet(quiet_ms, done, &at_stall_ms);
		}
	}
	stop = true;
	wake(&notify_seq);
	wake(&irq_seq);
	pthread_join(g, NULL);
	if (h)
		pthread_join(h, NULL);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	{
		double secs = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - t0) / 1e9;
		uint64_t frames = net ? NET_SINK(net)->frames : sink.frames;

		if (net) {
			net_stop(net);
			check_sink(NET_SINK(net));
			if (net->mmio.needs_reset)
				race_fail("CORRUPTION", "the device needs a reset: %s", net->mmio.error);
		}
		if (frames != opt_buffers || completed != opt_buffers)
			race_fail("CORRUPTION", "the host checked %" PRIu64 " frames and the guest got %" PRIu64
				  " back, of %" PRIu64, frames, (uint64_t)completed, opt_buffers);
		printf("%s: ok, %" PRIu64 " buffers in %.2f s, %" PRIu64 " notifies (%" PRIu64 " forced, %" PRIu64
		       " suppressed), %" PRIu64 " interrupts, %" PRIu64 " scheduler delays past --stall-ms\n",
		       cfg->name, frames, secs, q.notifies, q.forced, q.suppressed, host_interrupts, sched_delays);
		if (net)
			printf("%s: net.c: %" PRIu64 " timeouts, %" PRIu64 " recheck hits, %" PRIu64 " empty notifies\n",
			       cfg->name, net->st.timeouts, net->st.recheck_hits, net->st.notifies_empty);
	}
	if (net) {
		net_close(net);
		free(net);
		net = NULL;
	}
	free(free_bufs);
	stop = false;
	guest_done = false;
	completed = 0;
	host_interrupts = 0;
	sched_delays = 0;
	return 0;
}

static void usage(void)
{
	printf("usage: race-torture [--config NAME|notify|timer|all] [--buffers N] [--seed N] [--ring N] [--stall-ms N]\n"
	       "                    [--odds N] [--spin N] [--hot-pct N] [--hold-woken-guest-ms N] [--expect-fail]\n"
	       "configurations:");
	for (unsigned i = 0; i < NCONFIGS; i++)
		printf(" %s", configs[i].name);
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *which = "all";
	unsigned ran = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--expect-fail")) {
			opt_expect_fail = true;
			continue;
		}
		if (!v) {
			usage();
			return 2;
		}
		i++;
		if (!strcmp(a, "--config"))
			which = v;
		else if (!strcmp(a, "--buffers"))
			opt_buffers = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seed"))
			opt_seed = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--ring"))
			opt_ring = (uint16_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--stall-ms"))
			opt_stall_ms = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--odds"))
			odds_mask = (uint32_t)strtoul(v, NULL, 0) - 1;
		else if (!strcmp(a, "--spin"))
			spin_max = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--hot-pct"))
			opt_hot_pct = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(a, "--hold-woken-guest-ms"))
			opt_hold_woken_ms = (unsigned)strtoul(v, NULL, 0);
		else {
			usage();
			return 2;
		}
	}
	if (!opt_buffers || opt_ring < 2 || opt_ring > 256 || (opt_ring & (opt_ring - 1)) || !spin_max ||
	    (odds_mask & (odds_mask + 1))) {
		printf("race-torture: --buffers >= 1, --ring a power of two in [2, 256], --odds a power of two, "
		       "--spin >= 1\n");
		return 2;
	}
	fixture_init((size_t)2 * 256 * BUF_STRIDE, opt_seed);
	for (unsigned i = 0; i < NCONFIGS; i++) {
		bool host_match = (!strcmp(which, "notify") && configs[i].host == HOST_NOTIFY) ||
				  (!strcmp(which, "timer") && configs[i].host == HOST_TIMER);

		if (strcmp(which, "all") && strcmp(which, configs[i].name) && !host_match)
			continue;
		cfg = &configs[i];
		run_config();
		ran++;
	}
	if (!ran) {
		usage();
		return 2;
	}
	if (opt_expect_fail) {
		printf("NOT CAUGHT: the mutant (LKVM_MUTANT=%d) ran %u configuration(s) clean\n", LKVM_MUTANT, ran);
		return 1;
	}
	return 0;
}
