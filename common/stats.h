/*
 * stats.h -- the stats block: an ordered list of named values, rendered as
 * text on stderr and, on request, as one JSON object with the same keys.
 * Keys follow <direction>_<object>_<event> where they count something
 * (docs/stats.md documents every one).
 *
 * How a block comes together: the launcher's collect_stats
 * (launcher/run_stats.c) walks the run's story in the block's fixed order;
 * where a device's keys belong it hands the list to that device
 * (net_report_stats, console_report_stats, ...), which appends its own keys
 * with stats_u64/f64/str.  The order of the calls is the order users read,
 * so a device appends its keys in one fixed sequence and never sorts.  The
 * launcher then renders the one list twice: stats_print and
 * stats_write_json.  The list lives here, below devices/ and launcher/, so
 * that a device can fill it without knowing who prints it.
 */
#ifndef STATS_H
#define STATS_H

#include <stdint.h>
#include <stdio.h>

#define STATS_MAX 128

struct stat_entry {
	const char *key;
	enum { STAT_U64, STAT_F64, STAT_STR } type;
	uint64_t u;
	double f;
	char s[200];
};

struct stats {
	struct stat_entry e[STATS_MAX];
	unsigned n;
};

void stats_u64(struct stats *st, const char *key, uint64_t v);
void stats_f64(struct stats *st, const char *key, double v);
void stats_str(struct stats *st, const char *key, const char *v);
/* The seed's two lines first, then "key value" lines. */
void stats_print(FILE *f, const struct stats *st);
/* Writes and closes `f` (opened early, before privileges are dropped),
 * through the one JSON writer (json_writer.h). */
int stats_write_json(FILE *f, const char *path, const struct stats *st);

/* qsort's comparison for doubles, ascending: the medians and quantiles of
 * samples (table, trace, bench). */
int stats_cmp_double(const void *a, const void *b);

/* A number from a JSON file this project wrote ("key": value); 0 if absent. */
int stats_json_number(const char *path, const char *key, double *out);
/* The same for an unsigned integer, written as a number or as a quoted
 * hex string ("net_features_negotiated": "0x100000020"). */
int stats_json_u64(const char *path, const char *key, uint64_t *out);

#endif
