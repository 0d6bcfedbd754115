/*
 * exec.h - executors: what runs a segment somewhere and tells the live driver
 * how it went.  One ops struct, one implementation per folder:
 * src/process (child processes on this machine, on libuv), src/container
 * (podman and docker, through the process executor) and src/slurm (one
 * Slurm job per segment).
 *
 * An executor lives on the driver's libuv loop and never blocks it.  The
 * driver launches a segment with an exec_spec (command, environment, log
 * file, limits) and gets, on the loop thread:
 *   on_line  for every metric line (and RELISH_DONE) as it is printed, and
 *            for lines that break the format or look like a metric line
 *            that missed it (CONTRACT_BAD, CONTRACT_NEAR; contract.h);
 *   on_end   once, with the classified outcome, the exit status and the
 *            peak memory; the exec_segment handle is invalid after on_end.
 * Warm and worker modes keep processes between segments: a segment whose
 * trial printed RELISH_DONE ends COMPLETED while its process stays alive,
 * parked under the spec's reuse_key; the next launch with the same key
 * writes a run command to that process's stdin instead of starting one.
 * Processes that misbehave (no done line before the timeout, a done line for
 * the wrong resource, a crash) are killed and their segment classified.
 *
 * Ownership: exec_spec and everything it points to is borrowed for the
 * duration of the launch call only (the executor copies what it keeps).
 */
#ifndef RELISH_EXEC_H
#define RELISH_EXEC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "common/err.h"
#include "exec/contract.h"
#include "common/outcome.h"
#include "exec/runas.h"
#include "spec/spec.h"

typedef struct executor executor;
typedef struct exec_segment exec_segment;

/* One segment of one trial: what a warm or worker process is told on stdin. */
typedef struct exec_assignment {
	const char *trial_id;
	const char *params_json;     /* RELISH_PARAMS text (JSON object) */
	double from, to;
	const char *checkpoint_dir;
} exec_assignment;

/* What a cluster executor (slurm.c) asks its scheduler for: the core's
 * placement turned into a request.  NULL for executors on this machine. */
typedef struct exec_cluster_request {
	const char *node;            /* the node the core placed it on; NULL: any */
	int gpus;                    /* whole GPUs (exclusive placements, gangs) */
	int shards;                  /* GPU shards (shared placements); 0: none */
	uint64_t mem_mib;            /* host memory; 0: the cluster's default */
	int seq;                     /* the segment's number in its trial (identity) */
	const char *experiment;      /* identity; NULL: the executor's */
	const char *account, *qos;   /* NULL: the executor's */
	const char *const *pre_args; /* extra scheduler options: the service's, */
	size_t n_pre_args;
	const char *const *args;     /* ... then the experiment's */
	size_t n_args;
} exec_cluster_request;

typedef struct exec_spec {
	trial_mode mode;
	/* warm: the trial id; worker: the shape and device ("shape@dev");
	 * processes with equal keys are interchangeable.  Ignored in oneshot. */
	const char *reuse_key;
	char *const *argv;           /* substituted, NULL-terminated; argv[0] via PATH */
	char *const *envp;           /* from contract_env_build */
	const char *cwd;             /* NULL: relish's own */
	const char *log_path;        /* stdout and stderr interleaved, appended; NULL: none */
	double timeout_s;            /* per segment; 0: none */
	double cpus;                 /* CPU share (already in envp; containers enforce it) */
	uint64_t memory_limit_mib;   /* host memory reservation; 0: not enforced */
	exec_assignment a;           /* the segment (warm/worker stdin command) */
	const exec_cluster_request *cluster; /* cluster executors only; else NULL */
	/* Run as this user instead of relish's own (relish serve runs trials
	 * as their submitter; runas.h); NULL: as relish.  Containers get it
	 * as --user, the engine itself still runs as relish. */
	const exec_user *run_as;
} exec_spec;

/* Whose fault a segment's end was, when it was not the trial's: a kind the
 * driver acts on (docs/containers.md, "Runtime failures"), carried as a
 * field so that no caller reads it out of the reason's words. */
typedef enum exec_fault {
	EXEC_FAULT_NONE = 0,      /* the trial's own ending (outcome says how) */
	EXEC_FAULT_NOT_STARTED,   /* the command could not be started at all
				     (missing program, no permission): the
				     spec's fault, not the trial's */
	EXEC_FAULT_RUNTIME,       /* the container engine or image failed (exit
				     125-127, a missing image, a command the
				     image cannot execute, an engine that
				     could not be run), or the cluster refused
				     the job (sbatch: no such account, ...) */
} exec_fault;

typedef struct exec_result {
	sched_outcome outcome;
	exec_fault fault;            /* not NONE: outcome is FAILED */
	int exited;                  /* 1: exit_code valid; 0: term_signal valid */
	int exit_code;
	int term_signal;
	uint64_t peak_rss_bytes;     /* process group's RSS peak, 0 if never sampled */
	uint64_t peak_gpu_mib;       /* GPU memory peak measured by the executor
					where the segment ran (slurm's step
					wrapper, through NVML on the node); 0:
					none (the driver samples this machine's
					GPUs itself) */
	double duration_s;           /* launch (or assignment) to end */
	double ready_s;              /* spawn to RELISH_READY; < 0 if none */
	int reused;                  /* ran on a warm/worker process already alive */
	size_t metric_lines;
	size_t bad_lines;            /* lines with a RELISH prefix that broke the format */
	const char *oom_marker;      /* static text that made it OOM, or NULL */
	char reason[256];            /* human words: "exit code 1", "killed by SIGSEGV" */
	int log_errno;               /* errno of the first write to the segment's
					log that failed (a full disk), 0 none;
					output goes on being read and parsed */
} exec_result;

/* Cluster executors: a segment's identity became known (SUBMITTED: the job
 * id, ident's handle) or it started somewhere (STARTED: where, which GPUs,
 * how long it queued).  Executors on this machine never send these. */
typedef enum exec_event_kind { EXEC_EV_SUBMITTED, EXEC_EV_STARTED } exec_event_kind;

#define EXEC_MAX_GPUS 16

typedef struct exec_event {
	exec_event_kind kind;
	const char *handle;          /* the job id */
	const char *node;            /* STARTED: the node it runs on */
	int n_gpus;                  /* STARTED: GPU indices on that node, as */
	int gpu[EXEC_MAX_GPUS];      /* the cluster numbers them; 0: none known */
	double queued_s;             /* STARTED: submission to start, seconds */
} exec_event;

typedef struct exec_callbacks {
	void (*on_line)(void *ud, exec_segment *seg, const contract_line *line);
	void (*on_end)(void *ud, exec_segment *seg, const exec_result *r);
	/* Optional (NULL: not wanted). */
	void (*on_event)(void *ud, exec_segment *seg, const exec_event *ev);
} exec_callbacks;

/* How the process executor keeps every descendant of a trial process
 * with it (process/confine.h says how each works). */
typedef enum exec_confine {
	EXEC_CONFINE_AUTO = 0,       /* cgroup2, else cgroup1, else proc */
	EXEC_CONFINE_CGROUP2,        /* a cgroup v2 per trial process */
	EXEC_CONFINE_CGROUP1,        /* a cgroup v1 freezer group per trial process */
	EXEC_CONFINE_PROC,           /* process group + descendants tracked in /proc */
	EXEC_CONFINE_GROUP,          /* the process group alone */
} exec_confine;

/* "auto", "cgroup2", "cgroup1", "proc", "group" (RELISH_CONFINE's words). */
const char *exec_confine_name(exec_confine k);

typedef struct exec_options {
	double kill_grace_s;         /* SIGTERM, then SIGKILL after this; default 5 */
	double sample_interval_s;    /* RSS sampling; default 0.2 */
	double memory_margin;        /* kill when RSS > limit * (1 + margin); default 0.1 */
	uint64_t log_max_bytes;      /* per segment log; default 64 MiB */
	double idle_timeout_s;       /* parked processes stopped after; default 300 */
	size_t max_idle;             /* parked processes kept at most; default 8 */
	exec_confine confine;        /* default AUTO */
} exec_options;

void exec_options_default(exec_options *o);

/* How a running segment is found again after a relish restart. */
typedef struct exec_ident {
	pid_t pid;                   /* process (group leader) or 0 */
	uint64_t start_time;         /* /proc start time of pid */
	char handle[128];            /* container name or job id; "" for processes */
} exec_ident;

typedef struct exec_ops {
	const char *name;
	int (*launch)(executor *ex, const exec_spec *es, const exec_callbacks *cb, void *ud,
		      exec_segment **out, rl_err *err);
	/* Stop a running segment: SIGTERM, SIGKILL after the grace; on_end
	 * follows with CANCELLED.  No-op on a segment already stopping. */
	void (*cancel)(executor *ex, exec_segment *seg);
	int (*ident)(executor *ex, const exec_segment *seg, exec_ident *out);
	/* After a restart: a segment the store says was running.  Returns 1
	 * when adopted (not possible for processes, whose pipes died with the
	 * old relish), 0 when it was stopped or already gone. */
	int (*reclaim)(executor *ex, const exec_ident *id, rl_err *err);
	/* Stop the parked processes with this reuse key (trial finished). */
	void (*release)(executor *ex, const char *reuse_key);
	size_t (*idle_count)(executor *ex);
	/* Optional (NULL: not known): the pids of every process running seg
	 * now, its detached descendants included, at most max of them in out;
	 * their count, or -1.  The driver attributes GPU memory by them. */
	int (*members)(executor *ex, const exec_segment *seg, pid_t *out, size_t max);
	/* Cancel every segment and stop every parked process; the loop runs
	 * until they are gone. */
	void (*shutdown)(executor *ex);
	/* Free: after shutdown and once the loop has no more of its processes.
	 * Closes its handles; run the loop once more before uv_loop_close. */
	void (*destroy)(executor *ex);
} exec_ops;

struct executor {
	const exec_ops *ops;
	void *impl;
};

/* Front ends: ex->ops->x(ex, ...). */
int exec_launch(executor *ex, const exec_spec *es, const exec_callbacks *cb, void *ud,
		exec_segment **out, rl_err *err);
void exec_cancel(executor *ex, exec_segment *seg);
void exec_release(executor *ex, const char *reuse_key);
void exec_shutdown(executor *ex);
void exec_free(executor *ex); /* NULL accepted */

/* ex->ops->members, or -1 when the executor has none. */
int exec_members(executor *ex, const exec_segment *seg, pid_t *out, size_t max);

/* Identity of a running segment (for the store; pid is also the process
 * group for the process executor). */
int exec_ident_of(executor *ex, const exec_segment *seg, exec_ident *out);

#endif
