/*
 * console_drv.h -- the guest's virtio-console driver (port 0): synchronous
 * output for printf, and receive buffers for the echo workload.
 */
#ifndef CONSOLE_DRV_H
#define CONSOLE_DRV_H

#include <stddef.h>
#include <stdint.h>

int console_drv_init(uint64_t base, unsigned irq);
void console_write(const char *s, size_t n);
/* Sleep in hlt until input arrives; copies at most `max` bytes, returns count. */
size_t console_read(char *buf, size_t max);

#endif
