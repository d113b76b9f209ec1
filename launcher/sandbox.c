/*
 * sandbox.c -- least privilege for one run, the way Firecracker's jailer
 * does it: everything privileged happens first, then the process gives it
 * up for good, so code execution in the launcher (a bug in a ring walker, in
 * libslirp) gets no more than the run loop itself needs.
 *
 * The flow, as run.c drives it:
 *
 *   start     close every inherited descriptor above stderr.
 *   setup     (run.c) the stats file, /dev/kvm, the VM, the vCPU, guest RAM,
 *             the tap and libslirp are opened while the process may still be
 *             root; run.c closes the /dev/kvm system fd once the vCPU exists.
 *   drop      clear the bounding set (needs CAP_SETPCAP, so first), leave uid
 *             0 -- to --user NAME, or to `nobody` unless --stay-root -- clear
 *             every capability, set no_new_privs.
 *   threads   (run.c) device/waker, slirp, console input, signal thread.
 *   lock-down cap RLIMIT_NOFILE just above the highest open descriptor and
 *             RLIMIT_CORE at 0, then load a seccomp allow-list on every
 *             thread at once (TSYNC).  After that nothing can create a
 *             thread or process, open a file, map executable memory, or
 *             signal another process; a call outside the list kills the
 *             whole process with SIGSYS.
 *
 * The allow-list is what strace -f showed the run loop and the stop path
 * calling, per model and backend (docs/architecture.md, "Privileges").
 */
#include "sandbox.h"

#include <cap-ng.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/kvm.h>
#include <malloc.h>
#include <pwd.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "diag.h"

/* gcc says __SANITIZE_ADDRESS__, clang __has_feature (gcc 12 has no
 * __has_feature, so it cannot share one #if with the test). */
#if defined(__SANITIZE_ADDRESS__)
#define SANDBOX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANDBOX_ASAN 1
#endif
#endif

#ifdef SANDBOX_ASAN
#include <linux/sched.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/ptrace.h>
#include <termios.h>
#endif

void sandbox_init(struct sandbox_state *sb)
{
	memset(sb, 0, sizeof(*sb));
	snprintf(sb->cap_eff, sizeof(sb->cap_eff), "not dropped");
	sb->uid = getuid();
	sb->gid = getgid();
	sb->seccomp_mode = "not installed";
}

/* ---- descriptors ---- */

static int highest_open_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int highest = 2;

	if (!d)
		return 1023;   /* no /proc: assume the traditional soft limit was in use */
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (fd > highest && fd != dirfd(d))
			highest = fd;
	}
	closedir(d);
	return highest;
}

void sandbox_close_inherited_fds(void)
{
	/* A parent's descriptors (a terminal's, a test harness's, a leaked
	 * socket) are no business of a guest's launcher. */
	if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
		return;
	for (int fd = highest_open_fd(); fd > 2; fd--)
		close(fd);
}

/* ---- privileges ---- */

static void read_cap_eff(struct sandbox_state *sb)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	snprintf(sb->cap_eff, sizeof(sb->cap_eff), "unknown");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %31s", sb->cap_eff) == 1)
			break;
	if (f)
		fclose(f);
}

/* Which account a run becomes: --user, or nobody for a root without
 * --user.  *name = NULL: stay who we are. */
static int pick_user(const struct sandbox_config *cfg, const char **name, uid_t *uid, gid_t *gid)
{
	bool root = getuid() == 0 || geteuid() == 0;
	struct passwd *pw;

	*name = cfg->user ? cfg->user : root && !cfg->stay_root ? SANDBOX_DEFAULT_USER : NULL;
	if (!*name)
		return 0;
	pw = getpwnam(*name);
	if (!pw && cfg->user)
		return diag_fail("--user %s: no such user", *name);
	if (!pw)
		return diag_fail("started as root, and there is no user '%s' to switch to after setup -- create it, "
				 "pass --user NAME, or --stay-root to debug as root", *name);
	if (!root)
		return diag_fail("--user %s: switching to another user needs root -- drop --user", *name);
	if (pw->pw_uid == 0)
		return diag_fail("--user %s: that is uid 0 -- pick an unprivileged user, or --stay-root to debug as root",
				 *name);
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int sandbox_drop_privileges(const struct sandbox_config *cfg, struct sandbox_state *sb)
{
	const char *name;
	uid_t uid = 0, ruid, euid, suid;
	gid_t gid = 0, rgid, egid, sgid;
	bool bounds_cleared;

	if (pick_user(cfg, &name, &uid, &gid) < 0)
		return -1;
	/* Before any thread exists: keep every thread on malloc's main arena.
	 * A thread arena, when it shrinks, reads /proc/sys/vm/overcommit_memory
	 * once -- an open the seccomp filter would answer with SIGSYS. */
	mallopt(M_ARENA_MAX, 1);
	/* The bounding set first: changing it takes CAP_SETPCAP, which leaving
	 * uid 0 takes away.  Without it (not root) only the sets are cleared. */
	capng_clear(CAPNG_SELECT_BOTH);
	bounds_cleared = capng_apply(CAPNG_SELECT_BOUNDS) == 0;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (name) {
		/* Groups, then gid, then uid: each later step needs the
		 * privilege the one before it still had. */
		if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
			return diag_fail("cannot switch to user %s (uid %u gid %u): %s -- pass --user NAME, or --stay-root "
					 "to debug as root", name, (unsigned)uid, (unsigned)gid, strerror(errno));
		if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0 ||
		    ruid != uid || euid != uid || suid != uid || rgid != gid || egid != gid || sgid != gid ||
		    setresuid(0, 0, 0) == 0)
			return diag_fail("switching to user %s did not stick -- refusing to run", name);
	}
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return diag_fail("dropping capabilities with libcap-ng failed%s",
				 bounds_cleared ? "" : " (and the bounding set could not be cleared)");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return diag_fail("PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	read_cap_eff(sb);
	sb->uid = getuid();
	sb->gid = getgid();
	return 0;
}

/* ---- the seccomp allow-list ---- */

struct filter {
	scmp_filter_ctx ctx;
	int failed_nr;   /* first syscall whose rule could not be added, or -1 */
};

static void allow(struct filter *f, int nr)
{
	if (seccomp_rule_add(f->ctx, SCMP_ACT_ALLOW, nr, 0) < 0 && f->failed_nr < 0)
		f->failed_nr = nr;
}

static void allow_if(struct filter *f, int nr, unsigned n, const struct scmp_arg_cmp *cmp)
{
	if (seccomp_rule_add_array(f->ctx, SCMP_ACT_ALLOW, nr, n, cmp) < 0 && f->failed_nr < 0)
		f->failed_nr = nr;
}

/* ioctl(fd, request): the kernel takes request as 32 bits, so compare
 * those only (glibc may pass it sign-extended). */
static void allow_ioctl(struct filter *f, int fd, unsigned long request)
{
	struct scmp_arg_cmp cmp[2] = {
		SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)fd),
		SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request & 0xffffffffu),
	};

	allow_if(f, SCMP_SYS(ioctl), fd >= 0 ? 2 : 1, fd >= 0 ? cmp : cmp + 1);
}

static void allow_all(struct filter *f, const int *nrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		allow(f, nrs[i]);
}

#define ALLOW_ALL(f, list) allow_all((f), (list), sizeof(list) / sizeof((list)[0]))

static void add_common_rules(struct filter *f, const struct sandbox_config *cfg)
{
	/* Descriptors the run already holds: console, eventfds, timerfd, the
	 * stats file.  No call that opens or duplicates one is here. */
	static const int io[] = {
		SCMP_SYS(read), SCMP_SYS(write), SCMP_SYS(close), SCMP_SYS(poll), SCMP_SYS(timerfd_settime),
	};
	/* The threads that exist: locks, the clock (when the vDSO cannot
	 * serve it), their exit, and the end of the process.  A thread made
	 * just before the filter may only run its own start-up after it:
	 * glibc's start_thread registers the thread's robust futex list and
	 * its rseq area, each about the calling thread alone.  (Seen: a
	 * run killed by SIGSYS at rseq, 2 runs in 40 of --model thread.) */
	static const int threads[] = {
		SCMP_SYS(futex), SCMP_SYS(clock_gettime), SCMP_SYS(exit), SCMP_SYS(exit_group),
		SCMP_SYS(restart_syscall), SCMP_SYS(getpid), SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
	};
	/* Signals within the process: the kick (SIGUSR1) eaten with
	 * sigtimedwait, the stop signals taken by sigwait, --max-seconds
	 * (alarm), pthread_cancel of the signal thread (glibc installs its
	 * handler on first use). */
	static const int signals[] = {
		SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(rt_sigtimedwait),
		SCMP_SYS(rt_sigaction), SCMP_SYS(alarm),
	};
	/* malloc, and a finished thread's stack. */
	static const int memory[] = { SCMP_SYS(munmap), SCMP_SYS(brk), SCMP_SYS(madvise) };
	struct scmp_arg_cmp not_exec = SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0);
	struct scmp_arg_cmp own_process = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)getpid());

	ALLOW_ALL(f, io);
	ALLOW_ALL(f, threads);
	ALLOW_ALL(f, signals);
	ALLOW_ALL(f, memory);
	/* W^X for the rest of the run: no new code can be mapped, and no
	 * mprotect at all, so RELRO stays read-only. */
	allow_if(f, SCMP_SYS(mmap), 1, &not_exec);
	/* pthread_kill and pthread_cancel, only at our own threads. */
	allow_if(f, SCMP_SYS(tgkill), 1, &own_process);
	/* No fstat, no TCGETS: run.c gives every stream it writes its buffer
	 * before the filter goes in (stdio_buffer_now). */

	/* KVM: only the run loop's calls, only on the VM and vCPU we made;
	 * none at all without a VM (--model thread). */
	if (cfg->no_vm)
		return;
	allow_ioctl(f, cfg->vcpu_fd, KVM_RUN);
	allow_ioctl(f, cfg->vcpu_fd, KVM_GET_REGS);          /* crash reports */
	allow_ioctl(f, cfg->vm_fd, KVM_IRQ_LINE);             /* both devices' lines, from any thread */
	allow_ioctl(f, cfg->vm_fd, KVM_SIGNAL_MSI);           /* vm_kick_vcpu */
}

static void add_model_rules(struct filter *f, const struct sandbox_config *cfg)
{
	/* threaded: the device thread sleeps in epoll on the ioeventfd, the
	 * timer and the tap, and turns the tap off and on as receive buffers
	 * run out.  lguest: the waker poll()s, which the console needs too. */
	if (cfg->model == NET_MODEL_THREADED) {
		allow(f, SCMP_SYS(epoll_wait));
		allow(f, SCMP_SYS(epoll_ctl));
	} else {
		/* --timer-wait spin: the waker gives its CPU away between
		 * looks at the clock. */
		allow(f, SCMP_SYS(sched_yield));
	}
}

static void add_backend_rules(struct filter *f, const struct sandbox_config *cfg)
{
	/* user: libslirp turns the guest's TCP flows into non-blocking IPv4
	 * stream sockets of its own (in6_enabled is off).  Nothing else gets
	 * through the gate in front of slirp_input (net_slirp.c: ARP and TCP
	 * to --peer only; DNS and DHCP off), so no datagram socket is ever
	 * needed. */
	static const int sockets[] = {
		SCMP_SYS(connect), SCMP_SYS(setsockopt), SCMP_SYS(getsockopt), SCMP_SYS(sendto),
		SCMP_SYS(recvfrom), SCMP_SYS(shutdown),
		SCMP_SYS(getpeername),   /* soread, when the host end closed or reset */
	};
	static const int tap[] = { SCMP_SYS(readv), SCMP_SYS(writev) };
	/* The type's low bits, whatever SOCK_NONBLOCK / SOCK_CLOEXEC ride on it. */
	struct scmp_arg_cmp inet_stream[2] = {
		SCMP_A0(SCMP_CMP_EQ, AF_INET),
		SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM),
	};
	struct scmp_arg_cmp getfl = SCMP_A1(SCMP_CMP_EQ, F_GETFL), setfl = SCMP_A1(SCMP_CMP_EQ, F_SETFL);

	switch (cfg->backend) {
	case NET_BACKEND_SINK:
		break;   /* frames are checked in guest memory */
	case NET_BACKEND_TAP:
		ALLOW_ALL(f, tap);   /* frames straight between guest RAM and the tap */
		break;
	case NET_BACKEND_USER:
		allow_if(f, SCMP_SYS(socket), 2, inet_stream);
		ALLOW_ALL(f, sockets);
		allow_if(f, SCMP_SYS(fcntl), 1, &getfl);   /* slirp_set_nonblock */
		allow_if(f, SCMP_SYS(fcntl), 1, &setfl);
		break;
	}
}

#ifdef SANDBOX_ASAN
/* Sanitizer builds only (-Db_sanitize=address): what the ASan/LSan runtime
 * itself calls after the lock-down, found with the filter's default action
 * set to SCMP_ACT_LOG in the emulator VM (every model, backend and way out,
 * plus a deliberate leak, overflow and UBSan report).  None of it is in a
 * normal build.
 *
 * - A thread's exit: ASan takes down the alternate signal stack it gave the
 *   thread (sigaltstack) and unmaps it.
 * - LeakSanitizer at exit stops the world: it makes the process dumpable and
 *   names its tracer (prctl), maps the tracer's stack with a PROT_NONE guard
 *   page (mprotect), starts the tracer as a process sharing our memory
 *   (clone with exactly these flags: never a thread, never a process
 *   outside our memory and filter), and waits for it (wait4, sched_yield,
 *   gettid).  The tracer lists our threads from /proc/PID/task and
 *   /proc/PID/task/TID/status with the legacy open(2) -- glibc itself only
 *   uses openat, which stays forbidden, so the seccomp probe still dies --
 *   and getdents and lseek, ptrace-attaches to each thread to read its
 *   registers, checks its parent (getppid, prctl PR_SET_PDEATHSIG), and
 *   installs its own signal stack.
 * - A report (an ASan error, a leak, a UBSan diagnostic) checks whether
 *   stderr is a terminal (TCGETS), and UBSan's runtime looks up
 *   /proc/self/exe (readlink); symbolizing it would open the binaries, so
 *   the symbolizer is warmed up before the filter instead
 *   (sanitizer_prepare). */
static void add_sanitizer_rules(struct filter *f)
{
	static const int runtime[] = {
		SCMP_SYS(sigaltstack), SCMP_SYS(wait4), SCMP_SYS(sched_yield), SCMP_SYS(gettid),
		SCMP_SYS(getppid), SCMP_SYS(getdents), SCMP_SYS(lseek), SCMP_SYS(readlink),
	};
	static const int prctls[] = { PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_PTRACER, PR_SET_PDEATHSIG };
	static const int ptraces[] = { PTRACE_ATTACH, PTRACE_GETREGS, PTRACE_GETREGSET, PTRACE_CONT, PTRACE_DETACH };
	struct scmp_arg_cmp guard_page = SCMP_A2(SCMP_CMP_EQ, PROT_NONE);
	struct scmp_arg_cmp tracer = SCMP_A0(SCMP_CMP_EQ, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED);
	struct scmp_arg_cmp task_dir = SCMP_A1(SCMP_CMP_EQ, O_RDONLY | O_DIRECTORY);
	struct scmp_arg_cmp task_status = SCMP_A1(SCMP_CMP_EQ, O_RDONLY);

	ALLOW_ALL(f, runtime);
	for (size_t i = 0; i < sizeof(prctls) / sizeof(prctls[0]); i++) {
		struct scmp_arg_cmp op = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)prctls[i]);

		allow_if(f, SCMP_SYS(prctl), 1, &op);
	}
	for (size_t i = 0; i < sizeof(ptraces) / sizeof(ptraces[0]); i++) {
		struct scmp_arg_cmp op = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)ptraces[i]);

		allow_if(f, SCMP_SYS(ptrace), 1, &op);
	}
	allow_if(f, SCMP_SYS(mprotect), 1, &guard_page);
	allow_if(f, SCMP_SYS(clone), 1, &tracer);
	allow_if(f, SCMP_SYS(open), 1, &task_dir);
	allow_if(f, SCMP_SYS(open), 1, &task_status);
	allow_ioctl(f, STDERR_FILENO, TCGETS);
}

/* The symbolizer reads /proc/self/maps and every loaded binary the first
 * time it is asked about an address; ask it now, while opening files is
 * allowed, so a report made under the filter has file:line in it instead
 * of dying with SIGSYS half-way. */
static void sanitizer_prepare(void)
{
	__sanitizer_sandbox_arguments args = { .coverage_fd = -1 };
	char where[256];

	__sanitizer_sandbox_on_notify(&args);
	__sanitizer_symbolize_pc((void *)(uintptr_t)sanitizer_prepare, "%s %L", where, sizeof(where));
}
#endif

static int install_seccomp(const struct sandbox_config *cfg)
{
	struct filter f = { .ctx = seccomp_init(SCMP_ACT_KILL_PROCESS), .failed_nr = -1 };
	int rc;

	if (!f.ctx)
		return diag_fail("seccomp: cannot create a filter (libseccomp %u.%u) -- --no-seccomp runs without one",
				 seccomp_version()->major, seccomp_version()->minor);
	/* One filter for all threads, or none: a thread left unfiltered would
	 * be the way around it. */
	rc = seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (rc == 0)
		rc = seccomp_attr_set(f.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	add_common_rules(&f, cfg);
	add_model_rules(&f, cfg);
	add_backend_rules(&f, cfg);
#ifdef SANDBOX_ASAN
	add_sanitizer_rules(&f);
#endif
	if (rc == 0 && f.failed_nr >= 0) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, f.failed_nr);

		diag_fail("seccomp: cannot add the rule for %s -- --no-seccomp runs without a filter",
			  name ? name : "a system call");
		free(name);
		seccomp_release(f.ctx);
		return -1;
	}
	if (rc == 0)
		rc = seccomp_load(f.ctx);
	seccomp_release(f.ctx);
	if (rc < 0)
		return diag_fail("seccomp: loading the filter failed: %s -- the kernel needs seccomp filters "
				 "(CONFIG_SECCOMP_FILTER); --no-seccomp runs without one", strerror(-rc));
	return 0;
}

/* Test aid (--fault seccomp-probe): behave like an attacker's first step,
 * opening a file.  With the filter the process dies here with SIGSYS. */
static int seccomp_probe(void)
{
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		close((int)fd);
		return diag_fail("--fault seccomp-probe: openat() was allowed after setup -- no seccomp filter is in place");
	}
	return diag_fail("--fault seccomp-probe: openat() failed with %s instead of killing the process",
			 strerror(errno));
}

int sandbox_lock_down(const struct sandbox_config *cfg, struct sandbox_state *sb)
{
	/* libslirp opens a socket per guest flow; nothing else opens any
	 * descriptor after this point. */
	unsigned long headroom = cfg->backend == NET_BACKEND_USER ? 64 : 8;
	struct rlimit nofile = { .rlim_cur = (rlim_t)highest_open_fd() + 1 + headroom };
	struct rlimit core = { 0, 0 };

	nofile.rlim_max = nofile.rlim_cur;
	if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
		return diag_fail("setrlimit(RLIMIT_NOFILE, %lu): %s", (unsigned long)nofile.rlim_cur, strerror(errno));
	sb->nofile_limit = (unsigned long)nofile.rlim_cur;
	/* A SIGSYS would otherwise dump guest RAM into the working folder. */
	setrlimit(RLIMIT_CORE, &core);
	if (!cfg->seccomp) {
		sb->seccomp_mode = "off";
		return cfg->seccomp_probe ? seccomp_probe() : 0;
	}
	/* pthread_cancel (the signal thread, at the end) loads the unwinder
	 * on first use, with openat and an executable mmap, both of which the
	 * filter refuses: load it now.  Kept loaded, so the later dlopen
	 * inside glibc finds it without touching the file system. */
	dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NODELETE);
#ifdef SANDBOX_ASAN
	sanitizer_prepare();
#endif
	if (install_seccomp(cfg) < 0)
		return -1;
	sb->seccomp_mode = "kill";
	return cfg->seccomp_probe ? seccomp_probe() : 0;
}

void sandbox_stats(const struct sandbox_state *sb, struct stats *st)
{
	stats_str(st, "launcher_cap_effective", sb->cap_eff);
	stats_u64(st, "launcher_uid", (uint64_t)sb->uid);
	stats_u64(st, "launcher_gid", (uint64_t)sb->gid);
	stats_str(st, "launcher_seccomp", sb->seccomp_mode);
	stats_u64(st, "launcher_open_files_limit", sb->nofile_limit);
}
