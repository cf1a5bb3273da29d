/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the reader of NCCL's INFO log (gdrb_nccl_log.h), shared by its files:
 * nccl_log.c (lines assembled from a file or memory), nccl_log_lines.c (each line's forms),
 * nccl_links.c (the record the lines fill: its name sets, sums and wire form).
 */
#ifndef GDRB_NCCL_LOG_INT_H
#define GDRB_NCCL_LOG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdrb_nccl_log.h"

/* NET/IB device numbers whose name and speed are kept (the connections' NET/IB/<dev>). */
#define IB_DEVS 32

/* What NCCL's IB plugin said about its devices, joined to the connections at the end. */
struct ib_devs {
	char name[IB_DEVS][24];                 /* dev -> "mlx5_0:1" ("Using" line, virtual devices) */
	struct {
		char name[24];
		uint32_t mbps;
	} speed[IB_DEVS];                       /* "mlx5_0:1" -> Mb/s (device lines) */
	unsigned nspeed;
};

/* A count that stops at its largest value rather than wrapping. */
static inline void bump(uint32_t *n)
{
	if (*n < UINT32_MAX)
		(*n)++;
}

static inline uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* The characters of a name NCCL prints ([A-Za-z0-9._-]), and of its version (with '+'). */
bool gdrb_nccl_name_char(char c);
bool gdrb_nccl_version_char(char c);

/*
 * Adds the first n bytes of name to the "+"-joined set of size bytes, cleaned: [A-Za-z0-9._-]
 * kept, anything else '_', a leading '.' too (so no name reads as the "..." that ends a cut
 * set), at most GDRB_NCCL_NAME_MAX bytes. Room for "+..." is always kept, and used once full.
 */
void gdrb_nccl_set_add(char *set, size_t size, const char *name, size_t n);

/*
 * One complete line of len bytes (changed in place): counted into l where it is one of the
 * lines the reader understands and who's own (who NULL: anyone's), into t where t is given
 * and it is a TUNING line, its NET/IB device names and speeds into ib.
 */
void gdrb_nccl_log_line(char *line, size_t len, struct gdrb_nccl_links *l, const struct gdrb_nccl_owner *who,
			struct gdrb_nccl_tuning *t, struct ib_devs *ib);

#endif
