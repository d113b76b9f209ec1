/*
 * net.c -- the virtio-net device and its transmit notification suppression.
 *
 * One transmitted frame: the guest adds a chain and, if its policy says so,
 * writes QueueNotify -> (threaded) the kick eventfd, which the launcher
 * registered as a KVM ioeventfd, wakes net_tx_thread, or
 * (lguest) the MMIO exit reaches net_queue_notify on the vCPU thread ->
 * net_tx_on_notify drains every available chain into the backend (through
 * its table, net_backend.h: sink, tap or slirp), returns the
 * buffers on the used ring, interrupts the guest if it asked, and then sets
 * NO_NOTIFY and arms the timer -> each expiry (net_tx_on_timeout) drains again
 * and either keeps the guest quiet (work found) or lets it notify again after
 * a barrier and one last look at the ring.
 *
 * Bounded work per guest action: the ring walker refuses a chain longer
 * than the largest frame the negotiated features allow (net_tx_chain_max),
 * and one drain round takes at most NET_TX_WEIGHT_CHAINS chains or
 * NET_TX_WEIGHT_BYTES bytes (vhost-net's packet and byte weights).  A round
 * that stops there leaves tx_more set; the thread that drains comes back
 * for the rest (net_tx_on_continue) after releasing the lock -- the device
 * thread at once, through a non-blocking epoll_wait that also sees the stop
 * eventfd; the vCPU thread (lguest model) from run_vcpu, after it has
 * looked at the stop flag.  However fast the guest refills the ring, the
 * lock is free and the stop flag looked at between rounds.
 *
 * The backend is chosen once, in net_init; below, the device only calls
 * through net->be_ops.  A backend with a descriptor to read (the tap) has
 * it watched by the device thread's epoll, or by the lguest model's waker,
 * and read under the lock by whichever thread then runs backend_rx_ready.
 */
#include "net.h"

#include <errno.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <netinet/ip.h>
#include <string.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "lguest_kvm_abi.h"
#include "lkvm_frame.h"
#include "race_hooks.h"   /* LKVM_MUTANT: a mutant of the timer state machine, harness builds only */
#include "thread_pin.h"
#include "trace_ring.h"
#include "virtio_net_coal.h"

/* vhost-net's weights (VHOST_NET_PKT_WEIGHT, VHOST_NET_WEIGHT).  A round
 * copies at most 512 KiB plus one chain; with chains at the cap the byte
 * weight ends it after 8. */
#define NET_TX_WEIGHT_CHAINS 256u
#define NET_TX_WEIGHT_BYTES  (512u << 10)
#define VLAN_TAG_LEN         4u

/* The longest TX chain the device takes: the virtio-net header plus the
 * largest frame the negotiated features allow.  The device offers no MTU
 * feature, and its own frames go up to LKVM_FRAME_MAX (the raw workload's
 * --frame); with HOST_TSO4 a frame is one IPv4 datagram (at most
 * IP_MAXPACKET) behind an Ethernet header with one VLAN tag.  Anything
 * longer is no frame, only work the guest makes the host do. */
static uint64_t net_tx_chain_max(const struct net *net)
{
	uint64_t frame = LKVM_FRAME_MAX;

	if (virtio_mmio_has_feature(&net->mmio, VIRTIO_NET_F_HOST_TSO4))
		frame = ETHER_HDR_LEN + VLAN_TAG_LEN + IP_MAXPACKET;
	return sizeof(struct virtio_net_hdr_v1) + frame;
}

/* One chain off the TX ring into net->chain, its walk timed: the host's
 * cost of a chain, direct or through an indirect table (docs/stats.md,
 * tx_pop_ns_per_chain_*).  rdtsc is not serializing; what lands inside the
 * interval is the walk plus one rdtsc, ~12 ns here. */
static int net_tx_pop(struct net *net, struct vq *vq)
{
	uint64_t t0 = __builtin_ia32_rdtsc();
	int rc = vq_pop_avail(vq, &net->chain);
	uint64_t dt = __builtin_ia32_rdtsc() - t0;

	if (rc > 0) {
		if (!net->pop.tsc0) {
			net->pop.tsc0 = t0;
			net->pop.mono0 = monotonic_seconds();
		}
		net->pop.ticks[net->chain.indirect] += dt;
		net->pop.chains[net->chain.indirect]++;
	}
	return rc;
}

/* One round: take chains until the ring is empty or the budget is spent;
 * returns how many.  net->tx_more says whether chains were left.  `cause`
 * is what started it, for the timeline. */
static uint64_t net_tx_drain(struct net *net, enum lkvm_trace_cause cause)
{
	struct vq *vq = &net->mmio.vqs[NET_TX];
	uint64_t n = 0, bytes = 0, t0 = net->trace ? __builtin_ia32_rdtsc() : 0;
	bool coal = net_coal_negotiated(net);   /* then each used buffer is weighed on its own */
	int rc = 0;

	/* Features are fixed once the queue is live, so this is the cap the
	 * queue was enabled with; set here because the transport, not the
	 * device, sees the enable. */
	vq->max_chain_bytes = net_tx_chain_max(net);
	net->tx_more = false;
	while (n < net->tx_weight_chains && bytes < net->tx_weight_bytes &&
	       (rc = net_tx_pop(net, vq)) > 0) {
		if (!net->st.t_first)
			net->st.t_first = monotonic_seconds();
		/* The driver's features: the strict transport masked them with
		 * what was offered, and no queue runs before FEATURES_OK.  A
		 * frame the backend drops is its count, not a broken ring. */
		net->be_ops->transmit(net->be, &net->chain, net->mmio.driver_features);
		net->st.buffers_indirect += net->chain.indirect;
		net->st.descriptors += net->chain.count;
		vq_push_used(vq, net->chain.head, 0);
		if (coal)
			net_coal_used(net, NET_TX);
		bytes += net->chain.out_len + net->chain.in_len;
		n++;
	}
	net->drain_bytes = bytes;
	if (n && net->be_ops->flush)
		net->be_ops->flush(net->be);
	if (rc < 0)
		virtio_mmio_fail(&net->mmio, vq->error);
	else if (rc > 0)        /* stopped by the budget, not by an empty ring */
		net->tx_more = vq_has_avail(vq);
	net_rx_signal(net);     /* slirp answers some frames (ARP) at once */
	if (net->trace)
		trace_emit_at(net->trace, t0, LKVM_TR_DRAIN, NET_TX, (uint32_t)n,
			      (uint32_t)(__builtin_ia32_rdtsc() - t0), cause);
	if (n) {
		net->st.t_last = monotonic_seconds();
		if (!coal && vq_should_interrupt(vq)) {
			net->st.interrupts++;
			trace_emit(net->trace, LKVM_TR_IRQ_RAISE, NET_TX, 0, 0, 0);
			virtio_mmio_signal_used(&net->mmio);
		}
	}
	return n;
}

/*
 * Notification coalescing (virtio 1.3; the rules in net_coal.h).  Without
 * it, a drain ends with one interrupt decision for all it returned; with
 * it, every used buffer is counted, and the used buffer notification goes
 * out when net_coal says the conditions are met -- and then only if the
 * driver has not suppressed it (R8: vq_should_interrupt reads its flag or
 * used_event over everything returned since the last decision).  The time
 * limit is a timerfd on the device thread's epoll, set to the earliest
 * queue's deadline; its expiry runs net_coal_expired.
 */
bool net_coal_negotiated(const struct net *net)
{
	return virtio_mmio_has_feature(&net->mmio, VIRTIO_NET_F_NOTF_COAL) ||
	       virtio_mmio_has_feature(&net->mmio, VIRTIO_NET_F_VQ_NOTF_COAL);
}

static void net_used_notify(struct net *net, unsigned q)
{
	if (!vq_should_interrupt(&net->mmio.vqs[q]))
		return;
	if (q == NET_TX)
		net->st.interrupts++;
	else
		net->rx.interrupts++;
	trace_emit(net->trace, LKVM_TR_IRQ_RAISE, q, 0, 0, 0);
	virtio_mmio_signal_used(&net->mmio);
}

/* Move coal_fd to coal_due, if that is earlier than where it is set (a
 * later one is handled when it fires). */
static void net_coal_program(struct net *net)
{
	uint64_t due = net->coal_due;

	if (!due || net->coal_fd < 0 || (net->coal_timer_set && net->coal_timer_set <= due))
		return;
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(due / 1000000000u), .tv_nsec = (long)(due % 1000000000u) },
	};
	net->coal_timer_set = due;
	timerfd_settime(net->coal_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* coal_due := the earliest pending deadline.  A poll run's spin watches it
 * on the clock, so the timerfd is programmed only when the thread may sleep
 * (net_tx_poll_run's end): a system call per group saved, and a deadline
 * kept to the spin's grain instead of a timer's lateness (~50 us here). */
static void net_coal_arm(struct net *net)
{
	net->coal_due = 0;
	for (unsigned q = 0; q < NET_COAL_QUEUES; q++) {
		uint64_t d = net_coal_deadline(&net->coal, q);

		if (d && (!net->coal_due || d < net->coal_due))
			net->coal_due = d;
	}
	if (!net->polling_now)
		net_coal_program(net);
}

void net_coal_used(struct net *net, unsigned q)
{
	if (net_coal_packet(&net->coal, q, monotonic_ns()))
		net_used_notify(net, q);
	else
		net_coal_arm(net);
}

void net_coal_changed(struct net *net, unsigned q)
{
	if (net_coal_check(&net->coal, q, monotonic_ns()))
		net_used_notify(net, q);
	else
		net_coal_arm(net);
}

/* coal_fd fired (device thread, lock held). */
static void net_coal_expired(struct net *net)
{
	uint64_t now = monotonic_ns();

	net->coal_timer_set = 0;
	for (unsigned q = 0; q < NET_COAL_QUEUES; q++)
		if (net_coal_check(&net->coal, q, now))
			net_used_notify(net, q);
	net_coal_arm(net);
}

/* Ask the guest not to notify (again: with event idx the mark drifts, and
 * is renewed while the device stays busy). */
static void net_tx_suppress(struct net *net)
{
	vq_suppress_notify(&net->mmio.vqs[NET_TX]);
	if (!net->suppressed)
		trace_emit(net->trace, LKVM_TR_NO_NOTIFY_SET, NET_TX, 0, 0, 0);
	net->suppressed = true;
}

/* Let the guest notify again; true if buffers slipped in meanwhile. */
static bool net_tx_unsuppress(struct net *net)
{
	bool slipped = vq_enable_notify_and_recheck(&net->mmio.vqs[NET_TX]);

	trace_emit(net->trace, LKVM_TR_NO_NOTIFY_CLEAR, NET_TX, slipped, 0, 0);
	return slipped;
}

bool net_tx_on_notify(struct net *net)
{
	uint64_t n;

	net->st.notify_wakeups++;
	trace_emit(net->trace, LKVM_TR_NOTIFY, NET_TX, 0, 0, 0);
	n = net_tx_drain(net, LKVM_TRC_NOTIFY);
	net->tx_more_by_timer = false;
	net->st.buffers_by_notify += n;
	if (!n) {
		net->st.notifies_empty++;
		return false;
	}
	net_tx_suppress(net);
	return true;
}

/* 2008's adaptive timeout: fewer buffers than last time means the timer was
 * too short (the guest had to notify), so lengthen it; else shorten by 1 us. */
static void adapt_timeout(struct net *net, uint64_t num)
{
	if (!net->cfg.adaptive_timeout)
		return;
	if (num < net->last_timeout_num)
		net->timeout_us += 10;
	else if (net->timeout_us > 1)
		net->timeout_us--;
	net->last_timeout_num = num;
}

bool net_tx_on_timeout(struct net *net)
{
	struct vq *vq = &net->mmio.vqs[NET_TX];
	uint64_t n;

	net->st.timeouts++;
	net->timer_armed = false;
	trace_emit(net->trace, LKVM_TR_TIMER_FIRE, NET_TX, 0, 0, 0);
	if (net->cfg.host_timer == HOST_TIMER_ONESHOT) {
		/* Merged 2.6.27: unblock, drain, and wait for the next notify.
		 * With event idx the "notify me" mark is an index, which the
		 * drain leaves behind: set it again until a drain finds nothing,
		 * or the guest would never cross it. */
		uint64_t m;

		n = 0;
		do {
			net_tx_unsuppress(net);
			m = net_tx_drain(net, LKVM_TRC_TIMER);
			n += m;
		} while (m && vq->event_idx && !net->tx_more);   /* the budget: continued later */
		net->tx_more_by_timer = true;
		net->suppressed = false;
		net->st.buffers_by_timer += n;
		n ? net->st.timer_drains_work++ : net->st.timer_drains_empty++;
		adapt_timeout(net, n);
		return false;
	}
	n = net_tx_drain(net, LKVM_TRC_TIMER);
	net->tx_more_by_timer = true;
	net->st.buffers_by_timer += n;
	adapt_timeout(net, n);
	if (n) {
		net->st.timer_drains_work++;
		net_tx_suppress(net);   /* with event idx the mark drifts; renew it */
		return true;            /* still busy: stay suppressed, poll again */
	}
	net->st.timer_drains_empty++;
	net->suppressed = false;
#if LKVM_MUTANT == LKVM_MUT_TIMER_NO_RECHECK
	net_tx_unsuppress(net);
	return false;           /* mutant: idle, whatever slipped in meanwhile */
#endif
	if (!net_tx_unsuppress(net))
		return false;           /* idle: the next guest notify wakes us */
	/* A buffer slipped in between our last look and the flag clearing. */
	net->st.recheck_hits++;
	net->st.buffers_by_timer += net_tx_drain(net, LKVM_TRC_TIMER);
	net_tx_suppress(net);
	return true;
}

bool net_tx_continuing(const struct net *net)
{
	return __atomic_load_n(&net->tx_more, __ATOMIC_RELAXED);
}

void net_tx_on_continue(struct net *net)
{
	struct vq *vq = &net->mmio.vqs[NET_TX];
	uint64_t n;

	if (!net->tx_more)
		return;
	net->st.continuations++;
	n = net_tx_drain(net, LKVM_TRC_CONTINUE);
	net->st.buffers_by_continuation += n;
	/* The chains belong to the drain this round continues, so
	 * buffers_by_notify + buffers_by_timer still counts every chain. */
	if (net->tx_more_by_timer)
		net->st.buffers_by_timer += n;
	else
		net->st.buffers_by_notify += n;
	if (net->suppressed) {
		if (n)
			net_tx_suppress(net);   /* with event idx the mark drifts; renew it */
	} else if (vq->event_idx && !net->tx_more && net_tx_unsuppress(net)) {
		/* The one-shot timer's event-idx loop, carried on: the "notify
		 * me" mark is set again until a round finds nothing. */
		net->tx_more = true;
	}
}

static void wake_waker(struct net *net);

/* The lguest model's timer: each arm replaces the pending expiry, as
 * 2008's setitimer did.  With --timer-wait spin the deadline goes to the
 * waker, which watches the clock for it (net_waker_thread). */
static void arm_timer(struct net *net)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = net->timeout_us / 1000000, .tv_nsec = (net->timeout_us % 1000000) * 1000L },
	};

	if (net->cfg.timer_spin) {
		__atomic_store_n(&net->spin_due, monotonic_ns() + net->timeout_us * 1000ull, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&net->waker_asleep, __ATOMIC_SEQ_CST))
			wake_waker(net);
		return;
	}
	timerfd_settime(net->timer_fd, 0, &its, NULL);
}

/*
 * The threaded model's timer, re-armed lazily.  The rule is 2008's: a drain
 * that found work arms the one-shot timer for timeout_us from now, and each
 * arm replaces the pending expiry.  Done with timerfd_settime every time,
 * that is one more system call on nearly every wakeup of the device thread,
 * and a dear one: it moves the kernel's hrtimer, often reprogramming the
 * CPU's timer (measured with bench/device-path).  So the thread keeps
 * the deadline itself (timer_due) and moves the timerfd only when it must:
 * when it is not armed, or the new deadline is earlier than the one it is
 * set to.  When the timerfd fires before timer_due, the expiry is stale: it
 * is set to timer_due, and nothing else happens -- the state machine never
 * sees it and tx_timer_timeouts does not count it.  net_tx_on_timeout thus
 * runs at the deadlines, and as often, as with a timer set on every arm.
 * The deadline and the timerfd's setting change under the lock only.  (The
 * lguest model keeps arm_timer, which sets the timerfd every time: a stale
 * expiry there would kick the vCPU out for nothing.)
 */
static void set_timer_at(struct net *net, uint64_t ns)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u) },
	};

	net->timer_set = ns;
	timerfd_settime(net->timer_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void arm_timer_lazy(struct net *net)
{
	uint64_t due = monotonic_ns() + net->timeout_us * 1000ull;

	net->timer_due = due;
	if (!net->timer_set || due < net->timer_set)
		set_timer_at(net, due);
}

/* Arm the one-shot timer for timeout_us from now (lock held).  Threaded:
 * also for a TX notify that came as an MMIO exit after all (a write the
 * ioeventfd did not match), so that the device thread's deadline is the
 * only one. */
static void net_arm_timer(struct net *net)
{
	if (net->timer_armed)
		trace_emit(net->trace, LKVM_TR_TIMER_CANCEL, NET_TX, 0, 0, 0);
	net->timer_armed = true;
	trace_emit(net->trace, LKVM_TR_TIMER_ARM, NET_TX, net->timeout_us, 0, 0);
	if (net->cfg.model == NET_MODEL_THREADED)
		arm_timer_lazy(net);
	else
		arm_timer(net);
}

/* timer_fd fired (lock held): true if the timer expired, false if the
 * expiry was stale (the timerfd is then set to the deadline). */
static bool timer_fired(struct net *net)
{
	net->timer_set = 0;
	if (net->timer_due && monotonic_ns() < net->timer_due) {
		set_timer_at(net, net->timer_due);
		return false;
	}
	net->timer_due = 0;
	return true;
}

/*
 * Budgeted busy-polling (--host-poll-us), the threaded model's alternative
 * to 2008's timer, as vhost-net's busyloop does it: a kick drains the ring
 * with notifications off, and then, instead of arming a timer, the device
 * thread spins on the avail ring for up to the window (clock-bounded, with
 * `pause`).  Buffers within the window: drain them and spin again, the
 * guest still quiet.  The window runs out: notifications on, a barrier,
 * one last look (a buffer that slipped in before the guest could see the
 * flag would otherwise never be noticed), and sleep until the next kick.
 *
 * A run -- from a kick to that sleep -- takes at most vhost's weight (256
 * chains or 512 KiB) before it yields: the thread looks at the stop
 * eventfd and the backend's descriptor (epoll_wait without waiting) and
 * then goes on, notifications still off (net->poll_resume).  So a guest
 * that never lets the ring run dry cannot keep the device thread from
 * stopping, or from receiving.
 *
 * The spin takes the lock only to look at the ring, and lets it go between
 * looks: the vCPU thread's register accesses (a halting guest reads and
 * acknowledges InterruptStatus) must not wait out a window.
 */
static bool net_tx_poll_spin(struct net *net, uint64_t window_ns, uint64_t t0)
{
	struct vq *vq = &net->mmio.vqs[NET_TX];
	uint64_t now;
	bool found;

	pthread_mutex_unlock(&net->mmio.lock);
	do {
		for (int i = 0; i < 8; i++)
			__builtin_ia32_pause();
		now = monotonic_ns();
		pthread_mutex_lock(&net->mmio.lock);
		found = vq_has_avail(vq);
		/* Coalescing's time limit, due while we spin (net_coal_arm):
		 * a timerfd set before the run may still fire, and find nothing. */
		if (net->coal_due && now >= net->coal_due)
			net_coal_expired(net);
		pthread_mutex_unlock(&net->mmio.lock);
	} while (!found && now - t0 < window_ns && !__atomic_load_n(&net->stopping, __ATOMIC_RELAXED));
	pthread_mutex_lock(&net->mmio.lock);
	net->st.poll_ns += now - t0;
	return found;
}

/* One round of a poll run, counted as the poll's. */
static void net_tx_poll_drain(struct net *net, uint64_t *chains, uint64_t *bytes)
{
	uint64_t n = net_tx_drain(net, LKVM_TRC_POLL);

	net->st.buffers_by_poll += n;
	*chains += n;
	*bytes += net->drain_bytes;
	if (n)
		net_tx_suppress(net);   /* with event idx the mark drifts; renew it */
}

/* A kick (kicked) or the resumption of a run its budget stopped: drain,
 * poll, and either sleep with notifications on (false) or stop at the
 * budget (true: call again after a look at the other descriptors).  Lock
 * held. */
static bool net_tx_poll_loop(struct net *net, bool kicked)
{
	uint64_t chains = 0, bytes = 0;

	net->poll_resume = false;
	if (kicked) {
		uint64_t n;

		net->st.notify_wakeups++;
		trace_emit(net->trace, LKVM_TR_NOTIFY, NET_TX, 0, 0, 0);
		if (net->poll_wait_since && net->cfg.host_poll_adaptive)
			net->poll_window_ns = host_poll_adapt(net->poll_window_ns, monotonic_ns() - net->poll_wait_since);
		net->poll_wait_since = 0;
		n = net_tx_drain(net, LKVM_TRC_NOTIFY);
		net->st.buffers_by_notify += n;
		chains = n;
		bytes = net->drain_bytes;
		if (!n)
			net->st.notifies_empty++;
		net_tx_suppress(net);
	} else {
		net_tx_poll_drain(net, &chains, &bytes);
	}
	for (;;) {
		uint64_t t0;

		if (net->tx_more || chains >= net->tx_weight_chains || bytes >= net->tx_weight_bytes) {
			net->st.poll_budget_exhausted++;
			net->poll_resume = true;
			return true;
		}
		t0 = monotonic_ns();
		if (net->poll_window_ns) {
			if (net_tx_poll_spin(net, net->poll_window_ns, t0)) {
				net->st.poll_hits++;
				net_tx_poll_drain(net, &chains, &bytes);
				continue;
			}
			net->st.poll_misses++;
		}
		if (__atomic_load_n(&net->stopping, __ATOMIC_RELAXED))
			return false;
		net->suppressed = false;
		if (!net_tx_unsuppress(net)) {
			net->poll_wait_since = t0;   /* the adaptive rule times the wait from here */
			return false;
		}
		net->st.recheck_hits++;      /* slipped in while the flag cleared */
		net_tx_poll_drain(net, &chains, &bytes);
		net_tx_suppress(net);
	}
}

/* A poll run; a coalescing deadline its spin was watching goes to the
 * timerfd before the thread may sleep. */
static bool net_tx_poll_run(struct net *net, bool kicked)
{
	bool resume;

	net->polling_now = true;
	resume = net_tx_poll_loop(net, kicked);
	net->polling_now = false;
	if (!resume)
		net_coal_program(net);
	return resume;
}

static bool net_polling(const struct net *net)
{
	return net->cfg.host_poll_us || net->cfg.host_poll_adaptive;
}

/* The backend's descriptor to read frames from (the tap's), or -1. */
static int backend_rx_fd(const struct net *net)
{
	return net->be_ops->rx_fd ? net->be_ops->rx_fd(net->be) : -1;
}

static void backend_rx_watch(struct net *net, bool on)
{
	int fd = backend_rx_fd(net);
	struct epoll_event e = { .events = on ? EPOLLIN : 0, .data.fd = fd };

	epoll_ctl(net->epoll_fd, EPOLL_CTL_MOD, fd, &e);
}

static void wake_waker(struct net *net)
{
	uint64_t one = 1;
	ssize_t n = write(net->waker_efd, &one, 8);

	(void)n;    /* only fails if the counter is full: the waker is awake anyway */
}

/* Frames from the backend's descriptor, on whichever thread reads them
 * (lock held). */
static void backend_rx_ready(struct net *net)
{
	net_rx_from_backend(net, 64);
	net_rx_signal(net);
	if (net->cfg.model == NET_MODEL_THREADED)
		backend_rx_watch(net, !net->rx_starved);
	else
		wake_waker(net);
}

/* MMIO-exit notifies: every TX notify in the lguest model, RX always.  An
 * RX notify only comes after the host ran out of receive buffers: now the
 * guest has posted some, so a backend that is read (the tap) is worth
 * reading again.  (slirp's frames wait for no notify: they are dropped while
 * there are no buffers, and its TCP sends them again.) */
static void net_queue_notify(struct virtio_mmio_dev *dev, unsigned q)
{
	struct net *net = dev->priv;

	if (q == NET_CTRL) {
		net_ctrl_on_notify(net);
		return;
	}
	if (q != NET_TX) {
		if (net_rx_on_notify(net) && net->be_ops->receive)
			backend_rx_ready(net);
		return;
	}
	if (net_polling(net) && dev->notify_fd[NET_TX] >= 0) {
		/* Polling: the device thread is the only one that drains, and
		 * counts this kick with the eventfd's at its exit. */
		uint64_t one = 1;

		if (write(dev->notify_fd[NET_TX], &one, 8) == 8)
			return;
	}
	net->st.notifies++;
	if (net_tx_on_notify(net))
		net_arm_timer(net);
}

static void net_config_read(struct virtio_mmio_dev *dev, uint32_t off, void *data, uint32_t len)
{
	struct net *net = dev->priv;
	struct virtio_net_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	memcpy(cfg.mac, net->cfg.mac, 6);
	virtio_mmio_config_copy(data, len, off, &cfg, sizeof(cfg));
}

static void net_queue_enabled(struct virtio_mmio_dev *dev, unsigned q)
{
	net_coal_queue_enabled(&((struct net *)dev->priv)->coal, q);   /* R6 */
}

static void net_reset(struct virtio_mmio_dev *dev)
{
	struct net *net = dev->priv;

	net_coal_reset(&net->coal);   /* R7 */
	net->coal_due = 0;
}

static const struct virtio_dev_ops net_ops = {
	.name = "net",
	.device_id = VIRTIO_ID_NET,
	.num_queues = 2,
	.config_read = net_config_read,
	.queue_notify = net_queue_notify,
};

/* The threaded model's card: the control queue too, for coalescing, whose
 * time limit needs the device thread's timer. */
static const struct virtio_dev_ops net_ops_ctrl = {
	.name = "net",
	.device_id = VIRTIO_ID_NET,
	.num_queues = 3,
	.config_read = net_config_read,
	.queue_notify = net_queue_notify,
	.queue_enabled = net_queue_enabled,
	.reset = net_reset,
};

void net_init(struct net *net, const struct device_host *host, unsigned index, const struct net_config *cfg)
{
	memset(net, 0, sizeof(*net));
	net->cfg = *cfg;
	net->timeout_us = cfg->timeout_us;
	net->poll_window_ns = cfg->host_poll_us * 1000u;   /* adaptive: from 0, as KVM's */
	net->tx_weight_chains = NET_TX_WEIGHT_CHAINS;
	net->tx_weight_bytes = NET_TX_WEIGHT_BYTES;
	net->timer_fd = net->stop_efd = net->epoll_fd = net->waker_efd = net->coal_fd = -1;
	/* The one place that maps --net to a backend. */
	switch (cfg->backend) {
	case NET_BACKEND_TAP:
		net->be_ops = &net_tap_ops;
		break;
	case NET_BACKEND_USER:
		net->be_ops = &net_slirp_ops;
		break;
	default:
		net->be_ops = &net_sink_ops;
		break;
	}
	net->be = net->be_state;
	if (net->be_ops->init)
		net->be_ops->init(net->be);
	bool threaded = cfg->model == NET_MODEL_THREADED;

	virtio_mmio_init(&net->mmio, threaded ? &net_ops_ctrl : &net_ops, net, host, index,
			 (1ull << VIRTIO_NET_F_MAC) | (1ull << VIRTIO_RING_F_EVENT_IDX) |
			 (1ull << VIRTIO_RING_F_INDIRECT_DESC) |
			 (cfg->offloads ? 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_HOST_TSO4 : 0) |
			 (threaded ? 1ull << VIRTIO_NET_F_CTRL_VQ | 1ull << VIRTIO_NET_F_NOTF_COAL |
				     1ull << VIRTIO_NET_F_VQ_NOTF_COAL : 0));
	net->mmio.vqs[NET_RX].name = "net receive";
	net->mmio.vqs[NET_TX].name = "net transmit";
	net->mmio.vqs[NET_CTRL].name = "net control";
}

/* Frames a backend pushes at the guest (slirp's; mmio.lock held). */
static void backend_deliver(void *opaque, const void *frame, size_t len)
{
	struct net *net = opaque;

	net_rx_deliver(net, frame, len);
	net_rx_signal(net);
}

int net_open_backend(struct net *net)
{
	const struct net_backend_link link = { .lock = &net->mmio.lock, .deliver = backend_deliver, .opaque = net };

	return net->be_ops->open ? net->be_ops->open(net->be, &net->cfg, &link) : 0;
}

/* The device thread's last act.  The kick eventfd has counted every guest
 * write since the thread started (it is never read before: see
 * net_tx_thread), so one read now gives tx_queue_notifies, kicks that came
 * after the last drain included.  And the thread's CPU time, for
 * tx_device_cpu_seconds: it sleeps in epoll_wait whenever it has nothing to
 * do, so this is its busy time -- drains, expiries, wakeups -- read once,
 * not per drain.  net_stop's join makes both visible to the stats. */
static void *net_tx_thread_exit(struct net *net)
{
	uint64_t count;

	if (read(net->mmio.notify_fd[NET_TX], &count, 8) == 8)
		net->st.notifies += count;
	net->st.device_cpu_seconds = thread_cpu_seconds();
	return NULL;
}

/* Threaded model: ioeventfd kicks and timer expiries on one device thread.
 * The kick eventfd is watched edge-triggered (net_start): every guest write
 * after the last epoll_wait makes one event, so a wakeup needs no read() to
 * clear it -- a system call less per wakeup; the count is read once, at the
 * end (net_tx_thread_exit). */
static void *net_tx_thread(void *arg)
{
	struct net *net = arg;
	struct epoll_event ev[4];
	int rx_fd = backend_rx_fd(net);   /* opened before the thread starts */
	bool more = false;

	for (;;) {
		/* A drain its budget stopped goes on at once, but only after a
		 * look at the stop eventfd, the kicks and the timer. */
		int n = epoll_wait(net->epoll_fd, ev, 4, more ? 0 : -1);
		uint64_t count;
		bool kicked = false, rang = false, expired, readable = false, coal_fired = false;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return net_tx_thread_exit(net);   /* cannot happen with valid fds; never spin */
		if (n > 0 && !more)
			net->st.device_wakeups++;         /* it slept, and something woke it */
		for (int i = 0; i < n; i++) {
			if (ev[i].data.fd == net->stop_efd)
				return net_tx_thread_exit(net);
			if (ev[i].data.fd == rx_fd) {
				readable = true;
				continue;
			}
			if (ev[i].data.fd == net->mmio.notify_fd[NET_TX]) {
				kicked = true;
				continue;
			}
			if (ev[i].data.fd == net->coal_fd) {
				coal_fired = read(net->coal_fd, &count, 8) == 8;
				continue;
			}
			if (read(ev[i].data.fd, &count, 8) == 8)
				rang = true;
		}
		pthread_mutex_lock(&net->mmio.lock);
		if (coal_fired)
			net_coal_expired(net);
		if (net_polling(net)) {     /* no timer: it is never armed */
			if (kicked || net->poll_resume)
				net_tx_poll_run(net, kicked);
			if (readable)
				backend_rx_ready(net);
			more = net->poll_resume;
			pthread_mutex_unlock(&net->mmio.lock);
			continue;
		}
		expired = rang && timer_fired(net);
		bool arm = kicked && net_tx_on_notify(net);
		if (expired && net_tx_on_timeout(net))
			arm = true;
		if (!kicked && !expired)     /* a notify's or expiry's drain is this round */
			net_tx_on_continue(net);
		if (arm)
			net_arm_timer(net);
		if (readable)
			backend_rx_ready(net);
		more = net->tx_more;
		pthread_mutex_unlock(&net->mmio.lock);
	}
}

/* How close to a deadline the spinning waker stops sleeping and watches
 * the clock: more than this machine's timer lateness (~50 us) and poll()'s
 * 1 ms grain. */
#define NET_SPIN_WINDOW_NS 1200000ull

/*
 * --timer-wait spin: how long the waker may sleep before the armed
 * deadline (ms, for poll()), or 0 if it must watch the clock now.  Why
 * spin at all: 2008's timer came round every ~60 us all in
 * (docs/seed-2008.md sec. 5a), and on a machine whose own timers are late
 * -- a VM's hrtimer here fires ~45-50 us after a 50 us timerfd is due --
 * a timer that sleeps cannot stand for it.  Watching the clock costs the
 * waker's CPU (CPU 1, the host's side) while a deadline is near; it yields
 * that CPU between looks, so the host's other threads still run.
 */
static int spin_sleep_ms(struct net *net)
{
	uint64_t due = __atomic_load_n(&net->spin_due, __ATOMIC_SEQ_CST), now;

	if (!due)
		return -1;                    /* nothing armed: sleep until told */
	now = monotonic_ns();
	if (due <= now + NET_SPIN_WINDOW_NS)
		return 0;
	return (int)((due - now - NET_SPIN_WINDOW_NS) / 1000000);
}

/* Watch the clock until the armed deadline passes (true: it expired) or
 * something else needs the waker: a re-arm moves the deadline, which is
 * simply watched instead; a stop, or the backend's fd, end the watch. */
static bool spin_until_due(struct net *net, int rx_fd, bool watch_rx)
{
	for (unsigned looks = 0;; looks++) {
		uint64_t due = __atomic_load_n(&net->spin_due, __ATOMIC_SEQ_CST);

		if (!due || __atomic_load_n(&net->waker_stop, __ATOMIC_SEQ_CST))
			return false;
		if (monotonic_ns() >= due) {
			/* Taken only if no arm replaced it meanwhile. */
			return __atomic_compare_exchange_n(&net->spin_due, &due, 0, false, __ATOMIC_SEQ_CST,
							   __ATOMIC_SEQ_CST);
		}
		if (watch_rx && !(looks & 63)) {
			struct pollfd rx = { .fd = rx_fd, .events = POLLIN };

			if (poll(&rx, 1, 0) > 0)
				return false;
		}
		sched_yield();
	}
}

/* lguest model: the Waker.  Blocks on the timer (and the backend's fd, the
 * tap) and forces the vCPU out, so expiries and received frames are handled
 * on the vCPU thread like lguest's handle_timeout and handle_input.  After
 * announcing the tap it leaves it alone until the vCPU has read it
 * (waker_efd), and while the guest has no receive buffers.  net_stop ends
 * it through waker_stop and the same eventfd.  With --timer-wait spin it
 * watches the clock near a deadline instead of sleeping on the timerfd. */
static void *net_waker_thread(void *arg)
{
	struct net *net = arg;
	int rx_fd = backend_rx_fd(net);   /* opened before the thread starts */
	uint64_t count;

	for (;;) {
		struct pollfd fds[3] = {
			{ .fd = net->timer_fd, .events = POLLIN },
			{ .fd = net->waker_efd, .events = POLLIN },
			{ .fd = rx_fd, .events = POLLIN },
		};
		bool watch_rx = rx_fd >= 0 && !__atomic_load_n(&net->rx_pending, __ATOMIC_SEQ_CST) &&
				 !__atomic_load_n(&net->rx_starved, __ATOMIC_SEQ_CST);
		bool kick = false;
		int sleep_ms = -1;

		if (net->cfg.timer_spin) {
			/* Say we sleep before the last look at the deadline, so
			 * that an arm after that look wakes us. */
			__atomic_store_n(&net->waker_asleep, 1, __ATOMIC_SEQ_CST);
			sleep_ms = spin_sleep_ms(net);
			if (sleep_ms == 0) {
				__atomic_store_n(&net->waker_asleep, 0, __ATOMIC_SEQ_CST);
				if (spin_until_due(net, rx_fd, watch_rx)) {
					__atomic_store_n(&net->timer_pending, 1, __ATOMIC_SEQ_CST);
					net->mmio.host->kick_vcpu(net->mmio.host->ctx);
				}
				if (!__atomic_load_n(&net->waker_stop, __ATOMIC_SEQ_CST))
					sleep_ms = 0;   /* look at the fds without sleeping */
				else
					return NULL;
			}
		}
		if (poll(fds, watch_rx ? 3 : 2, sleep_ms) < 0) {
			__atomic_store_n(&net->waker_asleep, 0, __ATOMIC_SEQ_CST);
			if (errno == EINTR)
				continue;
			return NULL;
		}
		__atomic_store_n(&net->waker_asleep, 0, __ATOMIC_SEQ_CST);
		if ((fds[0].revents & POLLIN) && read(net->timer_fd, &count, 8) == 8) {
			__atomic_store_n(&net->timer_pending, 1, __ATOMIC_SEQ_CST);
			kick = true;
		}
		if (fds[1].revents & POLLIN)
			(void)!read(net->waker_efd, &count, 8);
		if (__atomic_load_n(&net->waker_stop, __ATOMIC_SEQ_CST))
			return NULL;
		if (watch_rx && (fds[2].revents & POLLIN)) {
			__atomic_store_n(&net->rx_pending, 1, __ATOMIC_SEQ_CST);
			kick = true;
		}
		if (kick)
			net->mmio.host->kick_vcpu(net->mmio.host->ctx);
	}
}

void net_vcpu_poll(struct net *net)
{
	bool expired = __atomic_exchange_n(&net->timer_pending, 0, __ATOMIC_SEQ_CST);
	bool readable = __atomic_exchange_n(&net->rx_pending, 0, __ATOMIC_SEQ_CST);

	/* In this model only the vCPU thread drains TX: tx_more is its own. */
	if (!expired && !readable && !net->tx_more)
		return;
	pthread_mutex_lock(&net->mmio.lock);
	if (expired && net_tx_on_timeout(net))
		net_arm_timer(net);
	else if (!expired)          /* one round per call: run_vcpu checks the stop flag between */
		net_tx_on_continue(net);
	if (readable)
		backend_rx_ready(net);
	pthread_mutex_unlock(&net->mmio.lock);
}

int net_open_fds(struct net *net)
{
	net->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	net->stop_efd = eventfd(0, EFD_CLOEXEC);
	if (net->timer_fd < 0 || net->stop_efd < 0)
		return diag_fail("net: timerfd/eventfd: %s", strerror(errno));
	if (net->cfg.model == NET_MODEL_THREADED) {
		/* Notifies bypass the vCPU thread: the VMM makes a QueueNotify
		 * write of NET_TX signal this eventfd.  (Interrupts do too: the
		 * device thread sets the line's level through the host.) */
		net->mmio.notify_fd[NET_TX] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		net->coal_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (net->mmio.notify_fd[NET_TX] < 0 || net->coal_fd < 0)
			return diag_fail("net: eventfd/timerfd: %s", strerror(errno));
	} else {
		net->waker_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (net->waker_efd < 0)
			return diag_fail("net: eventfd: %s", strerror(errno));
	}
	return 0;
}

int net_start(struct net *net)
{
	if (net->cfg.model == NET_MODEL_THREADED) {
		net->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
		if (net->epoll_fd < 0)
			return diag_fail("net: epoll: %s", strerror(errno));
		int fds[] = { net->mmio.notify_fd[NET_TX], net->timer_fd, net->stop_efd, net->coal_fd, backend_rx_fd(net) };
		for (unsigned i = 0; i < 5 && fds[i] >= 0; i++) {
			/* The kicks edge-triggered, the rest level (net_tx_thread). */
			struct epoll_event e = { .events = EPOLLIN | (i == 0 ? EPOLLET : 0), .data.fd = fds[i] };

			if (epoll_ctl(net->epoll_fd, EPOLL_CTL_ADD, fds[i], &e) < 0)
				return diag_fail("net: epoll_ctl: %s", strerror(errno));
		}
		if (pthread_create(&net->thread, NULL, net_tx_thread, net))
			return diag_fail("net: cannot start the device thread");
	} else {
		if (pthread_create(&net->thread, NULL, net_waker_thread, net))
			return diag_fail("net: cannot start the waker thread");
	}
	net->thread_running = true;
	pin_thread(net->thread, 1);   /* the vCPU has CPU 0 (thread_pin.c) */
	if (net->be_ops->start && net->be_ops->start(net->be) < 0)
		return -1;
	return 0;
}

void net_stop(struct net *net)
{
	uint64_t one = 1;

	if (net->be_ops->stop)
		net->be_ops->stop(net->be);
	if (!net->thread_running)
		return;
	if (net->cfg.model == NET_MODEL_THREADED) {
		__atomic_store_n(&net->stopping, 1, __ATOMIC_RELAXED);   /* ends a poll's window */
		if (write(net->stop_efd, &one, 8) == 8)
			pthread_join(net->thread, NULL);
	} else {
		/* The waker polls waker_efd too: set the flag, then wake it. */
		__atomic_store_n(&net->waker_stop, 1, __ATOMIC_SEQ_CST);
		wake_waker(net);
		pthread_join(net->thread, NULL);
	}
	net->thread_running = false;
}

void net_close(struct net *net)
{
	int *fds[] = { &net->mmio.notify_fd[NET_TX], &net->timer_fd, &net->stop_efd, &net->epoll_fd, &net->waker_efd,
		       &net->coal_fd };

	if (net->be_ops->close)
		net->be_ops->close(net->be);

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (*fds[i] >= 0) {
			close(*fds[i]);
			*fds[i] = -1;
		}
}
