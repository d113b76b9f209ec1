/*
 * workload_misc.c -- the small workloads: echo (console input back out, to
 * exercise receive buffers, interrupts and hlt) and the deliberate faults
 * that the launcher's tests feed it: CPU faults, and trace rings the
 * launcher must not trust (hostile-trace-*).  The hostile virtio rings are
 * workload_hostile.c's, which the no-VM guest runs too.
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
	} else if (len > 8 && !memcmp(f, "hostile-", 8)) {
		return workload_hostile_ring(p);
	}
	printf("guest: unknown fault mode\n");
	return LKVM_STATUS_FAILED;
}
