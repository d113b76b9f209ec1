/*
 * net_ctrl.c -- the net device's control virtqueue (virtio 1.3, 5.1.6.5,
 * "Control Virtqueue"), offered with VIRTIO_NET_F_CTRL_VQ in the threaded
 * model, where notification coalescing (net_coal.h) is its one class.
 *
 * One command: the driver queues a chain whose readable part is
 *   u8 class; u8 command; command-specific-data[]
 * and whose writable part takes
 *   u8 ack; command-specific-result[]
 * and writes QueueNotify 2, which reaches net_ctrl_on_notify on the vCPU
 * thread (the queue has no ioeventfd: commands are rare).  Each chain is
 * read out of guest memory through its resolved buffers, answered
 * VIRTIO_NET_OK or VIRTIO_NET_ERR, and returned with the bytes written.
 * A command of a class the device has no feature for, or that does not
 * fit, is answered VIRTIO_NET_ERR and changes nothing; a chain without a
 * writable byte cannot be answered at all and is handed back empty
 * (counted).  Bounded work: the ring walker caps a chain at
 * NET_CTRL_CHAIN_MAX bytes, and one notify answers at most a ring's worth.
 */
#include "net.h"

#include <linux/virtio_net.h>
#include <string.h>

#include "virtio_net_coal.h"

#define NET_CTRL_CHAIN_MAX 4096u
#define NET_CTRL_DATA_MAX  64u     /* the longest command this device knows is 10 bytes */

/* The chain's readable bytes into `out` (at most `cap`); how many there were. */
static uint64_t gather(const struct vq_chain *c, uint8_t *out, uint32_t cap)
{
	uint64_t at = 0;

	for (unsigned i = 0; i < c->count && !c->buf[i].device_writes; i++) {
		const struct vq_buf *b = &c->buf[i];

		if (at < cap)
			memcpy(out + at, b->host, at + b->len <= cap ? b->len : cap - at);
		at += b->len;
	}
	return at;
}

/* `len` bytes into the chain's writable buffers, from their start; how many fit. */
static uint32_t scatter(const struct vq_chain *c, const uint8_t *src, uint32_t len)
{
	uint32_t done = 0;

	for (unsigned i = 0; i < c->count && done < len; i++) {
		const struct vq_buf *b = &c->buf[i];
		uint32_t n;

		if (!b->device_writes)
			continue;
		n = b->len < len - done ? b->len : len - done;
		memcpy(b->host, src + done, n);
		done += n;
	}
	return done;
}

static const bool *enabled_queues(const struct net *net, bool out[NET_COAL_QUEUES])
{
	for (unsigned q = 0; q < NET_COAL_QUEUES; q++)
		out[q] = net->mmio.vqs[q].ready;
	return out;
}

/* One command; returns the bytes written into the chain. */
static uint32_t execute(struct net *net, const struct vq_chain *c)
{
	uint8_t cmd[NET_CTRL_DATA_MAX], reply[1 + 8] = { VIRTIO_NET_ERR };
	uint64_t len = gather(c, cmd, sizeof(cmd));
	uint32_t result_len = 0;
	unsigned changed = 0;
	bool enabled[NET_COAL_QUEUES];

	if (!c->in_len) {
		net->ctrl_commands_bad++;
		return 0;
	}
	if (len >= 2 && len <= sizeof(cmd) && cmd[0] == VIRTIO_NET_CTRL_NOTF_COAL)
		reply[0] = net_coal_command(&net->coal, cmd[1], cmd + 2, (uint32_t)len - 2, net->mmio.driver_features,
					    enabled_queues(net, enabled), reply + 1, &result_len, &changed);
	else
		net->ctrl_commands_bad++;
	for (unsigned q = 0; q < NET_COAL_QUEUES; q++)
		if (changed >> q & 1)
			net_coal_changed(net, q);
	return scatter(c, reply, 1 + result_len);
}

void net_ctrl_on_notify(struct net *net)
{
	struct vq *vq = &net->mmio.vqs[NET_CTRL];
	unsigned n = 0;
	int rc = 0;

	vq->max_chain_bytes = NET_CTRL_CHAIN_MAX;
	while (n < vq->num && (rc = vq_pop_avail(vq, &net->ctrl_chain)) > 0) {
		vq_push_used(vq, net->ctrl_chain.head, execute(net, &net->ctrl_chain));
		n++;
	}
	if (rc < 0)
		virtio_mmio_fail(&net->mmio, vq->error);
	/* Commands are rare: always let the driver notify (with event idx,
	 * move avail_event up to what was taken). */
	vq_enable_notify_and_recheck(vq);
	if (n && vq_should_interrupt(vq))
		virtio_mmio_signal_used(&net->mmio);
}
