#!/bin/busybox sh
# vm-init.sh -- /init of the emulator VM's initramfs (see tests/vm/lkvm-vm).
#
# The story of one boot: load the modules the runner packed (in the order
# modprobe gave), mount the host's root read-only over virtio-9p, give it the
# writable pieces a test needs (tmpfs /tmp and /run, the job folder, any
# --rw folders), bring `lo` up, then run the job's script in a chroot of that
# root with its stdout on hvc0 and stderr on hvc1.  The exit status goes
# into the job folder, which is how the runner learns it; then power off.
#
# Everything here is busybox, called as `busybox APPLET`: symlinking busybox
# over itself in the initramfs makes the kernel's exec of /init fail (-40).
BB=/bin/busybox
NINEP=trans=virtio,version=9p2000.L,msize=262144

# A failure before the job's status exists: the reason goes where the runner
# looks for it (the job folder, once mounted) and to the console.
die() {
	echo "vm-init: $*" >/dev/hvc1
	[ -d /job/. ] && echo "$*" >/job/init-error
	$BB sync
	$BB poweroff -f
}

$BB mount -t proc proc /proc
$BB mount -t sysfs sysfs /sys
$BB mount -t devtmpfs devtmpfs /dev

# modules.list: "PATH [PARAM=VALUE...]" per line, dependencies first.
while read -r ko params; do
	$BB insmod "$ko" $params || die "insmod $ko failed"
done </modules.list
[ -e /dev/kvm ] || die "no /dev/kvm after loading kvm_amd (does the VM's CPU have svm?)"

$BB mkdir -p /job /root
$BB mount -t 9p -o $NINEP job /job || die "cannot mount the job folder"
$BB mount -t 9p -o $NINEP,cache=loose,ro hostroot /root || die "cannot mount the host's root"
. /job/env.sh     # JOB (the job folder's host path), RW_DIRS ("TAG PATH" lines),
                  # KEEP_TMP (names in the host's /tmp the job needs), and
                  # OUT_TTY / ERR_TTY (1 if the runner's stdout / stderr is a terminal)

R=/root
$BB mount -t proc proc $R/proc
$BB mount -t sysfs sysfs $R/sys
$BB mount -t devtmpfs devtmpfs $R/dev
$BB mkdir -p $R/dev/pts $R/dev/shm
$BB mount -t devpts devpts $R/dev/pts
$BB mount -t tmpfs tmpfs $R/dev/shm
# A fresh /tmp, but what the job lives in stays visible (a clone in /tmp).
$BB mkdir -p /hosttmp
$BB mount --bind $R/tmp /hosttmp
$BB mount -t tmpfs tmpfs $R/tmp
echo "$KEEP_TMP" | while read -r name; do
	[ -n "$name" ] || continue
	if [ -d "/hosttmp/$name" ]; then $BB mkdir -p "$R/tmp/$name"; else $BB touch "$R/tmp/$name"; fi
	$BB mount --bind "/hosttmp/$name" "$R/tmp/$name" || die "cannot keep /tmp/$name"
done
$BB mount -t tmpfs tmpfs $R/run
$BB mkdir -p $R$JOB
$BB mount --bind /job $R$JOB
echo "$RW_DIRS" | while read -r tag path; do
	[ -n "$tag" ] || continue
	$BB mkdir -p "$R$path" 2>/dev/null
	$BB mount -t 9p -o $NINEP "$tag" "$R$path" || die "cannot mount $path writable"
done
$BB ip link set lo up

# Raw console lines: no CR added before LF, no echo.  The consoles are
# terminals; where the runner's stdout or stderr is not one (a pipe, a log),
# the command gets a pipe too, so it behaves as it would outside (the
# table's progress line, for one, is only drawn on a terminal).
# hvc resets its settings on the last close: hold both open while we run.
exec 5>/dev/hvc0 6>/dev/hvc1
$BB stty -F /dev/hvc0 raw -echo
$BB stty -F /dev/hvc1 raw -echo
OUT=/dev/hvc0 ERR=/dev/hvc1
if [ "$OUT_TTY" = 0 ]; then
	$BB mkfifo /out
	$BB cat /out >/dev/hvc0 &
	OUT=/out
fi
if [ "$ERR_TTY" = 0 ]; then
	$BB mkfifo /err
	$BB cat /err >/dev/hvc1 &
	ERR=/err
fi
$BB chroot $R /bin/bash "$JOB/run.sh" </dev/null >$OUT 2>$ERR
echo $? >/job/status
wait
$BB sync
$BB poweroff -f
