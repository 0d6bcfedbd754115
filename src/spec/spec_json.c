/*
 * spec_json.c - the normalised spec as JSON: every key of docs/spec.md with
 * its default filled in, sizes in MiB and durations in seconds.  Used by
 * `relish validate --json`, by tests, and by whoever stores an experiment's
 * spec next to its results.
 */
#include "spec/spec.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"uniform", "loguniform", "int", "choice", "fixed"};

static json_t *param_json(const param_def *p, const char *parent_name)
{
	json_t *o = json_object();
	json_object_set_new(o, "type", json_string(kind_names[p->kind]));
	switch (p->kind) {
	case PARAM_INT:
		json_object_set_new(o, "low", json_integer((json_int_t)p->low));
		json_object_set_new(o, "high", json_integer((json_int_t)p->high));
		json_object_set_new(o, "log", json_boolean(p->log));
		if (p->step > 0)
			json_object_set_new(o, "step", json_integer((json_int_t)p->step));
		break;
	case PARAM_UNIFORM:
	case PARAM_LOGUNIFORM:
		json_object_set_new(o, "low", json_real(p->low));
		json_object_set_new(o, "high", json_real(p->high));
		if (p->step > 0)
			json_object_set_new(o, "step", json_real(p->step));
		break;
	case PARAM_CHOICE: {
		json_t *a = json_array();
		for (size_t i = 0; i < p->n_choices; i++)
			json_array_append_new(a, value_to_json(&p->choices[i]));
		json_object_set_new(o, "values", a);
		break;
	}
	case PARAM_FIXED:
		json_object_set_new(o, "value", value_to_json(&p->fixed));
		break;
	}
	json_object_set_new(o, "grid_points", json_integer(p->grid_points));
	if (p->n_when) {
		/* {parent: [values]}; present only for conditional parameters,
		 * so other specs keep their JSON (and stored identity). */
		json_t *vals = json_array();
		for (size_t i = 0; i < p->n_when; i++)
			json_array_append_new(vals, value_to_json(&p->when[i]));
		json_object_set_new(o, "when", json_pack("{s:o}", parent_name, vals));
		if (p->dflt.type != VAL_NONE)
			json_object_set_new(o, "default", value_to_json(&p->dflt));
	}
	return o;
}

static json_t *string_list(size_t n, char **list)
{
	json_t *a = json_array();
	for (size_t i = 0; list && i < n; i++)
		json_array_append_new(a, json_string(list[i]));
	return a;
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

char *spec_to_json(const spec *s)
{
	json_t *params = json_object();
	for (size_t i = 0; i < s->search.space.n; i++)
		json_object_set_new(params, s->search.space.params[i].name, param_json(&s->search.space.params[i],
			       s->search.space.params[s->search.space.params[i].parent].name));
	json_t *env = json_object();
	for (size_t i = 0; i < s->trial.n_env; i++)
		json_object_set_new(env, s->trial.env[i].name, json_string(s->trial.env[i].value));
	json_t *shape = s->trial.shape_params ? string_list(s->trial.n_shape_params, s->trial.shape_params)
					      : json_null();
	json_t *root = json_pack(
		"{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:I, s:i, s:i, s:i, s:I, s:o},"
		" s:{s:s, s:s, s:f, s:f, s:f, s:f, s:i},"
		" s:{s:o, s:o, s:s, s:s, s:o, s:o, s:s, s:{s:I, s:I, s:f, s:f}, s:f, s:i, s:o},"
		" s:{s:s, s:f}}",
		"name", s->name, "source", s->source ? s->source : "",
		"objective", "metric", s->objective.metric, "mode", spec_mode_name(s->objective.mode),
		"search", "algorithm", spec_search_name(s->search.algorithm), "seed", (json_int_t)s->search.seed,
		"max_trials", s->search.max_trials, "max_concurrent", s->search.max_concurrent, "n_startup",
		s->search.n_startup, "grid_size", (json_int_t)(spec_grid_size(&s->search.space) > INT64_MAX
								      ? INT64_MAX
								      : spec_grid_size(&s->search.space)),
		"space", params,
		"schedule", "algorithm", spec_schedule_name(s->schedule.algorithm), "resource", s->schedule.resource,
		"min", s->schedule.min, "max", s->schedule.max, "reduction_factor", s->schedule.reduction_factor,
		"segment", s->schedule.segment, "grace", s->schedule.grace,
		"trial", "command", string_list(s->trial.argc, s->trial.argv), "env", env,
		"workdir", s->trial.workdir ? s->trial.workdir : "", "executor", spec_executor_name(s->trial.executor),
		"image", str_or_null(s->trial.image), "network", str_or_null(s->trial.network),
		"mode", spec_trial_mode_name(s->trial.mode),
		"resources", "memory_mib", (json_int_t)s->trial.resources.memory_mib,
		"gpu_memory_mib", (json_int_t)s->trial.resources.gpu_memory_mib,
		"cpus", s->trial.resources.cpus, "gpus", s->trial.resources.gpus,
		"timeout_s", s->trial.timeout_s, "retries", s->trial.retries, "shape_params", shape,
		"sharing", "policy", sched_policy_name(s->sharing.policy), "memory_margin", s->sharing.memory_margin);
	if (!root)
		return NULL;
	/* Several objectives: the list; one keeps the map (and with it the
	 * stored identity of every experiment written before lists). */
	if (s->n_more_objectives) {
		json_t *list = json_array();
		for (size_t i = 0; i < spec_n_objectives(s); i++) {
			spec_objective o = spec_objective_at(s, i);
			json_array_append_new(list, json_pack("{s:s, s:s}", "metric", o.metric, "mode",
							      spec_mode_name(o.mode)));
		}
		json_object_set_new(root, "objective", list);
	}
	/* Constraints: only when given; a bound that is not there is left out. */
	if (s->n_constraints) {
		json_t *list = json_array();
		for (size_t i = 0; i < s->n_constraints; i++) {
			const spec_constraint *c = &s->constraints[i];
			json_t *o = json_pack("{s:s}", "metric", c->metric);
			if (isfinite(c->lo))
				json_object_set_new(o, "min", json_real(c->lo));
			if (isfinite(c->hi))
				json_object_set_new(o, "max", json_real(c->hi));
			json_array_append_new(list, o);
		}
		json_object_set_new(root, "constraints", list);
	}
	/* Only when given: specs without mounts keep the JSON (and with it the
	 * stored experiment identity) they had before the key existed. */
	if (s->trial.n_mounts) {
		json_t *m = json_array();
		for (size_t i = 0; i < s->trial.n_mounts; i++)
			json_array_append_new(m, json_pack("{s:s, s:s, s:b}", "host", s->trial.mounts[i].host,
							   "target", s->trial.mounts[i].target, "read_only",
							   s->trial.mounts[i].read_only));
		json_object_set_new(json_object_get(root, "trial"), "mounts", m);
	}
	if (s->trial.fail_fast != SPEC_FAIL_FAST_DEFAULT)
		json_object_set_new(json_object_get(root, "trial"), "fail_fast",
				    json_integer(s->trial.fail_fast));
	/* Privileges: also only when given (the same reason). */
	const spec_privileges *p = &s->trial.privileges;
	if (p->n_capabilities || p->user || p->writable_root || p->new_privileges) {
		json_t *o = json_pack("{s:o, s:o, s:b, s:b}", "capabilities",
				      string_list(p->n_capabilities, p->capabilities), "user",
				      p->user ? json_string(p->user) : json_null(), "writable_root",
				      p->writable_root, "new_privileges", p->new_privileges);
		json_object_set_new(json_object_get(root, "trial"), "privileges", o);
	}
	if (s->sharing.order != ORDER_DEFAULT)
		json_object_set_new(json_object_get(root, "sharing"), "order",
				    json_string(sched_order_name(s->sharing.order)));
	/* The same for the foreign-use keys: only when not the default. */
	json_t *sh = json_object_get(root, "sharing");
	if (s->sharing.foreign != SCHED_FOREIGN_SHARE)
		json_object_set_new(sh, "foreign", json_string(sched_foreign_policy_name(s->sharing.foreign)));
	if (s->sharing.foreign_wait_s > 0)
		json_object_set_new(sh, "foreign_wait_s", json_real(s->sharing.foreign_wait_s));
	/* The same for executor slurm's settings. */
	if (s->trial.executor == EXEC_SLURM) {
		json_t *sl = json_object();
		json_object_set_new(sl, "partition", str_or_null(s->trial.slurm.partition));
		json_object_set_new(sl, "account", str_or_null(s->trial.slurm.account));
		json_object_set_new(sl, "qos", str_or_null(s->trial.slurm.qos));
		json_object_set_new(sl, "sbatch_args",
				    string_list(s->trial.slurm.n_sbatch_args, s->trial.slurm.sbatch_args));
		json_object_set_new(sl, "gpu_memory_mib", json_integer((json_int_t)s->trial.slurm.gpu_memory_mib));
		json_object_set_new(json_object_get(root, "trial"), "slurm", sl);
	}
	/* Search keys added later, likewise only when they differ from their
	 * defaults. */
	if (!s->search.multivariate)
		json_object_set_new(json_object_get(root, "search"), "multivariate", json_false());
	if (s->search.pending != PENDING_WORST)
		json_object_set_new(json_object_get(root, "search"), "pending",
				    json_string(spec_pending_name(s->search.pending)));
	/* 15 significant digits: values people write (0.1, 1e-4) come back as
	 * written, where 17 would print 0.10000000000000001. */
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(root);
	return text;
}

/*
 * Below obj (never inside search.space, whose values are the user's): the
 * identity's unit-suffixed keys under the spec's own names ("memory_mib" is
 * memory in MiB, "timeout_s" timeout in seconds: the spec reads plain
 * numbers in those units), and no nulls (an absent key is the default).
 */
static int to_spec_keys(json_t *obj)
{
	const char *k;
	json_t *v;
	void *tmp;
	json_t *renamed = json_object();
	if (!renamed)
		return -1;
	json_object_foreach_safe(obj, tmp, k, v) {
		if (json_is_null(v)) {
			json_object_del(obj, k);
			continue;
		}
		if (json_is_object(v) && strcmp(k, "space") && to_spec_keys(v) < 0) {
			json_decref(renamed);
			return -1;
		}
		size_t n = strlen(k);
		size_t cut = n > 4 && !strcmp(k + n - 4, "_mib") ? 4 : n > 2 && !strcmp(k + n - 2, "_s") ? 2 : 0;
		if (cut) {
			char name[64];
			snprintf(name, sizeof name, "%.*s", (int)(n - cut), k);
			json_object_set(renamed, name, v);
			json_object_del(obj, k);
		}
	}
	json_object_update(obj, renamed);
	json_decref(renamed);
	return 0;
}

/*
 * The same spec written so that it reads back as a spec (relish validate
 * --json): the identity's JSON without what is no spec key (source,
 * grid_size, grid_points of choices), sizes and durations under their spec
 * keys (memory, gpu_memory in MiB; timeout, foreign_wait in seconds), mounts
 * as "HOST:TARGET:ro|rw" strings, and no nulls.
 */
char *spec_to_spec_json(const spec *s)
{
	char *ident = spec_to_json(s);
	if (!ident)
		return NULL;
	json_error_t je;
	json_t *root = json_loads(ident, 0, &je);
	free(ident);
	if (!root)
		return NULL;
	json_object_del(root, "source");
	json_t *search = json_object_get(root, "search");
	json_object_del(search, "grid_size");
	const char *pname;
	json_t *p;
	json_object_foreach(json_object_get(search, "space"), pname, p) {
		const char *type = json_string_value(json_object_get(p, "type"));
		if (type && (!strcmp(type, "choice") || !strcmp(type, "fixed")))
			json_object_del(p, "grid_points");
	}
	json_t *trial = json_object_get(root, "trial");
	json_t *mounts = json_object_get(trial, "mounts");
	if (mounts) {
		json_t *m = json_array();
		size_t i;
		json_t *v;
		json_array_foreach(mounts, i, v) {
			char *text = NULL;
			if (asprintf(&text, "%s:%s:%s", json_string_value(json_object_get(v, "host")),
				     json_string_value(json_object_get(v, "target")),
				     json_is_true(json_object_get(v, "read_only")) ? "ro" : "rw") < 0) {
				json_decref(m);
				json_decref(root);
				return NULL;
			}
			json_array_append_new(m, json_string(text));
			free(text);
		}
		json_object_set_new(trial, "mounts", m);
	}
	if (to_spec_keys(root) < 0) {
		json_decref(root);
		return NULL;
	}
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	json_decref(root);
	return text;
}
