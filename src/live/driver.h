/*
 * driver.h - the live driver behind `relish run`: one thread, one libuv
 * loop, running one or more experiments on this machine's devices.
 *
 * It joins the pure pieces to the effectful ones: the experiment engine
 * (search/engine.h) says which segment of which trial to run next; the core
 * scheduler (sched/sched.h) says where, with what memory reservation and
 * compute share; the process executor (exec/exec.h) runs it; telemetry
 * (NVML, /proc) measures it; the store (store/store.h) records every
 * transition before it is acted on, so a relish killed at any instant
 * resumes from the database (recover.c).  docs/architecture.md ("The live
 * driver") walks through the loop.
 */
#ifndef RELISH_LIVE_DRIVER_H
#define RELISH_LIVE_DRIVER_H

#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "spec/spec.h"

typedef struct live live;
struct uv_loop_s;
struct executor;

/*
 * A Slurm cluster as the driver's devices (docs/slurm.md): the nodes of one
 * partition, read with scontrol at live_new and refreshed on the loop;
 * experiments with executor slurm run each segment as one job there.
 * Everything borrowed for live_new only.  relish serve sets this (and
 * default_executor) from its configuration; relish run from the spec.
 */
typedef struct live_slurm_config {
	const char *partition;       /* NULL: the cluster's default partition */
	const char *account, *qos;   /* for specs that name none; NULL: none */
	const char *const *sbatch_args; /* before each spec's own sbatch_args */
	size_t n_sbatch_args;
	uint64_t gpu_memory_mib;     /* GPUs of nodes without a gpumem_<size> feature */
	double poll_interval_s;      /* squeue at most this often; 0: 1 s */
	double refresh_s;            /* scontrol show node this often; 0: 30 s */
	const char *step_program;    /* relish's path on the nodes; NULL: this binary */
} live_slurm_config;

typedef struct live_options {
	const char *db_path;      /* state database; NULL: STORE_DEFAULT_PATH */
	const char *runs_dir;     /* logs and checkpoints; NULL: relish-runs/ next to the db */
	const char *devices_path; /* devices file (devices.h); NULL: discover */
	int policy_set;           /* 1: policy overrides every spec's sharing.policy */
	sharing_policy policy;
	int order_set;            /* 1: order overrides every spec's sharing.order */
	queue_order order;
	int max_concurrent;       /* > 0: overrides search.max_concurrent */
	int quiet;                /* no progress output at all */
	int restart;              /* forget what the store holds of these experiments */
	int progress;             /* 1 live display, 0 plain lines, -1 auto (isatty) */
	FILE *out;                /* progress output; NULL: stderr */
	/* Seams for tests (tests/test_live.c); NULL in relish itself.
	 * executor_new makes the executor of process experiments on the
	 * driver's loop instead of exec_process_new (a stand-in that scripts
	 * segment ends); the driver owns what it returns (exec_free).
	 * wall_clock replaces CLOCK_REALTIME as the source of stored
	 * timestamps (the driver's other clock, for durations and the core,
	 * is the loop's monotonic time either way). */
	int (*executor_new)(struct uv_loop_s *loop, void *ctx, struct executor **out,
			    rl_err *err);
	void *executor_ctx;
	double (*wall_clock)(void *ctx);
	void *wall_clock_ctx;
	/* The executor of specs that do not name one (trial.executor absent):
	 * relish serve's service-wide default.  EXEC_SLURM needs slurm. */
	executor_kind default_executor;
	const live_slurm_config *slurm; /* non-NULL: place on this Slurm cluster */
} live_options;

void live_options_default(live_options *o);

/* Open the store as its driver (STORE_DRIVER: RL_EINUSE when another relish
 * drives it), discover devices, set up the loop, executor and core
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

/* Experiments added, their store ids and names (for printing the best). */
size_t live_experiment_count(const live *d);
int64_t live_experiment_id(const live *d, size_t i);
const char *live_experiment_name(const live *d, size_t i);
/* 1 when experiment i has a trial with an objective value. */
int live_experiment_has_value(const live *d, size_t i);

/* What became of experiment i's trials, in words for the end of a run:
 * "24 of 24 trials failed, all the same way: \"exit code 1: ValueError:
 * ...\" (trial 3: relish logs 3)", or "12 trials, none failed". */
void live_experiment_outcome(const live *d, size_t i, char *buf, size_t n);

const char *live_db_path(const live *d);

/* Peak resident set size of this process in KiB (getrusage). */
long live_max_rss_kib(void);

void live_free(live *d); /* NULL accepted */

#endif
