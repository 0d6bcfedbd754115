/*
 * site.c - executor slurm as a backend of the live driver (exec_backend_ops,
 * exec/exec.h; docs/slurm.md): a Slurm partition as the place the driver
 * places on.
 *
 * Its devices are the GPUs and hosts of one partition's nodes, read with
 * scontrol at open (slurm_nodes.h), before the driver opens its store, and
 * refreshed every refresh_s on the loop (tick); a node that stops being
 * usable is taken out of placement through the host (exec_host.usable), and
 * so is the node of a segment that was lost, until a refresh says it is
 * usable.  One job executor (slurm.h) runs every experiment's segments, so
 * one squeue per poll covers them all.
 *
 * What a placement asks for (shape) follows the core's decision: a whole
 * GPU (--gres=gpu:N) when the segment runs alone (exec_placement.whole:
 * exclusive policy or basis, a gang, a reservation of the whole device),
 * else shards of it (--gres=shard:K, K the reservation's share of the
 * GPU's memory in the node's shards per GPU, rounded up), always on the
 * node the core chose (--nodelist).  Slurm's shard accounting then keeps to
 * the core's packing: two segments whose shards fit share a GPU, others
 * never do.  Slurm chooses the GPU within the node; when a job starts on
 * another one than the core's, its start event names the device it runs on
 * and the driver follows.  Host memory (--mem): the reservation on a host
 * device; on a GPU, trial.resources.memory, or the node's memory in
 * proportion to the GPU share.
 *
 * Trials of another user (relish serve runs them as their submitter) are
 * that user's jobs: the job executor submits and cancels them as the user
 * (run_as), so a service lists every user's jobs and tells its own by the
 * owner id in their comment.
 *
 * After a restart: this owner's jobs are listed once (squeue) when the
 * first experiment attaches; a segment the store says is running is
 * adopted when its job is found (by the id recorded when sbatch answered,
 * or by the identity in the job's comment when relish died before
 * recording it) or when squeue has forgotten it (the job-completion record
 * then says how it ended).  Every other job of this owner is cancelled
 * before the loop starts (sweep).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/capture.h"
#include "slurm/slurm.h"
#include "slurm/slurm_nodes.h"

#define REFRESH_S 30.0

typedef struct site site;

/* A launch's or an adoption's callbacks (the driver's), passed on, with
 * the node and GPU a job started on turned into the device that names
 * them.  Kept in a list: the job executor drops jobs it never saw end when
 * it is freed before the loop let them (close frees what is left). */
typedef struct relay {
	struct relay *next, *prev;
	site *s;
	exec_callbacks cb;
	void *ud;
} relay;

struct site {
	exec_backend base;
	executor run;                /* what slurm experiments launch on: shapes, then jobs */
	const exec_host *host;
	executor *jobs;              /* the job executor */
	slurm_cluster cluster;       /* as read at open: nodes, partition, jobcomp */
	device_list *devs;           /* read at open, until the driver takes them */
	uint64_t gpu_memory_mib;
	double poll_interval_s;
	char *step_program;
	char *account, *qos;         /* for specs that name none (owned) */
	char **args;                 /* a service's extra sbatch options (owned, NULL-terminated) */
	size_t n_args;
	double refresh_s;
	double refreshed_at;         /* loop seconds */
	slurm_job *found;            /* this owner's jobs at start (adopted: is_relish -1) */
	size_t n_found;
	int listed;
	relay *relays;
};

static double loop_s(const site *s)
{
	return (double)uv_now(s->host->loop) / 1000.0;
}

static void say(site *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(site *s, const char *fmt, ...)
{
	char line[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	s->host->say(s->host->ud, line);
}

/* ---- settings ------------------------------------------------------------------ */

static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* What the next submissions ask beyond each spec's own: the account, qos
 * and extra options of c (a service's config).  Nothing is changed when it
 * fails. */
static int settings_take(site *s, const slurm_site_config *c, rl_err *err)
{
	char *account = c->account ? strdup(c->account) : NULL;
	char *qos = c->qos ? strdup(c->qos) : NULL;
	char **args = calloc(c->n_sbatch_args + 1, sizeof *args);
	int oom = (c->account && !account) || (c->qos && !qos) || !args;
	for (size_t i = 0; !oom && i < c->n_sbatch_args; i++)
		oom = !(args[i] = strdup(c->sbatch_args[i]));
	if (oom) {
		free(account);
		free(qos);
		strv_free(args, c->n_sbatch_args);
		return rl_err_set(err, RL_ENOMEM, "slurm settings");
	}
	/* (shape copies them into sbatch's argv at launch: nothing holds the
	 * old ones) */
	free(s->account);
	free(s->qos);
	strv_free(s->args, s->n_args);
	s->account = account;
	s->qos = qos;
	s->args = args;
	s->n_args = c->n_sbatch_args;
	s->refresh_s = c->refresh_s > 0 ? c->refresh_s : REFRESH_S;
	return 0;
}

/* relish run: the partition and GPU memory the specs ask for, one
 * partition for the whole run. */
static int settings_of_plan(spec *const *plan, size_t n, slurm_site_config *c, rl_err *err)
{
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < n; i++) {
		const spec *sp = plan[i];
		if (i == 0) {
			c->partition = sp->trial.slurm.partition;
			c->gpu_memory_mib = sp->trial.slurm.gpu_memory_mib;
		} else if ((sp->trial.slurm.partition || c->partition) &&
			   (!sp->trial.slurm.partition || !c->partition ||
			    strcmp(sp->trial.slurm.partition, c->partition))) {
			return rl_err_set(err, RL_ESPEC, "%s and %s: one relish run places on one Slurm "
					  "partition; give them the same trial.slurm.partition",
					  plan[0]->source, sp->source);
		} else if (!c->gpu_memory_mib) {
			c->gpu_memory_mib = sp->trial.slurm.gpu_memory_mib;
		}
	}
	return 0;
}

/* ---- open, start, close ------------------------------------------------------------ */

static const exec_ops run_ops;
static void s_close(exec_backend *b);

static int s_open(const exec_host *host, const void *settings, spec *const *plan, size_t n_plan,
		  exec_backend **out, rl_err *err)
{
	slurm_site_config from_plan;
	const slurm_site_config *c = settings;
	int rc;
	if (!c) {
		if ((rc = settings_of_plan(plan, n_plan, &from_plan, err)) < 0)
			return rc;
		c = &from_plan;
	}
	site *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "slurm");
	s->base.ops = &slurm_backend_ops;
	s->run.ops = &run_ops;
	s->run.impl = s;
	s->host = host;
	s->gpu_memory_mib = c->gpu_memory_mib;
	s->poll_interval_s = c->poll_interval_s;
	if ((c->step_program && !(s->step_program = strdup(c->step_program))) ||
	    settings_take(s, c, err) < 0)
		rc = rl_err_set(err, RL_ENOMEM, "slurm settings");
	else if ((rc = slurm_cluster_read(NULL, c->partition, &s->cluster, err)) < 0)
		rl_err_prefix(err, "slurm");
	else if ((rc = slurm_devices_build(s->cluster.nodes, s->cluster.n_nodes,
					   s->cluster.partition, c->gpu_memory_mib, &s->devs,
					   err)) == 0 && !s->devs->n)
		rc = rl_err_set(err, RL_ERUNTIME, "slurm: partition %s has no node relish can use%s%s",
				s->cluster.partition, s->devs->notice[0] ? ": " : "",
				s->devs->notice);
	if (rc < 0) {
		s_close(&s->base);
		return rc;
	}
	snprintf(s->base.where, sizeof s->base.where, "Slurm partition %s", s->cluster.partition);
	*out = &s->base;
	return 0;
}

static int s_devices(exec_backend *b, device_list **out, rl_err *err)
{
	site *s = (site *)b;
	if (!s->devs)
		return rl_err_set(err, RL_EINTERNAL, "slurm: the devices were taken already");
	*out = s->devs;
	s->devs = NULL;
	return 0;
}

static int s_start(exec_backend *b, rl_err *err)
{
	site *s = (site *)b;
	s->refreshed_at = loop_s(s);
	slurm_options o;
	slurm_options_default(&o);
	o.partition = s->cluster.partition;
	o.experiment = "relish";
	o.owner = s->host->owner;
	char *state = NULL;
	if (asprintf(&state, "%s/slurm", s->host->runs_dir) < 0)
		return rl_err_set(err, RL_ENOMEM, "slurm state folder");
	o.state_dir = state;
	o.step_program = s->step_program;
	if (s->poll_interval_s > 0)
		o.poll_interval_s = s->poll_interval_s;
	/* Finished jobs that squeue forgot: sacct where the cluster keeps
	 * accounting; else the job-completion file (readable where relish
	 * runs when it is on a shared folder or the controller's machine). */
	if (s->cluster.accounting[0] && strcmp(s->cluster.accounting, "accounting_storage/none"))
		o.use_sacct = 1;
	else if (!strcmp(s->cluster.jobcomp_type, "jobcomp/filetxt") && s->cluster.jobcomp_loc[0] &&
		 access(s->cluster.jobcomp_loc, R_OK) == 0)
		o.jobcomp_path = s->cluster.jobcomp_loc;
	int rc = exec_slurm_new(s->host->loop, &o, &s->jobs, err);
	free(state);
	return rc;
}

static int s_reconfigure(exec_backend *b, const void *settings, rl_err *err)
{
	site *s = (site *)b;
	const slurm_site_config *c = settings;
	int rc = settings_take(s, c, err);
	if (rc == 0)
		exec_slurm_set_poll_interval(s->jobs, c->poll_interval_s);
	return rc;
}

static void s_shutdown(exec_backend *b)
{
	site *s = (site *)b;
	if (s->jobs)
		exec_shutdown(s->jobs);
}

static void s_close(exec_backend *b)
{
	site *s = (site *)b;
	exec_free(s->jobs);
	while (s->relays) {
		relay *r = s->relays;
		s->relays = r->next;
		free(r);
	}
	device_list_free(s->devs);
	slurm_cluster_fini(&s->cluster);
	free(s->found);
	free(s->account);
	free(s->qos);
	strv_free(s->args, s->n_args);
	free(s->step_program);
	free(s);
}

/* ---- experiments and what an earlier relish left ------------------------------------ */

/* This owner's jobs, synchronously (start-up): squeue -h -t all -u UID
 * for relish run (its jobs are its user's); a service's are its
 * submitters', so every user's (without -u), told apart by the owner id. */
static int list_jobs(site *s, rl_err *err)
{
	const char *bin = getenv("RELISH_SQUEUE");
	char uid[24];
	snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
	char *argv[] = {(char *)(bin && *bin ? bin : "squeue"), "-h", "-t", "all", "-O",
			SLURM_SQUEUE_FORMAT, "-u", uid, NULL};
	if (s->host->service)
		argv[6] = NULL;
	char *out = NULL, *etext = NULL;
	int st = capture_run(argv, NULL, &out, &etext, err);
	if (st > 0) {
		rl_err_set(err, RL_ERUNTIME, "squeue failed (exit %d): %.200s", st, etext);
		free(out);
		free(etext);
	}
	if (st != 0)
		return rl_err_prefix(err, "slurm: listing the jobs an earlier relish left");
	free(etext);
	slurm_job *v = NULL;
	size_t n = 0;
	int rc = slurm_parse_squeue(out, &v, &n, err);
	free(out);
	if (rc < 0)
		return rc;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].is_relish && !strcmp(v[i].ident.owner, s->host->owner))
			v[k++] = v[i];
	s->found = v;
	s->n_found = k;
	s->listed = 1;
	return 0;
}

static int s_attach(exec_backend *b, const exec_experiment *xp, executor **run, rl_err *err)
{
	site *s = (site *)b;
	const spec *sp = xp->sp;
	if (sp->trial.slurm.partition && strcmp(sp->trial.slurm.partition, s->cluster.partition))
		return rl_err_set(err, RL_ESPEC,
				  "%s: trial.slurm.partition is %s, but this relish places on "
				  "partition %s (one partition per relish)",
				  sp->source ? sp->source : sp->name, sp->trial.slurm.partition,
				  s->cluster.partition);
	int rc;
	if (!s->listed && (rc = list_jobs(s, err)) < 0)
		return rc;
	*run = &s->run;
	return 0;
}

/* The job found at start-up for segment f (by its job id, or by the
 * identity in its comment), or NULL. */
static slurm_job *job_for(site *s, const exec_found *f)
{
	char *end = NULL;
	unsigned long long id = f->id.handle[0] ? strtoull(f->id.handle, &end, 10) : 0;
	if (id && end && *end)
		id = 0;
	char trial[32];
	snprintf(trial, sizeof trial, "t%lld", (long long)f->trial);
	for (size_t i = 0; i < s->n_found; i++) {
		slurm_job *j = &s->found[i];
		if (j->is_relish <= 0)
			continue;
		if (id ? j->id == id
		       : !strcmp(j->ident.experiment, f->experiment) && !strcmp(j->ident.trial, trial) &&
				 j->ident.seq == f->seq)
			return j;
	}
	return NULL;
}

static int s_adoptable(exec_backend *b, executor *run, const exec_found *f)
{
	(void)run;
	return job_for((site *)b, f) != NULL ||
	       (f->id.handle[0] && strtoull(f->id.handle, NULL, 10) > 0);
}

static relay *relay_new(site *s, const exec_callbacks *cb, void *ud);
static void relay_free(relay *r);
static const exec_callbacks relay_cb;

static int s_adopt(exec_backend *b, executor *run, const exec_found *f, const exec_spec *es,
		   const exec_callbacks *cb, void *ud, exec_segment **out, char *said, size_t n,
		   rl_err *err)
{
	(void)run;
	site *s = (site *)b;
	slurm_job *j = job_for(s, f);
	slurm_job forgotten;
	if (!j) {
		/* squeue forgot it: the completion record will say */
		memset(&forgotten, 0, sizeof forgotten);
		forgotten.id = strtoull(f->id.handle, NULL, 10);
		snprintf(forgotten.state, sizeof forgotten.state, "no longer listed");
		j = &forgotten;
	}
	if (!es->log_path)
		return rl_err_set(err, RL_EINVAL, "no output file recorded");
	relay *r = relay_new(s, cb, ud);
	if (!r)
		return rl_err_set(err, RL_ENOMEM, "adopting a job");
	/* the job is its owner's: a cancel goes out as them (es.run_as) */
	int rc = exec_slurm_adopt(s->jobs, j->id, es, &relay_cb, r, out, err);
	if (rc < 0) {
		relay_free(r);
		return rc;
	}
	j->is_relish = -1; /* adopted: not swept */
	snprintf(said, n, "its Slurm job %llu (%s) was adopted", (unsigned long long)j->id, j->state);
	return 0;
}

static void s_lose(exec_backend *b, executor *run, const exec_found *f, char *said, size_t n)
{
	(void)b;
	/* Its job, if it has one, is cancelled (here, or by the sweep for a
	 * job whose id was never recorded). */
	if (f->id.handle[0])
		snprintf(said, n, "its Slurm job %s was cancelled", f->id.handle);
	else
		snprintf(said, n, "it had no Slurm job");
	if (f->id.pid > 0 || f->id.handle[0])
		run->ops->reclaim(run, &f->id, NULL);
}

static void s_sweep(exec_backend *b)
{
	site *s = (site *)b;
	if (!s->jobs)
		return;
	if (!s->listed) {
		/* A service that resumed no Slurm experiment still cleans up
		 * after its predecessor (the jobs of an experiment cancelled
		 * while it died, say). */
		rl_err err = {0};
		if (list_jobs(s, &err) < 0) {
			say(s, "slurm: %s; jobs an earlier relish left are not cancelled", err.msg);
			return;
		}
	}
	size_t n = 0;
	for (size_t i = 0; i < s->n_found; i++) {
		slurm_job *j = &s->found[i];
		if (j->is_relish <= 0 || slurm_state_final(j->state))
			continue;
		exec_ident id = {0};
		snprintf(id.handle, sizeof id.handle, "%llu", (unsigned long long)j->id);
		s->jobs->ops->reclaim(s->jobs, &id, NULL);
		j->is_relish = 0;
		n++;
	}
	if (n)
		say(s, "cancelled %zu Slurm job%s left by an earlier relish (no running segment of "
		    "this run to adopt %s)", n, n == 1 ? "" : "s", n == 1 ? "it" : "them");
}

/* ---- the nodes ---------------------------------------------------------------------- */

/* The node of device dev and, for a GPU, its Slurm index. */
static slurm_node *node_of(site *s, int dev, int *gpu)
{
	const device_list *devs = s->host->devs;
	char name[64];
	if (dev < 0 || (size_t)dev >= devs->n ||
	    slurm_device_parse(devs->dev[dev].info.uuid, name, sizeof name, gpu) < 0)
		return NULL;
	for (size_t i = 0; i < s->cluster.n_nodes; i++)
		if (!strcmp(s->cluster.nodes[i].name, name))
			return &s->cluster.nodes[i];
	return NULL;
}

/* A node's devices taken out of placement or given back. */
static void node_mark(site *s, const char *node, int usable)
{
	const device_list *devs = s->host->devs;
	for (size_t i = 0; i < devs->n; i++) {
		char name[64];
		int gpu;
		if (slurm_device_parse(devs->dev[i].info.uuid, name, sizeof name, &gpu) < 0 ||
		    strcmp(name, node))
			continue;
		s->host->usable(s->host->ud, (int)i, usable);
	}
}

static void s_suspect(exec_backend *b, int dev)
{
	site *s = (site *)b;
	int gpu;
	slurm_node *nd = node_of(s, dev, &gpu);
	if (!nd)
		return;
	/* Until the next refresh says otherwise (soon), the node is suspect:
	 * the segment's re-run goes elsewhere. */
	if (nd->usable) {
		nd->usable = 0;
		node_mark(s, nd->name, 0);
		say(s, "slurm: node %s is not used until Slurm says it is usable", nd->name);
	}
	s->refreshed_at = -INFINITY;
}

static void refreshed(void *ud, const char *text, const rl_err *e)
{
	site *s = ud;
	if (!text) {
		say(s, "slurm: refreshing the nodes failed: %s", e ? e->msg : "?");
		return;
	}
	slurm_node *v = NULL;
	size_t n = 0;
	if (slurm_nodes_parse(text, &v, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < s->cluster.n_nodes; k++) {
			slurm_node *old = &s->cluster.nodes[k];
			if (strcmp(old->name, v[i].name))
				continue;
			if (old->usable != v[i].usable) {
				say(s, "slurm: node %s is %s (%s)", old->name,
				    v[i].usable ? "usable again" : "not usable now", v[i].state);
				node_mark(s, old->name, v[i].usable);
			}
			snprintf(old->state, sizeof old->state, "%s", v[i].state);
			old->usable = v[i].usable;
			old->alloc_cpus = v[i].alloc_cpus;
			old->alloc_mem_mib = v[i].alloc_mem_mib;
		}
	}
	free(v);
}

static void s_tick(exec_backend *b)
{
	site *s = (site *)b;
	if (!s->jobs)
		return;
	double now = loop_s(s);
	if (now - s->refreshed_at < s->refresh_s)
		return;
	s->refreshed_at = now;
	exec_slurm_show_nodes(s->jobs, refreshed, s, NULL);
}

/* ---- the executor experiments launch on ------------------------------------------------ */

static relay *relay_new(site *s, const exec_callbacks *cb, void *ud)
{
	relay *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->s = s;
	r->cb = *cb;
	r->ud = ud;
	r->next = s->relays;
	if (s->relays)
		s->relays->prev = r;
	s->relays = r;
	return r;
}

static void relay_free(relay *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		r->s->relays = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r);
}

static void relay_line(void *ud, exec_segment *seg, const contract_line *l)
{
	relay *r = ud;
	if (r->cb.on_line)
		r->cb.on_line(r->ud, seg, l);
}

static void relay_event(void *ud, exec_segment *seg, const exec_event *ev)
{
	relay *r = ud;
	if (!r->cb.on_event)
		return;
	exec_event e = *ev;
	char uuid[128];
	if (e.kind == EXEC_EV_STARTED && e.node && e.n_gpus > 0) {
		/* the first of the GPUs Slurm gave it, as slurm_nodes names it */
		snprintf(uuid, sizeof uuid, "slurm:%s:gpu%d", e.node, e.gpu[0]);
		e.device = uuid;
	}
	r->cb.on_event(r->ud, seg, &e);
}

static void relay_end(void *ud, exec_segment *seg, const exec_result *res)
{
	relay *r = ud;
	if (r->cb.on_end)
		r->cb.on_end(r->ud, seg, res);
	relay_free(r);
}

static const exec_callbacks relay_cb = {.on_line = relay_line, .on_end = relay_end,
					.on_event = relay_event};

/* What a placement asks Slurm for (the file's comment). */
static void shape(site *s, const exec_placement *pl, exec_cluster_request *out)
{
	const spec *sp = pl->sp;
	const device_entry *de = &s->host->devs->dev[pl->dev];
	int gpu = -1;
	const slurm_node *nd = node_of(s, pl->dev, &gpu);
	memset(out, 0, sizeof *out);
	out->node = nd ? nd->name : NULL;
	out->seq = pl->seq;
	out->experiment = sp->name;
	out->account = sp->trial.slurm.account ? sp->trial.slurm.account : s->account;
	out->qos = sp->trial.slurm.qos ? sp->trial.slurm.qos : s->qos;
	out->pre_args = (const char *const *)s->args;
	out->n_pre_args = s->n_args;
	out->args = (const char *const *)sp->trial.slurm.sbatch_args;
	out->n_args = sp->trial.slurm.n_sbatch_args;
	if (!de->info.is_gpu) {
		out->mem_mib = pl->mem_mib;
		return;
	}
	int n_dev = pl->n_dev > 0 ? pl->n_dev : 1;
	unsigned per_gpu = nd ? slurm_node_shards_per_gpu(nd) : 0;
	unsigned shards = pl->whole ? 0 : slurm_shards_for(pl->mem_mib, de->info.mem_total_mib, per_gpu);
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

static int run_launch(executor *e, const exec_spec *es, const exec_callbacks *cb, void *ud,
		      exec_segment **out, rl_err *err)
{
	site *s = e->impl;
	if (!es->placed)
		return rl_err_set(err, RL_EINVAL, "slurm: a segment without a placement");
	exec_cluster_request creq;
	shape(s, es->placed, &creq);
	exec_spec job = *es;
	job.cluster = &creq;
	relay *r = relay_new(s, cb, ud);
	if (!r)
		return rl_err_set(err, RL_ENOMEM, "slurm: a job");
	int rc = exec_launch(s->jobs, &job, &relay_cb, r, out, err);
	if (rc < 0)
		relay_free(r);
	return rc;
}

static void run_cancel(executor *e, exec_segment *seg)
{
	site *s = e->impl;
	exec_cancel(s->jobs, seg);
}

static int run_ident(executor *e, const exec_segment *seg, exec_ident *out)
{
	site *s = e->impl;
	return exec_ident_of(s->jobs, seg, out);
}

static int run_reclaim(executor *e, const exec_ident *id, rl_err *err)
{
	site *s = e->impl;
	return s->jobs->ops->reclaim(s->jobs, id, err);
}

static void run_release(executor *e, const char *key)
{
	site *s = e->impl;
	exec_release(s->jobs, key);
}

static size_t run_idle_count(executor *e)
{
	site *s = e->impl;
	return s->jobs->ops->idle_count(s->jobs);
}

static void run_shutdown(executor *e)
{
	site *s = e->impl;
	exec_shutdown(s->jobs);
}

static void run_destroy(executor *e)
{
	(void)e; /* the backend's: freed by its close */
}

static const exec_ops run_ops = {
	.name = "slurm", .launch = run_launch, .cancel = run_cancel, .ident = run_ident,
	.reclaim = run_reclaim, .release = run_release, .idle_count = run_idle_count,
	.shutdown = run_shutdown, .destroy = run_destroy,
};

const exec_backend_ops slurm_backend_ops = {
	.name = "slurm", .title = "Slurm", .units = "Slurm jobs",
	.open = s_open, .devices = s_devices, .start = s_start, .attach = s_attach,
	.adoptable = s_adoptable, .adopt = s_adopt, .lose = s_lose, .sweep = s_sweep,
	.tick = s_tick, .suspect = s_suspect, .reconfigure = s_reconfigure,
	.shutdown = s_shutdown, .close = s_close,
};
