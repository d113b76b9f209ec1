#!/usr/bin/env bash
# test_linux_guest.sh -- Debian's own kernel on our devices (issue 25,
# docs/linux-guest.md): Linux's virtio_mmio finds them through our ACPI
# tables, its virtio_console gives /init hvc0, and its virtio_net sends a
# stream over TCP through libslirp to `lguest-kvm receive`, which verifies
# every byte -- once with event-idx negotiated and once with it withheld.
# The first transfer's boot is also the boot check (/init on hvc0, both
# LNRO0005 devices bound).  The stream is LKVM_LINUX_TCP_BYTES long
# (default 1M: in the emulator VM a Linux guest moves ~0.1 MB/s over
# libslirp).  The issue's 64 MiB goes through the table's row instead
# (LKVM_LINUX_TABLE_BYTES, default 64M): as root the table uses a tap in a
# namespace of its own, over which the same guest moves 64 MiB in 7-104 s
# in the emulator VM, its receiver verifying every byte.
#
# On the host first (no VM needed): a file that is not a kernel, a
# truncated kernel and a missing initrd are refused with one line, exit 1;
# and the initramfs is built into the build tree's cache, which the
# emulator VM reads (its / is read-only).  Then, with KVM (the emulator VM
# where there is no /dev/kvm): the two transfers, and a two-row
# `table --experiment linux`.
#
# The emulator's fault: QEMU 7.2's nested SVM with two vCPUs handed the
# guest its timer interrupt a second time while its interrupts were off, and
# Linux deadlocked in early boot (docs/linux-guest.md, "The early-boot
# hang").  The emulator VM now runs one vCPU, which ends it (0 hangs in the
# measured boots), so nothing is retried by default: a run that hit its time
# limit with exactly that on the stack the launcher printed -- the vCPU
# spinning with interrupts off over an interrupt frame whose saved RFLAGS
# has IF clear -- fails saying so.  LKVM_LINUX_ATTEMPTS=N (emulator VM only)
# runs such a run again, up to N attempts, each retry said.
. "$(dirname "$0")/lib.sh"
BUILD=$(cd "$(dirname "$LKVM")" && pwd)

kernel=$(ls -1v /boot/vmlinuz-* 2>/dev/null | while read -r k; do
	[ -d "/lib/modules/${k#/boot/vmlinuz-}" ] && echo "$k"; done | tail -1)
if [ -z "$kernel" ] || [ ! -x /bin/busybox ]; then
	echo "SKIP: no /boot/vmlinuz-* with its modules, or no /bin/busybox (apt-get install linux-image-amd64 busybox-static)"
	exit 77
fi

one_line_refusal() {   # NAME WORD: exit 1, one stderr line naming WORD, nothing on stdout
	[ "$(rc_of "$1")" = 1 ] && [ "$(err_of "$1" | wc -l)" = 1 ] && grep -q -- "$2" "$TMP/$1.err" &&
		[ ! -s "$TMP/$1.out" ]
}
if [ -z "${LKVM_IN_VM:-}" ]; then
	echo "x" >"$TMP/not-a-kernel"
	run_lkvm notkernel run --kernel "$TMP/not-a-kernel"
	check "a file that is not a kernel: one line, exit 1" one_line_refusal notkernel "not a Linux kernel"
	head -c 8192 "$kernel" >"$TMP/truncated"
	run_lkvm truncated run --kernel "$TMP/truncated"
	check "a truncated kernel: one line, exit 1" one_line_refusal truncated "truncated\|implausible"
	run_lkvm noinitrd run --kernel "$kernel" --initrd "$TMP/missing.cpio"
	check "a missing initrd: one line, exit 1" one_line_refusal noinitrd "missing.cpio: No such file"
	run_lkvm badfeature run --guest linux --withhold-features event-idx,bogus
	check "an unknown feature name: usage error" [ "$(rc_of badfeature)" = 2 ]
	check "the initramfs builds" "$BUILD/linux-guest/make-initramfs.sh" "${kernel#/boot/vmlinuz-}"
	[ "$FAIL" -eq 0 ] || { echo "$PASS passed, $FAIL failed"; exit 1; }
fi
need_kvm
BYTES=${LKVM_LINUX_TCP_BYTES:-1M}
ATTEMPTS=${LKVM_LINUX_ATTEMPTS:-1}
# Limits: a boot takes 30-60 s in the emulator VM on a quiet machine (170-300 s
# were seen on a loaded one), a second or two on KVM.
limit() { if [ -n "${LKVM_IN_VM:-}" ]; then echo "$1"; else echo "$2"; fi; }

# The emulator's fault, as the launcher's stop line shows it (above).
emulator_irq_fault() {   # ERR-FILE
	local line
	line=$(grep -a "at the stop the vCPU was runnable" "$1" | grep "interrupts off") || return 1
	for f in $(echo "$line" | grep -o "(flags 0x[0-9a-f]*)" | grep -o "0x[0-9a-f]*"); do
		[ $((f & 0x200)) = 0 ] && return 0
	done
	return 1
}

# --workload tcp over libslirp, retried only on the emulator's fault.
tcp_run() {   # NAME [RUN ARGS...]
	local name=$1 attempt rc; shift
	for attempt in $(seq "$ATTEMPTS"); do
		start_receiver "$BYTES" 60
		timeout -s KILL "$(limit 450 120)" "$LKVM" run --guest linux --workload tcp --bytes "$BYTES" --net user \
			--peer "10.0.2.2:$RX_PORT" --mem 128M --max-seconds "$(limit 400 100)" --stats-json "$TMP/$name.json" "$@" \
			</dev/null >"$TMP/$name.out" 2>"$TMP/$name.err"
		rc=$?
		echo $rc >"$TMP/$name.rc"
		[ "$rc" = 124 ] && pkill -TERM -P "$RX_PID" 2>/dev/null   # the receiver's timeout, which stops it
		wait "$RX_PID"
		cp "$TMP/rx.rc" "$TMP/$name.rxrc"; cp "$TMP/rx.out" "$TMP/$name.rxout"; cp "$TMP/rx.err" "$TMP/$name.rxerr"
		[ "$rc" = 124 ] && [ -n "${LKVM_IN_VM:-}" ] && emulator_irq_fault "$TMP/$name.err" || break
		echo "note: $name attempt $attempt of $ATTEMPTS hung in early boot on the emulator's interrupt-with-IF-clear fault" \
			"(docs/linux-guest.md); $(grep -a -o 'at the stop the vCPU was [^;]*' "$TMP/$name.err")"
		echo "$attempt" >"$TMP/$name.retries"
	done
}
feature() {   # NAME KEY BIT -> 1 if the bit is set
	python3 -c 'import json,sys; print(int(json.load(open(sys.argv[1]))[sys.argv[2]], 16) >> int(sys.argv[3]) & 1)' \
		"$TMP/$1.json" "$2" "$3"
}
for variant in eventidx noeventidx; do
	if [ "$variant" = eventidx ]; then tcp_run "$variant"; else tcp_run "$variant" --withhold-features event-idx; fi
	check "$variant: the guest's exit 0 (rc $(cat "$TMP/$variant.rc"))" [ "$(cat "$TMP/$variant.rc")" = 0 ]
	if [ "$variant" = eventidx ]; then
		check "boot: the kernel's messages on COM1" grep -q "Linux version" "$TMP/$variant.out"
		check "boot: /init reached, speaking on hvc0" grep -q "lkvm-linux: /init reached on hvc0" "$TMP/$variant.out"
		check "boot: both LNRO0005 devices bound (console 3, net 1)" \
			bash -c "grep -q 'device 0x0003 features' '$TMP/$variant.out' && grep -q 'device 0x0001 features' '$TMP/$variant.out'"
	fi
	check "$variant: the receiver verified $BYTES (rc $(cat "$TMP/$variant.rxrc"))" [ "$(cat "$TMP/$variant.rxrc")" = 0 ]
	check "$variant: lkvm-guest saw the receiver's clean close" grep -q "sent [0-9]* bytes, the receiver closed cleanly" "$TMP/$variant.out"
	check "$variant: the host counted notifies" [ "$(json_get "$TMP/$variant.json" tx_queue_notifies)" -gt 0 ]
	check "$variant: no device error" [ "$(json_get "$TMP/$variant.json" device_errors)" = 0 ]
	if [ "$variant" = eventidx ]; then
		check "eventidx: Linux negotiated VIRTIO_RING_F_EVENT_IDX" [ "$(feature eventidx net_features_negotiated 29)" = 1 ]
	else
		check "noeventidx: withheld, so neither offered nor negotiated" \
			[ "$(feature noeventidx net_features_offered 29)$(feature noeventidx net_features_negotiated 29)" = 00 ]
		check "noeventidx: Linux honoured NO_NOTIFY: fewer notifies than frames" \
			[ "$(json_get "$TMP/noeventidx.json" tx_queue_notifies)" -lt "$(json_get "$TMP/noeventidx.json" tx_frames)" ]
	fi
	[ "$(cat "$TMP/$variant.rc")" = 0 ] || { tail -20 "$TMP/$variant.out"; tail -8 "$TMP/$variant.err"; cat "$TMP/$variant.rxerr"; }
	echo "$variant: $(grep -E '^(tx_queue_notifies|tx_timer_timeouts|tx_frames|tx_interrupts|rx_interrupts|net_features_negotiated) ' "$TMP/$variant.err" | tr -s ' ' | tr '\n' ' ')"
done
# The table's Linux rows (table --experiment linux): a Linux row beside a
# stub row, each sample's stream (64 MiB by default) verified byte for byte
# by the table's receiver.
TABLE_BYTES=${LKVM_LINUX_TABLE_BYTES:-64M}
timeout -s KILL "$(limit 900 200)" "$LKVM" table --experiment linux --rows dynamic,linux --model lguest \
	--bytes "$TABLE_BYTES" --repeat 1 --csv "$TMP/lt.csv" --json "$TMP/lt.json" </dev/null >"$TMP/lt.out" 2>"$TMP/lt.err"
echo $? >"$TMP/lt.rc"
check "table --experiment linux, $TABLE_BYTES: exit 0, Linux took event-idx, the stub's dynamic row did not ($(tail -1 "$TMP/lt.err"))" \
	sh -c '[ "$(cat "$1/lt.rc")" = 0 ] && grep -Eq "^Linux +yes " "$1/lt.out" && grep -Eq "^Stub-dynamic +no " "$1/lt.out" &&
	       [ "$(wc -l <"$1/lt.csv")" = 3 ]' _ "$TMP"
check "table --experiment linux: the Linux sample's receiver verified all $TABLE_BYTES" python3 -c '
import json, sys
rows = {r["row"]: r for r in json.load(open(sys.argv[1]))["rows"]}
want = int(sys.argv[2])
sys.exit(0 if rows["Linux"]["ok"] and all(s["payload_bytes"] == want for s in rows["Linux"]["samples"]) else 1)' \
	"$TMP/lt.json" "$(numfmt --from=iec "$TABLE_BYTES")"
[ "$(cat "$TMP/lt.rc")" = 0 ] || cat "$TMP/lt.out"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
