/*
 * cmdline.h -- the run's parameters, read from the PVH command line.
 *
 * Devices come as Linux's virtio_mmio.device=SIZE@ADDR:IRQ words; the
 * workload's parameters as lkvm.NAME=VALUE (docs/boot-protocol.md).
 */
#ifndef CMDLINE_H
#define CMDLINE_H

#include <stdint.h>

#include "notify_policy.h"

#define MAX_DEVICES 4

struct mmio_window {
	uint64_t base, size;
	unsigned irq;
};

/* Where the guest's counters go (lkvm.report=): the launcher's report port,
 * or also one `lkvm-report:` line on the console for a VMM without that
 * port.  auto: the line only when the console is not in the launcher's
 * window (LKVM_MMIO_BASE), i.e. under some other VMM. */
enum report_to { REPORT_AUTO, REPORT_PORT, REPORT_CONSOLE };

/* The network card's ring layout (lkvm.layout=): split (virtio 1.2, 2.7)
 * or packed (2.8, VIRTIO_F_RING_PACKED).  The console stays split. */
enum ring_layout { LAYOUT_SPLIT, LAYOUT_PACKED };

struct params {
	struct mmio_window dev[MAX_DEVICES];
	unsigned ndev;
	char workload[16], policy[32], fault[32];   /* NUL-terminated copies */
	uint64_t bytes;
	uint32_t frame, ring, segments;
	uint32_t boot_status;          /* the boot workload's exit status */
	uint32_t pace_ns, tsc_khz;     /* per-frame work, and the TSC rate to time it */
	/* lkvm.burst=N (raw workload): after every N frames wait until the
	 * device has used them all, as the run's tail does; 0: only at the end */
	uint32_t burst;
	int wait_halt;
	enum indirect_kind indirect;
	uint32_t indirect_threshold;   /* 0: max(16, ring/8) */
	uint32_t indirect_cost_ns;     /* work per indirect table built, timed with the TSC */
	uint32_t indirect_cold_lines;  /* cold cache lines loaded per indirect table */
	uint32_t ip, peer_ip;          /* tcp workload: our address, the receiver's (host order) */
	uint16_t peer_port;
	int tso;                       /* negotiate CSUM + HOST_TSO4 and send large segments */
	enum report_to report;
	enum ring_layout layout;       /* default (0): split */
	int tsc_khz_given;             /* lkvm.tsc_khz was on the line (else measured, see main.c) */
	uint32_t trace_events;         /* lkvm.trace=N: keep a timeline of N events (trace.h); 0: none */
	/* lkvm.coalesce=USECS:PACKETS: ask the device for virtio 1.3's TX
	 * notification coalescing (net_drv.c) and keep TX interrupts on */
	int coalesce;
	uint32_t coal_usecs, coal_packets;
};

/* Returns 0, or -1 after printing what was wrong. */
int cmdline_parse(const char *line, struct params *p);
int word_eq(const char *s, uint32_t len, const char *w);
int streq(const char *a, const char *b);

/* The window of the first device with this virtio device ID, or 0. */
const struct mmio_window *find_device(const struct params *p, uint32_t device_id);

#endif
