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
 * This file only picks the command, from the one table below (name,
 * function, the line --help prints).  It sits at the top of the layers
 * because it sees them all: `run` is the VMM's (launcher/run.c tells the
 * story of one guest); the others are the lab's -- table.c runs many
 * guests and tabulates them, receive.c and send.c are the two host-side
 * ends of the tcp workload's stream, trace_cmd.c reads the timeline
 * `run --trace` recorded.
 *
 * Before that it makes sure descriptors 0, 1 and 2 are open, whatever the
 * caller left closed: every command opens files (the stats JSON, /dev/kvm,
 * a trace, a receiver's socket), and the first of them would otherwise
 * become "stdout" -- guest output written into the --stats-json file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"
#include "options.h"
#include "receive.h"
#include "run.h"
#include "table.h"
#include "trace_cmd.h"

/* `lguest-kvm run`: its options, then the run (argv[0] = "run"). */
static int run_main(int argc, char **argv)
{
	struct run_options o;
	int rc;

	run_options_defaults(&o);
	rc = run_options_parse(&o, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	return lkvm_run(&o);
}

struct command {
	const char *name;
	int (*main)(int argc, char **argv);   /* argv[0] = the command's name */
	const char *synopsis;                 /* what follows the name in the usage */
	const char *help;                     /* one line: what it does */
};

static const struct command commands[] = {
	{ "run", run_main, "[options] [GUEST.elf]",
	  "boot the guest stub, run its workload, print stats" },
	{ "table", table_main, "[options]",
	  "reproduce the 2008 notification table" },
	{ "receive", receive_main, "--bytes SIZE [options]",
	  "accept one TCP stream, verify every byte" },
	{ "send", send_main, "--connect ADDR:PORT --bytes SIZE",
	  "write that stream (test aid, loopback bench)" },
	{ "trace", trace_main, "FILE [--plot OUT.svg] [--from MS] [--to MS] [--json]",
	  "summarise and draw the timeline 'run --trace' wrote" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The help column: a synopsis that comes within two spaces of it puts its
 * help on the next line. */
#define HELP_COLUMN 48

static void usage(FILE *f)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];
		int n = fprintf(f, "%s lguest-kvm %s %s", i ? "      " : "usage:", c->name, c->synopsis);

		if (n + 2 <= HELP_COLUMN)
			fprintf(f, "%*s%s\n", HELP_COLUMN - n, "", c->help);
		else
			fprintf(f, "\n%*s%s\n", HELP_COLUMN, "", c->help);
	}
	fprintf(f,
"       lguest-kvm --help | --version\n"
"\n"
"'lguest-kvm COMMAND --help' lists a command's options.\n");
}

/* "'run', 'table', ... or 'trace'", for the unknown-command line. */
static void print_command_names(FILE *f)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "%s'%s'", i == 0 ? "" : i + 1 < NCOMMANDS ? ", " : " or ", commands[i].name);
}

/* A closed standard stream becomes /dev/null: reading it gives EOF and
 * writing it goes nowhere, as the caller meant by closing it.  open()
 * takes the lowest free number, so each one lands on the hole it fills. */
static void open_closed_std_streams(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", fd ? O_WRONLY : O_RDONLY) < 0)
			return;   /* no /dev/null: nothing better to put there */
}

int main(int argc, char **argv)
{
	open_closed_std_streams();
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
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	fprintf(stderr, "lguest-kvm: unknown command '%s' -- use ", argv[1]);
	print_command_names(stderr);
	fprintf(stderr, " (see --help)\n");
	return EXIT_USAGE;
}
