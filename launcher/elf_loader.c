/*
 * elf_loader.c -- validate an ELF64 guest image and copy it into guest RAM.
 *
 * Checks, in the order a broken file would fail them: size and magic, class
 * and data encoding, machine and type, program header table inside the file,
 * each PT_LOAD inside the file and inside RAM (at or above 1 MiB, where the
 * launcher's own boot data cannot be overwritten), and finally the PVH note
 * XEN_ELFNOTE_PHYS32_ENTRY, whose address must lie in an executable segment.
 * Only then is anything written to guest memory.
 *
 * The file decides where its headers sit, and nothing keeps a hostile one
 * aligned (nor is the buffer it arrives in promised to be), so every header
 * is memcpy'd into an aligned local before a field is read: a cast pointer
 * into the image would be a misaligned access, undefined behaviour that x86
 * merely tolerates.
 */
#include "elf_loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "lguest_kvm_abi.h"
#include "pvh_start_info.h"

#define MAX_IMAGE (64u << 20)

int elf_read_file(const char *path, uint8_t **image, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return diag_fail("%s: %s -- give the path of a guest ELF image", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return diag_fail("%s: not a regular file -- give the path of a guest ELF image", path);
	}
	if (st.st_size > MAX_IMAGE) {
		close(fd);
		return diag_fail("%s: %lld bytes is too big for a guest image (limit 64 MiB)", path,
				 (long long)st.st_size);
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		close(fd);
		return diag_fail("%s: out of memory reading the image", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);
		if (n <= 0) {
			free(buf);
			close(fd);
			return diag_fail("%s: read failed: %s", path, n ? strerror(errno) : "short read");
		}
		got += n;
	}
	close(fd);
	*image = buf;
	*size = got;
	return 0;
}

static int in_file(size_t size, uint64_t off, uint64_t len)
{
	uint64_t end;

	return !__builtin_add_overflow(off, len, &end) && end <= size;
}

/* Program header i of a table already checked to lie inside the file. */
static Elf64_Phdr phdr_at(const uint8_t *image, uint64_t phoff, unsigned i)
{
	Elf64_Phdr ph;

	memcpy(&ph, image + phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
	return ph;
}

/* 1 and the PVH entry from the PT_NOTE segments; 0 if there is none; -1 if
 * the notes are malformed.  Every PT_NOTE was checked to lie inside the file. */
static int find_pvh_entry(const char *path, const uint8_t *image, uint64_t phoff, unsigned n, uint32_t *entry)
{
	for (unsigned i = 0; i < n; i++) {
		Elf64_Phdr ph = phdr_at(image, phoff, i);
		uint64_t off = ph.p_offset, end = ph.p_offset + ph.p_filesz;

		if (ph.p_type != PT_NOTE)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			Elf64_Nhdr nh;
			uint64_t name, desc, next;

			memcpy(&nh, image + off, sizeof(nh));
			name = off + sizeof(nh);
			desc = name + (((uint64_t)nh.n_namesz + 3) & ~3ull);
			next = desc + (((uint64_t)nh.n_descsz + 3) & ~3ull);
			if (next > end || next <= off)
				return diag_fail("%s: malformed ELF note -- the image is corrupt", path);
			if (nh.n_namesz == 4 && !memcmp(image + name, "Xen", 4) &&
			    nh.n_type == XEN_ELFNOTE_PHYS32_ENTRY && nh.n_descsz >= 4 && desc + 4 <= next) {
				memcpy(entry, image + desc, 4);
				return 1;
			}
			off = next;
		}
	}
	return 0;
}

int elf_load_pvh(const char *path, const uint8_t *image, size_t size,
		 struct guest_mem *gm, uint32_t *entry)
{
	Elf64_Ehdr eh;
	int entry_ok = 0, found;

	if (size < sizeof(eh) || memcmp(image, ELFMAG, SELFMAG))
		return diag_fail("%s: not an ELF file -- give a guest image built for lguest-kvm", path);
	memcpy(&eh, image, sizeof(eh));
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64)
		return diag_fail("%s: not an x86-64 (ELF64 little-endian) image", path);
	if (eh.e_type != ET_EXEC)
		return diag_fail("%s: not an executable ELF (type %u) -- link the guest statically at a fixed address",
				 path, eh.e_type);
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
	    !in_file(size, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)))
		return diag_fail("%s: truncated or corrupt ELF program headers", path);

	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph = phdr_at(image, eh.e_phoff, i);

		if (ph.p_type != PT_LOAD && ph.p_type != PT_NOTE)
			continue;
		if (!in_file(size, ph.p_offset, ph.p_filesz))
			return diag_fail("%s: segment %u extends past the end of the file (truncated image?)", path, i);
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz > ph.p_memsz)
			return diag_fail("%s: segment %u has more file bytes than memory bytes", path, i);
		if (ph.p_paddr < LKVM_MIN_LOAD_GPA || !gmem_ptr(gm, ph.p_paddr, ph.p_memsz))
			return diag_fail("%s: segment %u at 0x%llx+0x%llx lies outside guest RAM [1 MiB, %llu MiB) -- raise --mem or relink the guest",
					 path, i, (unsigned long long)ph.p_paddr,
					 (unsigned long long)ph.p_memsz,
					 (unsigned long long)(gm->size >> 20));
	}

	found = find_pvh_entry(path, image, eh.e_phoff, eh.e_phnum, entry);
	if (found < 0)
		return -1;
	if (!found)
		return diag_fail("%s: no PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY) -- the guest must be a PVH image", path);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph = phdr_at(image, eh.e_phoff, i);

		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    *entry >= ph.p_paddr && *entry < ph.p_paddr + ph.p_memsz)
			entry_ok = 1;
	}
	if (!entry_ok)
		return diag_fail("%s: PVH entry 0x%x is not inside an executable segment in guest RAM", path, *entry);

	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph = phdr_at(image, eh.e_phoff, i);
		uint8_t *dst;

		if (ph.p_type != PT_LOAD)
			continue;
		dst = gmem_ptr(gm, ph.p_paddr, ph.p_memsz);
		memcpy(dst, image + ph.p_offset, ph.p_filesz);
		memset(dst + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
	}
	return 0;
}
