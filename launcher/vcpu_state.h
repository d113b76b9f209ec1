/*
 * vcpu_state.h -- one line on where a stopped vCPU stood (vcpu_state.c):
 * halted or runnable, rip, interrupts, its local APIC's timer and pending
 * vectors, and the IOAPIC pins of the devices' lines.
 */
#ifndef VCPU_STATE_H
#define VCPU_STATE_H

#include <linux/kvm.h>
#include <stddef.h>

#include "guest_mem.h"

/* Describe the vCPU of vm_fd/vcpu_fd and IOAPIC pins gsis[0..n_gsis) into
 * buf (always terminated); with gm (guest RAM), also the stack words of a
 * 64-bit kernel that point into its text.  Call it on the vCPU's thread,
 * out of KVM_RUN. */
void vcpu_state_describe(int vm_fd, int vcpu_fd, const struct guest_mem *gm, const unsigned *gsis, unsigned n_gsis,
			 char *buf, size_t size);

#endif
