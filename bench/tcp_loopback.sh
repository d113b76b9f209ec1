#!/bin/bash
# tcp_loopback.sh -- the host's own TCP ceiling on loopback, as the verified
# stream sees it: `lguest-kvm receive` and `lguest-kvm send` on 127.0.0.1,
# no guest.  A guest's stream to the host can be judged against this number.
#
#   for each of R runs: receive (port 0, --ready, --json) in the background,
#   send into it, keep the receiver's seconds and Gbit/s (accept to EOF,
#   every byte verified) -> print each run, then median and min-max
#   -> optionally the same as one JSON object (--json FILE)
#
# A benchmark, not a test: it is not registered with `meson test`.
set -u

usage() {
	cat <<'USAGE'
usage: bench/tcp_loopback.sh [--bytes SIZE] [--repeat R] [--json FILE] [--lkvm PATH]

Send SIZE bytes (default 1G; K/M/G suffixes) over loopback TCP from
`lguest-kvm send` to `lguest-kvm receive`, which verifies every byte; repeat R
times (default 5); print each run and the median and min-max of seconds and
Gbit/s as the receiver measured them (accept to EOF).

  --bytes SIZE   stream length per run (default 1G)
  --repeat R     runs, 1..100 (default 5)
  --json FILE    also write the runs and the summary as JSON
  --lkvm PATH    the launcher (default: build/lguest-kvm next to bench/)
USAGE
}
die_usage() { echo "tcp_loopback.sh: $* -- see 'bench/tcp_loopback.sh --help'" >&2; exit 2; }

BYTES=1G
REPEAT=5
JSON=
LKVM=$(dirname "$0")/../build/lguest-kvm
while [ $# -gt 0 ]; do
	case $1 in
	--bytes)  [ $# -ge 2 ] || die_usage "--bytes needs a size"; BYTES=$2; shift 2 ;;
	--repeat) [ $# -ge 2 ] || die_usage "--repeat needs a number"; REPEAT=$2; shift 2 ;;
	--json)   [ $# -ge 2 ] || die_usage "--json needs a file"; JSON=$2; shift 2 ;;
	--lkvm)   [ $# -ge 2 ] || die_usage "--lkvm needs a path"; LKVM=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) die_usage "unknown option '$1'" ;;
	esac
done
[[ $BYTES =~ ^[0-9]+[KkMmGg]?$ ]] || die_usage "--bytes '$BYTES': give a size such as 256M or 1G"
[[ $REPEAT =~ ^[0-9]+$ ]] && [ "$REPEAT" -ge 1 ] && [ "$REPEAT" -le 100 ] || die_usage "--repeat '$REPEAT': give 1..100"
[ -x "$LKVM" ] || { echo "tcp_loopback.sh: no launcher at $LKVM -- build it (meson compile -C build) or pass --lkvm" >&2; exit 1; }

TMP=$(mktemp -d)
RX_PID=
cleanup() { [ -n "$RX_PID" ] && kill "$RX_PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT

echo "loopback TCP, $BYTES per run, $REPEAT runs, $(nproc) CPUs, Linux $(uname -r)"
for i in $(seq "$REPEAT"); do
	rm -f "$TMP/ready" "$TMP/run$i.json"
	"$LKVM" receive --listen 127.0.0.1:0 --ready "$TMP/ready" --bytes "$BYTES" --quiet \
		--json "$TMP/run$i.json" 2>"$TMP/rx.err" &
	RX_PID=$!
	for _ in $(seq 200); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
	if [ ! -s "$TMP/ready" ]; then
		echo "tcp_loopback.sh: run $i: the receiver did not start listening: $(cat "$TMP/rx.err")" >&2
		exit 1
	fi
	"$LKVM" send --connect "$(cat "$TMP/ready")" --bytes "$BYTES" --quiet 2>"$TMP/tx.err"
	tx=$?
	wait "$RX_PID"
	rx=$?
	RX_PID=
	if [ $rx != 0 ] || [ $tx != 0 ]; then
		echo "tcp_loopback.sh: run $i failed (receive exit $rx, send exit $tx): $(cat "$TMP/rx.err" "$TMP/tx.err" | tr '\n' ' ')" >&2
		exit 1
	fi
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("run %s/%s: %.3f s  %.2f Gbit/s" % (sys.argv[2], sys.argv[3], r["seconds"], r["gbit_per_s"]))' \
		"$TMP/run$i.json" "$i" "$REPEAT"
done

# The summary: median and min-max of each measure, from the receivers' JSON.
python3 - "$BYTES" "$JSON" "$TMP"/run*.json <<'PY'
import json, os, platform, statistics, sys

size, out, files = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = [json.load(open(f)) for f in sorted(files, key=lambda f: int(f.rsplit("run", 1)[1][:-5]))]
summary = {}
for key in ("seconds", "gbit_per_s"):
    v = [r[key] for r in runs]
    summary[key] = {"median": statistics.median(v), "min": min(v), "max": max(v)}
s, g = summary["seconds"], summary["gbit_per_s"]
print("median %.3f s (min %.3f, max %.3f)   %.2f Gbit/s (min %.2f, max %.2f)"
      % (s["median"], s["min"], s["max"], g["median"], g["min"], g["max"]))
if out:
    doc = {"benchmark": "tcp_loopback", "bytes": runs[0]["bytes"], "size": size, "repeat": len(runs),
           "cpus": os.cpu_count(), "kernel": platform.release(),
           "runs": [{"seconds": r["seconds"], "gbit_per_s": r["gbit_per_s"]} for r in runs], **summary}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
PY
