/*
 * store_segment.c - the segments table: one row per range [from, to] of a
 * trial's training, with its placement (device, memory reservation, compute
 * share and the basis of the reservation), its process (pid + kernel start
 * time, handle) and its outcome (status, exit code, signal, peak memory).
 *
 * Life: insert (planned) -> place (running, committed before the process is
 * started) -> set_pid (after fork) -> finish (an outcome).  Each step checks
 * the state it expects in its WHERE clause, so a driver bug that finishes a
 * segment twice is an error rather than a silently rewritten history.
 */
#include "store/store_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SEG_COLS "g.id, g.trial_id, g.seq, g.resource_from, g.resource_to, g.status," \
	" g.exit_code, g.signal, g.device, g.mem_reserved_mib, g.compute_share, g.basis,"  \
	" g.pid, g.pid_start_time, g.handle, g.started_at, g.ended_at, g.peak_mem_mib,"  \
	" g.est_mem_mib, g.log_path, g.message, g.mean_util"

static const char SQL_SEG_INSERT[] =
	"INSERT INTO segments(trial_id, seq, resource_from, resource_to, status, est_mem_mib)"
	" VALUES(?1, ?2, ?3, ?4, 'planned', ?5)";
static const char SQL_SEG_PLACE[] =
	"UPDATE segments SET status = 'running', device = ?2, mem_reserved_mib = ?3,"
	" compute_share = ?4, basis = ?5, log_path = ?6, started_at = ?7"
	" WHERE id = ?1 AND status = 'planned'";
static const char SQL_SEG_PID[] =
	"UPDATE segments SET pid = ?2, pid_start_time = ?3, handle = ?4"
	" WHERE id = ?1 AND status = 'running'";
static const char SQL_SEG_DEVICE[] =
	"UPDATE segments SET device = ?2 WHERE id = ?1 AND status = 'running'";
static const char SQL_SEG_FINISH[] =
	"UPDATE segments SET status = ?2, exit_code = ?3, signal = ?4, peak_mem_mib = ?5,"
	" ended_at = ?6, message = ?7 WHERE id = ?1 AND status IN ('planned', 'running')";
static const char SQL_SEG_UTIL[] = "UPDATE segments SET mean_util = ?2 WHERE id = ?1";
static const char SQL_SEG_BY_ID[] = "SELECT " SEG_COLS " FROM segments g WHERE g.id = ?1";
static const char SQL_SEG_OF_TRIAL[] =
	"SELECT " SEG_COLS " FROM segments g WHERE g.trial_id = ?1 ORDER BY g.seq, g.id";
static const char SQL_SEG_RUNNING[] =
	"SELECT " SEG_COLS " FROM segments g JOIN trials t ON t.id = g.trial_id"
	" WHERE g.status = 'running' AND (?1 = 0 OR t.experiment_id = ?1) ORDER BY g.id";
static const char SQL_SEG_OF_EXP[] =
	"SELECT " SEG_COLS " FROM segments g JOIN trials t ON t.id = g.trial_id"
	" WHERE t.experiment_id = ?1 ORDER BY t.idx, g.seq, g.id";
static const char SQL_SEG_OF_EXP_PAGE[] =
	"SELECT " SEG_COLS " FROM segments g JOIN trials t ON t.id = g.trial_id"
	" WHERE t.experiment_id = ?1 ORDER BY t.idx, g.seq, g.id LIMIT ?2 OFFSET ?3";

void store_segment_fini(store_segment *g)
{
	if (!g)
		return;
	free(g->device);
	free(g->basis);
	free(g->handle);
	free(g->log_path);
	free(g->message);
	memset(g, 0, sizeof *g);
}

void store_segments_free(store_segment *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		store_segment_fini(&v[i]);
	free(v);
}

static int seg_row(sqlite3_stmt *st, store_segment *g, rl_err *err)
{
	int oom = 0;
	store_segment x = {0};
	x.id = sqlite3_column_int64(st, 0);
	x.trial_id = sqlite3_column_int64(st, 1);
	x.seq = sqlite3_column_int(st, 2);
	x.resource_from = st_col_real(st, 3);
	x.resource_to = st_col_real(st, 4);
	const char *status = (const char *)sqlite3_column_text(st, 5);
	x.exit_code = (int)st_col_int(st, 6, -1);
	x.signal = (int)st_col_int(st, 7, 0);
	x.device = st_col_text(st, 8, &oom);
	x.mem_reserved_mib = st_col_int(st, 9, -1);
	x.compute_share = st_col_real(st, 10);
	x.basis = st_col_text(st, 11, &oom);
	x.pid = (pid_t)st_col_int(st, 12, 0);
	x.pid_start_time = (uint64_t)st_col_int(st, 13, 0);
	x.handle = st_col_text(st, 14, &oom);
	x.started_at = st_col_real(st, 15);
	x.ended_at = st_col_real(st, 16);
	x.peak_mem_mib = st_col_int(st, 17, -1);
	x.est_mem_mib = st_col_int(st, 18, -1);
	x.log_path = st_col_text(st, 19, &oom);
	x.message = st_col_text(st, 20, &oom);
	x.mean_util = st_col_real(st, 21);
	int rc = oom ? rl_err_set(err, RL_ENOMEM, "reading a segment")
		     : seg_status_from_name(status, &x.status, err);
	if (rc < 0) {
		store_segment_fini(&x);
		return rc;
	}
	*g = x;
	return 0;
}

int store_segment_insert(store *s, int64_t trial_id, int seq, double from, double to,
			 int64_t est_mem_mib, int64_t *id, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_SEG_INSERT, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, trial_id);
		sqlite3_bind_int(st, 2, seq);
		sqlite3_bind_double(st, 3, from);
		sqlite3_bind_double(st, 4, to);
		st_bind_int(st, 5, est_mem_mib);
		rc = st_exec_stmt(s, st, err, "inserting a segment");
		if (rc == RL_EEXISTS)
			rl_err_set(err, RL_EEXISTS, "trial %lld already has a segment %d",
				   (long long)trial_id, seq);
	}
	int64_t new_id = sqlite3_last_insert_rowid(s->db);
	rc = st_tx_end(s, rc, err);
	if (rc == 0 && id)
		*id = new_id;
	return rc;
}

/* After an UPDATE guarded by a state check changed nothing: say whether the
 * segment is missing or in the wrong state. */
static int seg_not_changed(store *s, int64_t id, const char *want, rl_err *err)
{
	store_segment g;
	rl_err e2;
	if (store_segment_get(s, id, &g, &e2) < 0)
		return rl_err_set(err, RL_ENOTFOUND, "no segment with id %lld", (long long)id);
	int rc = rl_err_set(err, RL_EINVAL, "segment %lld is %s, expected %s", (long long)id,
			    seg_status_name(g.status), want);
	store_segment_fini(&g);
	return rc;
}

static int seg_update(store *s, sqlite3_stmt *st, int64_t id, const char *want, rl_err *err)
{
	int rc = st_exec_stmt(s, st, err, "updating a segment");
	if (rc == 0 && sqlite3_changes(s->db) == 0)
		rc = seg_not_changed(s, id, want, err);
	return rc;
}

int store_segment_place(store *s, int64_t id, const store_placement *pl, double now,
			rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_SEG_PLACE, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_text(st, 2, pl->device);
		st_bind_int(st, 3, pl->mem_reserved_mib);
		st_bind_real(st, 4, pl->compute_share);
		st_bind_text(st, 5, pl->basis);
		st_bind_text(st, 6, pl->log_path);
		sqlite3_bind_double(st, 7, now);
		rc = seg_update(s, st, id, "planned", err);
	}
	return st_tx_end(s, rc, err);
}

int store_segment_set_pid(store *s, int64_t id, pid_t pid, uint64_t pid_start_time,
			  const char *handle, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_SEG_PID, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, pid);
		sqlite3_bind_int64(st, 3, (int64_t)pid_start_time);
		st_bind_text(st, 4, handle);
		rc = seg_update(s, st, id, "running", err);
	}
	return st_tx_end(s, rc, err);
}

int store_segment_set_device(store *s, int64_t id, const char *device, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_SEG_DEVICE, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_text(st, 2, device);
		rc = seg_update(s, st, id, "running", err);
	}
	return st_tx_end(s, rc, err);
}

int store_segment_finish(store *s, int64_t id, const store_segment_end *end, rl_err *err)
{
	if (end->status < SEG_COMPLETED || end->status >= SEG__COUNT)
		return rl_err_set(err, RL_EINVAL, "segment %lld: '%s' is not an outcome",
				  (long long)id, seg_status_name(end->status));
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_SEG_FINISH, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_text(st, 2, seg_status_name(end->status));
		if (end->exit_code >= 0)
			sqlite3_bind_int(st, 3, end->exit_code);
		if (end->signal > 0)
			sqlite3_bind_int(st, 4, end->signal);
		st_bind_int(st, 5, end->peak_mem_mib);
		st_bind_real(st, 6, end->ended_at);
		st_bind_text(st, 7, end->message);
		rc = seg_update(s, st, id, "planned or running", err);
	}
	return st_tx_end(s, rc, err);
}

int store_segment_set_util(store *s, int64_t id, double mean_util, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_SEG_UTIL, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, id);
		st_bind_real(st, 2, mean_util);
		rc = st_exec_stmt(s, st, err, "saving a segment's utilisation");
	}
	return st_tx_end(s, rc, err);
}

int store_segment_get(store *s, int64_t id, store_segment *out, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_SEG_BY_ID, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, id);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		rc = seg_row(st, out, err);
	else if (r == SQLITE_DONE)
		rc = rl_err_set(err, RL_ENOTFOUND, "no segment with id %lld", (long long)id);
	else
		rc = st_fail(s, err, "reading a segment");
	sqlite3_reset(st);
	return rc;
}

static int seg_rows(store *s, sqlite3_stmt *st, store_segment **out, size_t *n, rl_err *err);

static int seg_list(store *s, const char *sql, int64_t key, store_segment **out, size_t *n,
		    rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, sql, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, key);
	return seg_rows(s, st, out, n, err);
}

/* Step st (prepared and bound) into segments. */
static int seg_rows(store *s, sqlite3_stmt *st, store_segment **out, size_t *n, rl_err *err)
{
	int rc = 0;
	store_segment *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_segment *g = st_grow((void **)&v, &nv, &cap, sizeof *v);
		if (!g) {
			rc = rl_err_set(err, RL_ENOMEM, "listing segments");
			break;
		}
		if ((rc = seg_row(st, g, err)) < 0) {
			nv--;
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing segments");
	sqlite3_reset(st);
	if (rc < 0) {
		store_segments_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

int store_segment_list(store *s, int64_t trial_id, store_segment **out, size_t *n,
		       rl_err *err)
{
	return seg_list(s, SQL_SEG_OF_TRIAL, trial_id, out, n, err);
}

int store_segment_list_running(store *s, int64_t experiment_id, store_segment **out,
			       size_t *n, rl_err *err)
{
	return seg_list(s, SQL_SEG_RUNNING, experiment_id, out, n, err);
}

int store_segment_list_experiment(store *s, int64_t experiment_id, store_segment **out,
				  size_t *n, rl_err *err)
{
	return seg_list(s, SQL_SEG_OF_EXP, experiment_id, out, n, err);
}

int store_segment_page_experiment(store *s, int64_t experiment_id, size_t offset, size_t limit,
				  store_segment **out, size_t *n, int *more, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_SEG_OF_EXP_PAGE, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_int64(st, 1, experiment_id);
	/* one row more than asked: whether rows are left */
	sqlite3_bind_int64(st, 2, (sqlite3_int64)limit + 1);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)offset);
	if ((rc = seg_rows(s, st, out, n, err)) < 0)
		return rc;
	*more = *n > limit;
	if (*more) {
		store_segment_fini(&(*out)[limit]);
		*n = limit;
	}
	return 0;
}

/* The timeline's rows: placed segments that overlap [from, to], the most
 * recent `limit` by start, returned oldest first, with their experiment. */
static const char SQL_SEG_BETWEEN[] =
	"SELECT * FROM (SELECT " SEG_COLS ", t.experiment_id FROM segments g"
	" JOIN trials t ON t.id = g.trial_id"
	" WHERE g.device IS NOT NULL AND g.started_at IS NOT NULL AND g.started_at <= ?2"
	" AND (g.ended_at IS NULL OR g.ended_at >= ?1)"
	" ORDER BY g.started_at DESC, g.id DESC LIMIT ?3) ORDER BY started_at, id";
static const char SQL_SEG_BETWEEN_COUNT[] =
	"SELECT count(*) FROM segments g WHERE g.device IS NOT NULL AND g.started_at IS NOT NULL"
	" AND g.started_at <= ?2 AND (g.ended_at IS NULL OR g.ended_at >= ?1)";

int store_segment_list_between(store *s, double from, double to, size_t limit,
			       store_segment **out, int64_t **experiment_ids, size_t *n,
			       size_t *total, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_SEG_BETWEEN_COUNT, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_double(st, 1, from);
	sqlite3_bind_double(st, 2, to);
	size_t count = 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		count = (size_t)sqlite3_column_int64(st, 0);
	else
		rc = st_fail(s, err, "counting segments");
	sqlite3_reset(st);
	if (rc < 0 || (rc = st_prepare(s, SQL_SEG_BETWEEN, &st, err)) < 0)
		return rc;
	sqlite3_bind_double(st, 1, from);
	sqlite3_bind_double(st, 2, to);
	sqlite3_bind_int64(st, 3, limit ? (sqlite3_int64)limit : -1);
	store_segment *v = NULL;
	int64_t *ids = NULL;
	size_t nv = 0, cap = 0, idcap = 0, nid = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_segment *g = st_grow((void **)&v, &nv, &cap, sizeof *v);
		int64_t *id = g ? st_grow((void **)&ids, &nid, &idcap, sizeof *ids) : NULL;
		if (!g || !id) {
			if (g)
				nv--;
			rc = rl_err_set(err, RL_ENOMEM, "listing segments");
			break;
		}
		*id = sqlite3_column_int64(st, 22);
		if ((rc = seg_row(st, g, err)) < 0) {
			nv--;
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing segments");
	sqlite3_reset(st);
	if (rc < 0) {
		store_segments_free(v, nv);
		free(ids);
		return rc;
	}
	*out = v;
	*experiment_ids = ids;
	*n = nv;
	*total = count;
	return 0;
}

static const char SQL_SEG_COUNTS[] = "SELECT status, count(*) FROM segments GROUP BY status";

int store_segment_counts(store *s, size_t counts[SEG__COUNT], rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_SEG_COUNTS, &st, err);
	if (rc < 0)
		return rc;
	memset(counts, 0, SEG__COUNT * sizeof counts[0]);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		seg_status ss;
		rl_err e2;
		if (name && seg_status_from_name(name, &ss, &e2) == 0)
			counts[ss] += (size_t)sqlite3_column_int64(st, 1);
	}
	if (r != SQLITE_DONE)
		rc = st_fail(s, err, "counting segments");
	sqlite3_reset(st);
	return rc;
}

/* Every placed segment that has ended, with its owner: the fair order's
 * service.  A full scan of segments (there is no index on ended_at: the
 * service reads this once, at start). */
static const char SQL_OWNER_SERVICE[] =
	"SELECT e.owner_uid, g.started_at, g.ended_at FROM segments g"
	" JOIN trials t ON t.id = g.trial_id JOIN experiments e ON e.id = t.experiment_id"
	" WHERE g.started_at IS NOT NULL AND g.ended_at IS NOT NULL"
	" AND g.ended_at >= g.started_at AND g.ended_at >= ?";

int store_owner_service(store *s, double since, store_service_fn fn, void *ctx, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_OWNER_SERVICE, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_double(st, 1, isfinite(since) ? since : -1e300);
	int r;
	size_t n = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t uid = st_col_int(st, 0, -1);
		fn(ctx, uid, sqlite3_column_double(st, 1), sqlite3_column_double(st, 2));
		n++;
	}
	if (r != SQLITE_DONE)
		rc = st_fail(s, err, "reading the users' service");
	sqlite3_reset(st);
	return rc < 0 ? rc : (int)(n > INT32_MAX ? INT32_MAX : n);
}
