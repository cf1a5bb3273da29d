/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether an MPI takes device pointers; no MPI header here, so that it is unit-tested. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "gdrb_boot_mpi.h"

const char *const gdrb_mpi_cuda_names[GDRB_MPI_CUDA_COUNT] = { "auto", "yes", "no" };

/* "MPIX_Query_cuda_support() = 0 at run time; MPIX_CUDA_AWARE_SUPPORT = 0 at compile time" */
static void detected(const struct gdrb_mpi_cuda_facts *f, char *out, size_t len)
{
	size_t at;

	if (f->have_query && f->have_macro)
		snprintf(out, len,
			 "MPIX_Query_cuda_support() = %d at run time; MPIX_CUDA_AWARE_SUPPORT = %d at compile time",
			 f->query, f->macro);
	else if (f->have_query)
		snprintf(out, len,
			 "MPIX_Query_cuda_support() = %d at run time; no MPIX_CUDA_AWARE_SUPPORT",
			 f->query);
	else if (f->have_macro)
		snprintf(out, len,
			 "MPIX_CUDA_AWARE_SUPPORT = %d at compile time; no MPIX_Query_cuda_support",
			 f->macro);
	else
		snprintf(out, len,
			 "this MPI has neither MPIX_Query_cuda_support nor MPIX_CUDA_AWARE_SUPPORT");
	at = strlen(out);
	if (f->built_name[0] && at < len)
		snprintf(out + at, len - at, "; %.39s = %s", f->built_name, f->built ? "true" : "false");
}

bool gdrb_mpi_cuda_decide(enum gdrb_mpi_cuda want, const struct gdrb_mpi_cuda_facts *f,
			  char *why, size_t len)
{
	/* The run-time answer first: a library built with CUDA can still run without it. */
	bool found = f->have_query ? f->query != 0 : f->have_macro ? f->macro != 0 :
		     f->built_name[0] && f->built != 0;
	bool aware = want == GDRB_MPI_CUDA_AUTO ? found : want == GDRB_MPI_CUDA_YES;
	char seen[260];

	if (!why || !len)
		return aware;
	detected(f, seen, sizeof(seen));
	if (want == GDRB_MPI_CUDA_AUTO)
		snprintf(why, len, "by %s%s",
			 f->have_query || f->have_macro || f->built_name[0] ? "" : "default: ", seen);
	else
		snprintf(why, len, "by --mpi-cuda %s; detected: %s", gdrb_mpi_cuda_names[want], seen);
	return aware;
}
