/*
 * test_store_faults.c - what the store does so that faults lose nothing and
 * two relish processes never fight over one database (issue 14):
 *   - a metric is stored once per trial, name and resource: a re-run
 *     supersedes an interrupted segment's value, a completed segment's
 *     value is final, values taken back from a log never replace one
 *     stored; migration 3 resolves the duplicates older databases hold;
 *   - the driver lock: a second driver is refused naming the holder,
 *     readers are not, the lock goes with the store and is not inherited
 *     across exec; the generation check notices a driver that got past
 *     the lock;
 *   - read-only opens write nothing;
 *   - an error a trial recovered from is not its last error.
 * Every test works on a real SQLite file in a fresh temporary folder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"

struct fixture {
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/relish-storef-XXXXXX");
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

static store *open_ok(const char *path, unsigned flags)
{
	store *s = NULL;
	rl_err e;
	rl_err_clear(&e);
	if (store_open(path, flags, &s, &e) < 0)
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

static long long raw_int(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
	sqlite3_close(db);
}

/* An experiment with one trial; *tid gets the trial's id. */
static void one_trial(store *s, int64_t *tid)
{
	store_experiment e = {.name = (char *)"x", .spec_text = (char *)"name: x\n",
			      .created_at = 1000.0, .objective_metric = (char *)"acc",
			      .mode = (char *)"max"};
	int64_t ex = 0;
	OK(store_experiment_create(s, &e, &ex, err));
	OK(store_trial_insert(s, ex, 0, "{}", 1000.0, tid, err));
}

static int64_t running_segment(store *s, int64_t tid, int seq, double from, double to)
{
	int64_t id = 0;
	OK(store_segment_insert(s, tid, seq, from, to, -1, &id, err));
	store_placement pl = {.device = "host", .mem_reserved_mib = 64, .compute_share = 1,
			      .basis = "hint"};
	OK(store_segment_place(s, id, &pl, 1001.0, err));
	return id;
}

static void finish(store *s, int64_t seg, seg_status st)
{
	store_segment_end e = {.status = st, .exit_code = -1, .peak_mem_mib = -1,
			       .ended_at = 1002.0};
	OK(store_segment_finish(s, seg, &e, err));
}

static void report(store *s, int64_t tid, int64_t seg, double res, double v)
{
	store_metric m = {.trial_id = tid, .segment_id = seg, .resource = res,
			  .name = (char *)"acc", .value = v, .at = 1001.0};
	OK(store_metrics_insert(s, &m, 1, err));
}

/* The stored (resource, value, segment) list of trial tid, as text. */
static void curve(store *s, int64_t tid, char *buf, size_t n)
{
	store_metric *v;
	size_t nv;
	OK(store_metric_list(s, 1, tid, &v, &nv, err));
	buf[0] = '\0';
	for (size_t i = 0; i < nv; i++)
		snprintf(buf + strlen(buf), n - strlen(buf), "%g=%g/s%lld ", v[i].resource,
			 v[i].value, (long long)v[i].segment_id);
	store_metrics_free(v, nv);
}

static void test_metric_once_rules(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t t;
	one_trial(s, &t);
	/* Segment 0 [0, 2] completes; segment 1 [2, 6] reports 3 and 4 and is
	 * lost; its re-run, segment 2, reports 3 again (retrained from the
	 * boundary) and 5, and re-reports the boundary 2 as well. */
	int64_t s0 = running_segment(s, t, 0, 0, 2);
	report(s, t, s0, 1, 0.1);
	report(s, t, s0, 2, 0.2);
	finish(s, s0, SEG_COMPLETED);
	int64_t s1 = running_segment(s, t, 1, 2, 6);
	report(s, t, s1, 3, 0.3);
	report(s, t, s1, 4, 0.4);
	finish(s, s1, SEG_LOST);
	int64_t s2 = running_segment(s, t, 2, 2, 6);
	report(s, t, s2, 3, 0.33);
	report(s, t, s2, 2, 0.22);
	report(s, t, s2, 5, 0.55);
	char buf[512], want[512];
	curve(s, t, buf, sizeof buf);
	/* 2 is final (completed), 3 superseded by the re-run, 4 only
	 * reported by the lost run (kept: nothing reported is lost), 5 new;
	 * ids keep the order in which resources were first reached. */
	snprintf(want, sizeof want, "1=0.1/s%lld 2=0.2/s%lld 3=0.33/s%lld 4=0.4/s%lld 5=0.55/s%lld ",
		 (long long)s0, (long long)s0, (long long)s2, (long long)s1, (long long)s2);
	assert_string_equal(buf, want);
	/* Values from a log only fill gaps. */
	store_metric back[2] = {
		{.trial_id = t, .segment_id = s1, .resource = 4, .name = (char *)"acc",
		 .value = 9, .at = 1},
		{.trial_id = t, .segment_id = s1, .resource = 6, .name = (char *)"acc",
		 .value = 0.6, .at = 1},
	};
	size_t added = 99;
	OK(store_metrics_insert_missing(s, back, 2, &added, err));
	assert_int_equal(added, 1);
	curve(s, t, buf, sizeof buf);
	assert_non_null(strstr(buf, "4=0.4/"));
	assert_non_null(strstr(buf, "6=0.6/"));
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM (SELECT 1 FROM metrics GROUP BY "
				 "trial_id, name, resource HAVING count(*) > 1)"), 0);
	store_close(s);
}

static void test_migration_resolves_duplicates(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t t;
	one_trial(s, &t);
	int64_t s0 = running_segment(s, t, 0, 0, 2);
	finish(s, s0, SEG_CANCELLED);
	int64_t s1 = running_segment(s, t, 1, 0, 2);
	finish(s, s1, SEG_COMPLETED);
	int64_t s2 = running_segment(s, t, 2, 2, 4);
	finish(s, s2, SEG_LOST);
	int64_t s3 = running_segment(s, t, 3, 2, 4);
	store_close(s);
	/* Back to what version 2 allowed: the same resource stored by a
	 * cancelled segment and its completed re-run, and by a lost segment
	 * and its running re-run (and without version 4's owner columns). */
	char sql[1024];
	snprintf(sql, sizeof sql,
		 "DROP INDEX metrics_once; DROP TABLE drivers; DROP INDEX experiments_owner_name;"
		 "ALTER TABLE experiments DROP COLUMN owner_uid;"
		 "ALTER TABLE experiments DROP COLUMN owner;"
		 "ALTER TABLE experiments DROP COLUMN submission;"
		 "ALTER TABLE segments RENAME COLUMN handle TO container; PRAGMA user_version = 2;"
		 "INSERT INTO metrics(trial_id, segment_id, resource, name, value, at) VALUES"
		 " (%1$lld, %2$lld, 1, 'acc', 0.1, 1), (%1$lld, %2$lld, 2, 'acc', 0.2, 1),"
		 " (%1$lld, %3$lld, 1, 'acc', 0.11, 2), (%1$lld, %3$lld, 2, 'acc', 0.22, 2),"
		 " (%1$lld, %4$lld, 3, 'acc', 0.3, 3), (%1$lld, %5$lld, 3, 'acc', 0.33, 4),"
		 " (%1$lld, %5$lld, 3, 'loss', 0.7, 4);",
		 (long long)t, (long long)s0, (long long)s1, (long long)s2, (long long)s3);
	raw_exec(f->path, sql);
	s = open_ok(f->path, 0);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	char buf[512], want[512];
	curve(s, t, buf, sizeof buf);
	snprintf(want, sizeof want, "1=0.11/s%lld 2=0.22/s%lld 3=0.33/s%lld 3=0.7/s%lld ",
		 (long long)s1, (long long)s1, (long long)s3, (long long)s3);
	assert_string_equal(buf, want);
	store_close(s);
}

static void test_recovered_error_is_history(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t t;
	one_trial(s, &t);
	int64_t s0 = running_segment(s, t, 0, 0, 2);
	store_segment_end lost = {.status = SEG_LOST, .exit_code = -1, .peak_mem_mib = -1,
				  .ended_at = 1002.0,
				  .message = "relish restarted; its process was gone"};
	OK(store_segment_finish(s, s0, &lost, err));
	store_trial tr;
	/* While the re-run runs, the loss is the last thing that went wrong. */
	int64_t s1 = running_segment(s, t, 1, 0, 2);
	OK(store_trial_get(s, t, &tr, err));
	assert_string_equal(tr.last_error, "relish restarted; its process was gone");
	store_trial_fini(&tr);
	/* Once a later segment completed, it is history. */
	finish(s, s1, SEG_COMPLETED);
	OK(store_trial_set_status(s, t, TRIAL_COMPLETED, NULL, 1003.0, err));
	OK(store_trial_get(s, t, &tr, err));
	assert_null(tr.last_error);
	assert_null(tr.error);
	store_trial_fini(&tr);
	/* A failure after the last completed segment is shown again. */
	int64_t s2 = running_segment(s, t, 2, 2, 4);
	store_segment_end bad = {.status = SEG_FAILED, .exit_code = 1, .peak_mem_mib = -1,
				 .ended_at = 1004.0, .message = "exit code 1"};
	OK(store_segment_finish(s, s2, &bad, err));
	OK(store_trial_get(s, t, &tr, err));
	assert_string_equal(tr.last_error, "exit code 1");
	store_trial_fini(&tr);
	store_close(s);
}

/* 1 when this process has a descriptor open on path. */
static int have_fd_on(const char *path)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	int found = 0;
	char p[300], target[4096];
	while (dir && (e = readdir(dir))) {
		snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(p, target, sizeof target - 1);
		if (n > 0) {
			target[n] = '\0';
			if (!strcmp(target, path)) {
				int fd = atoi(e->d_name);
				found = fcntl(fd, F_GETFD) & FD_CLOEXEC ? 2 : 1;
			}
		}
	}
	if (dir)
		closedir(dir);
	return found;
}

static void test_driver_lock(void **state)
{
	struct fixture *f = *state;
	store *a = open_ok(f->path, STORE_DRIVER);
	assert_true(store_driver_id(a) > 0);
	char lock[128];
	snprintf(lock, sizeof lock, "%s-lock", f->path);
	/* Held on a descriptor no trial inherits. */
	assert_int_equal(have_fd_on(lock), 2);

	/* A second driver is refused, naming the database and the holder. */
	store *b = NULL;
	rl_err e;
	assert_int_equal(store_open(f->path, STORE_DRIVER, &b, &e), RL_EINUSE);
	assert_null(b);
	assert_int_equal(rl_err_exit_code(RL_EINUSE), 5);
	char pid[32];
	snprintf(pid, sizeof pid, "(pid %d, since ", (int)getpid());
	assert_non_null(strstr(e.msg, f->path));
	assert_non_null(strstr(e.msg, pid));
	assert_non_null(strstr(e.msg, "in use by another relish"));
	/* The refused driver registered nothing. */
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM drivers"), 1);

	/* Readers and plain writers are not drivers: not refused. */
	store *r = open_ok(f->path, STORE_READONLY);
	store_close(r);
	OK(store_driver_check(a, err));

	/* The lock goes with the store. */
	store_close(a);
	b = open_ok(f->path, STORE_DRIVER);
	assert_int_equal(store_driver_id(b), 2);
	store_close(b);
	assert_int_equal(have_fd_on(lock), 0);
}

static void test_takeover_noticed(void **state)
{
	struct fixture *f = *state;
	store *a = open_ok(f->path, STORE_DRIVER);
	OK(store_driver_check(a, err));
	/* The lock bypassed: its file removed by hand while a holds it. */
	char lock[128];
	snprintf(lock, sizeof lock, "%s-lock", f->path);
	assert_int_equal(unlink(lock), 0);
	store *b = open_ok(f->path, STORE_DRIVER);
	rl_err e;
	assert_int_equal(store_driver_check(a, &e), RL_EINUSE);
	char pid[40];
	snprintf(pid, sizeof pid, "another relish (pid %d, since ", (int)getpid());
	assert_non_null(strstr(e.msg, pid));
	assert_non_null(strstr(e.msg, "took over"));
	OK(store_driver_check(b, err));
	/* And a cannot write anything more: checked under the write lock. */
	store_experiment x = {.name = (char *)"late", .created_at = 1, .objective_metric =
			      (char *)"acc", .mode = (char *)"max"};
	assert_int_equal(store_experiment_create(a, &x, NULL, &e), RL_EINUSE);
	assert_int_equal(store_begin(a, &e), RL_EINUSE);
	assert_int_equal(raw_int(f->path, "SELECT count(*) FROM experiments"), 0);
	OK(store_experiment_create(b, &x, NULL, err));
	store_close(a);
	store_close(b);
}

static void test_readonly_writes_nothing(void **state)
{
	struct fixture *f = *state;
	store *s = open_ok(f->path, 0);
	int64_t t;
	one_trial(s, &t);
	store_close(s);
	struct stat before, after;
	assert_int_equal(stat(f->path, &before), 0);
	s = open_ok(f->path, STORE_READONLY);
	assert_int_equal(store_schema_version(s), STORE_SCHEMA_VERSION);
	store_trial tr;
	OK(store_trial_get(s, t, &tr, err));
	store_trial_fini(&tr);
	rl_err e;
	assert_int_equal(store_trial_set_status(s, t, TRIAL_FAILED, "x", 1, &e), RL_ESTORE);
	assert_non_null(strstr(e.msg, "readonly"));
	store_close(s);
	assert_int_equal(stat(f->path, &after), 0);
	assert_int_equal(before.st_size, after.st_size);
	assert_int_equal(before.st_mtime, after.st_mtime);
	/* No lock file either: readers never take the driver lock. */
	char lock[128];
	snprintf(lock, sizeof lock, "%s-lock", f->path);
	assert_int_not_equal(stat(lock, &after), 0);
	/* A missing file stays missing. */
	char other[128];
	snprintf(other, sizeof other, "%s/none.db", f->dir);
	assert_int_equal(store_open(other, STORE_READONLY, &s, &e), RL_ENOTFOUND);
	assert_int_not_equal(stat(other, &after), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_metric_once_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migration_resolves_duplicates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_recovered_error_is_history, setup, teardown),
		cmocka_unit_test_setup_teardown(test_driver_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_takeover_noticed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_writes_nothing, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
