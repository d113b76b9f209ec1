/*
 * acpi.h -- the ACPI tables a Linux guest reads to find its machine.
 *
 * Debian's kernel has virtio-mmio only as a module and without
 * CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES, so the stub's "virtio_mmio.device="
 * words mean nothing to it: it finds our devices only as DSDT devices with
 * _HID "LNRO0005".  acpi_build() writes the smallest set of tables that
 * says what this machine is (ACPI 6.4 numbering in acpi.c):
 *
 *   RSDP -> XSDT -> FADT (hardware-reduced: no PM timer, no SCI, no PIC,
 *                         no CMOS RTC, no 8042; sleep registers for S5)
 *                -> MADT (one local APIC, the IOAPIC, level overrides
 *                         for the virtio lines below 16)
 *           FADT -> DSDT (\_SB.VRnn per virtio-mmio slot: its window and
 *                         its level, active-high interrupt; \_S5)
 *
 * The tables are built in a host buffer for a given guest address (every
 * pointer between them is a guest address) and copied into guest RAM by
 * the caller.  The RSDP is at offset 0 of the buffer.
 */
#ifndef ACPI_H
#define ACPI_H

#include <stddef.h>
#include <stdint.h>

#define ACPI_TABLES_MAX 4096u      /* what acpi_build may use, at most */
#define ACPI_MMIO_SLOTS_MAX 8u

struct acpi_mmio_slot {
	uint64_t base;              /* the virtio-mmio register window */
	uint32_t size;
	uint32_t gsi;               /* its IOAPIC input: a level, active high */
};

struct acpi_machine {
	uint32_t lapic_base;        /* 0xfee00000 */
	uint32_t ioapic_base;       /* 0xfec00000 */
	uint8_t ioapic_id;
	uint16_t sleep_port;        /* FADT sleep control (this) and status (this + 1) ports */
	unsigned n_slots;
	struct acpi_mmio_slot slots[ACPI_MMIO_SLOTS_MAX];
};

/* The S5 sleep type the DSDT's \_S5 names: writing (ACPI_S5_SLP_TYP << 2) |
 * ACPI_SLP_EN to the sleep control port is the guest's power-off. */
#define ACPI_S5_SLP_TYP 5u
#define ACPI_SLP_EN     0x20u

/* Offsets of the tables in the buffer, for the tests. */
#define ACPI_RSDP_LEN 36u

/* Write the tables for guest address `gpa` into buf.  Returns the bytes
 * used, or -1 with diag set (too many slots, buffer too small). */
int acpi_build(const struct acpi_machine *m, uint64_t gpa, uint8_t *buf, size_t size);

/* The byte sum of [p, p + len) mod 256: 0 for a table with a correct
 * checksum. */
uint8_t acpi_sum(const uint8_t *p, size_t len);

#endif
