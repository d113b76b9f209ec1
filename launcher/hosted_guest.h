/*
 * hosted_guest.h -- the guest stub's hardware, as the no-VM guest
 * (`--vm none`, run_thread.c) gives it to the stub's own source files
 * running on a host thread.
 *
 * The no-VM guest compiles guest-stub/cmdline.c, virtio_drv.c, net_drv.c,
 * workload_raw.c, workload_tcp.c (with tcp_sender.c and inet.c) and
 * workload_hostile.c unmodified, with this header forced in first
 * (-include, meson.build).  It defines the include guards of the stub's
 * io.h and lib.h, so their `#include`s add nothing, and declares in their
 * place what those files use:
 *
 *   lib.h   the host's libc for strings and formatting; printf to the
 *           run's stdout (nothing with --quiet), as the console would;
 *           alloc_pages from guest RAM; guest_exit back to run_thread.c
 *   io.h    MMIO to the devices' register files, the way run_vcpu.c's
 *           MMIO exits reach them, except that a QueueNotify of a queue
 *           with a notify eventfd writes that eventfd, as KVM's ioeventfd
 *           does (threaded model) or the device drains on this thread
 *           (lguest model); a port write goes where a VM's I/O exit goes
 *           (run_port_out); virt_to_phys as "offset into guest RAM"; the
 *           halt service as a sleep on the eventfd that each rise of a
 *           device's interrupt line writes, with the APIC timer as its
 *           timeout (run_thread.c)
 *
 * Every MMIO access, port write and halt is where a guest in a VM would
 * exit, and so is every kick of the lguest model's waker; each one costs
 * --exit-cost-ns of spinning first (ringtest's
 * VMEXIT_CYCLES).  cpu_relax, which every guest spin loop calls, is also
 * where a stop (a signal, --max-seconds) ends the guest.
 */
#ifndef HOSTED_GUEST_H
#define HOSTED_GUEST_H

#define GUEST_IO_H 1    /* guest-stub/io.h is replaced by this header */
#define GUEST_LIB_H 1   /* so is guest-stub/lib.h */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lguest_kvm_abi.h"

/* ---- lib.h ---- */
void *alloc_pages(size_t bytes);            /* 4 KiB aligned, zeroed, in guest RAM */
__attribute__((noreturn)) void guest_exit(int status);
int hosted_guest_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define printf hosted_guest_printf

/* ---- io.h ---- */
uint32_t mmio_read32(uint64_t addr);
void mmio_write32(uint64_t addr, uint32_t v);
uint8_t mmio_read8(uint64_t addr);
void outl(uint16_t port, uint32_t v);      /* as a port write's exit: run_port_out */
uint64_t virt_to_phys(const void *p);

void cpu_relax(void);                       /* pause, and where a stop ends the guest */

#include "cpu.h"    /* the stub's own barrier, mb, rdtsc, spin_ticks */

/* The local APIC timer, as the tcp workload arms it for retransmissions:
 * setup is a would-be exit; an armed timer is the halt's timeout. */
void lapic_timer_setup(void);
void lapic_timer_arm_ns(uint32_t ns);

/* Interrupts taken: here, wake-ups of the halt by the interrupt eventfd
 * or the APIC timer (run_thread.c).  No sti/hlt window. */
extern volatile uint64_t irq_seq, timer_seq, irqs_at_hlt;
void halt_until_irq(uint64_t seen);

#endif
