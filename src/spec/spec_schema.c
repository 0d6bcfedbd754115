/*
 * spec_schema.c - the schema of the experiment spec as tables, and the walk
 * that turns a document tree (node.h) into a `struct spec`.
 *
 * One row per key: its name, how to read it, where it goes, whether it is
 * required, its bounds and a line of help.  The same rows give the
 * unknown-key did-you-mean, the "missing required key" errors and the key
 * list that tests hold docs/spec.md against (spec_schema_foreach), so the
 * three cannot drift apart.  Checks that span several keys (min <= max,
 * executor needs image, placeholders name parameters) run after the walk,
 * in spec_check(), with the tree at hand for positions.
 */
#include "spec/spec_internal.h"
#include "search/sampler.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum ftype { F_STR, F_INT, F_U64, F_NUM, F_ENUM, F_MEM, F_DUR, F_BOOL, F_SUB, F_FN } ftype;

typedef struct section section;
typedef int (*field_fn)(sx *x, const node *v, spec *s);

typedef struct field {
	const char *key;
	ftype type;
	size_t off;          /* where the value goes in struct spec */
	int required;
	double lo, hi;       /* F_INT, F_NUM: inclusive bounds (lo excluded if lo_open) */
	int lo_open;
	const char *const *names; /* F_ENUM, indexed by the enum's value */
	size_t n_names;
	const section *sub;  /* F_SUB */
	field_fn fn;         /* F_FN */
	const char *help;
} field;

struct section {
	const field *fields;
	size_t n;
};

#define OFF(member) offsetof(spec, member)
#define NAMES(a) .names = a, .n_names = sizeof a / sizeof a[0]
#define SECTION(rows) {rows, sizeof rows / sizeof rows[0]}

_Static_assert(sizeof(objective_mode) == sizeof(int) && sizeof(search_algo) == sizeof(int) &&
		       sizeof(schedule_algo) == sizeof(int) && sizeof(sched_policy) == sizeof(int) &&
		       sizeof(queue_order) == sizeof(int) &&
		       sizeof(executor_kind) == sizeof(int) && sizeof(trial_mode) == sizeof(int) &&
		       sizeof(sched_foreign_policy) == sizeof(int) && sizeof(pending_rule) == sizeof(int),
	       "enums are stored through int pointers");

static const char *const mode_names[] = {"max", "min"};
static const char *const search_names[] = {"random", "grid", "tpe", "sobol", "gp"};
static const char *const schedule_names[] = {"none", "asha", "hyperband", "median"};
static const char *const executor_names[] = {"process", "podman", "docker", "slurm"};
static const char *const trial_mode_names[] = {"oneshot", "warm", "worker"};
static const char *const pending_names[] = {"worst", "ignore"};

static int read_name(sx *x, const node *v, spec *s);
static int read_space(sx *x, const node *v, spec *s);
static int read_command(sx *x, const node *v, spec *s);
static int read_env(sx *x, const node *v, spec *s);
static int read_shape_params(sx *x, const node *v, spec *s);
static int read_gpus(sx *x, const node *v, spec *s);
static int read_mounts(sx *x, const node *v, spec *s);
static int read_capabilities(sx *x, const node *v, spec *s);
static int read_user(sx *x, const node *v, spec *s);
static int read_sbatch_args(sx *x, const node *v, spec *s);
static int read_multivariate(sx *x, const node *v, spec *s);
static int read_objective(sx *x, const node *v, spec *s);
static int read_constraints(sx *x, const node *v, spec *s);

static const field objective_rows[] = {
	{.key = "metric", .type = F_STR, .off = OFF(objective.metric), .required = 1,
	 .help = "name of the metric the trial reports, e.g. val_acc"},
	{.key = "mode", .type = F_ENUM, .off = OFF(objective.mode), .required = 1, NAMES(mode_names),
	 .help = "max | min: whether larger or smaller is better"},
};

static const field search_rows[] = {
	{.key = "algorithm", .type = F_ENUM, .off = OFF(search.algorithm), NAMES(search_names),
	 .help = "random | grid | tpe | sobol | gp (default tpe)"},
	{.key = "seed", .type = F_U64, .off = OFF(search.seed), .help = "sampler seed, integer >= 0 (default 0)"},
	{.key = "max_trials", .type = F_INT, .off = OFF(search.max_trials), .lo = 1, .hi = INT_MAX,
	 .help = "trials to run, >= 1 (default 20; grid: the grid size)"},
	{.key = "max_concurrent", .type = F_INT, .off = OFF(search.max_concurrent), .lo = 0, .hi = INT_MAX,
	 .help = "trials running at once, 0 = as many as fit (default 0)"},
	{.key = "n_startup", .type = F_INT, .off = OFF(search.n_startup), .lo = 1, .hi = INT_MAX,
	 .help = "tpe, gp: random trials before the model is used (default 10)"},
	{.key = "multivariate", .type = F_FN, .fn = read_multivariate,
	 .help = "tpe: one joint estimator over the parameters instead of one each (default true)"},
	{.key = "pending", .type = F_ENUM, .off = OFF(search.pending), NAMES(pending_names),
	 .help = "tpe: trials still running when one is proposed count as worst results | ignore (default worst)"},
	{.key = "space", .type = F_FN, .required = 1, .fn = read_space,
	 .help = "map of parameter name to parameter (at least one)"},
};

static const field schedule_rows[] = {
	{.key = "algorithm", .type = F_ENUM, .off = OFF(schedule.algorithm), NAMES(schedule_names),
	 .help = "none | asha | hyperband | median (default none)"},
	{.key = "resource", .type = F_STR, .off = OFF(schedule.resource),
	 .help = "name of the resource metric the trial reports (default epoch)"},
	{.key = "min", .type = F_NUM, .off = OFF(schedule.min), .lo = 0, .hi = INFINITY, .lo_open = 1,
	 .help = "smallest resource a trial gets, > 0 (default 1)"},
	{.key = "max", .type = F_NUM, .off = OFF(schedule.max), .lo = 0, .hi = INFINITY, .lo_open = 1,
	 .help = "largest resource a trial gets, >= min (required unless algorithm is none; default 1)"},
	{.key = "reduction_factor", .type = F_NUM, .off = OFF(schedule.reduction_factor), .lo = 1,
	 .hi = INFINITY, .lo_open = 1, .help = "asha/hyperband: keep 1 in eta per rung, > 1 (default 3)"},
	{.key = "segment", .type = F_NUM, .off = OFF(schedule.segment), .lo = 0, .hi = INFINITY,
	 .help = "resource per segment; with asha/hyperband, extra boundaries between rungs (default 0)"},
	{.key = "grace", .type = F_INT, .off = OFF(schedule.grace), .lo = 0, .hi = INT_MAX,
	 .help = "median: finished trials needed before any is stopped (default 5)"},
};

static const field resources_rows[] = {
	{.key = "memory", .type = F_MEM, .off = OFF(trial.resources.memory_mib),
	 .help = "host memory per segment, e.g. 512MiB, 4GiB; plain number = MiB; 0 = measure (default 0)"},
	{.key = "gpu_memory", .type = F_MEM, .off = OFF(trial.resources.gpu_memory_mib),
	 .help = "GPU memory per segment, same units; 0 = measure (default 0)"},
	{.key = "cpus", .type = F_NUM, .off = OFF(trial.resources.cpus), .lo = 0, .hi = 4096, .lo_open = 1,
	 .help = "CPU cores per segment, > 0 (default 1)"},
	{.key = "gpus", .type = F_FN, .fn = read_gpus,
	 .help = "0 = CPU only, a fraction < 1 as a hint, or whole GPUs (default 0)"},
};
static const section resources_section = SECTION(resources_rows);

static const field privileges_rows[] = {
	{.key = "capabilities", .type = F_FN, .fn = read_capabilities,
	 .help = "Linux capabilities added back after --cap-drop=all, e.g. [NET_RAW] (default none)"},
	{.key = "user", .type = F_FN, .fn = read_user,
	 .help = "root, UID or UID:GID the trial runs as (default: not root)"},
	{.key = "writable_root", .type = F_BOOL, .off = OFF(trial.privileges.writable_root),
	 .help = "true: the image's root file system is writable (default false: read-only, tmpfs /tmp)"},
	{.key = "new_privileges", .type = F_BOOL, .off = OFF(trial.privileges.new_privileges),
	 .help = "true: setuid programs may raise privileges (default false: no-new-privileges)"},
};
static const section privileges_section = SECTION(privileges_rows);
static const field slurm_rows[] = {
	{.key = "partition", .type = F_STR, .off = OFF(trial.slurm.partition),
	 .help = "Slurm partition the jobs go to (default: the cluster's default partition)"},
	{.key = "account", .type = F_STR, .off = OFF(trial.slurm.account),
	 .help = "Slurm account charged (sbatch --account; default: none given)"},
	{.key = "qos", .type = F_STR, .off = OFF(trial.slurm.qos),
	 .help = "Slurm quality of service (sbatch --qos; default: none given)"},
	{.key = "sbatch_args", .type = F_FN, .fn = read_sbatch_args,
	 .help = "extra sbatch options, each one argument, e.g. [\"--constraint=a100\"]"},
	{.key = "gpu_memory", .type = F_MEM, .off = OFF(trial.slurm.gpu_memory_mib),
	 .help = "memory of one GPU of the nodes, for nodes without a gpumem_<size> feature"},
};
static const section slurm_section = SECTION(slurm_rows);

static const field trial_rows[] = {
	{.key = "command", .type = F_FN, .required = 1, .fn = read_command,
	 .help = "argv list, no shell; {param} and built-in placeholders substituted"},
	{.key = "env", .type = F_FN, .fn = read_env,
	 .help = "map of extra environment variables (values may hold placeholders)"},
	{.key = "workdir", .type = F_STR, .off = OFF(trial.workdir),
	 .help = "working folder; relative to the spec's folder (default: the spec's folder)"},
	{.key = "executor", .type = F_ENUM, .off = OFF(trial.executor), NAMES(executor_names),
	 .help = "process | podman | docker | slurm (default process)"},
	{.key = "image", .type = F_STR, .off = OFF(trial.image), .help = "container image (podman, docker)"},
	{.key = "network", .type = F_STR, .off = OFF(trial.network),
	 .help = "container network (default none)"},
	{.key = "mounts", .type = F_FN, .fn = read_mounts,
	 .help = "containers: bind mounts, \"HOST[:TARGET][:ro|rw]\" (${VAR} expanded)"},
	{.key = "privileges", .type = F_SUB, .sub = &privileges_section,
	 .help = "containers: what a trial may do beyond the least privilege (default nothing)"},
	{.key = "mode", .type = F_ENUM, .off = OFF(trial.mode), NAMES(trial_mode_names),
	 .help = "oneshot | warm | worker (default oneshot)"},
	{.key = "slurm", .type = F_SUB, .sub = &slurm_section,
	 .help = "executor slurm: where and how the jobs are submitted"},
	{.key = "resources", .type = F_SUB, .sub = &resources_section, .help = "what one segment needs"},
	{.key = "timeout", .type = F_DUR, .off = OFF(trial.timeout_s),
	 .help = "per segment: seconds or 30s, 5m, 2h, 1h30m; 0 = none (default 0)"},
	{.key = "retries", .type = F_INT, .off = OFF(trial.retries), .lo = 0, .hi = 100,
	 .help = "times a failed segment is run again, 0-100 (default 0)"},
	{.key = "fail_fast", .type = F_INT, .off = OFF(trial.fail_fast), .lo = 0, .hi = INT_MAX,
	 .help = "stop when this many trials failed the same way before any segment completed; "
		 "0 = never (default 3)"},
	{.key = "shape_params", .type = F_FN, .fn = read_shape_params,
	 .help = "parameters that change memory use (default: all)"},
};

static const field sharing_rows[] = {
	{.key = "policy", .type = F_ENUM, .off = OFF(sharing.policy), NAMES(sched_policy_names),
	 .help = "exclusive | pack | relish | tiresias | gandiva (default relish)"},
	{.key = "memory_margin", .type = F_NUM, .off = OFF(sharing.memory_margin), .lo = 0, .hi = 10,
	 .help = "headroom over measured memory peaks, 0-10 (default 0.2 = 20 %)"},
	{.key = "order", .type = F_ENUM, .off = OFF(sharing.order), NAMES(sched_order_names),
	 .help = "queue order: default | fifo | las | tiresias | fair (default: las under relish, fifo otherwise)"},
	{.key = "foreign", .type = F_ENUM, .off = OFF(sharing.foreign), NAMES(sched_foreign_names),
	 .help = "GPUs that other processes use: share their free memory, or avoid them (default share)"},
	{.key = "foreign_wait", .type = F_DUR, .off = OFF(sharing.foreign_wait_s),
	 .help = "most a segment waits for memory other processes hold, then its trial fails; 0 = no limit (default 0)"},
};

static const section objective_section = SECTION(objective_rows);
static const section search_section = SECTION(search_rows);
static const section schedule_section = SECTION(schedule_rows);
static const section trial_section = SECTION(trial_rows);
static const section sharing_section = SECTION(sharing_rows);

static const field top_rows[] = {
	{.key = "name", .type = F_FN, .required = 1, .fn = read_name,
	 .help = "experiment name: 1-64 of A-Z a-z 0-9 _ . -, not all digits"},
	{.key = "objective", .type = F_FN, .required = 1, .fn = read_objective,
	 .help = "what to optimise: {metric, mode}, or a list of them for several objectives"},
	{.key = "constraints", .type = F_FN, .fn = read_constraints,
	 .help = "metrics a trial must keep <= 0 (a name) or within {metric, min, max}; "
		 "infeasible trials are never on the front"},
	{.key = "search", .type = F_SUB, .required = 1, .sub = &search_section, .help = "how to pick trials"},
	{.key = "schedule", .type = F_SUB, .sub = &schedule_section, .help = "early stopping and segments"},
	{.key = "trial", .type = F_SUB, .required = 1, .sub = &trial_section, .help = "how to run one trial"},
	{.key = "sharing", .type = F_SUB, .sub = &sharing_section, .help = "how segments share devices"},
};
static const section top_section = SECTION(top_rows);

/* ---- readers for F_FN rows --------------------------------------------- */

static int nomem(sx *x)
{
	return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
}

int spec_name_valid(const char *name)
{
	size_t len = strlen(name);
	int ok = len >= 1 && len <= 64, digits = 1;
	for (size_t i = 0; ok && i < len; i++) {
		ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
		     (name[i] >= '0' && name[i] <= '9') || strchr("_.-", name[i]);
		digits &= name[i] >= '0' && name[i] <= '9';
	}
	/* all digits reads as an id wherever an experiment is named
	 * (relish cancel 4): such a name would be another's shadow */
	return ok && !digits;
}

int spec_rename(spec *s, const char *name, rl_err *err)
{
	if (!spec_name_valid(name))
		return rl_err_set(err, RL_ESPEC, "experiment name: expected 1-64 characters of "
				  "A-Z a-z 0-9 _ . -, not all digits, got \"%s\"", name);
	char *n = strdup(name);
	if (!n)
		return rl_err_set(err, RL_ENOMEM, "experiment name");
	free(s->name);
	s->name = n;
	return 0;
}

static int read_name(sx *x, const node *v, spec *s)
{
	char *name;
	int rc = sx_string(x, v, &name);
	if (rc < 0)
		return rc;
	if (!spec_name_valid(name)) {
		free(name);
		char got[96];
		return sx_fail(x, v, "expected 1-64 characters of A-Z a-z 0-9 _ . -, not all digits (a "
			       "number names an experiment by id), got %s", sx_got(v, got, sizeof got));
	}
	free(s->name);
	s->name = name;
	return 0;
}

static int read_space(sx *x, const node *v, spec *s)
{
	space sp;
	int rc = spec_parse_space(x, v, &sp);
	if (rc < 0)
		return rc;
	space_fini(&s->search.space);
	s->search.space = sp;
	return 0;
}

/* A list of scalars as strings (numbers keep their text: ["--epochs", 10]). */
static int read_string_list(sx *x, const node *v, int allow_empty, size_t *n_out, char ***out)
{
	char got[96];
	if (v->kind != NODE_SEQ || (!allow_empty && v->n == 0))
		return sx_fail(x, v, "expected a non-empty list of strings, got %s",
			       v->kind == NODE_SEQ ? "an empty list" : sx_got(v, got, sizeof got));
	char **list = calloc(v->n + 1, sizeof *list);
	if (!list)
		return nomem(x);
	for (size_t i = 0; i < v->n; i++) {
		size_t saved = sx_push_index(x, i);
		int rc = sx_string(x, v->items[i], &list[i]);
		sx_pop(x, saved);
		if (rc < 0) {
			for (size_t j = 0; j < i; j++)
				free(list[j]);
			free(list);
			return rc;
		}
	}
	*n_out = v->n;
	*out = list;
	return 0;
}

static void free_list(size_t n, char **list)
{
	for (size_t i = 0; list && i < n; i++)
		free(list[i]);
	free(list);
}

static int read_sbatch_args(sx *x, const node *v, spec *s)
{
	size_t n;
	char **list;
	int rc = read_string_list(x, v, 1, &n, &list);
	if (rc < 0)
		return rc;
	free_list(s->trial.slurm.n_sbatch_args, s->trial.slurm.sbatch_args);
	s->trial.slurm.n_sbatch_args = n;
	s->trial.slurm.sbatch_args = list;
	return 0;
}

static int read_command(sx *x, const node *v, spec *s)
{
	size_t n;
	char **argv;
	int rc = read_string_list(x, v, 0, &n, &argv);
	if (rc < 0)
		return rc;
	if (!argv[0][0]) {
		free_list(n, argv);
		size_t saved = sx_push_index(x, 0);
		rc = sx_fail(x, v->items[0], "expected a program name, got an empty string");
		sx_pop(x, saved);
		return rc;
	}
	free_list(s->trial.argc, s->trial.argv);
	s->trial.argc = n;
	s->trial.argv = argv;
	return 0;
}

/* Only the shape here (a list of strings): the items are parsed in
 * spec_check, which knows the spec's folder for relative host paths. */
static int read_mounts(sx *x, const node *v, spec *s)
{
	(void)s;
	size_t n;
	char **list;
	int rc = read_string_list(x, v, 1, &n, &list);
	if (rc == 0)
		free_list(n, list);
	return rc;
}

static int read_shape_params(sx *x, const node *v, spec *s)
{
	size_t n;
	char **list;
	int rc = read_string_list(x, v, 1, &n, &list);
	if (rc < 0)
		return rc;
	free_list(s->trial.n_shape_params, s->trial.shape_params);
	s->trial.n_shape_params = n;
	s->trial.shape_params = list;
	return 0;
}

/* Linux capabilities by name (capability(7)); trial.privileges takes them
 * with or without CAP_, in any case. */
static const char *const cap_names[] = {
	"CHOWN", "DAC_OVERRIDE", "DAC_READ_SEARCH", "FOWNER", "FSETID", "KILL", "SETGID",
	"SETUID", "SETPCAP", "LINUX_IMMUTABLE", "NET_BIND_SERVICE", "NET_BROADCAST",
	"NET_ADMIN", "NET_RAW", "IPC_LOCK", "IPC_OWNER", "SYS_MODULE", "SYS_RAWIO",
	"SYS_CHROOT", "SYS_PTRACE", "SYS_PACCT", "SYS_ADMIN", "SYS_BOOT", "SYS_NICE",
	"SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG", "MKNOD", "LEASE", "AUDIT_WRITE",
	"AUDIT_CONTROL", "SETFCAP", "MAC_OVERRIDE", "MAC_ADMIN", "SYSLOG", "WAKE_ALARM",
	"BLOCK_SUSPEND", "AUDIT_READ", "PERFMON", "BPF", "CHECKPOINT_RESTORE",
};

static int read_capabilities(sx *x, const node *v, spec *s)
{
	size_t n;
	char **list;
	int rc = read_string_list(x, v, 1, &n, &list);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		char up[64];
		const char *name = list[i];
		if (!strncasecmp(name, "CAP_", 4))
			name += 4;
		size_t k = 0;
		for (; name[k] && k + 1 < sizeof up; k++)
			up[k] = (char)toupper((unsigned char)name[k]);
		up[k] = '\0';
		const char *found = NULL;
		for (size_t c = 0; c < sizeof cap_names / sizeof *cap_names; c++)
			if (!strcmp(up, cap_names[c]))
				found = cap_names[c];
		size_t saved = sx_push_index(x, i);
		if (!found) {
			const char *sugg = sx_suggest(up, cap_names, sizeof cap_names / sizeof *cap_names);
			if (sugg)
				rc = sx_fail(x, v->items[i], "expected a Linux capability name, got \"%s\" "
					     "(did you mean %s?)", list[i], sugg);
			else
				rc = sx_fail(x, v->items[i], "expected a Linux capability name such as NET_RAW "
					     "or SYS_PTRACE (capabilities(7)), got \"%s\"", list[i]);
		} else {
			/* A capability named twice is refused, not merged: the
			 * list is what the service's admission reads. */
			for (size_t j = 0; j < i && rc == 0; j++)
				if (!strcmp(list[j], found))
					rc = sx_fail(x, v->items[i], "expected each capability once, got %s "
						     "again (item %zu names it)", found, j);
			char *dup = rc == 0 ? strdup(found) : NULL;
			if (rc == 0 && !dup) {
				rc = nomem(x);
			} else if (rc == 0) {
				free(list[i]);
				list[i] = dup;
			}
		}
		sx_pop(x, saved);
	}
	if (rc < 0) {
		free_list(n, list);
		return rc;
	}
	spec_privileges *p = &s->trial.privileges;
	free_list(p->n_capabilities, p->capabilities);
	p->n_capabilities = n;
	p->capabilities = list;
	return 0;
}

/* "root", UID or UID:GID (numbers); kept as "UID:GID", a lone UID taking
 * the same number as its group. */
static int read_user(sx *x, const node *v, spec *s)
{
	char *text;
	int rc = sx_string(x, v, &text);
	if (rc < 0)
		return rc;
	unsigned long uid = 0, gid = 0;
	int ok = 0;
	if (!strcmp(text, "root")) {
		ok = 1;
	} else {
		char *end;
		errno = 0;
		if (isdigit((unsigned char)text[0])) {
			uid = strtoul(text, &end, 10);
			gid = uid;
			if (!errno && *end == ':' && isdigit((unsigned char)end[1]))
				gid = strtoul(end + 1, &end, 10);
			ok = !errno && !*end && uid <= 4294967294UL && gid <= 4294967294UL;
		}
	}
	if (!ok) {
		char got[96];
		rc = sx_fail(x, v, "expected root, a numeric UID or UID:GID, got %s", sx_got(v, got, sizeof got));
		free(text);
		return rc;
	}
	free(text);
	char buf[32];
	snprintf(buf, sizeof buf, "%lu:%lu", uid, gid);
	char *u = strdup(buf);
	if (!u)
		return nomem(x);
	free(s->trial.privileges.user);
	s->trial.privileges.user = u;
	return 0;
}

static int read_env(sx *x, const node *v, spec *s)
{
	char got[96];
	if (v->kind != NODE_MAP)
		return sx_fail(x, v, "expected a map of variable names to values, got %s", sx_got(v, got, sizeof got));
	env_var *env = calloc(v->n ? v->n : 1, sizeof *env);
	if (!env)
		return nomem(x);
	int rc = 0;
	size_t i;
	for (i = 0; i < v->n && rc == 0; i++) {
		const node *k = v->keys[i];
		size_t saved = sx_push(x, k->text);
		if (!sx_is_identifier(k->text))
			rc = sx_fail(x, k, "expected a variable name of letters, digits and '_'");
		else if (!strncmp(k->text, "RELISH_", 7))
			rc = sx_fail(x, k, "names starting with RELISH_ are set by relish itself");
		if (rc == 0 && !(env[i].name = strdup(k->text)))
			rc = nomem(x);
		if (rc == 0)
			rc = sx_string(x, v->items[i], &env[i].value);
		sx_pop(x, saved);
	}
	if (rc < 0) {
		for (size_t j = 0; j < i; j++) {
			free(env[j].name);
			free(env[j].value);
		}
		free(env);
		return rc;
	}
	for (size_t j = 0; j < s->trial.n_env; j++) {
		free(s->trial.env[j].name);
		free(s->trial.env[j].value);
	}
	free(s->trial.env);
	s->trial.env = env;
	s->trial.n_env = v->n;
	return 0;
}

static int read_multivariate(sx *x, const node *v, spec *s)
{
	return sx_bool(x, v, &s->search.multivariate);
}

static int read_gpus(sx *x, const node *v, spec *s)
{
	double g;
	const char *expect = "0, a fraction below 1 or a whole number of GPUs";
	int rc = sx_number(x, v, expect, &g);
	if (rc < 0)
		return rc;
	if (g < 0 || g > 1024 || (g > 1 && g != floor(g))) {
		char got[96];
		return sx_fail(x, v, "expected %s, got %s", expect, sx_got(v, got, sizeof got));
	}
	s->trial.resources.gpus = g;
	return 0;
}

/* ---- the generic walk -------------------------------------------------- */

static int read_field(sx *x, const field *f, const node *v, spec *s);
static int parse_section(sx *x, const node *m, const section *sec, spec *s);

/* ---- objective: a map, or a list of maps; constraints ------------------ */

static void free_objectives(size_t n, spec_objective *o)
{
	for (size_t i = 0; o && i < n; i++)
		free(o[i].metric);
	free(o);
}

/* One {metric, mode} map through the objective section's rows, read into a
 * scratch spec (the rows write s->objective) and moved to *out. */
static int read_one_objective(sx *x, const node *v, spec_objective *out)
{
	spec tmp;
	memset(&tmp, 0, sizeof tmp);
	int rc = parse_section(x, v, &objective_section, &tmp);
	if (rc < 0) {
		free(tmp.objective.metric);
		return rc;
	}
	out->metric = tmp.objective.metric;
	out->mode = tmp.objective.mode;
	return 0;
}

/*
 * objective: {metric, mode} (one objective, as always), or a list of such
 * maps (several: relish keeps their Pareto front).  A metric named twice is
 * refused: the second could only repeat or contradict the first.
 */
static int read_objective(sx *x, const node *v, spec *s)
{
	char got[96];
	if (v->kind == NODE_MAP) {
		int rc = parse_section(x, v, &objective_section, s);
		return rc;
	}
	if (v->kind != NODE_SEQ || v->n == 0)
		return sx_fail(x, v, "expected a map {metric, mode} or a non-empty list of them, got %s",
			       v->kind == NODE_SEQ ? "an empty list" : sx_got(v, got, sizeof got));
	if (v->n > SPEC_OBJECTIVES_MAX)
		return sx_fail(x, v, "expected at most %d objectives, got %zu", SPEC_OBJECTIVES_MAX, v->n);
	spec_objective *all = calloc(v->n, sizeof *all);
	if (!all)
		return nomem(x);
	int failed = 0;
	for (size_t i = 0; i < v->n; i++) {
		size_t saved = sx_push_index(x, i);
		int rc = read_one_objective(x, v->items[i], &all[i]);
		sx_push(x, "metric");
		for (size_t j = 0; rc == 0 && j < i; j++)
			if (all[j].metric && !strcmp(all[j].metric, all[i].metric))
				rc = sx_fail(x, node_get(v->items[i], "metric"),
					     "expected each metric once, got \"%s\" again (objective[%zu] names it)",
					     all[i].metric, j);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC) {
			free_objectives(v->n, all);
			return rc;
		}
		if (rc < 0)
			failed = rc;
	}
	if (failed < 0) {
		free_objectives(v->n, all);
		return failed;
	}
	free(s->objective.metric);
	s->objective.metric = all[0].metric;
	s->objective.mode = all[0].mode;
	free_objectives(s->n_more_objectives, s->more_objectives);
	s->n_more_objectives = v->n - 1;
	s->more_objectives = NULL;
	if (v->n > 1) {
		s->more_objectives = all; /* shifted down by one below */
		memmove(all, all + 1, (v->n - 1) * sizeof *all);
	} else {
		free(all);
	}
	return 0;
}

static void free_constraints(size_t n, spec_constraint *c)
{
	for (size_t i = 0; c && i < n; i++)
		free(c[i].metric);
	free(c);
}

/* One constraint: a metric's name (it must stay <= 0), or a map
 * {metric, min, max} with at least one bound. */
static int read_one_constraint(sx *x, const node *v, spec_constraint *out)
{
	char got[96];
	out->lo = -INFINITY;
	out->hi = 0;
	if (v->kind == NODE_SCALAR)
		return sx_string(x, v, &out->metric);
	if (v->kind != NODE_MAP)
		return sx_fail(x, v, "expected a metric name (kept <= 0) or a map {metric, min, max}, got %s",
			       sx_got(v, got, sizeof got));
	static const char *const keys[] = {"metric", "min", "max"};
	int failed = sx_check_keys(x, v, keys, 3), rc;
	const node *m = node_get(v, "metric"), *lo = node_get(v, "min"), *hi = node_get(v, "max");
	if (!m)
		failed = sx_fail(x, v, "missing required key \"metric\"");
	else {
		size_t saved = sx_push(x, "metric");
		if ((rc = sx_string(x, m, &out->metric)) < 0)
			failed = rc;
		sx_pop(x, saved);
	}
	if (!lo && !hi && failed == 0) /* not after "maxx: did you mean max?" */
		failed = sx_fail(x, v, "expected a bound: min, max or both");
	out->hi = INFINITY;
	const node *b[2] = {lo, hi};
	double *dst[2] = {&out->lo, &out->hi};
	for (int k = 0; k < 2; k++) {
		if (!b[k])
			continue;
		size_t saved = sx_push(x, k ? "max" : "min");
		double d;
		if ((rc = sx_number(x, b[k], "a finite number", &d)) < 0)
			failed = rc;
		else if (!isfinite(d))
			failed = sx_fail(x, b[k], "expected a finite number, got %s", sx_got(b[k], got, sizeof got));
		else
			*dst[k] = d;
		sx_pop(x, saved);
	}
	if (failed == 0 && out->lo > out->hi) {
		size_t saved = sx_push(x, "min");
		failed = sx_fail(x, lo, "expected a number <= max (%g), got %s", out->hi, sx_got(lo, got, sizeof got));
		sx_pop(x, saved);
	}
	if (failed < 0) {
		free(out->metric);
		out->metric = NULL;
	}
	return failed;
}

static int read_constraints(sx *x, const node *v, spec *s)
{
	char got[96];
	if (v->kind != NODE_SEQ)
		return sx_fail(x, v, "expected a list of metric names or {metric, min, max} maps, got %s",
			       sx_got(v, got, sizeof got));
	if (v->n > SPEC_CONSTRAINTS_MAX)
		return sx_fail(x, v, "expected at most %d constraints, got %zu", SPEC_CONSTRAINTS_MAX, v->n);
	spec_constraint *all = calloc(v->n ? v->n : 1, sizeof *all);
	if (!all)
		return nomem(x);
	int failed = 0;
	for (size_t i = 0; i < v->n; i++) {
		size_t saved = sx_push_index(x, i);
		int rc = read_one_constraint(x, v->items[i], &all[i]);
		if (v->items[i]->kind == NODE_MAP)
			sx_push(x, "metric");
		for (size_t j = 0; rc == 0 && j < i; j++)
			if (all[j].metric && !strcmp(all[j].metric, all[i].metric))
				rc = sx_fail(x, v->items[i]->kind == NODE_MAP ? node_get(v->items[i], "metric")
									     : v->items[i],
					     "expected each metric once, got \"%s\" again (constraints[%zu] names "
					     "it; one map takes both bounds)", all[i].metric, j);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC) {
			free_constraints(v->n, all);
			return rc;
		}
		if (rc < 0)
			failed = rc;
	}
	if (failed < 0) {
		free_constraints(v->n, all);
		return failed;
	}
	free_constraints(s->n_constraints, s->constraints);
	s->n_constraints = v->n;
	s->constraints = all;
	return 0;
}

size_t spec_n_objectives(const spec *s)
{
	return 1 + s->n_more_objectives;
}

spec_objective spec_objective_at(const spec *s, size_t i)
{
	if (i == 0)
		return (spec_objective){s->objective.metric, s->objective.mode};
	return s->more_objectives[i - 1];
}

double spec_constraint_violation(const spec_constraint *c, double value)
{
	if (isnan(value))
		return INFINITY;
	return value < c->lo ? c->lo - value : value > c->hi ? value - c->hi : 0;
}

static int parse_section(sx *x, const node *m, const section *sec, spec *s)
{
	char got[96];
	if (m->kind != NODE_MAP)
		return sx_fail(x, m, "expected a map, got %s", sx_got(m, got, sizeof got));
	const char *keys[16];
	for (size_t i = 0; i < sec->n; i++)
		keys[i] = sec->fields[i].key;
	/* Every key is read even after an error, so that all of a spec's
	 * mistakes are reported at once (sx_finish); only running out of
	 * memory stops the walk. */
	int failed = sx_check_keys(x, m, keys, sec->n), rc;
	for (size_t i = 0; i < m->n; i++) {
		const field *f = NULL;
		for (size_t j = 0; j < sec->n && !f; j++)
			if (!strcmp(sec->fields[j].key, m->keys[i]->text))
				f = &sec->fields[j];
		if (!f)
			continue; /* unknown: reported above */
		size_t saved = sx_push(x, f->key);
		rc = read_field(x, f, m->items[i], s);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC)
			return rc;
		if (rc < 0)
			failed = rc;
	}
	for (size_t j = 0; j < sec->n; j++) {
		if (!sec->fields[j].required || node_get(m, sec->fields[j].key))
			continue;
		/* "serach" already got "did you mean search?": no second
		 * error for the same typo. */
		int typo = 0;
		for (size_t i = 0; i < m->n && !typo; i++)
			typo = sx_suggest(m->keys[i]->text, keys, sec->n) == sec->fields[j].key &&
			       strcmp(m->keys[i]->text, sec->fields[j].key) != 0;
		if (!typo)
			failed = sx_fail(x, m, "missing required key \"%s\"", sec->fields[j].key);
	}
	return failed;
}

static int read_field(sx *x, const field *f, const node *v, spec *s)
{
	char *base = (char *)s;
	char expect[96];
	int rc, iv;
	int64_t i64;
	double d;
	switch (f->type) {
	case F_STR: {
		char *str;
		if ((rc = sx_string(x, v, &str)) < 0)
			return rc;
		char **dst = (char **)(base + f->off);
		free(*dst);
		*dst = str;
		return 0;
	}
	case F_INT:
		if ((rc = sx_int(x, v, (int64_t)f->lo, (int64_t)f->hi == INT_MAX ? INT64_MAX : (int64_t)f->hi,
				 NULL, &i64)) < 0)
			return rc;
		if (i64 > INT_MAX) {
			char got[96];
			return sx_fail(x, v, "expected an integer <= %d, got %s", INT_MAX, sx_got(v, got, sizeof got));
		}
		*(int *)(base + f->off) = (int)i64;
		return 0;
	case F_U64:
		if ((rc = sx_int(x, v, 0, INT64_MAX, NULL, &i64)) < 0)
			return rc;
		*(uint64_t *)(base + f->off) = (uint64_t)i64;
		return 0;
	case F_NUM:
		if (isinf(f->hi))
			snprintf(expect, sizeof expect, "a number %s %g", f->lo_open ? ">" : ">=", f->lo);
		else
			snprintf(expect, sizeof expect, "a number %s %g and <= %g", f->lo_open ? ">" : ">=", f->lo, f->hi);
		if ((rc = sx_number(x, v, expect, &d)) < 0)
			return rc;
		if (d < f->lo || (f->lo_open && d == f->lo) || d > f->hi) {
			char got[96];
			return sx_fail(x, v, "expected %s, got %s", expect, sx_got(v, got, sizeof got));
		}
		*(double *)(base + f->off) = d;
		return 0;
	case F_ENUM:
		if ((rc = sx_enum(x, v, f->names, f->n_names, &iv)) < 0)
			return rc;
		*(int *)(base + f->off) = iv;
		return 0;
	case F_MEM:
		return sx_memory(x, v, (uint64_t *)(base + f->off));
	case F_DUR:
		return sx_duration(x, v, (double *)(base + f->off));
	case F_BOOL:
		return sx_bool(x, v, (int *)(base + f->off));
	case F_SUB:
		return parse_section(x, v, f->sub, s);
	case F_FN:
		return f->fn(x, v, s);
	}
	return rl_err_set(x->err, RL_EINTERNAL, "unknown field type");
}

/* ---- checks across keys ------------------------------------------------ */

/* Node at a dotted path below root, or NULL. */
static const node *at_path(const node *root, const char *a, const char *b)
{
	const node *n = node_get(root, a);
	return b ? node_get(n, b) : n;
}

struct ph_check {
	const space *sp;
	char unknown[65];
};

static int ph_lookup(const char *name, char *buf, size_t len, void *ctx)
{
	struct ph_check *c = ctx;
	if (spec_is_builtin(name) || space_find(c->sp, name) >= 0) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	snprintf(c->unknown, sizeof c->unknown, "%s", name);
	return -1;
}

static const char *const builtin_names[] = {"trial_id", "checkpoint_dir", "resource_from", "resource_to"};

static int check_template(sx *x, const spec *s, const node *at, const char *tmpl)
{
	struct ph_check c = {.sp = &s->search.space};
	rl_err e;
	rl_err_clear(&e);
	char *out = NULL;
	if (spec_expand(tmpl, ph_lookup, &c, &out, &e) == 0) {
		free(out);
		return spec_check_inactive_placeholders(x, &s->search.space, at, tmpl);
	}
	if (!c.unknown[0])
		return sx_fail(x, at, "%s", e.msg);
	/* Did you mean: over the parameters and the built-ins. */
	size_t n = s->search.space.n + 4;
	const char **cands = calloc(n, sizeof *cands);
	if (!cands)
		return nomem(x);
	for (size_t i = 0; i < s->search.space.n; i++)
		cands[i] = s->search.space.params[i].name;
	for (size_t i = 0; i < 4; i++)
		cands[s->search.space.n + i] = builtin_names[i];
	const char *sugg = sx_suggest(c.unknown, cands, n);
	int rc;
	if (sugg) {
		rc = sx_fail(x, at, "unknown placeholder {%s} (did you mean {%s}?)", c.unknown, sugg);
	} else {
		char list[400] = "";
		for (size_t i = 0; i < n; i++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s{%s}", i ? ", " : "", cands[i]);
		rc = sx_fail(x, at, "unknown placeholder {%s} (expected a parameter or built-in: %s)", c.unknown, list);
	}
	free(cands);
	return rc;
}

/* Worker mode: a placeholder names something of one trial or one segment,
 * while a worker process serves one assignment after another.  0 when tmpl
 * has none ("{{" is a literal brace), else the sx_fail code. */
static int ph_first(const char *name, char *buf, size_t len, void *ctx)
{
	(void)buf;
	(void)len;
	snprintf(ctx, 65, "%s", name);
	return -1;
}

static int check_worker_template(sx *x, const node *at, const char *tmpl)
{
	char name[65] = "";
	char *out = NULL;
	if (spec_expand(tmpl, ph_first, name, &out, NULL) == 0) {
		free(out);
		return 0;
	}
	return sx_fail(x, at, "expected no placeholder in worker mode, got {%s} (a worker process "
		       "serves one trial after another and reads each assignment, with its "
		       "parameters, trial id, checkpoint folder and segment, on stdin: "
		       "docs/trials.md; oneshot and warm take placeholders)", name);
}

static char *path_join(const char *dir, const char *rel)
{
	if (rel[0] == '/')
		return strdup(rel);
	size_t n = strlen(dir) + strlen(rel) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", rel);
	return p;
}

static int spec_check(sx *x, const node *root, const char *dir, spec *s)
{
	char got[96];
	size_t saved;
	int rc = 0, failed = 0;
	/* Each check records its error and the next one runs; a check whose
	 * inputs already failed to parse is skipped (it would only repeat
	 * that error in other words). */
	int space_ok = !sx_failed_under(x, "search.space") && s->search.space.n > 0;

	/* schedule */
	const node *sched = node_get(root, "schedule");
	if (!sx_failed_under(x, "schedule")) {
		if (s->schedule.algorithm != SCHED_NONE && !at_path(root, "schedule", "max")) {
			saved = sx_push(x, "schedule");
			failed = sx_fail(x, sched, "missing required key \"max\" (algorithm %s needs the largest resource)",
					 spec_schedule_name(s->schedule.algorithm));
			sx_pop(x, saved);
		} else if (s->schedule.min > s->schedule.max) {
			const node *at = at_path(root, "schedule", "min");
			saved = sx_push(x, at ? "schedule.min" : "schedule.max");
			if (at)
				failed = sx_fail(x, at, "expected a number <= max (%g), got %s", s->schedule.max,
						 sx_got(at, got, sizeof got));
			else
				failed = sx_fail(x, at_path(root, "schedule", "max"),
						 "expected a number >= min (%g), got %g", s->schedule.min,
						 s->schedule.max);
			sx_pop(x, saved);
		}
	}
	/* schedule.segment with asha or hyperband adds boundaries between rungs
	 * (to re-pack or checkpoint long segments); decisions stay at rungs. */

	if ((rc = spec_check_conditions(x, s, at_path(root, "search", "algorithm"))) < 0) {
		if (rc != RL_ESPEC)
			return rc;
		failed = rc;
	}
	/* Several objectives: gp models one (tpe, random, sobol and grid take
	 * any number). */
	if (spec_n_objectives(s) > 1 && s->search.algorithm == SEARCH_GP &&
	    !sx_failed_under(x, "objective")) {
		saved = sx_push(x, "search.algorithm");
		failed = sx_fail(x, at_path(root, "search", "algorithm"),
				 "expected tpe, random, sobol or grid with several objectives (objective "
				 "lists %zu), got gp (it models one)", spec_n_objectives(s));
		sx_pop(x, saved);
	}
	/* Several objectives: the univariate estimator unless the spec says
	 * otherwise (docs/search.md, "Several objectives": the joint one is
	 * worse there). */
	if (spec_n_objectives(s) > 1 && !at_path(root, "search", "multivariate"))
		s->search.multivariate = 0;
	/* grid: each axis bounded (counted by arithmetic: spec_grid_size) */
	if (space_ok && s->search.algorithm == SEARCH_GRID) {
		const node *sn = at_path(root, "search", "space");
		for (size_t i = 0; i < s->search.space.n; i++) {
			const param_def *p = &s->search.space.params[i];
			uint64_t n = sampler_grid_axis_count(p);
			if (n <= SAMPLER_GRID_AXIS_MAX)
				continue;
			const node *pn = node_get(sn, p->name);
			const char *key = node_get(pn, "step") ? "step" : "grid_points";
			const node *at = node_get(pn, key);
			char path[300];
			snprintf(path, sizeof path, "search.space.%s%s%s", p->name, at ? "." : "",
				 at ? key : "");
			saved = sx_push(x, path);
			rc = sx_fail(x, at ? at : pn ? pn : sn,
				     "grid search would take %s%llu values of %s (at most %u per "
				     "parameter): a larger step or fewer grid_points",
				     n == UINT64_MAX ? "more than " : "", (unsigned long long)n,
				     p->name, SAMPLER_GRID_AXIS_MAX);
			sx_pop(x, saved);
			failed = rc;
			break;
		}
	}
	/* grid: the default budget is the whole grid */
	if (space_ok && s->search.algorithm == SEARCH_GRID && !at_path(root, "search", "max_trials")) {
		uint64_t g = spec_grid_size(&s->search.space);
		s->search.max_trials = g > INT_MAX ? INT_MAX : (int)g;
	}

	/* trial */
	const node *exe = at_path(root, "trial", "executor");
	if (!sx_failed_under(x, "trial.executor") && !sx_failed_under(x, "trial.image") &&
	    (s->trial.executor == EXEC_PODMAN || s->trial.executor == EXEC_DOCKER) && !s->trial.image) {
		saved = sx_push(x, "trial");
		failed = sx_fail(x, exe, "missing required key \"image\" (executor %s runs a container image)",
				 spec_executor_name(s->trial.executor));
		sx_pop(x, saved);
	}
	/* A plain image reference only (spec_image.c): one beginning with '-'
	 * would reach the engine's command line as an option, and a transport
	 * (docker-archive:PATH) would have a root engine read a file of the
	 * submitter's choosing. */
	const node *img = at_path(root, "trial", "image");
	const char *img_why = img && s->trial.image ? spec_image_problem(s->trial.image) : NULL;
	if (img_why) {
		saved = sx_push(x, "trial.image");
		failed = sx_fail(x, img, "expected an image reference, [registry/]name[:tag][@digest]: "
				 "%s, got %s", img_why, s->trial.image);
		sx_pop(x, saved);
	}
	const node *prv = at_path(root, "trial", "privileges");
	if (prv && s->trial.executor != EXEC_PODMAN && s->trial.executor != EXEC_DOCKER) {
		saved = sx_push(x, "trial.privileges");
		rc = sx_fail(x, prv, "applies to executors podman and docker only (executor is %s; "
			     "a process trial runs as relish's own process)",
			     spec_executor_name(s->trial.executor));
		sx_pop(x, saved);
		return rc;
	}
	s->trial.executor_given = exe != NULL;
	const node *slm = at_path(root, "trial", "slurm");
	if (slm && s->trial.executor != EXEC_SLURM) {
		saved = sx_push(x, "trial.slurm");
		rc = sx_fail(x, slm, "applies to executor slurm only (executor is %s)",
			     spec_executor_name(s->trial.executor));
		sx_pop(x, saved);
		return rc;
	}
	rl_err why = {0};
	if (spec_executor_mode_check(s->trial.executor, s->trial.mode, &why) < 0) {
		saved = sx_push(x, "trial.mode");
		rc = sx_fail(x, at_path(root, "trial", "mode"), "%s", why.msg);
		sx_pop(x, saved);
		return rc;
	}
	const node *mnt = at_path(root, "trial", "mounts");
	if (mnt && !sx_failed_under(x, "trial.mounts") && !sx_failed_under(x, "trial.executor")) {
		saved = sx_push(x, "trial.mounts");
		if (s->trial.executor != EXEC_PODMAN && s->trial.executor != EXEC_DOCKER)
			rc = sx_fail(x, mnt, "applies to executors podman and docker only (executor is %s)",
				     spec_executor_name(s->trial.executor));
		else
			rc = spec_parse_mounts(x, mnt, dir, &s->trial.mounts, &s->trial.n_mounts);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC)
			return rc;
		if (rc < 0)
			failed = rc;
	}
	const node *cmd = at_path(root, "trial", "command");
	for (size_t i = 0; space_ok && !sx_failed_under(x, "trial.command") && i < s->trial.argc; i++) {
		saved = sx_push(x, "trial.command");
		sx_push_index(x, i);
		rc = check_template(x, s, cmd->items[i], s->trial.argv[i]);
		if (rc == 0 && s->trial.mode == TRIAL_MODE_WORKER)
			rc = check_worker_template(x, cmd->items[i], s->trial.argv[i]);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC)
			return rc;
		if (rc < 0)
			failed = rc;
	}
	const node *env = at_path(root, "trial", "env");
	for (size_t i = 0; space_ok && !sx_failed_under(x, "trial.env") && i < s->trial.n_env; i++) {
		saved = sx_push(x, "trial.env");
		sx_push(x, s->trial.env[i].name);
		rc = check_template(x, s, env->items[i], s->trial.env[i].value);
		if (rc == 0 && s->trial.mode == TRIAL_MODE_WORKER)
			rc = check_worker_template(x, env->items[i], s->trial.env[i].value);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC)
			return rc;
		if (rc < 0)
			failed = rc;
	}
	const node *shp = at_path(root, "trial", "shape_params");
	for (size_t i = 0; space_ok && i < s->trial.n_shape_params; i++) {
		const char *name = s->trial.shape_params[i];
		if (space_find(&s->search.space, name) >= 0)
			continue;
		const char **cands = calloc(s->search.space.n, sizeof *cands);
		if (!cands)
			return nomem(x);
		for (size_t j = 0; j < s->search.space.n; j++)
			cands[j] = s->search.space.params[j].name;
		const char *sugg = sx_suggest(name, cands, s->search.space.n);
		saved = sx_push(x, "trial.shape_params");
		sx_push_index(x, i);
		if (sugg)
			failed = sx_fail(x, shp->items[i], "\"%s\" is not a parameter of search.space (did you mean \"%s\"?)",
					 name, sugg);
		else
			failed = sx_fail(x, shp->items[i], "\"%s\" is not a parameter of search.space", name);
		sx_pop(x, saved);
		free(cands);
	}

	/* workdir: absolute, relative to the spec's folder */
	if (s->trial.workdir && !s->trial.workdir[0]) {
		saved = sx_push(x, "trial.workdir");
		failed = sx_fail(x, at_path(root, "trial", "workdir"), "expected a folder, got an empty string");
		sx_pop(x, saved);
		return failed;
	}
	char *wd = path_join(dir, s->trial.workdir ? s->trial.workdir : ".");
	if (!wd)
		return nomem(x);
	/* "dir/." reads badly in messages and logs; drop a trailing "/.". */
	size_t wl = strlen(wd);
	if (wl > 2 && !strcmp(wd + wl - 2, "/."))
		wd[wl - 2] = '\0';
	free(s->trial.workdir);
	s->trial.workdir = wd;
	return failed;
}

/* ---- entry points ------------------------------------------------------ */

static int spec_defaults(spec *s)
{
	s->search.algorithm = SEARCH_TPE;
	s->search.max_trials = 20;
	s->search.n_startup = 10;
	s->search.multivariate = 1;
	s->schedule.algorithm = SCHED_NONE;
	s->schedule.min = 1;
	s->schedule.max = 1;
	s->schedule.reduction_factor = 3;
	s->schedule.grace = 5;
	s->trial.executor = EXEC_PROCESS;
	s->trial.mode = TRIAL_MODE_ONESHOT;
	s->trial.resources.cpus = 1;
	s->trial.fail_fast = SPEC_FAIL_FAST_DEFAULT;
	s->sharing.policy = SCHED_POLICY_RELISH;
	s->sharing.memory_margin = 0.2;
	s->schedule.resource = strdup("epoch");
	s->trial.network = strdup("none");
	return s->schedule.resource && s->trial.network ? 0 : RL_ENOMEM;
}

int spec_from_tree(const node *root, const char *file, const char *dir,
		   const spec_origin *origin, spec **out, rl_err *err)
{
	sx x = {.file = file, .err = err, .origin = origin};
	char got[96];
	if (!root || node_is_null(root))
		return rl_err_set(err, RL_ESPEC, "%s:1:1: expected a map with keys name, objective, search, trial; "
				  "got an empty document", file);
	if (root->kind != NODE_MAP)
		return sx_fail(&x, root, "expected a map with keys name, objective, search, trial at the top level, "
			       "got %s", sx_got(root, got, sizeof got));
	spec *s = calloc(1, sizeof *s);
	if (!s || spec_defaults(s) < 0 || !(s->source = strdup(file))) {
		spec_free(s);
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", file);
	}
	/* The walk and the checks go on after an error: every mistake is
	 * reported at once (sx_finish), except when memory runs out. */
	int rc = parse_section(&x, root, &top_section, s);
	if (rc == 0 || rc == RL_ESPEC) {
		int rc2 = spec_check(&x, root, dir, s);
		if (rc2 < 0 && rc2 != RL_ESPEC)
			rc = rc2;
		else if (rc == 0 || rc == RL_ESPEC)
			rc = sx_finish(&x);
	}
	if (rc < 0) {
		spec_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static void foreach_section(const section *sec, const char *prefix,
			    void (*fn)(const char *path, const char *help, void *ctx), void *ctx)
{
	for (size_t i = 0; i < sec->n; i++) {
		const field *f = &sec->fields[i];
		char path[128];
		snprintf(path, sizeof path, "%s%s%s", prefix, prefix[0] ? "." : "", f->key);
		fn(path, f->help, ctx);
		if (f->type == F_SUB)
			foreach_section(f->sub, path, fn, ctx);
		if (!strcmp(path, "objective"))
			foreach_section(&objective_section, path, fn, ctx);
		if (!strcmp(path, "constraints")) {
			fn("constraints.metric", "the metric a trial reports", ctx);
			fn("constraints.min", "smallest value a feasible trial reports (default: none)", ctx);
			fn("constraints.max", "largest value a feasible trial reports (default 0 for a plain name; "
			   "none in a map)", ctx);
		}
		if (!strcmp(path, "search.space"))
			spec_space_foreach(fn, ctx);
	}
}

void spec_schema_foreach(void (*fn)(const char *path, const char *help, void *ctx), void *ctx)
{
	foreach_section(&top_section, "", fn, ctx);
}

/* names[v], or "?" for a value outside the table. */
#define NAME_OF(names, v) ((unsigned)(v) < sizeof names / sizeof names[0] ? names[v] : "?")

const char *spec_mode_name(objective_mode m)
{
	return NAME_OF(mode_names, m);
}

const char *spec_search_name(search_algo a)
{
	return NAME_OF(search_names, a);
}

const char *spec_schedule_name(schedule_algo a)
{
	return NAME_OF(schedule_names, a);
}

const char *spec_executor_name(executor_kind k)
{
	return NAME_OF(executor_names, k);
}

int spec_executor_mode_check(executor_kind k, trial_mode m, rl_err *err)
{
	if (k == EXEC_SLURM && m != TRIAL_MODE_ONESHOT)
		return rl_err_set(err, RL_ESPEC, "executor slurm runs each segment as one job: "
				  "expected oneshot, got %s", spec_trial_mode_name(m));
	return 0;
}

int spec_default_executor(spec *s, executor_kind k, rl_err *err)
{
	if (!s->trial.executor_given)
		s->trial.executor = k;
	int rc = spec_executor_mode_check(s->trial.executor, s->trial.mode, err);
	if (rc < 0)
		rl_err_prefix(err, "%s: trial.mode", s->source ? s->source : s->name);
	return rc;
}

const char *spec_pending_name(pending_rule p)
{
	return NAME_OF(pending_names, p);
}

const char *spec_trial_mode_name(trial_mode m)
{
	return NAME_OF(trial_mode_names, m);
}
