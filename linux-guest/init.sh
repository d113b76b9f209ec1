#!/bin/busybox sh
# init.sh -- /init of the Linux guest's initramfs (docs/linux-guest.md).
#
# One boot: mount the kernel's filesystems, load the virtio modules in the
# order modprobe gave (make-initramfs.sh wrote modules.list), move our
# output from ttyS0 to hvc0 once virtio_console made it, report what each
# virtio device negotiated, then do the workload the launcher put on the
# command line (lkvm.workload=boot|tcp, lkvm.bytes, lkvm.ip, lkvm.peer)
# and leave through the launcher's exit port with its status.
BB=/bin/busybox

leave() {   # leave STATUS [WHY]
	[ -n "${2:-}" ] && echo "lkvm-linux: $2"
	/lkvm-guest exit "$1"
	$BB poweroff -f
}

$BB mount -t proc proc /proc
$BB mount -t sysfs sysfs /sys
$BB mount -t devtmpfs devtmpfs /dev

WORKLOAD=boot BYTES=0 IP= PEER=
for w in $($BB cat /proc/cmdline); do
	case $w in
	lkvm.workload=*) WORKLOAD=${w#*=} ;;
	lkvm.bytes=*) BYTES=${w#*=} ;;
	lkvm.ip=*) IP=${w#*=} ;;
	lkvm.peer=*) PEER=${w#*=} ;;
	esac
done

while read -r ko; do
	$BB insmod "$ko" || leave 40 "insmod $ko failed"
done </modules.list

# virtio_mmio found the DSDT's LNRO0005 devices; virtio_console's port 0
# is hvc0.  From here on everything we say goes there.
for _ in $($BB seq 50); do [ -e /dev/hvc0 ] && break; $BB sleep 0.1; done
[ -e /dev/hvc0 ] || leave 41 "no /dev/hvc0 after loading virtio_console"
exec >/dev/hvc0 2>&1
echo "lkvm-linux: /init reached on hvc0, kernel $($BB uname -r), workload $WORKLOAD"
for d in /sys/bus/virtio/devices/*; do
	echo "lkvm-linux: ${d##*/} device $($BB cat "$d/device") features $($BB cat "$d/features")"
done

case $WORKLOAD in
boot) leave 0 ;;
tcp)
	[ -e /sys/class/net/eth0 ] || leave 42 "no eth0: virtio_net did not bind"
	$BB ip link set lo up
	$BB ip addr add "$IP/24" dev eth0 || leave 43 "cannot give eth0 $IP"
	$BB ip link set eth0 up || leave 43 "cannot bring eth0 up"
	/lkvm-guest send --connect "$PEER" --bytes "$BYTES"
	leave $? ;;
*) leave 44 "unknown workload '$WORKLOAD'" ;;
esac
