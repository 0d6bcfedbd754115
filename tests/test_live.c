/*
 * test_live.c - the live driver (src/live) through scripted segment ends:
 * the real driver, store, engine and core, with a stand-in executor
 * backend (tests/live_stand.h) in place of processes, given as the table of
 * backends (live_options.backends).  Each test writes a spec, scripts what every
 * launch does, runs the loop to its end and checks the driver's decisions
 * in the store (a real SQLite file) and in what it launched:
 *   - a run to completion; retries then failure; out of memory re-placed
 *     with more memory, its progress line naming reservation and peak once;
 *   - a store write that fails stops the run (no hang) and writes nothing
 *     more; the next run takes the line back from the log;
 *   - another driver taking the database over stops this one;
 *   - signals: the first cancels, the second gives SIGINT/SIGTERM their
 *     default action back;
 *   - one clock per loop turn: the rows one event writes share its time;
 *   - resuming after a kill that left a trial made but never launched
 *     before one that ran: each trial gets its own segments back (the
 *     later one goes on at its next seq);
 *   - live_options.before_launch runs before every launch, also between
 *     two launches of one turn (relish serve answers its queued requests
 *     there), and may add an experiment while the loop places;
 *   - after a crash that left segments running (the stand-in's world keeps
 *     them, as a kill -9 leaves containers and Slurm jobs): the next driver
 *     adopts the one whose unit still runs (its lines come again, none is
 *     stored twice), loses the one whose unit is gone and re-runs it, and
 *     stops a stray unit no segment claims before its loop starts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "live/driver.h"
#include "live_stand.h"
#include "spec/spec.h"
#include "store/store.h"

struct fx {
	char dir[64];
	char db[128];
	char devices[128];
	char out[128];             /* progress lines */
	FILE *outf;
	stand_box box;
	/* what the scripts and hooks share */
	int mode;
	int hook_state;
	sqlite3 *locker;           /* a second connection holding the write lock */
	double wall;               /* the injected wall clock */
	int wall_calls;
	live *d;                   /* the driver, for hooks */
	int hook_calls;            /* before_launch */
	int hook_at[STAND_MAX_LAUNCHES]; /* hook_calls when launch k came */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/relish-live-XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof f->db, "%s/state.db", f->dir);
	snprintf(f->devices, sizeof f->devices, "%s/devices.yaml", f->dir);
	snprintf(f->out, sizeof f->out, "%s/progress.txt", f->dir);
	FILE *d = fopen(f->devices, "w");
	fputs("host:\n  memory: 1GiB\n  cpus: 2\n", d);
	fclose(d);
	f->box.ctx = f;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->locker)
		sqlite3_close(f->locker);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
	int rc = system(cmd);
	free(f);
	return rc == 0 ? 0 : -1;
}

static const char *spec_text(char *buf, size_t n, const char *name, int trials, int retries,
			     int max_epochs)
{
	snprintf(buf, n,
		 "name: %s\n"
		 "objective: {metric: accuracy, mode: max}\n"
		 "search: {algorithm: random, seed: 7, max_trials: %d, max_concurrent: 2,\n"
		 "         space: {x: {type: uniform, low: 0.0, high: 1.0}}}\n"
		 "schedule: {algorithm: none, resource: epoch, max: %d}\n"
		 "trial:\n"
		 "  command: [\"/bin/true\", \"{x}\"]\n"
		 "  retries: %d\n"
		 "  resources: {memory: 64MiB, cpus: 0.5}\n"
		 "sharing: {policy: pack}\n",
		 name, trials, max_epochs, retries);
	return buf;
}

static double fake_wall(void *ctx)
{
	struct fx *f = ctx;
	f->wall_calls++;
	return f->wall;
}

/* A driver on f's database with the stand-in executor and plan. */
static live *driver(struct fx *f, stand_plan_fn plan, const char *name, int trials, int retries,
		    int max_epochs, int use_wall)
{
	live_options o;
	live_options_default(&o);
	o.db_path = f->db;
	o.devices_path = f->devices;
	o.progress = 0;
	f->outf = fopen(f->out, "a");
	o.out = f->outf;
	f->box.plan = plan;
	stand_options(&o, &f->box);
	if (use_wall) {
		o.wall_clock = fake_wall;
		o.wall_clock_ctx = f;
	}
	live *d = NULL;
	rl_err e;
	rl_err_clear(&e);
	if (live_new(&o, &d, &e) < 0)
		fail_msg("live_new: %s", e.msg);
	char text[1024];
	spec_text(text, sizeof text, name, trials, retries, max_epochs);
	spec *sp = NULL;
	if (spec_parse_text(text, strlen(text), name, 0, &sp, &e) < 0)
		fail_msg("spec: %s", e.msg);
	if (live_add_experiment(d, sp, &e) < 0)
		fail_msg("live_add_experiment: %s", e.msg);
	return d;
}

static void driver_free(struct fx *f, live *d)
{
	live_free(d);
	fclose(f->outf);
	f->outf = NULL;
}

static long long q_int(struct fx *f, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open_v2(f->db, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	long long v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static void exec_sql(struct fx *f, const char *sql)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : "?");
	sqlite3_close(db);
}

static void read_file(const char *path, char *buf, size_t n)
{
	FILE *fp = fopen(path, "r");
	size_t k = fp ? fread(buf, 1, n - 1, fp) : 0;
	buf[k] = '\0';
	if (fp)
		fclose(fp);
}

/* ---- plans ---------------------------------------------------------------- */

static void plan_ok(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k;
	p->delay_ms = 2;
	stand_epochs(p, es->a.from, es->a.to, 0.5);
}

/* A trial whose checkpoint is past the segment's start: the last line only. */
static void plan_last_only(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k;
	p->delay_ms = 2;
	stand_epochs(p, es->a.to - 1, es->a.to, 0.5);
}

static void plan_fail(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k, (void)es;
	p->delay_ms = 2;
	stand_end_as(p, SEG_OUT_FAILED, 1, 10, "exit code 1");
}

/* The first launch runs out of memory at a 200 MiB peak, the rest work. */
static void plan_oom_once(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st;
	p->delay_ms = 2;
	if (k == 0) {
		stand_end_as(p, SEG_OUT_OOM, -1, 200, "over its memory reservation (peak 200 MiB)");
		p->end.exited = 0;
		p->end.term_signal = SIGKILL;
		return;
	}
	stand_epochs(p, es->a.from, es->a.to, 0.5);
}

/* The first launch is stopped by relish over its reservation (its
 * executor's own limit, exec_result.over_reservation), the rest work. */
static void plan_over_once(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	plan_oom_once(st, k, es, p);
	if (k == 0)
		p->end.over_reservation = 1;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_run_to_completion(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_ok, "ok", 3, 0, 2, 0);
	rl_err e;
	assert_int_equal(live_run(d, &e), 0);
	assert_int_equal(live_experiment_has_value(d, 0), 1);
	stand *st = f->box.st;
	assert_int_equal(st->n_launches, 3);
	assert_int_equal(st->n_running, 0);
	assert_string_equal(st->launches[0].argv0, "/bin/true");
	assert_float_equal(st->launches[0].to, 2, 0);
	driver_free(f, d);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics WHERE name = 'accuracy'"), 6);
	assert_int_equal(q_int(f, "SELECT count(*) FROM experiments WHERE status = 'done'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM drivers"), 1);
}

static void test_retries_then_failed(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_fail, "bad", 2, 1, 2, 0);
	rl_err e;
	assert_int_equal(live_run(d, &e), 0);
	assert_int_equal(live_experiment_has_value(d, 0), 0);
	/* One retry each: two launches per trial. */
	assert_int_equal(f->box.st->n_launches, 4);
	driver_free(f, d);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'failed' AND "
			      "error = 'exit code 1'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'failed'"), 4);
}

static void test_oom_replaced_larger(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_oom_once, "oom", 1, 0, 2, 0);
	rl_err e;
	assert_int_equal(live_run(d, &e), 0);
	stand *st = f->box.st;
	assert_int_equal(st->n_launches, 2);
	assert_int_equal(st->launches[0].memory_limit_mib, 64);
	/* Re-placed above the peak it reached. */
	assert_true(st->launches[1].memory_limit_mib > 200);
	driver_free(f, d);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'oom'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 1);
	/* The progress line names the reservation and the peak once. */
	char text[8192];
	read_file(f->out, text, sizeof text);
	const char *line = strstr(text, " oom on ");
	assert_non_null(line);
	const char *eol = strchr(line, '\n');
	int n = 0;
	for (const char *p = strstr(line, "(reserved "); p && p < eol; p = strstr(p + 1, "(reserved "))
		n++;
	if (n != 1)
		fail_msg("oom line names the reservation %d times: %.*s", n, (int)(eol - line), line);
}

/* Over its reservation: re-placed larger as an out-of-memory is, but
 * stored (and said) as over_reservation, not oom (issue 30, item 8). */
static void test_over_reservation_stored(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_over_once, "oom", 1, 0, 2, 0);
	rl_err e;
	assert_int_equal(live_run(d, &e), 0);
	stand *st = f->box.st;
	assert_int_equal(st->n_launches, 2);
	assert_true(st->launches[1].memory_limit_mib > 200);
	driver_free(f, d);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'over_reservation'"),
			 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'oom'"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM events WHERE kind = "
				  "'segment.over_reservation'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 1);
}

/* A second connection takes the write lock at the segment's second line:
 * the driver's next insert waits the busy timeout (5 s), then fails. */
static void plan_lock_midway(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k;
	p->delay_ms = 20;
	stand_epochs(p, es->a.from, es->a.to, 0.5); /* 3 lines, 20 ms apart */
}

static void on_lock_timer(uv_timer_t *t)
{
	struct fx *f = t->data;
	if (f->hook_state == 0 && q_int(f, "SELECT count(*) FROM metrics WHERE name = 'accuracy'") >= 1) {
		assert_int_equal(sqlite3_open(f->db, &f->locker), SQLITE_OK);
		assert_int_equal(sqlite3_exec(f->locker, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
		f->hook_state = 1;
		uv_close((uv_handle_t *)t, NULL);
	}
}

static void test_store_failure_stops(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_lock_midway, "lock", 1, 0, 3, 0);
	uv_timer_t *t = calloc(1, sizeof *t);
	uv_timer_init(f->box.st->loop, t);
	t->data = f;
	uv_timer_start(t, on_lock_timer, 1, 1);
	rl_err e;
	rl_err_clear(&e);
	int rc = live_run(d, &e);
	assert_int_equal(rc, RL_ESTORE);
	assert_non_null(strstr(e.msg, "locked"));
	stand *st = f->box.st;
	assert_int_equal(st->n_running, 0);
	assert_true(st->n_cancels >= 1);
	driver_free(f, d);
	free(t);
	sqlite3_exec(f->locker, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(f->locker);
	f->locker = NULL;
	/* Nothing was written after the failure: the segment is running. */
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'running'"), 1);
	long long stored = q_int(f, "SELECT count(*) FROM metrics WHERE name = 'accuracy'");
	assert_true(stored >= 1 && stored < 3);
	/* The next run re-runs it and takes back the line the store missed
	 * from the segment's log; the re-run, resuming from a checkpoint past
	 * those epochs, prints only the last one. */
	d = driver(f, plan_last_only, "lock", 1, 0, 3, 0);
	assert_int_equal(live_run(d, &e), 0);
	driver_free(f, d);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'lost' AND "
			      "message LIKE '%taken back from its log%'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics m JOIN segments g ON g.id = "
			      "m.segment_id WHERE g.status = 'lost' AND m.name = 'accuracy'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics WHERE name = 'accuracy'"), 3);
}

static void plan_slow(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k, (void)es;
	p->delay_ms = 50;
	p->hang = 1;
}

/* Another driver opens the database (the lock bypassed) while this one runs. */
static void on_takeover_timer(uv_timer_t *t)
{
	struct fx *f = t->data;
	if (f->box.st->n_running == 0)
		return;
	char lock[160];
	snprintf(lock, sizeof lock, "%s-lock", f->db);
	unlink(lock);
	store *other = NULL;
	rl_err e;
	assert_int_equal(store_open(f->db, STORE_DRIVER, &other, &e), 0);
	store_close(other);
	uv_close((uv_handle_t *)t, NULL);
}

static void test_taken_over_stops(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_slow, "over", 2, 0, 3, 0);
	uv_timer_t *t = calloc(1, sizeof *t);
	uv_timer_init(f->box.st->loop, t);
	t->data = f;
	uv_timer_start(t, on_takeover_timer, 30, 30);
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(live_run(d, &e), RL_EINUSE);
	assert_non_null(strstr(e.msg, "took over"));
	assert_int_equal(f->box.st->n_running, 0);
	driver_free(f, d);
	free(t);
	/* It wrote nothing after: its segments are still running there. */
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'running'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM drivers"), 2);
}

static void plan_stubborn(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k, (void)es;
	p->delay_ms = 10;
	p->hang = 1;
	p->ignore_cancel = 1; /* ignores SIGTERM */
}

static int default_action(int sig)
{
	struct sigaction sa;
	sigaction(sig, NULL, &sa);
	return sa.sa_handler == SIG_DFL;
}

static void on_signal_timer(uv_timer_t *t)
{
	struct fx *f = t->data;
	stand *st = f->box.st;
	if (st->n_running == 0 && f->hook_state == 0)
		return;
	switch (f->hook_state++) {
	case 0:
		raise(SIGINT);
		break;
	case 1:
		/* Cancelled, and (ignoring it) still running. */
		assert_int_equal(st->n_cancels, st->n_running);
		assert_false(default_action(SIGINT));
		raise(SIGINT);
		break;
	default:
		/* The second signal gave both their default action back. */
		assert_true(default_action(SIGINT));
		assert_true(default_action(SIGTERM));
		/* Now the stubborn segments die (SIGKILL, as relish sends to a
		 * real process group). */
		for (struct exec_segment *g = st->segs; g; g = g->next)
			g->plan.ignore_cancel = 0, uv_timer_start(&g->timer, stand_tick, 0, 0);
		uv_close((uv_handle_t *)t, NULL);
	}
}

static void test_signals(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_stubborn, "sig", 2, 0, 3, 0);
	uv_timer_t *t = calloc(1, sizeof *t);
	uv_timer_init(f->box.st->loop, t);
	t->data = f;
	uv_timer_start(t, on_signal_timer, 50, 100);
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(live_run(d, &e), RL_EINTERRUPTED);
	assert_int_equal(f->hook_state, 3);
	driver_free(f, d);
	free(t);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'cancelled'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM experiments WHERE status = 'cancelled'"), 1);
}

/* The wall clock moves on every reading, and jumps an hour back halfway. */
static void plan_ok_clock(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	struct fx *f = st->ctx;
	if (k == 1)
		f->wall -= 3600;
	plan_ok(st, k, es, p);
}

static double fake_wall_moving(void *ctx)
{
	struct fx *f = ctx;
	f->wall_calls++;
	f->wall += 0.001;
	return f->wall;
}

static void test_one_clock_per_turn(void **state)
{
	struct fx *f = *state;
	f->wall = 1.7e9;
	live_options o;
	live_options_default(&o);
	o.db_path = f->db;
	o.devices_path = f->devices;
	o.quiet = 1;
	f->box.plan = plan_ok_clock;
	stand_options(&o, &f->box);
	o.wall_clock = fake_wall_moving;
	o.wall_clock_ctx = f;
	live *d = NULL;
	rl_err e;
	assert_int_equal(live_new(&o, &d, &e), 0);
	char text[1024];
	spec_text(text, sizeof text, "clock", 3, 0, 2);
	spec *sp = NULL;
	assert_int_equal(spec_parse_text(text, strlen(text), "clock", 0, &sp, &e), 0);
	assert_int_equal(live_add_experiment(d, sp, &e), 0);
	assert_int_equal(live_run(d, &e), 0);
	live_free(d);
	/* The wall clock is read once per loop time, not once per row. */
	assert_true(f->wall_calls > 0);
	/* One event, one time: a trial made and placed in one turn was
	 * created when its first segment started; the experiment finished
	 * when its last segment ended; a segment's end and its trial's
	 * update are one. */
	assert_true(q_int(f, "SELECT count(*) FROM trials t JOIN segments g ON g.trial_id = t.id"
			  " AND g.seq = 0 WHERE g.started_at = t.created_at") >= 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM experiments WHERE finished_at = "
			      "(SELECT max(ended_at) FROM segments)"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments g JOIN trials t ON t.id = g.trial_id"
			      " WHERE g.status = 'completed' AND g.ended_at != t.updated_at"), 0);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments g JOIN trials t ON t.id = g.trial_id"
			      " WHERE g.status = 'completed'"), 3);
	/* Stored times follow the wall clock, jump included (they are the
	 * wall's to tell); the run was not disturbed by it. */
	assert_true(q_int(f, "SELECT min(ended_at) < 1.7e9 - 3000 FROM segments"));
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 3);
}

/* What a kill -9 can leave: trial 1 made (pending) but never launched,
 * trial 2's segment running.  The resume must give trial 2 its own
 * segment back (so its re-run is seq 1), not lose it behind trial 1's
 * missing ones: the re-run's insert would then fail on seq 0. */
static void test_resume_trial_without_segments(void **state)
{
	struct fx *f = *state;
	live *d = driver(f, plan_ok, "gap", 3, 0, 2, 0);
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(live_run(d, &e), 0);
	driver_free(f, d);
	exec_sql(f, "UPDATE experiments SET status = 'running', finished_at = NULL;"
		    "DELETE FROM metrics WHERE trial_id = (SELECT id FROM trials WHERE idx = 1);"
		    "DELETE FROM segments WHERE trial_id = (SELECT id FROM trials WHERE idx = 1);"
		    "UPDATE trials SET status = 'pending', resource_done = 0, objective = NULL,"
		    " objective_resource = NULL WHERE idx = 1;"
		    "UPDATE segments SET status = 'running', ended_at = NULL, pid = NULL"
		    " WHERE trial_id = (SELECT id FROM trials WHERE idx = 2);"
		    "UPDATE trials SET status = 'running' WHERE idx = 2;");
	d = driver(f, plan_ok, "gap", 3, 0, 2, 0);
	rl_err_clear(&e);
	int rc = live_run(d, &e);
	driver_free(f, d);
	if (rc != 0)
		fail_msg("resumed run: %s", e.msg);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 3);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments g JOIN trials t ON t.id = g.trial_id"
			      " WHERE t.idx = 2 AND g.seq = 0 AND g.status = 'lost'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments g JOIN trials t ON t.id = g.trial_id"
			      " WHERE t.idx = 2 AND g.seq = 1 AND g.status = 'completed'"), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments g JOIN trials t ON t.id = g.trial_id"
			      " WHERE t.idx = 1 AND g.status = 'completed'"), 1);
}

/* ---- before_launch ------------------------------------------------------ */

static void plan_ok_hooked(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	struct fx *f = st->ctx;
	if (k < STAND_MAX_LAUNCHES)
		f->hook_at[k] = f->hook_calls;
	plan_ok(st, k, es, p);
}

/* The hook adds a second experiment at its third call, as a submission
 * answered there would. */
static void count_hook(void *ctx)
{
	struct fx *f = ctx;
	if (++f->hook_calls != 3)
		return;
	char text[1024];
	spec_text(text, sizeof text, "second", 2, 0, 1);
	spec *sp = NULL;
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(spec_parse_text(text, strlen(text), "second", 0, &sp, &e), 0);
	if (live_add_experiment(f->d, sp, &e) < 0)
		fail_msg("adding from before_launch: %s", e.msg);
}

static void test_before_launch(void **state)
{
	struct fx *f = *state;
	live_options o;
	live_options_default(&o);
	o.db_path = f->db;
	o.devices_path = f->devices;
	o.quiet = 1;
	f->box.plan = plan_ok_hooked;
	stand_options(&o, &f->box);
	o.before_launch = count_hook;
	o.before_launch_ctx = f;
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(live_new(&o, &f->d, &e), 0);
	char text[1024];
	spec_text(text, sizeof text, "first", 4, 0, 2);
	spec *sp = NULL;
	assert_int_equal(spec_parse_text(text, strlen(text), "first", 0, &sp, &e), 0);
	assert_int_equal(live_add_experiment(f->d, sp, &e), 0);
	if (live_run(f->d, &e) != 0)
		fail_msg("run: %s", e.msg);
	stand *st = f->box.st;
	size_t n_launches = st->n_launches; /* (the stand goes with the driver) */
	live_free(f->d);
	f->d = NULL;
	assert_int_equal(n_launches, 6);
	/* The first turn places two at once (2 CPUs, 0.5 each,
	 * max_concurrent 2): the hook ran before each, not once for both. */
	assert_true(f->hook_at[0] >= 1);
	for (size_t k = 1; k < n_launches; k++)
		if (f->hook_at[k] <= f->hook_at[k - 1])
			fail_msg("launch %zu came without the hook running after launch %zu "
				 "(calls %d, %d)", k, k - 1, f->hook_at[k - 1], f->hook_at[k]);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 6);
	assert_int_equal(q_int(f, "SELECT count(*) FROM experiments WHERE status = 'done'"), 2);
}

/* ---- adoption after a crash: the backend's life cycle --------------------- */

static void plan_three_slow(stand *st, size_t k, const exec_spec *es, stand_plan *p)
{
	(void)st, (void)k;
	p->delay_ms = 100;
	stand_epochs(p, es->a.from, es->a.to, 0.5);
}

/* Both segments run and have printed a line: relish dies (kill -9): its
 * loop stops, and the stand's world keeps what ran. */
static void on_crash_timer(uv_timer_t *t)
{
	struct fx *f = t->data;
	stand *st = f->box.st;
	if (st->n_running < 2 || q_int(f, "SELECT count(*) FROM metrics WHERE name = 'accuracy'") < 2)
		return;
	f->box.world->crash = 1;
	uv_stop(st->loop);
	uv_close((uv_handle_t *)t, NULL);
}

static void test_adopt_after_crash(void **state)
{
	struct fx *f = *state;
	stand_world *w = calloc(1, sizeof *w);
	f->box.world = w;
	live *d = driver(f, plan_three_slow, "adopt", 2, 0, 3, 0);
	uv_timer_t *t = calloc(1, sizeof *t);
	uv_timer_init(f->box.st->loop, t);
	t->data = f;
	uv_timer_start(t, on_crash_timer, 10, 10);
	rl_err e;
	rl_err_clear(&e);
	live_run(d, &e);
	driver_free(f, d);
	free(t);
	/* What the kill left: two segments running in the store, each with the
	 * handle of a unit that runs on. */
	assert_int_equal(w->n_units, 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'running' AND "
			      "handle LIKE 'unit-%'"), 2);
	/* One unit ended while no relish watched; a stray one belongs to no
	 * segment of this run. */
	w->crash = 0;
	w->units[1].running = 0;
	char gone[32];
	snprintf(gone, sizeof gone, "%s", w->units[1].handle);
	stand_unit *stray = &w->units[w->n_units++];
	memset(stray, 0, sizeof *stray);
	snprintf(stray->handle, sizeof stray->handle, "stray-1");
	snprintf(stray->experiment, sizeof stray->experiment, "adopt");
	snprintf(stray->trial, sizeof stray->trial, "t99");
	stray->running = 1;

	d = driver(f, plan_ok, "adopt", 2, 0, 3, 0);
	rl_err_clear(&e);
	int rc = live_run(d, &e);
	size_t launches = f->box.st->n_launches;
	driver_free(f, d);
	if (rc != 0)
		fail_msg("resumed run: %s", e.msg);
	/* The reconcile found the two running units; one was adopted, the
	 * stray one stopped before the loop began. */
	assert_int_equal(w->listed, 2);
	assert_int_equal(w->units[0].adopted, 1);
	assert_int_equal(w->units[1].adopted, 0);
	assert_int_equal(stray->swept, 1);
	assert_int_equal(stray->adopted, 0);
	/* Only the lost segment ran again. */
	assert_int_equal(launches, 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM events WHERE kind = 'segment.adopted' AND "
			      "message LIKE 'relish restarted; its stand-in unit unit-% was still "
			      "running and was adopted'"), 1);
	char sql[300];
	snprintf(sql, sizeof sql, "SELECT count(*) FROM segments WHERE status = 'lost' AND message "
		 "LIKE 'relish restarted; its stand-in unit %s was gone%%'", gone);
	assert_int_equal(q_int(f, sql), 1);
	assert_int_equal(q_int(f, "SELECT count(*) FROM segments WHERE status = 'completed'"), 2);
	assert_int_equal(q_int(f, "SELECT count(*) FROM trials WHERE status = 'completed'"), 2);
	/* The adopted segment's lines came again from its start: each epoch
	 * is stored once. */
	assert_int_equal(q_int(f, "SELECT count(*) FROM metrics m JOIN events e ON e.segment_id = "
			      "m.segment_id WHERE e.kind = 'segment.adopted' AND m.name = 'accuracy'"),
			 3);
	assert_int_equal(q_int(f, "SELECT count(DISTINCT m.resource) FROM metrics m JOIN events e "
			      "ON e.segment_id = m.segment_id WHERE e.kind = 'segment.adopted' AND "
			      "m.name = 'accuracy'"), 3);
	char text[16384];
	read_file(f->out, text, sizeof text);
	if (!strstr(text, "1 running in adopted stand-in units"))
		fail_msg("no resume line naming the adopted unit: %s", text);
	if (!strstr(text, "stopped 1 stand-in unit left by an earlier relish"))
		fail_msg("no line for the stray unit: %s", text);
	free(w);
	f->box.world = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_to_completion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retries_then_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oom_replaced_larger, setup, teardown),
		cmocka_unit_test_setup_teardown(test_over_reservation_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_store_failure_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_taken_over_stops, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_clock_per_turn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resume_trial_without_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_before_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt_after_crash, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
