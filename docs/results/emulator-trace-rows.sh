#!/bin/bash
# emulator-trace-rows.sh -- one traced run per row of issue 23's table
# (`table --preset none --model lguest --workload tcp --net user --bytes 64M`:
# each row is `run --segments 2 --policy P`), with its receiver started as the
# table starts it, so that a row's expiries can be read on the timeline
# (results.md, table 7e).  Run from the source tree, inside the emulator VM:
#   tests/vm/lkvm-vm --rw out -- docs/results/emulator-trace-rows.sh out static:10 static:128
# VM=none runs the same rows without a VM (then on a quiet machine only);
# EXTRA='--timeout-us 5000' adds words to every run, RECV_CPU=1 pins the
# receiver to that CPU (pass either with lkvm-vm --env).
# Each row leaves OUT/lguest-ROW.{bin,json,err,cmd}; read a .bin with
# `lguest-kvm trace` and docs/results/trace-expiries.py.
set -u
L=./build/lguest-kvm
VM=${VM:-kvm}
read -r -a extra <<< "${EXTRA:-}"
pin=()
[ -n "${RECV_CPU:-}" ] && pin=(taskset -c "$RECV_CPU")
D=$1; shift
for pol in "$@"; do
  n=lguest-${pol/:/}${EXTRA:+-$(echo "$EXTRA" | tr -cd "0-9")}${RECV_CPU:+-recv$RECV_CPU}
  rm -f "$D/ready"
  ( timeout -s KILL 1500 "${pin[@]}" $L receive --listen 127.0.0.1:0 --bytes 64M --ready "$D/ready" --timeout 600 --quiet \
      </dev/null >/dev/null 2>"$D/$n.recv.err" ) &
  for _ in $(seq 400); do [ -s "$D/ready" ] && break; sleep 0.05; done
  A=$(cat "$D/ready")
  args=(run --quiet --vm "$VM" --model lguest --max-seconds 900 --net user --peer "10.0.2.2:${A##*:}"
        --bytes 64M --workload tcp --segments 2 --policy "$pol" --trace "$D/$n.bin" --stats-json "$D/$n.json" "${extra[@]}")
  echo "$L ${args[*]}" > "$D/$n.cmd"
  $L "${args[@]}" 2>"$D/$n.err"
  echo "$n rc=$?"
  wait
done
