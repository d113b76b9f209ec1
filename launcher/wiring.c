/*
 * wiring.c -- connect KVM-ignorant devices to the VM (see wiring.h).
 *
 * Two directions.  Device to VM: the device_host callbacks turn a device's
 * "raise my line" and "look at me" into KVM_IRQ_LINE pulses and vCPU kicks
 * (vm.c).  VM to device: wiring_register hangs the eventfds a device
 * exposes on KVM, so the threaded net model's notifies and interrupts never
 * pass through the vCPU thread.  A queue without a notify_fd keeps arriving
 * as an MMIO exit (run.c's handle_mmio), a device without an irqfd raises
 * its line through the callback.
 */
#include "wiring.h"

#include "diag.h"

static void wiring_raise_irq(void *ctx, unsigned gsi)
{
	struct wiring *w = ctx;

	/* Fails only with a dead VM fd, when nobody is left to interrupt. */
	vm_pulse_irq(w->vm, gsi);
}

static void wiring_kick_vcpu(void *ctx)
{
	struct wiring *w = ctx;

	vm_kick_vcpu(w->vm, w->vcpu_thread);
}

void wiring_init(struct wiring *w, struct vm *vm, pthread_t vcpu_thread)
{
	w->vm = vm;
	w->vcpu_thread = vcpu_thread;
	w->host = (struct device_host){
		.mem = &vm->mem,
		.raise_irq = wiring_raise_irq,
		.kick_vcpu = wiring_kick_vcpu,
		.ctx = w,
	};
}

int wiring_register(struct wiring *w, const struct virtio_mmio_dev *dev)
{
	for (unsigned q = 0; q < dev->ops->num_queues && q < VIRTIO_MMIO_MAX_QUEUES; q++)
		if (dev->notify_fd[q] >= 0 &&
		    vm_add_ioeventfd(w->vm, virtio_mmio_notify_gpa(dev), q, dev->notify_fd[q]) < 0)
			return -1;
	if (dev->irqfd >= 0 && vm_add_irqfd(w->vm, dev->gsi, dev->irqfd) < 0)
		return -1;
	return 0;
}
