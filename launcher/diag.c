/* diag.c -- keeps the last one-line error until main() prints it. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

static char last[512];

int diag_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last, sizeof(last), fmt, ap);
	va_end(ap);
	return -1;
}

const char *diag_last(void)
{
	return last;
}

void diag_print(void)
{
	fprintf(stderr, "lguest-kvm: %s\n", last[0] ? last : "unknown error");
}
