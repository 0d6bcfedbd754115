/*
 * test_store_fixtures.c - databases written by earlier relish versions
 * open and migrate (issue 27, item 4).  tests/fixtures/store-vN.sql is a
 * state database as the relish of schema version N wrote it (a real `relish
 * run` of that commit's ctrial example, scripts/mkfixtures.sh); each is
 * loaded into a fresh file and:
 *   - a writable open migrates it to STORE_SCHEMA_VERSION (foreign keys
 *     hold, quick_check is ok) and every row is still there: experiments,
 *     trials with their states and objectives, segments, metrics, events;
 *   - the reads the CLI and the API make work on it (lists, pages, trial
 *     lists, summaries, the best trial), and a second open is a no-op;
 *   - a new relish run's writes work on it (a new experiment and trial, a
 *     segment over its reservation);
 *   - (schema 11) an 'oom' segment in relish's words "over its memory
 *     reservation" becomes 'over_reservation', another stays 'oom'.
 * Schema versions 1 to 10 have one each; every version before the current
 * one must (scripts/mkfixtures.sh N makes a version's while it is the
 * current one).  A database marked as from a newer relish is refused by
 * every kind of open, saying so, and left as it was, byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/encode.h"
#include "store/store.h"

static char dir[PATH_MAX];

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *p = malloc((size_t)n + 1);
	if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
		free(p);
		p = NULL;
	}
	if (p)
		p[n] = '\0';
	fclose(f);
	return p;
}

static long long q1(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long v = -1;
	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* The fixture of version v as a database file at path; 0 when there is
 * none. */
static int load(int v, const char *path)
{
	char sqlpath[PATH_MAX + 64];
	snprintf(sqlpath, sizeof sqlpath, "%s/tests/fixtures/store-v%d.sql", getenv("RELISH_SRC"), v);
	char *sql = slurp(sqlpath);
	if (!sql) {
		printf("schema %d: no fixture %s yet (scripts/mkfixtures.sh %d makes it)\n", v,
		       sqlpath, v);
		return 0;
	}
	unlink(path);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	char *msg = NULL;
	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("loading %s: %s", sqlpath, msg ? msg : "?");
	sqlite3_close(h);
	free(sql);
	assert_int_equal(q1(path, "PRAGMA user_version"), v);
	return 1;
}

static int one_version(int v)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/v%d.db", dir, v);
	if (!load(v, path))
		return 0;
	/* Schema 11: a segment relish stopped over its reservation, stored
	 * 'oom' with relish's words for it before, becomes 'over_reservation';
	 * a real out-of-memory stays 'oom'.  (A fixture of schema 11 or later
	 * is opened as it is: nothing to rename.) */
	int renames = v < 11;
	if (renames) {
		sqlite3 *h;
		assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
		assert_int_equal(sqlite3_exec(h, "UPDATE segments SET status = 'oom', message = "
					      "'over its memory reservation (reserved 64 MiB, peak 80 "
					      "MiB): relish stopped it' WHERE id = (SELECT max(id) FROM "
					      "segments); UPDATE segments SET status = 'oom', message = "
					      "'CUDA out of memory' WHERE id = (SELECT min(id) FROM "
					      "segments)", NULL, NULL, NULL), SQLITE_OK);
		sqlite3_close(h);
	}
	long long n_oom = q1(path, "SELECT count(*) FROM segments WHERE status = 'oom'");
	long long n_exp = q1(path, "SELECT count(*) FROM experiments");
	long long n_trials = q1(path, "SELECT count(*) FROM trials");
	long long n_done = q1(path, "SELECT count(*) FROM trials WHERE status = 'completed'");
	long long n_segs = q1(path, "SELECT count(*) FROM segments");
	long long n_metrics = q1(path, "SELECT count(*) FROM metrics");
	long long n_events = q1(path, "SELECT count(*) FROM events");
	assert_true(n_exp >= 1 && n_trials >= 6 && n_done >= 1 && n_segs >= n_trials);
	assert_true(n_metrics >= n_done && n_events >= 1);
	double best = NAN;
	{
		sqlite3 *h;
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(h, "SELECT max(objective) FROM trials WHERE "
						    "status = 'completed'", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		best = sqlite3_column_double(st, 0);
		sqlite3_finalize(st);
		sqlite3_close(h);
	}

	store *s = NULL;
	rl_err err;
	rl_err_clear(&err);

	/* Writable: migrated to the current schema, every row kept. */
	if (store_open(path, STORE_MUST_EXIST, &s, &err) < 0)
		fail_msg("schema %d: %s", v, err.msg);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	store_close(s);
	assert_int_equal(q1(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(q1(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	assert_int_equal(q1(path, "SELECT count(*) FROM experiments"), n_exp);
	assert_int_equal(q1(path, "SELECT count(*) FROM trials"), n_trials);
	assert_int_equal(q1(path, "SELECT count(*) FROM trials WHERE status = 'completed'"), n_done);
	assert_int_equal(q1(path, "SELECT count(*) FROM segments"), n_segs);
	if (renames) {
		assert_int_equal(q1(path, "SELECT count(*) FROM segments WHERE status = "
				      "'over_reservation' AND id = (SELECT max(id) FROM segments)"), 1);
		assert_int_equal(q1(path, "SELECT count(*) FROM segments WHERE status = 'oom'"),
				 n_oom - 1);
		assert_int_equal(q1(path, "SELECT count(*) FROM segments WHERE status = 'oom' AND id "
				      "= (SELECT min(id) FROM segments)"), 1);
	}
	assert_int_equal(q1(path, "SELECT count(*) FROM sqlite_master WHERE name = "
			      "'segments_status'"), 1);
	assert_int_equal(q1(path, "SELECT count(*) FROM events"), n_events);
	/* (schema 3 folds a metric reported twice into one row) */
	assert_true(q1(path, "SELECT count(*) FROM metrics") <= n_metrics);
	assert_true(q1(path, "SELECT count(*) FROM metrics") >= n_done);
	{
		sqlite3 *h;
		sqlite3_stmt *st;
		assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(h, "PRAGMA quick_check", -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
		sqlite3_finalize(st);
		sqlite3_close(h);
	}

	/* The reads, read-only now, as the CLI and the API make them. */
	if (store_open(path, STORE_READONLY, &s, &err) < 0)
		fail_msg("schema %d migrated, read-only: %s", v, err.msg);
	store_experiment *ev;
	size_t ne;
	assert_int_equal(store_experiment_list(s, &ev, &ne, &err), 0);
	assert_int_equal((long long)ne, n_exp);
	store_exp_filter f = STORE_EXP_FILTER_ALL;
	f.limit = 1;
	f.brief = 1;
	store_experiment *pv;
	size_t np;
	assert_int_equal(store_experiment_page(s, &f, &pv, &np, &err), 0);
	assert_int_equal(np, 1);
	assert_int_equal(pv[0].id, ev[0].id);
	store_experiments_free(pv, np);
	api_exp_summary *sums = calloc(ne, sizeof *sums);
	assert_non_null(sums);
	assert_int_equal(api_exp_summarise_all(s, ev, ne, sums, &err), 0);
	long long total = 0;
	for (size_t i = 0; i < ne; i++) {
		total += sums[i].total;
		json_t *j = api_json_experiment(&ev[i], &sums[i], 0);
		assert_non_null(j);
		json_decref(j);
		api_exp_summary_fini(&sums[i]);
	}
	free(sums);
	assert_int_equal(total, n_trials);
	store_trial t;
	assert_int_equal(store_trial_best(s, ev[0].id, &t, &err), 0);
	assert_true(fabs(t.objective - best) < 1e-12);
	store_trial_fini(&t);
	store_trial *tv;
	size_t nt;
	assert_int_equal(store_trial_list(s, ev[0].id, STORE_LIST_METRICS, &tv, &nt, &err), 0);
	assert_true(nt >= 6);
	store_trials_free(tv, nt);
	store_close(s);

	/* Opened again: nothing to do; and a new run writes into it. */
	if (store_open(path, STORE_MUST_EXIST, &s, &err) < 0)
		fail_msg("schema %d, second open: %s", v, err.msg);
	store_experiment ne2 = {.name = (char *)"after-upgrade", .spec_text = (char *)"{}",
				.created_at = 1e9, .objective_metric = (char *)"accuracy",
				.mode = (char *)"max", .owner_uid = 1000, .owner = (char *)"u"};
	int64_t id, tid;
	assert_int_equal(store_experiment_create(s, &ne2, &id, &err), 0);
	assert_int_equal(store_trial_insert(s, id, 0, "{}", 1e9, &tid, &err), 0);
	{
		int64_t gid;
		assert_int_equal(store_segment_insert(s, tid, 0, 0, 1, 64, &gid, &err), 0);
		store_placement pl = {.device = "host", .mem_reserved_mib = 64, .compute_share = 1,
				      .basis = "probe"};
		assert_int_equal(store_segment_place(s, gid, &pl, 1e9, &err), 0);
		store_segment_end end = {.status = SEG_OVER_RESERVATION, .exit_code = -1,
					 .peak_mem_mib = 80, .ended_at = 1e9 + 1,
					 .message = "over its memory reservation"};
		if (store_segment_finish(s, gid, &end, &err) < 0)
			fail_msg("schema %d migrated: an over_reservation segment: %s", v, err.msg);
		store_segment g;
		assert_int_equal(store_segment_get(s, gid, &g, &err), 0);
		assert_int_equal(g.status, SEG_OVER_RESERVATION);
		store_segment_fini(&g);
	}
	assert_int_equal(store_experiment_set_status(s, id, EXP_DONE, 1e9 + 1, &err), 0);
	assert_int_equal(store_experiment_delete(s, id, &err), 0);
	store_close(s);
	store_experiments_free(ev, ne);
	assert_int_equal(q1(path, "SELECT count(*) FROM trials"), n_trials);
	unlink(path);
	printf("schema %d: opened, migrated to %d, read and written\n", v, STORE_SCHEMA_VERSION);
	return 1;
}

/* Every fixture there is: every schema before the current one must have
 * one (a version bump needs the old version's fixture, which
 * scripts/mkfixtures.sh made while it was current); the current one's is
 * opened as it is. */
static void test_every_version(void **state)
{
	(void)state;
	int n = 0;
	for (int v = 1; v <= STORE_SCHEMA_VERSION; v++) {
		int had = one_version(v);
		if (!had && v < STORE_SCHEMA_VERSION)
			fail_msg("the fixture of schema %d is missing (scripts/mkfixtures.sh %d)", v, v);
		n += had;
	}
	assert_true(n >= STORE_SCHEMA_VERSION - 1 && n >= 10);
}

static unsigned long long file_sum(const char *path)
{
	unsigned long long h = 1469598103934665603ull;
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	int c;
	while ((c = fgetc(f)) != EOF)
		h = (h ^ (unsigned char)c) * 1099511628211ull;
	fclose(f);
	return h;
}

/* A database from a newer relish (the newest fixture, its user_version
 * one past ours): refused by every kind of open, with a message that
 * says so, and not changed by a byte (no migration, no journal mode, no
 * driver row). */
static void test_newer_refused(void **state)
{
	(void)state;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/newer.db", dir);
	int v = STORE_SCHEMA_VERSION;
	while (v > 0 && !load(v, path))
		v--;
	assert_true(v > 0);
	sqlite3 *h;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION + 1);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	unsigned long long before = file_sum(path);
	char want[128];
	snprintf(want, sizeof want, "schema version %d was written by a newer relish",
		 STORE_SCHEMA_VERSION + 1);
	const unsigned flags[] = {STORE_MUST_EXIST, STORE_READONLY, STORE_MUST_EXIST | STORE_DRIVER};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		store *s = NULL;
		rl_err err;
		rl_err_clear(&err);
		assert_int_equal(store_open(path, flags[i], &s, &err), RL_ESTORE);
		assert_null(s);
		if (!strstr(err.msg, want))
			fail_msg("open %#x: \"%s\" does not say \"%s\"", flags[i], err.msg, want);
		if (file_sum(path) != before)
			fail_msg("open %#x changed the file", flags[i]);
	}
	assert_int_equal(file_sum(path), before);
	assert_int_equal(q1(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION + 1);
	char side[PATH_MAX + 40];
	snprintf(side, sizeof side, "%s-wal", path);
	assert_int_not_equal(access(side, F_OK), 0);
	unlink(path);
	printf("schema %d (the fixture of %d, marked newer): refused, unchanged\n",
	       STORE_SCHEMA_VERSION + 1, v);
}

int main(void)
{
	if (!getenv("RELISH_SRC")) {
		fprintf(stderr, "test_store_fixtures: RELISH_SRC is not set\n");
		return 1;
	}
	snprintf(dir, sizeof dir, "/tmp/relish-fixtures-test-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_version),
		cmocka_unit_test(test_newer_refused),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = rc ? rc : 1;
	return rc;
}
