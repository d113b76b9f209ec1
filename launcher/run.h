/*
 * run.h -- `lguest-kvm run`: boot the guest, run it to the end, print stats.
 */
#ifndef RUN_H
#define RUN_H

#include "options.h"

/* Returns the process exit status (see diag.h and --help). */
int lkvm_run(const struct run_options *o);

#endif
