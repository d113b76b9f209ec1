/*
 * sandbox.h -- the launcher as a security boundary: what a run gives up
 * once its setup is done (docs/architecture.md, "Privileges").
 *
 * run.c calls these in order:
 *   sandbox_close_inherited_fds   first thing: nothing from our parent leaks in
 *   sandbox_drop_privileges       after /dev/kvm, the VM, the tap and the stats
 *                                 file are open: leave uid 0, clear capabilities,
 *                                 set no_new_privs
 *   sandbox_lock_down             after the last thread started, before the
 *                                 vCPU first runs: bound the open files, install
 *                                 the seccomp allow-list on every thread
 *   sandbox_stats                 the outcome, into the stats block
 */
#ifndef SANDBOX_H
#define SANDBOX_H

#include <stdbool.h>
#include <sys/types.h>

#include "net_config.h"
#include "stats.h"

/* Who a run becomes when it was started as root without --user: the
 * account that owns no files and no processes of its own. */
#define SANDBOX_DEFAULT_USER "nobody"

struct sandbox_config {
	const char *user;           /* --user NAME, or NULL */
	bool stay_root;             /* --stay-root: debugging only */
	bool seccomp;               /* false with --no-seccomp */
	bool seccomp_probe;         /* --fault seccomp-probe: try a forbidden call once locked */
	enum net_model model;
	enum net_backend backend;
	bool no_vm;                 /* --model thread: no KVM call is allowed */
	int vm_fd, vcpu_fd;         /* the only KVM fds the run loop may ioctl */
};

struct sandbox_state {
	char cap_eff[32];           /* CapEff after the drop ("not dropped" before) */
	uid_t uid;                  /* real, effective and saved uid after the drop */
	gid_t gid;
	const char *seccomp_mode;   /* "kill" (installed), "off" (--no-seccomp) or "not installed" */
	unsigned long nofile_limit; /* RLIMIT_NOFILE after lock-down, 0 before */
};

void sandbox_init(struct sandbox_state *sb);
/* Close every descriptor above stderr: the run opens all it needs itself. */
void sandbox_close_inherited_fds(void);
/* Leave uid 0 (to --user, or to SANDBOX_DEFAULT_USER unless --stay-root),
 * drop every capability, set no_new_privs.  Before any thread starts:
 * capabilities and ids are per thread.  -1 with the reason recorded by diag_fail(). */
int sandbox_drop_privileges(const struct sandbox_config *cfg, struct sandbox_state *sb);
/* Lower RLIMIT_NOFILE and RLIMIT_CORE, then (unless --no-seccomp) install
 * the allow-list on every thread of the process.  -1 with the reason recorded by diag_fail(). */
int sandbox_lock_down(const struct sandbox_config *cfg, struct sandbox_state *sb);
void sandbox_stats(const struct sandbox_state *sb, struct stats *st);

#endif
