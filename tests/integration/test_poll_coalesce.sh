# test_poll_coalesce.sh -- the modern host's answers without a VM (issue
# 26): --host-poll-us (vhost-net's budgeted busy-polling on the device
# thread) and --coalesce (virtio 1.3 notification coalescing, set by the
# guest stub's driver over the control queue), on --model thread.
#
# Why: both change when the device thread drains and when it interrupts,
# so every frame must still arrive verified, every chain be counted once,
# and the interrupts be exactly what the coalescing rule allows where the
# rule leaves no freedom (0:0, and a time limit far beyond the run).  Small
# runs (a few MiB): the rules themselves are unit-net-coal's and
# unit-host-poll's; nothing here is timed.
. "$(dirname "$0")/lib.sh"

# --host-poll-us (vhost-net's busyloop instead of 2008's timer): the frames
# all verified, no timer ever armed, every chain counted once by notify or
# poll, and the windows where the option and KVM's rule put them.
poll_accounts() {
	local j=$TMP/$1.json
	[ "$(json_get "$j" tx_timer_timeouts)" = 0 ] &&
		[ "$(json_get "$j" tx_buffers_by_timer)" = 0 ] &&
		[ $(( $(json_get "$j" tx_buffers_by_notify) + $(json_get "$j" tx_buffers_by_poll) )) = \
		  "$(json_get "$j" tx_frames)" ] &&
		[ "$(json_get "$j" host_poll_mode)" = "$2" ] &&
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); w=j["host_poll_us_final"]
sys.exit(0 if eval(sys.argv[2]) and j["tx_poll_hits"] + j["tx_poll_misses"] > 0 else 1)' "$j" "$3"
}
for poll in 200 adaptive; do
	for policy in dynamic event-idx; do
		name=poll-$poll-$policy
		run_lkvm "$name" run --model thread --bytes 8M --policy "$policy" --host-poll-us "$poll" \
			--stats-json "$TMP/$name.json"
		check "--host-poll-us $poll, $policy: exit 0, every frame verified" raw_ok "$name"
	done
done
check "--host-poll-us 200: no timer, every chain by notify or poll, window 200 us" \
	poll_accounts poll-200-dynamic fixed 'w == 200'
check "--host-poll-us adaptive: the window is 0 or within KVM's 10..200 us" \
	poll_accounts poll-adaptive-event-idx adaptive 'w == 0 or 10 <= w <= 200'
run_lkvm poll-halt run --model thread --bytes 8M --wait halt --host-poll-us 50 --stats-json "$TMP/poll-halt.json"
check "--host-poll-us 50 with --wait halt: exit 0, every frame verified" raw_ok poll-halt

# --coalesce (virtio 1.3 notification coalescing over the control queue):
# the guest's TX interrupts stay on, so the device's rule alone sets their
# number -- one per frame at 0:0, one per 64 frames when the time limit
# (1 s) is far beyond the run -- and with polling too.
coal_irqs() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); f=j["tx_frames"]; i=j["tx_interrupts"]
ok = j["net_coalescing"] == 1 and j["net_ctrl_commands"] == 2 and j["net_ctrl_commands_refused"] == 0
sys.exit(0 if ok and eval(sys.argv[2]) else 1)' "$TMP/$1.json" "$2"
}
run_lkvm coal-0 run --model thread --bytes 4M --coalesce 0:0 --stats-json "$TMP/coal-0.json"
check "--coalesce 0:0: exit 0, every frame verified" raw_ok coal-0
check "--coalesce 0:0: one interrupt per frame" coal_irqs coal-0 'i == f'
run_lkvm coal-64 run --model thread --bytes 4M --coalesce 1000000:64 --stats-json "$TMP/coal-64.json"
check "--coalesce 1000000:64: exit 0, every frame verified" raw_ok coal-64
check "--coalesce 1000000:64: one interrupt per 64 frames" coal_irqs coal-64 'f // 64 <= i <= f // 64 + 1'
run_lkvm coal-poll run --model thread --bytes 4M --wait halt --coalesce 50:32 --host-poll-us 20 \
	--stats-json "$TMP/coal-poll.json"
check "--coalesce 50:32 --host-poll-us 20 --wait halt: exit 0, every frame verified" raw_ok coal-poll
check "--coalesce 50:32: fewer interrupts than frames, at least one per 32" coal_irqs coal-poll 'f // 32 <= i < f'

# The two experiments of `table`, tiny: every row runs, the summaries print.
run_lkvm tpoll table --experiment poll --rows event-idx --repeat 1 --bytes 2M --json "$TMP/tpoll.json"
check "table --experiment poll: exit 0, six windows, the kicks-saved line" \
	sh -c '[ "$(cat "$1/tpoll.rc")" = 0 ] && [ "$(grep -c "^Event-idx  " "$1/tpoll.out")" = 6 ] &&
	       grep -q "kicks/GiB at" "$1/tpoll.out"' _ "$TMP"
run_lkvm tcoal table --experiment coalesce --repeat 1 --bytes 1M --csv "$TMP/tcoal.csv"
check "table --experiment coalesce: exit 0, 20 rows, the prediction's summary, the CSV" \
	sh -c '[ "$(cat "$1/tcoal.rc")" = 0 ] && [ "$(grep -c "^Dynamic  " "$1/tcoal.out")" = 20 ] &&
	       grep -q "within 10% of the prediction" "$1/tcoal.out" && [ "$(wc -l <"$1/tcoal.csv")" = 21 ]' _ "$TMP"
# bench/device-path (issue 26's floors) is a benchmark, not a test; one tiny
# round here keeps it runnable against the launcher's current stats.
BENCH=$(cd "$(dirname "$0")/../../bench" && pwd)/device-path
timeout -s KILL "$(scaled 120)" "$BENCH" --repeat 1 --bytes 4M --poll off,20 --lkvm "$LKVM" \
	--floor "$(dirname "$LKVM")/bench/bench-memcpy-floor" --json "$TMP/dp.json" >"$TMP/dp.out" 2>"$TMP/dp.err"
echo $? >"$TMP/dp.rc"
check "bench/device-path, one round: exit 0, both floors, a ratio per variant and the guest's time ($(tail -1 "$TMP/dp.err"))" \
	sh -c '[ "$(cat "$1/dp.rc")" = 0 ] && [ "$(grep -c "ratio device / cross-CPU floor  *[0-9]" "$1/dp.out")" = 2 ] &&
	       [ "$(grep -c "ratio device CPU / guest.s workload s  *[0-9]" "$1/dp.out")" = 2 ] &&
	       grep -q "its writer on the other CPU, CPU s  *[0-9]" "$1/dp.out"' _ "$TMP"
run_lkvm tlg table --experiment coalesce --model lguest
check "table --experiment coalesce --model lguest: refused with one line" \
	[ "$(rc_of tlg):$(wc -l <"$TMP/tlg.err")" = 2:1 ]

finish
