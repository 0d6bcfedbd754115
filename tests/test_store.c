/*
 * test_store.c - the state database: migrations, the experiment lifecycle
 * through the typed API, atomic groups, crash safety under SIGKILL, and the
 * pid + start-time identity used by recovery.  Every test works on a real
 * SQLite file in a fresh temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/procid.h"
#include "store/store.h"
#include "store/store_impl.h" /* the connection, to read statement counters */

struct fixture {
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/relish-store-XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof f->path, "%s/state.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	int rc = system(cmd);
	free(f);
	return rc == 0 ? 0 : -1;
}

/* Open and fail the test with the error message when it does not work. */
static store *open_ok(const char *path, unsigned flags)
{
	store *s = NULL;
	rl_err e;
	rl_err_clear(&e);
	int rc = store_open(path, flags, &s, &e);
	if (rc < 0)
		fail_msg("store_open %s: %s", path, e.msg);
	return s;
}

#define OK(call)                                                                     \
	do {                                                                         \
		rl_err e_;                                                           \
		rl_err_clear(&e_);                                                   \
		rl_err *err = &e_;                                                   \
		int rc_ = (call);                                                    \
		if (rc_ < 0)                                                         \
			fail_msg("%s -> %s: %s", #call, rl_err_name(rc_), e_.msg);  \
	} while (0)

/* A raw query returning one integer, through sqlite3 directly (not the API
 * under test). */
static long long raw_int(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static int64_t new_experiment(store *s, const char *name, const char *mode)
{
	store_experiment e = {.name = (char *)name, .spec_text = (char *)"name: x\n",
			      .spec_path = (char *)"x.yaml", .created_at = 1000.0,
			      .objective_metric = (char *)"accuracy", .mode = (char *)mode};
	int64_t id = 0;
	OK(store_experiment_create(s, &e, &id, err));
	assert_true(id > 0);
	return id;
}

static void test_migrate_fresh_and_reopen(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	assert_string_equal(store_path(s), f->path);
	new_experiment(s, "a", "max");
	store_close(s);
	/* Thirteen tables, WAL on disk, version recorded. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type='table'"),
			 13);
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	/* What a delete looks up for each segment and trial it removes (the
	 * foreign keys' SET NULL and CASCADE) goes through an index, not a
	 * scan of every metric and event row (schema 14). */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
					  "AND name IN ('metrics_segment', 'events_trial', "
					  "'events_segment')"),
			 3);
	{
		static const char *const lookups[] = {
			"EXPLAIN QUERY PLAN SELECT 1 FROM metrics WHERE segment_id = 1",
			"EXPLAIN QUERY PLAN SELECT 1 FROM events WHERE segment_id = 1",
			"EXPLAIN QUERY PLAN SELECT 1 FROM events WHERE trial_id = 1",
		};
		sqlite3 *qdb;
		assert_int_equal(sqlite3_open(f->path, &qdb), SQLITE_OK);
		for (size_t i = 0; i < sizeof lookups / sizeof lookups[0]; i++) {
			sqlite3_stmt *qp;
			assert_int_equal(sqlite3_prepare_v2(qdb, lookups[i], -1, &qp, NULL), SQLITE_OK);
			assert_int_equal(sqlite3_step(qp), SQLITE_ROW);
			const char *plan = (const char *)sqlite3_column_text(qp, 3);
			if (!strstr(plan, "USING COVERING INDEX") && !strstr(plan, "USING INDEX"))
				fail_msg("%s: %s", lookups[i], plan);
			sqlite3_finalize(qp);
		}
		sqlite3_close(qdb);
	}
	/* Re-opening applies nothing and keeps the data. */
	s = open_ok(f->path, STORE_MUST_EXIST | STORE_SYNC_FULL);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	store_experiment x;
	OK(store_experiment_find(s, "a", NULL, -1, &x, err));
	assert_string_equal(x.objective_metric, "accuracy");
	assert_int_equal(x.status, EXP_RUNNING);
	assert_true(isnan(x.finished_at));
	store_experiment_fini(&x);
	OK(store_check(s, err));
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM experiments"), 1);
	sqlite3 *db;
	sqlite3_open(f->path, &db);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_refuse_newer_and_missing(void **state)
{
	struct fixture *f = *state;
	rl_err e;
	store *s = NULL;
	/* Missing file with MUST_EXIST: not found, and no file appears. */
	assert_int_equal(store_open(f->path, STORE_MUST_EXIST, &s, &e), RL_ENOTFOUND);
	assert_null(s);
	assert_non_null(strstr(e.msg, f->path));
	struct stat sb;
	assert_int_not_equal(stat(f->path, &sb), 0);

	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(f->path, 0, &s, &e), RL_ESTORE);
	assert_null(s);
	assert_non_null(strstr(e.msg, "schema version 99 was written by a newer relish"));
	/* Refused without touching it. */
	assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 99);

	/* Not a database at all. */
	FILE *g = fopen(f->path, "w");
	fputs("this is not sqlite, just text long enough to fill a header ......"
	      "...........................................................\n", g);
	fclose(g);
	assert_int_equal(store_open(f->path, STORE_MUST_EXIST, &s, &e), RL_ESTORE);
	assert_non_null(strstr(e.msg, f->path));
}

static void test_lifecycle(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	rl_err e;
	int64_t exp = new_experiment(s, "digits", "max");
	store_experiment dup = {.name = (char *)"digits", .objective_metric = (char *)"a",
				.mode = (char *)"max"};
	assert_int_equal(store_experiment_create(s, &dup, NULL, &e), RL_EEXISTS);
	assert_non_null(strstr(e.msg, "'digits' already exists"));

	/* Three trials: t0 completes at 9 with 0.90, t1 is stopped at 3 with
	 * 0.95 (higher, but not completed), t2 runs out of memory once and is
	 * running again. */
	int64_t t[3];
	OK(store_trial_insert(s, exp, 0, "{\"lr\":0.1}", 1001, &t[0], err));
	OK(store_trial_insert(s, exp, 1, "{\"lr\":0.01}", 1002, &t[1], err));
	OK(store_trial_insert(s, exp, 2, "{\"lr\":0.001}", 1003, &t[2], err));
	assert_int_equal(store_trial_insert(s, exp, 2, "{}", 1, NULL, &e), RL_EEXISTS);

	store_trial best;
	assert_int_equal(store_trial_best(s, exp, &best, &e), RL_ENOTFOUND);

	int64_t g00, g01, g10, g20, g21;
	OK(store_segment_insert(s, t[0], 0, 0, 3, 512, &g00, err));
	OK(store_segment_insert(s, t[0], 1, 3, 9, -1, &g01, err));
	OK(store_segment_insert(s, t[1], 0, 0, 3, 512, &g10, err));
	OK(store_segment_insert(s, t[2], 0, 0, 3, 512, &g20, err));
	assert_int_equal(store_segment_insert(s, t[2], 1, 5, 4, -1, NULL, &e), RL_ESTORE);

	store_placement pl = {.device = "gpu0", .mem_reserved_mib = 614, .compute_share = 50,
			      .basis = "hint", .log_path = "/tmp/x.log"};
	store_segment_end ok = {.status = SEG_COMPLETED, .exit_code = 0, .peak_mem_mib = 480,
				.ended_at = 1100};
	OK(store_segment_place(s, g00, &pl, 1010, err));
	OK(store_segment_set_pid(s, g00, 4242, 987654321ULL, NULL, err));
	OK(store_segment_finish(s, g00, &ok, err));
	assert_int_equal(store_segment_finish(s, g00, &ok, &e), RL_EINVAL);
	assert_non_null(strstr(e.msg, "is completed, expected planned or running"));
	assert_int_equal(store_segment_set_pid(s, g01, 1, 1, NULL, &e), RL_EINVAL);
	assert_int_equal(store_segment_place(s, 9999, &pl, 1, &e), RL_ENOTFOUND);

	store_metric m[] = {
		{.trial_id = t[0], .segment_id = g00, .resource = 1, .name = (char *)"accuracy",
		 .value = 0.5, .at = 1020},
		{.trial_id = t[0], .segment_id = g00, .resource = 3, .name = (char *)"accuracy",
		 .value = 0.8, .at = 1090},
		{.trial_id = t[0], .segment_id = g00, .resource = 3, .name = (char *)"loss",
		 .value = 0.4, .at = 1090},
	};
	OK(store_metrics_insert(s, m, 3, err));
	OK(store_trial_set_progress(s, t[0], 3, 0.8, 3, 1100, err));
	OK(store_segment_place(s, g01, &pl, 1101, err));
	OK(store_segment_finish(s, g01, &ok, err));
	store_metric m2 = {.trial_id = t[0], .segment_id = g01, .resource = 9,
			   .name = (char *)"accuracy", .value = 0.9, .at = 1200};
	OK(store_metrics_insert(s, &m2, 1, err));
	OK(store_trial_set_progress(s, t[0], 9, 0.9, 9, 1200, err));
	OK(store_trial_set_status(s, t[0], TRIAL_COMPLETED, NULL, 1200, err));

	OK(store_segment_place(s, g10, &pl, 1010, err));
	OK(store_segment_finish(s, g10, &ok, err));
	OK(store_trial_set_progress(s, t[1], 3, 0.95, 3, 1100, err));
	OK(store_trial_set_status(s, t[1], TRIAL_STOPPED, NULL, 1100, err));

	store_segment_end oom = {.status = SEG_OOM, .exit_code = 1, .peak_mem_mib = 620,
				 .ended_at = 1050, .message = "CUDA out of memory"};
	OK(store_segment_place(s, g20, &pl, 1010, err));
	OK(store_segment_set_pid(s, g20, 777, 123, "relish-seg-4", err));
	OK(store_segment_finish(s, g20, &oom, err));
	OK(store_segment_insert(s, t[2], 1, 0, 3, 1024, &g21, err));
	store_placement pl2 = {.device = "gpu1", .mem_reserved_mib = 1024, .compute_share = NAN,
			       .basis = "oom"};
	OK(store_segment_place(s, g21, &pl2, 1060, err));
	OK(store_segment_set_pid(s, g21, 778, 456, NULL, err));
	OK(store_trial_set_status(s, t[2], TRIAL_RUNNING, NULL, 1060, err));
	OK(store_event_append(s, 1050, exp, t[2], g20, "segment.oom", "raised to 1024 MiB", NULL,
			      err));

	/* Best: the completed trial wins over the stopped one with 0.95. */
	OK(store_trial_best(s, exp, &best, err));
	assert_int_equal(best.id, t[0]);
	assert_float_equal(best.objective, 0.9, 0);
	assert_float_equal(best.objective_resource, 9, 0);
	assert_string_equal(best.params_json, "{\"lr\":0.1}");
	store_trial_fini(&best);

	/* Trial list with summaries and metric histories. */
	store_trial *tv;
	size_t nt;
	OK(store_trial_list(s, exp, STORE_LIST_METRICS, &tv, &nt, err));
	assert_int_equal(nt, 3);
	assert_int_equal(tv[0].status, TRIAL_COMPLETED);
	assert_int_equal(tv[0].n_segments, 2);
	assert_int_equal(tv[0].n_oom, 0);
	assert_null(tv[0].last_error);
	assert_int_equal(tv[0].n_metrics, 4);
	assert_string_equal(tv[0].metrics[2].name, "loss");
	assert_float_equal(tv[0].metrics[3].value, 0.9, 0);
	assert_int_equal(tv[0].metrics[3].segment_id, g01);
	assert_int_equal(tv[1].status, TRIAL_STOPPED);
	assert_int_equal(tv[1].n_metrics, 0);
	assert_int_equal(tv[2].n_segments, 2);
	assert_int_equal(tv[2].n_oom, 1);
	assert_string_equal(tv[2].last_error, "CUDA out of memory");
	assert_true(isnan(tv[2].objective));
	store_trials_free(tv, nt);

	/* Recovery query: only g21 is running, with its pid and start time. */
	store_segment *gv;
	size_t ng;
	OK(store_segment_list_running(s, exp, &gv, &ng, err));
	assert_int_equal(ng, 1);
	assert_int_equal(gv[0].id, g21);
	assert_int_equal(gv[0].pid, 778);
	assert_int_equal(gv[0].pid_start_time, 456);
	assert_string_equal(gv[0].device, "gpu1");
	assert_int_equal(gv[0].mem_reserved_mib, 1024);
	assert_true(isnan(gv[0].compute_share));
	assert_string_equal(gv[0].basis, "oom");
	store_segments_free(gv, ng);
	OK(store_segment_list_running(s, 0, &gv, &ng, err));
	assert_int_equal(ng, 1);
	store_segments_free(gv, ng);

	store_segment g;
	OK(store_segment_get(s, g20, &g, err));
	assert_int_equal(g.status, SEG_OOM);
	assert_int_equal(g.exit_code, 1);
	assert_int_equal(g.signal, 0);
	assert_int_equal(g.peak_mem_mib, 620);
	assert_int_equal(g.est_mem_mib, 512);
	assert_string_equal(g.handle, "relish-seg-4");
	assert_float_equal(g.started_at, 1010, 0);
	assert_float_equal(g.ended_at, 1050, 0);
	store_segment_fini(&g);
	OK(store_segment_list_experiment(s, exp, &gv, &ng, err));
	assert_int_equal(ng, 5);
	assert_int_equal(gv[0].id, g00);
	assert_int_equal(gv[4].id, g21);
	store_segments_free(gv, ng);

	store_event *ev;
	size_t ne;
	OK(store_event_list(s, exp, 0, 0, &ev, &ne, err));
	assert_int_equal(ne, 1);
	assert_string_equal(ev[0].kind, "segment.oom");
	assert_int_equal(ev[0].segment_id, g20);
	store_events_free(ev, ne);

	OK(store_experiment_set_status(s, exp, EXP_DONE, 1300, err));
	store_experiment x;
	OK(store_experiment_get(s, exp, &x, err));
	assert_int_equal(x.status, EXP_DONE);
	assert_float_equal(x.finished_at, 1300, 0);
	store_experiment_fini(&x);
	assert_int_equal(store_experiment_find(s, "nope", NULL, -1, &x, &e), RL_ENOTFOUND);
	store_close(s);
}

/* Every enum name passes the schema's CHECK constraints and reads back. */
static void test_all_statuses_round_trip(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t exp = new_experiment(s, "e", "min");
	int64_t t;
	OK(store_trial_insert(s, exp, 0, NULL, 1, &t, err));
	for (int i = 0; i < TRIAL__COUNT; i++) {
		OK(store_trial_set_status(s, t, (trial_status)i, "x", 2, err));
		store_trial tr;
		OK(store_trial_get(s, t, &tr, err));
		assert_int_equal(tr.status, i);
		assert_string_equal(tr.params_json, "{}");
		store_trial_fini(&tr);
	}
	for (int i = SEG_COMPLETED; i < SEG__COUNT; i++) {
		int64_t g;
		OK(store_segment_insert(s, t, i, 0, 1, -1, &g, err));
		store_segment_end end = {.status = (seg_status)i, .exit_code = -1, .signal = 9,
					 .peak_mem_mib = -1, .ended_at = 3};
		OK(store_segment_finish(s, g, &end, err));
		store_segment gs;
		OK(store_segment_get(s, g, &gs, err));
		assert_int_equal(gs.status, i);
		assert_int_equal(gs.signal, 9);
		assert_int_equal(gs.exit_code, -1);
		assert_int_equal(gs.peak_mem_mib, -1);
		store_segment_fini(&gs);
	}
	for (int i = 0; i < EXP__COUNT; i++) {
		OK(store_experiment_set_status(s, exp, (exp_status)i, NAN, err));
		exp_status back;
		OK(exp_status_from_name(exp_status_name((exp_status)i), &back, err));
		assert_int_equal(back, i);
	}
	rl_err e;
	seg_status ss;
	assert_int_equal(seg_status_from_name("exploded", &ss, &e), RL_EINVAL);
	store_segment_end bad = {.status = SEG_RUNNING};
	assert_int_equal(store_segment_finish(s, 1, &bad, &e), RL_EINVAL);
	/* Min mode: the lowest objective is best. */
	int64_t t2;
	OK(store_trial_insert(s, exp, 1, NULL, 1, &t2, err));
	OK(store_trial_set_progress(s, t, 1, 0.30, 1, 2, err));
	OK(store_trial_set_progress(s, t2, 1, 0.25, 1, 2, err));
	store_trial b;
	OK(store_trial_best(s, exp, &b, err));
	assert_int_equal(b.id, t2);
	store_trial_fini(&b);
	/* NAN leaves progress fields unchanged. */
	OK(store_trial_set_progress(s, t2, 2, NAN, NAN, 3, err));
	OK(store_trial_get(s, t2, &b, err));
	assert_float_equal(b.resource_done, 2, 0);
	assert_float_equal(b.objective, 0.25, 0);
	store_trial_fini(&b);
	store_close(s);
}

/* The status of trial t, by the raw file. */
static trial_status status_of(store *s, int64_t t)
{
	store_trial tr;
	OK(store_trial_get(s, t, &tr, err));
	trial_status st = tr.status;
	store_trial_fini(&tr);
	return st;
}

/*
 * An experiment that ends unfinished ends its unfinished trials with it
 * (issue 30 item 4: after a cancel, `relish status` still counted them
 * running); final ones keep their state; resumed, it takes the cancelled
 * ones back as pending.  Other experiments are not touched.
 */
static void test_trials_end_with_experiment(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t a = new_experiment(s, "a", "max"), b = new_experiment(s, "b", "max");
	trial_status was[] = {TRIAL_PENDING, TRIAL_RUNNING, TRIAL_PAUSED, TRIAL_COMPLETED,
			      TRIAL_STOPPED, TRIAL_FAILED};
	int64_t t[6], other;
	for (int i = 0; i < 6; i++) {
		OK(store_trial_insert(s, a, i, NULL, 1, &t[i], err));
		OK(store_trial_set_status(s, t[i], was[i], NULL, 2, err));
	}
	OK(store_trial_insert(s, b, 0, NULL, 1, &other, err));
	OK(store_trial_set_status(s, other, TRIAL_RUNNING, NULL, 2, err));
	for (int end = 0; end < 2; end++) {
		OK(store_experiment_set_status(s, a, end ? EXP_FAILED : EXP_CANCELLED, 10, err));
		int c[TRIAL__COUNT];
		OK(store_trial_counts(s, a, c, err));
		assert_int_equal(c[TRIAL_RUNNING] + c[TRIAL_PENDING] + c[TRIAL_PAUSED], 0);
		assert_int_equal(c[TRIAL_CANCELLED], 3);
		for (int i = 3; i < 6; i++)
			assert_int_equal(status_of(s, t[i]), was[i]);
		store_trial tr;
		OK(store_trial_get(s, t[1], &tr, err));
		assert_float_equal(tr.updated_at, 10, 0);
		store_trial_fini(&tr);
		assert_int_equal(status_of(s, other), TRIAL_RUNNING);
		OK(store_experiment_set_status(s, a, EXP_RUNNING, NAN, err));
		for (int i = 0; i < 3; i++)
			assert_int_equal(status_of(s, t[i]), TRIAL_PENDING);
	}
	store_close(s);
}

/*
 * Migration 6 makes the trials table anew (its status takes 'cancelled'):
 * every trial keeps its id and row, and what references them (segments,
 * metrics, events) is all still there (with foreign keys on, dropping the
 * old table would have deleted it); trials of experiments that had ended
 * before are ended; the change counts keep counting (their triggers are
 * made again).
 */
static void test_migrate_trials_v6(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t a = new_experiment(s, "a", "max"), b = new_experiment(s, "b", "max");
	int64_t ta, tb, g;
	OK(store_trial_insert(s, a, 0, "{\"x\":1}", 1, &ta, err));
	OK(store_trial_insert(s, b, 0, NULL, 1, &tb, err));
	OK(store_trial_set_status(s, ta, TRIAL_RUNNING, NULL, 2, err));
	OK(store_trial_set_status(s, tb, TRIAL_RUNNING, NULL, 2, err));
	OK(store_segment_insert(s, ta, 0, 0, 3, 512, &g, err));
	store_metric m = {.trial_id = ta, .segment_id = g, .resource = 1, .name = "accuracy",
			  .value = 0.5, .at = 3};
	OK(store_metrics_insert(s, &m, 1, err));
	OK(store_event_append(s, 3, a, ta, g, "segment.started", "x", NULL, err));
	store_close(s);
	/* Back to version 5: the old CHECK, experiment a cancelled with its
	 * trial still running (what version 5 left). */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	char sql[400];
	snprintf(sql, sizeof sql,
		 "PRAGMA writable_schema = ON;"
		 "UPDATE sqlite_schema SET sql = replace(sql, ',''cancelled'')', ')')"
		 " WHERE name = 'trials';"
		 "PRAGMA writable_schema = OFF;"
		 "UPDATE experiments SET status = 'cancelled' WHERE id = %lld;"
		 "ALTER TABLE segments RENAME COLUMN handle TO container;"
		 "PRAGMA user_version = 5;", (long long)a);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_schema WHERE name = 'trials'"
				 " AND sql LIKE '%cancelled%'"), 0);
	snprintf(sql, sizeof sql, "SELECT n FROM experiment_changes WHERE experiment_id = %lld",
		 (long long)a);
	long long before = raw_int(f->path, sql);
	s = open_ok(f->path, 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	assert_int_equal(status_of(s, ta), TRIAL_CANCELLED);
	assert_int_equal(status_of(s, tb), TRIAL_RUNNING);
	store_trial tr;
	OK(store_trial_get(s, ta, &tr, err));
	assert_string_equal(tr.params_json, "{\"x\":1}");
	store_trial_fini(&tr);
	long long migrated = raw_int(f->path, sql);
	assert_true(migrated > before); /* the migration's own update counted */
	OK(store_trial_set_status(s, ta, TRIAL_FAILED, NULL, 4, err));
	assert_int_equal(raw_int(f->path, sql), migrated + 1);
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM segments"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events WHERE trial_id IS NOT NULL"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

/* An experiment named name of owner (uid); its id. */
static int64_t owned_experiment(store *s, const char *name, const char *owner, int64_t uid,
				rl_err *e)
{
	store_experiment x = {.name = (char *)name, .spec_text = (char *)"name: x\n",
			      .created_at = 1000.0, .objective_metric = (char *)"accuracy",
			      .mode = (char *)"max", .owner = (char *)owner, .owner_uid = uid};
	int64_t id = 0;
	int rc = store_experiment_create(s, &x, &id, e);
	return rc < 0 ? rc : id;
}

/*
 * Names are unique per owner (schema 7; issue 30 item 3: a second user's
 * digits.yaml was refused, "an experiment named 'digits' exists
 * already"): each user has their own "digits"; a reader's name means
 * their own, else the only one so named, else it is ambiguous and the
 * error says whose they are; OWNER picks one; rows without an owner
 * (older databases) are found by the driver for anyone.
 */
static void test_names_per_owner(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	rl_err e;
	int64_t a = owned_experiment(s, "digits", "alice", 1001, &e);
	int64_t b = owned_experiment(s, "digits", "bob", 1002, &e);
	assert_true(a > 0 && b > 0 && a != b);
	assert_int_equal(owned_experiment(s, "digits", "alice", 1001, &e), RL_EEXISTS);
	int64_t legacy = owned_experiment(s, "old", NULL, -1, &e);
	assert_true(legacy > 0);
	assert_int_equal(owned_experiment(s, "old", NULL, -1, &e), RL_EEXISTS);
	store_experiment x;
	OK(store_experiment_find(s, "digits", NULL, 1001, &x, err));
	assert_int_equal(x.id, a);
	store_experiment_fini(&x);
	OK(store_experiment_find(s, "digits", NULL, 1002, &x, err));
	assert_int_equal(x.id, b);
	store_experiment_fini(&x);
	OK(store_experiment_find(s, "digits", "bob", 1001, &x, err));
	assert_int_equal(x.id, b);
	store_experiment_fini(&x);
	assert_int_equal(store_experiment_find(s, "digits", NULL, 1003, &x, &e), RL_EINVAL);
	assert_non_null(strstr(e.msg, "alice's (id"));
	assert_non_null(strstr(e.msg, "bob's (id"));
	assert_int_equal(store_experiment_find(s, "digits", "carol", 1001, &x, &e), RL_ENOTFOUND);
	OK(store_experiment_find(s, "old", NULL, 1003, &x, err));
	assert_int_equal(x.id, legacy);
	store_experiment_fini(&x);
	OK(store_experiment_find_owned(s, "digits", 1002, &x, err));
	assert_int_equal(x.id, b);
	store_experiment_fini(&x);
	assert_int_equal(store_experiment_find_owned(s, "digits", 1003, &x, &e), RL_ENOTFOUND);
	OK(store_experiment_find_owned(s, "old", 1003, &x, err));
	assert_int_equal(x.id, legacy);
	store_experiment_fini(&x);
	store_close(s);
}

/* Migration 7 from a database whose names were unique in the file: its
 * rows, their trials and events stay; afterwards two owners share a name,
 * and a new experiment still gets its change count (the trigger made
 * again). */
static void test_migrate_names_v7(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	rl_err e;
	int64_t a = owned_experiment(s, "digits", "alice", 1001, &e);
	int64_t t;
	OK(store_trial_insert(s, a, 0, NULL, 1, &t, err));
	OK(store_event_append(s, 2, a, t, 0, "x", "y", NULL, err));
	store_close(s);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP INDEX experiments_owner_name;"
				      "CREATE UNIQUE INDEX experiments_name_v6 ON experiments(name);"
				      "ALTER TABLE segments RENAME COLUMN handle TO container;"
				      "PRAGMA user_version = 6;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	s = open_ok(f->path, 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	int64_t b = owned_experiment(s, "digits", "bob", 1002, &e);
	if (b < 0)
		fail_msg("bob's digits after migration 7: %s", e.msg);
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trials"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events"), 1);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM experiment_changes"), 2);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

/* Migration 9 from a database whose segments kept a "container": the
 * column is the handle now, and its values stay. */
static void test_migrate_handle_v9(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t exp = new_experiment(s, "h", "max");
	int64_t t, g;
	OK(store_trial_insert(s, exp, 0, NULL, 1, &t, err));
	OK(store_segment_insert(s, t, 0, 0, 1, -1, &g, err));
	store_close(s);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "ALTER TABLE segments RENAME COLUMN handle TO container;"
				      "UPDATE segments SET container = '4242';"
				      "PRAGMA user_version = 8;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	s = open_ok(f->path, 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	store_segment sg;
	OK(store_segment_get(s, g, &sg, err));
	assert_string_equal(sg.handle, "4242");
	store_segment_fini(&sg);
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM segments WHERE handle = '4242'"), 1);
}

/* Pages by id with the filters; a page costs its rows (after/limit). */
static void test_experiment_pages(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	for (int i = 0; i < 25; i++) {
		char name[16], owner[8];
		snprintf(name, sizeof name, "p%d", i);
		snprintf(owner, sizeof owner, "u%d", i % 3);
		store_experiment e = {.name = name, .spec_text = (char *)"name: x\n",
				      .created_at = 1000.0 + i, .objective_metric = (char *)"acc",
				      .mode = (char *)"max", .owner_uid = 100 + i % 3, .owner = owner};
		int64_t id;
		OK(store_experiment_create(s, &e, &id, err));
		assert_int_equal(id, i + 1);
		if (i % 4 == 0)
			OK(store_experiment_set_status(s, id, EXP_DONE, 2000.0, err));
	}
	store_experiment *v;
	size_t n;
	/* Every page in turn, ten at a time, gives each once in id order. */
	store_exp_filter q = STORE_EXP_FILTER_ALL;
	q.limit = 10;
	int64_t want = 1;
	for (int page = 0; page < 3; page++) {
		OK(store_experiment_page(s, &q, &v, &n, err));
		assert_int_equal(n, page < 2 ? 10 : 5);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(v[i].id, want++);
		assert_non_null(v[0].spec_text); /* not brief */
		q.after = v[n - 1].id;
		store_experiments_free(v, n);
	}
	/* Filters: state, owner, age; together; brief leaves the spec out. */
	q = STORE_EXP_FILTER_ALL;
	q.status = EXP_DONE;
	OK(store_experiment_page(s, &q, &v, &n, err));
	assert_int_equal(n, 7); /* 0, 4, ..., 24 */
	for (size_t i = 0; i < n; i++)
		assert_int_equal(v[i].status, EXP_DONE);
	store_experiments_free(v, n);
	q = STORE_EXP_FILTER_ALL;
	q.owner = "u1";
	q.since = 1010.0;
	q.brief = 1;
	OK(store_experiment_page(s, &q, &v, &n, err));
	assert_int_equal(n, 5); /* 10, 13, 16, 19, 22 (0-based) */
	assert_int_equal(v[0].id, 11);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(v[i].owner, "u1");
		assert_true(v[i].created_at >= 1010.0);
		assert_null(v[i].spec_text);
	}
	store_experiments_free(v, n);
	q.status = EXP_DONE;
	OK(store_experiment_page(s, &q, &v, &n, err));
	assert_int_equal(n, 1); /* 16 */
	assert_int_equal(v[0].id, 17);
	store_experiments_free(v, n);
	store_close(s);
}

/* A new file is auto_vacuum=INCREMENTAL: deleting an experiment gives
 * its pages back, the file shrinks. */
static void test_delete_shrinks(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	assert_int_equal(raw_int(f->path, "PRAGMA auto_vacuum"), 2); /* incremental */
	int64_t keep = new_experiment(s, "keep", "max");
	OK(store_trial_insert(s, keep, 0, NULL, 1, NULL, err));
	store_experiment big = {.name = (char *)"big", .spec_text = (char *)"{}",
				.created_at = 1000.0, .objective_metric = (char *)"acc",
				.mode = (char *)"max"};
	int64_t id;
	OK(store_experiment_create(s, &big, &id, err));
	char params[600];
	memset(params, 'x', sizeof params - 1);
	params[sizeof params - 1] = '\0';
	char json[700];
	snprintf(json, sizeof json, "{\"p\":\"%s\"}", params);
	OK(store_begin(s, err));
	for (int i = 0; i < 2000; i++)
		OK(store_trial_insert(s, id, i, json, 1, NULL, err));
	OK(store_commit(s, err));
	long long before = raw_int(f->path, "PRAGMA page_count");
	OK(store_experiment_delete(s, id, err));
	long long after = raw_int(f->path, "PRAGMA page_count");
	assert_true(after * 4 < before); /* ~1.2 MB of trials gone */
	assert_int_equal(raw_int(f->path, "PRAGMA freelist_count"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trials"), 1);
	store_close(s);
}

/* A backup is the database as it was, whole, and refuses to overwrite. */
static void test_backup(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t exp = new_experiment(s, "b", "max");
	OK(store_trial_insert(s, exp, 0, NULL, 1, NULL, err));
	char dest[PATH_MAX + 16];
	snprintf(dest, sizeof dest, "%s.bak", f->path);
	size_t pages = 0;
	/* A write group open on the service's own connection is not in the copy. */
	OK(store_begin(s, err));
	OK(store_trial_insert(s, exp, 1, NULL, 1, NULL, err));
	store *r = open_ok(f->path, STORE_READONLY);
	OK(store_backup(r, dest, &pages, err));
	assert_true(pages > 1);
	OK(store_commit(s, err));
	rl_err e;
	assert_int_equal(store_backup(r, dest, NULL, &e), RL_EEXISTS);
	store_close(r);
	store_close(s);
	assert_int_equal(raw_int(dest, "SELECT count(*) FROM trials"), 1);
	assert_int_equal(raw_int(dest, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	/* The copy opens as a state database; no stray part file is left. */
	s = open_ok(dest, STORE_READONLY);
	store_close(s);
	char part[PATH_MAX + 48];
	snprintf(part, sizeof part, "%s.part-%ld", dest, (long)getpid());
	struct stat sb;
	assert_int_not_equal(stat(part, &sb), 0);
	unlink(dest);
}

/* Schema 10: several objectives.  A version 9 database (its tables taken
 * back) upgrades with its rows kept and nothing recorded for them; read-only,
 * a version 9 file reads as one without values.  Values round-trip (NaN as
 * none, the violation only when given) and go with their experiment. */
static void test_migrate_objectives_v10(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t exp = new_experiment(s, "mo", "max"), t0, t1;
	OK(store_trial_insert(s, exp, 0, NULL, 1, &t0, err));
	OK(store_trial_insert(s, exp, 1, NULL, 1, &t1, err));
	store_close(s);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TABLE objectives; DROP TABLE trial_values;"
				      "DROP TABLE trial_violations; PRAGMA user_version = 9;",
				      NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	store *r = open_ok(f->path, STORE_READONLY);
	assert_int_equal(store_schema_version(r), 9);
	store_trial_values *vv;
	store_objective *ob;
	size_t n;
	OK(store_trial_values_list(r, exp, &vv, &n, err));
	assert_int_equal(n, 0);
	OK(store_objectives_get(r, exp, &ob, &n, err));
	assert_int_equal(n, 0);
	store_close(r);

	s = open_ok(f->path, 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	OK(store_trial_values_list(s, exp, &vv, &n, err));
	assert_int_equal(n, 0);
	store_objective two[2] = {{"acc", "max"}, {"latency", "min"}};
	OK(store_objectives_set(s, exp, two, 2, err));
	OK(store_objectives_set(s, exp, two, 2, err)); /* replaces */
	OK(store_objectives_get(s, exp, &ob, &n, err));
	assert_int_equal(n, 2);
	assert_string_equal(ob[1].metric, "latency");
	assert_string_equal(ob[1].mode, "min");
	store_objectives_free(ob, n);
	double v1[2] = {0.9, 12.5}, v0[2] = {0.8, NAN};
	OK(store_trial_set_values(s, t1, v1, 2, 0.25, err));
	OK(store_trial_set_values(s, t0, v0, 2, NAN, err));
	OK(store_trial_set_values(s, t1, v1, 2, 0, err)); /* replaces */
	OK(store_trial_values_list(s, exp, &vv, &n, err));
	assert_int_equal(n, 2);
	assert_int_equal(vv[0].trial_id, t0);
	assert_int_equal(vv[0].n, 2);
	assert_true(vv[0].v[0] == 0.8 && isnan(vv[0].v[1]) && isnan(vv[0].violation));
	assert_int_equal(vv[1].idx, 1);
	assert_true(vv[1].v[1] == 12.5 && vv[1].violation == 0);
	free(vv);
	rl_err e;
	double many[STORE_OBJECTIVES_MAX + 1] = {0};
	assert_int_equal(store_trial_set_values(s, t0, many, STORE_OBJECTIVES_MAX + 1, 0, &e), RL_EINVAL);
	OK(store_experiment_delete(s, exp, err));
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trial_values"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trial_violations"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM objectives"), 0);
}

static void test_groups_are_atomic(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	rl_err e;
	int64_t exp = new_experiment(s, "g", "max");

	/* A group whose second write violates UNIQUE(experiment_id, idx). */
	OK(store_begin(s, err));
	assert_int_equal(store_begin(s, &e), RL_EINVAL);
	OK(store_trial_insert(s, exp, 0, NULL, 1, NULL, err));
	OK(store_event_append(s, 1, exp, 0, 0, "trial.created", NULL, NULL, err));
	assert_int_equal(store_trial_insert(s, exp, 0, NULL, 1, NULL, &e), RL_EEXISTS);
	/* The failed call undid only itself: the group can still see its rows. */
	store_trial *tv;
	size_t nt;
	OK(store_trial_list(s, exp, 0, &tv, &nt, err));
	assert_int_equal(nt, 1);
	store_trials_free(tv, nt);
	store_rollback(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trials"), 0);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM events"), 0);

	/* A committed group: both rows, visible to another connection. */
	OK(store_begin(s, err));
	OK(store_trial_insert(s, exp, 0, NULL, 1, NULL, err));
	OK(store_trial_insert(s, exp, 1, NULL, 1, NULL, err));
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trials"), 0); /* not yet */
	OK(store_commit(s, err));
	assert_int_equal(store_commit(s, &e), RL_EINVAL);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM trials"), 2);

	/* A metric batch with a dangling trial id (foreign key) is all or none. */
	store_metric m[] = {
		{.trial_id = 1, .resource = 1, .name = (char *)"a", .value = 1, .at = 1},
		{.trial_id = 1, .resource = 2, .name = (char *)"a", .value = 2, .at = 2},
		{.trial_id = 999, .resource = 3, .name = (char *)"a", .value = 3, .at = 3},
	};
	assert_int_equal(store_metrics_insert(s, m, 3, &e), RL_ESTORE);
	assert_non_null(strstr(e.msg, "FOREIGN KEY"));
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 0);
	OK(store_metrics_insert(s, m, 2, err));
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM metrics"), 2);
	store_close(s);
}

/*
 * Crash safety: a child commits trials one by one and tells the parent each
 * index after its commit returned; the parent SIGKILLs it mid-stream.  Every
 * acknowledged row must be in the reopened database, the rows must be a
 * gapless prefix 0..k-1, and the file must pass integrity_check.
 */
static void test_sigkill_keeps_committed(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t exp = new_experiment(s, "crash", "max");
	store_close(s);

	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fd[0]);
		store *c = NULL;
		if (store_open(f->path, 0, &c, NULL) < 0)
			_exit(1);
		for (int i = 0; i < 100000; i++) {
			char params[64];
			snprintf(params, sizeof params, "{\"i\":%d}", i);
			int64_t tid;
			if (store_trial_insert(c, exp, i, params, i, &tid, NULL) < 0)
				_exit(2);
			store_metric m = {.trial_id = tid, .resource = 1, .name = (char *)"acc",
					  .value = i, .at = i};
			if (store_metrics_insert(c, &m, 1, NULL) < 0)
				_exit(3);
			if (write(fd[1], &i, sizeof i) != sizeof i)
				_exit(4);
		}
		_exit(5);
	}
	close(fd[1]);
	int acked = -1, v;
	while (acked < 200 && read(fd[0], &v, sizeof v) == sizeof v)
		acked = v;
	assert_int_equal(kill(pid, SIGKILL), 0);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	/* Drain acknowledgements written before the kill. */
	while (read(fd[0], &v, sizeof v) == sizeof v)
		acked = v;
	close(fd[0]);
	assert_true(acked >= 200);

	s = open_ok(f->path, STORE_MUST_EXIST);
	OK(store_check(s, err));
	store_trial *tv;
	size_t nt;
	OK(store_trial_list(s, exp, STORE_LIST_METRICS, &tv, &nt, err));
	assert_true(nt >= (size_t)acked + 1);
	assert_true(nt <= (size_t)acked + 2); /* at most one committed, not yet acked */
	for (size_t i = 0; i < nt; i++) {
		assert_int_equal(tv[i].idx, (int)i);
		char params[64];
		snprintf(params, sizeof params, "{\"i\":%zu}", i);
		assert_string_equal(tv[i].params_json, params);
		if (i <= (size_t)acked) {
			assert_int_equal(tv[i].n_metrics, 1);
			assert_float_equal(tv[i].metrics[0].value, (double)i, 0);
		}
	}
	store_trials_free(tv, nt);
	/* The recovered store takes new writes. */
	OK(store_trial_insert(s, exp, (int)nt, NULL, 1, NULL, err));
	store_close(s);
}

/*
 * The recovery flow end to end: a "driver" process finishes segment 0 of a
 * trial, places segment 1, starts a worker and records its pid + start time,
 * then is SIGKILLed.  The restarted side finds the running segment, proves
 * the worker is the one recorded (so it may kill it: no orphan), marks the
 * segment lost and plans a new one from the trial's last checkpoint.
 */
static void test_recover_after_driver_kill(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t exp = new_experiment(s, "rec", "max");
	store_close(s);
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t driver = fork();
	assert_true(driver >= 0);
	if (driver == 0) {
		close(fd[0]);
		store *c = NULL;
		int64_t t, g0, g1;
		store_segment_end ok = {.status = SEG_COMPLETED, .exit_code = 0,
					.peak_mem_mib = 100, .ended_at = 20};
		store_placement pl = {.device = "host", .mem_reserved_mib = 200,
				      .compute_share = 1, .basis = "hint"};
		if (store_open(f->path, 0, &c, NULL) < 0 ||
		    store_trial_insert(c, exp, 0, "{}", 1, &t, NULL) < 0 ||
		    store_segment_insert(c, t, 0, 0, 3, -1, &g0, NULL) < 0 ||
		    store_segment_place(c, g0, &pl, 10, NULL) < 0 ||
		    store_segment_finish(c, g0, &ok, NULL) < 0 ||
		    store_trial_set_progress(c, t, 3, 0.7, 3, 20, NULL) < 0 ||
		    store_segment_insert(c, t, 1, 3, 6, -1, &g1, NULL) < 0 ||
		    store_segment_place(c, g1, &pl, 21, NULL) < 0)
			_exit(1);
		pid_t worker = fork();
		if (worker == 0) {
			for (;;)
				pause();
		}
		uint64_t st;
		if (worker < 0 || procid_start_time(worker, &st, NULL) < 0 ||
		    store_segment_set_pid(c, g1, worker, st, NULL, NULL) < 0)
			_exit(2);
		if (write(fd[1], &worker, sizeof worker) != sizeof worker)
			_exit(3);
		for (;;)
			pause(); /* killed here, mid-segment */
	}
	close(fd[1]);
	pid_t worker = 0;
	assert_int_equal(read(fd[0], &worker, sizeof worker), sizeof worker);
	close(fd[0]);
	kill(driver, SIGKILL);
	waitpid(driver, NULL, 0);

	s = open_ok(f->path, STORE_MUST_EXIST);
	store_segment *run;
	size_t nrun;
	OK(store_segment_list_running(s, exp, &run, &nrun, err));
	assert_int_equal(nrun, 1);
	assert_int_equal(run[0].seq, 1);
	assert_int_equal(run[0].pid, worker);
	/* The recorded identity names the live orphan; kill it. */
	assert_int_equal(procid_matches(run[0].pid, run[0].pid_start_time), 1);
	assert_int_equal(kill(run[0].pid, SIGKILL), 0);
	for (int i = 0; i < 500 && procid_matches(run[0].pid, run[0].pid_start_time); i++)
		usleep(10000); /* reparented to init, which reaps it */
	store_segment_end lost = {.status = SEG_LOST, .exit_code = -1, .signal = SIGKILL,
				  .peak_mem_mib = -1, .ended_at = 30,
				  .message = "relish restarted; worker killed"};
	int64_t tid = run[0].trial_id;
	OK(store_begin(s, err));
	OK(store_segment_finish(s, run[0].id, &lost, err));
	store_trial tr;
	OK(store_trial_get(s, tid, &tr, err));
	assert_float_equal(tr.resource_done, 3, 0); /* the finished segment is kept */
	assert_float_equal(tr.objective, 0.7, 0);
	int64_t g2;
	OK(store_segment_insert(s, tid, 2, tr.resource_done, 6, -1, &g2, err));
	OK(store_commit(s, err));
	store_trial_fini(&tr);
	store_segments_free(run, nrun);
	OK(store_segment_list_running(s, exp, &run, &nrun, err));
	assert_int_equal(nrun, 0);
	store_segments_free(run, nrun);
	store_segment *all;
	size_t nall;
	OK(store_segment_list(s, tid, &all, &nall, err));
	assert_int_equal(nall, 3);
	assert_int_equal(all[0].status, SEG_COMPLETED);
	assert_int_equal(all[1].status, SEG_LOST);
	assert_int_equal(all[2].status, SEG_PLANNED);
	assert_float_equal(all[2].resource_from, 3, 0);
	store_segments_free(all, nall);
	store_close(s);
}

static int64_t changes_of(store *s, int64_t id)
{
	store_experiment e;
	OK(store_experiment_get(s, id, &e, err));
	int64_t n = e.changes;
	store_experiment_fini(&e);
	return n;
}

/* Schema 5: an experiment's change count moves with every write of its
 * trials and events (what a summary reads), and only then; a reader that
 * kept a summary knows from it whether the summary still holds. */
static void test_experiment_changes(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t a = new_experiment(s, "a", "max"), b = new_experiment(s, "b", "max");
	assert_int_equal(changes_of(s, a), 0);
	int64_t t, g;
	OK(store_trial_insert(s, a, 0, "{}", 1001, &t, err));
	assert_int_equal(changes_of(s, a), 1);
	assert_int_equal(changes_of(s, b), 0);
	OK(store_trial_set_status(s, t, TRIAL_RUNNING, NULL, 1002, err));
	OK(store_trial_set_progress(s, t, 1, 0.5, 1, 1003, err));
	assert_int_equal(changes_of(s, a), 3);
	/* a segment row alone changes no summary */
	OK(store_segment_insert(s, t, 0, 0, 1, -1, &g, err));
	assert_int_equal(changes_of(s, a), 3);
	OK(store_event_append(s, 1004, a, t, 0, "segment.waiting", "memory", NULL, err));
	OK(store_event_append(s, 1004, 0, 0, 0, "service.note", "no experiment", NULL, err));
	assert_int_equal(changes_of(s, a), 4);
	/* the same count in a list and from another (read-only) connection */
	store_experiment *v;
	size_t n;
	OK(store_experiment_list(s, &v, &n, err));
	assert_int_equal(n, 2);
	assert_int_equal(v[0].changes, 4);
	assert_int_equal(v[1].changes, 0);
	store_experiments_free(v, n);
	store *r = open_ok(f->path, STORE_READONLY);
	assert_int_equal(changes_of(r, a), 4);
	OK(store_trial_set_status(s, t, TRIAL_COMPLETED, NULL, 1005, err));
	assert_int_equal(changes_of(r, a), 5);
	store_close(r);
	OK(store_experiment_delete(s, a, err));
	store_close(s);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM experiment_changes"), 1);
	/* A version 4 database read as it is (read-only: no migration): no
	 * counts, -1. */
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DROP TRIGGER experiment_changes_new;"
				      "DROP TRIGGER experiment_changes_trial_new;"
				      "DROP TRIGGER experiment_changes_trial;"
				      "DROP TRIGGER experiment_changes_event;"
				      "DROP TABLE experiment_changes;"
				      "ALTER TABLE segments RENAME COLUMN handle TO container;"
				      "PRAGMA user_version = 4;",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	r = open_ok(f->path, STORE_READONLY);
	assert_int_equal(changes_of(r, b), -1);
	store_close(r);
	/* and migrated again when opened for writing */
	s = open_ok(f->path, 0);
	assert_int_equal(changes_of(s, b), 0);
	store_close(s);
}

/* VM steps the cached statement starting with prefix has run since it was
 * prepared (reset with the counter). */
static int stmt_steps(store *s, const char *prefix)
{
	for (sqlite3_stmt *st = sqlite3_next_stmt(s->db, NULL); st; st = sqlite3_next_stmt(s->db, st))
		if (!strncmp(sqlite3_sql(st), prefix, strlen(prefix)))
			return sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 1);
	fail_msg("no statement starting with %s", prefix);
	return -1;
}

/* One experiment's events come through the (experiment_id, id) index:
 * their cost does not grow with the other experiments' events (it did:
 * "?1 = 0 OR experiment_id = ?1" made SQLite scan every event). */
static void test_event_list_indexed(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t a = new_experiment(s, "a", "max"), b = new_experiment(s, "b", "max");
	OK(store_begin(s, err));
	for (int i = 0; i < 2000; i++)
		OK(store_event_append(s, 1000 + i, b, 0, 0, "segment.lost", "b's", NULL, err));
	for (int i = 0; i < 3; i++)
		OK(store_event_append(s, 3000 + i, a, 0, 0, "segment.lost", "a's", NULL, err));
	OK(store_commit(s, err));
	store_event *ev;
	size_t n;
	OK(store_event_list(s, a, 0, 0, &ev, &n, err));
	assert_int_equal(n, 3);
	assert_string_equal(ev[2].message, "a's");
	store_events_free(ev, n);
	int steps = stmt_steps(s, "SELECT id, at, experiment_id, trial_id, segment_id, kind");
	if (steps > 300)
		fail_msg("listing 3 events of one experiment took %d VM steps beside 2000 events of "
			 "another: the index is not used", steps);
	/* all experiments, and after an id, still */
	OK(store_event_list(s, 0, 0, 0, &ev, &n, err));
	assert_int_equal(n, 2003);
	store_events_free(ev, n);
	OK(store_event_list(s, b, 1990, 5, &ev, &n, err));
	assert_int_equal(n, 5);
	assert_int_equal(ev[0].id, 1991);
	store_events_free(ev, n);
	store_close(s);
}

static int64_t trial_with(store *s, int64_t exp, int idx, trial_status st, double obj)
{
	int64_t t;
	OK(store_trial_insert(s, exp, idx, "{}", 1001, &t, err));
	if (!isnan(obj))
		OK(store_trial_set_progress(s, t, 1, obj, 1, 1002, err));
	if (st != TRIAL_PENDING)
		OK(store_trial_set_status(s, t, st, NULL, 1003, err));
	return t;
}

/* The stats a status read takes of every experiment at once are what the
 * per-experiment reads give (counts, store_trial_best's choice), for all
 * experiments or one; the waiting trials are those whose latest wait-state
 * event says so, in running experiments only. */
static void test_trial_stats_and_waiting(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t a = new_experiment(s, "a", "max"), b = new_experiment(s, "b", "min");
	int64_t c = new_experiment(s, "c", "max"), d = new_experiment(s, "d", "max");
	int64_t e = new_experiment(s, "e", "max");
	int64_t a0 = trial_with(s, a, 0, TRIAL_RUNNING, 0.9);
	int64_t a1 = trial_with(s, a, 1, TRIAL_COMPLETED, 0.5);
	int64_t a2 = trial_with(s, a, 2, TRIAL_COMPLETED, 0.7);
	int64_t a3 = trial_with(s, a, 3, TRIAL_PENDING, NAN);
	int64_t b0 = trial_with(s, b, 0, TRIAL_RUNNING, 0.1);
	trial_with(s, b, 1, TRIAL_STOPPED, 0.3);
	trial_with(s, b, 2, TRIAL_STOPPED, 0.1); /* ties with b0: the lower idx wins */
	trial_with(s, d, 0, TRIAL_RUNNING, NAN);
	trial_with(s, d, 1, TRIAL_FAILED, NAN);
	int64_t e0 = trial_with(s, e, 0, TRIAL_COMPLETED, 2.0);
	OK(store_experiment_set_status(s, e, EXP_DONE, 1010, err));
	(void)c;

	store_exp_stats *v;
	size_t n;
	OK(store_trial_stats(s, 0, &v, &n, err));
	assert_int_equal(n, 5);
	int64_t ids[5] = {a, b, c, d, e}, best[5] = {a2, b0, 0, 0, e0};
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(v[i].experiment_id, ids[i]);
		assert_int_equal(v[i].best_id, best[i]);
		int counts[TRIAL__COUNT];
		OK(store_trial_counts(s, ids[i], counts, err));
		assert_memory_equal(v[i].count, counts, sizeof counts);
		store_trial t;
		rl_err e2;
		if (best[i]) {
			OK(store_trial_best(s, ids[i], &t, err));
			assert_int_equal(t.id, v[i].best_id);
			assert_int_equal(t.idx, v[i].best_idx);
			assert_int_equal(t.status, v[i].best_status);
			assert_float_equal(t.objective, v[i].best_objective, 0);
			assert_float_equal(t.objective_resource, v[i].best_resource, 0);
			store_trial_fini(&t);
		} else {
			assert_int_equal(store_trial_best(s, ids[i], &t, &e2), RL_ENOTFOUND);
			assert_true(isnan(v[i].best_objective));
		}
		store_exp_stats *one;
		size_t n1;
		OK(store_trial_stats(s, ids[i], &one, &n1, err));
		assert_int_equal(n1, 1);
		assert_memory_equal(one, &v[i], sizeof *one);
		free(one);
	}
	assert_int_equal(v[0].count[TRIAL_PENDING], 1);
	assert_int_equal(v[0].count[TRIAL_RUNNING], 1);
	assert_int_equal(v[0].count[TRIAL_COMPLETED], 2);
	assert_int_equal(v[2].count[TRIAL_PENDING] + v[2].count[TRIAL_RUNNING], 0);
	free(v);
	OK(store_trial_stats(s, 999, &v, &n, err));
	assert_int_equal(n, 0);
	free(v);

	/* a0 waits again after being placed once; a1 waits; a3 waited and
	 * failed; b0 was placed; e (done) has a wait left over. */
	OK(store_event_append(s, 1100, a, a0, 0, "segment.waiting", "first", NULL, err));
	OK(store_event_append(s, 1101, a, a1, 0, "segment.waiting", "a1 waits", NULL, err));
	OK(store_event_append(s, 1102, a, a3, 0, "segment.waiting", "a3", NULL, err));
	OK(store_event_append(s, 1103, b, b0, 0, "segment.waiting", "b0", NULL, err));
	OK(store_event_append(s, 1104, a, a0, 0, "segment.waited", "placed", NULL, err));
	OK(store_event_append(s, 1105, a, a3, 0, "trial.failed", "gave up", NULL, err));
	OK(store_event_append(s, 1106, a, a0, 0, "segment.waiting", "again", NULL, err));
	OK(store_event_append(s, 1107, b, b0, 0, "segment.waited", "placed", NULL, err));
	OK(store_event_append(s, 1108, a, a0, 0, "segment.lost", "not a wait state", NULL, err));
	OK(store_event_append(s, 1109, e, e0, 0, "segment.waiting", "e is done", NULL, err));
	OK(store_event_append(s, 1110, a, 0, 0, "segment.waiting", "no trial", NULL, err));
	store_event *w;
	size_t nw;
	for (int pass = 0; pass < 2; pass++) {
		OK(store_event_waiting(s, pass ? a : 0, &w, &nw, err));
		assert_int_equal(nw, 2);
		assert_int_equal(w[0].trial_id, a1);
		assert_string_equal(w[0].message, "a1 waits");
		assert_float_equal(w[0].at, 1101, 0);
		assert_int_equal(w[1].trial_id, a0);
		assert_string_equal(w[1].message, "again");
		assert_int_equal(w[1].experiment_id, a);
		store_events_free(w, nw);
	}
	OK(store_event_waiting(s, e, &w, &nw, err));
	assert_int_equal(nw, 0);
	store_events_free(w, nw);
	OK(store_event_waiting(s, b, &w, &nw, err));
	assert_int_equal(nw, 0);
	store_events_free(w, nw);
	/* the brief list: the same rows without the spec and the submission */
	store_experiment *x, *y;
	size_t nx, ny;
	OK(store_experiment_list(s, &x, &nx, err));
	OK(store_experiment_list_brief(s, &y, &ny, err));
	assert_int_equal(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		assert_int_equal(x[i].id, y[i].id);
		assert_string_equal(x[i].name, y[i].name);
		assert_string_equal(x[i].spec_path, y[i].spec_path);
		assert_int_equal(x[i].status, y[i].status);
		assert_int_equal(x[i].changes, y[i].changes);
		assert_non_null(x[i].spec_text);
		assert_null(y[i].spec_text);
		assert_null(y[i].submission);
	}
	store_experiments_free(x, nx);
	store_experiments_free(y, ny);
	store_close(s);
}

static void test_profiles_devices(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	store_profile p = {.shape = (char *)"a1b2", .family = (char *)"f9", .n = 2,
			   .peak_mem_mib = 900, .mean_util = 35.5, .est_mem_mib = 1000,
			   .est_error = (1000.0 - 900.0) / 900.0, .throughput = NAN,
			   .updated_at = 5};
	OK(store_profile_put(s, &p, err));
	p.n = 3;
	p.peak_mem_mib = 950;
	OK(store_profile_put(s, &p, err));
	store_profile q;
	OK(store_profile_get(s, "a1b2", &q, err));
	assert_int_equal(q.n, 3);
	assert_int_equal(q.peak_mem_mib, 950);
	assert_float_equal(q.mean_util, 35.5, 0);
	assert_true(isnan(q.throughput));
	assert_string_equal(q.family, "f9");
	free(q.shape);
	free(q.family);
	store_profile *pv;
	size_t np;
	OK(store_profile_list(s, &pv, &np, err));
	assert_int_equal(np, 1);
	store_profiles_free(pv, np);
	rl_err e;
	assert_int_equal(store_profile_get(s, "zz", &q, &e), RL_ENOTFOUND);

	store_device d = {.name = (char *)"NVIDIA H200", .uuid = (char *)"GPU-1", .is_gpu = 1,
			  .mem_total_mib = 143771, .compute_total = 100};
	int64_t id1, id2, id3;
	OK(store_device_put(s, &d, &id1, err));
	d.mem_total_mib = 140000;
	OK(store_device_put(s, &d, &id2, err));
	assert_int_equal(id1, id2);
	store_device h = {.name = (char *)"host", .uuid = (char *)"host", .mem_total_mib = 64000,
			  .compute_total = 16};
	OK(store_device_put(s, &h, &id3, err));
	assert_int_not_equal(id3, id1);
	store_device *dv;
	size_t nd;
	OK(store_device_list(s, &dv, &nd, err));
	assert_int_equal(nd, 2);
	assert_int_equal(dv[0].mem_total_mib, 140000);
	assert_int_equal(dv[0].is_gpu, 1);
	assert_string_equal(dv[1].uuid, "host");
	assert_float_equal(dv[1].compute_total, 16, 0);
	store_devices_free(dv, nd);
	store_close(s);
}

/* The learnt table (schema 12): rows replaced by key, read back with NULL
 * as NAN, and loading keeps the newest `keep` rows of a kind, deleting the
 * older ones (other kinds untouched). */
static void test_learnt_bounded(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	store_learnt rows[6];
	for (int i = 0; i < 5; i++) {
		rows[i] = (store_learnt){.kind = "pair", .n = 1, .d = 0.1 * i, .d_max = NAN,
					 .s_min = NAN, .s_max = NAN, .updated_at = 10 + i};
		snprintf(rows[i].a, sizeof rows[i].a, "%016x", i);
		snprintf(rows[i].b, sizeof rows[i].b, "%016x", 99);
	}
	rows[5] = (store_learnt){.kind = "las", .a = "0000000000000003", .b = "0000000000000000",
				 .n = 7, .d = NAN, .d_max = NAN, .s_min = NAN, .s_max = NAN,
				 .updated_at = 1};
	OK(store_learnt_put(s, rows, 6, err));
	rows[4].n = 2; /* the same key again: replaced */
	OK(store_learnt_put(s, &rows[4], 1, err));
	store_learnt *v;
	size_t n;
	OK(store_learnt_load(s, 10, &v, &n, err));
	assert_int_equal(n, 6);
	free(v);
	OK(store_learnt_load(s, 3, &v, &n, err));
	assert_int_equal(n, 4); /* las alone, then the pairs by age */
	assert_string_equal(v[0].kind, "las");
	assert_float_equal(v[0].n, 7, 0);
	assert_true(isnan(v[0].d));
	for (int i = 1; i < 4; i++) {
		assert_string_equal(v[i].kind, "pair");
		assert_float_equal(v[i].updated_at, 11 + i, 0);
	}
	assert_float_equal(v[3].n, 2, 0);
	assert_float_equal(v[3].d, 0.4, 1e-12);
	free(v);
	store_close(s);
	s = open_ok(f->path, 0);
	OK(store_learnt_load(s, 100, &v, &n, err));
	assert_int_equal(n, 4); /* the older pairs were deleted */
	free(v);
	rl_err e;
	rows[0].n = -1; /* the table's CHECK */
	assert_true(store_learnt_put(s, rows, 1, &e) < 0);
	store_close(s);
}

/* Profiles: every one but the keep newest deleted (ties by shape), in
 * shape order after; nothing deleted at or under the bound. */
static void test_profiles_bounded(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	char shape[5][24];
	/* updated 5, 1, 4, 2, 4: the newest three are 0, 2 and 4 */
	static const double at[5] = {5, 1, 4, 2, 4};
	for (int i = 0; i < 5; i++) {
		snprintf(shape[i], sizeof shape[i], "%016x", 4 - i);
		store_profile p = {.shape = shape[i], .family = "00000000000000aa", .n = 1,
				   .peak_mem_mib = 100 + i, .mean_util = NAN, .est_mem_mib = -1,
				   .est_error = NAN, .throughput = NAN, .updated_at = at[i]};
		OK(store_profile_put(s, &p, err));
	}
	store_profile *v;
	size_t n;
	OK(store_profile_trim(s, 5, err));
	OK(store_profile_list(s, &v, &n, err));
	assert_int_equal(n, 5);
	store_profiles_free(v, n);
	OK(store_profile_trim(s, 3, err));
	store_close(s);
	s = open_ok(f->path, 0);
	OK(store_profile_list(s, &v, &n, err));
	assert_int_equal(n, 3);
	/* in shape order: 4 - i for i = 4, 2, 0 */
	assert_string_equal(v[0].shape, shape[4]);
	assert_string_equal(v[1].shape, shape[2]);
	assert_string_equal(v[2].shape, shape[0]);
	assert_int_equal(v[0].peak_mem_mib, 104);
	store_profiles_free(v, n);
	/* the tie at 4 goes to the lower shape */
	OK(store_profile_trim(s, 2, err));
	OK(store_profile_list(s, &v, &n, err));
	assert_int_equal(n, 2);
	assert_string_equal(v[0].shape, shape[4]);
	assert_string_equal(v[1].shape, shape[0]);
	store_profiles_free(v, n);
	OK(store_profile_trim(s, 0, err));
	OK(store_profile_list(s, &v, &n, err));
	assert_int_equal(n, 0);
	store_profiles_free(v, n);
	store_close(s);
}

/* The rows kept are shared among the users who wrote them: one user's 20
 * new profiles do not push out another's 2 older ones, nor the 3 of no
 * known user; that user keeps its newest 5 (2 + 3 + 5 = 10). */
static void test_profiles_shared_among_users(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	char shape[25][24];
	for (int i = 0; i < 25; i++) {
		/* 0-1: uid 1000 (updated 1, 2); 2-4: unknown (3-5); 5-24:
		 * uid 1001 (10-29) */
		int64_t uid = i < 2 ? 1000 : i < 5 ? -1 : 1001;
		double at = i < 5 ? i + 1 : i + 5;
		snprintf(shape[i], sizeof shape[i], "%016x", i);
		store_profile p = {.shape = shape[i], .family = "00000000000000aa", .n = 1,
				   .peak_mem_mib = 100 + i, .mean_util = NAN, .est_mem_mib = -1,
				   .est_error = NAN, .throughput = NAN, .updated_at = at,
				   .uid = uid};
		OK(store_profile_put(s, &p, err));
	}
	OK(store_profile_trim(s, 10, err));
	store_close(s);
	s = open_ok(f->path, 0);
	store_profile *v;
	size_t n;
	OK(store_profile_list(s, &v, &n, err));
	assert_int_equal(n, 10);
	/* shape order: 0-4, then 1001's newest five, 20-24 */
	for (size_t i = 0; i < n; i++) {
		int want = i < 5 ? (int)i : (int)i + 15;
		assert_string_equal(v[i].shape, shape[want]);
		assert_int_equal(v[i].uid, want < 2 ? 1000 : want < 5 ? -1 : 1001);
	}
	store_profiles_free(v, n);
	/* at a bound below the users' number, each keeps an equal few */
	OK(store_profile_trim(s, 3, err));
	OK(store_profile_list(s, &v, &n, err));
	assert_int_equal(n, 3);
	assert_string_equal(v[0].shape, shape[1]);
	assert_string_equal(v[1].shape, shape[4]);
	assert_string_equal(v[2].shape, shape[24]);
	store_profiles_free(v, n);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrate_fresh_and_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_newer_and_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lifecycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_experiment_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backup, setup, teardown),
		cmocka_unit_test_setup_teardown(test_delete_shrinks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_all_statuses_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trials_end_with_experiment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_trials_v6, setup, teardown),
		cmocka_unit_test_setup_teardown(test_names_per_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_names_v7, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_handle_v9, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_objectives_v10, setup, teardown),
		cmocka_unit_test_setup_teardown(test_groups_are_atomic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigkill_keeps_committed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recover_after_driver_kill, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_learnt_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles_shared_among_users, setup, teardown),
		cmocka_unit_test_setup_teardown(test_experiment_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_list_indexed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trial_stats_and_waiting, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
