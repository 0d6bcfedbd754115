/*
 * bench_slurm.c - what a Slurm job costs per segment, next to a plain
 * process and a podman container, in the same command (docs/slurm.md and
 * docs/benchmarks.md quote the figures).
 *
 * N one-epoch ctrial segments of 0 ms (so a segment is all overhead), one
 * after another, with the process executor, the podman executor and the
 * slurm executor; prints the median of each (launch to on_end) and, for
 * Slurm, its parts: submit to start (sbatch started to the step wrapper's
 * start line on the node), the run (start line to end line: the wrapper
 * and the trial), and end to relish seeing it (the end line to on_end:
 * the wait for Slurm to call the job over, at relish's poll rate).
 *
 * Slurm: the cluster SLURM_CONF names; without SLURM_CONF a private
 * two-node one is brought up with scripts/slurm-up.sh in a scratch folder
 * and stopped at the end.  Podman: scripts/containers.conf and the image
 * of scripts/podman-image.sh; skipped with --no-podman or when podman is
 * missing.
 *
 * Usage: bench_slurm [N=20] [--no-podman]
 * Env:   RELISH_SRC, RELISH_BUILD (defaults: from this binary's folder),
 *        BENCH_SLURM_POLL (squeue interval, s; default the executor's 1 s).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "container/container.h"
#include "slurm/slurm.h"
#include "median.h"
#include "process/process.h"

#define IMAGE "localhost/relish-host:latest"

typedef struct run {
	int ended;
	exec_result r;
	double queued_s;
	int started;
} run;

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_end(void *ud, exec_segment *seg, const exec_result *res)
{
	(void)seg;
	run *r = ud;
	r->ended = 1;
	r->r = *res;
}

static void on_event(void *ud, exec_segment *seg, const exec_event *ev)
{
	(void)seg;
	run *r = ud;
	if (ev->kind == EXEC_EV_STARTED) {
		r->started = 1;
		r->queued_s = ev->queued_s;
	}
}

/* One segment to its end: wall seconds (and r), or -1. */
static double one(uv_loop_t *loop, executor *ex, const exec_spec *es, run *r, double *t0w)
{
	memset(r, 0, sizeof *r);
	exec_callbacks cb = {.on_end = on_end, .on_event = on_event};
	exec_segment *seg;
	rl_err err;
	rl_err_clear(&err);
	*t0w = wall();
	uint64_t t0 = uv_hrtime();
	if (exec_launch(ex, es, &cb, r, &seg, &err) < 0) {
		fprintf(stderr, "launch: %s\n", err.msg);
		return -1;
	}
	while (!r->ended)
		uv_run(loop, UV_RUN_ONCE);
	double s = (double)(uv_hrtime() - t0) / 1e9;
	if (r->r.outcome != SEG_OUT_COMPLETED) {
		fprintf(stderr, "segment ended %s: %s\n", seg_outcome_name(r->r.outcome), r->r.reason);
		return -1;
	}
	return s;
}

static void finish(uv_loop_t *loop, executor *ex)
{
	if (!ex)
		return;
	exec_shutdown(ex);
	uv_run(loop, UV_RUN_DEFAULT);
	exec_free(ex);
	uv_run(loop, UV_RUN_DEFAULT);
}

/* The private Slurm and the scratch folder go whatever way main ends. */
static char cleanup_src[PATH_MAX], cleanup_dir[64];
static int cleanup_slurm;

static void cleanup(void)
{
	char cmd[2 * PATH_MAX + 64];
	if (cleanup_slurm) {
		snprintf(cmd, sizeof cmd, "%s/scripts/slurm-down.sh %s/slurm", cleanup_src, cleanup_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_slurm: slurm-down.sh failed\n");
	}
	if (cleanup_dir[0]) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", cleanup_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench_slurm: could not remove %s\n", cleanup_dir);
	}
}

int main(int argc, char **argv)
{
	int n = 20, podman = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-podman"))
			podman = 0;
		else
			n = atoi(argv[i]);
	}
	if (n < 1 || n > 1000) {
		fprintf(stderr, "usage: bench_slurm [N=20] [--no-podman]\n");
		return 2;
	}
	char self[PATH_MAX], build[PATH_MAX], src[PATH_MAX];
	ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
	self[k > 0 ? k : 0] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(build, sizeof build, "%s", getenv("RELISH_BUILD") ? getenv("RELISH_BUILD") : self);
	if (getenv("RELISH_SRC")) {
		snprintf(src, sizeof src, "%s", getenv("RELISH_SRC"));
	} else {
		char tmp[PATH_MAX + 8];
		snprintf(tmp, sizeof tmp, "%s/../..", build);
		if (!realpath(tmp, src))
			snprintf(src, sizeof src, ".");
	}
	char dir[] = "/tmp/relish-bench-slurm-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	snprintf(cleanup_src, sizeof cleanup_src, "%s", src);
	snprintf(cleanup_dir, sizeof cleanup_dir, "%s", dir);
	atexit(cleanup);
	char cmd[3 * PATH_MAX], conf[PATH_MAX + 64];
	int own_slurm = !getenv("SLURM_CONF") || !*getenv("SLURM_CONF");
	if (own_slurm) {
		cleanup_slurm = 1;
		/* nodes of its own names: another Slurm may run beside it */
		snprintf(cmd, sizeof cmd, "SLURM_UP_NODE_PREFIX=b%un %s/scripts/slurm-up.sh %s/slurm > %s/slurm.env",
			 (unsigned)getpid(), src, dir, dir);
		if (system(cmd) != 0) {
			fprintf(stderr, "bench_slurm: scripts/slurm-up.sh failed (Slurm installed? root?)\n");
			return 1;
		}
		snprintf(conf, sizeof conf, "%s/slurm/slurm.conf", dir);
		setenv("SLURM_CONF", conf, 1);
	}
	char ctrial[PATH_MAX + 16], relish[PATH_MAX + 16], cconf[PATH_MAX + 32];
	snprintf(ctrial, sizeof ctrial, "%s/ctrial", build);
	snprintf(relish, sizeof relish, "%s/relish", build);
	snprintf(cconf, sizeof cconf, "%s/scripts/containers.conf", src);
	if (podman && system("command -v podman >/dev/null 2>&1") != 0) {
		printf("podman: skipped (not installed)\n");
		podman = 0;
	}
	if (podman) {
		snprintf(cmd, sizeof cmd, "CONTAINERS_CONF=%s %s/scripts/podman-image.sh", cconf, src);
		if (system(cmd) != 0) {
			printf("podman: skipped (the image could not be built)\n");
			podman = 0;
		}
	}

	uv_loop_t loop;
	uv_loop_init(&loop);
	rl_err err;
	rl_err_clear(&err);
	executor *px = NULL, *cx = NULL, *sx = NULL;
	char owner[32], state[PATH_MAX + 16];
	snprintf(owner, sizeof owner, "bench%08x", (unsigned)getpid());
	snprintf(state, sizeof state, "%s/state", dir);
	slurm_options so;
	slurm_options_default(&so);
	so.experiment = "bench";
	so.owner = owner;
	so.state_dir = state;
	so.step_program = relish;
	if (getenv("BENCH_SLURM_POLL"))
		so.poll_interval_s = atof(getenv("BENCH_SLURM_POLL"));
	if (exec_process_new(&loop, NULL, &px, &err) < 0 || exec_slurm_new(&loop, &so, &sx, &err) < 0) {
		fprintf(stderr, "bench_slurm: %s\n", err.msg);
		return 1;
	}
	container_mount mounts[] = {
		{"/usr", NULL, 1}, {"/etc/alternatives", NULL, 1}, {"/etc/ld.so.cache", NULL, 1},
		{build, NULL, 1}, {src, NULL, 1},
	};
	if (podman) {
		container_options o;
		container_options_default(&o);
		o.containers_conf = cconf;
		o.image = IMAGE;
		o.experiment = "bench";
		o.owner = owner;
		o.state_dir = dir;
		o.mounts = mounts;
		o.n_mounts = 5;
		if (exec_podman_new(&loop, &o, &cx, &err) < 0) {
			printf("podman: skipped (%s)\n", err.msg);
			podman = 0;
		}
	}

	char *cargv[] = {ctrial, NULL};
	char ck[PATH_MAX + 8], env_ck[PATH_MAX + 32], log[PATH_MAX + 16];
	snprintf(ck, sizeof ck, "%s/ck", dir);
	snprintf(env_ck, sizeof env_ck, "RELISH_CHECKPOINT_DIR=%s", ck);
	/* the sanitizer build's leak check is not what is measured */
	char *cenv[] = {"RELISH_TRIAL_ID=b", "RELISH_RESOURCE_FROM=0", "RELISH_RESOURCE_TO=1",
			"ASAN_OPTIONS=detect_leaks=0", "PATH=/usr/bin:/bin", env_ck, NULL};
	exec_cluster_request creq = {.node = NULL, .mem_mib = 256}; /* Slurm picks the node */
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = cargv, .envp = cenv, .cpus = 1,
			.memory_limit_mib = 256, .a = {.trial_id = "b", .from = 0, .to = 1}};
	double *tp = calloc((size_t)n, sizeof *tp), *tc = calloc((size_t)n, sizeof *tc);
	double *ts = calloc((size_t)n, sizeof *ts), *tq = calloc((size_t)n, sizeof *tq);
	double *tr = calloc((size_t)n, sizeof *tr), *te = calloc((size_t)n, sizeof *te);
	if (!tp || !tc || !ts || !tq || !tr || !te)
		return 1;
	for (int i = 0; i < n; i++) {
		run r;
		double t0w;
		if ((tp[i] = one(&loop, px, &es, &r, &t0w)) < 0)
			return 1;
		if (podman && (tc[i] = one(&loop, cx, &es, &r, &t0w)) < 0)
			return 1;
		exec_spec s = es;
		snprintf(log, sizeof log, "%s/seg-%d.log", dir, i);
		s.log_path = log;
		creq.seq = i;
		s.cluster = &creq;
		if ((ts[i] = one(&loop, sx, &s, &r, &t0w)) < 0)
			return 1;
		double tend = t0w + ts[i];
		tq[i] = r.queued_s;
		tr[i] = r.r.duration_s;
		te[i] = tend - (t0w + r.queued_s + r.r.duration_s);
	}
	printf("per-segment cost, ctrial 1 epoch of 0 ms, median of %d (launch to end seen):\n", n);
	double mp = median(tp, n), ms = median(ts, n);
	printf("  process  %8.1f ms\n", mp * 1e3);
	if (podman) {
		double mc = median(tc, n);
		printf("  podman   %8.1f ms  (%.1fx process)\n", mc * 1e3, mc / mp);
	}
	printf("  slurm    %8.1f ms  (%.1fx process)\n", ms * 1e3, ms / mp);
	printf("    submit to start  %8.1f ms  (sbatch to the step wrapper's first line)\n",
	       median(tq, n) * 1e3);
	printf("    run              %8.1f ms  (wrapper and trial)\n", median(tr, n) * 1e3);
	printf("    end to seen      %8.1f ms  (wrapper's last line to on_end; squeue every %g s, "
	       "0.25 s while an end is awaited)\n",
	       median(te, n) * 1e3, so.poll_interval_s > 0 ? so.poll_interval_s : 1.0);
	finish(&loop, px);
	finish(&loop, cx);
	finish(&loop, sx);
	uv_loop_close(&loop);
	free(tp);
	free(tc);
	free(ts);
	free(tq);
	free(tr);
	free(te);
	return 0;
}
