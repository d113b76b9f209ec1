/*
 * main.c -- lguest-kvm: an lguest-style launcher on KVM for measuring when a
 * guest and its host notify each other across a virtio ring.
 *
 *   lguest-kvm run   [options] [GUEST.elf]   boot a guest, run it, print stats
 *   lguest-kvm table [options]               reproduce the 2008 table
 *   lguest-kvm receive --bytes SIZE [options] verify a TCP byte stream
 *   lguest-kvm send --connect A:P --bytes SIZE  write that stream
 *   lguest-kvm trace FILE [--plot OUT.svg]   summarise and draw a run's timeline
 *
 * This file only picks the command; run.c tells the story of one guest,
 * table.c runs many and tabulates them, receive.c and send.c are the two
 * host-side ends of the tcp workload's stream, trace_cmd.c reads the
 * timeline `run --trace` recorded.
 */
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "options.h"
#include "receive.h"
#include "run.h"
#include "table.h"
#include "trace_cmd.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: lguest-kvm run   [options] [GUEST.elf]   boot the guest stub, run its workload, print stats\n"
"       lguest-kvm table [options]               reproduce the 2008 notification table\n"
"       lguest-kvm receive --bytes SIZE [options] accept one TCP stream, verify every byte\n"
"       lguest-kvm send --connect ADDR:PORT --bytes SIZE  write that stream (test aid, loopback bench)\n"
"       lguest-kvm trace FILE [--plot OUT.svg] [--from MS] [--to MS] [--json]\n"
"                                                summarise and draw the timeline 'run --trace' wrote\n"
"       lguest-kvm --help | --version\n"
"\n"
"'lguest-kvm COMMAND --help' lists a command's options.\n");
}

int main(int argc, char **argv)
{
	struct run_options o;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "lguest-kvm: no command given -- use 'lguest-kvm run' or 'lguest-kvm table' (see --help)\n");
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("lguest-kvm %s\n", LKVM_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "run")) {
		run_options_defaults(&o);
		rc = run_options_parse(&o, argc - 1, argv + 1);
		if (rc)
			return rc < 0 ? 0 : rc;
		return lkvm_run(&o);
	}
	if (!strcmp(argv[1], "table"))
		return table_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "receive"))
		return receive_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "send"))
		return send_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "trace"))
		return trace_main(argc - 1, argv + 1);
	fprintf(stderr, "lguest-kvm: unknown command '%s' -- use 'run', 'table', 'receive', 'send' or 'trace' (see --help)\n",
		argv[1]);
	return EXIT_USAGE;
}
