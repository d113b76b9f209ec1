# test_trace.sh -- `run --trace` in the two VM models (docs/trace.md).
#
# Why: the timeline is only worth reading if it is the run's own.  So, in
# the threaded and the lguest model, a traced run's notify and timeout
# counts must equal its stats (the guest's notifies, the host's wakeups and
# expiries), its two clocks must have been put on one, and its waits and
# interrupts must show when the guest sleeps (tcp, --wait halt).  And the
# guest's ring is guest data: a guest that announces it outside RAM, lets
# it run off the end of RAM, or fills it with junk (forged host events,
# unknown types, a head far past its size, stamps out of order) must get a
# run that ends as it would have and a file that says what was refused.
# (The no-VM model's traces are checked in test_thread_model.sh, the file
# format and the `trace` command in test_trace_cmd.sh.)
. "$(dirname "$0")/lib.sh"
need_kvm

for model in threaded lguest; do
	run_lkvm "raw-$model" run --model "$model" --bytes 8M --quiet --stats-json "$TMP/raw-$model.json" \
		--trace "$TMP/raw-$model.bin"
	check "$model: a traced raw run exits 0" [ "$(rc_of "raw-$model")" = 0 ]
	check "$model: its notify and timeout counts are the stats', on one clock" trace_agrees "$TMP/raw-$model.bin"
	echo "     ($model: clock $(trace_json "$TMP/raw-$model.bin" 'j["clock_note"]'))"
done
run_lkvm raw-packed run --model lguest --layout packed --policy static:20 --bytes 8M --quiet \
	--trace "$TMP/raw-packed.bin"
check "lguest, packed ring: traced, and the counts agree" trace_agrees "$TMP/raw-packed.bin"

# tcp sleeps in hlt: waits and interrupts on both sides.
start_receiver 2M
run_lkvm tcp run --workload tcp --net user --peer "10.0.2.2:${RX_PORT:-1}" --bytes 2M --quiet --trace "$TMP/tcp.bin"
wait $RX_PID
check "tcp over user, traced: exit 0, the receiver verified the stream" [ "$(rc_of tcp)" = 0 ]
check "tcp: the counts agree" trace_agrees "$TMP/tcp.bin"
check "tcp: the guest's halted waits, its interrupts and the host's are on the timeline" \
	[ "$(trace_json "$TMP/tcp.bin" 'min(j["counts"][k] for k in ("wait_start", "irq_taken", "irq_raise")) > 0')" = True ]

# hostile_trace KIND EXPR : a guest announcing a lying ring; the run ends
# well, the file is readable, and EXPR (over its --json) holds
hostile_trace() {
	run_lkvm "h-$1" run --fault "hostile-trace-$1" --trace-events 1024 --quiet --trace "$TMP/h-$1.bin"
	[ "$(rc_of "h-$1")" = 0 ] && "$LKVM" trace "$TMP/h-$1.bin" >/dev/null &&
		[ "$(trace_json "$TMP/h-$1.bin" "$2")" = True ]
}
check "hostile ring outside RAM: no guest events, the file says why" \
	hostile_trace addr 'j["guest_events"] == 0 and "outside RAM" in j["guest_note"]'
check "hostile ring running off the end of RAM: nothing read past it, the file says why" \
	hostile_trace end 'j["guest_events"] == 0 and "past the end of RAM" in j["guest_note"]'
check "hostile junk: the 256 kick events kept, 768 forged or unknown refused, the loss counted, no clock" \
	hostile_trace junk 'j["guest_events"] == 256 and j["guest_invalid"] == 768 and j["guest_lost"] > 2**60 and j["clock"] == "unknown"'

finish
