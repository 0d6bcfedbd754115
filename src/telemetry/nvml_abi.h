/*
 * nvml_abi.h - the part of the NVML C interface relish calls, declared here
 * because no nvml.h is packaged where relish builds.  Shared by the loader
 * (telemetry/nvml.c) and the test stand-in (tests/support/
 * libnvidia-ml-standin.c), which must agree with the real library on every
 * layout below.
 *
 * Layouts follow NVIDIA's NVML API reference (R5xx):
 *   nvmlMemory_t                 {total, free, used}: unsigned long long, bytes
 *   nvmlUtilization_t            {gpu, memory}: unsigned int, percent
 *   nvmlProcessInfo_t (v2 shape) {pid, usedGpuMemory, gpuInstanceId,
 *                                 computeInstanceId}; taken by
 *                                 nvmlDeviceGetComputeRunningProcesses_v3/_v2
 *   nvmlProcessInfo_v1_t         {pid, usedGpuMemory}; taken by the
 *                                 unversioned (oldest) symbol
 *   nvmlProcessUtilizationSample_t {pid, timeStamp (us), smUtil, memUtil,
 *                                 encUtil, decUtil}
 * nvmlReturn_t is a C enum (int-sized); handles are opaque pointers.
 */
#ifndef RELISH_TELEMETRY_NVML_ABI_H
#define RELISH_TELEMETRY_NVML_ABI_H

typedef int nvml_return;                    /* nvmlReturn_t */
typedef struct nvml_device_opaque *nvml_device; /* nvmlDevice_t */

typedef struct nvml_memory {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvml_memory;

typedef struct nvml_utilization {
	unsigned int gpu;
	unsigned int memory;
} nvml_utilization;

typedef struct nvml_process_info {
	unsigned int pid;
	unsigned long long used_gpu_memory;   /* NVML_VALUE_NOT_AVAILABLE when unknown */
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
} nvml_process_info;

typedef struct nvml_process_info_v1 {
	unsigned int pid;
	unsigned long long used_gpu_memory;
} nvml_process_info_v1;

typedef struct nvml_process_util_sample {
	unsigned int pid;
	unsigned long long timestamp_us;
	unsigned int sm_util;
	unsigned int mem_util;
	unsigned int enc_util;
	unsigned int dec_util;
} nvml_process_util_sample;

/* Return codes relish distinguishes (values from the NVML reference). */
enum {
	NVML_RC_SUCCESS = 0,
	NVML_RC_UNINITIALIZED = 1,
	NVML_RC_INVALID_ARGUMENT = 2,
	NVML_RC_NOT_SUPPORTED = 3,
	NVML_RC_NO_PERMISSION = 4,
	NVML_RC_ALREADY_INITIALIZED = 5,
	NVML_RC_NOT_FOUND = 6,
	NVML_RC_INSUFFICIENT_SIZE = 7,
	NVML_RC_INSUFFICIENT_POWER = 8,
	NVML_RC_DRIVER_NOT_LOADED = 9,
	NVML_RC_TIMEOUT = 10,
	NVML_RC_IRQ_ISSUE = 11,
	NVML_RC_LIBRARY_NOT_FOUND = 12,
	NVML_RC_FUNCTION_NOT_FOUND = 13,
	NVML_RC_CORRUPTED_INFOROM = 14,
	NVML_RC_GPU_IS_LOST = 15,
	NVML_RC_RESET_REQUIRED = 16,
	NVML_RC_OPERATING_SYSTEM = 17,
	NVML_RC_LIB_RM_VERSION_MISMATCH = 18,
	NVML_RC_IN_USE = 19,
	NVML_RC_MEMORY = 20,
	NVML_RC_NO_DATA = 21,
	NVML_RC_INSUFFICIENT_RESOURCES = 23,
	NVML_RC_ARGUMENT_VERSION_MISMATCH = 25,
	NVML_RC_DEPRECATED = 26,
	NVML_RC_NOT_READY = 27,
	NVML_RC_GPU_NOT_FOUND = 28,
	NVML_RC_INVALID_STATE = 29,
	NVML_RC_UNKNOWN = 999,
};

#define NVML_ABI_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_ABI_NAME_BUFFER 96      /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define NVML_ABI_UUID_BUFFER 96      /* NVML_DEVICE_UUID_V2_BUFFER_SIZE */
#define NVML_ABI_DRIVER_BUFFER 80    /* NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */

#endif
