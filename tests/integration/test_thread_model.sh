# test_thread_model.sh -- `--model thread`: the stub's driver on a host
# thread, no VM (launcher/run_thread.c).
#
# Why: it is the one model that runs on every machine, KVM or not, so it
# runs here directly, never in the emulator VM, and never skips.  It must
# pass the raw workload's checks that the VM models pass -- every policy,
# both waits, indirect descriptors, every frame verified by the sink --
# stop cleanly on a signal or --max-seconds, keep its sandbox (no KVM call
# allowed), refuse what it cannot run with one line, and feed `table`,
# including the cost experiment.  Nothing here is timed: the seconds are
# the benchmark's (docs/results.md), not a test's.
. "$(dirname "$0")/lib.sh"

# raw_ok NAME : a finished raw run whose every frame the sink verified
raw_ok() {
	local j=$TMP/$1.json
	[ "$(rc_of "$1")" = 0 ] && [ "$(json_get "$j" tx_verify)" = ok ] &&
		[ "$(json_get "$j" net_model)" = thread ] &&
		[ "$(json_get "$j" tx_frames)" = "$(json_get "$j" guest_tx_frames)" ] &&
		[ "$(json_get "$j" tx_frames)" -gt 0 ] && [ "$(json_get "$j" run_end)" = guest-exit ]
}
# The host counts notifies as eventfd reads, which merge writes that come
# close together: never more than the guest made, at least one.
notifies_bounded() {
	local j=$TMP/$1.json host guest
	host=$(json_get "$j" tx_queue_notifies)
	guest=$(json_get "$j" guest_tx_notifies)
	[ "$host" -ge 1 ] && [ "$host" -le "$guest" ]
}

for wait in spin halt; do
	for policy in always static:10 static:40 dynamic dynamic-exact event-idx; do
		name=$wait-${policy/:/-}
		run_lkvm "$name" run --model thread --bytes 16M --wait "$wait" --policy "$policy" \
			--stats-json "$TMP/$name.json"
		check "$wait, $policy: exit 0, every frame verified by the sink" raw_ok "$name"
		check "$wait, $policy: host notifies between 1 and the guest's" notifies_bounded "$name"
	done
	j=$TMP/$wait-dynamic.json
	if [ "$wait" = halt ]; then
		check "halt: the guest slept, and was woken by the device's interrupt eventfd" \
			[ "$(json_get "$j" guest_tx_waits_halted)" -gt 0 -a "$(json_get "$j" guest_irqs)" -gt 0 \
			-a "$(json_get "$j" guest_irqs)" -le "$(json_get "$j" guest_tx_waits_halted)" ]
	else
		check "spin: the guest never slept" [ "$(json_get "$j" guest_tx_waits_halted)" = 0 ]
	fi
done
j=$TMP/spin-dynamic.json
check "no VM ran: no exits, no injected interrupts" \
	[ "$(json_get "$j" vm_exits_mmio)" = 0 -a "$(json_get "$j" vm_exits_io)" = 0 -a \
	  "$(json_get "$j" interrupts_injected)" = 0 ]
check "every notify was a would-be exit" [ "$(json_get "$j" thread_exits)" -ge "$(json_get "$j" guest_tx_notifies)" ]
check "the guest's output says no VM ran" grep -q "no VM" "$TMP/spin-dynamic.out"
check "the sandbox held: seccomp on, no capabilities" \
	[ "$(json_get "$j" launcher_seccomp)" = kill -a "$(json_get "$j" launcher_cap_effective)" = 0000000000000000 ]

# The packed ring: every policy, verified, and the layout really used.
for policy in always static:10 static:40 dynamic dynamic-exact event-desc; do
	name=packed-${policy/:/-}
	run_lkvm "$name" run --model thread --layout packed --bytes 16M --policy "$policy" --stats-json "$TMP/$name.json"
	check "packed, $policy: exit 0, every frame verified by the sink" raw_ok "$name"
	check "packed, $policy: the packed ring ran" [ "$(json_get "$TMP/$name.json" ring_layout)" = packed ]
done
run_lkvm packed-halt run --model thread --layout packed --bytes 16M --wait halt --segments 3 --indirect threshold \
	--stats-json "$TMP/packed-halt.json"
check "packed, --wait halt, indirect threshold: verified" raw_ok packed-halt

run_lkvm indirect run --model thread --bytes 16M --segments 3 --indirect always --stats-json "$TMP/indirect.json"
check "indirect always: every frame verified" raw_ok indirect
check "indirect always: every buffer went indirect" \
	[ "$(json_get "$TMP/indirect.json" guest_tx_buffers_indirect)" = "$(json_get "$TMP/indirect.json" guest_tx_frames)" ]

run_lkvm paced run --model thread --bytes 4M --pace-ns 2000 --exit-cost-ns 5000 --stats-json "$TMP/paced.json"
check "--pace-ns and --exit-cost-ns: verified, the cost reported" \
	raw_ok paced
check "--exit-cost-ns 5000 is in the stats" [ "$(json_get "$TMP/paced.json" thread_exit_cost_ns)" = 5000 ]

# A stop: --max-seconds while the paced guest has minutes to go, then a
# SIGINT to a guest asleep between frames.
run_lkvm limit run --model thread --bytes 1G --pace-ns 100000 --max-seconds 1 --quiet --stats-json "$TMP/limit.json"
check "--max-seconds: exit 124, run_end time-limit" \
	[ "$(rc_of limit)" = 124 -a "$(json_get "$TMP/limit.json" run_end)" = time-limit ]
timeout -s KILL "$(scaled 60)" "$LKVM" run --model thread --bytes 1G --pace-ns 100000 --wait halt --quiet \
	</dev/null >/dev/null 2>"$TMP/int.err" &
pid=$!
sleep 1
kill -INT "$pid"
wait "$pid"
echo $? >"$TMP/int.rc"
check "SIGINT: exit 130" [ "$(rc_of int)" = 130 ]
check "SIGINT: the stats say so" grep -q "^run_end  *signal" "$TMP/int.err"

# What it cannot run: one line, exit 2, before anything starts.
refused() {
	local name=$1; shift
	run_lkvm "$name" run "$@"
	[ "$(rc_of "$name")" = 2 ] && [ "$(wc -l <"$TMP/$name.err")" = 1 ] && grep -q "$name_pattern" "$TMP/$name.err"
}
name_pattern="raw only"
check "--model thread --workload tcp: refused" refused tcp --model thread --workload tcp
name_pattern="built-in stub"
check "--model thread with an image: refused" refused image --model thread /bin/true
name_pattern="need a VM"
check "--model thread --fault triple: refused" refused fault --model thread --fault triple
name_pattern="only with --model thread"
check "--exit-cost-ns without --model thread: refused" refused cost --exit-cost-ns 10
name_pattern="0..10000000"
check "--exit-cost-ns junk: refused" refused junk --model thread --exit-cost-ns 1x
name_pattern="use event-desc"
check "--layout packed --policy event-idx: refused" refused eidx --model thread --layout packed --policy event-idx
name_pattern="add --layout packed"
check "--policy event-desc on split: refused" refused edesc --model thread --policy event-desc

# table: the thread model sweeps without /dev/kvm; the cost experiment
# fills every row it promises.
run_lkvm table table --model thread --rows 40,dynamic --repeat 2 --bytes 4M --json "$TMP/table.json"
check "table --model thread: exit 0" [ "$(rc_of table)" = 0 ]
check "table --model thread: 2 rows x 2 samples, all ok" python3 - "$TMP/table.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
sys.exit(0 if len(rows) == 2 and all(r["ok"] and r["model"] == "thread" and len(r["samples"]) == 2 for r in rows) else 1)
PY
run_lkvm costtab table --experiment cost --rows always --repeat 1 --bytes 1M --csv "$TMP/cost.csv"
check "table --experiment cost: exit 0" [ "$(rc_of costtab)" = 0 ]
check "table --experiment cost: 10 rows (5 exit costs x 2 paces), none failed" \
	[ "$(grep -c '^cost,thread,Always,' "$TMP/cost.csv")" = 10 -a "$(grep -c FAILED "$TMP/costtab.out")" = 0 ]
check "table --experiment cost: each row ran with its exit cost and pace" \
	grep -q -- '--exit-cost-ns=100000 --pace-ns=24000' "$TMP/cost.csv"
run_lkvm laytab table --model thread --experiment layout --rows 40,event --repeat 1 --bytes 2M --json "$TMP/lay.json"
check "table --experiment layout: exit 0" [ "$(rc_of laytab)" = 0 ]
check "table --experiment layout: split and packed rows, event-idx and event-desc, all ok" python3 - "$TMP/lay.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
opts = [" ".join(r["options"]) for r in rows]
want = ["--policy static:40 --layout split", "--policy static:40 --layout packed",
        "--policy event-idx --layout split", "--policy event-desc --layout packed"]
sys.exit(0 if opts == want and all(r["ok"] for r in rows) else 1)
PY
name_pattern="thread only"
refused_table() {
	local name=$1; shift
	run_lkvm "$name" table "$@"
	[ "$(rc_of "$name")" = 2 ] && [ "$(wc -l <"$TMP/$name.err")" = 1 ] && grep -q "$name_pattern" "$TMP/$name.err"
}
check "table --experiment cost --model threaded: refused" refused_table costvm --experiment cost --model threaded

finish
