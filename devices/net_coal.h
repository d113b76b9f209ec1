/*
 * net_coal.h -- virtio 1.3's notification coalescing for the net device
 * (5.1.6.5.9, "Notifications Coalescing"), the rules alone: no rings, no
 * clock of its own, no interrupt line.  net.c feeds it each used buffer and
 * the time, and sends the used buffer notification when it says the
 * conditions are met -- and only if the driver has not suppressed it; the
 * control queue (net_ctrl.c) hands it the driver's commands.
 *
 * The rules, each with its unit test (tests/unit/test_net_coal.c):
 *   R1 max_usecs = 0 or max_packets = 0: the conditions are met after every
 *      packet.
 *   R2 both non-zero: counting starts at a packet; the conditions are met
 *      at max_packets packets or max_usecs after the first, whichever comes
 *      first; then the device waits for the next packet and counts again.
 *      Each queue counts alone.
 *   R3 a change of parameters is checked at once: if the new conditions are
 *      already met (10 packets pending, new max_packets 8), notify now.
 *   R4 the last parameters set for a queue apply, whichever command set
 *      them (TX_SET/RX_SET for all queues of a direction, VQ_SET for one).
 *   R5 VQ_SET and VQ_GET name an enabled transmit or receive queue, else
 *      VIRTIO_NET_ERR; a command the negotiated features do not allow, an
 *      unknown one or one of the wrong length: VIRTIO_NET_ERR, and nothing
 *      changes.  `reserved` is ignored.
 *   R6 a queue disabled and enabled again starts with the last TX_SET
 *      (RX_SET) parameters, or 0 if none was given.
 *   R7 reset: every parameter 0.
 *   R8 under suppression (the driver's NO_INTERRUPT or used_event) no
 *      notification is sent even when the conditions are met -- net.c's
 *      part: it asks vq_should_interrupt after net_coal says "met".
 */
#ifndef NET_COAL_H
#define NET_COAL_H

#include <stdbool.h>
#include <stdint.h>

/* The queues that coalesce: virtio-net's receiveq1 and transmitq1. */
#define NET_COAL_QUEUES 2u

struct net_coal_params {
	uint32_t max_packets, max_usecs;
};

struct net_coal_queue {
	struct net_coal_params p;
	uint32_t pending;          /* packets counted since the conditions were last met */
	uint64_t first_ns;         /* when the first of them came (CLOCK_MONOTONIC ns) */
};

struct net_coal {
	struct net_coal_params class_set[NET_COAL_QUEUES];   /* the last RX_SET [0], TX_SET [1] */
	struct net_coal_queue q[NET_COAL_QUEUES];
	uint64_t commands, errors;  /* control commands of this class, and those answered ERR */
};

/* R7: every parameter and count 0 (device reset, and net_init). */
void net_coal_reset(struct net_coal *c);
/* R6: queue q was enabled. */
void net_coal_queue_enabled(struct net_coal *c, unsigned q);
/* R1, R2: one used buffer on queue q at now_ns; true when the conditions
 * are met (the count then starts over).  If the time limit had passed
 * before now_ns, it is the packets before this one that met it: true, and
 * this one is the first of the next count. */
bool net_coal_packet(struct net_coal *c, unsigned q, uint64_t now_ns);
/* R2's time limit: when queue q's conditions will be met by time alone
 * (CLOCK_MONOTONIC ns), or 0 if nothing is pending or there is no limit. */
uint64_t net_coal_deadline(const struct net_coal *c, unsigned q);
/* R2, R3: are queue q's conditions met at now_ns with what is pending?
 * True means the caller notifies (if not suppressed): the count starts over. */
bool net_coal_check(struct net_coal *c, unsigned q, uint64_t now_ns);

/* A VIRTIO_NET_CTRL_NOTF_COAL command: `cmd`, its `data` (len bytes, the
 * driver's), the negotiated features, which queues are enabled.  Returns
 * VIRTIO_NET_OK or VIRTIO_NET_ERR (R5: nothing changed then).  VQ_GET's
 * answer (struct virtio_net_ctrl_coal, 8 bytes) goes to `result`, and
 * *result_len says how much of it is valid (0 otherwise).  *changed gets a
 * bit per queue whose parameters were set (for R3). */
uint8_t net_coal_command(struct net_coal *c, uint8_t cmd, const uint8_t *data, uint32_t len, uint64_t features,
			 const bool enabled[NET_COAL_QUEUES], uint8_t result[8], uint32_t *result_len,
			 unsigned *changed);

#endif
