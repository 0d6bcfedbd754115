/*
 * test_podman.c - the container executor with real podman containers on a
 * real libuv loop.  The trial is ctrial from $RELISH_BUILD, run inside the
 * tiny image of scripts/podman-image.sh with the host's /usr and the build
 * folder mounted read-only; podman reads scripts/containers.conf through
 * CONTAINERS_CONF (nothing system-wide changes).  Checked: the container's
 * metric lines equal the process executor's for the same segment; memory
 * limit -> out of memory; cancel (also of a trial that ignores SIGTERM) and
 * timeout leave no container; a missing image or command is a runtime
 * failure, an exit 1 the trial's; a warm container serves two segments;
 * and after the process running the executor is SIGKILLed, reconcile finds
 * the orphan by its owner label and removes it; the trial sees least
 * privilege (no capability, no new privileges, not root, a read-only
 * root) and, when granted, exactly what was granted.
 *
 * Every container carries an owner label unique to this run; the group
 * teardown (and an atexit hook, for a failed assertion) removes whatever
 * still carries it.  Skipped when podman is not installed.
 *
 * RELISH_TEST_ENGINE=docker runs the same checks with docker (a daemon must
 * answer; scripts/docker-check.sh starts a private one).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "container/container.h"
#include "process/process.h"

static char g_owner[32];
static char g_conf[1024];
static char g_build[1024];
static char g_ctrial[1100];
static char g_dir[64];
static int g_have_podman;
static const char *g_engine = "podman"; /* or docker: RELISH_TEST_ENGINE */

#define IMAGE "localhost/relish-host:latest"

static void remove_all(void)
{
	if (!g_owner[0])
		return;
	char cmd[2048];
	int docker = !strcmp(g_engine, "docker"); /* docker rm has no -t */
	snprintf(cmd, sizeof cmd,
		 "CONTAINERS_CONF=%s %s ps -aq --filter label=relish.owner=%s | "
		 "xargs -r env CONTAINERS_CONF=%s %s rm -f %s >/dev/null 2>&1",
		 g_conf, g_engine, g_owner, g_conf, g_engine, docker ? "" : "-t 0");
	if (system(cmd) != 0) {
		/* best effort: nothing more to do in a cleanup hook */
	}
}

static int group_setup(void **state)
{
	(void)state;
	const char *src = getenv("RELISH_SRC");
	const char *build = getenv("RELISH_BUILD");
	if (!src || !build) {
		fprintf(stderr, "RELISH_SRC / RELISH_BUILD not set (run through ctest)\n");
		return -1;
	}
	snprintf(g_conf, sizeof g_conf, "%s/scripts/containers.conf", src);
	snprintf(g_build, sizeof g_build, "%s", build);
	snprintf(g_ctrial, sizeof g_ctrial, "%s/ctrial", build);
	setenv("CONTAINERS_CONF", g_conf, 1);
	const char *eng = getenv("RELISH_TEST_ENGINE");
	if (eng && !strcmp(eng, "docker"))
		g_engine = "docker";
	setenv("PODMAN", g_engine, 1); /* the engine podman-image.sh uses */
	char probe[64];
	snprintf(probe, sizeof probe, "%s --version >/dev/null 2>&1", g_engine);
	g_have_podman = system(probe) == 0;
	/* Without podman the tests skip, except in CI, where scripts/deps.sh
	 * installs it: a missing podman there must fail, not pass quietly. */
	if (!g_have_podman && getenv("CI") && *getenv("CI")) {
		fprintf(stderr, "podman is not installed (scripts/deps.sh test installs it)\n");
		return -1;
	}
	if (!g_have_podman)
		return 0;
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "%s/scripts/podman-image.sh", src);
	if (system(cmd) != 0) {
		fprintf(stderr, "scripts/podman-image.sh failed\n");
		return -1;
	}
	snprintf(g_owner, sizeof g_owner, "test%08x", (unsigned)getpid());
	atexit(remove_all);
	strcpy(g_dir, "/tmp/relish-podman-XXXXXX");
	if (!mkdtemp(g_dir))
		return -1;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	remove_all();
	if (g_dir[0]) {
		char cmd[128];
		snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
		if (system(cmd) != 0)
			return -1;
	}
	return 0;
}

/* ---- fixture --------------------------------------------------------------- */

typedef struct fixture {
	uv_loop_t loop;
	uv_timer_t tick;
	executor *ex;
} fixture;

typedef struct run {
	int ended;
	exec_result r;
	int n_metrics;
	double acc[16];
	exec_segment *seg;
	int cancel_after;   /* cancel after this many metric lines; 0: never */
	executor *ex;
} run;

static void tick_cb(uv_timer_t *t)
{
	(void)t;
}

static container_mount g_mounts[4];

static void test_options(container_options *o, const char *image)
{
	container_options_default(o);
	if (!strcmp(g_engine, "docker"))
		o->engine = CONTAINER_DOCKER;
	o->containers_conf = g_conf;
	o->image = image;
	o->experiment = "ptest";
	o->owner = g_owner;
	o->state_dir = g_dir;
	g_mounts[0] = (container_mount){"/usr", NULL, 1};
	g_mounts[1] = (container_mount){"/etc/alternatives", NULL, 1};
	g_mounts[2] = (container_mount){"/etc/ld.so.cache", NULL, 1};
	g_mounts[3] = (container_mount){g_build, NULL, 1};
	o->mounts = g_mounts;
	o->n_mounts = 4;
	o->exec.kill_grace_s = 1.0;
	o->exec.sample_interval_s = 0.05;
}

static int setup(void **state)
{
	if (!g_have_podman)
		skip();
	fixture *f = calloc(1, sizeof *f);
	uv_loop_init(&f->loop);
	uv_timer_init(&f->loop, &f->tick);
	uv_timer_start(&f->tick, tick_cb, 50, 50);
	container_options o;
	test_options(&o, IMAGE);
	rl_err err;
	rl_err_clear(&err);
	if (exec_podman_new(&f->loop, &o, &f->ex, &err) < 0) {
		fprintf(stderr, "exec_podman_new: %s\n", err.msg);
		return -1;
	}
	*state = f;
	return 0;
}

static void drain(fixture *f)
{
	exec_shutdown(f->ex);
	uv_timer_stop(&f->tick);
	uv_unref((uv_handle_t *)&f->tick);
	uv_run(&f->loop, UV_RUN_DEFAULT);
}

static int teardown(void **state)
{
	fixture *f = *state;
	if (!f)
		return 0;
	drain(f);
	exec_free(f->ex);
	uv_close((uv_handle_t *)&f->tick, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	int rc = uv_loop_close(&f->loop);
	free(f);
	return rc == 0 ? 0 : -1;
}

static void on_line(void *ud, exec_segment *seg, const contract_line *l)
{
	run *r = ud;
	if (l->kind != CONTRACT_METRICS)
		return;
	double a;
	if (contract_metric_get(l, "accuracy", &a) && r->n_metrics < 16)
		r->acc[r->n_metrics] = a;
	r->n_metrics++;
	if (r->cancel_after && r->n_metrics == r->cancel_after)
		exec_cancel(r->ex, seg);
}

static void on_end(void *ud, exec_segment *seg, const exec_result *res)
{
	run *r = ud;
	(void)seg;
	r->ended = 1;
	r->r = *res;
}

static void wait_end(fixture *f, run *r, double limit_s)
{
	uint64_t t0 = uv_hrtime();
	while (!r->ended && (double)(uv_hrtime() - t0) / 1e9 < limit_s)
		uv_run(&f->loop, UV_RUN_ONCE);
	if (!r->ended)
		fail_msg("segment did not end within %.0f s", limit_s);
}

static size_t count_containers(void)
{
	container_options o;
	test_options(&o, IMAGE);
	container_info *v = NULL;
	size_t n = 0;
	rl_err err;
	rl_err_clear(&err);
	if (container_list(&o, &v, &n, &err) < 0)
		fail_msg("container_list: %s", err.msg);
	free(v);
	return n;
}

static exec_callbacks cbs = {.on_line = on_line, .on_end = on_end};

/* A oneshot ctrial segment [0, to] of trial id. */
static void spec_for(exec_spec *es, char **argv, char **envp, const char *id, double to,
		     const char *ckdir)
{
	memset(es, 0, sizeof *es);
	es->mode = TRIAL_MODE_ONESHOT;
	es->argv = argv;
	es->envp = envp;
	es->cpus = 1;
	es->memory_limit_mib = 256;
	es->a.trial_id = id;
	es->a.from = 0;
	es->a.to = to;
	es->a.checkpoint_dir = ckdir;
}

/* ---- tests ------------------------------------------------------------------ */

static void test_ctrial_matches_process(void **state)
{
	fixture *f = *state;
	char ck[128], ckp[128], env_ck[160];
	snprintf(ck, sizeof ck, "%s/ck-c", g_dir);
	snprintf(ckp, sizeof ckp, "%s/ck-p", g_dir);
	char *argv[] = {g_ctrial, "--sleep-ms", "150", NULL};
	snprintf(env_ck, sizeof env_ck, "RELISH_CHECKPOINT_DIR=%s", ck);
	char *envp[] = {"RELISH_TRIAL_ID=t1", "RELISH_RESOURCE_FROM=0", "RELISH_RESOURCE_TO=3",
			"RELISH_PARAM_X=0.25", "RELISH_PARAM_Y=1.5", env_ck, NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "t1", 3, ck);
	run rc = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &rc, &rc.seg, NULL), 0);
	exec_ident id;
	assert_int_equal(exec_ident_of(f->ex, rc.seg, &id), 0);
	assert_int_equal(strncmp(id.handle, "relish-ptest-t1-3-", 18), 0);
	wait_end(f, &rc, 60);
	assert_int_equal(rc.r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(rc.n_metrics, 3);
	assert_int_equal(rc.r.metric_lines, 3);
	/* The container's memory cgroup was sampled: above zero, below its limit. */
	assert_true(rc.r.peak_rss_bytes > 0);
	assert_true(rc.r.peak_rss_bytes < (256ull << 20));
	/* The checkpoint went through the bind mount. */
	char path[200], line[64] = "";
	snprintf(path, sizeof path, "%s/state", ck);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	assert_non_null(fgets(line, sizeof line, fp));
	fclose(fp);
	assert_string_equal(line, "epoch 3\n");
	assert_int_equal(count_containers(), 0);

	/* Same segment as a process: the same numbers, line for line. */
	executor *px = NULL;
	assert_int_equal(exec_process_new(&f->loop, NULL, &px, NULL), 0);
	snprintf(env_ck, sizeof env_ck, "RELISH_CHECKPOINT_DIR=%s", ckp);
	es.a.checkpoint_dir = ckp;
	run rp = {0};
	assert_int_equal(exec_launch(px, &es, &cbs, &rp, &rp.seg, NULL), 0);
	wait_end(f, &rp, 30);
	assert_int_equal(rp.r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(rp.n_metrics, 3);
	for (int i = 0; i < 3; i++)
		assert_float_equal(rc.acc[i], rp.acc[i], 0.0);
	exec_shutdown(px);
	exec_free(px);
	uv_run(&f->loop, UV_RUN_NOWAIT);
}

static void test_memory_limit_oom(void **state)
{
	fixture *f = *state;
	char *argv[] = {g_ctrial, "--alloc-mb", "200", NULL};
	char *envp[] = {"RELISH_TRIAL_ID=t2", "RELISH_RESOURCE_TO=2", NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "t2", 2, NULL);
	es.memory_limit_mib = 48;
	run r = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r, &r.seg, NULL), 0);
	wait_end(f, &r, 60);
	assert_int_equal(r.r.outcome, SEG_OUT_OOM);
	assert_int_equal(r.r.exit_code, 137);
	assert_string_equal(r.r.reason, "killed at the container\'s memory limit (48 MiB), its reservation");
	assert_int_equal(r.r.fault, EXEC_FAULT_NONE);
	assert_int_equal(count_containers(), 0);
}

static void test_cancel_leaves_nothing(void **state)
{
	fixture *f = *state;
	/* A polite trial (SIGTERM through the attach process) and one that
	 * ignores SIGTERM (SIGKILL of the attach process, then rm -f). */
	for (int ignore = 0; ignore < 2; ignore++) {
		char *argv[] = {g_ctrial, "--sleep-ms", "100", ignore ? "--ignore-term" : NULL, NULL};
		char *envp[] = {"RELISH_TRIAL_ID=t3", "RELISH_RESOURCE_TO=100", NULL};
		exec_spec es;
		spec_for(&es, argv, envp, "t3", 100, NULL);
		run r = {.cancel_after = 2, .ex = f->ex};
		assert_int_equal(exec_launch(f->ex, &es, &cbs, &r, &r.seg, NULL), 0);
		wait_end(f, &r, 60);
		assert_int_equal(r.r.outcome, SEG_OUT_CANCELLED);
		assert_true(r.n_metrics >= 2 && r.n_metrics < 100);
		/* on_end comes only once the container is gone. */
		assert_int_equal(count_containers(), 0);
	}
}

static void test_timeout(void **state)
{
	fixture *f = *state;
	char *argv[] = {g_ctrial, "--hang-at", "2", NULL};
	char *envp[] = {"RELISH_TRIAL_ID=t4", "RELISH_RESOURCE_TO=5", NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "t4", 5, NULL);
	es.timeout_s = 1.5;
	run r = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r, &r.seg, NULL), 0);
	wait_end(f, &r, 60);
	assert_int_equal(r.r.outcome, SEG_OUT_TIMEOUT);
	assert_int_equal(r.n_metrics, 1);
	assert_int_equal(count_containers(), 0);
}

static void test_runtime_vs_trial_failures(void **state)
{
	fixture *f = *state;
	/* The image is checked when the executor is made... */
	container_options o;
	test_options(&o, "localhost/relish-no-such-image:latest");
	executor *bad = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(exec_podman_new(&f->loop, &o, &bad, &err), RL_ERUNTIME);
	assert_null(bad);
	assert_non_null(strstr(err.msg, "localhost/relish-no-such-image:latest not found"));

	/* ...and, unchecked, fails the segment as the runtime's fault. */
	o.check_image = 0;
	assert_int_equal(exec_podman_new(&f->loop, &o, &bad, &err), 0);
	char *argv[] = {g_ctrial, NULL};
	char *envp[] = {"RELISH_TRIAL_ID=t5", "RELISH_RESOURCE_TO=1", NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "t5", 1, NULL);
	run r = {0};
	assert_int_equal(exec_launch(bad, &es, &cbs, &r, &r.seg, NULL), 0);
	wait_end(f, &r, 60);
	assert_int_equal(r.r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r.r.fault, EXEC_FAULT_RUNTIME);
	assert_int_equal(r.r.exit_code, 125);
	assert_non_null(strstr(r.r.reason, "the image is missing"));
	/* the engine's own words follow relish's */
	if (!strstr(r.r.reason, strcmp(g_engine, "docker") ? "image not known" : "No such image"))
		fail_msg("reason: %s", r.r.reason);
	exec_shutdown(bad);
	exec_free(bad);

	/* A command the image cannot run. */
	char *argv2[] = {"/nonexistent/trial", NULL};
	es.argv = argv2;
	run r2 = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r2, &r2.seg, NULL), 0);
	wait_end(f, &r2, 60);
	assert_int_equal(r2.r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r2.r.fault, EXEC_FAULT_RUNTIME);
	assert_non_null(strstr(r2.r.reason, "cannot execute the trial's command"));

	/* The trial's own failure: exit 1 after one epoch. */
	char *argv3[] = {g_ctrial, "--fail-at", "2", NULL};
	char *envp3[] = {"RELISH_TRIAL_ID=t5", "RELISH_RESOURCE_TO=5", NULL};
	es.argv = argv3;
	es.envp = envp3;
	es.a.to = 5;
	run r3 = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r3, &r3.seg, NULL), 0);
	wait_end(f, &r3, 60);
	assert_int_equal(r3.r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r3.r.fault, EXEC_FAULT_NONE);
	assert_int_equal(r3.r.exit_code, 1);
	assert_string_equal(r3.r.reason, "exit code 1");
	assert_int_equal(r3.n_metrics, 1);
	assert_int_equal(count_containers(), 0);
}

static void test_warm_container(void **state)
{
	fixture *f = *state;
	char ck[128], env_ck[160];
	snprintf(ck, sizeof ck, "%s/ck-w", g_dir);
	snprintf(env_ck, sizeof env_ck, "RELISH_CHECKPOINT_DIR=%s", ck);
	char *argv[] = {g_ctrial, NULL};
	/* The second segment resumes from the first one's checkpoint, so it
	 * trains epochs 3 and 4 only. */
	char *envp[] = {"RELISH_TRIAL_ID=tw", "RELISH_MODE=warm", "RELISH_RESOURCE_FROM=0",
			"RELISH_RESOURCE_TO=2", env_ck, NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "tw", 2, ck);
	es.mode = TRIAL_MODE_WARM;
	es.reuse_key = "tw";
	es.a.params_json = "{\"x\":0.3,\"y\":2}";
	run r1 = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r1, &r1.seg, NULL), 0);
	wait_end(f, &r1, 60);
	assert_int_equal(r1.r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(r1.n_metrics, 2);
	assert_int_equal(r1.r.reused, 0);
	/* Parked: the container is still there, running. */
	assert_int_equal(count_containers(), 1);
	assert_int_equal(f->ex->ops->idle_count(f->ex), 1);

	es.a.from = 2;
	es.a.to = 4;
	run r2 = {0};
	assert_int_equal(exec_launch(f->ex, &es, &cbs, &r2, &r2.seg, NULL), 0);
	wait_end(f, &r2, 60);
	assert_int_equal(r2.r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(r2.r.reused, 1);
	assert_int_equal(r2.n_metrics, 2);
	assert_int_equal(count_containers(), 1);

	/* The trial is finished: its container goes. */
	exec_release(f->ex, "tw");
	uint64_t t0 = uv_hrtime();
	size_t n = 1;
	while (n > 0 && (double)(uv_hrtime() - t0) / 1e9 < 20) {
		for (int i = 0; i < 10; i++)
			uv_run(&f->loop, UV_RUN_ONCE);
		n = count_containers();
	}
	assert_int_equal(n, 0);
}

/* The executor in a child process, which is then SIGKILLed mid-segment. */
static void child_runs_segment(int wfd)
{
	uv_loop_t loop;
	uv_loop_init(&loop);
	container_options o;
	test_options(&o, IMAGE);
	o.check_image = 0;
	executor *ex = NULL;
	if (exec_podman_new(&loop, &o, &ex, NULL) < 0)
		_exit(2);
	char *argv[] = {g_ctrial, "--sleep-ms", "200", NULL};
	char *envp[] = {"RELISH_TRIAL_ID=orphan", "RELISH_RESOURCE_TO=500", NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "orphan", 500, NULL);
	run r = {0};
	if (exec_launch(ex, &es, &cbs, &r, &r.seg, NULL) < 0)
		_exit(3);
	while (r.n_metrics < 1)
		uv_run(&loop, UV_RUN_ONCE);
	if (write(wfd, "k", 1) != 1)
		_exit(4);
	for (;;)
		uv_run(&loop, UV_RUN_ONCE);
}

static void test_orphan_reconcile(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		child_runs_segment(p[1]);
	}
	close(p[1]);
	char c;
	ssize_t k = read(p[0], &c, 1);
	close(p[0]);
	assert_int_equal(k, 1);
	kill(pid, SIGKILL);
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFSIGNALED(st));

	/* The container outlived its relish. */
	container_options o;
	test_options(&o, IMAGE);
	container_info *v = NULL;
	size_t n = 0;
	assert_int_equal(container_list(&o, &v, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].state, "running");
	assert_string_equal(v[0].trial, "orphan");
	assert_string_equal(v[0].segment, "0-500");
	assert_string_equal(v[0].experiment, "ptest");
	free(v);

	/* A restarted relish reconciles: the orphan is removed and reported. */
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(container_reconcile(&o, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].trial, "orphan");
	assert_int_equal(strncmp(v[0].name, "relish-ptest-orphan-500-", 24), 0);
	free(v);
	assert_int_equal(count_containers(), 0);
}

/* The text of a file (at most 8 KiB), "" when missing. */
static void slurp(const char *path, char *buf, size_t n)
{
	buf[0] = '\0';
	FILE *fp = fopen(path, "r");
	if (!fp)
		return;
	size_t k = fread(buf, 1, n - 1, fp);
	buf[k] = '\0';
	fclose(fp);
}

/* What the trial itself reports of its privileges, as log lines. */
static const char priv_script[] =
	"grep -E '^(Uid|Gid|CapEff|CapBnd|NoNewPrivs):' /proc/self/status; "
	"awk '$2 == \"/\" { split($4, o, \",\"); print \"ROOT=\" o[1] }' /proc/self/mounts; "
	"if touch /etc/relish-probe 2>/dev/null; then echo ETC=writable; else echo ETC=not-writable; fi; "
	"touch /tmp/p && echo TMP=ok; "
	"touch \"$RELISH_CHECKPOINT_DIR/p\" && echo CKPT=ok; "
	"echo 'RELISH epoch=1 ok=1'";

static void run_priv(fixture *f, executor *ex, const char *tag, char *log, size_t n)
{
	char ck[128], env_ck[160], logp[128];
	snprintf(ck, sizeof ck, "%s/ck-%s", g_dir, tag);
	snprintf(logp, sizeof logp, "%s/%s.log", g_dir, tag);
	snprintf(env_ck, sizeof env_ck, "RELISH_CHECKPOINT_DIR=%s", ck);
	char *argv[] = {"/bin/sh", "-c", (char *)priv_script, NULL};
	char *envp[] = {"RELISH_TRIAL_ID=t9", env_ck, NULL};
	exec_spec es;
	spec_for(&es, argv, envp, "t9", 1, ck);
	es.log_path = logp;
	run r = {0};
	rl_err err;
	rl_err_clear(&err);
	if (exec_launch(ex, &es, &cbs, &r, &r.seg, &err) < 0)
		fail_msg("launch: %s", err.msg);
	wait_end(f, &r, 60);
	slurp(logp, log, n);
	if (r.r.outcome != SEG_OUT_COMPLETED)
		fail_msg("%s: %s: %s", tag, r.r.reason, log);
}

/*
 * Least privilege, seen from inside the trial: no capability at all
 * (effective and bounding sets empty), no_new_privs set, not uid 0, a
 * read-only root with a writable /tmp, and its checkpoint folder (made by
 * relish, as root) writable by it.  Then what a spec may grant comes back:
 * one capability, root, a writable root, new privileges.
 */
static void test_least_privilege(void **state)
{
	fixture *f = *state;
	char log[8192];
	run_priv(f, f->ex, "least", log, sizeof log);
	char def[32], uid_line[64];
	container_default_user(def, sizeof def);
	unsigned long uid = 0, gid = 0;
	assert_int_equal(sscanf(def, "%lu:%lu", &uid, &gid), 2);
	assert_true(uid != 0);
	snprintf(uid_line, sizeof uid_line, "Uid:\t%lu\t%lu\t%lu\t%lu\n", uid, uid, uid, uid);
	if (!strstr(log, uid_line) || !strstr(log, "CapEff:\t0000000000000000\n") ||
	    !strstr(log, "CapBnd:\t0000000000000000\n") || !strstr(log, "NoNewPrivs:\t1\n") ||
	    !strstr(log, "ROOT=ro\n") || !strstr(log, "ETC=not-writable\n") || !strstr(log, "TMP=ok\n") ||
	    !strstr(log, "CKPT=ok\n"))
		fail_msg("the trial saw more than least privilege (want %s):\n%s", uid_line, log);

	container_options o;
	test_options(&o, IMAGE);
	const char *caps[] = {"NET_RAW"};
	o.cap_add = caps;
	o.n_cap_add = 1;
	o.user = "0:0";
	o.writable_root = 1;
	o.new_privileges = 1;
	executor *granted = NULL;
	rl_err err;
	rl_err_clear(&err);
	if (exec_podman_new(&f->loop, &o, &granted, &err) < 0)
		fail_msg("exec_podman_new: %s", err.msg);
	run_priv(f, granted, "granted", log, sizeof log);
	/* CAP_NET_RAW is bit 13. */
	if (!strstr(log, "Uid:\t0\t0\t0\t0\n") || !strstr(log, "CapEff:\t0000000000002000\n") ||
	    !strstr(log, "CapBnd:\t0000000000002000\n") || !strstr(log, "NoNewPrivs:\t0\n") ||
	    !strstr(log, "ROOT=rw\n") || !strstr(log, "ETC=writable\n") || !strstr(log, "CKPT=ok\n"))
		fail_msg("the granted privileges did not arrive:\n%s", log);
	exec_shutdown(granted);
	exec_free(granted);
	uv_run(&f->loop, UV_RUN_NOWAIT);
	assert_int_equal(count_containers(), 0);
}

int main(void)
{
	/* Inside a container where the engine cannot start one: skipped
	 * (exit 77), with the helper's line saying why. */
	const char *src = getenv("RELISH_SRC");
	if (src) {
		const char *eng = getenv("RELISH_TEST_ENGINE");
		char probe[1200];
		snprintf(probe, sizeof probe, "%s/tests/support/nested-skip.sh %s", src,
			 eng && !strcmp(eng, "docker") ? "docker" : "podman");
		int st = system(probe);
		if (st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 77)
			return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ctrial_matches_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_limit_oom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cancel_leaves_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_runtime_vs_trial_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warm_container, setup, teardown),
		cmocka_unit_test_setup_teardown(test_orphan_reconcile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_least_privilege, setup, teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
