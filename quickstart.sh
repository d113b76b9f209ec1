#!/usr/bin/env bash
# quickstart.sh -- set up a fresh Debian 12 machine and build lguest-kvm, then
#   ./quickstart.sh table   run the main job: `lguest-kvm table` (the 2008 table)
#   ./quickstart.sh test    run the whole test suite (what CI runs)
#   ./quickstart.sh build   only install and build
# Needs root (or sudo) for apt-get and for /dev/kvm.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(gcc libc6-dev linux-libc-dev meson ninja-build pkg-config libcap-ng-dev libslirp-dev libglib2.0-dev python3 gnuplot-nox iproute2)

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

case "${1:-}" in
table)
	install_packages
	build
	shift
	mkdir -p results
	exec ./build/lguest-kvm table --csv results/table.csv --json results/table.json \
		--plot results/table.svg "$@"
	;;
test)
	install_packages
	build
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
