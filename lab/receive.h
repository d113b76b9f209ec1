/*
 * receive.h -- the two host-side ends of the tcp workload's byte stream:
 * `lguest-kvm receive` (receive.c) accepts one TCP connection and verifies
 * every byte of the stream; `lguest-kvm send` (send.c) writes the same
 * stream, so the receiver can be tested, and the host's own TCP ceiling
 * measured, without a guest.
 *
 * Each command's options and its parser are here as well as its main, so
 * that the command-line fuzzer and the option-bounds test
 * (tests/fuzz/fuzz_cmdline.c, tests/unit/test_option_bounds.c) drive the
 * very parser the command uses, and nothing else: parsing opens no socket.
 */
#ifndef RECEIVE_H
#define RECEIVE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "opt_table.h"

struct receive_options {
	struct sockaddr_in listen;
	uint64_t bytes;             /* the stream's exact length; 0: not given */
	uint64_t close_after;       /* test aid: reset after this many; 0: never */
	const char *ready;          /* created once listening */
	const char *json;
	uint32_t timeout;           /* seconds without a connection or data */
	bool quiet;
};

struct send_options {
	struct sockaddr_in connect;
	bool have_connect;
	uint64_t bytes;
	uint64_t corrupt_at;        /* test aid: flip this byte ... */
	bool corrupt;               /* ... if set */
	uint32_t timeout;           /* seconds the receiver may stall us */
	bool quiet;
};

extern const struct opt receive_opts[], send_opts[];   /* each option, described once */

/* Parse (argv[0] = the command's name) into *o, defaults first: 0, or
 * EXIT_USAGE after printing the one line, or -1 for --help/--version
 * (already printed). */
int receive_parse(struct receive_options *o, int argc, char **argv);
int send_parse(struct send_options *o, int argc, char **argv);

int receive_main(int argc, char **argv);   /* argv[0] = "receive" */
int send_main(int argc, char **argv);      /* argv[0] = "send" */

#endif
