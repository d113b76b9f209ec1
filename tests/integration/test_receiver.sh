# test_receiver.sh -- `receive` and `send` over real TCP on 127.0.0.1, no
# guest and no KVM: a clean 64 MiB stream is verified; a flipped byte, a
# reset in either direction and a silent peer each end with the right exit
# code and one line saying what happened; bad options are usage errors.
#
# Each receiver listens on port 0 (a free port the kernel picks) and writes
# the address it got to its --ready file, which the sender then reads.
. "$(dirname "$0")/lib.sh"

# start_receiver NAME ARGS... : receive in the background until it is
# listening; its pid is in RX_PID, its address in RX_ADDR.
start_receiver() {
	local name=$1; shift
	rm -f "$TMP/$name.ready"
	( timeout -s KILL "$(scaled 60)" "$LKVM" receive --listen 127.0.0.1:0 --ready "$TMP/$name.ready" "$@" \
		</dev/null >"$TMP/$name.out" 2>"$TMP/$name.err"; echo $? >"$TMP/$name.rc" ) &
	RX_PID=$!
	for _ in $(seq $(scaled 100)); do [ -s "$TMP/$name.ready" ] && break; sleep 0.05; done
	RX_ADDR=$(cat "$TMP/$name.ready" 2>/dev/null)
}
one_line() { [ "$(wc -l <"$TMP/$1.err")" = 1 ]; }

# 1. A clean 64 MiB stream, verified, with the JSON report.
start_receiver rx --bytes 64M --json "$TMP/rx.json"
check "the receiver wrote its address to --ready ($RX_ADDR)" grep -Eq '^127\.0\.0\.1:[0-9]+$' "$TMP/rx.ready"
run_lkvm tx send --connect "$RX_ADDR" --bytes 64M
wait $RX_PID
check "64M: send exits 0 ($(out_of tx))" [ "$(rc_of tx)" = 0 ]
check "64M: receive exits 0 ($(out_of rx))" [ "$(rc_of rx)" = 0 ]
check "64M: receive says all 67108864 bytes were verified" \
	grep -Eq '^receive: 67108864 bytes verified in [0-9.]+ s \([0-9.]+ Gbit/s\) from 127\.0\.0\.1:[0-9]+$' "$TMP/rx.out"
check "64M: JSON says verified, no bad offset" \
	sh -c "[ $(json_get "$TMP/rx.json" verified) = True ] && [ $(json_get "$TMP/rx.json" first_bad_offset) = None ]"
check "64M: JSON counts 67108864 bytes" [ "$(json_get "$TMP/rx.json" bytes)" = 67108864 ]

# 2. One flipped byte, at an offset that is not a multiple of 8.
start_receiver bad --bytes 64M --json "$TMP/bad.json"
run_lkvm badtx send --connect "$RX_ADDR" --bytes 64M --corrupt-at 12345677
wait $RX_PID
check "corrupt: receive exits 3" [ "$(rc_of bad)" = 3 ]
check "corrupt: the message names offset 12345677 ($(err_of bad))" grep -q "mismatch at stream offset 12345677: expected 0x" "$TMP/bad.err"
check "corrupt: receive gives one line" one_line bad
check "corrupt: JSON has first_bad_offset 12345677" [ "$(json_get "$TMP/bad.json" first_bad_offset)" = 12345677 ]
check "corrupt: send fails (exit 1), the receiver hung up on it" [ "$(rc_of badtx)" = 1 ]

# 3. The receiver resets the connection part way (--close-after).
start_receiver ca --bytes 64M --close-after 1M
run_lkvm catx send --connect "$RX_ADDR" --bytes 64M
wait $RX_PID
check "close-after: receive exits 0 ($(out_of ca))" [ "$(rc_of ca)" = 0 ]
check "close-after: receive says it reset after 1048576 bytes" grep -q "reset the connection after 1048576 bytes" "$TMP/ca.out"
check "close-after: send exits 1" [ "$(rc_of catx)" = 1 ]
check "close-after: send says the receiver reset it ($(err_of catx))" grep -q "connection reset by the receiver after [0-9]* bytes" "$TMP/catx.err"
check "close-after: send gives one line" one_line catx

# 4. The sender resets the connection part way: receive reports the reset.
start_receiver rst --bytes 64M
python3 - "$RX_ADDR" <<'EOF'
import socket, struct, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
time.sleep(0.2)   # let the receiver accept first; send nothing, then RST
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
EOF
wait $RX_PID
check "peer reset: receive exits 1" [ "$(rc_of rst)" = 1 ]
check "peer reset: 'connection reset by peer after 0 bytes' ($(err_of rst))" grep -q "connection reset by peer after 0 bytes" "$TMP/rst.err"

# 5. A short stream and an overlong one are failures, not successes, at
# both ends: the receiver resets a stream it rejects.
start_receiver short --bytes 2M
run_lkvm shorttx send --connect "$RX_ADDR" --bytes 1M
wait $RX_PID
check "short stream: receive exits 1 ($(err_of short))" sh -c "[ $(rc_of short) = 1 ] && grep -q 'ended after 1048576 of 2097152 bytes' $TMP/short.err"
check "short stream: send exits 1, the stream was rejected ($(err_of shorttx))" \
	sh -c "[ $(rc_of shorttx) = 1 ] && grep -q 'rejected the stream' $TMP/shorttx.err"
start_receiver long --bytes 1M
run_lkvm longtx send --connect "$RX_ADDR" --bytes 3M
wait $RX_PID
check "overlong stream: receive exits 1 ($(err_of long))" sh -c "[ $(rc_of long) = 1 ] && grep -q 'went on past --bytes 1048576' $TMP/long.err"

# 6. Nobody connects: --timeout 1 gives up after about a second.
start=$(date +%s)
start_receiver idle --bytes 1M --timeout 1
wait $RX_PID
check "timeout: receive exits 1" [ "$(rc_of idle)" = 1 ]
check "timeout: one line naming the wait ($(err_of idle))" sh -c "grep -q 'no connection to 127.0.0.1:[0-9]* within 1 s' $TMP/idle.err && [ \$(wc -l <$TMP/idle.err) = 1 ]"
check "timeout: it took under 5 s" [ $(( $(date +%s) - start )) -lt 5 ]

# 7. Nobody listening: send says so.
run_lkvm refused send --connect 127.0.0.1:1 --bytes 1M
check "refused: send exits 1 with one line ($(err_of refused))" sh -c "[ $(rc_of refused) = 1 ] && grep -q 'cannot connect to 127.0.0.1:1' $TMP/refused.err"

# 8. Usage errors: exit 2, one line.
for args in "receive" "receive --bytes 0" "receive --bytes 1M --listen localhost:5001" \
	    "receive --bytes 1M --listen 1.2.3.4:70000" "receive --bytes 1M --timeout 0" \
	    "receive --bytes 1M --timeout 1.5" "receive --bytes 1M --close-after 2M" "receive --bytes 1M stray" \
	    "receive --bogus" "send --bytes 1M" "send --connect 127.0.0.1:5001" \
	    "send --connect 127.0.0.1:0 --bytes 1M" "send --connect 127.0.0.1:5001 --bytes 1X" \
	    "send --connect 127.0.0.1:5001 --bytes 1M --corrupt-at 1M"; do
	# shellcheck disable=SC2086
	run_lkvm usage $args
	check "'$args' is a usage error (exit 2)" [ "$(rc_of usage)" = 2 ]
	check "'$args' gives exactly one line" one_line usage
done
run_lkvm rxhelp receive --help
check "receive --help exits 0 and lists --close-after" sh -c "[ $(rc_of rxhelp) = 0 ] && grep -q -- --close-after $TMP/rxhelp.out"
run_lkvm txhelp send --help
check "send --help exits 0 and lists --corrupt-at" sh -c "[ $(rc_of txhelp) = 0 ] && grep -q -- --corrupt-at $TMP/txhelp.out"
finish
