/* SPDX-License-Identifier: BSD-3-Clause */
/* The opening every entry point of a run shares (gdrb_run.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdrb_clock.h"
#include "gdrb_inject.h"
#include "gdrb_log.h"
#include "gdrb_report.h"
#include "gdrb_run.h"
#include "gdrb_stage.h"

/* How long a rank that is not the leader waits after bad usage. */
#define USAGE_LINGER_S 10

bool gdrb_run_begin(const struct gdrb_run_args *args, struct gdrb_boot *boot, int argc, char **argv,
		    struct gdrb_params *p, int *code)
{
	int rc;

	gdrb_log_init(argv[0]);
	gdrb_log_set_leader(gdrb_boot_rank_hint(boot) == 0);
	rc = gdrb_opts_parse(argc, argv, args->opts, args->summary, p);
	if (rc == GDRB_PARSE_EXIT) {    /* --help, --version */
		*code = gdrb_stdout_close() ? GDRB_EXIT_FAIL : GDRB_EXIT_OK;
		return false;
	}
	if (!rc && p->describe) {
		*code = gdrb_run_describe(args, p) || gdrb_stdout_close() ? GDRB_EXIT_FAIL : GDRB_EXIT_OK;
		return false;
	}
	if (!rc && gdrb_inject_load())
		rc = GDRB_ERR_USAGE;
	if (!rc && args->check)
		rc = args->check(p);
	if (rc) {
		/*
		 * Every rank parsed the same line and only the leader says why: a
		 * rank that left first could have its launcher kill the leader
		 * before the line is out. Its launcher ends it when the leader exits.
		 */
		if (!gdrb_log_is_leader())
			sleep(USAGE_LINGER_S);
		*code = GDRB_EXIT_USAGE;
		return false;
	}
	if (boot->init(boot, &argc, &argv)) {
		*code = GDRB_EXIT_FAIL;
		return false;
	}
	gdrb_log_set_rank(boot->size > 1 ? boot->rank : -1, boot->hosts[boot->rank]);
	gdrb_log_set_leader(boot->rank == 0);
	gdrb_clock_init(p->monotonic_clock);
	return true;
}

int gdrb_run_end(struct gdrb_boot *boot, int code)
{
	boot->finalize(boot);
	if (gdrb_stdout_close() && code == GDRB_EXIT_OK)
		code = GDRB_EXIT_FAIL;
	return code;
}

int gdrb_run_open_gpu(const struct gdrb_boot *boot, const struct gdrb_params *p, const char *measures,
		      struct gdrb_gpu_info *gpu, char *why, size_t len, bool *have_gpu)
{
	const struct gdrb_mem_kind_ops *kind = gdrb_mem_kind(p->mem);
	int rc;

	*have_gpu = false;
	if (!kind->opens_gpu && !measures)
		return 0;
	rc = gdrb_gpu_open(p->gpu, boot->local_rank, gpu, why, len);
	*have_gpu = rc == 0;
	if (rc == 0 || (!kind->needs_gpu && !measures))
		return 0;       /* the kind falls back without a GPU (pinned: mlock) */
	if (rc == GDRB_ERR_USAGE)
		gdrb_usage_err("%s", why);
	else if (gdrb_log_is_leader())
		gdrb_info("unsupported on this node: %s%s: %s", measures ? measures : "--mem ",
			  measures ? "" : kind->name, why);
	return rc;
}

/*
 * A staged path of the kind called `mem`: its bytes pass through pinned memory as `how` says.
 * The pipelined one overlaps CUDA's asynchronous copies (the rings' streams): a build without
 * CUDA has none, and says so in its rows (a kind registered from outside can be staged there).
 */
static struct gdrb_variant staged_path(const char *mem, const char *label, bool pipelined,
				       const char *how)
{
	struct gdrb_variant v = { .label = label, .mem = mem, .path = label, .reg = "staged",
				  .staged = true, .pipelined = pipelined, .supported = true,
				  .how = how };

	if (pipelined && !gdrb_cuda_built()) {
		v.supported = false;
		snprintf(v.why, sizeof(v.why), "pipelined staging overlaps CUDA's asynchronous copies: %s, "
			 "or use --staging serial", GDRB_NO_CUDA);
	}
	return v;
}

unsigned gdrb_run_paths(enum gdrb_mem_kind mem, enum gdrb_stage_shape shape, int staging,
			struct gdrb_variant *v)
{
	const char *name = gdrb_mem_kind_name(mem);
	unsigned n = 0;

	memset(v, 0, GDRB_RUN_PATHS_MAX * sizeof(*v));
	v[n++] = (struct gdrb_variant){
		.label = "direct", .mem = name, .path = "direct", .reg = "host", .supported = true,
		.how = shape == GDRB_SHAPE_PAIRS ? "the transport reads and writes the buffers itself" :
			"the transport reads and writes the buffer itself" };
	if (!gdrb_mem_kind(mem)->staged)
		return n;
	if (shape == GDRB_SHAPE_PAIRS) {
		v[n++] = staged_path(name, "staged", false, "cudaMemcpy of each whole message device->pinned before the window, pinned->device after it, copies timed (serial staging; --staging and --stage-chunk do not apply)");
		return n;
	}
	if (shape == GDRB_SHAPE_COLLECTIVE) {
		v[n++] = staged_path(name, "staged", false, "cudaMemcpy of the whole buffer to pinned memory before the collective and back after it, copies timed (not pipelined, whatever --staging says: each block of a blocked layout would travel as a strided fragment per call; allreduce, reduce and bcast pipeline)");
		return n;
	}
	if (staging != GDRB_STAGING_SERIAL)
		v[n++] = staged_path(name, "staged", true, "pipelined: fragments of --stage-chunk through pinned slots, cudaMemcpyAsync on a non-blocking stream per direction; the copy of one fragment overlaps the transfer of another, copies timed");
	if (staging != GDRB_STAGING_PIPELINED)
		v[n++] = staged_path(name, "staged-serial", false, "serial: cudaMemcpy of each whole message device->pinned before it is sent, pinned->device after the window arrived, copies timed");
	return n;
}

/* What each rank tells rank 0 about its GPU. */
struct gpu_seat {
	char bus[32];           /* "" without a GPU */
	int mps;                /* gdrb_gpu_info.mps */
};

static const char *mps_word(int mps)
{
	return mps > 0 ? "MPS on" : mps == 0 ? "MPS off" : "MPS unknown";
}

const char *gdrb_run_gpu_sharing_why(bool time_sliced)
{
	return time_sliced ?
		"without MPS the GPU time-slices between the ranks' processes and their copies wait for one another (a small staged message can take several times as long); give each rank its own GPU (--gpu, CUDA_VISIBLE_DEVICES) or start MPS (docs/gpu-sharing.md)" :
		"the ranks share its copy engines and its PCIe link (docs/gpu-sharing.md)";
}

int gdrb_run_gpu_sharing(struct gdrb_boot *boot, const struct gdrb_gpu_info *gpu, bool have_gpu,
			 char *note, size_t len, bool *time_sliced)
{
	struct gpu_seat me, *all = NULL;
	size_t at = 0;
	int i, j, groups = 0, rc = 0;
	bool *seen = NULL;

	note[0] = '\0';
	*time_sliced = false;
	if (boot->size < 2)
		return 0;
	memset(&me, 0, sizeof(me));
	if (have_gpu)
		snprintf(me.bus, sizeof(me.bus), "%s", gpu->pci_bus_id);
	me.mps = have_gpu ? gpu->mps : -1;
	if (boot->rank == 0) {
		all = calloc((size_t)boot->size, sizeof(*all));
		seen = calloc((size_t)boot->size, sizeof(*seen));
		if (!all || !seen)
			rc = GDRB_ERR;  /* the gather still runs, so that no rank waits for this one */
	}
	if (boot->gather(boot, &me, sizeof(me), all))
		rc = GDRB_ERR;
	if (rc || boot->rank != 0) {
		free(all);
		free(seen);
		return rc;
	}
	/* Ranks on one host with the same PCI address run on one GPU. */
	for (i = 0; i < boot->size; i++) {
		int n = 1;

		if (seen[i] || !all[i].bus[0])
			continue;
		for (j = i + 1; j < boot->size; j++)
			if (!seen[j] && !strcmp(all[i].bus, all[j].bus) &&
			    !strcmp(boot->hosts[i], boot->hosts[j])) {
				seen[j] = true;
				n++;
			}
		if (n == 1)
			continue;
		*time_sliced |= all[i].mps <= 0;
		if (groups++ < 4 && at < len)
			at += (size_t)snprintf(note + at, len - at, "%s%d ranks share GPU %s on %s (%s)",
					       at ? "; " : "", n, all[i].bus, boot->hosts[i],
					       mps_word(all[i].mps));
	}
	if (groups > 4 && at < len)
		snprintf(note + at, len - at, "; %d more GPUs shared", groups - 4);
	free(all);
	free(seen);
	return 0;
}

void gdrb_run_corrupt(const struct gdrb_boot *boot, struct gdrb_buf *buf, size_t off, size_t span)
{
	if (gdrb_inject()->corrupt_rank == boot->rank && span)
		gdrb_buf_corrupt(buf, off + span / 2);
}
