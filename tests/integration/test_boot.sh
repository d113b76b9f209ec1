# test_boot.sh -- boot the guest stub: banner, exit status passed through,
# stats block on stderr and in JSON, capabilities dropped, uid 0 left, filtered.
. "$(dirname "$0")/lib.sh"
need_kvm

run_lkvm boot run --workload boot --stats-json "$TMP/boot.json"
check "boot exits 0" [ "$(rc_of boot)" = 0 ]
check "banner on stdout" grep -q "^lguest-kvm guest stub .*running at CPL3" "$TMP/boot.out"
check "guest prints its parameters" grep -q "^command line: .*virtio_mmio.device=4K@0xd0000000:5" "$TMP/boot.out"
check "stats: seed's notify line" grep -q "^Number of net notifies: 0$" "$TMP/boot.err"
check "stats: seed's timeout line" grep -q "^Number of timeouts: 0$" "$TMP/boot.err"
check "stats: run ended by the guest" grep -Eq "^run_end +guest-exit$" "$TMP/boot.err"
check "stats: console bytes counted" grep -Eq "^console_bytes_out +[1-9][0-9]*$" "$TMP/boot.err"
check "stats JSON parses and agrees" [ "$(json_get "$TMP/boot.json" run_end)" = guest-exit ]
check "JSON console bytes match the text" \
	grep -Eq "^console_bytes_out +$(json_get "$TMP/boot.json" console_bytes_out)$" "$TMP/boot.err"
check "guest report received" [ "$(json_get "$TMP/boot.json" guest_report)" = 1 ]
check "capabilities dropped (CapEff 0)" [ "$(json_get "$TMP/boot.json" launcher_cap_effective)" = 0000000000000000 ]
check "seccomp filter installed" [ "$(json_get "$TMP/boot.json" launcher_seccomp)" = kill ]
check "never uid 0 after setup (test_sandbox.sh looks closer)" [ "$(json_get "$TMP/boot.json" launcher_uid)" != 0 ]
check "every text stats line is a JSON key" python3 - "$TMP/boot.err" "$TMP/boot.json" <<'PY'
import json, re, sys
keys = set(json.load(open(sys.argv[2])))
lines = [l.split()[0] for l in open(sys.argv[1]) if re.match(r"^[a-z_0-9]+ +\S", l)]
sys.exit(0 if lines and all(k in keys for k in lines) else 1)
PY

"$LKVM" run --workload boot 2>"$TMP/pipe.err" </dev/null | head -1 >/dev/null
check "stdout closed early (run | head -1): still exits 0" [ "${PIPESTATUS[0]}" = 0 ]
check "stdout closed early: stats still printed" grep -q "^Number of timeouts:" "$TMP/pipe.err"

if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ] && [ "$(stat -c %a /dev/kvm)" = 600 ]; then
	# A user without access to /dev/kvm, running copies it can reach.
	PUB=$(mktemp -d)
	chmod 755 "$PUB"
	cp "$LKVM" "$PUB/lguest-kvm"
	cp "$(dirname "$LKVM")/guest-stub/lguest-stub.elf" "$PUB/stub.elf"
	chmod 755 "$PUB/lguest-kvm"
	chmod 644 "$PUB/stub.elf"
	LGUEST_KVM_GUEST="$PUB/stub.elf" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$PUB/lguest-kvm" run --workload boot </dev/null >/dev/null 2>"$TMP/perm.err"
	check "no access to /dev/kvm: exit 1" [ $? = 1 ]
	rm -rf "$PUB"
	check "no access to /dev/kvm: one line saying what to do" \
		sh -c "[ \$(wc -l <$TMP/perm.err) = 1 ] && grep -q '/dev/kvm: permission denied -- run as root or join group kvm' $TMP/perm.err"
fi

for status in 7 42; do
	run_lkvm st run --workload boot --boot-status $status --quiet
	check "guest status $status passed through" [ "$(rc_of st)" = $status ]
done

printf 'hello from the host\nquit\n' | timeout -s KILL "$(scaled 60)" "$LKVM" run --workload echo \
	>"$TMP/echo.out" 2>"$TMP/echo.err"
check "echo workload exits 0" [ $? = 0 ]
check "console input reaches the guest and comes back" grep -q "^echo: hello from the host" "$TMP/echo.out"
check "echo: the guest slept in hlt and took interrupts" \
	sh -c "grep -Eq '^guest_irqs +[1-9]' $TMP/echo.err"
finish
