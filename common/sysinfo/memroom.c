/* SPDX-License-Identifier: BSD-3-Clause */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdrb_memroom.h"
#include "gdrb_sysfs.h"

/* cgroup v1 writes "no limit" as the largest page multiple of a signed 64-bit. */
#define V1_UNLIMITED (UINT64_C(1) << 62)

int gdrb_meminfo_available(const char *meminfo, uint64_t *bytes)
{
	const char *p = meminfo;

	while (p && *p) {
		unsigned long long kib;

		if (sscanf(p, "MemAvailable: %llu kB", &kib) == 1) {
			if (kib > UINT64_MAX / 1024)
				return -1;
			*bytes = (uint64_t)kib * 1024;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/* A cgroup file holding one number ("max" is no limit): 0, or -1. */
static int read_u64(const char *path, uint64_t *v)
{
	char text[64], *end;
	unsigned long long n;

	if (gdrb_read_text(path, text, sizeof(text)) || text[0] < '0' || text[0] > '9')
		return -1;
	errno = 0;
	n = strtoull(text, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -1;
	*v = n;
	return 0;
}

/* Keep the tightest room: limit minus usage of the cgroup at dir. */
static void take(const char *dir, const char *limit_file, const char *usage_file,
		 const char *name, uint64_t *room, char *where, size_t len, bool *found)
{
	char path[4096];
	uint64_t limit, usage;

	if (gdrb_path(path, sizeof(path), dir, "%s", limit_file) || read_u64(path, &limit) ||
	    limit >= V1_UNLIMITED)
		return;
	if (gdrb_path(path, sizeof(path), dir, "%s", usage_file) || read_u64(path, &usage))
		usage = 0;
	limit = usage < limit ? limit - usage : 0;
	if (*found && limit >= *room)
		return;
	*room = limit;
	*found = true;
	snprintf(where, len, "%s", *name ? name : "/");
}

/* The v2 cgroup and each of its ancestors, or the v1 memory cgroup. */
static void walk(const char *mount, const char *cgroup, bool v2, uint64_t *room, char *where,
		 size_t len, bool *found)
{
	char name[1024], dir[4096];
	char *slash;

	snprintf(name, sizeof(name), "%s", cgroup);
	for (;;) {
		while (*name && name[strlen(name) - 1] == '/')
			name[strlen(name) - 1] = '\0';
		if ((size_t)snprintf(dir, sizeof(dir), "%s%s", mount, name) >= sizeof(dir))
			return;
		if (v2)
			take(dir, "memory.max", "memory.current", name, room, where, len, found);
		else
			take(dir, "memory.limit_in_bytes", "memory.usage_in_bytes", name, room, where,
			     len, found);
		slash = strrchr(name, '/');
		if (!*name || !slash)
			return;
		*slash = '\0';
	}
}

int gdrb_cgroup_room(const char *self, const char *cgroup_root, uint64_t *room, char *where,
		     size_t len)
{
	const char *line = self;
	bool found = false;
	char mount[4096];

	while (line && *line) {
		const char *eol = strchr(line, '\n'), *c1 = strchr(line, ':'), *c2;
		char cgroup[1024], ctrl[256];
		size_t n;

		n = eol ? (size_t)(eol - line) : strlen(line);
		c2 = c1 && c1 < line + n ? memchr(c1 + 1, ':', n - (size_t)(c1 + 1 - line)) : NULL;
		if (c2 && (size_t)(c2 - c1 - 1) < sizeof(ctrl) &&
		    (size_t)(line + n - c2 - 1) < sizeof(cgroup)) {
			memcpy(ctrl, c1 + 1, (size_t)(c2 - c1 - 1));
			ctrl[c2 - c1 - 1] = '\0';
			memcpy(cgroup, c2 + 1, (size_t)(line + n - c2 - 1));
			cgroup[line + n - c2 - 1] = '\0';
			if (!ctrl[0] && !strncmp(line, "0:", 2)) {
				/* v2; hybrid systems mount it at unified/ */
				snprintf(mount, sizeof(mount), "%s/unified/cgroup.controllers", cgroup_root);
				if (gdrb_exists(mount))
					snprintf(mount, sizeof(mount), "%s/unified", cgroup_root);
				else
					snprintf(mount, sizeof(mount), "%s", cgroup_root);
				walk(mount, cgroup, true, room, where, len, &found);
			} else {
				char list[258];

				snprintf(list, sizeof(list), ",%s,", ctrl);
				if (strstr(list, ",memory,")) {
					snprintf(mount, sizeof(mount), "%s/memory", cgroup_root);
					walk(mount, cgroup, false, room, where, len, &found);
				}
			}
		}
		line = eol ? eol + 1 : NULL;
	}
	return found ? 0 : -1;
}

void gdrb_mem_room(const char *procfs_root, const char *cgroup_root, struct gdrb_mem_room *r)
{
	char path[4096], text[8192];

	memset(r, 0, sizeof(*r));
	if (!gdrb_path(path, sizeof(path), procfs_root, "meminfo") &&
	    !gdrb_read_text(path, text, sizeof(text)))
		r->have_available = gdrb_meminfo_available(text, &r->available) == 0;
	if (!gdrb_path(path, sizeof(path), procfs_root, "self/cgroup") &&
	    !gdrb_read_text(path, text, sizeof(text)))
		r->have_cgroup = gdrb_cgroup_room(text, cgroup_root, &r->cgroup_room, r->cgroup,
						  sizeof(r->cgroup)) == 0;
}

uint64_t gdrb_mem_room_bytes(const struct gdrb_mem_room *r)
{
	uint64_t room = UINT64_MAX;

	if (r->have_available)
		room = r->available;
	if (r->have_cgroup && r->cgroup_room < room)
		room = r->cgroup_room;
	return room;
}
