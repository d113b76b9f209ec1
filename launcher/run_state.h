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
 *
 * (Steps 2 and 3, wiring the devices and dropping privileges, are
 * wiring.c's and sandbox.c's; run.c calls them.)
 *
 * The state embeds the devices themselves -- struct net and, through
 * net.h, libslirp's header -- so every file that includes this one is built
 * into run_lib, with libslirp visible (meson.build); the rest of the
 * launcher never sees it.
 */
#ifndef RUN_STATE_H
#define RUN_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "console.h"
#include "lguest_kvm_abi.h"
#include "net.h"
#include "options.h"
#include "sandbox.h"
#include "stats.h"
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
	struct lkvm_guest_report report;
	int have_report;
	double t_start, t_end;
	struct sandbox_state sandbox;
	pthread_t vcpu_thread;      /* the thread that runs KVM_RUN (the kick's target) */
	int stop_signal;            /* written by the signal thread, read by the vCPU */
};

/* 1. run_guest.c: VM, image, vCPU, the backend's host side, start info.
 * -1 with diag set. */
int build_guest(struct run_state *rs);

/* 4. run_vcpu.c.  Let the kick signal through only inside KVM_RUN; -1 with
 * diag set. */
int set_vcpu_signal_mask(struct run_state *rs);
/* Run the vCPU until rs->end is set: the guest left or crashed, KVM_RUN
 * failed, or rs->stop_signal asked. */
void run_vcpu(struct run_state *rs);

/* 5. run_stats.c: every key of the block, in docs/stats.md's order. */
void collect_stats(const struct run_state *rs, struct stats *st);
/* 5. run_exit.c: the process exit status, after naming the reason on
 * stderr if it is not success. */
int finish(const struct run_state *rs);

#endif
