/* SPDX-License-Identifier: BSD-3-Clause */
/* UCX's protocol selection tables read back (gdrb_ucx_proto.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_ucx_proto.h"

const char *const gdrb_ucx_transport_names[GDRB_UCX_COUNT] = {
	"unknown", "cuda_ipc", "rdma-zcopy", "rdma", "host-pipeline", "shm", "tcp", "self",
};

/* The reader's position in the log: the table rows go to, if any. */
struct cursor {
	struct gdrb_ucx_table *cur;
	bool body;              /* a row of cur has been read: a title now starts a new table */
	bool dropping;          /* past GDRB_UCX_TABLES_MAX: this table's rows are not kept */
};

void gdrb_ucx_proto_init(struct gdrb_ucx_proto *p)
{
	memset(p, 0, sizeof(*p));
}

/* Copy at most len - 1 bytes of s[0..n) as printable ASCII ('_' for anything else). */
static void copy_clean(char *dst, size_t len, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i + 1 < len; i++)
		dst[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '_';
	dst[i] = '\0';
}

/* "8248", "256K", "inf" (ucs_memunits_to_str) into *v; false where it is not one. */
static bool parse_units(const char *s, size_t n, uint64_t *v)
{
	static const char suffixes[] = "KMGTPE";
	uint64_t x = 0;
	size_t i = 0;
	const char *at;

	if (n == 3 && !memcmp(s, "inf", 3)) {
		*v = UINT64_MAX;
		return true;
	}
	for (; i < n && isdigit((unsigned char)s[i]); i++) {
		if (x > (UINT64_MAX - 9) / 10)
			return false;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return false;
	if (i + 1 == n && (at = strchr(suffixes, s[i])) && s[i]) {
		unsigned shift = 10u * (unsigned)(at - suffixes + 1);

		if (x > (UINT64_MAX >> shift))
			return false;
		x <<= shift;
		i++;
	}
	*v = x;
	return i == n;
}

/* A range cell, "A..B" or "A" (ucs_memunits_range_str). */
static bool parse_range(const char *s, uint64_t *lo, uint64_t *hi)
{
	const char *dots = strstr(s, "..");
	size_t n = strlen(s);

	if (!dots)
		return parse_units(s, n, lo) && *lo != UINT64_MAX && (*hi = *lo, true);
	return parse_units(s, (size_t)(dots - s), lo) &&
	       parse_units(dots + 2, n - (size_t)(dots - s) - 2, hi) && *lo <= *hi;
}

/* The memory a selection names: "... from host memory", "... into cuda/GPU0". */
static void selection_mem(const char *sel, char *mem, size_t len)
{
	const char *from = NULL, *p, *end;

	for (p = sel; (p = strstr(p, " from ")); p++)
		from = p + 6;
	for (p = sel; !from && (p = strstr(p, " into ")); p++)
		from = p + 6;
	if (!from)
		return;
	/* The last word: a data type ("iov[2] ") may come first. */
	for (p = from; (end = strchr(p, ' ')) && strncmp(end, " memory", 7); p = end + 1)
		;
	end = p + strcspn(p, " /");
	copy_clean(mem, len, p, (size_t)(end - p));
}

static void title_cell(struct cursor *k, const char *cell)
{
	struct gdrb_ucx_table *t = k->cur;

	size_t n = strlen(cell);

	if (!t)
		return;
	/* The endpoint's line: "<context> self cfg#0", "<context> intra-node cfg#1". */
	if (n > 9 && strstr(cell, " cfg#") && !strstr(cell, " from ") && !strstr(cell, " into ")) {
		t->self = strstr(cell, " self cfg#") != NULL;
		return;
	}
	if (!strstr(cell, " from ") && !strstr(cell, " into "))
		return;
	t->op = strstr(cell, "ucp_tag_send") || !strncmp(cell, "tagged message", 14) ? GDRB_UCX_OP_TAG :
		!strncmp(cell, "rendezvous data", 15) ? GDRB_UCX_OP_RNDV : GDRB_UCX_OP_OTHER;
	selection_mem(cell, t->mem, sizeof(t->mem));
}

/* A title row: a new table when the last one has rows already (or none is open). */
static void title_row(struct gdrb_ucx_proto *p, struct cursor *k)
{
	if (k->cur && !k->body && !k->dropping)
		return;
	k->body = false;
	k->dropping = p->ntables >= GDRB_UCX_TABLES_MAX;
	if (k->dropping) {
		k->cur = NULL;
		p->skipped++;
		return;
	}
	k->cur = &p->t[p->ntables++];
	memset(k->cur, 0, sizeof(*k->cur));
}

#define CELLS_MAX 6

/* One "| a | b | c |" line: its cells trimmed, in place; how many. */
static size_t split_cells(char *line, char **cells)
{
	char *end = strrchr(line, '|'), *p = line + 1;
	size_t n = 0;

	if (end == line)
		return 0;
	*end = '\0';
	while (n < CELLS_MAX) {
		char *bar = strchr(p, '|'), *e;

		if (bar)
			*bar = '\0';
		while (*p == ' ')
			p++;
		for (e = p + strlen(p); e > p && e[-1] == ' '; e--)
			;
		*e = '\0';
		cells[n++] = p;
		if (!bar)
			break;
		p = bar + 1;
	}
	return n;
}

static void table_line(struct gdrb_ucx_proto *p, struct cursor *k, char *line)
{
	char *cells[CELLS_MAX];
	size_t n = split_cells(line, cells), i, at = 0;
	struct gdrb_ucx_row r;

	if (!n)
		return;
	/* With UCX_PROTO_INFO=used a count comes before the range. */
	if (n >= 4 && cells[0][0] && strspn(cells[0], "0123456789") == strlen(cells[0]))
		at = 1;
	if (n >= at + 3 && parse_range(cells[at], &r.lo, &r.hi)) {
		if (!k->cur || k->dropping || k->cur->nrows >= GDRB_UCX_ROWS_MAX) {
			p->skipped++;
			return;
		}
		copy_clean(r.desc, sizeof(r.desc), cells[at + 1], strlen(cells[at + 1]));
		copy_clean(r.config, sizeof(r.config), cells[at + 2], strlen(cells[at + 2]));
		k->cur->rows[k->cur->nrows++] = r;
		k->body = true;
		return;
	}
	if (!strcmp(cells[0], "Range") || !strcmp(cells[0], "Count"))
		return;
	title_row(p, k);
	for (i = 0; i < n; i++)
		title_cell(k, cells[i]);
}

/*
 * Strip UCX's "[time] [host:pid:tid]" prefix: the rest of the line, or NULL where
 * the line is another process's (pid > 0 and not its pid, or no prefix at all).
 */
static char *own_text(char *line, long pid)
{
	char *close, *colon, *end;
	long who;

	if (line[0] != '[') {
		if (pid > 0)
			return NULL;
		return line[0] == '#' ? line + 1 : line;
	}
	close = strstr(line, "] [");
	if (!close || !(end = strchr(close + 3, ']')))
		return pid > 0 ? NULL : line;
	*end = '\0';
	colon = strrchr(close + 3, ':');
	if (colon)
		*colon = '\0';
	colon = strrchr(close + 3, ':');
	who = colon ? strtol(colon + 1, NULL, 10) : -1;
	if (pid > 0 && who != pid)
		return NULL;
	return end + 1;
}

static void parse_line(struct gdrb_ucx_proto *p, struct cursor *k, char *line, long pid)
{
	char *text = own_text(line, pid);

	p->lines++;
	if (!text) {
		p->foreign++;
		return;
	}
	text += strspn(text, " \t");
	text[strcspn(text, "\r")] = '\0';
	if (text[0] == '+')
		return;
	if (text[0] == '|') {
		table_line(p, k, text);
		return;
	}
	k->cur = NULL;
	k->dropping = false;
	if (text[0])
		p->other++;
}

void gdrb_ucx_proto_parse_mem(struct gdrb_ucx_proto *p, const char *data, size_t len, long pid)
{
	struct cursor k = { 0 };
	char line[GDRB_UCX_LINE_MAX];
	size_t at = 0;

	while (at < len) {
		const char *nl = memchr(data + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : len - at;

		/* Too long, a NUL in it, or the last line cut off (UCX is writing it). */
		if (n >= sizeof(line) || memchr(data + at, '\0', n) || !nl) {
			p->lines++;
			p->skipped++;
		} else {
			memcpy(line, data + at, n);
			line[n] = '\0';
			parse_line(p, &k, line, pid);
		}
		at += n + 1;
	}
}

int gdrb_ucx_proto_read_fd(struct gdrb_ucx_proto *p, int fd, long pid, char *why, size_t len)
{
	struct stat st;
	size_t size, got = 0;
	char *data;

	gdrb_ucx_proto_init(p);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "UCX's log is not a regular file");
		return -EINVAL;
	}
	size = st.st_size > GDRB_UCX_LOG_MAX ? GDRB_UCX_LOG_MAX : (size_t)st.st_size;
	data = malloc(size ? size : 1);
	if (!data) {
		snprintf(why, len, "no memory to read UCX's log (%zu bytes)", size);
		return -ENOMEM;
	}
	while (got < size) {
		ssize_t n = pread(fd, data + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : EIO;

			snprintf(why, len, "UCX's log could not be read: %s", strerror(err));
			free(data);
			return -err;
		}
		got += (size_t)n;
	}
	gdrb_ucx_proto_parse_mem(p, data, got, pid);
	free(data);
	return 0;
}

/* The family of the UCT transports a row's config names ("cuda_ipc/cuda", "rc_mlx5/mlx5_0:1"). */
enum family { FAM_NONE, FAM_CUDA_IPC, FAM_SHM, FAM_RDMA, FAM_TCP, FAM_SELF, FAM_COPY, FAM_OTHER, FAM_MIXED };

static enum family family_of(const char *tl, size_t n)
{
	static const struct {
		const char *name;
		bool prefix;
		enum family f;
	} names[] = {
		{ "cuda_ipc", false, FAM_CUDA_IPC }, { "sysv", false, FAM_SHM }, { "posix", false, FAM_SHM },
		{ "cma", false, FAM_SHM }, { "knem", false, FAM_SHM }, { "xpmem", false, FAM_SHM },
		{ "rc", true, FAM_RDMA }, { "dc", true, FAM_RDMA }, { "ud", true, FAM_RDMA },
		{ "gga", true, FAM_RDMA }, { "srd", true, FAM_RDMA }, { "tcp", false, FAM_TCP },
		{ "self", false, FAM_SELF }, { "cuda_copy", false, FAM_COPY }, { "gdr_copy", false, FAM_COPY },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t m = strlen(names[i].name);

		if (n == m && !memcmp(tl, names[i].name, m))
			return names[i].f;
		if (names[i].prefix && n > m && !memcmp(tl, names[i].name, m) && tl[m] == '_')
			return names[i].f;
	}
	return FAM_OTHER;
}

static enum family config_family(const char *config)
{
	enum family f = FAM_NONE;
	const char *slash;

	for (slash = strchr(config, '/'); slash; slash = strchr(slash + 1, '/')) {
		const char *w = slash;
		enum family g;

		while (w > config && (isalnum((unsigned char)w[-1]) || w[-1] == '_'))
			w--;
		if (w == slash)
			continue;
		g = family_of(w, (size_t)(slash - w));
		if (f != FAM_NONE && g != f)
			return FAM_MIXED;
		f = g;
	}
	return f;
}

enum gdrb_ucx_transport gdrb_ucx_row_transport(const char *mem, const char *desc, const char *config)
{
	enum family f = config_family(config);
	bool gpu = mem[0] && strcmp(mem, "host") != 0;
	/* The buffer itself goes on the wire, or a peer maps it ("copy from mapped remote memory"). */
	bool zcopy = strstr(desc, "zero-copy") || strstr(desc, "mapped remote memory") ||
		     strstr(desc, "copy to attached");

	if (strstr(desc, "frag host"))
		return GDRB_UCX_HOST_PIPELINE;
	if (f == FAM_CUDA_IPC)
		return gpu ? GDRB_UCX_CUDA_IPC : GDRB_UCX_UNKNOWN;
	if (gpu) {
		if (f == FAM_NONE || f == FAM_OTHER || f == FAM_MIXED)
			return GDRB_UCX_UNKNOWN;
		if (!zcopy)     /* eager and bounce-buffer rendezvous copy GPU memory into host buffers */
			return GDRB_UCX_HOST_PIPELINE;
		return f == FAM_RDMA ? GDRB_UCX_RDMA_ZCOPY : GDRB_UCX_UNKNOWN;
	}
	switch (f) {
	case FAM_SHM:
		return GDRB_UCX_SHM;
	case FAM_TCP:
		return GDRB_UCX_TCP;
	case FAM_SELF:
		return GDRB_UCX_SELF;
	case FAM_RDMA:
		return zcopy ? GDRB_UCX_RDMA_ZCOPY : GDRB_UCX_RDMA;
	default:
		return GDRB_UCX_UNKNOWN;
	}
}

static bool mem_matches(const char *table, const char *want)
{
	if (!strcmp(want, "host"))
		return !strcmp(table, "host");
	return table[0] && strcmp(table, "host") != 0 && !strncmp(table, want, strlen(want));
}

/* Whether the table's rows count for memory mem and the op (self: a process to itself never does). */
static bool table_counts(const struct gdrb_ucx_table *t, const char *mem, enum gdrb_ucx_op op)
{
	return t->op == op && !t->self && mem_matches(t->mem, mem);
}

static bool covers(const struct gdrb_ucx_row *r, uint64_t size, bool upto)
{
	return r->lo <= size && (upto || r->hi >= size);
}

unsigned gdrb_ucx_transports(const struct gdrb_ucx_proto *p, const char *mem, uint64_t size,
			     bool upto, unsigned *rows)
{
	unsigned bits = 0, seen = 0, i, j;
	bool tags = false, rndv = false;
	enum gdrb_ucx_op op;

	/* A rendezvous table counts where a tagged row goes rendezvous (or no tagged table says). */
	for (i = 0; i < p->ntables && i < GDRB_UCX_TABLES_MAX; i++)
		for (j = 0; table_counts(&p->t[i], mem, GDRB_UCX_OP_TAG) && j < p->t[i].nrows; j++)
			if (covers(&p->t[i].rows[j], size, upto)) {
				tags = true;
				rndv |= strstr(p->t[i].rows[j].desc, "rendezvous") != NULL;
			}
	for (op = GDRB_UCX_OP_TAG; op <= GDRB_UCX_OP_RNDV; op++) {
		if (op == GDRB_UCX_OP_RNDV && tags && !rndv)
			break;
		for (i = 0; i < p->ntables && i < GDRB_UCX_TABLES_MAX; i++) {
			const struct gdrb_ucx_table *t = &p->t[i];

			for (j = 0; table_counts(t, mem, op) && j < t->nrows && j < GDRB_UCX_ROWS_MAX; j++) {
				if (!covers(&t->rows[j], size, upto))
					continue;
				bits |= 1u << gdrb_ucx_row_transport(t->mem, t->rows[j].desc, t->rows[j].config);
				seen++;
			}
		}
	}
	if (rows)
		*rows = seen;
	return bits;
}

void gdrb_ucx_transports_text(unsigned bits, char *buf, size_t len)
{
	size_t at = 0;
	unsigned i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < GDRB_UCX_COUNT; i++) {
		int n;

		if (!(bits & (1u << i)))
			continue;
		n = snprintf(NULL, 0, "%s%s", at ? "+" : "", gdrb_ucx_transport_names[i]);
		if (n < 0 || (size_t)n >= len - at)
			break;  /* what does not fit is left out whole */
		at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? "+" : "", gdrb_ucx_transport_names[i]);
	}
}
