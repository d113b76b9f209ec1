# lib.sh -- shared helpers for the integration tests, which boot real guests.
#
# Each test script is run by Meson as `bash TEST.sh LGUEST_KVM_BINARY`.  It
# counts its checks, prints "N passed, M failed" last, and exits 0 only if
# nothing failed.  A test that needs KVM calls need_kvm: without /dev/kvm it
# runs itself again inside the emulator VM (tests/vm/lkvm-vm), and skips
# (exit 77, Meson's SKIP) only where that cannot run either, saying why.
#
# Inside the VM everything is an emulator's speed: LKVM_TIME_SCALE (set by
# the VM runner, 1 elsewhere) stretches time limits -- scaled(), never what
# a test asserts.

set -u
TEST_ARGV=("$0" "$@")
LKVM=${1:?usage: $0 path/to/lguest-kvm}
TIME_SCALE=${LKVM_TIME_SCALE:-1}
VM_RUNNER=$(cd "$(dirname "${BASH_SOURCE[0]}")/../vm" && pwd)/lkvm-vm
PASS=0
FAIL=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

need_kvm() {
	[ -e /dev/kvm ] && return 0
	local why
	if [ -z "${LKVM_IN_VM:-}" ] && why=$("$VM_RUNNER" --check); then
		echo "no /dev/kvm: running ${TEST_ARGV[0]##*/} inside the emulator VM (tests/vm/lkvm-vm)"
		rm -rf "$TMP"
		exec "$VM_RUNNER" --timeout "$(scaled 1200)" -- bash "${TEST_ARGV[@]}"
	fi
	echo "SKIP: /dev/kvm is missing and ${why:-the VM route is not available inside the VM}"
	exit 77
}

# scaled SECONDS : a time limit, stretched under emulation
scaled() { echo $(($1 * TIME_SCALE)); }

ok()   { PASS=$((PASS + 1)); echo "ok   - $*"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# run_lkvm NAME ARGS... : run with stdin from /dev/null, keep stdout/stderr/status
run_lkvm() {
	local name=$1; shift
	timeout -s KILL "$(scaled 120)" "$LKVM" "$@" </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
rc_of()  { cat "$TMP/$1.rc"; }
err_of() { cat "$TMP/$1.err"; }
out_of() { cat "$TMP/$1.out"; }

# json_get FILE KEY : one value from a --stats-json file
json_get() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# raw_ok NAME : a finished no-VM (--vm none, threaded) raw run whose every frame the sink verified
raw_ok() {
	local j=$TMP/$1.json
	[ "$(rc_of "$1")" = 0 ] && [ "$(json_get "$j" tx_verify)" = ok ] &&
		[ "$(json_get "$j" vm)" = none ] && [ "$(json_get "$j" net_model)" = threaded ] &&
		[ "$(json_get "$j" tx_frames)" = "$(json_get "$j" guest_tx_frames)" ] &&
		[ "$(json_get "$j" tx_frames)" -gt 0 ] && [ "$(json_get "$j" run_end)" = guest-exit ]
}

# start_receiver BYTES [SECONDS] : `lguest-kvm receive` in the background on
# a free loopback port, verifying BYTES, giving up after SECONDS (default
# 30, scaled) without data; sets RX_PID and RX_PORT (empty if it did not
# come up).  Its output goes to $TMP/rx.{out,err}, its status to $TMP/rx.rc.
start_receiver() {
	local limit=${2:-30}
	rm -f "$TMP/rx.ready"
	( timeout -s KILL "$(scaled $((limit * 4)))" "$LKVM" receive --listen 127.0.0.1:0 --bytes "$1" \
		--ready "$TMP/rx.ready" --timeout "$(scaled "$limit")" </dev/null >"$TMP/rx.out" 2>"$TMP/rx.err"
	  echo $? >"$TMP/rx.rc" ) &
	RX_PID=$!
	for _ in $(seq "$(scaled 200)"); do [ -s "$TMP/rx.ready" ] && break; sleep 0.05; done
	RX_PORT=$(cut -d: -f2 "$TMP/rx.ready" 2>/dev/null)
}

# trace_json FILE EXPR : evaluate the Python expression EXPR over `lguest-kvm
# trace FILE --json` (as j) and print it
trace_json() {
	"$LKVM" trace "$1" --json 2>/dev/null |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(eval(sys.argv[1]))' "$2"
}
# trace_agrees FILE : the timeline's counts equal the run's stats (nothing
# lost, every check a match) and the two clocks were put on one
trace_agrees() {
	[ "$(trace_json "$1" 'j["checks"]["meaningful"] and all(c["match"] for k, c in j["checks"].items()
		if isinstance(c, dict)) and j["clock"] in ("shared", "corrected") and j["guest_events"] > 0')" = True ]
}

finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
