/*
 * net_drv.h -- the guest's virtio-net transmit side, as the workloads use it.
 */
#ifndef NET_DRV_H
#define NET_DRV_H

#include "cmdline.h"
#include "virtio_drv.h"

struct net_drv {
	struct virtio_dev dev;
	struct gvq rx, tx;
	uint8_t mac[6];
};

/* Probe the device at `w`, negotiate what `p` asks for (event-idx,
 * indirect), set up both queues with the TX policy.  0 on success. */
int net_drv_init(struct net_drv *n, const struct mmio_window *w, const struct params *p);

#endif
