/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the NCCL layer: the process's one communicator and its stream (nccl_comm.c),
 * NCCL's environment set before it starts (nccl_setup.c) and its log read back after
 * each size (nccl_readback.c), shared by the collectives (nccl_coll.c) and send/receive
 * (nccl_sendrecv.c). gdrb_nccl_path and gdrb_nccl_end are the driver's `paths` and `end`
 * callbacks as they are.
 */
#ifndef GDRB_NCCL_INT_H
#define GDRB_NCCL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "gdrb_driver.h"
#include "gdrb_nccl_opts.h"
#include "nccl_env.h"

/* The size of a log path (expanded NCCL_DEBUG_FILE or the private file). */
#define GDRB_NCCL_LOG_LEN 384

/* The process's communicator (one: NCCL's environment is read once per process). */
struct gdrb_nccl {
	ncclComm_t comm;
	cudaStream_t stream;
	bool have_comm, have_stream;
	bool failed;                    /* an NCCL error was seen: abort, do not destroy */
	int version;                    /* ncclGetVersion */
	char host[256];                 /* this host's name as NCCL's log prefix has it (up to its first dot) */
	long pid;                       /* this process, the pid of its log prefix */
	bool simulated;                 /* the test suite's simnccl (its marker symbol) */
	char library[64];               /* "NCCL 2.28.9", "... (simulated)" */
	char dir[256];                  /* the private log's folder; "" when the user names the file */
	char log[GDRB_NCCL_LOG_LEN];                  /* the log this rank reads back; "" none */
	int echo;                       /* what the user's NCCL_DEBUG (without a file) showed on stdout:
					   0 nothing, 1 WARN lines, 2 every line; copied to stderr at the end */
	char env[640];                  /* rank 0: the NCCL_* variables in force, "NAME=VALUE ..." */
	char env_version[32];           /* rank 0: NCCL_VERSION's value (a container's label NCCL never reads) */
	char setting[320];              /* what --nccl-gdr and --nccl-net-only set, for the header */
	int rdma_devices;               /* RDMA devices in sysfs on rank 0 (-1 unknown) */
	bool tuning;                    /* the log holds NCCL's TUNING lines (rank 0 reads them) */
	long long tuning_at;            /* where the next size's TUNING lines start in the log */
	char choice_note[320];          /* rank 0: why the size's algorithm is not known, or where it came from */
	char subsys_added[64];          /* what NCCL_DEBUG_SUBSYS gained or lost for the log ("" nothing) */
	char nics[4 * 24];              /* rank 0: the NET/IB devices its connections used ("mlx5_1:1",
					   "+" between; "" none or not read): the rows' nic column */
	struct gdrb_nccl_conf conf;     /* rank 0: NCCL's configuration files (nccl_env.h) */
};

/*
 * A descriptor's fields every NCCL benchmark shares: name, layer nccl, latency figures of a
 * collective shape, device memory by default without staging options, its option groups
 * (ended by { NULL }) and the groups refused by name (known), the process's one path and the log read back after
 * each size. The caller adds its callbacks.
 */
void gdrb_nccl_bench(struct gdrb_bench *b, const char *name, const char *summary,
		     const struct gdrb_opt_use *groups, const struct gdrb_opt_group *const *known);

/* The one path of a process: direct with GPUDirect allowed, staged with it off. */
size_t gdrb_nccl_path(const struct gdrb_ctx *c, struct gdrb_variant *v);

/*
 * The options' rules that need nothing started (--mem, --dtype bfloat16 where NCCL
 * has none): 0 or GDRB_ERR_USAGE after one line.
 */
int gdrb_nccl_check_mem(const struct gdrb_ctx *c);

/*
 * The driver's `preflight`: NCCL_DEBUG_FILE judged on every rank before any output is
 * opened (a FIFO, a link, anything but a regular file, the --csv file or its counter
 * file: GDRB_ERR_USAGE after one line from rank 0); one without %p made one per rank
 * (NAME.%p, said once).
 */
int gdrb_nccl_preflight(struct gdrb_ctx *c);

/* Set NCCL's environment, then start the communicator and the stream; 0, GDRB_ERR_UNSUPP
 * after one line from rank 0 naming the first rank that failed and why, or GDRB_ERR. */
int gdrb_nccl_open(struct gdrb_ctx *c);

/* The communicator and its stream, once open. */
const struct gdrb_nccl *gdrb_nccl(void);

/* Wait for the stream (cudaStreamQuery polled, the CPU yielded between polls), watching
 * NCCL's asynchronous error: 0, or GDRB_ERR after one line naming this rank, what was
 * running and NCCL's error. */
int gdrb_nccl_sync(const struct gdrb_ctx *c, const char *what, size_t size);

/* Check an NCCL call's result the same way. */
int gdrb_nccl_check(const struct gdrb_ctx *c, ncclResult_t rc, const char *what, size_t size);

/* After a size: every rank's log read back, rank 0 fills c->lib_* (the driver's `end`). */
int gdrb_nccl_end(struct gdrb_ctx *c, size_t size);

/* The header's lines on NCCL (without the leading "# " of the first). */
void gdrb_nccl_describe(const struct gdrb_ctx *c, char *buf, size_t len);

/* Destroy (or, after an error, abort) the communicator; remove the private log. */
void gdrb_nccl_close(void);

/* ---- between the layer's own files ---- */

/* The communicator, writable (nccl_comm.c owns it). */
struct gdrb_nccl *gdrb_nccl_mine(void);

/* One line per rank that failed, gathered so that rank 0 says the first one once. */
struct gdrb_nccl_fail_note {
	int32_t failed;
	char text[472];
};

/* Copy untrusted text (the environment) as printable ASCII, ';' made '_', at most max bytes. */
void gdrb_nccl_clean(char *dst, size_t len, const char *src, size_t max);

/* This host's name as NCCL prints it (up to the first dot; "unknown" if none). */
void gdrb_nccl_own_host(char *host, size_t len);

/* nccl_setup.c: NCCL's variables set before it starts (0 or GDRB_ERR after one line); the
 * NCCL_* variables in force read for the header (rank 0); NCCL_VERSION's label checked. */
int gdrb_nccl_setup_env(const struct gdrb_ctx *c, struct gdrb_nccl *n);
void gdrb_nccl_read_env(const struct gdrb_ctx *c, struct gdrb_nccl *n);
void gdrb_nccl_env_version_differs(const struct gdrb_nccl *n);

/* While on, a timeout, a launcher's signal or a crash removes the private log folder too. */
void gdrb_nccl_guard_private(bool on);

/* What the user's NCCL_DEBUG would have shown on stdout, from the private log onto stderr. */
void gdrb_nccl_echo(const struct gdrb_nccl *n);

#endif
