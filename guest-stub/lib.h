/*
 * lib.h -- the few libc pieces a freestanding guest needs: memory and string
 * helpers, number parsing, a small formatter, a bump allocator and exit.
 */
#ifndef GUEST_LIB_H
#define GUEST_LIB_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strncmp(const char *a, const char *b, size_t n);

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* printf to the virtio console (or nowhere before it exists). */
void printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void heap_init(uint64_t start, uint64_t end);
uint64_t heap_end_addr(void);               /* the end of RAM the heap may use */
void *alloc_pages(size_t bytes);            /* 4 KiB aligned, zeroed */

__attribute__((noreturn)) void guest_exit(int status);

#endif
