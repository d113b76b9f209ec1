# test_tcp.sh -- the tcp workload for real: the guest's own TCP sender
# streams to `lguest-kvm receive`, which verifies every byte.
#
#   user: through libslirp to a receiver on 127.0.0.1 (no privileges)
#   tap:  inside a network namespace of the test's own, through a TAP
#         device, with the launcher running as 'nobody' after setup
# in both execution models (and once over the packed ring); then the failures a user will meet (the
# receiver resets, nobody listens, nobody answers ARP) each give one clear
# line with the stats still printed; then `table --workload tcp` leaves no
# namespace behind, also when interrupted.
. "$(dirname "$0")/lib.sh"
need_kvm
BYTES=$((64 << 20))

# start_receiver NAME [NS] ARGS... : a receiver in the background (inside
# netns NS unless it is "-"), waiting until it listens; RX_PID, RX_ADDR.
start_receiver() {
	local name=$1 ns=$2; shift 2
	local pre=()
	[ "$ns" = - ] || pre=(ip netns exec "$ns")
	rm -f "$TMP/$name.ready"
	( timeout -s KILL "$(scaled 120)" "${pre[@]}" "$LKVM" receive --ready "$TMP/$name.ready" --timeout "$(scaled 30)" "$@" \
		</dev/null >"$TMP/$name.out" 2>"$TMP/$name.err"; echo $? >"$TMP/$name.rc" ) &
	RX_PID=$!
	for _ in $(seq $(scaled 200)); do [ -s "$TMP/$name.ready" ] && break; sleep 0.05; done
	RX_ADDR=$(cat "$TMP/$name.ready" 2>/dev/null)
}
port_of() { echo "${RX_ADDR##*:}"; }

# ---- user-mode networking (libslirp) ----
# The lguest model runs event-idx: with EVENT_IDX negotiated the receive
# queue's "don't notify" is avail_event, not the flag, and must still hold.
for model in threaded lguest; do
	policy=dynamic
	[ $model = lguest ] && policy=event-idx
	start_receiver "u-$model" - --listen 127.0.0.1:0 --bytes $BYTES
	run_lkvm "user-$model" run --workload tcp --net user --peer "10.0.2.2:$(port_of)" --bytes $BYTES \
		--model $model --policy $policy --quiet --stats-json "$TMP/user-$model.json"
	wait $RX_PID
	check "user/$model: launcher exit 0 ($(tail -1 "$TMP/user-$model.err"))" [ "$(rc_of "user-$model")" = 0 ]
	check "user/$model: the receiver verified $BYTES bytes ($(cat "$TMP/u-$model.out" "$TMP/u-$model.err"))" \
		[ "$(rc_of "u-$model")" = 0 ]
	check "user/$model: the guest saw all $BYTES bytes acknowledged" \
		[ "$(json_get "$TMP/user-$model.json" guest_tcp_bytes_acked)" = $BYTES ]
	check "user/$model: backend reported as user, no capabilities after setup" \
		sh -c "[ $(json_get "$TMP/user-$model.json" net_backend) = user ] &&
		       [ $(json_get "$TMP/user-$model.json" launcher_cap_effective) = 0000000000000000 ]"
	check "user/$model: ACKs came back through the receive queue" \
		[ "$(json_get "$TMP/user-$model.json" rx_frames)" -gt 0 ]
	check "user/$model ($policy): the guest notified RX only when the host ran out of buffers (+1 at start)" \
		[ "$(json_get "$TMP/user-$model.json" rx_queue_notifies)" -le \
		  $(( $(json_get "$TMP/user-$model.json" rx_buffers_starved) + 1 )) ]
done

# The packed ring carries TCP too: both queues packed, ACKs through the
# packed receive queue, event-desc on TX.
start_receiver u-packed - --listen 127.0.0.1:0 --bytes $((16 << 20))
run_lkvm user-packed run --workload tcp --net user --peer "10.0.2.2:$(port_of)" --bytes $((16 << 20)) \
	--layout packed --policy event-desc --quiet --stats-json "$TMP/user-packed.json"
wait $RX_PID
check "user/packed: launcher exit 0 ($(tail -1 "$TMP/user-packed.err"))" [ "$(rc_of user-packed)" = 0 ]
check "user/packed: the receiver verified 16 MiB" [ "$(rc_of u-packed)" = 0 ]
check "user/packed: the packed ring ran, and ACKs came back through it" \
	sh -c "[ $(json_get "$TMP/user-packed.json" ring_layout) = packed ] &&
	       [ $(json_get "$TMP/user-packed.json" rx_frames) -gt 0 ]"

# The receiver resets the connection after 1 MiB.
start_receiver rst - --listen 127.0.0.1:0 --bytes $BYTES --close-after 1M
run_lkvm rst run --workload tcp --net user --peer "10.0.2.2:$(port_of)" --bytes $BYTES --quiet \
	--stats-json "$TMP/rst.json"
wait $RX_PID
check "reset: the launcher fails with the guest's status 33" [ "$(rc_of rst)" = 33 ]
check "reset: one line says the receiver reset the connection" \
	grep -q "tcp: the receiver reset the connection after [0-9]* of $BYTES bytes" "$TMP/rst.err"
check "reset: the stats were still printed" grep -q "^Number of net notifies:" "$TMP/rst.err"
check "reset: the JSON records state 'reset' (5)" [ "$(json_get "$TMP/rst.json" guest_tcp_state)" = 5 ]

# Not root: --net user is the default, so --tso (tap only) is refused at
# once -- before /dev/kvm, which an unprivileged user may not open here.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$LKVM" run --workload tcp --tso \
		</dev/null >/dev/null 2>"$TMP/nonroot.err"
	rc=$?
	check "not root: tcp defaults to --net user (so --tso is a usage error)" \
		sh -c "[ $rc = 2 ] && grep -q -- '--tso: needs' '$TMP/nonroot.err'"
fi
run_lkvm tsouser run --workload tcp --net user --tso
check "--tso over user is a usage error" sh -c "[ $(rc_of tsouser) = 2 ] && grep -q -- '--tso: needs' '$TMP/tsouser.err'"
run_lkvm bigframe run --workload tcp --net user --frame 9000
check "--frame 9000 with tcp is a usage error" [ "$(rc_of bigframe)" = 2 ]

# Nobody listens: slirp's connect is refused, the guest gets a RST.
start_receiver free - --listen 127.0.0.1:0 --bytes 1 --timeout 1
wait $RX_PID     # gone: its port is now closed
run_lkvm refused run --workload tcp --net user --peer "10.0.2.2:$(port_of)" --bytes 1M --quiet
check "refused: exit 33 and one clear line ($(grep tcp: "$TMP/refused.err"))" \
	sh -c "[ $(rc_of refused) = 33 ] && grep -q 'refused or reset the connection after 0 of' '$TMP/refused.err'"

# ---- a real tap in a namespace ----
if [ ! -e /dev/net/tun ] || ! command -v ip >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "SKIP (tap part): needs /dev/net/tun, iproute2 and root"
	finish
	exit $?
fi
NS=lkvm-test-$$
cleanup() { ip netns del "$NS" 2>/dev/null; ip netns del "$NS-d" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" tuntap add dev lkvm0 mode tap vnet_hdr
ip -n "$NS" addr add 10.99.0.1/24 dev lkvm0
ip -n "$NS" link set lkvm0 up

for model in threaded lguest; do
	start_receiver "t-$model" "$NS" --listen 10.99.0.1:5001 --bytes $BYTES
	ip netns exec "$NS" timeout -s KILL "$(scaled 120)" "$LKVM" run --workload tcp --net tap:lkvm0 --bytes $BYTES \
		--model $model --user nobody --quiet --stats-json "$TMP/tap-$model.json" </dev/null >/dev/null \
		2>"$TMP/tap-$model.err"
	rc=$?
	wait $RX_PID
	check "tap/$model: launcher exit 0 ($(tail -1 "$TMP/tap-$model.err"))" [ $rc = 0 ]
	check "tap/$model: the receiver verified $BYTES bytes ($(cat "$TMP/t-$model.out" "$TMP/t-$model.err"))" \
		[ "$(rc_of "t-$model")" = 0 ]
	check "tap/$model: the guest saw all $BYTES bytes acknowledged" \
		[ "$(json_get "$TMP/tap-$model.json" guest_tcp_bytes_acked)" = $BYTES ]
	check "tap/$model: the guest notified RX only when the host ran out of buffers (+1 at start)" \
		[ "$(json_get "$TMP/tap-$model.json" rx_queue_notifies)" -le \
		  $(( $(json_get "$TMP/tap-$model.json" rx_buffers_starved) + 1 )) ]
	check "tap/$model: no capabilities after setup, running as nobody" \
		sh -c "[ $(json_get "$TMP/tap-$model.json" launcher_cap_effective) = 0000000000000000 ] &&
		       [ $(json_get "$TMP/tap-$model.json" launcher_uid) = $(id -u nobody) ]"
done

# TSO: 64 KiB frames with a virtio-net header asking for checksum and
# segmentation; the host's kernel must still deliver a correct stream.
start_receiver tso "$NS" --listen 10.99.0.1:5001 --bytes $BYTES
ip netns exec "$NS" timeout -s KILL "$(scaled 120)" "$LKVM" run --workload tcp --net tap:lkvm0 --tso --bytes $BYTES --quiet \
	--stats-json "$TMP/tso.json" </dev/null >/dev/null 2>"$TMP/tso.err"
rc=$?
wait $RX_PID
check "tso: exit 0 and the receiver verified $BYTES bytes ($(cat "$TMP/tso.out" "$TMP/tso.err" | tail -1))" \
	sh -c "[ $rc = 0 ] && [ $(rc_of tso) = 0 ] && [ $(json_get "$TMP/tso.json" net_tso) = 1 ]"
check "tso: far fewer frames than MSS-sized segments would need" \
	[ "$(json_get "$TMP/tso.json" tx_frames)" -lt $((BYTES / 1456 / 10)) ]

# Root's default: no --net, a new tap that the launcher configures itself
# (in a namespace of its own, where 10.99.0.0/24 is not taken yet).
ip netns add "$NS-d"
ip -n "$NS-d" link set lo up
start_receiver default "$NS-d" --listen 0.0.0.0:5001 --bytes 4M
ip netns exec "$NS-d" timeout -s KILL "$(scaled 60)" "$LKVM" run --workload tcp --bytes 4M --quiet \
	--stats-json "$TMP/default.json" </dev/null >/dev/null 2>"$TMP/default.err"
rc=$?
wait $RX_PID
check "root's default: a new tap at 10.99.0.1/24, exit 0 ($(tail -1 "$TMP/default.err"))" \
	sh -c "[ $rc = 0 ] && [ $(rc_of default) = 0 ] && [ $(json_get "$TMP/default.json" net_backend) = tap ]"
ip netns del "$NS-d"

# Nobody has the peer's address: ARP goes unanswered.
ip netns exec "$NS" timeout -s KILL "$(scaled 60)" "$LKVM" run --workload tcp --net tap:lkvm0 --peer 10.99.0.9:5001 \
	--bytes 1M --quiet </dev/null >/dev/null 2>"$TMP/noarp.err"
rc=$?
check "no ARP reply: exit 33 and one clear line" sh -c "[ $rc = 33 ] && grep -q 'tcp: no ARP reply' '$TMP/noarp.err'"
ip netns del "$NS"

# ---- the table builds and removes its own namespace ----
run_lkvm table table --preset none --workload tcp --net tap --rows 64 --repeat 1 --model threaded --bytes 8M
check "table --workload tcp: exit 0 ($(err_of table | tail -1))" [ "$(rc_of table)" = 0 ]
check "table --workload tcp: the row and the loopback ceiling are printed" \
	sh -c "grep -q '^64 ' '$TMP/table.out' && grep -q '^Host loopback TCP' '$TMP/table.out'"
# (the table also deletes namespaces that killed tables left behind)
check "table --workload tcp: no namespace left behind" sh -c "! ip netns list | grep -Eq '^lkvm-[0-9]+'"

labs_before=$(ls -d /tmp/lkvm-lab-* 2>/dev/null | wc -l)
# The table itself in the background (not under `timeout`, whose pid would
# not name the namespace), interrupted once its namespace exists; killed if
# it does not stop.
"$LKVM" table --preset none --workload tcp --net tap --rows 10,20 --repeat 3 --model lguest --bytes 1G \
	</dev/null >"$TMP/int.out" 2>"$TMP/int.err" &
pid=$!
for _ in $(seq $(scaled 100)); do ip netns list | grep -Eq "^lkvm-$pid( |$)" && break; sleep 0.05; done
sleep 1
kill -INT $pid
for _ in $(seq $(scaled 100)); do kill -0 $pid 2>/dev/null || break; sleep 0.2; done
kill -KILL $pid 2>/dev/null && echo "the interrupted table did not stop: killed"
wait $pid
rc=$?
check "table interrupted: exit 130, partial table printed" sh -c "[ $rc = 130 ] && grep -q 'interrupted' '$TMP/int.out'"
check "table interrupted: its namespace is gone" sh -c "! ip netns list | grep -q '^lkvm-$pid'"
check "table interrupted: its temporary files are gone" [ "$(ls -d /tmp/lkvm-lab-* 2>/dev/null | wc -l)" = "$labs_before" ]
finish
