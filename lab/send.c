/*
 * send.c -- `lguest-kvm send`: write the tcp workload's byte stream to a
 * receiver over one TCP connection.
 *
 *   parse options -> connect -> for each 1 MiB stretch: stream_fill() at its
 *   offset (--corrupt-at flips one byte) -> send() until all is written
 *   -> shutdown(SHUT_WR) -> wait for the receiver's own close
 *
 * It stands in for the guest, so `receive` can be tested and the host's
 * loopback ceiling measured (bench/tcp_loopback.sh) with no VM at all.
 * Success needs more than "all written": the bytes may still sit in socket
 * buffers, so after its FIN the sender waits for the receiver to close too.
 * A clean close (EOF) means the receiver accepted the stream; a reset means
 * it rejected it (a mismatch, a short stream, --close-after, a crash), and
 * that is exit 1.
 */
#include "receive.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "diag.h"
#include "opt_table.h"
#include "stream_pattern.h"
#include "tcp_endpoint.h"

#define SEND_BUF_BYTES (1u << 20)   /* regenerated per write: no pattern-sized buffer */

#define SEND(field) offsetof(struct send_options, field)

static bool parse_connect(const char *arg, void *opts)
{
	struct send_options *o = opts;

	o->have_connect = true;
	return endpoint_parse(arg, false, &o->connect);
}

static bool note_corrupt(const char *arg, void *opts)
{
	(void)arg;
	((struct send_options *)opts)->corrupt = true;
	return true;
}

/* The options of `send`, each described once (common/opt_table.h). */
const struct opt send_opts[] = {
	{ OPT_CUSTOM, "connect", "ADDR:PORT", OPT_NO_FIELD, .parse = parse_connect,
	  .accepts = "IPv4 ADDR:PORT, PORT 1 to 65535, such as 127.0.0.1:5001", .def = "none: required",
	  .help = "the receiver's address and port" },
	{ OPT_SIZE, "bytes", "SIZE", SEND(bytes), 1, UINT64_MAX, .accepts = "a positive size such as 64M or 1G",
	  .def = "none: required", .help = "bytes to send, K/M/G suffixes" },
	/* an offset inside the stream: below --bytes, so at most 2^64 - 2 */
	{ OPT_SIZE, "corrupt-at", "OFFSET", SEND(corrupt_at), 0, UINT64_MAX - 1, .parse = note_corrupt,
	  .accepts = "a byte offset, K/M/G suffixes", .def = "none",
	  .help = "test aid: flip the stream's byte at OFFSET" },
	{ OPT_U32, "timeout", "SECONDS", SEND(timeout), 1, 86400,
	  .help = "give up if the receiver accepts nothing for this long" },
	{ OPT_FLAG, "quiet", NULL, SEND(quiet), .help = "no line on success" },
	{ OPT_END },
};

static const char send_intro[] =
"usage: lguest-kvm send --connect ADDR:PORT --bytes SIZE [options]\n"
"\n"
"Connect to a receiver (lguest-kvm receive) and write the tcp workload's byte\n"
"stream (see include/lkvm_frame.h); succeed once all SIZE bytes are written\n"
"and the receiver has closed the connection cleanly.\n"
"\n";

static const char send_outro[] =
"\n"
"Exit status: 0 all sent and the receiver closed cleanly; 1 connection refused,\n"
"reset or timed out; 2 usage.\n";

int send_parse(struct send_options *o, int argc, char **argv)
{
	struct send_options defaults = { .timeout = 30 };
	const struct opt_command cmd = { .name = "send", .table = send_opts, .intro = send_intro, .outro = send_outro,
					 .defaults = &defaults };
	int first, rc;

	*o = defaults;
	rc = opt_parse(&cmd, o, argc, argv, &first);
	if (rc)
		return rc;
	if (first < argc)
		return usage_error("send", "unexpected argument '%s'", argv[first]);
	if (!o->have_connect)
		return usage_error("send", "%s--connect ADDR:PORT is required", "");
	if (!o->bytes)
		return usage_error("send", "%s--bytes SIZE is required", "");
	if (o->corrupt && o->corrupt_at >= o->bytes)
		return usage_error("send", "--corrupt-at: expected an offset below --bytes, the stream's length%s", "");
	return 0;
}

/* The sentence for a failed send() (all_written false) or for a failure
 * while waiting for the receiver's close (all_written true). */
static int stream_failed(int err, uint64_t done, bool all_written, unsigned timeout)
{
	unsigned long long n = (unsigned long long)done;

	if (err == EPIPE || err == ECONNRESET)
		return diag_fail("send: connection reset by the receiver after %llu bytes were written%s", n,
				 all_written ? " (all of them, but it rejected the stream: see its message)" : "");
	if (err == EAGAIN || err == EWOULDBLOCK)
		return diag_fail("send: the receiver %s for %u s after %llu bytes (--timeout)",
				 all_written ? "did not close" : "took nothing", timeout, n);
	return diag_fail("send: %s after %llu bytes: %s", all_written ? "recv" : "send", n, strerror(err));
}

/* Write the whole stream; returns bytes the kernel accepted (== o->bytes
 * on success) and sets *err on failure. */
static uint64_t send_stream(int fd, const struct send_options *o, uint8_t *buf, int *err)
{
	uint64_t done = 0;

	*err = 0;
	while (done < o->bytes) {
		size_t len = o->bytes - done < SEND_BUF_BYTES ? (size_t)(o->bytes - done) : SEND_BUF_BYTES;
		size_t off = 0;

		stream_fill(buf, len, done);
		if (o->corrupt && o->corrupt_at >= done && o->corrupt_at < done + len)
			buf[o->corrupt_at - done] ^= 0xff;
		while (off < len) {
			ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				*err = errno;
				return done + off;
			}
			off += (size_t)n;
		}
		done += len;
	}
	return done;
}

int send_main(int argc, char **argv)
{
	struct send_options o;
	char addr[ENDPOINT_STRLEN];
	uint8_t *buf;
	uint64_t done;
	double t0, seconds;
	int rc, fd, err;
	ssize_t n;

	rc = send_parse(&o, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	endpoint_format(&o.connect, addr);

	buf = aligned_alloc(4096, SEND_BUF_BYTES);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!buf || fd < 0) {
		diag_fail("send: %s", buf ? strerror(errno) : "out of memory for the send buffer");
		goto fail;
	}
	/* Set before connect(): SO_SNDTIMEO also bounds the connect wait. */
	if (socket_set_timeouts(fd, o.timeout)) {
		diag_fail("send: cannot set the socket timeout: %s", strerror(errno));
		goto fail;
	}
	if (connect(fd, (const struct sockaddr *)&o.connect, sizeof(o.connect))) {
		diag_fail("send: cannot connect to %s: %s", addr,
			  errno == EINPROGRESS ? "no answer within --timeout" : strerror(errno));
		goto fail;
	}

	t0 = monotonic_seconds();
	done = send_stream(fd, &o, buf, &err);
	if (err) {
		stream_failed(err, done, false, o.timeout);
		goto fail;
	}
	/* Our FIN, then the receiver's: EOF if it read everything and closed,
	 * a reset if it gave up with our bytes still unread. */
	shutdown(fd, SHUT_WR);
	do
		n = recv(fd, buf, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		stream_failed(errno, done, true, o.timeout);
		goto fail;
	}
	if (n > 0) {
		diag_fail("send: the receiver at %s sent data back; it is not 'lguest-kvm receive'", addr);
		goto fail;
	}
	seconds = monotonic_seconds() - t0;
	close(fd);
	free(buf);
	if (!o.quiet)
		printf("send: %llu bytes to %s in %.3f s (%.2f Gbit/s)%s\n", (unsigned long long)done, addr,
		       seconds, seconds > 0 ? done * 8.0 / seconds / 1e9 : 0.0,
		       o.corrupt ? ", one byte flipped (--corrupt-at)" : "");
	return 0;

fail:
	diag_print();
	if (fd >= 0)
		close(fd);
	free(buf);
	return EXIT_ERROR;
}
