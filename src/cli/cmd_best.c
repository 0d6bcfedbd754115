/*
 * cmd_best.c - relish best [--db F] [--json] [--experiment NAME]: the best
 * trial of an experiment (the latest one by default): its id, parameters
 * and objective value.  "Best" is store_trial_best's rule: the best value
 * for the experiment's mode among completed trials, or among all trials with
 * a value while none has completed.  An experiment with several objectives
 * or constraints has a front instead (api_front_json): every completed,
 * feasible trial no other beats in every objective, one line each; --json
 * prints the front resource whole.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_source.h"
#include "api/encode.h"

static const char usage[] = "relish best [--db FILE | --server ADDR] [--json] [--experiment NAME]";

static int best_print(const store_experiment *e, const store_trial *t, int json, rl_err *err)
{
	if (json) {
		return cli_json_print(api_json_best(e, t), err);
	}
	char v[40], r[40], pbuf[1024];
	cli_format_value(t->objective, v, sizeof v);
	cli_format_value(t->objective_resource, r, sizeof r);
	printf("%s: trial %lld (index %d, %s): %s = %s (%s) at resource %s, params %s\n",
	       e->name, (long long)t->id, t->idx, trial_status_name(t->status),
	       e->objective_metric, v, e->mode, r, cli_params_text(t->params_json, pbuf, sizeof pbuf));
	return 0;
}

/* The front, one line per trial on it: "NAME: trial ID (index I): m1 = v
 * (max), m2 = v (min), params {...}". */
static int front_print(const store_experiment *e, json_t *front, int json, rl_err *err)
{
	if (json)
		return cli_json_print(json_incref(front), err);
	json_t *objs = json_object_get(front, "objectives"), *t;
	size_t i, on = 0;
	json_array_foreach(json_object_get(front, "trials"), i, t) {
		if (!json_is_true(json_object_get(t, "front")))
			continue;
		on++;
		char *params = json_dumps(json_object_get(t, "params"), JSON_COMPACT | JSON_SORT_KEYS);
		printf("%s: trial %lld (index %lld, %s):", e->name,
		       (long long)json_integer_value(json_object_get(t, "trial_id")),
		       (long long)json_integer_value(json_object_get(t, "index")),
		       json_string_value(json_object_get(t, "status")));
		for (size_t k = 0; k < json_array_size(objs); k++) {
			json_t *o = json_array_get(objs, k);
			json_t *v = json_array_get(json_object_get(t, "values"), k);
			char buf[40];
			cli_format_value(json_is_number(v) ? json_number_value(v) : NAN, buf, sizeof buf);
			printf("%s %s = %s (%s)", k ? "," : "",
			       json_string_value(json_object_get(o, "metric")), buf,
			       json_string_value(json_object_get(o, "mode")));
		}
		printf(", params %s\n", params ? params : "{}");
		free(params);
	}
	if (!on)
		return rl_err_set(err, RL_ENOTFOUND, "experiment '%s' has no completed%s trial yet",
				  e->name,
				  json_is_true(json_object_get(front, "constrained")) ? ", feasible" : "");
	printf("%s: %zu trial%s on the front\n", e->name, on, on == 1 ? "" : "s");
	return 0;
}

int cmd_best(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nThe best trial: completed trials first, then the best "
			"objective for the experiment's mode.\n"
			"With several objectives (or constraints) the Pareto front instead: every "
			"completed,\nfeasible trial that no other beats in every objective, one "
			"line each with every\nobjective's value (--json: the front resource whole, "
			"every trial with its values,\nfeasibility and whether it is on the front).\n",
		.flags = CLI_READ_SERVER,
	};
	cli_read_opts o = {0};
	cli_src s;
	store_experiment e;
	int rc = cli_src_begin(argc, argv, &spec, &o, &s, &e, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	/* Several objectives or constraints: the front. */
	json_t *front = NULL;
	if ((rc = cli_src_front(&s, &e, &front, err)) == 0 && api_front_is_multi(front)) {
		rc = front_print(&e, front, o.json, err);
		json_decref(front);
		store_experiment_fini(&e);
		cli_src_close(&s);
		return rc;
	}
	json_decref(front);
	rl_err_clear(err);
	store_trial t;
	if ((rc = cli_src_best(&s, &e, &t, err)) == 0) {
		rc = best_print(&e, &t, o.json, err);
		store_trial_fini(&t);
	} else if (rc == RL_ENOTFOUND) {
		rl_err_set(err, rc, "experiment '%s' has no trial with a value of %s yet", e.name,
			   e.objective_metric);
	}
	store_experiment_fini(&e);
	cli_src_close(&s);
	return rc;
}
