/* SPDX-License-Identifier: BSD-3-Clause */
/* ncclSend/ncclRecv: rank i and rank i+n/2 exchange a message each way per call */
#include "config.h"

#include "gdrb_boot_mpi.h"
#include "gdrb_nccl.h"
#include "gdrb_transports.h"

int main(int argc, char **argv)
{
	return gdrb_nccl_sendrecv_main(&gdrb_boot_mpi, gdrb_opt_catalog, argc, argv);
}
