/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference loop for the collective harness-overhead figure: back-to-back
 * MPI_Allreduce of floats with MPI_SUM, no harness. Prints the mean time per
 * call in us, averaged over the ranks as gdrb_mpi_allreduce reports it.
 * Usage: bare_mpi_allreduce SIZE_BYTES ITERS
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, nranks, i, count, iters, warmup;
	double t0 = 0, mine, sum;
	float *send, *recv;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	count = (argc > 1 ? atoi(argv[1]) : 8) / (int)sizeof(float);
	iters = argc > 2 ? atoi(argv[2]) : 10000;
	warmup = iters / 10 + 1;
	send = malloc((size_t)count * sizeof(float) + 1);
	recv = malloc((size_t)count * sizeof(float) + 1);
	for (i = 0; i < count; i++)
		send[i] = (float)(1 + (i + rank) % 61);
	memset(recv, 0, (size_t)count * sizeof(float));
	for (i = -warmup; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	}
	mine = (MPI_Wtime() - t0) / iters * 1e6;
	MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("%.4f\n", sum / nranks);
	free(send);
	free(recv);
	MPI_Finalize();
	return 0;
}
