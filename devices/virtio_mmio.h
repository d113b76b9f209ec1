/*
 * virtio_mmio.h -- the virtio-mmio (version 2) transport, shared by all devices.
 *
 * A device supplies a virtio_dev_ops table (kvmtool's virtio_ops idea): its
 * ID, queue count, config space and what to do when a queue is notified.  The transport owns the register
 * file, feature negotiation, status, queue setup and the interrupt line;
 * devices never see register offsets.
 *
 * Toward the VMM the transport exposes what it needs routed: its MMIO window
 * (base, LKVM_MMIO_SIZE), its interrupt line (gsi), and per device the
 * eventfds that stand for a queue's notify (notify_fd[]), which the
 * launcher registers with KVM (launcher/wiring.c).  The line itself is a
 * level, as virtio 1.2 4.2.3.4 has it: asserted while InterruptStatus is
 * not 0.  The transport owns InterruptStatus, so it alone drives the line,
 * through device_host.set_irq_line, at each 0 <-> non-zero change.
 */
#ifndef VIRTIO_MMIO_H
#define VIRTIO_MMIO_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "device_host.h"
#include "virtqueue.h"

#define VIRTIO_MMIO_MAX_QUEUES 3   /* virtio-net: receiveq1, transmitq1, controlq */

struct virtio_mmio_dev;

struct virtio_dev_ops {
	const char *name;
	uint32_t device_id;
	unsigned num_queues;
	/* Config space: device-specific bytes at offset 0x100. */
	void (*config_read)(struct virtio_mmio_dev *dev, uint32_t off, void *data, uint32_t len);
	/* A QueueNotify that reached the launcher (MMIO exit, vCPU thread). */
	void (*queue_notify)(struct virtio_mmio_dev *dev, unsigned q);
	/* Optional, lock held: queue q was just enabled (QueueReady = 1), and
	 * the driver reset the device -- for state the device keeps per queue
	 * beyond the rings (net's coalescing parameters). */
	void (*queue_enabled)(struct virtio_mmio_dev *dev, unsigned q);
	void (*reset)(struct virtio_mmio_dev *dev);
};

struct virtio_mmio_dev {
	const struct virtio_dev_ops *ops;
	void *priv;
	const struct device_host *host;
	uint64_t base;              /* guest-physical start of the MMIO window */
	unsigned gsi;
	/* Eventfds the device created for the VMM to route; -1: not routed.
	 * notify_fd[q] is signalled by a QueueNotify write of q (instead of an
	 * MMIO exit). */
	int notify_fd[VIRTIO_MMIO_MAX_QUEUES];
	uint64_t host_features;
	uint64_t driver_features;   /* accepted AND offered: all that takes effect */
	uint64_t features_unoffered;  /* accepted but not offered: refuses FEATURES_OK */
	bool features_unoffered_high; /* a bit above 63 accepted (none is offered) */
	uint32_t status;
	uint32_t device_features_sel, driver_features_sel, queue_sel;
	/* Changed only under `lock` (the line follows it); read without it. */
	uint32_t interrupt_status;
	uint64_t interrupts;        /* times the line was asserted (0 -> non-zero) */
	struct vq vqs[VIRTIO_MMIO_MAX_QUEUES];
	/* A QueueNotify (MMIO exit) reached queue q while it was held before
	 * DRIVER_OK: DRIVER_OK hands it to the device then (virtio_mmio.c,
	 * release_queues).  Cleared by a reset. */
	bool notify_held[VIRTIO_MMIO_MAX_QUEUES];
	char error[256];            /* why DEVICE_NEEDS_RESET was first set */
	char last_error[256];       /* why it was set most recently */
	bool needs_reset;           /* now; a driver reset clears it */
	uint64_t errors;            /* times it was set; survives resets */
	uint64_t violations;        /* of those, register-protocol violations */
	/* Serialises register writes (vCPU thread) against device threads that
	 * walk the queues, so a reset can never pull a ring from under a drain.
	 * Held while ops->queue_notify runs. */
	pthread_mutex_t lock;
};

void virtio_mmio_init(struct virtio_mmio_dev *dev, const struct virtio_dev_ops *ops, void *priv,
		      const struct device_host *host, unsigned index, uint64_t features);
/* Guest-physical address whose 4-byte write of a queue index is that
 * queue's notify: where the VMM hangs notify_fd[q]. */
uint64_t virtio_mmio_notify_gpa(const struct virtio_mmio_dev *dev);
/* An MMIO exit inside [base, base+LKVM_MMIO_SIZE). */
void virtio_mmio_access(struct virtio_mmio_dev *dev, uint64_t off, uint8_t *data, uint32_t len,
			bool is_write);
bool virtio_mmio_has_feature(const struct virtio_mmio_dev *dev, unsigned bit);
/* Config reads: the bytes of `cfg` at [off, off+len), zeros beyond it. */
void virtio_mmio_config_copy(void *data, uint32_t len, uint32_t off, const void *cfg, uint32_t size);
/* Used buffers are ready: set the interrupt status bit, which asserts the
 * line unless it already is (an earlier event the driver has not yet
 * acknowledged).  Caller holds dev->lock, as for virtio_mmio_fail. */
void virtio_mmio_signal_used(struct virtio_mmio_dev *dev);
/* The guest broke a ring: DEVICE_NEEDS_RESET, config-change interrupt, one
 * remembered error line (see vq->error).  Once per needs-reset period: a
 * broken queue fails again on every pop.  (Register-protocol violations are
 * the transport's own and are counted every time; see virtio_mmio.c.) */
void virtio_mmio_fail(struct virtio_mmio_dev *dev, const char *why);

#endif
