/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sysfs and procfs readers (common/sysinfo): the text parsers on the input
 * itself, PCI config space on its bytes, and the loaders on a small node tree
 * whose files the input fills. An input is "@@ PATH" sections (PATH one of
 * files[] below), each the whole content of that file; a file the input does
 * not give is absent. The loaders return, never crash, on any content; the
 * counter reader's states and names stay within their kinds.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "gdrb_memroom.h"
#include "gdrb_node.h"
#include "gdrb_sysfs.h"
#include "gdrb_sysfs_counters.h"
#include "gdrb_topo.h"

#define BRIDGE "sys/devices/pci0000:00/0000:00:01.0"
#define GPU BRIDGE "/0000:17:00.0"
#define NIC BRIDGE "/0000:18:00.0"
#define PORT NIC "/infiniband/mlx5_0/ports/1"

/* The files an input may fill, under the tree's root. */
static const char *const files[] = {
	"proc/cmdline", "proc/sys/kernel/osrelease", "proc/driver/nvidia/version",
	"proc/self/limits", "proc/self/status", "proc/modules", "proc/meminfo",
	"proc/self/cgroup",
	"sys/kernel/iommu_groups/0/type", "sys/kernel/iommu_groups/1/type",
	"sys/module/nvidia/version", "sys/module/nvidia/taint",
	BRIDGE "/config", BRIDGE "/max_link_speed", BRIDGE "/max_link_width",
	GPU "/vendor", GPU "/device", GPU "/class", GPU "/numa_node", GPU "/resource",
	GPU "/current_link_speed", GPU "/current_link_width", GPU "/max_link_speed",
	GPU "/max_link_width",
	NIC "/vendor", NIC "/class", NIC "/numa_node",
	PORT "/state", PORT "/phys_state", PORT "/rate", PORT "/link_layer", PORT "/gids/0",
	PORT "/gids/1", PORT "/gid_attrs/types/0", PORT "/gid_attrs/types/1",
	PORT "/gid_attrs/ndevs/0", PORT "/gid_attrs/ndevs/1",
	PORT "/counters/symbol_error", PORT "/counters/port_xmit_data", PORT "/hw_counters/out_of_sequence",
	GPU "/aer_dev_correctable", GPU "/aer_dev_fatal",
	"sys/class/net/eth0/mtu",
	"cgroup/memory.max", "cgroup/memory.current", "cgroup/job/memory.max",
	"cgroup/job/memory.current", "cgroup/memory/memory.limit_in_bytes",
	"cgroup/memory/memory.usage_in_bytes",
};
#define NFILES (sizeof(files) / sizeof(files[0]))
#define TEXT_MAX 2048

/* Short enough that every path under it fits PATH_MAX. */
static char root[512];
/* What each file of the tree holds now. */
static struct {
	bool there;
	size_t len;
	uint8_t *data;
} now[NFILES];

static void must(bool ok, const char *what, const char *path)
{
	if (!ok) {
		fprintf(stderr, "fuzz_sysinfo: %s %s: %s\n", what, path, strerror(errno));
		abort();
	}
}

/* mkdir -p of path's directory (path relative to root). */
static void make_dirs(const char *rel)
{
	char path[PATH_MAX];
	char *slash;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		must(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir", path);
		*slash = '/';
	}
}

static void link_at(const char *rel, const char *target)
{
	char path[PATH_MAX];

	make_dirs(rel);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	must(symlink(target, path) == 0 || errno == EEXIST, "symlink", path);
}

static void remove_tree(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_sysinfo: could not remove %s\n", root);
}

/* The node's layout: a bridge with a GPU and a NIC below it, as the kernel links them. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	struct stat st;
	size_t i;

	(void)argc;
	(void)argv;
	/* In memory where there is a tmpfs: a tree on disk makes each input a few disk writes. */
	if (!tmp || !*tmp)
		tmp = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ?
		      "/dev/shm" : "/tmp";
	if ((size_t)snprintf(root, sizeof(root), "%s/gdrb-fuzz-sysinfo.XXXXXX", tmp) >= sizeof(root)) {
		fprintf(stderr, "fuzz_sysinfo: TMPDIR is too long\n");
		abort();
	}
	must(mkdtemp(root) != NULL, "mkdtemp", root);
	atexit(remove_tree);
	for (i = 0; i < NFILES; i++)
		make_dirs(files[i]);
	make_dirs("sys/class/iommu/dmar0/x");
	link_at("sys/bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
	link_at("sys/bus/pci/devices/0000:17:00.0",
		"../../../devices/pci0000:00/0000:00:01.0/0000:17:00.0");
	link_at("sys/bus/pci/devices/0000:18:00.0",
		"../../../devices/pci0000:00/0000:00:01.0/0000:18:00.0");
	link_at(NIC "/infiniband/mlx5_0/device", "../../../0000:18:00.0");
	link_at("sys/class/infiniband/mlx5_0",
		"../../devices/pci0000:00/0000:00:01.0/0000:18:00.0/infiniband/mlx5_0");
	make_dirs(NIC "/net/eth0/x");
	return 0;
}

static int file_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NFILES; i++)
		if (strlen(files[i]) == len && !memcmp(files[i], name, len))
			return (int)i;
	return -1;
}

/* Every file of files[] as the input gives it, or absent. */
static void fill_tree(const uint8_t *data, size_t size)
{
	const uint8_t *start[NFILES] = { NULL }, *end[NFILES] = { NULL }, *p = data;
	const uint8_t *stop = data + size;
	int cur = -1;
	char path[PATH_MAX];
	size_t i;

	while (p < stop) {
		const uint8_t *eol = memchr(p, '\n', (size_t)(stop - p));
		const uint8_t *next = eol ? eol + 1 : stop;

		if (stop - p > 3 && !memcmp(p, "@@ ", 3)) {
			int k = file_index((const char *)p + 3, (size_t)((eol ? eol : stop) - p - 3));

			if (k >= 0) {
				if (cur >= 0)
					end[cur] = p;
				cur = k;
				start[k] = end[k] = next;
				p = next;
				continue;
			}
		}
		p = next;
	}
	if (cur >= 0)
		end[cur] = stop;
	for (i = 0; i < NFILES; i++) {
		size_t len = start[i] ? (size_t)(end[i] - start[i]) : 0;
		int fd;

		/* Unchanged since the last input: left as it is (the tree lives on disk). */
		if (!start[i] == !now[i].there && (!start[i] || (len == now[i].len &&
							   !memcmp(start[i], now[i].data, len))))
			continue;
		snprintf(path, sizeof(path), "%s/%s", root, files[i]);
		free(now[i].data);
		now[i].data = NULL;
		now[i].there = start[i] != NULL;
		now[i].len = len;
		if (!start[i]) {
			must(unlink(path) == 0 || errno == ENOENT, "unlink", path);
			continue;
		}
		now[i].data = malloc(len ? len : 1);
		if (!now[i].data)
			abort();
		memcpy(now[i].data, start[i], len);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		must(fd >= 0, "open", path);
		if (len)
			must(write(fd, start[i], len) == (ssize_t)len, "write", path);
		close(fd);
	}
}

/*
 * The parsers that take text: the input's head as each of them would read it. A head: sscanf
 * scans to the end of its string at each call, which makes a meminfo of n lines n^2, and the
 * real files are a few KiB.
 */
static void parse_text(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size < TEXT_MAX ? size : TEXT_MAX), value[64], flags[256];
	char names[8][GDRB_CNT_NAME_LEN], name[GDRB_CNT_NAME_LEN];
	uint64_t counts[8];
	struct gdrb_acs acs;
	uint64_t bytes;
	bool unlimited;
	double gts;
	int region;

	gdrb_parse_memlock(text, &bytes, &unlimited);
	gdrb_meminfo_available(text, &bytes);
	gdrb_cmdline_value(text, "intel_iommu", value, sizeof(value));
	gdrb_kernel_at_least(text, 5, 12);
	gts = gdrb_pci_parse_speed(text);
	gdrb_pci_gen(gts);
	gts = gdrb_pci_link_speed(text);
	if (gts < 0 || gdrb_pci_link_gbytes(gts, 16) < 0)
		abort();
	gdrb_pci_bar1_bytes(text, &region);
	gdrb_pci_acs_parse(data, size, &acs);
	gdrb_acs_flags(acs.ctrl, flags, sizeof(flags));
	gdrb_cnt_parse_u64(text, &bytes);
	gdrb_cnt_parse_aer(text, names, counts, sizeof(names) / sizeof(names[0]));
	gdrb_cnt_name(name, sizeof(name), text);
	if (strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:-?~") != strlen(name))
		fuzz_broken("a counter's name shown with a byte it may not have");
	free(text);
}

/* The counters of the node's port and GPU: every reading a state of its kind, every name printable. */
static void read_counters(const char *sys)
{
	struct gdrb_cnt_set cs = { 0 };
	uint64_t *value;
	uint8_t *state;
	size_t i;

	if (gdrb_cnt_add_port(&cs, sys, "mlx5_0", 1) || gdrb_cnt_add_pci(&cs, sys, "GPU", "0000:17:00.0", "0000:00:01.0")) {
		gdrb_cnt_set_free(&cs);
		return;
	}
	value = calloc(cs.n + 1, sizeof(*value));
	state = calloc(cs.n + 1, sizeof(*state));
	if (!value || !state)
		abort();
	gdrb_cnt_read(&cs, value, state);
	for (i = 0; i < cs.n; i++) {
		if (state[i] > GDRB_CNT_READ_VANISHED)
			fuzz_broken("counter %zu: state %u", i, state[i]);
		if (strlen(cs.id[i].name) >= sizeof(cs.id[i].name) || cs.id[i].cls >= GDRB_CNT_NCLASSES)
			fuzz_broken("counter %zu: its name or class", i);
	}
	free(value);
	free(state);
	gdrb_cnt_set_free(&cs);
}

static void load_node(void)
{
	char sys[PATH_MAX], proc[PATH_MAX], cgroup[PATH_MAX];
	struct gdrb_mem_room room;
	struct gdrb_topo topo;
	struct gdrb_node node;
	struct gdrb_acs acs;
	size_t g;

	snprintf(sys, sizeof(sys), "%s/sys", root);
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(cgroup, sizeof(cgroup), "%s/cgroup", root);
	if (gdrb_node_load(sys, proc, false, &node) == 0) {
		if (strlen(node.iommu_why) >= sizeof(node.iommu_why))
			fuzz_broken("iommu_why unterminated");
	}
	gdrb_mem_room(proc, cgroup, &room);
	gdrb_mem_room_bytes(&room);
	if (gdrb_topo_load(sys, &topo) == 0) {
		for (g = 0; g < topo.ngpus; g++) {
			enum gdrb_topo_dist dist;
			int nic = gdrb_topo_nearest_nic(&topo, g, false, &dist);

			if (nic >= (int)topo.nnics)
				fuzz_broken("nearest NIC %d of %zu", nic, topo.nnics);
		}
		gdrb_topo_free(&topo);
	}
	gdrb_topo_acs(sys, "0000:00:01.0", &acs);
	read_counters(sys);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse_text(data, size);
	fill_tree(data, size);
	load_node();
	return 0;
}
