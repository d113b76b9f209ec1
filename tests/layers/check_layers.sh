#!/bin/bash
# check_layers.sh -- the build's layer rule, shown: a folder compiled with
# its own include paths cannot include a header of the layer above it.
#
#   check_layers.sh SRCROOT LAYER=DIR,DIR,...:OWN.h[:ABOVE.h] ... -- CC [ARGS...]
#
# Each LAYER comes with the include folders meson.build gives it (the same
# list, passed in by tests/meson.build), a header of its own and, except for
# the top layer, a header of the layer above.  For every layer the test
# compiles a one-line file in that layer's include context: including its
# own header must compile (so the command line itself is sound), including
# the header from above must fail, and fail because the header is not
# found -- not for any other reason.  Every own header is also the "above"
# header of the layer below, so each failure is of a header known to
# compile where it belongs.
set -u
src=$1; shift
layers=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do layers+=("$1"); shift; done
shift
cc=("$@")
fails=0 checks=0

compile() {   # compile DIRS HEADER -> compiler's status; stderr in $err
	local dirs=$1 header=$2 args=()
	IFS=, read -ra ds <<<"$dirs"
	for d in "${ds[@]}"; do args+=("-I$src/$d"); done
	err=$(printf '#include "%s"\n' "$header" |
		"${cc[@]}" -std=gnu11 -D_GNU_SOURCE -fsyntax-only -x c "${args[@]}" - 2>&1)
}

check() {     # check NAME OK?
	checks=$((checks + 1))
	if [ "$2" = 1 ]; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}

for spec in "${layers[@]}"; do
	name=${spec%%=*} rest=${spec#*=}
	IFS=: read -r dirs own above <<<"$rest"
	compile "$dirs" "$own"; rc=$?
	[ $rc -ne 0 ] && echo "$err"
	check "$name/ includes its own $own" "$([ $rc -eq 0 ] && echo 1)"
	[ -n "$above" ] || continue
	compile "$dirs" "$above"; rc=$?
	check "$name/ cannot include $above from the layer above" \
		"$([ $rc -ne 0 ] && grep -q "$above.*No such file" <<<"$err" && echo 1)"
done
echo "$((checks - fails)) passed, $fails failed"
[ $fails -eq 0 ]
