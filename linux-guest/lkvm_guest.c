/*
 * lkvm_guest.c -- the Linux guest's own tool (docs/linux-guest.md), linked
 * statically into the initramfs beside busybox:
 *
 *   lkvm-guest send --connect ADDR:PORT --bytes N
 *       write the tcp workload's stream (lab/stream_pattern.c, the
 *       same code `lguest-kvm send` and the receiver use) over one TCP
 *       connection, half-close, and wait for the receiver's clean close:
 *       a reset means it rejected the stream.  Exit 0 on success.
 *   lkvm-guest exit STATUS
 *       leave the VM with STATUS through the launcher's exit port (0x501,
 *       lguest_kvm_abi.h), as the stub does: the run's exit status is the
 *       guest's own, which busybox's poweroff cannot carry.
 *
 * It is built by Meson with the host's compiler and -static: nothing of
 * the host's libraries needs to be in the initramfs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lguest_kvm_abi.h"
#include "stream_pattern.h"

#define CHUNK (256u << 10)

static int fail(const char *what)
{
	fprintf(stderr, "lkvm-guest: %s: %s\n", what, strerror(errno));
	return 1;
}

static int parse_target(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

static int do_send(const char *target, unsigned long long bytes)
{
	static uint8_t buf[CHUNK];
	struct sockaddr_in sa;
	unsigned long long off = 0;
	int fd = -1;
	char c;

	if (parse_target(target, &sa) < 0) {
		fprintf(stderr, "lkvm-guest: --connect %s: give ADDR:PORT\n", target);
		return 2;
	}
	/* The interface may still be coming up: try for a while. */
	for (int tries = 0; tries < 50; tries++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return fail("socket");
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(fd);
		fd = -1;
		usleep(200000);
	}
	if (fd < 0)
		return fail("connect");
	while (off < bytes) {
		size_t len = bytes - off < CHUNK ? (size_t)(bytes - off) : CHUNK, done = 0;

		stream_fill(buf, len, off);
		while (done < len) {
			ssize_t n = send(fd, buf + done, len - done, 0);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return fail("send");
			done += (size_t)n;
		}
		off += len;
	}
	if (shutdown(fd, SHUT_WR) < 0)
		return fail("shutdown");
	/* The receiver closes cleanly once it has checked every byte. */
	for (;;) {
		ssize_t n = recv(fd, &c, 1, 0);

		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("the receiver's close");
	}
	close(fd);
	printf("lkvm-guest: sent %llu bytes, the receiver closed cleanly\n", bytes);
	return 0;
}

static int do_exit(int status)
{
	fflush(NULL);
	if (ioperm(LKVM_PORT_EXIT, 1, 1) < 0)
		return fail("ioperm");
	outb((unsigned char)status, LKVM_PORT_EXIT);
	fprintf(stderr, "lkvm-guest: still running after the exit port: not on lguest-kvm?\n");
	return 125;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "send") && !strcmp(argv[2], "--connect") && !strcmp(argv[4], "--bytes"))
		return do_send(argv[3], strtoull(argv[5], NULL, 0));
	if (argc == 3 && !strcmp(argv[1], "exit"))
		return do_exit(atoi(argv[2]));
	fprintf(stderr, "usage: lkvm-guest send --connect ADDR:PORT --bytes N | lkvm-guest exit STATUS\n");
	return 2;
}
