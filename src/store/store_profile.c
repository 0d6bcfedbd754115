/*
 * store_profile.c - the profiles and devices tables.  A profile is what was
 * measured about one trial shape (peak memory, utilisation, throughput) and
 * how far the reservation made before measuring was off; the scheduler
 * seeds its estimator from these rows when relish starts
 * (sched_shape_import), so what was learnt in one experiment serves the
 * next.  Bounded: the driver keeps the newest rows at start, shared
 * among the users who wrote them (store_profile_trim).  Devices record what relish saw of the machine, so
 * placements in segments.device can be read against capacities.
 */
#include "store/store_impl.h"

#include "common/waterfill.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE_COLS "shape, family, n, peak_mem_mib, mean_util, est_mem_mib, est_error," \
		     " throughput, updated_at, params, features, est_basis, thr_shared, uid"

static const char SQL_PROFILE_PUT[] =
	"INSERT OR REPLACE INTO profiles(" PROFILE_COLS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
	" ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
static const char SQL_PROFILE_GET[] = "SELECT " PROFILE_COLS " FROM profiles WHERE shape = ?1";
static const char SQL_PROFILE_ALL[] = "SELECT " PROFILE_COLS " FROM profiles ORDER BY shape";
static const char SQL_PROFILE_USERS[] = "SELECT uid, count(*) FROM profiles GROUP BY uid";
static const char SQL_PROFILE_TRIM[] =
	"DELETE FROM profiles WHERE shape IN (SELECT shape FROM profiles WHERE uid IS ?1"
	" ORDER BY updated_at DESC, shape LIMIT -1 OFFSET ?2)";
static const char SQL_DEVICE_PUT[] =
	"INSERT INTO devices(name, uuid, is_gpu, mem_total_mib, compute_total)"
	" VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(uuid) DO UPDATE SET name = excluded.name,"
	" is_gpu = excluded.is_gpu, mem_total_mib = excluded.mem_total_mib,"
	" compute_total = excluded.compute_total";
static const char SQL_DEVICE_ID[] = "SELECT id FROM devices WHERE uuid = ?1";
static const char SQL_DEVICE_ALL[] =
	"SELECT id, name, uuid, is_gpu, mem_total_mib, compute_total FROM devices ORDER BY id";

void store_profile_fini(store_profile *p)
{
	if (!p)
		return;
	free(p->shape);
	free(p->family);
	free(p->params);
	free(p->features);
	free(p->est_basis);
	memset(p, 0, sizeof *p);
}

void store_profiles_free(store_profile *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		store_profile_fini(&v[i]);
	free(v);
}

static int profile_row(sqlite3_stmt *st, store_profile *p, rl_err *err)
{
	int oom = 0;
	store_profile x = {0};
	x.shape = st_col_text(st, 0, &oom);
	x.family = st_col_text(st, 1, &oom);
	x.n = (int)st_col_int(st, 2, 0);
	x.peak_mem_mib = st_col_int(st, 3, -1);
	x.mean_util = st_col_real(st, 4);
	x.est_mem_mib = st_col_int(st, 5, -1);
	x.est_error = st_col_real(st, 6);
	x.throughput = st_col_real(st, 7);
	x.updated_at = st_col_real(st, 8);
	x.params = st_col_text(st, 9, &oom);
	x.features = st_col_text(st, 10, &oom);
	x.est_basis = st_col_text(st, 11, &oom);
	x.thr_shared = st_col_real(st, 12);
	x.uid = st_col_int(st, 13, -1);
	if (oom) {
		store_profile_fini(&x);
		return rl_err_set(err, RL_ENOMEM, "reading a profile");
	}
	*p = x;
	return 0;
}

int store_profile_put(store *s, const store_profile *p, rl_err *err)
{
	if (!p->shape)
		return rl_err_set(err, RL_EINVAL, "a profile needs a shape");
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_PROFILE_PUT, &st, err)) == 0) {
		st_bind_text(st, 1, p->shape);
		st_bind_text(st, 2, p->family);
		sqlite3_bind_int(st, 3, p->n);
		st_bind_int(st, 4, p->peak_mem_mib);
		st_bind_real(st, 5, p->mean_util);
		st_bind_int(st, 6, p->est_mem_mib);
		st_bind_real(st, 7, p->est_error);
		st_bind_real(st, 8, p->throughput);
		sqlite3_bind_double(st, 9, p->updated_at);
		st_bind_text(st, 10, p->params);
		st_bind_text(st, 11, p->features);
		st_bind_text(st, 12, p->est_basis);
		/* 0 is a zero-initialised field, not a measurement. */
		st_bind_real(st, 13, p->thr_shared > 0 ? p->thr_shared : NAN);
		st_bind_int(st, 14, p->uid);
		rc = st_exec_stmt(s, st, err, "saving a profile");
	}
	return st_tx_end(s, rc, err);
}

int store_profile_get(store *s, const char *shape, store_profile *out, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_PROFILE_GET, &st, err);
	if (rc < 0)
		return rc;
	st_bind_text(st, 1, shape);
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		rc = profile_row(st, out, err);
	else if (r == SQLITE_DONE)
		rc = rl_err_set(err, RL_ENOTFOUND, "no profile for shape %s", shape);
	else
		rc = st_fail(s, err, "reading a profile");
	sqlite3_reset(st);
	return rc;
}

int store_profile_list(store *s, store_profile **out, size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_PROFILE_ALL, &st, err);
	if (rc < 0)
		return rc;
	store_profile *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_profile *p = st_grow((void **)&v, &nv, &cap, sizeof *v);
		if (!p) {
			rc = rl_err_set(err, RL_ENOMEM, "listing profiles");
			break;
		}
		if ((rc = profile_row(st, p, err)) < 0) {
			nv--;
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing profiles");
	sqlite3_reset(st);
	if (rc < 0) {
		store_profiles_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}

/* One user's rows (uid, or NULL: unknown) past its share go. */
static int trim_user(store *s, const sqlite3_value *uid, size_t share, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_PROFILE_TRIM, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_bind_value(st, 1, uid);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)share);
	return st_exec_stmt(s, st, err, "trimming profiles");
}

/*
 * Rows per writer (uid), and their shares of keep as the core shares its
 * memory (rl_waterfill, sched/learnt.c): each keeps its newest up to its
 * share, so that one user's flood of new shapes does not push another's
 * few out at a restart.  The shares' rounding may leave fewer than keep.
 */
int store_profile_trim(store *s, size_t keep, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_PROFILE_USERS, &st, err);
	if (rc < 0)
		return rc;
	sqlite3_value **uid = NULL;
	size_t *cnt = NULL, *share = NULL, n = 0, cap = 0, total = 0;
	int r = SQLITE_DONE;
	while (rc == 0 && (r = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			sqlite3_value **u = realloc(uid, nc * sizeof *u);
			if (u)
				uid = u;
			size_t *c = realloc(cnt, nc * sizeof *c);
			if (c)
				cnt = c;
			if (!u || !c) {
				rc = rl_err_set(err, RL_ENOMEM, "trimming profiles");
				break;
			}
			cap = nc;
		}
		cnt[n] = (size_t)sqlite3_column_int64(st, 1);
		uid[n] = sqlite3_value_dup(sqlite3_column_value(st, 0));
		if (!uid[n]) {
			rc = rl_err_set(err, RL_ENOMEM, "trimming profiles");
			break;
		}
		total += cnt[n++];
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "counting profiles");
	sqlite3_reset(st);
	if (rc == 0 && total > keep) {
		share = malloc((n ? n : 1) * sizeof *share);
		if (!share)
			rc = rl_err_set(err, RL_ENOMEM, "trimming profiles");
	}
	if (rc == 0 && share) {
		rl_waterfill(cnt, n, keep, share);
		if ((rc = st_tx_write(s, err)) == 0) {
			for (size_t i = 0; rc == 0 && i < n; i++)
				if (cnt[i] > share[i])
					rc = trim_user(s, uid[i], share[i], err);
			rc = st_tx_end(s, rc, err);
		}
	}
	for (size_t i = 0; i < n; i++)
		sqlite3_value_free(uid[i]);
	free(uid);
	free(cnt);
	free(share);
	return rc;
}

int store_device_put(store *s, const store_device *d, int64_t *id, rl_err *err)
{
	if (!d->name || !d->uuid)
		return rl_err_set(err, RL_EINVAL, "a device needs a name and a uuid");
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_DEVICE_PUT, &st, err)) == 0) {
		st_bind_text(st, 1, d->name);
		st_bind_text(st, 2, d->uuid);
		sqlite3_bind_int(st, 3, d->is_gpu != 0);
		sqlite3_bind_int64(st, 4, d->mem_total_mib);
		sqlite3_bind_double(st, 5, d->compute_total);
		rc = st_exec_stmt(s, st, err, "saving a device");
	}
	/* An upsert that updated does not set last_insert_rowid: look it up. */
	int64_t new_id = 0;
	if (rc == 0 && (rc = st_prepare(s, SQL_DEVICE_ID, &st, err)) == 0) {
		st_bind_text(st, 1, d->uuid);
		if (sqlite3_step(st) == SQLITE_ROW)
			new_id = sqlite3_column_int64(st, 0);
		else
			rc = st_fail(s, err, "reading a device id");
		sqlite3_reset(st);
	}
	rc = st_tx_end(s, rc, err);
	if (rc == 0 && id)
		*id = new_id;
	return rc;
}

void store_devices_free(store_device *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) {
		free(v[i].name);
		free(v[i].uuid);
	}
	free(v);
}

int store_device_list(store *s, store_device **out, size_t *n, rl_err *err)
{
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_DEVICE_ALL, &st, err);
	if (rc < 0)
		return rc;
	store_device *v = NULL;
	size_t nv = 0, cap = 0;
	int r = SQLITE_DONE;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_device *d = st_grow((void **)&v, &nv, &cap, sizeof *v);
		int oom = !d;
		if (d) {
			d->id = sqlite3_column_int64(st, 0);
			d->name = st_col_text(st, 1, &oom);
			d->uuid = st_col_text(st, 2, &oom);
			d->is_gpu = sqlite3_column_int(st, 3);
			d->mem_total_mib = sqlite3_column_int64(st, 4);
			d->compute_total = sqlite3_column_double(st, 5);
		}
		if (oom) {
			rc = rl_err_set(err, RL_ENOMEM, "listing devices");
			break;
		}
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "listing devices");
	sqlite3_reset(st);
	if (rc < 0) {
		store_devices_free(v, nv);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}
