/*
 * json_writer.h -- the one JSON writer: the stats block's --stats-json,
 * table's --json, trace's --json and receive's --json all go through it.
 *
 * It writes as it goes (no tree in memory): open an object or an array,
 * put members or elements into it, close it.  It owns what makes JSON
 * JSON -- the commas, the quotes, a string's escapes, a number that is not
 * finite written as null -- and leaves the layout to the caller, who says
 * where a line breaks (json_break: the next member starts a new line,
 * indented by so many spaces), so that each file keeps the shape its
 * readers know: one stats key per line, one table row per line, and so on.
 *
 * `key` is the member's name inside an object, NULL inside an array (or
 * for the top value).
 */
#ifndef JSON_WRITER_H
#define JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json_writer {
	FILE *f;
	unsigned depth;
	bool has_member[JSON_MAX_DEPTH];  /* something is already in the open object or array */
	char closer[JSON_MAX_DEPTH];       /* '}' or ']': what closes it */
	int break_indent;                  /* >= 0: the next member starts a new line, this far in */
};

void json_start(struct json_writer *w, FILE *f);
/* The next member (or the closing bracket) starts a new line, `indent` spaces in. */
void json_break(struct json_writer *w, int indent);

void json_begin_object(struct json_writer *w, const char *key);
void json_begin_array(struct json_writer *w, const char *key);
/* Close the innermost object or array (after a json_break: on a new line). */
void json_end(struct json_writer *w);

void json_string(struct json_writer *w, const char *key, const char *s);   /* NULL: null */
void json_u64(struct json_writer *w, const char *key, uint64_t v);
void json_i64(struct json_writer *w, const char *key, int64_t v);
/* printf's `fmt` ("%.9g", "%.6f", ...); null if v is not finite. */
void json_double(struct json_writer *w, const char *key, const char *fmt, double v);
void json_bool(struct json_writer *w, const char *key, bool v);
void json_null(struct json_writer *w, const char *key);

/* A string's JSON form, quotes included, on its own (for a caller that
 * only needs one quoted string). */
void json_write_string(FILE *f, const char *s);

#endif
