/*
 * host_kind.h -- what this launcher's KVM runs on, so that every number
 * says where it came from (the stats' host_hypervisor, the table's banner).
 */
#ifndef HOST_KIND_H
#define HOST_KIND_H

#include <stdbool.h>

/* CPUID's hypervisor signature ("KVMKVMKVM", "TCGTCGTCGTCG", "bhyve bhyve ",
 * ...), or "none" on bare metal. */
const char *host_hypervisor(void);
/* True under QEMU's software emulator: the launcher's KVM is itself
 * emulated, so its counters are real and its seconds are not. */
bool host_is_emulated(void);

#endif
