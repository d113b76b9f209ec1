/*
 * lguest_kvm_abi.h -- the contract between the launcher and the guest stub.
 *
 * Everything both sides must agree on and that no standard already fixes lives
 * here: where the virtio-mmio devices sit, which I/O ports the guest uses to
 * leave and to hand back its counters, and the layout of that counter report.
 * The boot itself follows the PVH ABI (docs/boot-protocol.md): the launcher
 * describes RAM, devices and run parameters in an hvm_start_info and a Linux
 * style command line, so nothing about *those* needs a private header.
 *
 * This header is included by hosted code (launcher, devices, tests) and by the
 * freestanding guest, so it may only use <stdint.h> (and the constants also serve entry.S).
 */
#ifndef LGUEST_KVM_ABI_H
#define LGUEST_KVM_ABI_H

#ifndef __ASSEMBLER__
#include <stdint.h>
#endif

/* Guest-physical layout chosen by the launcher (RAM starts at 0). */
#define LKVM_START_INFO_GPA   0x6000  /* struct hvm_start_info + memmap */
#define LKVM_CMDLINE_GPA      0x7000  /* NUL-terminated command line */
#define LKVM_CMDLINE_MAX      4096u
#define LKVM_BOOT_GDT_GPA     0x5000  /* flat 32-bit GDT for the PVH entry */
#define LKVM_MIN_LOAD_GPA     0x100000 /* ELF segments must sit at or above 1 MiB */

#define LKVM_MMIO_BASE        0xd0000000 /* first virtio-mmio window */
#define LKVM_MMIO_SIZE        0x1000     /* one window per device */
#define LKVM_IRQ_BASE         5u            /* device n uses IOAPIC GSI 5+n */
#define LKVM_IRQ_VECTOR_BASE  0x20          /* ... delivered as vector 0x20+GSI */
#define LKVM_TIMER_VECTOR     0x3e          /* the guest's local APIC timer */
#define LKVM_KICK_VECTOR      0x3f          /* the launcher's "come out" MSI */

/*
 * I/O ports.  The exit port has the number and value encoding of QEMU's
 * isa-debug-exit device (iobase 0x501): the guest writes a status byte V.
 * QEMU would leave with (V << 1) | 1; this launcher leaves with V itself so
 * that a guest status of 0 means success on the shell too.
 */
#define LKVM_PORT_EXIT        0x501
#define LKVM_PORT_REPORT      0x510  /* 32-bit out: GPA of struct lkvm_guest_report */
#define LKVM_PORT_CRASH       0x511  /* 8-bit out from the exception path: vector */
#define LKVM_PORT_TRACE       0x512  /* 32-bit out, once: GPA of struct lkvm_trace_buf (lkvm.trace=N) */

/* lkvm.indirect_cost_ns and lkvm.indirect_cold_lines (--indirect-cost-ns,
 * --indirect-cold-lines): their ranges, and the private buffer the cold
 * lines come from, which the guest allocates from its RAM. */
#define LKVM_INDIRECT_COST_NS_MAX    1000000u
/* lkvm.coalesce=USECS:PACKETS (--coalesce): each at most this */
#define LKVM_COALESCE_MAX            1000000u
#define LKVM_INDIRECT_COLD_LINES_MAX 1024u
#define LKVM_INDIRECT_COLD_BYTES     (64u << 20)

/* Guest statuses the stub uses (the launcher passes any value through). */
#define LKVM_STATUS_OK        0
#define LKVM_STATUS_FAILED    33     /* the stub found a problem and said why */

/*
 * The guest's own counters, written once at the end of a workload.  The
 * launcher reads it through the bounds-checked guest-memory helper and merges
 * it into the stats, so nothing is parsed out of console text.
 */
#ifndef __ASSEMBLER__
#define LKVM_REPORT_MAGIC     0x4c4b564d52455054ull /* "LKVMREPT" */
#define LKVM_REPORT_VERSION   5u

struct lkvm_guest_report {
	uint64_t magic;
	uint32_t version;
	uint32_t size;                 /* sizeof(struct lkvm_guest_report) */
	uint64_t tx_bytes;             /* payload bytes handed to the device */
	uint64_t tx_frames;
	uint64_t tx_kicks;             /* calls to the kick path */
	uint64_t tx_notifies;          /* kicks that wrote QueueNotify */
	uint64_t tx_notifies_suppressed; /* kicks that the policy kept quiet */
	uint64_t tx_notifies_forced;   /* notifies on a full ring */
	uint64_t tx_ring_full;         /* adds that found no room */
	uint64_t tx_full_ring_reads_zero; /* kicks where the seed's modulo read a full ring as 0 */
	uint64_t tx_threshold_final;
	uint64_t tx_waits_halted;      /* full-ring waits that used hlt */
	uint64_t tx_buffers_indirect;
	uint64_t tx_buffers_direct;
	uint64_t tx_descriptors_used;
	uint64_t irq_count;            /* interrupts the guest took (irq_seq), the timer's included */
	uint64_t timer_irqs;           /* of those, the local APIC timer's (timer_seq) */
	uint64_t irqs_at_hlt;          /* interrupts taken between the halt service's sti and hlt (entry.S) */
	uint64_t tsc_workload;         /* guest TSC ticks spent in the workload */
	/* tcp workload (zero otherwise) */
	uint64_t tcp_state;            /* enum tcp_state at the end (guest-stub/tcp_sender.h) */
	uint64_t tcp_arp_requests;     /* ARP requests sent for the peer */
	uint64_t tcp_peer_mac_known;   /* ARP answered */
	uint64_t tcp_bytes_acked;
	uint64_t tcp_segments_sent;
	uint64_t tcp_segments_received;
	uint64_t tcp_retransmits;      /* segments sent again */
	uint64_t tcp_timeouts;         /* retransmission timer expiries */
	uint64_t tcp_fast_retransmits;
	uint64_t tcp_dupacks;
	uint64_t tcp_window_probes;
	uint64_t tcp_mss;
	uint64_t tcp_srtt_ns;          /* smoothed round-trip time at the end */
	uint64_t tcp_waits_halted;     /* waits for the peer spent in hlt */
	uint64_t rx_frames;            /* frames the guest took off the receive queue */
	uint64_t rx_frames_dropped;    /* malformed or not for us */
	/* version 4: what building the TX queue's indirect tables cost */
	uint64_t tx_indirect_tables;      /* tables built (gvq_itable_alloc) */
	uint64_t tx_indirect_build_ticks; /* TSC ticks spent building them */
	uint64_t tx_indirect_cost_ticks;  /* priced work asked per table: lkvm.indirect_cost_ns in ticks */
	/* version 5: how long the guest waited for TX buffers to come back */
	uint64_t tx_wait_ticks;           /* TSC ticks in net_drv_wait_tx, spinning or halted */
};

/*
 * The timeline (`run --trace`, docs/trace.md).  With lkvm.trace=N the guest
 * keeps a ring of N events in its own RAM, stamped with its TSC, and
 * announces it once through LKVM_PORT_TRACE, reading the TSC just before and
 * just after that write; the host stamps the same write with its own TSC,
 * which is how the two clocks are checked against each other.  The host
 * keeps its own ring of the same events (common/trace_ring.h) and, at exit,
 * copies the guest's through the bounds-checked helper, validates every
 * event, and writes both into one file (launcher/trace_file.h).
 *
 * One event is 32 bytes.  The guest writes an event, then advances `head`;
 * a ring that wrapped keeps the newest `capacity` events, and head tells how
 * many were lost.  Nothing the host reads here is trusted.
 */
#define LKVM_TRACE_BUF_MAGIC  0x4c4b564d54524246ull /* "LKVMTRBF" */
#define LKVM_TRACE_VERSION    1u
#define LKVM_TRACE_EVENTS_MAX (1u << 22)   /* 128 MiB of events per side */

enum lkvm_trace_type {
	/* The guest's, on the queue in `queue`. */
	LKVM_TR_KICK = 1,      /* a: outstanding as the policy counted it before publishing,
				* b: outstanding after, c: threshold after the decision,
				* d: LKVM_TRF_* flags */
	LKVM_TR_RING_FULL,     /* a forced notify: an add found no room.  a: outstanding,
				* c: threshold after, d: LKVM_TRF_HOST_NO_NOTIFY */
	LKVM_TR_WAIT_START,    /* a: 1 halt, 0 spin */
	LKVM_TR_WAIT_END,      /* a: interrupts taken during the wait */
	LKVM_TR_IRQ_TAKEN,     /* the guest saw interrupts arrive (its CPL0 path is three
				* instructions and records nothing): a: how many */
	LKVM_TR_GUEST_LAST = LKVM_TR_IRQ_TAKEN,
	/* The host's. */
	LKVM_TR_NOTIFY = 32,   /* a guest notify reached the device (threaded: one wakeup,
				* kicks merged) */
	LKVM_TR_DRAIN,         /* stamped at its start.  a: buffers taken, b: TSC ticks it took,
				* c: enum lkvm_trace_cause */
	LKVM_TR_NO_NOTIFY_SET,
	LKVM_TR_NO_NOTIFY_CLEAR, /* a: 1 if the re-check after clearing found buffers */
	LKVM_TR_TIMER_ARM,     /* a: length in us */
	LKVM_TR_TIMER_FIRE,    /* an expiry the state machine saw (a tx_timer_timeout) */
	LKVM_TR_TIMER_CANCEL,  /* an arm replaced an expiry still pending */
	LKVM_TR_IRQ_RAISE,     /* the device signalled used buffers: an InterruptStatus event
				* (the line rises only if it was low, virtio 1.2 4.2.3.4) */
	LKVM_TR_SYNC,          /* the host took the guest's LKVM_PORT_TRACE write */
	LKVM_TR_HOST_LAST = LKVM_TR_SYNC,
};

#define LKVM_TRF_NOTIFIED       1u  /* the kick wrote QueueNotify */
#define LKVM_TRF_HOST_NO_NOTIFY 2u  /* the host had asked not to be notified */

enum lkvm_trace_cause { LKVM_TRC_NOTIFY, LKVM_TRC_TIMER, LKVM_TRC_CONTINUE, LKVM_TRC_POLL };

struct lkvm_trace_event {
	uint64_t tsc;
	uint16_t type;                 /* enum lkvm_trace_type */
	uint16_t queue;
	uint32_t a, b, c, d;
	uint32_t reserved;
};

struct lkvm_trace_buf {
	uint64_t magic;
	uint32_t version;
	uint32_t capacity;             /* events, a power of two <= LKVM_TRACE_EVENTS_MAX */
	uint64_t head;                 /* events ever written; event k is events[k % capacity] */
	uint64_t sync_before;          /* guest TSC just before the LKVM_PORT_TRACE write */
	uint64_t sync_after;           /* ... and just after it */
	uint64_t reserved[3];
	struct lkvm_trace_event events[];
};
#endif /* __ASSEMBLER__ */

#endif
