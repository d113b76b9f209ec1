/*
 * net_coal.c -- virtio 1.3's notification coalescing rules (net_coal.h),
 * kept pure so that each normative rule has a unit test of its own.
 *
 * Data flow: a command from the control queue -> net_coal_command checks
 * it against the negotiated features and the enabled queues, changes the
 * parameters or answers VIRTIO_NET_ERR -> net.c asks net_coal_check at once
 * (a change may meet the conditions).  A used buffer -> net_coal_packet
 * counts it -> "met" -> net.c notifies unless the driver suppressed it.
 * The time limit: net.c arms a timer for net_coal_deadline and asks
 * net_coal_check when it fires.
 */
#include "net_coal.h"

#include <endian.h>
#include <linux/virtio_net.h>
#include <string.h>

#include "virtio_net_coal.h"

void net_coal_reset(struct net_coal *c)
{
	uint64_t commands = c->commands, errors = c->errors;   /* counters outlive a reset */

	memset(c, 0, sizeof(*c));
	c->commands = commands;
	c->errors = errors;
}

void net_coal_queue_enabled(struct net_coal *c, unsigned q)
{
	if (q >= NET_COAL_QUEUES)
		return;
	c->q[q] = (struct net_coal_queue){ .p = c->class_set[q] };
}

static bool every_packet(const struct net_coal_params *p)
{
	return !p->max_packets || !p->max_usecs;
}

bool net_coal_packet(struct net_coal *c, unsigned q, uint64_t now_ns)
{
	struct net_coal_queue *cq = &c->q[q];

	/* R2, noticed late: the time limit passed before this packet came
	 * (the caller's timer or spin saw it only now).  Its notification was
	 * due then, for the packets before this one, and this one starts the
	 * next count -- as a device watching a perfect clock would have done.
	 * Otherwise every late look would add packets to the group. */
	if (cq->pending && !every_packet(&cq->p) && now_ns >= cq->first_ns + cq->p.max_usecs * 1000ull) {
		cq->pending = 1;
		cq->first_ns = now_ns;
		return true;
	}
	if (!cq->pending++)
		cq->first_ns = now_ns;
	return net_coal_check(c, q, now_ns);
}

uint64_t net_coal_deadline(const struct net_coal *c, unsigned q)
{
	const struct net_coal_queue *cq = &c->q[q];

	if (!cq->pending || every_packet(&cq->p))
		return 0;
	return cq->first_ns + cq->p.max_usecs * 1000ull;
}

bool net_coal_check(struct net_coal *c, unsigned q, uint64_t now_ns)
{
	struct net_coal_queue *cq = &c->q[q];
	bool met;

	if (!cq->pending)
		return false;
	met = every_packet(&cq->p) || cq->pending >= cq->p.max_packets ||
	      now_ns >= cq->first_ns + cq->p.max_usecs * 1000ull;
	if (met)
		cq->pending = 0;    /* wait for the next packet, and count again */
	return met;
}

/* The queue index a VQ_SET or VQ_GET names, if it is an enabled transmit
 * or receive queue (R5); -1 otherwise. */
static int named_queue(const uint8_t *data, const bool enabled[NET_COAL_QUEUES])
{
	uint16_t vqn;

	memcpy(&vqn, data, sizeof(vqn));
	vqn = le16toh(vqn);
	return vqn < NET_COAL_QUEUES && enabled[vqn] ? vqn : -1;
}

static struct net_coal_params params_of(const uint8_t *p)
{
	struct virtio_net_ctrl_coal w;

	memcpy(&w, p, sizeof(w));
	return (struct net_coal_params){ .max_packets = le32toh(w.max_packets), .max_usecs = le32toh(w.max_usecs) };
}

/* R4: a new setting replaces what the queue had, its count going on (R3
 * then decides whether it is already met). */
static void set_queue(struct net_coal *c, unsigned q, struct net_coal_params p, unsigned *changed)
{
	c->q[q].p = p;
	*changed |= 1u << q;
}

uint8_t net_coal_command(struct net_coal *c, uint8_t cmd, const uint8_t *data, uint32_t len, uint64_t features,
			 const bool enabled[NET_COAL_QUEUES], uint8_t result[8], uint32_t *result_len,
			 unsigned *changed)
{
	bool coal = features >> VIRTIO_NET_F_NOTF_COAL & 1, vq_coal = features >> VIRTIO_NET_F_VQ_NOTF_COAL & 1;
	int q;

	*result_len = 0;
	*changed = 0;
	c->commands++;
	switch (cmd) {
	case VIRTIO_NET_CTRL_NOTF_COAL_TX_SET:
	case VIRTIO_NET_CTRL_NOTF_COAL_RX_SET:
		if (!coal || len != sizeof(struct virtio_net_ctrl_coal))
			break;
		q = cmd == VIRTIO_NET_CTRL_NOTF_COAL_TX_SET ? 1 : 0;   /* transmitq1 | receiveq1 */
		c->class_set[q] = params_of(data);
		set_queue(c, (unsigned)q, c->class_set[q], changed);
		return VIRTIO_NET_OK;
	case VIRTIO_NET_CTRL_NOTF_COAL_VQ_SET:
		if (!vq_coal || len != sizeof(struct virtio_net_ctrl_coal_vq) || (q = named_queue(data, enabled)) < 0)
			break;
		set_queue(c, (unsigned)q, params_of(data + 4), changed);   /* reserved: ignored */
		return VIRTIO_NET_OK;
	case VIRTIO_NET_CTRL_NOTF_COAL_VQ_GET:
		/* The driver writes vq_index and reserved; the answer is the
		 * coalescing parameters, after the ack. */
		if (!vq_coal || len != 4 || (q = named_queue(data, enabled)) < 0)
			break;
		{
			struct virtio_net_ctrl_coal w = {
				.max_packets = htole32(c->q[q].p.max_packets),
				.max_usecs = htole32(c->q[q].p.max_usecs),
			};

			memcpy(result, &w, sizeof(w));
			*result_len = sizeof(w);
		}
		return VIRTIO_NET_OK;
	default:
		break;
	}
	c->errors++;
	return VIRTIO_NET_ERR;
}
