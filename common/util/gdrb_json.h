/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small streaming JSON writer: objects and arrays nest, commas and
 * indentation are handled here, strings are escaped. Enough for reports;
 * no parser.
 */
#ifndef GDRB_JSON_H
#define GDRB_JSON_H

#include <stdbool.h>
#include <stdio.h>

#define GDRB_JSON_MAX_DEPTH 16

struct gdrb_json {
	FILE *f;
	int depth;
	bool has_items[GDRB_JSON_MAX_DEPTH];
};

void gdrb_json_init(struct gdrb_json *j, FILE *f);
/* key is NULL inside arrays (and for the outermost value). */
void gdrb_json_open_object(struct gdrb_json *j, const char *key);
void gdrb_json_close_object(struct gdrb_json *j);
void gdrb_json_open_array(struct gdrb_json *j, const char *key);
void gdrb_json_close_array(struct gdrb_json *j);
void gdrb_json_string(struct gdrb_json *j, const char *key, const char *value);  /* NULL: null */
void gdrb_json_int(struct gdrb_json *j, const char *key, long long value);
void gdrb_json_number(struct gdrb_json *j, const char *key, double value);      /* NAN: null */
void gdrb_json_bool(struct gdrb_json *j, const char *key, bool value);

/*
 * Write s as a quoted JSON string: control characters escaped, valid UTF-8
 * kept, every byte of an invalid sequence (sysfs text is bytes) written as
 * \ufffd, so the document always parses.
 */
void gdrb_json_quote(FILE *f, const char *s);

/*
 * Write s for a terminal (a text table): valid UTF-8 kept, every control
 * (C0 with tab and newline, DEL, C1 U+0080..U+009F) and every byte of an invalid
 * sequence (a lone 0x9b is CSI to an 8-bit terminal) written as \xHH, so that
 * text read from sysfs or the environment cannot move the cursor, retitle the
 * window or rewrite a line. A backslash stays itself.
 */
void gdrb_text_put(FILE *f, const char *s);

/*
 * s as gdrb_text_put() writes it, into out (len bytes, NUL-terminated), cut
 * before the first character that does not fit whole; its length.
 */
size_t gdrb_text_clean(char *out, size_t len, const char *s);

/* Lines of text (LEN bytes, each ending in \n) for a terminal: each as gdrb_text_put, then \n. */
void gdrb_text_lines(FILE *f, const char *text, size_t len);

#endif
