/*
 * vm.h -- a KVM virtual machine with one vCPU, an in-kernel irqchip and one
 * slot of guest RAM.  Everything here is setup; the run loop is in run_vcpu.c.
 */
#ifndef VM_H
#define VM_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "guest_mem.h"

struct vm {
	int kvm_fd, vm_fd, vcpu_fd;
	struct kvm_run *run;
	int run_size;
	struct guest_mem mem;
	/* The kick also raises LKVM_KICK_VECTOR (vm_kick_vcpu): for the stub,
	 * which has a gate for it; a Linux guest has none (vm_create sets it,
	 * run_linux.c clears it). */
	bool kick_msi;
};

/* Can /dev/kvm be opened?  -1 with the recorded reason (diag_fail) naming what to do: a command
 * that starts many VMs asks once, before any work. */
int vm_check_kvm(void);
/* Open /dev/kvm, check the API and every capability we use, create the VM,
 * its irqchip and RAM.  -1 with the reason recorded by diag_fail(). */
int vm_create(struct vm *vm, uint64_t mem_size);
/* Create the vCPU in the PVH entry state: 32-bit protected mode, paging off,
 * flat segments, %ebx = start_info. */
int vm_create_vcpu_pvh(struct vm *vm, uint32_t entry, uint32_t start_info);
/* Create the vCPU in the Linux 32-bit boot protocol's entry state: the same,
 * with __BOOT_CS 0x10 / __BOOT_DS 0x18 and %esi = boot_params. */
int vm_create_vcpu_linux(struct vm *vm, uint32_t entry, uint32_t boot_params);
void vm_destroy(struct vm *vm);

/* Give the vCPU the host's TSC (offset 0; KVM otherwise starts it near 0),
 * so that guest and host stamps are one clock (run --trace).  -1 with diag
 * set where KVM cannot (before Linux 5.16). */
int vm_share_host_tsc(struct vm *vm);

/* Force the vCPU thread out of KVM_RUN.  Under kvm_pvm a signal alone is not
 * enough while the guest spins at CPL3 (it runs natively and the signal is
 * only noticed on the next trip through KVM), so for the stub the kick also
 * injects an interrupt on LKVM_KICK_VECTOR, which makes that trip happen.
 * Not for a Linux guest (kick_msi clear): to it that vector is an
 * interrupt no device of its machine raises. */
void vm_kick_vcpu(struct vm *vm, pthread_t vcpu_thread);

/* A write of `value` (4 bytes) to `gpa` signals `efd` without leaving the guest. */
int vm_add_ioeventfd(struct vm *vm, uint64_t gpa, uint32_t value, int efd);
/* Hold IOAPIC line `gsi` at `level` until the next call.  A guest that
 * routed the pin edge-triggered takes one interrupt per change 0 -> 1; one
 * that routed it level-triggered, one more after every EOI while it is 1. */
int vm_set_irq_line(struct vm *vm, unsigned gsi, bool level);

#endif
