/*
 * workload_hostile.c -- the hostile virtio rings the launcher's tests feed
 * the host: one crafted chain the host must refuse (--fault hostile-head,
 * -next, -addr, -wrap, -loop, -avail, -huge, -indirect-*), or
 * (hostile-flood) as much legal work as the host's caps allow, for ever,
 * which only a stop signal may end.
 *
 * Apart from the CPU faults (workload_misc.c) so that the no-VM guest
 * (--vm none, launcher/run_thread.c) runs these very files against its
 * hosts too.  Every address the device is given goes through
 * virt_to_phys, and every buffer comes from alloc_pages: guest RAM in a VM
 * and without one.
 */
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "io.h"
#include "lib.h"
#include "net_drv.h"
#include "workloads.h"

/* Put one crafted chain at head 0 of the TX ring, publish, notify, and wait
 * for the device to say DEVICE_NEEDS_RESET.  A correct host refuses every
 * one of these with a clear error and keeps running. */
static int hostile(const struct params *p, const char *kind, uint32_t kind_len)
{
	static struct net_drv n;
	const struct mmio_window *w = find_device(p, VIRTIO_ID_NET);
	struct vring_desc *d, *table;
	uint8_t *frame;
	uint64_t frame_pa, table_pa, until;
	uint16_t advance = 1;

	if (!w || net_drv_init(&n, w, p, 16) < 0)
		return LKVM_STATUS_FAILED;
	frame = alloc_pages(4096);      /* 64 bytes of frame, then the indirect table */
	table = (struct vring_desc *)(frame + 2048);
	frame_pa = virt_to_phys(frame);
	table_pa = virt_to_phys(table);
	d = n.tx.vr.desc;
	d[0] = (struct vring_desc){ .addr = frame_pa, .len = 64 };
	n.tx.vr.avail->ring[0] = 0;
	if (word_eq(kind, kind_len, "hostile-head")) {
		n.tx.vr.avail->ring[0] = (uint16_t)(p->ring + 5);
	} else if (word_eq(kind, kind_len, "hostile-next")) {
		d[0].flags = VRING_DESC_F_NEXT;
		d[0].next = (uint16_t)(p->ring + 1);
	} else if (word_eq(kind, kind_len, "hostile-addr")) {
		d[0].addr = 0x7fff00000000ull;
	} else if (word_eq(kind, kind_len, "hostile-wrap")) {
		d[0].addr = ~0ull - 8;            /* addr + len overflows 64 bits */
	} else if (word_eq(kind, kind_len, "hostile-loop")) {
		d[0].flags = VRING_DESC_F_NEXT, d[0].next = 1;
		d[1] = (struct vring_desc){ .addr = frame_pa, .len = 8, .flags = VRING_DESC_F_NEXT, .next = 0 };
	} else if (word_eq(kind, kind_len, "hostile-avail")) {
		advance = (uint16_t)(p->ring + 7);  /* claims more buffers than the ring holds */
	} else if (word_eq(kind, kind_len, "hostile-huge")) {
		/* Every slot: one chain through every descriptor, each covering
		 * the first 16 MiB of RAM (--mem is at least that) -- ring x ring
		 * x 16 MiB for one notify, unless the host caps a chain. */
		for (uint32_t i = 0; i < p->ring; i++) {
			d[i] = (struct vring_desc){ .addr = 0, .len = 16u << 20,
						    .flags = i + 1 < p->ring ? VRING_DESC_F_NEXT : 0,
						    .next = (uint16_t)(i + 1) };
			n.tx.vr.avail->ring[i] = 0;
		}
		advance = (uint16_t)p->ring;
	} else if (word_eq(kind, kind_len, "hostile-indirect-nested") ||
		   word_eq(kind, kind_len, "hostile-indirect-len") ||
		   word_eq(kind, kind_len, "hostile-indirect-addr") ||
		   word_eq(kind, kind_len, "hostile-indirect-loop") ||
		   word_eq(kind, kind_len, "hostile-indirect-next")) {
		const char *k = kind + 17;
		uint32_t kl = kind_len - 17;

		table[0] = (struct vring_desc){ .addr = frame_pa, .len = 16, .flags = VRING_DESC_F_NEXT, .next = 1 };
		table[1] = (struct vring_desc){ .addr = frame_pa, .len = 16 };
		d[0] = (struct vring_desc){ .addr = table_pa, .len = 2 * 16, .flags = VRING_DESC_F_INDIRECT };
		if (word_eq(k, kl, "nested"))
			table[1].flags = VRING_DESC_F_INDIRECT;
		else if (word_eq(k, kl, "len"))
			d[0].len = 24;
		else if (word_eq(k, kl, "addr"))
			d[0].addr = 0x7fff00000000ull;
		else if (word_eq(k, kl, "loop"))
			table[1].flags = VRING_DESC_F_NEXT, table[1].next = 0;
		else
			d[0].flags |= VRING_DESC_F_NEXT;
	} else {
		printf("guest: unknown fault mode\n");
		return LKVM_STATUS_FAILED;
	}
	barrier();
	*(volatile uint16_t *)&n.tx.vr.avail->idx = advance;
	mb();
	mmio_write32(w->base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
	/* Up to 2 s by the clock, not a count of polls: a threaded host takes
	 * the notify on its own thread, which a loaded machine may not run for
	 * milliseconds (200,000 polls ran out in 1 of 30 no-VM runs at load
	 * 4, and the run ended "accepted", status 33, instead of 126). */
	until = rdtsc() + (p->tsc_khz ? (uint64_t)p->tsc_khz * 2000 : 4000000000ull);
	do {
		if (virtio_drv_needs_reset(&n.dev)) {
			printf("guest: the device refused the hostile ring and needs a reset\n");
			return LKVM_STATUS_OK;
		}
		cpu_relax();
	} while (rdtsc() < until);
	printf("guest: the device accepted a hostile ring\n");
	return LKVM_STATUS_FAILED;
}

/* The most a guest can ask of the TX queue within the host's caps, for
 * ever: every slot holds a 64 KiB chain (all slots share head 0, up to 16
 * descriptors over one 64 KiB buffer), and each chain the host returns is
 * posted again at once, with a notify.  Nothing here breaks a rule the host
 * checks, so the ring never fails; only a signal or --max-seconds ends the
 * run, and the host must still end it within a second. */
static int flood(const struct params *p)
{
	static struct net_drv n;
	const struct mmio_window *w = find_device(p, VIRTIO_ID_NET);
	uint16_t ring = (uint16_t)p->ring, avail = 0;
	uint16_t descs = ring < 16 ? ring : 16;
	uint8_t *buf;
	unsigned long turns = 0;

	if (!w || net_drv_init(&n, w, p, 16) < 0)
		return LKVM_STATUS_FAILED;
	buf = alloc_pages(64u << 10);
	for (uint16_t i = 0; i < descs; i++)
		n.tx.vr.desc[i] = (struct vring_desc){ .addr = virt_to_phys(buf) + i * (65536u / descs),
						       .len = 65536u / descs,
						       .flags = i + 1 < descs ? VRING_DESC_F_NEXT : 0,
						       .next = (uint16_t)(i + 1) };
	printf("guest: 64 KiB chains in every TX slot, refilled for ever\n");
	for (;;) {
		uint16_t used = *(volatile uint16_t *)&n.tx.vr.used->idx;

		if ((uint16_t)(avail - used) < ring) {
			while ((uint16_t)(avail - used) < ring)
				n.tx.vr.avail->ring[avail++ % ring] = 0;
			barrier();
			*(volatile uint16_t *)&n.tx.vr.avail->idx = avail;
			mb();
			mmio_write32(w->base + VIRTIO_MMIO_QUEUE_NOTIFY, 1);
		}
		if (!(++turns & 0xfffff) && virtio_drv_needs_reset(&n.dev)) {
			printf("guest: the device refused a chain within its caps\n");
			return LKVM_STATUS_FAILED;
		}
	}
}

int workload_hostile_ring(const struct params *p)
{
	const char *f = p->fault;
	uint32_t len = strlen(f);

	/* They write split rings by hand (n.tx.vr), which a packed queue does
	 * not have. */
	if (p->layout != LAYOUT_SPLIT) {
		printf("guest: the hostile-* faults build split rings: not with lkvm.layout=packed\n");
		return LKVM_STATUS_FAILED;
	}
	if (word_eq(f, len, "hostile-flood"))
		return flood(p);
	return hostile(p, f, len);
}
