/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NCCL's communicator and its stream: started with the environment set (nccl_setup.c),
 * watched by the watchdog, waited on, aborted after an error or a timeout, closed (nccl_int.h).
 * After each size the log is read back in nccl_readback.c.
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_coll_opts.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_watchdog.h"
#include "nccl_int.h"

static struct gdrb_nccl the;

const struct gdrb_nccl *gdrb_nccl(void)
{
	return &the;
}

struct gdrb_nccl *gdrb_nccl_mine(void)
{
	return &the;
}

/* What the test suite's simulated NCCL exports (tests/support/simnccl): never real NCCL. */
#define SIMNCCL_MARKER "gdrb_simnccl_simulated"

void gdrb_nccl_bench(struct gdrb_bench *b, const char *name, const char *summary,
		     const struct gdrb_opt_use *groups, const struct gdrb_opt_group *const *known)
{
	*b = (struct gdrb_bench){
		.name = name,
		.layer = "nccl",
		.summary = summary,
		.metric = GDRB_METRIC_LAT,
		.traffic = GDRB_TRAFFIC_COLLECTIVE,
		.opt_core = GDRB_OPTG_MEM | GDRB_OPTG_NO_STAGING,
		.opt_groups = groups,
		.opt_known = known,
		.default_mem = GDRB_MEM_DEVICE,
		.paths = gdrb_nccl_path,
		.preflight = gdrb_nccl_preflight,
		.end = gdrb_nccl_end,
	};
}

size_t gdrb_nccl_path(const struct gdrb_ctx *c, struct gdrb_variant *v)
{
	int gdr = gdrb_nccl_params(c->p)->gdr;

	v->label = gdr == GDRB_NCCL_GDR_OFF ? "staged" : "direct";
	v->path = v->label;
	v->mem = gdrb_mem_kind_name(c->p->mem);
	v->reg = "nccl";
	v->how = gdr == GDRB_NCCL_GDR_OFF ?
		 "NCCL with GPUDirect RDMA off (NCCL_NET_GDR_LEVEL=LOC): its network connections stage through host memory" :
		 gdr == GDRB_NCCL_GDR_ON ?
		 "NCCL with GPUDirect RDMA allowed at any GPU-NIC distance (NCCL_NET_GDR_LEVEL=SYS); the transport columns say whether it was used" :
		 "NCCL as it chooses (GPUDirect RDMA where the GPU and NIC are close enough); the transport columns say whether it was used";
	v->supported = true;
	v->staged = false;      /* NCCL stages on its own: no bounce buffer of the driver's */
	return 1;
}

int gdrb_nccl_check_mem(const struct gdrb_ctx *c)
{
	if (c->p->mem == GDRB_MEM_HOST) {
		gdrb_usage_err("--mem host: NCCL's kernels read and write GPU-accessible memory only; accepted: device (the default), pinned");
		return GDRB_ERR_USAGE;
	}
	if (!gdrb_mem_kind(c->p->mem)->on_gpu && c->p->mem != GDRB_MEM_PINNED) {
		gdrb_usage_err("--mem %s: NCCL takes device or pinned memory; accepted: device (the default), pinned",
			       gdrb_mem_kind_name(c->p->mem));
		return GDRB_ERR_USAGE;
	}
#if !HAVE_DECL_NCCLBFLOAT16
	if (gdrb_coll_params(c->p) && gdrb_coll_params(c->p)->dtype == GDRB_BFLOAT16) {
		gdrb_usage_err("--dtype bfloat16: the NCCL this was built with (%s) has no bfloat16; accepted: int8, int32, int64, float, double, half",
			       GDRB_NCCL_VERSION_STRING);
		return GDRB_ERR_USAGE;
	}
#endif
	return 0;
}

/* How many RDMA devices sysfs lists here (-1: cannot tell). */
static int rdma_devices(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *de;
	int k = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			k++;
	closedir(d);
	return k;
}

/* ---- the communicator ---- */

/* Where the communicator stands, for the watchdog's thread (atomic). */
enum { COMM_NONE, COMM_CREATING, COMM_READY };
static int comm_state;
static int comm_rank = -1;

/*
 * The watchdog's abort after a timeout, on its own thread while the main thread is still
 * stuck. A communicator that exists is aborted: ncclCommAbort raises the abort flags that
 * NCCL's proxy thread and kernels poll, so that a collective waiting on a lost peer ends
 * and the network connections are torn down before the process leaves. One still inside a
 * blocking ncclCommInitRank is not: NCCL hands it over only when the call returns (on an
 * error the call frees it itself), so aborting it from another thread would free it under
 * the initialisation still running; the non-blocking creation NCCL lets another thread
 * abort would make every later collective a background thread's job (group.cc), which
 * would change the timing. That rank's process ends, which closes NCCL's bootstrap sockets.
 */
static void abort_comm(void)
{
	int state = __atomic_load_n(&comm_state, __ATOMIC_ACQUIRE);

	if (state == COMM_READY) {
		__atomic_store_n(&comm_state, COMM_NONE, __ATOMIC_RELEASE);
		gdrb_warn("rank %d: timeout: aborting NCCL's communicator (ncclCommAbort) before exiting", comm_rank);
		(void)ncclCommAbort(the.comm);
	} else if (state == COMM_CREATING) {
		gdrb_warn("rank %d: timeout inside ncclCommInitRank: no communicator to abort yet (NCCL hands it over only when the call returns); exiting",
			  comm_rank);
	}
}

/* NCCL's last error ("" where it has none): the logger cleans it for the terminal. */
static const char *last_error(ncclComm_t comm)
{
	const char *e = ncclGetLastError(comm);

	return e ? e : "";
}

int gdrb_nccl_open(struct gdrb_ctx *c)
{
	struct gdrb_nccl *n = &the;
	struct gdrb_boot *b = c->boot;
	struct gdrb_nccl_fail_note mine = { 0 }, *all = NULL;
	ncclUniqueId id;
	ncclResult_t nr = ncclSuccess;
	int rc, rc2, v = 0, r, nfailed = 0;

	memset(n, 0, sizeof(*n));
	gdrb_nccl_own_host(n->host, sizeof(n->host));
	n->pid = (long)getpid();
	n->simulated = dlsym(RTLD_DEFAULT, SIMNCCL_MARKER) != NULL;
	if (ncclGetVersion(&v) == ncclSuccess) {
		n->version = v;
		/* NCCL_VERSION_CODE: X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since. */
		if (v >= 10000)
			snprintf(n->library, sizeof(n->library), "NCCL %d.%d.%d%s", v / 10000, v / 100 % 100,
				 v % 100, n->simulated ? " (simulated)" : "");
		else
			snprintf(n->library, sizeof(n->library), "NCCL %d.%d.%d%s", v / 1000, v / 100 % 10,
				 v % 100, n->simulated ? " (simulated)" : "");
	} else {
		snprintf(n->library, sizeof(n->library), "NCCL (version unknown)%s",
			 n->simulated ? " (simulated)" : "");
	}
	/* NCCL's files, before gdrbench sets its own variables: what a file gives and what the environment overrides. */
	if (b->rank == 0)
		gdrb_nccl_conf_read(&n->conf, n->version, getenv("NCCL_CONF_FILE"), getenv("HOME"),
				    gdrb_inject()->nccl_etc_conf ? gdrb_inject()->nccl_etc_conf : "/etc/nccl.conf");
	rc = gdrb_nccl_setup_env(c, n);
	rc = gdrb_boot_agree(b, rc);
	if (rc)
		return rc;
	gdrb_nccl_read_env(c, n);
	n->rdma_devices = b->rank == 0 ? rdma_devices() : -1;
	gdrb_nccl_env_version_differs(n);

	/*
	 * NCCL's bootstrap and initialisation wait on every rank: a rank that never comes, or
	 * one stuck inside NCCL, ends the run after GDRB_WATCHDOG_COLLECTIVE x --timeout; a rank
	 * that returns waits on each of the others, by name, in the gather below.
	 */
	if (gdrb_watchdog_start(c->p->timeout))
		return GDRB_ERR;
	gdrb_watchdog_collective("NCCL's bootstrap and initialisation (ncclGetUniqueId, ncclCommInitRank: every rank must join)",
				 "starting NCCL", GDRB_WATCHDOG_NO_SIZE);
	memset(&id, 0, sizeof(id));
	if (b->rank == 0 && (nr = ncclGetUniqueId(&id)) != ncclSuccess)
		snprintf(mine.text, sizeof(mine.text), "ncclGetUniqueId: %s", ncclGetErrorString(nr));
	rc = gdrb_boot_agree(b, nr == ncclSuccess ? 0 : GDRB_ERR_UNSUPP);
	if (!rc)
		rc = b->bcast(b, &id, sizeof(id), 0) ? GDRB_ERR : 0;
	if (!rc) {
		cudaError_t ce = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);

		if (ce != cudaSuccess) {
			snprintf(mine.text, sizeof(mine.text), "cudaStreamCreateWithFlags: %s",
				 cudaGetErrorString(ce));
			nr = ncclUnhandledCudaError;
		} else {
			n->have_stream = true;
			comm_rank = b->rank;
			__atomic_store_n(&comm_state, COMM_CREATING, __ATOMIC_RELEASE);
			gdrb_watchdog_on_abort(abort_comm);
			nr = ncclCommInitRank(&n->comm, b->size, id, b->rank);
			__atomic_store_n(&comm_state, nr == ncclSuccess ? COMM_READY : COMM_NONE, __ATOMIC_RELEASE);
			if (nr == ncclSuccess)
				n->have_comm = true;
			else
				snprintf(mine.text, sizeof(mine.text), "ncclCommInitRank: %s (%s)",
					 ncclGetErrorString(nr), last_error(NULL));
		}
		rc = nr == ncclSuccess ? 0 : GDRB_ERR_UNSUPP;
	}
	mine.failed = rc != 0;
	if (b->rank == 0 && !(all = calloc((size_t)b->size, sizeof(*all)))) {
		gdrb_watchdog_stop();
		return GDRB_ERR;
	}
	rc2 = gdrb_boot_step_gather(b, &mine, sizeof(mine), all, "starting NCCL", GDRB_WATCHDOG_NO_SIZE);
	gdrb_watchdog_stop();
	if (rc2) {
		free(all);
		return GDRB_ERR;
	}
	if (b->rank == 0) {
		int first = -1;

		for (r = 0; r < b->size; r++) {
			all[r].text[sizeof(all[r].text) - 1] = '\0';
			if (all[r].failed && !nfailed++)
				first = r;
		}
		/* One line: the first rank's cause, how many failed, and a shared GPU where there is one. */
		if (first >= 0)
			gdrb_err("NCCL cannot run here: rank %d (%s): %s (%d of %d ranks failed)%s%s%s", first,
				 b->hosts[first], all[first].text, nfailed, b->size,
				 c->gpu_shared[0] ? "; " : "", c->gpu_shared,
				 c->gpu_shared[0] ? ": NCCL needs a GPU of its own for each rank" : "");
	}
	free(all);
	return gdrb_boot_agree(b, rc);
}

int gdrb_nccl_check(const struct gdrb_ctx *c, ncclResult_t rc, const char *what, size_t size)
{
	struct gdrb_nccl *n = &the;

	if (rc == ncclSuccess)
		return 0;
	n->failed = true;
	gdrb_err("rank %d: NCCL error in %s at size %zu: %s (%s)", c->boot->rank, what, size,
		 ncclGetErrorString(rc), last_error(n->comm));
	return GDRB_ERR;
}

int gdrb_nccl_sync(const struct gdrb_ctx *c, const char *what, size_t size)
{
	struct gdrb_nccl *n = &the;

	for (;;) {
		cudaError_t ce = cudaStreamQuery(n->stream);
		ncclResult_t ar = ncclSuccess;

		if (ce == cudaSuccess)
			return 0;
		if (ce != cudaErrorNotReady) {
			n->failed = true;
			gdrb_err("rank %d: CUDA error waiting for %s at size %zu: %s", c->boot->rank, what, size,
				 cudaGetErrorString(ce));
			return GDRB_ERR;
		}
		if (ncclCommGetAsyncError(n->comm, &ar) != ncclSuccess || (ar != ncclSuccess && ar != ncclInProgress))
			return gdrb_nccl_check(c, ar != ncclSuccess ? ar : ncclInternalError, what, size);
		/* NCCL's proxy thread may share this core (nccl-tests' testStreamSynchronize yields too). */
		sched_yield();
	}
}

void gdrb_nccl_describe(const struct gdrb_ctx *c, char *buf, size_t len)
{
	const struct gdrb_nccl *n = &the;

	char conf[1536];

	gdrb_nccl_conf_describe(&n->conf, conf, sizeof(conf));
	snprintf(buf, len,
		 "%s%s; %s\n"
		 "# NCCL's INFO log: each rank's is read back after every size (%s); the CSV transport column lists the transports of its connections, gdr_connections the network connections that used GPUDirect RDMA (/GDRDMA) of all\n"
		 "# NCCL environment (rank 0): %s\n"
		 "# %s",
		 n->library, n->simulated ? ": the test suite's simulated NCCL (tests/support/simnccl), which proves behaviour, never speed" : "",
		 n->setting, n->dir[0] ? "a private file per rank" : "the file NCCL_DEBUG_FILE names",
		 n->env[0] ? n->env : "none", conf);
	(void)c;
}

void gdrb_nccl_close(void)
{
	struct gdrb_nccl *n = &the;

	/* From here the main thread owns the teardown: the watchdog aborts nothing more. */
	gdrb_watchdog_on_abort(NULL);
	__atomic_store_n(&comm_state, COMM_NONE, __ATOMIC_RELEASE);
	if (n->have_comm) {
		if (n->failed)
			ncclCommAbort(n->comm);
		else
			ncclCommDestroy(n->comm);
		n->have_comm = false;
	}
	if (n->have_stream) {
		cudaStreamDestroy(n->stream);
		n->have_stream = false;
	}
	if (n->dir[0]) {
		gdrb_nccl_echo(n);
		gdrb_nccl_guard_private(false);
		unlink(n->log);
		rmdir(n->dir);
		n->dir[0] = '\0';
	}
}
