/*
 * guest_mem.c -- allocate guest RAM between two guard pages.
 *
 * In common/, the layer below both devices/ and launcher/: the launcher maps
 * RAM and loads the image into it, devices walk rings in it, and neither
 * needs the other to do so.
 *
 * The guard pages turn an off-by-one in host code into a clean SIGSEGV
 * instead of a silent read of whatever heap lies next to guest RAM.
 */
#include "guest_mem.h"

#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

int gmem_map(struct guest_mem *gm, uint64_t size)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *area;

	area = mmap(NULL, size + 2 * page, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	if (mprotect(area + page, size, PROT_READ | PROT_WRITE) < 0) {
		int e = errno;
		munmap(area, size + 2 * page);
		return -e;
	}
	/* Guest RAM is large and touched sparsely; huge pages cut TLB misses in
	 * the frame copy.  Advisory, so failure is fine. */
	madvise(area + page, size, MADV_HUGEPAGE);
	gm->host = area + page;
	gm->size = size;
	return 0;
}

void gmem_unmap(struct guest_mem *gm)
{
	long page = sysconf(_SC_PAGESIZE);

	if (gm->host)
		munmap(gm->host - page, gm->size + 2 * page);
	gm->host = NULL;
}
