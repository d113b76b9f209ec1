/*
 * pvh_start_info.h -- the PVH boot ABI's start-of-day structures (Xen public
 * header arch-x86/hvm/start_info.h, version 1), written down here because
 * Debian's kernel headers do not ship them.  Shared by the launcher, which
 * fills them in, and the guest stub, which reads them.
 */
#ifndef PVH_START_INFO_H
#define PVH_START_INFO_H

#include <stdint.h>

#define HVM_START_MAGIC_VALUE 0x336ec578u
#define HVM_MEMMAP_TYPE_RAM   1u
#define XEN_ELFNOTE_PHYS32_ENTRY 18

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint32_t reserved;
};

#endif
