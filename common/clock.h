/*
 * clock.h -- one clock for every duration the launcher reports: seconds on
 * CLOCK_MONOTONIC, so a changed wall clock cannot bend a measurement.  In
 * common/ because devices time their own drains (tx_transfer_seconds) and
 * the launcher times the run: both must read the same clock.  The one
 * exception is a CPU-time clock: thread_cpu_seconds, the device thread's
 * busy time (tx_device_cpu_seconds), which no wall clock can give.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>
#include <time.h>

static inline double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The same clock in nanoseconds, for deadlines (the net device's timer). */
static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time the calling thread has used (user + system), in seconds.  Not
 * a vDSO clock: one system call, so for a thread's end, not a hot path. */
static inline double thread_cpu_seconds(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
