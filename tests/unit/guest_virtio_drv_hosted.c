/*
 * guest_virtio_drv_hosted.c -- the guest's virtio driver, unmodified, both
 * ring layouts, compiled as a host object for test_guest_ring.c and
 * test_guest_ring_packed.c.  guest_lib_hosted.h has to come first: it
 * stands in for guest-stub/lib.h (see there).  The two files share one
 * translation unit, so their static helpers have distinct names.
 */
#include "guest_lib_hosted.h"

#include "../../guest-stub/virtio_drv.c"
#include "../../guest-stub/vring_packed_drv.c"
#include "../../guest-stub/trace.c"      /* gtrace_buf: 0, no timeline */
