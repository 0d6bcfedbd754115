/*
 * store_impl.h - internals shared by the store_*.c files: the store object,
 * the prepared-statement cache, transaction nesting and binding/column
 * helpers.  Not for use outside src/store/.
 */
#ifndef RELISH_STORE_IMPL_H
#define RELISH_STORE_IMPL_H

#include <sqlite3.h>

#include "store/store.h"

#define STORE_STMT_CACHE 96

struct store_stmt_slot {
	const char *sql;        /* the literal it was prepared from (pointer key) */
	sqlite3_stmt *stmt;
};

struct store {
	sqlite3 *db;
	char *path;
	int version;            /* user_version after migrations */
	int depth;              /* open transaction levels (0 = autocommit) */
	int group;              /* store_begin is active */
	int readonly;           /* opened with STORE_READONLY */
	int lock_fd;            /* the driver lock (STORE_DRIVER), -1 none */
	int64_t driver_id;      /* our generation in the drivers table, 0 none */
	size_t n_stmt;
	struct store_stmt_slot stmt[STORE_STMT_CACHE];
};

/*
 * A cached prepared statement for sql (a string literal: the cache is keyed
 * by its address, then its text), reset and with bindings cleared.  The
 * caller must sqlite3_reset it before returning (st_reset) so that no read
 * snapshot stays open between calls.
 */
int st_prepare(store *s, const char *sql, sqlite3_stmt **out, rl_err *err);
/* Fill err from the connection's last error: RL_ESTORE "what: message". */
int st_fail(store *s, rl_err *err, const char *what);
/* Step a statement expected to finish (no rows); resets it. */
int st_exec_stmt(store *s, sqlite3_stmt *st, rl_err *err, const char *what);
/* Run plain SQL text (no parameters). */
int st_exec(store *s, const char *sql, rl_err *err);

/* The driver lock and generation (store_lock.c). */
int st_lock_take(store *s, rl_err *err);
void st_lock_release(store *s);
int st_driver_register(store *s, rl_err *err);

/* Transactions: write (BEGIN IMMEDIATE or a savepoint inside a group) and
 * read (deferred BEGIN or a savepoint).  st_tx_end commits when rc >= 0,
 * rolls back otherwise, and returns rc (or the commit's error). */
int st_tx_write(store *s, rl_err *err);
int st_tx_read(store *s, rl_err *err);
int st_tx_end(store *s, int rc, rl_err *err);

/* Binding: NULL strings, NAN doubles and zero ids become SQL NULL. */
int st_bind_text(sqlite3_stmt *st, int i, const char *v);
int st_bind_real(sqlite3_stmt *st, int i, double v);
int st_bind_id(sqlite3_stmt *st, int i, int64_t v);
int st_bind_int(sqlite3_stmt *st, int i, int64_t v); /* v < 0 -> NULL */

/* Columns: NULL text -> NULL, NULL real -> NAN, NULL integer -> dflt.
 * st_col_text returns a malloc'd copy (or NULL); sets *oom on failure. */
char *st_col_text(sqlite3_stmt *st, int i, int *oom);
double st_col_real(sqlite3_stmt *st, int i);
int64_t st_col_int(sqlite3_stmt *st, int i, int64_t dflt);

/* Grow a result array by one element (zeroed); NULL on out of memory. */
void *st_grow(void **arr, size_t *n, size_t *cap, size_t elem);

#endif
