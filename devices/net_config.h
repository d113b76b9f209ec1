/*
 * net_config.h -- what the command line decides about the net device.
 *
 * Apart from net.h so that the launcher's option parser (launcher/options.h)
 * and everything that includes it -- table.c, receive.c, send.c -- get the
 * device's settings without the device: net.h pulls in the backends and,
 * through net_slirp.h, libslirp's and glib's headers.
 */
#ifndef NET_CONFIG_H
#define NET_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

enum net_model { NET_MODEL_THREADED, NET_MODEL_LGUEST };
enum net_backend { NET_BACKEND_SINK, NET_BACKEND_TAP, NET_BACKEND_USER };
enum host_timer { HOST_TIMER_REARM, HOST_TIMER_ONESHOT };

struct net_config {
	enum net_model model;
	enum host_timer host_timer;
	uint32_t timeout_us;      /* starting value; fixed unless adaptive */
	bool adaptive_timeout;    /* 2008's +10 / -1 us rule */
	/* --timer-wait spin, lguest model: the waker meets each deadline by
	 * watching the clock instead of sleeping on the timerfd (net.c). */
	bool timer_spin;
	/* --host-poll-us: the device thread polls the ring this long after a
	 * drain instead of 2008's timer (0 and not adaptive: the timer). */
	uint32_t host_poll_us;
	bool host_poll_adaptive;  /* KVM halt-polling's grow/shrink (host_poll.h) */
	uint8_t mac[6];
	enum net_backend backend;
	char tap_name[16];        /* --net tap:NAME ("" = the kernel picks) */
	uint32_t host_ip;         /* --host-ip: configure the tap with it (0: leave it alone) */
	uint8_t host_prefix;
	bool offloads;            /* offer CSUM + HOST_TSO4 (the tap passes only what was negotiated) */
	uint32_t peer_ip;         /* --net user: the one TCP destination the guest may reach (host order) */
	uint16_t peer_port;
};

#endif
