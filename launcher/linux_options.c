/*
 * linux_options.c -- parse and check the Linux guest's `run` options
 * (linux_options.h).
 *
 * A Linux guest runs its own drivers and its own TCP, so of the stub's
 * options only those about the host stay meaningful: the devices' model
 * and timer, the backend and addresses, --mem, --bytes and --workload (what
 * the initramfs's /init does: boot, or tcp), the stats, the limits.
 */
#include "linux_options.h"

#include <string.h>

#include "diag.h"

static const struct {
	const char *name;
	unsigned bit;
} feature_names[] = {
	/* the transport's and ring's (virtio 1.2, 6) */
	{ "indirect-desc", 28 }, { "event-idx", 29 }, { "ring-packed", 34 },
	/* the net device's (5.1.3) */
	{ "csum", 0 }, { "mac", 5 }, { "host-tso4", 11 },
};

bool linux_parse_features(const char *list, uint64_t *bits)
{
	*bits = 0;
	while (*list) {
		size_t len = strcspn(list, ",");
		bool found = false;

		for (size_t i = 0; i < sizeof(feature_names) / sizeof(feature_names[0]); i++)
			if (strlen(feature_names[i].name) == len && !strncmp(list, feature_names[i].name, len)) {
				*bits |= 1ull << feature_names[i].bit;
				found = true;
			}
		if (!found)
			return false;
		list += len + (list[len] == ',');
	}
	return *bits != 0;
}

bool linux_parse_guest(const char *arg, void *opts)
{
	((struct run_options *)opts)->guest_linux = !strcmp(arg, "linux");
	return true;
}

bool linux_parse_withhold(const char *arg, void *opts)
{
	return linux_parse_features(arg, &((struct run_options *)opts)->withhold_features);
}

int linux_options_check(struct run_options *o)
{
	if (o->no_vm || o->model_thread)
		return usage_error("run", "--vm none / --model thread: runs the stub's own driver; a Linux guest needs a "
				   "VM%s", "");
	if (o->guest)
		return usage_error("run", "'%s': a stub image and a Linux kernel at once -- give one", o->guest);
	if (strcmp(o->workload, "raw") && strcmp(o->workload, "boot") && strcmp(o->workload, "tcp"))
		return usage_error("run", "--workload '%s': a Linux guest's /init does boot or tcp", o->workload);
	if (!strcmp(o->workload, "raw"))
		o->workload = "boot";   /* the stub's default means nothing to Linux */
	if (strcmp(o->fault, "none") || o->trace)
		return usage_error("run", "--fault and --trace: the stub's own instruments, not Linux's%s", "");
	/* Linux picks its own ring layout from what is offered; --layout
	 * packed still asks the run to check that it did. */
	if (strcmp(o->layout, "packed"))
		o->layout = "any";
	o->policy = "linux";        /* its own, for the stats: not a stub policy */
	if (o->initrd && !o->kernel)
		return usage_error("run", "--initrd %s: --guest linux builds its own; give --kernel too", o->initrd);
	return 0;
}
