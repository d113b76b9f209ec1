# cmdline_smoke.sh -- the command-line fuzzer's smoke test: the committed
# corpus (tests/fuzz/corpus/cmd-*: the seeds and every finding), the
# command lines the docs and tests hold today (extracted afresh, so a line
# added to them is replayed without anyone updating the corpus), and 2000
# generated lines per command, through every command's real parser
# (fuzz_cmdline.c; ASan and UBSan where the compiler has them).
#
#   bash cmdline_smoke.sh SOURCE_DIR SMOKE_BINARY [LINES]
set -u
SRC=${1:?usage: $0 SOURCE_DIR SMOKE_BINARY [LINES]}
BIN=${2:?usage: $0 SOURCE_DIR SMOKE_BINARY [LINES]}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 "$SRC/tests/fuzz/extract_cmdlines.py" "$SRC" "$WORK" || exit 1
exec "$BIN" "${3:-2000}" "$SRC/tests/fuzz/corpus" "$WORK"
