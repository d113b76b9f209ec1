# test_paper_table.sh -- the main job: a bare `lguest-kvm table` runs the
# 2008 preset (lab/preset.c, docs/seed-2008.md) and judges its shape
# against the seed's (lab/paper2008.c).
#
# Why: the preset is the one setting every row shares, so the table must
# hand each of its options to every run -- and give way to each option the
# user passes -- and the ratio columns and the verdict must be computed
# from the very medians the JSON holds.  Without /dev/kvm the preset takes
# the no-VM lguest host, so this runs on every machine and never skips.
# Tiny transfers: the shape itself is a benchmark (docs/results.md), not a
# test; here only the plumbing is checked.
. "$(dirname "$0")/lib.sh"

if [ -e /dev/kvm ]; then VM=kvm; else VM=none; fi

run_lkvm bare table --rows 10,50,dynamic --repeat 1 --bytes 1M \
	--json "$TMP/t.json" --csv "$TMP/t.csv" --plot "$TMP/t.svg"
check "bare table: exit 0 ($(err_of bare | tail -1))" [ "$(rc_of bare)" = 0 ]
check "bare table: the banner names the preset" grep -q '^Preset 2008: ' "$TMP/bare.out"
check "bare table: --vm $VM --model lguest, tcp over slirp, with the preset's options" \
	grep -q -- "--vm $VM --model lguest:.*--frame 190 --segments 2 --ring 128 --pace-ns 2000.*--host-timer rearm --timeout-us 50 --timer-wait spin --workload tcp --net user" \
	"$TMP/bare.out"
if [ "$VM" = none ]; then
	check "bare table, no VM: the 3 us exit cost is passed" grep -q -- "--exit-cost-ns 3000" "$TMP/bare.out"
else
	check "bare table, KVM: no exit cost (a VM's exits are real)" sh -c "! grep -q -- --exit-cost-ns $TMP/bare.out"
fi
check "bare table: the ratio columns and the verdict are printed" \
	sh -c "grep -q 'x2008/GiB: Timeouts Notifies' $TMP/bare.out && grep -Eq '^shape against 2008 \([0-5] of 5 hold\):' $TMP/bare.out"
check "bare table: JSON, text and verdict agree" python3 - "$TMP/t.json" "$TMP/bare.out" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
assert d["preset"] == "2008", d["preset"]
assert abs(d["per_gib"] - 1024) < 1e-9, d["per_gib"]
rows = {r["row"]: r for r in d["rows"]}
assert set(rows) == {"10", "50", "Dynamic"} and all(r["ok"] for r in rows.values()), rows.keys()
assert all(r["model"] == "lguest" for r in d["rows"])
# each printed ratio is the median per GiB over 2008's
paper = {"10": (131023, 888650), "50": (282943, 816), "Dynamic": (275860, 64153)}
for label, (pt, pn) in paper.items():
    m = rows[label]["median"]
    line = next(l for l in out.splitlines() if l.split() and l.split()[0] == label)
    rt, rn = (float(x) for x in line.split("|")[-1].split())
    assert abs(rt - round(m["timeouts"] * 1024 / pt, 2)) < 0.011, (label, rt)
    assert abs(rn - round(m["notifies"] * 1024 / pn, 3)) < 0.0011, (label, rn)
(v,) = d["verdict"]
assert v["model"] == "lguest" and v["judged"] is True
met = int(re.search(r"shape against 2008 \((\d) of 5 hold\)", out).group(1))
assert met == v["met"] == sum(v[k] for k in ("cliff_ok", "notify_drop_ok", "timeouts_ok", "fastest_ok", "dynamic_ok"))
assert v["dynamic_notifies_per_gib"] == rows["Dynamic"]["median"]["notifies"] * 1024
PY
check "bare table --plot: three panels per GiB with 2008's rows" \
	sh -c "grep -q 'timeouts per GiB' $TMP/t.svg && grep -q '2008: static' $TMP/t.svg"

# The user's option wins over the preset's; the rest of the preset stays.
run_lkvm own table --rows 10 --repeat 1 --bytes 1M --frame 300 --json "$TMP/own.json"
check "table --frame 300: exit 0" [ "$(rc_of own)" = 0 ]
check "table --frame 300: the runs get 300, not the preset's 190, and the preset's pace" python3 - "$TMP/own.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))["options"]
pairs = list(zip(o, o[1:]))
assert ("--frame", "300") in pairs and ("--frame", "190") not in pairs, o
assert ("--pace-ns", "2000") in pairs, o
PY

# --preset none is the table as it was: the run defaults, both hosts.
run_lkvm none table --preset none --vm none --rows 10 --repeat 1 --bytes 1M --json "$TMP/none.json"
check "table --preset none: exit 0" [ "$(rc_of none)" = 0 ]
check "table --preset none: no preset, raw, both host models" python3 - "$TMP/none.json" "$TMP/none.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["preset"] == "none" and "--frame" not in d["options"] and "tcp" not in d["options"], d
assert sorted(r["model"] for r in d["rows"]) == ["lguest", "threaded"]
assert "Preset" not in open(sys.argv[2]).read()
PY

for bad in "--preset 1999" "--preset 2008 --experiment cost" "--preset"; do
	# shellcheck disable=SC2086
	run_lkvm u table $bad
	check "table $bad: usage error (exit 2, one line: $(head -c 120 "$TMP/u.err"))" \
		sh -c "[ $(rc_of u) = 2 ] && [ $(wc -l <"$TMP/u.err") = 1 ]"
done

echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
