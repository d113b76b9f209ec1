# test_hostile.sh -- a hostile guest ring must not crash or hang the launcher:
# each crafted chain gives DEVICE_NEEDS_RESET, one clear error line, exit 126,
# and the stats block.
. "$(dirname "$0")/lib.sh"
need_kvm

for model in threaded lguest; do
	for kind in head:"head index" next:"next index" addr:"outside guest RAM" wrap:"outside guest RAM" \
		    loop:"loops" avail:"more than a ring ahead" \
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
finish
