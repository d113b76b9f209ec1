# test_faults.sh -- every way out prints the stats block: guest exceptions,
# a triple fault, SIGINT and SIGTERM mid-run, --max-seconds.
. "$(dirname "$0")/lib.sh"
need_kvm

run_lkvm exc run --fault exception --quiet
check "guest exception -> exit 125" [ "$(rc_of exc)" = 125 ]
check "exception named with vector and rip" grep -q "^lguest-kvm: guest crashed: exception 6 (#UD invalid opcode) at rip 0x" "$TMP/exc.err"
check "stats printed after a crash" grep -q "^Number of timeouts:" "$TMP/exc.err"

run_lkvm triple run --fault triple --quiet
check "triple fault -> exit 125" [ "$(rc_of triple)" = 125 ]
check "triple fault reported" grep -q "^lguest-kvm: guest crashed: triple fault" "$TMP/triple.err"
check "stats printed after a triple fault" grep -Eq "^run_end +guest-crash$" "$TMP/triple.err"

for sig in INT TERM; do
	"$LKVM" run --fault hang --quiet </dev/null >"$TMP/$sig.out" 2>"$TMP/$sig.err" &
	pid=$!
	sleep 1
	kill -$sig $pid
	# Bounded wait: a launcher that ignored the signal is killed after 20 s.
	for _ in $(seq $(scaled 100)); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
	kill -KILL $pid 2>/dev/null
	wait $pid
	rc=$?
	want=$((128 + $(kill -l $sig)))
	check "SIG$sig mid-run -> exit $want" [ $rc = $want ]
	check "SIG$sig mid-run still prints stats" grep -q "^Number of net notifies:" "$TMP/$sig.err"
done

run_lkvm limit run --fault hang --quiet --max-seconds 1
check "--max-seconds stops a hung guest (exit 124)" [ "$(rc_of limit)" = 124 ]
check "--max-seconds prints stats" grep -Eq "^run_end +time-limit$" "$TMP/limit.err"
finish
