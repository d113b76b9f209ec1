/*
 * wiring.c -- connect KVM-ignorant devices to the VM (see wiring.h).
 *
 * Two directions.  Device to VM: the device_host callbacks turn a device's
 * "my line is now high / low" and "look at me" into KVM_IRQ_LINE levels and
 * vCPU kicks (vm.c), on whichever thread the device changed its interrupt
 * status: the vCPU's (an InterruptACK, the lguest model's drains), the net
 * device thread's, the console input thread's.  VM to device:
 * wiring_register hangs the notify eventfds a device exposes on KVM, so the
 * threaded net model's notifies never pass through the vCPU thread.  A
 * queue without a notify_fd keeps arriving as an MMIO exit (run.c's
 * handle_mmio).
 *
 * No irqfd: an irqfd write is a pulse, and the line must stay high while
 * InterruptStatus is set (virtio 1.2, 4.2.3.4); its resampling variant
 * misbehaves for a guest that routes the pin edge-triggered
 * (docs/qemu.md, section 1).
 */
#include "wiring.h"

#include "diag.h"

static void wiring_set_irq_line(void *ctx, unsigned gsi, bool level)
{
	struct wiring *w = ctx;

	/* Fails only with a dead VM fd, when nobody is left to interrupt. */
	vm_set_irq_line(w->vm, gsi, level);
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
		.set_irq_line = wiring_set_irq_line,
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
	return 0;
}
