/*
 * gpu_env.c - environment of a segment placed on a GPU, and MPS detection
 * (see gpu_env.h).
 */
#include "telemetry/gpu_env.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void gpu_env_free(env_var *v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static int push(env_var *v, size_t *n, const char *name, const char *value)
{
	v[*n].name = strdup(name);
	v[*n].value = strdup(value);
	(*n)++; /* counted even on failure so gpu_env_free releases the half */
	return v[*n - 1].name && v[*n - 1].value ? 0 : -1;
}

/* Append "sep item" to a growing heap string. */
static int append(char **s, const char *sep, const char *item)
{
	size_t old = *s ? strlen(*s) : 0;
	size_t add = (old ? strlen(sep) : 0) + strlen(item);
	char *p = realloc(*s, old + add + 1);
	if (!p)
		return -1;
	snprintf(p + old, add + 1, "%s%s", old ? sep : "", item);
	*s = p;
	return 0;
}

int gpu_env_build(const gpu_env_request *r, env_var **out, size_t *n_out, rl_err *err)
{
	if (!r || r->n_dev == 0 || !r->uuids)
		return rl_err_set(err, RL_EINVAL, "GPU environment: no device given");
	for (size_t i = 0; i < r->n_dev; i++)
		if (!r->uuids[i] || !*r->uuids[i] || strchr(r->uuids[i], ','))
			return rl_err_set(err, RL_EINVAL,
					  "GPU environment: device %zu: expected a UUID, got \"%s\"",
					  i, r->uuids[i] ? r->uuids[i] : "(null)");
	if (r->mps && (!r->mps_pipe_dir || !*r->mps_pipe_dir))
		return rl_err_set(err, RL_EINVAL, "GPU environment: MPS needs its pipe directory");

	env_var *v = calloc(6, sizeof *v);
	size_t n = 0;
	char *visible = NULL, *limits = NULL;
	char num[64];
	if (!v)
		goto nomem;
	for (size_t i = 0; i < r->n_dev; i++) {
		if (append(&visible, ",", r->uuids[i]))
			goto nomem;
		/* Ordinals as the trial sees them: CUDA renumbers visible devices from 0. */
		snprintf(num, sizeof num, "%zu=%lluMB", i, (unsigned long long)r->mem_mib);
		if (append(&limits, ",", num))
			goto nomem;
	}
	if (push(v, &n, "CUDA_VISIBLE_DEVICES", visible))
		goto nomem;
	if (r->mem_mib) {
		snprintf(num, sizeof num, "%llu", (unsigned long long)r->mem_mib);
		if (push(v, &n, "RELISH_GPU_MEMORY_MIB", num))
			goto nomem;
	}
	if (push(v, &n, "TF_FORCE_GPU_ALLOW_GROWTH", "true"))
		goto nomem;
	if (r->mps) {
		if (push(v, &n, "CUDA_MPS_PIPE_DIRECTORY", r->mps_pipe_dir))
			goto nomem;
		if (r->compute_pct > 0) {
			/* MPS takes whole percents; a share never rounds to 0 or past 100. */
			long p = lround(r->compute_pct);
			p = p < 1 ? 1 : p > 100 ? 100 : p;
			snprintf(num, sizeof num, "%ld", p);
			if (push(v, &n, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", num))
				goto nomem;
		}
		if (r->mem_mib && push(v, &n, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", limits))
			goto nomem;
	}
	free(visible);
	free(limits);
	*out = v;
	*n_out = n;
	return 0;
nomem:
	free(visible);
	free(limits);
	gpu_env_free(v, n);
	return rl_err_set(err, RL_ENOMEM, "GPU environment: out of memory");
}

int gpu_mps_detect_in(const char *pipe_dir_env, char *dir, size_t n)
{
	const char *d = pipe_dir_env && *pipe_dir_env ? pipe_dir_env : GPU_MPS_DEFAULT_PIPE_DIR;
	char path[4096];
	struct stat st;
	snprintf(path, sizeof path, "%s/control", d);
	/* The daemon's control endpoint is a named pipe in older releases and a
	 * socket in newer ones; a leftover regular file means no daemon. */
	if (stat(path, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return 0;
	snprintf(dir, n, "%s", d);
	return 1;
}

int gpu_mps_detect(char *dir, size_t n)
{
	return gpu_mps_detect_in(getenv("CUDA_MPS_PIPE_DIRECTORY"), dir, n);
}
