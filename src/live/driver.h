/*
 * driver.h - the live driver behind `relish run`: one thread, one libuv
 * loop, running one or more experiments on this machine's devices.
 *
 * It joins the pure pieces to the effectful ones: the experiment engine
 * (search/engine.h) says which segment of which trial to run next; the core
 * scheduler (sched/sched.h) says where, with what memory reservation and
 * compute share; the executor of the experiment's backend (exec/exec.h)
 * runs it; telemetry
 * (NVML, /proc) measures it; the store (store/store.h) records every
 * transition before it is acted on, so a relish killed at any instant
 * resumes from the database (recover.c).  docs/architecture.md ("The live
 * driver") walks through the loop.
 */
#ifndef RELISH_LIVE_DRIVER_H
#define RELISH_LIVE_DRIVER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <uv.h>

#include "common/err.h"
#include "spec/spec.h"
#include "store/store.h"

typedef struct live live;
struct exec_backend_row;

/*
 * Who an experiment belongs to.  `relish run` records the user who ran it;
 * `relish serve` the submitter, and with run_as its trials run as that
 * user (exec/runas.h: setgroups, setgid, setuid before exec; an engine
 * given the user) and their checkpoint folders and logs are theirs.
 */
#define LIVE_OWNER_GROUPS_MAX 64
typedef struct live_owner {
	uid_t uid;
	gid_t gid;
	char name[64];
	int run_as;              /* 1: trials run as uid/gid/groups */
	int n_groups;            /* supplementary groups (getgrouplist) */
	gid_t groups[LIVE_OWNER_GROUPS_MAX];
} live_owner;

/* The owner record of user uid from the password database (groups too).
 * RL_ENOTFOUND for an unknown uid. */
int live_owner_of_uid(uid_t uid, live_owner *out, rl_err *err);

typedef struct live_options {
	const char *db_path;      /* state database; NULL: STORE_DEFAULT_PATH */
	const char *runs_dir;     /* logs and checkpoints; NULL: relish-runs/ next to the db */
	const char *devices_path; /* devices file (telemetry/inventory.h); NULL: discover */
	int policy_set;           /* 1: policy overrides every spec's sharing.policy */
	sched_policy policy;
	int order_set;            /* 1: order overrides every spec's sharing.order */
	queue_order order;
	int foreign_set;          /* 1: foreign overrides every spec's sharing.foreign */
	sched_foreign_policy foreign;
	int max_concurrent;       /* > 0: overrides search.max_concurrent */
	int quiet;                /* no progress output at all */
	int restart;              /* forget what the store holds of these experiments */
	int progress;             /* 1 live display, 0 plain lines, -1 auto (isatty) */
	FILE *out;                /* progress output; NULL: stderr */
	/* Seams for tests (tests/test_live.c); NULL in relish itself.
	 * backends replaces the table of executor backends (exec_backends,
	 * exec/exec.h; n_backends rows): a stand-in that scripts segment
	 * ends, finds what an earlier driver left and adopts it.
	 * wall_clock replaces CLOCK_REALTIME as the source of stored
	 * timestamps (the driver's other clock, for durations and the core,
	 * is the loop's monotonic time either way). */
	const struct exec_backend_row *backends;
	size_t n_backends;
	double (*wall_clock)(void *ctx);
	void *wall_clock_ctx;
	/* The executor of specs that do not name one (trial.executor absent):
	 * relish serve's service-wide default. */
	executor_kind default_executor;
	/* A service's settings for the backend of each executor kind (the
	 * backend's own type, which its header names), NULL: none.
	 * A backend with settings is opened by live_new; one that places on
	 * devices of its own (a cluster's partition) then gives the driver
	 * its devices, and every experiment must run there. */
	const void *backend_settings[EXEC_KINDS];
	/* The specs that will be added (relish run; borrowed for live_new):
	 * their backends are opened by live_new, from what they ask (one
	 * cluster partition for the run), before the store is: a partition
	 * that does not exist is said before anything is created. */
	spec *const *plan;
	size_t n_plan;
	/* Service mode (relish serve): the loop keeps running with nothing
	 * to do, experiments come and go (live_submit, live_cancel), the
	 * caller owns the signals and ends the loop with live_stop. */
	int service;
	/* Progress lines go here instead of out (service logs); NULL: out. */
	void (*line_fn)(void *ctx, const char *line);
	void *line_ctx;
	const char *runas_helper; /* the relish-runas program (run_as owners) */
	double memory_margin;     /* > 0: overrides every spec's sharing.memory_margin */
	int fair_half_life_set;   /* 1: the core's fair_half_life_s is this (0: never
				   * forgets); else the core's default (7 days) */
	double fair_half_life_s;
	/* Called once when the loop is asked to end (service: close the
	 * listeners and signal handlers, so uv_run can return). */
	void (*on_finish)(void *ctx);
	void *on_finish_ctx;
	/* Set: segments are placed and launched one at a time, and this is
	 * called before each (service: the API answers the requests queued
	 * for the loop, so a submission waits at most for the one launch
	 * under way, not for a round of launches that began after it came;
	 * each spawn blocks the loop until its child has executed).  It may
	 * add and cancel experiments (live_submit, live_cancel): no placement
	 * is outstanding when it runs. */
	void (*before_launch)(void *ctx);
	void *before_launch_ctx;
	/* Service: experiment id was paused for want of space (paused 1:
	 * its segments stop, the store still says running; space.c) or is
	 * no longer (0: resumed, cancelled, or left for the next start).
	 * On the loop thread; the API shows it (api_ctx.paused). */
	void (*on_paused)(void *ctx, int64_t id, int paused);
	void *on_paused_ctx;
	/* Service: no segment runs longer than this (seconds; a spec's
	 * trial.timeout may be shorter; 0: none): a trial that never ends
	 * cannot hold its devices for ever. */
	double max_segment_s;
	/* Service: what a host trial that names no trial.resources.memory
	 * reserves (MiB; 0: the whole host, as relish run measures first). */
	uint64_t default_memory_mib;
	/* Service: the most processes a trial's user may have at once
	 * (RLIMIT_NPROC, set by relish-runas before it drops to the user;
	 * 0: left as it is): one user's fork bomb fills the user's share,
	 * not the machine's process table. */
	unsigned trial_processes;
} live_options;

void live_options_default(live_options *o);

/* Open the store as its driver (STORE_DRIVER: RL_EINUSE when another relish
 * drives it), discover devices, set up the loop, executors and core
 * scheduler.  *out is owned by the caller (live_free). */
int live_new(const live_options *o, live **out, rl_err *err);

/*
 * Add an experiment; sp is taken over (freed by the driver, also on error).
 * A new name is created in the store.  An existing name resumes it
 * (recover.c); a finished one is kept as is (live_run returns at once for
 * it).  A different spec starts it anew (the stored one is deleted) while
 * none of its trials has completed a segment; after that it is RL_EINVAL
 * naming the db, the experiment and --restart.  With options.restart the
 * stored experiment is deleted and started anew whatever it holds.
 * Errors: RL_ESPEC when the spec needs GPUs and none are seen.
 */
int live_add_experiment(live *d, spec *sp, rl_err *err);

/*
 * Run the loop until every experiment is done, or until SIGINT / SIGTERM
 * (running segments are cancelled and recorded so a later run resumes
 * them; a second signal kills them at once and gives both signals back
 * their default action, so a third ends relish whatever it is waiting
 * for).  A store write that fails, or another driver taking the database
 * over (store_driver_check), stops the run the same way, except that
 * nothing more is written: segments whose end could not be recorded stay
 * "running" in the store and the next run re-runs them from their last
 * boundary.  Returns 0 when all are done, RL_EINTERRUPTED when
 * interrupted, the first error otherwise (RL_ESTORE for the store,
 * RL_EINUSE when taken over).
 */
int live_run(live *d, rl_err *err);

/* relish run: catch SIGINT and SIGTERM from now on, before the driver
 * exists; one that comes before live_run watches for it is answered there
 * (the run stops, exit 130), a second one meanwhile ends the process.
 * Not for relish serve, which handles its own. */
void live_signals_early(void);

/* Experiments added, their store ids and names (for printing the best).
 * A service's count is of those in memory: what runs (ended ones leave). */
size_t live_experiment_count(const live *d);
/* Segments queued or running, and whether the driver is stopping
 * (relish serve's /healthz and /readyz). */
size_t live_segment_count(const live *d);
int live_is_stopping(const live *d);
int64_t live_experiment_id(const live *d, size_t i);
const char *live_experiment_name(const live *d, size_t i);
/* 1 when experiment i has a trial with an objective value. */
int live_experiment_has_value(const live *d, size_t i);

/* What became of experiment i's trials, in words for the end of a run:
 * "24 of 24 trials failed, all the same way: \"exit code 1: ValueError:
 * ...\" (trial 3: relish logs 3)", or "12 trials, none failed". */
void live_experiment_outcome(const live *d, size_t i, char *buf, size_t n);

const char *live_db_path(const live *d);

/* ---- service mode (relish serve; src/live/service.c) ---------------------- */

/*
 * Add a new experiment while the loop runs, owned by ow; sp is taken over
 * (freed also on error).  submission is what the spec was parsed from, as
 * JSON ({"spec", "name", "dir", "format"}): stored, a restarted service
 * parses it again.  Returns after the experiment row is committed (the
 * service acknowledges a submission only then): *id gets its store id.
 * A name the store already holds is RL_EEXISTS, whoever owns it.
 */
int live_submit(live *d, spec *sp, const live_owner *ow, const char *submission, int64_t *id,
		rl_err *err);

/* Parse a submission ({"spec", "name", "dir", "format", "env"}) of ow
 * into a spec: errors are the spec parser's (FILE:LINE:COL as `relish
 * validate`).  Read for its author (spec_origin): ${NAME} in trial.mounts
 * from the submission's "env" object only (what the client declared),
 * never from this process's environment; mount paths resolved with ow's
 * rights (runas_realpath): one ow cannot reach is refused with the error
 * ow would get (RL_EPERM), one that does not exist is kept as written
 * (the engine names it when it runs). */
int live_submission_parse(const char *submission, const live_owner *ow, spec **out,
			  rl_err *err);

/*
 * Resume an experiment the store holds in state running (the service
 * restarting): its spec is parsed again from the stored submission, its
 * owner is ow; admit (may be NULL) decides again whether ow may run it
 * (the service's rules may have changed since it was submitted).  Errors
 * as live_add_experiment, or admit's.
 */
int live_resume_stored(live *d, const store_experiment *e, const live_owner *ow,
		       int (*admit)(void *ctx, const live_owner *ow, const spec *sp, rl_err *err),
		       void *admit_ctx, rl_err *err);

/*
 * An experiment the store holds as running that a starting service could
 * not resume for want of space (store_err_no_space): held, and resumed
 * from the store once there is space again (space.c).
 */
int live_hold_stored(live *d, const store_experiment *e, const live_owner *ow, rl_err *err);
/* Experiments paused for want of space and out of the driver. */
size_t live_held_count(const live *d);

/*
 * Cancel experiment id: it is marked cancelled (committed before anything
 * is stopped), its queued segments are dropped, its running ones stopped.
 * who goes into the event.  RL_ENOTFOUND when the driver does not run it,
 * RL_EEXISTS when it is finished already.
 */
int live_cancel(live *d, int64_t id, const char *who, rl_err *err);
/*
 * Remove an experiment that has ended (done, cancelled, failed): its rows
 * (trials, segments, metrics, events) and its folder of checkpoints and
 * logs, so its name is free for its owner again.  RL_EBUSY while it runs
 * (cancel it first) or its last segments are still stopping; RL_ENOTFOUND
 * for an unknown id.  who: for the log.
 */
int live_delete(live *d, int64_t id, const char *who, rl_err *err);

/*
 * Stop the loop gracefully: nothing new is launched; running segments may
 * reach their end for grace_s seconds, then they are stopped (recorded as
 * interrupted, re-run when the service starts again).  Experiments stay
 * running in the store.  A second call stops what runs at once.
 */
void live_stop(live *d, double grace_s);

/*
 * A service's reload (SIGHUP) of the settings of executor kind k's backend
 * (as in live_options.backend_settings): what its backend can take while
 * it runs (a cluster's: account, qos, options, intervals).  RL_EINVAL
 * when the driver has no such backend open.
 */
int live_backend_reconfigure(live *d, executor_kind k, const void *settings, rl_err *err);

/* The loop (the API listens on it) and the store (its reads, same thread). */
uv_loop_t *live_loop(live *d);
store *live_store(live *d);

/* What runs where, for the API's devices view. */
typedef struct live_device_view {
	char name[64];
	char uuid[96];
	int is_gpu;
	uint64_t mem_total_mib;
	double compute_total;
	uint64_t mem_reserved_mib;  /* by the core */
	double compute_reserved;
	size_t n_running;
	int64_t mem_used_mib;       /* measured (NVML, or the segments' RSS); -1 unknown */
} live_device_view;

size_t live_device_count(const live *d);
int live_device_get(const live *d, size_t i, live_device_view *out);

/* A segment the driver runs now. */
typedef struct live_running_seg {
	int64_t segment_id, trial_id, experiment_id;  /* store ids */
	const char *experiment;     /* borrowed: valid until the loop runs on */
	const char *owner;          /* borrowed */
	uid_t owner_uid;
	size_t device;              /* index for live_device_get */
	uint64_t mem_reserved_mib;
	double compute;
	double resource_from, resource_to;
	double started_at;
	int64_t mem_used_mib;       /* GPU peak so far or RSS now; -1 unknown */
	pid_t pid;
	double mean_util;           /* GPU SM utilisation of its processes so far,
				     * percent of the device; -1 unknown (host, no sample) */
} live_running_seg;

/* Writes at most max running segments into out; returns how many run. */
size_t live_running(const live *d, live_running_seg *out, size_t max);

/* What the service knows of one user (the API's queue view). */
typedef struct live_user_view {
	uid_t uid;
	char name[64];
	double share;            /* weight under the fair order */
	double share_fraction;   /* share / the shares of users with work; NAN none */
	double attained_s;       /* device-seconds its segments have held */
	double usage_s;          /* the same, each second weighted by
				  * 2^(-age / half-life): what the fair order ranks by */
	size_t running, queued;  /* segments */
	size_t n_experiments;    /* active experiments */
	int max_gpus;            /* limits, 0 = none */
	uint64_t max_mem_mib;
	int max_segments;
} live_user_view;

/* Users with active experiments or service so far; writes at most max
 * into out and returns how many there are. */
size_t live_users(live *d, live_user_view *out, size_t max);

/* A user's share of the devices and limits (0 = none) under the core's
 * fair order; users without one get the default. */
typedef struct live_user_policy {
	double share;
	int max_gpus;
	uint64_t max_mem_mib;
	int max_segments;
	int max_experiments;     /* running at once (live_submit refuses more); 0 none */
	uint64_t max_host_mem_mib; /* host memory its CPU trials reserve at once */
	double max_cpus;         /* host CPUs its CPU trials reserve at once */
} live_user_policy;

void live_set_user_policy(live *d, uid_t uid, const live_user_policy *p);
/* Forget every user's own rule (a reloaded config's users: replaces the
 * old one whole: a user taken out of it falls back to the default, which
 * live_set_default_user_policy then applies to everyone). */
void live_clear_user_policies(live *d);
void live_set_default_user_policy(live *d, const live_user_policy *p);
/* A reloaded config's trial limits (live_options: max_segment_s,
 * default_memory_mib, trial_processes): segments launched from now on
 * take the first two, experiments started from now on the third; what
 * runs keeps the limits it started with. */
void live_set_trial_limits(live *d, double max_segment_s, uint64_t default_memory_mib,
			   unsigned trial_processes);

/* Segments of experiment id queued in the core (not yet placed). */
size_t live_queued_count(const live *d, int64_t experiment_id);
/* 1 when the driver runs experiment id now (not finished, not cancelled). */
int live_is_active(const live *d, int64_t experiment_id);

/* Peak resident set size of this process in KiB (getrusage). */
long live_max_rss_kib(void);

void live_free(live *d); /* NULL accepted */

#endif
