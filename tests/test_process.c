/*
 * test_process.c - the process executor with real processes on a real libuv
 * loop: ctrial (examples/ctrial, from $RELISH_BUILD) and /bin/sh children
 * end completed, failed, signaled, timed out, cancelled, out of memory; exec
 * failure is an error, not a crash; garbage output is survived with a
 * bounded log; warm and worker processes serve two segments each; and no
 * process of a segment's group is left afterwards; reclaim kills only the
 * process a stored identity names.  Also procmem's parsers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/procid.h"
#include "process/confine.h"
#include "exec/exec.h"
#include "process/process.h"
#include "telemetry/procmem.h"

extern char **environ;

typedef struct fixture {
	uv_loop_t loop;
	uv_timer_t tick;   /* keeps uv_run(ONCE) from blocking for long */
	executor *ex;
	char dir[64];
	char ctrial[512];
	int skip;          /* the confinement under test is not available here */
} fixture;

typedef struct run {
	int ended;
	exec_result r;
	int n_metrics, n_done;
	double first_epoch, last_epoch;
	exec_segment *seg;
	pid_t pgid;
} run;

static void tick_cb(uv_timer_t *t)
{
	(void)t;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	uv_loop_init(&f->loop);
	uv_timer_init(&f->loop, &f->tick);
	uv_timer_start(&f->tick, tick_cb, 50, 50);
	exec_options o;
	exec_options_default(&o);
	o.kill_grace_s = 0.3;
	o.sample_interval_s = 0.05;
	o.log_max_bytes = 1 << 20;
	if (exec_process_new(&f->loop, &o, &f->ex, NULL) < 0)
		return -1;
	strcpy(f->dir, "/tmp/relish-test-process-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	const char *b = getenv("RELISH_BUILD");
	snprintf(f->ctrial, sizeof f->ctrial, "%s/ctrial", b ? b : ".");
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	exec_shutdown(f->ex);
	uv_timer_stop(&f->tick);
	uv_close((uv_handle_t *)&f->tick, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	exec_free(f->ex);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0); /* every handle closed */
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void on_line(void *ud, exec_segment *seg, const contract_line *l)
{
	run *r = ud;
	(void)seg;
	double e;
	if (l->kind == CONTRACT_METRICS) {
		r->n_metrics++;
		if (contract_metric_get(l, "epoch", &e)) {
			if (r->n_metrics == 1)
				r->first_epoch = e;
			r->last_epoch = e;
		}
	} else if (l->kind == CONTRACT_DONE) {
		r->n_done++;
	}
}

static void on_end(void *ud, exec_segment *seg, const exec_result *res)
{
	run *r = ud;
	(void)seg;
	r->ended = 1;
	r->r = *res;
}

static const exec_callbacks cbs = {.on_line = on_line, .on_end = on_end};

typedef struct launch_args {
	trial_mode mode;
	const char *key;
	const char *trial_id;
	const char *params;  /* JSON */
	double x, y;
	double from, to;
	double timeout_s;
	uint64_t mem_mib;
	const char *log;     /* file name inside the fixture dir */
} launch_args;

/* Launch argv as a segment; returns launch's code.  Checkpoints go to
 * dir/<trial_id>. */
static int launch(fixture *f, char **argv, const launch_args *a, run *r, rl_err *err)
{
	char ck[256], logp[256];
	snprintf(ck, sizeof ck, "%s/%s", f->dir, a->trial_id ? a->trial_id : "t0");
	mkdir(ck, 0755);
	snprintf(logp, sizeof logp, "%s/%s", f->dir, a->log ? a->log : "seg.log");
	rl_value vals[2] = {{.type = VAL_FLOAT, .f = a->x}, {.type = VAL_FLOAT, .f = a->y}};
	param_def ps[2] = {{.name = "x", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
			   {.name = "y", .kind = PARAM_UNIFORM, .low = -5, .high = 5}};
	space sp = {.n = 2, .params = ps};
	config cf = {.n = 2, .v = vals};
	contract_vars v = {.space = &sp, .config = &cf, .trial_id = a->trial_id ? a->trial_id : "t0",
			   .checkpoint_dir = ck, .from = a->from, .to = a->to, .mode = a->mode, .cpus = 1};
	char **env = NULL;
	assert_int_equal(contract_env_build(environ, NULL, 0, &v, NULL, 0, &env, NULL), 0);
	exec_spec es = {.mode = a->mode, .reuse_key = a->key, .argv = argv, .envp = env,
			.log_path = logp, .timeout_s = a->timeout_s, .cpus = 1,
			.memory_limit_mib = a->mem_mib,
			.a = {.trial_id = v.trial_id, .params_json = a->params, .from = a->from,
			      .to = a->to, .checkpoint_dir = ck}};
	memset(r, 0, sizeof *r);
	int rc = exec_launch(f->ex, &es, &cbs, r, &r->seg, err);
	contract_strv_free(env);
	if (rc == 0) {
		exec_ident id;
		assert_int_equal(exec_ident_of(f->ex, r->seg, &id), 0);
		r->pgid = id.pid;
		assert_true(id.pid > 0);
		assert_true(id.start_time > 0);
	}
	return rc;
}

static void wait_end(fixture *f, run *r, double max_s)
{
	uint64_t t0 = uv_hrtime();
	while (!r->ended) {
		uv_run(&f->loop, UV_RUN_ONCE);
		assert_true((double)(uv_hrtime() - t0) / 1e9 < max_s);
	}
}

/* Launch a segment and wait for its end, which must have this outcome. */
static void run_expect(fixture *f, char **argv, const launch_args *a, run *r, const char *outcome)
{
	assert_int_equal(launch(f, argv, a, r, NULL), 0);
	wait_end(f, r, 20);
	assert_string_equal(seg_outcome_name(r->r.outcome), outcome);
}

static void wait_s(fixture *f, double s)
{
	uint64_t t0 = uv_hrtime();
	while ((double)(uv_hrtime() - t0) / 1e9 < s)
		uv_run(&f->loop, UV_RUN_ONCE);
}

/* The group is gone (its killed members may need a moment to die). */
static void assert_group_gone(fixture *f, pid_t pgid)
{
	for (int i = 0; i < 100 && procmem_group_alive(pgid) > 0; i++)
		wait_s(f, 0.02);
	assert_int_equal(procmem_group_alive(pgid), 0);
}

static void test_completed_and_resume(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--sleep-ms", "1", NULL};
	launch_args a = {.trial_id = "t1", .x = 0.3, .y = 2, .from = 0, .to = 5};
	run r;
	run_expect(f, argv, &a, &r, "completed");
	assert_int_equal(r.r.exited, 1);
	assert_int_equal(r.r.exit_code, 0);
	assert_int_equal(r.n_metrics, 5);
	assert_int_equal(r.r.metric_lines, 5);
	assert_float_equal(r.first_epoch, 1, 0);
	assert_float_equal(r.last_epoch, 5, 0);
	assert_int_equal(r.r.reused, 0);
	assert_group_gone(f, r.pgid);

	/* The log has the metric lines; the checkpoint says epoch 5. */
	char path[256], buf[4096] = {0};
	snprintf(path, sizeof path, "%s/seg.log", f->dir);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	assert_true(fread(buf, 1, sizeof buf - 1, fp) > 0);
	fclose(fp);
	assert_non_null(strstr(buf, "RELISH epoch=5 accuracy="));
	snprintf(path, sizeof path, "%s/t1/state", f->dir);
	fp = fopen(path, "r");
	assert_non_null(fp);
	int e = 0;
	assert_int_equal(fscanf(fp, "epoch %d", &e), 1);
	fclose(fp);
	assert_int_equal(e, 5);

	/* Next segment resumes at epoch 6. */
	a.from = 5;
	a.to = 8;
	run_expect(f, argv, &a, &r, "completed");
	assert_int_equal(r.n_metrics, 3);
	assert_float_equal(r.first_epoch, 6, 0);
	assert_float_equal(r.last_epoch, 8, 0);
}

static void test_failed(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--fail-at", "3", NULL};
	launch_args a = {.from = 0, .to = 5};
	run r;
	run_expect(f, argv, &a, &r, "failed");
	assert_int_equal(r.r.exited, 1);
	assert_int_equal(r.r.exit_code, 1);
	assert_int_equal(r.n_metrics, 2);
	assert_string_equal(r.r.reason, "exit code 1");
	assert_group_gone(f, r.pgid);
}

static void test_segv(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--segv-at", "2", NULL};
	launch_args a = {.from = 0, .to = 5};
	run r;
	assert_int_equal(launch(f, argv, &a, &r, NULL), 0);
	wait_end(f, &r, 20);
	/* ASan builds catch the SIGSEGV and exit 1; plain builds die by it. */
	if (r.r.exited) {
		assert_string_equal(seg_outcome_name(r.r.outcome), "failed");
		assert_int_not_equal(r.r.exit_code, 0);
	} else {
		assert_string_equal(seg_outcome_name(r.r.outcome), "signaled");
		assert_int_equal(r.r.term_signal, SIGSEGV);
	}
	assert_int_equal(r.n_metrics, 1);
	assert_group_gone(f, r.pgid);
}

static void test_signaled_shell(void **state)
{
	fixture *f = *state;
	char *argv[] = {"/bin/sh", "-c", "echo 'RELISH epoch=1 a=2'; kill -SEGV $$", NULL};
	launch_args a = {.from = 0, .to = 1};
	run r;
	run_expect(f, argv, &a, &r, "signaled");
	assert_int_equal(r.r.exited, 0);
	assert_int_equal(r.r.term_signal, SIGSEGV);
	assert_int_equal(r.n_metrics, 1);
}

static void test_timeout(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--hang-at", "2", NULL};
	launch_args a = {.from = 0, .to = 5, .timeout_s = 0.3};
	run r;
	run_expect(f, argv, &a, &r, "timeout");
	assert_int_equal(r.r.exited, 0);
	assert_int_equal(r.r.term_signal, SIGTERM); /* it did not ignore SIGTERM */
	assert_true(r.r.duration_s >= 0.3);
	assert_int_equal(r.n_metrics, 1);
	assert_group_gone(f, r.pgid);
}

static void test_cancel_escalates(void **state)
{
	fixture *f = *state;
	char *argv[] = {"/bin/sh", "-c", "trap '' TERM; sleep 100", NULL};
	launch_args a = {.from = 0, .to = 1};
	run r;
	assert_int_equal(launch(f, argv, &a, &r, NULL), 0);
	wait_s(f, 0.1);
	assert_int_equal(r.ended, 0);
	assert_true(procmem_group_alive(r.pgid) >= 1);
	exec_cancel(f->ex, r.seg);
	exec_cancel(f->ex, r.seg); /* twice is harmless */
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "cancelled");
	assert_int_equal(r.r.exited, 0);
	assert_int_equal(r.r.term_signal, SIGKILL); /* SIGTERM was ignored */
	assert_true(r.r.duration_s >= 0.1 + 0.3);   /* the grace period passed */
	assert_group_gone(f, r.pgid);               /* sleep went too */
}

static void test_exec_failure(void **state)
{
	fixture *f = *state;
	char *argv[] = {"/nonexistent/trial-program", NULL};
	launch_args a = {.from = 0, .to = 1};
	run r;
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(launch(f, argv, &a, &r, &e), RL_EEXEC);
	assert_non_null(strstr(e.msg, "/nonexistent/trial-program"));
	assert_non_null(strstr(e.msg, "no such file"));
	assert_int_equal(r.ended, 0);
	/* Still usable afterwards. */
	char *ok[] = {f->ctrial, NULL};
	launch_args b = {.from = 0, .to = 1};
	assert_int_equal(launch(f, ok, &b, &r, NULL), 0);
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "completed");
}

static void test_memory_reservation(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--alloc-mb", "200", "--sleep-ms", "100", NULL};
	launch_args a = {.from = 0, .to = 50, .mem_mib = 50};
	run r;
	run_expect(f, argv, &a, &r, "oom");
	assert_int_equal(r.r.term_signal, SIGKILL);
	assert_true(r.r.peak_rss_bytes > (55ull << 20));
	assert_non_null(strstr(r.r.reason, "above its reservation and margin, not for want of memory"));
	assert_true(r.r.over_reservation); /* relish's limit, not the machine's memory */
	assert_true(r.n_metrics < 50);
	assert_group_gone(f, r.pgid);
}

static void test_oom_message(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--oom-message", NULL};
	launch_args a = {.from = 0, .to = 3};
	run r;
	run_expect(f, argv, &a, &r, "oom");
	assert_int_equal(r.r.exit_code, 1);
	assert_string_equal(r.r.oom_marker, "CUDA out of memory");
	assert_false(r.r.over_reservation); /* its own words: out of memory */
}

static void test_garbage_output(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--garbage", NULL};
	launch_args a = {.from = 0, .to = 3, .log = "garbage.log"};
	run r;
	assert_int_equal(launch(f, argv, &a, &r, NULL), 0);
	wait_end(f, &r, 30);
	assert_string_equal(seg_outcome_name(r.r.outcome), "completed");
	assert_int_equal(r.n_metrics, 3);         /* good lines after the garbage */
	assert_int_equal(r.r.bad_lines, 2);       /* "RELISH epoch=oops.." and "RELISH_DONE nope" */
	char path[256];
	snprintf(path, sizeof path, "%s/garbage.log", f->dir);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	/* 10 MB were printed; the log holds 1 MiB and the truncation note. */
	assert_true(st.st_size >= (1 << 20));
	assert_true(st.st_size < (1 << 20) + 128);
}

static void test_warm_two_segments(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, "--sleep-ms", "1", NULL};
	launch_args a = {.mode = TRIAL_MODE_WARM, .key = "t5", .trial_id = "t5", .x = 0.3, .y = 2,
			 .from = 0, .to = 3, .params = "{\"x\":0.3,\"y\":2}"};
	run r;
	run_expect(f, argv, &a, &r, "completed");
	assert_int_equal(r.r.reused, 0);
	assert_int_equal(r.n_metrics, 3);
	assert_int_equal(r.n_done, 1);
	pid_t pid = r.pgid;
	assert_true(procmem_group_alive(pid) >= 1); /* parked, alive */
	assert_int_equal(f->ex->ops->idle_count(f->ex), 1);

	a.from = 3;
	a.to = 6;
	assert_int_equal(launch(f, argv, &a, &r, NULL), 0);
	assert_int_equal(r.pgid, pid); /* the same process */
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "completed");
	assert_int_equal(r.r.reused, 1);
	assert_int_equal(r.n_metrics, 3);
	assert_float_equal(r.first_epoch, 4, 0);
	assert_float_equal(r.last_epoch, 6, 0);

	exec_release(f->ex, "t5"); /* the stop command: it exits by itself */
	assert_group_gone(f, pid);
	assert_int_equal(f->ex->ops->idle_count(f->ex), 0);
}

static void test_worker_two_trials(void **state)
{
	fixture *f = *state;
	char *argv[] = {f->ctrial, NULL};
	launch_args a = {.mode = TRIAL_MODE_WORKER, .key = "shape1@host", .trial_id = "wa",
			 .from = 0, .to = 2, .params = "{\"x\":0.3,\"y\":2}"};
	run r;
	run_expect(f, argv, &a, &r, "completed");
	assert_int_equal(r.n_metrics, 2);
	assert_true(r.r.ready_s >= 0);
	pid_t pid = r.pgid;

	launch_args b = a;
	b.trial_id = "wb";
	b.to = 3;
	b.params = "{\"x\":0.9,\"y\":-3}";
	assert_int_equal(launch(f, argv, &b, &r, NULL), 0);
	assert_int_equal(r.pgid, pid);
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "completed");
	assert_int_equal(r.r.reused, 1);
	assert_int_equal(r.n_metrics, 3);
	assert_float_equal(r.first_epoch, 1, 0); /* trial wb starts from scratch */
	char path[256];
	snprintf(path, sizeof path, "%s/wb/state", f->dir);
	assert_int_equal(access(path, R_OK), 0);

	/* A different shape does not get this worker. */
	launch_args c = a;
	c.key = "shape2@host";
	c.trial_id = "wc";
	assert_int_equal(launch(f, argv, &c, &r, NULL), 0);
	assert_int_not_equal(r.pgid, pid);
	wait_end(f, &r, 20);
	assert_int_equal(r.r.reused, 0);
	assert_int_equal(f->ex->ops->idle_count(f->ex), 2);
	exec_shutdown(f->ex);
	assert_group_gone(f, pid);
	assert_group_gone(f, r.pgid);
}

/* Swap the fixture's executor for one that samples memory only hourly,
 * so that no periodic sample can be what reports a peak; returns the
 * usual one for hourly_done. */
static executor *hourly_begin(fixture *f)
{
	exec_options o;
	exec_options_default(&o);
	o.sample_interval_s = 3600;
	executor *fast = f->ex, *slow = NULL;
	assert_int_equal(exec_process_new(&f->loop, &o, &slow, NULL), 0);
	f->ex = slow;
	return fast;
}

/* Shut the hourly executor down (its process group pid must go) and put
 * the usual one back. */
static void hourly_done(fixture *f, executor *fast, pid_t pid)
{
	executor *slow = f->ex;
	exec_shutdown(slow);
	assert_group_gone(f, pid);
	wait_s(f, 0.2);
	exec_free(slow);
	wait_s(f, 0.2);
	f->ex = fast;
}

/* A segment shorter than the sampling interval still reports a peak: a
 * worker lives on after its done line, so it is sampled then.  (Sampling
 * every hour here, so that no periodic sample can be what reports it.) */
static void test_worker_short_segment_peak(void **state)
{
	fixture *f = *state;
	executor *fast = hourly_begin(f);
	char *argv[] = {f->ctrial, NULL};
	launch_args a = {.mode = TRIAL_MODE_WORKER, .key = "short@host", .trial_id = "ws",
			 .from = 0, .to = 1, .params = "{\"x\":0.3,\"y\":2}"};
	run r;
	run_expect(f, argv, &a, &r, "completed");
	assert_true(r.r.duration_s < 3600);
	assert_true(r.r.peak_rss_bytes > (1ull << 20)); /* a process uses a MiB */
	hourly_done(f, fast, r.pgid);
}

/* A spike between two samples still counts: the trial touches 150 MiB at
 * start and frees it, and with hourly sampling only the kernel's
 * high-water mark, read at the done line, can report it.  The worker's
 * next segment starts from a reset mark, so it does not inherit the
 * spike. */
static void test_worker_spike_peak(void **state)
{
	fixture *f = *state;
	executor *fast = hourly_begin(f);
	char *argv[] = {f->ctrial, "--spike-mb", "150", NULL};
	launch_args a = {.mode = TRIAL_MODE_WORKER, .key = "spike@host", .trial_id = "sp",
			 .from = 0, .to = 1, .params = "{\"x\":0.3,\"y\":2}"};
	run r;
	run_expect(f, argv, &a, &r, "completed");
	assert_int_equal(r.r.reused, 0);
	assert_true(r.r.peak_rss_bytes >= (150ull << 20));
	pid_t pid = r.pgid;

	a.from = 1;
	a.to = 2;
	run_expect(f, argv, &a, &r, "completed");
	assert_int_equal(r.pgid, pid); /* the same process, its spike long over */
	assert_int_equal(r.r.reused, 1);
	assert_true(r.r.peak_rss_bytes > (1ull << 20));
	assert_true(r.r.peak_rss_bytes < (100ull << 20));
	hourly_done(f, fast, pid);
}

static void test_worker_misbehaves(void **state)
{
	fixture *f = *state;
	char *bad[] = {f->ctrial, "--bad-done", NULL};
	launch_args a = {.mode = TRIAL_MODE_WORKER, .key = "k", .trial_id = "wa", .from = 0, .to = 2,
			 .params = "{\"x\":0.3,\"y\":2}"};
	run r;
	assert_int_equal(launch(f, bad, &a, &r, NULL), 0);
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "failed");
	assert_non_null(strstr(r.r.reason, "protocol: RELISH_DONE to=3"));
	assert_group_gone(f, r.pgid);
	assert_int_equal(f->ex->ops->idle_count(f->ex), 0);

	/* No done line before the timeout: killed, TIMEOUT. */
	char *hang[] = {f->ctrial, "--hang-at", "2", NULL};
	a.trial_id = "wh"; /* wa's checkpoint is already at epoch 2 */
	a.timeout_s = 0.3;
	assert_int_equal(launch(f, hang, &a, &r, NULL), 0);
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "timeout");
	assert_group_gone(f, r.pgid);

	/* A worker that exits 0 without its done line failed its assignment. */
	char *quit[] = {"/bin/sh", "-c", "read line; echo 'RELISH epoch=1 a=1'", NULL};
	a.timeout_s = 0;
	assert_int_equal(launch(f, quit, &a, &r, NULL), 0);
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "failed");
	assert_string_equal(r.r.reason, "worker exited before its done line");
	assert_int_equal(r.n_metrics, 1);
}

static void test_procmem(void **state)
{
	(void)state;
	/* A group of our own, whose leader holds 8 MiB: the caller's group
	 * (ctest's, a shell's) may have no leader left to read. */
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t g = fork();
	assert_true(g >= 0);
	if (g == 0) {
		setpgid(0, 0);
		char *m = malloc(8 << 20);
		memset(m, 1, 8 << 20);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	setpgid(g, g);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	close(ready[1]);
	uint64_t rss = 0, hwm = 0;
	int n = 0;
	assert_int_equal(procmem_sample(&g, 1, &rss, &hwm, &n, NULL), 0);
	kill(g, SIGKILL);
	waitpid(g, NULL, 0);
	assert_int_equal(n, 1);
	assert_true(rss > (8u << 20));
	assert_true(hwm > (8u << 20));

	uint64_t b = 0;
	assert_int_equal(procmem_parse_hwm("Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t    1234 kB\n", &b), 0);
	assert_int_equal(b, 1234ull << 10);
	assert_int_equal(procmem_parse_hwm("VmHWM: 2 kB\n", &b), 0);
	assert_int_equal(b, 2048);
	assert_int_equal(procmem_parse_hwm("Name:\tkthreadd\nState:\tS\n", &b), -1);
	assert_int_equal(procmem_parse_hwm("VmHWM:\t 12 MB\n", &b), -1);
	assert_int_equal(procmem_parse_hwm("VmHWM:\t kB\n", &b), -1);
}

/*
 * After a restart, reclaim stops the process a stored identity names, and
 * nothing else: an identity whose start time was never read (0) names no
 * process, so an unrelated process that holds the pid now survives.
 */
static void test_reclaim_strict_identity(void **state)
{
	fixture *f = *state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		for (;;)
			pause();
	}
	setpgid(pid, pid);
	uint64_t t = 0;
	for (int i = 0; i < 200 && (procid_start_time(pid, &t, NULL) < 0 || getpgid(pid) != pid); i++)
		usleep(5000);
	assert_int_equal(getpgid(pid), pid);
	exec_ident unknown = {.pid = pid, .start_time = 0};
	assert_int_equal(f->ex->ops->reclaim(f->ex, &unknown, NULL), 0);
	exec_ident other = {.pid = pid, .start_time = t + 1};
	assert_int_equal(f->ex->ops->reclaim(f->ex, &other, NULL), 0);
	usleep(100 * 1000);
	int status;
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0); /* still running */
	exec_ident ours = {.pid = pid, .start_time = t};
	assert_int_equal(f->ex->ops->reclaim(f->ex, &ours, NULL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
}

/* ---- descendants: every process of a segment ends with it (confine.h) ---- */

static int setup_confined(void **state, exec_confine kind)
{
	if (setup(state) < 0)
		return -1;
	fixture *f = *state;
	exec_free(f->ex); /* the AUTO one from setup: swap in the kind under test */
	uv_run(&f->loop, UV_RUN_NOWAIT);
	exec_options o;
	exec_options_default(&o);
	o.kill_grace_s = 0.3;
	o.sample_interval_s = 0.05;
	o.log_max_bytes = 1 << 20;
	o.confine = kind;
	rl_err e;
	rl_err_clear(&e);
	f->ex = NULL;
	if (exec_process_new(&f->loop, &o, &f->ex, &e) < 0) {
		/* No writable hierarchy of that kind here (an unprivileged
		 * container): the test says so and is skipped. */
		fprintf(stderr, "confinement %s unavailable: %s\n", exec_confine_name(kind), e.msg);
		exec_process_new(&f->loop, NULL, &f->ex, NULL);
		f->skip = 1;
	}
	return 0;
}

static int setup_cgroup2(void **state) { return setup_confined(state, EXEC_CONFINE_CGROUP2); }
static int setup_cgroup1(void **state) { return setup_confined(state, EXEC_CONFINE_CGROUP1); }
static int setup_proc(void **state) { return setup_confined(state, EXEC_CONFINE_PROC); }
static int setup_group(void **state) { return setup_confined(state, EXEC_CONFINE_GROUP); }

/* pid from a file the trial writes (waits for it). */
static pid_t read_pidfile(fixture *f, const char *path)
{
	for (int i = 0; i < 500; i++) {
		FILE *fp = fopen(path, "r");
		long v = 0;
		if (fp) {
			int ok = fscanf(fp, "%ld", &v) == 1;
			fclose(fp);
			if (ok && v > 0)
				return (pid_t)v;
		}
		wait_s(f, 0.01);
	}
	fail_msg("no pid in %s", path);
	return -1;
}

/* 1 when pid runs (not a zombie) and is the process started at start. */
static int still_runs(pid_t pid, uint64_t start)
{
	return procid_matches(pid, start);
}

/*
 * A trial whose child leaves its session and process group (setsid) and
 * touches 64 MiB, while the trial itself stays small and exits 0 once the
 * child holds it (and a few samples later): the segment's peak counts the child, and the child ends
 * with the segment.
 */
static void check_descendant(fixture *f, int expect_confined)
{
	if (f->skip)
		skip();
	char pidfile[128], script[1024];
	snprintf(pidfile, sizeof pidfile, "%s/grandchild.pid", f->dir);
	snprintf(script, sizeof script,
		 "setsid \"$0\" --alloc-mb 64 --hang-at 1 >/dev/null 2>&1 </dev/null & c=$!; echo $c >%s; "
		 /* until the child holds its 64 MiB (at most 10 s: a loaded
		  * machine or a sanitizer build starts it slowly), then long
		  * enough for several samples */
		 "i=0; while [ $i -lt 500 ] && [ \"$(awk '/^VmRSS/ {print $2}' /proc/$c/status 2>/dev/null || echo 0)\" -lt 65536 ]; do "
		 "sleep 0.02; i=$((i+1)); done; sleep 0.4; exit 0", pidfile);
	char *argv[] = {"/bin/sh", "-c", script, f->ctrial, NULL};
	launch_args a = {.trial_id = "t1", .from = 0, .to = 1};
	run r;
	assert_int_equal(launch(f, argv, &a, &r, NULL), 0);
	pid_t gc = read_pidfile(f, pidfile);
	uint64_t st = 0;
	assert_int_equal(procid_start_time(gc, &st, NULL), 0);
	/* It leaves the trial's session (once setsid has run). */
	for (int i = 0; i < 200 && getsid(gc) == r.pgid; i++)
		wait_s(f, 0.005);
	assert_int_not_equal(getsid(gc), r.pgid);
	wait_end(f, &r, 20);
	assert_string_equal(seg_outcome_name(r.r.outcome), "completed");
	int alive = 1;
	for (int i = 0; i < 100 && (alive = still_runs(gc, st)); i++)
		wait_s(f, 0.02);
	if (expect_confined) {
		assert_false(alive);
		assert_true(r.r.peak_rss_bytes >= (64ull << 20));
	} else {
		/* The process group alone: the detached child survives, and its
		 * memory was never counted (what descendants got before). */
		assert_true(alive);
		assert_true(r.r.peak_rss_bytes < (64ull << 20));
		kill(gc, SIGKILL);
	}
}

static void test_descendants_cgroup2(void **state) { check_descendant(*state, 1); }
static void test_descendants_cgroup1(void **state) { check_descendant(*state, 1); }
static void test_descendants_proc(void **state) { check_descendant(*state, 1); }
static void test_descendants_group(void **state) { check_descendant(*state, 0); }

/*
 * /proc tracking, a unit whose leader is gone before the first scan (a
 * trial that exits at once, or a slow machine's first sample): the scan
 * finds no member, so the unit has no pid list at all, and asking for its
 * members must answer 0, not copy from the missing list (UBSan's "null
 * pointer passed as argument 2" of memcpy in confine_unit_members, which
 * ended test_run_gpu in a bare Debian container: issue 30 item 13).
 */
static void test_members_none_proc(void **state)
{
	(void)state;
	confine *c = NULL;
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(confine_new(EXEC_CONFINE_PROC, &c, &e), 0);
	confine_unit *u = NULL;
	assert_int_equal(confine_unit_begin(c, 0, &u, &e), 0);
	assert_non_null(u);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	uint64_t start = 0;
	procid_start_time(pid, &start, NULL);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid); /* gone before any scan */
	confine_unit_spawned(c, u, pid, start, 0);
	confine_scan(c);
	pid_t out[8];
	assert_int_equal(confine_unit_members(c, u, out, 8), 0);
	uint64_t rss = 1;
	int members = -1;
	assert_int_equal(confine_unit_usage(c, u, &rss, &members), 0);
	assert_int_equal(members, 0);
	assert_int_equal(rss, 0);
	confine_unit_free(c, u);
	confine_free(c);
}

/* The default (AUTO) confines too: whatever this machine allows. */
static void test_descendants_default(void **state)
{
	fixture *f = *state;
	const char *how = NULL;
	exec_confine k = exec_process_confinement(f->ex, &how);
	assert_true(k == EXEC_CONFINE_CGROUP2 || k == EXEC_CONFINE_CGROUP1 || k == EXEC_CONFINE_PROC);
	assert_non_null(how);
	fprintf(stderr, "confinement here: %s\n", how);
	check_descendant(f, 1);
}

/*
 * The trial joins its cgroup itself: relish's own /proc/self/cgroup never
 * changes while trials are launched (a thread reads it all along; when
 * relish moved itself into each trial's cgroup around a fork, it saw that),
 * and the trial is in its unit's cgroup from its first instruction (cat
 * reads its own /proc/self/cgroup at once).  It also starts as a fresh
 * process: no signal blocked or ignored (relish ignores SIGPIPE, libuv
 * and relish handle others).
 */
typedef struct watch {
	volatile int stop;
	char first[4096];
	long reads, changes;
	char changed[4096];
} watch;

static size_t read_all(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	size_t got = 0;
	ssize_t r;
	while (got + 1 < n && (r = read(fd, buf + got, n - 1 - got)) > 0)
		got += (size_t)r;
	close(fd);
	buf[got] = '\0';
	return got;
}

static void *watch_main(void *arg)
{
	watch *w = arg;
	char buf[4096];
	while (!w->stop) {
		read_all("/proc/self/cgroup", buf, sizeof buf);
		w->reads++;
		if (strcmp(buf, w->first) != 0) {
			if (!w->changes++)
				snprintf(w->changed, sizeof w->changed, "%s", buf);
		}
	}
	return NULL;
}

static void check_cgroup_join(fixture *f, int v2)
{
	if (f->skip)
		skip();
	watch w = {0};
	assert_true(read_all("/proc/self/cgroup", w.first, sizeof w.first) > 0);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, watch_main, &w), 0);
	enum { N = 30 };
	for (int i = 0; i < N; i++) {
		char *argv[] = {"/bin/cat", "/proc/self/cgroup", "/proc/self/status", NULL};
		char logname[32];
		snprintf(logname, sizeof logname, "join%d.log", i);
		launch_args a = {.trial_id = "t1", .from = 0, .to = 1, .log = logname};
		run r;
		assert_int_equal(launch(f, argv, &a, &r, NULL), 0);
		wait_end(f, &r, 20);
		assert_string_equal(seg_outcome_name(r.r.outcome), "completed");
		char path[256], buf[16384];
		snprintf(path, sizeof path, "%s/%s", f->dir, logname);
		assert_true(read_all(path, buf, sizeof buf) > 0);
		/* Its line for the hierarchy ("0::..." or "N:freezer:...")
		 * names a unit: .../relish.<pid>.<start>.<k>/p<N> */
		char *line = NULL;
		for (char *l = buf; l && !line; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
			if (v2 ? strncmp(l, "0::", 3) == 0 : strncmp(strchr(l, ':') ? strchr(l, ':') : l,
								     ":freezer:", 9) == 0)
				line = l;
		if (!line)
			fail_msg("trial %d printed no %s line: %s", i, v2 ? "0::" : "freezer", buf);
		char *eol = strchr(line, '\n');
		assert_non_null(eol);
		*eol = '\0';
		char *unit = strstr(line, "/relish.");
		if (!unit || !strstr(unit, "/p"))
			fail_msg("trial %d not in a unit's cgroup: %s", i, line);
		*eol = '\n';
		assert_non_null(strstr(buf, "SigBlk:\t0000000000000000\n"));
		assert_non_null(strstr(buf, "SigIgn:\t0000000000000000\n"));
	}
	w.stop = 1;
	pthread_join(th, NULL);
	fprintf(stderr, "relish's /proc/self/cgroup read %ld times during %d launches\n", w.reads, N);
	if (w.changes)
		fail_msg("relish's cgroup changed %ld times during launches, e.g. to:\n%s", w.changes,
			 w.changed);
	assert_true(w.reads > 0);
}

static void test_cgroup_join_cgroup2(void **state) { check_cgroup_join(*state, 1); }
static void test_cgroup_join_cgroup1(void **state) { check_cgroup_join(*state, 0); }

/*
 * A relish killed with SIGKILL leaves its trials' descendants behind; the
 * next process executor on the machine removes them (its cgroup names the
 * dead relish by pid and start time).  A forked child plays the relish.
 */
static void test_descendants_of_dead_relish(void **state)
{
	fixture *f = *state;
	if (f->skip)
		skip();
	char pidfile[128], script[512];
	snprintf(pidfile, sizeof pidfile, "%s/orphan.pid", f->dir);
	snprintf(script, sizeof script,
		 "setsid \"$0\" --hang-at 1 >/dev/null 2>&1 </dev/null & echo $! >%s; exec sleep 300",
		 pidfile);
	pid_t relish = fork();
	assert_true(relish >= 0);
	if (relish == 0) {
		uv_loop_t loop;
		uv_loop_init(&loop);
		exec_options o;
		exec_options_default(&o);
		o.confine = EXEC_CONFINE_CGROUP2;
		executor *ex;
		if (exec_process_new(&loop, &o, &ex, NULL) < 0)
			_exit(3);
		char *argv[] = {"/bin/sh", "-c", script, f->ctrial, NULL};
		char *env[] = {"PATH=/usr/bin:/bin", NULL};
		exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .envp = env, .a = {.to = 1}};
		exec_segment *seg;
		if (exec_launch(ex, &es, NULL, NULL, &seg, NULL) < 0)
			_exit(4);
		for (;;)
			uv_run(&loop, UV_RUN_ONCE);
	}
	pid_t orphan = read_pidfile(f, pidfile);
	uint64_t st = 0;
	assert_int_equal(procid_start_time(orphan, &st, NULL), 0);
	kill(relish, SIGKILL);
	int status;
	assert_int_equal(waitpid(relish, &status, 0), relish);
	assert_true(still_runs(orphan, st)); /* left behind */
	exec_options o;
	exec_options_default(&o);
	o.confine = EXEC_CONFINE_CGROUP2;
	executor *next = NULL;
	assert_int_equal(exec_process_new(&f->loop, &o, &next, NULL), 0);
	int alive = 1;
	for (int i = 0; i < 100 && (alive = still_runs(orphan, st)); i++)
		wait_s(f, 0.02);
	assert_false(alive);
	exec_shutdown(next);
	exec_free(next);
	uv_run(&f->loop, UV_RUN_NOWAIT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_procmem),
		cmocka_unit_test_setup_teardown(test_reclaim_strict_identity, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descendants_default, setup, teardown),
		cmocka_unit_test_setup_teardown(test_descendants_cgroup2, setup_cgroup2, teardown),
		cmocka_unit_test_setup_teardown(test_descendants_cgroup1, setup_cgroup1, teardown),
		cmocka_unit_test_setup_teardown(test_descendants_proc, setup_proc, teardown),
		cmocka_unit_test_setup_teardown(test_descendants_group, setup_group, teardown),
		cmocka_unit_test(test_members_none_proc),
		cmocka_unit_test_setup_teardown(test_descendants_of_dead_relish, setup_cgroup2, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_join_cgroup2, setup_cgroup2, teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_join_cgroup1, setup_cgroup1, teardown),
		cmocka_unit_test_setup_teardown(test_completed_and_resume, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_segv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_signaled_shell, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_escalates, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_reservation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_oom_message, setup, teardown),
		cmocka_unit_test_setup_teardown(test_garbage_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warm_two_segments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_two_trials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_short_segment_peak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_spike_peak, setup, teardown),
		cmocka_unit_test_setup_teardown(test_worker_misbehaves, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
