/*
 * cmd_status.c - relish status [--db F] [--json] [EXPERIMENT]: one line per
 * experiment (or the one named): its state, trial counts by state, the best
 * objective so far and how long it has run.  Reads the state database only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"

static const char usage[] = "relish status [--db FILE] [--json] [EXPERIMENT]";

struct exp_summary {
	int count[TRIAL__COUNT];
	int total;
	int has_best;
	store_trial best;
};

static int summarise(store *s, const store_experiment *e, struct exp_summary *sum, rl_err *err)
{
	memset(sum, 0, sizeof *sum);
	store_trial *tv;
	size_t nt;
	int rc = store_trial_list(s, e->id, 0, &tv, &nt, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nt; i++)
		sum->count[tv[i].status]++;
	sum->total = (int)nt;
	store_trials_free(tv, nt);
	rl_err e2;
	rc = store_trial_best(s, e->id, &sum->best, &e2);
	if (rc == 0)
		sum->has_best = 1;
	else if (rc != RL_ENOTFOUND)
		return rl_err_set(err, rc, "%s", e2.msg);
	return 0;
}

static double elapsed(const store_experiment *e, double now)
{
	return (isnan(e->finished_at) ? now : e->finished_at) - e->created_at;
}

static json_t *status_json(const store_experiment *e, const struct exp_summary *sum, double now)
{
	json_t *trials = json_object();
	json_object_set_new(trials, "total", json_integer(sum->total));
	for (int i = 0; i < TRIAL__COUNT; i++)
		json_object_set_new(trials, trial_status_name((trial_status)i),
				    json_integer(sum->count[i]));
	json_t *best = json_null();
	if (sum->has_best)
		best = json_pack("{s:I, s:o, s:o}", "trial_id", (json_int_t)sum->best.id,
				 "value", cli_json_real(sum->best.objective), "resource",
				 cli_json_real(sum->best.objective_resource));
	return json_pack("{s:I, s:s, s:s, s:{s:s, s:s}, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "id", (json_int_t)e->id, "experiment", e->name, "status",
			 exp_status_name(e->status), "objective", "metric", e->objective_metric,
			 "mode", e->mode, "trials", trials, "best", best, "created_at",
			 cli_json_real(e->created_at), "finished_at", cli_json_real(e->finished_at),
			 "elapsed_s", cli_json_real(elapsed(e, now)), "spec_path", cli_json_str(e->spec_path));
}

static void status_line(const store_experiment *e, const struct exp_summary *sum, double now,
			int name_w)
{
	char best[96] = "-", started[32], el[32];
	if (sum->has_best) {
		char v[40];
		cli_format_real(sum->best.objective, v, sizeof v);
		snprintf(best, sizeof best, "%s=%s (trial %lld)", e->objective_metric, v,
			 (long long)sum->best.id);
	}
	cli_format_time(e->created_at, started, sizeof started);
	cli_format_duration(elapsed(e, now), el, sizeof el);
	printf("%-*s  %-9s  %6d  %5d  %4d  %4d  %4d  %-28s  %-19s  %s\n", name_w, e->name,
	       exp_status_name(e->status), sum->total, sum->count[TRIAL_COMPLETED],
	       sum->count[TRIAL_RUNNING] + sum->count[TRIAL_PAUSED], sum->count[TRIAL_STOPPED],
	       sum->count[TRIAL_FAILED], best, started, el);
}

static int status_run(store *s, const cli_read_opts *o, rl_err *err)
{
	store_experiment *v = NULL;
	size_t n = 0;
	int rc;
	if (o->experiment) {
		store_experiment one;
		if ((rc = store_experiment_find(s, o->experiment, &one, err)) < 0)
			return rc;
		v = calloc(1, sizeof *v);
		if (!v) {
			store_experiment_fini(&one);
			return rl_err_set(err, RL_ENOMEM, "status");
		}
		v[0] = one;
		n = 1;
	} else if ((rc = store_experiment_list(s, &v, &n, err)) < 0) {
		return rc;
	}
	double now = cli_now();
	int name_w = 10;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(v[i].name) > name_w)
			name_w = (int)strlen(v[i].name);
	json_t *arr = o->json ? json_array() : NULL;
	if (!o->json)
		printf("%-*s  %-9s  %6s  %5s  %4s  %4s  %4s  %-28s  %-19s  %s\n", name_w,
		       "EXPERIMENT", "STATUS", "TRIALS", "DONE", "RUN", "STOP", "FAIL", "BEST",
		       "STARTED", "ELAPSED");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct exp_summary sum;
		if ((rc = summarise(s, &v[i], &sum, err)) < 0)
			break;
		if (o->json)
			json_array_append_new(arr, status_json(&v[i], &sum, now));
		else
			status_line(&v[i], &sum, now, name_w);
		store_trial_fini(&sum.best);
	}
	store_experiments_free(v, n);
	if (rc < 0) {
		json_decref(arr);
		return rc;
	}
	return o->json ? cli_json_print(arr, err) : 0;
}

int cmd_status(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne line per experiment: state, trials by state "
			"(done/running/stopped/failed), best objective, start and elapsed time.\n",
		.flags = CLI_READ_EXP_ARG,
	};
	cli_read_opts o = {0};
	store *s;
	int rc = cli_read_begin(argc, argv, &spec, &o, &s, NULL, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	rc = status_run(s, &o, err);
	store_close(s);
	return rc;
}
