/*
 * run.c -- one guest from start to stats, in the order lguest's launcher
 * told its story:
 *
 *   1. Build the guest: VM + RAM, the ELF image, the PVH start info and a
 *      command line that names the devices and the run's parameters
 *      (run_guest.c).
 *   2. Wire the devices: console (MMIO exits) and net (ioeventfd + device
 *      thread, or MMIO exits + a waker thread in the lguest model).  The
 *      devices create their eventfds; wiring.c registers them with KVM.
 *   3. Leave uid 0 and drop every capability (sandbox.c): nothing after
 *      this point is privileged.  Once the threads run, bound the open
 *      files and lock the process into a seccomp allow-list.
 *   4. Run the vCPU until the guest leaves, crashes, breaks a ring, or a
 *      signal or --max-seconds stops it (run_vcpu.c).
 *
 * --model thread (run_thread.c) takes steps 1 and 4 without a VM: guest
 * RAM and the stub's own driver on this thread; the rest is the same.
 *   5. Whatever the way out, print the stats block (run_stats.c) and the
 *      JSON copy, write the timeline if asked (run_trace.c), then choose
 *      the exit status (run_exit.c).
 *
 * This file holds the order: the signals, setup (steps 1-3 and the
 * threads), the run, and the teardown on every way out.  The state the
 * steps share is struct run_state (run_state.h).
 */
#include "run.h"
#include "run_state.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "thread_pin.h"

static void on_kick_signal(int sig) { (void)sig; }

/* SIGINT, SIGTERM and SIGALRM (--max-seconds) are taken here, never by a
 * handler: the vCPU may be spinning in the guest, and only a kick gets it
 * out (vm_kick_vcpu). */
static void *signal_thread(void *arg)
{
	struct run_state *rs = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGALRM);
	for (;;) {
		if (sigwait(&set, &sig))
			continue;
		__atomic_store_n(&rs->stop_signal, sig, __ATOMIC_SEQ_CST);
		vm_kick_vcpu(&rs->vm, rs->vcpu_thread);
	}
	return NULL;
}

/* ---- 3. privileges ---- */

static struct sandbox_config sandbox_config(const struct run_state *rs)
{
	return (struct sandbox_config){
		.user = rs->o->user,
		.stay_root = rs->o->stay_root,
		.seccomp = !rs->o->no_seccomp,
		.seccomp_probe = rs->o->seccomp_probe,
		.model = rs->o->net.model,
		.backend = rs->o->net.backend,
		.no_vm = rs->o->no_vm,
		.vm_fd = rs->vm.vm_fd,
		.vcpu_fd = rs->vm.vcpu_fd,
	};
}

/* stdio asks the kernel about a stream when it first buffers it: fstat,
 * and for a character device (a terminal, /dev/null) ioctl(TCGETS) --
 * calls the seccomp filter refuses, and need not allow, when every stream
 * the run writes after the lock-down has its buffer already.  stderr is
 * unbuffered and asks nothing. */
static void stdio_buffer_now(FILE *f, char *buf, size_t size)
{
	if (f)
		setvbuf(f, buf, isatty(fileno(f)) ? _IOLBF : _IOFBF, size);
}

/* Steps 1-3 and the threads, in order.  Before the guest runs, a failure is
 * one line and no stats: there is no run to describe (a bad image, no
 * /dev/kvm).  The stats file is opened first, while we may still create it
 * anywhere root may. */
static int setup_run(struct run_state *rs, FILE **json, pthread_t *sig_thread)
{
	const struct run_options *o = rs->o;
	struct sandbox_config sb;

	if (o->stats_json && !(*json = fopen(o->stats_json, "w")))
		return diag_fail("--stats-json %s: %s -- give a writable path", o->stats_json, strerror(errno));
	if (o->trace) {
		if (!(rs->trace_file = fopen(o->trace, "w")))
			return diag_fail("--trace %s: %s -- give a writable path", o->trace, strerror(errno));
		if (trace_ring_init(&rs->trace, o->trace_events) < 0)
			return -1;
		rs->net.trace = &rs->trace;
	}
	if (o->no_vm ? build_thread_guest(rs) < 0
		     : (run_is_linux(o) ? build_linux_guest(rs) : build_guest(rs)) < 0 || set_vcpu_signal_mask(rs) < 0)
		return -1;
	/* /dev/kvm itself only creates the VM and the vCPU. */
	if (rs->vm.kvm_fd >= 0)
		close(rs->vm.kvm_fd);
	rs->vm.kvm_fd = -1;
	sb = sandbox_config(rs);
	if (sandbox_drop_privileges(&sb, &rs->sandbox) < 0)
		return -1;
	/* The devices' eventfds are routed before any thread could see a kick
	 * (without a VM, run_thread.c writes and reads them itself). */
	if (net_open_fds(&rs->net) < 0 ||
	    (!o->no_vm && (wiring_register(&rs->wiring, &rs->con.mmio) < 0 ||
			   wiring_register(&rs->wiring, &rs->net.mmio) < 0)))
		return -1;
	if (net_start(&rs->net) < 0 || console_start_input(&rs->con, STDIN_FILENO) < 0)
		return -1;
	if (pthread_create(sig_thread, NULL, signal_thread, rs))
		return diag_fail("cannot start the signal thread");
	/* Every thread exists now; the guest has not run yet. */
	pin_thread(rs->vcpu_thread, 0);   /* the net device's thread has CPU 1 */
	{
		static char out_buf[BUFSIZ], json_buf[BUFSIZ], trace_buf[BUFSIZ];

		stdio_buffer_now(stdout, out_buf, sizeof(out_buf));
		stdio_buffer_now(*json, json_buf, sizeof(json_buf));
		stdio_buffer_now(rs->trace_file, trace_buf, sizeof(trace_buf));
	}
	return sandbox_lock_down(&sb, &rs->sandbox);
}

/* The end of every run that got past lkvm_run's start, after net_stop and
 * console_close: no thread is left to touch a device, a line or guest RAM. */
static void release_run(struct run_state *rs)
{
	net_close(&rs->net);
	if (rs->o->no_vm)
		release_thread_guest();
	vm_destroy(&rs->vm);
	trace_ring_free(&rs->trace);
}

int lkvm_run(const struct run_options *o)
{
	static struct run_state rs;
	struct sigaction kick = { .sa_handler = on_kick_signal };
	struct stats st = { .n = 0 };
	const struct device_host *host;
	pthread_t sig_thread;
	FILE *json = NULL;
	sigset_t block;
	int code;

	memset(&rs, 0, sizeof(rs));
	rs.vm.kvm_fd = rs.vm.vm_fd = rs.vm.vcpu_fd = -1;   /* vm_destroy before vm_create */
	rs.o = o;
	rs.t_start = monotonic_seconds();
	sandbox_init(&rs.sandbox);
	sandbox_close_inherited_fds();

	/* Every thread blocks these; the signal thread takes the stop signals
	 * and the vCPU takes the kick only inside KVM_RUN. */
	rs.vcpu_thread = pthread_self();
	rs.stop_signal = 0;
	sigaction(SIGUSR1, &kick, NULL);
	/* A closed stdout (run | head) must not kill us before the stats. */
	signal(SIGPIPE, SIG_IGN);
	/* A run started as a background job (`run ... &` in an interactive
	 * shell) with its terminal as stdin: the console input thread's read
	 * would stop the whole process with SIGTTIN, guest and timers
	 * included, until `fg`.  Ignored, that read fails with EIO instead,
	 * and the thread waits for the terminal (devices/console.c). */
	signal(SIGTTIN, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGALRM);
	sigaddset(&block, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &block, NULL);

	wiring_init(&rs.wiring, &rs.vm, rs.vcpu_thread);
	host = o->no_vm ? thread_device_host(&rs) : &rs.wiring.host;
	console_init(&rs.con, host, 0, o->quiet ? -1 : STDOUT_FILENO);
	net_init(&rs.net, host, 1, &o->net);
	if (setup_run(&rs, &json, &sig_thread) < 0) {
		console_close(&rs.con);
		diag_print();
		if (json)
			fclose(json);
		if (rs.trace_file)
			fclose(rs.trace_file);
		net_stop(&rs.net);
		release_run(&rs);
		return EXIT_ERROR;
	}
	if (o->max_seconds)
		alarm(o->max_seconds);
	if (o->no_vm)
		run_thread_guest(&rs);
	else
		run_vcpu(&rs);
	alarm(0);
	pthread_cancel(sig_thread);
	pthread_join(sig_thread, NULL);
	net_stop(&rs.net);
	console_close(&rs.con);
	rs.t_end = monotonic_seconds();

	collect_stats(&rs, &st);
	stats_print(stderr, &st);
	code = finish(&rs);
	if (json && stats_write_json(json, o->stats_json, &st) < 0) {
		diag_print();
		if (!code)
			code = EXIT_ERROR;
	}
	if (rs.trace_file && run_trace_write(&rs) < 0) {
		diag_print();
		if (!code)
			code = EXIT_ERROR;
	}
	release_run(&rs);
	return code;
}
