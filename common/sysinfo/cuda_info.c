/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA inventory through libcudart only (starts without a driver). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "gdrb_cuda_info.h"
#include "gdrb_log.h"

int gdrb_cuda_inventory(struct gdrb_cuda_inventory *inv, char *why, size_t len)
{
	cudaError_t err;
	int i, count = 0;

	memset(inv, 0, sizeof(*inv));
	cudaRuntimeGetVersion(&inv->runtime_version);
	cudaDriverGetVersion(&inv->driver_version);
	err = cudaGetDeviceCount(&count);
	if (err != cudaSuccess) {
		snprintf(why, len, "cudaGetDeviceCount: %s (%s)", cudaGetErrorString(err),
			 cudaGetErrorName(err));
		return GDRB_ERR_UNSUPP;
	}
	if (count == 0) {
		snprintf(why, len, "CUDA sees no device (check CUDA_VISIBLE_DEVICES)");
		return GDRB_ERR_UNSUPP;
	}
	if (count > GDRB_CUDA_MAX_DEVS)
		count = GDRB_CUDA_MAX_DEVS;
	for (i = 0; i < count; i++) {
		struct gdrb_cuda_dev *d = &inv->devs[i];
		struct cudaDeviceProp prop;

		err = cudaGetDeviceProperties(&prop, i);
		if (err == cudaSuccess)
			err = cudaDeviceGetPCIBusId(d->pci_bus_id, (int)sizeof(d->pci_bus_id), i);
		if (err != cudaSuccess) {
			snprintf(why, len, "CUDA device %d: %s (%s)", i, cudaGetErrorString(err),
				 cudaGetErrorName(err));
			return GDRB_ERR_UNSUPP;
		}
		snprintf(d->name, sizeof(d->name), "%.127s", prop.name);
		d->total_mem = prop.totalGlobalMem;
		if (prop.major > 0 && prop.major < 100 && prop.minor >= 0 && prop.minor < 100) {
			d->cc_major = prop.major;
			d->cc_minor = prop.minor;
		}
	}
	inv->count = count;
	return 0;
}
