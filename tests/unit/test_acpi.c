/*
 * test_acpi.c -- the ACPI tables (launcher/acpi.c), read back the way a
 * guest's ACPI code reads them.
 *
 * From the RSDP on, every pointer is followed as a guest address, every
 * checksum summed, the FADT's fields read at their ACPI 6.4 offsets, the
 * MADT's entries walked by their lengths, and the DSDT's AML parsed by a
 * small decoder written here from the grammar (PkgLength, NameSeg, Scope,
 * Device, Name, strings, integers, Buffer, Package) down to each device's
 * resource descriptors.  Anything the decoder does not understand is a
 * failure, so an encoding slip in acpi.c cannot pass unnoticed.  With
 * `--write DIR` it also writes each table as DIR/SIG.dat for
 * tests/integration/test_acpi_iasl.sh (Debian's iasl -d).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "acpi.h"
#include "check.h"

#define GPA 0xe0000u

static uint8_t buf[ACPI_TABLES_MAX];
static int used;

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* A table at guest address gpa: inside what was built, with its length. */
static const uint8_t *table_at(uint64_t gpa, const char *sig)
{
	const uint8_t *t;

	if (gpa < GPA || gpa + 36 > GPA + (uint64_t)used)
		return NULL;
	t = buf + (gpa - GPA);
	if (memcmp(t, sig, 4) || gpa + rd32(t + 4) > GPA + (uint64_t)used)
		return NULL;
	return t;
}

/* ---- a small AML reader ---- */

struct aml {
	const uint8_t *p, *end;
	bool bad;
};

static unsigned pkglength(struct aml *a, const uint8_t **pkg_end)
{
	const uint8_t *start = a->p;
	unsigned lead, n, len;

	if (a->p >= a->end) { a->bad = true; return 0; }
	lead = *a->p++;
	n = lead >> 6;
	len = n ? lead & 0xf : lead & 0x3f;
	if (n && (lead & 0x30)) a->bad = true;   /* bits 5-4 must be 0 in a multi-byte PkgLength */
	for (unsigned i = 0; i < n; i++) {
		if (a->p >= a->end) { a->bad = true; return 0; }
		len |= (unsigned)*a->p++ << (4 + 8 * i);
	}
	/* the encoding is the shortest that fits, as acpi.c promises */
	if (n && len <= 63) a->bad = true;
	*pkg_end = start + len;
	if (*pkg_end > a->end) a->bad = true;
	return len;
}

static void nameseg(struct aml *a, char out[5])
{
	if (a->end - a->p < 4) { a->bad = true; memset(out, 0, 5); return; }
	memcpy(out, a->p, 4);
	out[4] = 0;
	a->p += 4;
	for (int i = 0; i < 4; i++)
		if (!((out[i] >= 'A' && out[i] <= 'Z') || out[i] == '_' || (i && out[i] >= '0' && out[i] <= '9')))
			a->bad = true;
}

static uint64_t integer(struct aml *a)
{
	uint64_t v = 0;

	if (a->p >= a->end) { a->bad = true; return 0; }
	switch (*a->p++) {
	case 0x00: return 0;
	case 0x01: return 1;
	case 0x0a: if (a->p + 1 > a->end) break; v = a->p[0]; a->p += 1; return v;
	case 0x0b: if (a->p + 2 > a->end) break; v = rd16(a->p); a->p += 2; return v;
	case 0x0c: if (a->p + 4 > a->end) break; v = rd32(a->p); a->p += 4; return v;
	}
	a->bad = true;
	return 0;
}

struct device_seen {
	char name[5], hid[16];
	uint64_t uid;
	bool has_uid, has_crs;
	uint32_t mem_base, mem_size, gsi, int_flags, n_irqs;
	bool mem_rw, end_tag;
};

static struct device_seen devices[ACPI_MMIO_SLOTS_MAX + 1];
static unsigned n_devices;
static bool have_s5;
static uint64_t s5_typ;

/* Name(_CRS, Buffer) contents: resource descriptors up to the End Tag. */
static void resources(const uint8_t *p, const uint8_t *end, struct device_seen *d, bool *bad)
{
	while (p < end) {
		unsigned len;

		if (*p == 0x79) {           /* small item End Tag: length 1 */
			d->end_tag = p + 2 == end;
			return;
		}
		if (!(*p & 0x80) || end - p < 3) { *bad = true; return; }
		len = rd16(p + 1);
		if (p + 3 + len > end) { *bad = true; return; }
		if (*p == 0x86 && len == 9) {
			d->mem_rw = p[3] & 1;
			d->mem_base = rd32(p + 4);
			d->mem_size = rd32(p + 8);
		} else if (*p == 0x89 && len >= 6) {
			d->int_flags = p[3];
			d->n_irqs = p[4];
			d->gsi = rd32(p + 5);
			if (len != 2 + 4u * p[4]) *bad = true;
		} else {
			*bad = true;
		}
		p += 3 + len;
	}
	*bad = true;                    /* no End Tag */
}

static void name_object(struct aml *a, struct device_seen *d)
{
	char seg[5];

	nameseg(a, seg);
	if (a->p >= a->end) { a->bad = true; return; }
	if (*a->p == 0x0d) {            /* string */
		const uint8_t *s = ++a->p;

		while (a->p < a->end && *a->p) a->p++;
		if (a->p >= a->end) { a->bad = true; return; }
		if (d && !strcmp(seg, "_HID") && a->p - s < (long)sizeof(d->hid))
			memcpy(d->hid, s, (size_t)(a->p - s));
		a->p++;
	} else if (*a->p == 0x11) {     /* Buffer */
		const uint8_t *end;
		uint64_t size;

		a->p++;
		pkglength(a, &end);
		size = integer(a);
		if (a->bad || (uint64_t)(end - a->p) != size) { a->bad = true; return; }
		if (d && !strcmp(seg, "_CRS")) {
			d->has_crs = true;
			resources(a->p, end, d, &a->bad);
		}
		a->p = end;
	} else {
		uint64_t v = integer(a);

		if (d && !strcmp(seg, "_UID")) {
			d->uid = v;
			d->has_uid = true;
		}
	}
}

/* The DSDT's definition block: Scope(\_SB_) { Device ... } and \_S5. */
static bool parse_dsdt(const uint8_t *p, const uint8_t *end)
{
	struct aml a = { .p = p, .end = end };
	char seg[5];

	n_devices = 0;
	have_s5 = false;
	while (a.p < a.end && !a.bad) {
		uint8_t op = *a.p++;

		if (op == 0x10) {            /* Scope */
			const uint8_t *scope_end;

			pkglength(&a, &scope_end);
			if (a.bad || *a.p++ != '\\') return false;
			nameseg(&a, seg);
			if (strcmp(seg, "_SB_")) return false;
			while (a.p < scope_end && !a.bad) {
				const uint8_t *dev_end;
				struct device_seen *d;

				if (a.p[0] != 0x5b || a.p[1] != 0x82 || n_devices > ACPI_MMIO_SLOTS_MAX) return false;
				a.p += 2;
				pkglength(&a, &dev_end);
				d = &devices[n_devices++];
				memset(d, 0, sizeof(*d));
				nameseg(&a, d->name);
				while (a.p < dev_end && !a.bad) {
					if (*a.p++ != 0x08) return false;
					name_object(&a, d);
				}
				if (a.p != dev_end) return false;
			}
			if (a.p != scope_end) return false;
		} else if (op == 0x08) {     /* Name(\_S5, Package() { typ, typ }) */
			const uint8_t *pkg_end;

			if (*a.p++ != '\\') return false;
			nameseg(&a, seg);
			if (strcmp(seg, "_S5_") || *a.p++ != 0x12) return false;
			pkglength(&a, &pkg_end);
			if (*a.p++ != 2) return false;
			s5_typ = integer(&a);
			if (integer(&a) != s5_typ || a.p != pkg_end) return false;
			have_s5 = true;
		} else {
			return false;
		}
	}
	return !a.bad && a.p == a.end;
}

/* ---- the tables ---- */

static struct acpi_machine machine(unsigned slots)
{
	struct acpi_machine m = {
		.lapic_base = 0xfee00000, .ioapic_base = 0xfec00000, .ioapic_id = 0,
		.sleep_port = 0x600, .n_slots = slots,
	};

	for (unsigned i = 0; i < slots && i < ACPI_MMIO_SLOTS_MAX; i++)
		m.slots[i] = (struct acpi_mmio_slot){ .base = 0xd0000000u + 0x1000u * i, .size = 0x1000, .gsi = 5 + 3 * i };
	return m;
}

static void check_tables(unsigned slots)
{
	struct acpi_machine m = machine(slots);
	const uint8_t *rsdp = buf, *xsdt, *fadt = NULL, *madt = NULL, *dsdt;
	unsigned lapics = 0, ioapics = 0, overrides = 0, nmis = 0;

	printf("-- %u slot(s)\n", slots);
	memset(buf, 0xa5, sizeof(buf));
	used = acpi_build(&m, GPA, buf, sizeof(buf));
	CHECK(used > 0 && used <= (int)ACPI_TABLES_MAX, "built %d bytes", used);
	if (used <= 0)
		return;
	CHECK(!memcmp(rsdp, "RSD PTR ", 8) && rsdp[15] == 2 && rd32(rsdp + 20) == 36,
	      "RSDP: signature, revision 2, length 36");
	CHECK(acpi_sum(rsdp, 20) == 0 && acpi_sum(rsdp, 36) == 0, "RSDP: both checksums");
	CHECK(rd32(rsdp + 16) == 0, "RSDP: no RSDT");
	xsdt = table_at(rd64(rsdp + 24), "XSDT");
	CHECK(xsdt && acpi_sum(xsdt, rd32(xsdt + 4)) == 0, "XSDT: found, checksum");
	if (!xsdt)
		return;
	CHECK(rd32(xsdt + 4) == 36 + 16, "XSDT: two entries");
	for (uint32_t off = 36; off + 8 <= rd32(xsdt + 4); off += 8) {
		uint64_t at = rd64(xsdt + off);

		if (table_at(at, "FACP")) fadt = table_at(at, "FACP");
		if (table_at(at, "APIC")) madt = table_at(at, "APIC");
	}
	CHECK(fadt && acpi_sum(fadt, rd32(fadt + 4)) == 0, "FADT: found through the XSDT, checksum");
	CHECK(madt && acpi_sum(madt, rd32(madt + 4)) == 0, "MADT: found through the XSDT, checksum");
	if (!fadt || !madt)
		return;
	CHECK(rd32(fadt + 4) == 276 && fadt[8] == 6 && fadt[131] == 4, "FADT: 276 bytes, revision 6.4");
	CHECK(rd32(fadt + 112) & (1u << 20), "FADT: HW_REDUCED_ACPI");
	CHECK(rd16(fadt + 109) & (1u << 5) && !(rd16(fadt + 109) & 3), "FADT: no CMOS RTC, no 8042, no legacy devices");
	CHECK(rd16(fadt + 46) == 0 && rd32(fadt + 76) == 0, "FADT: no SCI, no PM timer");
	CHECK(rd64(fadt + 140) == rd32(fadt + 40), "FADT: X_DSDT and DSDT agree");
	CHECK(fadt[244] == 1 && fadt[245] == 8 && rd64(fadt + 248) == 0x600 && rd64(fadt + 260) == 0x601,
	      "FADT: sleep control and status registers are I/O ports 0x600, 0x601");
	dsdt = table_at(rd64(fadt + 140), "DSDT");
	CHECK(dsdt && acpi_sum(dsdt, rd32(dsdt + 4)) == 0 && dsdt[8] == 2, "DSDT: found through the FADT, checksum, revision 2");

	CHECK(rd32(madt + 36) == 0xfee00000 && rd32(madt + 40) == 0, "MADT: local APIC address, no PCAT_COMPAT");
	for (uint32_t off = 44; off < rd32(madt + 4);) {
		const uint8_t *e = madt + off;

		if (e[1] < 2 || off + e[1] > rd32(madt + 4)) {
			CHECK(0, "MADT: entry at %u has a bad length %u", off, e[1]);
			break;
		}
		switch (e[0]) {
		case 0: lapics++; CHECK(e[1] == 8 && e[3] == 0 && rd32(e + 4) == 1, "MADT: local APIC 0, enabled"); break;
		case 1: ioapics++; CHECK(e[1] == 12 && rd32(e + 4) == 0xfec00000 && rd32(e + 8) == 0, "MADT: IOAPIC at 0xfec00000, GSI base 0"); break;
		case 2:
			overrides++;
			CHECK(e[1] == 10 && e[2] == 0 && rd32(e + 4) == e[3] && e[3] < 16 && rd16(e + 8) == 0xd,
			      "MADT: IRQ %u -> GSI %u, level, active high", e[3], rd32(e + 4));
			break;
		case 4: nmis++; CHECK(e[1] == 6 && e[5] == 1, "MADT: NMI on LINT1"); break;
		default: CHECK(0, "MADT: unexpected entry type %u", e[0]);
		}
		off += e[1];
	}
	{
		unsigned low = 0;

		for (unsigned i = 0; i < slots; i++)
			low += m.slots[i].gsi < 16;
		CHECK(lapics == 1 && ioapics == 1 && nmis == 1 && overrides == low,
		      "MADT: 1 local APIC, 1 IOAPIC, 1 NMI, %u overrides (one per slot below GSI 16)", low);
	}

	if (!dsdt)
		return;
	CHECK(parse_dsdt(dsdt + 36, dsdt + rd32(dsdt + 4)), "DSDT: the AML parses to its end");
	CHECK(n_devices == slots, "DSDT: %u devices in \\_SB", n_devices);
	for (unsigned i = 0; i < n_devices && i < slots; i++) {
		const struct device_seen *d = &devices[i];

		CHECK(!strcmp(d->hid, "LNRO0005") && d->has_uid && d->uid == i && d->has_crs && d->end_tag,
		      "%s: _HID LNRO0005, _UID %u, _CRS ending in an End Tag", d->name, i);
		CHECK(d->mem_rw && d->mem_base == m.slots[i].base && d->mem_size == m.slots[i].size,
		      "%s: Memory32Fixed(ReadWrite, 0x%x, 0x%x)", d->name, d->mem_base, d->mem_size);
		CHECK(d->n_irqs == 1 && d->gsi == m.slots[i].gsi && d->int_flags == 0x01,
		      "%s: Interrupt(ResourceConsumer, Level, ActiveHigh, Exclusive) { %u }", d->name, d->gsi);
	}
	CHECK(have_s5 && s5_typ == ACPI_S5_SLP_TYP, "DSDT: \\_S5 names sleep type %u", ACPI_S5_SLP_TYP);
	for (int i = used; i < (int)sizeof(buf); i++)
		if (buf[i] != 0xa5) {
			CHECK(0, "a byte past the returned length was written (%d)", i);
			break;
		}
}

static int write_tables(const char *dir)
{
	struct acpi_machine m = machine(2);
	const char *names[] = { "RSDP", "XSDT", "FACP", "APIC", "DSDT" };

	used = acpi_build(&m, GPA, buf, sizeof(buf));
	if (used <= 0)
		return 1;
	for (unsigned i = 0; i < 5; i++) {
		char path[4096];
		const uint8_t *t = NULL;
		size_t len = 0;
		FILE *f;

		if (i == 0) {
			t = buf;
			len = 36;
		} else {
			for (int off = 48; off + 8 <= used; off += 16)
				if (!memcmp(buf + off, names[i], 4)) {
					t = buf + off;
					len = rd32(t + 4);
					break;
				}
		}
		if (!t)
			return 1;
		snprintf(path, sizeof(path), "%s/%s.dat", dir, names[i]);
		if (!(f = fopen(path, "wb")) || fwrite(t, 1, len, f) != len || fclose(f))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write"))
		return write_tables(argv[2]);
	check_tables(1);
	check_tables(2);
	check_tables(ACPI_MMIO_SLOTS_MAX);   /* the Scope's PkgLength needs two bytes */
	{
		struct acpi_machine m = machine(2);

		m.n_slots = ACPI_MMIO_SLOTS_MAX + 1;
		CHECK(acpi_build(&m, GPA, buf, sizeof(buf)) < 0, "refused: more slots than the tables hold");
		m.n_slots = 2;
		CHECK(acpi_build(&m, GPA, buf, 200) < 0, "refused: a buffer too small");
	}
	return check_summary();
}
