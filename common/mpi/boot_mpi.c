/* SPDX-License-Identifier: BSD-3-Clause */
/* The MPI bootstrap: ranks, hosts, the collectives the driver needs; the library and its CUDA-awareness. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#if HAVE_MPI_EXT_H
#include <mpi-ext.h>
#endif

#include "gdrb_boot.h"
#include "gdrb_boot_mpi.h"
#include "gdrb_log.h"
#include "gdrb_watchdog.h"

#define MPI_CHECK(call)                                                           \
	do {                                                                      \
		int rc_ = (call);                                                 \
		if (rc_ != MPI_SUCCESS) {                                         \
			char msg_[MPI_MAX_ERROR_STRING];                          \
			int len_ = 0;                                             \
			MPI_Error_string(rc_, msg_, &len_);                       \
			gdrb_err("%s failed: %s", #call, msg_);                   \
			return GDRB_ERR;                                          \
		}                                                                 \
	} while (0)

/* The library this process runs on; one per process, as MPI_Init is. */
static struct gdrb_mpi_lib lib;

/* The named steps' messages, apart from every benchmark's own (its tags cannot match them). */
static MPI_Comm steps_comm = MPI_COMM_NULL;

const struct gdrb_mpi_lib *gdrb_mpi_lib(void)
{
	return &lib;
}

void gdrb_mpi_cuda_want(enum gdrb_mpi_cuda want)
{
	lib.cuda_aware = gdrb_mpi_cuda_decide(want, &lib.facts, lib.cuda_aware_why,
					      sizeof(lib.cuda_aware_why));
}

/* Open MPI's built_with_cuda_support parameter through the MPI tool interface, where it has one. */
static void built_with_cuda(struct gdrb_mpi_cuda_facts *f)
{
	static const char *const names[] = { "mpi_built_with_cuda_support", "opal_built_with_cuda_support" };
	int provided, i;

	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
		return;
	for (i = 0; i < 2; i++) {
		MPI_T_cvar_handle h;
		int index, count, value = 0;

		if (MPI_T_cvar_get_index(names[i], &index) != MPI_SUCCESS)
			continue;
		if (MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS)
			continue;
		if (count == 1 && MPI_T_cvar_read(h, &value) == MPI_SUCCESS) {
			snprintf(f->built_name, sizeof(f->built_name), "%s", names[i]);
			f->built = value;
		}
		MPI_T_cvar_handle_free(&h);
		if (f->built_name[0])
			break;
	}
	MPI_T_finalize();
}

/* Ask MPI what it can ask (configure found which); --mpi-cuda may overrule it. */
static void detect_cuda_aware(void)
{
	struct gdrb_mpi_cuda_facts *f = &lib.facts;

	memset(f, 0, sizeof(*f));
#if HAVE_MPIX_QUERY_CUDA_SUPPORT
	f->have_query = true;
	f->query = MPIX_Query_cuda_support();
#endif
#if defined(MPIX_CUDA_AWARE_SUPPORT)
	f->have_macro = true;
	f->macro = MPIX_CUDA_AWARE_SUPPORT;
#endif
	/*
	 * Only where the MPI says nothing else: MPI_T_init_thread and MPI_T_finalize outside
	 * MPI_Init let Open MPI 4.1 load and unload components that hold libibverbs' providers,
	 * and a verbs benchmark's ibv_get_device_list then crashed in the soft-RoCE VMs.
	 */
	if (!f->have_query && !f->have_macro)
		built_with_cuda(f);
	lib.cuda_detected = gdrb_mpi_cuda_decide(GDRB_MPI_CUDA_AUTO, f, NULL, 0);
	gdrb_mpi_cuda_want(GDRB_MPI_CUDA_AUTO);
}

static void mpi_describe(const struct gdrb_boot *b, char *line, size_t len)
{
	(void)b;
	snprintf(line, len, "MPI: %s; CUDA-aware: %s (%s)", lib.name, lib.cuda_aware ? "yes" : "no",
		 lib.cuda_aware_why);
}

/* The MPI benchmarks' header also says where the transport column comes from. */
static void mpi_ucx_describe(const struct gdrb_boot *b, char *line, size_t len)
{
	const char *state = gdrb_mpi_ucx_state();
	size_t at;

	mpi_describe(b, line, len);
	at = strlen(line);
	if (at < len)
		snprintf(line + at, len - at, "\n# transport: %s%s", state[0] ? "unknown, " : "",
			 state[0] ? state : "from UCX's protocol selection (UCX_PROTO_INFO) in each rank's private log, read back after each size");
}

static int mpi_init(struct gdrb_boot *b, int *argc, char ***argv)
{
	char version[MPI_MAX_LIBRARY_VERSION_STRING];
	char host[MPI_MAX_PROCESSOR_NAME];
	int len = 0;

	MPI_CHECK(MPI_Init(argc, argv));
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &b->rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &b->size));
	MPI_Get_library_version(version, &len);
	version[strcspn(version, ",\n")] = '\0';
	snprintf(lib.name, sizeof(lib.name), "%.127s", version);

	b->hosts = calloc((size_t)b->size, sizeof(*b->hosts));
	if (!b->hosts) {
		gdrb_err("out of memory for %d host names", b->size);
		return GDRB_ERR;
	}
	MPI_CHECK(MPI_Get_processor_name(host, &len));
	snprintf(b->hosts[b->rank], GDRB_HOST_MAX, "%.63s", host);
	MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b->hosts, GDRB_HOST_MAX,
				MPI_CHAR, MPI_COMM_WORLD));
	gdrb_boot_derive_hosts(b);
	MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &steps_comm));
	detect_cuda_aware();
	return 0;
}

static int mpi_ucx_init(struct gdrb_boot *b, int *argc, char ***argv)
{
	int rc;

	gdrb_mpi_ucx_arm();
	rc = mpi_init(b, argc, argv);
	gdrb_mpi_ucx_settle();
	return rc;
}

static int mpi_barrier(struct gdrb_boot *b)
{
	(void)b;
	MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
	return 0;
}

static MPI_Op to_mpi_op(enum gdrb_reduce_op op)
{
	return op == GDRB_OP_MAX ? MPI_MAX : op == GDRB_OP_MIN ? MPI_MIN : MPI_SUM;
}

static int mpi_allreduce_u64(struct gdrb_boot *b, uint64_t *v, size_t n, enum gdrb_reduce_op op)
{
	(void)b;
	MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, to_mpi_op(op),
				MPI_COMM_WORLD));
	return 0;
}

static int mpi_allreduce_double(struct gdrb_boot *b, double *v, size_t n, enum gdrb_reduce_op op)
{
	(void)b;
	MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, to_mpi_op(op),
				MPI_COMM_WORLD));
	return 0;
}

static int mpi_gather(struct gdrb_boot *b, const void *send, size_t len, void *recv)
{
	(void)b;
	MPI_CHECK(MPI_Gather(send, (int)len, MPI_BYTE, recv, (int)len, MPI_BYTE, 0,
			     MPI_COMM_WORLD));
	return 0;
}

static int mpi_bcast(struct gdrb_boot *b, void *buf, size_t len, int root)
{
	(void)b;
	MPI_CHECK(MPI_Bcast(buf, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
	return 0;
}

static int mpi_sendrecv(struct gdrb_boot *b, int to, const void *send, size_t slen, int from,
			void *recv, size_t rlen)
{
	(void)b;
	if (slen > INT_MAX || rlen > INT_MAX) {
		gdrb_err("a bootstrap step of %zu bytes: more than MPI counts in one message",
			 slen > rlen ? slen : rlen);
		return GDRB_ERR;
	}
	MPI_CHECK(MPI_Sendrecv(send, (int)slen, MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, 0, recv,
			       (int)rlen, MPI_BYTE, from < 0 ? MPI_PROC_NULL : from, 0, steps_comm,
			       MPI_STATUS_IGNORE));
	return 0;
}

static void mpi_finalize(struct gdrb_boot *b)
{
	free(b->hosts);
	b->hosts = NULL;
	if (steps_comm != MPI_COMM_NULL)
		MPI_Comm_free(&steps_comm);
	MPI_Finalize();
}

static void mpi_abort(struct gdrb_boot *b, int code)
{
	(void)b;
	/* What must not be left behind (a private folder) goes before the process does. */
	gdrb_watchdog_run_on_exit();
	MPI_Abort(MPI_COMM_WORLD, code);
}

/* The MPI bootstrap's operations; the two boots differ in how they start and what they say. */
#define MPI_BOOT(init_fn, describe_fn) {				\
	.name = "MPI",							\
	.init = init_fn,						\
	.barrier = mpi_barrier,						\
	.allreduce_u64 = mpi_allreduce_u64,				\
	.allreduce_double = mpi_allreduce_double,			\
	.gather = mpi_gather,						\
	.bcast = mpi_bcast,						\
	.sendrecv = mpi_sendrecv,					\
	.finalize = mpi_finalize,					\
	.abort = mpi_abort,						\
	.describe = describe_fn,					\
}

struct gdrb_boot gdrb_boot_mpi = MPI_BOOT(mpi_init, mpi_describe);

/* The MPI benchmarks': UCX's protocol selection captured per rank (the transport column). */
struct gdrb_boot gdrb_boot_mpi_ucx = MPI_BOOT(mpi_ucx_init, mpi_ucx_describe);
