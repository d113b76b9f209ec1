# test_hostile.sh -- a hostile guest ring must not crash or hang the launcher:
# each crafted chain gives DEVICE_NEEDS_RESET, one clear error line, exit 126,
# and the stats block.  A guest that asks for all the work the caps allow,
# for ever, must still be stopped within a second by SIGTERM or
# --max-seconds, with the stats printed.
. "$(dirname "$0")/lib.sh"
need_kvm

for model in threaded lguest; do
	for kind in head:"head index" next:"next index" addr:"outside guest RAM" wrap:"outside guest RAM" \
		    loop:"loops" avail:"more than a ring ahead" huge:"chain longer than 65547 bytes" \
		    indirect-nested:"nested indirect" indirect-len:"multiple of 16" \
		    indirect-addr:"outside guest RAM" indirect-loop:"loops" indirect-next:"INDIRECT together with NEXT"; do
		mode=${kind%%:*}
		want=${kind#*:}
		run_lkvm h run --model $model --fault hostile-$mode --indirect always --stats-json "$TMP/h.json"
		check "$model hostile-$mode: exit 126" [ "$(rc_of h)" = 126 ]
		check "$model hostile-$mode: error names it ('$want')" \
			grep -q "^lguest-kvm: virtio-net: net transmit queue: .*$want.* -- device needs reset" "$TMP/h.err"
		check "$model hostile-$mode: guest saw NEEDS_RESET" grep -q "refused the hostile ring" "$TMP/h.out"
		check "$model hostile-$mode: counted" [ "$(json_get "$TMP/h.json" device_errors)" = 1 ]
	done
done

# hostile-flood: every slot of a 1024-slot ring holds a 64 KiB chain (within
# the cap), and every chain the host returns is posted again at once, so the
# ring is never empty.  The host drains it in budget-sized rounds; between
# rounds the device thread (threaded) or the vCPU thread (lguest) looks at
# the stop request.  "Within 1 s" is a time limit, so it is scaled under
# emulation like every other one (lib.sh).
ms_now() { date +%s%3N; }
limit_ms=$(( $(scaled 1) * 1000 ))
for model in threaded lguest; do
	"$LKVM" run --model $model --fault hostile-flood --ring 1024 --stats-json "$TMP/f.json" \
		</dev/null >"$TMP/f.out" 2>"$TMP/f.err" &
	pid=$!
	for _ in $(seq $(scaled 100)); do grep -q "refilled for ever" "$TMP/f.out" && break; sleep 0.1; done
	sleep 1                         # let the flood run
	t0=$(ms_now)
	kill -TERM $pid
	# Bounded wait: a launcher that ignored the signal is killed after 2 s (scaled).
	for _ in $(seq $(scaled 100)); do kill -0 $pid 2>/dev/null || break; sleep 0.02; done
	took=$(( $(ms_now) - t0 ))
	kill -KILL $pid 2>/dev/null
	wait $pid
	rc=$?
	check "$model hostile-flood: the guest was flooding" grep -q "refilled for ever" "$TMP/f.out"
	check "$model hostile-flood: SIGTERM -> exit 143" [ $rc = 143 ]
	check "$model hostile-flood: ended ${took} ms after SIGTERM (limit $limit_ms ms)" [ $took -le $limit_ms ]
	check "$model hostile-flood: stats printed" grep -Eq "^run_end +signal$" "$TMP/f.err"
	check "$model hostile-flood: drained in budget-sized rounds" \
		[ "$(json_get "$TMP/f.json" tx_budget_continuations)" -gt 0 ]
	check "$model hostile-flood: within the caps, no ring broken" [ "$(json_get "$TMP/f.json" device_errors)" = 0 ]

	run_lkvm lim run --model $model --fault hostile-flood --ring 1024 --quiet --max-seconds 1 \
		--stats-json "$TMP/l.json"
	check "$model hostile-flood: --max-seconds 1 -> exit 124" [ "$(rc_of lim)" = 124 ]
	check "$model hostile-flood: --max-seconds stats printed" grep -Eq "^run_end +time-limit$" "$TMP/lim.err"
	check "$model hostile-flood: run ended within 1 s of the limit (run_seconds $(json_get "$TMP/l.json" run_seconds))" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["run_seconds"] > 1 + float(sys.argv[2]))' \
		"$TMP/l.json" "$(scaled 1)"
done
finish
