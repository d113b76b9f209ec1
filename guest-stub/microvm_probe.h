/*
 * microvm_probe.h -- find virtio-mmio devices when nobody names them on the
 * command line: QEMU's `-M microvm` with ACPI (its default) describes its
 * transports only in ACPI tables, which the stub does not read, so it looks
 * at the machine's fixed window of transports instead (docs/qemu.md).
 */
#ifndef MICROVM_PROBE_H
#define MICROVM_PROBE_H

#include "cmdline.h"

/* microvm's layout (QEMU hw/i386/microvm.c): transports of 512 bytes from
 * 0xfeb00000.  With ACPI and the second IOAPIC there are 24 of them on GSIs
 * 24..47; with ACPI and one IOAPIC (ioapic2=off) 8 on GSIs 16..23.  Without
 * ACPI QEMU writes virtio_mmio.device= words itself and nothing is probed. */
#define MICROVM_MMIO_BASE       0xfeb00000ull
#define MICROVM_MMIO_SLOT       512u
#define MICROVM_SLOTS_IOAPIC2   24u
#define MICROVM_GSI_IOAPIC2     24u
#define MICROVM_SLOTS_ONE_IOAPIC 8u
#define MICROVM_GSI_ONE_IOAPIC  16u

/* Fill p->dev with the console and net transports found in the window
 * (highest slot first: QEMU gives the first -device the last slot, so the
 * first console and net on QEMU's command line are the ones used).
 * Returns the number of transports that answered at all, 0 if none. */
unsigned microvm_probe(struct params *p);

/* One line on the 16550 at 0x3f8 (microvm has one unless isa-serial=off):
 * the only way to say why when there is no usable virtio console.  Only for
 * a probed machine -- our launcher has no UART. */
void uart_puts(const char *s);

#endif
