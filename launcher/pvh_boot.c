/*
 * pvh_boot.c -- fill in the PVH start info.
 * One RAM range in the memory map, the command line beside it.
 */
#include "pvh_boot.h"

#include <string.h>

#include "diag.h"
#include "lguest_kvm_abi.h"
#include "pvh_start_info.h"

int pvh_write_start_info(struct guest_mem *gm, const char *cmdline)
{
	size_t len = strlen(cmdline) + 1;
	uint64_t map_gpa = LKVM_START_INFO_GPA + sizeof(struct hvm_start_info);
	struct hvm_start_info *si = gmem_ptr(gm, LKVM_START_INFO_GPA, sizeof(*si));
	struct hvm_memmap_table_entry *map = gmem_ptr(gm, map_gpa, sizeof(*map));
	char *line = gmem_ptr(gm, LKVM_CMDLINE_GPA, LKVM_CMDLINE_MAX);

	if (len > LKVM_CMDLINE_MAX)
		return diag_fail("guest command line is %zu bytes, limit %u", len, LKVM_CMDLINE_MAX);
	memcpy(line, cmdline, len);
	*map = (struct hvm_memmap_table_entry){ .addr = 0, .size = gm->size, .type = HVM_MEMMAP_TYPE_RAM };
	*si = (struct hvm_start_info){
		.magic = HVM_START_MAGIC_VALUE,
		.version = 1,
		.cmdline_paddr = LKVM_CMDLINE_GPA,
		.memmap_paddr = map_gpa,
		.memmap_entries = 1,
	};
	return 0;
}
