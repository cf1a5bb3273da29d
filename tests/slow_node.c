/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A slow node for the multi-node test bed (tests/netns/bed.sh): a PMPI interposer,
 * LD_PRELOADed into every rank (mpirun -x LD_PRELOAD=tests/slow_node.so), that holds
 * back each point-to-point send and receive of the ranks on the host named by
 * GDRB_SLOW_HOST, as a node with a slow NIC would, and does nothing elsewhere.
 *
 *   GDRB_SLOW_HOST  the node's hostname (as gethostname() says; unset: no node is slow)
 *   GDRB_SLOW_GBPS  its rate: each message waits size / rate (default 0.05 GB/s, 1e9 B/s)
 *   GDRB_SLOW_US    and a fixed delay per message, in us (default 0)
 *   GDRB_SLOW_DIR   send, recv or both (default both)
 *
 * The slow rank says so once on stderr at MPI_Init, so a test can tell that it matched.
 */
#include "config.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int slow_send, slow_recv;
static double slow_gbps = 0.05, slow_us;

static double env_number(const char *name, double fallback)
{
	const char *v = getenv(name);
	char *end;
	double x;

	if (!v || !*v)
		return fallback;
	x = strtod(v, &end);
	if (*end || x < 0) {
		fprintf(stderr, "slow_node: %s='%s' is not a non-negative number; using %g\n", name, v, fallback);
		return fallback;
	}
	return x;
}

static void slow_setup(void)
{
	const char *want = getenv("GDRB_SLOW_HOST"), *dir = getenv("GDRB_SLOW_DIR");
	char host[256] = "";
	int rank = -1;

	if (!want || !*want || gethostname(host, sizeof(host) - 1) || strcmp(host, want))
		return;
	if (!dir || !strcmp(dir, "both"))
		slow_send = slow_recv = 1;
	else if (!strcmp(dir, "send"))
		slow_send = 1;
	else if (!strcmp(dir, "recv"))
		slow_recv = 1;
	else
		fprintf(stderr, "slow_node: GDRB_SLOW_DIR='%s': expected send, recv or both; nothing delayed\n", dir);
	slow_gbps = env_number("GDRB_SLOW_GBPS", slow_gbps);
	slow_us = env_number("GDRB_SLOW_US", slow_us);
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	fprintf(stderr, "slow_node: %s rank %d: %s%s%s delayed, %g GB/s plus %g us a message\n", host, rank,
		slow_send ? "sends" : "", slow_send && slow_recv ? " and " : "", slow_recv ? "receives" : "",
		slow_gbps, slow_us);
}

/* Wait as long as COUNT x DATATYPE takes at the slow rate. */
static void slow_delay(int on, int count, MPI_Datatype datatype)
{
	struct timespec ts;
	double us;
	int size = 0;

	if (!on)
		return;
	PMPI_Type_size(datatype, &size);
	us = slow_us + (slow_gbps > 0 ? (double)count * size / (slow_gbps * 1e3) : 0);
	if (us <= 0)
		return;
	ts.tv_sec = (time_t)(us / 1e6);
	ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
	while (nanosleep(&ts, &ts))
		;
}

int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		slow_setup();
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		slow_setup();
	return rc;
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	slow_delay(slow_send, count, datatype);
	return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
	slow_delay(slow_send, count, datatype);
	return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
	      MPI_Request *request)
{
	slow_delay(slow_send, count, datatype);
	return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	     MPI_Status *status)
{
	slow_delay(slow_recv, count, datatype);
	return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	      MPI_Request *request)
{
	slow_delay(slow_recv, count, datatype);
	return PMPI_Irecv(buf, count, datatype, source, tag, comm, request);
}

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
		 void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
		 MPI_Status *status)
{
	slow_delay(slow_send, sendcount, sendtype);
	slow_delay(slow_recv, recvcount, recvtype);
	return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
			     recvtag, comm, status);
}
