/*
 * json_writer.c -- the one JSON writer (json_writer.h): commas, quotes,
 * escapes and non-finite numbers here; line breaks where the caller asks.
 */
#include "json_writer.h"

#include <math.h>

void json_write_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void json_start(struct json_writer *w, FILE *f)
{
	*w = (struct json_writer){ .f = f, .break_indent = -1 };
}

void json_break(struct json_writer *w, int indent)
{
	w->break_indent = indent;
}

/* Before a member: the comma after the one before, the line break asked
 * for, the key. */
static void member(struct json_writer *w, const char *key)
{
	bool *has = &w->has_member[w->depth];

	if (*has)
		fputc(',', w->f);
	if (w->break_indent >= 0)
		fprintf(w->f, "\n%*s", w->break_indent, "");
	else if (*has)
		fputc(' ', w->f);
	w->break_indent = -1;
	*has = true;
	if (key) {
		json_write_string(w->f, key);
		fputs(": ", w->f);
	}
}

static void begin(struct json_writer *w, const char *key, char bracket, char closer)
{
	member(w, key);
	fputc(bracket, w->f);
	if (w->depth + 1 < JSON_MAX_DEPTH) {
		w->depth++;
		w->has_member[w->depth] = false;
		w->closer[w->depth] = closer;
	}
}

void json_begin_object(struct json_writer *w, const char *key)
{
	begin(w, key, '{', '}');
}

void json_begin_array(struct json_writer *w, const char *key)
{
	begin(w, key, '[', ']');
}

void json_end(struct json_writer *w)
{
	if (w->break_indent >= 0)
		fprintf(w->f, "\n%*s", w->break_indent, "");
	w->break_indent = -1;
	fputc(w->closer[w->depth], w->f);
	if (w->depth)
		w->depth--;
}

void json_string(struct json_writer *w, const char *key, const char *s)
{
	member(w, key);
	if (s)
		json_write_string(w->f, s);
	else
		fputs("null", w->f);
}

void json_u64(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	fprintf(w->f, "%llu", (unsigned long long)v);
}

void json_i64(struct json_writer *w, const char *key, int64_t v)
{
	member(w, key);
	fprintf(w->f, "%lld", (long long)v);
}

void json_double(struct json_writer *w, const char *key, const char *fmt, double v)
{
	member(w, key);
	if (isfinite(v))
		fprintf(w->f, fmt, v);
	else
		fputs("null", w->f);
}

void json_bool(struct json_writer *w, const char *key, bool v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}
