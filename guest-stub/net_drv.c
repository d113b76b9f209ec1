/*
 * net_drv.c -- bring up virtio-net for transmitting.
 *
 * Features are asked for only when the run wants them: EVENT_IDX only for
 * the event-idx policy (otherwise the host's NO_NOTIFY flag is the signal
 * the seed's algorithm reads), INDIRECT_DESC only for an indirect policy.
 * TX interrupts start disabled; the workload turns them on only to sleep.
 */
#include "net_drv.h"

#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_net.h>

#include "io.h"
#include "lib.h"

int net_drv_init(struct net_drv *n, const struct mmio_window *w, const struct params *p)
{
	uint64_t want = 1ull << VIRTIO_NET_F_MAC;
	struct notify_policy pol;

	if (!notify_policy_parse(&pol, p->policy, strlen(p->policy), (uint16_t)p->ring)) {
		printf("guest: unknown notification policy\n");
		return -1;
	}
	if (pol.kind == NOTIFY_EVENT_IDX)
		want |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	if (p->indirect != INDIRECT_NEVER)
		want |= 1ull << VIRTIO_RING_F_INDIRECT_DESC;
	if (virtio_drv_probe(&n->dev, w->base, w->irq, VIRTIO_ID_NET, want) < 0) {
		printf("guest: virtio-net at 0x%lx did not accept our features\n", w->base);
		return -1;
	}
	if ((n->dev.features & want) != want) {
		printf("guest: virtio-net lacks a feature this run needs (wanted 0x%lx, got 0x%lx)\n",
		       want, n->dev.features);
		return -1;
	}
	for (int i = 0; i < 6; i++)
		n->mac[i] = mmio_read8(w->base + VIRTIO_MMIO_CONFIG + i);
	if (gvq_setup(&n->rx, &n->dev, 0, 16) < 0 || gvq_setup(&n->tx, &n->dev, 1, (uint16_t)p->ring) < 0) {
		printf("guest: virtio-net queue setup failed (ring %u)\n", p->ring);
		return -1;
	}
	n->tx.policy = pol;
	gvq_disable_interrupts(&n->tx);
	virtio_drv_ready(&n->dev);
	return 0;
}
