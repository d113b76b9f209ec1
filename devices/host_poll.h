/*
 * host_poll.h -- the device thread's busy-polling (--host-poll-us), the
 * parts that are pure: the option's parser and the adaptive window's rule.
 *
 * vhost-net's answer to notification cost (busyloop_timeout, 2016-2018):
 * after a drain the device keeps its notifications off and spins on the
 * avail ring for up to a window, so a guest that adds the next buffer
 * within it never needs to notify and the device never needs to sleep and
 * be woken.  net.c runs the loop (net_tx_poll_run); this header only says
 * how long the window is.
 *
 * The adaptive window follows KVM's halt-polling (virt/kvm/kvm_main.c,
 * kvm_vcpu_halt, grow_halt_poll_ns/shrink_halt_poll_ns, and
 * Documentation/virt/kvm/halt-polling.rst), measured from the start of a
 * poll to the work that ended the wait:
 *   - the poll found the work (waited <= window): the window stays;
 *   - it did not, but the work came within the maximum: a longer window
 *     would have caught it, so grow (x2, to at least the 10 us start);
 *   - the work came after the maximum: polling cannot win, so shrink
 *     (/2, and to 0 below the start value).
 * The constants are KVM's x86 defaults: halt_poll_ns 200000,
 * halt_poll_ns_grow 2, halt_poll_ns_grow_start 10000, halt_poll_ns_shrink 2
 * (the default since Linux 6.5; 0, "reset", before).
 */
#ifndef HOST_POLL_H
#define HOST_POLL_H

#include <stdbool.h>
#include <stdint.h>

#define HOST_POLL_US_MAX          1000u      /* --host-poll-us N: 0..this */
#define HOST_POLL_ADAPT_MAX_NS    200000u    /* KVM's halt_poll_ns (x86 default) */
#define HOST_POLL_ADAPT_START_NS  10000u     /* halt_poll_ns_grow_start */
#define HOST_POLL_ADAPT_GROW      2u         /* halt_poll_ns_grow */
#define HOST_POLL_ADAPT_SHRINK    2u         /* halt_poll_ns_shrink */

/* "N" (0..HOST_POLL_US_MAX) or "adaptive"; false on anything else. */
bool host_poll_parse(const char *s, uint32_t *us, bool *adaptive);

/* The next window, in ns, after a wait that began with a poll of
 * `window_ns` and ended `waited_ns` later with work (KVM's rule, above). */
uint32_t host_poll_adapt(uint32_t window_ns, uint64_t waited_ns);

#endif
