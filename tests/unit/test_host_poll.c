/*
 * test_host_poll.c -- the pure half of --host-poll-us (devices/host_poll.c):
 * the option's values, and KVM halt-polling's grow/shrink rule, case by
 * case, as kvm_vcpu_halt applies it: a poll that caught the work keeps its
 * window, a short wait it missed doubles it (from at least 10 us, to at
 * most 200 us), a wait beyond 200 us halves it (to 0 below 10 us).
 */
#include "check.h"
#include "host_poll.h"

int main(void)
{
	uint32_t us = 7;
	bool ad = true;

	/* the option */
	CHECK(host_poll_parse("0", &us, &ad) && us == 0 && !ad, "0 is off");
	CHECK(host_poll_parse("50", &us, &ad) && us == 50 && !ad, "50 us");
	CHECK(host_poll_parse("1000", &us, &ad) && us == 1000, "the maximum, 1000 us");
	CHECK(host_poll_parse("adaptive", &us, &ad) && ad && us == 0, "adaptive starts at 0, as KVM's window");
	CHECK(!host_poll_parse("1001", &us, &ad), "1001: above the maximum");
	CHECK(!host_poll_parse("-1", &us, &ad), "-1 refused");
	CHECK(!host_poll_parse("", &us, &ad), "empty refused");
	CHECK(!host_poll_parse("20us", &us, &ad), "a unit refused");
	CHECK(!host_poll_parse("Adaptive", &us, &ad), "case matters");
	CHECK(!host_poll_parse("99999999999999999999", &us, &ad), "overflow refused");

	/* a hit: unchanged */
	CHECK(host_poll_adapt(20000, 5000) == 20000, "hit inside the window: unchanged");
	CHECK(host_poll_adapt(20000, 20000) == 20000, "hit at the window's end: unchanged");
	/* a short miss: grow */
	CHECK(host_poll_adapt(0, 3000) == 10000, "from 0, a short wait grows to the 10 us start");
	CHECK(host_poll_adapt(4000, 6000) == 10000, "below the start, growth jumps to the start");
	CHECK(host_poll_adapt(20000, 30000) == 40000, "a short miss doubles");
	CHECK(host_poll_adapt(160000, 190000) == 200000, "growth stops at the 200 us maximum");
	CHECK(host_poll_adapt(200000, 199999) == 200000, "at the maximum: stays (a hit anyway)");
	CHECK(host_poll_adapt(20000, 200000) == 20000, "a wait of exactly the maximum: neither grow nor shrink");
	/* a long wait: shrink */
	CHECK(host_poll_adapt(200000, 250000) == 100000, "a long wait halves");
	CHECK(host_poll_adapt(40000, 1000000) == 20000, "halves again");
	CHECK(host_poll_adapt(10000, 1000000) == 0, "below the start after halving: 0");
	CHECK(host_poll_adapt(0, 1000000) == 0, "0 stays 0 on a long wait");
	return check_summary();
}
