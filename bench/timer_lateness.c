/*
 * timer_lateness.c -- how late this machine's timers fire: the number
 * behind the lguest model's --timer-wait spin (devices/net.c).
 *
 * 2008's host timer came round every ~60 us all in (docs/seed-2008.md sec.
 * 5a); the 2008 preset arms 50 us.  Whether a waker that sleeps on a
 * timerfd can stand for that depends on how late the machine wakes it.
 * This arms a one-shot CLOCK_MONOTONIC timerfd for --us microseconds,
 * --samples times, and prints the lateness (wake-up minus due) as
 * percentiles, for three ways of waiting on the same CPU:
 *   sleep       read() blocks on the timerfd (the default waker)
 *   spin-read   non-blocking read() in a loop: is the timer itself late,
 *               or only the sleeping thread's wake-up?
 *   spin-clock  watch CLOCK_MONOTONIC until due (--timer-wait spin)
 * and then how long a signal (SIGUSR1, the lguest waker's kick) takes to
 * reach a thread spinning on CPU 0 when sent from CPU 1: the reason the
 * --vm none guest also takes a posted kick in its spin loops
 * (launcher/run_thread.c).
 * Usage: bench-timer-lateness [--us N] [--samples N]
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

enum wait_kind { SLEEP, SPIN_READ, SPIN_CLOCK };

static void measure(const char *name, enum wait_kind kind, unsigned us, unsigned n, int64_t *late)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, kind == SPIN_READ ? TFD_NONBLOCK : 0);

	if (fd < 0) {
		perror("timerfd_create");
		exit(1);
	}
	for (unsigned i = 0; i < n; i++) {
		struct itimerspec its = { .it_value = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 } };
		uint64_t t0 = now_ns(), due = t0 + us * 1000ull, count;

		if (kind == SPIN_CLOCK) {
			while (now_ns() < due)
				;
		} else {
			timerfd_settime(fd, 0, &its, NULL);
			while (read(fd, &count, 8) != 8)
				;
		}
		late[i] = (int64_t)(now_ns() - due);
	}
	close(fd);
	qsort(late, n, sizeof(*late), by_value);
	printf("%-10s %u us x %u: lateness us p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", name, us, n,
	       late[n / 2] / 1e3, late[n * 9 / 10] / 1e3, late[n * 99 / 100] / 1e3, late[n - 1] / 1e3);
}

static volatile uint64_t signal_seen;
static volatile int spinner_stop;

static void on_signal(int sig)
{
	(void)sig;
	signal_seen = now_ns();
}

static void pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *spinner(void *arg)
{
	(void)arg;
	pin_self(0);
	while (!spinner_stop)
		;
	return NULL;
}

/* From pthread_kill on CPU 1 to the handler running on the spinner, CPU 0. */
static void measure_signal(unsigned n, int64_t *late)
{
	struct timespec gap = { .tv_nsec = 200000 };
	pthread_t t;

	signal(SIGUSR1, on_signal);
	if (pthread_create(&t, NULL, spinner, NULL))
		return;
	pin_self(1);
	nanosleep(&gap, NULL);
	for (unsigned i = 0; i < n; i++) {
		uint64_t t0;

		signal_seen = 0;
		t0 = now_ns();
		pthread_kill(t, SIGUSR1);
		while (!signal_seen)
			;
		late[i] = (int64_t)(signal_seen - t0);
		nanosleep(&gap, NULL);
	}
	spinner_stop = 1;
	pthread_join(t, NULL);
	qsort(late, n, sizeof(*late), by_value);
	printf("signal     CPU 1 -> a spinning thread on CPU 0, x %u: us p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", n,
	       late[n / 2] / 1e3, late[n * 9 / 10] / 1e3, late[n * 99 / 100] / 1e3, late[n - 1] / 1e3);
}

int main(int argc, char **argv)
{
	unsigned us = 50, n = 2000;
	int64_t *late;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--us") && i + 1 < argc)
			us = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			n = (unsigned)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: bench-timer-lateness [--us N] [--samples N]\n");
			return 2;
		}
	}
	if (!us || us > 1000000 || n < 10 || n > 1000000) {
		fprintf(stderr, "bench-timer-lateness: --us 1..1000000, --samples 10..1000000\n");
		return 2;
	}
	late = calloc(n, sizeof(*late));
	if (!late)
		return 1;
	measure("sleep", SLEEP, us, n, late);
	measure("spin-read", SPIN_READ, us, n, late);
	measure("spin-clock", SPIN_CLOCK, us, n, late);
	measure_signal(n, late);
	free(late);
	return 0;
}
