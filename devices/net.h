/*
 * net.h -- virtio-net with lguest-style transmit notification suppression.
 *
 * Queues: receiveq 0, transmitq 1.  The transmit side is the experiment:
 * a guest notify drains the ring, sets VRING_USED_F_NO_NOTIFY and arms a
 * one-shot timer; the timer drains again and keeps the guest quiet while it
 * finds work (docs/architecture.md, "The path of one notify").  Two execution models:
 * lguest (notifies are MMIO exits handled on the vCPU thread, timer expiries
 * kick the vCPU out through device_host.kick_vcpu) and threaded (a kick
 * eventfd and an irqfd that the launcher routes through KVM, a device
 * thread).
 *
 * The receive side (net_rx.c) carries the tcp workload's ACKs: frames from
 * the tap (read by the device thread, or by the vCPU thread after the waker
 * kicked it, as lguest did) or from libslirp (its poll thread) go straight
 * into the guest's receive buffers.  As in lguest, NO_NOTIFY stays set on
 * the receive queue while it has buffers: the guest only notifies after the
 * host ran out and asked (net_rx_on_notify).
 */
#ifndef NET_H
#define NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "net_config.h"
#include "net_sink.h"
#include "net_slirp.h"
#include "net_tap.h"
#include "virtio_mmio.h"

struct net_tx_stats {
	uint64_t notifies;            /* guest notifies that reached the host */
	uint64_t notify_wakeups;      /* drains started by a notify (threaded: merged kicks) */
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
	double t_first, t_last;       /* CLOCK_MONOTONIC of first pop, last drain */
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
	struct net_sink sink;       /* backend: verify and discard (default) */
	struct net_tap tap;         /* backend: a real TAP device */
	struct net_slirp slirp;     /* backend: user-mode networking */
	struct net_tx_stats st;
	struct net_rx_stats rx;
	struct vq_chain chain;        /* scratch for the drain loop */
	struct vq_chain rx_chain;     /* scratch for receiving (slirp delivers during a drain) */
	bool rx_starved;              /* out of receive buffers: stop reading the tap */
	bool rx_used_unsignalled;     /* buffers returned since the last interrupt decision */
	bool suppressed;              /* we asked the guest not to notify */
	uint32_t timeout_us;          /* current timer length */
	uint64_t last_timeout_num;    /* adaptive rule: buffers of the last timer drain */
	unsigned tx_weight_chains;    /* a drain round's budget: this many chains ... */
	uint64_t tx_weight_bytes;     /* ... or this many bytes, whichever comes first */
	bool tx_more;                 /* the last round stopped at its budget with chains left */
	bool tx_more_by_timer;        /* ... and it was a timer's drain (else a notify's) */
	/* plumbing; the TX kick eventfd (threaded) is mmio.notify_fd[1] */
	int timer_fd, stop_efd, epoll_fd;
	pthread_t thread;
	bool thread_running;
	int timer_pending;            /* lguest model: set by the waker, taken by the vCPU */
	int rx_pending;               /* lguest model: the tap is readable (waker -> vCPU) */
	int waker_efd;                /* lguest model: "look at the tap again" or "stop" (-> waker) */
	int waker_stop;
};

void net_init(struct net *net, const struct device_host *host, unsigned index, const struct net_config *cfg);
/* Open the backend's host side (tap device, slirp) while still privileged. */
int net_open_backend(struct net *net);
/* The timer and the eventfds.  Threaded model: also the TX kick
 * (mmio.notify_fd[1]) and the interrupt (mmio.irqfd), which the VMM routes
 * before the guest runs (launcher/wiring.c). */
int net_open_fds(struct net *net);
/* After net_open_fds: the device thread (threaded) or the waker (lguest),
 * and libslirp's poll thread. */
int net_start(struct net *net);
void net_stop(struct net *net);
/* After net_stop: close the eventfds, timerfd and epoll fd. */
void net_close(struct net *net);
/* Pin a thread to a CPU when the machine has two or more. */
void pin_thread(pthread_t thread, int cpu);
/* lguest model: called on the vCPU thread after KVM_RUN was interrupted. */
void net_vcpu_poll(struct net *net);

/* Receiving (net_rx.c).  All with mmio.lock held. */
/* One frame (no virtio-net header) into the next receive buffer; -1 if
 * the guest has none (dropped, counted). */
int net_rx_deliver(struct net *net, const void *frame, size_t len);
/* Read up to `budget` frames from the tap into receive buffers; returns
 * how many.  Stops early when the tap is empty or the buffers ran out. */
unsigned net_rx_from_tap(struct net *net, unsigned budget);
/* Interrupt the guest for what was delivered, if it asked for interrupts. */
void net_rx_signal(struct net *net);
/* The guest notified the receive queue: true if we were waiting for it. */
bool net_rx_on_notify(struct net *net);

/* The suppression state machine.  Each returns true when the caller must
 * (re)arm the one-shot timer for net->timeout_us.  Caller holds mmio.lock. */
bool net_tx_on_notify(struct net *net);
bool net_tx_on_timeout(struct net *net);
/* A drain stopped at its budget and chains are left (net->tx_more). */
bool net_tx_continuing(const struct net *net);
/* One more round of that drain.  Neither a notify nor an expiry: it leaves
 * the timer alone.  Caller holds mmio.lock. */
void net_tx_on_continue(struct net *net);

#endif
