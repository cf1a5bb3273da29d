/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small readers for sysfs and procfs files under a root directory, so that
 * the same code reads the live /sys and /proc or a fixture tree in tests.
 * Every function returns 0 or a negative errno and never logs: a missing
 * file is an answer here, not an error.
 */
#ifndef GDRB_SYSFS_H
#define GDRB_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Format ROOT/REL into buf; -ENAMETOOLONG when it does not fit. */
int gdrb_path(char *buf, size_t len, const char *root, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The readers below take a regular file only, opened without blocking and
 * not through a link in its last component: a FIFO, device or socket is
 * -EINVAL, a link -ELOOP, so a planted one never hangs the reader. At most
 * the buffer's length is read.
 */

/* Read a text file, trailing whitespace removed (values like "4: ACTIVE\n"). */
int gdrb_read_text(const char *path, char *buf, size_t len);
/* Read an integer in any C base ("0x10de", "16", "-1"). */
int gdrb_read_long(const char *path, long *value);
/* Read up to len bytes of a binary file (PCI config space); *got is the count. */
int gdrb_read_bin(const char *path, void *buf, size_t len, size_t *got);
bool gdrb_exists(const char *path);
bool gdrb_is_dir(const char *path);

/*
 * Resolve path (following symlinks) and return it relative to root, whose
 * own links are resolved too: "devices/pci0000:00/0000:00:01.0/...".
 * -EXDEV when the target lies outside root.
 */
int gdrb_realpath_under(const char *root, const char *path, char *rel, size_t len);
/* The last component of a symlink's target ("nvidia" for .../driver). */
int gdrb_link_name(const char *path, char *buf, size_t len);

/*
 * Entries of a directory, "." and ".." left out, sorted in version order
 * (mlx5_2 before mlx5_10). Free with gdrb_dir_free. A missing directory is
 * -ENOENT.
 */
struct gdrb_dir {
	char **names;
	size_t n;
};
int gdrb_dir_list(const char *path, struct gdrb_dir *dir);
void gdrb_dir_free(struct gdrb_dir *dir);

#endif
