/* SPDX-License-Identifier: BSD-3-Clause */
/* gdrb_doctor output for machines: the --json report, its checks, topology and NVLink links. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"
#include "gdrb_json.h"
#include "gdrb_log.h"

#include "doctor_int.h"

static void json_link(struct gdrb_json *j, const char *key, double gts, int width)
{
	if (!(gts > 0) || width <= 0) {
		gdrb_json_string(j, key, NULL);
		return;
	}
	gdrb_json_open_object(j, key);
	gdrb_json_number(j, "gts", gts);
	gdrb_json_int(j, "width", width);
	gdrb_json_close_object(j);
}

/* GPU g's uplink shared with its nearest NIC (gdrb_topo_shared_uplink); null where none or not known. */
static void json_shared_uplink(const struct gdrb_doctor *d, struct gdrb_json *j, size_t g)
{
	const struct gdrb_topo *t = &d->topo;
	double gts = 0;
	int width = 0, nic = d->nic_of_gpu[g];

	if (nic >= 0 && t->nics[nic].has_pci)
		gdrb_topo_shared_uplink(&t->gpus[g].pci, &t->nics[nic].pci, &gts, &width);
	json_link(j, "shared_uplink", gts, width);
}

/*
 * GPU g's rail: "switch", the PCIe switch port it shares with its nearest NIC
 * (gdrb_topo_shared_bridge; null where they share no switch), and
 * "shares_nic_with", the other GPUs whose nearest NIC is the same one (with a PCI
 * function: a software device such as rxe is nobody's own).
 */
static void json_rail(const struct gdrb_doctor *d, struct gdrb_json *j, size_t g)
{
	const struct gdrb_topo *t = &d->topo;
	int nic = d->nic_of_gpu[g];
	char bridge[GDRB_BDF_LEN] = "";
	size_t h;

	if (nic >= 0 && t->nics[nic].has_pci &&
	    gdrb_topo_shared_bridge(&t->gpus[g].pci, &t->nics[nic].pci, bridge) >= 2)
		gdrb_json_string(j, "switch", bridge);
	else
		gdrb_json_string(j, "switch", NULL);
	gdrb_json_open_array(j, "shares_nic_with");
	for (h = 0; h < t->ngpus && nic >= 0 && t->nics[nic].has_pci; h++)
		if (h != g && d->nic_of_gpu[h] == nic)
			gdrb_json_string(j, NULL, t->gpus[h].pci.bdf);
	gdrb_json_close_array(j);
}

/* "9.0", CUDA's compute capability of the GPU at bdf; null where CUDA was not asked or does not see it. */
static void json_compute_capability(const struct gdrb_doctor *d, struct gdrb_json *j, const char *bdf)
{
	int ci = gdrb_doctor_cuda_index(d, bdf);
	char cc[16];

	if (ci < 0 || d->cuda.devs[ci].cc_major <= 0) {
		gdrb_json_string(j, "compute_capability", NULL);
		return;
	}
	snprintf(cc, sizeof(cc), "%d.%d", d->cuda.devs[ci].cc_major, d->cuda.devs[ci].cc_minor);
	gdrb_json_string(j, "compute_capability", cc);
}

static void json_topology(const struct gdrb_doctor *d, struct gdrb_json *j)
{
	const struct gdrb_topo *t = &d->topo;
	size_t g, n, p;

	gdrb_json_open_array(j, "gpus");
	for (g = 0; g < t->ngpus; g++) {
		const struct gdrb_topo_gpu *gpu = &t->gpus[g];
		char device[8];

		gdrb_json_open_object(j, NULL);
		gdrb_json_string(j, "pci", gpu->pci.bdf);
		snprintf(device, sizeof(device), "0x%04x", gpu->pci.device & 0xffffu);
		gdrb_json_string(j, "device", device);
		gdrb_json_int(j, "numa_node", gpu->pci.numa_node);
		gdrb_json_string(j, "driver", gpu->pci.driver);
		gdrb_json_int(j, "bar1_bytes", (long long)gpu->bar1_bytes);
		gdrb_json_int(j, "bar1_region", gpu->bar1_region);
		gdrb_json_string(j, "nearest_nic",
				 d->nic_of_gpu[g] >= 0 ? t->nics[d->nic_of_gpu[g]].name : NULL);
		gdrb_json_string(j, "distance", gdrb_topo_dist_name(d->dist_of_gpu[g]));
		json_link(j, "link", gpu->pci.link.cur_gts, gpu->pci.link.cur_width);
		json_shared_uplink(d, j, g);
		json_rail(d, j, g);
		json_compute_capability(d, j, gpu->pci.bdf);
		gdrb_json_close_object(j);
	}
	gdrb_json_close_array(j);
	gdrb_json_open_array(j, "nics");
	for (n = 0; n < t->nnics; n++) {
		const struct gdrb_topo_nic *nic = &t->nics[n];

		gdrb_json_open_object(j, NULL);
		gdrb_json_string(j, "name", nic->name);
		gdrb_json_string(j, "pci", nic->has_pci ? nic->pci.bdf : NULL);
		gdrb_json_int(j, "numa_node", nic->has_pci ? nic->pci.numa_node : -1);
		json_link(j, "link", nic->has_pci ? nic->pci.link.cur_gts : 0, nic->has_pci ? nic->pci.link.cur_width : 0);
		gdrb_json_open_array(j, "ports");
		for (p = 0; p < nic->nports; p++) {
			const struct gdrb_topo_port *pt = &nic->ports[p];

			gdrb_json_open_object(j, NULL);
			gdrb_json_int(j, "port", pt->num);
			gdrb_json_string(j, "state", pt->state_name);
			gdrb_json_string(j, "link_layer", pt->link_layer);
			gdrb_json_string(j, "rate", pt->rate);
			gdrb_json_string(j, "netdev", pt->netdev[0] ? pt->netdev : NULL);
			gdrb_json_int(j, "roce_v2_gid_index", pt->roce_v2_gid);
			gdrb_json_close_object(j);
		}
		gdrb_json_close_array(j);
		gdrb_json_close_object(j);
	}
	gdrb_json_close_array(j);
}

/*
 * Each link up with NVML's speed in MB/s (null: not known), the fastest, the links slower than
 * it (check 3 warns on them) and why a speed is not known.
 */
static void json_nvlink_speed(struct gdrb_json *j, const struct gdrb_nvml_gpu *g)
{
	unsigned top = gdrb_doc_nvlink_fastest(g);
	size_t l;

	gdrb_json_open_array(j, "speeds");
	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++) {
		if (g->state[l] != GDRB_NVLINK_UP)
			continue;
		gdrb_json_open_object(j, NULL);
		gdrb_json_int(j, "link", (long long)l);
		if (g->speed_mbps[l])
			gdrb_json_int(j, "mbps", g->speed_mbps[l]);
		else
			gdrb_json_string(j, "mbps", NULL);
		gdrb_json_close_object(j);
	}
	gdrb_json_close_array(j);
	if (top)
		gdrb_json_int(j, "fastest_mbps", top);
	else
		gdrb_json_string(j, "fastest_mbps", NULL);
	gdrb_json_open_array(j, "slower");
	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++)
		if (g->state[l] == GDRB_NVLINK_UP && g->speed_mbps[l] && g->speed_mbps[l] < top)
			gdrb_json_int(j, NULL, (long long)l);
	gdrb_json_close_array(j);
	gdrb_json_string(j, "speed_error", g->speed_why[0] ? g->speed_why : NULL);
}

static void json_nvlink_gpu(struct gdrb_json *j, const struct gdrb_nvml_gpu *g)
{
	const char *v = gdrb_nvlink_version_text(g->version);
	size_t l;

	gdrb_json_open_object(j, NULL);
	gdrb_json_string(j, "pci", g->pci[0] ? g->pci : NULL);
	gdrb_json_string(j, "name", g->name[0] ? g->name : NULL);
	gdrb_json_int(j, "links", g->links);
	gdrb_json_int(j, "up", g->up);
	gdrb_json_open_array(j, "down");
	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++)
		if (g->state[l] == GDRB_NVLINK_DOWN)
			gdrb_json_int(j, NULL, (long long)l);
	gdrb_json_close_array(j);
	gdrb_json_open_array(j, "not_read");
	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++)
		if (g->state[l] == GDRB_NVLINK_UNREAD)
			gdrb_json_int(j, NULL, (long long)l);
	gdrb_json_close_array(j);
	gdrb_json_string(j, "version", v);
	json_nvlink_speed(j, g);
	gdrb_json_int(j, "to_nvswitch", g->to_switch);
	gdrb_json_int(j, "to_gpu", g->to_gpu);
	gdrb_json_string(j, "error", g->why[0] ? g->why : NULL);
	gdrb_json_close_object(j);
}

/* "nvlink": what NVML said per GPU; known false (and why) where it was not asked or not read. */
static void json_nvlink(const struct gdrb_doctor *d, struct gdrb_json *j)
{
	const struct gdrb_nvml *nv = &d->nvml;
	size_t g;

	gdrb_json_open_object(j, "nvlink");
	gdrb_json_bool(j, "asked", d->ask_nvml);
	gdrb_json_bool(j, "known", d->ask_nvml && nv->known);
	gdrb_json_string(j, "why", !d->ask_nvml ? "not asked: a fixture tree" : nv->known ? NULL : nv->why);
	gdrb_json_int(j, "reported", nv->known ? (long long)nv->reported : 0);
	gdrb_json_open_array(j, "gpus");
	for (g = 0; nv->known && g < nv->ngpus; g++)
		json_nvlink_gpu(j, &nv->gpus[g]);
	gdrb_json_close_array(j);
	gdrb_json_close_object(j);
}

void gdrb_doctor_print_json(const struct gdrb_doctor *d, FILE *f)
{
	static const char *const keys[] = { "skip", "pass", "warn", "fail" };
	enum gdrb_doc_verdict v[GDRB_DOC_NCHECKS];
	struct gdrb_json j;
	size_t k;
	int n[4], i;

	gdrb_doc_verdicts(d, v);
	gdrb_doc_counts(v, n);
	gdrb_json_init(&j, f);
	gdrb_json_open_object(&j, NULL);
	gdrb_json_string(&j, "tool", "gdrb_doctor");
	gdrb_json_string(&j, "version", PACKAGE_VERSION);
	gdrb_json_string(&j, "host", gdrb_host());
	gdrb_json_string(&j, "sysfs_root", d->sysfs_root);
	gdrb_json_string(&j, "procfs_root", d->procfs_root);
	gdrb_json_bool(&j, "live", d->live);
	gdrb_json_string(&j, "verdict", gdrb_doc_verdict_name(gdrb_doctor_verdict(d)));
	gdrb_json_open_object(&j, "counts");
	for (i = GDRB_DOC_PASS; i <= GDRB_DOC_FAIL; i++)
		gdrb_json_int(&j, keys[i], n[i]);
	gdrb_json_int(&j, keys[GDRB_DOC_SKIP], n[GDRB_DOC_SKIP]);
	gdrb_json_close_object(&j);
	gdrb_json_open_array(&j, "checks");
	for (i = 0; i < GDRB_DOC_NCHECKS; i++) {
		const struct gdrb_doc_check *c = &d->checks[i];

		gdrb_json_open_object(&j, NULL);
		gdrb_json_int(&j, "id", c->id);
		gdrb_json_string(&j, "name", c->name);
		gdrb_json_string(&j, "title", c->title);
		gdrb_json_string(&j, "verdict", gdrb_doc_verdict_name(c->v));
		gdrb_json_string(&j, "evidence", c->evidence);
		gdrb_json_string(&j, "fix", c->fix);
		gdrb_json_open_array(&j, "items");
		for (k = 0; k < c->nitems; k++) {
			gdrb_json_open_object(&j, NULL);
			gdrb_json_string(&j, "verdict", gdrb_doc_verdict_name(c->items[k].v));
			gdrb_json_string(&j, "text", c->items[k].text);
			gdrb_json_close_object(&j);
		}
		gdrb_json_close_array(&j);
		gdrb_json_close_object(&j);
	}
	gdrb_json_close_array(&j);
	gdrb_json_open_object(&j, "topology");
	json_topology(d, &j);
	gdrb_json_close_object(&j);
	json_nvlink(d, &j);
	gdrb_json_close_object(&j);
	fflush(f);
}
