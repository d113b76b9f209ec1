/*
 * virtqueue.c -- the layout-independent half of the host's virtqueue:
 * the public vq_* API, the checks every buffer of every chain goes through,
 * and the broken state, distrusting the guest.
 *
 * A device's call comes in here, is guarded (a queue that is not ready, or
 * broken, touches no ring), and goes to the queue's ring layout (vq->layout:
 * vring_split.c, or vring_packed.c when VIRTIO_F_RING_PACKED was
 * negotiated), which reads and writes the areas in guest RAM.  While it walks
 * a chain the layout hands each buffer back to vq_chain_add, so the rules
 * that do not depend on the layout -- inside guest RAM, readable before
 * writable, at most VQ_MAX_CHAIN buffers and max_chain_bytes bytes -- are
 * written once; every rule, here or in a layout, breaks the queue through
 * vq_fail.
 *
 * Concurrency: the guest writes its side of the ring while we read it.  A
 * layout copies each descriptor once into a local before it is checked and
 * used, so a guest rewriting it under our feet cannot make us use a value we
 * did not check; it loads what publishes a chain (avail->idx, a packed
 * slot's flags) with acquire and stores what publishes a used one
 * (used->idx, a used descriptor's flags) with release.  The two full barriers
 * of the notify protocol are here, so that no layout can forget them: the
 * "ask for notifies, then look again" step has one between the two, because
 * that is where a lost wakeup would hide, and so does "publish used, then
 * read whether the driver wants an interrupt".
 */
#include "vq_layout.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int vq_fail(struct vq *vq, enum vq_violation v, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(vq->error, sizeof(vq->error), "%s queue: %s", vq->name, what);
	vq->violation = v;
	vq->broken = true;
	return -1;
}

const char *vq_violation_name(enum vq_violation v)
{
	/* No default: -Wswitch names a violation added without a name. */
	switch (v) {
	case VQV_NONE: return "none";
	case VQV_SIZE: return "size";
	case VQV_RING_MISALIGNED: return "ring-misaligned";
	case VQV_RING_OUTSIDE_RAM: return "ring-outside-ram";
	case VQV_AVAIL_AHEAD: return "avail-ahead";
	case VQV_HEAD_RANGE: return "head-range";
	case VQV_DESC_FLAGS: return "desc-flags";
	case VQV_NEXT_RANGE: return "next-range";
	case VQV_LOOP: return "loop";
	case VQV_BUF_OUTSIDE_RAM: return "buf-outside-ram";
	case VQV_READABLE_AFTER_WRITABLE: return "readable-after-writable";
	case VQV_CHAIN_DESCS: return "chain-descs";
	case VQV_CHAIN_BYTES: return "chain-bytes";
	case VQV_INDIRECT_WITH_NEXT: return "indirect-with-next";
	case VQV_INDIRECT_NOT_NEGOTIATED: return "indirect-not-negotiated";
	case VQV_INDIRECT_LEN: return "indirect-len";
	case VQV_INDIRECT_ENTRIES: return "indirect-entries";
	case VQV_INDIRECT_OUTSIDE_RAM: return "indirect-outside-ram";
	case VQV_INDIRECT_NESTED: return "indirect-nested";
	case VQV_INDIRECT_FLAGS: return "indirect-flags";
	case VQV_INDIRECT_NEXT_RANGE: return "indirect-next-range";
	case VQV_INDIRECT_LOOP: return "indirect-loop";
	case VQV_PACKED_WRAP: return "packed-wrap";
	case VQV_PACKED_CHAIN_TOO_LONG: return "packed-chain-too-long";
	case VQV_ID_RANGE: return "id-range";
	case VQV_ID_IN_FLIGHT: return "id-in-flight";
	case VQV_INDIRECT_IN_CHAIN: return "indirect-in-chain";
	}
	return "unknown";
}

int vq_enable(struct vq *vq, const struct guest_mem *mem)
{
	vq->mem = mem;
	vq->broken = false;
	vq->violation = VQV_NONE;
	/* The layout follows the negotiated VIRTIO_F_RING_PACKED, which the
	 * transport copied into vq->packed (features are fixed by now). */
	vq->layout = vq->packed ? &vq_layout_packed : &vq_layout_split;
	if (vq->layout->enable(vq) < 0)
		return -1;
	vq->last_avail = vq->avail_seen = 0;
	vq->used_shadow = 0;
	vq->signalled_used = 0;
	vq->ready = true;
	return 0;
}

void vq_reset(struct vq *vq)
{
	const char *name = vq->name;
	uint64_t max_chain_bytes = vq->max_chain_bytes;

	/* The layout goes too: it follows the features, which a reset drops. */
	memset(vq, 0, sizeof(*vq));
	vq->name = name;
	vq->max_chain_bytes = max_chain_bytes;
}

bool vq_has_avail(const struct vq *vq)
{
	return vq->ready && !vq->broken && !vq->held && vq->layout->has_avail(vq);
}

void vq_chain_start(struct vq_chain *c, uint16_t head)
{
	c->head = head;
	c->indirect = false;
	c->count = 0;
	c->out_len = c->in_len = 0;
}

int vq_chain_add(struct vq *vq, struct vq_chain *c, uint64_t addr, uint32_t len, bool writes)
{
	uint8_t *host = gmem_ptr(vq->mem, addr, len);

	if (!host)
		return vq_fail(vq, VQV_BUF_OUTSIDE_RAM,
			       "descriptor buffer 0x%" PRIx64 "+%" PRIu32 " lies outside guest RAM", addr, len);
	/* The last buffer, not in_len: a zero-length writable one counts too. */
	if (!writes && c->count && c->buf[c->count - 1].device_writes)
		return vq_fail(vq, VQV_READABLE_AFTER_WRITABLE,
			       "device-readable descriptor after a writable one (head %u, hop %u)", c->head, c->count);
	if (c->count >= VQ_MAX_CHAIN)
		return vq_fail(vq, VQV_CHAIN_DESCS, "chain longer than %u descriptors (head %u)", VQ_MAX_CHAIN,
			       c->head);
	/* Checked per descriptor, so the walk stops where the chain crosses
	 * the cap instead of resolving the rest.  No overflow: at most
	 * VQ_MAX_CHAIN lengths of 32 bits each. */
	if (vq->max_chain_bytes && c->out_len + c->in_len + len > vq->max_chain_bytes)
		return vq_fail(vq, VQV_CHAIN_BYTES, "chain longer than %" PRIu64 " bytes (head %u)",
			       vq->max_chain_bytes, c->head);
	c->buf[c->count++] = (struct vq_buf){ .host = host, .len = len, .device_writes = writes };
	if (writes)
		c->in_len += len;
	else
		c->out_len += len;
	return 0;
}

const void *vq_indirect_table(struct vq *vq, struct vq_chain *c, uint64_t addr, uint32_t len, unsigned *entries)
{
	const void *table;

	if (len == 0 || len % 16) {
		vq_fail(vq, VQV_INDIRECT_LEN, "indirect table length %" PRIu32 " is not a non-zero multiple of 16 (head %u)",
			len, c->head);
		return NULL;
	}
	*entries = len / 16;
	if (*entries > VQ_MAX_CHAIN) {
		vq_fail(vq, VQV_INDIRECT_ENTRIES, "indirect table of %u entries exceeds %u", *entries, VQ_MAX_CHAIN);
		return NULL;
	}
	table = gmem_ptr(vq->mem, addr, len);
	if (!table) {
		vq_fail(vq, VQV_INDIRECT_OUTSIDE_RAM, "indirect table 0x%llx+%" PRIu32 " lies outside guest RAM",
			(unsigned long long)addr, len);
		return NULL;
	}
	c->indirect = true;
	return table;
}

int vq_pop_avail(struct vq *vq, struct vq_chain *c)
{
	if (!vq->ready || vq->broken || vq->held)
		return vq->broken ? -1 : 0;
	return vq->layout->pop(vq, c);
}

void vq_unpop_avail(struct vq *vq)
{
	vq->layout->unpop(vq);
}

void vq_push_used(struct vq *vq, uint16_t head, uint32_t len)
{
	vq->layout->push(vq, head, len);
}

void vq_suppress_notify(struct vq *vq)
{
	if (!vq->ready)         /* reset or never enabled: no rings to write */
		return;
	vq->layout->suppress_notify(vq);
}

bool vq_enable_notify_and_recheck(struct vq *vq)
{
	if (!vq->ready)         /* a timer can outlive a device reset */
		return false;
#if LKVM_MUTANT == LKVM_MUT_RECHECK_NO_FENCE
	/* Mutant: without the fence the CPU may take the re-check's load
	 * before the "notify me" store leaves its store buffer. */
	bool slipped = vq_has_avail(vq);

	RACE_POINT(RACE_H_NOTIFY_RECHECK);
	vq->layout->enable_notify(vq);
	return slipped;
#endif
	vq->layout->enable_notify(vq);
	RACE_POINT(RACE_H_NOTIFY_ENABLED);
	/* Publish "notify me" before looking at the avail side again:
	 * otherwise the guest may add a buffer, see the old mark, skip the
	 * notify, and we sleep on a non-empty ring. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	RACE_POINT(RACE_H_NOTIFY_RECHECK);
#if LKVM_MUTANT == LKVM_MUT_NO_RECHECK
	return false;   /* mutant: "nothing slipped in", without looking */
#endif
	return vq_has_avail(vq);
}

bool vq_should_interrupt(struct vq *vq)
{
	/* Pairs with the guest's barrier between re-enabling interrupts and
	 * re-reading the used side: our used->idx (or used descriptor) store
	 * must be visible before we read whether the guest wants an interrupt. */
	RACE_POINT(RACE_H_IRQ_DECIDE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	RACE_POINT(RACE_H_IRQ_DECIDE);
	return vq->layout->should_interrupt(vq);
}
