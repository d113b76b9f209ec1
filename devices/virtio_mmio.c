/*
 * virtio_mmio.c -- register file of one virtio-mmio device (spec 4.2.2).
 *
 * Every access arrives here from the vCPU thread as an MMIO exit, except a
 * QueueNotify that a device chose to take through an ioeventfd.  The driver
 * is a guest and may be hostile.  Odd sizes, writes to read-only registers
 * and out-of-range selectors are ignored.  Everything else is held to the
 * spec's initialization order (virtio 1.2, 3.1.1): status bits one at a
 * time (ACKNOWLEDGE, DRIVER, FEATURES_OK, DRIVER_OK; 0 resets), features
 * between DRIVER and FEATURES_OK and masked with what the device offers,
 * queues set up between FEATURES_OK and DRIVER_OK while not yet ready, and
 * a broken queue back only through a reset.  QueueReady = 0, the driver's
 * "stop using the queue", is allowed at any status (4.2.2.2).  A ready
 * queue is held -- no chain taken -- until DRIVER_OK (2.1.2), which then
 * passes on a notify that came while it was held.  A write outside that order is
 * a violation: refused, counted, one line kept, and DEVICE_NEEDS_RESET with
 * a configuration-change interrupt -- every time, so a driver cannot ride
 * on past the first refusal unseen.  What a device sees (its queues, the
 * negotiated features) therefore only ever comes out of a clean sequence.
 *
 * The interrupt line is InterruptStatus != 0 (virtio 1.2, 4.2.3.4), as
 * QEMU's virtio-mmio holds it: asserted by the first event, held through
 * any more, released when an InterruptACK (or a reset) clears the last bit.
 * A guest that routes it edge-triggered, as the stub does, sees one edge
 * per assertion, so it must acknowledge before it sleeps; one that routes
 * it level-triggered is interrupted again after its EOI until it does.
 */
#include "virtio_mmio.h"

#include <linux/virtio_config.h>
#include <linux/virtio_mmio.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lguest_kvm_abi.h"

#define VIRT_MAGIC 0x74726976  /* "virt" */
#define VIRT_VENDOR 0x4c4b564d /* "LKVM" */

void virtio_mmio_init(struct virtio_mmio_dev *dev, const struct virtio_dev_ops *ops, void *priv,
		      const struct device_host *host, unsigned index, uint64_t features)
{
	memset(dev, 0, sizeof(*dev));
	dev->ops = ops;
	dev->priv = priv;
	dev->host = host;
	dev->base = LKVM_MMIO_BASE + index * LKVM_MMIO_SIZE;
	dev->gsi = LKVM_IRQ_BASE + index;
	for (unsigned q = 0; q < VIRTIO_MMIO_MAX_QUEUES; q++)
		dev->notify_fd[q] = -1;
	/* Every device runs on either ring layout (virtqueue.c picks it per
	 * queue), so every device offers the packed one; a driver that does not
	 * ask for it keeps the split ring. */
	dev->host_features = features | (1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_RING_PACKED);
	pthread_mutex_init(&dev->lock, NULL);
}

uint64_t virtio_mmio_notify_gpa(const struct virtio_mmio_dev *dev)
{
	return dev->base + VIRTIO_MMIO_QUEUE_NOTIFY;
}

bool virtio_mmio_has_feature(const struct virtio_mmio_dev *dev, unsigned bit)
{
	return dev->driver_features & (1ull << bit);
}

/* The host hears of the line only when it changes.  Every change of
 * InterruptStatus is made under dev->lock (register writes take it, and
 * every device path that signals holds it), so these calls reach the host
 * in the order of the changes: a lower can never overtake the raise before
 * it and leave the line high over an InterruptStatus of 0, where the next
 * event would make no edge. */
static void set_line(struct virtio_mmio_dev *dev, bool level)
{
	if (level)
		__atomic_fetch_add(&dev->interrupts, 1, __ATOMIC_RELAXED);
	if (dev->host->set_irq_line)
		dev->host->set_irq_line(dev->host->ctx, dev->gsi, level);
}

static void interrupt_status_set(struct virtio_mmio_dev *dev, uint32_t why)
{
	if (!__atomic_fetch_or(&dev->interrupt_status, why, __ATOMIC_SEQ_CST))
		set_line(dev, true);
}

static void interrupt_status_clear(struct virtio_mmio_dev *dev, uint32_t bits)
{
	uint32_t old = __atomic_fetch_and(&dev->interrupt_status, ~bits, __ATOMIC_SEQ_CST);

	if (old && !(old & ~bits))
		set_line(dev, false);
}

void virtio_mmio_signal_used(struct virtio_mmio_dev *dev)
{
	interrupt_status_set(dev, VIRTIO_MMIO_INT_VRING);
}

void virtio_mmio_config_copy(void *data, uint32_t len, uint32_t off, const void *cfg, uint32_t size)
{
	memset(data, 0, len);
	if (off < size)
		memcpy(data, (const uint8_t *)cfg + off, len < size - off ? len : size - off);
}

/* Both ways into DEVICE_NEEDS_RESET end here: count it, keep the line (the
 * first for the exit status, the latest for whoever looks next), set the
 * status bit and raise a configuration-change interrupt. */
static void enter_needs_reset(struct virtio_mmio_dev *dev, const char *why)
{
	snprintf(dev->last_error, sizeof(dev->last_error), "virtio-%s: %s -- device needs reset", dev->ops->name, why);
	if (!dev->errors++)
		memcpy(dev->error, dev->last_error, sizeof(dev->error));
	dev->needs_reset = true;
	__atomic_fetch_or(&dev->status, VIRTIO_CONFIG_S_NEEDS_RESET, __ATOMIC_SEQ_CST);
	interrupt_status_set(dev, VIRTIO_MMIO_INT_CONFIG);
}

void virtio_mmio_fail(struct virtio_mmio_dev *dev, const char *why)
{
	/* A broken queue fails again on every later pop; that is the same
	 * fault, not a new one, so it is counted once per needs-reset period. */
	if (dev->needs_reset)
		return;
	enter_needs_reset(dev, why);
}

/* A register write the driver had no right to make.  The caller has
 * refused it (nothing changed); here it is counted and signalled every
 * time, even while NEEDS_RESET is already set: a driver that keeps going
 * after the first refusal must not go unnoticed. */
static void violation(struct virtio_mmio_dev *dev, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(struct virtio_mmio_dev *dev, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	dev->violations++;
	enter_needs_reset(dev, why);
}

static uint32_t status_now(const struct virtio_mmio_dev *dev)
{
	return __atomic_load_n(&dev->status, __ATOMIC_SEQ_CST);
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
	case VIRTIO_MMIO_STATUS: return status_now(dev);
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
	dev->features_unoffered = 0;
	dev->features_unoffered_high = false;
	dev->needs_reset = false;
	memset(dev->notify_held, 0, sizeof(dev->notify_held));
	interrupt_status_clear(dev, ~0u);
	__atomic_store_n(&dev->status, 0, __ATOMIC_SEQ_CST);
	if (dev->ops->reset)
		dev->ops->reset(dev);
}

/* The status bit a driver may add next (virtio 1.2, 3.1.1), 0 when done. */
static uint32_t next_status_bit(uint32_t status)
{
	static const uint32_t order[] = {
		VIRTIO_CONFIG_S_ACKNOWLEDGE, VIRTIO_CONFIG_S_DRIVER,
		VIRTIO_CONFIG_S_FEATURES_OK, VIRTIO_CONFIG_S_DRIVER_OK,
	};

	for (unsigned i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (!(status & order[i]))
			return order[i];
	return 0;
}

/* DRIVER_OK: the device is live (virtio 1.2, 3.1.1 step 8), and only now
 * may it consume buffers (2.1.2), so the queues held since QueueReady are
 * let go.  A driver may populate its queues before DRIVER_OK (3.1.1 step
 * 7); a notify it sent then through an MMIO exit was kept (notify_held),
 * and is handed to the device now, once, as the guest's notify it was:
 * nothing made available early waits for a notify that already came.  (A
 * notify through an ioeventfd goes to the device thread, which finds the
 * queue held and nothing to take; that driver's next notify is served.) */
static void release_queues(struct virtio_mmio_dev *dev)
{
	for (unsigned q = 0; q < dev->ops->num_queues; q++) {
		bool notified = dev->notify_held[q];

		dev->notify_held[q] = false;
		if (!dev->vqs[q].held)
			continue;
		dev->vqs[q].held = false;
		if (notified && dev->vqs[q].ready && dev->ops->queue_notify)
			dev->ops->queue_notify(dev, q);
	}
}

static void status_write(struct virtio_mmio_dev *dev, uint32_t value)
{
	uint32_t now = status_now(dev);
	uint32_t old = now & ~VIRTIO_CONFIG_S_NEEDS_RESET;
	uint32_t added, next;

	if (value == 0) {
		reset_device(dev);
		return;
	}
	/* NEEDS_RESET is the device's to set and clear; a driver that writes
	 * back what it read (Linux's add_status does) is not at fault. */
	value &= ~VIRTIO_CONFIG_S_NEEDS_RESET;
	if (old & ~value) {
		violation(dev, "status write 0x%x clears 0x%x (status 0x%x); only a reset (0) clears status bits",
			  value, old & ~value, old);
		return;
	}
	/* FAILED: the driver gave up, which it may do at any step. */
	added = value & ~old & ~VIRTIO_CONFIG_S_FAILED;
	next = next_status_bit(old);
	if (added && added != next) {
		violation(dev, "status write 0x%x out of order (status 0x%x, next 0x%x); the order is "
			  "ACKNOWLEDGE, DRIVER, FEATURES_OK, DRIVER_OK", value, old, next);
		return;
	}
	/* FEATURES_OK only sticks if every accepted feature was offered: the
	 * driver's re-read then sees it clear, as the spec has it refuse. */
	if (added == VIRTIO_CONFIG_S_FEATURES_OK && (dev->features_unoffered || dev->features_unoffered_high)) {
		violation(dev, "FEATURES_OK refused: the driver accepted features 0x%llx%s the device does not offer "
			  "(offered 0x%llx)", (unsigned long long)dev->features_unoffered,
			  dev->features_unoffered_high ? " and bits above 63" : "",
			  (unsigned long long)dev->host_features);
		return;
	}
	__atomic_store_n(&dev->status, value | (now & VIRTIO_CONFIG_S_NEEDS_RESET), __ATOMIC_SEQ_CST);
	if (added == VIRTIO_CONFIG_S_DRIVER_OK)
		release_queues(dev);
}

static void driver_features_write(struct virtio_mmio_dev *dev, uint32_t value)
{
	uint32_t status = status_now(dev);
	uint32_t sel = dev->driver_features_sel;
	uint64_t word, offered, written;

	if (status & VIRTIO_CONFIG_S_FEATURES_OK) {
		violation(dev, "DriverFeatures word %u written after FEATURES_OK (status 0x%x); features are fixed "
			  "once accepted", sel, status);
		return;
	}
	if (!(status & VIRTIO_CONFIG_S_DRIVER)) {
		violation(dev, "DriverFeatures word %u written before DRIVER (status 0x%x)", sel, status);
		return;
	}
	if (sel >= 2) {
		/* No device offers anything above bit 63; a driver that accepts
		 * such a bit stays refused until it resets the device. */
		if (value)
			dev->features_unoffered_high = true;
		return;
	}
	word = 0xffffffffull << (32 * sel);
	offered = dev->host_features & word;
	written = (uint64_t)value << (32 * sel);
	/* Only what the device offered can ever take effect (ring flags come
	 * from here); the rest is remembered so FEATURES_OK can refuse it. */
	dev->driver_features = (dev->driver_features & ~word) | (written & offered);
	dev->features_unoffered = (dev->features_unoffered & ~word) | (written & ~offered);
}

static const char *queue_reg_name(uint64_t off)
{
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM: return "QueueNum";
	case VIRTIO_MMIO_QUEUE_READY: return "QueueReady";
	case VIRTIO_MMIO_QUEUE_DESC_LOW: return "QueueDescLow";
	case VIRTIO_MMIO_QUEUE_DESC_HIGH: return "QueueDescHigh";
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW: return "QueueDriverLow";
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH: return "QueueDriverHigh";
	case VIRTIO_MMIO_QUEUE_USED_LOW: return "QueueDeviceLow";
	default: return "QueueDeviceHigh";
	}
}

/* Why the driver may not write queue `vq`'s registers now, or NULL.  A
 * queue is set up once per device reset: after FEATURES_OK (so its ring
 * features are settled), before DRIVER_OK, and only while it is neither
 * live nor broken -- a broken queue comes back only through a reset. */
static const char *queue_locked(const struct virtio_mmio_dev *dev, const struct vq *vq)
{
	uint32_t status = status_now(dev);

	if (!(status & VIRTIO_CONFIG_S_FEATURES_OK))
		return "before FEATURES_OK";
	if (status & VIRTIO_CONFIG_S_DRIVER_OK)
		return "after DRIVER_OK";
	if (vq->broken)
		return "while the queue is broken (only a device reset brings it back)";
	if (vq->ready)
		return "while the queue is ready";
	return NULL;
}

/* QueueReady = 0: "to stop using the queue the driver MUST write zero" to
 * it (virtio 1.2, 4.2.2.2) -- at any status: Linux's vm_del_vq does, after
 * a reset and on a failed probe -- so it is never a violation.  A ready
 * queue stops: the device "MUST NOT access virtual queue contents when
 * QueueReady is zero" (4.2.2.1), and dropping the queue as a reset would
 * makes sure of that (device threads walk queues under the same lock as
 * this write).  Its registers are kept, for the driver to read back.  A
 * broken queue stays broken, and a stopped one cannot be made ready again
 * after DRIVER_OK: both come back only through a device reset. */
static void stop_queue(struct vq *vq)
{
	struct vq stopped;

	if (!vq->ready || vq->broken)
		return;
	stopped = (struct vq){ .mem = vq->mem, .name = vq->name, .max_chain_bytes = vq->max_chain_bytes,
			       .num = vq->num, .desc_gpa = vq->desc_gpa, .avail_gpa = vq->avail_gpa,
			       .used_gpa = vq->used_gpa };
	*vq = stopped;
}

static void queue_write(struct virtio_mmio_dev *dev, uint64_t off, uint32_t value)
{
	struct vq *vq = selected_queue(dev);
	const char *why;

	if (!vq)
		return;   /* no such queue: nothing to protect, as QueueNumMax 0 says */
	if (off == VIRTIO_MMIO_QUEUE_READY && !value) {
		stop_queue(vq);
		return;
	}
	why = queue_locked(dev, vq);
	if (why) {
		violation(dev, "queue %u: %s written %s", dev->queue_sel, queue_reg_name(off), why);
		return;
	}
	switch (off) {
	case VIRTIO_MMIO_QUEUE_NUM: vq->num = value > 0xffff ? 0 : value; break;
	case VIRTIO_MMIO_QUEUE_DESC_LOW: set_addr(&vq->desc_gpa, false, value); break;
	case VIRTIO_MMIO_QUEUE_DESC_HIGH: set_addr(&vq->desc_gpa, true, value); break;
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW: set_addr(&vq->avail_gpa, false, value); break;
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH: set_addr(&vq->avail_gpa, true, value); break;
	case VIRTIO_MMIO_QUEUE_USED_LOW: set_addr(&vq->used_gpa, false, value); break;
	case VIRTIO_MMIO_QUEUE_USED_HIGH: set_addr(&vq->used_gpa, true, value); break;
	case VIRTIO_MMIO_QUEUE_READY:   /* 1: 0 is stop_queue's */
		vq->event_idx = virtio_mmio_has_feature(dev, VIRTIO_RING_F_EVENT_IDX);
		vq->indirect_ok = virtio_mmio_has_feature(dev, VIRTIO_RING_F_INDIRECT_DESC);
		vq->packed = virtio_mmio_has_feature(dev, VIRTIO_F_RING_PACKED);
		if (vq_enable(vq, dev->host->mem) < 0)
			violation(dev, "%s", vq->error);
		else if (dev->ops->queue_enabled)
			dev->ops->queue_enabled(dev, dev->queue_sel);
		vq->held = vq->ready;   /* queue_locked: DRIVER_OK is not set yet */
		break;
	default: break;
	}
}

static void reg_write(struct virtio_mmio_dev *dev, uint64_t off, uint32_t value)
{
	switch (off) {
	case VIRTIO_MMIO_DEVICE_FEATURES_SEL: dev->device_features_sel = value; break;
	case VIRTIO_MMIO_DRIVER_FEATURES_SEL: dev->driver_features_sel = value; break;
	case VIRTIO_MMIO_DRIVER_FEATURES: driver_features_write(dev, value); break;
	case VIRTIO_MMIO_QUEUE_SEL: dev->queue_sel = value; break;
	case VIRTIO_MMIO_QUEUE_NUM:
	case VIRTIO_MMIO_QUEUE_READY:
	case VIRTIO_MMIO_QUEUE_DESC_LOW:
	case VIRTIO_MMIO_QUEUE_DESC_HIGH:
	case VIRTIO_MMIO_QUEUE_AVAIL_LOW:
	case VIRTIO_MMIO_QUEUE_AVAIL_HIGH:
	case VIRTIO_MMIO_QUEUE_USED_LOW:
	case VIRTIO_MMIO_QUEUE_USED_HIGH:
		queue_write(dev, off, value);
		break;
	case VIRTIO_MMIO_QUEUE_NOTIFY:
		/* A held queue's notify waits for DRIVER_OK (release_queues). */
		if (value < dev->ops->num_queues && dev->vqs[value].held)
			dev->notify_held[value] = true;
		else if (value < dev->ops->num_queues && dev->vqs[value].ready && dev->ops->queue_notify)
			dev->ops->queue_notify(dev, value);
		break;
	case VIRTIO_MMIO_INTERRUPT_ACK:
		interrupt_status_clear(dev, value);
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
