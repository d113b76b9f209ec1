/*
 * guest_virtio_drv_hosted.c -- the guest's virtio driver, unmodified,
 * compiled as a host object for test_guest_ring.c.  guest_lib_hosted.h has
 * to come first: it stands in for guest-stub/lib.h (see there).
 */
#include "guest_lib_hosted.h"

#include "../../guest-stub/virtio_drv.c"
