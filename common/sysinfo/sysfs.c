/* SPDX-License-Identifier: BSD-3-Clause */
/* strverscmp */
#define _GNU_SOURCE 1
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gdrb_sysfs.h"

int gdrb_path(char *buf, size_t len, const char *root, const char *fmt, ...)
{
	va_list ap;
	int n, m;

	n = snprintf(buf, len, "%s/", root);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - (size_t)n)
		return -ENAMETOOLONG;
	return 0;
}

int gdrb_read_bin(const char *path, void *buf, size_t len, size_t *got)
{
	struct stat st;
	size_t done = 0;
	int fd;

	*got = 0;
	/*
	 * A FIFO or device planted in a tree must not block the reader or be read:
	 * sysfs and procfs attributes are regular files, and none is a link.
	 */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0)
		st.st_mode = 0;         /* unknown: refused as not a regular file */
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			close(fd);
			*got = done;
			return -err;
		}
		if (r == 0)
			break;
		done += (size_t)r;
	}
	close(fd);
	*got = done;
	return 0;
}

int gdrb_read_text(const char *path, char *buf, size_t len)
{
	size_t got;
	int rc;

	if (len == 0)
		return -EINVAL;
	rc = gdrb_read_bin(path, buf, len - 1, &got);
	buf[got] = '\0';
	if (rc)
		return rc;
	while (got > 0 && isspace((unsigned char)buf[got - 1]))
		buf[--got] = '\0';
	return 0;
}

int gdrb_read_long(const char *path, long *value)
{
	char text[64], *end;
	long v;
	int rc;

	rc = gdrb_read_text(path, text, sizeof(text));
	if (rc)
		return rc;
	errno = 0;
	v = strtol(text, &end, 0);
	if (errno || end == text || *end != '\0')
		return -EINVAL;
	*value = v;
	return 0;
}

bool gdrb_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

bool gdrb_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int gdrb_realpath_under(const char *root, const char *path, char *rel, size_t len)
{
	char root_real[PATH_MAX], real[PATH_MAX];
	size_t n;

	if (!realpath(root, root_real) || !realpath(path, real))
		return -errno;
	n = strlen(root_real);
	/* "/" as root: everything is under it. */
	if (n == 1)
		n = 0;
	if (strncmp(real, root_real, n) != 0 || (real[n] != '/' && real[n] != '\0'))
		return -EXDEV;
	if (snprintf(rel, len, "%s", real[n] == '/' ? real + n + 1 : real + n) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

int gdrb_link_name(const char *path, char *buf, size_t len)
{
	char target[PATH_MAX];
	const char *slash;
	ssize_t n;

	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	slash = strrchr(target, '/');
	if (snprintf(buf, len, "%s", slash ? slash + 1 : target) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

int gdrb_dir_list(const char *path, struct gdrb_dir *dir)
{
	struct dirent *e;
	size_t cap = 0;
	DIR *d;

	dir->names = NULL;
	dir->n = 0;
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (dir->n == cap) {
			size_t ncap = cap ? 2 * cap : 16;
			char **names = realloc(dir->names, ncap * sizeof(*names));

			if (!names)
				goto err_nomem;
			dir->names = names;
			cap = ncap;
		}
		dir->names[dir->n] = strdup(e->d_name);
		if (!dir->names[dir->n])
			goto err_nomem;
		dir->n++;
	}
	closedir(d);
	if (dir->n)
		qsort(dir->names, dir->n, sizeof(*dir->names), name_cmp);
	return 0;

err_nomem:
	closedir(d);
	gdrb_dir_free(dir);
	return -ENOMEM;
}

void gdrb_dir_free(struct gdrb_dir *dir)
{
	size_t i;

	for (i = 0; i < dir->n; i++)
		free(dir->names[i]);
	free(dir->names);
	dir->names = NULL;
	dir->n = 0;
}
