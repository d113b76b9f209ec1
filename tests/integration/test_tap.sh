# test_tap.sh -- the tap backend, for real: inside a network namespace of its
# own, the guest's frames go through a TAP device to a packet-socket
# receiver that verifies every byte; the launcher runs as 'nobody' with no
# capabilities after opening the tap; nothing is left behind.
. "$(dirname "$0")/lib.sh"
need_kvm
if [ ! -e /dev/net/tun ] || ! command -v ip >/dev/null || [ "$(id -u)" != 0 ]; then
	echo "SKIP: needs /dev/net/tun, iproute2 and root"
	exit 77
fi
NS=lkvm-test-$$
cleanup() { ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
ip netns add "$NS"
ip -n "$NS" tuntap add dev lkvm0 mode tap vnet_hdr
ip -n "$NS" link set lkvm0 up

BYTES=$((4 << 20))
FRAMES=$(( (BYTES + 1491) / 1492 ))
for model in threaded lguest; do
	rm -f "$TMP/ready"
	ip netns exec "$NS" python3 "$(dirname "$0")/tap_receiver.py" lkvm0 $FRAMES "$TMP/ready" >"$TMP/rx.out" 2>&1 &
	rx=$!
	for _ in $(seq $(scaled 50)); do [ -e "$TMP/ready" ] && break; sleep 0.1; done
	ip netns exec "$NS" timeout -s KILL "$(scaled 60)" "$LKVM" run --quiet --net tap:lkvm0 --bytes $BYTES --model $model \
		--user nobody --stats-json "$TMP/t.json" </dev/null >/dev/null 2>"$TMP/t.err"
	rc=$?
	wait $rx
	rxrc=$?
	check "$model: launcher exit 0 over tap" [ $rc = 0 ]
	check "$model: the receiver verified all $FRAMES frames ($(cat "$TMP/rx.out"))" [ $rxrc = 0 ]
	check "$model: host counted $FRAMES frames written" [ "$(json_get "$TMP/t.json" tx_frames)" = $FRAMES ]
	check "$model: no capabilities after setup" [ "$(json_get "$TMP/t.json" launcher_cap_effective)" = 0000000000000000 ]
	check "$model: running as nobody" [ "$(json_get "$TMP/t.json" launcher_uid)" = "$(id -u nobody)" ]
done

run_lkvm badname run --net tap:this-is-too-long-x
check "a bad tap name is a usage error" [ "$(rc_of badname)" = 2 ]
ip netns del "$NS"
check "the namespace is gone" sh -c "! ip netns list | grep -q $NS"
finish
