/*
 * cmd_best.c - relish best [--db F] [--json] [--experiment NAME]: the best
 * trial of an experiment (the latest one by default): its id, parameters
 * and objective value.  "Best" is store_trial_best's rule: the best value
 * for the experiment's mode among completed trials, or among all trials with
 * a value while none has completed.
 */
#include <stdio.h>

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

int cmd_best(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nThe best trial: completed trials first, then the best "
			"objective for the experiment's mode.\n",
		.flags = CLI_READ_SERVER,
	};
	cli_read_opts o = {0};
	cli_src s;
	store_experiment e;
	int rc = cli_src_begin(argc, argv, &spec, &o, &s, &e, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
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
