/*
 * pvh_image.h -- a small PVH guest image for the loader's tests and its fuzz
 * target (tests/unit/test_elf_loader.c, tests/fuzz/fuzz_elf.c).
 *
 * The image is shaped like the stub's: a 64-bit little-endian x86-64 ELF
 * with one PT_LOAD (code, then bss) and one PT_NOTE holding a "GNU" note
 * first -- so the loader has to step over a note that is not its own -- and
 * then Xen's PHYS32_ENTRY with the entry point.  Where each piece sits in the
 * file is the caller's (struct pvh_image), so a test can put every header at
 * an odd offset.  Written with memcpy only: the tests must not make
 * misaligned accesses themselves.
 */
#ifndef PVH_IMAGE_H
#define PVH_IMAGE_H

#include <elf.h>
#include <stdint.h>
#include <string.h>

#include "pvh_start_info.h"

struct pvh_image {
	uint64_t phoff;       /* program header table */
	uint64_t code_off;    /* the PT_LOAD's file bytes */
	uint64_t note_off;    /* the PT_NOTE segment: 2 notes of 4-byte name and desc */
	size_t size;          /* file size; the image is zeroed up to it */
	uint64_t load_gpa;    /* the PT_LOAD's address */
	uint32_t code, bss;   /* its file bytes and the zero-filled rest */
	uint8_t gnu_desc[4];  /* the GNU note's payload */
};

/* The notes' file bytes: two headers, each with a 4-byte name and desc. */
#define PVH_IMAGE_NOTES_BYTES (2 * (sizeof(Elf64_Nhdr) + 8))

static inline void pvh_image_build(uint8_t *img, const struct pvh_image *l, uint32_t entry)
{
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph[2] = { 0 };
	Elf64_Nhdr nh;
	uint64_t at = l->note_off;

	memset(img, 0, l->size);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_entry = entry;
	eh.e_phoff = l->phoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 2;
	memcpy(img, &eh, sizeof(eh));

	ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = l->code_off,
			      .p_vaddr = l->load_gpa, .p_paddr = l->load_gpa, .p_filesz = l->code,
			      .p_memsz = (uint64_t)l->code + l->bss, .p_align = 1 };
	ph[1] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = l->note_off,
			      .p_filesz = PVH_IMAGE_NOTES_BYTES, .p_align = 1 };
	memcpy(img + l->phoff, ph, sizeof(ph));

	for (unsigned i = 0; i < l->code; i++)
		img[l->code_off + i] = (uint8_t)(i * 13 + 1);

	nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 4, .n_type = 3 };   /* NT_GNU_BUILD_ID-like */
	memcpy(img + at, &nh, sizeof(nh));
	memcpy(img + at + sizeof(nh), "GNU", 4);
	memcpy(img + at + sizeof(nh) + 4, l->gnu_desc, 4);
	at += sizeof(nh) + 8;
	nh = (Elf64_Nhdr){ .n_namesz = 4, .n_descsz = 4, .n_type = XEN_ELFNOTE_PHYS32_ENTRY };
	memcpy(img + at, &nh, sizeof(nh));
	memcpy(img + at + sizeof(nh), "Xen", 4);
	memcpy(img + at + sizeof(nh) + 4, &entry, 4);
}

#endif
