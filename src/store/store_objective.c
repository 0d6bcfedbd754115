/*
 * store_objective.c - several objectives and constraints (schema 10): an
 * experiment's objectives in order (objectives), and each trial's objective
 * values and constraint violation at its last boundary (trial_values,
 * trial_violations).  An experiment of one objective and no constraint
 * writes nothing here: its trials' objective column says all.  Readers of
 * an older database get nothing, as from such an experiment.
 */
#include "store/store_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char SQL_OBJ_CLEAR[] = "DELETE FROM objectives WHERE experiment_id = ?1";
static const char SQL_OBJ_INSERT[] =
	"INSERT INTO objectives(experiment_id, k, metric, mode) VALUES(?1, ?2, ?3, ?4)";
static const char SQL_OBJ_GET[] =
	"SELECT metric, mode FROM objectives WHERE experiment_id = ?1 ORDER BY k";
static const char SQL_VAL_CLEAR[] = "DELETE FROM trial_values WHERE trial_id = ?1";
static const char SQL_VAL_INSERT[] =
	"INSERT INTO trial_values(trial_id, k, value) VALUES(?1, ?2, ?3)";
static const char SQL_VIOL_SET[] =
	"INSERT OR REPLACE INTO trial_violations(trial_id, violation) VALUES(?1, ?2)";
static const char SQL_VAL_LIST[] =
	"SELECT t.id, t.idx, v.k, v.value, (SELECT violation FROM trial_violations w"
	" WHERE w.trial_id = t.id) FROM trials t JOIN trial_values v ON v.trial_id = t.id"
	" WHERE t.experiment_id = ?1 ORDER BY t.idx, v.k";

void store_objectives_free(store_objective *o, size_t n)
{
	for (size_t i = 0; o && i < n; i++) {
		free(o[i].metric);
		free(o[i].mode);
	}
	free(o);
}

int store_objectives_set(store *s, int64_t experiment_id, const store_objective *o, size_t n,
			 rl_err *err)
{
	if (n > STORE_OBJECTIVES_MAX)
		return rl_err_set(err, RL_EINVAL, "at most %d objectives, not %zu",
				  STORE_OBJECTIVES_MAX, n);
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_OBJ_CLEAR, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, experiment_id);
		rc = st_exec_stmt(s, st, err, "recording the objectives");
	}
	for (size_t k = 0; rc == 0 && k < n; k++) {
		if ((rc = st_prepare(s, SQL_OBJ_INSERT, &st, err)) < 0)
			break;
		sqlite3_bind_int64(st, 1, experiment_id);
		sqlite3_bind_int64(st, 2, (int64_t)k);
		st_bind_text(st, 3, o[k].metric);
		st_bind_text(st, 4, o[k].mode);
		rc = st_exec_stmt(s, st, err, "recording the objectives");
	}
	return st_tx_end(s, rc, err);
}

int store_objectives_get(store *s, int64_t experiment_id, store_objective **out, size_t *n,
			 rl_err *err)
{
	*out = NULL;
	*n = 0;
	if (s->version < 10)
		return 0;
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_OBJ_GET, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	store_objective *v = NULL;
	size_t nv = 0, cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_objective *x = st_grow((void **)&v, &nv, &cap, sizeof *v);
		int oom = !x;
		if (x) {
			x->metric = st_col_text(st, 0, &oom);
			x->mode = st_col_text(st, 1, &oom);
		}
		if (oom) {
			rc = rl_err_set(err, RL_ENOMEM, "reading the objectives");
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "reading the objectives");
	sqlite3_reset(st);
	if (rc < 0) {
		store_objectives_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_trial_set_values(store *s, int64_t trial_id, const double *v, size_t n,
			   double violation, rl_err *err)
{
	if (n > STORE_OBJECTIVES_MAX)
		return rl_err_set(err, RL_EINVAL, "at most %d objectives, not %zu",
				  STORE_OBJECTIVES_MAX, n);
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_VAL_CLEAR, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, trial_id);
		rc = st_exec_stmt(s, st, err, "recording a trial's objectives");
	}
	for (size_t k = 0; rc == 0 && k < n; k++) {
		if ((rc = st_prepare(s, SQL_VAL_INSERT, &st, err)) < 0)
			break;
		sqlite3_bind_int64(st, 1, trial_id);
		sqlite3_bind_int64(st, 2, (int64_t)k);
		st_bind_real(st, 3, v[k]);
		rc = st_exec_stmt(s, st, err, "recording a trial's objectives");
	}
	if (rc == 0 && !isnan(violation) && (rc = st_prepare(s, SQL_VIOL_SET, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, trial_id);
		sqlite3_bind_double(st, 2, violation < 0 ? 0 : violation);
		rc = st_exec_stmt(s, st, err, "recording a trial's violation");
	}
	return st_tx_end(s, rc, err);
}

int store_trial_values_list(store *s, int64_t experiment_id, store_trial_values **out,
			    size_t *n, rl_err *err)
{
	*out = NULL;
	*n = 0;
	if (s->version < 10)
		return 0;
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_VAL_LIST, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	store_trial_values *v = NULL;
	size_t nv = 0, cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int64_t k = sqlite3_column_int64(st, 2);
		store_trial_values *x = nv && v[nv - 1].trial_id == id ? &v[nv - 1] : NULL;
		if (!x) {
			x = st_grow((void **)&v, &nv, &cap, sizeof *v);
			if (!x) {
				rc = rl_err_set(err, RL_ENOMEM, "reading trials' objectives");
				break;
			}
			x->trial_id = id;
			x->idx = sqlite3_column_int(st, 1);
			for (size_t q = 0; q < STORE_OBJECTIVES_MAX; q++)
				x->v[q] = NAN;
			x->violation = st_col_real(st, 4);
		}
		if (k >= 0 && k < STORE_OBJECTIVES_MAX) {
			x->v[k] = st_col_real(st, 3);
			if ((size_t)k + 1 > x->n)
				x->n = (size_t)k + 1;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "reading trials' objectives");
	sqlite3_reset(st);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}
