/*
 * nvml.h - GPU telemetry through NVML, loaded at run time.
 *
 * relish must build and run on machines without the NVIDIA driver, and no
 * nvml.h is packaged where it is built, so this module declares the few
 * NVML types it uses itself (nvml.c) and opens libnvidia-ml.so.1 with
 * dlopen().  RELISH_NVML_LIBRARY names another library to open instead; the
 * tests point it at a scripted stand-in (tests/support/libnvidia-ml-standin.c)
 * so discovery and sampling are exercised without a GPU.
 *
 * What it reports:
 *   - at open: the GPUs (index, UUID, name, total / free / used memory) and
 *     the driver version;
 *   - per sample: each GPU's utilisation and memory, every compute process's
 *     used memory (pid -> MiB) and, where the driver keeps them, per-process
 *     utilisation samples.  The live driver attributes a segment's peak GPU
 *     memory by summing the processes of its process group
 *     (telemetry_snapshot_mem_for_pgid).
 *
 * A machine without the driver is not an error: telemetry_open() returns 0
 * GPUs and telemetry_status() says why.  The library never prints; the
 * caller says "no NVIDIA driver (...): using the host only" once, where it
 * matters (inventory.c builds the line).
 *
 * Thread safety: one telemetry object is used from one thread (the live
 * driver's event loop).
 */
#ifndef RELISH_TELEMETRY_NVML_H
#define RELISH_TELEMETRY_NVML_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

#define TELEMETRY_NAME_MAX 96   /* NVML's device name / UUID buffer size (v2) */

typedef struct telemetry telemetry;

/* One GPU as NVML saw it when the object was opened. */
typedef struct telemetry_gpu {
	int index;                        /* NVML index (0-based) */
	char uuid[TELEMETRY_NAME_MAX];    /* "GPU-8f3c..." */
	char name[TELEMETRY_NAME_MAX];    /* "NVIDIA H100 80GB HBM3" */
	uint64_t mem_total_mib;
	uint64_t mem_free_mib;
	uint64_t mem_used_mib;
} telemetry_gpu;

/* One device's state in a sample. */
typedef struct telemetry_dev_sample {
	int index;
	int util_valid;           /* 0 when the driver would not say */
	unsigned util_gpu;        /* percent of time a kernel ran, last period */
	unsigned util_mem;        /* percent of time memory was read or written */
	uint64_t mem_used_mib;
	uint64_t mem_free_mib;
} telemetry_dev_sample;

/* A compute process's memory on one device. */
typedef struct telemetry_proc_mem {
	uint32_t pid;             /* in the host's pid namespace */
	int device;               /* NVML index */
	uint64_t used_mib;        /* UINT64_MAX when the driver cannot tell */
} telemetry_proc_mem;

/* A process's utilisation on one device (the latest sample the driver kept). */
typedef struct telemetry_proc_util {
	uint32_t pid;
	int device;
	unsigned sm;              /* percent of SM time */
	unsigned mem;             /* percent of memory-controller time */
	uint64_t timestamp_us;    /* CPU time of the driver's sample */
} telemetry_proc_util;

/* A sample: arrays owned by the snapshot, freed by telemetry_snapshot_fini. */
typedef struct telemetry_snapshot {
	double now;               /* the caller's clock, copied */
	size_t n_dev;
	telemetry_dev_sample *dev;
	size_t n_proc;
	telemetry_proc_mem *proc;
	size_t n_util;
	telemetry_proc_util *util;
} telemetry_snapshot;

/*
 * Open NVML: RELISH_NVML_LIBRARY if set, else libnvidia-ml.so.1.  On success
 * *out is a new object (free with telemetry_close) and the return value is
 * the number of GPUs (>= 0).  0 GPUs with telemetry_available() == 0 means
 * there is no usable driver (library missing, a symbol missing, nvmlInit
 * failed): telemetry_status() gives the reason.  Negative only for out of
 * memory or when a GPU seen by nvmlDeviceGetCount cannot be queried.
 */
int telemetry_open(telemetry **out, rl_err *err);

/* Shut NVML down and unload it.  Accepts NULL. */
void telemetry_close(telemetry *t);

int telemetry_available(const telemetry *t);   /* 1 when NVML answered */
const char *telemetry_status(const telemetry *t); /* "NVML 550.54.15, 2 GPUs" or why not */
const char *telemetry_driver_version(const telemetry *t); /* "" when unknown */
const char *telemetry_library(const telemetry *t);        /* path given to dlopen */

size_t telemetry_gpu_count(const telemetry *t);
/* GPU i as seen at open (i < count), or NULL.  Owned by t. */
const telemetry_gpu *telemetry_gpu_get(const telemetry *t, size_t i);

/*
 * Sample every GPU now: utilisation, memory, compute processes and
 * per-process utilisation newer than the previous sample.  now is the
 * caller's clock (kept in the snapshot; the module reads no clock).  On
 * success *snap is filled (release with telemetry_snapshot_fini).  A query
 * the device does not support (utilisation on some boards) is skipped, not
 * an error.
 */
int telemetry_sample(telemetry *t, double now, telemetry_snapshot *snap, rl_err *err);

/* Free a snapshot's arrays and zero it.  Accepts NULL and zeroed snapshots. */
void telemetry_snapshot_fini(telemetry_snapshot *snap);

/* ---- pure helpers (no NVML needed; unit-tested on their own) ---- */

/* Bytes to MiB rounded up (a process holding 1 byte holds a MiB's worth). */
uint64_t telemetry_bytes_to_mib(unsigned long long bytes);

/* Name of an NVML return code ("NVML_ERROR_NOT_SUPPORTED"), "NVML_UNKNOWN_<n>" style for others. */
const char *telemetry_nvml_code_name(int nvml_rc);

/* The relish error code for an NVML return code (0 for success). */
int telemetry_nvml_to_rl(int nvml_rc);

/*
 * Used memory of the processes in pids (any order, duplicates counted once)
 * on device (or on all devices when device < 0), in MiB.  Unknown amounts
 * (UINT64_MAX) are skipped.
 */
uint64_t telemetry_snapshot_mem_for_pids(const telemetry_snapshot *snap, int device,
					 const uint32_t *pids, size_t n_pids);

/* Used memory of one pid on device (< 0: all devices), in MiB. */
uint64_t telemetry_snapshot_mem_for_pid(const telemetry_snapshot *snap, int device,
					uint32_t pid);

/*
 * Used memory of every process whose process group is pgid (the live driver
 * starts each segment in its own group).  Calls getpgid() on each pid; a
 * process that has gone is skipped.  Processes in another pid namespace
 * (containers) are matched by the caller with _for_pids instead.
 */
uint64_t telemetry_snapshot_mem_for_pgid(const telemetry_snapshot *snap, int device,
					 pid_t pgid);

/*
 * SM utilisation summed over pids on device (< 0: all), from the snapshot's
 * per-process samples; -1 when none of them has a sample.
 */
double telemetry_snapshot_util_for_pids(const telemetry_snapshot *snap, int device,
					const uint32_t *pids, size_t n_pids);

/*
 * SM utilisation of the processes whose process group is pgid (a segment's
 * group, as for _mem_for_pgid), summed; -1 when none of them has a sample
 * in snap (the driver keeps no per-process samples, or they were idle).
 */
double telemetry_snapshot_util_for_pgid(const telemetry_snapshot *snap, int device, pid_t pgid);

#endif
