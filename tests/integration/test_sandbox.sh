# test_sandbox.sh -- the launcher as a security boundary (launcher/sandbox.c):
# a run started as root is, while its guest runs, an unprivileged user with
# no capabilities, no_new_privs, a seccomp filter, no /dev/kvm descriptor
# and a small open-file limit; a forbidden system call kills it; the
# debugging flags --stay-root and --no-seccomp do what they say.
. "$(dirname "$0")/lib.sh"
need_kvm

# status_of PID FIELD : one field of /proc/PID/status ("Uid" -> "65534 65534 ...")
status_of() { sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"; }

# A guest that spins until SIGTERM, so the live process can be inspected
# once it is locked down: its open-file limit lowered and, unless
# --no-seccomp, its filter in place (both happen before the guest runs).
start_hang() {
	local want_seccomp=2
	case " $* " in *" --no-seccomp "*) want_seccomp=0 ;; esac
	"$LKVM" run --quiet --fault hang --max-seconds "$(scaled 60)" "$@" </dev/null >/dev/null 2>"$TMP/hang.err" &
	HANG=$!
	for _ in $(seq $(scaled 100)); do
		[ "$(awk '/^Max open files/ {print $4}' "/proc/$HANG/limits" 2>/dev/null)" -lt 1024 ] 2>/dev/null &&
			[ "$(status_of $HANG Seccomp)" = $want_seccomp ] && break
		sleep 0.2
	done
}
stop_hang() { kill -TERM "$HANG"; wait "$HANG"; HANG_RC=$?; }

if [ "$(id -u)" = 0 ]; then
	NOBODY_UID=$(id -u nobody)
	NOBODY_GID=$(getent passwd nobody | cut -d: -f4)
	start_hang --stats-json "$TMP/hang.json"
	check "root run: uid is nobody's while the guest runs" \
		[ "$(status_of $HANG Uid)" = "$(printf '%s\t%s\t%s\t%s' $NOBODY_UID $NOBODY_UID $NOBODY_UID $NOBODY_UID)" ]
	check "root run: gid is nobody's group, no supplementary groups" \
		sh -c "[ \"\$(sed -n 's/^Gid:[[:space:]]*//p' /proc/$HANG/status | awk '{print \$1}')\" = $NOBODY_GID ] &&
		       [ -z \"\$(sed -n 's/^Groups:[[:space:]]*//p' /proc/$HANG/status)\" ]"
	check "root run: Seccomp 2 (filter)" [ "$(status_of $HANG Seccomp)" = 2 ]
	check "root run: NoNewPrivs 1" [ "$(status_of $HANG NoNewPrivs)" = 1 ]
	check "root run: CapEff, CapPrm and CapBnd 0" \
		[ "$(status_of $HANG CapEff)$(status_of $HANG CapPrm)$(status_of $HANG CapBnd)" = 000000000000000000000000000000000000000000000000 ]
	check "no descriptor for /dev/kvm itself, only the VM and the vCPU" \
		sh -c "! ls -l /proc/$HANG/fd | grep -q '/dev/kvm' && ls -l /proc/$HANG/fd | grep -q 'kvm-vm' &&
		       ls -l /proc/$HANG/fd | grep -q 'kvm-vcpu'"
	check "every thread is filtered" sh -c "for t in /proc/$HANG/task/*; do grep -q '^Seccomp:[[:space:]]*2' \$t/status || exit 1; done"
	stop_hang
	check "SIGTERM still ends the run with stats (143)" [ $HANG_RC = 143 ]
	check "stats: launcher_uid is nobody" [ "$(json_get "$TMP/hang.json" launcher_uid)" = $NOBODY_UID ]
	check "stats: launcher_gid is nogroup" [ "$(json_get "$TMP/hang.json" launcher_gid)" = $NOBODY_GID ]
	check "stats: launcher_seccomp kill" [ "$(json_get "$TMP/hang.json" launcher_seccomp)" = kill ]
	check "stats: open-file limit below 100" [ "$(json_get "$TMP/hang.json" launcher_open_files_limit)" -lt 100 ]

	start_hang --stay-root --no-seccomp --stats-json "$TMP/root.json"
	check "--stay-root: uid stays 0" [ "$(status_of $HANG Uid | awk '{print $1}')" = 0 ]
	check "--stay-root: capabilities still dropped" [ "$(status_of $HANG CapEff)" = 0000000000000000 ]
	check "--no-seccomp: Seccomp 0" [ "$(status_of $HANG Seccomp)" = 0 ]
	stop_hang
	check "stats: --stay-root, launcher_uid 0" [ "$(json_get "$TMP/root.json" launcher_uid)" = 0 ]
	check "stats: --no-seccomp, launcher_seccomp off" [ "$(json_get "$TMP/root.json" launcher_seccomp)" = off ]

	run_lkvm user run --workload boot --user nobody --stats-json "$TMP/user.json"
	check "--user nobody: boots (exit 0) as nobody" \
		sh -c "[ $(rc_of user) = 0 ] && [ $(json_get "$TMP/user.json" launcher_uid) = $NOBODY_UID ]"
	run_lkvm rootuser run --workload boot --user root
	check "--user root is refused with one line" \
		sh -c "[ $(rc_of rootuser) = 1 ] && grep -q 'that is uid 0' $TMP/rootuser.err"
fi

run_lkvm both run --workload boot --stay-root --user nobody
check "--stay-root with --user is a usage error" [ "$(rc_of both)" = 2 ]

# A forbidden call once locked down: the whole process dies by SIGSYS,
# before the guest ever runs.
# Not under timeout(1): it would re-raise the SIGSYS on itself.
"$LKVM" run --workload boot --fault seccomp-probe </dev/null >"$TMP/probe.out" 2>"$TMP/probe.err"
echo $? >"$TMP/probe.rc"
check "seccomp probe: killed by SIGSYS ($(rc_of probe) = 128+31)" [ "$(rc_of probe)" = 159 ]
check "seccomp probe: the guest never ran" sh -c "! grep -q . $TMP/probe.out"
run_lkvm noprobe run --workload boot --fault seccomp-probe --no-seccomp
check "--no-seccomp: the probe's open succeeds and says so (exit 1)" \
	sh -c "[ $(rc_of noprobe) = 1 ] && grep -q 'openat() was allowed after setup' $TMP/noprobe.err"

# The filter around every model with the default sink, and a crash report
# (KVM_GET_REGS) and the echo workload's console input.
for model in threaded lguest; do
	run_lkvm raw-$model run --quiet --bytes 8M --model $model --stats-json "$TMP/raw-$model.json"
	check "$model: 8M over the sink with the filter on" \
		sh -c "[ $(rc_of raw-$model) = 0 ] && [ $(json_get "$TMP/raw-$model.json" launcher_seccomp) = kill ]"
done
# With --wait halt the threaded model's device thread raises the net
# interrupt line itself (KVM_IRQ_LINE, not an irqfd): that call under the
# filter, from a thread other than the vCPU's.
run_lkvm halt-threaded run --quiet --bytes 8M --model threaded --wait halt --stats-json "$TMP/halt-threaded.json"
check "threaded --wait halt: the device thread's KVM_IRQ_LINE passes the filter" \
	sh -c "[ $(rc_of halt-threaded) = 0 ] && [ $(json_get "$TMP/halt-threaded.json" interrupts_injected) -gt 0 ]"
run_lkvm crash run --quiet --fault exception
check "a guest crash is still reported (125)" \
	sh -c "[ $(rc_of crash) = 125 ] && grep -q 'guest crashed: exception' $TMP/crash.err"
printf 'under the filter\nquit\n' | timeout -s KILL "$(scaled 60)" "$LKVM" run --workload echo \
	>"$TMP/echo.out" 2>"$TMP/echo.err"
echo_rc=$?
check "echo workload through the filter" \
	sh -c "[ $echo_rc = 0 ] && grep -q '^echo: under the filter' $TMP/echo.out"
finish
