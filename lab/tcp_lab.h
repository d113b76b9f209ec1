/*
 * tcp_lab.h -- the other end of the tcp workload, set up and torn down by
 * `lguest-kvm table --workload tcp` (and the tests, through it).
 *
 * tap: a network namespace of its own (lkvm-<pid>) holding a TAP device
 * lkvm0 with 10.99.0.1/24, the receiver listening there and the launcher
 * run inside it, so the traffic never leaves the namespace.  user: nothing
 * to build; the receiver listens on a free port of 127.0.0.1, which the
 * guest reaches as 10.0.2.2 through libslirp.  Either way each sample gets
 * a fresh `lguest-kvm receive` that verifies every byte.  The namespace is
 * deleted at the end, on Ctrl-C too; one left by a killed table (its pid
 * gone) is deleted by the next.
 */
#ifndef TCP_LAB_H
#define TCP_LAB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tcp_lab {
	bool tap;                   /* else user-mode networking */
	char netns[32];             /* "" until created */
	char dir[64];               /* temporary files of the current receiver */
	pid_t receiver;
	char peer_arg[32];          /* --peer for the run: the receiver as the guest sees it */
};

/* Build the network: a namespace with a tap, or (user) nothing.  -1 with diag set. */
int tcp_lab_open(struct tcp_lab *lab, bool tap);
/* In a forked child, before exec: join the lab's namespace (tap). */
int tcp_lab_enter(const struct tcp_lab *lab);
/* Start a receiver for `bytes`; returns once it listens.  -1 with `why`. */
int tcp_lab_start_receiver(struct tcp_lab *lab, uint64_t bytes, char *why, size_t why_size);
/* Wait for the receiver (killing it if `abandon`): 0 if it verified the
 * whole stream, else its exit status with its reason in `why`. */
int tcp_lab_finish_receiver(struct tcp_lab *lab, bool abandon, char *why, size_t why_size);
/* The host's own loopback TCP: send -> receive `bytes` once; seconds, or
 * a negative value with `why`. */
double tcp_lab_loopback(uint64_t bytes, char *why, size_t why_size);
/* Delete the namespace (and with it the tap).  Safe to call twice. */
void tcp_lab_close(struct tcp_lab *lab);

#endif
