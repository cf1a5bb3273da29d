/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host memory a run may still allocate on this node: MemAvailable from
 * /proc/meminfo and the room left under the memory cgroup limits of this
 * process (v2 memory.max - memory.current along the path to the root, v1
 * memory.limit_in_bytes - memory.usage_in_bytes), so that a size too large
 * is refused with a line instead of ending in the OOM killer.
 */
#ifndef GDRB_MEMROOM_H
#define GDRB_MEMROOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDRB_PROCFS "/proc"
#define GDRB_CGROUPFS "/sys/fs/cgroup"

struct gdrb_mem_room {
	bool have_available;
	uint64_t available;         /* MemAvailable, bytes */
	bool have_cgroup;           /* a memory cgroup limit applies */
	uint64_t cgroup_room;       /* its limit minus its usage, bytes (the tightest) */
	char cgroup[256];           /* the cgroup that sets it, as /proc/self/cgroup names it */
};

/* MemAvailable of a /proc/meminfo text, in bytes: 0, or -1 where absent. */
int gdrb_meminfo_available(const char *meminfo, uint64_t *bytes);

/*
 * The room under the memory cgroups that /proc/self/cgroup text `self` names,
 * with the cgroup file systems under cgroup_root (/sys/fs/cgroup): 0 with
 * *room and the limiting cgroup's name, or -1 where no limit applies.
 */
int gdrb_cgroup_room(const char *self, const char *cgroup_root, uint64_t *room, char *where,
		     size_t len);

/* Both, from procfs_root (/proc) and cgroup_root (/sys/fs/cgroup). */
void gdrb_mem_room(const char *procfs_root, const char *cgroup_root, struct gdrb_mem_room *r);

/* The smaller of the known figures, or UINT64_MAX where neither is known. */
uint64_t gdrb_mem_room_bytes(const struct gdrb_mem_room *r);

#endif
