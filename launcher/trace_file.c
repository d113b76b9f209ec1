/* TEMPORARY stand-in until the helper's trace_file.c lands */
#include "trace_file.h"
#include "diag.h"
#include <errno.h>
#include <string.h>
int trace_file_fwrite(FILE *f, const char *path, const struct trace_file_header *h, const struct lkvm_trace_event *ev,
		      uint64_t n)
{
	int bad = fwrite(h, sizeof(*h), 1, f) != 1 || (n && fwrite(ev, sizeof(*ev), n, f) != n);
	if (fclose(f) || bad)
		return diag_fail("--trace %s: %s", path, strerror(errno));
	return 0;
}
