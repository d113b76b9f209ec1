/*
 * race_hooks.h -- the race-torture harness's way into the ring code
 * (tests/race/race_torture.c; docs/testing.md, "Race torture").
 *
 * Why: the notify protocol fails only in unlucky interleavings -- a store
 * still on its way while the other side reads -- and two threads running at
 * the machine's own pace rarely hit them.  So every publish, barrier and
 * read of the other side's flag or event mark in the guest's driver
 * (guest-stub/virtio_drv.c, vring_packed_drv.c) and the host's rings
 * (devices/virtqueue.c, vring_split.c, vring_packed.c) is a RACE_POINT,
 * where the harness stalls its thread for a random while.
 *
 * In every other build the macros expand to nothing (RACE_POINT to
 * ((void)0), RACE_MMIO_WRITE to nothing) and LKVM_MUTANT is 0, so the
 * `#if LKVM_MUTANT == ...` blocks vanish before the compiler sees them: the
 * product's objects are the same bytes with or without this header
 * (tests/race/check_product_unchanged.sh compares them).
 *
 * LKVM_RACE_HOOKS: the harness defines lkvm_race_point (the delay) and
 * lkvm_race_mmio_write (the guest's register writes: a notify is the
 * "exit" that wakes the host thread).
 *
 * LKVM_MUTANT=n (harness builds only): compile one known bug into the ring
 * code, to prove the harness catches it (tests/race/meson.build).  Each
 * mutant does in program order what the missing piece would let the CPU or
 * the compiler do, so it misbehaves on x86 (TSO) too.
 */
#ifndef LKVM_RACE_HOOKS_H
#define LKVM_RACE_HOOKS_H

/* Where a thread may be held up.  G_ = guest driver, H_ = host rings. */
enum race_site {
	RACE_G_ADD_DESCS,          /* descriptors written, avail entry / head flags not yet */
	RACE_G_KICK_PUBLISH,       /* before the store that publishes (avail idx / head flags) */
	RACE_G_KICK_PUBLISHED,     /* after it, before the full barrier */
	RACE_G_KICK_READ_WISH,     /* after the barrier, before reading NO_NOTIFY / avail_event */
	RACE_G_IRQ_ENABLE,         /* before the store that re-enables interrupts */
	RACE_G_IRQ_ENABLE_STORED,  /* interrupts re-enabled, before the full barrier */
	RACE_G_IRQ_RECHECK,        /* after it, before looking at the used side again */
	RACE_G_USED_SEEN,          /* used idx / marks read, the element not yet */
	RACE_G_IRQ_DISABLE,        /* interrupts being turned off */
	RACE_H_AVAIL_SEEN,         /* avail idx / head flags read, the chain not yet */
	RACE_H_USED_WRITTEN,       /* used element written, its publish not yet */
	RACE_H_NOTIFY_ENABLE,      /* between the parts of "notify me" (event mark, flags) */
	RACE_H_NOTIFY_ENABLED,     /* "notify me" stored, before the full barrier */
	RACE_H_NOTIFY_RECHECK,     /* after it, before looking at the avail side again */
	RACE_H_SUPPRESS,           /* "do not notify" being stored */
	RACE_H_IRQ_DECIDE,         /* used published, before the barrier and the interrupt wish */
	RACE_SITES
};

/* The mutants (LKVM_MUTANT=n).  0: the real code. */
#define LKVM_MUT_KICK_NO_MB           1   /* driver: no mb() between publish and reading the host's wish */
#define LKVM_MUT_RECHECK_NO_FENCE     2   /* device: no fence between "notify me" and the re-check */
#define LKVM_MUT_NO_RECHECK           3   /* device: no re-check after re-enabling notifies */
#define LKVM_MUT_NO_AVAIL_EVENT       4   /* device: never writes avail_event (split, event idx) */
#define LKVM_MUT_PUBLISH_BEFORE_DESCS 5   /* driver: avail idx published before the descriptors */
#define LKVM_MUT_IRQ_NO_RECHECK       6   /* driver: no re-check after re-enabling interrupts */
#define LKVM_MUT_PACKED_HEAD_FIRST    7   /* packed driver: head flags before the rest of the chain */
#define LKVM_MUT_IRQ_SEEN_LATE        8   /* harness guest: interrupt count read after the re-check */
#define LKVM_MUT_TIMER_NO_RECHECK     9   /* net.c: an empty timer drain goes idle without the re-check */

#ifndef LKVM_MUTANT
#define LKVM_MUTANT 0
#endif

#ifdef LKVM_RACE_HOOKS
#include <stdint.h>
void lkvm_race_point(enum race_site site);
void lkvm_race_mmio_write(uint64_t addr, uint32_t value);
#define RACE_POINT(site) lkvm_race_point(site)
#define RACE_MMIO_WRITE(addr, value) lkvm_race_mmio_write(addr, value)
#else
#if LKVM_MUTANT
#error "LKVM_MUTANT needs LKVM_RACE_HOOKS: mutants exist only in the race harness"
#endif
#define RACE_POINT(site) ((void)0)
#define RACE_MMIO_WRITE(addr, value)
#endif

#endif
