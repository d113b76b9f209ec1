/*
 * device_host.h -- all a device knows of whoever runs it.
 *
 * Devices are compiled without the launcher's headers (docs/architecture.md,
 * "Layers"): they do not know that a KVM exists.  What they need from the
 * outside comes in through this struct, which the launcher fills
 * (launcher/wiring.c) and a unit test fills with fake RAM:
 *
 *   guest RAM        the one mapping every ring walk and copy goes through;
 *   raise_irq        pulse a device's interrupt line once, for a device that
 *                    has no irqfd (the console; net in the lguest model);
 *   kick_vcpu        get the vCPU out of the guest so that it looks at
 *                    device work (the lguest model's waker).
 *
 * The other direction -- the eventfds a device wants routed without a VM
 * exit -- is the transport's notify_fd[] and irqfd (virtio_mmio.h): the
 * device creates them, the VMM registers them (KVM ioeventfd and irqfd
 * today; plain eventfds in a model without a VM).
 */
#ifndef DEVICE_HOST_H
#define DEVICE_HOST_H

#include "guest_mem.h"

struct device_host {
	const struct guest_mem *mem;
	/* NULL only where nothing can take a line (a unit test that reads the
	 * device's irqfd instead). */
	void (*raise_irq)(void *ctx, unsigned gsi);
	void (*kick_vcpu)(void *ctx);
	void *ctx;
};

#endif
