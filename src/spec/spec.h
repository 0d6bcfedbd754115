/*
 * spec.h - the experiment spec: what a user writes (YAML or JSON, one
 * schema, documented in docs/spec.md) turned into a plain C structure.
 *
 * spec_load() is the only entry point that reads a file; spec_parse_text()
 * takes the text and a name for messages.  Errors name the file, line and
 * column, the key path (search.space.lr.low) and what was expected, e.g.
 *   exp.yaml:12:9: search.space.lr.low: expected a number, got "abc"
 * Unknown keys are errors with a did-you-mean suggestion.  Defaults are
 * filled in by the parser so that every consumer sees a complete spec.
 */
#ifndef RELISH_SPEC_H
#define RELISH_SPEC_H

#define SPEC_FAIL_FAST_DEFAULT 3 /* trial.fail_fast */

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "sched/policy.h"
#include "search/space.h"

/* search.pending (the sampler reads it through sampler_options). */
typedef enum pending_rule {
	PENDING_WORST,  /* as results worse than every reported one (a constant
			 * liar): they join g(x), so proposals move away from
			 * points already being tried */
	PENDING_IGNORE, /* not at all: parallel proposals are blind to each other */
} pending_rule;

typedef enum objective_mode { MODE_MAX, MODE_MIN } objective_mode;

#define SPEC_OBJECTIVES_MAX 16  /* objective: as a list, at most this many */
#define SPEC_CONSTRAINTS_MAX 32 /* constraints: at most this many */

/* One objective of several (objective: as a list). */
typedef struct spec_objective {
	char *metric;        /* owned */
	objective_mode mode;
} spec_objective;

/* A constraint: metric must lie in [lo, hi] (a plain name: (-inf, 0]); a
 * trial that misses by v (lo - value or value - hi) is infeasible, its
 * violation the sum of those misses (docs/search.md, "Constraints"). */
typedef struct spec_constraint {
	char *metric;        /* owned */
	double lo, hi;       /* -INFINITY / INFINITY when not bounded that way */
} spec_constraint;
typedef enum search_algo { SEARCH_RANDOM, SEARCH_GRID, SEARCH_TPE, SEARCH_SOBOL, SEARCH_GP } search_algo;
typedef enum schedule_algo { SCHED_NONE, SCHED_ASHA, SCHED_HYPERBAND, SCHED_MEDIAN } schedule_algo;
typedef enum executor_kind { EXEC_PROCESS, EXEC_PODMAN, EXEC_DOCKER, EXEC_SLURM } executor_kind;
#define EXEC_KINDS 4 /* executor_kind's values: exec/backends.c has a row for each */
typedef enum trial_mode { TRIAL_MODE_ONESHOT, TRIAL_MODE_WARM, TRIAL_MODE_WORKER } trial_mode;

typedef struct env_var {
	char *name;   /* owned */
	char *value;  /* owned */
} env_var;

/* A container bind mount (trial.mounts: "HOST[:TARGET][:ro|rw]"). */
typedef struct spec_mount {
	char *host;   /* owned; absolute (relative ones are taken from the spec's folder) */
	char *target; /* owned; absolute path inside the container (default: host) */
	int read_only;
} spec_mount;

/* What a trial's container may do beyond the least privilege relish gives
 * it (docs/containers.md, "Privileges"); podman and docker only.  The
 * defaults (all zero) are: no capability, not root, a read-only root file
 * system, no new privileges. */
typedef struct spec_privileges {
	size_t n_capabilities;
	char **capabilities;     /* owned; canonical names without CAP_, e.g. "NET_RAW" */
	char *user;              /* owned; "UID:GID" ("0:0" for root); NULL: the default user */
	int writable_root;       /* the image's root file system writable */
	int new_privileges;      /* setuid programs and file capabilities may raise privileges */
} spec_privileges;

typedef struct spec_resources {
	uint64_t memory_mib;     /* host RAM per segment, 0 = estimate */
	uint64_t gpu_memory_mib; /* GPU memory per segment, 0 = estimate */
	double cpus;             /* CPU share, default 1 */
	double gpus;             /* whole GPUs (>= 1) or a fraction hint; 0 = CPU only */
} spec_resources;

typedef struct spec {
	char *name;                 /* required; [A-Za-z0-9_.-]{1,64} */
	char *source;               /* file name the spec came from, owned */

	struct {
		char *metric;           /* required */
		objective_mode mode;    /* required */
	} objective;                /* the first (or only) objective */
	/* objective: as a list of {metric, mode}: the ones after the first
	 * (objective above), in the spec's order; 0 and NULL for one. */
	size_t n_more_objectives;
	spec_objective *more_objectives; /* owned */
	size_t n_constraints;
	spec_constraint *constraints;    /* owned; constraints: */

	struct {
		search_algo algorithm;  /* default tpe */
		uint64_t seed;          /* default 0 */
		int max_trials;         /* default 20 (grid: size of the grid) */
		int max_concurrent;     /* default 0 = as many as fit */
		int n_startup;          /* tpe: random start-up trials, default 10 */
		pending_rule pending;   /* tpe: how running trials count (default worst) */
		int multivariate;       /* tpe: one joint estimator (default true) */
		space space;            /* required, at least one parameter */
	} search;

	struct {
		schedule_algo algorithm; /* default none */
		char *resource;          /* name of the resource metric, default "epoch" */
		double min;              /* default 1 */
		double max;              /* required when algorithm != none; default 1 */
		double reduction_factor; /* default 3 */
		double segment;          /* resource per segment for none/median; 0 = whole */
		int grace;               /* median: trials needed before stopping, default 5 */
	} schedule;

	struct {
		size_t argc;
		char **argv;            /* required, owned, NULL-terminated; may hold {param} */
		size_t n_env;
		env_var *env;           /* owned */
		char *workdir;          /* default: the spec's folder */
		executor_kind executor; /* default process */
		int executor_given;     /* 1: the spec named it (a service may default it) */
		char *image;            /* required for podman/docker */
		char *network;          /* containers: default "none" */
		size_t n_mounts;
		spec_mount *mounts;     /* containers: extra bind mounts, owned */
		spec_privileges privileges; /* containers: beyond the default (none) */
		struct {                /* executor slurm (docs/slurm.md); NULL/0: not given */
			char *partition, *account, *qos; /* owned */
			size_t n_sbatch_args;
			char **sbatch_args;      /* owned: extra sbatch options, verbatim */
			uint64_t gpu_memory_mib; /* memory of one GPU of the nodes */
		} slurm;
		trial_mode mode;        /* oneshot (default), warm, worker */
		spec_resources resources;
		double timeout_s;       /* per segment, 0 = none */
		int retries;            /* failed segments re-run, default 0 */
		int fail_fast;          /* stop when this many trials failed the same way
					 * before any segment completed; 0 never, default 3 */
		size_t n_shape_params;
		char **shape_params;    /* params that change memory; NULL = all */
	} trial;

	struct {
		sched_policy policy;    /* named policy (sched/policy.h), default relish */
		double memory_margin;   /* relative headroom on measured peaks, default 0.2 */
		queue_order order;      /* default: las under relish, fifo otherwise */
		sched_foreign_policy foreign; /* default share */
		double foreign_wait_s;  /* most a segment waits for others' memory, 0 = no limit */
	} sharing;
} spec;

/* Load and validate a spec file; format chosen by extension (.json is JSON,
 * anything else YAML).  On success *out is a new spec owned by the caller
 * (free with spec_free).  On failure *out is untouched and err says why. */
int spec_load(const char *path, spec **out, rl_err *err);

/* Same from text; name is used in messages; json selects the JSON parser. */
int spec_parse_text(const char *text, size_t len, const char *name, int json,
		    spec **out, rl_err *err);

/* spec_parse_text with the folder relative paths are taken from (the
 * client's, for a spec submitted to relish serve): an absolute path; NULL
 * is spec_parse_text's choice (the folder of name). */
int spec_parse_text_in(const char *text, size_t len, const char *name, const char *dir,
		       int json, spec **out, rl_err *err);

/* A spec read by a process that is not its author's (relish serve, as
 * root): ${NAME} in trial.mounts is looked up with var (the variables the
 * author's client declared; NULL: none), never in this process's
 * environment, whose values are not the author's to read; and mount paths
 * are left as written (absolute), not resolved here: resolving follows
 * links and enters folders with this process's rights, not the author's
 * (the service resolves them as the author, live_submission_parse). */
typedef struct spec_origin {
	const char *(*var)(const char *name, void *ctx); /* NULL or the value */
	void *ctx;
} spec_origin;
/* spec_parse_text_in read for origin (NULL: spec_parse_text_in). */
int spec_parse_text_from(const char *text, size_t len, const char *name, const char *dir,
			 int json, const spec_origin *origin, spec **out, rl_err *err);
void spec_free(spec *s);
/* 1 when name may name an experiment: 1-64 of A-Z a-z 0-9 _ . -, not all
 * digits (those name experiments by id) */
int spec_name_valid(const char *name);
/* NULL when ref may be trial.image: a plain image reference,
 * [registry/]name[:tag][@digest] (never a transport such as
 * docker-archive:PATH, which a root engine would read); else what was
 * expected, in words (spec_image.c). */
const char *spec_image_problem(const char *ref);
/* Give s another experiment name (relish submit --name); RL_ESPEC naming
 * the rule for one that may not be. */
int spec_rename(spec *s, const char *name, rl_err *err);

/* Names for enums (for messages, the store and --json output); the
 * sharing section's are the core's (sched/policy.h). */
const char *spec_mode_name(objective_mode m);

/* Objectives: how many (1 + n_more_objectives), and objective i of them
 * (0: s->objective), pointers borrowed from s. */
size_t spec_n_objectives(const spec *s);
spec_objective spec_objective_at(const spec *s, size_t i);
/* By how much value misses constraint c: 0 inside its bounds, the
 * distance to the nearer bound outside, +INFINITY for NaN (a metric never
 * reported proves nothing). */
double spec_constraint_violation(const spec_constraint *c, double value);
const char *spec_search_name(search_algo a);
const char *spec_schedule_name(schedule_algo a);
const char *spec_executor_name(executor_kind k);
/* Whether executor k runs trials of mode m: 0, or RL_ESPEC with err saying
 * why ("executor slurm runs each segment as one job: expected oneshot, got
 * warm").  The one rule: the schema checks a spec's own executor with it,
 * spec_default_executor the one a service gives. */
int spec_executor_mode_check(executor_kind k, trial_mode m, rl_err *err);
/* s runs on executor k unless it names its own (relish serve's default),
 * checked as the schema checks a named one: RL_ESPEC "SOURCE: trial.mode:
 * executor slurm runs ...". */
int spec_default_executor(spec *s, executor_kind k, rl_err *err);
const char *spec_trial_mode_name(trial_mode m);
const char *spec_pending_name(pending_rule p);

/*
 * Command templates.  Arguments of trial.command (and values of trial.env)
 * may hold {name} placeholders naming a search parameter or a built-in
 * ({trial_id}, {checkpoint_dir}, {resource_from}, {resource_to}); "{{" and
 * "}}" stand for literal braces; a lone "}" is literal.  The parser checks
 * every placeholder, so executors only expand.
 */
int spec_is_builtin(const char *name);

/* Writes the text of placeholder `name` into buf (len bytes) and returns
 * its length like snprintf (>= len means "call me again with more room"),
 * or -1 when the name is unknown. */
typedef int (*spec_lookup_fn)(const char *name, char *buf, size_t len, void *ctx);

/* Expand tmpl into *out (malloc'd, owned by the caller).  RL_ESPEC for an
 * unknown placeholder or a malformed brace; the message names it. */
int spec_expand(const char *tmpl, spec_lookup_fn lookup, void *ctx, char **out, rl_err *err);

/* Expand with a configuration of s's space and the built-ins (NULL for a
 * built-in that is not known yet expands to an empty string). */
typedef struct spec_builtins {
	const char *trial_id;
	const char *checkpoint_dir;
	const char *resource_from;
	const char *resource_to;
} spec_builtins;
int spec_expand_config(const char *tmpl, const space *sp, const config *c,
		       const spec_builtins *b, char **out, rl_err *err);

/*
 * Number of configurations grid search visits: the product of every
 * parameter's grid_points, which the parser fills for every kind (choice:
 * its count; fixed: 1; int: the whole range when it holds at most 100
 * values and grid_points is not given; uniform with step: the steps;
 * otherwise grid_points, default 5).  Saturates at UINT64_MAX.
 */
uint64_t spec_grid_size(const space *sp);

/*
 * What s asks of its trials' containers beyond the default least privilege
 * (docs/containers.md, "Privileges"), one entry per grant: a network other
 * than none, each added capability, a user given (root or another uid),
 * a writable root file system, new privileges, and each bind mount (host
 * paths the trial sees).  For a service that must refuse what its
 * configuration does not allow (relish serve), and for people
 * (`relish validate` prints them).  Writes at most max entries to out (may
 * be NULL with max 0) and returns how many there are, so a caller sizes
 * its array from a first call: a check that read only the first entries
 * would let what lies beyond them through (0 for the process executor,
 * whose trials run as relish's own processes).  A capability or a mount
 * target comes at most once (the parser refuses a second).
 */
typedef struct spec_grant {
	const char *key;         /* static: the field path, e.g. "trial.privileges.capabilities" */
	char value[300];         /* what is asked: "NET_RAW", "0:0", "true", "host", "/data:/data:ro" */
} spec_grant;
size_t spec_grants(const spec *s, spec_grant *out, size_t max);

/* The normalised spec (every default filled) as JSON text; malloc'd, owned
 * by the caller; NULL when out of memory.  Its text is the experiment's
 * identity in the store (a resumed run compares it). */
char *spec_to_json(const spec *s);
/* The normalised spec as a JSON spec file (relish validate --json): every
 * default filled in, under the spec's own keys, so it validates and runs as
 * the spec it came from.  malloc'd; NULL when out of memory. */
char *spec_to_spec_json(const spec *s);

/* Every key path the schema knows ("search.space.<name>.low" for
 * parameter keys), with its one-line help; for docs and their tests. */
void spec_schema_foreach(void (*fn)(const char *path, const char *help, void *ctx), void *ctx);

#endif
