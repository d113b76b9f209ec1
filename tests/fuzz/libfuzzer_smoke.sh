# libfuzzer_smoke.sh -- the four libFuzzer targets, for real, for a few
# seconds each, and the five command-line fuzzers for 3 s each: a clang
# build of its own (-Dfuzz=true, ASan+UBSan) in a temporary folder, each
# target started from its seed corpus.  It proves the
# fuzzers build and run, and that a short run finds nothing; the long runs
# and their numbers are in docs/security.md.  Skips (77) without clang.
#
#   bash libfuzzer_smoke.sh SOURCE_DIR [SECONDS_PER_TARGET]
set -u
SRC=${1:?usage: $0 SOURCE_DIR [SECONDS]}
SECONDS_EACH=${2:-15}
if ! command -v clang >/dev/null; then
	echo "SKIP: clang is not installed (apt-get install clang; ./quickstart.sh installs it)"
	exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PASS=0
FAIL=0
ok()  { PASS=$((PASS + 1)); echo "ok   - $*"; }
bad() { FAIL=$((FAIL + 1)); echo "FAIL - $*"; }

# Only the fuzz binaries: the guest stub is built with gcc's flags.
if ! CC=clang meson setup "$WORK/build" "$SRC" -Dfuzz=true >"$WORK/setup.log" 2>&1 ||
   ! ninja -C "$WORK/build" tests/fuzz/fuzz-virtqueue tests/fuzz/fuzz-vring-packed tests/fuzz/fuzz-devices \
	tests/fuzz/fuzz-elf tests/fuzz/fuzz-cmd-run tests/fuzz/fuzz-cmd-table tests/fuzz/fuzz-cmd-receive \
	tests/fuzz/fuzz-cmd-send tests/fuzz/fuzz-cmd-trace \
	>"$WORK/build.log" 2>&1; then
	tail -20 "$WORK/setup.log" "$WORK/build.log"
	bad "the clang build of the libFuzzer targets"
	echo "$PASS passed, $FAIL failed"
	exit 1
fi
ok "the clang build of the libFuzzer targets"

# One fuzzer from its committed corpus (a copy: libFuzzer adds to it) for
# SECONDS: it must run and find nothing.
run_fuzzer() {   # NAME CORPUS-DIR SECONDS
	local name=$1 corpus=$WORK/corpus-$1 runs rc
	mkdir -p "$corpus"
	[ -d "$2" ] && cp "$2/"* "$corpus/"
	"$WORK/build/tests/fuzz/fuzz-$name" -max_total_time="$3" -timeout=10 -print_final_stats=1 \
		"$corpus" >"$WORK/$name.log" 2>&1
	rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$WORK/$name.log" | grep -o '[0-9]*$')
	if [ $rc = 0 ] && [ "${runs:-0}" -gt 0 ]; then
		ok "fuzz-$name: $3 s, ${runs} executions, nothing found"
	else
		tail -30 "$WORK/$name.log"
		bad "fuzz-$name: exit $rc after ${runs:-0} executions"
	fi
}
for target in virtqueue vring-packed devices elf; do
	run_fuzzer "$target" "$SRC/tests/fuzz/corpus/$target" "$SECONDS_EACH"
done
# The command-line fuzzers (fuzz_cmdline.c): 3 s each from their corpus.
# Clang's UBSan sees what gcc's smoke build may not (pointer overflow);
# bench/fuzz-cmdline runs the long campaign.
for cmd in run table receive send trace; do
	run_fuzzer "cmd-$cmd" "$SRC/tests/fuzz/corpus/cmd-$cmd" 3
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
