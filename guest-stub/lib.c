/*
 * lib.c -- freestanding helpers for the guest stub.
 *
 * Kept deliberately plain: nothing here is on the per-frame path except
 * memcpy, which compiles to rep movsb (fast on every CPU this runs on).
 */
#include "lib.h"

#include "console_drv.h"
#include "io.h"
#include "lguest_kvm_abi.h"

void *memset(void *d, int c, size_t n)
{
	void *ret = d;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return ret;
}

void *memcpy(void *d, const void *s, size_t n)
{
	void *ret = d;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory");
	return ret;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return x[i] - y[i];
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (a[i] != b[i])
			return (uint8_t)a[i] - (uint8_t)b[i];
		if (!a[i])
			return 0;
	}
	return 0;
}

struct outbuf {
	char *p;
	size_t size, len;
};

static void put(struct outbuf *o, char c)
{
	if (o->len + 1 < o->size)
		o->p[o->len] = c;
	o->len++;
}

static void put_num(struct outbuf *o, uint64_t v, unsigned base, int width, char pad)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (width-- > n)
		put(o, pad);
	while (n)
		put(o, tmp[--n]);
}

/* %s %c %d %u %x %lu %lx %llu %llx %p, width and '0' padding. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = { buf, size, 0 };

	for (; *fmt; fmt++) {
		int width = 0, longs = 0;
		char pad = ' ';

		if (*fmt != '%') {
			put(&o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0')
			pad = '0';
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l')
			longs++, fmt++;
		switch (*fmt) {
		case 's': {
			const char *s = va_arg(ap, const char *);
			while (*s)
				put(&o, *s++);
			break;
		}
		case 'c': put(&o, (char)va_arg(ap, int)); break;
		case 'd': {
			int64_t v = longs ? va_arg(ap, int64_t) : va_arg(ap, int);
			if (v < 0) {
				put(&o, '-');
				v = -v;
			}
			put_num(&o, (uint64_t)v, 10, width, pad);
			break;
		}
		case 'u': put_num(&o, longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, width, pad); break;
		case 'x': put_num(&o, longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, width, pad); break;
		case 'p': put(&o, '0'); put(&o, 'x'); put_num(&o, (uint64_t)va_arg(ap, void *), 16, 0, ' '); break;
		case '%': put(&o, '%'); break;
		default: put(&o, '?'); break;
		}
	}
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

void printf(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	console_write(line, n < (int)sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static uint64_t heap_next, heap_end;

void heap_init(uint64_t start, uint64_t end)
{
	heap_next = (start + 4095) & ~4095ull;
	heap_end = end;
}

uint64_t heap_end_addr(void)
{
	return heap_end;
}

void *alloc_pages(size_t bytes)
{
	uint64_t p = heap_next;

	bytes = (bytes + 4095) & ~(size_t)4095;
	if (bytes > heap_end - heap_next) {
		printf("guest: out of memory (wanted %lu bytes) -- raise --mem\n", (uint64_t)bytes);
		guest_exit(LKVM_STATUS_FAILED);
	}
	heap_next += bytes;
	memset((void *)p, 0, bytes);
	return (void *)p;
}

void guest_exit(int status)
{
	for (;;)
		outb(LKVM_PORT_EXIT, (uint8_t)status);
}
