/*
 * thread_pin.c -- pin_thread (thread_pin.h).
 *
 * Why pin at all: with two CPUs or more, the vCPU owns CPU 0 and the net
 * device's thread (or the lguest model's waker) CPU 1.  A spinning guest
 * then never starves the thread that is supposed to drain its ring, which
 * otherwise dominates the variance of every measured number.
 */
#include "thread_pin.h"

#include <sched.h>
#include <unistd.h>

void pin_thread(pthread_t thread, int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(thread, sizeof(set), &set);
}
