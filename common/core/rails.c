// SPDX-License-Identifier: BSD-3-Clause
/*
 * Which rail each rank runs on: its GPU and the NIC nearest that GPU by PCI
 * distance (gdrb_topo_nearest_nic, the port the verbs layer picks by default),
 * gathered to rank 0 for the header's rails line.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_run.h"
#include "gdrb_topo.h"

/* Entries written out in full; the rest are counted. */
#define RAILS_SHOWN 16

/* What each rank tells rank 0 about its rail. */
struct rail_seat {
	char bus[GDRB_BDF_LEN];         /* sysfs form, lower case; "" without a GPU */
	char nic[64];                   /* "" when no NIC with a PCI function is known */
	char dist[8];                   /* "PIX" ... */
	int gpu;                        /* CUDA index; -1 without a GPU */
	int local_rank;
};

/* This rank's seat: its GPU, and that GPU's nearest NIC where sysfs shows both. */
static void my_seat(const struct gdrb_boot *boot, const struct gdrb_gpu_info *gpu, bool have_gpu,
		    struct rail_seat *me)
{
	const char *root = gdrb_inject()->sysfs_root ? gdrb_inject()->sysfs_root : "/sys";
	struct gdrb_topo topo;
	size_t g;

	memset(me, 0, sizeof(*me));
	me->gpu = -1;
	me->local_rank = boot->local_rank;
	if (!have_gpu || gdrb_pci_bdf_of_bus_id(gpu->pci_bus_id, me->bus))
		return;
	me->gpu = gpu->index;
	if (gdrb_topo_load_parts(root, 0, &topo))
		return;
	for (g = 0; g < topo.ngpus; g++) {
		enum gdrb_topo_dist dist;
		int n;

		if (strcasecmp(topo.gpus[g].pci.bdf, me->bus))
			continue;
		n = gdrb_topo_nearest_nic(&topo, g, false, &dist);
		if (n >= 0 && topo.nics[n].has_pci) {
			snprintf(me->nic, sizeof(me->nic), "%s", topo.nics[n].name);
			snprintf(me->dist, sizeof(me->dist), "%s", gdrb_topo_dist_name(dist));
		}
		break;
	}
	gdrb_topo_free(&topo);
}

static size_t put_seat(char *line, size_t at, size_t len, const char *host,
		       const struct rail_seat *s)
{
	if (at >= len)
		return at;
	if (s->gpu < 0)
		return at + (size_t)snprintf(line + at, len - at, "%s%s local rank %d: no GPU",
					     at ? "; " : "", host, s->local_rank);
	return at + (size_t)snprintf(line + at, len - at, "%s%s local rank %d: GPU %d %s, NIC %s%s%s%s",
				     at ? "; " : "", host, s->local_rank, s->gpu, s->bus,
				     s->nic[0] ? s->nic : "unknown (no NIC on its PCI tree in sysfs)",
				     s->nic[0] ? " (" : "", s->dist, s->nic[0] ? ")" : "");
}

int gdrb_run_rails(struct gdrb_boot *boot, const struct gdrb_gpu_info *gpu, bool have_gpu,
		   char *line, size_t len)
{
	struct rail_seat me, *all = NULL;
	size_t at = 0;
	int i, rc = 0;

	line[0] = '\0';
	my_seat(boot, gpu, have_gpu, &me);
	if (boot->rank == 0 && !(all = calloc((size_t)boot->size, sizeof(*all))))
		rc = GDRB_ERR;  /* the gather still runs, so that no rank waits for this one */
	if (boot->gather(boot, &me, sizeof(me), all))
		rc = GDRB_ERR;
	if (rc || boot->rank != 0) {
		free(all);
		return rc;
	}
	for (i = 0; i < boot->size && i < RAILS_SHOWN; i++) {
		all[i].bus[sizeof(all[i].bus) - 1] = '\0';
		all[i].nic[sizeof(all[i].nic) - 1] = '\0';
		all[i].dist[sizeof(all[i].dist) - 1] = '\0';
		at = put_seat(line, at, len, boot->hosts[i], &all[i]);
	}
	if (boot->size > RAILS_SHOWN && at < len)
		snprintf(line + at, len - at, "; %d more ranks", boot->size - RAILS_SHOWN);
	free(all);
	return 0;
}
