/*
 * clock.h -- one clock for every duration the launcher reports: seconds on
 * CLOCK_MONOTONIC, so a changed wall clock cannot bend a measurement.  In
 * common/ because devices time their own drains (tx_transfer_seconds) and
 * the launcher times the run: both must read the same clock.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <time.h>

static inline double monotonic_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
