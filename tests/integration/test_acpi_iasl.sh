#!/usr/bin/env bash
# test_acpi_iasl.sh -- the ACPI tables (launcher/acpi.c) through an
# independent reader: Debian's iasl (acpica-tools), the compiler and
# disassembler of ACPICA, the same ACPI code Linux's kernel runs.
# unit-acpi writes the tables of a two-slot machine; iasl -d must
# disassemble each without an error, and the DSDT must come out as two
# LNRO0005 devices with their windows and level, active-high interrupts.
# No VM.  Skips (77) only if iasl is not installed (apt-get install acpica-tools).
. "$(dirname "$0")/lib.sh"
WRITER=${2:?usage: $0 lguest-kvm unit-acpi}

command -v iasl >/dev/null || { echo "SKIP: no iasl (apt-get install acpica-tools)"; exit 77; }
check "unit-acpi writes the tables" "$WRITER" --write "$TMP"
# (iasl -d writes nothing for an RSDP file: unit-acpi checks that one.)
for t in XSDT FACP APIC DSDT; do
	(cd "$TMP" && iasl -d "$t.dat") >"$TMP/$t.log" 2>&1
	check "iasl -d $t: exit 0, no error" bash -c "[ -s '$TMP/$t.dsl' ] && ! grep -qiE '(^|[^_])error' '$TMP/$t.dsl' '$TMP/$t.log'"
done
dsl=$TMP/DSDT.dsl
check "DSDT: two LNRO0005 devices" [ "$(grep -c '"LNRO0005"' "$dsl")" = 2 ]
check "DSDT: the first window" grep -q 'Memory32Fixed (ReadWrite,.*0xD0000000,.*0x00001000' <(tr -s ' \n' ' ' <"$dsl")
check "DSDT: the second device's line, level and active high" \
	grep -q 'Interrupt (ResourceConsumer, Level, ActiveHigh, Exclusive, ,, ) { 0x00000008, }' <(tr -s ' \n' ' ' <"$dsl")
check "DSDT: \\_S5" grep -q '_S5' "$dsl"
check "FADT: hardware-reduced" grep -qE 'Hardware Reduced \(V5\) : 1' "$TMP/FACP.dsl"
check "MADT: the IOAPIC at 0xFEC00000" grep -qi 'Address : FEC00000' "$TMP/APIC.dsl"
check "MADT: IRQ 5 level, active high" bash -c "grep -A8 'Interrupt Source Override' '$TMP/APIC.dsl' | grep -q 'Trigger Mode : 3'"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
