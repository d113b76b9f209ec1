# test_stdio.sh -- every command, with no VM, whatever its standard
# streams are: a terminal, a regular file, a pipe, /dev/null, closed, or a
# terminal it is a background job of (issue 27, item 6).
#
# Why: `run` works under a seccomp filter that kills the process for any
# call outside its list, and glibc's stdio asks the kernel different things
# for each kind of stream; `run --model thread >/dev/null` once died by
# SIGSYS.  A terminal brings job control (a background job that reads it is
# stopped by SIGTTIN), and a closed stream hands its number to the next file
# opened.  stdio_matrix.py runs `run` -- the sandboxed command -- raw with
# both models under stdout x stderr (16 combinations, stdin taking each
# kind in turn), each stream closed in turn, and once as a background job;
# everything else once per kind with all three streams on it, closed, and
# as a background job.  It checks the exit status (no signal, no stop,
# no hang) and that the output that should appear does, wherever it went.
# The KVM models' half is test_stdio_kvm.sh.
# Everything here is small: 1 MiB per run, nothing timed.
. "$(dirname "$0")/lib.sh"

MATRIX=$(dirname "$0")/stdio_matrix.py
# full|same CASE [--and CASE]... : stdio_matrix.py over one or more commands
# (one interpreter start); full crosses stdout and stderr kinds, same puts
# all three streams on one kind at a time.  Both add the closed streams and
# the background job.
matrix_of() {
	local mode=$1 w args
	shift
	args=(--matrix "$mode" --timeout "$(scaled 60)")
	for w in "$@"; do
		args+=("$w")
		[ "$w" = --and ] && args+=(--matrix "$mode" --timeout "$(scaled 60)")
	done
	python3 "$MATRIX" "${args[@]}"
}
matrix() { matrix_of full "$@"; }
same() { matrix_of same "$@"; }
RECEIVE="$LKVM receive --listen 127.0.0.1:0 --ready {ready} --bytes 1M --timeout $(scaled 30)"
STATS='^--- lguest-kvm stats ---$'

# ---- the commands that only print: help, version, a usage error ----
help_cases=(--name help --out '^usage: lguest-kvm run' -- "$LKVM" --help
	--and --name version --out '^lguest-kvm [0-9]' -- "$LKVM" --version
	--and --name usage --status 2 --err "^lguest-kvm run: unknown or incomplete option '--no-such-option'" --
	"$LKVM" run --no-such-option)
# The two longest --help texts (receive, send and trace print theirs the
# same way, through common/opt_table.h, and are shorter).
for cmd in run table; do
	help_cases+=(--and --name "$cmd-help" --out "^usage: lguest-kvm $cmd" -- "$LKVM" "$cmd" --help)
done
check "--help, --version, run --help, table --help, a usage error (exit 2, its one line)" same "${help_cases[@]}"

# ---- run, no VM: both host models, raw and tcp ----
# raw: the guest's console on stdout, the stats on stderr, the JSON intact
# (a closed stdout must not make the JSON file descriptor 1).
for model in lguest threaded; do
	# tcp on the lguest model as the 2008 preset runs it: the waker spins near each deadline
	waker=()
	[ $model = lguest ] && waker=(--timer-wait spin)
	check "run --vm none --model $model: raw, --stats-json and --trace files readable afterwards" \
		matrix --name "run-$model-raw" --out '^raw: done' --err "$STATS" --err '^tx_verify +ok$' \
		--json-file "{dir}/s.json" --then "$LKVM trace {dir}/t.trace" -- \
		"$LKVM" run --vm none --model $model --bytes 1M --stats-json "{dir}/s.json" --trace "{dir}/t.trace"
	# tcp over libslirp to `lguest-kvm receive`, both under the same streams;
	# one combination per kind (the cross above is for the streams, and
	# these runs' streams are written by the same code)
	check "run --vm none --model $model: tcp over --net user to receive" \
		same --name "run-$model-tcp" --out '^tcp: ' --err "$STATS" --err '^guest_tcp_bytes_acked +1048576$' \
		--peer "$RECEIVE" --peer-out '^receive: 1048576 bytes verified' -- \
		"$LKVM" run --vm none --model $model --workload tcp --net user --peer "10.0.2.2:{port}" --bytes 1M \
		"${waker[@]}"
done
# The other ways out print too, under the filter: a broken ring (exit 126,
# its one line, the stats) and --max-seconds (exit 124, the stats).
check "run --vm none: a hostile ring, and --max-seconds" \
	same --name run-hostile --status 126 --err '^lguest-kvm: virtio-net: net transmit queue: head index' \
	--err '^device_errors +1$' -- "$LKVM" run --vm none --fault hostile-head --bytes 1M \
	--and --name run-max-seconds --status 124 --err '^run_end +time-limit$' -- \
	"$LKVM" run --vm none --model lguest --bytes 1000G --quiet --max-seconds 1
# Its JSON on stdout itself.
check "run --stats-json /dev/stdout: the JSON on stdout" \
	same --name run-json-stdout --out '^  "tx_verify": "ok",$' --err "$STATS" -- \
	"$LKVM" run --vm none --model lguest --bytes 1M --quiet --stats-json /dev/stdout

# ---- table: a tiny one, both models; its runs and receivers are its children ----
check "table --rows 10 --repeat 1 --bytes 1M, both models" \
	same --name table --out '^Model: lguest, no VM' --out '^Model: threaded, no VM' --out '^10 +[0-9.]+ ' \
	--json-file "{dir}/t.json" -- \
	"$LKVM" table --rows 10 --repeat 1 --bytes 1M --vm none --model both --json "{dir}/t.json"

# ---- send and receive: each other's peer ----
check "send to receive" \
	same --name send --out '^send: 1048576 bytes to 127.0.0.1:' \
	--peer "$RECEIVE" --peer-out '^receive: 1048576 bytes verified' -- \
	"$LKVM" send --connect "127.0.0.1:{port}" --bytes 1M

# ---- trace: a run's real timeline, as text, JSON and a plot ----
"$LKVM" run --vm none --model lguest --bytes 1M --quiet --trace "$TMP/t.trace" </dev/null >/dev/null 2>&1
trace_cases=(--name trace --out '^  events [0-9]+ \(guest' -- "$LKVM" trace "$TMP/t.trace"
	--and --name trace-json --out '"checks"' -- "$LKVM" trace "$TMP/t.trace" --json)
if command -v gnuplot >/dev/null; then
	# gnuplot is its child, on the same streams
	trace_cases+=(--and --name trace-plot --then "grep -q </svg> {dir}/p.svg" --
		"$LKVM" trace "$TMP/t.trace" --plot "{dir}/p.svg")
else
	echo "note: no gnuplot (apt-get install gnuplot-nox): trace --plot not tried"
fi
check "trace FILE, trace FILE --json, trace FILE --plot OUT.svg" same "${trace_cases[@]}"

finish
