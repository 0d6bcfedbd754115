/*
 * slurm.h - trial segments as Slurm jobs: the slurm executor (slurm.c), the
 * pure pieces it is made of (slurm_cmd.c: command lines, job identity,
 * parsers of the tools' output, job states as outcomes) and the step
 * wrapper that runs on the compute node (slurm_step.c).  docs/slurm.md is
 * the user's version.
 *
 * relish talks to Slurm through its command-line tools only (sbatch
 * --parsable, squeue, scancel, scontrol), as HyperQueue and submitit do:
 * their output formats are kept across releases, libslurm's C API is not.
 * Every tool runs as a child process on the driver's libuv loop
 * (uv_spawn, output read from a pipe), so the loop never waits on
 * slurmctld.  One squeue call per poll covers every job of the executor,
 * so Slurm sees a bounded request rate whatever the number of jobs.
 *
 * One segment is one job:
 *   sbatch --parsable --job-name=NAME --comment=IDENTITY --output=LOG
 *     --error=LOG --open-mode=append --no-requeue --nodes=1 --ntasks=1
 *     --cpus-per-task=C [--mem=M] [--gres=gpu:N | --gres=shard:N]
 *     [--nodelist=NODE] [--time=MIN] [--partition=P] [--account=A]
 *     [--qos=Q] [extra...] --export=ALL [--chdir=DIR] SCRIPT argv...
 * SCRIPT is a fixed two-line /bin/sh script that execs the step wrapper
 * (`relish slurm-step -- argv...`); the trial's argv and environment reach
 * the trial verbatim (no shell expands them).  The wrapper prints one line
 * when the trial starts (node, GPU indices, time) and one when it ends
 * (exit status, host and GPU memory peaks, time), both starting with
 * SLURM_STEP_PREFIX, so memory is measured on the node where it is used.
 *
 * Identity: the job's name is relish-<experiment>-<trial>-s<seq>, its
 * comment "relish owner=O experiment=E trial=T segment=A-B seq=N", where O
 * is the store's owner id (exec_owner_id), so a restarted relish
 * finds its jobs with one squeue and tells them from everyone else's.
 */
#ifndef RELISH_SLURM_SLURM_H
#define RELISH_SLURM_SLURM_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "exec/exec.h"

/* Lines of the step wrapper in a job's output start with this. */
#define SLURM_STEP_PREFIX "relish-slurm: "

/* Everything borrowed: exec_slurm_new copies what it keeps. */
typedef struct slurm_options {
	/* The tools; NULL: env RELISH_SBATCH, RELISH_SQUEUE, RELISH_SCANCEL,
	 * RELISH_SCONTROL, else the names on PATH. */
	const char *sbatch, *squeue, *scancel, *scontrol;
	const char *partition;        /* NULL: the cluster's default partition */
	const char *account, *qos;    /* NULL: none given */
	const char *const *sbatch_args; /* extra options, verbatim, before the script */
	size_t n_sbatch_args;
	const char *experiment;       /* required */
	const char *owner;            /* required: the store's owner id */
	const char *state_dir;        /* required: the step script is written here */
	const char *step_program;     /* relish's path on the nodes; NULL: this binary */
	double poll_interval_s;       /* squeue at most this often; 0: 1 s */
	uint64_t default_mem_mib;     /* --mem when a segment has no reservation; 0: none */
	const char *jobcomp_path;     /* job-completion file; NULL: none read */
	int use_sacct;                /* the cluster keeps accounting: ask sacct (env
					 RELISH_SACCT, else "sacct") for what squeue forgot */
} slurm_options;

void slurm_options_default(slurm_options *o);

/*
 * The slurm executor on loop.  Writes the step script into o->state_dir
 * (created if missing).  Fails with RL_EINVAL when experiment, owner or
 * state_dir is missing.  Nothing runs before the first launch.
 *
 * In exec_spec: mode must be oneshot (RL_EUNSUPPORTED otherwise); argv
 * and envp go to the job (envp as sbatch's environment, --export=ALL;
 * SLURM_* variables of relish's own allocation are left out, SLURM_CONF
 * kept); cluster gives the node, GPUs or shards, host memory and seq
 * (required); memory_limit_mib is --mem when cluster->mem_mib is 0; cpus
 * becomes --cpus-per-task (rounded up, at least 1); timeout_s --time
 * (whole minutes, rounded up) and relish's own timer, which cancels the
 * job at the timeout exactly; log_path --output/--error (required: it
 * must be on a folder the nodes share); a.trial_id, a.from, a.to and
 * cluster->seq the identity; cwd --chdir.  run_as (relish serve: the
 * submitter): sbatch and the job's scancel run as that user through
 * run_as->helper (relish-runas, in cwd), so the job is theirs in Slurm
 * and runs as them on the node; squeue lists the jobs of every such user
 * (-u UID,...).
 *
 * Outcomes (slurm_job_outcome): COMPLETED; FAILED with the exit code, or
 * SIGNALED; TIMEOUT (Slurm's limit, or relish's timer); OOM
 * (OUT_OF_MEMORY, or an out-of-memory message in the output); CANCELLED
 * (relish's cancel, or anyone's scancel); LOST for NODE_FAIL, BOOT_FAIL
 * and PREEMPTED (the segment is not at fault: re-run elsewhere).  sbatch
 * refusing the job (a partition that does not exist, an account it
 * cannot use) ends the segment FAILED with fault RUNTIME and sbatch's
 * words as the reason.  exec_result.peak_rss_bytes is the wrapper's
 * measured host peak; duration_s runs from the job's start.
 * ident fills handle with the job id ("" until sbatch answered; the
 * on_event callback says when it is known) and pid 0; reclaim cancels the
 * job named by handle (scancel, on the loop) and returns 0.
 */
int exec_slurm_new(uv_loop_t *loop, const slurm_options *o, executor **out, rl_err *err);

/*
 * Watch a job that an earlier relish submitted (its segment still running
 * in the store): pending, running or already ended.  Its output is read
 * again from the start (the metric lines stored already come again: the
 * caller skips them); it ends as launched segments do.  es gives
 * log_path, timeout_s and memory_limit_mib; argv and envp are ignored.
 * RL_EINVAL for another executor.
 */
int exec_slurm_adopt(executor *e, uint64_t job_id, const exec_spec *es,
		     const exec_callbacks *cb, void *ud, exec_segment **out, rl_err *err);

/* squeue at most every seconds from now on (<= 0: 1 s); a service's
 * reload.  Ignored for another executor. */
void exec_slurm_set_poll_interval(executor *e, double seconds);

/* Run `scontrol show node -o` on the loop; cb gets its output (NULL and
 * the error when it failed).  One refresh at a time: RL_EBUSY while one
 * is running. */
typedef void (*slurm_text_cb)(void *ud, const char *text, const rl_err *err);
int exec_slurm_show_nodes(executor *e, slurm_text_cb cb, void *ud, rl_err *err);

/* ---- identity ------------------------------------------------------------ */

typedef struct slurm_ident {
	char owner[24];
	char experiment[72];
	char trial[32];               /* "t7" */
	double from, to;
	int seq;
} slurm_ident;

/* The job name relish-<experiment>-<trial>-s<seq>, sanitised to
 * [A-Za-z0-9_.-] and at most n-1 characters. */
void slurm_job_name(const char *experiment, const char *trial, int seq, char *buf, size_t n);

/* "relish owner=O experiment=E trial=T segment=A-B seq=N" */
void slurm_job_comment(const slurm_ident *id, char *buf, size_t n);

/* Parse a comment made by slurm_job_comment: 0, or -1 when it is not one. */
int slurm_parse_comment(const char *text, slurm_ident *out);

/* ---- requests -------------------------------------------------------------- */

/*
 * Shards for a memory reservation on a GPU of gpu_mem_mib split into
 * shards_per_gpu shards: ceil(mem / (gpu_mem / shards)), at least 1.
 * Returns 0 when the reservation needs the whole GPU (as many shards as
 * it has, or more) or when either size is unknown (0): ask for the GPU.
 */
unsigned slurm_shards_for(uint64_t mem_mib, uint64_t gpu_mem_mib, unsigned shards_per_gpu);

/*
 * sbatch's argv (NULL-terminated, malloc'd, free with contract_strv_free)
 * for one segment, as listed at the top of this file.  script is the step
 * script's path.  Errors: RL_EINVAL when argv, log_path or cluster is
 * missing.
 */
int slurm_build_sbatch_argv(const slurm_options *o, const exec_spec *es, const char *script,
			    char ***out, rl_err *err);

/* The environment sbatch runs with: envp (NULL: relish's own) without the
 * variables of an allocation relish may itself run in (SLURM_*, except
 * SLURM_CONF), and with relish's own SLURM_CONF when envp has none.
 * malloc'd, free with contract_strv_free; NULL when out of memory. */
char **slurm_submit_env(char *const *envp);

/* ---- what the tools say ----------------------------------------------------- */

/* squeue's -O format relish reads (slurm_parse_squeue's columns). */
#define SLURM_SQUEUE_FORMAT \
	"JobID:|,State:|,Reason:|,exit_code:|,NodeList:|,Name:|,Comment:|"

/* One job as squeue or the job-completion file tells it. */
typedef struct slurm_job {
	uint64_t id;
	char state[24];               /* "RUNNING", "COMPLETED", "OUT_OF_MEMORY" */
	char reason[64];              /* "None", "Resources", ... */
	int exit_raw;                 /* wait status as Slurm keeps it; -1 unknown */
	char node[64];                /* "" while pending */
	char name[160];
	int is_relish;                /* the comment is relish's */
	slurm_ident ident;            /* when is_relish */
} slurm_job;

/*
 * Parse squeue output in SLURM_SQUEUE_FORMAT (no header), one job a line.
 * Lines that do not have the columns are skipped (squeue prints nothing
 * else with -h).  *out is malloc'd (NULL when *n is 0).
 */
int slurm_parse_squeue(const char *text, slurm_job **out, size_t *n, rl_err *err);

/* One line of the jobcomp/filetxt file ("JobId=N UserId=... JobState=S
 * ... NodeList=... ExitCode=A:B"): 0, or -1 when it is not one. */
int slurm_parse_jobcomp_line(const char *line, slurm_job *out);

/* The sacct columns relish asks for (sacct -n -P -X -o SLURM_SACCT_FORMAT). */
#define SLURM_SACCT_FORMAT "JobID,State,ExitCode,NodeList"

/* One line of that sacct output ("N|STATE|A:B|NODES"; State may read
 * "CANCELLED by 0"; job steps "N.batch" are not jobs): 0, or -1. */
int slurm_parse_sacct_line(const char *line, slurm_job *out);

/* 1 when a job in state is over (COMPLETED, FAILED, TIMEOUT, ...), 0
 * while it may still run (PENDING, RUNNING, COMPLETING, SUSPENDED, ...). */
int slurm_state_final(const char *state);

/*
 * Classify a final job: fills r's outcome, exited / exit_code /
 * term_signal and reason from the state and Slurm's exit status (as
 * squeue's exit_code column: a wait status; the job-completion file's
 * "A:B" is turned into one by slurm_parse_jobcomp_line).  An unknown state
 * is FAILED, named in the reason.
 */
void slurm_job_outcome(const char *state, int exit_raw, const char *reason, exec_result *r);

/* ---- the step wrapper (slurm_step.c) ------------------------------------------ */

/* What the wrapper's lines say (slurm_parse_step_line). */
typedef struct slurm_step_line {
	int kind;                     /* 1 start, 2 end */
	char node[64];
	int n_gpus;
	int gpu[EXEC_MAX_GPUS];
	double at;                    /* wall clock, seconds */
	int exited, exit_code, term_signal; /* end */
	uint64_t peak_rss_mib, peak_gpu_mib; /* end; 0 unknown */
} slurm_step_line;

/* Parse a line (without its newline) that starts with SLURM_STEP_PREFIX:
 * 0, or -1 when it is not a wrapper line. */
int slurm_parse_step_line(const char *line, size_t len, slurm_step_line *out);

/*
 * `relish slurm-step -- PROGRAM ARGS...` on the compute node: print the
 * start line, run the program in a process group of its own (signals to
 * the wrapper are passed on), sample the group's RSS and, where NVML
 * answers, its GPU memory, print the end line, and exit as the program
 * did (the same code, or the same signal).  Returns the exit status to
 * use (127 when the program could not be started).
 */
int slurm_step_main(int argc, char **argv);

/* ---- the backend (site.c) ----------------------------------------------------------- */

/*
 * A Slurm partition as the live driver's devices (docs/slurm.md): the
 * settings of executor slurm's backend, from a service's config (relish
 * serve; relish run takes the partition and GPU memory from its specs).
 * Everything borrowed for the call it is given to.
 */
typedef struct slurm_site_config {
	const char *partition;       /* NULL: the cluster's default partition */
	const char *account, *qos;   /* for specs that name none; NULL: none */
	const char *const *sbatch_args; /* before each spec's own sbatch_args */
	size_t n_sbatch_args;
	uint64_t gpu_memory_mib;     /* GPUs of nodes without a gpumem_<size> feature */
	double poll_interval_s;      /* squeue at most this often; 0: 1 s */
	double refresh_s;            /* scontrol show node this often; 0: 30 s */
	const char *step_program;    /* relish's path on the nodes; NULL: this binary */
} slurm_site_config;

/* Executor slurm as a backend of the live driver: its row in exec_backends.
 * open's settings are a slurm_site_config (or NULL: from the plan's
 * specs), and so are reconfigure's (account, qos, sbatch_args and the
 * intervals change; the partition, GPU memory and step program are read
 * at open only: the devices and the step script are made from them). */
extern const exec_backend_ops slurm_backend_ops;

#endif
