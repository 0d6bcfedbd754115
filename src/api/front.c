/*
 * front.c - the front resource (encode.h, api_front_json): an experiment's
 * trials with every objective value, their feasibility and Pareto front,
 * from the store's objectives, trial_values and trial_violations
 * (store_objective.c).  One encoder for the API's route, `relish best`
 * and the dashboard's front plot, so all three agree on who is on it.
 */
#include "api/encode.h"
#include "search/pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int api_front_is_multi(const json_t *j)
{
	return json_array_size(json_object_get(j, "objectives")) > 1 ||
	       json_is_true(json_object_get(j, "constrained"));
}

int api_front_json(store *s, const store_experiment *e, json_t **out, rl_err *err)
{
	store_objective *ob = NULL;
	size_t no = 0, nt = 0, nv = 0;
	store_trial *tv = NULL;
	store_trial_values *vv = NULL;
	int rc = store_objectives_get(s, e->id, &ob, &no, err);
	if (rc == 0)
		rc = store_trial_values_list(s, e->id, &vv, &nv, err);
	/* One objective and no constraint (nothing recorded beside the
	 * trials' objective column): no front to list, and no trial is read
	 * (`relish best` and the dashboard ask every experiment). */
	if (rc == 0 && (no || nv))
		rc = store_trial_list(s, e->id, 0, &tv, &nt, err);
	if (rc < 0)
		goto done;
	/* An experiment of one objective: the experiment's own. */
	store_objective one = {e->objective_metric ? e->objective_metric : "",
			       e->mode ? e->mode : "min"};
	const store_objective *objs = no ? ob : &one;
	size_t m = no ? no : 1;
	int constrained = 0;
	for (size_t i = 0; i < nv; i++)
		constrained |= !isnan(vv[i].violation);
	/* Rows: trials with every objective's value (both lists by idx). */
	size_t n = 0;
	double *pts = malloc((nt ? nt : 1) * m * sizeof *pts);
	double *viol = malloc((nt ? nt : 1) * sizeof *viol);
	size_t *row = malloc((nt ? nt : 1) * sizeof *row);
	unsigned char *ok = malloc(nt ? nt : 1), *on = malloc(nt ? nt : 1);
	if (!pts || !viol || !row || !ok || !on) {
		rc = rl_err_set(err, RL_ENOMEM, "the front of %s", e->name);
		goto rows_done;
	}
	size_t j = 0;
	for (size_t i = 0; i < nt; i++) {
		const store_trial *t = &tv[i];
		while (j < nv && vv[j].idx < t->idx)
			j++;
		const store_trial_values *x = j < nv && vv[j].trial_id == t->id ? &vv[j] : NULL;
		if (!x)
			continue; /* no value of every objective yet */
		for (size_t k = 0; k < m; k++) {
			double v = x ? (k < x->n ? x->v[k] : NAN) : t->objective;
			pts[n * m + k] = strcmp(objs[k].mode, "max") ? v : -v;
		}
		viol[n] = x ? x->violation : NAN;
		ok[n] = t->status == TRIAL_COMPLETED && !(viol[n] > 0);
		row[n++] = i;
	}
	pareto_front(pts, n, m, ok, on);
	json_t *jo = json_array(), *jf = json_array(), *jt = json_array();
	for (size_t k = 0; k < m; k++)
		json_array_append_new(jo, json_pack("{s:s, s:s}", "metric", objs[k].metric, "mode",
						    objs[k].mode));
	for (size_t r = 0; r < n; r++) {
		const store_trial *t = &tv[row[r]];
		json_t *vals = json_array();
		for (size_t k = 0; k < m; k++) {
			double v = pts[r * m + k];
			json_array_append_new(vals, api_json_real(strcmp(objs[k].mode, "max") ? v : -v));
		}
		if (on[r])
			json_array_append_new(jf, json_integer((json_int_t)t->id));
		json_array_append_new(
			jt, json_pack("{s:I, s:i, s:s, s:o, s:o, s:o, s:b, s:b}", "trial_id",
				      (json_int_t)t->id, "index", t->idx, "status",
				      trial_status_name(t->status), "params",
				      api_json_params(t->params_json), "values", vals, "violation",
				      api_json_real(viol[r]), "feasible", !(viol[r] > 0), "front",
				      on[r]));
	}
	*out = json_pack("{s:s, s:o, s:b, s:o, s:o}", "experiment", e->name, "objectives", jo,
			 "constrained", constrained, "front", jf, "trials", jt);
	if (!*out)
		rc = rl_err_set(err, RL_ENOMEM, "the front of %s", e->name);
rows_done:
	free(pts);
	free(viol);
	free(row);
	free(ok);
	free(on);
done:
	store_objectives_free(ob, no);
	store_trials_free(tv, nt);
	free(vv);
	return rc;
}
