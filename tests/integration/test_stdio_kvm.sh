# test_stdio_kvm.sh -- `run` and `table` on KVM, both host models, whatever
# their standard streams are (issue 27, item 6; the no-VM half, and every
# other command, is test_stdio.sh).
#
# Why: with a VM the launcher's work after the seccomp lock-down is not the
# no-VM one -- the vCPU thread's MMIO exits write the guest's console, the
# console input thread reads stdin into the guest -- and the filter kills
# the process for any call outside its list.  stdio_matrix.py runs each
# case once per kind of stream (a terminal, a regular file, a pipe,
# /dev/null) with all three streams on it, once with stdin and stdout
# closed, and once as a background job of its terminal: one VM boot for
# all of it, a few runs per case, because the emulator is slow.  Checked:
# the exit status (no SIGSYS, no stop, no hang), and the guest's output and
# the stats block wherever they went.
. "$(dirname "$0")/lib.sh"
need_kvm

MATRIX=$(dirname "$0")/stdio_matrix.py
same() { python3 "$MATRIX" --matrix same --timeout "$(scaled 60)" "$@"; }
STATS='^--- lguest-kvm stats ---$'

for model in lguest threaded; do
	check "run --model $model: raw, --stats-json readable afterwards" \
		same --name "kvm-$model-raw" --out '^raw: done' --err "$STATS" --err '^tx_verify +ok$' \
		--json-file "{dir}/s.json" -- \
		"$LKVM" run --vm kvm --model $model --bytes 1M --stats-json "{dir}/s.json"
done
check "run --model lguest: tcp over --net user to receive" \
	same --name kvm-lguest-tcp --out '^tcp: ' --err "$STATS" --err '^guest_tcp_bytes_acked +1048576$' \
	--peer "$LKVM receive --listen 127.0.0.1:0 --ready {ready} --bytes 1M --timeout $(scaled 30)" \
	--peer-out '^receive: 1048576 bytes verified' -- \
	"$LKVM" run --vm kvm --model lguest --workload tcp --net user --peer "10.0.2.2:{port}" --bytes 1M
check "run --workload boot: the banner" \
	same --name kvm-boot --out '^lguest-kvm guest stub .*running at CPL3' --err "$STATS" -- \
	"$LKVM" run --vm kvm --model threaded --workload boot
# A crash's report (the vCPU's registers, under the filter) and the stats.
check "run --fault exception: exit 125, the crash named" \
	same --name kvm-crash --status 125 --err '^lguest-kvm: guest crashed: exception 6' --err "$STATS" -- \
	"$LKVM" run --vm kvm --fault exception
# A run stopped by --max-seconds: where it left the vCPU, and the stats.
check "run --fault hang --max-seconds 1: exit 124, the stats" \
	same --name kvm-time-limit --status 124 --err '^run_end +time-limit$' -- \
	"$LKVM" run --vm kvm --fault hang --quiet --max-seconds 1
# Input: what stdin holds reaches the guest and comes back.  Never /dev/null
# or a background job here: the guest would wait for a line it cannot get.
check "run --workload echo: stdin into the guest and back out" \
	same --name kvm-echo --stdin 'hello from stdin\nquit\n' --stdin-kinds file,pipe,tty --no-background \
	--out '^echo: hello from stdin' --out '^echo: bye' --err "$STATS" -- \
	"$LKVM" run --vm kvm --workload echo --max-seconds "$(scaled 30)"
# The table once, on the terminal (its progress line is for a terminal
# only): its own streams never reach its runs -- each run gets /dev/null and
# a file (lab/table.c), combinations the cases above already have -- so the
# kinds test_stdio.sh tries with --vm none would find nothing new here, at
# about 20 s per table in the emulator.
check "table --rows 10 --repeat 1 --bytes 1M --vm kvm, on a terminal" \
	same --name kvm-table --kinds tty --stdin-kinds tty --no-closed --no-background \
	--out '^Model: lguest  \(median' --out '^10 +[0-9.]+ ' -- \
	"$LKVM" table --rows 10 --repeat 1 --bytes 1M --vm kvm

finish
