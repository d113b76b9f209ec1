/*
 * wiring.h -- the launcher's half of the device boundary.
 *
 * Devices know nothing of KVM (devices/device_host.h).  Here the launcher
 * gives them their host -- guest RAM, an interrupt line held at a level
 * (KVM_IRQ_LINE), a vCPU kick, all backed by the VM -- and, once a device
 * has created the eventfds it wants routed, registers them with KVM: a
 * QueueNotify write signals the kick eventfd (ioeventfd).  Firecracker's
 * VMM installs its devices' eventfds the same way.
 */
#ifndef WIRING_H
#define WIRING_H

#include <pthread.h>

#include "device_host.h"
#include "virtio_mmio.h"
#include "vm.h"

struct wiring {
	struct device_host host;    /* what every device is given */
	struct vm *vm;
	pthread_t vcpu_thread;      /* the thread a kick gets out of KVM_RUN */
};

/* Point the devices' host at `vm`; callable before vm_create (RAM is only
 * looked at once a queue is enabled). */
void wiring_init(struct wiring *w, struct vm *vm, pthread_t vcpu_thread);
/* Register `dev`'s notify_fd[] with KVM.  Before the guest runs
 * and before the sandbox forbids the ioctls.  -1 with the reason in diag. */
int wiring_register(struct wiring *w, const struct virtio_mmio_dev *dev);

#endif
