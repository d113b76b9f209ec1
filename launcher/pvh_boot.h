/*
 * pvh_boot.h -- tell the guest where its RAM is and what to run, the PVH way:
 * an hvm_start_info with a memory map, and a Linux-style command line that
 * lists the virtio-mmio devices as virtio_mmio.device=SIZE@ADDR:IRQ and the
 * run's parameters as lkvm.NAME=VALUE words (docs/boot-protocol.md).
 */
#ifndef PVH_BOOT_H
#define PVH_BOOT_H

#include "guest_mem.h"

/* Writes start info at LKVM_START_INFO_GPA, the command line at
 * LKVM_CMDLINE_GPA.  -1 with the reason recorded by diag_fail() if the line is too long. */
int pvh_write_start_info(struct guest_mem *gm, const char *cmdline);

#endif
