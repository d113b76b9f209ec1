/*
 * io.h -- the guest's view of the hardware: port and MMIO accessors, barriers,
 * the TSC, and the one CPL0 service (halt until an interrupt).
 *
 * Everything here runs at CPL3.  Port I/O works through the TSS I/O bitmap
 * set up in entry.S; MMIO works because the page tables map the device
 * windows user-accessible.
 */
#ifndef GUEST_IO_H
#define GUEST_IO_H

#include <stdint.h>

#include "lguest_kvm_abi.h"
#include "race_hooks.h"

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static inline uint32_t mmio_read32(uint64_t addr) { return *(volatile uint32_t *)addr; }
/* RACE_MMIO_WRITE: nothing, except in the race harness, where a write to
 * QueueNotify is the exit that wakes its host thread (race_hooks.h). */
static inline void mmio_write32(uint64_t addr, uint32_t v)
{
	*(volatile uint32_t *)addr = v;
	RACE_MMIO_WRITE(addr, v);
}
static inline uint8_t mmio_read8(uint64_t addr) { return *(volatile uint8_t *)addr; }

/* The address a device is given for a guest pointer.  The stub's page
 * tables map virtual = physical, so here it is the pointer itself; the
 * thread model, which runs this code on a host thread, supplies its own
 * (launcher/hosted_guest.h). */
static inline uint64_t virt_to_phys(const void *p) { return (uint64_t)p; }

static inline void cpu_relax(void) { __asm__ volatile("pause" ::: "memory"); }

#include "cpu.h"    /* barrier, mb, rdtsc, spin_ticks */

/* The local APIC, mapped user-accessible like the device windows.  Its
 * timer runs at 1 GHz under KVM (one count per ns with divide-by-1); each
 * register write is an exit, so the timer is armed only before a sleep. */
#define LAPIC_BASE 0xfee00000ull
#define LAPIC_TIMER_VECTOR LKVM_TIMER_VECTOR

static inline void lapic_timer_setup(void)
{
	mmio_write32(LAPIC_BASE + 0x3e0, 0xb);                /* divide by 1 */
	mmio_write32(LAPIC_BASE + 0x320, LAPIC_TIMER_VECTOR); /* one-shot, unmasked */
}

static inline void lapic_timer_arm_ns(uint32_t ns)
{
	mmio_write32(LAPIC_BASE + 0x380, ns ? ns : 1);
}

/* Incremented by every interrupt, the timer's included (entry.S). */
extern volatile uint64_t irq_seq;
/* Incremented by the APIC timer only: a one-shot armed when this read N
 * is still pending while it reads N.  The timer's count is not the TSC's,
 * so "it fires at TSC x" is only an estimate; this is the fact. */
extern volatile uint64_t timer_seq;
/* Interrupts that arrived between the halt service's sti and hlt, which
 * entry.S steps over (an emulator ignoring sti's shadow; 0 on hardware). */
extern volatile uint64_t irqs_at_hlt;

/* Sleep in hlt at CPL0 unless an interrupt arrived since irq_seq read `seen`. */
static inline void halt_until_irq(uint64_t seen)
{
	__asm__ volatile("ud2" :: "a"(1), "c"(0x4c4b564d), "d"(seen) : "memory");
}

#endif
