/*
 * diag.h -- one-line errors and the launcher's exit codes.
 *
 * Setup code reports a failure by recording one sentence (what failed, why,
 * and what to do) with diag_fail() and returning -1; the command (run.c,
 * table.c) prints it once as "lguest-kvm: <sentence>" with diag_print() and
 * exits with the matching code.  Code deep in a call chain thus never
 * decides how an error is shown.  It lives in common/, below devices/ and
 * launcher/, so that a device can fail the same way without knowing who
 * prints the line.
 */
#ifndef DIAG_H
#define DIAG_H

#include <stddef.h>

enum lkvm_exit_code {
	/* 0 and any other guest status are passed through */
	EXIT_ERROR        = 1,   /* host-side failure: KVM, files, bad guest image */
	EXIT_USAGE        = 2,   /* bad command line */
	EXIT_VERIFY       = 3,   /* the host's check of the transmitted data failed */
	EXIT_GUEST_CRASH  = 125, /* triple fault, guest exception, unexpected exit */
	EXIT_DEVICE_ERROR = 126, /* the guest broke a virtio ring (DEVICE_NEEDS_RESET) */
	/* 128 + signal number after SIGINT / SIGTERM, as shells do */
};

int diag_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void diag_print(void);     /* "lguest-kvm: <last>" on stderr */
/* "lguest-kvm COMMAND: <fmt with arg> -- see 'lguest-kvm COMMAND --help'";
 * returns EXIT_USAGE. */
int usage_error(const char *command, const char *fmt, const char *arg);

/* The last "lguest-kvm..." line of a child's saved stderr, for a table
 * row or a sample that failed ("no error message" if there is none). */
void diag_last_line(const char *path, char *out, size_t size);

#endif
