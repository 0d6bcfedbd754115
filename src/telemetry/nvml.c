/*
 * nvml.c - GPU telemetry through NVML, opened with dlopen() (see nvml.h).
 *
 * The symbols relish needs are looked up from one table (name, older name to
 * fall back to, required or not); a library that lacks a required one is
 * treated like no driver.  The process list prefers
 * nvmlDeviceGetComputeRunningProcesses_v3, then _v2 (both take the
 * four-field process record), then the unversioned symbol (two fields), so
 * old drivers still report per-process memory.
 */
#include "telemetry/nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "telemetry/nvml_abi.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"

struct nvml_api {
	nvml_return (*init)(void);
	nvml_return (*shutdown)(void);
	const char *(*error_string)(nvml_return);
	nvml_return (*get_count)(unsigned *);
	nvml_return (*get_handle)(unsigned, nvml_device *);
	nvml_return (*get_name)(nvml_device, char *, unsigned);
	nvml_return (*get_uuid)(nvml_device, char *, unsigned);
	nvml_return (*get_memory)(nvml_device, nvml_memory *);
	nvml_return (*get_util)(nvml_device, nvml_utilization *);
	nvml_return (*get_procs_v3)(nvml_device, unsigned *, nvml_process_info *);
	nvml_return (*get_procs_v2)(nvml_device, unsigned *, nvml_process_info *);
	nvml_return (*get_procs_v1)(nvml_device, unsigned *, nvml_process_info_v1 *);
	nvml_return (*get_proc_util)(nvml_device, nvml_process_util_sample *, unsigned *,
				     unsigned long long);
	nvml_return (*driver_version)(char *, unsigned);
};

/* Where each function comes from.  fallback: an older export of the same
 * call with the same arguments (nvmlInit_v2 replaced nvmlInit, etc.). */
static const struct nvml_symbol {
	const char *name;
	const char *fallback;
	int required;
	size_t offset;
} nvml_symbols[] = {
	{"nvmlInit_v2", "nvmlInit", 1, offsetof(struct nvml_api, init)},
	{"nvmlShutdown", NULL, 1, offsetof(struct nvml_api, shutdown)},
	{"nvmlErrorString", NULL, 0, offsetof(struct nvml_api, error_string)},
	{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", 1, offsetof(struct nvml_api, get_count)},
	{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", 1,
	 offsetof(struct nvml_api, get_handle)},
	{"nvmlDeviceGetName", NULL, 1, offsetof(struct nvml_api, get_name)},
	{"nvmlDeviceGetUUID", NULL, 1, offsetof(struct nvml_api, get_uuid)},
	{"nvmlDeviceGetMemoryInfo", NULL, 1, offsetof(struct nvml_api, get_memory)},
	{"nvmlDeviceGetUtilizationRates", NULL, 0, offsetof(struct nvml_api, get_util)},
	{"nvmlDeviceGetComputeRunningProcesses_v3", NULL, 0,
	 offsetof(struct nvml_api, get_procs_v3)},
	{"nvmlDeviceGetComputeRunningProcesses_v2", NULL, 0,
	 offsetof(struct nvml_api, get_procs_v2)},
	{"nvmlDeviceGetComputeRunningProcesses", NULL, 0, offsetof(struct nvml_api, get_procs_v1)},
	{"nvmlDeviceGetProcessUtilization", NULL, 0, offsetof(struct nvml_api, get_proc_util)},
	{"nvmlSystemGetDriverVersion", NULL, 0, offsetof(struct nvml_api, driver_version)},
};

/* NVML return codes: name and the relish code they become. */
static const struct nvml_code {
	int rc;
	const char *name;
	int rl;
} nvml_codes[] = {
	{NVML_RC_SUCCESS, "NVML_SUCCESS", RL_OK},
	{NVML_RC_UNINITIALIZED, "NVML_ERROR_UNINITIALIZED", RL_EINTERNAL},
	{NVML_RC_INVALID_ARGUMENT, "NVML_ERROR_INVALID_ARGUMENT", RL_EINVAL},
	{NVML_RC_NOT_SUPPORTED, "NVML_ERROR_NOT_SUPPORTED", RL_EUNSUPPORTED},
	{NVML_RC_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION", RL_EIO},
	{NVML_RC_ALREADY_INITIALIZED, "NVML_ERROR_ALREADY_INITIALIZED", RL_EINTERNAL},
	{NVML_RC_NOT_FOUND, "NVML_ERROR_NOT_FOUND", RL_ENOTFOUND},
	{NVML_RC_INSUFFICIENT_SIZE, "NVML_ERROR_INSUFFICIENT_SIZE", RL_EINTERNAL},
	{NVML_RC_INSUFFICIENT_POWER, "NVML_ERROR_INSUFFICIENT_POWER", RL_EIO},
	{NVML_RC_DRIVER_NOT_LOADED, "NVML_ERROR_DRIVER_NOT_LOADED", RL_EUNSUPPORTED},
	{NVML_RC_TIMEOUT, "NVML_ERROR_TIMEOUT", RL_EBUSY},
	{NVML_RC_IRQ_ISSUE, "NVML_ERROR_IRQ_ISSUE", RL_EIO},
	{NVML_RC_LIBRARY_NOT_FOUND, "NVML_ERROR_LIBRARY_NOT_FOUND", RL_EUNSUPPORTED},
	{NVML_RC_FUNCTION_NOT_FOUND, "NVML_ERROR_FUNCTION_NOT_FOUND", RL_EUNSUPPORTED},
	{NVML_RC_CORRUPTED_INFOROM, "NVML_ERROR_CORRUPTED_INFOROM", RL_EIO},
	{NVML_RC_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST", RL_EIO},
	{NVML_RC_RESET_REQUIRED, "NVML_ERROR_RESET_REQUIRED", RL_EIO},
	{NVML_RC_OPERATING_SYSTEM, "NVML_ERROR_OPERATING_SYSTEM", RL_EIO},
	{NVML_RC_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", RL_EUNSUPPORTED},
	{NVML_RC_IN_USE, "NVML_ERROR_IN_USE", RL_EBUSY},
	{NVML_RC_MEMORY, "NVML_ERROR_MEMORY", RL_ENOMEM},
	{NVML_RC_NO_DATA, "NVML_ERROR_NO_DATA", RL_ENOTFOUND},
	{NVML_RC_INSUFFICIENT_RESOURCES, "NVML_ERROR_INSUFFICIENT_RESOURCES", RL_EBUSY},
	{NVML_RC_ARGUMENT_VERSION_MISMATCH, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH",
	 RL_EUNSUPPORTED},
	{NVML_RC_DEPRECATED, "NVML_ERROR_DEPRECATED", RL_EUNSUPPORTED},
	{NVML_RC_NOT_READY, "NVML_ERROR_NOT_READY", RL_EBUSY},
	{NVML_RC_GPU_NOT_FOUND, "NVML_ERROR_GPU_NOT_FOUND", RL_ENOTFOUND},
	{NVML_RC_INVALID_STATE, "NVML_ERROR_INVALID_STATE", RL_EIO},
	{NVML_RC_UNKNOWN, "NVML_ERROR_UNKNOWN", RL_EIO},
};

struct telemetry {
	void *lib;                    /* dlopen handle, NULL when unavailable */
	int initialised;              /* nvmlInit succeeded: shut down on close */
	struct nvml_api api;
	char library[512];
	char status[512];
	char driver[NVML_ABI_DRIVER_BUFFER];
	size_t n_gpu;
	telemetry_gpu *gpu;
	nvml_device *handle;
	unsigned long long *util_seen; /* per GPU: newest per-process sample seen */
};

const char *telemetry_nvml_code_name(int nvml_rc)
{
	for (size_t i = 0; i < sizeof nvml_codes / sizeof nvml_codes[0]; i++)
		if (nvml_codes[i].rc == nvml_rc)
			return nvml_codes[i].name;
	return "NVML_ERROR_UNRECOGNISED";
}

int telemetry_nvml_to_rl(int nvml_rc)
{
	for (size_t i = 0; i < sizeof nvml_codes / sizeof nvml_codes[0]; i++)
		if (nvml_codes[i].rc == nvml_rc)
			return nvml_codes[i].rl;
	return RL_EIO;
}

uint64_t telemetry_bytes_to_mib(unsigned long long bytes)
{
	const unsigned long long mib = 1024ULL * 1024ULL;
	return (uint64_t)(bytes / mib + (bytes % mib != 0));
}

/* "NVML_ERROR_NOT_SUPPORTED (Not Supported)" for messages. */
static void describe_rc(const telemetry *t, nvml_return rc, char *buf, size_t n)
{
	const char *what = t->api.error_string ? t->api.error_string(rc) : NULL;
	if (what && *what)
		snprintf(buf, n, "%s (%s)", telemetry_nvml_code_name(rc), what);
	else
		snprintf(buf, n, "%s (code %d)", telemetry_nvml_code_name(rc), rc);
}

static int nvml_fail(const telemetry *t, rl_err *err, nvml_return rc, const char *what, int dev)
{
	char d[256];
	describe_rc(t, rc, d, sizeof d);
	if (dev >= 0)
		return rl_err_set(err, telemetry_nvml_to_rl(rc), "NVML %s on GPU %d: %s", what, dev, d);
	return rl_err_set(err, telemetry_nvml_to_rl(rc), "NVML %s: %s", what, d);
}

/* Resolve the symbol table.  Returns 0, or -1 with t->status naming the
 * first required symbol that is missing. */
static int resolve_symbols(telemetry *t)
{
	for (size_t i = 0; i < sizeof nvml_symbols / sizeof nvml_symbols[0]; i++) {
		const struct nvml_symbol *s = &nvml_symbols[i];
		void *sym = dlsym(t->lib, s->name);
		if (!sym && s->fallback)
			sym = dlsym(t->lib, s->fallback);
		if (!sym && s->required) {
			snprintf(t->status, sizeof t->status, "%s lacks %s", t->library, s->name);
			return -1;
		}
		/* POSIX guarantees data and function pointers convert through dlsym. */
		memcpy((char *)&t->api + s->offset, &sym, sizeof sym);
	}
	return 0;
}

/* Query GPU i at open.  Returns 0 or a negative error. */
static int query_gpu(telemetry *t, unsigned i, rl_err *err)
{
	nvml_device h;
	nvml_return rc = t->api.get_handle(i, &h);
	if (rc)
		return nvml_fail(t, err, rc, "nvmlDeviceGetHandleByIndex", (int)i);
	telemetry_gpu *g = &t->gpu[i];
	memset(g, 0, sizeof *g);
	g->index = (int)i;
	char buf[NVML_ABI_NAME_BUFFER] = {0};
	if ((rc = t->api.get_name(h, buf, sizeof buf)))
		return nvml_fail(t, err, rc, "nvmlDeviceGetName", (int)i);
	snprintf(g->name, sizeof g->name, "%s", buf);
	memset(buf, 0, sizeof buf);
	if ((rc = t->api.get_uuid(h, buf, sizeof buf)))
		return nvml_fail(t, err, rc, "nvmlDeviceGetUUID", (int)i);
	snprintf(g->uuid, sizeof g->uuid, "%s", buf);
	nvml_memory m;
	if ((rc = t->api.get_memory(h, &m)))
		return nvml_fail(t, err, rc, "nvmlDeviceGetMemoryInfo", (int)i);
	/* Capacity rounds down, usage up: never promise memory that is not there. */
	g->mem_total_mib = m.total / (1024ULL * 1024ULL);
	g->mem_free_mib = m.free / (1024ULL * 1024ULL);
	g->mem_used_mib = telemetry_bytes_to_mib(m.used);
	t->handle[i] = h;
	return 0;
}

int telemetry_open(telemetry **out, rl_err *err)
{
	telemetry *t = calloc(1, sizeof *t);
	if (!t)
		return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
	const char *path = getenv("RELISH_NVML_LIBRARY");
	if (!path || !*path)
		path = NVML_DEFAULT_LIBRARY;
	snprintf(t->library, sizeof t->library, "%s", path);

	t->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!t->lib) {
		/* dlerror repeats the name: "X: cannot open shared object file:
		 * No such file or directory".  One short line says it. */
		const char *why = dlerror();
		size_t pl = strlen(path);
		if (why && !strncmp(why, path, pl) && !strncmp(why + pl, ": ", 2))
			why += pl + 2;
		if (why && strstr(why, "No such file"))
			snprintf(t->status, sizeof t->status, "%s not found", path);
		else
			snprintf(t->status, sizeof t->status, "cannot load %s: %s", path,
				 why ? why : "unknown reason");
		*out = t;
		return 0;
	}
	if (resolve_symbols(t) < 0)
		goto unavailable;
	nvml_return rc = t->api.init();
	if (rc) {
		char d[256];
		describe_rc(t, rc, d, sizeof d);
		snprintf(t->status, sizeof t->status, "nvmlInit failed: %s", d);
		goto unavailable;
	}
	t->initialised = 1;

	if (t->api.driver_version) {
		char v[NVML_ABI_DRIVER_BUFFER] = {0};
		if (t->api.driver_version(v, sizeof v) == NVML_RC_SUCCESS)
			snprintf(t->driver, sizeof t->driver, "%s", v);
	}
	unsigned count = 0;
	if ((rc = t->api.get_count(&count))) {
		int code = nvml_fail(t, err, rc, "nvmlDeviceGetCount", -1);
		telemetry_close(t);
		return code;
	}
	if (count) {
		t->gpu = calloc(count, sizeof *t->gpu);
		t->handle = calloc(count, sizeof *t->handle);
		t->util_seen = calloc(count, sizeof *t->util_seen);
		if (!t->gpu || !t->handle || !t->util_seen) {
			telemetry_close(t);
			return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
		}
	}
	for (unsigned i = 0; i < count; i++) {
		int e = query_gpu(t, i, err);
		if (e < 0) {
			telemetry_close(t);
			return e;
		}
	}
	t->n_gpu = count;
	snprintf(t->status, sizeof t->status, "NVML driver %s, %u GPU%s",
		 t->driver[0] ? t->driver : "(version unknown)", count, count == 1 ? "" : "s");
	*out = t;
	return (int)count;

unavailable:
	dlclose(t->lib);
	t->lib = NULL;
	memset(&t->api, 0, sizeof t->api);
	*out = t;
	return 0;
}

void telemetry_close(telemetry *t)
{
	if (!t)
		return;
	if (t->initialised && t->api.shutdown)
		t->api.shutdown();
	if (t->lib)
		dlclose(t->lib);
	free(t->gpu);
	free(t->handle);
	free(t->util_seen);
	free(t);
}

int telemetry_available(const telemetry *t) { return t && t->initialised; }
const char *telemetry_status(const telemetry *t) { return t ? t->status : "no telemetry"; }
const char *telemetry_driver_version(const telemetry *t) { return t ? t->driver : ""; }
const char *telemetry_library(const telemetry *t) { return t ? t->library : ""; }
size_t telemetry_gpu_count(const telemetry *t) { return t ? t->n_gpu : 0; }

const telemetry_gpu *telemetry_gpu_get(const telemetry *t, size_t i)
{
	return t && i < t->n_gpu ? &t->gpu[i] : NULL;
}

/* Growable arrays for the snapshot. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	void *p = realloc(*arr, ncap * elem);
	if (!p)
		return -1;
	*arr = p;
	*cap = ncap;
	return 0;
}

struct snap_build {
	telemetry_snapshot s;
	size_t cap_proc, cap_util;
};

static int add_proc(struct snap_build *b, int dev, unsigned pid, unsigned long long bytes)
{
	if (grow((void **)&b->s.proc, &b->cap_proc, b->s.n_proc + 1, sizeof *b->s.proc))
		return -1;
	telemetry_proc_mem *p = &b->s.proc[b->s.n_proc++];
	p->pid = pid;
	p->device = dev;
	p->used_mib = bytes == NVML_ABI_VALUE_NOT_AVAILABLE ? UINT64_MAX
							     : telemetry_bytes_to_mib(bytes);
	return 0;
}

/*
 * The two-call protocol of the process list: ask with a buffer, and when
 * the driver says it is too small (processes appeared meanwhile) grow it
 * to the count it returned and ask again, a few times at most.
 */
static int sample_procs(telemetry *t, int dev, struct snap_build *b, rl_err *err)
{
	nvml_device h = t->handle[dev];
	unsigned cap = 16;
	for (int attempt = 0; attempt < 4; attempt++) {
		unsigned n = cap;
		nvml_return rc;
		if (t->api.get_procs_v3 || t->api.get_procs_v2) {
			nvml_process_info *buf = calloc(cap, sizeof *buf);
			if (!buf)
				return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
			rc = t->api.get_procs_v3 ? t->api.get_procs_v3(h, &n, buf)
						 : t->api.get_procs_v2(h, &n, buf);
			for (unsigned i = 0; rc == NVML_RC_SUCCESS && i < n && i < cap; i++)
				if (add_proc(b, dev, buf[i].pid, buf[i].used_gpu_memory)) {
					free(buf);
					return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
				}
			free(buf);
		} else if (t->api.get_procs_v1) {
			nvml_process_info_v1 *buf = calloc(cap, sizeof *buf);
			if (!buf)
				return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
			rc = t->api.get_procs_v1(h, &n, buf);
			for (unsigned i = 0; rc == NVML_RC_SUCCESS && i < n && i < cap; i++)
				if (add_proc(b, dev, buf[i].pid, buf[i].used_gpu_memory)) {
					free(buf);
					return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
				}
			free(buf);
		} else {
			return 0; /* this driver cannot list processes */
		}
		if (rc == NVML_RC_SUCCESS || rc == NVML_RC_NOT_SUPPORTED)
			return 0;
		if (rc != NVML_RC_INSUFFICIENT_SIZE)
			return nvml_fail(t, err, rc, "nvmlDeviceGetComputeRunningProcesses", dev);
		cap = n > cap ? n + 8 : cap * 2;
	}
	return rl_err_set(err, RL_EBUSY,
			  "NVML process list on GPU %d kept growing while read", dev);
}

/* Per-process utilisation newer than the last sample seen on dev.  Boards
 * and drivers that keep none answer NOT_SUPPORTED or NOT_FOUND: no data. */
static int sample_proc_util(telemetry *t, int dev, struct snap_build *b, rl_err *err)
{
	if (!t->api.get_proc_util)
		return 0;
	nvml_device h = t->handle[dev];
	unsigned n = 0;
	nvml_return rc = t->api.get_proc_util(h, NULL, &n, t->util_seen[dev]);
	if (rc == NVML_RC_NOT_SUPPORTED || rc == NVML_RC_NOT_FOUND || rc == NVML_RC_NO_PERMISSION)
		return 0;
	if (rc != NVML_RC_SUCCESS && rc != NVML_RC_INSUFFICIENT_SIZE)
		return nvml_fail(t, err, rc, "nvmlDeviceGetProcessUtilization", dev);
	if (n == 0)
		return 0;
	unsigned cap = n + 8;
	nvml_process_util_sample *buf = calloc(cap, sizeof *buf);
	if (!buf)
		return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
	n = cap;
	rc = t->api.get_proc_util(h, buf, &n, t->util_seen[dev]);
	if (rc == NVML_RC_NOT_FOUND || rc == NVML_RC_INSUFFICIENT_SIZE) {
		free(buf); /* gone since the first call, or grew: next sample */
		return 0;
	}
	if (rc != NVML_RC_SUCCESS) {
		free(buf);
		return nvml_fail(t, err, rc, "nvmlDeviceGetProcessUtilization", dev);
	}
	for (unsigned i = 0; i < n && i < cap; i++) {
		if (grow((void **)&b->s.util, &b->cap_util, b->s.n_util + 1, sizeof *b->s.util)) {
			free(buf);
			return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
		}
		telemetry_proc_util *u = &b->s.util[b->s.n_util++];
		u->pid = buf[i].pid;
		u->device = dev;
		u->sm = buf[i].sm_util;
		u->mem = buf[i].mem_util;
		u->timestamp_us = buf[i].timestamp_us;
		if (buf[i].timestamp_us > t->util_seen[dev])
			t->util_seen[dev] = buf[i].timestamp_us;
	}
	free(buf);
	return 0;
}

int telemetry_sample(telemetry *t, double now, telemetry_snapshot *snap, rl_err *err)
{
	struct snap_build b;
	memset(&b, 0, sizeof b);
	b.s.now = now;
	int rc = 0;
	if (!telemetry_available(t) || t->n_gpu == 0) {
		*snap = b.s;
		return 0;
	}
	b.s.dev = calloc(t->n_gpu, sizeof *b.s.dev);
	if (!b.s.dev)
		return rl_err_set(err, RL_ENOMEM, "telemetry: out of memory");
	b.s.n_dev = t->n_gpu;
	for (size_t i = 0; i < t->n_gpu; i++) {
		telemetry_dev_sample *d = &b.s.dev[i];
		d->index = (int)i;
		nvml_memory m;
		nvml_return nrc = t->api.get_memory(t->handle[i], &m);
		if (nrc) {
			rc = nvml_fail(t, err, nrc, "nvmlDeviceGetMemoryInfo", (int)i);
			goto fail;
		}
		d->mem_used_mib = telemetry_bytes_to_mib(m.used);
		d->mem_free_mib = m.free / (1024ULL * 1024ULL);
		nvml_utilization u;
		if (t->api.get_util && t->api.get_util(t->handle[i], &u) == NVML_RC_SUCCESS) {
			d->util_valid = 1;
			d->util_gpu = u.gpu;
			d->util_mem = u.memory;
		}
		if ((rc = sample_procs(t, (int)i, &b, err)) < 0)
			goto fail;
		if ((rc = sample_proc_util(t, (int)i, &b, err)) < 0)
			goto fail;
	}
	*snap = b.s;
	return 0;
fail:
	telemetry_snapshot_fini(&b.s);
	return rc;
}

void telemetry_snapshot_fini(telemetry_snapshot *snap)
{
	if (!snap)
		return;
	free(snap->dev);
	free(snap->proc);
	free(snap->util);
	memset(snap, 0, sizeof *snap);
}

static int pid_listed(uint32_t pid, const uint32_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return 1;
	return 0;
}

/* A pid may appear twice on one device only if the driver repeats it; count
 * each (pid, device) once so a repeated record cannot double a peak. */
static int seen_before(const telemetry_snapshot *s, size_t upto)
{
	for (size_t j = 0; j < upto; j++)
		if (s->proc[j].pid == s->proc[upto].pid && s->proc[j].device == s->proc[upto].device)
			return 1;
	return 0;
}

/* Which processes a sum counts: listed pids, or the members of a group. */
struct proc_filter {
	const uint32_t *pids;
	size_t n_pids;
	pid_t pgid; /* when pids is NULL */
};

static int proc_matches(const struct proc_filter *f, uint32_t pid)
{
	return f->pids ? pid_listed(pid, f->pids, f->n_pids) : getpgid((pid_t)pid) == f->pgid;
}

/* Memory of the snapshot's processes on device (-1: any) that f selects,
 * each pid counted once per device. */
static uint64_t mem_sum(const telemetry_snapshot *snap, int device, const struct proc_filter *f)
{
	uint64_t sum = 0;
	if (!snap)
		return 0;
	for (size_t i = 0; i < snap->n_proc; i++) {
		const telemetry_proc_mem *p = &snap->proc[i];
		if ((device >= 0 && p->device != device) || p->used_mib == UINT64_MAX)
			continue;
		if (proc_matches(f, p->pid) && !seen_before(snap, i))
			sum += p->used_mib;
	}
	return sum;
}

uint64_t telemetry_snapshot_mem_for_pids(const telemetry_snapshot *snap, int device,
					 const uint32_t *pids, size_t n_pids)
{
	struct proc_filter f = {.pids = pids, .n_pids = n_pids};
	if (!pids)
		return 0; /* no list selects nothing (a NULL list must not mean a group) */
	return mem_sum(snap, device, &f);
}

uint64_t telemetry_snapshot_mem_for_pid(const telemetry_snapshot *snap, int device, uint32_t pid)
{
	return telemetry_snapshot_mem_for_pids(snap, device, &pid, 1);
}

uint64_t telemetry_snapshot_mem_for_pgid(const telemetry_snapshot *snap, int device, pid_t pgid)
{
	struct proc_filter f = {.pgid = pgid};
	return mem_sum(snap, device, &f);
}

double telemetry_snapshot_util_for_pids(const telemetry_snapshot *snap, int device,
					const uint32_t *pids, size_t n_pids)
{
	if (!snap)
		return -1;
	double sum = 0;
	int any = 0;
	/* Several samples of one process may come back; keep the newest each. */
	for (size_t i = 0; i < snap->n_util; i++) {
		const telemetry_proc_util *u = &snap->util[i];
		if ((device >= 0 && u->device != device) || !pid_listed(u->pid, pids, n_pids))
			continue;
		int newer_exists = 0;
		for (size_t j = 0; j < snap->n_util; j++) {
			const telemetry_proc_util *v = &snap->util[j];
			if (j != i && v->pid == u->pid && v->device == u->device &&
			    (v->timestamp_us > u->timestamp_us ||
			     (v->timestamp_us == u->timestamp_us && j < i)))
				newer_exists = 1;
		}
		if (newer_exists)
			continue;
		sum += u->sm;
		any = 1;
	}
	return any ? sum : -1;
}

double telemetry_snapshot_util_for_pgid(const telemetry_snapshot *snap, int device, pid_t pgid)
{
	if (!snap || !snap->n_util)
		return -1;
	/* The group's pids among the sampled ones, then the pid rule above
	 * (newest sample per process, summed). */
	uint32_t *pids = malloc(snap->n_util * sizeof *pids);
	if (!pids)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < snap->n_util; i++)
		if (getpgid((pid_t)snap->util[i].pid) == pgid)
			pids[n++] = snap->util[i].pid;
	double u = n ? telemetry_snapshot_util_for_pids(snap, device, pids, n) : -1;
	free(pids);
	return u;
}
