/*
 * inventory.h - the inventory of devices relish may place segments on.
 *
 * Two sources:
 *   - discovery: the GPUs NVML reports (telemetry/nvml.h) plus one `host`
 *     device (RAM relish may use, CPUs it may run on);
 *   - a devices file (YAML, or JSON, which libyaml reads as YAML flow
 *     syntax), for planning and simulation on machines without those GPUs,
 *     and for tests.  Named by --devices FILE or env RELISH_DEVICES:
 *
 *       devices:
 *         - name: A100
 *           uuid: GPU-fake      # with count > 1: GPU-fake-0 ... GPU-fake-3
 *           memory: 40GiB
 *           count: 4
 *       host:                   # or "host: none"; absent: measured
 *         memory: 16GiB
 *         cpus: 2
 *
 * Each entry carries a sched_device_info ready for sched_add_device().
 * Sizes: a number with an optional unit K, M, G, T (or KiB/KB/Ki ...), all
 * binary (1G = 1024 MiB); a bare number is MiB.
 */
#ifndef RELISH_TELEMETRY_INVENTORY_H
#define RELISH_TELEMETRY_INVENTORY_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "sched/sched.h"
#include "telemetry/nvml.h"

typedef struct device_entry {
	sched_device_info info;   /* what the scheduler gets */
	int nvml_index;           /* NVML index, -1 for host and declared devices */
	int has_usage;            /* mem_machine/used/free were measured */
	/* What the device holds and uses as a whole, beside info.mem_total_mib,
	 * relish's budget on it: a GPU's memory (budget = total), or the
	 * host's RAM (MemTotal; the budget is RELISH_HOST_MEMORY or what was
	 * available when relish started).  used + free = machine on a GPU;
	 * on the host used is MemTotal - MemAvailable, free MemAvailable. */
	uint64_t mem_machine_mib;
	uint64_t mem_used_mib;
	uint64_t mem_free_mib;
} device_entry;

typedef struct device_list {
	size_t n;
	device_entry *dev;        /* GPUs first (index order), host last */
	int from_config;          /* 1: declared in a devices file */
	char source[512];         /* "nvml", "host", or the devices file's path */
	char notice[512];         /* say this once when non-empty (no driver ...) */
} device_list;

typedef struct devices_options {
	const char *config_path;  /* NULL: env RELISH_DEVICES, else discover */
	uint64_t host_mem_mib;    /* 0: env RELISH_HOST_MEMORY, else MemAvailable */
	double host_cpus;         /* 0: env RELISH_HOST_CPUS, else CPUs we may use */
	int no_host;              /* 1: leave the host device out */
} devices_options;

/*
 * Assemble the device list: from the devices file when one is named (by o
 * or RELISH_DEVICES), else from NVML (opened and closed here) plus the
 * host.  o may be NULL for defaults.  On success *out is a new list (free
 * with device_list_free).  No driver is not an error: the list then holds
 * the host only and notice says so.
 */
int devices_discover(const devices_options *o, device_list **out, rl_err *err);

/* Same, from an already open telemetry object (the live driver keeps one
 * open for sampling).  t may be NULL or unavailable: host only. */
int devices_from_telemetry(const telemetry *t, const devices_options *o,
			   device_list **out, rl_err *err);

/* Read a devices file; errors name FILE:LINE:COL and the field. */
int devices_config_load(const char *path, const devices_options *o,
			device_list **out, rl_err *err);

/* Parse a devices file's text; name is used in messages. */
int devices_config_parse(const char *text, size_t len, const char *name,
			 const devices_options *o, device_list **out, rl_err *err);

void device_list_free(device_list *l);

/* Index of the device with this UUID (or name "host"), or -1. */
int device_list_find(const device_list *l, const char *uuid);

/* MemTotal and MemAvailable (MiB) from the text of /proc/meminfo.
 * Returns 0, or -1 when either line is missing. */
int devices_parse_meminfo(const char *text, uint64_t *total_mib, uint64_t *avail_mib);

#endif
