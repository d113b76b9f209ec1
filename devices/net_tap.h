/*
 * net_tap.h -- a real TAP device as the net backend: each transmitted chain
 * (virtio-net header + frame) is written to /dev/net/tun with one writev,
 * exactly as the guest laid it out (IFF_VNET_HDR, no offloads negotiated).
 * The device is opened before privileges are dropped.
 */
#ifndef NET_TAP_H
#define NET_TAP_H

#include <stdint.h>

#include "virtqueue.h"

struct net_tap {
	int fd;
	char ifname[16];
	uint64_t frames, bytes;     /* written, bytes without the virtio-net header */
	uint64_t errors;
	char first_error[200];
};

/* Open (or attach to) tap `ifname` ("" lets the kernel pick a name); if
 * `host_ip` is not 0, give the interface that address (host order, with
 * `prefix`) and bring it up, as lguest's --tunnet=IP did.  -1 with diag set. */
int net_tap_open(struct net_tap *tap, const char *ifname, uint32_t host_ip, uint8_t prefix);
/* 0 if written, -1 if the write failed (counted, first reason kept). */
int net_tap_transmit(struct net_tap *tap, const struct vq_chain *chain);
void net_tap_close(struct net_tap *tap);

#endif
