/*
 * run_state.h -- one `lguest-kvm run`, as the files that tell its story
 * share it.  The story, in the order lguest's launcher told it:
 *
 *   run.c         start to finish: the signal thread, setup (steps 1-3,
 *                 with the privilege drop and the wiring), the vCPU, the
 *                 teardown, and in which order all that happens
 *   run_guest.c   1. the guest: VM, ELF image, vCPU, the net backend's
 *                 host side, the command line, the PVH start info
 *   run_vcpu.c    4. the vCPU loop: KVM_RUN, its exits, the kick signal
 *   run_stats.c   5. the stats block, in its fixed order
 *   run_exit.c    5. the exit status, and the line that says why
 *   run_thread.c  1. and 4. for --vm none: no VM, guest RAM only, and
 *                 the stub's driver and workloads on this thread
 *
 * (Steps 2 and 3, wiring the devices and dropping privileges, are
 * wiring.c's and sandbox.c's; run.c calls them.)
 *
 * The state embeds the devices themselves (struct net, struct console);
 * a net backend's own state stays behind its table (net_backend.h).
 */
#ifndef RUN_STATE_H
#define RUN_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "console.h"
#include "lguest_kvm_abi.h"
#include "net.h"
#include "options.h"
#include "sandbox.h"
#include "stats.h"
#include "trace_ring.h"
#include "uart16550.h"
#include "vm.h"
#include "wiring.h"

#define MAX_EXIT_REASON 64

enum run_end { END_NONE, END_GUEST_EXIT, END_CRASH, END_SIGNAL, END_TIME_LIMIT, END_HOST_ERROR };

struct run_state {
	const struct run_options *o;
	struct vm vm;
	struct wiring wiring;       /* the devices' view of vm */
	struct console con;
	struct net net;
	uint64_t exits[MAX_EXIT_REASON];
	uint64_t exits_interrupted, io_unknown, mmio_unknown, bad_reports;
	enum run_end end;
	int guest_status, signal;
	char why[300];
	char stopped_vcpu[2000];     /* a run stopped from outside: where the vCPU stood (vcpu_state.h) */
	struct lkvm_guest_report report;
	int have_report;
	double t_start, t_end;
	unsigned tsc_khz;           /* the guest's TSC rate, as lkvm.tsc_khz told it (0: unknown) */
	struct sandbox_state sandbox;
	pthread_t vcpu_thread;      /* the thread that runs KVM_RUN (the kick's target) */
	int stop_signal;            /* written by the signal thread, read by the vCPU */
	/* --model thread: the stub's command line, and the places it would
	 * have left a VM (MMIO accesses, halts), each charged --exit-cost-ns */
	char thread_cmdline[1024];
	uint64_t thread_exits;
	uint64_t thread_kicks;      /* --vm none --model lguest: waker kicks served */
	/* --trace: the host's events, the file they go to (opened while still
	 * privileged), and the guest's ring as it announced it */
	struct trace_ring trace;
	FILE *trace_file;
	uint64_t trace_gpa;         /* the guest's struct lkvm_trace_buf (0: not announced) */
	uint64_t trace_sync_host;   /* host TSC when it took that announcement (0: none yet) */
	/* A Linux guest (run_linux.c): COM1, and the ACPI sleep port that powers off */
	bool linux_guest;
	struct uart16550 uart;
};

/* 1. run_guest.c: VM, image, vCPU, the backend's host side, start info.
 * -1 with diag set. */
int build_guest(struct run_state *rs);
/* 1. run_linux.c, a Linux guest: kernel, initrd, ACPI, boot_params, the
 * vCPU at the 32-bit entry, the backend.  -1 with diag set. */
int build_linux_guest(struct run_state *rs);
/* The stub's command line for a run: its devices and parameters.  -1 with
 * diag set if it does not fit. */
int build_cmdline(const struct run_options *o, unsigned tsc_khz, char *buf, size_t size);
/* run_thread.c, --model thread: the host its devices get, before they are
 * initialised; their interrupt lines wake the hosted guest's halt. */
const struct device_host *thread_device_host(struct run_state *rs);
/* 1. run_thread.c, --model thread: guest RAM, the backend, the command
 * line, the halt's eventfd; no VM.  -1 with diag set. */
int build_thread_guest(struct run_state *rs);
/* After net_stop (no device thread left to raise a line): close the
 * halt's eventfd. */
void release_thread_guest(void);

/* 4. run_vcpu.c.  Let the kick signal through only inside KVM_RUN; -1 with
 * diag set. */
int set_vcpu_signal_mask(struct run_state *rs);
/* Run the vCPU until rs->end is set: the guest left or crashed, KVM_RUN
 * failed, or rs->stop_signal asked. */
void run_vcpu(struct run_state *rs);
/* The guest wrote `size` bytes of `data` to I/O port `port` (an exit in
 * a VM; a call in the thread model): leave, crash, report, trace. */
void run_port_out(struct run_state *rs, uint16_t port, const uint8_t *data, uint32_t size);
/* An access to guest-physical `addr` by the guest, to the device whose
 * window holds it (or nothing: reads 0, counted). */
void run_mmio_dispatch(struct run_state *rs, uint64_t addr, uint8_t *data, uint32_t len, bool is_write);
/* 4. run_thread.c, --model thread: run the stub's workload on this thread
 * until it returns or rs->stop_signal asks. */
void run_thread_guest(struct run_state *rs);

/* 5. run_stats.c: every key of the block, in docs/stats.md's order. */
void collect_stats(const struct run_state *rs, struct stats *st);
/* The net device's ring layout as negotiated: "packed" or "split". */
const char *run_ring_layout(const struct run_state *rs);
/* 5. run_trace.c, --trace: the guest's ring out of its RAM, checked, and
 * the host's, merged on one clock into rs->trace_file.  0, or -1 with
 * diag set. */
int run_trace_write(struct run_state *rs);
/* 5. run_exit.c: the process exit status, after naming the reason on
 * stderr if it is not success. */
int finish(const struct run_state *rs);

#endif
