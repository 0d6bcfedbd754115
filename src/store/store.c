/*
 * store.c - opening the state database, its schema migrations, the
 * prepared-statement cache and transactions.  The per-table functions live in
 * store_experiment.c, store_trial.c, store_segment.c, store_metric.c and
 * store_profile.c; docs/state.md documents the schema.
 *
 * Durability: the database runs in WAL mode with synchronous=NORMAL.  A
 * commit is then written to the WAL file (in the OS page cache) before
 * sqlite3_step returns, so it survives the death of the relish process
 * (SIGKILL, crash, OOM killer) - the failure relish must recover from.  What
 * NORMAL gives up is durability of the last transactions across a power loss
 * or kernel panic (the database stays consistent, it only loses its tail);
 * STORE_SYNC_FULL (for the commands that write state to offer as an option)
 * fsyncs on every commit instead, at the
 * cost of a few milliseconds per transition.  The rejected alternative,
 * rollback journal + FULL, fsyncs twice per commit and blocks readers (relish
 * status) while the driver writes.
 */
#include "store/store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- schema migrations: migrations[v - 1] takes version v-1 to v ---- */

static const char *const migrations[] = {
	/* 1: the initial schema. */
	"CREATE TABLE experiments("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL UNIQUE,"
	" spec_text TEXT,"
	" spec_path TEXT,"
	" status TEXT NOT NULL CHECK(status IN ('running','done','cancelled','failed')),"
	" created_at REAL NOT NULL,"
	" finished_at REAL,"
	" objective_metric TEXT NOT NULL,"
	" mode TEXT NOT NULL CHECK(mode IN ('max','min')));"
	"CREATE TABLE trials("
	" id INTEGER PRIMARY KEY,"
	" experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL CHECK(idx >= 0),"
	" params_json TEXT NOT NULL,"
	" status TEXT NOT NULL CHECK(status IN"
	"  ('pending','running','paused','completed','stopped','failed')),"
	" resource_done REAL NOT NULL DEFAULT 0,"
	" objective REAL,"
	" objective_resource REAL,"
	" error TEXT,"
	" created_at REAL NOT NULL,"
	" updated_at REAL NOT NULL,"
	" UNIQUE(experiment_id, idx));"
	"CREATE TABLE segments("
	" id INTEGER PRIMARY KEY,"
	" trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL CHECK(seq >= 0),"
	" resource_from REAL NOT NULL,"
	" resource_to REAL NOT NULL CHECK(resource_to >= resource_from),"
	" status TEXT NOT NULL CHECK(status IN ('planned','running','completed','failed',"
	"  'signaled','oom','timeout','cancelled','lost')),"
	" exit_code INTEGER,"
	" signal INTEGER,"
	" device TEXT,"
	" mem_reserved_mib INTEGER,"
	" compute_share REAL,"
	" basis TEXT,"
	" pid INTEGER,"
	" pid_start_time INTEGER,"
	" container TEXT,"
	" started_at REAL,"
	" ended_at REAL,"
	" peak_mem_mib INTEGER,"
	" est_mem_mib INTEGER,"
	" log_path TEXT,"
	" message TEXT,"
	" UNIQUE(trial_id, seq));"
	"CREATE INDEX segments_status ON segments(status);"
	"CREATE TABLE metrics("
	" id INTEGER PRIMARY KEY,"
	" trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
	" segment_id INTEGER REFERENCES segments(id) ON DELETE SET NULL,"
	" resource REAL,"
	" name TEXT NOT NULL,"
	" value REAL,"
	" at REAL NOT NULL);"
	"CREATE INDEX metrics_trial ON metrics(trial_id, id);"
	"CREATE TABLE events("
	" id INTEGER PRIMARY KEY,"
	" at REAL NOT NULL,"
	" experiment_id INTEGER REFERENCES experiments(id) ON DELETE CASCADE,"
	" trial_id INTEGER REFERENCES trials(id) ON DELETE CASCADE,"
	" segment_id INTEGER REFERENCES segments(id) ON DELETE CASCADE,"
	" kind TEXT NOT NULL,"
	" message TEXT);"
	"CREATE INDEX events_experiment ON events(experiment_id, id);"
	"CREATE TABLE profiles("
	" shape TEXT PRIMARY KEY,"
	" family TEXT,"
	" n INTEGER NOT NULL DEFAULT 0,"
	" peak_mem_mib INTEGER,"
	" mean_util REAL,"
	" est_mem_mib INTEGER,"
	" est_error REAL,"
	" throughput REAL,"
	" updated_at REAL NOT NULL);"
	"CREATE INDEX profiles_family ON profiles(family);"
	"CREATE TABLE devices("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL,"
	" uuid TEXT NOT NULL UNIQUE,"
	" is_gpu INTEGER NOT NULL,"
	" mem_total_mib INTEGER NOT NULL,"
	" compute_total REAL NOT NULL);",
	/* 2: GPU profiles: a segment's mean utilisation; a profile's shape
	 * parameters (for display), numeric features (so a restart can seed the
	 * family model), the basis of the estimate its error refers to, and
	 * its throughput measured beside other segments. */
	"ALTER TABLE segments ADD COLUMN mean_util REAL;"
	"ALTER TABLE profiles ADD COLUMN params TEXT;"
	"ALTER TABLE profiles ADD COLUMN features TEXT;"
	"ALTER TABLE profiles ADD COLUMN est_basis TEXT;"
	"ALTER TABLE profiles ADD COLUMN thr_shared REAL;",
	/* 3: a metric is stored once per trial, name and resource.  Rows
	 * stored twice before (a lost or cancelled segment and its re-run)
	 * are resolved as store_metrics_insert resolves them from now on: a
	 * completed segment's row wins (the earliest, the one decisions were
	 * made on); among the others the latest report wins.  The drivers
	 * table gives each `relish run` that opens the database a generation
	 * (its id), so a driver can tell that another one took over. */
	"DELETE FROM metrics WHERE id IN (SELECT id FROM (SELECT m.id, row_number() OVER ("
	"  PARTITION BY m.trial_id, m.name, m.resource"
	"  ORDER BY (g.status IS 'completed') DESC,"
	"   CASE WHEN g.status IS 'completed' THEN m.id ELSE -m.id END) AS r"
	" FROM metrics m LEFT JOIN segments g ON g.id = m.segment_id) WHERE r > 1);"
	"CREATE UNIQUE INDEX metrics_once ON metrics(trial_id, name, resource);"
	"CREATE TABLE drivers("
	" id INTEGER PRIMARY KEY,"
	" pid INTEGER NOT NULL,"
	" pid_start_time INTEGER,"
	" started_at REAL NOT NULL);",
	/* 4: who owns an experiment (relish serve runs its trials as that
	 * user; relish run records whoever ran it).  NULL: written before
	 * owners were kept. */
	"ALTER TABLE experiments ADD COLUMN owner_uid INTEGER;"
	"ALTER TABLE experiments ADD COLUMN owner TEXT;"
	/* relish serve: the submission as it came (spec text, name, folder,
	 * format), from which a restarted service parses the spec again. */
	"ALTER TABLE experiments ADD COLUMN submission TEXT;",
	/* 5: a change count per experiment, bumped by triggers whenever one
	 * of its trials or events is written, so a reader (relish serve's
	 * HTTP threads) can tell which experiments' summaries changed since
	 * it last read them without reading their trials again.  A table of
	 * its own: bumping a column of experiments would rewrite the row
	 * with its spec and submission at every trial update.  (IF NOT
	 * EXISTS: a database taken back to an older version by hand may hold
	 * them already.) */
	"CREATE TABLE IF NOT EXISTS experiment_changes("
	" experiment_id INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,"
	" n INTEGER NOT NULL DEFAULT 0);"
	"INSERT OR IGNORE INTO experiment_changes(experiment_id) SELECT id FROM experiments;"
	"CREATE TRIGGER IF NOT EXISTS experiment_changes_new AFTER INSERT ON experiments BEGIN"
	" INSERT OR IGNORE INTO experiment_changes(experiment_id) VALUES (NEW.id); END;"
	"CREATE TRIGGER IF NOT EXISTS experiment_changes_trial_new AFTER INSERT ON trials BEGIN"
	" UPDATE experiment_changes SET n = n + 1 WHERE experiment_id = NEW.experiment_id; END;"
	"CREATE TRIGGER IF NOT EXISTS experiment_changes_trial AFTER UPDATE ON trials BEGIN"
	" UPDATE experiment_changes SET n = n + 1 WHERE experiment_id = NEW.experiment_id; END;"
	"CREATE TRIGGER IF NOT EXISTS experiment_changes_event AFTER INSERT ON events"
	" WHEN NEW.experiment_id IS NOT NULL BEGIN"
	" UPDATE experiment_changes SET n = n + 1 WHERE experiment_id = NEW.experiment_id; END;",
	/* 6: a trial whose experiment ended before it did (cancelled, stopped
	 * failing fast, relish run interrupted) is 'cancelled', not left
	 * 'running' or 'pending' in an experiment that runs no more.  The
	 * status's CHECK changes, which SQLite does by making the table anew
	 * (with foreign keys off: migrate()), copying it, dropping the old
	 * one and renaming; its triggers go with the old table and are made
	 * again.  Trials of experiments that ended before are ended now. */
	"CREATE TABLE trials_v6("
	" id INTEGER PRIMARY KEY,"
	" experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,"
	" idx INTEGER NOT NULL CHECK(idx >= 0),"
	" params_json TEXT NOT NULL,"
	" status TEXT NOT NULL CHECK(status IN"
	"  ('pending','running','paused','completed','stopped','failed','cancelled')),"
	" resource_done REAL NOT NULL DEFAULT 0,"
	" objective REAL,"
	" objective_resource REAL,"
	" error TEXT,"
	" created_at REAL NOT NULL,"
	" updated_at REAL NOT NULL,"
	" UNIQUE(experiment_id, idx));"
	"INSERT INTO trials_v6(id, experiment_id, idx, params_json, status, resource_done,"
	" objective, objective_resource, error, created_at, updated_at)"
	" SELECT id, experiment_id, idx, params_json, status, resource_done, objective,"
	" objective_resource, error, created_at, updated_at FROM trials;"
	"DROP TABLE trials;"
	"ALTER TABLE trials_v6 RENAME TO trials;"
	"CREATE TRIGGER experiment_changes_trial_new AFTER INSERT ON trials BEGIN"
	" UPDATE experiment_changes SET n = n + 1 WHERE experiment_id = NEW.experiment_id; END;"
	"CREATE TRIGGER experiment_changes_trial AFTER UPDATE ON trials BEGIN"
	" UPDATE experiment_changes SET n = n + 1 WHERE experiment_id = NEW.experiment_id; END;"
	"UPDATE trials SET status = 'cancelled' WHERE status IN ('pending','running','paused')"
	" AND experiment_id IN (SELECT id FROM experiments WHERE status IN ('cancelled','failed'));",
	/* 7: experiment names are unique per owner, not in the whole file:
	 * two users of one service may each run their "digits" (ids stay
	 * global).  The name's UNIQUE goes (the table made anew, as in 6)
	 * and a unique index on (owner, name) takes its place; rows written
	 * before owners were kept (NULL) count as one owner. */
	"CREATE TABLE experiments_v7("
	" id INTEGER PRIMARY KEY,"
	" name TEXT NOT NULL,"
	" spec_text TEXT,"
	" spec_path TEXT,"
	" status TEXT NOT NULL CHECK(status IN ('running','done','cancelled','failed')),"
	" created_at REAL NOT NULL,"
	" finished_at REAL,"
	" objective_metric TEXT NOT NULL,"
	" mode TEXT NOT NULL CHECK(mode IN ('max','min')),"
	" owner_uid INTEGER,"
	" owner TEXT,"
	" submission TEXT);"
	"INSERT INTO experiments_v7(id, name, spec_text, spec_path, status, created_at,"
	" finished_at, objective_metric, mode, owner_uid, owner, submission)"
	" SELECT id, name, spec_text, spec_path, status, created_at, finished_at,"
	" objective_metric, mode, owner_uid, owner, submission FROM experiments;"
	"DROP TABLE experiments;"
	"ALTER TABLE experiments_v7 RENAME TO experiments;"
	"CREATE UNIQUE INDEX experiments_owner_name ON experiments(coalesce(owner_uid, -1), name);"
	"CREATE TRIGGER experiment_changes_new AFTER INSERT ON experiments BEGIN"
	" INSERT OR IGNORE INTO experiment_changes(experiment_id) VALUES (NEW.id); END;",
	/* 8: the events that explain an experiment to its submitter (a
	 * line that missed the metric format, why it failed, how it ended:
	 * store_event_notes) found without reading its other events, for
	 * every status read.  (IF NOT EXISTS: as in 5.) */
	"CREATE INDEX IF NOT EXISTS events_notes ON events(experiment_id, id)"
	" WHERE kind IN ('trial.warning', 'experiment.failed', 'experiment.done');",
	/* 9: a segment's container is a handle: a container's name, or a
	 * Slurm job id (what its executor knows it by). */
	"ALTER TABLE segments RENAME COLUMN container TO handle;",
	/* 10: several objectives and constraints (store_objective.c): an
	 * experiment's objectives in order (none for an experiment of one:
	 * experiments.objective_metric is it), and each trial's objectives
	 * and constraint violation at its last boundary.  Tables of their
	 * own: the queries that read trials stay as they were, so a
	 * read-only open of an older file reads as before.  (IF NOT EXISTS: as
	 * in 5, for a database taken back by hand.) */
	"CREATE TABLE IF NOT EXISTS objectives("
	" experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,"
	" k INTEGER NOT NULL CHECK(k >= 0),"
	" metric TEXT NOT NULL,"
	" mode TEXT NOT NULL CHECK(mode IN ('max','min')),"
	" PRIMARY KEY(experiment_id, k));"
	"CREATE TABLE IF NOT EXISTS trial_values("
	" trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
	" k INTEGER NOT NULL CHECK(k >= 0),"
	" value REAL,"
	" PRIMARY KEY(trial_id, k));"
	"CREATE TABLE IF NOT EXISTS trial_violations("
	" trial_id INTEGER PRIMARY KEY REFERENCES trials(id) ON DELETE CASCADE,"
	" violation REAL NOT NULL CHECK(violation >= 0));",
	/* 11: a segment relish stopped over its own memory reservation is
	 * 'over_reservation', not 'oom' (issue 30, item 8: "oom" read as the
	 * machine having run out of memory, on an idle 24 GB host).  The
	 * status's CHECK changes: the table made anew (as in 6), its columns
	 * in their order, its index again.  The segments stored before as
	 * 'oom' with relish's own words for it (the message every version
	 * wrote begins "over its memory reservation") become
	 * 'over_reservation'. */
	"CREATE TABLE segments_v11("
	" id INTEGER PRIMARY KEY,"
	" trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,"
	" seq INTEGER NOT NULL CHECK(seq >= 0),"
	" resource_from REAL NOT NULL,"
	" resource_to REAL NOT NULL CHECK(resource_to >= resource_from),"
	" status TEXT NOT NULL CHECK(status IN ('planned','running','completed','failed',"
	"  'signaled','oom','timeout','cancelled','lost','over_reservation')),"
	" exit_code INTEGER,"
	" signal INTEGER,"
	" device TEXT,"
	" mem_reserved_mib INTEGER,"
	" compute_share REAL,"
	" basis TEXT,"
	" pid INTEGER,"
	" pid_start_time INTEGER,"
	" handle TEXT,"
	" started_at REAL,"
	" ended_at REAL,"
	" peak_mem_mib INTEGER,"
	" est_mem_mib INTEGER,"
	" log_path TEXT,"
	" message TEXT,"
	" mean_util REAL,"
	" UNIQUE(trial_id, seq));"
	"INSERT INTO segments_v11(id, trial_id, seq, resource_from, resource_to, status,"
	" exit_code, signal, device, mem_reserved_mib, compute_share, basis, pid,"
	" pid_start_time, handle, started_at, ended_at, peak_mem_mib, est_mem_mib, log_path,"
	" message, mean_util)"
	" SELECT id, trial_id, seq, resource_from, resource_to,"
	" CASE WHEN status = 'oom' AND message LIKE 'over its memory reservation%'"
	"  THEN 'over_reservation' ELSE status END,"
	" exit_code, signal, device, mem_reserved_mib, compute_share, basis, pid,"
	" pid_start_time, handle, started_at, ended_at, peak_mem_mib, est_mem_mib, log_path,"
	" message, mean_util FROM segments;"
	"DROP TABLE segments;"
	"ALTER TABLE segments_v11 RENAME TO segments;"
	"CREATE INDEX segments_status ON segments(status);",
	/* 12: what the scheduler learnt beyond shapes (store_learnt.c):
	 * pairs of shapes and of groups measured side by side, the
	 * explorations of each pair of shapes so far, and the bins
	 * of its histograms, so that a restart does not measure them again.
	 * Keys as the profiles' (hex text); a bin's a is its index. */
	"CREATE TABLE IF NOT EXISTS learnt("
	" kind TEXT NOT NULL CHECK(kind IN ('pair','groups','explored','hint','family','las')),"
	" a TEXT NOT NULL,"
	" b TEXT NOT NULL,"
	" n REAL NOT NULL CHECK(n >= 0),"
	" d REAL,"
	" d_max REAL,"
	" s_min REAL,"
	" s_max REAL,"
	" updated_at REAL NOT NULL,"
	" PRIMARY KEY(kind, a, b)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS learnt_updated ON learnt(kind, updated_at);",
	/* 13: whose experiment wrote a profile last (the owner's uid; NULL
	 * before), so that the trim at start shares the rows kept among
	 * users as the core shares its memory (store_profile_trim). */
	"CREATE TABLE profiles_v13("
	" shape TEXT PRIMARY KEY,"
	" family TEXT,"
	" n INTEGER NOT NULL DEFAULT 0,"
	" peak_mem_mib INTEGER,"
	" mean_util REAL,"
	" est_mem_mib INTEGER,"
	" est_error REAL,"
	" throughput REAL,"
	" updated_at REAL NOT NULL,"
	" params TEXT,"
	" features TEXT,"
	" est_basis TEXT,"
	" thr_shared REAL,"
	" uid INTEGER);"
	/* (made anew rather than altered, so that the migration also runs
	 * on a file whose version was set back without its columns: the
	 * tests of older migrations do that) */
	"INSERT INTO profiles_v13(shape, family, n, peak_mem_mib, mean_util, est_mem_mib,"
	" est_error, throughput, updated_at, params, features, est_basis, thr_shared)"
	" SELECT shape, family, n, peak_mem_mib, mean_util, est_mem_mib, est_error, throughput,"
	" updated_at, params, features, est_basis, thr_shared FROM profiles;"
	"DROP TABLE profiles;"
	"ALTER TABLE profiles_v13 RENAME TO profiles;"
	"CREATE INDEX profiles_family ON profiles(family);"
	"CREATE INDEX profiles_uid ON profiles(uid, updated_at);",
	/* 14: the columns that point at a segment or a trial, indexed: each
	 * segment and trial a delete removes sets or cascades into them, and
	 * without an index SQLite read every user's metric and event rows
	 * once per segment (relish serve's loop held for minutes by one
	 * user's delete of a big experiment; retention and prune likewise). */
	"CREATE INDEX IF NOT EXISTS metrics_segment ON metrics(segment_id);"
	"CREATE INDEX IF NOT EXISTS events_trial ON events(trial_id);"
	"CREATE INDEX IF NOT EXISTS events_segment ON events(segment_id);",
};

_Static_assert(sizeof migrations / sizeof migrations[0] == STORE_SCHEMA_VERSION,
	       "one migration per schema version");

/* ---- enum names ---- */

static const char *const exp_names[EXP__COUNT] = {"running", "done", "cancelled", "failed"};
static const char *const trial_names[TRIAL__COUNT] = {
	"pending", "running", "paused", "completed", "stopped", "failed", "cancelled"};
static const char *const seg_names[SEG__COUNT] = {
	"planned", "running", "completed", "failed", "signaled",
	"oom", "timeout", "cancelled", "lost", "over_reservation"};

const char *exp_status_name(exp_status s)
{
	return (unsigned)s < EXP__COUNT ? exp_names[s] : "?";
}

const char *trial_status_name(trial_status s)
{
	return (unsigned)s < TRIAL__COUNT ? trial_names[s] : "?";
}

const char *seg_status_name(seg_status s)
{
	return (unsigned)s < SEG__COUNT ? seg_names[s] : "?";
}

static int name_lookup(const char *const *names, int n, const char *name, const char *what,
		       int *out, rl_err *err)
{
	for (int i = 0; name && i < n; i++) {
		if (!strcmp(names[i], name)) {
			*out = i;
			return 0;
		}
	}
	return rl_err_set(err, RL_EINVAL, "unknown %s status '%s'", what, name ? name : "(null)");
}

int exp_status_from_name(const char *name, exp_status *out, rl_err *err)
{
	int v = 0;
	int rc = name_lookup(exp_names, EXP__COUNT, name, "experiment", &v, err);
	if (rc == 0)
		*out = (exp_status)v;
	return rc;
}

int trial_status_from_name(const char *name, trial_status *out, rl_err *err)
{
	int v = 0;
	int rc = name_lookup(trial_names, TRIAL__COUNT, name, "trial", &v, err);
	if (rc == 0)
		*out = (trial_status)v;
	return rc;
}

int seg_status_from_name(const char *name, seg_status *out, rl_err *err)
{
	int v = 0;
	int rc = name_lookup(seg_names, SEG__COUNT, name, "segment", &v, err);
	if (rc == 0)
		*out = (seg_status)v;
	return rc;
}

/* ---- helpers shared with the table files ---- */

/* What to do about a failure, when the user can do something. */
static const char *fail_hint(store *s)
{
	switch (sqlite3_errcode(s->db)) {
	case SQLITE_FULL:
		return " (free space on its file system)";
	case SQLITE_READONLY:
		return " (it is read-only here)";
	default:
		return "";
	}
}

/* A write that failed for want of space (SQLite's "database or disk is
 * full", or an I/O error whose errno is ENOSPC or EDQUOT): err's sys_errno
 * says so, and store_err_no_space tells it (a service pauses then; live/). */
static void mark_space(store *s, rl_err *err)
{
	if (!err)
		return;
	int e = sqlite3_system_errno(s->db);
	if (sqlite3_errcode(s->db) == SQLITE_FULL)
		err->sys_errno = ENOSPC;
	else if ((sqlite3_errcode(s->db) & 0xff) == SQLITE_IOERR && (e == ENOSPC || e == EDQUOT))
		err->sys_errno = e;
}

int store_err_no_space(const rl_err *err)
{
	return err && (err->code == RL_ESTORE || err->code == RL_EIO) &&
	       (err->sys_errno == ENOSPC || err->sys_errno == EDQUOT);
}

int st_fail(store *s, rl_err *err, const char *what)
{
	int rc = rl_err_set(err, RL_ESTORE, "%s: %s: %s%s", s->path, what, sqlite3_errmsg(s->db),
			    fail_hint(s));
	mark_space(s, err);
	return rc;
}

int st_exec(store *s, const char *sql, rl_err *err)
{
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		/* Say which step failed when it is one of ours. */
		const char *what = !strcmp(sql, "COMMIT") ? "committing: "
				   : !strncmp(sql, "BEGIN", 5) ? "starting a transaction: " : "";
		int rc = rl_err_set(err, RL_ESTORE, "%s: %s%s%s", s->path, what,
				    msg ? msg : sqlite3_errmsg(s->db), fail_hint(s));
		sqlite3_free(msg);
		mark_space(s, err);
		return rc;
	}
	return 0;
}

int st_prepare(store *s, const char *sql, sqlite3_stmt **out, rl_err *err)
{
	for (size_t i = 0; i < s->n_stmt; i++) {
		if (s->stmt[i].sql == sql || !strcmp(s->stmt[i].sql, sql)) {
			sqlite3_reset(s->stmt[i].stmt);
			sqlite3_clear_bindings(s->stmt[i].stmt);
			*out = s->stmt[i].stmt;
			return 0;
		}
	}
	sqlite3_stmt *st = NULL;
	unsigned pflags = s->n_stmt < STORE_STMT_CACHE ? SQLITE_PREPARE_PERSISTENT : 0;
	if (sqlite3_prepare_v3(s->db, sql, -1, pflags, &st, NULL) != SQLITE_OK)
		return st_fail(s, err, "preparing a statement");
	if (s->n_stmt == STORE_STMT_CACHE) {
		/* Cache full (a bug: raise STORE_STMT_CACHE): refuse rather than leak. */
		sqlite3_finalize(st);
		return rl_err_set(err, RL_EINTERNAL, "statement cache full");
	}
	s->stmt[s->n_stmt].sql = sql;
	s->stmt[s->n_stmt].stmt = st;
	s->n_stmt++;
	*out = st;
	return 0;
}

int st_exec_stmt(store *s, sqlite3_stmt *st, rl_err *err, const char *what)
{
	int r = sqlite3_step(st);
	int rc = 0;
	if (r != SQLITE_DONE && r != SQLITE_ROW) {
		int ext = sqlite3_extended_errcode(s->db);
		if (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY)
			rc = rl_err_set(err, RL_EEXISTS, "%s: %s", what, sqlite3_errmsg(s->db));
		else
			rc = st_fail(s, err, what);
	}
	sqlite3_reset(st);
	return rc;
}

static int tx_begin(store *s, const char *outer, rl_err *err)
{
	int rc = st_exec(s, s->depth == 0 ? outer : "SAVEPOINT relish_w", err);
	if (rc == 0)
		s->depth++;
	return rc;
}

int st_tx_write(store *s, rl_err *err)
{
	/* IMMEDIATE takes the write lock up front: a deferred transaction that
	 * reads first and then writes can fail with SQLITE_BUSY without waiting
	 * (the busy handler cannot help a snapshot upgrade). */
	int outer = s->depth == 0;
	int rc = tx_begin(s, "BEGIN IMMEDIATE", err);
	if (rc < 0 || !outer || !s->driver_id)
		return rc;
	/* A driver writes only while it is the latest one: checked under the
	 * write lock, so no write of ours can follow another driver's
	 * registration (store_lock.c). */
	if ((rc = store_driver_check(s, err)) < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		s->depth = 0;
	}
	return rc;
}

int st_tx_read(store *s, rl_err *err)
{
	return tx_begin(s, "BEGIN", err);
}

int st_tx_end(store *s, int rc, rl_err *err)
{
	s->depth--;
	if (s->depth == 0) {
		if (rc >= 0) {
			int c = st_exec(s, "COMMIT", err);
			if (c < 0) {
				sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
				return c;
			}
		} else {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		}
		return rc;
	}
	if (rc < 0)
		sqlite3_exec(s->db, "ROLLBACK TO relish_w", NULL, NULL, NULL);
	int c = st_exec(s, "RELEASE relish_w", rc < 0 ? NULL : err);
	return rc < 0 ? rc : c;
}

int st_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

int st_bind_real(sqlite3_stmt *st, int i, double v)
{
	return isnan(v) ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
}

int st_bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	return v > 0 ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

int st_bind_int(sqlite3_stmt *st, int i, int64_t v)
{
	return v >= 0 ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

char *st_col_text(sqlite3_stmt *st, int i, int *oom)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	if (!t)
		return NULL;
	char *c = strdup((const char *)t);
	if (!c)
		*oom = 1;
	return c;
}

double st_col_real(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

int64_t st_col_int(sqlite3_stmt *st, int i, int64_t dflt)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? dflt : sqlite3_column_int64(st, i);
}

void *st_grow(void **arr, size_t *n, size_t *cap, size_t elem)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		void *p = realloc(*arr, nc * elem);
		if (!p)
			return NULL;
		*arr = p;
		*cap = nc;
	}
	char *slot = (char *)*arr + *n * elem;
	memset(slot, 0, elem);
	(*n)++;
	return slot;
}

/* ---- open, migrate, close ---- */

static int read_user_version(store *s, int *out, rl_err *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return st_fail(s, err, "reading the schema version");
	int r = sqlite3_step(st);
	int v = r == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (v < 0)
		return st_fail(s, err, "reading the schema version");
	*out = v;
	return 0;
}

static int too_new(store *s, int v, rl_err *err)
{
	return rl_err_set(err, RL_ESTORE,
			  "%s: schema version %d was written by a newer relish (this one knows "
			  "up to %d); upgrade relish or use another --db",
			  s->path, v, STORE_SCHEMA_VERSION);
}

/* After a migration, inside its transaction: no row may reference a row
 * that is not there (foreign keys are off while migrations run). */
static int foreign_keys_hold(store *s, rl_err *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA foreign_key_check", -1, &st, NULL) != SQLITE_OK)
		return st_fail(s, err, "checking references");
	int r = sqlite3_step(st);
	int rc = 0;
	if (r == SQLITE_ROW)
		rc = rl_err_set(err, RL_ESTORE, "%s: a row of %s references a missing row of %s",
				s->path, (const char *)sqlite3_column_text(st, 0),
				(const char *)sqlite3_column_text(st, 2));
	else if (r != SQLITE_DONE)
		rc = st_fail(s, err, "checking references");
	sqlite3_finalize(st);
	return rc;
}

/* Apply each pending migration in its own transaction; the version is
 * re-read under the write lock so two processes opening a fresh file at
 * once do not both apply it.  Foreign keys are off meanwhile (SQLite's
 * own procedure for changing a table: a migration that makes a table
 * anew drops the old one, which would otherwise delete every row that
 * references it, ON DELETE CASCADE) and checked before each commit; the
 * pragma is a no-op inside a transaction, so it is set around them. */
static int migrate(store *s, rl_err *err)
{
	int v;
	int rc = read_user_version(s, &v, err);
	if (rc < 0)
		return rc;
	if (v > STORE_SCHEMA_VERSION)
		return too_new(s, v, err);
	if (v < STORE_SCHEMA_VERSION && (rc = st_exec(s, "PRAGMA foreign_keys=OFF", err)) < 0)
		return rc;
	while (v < STORE_SCHEMA_VERSION) {
		if ((rc = st_exec(s, "BEGIN IMMEDIATE", err)) < 0)
			return rc;
		rc = read_user_version(s, &v, err);
		if (rc == 0 && v > STORE_SCHEMA_VERSION)
			rc = too_new(s, v, err);
		if (rc == 0 && v < STORE_SCHEMA_VERSION) {
			rc = st_exec(s, migrations[v], err);
			if (rc == 0)
				rc = foreign_keys_hold(s, err);
			if (rc == 0) {
				char sql[64];
				snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v + 1);
				rc = st_exec(s, sql, err);
			}
			if (rc < 0)
				rl_err_prefix(err, "migrating to schema version %d", v + 1);
		}
		if (rc == 0)
			rc = st_exec(s, "COMMIT", err);
		if (rc < 0) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_exec(s->db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
			return rc;
		}
		if ((rc = read_user_version(s, &v, err)) < 0)
			return rc;
	}
	if ((rc = st_exec(s, "PRAGMA foreign_keys=ON", err)) < 0)
		return rc;
	s->version = v;
	return 0;
}

static int set_pragmas(store *s, unsigned flags, rl_err *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
		return st_fail(s, err, "setting WAL mode");
	int r = sqlite3_step(st);
	const char *mode = r == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	int wal = mode && !strcmp(mode, "wal");
	int mem = mode && !strcmp(mode, "memory");
	sqlite3_finalize(st);
	if (r != SQLITE_ROW)
		return st_fail(s, err, "setting WAL mode");
	if (!wal && !mem)
		return rl_err_set(err, RL_ESTORE,
				  "%s: the file system does not support WAL mode (needed so "
				  "readers do not block relish)", s->path);
	int rc = st_exec(s, (flags & STORE_SYNC_FULL) ? "PRAGMA synchronous=FULL"
						      : "PRAGMA synchronous=NORMAL", err);
	if (rc == 0)
		rc = st_exec(s, "PRAGMA foreign_keys=ON", err);
	return rc;
}

/* path as an SQLite URI opening it immutable (read-only media): every byte
 * outside a small safe set %-encoded, as the URI syntax wants. */
static char *immutable_uri(const char *path)
{
	size_t n = strlen(path);
	char *u = malloc(n * 3 + 32);
	if (!u)
		return NULL;
	char *p = u + sprintf(u, "file:");
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    strchr("/._-~", *c))
			*p++ = (char)*c;
		else
			p += sprintf(p, "%%%02X", *c);
	}
	strcpy(p, "?immutable=1");
	return u;
}

/* 1 when PATH-wal exists and is not empty: transactions not yet merged
 * into the database file, which an immutable open would not see. */
static int wal_has_frames(const char *path)
{
	char w[4200];
	struct stat sb;
	snprintf(w, sizeof w, "%s-wal", path);
	return stat(w, &sb) == 0 && sb.st_size > 0;
}

/*
 * STORE_READONLY: open read-only and write nothing.  A WAL database needs
 * its -shm file even to be read; on read-only media without one SQLite
 * cannot open it, and the file is then opened immutable, which is exact
 * when no -wal file holds transactions (a finished run removes it) and
 * nothing writes the file (read-only media: nothing can).
 */
static int open_readonly(store *s, rl_err *err)
{
	int fl = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
	int v = -1;
	rl_err e1;
	rl_err_clear(&e1);
	if (sqlite3_open_v2(s->path, &s->db, fl, NULL) == SQLITE_OK) {
		sqlite3_extended_result_codes(s->db, 1);
		sqlite3_busy_timeout(s->db, 5000);
		if (read_user_version(s, &v, &e1) == 0) {
			s->version = v;
			return 0;
		}
	} else {
		rl_err_set(&e1, RL_ESTORE, "opening %s: %s", s->path,
			   s->db ? sqlite3_errmsg(s->db) : "out of memory");
	}
	int code = s->db ? sqlite3_errcode(s->db) : SQLITE_NOMEM;
	sqlite3_close(s->db);
	s->db = NULL;
	if (code != SQLITE_CANTOPEN && code != SQLITE_READONLY) {
		*err = e1;
		return e1.code ? e1.code : RL_ESTORE;
	}
	if (wal_has_frames(s->path))
		return rl_err_set(err, RL_ESTORE,
				  "%s: cannot be read here: its -wal file holds transactions not yet "
				  "merged into it, and SQLite may not create %s-shm beside it (read-only "
				  "media?); copy the database and its -wal file to writable storage",
				  s->path, s->path);
	char *uri = immutable_uri(s->path);
	if (!uri)
		return rl_err_set(err, RL_ENOMEM, "opening %s", s->path);
	int r = sqlite3_open_v2(uri, &s->db, fl | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (r != SQLITE_OK)
		return rl_err_set(err, RL_ESTORE, "opening %s: %s", s->path,
				  s->db ? sqlite3_errmsg(s->db) : "out of memory");
	sqlite3_extended_result_codes(s->db, 1);
	int rc = read_user_version(s, &v, err);
	if (rc == 0)
		s->version = v;
	return rc;
}

/* Read-write open, pragmas, migrations and (STORE_DRIVER) the generation. */
static int open_readwrite(store *s, unsigned flags, rl_err *err)
{
	int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
	if (!(flags & STORE_MUST_EXIST))
		oflags |= SQLITE_OPEN_CREATE;
	if (sqlite3_open_v2(s->path, &s->db, oflags, NULL) != SQLITE_OK)
		return rl_err_set(err, RL_ESTORE, "opening %s: %s", s->path,
				  s->db ? sqlite3_errmsg(s->db) : "out of memory");
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, 5000);
	int rc, v0;
	/* A database from a newer relish is refused before anything is
	 * written to it: WAL mode below rewrites its header (the file format
	 * bytes), and going back to the older relish must find the file as it
	 * left it. */
	if ((rc = read_user_version(s, &v0, err)) < 0)
		return rc;
	if (v0 > STORE_SCHEMA_VERSION)
		return too_new(s, v0, err);
	/* A new file frees the pages of what is deleted (store_experiment_
	 * delete: an experiment pruned or removed), so that it shrinks:
	 * possible only before its first table and before WAL mode writes its
	 * header, so only in an empty file.  (An older file keeps its free
	 * pages for reuse; VACUUM once, nothing running, to shrink it.) */
	sqlite3_stmt *st;
	int empty = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) ==
	    SQLITE_OK) {
		empty = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 0;
		sqlite3_finalize(st);
	}
	if (empty && (rc = st_exec(s, "PRAGMA auto_vacuum = INCREMENTAL", err)) < 0)
		return rc;
	if ((rc = set_pragmas(s, flags, err)) < 0 || (rc = migrate(s, err)) < 0)
		return rc;
	if (flags & STORE_DRIVER)
		rc = st_driver_register(s, err);
	return rc;
}

int store_open(const char *path, unsigned flags, store **out, rl_err *err)
{
	if (!path || !*path)
		path = STORE_DEFAULT_PATH;
	if (flags & STORE_READONLY)
		flags = (flags | STORE_MUST_EXIST) & ~(unsigned)STORE_DRIVER;
	struct stat sb;
	if ((flags & STORE_MUST_EXIST) && stat(path, &sb) != 0) {
		if (errno == ENOENT)
			return rl_err_set(err, RL_ENOTFOUND, "no state database at %s "
					  "(pass --db FILE, or start an experiment first)", path);
		return rl_err_sys(err, RL_ESTORE, errno, "%s", path);
	}
	store *s = calloc(1, sizeof *s);
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return rl_err_set(err, RL_ENOMEM, "opening %s", path);
	}
	s->lock_fd = -1;
	int rc = 0;
	if (flags & STORE_READONLY) {
		s->readonly = 1;
		if ((rc = open_readonly(s, err)) < 0)
			goto fail;
		if (s->version > STORE_SCHEMA_VERSION) {
			rc = too_new(s, s->version, err);
			goto fail;
		}
		if (s->version < STORE_READ_MIN_VERSION) {
			/* Too old to read as it is: upgrade it where that is
			 * allowed (what every read did before read-only opens). */
			sqlite3_close(s->db);
			s->db = NULL;
			s->readonly = 0;
			rl_err e2;
			if ((rc = open_readwrite(s, flags & ~(unsigned)STORE_READONLY, &e2)) < 0) {
				rc = rl_err_set(err, RL_ESTORE,
						"%s has schema version %d, older than this relish reads "
						"(%d), and could not be upgraded here (%s); open it once "
						"with this relish where it is writable", path, s->version,
						STORE_READ_MIN_VERSION, e2.msg);
				goto fail;
			}
		}
		*out = s;
		return 0;
	}
	/* Only its owner changes a database (as git refuses a repository of
	 * another user's): what a database holds names folders relish
	 * removes, archives it writes and commands it runs, so root's
	 * `relish delete --db` on a user's file did what the user wrote
	 * there (removed a folder of root's, wrote outside the archive).  A
	 * file that does not exist yet becomes the caller's. */
	struct stat own;
	if (stat(path, &own) == 0 && (!S_ISREG(own.st_mode) || own.st_uid != geteuid())) {
		struct passwd *pw = S_ISREG(own.st_mode) ? getpwuid(own.st_uid) : NULL;
		rc = !S_ISREG(own.st_mode)
			     ? rl_err_set(err, RL_EPERM, "%s is not a regular file", path)
			     : rl_err_set(err, RL_EPERM, "%s belongs to %s (uid %u), not to you (uid %u): "
					  "relish changes a database only as its owner (run it as %s, "
					  "e.g. sudo -u %s relish ...; reading it works as anyone)",
					  path, pw ? pw->pw_name : "another user", (unsigned)own.st_uid,
					  (unsigned)geteuid(), pw ? pw->pw_name : "that user",
					  pw ? pw->pw_name : "OWNER");
		goto fail;
	}
	/* The driver lock comes first: a refused driver writes nothing. */
	if ((flags & STORE_DRIVER) && (rc = st_lock_take(s, err)) < 0)
		goto fail;
	if ((rc = open_readwrite(s, flags, err)) < 0)
		goto fail;
	*out = s;
	return 0;
fail:
	/* "file is not a database" and friends surface here with the path. */
	store_close(s);
	return rc;
}

void store_close(store *s)
{
	if (!s)
		return;
	if (s->db && s->depth > 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	for (size_t i = 0; i < s->n_stmt; i++)
		sqlite3_finalize(s->stmt[i].stmt);
	sqlite3_close(s->db);
	/* After the database is closed: the next driver may start now. */
	st_lock_release(s);
	free(s->path);
	free(s);
}

/*
 * A consistent copy of the database in one read transaction (SQLite's
 * online backup, all pages in one step: writers go on meanwhile, in the
 * WAL, and the copy is the database as of its start).  Written beside
 * dest under a temporary name, checked (quick_check), made a rollback-
 * journal file that needs nothing beside it, synced, and renamed into
 * place: dest is the whole copy or nothing.  An existing dest is
 * RL_EEXISTS.
 */
int store_backup(store *s, const char *dest, size_t *pages, rl_err *err)
{
	struct stat sb;
	if (lstat(dest, &sb) == 0)
		return rl_err_set(err, RL_EEXISTS, "%s exists already; give a new file", dest);
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof tmp, "%s.part-%ld", dest, (long)getpid()) >= (int)sizeof tmp)
		return rl_err_set(err, RL_EINVAL, "%s: path too long", dest);
	sqlite3 *dst = NULL;
	int rc = 0;
	if (sqlite3_open_v2(tmp, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
				     SQLITE_OPEN_EXCLUSIVE, NULL) != SQLITE_OK) {
		rc = rl_err_set(err, RL_EIO, "creating %s: %s", tmp,
				dst ? sqlite3_errmsg(dst) : "out of memory");
		goto out;
	}
	sqlite3_backup *b = sqlite3_backup_init(dst, "main", s->db, "main");
	if (!b) {
		rc = rl_err_set(err, RL_ESTORE, "backing up %s: %s", s->path, sqlite3_errmsg(dst));
		goto out;
	}
	int r;
	while ((r = sqlite3_backup_step(b, -1)) == SQLITE_BUSY || r == SQLITE_LOCKED)
		sqlite3_sleep(50);
	if (pages)
		*pages = (size_t)sqlite3_backup_pagecount(b);
	if (sqlite3_backup_finish(b) != SQLITE_OK || r != SQLITE_DONE) {
		rc = rl_err_set(err, r == SQLITE_FULL ? RL_EIO : RL_ESTORE, "backing up %s to %s: %s",
				s->path, tmp, sqlite3_errstr(r));
		goto out;
	}
	sqlite3_stmt *st = NULL;
	if (sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(dst, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW ||
	    strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0)
		rc = rl_err_set(err, RL_ESTORE, "checking the copy %s: %s", tmp,
				st && sqlite3_column_text(st, 0) ? (const char *)sqlite3_column_text(st, 0)
								 : sqlite3_errmsg(dst));
	sqlite3_finalize(st);
out:
	if (dst && sqlite3_close(dst) != SQLITE_OK && rc == 0)
		rc = rl_err_set(err, RL_EIO, "closing %s", tmp);
	if (rc == 0) {
		int fd = open(tmp, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd) != 0)
			rc = rl_err_sys(err, RL_EIO, errno, "syncing %s", tmp);
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0 && link(tmp, dest) != 0) /* (link: never over a file made meanwhile) */
		rc = rl_err_sys(err, errno == EEXIST ? RL_EEXISTS : RL_EIO, errno, "naming the copy %s",
				dest);
	unlink(tmp);
	if (rc == 0) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", dest);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = '\0';
		int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			fsync(fd); /* the name, too */
			close(fd);
		}
	}
	return rc;
}

int store_schema_version(store *s)
{
	int v = -1;
	return read_user_version(s, &v, NULL) == 0 ? v : -1;
}

const char *store_path(const store *s)
{
	return s->path;
}

int store_begin(store *s, rl_err *err)
{
	if (s->depth > 0)
		return rl_err_set(err, RL_EINVAL, "store_begin: a transaction is already open");
	int rc = st_tx_write(s, err);
	if (rc == 0)
		s->group = 1;
	return rc;
}

int store_commit(store *s, rl_err *err)
{
	if (!s->group || s->depth != 1)
		return rl_err_set(err, RL_EINVAL, "store_commit: no open group");
	s->group = 0;
	return st_tx_end(s, 0, err);
}

void store_rollback(store *s)
{
	if (!s || !s->group)
		return;
	s->group = 0;
	st_tx_end(s, -1, NULL);
}

int store_check(store *s, rl_err *err)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK)
		return st_fail(s, err, "integrity check");
	int rc = 0;
	int r = sqlite3_step(st);
	if (r != SQLITE_ROW)
		rc = st_fail(s, err, "integrity check");
	else if (strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
		rc = rl_err_set(err, RL_ESTORE, "%s: integrity check: %s", s->path,
				(const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc;
}
