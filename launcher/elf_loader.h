/*
 * elf_loader.h -- load a PVH guest image into guest RAM.
 *
 * The image is untrusted input: a file that is not a little-endian x86-64
 * executable, is truncated, has a segment outside RAM or below 1 MiB, or has
 * no PVH entry note (or one that points outside its code) is refused with
 * one line saying which of these it was.
 */
#ifndef ELF_LOADER_H
#define ELF_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "guest_mem.h"

/* Returns 0 and the 32-bit PVH entry, or -1 with the reason recorded by diag_fail(). */
int elf_load_pvh(const char *path, const uint8_t *image, size_t size,
		 struct guest_mem *gm, uint32_t *entry);
/* Reads a whole file (at most 64 MiB); -1 with the reason recorded by diag_fail(). */
int elf_read_file(const char *path, uint8_t **image, size_t *size);

#endif
