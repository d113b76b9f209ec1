/*
 * main.c -- the guest stub's CPL3 entry: from the PVH start info to a
 * finished workload.
 *
 * entry.S leaves us here at CPL3 with the start info pointer.  We find our
 * RAM in the memory map, read the command line, route the devices'
 * interrupt lines through the IOAPIC, bring up the console, print the banner
 * and parameters, run the workload, hand the launcher our counters through
 * the report port, and leave through the exit port.
 */
#include <linux/virtio_ids.h>

#include "cmdline.h"
#include "console_drv.h"
#include "io.h"
#include "lib.h"
#include "pvh_start_info.h"
#include "workloads.h"

#define IOAPIC 0xfec00000ull

struct lkvm_guest_report guest_report;
extern char _end[];

const struct mmio_window *find_device(const struct params *p, uint32_t device_id)
{
	for (unsigned i = 0; i < p->ndev; i++)
		if (mmio_read32(p->dev[i].base) == 0x74726976 && mmio_read32(p->dev[i].base + 8) == device_id)
			return &p->dev[i];
	return 0;
}

/* Edge-triggered, active high, fixed delivery to APIC 0, vector 0x20+irq. */
static void ioapic_route(unsigned irq)
{
	mmio_write32(IOAPIC, 0x10 + 2 * irq);
	mmio_write32(IOAPIC + 0x10, LKVM_IRQ_VECTOR_BASE + irq);
	mmio_write32(IOAPIC, 0x11 + 2 * irq);
	mmio_write32(IOAPIC + 0x10, 0);
}

static uint64_t ram_end(const struct hvm_start_info *si)
{
	const struct hvm_memmap_table_entry *m = (const void *)si->memmap_paddr;
	uint64_t end = 0;

	for (uint32_t i = 0; i < si->memmap_entries; i++)
		if (m[i].type == HVM_MEMMAP_TYPE_RAM && m[i].addr <= (uint64_t)_end && m[i].addr + m[i].size > end)
			end = m[i].addr + m[i].size;
	return end;
}

static void report_to_launcher(void)
{
	guest_report.magic = LKVM_REPORT_MAGIC;
	guest_report.version = LKVM_REPORT_VERSION;
	guest_report.size = sizeof(guest_report);
	guest_report.irq_count = irq_seq;
	outl(LKVM_PORT_REPORT, (uint32_t)(uint64_t)&guest_report);
}

__attribute__((noreturn)) void stub_main(const struct hvm_start_info *si)
{
	static struct params p = {
		.workload = "raw", .policy = "dynamic", .fault = "none",
		.bytes = 1ull << 30, .frame = 1514, .ring = 128, .segments = 3,
	};
	const char *cmdline = (const char *)si->cmdline_paddr;
	const struct mmio_window *con;
	int status;

	if (si->magic != HVM_START_MAGIC_VALUE)
		guest_exit(LKVM_STATUS_FAILED);
	heap_init((uint64_t)_end, ram_end(si));
	if (cmdline_parse(cmdline, &p) < 0)
		guest_exit(LKVM_STATUS_FAILED);
	/* KVM resets LVT0 to ExtINT, so the legacy PIC would deliver ISA lines
	 * too (as vectors 0-15, i.e. as exceptions).  Mask it and LVT0; all
	 * device interrupts go through the IOAPIC. */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	mmio_write32(LAPIC_BASE + 0x350, 1u << 16);
	for (unsigned i = 0; i < p.ndev; i++)
		ioapic_route(p.dev[i].irq);
	con = find_device(&p, VIRTIO_ID_CONSOLE);
	if (!con || console_drv_init(con->base, con->irq) < 0)
		guest_exit(LKVM_STATUS_FAILED);

	printf("lguest-kvm guest stub " LKVM_VERSION ": %lu MiB RAM, %u virtio-mmio device(s), running at CPL3\n",
	       ram_end(si) >> 20, p.ndev);
	printf("command line: %s\n", cmdline);

	if (!streq(p.fault, "none"))
		status = workload_fault(&p);
	else if (streq(p.workload, "raw"))
		status = workload_raw(&p);
	else if (streq(p.workload, "tcp"))
		status = workload_tcp(&p);
	else if (streq(p.workload, "echo"))
		status = workload_echo();
	else if (streq(p.workload, "boot"))
		status = (int)p.boot_status;
	else {
		printf("guest: unknown workload\n");
		status = LKVM_STATUS_FAILED;
	}
	report_to_launcher();
	guest_exit(status);
}
