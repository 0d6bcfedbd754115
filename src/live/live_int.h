/*
 * live_int.h - the live driver's internal state, shared by driver.c (the
 * loop, signals, life cycle), launch.c (fill, place, launch), experiment.c
 * (experiments added, finished, removed), segment_end.c (metric lines and
 * segment ends), backend.c (the executor backends), recover.c (resuming an
 * experiment from the store), request.c (scheduler requests and memory
 * profiles), gpu.c, explain.c, service.c and progress.c (the terminal
 * display).  Not a public header.
 *
 * Memory stays small and flat: one live_trial (a few dozen bytes) per trial
 * of an experiment that runs, one live_seg per segment that is queued or
 * running, no metric history beyond what the engine keeps for its
 * decisions.  A service's ended experiments leave (live__exps_retire) and
 * a trial that ended leaves the core (sched_job_forget).
 */
#ifndef RELISH_LIVE_INT_H
#define RELISH_LIVE_INT_H

#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "exec/exec.h"
#include "live/driver.h"
#include "sched/sched.h"
#include "search/engine.h"
#include "spec/spec.h"
#include "store/store.h"
#include "telemetry/inventory.h"
#include "telemetry/nvml.h"

#define LIVE_TICK_MS 200     /* placement retries, GPU sampling, display */
#define LIVE_SERVICE_BURST 4 /* service: launches per loop turn (place) */
#define LIVE_MAX_DEVICES 64  /* devices whose foreign use is measured */
/* Metric lines one segment may store: past it lines are counted and
 * dropped (an event says so once, and at the segment's end how many), the
 * last objective value still reaches the engine and the store.  A trial
 * printing 5 MB of metric lines once made 640,000 rows and blocked the
 * loop for 25 s (issue 25, item 7). */
#define LIVE_METRIC_LINES_MAX 10000

typedef struct live_exp live_exp;

/* Per trial: what the engine does not keep. */
typedef struct live_trial {
	int64_t store_id;     /* 0 until the trial row exists */
	int next_seq;         /* seq of its next segment */
	int warned_line;      /* said once that a line missed the metric format */
	sched_trial_history hist; /* retries, losses and out-of-memory history:
				  the core's decision at each segment end
				  updates it (sched_end_decide) and the
				  trial's requests carry its memory part
				  (sched_mem_apply) */
	double arrival;       /* when its first segment was submitted (live__mono): its
				 segments keep that turn (submit_time), as a
				 simulated job keeps its arrival */
	double attained_before; /* device-seconds of segments that ended
				   before this process started (the core
				   counts the rest itself) */
} live_trial;

/* A segment queued in the core or running. */
typedef struct live_seg {
	struct live_seg *next, *prev;
	live_exp *x;
	uint64_t trial;
	uint64_t sched_id;
	int64_t store_id;      /* 0 until placed (the row is written at placement) */
	int seq;
	double from, to;
	sched_request req;
	int placed;
	int fresh;             /* a new trial's first segment, queued: holds
				   a place in the admission window */
	int dev;               /* first device index */
	uint64_t mem_mib;      /* reservation */
	double compute;
	sched_basis basis;
	int64_t est_mem;       /* estimator's predicted peak, -1 unknown */
	exec_segment *es;      /* while running */
	pid_t pid;             /* its process group's leader, 0 none ... */
	uint64_t pid_start;    /* ... and its start time (procid.h) */
	double started_at;     /* live__mono at launch */
	uint64_t gpu_peak_mib; /* from NVML samples of its process group */
	double util_sum;       /* SM utilisation samples of its group (gpu.c) */
	int util_n;
	uint64_t rss_now;      /* bytes, last display sample */
	double last_obj;       /* last objective value, NAN none */
	char reported[96];     /* metric names it printed, ", "-separated (explain.c) */
	int n_missed;          /* lines that missed the metric format (BAD, NEAR) */
	size_t n_lines;        /* metric lines stored (LIVE_METRIC_LINES_MAX) */
	size_t n_dropped;      /* metric lines past the bound, not stored */
	double drop_res, drop_obj; /* the last dropped line's resource and
				    * objective (drop_obj NAN: it had none) */
	int interrupted;       /* cancelled because relish is stopping */
	char *reuse_key;       /* warm / worker */
	double waiting_since;  /* queued: waiting for memory other processes
				* hold since then (live__foreign_waits), 0 not */
	int adopted;           /* it outlived a crashed relish and was adopted (recover.c) */
	double replay_upto;    /* adopted: metric lines at or before this resource are
				* stored already (its output is read again from its
				* start): reported to the engine, not stored */
} live_seg;

struct live_exp {
	live *d;
	spec *sp;
	engine *eng;
	int64_t id;             /* store id */
	uint64_t key;           /* exp_id for the core */
	live_trial *trials;
	size_t n_trials, cap_trials;
	size_t n_queued;        /* in the core, not placed */
	size_t n_fresh;         /* of those, new trials' first segments (the
				   admission window, SCHED_ADMIT_WINDOW) */
	size_t n_active;        /* queued or running */
	int done;               /* engine_done and recorded */
	int resumed;
	int stalled;            /* engine_next failed: stop creating */
	char *dir;              /* <runs>/<name> */
	size_t n_seg_done;      /* segments ended (display) */
	exec_backend *be;       /* the backend of its trial.executor (backend.c) */
	executor *ex;           /* what runs its segments: the backend's, from attach */
	int runtime_failed;     /* its executor's runtime failed: nothing more is launched */
	size_t final_at_start;  /* trials already final when this run began (the ETA) */
	live_owner owner;       /* who it belongs to (service.c) */
	uint32_t core_user;     /* its owner in the core: uid + 1 in service mode, else 0 */
	exec_user run_as;       /* owner.run_as: what launch gives the executor */
	char **user_env;        /* owner.run_as: the environment its trials start from
				 * (live__owner_env), not relish's own */
	int cancelled;          /* live_cancel: nothing more is launched */
	int suspended;          /* paused for want of space (space.c): nothing
				 * more of it is written; it leaves the driver
				 * once its segments have stopped */
};

/* An experiment paused for want of space, out of the driver (space.c). */
typedef struct live_held {
	int64_t id;
	live_owner owner;
	double retry_at;        /* live__mono */
	double wait_s;          /* the next wait when a resume finds no space */
} live_held;

struct live {
	live_options opt;
	char *db_path;
	char *runs_dir;
	store *st;
	uv_loop_t loop;
	int loop_ready;
	/* executor backends (backend.c): the table, each row's backend once
	 * opened, the one whose devices these are (NULL: this machine's),
	 * and what they are lent */
	const exec_backend_row *be_rows;
	size_t n_be_rows;
	exec_backend *backends[EXEC_KINDS]; /* by row */
	exec_backend *site;
	exec_host host;
	char owner_id[24];      /* exec_owner_id of the database */
	sched *core;
	double fair_half_life_s; /* the core's (core_create) */
	telemetry *tel;
	device_list *devs;
	int n_gpus;
	char mps_dir[512];
	int mps;
	live_exp **exps;
	size_t n_exps;
	size_t rr;              /* round-robin start */
	uint64_t last_exp_key;  /* the latest live_exp.key: keys are never reused */
	live_seg *segs;         /* active segments */
	uint64_t next_sched_id;
	uv_timer_t tick, kick;
	uv_timer_t grace;       /* service: live_stop's grace period */
	uv_signal_t sigint, sigterm;
	int handles_ready;
	int stopping;           /* signal: stop launching */
	int sigints;
	int stop_calls;         /* live_stop calls so far */
	/* service: users' shares and limits (service.c) */
	struct live_user_rule {
		uid_t uid;
		live_user_policy p;
	} *user_rules;
	size_t n_user_rules;
	live_user_policy user_default;
	char runas_helper[4096];
	int finished;           /* loop asked to end */
	int fatal;              /* store error (or taken over) during callbacks:
				 * stop, and write nothing more */
	rl_err fatal_err;
	int log_warned;         /* a failed log write was reported */
	/* The clock (live__now, live__mono): read once per value of the
	 * loop's time, so everything one callback does sees one "now". */
	uint64_t clock_ms;
	int clock_set;
	double now_mono, now_wall;
	double last_arrival;    /* live__arrival's latest */
	/* profiles from the store not yet given to the core, by shape text */
	store_profile *profiles;
	size_t n_profiles;
	uint8_t *profile_used;
	rl_err runtime_err;     /* first experiment stopped by a runtime failure */
	live_held *held;        /* paused for want of space (space.c) */
	size_t n_held;
	int profiles_seeded;    /* profiles with features given to the core */
	/* what the core learnt beyond shapes (live__learnt_save): its rows
	 * changed after this stamp are not in the store yet */
	uint64_t learnt_since;
	sched_learnt *learnt;
	size_t cap_learnt;
	/* foreign use per device (gpu.c): the last measurement, and the
	 * memory no listed process accounts for at its least */
	uint64_t foreign_mib[LIVE_MAX_DEVICES];
	uint64_t gpu_base_mib[LIVE_MAX_DEVICES];
	uint8_t gpu_base_known[LIVE_MAX_DEVICES];
	/* display (progress.c) */
	FILE *out;
	int tty;
	int drawn_lines;
	uint64_t last_draw_ms;
	int cols, rows;         /* the terminal's size, read again on SIGWINCH */
	uv_signal_t winch;
	int winch_ready;
	double run_started;     /* this run's start: elapsed time and ETA */
};

/* driver.c */
/* The driver's two readings of one clock.  live__mono: the loop's monotonic
 * time in seconds (uv_now), for the core (sched_place, submit_time,
 * sched_finished), durations and timers; wall-clock jumps never reach it.
 * live__now: unix time, for stored timestamps only.  Both are read once
 * per loop time (libuv updates it at the start of each loop iteration and
 * after polling), so the store rows and the core calls of one event all
 * carry the same time. */
double live__now(live *d);
double live__mono(live *d);
/* A stored (wall) time on the loop's clock: as long before live__mono. */
double live__mono_of(live *d, double wall);
/* A trial's arrival (submit_time of its segments) at loop time t: later
 * than every earlier trial's, so equal times keep creation order. */
double live__arrival(live *d, double t);
void live__kick(live *d);                       /* fill and place soon */
void live__kick_in(live *d, uint64_t ms);       /* ... in ms milliseconds */
int live__make_dirs(const char *path, rl_err *err); /* mkdir -p with relish's error */
/* The core scheduler, created with the first experiment's policy unless
 * the options chose one (sp NULL: the options'). */
int live__core_create(live *d, const spec *sp, rl_err *err);
live_trial *live__trial_slot(live_exp *x, uint64_t idx, rl_err *err);
void live__fatal(live *d, const rl_err *err);
void live__seg_unlink_free(live *d, live_seg *g); /* drop an ended segment */
void live__exp_stop_segments(live *d, live_exp *x); /* cancel its running, drop its queued */
/* Take x out of the driver and free it (it has no segment left). */
void live__exp_remove(live *d, live_exp *x);
/* Service: every ended experiment none of whose segments is left leaves
 * the driver (its rows are in the store, where every read comes from), so
 * the service's memory follows what runs, not its history. */
void live__exps_retire(live *d);
/* Drop a segment that will not end through the executor (queued, ended,
 * or never started): out of the core and of the list. */
void live__seg_drop(live *d, live_seg *g);
/* A queued segment leaves the queue (placed or removed): its experiment's
 * counts, the admission window's place included. */
void live__seg_unqueued(live_seg *g);
void live__seg_link(live *d, live_seg *g);        /* add a running adopted segment */
void live__check_end(live *d);                  /* end the loop when all is done */
void live__experiment_finish(live *d, live_exp *x); /* mark x done in the store */
/* live_add_experiment with an owner; must_be_new: an existing name is
 * RL_EEXISTS instead of a resume.  *id_out (may be NULL) gets its id. */
int live__add_owned(live *d, spec *sp, const live_owner *ow, int must_be_new,
		   const char *submission, int64_t *id_out, rl_err *err);

/* launch.c: fill the core, place, launch */
void live__place(live *d);

/* experiment.c */
void live__exp_free(live_exp *x);                /* NULL accepted */

/* segment_end.c: metric lines and segment ends */
extern const exec_callbacks live_exec_callbacks; /* what launch gives the executor */
/* The segment ended with r (also used for launch failures): store, core, engine. */
void live__end_segment(live *d, live_seg *g, const exec_result *r);
/* A write to g's log failed with errnum: said once per run, then relish
 * goes on (a full runs folder costs logs, not results). */
void live__log_failed(live *d, const live_seg *g, int errnum);
/* Several objectives and constraints: the side metrics a metric line holds,
 * told to the engine (segment_end.c). */
struct contract_line;
void live__report_side(live_exp *x, live_seg *g, const struct contract_line *line);

/* request.c: scheduler requests and memory profiles */
uint64_t live__hash(uint64_t h, const void *p, size_t n);
/* The request for trial cfg of experiment x (seg_id and times left 0). */
void live__request_build(const live_exp *x, const config *cfg, sched_request *out);
/* Give the core what the store knows: on the first call every stored
 * profile with features (so family estimates use them), then older rows
 * without features when a request of their shape appears, once each. */
void live__profile_seed(live *d, const sched_request *req);
int live__profiles_load(live *d, rl_err *err);
/* Keep in the profiles table what the core knows of g's shape now (after
 * sched_finished: its peak, utilisation, throughputs alone and shared),
 * with the estimate made before the shape was measured; nothing without
 * a measured peak. */
int live__profile_update(live *d, const live_seg *g, uint64_t peak_mib, rl_err *err);
/* What the core learnt beyond shapes (sched_learnt_list): given back to a
 * new core from the store's learnt table (rows it refuses, or a table it
 * cannot read, are said and left out: it then measures again), and the
 * rows changed since the last save written (in the caller's transaction,
 * after each segment end, and when relish stops). */
int live__learnt_load(live *d);
int live__learnt_save(live *d, rl_err *err);

/* The executor that runs experiment x's segments. */
static inline executor *live__exec(const live_exp *x)
{
	return x->ex;
}

/* backend.c: the executor backends (exec/exec.h), by the spec's kind */
/* live_new: open the backends the run plans or the service configures,
 * before the store (a cluster's devices are read here); *devs gets the
 * devices of a backend that has its own (NULL: this machine's). */
int live__backends_open(live *d, device_list **devs, rl_err *err);
/* live_new, once the store is open and the runs folder made. */
int live__backends_start(live *d, rl_err *err);
/* live_add_experiment: x's backend (opened now when it is not yet) and
 * the executor of its segments, after the checks of where it may run. */
int live__backend_attach(live *d, live_exp *x, rl_err *err);
/* x is dropped: its executor goes back to its backend. */
void live__backend_detach(live *d, live_exp *x);
void live__backends_sweep(live *d);    /* before the loop runs */
void live__backends_tick(live *d);     /* every tick while not stopping */
void live__backends_shutdown(live *d); /* the loop is to end */
void live__backends_close(live *d);    /* after the loop ran out */
/* What the executor said about running segment g (its on_event). */
void live__seg_event(live *d, live_seg *g, const exec_event *ev);

/* gpu.c: GPU sampling and what a segment's samples add up to */
/* Sample NVML: each running GPU segment's peak memory and SM utilisation
 * (by process group), and which segments share a device. */
void live__gpu_sample(live *d);
/* Segments that wait for memory other processes hold: an event and a
 * line when a wait begins, the trial failed when it passes
 * sharing.foreign_wait (driver.c, after each placement pass). */
void live__foreign_waits(live *d);
/* Mean SM utilisation of g's samples (percent), -1 when none. */
double live__seg_mean_util(const live_seg *g);
/* Store g's mean utilisation in its segment row (nothing when unknown). */
int live__gpu_record(live *d, const live_seg *g, rl_err *err);

/* explain.c: telling the user what went wrong, in words */
/* `relish logs N` (with --db when not the default) for trial store id. */
void live__logs_command(const live *d, int64_t trial_id, char *buf, size_t n);
/* A metric, BAD or NEAR line of running segment g: remember the metric
 * names; warn once per trial about a line that missed the format. */
void live__explain_line(live *d, live_seg *g, const contract_line *l);
/* A copy of r with more words when g failed: the PATH rule for a program
 * that could not be started, else the last meaningful line of its log
 * ("ValueError: ..."); 1 when *out was filled, 0 when r says enough. */
int live__explain_result(const live *d, const live_seg *g, const exec_result *r,
			exec_result *out);
/* The objective was missing: append what the segment did print to reason
 * (engine_decision.reason, n bytes): "; it reported: accuracy, loss". */
void live__explain_missing(const live_seg *g, char *reason, size_t n);
/* How many of x's trials failed (0: buf is ""), and the most common way in
 * words: "all the same way: \"exit code 1: ValueError: ...\" (trial 3:
 * relish logs 3)" or "most common (20 of them): ...". */
size_t live__failure_summary(const live *d, const live_exp *x, char *buf, size_t n);
/* service.c */
/* Create the folders of a segment of x: trial_dir for its logs (relish's),
 * ckpt inside it (the owner's when trials run as the owner), and the log
 * file itself, owned by the owner too; relish keeps writing it. */
int live__segment_dirs(live *d, const live_exp *x, const char *trial_dir, const char *ckpt,
		      const char *log_path, rl_err *err);
/* The environment a trial of ow starts from when it runs as ow: PATH,
 * LANG, LC_ALL, TZ from relish's, HOME, USER, LOGNAME, SHELL from the
 * password database; nothing else of relish's (its HOME, tokens, ...).
 * NULL-terminated, malloc'd (contract_strv_free). */
char **live__owner_env(const live_owner *ow);
/* The owner of the process itself (relish run). */
void live__owner_self(live_owner *out);
/* The core's user id of uid (service mode: uid + 1, so that 0 stays the
 * core's default user), and the share and limits the service set for it. */
uint32_t live__core_user(const live *d, uid_t uid);
/* A service's start: each user's service before it (the store's ended
 * segments) given to the core, so the fair order carries across restarts
 * as its half-life says. */
int live__service_usage_load(live *d, rl_err *err);
void live__user_apply(live *d, uid_t uid);

/* space.c: a service's experiments paused for want of space */
/* err is a failure for want of space and the driver is a service's. */
int live__no_space(const live *d, const rl_err *err);
/* A store write for experiment x failed with err: x pauses when it was for
 * want of space (a service), else the driver stops (live__fatal).  x may
 * be NULL (no experiment: live__fatal). */
void live__store_failed(live *d, live_exp *x, const rl_err *err);
/* Pause x (err says why): its segments stop, nothing more of it is
 * written, and the tick moves it to d->held once none is left. */
void live__exp_suspend(live *d, live_exp *x, const rl_err *err);
/* Every tick: paused experiments whose segments have stopped leave the
 * driver; held ones are resumed from the store once there is space. */
void live__space_tick(live *d);
/* live_cancel of a held experiment: 1 cancelled, 0 not held, < 0 error. */
int live__held_cancel(live *d, int64_t id, const char *who, rl_err *err);

/* recover.c */
int live__resume(live *d, live_exp *x, const store_experiment *se, rl_err *err);

/* progress.c */
void live__progress_segment(live *d, const live_seg *g, const char *outcome,
			   uint64_t peak_mib, const char *why);
void live__progress_line(live *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void live__progress_draw(live *d, int force);
void live__progress_clear(live *d);
/* Start of the loop: the clock for elapsed and ETA, and on a terminal the
 * SIGWINCH handler that follows resizes; end: close that handler. */
void live__progress_begin(live *d);
void live__progress_end(live *d);
void live__sample_rss(live *d);                 /* each running segment's RSS now */

#endif
