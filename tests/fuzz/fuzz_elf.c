/*
 * fuzz_elf.c -- arbitrary bytes as a guest image for the ELF loader.
 *
 * Why: the image is the one input the launcher reads from a file rather
 * than from a guest, and elf_load_pvh parses it all -- headers, program
 * header table, notes -- before copying segments into guest RAM.
 *
 * Data flow: the input is the whole file, handed over in a buffer of
 * exactly its size (libFuzzer's, or an exact malloc in the smoke test), so
 * ASan sees any read past its end.  Guest RAM is 1 MiB + 64 KiB: the low
 * 1 MiB, where no segment may go, is read-only, so a write there faults at
 * once; the 64 KiB above is where images load, filled with a canary first.
 * The loader may accept or refuse anything, but: a refused image leaves RAM
 * untouched and leaves a reason; an accepted one has a PVH entry inside an
 * executable PT_LOAD that lies in RAM at or above 1 MiB, and every PT_LOAD
 * that no later one overlaps holds exactly its file bytes followed by zeros.
 * Any violation aborts.
 *
 * Built two ways, as fuzz_virtqueue.c: with -Dfuzz=true and clang a
 * libFuzzer target (fuzz-elf); always a deterministic smoke test
 * (unit-fuzz-elf-smoke) that replays the seed corpus, then mutates valid
 * images (truncated, bytes and fields changed), and fails unless images
 * were both accepted and refused at every stage of the checks.
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "corpus_replay.h"
#include "elf_loader.h"
#include "lguest_kvm_abi.h"
#include "pvh_start_info.h"
#include "../pvh_image.h"

#define LOAD_ROOM (64u << 10)
#define RAM       (LKVM_MIN_LOAD_GPA + LOAD_ROOM)
#define CANARY    0xa5

static struct guest_mem gm;
static uint8_t canary[LOAD_ROOM];
static unsigned long accepted, refused, refused_after_headers;

#define CHECK(cond) do { if (!(cond)) failed(#cond, __LINE__); } while (0)

static void failed(const char *what, int line)
{
	fprintf(stderr, "fuzz_elf.c:%d: invariant violated: %s\n", line, what);
	abort();
}

static void setup_once(void)
{
	if (gm.host)
		return;
	memset(canary, CANARY, sizeof(canary));
	if (gmem_map(&gm, RAM) < 0 || mprotect(gm.host, LKVM_MIN_LOAD_GPA, PROT_READ) < 0) {
		perror("fuzz_elf: guest RAM");
		abort();
	}
	memset(gm.host + LKVM_MIN_LOAD_GPA, CANARY, LOAD_ROOM);
}

static Elf64_Phdr phdr(const uint8_t *image, const Elf64_Ehdr *eh, unsigned i)
{
	Elf64_Phdr ph;

	memcpy(&ph, image + eh->e_phoff + (uint64_t)i * sizeof(ph), sizeof(ph));
	return ph;
}

static bool overlaps(const Elf64_Phdr *a, const Elf64_Phdr *b)
{
	return a->p_paddr < b->p_paddr + b->p_memsz && b->p_paddr < a->p_paddr + a->p_memsz;
}

/* An accepted image: entry and segments as promised, RAM holding them. */
static void check_loaded(const uint8_t *image, size_t size, uint32_t entry)
{
	Elf64_Ehdr eh;
	bool entry_ok = false;

	CHECK(size >= sizeof(eh));
	memcpy(&eh, image, sizeof(eh));
	CHECK(eh.e_phnum > 0 && eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) <= size);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph = phdr(image, &eh, i);
		const uint8_t *at;
		bool covered = false;

		if (ph.p_type != PT_LOAD)
			continue;
		CHECK(ph.p_paddr >= LKVM_MIN_LOAD_GPA && ph.p_memsz <= RAM && ph.p_paddr <= RAM - ph.p_memsz);
		CHECK(ph.p_filesz <= ph.p_memsz && ph.p_offset <= size && ph.p_filesz <= size - ph.p_offset);
		if ((ph.p_flags & PF_X) && entry >= ph.p_paddr && entry < ph.p_paddr + ph.p_memsz)
			entry_ok = true;
		for (unsigned j = i + 1; j < eh.e_phnum; j++) {
			Elf64_Phdr later = phdr(image, &eh, j);

			covered |= later.p_type == PT_LOAD && overlaps(&ph, &later);
		}
		if (covered)
			continue;
		at = gm.host + ph.p_paddr;
		CHECK(!memcmp(at, image + ph.p_offset, ph.p_filesz));
		for (uint64_t k = ph.p_filesz; k < ph.p_memsz; k++)
			CHECK(at[k] == 0);
	}
	CHECK(entry_ok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t entry = 0;

	setup_once();
	if (elf_load_pvh("fuzz.elf", data, size, &gm, &entry) == 0) {
		check_loaded(data, size, entry);
		accepted++;
		memset(gm.host + LKVM_MIN_LOAD_GPA, CANARY, LOAD_ROOM);
		return 0;
	}
	/* Refused: nothing may have been written (writes come after all checks). */
	CHECK(!memcmp(gm.host + LKVM_MIN_LOAD_GPA, canary, LOAD_ROOM));
	refused++;
	refused_after_headers += size >= sizeof(Elf64_Ehdr) && !memcmp(data, ELFMAG, SELFMAG) &&
				 data[EI_CLASS] == ELFCLASS64;
	return 0;
}

#ifndef LKVM_LIBFUZZER
/* ---- smoke test: valid images, then mutated ones ---- */

#define IMG_MAX 4096u

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* A PVH image like the stub's, shrunk: one PT_LOAD (code + bss), a PT_NOTE
 * with a GNU note first and Xen's PHYS32_ENTRY second, headers placed at
 * `shift` so they are not aligned.  Returns its size. */
static size_t build_image(uint8_t *img, unsigned shift, unsigned code, unsigned bss)
{
	struct pvh_image l = { .phoff = sizeof(Elf64_Ehdr) + shift, .load_gpa = LKVM_MIN_LOAD_GPA,
			       .code = code, .bss = bss };

	l.note_off = l.phoff + 2 * sizeof(Elf64_Phdr);
	l.code_off = l.note_off + PVH_IMAGE_NOTES_BYTES;
	l.size = l.code_off + code;
	pvh_image_build(img, &l, LKVM_MIN_LOAD_GPA + (code > 16 ? 16 : 0));
	return l.size;
}

/* Change a field a checker looks at, or bytes anywhere, or the length. */
static size_t mutate(uint8_t *img, size_t n)
{
	static const unsigned fields[] = { 4, 5, 16, 18, 32, 54, 56 };   /* class, data, type, machine, phoff, phentsize, phnum */
	unsigned what = next_rand() % 6;

	if (n == 0)
		return 0;
	switch (what) {
	case 0:
		return next_rand() % n;   /* truncated */
	case 1:
		img[fields[next_rand() % 7]] ^= (uint8_t)(1u << next_rand() % 8);
		return n;
	case 2: {   /* a program header field */
		unsigned at = 64 + (unsigned)(next_rand() % 120);

		if (at < n)
			img[at] ^= (uint8_t)next_rand();
		return n;
	}
	default:
		for (unsigned k = 1 + next_rand() % 3; k; k--)
			img[next_rand() % n] ^= (uint8_t)(1u << next_rand() % 8);
		return n;
	}
}


static void write_seed(const char *dir, const char *name, const uint8_t *img, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(img, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void emit_seeds(const char *dir)
{
	static uint8_t img[IMG_MAX];
	size_t n;

	write_seed(dir, "pvh-code-bss", img, build_image(img, 0, 200, 300));
	write_seed(dir, "pvh-unaligned-headers", img, build_image(img, 3, 64, 0));
	n = build_image(img, 0, 200, 300);
	img[EI_CLASS] = ELFCLASS32;
	write_seed(dir, "refused-elf32", img, n);
	write_seed(dir, "refused-truncated", img, build_image(img, 0, 200, 300) - 100);
}

int main(int argc, char **argv)
{
	unsigned long iterations = 200000, files = 0, after_files;
	static uint8_t img[IMG_MAX];

	if (argc > 2 && !strcmp(argv[1], "--emit-seeds")) {
		emit_seeds(argv[2]);
		return 0;
	}
	if (argc > 1)
		files = corpus_replay("fuzz_elf", argv[1]);
	if (argc > 2)
		iterations = strtoul(argv[2], NULL, 10);
	after_files = accepted;
	for (unsigned long it = 0; it < iterations; it++) {
		size_t n = build_image(img, (unsigned)(next_rand() % 8), 1 + (unsigned)(next_rand() % 2000),
				       (unsigned)(next_rand() % 4000));
		uint8_t *exact;

		for (unsigned m = it % 4; m; m--)   /* a quarter stay valid */
			n = mutate(img, n);
		exact = malloc(n ? n : 1);
		memcpy(exact, img, n);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	printf("%lu corpus files, %lu images: %lu accepted (%lu generated), %lu refused (%lu of them ELF64 "
	       "refused past the ident)\n", files, iterations + files, accepted, accepted - after_files, refused,
	       refused_after_headers);
	/* Worth something only if both sides were reached, and refusals came
	 * from checks past the first bytes, not only from garbage. */
	if (accepted == after_files || accepted - after_files < iterations / 8 || !refused ||
	    !refused_after_headers || refused_after_headers < iterations / 8) {
		printf("0 passed, 1 failed\n");
		return 1;
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
#endif
