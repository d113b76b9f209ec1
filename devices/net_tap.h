/*
 * net_tap.h -- a real TAP device as the net backend: each transmitted chain
 * (virtio-net header + frame) is written to /dev/net/tun with one writev, the
 * frame straight from guest RAM.  The header tun gets is the host's own copy:
 * zero unless offloads were negotiated, and then only the negotiated fields,
 * checked (tun would act on any header, negotiated or not).  The device is
 * opened before privileges are dropped.
 *
 * It is the one backend with a receive side the device polls: net_tap_ops
 * (net_backend.h) names the tap's descriptor (rx_fd) and reads one frame,
 * header first, into the iovec net_rx.c laid over the guest's receive
 * buffers (receive) -- one readv, straight into guest RAM.
 */
#ifndef NET_TAP_H
#define NET_TAP_H

#include <stdint.h>

#include "net_backend.h"
#include "virtqueue.h"

struct net_tap {
	int fd;
	char ifname[16];
	uint64_t frames, bytes;     /* written, bytes without the virtio-net header */
	uint64_t errors;            /* frames dropped: failed writes and refused headers */
	uint64_t hdr_refused;       /* of those, headers asking for an offload not negotiated or malformed */
	char first_error[200];
};

/* Open (or attach to) tap `ifname` ("" lets the kernel pick a name); if
 * `host_ip` is not 0, give the interface that address (host order, with
 * `prefix`) and bring it up, as lguest's --tunnet=IP did.  -1 with diag set. */
int net_tap_open(struct net_tap *tap, const char *ifname, uint32_t host_ip, uint8_t prefix);
/* 0 if written, -1 if the header was refused or the write failed (the
 * frame is dropped, counted, the first reason kept; the ring is fine).
 * `negotiated` is the feature set the driver and device agreed on. */
int net_tap_transmit(struct net_tap *tap, const struct vq_chain *chain, uint64_t negotiated);
void net_tap_close(struct net_tap *tap);

/* Its backend table (net_backend.h) takes a struct net_tap as its state. */

#endif
