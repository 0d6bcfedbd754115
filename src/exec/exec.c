/*
 * exec.c - the executor front end: defaults and the calls that dispatch
 * through an executor's ops (see exec.h).  Implementations live in their own
 * folders (src/process, src/container, src/slurm).
 */
#include "exec/exec.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

void exec_options_default(exec_options *o)
{
	o->kill_grace_s = 5.0;
	o->sample_interval_s = 0.2;
	o->memory_margin = 0.1;
	o->log_max_bytes = EXEC_LOG_MAX;
	o->idle_timeout_s = 300.0;
	o->max_idle = 8;
	o->confine = EXEC_CONFINE_AUTO;
}

int exec_launch(executor *ex, const exec_spec *es, const exec_callbacks *cb, void *ud,
		exec_segment **out, rl_err *err)
{
	return ex->ops->launch(ex, es, cb, ud, out, err);
}

void exec_cancel(executor *ex, exec_segment *seg)
{
	ex->ops->cancel(ex, seg);
}

void exec_release(executor *ex, const char *reuse_key)
{
	ex->ops->release(ex, reuse_key);
}

void exec_shutdown(executor *ex)
{
	ex->ops->shutdown(ex);
}

int exec_members(executor *ex, const exec_segment *seg, pid_t *out, size_t max)
{
	return ex->ops->members && seg ? ex->ops->members(ex, seg, out, max) : -1;
}

int exec_ident_of(executor *ex, const exec_segment *seg, exec_ident *out)
{
	return ex->ops->ident(ex, seg, out);
}

void exec_free(executor *ex)
{
	if (ex)
		ex->ops->destroy(ex);
}

void exec_owner_id(const char *store_path, char *buf, size_t n)
{
	char abs[PATH_MAX];
	const char *p = store_path ? store_path : "";
	if (store_path && realpath(store_path, abs))
		p = abs;
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (const char *c = p; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	snprintf(buf, n, "%016llx", (unsigned long long)h);
}

const exec_backend_row *exec_backend_find(const exec_backend_row *rows, size_t n, executor_kind k)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].kind == k)
			return &rows[i];
	return NULL;
}

void exec_backend_close(exec_backend *b)
{
	if (b)
		b->ops->close(b);
}
