/*
 * device_host.h -- all a device knows of whoever runs it.
 *
 * Devices are compiled without the launcher's headers (docs/architecture.md,
 * "Layers"): they do not know that a KVM exists.  What they need from the
 * outside comes in through this struct, which the launcher fills
 * (launcher/wiring.c; launcher/run_thread.c without a VM) and a unit test
 * fills with fake RAM and a log of the line (tests/unit/irq_line_log.h):
 *
 *   guest RAM        the one mapping every ring walk and copy goes through;
 *   set_irq_line     drive a device's interrupt line to a level: the
 *                    transport holds it high while InterruptStatus is not 0
 *                    (virtio 1.2, 4.2.3.4) and calls this only when that
 *                    changes (virtio_mmio.c);
 *   kick_vcpu        get the vCPU out of the guest so that it looks at
 *                    device work (the lguest model's waker).
 *
 * The other direction -- the eventfds a device wants routed without a VM
 * exit -- is the transport's notify_fd[] (virtio_mmio.h): the device
 * creates them, the VMM registers them (KVM ioeventfds; plain eventfds in
 * the model without a VM).  The line has no such eventfd: an irqfd can only
 * pulse it, never hold it (docs/qemu.md, section 1).
 */
#ifndef DEVICE_HOST_H
#define DEVICE_HOST_H

#include <stdbool.h>

#include "guest_mem.h"

struct device_host {
	const struct guest_mem *mem;
	/* Line `gsi` to `level` (true: asserted).  Called with the device's
	 * lock held, so the calls for one line come in the order of the
	 * changes they stand for, alternating true and false.  NULL: nothing
	 * takes the line. */
	void (*set_irq_line)(void *ctx, unsigned gsi, bool level);
	void (*kick_vcpu)(void *ctx);
	void *ctx;
};

#endif
