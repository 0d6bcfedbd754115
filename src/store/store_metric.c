/*
 * store_metric.c - the metrics and events tables.  Metrics are the values a
 * trial reports (name=value at a resource count), appended in batches as the
 * driver parses a segment's output; the search engine rebuilds its state
 * from them after a restart.  Events are the experiment's journal (trial
 * started, segment out of memory, decision taken), read by `relish logs` and
 * the dashboard.
 */
#include "store/store_impl.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One row per trial, name and resource (index metrics_once): a value
 * reported again replaces the stored one, unless that one belongs to a
 * completed segment.  So the re-run of a lost, cancelled or failed segment
 * supersedes what the interrupted run reported over the same range (a
 * resource the re-run does not report again keeps the interrupted run's
 * value: nothing reported is dropped), while a completed segment's values,
 * on which the engine decided, are final.  The row keeps its id, so report
 * order stays the order in which resources were first reached. */
static const char SQL_METRIC_INSERT[] =
	"INSERT INTO metrics(trial_id, segment_id, resource, name, value, at)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6)"
	" ON CONFLICT(trial_id, name, resource) DO UPDATE SET segment_id = excluded.segment_id,"
	" value = excluded.value, at = excluded.at"
	" WHERE NOT EXISTS (SELECT 1 FROM segments g WHERE g.id = metrics.segment_id"
	"  AND g.status = 'completed')";
/* Values taken back from a lost segment's log: only where nothing is
 * stored (what is stored came from the same lines, or from a later run). */
static const char SQL_METRIC_INSERT_MISSING[] =
	"INSERT INTO metrics(trial_id, segment_id, resource, name, value, at)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(trial_id, name, resource) DO NOTHING";
static const char SQL_METRIC_LIST[] =
	"SELECT m.trial_id, m.segment_id, m.resource, m.name, m.value, m.at"
	" FROM metrics m JOIN trials t ON t.id = m.trial_id"
	" WHERE t.experiment_id = ?1 AND (?2 = 0 OR m.trial_id = ?2)"
	" ORDER BY t.idx, m.id";
static const char SQL_METRIC_PAGE[] =
	"SELECT m.trial_id, m.segment_id, m.resource, m.name, m.value, m.at"
	" FROM metrics m JOIN trials t ON t.id = m.trial_id"
	" WHERE t.experiment_id = ?1 AND (?2 = 0 OR m.trial_id = ?2)"
	" AND (?3 IS NULL OR m.name = ?3)"
	" ORDER BY t.idx, m.id LIMIT ?4 OFFSET ?5";
/* by trial, then report order: the metrics_trial index's own order, so
 * that rows stream without a sort */
static const char SQL_METRIC_EACH[] =
	"SELECT m.trial_id, m.segment_id, m.resource, m.value, m.at"
	" FROM metrics m JOIN trials t ON t.id = m.trial_id"
	" WHERE t.experiment_id = ?1 AND m.name = ?2"
	" ORDER BY m.trial_id, m.id";
static const char SQL_EVENT_INSERT[] =
	"INSERT INTO events(at, experiment_id, trial_id, segment_id, kind, message)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6)";
/* Two statements, not "(?1 = 0 OR experiment_id = ?1)": SQLite plans a
 * statement once, and that condition kept it off the (experiment_id, id)
 * index, so one experiment's events read the whole table. */
#define EVENT_COLS "SELECT id, at, experiment_id, trial_id, segment_id, kind, message FROM events"
static const char SQL_EVENT_LIST[] =
	EVENT_COLS " WHERE experiment_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3";
static const char SQL_EVENT_LIST_ALL[] = EVENT_COLS " WHERE id > ?2 ORDER BY id LIMIT ?3";

void store_metrics_free(store_metric *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].name);
	free(v);
}

static int metrics_insert(store *s, const char *sql, const store_metric *m, size_t n,
			  size_t *added, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	size_t k = 0;
	rc = st_prepare(s, sql, &st, err);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!m[i].name) {
			rc = rl_err_set(err, RL_EINVAL, "metric %zu of %zu has no name", i + 1, n);
			break;
		}
		sqlite3_clear_bindings(st);
		sqlite3_bind_int64(st, 1, m[i].trial_id);
		st_bind_id(st, 2, m[i].segment_id);
		st_bind_real(st, 3, m[i].resource);
		st_bind_text(st, 4, m[i].name);
		st_bind_real(st, 5, m[i].value);
		sqlite3_bind_double(st, 6, m[i].at);
		rc = st_exec_stmt(s, st, err, "inserting a metric");
		if (rc == 0)
			k += (size_t)sqlite3_changes(s->db);
	}
	rc = st_tx_end(s, rc, err);
	if (rc == 0 && added)
		*added = k;
	return rc;
}

int store_metrics_insert(store *s, const store_metric *m, size_t n, rl_err *err)
{
	return metrics_insert(s, SQL_METRIC_INSERT, m, n, NULL, err);
}

int store_metrics_insert_missing(store *s, const store_metric *m, size_t n, size_t *added,
				 rl_err *err)
{
	return metrics_insert(s, SQL_METRIC_INSERT_MISSING, m, n, added, err);
}

static int metric_rows(store *s, sqlite3_stmt *st, size_t max, store_metric **out, size_t *n,
		       int *more, rl_err *err);

int store_metric_list(store *s, int64_t experiment_id, int64_t trial_id, store_metric **out,
		      size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_METRIC_LIST, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	sqlite3_bind_int64(st, 2, trial_id);
	return metric_rows(s, st, 0, out, n, NULL, err);
}

int store_metric_each(store *s, int64_t experiment_id, const char *name,
		      int (*fn)(const store_metric *m, void *ctx), void *ctx, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_METRIC_EACH, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_TRANSIENT);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_metric m = {
			.trial_id = sqlite3_column_int64(st, 0), .segment_id = st_col_int(st, 1, 0),
			.resource = st_col_real(st, 2), .name = (char *)name,
			.value = st_col_real(st, 3), .at = st_col_real(st, 4),
		};
		if ((rc = fn(&m, ctx)) < 0) {
			sqlite3_reset(st);
			return rl_err_set(err, rc, "reading metrics");
		}
	}
	if (r != SQLITE_DONE)
		rc = st_fail(s, err, "reading metrics");
	sqlite3_reset(st);
	return rc < 0 ? rc : 0;
}

int store_metric_page(store *s, int64_t experiment_id, int64_t trial_id, const char *name,
		      size_t offset, size_t limit, store_metric **out, size_t *n, int *more,
		      rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_METRIC_PAGE, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	sqlite3_bind_int64(st, 2, trial_id);
	if (name && *name)
		sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 3);
	/* one row more than asked: whether rows are left */
	sqlite3_bind_int64(st, 4, limit ? (sqlite3_int64)limit + 1 : -1);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)offset);
	return metric_rows(s, st, limit, out, n, more, err);
}

/* Step st (prepared and bound) into rows: at most max (0: all), *more
 * (may be NULL) set when there was another. */
static int metric_rows(store *s, sqlite3_stmt *st, size_t max, store_metric **out, size_t *n,
		       int *more, rl_err *err)
{
	int rc = 0;
	if (more)
		*more = 0;
	store_metric *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (max && nv == max) {
			if (more)
				*more = 1;
			r = SQLITE_DONE;
			break;
		}
		store_metric *x = st_grow((void **)&v, &nv, &cap, sizeof *v);
		int oom = !x;
		if (x) {
			x->trial_id = sqlite3_column_int64(st, 0);
			x->segment_id = st_col_int(st, 1, 0);
			x->resource = st_col_real(st, 2);
			x->name = st_col_text(st, 3, &oom);
			x->value = st_col_real(st, 4);
			x->at = st_col_real(st, 5);
		}
		if (oom) {
			rc = rl_err_set(err, RL_ENOMEM, "listing metrics");
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing metrics");
	sqlite3_reset(st);
	if (rc < 0) {
		store_metrics_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_event_append(store *s, double at, int64_t experiment_id, int64_t trial_id,
		       int64_t segment_id, const char *kind, const char *message,
		       int64_t *id, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_EVENT_INSERT, &st, err)) == 0) {
		sqlite3_bind_double(st, 1, at);
		st_bind_id(st, 2, experiment_id);
		st_bind_id(st, 3, trial_id);
		st_bind_id(st, 4, segment_id);
		st_bind_text(st, 5, kind ? kind : "note");
		st_bind_text(st, 6, message);
		rc = st_exec_stmt(s, st, err, "appending an event");
	}
	int64_t new_id = sqlite3_last_insert_rowid(s->db);
	rc = st_tx_end(s, rc, err);
	if (rc == 0 && id)
		*id = new_id;
	return rc;
}

void store_events_free(store_event *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].kind);
		free(v[i].message);
	}
	free(v);
}

/* The rows of st (EVENT_COLS), bound and ready; st is reset. */
static int event_rows(store *s, sqlite3_stmt *st, store_event **out, size_t *n, rl_err *err)
{
	int rc = 0;
	store_event *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_event *x = st_grow((void **)&v, &nv, &cap, sizeof *v);
		int oom = !x;
		if (x) {
			x->id = sqlite3_column_int64(st, 0);
			x->at = st_col_real(st, 1);
			x->experiment_id = st_col_int(st, 2, 0);
			x->trial_id = st_col_int(st, 3, 0);
			x->segment_id = st_col_int(st, 4, 0);
			x->kind = st_col_text(st, 5, &oom);
			x->message = st_col_text(st, 6, &oom);
		}
		if (oom) {
			rc = rl_err_set(err, RL_ENOMEM, "listing events");
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing events");
	sqlite3_reset(st);
	if (rc < 0) {
		store_events_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_event_list(store *s, int64_t experiment_id, int64_t after_id, size_t limit,
		     store_event **out, size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, experiment_id ? SQL_EVENT_LIST : SQL_EVENT_LIST_ALL, &st, err);
	if (rc < 0)
		return rc;
	if (experiment_id)
		sqlite3_bind_int64(st, 1, experiment_id);
	sqlite3_bind_int64(st, 2, after_id);
	sqlite3_bind_int64(st, 3, limit ? (int64_t)limit : -1); /* LIMIT -1: no limit */
	return event_rows(s, st, out, n, err);
}

/* A trial's latest wait-state event, where it says the trial waits.  The
 * max(id) per trial reads the running experiments' events by the
 * (experiment_id, id) index. */
#define WAITING_LATEST(cond)                                                          \
	EVENT_COLS " WHERE id IN (SELECT max(w.id) FROM events w"                         \
	" WHERE " cond " AND w.trial_id IS NOT NULL"                                      \
	" AND w.kind IN ('segment.waiting', 'segment.waited', 'trial.failed')"            \
	" GROUP BY w.trial_id) AND kind = 'segment.waiting' ORDER BY experiment_id, id"
static const char SQL_EVENT_WAITING[] = WAITING_LATEST(
	"w.experiment_id = ?1 AND (SELECT status FROM experiments x WHERE x.id = ?1) = 'running'");
static const char SQL_EVENT_WAITING_ALL[] = WAITING_LATEST(
	"w.experiment_id IN (SELECT x.id FROM experiments x WHERE x.status = 'running'"
	" AND x.id BETWEEN ?1 AND ?2)");

#define NOTE_KINDS "kind IN ('trial.warning', 'experiment.failed', 'experiment.done')"
/* the latest ?2 of one experiment, or of each (a window over the index) */
static const char SQL_EVENT_NOTES[] =
	EVENT_COLS " WHERE id IN (SELECT id FROM events WHERE experiment_id = ?1 AND " NOTE_KINDS
	" ORDER BY id DESC LIMIT ?2) ORDER BY id";
static const char SQL_EVENT_NOTES_ALL[] =
	EVENT_COLS " WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY"
	" experiment_id ORDER BY id DESC) AS r FROM events WHERE experiment_id BETWEEN ?3 AND ?4"
	" AND " NOTE_KINDS ") WHERE r <= ?2) ORDER BY experiment_id, id";

int store_event_notes_range(store *s, int64_t lo, int64_t hi, size_t per_exp,
			    store_event **out, size_t *n, rl_err *err)
{
	if (s->version < 8) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	sqlite3_stmt *st;
	int rc = st_prepare(s, lo == hi ? SQL_EVENT_NOTES : SQL_EVENT_NOTES_ALL, &st, err);
	if (rc < 0)
		return rc;
	if (lo == hi) {
		sqlite3_bind_int64(st, 1, lo);
	} else {
		sqlite3_bind_int64(st, 3, lo);
		sqlite3_bind_int64(st, 4, hi);
	}
	sqlite3_bind_int64(st, 2, (int64_t)per_exp);
	return event_rows(s, st, out, n, err);
}

int store_event_notes(store *s, int64_t experiment_id, size_t per_exp, store_event **out,
		      size_t *n, rl_err *err)
{
	return experiment_id
		       ? store_event_notes_range(s, experiment_id, experiment_id, per_exp, out, n, err)
		       : store_event_notes_range(s, 1, INT64_MAX, per_exp, out, n, err);
}

int store_event_waiting_range(store *s, int64_t lo, int64_t hi, store_event **out, size_t *n,
			      rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, lo == hi ? SQL_EVENT_WAITING : SQL_EVENT_WAITING_ALL, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, lo);
	if (lo != hi)
		sqlite3_bind_int64(st, 2, hi);
	return event_rows(s, st, out, n, err);
}

int store_event_waiting(store *s, int64_t experiment_id, store_event **out, size_t *n,
			rl_err *err)
{
	return experiment_id
		       ? store_event_waiting_range(s, experiment_id, experiment_id, out, n, err)
		       : store_event_waiting_range(s, 1, INT64_MAX, out, n, err);
}
