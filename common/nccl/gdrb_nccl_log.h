/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Which transports NCCL really used, read back from its INFO log (NCCL_DEBUG=INFO,
 * NCCL_DEBUG_SUBSYS=INIT,NET, NCCL_DEBUG_FILE): one line per connection, from
 * src/transport/{net,p2p,shm,coll_net}.cc of every NCCL since 2.4. Plain C: no NCCL,
 * CUDA or MPI, so it builds everywhere and the tests and the fuzzer link it alone.
 *
 * The file is untrusted text: it is read in bounded chunks, lines over
 * GDRB_NCCL_LINE_MAX bytes or holding a NUL are skipped, counters saturate, and the
 * names copied out keep [A-Za-z0-9._-] only (anything else becomes '_').
 */
#ifndef GDRB_NCCL_LOG_H
#define GDRB_NCCL_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Longer lines are skipped; NCCL's own lines stop at 1023 bytes (src/debug.cc). */
#define GDRB_NCCL_LINE_MAX 4096
/* A larger log is not read (bytes): INIT and NET at INFO write a few hundred KiB at most. */
#define GDRB_NCCL_LOG_MAX (64 << 20)
/* The longest network or transport name kept; a longer one is cut to this. */
#define GDRB_NCCL_NAME_MAX 23

/* The NET/IB devices one log's connections used, at most this many kept. */
#define GDRB_NCCL_NICS 4

/*
 * A NET/IB device NCCL connected through: its name as NCCL's "NET/IB : Using [<dev>]<name>:<port>/..."
 * line (src/transport/net_ib/init.cc) gives it, and its speed from NCCL's device line
 * ("NET/IB: [<d>] <name>:<uverbs>:<port>/<link> provider=<p> speed=<Mb/s> ...": INFO from
 * 2.27, TRACE 2.20 to 2.26) or "Made virtual device [<dev>] name=<name> speed=<Mb/s>" (a
 * merged device).
 */
struct gdrb_nccl_nic {
	char name[24];          /* "mlx5_0:1"; "" an unused slot; "?" a device the log did not name */
	uint32_t mbps;          /* Mb/s; 0: the log does not say */
};

/*
 * What one log (or, summed, every rank's) says. Fixed-size fields only, no pointers:
 * a rank sends the struct as bytes (GDRB_NCCL_LINKS_WIRE bytes) and the receiver
 * checks them with gdrb_nccl_links_from_wire before use.
 */
struct gdrb_nccl_links {
	uint32_t net;          /* network connection lines, [send] and [receive] */
	uint32_t net_gdr;      /* of which /GDRDMA (GPUDirect RDMA for that connection) */
	uint32_t net_pxn;      /* of which through another GPU's NIC: NET/<name>/<dev>(<proxy>) */
	uint32_t collnet;      /* CollNet (e.g. SHARP) connection lines */
	uint32_t collnet_gdr;  /* of which /GDRDMA */
	uint32_t p2p;          /* P2P/... (IPC, CUMEM, MNNVL, direct pointer, indirect) */
	uint32_t shm;          /* SHM/... */
	uint32_t other;        /* "via X/..." of a transport not named above */
	uint32_t nvls;         /* "NVLS comm ..." lines: NVLink SHARP buffers set up (it prints no "via" line) */
	uint32_t unparsed;     /* NCCL INFO lines that looked like a connection but did not parse */
	uint32_t rings;        /* "Connected all rings" lines, any form */
	int32_t ring_gdr;      /* "Connected all rings, use ring PXN %d GDR %d": lowest GDR, -1 absent */
	int32_t ring_pxn;      /* the same line's PXN: highest, -1 absent */
	uint32_t lines;        /* lines read */
	uint32_t skipped;      /* lines too long, holding a NUL, or cut off at the end */
	uint32_t foreign;      /* NCCL lines whose "<host>:<pid>:" prefix is not the owner's: not counted */
	char nets[48];         /* network names, "+"-joined ("IB", "IB+Socket"); "..." ends a cut list */
	char collnets[32];     /* CollNet names, the same way */
	char others[48];       /* transports not understood, the same way */
	char version[32];      /* from "NCCL version X.Y.Z...", "" absent, "mixed" when ranks differ */
	/* One log's NET/IB devices its connections used (not summed over ranks: per rank). */
	struct gdrb_nccl_nic nics[GDRB_NCCL_NICS];
	uint32_t ib_used;      /* bit d: a connection went through NET/IB/<d> (d below 32) */
};

#define GDRB_NCCL_LINKS_WIRE sizeof(struct gdrb_nccl_links)

/* An empty record: counts 0, ring flags -1, names "". */
void gdrb_nccl_links_init(struct gdrb_nccl_links *l);

/*
 * The process whose lines count. NCCL starts each line with "<host>:<pid>:<tid>" (src/debug.cc:
 * the host name up to its first dot, getpid(), the thread); a line whose host or pid is not
 * these, or that has anything but a "[...] " timestamp before the host, is another process's
 * or an imitation: counted in foreign, never as a connection. NULL where a reader takes one:
 * every process's lines count (the fixtures of the tests).
 */
struct gdrb_nccl_owner {
	const char *host;
	long pid;
};

/* Adds the log read from f (to its end) to l; 0, or -EIO on a read error (l then holds
 * what came before it). Seek f first to read only what a later step wrote. */
int gdrb_nccl_log_parse(FILE *f, const struct gdrb_nccl_owner *who, struct gdrb_nccl_links *l);

/* The same from memory: len bytes of data, NULs and all. */
void gdrb_nccl_log_parse_mem(const void *data, size_t len, const struct gdrb_nccl_owner *who,
			     struct gdrb_nccl_links *l);

/* Reads the log at path into l (initialised first), at most the GDRB_NCCL_LOG_MAX bytes it
 * holds when opened; 0, or a negative errno with a one-line reason in why: a missing file, a
 * link, anything but a regular file, a larger one. */
int gdrb_nccl_log_read(const char *path, const struct gdrb_nccl_owner *who, struct gdrb_nccl_links *l,
		       char *why, size_t why_len);

/* Adds one rank's record to a sum over ranks: counts saturate, names are joined,
 * ring_gdr keeps the lowest seen and ring_pxn the highest. */
void gdrb_nccl_links_add(struct gdrb_nccl_links *sum, const struct gdrb_nccl_links *one);

/* The record as received from another rank (len bytes): 0 and copied into l, or -EINVAL
 * (l untouched) where the length, a name, a flag or a terminator is not what
 * gdrb_nccl_log_parse writes. */
int gdrb_nccl_links_from_wire(struct gdrb_nccl_links *l, const void *buf, size_t len);

/* The transports that carried data, "+"-joined in the order NET, COLLNET, NVLS, P2P, SHM,
 * others: "NET/IB+P2P+SHM"; "" where no connection line was seen. Cut to fit len. */
void gdrb_nccl_transports(const struct gdrb_nccl_links *l, char *buf, size_t len);

/*
 * What NCCL chose for its collective calls, from the TUNING subsystem's line (rank 0
 * prints one per call, src/enqueue.cc, 2.20 on; none before, and none for send/receive).
 * Names as NCCL_ALGO and NCCL_PROTO spell them ("Ring", "NVLSTree", "CollNetDirect";
 * "LL", "LL128", "Simple"), "+"-joined where calls differ; a symmetric kernel (2.27 on)
 * is the algorithm "Symmetric".
 */
struct gdrb_nccl_tuning {
	uint32_t calls;         /* TUNING lines of calls read */
	uint32_t unparsed;      /* lines that started as one and did not parse */
	uint32_t channels;      /* the most channels a call ran on (2.24 on); 0: not said */
	char algos[48];
	char protos[32];
};

void gdrb_nccl_tuning_init(struct gdrb_nccl_tuning *t);

/* Adds the TUNING lines of len bytes of data to t. */
void gdrb_nccl_tuning_parse_mem(const void *data, size_t len, const struct gdrb_nccl_owner *who,
				struct gdrb_nccl_tuning *t);

/*
 * Adds the TUNING lines of the log at path from byte *from on to t; *from moves past the
 * last complete line (a line being written is read whole the next time; a file shorter
 * than *from is read from its start). 0, or a negative errno with a reason in why, as
 * gdrb_nccl_log_read.
 */
int gdrb_nccl_tuning_read(const char *path, const struct gdrb_nccl_owner *who, long long *from,
			  struct gdrb_nccl_tuning *t, char *why, size_t why_len);

/*
 * The NCCL_DEBUG_SUBSYS to set so that the log holds what is read back: the user's list
 * (user, NULL: unset) with INIT and NET (and TUNING where tuning) added, or, for a "^"
 * list (every subsystem but those), taken out of it; "ALL" is kept. changed gets the
 * names added or taken out ("" none). 0, or -1 where out is too small.
 */
int gdrb_nccl_debug_subsys(const char *user, bool tuning, char *out, size_t len, char *changed, size_t changed_len);

/* Whether NCCL_DEBUG_SUBSYS's comma-separated list names name (without case, as NCCL reads it). */
bool gdrb_nccl_subsys_has(const char *list, const char *name);

#endif
