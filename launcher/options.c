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
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "host_poll.h"
#include "lguest_kvm_abi.h"
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

bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (*end || end == s || (shift && v > (~0ull >> shift)))
		return false;
	*out = v << shift;
	return true;
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;

	if (!parse_size(s, &v) || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

void run_usage(FILE *f)
{
	fprintf(f,
"usage: lguest-kvm run [options] [GUEST.elf]\n"
"\n"
"Boot the guest (default: the built-in guest stub) on KVM, run its workload and\n"
"print the stats block on exit.\n"
"\n"
"Guest and workload:\n"
"  --mem SIZE           guest RAM (default 256M)\n"
"  --workload W         raw (transmit --bytes, default) | tcp (send --bytes over TCP to a\n"
"                       receiver, see --peer) | echo (console) | boot (banner only)\n"
"  --bytes SIZE         bytes to transmit (default 1G; K/M/G suffixes)\n"
"  --frame N            Ethernet frame size, %u..%u (default 1514)\n"
"  --ring N             TX ring size, power of two up to %u (default 128)\n"
"  --segments N         descriptors per frame, 1..16 (default 3: header, frame in two)\n"
"  --policy P           always | static:N | dynamic | dynamic-exact | event-idx (split\n"
"                       ring) | event-desc (packed ring) (default dynamic)\n"
"  --wait W             spin | halt: how the guest waits for the host (default spin for\n"
"                       raw, halt for tcp)\n"
"  --pace-ns N          guest work per frame before it is queued, e.g. 24000 for the\n"
"                       ~24 us per packet of 2008's guest TCP stack (default 0)\n"
"  --indirect I         never | always | threshold[:N] (default never)\n"
"  --indirect-cost-ns N guest work per indirect table it builds, 0..%u, timed with its\n"
"                       TSC: the 2011 driver's kmalloc, priced (default 0: free)\n"
"  --indirect-cold-lines K  also load K cold cache lines per table, 0..%u, each waiting\n"
"                       for the last (a %u MiB private buffer; needs --mem %uM) (default 0)\n"
"  --layout L           the net queues' ring layout: split (virtio 1.0, default) |\n"
"                       packed (virtio 1.1, VIRTIO_F_RING_PACKED)\n"
"  --boot-status N      test aid: the boot workload exits with status N\n"
"  --fault F            test modes: exception | triple | hang | hostile-{head,next,addr,wrap,\n"
"                       loop,avail,huge,flood} | hostile-indirect-{nested,len,addr,loop,next} |\n"
"                       hostile-trace-{addr,end,junk} (with --trace) |\n"
"                       seccomp-probe (the launcher tries a forbidden system call once\n"
"                       locked down: killed by SIGSYS)\n"
"Host side:\n"
"  --net B              sink (verify and discard; raw's default) | tap[:IFNAME] (a real TAP\n"
"                       device) | user (libslirp, unprivileged; tcp's default unless root)\n"
"  --peer ADDR:PORT     tcp: the receiver as the guest sees it (default 10.99.0.1:5001 on\n"
"                       tap; 10.0.2.2:5001 on user, which is the host's 127.0.0.1:5001)\n"
"  --guest-ip ADDR      tcp: the guest's address (default 10.99.0.2 on tap, 10.0.2.15 on user)\n"
"  --host-ip ADDR/LEN   tap: give the tap this address and bring it up (default: leave a\n"
"                       named tap as it is; a new tap gets 10.99.0.1/24)\n"
"  --tso                tcp over tap: negotiate VIRTIO_NET_F_CSUM and HOST_TSO4, send up\n"
"                       to 64 KiB per frame (2008's table predates it; off by default)\n"
"  --user NAME          after setup, switch to this user (root without --user: nobody);\n"
"                       every capability is dropped either way\n"
"  --stay-root          debugging: a root run keeps uid 0 (capabilities are still dropped)\n"
"  --no-seccomp         debugging: no system call allow-list around the run loop\n"
"  --model M            threaded (ioeventfd + device thread, default) | lguest (exits) |\n"
"                       thread (no VM: the stub's driver and raw workload on a host\n"
"                       thread against the threaded model's devices; needs no /dev/kvm)\n"
"  --exit-cost-ns N     thread model: spin N ns wherever a VM guest would exit (each MMIO\n"
"                       access -- a notify is one -- and each halt); default 0\n"
"  --timeout-us N|adaptive  host poll timer: fixed N us, or 2008's adaptive rule\n"
"                       starting at 500 us (default adaptive)\n"
"  --host-timer T       rearm (stay suppressed while busy, default) | oneshot (2.6.27)\n"
"  --host-poll-us N|adaptive  instead of the timer, the device thread polls the ring\n"
"                       with notifies off for up to N us (0..%u) after each drain, as\n"
"                       vhost-net's busyloop; adaptive: KVM halt-polling's grow/shrink\n"
"                       (threaded and thread models; default 0: the timer)\n"
"  --coalesce U:P       the guest negotiates virtio 1.3 notification coalescing and asks\n"
"                       for a TX interrupt after P packets or U us, whichever first (0:\n"
"                       every packet); its TX interrupts stay on (threaded and thread)\n"
"Output:\n"
"  --stats-json FILE    also write the stats as one JSON object\n"
"  --trace FILE         record both sides' events on one clock into FILE (read it with\n"
"                       'lguest-kvm trace FILE'; docs/trace.md)\n"
"  --trace-events N     each side's ring of events, a power of two (default 1048576);\n"
"                       the guest's takes N x 32 bytes of its RAM\n"
"  --quiet              do not copy the guest's console to stdout\n"
"  --max-seconds N      stop the guest after N seconds (exit 124)\n"
"  -h, --help           this text\n"
"  -V, --version        print the version\n"
"\n"
"Exit status: the guest's own status; 1 host error; 2 usage; 3 transferred data\n"
"failed the host's check; 124 --max-seconds;\n"
"125 guest crash; 126 the guest broke a virtio ring; 128+N on signal N.\n",
		LKVM_FRAME_MIN, LKVM_FRAME_MAX - 12, VQ_MAX_SIZE, LKVM_INDIRECT_COST_NS_MAX, LKVM_INDIRECT_COLD_LINES_MAX,
		LKVM_INDIRECT_COLD_BYTES >> 20, 2 * (LKVM_INDIRECT_COLD_BYTES >> 20), HOST_POLL_US_MAX);
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
/* --model thread runs the stub's raw workload, and only its own: no image,
 * no fault modes (they need a VM to break), no --exit-cost-ns elsewhere. */
static int check_thread_model(const struct run_options *o, bool exit_cost_given)
{
	if (!o->no_vm)
		return exit_cost_given ? usage_error("run", "--exit-cost-ns: only with --model thread (a VM's exits "
						     "cost what they cost)%s", "") : 0;
	if (strcmp(o->workload, "raw"))
		return usage_error("run", "--model thread: runs --workload raw only, not '%s'", o->workload);
	if (o->guest)
		return usage_error("run", "--model thread: runs the built-in stub's code, not the image '%s'", o->guest);
	if (strcmp(o->fault, "none") || o->seccomp_probe)
		return usage_error("run", "--model thread: no --fault modes (they need a VM)%s", "");
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

static bool valid_indirect(const char *s)
{
	uint32_t n;

	if (!strcmp(s, "never") || !strcmp(s, "always") || !strcmp(s, "threshold"))
		return true;
	return !strncmp(s, "threshold:", 10) && parse_u32(s + 10, 1, VQ_MAX_SIZE, &n);
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

/* USECS:PACKETS, each 0..LKVM_COALESCE_MAX. */
static bool valid_coalesce(const char *s)
{
	const char *colon = strchr(s, ':');

	return colon && parse_digits(s, (size_t)(colon - s), LKVM_COALESCE_MAX) &&
	       parse_digits(colon + 1, strlen(colon + 1), LKVM_COALESCE_MAX);
}

static bool valid_fault(const char *s)
{
	static const char *const ok[] = {
		"none", "exception", "triple", "hang", "hostile-head", "hostile-next", "hostile-addr",
		"hostile-wrap", "hostile-loop", "hostile-avail", "hostile-huge", "hostile-flood",
		"hostile-indirect-nested",
		"hostile-indirect-len", "hostile-indirect-addr", "hostile-indirect-loop",
		"hostile-indirect-next", "hostile-trace-addr", "hostile-trace-end", "hostile-trace-junk",
		"seccomp-probe",
	};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (!strcmp(s, ok[i]))
			return true;
	return false;
}

int run_options_parse(struct run_options *o, int argc, char **argv)
{
	enum { O_MEM = 256, O_WORKLOAD, O_BYTES, O_FRAME, O_RING, O_SEGMENTS, O_POLICY, O_WAIT,
	       O_INDIRECT, O_FAULT, O_MODEL, O_TIMEOUT, O_HOST_TIMER, O_STATS_JSON, O_QUIET,
	       O_MAX_SECONDS, O_BOOT_STATUS, O_PACE, O_NET, O_USER, O_PEER, O_GUEST_IP, O_HOST_IP, O_TSO,
	       O_STAY_ROOT, O_NO_SECCOMP, O_EXIT_COST, O_LAYOUT, O_INDIRECT_COST, O_COLD_LINES, O_TRACE,
	       O_TRACE_EVENTS, O_HOST_POLL, O_COALESCE };
	static const struct option longopts[] = {
		{ "mem", required_argument, 0, O_MEM },
		{ "workload", required_argument, 0, O_WORKLOAD },
		{ "bytes", required_argument, 0, O_BYTES },
		{ "frame", required_argument, 0, O_FRAME },
		{ "ring", required_argument, 0, O_RING },
		{ "segments", required_argument, 0, O_SEGMENTS },
		{ "policy", required_argument, 0, O_POLICY },
		{ "wait", required_argument, 0, O_WAIT },
		{ "indirect", required_argument, 0, O_INDIRECT },
		{ "indirect-cost-ns", required_argument, 0, O_INDIRECT_COST },
		{ "indirect-cold-lines", required_argument, 0, O_COLD_LINES },
		{ "fault", required_argument, 0, O_FAULT },
		{ "model", required_argument, 0, O_MODEL },
		{ "timeout-us", required_argument, 0, O_TIMEOUT },
		{ "host-timer", required_argument, 0, O_HOST_TIMER },
		{ "host-poll-us", required_argument, 0, O_HOST_POLL },
		{ "coalesce", required_argument, 0, O_COALESCE },
		{ "stats-json", required_argument, 0, O_STATS_JSON },
		{ "trace", required_argument, 0, O_TRACE },
		{ "trace-events", required_argument, 0, O_TRACE_EVENTS },
		{ "quiet", no_argument, 0, O_QUIET },
		{ "max-seconds", required_argument, 0, O_MAX_SECONDS },
		{ "boot-status", required_argument, 0, O_BOOT_STATUS },
		{ "pace-ns", required_argument, 0, O_PACE },
		{ "exit-cost-ns", required_argument, 0, O_EXIT_COST },
		{ "layout", required_argument, 0, O_LAYOUT },
		{ "net", required_argument, 0, O_NET },
		{ "user", required_argument, 0, O_USER },
		{ "peer", required_argument, 0, O_PEER },
		{ "guest-ip", required_argument, 0, O_GUEST_IP },
		{ "host-ip", required_argument, 0, O_HOST_IP },
		{ "tso", no_argument, 0, O_TSO },
		{ "stay-root", no_argument, 0, O_STAY_ROOT },
		{ "no-seccomp", no_argument, 0, O_NO_SECCOMP },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	struct notify_policy pol;
	bool net_given = false, exit_cost_given = false;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case O_MEM:
			if (!parse_size(optarg, &o->mem) || o->mem < (16ull << 20) || o->mem > (3ull << 30))
				return usage_error("run", "--mem '%s': give a size from 16M to 3G", optarg);
			o->mem &= ~0xfffull;
			break;
		case O_WORKLOAD:
			if (strcmp(optarg, "raw") && strcmp(optarg, "tcp") && strcmp(optarg, "echo") && strcmp(optarg, "boot"))
				return usage_error("run", "--workload '%s': expected raw, tcp, echo or boot", optarg);
			o->workload = optarg;
			break;
		case O_BYTES:
			if (!parse_size(optarg, &o->bytes) || o->bytes == 0)
				return usage_error("run", "--bytes '%s': give a positive size such as 64M or 1G", optarg);
			break;
		case O_FRAME:
			if (!parse_u32(optarg, LKVM_FRAME_MIN, LKVM_FRAME_MAX - 12, &o->frame))
				return usage_error("run", "--frame '%s': out of range", optarg);
			break;
		case O_RING:
			if (!parse_u32(optarg, 2, VQ_MAX_SIZE, &o->ring) || (o->ring & (o->ring - 1)))
				return usage_error("run", "--ring '%s': give a power of two from 2 to 1024", optarg);
			break;
		case O_SEGMENTS:
			if (!parse_u32(optarg, 1, 16, &o->segments))
				return usage_error("run", "--segments '%s': give 1 to 16", optarg);
			break;
		case O_POLICY: o->policy = optarg; break;
		case O_WAIT:
			if (strcmp(optarg, "spin") && strcmp(optarg, "halt"))
				return usage_error("run", "--wait '%s': expected spin or halt", optarg);
			o->wait = optarg;
			break;
		case O_LAYOUT:
			if (strcmp(optarg, "split") && strcmp(optarg, "packed"))
				return usage_error("run", "--layout '%s': expected split or packed", optarg);
			o->layout = optarg;
			break;
		case O_INDIRECT:
			if (!valid_indirect(optarg))
				return usage_error("run", "--indirect '%s': expected never, always, threshold or threshold:N", optarg);
			o->indirect = optarg;
			break;
		case O_INDIRECT_COST:
			if (!parse_u32(optarg, 0, LKVM_INDIRECT_COST_NS_MAX, &o->indirect_cost_ns))
				return usage_error("run", "--indirect-cost-ns '%s': give 0..1000000", optarg);
			break;
		case O_COLD_LINES:
			if (!parse_u32(optarg, 0, LKVM_INDIRECT_COLD_LINES_MAX, &o->indirect_cold_lines))
				return usage_error("run", "--indirect-cold-lines '%s': give 0..1024", optarg);
			break;
		case O_FAULT:
			if (!valid_fault(optarg))
				return usage_error("run", "--fault '%s': unknown test mode (see --help)", optarg);
			/* The probe is the launcher's own test: the guest never sees it. */
			o->seccomp_probe = !strcmp(optarg, "seccomp-probe");
			o->fault = o->seccomp_probe ? "none" : optarg;
			break;
		case O_MODEL:
			if (!strcmp(optarg, "threaded"))
				o->net.model = NET_MODEL_THREADED;
			else if (!strcmp(optarg, "lguest"))
				o->net.model = NET_MODEL_LGUEST;
			else if (!strcmp(optarg, "thread"))
				o->net.model = NET_MODEL_THREADED;
			else
				return usage_error("run", "--model '%s': expected threaded, lguest or thread", optarg);
			o->no_vm = !strcmp(optarg, "thread");
			break;
		case O_EXIT_COST:
			if (!parse_u32(optarg, 0, 10000000, &o->exit_cost_ns))
				return usage_error("run", "--exit-cost-ns '%s': give 0..10000000", optarg);
			exit_cost_given = true;
			break;
		case O_TIMEOUT:
			if (!strcmp(optarg, "adaptive")) {
				o->net.adaptive_timeout = true;
				o->net.timeout_us = 500;
			} else if (parse_u32(optarg, 1, 10000000, &o->net.timeout_us)) {
				o->net.adaptive_timeout = false;
			} else {
				return usage_error("run", "--timeout-us '%s': give 1..10000000 or 'adaptive'", optarg);
			}
			break;
		case O_HOST_TIMER:
			if (!strcmp(optarg, "rearm"))
				o->net.host_timer = HOST_TIMER_REARM;
			else if (!strcmp(optarg, "oneshot"))
				o->net.host_timer = HOST_TIMER_ONESHOT;
			else
				return usage_error("run", "--host-timer '%s': expected rearm or oneshot", optarg);
			break;
		case O_HOST_POLL:
			if (!host_poll_parse(optarg, &o->net.host_poll_us, &o->net.host_poll_adaptive))
				return usage_error("run", "--host-poll-us '%s': give 0..1000 or 'adaptive'", optarg);
			break;
		case O_COALESCE:
			if (!valid_coalesce(optarg))
				return usage_error("run", "--coalesce '%s': give USECS:PACKETS, each 0..1000000 (e.g. 50:64)",
						   optarg);
			o->coalesce = optarg;
			break;
		case O_STATS_JSON: o->stats_json = optarg; break;
		case O_TRACE: o->trace = optarg; break;
		case O_TRACE_EVENTS:
			if (!parse_u32(optarg, 1, LKVM_TRACE_EVENTS_MAX, &o->trace_events) ||
			    (o->trace_events & (o->trace_events - 1)))
				return usage_error("run", "--trace-events '%s': give a power of two up to 4194304", optarg);
			break;
		case O_QUIET: o->quiet = true; break;
		case O_MAX_SECONDS:
			if (!parse_u32(optarg, 1, 86400, &o->max_seconds))
				return usage_error("run", "--max-seconds '%s': give 1..86400", optarg);
			break;
		case O_NET:
			net_given = true;
			if (!strcmp(optarg, "sink")) {
				o->net.backend = NET_BACKEND_SINK;
			} else if (!strcmp(optarg, "user")) {
				o->net.backend = NET_BACKEND_USER;
			} else if (!strcmp(optarg, "tap") ||
				   (!strncmp(optarg, "tap:", 4) && optarg[4] && strlen(optarg + 4) < sizeof(o->net.tap_name))) {
				o->net.backend = NET_BACKEND_TAP;
				snprintf(o->net.tap_name, sizeof(o->net.tap_name), "%s", optarg[3] ? optarg + 4 : "");
			} else {
				return usage_error("run", "--net '%s': expected sink, user, tap or tap:IFNAME (at most 15 characters)", optarg);
			}
			break;
		case O_USER: o->user = optarg; break;
		case O_STAY_ROOT: o->stay_root = true; break;
		case O_NO_SECCOMP: o->no_seccomp = true; break;
		case O_PEER: {
			struct sockaddr_in peer;

			if (!endpoint_parse(optarg, false, &peer))
				return usage_error("run", "--peer '%s': give an IPv4 address and port, e.g. 10.99.0.1:5001", optarg);
			o->peer_ip = ntohl(peer.sin_addr.s_addr);
			o->peer_port = ntohs(peer.sin_port);
			break;
		}
		case O_GUEST_IP:
			if (!parse_ipv4_prefix(optarg, &o->guest_ip, NULL))
				return usage_error("run", "--guest-ip '%s': give an IPv4 address, e.g. 10.99.0.2", optarg);
			break;
		case O_TSO: o->tso = true; break;
		case O_HOST_IP:
			if (!parse_ipv4_prefix(optarg, &o->net.host_ip, &o->net.host_prefix))
				return usage_error("run", "--host-ip '%s': give an IPv4 address and prefix, e.g. 10.99.0.1/24", optarg);
			break;
		case O_PACE:
			if (!parse_u32(optarg, 0, 10000000, &o->pace_ns))
				return usage_error("run", "--pace-ns '%s': give 0..10000000", optarg);
			break;
		case O_BOOT_STATUS:
			if (!parse_u32(optarg, 0, 255, &o->boot_status))
				return usage_error("run", "--boot-status '%s': give 0..255", optarg);
			break;
		case 'h': run_usage(stdout); return -1;
		case 'V': printf("lguest-kvm %s\n", LKVM_VERSION); return -1;
		default:
			return usage_error("run", "unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (!strcmp(o->workload, "tcp")) {
		apply_tcp_defaults(o, net_given);
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
	if (!notify_policy_parse(&pol, o->policy, strlen(o->policy), (uint16_t)o->ring))
		return usage_error("run", "--policy '%s': expected always, static:N (N <= ring), dynamic, dynamic-exact, "
				   "event-idx or event-desc", o->policy);
	/* Each layout has its own event suppression. */
	if (pol.kind == NOTIFY_EVENT_IDX && strcmp(o->layout, "split"))
		return usage_error("run", "--policy event-idx: the split ring's; with --layout packed use event-desc%s", "");
	if (pol.kind == NOTIFY_EVENT_DESC && strcmp(o->layout, "packed"))
		return usage_error("run", "--policy event-desc: the packed ring's; add --layout packed (or use event-idx)%s",
				   "");
	if (o->segments > o->ring && !strcmp(o->indirect, "never")) {
		char both[48];

		snprintf(both, sizeof(both), "%u with --ring %u", o->segments, o->ring);
		return usage_error("run", "--segments %s: a frame would need more descriptors than the ring has",
				   both);
	}
	if (o->indirect_cold_lines && o->mem < 2ull * LKVM_INDIRECT_COLD_BYTES) {
		char n[16];

		snprintf(n, sizeof(n), "%u", o->indirect_cold_lines);
		return usage_error("run", "--indirect-cold-lines %s: the guest walks a 64 MiB buffer; give --mem 128M or more",
				   n);
	}
	/* The guest's ring comes out of its RAM: leave it at least half. */
	if (o->trace && (uint64_t)o->trace_events * sizeof(struct lkvm_trace_event) > o->mem / 2) {
		char n[48];

		snprintf(n, sizeof(n), "%u (%u MiB)", o->trace_events,
			 (unsigned)(((uint64_t)o->trace_events * sizeof(struct lkvm_trace_event)) >> 20));
		return usage_error("run", "--trace-events %s: the guest keeps its ring in RAM; give a larger --mem "
				   "or fewer events", n);
	}
	if (o->coalesce && o->net.model == NET_MODEL_LGUEST)
		return usage_error("run", "--coalesce: the control queue and its timer are the device thread's "
				   "(--model threaded or thread), not --model lguest%s", "");
	if ((o->net.host_poll_us || o->net.host_poll_adaptive) && o->net.model == NET_MODEL_LGUEST)
		return usage_error("run", "--host-poll-us: polls on the device thread (--model threaded or thread), "
				   "not --model lguest%s", "");
	if (o->stay_root && o->user)
		return usage_error("run", "--stay-root with --user %s: pick one", o->user);
	if (optind < argc - 1)
		return usage_error("run", "unexpected argument '%s'", argv[optind + 1]);
	if (optind == argc - 1)
		o->guest = argv[optind];
	return check_thread_model(o, exit_cost_given);
}
