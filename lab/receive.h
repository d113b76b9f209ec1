/*
 * receive.h -- the two host-side ends of the tcp workload's byte stream:
 * `lguest-kvm receive` (receive.c) accepts one TCP connection and verifies
 * every byte of the stream; `lguest-kvm send` (send.c) writes the same
 * stream, so the receiver can be tested, and the host's own TCP ceiling
 * measured, without a guest.
 */
#ifndef RECEIVE_H
#define RECEIVE_H

int receive_main(int argc, char **argv);   /* argv[0] = "receive" */
int send_main(int argc, char **argv);      /* argv[0] = "send" */

#endif
