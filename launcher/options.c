/*
 * options.c -- parse and check `lguest-kvm run` options.
 *
 * Every value the guest will see is checked here first, so a typo is a
 * usage error (exit 2) with one line naming the option, not a guest that
 * boots and then fails.  The notification policy is checked with the very
 * parser the guest uses (notify_policy_parse).
 */
#include "options.h"

#include <errno.h>
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "host_poll.h"
#include "lguest_kvm_abi.h"
#include "linux_options.h"
#include "lkvm_frame.h"
#include "notify_policy.h"
#include "tcp_endpoint.h"
#include "virtqueue.h"

void run_options_defaults(struct run_options *o)
{
	memset(o, 0, sizeof(*o));
	o->mem = 256ull << 20;
	o->workload = "raw";
	o->policy = "dynamic";
	o->bytes = 1ull << 30;
	o->frame = 1514;
	o->ring = 128;
	o->segments = 3;
	o->wait = NULL;         /* spin for raw, halt for tcp */
	o->indirect = "never";
	o->layout = "split";
	o->fault = "none";
	o->trace_events = 1u << 20;
	o->net = (struct net_config){
		.model = NET_MODEL_THREADED,
		.host_timer = HOST_TIMER_REARM,
		.timeout_us = 500,
		.adaptive_timeout = true,
		.mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 },
	};
}

/* "A.B.C.D" (host order) with, if `prefix`, "/LEN" after it. */
static bool parse_ipv4_prefix(const char *s, uint32_t *ip, uint8_t *prefix)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = prefix ? strchr(s, '/') : NULL;
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	struct in_addr in;
	uint32_t n;

	if ((prefix && !slash) || len >= sizeof(addr))
		return false;
	memcpy(addr, s, len);
	addr[len] = 0;
	if (inet_pton(AF_INET, addr, &in) != 1)
		return false;
	if (prefix) {
		if (slash[1] < '0' || slash[1] > '9' || !parse_u32(slash + 1, 0, 32, &n))
			return false;
		*prefix = (uint8_t)n;
	}
	*ip = ntohl(in.s_addr);
	return true;
}

/* The tcp workload's network, where the options left it open: user-mode
 * networking unless root (who gets the 2008 setup, a tap), and the
 * addresses that go with the backend. */
/* --vm none runs the stub's own raw and tcp workloads and its hostile
 * rings: no image, no CPU faults (they need a VM to break), no trace ring
 * tricks (their addresses are a VM's), no --exit-cost-ns with a VM. */
static int check_no_vm(const struct run_options *o, bool exit_cost_given)
{
	if (!o->no_vm)
		return exit_cost_given ? usage_error("run", "--exit-cost-ns: only with --vm none (a VM's exits "
						     "cost what they cost)%s", "") : 0;
	if (strcmp(o->workload, "raw") && strcmp(o->workload, "tcp"))
		return usage_error("run", "--vm none: runs --workload raw or tcp only, not '%s'", o->workload);
	if (o->guest)
		return usage_error("run", "--vm none: runs the built-in stub's code, not the image '%s'", o->guest);
	if ((strcmp(o->fault, "none") && (strncmp(o->fault, "hostile-", 8) || !strncmp(o->fault, "hostile-trace-", 14))) ||
	    o->seccomp_probe)
		return usage_error("run", "--vm none: of the --fault modes only the hostile rings (hostile-*, not "
				   "hostile-trace-*); '%s' needs a VM", o->seccomp_probe ? "seccomp-probe" : o->fault);
	return 0;
}

static void apply_tcp_defaults(struct run_options *o, bool net_given)
{
	bool user;

	if (!net_given)
		o->net.backend = geteuid() == 0 ? NET_BACKEND_TAP : NET_BACKEND_USER;
	user = o->net.backend == NET_BACKEND_USER;
	if (!o->peer_ip) {
		o->peer_ip = user ? 0x0a000202 : 0x0a630001;      /* 10.0.2.2 | 10.99.0.1 */
		o->peer_port = 5001;
	}
	if (!o->guest_ip)
		o->guest_ip = user ? 0x0a00020f : 0x0a630002;     /* 10.0.2.15 | 10.99.0.2 */
	if (o->net.backend == NET_BACKEND_TAP && !o->net.tap_name[0] && !o->net.host_ip) {
		o->net.host_ip = 0x0a630001;                       /* a new tap: configure it, as lguest did */
		o->net.host_prefix = 24;
	}
	if (!o->wait)
		o->wait = "halt";
}

/* ---- what one option's value can say: the table's own parsers ---- */

#define RUN(field) offsetof(struct run_options, field)

static bool mem_to_pages(const char *arg, void *opts)
{
	struct run_options *o = opts;

	(void)arg;
	o->mem &= ~0xfffull;   /* whole pages */
	return true;
}

static bool parse_indirect(const char *arg, void *opts)
{
	uint32_t n;

	if (strcmp(arg, "never") && strcmp(arg, "always") && strcmp(arg, "threshold") &&
	    (strncmp(arg, "threshold:", 10) || !parse_u32(arg + 10, 1, VQ_MAX_SIZE, &n)))
		return false;
	((struct run_options *)opts)->indirect = arg;
	return true;
}

/* The probe is the launcher's own test: the guest never sees it. */
static bool fault_or_probe(const char *arg, void *opts)
{
	struct run_options *o = opts;

	o->seccomp_probe = !strcmp(arg, "seccomp-probe");
	if (o->seccomp_probe)
		o->fault = "none";
	return true;
}

static bool parse_model(const char *arg, void *opts)
{
	struct run_options *o = opts;

	o->net.model = strcmp(arg, "lguest") ? NET_MODEL_THREADED : NET_MODEL_LGUEST;
	o->model_thread = !strcmp(arg, "thread");
	return true;
}

static bool parse_vm(const char *arg, void *opts)
{
	struct run_options *o = opts;

	o->no_vm = !strcmp(arg, "none");
	o->vm_given = true;
	return true;
}

static bool note_exit_cost(const char *arg, void *opts)
{
	(void)arg;
	((struct run_options *)opts)->exit_cost_given = true;
	return true;
}

static bool parse_timeout(const char *arg, void *opts)
{
	struct net_config *net = &((struct run_options *)opts)->net;

	if (!strcmp(arg, "adaptive")) {
		net->adaptive_timeout = true;
		net->timeout_us = 500;
		return true;
	}
	net->adaptive_timeout = false;
	return parse_u32(arg, 1, 10000000, &net->timeout_us);
}

static bool parse_host_timer(const char *arg, void *opts)
{
	((struct run_options *)opts)->net.host_timer = strcmp(arg, "oneshot") ? HOST_TIMER_REARM : HOST_TIMER_ONESHOT;
	return true;
}

static bool parse_timer_wait(const char *arg, void *opts)
{
	((struct run_options *)opts)->net.timer_spin = !strcmp(arg, "spin");
	return true;
}

static bool parse_host_poll(const char *arg, void *opts)
{
	struct net_config *net = &((struct run_options *)opts)->net;

	return host_poll_parse(arg, &net->host_poll_us, &net->host_poll_adaptive);
}

/* `len` decimal digits, at most `max` (no suffix: a count, not a size). */
static bool parse_digits(const char *s, size_t len, uint32_t max)
{
	uint64_t v = 0;

	if (!len || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	return v <= max;
}

/* --coalesce USECS:PACKETS, each 0..LKVM_COALESCE_MAX; kept as given, for
 * the guest's command line. */
static bool parse_coalesce(const char *arg, void *opts)
{
	const char *colon = strchr(arg, ':');

	if (!colon || !parse_digits(arg, (size_t)(colon - arg), LKVM_COALESCE_MAX) ||
	    !parse_digits(colon + 1, strlen(colon + 1), LKVM_COALESCE_MAX))
		return false;
	((struct run_options *)opts)->coalesce = arg;
	return true;
}

static bool parse_net(const char *arg, void *opts)
{
	struct run_options *o = opts;

	o->net_given = true;
	if (!strcmp(arg, "sink")) {
		o->net.backend = NET_BACKEND_SINK;
	} else if (!strcmp(arg, "user")) {
		o->net.backend = NET_BACKEND_USER;
	} else if (!strcmp(arg, "tap") ||
		   (!strncmp(arg, "tap:", 4) && arg[4] && strlen(arg + 4) < sizeof(o->net.tap_name))) {
		o->net.backend = NET_BACKEND_TAP;
		snprintf(o->net.tap_name, sizeof(o->net.tap_name), "%s", arg[3] ? arg + 4 : "");
	} else {
		return false;
	}
	return true;
}

static bool parse_peer(const char *arg, void *opts)
{
	struct run_options *o = opts;
	struct sockaddr_in peer;

	if (!endpoint_parse(arg, false, &peer))
		return false;
	o->peer_ip = ntohl(peer.sin_addr.s_addr);
	o->peer_port = ntohs(peer.sin_port);
	return true;
}

static bool parse_guest_ip(const char *arg, void *opts)
{
	return parse_ipv4_prefix(arg, &((struct run_options *)opts)->guest_ip, NULL);
}

static bool parse_host_ip(const char *arg, void *opts)
{
	struct run_options *o = opts;

	return parse_ipv4_prefix(arg, &o->net.host_ip, &o->net.host_prefix);
}

/* What --policy accepts; checked after parsing, against --ring and --layout. */
#define POLICY_ACCEPTS "always, static:N (N <= ring), dynamic, dynamic-exact, event-idx (split ring) or " \
		       "event-desc (packed ring)"

/* ---- the options of `run`, each described once ---- */

const struct opt run_opts[] = {
	OPT_SECTION_ROW("Guest and workload:"),
	{ OPT_SIZE, "mem", "SIZE", RUN(mem), 16ull << 20, 3ull << 30, .parse = mem_to_pages,
	  .accepts = "16M to 3G", .help = "guest RAM" },
	{ OPT_WORD, "workload", "W", RUN(workload), .words = "raw|tcp|echo|boot",
	  .help = "raw transmits --bytes; tcp sends --bytes over TCP to a receiver (see --peer); echo copies the "
		  "console; boot prints the banner only" },
	{ OPT_SIZE, "bytes", "SIZE", RUN(bytes), 1, UINT64_MAX, .accepts = "a positive size such as 64M or 1G",
	  .help = "bytes to transmit, K/M/G suffixes" },
	{ OPT_U32, "frame", "N", RUN(frame), LKVM_FRAME_MIN, LKVM_FRAME_MAX - 12, .help = "Ethernet frame size" },
	{ OPT_POW2, "ring", "N", RUN(ring), 2, VQ_MAX_SIZE, .help = "TX ring size" },
	{ OPT_U32, "segments", "N", RUN(segments), 1, 16,
	  .help = "descriptors per frame: 1 is header and frame together; otherwise the header, then the frame in "
		  "N-1 parts" },
	{ OPT_STRING, "policy", "P", RUN(policy), .accepts = POLICY_ACCEPTS,
	  .help = "the guest's notification policy" },
	{ OPT_WORD, "wait", "W", RUN(wait), .words = "spin|halt", .def = "spin for raw, halt for tcp",
	  .help = "how the guest waits for the host" },
	{ OPT_U32, "pace-ns", "N", RUN(pace_ns), 0, 10000000,
	  .help = "raw: guest work per frame before it is queued, e.g. 24000 for the ~24 us per packet of 2008's "
		  "guest TCP stack; tcp: a data segment at most every N ns, the sender's own work included (2008's "
		  "time per packet, all in)" },
	{ OPT_CUSTOM, "indirect", "I", RUN(indirect), .parse = parse_indirect,
	  .accepts = "never, always, threshold or threshold:N (N 1 to 1024)", .def = "never",
	  .help = "when the guest puts a frame's descriptors in an indirect table: the 2011 patch's rule" },
	{ OPT_U32, "indirect-cost-ns", "N", RUN(indirect_cost_ns), 0, LKVM_INDIRECT_COST_NS_MAX,
	  .help = "guest work per indirect table it builds, timed with its TSC: the 2011 driver's kmalloc, priced" },
	{ OPT_U32, "indirect-cold-lines", "K", RUN(indirect_cold_lines), 0, LKVM_INDIRECT_COLD_LINES_MAX,
	  .help = "also load K cold cache lines per table, each waiting for the last (a 64 MiB private buffer; "
		  "needs --mem 128M)" },
	{ OPT_WORD, "layout", "L", RUN(layout), .words = "split|packed",
	  .help = "the net queues' ring layout: split (virtio 1.0) or packed (virtio 1.1, VIRTIO_F_RING_PACKED)" },
	{ OPT_U32, "boot-status", "N", RUN(boot_status), 0, 255,
	  .help = "test aid: the boot workload exits with status N" },
	{ OPT_WORD, "fault", "F", RUN(fault), .parse = fault_or_probe,
	  .words = "none|exception|triple|hang|hostile-head|hostile-next|hostile-addr|hostile-wrap|hostile-loop|"
		   "hostile-avail|hostile-huge|hostile-flood|hostile-indirect-nested|hostile-indirect-len|"
		   "hostile-indirect-addr|hostile-indirect-loop|hostile-indirect-next|hostile-trace-addr|"
		   "hostile-trace-end|hostile-trace-junk|seccomp-probe",
	  .help = "test modes: the guest faults, hangs or breaks its rings (hostile-trace-* with --trace); "
		  "seccomp-probe: the launcher tries a forbidden system call once locked down (killed by SIGSYS)" },
	OPT_SECTION_ROW("Host side:"),
	{ OPT_CUSTOM, "net", "B", OPT_NO_FIELD, .parse = parse_net,
	  .accepts = "sink, user, tap or tap:IFNAME (at most 15 characters)",
	  .def = "sink for raw; for tcp, user unless root, who gets a tap",
	  .help = "sink verifies and discards; tap writes to a real TAP device; user is libslirp, unprivileged, "
		  "tcp only" },
	{ OPT_CUSTOM, "peer", "ADDR:PORT", OPT_NO_FIELD, .parse = parse_peer,
	  .accepts = "an IPv4 address and a port 1 to 65535, e.g. 10.99.0.1:5001",
	  .def = "10.99.0.1:5001 on tap; 10.0.2.2:5001 on user, which is the host's 127.0.0.1:5001",
	  .help = "tcp: the receiver as the guest sees it" },
	{ OPT_CUSTOM, "guest-ip", "ADDR", OPT_NO_FIELD, .parse = parse_guest_ip,
	  .accepts = "an IPv4 address, e.g. 10.99.0.2", .def = "10.99.0.2 on tap, 10.0.2.15 on user",
	  .help = "tcp: the guest's address" },
	{ OPT_CUSTOM, "host-ip", "ADDR/LEN", OPT_NO_FIELD, .parse = parse_host_ip,
	  .accepts = "an IPv4 address and a prefix length 0 to 32, e.g. 10.99.0.1/24",
	  .def = "leave a named tap as it is; a new tap gets 10.99.0.1/24",
	  .help = "tap: give the tap this address and bring it up" },
	{ OPT_FLAG, "tso", NULL, RUN(tso),
	  .help = "tcp over tap: negotiate VIRTIO_NET_F_CSUM and HOST_TSO4, send up to 64 KiB per frame (2008's "
		  "table predates it)" },
	{ OPT_STRING, "user", "NAME", RUN(user),
	  .help = "after setup, switch to this user (root without --user: nobody); every capability is dropped "
		  "either way" },
	{ OPT_FLAG, "stay-root", NULL, RUN(stay_root),
	  .help = "debugging: a root run keeps uid 0 (capabilities are still dropped)" },
	{ OPT_FLAG, "no-seccomp", NULL, RUN(no_seccomp),
	  .help = "debugging: no system call allow-list around the run loop" },
	{ OPT_WORD, "vm", "V", OPT_NO_FIELD, .words = "kvm|none", .parse = parse_vm, .def = "kvm",
	  .help = "where the guest runs: kvm, a VM; none, no VM: the stub's own driver and workload on a host "
		  "thread (needs no /dev/kvm)" },
	{ OPT_WORD, "model", "M", OPT_NO_FIELD, .words = "threaded|lguest|thread", .parse = parse_model,
	  .def = "threaded",
	  .help = "how the host services the ring: threaded, a device thread woken by ioeventfd; lguest, the "
		  "guest's thread drains at each notify and a waker thread interrupts it for timer expiries; "
		  "thread is the old spelling of --vm none --model threaded" },
	{ OPT_U32, "exit-cost-ns", "N", RUN(exit_cost_ns), 0, 10000000, .parse = note_exit_cost,
	  .help = "--vm none: spin N ns wherever a VM guest would exit (each MMIO access -- a notify is one --, "
		  "each halt, each timer interrupt of the lguest model)" },
	{ OPT_CUSTOM, "timeout-us", "N|adaptive", OPT_NO_FIELD, .parse = parse_timeout,
	  .accepts = "1 to 10000000 or adaptive", .def = "adaptive",
	  .help = "host poll timer: fixed N us, or 2008's adaptive rule starting at 500 us" },
	{ OPT_WORD, "host-timer", "T", OPT_NO_FIELD, .words = "rearm|oneshot", .parse = parse_host_timer,
	  .def = "rearm", .help = "rearm stays suppressed while the timer finds work; oneshot is 2.6.27's" },
	{ OPT_WORD, "timer-wait", "W", OPT_NO_FIELD, .words = "sleep|spin", .parse = parse_timer_wait,
	  .def = "sleep",
	  .help = "lguest model: the waker sleeps on a timerfd until each expiry, or spins on the clock near it "
		  "(for machines whose timers fire late: CPU 1 is busy while a deadline is near)" },
	{ OPT_CUSTOM, "host-poll-us", "N|adaptive", OPT_NO_FIELD, .parse = parse_host_poll,
	  .accepts = "0 to 1000 or adaptive", .def = "0: the timer",
	  .help = "instead of the timer, the device thread polls the ring with notifies off for up to N us after "
		  "each drain (vhost-net's busyloop, 256 chains / 512 KiB per run); adaptive: KVM halt-polling's "
		  "grow/shrink (--model threaded only)" },
	{ OPT_CUSTOM, "coalesce", "U:P", OPT_NO_FIELD, .parse = parse_coalesce,
	  .accepts = "USECS:PACKETS, each 0 to 1000000 (e.g. 50:64)", .def = "off",
	  .help = "the guest negotiates virtio 1.3 notification coalescing and asks for a TX interrupt after P "
		  "packets or U us, whichever first (0: every packet); its TX interrupts stay on (--model threaded "
		  "only)" },
	OPT_SECTION_ROW("Output:"),
	{ OPT_STRING, "stats-json", "FILE", RUN(stats_json), .help = "also write the stats as one JSON object" },
	{ OPT_STRING, "trace", "FILE", RUN(trace),
	  .help = "record both sides' events on one clock into FILE (read it with 'lguest-kvm trace FILE'; "
		  "docs/trace.md)" },
	{ OPT_POW2, "trace-events", "N", RUN(trace_events), 1, LKVM_TRACE_EVENTS_MAX,
	  .help = "each side's ring of events; the guest's takes N x 32 bytes of its RAM" },
	{ OPT_FLAG, "quiet", NULL, RUN(quiet), .help = "do not copy the guest's console to stdout" },
	{ OPT_U32, "max-seconds", "N", RUN(max_seconds), 1, 86400, .def = "none",
	  .help = "stop the guest after N seconds (exit 124)" },
	OPT_SECTION_ROW("Linux guest (docs/linux-guest.md):"),
	{ OPT_WORD, "guest", "G", OPT_NO_FIELD, .words = "linux", .parse = linux_parse_guest, .def = "the stub",
	  .help = "linux: boot the newest /boot/vmlinuz-* with an initramfs built from its modules, busybox and "
		  "lkvm-guest; its /init does --workload boot (default) or tcp" },
	{ OPT_STRING, "kernel", "FILE", RUN(kernel), .help = "boot this bzImage (32-bit boot protocol, ACPI, COM1)" },
	{ OPT_STRING, "initrd", "FILE", RUN(initrd), .help = "with --kernel: its initramfs" },
	{ OPT_STRING, "append", "LINE", RUN(append), .help = "add LINE to the kernel's command line" },
	{ OPT_CUSTOM, "withhold-features", "LIST", OPT_NO_FIELD, .parse = linux_parse_withhold,
	  .accepts = "a comma list of event-idx, indirect-desc, ring-packed, csum, mac, host-tso4",
	  .help = "a Linux guest: the devices do not offer these features" },
	{ OPT_END },
};

static const char run_intro[] =
"usage: lguest-kvm run [options] [GUEST.elf]\n"
"\n"
"Boot the guest (default: the built-in guest stub) on KVM, run its workload and\n"
"print the stats block on exit.\n"
"\n";

static const char run_outro[] =
"\n"
"Exit status: the guest's own status; 1 host error; 2 usage; 3 transferred data\n"
"failed the host's check; 124 --max-seconds;\n"
"125 guest crash; 126 the guest broke a virtio ring; 128+N on signal N.\n";

/* ---- what no one option can say: one against another ---- */

/* The workload against the network: tcp's defaults, raw's limits. */
static int check_workload_net(struct run_options *o)
{
	/* --model thread is --vm none --model threaded, and says so. */
	if (o->model_thread) {
		if (o->vm_given && !o->no_vm)
			return usage_error("run", "--model thread with --vm kvm: thread means --vm none --model threaded%s", "");
		o->no_vm = true;
	}
	if (!strcmp(o->workload, "tcp") || run_is_linux(o)) {   /* Linux's own stack needs a network */
		apply_tcp_defaults(o, o->net_given);
		if (o->frame < 62 || o->frame > 1514) {
			char n[16];

			snprintf(n, sizeof(n), "%u", o->frame);
			return usage_error("run", "--frame %s: the tcp workload sends 62..1514-byte frames (MTU 1500)", n);
		}
	} else if (o->net.backend == NET_BACKEND_USER) {
		return usage_error("run", "--net user: carries --workload tcp only (%s frames are not IP)", o->workload);
	}
	if (o->tso && (strcmp(o->workload, "tcp") || o->net.backend != NET_BACKEND_TAP))
		return usage_error("run", "--tso: needs --workload tcp over --net tap%s", "");
	o->net.offloads = o->tso;
	o->net.peer_ip = o->peer_ip;      /* --net user: the only destination slirp lets through */
	o->net.peer_port = o->peer_port;
	if (!o->wait)
		o->wait = "spin";
	return 0;
}

/* The policy against the ring and its layout (the guest's own parser). */
static int check_policy_ring(const struct run_options *o)
{
	struct notify_policy pol;

	if (!notify_policy_parse(&pol, o->policy, strlen(o->policy), (uint16_t)o->ring))
		return usage_error("run", "--policy '%s': expected " POLICY_ACCEPTS, o->policy);
	/* Each layout has its own event suppression. */
	if (pol.kind == NOTIFY_EVENT_IDX && strcmp(o->layout, "split"))
		return usage_error("run", "--policy event-idx: the split ring's; with --layout packed use event-desc%s", "");
	if (pol.kind == NOTIFY_EVENT_DESC && strcmp(o->layout, "packed"))
		return usage_error("run", "--policy event-desc: the packed ring's; add --layout packed (or use event-idx)%s",
				   "");
	if (o->segments > o->ring && !strcmp(o->indirect, "never")) {
		char both[96];

		snprintf(both, sizeof(both), "%u with --ring %u: expected at most %u", o->segments, o->ring, o->ring);
		return usage_error("run", "--segments %s (a descriptor per segment), or an --indirect mode", both);
	}
	return 0;
}

/* What the guest keeps in its RAM, and who the launcher becomes. */
static int check_ram_user(const struct run_options *o)
{
	char n[160];

	if (o->indirect_cold_lines && o->mem < 2ull * LKVM_INDIRECT_COLD_BYTES) {
		snprintf(n, sizeof(n), "%u", o->indirect_cold_lines);
		return usage_error("run", "--indirect-cold-lines %s: the guest walks a 64 MiB buffer; give --mem 128M or more",
				   n);
	}
	/* The guest's ring comes out of its RAM: leave it at least half. */
	if (o->trace && (uint64_t)o->trace_events * sizeof(struct lkvm_trace_event) > o->mem / 2) {
		uint64_t most = o->mem / 2 / sizeof(struct lkvm_trace_event);

		/* the largest power of two that fits */
		while (most & (most - 1))
			most &= most - 1;
		snprintf(n, sizeof(n), "%u: expected at most %llu with --mem %llu%s", o->trace_events,
			 (unsigned long long)most,
			 (unsigned long long)(o->mem & 0xfffff ? o->mem : o->mem >> 20), o->mem & 0xfffff ? "" : "M");
		return usage_error("run", "--trace-events %s (the guest keeps its ring in half its RAM); give a larger "
				   "--mem or fewer events", n);
	}
	if (o->stay_root && o->user)
		return usage_error("run", "--stay-root with --user %s: pick one", o->user);
	return 0;
}

/* Polling and coalescing are the device thread's (issue 26). */
static int check_device_thread(const struct run_options *o)
{
	if (o->coalesce && o->net.model == NET_MODEL_LGUEST)
		return usage_error("run", "--coalesce: the control queue and its timer are the device thread's "
				   "(--model threaded), not --model lguest%s", "");
	if ((o->net.host_poll_us || o->net.host_poll_adaptive) && o->net.model == NET_MODEL_LGUEST)
		return usage_error("run", "--host-poll-us: polls on the device thread (--model threaded), not "
				   "--model lguest%s", "");
	return 0;
}

int run_options_parse(struct run_options *o, int argc, char **argv)
{
	struct run_options defaults;
	const struct opt_command cmd = { .name = "run", .table = run_opts, .intro = run_intro, .outro = run_outro,
					 .defaults = &defaults };
	int first, rc;

	run_options_defaults(&defaults);
	rc = opt_parse(&cmd, o, argc, argv, &first);
	if (!rc && run_is_linux(o))
		rc = linux_options_check(o);
	if (!rc)
		rc = check_workload_net(o);
	if (!rc && !run_is_linux(o))   /* Linux's policy is its own */
		rc = check_policy_ring(o);
	if (!rc)
		rc = check_ram_user(o);
	if (!rc)
		rc = check_device_thread(o);
	if (rc)
		return rc;
	if (first < argc - 1)
		return usage_error("run", "unexpected argument '%s'", argv[first + 1]);
	if (first == argc - 1)
		o->guest = argv[first];
	return check_no_vm(o, o->exit_cost_given);
}
