/*
 * store.h - relish's state: one SQLite database (WAL) holding experiments,
 * trials, segments and their placements, metrics, events, memory profiles
 * and devices.  docs/state.md describes the schema and the recovery model.
 *
 * The live driver writes every state transition through these functions
 * *before* acting on it (record "segment 7 runs on gpu0 with 6 GiB", then
 * fork), so a relish killed at any instant restarts from the database: rows
 * of finished work are there, and segments left in state "running" carry the
 * pid and the kernel start time of their process, which is how recovery tells
 * its own child from an unrelated process that reused the pid.  The read
 * commands (relish status/trials/best/logs/export) use the query functions.
 *
 * Conventions:
 *  - every function returns 0 (or a count) on success, a negative RL_E* code
 *    on failure with err filled (RL_ESTORE for SQLite errors, RL_ENOTFOUND
 *    for a missing row, RL_EEXISTS for a duplicate name);
 *  - each write is one transaction; store_begin/store_commit group several
 *    writes into one (writes inside a group nest as savepoints, so a failing
 *    call undoes only its own part; the caller then decides to commit or
 *    store_rollback the whole group);
 *  - ids are SQLite rowids (int64 > 0); times are unix seconds as double;
 *    a double that is NAN stands for SQL NULL (unknown), both ways;
 *  - strings passed in are copied (by SQLite); strings in returned structs
 *    are malloc'd, owned by the caller and freed by the matching *_fini or
 *    *_free function.  Out-parameters are written only on success.
 *
 * One store object belongs to one thread (the driver's event loop); several
 * processes may open the same file (WAL lets readers run beside the writer).
 */
#ifndef RELISH_STORE_H
#define RELISH_STORE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "common/trial_state.h"

typedef struct store store;

/* The schema version this build writes (PRAGMA user_version). */
#define STORE_SCHEMA_VERSION 14
#define STORE_DEFAULT_PATH "relish.db"

enum store_flags {
	/* The file must exist already (read commands): a missing file is
	 * RL_ENOTFOUND and nothing is created. */
	STORE_MUST_EXIST = 1u << 0,
	/* synchronous=FULL instead of NORMAL: survive power loss too, at the
	 * cost of an fsync per commit.  See docs/state.md. */
	STORE_SYNC_FULL = 1u << 1,
	/* Read commands: open read-only and write nothing, not even the
	 * journal mode or a migration, so a finished database on read-only
	 * media can be read.  Implies STORE_MUST_EXIST.  Where SQLite cannot
	 * open the WAL database read-only (no -shm file and no right to create
	 * one), and no -wal file holds unmerged transactions, it is opened as
	 * immutable.  A schema older than STORE_READ_MIN_VERSION is upgraded
	 * when the file is writable, else refused with a clear message. */
	STORE_READONLY = 1u << 2,
	/* The driver (relish run): hold the exclusive driver lock, a flock on
	 * the file PATH-lock beside the database, for the life of the store,
	 * and register a new driver generation (store_driver_check).  Another
	 * process holding it is RL_EINUSE, whose message names the database
	 * and the holder (pid, since when).  Readers never take the lock. */
	STORE_DRIVER = 1u << 3,
};

/* The oldest schema the read queries understand as it is (read-only
 * opens of an older file need an upgrade first). */
#define STORE_READ_MIN_VERSION 2

/* ---- enums, stored as their names (TEXT) so sqlite3 users can read them ---- */

typedef enum exp_status {
	EXP_RUNNING, EXP_DONE, EXP_CANCELLED, EXP_FAILED, EXP__COUNT
} exp_status;

/* Trial states: the engine's enum (common/trial_state.h), so a driver that
 * includes both headers sees one TRIAL_PENDING. */
typedef trial_state trial_status;
#define TRIAL__COUNT TRIAL_N_STATES

/* Segment state.  The first two are the lifecycle; the rest are outcomes of
 * a finished segment and use the same names as seg_outcome, but for
 * SEG_OVER_RESERVATION (schema 11): the outcome SEG_OUT_OOM of a segment
 * relish stopped at the limit it set from its reservation (the process
 * executor's RSS limit, a container's --memory), with memory to spare on
 * the device; SEG_OOM is the device (or the trial's own words) out of
 * memory.  The memory policy treats both alike (raised, then alone). */
typedef enum seg_status {
	SEG_PLANNED, SEG_RUNNING,
	SEG_COMPLETED, SEG_FAILED, SEG_SIGNALED, SEG_OOM, SEG_TIMEOUT,
	SEG_CANCELLED, SEG_LOST, SEG_OVER_RESERVATION,
	SEG__COUNT
} seg_status;

/* err is a failure for want of space (the database's file system full or
 * over quota, SQLITE_FULL; also RL_EIO with errno ENOSPC or EDQUOT from a
 * folder): a service pauses what it concerns instead of stopping. */
int store_err_no_space(const rl_err *err);
const char *exp_status_name(exp_status s);
const char *trial_status_name(trial_status s);
const char *seg_status_name(seg_status s);
/* Name -> enum; 0 on success, RL_EINVAL (err filled) for an unknown name. */
int exp_status_from_name(const char *name, exp_status *out, rl_err *err);
int trial_status_from_name(const char *name, trial_status *out, rl_err *err);
int seg_status_from_name(const char *name, seg_status *out, rl_err *err);

/* ---- rows ---- */

typedef struct store_experiment {
	int64_t id;
	char *name;             /* unique */
	char *spec_text;        /* the spec as given (or normalised), may be NULL */
	char *spec_path;        /* may be NULL */
	exp_status status;
	double created_at;
	double finished_at;     /* NAN while running */
	char *objective_metric; /* "accuracy" */
	char *mode;             /* "max" or "min" */
	/* Schema 4: the user it belongs to (relish serve runs its trials as
	 * them).  owner_uid -1 and owner NULL when unknown. */
	int64_t owner_uid;
	char *owner;
	/* relish serve: the submission as JSON ({"spec", "name", "dir",
	 * "format"}), to parse the spec again on restart; NULL otherwise. */
	char *submission;
	/* Schema 5: how many times its trials and events were written (read
	 * only; triggers count): equal counts, equal summaries.  -1 when the
	 * database is older (read-only opens). */
	int64_t changes;
	/* search.max_trials of the stored spec (read only), 0 unknown. */
	int64_t planned;
} store_experiment;

typedef struct store_metric {
	int64_t trial_id;
	int64_t segment_id;     /* 0 = none */
	double resource;        /* the resource count the value was reported at */
	char *name;             /* owned in results; only read on insert */
	double value;
	double at;
} store_metric;

typedef struct store_trial {
	int64_t id;
	int64_t experiment_id;
	int idx;                /* 0, 1, 2 ... within its experiment */
	char *params_json;      /* {"lr":0.01,...} */
	trial_status status;
	double resource_done;   /* highest resource finished (checkpointed) */
	double objective;       /* latest objective value, NAN if none yet */
	double objective_resource; /* resource it was reported at, NAN if none */
	char *error;            /* last error, may be NULL */
	double created_at, updated_at;
	/* Filled by store_trial_list (summaries over segments): */
	int n_segments;
	int n_oom;
	char *last_error;       /* message of its latest segment that did not succeed,
				 * unless a later one completed; else NULL */
	char *last_oom;         /* message of its latest out-of-memory segment, or NULL */
	/* Its latest segment's reservation: basis ("family", ...), the
	 * estimated peak, the measured peak (-1 unknown) and mean GPU
	 * utilisation (NAN unknown). */
	char *last_basis;
	int64_t last_est_mib, last_peak_mib;
	double last_util;
	/* Filled only with STORE_LIST_METRICS: the metric history in report order. */
	store_metric *metrics;
	size_t n_metrics;
} store_trial;

/* Where a segment runs: written when it is placed, before it is started. */
typedef struct store_placement {
	const char *device;     /* device name or uuid, e.g. "gpu0", "host" */
	int64_t mem_reserved_mib;
	double compute_share;   /* GPU percent or CPUs */
	const char *basis;      /* "profile", "hint", ... (sched_basis_name) */
	const char *log_path;   /* where the segment's output goes, may be NULL */
} store_placement;

/* How a segment ended. */
typedef struct store_segment_end {
	seg_status status;      /* SEG_COMPLETED ... SEG_LOST */
	int exit_code;          /* -1 unknown / killed by a signal */
	int signal;             /* 0 none */
	int64_t peak_mem_mib;   /* measured peak, -1 unknown */
	double ended_at;
	const char *message;    /* may be NULL: "CUDA out of memory ..." */
} store_segment_end;

typedef struct store_segment {
	int64_t id;
	int64_t trial_id;
	int seq;                /* 0, 1, 2 ... within the trial */
	double resource_from, resource_to;
	seg_status status;
	int exit_code;          /* -1 unknown */
	int signal;
	char *device;           /* NULL until placed */
	int64_t mem_reserved_mib; /* -1 until placed */
	double compute_share;   /* NAN until placed */
	char *basis;
	pid_t pid;              /* 0 until started */
	uint64_t pid_start_time; /* /proc/PID/stat field 22 (clock ticks since boot) */
	char *handle;           /* what its executor knows it by: a container's
				   name, a Slurm job id; NULL for plain processes */
	double started_at, ended_at; /* NAN when unknown */
	int64_t peak_mem_mib;   /* -1 unknown */
	int64_t est_mem_mib;    /* the estimate at planning time, -1 unknown */
	double mean_util;       /* mean GPU SM utilisation, percent; NAN unknown */
	char *log_path;
	char *message;
} store_segment;

typedef struct store_event {
	int64_t id;
	double at;
	int64_t experiment_id, trial_id, segment_id; /* 0 = none */
	char *kind;             /* "trial.started", "segment.oom", ... */
	char *message;
} store_event;

/* What was measured about a trial shape (same command and memory params). */
typedef struct store_profile {
	char *shape;            /* key: shape hash as text */
	char *family;           /* command hash as text, may be NULL */
	int n;                  /* samples behind the figures */
	int64_t peak_mem_mib;
	double mean_util;       /* percent of one device, NAN unknown */
	int64_t est_mem_mib;    /* what was reserved/estimated before measuring, -1 none */
	double est_error;       /* (estimate - peak) / peak, NAN unknown */
	double throughput;      /* resource units per second alone, NAN unknown */
	double updated_at;
	/* Schema 2 (NULL / NAN when unknown): */
	char *params;           /* JSON object: the shape's parameter values */
	char *features;         /* JSON array: its numeric features (family model) */
	char *est_basis;        /* basis of est_mem_mib ("family", "profile", ...) */
	double thr_shared;      /* resource units per second beside others, NAN unknown */
	/* Schema 13: */
	int64_t uid;            /* the owner of the experiment that wrote it last, -1 unknown */
} store_profile;

typedef struct store_device {
	int64_t id;
	char *name;
	char *uuid;             /* unique key */
	int is_gpu;
	int64_t mem_total_mib;
	double compute_total;   /* 100 for a GPU, CPUs for the host */
} store_device;

/* ---- open, close, transactions ---- */

/*
 * Open (creating unless STORE_MUST_EXIST) the database at path, set WAL,
 * synchronous, busy_timeout (5 s) and foreign keys, and apply pending
 * migrations, each in its own transaction.  A database written by a newer
 * relish (user_version > STORE_SCHEMA_VERSION) is refused with RL_ESTORE.
 * STORE_READONLY opens for reading only (nothing of the above is written);
 * STORE_DRIVER takes the driver lock first (RL_EINUSE when held).
 * *out is a new store, closed with store_close (which drops the lock).
 */
int store_open(const char *path, unsigned flags, store **out, rl_err *err);
void store_close(store *s);          /* accepts NULL; rolls back an open group */
int store_schema_version(store *s);  /* user_version as read, or -1 */
/* A consistent copy of the database into the new file dest (SQLite's
 * online backup: the database as of one moment, while others write), all
 * or nothing; *pages (may be NULL) gets its size in pages.  RL_EEXISTS
 * when dest exists, RL_IO when it cannot be written, RL_ESTORE. */
int store_backup(store *s, const char *dest, size_t *pages, rl_err *err);
const char *store_path(const store *s);

/* Group writes into one transaction (BEGIN IMMEDIATE).  Groups do not nest:
 * a second store_begin is RL_EINVAL.  store_rollback accepts "no group". */
int store_begin(store *s, rl_err *err);
int store_commit(store *s, rl_err *err);
void store_rollback(store *s);

/*
 * Driver ownership (STORE_DRIVER).  The lock keeps a second driver out;
 * this is the defence behind it, for when the lock is bypassed (its file
 * removed by hand, a file system without flock): 0 while s's generation is
 * the database's latest, RL_EINUSE naming the newer driver (pid, since
 * when) once another one has opened the database as driver.  A driver that
 * gets RL_EINUSE must stop writing: the other one owns the experiments now.
 * Every write transaction of a driver store makes this check under the
 * write lock and fails with RL_EINUSE once another driver registered, so
 * a driver that was taken over cannot write anything more.
 */
int store_driver_check(store *s, rl_err *err);
/* This store's driver generation (> 0 with STORE_DRIVER, else 0). */
int64_t store_driver_id(const store *s);

/* Run PRAGMA integrity_check; 0 when "ok", RL_ESTORE with the report else. */
int store_check(store *s, rl_err *err);

/* ---- experiments (store_experiment.c) ---- */

/* Insert an experiment in state running; reads name, spec_text, spec_path,
 * created_at, objective_metric, mode, owner and owner_uid (both unknown when
 * owner is NULL) and submission from e.  RL_EEXISTS for a name the same
 * owner has already (names are unique per owner). */
int store_experiment_create(store *s, const store_experiment *e, int64_t *id, rl_err *err);
int store_experiment_get(store *s, int64_t id, store_experiment *out, rl_err *err);
/*
 * Names are unique per owner (schema 7), not in the file.  find: the
 * experiment a reader means by name: owner's when owner is not NULL (an
 * owner's name: "alice/digits"), else uid's own (uid < 0: nobody's), else
 * the only one so named; RL_EINVAL naming their owners and ids when
 * several are and none is uid's; RL_ENOTFOUND when none is.
 */
int store_experiment_find(store *s, const char *name, const char *owner, int64_t uid,
			  store_experiment *out, rl_err *err);
/* The driver's lookup: owner_uid's experiment named name, or one written
 * before owners were kept (no owner); RL_ENOTFOUND else. */
int store_experiment_find_owned(store *s, const char *name, int64_t owner_uid,
				store_experiment *out, rl_err *err);
/* All experiments, oldest first.  Free with store_experiments_free. */
int store_experiment_list(store *s, store_experiment **out, size_t *n, rl_err *err);
/* The same without spec_text and submission (NULL): what a status shows. */
int store_experiment_list_brief(store *s, store_experiment **out, size_t *n, rl_err *err);
/* A page of experiments, by id: those above after (0: from the first),
 * with status status (-1: any), owner owner (NULL: any) and created at or
 * after since (NAN: any), at most limit (0: all); brief leaves spec_text
 * and submission out; desc: newest first, those below after (0: from the
 * last).  The next page is after the last id returned. */
typedef struct store_exp_filter {
	int64_t after;
	size_t limit;
	int status;
	const char *owner;
	double since;
	int brief;
	int desc;
} store_exp_filter;
#define STORE_EXP_FILTER_ALL ((store_exp_filter){.status = -1, .since = NAN})
int store_experiment_page(store *s, const store_exp_filter *f, store_experiment **out,
			  size_t *n, rl_err *err);
/* finished_at: NAN keeps it NULL (e.g. back to running on resume).  An
 * experiment that ends unfinished (cancelled, failed) ends its unfinished
 * trials (pending, running, paused) as cancelled in the same transaction,
 * so no trial of an ended experiment reads as running; one that runs
 * again (resumed) takes its cancelled trials back as pending, to be re-run
 * from their last boundary. */
int store_experiment_set_status(store *s, int64_t id, exp_status st, double finished_at,
				rl_err *err);
/* Delete an experiment with its trials, segments, metrics and events (one
 * transaction); measured profiles stay.  RL_ENOTFOUND for an unknown id.
 * Outside a group the freed pages then leave the file (a database this
 * relish created is auto_vacuum=INCREMENTAL), so it shrinks. */
int store_experiment_delete(store *s, int64_t id, rl_err *err);
void store_experiment_fini(store_experiment *e);
void store_experiments_free(store_experiment *v, size_t n);

/* ---- trials (store_trial.c) ---- */

int store_trial_insert(store *s, int64_t experiment_id, int idx, const char *params_json,
		       double now, int64_t *id, rl_err *err);
/* Set the status and the last error (NULL clears it). */
int store_trial_set_status(store *s, int64_t id, trial_status st, const char *error,
			   double now, rl_err *err);
/* Record progress: resource finished and latest objective (NAN = unchanged). */
int store_trial_set_progress(store *s, int64_t id, double resource_done, double objective,
			     double objective_resource, double now, rl_err *err);
int store_trial_get(store *s, int64_t id, store_trial *out, rl_err *err);

enum { STORE_LIST_METRICS = 1 };
/* Trials of an experiment by idx, with segment summaries; with
 * STORE_LIST_METRICS also each trial's metric history (engine restore).
 * Free with store_trials_free. */
int store_trial_list(store *s, int64_t experiment_id, unsigned flags, store_trial **out,
		     size_t *n, rl_err *err);
/* How many trials of an experiment are in each state (counts[state]);
 * experiment_id 0: of every experiment (one scan, for a scrape). */
int store_trial_counts(store *s, int64_t experiment_id, int counts[TRIAL__COUNT], rl_err *err);
/* The trials of an experiment whose row changed at or after since
 * (updated_at >= since), by idx: incremental polling (the API's ?after=). */
int store_trial_list_since(store *s, int64_t experiment_id, double since, store_trial **out,
			   size_t *n, rl_err *err);
/*
 * The best trial of an experiment: the best objective (by the experiment's
 * mode) among completed trials, or among all trials with an objective when
 * none has completed.  RL_ENOTFOUND when no trial has an objective.
 */
int store_trial_best(store *s, int64_t experiment_id, store_trial *out, rl_err *err);
void store_trial_fini(store_trial *t);
void store_trials_free(store_trial *v, size_t n);
/*
 * What a status line shows of an experiment's trials: how many are in each
 * state and its best trial (store_trial_best's choice) as id, idx, status,
 * objective and objective_resource.  best_id 0: no trial has an objective.
 */
typedef struct store_exp_stats {
	int64_t experiment_id;
	int count[TRIAL__COUNT];
	int64_t best_id;
	int best_idx;
	trial_status best_status;
	double best_objective, best_resource;
} store_exp_stats;
/* The stats of one experiment (experiment_id > 0: *n is 0 or 1) or of every
 * experiment (0), by experiment id, in two statements whatever their
 * number (no segment is read).  Free with free(). */
int store_trial_stats(store *s, int64_t experiment_id, store_exp_stats **out, size_t *n,
		      rl_err *err);
/* The same for the experiments with ids in [lo, hi] (lo == hi: that one):
 * a page of a long history reads its own rows, not every experiment's. */
int store_trial_stats_range(store *s, int64_t lo, int64_t hi, store_exp_stats **out, size_t *n,
			    rl_err *err);

/* ---- segments (store_segment.c) ---- */

/* A planned segment [from, to] of a trial; est_mem_mib -1 = unknown. */
int store_segment_insert(store *s, int64_t trial_id, int seq, double from, double to,
			 int64_t est_mem_mib, int64_t *id, rl_err *err);
/* planned -> running: its placement, committed before the process starts. */
int store_segment_place(store *s, int64_t id, const store_placement *pl, double now,
			rl_err *err);
/* The process started: pid, its start time, its executor's handle (a
 * container's name, a Slurm job id; may be NULL). */
int store_segment_set_pid(store *s, int64_t id, pid_t pid, uint64_t pid_start_time,
			  const char *handle, rl_err *err);
/* A running segment moved: the device it really runs on (a cluster's
 * scheduler chose another GPU of the node than relish's placement). */
int store_segment_set_device(store *s, int64_t id, const char *device, rl_err *err);
/* running -> an outcome.  Finishing a segment that is not running (twice,
 * or never placed) is RL_EINVAL: the driver's state machine is wrong. */
int store_segment_finish(store *s, int64_t id, const store_segment_end *end, rl_err *err);
int store_segment_get(store *s, int64_t id, store_segment *out, rl_err *err);
/* A segment's mean GPU utilisation (percent), measured while it ran. */
int store_segment_set_util(store *s, int64_t id, double mean_util, rl_err *err);
/* Segments of a trial by seq. */
int store_segment_list(store *s, int64_t trial_id, store_segment **out, size_t *n,
		       rl_err *err);
/* Recovery: segments in state running (experiment_id 0 = all experiments). */
int store_segment_list_running(store *s, int64_t experiment_id, store_segment **out,
			       size_t *n, rl_err *err);
/* All segments of an experiment by trial idx then seq (export). */
int store_segment_list_experiment(store *s, int64_t experiment_id, store_segment **out,
				  size_t *n, rl_err *err);
/* At most limit of them (>= 1), from the offset-th on; *more is set when
 * others follow.  A read of one page holds one page. */
int store_segment_page_experiment(store *s, int64_t experiment_id, size_t offset, size_t limit,
				  store_segment **out, size_t *n, int *more, rl_err *err);
/* The devices timeline (the API's GET /timeline): placed segments whose
 * run overlaps [from, to] (running ones count as running until now), the
 * most recent limit of them by start (0: all), oldest first; with each
 * its trial's experiment id ((*experiment_ids)[i], free()).  *total gets
 * how many overlap, limit or not. */
int store_segment_list_between(store *s, double from, double to, size_t limit,
			       store_segment **out, int64_t **experiment_ids, size_t *n,
			       size_t *total, rl_err *err);
/* How many segments are in each state, all experiments (counts[status]). */
int store_segment_counts(store *s, size_t counts[SEG__COUNT], rl_err *err);
/* The service users' segments held: fn(ctx, owner_uid (-1 unknown),
 * started_at, ended_at) once per segment that ran and ended at or after
 * since (unix seconds; -INFINITY: all).  Returns how many (capped at
 * INT32_MAX), or < 0. */
typedef void (*store_service_fn)(void *ctx, int64_t owner_uid, double started_at,
				 double ended_at);
int store_owner_service(store *s, double since, store_service_fn fn, void *ctx, rl_err *err);
void store_segment_fini(store_segment *g);
void store_segments_free(store_segment *v, size_t n);

/* ---- several objectives and constraints (store_objective.c) ---- */

#define STORE_OBJECTIVES_MAX 16 /* as SPEC_OBJECTIVES_MAX */

typedef struct store_objective {
	char *metric;           /* owned in results */
	char *mode;             /* "max" or "min"; owned in results */
} store_objective;

/* Record an experiment's objectives in order (n >= 2; an experiment of one
 * has none here).  Replaces what was there. */
int store_objectives_set(store *s, int64_t experiment_id, const store_objective *o, size_t n,
			 rl_err *err);
/* Its objectives in order: *n 0 (*out NULL) for an experiment of one, and
 * in a database older than schema 10.  Free with store_objectives_free. */
int store_objectives_get(store *s, int64_t experiment_id, store_objective **out, size_t *n,
			 rl_err *err);
void store_objectives_free(store_objective *o, size_t n);

/* A trial's every objective (n <= STORE_OBJECTIVES_MAX, NAN: none) and its
 * constraint violation (0 feasible, > 0 infeasible; NAN: the experiment has
 * no constraint) at its last boundary.  Replaces what was there. */
int store_trial_set_values(store *s, int64_t trial_id, const double *v, size_t n,
			   double violation, rl_err *err);

typedef struct store_trial_values {
	int64_t trial_id;
	int idx;
	size_t n;                        /* objectives recorded */
	double v[STORE_OBJECTIVES_MAX];  /* NAN where none */
	double violation;                /* NAN: not recorded */
} store_trial_values;
/* Every trial of an experiment with values recorded, by idx (none in a
 * database older than schema 10).  Free with free(). */
int store_trial_values_list(store *s, int64_t experiment_id, store_trial_values **out,
			    size_t *n, rl_err *err);

/* ---- metrics and events (store_metric.c) ---- */

/* Insert n metrics in one transaction (all or none).  A value is stored
 * once per trial, name and resource: one reported again replaces the
 * stored one, unless that belongs to a completed segment (whose values are
 * final); so a re-run supersedes what an interrupted segment reported over
 * the same range, and every read and export sees one value. */
int store_metrics_insert(store *s, const store_metric *m, size_t n, rl_err *err);
/* The same, but only where no value is stored yet (values taken back from
 * a lost segment's log); *added (may be NULL) gets how many were new. */
int store_metrics_insert_missing(store *s, const store_metric *m, size_t n, size_t *added,
				 rl_err *err);
/* A trial's metrics in report order (experiment_id, trial_id 0 = all trials of
 * the experiment).  Free with store_metrics_free. */
int store_metric_list(store *s, int64_t experiment_id, int64_t trial_id, store_metric **out,
		      size_t *n, rl_err *err);
/* At most limit of them (limit 0: no bound), from the offset-th on, only
 * those named name (NULL or "": every name); *more is set when rows are
 * left after them.  A read of one page holds one page in memory, however
 * many rows a trial printed. */
int store_metric_page(store *s, int64_t experiment_id, int64_t trial_id, const char *name,
		      size_t offset, size_t limit, store_metric **out, size_t *n, int *more,
		      rl_err *err);
/* Every value named name of an experiment's trials, by trial, then in
 * report order, handed to fn one at a time (m and its fields only for the
 * call): a read of any length holds one row.  fn returning < 0 (an
 * RL_E* code) stops it with that code.  Returns 0 or < 0. */
int store_metric_each(store *s, int64_t experiment_id, const char *name,
		      int (*fn)(const store_metric *m, void *ctx), void *ctx, rl_err *err);
void store_metrics_free(store_metric *v, size_t n);

/* Ids 0 mean none.  Returns 0; *id (may be NULL) gets the event id. */
int store_event_append(store *s, double at, int64_t experiment_id, int64_t trial_id,
		       int64_t segment_id, const char *kind, const char *message,
		       int64_t *id, rl_err *err);
/* Events with id > after_id (0 = from the start) of an experiment (0 = all),
 * oldest first, at most limit (0 = no limit). */
int store_event_list(store *s, int64_t experiment_id, int64_t after_id, size_t limit,
		     store_event **out, size_t *n, rl_err *err);
void store_events_free(store_event *v, size_t n);
/* The trials waiting for memory that processes relish does not own hold:
 * for each trial of a running experiment (experiment_id, or 0: of every
 * running one), its latest event of kinds segment.waiting, segment.waited
 * (placed) and trial.failed (given up), where that is segment.waiting; by
 * experiment, then event id.  One statement. */
/* The notes that explain experiments to their submitters, what `relish
 * run` prints on its terminal and a service can only store: events of
 * kinds trial.warning (a line that missed the metric format), and
 * experiment.failed and experiment.done (why it stopped, how it ended);
 * of experiment_id (0: of every experiment), by experiment, then id; at
 * most the latest per_exp of each.  By the events_notes index (schema 8;
 * an older database read as it is gives none). */
int store_event_notes(store *s, int64_t experiment_id, size_t per_exp, store_event **out,
		      size_t *n, rl_err *err);
int store_event_waiting(store *s, int64_t experiment_id, store_event **out, size_t *n,
			rl_err *err);
/* Both for the experiments with ids in [lo, hi] (lo == hi: that one). */
int store_event_notes_range(store *s, int64_t lo, int64_t hi, size_t per_exp,
			    store_event **out, size_t *n, rl_err *err);
int store_event_waiting_range(store *s, int64_t lo, int64_t hi, store_event **out, size_t *n,
			      rl_err *err);

/* ---- profiles and devices (store_profile.c) ---- */

/* Insert or replace the profile of p->shape. */
int store_profile_put(store *s, const store_profile *p, rl_err *err);
int store_profile_get(store *s, const char *shape, store_profile *out, rl_err *err);
int store_profile_list(store *s, store_profile **out, size_t *n, rl_err *err);
/* Delete every profile but the keep most recently updated (ties: by
 * shape), in one transaction: a service's trials make a new shape each,
 * so the table would grow for as long as it runs.  keep is shared among
 * the rows' writers (uid; unknown counts as one) as rl_waterfill shares
 * it: each keeps its newest up to its share, so the rounding may leave a
 * few fewer than keep. */
int store_profile_trim(store *s, size_t keep, rl_err *err);
void store_profiles_free(store_profile *v, size_t n);
/* Free a profile's strings (as read by _get) and zero it.  Accepts NULL. */
void store_profile_fini(store_profile *p);

/* ---- what the scheduler learnt beyond shapes (store_learnt.c) ---- */

/* One row of the core's learning (sched_learnt, the live driver converts):
 * kind "pair", "groups", "explored", "hint", "family" or "las"; a and b its keys as
 * 16 hex digits (a bin: its index in a, b 0). */
typedef struct store_learnt {
	char kind[12];
	char a[17], b[17];
	double n, d, d_max, s_min, s_max; /* NAN: none (stored NULL) */
	double updated_at;
} store_learnt;

/* Insert or replace rows (one transaction, or a savepoint in one). */
int store_learnt_put(store *s, const store_learnt *rows, size_t n, rl_err *err);
/* Every row, except that of a kind with more than keep rows only the
 * newest keep (by updated_at) are read, and the older ones deleted (a
 * database written by a version without the table: none). */
int store_learnt_load(store *s, size_t keep, store_learnt **out, size_t *n, rl_err *err);

/* Insert or update the device with d->uuid; *id (may be NULL) gets its id. */
int store_device_put(store *s, const store_device *d, int64_t *id, rl_err *err);
int store_device_list(store *s, store_device **out, size_t *n, rl_err *err);
void store_devices_free(store_device *v, size_t n);

/* Which process a stored pid + start time names: common/procid.h
 * (procid_matches), the one identity check. */

#endif
