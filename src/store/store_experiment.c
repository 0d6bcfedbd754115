/*
 * store_experiment.c - the experiments table: create, look up, list and
 * change status.  One experiment is one HPO job (its spec, objective and
 * life state); trials hang off it (store_trial.c).
 */
#include "store/store_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXP_COLS "id, name, spec_text, spec_path, status, created_at, finished_at, " \
		 "objective_metric, mode, owner_uid, owner, submission, "
/* The change count (schema 5), or -1 in an older database opened read-only. */
#define EXP_CHANGES "(SELECT n FROM experiment_changes c WHERE c.experiment_id = experiments.id)"
#define EXP_NO_CHANGES "-1"
/* The spec's trial budget, read from its stored JSON form (a brief read
 * too: the experiments page's progress is done of planned); NULL when the
 * text is no JSON. */
#define EXP_PLANNED ", CASE WHEN json_valid(spec_text) THEN " \
		    "json_extract(spec_text, '$.search.max_trials') END"

static const char SQL_EXP_INSERT[] =
	"INSERT INTO experiments(name, spec_text, spec_path, status, created_at, "
	"objective_metric, mode, owner_uid, owner, submission)"
	" VALUES(?1, ?2, ?3, 'running', ?4, ?5, ?6, ?7, ?8, ?9)";
static const char SQL_EXP_BY_ID[] =
	"SELECT " EXP_COLS EXP_CHANGES EXP_PLANNED " FROM experiments WHERE id = ?1";
/* A name's experiments: ?2's own first (a legacy row without an owner
 * next), then by id; ?3 (not NULL) keeps the owner so named only. */
#define EXP_NAMED " FROM experiments WHERE name = ?1 AND (?3 IS NULL OR owner = ?3)" \
		  " ORDER BY owner_uid IS ?2 DESC, owner_uid IS NULL DESC, id"
static const char SQL_EXP_BY_NAME[] = "SELECT " EXP_COLS EXP_CHANGES EXP_PLANNED EXP_NAMED;
static const char SQL_EXP_ALL[] = "SELECT " EXP_COLS EXP_CHANGES EXP_PLANNED " FROM experiments ORDER BY id";
static const char SQL_EXP_BY_ID_V4[] =
	"SELECT " EXP_COLS EXP_NO_CHANGES EXP_PLANNED " FROM experiments WHERE id = ?1";
static const char SQL_EXP_BY_NAME_V4[] = "SELECT " EXP_COLS EXP_NO_CHANGES EXP_PLANNED EXP_NAMED;
static const char SQL_EXP_ALL_V4[] =
	"SELECT " EXP_COLS EXP_NO_CHANGES EXP_PLANNED " FROM experiments ORDER BY id";
/* Without the spec and the submission (NULL in the rows): a status read. */
#define EXP_COLS_BRIEF "id, name, NULL, spec_path, status, created_at, finished_at, " \
		       "objective_metric, mode, owner_uid, owner, NULL, "
static const char SQL_EXP_ALL_BRIEF[] =
	"SELECT " EXP_COLS_BRIEF EXP_CHANGES EXP_PLANNED " FROM experiments ORDER BY id";
static const char SQL_EXP_ALL_BRIEF_V4[] =
	"SELECT " EXP_COLS_BRIEF EXP_NO_CHANGES EXP_PLANNED " FROM experiments ORDER BY id";
/* A page (store_experiment_page): ids above ?1, the filters that are not
 * NULL, at most ?5 rows (-1: all).  The id is the rowid, so a page costs
 * its own rows, however many there are before it. */
#define EXP_FILTERS " AND (?2 IS NULL OR status = ?2)" \
		    " AND (?3 IS NULL OR owner = ?3) AND (?4 IS NULL OR created_at >= ?4)"
#define EXP_PAGE " FROM experiments WHERE id > ?1" EXP_FILTERS " ORDER BY id LIMIT ?5"
/* Newest first (f->desc): ids below ?1, the same rowid range read backwards. */
#define EXP_PAGE_DESC " FROM experiments WHERE id < ?1" EXP_FILTERS " ORDER BY id DESC LIMIT ?5"
static const char *const SQL_EXP_PAGE[2][2][2] = { /* [brief][version >= 5][desc] */
	{{"SELECT " EXP_COLS EXP_NO_CHANGES EXP_PLANNED EXP_PAGE,
	  "SELECT " EXP_COLS EXP_NO_CHANGES EXP_PLANNED EXP_PAGE_DESC},
	 {"SELECT " EXP_COLS EXP_CHANGES EXP_PLANNED EXP_PAGE,
	  "SELECT " EXP_COLS EXP_CHANGES EXP_PLANNED EXP_PAGE_DESC}},
	{{"SELECT " EXP_COLS_BRIEF EXP_NO_CHANGES EXP_PLANNED EXP_PAGE,
	  "SELECT " EXP_COLS_BRIEF EXP_NO_CHANGES EXP_PLANNED EXP_PAGE_DESC},
	 {"SELECT " EXP_COLS_BRIEF EXP_CHANGES EXP_PLANNED EXP_PAGE,
	  "SELECT " EXP_COLS_BRIEF EXP_CHANGES EXP_PLANNED EXP_PAGE_DESC}},
};
static const char SQL_EXP_STATUS[] =
	"UPDATE experiments SET status = ?2, finished_at = ?3 WHERE id = ?1";
/* Its trials with it (store_experiment_set_status); ?2: when, the
 * experiment's end, or (NULL, resumed) the database's clock now. */
#define EXP_TRIALS_AT "coalesce(?2, (julianday('now') - 2440587.5) * 86400.0)"
static const char SQL_EXP_END_TRIALS[] =
	"UPDATE trials SET status = 'cancelled', updated_at = " EXP_TRIALS_AT
	" WHERE experiment_id = ?1 AND status IN ('pending','running','paused')";
static const char SQL_EXP_RESUME_TRIALS[] =
	"UPDATE trials SET status = 'pending', updated_at = " EXP_TRIALS_AT
	" WHERE experiment_id = ?1 AND status = 'cancelled'";
/* Trials, segments, metrics and events go with it (ON DELETE CASCADE). */
static const char SQL_EXP_DELETE[] = "DELETE FROM experiments WHERE id = ?1";

void store_experiment_fini(store_experiment *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->spec_text);
	free(e->spec_path);
	free(e->objective_metric);
	free(e->mode);
	free(e->owner);
	free(e->submission);
	memset(e, 0, sizeof *e);
}

void store_experiments_free(store_experiment *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		store_experiment_fini(&v[i]);
	free(v);
}

/* Read the current row of st (EXP_COLS order) into e. */
static int exp_row(sqlite3_stmt *st, store_experiment *e, rl_err *err)
{
	int oom = 0;
	store_experiment x = {0};
	x.id = sqlite3_column_int64(st, 0);
	x.name = st_col_text(st, 1, &oom);
	x.spec_text = st_col_text(st, 2, &oom);
	x.spec_path = st_col_text(st, 3, &oom);
	const char *status = (const char *)sqlite3_column_text(st, 4);
	x.created_at = st_col_real(st, 5);
	x.finished_at = st_col_real(st, 6);
	x.objective_metric = st_col_text(st, 7, &oom);
	x.mode = st_col_text(st, 8, &oom);
	x.owner_uid = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 9);
	x.owner = st_col_text(st, 10, &oom);
	x.submission = st_col_text(st, 11, &oom);
	x.changes = st_col_int(st, 12, -1);
	x.planned = st_col_int(st, 13, 0);
	int rc = oom ? rl_err_set(err, RL_ENOMEM, "reading an experiment")
		     : exp_status_from_name(status, &x.status, err);
	if (rc < 0) {
		store_experiment_fini(&x);
		return rc;
	}
	*e = x;
	return 0;
}

int store_experiment_create(store *s, const store_experiment *e, int64_t *id, rl_err *err)
{
	if (!e->name || !e->objective_metric || !e->mode)
		return rl_err_set(err, RL_EINVAL, "an experiment needs a name, a metric and a mode");
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_EXP_INSERT, &st, err)) == 0) {
		st_bind_text(st, 1, e->name);
		st_bind_text(st, 2, e->spec_text);
		st_bind_text(st, 3, e->spec_path);
		sqlite3_bind_double(st, 4, e->created_at);
		st_bind_text(st, 5, e->objective_metric);
		st_bind_text(st, 6, e->mode);
		if (e->owner && e->owner_uid >= 0)
			sqlite3_bind_int64(st, 7, e->owner_uid);
		else
			sqlite3_bind_null(st, 7);
		st_bind_text(st, 8, e->owner);
		st_bind_text(st, 9, e->submission);
		rc = st_exec_stmt(s, st, err, "creating an experiment");
		if (rc == RL_EEXISTS)
			rl_err_set(err, RL_EEXISTS, "an experiment named '%s' already exists in %s",
				   e->name, s->path);
	}
	int64_t new_id = sqlite3_last_insert_rowid(s->db);
	rc = st_tx_end(s, rc, err);
	if (rc == 0 && id)
		*id = new_id;
	return rc;
}

int store_experiment_get(store *s, int64_t id, store_experiment *out, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, s->version >= 5 ? SQL_EXP_BY_ID : SQL_EXP_BY_ID_V4, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		rc = exp_row(st, out, err);
	else if (r == SQLITE_DONE)
		rc = rl_err_set(err, RL_ENOTFOUND, "no experiment with id %lld in %s", (long long)id,
				s->path);
	else
		rc = st_fail(s, err, "reading an experiment");
	sqlite3_reset(st);
	return rc;
}

/* The experiments named name (owner's only, when owner is not NULL), uid's
 * own first (uid < 0: nobody's), at most max of them into v; how many
 * there are in *n. */
static int exp_named(store *s, const char *name, const char *owner, int64_t uid,
		     store_experiment *v, size_t max, size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, s->version >= 5 ? SQL_EXP_BY_NAME : SQL_EXP_BY_NAME_V4, &st, err);
	if (rc < 0)
		return rc;
	st_bind_text(st, 1, name);
	if (uid >= 0)
		sqlite3_bind_int64(st, 2, uid);
	else
		sqlite3_bind_null(st, 2);
	st_bind_text(st, 3, owner);
	size_t k = 0;
	int r;
	while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (k < max && (rc = exp_row(st, &v[k], err)) < 0)
			break;
		k++;
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "reading an experiment");
	sqlite3_reset(st);
	if (rc < 0) {
		for (size_t i = 0; i < k && i < max; i++)
			store_experiment_fini(&v[i]);
		return rc;
	}
	*n = k;
	return 0;
}

int store_experiment_find_owned(store *s, const char *name, int64_t owner_uid,
				store_experiment *out, rl_err *err)
{
	store_experiment v[1];
	size_t n = 0;
	int rc = exp_named(s, name, NULL, owner_uid, v, 1, &n, err);
	if (rc < 0)
		return rc;
	/* The first is the owner's own, else a row without an owner. */
	if (n && (v[0].owner_uid == owner_uid || (!v[0].owner && v[0].owner_uid < 0))) {
		*out = v[0];
		return 0;
	}
	if (n)
		store_experiment_fini(&v[0]);
	return rl_err_set(err, RL_ENOTFOUND, "no experiment named '%s' of uid %lld in %s", name,
			  (long long)owner_uid, s->path);
}

int store_experiment_find(store *s, const char *name, const char *owner, int64_t uid,
			  store_experiment *out, rl_err *err)
{
	enum { SHOWN = 4 };
	store_experiment v[SHOWN];
	size_t n = 0;
	int rc = exp_named(s, name, owner, uid, v, SHOWN, &n, err);
	if (rc < 0)
		return rc;
	if (n == 0) {
		if (owner)
			return rl_err_set(err, RL_ENOTFOUND, "%s has no experiment named '%s'", owner,
					  name);
		return rl_err_set(err, RL_ENOTFOUND, "no experiment named '%s'", name);
	}
	if (n == 1 || (uid >= 0 && v[0].owner_uid == uid)) {
		*out = v[0];
		for (size_t i = 1; i < n && i < SHOWN; i++)
			store_experiment_fini(&v[i]);
		return 0;
	}
	/* Several, none the caller's: say whose they are. */
	char list[400] = "";
	for (size_t i = 0; i < n && i < SHOWN; i++) {
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s's (id %lld)", i ? ", " : "",
			 v[i].owner ? v[i].owner : "nobody known", (long long)v[i].id);
		store_experiment_fini(&v[i]);
	}
	return rl_err_set(err, RL_EINVAL, "%zu experiments are named '%s': %s%s; name one by its "
			  "id or as OWNER/NAME", n, name, list, n > SHOWN ? ", ..." : "");
}

static int exp_list_page(store *s, const char *sql, const store_exp_filter *f,
			 store_experiment **out, size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, sql, &st, err);
	if (rc < 0)
		return rc;
	if (f) {
		sqlite3_bind_int64(st, 1, f->after > 0 ? f->after : f->desc ? INT64_MAX : 0);
		if (f->status >= 0)
			st_bind_text(st, 2, exp_status_name((exp_status)f->status));
		if (f->owner)
			st_bind_text(st, 3, f->owner);
		if (!isnan(f->since))
			sqlite3_bind_double(st, 4, f->since);
		sqlite3_bind_int64(st, 5, f->limit > 0 ? (sqlite3_int64)f->limit : -1);
	}
	store_experiment *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		store_experiment *e = st_grow((void **)&v, &nv, &cap, sizeof *v);
		if (!e) {
			rc = rl_err_set(err, RL_ENOMEM, "listing experiments");
			break;
		}
		if ((rc = exp_row(st, e, err)) < 0)
			nv--;
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing experiments");
	sqlite3_reset(st);
	if (rc < 0) {
		store_experiments_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

static int exp_list(store *s, const char *sql, store_experiment **out, size_t *n, rl_err *err)
{
	return exp_list_page(s, sql, NULL, out, n, err);
}

int store_experiment_page(store *s, const store_exp_filter *f, store_experiment **out,
			  size_t *n, rl_err *err)
{
	return exp_list_page(s, SQL_EXP_PAGE[f->brief != 0][s->version >= 5][f->desc != 0], f, out,
			     n, err);
}

int store_experiment_list(store *s, store_experiment **out, size_t *n, rl_err *err)
{
	return exp_list(s, s->version >= 5 ? SQL_EXP_ALL : SQL_EXP_ALL_V4, out, n, err);
}

int store_experiment_list_brief(store *s, store_experiment **out, size_t *n, rl_err *err)
{
	return exp_list(s, s->version >= 5 ? SQL_EXP_ALL_BRIEF : SQL_EXP_ALL_BRIEF_V4, out, n,
			err);
}

int store_experiment_set_status(store *s, int64_t id, exp_status status, double finished_at,
				rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_EXP_STATUS, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_text(st, 2, exp_status_name(status));
		st_bind_real(st, 3, finished_at);
		rc = st_exec_stmt(s, st, err, "setting an experiment's status");
		if (rc == 0 && sqlite3_changes(s->db) == 0)
			rc = rl_err_set(err, RL_ENOTFOUND, "no experiment with id %lld",
					(long long)id);
	}
	/* Its unfinished trials end with it, or come back with it (a
	 * database older than schema 6 has no 'cancelled' trial state). */
	const char *trials = s->version < 6 ? NULL
			     : status == EXP_CANCELLED || status == EXP_FAILED ? SQL_EXP_END_TRIALS
			     : status == EXP_RUNNING ? SQL_EXP_RESUME_TRIALS : NULL;
	if (rc == 0 && trials && (rc = st_prepare(s, trials, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_real(st, 2, finished_at);
		rc = st_exec_stmt(s, st, err, "ending an experiment's trials");
	}
	return st_tx_end(s, rc, err);
}

int store_experiment_delete(store *s, int64_t id, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_EXP_DELETE, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		rc = st_exec_stmt(s, st, err, "deleting an experiment");
		if (rc == 0 && sqlite3_changes(s->db) == 0)
			rc = rl_err_set(err, RL_ENOTFOUND, "no experiment with id %lld",
					(long long)id);
	}
	rc = st_tx_end(s, rc, err);
	/* Its pages back to the file system (auto_vacuum=INCREMENTAL: a file
	 * made by this relish; elsewhere a no-op), outside any group. */
	if (rc == 0 && !s->group)
		sqlite3_exec(s->db, "PRAGMA incremental_vacuum", NULL, NULL, NULL);
	return rc;
}
