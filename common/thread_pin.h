/*
 * thread_pin.h -- pin a thread to one CPU, when there is more than one.
 *
 * Used by both layers above: the launcher pins the vCPU thread to CPU 0
 * (launcher/run.c), the net device pins its device or waker thread to CPU 1
 * (devices/net.c).  It lives down here because neither owns the policy
 * alone, and a device must not reach up into the launcher for it.
 */
#ifndef THREAD_PIN_H
#define THREAD_PIN_H

#include <pthread.h>

/* Pin `thread` to CPU `cpu` when the machine has two CPUs or more; on one
 * CPU there is nothing to choose, and the call does nothing.  Best effort:
 * a refused affinity leaves the thread where the scheduler put it. */
void pin_thread(pthread_t thread, int cpu);

#endif
