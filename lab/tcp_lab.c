/*
 * tcp_lab.c -- the network and the receiver for `table --workload tcp`
 * (see tcp_lab.h).
 *
 * Everything is done with the tools a user would use by hand -- `ip netns`,
 * `ip link`, `lguest-kvm receive` -- run as child processes, so what the
 * table builds can be rebuilt and inspected from a shell (docs/tcp.md).
 * Children join the namespace with setns() on /run/netns/NAME, which is
 * what `ip netns exec` does minus remounting /sys, which none of ours read.
 */
#include "tcp_lab.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "stats.h"

#define LAB_IF "lkvm0"
#define LAB_HOST "10.99.0.1"
#define LAB_PORT "5001"

/* Run a command quietly; its exit status, or -1 if it could not start. */
static int run_quiet(const char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Namespaces named lkvm-<pid> whose table is gone: a SIGKILLed run. */
static void delete_stale_namespaces(void)
{
	DIR *d = opendir("/run/netns");
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, "lkvm-", 5))
			continue;
		pid = strtol(e->d_name + 5, &end, 10);
		if (*end || pid <= 0 || !(kill((pid_t)pid, 0) < 0 && errno == ESRCH))
			continue;
		run_quiet((const char *const[]){ "ip", "netns", "del", e->d_name, NULL });
	}
	if (d)
		closedir(d);
}

int tcp_lab_open(struct tcp_lab *lab, bool tap)
{
	memset(lab, 0, sizeof(*lab));
	lab->tap = tap;
	lab->receiver = -1;
	snprintf(lab->dir, sizeof(lab->dir), "/tmp/lkvm-lab-XXXXXX");
	if (!mkdtemp(lab->dir))
		return diag_fail("table: cannot create a temporary directory: %s", strerror(errno));
	if (!tap)
		return 0;
	if (geteuid() != 0)
		return diag_fail("table: --net tap needs root (a network namespace and a tap device) -- "
				 "run as root, or use --net user");
	delete_stale_namespaces();
	snprintf(lab->netns, sizeof(lab->netns), "lkvm-%d", (int)getpid());
	if (run_quiet((const char *const[]){ "ip", "netns", "add", lab->netns, NULL })) {
		lab->netns[0] = 0;
		return diag_fail("table: 'ip netns add' failed -- is iproute2 installed, and are network "
				 "namespaces allowed here?");
	}
	if (run_quiet((const char *const[]){ "ip", "-n", lab->netns, "tuntap", "add", "dev", LAB_IF, "mode", "tap",
					     "vnet_hdr", NULL }) ||
	    run_quiet((const char *const[]){ "ip", "-n", lab->netns, "addr", "add", LAB_HOST "/24", "dev", LAB_IF,
					     NULL }) ||
	    run_quiet((const char *const[]){ "ip", "-n", lab->netns, "link", "set", LAB_IF, "up", NULL }) ||
	    run_quiet((const char *const[]){ "ip", "-n", lab->netns, "link", "set", "lo", "up", NULL })) {
		tcp_lab_close(lab);
		return diag_fail("table: cannot create tap " LAB_IF " in a network namespace -- is /dev/net/tun there?");
	}
	return 0;
}

int tcp_lab_enter(const struct tcp_lab *lab)
{
	char path[64];
	int fd, rc;

	if (!lab->netns[0])
		return 0;
	snprintf(path, sizeof(path), "/run/netns/%s", lab->netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = setns(fd, CLONE_NEWNET);
	close(fd);
	return rc;
}

static void lab_path(const struct tcp_lab *lab, const char *name, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", lab->dir, name);
}

int tcp_lab_start_receiver(struct tcp_lab *lab, uint64_t bytes, char *why, size_t why_size)
{
	char ready[96], json[96], err[96], bytes_arg[24], addr[32] = "";
	const char *listen = lab->tap ? LAB_HOST ":" LAB_PORT : "127.0.0.1:0";
	double until = monotonic_seconds() + 10;

	lab_path(lab, "ready", ready, sizeof(ready));
	lab_path(lab, "receive.json", json, sizeof(json));
	lab_path(lab, "receive.err", err, sizeof(err));
	unlink(ready);
	unlink(json);
	snprintf(bytes_arg, sizeof(bytes_arg), "%llu", (unsigned long long)bytes);
	lab->receiver = fork();
	if (lab->receiver == 0) {
		int null = open("/dev/null", O_RDWR), efd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(efd >= 0 ? efd : null, STDERR_FILENO);
		if (tcp_lab_enter(lab) < 0)
			_exit(1);
		/* A Linux guest boots before it connects: ~12 s in the emulator
		 * VM on a quiet machine, several times that on a busy one.  A
		 * run that fails is ended by the table (tcp_lab_finish_receiver),
		 * so the limit only bounds a stream that stops mid-way. */
		execl("/proc/self/exe", "lguest-kvm", "receive", "--listen", listen, "--bytes", bytes_arg, "--ready",
		      ready, "--json", json, "--timeout", "600", "--quiet", (char *)NULL);
		_exit(127);
	}
	if (lab->receiver < 0) {
		snprintf(why, why_size, "fork: %s", strerror(errno));
		return -1;
	}
	/* Listening once the ready file exists; it holds the bound address. */
	while (monotonic_seconds() < until) {
		FILE *f = fopen(ready, "r");

		if (f) {
			if (!fgets(addr, sizeof(addr), f))
				addr[0] = 0;
			fclose(f);
			break;
		}
		if (waitpid(lab->receiver, NULL, WNOHANG) == lab->receiver) {
			lab->receiver = -1;
			diag_last_line(err, why, why_size);
			return -1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	if (!addr[0]) {
		snprintf(why, why_size, "the receiver did not start listening within 10 s");
		tcp_lab_finish_receiver(lab, true, why, 0);
		return -1;
	}
	/* user: the guest reaches the host's 127.0.0.1:PORT as 10.0.2.2:PORT. */
	snprintf(lab->peer_arg, sizeof(lab->peer_arg), "%s%s", lab->tap ? "" : "10.0.2.2",
		 lab->tap ? LAB_HOST ":" LAB_PORT : strchr(addr, ':'));
	lab->peer_arg[strcspn(lab->peer_arg, "\n")] = 0;
	return 0;
}

int tcp_lab_finish_receiver(struct tcp_lab *lab, bool abandon, char *why, size_t why_size)
{
	char err[96];
	double until = monotonic_seconds() + 15;
	int status = 0;
	pid_t r;

	if (lab->receiver <= 0)
		return 0;
	if (abandon)
		kill(lab->receiver, SIGTERM);
	/* A receiver that saw the whole stream ends at once; give a slow
	 * one 15 s before it is stopped. */
	while ((r = waitpid(lab->receiver, &status, WNOHANG)) == 0 && monotonic_seconds() < until)
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	if (r == 0) {
		kill(lab->receiver, SIGKILL);
		waitpid(lab->receiver, &status, 0);
	}
	lab->receiver = -1;
	status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (status && why_size) {
		lab_path(lab, "receive.err", err, sizeof(err));
		diag_last_line(err, why, why_size);
	}
	return status;
}

double tcp_lab_loopback(uint64_t bytes, char *why, size_t why_size)
{
	struct tcp_lab lab;
	char json[96], bytes_arg[24], connect[40];
	double seconds = -1;
	int st;
	pid_t pid;

	if (tcp_lab_open(&lab, false) < 0) {
		snprintf(why, why_size, "%s", "cannot create a temporary directory");
		return -1;
	}
	if (tcp_lab_start_receiver(&lab, bytes, why, why_size) < 0)
		goto out;
	snprintf(bytes_arg, sizeof(bytes_arg), "%llu", (unsigned long long)bytes);
	snprintf(connect, sizeof(connect), "127.0.0.1%s", strchr(lab.peer_arg, ':'));
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execl("/proc/self/exe", "lguest-kvm", "send", "--connect", connect, "--bytes", bytes_arg, "--quiet",
		      (char *)NULL);
		_exit(127);
	}
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (tcp_lab_finish_receiver(&lab, pid < 0, why, why_size) == 0) {
		lab_path(&lab, "receive.json", json, sizeof(json));
		if (!stats_json_number(json, "seconds", &seconds))
			snprintf(why, why_size, "the receiver's JSON lacks seconds");
	}
out:
	tcp_lab_close(&lab);
	return seconds;
}

void tcp_lab_close(struct tcp_lab *lab)
{
	char path[96];

	if (lab->receiver > 0)
		tcp_lab_finish_receiver(lab, true, NULL, 0);
	if (lab->netns[0]) {
		run_quiet((const char *const[]){ "ip", "netns", "del", lab->netns, NULL });
		lab->netns[0] = 0;
	}
	if (lab->dir[0]) {
		const char *files[] = { "ready", "receive.json", "receive.err" };

		for (unsigned i = 0; i < 3; i++) {
			lab_path(lab, files[i], path, sizeof(path));
			unlink(path);
		}
		rmdir(lab->dir);
		lab->dir[0] = 0;
	}
}
