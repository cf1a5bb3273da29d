/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA read latency: one read at a time, its whole round trip (request out, data back). */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

static const struct gdrb_bench read_lat = {
	.name = "read_lat",
	.layer = "verbs",
	.summary = "RDMA read latency: one read at a time, its whole round trip (request out, data back)",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_UNIDIR,
	.opt_core = GDRB_OPTG_MEM,
	.opt_groups = (const struct gdrb_opt_use[]){ { &gdrb_verbs_opts, GDRB_VERBS_OPTS | GDRB_VERBS_OPT_P2P }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_verbs_setup_read,
	.describe = gdrb_verbs_describe,
	.iteration = gdrb_verbs_stream,
	.prepare = gdrb_verbs_read_prepare,
	.check = gdrb_verbs_read_check,
	.teardown = gdrb_verbs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&read_lat, &gdrb_boot_mpi, argc, argv);
}
