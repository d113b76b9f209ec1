/*
 * guest_lib_hosted.h -- what guest-stub/virtio_drv.c needs from the guest's
 * lib.h, for a hosted build (test_guest_ring.c, test_guest_ring_packed.c).
 *
 * The guest's lib.h declares printf/memset/... with the freestanding stub's
 * own signatures (void printf), which clash with the host libc, and
 * guest-stub/lib.c cannot run on the host.  So this header defines lib.h's
 * include guard -- the driver's `#include "lib.h"` then adds nothing -- and
 * supplies the host libc for the string and printf calls plus the two guest
 * services the tests define in guest_ring_fixture.h: alloc_pages (from the
 * fake guest RAM) and guest_exit (caught with longjmp).  (The launcher's
 * --model thread has its own stand-in, launcher/hosted_guest.h.)
 */
#ifndef GUEST_LIB_HOSTED_H
#define GUEST_LIB_HOSTED_H

#define GUEST_LIB_H 1   /* guest-stub/lib.h is replaced by this header */

#include <stddef.h>
#include <stdio.h>
#include <string.h>

void *alloc_pages(size_t bytes);            /* 4 KiB aligned, zeroed */
__attribute__((noreturn)) void guest_exit(int status);

#endif
