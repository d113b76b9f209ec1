/*
 * stats.c -- collect and render the stats block.  Devices and the launcher
 * append (key, value) pairs in the block's order (stats.h); the launcher
 * renders the one list as text and as JSON, so the two cannot drift apart.
 * The two lines the 2008 patch printed come first, in its own words, so the
 * paper's numbers can be read off any run.
 */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "json_writer.h"

static struct stat_entry *add(struct stats *st, const char *key)
{
	static struct stat_entry overflow;

	if (st->n == STATS_MAX)
		return &overflow;   /* programming error; keep going without it */
	st->e[st->n].key = key;
	return &st->e[st->n++];
}

void stats_u64(struct stats *st, const char *key, uint64_t v)
{
	struct stat_entry *e = add(st, key);

	e->type = STAT_U64;
	e->u = v;
}

void stats_f64(struct stats *st, const char *key, double v)
{
	struct stat_entry *e = add(st, key);

	e->type = STAT_F64;
	e->f = v;
}

void stats_str(struct stats *st, const char *key, const char *v)
{
	struct stat_entry *e = add(st, key);

	e->type = STAT_STR;
	snprintf(e->s, sizeof(e->s), "%s", v);
}

static const struct stat_entry *find(const struct stats *st, const char *key)
{
	for (unsigned i = 0; i < st->n; i++)
		if (!strcmp(st->e[i].key, key))
			return &st->e[i];
	return NULL;
}

void stats_print(FILE *f, const struct stats *st)
{
	const struct stat_entry *notifies = find(st, "tx_queue_notifies");
	const struct stat_entry *timeouts = find(st, "tx_timer_timeouts");

	fprintf(f, "Number of net notifies: %llu\n", notifies ? (unsigned long long)notifies->u : 0ull);
	fprintf(f, "Number of timeouts: %llu\n", timeouts ? (unsigned long long)timeouts->u : 0ull);
	fprintf(f, "--- lguest-kvm stats ---\n");
	for (unsigned i = 0; i < st->n; i++) {
		const struct stat_entry *e = &st->e[i];

		switch (e->type) {
		case STAT_U64: fprintf(f, "%-32s %llu\n", e->key, (unsigned long long)e->u); break;
		case STAT_F64: fprintf(f, "%-32s %.6f\n", e->key, e->f); break;
		case STAT_STR: fprintf(f, "%-32s %s\n", e->key, e->s); break;
		}
	}
	fflush(f);
}

int stats_write_json(FILE *f, const char *path, const struct stats *st)
{
	struct json_writer w;

	json_start(&w, f);
	json_begin_object(&w, NULL);
	for (unsigned i = 0; i < st->n; i++) {
		const struct stat_entry *e = &st->e[i];

		json_break(&w, 2);   /* one key per line */
		switch (e->type) {
		case STAT_U64: json_u64(&w, e->key, e->u); break;
		case STAT_F64: json_double(&w, e->key, "%.9g", e->f); break;
		case STAT_STR: json_string(&w, e->key, e->s); break;
		}
	}
	json_break(&w, 0);
	json_end(&w);
	fputc('\n', f);
	if (fclose(f) != 0)
		return diag_fail("--stats-json %s: write failed: %m", path);
	return 0;
}

/* The text after `"key": ` on the first line that has it, into line. */
static const char *json_value(const char *path, const char *key, char *line, size_t size)
{
	char want[80];
	const char *found = NULL;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	snprintf(want, sizeof(want), "\"%s\": ", key);
	while (!found && fgets(line, (int)size, f)) {
		char *p = strstr(line, want);

		if (p)
			found = p + strlen(want);
	}
	fclose(f);
	return found;
}

int stats_json_number(const char *path, const char *key, double *out)
{
	char line[512];
	const char *v = json_value(path, key, line, sizeof(line));

	return v && sscanf(v, "%lf", out) == 1;
}

int stats_json_u64(const char *path, const char *key, uint64_t *out)
{
	char line[512], *end;
	const char *v = json_value(path, key, line, sizeof(line));

	if (!v)
		return 0;
	v += *v == '"';
	if (*v < '0' || *v > '9')
		return 0;
	*out = strtoull(v, &end, 0);
	return end != v;
}

int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
