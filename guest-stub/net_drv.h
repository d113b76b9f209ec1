/*
 * net_drv.h -- the guest's virtio-net transmit side, as the workloads use it.
 */
#ifndef NET_DRV_H
#define NET_DRV_H

#include "cmdline.h"
#include "virtio_drv.h"

#include <linux/virtio_net.h>

#define NET_HDR sizeof(struct virtio_net_hdr_v1)

struct net_drv {
	struct virtio_dev dev;
	struct gvq rx, tx;
	struct gvq ctrl;            /* lkvm.coalesce: the control queue (index 2) */
	uint8_t *ctrl_buf;          /* its one command's bytes, in our RAM */
	bool tx_irq_on;             /* lkvm.coalesce: TX interrupts stay on for the run */
	uint8_t mac[6];
};

/* Probe the device at `w`, negotiate what `p` asks for (event-idx or
 * event-desc, indirect, the packed layout, with lkvm.coalesce the control
 * queue and notification coalescing, set and read back), set up both queues (receive
 * ring of `rx_ring` slots) with the TX policy and the TX queue's price of
 * an indirect table (lkvm.indirect_cost_ns, lkvm.indirect_cold_lines).
 * 0 on success. */
int net_drv_init(struct net_drv *n, const struct mmio_window *w, const struct params *p, uint16_t rx_ring);
/* Split header+frame in `buf` into `nseg` descriptors: [hdr+frame] for 1,
 * else [hdr] then the frame in nseg-1 nearly equal parts (2008's layout). */
unsigned net_drv_segments(struct gvq_seg *seg, unsigned nseg, uint8_t *buf, uint32_t frame_len);
/* Wait until the host used a transmit buffer: spin, or sleep in hlt with
 * the TX interrupt on.  Spinning looks at the status register (an exit)
 * only every 2^22 turns. */
void net_drv_wait_tx(struct net_drv *n, int halt);
/* Copy the TX queue's counters (kicks, notifies, ring full, buffers,
 * descriptors, final threshold, indirect tables and their ticks) into
 * guest_report for the launcher. */
void net_drv_report_tx(const struct net_drv *n);
/* A host that found our ring broken stops using it: don't wait forever. */
void net_drv_give_up_if_broken(struct net_drv *n, const char *who);

#endif
