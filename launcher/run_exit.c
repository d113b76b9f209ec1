/*
 * run_exit.c -- step 5 of a run (run_state.h): the process exit status,
 * chosen after the stats block is printed, so that the line saying why is
 * the last thing on stderr (docs/stats.md, "Exit status").
 *
 * In order: a signal or --max-seconds, a guest crash, a host error, a
 * device the guest broke (DEVICE_NEEDS_RESET); then, for the raw workload,
 * the host's own check of what arrived against the guest's report (the
 * sink verified every frame; the tap only counted what it wrote); last,
 * the guest's own status, with a line from its report when a tcp run
 * failed.
 */
#include "run_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* The raw workload ended well for the guest: the host's side of the
 * story, from the backend's totals (net_backend.h).  The tap only counts
 * what it wrote; the sink verified every frame.  0, or EXIT_VERIFY after
 * one line saying what does not add up. */
static int check_raw_transfer(const struct run_state *rs)
{
	struct net_backend_tx_totals be;

	net_backend_tx_totals(&rs->net, &be);
	if (rs->o->net.backend == NET_BACKEND_TAP) {
		if (be.bad || !rs->have_report || rs->report.tx_frames != be.frames) {
			fprintf(stderr, "lguest-kvm: net: %llu of %llu frames written to tap %s%s%s\n",
				(unsigned long long)be.frames, (unsigned long long)rs->report.tx_frames,
				be.interface, be.bad ? "; first error: " : "", be.bad ? be.verdict : "");
			return EXIT_VERIFY;
		}
		return 0;
	}
	if (be.bad) {
		fprintf(stderr, "lguest-kvm: net: %llu bad frame(s), first: %s\n", (unsigned long long)be.bad, be.verdict);
		return EXIT_VERIFY;
	}
	if (!rs->have_report || rs->report.tx_frames != be.frames || rs->report.tx_bytes != be.payload_bytes) {
		fprintf(stderr, "lguest-kvm: net: the host verified %llu frames / %llu bytes but the guest sent %llu / %llu\n",
			(unsigned long long)be.frames, (unsigned long long)be.payload_bytes,
			(unsigned long long)rs->report.tx_frames, (unsigned long long)rs->report.tx_bytes);
		return EXIT_VERIFY;
	}
	return 0;
}

/* The guest's TCP sender failed: say why from its report (its console may
 * be --quiet).  The numbers are tcp_state values (guest-stub/tcp_sender.h). */
static void explain_tcp_failure(const struct run_state *rs)
{
	const struct lkvm_guest_report *g = &rs->report;
	unsigned long long acked = (unsigned long long)g->tcp_bytes_acked, total = (unsigned long long)rs->o->bytes;

	if (!g->tcp_arp_requests)
		fprintf(stderr, "lguest-kvm: tcp: the guest could not start its network (its console says why)\n");
	else if (!g->tcp_peer_mac_known)
		fprintf(stderr, "lguest-kvm: tcp: no ARP reply for the receiver's address -- check --peer, and that "
			"the host side of the link is up (--host-ip)\n");
	else if (g->tcp_state == 5)
		fprintf(stderr, "lguest-kvm: tcp: the receiver %s the connection after %llu of %llu bytes were "
			"acknowledged\n", acked ? "reset" : "refused or reset", acked, total);
	else if (g->tcp_state == 6)
		fprintf(stderr, "lguest-kvm: tcp: the receiver stopped answering after %llu of %llu bytes (%llu "
			"retransmission timeouts) -- is it listening at --peer?\n", acked, total,
			(unsigned long long)g->tcp_timeouts);
}

int finish(const struct run_state *rs)
{
	const struct virtio_mmio_dev *broken = rs->net.mmio.errors ? &rs->net.mmio
					     : rs->con.mmio.errors ? &rs->con.mmio : NULL;
	bool raw = !strcmp(rs->o->workload, "raw") && !strcmp(rs->o->fault, "none");

	if ((rs->end == END_SIGNAL || rs->end == END_TIME_LIMIT) && rs->stopped_vcpu[0])
		fprintf(stderr, "lguest-kvm: at the stop %s\n", rs->stopped_vcpu);
	switch (rs->end) {
	case END_SIGNAL:
		fprintf(stderr, "lguest-kvm: stopped by signal %d (%s)\n", rs->signal, strsignal(rs->signal));
		return 128 + rs->signal;
	case END_TIME_LIMIT:
		fprintf(stderr, "lguest-kvm: the guest did not finish within %u s (--max-seconds)\n",
			rs->o->max_seconds);
		return 124;
	case END_CRASH:
		fprintf(stderr, "lguest-kvm: %s\n", rs->why);
		return EXIT_GUEST_CRASH;
	case END_HOST_ERROR:
		fprintf(stderr, "lguest-kvm: %s\n", rs->why);
		return EXIT_ERROR;
	default:
		break;
	}
	if (broken) {
		fprintf(stderr, "lguest-kvm: %s\n", broken->error);
		return EXIT_DEVICE_ERROR;
	}
	/* A run that measured another layout than asked must not pass for one
	 * that did (a guest that ignores lkvm.layout: an older or other stub). */
	if ((raw || !strcmp(rs->o->workload, "tcp")) && rs->guest_status == 0 && strcmp(rs->o->layout, "any") &&
	    strcmp(run_ring_layout(rs), rs->o->layout)) {
		fprintf(stderr, "lguest-kvm: net: --layout %s was asked for, but the guest drove a %s ring\n",
			rs->o->layout, run_ring_layout(rs));
		return EXIT_VERIFY;
	}
	if (raw && rs->guest_status == 0) {
		int rc = check_raw_transfer(rs);

		if (rc)
			return rc;
	}
	if (rs->guest_status && !strcmp(rs->o->workload, "tcp") && rs->have_report)
		explain_tcp_failure(rs);
	if (rs->guest_status)
		fprintf(stderr, "lguest-kvm: the guest exited with status %d\n", rs->guest_status);
	return rs->guest_status;
}
