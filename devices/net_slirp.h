/*
 * net_slirp.h -- user-mode networking as the net backend: libslirp plays a
 * small router on a private network (10.0.2.0/24), so an unprivileged
 * launcher gives the guest TCP/UDP to the host and beyond with no tap device.
 *
 * Guest -> world: the device hands each transmitted chain (virtio-net header
 * + Ethernet frame) to net_slirp_transmit, which gathers it and feeds the
 * frame to slirp_input; slirp answers ARP/DHCP/ICMP itself and turns TCP and
 * UDP into ordinary host sockets.  World -> guest: a poll thread waits on
 * those sockets and slirp's timers, and every frame slirp produces comes out
 * through the deliver callback, which the device turns into a receive buffer.
 *
 * The guest reaches exactly one host destination: --peer (ADDR:PORT, TCP).
 * libslirp's own restricted mode cannot express that -- it lets a
 * restricted guest reach only its guestfwd entries, which are served by a
 * command, a unix socket or the application itself, never a plain TCP
 * connection to the host's 127.0.0.1 -- so slirp runs unrestricted and
 * net_slirp_transmit is the gate instead: only ARP and TCP to the peer get
 * to slirp_input, and a new connection only while slirp holds fewer than
 * NET_SLIRP_MAX_CONNECTIONS host sockets (counted through its
 * register/unregister_poll_fd callbacks).  Everything else is dropped and
 * counted before slirp sees it (docs/tcp.md).
 *
 * libslirp is not thread-safe, so every call into it is made holding the
 * device's lock (*lock): the device thread or vCPU already holds it when it
 * transmits, and the poll thread takes it around each slirp call.  deliver
 * therefore always runs with *lock held -- sometimes on the poll thread,
 * sometimes inside net_slirp_transmit on the caller's thread (an ARP reply
 * comes back before slirp_input returns) -- and must not take it again.
 *
 * The device sees all this through net_slirp_ops (net_backend.h): open
 * (slirp's instance, and the gate opened for --peer), start and stop (the
 * poll thread), close, transmit and the totals.  It has no receive side to
 * poll: frames arrive through the deliver callback of the device's link.
 */
#ifndef NET_SLIRP_H
#define NET_SLIRP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <slirp/libslirp.h>

#include "net_backend.h"
#include "virtqueue.h"

/* The private network; the guest is told its address and gateway on its
 * command line (slirp's DHCP would hand out the same ones). */
#define NET_SLIRP_NETWORK    "10.0.2.0"
#define NET_SLIRP_NETMASK    "255.255.255.0"
#define NET_SLIRP_PREFIX_LEN 24
#define NET_SLIRP_HOST       "10.0.2.2"   /* gateway; TCP/UDP to it reach the host's 127.0.0.1 */
#define NET_SLIRP_NAMESERVER "10.0.2.3"   /* forwards to the host's resolver */
#define NET_SLIRP_GUEST      "10.0.2.15"  /* the first (and only) DHCP lease */

#define NET_SLIRP_HDR_LEN    12u          /* sizeof(struct virtio_net_hdr_v1) */
#define NET_SLIRP_ETH_HLEN   14u
#define NET_SLIRP_FRAME_MAX  65535u

/* An Ethernet frame for the guest, without a virtio-net header.  Called with
 * *lock held; the frame is only valid during the call.  The same callback
 * every backend gets from the device (net_backend.h). */
typedef net_backend_deliver_fn net_slirp_deliver_fn;

struct net_slirp_timer;   /* slirp's timers, kept by net_slirp.c */

struct net_slirp {
	Slirp *slirp;
	pthread_mutex_t *lock;        /* the device's lock: guards slirp and everything below */
	net_slirp_deliver_fn deliver;
	void *opaque;
	struct net_slirp_timer *timers;
	/* poll thread */
	int wake_fd;                  /* eventfd: transmit, notify and stop interrupt poll() */
	pthread_t thread;
	bool thread_running;
	bool stopping;
	/* statistics (frames counted without the virtio-net header) */
	uint64_t frames_from_guest, bytes_from_guest;
	uint64_t frames_to_guest, bytes_to_guest;
	uint64_t errors;              /* rejected chains and slirp's complaints about the guest */
	uint64_t frames_refused;      /* of those, frames for anything but the peer (ARP aside) */
	uint64_t connections_refused; /* of those, SYNs to the peer beyond the connection cap */
	/* the gate */
	uint32_t peer_ip;             /* host order; 0: no TCP at all */
	uint16_t peer_port;
	unsigned host_sockets;        /* sockets slirp holds open (registered poll fds) */
	int *host_fds;                /* which: an unregister only counts for a registered fd */
	unsigned host_fds_len, host_fds_cap;   /* fewer than host_sockets only after a failed realloc */
	bool wake_pending;            /* a transmit may have opened, shut or closed a host socket */
	uint64_t bytes_at_push;       /* bytes_from_guest when the corks were last let go */
	uint64_t pushes;              /* host sockets' corks let go (net_slirp_pushes) */
	char first_error[200];
	uint8_t gather[NET_SLIRP_HDR_LEN + NET_SLIRP_FRAME_MAX];  /* one transmitted chain, contiguous */
};

/* Create the slirp instance (no sockets are opened yet).  -1 with diag set.
 * The gate starts shut: net_slirp_allow opens it for the one peer (the
 * backend table's open does that with the device's --peer). */
int net_slirp_open(struct net_slirp *s, pthread_mutex_t *lock, net_slirp_deliver_fn deliver, void *opaque);
/* The corked host sockets are pushed at the end of a drain once the guest
 * has sent this much since the last push, and by the poll thread, which
 * comes round at least every NET_SLIRP_ROUND_MS while slirp holds a host
 * socket (for the tail, and to watch for POLLOUT when a full socket
 * refused bytes; transmits wake it only for SYN, FIN and RST). */
#define NET_SLIRP_PUSH_BYTES (16u * 1024u)
#define NET_SLIRP_ROUND_MS 1u

/* Host sockets slirp may hold at once: the guest's connections to the peer. */
#define NET_SLIRP_MAX_CONNECTIONS 16u

/* The one destination the guest may reach: TCP to ip:port (host order, as
 * the guest addresses it; 10.0.2.2 is the host's 127.0.0.1).  Caller holds
 * *lock or the poll thread is not running. */
void net_slirp_allow(struct net_slirp *s, uint32_t ip, uint16_t port);
/* Start the poll thread; called after privileges are dropped.  -1 with diag set. */
int net_slirp_start(struct net_slirp *s);
/* Caller holds *lock.  0 if slirp took the frame, -1 if the chain was too
 * short or too long to be one, or the gate refused it (counted, first
 * reason kept). */
int net_slirp_transmit(struct net_slirp *s, const struct vq_chain *chain);
/* Caller holds *lock.  After the transmits of one drain: push the corked
 * host sockets if NET_SLIRP_PUSH_BYTES have come since the last push, and
 * wake the poll thread if a transmit was a SYN, FIN or RST. */
void net_slirp_flush(struct net_slirp *s);
/* Stop and join the poll thread (without *lock held).  Safe if never started. */
void net_slirp_stop(struct net_slirp *s);
/* After net_slirp_stop: free slirp (closing its sockets), the timers and the eventfd. */
void net_slirp_close(struct net_slirp *s);

/* Its backend table (net_backend.h) takes a struct net_slirp as its state. */

#endif
