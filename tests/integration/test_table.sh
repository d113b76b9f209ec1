# test_table.sh -- `lguest-kvm table` on a reduced sweep: the printed table's
# structure, CSV and JSON agreeing with it, the plot, failed rows, and the
# indirect experiment.
. "$(dirname "$0")/lib.sh"
need_kvm

run_lkvm t table --preset none --rows 10,64,dynamic,always --repeat 1 --bytes 16M \
	--csv "$TMP/t.csv" --json "$TMP/t.json" --plot "$TMP/t.svg"
check "reduced sweep exits 0" [ "$(rc_of t)" = 0 ]
check "a table per model" sh -c "grep -q '^Model: threaded' $TMP/t.out && grep -q '^Model: lguest' $TMP/t.out"
check "the seed's columns" grep -Eq "^Threshold +Seconds +Timeouts +Notifies" "$TMP/t.out"
check "the seed's 2008 figures beside threshold 10" grep -Eq "^10 .*\| +19\.3884 +131023 +888650" "$TMP/t.out"
check "rows 10, 64, Dynamic, Always in both models" \
	[ "$(grep -Ec '^(10|64|Dynamic|Always) ' "$TMP/t.out")" = 8 ]
check "CSV, JSON and the printed table agree" python3 - "$TMP/t.out" "$TMP/t.csv" "$TMP/t.json" <<'PY'
import csv, json, re, sys
out, csvf, jsonf = sys.argv[1:]
printed, model = {}, None
for line in open(out):
    m = re.match(r"^Model: (\w+)", line)
    if m:
        model = m.group(1)
        continue
    m = re.match(r"^(10|64|Dynamic|Always) +([\d.]+) \+-\d+% +(\d+) \+-\d+% +(\d+) \+-\d+%", line)
    if m:
        printed[(model, m.group(1))] = (float(m.group(2)), int(m.group(3)), int(m.group(4)))
rows = list(csv.DictReader(open(csvf)))
data = json.load(open(jsonf))["rows"]
assert len(printed) == 8 and len(rows) == 8 and len(data) == 8, (len(printed), len(rows), len(data))
for r, j in zip(rows, data):
    key = (r["model"], r["row"])
    sec, tmo, ntf = printed[key]
    assert abs(float(r["seconds_median"]) - sec) < 1e-4, key
    assert round(float(r["timeouts_median"])) == tmo and round(float(r["notifies_median"])) == ntf, key
    assert (j["model"], j["row"]) == key and j["ok"]
    assert round(j["median"]["notifies"]) == ntf and len(j["samples"]) == 1
    assert j["samples"][0]["notifies"] >= 1
PY
check "--plot writes a valid SVG" python3 -c '
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
sys.exit(0 if root.tag.endswith("svg") and len(list(root.iter())) > 50 else 1)' "$TMP/t.svg"

check "no progress line when stderr is not a terminal" sh -c "! grep -q ETA $TMP/t.err"
# The progress check needs a pseudo-terminal (script(1) and /dev/pts).
if command -v script >/dev/null && script -qfec true /dev/null </dev/null >/dev/null 2>&1; then
	script -qfec "$LKVM table --preset none --rows 10,20 --repeat 2 --bytes 1M --model threaded" /dev/null \
		</dev/null >"$TMP/tty.out" 2>&1
	check "progress (row, repeat, elapsed, ETA) on a terminal" \
		sh -c "tr '\r' '\n' <$TMP/tty.out | grep -Eq 'threaded: row 20, repeat 2/2 -- [0-9]+/4 runs, elapsed [0-9]+ s, ETA [0-9]+ s'"
else
	echo "skip - progress on a terminal: no pseudo-terminal here"
fi

# Every run of this sweep fails: the guest cannot fit 1024 buffers of 16000
# bytes into 16 MiB.  The table must say so and never print numbers for it.
run_lkvm f table --preset none --rows 10,dynamic --repeat 2 --bytes 1M --mem 16M --ring 1024 --frame 16000 \
	--model threaded --csv "$TMP/f.csv"
check "failed rows -> exit 1" [ "$(rc_of f)" = 1 ]
check "failed rows are marked with the reason" \
	[ "$(grep -c '^\(10\|Dynamic\) *FAILED: exit 33: .*status 33' "$TMP/f.out")" = 2 ]
check "failed rows carry no numbers in the CSV" python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sys.exit(0 if len(rows) == 2 and all(r["seconds_median"] == "" and r["failed"] for r in rows) else 1)' "$TMP/f.csv"
check "stderr says rows failed" grep -q "some rows failed" "$TMP/f.err"

for bad in "--repeat 0" "--workload banana" "--workload tcp --net tap:x" "--rows 10,banana" "--experiment foo" "--bytes lots" \
	"--experiment linux --vm none" "--experiment linux --workload raw" "--experiment linux --rows linux,bsd" \
	"--experiment linux --plot x.svg"; do
	# shellcheck disable=SC2086
	run_lkvm u table $bad
	check "table $bad: usage error (exit 2, one line)" \
		sh -c "[ $(rc_of u) = 2 ] && [ $(wc -l <"$TMP/u.err") = 1 ]"
done

before=$(ls /tmp/lkvm-table-* 2>/dev/null | wc -l)
"$LKVM" table --preset none --rows 10,20,30 --model lguest </dev/null >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
sleep 3
kill -INT $pid
wait $pid
check "SIGINT mid-sweep -> exit 130" [ $? = 130 ]
check "interrupted rows say so, no numbers" [ "$(grep -c 'FAILED: .*interrupted' "$TMP/int.out")" = 3 ]
check "no temporary files left behind" [ "$(ls /tmp/lkvm-table-* 2>/dev/null | wc -l)" = "$before" ]

run_lkvm i table --experiment indirect --rows never,always,threshold --bytes 16M --repeat 1 \
	--model threaded --json "$TMP/i.json"
check "indirect experiment exits 0" [ "$(rc_of i)" = 0 ]
check "indirect table has policy x ring rows" \
	[ "$(grep -Ec '^(never|always|threshold)/(128|256) ' "$TMP/i.out")" = 6 ]
check "indirect share: never 0, always 1, threshold in between" python3 - "$TMP/i.json" <<'PY'
import json, sys
share = {r["row"]: r["median"]["indirect_share"] for r in json.load(open(sys.argv[1]))["rows"]}
assert share["never/128"] == 0 and share["always/128"] == 1, share
assert 0 <= share["threshold/128"] < 1, share
PY
finish
