/*
 * cmd_trials.c - relish trials [--db F] [--json] [--experiment NAME]: one
 * row per trial of an experiment (the latest one by default): id, state,
 * resource reached, latest objective, its latest segment's reservation
 * basis with the estimated and measured peak memory and the estimate's
 * error, that segment's mean GPU utilisation, parameters, how many segments
 * it ran, how many of them ran out of memory, and its last error (with
 * --json also the last out-of-memory message on its own).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_source.h"
#include "cli/table.h"
#include "api/encode.h"

static const char usage[] = "relish trials [--db FILE | --server ADDR] [--json] [--wide] [--experiment NAME]";

/* (estimate - peak) / peak, NAN when either is unknown. */
static double est_error(const store_trial *t)
{
	return api_trial_est_error(t);
}

static void mib_cell(char *buf, size_t n, int64_t v)
{
	if (v > 0)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "-");
}

/* Columns: what a person needs first comes first in priority, so an 80
 * column terminal shows id, status, resource, objective, params and the
 * error; the memory and utilisation columns join as the width allows and
 * --wide shows them all. */
enum { C_ID, C_INDEX, C_STATUS, C_RES, C_OBJ, C_BASIS, C_EST, C_PEAK, C_ERR, C_UTIL,
       C_SEGS, C_OOM, C_PARAMS, C_ERROR, C__N };
static const cli_col cols[C__N] = {
	[C_ID] = {"ID", 1, 0, 0, 0},           [C_INDEX] = {"INDEX", 1, 9, 0, 0},
	[C_STATUS] = {"STATUS", 0, 0, 0, 0},   [C_RES] = {"RESOURCE", 1, 1, 0, 0},
	[C_OBJ] = {"OBJECTIVE", 1, 0, 0, 0},   [C_BASIS] = {"BASIS", 0, 8, 0, 0},
	[C_EST] = {"EST_MiB", 1, 6, 0, 0},     [C_PEAK] = {"PEAK_MiB", 1, 5, 0, 0},
	[C_ERR] = {"ERR%", 1, 7, 0, 0},        [C_UTIL] = {"UTIL", 1, 7, 0, 0},
	[C_SEGS] = {"SEGS", 1, 4, 0, 0},       [C_OOM] = {"OOM", 1, 4, 0, 0},
	[C_PARAMS] = {"PARAMS", 0, 2, 1, 16},  [C_ERROR] = {"LAST ERROR", 0, 3, 1, 12},
};

/* fv: several objectives (NULL: one), the OBJECTIVE cell then shows every
 * value, " *" marking a trial on the front. */
static int trial_row(cli_table *tb, const store_trial *t, const cli_front_values *fv)
{
	char id[24], idx[16], res[40], obj[256], est[24], peak[24], errp[24], util[24], segs[16],
		oom[16], pbuf[1024], ebuf[512];
	snprintf(id, sizeof id, "%lld", (long long)t->id);
	snprintf(idx, sizeof idx, "%d", t->idx);
	cli_format_value(t->resource_done, res, sizeof res);
	if (fv)
		cli_front_values_text(fv, t->id, obj, sizeof obj);
	else
		cli_format_value(t->objective, obj, sizeof obj);
	mib_cell(est, sizeof est, t->last_est_mib);
	mib_cell(peak, sizeof peak, t->last_peak_mib);
	double e = est_error(t);
	if (isnan(e))
		snprintf(errp, sizeof errp, "-");
	else
		snprintf(errp, sizeof errp, "%+.1f", 100.0 * e);
	if (isnan(t->last_util))
		snprintf(util, sizeof util, "-");
	else
		snprintf(util, sizeof util, "%.0f", t->last_util);
	snprintf(segs, sizeof segs, "%d", t->n_segments);
	snprintf(oom, sizeof oom, "%d", t->n_oom);
	/* One line per trial: keep only the first line of a multi-line error. */
	const char *error = cli_trial_error(t);
	snprintf(ebuf, sizeof ebuf, "%.*s", error ? (int)strcspn(error, "\r\n") : 1,
		 error ? error : "-");
	const char *cells[C__N] = {
		[C_ID] = id, [C_INDEX] = idx, [C_STATUS] = trial_status_name(t->status),
		[C_RES] = res, [C_OBJ] = obj, [C_BASIS] = t->last_basis ? t->last_basis : "-",
		[C_EST] = est, [C_PEAK] = peak, [C_ERR] = errp, [C_UTIL] = util, [C_SEGS] = segs,
		[C_OOM] = oom, [C_PARAMS] = cli_params_text(t->params_json, pbuf, sizeof pbuf),
		[C_ERROR] = ebuf,
	};
	return cli_table_add(tb, cells);
}

/* The trial resource (api/encode.c), with the memory columns. */
/* With several objectives (or constraints) a trial's JSON carries what the
 * front resource says of it: every objective's value ("values", in the
 * spec's order, null where not reported), "feasible", "violation" and
 * "front"; "objective" stays the first one's, as before. */
static void front_fields(json_t *j, json_t *ft)
{
	static const char *const keys[] = {"values", "feasible", "violation", "front"};
	for (size_t k = 0; ft && k < sizeof keys / sizeof keys[0]; k++) {
		json_t *v = json_object_get(ft, keys[k]);
		if (v)
			json_object_set(j, keys[k], v);
	}
}

static json_t *trial_json(const store_experiment *e, const store_trial *t)
{
	return api_json_trial(e, t);
}

int cmd_trials(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne row per trial: id, index, status, resource reached, objective,\n"
			"its latest segment's reservation basis, estimated and measured peak "
			"memory\n(MiB) and the estimate's error, that segment's mean GPU "
			"utilisation (%),\nsegments run, out-of-memory count, params, last error.\n"
			"On a terminal the table fits its width: the columns that matter most\n"
			"(id, status, resource, objective, params, error) stay, long params and\n"
			"errors end in an ellipsis; values show 6 significant digits.\n"
			"  --wide   every column in full (also when stdout is not a terminal)\n"
			"  --json   every trial with every digit\n"
			"With several objectives OBJECTIVE shows every value, in the spec's order,\n"
			"and ' *' marks a trial on the Pareto front (relish best prints the front).\n",
		.flags = CLI_READ_WIDE | CLI_READ_SERVER,
	};
	cli_read_opts o = {0};
	cli_src s;
	store_experiment e;
	int rc = cli_src_begin(argc, argv, &spec, &o, &s, &e, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	store_trial *tv;
	size_t nt;
	rc = cli_src_trials(&s, &e, &tv, &nt, err);
	if (rc == 0) {
		/* Several objectives: every one, from the front resource. */
		json_t *front = NULL;
		cli_front_values fv = {0};
		int multi = 0;
		if (cli_src_front(&s, &e, &front, err) == 0 && api_front_is_multi(front))
			multi = 1;
		rl_err_clear(err);
		if (multi && cli_front_values_init(&fv, front) < 0)
			rc = rl_err_set(err, RL_ENOMEM, "trials");
		if (rc == 0 && o.json) {
			json_t *arr = json_array();
			for (size_t i = 0; arr && i < nt; i++) {
				json_t *j = trial_json(&e, &tv[i]);
				if (j && multi)
					front_fields(j, cli_front_values_get(&fv, tv[i].id));
				json_array_append_new(arr, j);
			}
			rc = arr ? cli_json_print(arr, err) : rl_err_set(err, RL_ENOMEM, "trials");
		} else if (rc == 0) {
			cli_table *tb = cli_table_new(cols, C__N);
			for (size_t i = 0; tb && rc == 0 && i < nt; i++)
				if (trial_row(tb, &tv[i], multi ? &fv : NULL) < 0)
					rc = rl_err_set(err, RL_ENOMEM, "trials table");
			if (!tb)
				rc = rl_err_set(err, RL_ENOMEM, "trials table");
			if (rc == 0) {
				char objs[512];
				if (multi)
					cli_front_objectives_text(front, objs, sizeof objs);
				else
					snprintf(objs, sizeof objs, "%s %s", e.mode, e.objective_metric);
				printf("# experiment %s (%s)\n", e.name, objs);
				cli_table_print(tb, stdout, cli_term_width(o.wide));
			}
			cli_table_free(tb);
		}
		cli_front_values_fini(&fv);
		json_decref(front);
		store_trials_free(tv, nt);
	}
	store_experiment_fini(&e);
	cli_src_close(&s);
	return rc;
}
