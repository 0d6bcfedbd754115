/*
 * store_trial.c - the trials table: one row per hyperparameter configuration
 * of an experiment, with its life state, progress and latest objective.
 * Reads also summarise the trial's segments (count, out-of-memory count, last
 * error) so `relish trials` needs one query, and can attach the metric
 * history the search engine needs to rebuild its state after a restart.
 */
#include "store/store_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Trial columns plus segment summaries; the last error is the message of the
 * latest segment that ended in anything but success, unless a later segment
 * completed: an error the trial recovered from (a restart that lost a
 * segment, an OOM re-placed with more memory) is history once it trained
 * on (`relish logs` and the events keep it).
 * "+g.status" keeps SQLite on the (trial_id, seq) index for the OOM count:
 * by the status index it read every OOM segment of the database once per
 * trial (nine tenths of the time of listing 10,000 trials went there). */
#define TRIAL_SELECT                                                                  \
	"SELECT t.id, t.experiment_id, t.idx, t.params_json, t.status, t.resource_done," \
	" t.objective, t.objective_resource, t.error, t.created_at, t.updated_at,"       \
	" (SELECT count(*) FROM segments g WHERE g.trial_id = t.id),"                    \
	" (SELECT count(*) FROM segments g WHERE g.trial_id = t.id AND +g.status = 'oom'),"\
	" (SELECT COALESCE(g.message, g.status) FROM segments g WHERE g.trial_id = t.id" \
	"   AND g.status NOT IN ('planned', 'running', 'completed')"                     \
	"   AND NOT EXISTS (SELECT 1 FROM segments c WHERE c.trial_id = t.id"            \
	"    AND c.status = 'completed' AND c.seq > g.seq)"                               \
	"   ORDER BY g.seq DESC, g.id DESC LIMIT 1),"                                     \
	" (SELECT g.message FROM segments g WHERE g.trial_id = t.id AND g.status = 'oom'" \
	"   ORDER BY g.seq DESC, g.id DESC LIMIT 1),"                                     \
	" l.basis, l.est_mem_mib, l.peak_mem_mib, l.mean_util"                           \
	" FROM trials t LEFT JOIN segments l ON l.id = (SELECT g.id FROM segments g"     \
	"   WHERE g.trial_id = t.id ORDER BY g.seq DESC, g.id DESC LIMIT 1) "

static const char SQL_TRIAL_INSERT[] =
	"INSERT INTO trials(experiment_id, idx, params_json, status, created_at, updated_at)"
	" VALUES(?1, ?2, ?3, 'pending', ?4, ?4)";
static const char SQL_TRIAL_STATUS[] =
	"UPDATE trials SET status = ?2, error = ?3, updated_at = ?4 WHERE id = ?1";
static const char SQL_TRIAL_PROGRESS[] =
	"UPDATE trials SET resource_done = COALESCE(?2, resource_done),"
	" objective = COALESCE(?3, objective),"
	" objective_resource = COALESCE(?4, objective_resource), updated_at = ?5 WHERE id = ?1";
static const char SQL_TRIAL_BY_ID[] = TRIAL_SELECT "WHERE t.id = ?1";
static const char SQL_TRIAL_LIST[] = TRIAL_SELECT "WHERE t.experiment_id = ?1 ORDER BY t.idx";
static const char SQL_TRIAL_COUNTS[] =
	"SELECT status, count(*) FROM trials WHERE experiment_id = ?1 GROUP BY status";
static const char SQL_TRIAL_COUNTS_ALL[] = "SELECT status, count(*) FROM trials GROUP BY status";
static const char SQL_TRIAL_SINCE[] =
	TRIAL_SELECT "WHERE t.experiment_id = ?1 AND t.updated_at >= ?2 ORDER BY t.idx";
/* Completed trials first, then the best value for the experiment's mode,
 * then the earliest trial on ties. */
/* The best row is chosen on the trials table alone; only that row gets the
 * segment summaries (SQLite would compute them for every candidate before
 * sorting). */
static const char SQL_TRIAL_BEST[] =
	TRIAL_SELECT "WHERE t.id = (SELECT b.id FROM trials b"
	" WHERE b.experiment_id = ?1 AND b.objective IS NOT NULL"
	" ORDER BY (b.status = 'completed') DESC,"
	" CASE WHEN (SELECT mode FROM experiments WHERE id = ?1) = 'min'"
	"  THEN b.objective ELSE -b.objective END ASC, b.idx ASC LIMIT 1)";

void store_trial_fini(store_trial *t)
{
	if (!t)
		return;
	free(t->params_json);
	free(t->error);
	free(t->last_error);
	free(t->last_oom);
	free(t->last_basis);
	store_metrics_free(t->metrics, t->n_metrics);
	memset(t, 0, sizeof *t);
}

void store_trials_free(store_trial *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		store_trial_fini(&v[i]);
	free(v);
}

static int trial_row(sqlite3_stmt *st, store_trial *t, rl_err *err)
{
	int oom = 0;
	store_trial x = {0};
	x.id = sqlite3_column_int64(st, 0);
	x.experiment_id = sqlite3_column_int64(st, 1);
	x.idx = sqlite3_column_int(st, 2);
	x.params_json = st_col_text(st, 3, &oom);
	const char *status = (const char *)sqlite3_column_text(st, 4);
	x.resource_done = st_col_real(st, 5);
	x.objective = st_col_real(st, 6);
	x.objective_resource = st_col_real(st, 7);
	x.error = st_col_text(st, 8, &oom);
	x.created_at = st_col_real(st, 9);
	x.updated_at = st_col_real(st, 10);
	x.n_segments = sqlite3_column_int(st, 11);
	x.n_oom = sqlite3_column_int(st, 12);
	x.last_error = st_col_text(st, 13, &oom);
	x.last_oom = st_col_text(st, 14, &oom);
	x.last_basis = st_col_text(st, 15, &oom);
	x.last_est_mib = st_col_int(st, 16, -1);
	x.last_peak_mib = st_col_int(st, 17, -1);
	x.last_util = st_col_real(st, 18);
	int rc = oom ? rl_err_set(err, RL_ENOMEM, "reading a trial")
		     : trial_status_from_name(status, &x.status, err);
	if (rc < 0) {
		store_trial_fini(&x);
		return rc;
	}
	*t = x;
	return 0;
}

int store_trial_insert(store *s, int64_t experiment_id, int idx, const char *params_json,
		       double now, int64_t *id, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_TRIAL_INSERT, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, experiment_id);
		sqlite3_bind_int(st, 2, idx);
		st_bind_text(st, 3, params_json ? params_json : "{}");
		sqlite3_bind_double(st, 4, now);
		rc = st_exec_stmt(s, st, err, "inserting a trial");
		if (rc == RL_EEXISTS)
			rl_err_set(err, RL_EEXISTS, "experiment %lld already has a trial %d",
				   (long long)experiment_id, idx);
	}
	int64_t new_id = sqlite3_last_insert_rowid(s->db);
	rc = st_tx_end(s, rc, err);
	if (rc == 0 && id)
		*id = new_id;
	return rc;
}

/* Run an UPDATE of one trial; no row changed means no such trial. */
static int trial_update(store *s, sqlite3_stmt *st, int64_t id, rl_err *err)
{
	int rc = st_exec_stmt(s, st, err, "updating a trial");
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = rl_err_set(err, RL_ENOTFOUND, "no trial with id %lld", (long long)id);
	return rc;
}

int store_trial_set_status(store *s, int64_t id, trial_status status, const char *error,
			   double now, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_TRIAL_STATUS, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_text(st, 2, trial_status_name(status));
		st_bind_text(st, 3, error);
		sqlite3_bind_double(st, 4, now);
		rc = trial_update(s, st, id, err);
	}
	return st_tx_end(s, rc, err);
}

int store_trial_set_progress(store *s, int64_t id, double resource_done, double objective,
			     double objective_resource, double now, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_TRIAL_PROGRESS, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_real(st, 2, resource_done);
		st_bind_real(st, 3, objective);
		st_bind_real(st, 4, objective_resource);
		sqlite3_bind_double(st, 5, now);
		rc = trial_update(s, st, id, err);
	}
	return st_tx_end(s, rc, err);
}

static int trial_get_one(store *s, const char *sql, int64_t id, store_trial *out, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, sql, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		rc = trial_row(st, out, err);
	else if (r == SQLITE_DONE)
		rc = sql == SQL_TRIAL_BEST
			? rl_err_set(err, RL_ENOTFOUND, "experiment %lld has no trial with an "
				     "objective value yet", (long long)id)
			: rl_err_set(err, RL_ENOTFOUND, "no trial with id %lld", (long long)id);
	else
		rc = st_fail(s, err, "reading a trial");
	sqlite3_reset(st);
	return rc;
}

int store_trial_get(store *s, int64_t id, store_trial *out, rl_err *err)
{
	return trial_get_one(s, SQL_TRIAL_BY_ID, id, out, err);
}

int store_trial_best(store *s, int64_t experiment_id, store_trial *out, rl_err *err)
{
	return trial_get_one(s, SQL_TRIAL_BEST, experiment_id, out, err);
}

static int trial_list_rows(store *s, int64_t experiment_id, unsigned flags, double since,
			   store_trial **out, size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, isnan(since) ? SQL_TRIAL_LIST : SQL_TRIAL_SINCE, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	if (!isnan(since))
		sqlite3_bind_double(st, 2, since);
	store_trial *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_trial *t = st_grow((void **)&v, &nv, &cap, sizeof *v);
		if (!t) {
			rc = rl_err_set(err, RL_ENOMEM, "listing trials");
			break;
		}
		if ((rc = trial_row(st, t, err)) < 0) {
			nv--;
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing trials");
	sqlite3_reset(st);
	/* Metric histories after the trial statement is reset (one statement
	 * at a time keeps the cache simple). */
	for (size_t i = 0; rc == 0 && (flags & STORE_LIST_METRICS) && i < nv; i++)
		rc = store_metric_list(s, experiment_id, v[i].id, &v[i].metrics, &v[i].n_metrics,
				       err);
	if (rc < 0) {
		store_trials_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_trial_list(store *s, int64_t experiment_id, unsigned flags, store_trial **out,
		     size_t *n, rl_err *err)
{
	/* One read transaction: trials and their metrics from one snapshot. */
	int rc = st_tx_read(s, err);
	if (rc < 0)
		return rc;
	store_trial *v = NULL;
	size_t nv = 0;
	rc = trial_list_rows(s, experiment_id, flags, NAN, &v, &nv, err);
	rc = st_tx_end(s, rc, err);
	if (rc < 0) {
		if (v)
			store_trials_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_trial_list_since(store *s, int64_t experiment_id, double since, store_trial **out,
			   size_t *n, rl_err *err)
{
	int rc = st_tx_read(s, err);
	if (rc < 0)
		return rc;
	store_trial *v = NULL;
	size_t nv = 0;
	rc = trial_list_rows(s, experiment_id, 0, since, &v, &nv, err);
	rc = st_tx_end(s, rc, err);
	if (rc < 0) {
		if (v)
			store_trials_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_trial_counts(store *s, int64_t experiment_id, int counts[TRIAL__COUNT], rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, experiment_id ? SQL_TRIAL_COUNTS : SQL_TRIAL_COUNTS_ALL, &st, err);
	if (rc < 0)
		return rc;
	if (experiment_id)
		sqlite3_bind_int64(st, 1, experiment_id);
	int c[TRIAL__COUNT] = {0};
	int r;
	while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		trial_status ts;
		if (trial_status_from_name((const char *)sqlite3_column_text(st, 0), &ts, err) < 0) {
			rc = RL_ESTORE;
			break;
		}
		c[ts] += sqlite3_column_int(st, 1);
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "counting trials");
	sqlite3_reset(st);
	if (rc == 0)
		memcpy(counts, c, sizeof c);
	return rc;
}

/* ---- stats of many experiments at once (status reads) ---- */

/* The best trial of experiment e as store_trial_best chooses it, on the
 * trials table alone.  (The mode is looked up again: SQLite does not let an
 * ORDER BY term of a subquery name the outer e.) */
#define BEST_OF_E                                                                     \
	"(SELECT c.id FROM trials c WHERE c.experiment_id = e.id AND c.objective IS NOT NULL" \
	" ORDER BY (c.status = 'completed') DESC,"                                         \
	" CASE WHEN (SELECT x.mode FROM experiments x WHERE x.id = c.experiment_id) = 'min'" \
	"  THEN c.objective ELSE -c.objective END ASC, c.idx ASC LIMIT 1)"
#define STATS_BEST                                                                    \
	"SELECT e.id, b.id, b.idx, b.status, b.objective, b.objective_resource"          \
	" FROM experiments e LEFT JOIN trials b ON b.id = " BEST_OF_E
/* Two statements each, not "(?1 = 0 OR ...)": that would keep one
 * experiment's read off the (experiment_id, idx) index. */
static const char SQL_STATS_BEST_ONE[] = STATS_BEST " WHERE e.id = ?1";
static const char SQL_STATS_BEST_ALL[] = STATS_BEST " WHERE e.id BETWEEN ?1 AND ?2 ORDER BY e.id";
static const char SQL_STATS_COUNTS_ONE[] =
	"SELECT experiment_id, status, count(*) FROM trials WHERE experiment_id = ?1"
	" GROUP BY status";
static const char SQL_STATS_COUNTS_ALL[] =
	"SELECT experiment_id, status, count(*) FROM trials WHERE experiment_id BETWEEN ?1 AND ?2"
	" GROUP BY experiment_id, status ORDER BY experiment_id";

/* Experiment lo alone (lo == hi) or those in [lo, hi]. */
static int stats_best(store *s, int64_t lo, int64_t hi, store_exp_stats **out, size_t *n,
		      rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, lo == hi ? SQL_STATS_BEST_ONE : SQL_STATS_BEST_ALL, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, lo);
	if (lo != hi)
		sqlite3_bind_int64(st, 2, hi);
	store_exp_stats *v = NULL;
	size_t nv = 0, cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_exp_stats *x = st_grow((void **)&v, &nv, &cap, sizeof *v);
		if (!x) {
			rc = rl_err_set(err, RL_ENOMEM, "reading experiments' trials");
			break;
		}
		memset(x, 0, sizeof *x);
		x->experiment_id = sqlite3_column_int64(st, 0);
		x->best_objective = x->best_resource = NAN;
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			continue;
		x->best_id = sqlite3_column_int64(st, 1);
		x->best_idx = sqlite3_column_int(st, 2);
		x->best_objective = st_col_real(st, 4);
		x->best_resource = st_col_real(st, 5);
		if (trial_status_from_name((const char *)sqlite3_column_text(st, 3), &x->best_status,
					   err) < 0) {
			rc = RL_ESTORE;
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "reading experiments' trials");
	sqlite3_reset(st);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

/* Add the trial counts to v (by experiment id, as the counts come). */
static int stats_counts(store *s, int64_t lo, int64_t hi, store_exp_stats *v, size_t n,
			rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, lo == hi ? SQL_STATS_COUNTS_ONE : SQL_STATS_COUNTS_ALL, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, lo);
	if (lo != hi)
		sqlite3_bind_int64(st, 2, hi);
	size_t k = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		while (k < n && v[k].experiment_id < id)
			k++;
		if (k == n)
			break; /* (cannot happen in one snapshot) */
		if (v[k].experiment_id != id)
			continue;
		trial_status ts;
		if (trial_status_from_name((const char *)sqlite3_column_text(st, 1), &ts, err) < 0) {
			rc = RL_ESTORE;
			break;
		}
		v[k].count[ts] += sqlite3_column_int(st, 2);
	}
	if (rc == 0 && r != SQLITE_DONE && r != SQLITE_ROW)
		rc = st_fail(s, err, "counting trials");
	sqlite3_reset(st);
	return rc;
}

int store_trial_stats_range(store *s, int64_t lo, int64_t hi, store_exp_stats **out, size_t *n,
			    rl_err *err)
{
	/* One snapshot for both statements. */
	int rc = st_tx_read(s, err);
	if (rc < 0)
		return rc;
	store_exp_stats *v = NULL;
	size_t nv = 0;
	rc = stats_best(s, lo, hi, &v, &nv, err);
	if (rc == 0)
		rc = stats_counts(s, lo, hi, v, nv, err);
	rc = st_tx_end(s, rc, err);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_trial_stats(store *s, int64_t experiment_id, store_exp_stats **out, size_t *n,
		      rl_err *err)
{
	if (experiment_id)
		return store_trial_stats_range(s, experiment_id, experiment_id, out, n, err);
	return store_trial_stats_range(s, 1, INT64_MAX, out, n, err);
}
