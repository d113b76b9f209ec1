/*
 * net_backend.h -- what the net device asks of a backend, as one table of
 * operations.  The sink (net_sink.c), the tap (net_tap.c) and user-mode
 * networking (net_slirp.c) each fill one; net_init picks the table for
 * --net once, and from then on the device (net.c, net_rx.c) calls through
 * net->be_ops with net->be as the backend's state, and never asks which
 * backend it has.
 *
 * A frame's way out: the TX drain pops a chain (net.c) and hands it to
 * transmit -- the sink copies and checks it, the tap writes it with one
 * writev straight from guest RAM, slirp gates it and feeds slirp_input.
 * The chain goes back on the used ring whatever the backend made of it:
 * a frame it refused is counted by the backend, not a broken ring.
 *
 * The way in has two shapes.  A backend with a file descriptor (the tap)
 * names it (rx_fd); the device watches it -- its device thread, or the
 * lguest model's waker -- and, when it is readable, net_rx.c pops the
 * guest's receive chain, lays an iovec over it and lets the backend read
 * one frame into it (receive).  A backend with its own thread (slirp)
 * pushes frames at the device through the deliver callback it got when it
 * was opened (struct net_backend_link).  The sink produces no frames.
 *
 * Stats (docs/stats.md): the tx_* keys are the device's, but only the
 * backend knows what became of the frames, so it sums that up in
 * tx_totals; keys that only it has (the tap's interface name) it appends
 * itself (report_stats).
 *
 * Life cycle, in the order net.c calls it: init (the never-opened state),
 * open (still privileged: the tap device, slirp's instance), start (after
 * privileges are dropped: slirp's poll thread), stop (threads joined),
 * close (descriptors and memory).  An operation a backend does not have is
 * NULL.
 *
 * A backend's state is its own: its type is declared in its own header
 * (net_sink.h, net_tap.h, net_slirp.h), which only the backend's file and
 * the tests that drive it from outside include -- not net.h, so nothing
 * above the device (the launcher, the lab) can read a backend's fields or
 * pull in libslirp's header.  The device keeps the state in storage of its
 * own (struct net's be_state), NET_BACKEND_STATE_BYTES long, and knows it
 * only as `void *be`.
 */
#ifndef NET_BACKEND_H
#define NET_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "net_config.h"
#include "virtqueue.h"

struct stats;

/* Room for any backend's state: a whole 64 KiB frame (the sink's copy, the
 * gather buffer slirp feeds slirp_input from) and a backend's counters.
 * Each backend's file checks that its state fits. */
#define NET_BACKEND_STATE_BYTES (65536u + 1024u)

/* An Ethernet frame for the guest, without a virtio-net header.  Called with
 * the device's lock held; the frame is only valid during the call. */
typedef void (*net_backend_deliver_fn)(void *opaque, const void *frame, size_t len);

/* What a backend gets from the device when it is opened. */
struct net_backend_link {
	pthread_mutex_t *lock;          /* the device's lock, held around every transmit */
	net_backend_deliver_fn deliver; /* frames the backend produces on its own */
	void *opaque;                   /* deliver's first argument */
};

/* What became of the frames a backend was given: the stats block's
 * tx_frames, tx_frames_bad, tx_verify and (raw workload) tx_payload_bytes. */
struct net_backend_tx_totals {
	uint64_t frames;          /* taken whole: verified, written, handed to slirp */
	uint64_t bad;             /* refused, failed or dropped (and slirp's complaints) */
	uint64_t payload_bytes;   /* the raw workload's bytes after each frame's header */
	const char *verdict;      /* "ok", the first reason a frame went bad, or NULL:
				     nothing went wrong, but the backend does not check frames */
	const char *interface;    /* the host interface the frames went out on (the
				     tap's name), or NULL */
};

struct net_backend_ops {
	const char *name;         /* --net's word: the net_backend key's value */
	/* The never-opened state, from zeroed storage (e.g. no descriptor: -1). */
	void (*init)(void *be);
	/* Set up the host side from the device's settings; -1 with diag set. */
	int (*open)(void *be, const struct net_config *cfg, const struct net_backend_link *link);
	/* Start threads of its own (after privileges are dropped); -1 with diag set. */
	int (*start)(void *be);
	/* Join them, without the device's lock.  Safe if never started. */
	void (*stop)(void *be);
	/* After stop: close descriptors, free memory.  Safe if never opened. */
	void (*close)(void *be);
	/* One popped TX chain (virtio-net header + frame), the device's lock
	 * held.  0 if the frame went on, -1 if it was dropped (counted by the
	 * backend, first reason kept).  `negotiated` is the feature set the
	 * driver and device agreed on. */
	int (*transmit)(void *be, const struct vq_chain *chain, uint64_t negotiated);
	/* The end of a TX drain that transmitted, the device's lock held: send
	 * on whatever the drain's frames left queued in the backend (slirp
	 * pushes its corked host sockets once a drain, not once a frame). */
	void (*flush)(void *be);
	/* The descriptor to watch for frames to receive, or -1. */
	int (*rx_fd)(const void *be);
	/* Read one frame, virtio-net header first, into `iov`; the byte count,
	 * or -1 with errno (EAGAIN: nothing queued).  Frames longer than `iov`
	 * are the caller's to detect: it adds a spare byte at the end. */
	ssize_t (*receive)(void *be, const struct iovec *iov, int iovcnt);
	void (*tx_totals)(const void *be, struct net_backend_tx_totals *out);
	/* Append the keys only this backend has. */
	void (*report_stats)(const void *be, struct stats *st);
};

/* The three tables, one per --net (net_sink.c, net_tap.c, net_slirp.c). */
extern const struct net_backend_ops net_sink_ops;   /* --net sink: verify and discard */
extern const struct net_backend_ops net_tap_ops;    /* --net tap: a real TAP device */
extern const struct net_backend_ops net_slirp_ops;  /* --net user: libslirp */

#endif
