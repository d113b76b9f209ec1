/*
 * tcp_endpoint.c -- parse and print IPv4 endpoints, and bound how long a
 * socket may stall.  Kept apart from the commands so `send` and `receive`
 * accept exactly the same ADDR:PORT spelling and time out the same way.
 */
#include "tcp_endpoint.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

bool endpoint_parse(const char *s, bool allow_port0, struct sockaddr_in *out)
{
	const char *colon = strrchr(s, ':');
	char host[INET_ADDRSTRLEN];
	unsigned long port;
	char *end;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
		return false;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (colon[1] < '0' || colon[1] > '9')
		return false;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || *end || port > 65535 || (port == 0 && !allow_port0))
		return false;
	memset(out, 0, sizeof(*out));
	out->sin_family = AF_INET;
	out->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &out->sin_addr) == 1;
}

const char *endpoint_format(const struct sockaddr_in *a, char *buf)
{
	char host[INET_ADDRSTRLEN];

	if (!inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host)))
		snprintf(host, sizeof(host), "?");
	snprintf(buf, ENDPOINT_STRLEN, "%s:%u", host, ntohs(a->sin_port));
	return buf;
}

int socket_set_timeouts(int fd, unsigned seconds)
{
	struct timeval tv = { .tv_sec = seconds };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -1;
	return 0;
}
