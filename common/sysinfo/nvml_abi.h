/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The part of NVML's ABI gdrbench uses, as nvml.h documents it: return codes, nvmlPciInfo_t,
 * the NVLink far-end types, field values and the NVLink speed fields. nvml.c calls NVML with
 * it; the tests' simulated NVML (tests/support/simnvml) answers with it.
 */
#ifndef NVML_ABI_H
#define NVML_ABI_H

typedef int nvml_return;
typedef struct nvml_device_st *nvml_device;

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_UNKNOWN 999

/* nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3). */
struct nvml_pci_info {
	char bus_id_legacy[16];
	unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

/*
 * nvmlFieldValue_t and nvmlValue_t (nvmlDeviceGetFieldValues). The speed of link L in MB/s:
 * NVML_FI_DEV_NVLINK_GET_SPEED with scopeId L; an NVML older than scoped NVLink fields has
 * one field per link instead, NVML_FI_DEV_NVLINK_SPEED_MBPS_L0..L5 (84..89) and L6..L11
 * (132..137), for links 0 to 11 only.
 */
#define NVML_FI_DEV_NVLINK_GET_SPEED 164u
#define NVML_FI_DEV_NVLINK_SPEED_MBPS_L0 84u
#define NVML_FI_DEV_NVLINK_SPEED_MBPS_L6 132u
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define NVML_VALUE_TYPE_SIGNED_LONG_LONG 4
#define NVML_VALUE_TYPE_SIGNED_INT 5
#define NVML_VALUE_TYPE_UNSIGNED_SHORT 6

struct nvml_field_value {
	unsigned field_id;
	unsigned scope_id;
	long long timestamp;
	long long latency_usec;
	int value_type;                 /* nvmlValueType_t */
	nvml_return nvml_return;        /* this field's own answer */
	union {
		double d;
		unsigned ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
		int si;
		unsigned short us;
	} value;
};

/* nvmlIntNvLinkDeviceType_t */
#define NVML_NVLINK_DEVICE_TYPE_GPU 0u
#define NVML_NVLINK_DEVICE_TYPE_SWITCH 2u

#endif
