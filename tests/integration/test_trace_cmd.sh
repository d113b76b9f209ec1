# test_trace_cmd.sh -- `lguest-kvm trace` on a synthetic trace file, no VM:
# the summary and its checks, --json, --plot, --from/--to, and the one-line
# refusals of a corrupt file (exit 1) and of bad options (exit 2).  The file
# comes from the unit test's simulation (tests/unit/test_trace_file.c,
# `unit-trace-file --write FILE`), so its layout is trace_file.h's own.
. "$(dirname "$0")/lib.sh"
GEN=${2:?usage: $0 path/to/lguest-kvm path/to/unit-trace-file}

check "the generator writes a trace" "$GEN" --write "$TMP/t.bin"
"$GEN" --write "$TMP/lost.bin" --lost >/dev/null

run_lkvm sum trace "$TMP/t.bin"
check "summary exits 0" [ "$(rc_of sum)" = 0 ]
check "summary names model, policy and layout" grep -q "model threaded, policy dynamic, layout split" "$TMP/sum.out"
check "summary says the clock is shared" grep -q "clock: shared" "$TMP/sum.out"
for what in "guest notifies" "host notify events" "timer_fire events"; do
	check "summary checks $what against the stats: match" grep -q "$what.*: match" "$TMP/sum.out"
done
for what in "drain sizes" "notify intervals" "timer lateness" "drain durations" \
	    "host timer length (timer_arm.a, us) over time" "guest threshold (kick.c on the TX queue) over time"; do
	check "summary has $what" grep -qF "$what" "$TMP/sum.out"
done
check "summary is quiet on stderr" [ ! -s "$TMP/sum.err" ]

run_lkvm lost trace "$TMP/lost.bin"
check "a wrapped ring: exit 0" [ "$(rc_of lost)" = 0 ]
check "a wrapped ring: said loudly" grep -q "WARNING: the guest's trace ring wrapped" "$TMP/lost.out"
check "a wrapped ring: the checks are marked not meaningful" grep -q "NOT MEANINGFUL" "$TMP/lost.out"

run_lkvm json trace "$TMP/t.bin" --json
check "--json exits 0" [ "$(rc_of json)" = 0 ]
check "--json is one valid JSON object" python3 -m json.tool "$TMP/json.out" /dev/null
check "--json: the checks match" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["checks"]["meaningful"]
assert all(d["checks"][k]["match"] for k in ("guest_notifies", "notify_wakeups", "timeouts"))
assert d["counts"]["kick"] > 0 and d["histograms"]["drain_buffers"]["n"] > 0
assert len(d["over_time"]["threshold"]) == 10' "$TMP/json.out"

run_lkvm win trace "$TMP/t.bin" --json --from 10 --to 20
check "--from/--to restrict the window" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["window"]
assert w["from_ms"] == 10 and w["to_ms"] == 20 and 0 < w["events"] < d["events"]' "$TMP/win.out"

run_lkvm plot trace "$TMP/t.bin" --plot "$TMP/t.svg"
check "--plot exits 0" [ "$(rc_of plot)" = 0 ]
check "--plot writes a non-empty SVG" grep -q '<svg' "$TMP/t.svg"
run_lkvm zoom trace "$TMP/t.bin" --plot "$TMP/z.svg" --from 20 --to 25
check "--plot with a window exits 0" [ "$(rc_of zoom)" = 0 ]
check "--plot with a window writes an SVG" grep -q '<svg' "$TMP/z.svg"

# A corrupt file: exit 1, one line saying what is wrong.
cp "$TMP/t.bin" "$TMP/bad.bin"
printf 'X' | dd of="$TMP/bad.bin" bs=1 seek=0 conv=notrunc status=none
run_lkvm bad trace "$TMP/bad.bin"
check "bad magic: exit 1" [ "$(rc_of bad)" = 1 ]
check "bad magic: one line" [ "$(wc -l <"$TMP/bad.err")" = 1 ]
check "bad magic: the line names the magic" grep -q magic "$TMP/bad.err"
head -c 1000 "$TMP/t.bin" >"$TMP/short.bin"
run_lkvm short trace "$TMP/short.bin" --plot "$TMP/short.svg"
check "truncated: exit 1" [ "$(rc_of short)" = 1 ]
check "truncated: one line" [ "$(wc -l <"$TMP/short.err")" = 1 ]
check "truncated: the line says so" grep -q truncated "$TMP/short.err"
check "truncated: no plot" [ ! -e "$TMP/short.svg" ]

run_lkvm help trace --help
check "trace --help exits 0" [ "$(rc_of help)" = 0 ]
check "trace --help lists --plot" grep -q -- --plot "$TMP/help.out"
for args in "trace" "trace a b" "trace --bogus f" "trace --from x f" "trace --to -1 f" "trace --from 5 --to 5 f" \
	    "trace --plot t.pdf f"; do
	# shellcheck disable=SC2086
	run_lkvm usage $args
	check "'$args' is a usage error (exit 2)" [ "$(rc_of usage)" = 2 ]
	check "'$args' gives exactly one line" [ "$(wc -l <"$TMP/usage.err")" = 1 ]
done
finish
