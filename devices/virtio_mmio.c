/*
 * virtio_mmio.c -- register file of one virtio-mmio device (spec 4.2.2).
 *
 * Every access arrives here from the vCPU thread as an MMIO exit, except a
 * QueueNotify that a device chose to take through an ioeventfd.  The driver
 * is a guest and may be hostile: odd sizes, writes to read-only registers,
 * queue setup while a queue is live and out-of-range selectors are ignored;
 * a queue whose rings do not validate is refused (QueueReady stays 0) and the
 * device is marked DEVICE_NEEDS_RESET.
 */
#include "virtio_mmio.h"

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lguest_kvm_abi.h"
#include "vm.h"

#define VIRT_MAGIC 0x74726976  /* "virt" */
#define VIRT_VENDOR 0x4c4b564d /* "LKVM" */

void virtio_mmio_init(struct virtio_mmio_dev *dev, const struct virtio_dev_ops *ops, void *priv,
		      struct vm *vm, unsigned index, uint64_t features)
{
	memset(dev, 0, sizeof(*dev));
	dev->ops = ops;
	dev->priv = priv;
	dev->vm = vm;
	dev->base = LKVM_MMIO_BASE + index * LKVM_MMIO_SIZE;
	dev->gsi = LKVM_IRQ_BASE + index;
	dev->irqfd = -1;
	dev->host_features = features | (1ull << VIRTIO_F_VERSION_1);
	pthread_mutex_init(&dev->lock, NULL);
}

bool virtio_mmio_has_feature(const struct virtio_mmio_dev *dev, unsigned bit)
{
	return dev->driver_features & (1ull << bit);
}

static void raise_interrupt(struct virtio_mmio_dev *dev, uint32_t why)
{
	__atomic_fetch_or(&dev->interrupt_status, why, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&dev->interrupts, 1, __ATOMIC_RELAXED);
	if (dev->irqfd >= 0) {
		uint64_t one = 1;
		ssize_t n = write(dev->irqfd, &one, sizeof(one));
		(void)n; /* only fails if the counter would overflow: the irq is pending anyway */
	} else {
		vm_pulse_irq(dev->vm, dev->gsi);
	}
}

void virtio_mmio_signal_used(struct virtio_mmio_dev *dev)
{
	raise_interrupt(dev, VIRTIO_MMIO_INT_VRING);
}

void virtio_mmio_config_copy(void *data, uint32_t len, uint32_t off, const void *cfg, uint32_t size)
{
	memset(data, 0, len);
	if (off < size)
		memcpy(data, (const uint8_t *)cfg + off, len < size - off ? len : size - off);
}

void virtio_mmio_fail(struct virtio_mmio_dev *dev, const char *why)
{
	if (dev->needs_reset)
		return;
	if (!dev->errors++)
		snprintf(dev->error, sizeof(dev->error), "virtio-%s: %s -- device needs reset", dev->ops->name, why);
	dev->needs_reset = true;
	__atomic_fetch_or(&dev->status, VIRTIO_CONFIG_S_NEEDS_RESET, __ATOMIC_SEQ_CST);
	raise_interrupt(dev, VIRTIO_MMIO_INT_CONFIG);
}

static struct vq *selected_queue(struct virtio_mmio_dev *dev)
{
	return dev->queue_sel < dev->ops->num_queues ? &dev->vqs[dev->queue_sel] : NULL;
}

static uint32_t reg_read(struct virtio_mmio_dev *dev, uint64_t off)
{
	struct vq *vq = selected_queue(dev);

	switch (off) {
	case VIRTIO_MMIO_MAGIC_VALUE: return VIRT_MAGIC;
	case VIRTIO_MMIO_VERSION: return 2;
	case VIRTIO_MMIO_DEVICE_ID: return dev->ops->device_id;
	case VIRTIO_MMIO_VENDOR_ID: return VIRT_VENDOR;
	case VIRTIO_MMIO_DEVICE_FEATURES:
		return dev->device_features_sel < 2 ? (uint32_t)(dev->host_features >> (32 * dev->device_features_sel)) : 0;
	case VIRTIO_MMIO_QUEUE_NUM_MAX: return vq ? VQ_MAX_SIZE : 0;
	case VIRTIO_MMIO_QUEUE_READY: return vq ? vq->ready : 0;
	case VIRTIO_MMIO_INTERRUPT_STATUS: return __atomic_load_n(&dev->interrupt_status, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_STATUS: return __atomic_load_n(&dev->status, __ATOMIC_SEQ_CST);
	case VIRTIO_MMIO_CONFIG_GENERATION: return 0;
	default: return 0;
	}
}

static void set_addr(uint64_t *addr, bool high, uint32_t value)
{
	*addr = high ? (*addr & 0xffffffffull) | ((uint64_t)value << 32)
		     : (*addr & ~0xffffffffull) | value;
}

static void reset_device(struct virtio_mmio_dev *dev)
{
	for (unsigned q = 0; q < dev->ops->num_queues; q++)
		vq_reset(&dev->vqs[q]);
	dev->driver_features = 0;
	dev->needs_reset = false;
	__atomic_store_n(&dev->interrupt_status, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&dev->status, 0, __ATOMIC_SEQ_CST);
}

static void queue_ready(struct virtio_mmio_dev *dev, struct vq *vq, uint32_t value)
{
	if (!value) {
		vq->ready = false;
		return;
	}
	if (vq->ready)
		return;
	vq->event_idx = virtio_mmio_has_feature(dev, VIRTIO_RING_F_EVENT_IDX);
	vq->indirect_ok = virtio_mmio_has_feature(dev, VIRTIO_RING_F_INDIRECT_DESC);
	if (vq_enable(vq, &dev->vm->mem) < 0)
		virtio_mmio_fail(dev, vq->error);
}

static void status_write(struct virtio_mmio_dev *dev, uint32_t value)
{
	uint32_t old = dev->status;

	if (value == 0) {
		reset_device(dev);
		return;
	}
	/* NEEDS_RESET is the device's to set, never the driver's. */
	value &= ~VIRTIO_CONFIG_S_NEEDS_RESET;
	/* FEATURES_OK only sticks if every accepted feature was offered. */
	if ((value & VIRTIO_CONFIG_S_FEATURES_OK) && (dev->driver_features & ~dev->host_features))
		value &= ~VIRTIO_CONFIG_S_FEATURES_OK;
	__atomic_store_n(&dev->status, value | (old & VIRTIO_CONFIG_S_NEEDS_RESET), __ATOMIC_SEQ_CST);
}

static void reg_write(struct virtio_mmio_dev *dev, uint64_t off, uint32_t value)
{
	struct vq *vq = selected_queue(dev);
	bool features_open = !(dev->status & VIRTIO_CONFIG_S_FEATURES_OK);
	bool queue_idle = vq && !vq->ready;

	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL: dev->device_features_sel = value; break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL: dev->driver_features_sel = value; break;
	case VIRTIO_MMIO_DRIVER_FEATURES:
		if (features_open && dev->driver_features_sel < 2) {
			unsigned shift = 32 * dev->driver_features_sel;
			dev->driver_features = (dev->driver_features & ~(0xffffffffull << shift)) |
					       ((uint64_t)value << shift);
		}
		break;
	case VIRTIO_MMIO_QUEUE_SEL: dev->queue_sel = value; break;
	case VIRTIO_MMIO_QUEUE_NUM: if (queue_idle) vq->num = value > 0xffff ? 0 : value; break;
	case VIRTIO_MMIO_QUEUE_READY: if (vq) queue_ready(dev, vq, value); break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW: if (queue_idle) set_addr(&vq->desc_gpa, false, value); break;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH: if (queue_idle) set_addr(&vq->desc_gpa, true, value); break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW: if (queue_idle) set_addr(&vq->avail_gpa, false, value); break;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH: if (queue_idle) set_addr(&vq->avail_gpa, true, value); break;
	case VIRTIO_MMIO_QUEUE_USED_LOW: if (queue_idle) set_addr(&vq->used_gpa, false, value); break;
	case VIRTIO_MMIO_QUEUE_USED_HIGH: if (queue_idle) set_addr(&vq->used_gpa, true, value); break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		if (value < dev->ops->num_queues && dev->vqs[value].ready && dev->ops->queue_notify)
			dev->ops->queue_notify(dev, value);
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		__atomic_fetch_and(&dev->interrupt_status, ~value, __ATOMIC_SEQ_CST);
		break;
	case VIRTIO_MMIO_STATUS: status_write(dev, value); break;
	default: break;
	}
}

void virtio_mmio_access(struct virtio_mmio_dev *dev, uint64_t off, uint8_t *data, uint32_t len,
			bool is_write)
{
	uint32_t value = 0;

	if (off >= VIRTIO_MMIO_CONFIG) {
		if (!is_write && dev->ops->config_read)
			dev->ops->config_read(dev, off - VIRTIO_MMIO_CONFIG, data, len);
		else if (!is_write)
			memset(data, 0, len);
		return;
	}
	/* Registers are 32-bit and 4-byte aligned; anything else reads 0 and
	 * writes nothing, as a real bus would do with a bad access. */
	if (len != 4 || (off & 3)) {
		if (!is_write)
			memset(data, 0, len);
		return;
	}
	if (is_write) {
		memcpy(&value, data, 4);
		pthread_mutex_lock(&dev->lock);
		reg_write(dev, off, value);
		pthread_mutex_unlock(&dev->lock);
	} else {
		value = reg_read(dev, off);
		memcpy(data, &value, 4);
	}
}
