/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GPU-NIC topology from sysfs: NVIDIA GPUs and RDMA devices, each with its
 * PCI path up to the host bridge, NUMA node and link; the distance class
 * between a GPU and a NIC; the NIC nearest to each GPU; ACS on the bridges
 * between them; RDMA ports with their state, rate, netdev and RoCE v2 GID.
 *
 * Everything is read under a root directory ("/sys" or a fixture tree) and
 * nothing is logged: callers decide what a missing piece means.
 */
#ifndef GDRB_TOPO_H
#define GDRB_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDRB_TOPO_MAX_HOPS 16   /* PCI functions from the root port down */
#define GDRB_BDF_LEN 16         /* "0000:17:00.0" and its NUL */

#define GDRB_PCI_VENDOR_NVIDIA 0x10de

struct gdrb_pci_link {
	double cur_gts, max_gts;        /* GT/s per lane; 0: unknown */
	int cur_width, max_width;       /* lanes; 0: unknown */
};

/* One PCI function and where it sits. */
struct gdrb_pci_fn {
	char bdf[GDRB_BDF_LEN];
	char host_bridge[GDRB_BDF_LEN];         /* "pci0000:00" */
	/* Functions from the root port down to this one, itself last. */
	char chain[GDRB_TOPO_MAX_HOPS][GDRB_BDF_LEN];
	int nchain;
	int numa_node;                          /* -1: unknown */
	unsigned vendor, device, class_code;    /* class_code: 0x030200 */
	struct gdrb_pci_link link;
	struct gdrb_pci_link up_link;           /* the bridge port above it */
	/* The link each function of chain reports (chain_link[nchain - 1] is link). */
	struct gdrb_pci_link chain_link[GDRB_TOPO_MAX_HOPS];
	char driver[32];                        /* bound driver; "" none */
};

struct gdrb_topo_gpu {
	struct gdrb_pci_fn pci;
	uint64_t bar1_bytes;                    /* 0: BAR1 not assigned */
	int bar1_region;                        /* the BAR it is (lspci's "Region"); -1 none */
};

/* IB port states, as the number sysfs prints before the name. */
enum { GDRB_PORT_DOWN = 1, GDRB_PORT_INIT = 2, GDRB_PORT_ARMED = 3, GDRB_PORT_ACTIVE = 4 };

struct gdrb_topo_port {
	unsigned num;
	int state;                              /* GDRB_PORT_*; 0: unknown */
	char state_name[32];                    /* "ACTIVE" */
	char phys_state[32];                    /* "LinkUp" */
	char rate[64];                          /* "400 Gb/sec (4X NDR)" */
	double rate_gbps;                       /* Gb/s; 0: unknown */
	char link_layer[16];                    /* "InfiniBand" or "Ethernet" */
	char netdev[32];                        /* Ethernet device of a RoCE port; "" */
	int netdev_mtu;                         /* bytes; 0: unknown */
	int ngids;                              /* GID entries that are set */
	int nv2;                                /* of those, RoCE v2 */
	/* The RoCE v2 GID to use: IPv4-mapped first, lowest index; -1: none. */
	int roce_v2_gid;
	char roce_v2_gid_text[48];
};

struct gdrb_topo_nic {
	char name[64];                          /* "mlx5_0" */
	bool has_pci;                           /* false for software devices (rxe) */
	struct gdrb_pci_fn pci;
	struct gdrb_topo_port *ports;
	size_t nports;
};

struct gdrb_topo {
	struct gdrb_topo_gpu *gpus;             /* in PCI address order */
	size_t ngpus;
	struct gdrb_topo_nic *nics;             /* in name order */
	size_t nnics;
	bool have_ib_class;                     /* <root>/class/infiniband exists */
};

/*
 * Distance classes, nearest first (the names NCCL and nvidia-smi topo use).
 */
enum gdrb_topo_dist {
	GDRB_DIST_PIX,          /* one PCIe switch between them */
	GDRB_DIST_PXB,          /* several PCIe switches, no host bridge */
	GDRB_DIST_PHB,          /* through their common host bridge */
	GDRB_DIST_NODE,         /* different host bridges, same NUMA node */
	GDRB_DIST_SYS,          /* different NUMA nodes: across the socket interconnect */
	GDRB_DIST_UNKNOWN,      /* a side without a PCI function */
};

/*
 * Load GPUs and RDMA devices under sysfs_root. 0, -ENOENT when the root has
 * no bus/pci/devices, -ENOMEM. Free with gdrb_topo_free.
 */
int gdrb_topo_load(const char *sysfs_root, struct gdrb_topo *topo);
/*
 * The same, loading only the parts asked for beyond the GPUs, the NICs and their ports'
 * state, rate and link layer: GDRB_TOPO_GIDS, each port's GID summary and Ethernet netdev
 * (one read per entry of the GID table: 1024 on rxe, 0.7 ms each in an emulated VM).
 * Without it ngids and nv2 are 0, roce_v2_gid -1 and netdev "". gdrb_topo_load asks for all.
 */
#define GDRB_TOPO_GIDS 1u
int gdrb_topo_load_parts(const char *sysfs_root, unsigned parts, struct gdrb_topo *topo);
void gdrb_topo_free(struct gdrb_topo *topo);

enum gdrb_topo_dist gdrb_topo_distance(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b);
const char *gdrb_topo_dist_name(enum gdrb_topo_dist d);        /* "PIX" */
const char *gdrb_topo_dist_what(enum gdrb_topo_dist d);        /* "same PCIe switch" */

/*
 * The NIC nearest to GPU gpu; -1 when there is none with a PCI function
 * (or none with an ACTIVE port when active_only). GPUs that share the same
 * nearest NICs are spread over them in PCI order, so that on a node with
 * two GPUs and two NICs per switch each GPU gets its own NIC.
 */
int gdrb_topo_nearest_nic(const struct gdrb_topo *topo, size_t gpu, bool active_only,
			  enum gdrb_topo_dist *dist);

/*
 * The bridges a peer-to-peer transfer between a and b passes through: those
 * below their lowest common bridge on both sides (or both whole chains when
 * they only meet at or above the host bridge). Returns how many were written
 * to bdfs (at most max).
 */
size_t gdrb_topo_path(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b,
		      char (*bdfs)[GDRB_BDF_LEN], size_t max);

/*
 * The narrowest current link (by gdrb_pci_link_gbytes) between the lowest PCIe switch a and
 * b share and the root port: every link the functions from the root port down to their
 * lowest common one report (each link is seen from both ends). Returns 1 with *gts and
 * *width; 0 when a and b share no switch (not under one root port, or a side without a PCI
 * path); -ENODATA when a function on the way does not report its current speed or width.
 */
int gdrb_topo_shared_uplink(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b, double *gts,
			    int *width);

/*
 * The lowest PCI function a and b both sit below, into bdf: with 2 or more
 * (it is below the root port) it is a port of the PCIe switch they share, its
 * upstream port where they meet inside the switch; with 1 it is their common
 * root port. Returns that depth; 0 (bdf "") when they share no root port or a
 * side has no PCI path.
 */
int gdrb_topo_shared_bridge(const struct gdrb_pci_fn *a, const struct gdrb_pci_fn *b,
			    char bdf[GDRB_BDF_LEN]);

/* PCIe Access Control Services of one bridge, from its config space. */
#define GDRB_ACS_SV 0x0001      /* source validation */
#define GDRB_ACS_TB 0x0002      /* translation blocking */
#define GDRB_ACS_RR 0x0004      /* P2P request redirect */
#define GDRB_ACS_CR 0x0008      /* P2P completion redirect */
#define GDRB_ACS_UF 0x0010      /* upstream forwarding */
#define GDRB_ACS_EC 0x0020      /* P2P egress control */
#define GDRB_ACS_DT 0x0040      /* direct translated P2P */
/* What sends peer-to-peer traffic up to the root complex. */
#define GDRB_ACS_P2P_REDIRECT (GDRB_ACS_RR | GDRB_ACS_CR | GDRB_ACS_EC)

enum { GDRB_PCIE_ROOT_PORT = 4, GDRB_PCIE_UPSTREAM = 5, GDRB_PCIE_DOWNSTREAM = 6 };

struct gdrb_acs {
	bool readable;          /* extended config space was readable (root) */
	bool pcie;              /* has a PCI Express capability */
	int port_type;          /* GDRB_PCIE_*; -1 unknown */
	bool present;           /* has an ACS extended capability */
	uint16_t cap, ctrl;
};

/* Parse config space bytes (as read from sysfs "config"). */
void gdrb_pci_acs_parse(const uint8_t *cfg, size_t len, struct gdrb_acs *acs);
/* Read <root>/bus/pci/devices/<bdf>/config and parse it; -errno if unreadable. */
int gdrb_topo_acs(const char *sysfs_root, const char *bdf, struct gdrb_acs *acs);
/* "SrcValid+ ReqRedir+ CmpltRedir+ UpstreamFwd+" (the bits that are set, lspci's names). */
char *gdrb_acs_flags(uint16_t ctrl, char *buf, size_t len);
const char *gdrb_pcie_port_name(int port_type);

/*
 * The sysfs PCI address of a bus id as CUDA gives it ("00000000:3B:00.0" ->
 * "0000:3b:00.0"; a sysfs one stays as it is). 0, or -EINVAL for anything else.
 */
int gdrb_pci_bdf_of_bus_id(const char *bus_id, char bdf[GDRB_BDF_LEN]);

/* "16.0 GT/s PCIe" -> 16.0; "Unknown" -> 0. Lenient: a number and whatever follows. */
double gdrb_pci_parse_speed(const char *text);
/*
 * A PCIe link speed attribute as the kernel writes it: "32.0 GT/s PCIe", or "8 GT/s" before
 * Linux 5.5, -> GT/s per lane; 0 for "Unknown" and anything else (a garbled attribute is
 * not known, never read as the number it starts with).
 */
double gdrb_pci_link_speed(const char *text);
/* Data per direction of a link in GB/s: lanes, line code (8b/10b, 128b/130b, FLIT); 0 unknown. */
double gdrb_pci_link_gbytes(double gts, int width);
/* 2.5 -> 1, 5 -> 2, ... 64 -> 6; 0 unknown. */
int gdrb_pci_gen(double gts);
/* The link speed and width the function can train to: min of both ends' maximum. */
void gdrb_pci_link_target(const struct gdrb_pci_fn *fn, double *gts, int *width);

/*
 * An NVIDIA GPU's BAR1, the aperture GPUDirect maps GPU memory through, from
 * the text of its sysfs "resource" file (one "0x<start> 0x<end> 0x<flags>"
 * line per resource, zeros when unused). BAR1 is the prefetchable memory BAR
 * after BAR0 (the registers): line 1 after A100's 32-bit BAR0, line 2 after
 * the 64-bit BAR0 of H100 and B200 (line 1 is BAR0's upper half). The largest
 * prefetchable BAR is not enough: where BAR1 is unassigned, the 32 MiB BAR
 * after it is the largest. Returns its bytes, 0 when it is not assigned;
 * *region (may be NULL) is its line, lspci's "Region", -1 for none.
 */
uint64_t gdrb_pci_bar1_bytes(const char *resource, int *region);

/* IB MTU (256 .. 4096) RoCE derives from a netdev MTU, as the kernel does. */
int gdrb_roce_mtu(int netdev_mtu);

#endif
