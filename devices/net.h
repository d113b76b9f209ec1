/*
 * net.h -- virtio-net with lguest-style transmit notification suppression.
 *
 * Queues: receiveq 0, transmitq 1.  The transmit side is the experiment:
 * a guest notify drains the ring, sets VRING_USED_F_NO_NOTIFY and arms a
 * one-shot timer; the timer drains again and keeps the guest quiet while it
 * finds work (docs/architecture.md, "The path of one notify").  Two execution models:
 * lguest (notifies are MMIO exits handled on the vCPU thread, timer expiries
 * kick the vCPU out through device_host.kick_vcpu) and threaded (a kick
 * eventfd that the launcher routes through KVM, a device thread that
 * drains and drives the interrupt line itself).
 *
 * The receive side (net_rx.c) carries the tcp workload's ACKs: frames from
 * the tap (read by the device thread, or by the vCPU thread after the waker
 * kicked it, as lguest did) or from libslirp (its poll thread) go straight
 * into the guest's receive buffers.  As in lguest, NO_NOTIFY stays set on
 * the receive queue while it has buffers: the guest only notifies after the
 * host ran out and asked (net_rx_on_notify).
 *
 * The backend -- sink, tap or libslirp -- is a table of operations
 * (net_backend.h) that net_init picks once for --net: the drain hands it
 * each chain, the device threads watch its descriptor if it has one, and
 * net_rx.c lets it read into the guest's buffers.  Nothing else in the
 * device asks which backend it has.
 *
 * The stats block's net keys (net_stats.c) come from here too, in the
 * three places the block's fixed order gives them (docs/stats.md).
 */
#ifndef NET_H
#define NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host_poll.h"
#include "net_backend.h"
#include "net_coal.h"
#include "net_config.h"
#include "virtio_mmio.h"

struct stats;
struct trace_ring;

/* The device's queues, in virtio-net's numbering. */
enum { NET_RX = 0, NET_TX = 1, NET_CTRL = 2 };   /* controlq: threaded model only */

struct net_tx_stats {
	uint64_t notifies;            /* guest notifies that reached the host */
	uint64_t notify_wakeups;      /* drains started by a notify (threaded: merged kicks) */
	uint64_t device_wakeups;      /* threaded: times the device thread slept and was woken */
	uint64_t notifies_empty;      /* notifies that found nothing to drain */
	uint64_t timeouts;            /* timer expiries */
	uint64_t timer_drains_work;   /* expiries that found buffers */
	uint64_t timer_drains_empty;
	uint64_t recheck_hits;        /* times buffers slipped in while re-enabling notifies */
	uint64_t buffers_by_notify, buffers_by_timer;  /* a continued drain's chains included */
	uint64_t continuations;       /* rounds that took up a drain its budget had stopped */
	uint64_t buffers_by_continuation;  /* chains taken in those rounds */
	uint64_t buffers_indirect, descriptors;
	uint64_t interrupts;
	/* --host-poll-us (net_tx_poll_run) */
	uint64_t poll_hits;           /* polls that found buffers before their window ran out */
	uint64_t poll_misses;         /* polls whose window ran out: notifications back on */
	uint64_t poll_ns;             /* time spent spinning in those polls */
	uint64_t poll_budget_exhausted;  /* runs that stopped at the weight with the guest still busy */
	uint64_t buffers_by_poll;     /* chains taken by a run's drains after its first */
	double t_first, t_last;       /* CLOCK_MONOTONIC of first pop, last drain */
	/* Threaded model: the device thread's CLOCK_THREAD_CPUTIME_ID, read by
	 * that thread as it exits (so valid after net_stop); 0 otherwise. */
	double device_cpu_seconds;
};

/* The host's half of an indirect table's price: each TX chain's walk
 * (vq_pop_avail) timed with rdtsc, direct and indirect apart.  The TSC
 * rate comes from the device's own clocks: the first timed pop's TSC and
 * CLOCK_MONOTONIC against both read again when the stats are taken. */
struct net_pop_timing {
	uint64_t ticks[2], chains[2];   /* [0] direct, [1] indirect chains */
	uint64_t tsc0;                  /* rdtsc before the first timed pop (0: none yet) */
	double mono0;                   /* CLOCK_MONOTONIC just after it */
};

struct net_rx_stats {
	uint64_t notifies;            /* guest notifies on the receive queue */
	uint64_t frames, bytes;       /* delivered into receive buffers (bytes without the header) */
	uint64_t dropped_no_buffer;   /* the guest had no buffer posted (user: dropped; tap: left queued) */
	uint64_t dropped_too_big;     /* a frame larger than the buffer it got */
	uint64_t starved;             /* times the host ran out of buffers and asked for a notify */
	uint64_t read_errors;
	uint64_t interrupts;
};

struct net {
	struct virtio_mmio_dev mmio;
	struct net_config cfg;
	/* The backend, chosen by net_init from cfg.backend: its operations and
	 * its state (be, which points at be_state), whose type only the
	 * backend knows (net_backend.h). */
	const struct net_backend_ops *be_ops;
	void *be;
	_Alignas(max_align_t) unsigned char be_state[NET_BACKEND_STATE_BYTES];
	struct net_tx_stats st;
	struct net_rx_stats rx;
	struct net_pop_timing pop;    /* each TX chain's walk, timed */
	struct vq_chain chain;        /* scratch for the drain loop */
	struct vq_chain rx_chain;     /* scratch for receiving (slirp delivers during a drain) */
	struct vq_chain ctrl_chain;   /* scratch for the control queue (net_ctrl.c) */
	/* virtio 1.3 notification coalescing (net_coal.h), on when the driver
	 * negotiated VIRTIO_NET_F_NOTF_COAL or VQ_NOTF_COAL (threaded model) */
	struct net_coal coal;
	int coal_fd;                  /* its time limit's timerfd, on the device thread's epoll */
	uint64_t coal_timer_set;      /* what coal_fd is set to (CLOCK_MONOTONIC ns; 0: disarmed) */
	uint64_t coal_due;            /* the earliest pending time limit (ns; 0: none) */
	bool polling_now;             /* inside a poll run: its spin watches coal_due, no timerfd */
	uint64_t ctrl_commands_bad;   /* control chains without room for the ack, or of an unknown class */
	bool rx_starved;              /* out of receive buffers: stop reading the backend */
	bool rx_used_unsignalled;     /* buffers returned since the last interrupt decision */
	bool suppressed;              /* we asked the guest not to notify */
	uint32_t timeout_us;          /* current timer length */
	bool timer_armed;             /* armed and not yet expired, as the state machine sees it */
	struct trace_ring *trace;     /* the timeline (--trace), or 0; set before net_start */
	uint64_t last_timeout_num;    /* adaptive rule: buffers of the last timer drain */
	unsigned tx_weight_chains;    /* a drain round's budget: this many chains ... */
	uint64_t tx_weight_bytes;     /* ... or this many bytes, whichever comes first */
	bool tx_more;                 /* the last round stopped at its budget with chains left */
	bool tx_more_by_timer;        /* ... and it was a timer's drain (else a notify's) */
	uint64_t drain_bytes;         /* what the last drain round took, in bytes */
	/* --host-poll-us: the window (ns), and when the last poll that ran out
	 * began (CLOCK_MONOTONIC ns; 0: none pending) for the adaptive rule */
	uint32_t poll_window_ns;
	uint64_t poll_wait_since;
	bool poll_resume;             /* a poll run stopped at its budget: go on after a look around */
	int stopping;                 /* net_stop has begun: a poll ends at once */
	/* plumbing; the TX kick eventfd (threaded) is mmio.notify_fd[1] */
	int timer_fd, stop_efd, epoll_fd;
	/* Threaded model, the device thread's own: the one-shot timer's
	 * deadline, and what timer_fd is set to (CLOCK_MONOTONIC ns; 0: none).
	 * They differ while a re-arm is pending (net.c, arm_timer_lazy). */
	uint64_t timer_due, timer_set;
	pthread_t thread;
	bool thread_running;
	int timer_pending;            /* lguest model: set by the waker, taken by the vCPU */
	int rx_pending;               /* lguest model: the backend's fd is readable (waker -> vCPU) */
	int waker_efd;                /* lguest model: "look at the backend again" or "stop" (-> waker) */
	int waker_stop;
	/* lguest model with --timer-wait spin: the armed deadline
	 * (CLOCK_MONOTONIC ns; 0: none), written by each arm and taken by the
	 * waker when it passes; and whether the waker is asleep in poll()
	 * (then an arm must wake it). */
	uint64_t spin_due;
	int waker_asleep;
};

/* Also picks the backend's table for cfg->backend (be_ops, be). */
void net_init(struct net *net, const struct device_host *host, unsigned index, const struct net_config *cfg);
/* Open the backend's host side (tap device, slirp) while still privileged. */
int net_open_backend(struct net *net);
/* The timer and the eventfds.  Threaded model: also the TX kick
 * (mmio.notify_fd[1]), which the VMM routes before the guest runs
 * (launcher/wiring.c). */
int net_open_fds(struct net *net);
/* After net_open_fds: the device thread (threaded) or the waker (lguest),
 * and libslirp's poll thread. */
int net_start(struct net *net);
void net_stop(struct net *net);
/* After net_stop: close the eventfds, timerfd and epoll fd, and the backend. */
void net_close(struct net *net);
/* lguest model: called on the vCPU thread after KVM_RUN was interrupted. */
void net_vcpu_poll(struct net *net);

/* What became of the frames the backend was given (its tx_totals), for
 * whoever checks a run's transfer. */
void net_backend_tx_totals(const struct net *net, struct net_backend_tx_totals *out);

/* Receiving (net_rx.c).  All with mmio.lock held. */
/* One frame (no virtio-net header) into the next receive buffer; -1 if
 * the guest has none (dropped, counted). */
int net_rx_deliver(struct net *net, const void *frame, size_t len);
/* Read up to `budget` frames from the backend's receive side (be_ops->
 * receive: only the tap has one) into receive buffers; returns how many.
 * Stops early when the backend has nothing queued or the buffers ran out;
 * 0 at once for a backend without a receive side. */
unsigned net_rx_from_backend(struct net *net, unsigned budget);
/* Interrupt the guest for what was delivered, if it asked for interrupts. */
void net_rx_signal(struct net *net);
/* The guest notified the receive queue: true if we were waiting for it. */
bool net_rx_on_notify(struct net *net);

/* Notification coalescing's glue (net.c), lock held: queue q returned one
 * used buffer (count it, notify if the conditions are met); queue q's
 * parameters changed (R3: notify now if they are already met). */
void net_coal_used(struct net *net, unsigned q);
void net_coal_changed(struct net *net, unsigned q);
bool net_coal_negotiated(const struct net *net);
/* The control queue (net_ctrl.c): answer every command the driver queued.
 * Lock held (the vCPU thread's MMIO exit). */
void net_ctrl_on_notify(struct net *net);

/* The suppression state machine.  Each returns true when the caller must
 * (re)arm the one-shot timer for net->timeout_us.  Caller holds mmio.lock. */
bool net_tx_on_notify(struct net *net);
bool net_tx_on_timeout(struct net *net);
/* A drain stopped at its budget and chains are left (net->tx_more). */
bool net_tx_continuing(const struct net *net);
/* One more round of that drain.  Neither a notify nor an expiry: it leaves
 * the timer alone.  Caller holds mmio.lock. */
void net_tx_on_continue(struct net *net);

/* The stats block (net_stats.c, docs/stats.md).  The device's keys sit in
 * three places of the block's fixed order, among the launcher's own, so
 * there are three calls, made in this order. */
/* The seed's two numbers, which open the block: tx_queue_notifies and
 * tx_timer_timeouts. */
void net_report_seed_stats(const struct net *net, struct stats *st);
/* tx_transfer_seconds: from the first chain taken to the last drain that
 * found work. */
void net_report_transfer_time(const struct net *net, struct stats *st);
/* What only the guest knows about the transfer. */
struct net_report_guest {
	bool tcp;                     /* the tcp workload: the receiver checks the stream */
	uint64_t tcp_bytes_acked;     /* from the guest's report; 0 without one */
};
/* Everything else, net_backend to host_timeout_us_final: the backend and
 * its own keys, what became of the frames (tx_payload_bytes .. tx_verify),
 * every TX and RX counter, and the timer. */
void net_report_stats(const struct net *net, const struct net_report_guest *guest, struct stats *st);

#endif
