/*
 * linux_boot.c -- read a bzImage and an initrd, and lay them out in guest
 * RAM for the 32-bit boot protocol (linux_boot.h says why that one).
 *
 * The flow: linux_read_kernel() reads the file and checks the setup
 * header (boot.rst, "The real-mode kernel header"), before a VM exists;
 * linux_load() copies the protected-mode part to 1 MiB and the initrd under
 * the top of RAM, and fills boot_params: a copy of the file's setup header
 * with the loader's fields set, the e820 map and the RSDP's address.
 * Offsets are boot.rst's and arch/x86/include/uapi/asm/bootparam.h's, named
 * below; the image is untrusted and read with bounds checks only.
 */
#include "linux_boot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "acpi.h"
#include "diag.h"

/* The setup header, as offsets in the file and in boot_params alike. */
#define HDR_START          0x1f1   /* setup_sects: the header starts here */
#define HDR_SETUP_SECTS    0x1f1
#define HDR_BOOT_FLAG      0x1fe   /* 0xaa55 */
#define HDR_JUMP           0x200   /* 0xeb, then the header's end - 0x202 */
#define HDR_MAGIC          0x202   /* "HdrS" */
#define HDR_VERSION        0x206
#define HDR_KERNEL_VERSION 0x20e   /* the version string, at this + 0x200 in the file */
#define HDR_TYPE_OF_LOADER 0x210
#define HDR_LOADFLAGS      0x211
#define HDR_CODE32_START   0x214
#define HDR_RAMDISK_IMAGE  0x218
#define HDR_RAMDISK_SIZE   0x21c
#define HDR_CMD_LINE_PTR   0x228
#define HDR_INITRD_ADDR_MAX 0x22c
#define HDR_RELOCATABLE    0x234
#define HDR_CMDLINE_SIZE   0x238
#define HDR_PREF_ADDRESS   0x258
#define HDR_INIT_SIZE      0x260
#define LOADED_HIGH        0x01    /* loadflags: the protected-mode code is at 1 MiB (a bzImage) */
#define LOADER_UNDEFINED   0xff    /* type_of_loader: a loader with no assigned ID */
#define MIN_PROTOCOL       0x020c  /* 2.12: xloadflags, 64-bit-era kernels (3.8+) */

/* boot_params ("zero page") beyond the header. */
#define BP_ACPI_RSDP_ADDR  0x070   /* protocol 2.14 */
#define BP_E820_ENTRIES    0x1e8
#define BP_E820_TABLE      0x2d0   /* 128 entries of { u64 addr, u64 size, u32 type } */
#define BOOT_PARAMS_SIZE   0x1000
#define E820_RAM           1
#define E820_RESERVED      2

/* The MP floating pointer and its empty table (write_mp_table). */
#define MP_FLOATING_GPA    0x9fc00
#define MP_CONFIG_LEN      44

#define MAX_KERNEL_BYTES   (128ull << 20)
#define MAX_INITRD_BYTES   (1ull << 30)

static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void wr64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* A whole regular file of at most `max` bytes; `what` and `hint` word the line. */
static int read_whole(const char *opt, const char *path, uint64_t max, uint8_t **data, size_t *size)
{
	struct stat st;
	size_t got = 0;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return diag_fail("%s %s: %s", opt, path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return diag_fail("%s %s: not a regular file of at most %llu MiB", opt, path,
				 (unsigned long long)(max >> 20));
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return diag_fail("%s %s: out of memory reading it", opt, path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			free(buf);
			close(fd);
			return diag_fail("%s %s: read failed: %s", opt, path, n ? strerror(errno) : "short read");
		}
		got += (size_t)n;
	}
	close(fd);
	*data = buf;
	*size = got;
	return 0;
}

static int check_kernel(const char *path, struct linux_kernel *k)
{
	const uint8_t *f = k->file;
	unsigned sects;

	if (k->size < 0x1000 || rd16(f + HDR_BOOT_FLAG) != 0xaa55 || memcmp(f + HDR_MAGIC, "HdrS", 4))
		return diag_fail("--kernel %s: not a Linux kernel (no bzImage setup header) -- give a bzImage such as "
				 "/boot/vmlinuz-VERSION", path);
	k->version = rd16(f + HDR_VERSION);
	if (k->version < MIN_PROTOCOL)
		return diag_fail("--kernel %s: boot protocol %u.%02u, this launcher needs 2.12 or newer (Linux 3.8+)",
				 path, k->version >> 8, k->version & 0xff);
	if (!(f[HDR_LOADFLAGS] & LOADED_HIGH))
		return diag_fail("--kernel %s: a zImage (loaded low); only a bzImage can be booted", path);
	sects = f[HDR_SETUP_SECTS] ? f[HDR_SETUP_SECTS] : 4;
	k->setup_bytes = (size_t)(sects + 1) * 512;
	if (k->setup_bytes >= k->size || (size_t)HDR_JUMP + 2 + f[HDR_JUMP + 1] > k->setup_bytes)
		return diag_fail("--kernel %s: truncated (setup part of %zu bytes, file of %zu)", path, k->setup_bytes,
				 k->size);
	k->init_size = rd32(f + HDR_INIT_SIZE);
	k->pref_address = f[HDR_RELOCATABLE] ? rd64(f + HDR_PREF_ADDRESS) : LINUX_KERNEL_GPA;
	k->initrd_addr_max = rd32(f + HDR_INITRD_ADDR_MAX);
	k->cmdline_size = rd32(f + HDR_CMDLINE_SIZE);
	if (k->init_size < k->size - k->setup_bytes || k->pref_address < LINUX_KERNEL_GPA ||
	    k->pref_address > (1ull << 32) - k->init_size)
		return diag_fail("--kernel %s: implausible setup header (init_size 0x%x, pref_address 0x%llx)", path,
				 k->init_size, (unsigned long long)k->pref_address);
	return 0;
}

int linux_read_kernel(const char *path, struct linux_kernel *k)
{
	memset(k, 0, sizeof(*k));
	if (read_whole("--kernel", path, MAX_KERNEL_BYTES, &k->file, &k->size) < 0)
		return -1;
	if (check_kernel(path, k) < 0) {
		linux_free_kernel(k);
		return -1;
	}
	return 0;
}

int linux_read_initrd(const char *path, uint8_t **data, size_t *size)
{
	return read_whole("--initrd", path, MAX_INITRD_BYTES, data, size);
}

int linux_kernel_version(const struct linux_kernel *k, char *out, size_t size)
{
	size_t at = (size_t)rd16(k->file + HDR_KERNEL_VERSION) + 0x200, n = 0;

	if (!rd16(k->file + HDR_KERNEL_VERSION) || at >= k->setup_bytes)
		return -1;
	while (at + n < k->setup_bytes && n < size - 1 && k->file[at + n] > ' ' && k->file[at + n] < 0x7f)
		n++;
	memcpy(out, k->file + at, n);
	out[n] = 0;
	return n ? 0 : -1;
}

void linux_free_kernel(struct linux_kernel *k)
{
	free(k->file);
	k->file = NULL;
}

/* The kernel decompresses itself to max(pref_address, where it was loaded)
 * and needs init_size from there; the initrd goes above that, page aligned. */
uint64_t linux_mem_needed(const struct linux_kernel *k, size_t initrd_size)
{
	return k->pref_address + k->init_size + ((initrd_size + 4095) & ~4095ull);
}

static void e820_add(uint8_t *bp, uint64_t addr, uint64_t size, uint32_t type)
{
	uint8_t *e = bp + BP_E820_TABLE + 20 * bp[BP_E820_ENTRIES]++;

	wr64(e, addr);
	wr64(e + 8, size);
	wr32(e + 16, type);
}

/*
 * An MP floating pointer (Intel MultiProcessor Specification 1.4, 4.1) and
 * an empty MP configuration table behind it, at 639 KiB.  Not for what they
 * say -- Linux takes its CPUs and IOAPIC from the MADT and ignores an MP
 * table when ACPI describes both -- but to end Linux's search for one.
 * find_smp_config() looks at [0, 1 KiB), [639 KiB, 640 KiB) and the whole F
 * segment in 16-byte steps, mapping the rest of the area for every step;
 * with nothing to find, that is 4096 early_memremap()s of up to 64 KiB,
 * each a fixmap page-table write and TLB flush.  On hardware that passes
 * unnoticed; in the emulator VM, where each one is a shadow-paging exit of
 * the nested KVM, it was 36 s of a Linux boot (docs/linux-guest.md).  Found
 * in the second area at its first step, the search costs one mapping.
 */
static void write_mp_table(uint8_t *mpf, uint8_t *mpc, uint32_t mpc_gpa)
{
	memset(mpf, 0, 16);
	memcpy(mpf, "_MP_", 4);
	wr32(mpf + 4, mpc_gpa);          /* the configuration table */
	mpf[8] = 1;                      /* length in 16-byte units */
	mpf[9] = 4;                      /* specification revision 1.4 */
	/* 11: feature byte 1 = 0, a configuration table is present */
	mpf[10] = (uint8_t)-acpi_sum(mpf, 16);

	memset(mpc, 0, MP_CONFIG_LEN);
	memcpy(mpc, "PCMP", 4);
	mpc[4] = MP_CONFIG_LEN;          /* base table length (16 bits) */
	mpc[6] = 4;                      /* revision */
	memcpy(mpc + 8, "LGKVM   ", 8);   /* OEM ID */
	memcpy(mpc + 16, "LGUEST-KVM  ", 12); /* product ID */
	wr32(mpc + 36, 0xfee00000);      /* local APIC address; no entries */
	mpc[7] = (uint8_t)-acpi_sum(mpc, MP_CONFIG_LEN);
}

int linux_load(struct guest_mem *gm, const struct linux_kernel *k, const uint8_t *initrd, size_t initrd_size,
	       const char *cmdline)
{
	size_t pm_size = k->size - k->setup_bytes, line_len = strlen(cmdline) + 1;
	size_t hdr_end = HDR_JUMP + 2 + k->file[HDR_JUMP + 1];
	uint64_t top = gm->size, initrd_gpa = 0, need = linux_mem_needed(k, initrd_size);
	uint8_t *bp = gmem_ptr(gm, LINUX_BOOT_PARAMS_GPA, BOOT_PARAMS_SIZE);
	uint8_t *line = gmem_ptr(gm, LINUX_CMDLINE_GPA, LINUX_CMDLINE_MAX);
	uint8_t *dst = gmem_ptr(gm, LINUX_KERNEL_GPA, pm_size);
	uint8_t *mpf = gmem_ptr(gm, MP_FLOATING_GPA, 16 + MP_CONFIG_LEN);

	if (need > gm->size || !bp || !line || !dst || !mpf)
		return diag_fail("--mem %llu MiB is too small for this kernel and initrd: give --mem %lluM or more",
				 (unsigned long long)(gm->size >> 20), (unsigned long long)((need >> 20) + 16));
	if (line_len > LINUX_CMDLINE_MAX || (k->cmdline_size && line_len > (uint64_t)k->cmdline_size + 1))
		return diag_fail("--append: %zu bytes, the kernel takes at most %u", line_len - 1,
				 k->cmdline_size < LINUX_CMDLINE_MAX ? k->cmdline_size : LINUX_CMDLINE_MAX - 1);
	memcpy(dst, k->file + k->setup_bytes, pm_size);
	memcpy(line, cmdline, line_len);
	if (initrd_size) {
		uint64_t limit = (uint64_t)k->initrd_addr_max + 1;

		if (top > limit)
			top = limit;
		initrd_gpa = (top - initrd_size) & ~4095ull;
		if (top < initrd_size || initrd_gpa < k->pref_address + k->init_size)
			return diag_fail("--initrd: %zu MiB does not fit under the kernel's initrd limit above the kernel -- "
					 "give a larger --mem", initrd_size >> 20);
		memcpy(gmem_ptr(gm, initrd_gpa, initrd_size), initrd, initrd_size);
	}

	memset(bp, 0, BOOT_PARAMS_SIZE);
	memcpy(bp + HDR_START, k->file + HDR_START, hdr_end - HDR_START);
	bp[HDR_TYPE_OF_LOADER] = LOADER_UNDEFINED;
	bp[HDR_LOADFLAGS] = LOADED_HIGH;   /* no heap, no quiet: only what the 32-bit entry needs */
	wr32(bp + HDR_CODE32_START, LINUX_KERNEL_GPA);
	wr32(bp + HDR_RAMDISK_IMAGE, (uint32_t)initrd_gpa);
	wr32(bp + HDR_RAMDISK_SIZE, (uint32_t)initrd_size);
	wr32(bp + HDR_CMD_LINE_PTR, LINUX_CMDLINE_GPA);
	wr64(bp + BP_ACPI_RSDP_ADDR, LINUX_ACPI_GPA);
	write_mp_table(mpf, mpf + 16, MP_FLOATING_GPA + 16);
	/* RAM below the MP table, it, the BIOS area that holds the ACPI
	 * tables, RAM from 1 MiB. */
	e820_add(bp, 0, MP_FLOATING_GPA, E820_RAM);
	e820_add(bp, MP_FLOATING_GPA, 0xa0000 - MP_FLOATING_GPA, E820_RESERVED);
	e820_add(bp, 0xe0000, 0x20000, E820_RESERVED);
	e820_add(bp, LINUX_KERNEL_GPA, gm->size - LINUX_KERNEL_GPA, E820_RAM);
	return 0;
}
