/*
 * test_slurm_exec.c - the slurm executor (slurm/slurm.c) on a real libuv
 * loop against stand-in sbatch, squeue and scancel (tests/support/
 * slurm_standin.sh: they record their arguments and run each "job" as a
 * local process), so the executor's side is tested where Slurm is absent;
 * tests/test_run_slurm.sh runs it against a real Slurm.  The jobs run the
 * real step wrapper (relish slurm-step) and the C trial.  Cases: a segment
 * submitted with the exact sbatch arguments, its metric lines as they are
 * printed, the job's id and start as events, completed with the wrapper's
 * memory peak; a failing trial (exit code); sbatch refusing the job (a
 * runtime fault, sbatch's words); cancel (scancel of that job, CANCELLED);
 * relish's own timeout (TIMEOUT, cancelled); slurmstepd's words for a job
 * over its --mem (OOM where Slurm samples memory); adopting a job that ended
 * while nobody watched (its output read from the start), one squeue has
 * forgotten (sacct says how it ended) and one Slurm no longer knows
 * (LOST); twenty jobs at once polled with one squeue per
 * poll, at a bounded rate; and a job of another user (run_as: relish
 * serve's submitter), submitted and cancelled as that user through
 * relish-runas and listed by squeue with that user's uid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm.h"

typedef struct fixture {
	uv_loop_t loop;
	uv_timer_t tick;
	executor *ex;
	char dir[64];
	char ctrial[512];
	char relish[512];
} fixture;

typedef struct run {
	int ended;
	exec_result r;
	int n_metrics;
	double last_epoch;
	int submitted, started;
	char handle[32];
	char node[64];
	exec_segment *seg;
} run;

static void tick_cb(uv_timer_t *t)
{
	(void)t;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof *f);
	uv_loop_init(&f->loop);
	uv_timer_init(&f->loop, &f->tick);
	uv_timer_start(&f->tick, tick_cb, 50, 50);
	strcpy(f->dir, "/tmp/relish-test-slurm-exec-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	const char *b = getenv("RELISH_BUILD"), *src = getenv("RELISH_SRC");
	/* What another user runs (test_run_as: the stand-in sbatch, the job's
	 * relish slurm-step and ctrial) is copied into the test's folder:
	 * the source and build folders may be anywhere, a private clone
	 * (0700) included, which that user cannot traverse (issue 30, item
	 * 12: "relish-runas: .../sbatch: Permission denied"). */
	char cmd[2200];
	snprintf(cmd, sizeof cmd, "cp '%s/tests/support/slurm_standin.sh' '%s/ctrial' '%s/relish' '%s/'",
		 src ? src : "..", b ? b : ".", b ? b : ".", f->dir);
	if (system(cmd) != 0)
		return -1;
	snprintf(f->ctrial, sizeof f->ctrial, "%s/ctrial", f->dir);
	snprintf(f->relish, sizeof f->relish, "%s/relish", f->dir);
	char path[600], target[600];
	snprintf(target, sizeof target, "%s/slurm_standin.sh", f->dir);
	static const char *const tools[] = {"sbatch", "squeue", "scancel", "sacct"};
	for (size_t i = 0; i < 4; i++) {
		snprintf(path, sizeof path, "%s/%s", f->dir, tools[i]);
		if (symlink(target, path) < 0)
			return -1;
	}
	setenv("STANDIN_SLURM_DIR", f->dir, 1);
	/* the trial's own leak check would fail the trial at exit */
	setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
	slurm_options o;
	slurm_options_default(&o);
	snprintf(path, sizeof path, "%s/sbatch", f->dir);
	char sq[600], sc[600], st[600];
	snprintf(sq, sizeof sq, "%s/squeue", f->dir);
	snprintf(sc, sizeof sc, "%s/scancel", f->dir);
	snprintf(st, sizeof st, "%s/state", f->dir);
	o.sbatch = path;
	o.squeue = sq;
	o.scancel = sc;
	o.experiment = "unit";
	o.owner = "00000000000000aa";
	o.state_dir = st;
	o.step_program = f->relish;
	o.poll_interval_s = 0.3;
	o.partition = "main";
	if (exec_slurm_new(&f->loop, &o, &f->ex, NULL) < 0)
		return -1;
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
	assert_int_equal(uv_loop_close(&f->loop), 0);
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
		if (contract_metric_get(l, "epoch", &e))
			r->last_epoch = e;
	}
}

static void on_end(void *ud, exec_segment *seg, const exec_result *res)
{
	run *r = ud;
	(void)seg;
	r->ended = 1;
	r->r = *res;
}

static void on_event(void *ud, exec_segment *seg, const exec_event *ev)
{
	run *r = ud;
	(void)seg;
	if (ev->kind == EXEC_EV_SUBMITTED) {
		r->submitted++;
		snprintf(r->handle, sizeof r->handle, "%s", ev->handle);
	} else {
		r->started++;
		snprintf(r->node, sizeof r->node, "%s", ev->node ? ev->node : "");
	}
}

static const exec_callbacks cbs = {.on_line = on_line, .on_end = on_end, .on_event = on_event};

/* Launch ctrial for segment [0, to] with extra arguments (as user, when
 * not NULL). */
static void launch_as(fixture *f, run *r, const char *trial, double to, double timeout_s,
		      const char *const *extra, const exec_cluster_request *c,
		      const exec_user *user)
{
	char *argv[24];
	size_t k = 0;
	char tos[32];
	snprintf(tos, sizeof tos, "%g", to);
	argv[k++] = f->ctrial;
	argv[k++] = "--x";
	argv[k++] = "0.3";
	for (size_t i = 0; extra && extra[i]; i++)
		argv[k++] = (char *)extra[i];
	argv[k] = NULL;
	char ck[128], from_env[64], to_env[64], id_env[64], ck_env[200], log[128];
	snprintf(ck, sizeof ck, "%s/ck-%s", f->dir, trial);
	mkdir(ck, 0755);
	snprintf(log, sizeof log, "%s/%s.log", f->dir, trial);
	snprintf(from_env, sizeof from_env, "RELISH_RESOURCE_FROM=0");
	snprintf(to_env, sizeof to_env, "RELISH_RESOURCE_TO=%s", tos);
	snprintf(id_env, sizeof id_env, "RELISH_TRIAL_ID=%s", trial);
	snprintf(ck_env, sizeof ck_env, "RELISH_CHECKPOINT_DIR=%s", ck);
	char sd_env[128];
	snprintf(sd_env, sizeof sd_env, "STANDIN_SLURM_DIR=%s", f->dir);
	char *envp[] = {from_env, to_env, id_env, ck_env, sd_env, "PATH=/usr/bin:/bin",
			"ASAN_OPTIONS=detect_leaks=0", NULL};
	exec_cluster_request dflt = {.node = "n1", .mem_mib = 100, .seq = 0};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .envp = envp, .log_path = log,
			.timeout_s = timeout_s, .cpus = 1,
			.a = {.trial_id = trial, .from = 0, .to = to, .checkpoint_dir = ck},
			.cluster = c ? c : &dflt, .run_as = user};
	if (user) {
		/* the user's checkpoint folder, and the trial's folder sbatch runs in */
		assert_int_equal(chown(ck, user->uid, user->gid), 0);
		es.cwd = f->dir;
	}
	memset(r, 0, sizeof *r);
	assert_int_equal(exec_launch(f->ex, &es, &cbs, r, &r->seg, NULL), 0);
}

static void launch(fixture *f, run *r, const char *trial, double to, double timeout_s,
		   const char *const *extra, const exec_cluster_request *c)
{
	launch_as(f, r, trial, to, timeout_s, extra, c, NULL);
}

static void wait_end(fixture *f, run *r, double limit_s)
{
	double t0 = now_s();
	while (!r->ended && now_s() - t0 < limit_s)
		uv_run(&f->loop, UV_RUN_ONCE);
	if (!r->ended)
		fail_msg("the segment did not end within %g s", limit_s);
	if (getenv("TEST_VERBOSE"))
		print_message("ended: %s: %s\n", seg_outcome_name(r->r.outcome), r->r.reason);
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return NULL;
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	return buf;
}

static int count_lines(const char *path)
{
	char *t = slurp(path);
	int n = 0;
	for (; t && *t; t++)
		n += *t == '\n';
	return n;
}

static void test_completed(void **state)
{
	fixture *f = *state;
	run r;
	exec_cluster_request c = {.node = "n2", .shards = 2, .mem_mib = 512, .seq = 5,
				  .experiment = "unit"};
	const char *extra[] = {"--sleep-ms", "100", NULL};
	launch(f, &r, "t1", 3, 0, extra, &c);
	wait_end(f, &r, 30);
	assert_int_equal(r.r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(r.r.exit_code, 0);
	assert_int_equal(r.n_metrics, 3);
	assert_true(r.last_epoch == 3);
	assert_int_equal(r.r.metric_lines, 3);
	assert_int_equal(r.submitted, 1);
	assert_int_equal(r.started, 1);
	assert_string_equal(r.handle, "1000");
	assert_string_equal(r.node, "n2");
	assert_true(r.r.peak_rss_bytes > 0);
	assert_true(r.r.duration_s > 0.2);
	/* what sbatch was given */
	char p[128];
	snprintf(p, sizeof p, "%s/sbatch.0.args", f->dir);
	char *args = slurp(p);
	assert_non_null(args);
	const char *want[] = {"--parsable\n", "--job-name=relish-unit-t1-s5\n",
			      "--comment=relish owner=00000000000000aa experiment=unit trial=t1 "
			      "segment=0-3 seq=5\n",
			      "--gres=shard:2\n", "--nodelist=n2\n", "--mem=512M\n",
			      "--partition=main\n", "--no-requeue\n", "/relish-step.sh\n", "--x\n0.3\n"};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(args, want[i]))
			fail_msg("sbatch arguments lack \"%s\":\n%s", want[i], args);
	/* the step script runs the wrapper and passes argv on untouched */
	snprintf(p, sizeof p, "%s/state/relish-step.sh", f->dir);
	char *script = slurp(p);
	assert_non_null(script);
	assert_non_null(strstr(script, "slurm-step -- \"$@\""));
}

static void test_failed(void **state)
{
	fixture *f = *state;
	run r;
	const char *extra[] = {"--fail-at", "2", NULL};
	launch(f, &r, "t2", 3, 0, extra, NULL);
	wait_end(f, &r, 30);
	assert_int_equal(r.r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r.r.exited, 1);
	assert_int_equal(r.r.exit_code, 1);
	assert_string_equal(r.r.reason, "exit code 1");
	assert_int_equal(r.n_metrics, 1);
}

static void test_refused(void **state)
{
	fixture *f = *state;
	char p[128];
	snprintf(p, sizeof p, "%s/refuse", f->dir);
	FILE *fp = fopen(p, "w");
	fputs("sbatch: error: invalid partition specified: nope\n", fp);
	fclose(fp);
	run r;
	launch(f, &r, "t3", 1, 0, NULL, NULL);
	wait_end(f, &r, 10);
	unlink(p);
	assert_int_equal(r.r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r.r.fault, EXEC_FAULT_RUNTIME);
	assert_non_null(strstr(r.r.reason, "invalid partition specified: nope"));
	assert_int_equal(r.submitted, 0);
}

static void test_cancel(void **state)
{
	fixture *f = *state;
	run r;
	const char *extra[] = {"--sleep-ms", "1000", NULL};
	launch(f, &r, "t4", 30, 0, extra, NULL);
	double t0 = now_s();
	while (r.n_metrics < 1 && now_s() - t0 < 20)
		uv_run(&f->loop, UV_RUN_ONCE);
	assert_true(r.n_metrics >= 1);
	exec_cancel(f->ex, r.seg);
	wait_end(f, &r, 20);
	assert_int_equal(r.r.outcome, SEG_OUT_CANCELLED);
	char p[128];
	snprintf(p, sizeof p, "%s/calls.scancel", f->dir);
	char *calls = slurp(p);
	assert_non_null(calls);
	assert_non_null(strstr(calls, r.handle));
	assert_true(r.n_metrics < 30);
}

/* A job of another user: sbatch and scancel run as that user (relish-runas),
 * the job runs as them, squeue asks for their jobs too. */
static void test_run_as(void **state)
{
	fixture *f = *state;
	struct passwd *pw = getpwnam("nobody");
	if (geteuid() != 0 || !pw) {
		print_message("skipped: running as another user needs root and a user nobody\n");
		return;
	}
	char helper[600];
	const char *b = getenv("RELISH_BUILD");
	snprintf(helper, sizeof helper, "%s/relish-runas", b ? b : ".");
	gid_t groups[1] = {pw->pw_gid};
	exec_user u = {.uid = pw->pw_uid, .gid = pw->pw_gid, .n_groups = 1, .groups = groups,
		       .helper = helper};
	/* the stand-in's state is written by the user's sbatch and job */
	assert_int_equal(chmod(f->dir, 0777), 0);
	run r;
	const char *extra[] = {"--sleep-ms", "1000", NULL};
	launch_as(f, &r, "t9", 30, 0, extra, NULL, &u);
	double t0 = now_s();
	while (r.n_metrics < 1 && !r.ended && now_s() - t0 < 20)
		uv_run(&f->loop, UV_RUN_ONCE);
	if (r.ended)
		fail_msg("the job ended early: %s", r.r.reason);
	assert_true(r.n_metrics >= 1);
	char p[160], want[32];
	snprintf(want, sizeof want, "%u\n", (unsigned)pw->pw_uid);
	snprintf(p, sizeof p, "%s/sbatch.0.uid", f->dir);
	char *who = slurp(p);
	assert_non_null(who);
	assert_string_equal(who, want);
	/* the job's output file is the user's (the job made it) */
	struct stat st;
	snprintf(p, sizeof p, "%s/t9.log", f->dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, pw->pw_uid);
	/* squeue lists relish's own user's jobs and the user's */
	snprintf(p, sizeof p, "%s/calls.squeue", f->dir);
	char *calls = slurp(p);
	char ulist[64];
	snprintf(ulist, sizeof ulist, "-u %u,%u ", (unsigned)geteuid(), (unsigned)pw->pw_uid);
	if (!calls || !strstr(calls, ulist))
		fail_msg("squeue was not asked for '%s': %s", ulist, calls ? calls : "(no calls)");
	exec_cancel(f->ex, r.seg);
	wait_end(f, &r, 20);
	assert_int_equal(r.r.outcome, SEG_OUT_CANCELLED);
	snprintf(p, sizeof p, "%s/scancel.uids", f->dir);
	who = slurp(p);
	assert_non_null(who);
	assert_string_equal(who, want);
}

static void test_timeout(void **state)
{
	fixture *f = *state;
	run r;
	const char *extra[] = {"--sleep-ms", "500", NULL};
	launch(f, &r, "t5", 30, 1.0, extra, NULL);
	wait_end(f, &r, 20);
	assert_int_equal(r.r.outcome, SEG_OUT_TIMEOUT);
	assert_non_null(strstr(r.r.reason, "timeout of 1 s"));
	assert_true(r.n_metrics < 10);
}

/* Where Slurm samples memory instead of the kernel enforcing it, a job over
 * its --mem ends FAILED with slurmstepd's words in its output: OOM. */
static void test_overmem(void **state)
{
	fixture *f = *state;
	char *argv[] = {"/bin/sh", "-c",
			"echo 'slurmstepd-n1: error: Exceeded job memory limit' >&2; exit 9", NULL};
	char log[128];
	snprintf(log, sizeof log, "%s/overmem.log", f->dir);
	char sd_env[128];
	snprintf(sd_env, sizeof sd_env, "STANDIN_SLURM_DIR=%s", f->dir);
	char *envp[] = {sd_env, "PATH=/usr/bin:/bin", NULL};
	exec_cluster_request c = {.node = "n1", .mem_mib = 64, .seq = 0};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .envp = envp, .log_path = log,
			.a = {.trial_id = "t9", .from = 0, .to = 1}, .cluster = &c};
	run r;
	memset(&r, 0, sizeof r);
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r, &r.seg, NULL), 0);
	wait_end(f, &r, 30);
	assert_int_equal(r.r.outcome, SEG_OUT_OOM);
	assert_non_null(strstr(r.r.reason, "Exceeded job memory limit"));
}

/* A job that ended while no relish watched: adopted, its output read
 * from the start, its end taken from Slurm. */
static void test_adopt(void **state)
{
	fixture *f = *state;
	run r;
	const char *extra[] = {"--sleep-ms", "50", NULL};
	launch(f, &r, "t6", 4, 0, extra, NULL);
	wait_end(f, &r, 30);
	assert_int_equal(r.r.outcome, SEG_OUT_COMPLETED);
	uint64_t id = strtoull(r.handle, NULL, 10);
	char log[128];
	snprintf(log, sizeof log, "%s/t6.log", f->dir);
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .log_path = log};
	run a;
	memset(&a, 0, sizeof a);
	assert_int_equal(exec_slurm_adopt(f->ex, id, &es, &cbs, &a, &a.seg, NULL), 0);
	wait_end(f, &a, 20);
	assert_int_equal(a.r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(a.n_metrics, 4);
	assert_true(a.last_epoch == 4);
	assert_int_equal(a.started, 1);

	/* one Slurm does not know (and no completion record): lost */
	run l;
	memset(&l, 0, sizeof l);
	assert_int_equal(exec_slurm_adopt(f->ex, 987654, &es, &cbs, &l, &l.seg, NULL), 0);
	wait_end(f, &l, 20);
	assert_int_equal(l.r.outcome, SEG_OUT_LOST);
	assert_non_null(strstr(l.r.reason, "987654"));
}

/* Where the cluster keeps accounting, a job squeue has forgotten is looked
 * up with sacct (one call for all of them): its end is Slurm's, not lost. */
static void test_sacct(void **state)
{
	fixture *f = *state;
	run r;
	const char *extra[] = {"--sleep-ms", "50", "--fail-at", "2", NULL};
	launch(f, &r, "t7", 3, 0, extra, NULL);
	wait_end(f, &r, 30);
	assert_int_equal(r.r.outcome, SEG_OUT_FAILED);
	char p[160];
	snprintf(p, sizeof p, "%s/job.%s.forgotten", f->dir, r.handle);
	FILE *fp = fopen(p, "w");
	fclose(fp);
	/* a second executor, as a restarted relish on a cluster with accounting */
	snprintf(p, sizeof p, "%s/sacct", f->dir);
	setenv("RELISH_SACCT", p, 1);
	slurm_options o;
	slurm_options_default(&o);
	char sq[600], st[600];
	snprintf(sq, sizeof sq, "%s/squeue", f->dir);
	snprintf(st, sizeof st, "%s/state2", f->dir);
	o.squeue = sq;
	o.experiment = "unit";
	o.owner = "00000000000000aa";
	o.state_dir = st;
	o.step_program = f->relish;
	o.poll_interval_s = 0.3;
	o.use_sacct = 1;
	executor *ex2 = NULL;
	assert_int_equal(exec_slurm_new(&f->loop, &o, &ex2, NULL), 0);
	unsetenv("RELISH_SACCT");
	char log[128];
	snprintf(log, sizeof log, "%s/t7.log", f->dir);
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .log_path = log};
	run a;
	memset(&a, 0, sizeof a);
	assert_int_equal(exec_slurm_adopt(ex2, strtoull(r.handle, NULL, 10), &es, &cbs, &a, &a.seg,
					  NULL), 0);
	wait_end(f, &a, 20);
	assert_int_equal(a.r.outcome, SEG_OUT_FAILED);
	assert_int_equal(a.r.exit_code, 1);
	assert_int_equal(a.n_metrics, 1);
	snprintf(p, sizeof p, "%s/calls.sacct", f->dir);
	char *calls = slurp(p);
	assert_non_null(calls);
	assert_non_null(strstr(calls, r.handle));
	exec_shutdown(ex2);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	exec_free(ex2);
}

/* Twenty jobs: one squeue per poll for all of them, polls at a bounded
 * rate (poll_interval 0.3 s; 0.25 s while ends are awaited). */
static void test_bounded_polls(void **state)
{
	fixture *f = *state;
	enum { N = 20 };
	static run r[N];
	char names[N][8];
	const char *extra[] = {"--sleep-ms", "300", NULL};
	double t0 = now_s();
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "b%d", i);
		exec_cluster_request c = {.node = "n1", .mem_mib = 64, .seq = i};
		launch(f, &r[i], names[i], 3, 0, extra, &c);
	}
	for (int i = 0; i < N; i++)
		wait_end(f, &r[i], 60);
	double took = now_s() - t0;
	for (int i = 0; i < N; i++) {
		if (r[i].r.outcome != SEG_OUT_COMPLETED || r[i].n_metrics != 3) {
			char lp[128];
			snprintf(lp, sizeof lp, "%s/%s.log", f->dir, names[i]);
			char *t = slurp(lp);
			fail_msg("job %d: %s, %d metric lines; its output:\n%s", i,
				 seg_outcome_name(r[i].r.outcome), r[i].n_metrics, t ? t : "(none)");
		}
	}
	char p[128];
	snprintf(p, sizeof p, "%s/calls.squeue", f->dir);
	int polls = count_lines(p);
	/* at most one poll per 0.25 s (plus the first): independent of N */
	double bound = took / 0.25 + 2;
	print_message("20 jobs in %.1f s: %d squeue calls (bound %.0f)\n", took, polls, bound);
	assert_true(polls >= 1);
	if (polls > bound)
		fail_msg("%d squeue calls in %.1f s: more than one per 0.25 s", polls, took);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_completed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_as, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overmem, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sacct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounded_polls, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
