/*
 * exec.c - the executor front end: defaults and the calls that dispatch
 * through an executor's ops (see exec.h).  Implementations live in their own
 * folders (src/process, src/container, src/slurm).
 */
#include "exec/exec.h"

void exec_options_default(exec_options *o)
{
	o->kill_grace_s = 5.0;
	o->sample_interval_s = 0.2;
	o->memory_margin = 0.1;
	o->log_max_bytes = 64ull << 20;
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
