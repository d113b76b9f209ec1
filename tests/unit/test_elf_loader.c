/*
 * test_elf_loader.c -- the guest image loader (launcher/elf_loader.c) against
 * images built in memory, good and bad, without KVM.
 *
 * The image is untrusted: the loader must refuse every broken one and copy
 * a good one into (fake) guest RAM exactly.  Headers are deliberately put at
 * odd offsets, and the image itself at an odd address, because nothing in
 * ELF says a hostile file keeps Elf64_Phdr or Elf64_Nhdr aligned; the loader
 * must read them without misaligned access.  meson.build compiles this test
 * and the loader with -fsanitize=undefined (when the compiler can), so a
 * misaligned read is a test failure, not silent undefined behaviour.  Last,
 * a deterministic mutation loop throws truncated and bit-flipped images at
 * the loader, the way a fuzzer would.
 */
#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "elf_loader.h"
#include "lguest_kvm_abi.h"
#include "pvh_start_info.h"
#include "../pvh_image.h"

#define MEM_SIZE   (4u << 20)
#define LOAD_GPA   0x100000u
#define CODE_BYTES 200u
#define BSS_BYTES  300u
#define ENTRY      (LOAD_GPA + 0x10u)

static struct guest_mem gm;

/* Where the pieces of an image sit in the file; the layout varies per test. */
#define IMAGE(...) { .load_gpa = LOAD_GPA, .code = CODE_BYTES, .bss = BSS_BYTES, \
		     .gnu_desc = { 1, 2, 3, 4 }, __VA_ARGS__ }
static const struct pvh_image aligned = IMAGE(.phoff = 64, .code_off = 0x200, .note_off = 0x180, .size = 0x300);
/* Every header at an odd offset: program headers at 65, the note segment at 0x183. */
static const struct pvh_image odd = IMAGE(.phoff = 65, .code_off = 0x201, .note_off = 0x183, .size = 0x300);

/* The image at an odd address too: buffer + 1. */
static uint8_t storage[0x400 + 8];
static uint8_t *const img = storage + 1;

static int load(size_t size, uint32_t *entry)
{
	memset(gm.host, 0xee, MEM_SIZE);
	return elf_load_pvh("test.elf", img, size, &gm, entry);
}

static void patch_phdr(const struct pvh_image *l, unsigned i, size_t field, const void *v, size_t n)
{
	memcpy(img + l->phoff + i * sizeof(Elf64_Phdr) + field, v, n);
}

static void patch_u64(const struct pvh_image *l, unsigned i, size_t field, uint64_t v)
{
	patch_phdr(l, i, field, &v, sizeof(v));
}

static bool loaded_exactly(void)
{
	uint8_t *dst = gm.host + LOAD_GPA;

	for (unsigned i = 0; i < CODE_BYTES; i++)
		if (dst[i] != (uint8_t)(i * 13 + 1))
			return false;
	for (unsigned i = 0; i < BSS_BYTES; i++)
		if (dst[CODE_BYTES + i])
			return false;
	return dst[CODE_BYTES + BSS_BYTES] == 0xee && gm.host[LOAD_GPA - 1] == 0xee;
}

static void test_good(const struct pvh_image *l, const char *what)
{
	uint32_t entry = 0;

	pvh_image_build(img, l, ENTRY);
	CHECK(load(l->size, &entry) == 0, "%s: a good image loads", what);
	CHECK(entry == ENTRY, "%s: PVH entry 0x%x from the Xen note, after stepping over another note", what, entry);
	CHECK(loaded_exactly(), "%s: file bytes copied, bss zeroed, nothing else touched", what);
}

static void test_bad(const struct pvh_image *l)
{
	uint32_t entry;
	uint16_t u16;

	pvh_image_build(img, l, ENTRY);
	CHECK(load(63, &entry) == -1, "shorter than an ELF header: refused");
	img[EI_CLASS] = ELFCLASS32;
	CHECK(load(l->size, &entry) == -1, "ELFCLASS32: refused");

	pvh_image_build(img, l, ENTRY);
	u16 = ET_DYN;
	memcpy(img + offsetof(Elf64_Ehdr, e_type), &u16, 2);
	CHECK(load(l->size, &entry) == -1, "ET_DYN: refused");

	pvh_image_build(img, l, ENTRY);
	u16 = sizeof(Elf64_Phdr) + 1;
	memcpy(img + offsetof(Elf64_Ehdr, e_phentsize), &u16, 2);
	CHECK(load(l->size, &entry) == -1, "e_phentsize not sizeof(Elf64_Phdr): refused");

	pvh_image_build(img, l, ENTRY);
	CHECK(load(l->phoff + sizeof(Elf64_Phdr) + 3, &entry) == -1, "program headers cut by the end of the file: refused");

	pvh_image_build(img, l, ENTRY);
	patch_u64(l, 0, offsetof(Elf64_Phdr, p_offset), l->size - 10);
	CHECK(load(l->size, &entry) == -1, "PT_LOAD running past the end of the file: refused");

	pvh_image_build(img, l, ENTRY);
	patch_u64(l, 0, offsetof(Elf64_Phdr, p_offset), UINT64_MAX - 8);
	CHECK(load(l->size, &entry) == -1, "PT_LOAD offset that wraps around: refused");

	pvh_image_build(img, l, ENTRY);
	patch_u64(l, 0, offsetof(Elf64_Phdr, p_paddr), LOAD_GPA - 0x1000);
	CHECK(load(l->size, &entry) == -1 && gm.host[LOAD_GPA - 0x1000] == 0xee, "PT_LOAD below 1 MiB: refused, nothing written");

	pvh_image_build(img, l, ENTRY);
	patch_u64(l, 0, offsetof(Elf64_Phdr, p_memsz), MEM_SIZE);
	CHECK(load(l->size, &entry) == -1, "PT_LOAD past the end of guest RAM: refused");

	pvh_image_build(img, l, ENTRY);
	patch_u64(l, 0, offsetof(Elf64_Phdr, p_filesz), CODE_BYTES + BSS_BYTES + 1);
	CHECK(load(l->size, &entry) == -1, "p_filesz > p_memsz: refused");

	pvh_image_build(img, l, LOAD_GPA + CODE_BYTES + BSS_BYTES + 4);
	CHECK(load(l->size, &entry) == -1 && gm.host[LOAD_GPA] == 0xee,
	      "PVH entry outside the executable segment: refused before anything is copied");

	pvh_image_build(img, l, ENTRY);
	memcpy(img + l->note_off + sizeof(Elf64_Nhdr) + 8 + sizeof(Elf64_Nhdr), "Xem", 4);
	CHECK(load(l->size, &entry) == -1, "no Xen note (name misspelt): refused");

	pvh_image_build(img, l, ENTRY);
	memcpy(img + l->note_off, &(uint32_t){ 0xfffffff0u }, 4);   /* n_namesz of the first note */
	CHECK(load(l->size, &entry) == -1, "a note whose name runs past its segment: refused");

	pvh_image_build(img, l, ENTRY);
	patch_u64(l, 1, offsetof(Elf64_Phdr, p_filesz), sizeof(Elf64_Nhdr) + 8 + sizeof(Elf64_Nhdr) + 4);
	CHECK(load(l->size, &entry) == -1, "the Xen note cut by the end of its segment: refused");
}

/* What a fuzzer would do, deterministically: every truncation, then random
 * byte flips in the headers.  Any outcome is fine except a crash or a
 * sanitizer report; a "loaded" image must still have a sane entry. */
static void test_mutations(const struct pvh_image *l)
{
	uint32_t seed = 12345, entry, loaded = 0, refused = 0;
	bool sane = true;

	pvh_image_build(img, l, ENTRY);
	for (size_t n = 0; n <= l->size; n++)
		load(n, &entry) == 0 ? loaded++ : refused++;
	CHECK(loaded >= 1 && refused >= 64, "every truncation: %u loaded, %u refused, no crash", loaded, refused);

	loaded = refused = 0;
	for (unsigned round = 0; round < 4000; round++) {
		pvh_image_build(img, l, ENTRY);
		for (unsigned k = 0; k < 1 + round % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			/* mostly the ELF and program headers, sometimes the notes */
			size_t at = (seed >> 8) % 8 ? (seed >> 12) % (l->phoff + 2 * sizeof(Elf64_Phdr))
						    : l->note_off + (seed >> 12) % 40;
			img[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
		}
		if (load(l->size, &entry) == 0) {
			loaded++;
			sane &= entry >= LOAD_GPA && entry < MEM_SIZE;
		} else {
			refused++;
		}
	}
	CHECK(loaded && refused && sane, "4000 mutated images: %u loaded (entries inside RAM), %u refused", loaded,
	      refused);
}

int main(void)
{
	if (gmem_map(&gm, MEM_SIZE) < 0) {
		printf("FAIL cannot map fake guest RAM\n");
		return 1;
	}
	test_good(&aligned, "aligned headers");
	test_good(&odd, "headers at odd offsets, image at an odd address");
	test_bad(&aligned);
	test_bad(&odd);
	test_mutations(&odd);
	gmem_unmap(&gm);
	return check_summary();
}
