/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's configuration files, read as NCCL reads them (nccl_env.h). */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gdrb_json.h"
#include "gdrb_sysfs.h"
#include "nccl_env.h"

/* NCCL_CONF_FILE is read from NCCL 2.23 on (NCCL_VERSION_CODE 22300); before, ~/.nccl.conf. */
#define CONF_FILE_SINCE 22300

/* Why a file is not read, from what lstat and the reader said. */
static void why_not(struct gdrb_nccl_conf_file *f, int err, const struct stat *st)
{
	const char *what;

	if (st && S_ISLNK(st->st_mode))
		what = "a symbolic link: not followed, its settings not shown (NCCL follows it)";
	else if (st && S_ISFIFO(st->st_mode))
		what = "a FIFO: not read (NCCL would wait on it)";
	else if (st && S_ISDIR(st->st_mode))
		what = "a directory: NCCL reads nothing from it";
	else if (st && !S_ISREG(st->st_mode))
		what = "not a regular file: not read";
	else if (err == ENOENT)
		what = "not there";
	else if (err == EFBIG)
		what = "larger than 64 KiB: not read";
	else
		what = NULL;
	if (what)
		snprintf(f->state, sizeof(f->state), "%s", what);
	else
		snprintf(f->state, sizeof(f->state), "not read: %s", strerror(err));
}

/* Read one file into conf as NCCL would, or say why not. */
static void read_one(struct gdrb_nccl_conf *conf, int i)
{
	struct gdrb_nccl_conf_file *f = &conf->files[i];
	struct stat st;
	char *text;
	size_t got = 0;
	int rc;

	if (lstat(f->path, &st) != 0) {
		why_not(f, errno, NULL);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		why_not(f, EINVAL, &st);
		return;
	}
	text = malloc(GDRB_NCCL_CONF_MAX + 1);
	if (!text) {
		why_not(f, ENOMEM, NULL);
		return;
	}
	/* Not through a link, without blocking, a regular file only (the reader checks again once open). */
	rc = gdrb_read_bin(f->path, text, GDRB_NCCL_CONF_MAX + 1, &got);
	if (!rc && got > GDRB_NCCL_CONF_MAX)
		rc = -EFBIG;
	if (rc) {
		why_not(f, -rc, rc == -ELOOP ? &(struct stat){ .st_mode = S_IFLNK } : NULL);
		free(text);
		return;
	}
	f->read = true;
	gdrb_nccl_conf_parse(conf, i, text, got);
	free(text);
}

void gdrb_nccl_conf_read(struct gdrb_nccl_conf *conf, int version, const char *conf_file, const char *home,
			 const char *etc)
{
	bool named = conf_file && *conf_file;
	int n = 0;

	memset(conf, 0, sizeof(*conf));
	if (named && version && version < CONF_FILE_SINCE) {
		snprintf(conf->conf_file_note, sizeof(conf->conf_file_note),
			 "NCCL_CONF_FILE is set, but this NCCL reads it from 2.23 on only: ~/.nccl.conf is read in its place");
		named = false;
	}
	if (named) {
		snprintf(conf->files[n].path, sizeof(conf->files[n].path), "%s", conf_file);
		conf->files[n++].via = "NCCL_CONF_FILE";
	} else if (home) {
		snprintf(conf->files[n].path, sizeof(conf->files[n].path), "%s/.nccl.conf", home);
		conf->files[n++].via = "~/.nccl.conf";
	}
	snprintf(conf->files[n].path, sizeof(conf->files[n].path), "%s", etc);
	conf->files[n++].via = "/etc/nccl.conf";
	conf->nfiles = n;
	for (n = 0; n < conf->nfiles; n++)
		read_one(conf, n);
}

static struct gdrb_nccl_conf_setting *find(struct gdrb_nccl_conf *conf, const char *name)
{
	int i;

	for (i = 0; i < conf->nset; i++)
		if (!conf->set[i].shadowed && !strcmp(conf->set[i].name, name))
			return &conf->set[i];
	return NULL;
}

/*
 * One line, as setEnvFile takes it: a trailing '\r' dropped (2.30), a '#' first a comment
 * (2.26; before, "#NAME" was set, a name NCCL never reads: the same effect), no '=' or an
 * empty name (setenv refuses it) passed over; NAME is all before the first '=' as it is,
 * blanks included, VALUE all after it.
 */
static void parse_line(struct gdrb_nccl_conf *conf, int file, const char *line, size_t len)
{
	struct gdrb_nccl_conf_file *f = &conf->files[file];
	struct gdrb_nccl_conf_setting *s;
	const char *eq;
	size_t nlen, vlen;

	if (len && line[len - 1] == '\r')
		len--;
	eq = memchr(line, '=', len);
	if (!len || line[0] == '#' || !eq || eq == line || memchr(line, '\0', len)) {
		if (len)
			f->ignored++;
		return;
	}
	nlen = (size_t)(eq - line);
	vlen = len - nlen - 1;
	f->settings++;
	if (memchr(line, ' ', nlen) || memchr(line, '\t', nlen)) {
		f->blank_names++;
		return;
	}
	if (nlen < 5 || strncmp(line, "NCCL_", 5)) {
		f->others++;
		return;
	}
	if (nlen >= sizeof(s->name))
		return;
	if (conf->nset >= GDRB_NCCL_CONF_SETTINGS) {
		conf->dropped++;
		return;
	}
	s = &conf->set[conf->nset];
	memcpy(s->name, line, nlen);
	s->name[nlen] = '\0';
	/* setenv(..., 0): the first a name is given keeps it, in this file or an earlier one. */
	s->shadowed = find(conf, s->name) != NULL;
	s->cut = vlen >= sizeof(s->value);
	if (s->cut)
		vlen = sizeof(s->value) - 1;
	memcpy(s->value, eq + 1, vlen);
	s->value[vlen] = '\0';
	s->file = file;
	conf->nset++;
}

void gdrb_nccl_conf_parse(struct gdrb_nccl_conf *conf, int file, const char *text, size_t len)
{
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t line = nl ? (size_t)(nl - text) : len;

		parse_line(conf, file, text, line);
		if (!nl)
			break;
		text += line + 1;
		len -= line + 1;
	}
}

const char *gdrb_nccl_conf_value(const struct gdrb_nccl_conf *conf, const char *name, const char **from)
{
	int i;

	for (i = 0; conf && i < conf->nset; i++) {
		const struct gdrb_nccl_conf_setting *s = &conf->set[i];

		if (s->shadowed || strcmp(s->name, name))
			continue;
		if (from)
			*from = conf->files[s->file].path;
		return s->cut ? NULL : s->value;
	}
	return NULL;
}

/* Append to buf at *at, cut where it does not fit. */
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at += (size_t)n;
}

/* Start buf empty; false where it has no room at all. */
static bool buf_start(char *buf, size_t len)
{
	if (!len)
		return false;
	buf[0] = '\0';
	return true;
}

void gdrb_nccl_conf_describe(const struct gdrb_nccl_conf *conf, char *buf, size_t len)
{
	size_t at = 0;
	int i, k;

	if (!buf_start(buf, len))
		return;
	put(buf, len, &at, "NCCL's configuration files (read by NCCL as it starts, in this order; a variable in the environment wins over a file, the first file over the second):");
	for (i = 0; i < conf->nfiles; i++) {
		const struct gdrb_nccl_conf_file *f = &conf->files[i];
		char path[300];
		bool any = false;

		gdrb_text_clean(path, sizeof(path), f->path);
		put(buf, len, &at, "\n#   %s '%s': ", f->via, path);
		if (!f->read) {
			put(buf, len, &at, "%s", f->state);
			continue;
		}
		for (k = 0; k < conf->nset; k++) {
			const struct gdrb_nccl_conf_setting *s = &conf->set[k];
			char item[sizeof(s->name) + sizeof(s->value) + 8], shown[sizeof(item) * 4];
			const char *env;

			if (s->file != i)
				continue;
			snprintf(item, sizeof(item), "%s=%s%s", s->name, s->value, s->cut ? "..." : "");
			gdrb_text_clean(shown, sizeof(shown), item);
			put(buf, len, &at, "%s%s", any ? ", " : "", shown);
			any = true;
			env = getenv(s->name);
			if (s->shadowed) {
				put(buf, len, &at, " (set by an earlier line or file, whose value NCCL keeps)");
			} else if (env) {
				char e[96];

				gdrb_text_clean(e, sizeof(e), env);
				put(buf, len, &at, " (overridden: the environment's %s wins)", e);
			}
		}
		if (!any)
			put(buf, len, &at, "no NCCL_* setting");
		if (f->others)
			put(buf, len, &at, "; %u other variable(s) set", f->others);
		if (f->ignored)
			put(buf, len, &at, "; %u line(s) passed over as NCCL passes them (a comment, no '=')", f->ignored);
		if (f->blank_names)
			put(buf, len, &at, "; %u line(s) with a blank in the name before '=' (NCCL sets a variable of that name, which it never reads)",
			    f->blank_names);
	}
	if (conf->dropped)
		put(buf, len, &at, "\n#   %u more NCCL_* setting(s) not shown", conf->dropped);
	if (conf->conf_file_note[0])
		put(buf, len, &at, "\n#   %s", conf->conf_file_note);
}

/* For the note: gdrb_text_clean, then ';' and blanks made '_' (the note's separators). */
static void note_clean(char *out, size_t len, const char *s)
{
	char *p;

	gdrb_text_clean(out, len, s);
	for (p = out; *p; p++)
		if (*p == ';' || *p == ' ')
			*p = '_';
}

void gdrb_nccl_conf_note(const struct gdrb_nccl_conf *conf, char *buf, size_t len)
{
	size_t at = 0;
	int i, k;

	if (!buf_start(buf, len))
		return;
	for (i = 0; i < conf->nfiles; i++) {
		bool any = false;

		for (k = 0; k < conf->nset; k++) {
			const struct gdrb_nccl_conf_setting *s = &conf->set[k];
			char path[300], item[sizeof(s->name) + sizeof(s->value) + 4], shown[sizeof(item) * 4];

			if (s->file != i || s->shadowed || getenv(s->name))
				continue;
			if (!any) {
				note_clean(path, sizeof(path), conf->files[i].path);
				put(buf, len, &at, "%sfrom %s:", at ? "; " : "", path);
				any = true;
			}
			snprintf(item, sizeof(item), "%s=%s", s->name, s->value);
			note_clean(shown, sizeof(shown), item);
			put(buf, len, &at, " %s", shown);
		}
	}
	if (at >= len)
		buf[len - 1] = '\0';
}
