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

/* Where the core placed a segment, as the driver hands it to the executor
 * of its experiment: a backend that places on devices of its own (a
 * cluster's nodes) turns it into what it asks its scheduler for
 * (exec_cluster_request); executors on this machine take the placement
 * from the environment and limits the driver built. */
typedef struct exec_placement {
	int dev;                     /* the first device: its index in the driver's list */
	int n_dev;                   /* devices (> 1: a gang) */
	uint64_t mem_mib;            /* the memory reservation on each */
	int whole;                   /* the core gave it its devices whole: nothing runs
					beside it (policy or basis exclusive, a gang,
					a reservation of the whole device) */
	int seq;                     /* the segment's number in its trial */
	const spec *sp;              /* its experiment's spec */
} exec_placement;

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
	const exec_placement *placed; /* where the core placed it (the driver's
					 launches; NULL in an executor's own tests) */
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
	seg_outcome outcome;
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
	char reason[512];            /* human words: "exit code 1", "killed by SIGSEGV" */
	int over_reservation;        /* OOM: stopped at a limit relish set from its
					reservation (the process executor's RSS
					limit, a container's --memory), not because
					its device or the machine ran out */
	int reason_names_limit;      /* OOM: reason itself names the limit that ended it
					(a container's --memory): shown instead of
					oom_marker */
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
	const char *device;          /* STARTED: the uuid of the device it runs on, as the
					backend named its devices; NULL: not known */
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

/* A segment's log is cut here by default (exec_options.log_max_bytes). */
#define EXEC_LOG_MAX (64ull << 20)

typedef struct exec_options {
	double kill_grace_s;         /* SIGTERM, then SIGKILL after this; default 5 */
	double sample_interval_s;    /* RSS sampling; default 0.2 */
	double memory_margin;        /* kill when RSS > limit * (1 + margin); default 0.1 */
	uint64_t log_max_bytes;      /* per segment log; default EXEC_LOG_MAX */
	double idle_timeout_s;       /* parked processes stopped after; default 300 */
	size_t max_idle;             /* parked processes kept at most; default 8 */
	exec_confine confine;        /* default AUTO */
	int cpu_limit;               /* process trials: es->cpus as a kernel CPU
					limit where a cpu controller serves (relish
					serve); default 0 */
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

/* "relish.owner" value (containers' label, Slurm jobs' comment) for a
 * state database path: 16 hex digits of a hash of its absolute path
 * (realpath when it exists), so that a restarted relish tells what it left
 * from everyone else's.  buf holds >= 17 bytes. */
void exec_owner_id(const char *store_path, char *buf, size_t n);

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

/* ---- backends: an executor's whole life cycle ------------------------------ */

/*
 * A backend is what runs one kind of executor (trial.executor) for the live
 * driver, from start-up to exit: its devices when they are its own (a Slurm
 * partition's nodes), what an earlier relish left (reconcile: adopt what
 * still runs, stop the rest), each experiment's executor, what a
 * placement asks of it, what it refreshes on the loop, a service's
 * reload.  The driver calls these and names no backend; adding one is a
 * folder with its ops and a row of exec_backends (backends.c).  The model
 * is Slurm's select plugins (node_init, job_test, job_begin, reconfigure):
 * a generic front end over a table of implementations.
 *
 * Order of calls: open (before the store: checks that need no file, reads a
 * cluster), devices (once, own-device backends), start (the loop and the
 * runs folder exist), then per experiment attach and, after a restart,
 * adoptable / adopt / lose for each segment the store says is running;
 * sweep once before the loop runs; tick on every driver tick; suspect after
 * a segment was lost; shutdown when the loop is to end; close after the
 * loop has run out.  All on the loop's thread.
 */
struct device_list;

/* What the driver lends a backend: it lives as long as the driver, and its
 * fields may be read at any call (devs is set once the devices are known). */
typedef struct exec_host {
	uv_loop_t *loop;
	const char *owner;           /* exec_owner_id of the state database */
	const char *runs_dir;        /* logs and checkpoints (absolute from start on) */
	int service;                 /* relish serve: trials run as their submitters;
					what an earlier service left is every user's */
	const char *mps_dir;         /* a running MPS daemon's pipe folder, or NULL */
	const struct device_list *devs; /* the devices the core places on */
	void *ud;
	/* A line for people: the progress display or the service's log. */
	void (*say)(void *ud, const char *line);
	/* At start-up, before anything runs: a notice on the driver's output
	 * (not shown with --quiet). */
	void (*notice)(void *ud, const char *line);
	/* Take device dev out of placement (usable 0: nothing new goes there)
	 * or give it back (usable 1). */
	void (*usable)(void *ud, int dev, int usable);
} exec_host;

/* An experiment joining a backend: borrowed for as long as it stays
 * attached. */
typedef struct exec_experiment {
	const spec *sp;
	const char *dir;             /* its folder under the runs folder */
	const exec_user *run_as;     /* its trials' user (relish serve); NULL: relish's own */
} exec_experiment;

/* A segment the store says was running when an earlier relish stopped. */
typedef struct exec_found {
	exec_ident id;               /* as recorded: pid, start time, handle ("" none) */
	const char *experiment;      /* its experiment's name */
	int64_t trial;               /* its trial's store id (named t<id>) */
	int seq;                     /* its number in the trial */
} exec_found;

typedef struct exec_backend exec_backend;

typedef struct exec_backend_ops {
	const char *name;            /* trial.executor's word: "process", "slurm", ... */
	const char *title;           /* for people: "Slurm" */
	const char *units;           /* what a segment runs as, plural: "Slurm jobs" */
	/* Trials start from the contract's variables and the spec's env
	 * only, not relish's environment (a container's image is another
	 * system: the host's PATH or HOME describe the host). */
	int clean_env;
	/* Blocking, before the store is opened: nothing may be created yet.
	 * settings: the backend's own type from a service's config (the
	 * slurm backend's slurm_site_config), or NULL; plan: the specs of this
	 * kind a `relish run` will add (what the run as a whole asks, such as
	 * one Slurm partition, is settled here).  *out is the driver's. */
	int (*open)(const exec_host *host, const void *settings, spec *const *plan, size_t n_plan,
		    exec_backend **out, rl_err *err);
	/* Optional: the backend's own devices (read at open); *out is the
	 * driver's (device_list_free).  A backend without it runs on this
	 * machine's devices. */
	int (*devices)(exec_backend *b, struct device_list **out, rl_err *err);
	/* The store is open, the runs folder made: executors on the loop. */
	int (*start)(exec_backend *b, rl_err *err);
	/* Experiment xp will run here.  RL_ESPEC when it cannot (another
	 * partition than the run's); the first experiment of a kind also
	 * lists what an earlier relish left on this database.  *run is the
	 * executor of its segments, the backend's until detach. */
	int (*attach)(exec_backend *b, const exec_experiment *xp, executor **run, rl_err *err);
	/* Optional: xp leaves (its segments have ended). */
	void (*detach)(exec_backend *b, executor *run);
	/* Optional (NULL: nothing is ever adopted): after a restart, 1 when
	 * segment f, still running somewhere, can be watched again by run. */
	int (*adoptable)(exec_backend *b, executor *run, const exec_found *f);
	/* Watch f again: its output from the start (metric lines the store
	 * holds come again), its end as for a launch.  es gives mode, log_path,
	 * timeout_s, memory_limit_mib and run_as; cb, ud and *out as for
	 * launch.  said (n bytes) gets what happened, for people: "its
	 * container relish-x was still running and was adopted".  0, or < 0
	 * with err (the driver then loses it). */
	int (*adopt)(exec_backend *b, executor *run, const exec_found *f, const exec_spec *es,
		     const exec_callbacks *cb, void *ud, exec_segment **out, char *said, size_t n,
		     rl_err *err);
	/* f is not adopted: stop what is left of it (a process whose pid and
	 * start time still match, a container, a job); said gets what became
	 * of it: "its process was gone". */
	void (*lose)(exec_backend *b, executor *run, const exec_found *f, char *said, size_t n);
	/* Optional: before the loop runs, stop what an earlier relish left
	 * that no segment adopted (and say so). */
	void (*sweep)(exec_backend *b);
	/* Optional: every driver tick while it is not stopping (refreshes). */
	void (*tick)(exec_backend *b);
	/* Optional: a segment on device dev was lost (not its fault): the
	 * backend may stop trusting the device (exec_host.usable). */
	void (*suspect)(exec_backend *b, int dev);
	/* Optional: a service's reload of its settings (as for open). */
	int (*reconfigure)(exec_backend *b, const void *settings, rl_err *err);
	/* The loop is to end: cancel what runs, stop parked processes. */
	void (*shutdown)(exec_backend *b);
	/* Free, once the loop has run out (NULL accepted by exec_backend_close). */
	void (*close)(exec_backend *b);
} exec_backend_ops;

struct exec_backend {
	const exec_backend_ops *ops;
	/* What it places on, for people, set by open: "Slurm partition gpu";
	 * "" when it runs on this machine's devices. */
	char where[96];
};

/* One row per executor kind: the table the driver looks a spec's
 * trial.executor up in. */
typedef struct exec_backend_row {
	executor_kind kind;
	const exec_backend_ops *ops;
} exec_backend_row;

/* The backends relish has (backends.c); exec_n_backends rows. */
extern const exec_backend_row exec_backends[];
extern const size_t exec_n_backends;

/* The row of kind k in rows (n of them), or NULL. */
const exec_backend_row *exec_backend_find(const exec_backend_row *rows, size_t n, executor_kind k);
void exec_backend_close(exec_backend *b); /* NULL accepted */

#endif
