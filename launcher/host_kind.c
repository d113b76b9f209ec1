/*
 * host_kind.c -- read the machine's kind from CPUID.
 *
 * A hypervisor sets bit 31 of leaf 1's ECX and names itself in the 12 bytes
 * of leaf 0x40000000 (EBX, ECX, EDX).  On kvm_pvm that is a KVM guest, whose
 * exits cost ~26 us; in the emulator VM (tests/vm/lkvm-vm) it is QEMU's TCG,
 * where everything, our nested KVM included, runs at an emulator's speed.
 */
#include "host_kind.h"

#include <cpuid.h>
#include <string.h>

const char *host_hypervisor(void)
{
	static char name[13];
	unsigned int eax, ebx, ecx, edx;

	if (name[0])
		return name;
	__cpuid(1, eax, ebx, ecx, edx);
	if (!(ecx & (1u << 31))) {
		strcpy(name, "none");
		return name;
	}
	__cpuid(0x40000000, eax, ebx, ecx, edx);
	memcpy(name, &ebx, 4);
	memcpy(name + 4, &ecx, 4);
	memcpy(name + 8, &edx, 4);
	name[12] = '\0';
	if (!name[0])
		strcpy(name, "unnamed");
	return name;
}

bool host_is_emulated(void)
{
	return !strcmp(host_hypervisor(), "TCGTCGTCGTCG");
}
