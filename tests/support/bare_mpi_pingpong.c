/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference loop for the harness-overhead figure: a bare MPI_Send/MPI_Recv
 * ping-pong with no harness at all. Prints the mean half round trip in us.
 * Usage: bare_mpi_pingpong SIZE ITERS
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, i, size, iters, warmup;
	double t0 = 0, t1;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	size = argc > 1 ? atoi(argv[1]) : 8;
	iters = argc > 2 ? atoi(argv[2]) : 10000;
	warmup = iters / 10 + 1;
	buf = malloc((size_t)size + 1);
	memset(buf, 0x5a, (size_t)size + 1);
	for (i = -warmup; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			MPI_Send(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
			MPI_Recv(buf, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			MPI_Recv(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
		}
	}
	t1 = MPI_Wtime();
	if (rank == 0)
		printf("%.4f\n", (t1 - t0) / iters / 2 * 1e6);
	free(buf);
	MPI_Finalize();
	return 0;
}
