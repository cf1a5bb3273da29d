/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA write latency: ping-pong of RDMA writes with immediate (half round trip). */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_verbs.h"

static const struct gdrb_bench write_lat = {
	.name = "write_lat",
	.layer = "verbs",
	.summary = "RDMA write latency: ping-pong of RDMA writes with immediate (half round trip)",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_PINGPONG,
	.opt_groups = GDRB_OPTG_MEM | GDRB_OPTG_VERBS,
	.setup = gdrb_verbs_setup_write,
	.describe = gdrb_verbs_describe,
	.iteration = gdrb_verbs_pingpong,
	.teardown = gdrb_verbs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&write_lat, &gdrb_boot_mpi, argc, argv);
}
