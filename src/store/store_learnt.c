/*
 * store_learnt.c - the learnt table (schema 12): what the scheduler learnt
 * beyond shapes, pairs of shapes and of groups measured side by side, the
 * explorations of each pair of shapes and the bins of its histograms
 * (sched.h, "What the core learnt beyond shapes").  The live driver writes
 * the rows the core lists after each segment end, in that end's
 * transaction, and gives them back to a new core when relish starts.
 *
 * Bounded: pairs grow with the shapes that shared a device, so loading
 * keeps the newest `keep` rows of each kind and deletes the rest (the
 * oldest measurements are of shapes least likely to come back).
 */
#include "store/store_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char SQL_LEARNT_PUT[] =
	"INSERT OR REPLACE INTO learnt(kind, a, b, n, d, d_max, s_min, s_max, updated_at)"
	" VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
static const char SQL_LEARNT_TRIM[] =
	"DELETE FROM learnt WHERE (kind, a, b) IN (SELECT kind, a, b FROM learnt"
	" WHERE kind = ?1 ORDER BY updated_at DESC LIMIT -1 OFFSET ?2)";
static const char SQL_LEARNT_KINDS[] = "SELECT kind, count(*) FROM learnt GROUP BY kind";
static const char SQL_LEARNT_ALL[] =
	"SELECT kind, a, b, n, d, d_max, s_min, s_max, updated_at FROM learnt"
	" ORDER BY kind, updated_at";

int store_learnt_put(store *s, const store_learnt *rows, size_t n, rl_err *err)
{
	if (!n)
		return 0;
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_LEARNT_PUT, &st, err)) == 0) {
		for (size_t i = 0; i < n && rc == 0; i++) {
			const store_learnt *r = &rows[i];
			st_bind_text(st, 1, r->kind);
			st_bind_text(st, 2, r->a);
			st_bind_text(st, 3, r->b);
			sqlite3_bind_double(st, 4, r->n);
			st_bind_real(st, 5, r->d);
			st_bind_real(st, 6, r->d_max);
			st_bind_real(st, 7, r->s_min);
			st_bind_real(st, 8, r->s_max);
			sqlite3_bind_double(st, 9, r->updated_at);
			rc = st_exec_stmt(s, st, err, "saving what the scheduler learnt");
		}
	}
	return st_tx_end(s, rc, err);
}

/* Copy text column i into buf (size n); 0, or -1 when absent or too long. */
static int col_key(sqlite3_stmt *st, int i, char *buf, size_t n)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	if (!t || strlen((const char *)t) >= n)
		return -1;
	memcpy(buf, t, strlen((const char *)t) + 1);
	return 0;
}

/* Delete the rows of each kind beyond its newest keep. */
static int learnt_trim(store *s, size_t keep, rl_err *err)
{
	sqlite3_stmt *st, *del;
	char kinds[8][12];
	size_t nk = 0;
	int rc = st_prepare(s, SQL_LEARNT_KINDS, &st, err);
	if (rc < 0)
		return rc;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		if (sqlite3_column_int64(st, 1) > (sqlite3_int64)keep && nk < 8 &&
		    col_key(st, 0, kinds[nk], sizeof kinds[nk]) == 0)
			nk++;
	if (r != SQLITE_DONE)
		rc = st_fail(s, err, "counting what the scheduler learnt");
	sqlite3_reset(st);
	if (rc < 0 || !nk)
		return rc;
	if ((rc = st_tx_write(s, err)) < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_LEARNT_TRIM, &del, err)) == 0) {
		for (size_t k = 0; k < nk && rc == 0; k++) {
			st_bind_text(del, 1, kinds[k]);
			sqlite3_bind_int64(del, 2, (sqlite3_int64)keep);
			rc = st_exec_stmt(s, del, err, "trimming what the scheduler learnt");
		}
	}
	return st_tx_end(s, rc, err);
}

int store_learnt_load(store *s, size_t keep, store_learnt **out, size_t *n, rl_err *err)
{
	*out = NULL;
	*n = 0;
	int rc = learnt_trim(s, keep, err);
	if (rc < 0)
		return rc;
	sqlite3_stmt *st;
	if ((rc = st_prepare(s, SQL_LEARNT_ALL, &st, err)) < 0)
		return rc;
	store_learnt *v = NULL;
	size_t nv = 0, cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		store_learnt *x = st_grow((void **)&v, &nv, &cap, sizeof *v);
		if (!x) {
			rc = rl_err_set(err, RL_ENOMEM, "reading what the scheduler learnt");
			break;
		}
		if (col_key(st, 0, x->kind, sizeof x->kind) < 0 ||
		    col_key(st, 1, x->a, sizeof x->a) < 0 || col_key(st, 2, x->b, sizeof x->b) < 0) {
			nv--; /* a key no relish writes: left out */
			continue;
		}
		x->n = st_col_real(st, 3);
		x->d = st_col_real(st, 4);
		x->d_max = st_col_real(st, 5);
		x->s_min = st_col_real(st, 6);
		x->s_max = st_col_real(st, 7);
		x->updated_at = st_col_real(st, 8);
	}
	if (rc == 0 && r != SQLITE_DONE)
		rc = st_fail(s, err, "reading what the scheduler learnt");
	sqlite3_reset(st);
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n = nv;
	return 0;
}
