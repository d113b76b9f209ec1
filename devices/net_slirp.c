/*
 * net_slirp.c -- libslirp as the net backend, and the thread that drives it.
 *
 * Guest -> slirp: net_slirp_transmit copies the chain's readable buffers into
 * one contiguous buffer (slirp wants a flat frame; the guest may split it at
 * any byte), strips the virtio-net header and calls slirp_input.  That may
 * open a host socket (a guest SYN becomes a non-blocking connect), which the
 * poll thread must start watching, so the thread is woken through an eventfd.
 *
 * slirp -> guest: the poll thread loops: under the lock, slirp lists the
 * sockets it wants watched (slirp_pollfds_fill) and how long it may sleep;
 * without the lock, poll() waits on them, the eventfd and the next of
 * slirp's timers; under the lock again, slirp_pollfds_poll reads and writes
 * the ready sockets and expired timers fire.  Every frame slirp builds along
 * the way leaves through send_packet -> deliver, with the lock held.
 *
 * The lock is never held across poll(), so the guest's transmits are never
 * blocked by the thread waiting for the outside world.
 *
 * One host write per drain, not per frame.  slirp writes each TCP segment's
 * payload to its host socket as it takes the segment (a send() per 136-byte
 * segment in the 2008 preset), and a loopback send() runs the host's whole
 * TCP path for it: ~8 us a segment on the kvm_pvm machines, four times the
 * guest's own work per buffer.  So every host socket is corked when slirp
 * opens it, and they are pushed at the end of a TX drain once the guest
 * has sent NET_SLIRP_PUSH_BYTES since the last push, and by the poll
 * thread's round (at least every NET_SLIRP_ROUND_MS) for the tail: the
 * same bytes in the same order, in fewer, larger host segments, at a cost
 * per push (two setsockopt calls and the loopback transmit) that a drain of
 * a few segments would otherwise pay each time.  The guest does not see
 * when the host pushes: slirp acknowledges its segments as it takes them.
 * The poll thread is woken only for a SYN, FIN or RST (which may open,
 * shut or close a host socket), not once per frame.
 *
 * The gate (net_slirp.h): before slirp_input, net_slirp_transmit looks at
 * the frame's Ethernet, IPv4 and TCP headers and passes only ARP and
 * unfragmented TCP to --peer; a SYN that would open a new host socket also
 * needs slirp to hold fewer than NET_SLIRP_MAX_CONNECTIONS.  slirp reports
 * every host socket it opens or closes through register/unregister_poll_fd,
 * so that count is exact.  DNS and DHCP are switched off in slirp itself
 * (the guest's addresses come on its command line).
 *
 * The end of the file wraps all this as the device sees a backend
 * (net_slirp_ops, net_backend.h).
 */
#include "net_slirp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"
#include "stats.h"
#include "thread_pin.h"

/* One of slirp's timers.  With SlirpConfig version 4 (libslirp 4.7) slirp
 * names its timers by id and expects slirp_handle_timer (timer_new_opaque);
 * before, it passed a callback (timer_new).  Both are accepted, so whichever
 * the library uses works.  Only IPv6 router adverts use one today. */
struct net_slirp_timer {
	struct net_slirp_timer *next;
	SlirpTimerCb cb;            /* NULL: an id timer, fired via slirp_handle_timer */
	SlirpTimerId id;
	void *cb_opaque;
	bool armed;
	int64_t expire_ms;          /* absolute, on clock_get_ns's clock */
};

/* Lets callbacks that run on the poll thread skip waking it: it rebuilds its
 * poll set before it sleeps again anyway. */
static __thread bool on_poll_thread;

static int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void net_slirp_wake(struct net_slirp *s)
{
	uint64_t one = 1;

	if (on_poll_thread || s->wake_fd < 0)
		return;
	if (write(s->wake_fd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, so the thread is awake already */
	}
}

/* Count an error; the first one's reason is kept, with how far the guest had got. */
static void __attribute__((format(printf, 2, 3))) net_slirp_error(struct net_slirp *s, const char *fmt, ...)
{
	size_t used;
	va_list ap;

	if (s->errors++)
		return;
	va_start(ap, fmt);
	vsnprintf(s->first_error, sizeof(s->first_error), fmt, ap);
	va_end(ap);
	used = strlen(s->first_error);
	snprintf(s->first_error + used, sizeof(s->first_error) - used, " (after %llu frames from the guest)",
		 (unsigned long long)s->frames_from_guest);
}

/* ---- callbacks from slirp; all run with *lock held ---- */

static ssize_t cb_send_packet(const void *buf, size_t len, void *opaque)
{
	struct net_slirp *s = opaque;

	s->frames_to_guest++;
	s->bytes_to_guest += len;
	s->deliver(s->opaque, buf, len);
	return (ssize_t)len;
}

static void cb_guest_error(const char *msg, void *opaque)
{
	net_slirp_error(opaque, "slirp: %s", msg);
}

static int64_t cb_clock_get_ns(void *opaque)
{
	(void)opaque;
	return monotonic_ns();
}

static struct net_slirp_timer *timer_add(struct net_slirp *s, SlirpTimerCb cb, SlirpTimerId id, void *cb_opaque)
{
	struct net_slirp_timer *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;   /* slirp then never arms it; only IPv6 RAs use one */
	t->cb = cb;
	t->id = id;
	t->cb_opaque = cb_opaque;
	t->next = s->timers;
	s->timers = t;
	return t;
}

static void *cb_timer_new(SlirpTimerCb cb, void *cb_opaque, void *opaque)
{
	return timer_add(opaque, cb, 0, cb_opaque);
}

static void *cb_timer_new_opaque(SlirpTimerId id, void *cb_opaque, void *opaque)
{
	return timer_add(opaque, NULL, id, cb_opaque);
}

static void cb_timer_free(void *timer, void *opaque)
{
	struct net_slirp *s = opaque;

	for (struct net_slirp_timer **p = &s->timers; *p; p = &(*p)->next)
		if (*p == timer) {
			*p = (*p)->next;
			free(timer);
			return;
		}
}

static void cb_timer_mod(void *timer, int64_t expire_ms, void *opaque)
{
	struct net_slirp_timer *t = timer;

	if (!t)
		return;
	t->expire_ms = expire_ms;
	t->armed = true;
	net_slirp_wake(opaque);   /* the sleeping thread's timeout may now be too long */
}

#define TCP_FIN_FLAG 0x01
#define TCP_SYN_FLAG 0x02
#define TCP_RST_FLAG 0x04

/* Hold (or let go of) a host socket's partial segments.  A socket that is
 * not TCP refuses, which leaves it as it was: nothing to do. */
static void cork(int fd, bool on)
{
	int v = on;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, sizeof(v));
}

/* Send on what the corked host sockets hold: uncorking pushes it, corking
 * again holds the next drain's. */
static void push_host_sockets(struct net_slirp *s)
{
	for (unsigned i = 0; i < s->host_fds_len; i++) {
		cork(s->host_fds[i], false);
		cork(s->host_fds[i], true);
	}
	s->bytes_at_push = s->bytes_from_guest;
	s->pushes++;
}

/* The poll set is rebuilt from slirp_pollfds_fill every round; these two
 * only keep the count of host sockets the connection cap needs (and cork
 * each socket as it comes). */
static void cb_register_poll_fd(int fd, void *opaque)
{
	struct net_slirp *s = opaque;

	if (fd < 0)
		return;
	cork(fd, true);
	s->host_sockets++;
	if (s->host_fds_len == s->host_fds_cap) {
		unsigned cap = s->host_fds_cap ? 2 * s->host_fds_cap : 32;
		int *fds = realloc(s->host_fds, cap * sizeof(*fds));

		if (!fds)
			return;   /* counted but not remembered: the cap errs shut */
		s->host_fds = fds;
		s->host_fds_cap = cap;
	}
	s->host_fds[s->host_fds_len++] = fd;
}

static void cb_unregister_poll_fd(int fd, void *opaque)
{
	struct net_slirp *s = opaque;

	for (unsigned i = 0; i < s->host_fds_len; i++)
		if (s->host_fds[i] == fd) {
			s->host_fds[i] = s->host_fds[--s->host_fds_len];
			s->host_sockets--;
			return;
		}
	/* Not remembered: one of those a failed allocation could not record. */
	if (s->host_sockets > s->host_fds_len)
		s->host_sockets--;
}

static void cb_notify(void *opaque)
{
	net_slirp_wake(opaque);
}

static void cb_init_completed(Slirp *slirp, void *opaque)
{
	struct net_slirp *s = opaque;

	s->slirp = slirp;
}

static const SlirpCb net_slirp_callbacks = {
	.send_packet = cb_send_packet,
	.guest_error = cb_guest_error,
	.clock_get_ns = cb_clock_get_ns,
	.timer_new = cb_timer_new,
	.timer_free = cb_timer_free,
	.timer_mod = cb_timer_mod,
	.register_poll_fd = cb_register_poll_fd,
	.unregister_poll_fd = cb_unregister_poll_fd,
	.notify = cb_notify,
	.init_completed = cb_init_completed,
	.timer_new_opaque = cb_timer_new_opaque,
};

/* ---- timers ---- */

/* Milliseconds until the next armed timer, UINT32_MAX if none. */
static uint32_t timers_next_ms(const struct net_slirp *s)
{
	int64_t now_ms = monotonic_ns() / 1000000, next = UINT32_MAX;

	for (const struct net_slirp_timer *t = s->timers; t; t = t->next)
		if (t->armed && t->expire_ms - now_ms < next)
			next = t->expire_ms - now_ms;
	return next < 0 ? 0 : (uint32_t)next;
}

static void timers_run_expired(struct net_slirp *s)
{
	int64_t now_ms = monotonic_ns() / 1000000;

	/* Fire one at a time and rescan: a handler may re-arm or free timers,
	 * and a fired timer is disarmed first, so this ends. */
	for (;;) {
		struct net_slirp_timer *t = s->timers;

		while (t && !(t->armed && t->expire_ms <= now_ms))
			t = t->next;
		if (!t)
			return;
		t->armed = false;
		if (t->cb)
			t->cb(t->cb_opaque);
		else
			slirp_handle_timer(s->slirp, t->id, t->cb_opaque);
	}
}

/* ---- the poll thread ---- */

/* The pollfd array for one round; slirp refers to entries by index. */
struct poll_set {
	struct pollfd *fds;
	unsigned n, cap;
};

static int poll_set_add(int fd, int slirp_events, void *opaque)
{
	struct poll_set *set = opaque;
	short events = 0;

	if (set->n == set->cap) {
		unsigned cap = set->cap ? 2 * set->cap : 32;
		struct pollfd *fds = realloc(set->fds, cap * sizeof(*fds));

		if (!fds)
			return -1;   /* slirp skips a socket it could not add */
		set->fds = fds;
		set->cap = cap;
	}
	if (slirp_events & SLIRP_POLL_IN)
		events |= POLLIN;
	if (slirp_events & SLIRP_POLL_OUT)
		events |= POLLOUT;
	if (slirp_events & SLIRP_POLL_PRI)
		events |= POLLPRI;
	set->fds[set->n] = (struct pollfd){ .fd = fd, .events = events };
	return (int)set->n++;
}

static int poll_set_revents(int idx, void *opaque)
{
	struct poll_set *set = opaque;
	short r;
	int ev = 0;

	if (idx < 0 || (unsigned)idx >= set->n)
		return 0;
	r = set->fds[idx].revents;
	if (r & POLLIN)
		ev |= SLIRP_POLL_IN;
	if (r & POLLOUT)
		ev |= SLIRP_POLL_OUT;
	if (r & POLLPRI)
		ev |= SLIRP_POLL_PRI;
	if (r & POLLERR)
		ev |= SLIRP_POLL_ERR;
	if (r & POLLHUP)
		ev |= SLIRP_POLL_HUP;
	return ev;
}

static bool poll_set_any(const struct poll_set *set, short revents)
{
	for (unsigned i = 0; i < set->n; i++)
		if (set->fds[i].revents & revents)
			return true;
	return false;
}

static void *net_slirp_poll_thread(void *arg)
{
	struct net_slirp *s = arg;
	struct poll_set set = { 0 };

	on_poll_thread = true;
	pthread_mutex_lock(s->lock);
	while (!s->stopping) {
		uint32_t timeout = UINT32_MAX, next_timer;
		int rc;

		set.n = 0;
		if (poll_set_add(s->wake_fd, SLIRP_POLL_IN, &set) != 0)
			break;   /* out of memory for even one entry: give up on the network */
		slirp_pollfds_fill(s->slirp, &timeout, poll_set_add, &set);
		next_timer = timers_next_ms(s);
		if (next_timer < timeout)
			timeout = next_timer;
		/* Transmits wake this thread only for a SYN, FIN or RST: bytes
		 * a full host socket refused (slirp then wants POLLOUT) and
		 * corked bytes under the push size are seen within a round. */
		if (s->host_sockets && timeout > NET_SLIRP_ROUND_MS)
			timeout = NET_SLIRP_ROUND_MS;
		pthread_mutex_unlock(s->lock);

		rc = poll(set.fds, set.n, timeout > INT_MAX ? -1 : (int)timeout);
		if (set.fds[0].revents & POLLIN) {
			uint64_t count;

			if (read(s->wake_fd, &count, sizeof(count)) < 0) {
				/* EAGAIN: another round already took it */
			}
		}

		pthread_mutex_lock(s->lock);
		if (s->stopping)
			break;
		/* On a poll error slirp ignores the revents but still runs its TCP timers. */
		slirp_pollfds_poll(s->slirp, rc < 0, poll_set_revents, &set);
		if (s->bytes_from_guest != s->bytes_at_push || (rc > 0 && poll_set_any(&set, POLLOUT)))
			push_host_sockets(s);   /* a round's tail, or what slirp wrote on POLLOUT */
		timers_run_expired(s);
	}
	pthread_mutex_unlock(s->lock);
	free(set.fds);
	return NULL;
}

/* ---- the backend ---- */

int net_slirp_open(struct net_slirp *s, pthread_mutex_t *lock, net_slirp_deliver_fn deliver, void *opaque)
{
	SlirpConfig cfg = {
		.version = 4,
		/* Restricted mode would shut out the peer on the host's loopback
		 * too; net_slirp_transmit's gate restricts instead (net_slirp.h). */
		.restricted = 0,
		.in_enabled = true,
		.in6_enabled = false,
		.disable_host_loopback = false,  /* 10.0.2.2:PORT is the host's 127.0.0.1:PORT */
		.disable_dns = true,             /* no resolver on the host on the guest's behalf */
		.disable_dhcp = true,            /* the guest's address is on its command line */
	};
	Slirp *slirp;

	memset(s, 0, sizeof(*s));
	s->wake_fd = -1;
	s->lock = lock;
	s->deliver = deliver;
	s->opaque = opaque;
	if (inet_pton(AF_INET, NET_SLIRP_NETWORK, &cfg.vnetwork) != 1 ||
	    inet_pton(AF_INET, NET_SLIRP_NETMASK, &cfg.vnetmask) != 1 ||
	    inet_pton(AF_INET, NET_SLIRP_HOST, &cfg.vhost) != 1 ||
	    inet_pton(AF_INET, NET_SLIRP_GUEST, &cfg.vdhcp_start) != 1 ||
	    inet_pton(AF_INET, NET_SLIRP_NAMESERVER, &cfg.vnameserver) != 1)
		return diag_fail("slirp: bad built-in address in net_slirp.h -- fix the NET_SLIRP_* defines");

	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0)
		return diag_fail("eventfd for the slirp thread: %s -- raise the open-file limit (ulimit -n)",
				 strerror(errno));
	pthread_mutex_lock(lock);
	slirp = slirp_new(&cfg, &net_slirp_callbacks, s);
	pthread_mutex_unlock(lock);
	if (!slirp) {
		close(s->wake_fd);
		s->wake_fd = -1;
		return diag_fail("slirp_new failed (libslirp %s) -- use --net tap or the default sink backend",
				 slirp_version_string());
	}
	s->slirp = slirp;
	return 0;
}

void net_slirp_allow(struct net_slirp *s, uint32_t ip, uint16_t port)
{
	s->peer_ip = ip;
	s->peer_port = port;
}

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)be16_at(p) << 16 | be16_at(p + 2);
}

/* The gate: NULL if slirp may have this Ethernet frame, or why not; a TCP
 * segment's flags in *tcp_flags (0 for ARP).  It reads only headers that
 * lie inside the frame. */
static const char *gate_refuses(struct net_slirp *s, const uint8_t *f, size_t len, bool *over_cap,
				uint8_t *tcp_flags)
{
	const uint8_t *ip, *tcp;
	unsigned ihl;
	uint16_t type = be16_at(f + 12);

	*over_cap = false;
	*tcp_flags = 0;
	if (type == 0x0806)
		return NULL;   /* ARP: slirp answers for its own addresses, no socket */
	if (type != 0x0800)
		return "not IPv4 or ARP";
	ip = f + NET_SLIRP_ETH_HLEN;
	ihl = (ip[0] & 15u) * 4;
	if (len < NET_SLIRP_ETH_HLEN + 20 || ip[0] >> 4 != 4 || ihl < 20 || len < NET_SLIRP_ETH_HLEN + ihl)
		return "a truncated or malformed IPv4 header";
	/* A fragment's ports are not in it, and reassembly could rewrite them. */
	if (be16_at(ip + 6) & 0x3fff)
		return "an IP fragment";
	if (ip[9] != 6)
		return "IPv4 that is not TCP";
	if (len < NET_SLIRP_ETH_HLEN + ihl + 20)
		return "a truncated TCP header";
	tcp = ip + ihl;
	*tcp_flags = tcp[13];
	if (!s->peer_ip || be32_at(ip + 16) != s->peer_ip || be16_at(tcp + 2) != s->peer_port)
		return "TCP to an address or port other than --peer";
	/* SYN without ACK is what makes slirp open a host socket. */
	if ((tcp[13] & 0x12) == 0x02 && s->host_sockets >= NET_SLIRP_MAX_CONNECTIONS) {
		*over_cap = true;
		return "a new connection beyond the cap";
	}
	return NULL;
}

int net_slirp_start(struct net_slirp *s)
{
	int err = pthread_create(&s->thread, NULL, net_slirp_poll_thread, s);

	if (err)
		return diag_fail("starting the slirp poll thread: %s -- raise the process limit (ulimit -u)",
				 strerror(err));
	s->thread_running = true;
	pin_thread(s->thread, 1);   /* the host's side, with the device thread: CPU 0 is the guest's */
	return 0;
}

int net_slirp_transmit(struct net_slirp *s, const struct vq_chain *chain)
{
	const size_t room = sizeof(s->gather);
	uint64_t total = 0;
	size_t len = 0;
	const char *why;
	bool over_cap;
	uint8_t flags;
	unsigned sockets_before = s->host_sockets;

	for (unsigned i = 0; i < chain->count; i++) {
		const struct vq_buf *b = &chain->buf[i];

		if (b->device_writes)
			continue;
		total += b->len;
		if (total > room)
			continue;   /* keep adding up, for the error line */
		memcpy(s->gather + len, b->host, b->len);
		len += b->len;
	}
	if (total > room) {
		net_slirp_error(s, "slirp: dropped a chain of %llu bytes, more than a %u-byte header and a %u-byte frame",
				(unsigned long long)total, NET_SLIRP_HDR_LEN, NET_SLIRP_FRAME_MAX);
		return -1;
	}
	if (len < NET_SLIRP_HDR_LEN + NET_SLIRP_ETH_HLEN) {
		net_slirp_error(s, "slirp: dropped a chain of %zu bytes, too short for a %u-byte header and an Ethernet header",
				len, NET_SLIRP_HDR_LEN);
		return -1;
	}
	why = gate_refuses(s, s->gather + NET_SLIRP_HDR_LEN, len - NET_SLIRP_HDR_LEN, &over_cap, &flags);
	if (why) {
		s->frames_refused++;
		s->connections_refused += over_cap;
		net_slirp_error(s, "slirp: dropped a frame from the guest: %s (only --peer %u.%u.%u.%u:%u, at most %u connections)",
				why, s->peer_ip >> 24, (s->peer_ip >> 16) & 255, (s->peer_ip >> 8) & 255, s->peer_ip & 255,
				s->peer_port, NET_SLIRP_MAX_CONNECTIONS);
		return -1;
	}
	/* No offloads are negotiated, so the header carries nothing we need. */
	slirp_input(s->slirp, s->gather + NET_SLIRP_HDR_LEN, (int)(len - NET_SLIRP_HDR_LEN));
	s->frames_from_guest++;
	s->bytes_from_guest += len - NET_SLIRP_HDR_LEN;
	s->wake_pending |= (flags & (TCP_SYN_FLAG | TCP_FIN_FLAG | TCP_RST_FLAG)) || s->host_sockets != sockets_before;
	return 0;
}

void net_slirp_flush(struct net_slirp *s)
{
	if (s->bytes_from_guest - s->bytes_at_push >= NET_SLIRP_PUSH_BYTES)
		push_host_sockets(s);
	/* A SYN, FIN or RST may open, shut or close a host socket: the poll
	 * thread must rebuild its set now, not at its next timeout. */
	if (s->wake_pending) {
		s->wake_pending = false;
		net_slirp_wake(s);
	}
}

void net_slirp_stop(struct net_slirp *s)
{
	if (!s->thread_running)
		return;
	pthread_mutex_lock(s->lock);
	s->stopping = true;
	pthread_mutex_unlock(s->lock);
	net_slirp_wake(s);
	pthread_join(s->thread, NULL);
	s->thread_running = false;
}

void net_slirp_close(struct net_slirp *s)
{
	/* Never opened (a run that failed before the backend): the struct is
	 * still zeroed, and its wake_fd of 0 is stdin, not ours to close. */
	if (!s->lock)
		return;
	if (s->slirp) {
		pthread_mutex_lock(s->lock);
		slirp_cleanup(s->slirp);   /* frees its timers through timer_free */
		pthread_mutex_unlock(s->lock);
		s->slirp = NULL;
	}
	while (s->timers) {
		struct net_slirp_timer *t = s->timers;

		s->timers = t->next;
		free(t);
	}
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	s->wake_fd = -1;
	free(s->host_fds);
	s->host_fds = NULL;
	s->host_fds_cap = s->host_fds_len = s->host_sockets = 0;
}

/* ---- the backend table (net_backend.h) ---- */

static int slirp_open(void *be, const struct net_config *cfg, const struct net_backend_link *link)
{
	if (net_slirp_open(be, link->lock, link->deliver, link->opaque) < 0)
		return -1;
	/* The only host destination the guest may reach (--peer). */
	net_slirp_allow(be, cfg->peer_ip, cfg->peer_port);
	return 0;
}

static int slirp_start(void *be)
{
	return net_slirp_start(be);
}

static void slirp_stop(void *be)
{
	net_slirp_stop(be);
}

static void slirp_close(void *be)
{
	net_slirp_close(be);
}

static int slirp_transmit(void *be, const struct vq_chain *chain, uint64_t negotiated)
{
	(void)negotiated;   /* no offloads are offered with slirp: the header carries nothing */
	return net_slirp_transmit(be, chain);
}

static void slirp_flush(void *be)
{
	net_slirp_flush(be);
}

/* slirp does not check frames either (the receiver does).  The gate lets
 * no raw frame through (its ethertype is neither IPv4 nor ARP), so no raw
 * payload ever reaches the outside: 0. */
static void slirp_tx_totals(const void *be, struct net_backend_tx_totals *out)
{
	const struct net_slirp *s = be;

	out->frames = s->frames_from_guest;
	out->bad = s->errors;
	out->payload_bytes = 0;
	out->verdict = s->errors ? s->first_error : NULL;
}

static void slirp_report_stats(const void *be, struct stats *st)
{
	const struct net_slirp *s = be;

	stats_u64(st, "net_slirp_pushes", s->pushes);
}

_Static_assert(sizeof(struct net_slirp) <= NET_BACKEND_STATE_BYTES, "struct net_slirp outgrew the device's room for it");

const struct net_backend_ops net_slirp_ops = {
	.name = "user",
	.open = slirp_open,
	.start = slirp_start,
	.stop = slirp_stop,
	.close = slirp_close,
	.transmit = slirp_transmit,
	.flush = slirp_flush,
	.tx_totals = slirp_tx_totals,
	.report_stats = slirp_report_stats,
};
