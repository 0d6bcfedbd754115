/*
 * libnvidia-ml-standin.c - a scripted stand-in for libnvidia-ml, for tests
 * only (never shipped, never installed).  relish opens it instead of the
 * real library when RELISH_NVML_LIBRARY names it, so GPU discovery,
 * sampling and per-process memory attribution run on machines without a
 * GPU.  It exports the NVML symbols relish resolves, with the layouts of
 * src/telemetry/nvml_abi.h.
 *
 * Script: the file named by RELISH_NVML_SCRIPT, read at nvmlInit, one
 * directive a line ('#' starts a comment):
 *   driver VERSION                 nvmlSystemGetDriverVersion
 *   init_error CODE                nvmlInit returns CODE
 *   device UUID TOTAL_MIB NAME...  one GPU per line, in index order
 *   used DEV MIB                   memory used outside any listed process
 *   util DEV GPU MEM               utilisation; successive lines for one
 *                                  device are returned call after call, the
 *                                  last one repeats
 *   proc DEV PID MIB               a compute process and its memory
 *   putil DEV PID SM MEM TS_US     a per-process utilisation sample
 *   fail FUNCTION CODE             FUNCTION returns CODE (every device)
 *   state FILE                     dynamic processes: each process query
 *                                  re-reads FILE ("DEV PID MIB" lines) and
 *                                  uses it instead of the proc lines, so a
 *                                  test can change a "trial's" GPU memory
 *                                  while relish samples it; a fourth field
 *                                  "DEV PID MIB SM" also gives the process
 *                                  a fresh SM-utilisation sample at every
 *                                  nvmlDeviceGetProcessUtilization call;
 *                                  lines of processes that have exited are
 *                                  left out (a process's memory is gone
 *                                  with it), so another process's line is
 *                                  foreign to relish exactly while it runs
 *   busy                           time-based utilisation, as the real
 *                                  library measures it for most training
 *                                  processes: every state-mode process
 *                                  without an SM field reports 100 % SM,
 *                                  and a device without util lines 100 %
 *                                  while any process runs on it (0 %
 *                                  idle), however little of the GPU the
 *                                  processes really occupy
 * Device memory used = used + the processes' memory; free = total - used.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "telemetry/nvml_abi.h"

#define SI_MAX_DEV 16
#define SI_MAX_PROC 256
#define SI_MAX_UTIL 64
#define SI_MAX_FAIL 16
#define MIB (1024ULL * 1024ULL)

struct si_proc {
	int dev;
	unsigned pid;
	unsigned long long mib;
	int sm;                 /* state mode: SM percent, -1 none */
};

struct si_putil {
	int dev;
	unsigned pid, sm, mem;
	unsigned long long ts;
};

struct si_device {
	char uuid[NVML_ABI_UUID_BUFFER];
	char name[NVML_ABI_NAME_BUFFER];
	unsigned long long total_mib, base_used_mib;
	unsigned util_gpu[SI_MAX_UTIL], util_mem[SI_MAX_UTIL];
	int n_util, next_util;
};

static struct {
	int loaded, init_count;
	char driver[NVML_ABI_DRIVER_BUFFER];
	int init_error;
	int n_dev;
	struct si_device dev[SI_MAX_DEV];
	int n_proc;
	struct si_proc proc[SI_MAX_PROC];
	int n_putil;
	struct si_putil putil[SI_MAX_PROC];
	int n_fail;
	struct {
		char fn[64];
		int code;
	} fail[SI_MAX_FAIL];
	char state[512];
	unsigned long long state_ts; /* timestamps of state-mode samples */
	int busy;               /* the busy directive */
} si;

/* The exported NVML surface (prototypes keep -Wmissing-prototypes quiet). */
nvml_return nvmlInit_v2(void);
nvml_return nvmlShutdown(void);
const char *nvmlErrorString(nvml_return rc);
nvml_return nvmlSystemGetDriverVersion(char *buf, unsigned len);
nvml_return nvmlDeviceGetCount_v2(unsigned *count);
nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *h);
nvml_return nvmlDeviceGetName(nvml_device h, char *buf, unsigned len);
nvml_return nvmlDeviceGetUUID(nvml_device h, char *buf, unsigned len);
nvml_return nvmlDeviceGetMemoryInfo(nvml_device h, nvml_memory *m);
nvml_return nvmlDeviceGetUtilizationRates(nvml_device h, nvml_utilization *u);
nvml_return nvmlDeviceGetComputeRunningProcesses_v3(nvml_device h, unsigned *n,
						    nvml_process_info *infos);
nvml_return nvmlDeviceGetProcessUtilization(nvml_device h, nvml_process_util_sample *s,
					    unsigned *n, unsigned long long last_seen);

static int scripted_failure(const char *fn)
{
	for (int i = 0; i < si.n_fail; i++)
		if (!strcmp(si.fail[i].fn, fn))
			return si.fail[i].code;
	return 0;
}

/* Parse the script.  Returns 0, or an NVML code for a bad or absent script. */
static int load_script(void)
{
	const char *path = getenv("RELISH_NVML_SCRIPT");
	memset(&si, 0, sizeof si);
	if (!path)
		return NVML_RC_DRIVER_NOT_LOADED;
	FILE *f = fopen(path, "r");
	if (!f)
		return NVML_RC_DRIVER_NOT_LOADED;
	char line[1024];
	int lineno = 0, bad = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		line[strcspn(line, "\r\n#")] = 0;
		char kw[32];
		int off = 0;
		if (sscanf(line, "%31s %n", kw, &off) != 1)
			continue;
		const char *rest = line + off;
		int d, n = 0;
		unsigned a, b, c;
		unsigned long long x, y;
		char word[512];
		if (!strcmp(kw, "driver") && sscanf(rest, "%79s", si.driver) == 1) {
		} else if (!strcmp(kw, "init_error") && sscanf(rest, "%d", &si.init_error) == 1) {
		} else if (!strcmp(kw, "device") && si.n_dev < SI_MAX_DEV &&
			   sscanf(rest, "%95s %llu %n", word, &x, &n) == 2 && rest[n]) {
			struct si_device *dv = &si.dev[si.n_dev++];
			snprintf(dv->uuid, sizeof dv->uuid, "%s", word);
			snprintf(dv->name, sizeof dv->name, "%s", rest + n);
			dv->total_mib = x;
		} else if (!strcmp(kw, "used") && sscanf(rest, "%d %llu", &d, &x) == 2 &&
			   d >= 0 && d < si.n_dev) {
			si.dev[d].base_used_mib = x;
		} else if (!strcmp(kw, "util") && sscanf(rest, "%d %u %u", &d, &a, &b) == 3 &&
			   d >= 0 && d < si.n_dev && si.dev[d].n_util < SI_MAX_UTIL) {
			struct si_device *dv = &si.dev[d];
			dv->util_gpu[dv->n_util] = a;
			dv->util_mem[dv->n_util++] = b;
		} else if (!strcmp(kw, "proc") && sscanf(rest, "%d %u %llu", &d, &a, &x) == 3 &&
			   d >= 0 && d < si.n_dev && si.n_proc < SI_MAX_PROC) {
			si.proc[si.n_proc++] = (struct si_proc){d, a, x, -1};
		} else if (!strcmp(kw, "putil") &&
			   sscanf(rest, "%d %u %u %u %llu", &d, &a, &b, &c, &y) == 5 && d >= 0 &&
			   d < si.n_dev && si.n_putil < SI_MAX_PROC) {
			si.putil[si.n_putil++] = (struct si_putil){d, a, b, c, y};
		} else if (!strcmp(kw, "fail") && si.n_fail < SI_MAX_FAIL &&
			   sscanf(rest, "%63s %d", si.fail[si.n_fail].fn, &si.fail[si.n_fail].code) == 2) {
			si.n_fail++;
		} else if (!strcmp(kw, "state") && sscanf(rest, "%511s", si.state) == 1) {
		} else if (!strcmp(kw, "busy") && !*rest) {
			si.busy = 1;
		} else {
			fprintf(stderr, "nvidia-ml stand-in: %s:%d: cannot read '%s'\n", path,
				lineno, line);
			bad = 1;
		}
	}
	fclose(f);
	return bad ? NVML_RC_UNKNOWN : 0;
}

/* In dynamic mode, re-read the processes from the state file. */
static void refresh_state(void)
{
	if (!si.state[0])
		return;
	si.n_proc = 0;
	FILE *f = fopen(si.state, "r");
	if (!f)
		return;
	char line[256];
	while (si.n_proc < SI_MAX_PROC && fgets(line, sizeof line, f)) {
		int d, sm = -1;
		unsigned pid;
		unsigned long long mib;
		/* A process that has exited holds no memory and is no longer
		 * listed, as with the real library: its line may stay. */
		if (sscanf(line, "%d %u %llu %d", &d, &pid, &mib, &sm) >= 3 && d >= 0 &&
		    d < si.n_dev && !(kill((pid_t)pid, 0) != 0 && errno == ESRCH))
			si.proc[si.n_proc++] = (struct si_proc){d, pid, mib, sm < 0 && si.busy ? 100 : sm};
	}
	fclose(f);
}

static struct si_device *device_of(nvml_device h)
{
	struct si_device *d = (struct si_device *)(void *)h;
	if (!si.init_count || d < si.dev || d >= si.dev + si.n_dev)
		return NULL;
	return d;
}

static int index_of(nvml_device h) { return (int)(device_of(h) - si.dev); }

nvml_return nvmlInit_v2(void)
{
	if (si.init_count) {
		si.init_count++;
		return 0;
	}
	int rc = load_script();
	if (rc)
		return rc;
	if (si.init_error)
		return si.init_error;
	si.init_count = 1;
	return 0;
}

nvml_return nvmlShutdown(void)
{
	if (!si.init_count)
		return NVML_RC_UNINITIALIZED;
	si.init_count--;
	return 0;
}

const char *nvmlErrorString(nvml_return rc)
{
	switch (rc) {
	case NVML_RC_SUCCESS: return "Success";
	case NVML_RC_NOT_SUPPORTED: return "Not Supported";
	case NVML_RC_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_RC_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_RC_GPU_IS_LOST: return "GPU is lost";
	default: return "Stand-in Error";
	}
}

nvml_return nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	if (!si.init_count)
		return NVML_RC_UNINITIALIZED;
	if (strlen(si.driver) + 1 > len)
		return NVML_RC_INSUFFICIENT_SIZE;
	strcpy(buf, si.driver);
	return 0;
}

nvml_return nvmlDeviceGetCount_v2(unsigned *count)
{
	if (!si.init_count)
		return NVML_RC_UNINITIALIZED;
	int rc = scripted_failure("nvmlDeviceGetCount_v2");
	if (rc)
		return rc;
	*count = (unsigned)si.n_dev;
	return 0;
}

nvml_return nvmlDeviceGetHandleByIndex_v2(unsigned i, nvml_device *h)
{
	if (!si.init_count)
		return NVML_RC_UNINITIALIZED;
	if (i >= (unsigned)si.n_dev)
		return NVML_RC_INVALID_ARGUMENT;
	*h = (nvml_device)(void *)&si.dev[i];
	return 0;
}

static nvml_return copy_string(const char *s, char *buf, unsigned len)
{
	if (strlen(s) + 1 > len)
		return NVML_RC_INSUFFICIENT_SIZE;
	strcpy(buf, s);
	return 0;
}

nvml_return nvmlDeviceGetName(nvml_device h, char *buf, unsigned len)
{
	struct si_device *d = device_of(h);
	if (!d)
		return NVML_RC_INVALID_ARGUMENT;
	int rc = scripted_failure("nvmlDeviceGetName");
	return rc ? rc : copy_string(d->name, buf, len);
}

nvml_return nvmlDeviceGetUUID(nvml_device h, char *buf, unsigned len)
{
	struct si_device *d = device_of(h);
	if (!d)
		return NVML_RC_INVALID_ARGUMENT;
	int rc = scripted_failure("nvmlDeviceGetUUID");
	return rc ? rc : copy_string(d->uuid, buf, len);
}

nvml_return nvmlDeviceGetMemoryInfo(nvml_device h, nvml_memory *m)
{
	struct si_device *d = device_of(h);
	if (!d)
		return NVML_RC_INVALID_ARGUMENT;
	int rc = scripted_failure("nvmlDeviceGetMemoryInfo");
	if (rc)
		return rc;
	refresh_state();
	unsigned long long used = d->base_used_mib;
	for (int i = 0; i < si.n_proc; i++)
		if (si.proc[i].dev == index_of(h))
			used += si.proc[i].mib;
	if (used > d->total_mib)
		used = d->total_mib;
	m->total = d->total_mib * MIB;
	m->used = used * MIB;
	m->free = m->total - m->used;
	return 0;
}

nvml_return nvmlDeviceGetUtilizationRates(nvml_device h, nvml_utilization *u)
{
	struct si_device *d = device_of(h);
	if (!d)
		return NVML_RC_INVALID_ARGUMENT;
	int rc = scripted_failure("nvmlDeviceGetUtilizationRates");
	if (rc)
		return rc;
	if (!d->n_util && si.busy) {
		/* time-based: 100 % while anything runs */
		refresh_state();
		u->gpu = u->memory = 0;
		for (int i = 0; i < si.n_proc; i++)
			if (si.proc[i].dev == index_of(h))
				u->gpu = 100, u->memory = 50;
		return 0;
	}
	if (!d->n_util)
		return NVML_RC_NOT_SUPPORTED;
	int k = d->next_util < d->n_util ? d->next_util++ : d->n_util - 1;
	u->gpu = d->util_gpu[k];
	u->memory = d->util_mem[k];
	return 0;
}

nvml_return nvmlDeviceGetComputeRunningProcesses_v3(nvml_device h, unsigned *n,
						    nvml_process_info *infos)
{
	struct si_device *d = device_of(h);
	if (!d || !n)
		return NVML_RC_INVALID_ARGUMENT;
	int rc = scripted_failure("nvmlDeviceGetComputeRunningProcesses_v3");
	if (rc)
		return rc;
	refresh_state();
	unsigned count = 0;
	for (int i = 0; i < si.n_proc; i++)
		count += si.proc[i].dev == index_of(h);
	if (count > *n) {
		*n = count;
		return NVML_RC_INSUFFICIENT_SIZE;
	}
	unsigned k = 0;
	for (int i = 0; i < si.n_proc; i++) {
		if (si.proc[i].dev != index_of(h))
			continue;
		infos[k].pid = si.proc[i].pid;
		infos[k].used_gpu_memory = si.proc[i].mib * MIB;
		infos[k].gpu_instance_id = 0xFFFFFFFFu; /* no MIG */
		infos[k].compute_instance_id = 0xFFFFFFFFu;
		k++;
	}
	*n = count;
	return 0;
}

nvml_return nvmlDeviceGetProcessUtilization(nvml_device h, nvml_process_util_sample *s,
					    unsigned *n, unsigned long long last_seen)
{
	struct si_device *d = device_of(h);
	if (!d || !n)
		return NVML_RC_INVALID_ARGUMENT;
	int rc = scripted_failure("nvmlDeviceGetProcessUtilization");
	if (rc)
		return rc;
	unsigned count = 0;
	for (int i = 0; i < si.n_putil; i++)
		count += si.putil[i].dev == index_of(h) && si.putil[i].ts > last_seen;
	/* State-mode processes with an SM figure: one new sample per call,
	 * stamped after anything scripted. */
	refresh_state();
	unsigned long long now_ts = (1ULL << 50) + ++si.state_ts;
	for (int i = 0; si.state[0] && i < si.n_proc; i++)
		count += si.proc[i].dev == index_of(h) && si.proc[i].sm >= 0;
	if (count == 0)
		return NVML_RC_NOT_FOUND;
	if (!s || count > *n) {
		*n = count;
		return NVML_RC_INSUFFICIENT_SIZE;
	}
	unsigned k = 0;
	for (int i = 0; i < si.n_putil; i++) {
		const struct si_putil *p = &si.putil[i];
		if (p->dev != index_of(h) || p->ts <= last_seen)
			continue;
		s[k] = (nvml_process_util_sample){p->pid, p->ts, p->sm, p->mem, 0, 0};
		k++;
	}
	for (int i = 0; si.state[0] && i < si.n_proc; i++) {
		const struct si_proc *p = &si.proc[i];
		if (p->dev != index_of(h) || p->sm < 0)
			continue;
		s[k] = (nvml_process_util_sample){p->pid, now_ts, (unsigned)p->sm, 0, 0, 0};
		k++;
	}
	*n = count;
	return 0;
}
