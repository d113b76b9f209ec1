/*
 * guest_mem.h -- the one door from host code into guest RAM.
 *
 * Guest RAM is one anonymous mapping at guest-physical address 0, fenced by
 * PROT_NONE guard pages.  Every host access to guest memory -- ring walks,
 * frame copies, the ELF loader, the guest's report -- asks gmem_ptr() for a
 * pointer to [gpa, gpa+len).  It refuses overflow and anything that is not
 * entirely inside RAM, so a hostile guest address can never reach host memory.
 * It lives in common/ (docs/architecture.md, "Layers"): the launcher maps the
 * RAM, the devices only ever see it through this struct.
 */
#ifndef GUEST_MEM_H
#define GUEST_MEM_H

#include <stddef.h>
#include <stdint.h>

struct guest_mem {
	uint8_t *host;      /* host address of guest-physical 0 */
	uint64_t size;      /* bytes of RAM */
};

int gmem_map(struct guest_mem *gm, uint64_t size);
void gmem_unmap(struct guest_mem *gm);

/* NULL unless [gpa, gpa+len) lies inside guest RAM (len 0 is allowed). */
static inline void *gmem_ptr(const struct guest_mem *gm, uint64_t gpa, uint64_t len)
{
	uint64_t end;

	if (__builtin_add_overflow(gpa, len, &end) || end > gm->size)
		return NULL;
	return gm->host + gpa;
}

#endif
