/*
 * net_stats.c -- the net device's keys in the stats block (docs/stats.md).
 *
 * The block has one fixed order, the one users read and scripts compare,
 * and the launcher's collect_stats walks it.  The device's keys fall in
 * three places of it: the seed's two numbers open the block, the transfer
 * time sits among the run's parameters, and the rest -- backend, transfer,
 * TX and RX counters, timer -- is one stretch.  So there are three calls,
 * each appending its keys in their documented order.
 *
 * Where the numbers come from: the counters in struct net (st, rx, the
 * timer), the backend's totals and keys through its table (net_backend.h),
 * and, for the tcp workload, the acknowledged byte count that only the
 * guest's report has (struct net_report_guest).
 */
#include "net.h"

#include "clock.h"
#include "stats.h"

void net_report_seed_stats(const struct net *net, struct stats *st)
{
	stats_u64(st, "tx_queue_notifies", net->st.notifies);
	stats_u64(st, "tx_timer_timeouts", net->st.timeouts);
}

static double transfer_seconds(const struct net *net)
{
	return net->st.t_last > net->st.t_first ? net->st.t_last - net->st.t_first : 0;
}

void net_report_transfer_time(const struct net *net, struct stats *st)
{
	stats_f64(st, "tx_transfer_seconds", transfer_seconds(net));
}

/* Mean ns per timed pop of one kind (net_tx_pop), 0 if there was none:
 * ticks into ns at the TSC rate seen since the first pop. */
static double pop_ns_per_chain(const struct net *net, int indirect)
{
	const struct net_pop_timing *p = &net->pop;
	uint64_t tsc = __builtin_ia32_rdtsc();
	double ns = (monotonic_seconds() - p->mono0) * 1e9;

	if (!p->chains[indirect] || !p->tsc0 || tsc <= p->tsc0 || ns <= 0)
		return 0;
	return p->ticks[indirect] * (ns / (double)(tsc - p->tsc0)) / p->chains[indirect];
}

void net_backend_tx_totals(const struct net *net, struct net_backend_tx_totals *out)
{
	*out = (struct net_backend_tx_totals){ 0 };
	net->be_ops->tx_totals(net->be, out);
}

void net_report_stats(const struct net *net, const struct net_report_guest *guest, struct stats *st)
{
	const struct net_tx_stats *tx = &net->st;
	const struct net_rx_stats *rx = &net->rx;
	struct net_backend_tx_totals be;
	double xfer = transfer_seconds(net);
	/* Payload: the TCP stream bytes the receiver acknowledged, or the raw
	 * workload's frames after their header, as the backend counted them. */
	uint64_t payload;
	const char *verify;

	net_backend_tx_totals(net, &be);
	payload = guest->tcp ? guest->tcp_bytes_acked : be.payload_bytes;
	/* A backend that checks nothing and dropped nothing leaves the verdict
	 * to whoever checks: the receiver (tcp), or nobody on the host (raw). */
	verify = be.verdict ? be.verdict
	       : guest->tcp ? "checked by the receiver (tcp)" : "not checked by the host (tap)";

	stats_str(st, "net_backend", net->be_ops->name);
	if (net->be_ops->report_stats)
		net->be_ops->report_stats(net->be, st);
	stats_u64(st, "net_tso", net->cfg.offloads);
	stats_u64(st, "tx_payload_bytes", payload);
	stats_u64(st, "tx_frames", be.frames);
	stats_f64(st, "tx_gbit_per_second", xfer > 0 ? payload * 8.0 / xfer / 1e9 : 0);
	stats_f64(st, "tx_device_cpu_seconds", tx->device_cpu_seconds);
	stats_u64(st, "tx_frames_bad", be.bad);
	stats_str(st, "tx_verify", verify);
	stats_u64(st, "tx_notify_wakeups", tx->notify_wakeups);
	stats_u64(st, "tx_device_wakeups", tx->device_wakeups);
	stats_u64(st, "tx_notify_empty", tx->notifies_empty);
	stats_u64(st, "tx_timer_drains_work", tx->timer_drains_work);
	stats_u64(st, "tx_timer_drains_empty", tx->timer_drains_empty);
	stats_u64(st, "tx_recheck_hits", tx->recheck_hits);
	stats_u64(st, "tx_buffers_by_notify", tx->buffers_by_notify);
	stats_u64(st, "tx_buffers_by_timer", tx->buffers_by_timer);
	stats_u64(st, "tx_buffers_by_poll", tx->buffers_by_poll);
	stats_u64(st, "tx_budget_continuations", tx->continuations);
	stats_u64(st, "tx_buffers_by_continuation", tx->buffers_by_continuation);
	stats_u64(st, "tx_buffers_indirect", tx->buffers_indirect);
	stats_u64(st, "tx_descriptors", tx->descriptors);
	stats_f64(st, "tx_pop_ns_per_chain_direct", pop_ns_per_chain(net, 0));
	stats_f64(st, "tx_pop_ns_per_chain_indirect", pop_ns_per_chain(net, 1));
	stats_u64(st, "tx_interrupts", tx->interrupts);
	stats_u64(st, "rx_queue_notifies", rx->notifies);
	stats_u64(st, "rx_frames", rx->frames);
	stats_u64(st, "rx_bytes", rx->bytes);
	stats_u64(st, "rx_frames_dropped_no_buffer", rx->dropped_no_buffer);
	stats_u64(st, "rx_frames_dropped_too_big", rx->dropped_too_big);
	stats_u64(st, "rx_buffers_starved", rx->starved);
	stats_u64(st, "rx_read_errors", rx->read_errors);
	stats_u64(st, "rx_interrupts", rx->interrupts);
	stats_str(st, "host_timer", net->cfg.host_timer == HOST_TIMER_ONESHOT ? "oneshot" : "rearm");
	stats_str(st, "host_timer_wait", net->cfg.timer_spin ? "spin" : "sleep");
	stats_str(st, "host_timeout_mode", net->cfg.adaptive_timeout ? "adaptive" : "fixed");
	stats_u64(st, "host_timeout_us_final", net->timeout_us);
	stats_str(st, "host_poll_mode", net->cfg.host_poll_adaptive ? "adaptive" : net->cfg.host_poll_us ? "fixed" : "off");
	stats_f64(st, "host_poll_us_final", net->poll_window_ns / 1000.0);
	stats_u64(st, "tx_poll_hits", tx->poll_hits);
	stats_u64(st, "tx_poll_misses", tx->poll_misses);
	stats_f64(st, "tx_poll_seconds", tx->poll_ns / 1e9);
	stats_u64(st, "tx_poll_budget_exhausted", tx->poll_budget_exhausted);
	stats_u64(st, "net_coalescing", net_coal_negotiated(net));
	stats_u64(st, "tx_coal_max_packets", net->coal.q[NET_TX].p.max_packets);
	stats_u64(st, "tx_coal_max_usecs", net->coal.q[NET_TX].p.max_usecs);
	stats_u64(st, "net_ctrl_commands", net->coal.commands + net->ctrl_commands_bad);
	stats_u64(st, "net_ctrl_commands_refused", net->coal.errors + net->ctrl_commands_bad);
}
