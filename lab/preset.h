/*
 * preset.h -- named machines for `lguest-kvm table --preset NAME`.
 *
 * A preset is a list of run options that together stand for one machine,
 * each with the reason it has that value.  The table hands every option of
 * its preset to each child run unless the user gave that option, so one
 * setting serves every row and nothing is chosen per row.  The "2008"
 * preset is the seed's machine as docs/seed-2008.md reconstructs it; the
 * table runs it when no --preset is given.
 */
#ifndef PRESET_H
#define PRESET_H

#include <stdbool.h>
#include <stddef.h>

struct preset_option {
	const char *option;   /* a run option, e.g. "--pace-ns" */
	const char *value;
	bool vm_none_only;    /* a knob of the no-VM hosts (a VM's own exits cost what they cost) */
	const char *why;      /* where the value comes from */
};

struct preset {
	const char *name;
	const char *summary;       /* one line, for the banner and --help */
	const char *workload;      /* raw | tcp */
	const char *model;         /* the host model the preset stands for */
	const struct preset_option *options;
	size_t count;
};

/* The preset called `name`, or NULL. "none" is no preset: NULL too. */
const struct preset *preset_find(const char *name);

#endif
