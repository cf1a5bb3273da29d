/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Checks 8 to 10 of gdrb_doctor, the PCIe path between each GPU and its nearest NIC: ACS
 * redirection, the distance (each rail, GPUs sharing a NIC), and the links' speed and width.
 */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"

#include "doctor_int.h"

/* 8. PCIe ACS on the bridges between each GPU and its nearest NIC */
void gdrb_doc_check_acs(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int pairs = 0, redirected = 0;
	size_t g, b;

	for (g = 0; g < t->ngpus; g++) {
		char bridges[GDRB_TOPO_MAX_HOPS * 2][GDRB_BDF_LEN], list[320] = "", flags[96];
		const struct gdrb_topo_nic *nic;
		size_t nb, used = 0;
		bool unreadable = false;

		if (d->nic_of_gpu[g] < 0 || !t->nics[d->nic_of_gpu[g]].has_pci)
			continue;
		nic = &t->nics[d->nic_of_gpu[g]];
		pairs++;
		if (d->dist_of_gpu[g] > GDRB_DIST_PXB) {
			gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE,
				     "GPU %s - %s: %s, the path crosses the host bridge; ACS does not "
				     "change it (check 9)", t->gpus[g].pci.bdf, nic->name,
				     gdrb_topo_dist_name(d->dist_of_gpu[g]));
			continue;
		}
		nb = gdrb_topo_path(&t->gpus[g].pci, &nic->pci, bridges, GDRB_TOPO_MAX_HOPS * 2);
		for (b = 0; b < nb; b++) {
			struct gdrb_acs acs;
			int rc = gdrb_topo_acs(d->sysfs_root, bridges[b], &acs);

			if (rc || !acs.readable) {
				unreadable = true;
				continue;
			}
			if (!acs.present || !(acs.ctrl & GDRB_ACS_P2P_REDIRECT) || used >= sizeof(list))
				continue;
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s %s (%s)",
						 used ? "; " : "", gdrb_pcie_port_name(acs.port_type),
						 bridges[b],
						 gdrb_acs_flags(acs.ctrl, flags, sizeof(flags)));
		}
		if (used) {
			redirected++;
			gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_ACS_REDIRECT,
				     "GPU %s - %s: ACS redirects peer-to-peer to the root complex at %s",
				     t->gpus[g].pci.bdf, nic->name, list);
		} else if (unreadable) {
			gdrb_doc_add(c, GDRB_DOC_SKIP, GDRB_FIX_ACS_ROOT,
				     "GPU %s - %s: config space of the %zu bridges between them not "
				     "readable (needs root)", t->gpus[g].pci.bdf, nic->name, nb);
		} else {
			gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "GPU %s - %s: %zu bridge%s between them, no ACS "
				     "redirect", t->gpus[g].pci.bdf, nic->name, nb, nb == 1 ? "" : "s");
		}
	}
	if (!pairs)
		gdrb_doc_evidence(c, "no GPU with a PCI NIC to check");
	else if (!gdrb_doc_count(c, GDRB_DOC_PASS) && !redirected)
		gdrb_doc_evidence(c, "ACS not readable: run as root");
	else
		gdrb_doc_evidence(c, "%d of %d GPU-NIC paths redirected by ACS", redirected, pairs);
	if (gdrb_doc_count(c, GDRB_DOC_SKIP) && c->v == GDRB_DOC_PASS)
		snprintf(c->fix, sizeof(c->fix), "%s", gdrb_doc_fix_text(GDRB_FIX_ACS_ROOT));
}

/* Part of check 9: GPUs whose nearest NIC is the same device, named per NIC. */
static void shared_nics(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	size_t g, h;

	for (g = 0; g < t->ngpus; g++) {
		char names[512];
		size_t used = 0, n = 1;
		int nic = d->nic_of_gpu[g];
		bool first = true;

		if (nic < 0 || !t->nics[nic].has_pci)
			continue;       /* a software device (rxe) is no GPU's own */
		for (h = 0; h < g; h++)
			first &= d->nic_of_gpu[h] != nic;
		if (!first)
			continue;       /* named with the first GPU on that NIC */
		used = (size_t)snprintf(names, sizeof(names), "%s", t->gpus[g].pci.bdf);
		for (h = g + 1; h < t->ngpus; h++)
			if (d->nic_of_gpu[h] == nic) {
				n++;
				if (used < sizeof(names))
					used += (size_t)snprintf(names + used, sizeof(names) - used, ", %s",
								 t->gpus[h].pci.bdf);
			}
		if (n > 1)
			gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_SHARED_NIC, "GPUs %s share their nearest NIC %s: %zu rails on one NIC",
				     names, t->nics[nic].name, n);
	}
}

/* 9. GPU-NIC topology */
void gdrb_doc_check_topology(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int per_class[GDRB_DIST_UNKNOWN + 1] = { 0 };
	char counts[160] = "";
	size_t g, used = 0;
	int k;

	if (!t->ngpus || !t->nnics) {
		gdrb_doc_evidence(c, "%s", !t->ngpus ? "no GPU" : "no RDMA device");
		return;
	}
	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_pci_fn *gpu = &t->gpus[g].pci;
		const struct gdrb_topo_nic *nic = &t->nics[d->nic_of_gpu[g]];
		enum gdrb_topo_dist dist = d->dist_of_gpu[g];
		enum gdrb_doc_verdict v = dist <= GDRB_DIST_PXB ? GDRB_DOC_PASS :
				     dist == GDRB_DIST_SYS ? GDRB_DOC_FAIL : GDRB_DOC_WARN;

		char bridge[GDRB_BDF_LEN] = "";
		int depth = nic->has_pci ? gdrb_topo_shared_bridge(gpu, &nic->pci, bridge) : 0;

		per_class[dist]++;
		gdrb_doc_add(c, v, dist == GDRB_DIST_SYS ? GDRB_FIX_GPU_NIC_SOCKET : GDRB_FIX_GPU_NIC_FAR,
			     "GPU %s (NUMA %d) -> %s %s (NUMA %d): %s, %s; rail %zu: %s%s", gpu->bdf,
			     gpu->numa_node, nic->name, nic->has_pci ? nic->pci.bdf : "(no PCI function)",
			     nic->has_pci ? nic->pci.numa_node : -1, gdrb_topo_dist_name(dist),
			     gdrb_topo_dist_what(dist), g,
			     depth >= 2 ? "PCIe switch " : depth == 1 ? "no switch shared, root port " :
			     "no switch or root port shared", bridge);
	}
	shared_nics(d, c);
	for (k = 0; k <= GDRB_DIST_UNKNOWN; k++)
		if (per_class[k] && used < sizeof(counts))
			used += (size_t)snprintf(counts + used, sizeof(counts) - used, "%s%d %s",
						 used ? ", " : "", per_class[k],
						 gdrb_topo_dist_name((enum gdrb_topo_dist)k));
	gdrb_doc_evidence(c, "%zu GPUs, %zu RDMA devices; nearest NIC per GPU: %s", t->ngpus, t->nnics,
			  counts);
}

static void link_item(struct gdrb_doc_check *c, const char *what, const struct gdrb_pci_fn *fn,
		      bool gpu, int *down)
{
	const struct gdrb_pci_link *l = &fn->link;
	double target_gts;
	int target_width;

	gdrb_pci_link_target(fn, &target_gts, &target_width);
	if (!l->cur_gts || !l->cur_width || !target_gts || !target_width) {
		gdrb_doc_add(c, GDRB_DOC_SKIP, GDRB_FIX_NONE, "%s %s: link speed or width not reported", what, fn->bdf);
		return;
	}
	if (l->cur_width < target_width || (!gpu && l->cur_gts < target_gts)) {
		(*down)++;
		gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_PCIE_DOWN, "%s %s: %.1f GT/s (Gen%d) x%d, can do %.1f GT/s (Gen%d) "
			     "x%d: down-trained", what, fn->bdf, l->cur_gts, gdrb_pci_gen(l->cur_gts),
			     l->cur_width, target_gts, gdrb_pci_gen(target_gts), target_width);
	} else if (l->cur_gts < target_gts) {
		gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_PCIE_IDLE, "%s %s: %.1f GT/s (Gen%d) x%d, can do %.1f GT/s (Gen%d): "
			     "lower speed (idle GPU, or down-trained)", what, fn->bdf, l->cur_gts,
			     gdrb_pci_gen(l->cur_gts), l->cur_width, target_gts, gdrb_pci_gen(target_gts));
	} else if (target_gts < l->max_gts || target_width < l->max_width) {
		gdrb_doc_add(c, GDRB_DOC_WARN, GDRB_FIX_PCIE_SLOT, "%s %s: %.1f GT/s (Gen%d) x%d, limited by the port above "
			     "it (the card can do %.1f GT/s x%d)", what, fn->bdf, l->cur_gts,
			     gdrb_pci_gen(l->cur_gts), l->cur_width, l->max_gts, l->max_width);
	} else {
		gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%s %s: %.1f GT/s (Gen%d) x%d, its maximum", what, fn->bdf,
			     l->cur_gts, gdrb_pci_gen(l->cur_gts), l->cur_width);
	}
}

/* 10. PCIe links of GPUs and NICs: current against maximum */
void gdrb_doc_check_links(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int down = 0;
	size_t i;

	for (i = 0; i < t->ngpus; i++)
		link_item(c, "GPU", &t->gpus[i].pci, true, &down);
	for (i = 0; i < t->nnics; i++) {
		char what[80];

		if (!t->nics[i].has_pci)
			continue;
		snprintf(what, sizeof(what), "NIC %s", t->nics[i].name);
		link_item(c, what, &t->nics[i].pci, false, &down);
	}
	if (!c->nitems)
		gdrb_doc_evidence(c, "no GPU or NIC on the PCI bus");
	else
		gdrb_doc_evidence(c, "%zu links: %d at their maximum, %d down-trained, %d slower or limited",
				  c->nitems, gdrb_doc_count(c, GDRB_DOC_PASS), down, gdrb_doc_count(c, GDRB_DOC_WARN));
}
