/*
 * preset.c -- the machines `table --preset` can stand for (preset.h).
 *
 * "2008" is the seed's machine: every value below is taken from a fact or a
 * marked inference in docs/seed-2008.md (section in each `why`), and none
 * was chosen by looking at our own table.  Changing one is changing the
 * reconstruction, and that document must say why first.
 */
#include "preset.h"

#include <string.h>

static const struct preset_option machine_2008[] = {
	{ "--bytes", "64M", false,
	  "not the machine but the table's size: 1/16 of the seed's 1G, so that 12 rows x 3 runs end within "
	  "10 minutes on 2 cores (~2.5 here); every count is compared per GiB" },
	{ "--frame", "190", false,
	  "~7.75M TX buffers per 1G TCP stream (MSS 136): three facts agree, seed-2008.md sec. 3" },
	{ "--segments", "2", false, "header + linear data: no SG without VIRTIO_NET_F_CSUM, sec. 3" },
	{ "--ring", "128", false, "lguest's VIRTQUEUE_NUM in 2008 (64 packets of 2 descriptors), sec. 3" },
	{ "--pace-ns", "2000", false,
	  "16.59 s / 7.75M buffers = 2.1 us per buffer all in, sec. 3 (tcp: a segment's whole slot, the sender's "
	  "own work in it)" },
	{ "--exit-cost-ns", "3000", true, "rows 10-30 against row 100: ~2-4 us per notify in 2008, sec. 4" },
	{ "--host-timer", "rearm", false, "rows 40-128: ~1,000 notifies against ~280,000 expiries, sec. 5b" },
	{ "--timeout-us", "50", false,
	  "fixed (the adaptive rule came after the seed's base, sec. 1); ~60 us between expiries all in, sec. 5a" },
	{ "--timer-wait", "spin", false,
	  "an expiry on time: ~60 us between expiries all in, sec. 5a -- a sleeping waker adds the machine's "
	  "timer lateness (~50 us on a VM-hosted machine) to every period" },
};

static const struct preset presets[] = {
	{ "2008", "the seed's machine: 1G TCP guest->host on lguest (docs/seed-2008.md)", "tcp", "lguest",
	  machine_2008, sizeof(machine_2008) / sizeof(machine_2008[0]) },
};

const struct preset *preset_find(const char *name)
{
	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
		if (!strcmp(presets[i].name, name))
			return &presets[i];
	return NULL;
}
