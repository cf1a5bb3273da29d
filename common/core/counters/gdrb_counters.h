/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters around every measurement (docs/counters.md). Each rank reads the
 * counters of the RDMA port it uses (a transport that names its device and
 * port), or of every active port of its node (a library that picks its own
 * NIC: MPI, NCCL; read by the node's first rank only), and the PCIe state of
 * its GPU and of those NICs: before the first size, and after each measured
 * path of each size, once its timed loop and the ranks' agreement are over and
 * before its rows are written. Never inside a timed window.
 *
 * What rose between two readings goes to rank 0 with the size's results: the
 * rows measured while an error counter rose say so in their note. At the end,
 * rank 0 gathers every rank's first and last readings, prints what rose over
 * the run after the table, and where --csv is given appends them to the
 * counter file beside the CSV (results.csv: results.counters.csv), whose
 * columns are counters_schema.def.
 */
#ifndef GDRB_COUNTERS_H
#define GDRB_COUNTERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gdrb_boot.h"
#include "gdrb_report.h"
#include "gdrb_sysfs_counters.h"

#define GDRB_CNT_RISE_ITEMS 3

/* Counts added without wrapping: a sum past 2^64 - 1 stays there. */
static inline uint64_t gdrb_cnt_sum(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* An error counter that rose between two readings. */
struct gdrb_cnt_rise_item {
	char where[GDRB_CNT_DEV_LEN + GDRB_CNT_PORT_LEN + 8];   /* "mlx5_0 port 1", "GPU 0000:3b:00.0" */
	char counter[GDRB_CNT_NAME_LEN];
	uint64_t delta;
	uint32_t pcie;          /* an AER line, not an RDMA port's counter */
	uint32_t pad;
};

/* What rose on one rank between two readings: plain bytes, gathered with a size's results. */
struct gdrb_cnt_rise {
	uint32_t errors[2];     /* error counters that rose: an RDMA port's [0], AER lines [1] */
	uint32_t n;             /* the largest of them, in item[] */
	uint32_t ports;         /* RDMA ports read (0: none, and the sums below say nothing) */
	uint64_t error_sum;     /* the RDMA ports' error counters' rises, added */
	uint64_t packets;       /* packets they moved: traffic counters named *packets or *pkts, added */
	uint32_t unreadable;    /* RDMA port counters of those kinds this reading could not read */
	uint32_t pad;
	struct gdrb_cnt_rise_item item[GDRB_CNT_RISE_ITEMS];
};

/* What a run's transport says of the NIC it uses. */
struct gdrb_counters_want {
	/*
	 * The library that picks its own NIC ("mpi", "nccl"): every active port of the
	 * node is read, by its first rank. NULL: no NIC is read unless nic_dev names one
	 * (a local benchmark uses none).
	 */
	const char *library;
	const char *nic_dev;    /* the RDMA device the transport uses (verbs); NULL: none named */
	unsigned nic_port;
	const char *gpu_bus_id; /* this rank's GPU (CUDA's form or sysfs's); NULL: none */
	/* When the readings are taken, for the header; NULL: before the first size and after each measured path. */
	const char *when;
};

struct gdrb_counters;

/*
 * Find this rank's counters (under GDRB_INJECT_SYSFS_ROOT where the test hook
 * sets it, else /sys). Local to the rank; a node without an RDMA device has
 * none, and the run goes on. 0 or GDRB_ERR (no memory, said once).
 */
int gdrb_counters_open(const struct gdrb_boot *b, const struct gdrb_counters_want *w,
		       struct gdrb_counters **out);
void gdrb_counters_close(struct gdrb_counters *cs);

/* Rank 0: the header's line on what is read ("counters: ..."), without '#' or newline. */
void gdrb_counters_describe(const struct gdrb_counters *cs, char *line, size_t len);

/*
 * A reading of every counter, timed. *rise (NULL for the first reading, the
 * one before the first size) gets the error counters that rose since the
 * reading before.
 */
void gdrb_counters_read(struct gdrb_counters *cs, struct gdrb_cnt_rise *rise);

/*
 * The same, once the kernel's cache of hw_counters/ readings (`lifespan`, in
 * ms) has expired since the reading before, waiting out the rest where it has
 * not: a short measurement's rise then shows in its own reading, not the next
 * (the all-pairs latency phases, each a pair's).
 */
void gdrb_counters_read_fresh(struct gdrb_counters *cs, struct gdrb_cnt_rise *rise);

/*
 * Rank 0: the note of the rows of a measurement from every rank's rise (at
 * `rises`, one each `stride` bytes): "NIC errors rose: rxe0 port 1
 * completer_retry_err +13 (node1)"; "" when none rose.
 */
void gdrb_counters_note(const struct gdrb_cnt_rise *rises, size_t stride, const struct gdrb_boot *b,
			char *note, size_t len);

/* The counter file of a CSV: same directory, ".csv" replaced by ".counters.csv". 0 or -ENAMETOOLONG. */
int gdrb_counters_path(const char *csv_path, char *buf, size_t len);

/*
 * Rank 0, before anything is measured: the counter file of csv_path. One that
 * exists is opened for appending as the CSV is (another header, a torn row,
 * CRLF line ends, a symbolic link: one line and GDRB_ERR_USAGE); one that does
 * not is created with its header by the first rows (a run without counters
 * makes none, and a full disk costs the CSV's rows nothing).
 */
struct gdrb_counters_file;
int gdrb_counters_file_open(const char *csv_path, struct gdrb_counters_file **out);
/* 0, or GDRB_ERR where a write or the close failed (said once). NULL is a no-op. */
int gdrb_counters_file_close(struct gdrb_counters_file *file);
/* The counter file's header line, from counters_schema.def. */
const char *gdrb_counters_header(void);

/*
 * Every rank, after the last size (`size`, for a timeout's message): rank 0
 * gathers every rank's first and last readings, appends them to `file`
 * (NULL: no file) with the run's start and end, and prints onto `out` what
 * rose over the run. 0, or GDRB_ERR (a rank lost, no memory, the file not
 * written).
 */
int gdrb_counters_finish(struct gdrb_counters *cs, struct gdrb_boot *b, const char *benchmark,
			 size_t size, struct gdrb_counters_file *file, FILE *out);

#endif
