# test_no_vm.sh -- `--vm none` with both host models, and the tcp
# workload over libslirp, on every machine (launcher/run_thread.c).
#
# Why: --vm none --model lguest is the one configuration that gives the
# 2008 experiment real seconds without /dev/kvm, so it must be right here,
# never in the emulator VM, and never skip:
#   - its notifies follow the rule exactly: the lguest host drains at each
#     notify and sets NO_NOTIFY, and static:N then notifies each time N
#     buffers are outstanding again;
#   - the stub's own TCP sender reaches `lguest-kvm receive` through slirp
#     with both hosts, every byte verified by the receiver;
#   - a hostile ring gets one clear line, exit 126 and the stats, and the
#     guard pages around guest RAM (common/guest_mem.c) were not touched
#     (no SIGSEGV) -- the hosted guest shares the launcher's address space;
#   - Ctrl-C in the middle of a TCP run ends it with the stats block;
#   - stdout on /dev/null and stderr to a file: stdio gets its buffers
#     before the seccomp filter, which allows neither fstat nor TCGETS.
# Small transfers: a few MiB each, nothing timed.
. "$(dirname "$0")/lib.sh"

PAYLOAD=1492    # a 1514-byte frame less the 22 bytes of header the raw workload writes

# jx FILE EXPR : true if the Python expression EXPR holds over the stats
# JSON FILE (as d) -- one interpreter per run's checks, not one per key
jx() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)' "$1" "$2"; }

# ---- the rule: static:N against the lguest host ----
# The first kick finds NO_NOTIFY clear and notifies; the host drains that
# one frame on the guest's thread and sets NO_NOTIFY.  From then on
# static:N notifies as the outstanding count reaches N, and the host drains
# all N before the guest goes on, so the count starts again from 0.  With
# frames = 1 + k*N the last notify drains the last frame, and a 1 s timer
# (never reached in a run this short) takes nothing: notifies = 1 + k.
# (N x 3 descriptors must fit the 128-slot ring, or a full ring forces
# notifies of its own: N <= 42.)
for n in 10 32; do
	k=200
	frames=$((1 + k * n))
	run_lkvm "static-$n" run --vm none --model lguest --bytes $((frames * PAYLOAD)) --policy static:$n \
		--timeout-us 1000000 --quiet --stats-json "$TMP/static-$n.json"
	j=$TMP/static-$n.json
	check "lguest static:$n: exit 0, $frames frames verified, both axes in the stats" \
		[ "$(rc_of "static-$n")" = 0 ] && jx "$j" "d['tx_verify'] == 'ok' and d['tx_frames'] == $frames and
			d['vm'] == 'none' and d['net_model'] == 'lguest'"
	check "lguest static:$n: exactly 1 + $k notifies, host and guest; no expiry, no timer drain" \
		jx "$j" "d['tx_queue_notifies'] == d['guest_tx_notifies'] == 1 + $k and d['tx_timer_timeouts'] == 0 and
			d['tx_buffers_by_timer'] == 0"
done
# The timer's half: with `always` the guest stays quiet while NO_NOTIFY is
# set, so after the first notify the frames are the timer's (and a full
# ring's forced notify's).  Every expiry reached the guest's thread as a
# kick, served there: tx_timer_timeouts <= thread_kicks.
run_lkvm expiry run --vm none --model lguest --bytes 4M --policy always --timeout-us 50 --quiet \
	--stats-json "$TMP/expiry.json"
j=$TMP/expiry.json
check "lguest always, 50 us timer: verified; notify and timer drains account for every frame" \
	[ "$(rc_of expiry)" = 0 ] && jx "$j" "d['tx_verify'] == 'ok' and
		d['tx_buffers_by_notify'] + d['tx_buffers_by_timer'] == d['tx_frames']"
check "lguest always: the timer drained frames; each expiry came as a kick" \
	jx "$j" "d['tx_buffers_by_timer'] > 0 and 1 <= d['tx_timer_timeouts'] <= d['thread_kicks']"
# The run's tail waits for the timer at least once, so the guest's time
# waiting for used buffers is above 0 and, in seconds, inside its workload's.
check "lguest always: the guest's wait for used buffers measured, within its workload time" \
	jx "$j" "0 < d['guest_tx_wait_seconds'] < d['guest_workload_tsc'] / d['guest_tsc_khz'] / 1e3"

# The same with --timer-wait spin: the waker watches the clock for each
# deadline instead of sleeping on the timerfd, and the same accounting holds.
run_lkvm spin run --vm none --model lguest --bytes 4M --policy always --timeout-us 50 --timer-wait spin --quiet \
	--stats-json "$TMP/spin.json"
j=$TMP/spin.json
check "lguest --timer-wait spin: verified; notify and timer drains account for every frame; each expiry a kick" \
	[ "$(rc_of spin)" = 0 ] && jx "$j" "d['tx_verify'] == 'ok' and d['host_timer_wait'] == 'spin' and
		d['tx_buffers_by_notify'] + d['tx_buffers_by_timer'] == d['tx_frames'] and
		d['tx_buffers_by_timer'] > 0 and 1 <= d['tx_timer_timeouts'] <= d['thread_kicks']"

# ---- tcp over slirp, both hosts ----
BYTES=$((4 << 20))
for model in lguest threaded; do
	start_receiver $BYTES
	run_lkvm "tcp-$model" run --vm none --model $model --workload tcp --net user --peer "10.0.2.2:$RX_PORT" \
		--bytes $BYTES --quiet --stats-json "$TMP/tcp-$model.json"
	wait "$RX_PID"
	j=$TMP/tcp-$model.json
	check "tcp $model: launcher exit 0 ($(tail -1 "$TMP/tcp-$model.err"))" [ "$(rc_of "tcp-$model")" = 0 ]
	check "tcp $model: the receiver verified $BYTES bytes ($(cat "$TMP/rx.out" "$TMP/rx.err"))" [ "$(cat "$TMP/rx.rc")" = 0 ]
	check "tcp $model: every byte acknowledged; ACKs through the receive queue; the halt woke; no VM; sandboxed" \
		jx "$j" "d['guest_tcp_bytes_acked'] == $BYTES and d['rx_frames'] > 0 and d['guest_irqs'] > 0 and
			d['vm'] == 'none' and d['net_model'] == '$model' and d['launcher_seccomp'] == 'kill' and
			d['launcher_cap_effective'] == '0000000000000000'"
done

# A dead peer: nobody listens, the connection is refused, one clear line.
run_lkvm dead run --vm none --model lguest --workload tcp --net user --peer 10.0.2.2:1 --bytes 1M \
	--max-seconds "$(scaled 60)" --quiet --stats-json "$TMP/dead.json"
check "tcp to a closed port: the guest's failure status (33), one line saying why, the stats" \
	[ "$(rc_of dead)" = 33 ] && jx "$TMP/dead.json" "d['run_end'] == 'guest-exit'" &&
	grep -q "^lguest-kvm: tcp: the receiver refused or reset the connection" "$TMP/dead.err"

# ---- a hostile ring against the lguest host on the guest's own thread ----
for kind in head:"head index" addr:"outside guest RAM" loop:"loops" huge:"chain longer than 65547 bytes"; do
	mode=${kind%%:*}
	want=${kind#*:}
	run_lkvm "h-$mode" run --vm none --model lguest --fault hostile-$mode --stats-json "$TMP/h-$mode.json"
	check "hostile-$mode: exit 126 (no crash), one line naming it ('$want')" \
		[ "$(rc_of "h-$mode")" = 126 -a "$(grep -c '^lguest-kvm: ' "$TMP/h-$mode.err")" = 1 ] &&
		grep -q "^lguest-kvm: virtio-net: net transmit queue: .*$want.* -- device needs reset" "$TMP/h-$mode.err"
	check "hostile-$mode: stats printed, the error counted" \
		jx "$TMP/h-$mode.json" "d['device_errors'] == 1" && grep -q "^run_end " "$TMP/h-$mode.err"
done

# ---- Ctrl-C during a TCP run ----
start_receiver $((1 << 30)) 60
timeout -s KILL "$(scaled 60)" "$LKVM" run --vm none --model lguest --workload tcp --net user \
	--peer "10.0.2.2:$RX_PORT" --bytes 1G --stats-json "$TMP/int.json" </dev/null >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
for _ in $(seq "$(scaled 100)"); do grep -q "^tcp: " "$TMP/int.out" && break; sleep 0.05; done
sleep 0.3
kill -INT "$pid"
wait "$pid"
echo $? >"$TMP/int.rc"
kill "$RX_PID" 2>/dev/null; wait "$RX_PID" 2>/dev/null
check "tcp, SIGINT: exit 130" [ "$(rc_of int)" = 130 ]
check "tcp, SIGINT: the stats say so, in the JSON too" \
	jx "$TMP/int.json" "d['run_end'] == 'signal' and d['vm'] == 'none'" && grep -q "^run_end  *signal" "$TMP/int.err"

# ---- table: both hosts without a VM, tcp over slirp, and an experiment ----
run_lkvm table table --preset none --vm none --model both --workload tcp --net user --rows 10,128 --repeat 1 --bytes 2M \
	--json "$TMP/table.json"
check "table --vm none --model both --workload tcp: exit 0, the banner names both axes" \
	[ "$(rc_of table)" = 0 ] && grep -q "^lguest-kvm table, experiment notify, --vm none --model threaded,lguest:" "$TMP/table.out"
check "table --vm none --model both: 2 rows x 2 hosts, each ok, each run with --vm none" \
	jx "$TMP/table.json" "d['vm'] == 'none' and [(r['model'], r['row']) for r in d['rows']] ==
		[('threaded', '10'), ('threaded', '128'), ('lguest', '10'), ('lguest', '128')] and all(r['ok'] for r in d['rows'])"
run_lkvm laytab table --vm none --model lguest --experiment layout --rows 40 --repeat 1 --bytes 1M --json "$TMP/lay.json"
check "table --vm none --model lguest --experiment layout: split and packed rows, ok" \
	jx "$TMP/lay.json" "[r['options'][-1] for r in d['rows']] == ['split', 'packed'] and
		all(r['ok'] and r['model'] == 'lguest' for r in d['rows'])"

# --max-seconds in the middle of a TCP run, with the threaded host this time
start_receiver $((1 << 30)) 60
run_lkvm limit run --vm none --model threaded --workload tcp --net user --peer "10.0.2.2:$RX_PORT" --bytes 1G \
	--max-seconds 1 --quiet --stats-json "$TMP/limit.json"
kill "$RX_PID" 2>/dev/null; wait "$RX_PID" 2>/dev/null
check "tcp, --max-seconds 1: exit 124, run_end time-limit, the stats printed" \
	[ "$(rc_of limit)" = 124 ] && jx "$TMP/limit.json" "d['run_end'] == 'time-limit'" &&
	grep -q "^run_end  *time-limit" "$TMP/limit.err"

# ---- stdout on /dev/null, stderr to a file ----
for model in threaded lguest; do
	"$LKVM" run --vm none --model $model --bytes 1M --stats-json "$TMP/null-$model.json" </dev/null >/dev/null \
		2>"$TMP/null-$model.err"
	echo $? >"$TMP/null-$model.rc"
	check "$model, stdout on /dev/null: exit 0 (was SIGSYS), stats on the stderr file" \
		[ "$(rc_of "null-$model")" = 0 ] && grep -q "^tx_verify  *ok" "$TMP/null-$model.err"
done
"$LKVM" run --vm none --model lguest --bytes 1M --stats-json /dev/null </dev/null >"$TMP/out.txt" 2>"$TMP/err.txt"
echo $? >"$TMP/jnull.rc"
check "--stats-json /dev/null, stdout and stderr to files: exit 0, the guest's banner on stdout" \
	[ "$(rc_of jnull)" = 0 ] && grep -q "no VM" "$TMP/out.txt" && grep -q "^tx_verify  *ok" "$TMP/err.txt"

finish
