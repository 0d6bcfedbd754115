/*
 * config.c - the service's config file (`relish serve --config FILE`,
 * YAML or JSON; docs/serve.md lists every key):
 *
 *   policy: relish              # sharing policy for every experiment
 *   order: fair                 # queue order: fair between users (fifo, las, tiresias)
 *   fair_half_life: 7d          # fair: past usage counts half after this (0: never forgets)
 *   memory_margin: 0.2
 *   grace: 60s                  # SIGTERM: how long running segments may go on
 *   max_segment_time: 24h       # no segment runs longer (0: none)
 *   trial_memory: 2GiB          # what a host trial naming no memory reserves
 *   trial_processes: 4096       # processes a trial's user may have at once (0: no limit)
 *   read: all                   # or own: users see only their experiments
 *   admin_group: relish-admin   # members may cancel anyone's experiment
 *   tokens: /etc/relish/tokens  # bearer tokens for TCP (mode 0600)
 *   submit_max: 1MiB            # largest submission body
 *   allow: [trial.network=host]  # what specs may ask beyond the default
 *   users:
 *     default: {share: 1}
 *     alice: {share: 2, gpus: 2, gpu_memory: 40GiB, segments: 4, experiments: 3,
 *             host_memory: 64GiB, cpus: 16, allow: [trial.mounts]}
 *   slurm:                      # place on a Slurm partition (docs/slurm.md)
 *     default: true             # specs naming no executor run as Slurm jobs
 *     partition: gpu
 *     account: ml-team
 *     qos: normal
 *     sbatch_args: ["--constraint=a100"]
 *     gpu_memory: 80GiB
 *     poll_interval: 1s
 *     refresh_interval: 30s
 *     relish_path: /shared/bin/relish
 *   retention:                  # ended experiments: exported, then removed
 *     age: 90d                  # since they ended
 *     keep: 100                 # per user, the latest
 *     archive: /var/lib/relish/archive   # default STATE/archive
 *     interval: 1h              # how often it looks
 *
 * It is read with the spec's parser and readers (spec/node.h,
 * spec_internal.h), so its errors have the spec's shape:
 * FILE:LINE:COL: key.path: expected X, got Y.  Keys are one table.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve.h"
#include "spec/node.h"
#include "spec/spec_internal.h"

#define CONFIG_MAX_BYTES (1u << 20)

void serve_config_default(serve_config *c)
{
	memset(c, 0, sizeof *c);
	c->policy = SCHED_POLICY_RELISH;
	c->order = ORDER_FAIR;
	c->memory_margin = 0.2;
	c->foreign = SCHED_FOREIGN_SHARE;
	c->grace_s = 60;
	c->max_segment_s = 86400;
	c->trial_memory_mib = 2048;
	c->trial_processes = 4096;
	c->fair_half_life_s = 7 * 86400.0;
	c->retention.interval_s = 3600;
	c->api.submit_max = 1u << 20;
	c->dflt.share = 1;
	c->dflt.is_default = 1;
	snprintf(c->dflt.name, sizeof c->dflt.name, "default");
}

static void slurm_fini(serve_slurm *s)
{
	free(s->partition);
	free(s->account);
	free(s->qos);
	free(s->relish_path);
	for (size_t i = 0; i < s->n_sbatch_args; i++)
		free(s->sbatch_args[i]);
	free(s->sbatch_args);
	memset(s, 0, sizeof *s);
}

static void allow_free(char ***v, size_t *n)
{
	for (size_t i = 0; i < *n; i++)
		free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

void serve_config_fini(serve_config *c)
{
	if (!c)
		return;
	slurm_fini(&c->slurm);
	free(c->retention.archive);
	c->retention.archive = NULL;
	free(c->path);
	free(c->tokens);
	for (size_t i = 0; i < c->n_users; i++)
		allow_free(&c->users[i].allow, &c->users[i].n_allow);
	free(c->users);
	allow_free(&c->dflt.allow, &c->dflt.n_allow);
	allow_free(&c->allow, &c->n_allow);
	memset(c, 0, sizeof *c);
}

const serve_user_rule *serve_config_user(const serve_config *c, uid_t uid)
{
	for (size_t i = 0; i < c->n_users; i++)
		if (c->users[i].uid == uid)
			return &c->users[i];
	return &c->dflt;
}

/* ---- keys ---- */

typedef int (*key_fn)(sx *x, const node *v, serve_config *c);

static int k_policy(sx *x, const node *v, serve_config *c)
{
	int i;
	int rc = sx_enum(x, v, sched_policy_names, SCHED_POLICY__COUNT, &i);
	if (rc == 0) {
		c->policy = (sched_policy)i;
		c->policy_set = 1;
	}
	return rc;
}

static int k_order(sx *x, const node *v, serve_config *c)
{
	/* every order but "default": the service's default is fair */
	int i;
	int rc = sx_enum(x, v, sched_order_names + 1, ORDER__COUNT - 1, &i);
	if (rc == 0)
		c->order = (queue_order)(i + 1);
	return rc;
}

static int k_foreign(sx *x, const node *v, serve_config *c)
{
	int i;
	int rc = sx_enum(x, v, sched_foreign_names, SCHED_FOREIGN__COUNT, &i);
	if (rc == 0)
		c->foreign = (sched_foreign_policy)i;
	return rc;
}

static int k_margin(sx *x, const node *v, serve_config *c)
{
	double m;
	int rc = sx_number(x, v, "a fraction such as 0.2", &m);
	if (rc == 0 && (m < 0 || m > 10))
		return sx_fail(x, v, "expected a fraction between 0 and 10, got %g", m);
	if (rc == 0)
		c->memory_margin = m;
	return rc;
}

static int k_grace(sx *x, const node *v, serve_config *c)
{
	return sx_duration(x, v, &c->grace_s);
}

static int k_half_life(sx *x, const node *v, serve_config *c)
{
	return sx_duration(x, v, &c->fair_half_life_s);
}

static int k_read(sx *x, const node *v, serve_config *c)
{
	static const char *const names[] = {"all", "own"};
	int i;
	int rc = sx_enum(x, v, names, 2, &i);
	if (rc == 0)
		c->api.read_own = i == 1;
	return rc;
}

static int k_admin_group(sx *x, const node *v, serve_config *c)
{
	char *name = NULL;
	int rc = sx_string(x, v, &name);
	if (rc < 0)
		return rc;
	struct group grb, *gr = NULL;
	char buf[8192];
	if (getgrnam_r(name, &grb, buf, sizeof buf, &gr) != 0 || !gr) {
		rc = sx_fail(x, v, "no group '%s' on this machine", name);
		free(name);
		return rc;
	}
	c->api.have_admin_gid = 1;
	c->api.admin_gid = gr->gr_gid;
	snprintf(c->api.admin_group, sizeof c->api.admin_group, "%s", name);
	free(name);
	return 0;
}

static int k_max_segment(sx *x, const node *v, serve_config *c)
{
	return sx_duration(x, v, &c->max_segment_s);
}

static int k_trial_memory(sx *x, const node *v, serve_config *c)
{
	int rc = sx_memory(x, v, &c->trial_memory_mib);
	if (rc == 0 && !c->trial_memory_mib)
		rc = sx_fail(x, v, "expected a memory size > 0 such as 2GiB, got 0");
	return rc;
}

static int k_trial_processes(sx *x, const node *v, serve_config *c)
{
	int64_t n;
	int rc = sx_int(x, v, 0, 1 << 22, "a number of processes (0: no limit)", &n);
	if (rc == 0)
		c->trial_processes = (unsigned)n;
	return rc;
}

static int k_tokens(sx *x, const node *v, serve_config *c)
{
	free(c->tokens);
	c->tokens = NULL;
	return sx_string(x, v, &c->tokens);
}

static int k_submit_max(sx *x, const node *v, serve_config *c)
{
	uint64_t mib;
	int rc = sx_memory(x, v, &mib);
	if (rc == 0)
		c->api.submit_max = (size_t)mib << 20;
	return rc;
}

/* An allow list (the top-level one, or a user's) into *list (replaced). */
static int allow_list(sx *x, const node *v, char ***list, size_t *n_list)
{
	if (v->kind != NODE_SEQ)
		return sx_fail(x, v, "expected a list such as [trial.network=host, trial.mounts]");
	allow_free(list, n_list);
	char **out = calloc(v->n ? v->n : 1, sizeof *out);
	if (!out)
		return rl_err_set(x->err, RL_ENOMEM, "config allow");
	*list = out;
	static const char *const keys[] = {"trial.network", "trial.privileges.capabilities",
					   "trial.privileges.user", "trial.privileges.new_privileges",
					   "trial.mounts"};
	for (size_t i = 0; i < v->n; i++) {
		size_t saved = sx_push_index(x, i);
		char *item = NULL;
		int rc = sx_string(x, v->items[i], &item);
		if (rc == 0) {
			size_t kl = strcspn(item, "=");
			int known = 0;
			for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
				known |= strlen(keys[k]) == kl && !strncmp(keys[k], item, kl);
			if (!known)
				rc = sx_fail(x, v->items[i], "expected one of trial.network, "
					     "trial.privileges.capabilities, trial.privileges.user, "
					     "trial.privileges.new_privileges, trial.mounts (optionally "
					     "=VALUE), got \"%s\"", item);
		}
		sx_pop(x, saved);
		if (rc < 0) {
			free(item);
			return rc;
		}
		out[(*n_list)++] = item;
	}
	return 0;
}

static int k_allow(sx *x, const node *v, serve_config *c)
{
	return allow_list(x, v, &c->allow, &c->n_allow);
}

/* One user's entry: {share, gpus, gpu_memory, segments, experiments,
 * host_memory, cpus, allow}.  r->allow is r's own on return, failed or not. */
static int user_rule(sx *x, const node *v, serve_user_rule *r)
{
	static const char *const keys[] = {"share",	  "gpus", "gpu_memory", "segments",
					   "experiments", "host_memory", "cpus", "allow"};
	if (v->kind != NODE_MAP)
		return sx_fail(x, v, "expected a map such as {share: 1, gpus: 2}");
	int rc = sx_check_keys(x, v, keys, sizeof keys / sizeof *keys);
	const node *n;
	size_t saved;
	if (rc == 0 && (n = node_get(v, "share"))) {
		saved = sx_push(x, "share");
		rc = sx_number(x, n, "a positive weight", &r->share);
		if (rc == 0 && !(r->share > 0))
			rc = sx_fail(x, n, "expected a positive weight, got %g", r->share);
		sx_pop(x, saved);
	}
	int64_t i;
	if (rc == 0 && (n = node_get(v, "gpus"))) {
		saved = sx_push(x, "gpus");
		if ((rc = sx_int(x, n, 0, 1 << 20, "a number of GPUs", &i)) == 0)
			r->max_gpus = (int)i;
		sx_pop(x, saved);
	}
	if (rc == 0 && (n = node_get(v, "gpu_memory"))) {
		saved = sx_push(x, "gpu_memory");
		rc = sx_memory(x, n, &r->max_mem_mib);
		sx_pop(x, saved);
	}
	if (rc == 0 && (n = node_get(v, "segments"))) {
		saved = sx_push(x, "segments");
		if ((rc = sx_int(x, n, 0, 1 << 20, "a number of segments", &i)) == 0)
			r->max_segments = (int)i;
		sx_pop(x, saved);
	}
	if (rc == 0 && (n = node_get(v, "experiments"))) {
		saved = sx_push(x, "experiments");
		if ((rc = sx_int(x, n, 0, 1 << 20, "a number of experiments", &i)) == 0)
			r->max_experiments = (int)i;
		sx_pop(x, saved);
	}
	if (rc == 0 && (n = node_get(v, "host_memory"))) {
		saved = sx_push(x, "host_memory");
		rc = sx_memory(x, n, &r->max_host_mem_mib);
		sx_pop(x, saved);
	}
	if (rc == 0 && (n = node_get(v, "cpus"))) {
		saved = sx_push(x, "cpus");
		rc = sx_number(x, n, "a number of CPUs", &r->max_cpus);
		if (rc == 0 && !(r->max_cpus >= 0 && r->max_cpus <= 1 << 20))
			rc = sx_fail(x, n, "expected a number of CPUs (0: no limit), got %g", r->max_cpus);
		sx_pop(x, saved);
	}
	if (rc == 0 && (n = node_get(v, "allow"))) {
		saved = sx_push(x, "allow");
		rc = allow_list(x, n, &r->allow, &r->n_allow);
		sx_pop(x, saved);
	}
	return rc;
}

static int k_users(sx *x, const node *v, serve_config *c)
{
	if (v->kind != NODE_MAP)
		return sx_fail(x, v, "expected a map of user names, e.g. {alice: {share: 2}}");
	free(c->users);
	c->users = calloc(v->n ? v->n : 1, sizeof *c->users);
	c->n_users = 0;
	if (!c->users)
		return rl_err_set(x->err, RL_ENOMEM, "config users");
	for (size_t i = 0; i < v->n; i++) {
		const char *name = v->keys[i]->text;
		size_t saved = sx_push(x, name);
		int rc;
		if (!strcmp(name, "default")) {
			serve_user_rule r = c->dflt;
			r.allow = NULL; /* c->dflt's stays its own until replaced */
			r.n_allow = 0;
			rc = user_rule(x, v->items[i], &r);
			if (rc == 0) {
				allow_free(&c->dflt.allow, &c->dflt.n_allow);
				c->dflt = r;
			} else {
				allow_free(&r.allow, &r.n_allow);
			}
		} else {
			struct passwd pwb, *pw = NULL;
			char buf[4096];
			if (getpwnam_r(name, &pwb, buf, sizeof buf, &pw) != 0 || !pw) {
				rc = sx_fail(x, v->keys[i], "no user '%s' on this machine", name);
			} else {
				serve_user_rule r = {.share = 1, .uid = pw->pw_uid};
				snprintf(r.name, sizeof r.name, "%s", name);
				rc = user_rule(x, v->items[i], &r);
				if (rc == 0)
					c->users[c->n_users++] = r;
				else
					allow_free(&r.allow, &r.n_allow);
			}
		}
		sx_pop(x, saved);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- slurm: ---- */

static int slurm_name(sx *x, const node *n, const char *what, char **out)
{
	char *v = NULL;
	int rc = sx_string(x, n, &v);
	if (rc == 0 && (!*v || strpbrk(v, " \t\n,"))) {
		rc = sx_fail(x, n, "expected a Slurm %s name (no spaces or commas), got \"%s\"", what,
			     v);
		free(v);
		return rc;
	}
	if (rc == 0) {
		free(*out);
		*out = v;
	}
	return rc;
}

static int slurm_args(sx *x, const node *v, serve_slurm *s)
{
	if (v->kind != NODE_SEQ)
		return sx_fail(x, v, "expected a list of sbatch options, each one argument, such as "
			       "[\"--constraint=a100\"]");
	char **list = calloc(v->n + 1, sizeof *list);
	if (!list)
		return rl_err_set(x->err, RL_ENOMEM, "config slurm");
	int rc = 0;
	size_t n = 0;
	for (size_t i = 0; rc == 0 && i < v->n; i++) {
		size_t saved = sx_push_index(x, i);
		char *item = NULL;
		rc = sx_string(x, v->items[i], &item);
		if (rc == 0 && item[0] != '-') {
			rc = sx_fail(x, v->items[i], "expected an sbatch option starting with -, got "
				     "\"%s\"", item);
			free(item);
		}
		if (rc == 0)
			list[n++] = item;
		sx_pop(x, saved);
	}
	if (rc < 0) {
		for (size_t i = 0; i < n; i++)
			free(list[i]);
		free(list);
		return rc;
	}
	for (size_t i = 0; i < s->n_sbatch_args; i++)
		free(s->sbatch_args[i]);
	free(s->sbatch_args);
	s->sbatch_args = list;
	s->n_sbatch_args = n;
	return 0;
}

static int slurm_interval(sx *x, const node *n, double lo, double *out)
{
	double v;
	int rc = sx_duration(x, n, &v);
	if (rc == 0 && v < lo)
		return sx_fail(x, n, "expected a duration of at least %gs, got %gs", lo, v);
	if (rc == 0)
		*out = v;
	return rc;
}

static int k_slurm(sx *x, const node *v, serve_config *c)
{
	static const char *const keys[] = {"default", "partition", "account", "qos",
					   "sbatch_args", "gpu_memory", "poll_interval",
					   "refresh_interval", "relish_path"};
	serve_slurm *s = &c->slurm;
	if (node_is_null(v) || (v->kind == NODE_MAP && v->n == 0)) {
		s->enabled = s->is_default = 1; /* slurm: {} - the cluster's defaults */
		return 0;
	}
	if (v->kind != NODE_MAP)
		return sx_fail(x, v, "expected a map such as {partition: gpu, gpu_memory: 80GiB}");
	int rc = sx_check_keys(x, v, keys, sizeof keys / sizeof keys[0]);
	s->enabled = s->is_default = 1;
	/* On after a mistake (RL_ESPEC): every one is said at once. */
	for (size_t i = 0; (rc == 0 || rc == RL_ESPEC) && i < sizeof keys / sizeof keys[0]; i++) {
		const node *n = node_get(v, keys[i]);
		if (!n)
			continue;
		size_t saved = sx_push(x, keys[i]);
		int r = 0;
		switch (i) {
		case 0: r = sx_bool(x, n, &s->is_default); break;
		case 1: r = slurm_name(x, n, "partition", &s->partition); break;
		case 2: r = slurm_name(x, n, "account", &s->account); break;
		case 3: r = slurm_name(x, n, "QOS", &s->qos); break;
		case 4: r = slurm_args(x, n, s); break;
		case 5:
			r = sx_memory(x, n, &s->gpu_memory_mib);
			if (r == 0 && !s->gpu_memory_mib)
				r = sx_fail(x, n, "expected a GPU's memory such as 80GiB, got 0");
			break;
		case 6: r = slurm_interval(x, n, 0.1, &s->poll_s); break;
		case 7: r = slurm_interval(x, n, 1, &s->refresh_s); break;
		case 8:
			free(s->relish_path);
			s->relish_path = NULL;
			r = sx_string(x, n, &s->relish_path);
			if (r == 0 && s->relish_path[0] != '/')
				r = sx_fail(x, n, "expected the absolute path of relish on the nodes, "
					    "got \"%s\"", s->relish_path);
			break;
		}
		sx_pop(x, saved);
		if (r < 0 && (rc == 0 || r != RL_ESPEC))
			rc = r;
	}
	return rc;
}

/* ---- retention: ---- */

static int k_retention(sx *x, const node *v, serve_config *c)
{
	static const char *const keys[] = {"age", "keep", "archive", "interval"};
	serve_retention *r = &c->retention;
	if (v->kind != NODE_MAP)
		return sx_fail(x, v, "expected a map such as {age: 90d, keep: 100}");
	int rc = sx_check_keys(x, v, keys, sizeof keys / sizeof keys[0]);
	for (size_t i = 0; rc == 0 && i < sizeof keys / sizeof keys[0]; i++) {
		const node *n = node_get(v, keys[i]);
		if (!n)
			continue;
		size_t saved = sx_push(x, keys[i]);
		double d;
		switch (i) {
		case 0: rc = sx_duration(x, n, &r->age_s); break;
		case 1:
			rc = sx_number(x, n, "a count of experiments per user such as 100", &d);
			if (rc == 0 && (d < 1 || d > 1e9 || d != (long)d))
				rc = sx_fail(x, n, "expected a whole count of experiments per user, at "
					     "least 1, got %g", d);
			if (rc == 0)
				r->keep = (long)d;
			break;
		case 2:
			free(r->archive);
			r->archive = NULL;
			rc = sx_string(x, n, &r->archive);
			if (rc == 0 && r->archive[0] != '/')
				rc = sx_fail(x, n, "expected an absolute folder, got \"%s\"", r->archive);
			break;
		case 3:
			rc = sx_duration(x, n, &r->interval_s);
			if (rc == 0 && r->interval_s < 1)
				rc = sx_fail(x, n, "expected a duration of at least 1s, got %gs",
					     r->interval_s);
			break;
		}
		sx_pop(x, saved);
	}
	if (rc == 0 && !r->age_s && !r->keep)
		rc = sx_fail(x, v, "expected an age, a keep count or both: retention without "
			     "either keeps everything");
	if (rc == 0)
		r->enabled = 1;
	return rc;
}

static const struct config_key {
	const char *key;
	key_fn fn;
} config_keys[] = {
	{"policy", k_policy},       {"order", k_order},          {"fair_half_life", k_half_life},
	{"memory_margin", k_margin}, {"grace", k_grace},         {"foreign", k_foreign},
	{"read", k_read},           {"admin_group", k_admin_group}, {"tokens", k_tokens},
	{"submit_max", k_submit_max}, {"allow", k_allow},        {"users", k_users},
	{"max_segment_time", k_max_segment}, {"trial_memory", k_trial_memory},
	{"trial_processes", k_trial_processes},
	{"slurm", k_slurm},         {"retention", k_retention},
};
#define N_KEYS (sizeof config_keys / sizeof config_keys[0])

int serve_config_load(const char *path, serve_config *c, rl_err *err)
{
	serve_config_default(c);
	FILE *f = fopen(path, "rb");
	if (!f)
		return rl_err_sys(err, RL_ENOTFOUND, errno, "config %s", path);
	char *buf = malloc(CONFIG_MAX_BYTES + 1);
	size_t len = buf ? fread(buf, 1, CONFIG_MAX_BYTES + 1, f) : 0;
	fclose(f);
	if (!buf)
		return rl_err_set(err, RL_ENOMEM, "config %s", path);
	if (len > CONFIG_MAX_BYTES) {
		free(buf);
		return rl_err_set(err, RL_EINVAL, "config %s is larger than 1 MiB", path);
	}
	buf[len] = '\0';
	int rc = serve_config_parse(buf, len, path, c, err);
	free(buf);
	return rc;
}

int serve_config_parse(const char *text, size_t len, const char *path, serve_config *c,
		       rl_err *err)
{
	serve_config_default(c);
	size_t pl = strlen(path);
	int json = pl > 5 && !strcmp(path + pl - 5, ".json");
	node *root = NULL;
	int rc = node_parse(text, len, path, json, &root, err);
	if (rc < 0)
		return rc;
	sx x = {.file = path, .err = err};
	if (root && root->kind != NODE_MAP)
		rc = sx_fail(&x, root, "expected a map of settings (docs/serve.md)");
	const char *names[N_KEYS];
	for (size_t i = 0; i < N_KEYS; i++)
		names[i] = config_keys[i].key;
	if (rc == 0 && root)
		rc = sx_check_keys(&x, root, names, N_KEYS);
	/* Every key is read after a mistake in another (RL_ESPEC), so that
	 * all of them are said at once (sx_finish), as a spec's are; it
	 * said only the first (issue 30, item 11).  Out of memory stops. */
	for (size_t i = 0; (rc == 0 || rc == RL_ESPEC) && root && root->kind == NODE_MAP &&
			   i < N_KEYS; i++) {
		const node *v = node_get(root, config_keys[i].key);
		if (!v)
			continue;
		size_t saved = sx_push(&x, config_keys[i].key);
		int r = config_keys[i].fn(&x, v, c);
		sx_pop(&x, saved);
		if (r < 0 && (rc == 0 || r != RL_ESPEC))
			rc = r;
	}
	if (rc == 0 || (rc == RL_ESPEC && x.n_errs))
		rc = sx_finish(&x);
	node_free(root);
	if (rc == 0 && !(c->path = strdup(path)))
		rc = rl_err_set(err, RL_ENOMEM, "config");
	if (rc < 0) {
		serve_config_fini(c);
		serve_config_default(c);
	}
	return rc;
}

/* ---- admission ---- */

static int in_list(char *const *allow, size_t n_allow, const spec_grant *g)
{
	size_t kl = strlen(g->key);
	for (size_t i = 0; i < n_allow; i++) {
		const char *a = allow[i];
		if (strncmp(a, g->key, kl) != 0)
			continue;
		if (a[kl] == '\0' || (a[kl] == '=' && !strcmp(a + kl + 1, g->value)))
			return 1;
	}
	return 0;
}

/* A grant is the submitter's when the top-level list (everyone's) or the
 * submitter's own rule (its users: entry, else users.default) holds it. */
static int allowed(const serve_config *c, const serve_user_rule *r, const spec_grant *g)
{
	if (!strcmp(g->key, "trial.privileges.writable_root"))
		return 1;
	return in_list(c->allow, c->n_allow, g) || (r && in_list(r->allow, r->n_allow, g));
}

int serve_admit(const serve_config *c, const api_user *u, const spec *sp, rl_err *err)
{
	/* Slurm jobs too are submitted as their submitter (docs/slurm.md).
	 * An anonymous TCP client is no user of the machine: the default
	 * rule's grants are not its. */
	const serve_user_rule *r = u && u->via != API_VIA_NONE ? serve_config_user(c, u->uid) : NULL;
	/* Every grant is checked, however many there are: a list cut at
	 * some length would let what lies beyond it through. */
	size_t n = spec_grants(sp, NULL, 0);
	spec_grant *g = n ? malloc(n * sizeof *g) : NULL;
	if (n && !g)
		return rl_err_set(err, RL_ENOMEM, "checking what %s asks for", sp->name);
	spec_grants(sp, g, n);
	char what[900] = "";
	size_t off = 0, refused = 0;
	for (size_t i = 0; i < n; i++) {
		if (allowed(c, r, &g[i]))
			continue;
		if (refused++ && off >= sizeof what)
			continue;
		off += (size_t)snprintf(what + off, off < sizeof what ? sizeof what - off : 0,
					"%s%s: %s", off ? "; " : "", g[i].key, g[i].value);
	}
	free(g);
	if (refused)
		return rl_err_set(err, RL_EPERM,
				  "%s: asks for more than this service allows (%s%s); the service's "
				  "config permits it with allow: [KEY or KEY=VALUE]",
				  sp->source ? sp->source : sp->name, what,
				  off >= sizeof what ? "..." : "");
	return 0;
}
