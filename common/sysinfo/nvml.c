/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * NVLink state and speed from NVML, loaded at run time, through NVML's ABI as nvml.h documents
 * it (nvml_abi.h); nvml.h itself is not needed.
 */
#include "config.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "gdrb_log.h"
#include "gdrb_nvml.h"
#include "nvml_abi.h"

#define NVML_LIBRARY "libnvidia-ml.so.1"

struct nvml_api {
	void *lib;
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*count)(unsigned *);
	nvml_return (*handle)(unsigned, nvml_device *);
	nvml_return (*pci)(nvml_device, struct nvml_pci_info *);
	nvml_return (*name)(nvml_device, char *, unsigned);
	nvml_return (*link_state)(nvml_device, unsigned, unsigned *);
	nvml_return (*link_version)(nvml_device, unsigned, unsigned *);       /* optional */
	nvml_return (*remote_type)(nvml_device, unsigned, unsigned *);        /* optional */
	nvml_return (*field_values)(nvml_device, int, struct nvml_field_value *);  /* optional */
};

const char *gdrb_nvlink_version_text(unsigned code)
{
	/* nvmlNvlinkVersion_t: 1 is 1.0, 2 is 2.0, 3 is 2.2, 4 is 3.0, 5 is 3.1, 6 is 4.0, 7 is 5.0. */
	static const char *const names[] = { NULL, "1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0" };

	return code < sizeof(names) / sizeof(names[0]) ? names[code] : NULL;
}

const char *gdrb_nvlink_remote_name(enum gdrb_nvlink_remote r)
{
	switch (r) {
	case GDRB_NVLINK_REMOTE_GPU:
		return "GPU";
	case GDRB_NVLINK_REMOTE_SWITCH:
		return "NVSwitch";
	case GDRB_NVLINK_REMOTE_OTHER:
		return "other";
	default:
		return "unknown";
	}
}

static const char *nvml_error(const struct nvml_api *api, nvml_return rc, char *buf, size_t len)
{
	const char *s = api->error_string ? api->error_string(rc) : NULL;

	snprintf(buf, len, "%.80s (NVML error %d)", s ? s : "no description", rc);
	return buf;
}

/* The symbols gdrbench needs; the optional ones may be missing from an old driver's NVML. */
static int nvml_resolve(struct nvml_api *api, char *why, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
		bool required;
	} syms[] = {
		{ "nvmlInit_v2", offsetof(struct nvml_api, init), true },
		{ "nvmlShutdown", offsetof(struct nvml_api, shutdown), true },
		{ "nvmlErrorString", offsetof(struct nvml_api, error_string), false },
		{ "nvmlDeviceGetCount_v2", offsetof(struct nvml_api, count), true },
		{ "nvmlDeviceGetHandleByIndex_v2", offsetof(struct nvml_api, handle), true },
		{ "nvmlDeviceGetPciInfo_v3", offsetof(struct nvml_api, pci), true },
		{ "nvmlDeviceGetName", offsetof(struct nvml_api, name), false },
		{ "nvmlDeviceGetNvLinkState", offsetof(struct nvml_api, link_state), true },
		{ "nvmlDeviceGetNvLinkVersion", offsetof(struct nvml_api, link_version), false },
		{ "nvmlDeviceGetNvLinkRemoteDeviceType", offsetof(struct nvml_api, remote_type), false },
		{ "nvmlDeviceGetFieldValues", offsetof(struct nvml_api, field_values), false },
	};
	size_t i;

	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *fn = dlsym(api->lib, syms[i].name);

		if (!fn && syms[i].required) {
			snprintf(why, len, "%s has no %s: an NVIDIA driver older than the NVML calls gdrbench makes",
				 NVML_LIBRARY, syms[i].name);
			return GDRB_ERR_UNSUPP;
		}
		/* POSIX: a function pointer and void * convert; the table holds function pointers. */
		memcpy((char *)api + syms[i].off, &fn, sizeof(fn));
	}
	return 0;
}

/* NVML's "00000000:17:00.0" as sysfs writes it, "0000:17:00.0"; "" for anything else. */
static void pci_text(const char *bus_id, char *out, size_t len)
{
	unsigned dom, bus, dev, fn;
	int end = 0;

	out[0] = 0;
	if (sscanf(bus_id, "%8x:%2x:%2x.%1x%n", &dom, &bus, &dev, &fn, &end) == 4 && end > 0 &&
	    !bus_id[end] && dev < 32 && fn < 8)
		snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
}

static void gpu_error(struct gdrb_nvml_gpu *g, const struct nvml_api *api, const char *call, nvml_return rc)
{
	char err[128];

	if (!g->why[0])
		snprintf(g->why, sizeof(g->why), "%s: %s", call, nvml_error(api, rc, err, sizeof(err)));
}

static enum gdrb_nvlink_remote remote_of(const struct nvml_api *api, nvml_device dev, unsigned link)
{
	unsigned type = 0;

	if (!api->remote_type || api->remote_type(dev, link, &type) != NVML_SUCCESS)
		return GDRB_NVLINK_REMOTE_UNKNOWN;
	if (type == NVML_NVLINK_DEVICE_TYPE_GPU)
		return GDRB_NVLINK_REMOTE_GPU;
	if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH)
		return GDRB_NVLINK_REMOTE_SWITCH;
	return type == 0xffu ? GDRB_NVLINK_REMOTE_UNKNOWN : GDRB_NVLINK_REMOTE_OTHER;
}

/* A field's value as a whole number; false for a negative, fractional or unknown type. */
static bool field_whole(const struct nvml_field_value *f, unsigned long long *v)
{
	switch (f->value_type) {
	case NVML_VALUE_TYPE_UNSIGNED_INT:
		*v = f->value.ui;
		return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG:
		*v = f->value.ul;
		return true;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
		*v = f->value.ull;
		return true;
	case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
		*v = (unsigned long long)f->value.sll;
		return f->value.sll >= 0;
	case NVML_VALUE_TYPE_SIGNED_INT:
		*v = (unsigned long long)f->value.si;
		return f->value.si >= 0;
	case NVML_VALUE_TYPE_UNSIGNED_SHORT:
		*v = f->value.us;
		return true;
	default:
		return false;
	}
}

/* One field of link l: NVML's answer for the call, else the field's own. */
static nvml_return ask_field(const struct nvml_api *api, nvml_device dev, unsigned id, unsigned scope,
			     struct nvml_field_value *f)
{
	nvml_return rc;

	memset(f, 0, sizeof(*f));
	f->field_id = id;
	f->scope_id = scope;
	rc = api->field_values(dev, 1, f);
	return rc != NVML_SUCCESS ? rc : f->nvml_return;
}

/* The speed of link l (up) in MB/s, or 0 and the first reason in g->speed_why. */
static void read_speed(const struct nvml_api *api, nvml_device dev, struct gdrb_nvml_gpu *g, unsigned l)
{
	struct nvml_field_value f;
	unsigned long long mbps = 0;
	nvml_return rc;
	char err[112];
	const char *why = NULL;

	if (!api->field_values) {
		why = "no nvmlDeviceGetFieldValues in this NVML";
	} else {
		rc = ask_field(api, dev, NVML_FI_DEV_NVLINK_GET_SPEED, l, &f);
		if ((rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT) && l < 12)
			rc = ask_field(api, dev, l < 6 ? NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 + l :
						  NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 + l - 6, 0, &f);
		if (rc != NVML_SUCCESS)
			why = nvml_error(api, rc, err, sizeof(err));
		else if (!field_whole(&f, &mbps) || !mbps || mbps > 0xffffffffull)
			why = "a value that is no speed";
	}
	if (!why) {
		g->speed_mbps[l] = (unsigned)mbps;
		return;
	}
	g->speed_unknown++;
	if (!g->speed_why[0])
		snprintf(g->speed_why, sizeof(g->speed_why), "link %u: %s", l, why);
}

/* Link l of one GPU: a link NVML refuses as not supported or invalid does not exist. */
static void read_link(const struct nvml_api *api, nvml_device dev, struct gdrb_nvml_gpu *g, unsigned l)
{
	unsigned active = 0, version = 0;
	nvml_return rc = api->link_state(dev, l, &active);
	char err[112];

	if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT || rc == NVML_ERROR_NOT_FOUND) {
		g->state[l] = GDRB_NVLINK_ABSENT;
		return;
	}
	g->links++;
	if (rc != NVML_SUCCESS || active > 1) {
		if (rc != NVML_SUCCESS && !g->why[0])
			snprintf(g->why, sizeof(g->why), "nvmlDeviceGetNvLinkState: link %u: %s", l,
				 nvml_error(api, rc, err, sizeof(err)));
		else if (rc == NVML_SUCCESS && !g->why[0])
			snprintf(g->why, sizeof(g->why),
				 "nvmlDeviceGetNvLinkState: link %u: state %u, neither enabled nor disabled", l,
				 active);
		g->state[l] = GDRB_NVLINK_UNREAD;
		g->unread++;
		return;
	}
	if (!active) {
		g->state[l] = GDRB_NVLINK_DOWN;
		g->down++;
		return;
	}
	g->state[l] = GDRB_NVLINK_UP;
	g->up++;
	g->remote[l] = (unsigned char)remote_of(api, dev, l);
	g->to_switch += g->remote[l] == GDRB_NVLINK_REMOTE_SWITCH;
	g->to_gpu += g->remote[l] == GDRB_NVLINK_REMOTE_GPU;
	if (!g->version && api->link_version && api->link_version(dev, l, &version) == NVML_SUCCESS &&
	    gdrb_nvlink_version_text(version))
		g->version = version;
	read_speed(api, dev, g, l);
}

static void read_gpu(const struct nvml_api *api, unsigned idx, struct gdrb_nvml_gpu *g)
{
	struct nvml_pci_info pci;
	nvml_device dev = NULL;
	nvml_return rc;
	unsigned l;

	memset(g, 0, sizeof(*g));
	rc = api->handle(idx, &dev);
	if (rc != NVML_SUCCESS) {
		gpu_error(g, api, "nvmlDeviceGetHandleByIndex", rc);
		return;
	}
	memset(&pci, 0, sizeof(pci));
	rc = api->pci(dev, &pci);
	if (rc == NVML_SUCCESS) {
		pci.bus_id[sizeof(pci.bus_id) - 1] = 0;
		pci_text(pci.bus_id, g->pci, sizeof(g->pci));
	} else {
		gpu_error(g, api, "nvmlDeviceGetPciInfo", rc);
	}
	if (api->name && api->name(dev, g->name, sizeof(g->name)) != NVML_SUCCESS)
		g->name[0] = 0;
	g->name[sizeof(g->name) - 1] = 0;
	for (l = 0; l < GDRB_NVLINK_MAX_LINKS; l++)
		read_link(api, dev, g, l);
}

int gdrb_nvml_read(struct gdrb_nvml *nv)
{
	struct nvml_api api;
	char err[128];
	nvml_return rc;
	unsigned i;

	memset(nv, 0, sizeof(*nv));
	memset(&api, 0, sizeof(api));
	dlerror();
	api.lib = dlopen(NVML_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (!api.lib) {
		const char *e = dlerror();

		snprintf(nv->why, sizeof(nv->why), "%s (NVML, part of the NVIDIA driver) not loaded: %.160s",
			 NVML_LIBRARY, e ? e : "not found");
		return GDRB_ERR_UNSUPP;
	}
	if (nvml_resolve(&api, nv->why, sizeof(nv->why)))
		goto err_close;
	rc = api.init();
	if (rc != NVML_SUCCESS) {
		snprintf(nv->why, sizeof(nv->why), "nvmlInit: %s", nvml_error(&api, rc, err, sizeof(err)));
		goto err_close;
	}
	rc = api.count(&nv->reported);
	if (rc != NVML_SUCCESS) {
		snprintf(nv->why, sizeof(nv->why), "nvmlDeviceGetCount: %s", nvml_error(&api, rc, err, sizeof(err)));
		goto err_shutdown;
	}
	nv->ngpus = nv->reported < GDRB_NVML_MAX_GPUS ? nv->reported : GDRB_NVML_MAX_GPUS;
	for (i = 0; i < nv->ngpus; i++)
		read_gpu(&api, i, &nv->gpus[i]);
	nv->known = true;
	api.shutdown();
	dlclose(api.lib);
	return 0;

err_shutdown:
	api.shutdown();
err_close:
	dlclose(api.lib);
	return GDRB_ERR_UNSUPP;
}
