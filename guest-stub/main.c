/*
 * main.c -- the guest stub's CPL3 entry: from the PVH start info to a
 * finished workload.
 *
 * entry.S leaves us here at CPL3 with the start info pointer.  We find our
 * RAM in the memory map, read the command line (or, when it names no
 * devices, probe QEMU microvm's window for them: microvm_probe.c), route the
 * devices' interrupt lines through the IOAPIC(s), bring up the console,
 * print the banner and parameters, run the workload, hand our counters to
 * the launcher through the report port -- and, under a VMM without that
 * port, also as one `lkvm-report:` line on the console -- and leave through
 * the exit port.
 */
#include <linux/virtio_ids.h>
#include <stdbool.h>
#include <stddef.h>

#include "cmdline.h"
#include "console_drv.h"
#include "io.h"
#include "lib.h"
#include "microvm_probe.h"
#include "pvh_start_info.h"
#include "workloads.h"

#define IOAPIC 0xfec00000ull
/* QEMU's second IOAPIC (microvm with ACPI): GSIs 24..47. */
#define IOAPIC2 0xfec10000ull
#define IOAPIC_PINS 24u

struct lkvm_guest_report guest_report;
extern char _end[];

/* Edge-triggered, active high, fixed delivery to APIC 0, vector 0x20+irq
 * for the first IOAPIC's pins.  A GSI on the second IOAPIC gets vector
 * 0x20+pin: the interrupt stubs do not tell vectors apart, and 0x20..0x37
 * stays clear of the APIC timer (0x3e) and the launcher's kick (0x3f). */
static void ioapic_route(unsigned gsi)
{
	uint64_t ioapic = gsi < IOAPIC_PINS ? IOAPIC : IOAPIC2;
	unsigned pin = gsi % IOAPIC_PINS;

	mmio_write32(ioapic, 0x10 + 2 * pin);
	mmio_write32(ioapic + 0x10, LKVM_IRQ_VECTOR_BASE + pin);
	mmio_write32(ioapic, 0x11 + 2 * pin);
	mmio_write32(ioapic + 0x10, 0);
}

/* Without lkvm.tsc_khz (another VMM), measure the TSC against the local
 * APIC timer, which counts at 1 GHz with divide-by-1 under KVM and under
 * QEMU's own APIC: 10 ms of its count, masked so it never fires.  A timer
 * that does not count gives 0 after 2^40 TSC ticks (minutes), and the tcp
 * workload then stops with its usual message. */
static uint32_t tsc_khz_measured(void)
{
	const uint32_t window_ns = 10000000;
	uint64_t t0, t1;
	uint32_t left;

	mmio_write32(LAPIC_BASE + 0x3e0, 0xb);                        /* divide by 1 */
	mmio_write32(LAPIC_BASE + 0x320, 1u << 16 | LAPIC_TIMER_VECTOR); /* masked */
	mmio_write32(LAPIC_BASE + 0x380, 0xffffffff);
	t0 = rdtsc();
	do {
		left = mmio_read32(LAPIC_BASE + 0x390);
		t1 = rdtsc();
		if (t1 - t0 > 1ull << 40)
			return 0;
	} while (0xffffffff - left < window_ns);
	mmio_write32(LAPIC_BASE + 0x380, 0);                          /* stop it */
	return (uint32_t)((t1 - t0) * 1000000 / (0xffffffffull - left));
}

/* The report as `key=value` words, named as the struct's fields (the
 * launcher's stats call them guest_<field>). */
#define FIELD(f) { #f, offsetof(struct lkvm_guest_report, f) }
static const struct { const char *name; size_t off; } report_fields[] = {
	FIELD(tx_bytes), FIELD(tx_frames), FIELD(tx_kicks), FIELD(tx_notifies),
	FIELD(tx_notifies_suppressed), FIELD(tx_notifies_forced), FIELD(tx_ring_full),
	FIELD(tx_full_ring_reads_zero), FIELD(tx_threshold_final), FIELD(tx_waits_halted),
	FIELD(tx_buffers_indirect), FIELD(tx_buffers_direct), FIELD(tx_descriptors_used),
	FIELD(irq_count), FIELD(timer_irqs), FIELD(irqs_at_hlt), FIELD(tsc_workload),
	FIELD(tcp_state), FIELD(tcp_arp_requests), FIELD(tcp_peer_mac_known), FIELD(tcp_bytes_acked),
	FIELD(tcp_segments_sent), FIELD(tcp_segments_received), FIELD(tcp_retransmits),
	FIELD(tcp_timeouts), FIELD(tcp_fast_retransmits), FIELD(tcp_dupacks), FIELD(tcp_window_probes),
	FIELD(tcp_mss), FIELD(tcp_srtt_ns), FIELD(tcp_waits_halted), FIELD(rx_frames), FIELD(rx_frames_dropped),
	FIELD(tx_indirect_tables), FIELD(tx_indirect_build_ticks), FIELD(tx_indirect_cost_ticks),
	FIELD(tx_wait_ticks),
};

/* One line a host script can parse (docs/qemu.md): where no report port
 * exists, the console is the only way out for the counters. */
static void report_on_console(const struct params *p, int status)
{
	static char line[2048];
	int n = snprintf(line, sizeof(line), "lkvm-report: version=%u workload=%s policy=%s status=%d tsc_khz=%u",
			 LKVM_REPORT_VERSION, p->workload, p->policy, status, p->tsc_khz);

	for (size_t i = 0; i < sizeof(report_fields) / sizeof(report_fields[0]) && n < (int)sizeof(line); i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%lu", report_fields[i].name,
			      *(const uint64_t *)((const char *)&guest_report + report_fields[i].off));
	if (n < (int)sizeof(line) - 1)
		line[n++] = '\n';
	console_write(line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
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
	guest_report.timer_irqs = timer_seq;
	guest_report.irqs_at_hlt = irqs_at_hlt;
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
	bool probed;
	int status;

	if (si->magic != HVM_START_MAGIC_VALUE)
		guest_exit(LKVM_STATUS_FAILED);
	heap_init((uint64_t)_end, ram_end(si));
	if (cmdline_parse(cmdline, &p) < 0)
		guest_exit(LKVM_STATUS_FAILED);
	probed = !p.ndev;
	if (probed && !microvm_probe(&p))
		uart_puts("lguest-stub: no virtio_mmio.device= word and no virtio-mmio transport "
			  "at 0xfeb00000 (QEMU -M microvm)\n");
	/* KVM resets LVT0 to ExtINT, so the legacy PIC would deliver ISA lines
	 * too (as vectors 0-15, i.e. as exceptions).  Mask it and LVT0; all
	 * device interrupts go through the IOAPIC. */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	mmio_write32(LAPIC_BASE + 0x350, 1u << 16);
	for (unsigned i = 0; i < p.ndev; i++)
		ioapic_route(p.dev[i].irq);
	con = find_device(&p, VIRTIO_ID_CONSOLE);
	if (!con || console_drv_init(con->base, con->irq) < 0) {
		if (probed)
			uart_puts("lguest-stub: no usable virtio console (QEMU: -device virtio-serial-device "
				  "-device virtconsole,chardev=...)\n");
		guest_exit(LKVM_STATUS_FAILED);
	}
	if (p.report == REPORT_AUTO)
		p.report = con->base >= LKVM_MMIO_BASE && con->base < LKVM_MMIO_BASE + MAX_DEVICES * LKVM_MMIO_SIZE
			   ? REPORT_PORT : REPORT_CONSOLE;

	printf("lguest-kvm guest stub " LKVM_VERSION ": %lu MiB RAM, %u virtio-mmio device(s), running at CPL3\n",
	       ram_end(si) >> 20, p.ndev);
	printf("command line: %s\n", cmdline);
	if (!p.tsc_khz_given && (streq(p.workload, "tcp") || p.pace_ns || p.indirect_cost_ns)) {
		p.tsc_khz = tsc_khz_measured();
		printf("tsc: no lkvm.tsc_khz, measured %u kHz against the local APIC timer\n", p.tsc_khz);
	}

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
	if (p.report == REPORT_CONSOLE)
		report_on_console(&p, status);
	guest_exit(status);
}
