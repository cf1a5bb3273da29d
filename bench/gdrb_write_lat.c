/* SPDX-License-Identifier: BSD-3-Clause */
/* RDMA write latency: ping-pong of RDMA writes (half round trip). */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_driver.h"
#include "gdrb_transports.h"
#include "gdrb_verbs.h"

static const struct gdrb_bench write_lat = {
	.name = "write_lat",
	.layer = "verbs",
	.summary = "RDMA write latency: ping-pong of RDMA writes, the receiver polling the buffer's last byte or a write-with-immediate completion (half round trip)",
	.metric = GDRB_METRIC_LAT,
	.traffic = GDRB_TRAFFIC_PINGPONG,
	.opt_core = GDRB_OPTG_MEM,
	.opt_groups = (const struct gdrb_opt_use[]){
		{ &gdrb_verbs_opts, GDRB_VERBS_OPTS | GDRB_VERBS_OPT_P2P | GDRB_VERBS_OPT_COMPLETION }, { NULL, 0 } },
	.opt_known = gdrb_opt_catalog,
	.setup = gdrb_verbs_setup_write,
	.describe = gdrb_verbs_describe,
	.begin = gdrb_verbs_write_lat_begin,
	.iteration = gdrb_verbs_pingpong,
	.prepare = gdrb_verbs_write_lat_prepare,
	.teardown = gdrb_verbs_teardown,
};

int main(int argc, char **argv)
{
	return gdrb_main(&write_lat, &gdrb_boot_mpi, argc, argv);
}
