/*
 * linux_options.h -- the `run` options of a Linux guest (docs/linux-guest.md):
 * --guest linux, --kernel, --initrd, --append, --withhold-features.
 *
 * Apart from options.c so that the Linux guest's words live in one place:
 * options.c hands each of these options here as it meets it, then asks
 * linux_options_check() once the whole line is read.
 */
#ifndef LINUX_OPTIONS_H
#define LINUX_OPTIONS_H

#include <stdio.h>

#include "options.h"

/* Which option, in the order options.c lists them. */
enum linux_option_id { LINUX_OPT_GUEST, LINUX_OPT_KERNEL, LINUX_OPT_INITRD, LINUX_OPT_APPEND, LINUX_OPT_WITHHOLD };

/* Take one option's argument; 0, or EXIT_USAGE after printing the usage line. */
int linux_option(struct run_options *o, int id, const char *arg);
/* The combination, once every option is read (a Linux run: run_is_linux);
 * 0, or EXIT_USAGE after printing the usage line. */
int linux_options_check(struct run_options *o);
/* The options' lines of `run --help`. */
void linux_usage(FILE *f);
/* "event-idx,indirect-desc" -> feature bits; false on an unknown name. */
bool linux_parse_features(const char *list, uint64_t *bits);

#endif
