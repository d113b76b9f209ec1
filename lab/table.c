/*
 * table.c -- `lguest-kvm table`: run the sweep, tabulate medians and spreads.
 *
 * Each measurement is a child `lguest-kvm run --quiet --stats-json F`, so a
 * crashed or failed run cannot take the table with it, and the numbers in
 * the table are exactly the numbers a single run prints.  For every model
 * and row it runs --repeat children, reads their JSON, and prints the median
 * with the spread ((max - min) / median) next to the 2008 figures where the
 * seed has them.  A failed run marks its row failed, with the reason, and
 * makes the command exit 1; no number is ever invented for it.
 *
 * The sweep and the text table are here; the rows it fills (table_sweep.h)
 * go to the CSV, JSON and gnuplot writers in table_writers.c.
 */
#include "table.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/virtio_ring.h>

#include "clock.h"
#include "diag.h"
#include "gnuplot.h"
#include "host_kind.h"
#include "lguest_kvm_abi.h"
#include "options.h"
#include "opt_table.h"
#include "paper2008.h"
#include "preset.h"
#include "stats.h"
#include "table_sweep.h"
#include "vm.h"

/* Ctrl-C reaches the running child too (same process group); SIGTERM sent
 * to us alone is passed on.  Either way the child prints its stats and
 * exits, and the table prints what it has. */
static volatile sig_atomic_t table_signal;

/* Said before the sweep and under the table when the host is QEMU's TCG. */
static const char emulated_note[] =
	"this host is QEMU's software emulator (TCG, CPUID TCGTCGTCGTCG): notifies and timeouts are "
	"real, seconds and Gbit/s are an emulator's -- never compare them with real hardware";

static void on_table_signal(int sig)
{
	table_signal = sig;
}

/* A row for every model, with the child options in `args` (at most
 * MAX_ROW_ARGS, NULL-terminated; each one argv word). */
static int add_row(struct table *t, const char *label, const char *policy, const char *const *args)
{
	if (t->nrows == MAX_ROWS)
		return usage_error("table", "--rows: too many rows (at most 64)%s", "");
	for (unsigned m = 0; m < 2; m++) {
		struct row *r = &t->rows[m][t->nrows];

		memset(r, 0, sizeof(*r));
		r->label = label;
		r->policy = policy;
		for (; args[r->nargs] && r->nargs < MAX_ROW_ARGS; r->nargs++)
			snprintf(r->args[r->nargs], sizeof(r->args[0]), "%s", args[r->nargs]);
	}
	t->nrows++;
	return 0;
}

/* A named policy (not a threshold) that a row's word may be. */
static bool policy_word(const char *word)
{
	return !strcmp(word, "dynamic") || !strcmp(word, "always") || !strcmp(word, "event-idx") ||
	       !strcmp(word, "dynamic-exact") || !strcmp(word, "event-desc");
}

/* The label and --policy value of a notify or cost row's word: a number
 * is a static threshold.  0, or a usage error. */
static int policy_of_word(const struct table *t, const char *word, char *label, size_t lsize, char *policy,
			  size_t psize)
{
	char *end;
	long n = strtol(word, &end, 10);
	uint32_t ring = 128;   /* run's default */

	/* The last --ring passed on is the one every run gets (a bad one is
	 * the run parser's to refuse). */
	for (unsigned i = 0; i + 1 < t->npass; i++)
		if (!strcmp(t->pass[i], "--ring") && !parse_u32(t->pass[i + 1], 2, 1024, &ring))
			ring = 1024;
	if (*word && !*end && n > (long)ring && n <= 1024) {
		char what[64];

		snprintf(what, sizeof(what), "threshold %ld: expected at most --ring %u", n, ring);
		return usage_error("table", "--rows: %s (or dynamic|dynamic-exact|always|event-idx|event-desc)", what);
	}
	if (*word && !*end && n >= 0 && n <= 1024) {
		snprintf(label, lsize, "%ld", n);
		snprintf(policy, psize, "static:%ld", n);
	} else if (policy_word(word)) {
		snprintf(label, lsize, "%c%s", toupper((unsigned char)word[0]), word + 1);
		snprintf(policy, psize, "%s", word);
	} else {
		return usage_error("table", "--rows: '%s' is not a threshold (0 to 1024, at most --ring) or dynamic|"
				   "dynamic-exact|always|event-idx|event-desc", word);
	}
	return 0;
}

static char row_labels[MAX_ROWS][32], row_policies[MAX_ROWS][24];

static int add_notify_row(struct table *t, const char *word)
{
	unsigned i = t->nrows;

	if (i == MAX_ROWS)
		return usage_error("table", "--rows: too many rows (at most 64)%s", "");
	if (policy_of_word(t, word, row_labels[i], sizeof(row_labels[i]), row_policies[i], sizeof(row_policies[i])))
		return EXIT_USAGE;
	return add_row(t, row_labels[i], row_policies[i], (const char *const[]){ "--policy", row_policies[i], NULL });
}

/* Rows of the indirect experiment: policy x ring 128, 256, and with
 * --indirect-costs x each price of a table (the cost innermost, so each
 * policy and ring is one line of the sweep's plot). */
static int add_indirect_row(struct table *t, const char *word)
{
	static const char *const rings[2] = { "--ring=128", "--ring=256" };
	static char modes[MAX_ROWS][24], costs[MAX_ROWS][32];
	unsigned ncost = t->nicosts ? t->nicosts : 1;

	if (strcmp(word, "never") && strcmp(word, "always") && strncmp(word, "threshold", 9))
		return usage_error("table", "--rows: '%s' is not never|always|threshold[:N]", word);
	for (unsigned k = 0; k < 2; k++)
		for (unsigned c = 0; c < ncost; c++) {
			unsigned i = t->nrows;
			const char *args[] = { "--indirect", modes[i], rings[k], costs[i], NULL };

			if (i == MAX_ROWS)
				return usage_error("table", "--rows: too many rows (at most 64): fewer --rows or --indirect-costs%s", "");
			snprintf(modes[i], sizeof(modes[i]), "%s", word);
			if (t->nicosts) {
				snprintf(row_labels[i], sizeof(row_labels[i]), "%s/%s/%uns", word, rings[k] + 7, t->icosts[c]);
				snprintf(costs[i], sizeof(costs[i]), "--indirect-cost-ns=%u", t->icosts[c]);
			} else {
				snprintf(row_labels[i], sizeof(row_labels[i]), "%s/%s", word, rings[k] + 7);
				args[3] = NULL;
			}
			if (add_row(t, row_labels[i], NULL, args))
				return EXIT_USAGE;
			for (unsigned m = 0; m < 2; m++) {
				t->rows[m][i].mode = modes[i];
				t->rows[m][i].ring = k ? 256 : 128;
				t->rows[m][i].indirect_cost_ns = t->nicosts ? t->icosts[c] : 0;
			}
		}
	return 0;
}

/* Rows of the cost experiment (thread model): the policy x the price of an
 * exit x the guest's work per frame, ringtest's knob against 2008's pace. */
/* A row of one policy (its label and --policy value) with up to two more
 * child options, each one argv word or NULL: the grid experiments' rows.
 * The row's index, or -1 after the usage error. */
static int add_policy_row(struct table *t, const char *label, const char *policy, const char *a, const char *b)
{
	unsigned i = t->nrows;

	if (i == MAX_ROWS) {
		usage_error("table", "--rows: too many rows (at most 64)%s", "");
		return -1;
	}
	snprintf(row_labels[i], sizeof(row_labels[i]), "%s", label);
	snprintf(row_policies[i], sizeof(row_policies[i]), "%s", policy);
	if (add_row(t, row_labels[i], row_policies[i], (const char *const[]){ "--policy", row_policies[i], a, b, NULL }))
		return -1;
	return (int)i;
}

static const unsigned cost_exit_us[] = { 0, 1, 5, 26, 100 }, cost_pace_us[] = { 0, 24 };

static int add_cost_rows(struct table *t, const char *word)
{
	char label[16], policy[24];

	if (policy_of_word(t, word, label, sizeof(label), policy, sizeof(policy)))
		return EXIT_USAGE;
	for (unsigned p = 0; p < sizeof(cost_pace_us) / sizeof(cost_pace_us[0]); p++)
		for (unsigned c = 0; c < sizeof(cost_exit_us) / sizeof(cost_exit_us[0]); c++) {
			char cost[24], pace[24];
			int i;

			snprintf(cost, sizeof(cost), "--exit-cost-ns=%u", cost_exit_us[c] * 1000);
			snprintf(pace, sizeof(pace), "--pace-ns=%u", cost_pace_us[p] * 1000);
			if ((i = add_policy_row(t, label, policy, cost, pace)) < 0)
				return EXIT_USAGE;
			t->rows[0][i].exit_cost_us = t->rows[1][i].exit_cost_us = cost_exit_us[c];
			t->rows[0][i].pace_us = t->rows[1][i].pace_us = cost_pace_us[p];
		}
	return 0;
}

/* Rows of the layout experiment: each policy on the split ring, then on
 * the packed one; "event" is each layout's own event suppression
 * (event-idx on split, event-desc on packed). */
static int add_layout_rows(struct table *t, const char *word)
{
	static const char *const layouts[2] = { "split", "packed" };

	for (unsigned k = 0; k < 2; k++) {
		unsigned i = t->nrows;
		const char *w = strcmp(word, "event") ? word : k ? "event-desc" : "event-idx";

		if (i == MAX_ROWS)
			return usage_error("table", "--rows: too many rows (at most 64)%s", "");
		if (policy_of_word(t, w, row_labels[i], sizeof(row_labels[i]), row_policies[i], sizeof(row_policies[i])) ||
		    add_row(t, row_labels[i], row_policies[i],
			    (const char *const[]){ "--policy", row_policies[i], "--layout", layouts[k], NULL }))
			return EXIT_USAGE;
		t->rows[0][i].layout = t->rows[1][i].layout = layouts[k];
	}
	return 0;
}

/* The experiments that run only on the device thread's models: their
 * rows run in interleaved rounds. */
static bool modern_experiment(const struct table *t)
{
	return !strcmp(t->experiment, "poll") || !strcmp(t->experiment, "coalesce");
}

/* Rows of the poll experiment (issue 26): each policy x the device
 * thread's poll window, 0 (2008's timer host) to adaptive. */
static const char *const poll_windows[] = { "0", "5", "20", "50", "200", "adaptive" };

static int add_poll_rows(struct table *t, const char *word)
{
	char label[16], policy[24];

	if (policy_of_word(t, word, label, sizeof(label), policy, sizeof(policy)))
		return EXIT_USAGE;
	for (unsigned k = 0; k < sizeof(poll_windows) / sizeof(poll_windows[0]); k++) {
		int i = add_policy_row(t, label, policy, "--host-poll-us", poll_windows[k]);

		if (i < 0)
			return EXIT_USAGE;
		t->rows[0][i].poll = t->rows[1][i].poll = poll_windows[k];
	}
	return 0;
}

/* Rows of the coalesce experiment (issue 26): each policy x virtio 1.3's
 * max_usecs x max_packets, set by the guest's driver (--coalesce). */
static const unsigned coal_usecs[] = { 0, 10, 50, 200, 1000 }, coal_packets[] = { 1, 8, 64, 256 };

static int add_coalesce_rows(struct table *t, const char *word)
{
	char label[16], policy[24];

	if (policy_of_word(t, word, label, sizeof(label), policy, sizeof(policy)))
		return EXIT_USAGE;
	for (unsigned u = 0; u < sizeof(coal_usecs) / sizeof(coal_usecs[0]); u++)
		for (unsigned k = 0; k < sizeof(coal_packets) / sizeof(coal_packets[0]); k++) {
			char coal[24];
			int i;

			snprintf(coal, sizeof(coal), "--coalesce=%u:%u", coal_usecs[u], coal_packets[k]);
			if ((i = add_policy_row(t, label, policy, coal, NULL)) < 0)
				return EXIT_USAGE;
			t->rows[0][i].coal_usecs = t->rows[1][i].coal_usecs = coal_usecs[u];
			t->rows[0][i].coal_packets = t->rows[1][i].coal_packets = coal_packets[k];
		}
	return 0;
}

/* Rows of the linux experiment (issue 25): Debian's kernel, its drivers
 * unchanged, beside the stub's TCP sender on the same host models.
 * "linux" offers everything we support; "linux-no-event-idx" withholds
 * VIRTIO_RING_F_EVENT_IDX, so that Linux honours NO_NOTIFY as the 2008
 * guest did; any other word is a stub row (a policy). */
static int add_linux_row(struct table *t, const char *word)
{
	int i;

	if (!strcmp(word, "linux"))
		return add_row(t, "Linux", "linux", (const char *const[]){ "--guest", "linux", NULL });
	if (!strcmp(word, "linux-no-event-idx"))
		return add_row(t, "Linux-no-evidx", "linux",
			       (const char *const[]){ "--guest", "linux", "--withhold-features", "event-idx", NULL });
	if (word[strspn(word, "0123456789")] && !policy_word(word))
		return usage_error("table", "--rows: '%s' is not linux, linux-no-event-idx or a stub policy (a threshold, "
				   "dynamic, dynamic-exact, always, event-idx or event-desc)", word);
	i = t->nrows;
	if (add_notify_row(t, word))
		return EXIT_USAGE;
	/* the label says whose driver it is */
	snprintf(row_labels[i], sizeof(row_labels[i]), "Stub-%s", row_policies[i]);
	return 0;
}

int table_build_rows(struct table *t, const char *spec)
{
	const char *def = !strcmp(t->experiment, "indirect") ? "never,always,threshold"
			: !strcmp(t->experiment, "cost") ? "40,dynamic,always,event-idx"
			: !strcmp(t->experiment, "layout") ? "10,20,40,64,100,dynamic,always,event"
			: !strcmp(t->experiment, "poll") ? "dynamic,64,always,event-idx"
			: !strcmp(t->experiment, "coalesce") ? "dynamic"
			: !strcmp(t->experiment, "linux") ? "dynamic,event-idx,linux,linux-no-event-idx"
			: "10,20,30,40,50,60,70,100,128,dynamic,always,event-idx";
	char buf[512], *save = NULL, *word;

	/* Cut short, a list would silently lose (or change) its last rows. */
	if (spec && strlen(spec) >= sizeof(buf))
		return usage_error("table", "--rows '%.40s...': too long (at most 511 characters)", spec);
	snprintf(buf, sizeof(buf), "%s", spec ? spec : def);
	for (word = strtok_r(buf, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		int rc = !strcmp(t->experiment, "indirect") ? add_indirect_row(t, word)
		       : !strcmp(t->experiment, "cost") ? add_cost_rows(t, word)
		       : !strcmp(t->experiment, "layout") ? add_layout_rows(t, word)
		       : !strcmp(t->experiment, "poll") ? add_poll_rows(t, word)
		       : !strcmp(t->experiment, "coalesce") ? add_coalesce_rows(t, word)
		       : !strcmp(t->experiment, "linux") ? add_linux_row(t, word)
		       : add_notify_row(t, word);

		if (rc)
			return rc;
	}
	return t->nrows ? 0 : usage_error("table", "--rows '%s' names no rows", spec ? spec : "");
}

/* ---- one child run ---- */

_Static_assert(TABLE_CHILD_ARGV == 17 + MAX_PASS + MAX_ROW_ARGS + 1, "table.h's TABLE_CHILD_ARGV is out of date");

unsigned table_child_argv(const struct table *t, const char *model, const struct row *r, const char *json,
			  const char *trace, const char *peer, char **argv)
{
	unsigned a = 0;

	argv[a++] = "/proc/self/exe";
	argv[a++] = "run";
	argv[a++] = "--quiet";
	argv[a++] = "--stats-json";
	argv[a++] = (char *)json;
	argv[a++] = "--vm";
	argv[a++] = (char *)t->vm;
	argv[a++] = "--model";
	argv[a++] = (char *)model;
	/* A run that hangs must not hang the table: far above any 1 GiB run. */
	argv[a++] = "--max-seconds";
	argv[a++] = "900";
	if (trace) {
		argv[a++] = "--trace";
		argv[a++] = (char *)trace;
	}
	if (t->tcp) {
		argv[a++] = "--net";
		argv[a++] = t->tcp_tap ? "tap:lkvm0" : "user";
		argv[a++] = "--peer";
		/* before the receiver listens (check_rows), where it will be */
		argv[a++] = (char *)(peer ? peer : t->tcp_tap ? "10.99.0.1:5001" : "10.0.2.2:5001");
	}
	for (unsigned i = 0; i < t->npass; i++)
		argv[a++] = t->pass[i];
	for (unsigned i = 0; i < r->nargs; i++)
		argv[a++] = (char *)r->args[i];
	argv[a] = NULL;
	return a;
}

/* Runs one sample, traced into `trace` unless that is NULL; returns the
 * child's exit status (or 128+signal). */
static int run_one(struct table *t, const char *model, struct row *r, const char *trace, double *v, char *why,
		   size_t why_size)
{
	char json[] = "/tmp/lkvm-table-XXXXXX", errf[] = "/tmp/lkvm-table-err-XXXXXX";
	char *argv[TABLE_CHILD_ARGV];
	int jfd = mkstemp(json), efd = mkstemp(errf), status = 0;
	pid_t pid;
	double ring_full = 0, indirect = 0, direct = 0;
	uint64_t features = 0;
	bool linux_row = r->policy && !strcmp(r->policy, "linux");   /* indirect rows have no policy */

	memset(v, 0, M_COUNT * sizeof(*v));

	if (jfd < 0 || efd < 0) {
		snprintf(why, why_size, "cannot create temporary files: %s", strerror(errno));
		if (jfd >= 0)
			close(jfd), unlink(json);
		if (efd >= 0)
			close(efd), unlink(errf);
		return EXIT_ERROR;
	}
	close(jfd);
	if (t->tcp && tcp_lab_start_receiver(&t->lab, t->bytes, why, why_size) < 0) {
		close(efd), unlink(json), unlink(errf);
		return EXIT_ERROR;
	}
	table_child_argv(t, model, r, json, trace, t->tcp ? t->lab.peer_arg : NULL, argv);

	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(efd, STDERR_FILENO);
		if (tcp_lab_enter(&t->lab) < 0) {
			fprintf(stderr, "lguest-kvm: cannot join the table's network namespace\n");
			_exit(EXIT_ERROR);
		}
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(efd);
	if (pid > 0 && table_signal)       /* arrived while we were forking */
		kill(pid, table_signal);
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		if (table_signal)
			kill(pid, table_signal);
	status = pid < 0 ? EXIT_ERROR : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (t->tcp) {
		char rwhy[200];
		int rst = tcp_lab_finish_receiver(&t->lab, status != 0, rwhy, sizeof(rwhy));

		/* The receiver's verdict stands beside the launcher's: a stream
		 * it did not verify fails the sample even if the guest was happy. */
		if (!status && rst) {
			snprintf(why, why_size, "receiver: %.200s", rwhy);
			status = EXIT_VERIFY;
			unlink(json);
			unlink(errf);
			return status;
		}
	}
	if (pid < 0) {
		snprintf(why, why_size, "fork: %s", strerror(errno));
	} else if (status) {
		diag_last_line(errf, why, why_size);
	} else if (!stats_json_number(json, "tx_transfer_seconds", &v[M_SECONDS]) ||
		   !stats_json_number(json, "tx_gbit_per_second", &v[M_GBPS]) ||
		   !stats_json_number(json, "tx_timer_timeouts", &v[M_TIMEOUTS]) ||
		   !stats_json_number(json, "tx_queue_notifies", &v[M_NOTIFIES]) ||
		   !stats_json_number(json, "tx_pop_ns_per_chain_direct", &v[M_POP_DIRECT_NS]) ||
		   !stats_json_number(json, "tx_pop_ns_per_chain_indirect", &v[M_POP_INDIRECT_NS]) ||
		   !stats_json_number(json, "tx_device_cpu_seconds", &v[M_DEVICE_CPU]) ||
		   !stats_json_number(json, "tx_device_wakeups", &v[M_WAKEUPS]) ||
		   !stats_json_number(json, "tx_interrupts", &v[M_INTERRUPTS]) ||
		   !stats_json_number(json, "tx_poll_seconds", &v[M_POLL_SECONDS]) ||
		   !stats_json_number(json, "tx_frames", &v[M_FRAMES]) ||
		   !stats_json_number(json, "tx_payload_bytes", &v[M_PAYLOAD]) ||
		   !stats_json_u64(json, "net_features_negotiated", &features) ||
		   /* the stub's own report; a Linux guest makes none */
		   (!linux_row && (!stats_json_number(json, "guest_tx_threshold_final", &v[M_THRESHOLD]) ||
				   !stats_json_number(json, "guest_tx_ring_full", &ring_full) ||
				   !stats_json_number(json, "guest_tx_buffers_indirect", &indirect) ||
				   !stats_json_number(json, "guest_tx_buffers_direct", &direct) ||
				   !stats_json_number(json, "guest_tx_indirect_build_ns_per_table", &v[M_BUILD_NS]) ||
				   !stats_json_number(json, "guest_tx_waits_halted", &v[M_HALTS])))) {
		snprintf(why, why_size, "the run's stats JSON lacks a counter");
		status = EXIT_ERROR;
	} else if (linux_row) {
		/* No guest report says how much was acknowledged; the receiver
		 * verified all --bytes of it (above), and that is the payload. */
		v[M_PAYLOAD] = (double)t->bytes;
		v[M_GBPS] = v[M_SECONDS] > 0 ? t->bytes * 8.0 / v[M_SECONDS] / 1e9 : 0;
	}
	v[M_EVENT_IDX] = (double)(features >> VIRTIO_RING_F_EVENT_IDX & 1);
	v[M_RING_FULL] = ring_full;
	v[M_INDIRECT_SHARE] = indirect + direct > 0 ? indirect / (indirect + direct) : 0;
	unlink(json);
	unlink(errf);
	return status;
}

/* ---- statistics and output ---- */

void table_row_summarise(struct row *r)
{
	double col[MAX_REPEAT];

	for (unsigned m = 0; m < M_COUNT && r->n; m++) {
		for (unsigned i = 0; i < r->n; i++)
			col[i] = r->v[i][m];
		qsort(col, r->n, sizeof(col[0]), stats_cmp_double);
		r->min[m] = col[0];
		r->max[m] = col[r->n - 1];
		r->median[m] = r->n % 2 ? col[r->n / 2] : (col[r->n / 2 - 1] + col[r->n / 2]) / 2;
	}
}

static void progress(struct table *t, const char *model, const struct row *r, unsigned rep)
{
	double el = monotonic_seconds() - t->t0, eta = t->done ? el / t->done * (t->total - t->done) : 0;

	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\r\033[K%s: row %s, repeat %u/%u -- %u/%u runs, elapsed %.0f s, ETA %.0f s",
		model, r->label, rep, t->repeat, t->done, t->total, el, eta);
	fflush(stderr);
}

/* The seed's row beside ours, and ours over it per GiB. */
static const char *paper_cells(const struct table *t, const struct row *r, char *buf, size_t size)
{
	const struct paper_row *p = paper2008_find(r->policy);
	double g = table_per_gib(t);

	if (!p)
		return "";
	snprintf(buf, size, "%9.4f %8.0f %8.0f | %6.2f %7.3f", p->seconds, p->timeouts, p->notifies,
		 r->median[M_TIMEOUTS] * g / p->timeouts, r->median[M_NOTIFIES] * g / p->notifies);
	return buf;
}

/* Under a notify table: how its shape compares with 2008's. */
static void print_verdict(const struct table *t, unsigned mi, FILE *f)
{
	struct shape_verdict v;
	char text[1024];

	table_shape(t, mi, &v);
	shape_describe(&v, text, sizeof(text));
	fprintf(f, "%s", text);
}

/* The cost experiment: one line per policy x exit cost x pace. */
static void print_cost_table(const struct table *t, FILE *f)
{
	fprintf(f, "\nModel: %s, no VM  (median of %u; +-%% is (max-min)/median)\n", t->models[0], t->repeat);
	fprintf(f, "%-10s %-9s %-8s %-17s %-17s %-17s %-7s %s\n", "Threshold", "Exit-us", "Pace-us", "Seconds",
		"Timeouts", "Notifies", "Gbit/s", "Final-thr");
	for (unsigned i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[0][i];
		char s[40], a[40], b[40];

		if (r->failed[0]) {
			fprintf(f, "%-10s %-9u %-8u FAILED: %s\n", r->label, r->exit_cost_us, r->pace_us, r->failed);
			continue;
		}
		snprintf(s, sizeof(s), "%.4f +-%.0f%%", r->median[M_SECONDS], spread_pct(r, M_SECONDS));
		snprintf(a, sizeof(a), "%.0f +-%.0f%%", r->median[M_TIMEOUTS], spread_pct(r, M_TIMEOUTS));
		snprintf(b, sizeof(b), "%.0f +-%.0f%%", r->median[M_NOTIFIES], spread_pct(r, M_NOTIFIES));
		fprintf(f, "%-10s %-9u %-8u %-17s %-17s %-17s %-7.2f %.0f\n", r->label, r->exit_cost_us, r->pace_us, s,
			a, b, r->median[M_GBPS], r->median[M_THRESHOLD]);
	}
}

/* One layout's cells of a layout-experiment line. */
static void print_layout_cells(const struct row *r, FILE *f)
{
	char s[40], a[40], b[40];

	if (r->failed[0]) {
		fprintf(f, " | FAILED: %-40.40s", r->failed);
		return;
	}
	snprintf(s, sizeof(s), "%.4f +-%.0f%%", r->median[M_SECONDS], spread_pct(r, M_SECONDS));
	snprintf(a, sizeof(a), "%.0f +-%.0f%%", r->median[M_TIMEOUTS], spread_pct(r, M_TIMEOUTS));
	snprintf(b, sizeof(b), "%.0f +-%.0f%%", r->median[M_NOTIFIES], spread_pct(r, M_NOTIFIES));
	fprintf(f, " | %-15s %-14s %-15s", s, a, b);
}

/* The layout experiment: each policy's split row and packed row (built in
 * pairs by add_layout_rows) on one line. */
static void print_layout_table(const struct table *t, FILE *f)
{
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		fprintf(f, "\nModel: %s%s  (median of %u; +-%% is (max-min)/median)\n", t->models[mi],
			strcmp(t->vm, "none") ? "" : ", no VM", t->repeat);
		fprintf(f, "%-11s | split: %-8s %-14s %-15s | packed: %-7s %-14s %s\n", "Threshold", "Seconds",
			"Timeouts", "Notifies", "Seconds", "Timeouts", "Notifies");
		for (unsigned i = 0; i + 1 < t->nrows; i += 2) {
			const struct row *split = &t->rows[mi][i], *packed = &t->rows[mi][i + 1];

			fprintf(f, "%-11s", strncmp(split->policy, "event", 5) ? split->label : "Event");
			print_layout_cells(split, f);
			print_layout_cells(packed, f);
			fprintf(f, "\n");
		}
	}
}

/* A median with its range, "2.10 [1.95-2.31]". */
static const char *median_range(const struct row *r, enum metric m, const char *fmt, char *buf, size_t size)
{
	char a[24], b[24], c[24];

	snprintf(a, sizeof(a), fmt, r->median[m]);
	snprintf(b, sizeof(b), fmt, r->min[m]);
	snprintf(c, sizeof(c), fmt, r->max[m]);
	snprintf(buf, size, "%s [%s-%s]", a, b, c);
	return buf;
}

/* The indirect experiment with --indirect-costs: every row (policy, ring,
 * price of a table) with what the guest and the host measured of that
 * price, then Gbit/s alone as a policy x cost grid, then the crossovers. */
static void print_indirect_sweep(const struct table *t, FILE *f)
{
	struct crossover cx[MAX_CROSSOVERS];
	unsigned ncx = table_crossovers(t, cx);

	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		fprintf(f, "\nModel: %s%s  (median [min-max] of %u; indirect cost sweep)\n", t->models[mi],
			strcmp(t->vm, "none") ? "" : ", no VM", t->repeat);
		fprintf(f, "%-15s %7s  %-22s %-8s %-9s %-8s %-20s %s\n", "Indirect/ring", "Cost-ns", "Gbit/s", "Indirect",
			"Ring-full", "Notifies", "Build-ns/table", "Pop-ns direct/indirect");
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];
			char mr[32], g[80], b[80];

			snprintf(mr, sizeof(mr), "%s/%u", r->mode, r->ring);
			if (r->failed[0]) {
				fprintf(f, "%-15s %7u  FAILED: %s\n", mr, r->indirect_cost_ns, r->failed);
				continue;
			}
			fprintf(f, "%-15s %7u  %-22s %-8.2f %-9.0f %-8.0f %-20s %.0f/%.0f\n", mr, r->indirect_cost_ns,
				median_range(r, M_GBPS, "%.2f", g, sizeof(g)), r->median[M_INDIRECT_SHARE],
				r->median[M_RING_FULL], r->median[M_NOTIFIES],
				median_range(r, M_BUILD_NS, "%.0f", b, sizeof(b)), r->median[M_POP_DIRECT_NS],
				r->median[M_POP_INDIRECT_NS]);
		}
		fprintf(f, "\nGbit/s (median) and indirect share, by the price of a table:\n%-15s", "Indirect/ring");
		for (unsigned c = 0; c < t->nicosts; c++)
			fprintf(f, " %14u ns", t->icosts[c]);
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];
			char mr[32], cell[24];

			if (r->indirect_cost_ns == t->icosts[0]) {
				snprintf(mr, sizeof(mr), "%s/%u", r->mode, r->ring);
				fprintf(f, "\n%-15s", mr);
			}
			if (r->failed[0])
				snprintf(cell, sizeof(cell), "FAILED");
			else
				snprintf(cell, sizeof(cell), "%.2f (%.2f)", r->median[M_GBPS], r->median[M_INDIRECT_SHARE]);
			fprintf(f, " %17s", cell);
		}
		fprintf(f, "\nCrossover, from the medians (first price at which threshold's Gbit/s exceeds always's),\n"
			   "and paired by round (median over rounds of threshold's Gbit/s / always's in that round):\n");
		for (unsigned k = 0, shown = 0; k <= ncx; k++) {
			char line[400];

			if (k == ncx) {
				if (!shown)
					fprintf(f, "  none to compute: the sweep needs an always row and a threshold row\n");
				break;
			}
			if (cx[k].model != mi)
				continue;
			crossover_describe(&cx[k], line, sizeof(line));
			fprintf(f, "  %s\n", line);
			crossover_describe_paired(t, &cx[k], line, sizeof(line));
			fprintf(f, "  %s\n", line);
			shown++;
		}
	}
}

/* Per GiB of payload, from a row's medians. */
static double per_gib(const struct row *r, enum metric m)
{
	return r->median[M_PAYLOAD] > 0 ? r->median[m] * (double)(1ull << 30) / r->median[M_PAYLOAD] : 0;
}

/* The poll experiment: per model, each policy's six windows, then what
 * the best window bought and at what price in the device's CPU. */
static void print_poll_table(const struct table *t, FILE *f)
{
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		fprintf(f, "\nModel: %s  (median of %u in interleaved rounds; per GiB of payload; +-%% is "
			"(max-min)/median)\n", t->models[mi], t->repeat);
		fprintf(f, "%-10s %-9s %-16s %-14s %-11s %-13s %-12s %s\n", "Threshold", "Poll-us", "Seconds/GiB",
			"Kicks/GiB", "Wakeups/GiB", "Device-CPU-s", "Poll-s(wall)", "Timeouts/GiB");
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];
			char sec[32];

			if (r->failed[0]) {
				fprintf(f, "%-10s %-9s FAILED: %s\n", r->label, r->poll, r->failed);
				continue;
			}
			snprintf(sec, sizeof(sec), "%.3f +-%.0f%%", per_gib(r, M_SECONDS), spread_pct(r, M_SECONDS));
			fprintf(f, "%-10s %-9s %-16s %-14.0f %-11.0f %-13.3f %-12.3f %.0f\n", r->label, r->poll, sec,
				per_gib(r, M_NOTIFIES), per_gib(r, M_WAKEUPS), per_gib(r, M_DEVICE_CPU),
				per_gib(r, M_POLL_SECONDS), per_gib(r, M_TIMEOUTS));
		}
		fprintf(f, "Kicks saved by polling, per policy (N = 0 against the window with the fewest kicks):\n");
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *base = &t->rows[mi][i], *best = NULL;

			if (strcmp(base->poll, "0"))
				continue;
			for (unsigned k = i + 1; k < t->nrows && strcmp(t->rows[mi][k].poll, "0"); k++) {
				const struct row *r = &t->rows[mi][k];

				if (!r->failed[0] && r->n && (!best || per_gib(r, M_NOTIFIES) < per_gib(best, M_NOTIFIES)))
					best = r;
			}
			if (base->failed[0] || !base->n || !best) {
				fprintf(f, "  %-10s not measured\n", base->label);
				continue;
			}
			double k0 = per_gib(base, M_NOTIFIES), kb = per_gib(best, M_NOTIFIES);
			double dcpu = per_gib(best, M_DEVICE_CPU) - per_gib(base, M_DEVICE_CPU);

			fprintf(f, "  %-10s %.0f -> %.0f kicks/GiB at %s us (%.1fx fewer); device CPU %+.3f s/GiB", base->label,
				k0, kb, best->poll, kb > 0 ? k0 / kb : 0, dcpu);
			if (k0 > kb)
				fprintf(f, ", %+.0f ns per avoided kick\n", dcpu * 1e9 / (k0 - kb));
			else
				fprintf(f, ", no kick avoided\n");
		}
	}
}

/* Interrupts per GiB that the coalescing rule predicts for row r at its
 * mean frame rate: frames / the packets one notification covers, every
 * packet when either limit is 0.  The form is min(max_packets,
 * max_usecs x rate); with `opening` the window also holds the packet that
 * opened it, min(max_packets, 1 + max_usecs x rate) -- what a steady stream
 * gives exactly, and where the two differ most, at 10 us. */
static double coal_predicted(const struct row *r, bool opening)
{
	double rate = r->median[M_SECONDS] > 0 ? r->median[M_FRAMES] / r->median[M_SECONDS] : 0;   /* frames/s */
	double group = r->coal_usecs * 1e-6 * rate + (opening ? 1 : 0);

	if (!r->coal_usecs || !r->coal_packets)
		group = 1;
	else if (r->coal_packets < group)
		group = r->coal_packets;
	return per_gib(r, M_FRAMES) / (group < 1 ? 1 : group);
}

static bool within_10pct(double got, double want)
{
	return want > 0 && got >= 0.9 * want && got <= 1.1 * want;
}

/* The coalesce experiment: interrupts per GiB against both predictions. */
static void print_coalesce_table(const struct table *t, FILE *f)
{
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		unsigned within = 0, within_opening = 0, rows = 0;

		fprintf(f, "\nModel: %s  (median of %u in interleaved rounds; per GiB of payload)\n", t->models[mi],
			t->repeat);
		fprintf(f, "%-10s %-7s %-8s %-16s %-13s %-13s %-8s %-8s %-12s %s\n", "Threshold", "Usecs", "Packets",
			"Seconds/GiB", "Irqs/GiB", "Predicted", "Irq/pred", "Irq/+1", "Halts/GiB", "Kicks/GiB");
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];
			double pred, pred_opening, irq;
			char sec[32];

			if (r->failed[0]) {
				fprintf(f, "%-10s %-7u %-8u FAILED: %s\n", r->label, r->coal_usecs, r->coal_packets, r->failed);
				continue;
			}
			pred = coal_predicted(r, false);
			pred_opening = coal_predicted(r, true);
			irq = per_gib(r, M_INTERRUPTS);
			rows++;
			within += within_10pct(irq, pred);
			within_opening += within_10pct(irq, pred_opening);
			snprintf(sec, sizeof(sec), "%.3f +-%.0f%%", per_gib(r, M_SECONDS), spread_pct(r, M_SECONDS));
			fprintf(f, "%-10s %-7u %-8u %-16s %-13.0f %-13.0f %-8.2f %-8.2f %-12.0f %.0f\n", r->label,
				r->coal_usecs, r->coal_packets, sec, irq, pred, pred > 0 ? irq / pred : 0,
				pred_opening > 0 ? irq / pred_opening : 0, per_gib(r, M_HALTS), per_gib(r, M_NOTIFIES));
		}
		fprintf(f, "Rows within 10%% of the prediction: %u of %u\n", within, rows);
		fprintf(f, "Rows within 10%% of it with the window's opening packet counted (Irq/+1): %u of %u\n",
			within_opening, rows);
	}
}

/* The linux experiment: each row's counts per GiB, and whether its driver
 * took event-idx -- the one feature that decides whether NO_NOTIFY (2008's
 * suppression) or avail_event (the modern one) governs its kicks. */
static void print_linux_table(const struct table *t, FILE *f)
{
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		fprintf(f, "\nModel: %s  (median of %u in interleaved rounds; per GiB of payload; +-%% is "
			"(max-min)/median)\n", t->models[mi], t->repeat);
		fprintf(f, "%-15s %-9s %-16s %-17s %-17s %-13s %s\n", "Guest", "Event-idx", "Seconds/GiB", "Timeouts/GiB",
			"Notifies/GiB", "Irqs/GiB", "Frames/GiB");
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];
			char sec[32], to[32], no[32];

			if (r->failed[0]) {
				fprintf(f, "%-15s FAILED: %s\n", r->label, r->failed);
				continue;
			}
			snprintf(sec, sizeof(sec), "%.3f +-%.0f%%", per_gib(r, M_SECONDS), spread_pct(r, M_SECONDS));
			snprintf(to, sizeof(to), "%.0f +-%.0f%%", per_gib(r, M_TIMEOUTS), spread_pct(r, M_TIMEOUTS));
			snprintf(no, sizeof(no), "%.0f +-%.0f%%", per_gib(r, M_NOTIFIES), spread_pct(r, M_NOTIFIES));
			fprintf(f, "%-15s %-9s %-16s %-17s %-17s %-13.0f %.0f\n", r->label,
				r->min[M_EVENT_IDX] == r->max[M_EVENT_IDX] ? (r->median[M_EVENT_IDX] ? "yes" : "no") : "mixed",
				sec, to, no, per_gib(r, M_INTERRUPTS), per_gib(r, M_FRAMES));
		}
	}
}

static void print_table(const struct table *t, FILE *f)
{
	bool indirect = !strcmp(t->experiment, "indirect");

	if (!strcmp(t->experiment, "poll")) {
		print_poll_table(t, f);
		return;
	}
	if (!strcmp(t->experiment, "coalesce")) {
		print_coalesce_table(t, f);
		return;
	}
	if (!strcmp(t->experiment, "linux")) {
		print_linux_table(t, f);
		return;
	}

	if (indirect && t->nicosts) {
		print_indirect_sweep(t, f);
		return;
	}

	if (!strcmp(t->experiment, "cost")) {
		print_cost_table(t, f);
		return;
	}
	if (!strcmp(t->experiment, "layout")) {
		print_layout_table(t, f);
		return;
	}
	for (unsigned mi = 0; mi < t->nmodels; mi++) {
		fprintf(f, "\nModel: %s%s  (median of %u; +-%% is (max-min)/median)\n", t->models[mi],
			strcmp(t->vm, "none") ? "" : ", no VM", t->repeat);
		if (indirect)
			fprintf(f, "%-16s %-17s %-15s %-9s %-15s %s\n", "Indirect/ring", "Seconds", "Gbit/s",
				"Indirect", "Ring-full", "Notifies");
		else
			fprintf(f, "%-10s %-17s %-17s %-17s %-7s %-9s | 2008: %-8s %-8s %-8s | %s\n", "Threshold",
				"Seconds", "Timeouts", "Notifies", "Gbit/s", "Final-thr", "Seconds", "Timeouts", "Notifies",
				"x2008/GiB: Timeouts Notifies");
		for (unsigned i = 0; i < t->nrows; i++) {
			const struct row *r = &t->rows[mi][i];
			char s[40], a[40], b[40], pbuf[96];

			if (r->failed[0]) {
				fprintf(f, "%-10s FAILED: %s\n", r->label, r->failed);
				continue;
			}
			snprintf(s, sizeof(s), "%.4f +-%.0f%%", r->median[M_SECONDS], spread_pct(r, M_SECONDS));
			if (indirect) {
				snprintf(a, sizeof(a), "%.2f +-%.0f%%", r->median[M_GBPS], spread_pct(r, M_GBPS));
				snprintf(b, sizeof(b), "%.0f", r->median[M_RING_FULL]);
				fprintf(f, "%-16s %-17s %-15s %-9.2f %-15s %.0f\n", r->label, s, a,
					r->median[M_INDIRECT_SHARE], b, r->median[M_NOTIFIES]);
				continue;
			}
			snprintf(a, sizeof(a), "%.0f +-%.0f%%", r->median[M_TIMEOUTS], spread_pct(r, M_TIMEOUTS));
			snprintf(b, sizeof(b), "%.0f +-%.0f%%", r->median[M_NOTIFIES], spread_pct(r, M_NOTIFIES));
			fprintf(f, "%-10s %-17s %-17s %-17s %-7.2f %-9.0f | %s\n", r->label, s, a, b,
				r->median[M_GBPS], r->median[M_THRESHOLD], paper_cells(t, r, pbuf, sizeof(pbuf)));
		}
		if (!indirect) {
			if (t->bytes != 1ull << 30)
				fprintf(f, "(x2008/GiB: our median per GiB -- x%.3g for --bytes %.0f MiB -- over 2008's 1 GiB)\n",
					table_per_gib(t), t->bytes / 1048576.0);
			print_verdict(t, mi, f);
		}
	}
}

/* ---- the command ---- */

/* --indirect-costs: ns, ascending, each a valid --indirect-cost-ns. */
static int parse_icosts(struct table *t, const char *list)
{
	char buf[256], *save = NULL, *word, *end;

	if (strlen(list) >= sizeof(buf))
		return usage_error("table", "--indirect-costs '%.40s...': too long", list);
	snprintf(buf, sizeof(buf), "%s", list);
	t->nicosts = 0;
	for (word = strtok_r(buf, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
		unsigned long v;

		errno = 0;
		v = strtoul(word, &end, 10);
		if (*word < '0' || *word > '9' || *end || errno || v > LKVM_INDIRECT_COST_NS_MAX)
			return usage_error("table", "--indirect-costs: '%s' is not a cost of 0..1000000 ns", word);
		if (t->nicosts && v <= t->icosts[t->nicosts - 1])
			return usage_error("table", "--indirect-costs '%s': give the costs in ascending order", list);
		if (t->nicosts == MAX_ICOSTS)
			return usage_error("table", "--indirect-costs '%s': at most 16 costs", list);
		t->icosts[t->nicosts++] = (unsigned)v;
	}
	return t->nicosts ? 0 : usage_error("table", "--indirect-costs '%s': give at least one cost", list);
}

/* Was run option `flag` passed through? */
static bool passed(const struct table *t, const char *flag)
{
	for (unsigned i = 0; i < t->npass; i++)
		if (!strcmp(t->pass[i], flag))
			return true;
	return false;
}

/* The notify experiment stands for a machine: 2008's unless --preset says
 * otherwise.  Each of the preset's options goes to every run unless the
 * user gave it; so do its workload, its host model and, unless --vm was
 * given, KVM where it can be had and the no-VM host where it cannot (whose
 * seconds are real, unlike an emulator's). */
static int apply_preset(struct table *t, const char *name, bool workload_given, bool model_given, bool vm_given,
			const char **net)
{
	const struct preset *p;

	if (name ? !strcmp(name, "none") : strcmp(t->experiment, "notify"))
		return 0;
	p = preset_find(name ? name : "2008");
	if (strcmp(t->experiment, "notify"))
		return usage_error("table", "--preset: a machine for the notify experiment, not '%s' (add --preset none)",
				   t->experiment);
	t->preset = p;
	if (!workload_given)
		t->tcp = !strcmp(p->workload, "tcp");
	if (t->tcp && !*net)
		*net = "user";   /* unprivileged, and the same for root: no namespace to set up */
	if (!model_given)
		t->models[0] = p->model, t->nmodels = 1;
	if (!vm_given)
		t->vm = vm_check_kvm() == 0 ? "kvm" : "none";
	for (size_t i = 0; i < p->count; i++) {
		const struct preset_option *o = &p->options[i];

		if (passed(t, o->option) || (o->vm_none_only && strcmp(t->vm, "none")))
			continue;
		if (t->npass + 2 > MAX_PASS)
			return usage_error("table", "too many options%s", "");
		t->pass[t->npass++] = (char *)o->option;
		t->pass[t->npass++] = (char *)o->value;
	}
	return 0;
}

/* ---- the options of `table`, each described once ---- */

#define TABLE(field) offsetof(struct table, field)

static bool parse_model(const char *arg, void *opts)
{
	struct table *t = opts;

	t->model_thread = !strcmp(arg, "thread");
	if (!strcmp(arg, "both"))
		t->models[0] = "threaded", t->models[1] = "lguest", t->nmodels = 2;
	else
		t->models[0] = t->model_thread ? "threaded" : arg, t->nmodels = 1;
	t->model_given = true;
	return true;
}

static bool note_vm(const char *arg, void *opts)
{
	(void)arg;
	((struct table *)opts)->vm_given = true;
	return true;
}

static bool parse_preset(const char *arg, void *opts)
{
	((struct table *)opts)->preset_arg = arg;
	return !strcmp(arg, "none") || preset_find(arg);
}

/* --trace-dir: made here, after the parse (which must create nothing: the
 * command-line fuzzer runs it), before anything runs. */
static bool make_trace_dir(const char *dir)
{
	return (mkdir(dir, 0755) == 0 || errno == EEXIST) && access(dir, W_OK | X_OK) == 0;
}

static bool parse_workload(const char *arg, void *opts)
{
	struct table *t = opts;

	t->tcp = !strcmp(arg, "tcp");
	t->workload_given = true;
	return true;
}

static bool parse_plot(const char *arg, void *opts)
{
	(void)opts;
	return plot_file_name_ok(arg);
}

const struct opt table_opts[] = {
	{ OPT_WORD, "experiment", "E", TABLE(experiment), .words = "notify|indirect|cost|layout|poll|coalesce|linux",
	  .help = "notify: the 2008 sweep; indirect: Sasha Levin's 2011 rule, never / always / threshold x ring "
		  "128, 256, --segments 3 (with --indirect-costs, each at every price of a table); cost: the thread "
		  "model's policy rows x exit cost 0,1,5,26,100 us x guest pace 0,24 us per frame; layout: each "
		  "policy row on the split ring and on the packed ring, side by side; poll (issue 26): each policy row "
		  "(default dynamic,64,always,event-idx) x --host-poll-us 0,5,20,50,200,adaptive; coalesce: each policy "
		  "row (default dynamic) x --coalesce usecs 0,10,50,200,1000 x packets 1,8,64,256, --wait halt unless "
		  "given (the rule's prediction assumes a steady stream: add --pace-ns 200 --host-poll-us 200); both "
		  "--model threaded only (--vm none unless given), in interleaved rounds; linux (issue 25): "
		  "Debian's kernel sending --bytes over TCP, offered event-idx (linux) and not (linux-no-event-idx), "
		  "beside the stub's TCP sender (default rows dynamic,event-idx,linux,linux-no-event-idx), a VM only, "
		  "in interleaved rounds" },
	{ OPT_CUSTOM, "preset", "P", OPT_NO_FIELD, .parse = parse_preset, .accepts = "2008 or none",
	  .def = "2008 for the notify experiment",
	  .help = "the machine the rows stand for: 2008 (docs/seed-2008.md; each of its options gives way to one "
		  "you pass) or none (the run defaults: raw frames of 1514 bytes, both host models)" },
	{ OPT_STRING, "rows", "LIST", TABLE(rows_arg), .def = "the experiment's own",
	  .help = "comma-separated rows instead of the default sweep, e.g. 10,64,dynamic,always,event-idx (notify; "
		  "cost: default 40,dynamic,always,event-idx; layout: default 10,20,40,64,100,dynamic,always,event, "
		  "where event is event-idx on split and event-desc on packed) or never,threshold (indirect)" },
	/* Checked after parsing, by parse_icosts, which says what is wrong with
	 * which cost in its one line. */
	{ OPT_STRING, "indirect-costs", "LIST", TABLE(icosts_arg),
	  .accepts = "ns ascending, each 0 to 1000000, at most 16",
	  .help = "indirect: sweep the guest's cost of building a table, e.g. 0,100,250,500,1000 (each row runs "
		  "with --indirect-cost-ns=N); prints where threshold overtakes always" },
	{ OPT_U32, "repeat", "N", TABLE(repeat), 1, MAX_REPEAT, .help = "runs per row" },
	{ OPT_WORD, "vm", "V", TABLE(vm), .words = "kvm|none", .parse = note_vm,
	  .def = "kvm; with the preset: kvm if /dev/kvm works, else none",
	  .help = "where the guest runs: kvm, or none (no VM, no /dev/kvm needed, real seconds: see 'lguest-kvm "
		  "run --help')" },
	{ OPT_WORD, "model", "M", OPT_NO_FIELD, .words = "threaded|lguest|both|thread", .parse = parse_model,
	  .def = "both; the preset: lguest; cost: threaded",
	  .help = "how the host services the ring; thread is --vm none --model threaded" },
	{ OPT_STRING, "csv", "FILE", TABLE(csv), .help = "write the table as CSV" },
	{ OPT_STRING, "json", "FILE", TABLE(json), .help = "write every sample and the medians as JSON" },
	{ OPT_STRING, "plot", "FILE", TABLE(plot), .parse = parse_plot, .accepts = "a file name ending in .svg or .png",
	  .help = "draw seconds and notifies against threshold (cost: against the exit cost; indirect with "
		  "--indirect-costs: Gbit/s against the price of a table, crossover marked), with gnuplot" },
	/* Made and checked by table_main once the whole line has parsed. */
	{ OPT_STRING, "trace-dir", "DIR", TABLE(trace_dir), .accepts = "a writable directory; created if missing",
	  .help = "trace each row's first run into DIR/MODEL-NN-ROW.bin (run --trace; read one with 'lguest-kvm "
		  "trace FILE')" },
	{ OPT_WORD, "workload", "W", OPT_NO_FIELD, .words = "raw|tcp", .parse = parse_workload, .def = "raw",
	  .help = "raw frames, or real TCP to a verifying receiver that the table starts for every sample, with "
		  "the host's loopback TCP throughput measured after the sweep as the ceiling" },
	{ OPT_STRING, "net", "B", TABLE(net_arg),
	  .help = "raw: sink or tap[:IFNAME] (tap needs a receiver that drains it); tcp: tap (root: a namespace "
		  "with a tap, deleted afterwards) or user (libslirp; the default unless root)" },
	OPT_SECTION_ROW("Passed to every run (see 'lguest-kvm run --help'):"),
	{ OPT_PASS, "bytes", "SIZE", .help = "" },
	{ OPT_PASS, "frame", "N", .help = "" },
	{ OPT_PASS, "ring", "N", .help = "" },
	{ OPT_PASS, "segments", "N", .help = "" },
	{ OPT_PASS, "timeout-us", "N|adaptive", .help = "" },
	{ OPT_PASS, "host-timer", "T", .help = "" },
	{ OPT_PASS, "timer-wait", "W", .help = "" },
	{ OPT_PASS, "host-poll-us", "N|adaptive", .help = "" },
	{ OPT_PASS, "coalesce", "U:P", .help = "" },
	{ OPT_PASS, "wait", "W", .help = "" },
	{ OPT_PASS, "mem", "SIZE", .help = "" },
	{ OPT_PASS, "pace-ns", "N", .help = "" },
	{ OPT_PASS, "layout", "L", .help = "" },
	{ OPT_PASS, "exit-cost-ns", "N", .help = "--vm none only" },
	{ OPT_PASS, "indirect-cost-ns", "N", .help = "" },
	{ OPT_PASS, "indirect-cold-lines", "K", .help = "" },
	{ OPT_PASS, "tso", NULL, .help = "" },
	{ OPT_END },
};

static const char table_intro[] =
"usage: lguest-kvm table [options]\n"
"\n"
"Reproduce Rusty Russell's 2008 table (Threshold / Seconds / Timeouts / Notifies):\n"
"transmit --bytes with static thresholds 10..128 and Dynamic, plus the rows the\n"
"paper lacked (Always: no threshold; Event-idx), each --repeat times; prints\n"
"the median with the spread, (max-min)/median, beside the 2008 figures, ours\n"
"over 2008's per GiB, and a verdict on the shape (cliff, drop, timeouts, fastest\n"
"regime, Dynamic).  By default the rows stand for the 2008 machine (--preset 2008:\n"
"TCP guest->host, lguest host; --vm none where /dev/kvm is missing, so the\n"
"seconds are real).\n"
"\n";

static const char table_outro[] =
"\n"
"Exit status: 0 if every row succeeded, 1 if any failed, 2 usage, 128+N on signal N.\n";

/* --workload and --net: the lab owns tcp's network (a tap in a namespace,
 * or slirp); raw's --net goes to every run. */
static int apply_workload_net(struct table *t)
{
	const char *net = t->net_arg;
	int rc;

	if (t->icosts_arg && (rc = parse_icosts(t, t->icosts_arg)))
		return rc;
	/* --model thread is --vm none --model threaded, and says so. */
	if (t->model_thread) {
		if (t->vm_given && strcmp(t->vm, "none"))
			return usage_error("table", "--model thread with --vm kvm: thread means --vm none --model threaded%s", "");
		t->vm = "none";
	}
	if ((rc = apply_preset(t, t->preset_arg, t->workload_given, t->model_given, t->vm_given, &net)))
		return rc;
	if (!strcmp(t->experiment, "linux")) {
		/* Linux's /init sends over TCP; the stub's rows do the same */
		if (t->workload_given && !t->tcp)
			return usage_error("table", "--experiment linux: a TCP transfer (--workload tcp), not raw%s", "");
		t->tcp = true;
	}
	if (t->tcp) {
		if (net && strcmp(net, "tap") && strcmp(net, "user"))
			return usage_error("table", "--net '%s': with --workload tcp, give tap (root) or user", net);
		t->tcp_tap = net ? !strcmp(net, "tap") : geteuid() == 0;
		net = NULL;
	}
	if (t->npass + 2 > MAX_PASS)
		return usage_error("table", "too many options%s", "");
	if (t->tcp)
		t->pass[t->npass++] = "--workload", t->pass[t->npass++] = "tcp";
	else if (net)
		t->pass[t->npass++] = "--net", t->pass[t->npass++] = (char *)net;
	return 0;
}

/* The experiment against what it sets itself. */
static int check_experiment(struct table *t)
{
	if (modern_experiment(t)) {
		/* The device thread's: --model threaded, with a VM or without;
		 * without unless asked, as that needs no /dev/kvm. */
		if (t->model_given && (t->nmodels > 1 || strcmp(t->models[0], "threaded")))
			return usage_error("table", "--experiment %s: runs --model threaded (the device thread's), "
					   "not lguest", t->experiment);
		t->models[0] = "threaded", t->nmodels = 1;
		if (!t->vm_given)
			t->vm = "none";
		if (t->plot)
			return usage_error("table", "--plot: not drawn for --experiment %s (see the CSV or JSON)",
					   t->experiment);
		if (passed(t, !strcmp(t->experiment, "poll") ? "--host-poll-us" : "--coalesce"))
			return usage_error("table", "--experiment %s: its rows set that option", t->experiment);
		/* the coalescing guest sleeps on its interrupts unless told otherwise */
		if (!strcmp(t->experiment, "coalesce") && !passed(t, "--wait") && t->npass + 2 <= MAX_PASS) {
			t->pass[t->npass++] = "--wait";
			t->pass[t->npass++] = "halt";
		}
	}
	if (!strcmp(t->experiment, "cost")) {
		/* Its knob exists only without a VM; its rows set --pace-ns.
		 * One host model per sweep (threaded unless --model says). */
		if (t->vm_given && strcmp(t->vm, "none"))
			return usage_error("table", "--experiment cost: runs --vm none only (the exit cost is its "
					   "knob), not --vm '%s'", t->vm);
		if (t->model_given && t->nmodels > 1)
			return usage_error("table", "--experiment cost: one --model at a time (threaded or lguest)%s", "");
		t->vm = "none";
		if (!t->model_given)
			t->models[0] = "threaded", t->nmodels = 1;
		if (passed(t, "--pace-ns") || t->tcp)
			return usage_error("table", "--experiment cost: its rows set the pace; no --pace-ns or "
					   "--workload tcp%s", "");
		if (passed(t, "--exit-cost-ns"))
			return usage_error("table", "--experiment cost: its rows set --exit-cost-ns%s", "");
	}
	if (!strcmp(t->experiment, "linux")) {
		if (!strcmp(t->vm, "none"))
			return usage_error("table", "--experiment linux: a Linux guest needs a VM (--vm kvm; without "
					   "/dev/kvm, run the table inside tests/vm/lkvm-vm)%s", "");
		if (t->plot)
			return usage_error("table", "--plot: not drawn for --experiment linux (see the CSV or JSON)%s", "");
	}
	if (!strcmp(t->experiment, "layout") && passed(t, "--layout"))
		return usage_error("table", "--experiment layout: its rows set --layout%s", "");
	if (t->nicosts && strcmp(t->experiment, "indirect"))
		return usage_error("table", "--indirect-costs: only with --experiment indirect, not '%s'", t->experiment);
	if (t->nicosts && passed(t, "--indirect-cost-ns"))
		return usage_error("table", "--indirect-costs: its rows set --indirect-cost-ns; give one or the other%s", "");
	if (t->plot && !strcmp(t->experiment, "indirect") && !t->nicosts)
		return usage_error("table", "--plot: the indirect experiment plots only its cost sweep (add --indirect-costs)%s",
				   "");
	return 0;
}

static int parse_table_options(struct table *t, int argc, char **argv)
{
	static struct table defaults;   /* large: not on the stack */
	const struct opt_command cmd = { .name = "table", .table = table_opts, .intro = table_intro, .outro = table_outro,
					 .defaults = &defaults,
					 .pass = t->pass, .npass = &t->npass, .pass_max = MAX_PASS };
	int first, rc;

	defaults = *t;
	rc = opt_parse(&cmd, t, argc, argv, &first);
	if (rc)
		return rc;
	if (first < argc)
		return usage_error("table", "unexpected argument '%s'", argv[first]);
	rc = apply_workload_net(t);
	return rc ? rc : check_experiment(t);
}

/* --trace-dir: where row r's first repeat leaves its timeline --
 * DIR/MODEL-NN-LABEL.bin, NN the row's place in the sweep (labels repeat
 * across layouts), the label's characters other than letters, digits, '.'
 * and '-' as '-'. */
static bool trace_path(const struct table *t, unsigned mi, const struct row *r, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s-%02u-", t->trace_dir, t->models[mi], (unsigned)(r - t->rows[mi]));

	/* A --trace-dir near PATH_MAX: say so (check_rows), never write past buf. */
	if (n < 0 || (size_t)n + strlen(r->label) + sizeof(".bin") > size)
		return false;
	for (const char *c = r->label; *c; c++)
		buf[n++] = isalnum((unsigned char)*c) || *c == '.' || *c == '-' ? *c : '-';
	memcpy(buf + n, ".bin", sizeof(".bin"));
	return true;
}

/* Check every row's options exactly as its child will get them
 * (table_child_argv: the passed-through ones, the row's own, --trace and
 * tcp's network), with the run parser itself: a bad combination is a usage
 * error now, not a failed row after minutes of sweeping. */
static int check_rows(struct table *t)
{
	for (unsigned i = 0; i < t->nrows * t->nmodels; i++) {
		unsigned mi = i / t->nrows;
		const struct row *r = &t->rows[mi][i % t->nrows];
		char *argv[TABLE_CHILD_ARGV], trace[PATH_MAX];
		struct run_options o;
		unsigned a;
		int rc;

		if (t->trace_dir && !trace_path(t, mi, r, trace, sizeof(trace)))
			return usage_error("table", "--trace-dir '%.60s...': too long for its files' names (PATH_MAX)",
					   t->trace_dir);
		a = table_child_argv(t, t->models[mi], r, "/tmp/lkvm-table-check.json", t->trace_dir ? trace : NULL,
				     NULL, argv);
		run_options_defaults(&o);
		rc = run_options_parse(&o, (int)a - 1, argv + 1);
		if (rc)
			return rc > 0 ? rc : EXIT_USAGE;
	}
	return 0;
}

/* Segments per frame unless given: the notify experiment uses the 2008
 * driver's two (virtio-net header, linear data), so the 128-entry ring holds
 * 64 frames as lguest's did; the indirect experiment uses three. */
static void add_default_segments(struct table *t)
{
	for (unsigned i = 0; i < t->npass; i++)
		if (!strcmp(t->pass[i], "--segments"))
			return;
	if (t->npass + 2 <= MAX_PASS) {
		t->pass[t->npass++] = "--segments";
		t->pass[t->npass++] = !strcmp(t->experiment, "indirect") ? "3" : "2";
	}
}

/* One sample of row r; false when the sweep must stop (a signal). */
static bool sample_row(struct table *t, unsigned mi, struct row *r, unsigned rep)
{
	char why[240], trace[PATH_MAX];
	bool traced = t->trace_dir && rep == 1;
	int st;

	if (traced)
		(void)trace_path(t, mi, r, trace, sizeof(trace));   /* fits: check_rows made sure */
	progress(t, t->models[mi], r, rep);
	st = table_signal ? 128 + table_signal
			  : run_one(t, t->models[mi], r, traced ? trace : NULL, r->v[r->n], why, sizeof(why));
	t->done++;
	if (table_signal || st == 128 + SIGINT || st == 128 + SIGTERM) {
		t->interrupted = table_signal ? 128 + table_signal : st;
		snprintf(r->failed, sizeof(r->failed), "interrupted");
		return false;
	}
	if (st)
		snprintf(r->failed, sizeof(r->failed), "exit %d: %.200s", st, why);
	else
		r->n++;
	return true;
}

/* Every model x row x repeat; a failed run ends its row, a signal the sweep.
 * A row's repeats run back to back -- except in the indirect cost sweep,
 * which runs in rounds, one sample of every row per round, first row to
 * last and then last to first, so that a shared machine whose speed
 * drifts during the sweep moves every row alike instead of the rows that
 * happened to run late.  Returns whether any row failed. */
static bool run_sweep(struct table *t)
{
	struct sigaction sa = { .sa_handler = on_table_signal };   /* no SA_RESTART */
	/* The cost sweep, the preset's table and the poll, coalesce and linux
	 * experiments, whose numbers are compared across rows, run in
	 * interleaved rounds, so that a machine whose speed drifts moves every
	 * row alike instead of a few rows' samples. */
	bool failed = false,
	     rounds = t->nicosts != 0 || t->preset || modern_experiment(t) || !strcmp(t->experiment, "linux");
	unsigned nrounds = rounds ? t->repeat : 1, per_turn = rounds ? 1 : t->repeat;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t->total = t->nmodels * t->nrows * t->repeat;
	t->t0 = monotonic_seconds();
	for (unsigned round = 0; round < nrounds && !t->interrupted; round++)
		for (unsigned mi = 0; mi < t->nmodels && !t->interrupted; mi++)
			for (unsigned j = 0; j < t->nrows && !t->interrupted; j++) {
				/* rounds go forth and back: no row is always late */
				struct row *r = &t->rows[mi][round % 2 ? t->nrows - 1 - j : j];

				for (unsigned k = 0; k < per_turn && !r->failed[0]; k++)
					if (!sample_row(t, mi, r, round + k + 1))
						break;
			}
	for (unsigned mi = 0; mi < t->nmodels; mi++)
		for (unsigned i = 0; i < t->nrows; i++) {
			struct row *r = &t->rows[mi][i];

			if (!r->n && !r->failed[0])
				snprintf(r->failed, sizeof(r->failed), "not run: the sweep was interrupted");
			table_row_summarise(r);
			failed |= r->failed[0] != 0;
		}
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	return failed;
}

/* The host's own TCP over loopback, --repeat times, same size: the
 * ceiling for a receiver on this machine, measured in the same run. */
static void measure_loopback(struct table *t)
{
	if (t->interrupted)
		return;
	for (unsigned k = 0; k < t->repeat && !table_signal; k++) {
		char why[200];
		double sec = tcp_lab_loopback(t->bytes, why, sizeof(why));

		if (sec <= 0) {
			snprintf(t->loopback_failed, sizeof(t->loopback_failed), "%s", why);
			return;
		}
		t->loopback[t->nloopback++] = sec;
	}
	qsort(t->loopback, t->nloopback, sizeof(double), stats_cmp_double);
}

static void print_loopback(const struct table *t, FILE *f)
{
	const double *v = t->loopback;
	unsigned n = t->nloopback;
	double median;

	if (!n) {
		fprintf(f, "Host loopback TCP (ceiling): not measured%s%s\n", t->loopback_failed[0] ? ": " : "",
			t->loopback_failed[0] ? t->loopback_failed : t->interrupted ? " (interrupted)" : "");
		return;
	}
	median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	fprintf(f, "Host loopback TCP, same size (the ceiling for a receiver here): %.3f s median "
		"(%.3f..%.3f over %u runs), %.1f Gbit/s\n", median, v[0], v[n - 1], n,
		t->bytes * 8.0 / median / 1e9);
}

int table_parse(struct table *t, int argc, char **argv)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->experiment = "notify";
	t->repeat = 3;
	t->vm = "kvm";
	t->models[0] = "threaded", t->models[1] = "lguest", t->nmodels = 2;
	rc = parse_table_options(t, argc, argv);
	if (rc)
		return rc;
	add_default_segments(t);
	if ((rc = table_build_rows(t, t->rows_arg)))
		return rc;
	return check_rows(t);
}

int table_main(int argc, char **argv)
{
	static struct table t;
	bool failed;
	int rc;

	rc = table_parse(&t, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (t.trace_dir && !make_trace_dir(t.trace_dir))
		return usage_error("table", "--trace-dir '%s': expected a writable directory; created if missing",
				   t.trace_dir);
	/* Every sample of a VM model needs KVM: say so once, not in a FAILED
	 * line per row. */
	if (!strcmp(t.vm, "kvm") && vm_check_kvm() < 0) {
		diag_print();
		return EXIT_ERROR;
	}
	if (host_is_emulated())
		fprintf(stderr, "lguest-kvm table: %s\n", emulated_note);

	/* The receiver must know the stream's length (the last --bytes wins). */
	t.bytes = 1ull << 30;
	for (unsigned i = 0; i + 1 < t.npass; i++)
		if (!strcmp(t.pass[i], "--bytes"))
			parse_size(t.pass[i + 1], &t.bytes);
	if (t.tcp && tcp_lab_open(&t.lab, t.tcp_tap) < 0) {
		diag_print();
		return EXIT_ERROR;
	}
	failed = run_sweep(&t);
	if (t.tcp) {
		tcp_lab_close(&t.lab);
		measure_loopback(&t);
	}
	if (t.preset)
		printf("Preset %s: %s\n", t.preset->name, t.preset->summary);
	printf("lguest-kvm table, experiment %s, --vm %s --model %s%s%s:", t.experiment, t.vm, t.models[0],
	       t.nmodels > 1 ? "," : "", t.nmodels > 1 ? t.models[1] : "");
	for (unsigned i = 0; i < t.npass; i++)
		printf(" %s", t.pass[i]);
	for (unsigned c = 0; c < t.nicosts; c++)
		printf("%s%u", c ? "," : " --indirect-costs ", t.icosts[c]);
	if (t.tcp)
		printf(" --net %s", t.tcp_tap ? "tap" : "user");
	printf("%s (%.0f s)\n", t.npass > 2 ? "" : " (and the defaults: 1 GiB raw, frame 1514, ring 128, adaptive timer)",
	       monotonic_seconds() - t.t0);
	print_table(&t, stdout);
	if (t.tcp)
		print_loopback(&t, stdout);
	if (host_is_emulated())
		printf("\nNote: %s\n", emulated_note);
	fflush(stdout);
	if ((t.csv && table_write_csv(&t) < 0) || (t.json && table_write_json(&t) < 0) ||
	    (t.plot && table_write_plot(&t) < 0)) {
		diag_print();
		return EXIT_ERROR;
	}
	if (t.interrupted)
		return t.interrupted;
	if (failed)
		fprintf(stderr, "lguest-kvm table: some rows failed (see the table)\n");
	return failed ? EXIT_ERROR : 0;
}
