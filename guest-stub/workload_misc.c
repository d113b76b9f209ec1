/*
 * workload_misc.c -- the small workloads: echo (console input back out, to
 * exercise receive buffers, interrupts and hlt) and the deliberate faults
 * and hostile rings that the launcher's tests feed it: one crafted chain
 * the host must refuse, or (hostile-flood) as much legal work as the
 * host's caps allow, for ever, which only a stop signal may end -- and
 * trace rings the launcher must not trust (hostile-trace-*).
 */
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>
#include <linux/virtio_ring.h>

#include "console_drv.h"
#include "io.h"
#include "lib.h"
#include "net_drv.h"
#include "workloads.h"

/* Echo console input a line at a time; a line "quit" ends the workload. */
int workload_echo(void)
{
	char buf[256], line[256];
	size_t have = 0;

	printf("echo: type lines, 'quit' ends\n");
	for (;;) {
		size_t n = console_read(buf, sizeof(buf));

		for (size_t i = 0; i < n; i++) {
			if (buf[i] != '\n' && have < sizeof(line) - 1) {
				line[have++] = buf[i];
				continue;
			}
			line[have] = 0;
			if (have == 4 && !memcmp(line, "quit", 4)) {
				printf("echo: bye\n");
				return LKVM_STATUS_OK;
			}
			printf("echo: %s\n", line);
			have = 0;
		}
	}
}

extern char idt[];

/* A timeline ring (lkvm.trace) that lies, announced as the real one is
 * (trace.c), after which the workload ends well: the launcher must still
 * write its trace file, saying what it refused, and read nothing outside
 * RAM.
 *   hostile-trace-addr  the ring's address is past the end of RAM
 *   hostile-trace-end   a well-formed header on RAM's last page, its events
 *                       running off the end
 *   hostile-trace-junk  a full ring whose head is far past its capacity,
 *                       three events in four of no type the guest records
 *                       (one of them a host event, forged), stamps running
 *                       backwards, and clock stamps out of order */
static int hostile_trace(const struct params *p, const char *kind, uint32_t kind_len)
{
	static const uint16_t types[] = { 0, LKVM_TR_KICK, LKVM_TR_TIMER_FIRE, 999 };
	uint64_t bytes = sizeof(struct lkvm_trace_buf) + (uint64_t)p->trace_events * sizeof(struct lkvm_trace_event);
	struct lkvm_trace_buf *t;

	if (!p->trace_events) {
		printf("guest: the hostile-trace-* faults need lkvm.trace (run --trace)\n");
		return LKVM_STATUS_FAILED;
	}
	if (word_eq(kind, kind_len, "hostile-trace-addr")) {
		outl(LKVM_PORT_TRACE, 0xfffff000u);
		return LKVM_STATUS_OK;
	}
	t = word_eq(kind, kind_len, "hostile-trace-end") ? (void *)(heap_end_addr() - 4096) : alloc_pages(bytes);
	t->magic = LKVM_TRACE_BUF_MAGIC;
	t->version = LKVM_TRACE_VERSION;
	t->capacity = p->trace_events;
	if (word_eq(kind, kind_len, "hostile-trace-junk")) {
		for (uint32_t i = 0; i < p->trace_events; i++)
			t->events[i] = (struct lkvm_trace_event){ .tsc = ~0ull - i, .type = types[i % 4], .a = i };
		t->head = ~0ull - 7;
		t->sync_before = 100;
		t->sync_after = 50;
	}
	outl(LKVM_PORT_TRACE, (uint32_t)(uint64_t)t);
	printf("guest: announced a hostile trace ring (%s)\n", kind);
	return LKVM_STATUS_OK;
}

/* Put one crafted chain at head 0 of the TX ring, publish, notify, and wait
 * for the device to say DEVICE_NEEDS_RESET.  A correct host refuses every
 * one of these with a clear error and keeps running. */
static int hostile(const struct params *p, const char *kind, uint32_t kind_len)
{
	static struct net_drv n;
	static uint8_t frame[64];
	static struct vring_desc table[4];
	const struct mmio_window *w = find_device(p, VIRTIO_ID_NET);
	struct vring_desc *d;
	uint16_t advance = 1;

	if (!w || net_drv_init(&n, w, p, 16) < 0)
		return LKVM_STATUS_FAILED;
	d = n.tx.vr.desc;
	d[0] = (struct vring_desc){ .addr = (uint64_t)frame, .len = sizeof(frame) };
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
		d[1] = (struct vring_desc){ .addr = (uint64_t)frame, .len = 8, .flags = VRING_DESC_F_NEXT, .next = 0 };
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

		table[0] = (struct vring_desc){ .addr = (uint64_t)frame, .len = 16, .flags = VRING_DESC_F_NEXT, .next = 1 };
		table[1] = (struct vring_desc){ .addr = (uint64_t)frame, .len = 16 };
		d[0] = (struct vring_desc){ .addr = (uint64_t)table, .len = 2 * 16, .flags = VRING_DESC_F_INDIRECT };
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
	for (unsigned i = 0; i < 200000; i++)
		if (virtio_drv_needs_reset(&n.dev)) {
			printf("guest: the device refused the hostile ring and needs a reset\n");
			return LKVM_STATUS_OK;
		}
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
		n.tx.vr.desc[i] = (struct vring_desc){ .addr = (uint64_t)buf + i * (65536u / descs),
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

int workload_fault(const struct params *p)
{
	const char *f = p->fault;
	uint32_t len = strlen(f);

	if (word_eq(f, len, "exception")) {
		printf("guest: executing an invalid instruction on purpose\n");
		__asm__ volatile("xor %%ecx, %%ecx; ud2" ::: "rcx");
	} else if (word_eq(f, len, "triple")) {
		printf("guest: wiping the IDT and faulting on purpose\n");
		memset(idt, 0, 256 * 16);
		__asm__ volatile("xor %%ecx, %%ecx; ud2" ::: "rcx");
	} else if (word_eq(f, len, "hang")) {
		printf("guest: spinning forever on purpose\n");
		for (;;)
			cpu_relax();
	} else if (len > 14 && !memcmp(f, "hostile-trace-", 14)) {
		return hostile_trace(p, f, len);
	} else if (len > 8 && !memcmp(f, "hostile-", 8) && p->layout != LAYOUT_SPLIT) {
		/* They write split rings by hand (n.tx.vr), which a packed
		 * queue does not have. */
		printf("guest: the hostile-* faults build split rings: not with lkvm.layout=packed\n");
		return LKVM_STATUS_FAILED;
	} else if (word_eq(f, len, "hostile-flood")) {
		return flood(p);
	} else if (len > 8 && !memcmp(f, "hostile-", 8)) {
		return hostile(p, f, len);
	}
	printf("guest: unknown fault mode\n");
	return LKVM_STATUS_FAILED;
}
