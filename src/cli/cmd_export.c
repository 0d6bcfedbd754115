/*
 * cmd_export.c - relish export --format csv|json [--db F]
 * [--experiment NAME] [--what experiments|trials|metrics|segments|wide|all]:
 * a table of the state database on standard output, for spreadsheets,
 * pandas or jq.  CSV has a header row and RFC 4180 quoting; JSON is one
 * array of objects; `all` (JSON only: four tables are not one CSV) is one
 * object holding the four arrays, everything the state keeps.  Without
 * --experiment every experiment is exported (an "experiment" column says
 * which).  Each kind is one row of the table `exports` below; `wide`
 * (one row per trial, params and final metrics as columns) learns its
 * columns from the data and is export_wide.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_source.h"
#include "api/encode.h"
#include "cli/export_wide.h"

static const char usage[] = "relish export --format csv|json [--db FILE | --server ADDR] "
			    "[--experiment NAME] [--what experiments|trials|metrics|segments|wide|all]";

struct export_ctx {
	cli_src *s;
	int json;
	json_t *arr;            /* JSON: the output array */
	int multi;              /* trials: an experiment has several objectives or
				 * constraints: the front columns are written */
	json_t *front;          /* trials: the front resource of the experiment
				 * being written (api_front_json), or NULL */
};

/* The front resource's row of trial id, or NULL. */
static json_t *front_row(const json_t *front, int64_t id)
{
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(front, "trials"), i, t)
		if (json_integer_value(json_object_get(t, "trial_id")) == id)
			return t;
	return NULL;
}

/* One CSV row on stdout, written column by column; each writer puts the
 * comma before its field, so rows read in the order of the header. */
struct csv_row {
	int n; /* fields written so far */
};

static void col_sep(struct csv_row *r)
{
	if (r->n++)
		putchar(',');
}

static void col_str(struct csv_row *r, const char *s)
{
	col_sep(r);
	cli_csv_field(stdout, s);
}

static void col_real(struct csv_row *r, double v)
{
	col_sep(r);
	cli_csv_real(stdout, v);
}

/* An integer, or an empty field when it is not known. */
static void col_int(struct csv_row *r, long long v, int known)
{
	col_sep(r);
	if (known)
		printf("%lld", v);
}

/* ---- experiments ---- */

static int export_experiments(struct export_ctx *x, const store_experiment *e, rl_err *err)
{
	if (x->json) {
		/* the summary `relish status --json` and the API give */
		api_exp_summary sum;
		memset(&sum, 0, sizeof sum);
		int rc = cli_src_summary(x->s, e, &sum, err);
		if (rc == 0) {
			json_t *j = api_json_experiment(e, &sum, cli_now());
			if (j && e->spec_text)
				json_object_set_new(j, "spec", json_string(e->spec_text));
			json_array_append_new(x->arr, j);
		}
		api_exp_summary_fini(&sum);
		return rc;
	}
	struct csv_row r = {0};
	col_str(&r, e->name);
	col_int(&r, e->id, 1);
	col_str(&r, e->owner);
	col_str(&r, exp_status_name(e->status));
	col_str(&r, e->objective_metric);
	col_str(&r, e->mode);
	col_real(&r, e->created_at);
	col_real(&r, e->finished_at);
	col_str(&r, e->spec_path);
	col_str(&r, e->spec_text);
	putchar('\n');
	return 0;
}

/* ---- trials ---- */

static int export_trials(struct export_ctx *x, const store_experiment *e, rl_err *err)
{
	store_trial *tv;
	size_t nt;
	int rc = cli_src_trials(x->s, e, &tv, &nt, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nt; i++) {
		const store_trial *t = &tv[i];
		/* Several objectives or constraints: every objective's value,
		 * the violation, feasibility and whether it is on the front. */
		json_t *fr = x->front && api_front_is_multi(x->front) ? front_row(x->front, t->id) : NULL;
		if (x->json) {
			json_t *j = cli_trial_json(e, t);
			if (x->front && api_front_is_multi(x->front)) {
				json_object_set(j, "values", fr ? json_object_get(fr, "values") : json_null());
				json_object_set(j, "violation", fr ? json_object_get(fr, "violation") : json_null());
				json_object_set_new(j, "feasible", fr ? json_incref(json_object_get(fr, "feasible"))
								      : json_null());
				json_object_set_new(j, "front", json_boolean(fr && json_is_true(
											 json_object_get(fr, "front"))));
			}
			json_array_append_new(x->arr, j);
			continue;
		}
		struct csv_row r = {0};
		col_str(&r, e->name);
		col_int(&r, t->id, 1);
		col_int(&r, t->idx, 1);
		col_str(&r, trial_status_name(t->status));
		col_real(&r, t->resource_done);
		col_real(&r, t->objective);
		col_real(&r, t->objective_resource);
		col_int(&r, t->n_segments, 1);
		col_int(&r, t->n_oom, 1);
		col_str(&r, cli_trial_error(t));
		col_real(&r, t->created_at);
		col_real(&r, t->updated_at);
		col_str(&r, t->params_json);
		if (x->multi) {
			char *vals = fr ? json_dumps(json_object_get(fr, "values"), JSON_COMPACT |
						     JSON_REAL_PRECISION(16)) : NULL;
			json_t *vi = fr ? json_object_get(fr, "violation") : NULL;
			col_str(&r, vals);
			col_real(&r, json_is_number(vi) ? json_number_value(vi) : NAN);
			col_str(&r, !fr ? NULL : json_is_true(json_object_get(fr, "feasible")) ? "true" : "false");
			col_str(&r, !x->front || !api_front_is_multi(x->front) ? NULL
				    : fr && json_is_true(json_object_get(fr, "front")) ? "true" : "false");
			free(vals);
		}
		putchar('\n');
	}
	store_trials_free(tv, nt);
	return 0;
}

/* ---- metrics ---- */

static int export_metrics(struct export_ctx *x, const store_experiment *e, rl_err *err)
{
	store_metric *mv;
	size_t nm;
	int rc = cli_src_metrics(x->s, e, &mv, &nm, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nm; i++) {
		const store_metric *m = &mv[i];
		if (x->json) {
			json_array_append_new(x->arr, api_json_metric(e, m));
			continue;
		}
		struct csv_row r = {0};
		col_str(&r, e->name);
		col_int(&r, m->trial_id, 1);
		col_int(&r, m->segment_id, m->segment_id > 0);
		col_real(&r, m->resource);
		col_str(&r, m->name);
		col_real(&r, m->value);
		col_real(&r, m->at);
		putchar('\n');
	}
	store_metrics_free(mv, nm);
	return 0;
}

/* ---- segments ---- */

/* The segment resource (api/encode.c). */
static json_t *segment_json(const store_experiment *e, const store_segment *g)
{
	return api_json_segment(e, g);
}

static int export_segments(struct export_ctx *x, const store_experiment *e, rl_err *err)
{
	store_segment *gv;
	size_t ng;
	int rc = cli_src_exp_segments(x->s, e, &gv, &ng, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < ng; i++) {
		const store_segment *g = &gv[i];
		if (x->json) {
			json_array_append_new(x->arr, segment_json(e, g));
			continue;
		}
		struct csv_row r = {0};
		col_str(&r, e->name);
		col_int(&r, g->id, 1);
		col_int(&r, g->trial_id, 1);
		col_int(&r, g->seq, 1);
		col_real(&r, g->resource_from);
		col_real(&r, g->resource_to);
		col_str(&r, seg_status_name(g->status));
		col_int(&r, g->exit_code, g->exit_code >= 0);
		col_int(&r, g->signal, g->signal > 0);
		col_str(&r, g->device);
		col_int(&r, g->mem_reserved_mib, g->mem_reserved_mib >= 0);
		col_real(&r, g->compute_share);
		col_str(&r, g->basis);
		col_int(&r, g->est_mem_mib, g->est_mem_mib >= 0);
		col_int(&r, g->peak_mem_mib, g->peak_mem_mib >= 0);
		col_int(&r, g->pid, g->pid > 0);
		col_str(&r, g->handle);
		col_real(&r, g->started_at);
		col_real(&r, g->ended_at);
		col_str(&r, g->log_path);
		col_str(&r, g->message);
		putchar('\n');
	}
	store_segments_free(gv, ng);
	return 0;
}

static const struct export_kind {
	const char *what;
	const char *csv_header;
	int (*fn)(struct export_ctx *x, const store_experiment *e, rl_err *err);
} exports[] = {
	{"experiments", "experiment,id,owner,status,objective,mode,created_at,finished_at,"
			"spec_path,spec", export_experiments},
	{"trials", "experiment,trial_id,index,status,resource,objective,objective_resource,"
		   "segments,oom,error,created_at,updated_at,params", export_trials},
	{"metrics", "experiment,trial_id,segment_id,resource,name,value,at", export_metrics},
	{"segments", "experiment,segment_id,trial_id,seq,resource_from,resource_to,status,"
		     "exit_code,signal,device,mem_reserved_mib,compute_share,basis,est_mem_mib,"
		     "peak_mem_mib,pid,handle,started_at,ended_at,log_path,message",
	 export_segments},
};

static int export_run(cli_src *s, const struct export_kind *k, const cli_read_opts *o,
		      rl_err *err)
{
	store_experiment *v = NULL;
	size_t n = 0;
	int rc;
	if ((rc = cli_src_experiments(s, o->experiment, &v, &n, err)) < 0)
		return rc;
	struct export_ctx x = {.s = s, .json = o->json, .arr = o->json ? json_array() : NULL};
	/* Trials of experiments with several objectives or constraints get
	 * their front columns; the others' rows leave them empty (and an
	 * export without such an experiment is as it always was). */
	json_t **fronts = k->fn == export_trials ? calloc(n ? n : 1, sizeof *fronts) : NULL;
	if (k->fn == export_trials && !fronts)
		rc = rl_err_set(err, RL_ENOMEM, "exporting trials");
	for (size_t i = 0; rc == 0 && fronts && i < n; i++) {
		rl_err e2 = {0};
		if (cli_src_front(s, &v[i], &fronts[i], &e2) < 0)
			fronts[i] = NULL; /* an older service: no front to mark */
		x.multi |= fronts[i] && api_front_is_multi(fronts[i]);
	}
	if (!o->json)
		printf("%s%s\n", k->csv_header, x.multi ? ",values,violation,feasible,front" : "");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		x.front = fronts ? fronts[i] : NULL;
		rc = k->fn(&x, &v[i], err);
	}
	for (size_t i = 0; fronts && i < n; i++)
		json_decref(fronts[i]);
	free(fronts);
	store_experiments_free(v, n);
	if (rc < 0) {
		json_decref(x.arr);
		return rc;
	}
	if (o->json)
		return cli_json_print(x.arr, err);
	if (fflush(stdout) != 0 || ferror(stdout))
		return rl_err_set(err, RL_EIO, "writing to standard output");
	return 0;
}

/* --what all: every table, one JSON object of arrays by kind. */
static int export_all(cli_src *s, const cli_read_opts *o, rl_err *err)
{
	store_experiment *v = NULL;
	size_t n = 0;
	int rc;
	if ((rc = cli_src_experiments(s, o->experiment, &v, &n, err)) < 0)
		return rc;
	json_t *all = json_object();
	for (size_t k = 0; rc == 0 && k < sizeof exports / sizeof exports[0]; k++) {
		struct export_ctx x = {.s = s, .json = 1, .arr = json_array()};
		for (size_t i = 0; rc == 0 && i < n; i++)
			rc = exports[k].fn(&x, &v[i], err);
		json_object_set_new(all, exports[k].what, x.arr);
	}
	store_experiments_free(v, n);
	if (rc < 0) {
		json_decref(all);
		return rc;
	}
	return cli_json_print(all, err);
}

/* --format and --what, as given. */
struct export_args {
	const char *format, *what;
};

static int export_opt(int c, const char *arg, void *ctx, rl_err *err)
{
	(void)err;
	struct export_args *a = ctx;
	if (c == 'f')
		a->format = arg;
	else
		a->what = arg;
	return 0;
}

int cmd_export(int argc, char **argv, rl_err *err)
{
	static const struct option own[] = {
		{"format", required_argument, NULL, 'f'},
		{"what", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0}};
	struct export_args a = {.what = "trials"};
	const cli_read_spec spec = {
		.usage = usage,
		.help = "\nWrites experiments, trials (default), metrics or segments of one "
			"or all experiments to standard output;\n--what wide: one row per trial "
			"with its parameters (params_NAME) and each metric's\nfinal value "
			"(final_NAME) as columns; --what all (JSON): every table at once.\n",
		.own = own,
		.own_opt = export_opt,
		.ctx = &a,
		.flags = CLI_READ_SERVER,
	};
	cli_read_opts o = {0};
	int rc = cli_read_args(argc, argv, &spec, &o, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	const char *format = a.format, *what = a.what;
	if (!format && o.json)
		format = "json";
	if (!format)
		return cli_usage_error(err, usage, "--format csv|json is required");
	if (!strcmp(format, "json"))
		o.json = 1;
	else if (strcmp(format, "csv"))
		return cli_usage_error(err, usage, "--format: expected csv or json, got '%s'",
				       format);
	else if (o.json)
		return cli_usage_error(err, usage, "--json conflicts with --format csv");
	if (!strcmp(what, "all")) {
		if (!o.json)
			return cli_usage_error(err, usage, "--what all needs --format json (four "
					       "tables are not one CSV; --what experiments, trials, "
					       "metrics and segments give each)");
		cli_src s;
		if ((rc = cli_src_open(&o, &s, err)) < 0)
			return rc;
		rc = export_all(&s, &o, err);
		cli_src_close(&s);
		return rc;
	}
	if (!strcmp(what, "wide")) {
		cli_src s;
		if ((rc = cli_src_open(&o, &s, err)) < 0)
			return rc;
		rc = export_wide(&s, o.experiment, o.json, err);
		cli_src_close(&s);
		return rc;
	}
	const struct export_kind *k = NULL;
	for (size_t i = 0; i < sizeof exports / sizeof exports[0]; i++)
		if (!strcmp(exports[i].what, what))
			k = &exports[i];
	if (!k)
		return cli_usage_error(err, usage,
				       "--what: expected experiments, trials, metrics, segments, wide "
				       "or all, got '%s'",
				       what);
	cli_src s;
	if ((rc = cli_src_open(&o, &s, err)) < 0)
		return rc;
	rc = export_run(&s, k, &o, err);
	cli_src_close(&s);
	return rc;
}
