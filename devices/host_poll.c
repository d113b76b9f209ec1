/*
 * host_poll.c -- the pure half of the device thread's busy-polling
 * (host_poll.h): the option's values and KVM's grow/shrink rule, kept
 * apart from the loop in net.c so that unit-host-poll can try every case.
 */
#include "host_poll.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool host_poll_parse(const char *s, uint32_t *us, bool *adaptive)
{
	char *end;
	unsigned long v;

	if (!strcmp(s, "adaptive")) {
		*us = 0;
		*adaptive = true;
		return true;
	}
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > HOST_POLL_US_MAX)
		return false;
	*us = (uint32_t)v;
	*adaptive = false;
	return true;
}

uint32_t host_poll_adapt(uint32_t window_ns, uint64_t waited_ns)
{
	uint64_t v;

	if (waited_ns <= window_ns)                 /* the poll caught it */
		return window_ns;
	if (waited_ns > HOST_POLL_ADAPT_MAX_NS) {   /* a long wait: polling cannot win */
		v = window_ns / HOST_POLL_ADAPT_SHRINK;
		return v < HOST_POLL_ADAPT_START_NS ? 0 : (uint32_t)v;
	}
	if (window_ns >= HOST_POLL_ADAPT_MAX_NS || waited_ns == HOST_POLL_ADAPT_MAX_NS)
		return window_ns;
	v = (uint64_t)window_ns * HOST_POLL_ADAPT_GROW;   /* a short wait the poll just missed */
	if (v < HOST_POLL_ADAPT_START_NS)
		v = HOST_POLL_ADAPT_START_NS;
	return v > HOST_POLL_ADAPT_MAX_NS ? HOST_POLL_ADAPT_MAX_NS : (uint32_t)v;
}
