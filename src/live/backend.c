/*
 * backend.c - the live driver's side of the executor backends (exec/exec.h,
 * "backends"): which backend runs which experiment, what the driver lends
 * them, and what they tell it.
 *
 * Each spec's trial.executor is looked up in the table of backends
 * (exec_backends, or the test's: live_options.backends); its backend is
 * opened once, when the run plans it (relish run's specs, before the store
 * is opened), when a service configures it, or when its first experiment
 * comes.  A backend that places on devices of its own (a cluster's nodes)
 * is the driver's site: its devices are the driver's, and every experiment
 * must run on it; without one the driver places on this machine's devices
 * (driver.c).  The driver names no backend: what differs between them is
 * behind their ops (adopting what an earlier relish left, what a placement
 * asks of a cluster, refreshing its nodes).
 */
#include "live/live_int.h"

#include <stdlib.h>
#include <string.h>

/* ---- what the driver lends ------------------------------------------------- */

static void host_say(void *ud, const char *line)
{
	live__progress_line(ud, "%s", line);
}

static void host_notice(void *ud, const char *line)
{
	live *d = ud;
	if (!d->opt.quiet)
		fprintf(d->out, "%s\n", line);
}

static void host_usable(void *ud, int dev, int usable)
{
	live *d = ud;
	if (!d->core || dev < 0 || (size_t)dev >= d->devs->n)
		return;
	/* Out of placement: every MiB counts as used by others, so nothing
	 * new fits there. */
	sched_device_set_foreign(d->core, dev, usable ? 0 : d->devs->dev[dev].info.mem_total_mib,
				 live__mono(d));
}

/* ---- opening ------------------------------------------------------------------ */

static executor_kind kind_of(const live *d, const spec *sp)
{
	return sp->trial.executor_given ? sp->trial.executor : d->opt.default_executor;
}

static size_t row_index(const live *d, const exec_backend_row *row)
{
	return (size_t)(row - d->be_rows);
}

/* Open row's backend with what the plan asks of it. */
static int open_row(live *d, const exec_backend_row *row, rl_err *err)
{
	size_t i = row_index(d, row);
	if (d->backends[i])
		return 0;
	spec **plan = NULL;
	size_t n = 0;
	if (d->opt.n_plan && !(plan = calloc(d->opt.n_plan, sizeof *plan)))
		return rl_err_set(err, RL_ENOMEM, "executors");
	for (size_t k = 0; k < d->opt.n_plan; k++)
		if (kind_of(d, d->opt.plan[k]) == row->kind)
			plan[n++] = d->opt.plan[k];
	int rc = row->ops->open(&d->host, d->opt.backend_settings[row->kind], plan, n,
				&d->backends[i], err);
	free(plan);
	return rc;
}

int live__backends_open(live *d, device_list **devs, rl_err *err)
{
	d->be_rows = d->opt.backends ? d->opt.backends : exec_backends;
	d->n_be_rows = d->opt.backends ? d->opt.n_backends : exec_n_backends;
	if (d->n_be_rows > EXEC_KINDS)
		return rl_err_set(err, RL_EINTERNAL, "more executor backends than kinds");
	exec_owner_id(d->db_path, d->owner_id, sizeof d->owner_id);
	d->host = (exec_host){
		.loop = &d->loop, .owner = d->owner_id, .runs_dir = d->runs_dir,
		.service = d->opt.service, .ud = d, .say = host_say, .notice = host_notice,
		.usable = host_usable,
	};
	*devs = NULL;
	int rc;
	for (size_t i = 0; i < d->n_be_rows; i++) {
		const exec_backend_row *row = &d->be_rows[i];
		int planned = row->kind == d->opt.default_executor ||
			      d->opt.backend_settings[row->kind] != NULL;
		size_t mine = 0;
		for (size_t k = 0; k < d->opt.n_plan; k++)
			mine += kind_of(d, d->opt.plan[k]) == row->kind;
		if (!planned && !mine)
			continue;
		/* Devices of its own: every experiment of the run must be its
		 * (said before anything is asked of it). */
		if (row->ops->devices && mine && mine < d->opt.n_plan) {
			const spec *one = NULL;
			for (size_t k = 0; k < d->opt.n_plan && !one; k++)
				if (kind_of(d, d->opt.plan[k]) == row->kind)
					one = d->opt.plan[k];
			return rl_err_set(err, RL_ESPEC,
					  "%s has trial.executor %s and the others do not: one relish "
					  "run places either on %s or on this machine; run them apart",
					  one->source, row->ops->name, row->ops->title);
		}
		if ((rc = open_row(d, row, err)) < 0)
			return rc;
		if (!row->ops->devices)
			continue;
		if (d->site)
			return rl_err_set(err, RL_EINVAL, "executors %s and %s both bring devices of "
					  "their own: a relish places on one", d->site->ops->name,
					  row->ops->name);
		d->site = d->backends[i];
		if ((rc = row->ops->devices(d->site, devs, err)) < 0)
			return rc;
	}
	return 0;
}

int live__backends_start(live *d, rl_err *err)
{
	d->host.runs_dir = d->runs_dir; /* absolute now */
	d->host.devs = d->devs;
	d->host.mps_dir = d->mps ? d->mps_dir : NULL;
	for (size_t i = 0; i < d->n_be_rows; i++) {
		int rc;
		if (d->backends[i] && (rc = d->backends[i]->ops->start(d->backends[i], err)) < 0)
			return rc;
	}
	return 0;
}

/* ---- experiments ----------------------------------------------------------------- */

int live__backend_attach(live *d, live_exp *x, rl_err *err)
{
	const spec *sp = x->sp;
	const char *src = sp->source ? sp->source : sp->name;
	const exec_backend_row *row = exec_backend_find(d->be_rows, d->n_be_rows, sp->trial.executor);
	if (!row)
		return rl_err_set(err, RL_ESPEC, "%s: trial.executor %s is not available here", src,
				  spec_executor_name(sp->trial.executor));
	exec_backend *b = d->backends[row_index(d, row)];
	if (d->site && b != d->site)
		return rl_err_set(err, RL_ESPEC,
				  "%s: trial.executor is %s%s, but this %s places on %s; set "
				  "trial.executor: %s%s", src, spec_executor_name(sp->trial.executor),
				  sp->trial.executor_given ? "" : " (the default)",
				  d->opt.service ? "service" : "relish", d->site->where,
				  d->site->ops->name, d->opt.service ? "" : " or run it apart");
	if (!b && row->ops->devices)
		/* Devices of its own are read before the store is opened: a
		 * backend like that cannot join a driver that runs. */
		return rl_err_set(err, RL_ESPEC,
				  "%s: trial.executor is %s, but this %s places on this machine's "
				  "devices%s%s%s", src, row->ops->name,
				  d->opt.service ? "service" : "relish",
				  d->opt.service ? " (its config has no " : "",
				  d->opt.service ? row->ops->name : "", d->opt.service ? ": section)" : "");
	int rc;
	if (!b) {
		if ((rc = open_row(d, row, err)) < 0)
			return rc;
		b = d->backends[row_index(d, row)];
		if ((rc = b->ops->start(b, err)) < 0)
			return rc;
	}
	exec_experiment xp = {.sp = sp, .dir = x->dir, .run_as = x->owner.run_as ? &x->run_as : NULL};
	if ((rc = b->ops->attach(b, &xp, &x->ex, err)) < 0)
		return rc;
	x->be = b;
	return 0;
}

void live__backend_detach(live *d, live_exp *x)
{
	(void)d;
	if (x->be && x->be->ops->detach)
		x->be->ops->detach(x->be, x->ex);
	x->be = NULL;
	x->ex = NULL;
}

int live_backend_reconfigure(live *d, executor_kind k, const void *settings, rl_err *err)
{
	const exec_backend_row *row = exec_backend_find(d->be_rows, d->n_be_rows, k);
	exec_backend *b = row ? d->backends[row_index(d, row)] : NULL;
	if (!b || !b->ops->reconfigure)
		return rl_err_set(err, RL_EINVAL, "this relish does not run executor %s",
				  spec_executor_name(k));
	return b->ops->reconfigure(b, settings, err);
}

/* ---- the loop ----------------------------------------------------------------------- */

void live__backends_sweep(live *d)
{
	for (size_t i = 0; i < d->n_be_rows; i++)
		if (d->backends[i] && d->backends[i]->ops->sweep)
			d->backends[i]->ops->sweep(d->backends[i]);
}

void live__backends_tick(live *d)
{
	if (d->stopping)
		return;
	for (size_t i = 0; i < d->n_be_rows; i++)
		if (d->backends[i] && d->backends[i]->ops->tick)
			d->backends[i]->ops->tick(d->backends[i]);
}

void live__backends_shutdown(live *d)
{
	for (size_t i = 0; i < d->n_be_rows; i++)
		if (d->backends[i])
			d->backends[i]->ops->shutdown(d->backends[i]);
}

void live__backends_close(live *d)
{
	for (size_t i = 0; i < d->n_be_rows; i++) {
		exec_backend_close(d->backends[i]);
		d->backends[i] = NULL;
	}
	d->site = NULL;
}

/* ---- what executors tell --------------------------------------------------------------- */

void live__seg_event(live *d, live_seg *g, const exec_event *ev)
{
	rl_err err = {0};
	if (g->x->suspended || d->fatal)
		return; /* nothing more of it is written */
	if (ev->kind == EXEC_EV_SUBMITTED) {
		/* its handle (a job id) is known: a restarted relish finds it */
		if (store_segment_set_pid(d->st, g->store_id, 0, 0, ev->handle, &err) < 0)
			live__store_failed(d, g->x, &err);
		return;
	}
	/* STARTED: the backend chose the device within what it was asked
	 * (a cluster's GPU within the node); when it is not the core's, the
	 * core and the store follow what really runs. */
	int dev = ev->device ? device_list_find(d->devs, ev->device) : -1;
	if (dev < 0 || dev == g->dev || !d->devs->dev[g->dev].info.is_gpu ||
	    !d->devs->dev[dev].info.is_gpu)
		return;
	sched_placement pl = {.seg_id = g->sched_id, .n_dev = 1, .dev = {dev},
			      .mem_mib = g->mem_mib, .compute = g->compute, .basis = g->basis};
	sched_remove(d->core, g->sched_id);
	if (sched_adopt(d->core, &g->req, &pl, &err) < 0) {
		/* The core cannot hold it there (it thought the device full):
		 * keep it where the core had it, the store says the truth. */
		rl_err_clear(&err);
		pl.dev[0] = g->dev;
		sched_adopt(d->core, &g->req, &pl, NULL);
	} else {
		g->dev = dev;
	}
	if (store_segment_set_device(d->st, g->store_id, d->devs->dev[dev].info.uuid, &err) < 0)
		live__store_failed(d, g->x, &err);
}
