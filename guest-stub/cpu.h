/*
 * cpu.h -- the CPU's ordering and timing, as the guest's code uses them:
 * the same in the stub (io.h) and on a host thread (launcher/
 * hosted_guest.h, --model thread), because they are x86 instructions, not
 * hardware the guest is given.  The includer declares cpu_relax() first --
 * `pause` in the stub, a stoppable pause hosted -- so that every spin loop,
 * spin_ticks's included, looks the same to the CPU.
 */
#ifndef GUEST_CPU_H
#define GUEST_CPU_H

#include <stdint.h>

/* x86 is TSO: stores are not reordered with stores, loads not with loads, so
 * the only barrier virtio needs from the CPU is store->load (mfence). */
static inline void barrier(void) { __asm__ volatile("" ::: "memory"); }
static inline void mb(void) { __asm__ volatile("mfence" ::: "memory"); }

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* Work of `ticks` TSC ticks (--pace-ns, a priced indirect table, the thread
 * model's exit cost): spin, through cpu_relax. */
static inline void spin_ticks(uint64_t ticks)
{
	uint64_t until;

	if (!ticks)     /* the common case, per frame: not even an rdtsc */
		return;
	until = rdtsc() + ticks;
	while (rdtsc() < until)
		cpu_relax();
}

#endif
