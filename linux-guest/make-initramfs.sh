#!/usr/bin/env bash
# make-initramfs.sh -- the Linux guest's initramfs, built from what this
# machine has installed, cached, and its path printed.
#
#   make-initramfs.sh KERNEL_VERSION
#
# It holds a static busybox, init.sh as /init, lkvm-guest (built by Meson
# beside this script), and the modules `modprobe --show-depends` lists for
# virtio_mmio, virtio_net and virtio_console, dependencies first, in
# modules.list.  The cache key is the kernel version and the bytes of this
# script, init.sh and lkvm-guest.  Cache folders, first writable one wins,
# any one that already holds the file is used: $LKVM_LINUX_CACHE, a cache/
# folder beside this script (the build tree), ${TMPDIR:-/tmp}.
# Errors: one line on stderr, exit 1.
set -uo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KVER=${1:?usage: make-initramfs.sh KERNEL_VERSION}
MODULES=(virtio_mmio virtio_net virtio_console)
fail() { echo "make-initramfs: $*" >&2; exit 1; }

[ -x /bin/busybox ] || fail "no /bin/busybox (apt-get install busybox-static)"
[ -x "$HERE/lkvm-guest" ] || fail "no $HERE/lkvm-guest (build the project first)"
[ -d "/lib/modules/$KVER" ] || fail "no /lib/modules/$KVER (apt-get install linux-image-amd64)"
command -v cpio >/dev/null || fail "no cpio (apt-get install cpio)"
key=$( (echo "$KVER"; cat "$0" "$HERE/init.sh" "$HERE/lkvm-guest") | sha256sum | cut -c1-12)
name=lkvm-linux-initramfs-$KVER-$key.cpio.gz
dirs=("${LKVM_LINUX_CACHE:-}" "$HERE/cache" "${TMPDIR:-/tmp}/lguest-kvm-$(id -u)")
for d in "${dirs[@]}"; do
	[ -n "$d" ] && [ -s "$d/$name" ] && { echo "$d/$name"; exit 0; }
done
out=
for d in "${dirs[@]}"; do
	[ -n "$d" ] && mkdir -p "$d" 2>/dev/null && [ -w "$d" ] && { out=$d/$name; break; }
done
[ -n "$out" ] || fail "no writable cache folder (set LKVM_LINUX_CACHE)"

dir=$(mktemp -d) || fail "mktemp failed"
trap 'rm -rf "$dir" "$out.tmp.$$"' EXIT
mkdir -p "$dir"/{bin,proc,sys,dev}
cp /bin/busybox "$dir/bin/busybox"
cp "$HERE/init.sh" "$dir/init" && chmod 755 "$dir/init"
cp "$HERE/lkvm-guest" "$dir/lkvm-guest"
: >"$dir/modules.list"
for m in "${MODULES[@]}"; do
	modprobe -S "$KVER" --show-depends "$m" >"$dir/deps" 2>&1 ||
		fail "modprobe cannot resolve $m for kernel $KVER: $(head -1 "$dir/deps")"
	while read -r word ko _; do
		[ "$word" = insmod ] || continue
		grep -qx "$ko" "$dir/modules.list" && continue
		mkdir -p "$dir$(dirname "$ko")" && cp "$ko" "$dir$ko" || fail "cannot copy $ko"
		echo "$ko" >>"$dir/modules.list"
	done <"$dir/deps"
done
rm -f "$dir/deps"
(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp.$$" && mv "$out.tmp.$$" "$out" ||
	fail "cannot write $out"
echo "$out"
