/*
 * receive.c -- `lguest-kvm receive`: accept one TCP connection, check every
 * byte of the tcp workload's stream, report how long it took.
 *
 *   parse options -> listen (--ready FILE says so) -> accept one peer
 *   -> recv() 1 MiB at a time, each buffer checked by stream_check() at its
 *      stream offset -> EOF after exactly --bytes: one line, exit 0
 *
 * It is the host end the guest's TCP stream will be judged by, so it trusts
 * nothing: a wrong byte (exit 3, with its offset), a short or overlong
 * stream, a reset or a silent peer (exit 1) each end the run with one line
 * saying which.  --json writes the same outcome for scripts (bench/).
 * The clock runs from accept() to EOF: connection setup and the listen wait
 * are not part of the transfer.
 */
#include "receive.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "json_writer.h"
#include "opt_table.h"
#include "stream_pattern.h"
#include "tcp_endpoint.h"

#define RECV_BUF_BYTES (1u << 20)   /* few syscalls per GiB, still cache-friendly */

/* What happened, for the exit code, the message and the JSON. */
struct receive_result {
	const char *result;         /* ok | closed-after | mismatch | short | overrun | reset | timeout | error */
	uint64_t bytes;             /* received (all checked up to --bytes) */
	double seconds;             /* accept() to EOF or to the failure */
	bool bad;                   /* a byte did not match ... */
	uint64_t bad_offset;        /* ... this one */
	char peer[ENDPOINT_STRLEN]; /* "" before accept() */
};

#define RECV(field) offsetof(struct receive_options, field)

static bool parse_listen(const char *arg, void *opts)
{
	return endpoint_parse(arg, true, &((struct receive_options *)opts)->listen);
}

/* The options of `receive`, each described once (common/opt_table.h). */
const struct opt receive_opts[] = {
	{ OPT_SIZE, "bytes", "SIZE", RECV(bytes), 1, UINT64_MAX, .accepts = "a positive size such as 64M or 1G",
	  .def = "none: required", .help = "the stream's length, K/M/G suffixes" },
	{ OPT_CUSTOM, "listen", "ADDR:PORT", OPT_NO_FIELD, .parse = parse_listen,
	  .accepts = "IPv4 ADDR:PORT, PORT 0 to 65535, such as 0.0.0.0:5001", .def = "0.0.0.0:5001",
	  .help = "the address to listen on; port 0: any free port, written to --ready" },
	{ OPT_STRING, "ready", "FILE", RECV(ready), .help = "once listening, create FILE holding ADDR:PORT" },
	{ OPT_U32, "timeout", "SECONDS", RECV(timeout), 1, 86400,
	  .help = "give up after this long without a connection or without data" },
	{ OPT_SIZE, "close-after", "SIZE", RECV(close_after), 1, UINT64_MAX, .accepts = "a positive size",
	  .help = "test aid: after SIZE bytes, reset the connection (RST) and exit 0" },
	{ OPT_STRING, "json", "FILE", RECV(json),
	  .help = "write bytes, seconds, gbit_per_s, verified, first_bad_offset, peer and result as one JSON "
		  "object (verified: true exactly when the exit status is 0)" },
	{ OPT_FLAG, "quiet", NULL, RECV(quiet), .help = "no line on success" },
	{ OPT_END },
};

static const char receive_intro[] =
"usage: lguest-kvm receive --bytes SIZE [options]\n"
"\n"
"Accept one TCP connection, read the tcp workload's byte stream (see\n"
"include/lkvm_frame.h) and verify every byte; succeed if exactly SIZE bytes\n"
"arrive, all correct, followed by a clean close.\n"
"\n";

static const char receive_outro[] =
"\n"
"Exit status: 0 verified (or reset as --close-after asked); 1 timeout, short or\n"
"overlong stream, connection reset, socket error; 2 usage; 3 a byte was wrong.\n";

static void receive_defaults(struct receive_options *o)
{
	memset(o, 0, sizeof(*o));
	endpoint_parse("0.0.0.0:5001", false, &o->listen);
	o->timeout = 30;
}

int receive_parse(struct receive_options *o, int argc, char **argv)
{
	struct receive_options defaults;
	const struct opt_command cmd = { .name = "receive", .table = receive_opts, .intro = receive_intro, .outro = receive_outro,
					 .defaults = &defaults };
	int first, rc;

	receive_defaults(&defaults);
	*o = defaults;
	rc = opt_parse(&cmd, o, argc, argv, &first);
	if (rc)
		return rc;
	if (first < argc)
		return usage_error("receive", "unexpected argument '%s'", argv[first]);
	if (!o->bytes)
		return usage_error("receive", "%s--bytes SIZE is required", "");
	if (o->close_after > o->bytes)
		return usage_error("receive", "--close-after: expected at most --bytes, the stream's length%s", "");
	return 0;
}

/* Write ADDR:PORT to a temporary name, then rename it into place, so a
 * script polling for FILE never reads it half-written. */
static int write_ready_file(const char *path, const struct sockaddr_in *bound)
{
	char tmp[4096], addr[ENDPOINT_STRLEN];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return diag_fail("receive: --ready path '%s' is too long", path);
	f = fopen(tmp, "w");
	if (!f)
		return diag_fail("receive: cannot create --ready file '%s': %s", tmp, strerror(errno));
	fprintf(f, "%s\n", endpoint_format(bound, addr));
	if (fclose(f) || rename(tmp, path))
		return diag_fail("receive: cannot write --ready file '%s': %s", path, strerror(errno));
	return 0;
}

static int listen_socket(const struct receive_options *o, struct sockaddr_in *bound)
{
	char addr[ENDPOINT_STRLEN];
	socklen_t len = sizeof(*bound);
	int one = 1, fd;

	/* No SO_RCVBUF: a fixed size turns off the kernel's receive-buffer
	 * autotuning, which on loopback grows well past what net.core.rmem_max
	 * lets a process ask for -- asking would make the stream slower. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return diag_fail("receive: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&o->listen, sizeof(o->listen)) ||
	    listen(fd, 1) ||
	    getsockname(fd, (struct sockaddr *)bound, &len)) {
		diag_fail("receive: cannot listen on %s: %s", endpoint_format(&o->listen, addr), strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Wait up to the timeout for one peer; the listening socket is then closed,
 * so a second client is refused rather than left hanging. */
static int accept_one(int lfd, const struct receive_options *o, const struct sockaddr_in *bound,
		      struct receive_result *r)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	struct sockaddr_in peer;
	socklen_t len = sizeof(peer);
	char addr[ENDPOINT_STRLEN];
	int n, fd;

	do
		n = poll(&p, 1, (int)o->timeout * 1000);
	while (n < 0 && errno == EINTR);
	if (n == 0) {
		r->result = "timeout";
		return diag_fail("receive: no connection to %s within %u s (--timeout)",
				 endpoint_format(bound, addr), o->timeout);
	}
	fd = n < 0 ? -1 : accept4(lfd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
	if (fd < 0) {
		r->result = "error";
		return diag_fail("receive: accept on %s: %s", endpoint_format(bound, addr), strerror(errno));
	}
	endpoint_format(&peer, r->peer);
	if (socket_set_timeouts(fd, o->timeout)) {
		r->result = "error";
		diag_fail("receive: cannot set the socket timeout: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The transfer proper.  Returns the exit code; r says what happened. */
static int receive_stream(int fd, const struct receive_options *o, uint8_t *buf, struct receive_result *r)
{
	double t0 = monotonic_seconds();
	int code = EXIT_ERROR;

	for (;;) {
		size_t want = RECV_BUF_BYTES, in_stream, good;
		ssize_t n;

		/* Stop reading exactly at --close-after, so the reset comes
		 * after that byte and not after whatever one read returned. */
		if (o->close_after && o->close_after - r->bytes < want)
			want = (size_t)(o->close_after - r->bytes);
		n = recv(fd, buf, want, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				r->result = "timeout";
				diag_fail("receive: no data for %u s after %llu bytes (--timeout)",
					  o->timeout, (unsigned long long)r->bytes);
			} else if (errno == ECONNRESET) {
				r->result = "reset";
				diag_fail("receive: connection reset by peer after %llu bytes",
					  (unsigned long long)r->bytes);
			} else {
				r->result = "error";
				diag_fail("receive: recv after %llu bytes: %s", (unsigned long long)r->bytes,
					  strerror(errno));
			}
			break;
		}
		if (n == 0) {
			if (r->bytes == o->bytes) {
				r->result = "ok";
				code = 0;
			} else {
				r->result = "short";
				diag_fail("receive: the stream ended after %llu of %llu bytes",
					  (unsigned long long)r->bytes, (unsigned long long)o->bytes);
			}
			break;
		}

		in_stream = r->bytes >= o->bytes ? 0
			  : o->bytes - r->bytes < (uint64_t)n ? (size_t)(o->bytes - r->bytes) : (size_t)n;
		good = stream_check(buf, in_stream, r->bytes);
		if (good < in_stream) {
			uint64_t off = r->bytes + good;

			r->bad = true;
			r->bad_offset = off;
			r->bytes += (uint64_t)n;
			r->result = "mismatch";
			diag_fail("receive: data mismatch at stream offset %llu: expected 0x%02x, got 0x%02x",
				  (unsigned long long)off, stream_byte(off), buf[good]);
			code = EXIT_VERIFY;
			break;
		}
		r->bytes += (uint64_t)n;
		if (r->bytes > o->bytes) {
			r->result = "overrun";
			diag_fail("receive: the stream went on past --bytes %llu (at least %llu bytes)",
				  (unsigned long long)o->bytes, (unsigned long long)r->bytes);
			break;
		}
		if (o->close_after && r->bytes == o->close_after) {
			r->result = "closed-after";
			code = 0;
			break;
		}
	}
	r->seconds = monotonic_seconds() - t0;
	/* Hang up abortively unless the stream was accepted: SO_LINGER {on,
	 * 0 s} makes close() send RST instead of FIN, so the sender can never
	 * mistake a rejected stream for a delivered one (even a short stream
	 * whose every byte was read).  --close-after does this on purpose, as
	 * a crashed receiver would. */
	if (code != 0 || !strcmp(r->result, "closed-after")) {
		struct linger abort_close = { .l_onoff = 1, .l_linger = 0 };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_close, sizeof(abort_close));
	}
	return code;
}

static double gbit_per_s(const struct receive_result *r)
{
	return r->seconds > 0 ? r->bytes * 8.0 / r->seconds / 1e9 : 0.0;
}

/* One JSON object; "verified" is true exactly when the command exits 0. */
static int write_json(const char *path, const struct receive_options *o, const struct receive_result *r, int code)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "lguest-kvm receive: cannot write --json file '%s': %s\n", path, strerror(errno));
		return -1;
	}
	struct json_writer w;

	json_start(&w, f);
	json_begin_object(&w, NULL);
	json_u64(&w, "bytes", r->bytes);
	json_u64(&w, "expected_bytes", o->bytes);
	json_double(&w, "seconds", "%.6f", r->seconds);
	json_double(&w, "gbit_per_s", "%.3f", gbit_per_s(r));
	json_bool(&w, "verified", code == 0);
	if (r->bad)
		json_u64(&w, "first_bad_offset", r->bad_offset);
	else
		json_null(&w, "first_bad_offset");
	json_string(&w, "peer", r->peer[0] ? r->peer : NULL);
	json_string(&w, "result", r->result);
	json_end(&w);
	fputc('\n', f);
	if (fclose(f)) {
		fprintf(stderr, "lguest-kvm receive: cannot write --json file '%s': %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

int receive_main(int argc, char **argv)
{
	struct receive_options o;
	struct receive_result r = { .result = "error" };
	struct sockaddr_in bound;
	uint8_t *buf = NULL;
	int rc, lfd, fd = -1, code = EXIT_ERROR;

	rc = receive_parse(&o, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;

	lfd = listen_socket(&o, &bound);
	if (lfd < 0) {
		diag_print();
		return EXIT_ERROR;
	}
	buf = aligned_alloc(4096, RECV_BUF_BYTES);
	if (!buf)
		diag_fail("receive: out of memory for a %u-byte buffer", RECV_BUF_BYTES);
	else if (!o.ready || !write_ready_file(o.ready, &bound))
		fd = accept_one(lfd, &o, &bound, &r);
	close(lfd);
	if (fd >= 0) {
		code = receive_stream(fd, &o, buf, &r);
		close(fd);   /* FIN if the stream was accepted, else RST (see receive_stream) */
	}
	free(buf);

	if (code != 0)
		diag_print();
	if (o.json && write_json(o.json, &o, &r, code))
		return code ? code : EXIT_ERROR;
	if (code == 0 && !o.quiet) {
		if (!strcmp(r.result, "closed-after"))
			printf("receive: reset the connection after %llu bytes, all verified, as --close-after asked (from %s)\n",
			       (unsigned long long)r.bytes, r.peer);
		else
			printf("receive: %llu bytes verified in %.3f s (%.2f Gbit/s) from %s\n",
			       (unsigned long long)r.bytes, r.seconds, gbit_per_s(&r), r.peer);
	}
	return code;
}
