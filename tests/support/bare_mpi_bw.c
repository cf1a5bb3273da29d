/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference loop for the harness-overhead figure: a bare windowed
 * MPI_Isend/MPI_Irecv loop with an acknowledgement per window, the same
 * protocol as gdrb_mpi_bw without any harness. Prints GB/s (1e9 B/s).
 * Usage: bare_mpi_bw SIZE WINDOW ITERS
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

int main(int argc, char **argv)
{
	int rank, i, k, size, window, iters;
	MPI_Request *reqs;
	double t0 = 0, t1;
	char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	size = argc > 1 ? atoi(argv[1]) : 1 << 20;
	window = argc > 2 ? atoi(argv[2]) : 64;
	iters = argc > 3 ? atoi(argv[3]) : 20;
	buf = malloc((size_t)window * (size_t)size);
	reqs = calloc((size_t)window, sizeof(*reqs));
	/* Real bytes on touched pages: calloc'ed memory would send the shared zero page. */
	memset(buf, 0x5a, (size_t)window * (size_t)size);
	for (i = -2; i < iters; i++) {
		if (i == 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
		}
		if (rank == 0) {
			for (k = 0; k < window; k++)
				MPI_Isend(buf + (size_t)k * size, size, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
					  &reqs[k]);
			MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
			MPI_Recv(NULL, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else if (rank == 1) {
			for (k = 0; k < window; k++)
				MPI_Irecv(buf + (size_t)k * size, size, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
					  &reqs[k]);
			MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
			MPI_Send(NULL, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
		}
	}
	t1 = MPI_Wtime();
	if (rank == 0)
		printf("%.4f\n", (double)size * window * iters / (t1 - t0) * 1e-9);
	free(reqs);
	free(buf);
	MPI_Finalize();
	return 0;
}
