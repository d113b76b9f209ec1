/*
 * acpi.c -- write the ACPI tables of acpi.h into a buffer.
 *
 * Why a file of its own: a Linux guest learns where our virtio-mmio devices
 * are, which interrupt each one raises, and that the machine has no legacy
 * PC hardware, only from ACPI (the stub learns it from its command line).
 *
 * How the bytes come about: each table is appended to the buffer at a
 * 16-byte boundary with a zeroed checksum, its length and checksum patched
 * once it is complete; the RSDP comes first and is finished last, when the
 * XSDT's address is known.  The DSDT's AML is assembled by hand from the
 * ACPI 6.4 grammar (section 20): an `aml` cursor appends bytes, and a
 * package (Scope, Device, Buffer, Package) opens with room for the largest
 * PkgLength, which aml_close() shrinks to the smallest encoding that fits
 * (20.2.4) by moving the contents down.  Section numbers below are ACPI 6.4's.
 */
#include "acpi.h"

#include <string.h>

#include "diag.h"

/* ---- the buffer ---- */

struct acpi_buf {
	uint8_t *p;
	size_t len, cap;
	int overflow;
};

static uint8_t *buf_take(struct acpi_buf *b, size_t n)
{
	uint8_t *at;

	if (b->overflow || n > b->cap - b->len) {
		b->overflow = 1;
		return NULL;
	}
	at = b->p + b->len;
	memset(at, 0, n);
	b->len += n;
	return at;
}

static void put_bytes(struct acpi_buf *b, const void *v, size_t n)
{
	uint8_t *at = buf_take(b, n);

	if (at)
		memcpy(at, v, n);
}

static void put8(struct acpi_buf *b, uint8_t v) { put_bytes(b, &v, 1); }
static void put16(struct acpi_buf *b, uint16_t v) { put_bytes(b, &v, 2); }   /* x86: little endian */
static void put32(struct acpi_buf *b, uint32_t v) { put_bytes(b, &v, 4); }
static void put64(struct acpi_buf *b, uint64_t v) { put_bytes(b, &v, 8); }

static void align16(struct acpi_buf *b)
{
	buf_take(b, (16 - b->len % 16) % 16);
}

uint8_t acpi_sum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum += *p++;
	return sum;
}

/* ---- tables: the common header (5.2.6) ---- */

#define OEM_ID       "LGKVM "     /* 6 bytes */
#define OEM_TABLE_ID "LGUESTKV"   /* 8 bytes */
#define CREATOR_ID   "LKVM"

/* Start a table at a 16-byte boundary; returns its offset in the buffer. */
static size_t table_open(struct acpi_buf *b, const char sig[4], uint8_t revision)
{
	size_t at;

	align16(b);
	at = b->len;
	put_bytes(b, sig, 4);
	put32(b, 0);                  /* length, patched by table_close */
	put8(b, revision);
	put8(b, 0);                   /* checksum, patched by table_close */
	put_bytes(b, OEM_ID, 6);
	put_bytes(b, OEM_TABLE_ID, 8);
	put32(b, 1);                  /* OEM revision */
	put_bytes(b, CREATOR_ID, 4);
	put32(b, 1);                  /* creator revision */
	return at;
}

static void table_close(struct acpi_buf *b, size_t at)
{
	uint32_t len = (uint32_t)(b->len - at);

	if (b->overflow)
		return;
	memcpy(b->p + at + 4, &len, 4);
	b->p[at + 9] = (uint8_t)-acpi_sum(b->p + at, len);
}

/* A Generic Address Structure (5.2.3.2) for a byte-wide I/O port. */
static void put_gas_io8(struct acpi_buf *b, uint16_t port)
{
	put8(b, port ? 1 : 0);        /* address space: system I/O */
	put8(b, port ? 8 : 0);        /* register bit width */
	put8(b, 0);                   /* bit offset */
	put8(b, port ? 1 : 0);        /* access size: byte */
	put64(b, port);
}

/* ---- FADT (5.2.9): hardware-reduced ---- */

#define FADT_F_WBINVD          (1u << 0)
#define FADT_F_PWR_BUTTON      (1u << 4)   /* no fixed-feature power button */
#define FADT_F_SLP_BUTTON      (1u << 5)   /* ... nor sleep button */
#define FADT_F_HW_REDUCED_ACPI (1u << 20)
#define BOOT_ARCH_VGA_NOT_PRESENT  (1u << 2)
#define BOOT_ARCH_CMOS_RTC_NOT_PRESENT (1u << 5)

static size_t write_fadt(struct acpi_buf *b, const struct acpi_machine *m, uint64_t dsdt_gpa)
{
	size_t at = table_open(b, "FACP", 6);

	put32(b, 0);                  /* 36 FIRMWARE_CTRL: no FACS (optional when hardware-reduced) */
	put32(b, (uint32_t)dsdt_gpa); /* 40 DSDT */
	put8(b, 0);                   /* 44 reserved */
	put8(b, 0);                   /* 45 preferred PM profile: unspecified */
	put16(b, 0);                  /* 46 SCI_INT: none, hardware-reduced */
	put32(b, 0);                  /* 48 SMI_CMD: no SMM, so no ACPI mode switch */
	buf_take(b, 109 - 52);        /* 52..108: ACPI_ENABLE .. CENTURY, the PM blocks: none */
	put16(b, BOOT_ARCH_VGA_NOT_PRESENT | BOOT_ARCH_CMOS_RTC_NOT_PRESENT); /* 109 IAPC_BOOT_ARCH: no 8042, no legacy devices */
	put8(b, 0);                   /* 111 reserved */
	put32(b, FADT_F_WBINVD | FADT_F_PWR_BUTTON | FADT_F_SLP_BUTTON | FADT_F_HW_REDUCED_ACPI); /* 112 flags */
	put_gas_io8(b, 0);            /* 116 RESET_REG: none */
	put8(b, 0);                   /* 128 RESET_VALUE */
	put16(b, 0);                  /* 129 ARM_BOOT_ARCH */
	put8(b, 4);                   /* 131 FADT minor version: 6.4 */
	put64(b, 0);                  /* 132 X_FIRMWARE_CTRL */
	put64(b, dsdt_gpa);           /* 140 X_DSDT */
	buf_take(b, 8 * 12);          /* 148..243: X_PM1a_EVT_BLK .. X_GPE1_BLK: none */
	put_gas_io8(b, m->sleep_port);                      /* 244 SLEEP_CONTROL_REG */
	put_gas_io8(b, m->sleep_port ? m->sleep_port + 1 : 0); /* 256 SLEEP_STATUS_REG */
	put_bytes(b, "LGUESTKV", 8);  /* 268 hypervisor vendor identity */
	table_close(b, at);           /* 276 bytes */
	return at;
}

/* ---- MADT (5.2.12) ---- */

#define MADT_LOCAL_APIC   0
#define MADT_IO_APIC      1
#define MADT_INT_OVERRIDE 2
#define MADT_LAPIC_NMI    4
#define MPS_INTI_ACTIVE_HIGH 0x1
#define MPS_INTI_LEVEL       0xc

static size_t write_madt(struct acpi_buf *b, const struct acpi_machine *m)
{
	size_t at = table_open(b, "APIC", 5);

	put32(b, m->lapic_base);
	put32(b, 0);                  /* flags: no PCAT_COMPAT, there is no 8259 to mask */
	/* 5.2.12.2: the one vCPU, ACPI processor UID 0, APIC ID 0, enabled */
	put8(b, MADT_LOCAL_APIC); put8(b, 8); put8(b, 0); put8(b, 0); put32(b, 1);
	/* 5.2.12.3: the in-kernel IOAPIC, GSIs from 0 */
	put8(b, MADT_IO_APIC); put8(b, 12); put8(b, m->ioapic_id); put8(b, 0);
	put32(b, m->ioapic_base); put32(b, 0);
	/* 5.2.12.5: an ISA IRQ number is edge, active high unless overridden;
	 * ours are levels (virtio 1.2 4.2.3.4), so say so for those below 16 */
	for (unsigned i = 0; i < m->n_slots; i++) {
		if (m->slots[i].gsi >= 16)
			continue;
		put8(b, MADT_INT_OVERRIDE); put8(b, 10); put8(b, 0); put8(b, (uint8_t)m->slots[i].gsi);
		put32(b, m->slots[i].gsi); put16(b, MPS_INTI_ACTIVE_HIGH | MPS_INTI_LEVEL);
	}
	/* 5.2.12.7: NMI on LINT1 of every processor (0xff), as on a PC */
	put8(b, MADT_LAPIC_NMI); put8(b, 6); put8(b, 0xff); put16(b, 0); put8(b, 1);
	table_close(b, at);
	return at;
}

/* ---- AML (section 20) ---- */

#define AML_ZERO          0x00
#define AML_ONE           0x01
#define AML_NAME          0x08
#define AML_BYTE_PREFIX   0x0a
#define AML_DWORD_PREFIX  0x0c
#define AML_STRING_PREFIX 0x0d
#define AML_SCOPE         0x10
#define AML_BUFFER        0x11
#define AML_PACKAGE       0x12
#define AML_EXT_PREFIX    0x5b
#define AML_DEVICE        0x82   /* after AML_EXT_PREFIX */
#define AML_ROOT_CHAR     0x5c   /* '\' */

/* Open a package: room for a 4-byte PkgLength; returns where it starts. */
static size_t aml_open(struct acpi_buf *b)
{
	size_t at = b->len;

	buf_take(b, 4);
	return at;
}

/* 20.2.4: PkgLength counts itself and what follows.  One byte holds up to
 * 63; otherwise bits 7-6 of the lead byte say how many bytes follow, its
 * bits 3-0 hold the low nibble, and each following byte 8 more bits. */
static void aml_close(struct acpi_buf *b, size_t at)
{
	size_t body, total, n;
	uint8_t *p;

	if (b->overflow)
		return;
	body = b->len - at - 4;
	for (n = 1; n < 4; n++)
		if (body + n <= (n == 1 ? 63u : (1u << (4 + 8 * (n - 1))) - 1))
			break;
	total = body + n;
	p = b->p + at;
	memmove(p + n, p + 4, body);
	b->len -= 4 - n;
	if (n == 1) {
		p[0] = (uint8_t)total;
		return;
	}
	p[0] = (uint8_t)((n - 1) << 6 | (total & 0xf));
	for (size_t i = 1; i < n; i++)
		p[i] = (uint8_t)(total >> (4 + 8 * (i - 1)));
}

static void aml_nameseg(struct acpi_buf *b, const char seg[4])
{
	put_bytes(b, seg, 4);
}

static void aml_integer(struct acpi_buf *b, uint32_t v)
{
	if (v <= 1) {
		put8(b, v ? AML_ONE : AML_ZERO);
	} else if (v <= 0xff) {
		put8(b, AML_BYTE_PREFIX);
		put8(b, (uint8_t)v);
	} else {
		put8(b, AML_DWORD_PREFIX);
		put32(b, v);
	}
}

/* Name(SEG, "text") */
static void aml_name_string(struct acpi_buf *b, const char seg[4], const char *text)
{
	put8(b, AML_NAME);
	aml_nameseg(b, seg);
	put8(b, AML_STRING_PREFIX);
	put_bytes(b, text, strlen(text) + 1);
}

static void aml_name_integer(struct acpi_buf *b, const char seg[4], uint32_t v)
{
	put8(b, AML_NAME);
	aml_nameseg(b, seg);
	aml_integer(b, v);
}

/* Resource descriptors (6.4): a Memory32Fixed window (6.4.3.4), an
 * Extended Interrupt (6.4.3.6) and the End Tag (6.4.2.9). */
#define RES_MEMORY32_FIXED 0x86
#define RES_EXT_INTERRUPT  0x89
#define RES_END_TAG        0x79
#define RES_MEM_READ_WRITE 0x01
#define RES_INT_CONSUMER   0x01   /* bit 1 clear: level; bit 2 clear: active high; bit 3 clear: exclusive */

/* Name(_CRS, ResourceTemplate() { Memory32Fixed(ReadWrite, base, size)
 *   Interrupt(ResourceConsumer, Level, ActiveHigh, Exclusive) { gsi } }) */
static void aml_virtio_crs(struct acpi_buf *b, const struct acpi_mmio_slot *s)
{
	size_t buffer;

	put8(b, AML_NAME);
	aml_nameseg(b, "_CRS");
	put8(b, AML_BUFFER);
	buffer = aml_open(b);
	aml_integer(b, 12 + 9 + 2);   /* BufferSize */
	put8(b, RES_MEMORY32_FIXED); put16(b, 9);
	put8(b, RES_MEM_READ_WRITE); put32(b, (uint32_t)s->base); put32(b, s->size);
	put8(b, RES_EXT_INTERRUPT); put16(b, 6);
	put8(b, RES_INT_CONSUMER); put8(b, 1); put32(b, s->gsi);
	put8(b, RES_END_TAG); put8(b, 0);   /* checksum 0: "treat as correct" */
	aml_close(b, buffer);
}

static size_t write_dsdt(struct acpi_buf *b, const struct acpi_machine *m)
{
	size_t at = table_open(b, "DSDT", 2), scope, dev, pkg;

	/* Scope(\_SB) { Device(VRnn) { _HID, _UID, _CRS } ... } */
	put8(b, AML_SCOPE);
	scope = aml_open(b);
	put8(b, AML_ROOT_CHAR);
	aml_nameseg(b, "_SB_");
	for (unsigned i = 0; i < m->n_slots; i++) {
		char seg[4] = { 'V', 'R', "0123456789ABCDEF"[i >> 4 & 0xf], "0123456789ABCDEF"[i & 0xf] };

		put8(b, AML_EXT_PREFIX);
		put8(b, AML_DEVICE);
		dev = aml_open(b);
		aml_nameseg(b, seg);
		/* The ID Linux's virtio_mmio driver matches (its acpi_match_table). */
		aml_name_string(b, "_HID", "LNRO0005");
		aml_name_integer(b, "_UID", i);
		aml_virtio_crs(b, &m->slots[i]);
		aml_close(b, dev);
	}
	aml_close(b, scope);
	/* Name(\_S5, Package() { SLP_TYPa, SLP_TYPb }) (7.4.2): the power-off */
	put8(b, AML_NAME);
	put8(b, AML_ROOT_CHAR);
	aml_nameseg(b, "_S5_");
	put8(b, AML_PACKAGE);
	pkg = aml_open(b);
	put8(b, 2);                   /* NumElements */
	aml_integer(b, ACPI_S5_SLP_TYP);
	aml_integer(b, ACPI_S5_SLP_TYP);
	aml_close(b, pkg);
	table_close(b, at);
	return at;
}

/* ---- RSDP (5.2.5) and XSDT (5.2.8) ---- */

int acpi_build(const struct acpi_machine *m, uint64_t gpa, uint8_t *buf, size_t size)
{
	struct acpi_buf b = { .p = buf, .cap = size };
	size_t dsdt, fadt, madt, xsdt;
	uint8_t *rsdp;

	if (m->n_slots > ACPI_MMIO_SLOTS_MAX)
		return diag_fail("ACPI: %u virtio-mmio slots, at most %u", m->n_slots, ACPI_MMIO_SLOTS_MAX);
	rsdp = buf_take(&b, ACPI_RSDP_LEN);
	dsdt = write_dsdt(&b, m);
	fadt = write_fadt(&b, m, gpa + dsdt);
	madt = write_madt(&b, m);
	xsdt = table_open(&b, "XSDT", 1);
	put64(&b, gpa + fadt);
	put64(&b, gpa + madt);
	table_close(&b, xsdt);
	if (b.overflow || !rsdp)
		return diag_fail("ACPI tables need more than %zu bytes", size);

	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, OEM_ID, 6);
	rsdp[15] = 2;                 /* revision: ACPI 2.0+, the XSDT is valid */
	/* 16: RsdtAddress 0 -- there is no RSDT, only the XSDT */
	rsdp[20] = ACPI_RSDP_LEN;
	{
		uint64_t x = gpa + xsdt;

		memcpy(rsdp + 24, &x, 8);
	}
	rsdp[8] = (uint8_t)-acpi_sum(rsdp, 20);              /* the ACPI 1.0 part */
	rsdp[32] = (uint8_t)-acpi_sum(rsdp, ACPI_RSDP_LEN);  /* the whole structure */
	return (int)b.len;
}
