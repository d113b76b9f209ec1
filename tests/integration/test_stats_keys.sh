# test_stats_keys.sh -- docs/stats.md is the contract for the stats keys.
#
# Why: the keys are read by scripts, by `table` (through --stats-json) and
# by people comparing runs, so a key must neither vanish nor appear without
# its row in docs/stats.md.  This collects every key `lguest-kvm run` prints
# -- in the text block and in the JSON file -- over runs that between them
# reach every conditional key (raw over the sink, tcp over libslirp, a
# triple fault for run_error and vm_exits_<name>, the no-VM model for
# thread_*, a tap when the host has one), and compares the union with the
# first column of the tables in docs/stats.md, both ways.
. "$(dirname "$0")/lib.sh"
need_kvm
DOC=$(cd "$(dirname "$0")/../.." && pwd)/docs/stats.md

# keys_of NAME : the run's keys, text block and JSON, one per line, in
# $TMP/NAME.keys; a key in only one of the two fails here.
keys_of() {
	python3 - "$TMP/$1.err" "$TMP/$1.json" "$TMP/$1.keys" <<'PY'
import json, re, sys
text, in_block = [], False
for line in open(sys.argv[1]):
    if line.startswith("--- lguest-kvm stats ---"):
        in_block = True
    elif in_block and re.match(r"^[a-z_0-9]+ +\S", line):
        text.append(line.split()[0])
js = list(json.load(open(sys.argv[2])))
open(sys.argv[3], "w").write("".join(k + "\n" for k in js))
sys.exit(0 if text and text == js else 1)
PY
}

run_lkvm raw run --bytes 1M --quiet --stats-json "$TMP/raw.json"
check "raw over the sink: exit 0" [ "$(rc_of raw)" = 0 ]
check "raw: the text block and the JSON have the same keys" keys_of raw

start_receiver 1M
run_lkvm tcp run --workload tcp --net user --peer "10.0.2.2:${RX_PORT:-1}" --bytes 1M --quiet \
	--stats-json "$TMP/tcp.json"
wait $RX_PID
check "tcp over user: exit 0" [ "$(rc_of tcp)" = 0 ]
check "tcp: the text block and the JSON have the same keys" keys_of tcp

run_lkvm crash run --fault triple --quiet --stats-json "$TMP/crash.json"
check "triple fault: exit 125" [ "$(rc_of crash)" = 125 ]
check "crash: the text block and the JSON have the same keys" keys_of crash

run_lkvm thread run --model thread --bytes 1M --quiet --stats-json "$TMP/thread.json"
check "no VM (--model thread): exit 0" [ "$(rc_of thread)" = 0 ]
check "thread: the text block and the JSON have the same keys" keys_of thread

runs="raw tcp crash thread"
tap_ran=false
if [ -e /dev/net/tun ] && command -v ip >/dev/null && [ "$(id -u)" = 0 ]; then
	NS=lkvm-keys-$$
	trap 'ip netns del "$NS" 2>/dev/null; rm -rf "$TMP"' EXIT
	ip netns add "$NS"
	ip -n "$NS" tuntap add dev lkvm0 mode tap vnet_hdr
	ip -n "$NS" link set lkvm0 up
	ip netns exec "$NS" timeout -s KILL "$(scaled 120)" "$LKVM" run --workload boot --net tap:lkvm0 --quiet \
		--stats-json "$TMP/tap.json" </dev/null >"$TMP/tap.out" 2>"$TMP/tap.err"
	check "boot over a tap: exit 0" [ $? = 0 ]
	check "tap: the text block and the JSON have the same keys" keys_of tap
	ip netns del "$NS"
	runs="$runs tap"
	tap_ran=true
else
	echo "note: no /dev/net/tun, iproute2 or root: net_tap_interface is not looked for"
fi

check "every key printed is in docs/stats.md, and every key there is printed" \
	python3 - "$DOC" "$tap_ran" $(for r in $runs; do echo "$TMP/$r.keys"; done) <<'PY'
import re, sys
doc, tap_ran, files = sys.argv[1], sys.argv[2] == "true", sys.argv[3:]
documented = set()
for line in open(doc):
    m = re.match(r"^\| `([a-z_0-9<>]+)` \|", line)
    if m:
        documented.add(m.group(1))
printed = set()
for f in files:
    printed |= {k.strip() for k in open(f) if k.strip()}
# vm_exits_<name> stands for the exit reasons without a row of their own.
named = {k for k in documented if "<" not in k}
pattern = [re.compile("^" + re.sub(r"<[a-z]+>", "[a-z0-9_]+", k) + "$") for k in documented if "<" in k]
def is_documented(k):
    return k in named or any(p.match(k) for p in pattern)
undocumented = sorted(k for k in printed if not is_documented(k))
missing = sorted(k for k in named if k not in printed and not (k == "net_tap_interface" and not tap_ran))
unused = sorted(k for k in documented if "<" in k and not any(re.match("^" + re.sub(r"<[a-z]+>", "[a-z0-9_]+", k) + "$", p) and p not in named for p in printed))
for k in undocumented:
    print("printed but not in docs/stats.md:", k)
for k in missing + unused:
    print("in docs/stats.md but never printed:", k)
print(len(printed), "keys printed,", len(documented), "documented")
sys.exit(1 if undocumented or missing or unused else 0)
PY
finish
