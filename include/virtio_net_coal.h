/*
 * virtio_net_coal.h -- what virtio 1.3 adds for notification coalescing
 * that Debian 12's <linux/virtio_net.h> (Linux 6.1) does not have yet.
 *
 * Linux 6.1's header has VIRTIO_NET_F_NOTF_COAL (53), the class
 * VIRTIO_NET_CTRL_NOTF_COAL (6) and its TX_SET (0) and RX_SET (1); the
 * per-virtqueue commands came with VIRTIO_NET_F_VQ_NOTF_COAL in Linux 6.5.
 * The numbers and layouts are the spec's: virtio 1.3, 5.1.3 "Feature bits"
 * (VIRTIO_NET_F_VQ_NOTF_COAL (52)) and 5.1.6.5.9 "Notifications
 * Coalescing" (struct virtio_net_ctrl_coal, struct virtio_net_ctrl_coal_vq,
 * VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET 2, VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET 3).
 * Included after <linux/virtio_net.h>; a newer header's definitions win.
 */
#ifndef VIRTIO_NET_COAL_H
#define VIRTIO_NET_COAL_H

#include <linux/types.h>
#include <linux/virtio_net.h>

#ifndef VIRTIO_NET_F_VQ_NOTF_COAL
#define VIRTIO_NET_F_VQ_NOTF_COAL 52   /* Device supports virtqueue notification coalescing */

#define VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET 2
#define VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET 3

struct virtio_net_ctrl_coal {
	__le32 max_packets;
	__le32 max_usecs;
};

struct virtio_net_ctrl_coal_vq {
	__le16 vqn;        /* the spec's vq_index */
	__le16 reserved;   /* ignored by the device */
	struct virtio_net_ctrl_coal coal;
};
#endif

#endif
