/*
 * driver.c - the live driver's loop: fill the core scheduler with the work
 * the engines hand out, place it, launch it through the executor, and turn
 * each segment's end into store rows, engine decisions and the next work.
 *
 * One thread, one libuv loop.  Its handles: the executor's processes and
 * timers, a tick timer (LIVE_TICK_MS: placement retries, GPU sampling, the
 * display), a "kick" timer that runs fill-and-place once after something
 * changed (never from inside an executor callback, so launching never
 * re-enters the executor), and SIGINT / SIGTERM handlers.
 *
 * Write before act: a segment's row (planned, then running with its
 * placement) is committed before its process starts, its pid and start time
 * right after; its outcome, the trial's progress and status, events and the
 * shape's profile are committed in one transaction before the core and the
 * engine are told, so whatever instant relish dies at, recover.c finds a
 * consistent story in the store.
 */
#include "live/live_int.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "exec/contract.h"
#include "telemetry/gpu_env.h"
#include "telemetry/procmem.h"

extern char **environ;

void live_options_default(live_options *o)
{
	memset(o, 0, sizeof *o);
	o->progress = -1;
}

/* ---- the clock ------------------------------------------------------------ */

static double realtime(void *ctx)
{
	(void)ctx;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Read both clocks when the loop's time has moved since the last reading. */
static void clock_read(live *d)
{
	uint64_t ms = uv_now(&d->loop);
	if (d->clock_set && ms == d->clock_ms)
		return;
	d->clock_set = 1;
	d->clock_ms = ms;
	d->now_mono = (double)ms / 1000.0;
	d->now_wall = d->opt.wall_clock ? d->opt.wall_clock(d->opt.wall_clock_ctx) : realtime(NULL);
}

double live_now(live *d)
{
	clock_read(d);
	return d->now_wall;
}

double live_mono(live *d)
{
	clock_read(d);
	return d->now_mono;
}

double live_mono_of(live *d, double wall)
{
	clock_read(d);
	return d->now_mono - (d->now_wall - wall);
}

double live_arrival(live *d, double t)
{
	/* Trials made in one loop turn share its time; the core orders
	 * equal arrivals by segment, which would put a later trial's first
	 * segment before an earlier trial's next one.  1 us apart keeps
	 * their creation order, as a trace's jobs arrive one by one. */
	if (t <= d->last_arrival)
		t = d->last_arrival + 1e-6;
	d->last_arrival = t;
	return t;
}

long live_max_rss_kib(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return -1;
	return ru.ru_maxrss;
}

static void stop_all(live *d);

void live_fatal(live *d, const rl_err *err)
{
	if (d->fatal)
		return;
	d->fatal = 1;
	d->fatal_err = *err;
	/* A segment that is no longer running, a trial row that moved: when
	 * another driver took the database over, that is the cause to name. */
	rl_err own;
	rl_err_clear(&own);
	if (store_driver_check(d->st, &own) == RL_EINUSE)
		d->fatal_err = own;
	live_progress_line(d, "relish: stopping after an error (printed when the running "
			   "segments have ended); nothing more is written to %s", d->db_path);
	stop_all(d);
}

/* mkdir -p, with relish's error */
static int make_dirs(const char *path, rl_err *err)
{
	if (rl_mkdirs(path, 0755) != 0)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", path);
	return 0;
}

live_trial *live_trial_slot(live_exp *x, uint64_t idx, rl_err *err)
{
	if (idx >= x->cap_trials) {
		size_t cap = x->cap_trials ? x->cap_trials : 64;
		while (cap <= idx)
			cap *= 2;
		live_trial *t = realloc(x->trials, cap * sizeof *t);
		if (!t) {
			rl_err_set(err, RL_ENOMEM, "trial table");
			return NULL;
		}
		memset(t + x->cap_trials, 0, (cap - x->cap_trials) * sizeof *t);
		x->trials = t;
		x->cap_trials = cap;
	}
	if (idx >= x->n_trials)
		x->n_trials = idx + 1;
	return &x->trials[idx];
}

/* ---- segments list ------------------------------------------------------- */

static void seg_link(live *d, live_seg *g)
{
	g->prev = NULL;
	g->next = d->segs;
	if (d->segs)
		d->segs->prev = g;
	d->segs = g;
}

void live_seg_link(live *d, live_seg *g)
{
	seg_link(d, g);
}

void live_seg_unlink_free(live *d, live_seg *g)
{
	if (g->prev)
		g->prev->next = g->next;
	else
		d->segs = g->next;
	if (g->next)
		g->next->prev = g->prev;
	g->x->n_active--;
	free(g->reuse_key);
	free(g);
}

static live_seg *seg_find(live *d, uint64_t sched_id)
{
	for (live_seg *g = d->segs; g; g = g->next)
		if (g->sched_id == sched_id)
			return g;
	return NULL;
}

void live_seg_drop(live *d, live_seg *g)
{
	sched_remove(d->core, g->sched_id);
	if (!g->placed && g->x->n_queued)
		g->x->n_queued--;
	live_seg_unlink_free(d, g);
}

/* ---- ending ---------------------------------------------------------------- */

static void close_cb(uv_handle_t *h)
{
	(void)h;
}

/* Close the driver's own handles (tick, kick, signals) once. */
static void close_handles(live *d)
{
	if (!d->handles_ready)
		return;
	d->handles_ready = 0;
	live_progress_end(d);
	uv_close((uv_handle_t *)&d->tick, close_cb);
	uv_close((uv_handle_t *)&d->kick, close_cb);
	uv_close((uv_handle_t *)&d->grace, close_cb);
	uv_close((uv_handle_t *)&d->sigint, close_cb);
	uv_close((uv_handle_t *)&d->sigterm, close_cb);
}

/* Stop our own handles and the executor's parked processes: the loop ends
 * once the last process has gone. */
static void loop_finish(live *d)
{
	if (d->finished)
		return;
	d->finished = 1;
	live_progress_draw(d, 1);
	if (d->opt.on_finish)
		d->opt.on_finish(d->opt.on_finish_ctx); /* the service closes its own handles */
	live_backends_shutdown(d);
	close_handles(d);
}

void live_check_end(live *d)
{
	if (d->finished)
		return;
	if (d->stopping) {
		if (!d->segs)
			loop_finish(d);
		return;
	}
	for (size_t i = 0; i < d->n_exps; i++) {
		live_exp *x = d->exps[i];
		if (!x->done && (x->runtime_failed || x->cancelled) && x->n_active == 0)
			x->done = 1;
		if (!x->done)
			return;
	}
	if (d->opt.service)
		return; /* experiments come and go until live_stop */
	loop_finish(d);
}

void live_experiment_finish(live *d, live_exp *x)
{
	rl_err err = {0};
	double now = live_now(d);
	x->done = 1;
	size_t c[TRIAL_N_STATES];
	engine_counts(x->eng, c);
	char fs[1200], msg[1400];
	live_failure_summary(d, x, fs, sizeof fs);
	snprintf(msg, sizeof msg, "done: %zu trials, %zu completed, %zu stopped, %zu failed%s%s",
		 (size_t)engine_n_trials(x->eng), c[TRIAL_COMPLETED], c[TRIAL_STOPPED],
		 c[TRIAL_FAILED], fs[0] ? ", " : "", fs);
	/* The line `relish run` prints is the event's message, for a
	 * service's submitter to read. */
	if (store_experiment_set_status(d->st, x->id, EXP_DONE, now, &err) < 0 ||
	    store_event_append(d->st, now, x->id, 0, 0, "experiment.done", msg, NULL, &err) < 0) {
		live_fatal(d, &err);
		return;
	}
	live_progress_line(d, "%s: %s", x->sp->name, msg);
}

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
	double now = live_now(d);
	if ((rc = store_trial_set_status(d->st, t->store_id, TRIAL_FAILED, why, now, err)) < 0)
		return rc;
	/* Named by its id, as every other line and command names trials. */
	live_progress_line(d, "%s: trial %lld failed: %s", x->sp->name, (long long)t->store_id,
			   why);
	if ((rc = store_event_append(d->st, now, x->id, t->store_id, 0, "trial.failed", why, NULL,
				     err)) < 0)
		return rc;
	/* That may have been the experiment's last trial: nothing else will
	 * end it (no segment of it is running), so finish it here; the
	 * loop's callers (kick, tick) then see that everything is done. */
	if (!x->done && engine_done(x->eng) && x->n_active == 0)
		live_experiment_finish(d, x);
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
	x->n_queued--;
	live_seg_unlink_free(d, g);
	live_kick(d); /* the engine may hand out the next trial */
	return fail_unplaceable(d, x, trial, why, err);
}

void live_foreign_waits(live *d)
{
	if (d->stopping || !d->core)
		return;
	double now = live_mono(d), wall = live_now(d);
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
			live_progress_line(d, "%s: trial %lld %s", x->sp->name, (long long)t->store_id, msg);
			if (store_event_append(d->st, wall, x->id, t->store_id, 0, "segment.waiting", msg,
					       NULL, &err) < 0) {
				live_fatal(d, &err);
				return;
			}
		} else if (w == SCHED_WAIT_EXPIRED) {
			fmt_wait(d, &wi, what, sizeof what);
			snprintf(msg, sizeof msg, "waited %.0f s for memory (sharing.foreign_wait is %g s): %s",
				 wi.waited_s, x->sp->sharing.foreign_wait_s, what);
			if (fail_waited(d, g, msg, &err) < 0) {
				live_fatal(d, &err);
				return;
			}
		}
		g = next;
	}
}

static int submit_work(live *d, live_exp *x, const engine_work *w, rl_err *err)
{
	live_trial *t = live_trial_slot(x, w->trial, err);
	if (!t)
		return RL_ENOMEM;
	double now = live_now(d);
	int rc;
	if (!t->store_id) {
		char *pj = config_to_json(&x->sp->search.space, w->cfg);
		if (!pj)
			return rl_err_set(err, RL_ENOMEM, "trial parameters");
		rc = store_trial_insert(d->st, x->id, (int)w->trial, pj, now, &t->store_id, err);
		free(pj);
		if (rc < 0)
			return rc;
		t->arrival = live_arrival(d, live_mono(d));
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
	live_request_build(x, w->cfg, &g->req);
	g->req.seg_id = g->sched_id = ++d->next_sched_id;
	sched_mem_apply(&t->hist.mem, &g->req);
	g->req.job_id = t->store_id; /* the core adds up each trial's service */
	g->req.attained_s = t->attained_before;
	g->req.submit_time = t->arrival;
	live_profile_seed(d, &g->req);
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
	seg_link(d, g);
	x->n_queued++;
	x->n_active++;
	return 0;
}

static void fill(live *d)
{
	if (d->stopping)
		return;
	for (size_t k = 0; k < d->n_exps; k++) {
		live_exp *x = d->exps[(d->rr + k) % d->n_exps];
		while (!x->done && !x->stalled && x->n_queued < SCHED_ADMIT_WINDOW) {
			engine_work w;
			rl_err err = {0};
			int rc = engine_next(x->eng, &w, &err);
			if (rc < 0) {
				/* The sampler failed: finish what runs, create nothing. */
				x->stalled = 1;
				live_progress_line(d, "%s: %s: no new trials", x->sp->name, err.msg);
				break;
			}
			if (rc == 0)
				break;
			if (submit_work(d, x, &w, &err) < 0) {
				live_fatal(d, &err);
				return;
			}
		}
	}
	d->rr++;
}

/* ---- launching ------------------------------------------------------------- */



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
	double now = live_now(d);
	int rc;

	g->placed = 1;
	x->n_queued--;
	g->dev = pl->dev[0];
	if (g->waiting_since) {
		char msg[200];
		snprintf(msg, sizeof msg, "waited %.1f s for memory that other processes held; "
			 "placed on %s", live_mono(d) - g->waiting_since, de->info.uuid);
		live_progress_line(d, "%s: trial %lld %s", x->sp->name, (long long)t->store_id, msg);
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
	if ((rc = live_segment_dirs(d, x, tdir, ckpt, logp, err)) < 0) {
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
		.cwd = sp->trial.workdir, .log_path = logp, .timeout_s = sp->trial.timeout_s,
		.cpus = v.cpus, .memory_limit_mib = on_gpu ? 0 : pl->mem_mib,
		.a = {.trial_id = tid, .params_json = params, .from = g->from, .to = g->to,
		      .checkpoint_dir = ckpt},
		.placed = &placed,
		.run_as = x->owner.run_as ? &x->run_as : NULL,
	};
	g->started_at = live_mono(d);
	rc = exec_launch(live_exec(x), &es, &live_exec_callbacks, g, &g->es, err);
	if (rc == RL_ERUNTIME)
		/* The engine could not be started or refused the segment:
		 * the runtime's failure, not the trial's (live_end_segment). */
		*fault = EXEC_FAULT_RUNTIME;
	else if (rc == RL_EEXEC)
		*fault = EXEC_FAULT_NOT_STARTED; /* the program cannot be started */
	exec_ident id;
	if (rc == 0 && exec_ident_of(live_exec(x), g->es, &id) == 0 && (id.pid > 0 || id.handle[0])) {
		/* (A cluster job's id comes later: live_seg_event.) */
		g->pid = id.pid;
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

static void kick_cb(uv_timer_t *h);

static void place(live *d)
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
		size_t n = sched_place(d->core, live_mono(d), pl, budget < round ? budget : round);
		for (size_t i = 0; i < n; i++) {
			live_seg *g = seg_find(d, pl[i].seg_id);
			if (!g)
				continue;
			rl_err err = {0};
			exec_fault fault = EXEC_FAULT_NONE;
			if (launch(d, g, &pl[i], &fault, &err) < 0) {
				/* A store failure (also: the database was taken
				 * over), or one after the process started (its pid
				 * could not be recorded): the run stops.  A process
				 * that started is cancelled by live_fatal and ends
				 * through on_end; it must not be ended here. */
				if (g->es || !g->store_id || err.code == RL_ESTORE ||
				    err.code == RL_EINUSE || d->fatal) {
					live_fatal(d, &err);
					if (!g->es)
						live_seg_drop(d, g);
					return;
				}
				/* Could not start (missing program, bad template,
				 * a folder or log that cannot be made): the segment
				 * fails like one that exited at once. */
				exec_result r;
				memset(&r, 0, sizeof r);
				r.outcome = SCHED_OUT_FAILED;
				r.exit_code = -1;
				r.fault = fault;
				snprintf(r.reason, sizeof r.reason, "%s", err.msg);
				g->es = NULL;
				live_end_segment(d, g, &r);
			}
		}
		if (n == 0)
			break;
		budget -= n;
		if (budget == 0) {
			if (d->handles_ready && !d->finished)
				uv_timer_start(&d->kick, kick_cb, 1, 0);
			break;
		}
	}
}

static void kick_cb(uv_timer_t *h)
{
	live *d = h->data;
	place(d);
	live_check_end(d);
}

void live_kick(live *d)
{
	if (d->handles_ready && !d->finished)
		uv_timer_start(&d->kick, kick_cb, 0, 0);
}

/* ---- tick, signals ----------------------------------------------------------- */

static void tick_cb(uv_timer_t *h)
{
	live *d = h->data;
	rl_err err;
	rl_err_clear(&err);
	/* Still ours?  (The lock keeps other drivers out; this notices one
	 * that got in anyway, before it and we fight over segments.) */
	if (!d->fatal && store_driver_check(d->st, &err) == RL_EINUSE)
		live_fatal(d, &err);
	live_gpu_sample(d);
	live_backends_tick(d);
	if (d->opt.service)
		live_sample_rss(d); /* the API shows memory in use */
	place(d);
	live_foreign_waits(d);
	live_progress_draw(d, 0);
	live_check_end(d);
}

/* Stop launching; cancel what runs (SIGTERM, SIGKILL after the grace: each
 * ends through on_end); drop what is only queued.  Segments being placed or
 * ended right now (placed, no executor handle) are left to their caller. */
static void stop_all(live *d)
{
	d->stopping = 1;
	live_seg *g = d->segs;
	while (g) {
		live_seg *next = g->next;
		if (g->es) {
			g->interrupted = 1;
			exec_cancel(live_exec(g->x), g->es);
		} else if (!g->placed) {
			live_seg_drop(d, g);
		}
		g = next;
	}
}

static void signal_cb(uv_signal_t *h, int signum)
{
	live *d = h->data;
	d->sigints++;
	if (d->sigints > 1) {
		/* Second signal: no grace.  Both signals get their default
		 * action back, so a third one ends relish at once, whatever
		 * the loop still waits for (signals must always work). */
		live_progress_line(d, "%s again: killing running segments now (once more ends "
				   "relish at once)", strsignal(signum));
		for (live_seg *g = d->segs; g; g = g->next)
			if (g->es && g->pid > 0)
				kill(-g->pid, SIGKILL);
		uv_signal_stop(&d->sigint);
		uv_signal_stop(&d->sigterm);
		return;
	}
	double now = live_now(d);
	live_progress_line(d, "%s: stopping: cancelling running segments (again to kill them now)",
			   strsignal(signum));
	for (size_t i = 0; i < d->n_exps && !d->fatal; i++) {
		live_exp *x = d->exps[i];
		if (x->done)
			continue;
		/* Best effort: a store that fails must not keep the signal
		 * from stopping the run. */
		store_experiment_set_status(d->st, x->id, EXP_CANCELLED, now, NULL);
		store_event_append(d->st, now, x->id, 0, 0, "experiment.interrupted",
				   "relish was stopped; run the same command again to resume",
				   NULL, NULL);
	}
	stop_all(d);
	live_check_end(d);
}

/* ---- life cycle ------------------------------------------------------------ */

static int runs_dir_default(const char *db, char **out, rl_err *err)
{
	const char *slash = strrchr(db, '/');
	char *s;
	if (slash) {
		if (asprintf(&s, "%.*s/relish-runs", (int)(slash - db), db) < 0)
			s = NULL;
	} else {
		s = strdup("relish-runs");
	}
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "runs folder");
	*out = s;
	return 0;
}

/* The core scheduler, created with the first experiment's policy unless
 * --policy chose one. */
static int core_create(live *d, const spec *sp, rl_err *err)
{
	sched_options so;
	sched_policy pol = d->opt.policy_set || !sp ? d->opt.policy : sp->sharing.policy;
	sched_policy_options(pol, &so);
	if (d->opt.memory_margin > 0 || !sp)
		so.memory_margin = d->opt.memory_margin;
	else
		so.memory_margin = sp->sharing.memory_margin;
	so.order = sched_policy_order(pol, d->opt.order_set || !sp ? d->opt.order : sp->sharing.order);
	if (d->opt.fair_half_life_set)
		so.fair_half_life_s = d->opt.fair_half_life_s;
	d->fair_half_life_s = so.fair_half_life_s;
	/* Devices others use are the machine's, not an experiment's: one
	 * setting for the core (the service's, else the first spec's). */
	so.foreign = d->opt.foreign_set || !sp ? d->opt.foreign : sp->sharing.foreign;
	int rc = sched_new(&so, &d->core, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < d->devs->n; i++) {
		if ((rc = sched_add_device(d->core, &d->devs->dev[i].info, err)) < 0)
			return rc;
	}
	return 0;
}

int live_new(const live_options *o, live **out, rl_err *err)
{
	live *d = calloc(1, sizeof *d);
	if (!d)
		return rl_err_set(err, RL_ENOMEM, "live driver");
	if (o)
		d->opt = *o;
	else
		live_options_default(&d->opt);
	d->out = d->opt.out ? d->opt.out : stderr;
	d->last_arrival = -INFINITY;
	d->tty = d->opt.quiet ? 0 : d->opt.progress >= 0 ? d->opt.progress : isatty(fileno(d->out));
	int rc;
	d->db_path = strdup(d->opt.db_path ? d->opt.db_path : STORE_DEFAULT_PATH);
	if (!d->db_path) {
		rc = rl_err_set(err, RL_ENOMEM, "live driver");
		goto fail;
	}
	if (d->opt.runs_dir) {
		if (!(d->runs_dir = strdup(d->opt.runs_dir))) {
			rc = rl_err_set(err, RL_ENOMEM, "live driver");
			goto fail;
		}
	} else if ((rc = runs_dir_default(d->db_path, &d->runs_dir, err)) < 0) {
		goto fail;
	}
	if ((rc = uv_loop_init(&d->loop)) < 0) {
		rc = rl_err_set(err, RL_EIO, "event loop: %s", uv_strerror(rc));
		goto fail;
	}
	d->loop_ready = 1;
	/* The executor backends the run needs: a cluster's partition that
	 * does not exist, or a cluster that does not answer, is said before
	 * anything is created (backend.c). */
	device_list *own = NULL;
	if ((rc = live_backends_open(d, &own, err)) < 0)
		goto fail;
	d->devs = own;
	/* The store first: a second driver on this database is refused
	 * (STORE_DRIVER) before it creates or writes anything. */
	if ((rc = store_open(d->db_path, STORE_DRIVER, &d->st, err)) < 0)
		goto fail;
	if ((rc = make_dirs(d->runs_dir, err)) < 0)
		goto fail;
	char *abs = realpath(d->runs_dir, NULL);
	if (abs) {
		free(d->runs_dir);
		d->runs_dir = abs;
	}
	devices_options dopt = {.config_path = d->opt.devices_path};
	if (d->devs) {
		/* A backend's own devices (a cluster's nodes); no NVML here:
		 * the nodes measure their own jobs. */
		rc = 0;
	} else if (d->opt.devices_path || getenv("RELISH_DEVICES")) {
		rc = devices_discover(&dopt, &d->devs, err);
	} else {
		if (telemetry_open(&d->tel, err) < 0) {
			rl_err_clear(err);
			d->tel = NULL;
		}
		rc = devices_from_telemetry(d->tel, &dopt, &d->devs, err);
	}
	if (rc < 0)
		goto fail;
	for (size_t i = 0; i < d->devs->n; i++)
		if (d->devs->dev[i].info.is_gpu)
			d->n_gpus++;
	/* No notice here: a run on the host has nothing to hear about NVML; a
	 * spec that asks for GPUs gets it in its error (live_add_experiment). */
	d->mps = gpu_mps_detect(d->mps_dir, sizeof d->mps_dir);
	if ((rc = live_backends_start(d, err)) < 0)
		goto fail;
	for (size_t i = 0; i < d->devs->n; i++) {
		const sched_device_info *di = &d->devs->dev[i].info;
		store_device sd = {.name = (char *)di->name, .uuid = (char *)di->uuid,
				   .is_gpu = di->is_gpu, .mem_total_mib = (int64_t)di->mem_total_mib,
				   .compute_total = di->compute_total};
		if ((rc = store_device_put(d->st, &sd, NULL, err)) < 0)
			goto fail;
	}
	if ((rc = live_profiles_load(d, err)) < 0)
		goto fail;
	/* A service's core exists before its first experiment: its users'
	 * shares and limits are set on it. */
	if (d->opt.service && ((rc = core_create(d, NULL, err)) < 0 ||
				(rc = live_service_usage_load(d, err)) < 0))
		goto fail;
	uv_timer_init(&d->loop, &d->tick);
	uv_timer_init(&d->loop, &d->kick);
	uv_timer_init(&d->loop, &d->grace);
	uv_signal_init(&d->loop, &d->sigint);
	uv_signal_init(&d->loop, &d->sigterm);
	d->tick.data = d->kick.data = d->grace.data = d->sigint.data = d->sigterm.data = d;
	if (d->opt.runas_helper)
		snprintf(d->runas_helper, sizeof d->runas_helper, "%s", d->opt.runas_helper);
	d->handles_ready = 1;
	*out = d;
	return 0;
fail:
	live_free(d);
	return rc;
}

static void exp_free(live_exp *x)
{
	if (!x)
		return;
	live_backend_detach(x->d, x);
	contract_strv_free(x->user_env);
	engine_free(x->eng);
	spec_free(x->sp);
	free(x->trials);
	free(x->dir);
	free(x);
}

/* The spec as JSON without its file name, for "is this the same experiment". */
static char *spec_identity(spec *sp)
{
	char *src = sp->source;
	sp->source = NULL;
	char *j = spec_to_json(sp);
	sp->source = src;
	return j;
}

/*
 * The stored experiment se has another spec (changed), or --restart asks to
 * forget it: delete it from the store, so the caller creates it anew.  A
 * changed spec is taken without --restart only while no trial has
 * completed a segment: then no result depends on the old spec (a wrong
 * command fixed after the first failures is the usual case, and what the
 * failure messages advise).  Otherwise RL_EINVAL, naming --restart.
 */
static int start_anew(live *d, const spec *sp, const store_experiment *se, int changed,
		      rl_err *err)
{
	store_trial *tv = NULL;
	size_t nt = 0, done = 0;
	int rc = store_trial_list(d->st, se->id, 0, &tv, &nt, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nt; i++)
		done += tv[i].resource_done > 0;
	store_trials_free(tv, nt);
	const char *src = sp->source ? sp->source : sp->name;
	if (changed && done && !d->opt.restart)
		return rl_err_set(err, RL_EINVAL,
				  "%s: experiment '%s' already exists in %s with a different spec, "
				  "and %zu of its trials completed segments under the old one; add "
				  "--restart to discard them and start anew, or use another name or "
				  "another --db", src, sp->name, d->db_path, done);
	if ((rc = store_experiment_delete(d->st, se->id, err)) < 0)
		return rc;
	if (!d->opt.quiet)
		fprintf(d->out, "%s: %s: %zu earlier trial%s discarded, starting anew\n", sp->name,
			d->opt.restart ? "--restart"
				       : "the spec changed and no segment had completed",
			nt, nt == 1 ? "" : "s");
	return 0;
}

int live_add_experiment(live *d, spec *sp, rl_err *err)
{
	live_owner self;
	live_owner_self(&self);
	return live_add_owned(d, sp, &self, 0, NULL, NULL, err);
}

int live_add_owned(live *d, spec *sp, const live_owner *ow, int must_be_new,
		   const char *submission, int64_t *id_out, rl_err *err)
{
	int rc;
	live_exp *x = NULL;
	char *ident = NULL;
	store_experiment se = {0};
	int found = 0;
	uv_update_time(&d->loop); /* a turn of its own, before the loop runs */
	if ((rc = spec_default_executor(sp, d->opt.default_executor, err)) < 0)
		goto fail;
	if (sp->trial.resources.gpus > 0 && !d->n_gpus && d->site) {
		rc = rl_err_set(err, RL_ESPEC,
				"%s: trial.resources.gpus is %g but %s has no GPU relish can use (%s)",
				sp->source ? sp->source : sp->name, sp->trial.resources.gpus,
				d->site->where,
				d->devs->notice[0] ? d->devs->notice : "its nodes list none");
		goto fail;
	}
	if (sp->trial.resources.gpus > 0 && !d->n_gpus) {
		rc = rl_err_set(err, RL_ESPEC,
				"%s: trial.resources.gpus is %g but relish sees no GPU (%s); "
				"use a devices file (--devices) or a machine with GPUs",
				sp->source ? sp->source : sp->name, sp->trial.resources.gpus,
				d->devs->notice[0] ? d->devs->notice : d->devs->source);
		goto fail;
	}
	for (size_t i = 0; i < d->n_exps; i++)
		if (strcmp(d->exps[i]->sp->name, sp->name) == 0 && d->exps[i]->owner.uid == ow->uid &&
		    !must_be_new) {
			/* (a service's: the store's row, checked below, says more) */
			rc = rl_err_set(err, RL_EINVAL, "experiment '%s' given twice", sp->name);
			goto fail;
		}
	if (!(ident = spec_identity(sp))) {
		rc = rl_err_set(err, RL_ENOMEM, "spec");
		goto fail;
	}
	/* Names are the owner's: another user's experiment of the same name
	 * is another experiment. */
	rc = store_experiment_find_owned(d->st, sp->name, (int64_t)ow->uid, &se, err);
	if (rc == 0 && must_be_new) {
		rc = rl_err_set(err, RL_EEXISTS,
				"%s: you have an experiment named '%s' already (id %lld, %s); submit "
				"this one under another name (relish submit --name NEW), or remove "
				"that one (relish delete %s%s)",
				sp->source ? sp->source : sp->name, sp->name, (long long)se.id,
				exp_status_name(se.status), sp->name,
				se.status == EXP_RUNNING ? ", after relish cancel" : "");
		goto fail;
	}
	if (rc == 0) {
		found = 1;
		int changed = !se.spec_text || strcmp(se.spec_text, ident) != 0;
		if (changed || d->opt.restart) {
			if ((rc = start_anew(d, sp, &se, changed, err)) < 0)
				goto fail;
			store_experiment_fini(&se);
			found = 0;
		}
	} else if (rc != RL_ENOTFOUND) {
		goto fail;
	}
	rl_err_clear(err);
	if (d->opt.max_concurrent > 0)
		sp->search.max_concurrent = d->opt.max_concurrent;
	if (!d->core && (rc = core_create(d, sp, err)) < 0)
		goto fail;
	x = calloc(1, sizeof *x);
	live_exp **v = realloc(d->exps, (d->n_exps + 1) * sizeof *v);
	/* A grown table is kept even when x failed: once realloc has moved the
	 * block the old pointer is gone (freeing v here left d->exps dangling). */
	if (v)
		d->exps = v;
	if (!x || !v) {
		rc = rl_err_set(err, RL_ENOMEM, "%s: out of memory adding the experiment",
				sp->name);
		goto fail;
	}
	x->d = d;
	x->sp = sp;
	sp = NULL;
	x->owner = *ow;
	if (ow->run_as && !(x->user_env = live_owner_env(ow))) {
		rc = rl_err_set(err, RL_ENOMEM, "%s: the trials' environment", x->sp->name);
		goto fail;
	}
	x->core_user = live_core_user(d, ow->uid);
	if (d->opt.service)
		live_user_apply(d, ow->uid);
	x->run_as = (exec_user){.uid = ow->uid, .gid = ow->gid, .n_groups = (size_t)ow->n_groups,
				.groups = x->owner.groups, .helper = d->runas_helper};
	x->key = ++d->last_exp_key; /* not n_exps + 1: experiments may leave (live_delete) */
	/* The experiment's folder is named by its name and creation time, so
	 * a new database (or a deleted and recreated one) in the same place
	 * never resumes from another experiment's checkpoints; a resumed
	 * experiment finds its own folder again from the stored time. */
	double created = found ? se.created_at : live_now(d);
	for (;;) {
		if (asprintf(&x->dir, "%s/%s.%lld", d->runs_dir, x->sp->name,
			     (long long)llround(created * 1000)) < 0) {
			x->dir = NULL;
			rc = rl_err_set(err, RL_ENOMEM, "experiment");
			goto fail;
		}
		/* Two users' experiments of one name submitted in one turn of
		 * the loop (one clock reading): the second a millisecond later. */
		struct stat sb;
		if (found || stat(x->dir, &sb) != 0)
			break;
		free(x->dir);
		x->dir = NULL;
		created += 0.001;
	}
	if ((rc = make_dirs(x->dir, err)) < 0 || (rc = engine_new(x->sp, &x->eng, err)) < 0 ||
	    (rc = live_backend_attach(d, x, err)) < 0)
		goto fail;
	if (found) {
		x->id = se.id;
		x->resumed = 1;
		if ((rc = live_resume(d, x, &se, err)) < 0)
			goto fail;
	} else {
		store_experiment ne = {
			.name = x->sp->name, .spec_text = ident, .spec_path = x->sp->source,
			.created_at = created, .objective_metric = x->sp->objective.metric,
			.mode = (char *)spec_mode_name(x->sp->objective.mode),
			.owner_uid = (int64_t)ow->uid, .owner = (char *)ow->name,
			.submission = (char *)submission,
		};
		if ((rc = store_experiment_create(d->st, &ne, &x->id, err)) < 0)
			goto fail;
	}
	d->exps[d->n_exps++] = x;
	if (id_out)
		*id_out = x->id;
	store_experiment_fini(&se);
	free(ident);
	return 0;
fail:
	store_experiment_fini(&se);
	free(ident);
	exp_free(x);
	spec_free(sp);
	return rc;
}

void live_exp_remove(live *d, live_exp *x)
{
	for (size_t i = 0; i < d->n_exps; i++)
		if (d->exps[i] == x) {
			memmove(&d->exps[i], &d->exps[i + 1], (d->n_exps - i - 1) * sizeof *d->exps);
			d->n_exps--;
			break;
		}
	exp_free(x);
}

int live_run(live *d, rl_err *err)
{
	int all_done = 1;
	for (size_t i = 0; i < d->n_exps; i++)
		if (!d->exps[i]->done)
			all_done = 0;
	if ((all_done && !d->opt.service) || !d->handles_ready)
		return 0;
	uv_update_time(&d->loop);
	live_progress_begin(d);
	/* What an earlier relish left that no segment adopted is stopped
	 * before anything new starts. */
	live_backends_sweep(d);
	if (!d->opt.service) {
		/* relish serve handles its own signals (live_stop) */
		uv_signal_start(&d->sigint, signal_cb, SIGINT);
		uv_signal_start(&d->sigterm, signal_cb, SIGTERM);
	}
	uv_timer_start(&d->tick, tick_cb, LIVE_TICK_MS, LIVE_TICK_MS);
	/* Measure before the first placement: memory that others hold now
	 * must be known before anything is placed beside it. */
	live_gpu_sample(d);
	live_kick(d);
	uv_run(&d->loop, UV_RUN_DEFAULT);
	live_progress_clear(d);
	if (d->fatal) {
		*err = d->fatal_err;
		return err->code ? err->code : RL_EINTERNAL;
	}
	if (d->sigints)
		return rl_err_set(err, RL_EINTERRUPTED,
				  "interrupted; run the same command again to resume");
	/* A service's experiment that failed is its submitter's, in the
	 * store (experiment.failed): the service itself did not fail. */
	if (d->runtime_err.code && !d->opt.service) {
		*err = d->runtime_err;
		return err->code;
	}
	return 0;
}

size_t live_experiment_count(const live *d)
{
	return d->n_exps;
}

int64_t live_experiment_id(const live *d, size_t i)
{
	return i < d->n_exps ? d->exps[i]->id : 0;
}

const char *live_experiment_name(const live *d, size_t i)
{
	return i < d->n_exps ? d->exps[i]->sp->name : NULL;
}

int live_experiment_has_value(const live *d, size_t i)
{
	if (i >= d->n_exps)
		return 0;
	store_trial t;
	if (store_trial_best(d->st, d->exps[i]->id, &t, NULL) < 0)
		return 0;
	store_trial_fini(&t);
	return 1;
}

void live_experiment_outcome(const live *d, size_t i, char *buf, size_t n)
{
	buf[0] = '\0';
	if (i >= d->n_exps)
		return;
	const live_exp *x = d->exps[i];
	char fs[1200];
	size_t failed = live_failure_summary(d, x, fs, sizeof fs);
	uint64_t nt = engine_n_trials(x->eng);
	if (failed)
		snprintf(buf, n, "%zu of %llu trials failed, %s", failed, (unsigned long long)nt, fs);
	else if (nt)
		snprintf(buf, n, "%llu trials, none failed", (unsigned long long)nt);
	else
		snprintf(buf, n, "no trial was started");
}

const char *live_db_path(const live *d)
{
	return d->db_path;
}

void live_free(live *d)
{
	if (!d)
		return;
	close_handles(d);
	/* The backends stop what they run, the loop lets it go, then they
	 * are freed; the experiments no longer hold their executors. */
	live_backends_shutdown(d);
	if (d->loop_ready)
		uv_run(&d->loop, UV_RUN_DEFAULT);
	for (size_t i = 0; i < d->n_exps; i++)
		d->exps[i]->be = NULL, d->exps[i]->ex = NULL;
	live_backends_close(d);
	if (d->loop_ready) {
		uv_run(&d->loop, UV_RUN_DEFAULT);
		uv_loop_close(&d->loop);
	}
	while (d->segs) {
		live_seg *g = d->segs;
		d->segs = g->next;
		free(g->reuse_key);
		free(g);
	}
	for (size_t i = 0; i < d->n_exps; i++)
		exp_free(d->exps[i]);
	free(d->exps);
	sched_free(d->core);
	telemetry_close(d->tel);
	device_list_free(d->devs);
	store_profiles_free(d->profiles, d->n_profiles);
	free(d->profile_used);
	free(d->user_rules);
	store_close(d->st);
	free(d->db_path);
	free(d->runs_dir);
	free(d);
}
