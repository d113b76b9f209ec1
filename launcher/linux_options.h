/*
 * linux_options.h -- the `run` options of a Linux guest (docs/linux-guest.md):
 * --guest linux, --kernel, --initrd, --append, --withhold-features.
 *
 * Their rows are in options.c's table; what is particular to Linux -- the
 * feature names, and the options that mean nothing to a Linux guest --
 * lives here, so the Linux guest's words are in one place.
 */
#ifndef LINUX_OPTIONS_H
#define LINUX_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"

/* The table's parsers: --guest (only "linux") and --withhold-features. */
bool linux_parse_guest(const char *arg, void *opts);
bool linux_parse_withhold(const char *arg, void *opts);
/* "event-idx,indirect-desc" -> feature bits; false on an unknown name. */
bool linux_parse_features(const char *list, uint64_t *bits);
/* The combination, once every option is read (a Linux run: run_is_linux);
 * 0, or EXIT_USAGE after printing the usage line. */
int linux_options_check(struct run_options *o);

#endif
