# test_vm_runner.sh -- tests/vm/lkvm-vm itself, the route every KVM test
# takes on a machine without /dev/kvm: it must hand back the command's
# status and its two output streams, give it a real /dev/kvm, keep the host's
# files read-only but for --rw, and leave nothing behind -- no QEMU, no job
# folder -- on a time limit or a signal.  It runs on the host, never in the VM.
. "$(dirname "$0")/lib.sh"
if ! why=$("$VM_RUNNER" --check); then
	if [ -e /dev/kvm ]; then
		echo "SKIP: the VM route is only installed where /dev/kvm is missing, and here: $why"
	else
		echo "SKIP: $why"
	fi
	exit 77
fi
# The runner's job folders go to a TMPDIR of this test's own, so that
# "nothing left behind" cannot be confused by other VMs on the machine.
export TMPDIR=$TMP/jobs
mkdir -p "$TMPDIR"
VM() { "$VM_RUNNER" "$@"; }

# 1. One boot: status, both streams, arguments, environment, /dev/kvm, cwd.
mkdir -p "$TMP/rw"
VM -C / --env LKVM_TEST_WORD="two words" --rw "$TMP/rw" -- bash -c '
	printf "%s|" "$@"; echo
	echo "to stderr" >&2
	echo "in=$LKVM_IN_VM scale=$LKVM_TIME_SCALE word=$LKVM_TEST_WORD pwd=$PWD"
	[ -c /dev/kvm ] && echo "kvm: yes"
	grep -qw svm /proc/cpuinfo && echo "svm: yes"
	touch /usr/lkvm-vm-probe 2>/dev/null || echo "host root: read-only"
	echo written >"$0/from-vm"
	exit 7' "$TMP/rw" "a b" "c'd" '$HOME' >"$TMP/one.out" 2>"$TMP/one.err"
rc=$?
check "the command's status comes back (7, got $rc)" [ $rc = 7 ]
check "arguments arrive unsplit and unexpanded" grep -qxF "a b|c'd|\$HOME|" "$TMP/one.out"
check "stderr arrives on stderr only" sh -c "grep -qx 'to stderr' $TMP/one.err && ! grep -q 'to stderr' $TMP/one.out"
check "LKVM_IN_VM, LKVM_TIME_SCALE and --env set inside, -C honoured" \
	grep -qx "in=1 scale=10 word=two words pwd=/" "$TMP/one.out"
check "a real /dev/kvm inside" grep -qx "kvm: yes" "$TMP/one.out"
check "the VM's CPU has svm" grep -qx "svm: yes" "$TMP/one.out"
check "the host's root is read-only inside" grep -qx "host root: read-only" "$TMP/one.out"
check "and no file appeared on the host" [ ! -e /usr/lkvm-vm-probe ]
check "--rw DIR is writable, and the write reaches the host" grep -qx written "$TMP/rw/from-vm"

# 2. Usage errors: exit 2, one line, no VM.
for args in "" "--bogus true" "--timeout 0 true" "--rw /no/such/dir true"; do
	# shellcheck disable=SC2086
	VM $args </dev/null >/dev/null 2>"$TMP/usage.err"
	rc=$?
	check "'lkvm-vm $args' is a usage error (exit 2, got $rc)" [ $rc = 2 ]
	check "'lkvm-vm $args' says one line" [ "$(wc -l <"$TMP/usage.err")" = 1 ]
done

# 3. The time limit: exit 124 and a line saying so, well before the command ends.
start=$(date +%s)
VM --timeout 5 -- sleep 300 >/dev/null 2>"$TMP/limit.err"
rc=$?
took=$(($(date +%s) - start))
check "--timeout 5: exit 124 (got $rc)" [ $rc = 124 ]
check "--timeout 5: one line naming the limit" grep -q "past --timeout 5 s" "$TMP/limit.err"
check "--timeout 5: over within 60 s (took $took s)" [ $took -lt 60 ]

# 4. SIGTERM and SIGINT: 128+N, and QEMU gone with the runner.
# below PID : the processes below PID, as a comma list for ps -p
descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }
below() { descendants "$1" | paste -sd, -; }
for sig in TERM INT; do
	# A script's background jobs ignore SIGINT, and an ignored signal cannot
	# be trapped: give the runner the default, as a terminal's Ctrl-C would.
	env --default-signal=INT "$VM_RUNNER" -- sleep 300 >/dev/null 2>"$TMP/sig.err" &
	pid=$!
	for _ in $(seq $(scaled 50)); do ps -o comm= -p "$(below $pid)" 2>/dev/null | grep -q qemu && break; sleep 0.2; done
	procs=$(below $pid)
	check "SIG$sig: the runner has QEMU below it" sh -c "ps -o comm= -p '$procs' | grep -q qemu"
	kill -s $sig $pid
	wait $pid
	rc=$?
	want=$((128 + $(kill -l $sig)))
	check "SIG$sig: exit $want (got $rc)" [ $rc = $want ]
	left=""   # from /proc itself: a missing ps must not make this pass
	for p in ${procs//,/ }; do [ -e "/proc/$p" ] && left+="$p ($(cat "/proc/$p/comm" 2>/dev/null)) "; done
	check "SIG$sig: nothing the runner started is left (${left:-none})" [ -z "$left" ]
done
check "no job folder left behind ($(ls "$TMPDIR" | tr '\n' ' '))" [ -z "$(ls -A "$TMPDIR")" ]
finish
