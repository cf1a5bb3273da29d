/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A slow node for the multi-node test bed (tests/cluster/netns/bed.sh): a PMPI interposer,
 * LD_PRELOADed into every rank (mpirun -x LD_PRELOAD=tests/cluster/slow_node.so), that holds
 * back each point-to-point send and receive of the ranks on the host named by
 * GDRB_SLOW_HOST, as a node with a slow NIC would, and does nothing elsewhere.
 * A send waits in the call that starts it; a receive waits when it completes
 * (MPI_Recv, or the MPI_Wait or MPI_Test call that sees an MPI_Irecv done), as
 * data that comes in slowly does: a receive posted early (as gdrb_mpi_pairs
 * posts them, before an untimed barrier) is still late.
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

/* How long COUNT x DATATYPE takes at the slow rate, in us. */
static double delay_us(int count, MPI_Datatype datatype)
{
	int size = 0;

	PMPI_Type_size(datatype, &size);
	return slow_us + (slow_gbps > 0 ? (double)count * size / (slow_gbps * 1e3) : 0);
}

static void sleep_us(double us)
{
	struct timespec ts;

	if (us <= 0)
		return;
	ts.tv_sec = (time_t)(us / 1e6);
	ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
	while (nanosleep(&ts, &ts))
		;
}

static void slow_delay(int on, int count, MPI_Datatype datatype)
{
	if (on)
		sleep_us(delay_us(count, datatype));
}

/* The slow rank's receives in flight and what each owes when it completes. */
#define PENDING_MAX 4096
static struct pending {
	MPI_Request req;
	double us;
} pending[PENDING_MAX];
static int npending;

/* Snapshot of the requests a wait or test is handed, to tell afterwards which completed. */
#define SNAP_MAX 1024
static MPI_Request snap[SNAP_MAX];

static int snapshot(int n, const MPI_Request *reqs)
{
	if (!npending || n <= 0 || n > SNAP_MAX)
		return 0;
	memcpy(snap, reqs, (size_t)n * sizeof(*reqs));
	return n;
}

/* After a wait or test: sleep for the receives among the n snapshotted that are done now. */
static void settle(int n, const MPI_Request *reqs)
{
	double us = 0;
	int i, j;

	for (i = 0; i < n; i++) {
		if (snap[i] == MPI_REQUEST_NULL || reqs[i] != MPI_REQUEST_NULL)
			continue;
		for (j = 0; j < npending && pending[j].req != snap[i]; j++)
			;
		if (j < npending) {
			us += pending[j].us;
			pending[j] = pending[--npending];
		}
	}
	sleep_us(us);
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
	int rc = PMPI_Recv(buf, count, datatype, source, tag, comm, status);

	slow_delay(slow_recv, count, datatype);
	return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
	      MPI_Request *request)
{
	int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, request);

	if (rc != MPI_SUCCESS || !slow_recv)
		return rc;
	if (npending < PENDING_MAX)
		pending[npending++] = (struct pending){ *request, delay_us(count, datatype) };
	else
		slow_delay(1, count, datatype);         /* past the table: at once, as before */
	return rc;
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	int n = snapshot(1, request), rc = PMPI_Wait(request, status);

	settle(n, request);
	return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	int n = snapshot(count, requests), rc = PMPI_Waitall(count, requests, statuses);

	settle(n, requests);
	return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	int n = snapshot(count, requests), rc = PMPI_Waitany(count, requests, index, status);

	settle(n, requests);
	return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
	int n = snapshot(incount, requests), rc = PMPI_Waitsome(incount, requests, outcount, indices, statuses);

	settle(n, requests);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	int n = snapshot(1, request), rc = PMPI_Test(request, flag, status);

	settle(n, request);
	return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	int n = snapshot(count, requests), rc = PMPI_Testall(count, requests, flag, statuses);

	settle(n, requests);
	return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	int n = snapshot(count, requests), rc = PMPI_Testany(count, requests, index, flag, status);

	settle(n, requests);
	return rc;
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[], MPI_Status statuses[])
{
	int n = snapshot(incount, requests), rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);

	settle(n, requests);
	return rc;
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
