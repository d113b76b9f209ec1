# test_thread_model.sh -- `--model thread`: the stub's driver on a host
# thread, no VM (launcher/run_thread.c).
#
# Why: it is the one model that runs on every machine, KVM or not, so it
# runs here directly, never in the emulator VM, and never skips.  It must
# pass the raw workload's checks that the VM models pass -- every policy,
# both waits, indirect descriptors, every frame verified by the sink --
# stop cleanly on a signal or --max-seconds, keep its sandbox (no KVM call
# allowed), refuse what it cannot run with one line, and feed `table`,
# including the cost experiment and the indirect experiment's cost sweep.
# The price of an indirect table (--indirect-cost-ns, --indirect-cold-lines)
# runs in every indirect mode on both layouts and is checked as accounting.  Nothing here is timed: the seconds are
# the benchmark's (docs/results.md), not a test's.
. "$(dirname "$0")/lib.sh"

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

# The price of an indirect table (--indirect-cost-ns, --indirect-cold-lines):
# accounting, never timing -- every table the guest built is an indirect
# buffer the host walked, each took at least the ticks asked, and the
# host timed its pops of each kind.
priced_ok() {
	local j=$TMP/$1.json mode=$2 tables ticks cost frames
	tables=$(json_get "$j" guest_tx_indirect_tables)
	ticks=$(json_get "$j" guest_tx_indirect_build_ticks)
	cost=$(json_get "$j" guest_tx_indirect_cost_ticks)
	frames=$(json_get "$j" guest_tx_frames)
	[ "$tables" = "$(json_get "$j" guest_tx_buffers_indirect)" ] &&
		[ "$tables" = "$(json_get "$j" tx_buffers_indirect)" ] &&
		[ "$cost" -gt 0 ] && [ "$ticks" -ge $((tables * cost)) ] &&
		[ "$(json_get "$j" guest_indirect_cost_ns)" = 700 ] &&
		[ "$(json_get "$j" guest_indirect_cold_lines)" = 2 ] &&
		case $mode in
		never) [ "$tables" = 0 ] && [ "$ticks" = 0 ] &&
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["tx_pop_ns_per_chain_indirect"] == 0 and d["tx_pop_ns_per_chain_direct"] > 0 and d["guest_tx_indirect_build_ns_per_table"] == 0 else 1)' "$j" ;;
		always) [ "$tables" = "$frames" ] &&
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["tx_pop_ns_per_chain_direct"] == 0 and d["tx_pop_ns_per_chain_indirect"] > 0 and d["guest_tx_indirect_build_ns_per_table"] > 0 else 1)' "$j" ;;
		*) [ "$tables" -gt 0 ] && [ "$tables" -lt "$frames" ] ;;
		esac
}
for mode in never always threshold; do
	for layout in split packed; do
		name=priced-$mode-$layout
		run_lkvm "$name" run --model thread --layout $layout --bytes 8M --segments 3 --indirect $mode \
			--indirect-cost-ns 700 --indirect-cold-lines 2 --stats-json "$TMP/$name.json"
		check "--indirect $mode, $layout, priced tables: exit 0, every frame verified" raw_ok "$name"
		check "--indirect $mode, $layout, priced tables: tables = indirect buffers (guest and host), ticks >= tables x asked" \
			priced_ok "$name" $mode
	done
done

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
	[ "$(rc_of "$name")" = 2 ] && [ "$(wc -l <"$TMP/$name.err")" = 1 ] && grep -q -e "$name_pattern" "$TMP/$name.err"
}
name_pattern="raw or tcp only"
check "--model thread --workload echo: refused" refused echo --model thread --workload echo
name_pattern="thread means --vm none"
check "--model thread --vm kvm: refused" refused vmkvm --model thread --vm kvm
name_pattern="expected kvm or none"
check "--vm junk: refused" refused vmjunk --vm xen
name_pattern="built-in stub"
check "--model thread with an image: refused" refused image --model thread /bin/true
name_pattern="needs a VM"
check "--model thread --fault triple: refused" refused fault --model thread --fault triple
name_pattern="only with --vm none"
check "--exit-cost-ns without --vm none: refused" refused cost --exit-cost-ns 10
name_pattern="--exit-cost-ns '1x': expected 0 to 10000000"
check "--exit-cost-ns junk: refused" refused junk --model thread --exit-cost-ns 1x
name_pattern="--indirect-cost-ns '1000001': expected 0 to 1000000"
check "--indirect-cost-ns above 1 ms: refused" refused icost --model thread --indirect always --indirect-cost-ns 1000001
name_pattern="--indirect-cost-ns '5us': expected 0 to 1000000"
check "--indirect-cost-ns junk: refused" refused icostjunk --model thread --indirect-cost-ns 5us
name_pattern="--indirect-cold-lines '2000': expected 0 to 1024"
check "--indirect-cold-lines above 1024: refused" refused cold --model thread --indirect-cold-lines 2000
name_pattern="give --mem 128M or more"
check "--indirect-cold-lines with too little RAM: refused" refused coldmem --model thread --indirect-cold-lines 4 --mem 64M
name_pattern="use event-desc"
check "--layout packed --policy event-idx: refused" refused eidx --model thread --layout packed --policy event-idx
name_pattern="add --layout packed"
check "--policy event-desc on split: refused" refused edesc --model thread --policy event-desc

# table: the thread model sweeps without /dev/kvm; the cost experiment
# fills every row it promises.
run_lkvm table table --preset none --model thread --rows 40,dynamic --repeat 2 --bytes 4M --json "$TMP/table.json"
check "table --model thread: exit 0" [ "$(rc_of table)" = 0 ]
check "table --model thread: 2 rows x 2 samples, all ok" python3 - "$TMP/table.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
sys.exit(0 if len(rows) == 2 and all(r["ok"] and r["vm"] == "none" and r["model"] == "threaded" and len(r["samples"]) == 2 for r in rows) and t["vm"] == "none" else 1)
PY
run_lkvm costtab table --experiment cost --rows always --repeat 1 --bytes 1M --csv "$TMP/cost.csv"
check "table --experiment cost: exit 0" [ "$(rc_of costtab)" = 0 ]
check "table --experiment cost: 10 rows (5 exit costs x 2 paces), none failed" \
	[ "$(grep -c '^cost,none,threaded,Always,' "$TMP/cost.csv")" = 10 -a "$(grep -c FAILED "$TMP/costtab.out")" = 0 ]
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
# The indirect cost sweep: every policy x ring x price, the crossover
# (or its absence) said under the table and in the JSON, the plot drawn.
run_lkvm sweep table --model thread --experiment indirect --indirect-costs 0,400 --exit-cost-ns 2000 \
	--indirect-cold-lines 1 --repeat 1 --bytes 2M --json "$TMP/sweep.json" --csv "$TMP/sweep.csv" \
	--plot "$TMP/sweep.svg"
check "table --experiment indirect --indirect-costs: exit 0" [ "$(rc_of sweep)" = 0 ]
check "table --indirect-costs: 3 policies x 2 rings x 2 costs, all ok, each run at its price and exit cost" \
	python3 - "$TMP/sweep.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = t["rows"]
want = [(m, r, c) for m in ("never", "always", "threshold") for r in (128, 256) for c in (0, 400)]
got = [(x["indirect"], x["ring"], x["indirect_cost_ns"]) for x in rows]
ok = got == want and all(x["ok"] for x in rows) and t["indirect_costs_ns"] == [0, 400]
ok = ok and all("--indirect-cost-ns=%d" % x["indirect_cost_ns"] in x["options"] for x in rows)
ok = ok and "--exit-cost-ns" in t["options"] and "--indirect-cold-lines" in t["options"]
# the priced rows of always built tables that cost at least the price
ok = ok and all(x["median"]["indirect_build_ns_per_table"] >= 400 for x in rows
                if x["indirect"] == "always" and x["indirect_cost_ns"] == 400)
cx = t["crossover"]
ok = ok and sorted(c["ring"] for c in cx) == [128, 256]
ok = ok and all((c["cost_ns"] in (0, 400)) if c["cost_ns"] is not None else c["up_to_ns"] == 400 for c in cx)
sys.exit(0 if ok else 1)
PY
check "table --indirect-costs: the crossover is said under the table, per ring" \
	sh -c "[ \$(grep -cE '^  ring (128|256): (threshold overtakes always at|no crossover up to 400 ns)' '$TMP/sweep.out') = 2 ]"
check "table --indirect-costs: the CSV has every row, labelled with its price" \
	[ "$(grep -c '^indirect,none,threaded,[a-z]*/[0-9]*/[0-9]*ns,' "$TMP/sweep.csv")" = 12 ]
check "table --indirect-costs --plot: an SVG was drawn" grep -q "<svg" "$TMP/sweep.svg"

name_pattern="ascending order"
refused_table() {
	local name=$1; shift
	run_lkvm "$name" table "$@"
	[ "$(rc_of "$name")" = 2 ] && [ "$(wc -l <"$TMP/$name.err")" = 1 ] && grep -q -e "$name_pattern" "$TMP/$name.err"
}
check "table --indirect-costs not ascending: refused" refused_table icdesc --model thread --experiment indirect \
	--indirect-costs 500,100
name_pattern="only with --experiment indirect"
check "table --indirect-costs without the indirect experiment: refused" refused_table icnot --model thread \
	--indirect-costs 100
name_pattern="is not a cost of 0..1000000 ns"
check "table --indirect-costs above 1 ms: refused" refused_table icbig --model thread --experiment indirect \
	--indirect-costs 0,2000000
name_pattern="plots only its cost sweep"
check "table --experiment indirect --plot without a sweep: refused" refused_table icplot --model thread \
	--experiment indirect --plot "$TMP/x.svg"
name_pattern="runs --vm none only"
check "table --experiment cost --vm kvm: refused" refused_table costvm --experiment cost --vm kvm
name_pattern="one --model at a time"
check "table --experiment cost --model both: refused" refused_table costboth --experiment cost --model both

# The timeline (run --trace, docs/trace.md): its counts are the stats', the
# clock is one (the guest is a host thread), and a plot comes out.
for layout in split packed; do
	run_lkvm "trace-$layout" run --model thread --bytes 16M --layout "$layout" --quiet \
		--stats-json "$TMP/trace-$layout.json" --trace "$TMP/trace-$layout.bin"
	check "traced ($layout): the run is as untraced ones" raw_ok "trace-$layout"
	check "traced ($layout): its notify and timeout counts are the stats'" trace_agrees "$TMP/trace-$layout.bin"
done
check "traced: the clock is shared, as it must be on one host" \
	[ "$(trace_json "$TMP/trace-split.bin" 'j["clock"]')" = shared ]
check "trace --plot draws the run" \
	sh -c '"$1" trace "$2" --plot "$3" >/dev/null && grep -q "<svg" "$3"' _ "$LKVM" "$TMP/trace-split.bin" "$TMP/t.svg"
run_lkvm trace-small run --model thread --bytes 16M --quiet --trace-events 64 --trace "$TMP/trace-small.bin"
check "a ring too small: the run goes on, and the file says how many were lost" \
	[ "$(rc_of trace-small)" = 0 ] && [ "$(trace_json "$TMP/trace-small.bin" 'j["guest_lost"] > 0 and j["guest_events"] == 64')" = True ]
run_lkvm trace-odd run --model thread --trace-events 1000 --trace "$TMP/x.bin"
check "--trace-events not a power of two: refused with one line" \
	[ "$(rc_of trace-odd):$(err_of trace-odd | wc -l)" = 2:1 ]
run_lkvm trace-dir table --model thread --rows 10,dynamic --repeat 2 --bytes 4M --trace-dir "$TMP/traces"
traces_agree() {
	local f
	[ "$(rc_of trace-dir)" = 0 ] && [ "$(ls "$1" | wc -l)" = 2 ] || return 1
	for f in "$1"/*.bin; do trace_agrees "$f" || return 1; done
}
check "table --trace-dir: one trace per row (its first run), each agreeing with its run" traces_agree "$TMP/traces"

finish
