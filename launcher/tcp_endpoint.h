/*
 * tcp_endpoint.h -- the socket details `send` and `receive` share: the
 * IPv4 ADDR:PORT form of their --connect / --listen options, the text form
 * of a peer for messages and JSON, and how long either end waits on the
 * other (--timeout).
 */
#ifndef TCP_ENDPOINT_H
#define TCP_ENDPOINT_H

#include <netinet/in.h>
#include <stdbool.h>

/* "A.B.C.D:PORT" -> address; PORT 0 only if allow_port0 (listen on any
 * free port).  false on anything else (names, IPv6, junk). */
bool endpoint_parse(const char *s, bool allow_port0, struct sockaddr_in *out);

/* "A.B.C.D:PORT" for messages; buf of ENDPOINT_STRLEN bytes. */
#define ENDPOINT_STRLEN 24
const char *endpoint_format(const struct sockaddr_in *a, char *buf);

/* Make blocking reads (SO_RCVTIMEO) and writes, including connect()
 * (SO_SNDTIMEO), fail with EAGAIN after `seconds` without progress. */
int socket_set_timeouts(int fd, unsigned seconds);

#endif
