/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_json.h"

/* Bytes in the well-formed UTF-8 sequence at p (RFC 3629, table 3-7 of Unicode), or 0. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;       /* a continuation byte, an overlong lead (c0, c1), or f5..ff */
	if (*p == 0xe0)
		lo = 0xa0;      /* overlong */
	else if (*p == 0xed)
		hi = 0x9f;      /* UTF-16 surrogates */
	else if (*p == 0xf0)
		lo = 0x90;      /* overlong */
	else if (*p == 0xf4)
		hi = 0x8f;      /* above U+10FFFF */
	for (i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;   /* also stops at the terminating NUL */
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/*
 * The terminal form of the character at p: into out (at least 17 bytes) and the
 * number of bytes of p it takes. Valid UTF-8 other than C1 is kept; a control
 * (C0, DEL, C1 as UTF-8) or a byte of no valid sequence is its bytes as \xHH.
 */
static size_t text_unit(const unsigned char *p, char *out)
{
	size_t n = utf8_len(p), i;

	if (n == 1 && *p >= 0x20 && *p != 0x7f) {
		out[0] = (char)*p;
		out[1] = '\0';
		return 1;
	}
	if (n > 1 && !(p[0] == 0xc2 && p[1] < 0xa0)) {
		memcpy(out, p, n);
		out[n] = '\0';
		return n;
	}
	n = n ? n : 1;
	for (i = 0; i < n; i++)
		snprintf(out + 4 * i, 5, "\\x%02x", p[i]);
	return n;
}

void gdrb_text_put(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char unit[17];

	while (p && *p) {
		p += text_unit(p, unit);
		fputs(unit, f);
	}
}

size_t gdrb_text_clean(char *out, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t used = 0, n;
	char unit[17];

	if (len == 0)
		return 0;
	while (p && *p) {
		p += text_unit(p, unit);
		n = strlen(unit);
		if (used + n >= len)
			break;          /* whole characters only: never half an escape */
		memcpy(out + used, unit, n);
		used += n;
	}
	out[used] = '\0';
	return used;
}

void gdrb_text_lines(FILE *f, const char *text, size_t len)
{
	const char *at = text, *end = text + len, *nl;
	char line[4096];

	while (at < end) {
		nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = (size_t)((nl ? nl : end) - at);

		/* A header line is a few hundred bytes; a longer one is cut, never overrun. */
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), at);
		gdrb_text_put(f, line);
		fputc('\n', f);
		at += n + 1;
	}
}

void gdrb_json_quote(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else {
				size_t n = utf8_len(p);

				/* sysfs strings are bytes: an invalid one becomes U+FFFD, the document stays valid. */
				if (n == 0) {
					fputs("\\ufffd", f);
				} else {
					fwrite(p, 1, n, f);
					p += n - 1;
				}
			}
		}
	}
	fputc('"', f);
}

void gdrb_json_init(struct gdrb_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->has_items[0] = false;
}

/* Comma, newline and indentation before an item, then its key. */
static void item(struct gdrb_json *j, const char *key)
{
	if (j->depth > 0) {
		fputs(j->has_items[j->depth] ? ",\n" : "\n", j->f);
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	j->has_items[j->depth] = true;
	if (key) {
		gdrb_json_quote(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(struct gdrb_json *j, const char *key, char c)
{
	item(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < GDRB_JSON_MAX_DEPTH)
		j->depth++;
	j->has_items[j->depth] = false;
}

static void close_(struct gdrb_json *j, char c)
{
	bool had = j->has_items[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		fprintf(j->f, "\n%*s", 2 * j->depth, "");
	fputc(c, j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void gdrb_json_open_object(struct gdrb_json *j, const char *key)
{
	open_(j, key, '{');
}

void gdrb_json_close_object(struct gdrb_json *j)
{
	close_(j, '}');
}

void gdrb_json_open_array(struct gdrb_json *j, const char *key)
{
	open_(j, key, '[');
}

void gdrb_json_close_array(struct gdrb_json *j)
{
	close_(j, ']');
}

void gdrb_json_string(struct gdrb_json *j, const char *key, const char *value)
{
	item(j, key);
	if (value)
		gdrb_json_quote(j->f, value);
	else
		fputs("null", j->f);
}

void gdrb_json_int(struct gdrb_json *j, const char *key, long long value)
{
	item(j, key);
	fprintf(j->f, "%lld", value);
}

void gdrb_json_number(struct gdrb_json *j, const char *key, double value)
{
	item(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.10g", value);
	else
		fputs("null", j->f);
}

void gdrb_json_bool(struct gdrb_json *j, const char *key, bool value)
{
	item(j, key);
	fputs(value ? "true" : "false", j->f);
}
