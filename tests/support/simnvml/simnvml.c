/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * simnvml: the tests' simulated NVML (README.md), built as libnvidia-ml.so.1 and found only
 * through a test's LD_LIBRARY_PATH. It answers the calls gdrbench makes, with NVML's ABI as
 * nvml.h documents it (common/sysinfo/nvml_abi.h, which gdrbench calls NVML with), for GPUs described by the environment:
 *   SIMNVML_GPUS=N        GPUs NVML counts (default 8; any 32-bit count, to test the bound)
 *   SIMNVML_LINKS=M       NVLinks per GPU (default 18; 0: none; more than 18 answers for links
 *                         past NVML_NVLINK_MAX_LINKS, and reports each such call on stderr)
 *   SIMNVML_DOWN=G:L,...  links down; SIMNVML_BAD=G:L,... links whose state is 7, neither
 *                         enabled nor disabled; SIMNVML_ERR=G:L,... links whose state answers
 *                         NVML_ERROR_UNKNOWN
 *   SIMNVML_REMOTE=switch|gpu   the far end of every link (default switch)
 *   SIMNVML_VERSION=C     NVML's NVLink version code (default 6, NVLink 4.0)
 *   SIMNVML_INIT=RC       nvmlInit_v2 answers RC (default 0; 9 is NVML_ERROR_DRIVER_NOT_LOADED)
 *   SIMNVML_BUSES=13,14   the PCI bus (hex) of GPU 0, 1, ... (default 0x18 + 0x10 g)
 *   SIMNVML_SPEED=MBPS    every link's speed in NVML's field values, in MB/s (default 25000,
 *                         a round figure: simulated, no real GPU's)
 *   SIMNVML_SLOW=G:L,...  links at half that speed; SIMNVML_SPEED_ERR=G:L,... links whose speed
 *                         field answers NVML_ERROR_UNKNOWN
 *   SIMNVML_SPEED_LEGACY=1  an NVML before scoped NVLink fields: NVML_FI_DEV_NVLINK_GET_SPEED
 *                         answers NOT_SUPPORTED, the per-link fields of links 0..11 answer
 * Each GPU is named "gdrbench simulated GPU (simnvml)", so whatever shows it says so.
 * Built with SIMNVML_NO_OPTIONAL it lacks the NVLink version, far-end and field-value calls (an
 * old NVML); with SIMNVML_NO_PCI_V3, nvmlDeviceGetPciInfo_v3, which gdrbench needs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))

#include "nvml_abi.h"

#define NVML_NVLINK_MAX_LINKS 18

API nvml_return nvmlInit_v2(void);
API nvml_return nvmlShutdown(void);
API const char *nvmlErrorString(nvml_return rc);
API nvml_return nvmlDeviceGetCount_v2(unsigned *count);
API nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned idx, nvml_device *dev);
#ifndef SIMNVML_NO_PCI_V3
API nvml_return nvmlDeviceGetPciInfo_v3(nvml_device dev, struct nvml_pci_info *pci);
#endif
API nvml_return nvmlDeviceGetName(nvml_device dev, char *name, unsigned len);
API nvml_return nvmlDeviceGetNvLinkState(nvml_device dev, unsigned link, unsigned *active);
#ifndef SIMNVML_NO_OPTIONAL
API nvml_return nvmlDeviceGetNvLinkVersion(nvml_device dev, unsigned link, unsigned *version);
API nvml_return nvmlDeviceGetNvLinkRemoteDeviceType(nvml_device dev, unsigned link, unsigned *type);
API nvml_return nvmlDeviceGetFieldValues(nvml_device dev, int count, struct nvml_field_value *values);
#endif

static int initialised;

static unsigned env_uint(const char *name, unsigned dflt)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return dflt;
	v = strtoul(s, &end, 10);
	if (*end || v > 0xffffffffUL) {
		fprintf(stderr, "simnvml: error: %s=%s is not a 32-bit count\n", name, s);
		return dflt;
	}
	return (unsigned)v;
}

/* Whether the list in NAME ("G:L,G:L") holds GPU g's link l. */
static int listed(const char *name, unsigned g, unsigned l)
{
	const char *s = getenv(name);
	unsigned lg, ll;
	int n;

	while (s && *s) {
		if (sscanf(s, "%u:%u%n", &lg, &ll, &n) != 2)
			return 0;
		if (lg == g && ll == l)
			return 1;
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

/* A handle is its index + 1; 0 is no device. */
static int device_index(nvml_device dev, unsigned *g)
{
	uintptr_t v = (uintptr_t)dev;

	if (!initialised || !v || v - 1 >= env_uint("SIMNVML_GPUS", 8))
		return 0;
	*g = (unsigned)(v - 1);
	return 1;
}

/* Link l of a GPU that has it: NVML_SUCCESS; past the links: NOT_SUPPORTED, as NVML answers. */
static nvml_return link_exists(nvml_device dev, unsigned link, unsigned *g, const void *out)
{
	if (!device_index(dev, g) || !out)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (link >= NVML_NVLINK_MAX_LINKS && link < env_uint("SIMNVML_LINKS", 18))
		fprintf(stderr, "simnvml: error: link %u asked, past NVML_NVLINK_MAX_LINKS (%d)\n", link,
			NVML_NVLINK_MAX_LINKS);
	return link < env_uint("SIMNVML_LINKS", 18) ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}

nvml_return nvmlInit_v2(void)
{
	nvml_return rc = (nvml_return)env_uint("SIMNVML_INIT", 0);

	initialised = rc == NVML_SUCCESS;
	return rc;
}

nvml_return nvmlShutdown(void)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	initialised = 0;
	return NVML_SUCCESS;
}

const char *nvmlErrorString(nvml_return rc)
{
	switch (rc) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT:
		return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

nvml_return nvmlDeviceGetCount_v2(unsigned *count)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (!count)
		return NVML_ERROR_INVALID_ARGUMENT;
	*count = env_uint("SIMNVML_GPUS", 8);
	return NVML_SUCCESS;
}

nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned idx, nvml_device *dev)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	if (!dev || idx >= env_uint("SIMNVML_GPUS", 8) || idx == 0xffffffffu)
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = (nvml_device)(uintptr_t)(idx + 1);
	return NVML_SUCCESS;
}

#ifndef SIMNVML_NO_PCI_V3
/* Bus of GPU g: the g-th of SIMNVML_BUSES ("13,14,33"), else 0x18 + 0x10 g (wrapping). */
static unsigned bus_of(unsigned g)
{
	const char *s = getenv("SIMNVML_BUSES");
	unsigned i, bus;
	int n;

	for (i = 0; s && *s && sscanf(s, "%2x%n", &bus, &n) == 1; i++) {
		if (i == g)
			return bus;
		s += n;
		if (*s == ',')
			s++;
	}
	return (0x18 + 0x10 * g) & 0xff;
}

nvml_return nvmlDeviceGetPciInfo_v3(nvml_device dev, struct nvml_pci_info *pci)
{
	unsigned g;

	if (!device_index(dev, &g) || !pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	memset(pci, 0, sizeof(*pci));
	pci->domain = g >> 8;
	pci->bus = bus_of(g);
	pci->pci_device_id = 0x233510de;
	snprintf(pci->bus_id, sizeof(pci->bus_id), "%08x:%02x:00.0", pci->domain, pci->bus);
	snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "%04x:%02x:00.0", pci->domain, pci->bus);
	return NVML_SUCCESS;
}

#endif

nvml_return nvmlDeviceGetName(nvml_device dev, char *name, unsigned len)
{
	unsigned g;

	if (!device_index(dev, &g) || !name || !len)
		return NVML_ERROR_INVALID_ARGUMENT;
	snprintf(name, len, "gdrbench simulated GPU (simnvml)");
	return NVML_SUCCESS;
}

nvml_return nvmlDeviceGetNvLinkState(nvml_device dev, unsigned link, unsigned *active)
{
	unsigned g;
	nvml_return rc = link_exists(dev, link, &g, active);

	if (rc != NVML_SUCCESS)
		return rc;
	if (listed("SIMNVML_ERR", g, link))
		return NVML_ERROR_UNKNOWN;
	*active = listed("SIMNVML_BAD", g, link) ? 7 : !listed("SIMNVML_DOWN", g, link);
	return NVML_SUCCESS;
}

#ifndef SIMNVML_NO_OPTIONAL
nvml_return nvmlDeviceGetNvLinkVersion(nvml_device dev, unsigned link, unsigned *version)
{
	unsigned g;
	nvml_return rc = link_exists(dev, link, &g, version);

	if (rc == NVML_SUCCESS)
		*version = env_uint("SIMNVML_VERSION", 6);
	return rc;
}

nvml_return nvmlDeviceGetNvLinkRemoteDeviceType(nvml_device dev, unsigned link, unsigned *type)
{
	const char *remote = getenv("SIMNVML_REMOTE");
	unsigned g;
	nvml_return rc = link_exists(dev, link, &g, type);

	if (rc == NVML_SUCCESS)
		*type = remote && !strcmp(remote, "gpu") ? 0 : 2;
	return rc;
}

/* The link a speed field asks about; -1 for a field this simulation does not answer. */
static int speed_link(const struct nvml_field_value *f)
{
	if (f->field_id == NVML_FI_DEV_NVLINK_GET_SPEED && !env_uint("SIMNVML_SPEED_LEGACY", 0))
		return f->scope_id > 0x7fffffffu ? 0x7fffffff : (int)f->scope_id;
	if (f->field_id >= NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 && f->field_id < NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 + 6)
		return (int)(f->field_id - NVML_FI_DEV_NVLINK_SPEED_MBPS_L0);
	if (f->field_id >= NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 && f->field_id < NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 + 6)
		return (int)(f->field_id - NVML_FI_DEV_NVLINK_SPEED_MBPS_L6) + 6;
	return -1;
}

/* Each field answers for itself, as NVML's do: the call succeeds for a valid device. */
nvml_return nvmlDeviceGetFieldValues(nvml_device dev, int count, struct nvml_field_value *values)
{
	unsigned g, mbps = env_uint("SIMNVML_SPEED", 25000);
	int i, link;

	if (!device_index(dev, &g) || count < 0 || (count && !values))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (i = 0; i < count; i++) {
		struct nvml_field_value *f = &values[i];

		f->value_type = NVML_VALUE_TYPE_UNSIGNED_INT;
		link = speed_link(f);
		if (link < 0) {
			f->nvml_return = NVML_ERROR_NOT_SUPPORTED;
			continue;
		}
		f->nvml_return = link_exists(dev, (unsigned)link, &g, f);
		if (f->nvml_return != NVML_SUCCESS)
			continue;
		if (listed("SIMNVML_SPEED_ERR", g, (unsigned)link))
			f->nvml_return = NVML_ERROR_UNKNOWN;
		else
			f->value.ui = listed("SIMNVML_SLOW", g, (unsigned)link) ? mbps / 2 : mbps;
	}
	return NVML_SUCCESS;
}
#endif
