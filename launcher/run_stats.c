/*
 * run_stats.c -- step 5 of a run (run_state.h): the stats block.
 *
 * docs/stats.md is the contract: every key, and the order in which they
 * are printed, which is the order of the calls below.  The function walks
 * that order and, where a device's keys belong, hands the list to the
 * device, which appends its own (net_report_*: devices/net_stats.c;
 * console_report_stats; the backend's through the net device); the run's
 * own keys -- how it ended, its parameters, the VM's exits, the sandbox,
 * the guest's report -- it appends itself.  The net device's keys come in
 * three places (the seed's two numbers first, the transfer time among the
 * parameters, the rest in one stretch), hence three calls.
 *
 * The launcher renders the list afterwards (common/stats.c): text on
 * stderr, and the same keys as JSON for --stats-json.
 */
#include "run_state.h"

#include <stdio.h>
#include <string.h>

#include <linux/virtio_config.h>

#include "host_kind.h"

static const char *exit_reason_name(unsigned r)
{
	switch (r) {
	case KVM_EXIT_IO: return "io";
	case KVM_EXIT_MMIO: return "mmio";
	case KVM_EXIT_HLT: return "hlt";
	case KVM_EXIT_SHUTDOWN: return "shutdown";
	case KVM_EXIT_INTERNAL_ERROR: return "internal_error";
	case KVM_EXIT_FAIL_ENTRY: return "fail_entry";
	case KVM_EXIT_UNKNOWN: return "unknown";
	default: return NULL;
	}
}

static const char *end_name(enum run_end e)
{
	switch (e) {
	case END_GUEST_EXIT: return "guest-exit";
	case END_CRASH: return "guest-crash";
	case END_SIGNAL: return "signal";
	case END_TIME_LIMIT: return "time-limit";
	case END_HOST_ERROR: return "host-error";
	default: return "setup";
	}
}

const char *run_ring_layout(const struct run_state *rs)
{
	return virtio_mmio_has_feature(&rs->net.mmio, VIRTIO_F_RING_PACKED) ? "packed" : "split";
}

void collect_stats(const struct run_state *rs, struct stats *st)
{
	const struct run_options *o = rs->o;
	const struct lkvm_guest_report *g = &rs->report;
	bool tcp = !strcmp(o->workload, "tcp");
	/* The tcp workload's payload is what the receiver acknowledged: only
	 * the guest's report knows it. */
	const struct net_report_guest guest = {
		.tcp = tcp,
		.tcp_bytes_acked = rs->have_report ? g->tcp_bytes_acked : 0,
	};
	static char names[MAX_EXIT_REASON][40];

	net_report_seed_stats(&rs->net, st);
	stats_str(st, "run_end", end_name(rs->end));
	stats_u64(st, "guest_exit_status", rs->end == END_GUEST_EXIT ? (uint64_t)rs->guest_status : 0);
	stats_f64(st, "run_seconds", rs->t_end - rs->t_start);
	stats_f64(st, "boot_to_banner_seconds", rs->con.t_first_output ? rs->con.t_first_output - rs->t_start : 0);
	stats_str(st, "host_hypervisor", host_hypervisor());
	stats_str(st, "vm", o->no_vm ? "none" : "kvm");
	stats_str(st, "net_model", o->net.model == NET_MODEL_LGUEST ? "lguest" : "threaded");
	stats_str(st, "guest_policy", o->policy);
	stats_u64(st, "ring_size", o->ring);
	stats_str(st, "ring_layout", run_ring_layout(rs));
	stats_u64(st, "frame_bytes", o->frame);
	stats_u64(st, "guest_pace_ns", o->pace_ns);
	stats_u64(st, "guest_indirect_cost_ns", o->indirect_cost_ns);
	stats_u64(st, "guest_indirect_cold_lines", o->indirect_cold_lines);
	stats_u64(st, "guest_tsc_khz", rs->tsc_khz);
	net_report_transfer_time(&rs->net, st);
	stats_str(st, "guest_workload", o->workload);
	net_report_stats(&rs->net, &guest, st);
	/* The VM's totals over its two devices' transports. */
	stats_u64(st, "interrupts_injected", rs->con.mmio.interrupts + rs->net.mmio.interrupts);
	console_report_stats(&rs->con, st);
	for (unsigned r = 0; r < MAX_EXIT_REASON; r++) {
		const char *name = exit_reason_name(r);

		if (!rs->exits[r] && !(name && (r == KVM_EXIT_IO || r == KVM_EXIT_MMIO)))
			continue;
		if (name)
			snprintf(names[r], sizeof(names[r]), "vm_exits_%s", name);
		else
			snprintf(names[r], sizeof(names[r]), "vm_exits_reason_%u", r);
		stats_u64(st, names[r], rs->exits[r]);
	}
	stats_u64(st, "vm_exits_interrupted", rs->exits_interrupted);
	if (o->no_vm) {
		stats_u64(st, "thread_exit_cost_ns", o->exit_cost_ns);
		stats_u64(st, "thread_exits", rs->thread_exits);
		stats_u64(st, "thread_kicks", rs->thread_kicks);
	}
	stats_u64(st, "io_unknown_port", rs->io_unknown);
	stats_u64(st, "mmio_unknown_address", rs->mmio_unknown);
	stats_u64(st, "device_errors", rs->con.mmio.errors + rs->net.mmio.errors);
	stats_u64(st, "device_protocol_violations", rs->con.mmio.violations + rs->net.mmio.violations);
	{
		/* What the driver and the device agreed on, as the driver wrote
		 * it (a Linux guest picks its own, docs/linux-guest.md). */
		char hex[24];

		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)rs->net.mmio.host_features);
		stats_str(st, "net_features_offered", hex);
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)rs->net.mmio.driver_features);
		stats_str(st, "net_features_negotiated", hex);
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)rs->con.mmio.driver_features);
		stats_str(st, "console_features_negotiated", hex);
	}
	stats_u64(st, "com1_bytes_out", rs->uart.bytes_out);
	sandbox_stats(&rs->sandbox, st);
	stats_u64(st, "guest_report", rs->have_report);
	stats_u64(st, "guest_reports_malformed", rs->bad_reports);
	if (rs->have_report) {
		stats_u64(st, "guest_tx_bytes", g->tx_bytes);
		stats_u64(st, "guest_tx_frames", g->tx_frames);
		stats_u64(st, "guest_tx_kicks", g->tx_kicks);
		stats_u64(st, "guest_tx_notifies", g->tx_notifies);
		stats_u64(st, "guest_tx_notifies_suppressed", g->tx_notifies_suppressed);
		stats_u64(st, "guest_tx_notifies_forced", g->tx_notifies_forced);
		stats_u64(st, "guest_tx_ring_full", g->tx_ring_full);
		stats_u64(st, "guest_tx_full_ring_reads_zero", g->tx_full_ring_reads_zero);
		stats_u64(st, "guest_tx_threshold_final", g->tx_threshold_final);
		stats_u64(st, "guest_tx_waits_halted", g->tx_waits_halted);
		stats_u64(st, "guest_tx_buffers_direct", g->tx_buffers_direct);
		stats_u64(st, "guest_tx_buffers_indirect", g->tx_buffers_indirect);
		stats_u64(st, "guest_tx_descriptors_used", g->tx_descriptors_used);
		stats_u64(st, "guest_tx_indirect_tables", g->tx_indirect_tables);
		stats_u64(st, "guest_tx_indirect_build_ticks", g->tx_indirect_build_ticks);
		stats_u64(st, "guest_tx_indirect_cost_ticks", g->tx_indirect_cost_ticks);
		stats_f64(st, "guest_tx_indirect_build_ns_per_table",
			  g->tx_indirect_tables && rs->tsc_khz
			  ? g->tx_indirect_build_ticks * 1e6 / rs->tsc_khz / g->tx_indirect_tables : 0);
		stats_f64(st, "guest_tx_wait_seconds", rs->tsc_khz ? g->tx_wait_ticks / 1e3 / rs->tsc_khz : 0);
		stats_u64(st, "guest_irqs", g->irq_count);
		stats_u64(st, "guest_timer_irqs", g->timer_irqs);
		stats_u64(st, "guest_irqs_at_hlt", g->irqs_at_hlt);
		stats_u64(st, "guest_workload_tsc", g->tsc_workload);
	}
	if (rs->have_report && tcp) {
		stats_u64(st, "guest_tcp_state", g->tcp_state);
		stats_u64(st, "guest_tcp_bytes_acked", g->tcp_bytes_acked);
		stats_u64(st, "guest_tcp_segments_sent", g->tcp_segments_sent);
		stats_u64(st, "guest_tcp_segments_received", g->tcp_segments_received);
		stats_u64(st, "guest_tcp_retransmits", g->tcp_retransmits);
		stats_u64(st, "guest_tcp_timeouts", g->tcp_timeouts);
		stats_u64(st, "guest_tcp_fast_retransmits", g->tcp_fast_retransmits);
		stats_u64(st, "guest_tcp_dupacks", g->tcp_dupacks);
		stats_u64(st, "guest_tcp_window_probes", g->tcp_window_probes);
		stats_u64(st, "guest_tcp_mss", g->tcp_mss);
		stats_u64(st, "guest_tcp_srtt_ns", g->tcp_srtt_ns);
		stats_u64(st, "guest_tcp_waits_halted", g->tcp_waits_halted);
		stats_u64(st, "guest_rx_frames", g->rx_frames);
		stats_u64(st, "guest_rx_frames_dropped", g->rx_frames_dropped);
	}
	if (rs->why[0])
		stats_str(st, "run_error", rs->why);
}
