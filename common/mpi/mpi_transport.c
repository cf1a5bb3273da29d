/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which transport MPI really used, from UCX's protocol selection tables: UCX_PROTO_INFO=y
 * with UCX_LOG_FILE in a private folder during MPI_Init (UCX opens its log when it is
 * loaded), the file then unlinked and read through its descriptor after each size.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_log.h"
#include "gdrb_mpi_p2p.h"
#include "gdrb_ucx_proto.h"
#include "gdrb_watchdog.h"

static struct {
	int fd;                 /* UCX's log of this process, unlinked; -1: none */
	bool proto_set;         /* UCX_PROTO_INFO is ours */
	char dir[200], file[240];
	char why[240];          /* why there is no log to read, when fd < 0 */
} ucx = { .fd = -1 };

/* Async-signal-safe: a timeout inside MPI_Init leaves nothing behind. */
static void remove_private(void)
{
	if (ucx.dir[0]) {
		unlink(ucx.file);
		rmdir(ucx.dir);
	}
}

void gdrb_mpi_ucx_arm(void)
{
	const char *tmp = getenv("TMPDIR"), *log = getenv("UCX_LOG_FILE");
	void *ucs;

	if (log && *log) {
		snprintf(ucx.why, sizeof(ucx.why),
			 "UCX_LOG_FILE is set, so UCX's protocol tables go to that file, which is not read back");
		return;
	}
	ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_NOLOAD);
	if (ucs) {
		dlclose(ucs);
		snprintf(ucx.why, sizeof(ucx.why),
			 "UCX was loaded before MPI_Init (linked into the program or the MPI library), so its log could not be sent to a private file");
		return;
	}
	if (!tmp || tmp[0] != '/' || strlen(tmp) > 160)
		tmp = "/tmp";
	snprintf(ucx.dir, sizeof(ucx.dir), "%s/gdrb-ucx.XXXXXX", tmp);
	if (!mkdtemp(ucx.dir)) {
		snprintf(ucx.why, sizeof(ucx.why), "no private folder for UCX's log under TMPDIR: %s",
			 strerror(errno));
		ucx.dir[0] = '\0';
		return;
	}
	snprintf(ucx.file, sizeof(ucx.file), "%s/ucx.log", ucx.dir);
	gdrb_watchdog_on_exit(remove_private);
	ucx.proto_set = !getenv("UCX_PROTO_INFO");
	if ((ucx.proto_set && setenv("UCX_PROTO_INFO", "y", 1)) || setenv("UCX_LOG_FILE", ucx.file, 1))
		snprintf(ucx.why, sizeof(ucx.why), "UCX's environment could not be set: %s", strerror(errno));
}

void gdrb_mpi_ucx_settle(void)
{
	if (!ucx.dir[0])
		return;
	ucx.fd = open(ucx.file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (ucx.fd < 0) {
		snprintf(ucx.why, sizeof(ucx.why),
			 "UCX wrote no log during MPI_Init: this MPI did not load UCX (e.g. Open MPI on ob1), or its UCX opened no log file");
		/* A UCX loaded later prints no table where the results go. */
		if (ucx.proto_set)
			unsetenv("UCX_PROTO_INFO");
		unsetenv("UCX_LOG_FILE");
	}
	remove_private();
	ucx.dir[0] = '\0';
	gdrb_watchdog_on_exit(NULL);
}

const char *gdrb_mpi_ucx_state(void)
{
	return ucx.fd >= 0 ? "" : ucx.why[0] ? ucx.why : "UCX's log was not captured";
}

/* What one rank learned for this size, sent to rank 0. */
struct rank_tx {
	uint32_t bits;          /* 1 << enum gdrb_ucx_transport */
	uint32_t rows;          /* protocol rows that cover the size */
	char why[232];          /* why none, when rows is 0 */
};

static void own_tx(const struct gdrb_ctx *c, size_t size, struct rank_tx *t)
{
	const char *mem = !c->variant->staged && gdrb_mem_kind(c->p->mem)->on_gpu ? "cuda" : "host";
	bool upto = c->bench->traffic == GDRB_TRAFFIC_COLLECTIVE;
	struct gdrb_ucx_proto *p;
	char why[160];

	memset(t, 0, sizeof(*t));
	if (ucx.fd < 0) {
		snprintf(t->why, sizeof(t->why), "%.231s", gdrb_mpi_ucx_state());
		return;
	}
	/* UCX's log is a stdio stream it flushes only on errors: every stream of the process. */
	fflush(NULL);
	p = malloc(sizeof(*p));
	if (!p || gdrb_ucx_proto_read_fd(p, ucx.fd, (long)getpid(), why, sizeof(why))) {
		snprintf(t->why, sizeof(t->why), "%s", p ? why : "no memory to read UCX's log");
		free(p);
		return;
	}
	t->bits = gdrb_ucx_transports(p, mem, size, upto, &t->rows);
	if (!t->rows)
		snprintf(t->why, sizeof(t->why),
			 "UCX printed no protocol table for %s memory at this size (%u table(s) in its log): this MPI did not send through UCX, or its UCX prints none (older than 1.15, or UCX_PROTO_ENABLE=n)",
			 mem, p->ntables);
	free(p);
}

/* Rank 0: the rows' transport and note from every rank's. */
static void summarise(struct gdrb_ctx *c, const struct rank_tx *all, int n)
{
	const struct gdrb_mpi_lib *lib = gdrb_mpi_lib();
	bool gpu = !c->variant->staged && gdrb_mem_kind(c->p->mem)->on_gpu;
	unsigned bits = 0;
	int r, blind = -1, at = 0;

	for (r = 0; r < n; r++) {
		if (all[r].rows)
			bits |= all[r].bits;
		else if (blind < 0)
			blind = r;
	}
	if (blind >= 0)
		bits |= 1u << GDRB_UCX_UNKNOWN;
	gdrb_ucx_transports_text(bits, c->lib_transport, sizeof(c->lib_transport));
	snprintf(c->lib_name, sizeof(c->lib_name), "%.63s", lib->name);
	c->lib_note[0] = '\0';
	if (blind >= 0)
		at = snprintf(c->lib_note, sizeof(c->lib_note), "transport unknown: rank %d: %.232s",
			      blind, all[blind].why);
	else if (bits & (1u << GDRB_UCX_UNKNOWN))
		at = snprintf(c->lib_note, sizeof(c->lib_note),
			      "transport unknown: a UCX protocol row this reader does not understand");
	if (gpu && (bits & (1u << GDRB_UCX_HOST_PIPELINE)) && at >= 0 && (size_t)at < sizeof(c->lib_note))
		at += snprintf(c->lib_note + at, sizeof(c->lib_note) - (size_t)at,
			       "%sUCX staged the GPU memory through host memory (host-pipeline), not GPU to GPU",
			       at ? "; " : "");
	if (gpu && at >= 0 && (size_t)at < sizeof(c->lib_note))
		snprintf(c->lib_note + at, sizeof(c->lib_note) - (size_t)at, "%sCUDA-aware: %s (%.200s)",
			 at ? "; " : "", lib->cuda_aware ? "yes" : "no", lib->cuda_aware_why);
}

int gdrb_mpi_transport_end(struct gdrb_ctx *c, size_t size)
{
	struct gdrb_boot *b = c->boot;
	struct rank_tx mine, *all = NULL;
	int rc;

	own_tx(c, size, &mine);
	if (b->rank == 0 && !(all = calloc((size_t)b->size, sizeof(*all))))
		return GDRB_ERR;
	rc = gdrb_boot_step_gather(b, &mine, sizeof(mine), all, "reading UCX's protocol tables", size);
	if (!rc && b->rank == 0) {
		int r;

		for (r = 0; r < b->size; r++)
			all[r].why[sizeof(all[r].why) - 1] = '\0';
		summarise(c, all, b->size);
	}
	free(all);
	return rc;
}
