/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVLink state and speed per GPU, from NVML (libnvidia-ml.so.1, part of the NVIDIA driver),
 * loaded with dlopen when asked: never a build or link dependency. Where NVML is absent or
 * fails, the state is not known, which is neither a failure nor a pass (the caller says so).
 */
#ifndef GDRB_NVML_H
#define GDRB_NVML_H

#include <stdbool.h>
#include <stddef.h>

/* NVML_NVLINK_MAX_LINKS of nvml.h: NVML numbers a GPU's links 0..17; none is asked past it. */
#define GDRB_NVLINK_MAX_LINKS 18
#define GDRB_NVML_MAX_GPUS 64

enum gdrb_nvlink_state {
	GDRB_NVLINK_ABSENT,     /* NVML: not supported or invalid for this link: it does not exist */
	GDRB_NVLINK_UP,
	GDRB_NVLINK_DOWN,
	GDRB_NVLINK_UNREAD,     /* NVML answered another error, or a state that is neither */
};

enum gdrb_nvlink_remote {
	GDRB_NVLINK_REMOTE_UNKNOWN,     /* not asked (link not up), not answered, or NVML's "unknown" */
	GDRB_NVLINK_REMOTE_GPU,
	GDRB_NVLINK_REMOTE_SWITCH,      /* an NVSwitch */
	GDRB_NVLINK_REMOTE_OTHER,       /* IBM NPU, or a type this code does not know */
};

struct gdrb_nvml_gpu {
	char pci[32];                   /* "0000:17:00.0", from NVML's bus ID; "" where not read */
	char name[96];                  /* NVML's product name; "" where not read */
	char why[192];                  /* the first error met reading this GPU; "" none */
	unsigned char state[GDRB_NVLINK_MAX_LINKS];     /* enum gdrb_nvlink_state */
	unsigned char remote[GDRB_NVLINK_MAX_LINKS];    /* enum gdrb_nvlink_remote, for links up */
	int links;                      /* links that exist: up + down + unread */
	int up, down, unread;
	int to_switch, to_gpu;          /* links up by their far end */
	unsigned version;               /* NVML's NVLink version code of the first link up; 0 unknown */
	/* Links up: NVML's speed in MB/s (its "MBps" field values); 0 where not known. */
	unsigned speed_mbps[GDRB_NVLINK_MAX_LINKS];
	int speed_unknown;              /* links up whose speed is not known */
	char speed_why[160];            /* why the first of them is not known; "" none */
};

struct gdrb_nvml {
	bool known;                     /* NVML loaded, initialised and counted its GPUs */
	char why[256];                  /* why not known: "libnvidia-ml.so.1 not found: ..." */
	unsigned reported;              /* GPUs NVML counts; more than GDRB_NVML_MAX_GPUS are not read */
	size_t ngpus;                   /* GPUs read: min(reported, GDRB_NVML_MAX_GPUS) */
	struct gdrb_nvml_gpu gpus[GDRB_NVML_MAX_GPUS];
};

/*
 * Load NVML and read every GPU's NVLink state into nv. 0 when NVML answered (nv->known);
 * GDRB_ERR_UNSUPP with nv->why otherwise (library missing, a symbol missing, nvmlInit failed).
 * Logs nothing: the doctor reports it.
 */
int gdrb_nvml_read(struct gdrb_nvml *nv);

/* "4.0" for NVML's version code (NVML_NVLINK_VERSION_4_0 is 6); NULL for a code not known. */
const char *gdrb_nvlink_version_text(unsigned code);

/* "NVSwitch", "GPU", "other", "unknown". */
const char *gdrb_nvlink_remote_name(enum gdrb_nvlink_remote r);

#endif
