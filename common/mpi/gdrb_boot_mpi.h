/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI layer's bootstrap (libgdrbench_mpi), the library it runs on and
 * whether that takes device pointers, and the MPI option group (--mpi-cuda,
 * mpi_opts.c). Needs no mpi.h.
 */
#ifndef GDRB_BOOT_MPI_H
#define GDRB_BOOT_MPI_H

#include <stdbool.h>
#include <stddef.h>

#include "gdrb_boot.h"
#include "gdrb_opts.h"

/* --mpi-cuda: whether MPI may be handed device pointers (auto: ask MPI). */
enum gdrb_mpi_cuda { GDRB_MPI_CUDA_AUTO, GDRB_MPI_CUDA_YES, GDRB_MPI_CUDA_NO, GDRB_MPI_CUDA_COUNT };

extern const char *const gdrb_mpi_cuda_names[GDRB_MPI_CUDA_COUNT];

/* What an MPI library says of its CUDA support, where it says anything. */
struct gdrb_mpi_cuda_facts {
	bool have_query;        /* MPIX_Query_cuda_support() exists (Open MPI, MPICH >= 4) ... */
	int query;              /* ... and answered this at run time */
	bool have_macro;        /* mpi-ext.h defines MPIX_CUDA_AWARE_SUPPORT (Open MPI) ... */
	int macro;              /* ... to this */
	/* Open MPI's read-only parameter, through MPI_T: mpi_built_with_cuda_support (5.x),
	 * opal_built_with_cuda_support (4.x); name "" where the MPI has neither. */
	char built_name[40];
	int built;
};

/*
 * Whether MPI takes device pointers: --mpi-cuda yes or no decides; auto takes
 * the run-time query's answer, else the compile-time macro's, else Open MPI's
 * built_with_cuda_support parameter, else no. why
 * (NULL: not wanted) gets "by ...", naming what decided and what was detected.
 */
bool gdrb_mpi_cuda_decide(enum gdrb_mpi_cuda want, const struct gdrb_mpi_cuda_facts *f,
			  char *why, size_t len);

/* The MPI options: their params and which a binary offers (struct gdrb_opt_use.select). */
struct gdrb_mpi_params {
	int cuda;               /* enum gdrb_mpi_cuda */
};

enum { GDRB_MPI_OPT_CUDA = 1u << 0 };

extern const struct gdrb_opt_group gdrb_mpi_opts;

/* The MPI library the bootstrap found, and whether it takes device pointers. */
struct gdrb_mpi_lib {
	char name[128];                 /* "Open MPI v4.1.4" */
	struct gdrb_mpi_cuda_facts facts;
	bool cuda_aware;                /* device pointers may be handed to it */
	bool cuda_detected;             /* what MPI itself says (--mpi-cuda auto) */
	char cuda_aware_why[384];       /* how that was decided: "by ..." */
};

extern struct gdrb_boot gdrb_boot_mpi;
/*
 * The same bootstrap for the MPI benchmarks, which also capture UCX's protocol
 * selection (UCX_PROTO_INFO) into a private log during MPI_Init, read back by
 * gdrb_mpi_transport_end (gdrb_mpi_p2p.h) for the CSV transport column.
 */
extern struct gdrb_boot gdrb_boot_mpi_ucx;

/* Before MPI_Init: UCX's log into a private file (unless the user sends it elsewhere). */
void gdrb_mpi_ucx_arm(void);
/* After MPI_Init: the log opened and its folder removed; nothing to read where UCX wrote none. */
void gdrb_mpi_ucx_settle(void);
/* "" where UCX's log is being read; else why not (one clause). */
const char *gdrb_mpi_ucx_state(void);

/* After gdrb_boot_mpi's init: the library, CUDA-awareness as auto decides until gdrb_mpi_cuda_want. */
const struct gdrb_mpi_lib *gdrb_mpi_lib(void);
/* Decide CUDA-awareness for --mpi-cuda want (the MPI transports' setup, on every rank). */
void gdrb_mpi_cuda_want(enum gdrb_mpi_cuda want);

#endif
