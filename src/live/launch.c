/*
 * launch.c - filling the core scheduler with the work the engines hand out
 * (fill: at most the admission window per experiment), placing it
 * (live__place, on every kick and tick) and launching each placement
 * through its experiment's executor: the segment's row is committed before
 * its process starts (write before act), its argv and environment built
 * from the trial contract, its identity recorded right after.  Segments
 * that can never be placed, or that wait too long for memory other
 * processes hold, fail their trial here.  Split from driver.c.
 */
#include "live/live_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec/contract.h"
#include "telemetry/gpu_env.h"

extern char **environ;

/* ---- submitting work ------------------------------------------------------- */

/* A trial the core can never place: fail it without running anything. */
static int fail_unplaceable(live *d, live_exp *x, uint64_t trial, const char *why, rl_err *err)
{
	engine_decision dec;
	int rc = engine_segment_done(x->eng, trial, 0, -1, &dec, err);
	if (rc == 0)
		rc = engine_trial_failed(x->eng, trial, why, err);
	if (rc < 0)
		return rc;
	live_trial *t = &x->trials[trial];
	double now = live__now(d);
	if ((rc = store_trial_set_status(d->st, t->store_id, TRIAL_FAILED, why, now, err)) < 0)
		return rc;
	/* Named by its id, as every other line and command names trials. */
	live__progress_line(d, "%s: trial %lld failed: %s", x->sp->name, (long long)t->store_id,
			   why);
	if ((rc = store_event_append(d->st, now, x->id, t->store_id, 0, "trial.failed", why, NULL,
				     err)) < 0)
		return rc;
	/* That may have been the experiment's last trial: nothing else will
	 * end it (no segment of it is running), so finish it here; the
	 * loop's callers (kick, tick) then see that everything is done. */
	if (!x->done && engine_done(x->eng) && x->n_active == 0)
		live__experiment_finish(d, x);
	return 0;
}

/* ---- waiting for memory that other processes hold ------------------------ */

static void fmt_wait(const live *d, const sched_wait_info *wi, char *buf, size_t n)
{
	const char *dev = wi->dev >= 0 && (size_t)wi->dev < d->devs->n
				  ? d->devs->dev[wi->dev].info.uuid : "a device";
	if (wi->need_mib)
		snprintf(buf, n, "%llu MiB on %s are used by processes relish does not own; "
			 "it needs %llu MiB there", (unsigned long long)wi->foreign_mib, dev,
			 (unsigned long long)wi->need_mib);
	else
		snprintf(buf, n, "%llu MiB on %s are used by processes relish does not own; "
			 "it needs the device to itself", (unsigned long long)wi->foreign_mib, dev);
}

/* A queued segment waited past sharing.foreign_wait: its trial fails. */
static int fail_waited(live *d, live_seg *g, const char *why, rl_err *err)
{
	live_exp *x = g->x;
	uint64_t trial = g->trial;
	sched_remove(d->core, g->sched_id);
	live__seg_unqueued(g);
	live__seg_unlink_free(d, g);
	live__kick(d); /* the engine may hand out the next trial */
	return fail_unplaceable(d, x, trial, why, err);
}

void live__foreign_waits(live *d)
{
	if (d->stopping || !d->core)
		return;
	double now = live__mono(d), wall = live__now(d);
	live_seg *g = d->segs;
	while (g) {
		live_seg *next = g->next;
		if (g->placed) {
			g = next;
			continue;
		}
		live_exp *x = g->x;
		live_trial *t = &x->trials[g->trial];
		sched_wait_info wi;
		sched_wait w = sched_foreign_wait(d->core, g->sched_id, now, &wi);
		char what[300], msg[400];
		rl_err err = {0};
		if (w == SCHED_WAIT_FOREIGN && !g->waiting_since) {
			g->waiting_since = wi.since > 0 ? wi.since : now;
			fmt_wait(d, &wi, what, sizeof what);
			snprintf(msg, sizeof msg, "waiting for memory: %s", what);
			live__progress_line(d, "%s: trial %lld %s", x->sp->name, (long long)t->store_id, msg);
			if (store_event_append(d->st, wall, x->id, t->store_id, 0, "segment.waiting", msg,
					       NULL, &err) < 0) {
				live__store_failed(d, x, &err);
				return;
			}
		} else if (w == SCHED_WAIT_EXPIRED) {
			fmt_wait(d, &wi, what, sizeof what);
			snprintf(msg, sizeof msg, "waited %.0f s for memory (sharing.foreign_wait is %g s): %s",
				 wi.waited_s, x->sp->sharing.foreign_wait_s, what);
			if (fail_waited(d, g, msg, &err) < 0) {
				live__store_failed(d, x, &err);
				return;
			}
		}
		g = next;
	}
}

static int submit_work(live *d, live_exp *x, const engine_work *w, rl_err *err)
{
	live_trial *t = live__trial_slot(x, w->trial, err);
	if (!t)
		return RL_ENOMEM;
	double now = live__now(d);
	int rc;
	if (!t->store_id) {
		char *pj = config_to_json(&x->sp->search.space, w->cfg);
		if (!pj)
			return rl_err_set(err, RL_ENOMEM, "trial parameters");
		rc = store_trial_insert(d->st, x->id, (int)w->trial, pj, now, &t->store_id, err);
		free(pj);
		if (rc < 0)
			return rc;
		t->arrival = live__arrival(d, live__mono(d));
	}
	live_seg *g = calloc(1, sizeof *g);
	if (!g)
		return rl_err_set(err, RL_ENOMEM, "segment");
	g->x = x;
	g->trial = w->trial;
	g->from = w->from;
	g->to = w->to;
	g->seq = t->next_seq;
	g->last_obj = NAN;
	g->est_mem = -1;
	live__request_build(x, w->cfg, &g->req);
	g->req.seg_id = g->sched_id = ++d->next_sched_id;
	sched_mem_apply(&t->hist.mem, &g->req);
	g->req.job_id = t->store_id; /* the core adds up each trial's service */
	g->req.attained_s = t->attained_before;
	g->req.submit_time = t->arrival;
	live__profile_seed(d, &g->req);
	char never[160];
	if (sched_never_fits(d->core, &g->req, never, sizeof never)) {
		free(g);
		char why[200];
		snprintf(why, sizeof why, "no device can ever hold its segment: %s", never);
		return fail_unplaceable(d, x, w->trial, why, err);
	}
	if ((rc = sched_submit(d->core, &g->req, err)) < 0) {
		free(g);
		return rc;
	}
	live__seg_link(d, g);
	x->n_queued++;
	g->fresh = w->is_new_trial;
	x->n_fresh += (size_t)g->fresh;
	x->n_active++;
	return 0;
}

static void fill(live *d)
{
	if (d->stopping)
		return;
	for (size_t k = 0; k < d->n_exps; k++) {
		live_exp *x = d->exps[(d->rr + k) % d->n_exps];
		while (!x->done && !x->stalled) {
			/* a full window takes started trials' next segments
			 * only (SCHED_ADMIT_WINDOW) */
			engine_work w;
			rl_err err = {0};
			int rc = x->n_fresh < SCHED_ADMIT_WINDOW ? engine_next(x->eng, &w, &err)
								  : engine_next_started(x->eng, &w, &err);
			if (rc < 0) {
				/* The sampler failed: finish what runs, create nothing. */
				x->stalled = 1;
				live__progress_line(d, "%s: %s: no new trials", x->sp->name, err.msg);
				break;
			}
			if (rc == 0)
				break;
			if (submit_work(d, x, &w, &err) < 0) {
				live__store_failed(d, x, &err);
				if (d->fatal)
					return;
				break;
			}
		}
	}
	d->rr++;
}

/* ---- launching ------------------------------------------------------------- */

static live_seg *seg_find(live *d, uint64_t sched_id)
{
	for (live_seg *g = d->segs; g; g = g->next)
		if (g->sched_id == sched_id)
			return g;
	return NULL;
}

/* A segment's time limit: the spec's trial.timeout, within the service's
 * max_segment_s (0 each: none). */
static double seg_timeout(const live *d, const spec *sp)
{
	double t = sp->trial.timeout_s, m = d->opt.max_segment_s;
	return m > 0 && (t <= 0 || t > m) ? m : t;
}

/* Write the placement, build argv and environment, start the process.  On
 * failure *fault says whose it was (EXEC_FAULT_RUNTIME: an executor's engine
 * that could not be run or refused; NOT_STARTED: a program that cannot be
 * started); it stays NONE otherwise. */
static int launch(live *d, live_seg *g, const sched_placement *pl, exec_fault *fault, rl_err *err)
{
	live_exp *x = g->x;
	const spec *sp = x->sp;
	live_trial *t = &x->trials[g->trial];
	const device_entry *de = &d->devs->dev[pl->dev[0]];
	double now = live__now(d);
	int rc;

	g->placed = 1;
	live__seg_unqueued(g);
	g->dev = pl->dev[0];
	if (g->waiting_since) {
		char msg[200];
		snprintf(msg, sizeof msg, "waited %.1f s for memory that other processes held; "
			 "placed on %s", live__mono(d) - g->waiting_since, de->info.uuid);
		live__progress_line(d, "%s: trial %lld %s", x->sp->name, (long long)t->store_id, msg);
		if ((rc = store_event_append(d->st, now, x->id, t->store_id, 0, "segment.waited", msg,
					     NULL, err)) < 0)
			return rc;
		g->waiting_since = 0;
	}
	g->mem_mib = pl->mem_mib;
	g->compute = pl->compute;
	g->basis = pl->basis;
	sched_mem_estimate est;
	sched_estimate(d->core, &g->req, &est);
	g->est_mem = est.peak_mib > 0 ? (int64_t)ceil(est.peak_mib) : -1;

	char tdir[4096], ckpt[4200], logp[4200], tid[32];
	snprintf(tdir, sizeof tdir, "%s/trial-%llu", x->dir, (unsigned long long)g->trial);
	snprintf(ckpt, sizeof ckpt, "%s/ckpt", tdir);
	snprintf(logp, sizeof logp, "%s/seg-%d.log", tdir, g->seq);
	/* "t" + the id that relish trials, logs and devices show */
	snprintf(tid, sizeof tid, "t%lld", (long long)t->store_id);

	engine_trial_view tv;
	if ((rc = engine_trial(x->eng, g->trial, &tv, err)) < 0)
		return rc;

	store_placement spl = {
		.device = de->info.uuid, .mem_reserved_mib = (int64_t)pl->mem_mib,
		.compute_share = pl->compute, .basis = sched_basis_name(pl->basis), .log_path = logp,
	};
	if ((rc = store_begin(d->st, err)) < 0)
		return rc;
	if ((rc = store_segment_insert(d->st, t->store_id, g->seq, g->from, g->to, g->est_mem,
				       &g->store_id, err)) < 0 ||
	    (rc = store_segment_place(d->st, g->store_id, &spl, now, err)) < 0 ||
	    (rc = store_trial_set_status(d->st, t->store_id, TRIAL_RUNNING, NULL, now, err)) < 0 ||
	    (rc = store_commit(d->st, err)) < 0) {
		store_rollback(d->st);
		return rc;
	}
	t->next_seq++;
	/* After the rows: a folder that cannot be made (a full or read-only
	 * runs folder) fails this segment as not started (place()), which
	 * stops its experiment instead of the whole run. */
	if ((rc = live__segment_dirs(d, x, tdir, ckpt, logp, err)) < 0) {
		/* (For want of space a service pauses the experiment instead:
		 * place(), space.c.) */
		if (!live__no_space(d, err))
			*fault = EXEC_FAULT_NOT_STARTED;
		return rc;
	}

	/* argv and environment */
	int worker = sp->trial.mode == TRIAL_MODE_WORKER;
	int on_gpu = de->info.is_gpu;
	contract_vars v = {
		.space = worker ? NULL : &sp->search.space, .config = worker ? NULL : tv.cfg,
		.trial_id = worker ? NULL : tid, .checkpoint_dir = worker ? NULL : ckpt,
		.from = g->from, .to = g->to, .resource_name = sp->schedule.resource,
		.mode = sp->trial.mode, .cpus = on_gpu ? sp->trial.resources.cpus : pl->compute,
		.gpu_memory_mib = on_gpu ? pl->mem_mib : 0,
	};
	char **argv = NULL, **envp = NULL;
	env_var *extra = NULL;
	size_t n_extra = 0;
	char *params = config_to_json(&sp->search.space, tv.cfg);
	if (!params) {
		rc = rl_err_set(err, RL_ENOMEM, "trial parameters");
		goto start_failed;
	}
	if (on_gpu && !d->site) {
		/* (A backend with devices of its own hands them over itself:
		 * a cluster's job gets CUDA_VISIBLE_DEVICES from its scheduler.) */
		const char *uuids[SCHED_MAX_GANG];
		for (int i = 0; i < pl->n_dev && i < SCHED_MAX_GANG; i++)
			uuids[i] = d->devs->dev[pl->dev[i]].info.uuid;
		gpu_env_request gr = {
			.n_dev = (size_t)(pl->n_dev > 0 ? pl->n_dev : 1), .uuids = uuids,
			.mem_mib = pl->mem_mib, .compute_pct = pl->compute, .mps = d->mps,
			.mps_pipe_dir = d->mps ? d->mps_dir : NULL,
		};
		if ((rc = gpu_env_build(&gr, &extra, &n_extra, err)) < 0)
			goto start_failed;
	}
	/* A trial whose backend asks for a clean environment (an image is
	 * another system: the host's PATH, HOME... describe the host) gets
	 * the contract's variables and the spec's, not relish's own. */
	char *const *parent = x->be->ops->clean_env ? NULL
			      : x->owner.run_as	    ? x->user_env
						    : environ;
	if ((rc = contract_subst_argv(sp->trial.argv, &v, &argv, err)) < 0 ||
	    (rc = contract_env_build(parent, sp->trial.env, sp->trial.n_env, &v, extra, n_extra,
				     &envp, err)) < 0)
		goto start_failed;
	if (sp->trial.mode != TRIAL_MODE_ONESHOT && !g->reuse_key) {
		char key[160];
		if (worker)
			/* one owner's worker never runs another's trials */
			snprintf(key, sizeof key, "%016llx@%s/u%u", (unsigned long long)g->req.family,
				 de->info.uuid, (unsigned)x->owner.uid);
		else
			snprintf(key, sizeof key, "%s/%s", sp->name, tid);
		g->reuse_key = strdup(key);
	}
	/* The core gave it its devices whole: a cluster asks for them so. */
	int whole = pl->n_dev > 1 || pl->basis == SCHED_BASIS_EXCLUSIVE ||
		    sched_policy_placement(d->opt.policy_set ? d->opt.policy : sp->sharing.policy) ==
			    SHARE_EXCLUSIVE ||
		    g->req.exclusive || pl->mem_mib >= de->info.mem_total_mib;
	exec_placement placed = {.dev = pl->dev[0], .n_dev = pl->n_dev, .mem_mib = pl->mem_mib,
				 .whole = whole, .seq = g->seq, .sp = sp};
	exec_spec es = {
		.mode = sp->trial.mode, .reuse_key = g->reuse_key, .argv = argv, .envp = envp,
		.cwd = sp->trial.workdir, .log_path = logp, .timeout_s = seg_timeout(d, sp),
		.cpus = v.cpus, .memory_limit_mib = on_gpu ? 0 : pl->mem_mib,
		.a = {.trial_id = tid, .params_json = params, .from = g->from, .to = g->to,
		      .checkpoint_dir = ckpt},
		.placed = &placed,
		.run_as = x->owner.run_as ? &x->run_as : NULL,
	};
	g->started_at = live__mono(d);
	rc = exec_launch(live__exec(x), &es, &live_exec_callbacks, g, &g->es, err);
	if (rc == RL_ERUNTIME)
		/* The engine could not be started or refused the segment:
		 * the runtime's failure, not the trial's (live__end_segment). */
		*fault = EXEC_FAULT_RUNTIME;
	else if (rc == RL_EEXEC)
		*fault = EXEC_FAULT_NOT_STARTED; /* the program cannot be started */
	exec_ident id;
	if (rc == 0 && exec_ident_of(live__exec(x), g->es, &id) == 0 && (id.pid > 0 || id.handle[0])) {
		/* (A cluster job's id comes later: live__seg_event.) */
		g->pid = id.pid;
		g->pid_start = id.start_time;
		rc = store_segment_set_pid(d->st, g->store_id, id.pid, id.start_time,
					   id.handle[0] ? id.handle : NULL, err);
	}
start_failed:
	contract_strv_free(argv);
	contract_strv_free(envp);
	gpu_env_free(extra, n_extra);
	free(params);
	return rc;
}

void live__place(live *d)
{
	sched_placement pl[32];
	/* A service launches a few at a time and comes back 1 ms later:
	 * each spawn blocks the loop until the child has executed, and the
	 * API's requests wait on the same loop. */
	size_t budget = d->opt.service ? LIVE_SERVICE_BURST : (size_t)-1;
	size_t round = d->opt.before_launch ? 1 : 32;
	for (int guard = 0; guard < 1000 && !d->stopping; guard++) {
		if (d->opt.before_launch) {
			d->opt.before_launch(d->opt.before_launch_ctx);
			if (d->stopping || d->finished || d->fatal)
				break;
		}
		fill(d);
		size_t n = sched_place(d->core, live__mono(d), pl, budget < round ? budget : round);
		for (size_t i = 0; i < n; i++) {
			live_seg *g = seg_find(d, pl[i].seg_id);
			if (!g)
				continue;
			rl_err err = {0};
			exec_fault fault = EXEC_FAULT_NONE;
			if (launch(d, g, &pl[i], &fault, &err) < 0) {
				/* For want of space (its folder, or a full store)
				 * under a service: its experiment pauses, nothing
				 * else does (space.c). */
				if (!g->es && !d->fatal && live__no_space(d, &err)) {
					live_exp *x = g->x;
					live__seg_drop(d, g);
					live__exp_suspend(d, x, &err);
					continue;
				}
				/* A store failure (also: the database was taken
				 * over), or one after the process started (its pid
				 * could not be recorded): the run stops.  A process
				 * that started is cancelled by live__fatal and ends
				 * through on_end; it must not be ended here. */
				if (g->es || !g->store_id || err.code == RL_ESTORE ||
				    err.code == RL_EINUSE || d->fatal) {
					/* (Paused instead for want of space: g,
					 * running, was cancelled with its experiment.) */
					live__store_failed(d, g->x, &err);
					if (!d->fatal)
						continue;
					if (!g->es)
						live__seg_drop(d, g);
					return;
				}
				/* Could not start (missing program, bad template,
				 * a folder or log that cannot be made): the segment
				 * fails like one that exited at once. */
				exec_result r;
				memset(&r, 0, sizeof r);
				r.outcome = SEG_OUT_FAILED;
				r.exit_code = -1;
				r.fault = fault;
				snprintf(r.reason, sizeof r.reason, "%s", err.msg);
				g->es = NULL;
				live__end_segment(d, g, &r);
			}
		}
		if (n == 0)
			break;
		budget -= n;
		if (budget == 0) {
			live__kick_in(d, 1);
			break;
		}
	}
}
