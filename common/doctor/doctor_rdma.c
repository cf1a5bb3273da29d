/* SPDX-License-Identifier: BSD-3-Clause */
/* Checks 1 and 2 of gdrb_doctor: the RDMA devices and their ports, and the RoCE v2 GID. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_doctor.h"

#include "doctor_int.h"

static bool verbs_lists(const struct gdrb_doctor *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nverbs; i++)
		if (!strcmp(d->verbs_devs[i], name))
			return true;
	return false;
}

/* 1. RDMA devices and ports */
void gdrb_doc_check_rdma_ports(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int ports = 0, active = 0;
	size_t n, p, listed = 0;
	char verbs[64];

	if (!t->nnics) {
		gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_DRIVER, "%s/class/infiniband %s", d->sysfs_root,
			     t->have_ib_class ? "is empty" : "does not exist: no RDMA driver is loaded");
		if (d->live)
			gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_DRIVER, "libibverbs: %s",
				     d->verbs_ok ? "lists no device" : d->verbs_why);
		gdrb_doc_evidence(c, "no RDMA device");
		return;
	}
	if (d->live && !d->verbs_ok)
		gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_PROVIDER, "libibverbs cannot list devices: %s", d->verbs_why);
	for (n = 0; n < t->nnics; n++) {
		const struct gdrb_topo_nic *nic = &t->nics[n];
		bool nic_active = false;

		if (d->live && d->verbs_ok && !verbs_lists(d, nic->name))
			gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_RDMA_PROVIDER,
				     "%s: in sysfs, but libibverbs does not list it (no user-space provider)",
				     nic->name);
		for (p = 0; p < nic->nports; p++)
			nic_active |= nic->ports[p].state == GDRB_PORT_ACTIVE;
		if (!nic->nports)
			gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_PORT_DOWN, "%s: no ports in sysfs", nic->name);
		for (p = 0; p < nic->nports; p++) {
			const struct gdrb_topo_port *pt = &nic->ports[p];
			struct gdrb_rdma_port_attr attr;
			char mtu[160] = "", why[256];
			bool eth = !strcmp(pt->link_layer, "Ethernet");
			enum gdrb_doc_verdict v = GDRB_DOC_PASS;
			int rdma_mtu = 0;
			enum gdrb_doc_fix fix = GDRB_FIX_NONE;

			ports++;
			active += pt->state == GDRB_PORT_ACTIVE;
			if (d->live && gdrb_rdma_query_port(nic->name, pt->num, &attr, why,
							    sizeof(why)) == 0 && attr.active_mtu) {
				rdma_mtu = attr.active_mtu;
				snprintf(mtu, sizeof(mtu), ", active MTU %d (max %d)", attr.active_mtu,
					 attr.max_mtu);
			}
			if (eth && pt->netdev_mtu) {
				int derived = gdrb_roce_mtu(pt->netdev_mtu);
				size_t used = strlen(mtu);

				if (!rdma_mtu)
					rdma_mtu = derived;
				snprintf(mtu + used, sizeof(mtu) - used, ", %s MTU %d -> RDMA MTU %d%s",
					 pt->netdev, pt->netdev_mtu, derived,
					 used ? "" : " (derived as the kernel does)");
			} else if (eth) {
				size_t used = strlen(mtu);

				snprintf(mtu + used, sizeof(mtu) - used, ", %s",
					 pt->netdev[0] ? "netdev MTU unreadable" : "no netdev found");
			}
			if (pt->state != GDRB_PORT_ACTIVE) {
				v = nic_active ? GDRB_DOC_WARN : GDRB_DOC_FAIL;
				fix = GDRB_FIX_PORT_DOWN;
			} else if (rdma_mtu && rdma_mtu < 4096) {
				v = GDRB_DOC_WARN;
				fix = eth ? GDRB_FIX_ROCE_MTU : GDRB_FIX_IB_MTU;
			}
			gdrb_doc_add(c, v, fix, "%s port %u: %s (%s), %s, %s%s", nic->name, pt->num,
				     pt->state_name[0] ? pt->state_name : "state unknown",
				     pt->phys_state[0] ? pt->phys_state : "?",
				     pt->link_layer[0] ? pt->link_layer : "link layer unknown",
				     pt->rate[0] ? pt->rate : "rate unknown", mtu);
		}
	}
	for (n = 0; n < t->nnics; n++)
		listed += verbs_lists(d, t->nics[n].name);
	if (!d->live)
		snprintf(verbs, sizeof(verbs), " (sysfs only: fixture tree)");
	else if (!d->verbs_ok)
		snprintf(verbs, sizeof(verbs), ", libibverbs lists none");
	else if (listed == t->nnics)
		snprintf(verbs, sizeof(verbs), ", all listed by libibverbs");
	else
		snprintf(verbs, sizeof(verbs), ", libibverbs lists %zu of them", listed);
	gdrb_doc_evidence(c, "%zu RDMA device%s, %d of %d ports ACTIVE%s", t->nnics,
			  t->nnics == 1 ? "" : "s", active, ports, verbs);
}

/* "0000:0000:0000:0000:0000:ffff:0a00:0001" -> " (::ffff:10.0.0.1)" */
static void gid_ipv4(const char *gid, char *buf, size_t len)
{
	unsigned hi, lo;

	buf[0] = '\0';
	if (!strncmp(gid, "0000:0000:0000:0000:0000:ffff:", 30) &&
	    sscanf(gid + 30, "%4x:%4x", &hi, &lo) == 2)
		snprintf(buf, len, " (::ffff:%u.%u.%u.%u)", hi >> 8, hi & 0xff, lo >> 8, lo & 0xff);
}

/* 2. RoCE: a RoCE v2 GID exists, and its index */
void gdrb_doc_check_roce_gid(struct gdrb_doctor *d, struct gdrb_doc_check *c)
{
	const struct gdrb_topo *t = &d->topo;
	int roce = 0, with_v2 = 0;
	size_t n, p;

	for (n = 0; n < t->nnics; n++)
		for (p = 0; p < t->nics[n].nports; p++) {
			const struct gdrb_topo_port *pt = &t->nics[n].ports[p];
			char v4[40];

			if (strcmp(pt->link_layer, "Ethernet"))
				continue;
			roce++;
			if (pt->roce_v2_gid < 0) {
				gdrb_doc_add(c, GDRB_DOC_FAIL, GDRB_FIX_ROCE_GID,
					     "%s port %u (%s): no RoCE v2 GID among %d GIDs (%d RoCE v1)",
					     t->nics[n].name, pt->num, pt->netdev[0] ? pt->netdev : "no netdev",
					     pt->ngids, pt->ngids - pt->nv2);
				continue;
			}
			with_v2++;
			gid_ipv4(pt->roce_v2_gid_text, v4, sizeof(v4));
			gdrb_doc_add(c, GDRB_DOC_PASS, GDRB_FIX_NONE, "%s port %u (%s): RoCE v2 GID index %d = %s%s",
				     t->nics[n].name, pt->num, pt->netdev[0] ? pt->netdev : "no netdev",
				     pt->roce_v2_gid, pt->roce_v2_gid_text, v4);
		}
	if (!roce)
		gdrb_doc_evidence(c, "%s", t->nnics ? "no RoCE port (InfiniBand only)" : "no RDMA device");
	else
		gdrb_doc_evidence(c, "%d of %d RoCE ports have a RoCE v2 GID", with_v2, roce);
}
