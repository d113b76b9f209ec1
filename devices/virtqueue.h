/*
 * virtqueue.h -- the host side of a virtqueue, whatever its ring layout.
 *
 * This is the only code that reads guest rings.  Devices (net, net_rx,
 * console) and the transport (virtio_mmio) call the vq_* functions below and
 * never look at a ring themselves; what a ring looks like in guest RAM is the
 * business of one ring layout behind them: the split ring (vring_split.c)
 * or, when the driver negotiated VIRTIO_F_RING_PACKED, the packed ring
 * (vring_packed.c).  No device knows which.  The two halves, and how one
 * chain flows through them (vq_layout.h is the interface between):
 *
 *   device  --vq_pop_avail-->  virtqueue.c  --vq->layout->pop-->  vring_split.c / vring_packed.c
 *                              guards, the                        avail idx and entry, or the
 *                              broken state   <--vq_chain_add--   AVAIL/USED bits; desc / next /
 *                              per-buffer       (each buffer)     indirect walk, the ring's rules
 *                              checks, caps
 *   device  <--struct vq_chain: host pointers, all checked--
 *   device  --vq_push_used, vq_should_interrupt, vq_*_notify-->  virtqueue.c
 *           (barriers) --> the layout: used ring or used descriptor; NO_NOTIFY /
 *                          avail_event or the event suppression structures
 *
 * A queue is resolved once when the driver enables it (size, alignment and
 * the whole extent of the ring areas checked through gmem_ptr), then every
 * chain is validated while it is walked: head and next inside the ring (or,
 * packed, the AVAIL/USED bits of every slot and the buffer ID), a hop
 * budget so loops end, no readable descriptor after a writable one,
 * indirect tables by the spec's rules, every buffer inside guest RAM, and the
 * chain's total length within the cap its device set (max_chain_bytes), so
 * one chain is bounded work.  The first violation marks the queue broken,
 * names the rule in vq->violation and leaves a one-line reason in vq->error;
 * the device then sets DEVICE_NEEDS_RESET.  Ring layouts come from
 * <linux/virtio_ring.h>.
 */
#ifndef VIRTQUEUE_H
#define VIRTQUEUE_H

#include <linux/virtio_ring.h>
#include <stdbool.h>
#include <stdint.h>

#include "guest_mem.h"

#define VQ_MAX_SIZE 1024u
#define VQ_MAX_CHAIN VQ_MAX_SIZE  /* an indirect table holds at most this many */

struct vq_buf {
	uint8_t *host;     /* resolved through gmem_ptr, valid for len bytes */
	uint32_t len;
	bool device_writes;
};

struct vq_chain {
	uint16_t head;      /* what vq_push_used takes back: split, the head index; packed, the buffer ID */
	bool indirect;
	unsigned count;     /* descriptors in the chain (inside the table if indirect) */
	uint64_t out_len, in_len;
	struct vq_buf buf[VQ_MAX_CHAIN];
};

/*
 * Which ring rule a guest broke: one value per rule, so that code and tests
 * can tell them apart without reading the message (vq->error says the same
 * for people, with the numbers).  The first violation is kept; VQV_NONE
 * while the queue is not broken.
 */
enum vq_violation {
	VQV_NONE = 0,
	/* vq_enable: the ring areas as the driver programmed them */
	VQV_SIZE,                  /* size 0, above VQ_MAX_SIZE, or (split) not a power of two */
	VQV_RING_MISALIGNED,       /* desc not 16-, avail not 2-, used not 4-byte aligned;
				    * packed: the two event structures not 4-byte aligned */
	VQV_RING_OUTSIDE_RAM,      /* an area, at its full length, not inside RAM */
	/* vq_pop_avail: the avail ring */
	VQV_AVAIL_AHEAD,           /* avail idx more than a ring ahead of what we took */
	VQV_HEAD_RANGE,            /* head index >= ring size */
	/* vq_pop_avail: the chain in the descriptor table */
	VQV_DESC_FLAGS,            /* flags other than NEXT, WRITE, INDIRECT */
	VQV_NEXT_RANGE,            /* next index >= ring size */
	VQV_LOOP,                  /* at least as many hops as the ring has entries */
	/* every buffer, direct or inside an indirect table */
	VQV_BUF_OUTSIDE_RAM,       /* addr + len not inside RAM */
	VQV_READABLE_AFTER_WRITABLE,
	VQV_CHAIN_DESCS,           /* more than VQ_MAX_CHAIN buffers */
	VQV_CHAIN_BYTES,           /* readable + writable bytes over max_chain_bytes */
	/* indirect descriptors */
	VQV_INDIRECT_WITH_NEXT,    /* INDIRECT and NEXT on one descriptor */
	VQV_INDIRECT_NOT_NEGOTIATED,
	VQV_INDIRECT_LEN,          /* table length 0 or not a multiple of 16 */
	VQV_INDIRECT_ENTRIES,      /* more than VQ_MAX_CHAIN entries */
	VQV_INDIRECT_OUTSIDE_RAM,  /* the table not inside RAM */
	VQV_INDIRECT_NESTED,       /* INDIRECT inside a table */
	VQV_INDIRECT_FLAGS,        /* an entry with flags other than NEXT, WRITE */
	VQV_INDIRECT_NEXT_RANGE,   /* an entry's next outside the table */
	VQV_INDIRECT_LOOP,         /* as many hops as the table has entries */
	/* the packed ring only (vring_packed.c) */
	VQV_PACKED_WRAP,           /* AVAIL and USED both equal the wrap counter at the next slot
				    * (no driver writes that), or a chain's later slot not
				    * available on the lap its position says */
	VQV_PACKED_CHAIN_TOO_LONG, /* a chain needs more slots than the ring has free: longer
				    * than the ring, or than what is not in flight */
	VQV_ID_RANGE,              /* buffer ID >= ring size */
	VQV_ID_IN_FLIGHT,          /* buffer ID reused while the device still holds it */
	VQV_INDIRECT_IN_CHAIN,     /* INDIRECT on a slot reached through NEXT */
};

/* A short fixed name for a violation ("head-range"), for test output and logs. */
const char *vq_violation_name(enum vq_violation v);

struct vq_layout;   /* a ring layout's operations (vq_layout.h) */

/*
 * The packed layout's state (vring_packed.c), resolved and zeroed by its
 * enable.  The device keeps its own positions and wrap counters and never
 * derives them from what the guest wrote; per buffer ID it remembers how
 * many ring slots the chain took, which is both the in-flight mark (an ID
 * may not come back while it is set) and how far vq_push_used moves.
 */
struct vq_packed {
	struct vring_packed_desc *desc;            /* the descriptor ring, num slots */
	struct vring_packed_desc_event *driver;    /* driver area: its interrupt wish (read) */
	struct vring_packed_desc_event *device;    /* device area: our notify wish (written) */
	uint16_t next_avail;     /* slot of the next chain to take */
	uint16_t next_used;      /* slot the next used descriptor goes to */
	bool avail_wrap, used_wrap;   /* the Device Ring Wrap Counters, 1 at enable */
	uint16_t in_flight;      /* slots taken and not yet given back */
	/* The last pop, for unpop: where it began and the ID it took. */
	bool can_unpop, popped_wrap;
	uint16_t popped_at, popped_id;
	/* The used side at the last interrupt decision, and the slots it has
	 * moved on since (capped at 2 * VQ_MAX_SIZE: by then it passed every
	 * slot on both laps). */
	uint16_t signalled_pos;
	bool signalled_wrap;
	uint32_t used_since_signal;
	uint16_t id_slots[VQ_MAX_SIZE];   /* per buffer ID: its chain's slots while in flight; 0: free */
};

struct vq {
	const struct guest_mem *mem;
	const char *name;           /* "net tx" -- for error lines */
	/* The device's cap on one chain's total length, readable plus writable
	 * bytes (0: none).  Like name, it is the device's: a reset keeps it. */
	uint64_t max_chain_bytes;
	uint16_t num;
	bool ready, broken;
	/* The transport's: the queue is ready but the device status lacks
	 * DRIVER_OK, so no chain may be taken yet -- "the device MUST NOT
	 * consume buffers ... before DRIVER_OK" (virtio 1.2, 2.1.2).  Set at
	 * QueueReady, cleared at DRIVER_OK; a queue set up without a transport
	 * (a unit test) is never held. */
	bool held;
	bool event_idx, indirect_ok, packed;  /* negotiated features; packed picks the layout */
	uint64_t desc_gpa, avail_gpa, used_gpa;
	/* The ring layout in use, chosen by vq_enable (NULL until then). */
	const struct vq_layout *layout;
	/* The split layout's three areas, resolved by vq_enable (vring_split.c).
	 * Only the layout reads or writes through them.  With packed, desc_gpa
	 * is the descriptor ring, avail_gpa the driver area and used_gpa the
	 * device area, and vq->pk holds the state instead. */
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t last_avail;        /* next avail entry to take */
	/* avail->idx as the last pop loaded it: the entries before it are
	 * published, so pops up to it need not read the index again (the
	 * index is the line the guest writes for every chain). */
	uint16_t avail_seen;
	uint16_t used_shadow;       /* our copy of used->idx */
	uint16_t signalled_used;    /* used idx at the last interrupt (event idx) */
	struct vq_packed pk;        /* the packed layout's (vring_packed.c) */
	enum vq_violation violation;  /* the rule that broke the queue */
	char error[200];
};

/* Validate and resolve the rings (QueueReady=1).  -1, vq->violation and
 * vq->error on failure. */
int vq_enable(struct vq *vq, const struct guest_mem *mem);
void vq_reset(struct vq *vq);

/* 1: a validated chain in *chain; 0: nothing available (or the queue held
 * until DRIVER_OK); -1: the guest broke the ring (vq->broken, vq->violation,
 * vq->error). */
int vq_pop_avail(struct vq *vq, struct vq_chain *chain);
/* Put the last popped chain back (the caller found nothing to fill it with). */
void vq_unpop_avail(struct vq *vq);
/* Return a chain to the guest (`head`: the popped chain.head); publishes
 * used->idx, or the used descriptor's flags (release). */
void vq_push_used(struct vq *vq, uint16_t head, uint32_t len);

/* Ask the guest not to notify (NO_NOTIFY flag, or a stale avail_event;
 * packed: DISABLE in the device area). */
void vq_suppress_notify(struct vq *vq);
/* Ask for notifies again (packed: ENABLE, or DESC at our next slot), then
 * re-check: true if buffers slipped in meanwhile. */
bool vq_enable_notify_and_recheck(struct vq *vq);
bool vq_has_avail(const struct vq *vq);
/* Does the driver want an interrupt for what was used since the last one? */
bool vq_should_interrupt(struct vq *vq);

/*
 * The split ring's interrupt decision, on its own and pure: the used index
 * went from `old` (at the last interrupt) to `new_idx`, and the driver left
 * avail->flags and used_event.  With EVENT_IDX the driver asked for an
 * interrupt once the used entry at index used_event is written, and the flag
 * is ignored; without it, NO_INTERRUPT in avail->flags says no, and
 * used_event means nothing (virtio 1.2, 2.7.10).  vq_should_interrupt reads
 * the two fields and decides with this; tests/unit/test_vq_interrupt.c
 * checks it against the spec over every index triple.  Inline so that the
 * exhaustive check runs at the speed of the arithmetic.
 */
static inline bool vq_interrupt_needed(bool event_idx, uint16_t avail_flags, uint16_t used_event, uint16_t old,
				       uint16_t new_idx)
{
	if (event_idx)
		return vring_need_event(used_event, new_idx, old);
	return !(avail_flags & VRING_AVAIL_F_NO_INTERRUPT);
}

/*
 * The packed ring's interrupt decision, pure.  Since the last decision the
 * device's used side moved `advanced` slots on from old_pos on the lap
 * whose wrap counter was old_wrap (a chain of n slots moves it n, although
 * only its first slot gets a used descriptor), and the driver left its
 * event suppression structure: flags and off_wrap (virtio 1.2, 2.8.10 and
 * 2.8.14).  DISABLE says no, ENABLE yes.  DESC asks for an interrupt once
 * the slot off_wrap names (offset in bits 0-14, wrap counter in bit 15) is
 * reached on that lap; it is only valid with EVENT_IDX.
 *
 * Choices where the spec leaves room, all on the side of not losing an
 * interrupt the driver might wait for: DESC without EVENT_IDX, and the
 * reserved value 3, are taken as ENABLE.  An offset at or past the ring
 * size names no slot, so it is never reached: no interrupt (the driver
 * only hurts itself).  Positions live on a circle of 2 * num slots, two
 * laps, because the wrap counter tells only the lap's parity; `advanced`
 * comes in as a count rather than a new position so that 2 * num or more
 * slots (every slot on both laps passed) is not mistaken for none.
 * tests/unit/test_vring_packed.c checks this against a slot-by-slot walk
 * for every ring size 1..16, position, lap and count.
 */
static inline bool vq_packed_interrupt_needed(bool event_idx, uint16_t flags, uint16_t off_wrap, uint16_t old_pos,
					      bool old_wrap, uint32_t advanced, uint16_t num)
{
	uint32_t off = off_wrap & ((1u << VRING_PACKED_EVENT_F_WRAP_CTR) - 1);
	bool event_wrap = off_wrap >> VRING_PACKED_EVENT_F_WRAP_CTR;
	uint32_t laps = 2u * num, event, start;

	if (flags == VRING_PACKED_EVENT_FLAG_DISABLE)
		return false;
	if (flags != VRING_PACKED_EVENT_FLAG_DESC || !event_idx)
		return true;
	if (off >= num)
		return false;
	if (advanced >= laps)
		return true;
	/* Wrap counter 1 on the first lap, 0 on the second. */
	event = off + (event_wrap ? 0 : num);
	start = old_pos + (old_wrap ? 0 : num);
	return (event + laps - start) % laps < advanced;
}

#endif
