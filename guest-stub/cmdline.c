/*
 * cmdline.c -- split the command line into words and pick out ours.
 * Unknown words are ignored, as a kernel ignores parameters it does not know.
 * Then find_device: which of the windows the line named holds a device.
 */
#include "cmdline.h"

#include "io.h"
#include "lguest_kvm_abi.h"
#include "lib.h"
#include "lkvm_frame.h"

/* Parses decimal or 0x hex, with an optional K/M/G suffix; 0 on error. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0, base = 10;
	size_t i = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == len)
		return 0;
	for (; i < len; i++) {
		char c = s[i];
		uint64_t d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		v = v * base + d;
	}
	if (i + 1 == len) {
		switch (s[i]) {
		case 'K': case 'k': v <<= 10; i++; break;
		case 'M': case 'm': v <<= 20; i++; break;
		case 'G': case 'g': v <<= 30; i++; break;
		}
	}
	if (i != len)
		return 0;
	*out = v;
	return 1;
}

int word_eq(const char *s, uint32_t len, const char *w)
{
	return strlen(w) == len && !memcmp(s, w, len);
}

int streq(const char *a, const char *b)
{
	return word_eq(a, strlen(a), b);
}

static int copy_word(char *dst, uint32_t size, const char *v, uint32_t len)
{
	if (len >= size)
		return 0;
	memcpy(dst, v, len);
	dst[len] = 0;
	return 1;
}

static int starts(const char *s, uint32_t len, const char *prefix, const char **rest, uint32_t *rest_len)
{
	uint32_t n = strlen(prefix);

	if (len < n || memcmp(s, prefix, n))
		return 0;
	*rest = s + n;
	*rest_len = len - n;
	return 1;
}

/* SIZE@ADDR:IRQ, e.g. 4K@0xd0000000:5 */
static int parse_device(const char *v, uint32_t len, struct mmio_window *w)
{
	uint32_t at = 0, colon = 0;
	uint64_t irq;

	while (at < len && v[at] != '@')
		at++;
	colon = at;
	while (colon < len && v[colon] != ':')
		colon++;
	if (at >= len || colon >= len)
		return 0;
	if (!parse_u64(v, at, &w->size) || !parse_u64(v + at + 1, colon - at - 1, &w->base) ||
	    !parse_u64(v + colon + 1, len - colon - 1, &irq))
		return 0;
	w->irq = (unsigned)irq;
	return 1;
}

/* "A.B.C.D" into a host-order address; with `port`, "A.B.C.D:PORT". */
static int parse_ipv4(const char *s, uint32_t len, uint32_t *ip, uint16_t *port)
{
	uint32_t i = 0, v = 0;

	for (int part = 0; part < 4; part++) {
		uint32_t n = 0, start = i;

		while (i < len && s[i] >= '0' && s[i] <= '9' && i - start < 3)
			n = n * 10 + (uint32_t)(s[i++] - '0');
		if (i == start || n > 255 || (part < 3 && (i >= len || s[i++] != '.')))
			return 0;
		v = v << 8 | n;
	}
	*ip = v;
	if (!port)
		return i == len;
	if (i >= len || s[i++] != ':')
		return 0;
	{
		uint64_t n;

		if (!parse_u64(s + i, len - i, &n) || !n || n > 65535)
			return 0;
		*port = (uint16_t)n;
	}
	return 1;
}

static int bad(const char *what, const char *v, uint32_t len)
{
	char tmp[64];
	uint32_t n = len < sizeof(tmp) - 1 ? len : sizeof(tmp) - 1;

	memcpy(tmp, v, n);
	tmp[n] = 0;
	printf("guest: bad %s '%s' on the command line\n", what, tmp);
	return -1;
}

int cmdline_parse(const char *line, struct params *p)
{
	const char *s = line;

	while (*s) {
		const char *w, *v;
		uint32_t len = 0, vlen;
		uint64_t n;

		while (*s == ' ')
			s++;
		w = s;
		while (s[len] && s[len] != ' ')
			len++;
		s += len;
		if (!len)
			continue;
		if (starts(w, len, "virtio_mmio.device=", &v, &vlen)) {
			if (p->ndev == MAX_DEVICES || !parse_device(v, vlen, &p->dev[p->ndev]))
				return bad("device", v, vlen);
			p->ndev++;
		} else if (starts(w, len, "lkvm.workload=", &v, &vlen)) {
			if (!copy_word(p->workload, sizeof(p->workload), v, vlen))
				return bad("workload", v, vlen);
		} else if (starts(w, len, "lkvm.policy=", &v, &vlen)) {
			if (!copy_word(p->policy, sizeof(p->policy), v, vlen))
				return bad("policy", v, vlen);
		} else if (starts(w, len, "lkvm.fault=", &v, &vlen)) {
			if (!copy_word(p->fault, sizeof(p->fault), v, vlen))
				return bad("fault", v, vlen);
		} else if (starts(w, len, "lkvm.wait=", &v, &vlen)) {
			if (!word_eq(v, vlen, "spin") && !word_eq(v, vlen, "halt"))
				return bad("wait", v, vlen);
			p->wait_halt = word_eq(v, vlen, "halt");
		} else if (starts(w, len, "lkvm.indirect=", &v, &vlen)) {
			if (word_eq(v, vlen, "never"))
				p->indirect = INDIRECT_NEVER;
			else if (word_eq(v, vlen, "always"))
				p->indirect = INDIRECT_ALWAYS;
			else if (word_eq(v, vlen, "threshold"))
				p->indirect = INDIRECT_THRESHOLD;
			else if (vlen > 10 && !memcmp(v, "threshold:", 10) && parse_u64(v + 10, vlen - 10, &n))
				p->indirect = INDIRECT_THRESHOLD, p->indirect_threshold = (uint32_t)n;
			else
				return bad("indirect", v, vlen);
		} else if (starts(w, len, "lkvm.bytes=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &p->bytes))
				return bad("bytes", v, vlen);
		} else if (starts(w, len, "lkvm.frame=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n < LKVM_FRAME_MIN || n > LKVM_FRAME_MAX - 12)
				return bad("frame", v, vlen);
			p->frame = (uint32_t)n;
		} else if (starts(w, len, "lkvm.ring=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n < 2 || n > 1024 || (n & (n - 1)))
				return bad("ring", v, vlen);
			p->ring = (uint32_t)n;
		} else if (starts(w, len, "lkvm.pace_ns=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > 10000000)
				return bad("pace_ns", v, vlen);
			p->pace_ns = (uint32_t)n;
		} else if (starts(w, len, "lkvm.burst=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > 0xffffffffu)
				return bad("burst", v, vlen);
			p->burst = (uint32_t)n;
		} else if (starts(w, len, "lkvm.indirect_cost_ns=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > LKVM_INDIRECT_COST_NS_MAX)
				return bad("indirect_cost_ns", v, vlen);
			p->indirect_cost_ns = (uint32_t)n;
		} else if (starts(w, len, "lkvm.indirect_cold_lines=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > LKVM_INDIRECT_COLD_LINES_MAX)
				return bad("indirect_cold_lines", v, vlen);
			p->indirect_cold_lines = (uint32_t)n;
		} else if (starts(w, len, "lkvm.tsc_khz=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > 0xffffffffu)
				return bad("tsc_khz", v, vlen);
			p->tsc_khz = (uint32_t)n;
			p->tsc_khz_given = 1;
		} else if (starts(w, len, "lkvm.status=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > 255)
				return bad("status", v, vlen);
			p->boot_status = (uint32_t)n;
		} else if (starts(w, len, "lkvm.ip=", &v, &vlen)) {
			if (!parse_ipv4(v, vlen, &p->ip, 0))
				return bad("ip", v, vlen);
		} else if (starts(w, len, "lkvm.peer=", &v, &vlen)) {
			if (!parse_ipv4(v, vlen, &p->peer_ip, &p->peer_port))
				return bad("peer", v, vlen);
		} else if (starts(w, len, "lkvm.tso=", &v, &vlen)) {
			if (!word_eq(v, vlen, "0") && !word_eq(v, vlen, "1"))
				return bad("tso", v, vlen);
			p->tso = word_eq(v, vlen, "1");
		} else if (starts(w, len, "lkvm.report=", &v, &vlen)) {
			if (word_eq(v, vlen, "auto"))
				p->report = REPORT_AUTO;
			else if (word_eq(v, vlen, "port"))
				p->report = REPORT_PORT;
			else if (word_eq(v, vlen, "console"))
				p->report = REPORT_CONSOLE;
			else
				return bad("report", v, vlen);
		} else if (starts(w, len, "lkvm.layout=", &v, &vlen)) {
			if (!word_eq(v, vlen, "split") && !word_eq(v, vlen, "packed"))
				return bad("layout", v, vlen);
			p->layout = word_eq(v, vlen, "packed") ? LAYOUT_PACKED : LAYOUT_SPLIT;
		} else if (starts(w, len, "lkvm.trace=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n > LKVM_TRACE_EVENTS_MAX || (n & (n - 1)))
				return bad("trace", v, vlen);
			p->trace_events = (uint32_t)n;
		} else if (starts(w, len, "lkvm.coalesce=", &v, &vlen)) {
			uint32_t colon = 0;
			uint64_t us, pk;

			while (colon < vlen && v[colon] != ':')
				colon++;
			if (colon == vlen || !parse_u64(v, colon, &us) || !parse_u64(v + colon + 1, vlen - colon - 1, &pk) ||
			    us > LKVM_COALESCE_MAX || pk > LKVM_COALESCE_MAX)
				return bad("coalesce", v, vlen);
			p->coalesce = 1;
			p->coal_usecs = (uint32_t)us;
			p->coal_packets = (uint32_t)pk;
		} else if (starts(w, len, "lkvm.segments=", &v, &vlen)) {
			if (!parse_u64(v, vlen, &n) || n < 1 || n > 16)
				return bad("segments", v, vlen);
			p->segments = (uint32_t)n;
		}
	}
	return 0;
}

/* A window is a device if its magic and ID registers say so. */
const struct mmio_window *find_device(const struct params *p, uint32_t device_id)
{
	for (unsigned i = 0; i < p->ndev; i++)
		if (mmio_read32(p->dev[i].base) == 0x74726976 && mmio_read32(p->dev[i].base + 8) == device_id)
			return &p->dev[i];
	return 0;
}
