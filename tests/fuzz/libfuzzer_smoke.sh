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

for target in virtqueue vring-packed devices elf; do
	corpus=$WORK/corpus-$target
	mkdir -p "$corpus"
	[ -d "$SRC/tests/fuzz/corpus/$target" ] && cp "$SRC/tests/fuzz/corpus/$target/"* "$corpus/"
	"$WORK/build/tests/fuzz/fuzz-$target" -max_total_time="$SECONDS_EACH" -timeout=10 -print_final_stats=1 \
		"$corpus" >"$WORK/$target.log" 2>&1
	rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$WORK/$target.log" | grep -o '[0-9]*$')
	if [ $rc = 0 ] && [ "${runs:-0}" -gt 0 ]; then
		ok "fuzz-$target: ${SECONDS_EACH} s, ${runs} executions, nothing found"
	else
		tail -30 "$WORK/$target.log"
		bad "fuzz-$target: exit $rc after ${runs:-0} executions"
	fi
done
# The command-line fuzzers (fuzz_cmdline.c): 3 s each from their corpus.
# Clang's UBSan sees what gcc's smoke build may not (pointer overflow);
# bench/fuzz-cmdline runs the long campaign.
for cmd in run table receive send trace; do
	corpus=$WORK/corpus-cmd-$cmd
	mkdir -p "$corpus"
	cp "$SRC/tests/fuzz/corpus/cmd-$cmd/"* "$corpus/"
	"$WORK/build/tests/fuzz/fuzz-cmd-$cmd" -max_total_time=3 -timeout=10 -print_final_stats=1 "$corpus" \
		>"$WORK/cmd-$cmd.log" 2>&1
	rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$WORK/cmd-$cmd.log" | grep -o '[0-9]*$')
	if [ $rc = 0 ] && [ "${runs:-0}" -gt 0 ]; then
		ok "fuzz-cmd-$cmd: 3 s, ${runs} executions, nothing found"
	else
		tail -30 "$WORK/cmd-$cmd.log"
		bad "fuzz-cmd-$cmd: exit $rc after ${runs:-0} executions"
	fi
done
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
