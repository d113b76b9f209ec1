/*
 * linux_boot.h -- boot a Linux bzImage through the 32-bit boot protocol
 * (the kernel's Documentation/arch/x86/boot.rst), with an initrd and ACPI.
 *
 * Why the bzImage and not the PVH entry the stub uses: a distribution ships
 * /boot/vmlinuz, a bzImage, and its vmlinux (the ELF with the
 * XEN_ELFNOTE_PHYS32_ENTRY note) is inside it compressed -- xz on Debian
 * 12 -- so the PVH route would need the launcher to carry an xz decoder,
 * or the user a separate debug package.  The bzImage's 32-bit entry wants
 * almost the vCPU state PVH wants (flat 32-bit protected mode, paging off),
 * so it costs a page of boot_params instead of a decompressor, and the
 * kernel decompresses itself.
 *
 * Guest-physical layout (RAM from 0; nothing here overlaps the stub's
 * addresses in lguest_kvm_abi.h, except the GDT page, which both use):
 *
 *   0x05000  the GDT: __BOOT_CS 0x10, __BOOT_DS 0x18, as boot.rst asks
 *   0x10000  boot_params ("zero page"): setup header, e820 map, RSDP
 *   0x20000  the command line
 *   0xe0000  the ACPI tables (acpi.h), RSDP first: where a BIOS would put
 *            it, so a kernel that scans for it finds it too
 *   1 MiB    the kernel's protected-mode code (it relocates itself)
 *   top      the initrd, page aligned, under the kernel's initrd_addr_max
 */
#ifndef LINUX_BOOT_H
#define LINUX_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "guest_mem.h"

#define LINUX_BOOT_PARAMS_GPA 0x10000u
#define LINUX_CMDLINE_GPA     0x20000u
#define LINUX_CMDLINE_MAX     4096u
#define LINUX_ACPI_GPA        0xe0000u
#define LINUX_KERNEL_GPA      0x100000u
#define LINUX_SLEEP_PORT      0x600u   /* the FADT's sleep control port (and status, + 1) */

/* A bzImage read into memory and checked. */
struct linux_kernel {
	uint8_t *file;
	size_t size;
	size_t setup_bytes;         /* real-mode part: (setup_sects + 1) * 512 */
	uint16_t version;           /* boot protocol, e.g. 0x020f */
	uint32_t init_size;         /* memory the kernel needs from where it runs */
	uint64_t pref_address;      /* where it runs if relocatable */
	uint32_t initrd_addr_max;
	uint32_t cmdline_size;
};

/* Read and check a bzImage: -1 with one diag line naming the file and what
 * is wrong with it (not a kernel, too old a boot protocol, no 32-bit
 * entry), before any VM exists. */
int linux_read_kernel(const char *path, struct linux_kernel *k);
/* Read an initrd (at most 1 GiB): -1 with one diag line. */
int linux_read_initrd(const char *path, uint8_t **data, size_t *size);
/* The least --mem this kernel and initrd can boot in, in bytes. */
uint64_t linux_mem_needed(const struct linux_kernel *k, size_t initrd_size);
/* Copy kernel and initrd into RAM and write boot_params with the e820
 * map, the command line and the RSDP's address (the ACPI tables must
 * already sit at LINUX_ACPI_GPA).  The 32-bit entry point is
 * LINUX_KERNEL_GPA, with %esi = LINUX_BOOT_PARAMS_GPA.  -1 with diag set. */
int linux_load(struct guest_mem *gm, const struct linux_kernel *k, const uint8_t *initrd, size_t initrd_size,
	       const char *cmdline);
/* The kernel's release ("6.1.0-57-amd64"), from the version string the
 * setup header points at: which /lib/modules the initramfs takes.  -1 if
 * the image has none. */
int linux_kernel_version(const struct linux_kernel *k, char *out, size_t size);
void linux_free_kernel(struct linux_kernel *k);

#endif
