# lib.sh -- shared helpers for the integration tests, which boot real guests.
#
# Each test script is run by Meson as `bash TEST.sh LGUEST_KVM_BINARY`.  It
# counts its checks, prints "N passed, M failed" last, and exits 0 only if
# nothing failed.  Without /dev/kvm it exits 77 (Meson's SKIP) -- and only then.

set -u
LKVM=${1:?usage: $0 path/to/lguest-kvm}
PASS=0
FAIL=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

need_kvm() {
	if [ ! -e /dev/kvm ]; then
		echo "SKIP: /dev/kvm is missing"
		exit 77
	fi
}

ok()   { PASS=$((PASS + 1)); echo "ok   - $*"; }
bad()  { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

# run_lkvm NAME ARGS... : run with stdin from /dev/null, keep stdout/stderr/status
run_lkvm() {
	local name=$1; shift
	timeout -s KILL 120 "$LKVM" "$@" </dev/null >"$TMP/$name.out" 2>"$TMP/$name.err"
	echo $? >"$TMP/$name.rc"
}
rc_of()  { cat "$TMP/$1.rc"; }
err_of() { cat "$TMP/$1.err"; }
out_of() { cat "$TMP/$1.out"; }

# json_get FILE KEY : one value from a --stats-json file
json_get() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

finish() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
