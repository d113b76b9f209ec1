/*
 * options.h -- what `lguest-kvm run` was asked to do, after parsing.
 * The table command builds the same options for each of its rows.  Each
 * option is described once, in options.c's table (common/opt_table.h).
 */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "net_config.h"
#include "opt_table.h"   /* parse_size, for the commands that take a SIZE */

struct run_options {
	const char *guest;          /* NULL: the built-in guest stub */
	uint64_t mem;
	const char *workload;       /* raw | tcp | echo | boot */
	const char *policy;         /* always | static:N | dynamic | dynamic-exact | event-idx */
	uint64_t bytes;
	uint32_t frame, ring, segments;
	uint32_t boot_status;       /* test aid: the boot workload exits with it */
	uint32_t pace_ns;           /* guest work per frame, in ns (0: none) */
	uint32_t indirect_cost_ns;  /* guest work per indirect table built, in ns (0: none) */
	uint32_t indirect_cold_lines; /* cold cache lines the guest loads per indirect table */
	bool no_vm;                 /* --vm none: the stub's driver on a host thread */
	uint32_t exit_cost_ns;      /* --vm none: spin per would-be exit */
	const char *wait;           /* spin | halt */
	const char *indirect;       /* never | always | threshold[:N] */
	const char *layout;         /* split | packed: the net queues' ring layout */
	const char *fault;          /* none | exception | triple | hang | hostile-... */
	struct net_config net;
	const char *stats_json;
	const char *trace;          /* --trace FILE: the run's timeline (docs/trace.md), or NULL */
	uint32_t trace_events;      /* --trace-events: each side's ring, in events */
	unsigned max_seconds;       /* 0: no limit */
	bool quiet;                 /* no guest console on stdout */
	const char *user;           /* --user: switch to this user after setup */
	bool stay_root;             /* --stay-root: debugging; a root run otherwise becomes nobody */
	bool no_seccomp;            /* --no-seccomp: debugging; no system call allow-list */
	bool seccomp_probe;         /* --fault seccomp-probe: a test of the filter, not a guest fault */
	uint32_t peer_ip, guest_ip; /* tcp workload, host order */
	uint16_t peer_port;
	bool tso;                   /* tcp over tap: VIRTIO_NET_F_CSUM + HOST_TSO4 */
	const char *coalesce;       /* --coalesce USECS:PACKETS (virtio 1.3), or NULL */
	bool net_given;             /* --net was given (else tcp picks the backend) */
	bool exit_cost_given;       /* --exit-cost-ns was given (--vm none only) */
	bool vm_given;              /* --vm was given */
	bool model_thread;          /* --model thread: the old spelling of --vm none */
	/* A Linux guest instead of the stub (docs/linux-guest.md) */
	bool guest_linux;           /* --guest linux: the installed kernel, our initramfs */
	const char *kernel;         /* --kernel: a bzImage */
	const char *initrd;         /* --initrd */
	const char *append;         /* --append: added to the kernel's command line */
	uint64_t withhold_features; /* --withhold-features: feature bits neither device offers */
};

/* Does this run boot a Linux kernel (--kernel or --guest linux)? */
static inline bool run_is_linux(const struct run_options *o) { return o->kernel || o->guest_linux; }

/* Each option of `run`, described once (options.c): also what the
 * command-line fuzzer and the option-bounds test walk. */
extern const struct opt run_opts[];

void run_options_defaults(struct run_options *o);
/* Parse `run` arguments (argv[0] = "run").  Returns 0, or EXIT_USAGE after
 * printing one line, or -1 for --help/--version (already printed).  Parsing
 * only: it opens nothing and starts nothing (the fuzzer relies on it). */
int run_options_parse(struct run_options *o, int argc, char **argv);

#endif
