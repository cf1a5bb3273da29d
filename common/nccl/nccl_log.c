/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reader of NCCL's INFO log (gdrb_nccl_log.h): the log read from a file (from where the
 * last read ended, bounded) or from memory, cut into lines, each line handed to
 * gdrb_nccl_log_line (nccl_log_lines.c, where the forms NCCL prints are listed), then the
 * NET/IB devices the connections used joined to their names and speeds.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nccl_log_int.h"

_Static_assert(sizeof(struct gdrb_nccl_links) == 16 * 4 + 48 + 32 + 48 + 32 + GDRB_NCCL_NICS * (24 + 4) + 4,
	       "struct gdrb_nccl_links has padding: its wire form would carry stray bytes");

/* A line being assembled from chunks; bad once it holds a NUL or outgrows line. */
struct reader {
	struct gdrb_nccl_links *l;
	struct ib_devs ib;
	struct gdrb_nccl_tuning *t;             /* NULL: TUNING lines passed over */
	const struct gdrb_nccl_owner *who;      /* NULL: every process's lines count */
	size_t done;                            /* bytes of the complete lines fed so far */
	size_t pending;                         /* bytes of the line under way from earlier chunks */
	size_t len;
	bool bad;
	char line[GDRB_NCCL_LINE_MAX + 1];
};

/* The line held so far is complete (or, at the end, cut off). */
static void end_line(struct reader *r, bool complete)
{
	bump(&r->l->lines);
	if (r->bad || !complete)
		bump(&r->l->skipped);
	else
		gdrb_nccl_log_line(r->line, r->len, r->l, r->who, r->t, &r->ib);
	r->len = 0;
	r->bad = false;
}

static void feed(struct reader *r, const char *data, size_t n)
{
	while (n) {
		const char *nl = memchr(data, '\n', n);
		size_t part = nl ? (size_t)(nl - data) : n;

		if (!r->bad) {
			if (part > GDRB_NCCL_LINE_MAX - r->len || memchr(data, '\0', part)) {
				r->bad = true;
			} else {
				memcpy(r->line + r->len, data, part);
				r->len += part;
			}
		}
		if (!nl) {
			r->pending += part;
			return;
		}
		end_line(r, true);
		r->done += part + 1 + r->pending;
		r->pending = 0;
		data = nl + 1;
		n -= part + 1;
	}
}

/* The NET/IB devices the connections used, named and with their speed where the log says. */
static void join_nics(struct reader *r)
{
	struct gdrb_nccl_links *l = r->l;
	unsigned d, k = 0, i, j;

	memset(l->nics, 0, sizeof(l->nics));
	for (d = 0; d < IB_DEVS; d++) {
		const char *name = r->ib.name[d][0] ? r->ib.name[d] : "?";

		if (!(l->ib_used & (1u << d)))
			continue;
		for (j = 0; j < k && strcmp(l->nics[j].name, name); j++)
			;
		if (j < k)
			continue;
		if (k == GDRB_NCCL_NICS) {
			/* More devices than kept: the rate is not known, not that of the first few. */
			snprintf(l->nics[k - 1].name, sizeof(l->nics[0].name), "?");
			l->nics[k - 1].mbps = 0;
			break;
		}
		snprintf(l->nics[k].name, sizeof(l->nics[0].name), "%s", name);
		for (i = 0; i < r->ib.nspeed; i++)
			if (!strcmp(r->ib.speed[i].name, name))
				l->nics[k].mbps = r->ib.speed[i].mbps;
		k++;
	}
}

static void finish(struct reader *r)
{
	if (r->len || r->bad)
		end_line(r, false);
	join_nics(r);
}

void gdrb_nccl_links_init(struct gdrb_nccl_links *l)
{
	memset(l, 0, sizeof(*l));
	l->ring_gdr = -1;
	l->ring_pxn = -1;
}

void gdrb_nccl_log_parse_mem(const void *data, size_t len, const struct gdrb_nccl_owner *who,
			     struct gdrb_nccl_links *l)
{
	struct reader r = { .l = l, .who = who };

	feed(&r, data, len);
	finish(&r);
}

int gdrb_nccl_log_parse(FILE *f, const struct gdrb_nccl_owner *who, struct gdrb_nccl_links *l)
{
	struct reader r = { .l = l, .who = who };
	char chunk[16384];
	size_t got;

	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		feed(&r, chunk, got);
	finish(&r);
	return ferror(f) ? -EIO : 0;
}

/*
 * Reads path from byte *from to its size when opened (at most GDRB_NCCL_LOG_MAX bytes in
 * all) into r; *from then ends the last complete line read, where the next read starts.
 */
static int read_file(const char *path, struct reader *r, long long *from, char *why, size_t why_len)
{
	struct stat st;
	char chunk[16384];
	off_t left;
	int fd, rc = 0;

	/* O_NONBLOCK: a FIFO planted in its place must not hang the open. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, why_len, "NCCL log %s: %s%s", path, strerror(-rc),
			 rc == -ELOOP ? " (a symbolic link: not followed)" : "");
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "NCCL log %s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	if (st.st_size > GDRB_NCCL_LOG_MAX) {
		snprintf(why, why_len, "NCCL log %s: %lld bytes, more than the %d read back (NCCL_DEBUG_SUBSYS beyond INIT,NET?)",
			 path, (long long)st.st_size, GDRB_NCCL_LOG_MAX);
		close(fd);
		return -EFBIG;
	}
	if (*from < 0 || *from > (long long)st.st_size)
		*from = 0;      /* truncated since, or a new file: from its start */
	if (*from && lseek(fd, (off_t)*from, SEEK_SET) < 0) {
		snprintf(why, why_len, "NCCL log %s: cannot seek: %s", path, strerror(errno));
		close(fd);
		return -EIO;
	}
	/* What the file held when it was looked at: NCCL may still be writing to it. */
	for (left = st.st_size - (off_t)*from; left > 0;) {
		ssize_t got = read(fd, chunk, left < (off_t)sizeof(chunk) ? (size_t)left : sizeof(chunk));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -EIO : 0;
			break;
		}
		feed(r, chunk, (size_t)got);
		left -= got;
	}
	close(fd);
	if (rc)
		snprintf(why, why_len, "NCCL log %s: read error", path);
	return rc;
}

int gdrb_nccl_log_read(const char *path, const struct gdrb_nccl_owner *who, struct gdrb_nccl_links *l,
		       char *why, size_t why_len)
{
	struct reader r = { .l = l, .who = who };
	long long from = 0;
	int rc;

	gdrb_nccl_links_init(l);
	rc = read_file(path, &r, &from, why, why_len);
	if (!rc || rc == -EIO)
		finish(&r);
	return rc;
}

void gdrb_nccl_tuning_init(struct gdrb_nccl_tuning *t)
{
	memset(t, 0, sizeof(*t));
}

void gdrb_nccl_tuning_parse_mem(const void *data, size_t len, const struct gdrb_nccl_owner *who,
				struct gdrb_nccl_tuning *t)
{
	struct gdrb_nccl_links scratch;
	struct reader r = { .l = &scratch, .t = t, .who = who };

	gdrb_nccl_links_init(&scratch);
	feed(&r, data, len);
	finish(&r);
}

int gdrb_nccl_tuning_read(const char *path, const struct gdrb_nccl_owner *who, long long *from,
			  struct gdrb_nccl_tuning *t, char *why, size_t why_len)
{
	struct gdrb_nccl_links scratch;
	struct reader r = { .l = &scratch, .t = t, .who = who };
	long long start = *from;
	int rc;

	gdrb_nccl_links_init(&scratch);
	rc = read_file(path, &r, from, why, why_len);
	/* A line NCCL is still writing is read next time, whole. */
	if (!rc)
		*from += (long long)r.done;
	else
		*from = start;
	return rc;
}
