/*
 * driver.c - the live driver's loop: its life cycle (live_new, live_run,
 * live_free), its clock, the kick and tick timers that fill and place
 * (launch.c), signals and the ways a run stops.  The experiments it runs
 * come and go in experiment.c; segment ends are segment_end.c's.
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
#include "common/procid.h"
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

double live__now(live *d)
{
	clock_read(d);
	return d->now_wall;
}

double live__mono(live *d)
{
	clock_read(d);
	return d->now_mono;
}

double live__mono_of(live *d, double wall)
{
	clock_read(d);
	return d->now_mono - (d->now_wall - wall);
}

double live__arrival(live *d, double t)
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

void live__fatal(live *d, const rl_err *err)
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
	live__progress_line(d, "relish: stopping after an error (printed when the running "
			   "segments have ended); nothing more is written to %s", d->db_path);
	stop_all(d);
}

/* mkdir -p, with relish's error */
int live__make_dirs(const char *path, rl_err *err)
{
	if (rl_mkdirs(path, 0755) != 0)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", path);
	return 0;
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

void live__seg_link(live *d, live_seg *g)
{
	seg_link(d, g);
}

void live__seg_unlink_free(live *d, live_seg *g)
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

void live__seg_unqueued(live_seg *g)
{
	if (g->x->n_queued)
		g->x->n_queued--;
	if (g->fresh && g->x->n_fresh)
		g->x->n_fresh--;
	g->fresh = 0;
}

void live__seg_drop(live *d, live_seg *g)
{
	sched_remove(d->core, g->sched_id);
	if (!g->placed)
		live__seg_unqueued(g);
	live__seg_unlink_free(d, g);
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
	live__progress_end(d);
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
	live__progress_draw(d, 1);
	if (d->opt.on_finish)
		d->opt.on_finish(d->opt.on_finish_ctx); /* the service closes its own handles */
	live__backends_shutdown(d);
	close_handles(d);
}

void live__check_end(live *d)
{
	if (d->finished)
		return;
	if (d->stopping) {
		if (!d->segs)
			loop_finish(d);
		return;
	}
	int all_done = 1;
	for (size_t i = 0; i < d->n_exps; i++) {
		live_exp *x = d->exps[i];
		if (!x->done && (x->runtime_failed || x->cancelled) && x->n_active == 0)
			x->done = 1;
		if (!x->done)
			all_done = 0;
	}
	if (d->opt.service)
		return; /* experiments come and go until live_stop */
	if (all_done)
		loop_finish(d);
}

static void kick_cb(uv_timer_t *h)
{
	live *d = h->data;
	live__place(d);
	live__check_end(d);
}

void live__kick_in(live *d, uint64_t ms)
{
	if (d->handles_ready && !d->finished)
		uv_timer_start(&d->kick, kick_cb, ms, 0);
}

void live__kick(live *d)
{
	live__kick_in(d, 0);
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
		live__fatal(d, &err);
	live__gpu_sample(d);
	live__backends_tick(d);
	if (d->opt.service) {
		live__sample_rss(d); /* the API shows memory in use */
		live__space_tick(d);
	}
	live__place(d);
	live__foreign_waits(d);
	live__progress_draw(d, 0);
	live__check_end(d);
	/* Here, not in check_end: that runs inside an executor's callbacks,
	 * and an experiment's executor must not leave under its own feet. */
	if (d->opt.service && !d->finished)
		live__exps_retire(d);
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
			exec_cancel(live__exec(g->x), g->es);
		} else if (!g->placed) {
			live__seg_drop(d, g);
		}
		g = next;
	}
}

/*
 * A signal that comes before live_run watches for it (while the specs are
 * read, the database opened, recovered and migrated: seconds on a loaded
 * machine) is kept here and answered as soon as the loop runs, the same
 * way as one that comes later: exit 130, what ran recorded.  Without this
 * SIGTERM's default action ended relish during start-up with 143 (issue
 * 30, item 12: test_faults' "SIGTERM while full" on a busy machine).  A
 * second one meanwhile has its default action: signals always work.
 */
static volatile sig_atomic_t early_signal;

static void early_handler(int signum)
{
	if (early_signal) {
		signal(signum, SIG_DFL);
		raise(signum);
		return;
	}
	early_signal = signum;
}

void live_signals_early(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = early_handler;
	sa.sa_flags = SA_RESTART; /* a read of the spec goes on */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static void signal_cb(uv_signal_t *h, int signum)
{
	live *d = h->data;
	d->sigints++;
	if (d->sigints > 1) {
		/* Second signal: no grace.  Both signals get their default
		 * action back, so a third one ends relish at once, whatever
		 * the loop still waits for (signals must always work). */
		live__progress_line(d, "%s again: killing running segments now (once more ends "
				   "relish at once)", strsignal(signum));
		for (live_seg *g = d->segs; g; g = g->next)
			if (g->es && g->pid > 0)
				procid_kill_group(g->pid, g->pid_start, SIGKILL);
		uv_signal_stop(&d->sigint);
		uv_signal_stop(&d->sigterm);
		return;
	}
	double now = live__now(d);
	live__progress_line(d, "%s: stopping: cancelling running segments (again to kill them now)",
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
	live__check_end(d);
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
int live__core_create(live *d, const spec *sp, rl_err *err)
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
	return live__learnt_load(d);
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
	if ((rc = live__backends_open(d, &own, err)) < 0)
		goto fail;
	d->devs = own;
	/* The store first: a second driver on this database is refused
	 * (STORE_DRIVER) before it creates or writes anything. */
	if ((rc = store_open(d->db_path, STORE_DRIVER, &d->st, err)) < 0)
		goto fail;
	if ((rc = live__make_dirs(d->runs_dir, err)) < 0)
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
	if ((rc = live__backends_start(d, err)) < 0)
		goto fail;
	for (size_t i = 0; i < d->devs->n; i++) {
		const sched_device_info *di = &d->devs->dev[i].info;
		store_device sd = {.name = (char *)di->name, .uuid = (char *)di->uuid,
				   .is_gpu = di->is_gpu, .mem_total_mib = (int64_t)di->mem_total_mib,
				   .compute_total = di->compute_total};
		if ((rc = store_device_put(d->st, &sd, NULL, err)) < 0) {
			/* A service starts on a full disk (its experiments wait
			 * for space: space.c); the rows are written next time. */
			if (d->opt.service && store_err_no_space(err)) {
				rl_err_clear(err);
				continue;
			}
			goto fail;
		}
	}
	if ((rc = live__profiles_load(d, err)) < 0)
		goto fail;
	/* A service's core exists before its first experiment: its users'
	 * shares and limits are set on it. */
	if (d->opt.service && ((rc = live__core_create(d, NULL, err)) < 0 ||
				(rc = live__service_usage_load(d, err)) < 0))
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

int live_run(live *d, rl_err *err)
{
	int all_done = 1;
	for (size_t i = 0; i < d->n_exps; i++)
		if (!d->exps[i]->done)
			all_done = 0;
	if ((all_done && !d->opt.service) || !d->handles_ready)
		return 0;
	uv_update_time(&d->loop);
	live__progress_begin(d);
	/* What an earlier relish left that no segment adopted is stopped
	 * before anything new starts. */
	live__backends_sweep(d);
	if (!d->opt.service) {
		/* relish serve handles its own signals (live_stop) */
		uv_signal_start(&d->sigint, signal_cb, SIGINT);
		uv_signal_start(&d->sigterm, signal_cb, SIGTERM);
	}
	uv_timer_start(&d->tick, tick_cb, LIVE_TICK_MS, LIVE_TICK_MS);
	/* Measure before the first placement: memory that others hold now
	 * must be known before anything is placed beside it. */
	live__gpu_sample(d);
	live__kick(d);
	if (!d->opt.service && early_signal) {
		int sig = early_signal;
		early_signal = 0;
		signal_cb(sig == SIGINT ? &d->sigint : &d->sigterm, sig);
	}
	uv_run(&d->loop, UV_RUN_DEFAULT);
	live__progress_clear(d);
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
	live__backends_shutdown(d);
	if (d->loop_ready)
		uv_run(&d->loop, UV_RUN_DEFAULT);
	for (size_t i = 0; i < d->n_exps; i++)
		d->exps[i]->be = NULL, d->exps[i]->ex = NULL;
	live__backends_close(d);
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
		live__exp_free(d->exps[i]);
	free(d->exps);
	/* what was learnt since the last segment end (a job's service ends
	 * after its last segment's transaction): best effort */
	rl_err e;
	if (d->core && d->st && !d->fatal && live__learnt_save(d, &e) < 0)
		live__progress_line(d, "relish: what the scheduler learnt last is not saved: %s",
				    e.msg);
	free(d->learnt);
	sched_free(d->core);
	telemetry_close(d->tel);
	device_list_free(d->devs);
	store_profiles_free(d->profiles, d->n_profiles);
	free(d->profile_used);
	free(d->user_rules);
	free(d->held);
	store_close(d->st);
	free(d->db_path);
	free(d->runs_dir);
	free(d);
}
