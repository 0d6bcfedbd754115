/*
 * export_wide.c - `relish export --what wide`: one row per trial with its
 * parameters as columns (params_NAME) and each metric's final value, the
 * one reported at the trial's highest resource (final_NAME), beside the
 * trial's own columns: the shape a notebook wants (pandas.read_csv gives
 * a frame at once; the Python client's trials_dataframe() has the same
 * columns).  The columns are the union over the exported experiments, in
 * order of first appearance; a trial without a parameter (conditional
 * spaces) or a metric leaves the field empty (null in JSON).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/encode.h"
#include "cli/cli_common.h"
#include "cli/export_wide.h"

typedef struct names {
	char **v;
	size_t n, cap;
} names;

static long name_index(const names *s, const char *x)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], x))
			return (long)i;
	return -1;
}

static int name_add(names *s, const char *x)
{
	if (name_index(s, x) >= 0)
		return 0;
	if (s->n == s->cap) {
		size_t nc = s->cap ? 2 * s->cap : 16;
		char **nv = realloc(s->v, nc * sizeof *nv);
		if (!nv)
			return -1;
		s->v = nv;
		s->cap = nc;
	}
	if (!(s->v[s->n] = strdup(x)))
		return -1;
	s->n++;
	return 0;
}

static void names_free(names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

/* What one experiment contributes: its trials, their params parsed, and
 * per trial the final value of each metric (by index into the names). */
typedef struct exp_rows {
	store_experiment *e;
	store_trial *tv;
	size_t nt;
	json_t **params;     /* per trial, an object (or NULL) */
	double *final;       /* nt x metric names, NAN unknown */
	double *final_res;
	store_metric *mv;    /* its metrics, report order */
	size_t nm;
} exp_rows;

/* Trial ids to their row, sorted by id for bsearch. */
typedef struct id_row {
	int64_t id;
	size_t row;
} id_row;

static int cmp_id_row(const void *a, const void *b)
{
	const id_row *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void csv_sep(int *n)
{
	if ((*n)++)
		putchar(',');
}

static void csv_value(int *n, const json_t *v)
{
	csv_sep(n);
	if (!v || json_is_null(v))
		return;
	if (json_is_string(v))
		cli_csv_field(stdout, json_string_value(v));
	else if (json_is_integer(v))
		printf("%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		cli_csv_real(stdout, json_real_value(v));
	else if (json_is_true(v))
		fputs("true", stdout);
	else if (json_is_false(v))
		fputs("false", stdout);
	else {
		char *t = json_dumps(v, JSON_COMPACT);
		cli_csv_field(stdout, t ? t : "");
		free(t);
	}
}

int export_wide(cli_src *s, const char *experiment, int as_json, rl_err *err)
{
	store_experiment *ev = NULL;
	size_t ne = 0;
	int rc = cli_src_experiments(s, experiment, &ev, &ne, err);
	if (rc < 0)
		return rc;
	names params = {0}, metrics = {0};
	exp_rows *rows = calloc(ne ? ne : 1, sizeof *rows);
	if (!rows) {
		store_experiments_free(ev, ne);
		return rl_err_set(err, RL_ENOMEM, "export");
	}
	/* Pass 1: read everything and learn the columns. */
	for (size_t i = 0; rc == 0 && i < ne; i++) {
		exp_rows *x = &rows[i];
		x->e = &ev[i];
		if ((rc = cli_src_trials(s, x->e, &x->tv, &x->nt, err)) < 0)
			break;
		if (!(x->params = calloc(x->nt ? x->nt : 1, sizeof *x->params))) {
			rc = rl_err_set(err, RL_ENOMEM, "export");
			break;
		}
		for (size_t t = 0; rc == 0 && t < x->nt; t++) {
			json_t *p = x->tv[t].params_json ? json_loads(x->tv[t].params_json, 0, NULL) : NULL;
			if (p && !json_is_object(p)) {
				json_decref(p);
				p = NULL;
			}
			x->params[t] = p;
			const char *k;
			json_t *v;
			json_object_foreach(p, k, v)
			{
				(void)v;
				if (name_add(&params, k) < 0)
					rc = rl_err_set(err, RL_ENOMEM, "export");
			}
		}
		if (rc < 0 || (rc = cli_src_metrics(s, x->e, &x->mv, &x->nm, err)) < 0)
			break;
		for (size_t m = 0; rc == 0 && m < x->nm; m++)
			if (x->mv[m].name && name_add(&metrics, x->mv[m].name) < 0)
				rc = rl_err_set(err, RL_ENOMEM, "export");
	}
	/* Pass 2: each trial's final value per metric, now that every name
	 * has its column. */
	for (size_t i = 0; rc == 0 && i < ne; i++) {
		exp_rows *x = &rows[i];
		size_t cells = (x->nt ? x->nt : 1) * (metrics.n ? metrics.n : 1);
		x->final = malloc(cells * sizeof *x->final);
		x->final_res = malloc(cells * sizeof *x->final_res);
		if (!x->final || !x->final_res) {
			rc = rl_err_set(err, RL_ENOMEM, "export");
			break;
		}
		for (size_t c = 0; c < cells; c++)
			x->final[c] = x->final_res[c] = NAN;
		id_row *ids = malloc((x->nt ? x->nt : 1) * sizeof *ids);
		if (!ids) {
			rc = rl_err_set(err, RL_ENOMEM, "export");
			break;
		}
		for (size_t t = 0; t < x->nt; t++)
			ids[t] = (id_row){x->tv[t].id, t};
		qsort(ids, x->nt, sizeof *ids, cmp_id_row);
		const store_metric *mv = x->mv;
		long last_name = -1;
		const char *last = NULL;
		for (size_t m = 0; m < x->nm; m++) {
			if (!mv[m].name)
				continue;
			if (!last || strcmp(last, mv[m].name) != 0) {
				last = mv[m].name;
				last_name = name_index(&metrics, last);
			}
			id_row key = {mv[m].trial_id, 0};
			const id_row *hit = bsearch(&key, ids, x->nt, sizeof *ids, cmp_id_row);
			if (last_name < 0 || !hit)
				continue;
			size_t c = hit->row * metrics.n + (size_t)last_name;
			/* report order: a later value at the same resource wins */
			if (isnan(x->final_res[c]) || mv[m].resource >= x->final_res[c]) {
				x->final_res[c] = mv[m].resource;
				x->final[c] = mv[m].value;
			}
		}
		free(ids);
	}
	json_t *arr = as_json && rc == 0 ? json_array() : NULL;
	if (rc == 0 && !as_json) {
		printf("experiment,trial_id,index,status,resource,objective,objective_resource,"
		       "segments,oom,error,created_at,updated_at");
		for (size_t p = 0; p < params.n; p++) {
			putchar(',');
			char col[300];
			snprintf(col, sizeof col, "params_%s", params.v[p]);
			cli_csv_field(stdout, col);
		}
		for (size_t m = 0; m < metrics.n; m++) {
			putchar(',');
			char col[300];
			snprintf(col, sizeof col, "final_%s", metrics.v[m]);
			cli_csv_field(stdout, col);
		}
		putchar('\n');
	}
	for (size_t i = 0; rc == 0 && i < ne; i++) {
		exp_rows *x = &rows[i];
		for (size_t t = 0; t < x->nt; t++) {
			const store_trial *tr = &x->tv[t];
			if (as_json) {
				json_t *o = json_pack("{s:s, s:I, s:i, s:s, s:o, s:o, s:o, s:i, s:i, s:o, "
						      "s:o, s:o}",
						      "experiment", x->e->name, "trial_id",
						      (json_int_t)tr->id, "index", tr->idx, "status",
						      trial_status_name(tr->status), "resource",
						      api_json_real(tr->resource_done), "objective",
						      api_json_real(tr->objective), "objective_resource",
						      api_json_real(tr->objective_resource), "segments",
						      tr->n_segments, "oom", tr->n_oom, "error",
						      api_json_str(cli_trial_error(tr)), "created_at",
						      api_json_real(tr->created_at), "updated_at",
						      api_json_real(tr->updated_at));
				char col[300];
				for (size_t p = 0; o && p < params.n; p++) {
					json_t *v = x->params[t] ? json_object_get(x->params[t], params.v[p])
								 : NULL;
					snprintf(col, sizeof col, "params_%s", params.v[p]);
					json_object_set_new(o, col, v ? json_incref(v) : json_null());
				}
				for (size_t m = 0; o && m < metrics.n; m++) {
					snprintf(col, sizeof col, "final_%s", metrics.v[m]);
					json_object_set_new(o, col,
							    api_json_real(x->final[t * metrics.n + m]));
				}
				if (!o || json_array_append_new(arr, o) < 0)
					rc = rl_err_set(err, RL_ENOMEM, "export");
				continue;
			}
			int n = 0;
			csv_sep(&n);
			cli_csv_field(stdout, x->e->name);
			csv_sep(&n);
			printf("%lld", (long long)tr->id);
			csv_sep(&n);
			printf("%d", tr->idx);
			csv_sep(&n);
			fputs(trial_status_name(tr->status), stdout);
			csv_sep(&n);
			cli_csv_real(stdout, tr->resource_done);
			csv_sep(&n);
			cli_csv_real(stdout, tr->objective);
			csv_sep(&n);
			cli_csv_real(stdout, tr->objective_resource);
			csv_sep(&n);
			printf("%d", tr->n_segments);
			csv_sep(&n);
			printf("%d", tr->n_oom);
			csv_sep(&n);
			cli_csv_field(stdout, cli_trial_error(tr));
			csv_sep(&n);
			cli_csv_real(stdout, tr->created_at);
			csv_sep(&n);
			cli_csv_real(stdout, tr->updated_at);
			for (size_t p = 0; p < params.n; p++)
				csv_value(&n, x->params[t] ? json_object_get(x->params[t], params.v[p])
							   : NULL);
			for (size_t m = 0; m < metrics.n; m++) {
				csv_sep(&n);
				cli_csv_real(stdout, x->final[t * metrics.n + m]);
			}
			putchar('\n');
		}
	}
	for (size_t i = 0; i < ne; i++) {
		exp_rows *x = &rows[i];
		for (size_t t = 0; x->params && t < x->nt; t++)
			json_decref(x->params[t]);
		free(x->params);
		free(x->final);
		free(x->final_res);
		store_metrics_free(x->mv, x->nm);
		store_trials_free(x->tv, x->nt);
	}
	free(rows);
	names_free(&params);
	names_free(&metrics);
	store_experiments_free(ev, ne);
	if (rc < 0) {
		json_decref(arr);
		return rc;
	}
	if (as_json)
		return cli_json_print(arr, err);
	if (fflush(stdout) != 0 || ferror(stdout))
		return rl_err_set(err, RL_EIO, "writing to standard output");
	return 0;
}
