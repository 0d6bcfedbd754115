/*
 * contract.h - the trial contract, language-neutral and pure: how a trial
 * program hears what to run and how relish hears what it did.  docs/trials.md
 * is the user's version of this header.
 *
 * What relish gives a trial:
 *   - argv with {param}, {trial_id}, {checkpoint_dir}, {resource_from},
 *     {resource_to} substituted ({{ and }} stand for literal braces); the
 *     result goes to execve as is, never through a shell;
 *   - an environment: the parent's, OMP/OPENBLAS/MKL thread counts matching
 *     the CPU share, the spec's own variables, then the RELISH_* variables
 *     (table in contract_env_build);
 *   - warm and worker modes: one-line JSON commands on stdin
 *       {"cmd":"run","trial_id":"t7","params":{..},"from":3,"to":9,
 *        "checkpoint_dir":"/x/t7"}
 *       {"cmd":"stop"}
 * What a trial gives back, as lines on stdout:
 *   RELISH epoch=3 accuracy=0.91 loss=0.3     metrics (names, finite numbers)
 *   RELISH_DONE to=9                          end of a segment (warm/worker)
 *   RELISH_READY                              optional: start-up finished
 * Every other line is log.  A line that starts with one of the prefixes but
 * does not follow the format is "bad": logged, counted, never fatal in
 * oneshot mode.  A log line that looks like a metric line gone wrong (the
 * word relish in another case or with a colon, leading blanks, then
 * name=value) is "near": still log, but the driver warns about it.
 *
 * Nothing here touches a process or a file; process/process.c does that.
 */
#ifndef RELISH_CONTRACT_H
#define RELISH_CONTRACT_H

#include <stddef.h>

#include "common/err.h"
#include "common/outcome.h"
#include "search/space.h"
#include "spec/spec.h"

#define CONTRACT_METRIC_PREFIX "RELISH "
#define CONTRACT_DONE_PREFIX "RELISH_DONE"
#define CONTRACT_READY_LINE "RELISH_READY"

#define CONTRACT_MAX_METRICS 32   /* pairs per line; more makes the line bad */
#define CONTRACT_NAME_MAX 64      /* metric name, including the NUL */
#define CONTRACT_LINE_MAX 65536   /* longer lines are log, never parsed */

typedef enum contract_kind {
	CONTRACT_LOG = 0,   /* not addressed to relish */
	CONTRACT_METRICS,   /* RELISH name=value ... */
	CONTRACT_DONE,      /* RELISH_DONE to=B */
	CONTRACT_READY,     /* RELISH_READY */
	CONTRACT_BAD,       /* has a prefix but breaks the format */
	CONTRACT_NEAR,      /* log, but it looks like a metric line that missed the
			     * format ("relish: epoch=3 acc=0.9"): why says how */
} contract_kind;

typedef struct contract_metric {
	char name[CONTRACT_NAME_MAX];
	double value;
} contract_metric;

typedef struct contract_line {
	contract_kind kind;
	size_t n;                                /* METRICS: pairs */
	contract_metric m[CONTRACT_MAX_METRICS]; /* METRICS: in line order */
	double done_to;                          /* DONE: the resource reached */
	const char *why;                         /* BAD, NEAR: static description */
	const char *text;                        /* the line itself (borrowed: valid
						  * while the line is) and its length */
	size_t len;
} contract_line;

/*
 * Parse one output line (without its newline; a trailing '\r' is ignored).
 * len may exceed CONTRACT_LINE_MAX, in which case the line is LOG (or BAD when
 * it carries a prefix).  Always fills *out; returns out->kind.  Metric names:
 * [A-Za-z_][A-Za-z0-9_./-]*, at most 63 chars; values: finite decimal numbers
 * (strtod syntax without hex, inf or nan); names must not repeat.
 */
contract_kind contract_parse_line(const char *line, size_t len, contract_line *out);

/* Value of metric name in a parsed line; 1 when present (and *v set), else 0. */
int contract_metric_get(const contract_line *l, const char *name, double *v);

/* What a segment is: the variables substitution and the environment use. */
typedef struct contract_vars {
	const space *space;          /* may be NULL (worker mode: no trial yet) */
	const config *config;        /* values of space, same order */
	const char *trial_id;        /* NULL in worker mode */
	const char *checkpoint_dir;  /* NULL in worker mode */
	double from, to;             /* the segment [from, to] */
	const char *resource_name;   /* "epoch"; NULL = "epoch" */
	trial_mode mode;
	double cpus;                 /* CPU share; <= 0 means 1 */
	uint64_t gpu_memory_mib;     /* GPU memory reservation, 0 = none */
} contract_vars;

/*
 * Substitute one argv template.  {name} is a parameter of vars->space or one
 * of trial_id, checkpoint_dir, resource_from, resource_to; {{ and }} are
 * literal braces and a lone '}' is literal (spec_expand's rules: the same
 * code validated the template when the spec was loaded).  An unknown name
 * or a malformed placeholder is an RL_ESPEC error naming it.  On success *out is a malloc'd string (caller
 * frees).  Values are formatted with value_format (resources as floats, so
 * 3.0 becomes "3").
 */
int contract_subst(const char *tmpl, const contract_vars *v, char **out, rl_err *err);

/* Substitute every element of a NULL-terminated argv; *out is a
 * NULL-terminated malloc'd array freed with contract_strv_free. */
int contract_subst_argv(char *const *argv, const contract_vars *v, char ***out, rl_err *err);

/*
 * Build a trial's environment as a NULL-terminated "NAME=value" array
 * (malloc'd; free with contract_strv_free).  Layers, later wins on equal
 * names:
 *   1. parent (e.g. environ; may be NULL)
 *   2. OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, MKL_NUM_THREADS =
 *      max(1, floor(cpus))
 *   3. spec_env (the spec's trial.env; may override the thread counts),
 *      each value substituted as contract_subst does (an unknown
 *      placeholder is an RL_ESPEC error naming trial.env.NAME)
 *   4. RELISH_MODE, RELISH_CPUS, RELISH_RESOURCE, RELISH_GPU_MEMORY_MIB (when
 *      set) and, except in worker mode, RELISH_TRIAL_ID, RELISH_PARAMS,
 *      RELISH_PARAM_<NAME>, RELISH_CHECKPOINT_DIR, RELISH_RESOURCE_FROM,
 *      RELISH_RESOURCE_TO
 *   5. extra (the driver's device assignment, e.g. CUDA_VISIBLE_DEVICES)
 */
int contract_env_build(char *const *parent, const env_var *spec_env, size_t n_spec_env,
		       const contract_vars *v, const env_var *extra, size_t n_extra,
		       char ***out, rl_err *err);

/* RELISH_PARAM_<NAME> for a parameter name: upper-cased, every character
 * that is not [A-Za-z0-9] replaced by '_'.  Writes at most len bytes. */
void contract_param_env_name(const char *param, char *buf, size_t len);

/* Look a name up in a NULL-terminated "NAME=value" array; the value or NULL. */
const char *contract_env_get(char *const *envp, const char *name);

void contract_strv_free(char **v);

/*
 * The stdin command of warm and worker modes, one line of JSON ending in
 * '\n'.  params_json is the RELISH_PARAMS text (an object) or NULL.  Returns
 * a malloc'd string or NULL when out of memory (or params_json is not JSON).
 */
char *contract_run_command(const char *trial_id, const char *params_json, double from,
			   double to, const char *checkpoint_dir);
#define CONTRACT_STOP_COMMAND "{\"cmd\":\"stop\"}\n"

/* How a segment's process ended, as the executor saw it. */
typedef struct contract_exit {
	int exited;          /* 1: exit(code); 0: killed by term_signal */
	int exit_code;
	int term_signal;
	int cancelled;       /* relish was asked to stop it */
	int timed_out;       /* relish stopped it at its timeout */
	int mem_exceeded;    /* relish killed it over its memory reservation */
	int container;       /* ran under a container runtime: exit 137 = OOM kill */
	const char *log_tail; /* last bytes of its output (stdout+stderr), may be NULL */
} contract_exit;

/*
 * Classify an ending.  Rules, first match wins:
 *   cancelled -> CANCELLED; timed_out -> TIMEOUT; mem_exceeded -> OOM;
 *   exit 0 -> COMPLETED; an out-of-memory message in log_tail -> OOM;
 *   container and exit 137 -> OOM; signal -> SIGNALED; else FAILED.
 * A SIGKILL relish did not send stays SIGNALED: the kernel OOM killer would
 * show only in dmesg, which relish cannot read here.
 */
seg_outcome contract_classify(const contract_exit *x);

/* The out-of-memory message found in text, or NULL.  The table is in
 * contract.c (PyTorch, TensorFlow, JAX, CUDA, C++, Python, libc). */
const char *contract_oom_marker(const char *text);

/* An outcome's name is seg_outcome_name's (common/outcome.h). */

#endif
