/*
 * backend.c - executor process as a backend of the live driver
 * (exec_backend_ops, exec/exec.h): one process executor on the driver's
 * loop runs every process experiment's segments, on this machine's
 * devices.  Nothing an earlier relish started can be adopted: its trials'
 * output pipes died with it, so a segment the store says was running is
 * lost, and its process group is killed when its pid and the kernel's
 * start time still match (a reused pid is someone else's and is left
 * alone).  The units of confinement the dead relish left are killed by the
 * executor itself when it starts (confine.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include "common/procid.h"
#include "process/process.h"

typedef struct pbackend {
	exec_backend base;
	const exec_host *host;
	executor *ex;
} pbackend;

static int p_open(const exec_host *host, const void *settings, spec *const *plan, size_t n_plan,
		  exec_backend **out, rl_err *err)
{
	(void)settings, (void)plan, (void)n_plan;
	pbackend *b = calloc(1, sizeof *b);
	if (!b)
		return rl_err_set(err, RL_ENOMEM, "process executor");
	b->base.ops = &process_backend_ops;
	b->host = host;
	*out = &b->base;
	return 0;
}

static int p_start(exec_backend *eb, rl_err *err)
{
	pbackend *b = (pbackend *)eb;
	exec_options o;
	exec_options_default(&o);
	o.cpu_limit = b->host->service; /* relish serve: cpus: is a limit */
	int rc = exec_process_new(b->host->loop, &o, &b->ex, err);
	if (rc < 0)
		return rc;
	const char *why = NULL;
	if (o.cpu_limit) {
		int lim = exec_process_cpu_limits(b->ex, &why);
		char line[900];
		if (lim)
			snprintf(line, sizeof line, "relish: trials' cpus: limited in the kernel (%s)",
				 lim == 2 ? "cgroup v2 cpu.max" : "cgroup v1 cpu quota");
		else
			snprintf(line, sizeof line, "relish: trials' cpus: not limited in the kernel "
				 "(%s); a process trial may use more CPUs than it declares "
				 "(docs/serve.md, \"Security model\")", why ? why : "no cpu controller");
		b->host->notice(b->host->ud, line);
	}
	const char *how = NULL;
	if (exec_process_confinement(b->ex, &how) == EXEC_CONFINE_PROC && how) {
		char line[700];
		snprintf(line, sizeof line, "relish: trials' descendants: %s; one that detaches and "
			 "loses its parent between two samples (0.2 s) can outlive its trial "
			 "(docs/trials.md)", how);
		b->host->notice(b->host->ud, line);
	}
	return 0;
}

static int p_attach(exec_backend *eb, const exec_experiment *xp, executor **run, rl_err *err)
{
	(void)xp, (void)err;
	*run = ((pbackend *)eb)->ex;
	return 0;
}

static void p_lose(exec_backend *eb, executor *run, const exec_found *f, char *said, size_t n)
{
	(void)eb;
	int alive = f->id.pid > 0 && procid_matches(f->id.pid, f->id.start_time);
	snprintf(said, n, "%s", alive ? "its process was still running and was stopped"
				      : "its process was gone");
	if (f->id.pid > 0)
		run->ops->reclaim(run, &f->id, NULL);
}

static void p_shutdown(exec_backend *eb)
{
	pbackend *b = (pbackend *)eb;
	if (b->ex)
		exec_shutdown(b->ex);
}

static void p_close(exec_backend *eb)
{
	pbackend *b = (pbackend *)eb;
	exec_free(b->ex);
	free(b);
}

const exec_backend_ops process_backend_ops = {
	.name = "process", .title = "this machine", .units = "processes",
	.open = p_open, .start = p_start, .attach = p_attach, .lose = p_lose,
	.shutdown = p_shutdown, .close = p_close,
};
