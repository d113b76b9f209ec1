#!/usr/bin/env bash
# quickstart.sh -- set up a fresh Debian 12 machine and build lguest-kvm, then
#   ./quickstart.sh table   run the main job: `lguest-kvm table` (the 2008 table, preset 2008)
#   ./quickstart.sh test    run the whole test suite (what CI runs)
#   ./quickstart.sh build   only install and build
# Needs root (or sudo) for apt-get and for /dev/kvm.
#
# Without /dev/kvm, `test` takes the emulator VM route (tests/vm/lkvm-vm,
# docs/testing.md): QEMU's TCG emulates AMD SVM, so a Debian kernel booted
# in it has KVM; the unit tests and the no-VM tests run here, every KVM test
# in that VM.  `table` needs no VM there: its preset runs on the no-VM
# lguest host, with real seconds.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(gcc acpica-tools libc6-dev linux-libc-dev meson ninja-build pkg-config libcap-ng-dev libseccomp-dev libslirp-dev libglib2.0-dev python3 gnuplot-nox iproute2 procps qemu-system-x86 clang libclang-rt-14-dev)
# A Debian kernel, its module tools and busybox: the emulator VM route's
# guest where there is no /dev/kvm, and everywhere the Linux guest of
# `run --guest linux` and integration-linux-guest, which builds its
# initramfs from them (QEMU is always installed: integration-qemu boots the
# stub under QEMU's microvm).
PACKAGES+=(linux-image-amd64 busybox-static kmod cpio)

install_packages() {
	local missing=() sudo=()
	for p in "${PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" -eq 0 ] || sudo=(sudo)
	echo "quickstart: installing ${missing[*]}" >&2
	"${sudo[@]}" apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
	# Warnings are errors here, in CI and for everyone: keep the tree clean.
	if [ -f build/build.ninja ]; then
		meson configure build -Dwerror=true
	else
		meson setup build -Dwerror=true
	fi
	# Quiet on success, the whole log on failure.
	meson compile -C build >build/compile.log 2>&1 || { cat build/compile.log >&2; exit 1; }
}

# The emulator route, or one line saying why it cannot run (and exit 1).
need_vm_route() {
	tests/vm/lkvm-vm --check >/dev/null && return 0
	echo "quickstart: no /dev/kvm here, and $(tests/vm/lkvm-vm --check | sed 's/^lkvm-vm: //')" >&2
	exit 1
}

case "${1:-}" in
table)
	install_packages
	build
	shift
	mkdir -p results
	# The 2008 preset (docs/seed-2008.md): on KVM where /dev/kvm works, and
	# otherwise on the no-VM lguest host, whose seconds are real -- no
	# emulator in the way of the Seconds column.
	[ -e /dev/kvm ] || echo "quickstart: no /dev/kvm -- the table runs the 2008 preset on the no-VM lguest host" \
		"(--vm none): real seconds, this machine's CPUs" >&2
	exec ./build/lguest-kvm table --csv results/table.csv --json results/table.json --plot results/table.svg "$@"
	;;
test)
	install_packages
	build
	if [ ! -e /dev/kvm ]; then
		need_vm_route
		echo "quickstart: no /dev/kvm -- unit tests run here, every KVM test inside a QEMU TCG VM with emulated SVM (tests/vm/lkvm-vm)" >&2
		tests/vm/lkvm-vm --prepare >/dev/null
		# Each KVM test boots its own VM and runs at an emulator's speed.
		exec meson test -C build --print-errorlogs --timeout-multiplier 3
	fi
	exec meson test -C build --print-errorlogs
	;;
build)
	install_packages
	build
	;;
*)
	echo "usage: $0 table [table options] | test | build" >&2
	exit 2
	;;
esac
