# test_cli.sh -- the command line: help, version, usage errors (exit 2, one line).
. "$(dirname "$0")/lib.sh"

run_lkvm help --help
check "--help exits 0" [ "$(rc_of help)" = 0 ]
check "--help names both commands" grep -q "lguest-kvm table" "$TMP/help.out"
run_lkvm runhelp run --help
check "run --help exits 0 and lists --policy" sh -c "[ $(rc_of runhelp) = 0 ] && grep -q -- --policy $TMP/runhelp.out"
run_lkvm version --version
check "--version prints the version" grep -Eq "^lguest-kvm [0-9]+\.[0-9]+" "$TMP/version.out"

for args in "" "frobnicate" "run --bogus" "run --policy static:999" "run --policy nope" \
	    "run --ring 100" "run --bytes -5" "run --frame 10" "run --model fast" \
	    "run --wait sometimes" "run --timeout-us 0" "run --fault nothing" "run a.elf b.elf" \
	    "run --bytes 99999999999999999999" "run --bytes -1" "run --mem 0x10M" "run --ring 2 --segments 3" \
	    "table --plot t.pdf" "table --rows 10,200" "run --workload tcp --peer 1.2.3.4:0" \
	    "run --workload tcp --peer 1.2.3:5" "run --workload tcp --guest-ip 1.2.3.256" \
	    "run --workload tcp --net tap:x --host-ip 10.0.0.1/33" "run --workload tcp --net user --tso" \
	    "run --net user" "run --workload tcp --frame 9000" "table --workload tcp --net tap:x" \
	    "run --host-poll-us 1001" "run --host-poll-us -1" "run --host-poll-us 5us" "run --host-poll-us" \
	    "run --host-poll-us Adaptive" "run --model lguest --host-poll-us 20" \
	    "run --coalesce 50" "run --coalesce 50:" "run --coalesce :8" "run --coalesce 1000001:1" \
	    "run --coalesce 5:8K" "run --coalesce -1:8" "run --model lguest --coalesce 5:8"; do
	# shellcheck disable=SC2086
	run_lkvm usage $args
	check "'$args' is a usage error (exit 2)" [ "$(rc_of usage)" = 2 ]
	check "'$args' gives exactly one line" [ "$(wc -l <"$TMP/usage.err")" = 1 ]
done

# Without KVM, run and table stop before any work with one line naming the
# emulator VM route.  Where /dev/kvm exists, a private mount namespace with
# an empty /dev hides it (root only).
if [ ! -e /dev/kvm ]; then
	nokvm=()
elif [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	nokvm=(unshare --mount sh -c 'mount -t tmpfs none /dev && exec "$@"' sh)
else
	nokvm=(skip)
fi
if [ "${nokvm[0]:-}" = skip ]; then
	echo "note: /dev/kvm exists and cannot be hidden without root: the no-KVM checks did not run"
else
	for cmd in "table --preset none --bytes 1M --plot $TMP/p.svg --csv $TMP/p.csv" "run --bytes 1M"; do
		start=$(date +%s%N)
		# shellcheck disable=SC2086
		"${nokvm[@]}" "$LKVM" $cmd </dev/null >"$TMP/nokvm.out" 2>"$TMP/nokvm.err"
		rc=$?
		ms=$(( ($(date +%s%N) - start) / 1000000 ))
		check "no KVM: '$cmd' exits 1" [ $rc = 1 ]
		check "no KVM: '$cmd' says one line ($(head -c 160 "$TMP/nokvm.err"))" [ "$(wc -l <"$TMP/nokvm.err")" = 1 ]
		check "no KVM: the line names /dev/kvm and the emulator VM route" \
			grep -q "/dev/kvm.*tests/vm/lkvm-vm" "$TMP/nokvm.err"
		check "no KVM: '$cmd' ends within a second (${ms} ms)" [ "$ms" -lt 1000 ]
	done
	check "no KVM: table wrote no plot and no CSV" sh -c "[ ! -e $TMP/p.svg ] && [ ! -e $TMP/p.csv ]"
fi
finish
