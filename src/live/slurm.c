/*
 * slurm.c - the live driver's side of trial.executor slurm (docs/slurm.md).
 *
 * A driver started with live_options.slurm places on a Slurm cluster: its
 * devices are the GPUs and hosts of one partition's nodes, read with
 * scontrol at start (slurm/slurm_nodes.h) and refreshed every
 * refresh_s on the loop.  One slurm executor (slurm/slurm.h) runs every
 * slurm experiment's segments, so one squeue per poll covers them all.
 *
 * What a placement asks for (live_slurm_request) follows the core's
 * decision: a whole GPU (--gres=gpu:N) when the segment runs alone
 * (exclusive policy or basis, a gang, or a reservation of the whole
 * device), else shards of it (--gres=shard:K, K the reservation's share
 * of the GPU's memory in the node's shards per GPU, rounded up), always on
 * the node the core chose (--nodelist).  Slurm's shard accounting then
 * keeps to the core's packing: two segments whose shards fit share a GPU,
 * others never do.  Slurm chooses the GPU within the node; when the job
 * starts on another one than the core's, the core and the store are told
 * (live_slurm_event).  Host memory (--mem): the reservation on a host
 * device; on a GPU, trial.resources.memory, or the node's memory in
 * proportion to the GPU share.
 *
 * Trials of another user (relish serve runs them as their submitter) are
 * that user's jobs: the executor submits and cancels them as the user
 * (slurm/slurm.h, run_as), so a service lists every user's jobs and tells
 * its own by the owner id in their comment.
 *
 * After a restart: this owner's jobs are listed once (squeue); a segment
 * the store says is running is adopted when its job is found (by the id
 * recorded when sbatch answered, or by the identity in the job's comment
 * when relish died before recording it) or when squeue has forgotten it
 * (the job-completion record then says how it ended).  Every other job of
 * this owner is cancelled when the loop starts (live_slurm_sweep).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "live/live_int.h"

#define REFRESH_S 30.0

static void owner_id(live *d)
{
	container_owner_id(d->db_path, d->slurm_owner, sizeof d->slurm_owner);
}

int live_slurm_read(live *d, rl_err *err)
{
	const live_slurm_config *c = d->opt.slurm;
	d->slurm = 1;
	int rc = slurm_cluster_read(NULL, c->partition, &d->cluster, err);
	if (rc < 0)
		return rl_err_prefix(err, "slurm");
	rc = slurm_devices_build(d->cluster.nodes, d->cluster.n_nodes, d->cluster.partition,
				 c->gpu_memory_mib, &d->slurm_devs, err);
	if (rc < 0)
		return rc;
	if (!d->slurm_devs->n)
		return rl_err_set(err, RL_ERUNTIME,
				  "slurm: partition %s has no node relish can use%s%s",
				  d->cluster.partition, d->slurm_devs->notice[0] ? ": " : "",
				  d->slurm_devs->notice);
	return 0;
}

int live_slurm_start(live *d, rl_err *err)
{
	const live_slurm_config *c = d->opt.slurm;
	int rc;
	d->devs = d->slurm_devs;
	d->slurm_devs = NULL;
	owner_id(d);
	if ((c->account && !(d->slurm_account = strdup(c->account))) ||
	    (c->qos && !(d->slurm_qos = strdup(c->qos))))
		return rl_err_set(err, RL_ENOMEM, "slurm settings");
	if (c->n_sbatch_args) {
		if (!(d->slurm_args = calloc(c->n_sbatch_args + 1, sizeof *d->slurm_args)))
			return rl_err_set(err, RL_ENOMEM, "slurm settings");
		for (size_t i = 0; i < c->n_sbatch_args; i++)
			if (!(d->slurm_args[d->n_slurm_args++] = strdup(c->sbatch_args[i])))
				return rl_err_set(err, RL_ENOMEM, "slurm settings");
	}
	d->slurm_refresh_s = c->refresh_s > 0 ? c->refresh_s : REFRESH_S;
	d->slurm_refreshed_at = live_mono(d);

	slurm_options o;
	slurm_options_default(&o);
	o.partition = d->cluster.partition;
	o.experiment = "relish";
	o.owner = d->slurm_owner;
	char *state = NULL;
	if (asprintf(&state, "%s/slurm", d->runs_dir) < 0)
		return rl_err_set(err, RL_ENOMEM, "slurm state folder");
	o.state_dir = state;
	o.step_program = c->step_program;
	if (c->poll_interval_s > 0)
		o.poll_interval_s = c->poll_interval_s;
	/* Finished jobs that squeue forgot: sacct where the cluster keeps
	 * accounting; else the job-completion file (readable where relish
	 * runs when it is on a shared folder or the controller's machine). */
	if (d->cluster.accounting[0] && strcmp(d->cluster.accounting, "accounting_storage/none"))
		o.use_sacct = 1;
	else if (!strcmp(d->cluster.jobcomp_type, "jobcomp/filetxt") && d->cluster.jobcomp_loc[0] &&
		 access(d->cluster.jobcomp_loc, R_OK) == 0)
		o.jobcomp_path = d->cluster.jobcomp_loc;
	rc = exec_slurm_new(&d->loop, &o, &d->slurm_ex, err);
	free(state);
	return rc;
}

int live_slurm_reconfigure(live *d, const live_slurm_config *c, rl_err *err)
{
	if (!d->slurm_ex)
		return rl_err_set(err, RL_EINVAL, "this relish does not place on Slurm");
	char *account = c->account ? strdup(c->account) : NULL;
	char *qos = c->qos ? strdup(c->qos) : NULL;
	char **args = calloc(c->n_sbatch_args + 1, sizeof *args);
	int oom = (c->account && !account) || (c->qos && !qos) || !args;
	for (size_t i = 0; !oom && i < c->n_sbatch_args; i++)
		oom = !(args[i] = strdup(c->sbatch_args[i]));
	if (oom) {
		free(account);
		free(qos);
		for (size_t i = 0; args && args[i]; i++)
			free(args[i]);
		free(args);
		return rl_err_set(err, RL_ENOMEM, "slurm settings");
	}
	/* What the next submissions ask (live_slurm_request copies them into
	 * sbatch's argv at launch: nothing holds the old ones). */
	free(d->slurm_account);
	free(d->slurm_qos);
	for (size_t i = 0; i < d->n_slurm_args; i++)
		free(d->slurm_args[i]);
	free(d->slurm_args);
	d->slurm_account = account;
	d->slurm_qos = qos;
	d->slurm_args = args;
	d->n_slurm_args = c->n_sbatch_args;
	d->slurm_refresh_s = c->refresh_s > 0 ? c->refresh_s : REFRESH_S;
	exec_slurm_set_poll_interval(d->slurm_ex, c->poll_interval_s);
	return 0;
}

void live_slurm_close(live *d)
{
	device_list_free(d->slurm_devs);
	slurm_cluster_fini(&d->cluster);
	free(d->slurm_jobs);
	free(d->slurm_account);
	free(d->slurm_qos);
	for (size_t i = 0; i < d->n_slurm_args; i++)
		free(d->slurm_args[i]);
	free(d->slurm_args);
}

/* This owner's jobs, synchronously (start-up): squeue -h -t all -u UID
 * for relish run (its jobs are its user's); a service's are its
 * submitters', so every user's (without -u), told apart by the owner id. */
static int list_jobs(live *d, rl_err *err)
{
	const char *bin = getenv("RELISH_SQUEUE");
	char uid[24];
	snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
	char *argv[] = {(char *)(bin && *bin ? bin : "squeue"), "-h", "-t", "all", "-O",
			SLURM_SQUEUE_FORMAT, "-u", uid, NULL};
	if (d->opt.service)
		argv[6] = NULL;
	char *out = NULL, *etext = NULL;
	int st = slurm_run_capture(argv, &out, &etext, err);
	if (st != 0) {
		if (st > 0)
			rl_err_set(err, RL_ERUNTIME, "squeue failed (exit %d): %.200s", st,
				   etext ? etext : "");
		free(out);
		free(etext);
		return rl_err_prefix(err, "slurm: listing the jobs an earlier relish left");
	}
	free(etext);
	slurm_job *v = NULL;
	size_t n = 0;
	int rc = slurm_parse_squeue(out, &v, &n, err);
	free(out);
	if (rc < 0)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].is_relish && !strcmp(v[i].ident.owner, d->slurm_owner))
			v[k++] = v[i];
	d->slurm_jobs = v;
	d->n_slurm_jobs = k;
	return 0;
}

int live_slurm_setup(live *d, live_exp *x, rl_err *err)
{
	const spec *sp = x->sp;
	const char *src = sp->source ? sp->source : sp->name;
	if (sp->trial.executor != EXEC_SLURM) {
		if (d->slurm)
			return rl_err_set(err, RL_ESPEC,
					  "%s: trial.executor is %s%s, but this %s places on Slurm "
					  "partition %s; set trial.executor: slurm%s",
					  src, spec_executor_name(sp->trial.executor),
					  sp->trial.executor_given ? "" : " (the default)",
					  d->opt.service ? "service" : "relish", d->cluster.partition,
					  d->opt.service ? "" : " or run it apart");
		return 0;
	}
	if (!d->slurm)
		return rl_err_set(err, RL_ESPEC,
				  "%s: trial.executor is slurm, but this %s places on this "
				  "machine's devices%s", src, d->opt.service ? "service" : "relish",
				  d->opt.service ? " (its config has no slurm: section)" : "");
	if (sp->trial.slurm.partition && strcmp(sp->trial.slurm.partition, d->cluster.partition))
		return rl_err_set(err, RL_ESPEC,
				  "%s: trial.slurm.partition is %s, but this relish places on "
				  "partition %s (one partition per relish)",
				  src, sp->trial.slurm.partition, d->cluster.partition);
	if (!d->slurm_listed) {
		int rc = list_jobs(d, err);
		if (rc < 0)
			return rc;
		d->slurm_listed = 1;
	}
	return 0;
}

slurm_job *live_slurm_job_for(live *d, const live_exp *x, const store_segment *g)
{
	char *end = NULL;
	unsigned long long id = g->container ? strtoull(g->container, &end, 10) : 0;
	if (id && end && *end)
		id = 0;
	char trial[32];
	snprintf(trial, sizeof trial, "t%lld", (long long)g->trial_id);
	for (size_t i = 0; i < d->n_slurm_jobs; i++) {
		slurm_job *j = &d->slurm_jobs[i];
		if (j->is_relish <= 0)
			continue;
		if (id ? j->id == id
		       : !strcmp(j->ident.experiment, x->sp->name) && !strcmp(j->ident.trial, trial) &&
				 j->ident.seq == g->seq)
			return j;
	}
	return NULL;
}

int live_slurm_adopt(live *d, live_seg *s, const slurm_job *j, const exec_spec *es, rl_err *err)
{
	/* the job is its owner's: a cancel goes out as them */
	exec_spec own = *es;
	if (s->x->owner.run_as)
		own.run_as = &s->x->run_as;
	int rc = exec_slurm_adopt(d->slurm_ex, j->id, &own, &live_exec_callbacks, s, &s->es, err);
	if (rc == 0)
		((slurm_job *)j)->is_relish = -1; /* adopted: not swept */
	return rc;
}

void live_slurm_sweep(live *d)
{
	if (!d->slurm_ex)
		return;
	if (!d->slurm_listed) {
		/* A service that resumed no Slurm experiment still cleans up
		 * after its predecessor (the jobs of an experiment cancelled
		 * while it died, say). */
		rl_err err = {0};
		if (list_jobs(d, &err) < 0) {
			live_progress_line(d, "slurm: %s; jobs an earlier relish left are not cancelled",
					   err.msg);
			return;
		}
		d->slurm_listed = 1;
	}
	size_t n = 0;
	for (size_t i = 0; i < d->n_slurm_jobs; i++) {
		slurm_job *j = &d->slurm_jobs[i];
		if (j->is_relish <= 0 || slurm_state_final(j->state))
			continue;
		exec_ident id = {0};
		snprintf(id.handle, sizeof id.handle, "%llu", (unsigned long long)j->id);
		d->slurm_ex->ops->reclaim(d->slurm_ex, &id, NULL);
		j->is_relish = 0;
		n++;
	}
	if (n)
		live_progress_line(d, "cancelled %zu Slurm job%s left by an earlier relish (no running "
				   "segment of this run to adopt %s)", n, n == 1 ? "" : "s",
				   n == 1 ? "it" : "them");
}

/* The node of device dev and, for a GPU, its Slurm index. */
static const slurm_node *node_of(live *d, int dev, int *gpu)
{
	char name[64];
	if (slurm_device_parse(d->devs->dev[dev].info.uuid, name, sizeof name, gpu) < 0)
		return NULL;
	for (size_t i = 0; i < d->cluster.n_nodes; i++)
		if (!strcmp(d->cluster.nodes[i].name, name))
			return &d->cluster.nodes[i];
	return NULL;
}

void live_slurm_request(live *d, const live_seg *g, const sched_placement *pl,
			exec_cluster_request *out)
{
	const spec *sp = g->x->sp;
	const device_entry *de = &d->devs->dev[pl->dev[0]];
	int gpu = -1;
	const slurm_node *nd = node_of(d, pl->dev[0], &gpu);
	memset(out, 0, sizeof *out);
	out->node = nd ? nd->name : NULL;
	out->seq = g->seq;
	out->experiment = sp->name;
	out->account = sp->trial.slurm.account ? sp->trial.slurm.account : d->slurm_account;
	out->qos = sp->trial.slurm.qos ? sp->trial.slurm.qos : d->slurm_qos;
	out->pre_args = (const char *const *)d->slurm_args;
	out->n_pre_args = d->n_slurm_args;
	out->args = (const char *const *)sp->trial.slurm.sbatch_args;
	out->n_args = sp->trial.slurm.n_sbatch_args;
	if (!de->info.is_gpu) {
		out->mem_mib = pl->mem_mib;
		return;
	}
	int n_dev = pl->n_dev > 0 ? pl->n_dev : 1;
	unsigned per_gpu = nd ? slurm_node_shards_per_gpu(nd) : 0;
	int alone = n_dev > 1 || pl->basis == SCHED_BASIS_EXCLUSIVE ||
		    sched_policy_placement(d->opt.policy_set ? d->opt.policy : sp->sharing.policy) ==
			    SHARE_EXCLUSIVE ||
		    g->req.exclusive ||
		    pl->mem_mib >= de->info.mem_total_mib;
	unsigned shards = alone ? 0 : slurm_shards_for(pl->mem_mib, de->info.mem_total_mib, per_gpu);
	double share = 1;
	if (shards) {
		out->shards = (int)shards;
		share = (double)shards / per_gpu;
	} else {
		out->gpus = n_dev;
		share = n_dev;
	}
	if (sp->trial.resources.memory_mib) {
		out->mem_mib = sp->trial.resources.memory_mib;
	} else if (nd && nd->gpus > 0 && nd->mem_mib) {
		/* the node's memory in proportion to the GPU share */
		double m = floor((double)nd->mem_mib * share / nd->gpus);
		out->mem_mib = m < 1 ? 1 : (uint64_t)m;
	}
}

/* The device of node's GPU gpu (or its host device for gpu < 0), or -1. */
static int device_of(live *d, const char *node, int gpu)
{
	char uuid[128];
	if (gpu >= 0)
		snprintf(uuid, sizeof uuid, "slurm:%s:gpu%d", node, gpu);
	else
		snprintf(uuid, sizeof uuid, "slurm:%s", node);
	return device_list_find(d->devs, uuid);
}

void live_slurm_event(live *d, live_seg *g, const exec_event *ev)
{
	rl_err err = {0};
	if (ev->kind == EXEC_EV_SUBMITTED) {
		if (store_segment_set_pid(d->st, g->store_id, 0, 0, ev->handle, &err) < 0)
			live_fatal(d, &err);
		return;
	}
	/* STARTED: Slurm chose the GPU within the node; when it is not the
	 * core's, the core and the store follow what really runs. */
	if (!ev->node || !ev->n_gpus || !d->devs->dev[g->dev].info.is_gpu)
		return;
	int dev = device_of(d, ev->node, ev->gpu[0]);
	if (dev < 0 || dev == g->dev)
		return;
	sched_placement pl = {.seg_id = g->sched_id, .n_dev = 1, .dev = {dev},
			      .mem_mib = g->mem_mib, .compute = g->compute, .basis = g->basis};
	sched_remove(d->core, g->sched_id);
	if (sched_adopt(d->core, &g->req, &pl, &err) < 0) {
		/* The core cannot hold it there (it thought the GPU full):
		 * keep it where the core had it, the store says the truth. */
		rl_err_clear(&err);
		pl.dev[0] = g->dev;
		sched_adopt(d->core, &g->req, &pl, NULL);
	} else {
		g->dev = dev;
	}
	if (store_segment_set_device(d->st, g->store_id, d->devs->dev[dev].info.uuid, &err) < 0)
		live_fatal(d, &err);
}

/* ---- node refresh --------------------------------------------------------- */

/* A node's devices taken out of placement (usable 0: every MiB counts as
 * used by others, so nothing new fits there) or given back. */
static void node_mark(live *d, const char *node, int usable)
{
	double now = live_mono(d);
	for (size_t i = 0; i < d->devs->n; i++) {
		char name[64];
		int gpu;
		if (slurm_device_parse(d->devs->dev[i].info.uuid, name, sizeof name, &gpu) < 0 ||
		    strcmp(name, node))
			continue;
		sched_device_set_foreign(d->core, (int)i, usable ? 0 : d->devs->dev[i].info.mem_total_mib,
					 now);
	}
}

void live_slurm_lost(live *d, const live_seg *g)
{
	int gpu;
	const slurm_node *nd = node_of(d, g->dev, &gpu);
	if (!nd || !d->core)
		return;
	/* Until the next refresh says otherwise (soon), the node is suspect:
	 * the segment's re-run goes elsewhere. */
	if (nd->usable) {
		((slurm_node *)nd)->usable = 0;
		node_mark(d, nd->name, 0);
		live_progress_line(d, "slurm: node %s is not used until Slurm says it is usable",
				   nd->name);
	}
	d->slurm_refreshed_at = -INFINITY;
}

static void refreshed(void *ud, const char *text, const rl_err *e)
{
	live *d = ud;
	if (!text) {
		live_progress_line(d, "slurm: refreshing the nodes failed: %s", e ? e->msg : "?");
		return;
	}
	slurm_node *v = NULL;
	size_t n = 0;
	if (slurm_nodes_parse(text, &v, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < d->cluster.n_nodes; k++) {
			slurm_node *old = &d->cluster.nodes[k];
			if (strcmp(old->name, v[i].name))
				continue;
			if (old->usable != v[i].usable) {
				live_progress_line(d, "slurm: node %s is %s (%s)", old->name,
						   v[i].usable ? "usable again" : "not usable now",
						   v[i].state);
				node_mark(d, old->name, v[i].usable);
			}
			snprintf(old->state, sizeof old->state, "%s", v[i].state);
			old->usable = v[i].usable;
			old->alloc_cpus = v[i].alloc_cpus;
			old->alloc_mem_mib = v[i].alloc_mem_mib;
		}
	}
	free(v);
}

void live_slurm_tick(live *d)
{
	if (!d->slurm_ex || d->stopping)
		return;
	double now = live_mono(d);
	if (now - d->slurm_refreshed_at < d->slurm_refresh_s)
		return;
	d->slurm_refreshed_at = now;
	exec_slurm_show_nodes(d->slurm_ex, refreshed, d, NULL);
}
