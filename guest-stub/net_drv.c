/*
 * net_drv.c -- bring up virtio-net for transmitting.
 *
 * Features are asked for only when the run wants them: EVENT_IDX only for
 * the event-idx and event-desc policies (otherwise the host's NO_NOTIFY
 * flag, or the packed ring's DISABLE, is the signal the seed's algorithm
 * reads), INDIRECT_DESC only for an indirect policy, RING_PACKED only for
 * lkvm.layout=packed -- and then every queue of the card is packed.
 * Interrupts start disabled on both queues; a workload turns them on only
 * to sleep.  The receive queue is only used by the tcp workload.
 *
 * With lkvm.coalesce=USECS:PACKETS the driver is the other kind, the one
 * virtio 1.3's notification coalescing is for (Linux's TX NAPI, `ethtool
 * -C tx-usecs tx-frames`): it negotiates VIRTIO_NET_F_CTRL_VQ, NOTF_COAL
 * and VQ_NOTF_COAL, sends VIRTIO_NET_CTRL_NOTF_COAL_TX_SET on the control
 * queue, reads the transmit queue's parameters back with VQ_GET, and keeps
 * its TX interrupts on for the whole run, so that the device's coalescing,
 * not the driver's suppression, decides how many it gets.  (With event-idx
 * "on" is used_event as of the last wait: the device is asked again at
 * each one.)
 */
#include "net_drv.h"

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_net.h>

#include "virtio_net_coal.h"

#include "io.h"
#include "lguest_kvm_abi.h"
#include "lib.h"
#include "trace.h"
#include "workloads.h"

/* Each event policy reads the mark of one layout: avail_event is a split
 * ring's, the desc event a packed ring's. */
static bool policy_fits_layout(enum notify_kind kind, enum ring_layout layout)
{
	if (kind == NOTIFY_EVENT_IDX && layout != LAYOUT_SPLIT) {
		printf("guest: policy event-idx needs the split ring (packed has event-desc)\n");
		return false;
	}
	if (kind == NOTIFY_EVENT_DESC && layout != LAYOUT_PACKED) {
		printf("guest: policy event-desc needs the packed ring (lkvm.layout=packed)\n");
		return false;
	}
	return true;
}

/* One VIRTIO_NET_CTRL_NOTF_COAL command, waited for by spinning: its
 * ack, and `rlen` bytes of result into `result`.  -1 if the device said
 * VIRTIO_NET_ERR (the result is then ignored, as 5.1.6.5.9 has it). */
static int ctrl_command(struct net_drv *n, uint8_t cmd, const void *data, uint32_t len, void *result, uint32_t rlen)
{
	uint8_t *out = n->ctrl_buf, *ack = n->ctrl_buf + 64;
	struct gvq_seg seg[2] = {
		{ .addr = out, .len = 2 + len },
		{ .addr = ack, .len = 1 + rlen, .device_writes = true },
	};
	uint64_t spins = 0;
	uint32_t used_len;

	out[0] = VIRTIO_NET_CTRL_NOTF_COAL;
	out[1] = cmd;
	memcpy(out + 2, data, len);
	ack[0] = VIRTIO_NET_ERR;
	if (!gvq_add(&n->ctrl, seg, 2, out, false))
		return -1;
	gvq_kick(&n->ctrl);
	while (!gvq_has_used(&n->ctrl))
		if (!(++spins & ((1u << 22) - 1)))
			net_drv_give_up_if_broken(n, "net control");
		else
			cpu_relax();
	gvq_get_used(&n->ctrl, &used_len);
	if (used_len < 1 + rlen || ack[0] != VIRTIO_NET_OK)
		return -1;
	memcpy(result, ack + 1, rlen);
	return 0;
}

/* TX_SET, then VQ_GET of the transmit queue to see it took. */
static int set_coalescing(struct net_drv *n, const struct params *p)
{
	struct virtio_net_ctrl_coal set = { .max_packets = p->coal_packets, .max_usecs = p->coal_usecs }, got;
	struct virtio_net_ctrl_coal_vq which = { .vqn = 1 };

	if (ctrl_command(n, VIRTIO_NET_CTRL_NOTF_COAL_TX_SET, &set, sizeof(set), 0, 0) < 0 ||
	    ctrl_command(n, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET, &which, 4, &got, sizeof(got)) < 0) {
		printf("guest: the device refused notification coalescing\n");
		return -1;
	}
	if (got.max_packets != set.max_packets || got.max_usecs != set.max_usecs) {
		printf("guest: coalescing read back as %u us / %u packets, not %u / %u\n", got.max_usecs,
		       got.max_packets, set.max_usecs, set.max_packets);
		return -1;
	}
	printf("guest: TX notification coalescing: %u us, %u packets\n", set.max_usecs, set.max_packets);
	return 0;
}

int net_drv_init(struct net_drv *n, const struct mmio_window *w, const struct params *p, uint16_t rx_ring)
{
	uint64_t want = 1ull << VIRTIO_NET_F_MAC;
	struct notify_policy pol;

	if (!notify_policy_parse(&pol, p->policy, strlen(p->policy), (uint16_t)p->ring)) {
		printf("guest: unknown notification policy\n");
		return -1;
	}
	if (!policy_fits_layout(pol.kind, p->layout))
		return -1;
	if (pol.kind == NOTIFY_EVENT_IDX || pol.kind == NOTIFY_EVENT_DESC)
		want |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	if (p->layout == LAYOUT_PACKED)
		want |= 1ull << VIRTIO_F_RING_PACKED;
	if (p->indirect != INDIRECT_NEVER)
		want |= 1ull << VIRTIO_RING_F_INDIRECT_DESC;
	if (p->tso)   /* the spec ties HOST_TSO4 to CSUM */
		want |= 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_HOST_TSO4;
	if (p->coalesce)   /* both need the control queue */
		want |= 1ull << VIRTIO_NET_F_CTRL_VQ | 1ull << VIRTIO_NET_F_NOTF_COAL | 1ull << VIRTIO_NET_F_VQ_NOTF_COAL;
	if (virtio_drv_probe(&n->dev, w->base, w->irq, VIRTIO_ID_NET, want) < 0) {
		printf("guest: virtio-net at 0x%lx did not accept our features\n", w->base);
		return -1;
	}
	if ((n->dev.features & want) != want) {
		printf("guest: virtio-net lacks a feature this run needs (wanted 0x%lx, got 0x%lx)\n",
		       want, n->dev.features);
		virtio_drv_fail(&n->dev);
		return -1;
	}
	for (int i = 0; i < 6; i++)
		n->mac[i] = mmio_read8(w->base + VIRTIO_MMIO_CONFIG + i);
	if (gvq_setup(&n->rx, &n->dev, 0, rx_ring) < 0 || gvq_setup(&n->tx, &n->dev, 1, (uint16_t)p->ring) < 0) {
		printf("guest: virtio-net queue setup failed (ring %u)\n", p->ring);
		virtio_drv_fail(&n->dev);
		return -1;
	}
	n->tx.policy = pol;
	/* Only the TX queue builds tables; the cold buffer only if it will. */
	gvq_set_itable_cost(&n->tx, gvq_ns_to_ticks(p->indirect_cost_ns, p->tsc_khz),
			    p->indirect == INDIRECT_NEVER ? 0 : p->indirect_cold_lines, LKVM_INDIRECT_COLD_BYTES);
	if (p->coalesce && gvq_setup(&n->ctrl, &n->dev, 2, 8) < 0) {
		printf("guest: virtio-net control queue setup failed\n");
		virtio_drv_fail(&n->dev);
		return -1;
	}
	gvq_disable_interrupts(&n->tx);
	gvq_disable_interrupts(&n->rx);
	virtio_drv_ready(&n->dev);
	if (p->coalesce) {
		n->ctrl_buf = alloc_pages(4096);
		if (set_coalescing(n, p) < 0) {
			virtio_drv_fail(&n->dev);
			return -1;
		}
		n->tx_irq_on = true;
		gvq_enable_interrupts(&n->tx);
	}
	/* The timeline follows this card's rings, not the console's; an
	 * untraced queue's kicks skip even the event's arguments. */
	gtrace_start(p->trace_events);
	n->tx.traced = n->rx.traced = gtrace_buf != 0;
	return 0;
}

unsigned net_drv_segments(struct gvq_seg *seg, unsigned nseg, uint8_t *buf, uint32_t frame_len)
{
	uint32_t off = 0, part;

	if (nseg == 1) {
		seg[0] = (struct gvq_seg){ .addr = buf, .len = NET_HDR + frame_len };
		return 1;
	}
	seg[0] = (struct gvq_seg){ .addr = buf, .len = NET_HDR };
	part = frame_len / (nseg - 1);        /* the last part takes the remainder */
	for (unsigned k = 1; k < nseg; k++) {
		uint32_t len = k + 1 < nseg ? part : frame_len - off;

		seg[k] = (struct gvq_seg){ .addr = buf + NET_HDR + off, .len = len };
		off += len;
	}
	return nseg;
}

void net_drv_report_tx(const struct net_drv *n)
{
	const struct gvq *q = &n->tx;

	guest_report.tx_kicks = q->kicks;
	guest_report.tx_notifies = q->notifies;
	guest_report.tx_notifies_suppressed = q->suppressed;
	guest_report.tx_notifies_forced = q->forced;
	guest_report.tx_ring_full = q->ring_full;
	guest_report.tx_full_ring_reads_zero = q->full_reads_zero;
	guest_report.tx_threshold_final = q->policy.threshold;
	guest_report.tx_buffers_direct = q->bufs_direct;
	guest_report.tx_buffers_indirect = q->bufs_indirect;
	guest_report.tx_descriptors_used = q->descs_used;
	guest_report.tx_indirect_tables = q->itables_built;
	guest_report.tx_indirect_build_ticks = q->itable_ticks;
	guest_report.tx_indirect_cost_ticks = q->icost.ticks;
}

void net_drv_give_up_if_broken(struct net_drv *n, const char *who)
{
	if (virtio_drv_needs_reset(&n->dev)) {
		printf("%s: the device needs a reset -- stopping\n", who);
		guest_exit(LKVM_STATUS_FAILED);
	}
}

void net_drv_wait_tx(struct net_drv *n, int halt)
{
	uint64_t spins = 0, irqs = gtrace_wait_start(n->tx.index, halt), t0 = rdtsc();

	if (!halt) {
		while (!gvq_has_used(&n->tx))
			if (!(++spins & ((1u << 22) - 1)))
				net_drv_give_up_if_broken(n, "net");
			else
				cpu_relax();
		guest_report.tx_wait_ticks += rdtsc() - t0;
		gtrace_wait_end(n->tx.index, irqs);
		return;
	}
	while (!gvq_has_used(&n->tx)) {
		uint64_t seen = irq_seq;

		/* Acknowledge before sleeping, not after: a device that holds its
		 * line while InterruptStatus is set (QEMU; virtio 1.2 4.2.3.4)
		 * makes no new edge for our edge-triggered route until then. */
		virtio_drv_ack_interrupt(&n->dev);
		if (gvq_enable_interrupts(&n->tx)) {
			guest_report.tx_waits_halted++;
			halt_until_irq(seen);
		}
		net_drv_give_up_if_broken(n, "net");
	}
	if (!n->tx_irq_on)
		gvq_disable_interrupts(&n->tx);
	guest_report.tx_wait_ticks += rdtsc() - t0;
	gtrace_wait_end(n->tx.index, irqs);
}
