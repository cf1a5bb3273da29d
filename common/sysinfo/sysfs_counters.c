/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA port counters and PCIe state from sysfs (gdrb_sysfs_counters.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_ethtool.h"
#include "gdrb_sysfs.h"
#include "gdrb_sysfs_counters.h"

/* How a file is read and what its text holds. */
enum file_kind {
	KIND_COUNT,     /* one decimal counter */
	KIND_SPEED,     /* "16.0 GT/s PCIe": MT/s */
	KIND_WIDTH,     /* lanes */
	KIND_AER,       /* "NAME COUNT" lines, one counter each */
	KIND_ETHTOOL,   /* a netdev's ethtool statistics: path is its name */
};

struct gdrb_cnt_file {
	char *path;
	size_t first, n;        /* its counters: id[first .. first + n - 1] */
	enum file_kind kind;
	struct gdrb_ethtool eth;        /* KIND_ETHTOOL: how to ask (eth.root: root, owned) */
	char *root;
};

/* A counter's text is 20 digits and a newline at most; a speed's about 16 bytes. */
#define VALUE_TEXT 32
/* An AER file is some 20 lines of "NAME COUNT". */
#define AER_TEXT 4096
#define MAX_WIDTH 64
#define MAX_MTS 1000000         /* 1000 GT/s: past any PCIe generation */

static const struct {
	const char *name;
	enum gdrb_cnt_class cls;
} classes[] = {
#define GDRB_COUNTER(name, cls, unit) { #name, GDRB_CNT_##cls },
#include "counter_classes.def"
#undef GDRB_COUNTER
};

enum gdrb_cnt_class gdrb_cnt_classify(const char *name)
{
	size_t i;

	/* mlx5's switchdev representors: the counter of the uplink's name. */
	if (!strncmp(name, "vport_", 6))
		name += 6;
	for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (!strcmp(classes[i].name, name))
			return classes[i].cls;
	return GDRB_CNT_OTHER;
}

static const struct {
	const char *name;
	enum gdrb_cnt_class cls;
} ethtool_classes[] = {
#define GDRB_ETHTOOL_COUNTER(name, cls, unit) { #name, GDRB_CNT_##cls },
#include "ethtool_classes.def"
#undef GDRB_ETHTOOL_COUNTER
};

/* name against a table name whose "prioN" stands for "prio0" .. "prio7". */
static bool ethtool_match(const char *pattern, const char *name)
{
	while (*pattern) {
		if (!strncmp(pattern, "prioN", 5)) {
			if (strncmp(name, "prio", 4) || name[4] < '0' || name[4] > '7')
				return false;
			pattern += 5;
			name += 5;
			continue;
		}
		if (*pattern++ != *name++)
			return false;
	}
	return *name == '\0';
}

bool gdrb_cnt_ethtool_classify(const char *name, enum gdrb_cnt_class *cls)
{
	size_t i;

	for (i = 0; i < sizeof(ethtool_classes) / sizeof(ethtool_classes[0]); i++)
		if (ethtool_match(ethtool_classes[i].name, name)) {
			*cls = ethtool_classes[i].cls;
			return true;
		}
	return false;
}

const char *gdrb_cnt_class_name(unsigned cls)
{
	static const char *const names[] = { "error", "congestion", "traffic", "other", "link" };

	return cls < GDRB_CNT_NCLASSES ? names[cls] : "other";
}

void gdrb_cnt_name(char *dst, size_t len, const char *src)
{
	size_t i;

	if (!len)
		return;
	for (i = 0; src[i] && i + 1 < len; i++) {
		char ch = src[i];

		dst[i] = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
			 ch == '_' || ch == '.' || ch == ':' || ch == '-' ? ch : '?';
	}
	dst[i] = '\0';
	/* Cut: the last character says so, so that a cut name never passes for a whole one. */
	if (src[i] && i > 0)
		dst[i - 1] = '~';
}

int gdrb_cnt_parse_u64(const char *text, uint64_t *value)
{
	uint64_t v = 0;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*value = v;
	return 0;
}

/* "2.5 GT/s PCIe", "16.0 GT/s", "8 GT/s" -> MT/s; "Unknown" and anything else: -EINVAL. */
static int parse_speed(const char *text, uint64_t *mts)
{
	uint64_t whole = 0, frac = 0, scale = 1000;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > MAX_MTS / 1000)
			return -EINVAL;
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale > 1) {
				scale /= 10;
				frac += (uint64_t)(*p - '0') * scale;
			}
		}
	if (strncmp(p, " GT/s", 5) || whole * 1000 + frac == 0)
		return -EINVAL;
	*mts = whole * 1000 + frac;
	return 0;
}

size_t gdrb_cnt_parse_aer(const char *text, char (*names)[GDRB_CNT_NAME_LEN], uint64_t *counts,
			  size_t max)
{
	const char *line = text;
	size_t n = 0;

	while (*line && n < max) {
		size_t len = strcspn(line, "\n"), name_len = 0;
		char value[VALUE_TEXT];

		while (name_len < len && ((line[name_len] >= 'a' && line[name_len] <= 'z') ||
					  (line[name_len] >= 'A' && line[name_len] <= 'Z') ||
					  (line[name_len] >= '0' && line[name_len] <= '9') ||
					  line[name_len] == '_'))
			name_len++;
		if (name_len > 0 && name_len < GDRB_CNT_NAME_LEN && name_len < len && line[name_len] == ' ' &&
		    len - name_len - 1 < sizeof(value)) {
			memcpy(value, line + name_len + 1, len - name_len - 1);
			value[len - name_len - 1] = '\0';
			if (gdrb_cnt_parse_u64(value, &counts[n]) == 0) {
				memcpy(names[n], line, name_len);
				names[n][name_len] = '\0';
				n++;
			}
		}
		line += len + (line[len] == '\n');
	}
	return n;
}

/*
 * The text of a sysfs file of at most len - 1 bytes, trailing whitespace
 * removed; -EFBIG where it fills the buffer (more than a value of its kind).
 */
static int read_small(const char *path, char *buf, size_t len)
{
	size_t got;
	int rc = gdrb_read_bin(path, buf, len - 1, &got);

	buf[got] = '\0';
	if (rc)
		return rc;
	if (got == len - 1)
		return -EFBIG;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return 0;
}

/* Room for one more of n elements: an array doubles each time n reaches a power of two. */
static int grow(void **arr, size_t n, size_t elem)
{
	void *p;

	if (n & (n - 1))
		return 0;
	p = realloc(*arr, (n ? 2 * n : 1) * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	return 0;
}

static struct gdrb_cnt_id *add_id(struct gdrb_cnt_set *s, const char *device, const char *port,
				  const char *source, const char *name, enum gdrb_cnt_class cls, bool pcie)
{
	struct gdrb_cnt_id *id;

	if (grow((void **)&s->id, s->n, sizeof(*s->id)))
		return NULL;
	id = &s->id[s->n++];
	memset(id, 0, sizeof(*id));
	gdrb_cnt_name(id->device, sizeof(id->device), device);
	gdrb_cnt_name(id->port, sizeof(id->port), port);
	snprintf(id->source, sizeof(id->source), "%s", source);
	gdrb_cnt_name(id->name, sizeof(id->name), name);
	id->cls = (uint8_t)cls;
	id->pcie = pcie;
	return id;
}

static int add_file(struct gdrb_cnt_set *s, const char *path, enum file_kind kind, size_t first)
{
	struct gdrb_cnt_file *f;

	if (grow((void **)&s->files, s->nfiles, sizeof(*s->files)))
		return -ENOMEM;
	f = &s->files[s->nfiles];
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->first = first;
	f->n = s->n - first;
	f->kind = kind;
	f->eth = (struct gdrb_ethtool){ NULL, NULL };
	f->root = NULL;
	s->nfiles++;
	return 0;
}

/* One counter read from one file. */
static int add_one(struct gdrb_cnt_set *s, const char *path, enum file_kind kind, const char *device,
		   const char *port, const char *source, const char *name, enum gdrb_cnt_class cls,
		   bool pcie)
{
	size_t first = s->n;

	if (!add_id(s, device, port, source, name, cls, pcie))
		return -ENOMEM;
	if (add_file(s, path, kind, first)) {
		s->n--;
		return -ENOMEM;
	}
	return 0;
}

static int add_dir(struct gdrb_cnt_set *s, const char *root, const char *dev, unsigned port,
		   const char *source)
{
	char path[PATH_MAX], port_text[16];
	struct gdrb_dir dir;
	size_t i;
	int rc;

	rc = gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%u/%s", dev, port, source);
	if (rc)
		return rc;
	if (gdrb_dir_list(path, &dir))
		return 0;       /* none: rxe has no counters/, siw neither */
	snprintf(port_text, sizeof(port_text), "%u", port);
	for (i = 0; i < dir.n && !rc; i++) {
		if (i >= GDRB_CNT_DIR_MAX) {
			s->dropped += dir.n - i;
			break;
		}
		rc = gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%u/%s/%s", dev, port,
			       source, dir.names[i]);
		if (!rc)
			rc = add_one(s, path, KIND_COUNT, dev, port_text, source, dir.names[i],
				     gdrb_cnt_classify(dir.names[i]), false);
	}
	gdrb_dir_free(&dir);
	return rc;
}

int gdrb_cnt_add_port(struct gdrb_cnt_set *s, const char *root, const char *dev, unsigned port)
{
	int rc = add_dir(s, root, dev, port, "counters");

	if (!rc)
		rc = add_dir(s, root, dev, port, "hw_counters");
	if (!rc)
		s->ports++;
	return rc;
}

/* A link attribute of bdf, as the counter `name` of device's row for `row_bdf`. */
static int add_link(struct gdrb_cnt_set *s, const char *root, const char *device, const char *row_bdf,
		    const char *bdf, const char *attr, const char *name)
{
	char path[PATH_MAX];
	int rc = gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s/%s", bdf, attr);

	if (rc || !gdrb_exists(path))
		return rc;
	return add_one(s, path, strstr(attr, "speed") ? KIND_SPEED : KIND_WIDTH, device, row_bdf, "link",
		       name, GDRB_CNT_LINK, true);
}

/* The lines of an AER file as they are now, one counter each. */
static int add_aer(struct gdrb_cnt_set *s, const char *root, const char *device, const char *bdf,
		   const char *file)
{
	char path[PATH_MAX], text[AER_TEXT], names[GDRB_CNT_AER_MAX][GDRB_CNT_NAME_LEN];
	uint64_t counts[GDRB_CNT_AER_MAX];
	size_t n, i, first = s->n;
	int rc = gdrb_path(path, sizeof(path), root, "bus/pci/devices/%s/%s", bdf, file);

	if (rc || read_small(path, text, sizeof(text)))
		return rc;
	n = gdrb_cnt_parse_aer(text, names, counts, GDRB_CNT_AER_MAX);
	/* The kernel's TOTAL_ line sums the others: recorded, never counted twice. */
	for (i = 0; i < n; i++)
		if (!add_id(s, device, bdf, file, names[i],
			    strncmp(names[i], "TOTAL_", 6) ? GDRB_CNT_ERROR : GDRB_CNT_OTHER, true))
			break;
	if (i == n && (!n || add_file(s, path, KIND_AER, first) == 0))
		return 0;
	s->n = first;
	return -ENOMEM;
}

int gdrb_cnt_add_pci(struct gdrb_cnt_set *s, const char *root, const char *device, const char *bdf,
		     const char *upstream)
{
	static const char *const attrs[] = { "current_link_speed", "max_link_speed", "current_link_width",
					     "max_link_width" };
	static const char *const aer[] = { "aer_dev_correctable", "aer_dev_nonfatal", "aer_dev_fatal" };
	char name[64];
	size_t i;
	int rc = 0;

	for (i = 0; i < 4 && !rc; i++)
		rc = add_link(s, root, device, bdf, bdf, attrs[i], attrs[i]);
	for (i = 1; i < 4 && !rc && upstream; i += 2) {
		snprintf(name, sizeof(name), "upstream_%s", attrs[i]);
		rc = add_link(s, root, device, bdf, upstream, attrs[i], name);
	}
	for (i = 0; i < 3 && !rc; i++)
		rc = add_aer(s, root, device, bdf, aer[i]);
	if (!rc)
		s->pci++;
	return rc;
}

void gdrb_cnt_port_netdev(const char *root, const char *dev, unsigned port, char *buf, size_t len)
{
	char path[PATH_MAX], text[64];
	struct gdrb_dir dir;

	buf[0] = '\0';
	if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%u/link_layer", dev, port) ||
	    gdrb_read_text(path, text, sizeof(text)) || strcmp(text, "Ethernet"))
		return;
	/* The first GID's netdev (every RoCE port has it while its netdev is up), else the function's. */
	if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/ports/%u/gid_attrs/ndevs/0", dev, port) == 0 &&
	    gdrb_read_text(path, text, sizeof(text)) == 0 && text[0]) {
		snprintf(buf, len, "%s", text);
		return;
	}
	if (gdrb_path(path, sizeof(path), root, "class/infiniband/%s/device/net", dev) == 0 &&
	    gdrb_dir_list(path, &dir) == 0) {
		if (dir.n)
			snprintf(buf, len, "%s", dir.names[0]);
		gdrb_dir_free(&dir);
	}
}

int gdrb_cnt_add_netdev(struct gdrb_cnt_set *s, const struct gdrb_ethtool *e, const char *ifname,
			const char *device, unsigned port, size_t *found)
{
	char (*names)[GDRB_ETHTOOL_NAME_LEN], port_text[16];
	uint64_t *values;
	size_t n, i, first = s->n, kept = 0;
	int rc = gdrb_ethtool_stats(e, ifname, &names, &values, &n);

	*found = n;
	if (rc)
		return rc;
	snprintf(port_text, sizeof(port_text), "%u", port);
	for (i = 0; i < n; i++) {
		enum gdrb_cnt_class cls;

		if (!gdrb_cnt_ethtool_classify(names[i], &cls))
			continue;
		if (kept++ >= GDRB_CNT_DIR_MAX) {
			s->dropped++;
			continue;
		}
		if (!add_id(s, device, port_text, "ethtool", names[i], cls, false)) {
			rc = -ENOMEM;
			break;
		}
	}
	free(names);
	free(values);
	if (!rc && s->n > first && add_file(s, ifname, KIND_ETHTOOL, first) == 0) {
		struct gdrb_cnt_file *f = &s->files[s->nfiles - 1];

		f->eth = *e;
		f->root = e->root ? strdup(e->root) : NULL;
		f->eth.root = f->root;
		if (!e->root || f->root)
			return 0;
		free(f->path);
		s->nfiles--;
		rc = -ENOMEM;
	} else if (!rc && s->n > first) {
		rc = -ENOMEM;
	}
	if (rc)
		s->n = first;
	return rc;
}

/* A netdev's statistics, each found by its name among those the driver has now. */
static void read_ethtool(const struct gdrb_cnt_set *s, const struct gdrb_cnt_file *f, uint64_t *value,
			 uint8_t *state)
{
	char (*names)[GDRB_ETHTOOL_NAME_LEN];
	uint64_t *values;
	size_t n, i, j;
	int rc = gdrb_ethtool_stats(&f->eth, f->path, &names, &values, &n);

	for (i = f->first; i < f->first + f->n; i++) {
		/* The netdev gone, or a statistic the driver no longer has: vanished; a failed ask: unreadable. */
		state[i] = rc == -ENODEV || !rc ? GDRB_CNT_READ_VANISHED : GDRB_CNT_READ_UNREADABLE;
		value[i] = 0;
		for (j = 0; j < n && !rc; j++)
			if (!strcmp(names[j], s->id[i].name)) {
				value[i] = values[j];
				state[i] = GDRB_CNT_READ_OK;
				break;
			}
	}
	free(names);
	free(values);
}

/* The counters of an AER file, each found by its name among the file's lines now. */
static void read_aer(const struct gdrb_cnt_set *s, const struct gdrb_cnt_file *f, uint64_t *value,
		     uint8_t *state)
{
	char text[AER_TEXT], names[GDRB_CNT_AER_MAX][GDRB_CNT_NAME_LEN];
	uint64_t counts[GDRB_CNT_AER_MAX];
	size_t n = 0, i, j;
	int rc = read_small(f->path, text, sizeof(text));

	if (!rc)
		n = gdrb_cnt_parse_aer(text, names, counts, GDRB_CNT_AER_MAX);
	for (i = f->first; i < f->first + f->n; i++) {
		state[i] = rc == -ENOENT ? GDRB_CNT_READ_VANISHED : GDRB_CNT_READ_UNREADABLE;
		for (j = 0; j < n && !rc; j++)
			if (!strcmp(names[j], s->id[i].name)) {
				value[i] = counts[j];
				state[i] = GDRB_CNT_READ_OK;
				break;
			}
	}
}

void gdrb_cnt_read(const struct gdrb_cnt_set *s, uint64_t *value, uint8_t *state)
{
	char text[VALUE_TEXT];
	size_t k;

	for (k = 0; k < s->nfiles; k++) {
		const struct gdrb_cnt_file *f = &s->files[k];
		size_t i = f->first;
		uint64_t v = 0;
		int rc;

		if (f->kind == KIND_AER) {
			read_aer(s, f, value, state);
			continue;
		}
		if (f->kind == KIND_ETHTOOL) {
			read_ethtool(s, f, value, state);
			continue;
		}
		rc = read_small(f->path, text, sizeof(text));
		if (!rc)
			rc = f->kind == KIND_SPEED ? parse_speed(text, &v) : gdrb_cnt_parse_u64(text, &v);
		if (!rc && f->kind == KIND_WIDTH && v > MAX_WIDTH)
			rc = -EINVAL;
		value[i] = rc ? 0 : v;
		state[i] = !rc ? GDRB_CNT_READ_OK : rc == -ENOENT ? GDRB_CNT_READ_VANISHED :
			   GDRB_CNT_READ_UNREADABLE;
	}
}

void gdrb_cnt_set_free(struct gdrb_cnt_set *s)
{
	size_t k;

	for (k = 0; k < s->nfiles; k++) {
		free(s->files[k].path);
		free(s->files[k].root);
	}
	free(s->files);
	free(s->id);
	memset(s, 0, sizeof(*s));
}
