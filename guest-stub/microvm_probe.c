/*
 * microvm_probe.c -- the devices of a QEMU microvm that did not name them.
 *
 * Runs at CPL3 before the console exists, only when the command line has no
 * virtio_mmio.device= word (our launcher always passes them, so it never
 * gets here).  Each 512-byte slot of microvm's window answers with its
 * MagicValue, Version and DeviceID -- an empty transport has DeviceID 0 --
 * so reading three registers per slot finds the console and the net card.
 * Slot 8 tells the layout apart: it is a transport only when the second
 * IOAPIC gives microvm 24 of them, which also fixes their GSIs.  The window
 * lies in the top GiB that entry.S maps uncached and user-accessible, so no
 * CPL0 help is needed.  A legacy (version 1) transport is not used; the one
 * line saying why goes to the UART, since the console may be the legacy one.
 */
#include "microvm_probe.h"

#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <stdbool.h>

#include "io.h"
#include "lib.h"

#define VIRTIO_MAGIC 0x74726976   /* "virt" */
#define UART_BASE 0x3f8

void uart_puts(const char *s)
{
	for (; *s; s++) {
		/* Wait for an empty transmit holding register (LSR bit 5), but not
		 * for ever: a missing UART may read back 0. */
		for (unsigned spins = 0; spins < 100000 && !(inb(UART_BASE + 5) & 0x20); spins++)
			cpu_relax();
		if (*s == '\n')
			outb(UART_BASE, '\r');
		outb(UART_BASE, (uint8_t)*s);
	}
}

static bool is_transport(uint64_t base)
{
	return mmio_read32(base + VIRTIO_MMIO_MAGIC_VALUE) == VIRTIO_MAGIC;
}

unsigned microvm_probe(struct params *p)
{
	bool ioapic2 = is_transport(MICROVM_MMIO_BASE + MICROVM_SLOTS_ONE_IOAPIC * MICROVM_MMIO_SLOT);
	unsigned slots = ioapic2 ? MICROVM_SLOTS_IOAPIC2 : MICROVM_SLOTS_ONE_IOAPIC;
	unsigned gsi_base = ioapic2 ? MICROVM_GSI_IOAPIC2 : MICROVM_GSI_ONE_IOAPIC;
	unsigned answered = 0, legacy = 0;

	for (unsigned slot = slots; slot-- > 0;) {
		uint64_t base = MICROVM_MMIO_BASE + (uint64_t)slot * MICROVM_MMIO_SLOT;
		uint32_t id;

		if (!is_transport(base))
			continue;
		answered++;
		id = mmio_read32(base + VIRTIO_MMIO_DEVICE_ID);
		if (id != VIRTIO_ID_CONSOLE && id != VIRTIO_ID_NET)
			continue;
		if (mmio_read32(base + VIRTIO_MMIO_VERSION) != 2) {
			legacy++;
			continue;
		}
		if (p->ndev < MAX_DEVICES)
			p->dev[p->ndev++] = (struct mmio_window){ .base = base, .size = MICROVM_MMIO_SLOT,
								  .irq = gsi_base + slot };
	}
	if (legacy)
		uart_puts("lguest-stub: a virtio-mmio transport is legacy (version 1); "
			  "run QEMU with -global virtio-mmio.force-legacy=false\n");
	return answered;
}
