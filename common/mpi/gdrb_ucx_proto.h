/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which transport UCX chose for a message, read back from its protocol selection
 * tables (UCX_PROTO_INFO=y, written to UCX_LOG_FILE): src/ucp/proto/proto_debug.c,
 * ucp_proto_select_elem_info. A table is a title (the endpoint, then the selection:
 * "tagged message by ucp_tag_send* from cuda/GPU0") and one row per message-length
 * range: "| 5029..inf | (?) rendezvous zero-copy read from remote | cuda_ipc/cuda |".
 * Plain C: no MPI or UCX, so the tests and the fuzzer link it alone.
 *
 * The log is untrusted text: lines over GDRB_UCX_LINE_MAX bytes or holding a NUL are
 * skipped, the tables and rows kept are bounded, and the text copied out keeps
 * printable ASCII only.
 */
#ifndef GDRB_UCX_PROTO_H
#define GDRB_UCX_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GDRB_UCX_LINE_MAX 2048
#define GDRB_UCX_LOG_MAX (16 << 20)     /* a larger log is read up to this */
#define GDRB_UCX_TABLES_MAX 48
#define GDRB_UCX_ROWS_MAX 12

/* What carried a message's bytes, as the CSV transport column names it. */
enum gdrb_ucx_transport {
	GDRB_UCX_UNKNOWN,       /* a row this reader does not understand */
	GDRB_UCX_CUDA_IPC,      /* GPU to GPU over CUDA IPC (cuda_ipc) */
	GDRB_UCX_RDMA_ZCOPY,    /* an RDMA zero-copy from the buffer itself (GPUDirect RDMA on GPU memory) */
	GDRB_UCX_RDMA,          /* RDMA copied through UCX's own host buffers */
	GDRB_UCX_HOST_PIPELINE, /* GPU memory staged through host memory by UCX (cuda_copy, "frag host") */
	GDRB_UCX_SHM,           /* shared memory of one host (sysv, posix, cma, knem, xpmem) */
	GDRB_UCX_TCP,
	GDRB_UCX_SELF,          /* a process to itself */
	GDRB_UCX_COUNT
};

extern const char *const gdrb_ucx_transport_names[GDRB_UCX_COUNT];

/* What a selection moves. */
enum gdrb_ucx_op {
	GDRB_UCX_OP_OTHER,      /* active messages, RMA, atomics, streams: not an MPI message */
	GDRB_UCX_OP_TAG,        /* "tagged message by ucp_tag_send*" */
	GDRB_UCX_OP_RNDV,       /* "rendezvous data send" / "rendezvous data fetch" */
};

struct gdrb_ucx_row {
	uint64_t lo, hi;        /* bytes, inclusive; hi UINT64_MAX for "inf" */
	char desc[80];          /* "(?) rendezvous zero-copy read from remote" */
	char config[80];        /* "cuda_ipc/cuda", "52% on tcp/lo and 48% on tcp/eth0" */
};

struct gdrb_ucx_table {
	enum gdrb_ucx_op op;
	bool self;              /* the endpoint of a process to itself ("... self cfg#0"): no peer's bytes */
	char mem[16];           /* "host", "cuda", "cuda-managed", ... ; "" not said */
	unsigned nrows;
	struct gdrb_ucx_row rows[GDRB_UCX_ROWS_MAX];
};

struct gdrb_ucx_proto {
	unsigned ntables;
	struct gdrb_ucx_table t[GDRB_UCX_TABLES_MAX];
	uint32_t lines;         /* lines read */
	uint32_t foreign;       /* lines of another process (the "[host:pid:tid]" prefix) */
	uint32_t skipped;       /* too long, holding a NUL, cut off, or past the bounds */
	uint32_t other;         /* this process's lines outside a table: UCX's messages */
};

void gdrb_ucx_proto_init(struct gdrb_ucx_proto *p);

/*
 * Adds the tables of len bytes of log to p. pid > 0: only lines whose UCX prefix
 * "[time] [host:pid:tid]" names this process count (UCX_LOG_FILE's form); pid 0:
 * every line, prefixed or not (ucx_info's "# " form included).
 */
void gdrb_ucx_proto_parse_mem(struct gdrb_ucx_proto *p, const char *data, size_t len, long pid);

/*
 * Reads the log open on fd from its start (pread, at most GDRB_UCX_LOG_MAX bytes)
 * into p, initialised first; 0, or a negative errno with a one-line reason in why.
 */
int gdrb_ucx_proto_read_fd(struct gdrb_ucx_proto *p, int fd, long pid, char *why, size_t len);

/* One row's transport: the table's memory ("host", "cuda"), the row's text. */
enum gdrb_ucx_transport gdrb_ucx_row_transport(const char *mem, const char *desc,
					       const char *config);

/*
 * The transports of the MPI messages of `size` bytes from memory `mem` ("host" or
 * "cuda"): every tagged or rendezvous table of that memory to another process
 * (a process's endpoint to itself is left out), the row covering size
 * (with `upto`, every row that starts at or below size: a collective's own messages
 * are of any size up to the buffer's). A bit per enum gdrb_ucx_transport; 0 where no
 * table of that memory covers it. *rows counts the rows seen.
 */
unsigned gdrb_ucx_transports(const struct gdrb_ucx_proto *p, const char *mem, uint64_t size,
			     bool upto, unsigned *rows);

/* The bits of gdrb_ucx_transports as text, "+"-joined in enum order: "cuda_ipc+host-pipeline". */
void gdrb_ucx_transports_text(unsigned bits, char *buf, size_t len);

#endif
