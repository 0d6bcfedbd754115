/*
 * bench_container.c - what a container costs per segment, against a plain
 * process, in the same command (docs/containers.md quotes the figures).
 *
 *   1. per-segment cost: ctrial, one epoch of 0 ms (so the segment is all
 *      overhead), run N times one after another with the process executor
 *      and N times with the podman executor; prints both medians (launch to
 *      on_end) and their ratio.
 *   2. digits: the PyTorch digits trial (examples/digits/train.py, MLP),
 *      S one-epoch segments of one trial, each resuming from the previous
 *      one's checkpoint (a segment-heavy schedule such as ASHA makes), with
 *      each executor; prints both wall times and their ratio.  Skipped with
 *      --no-digits or when /usr/bin/python3 cannot import torch.
 *
 * Usage: bench_container [N=20] [S=5] [--no-digits]
 * Env:   RELISH_SRC (default: the folder above this binary's build folder),
 *        RELISH_BUILD (default: this binary's folder); BENCH_ENGINE=docker
 *        measures docker instead of podman (a daemon must answer:
 *        DOCKER_CHECK_BENCH=1 scripts/docker-check.sh runs it against a
 *        private one); the image is built by scripts/podman-image.sh if
 *        missing; podman reads scripts/containers.conf.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/container.h"
#include "median.h"
#include "process/process.h"

#define IMAGE "localhost/relish-host:latest"

typedef struct run {
	int ended;
	exec_result r;
} run;

static void on_end(void *ud, exec_segment *seg, const exec_result *res)
{
	(void)seg;
	run *r = ud;
	r->ended = 1;
	r->r = *res;
}

/* Run one segment to its end; returns its wall time in seconds or -1. */
static double one(uv_loop_t *loop, executor *ex, const exec_spec *es)
{
	run r = {0};
	exec_callbacks cb = {.on_end = on_end};
	exec_segment *seg;
	rl_err err;
	rl_err_clear(&err);
	uint64_t t0 = uv_hrtime();
	if (exec_launch(ex, es, &cb, &r, &seg, &err) < 0) {
		fprintf(stderr, "launch: %s\n", err.msg);
		return -1;
	}
	while (!r.ended)
		uv_run(loop, UV_RUN_ONCE);
	double s = (double)(uv_hrtime() - t0) / 1e9;
	if (r.r.outcome != SEG_OUT_COMPLETED) {
		fprintf(stderr, "segment ended %s: %s\n", seg_outcome_name(r.r.outcome), r.r.reason);
		return -1;
	}
	return s;
}

static void finish(uv_loop_t *loop, executor *ex)
{
	exec_shutdown(ex);
	uv_run(loop, UV_RUN_DEFAULT);
	exec_free(ex);
	uv_run(loop, UV_RUN_DEFAULT);
}

int main(int argc, char **argv)
{
	int n = 20, s = 5, digits = 1;
	int pos = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-digits") == 0)
			digits = 0;
		else if (pos++ == 0)
			n = atoi(argv[i]);
		else
			s = atoi(argv[i]);
	}
	if (n < 1 || n > 1000 || s < 1 || s > 100) {
		fprintf(stderr, "usage: bench_container [N=20] [S=5] [--no-digits]\n");
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
		/* build/<kind>/bench_container -> the source is two levels up. */
		char tmp[PATH_MAX + 8];
		snprintf(tmp, sizeof tmp, "%s/../..", build);
		if (!realpath(tmp, src))
			snprintf(src, sizeof src, ".");
	}
	char conf[PATH_MAX + 32], ctrial[PATH_MAX + 16], cmd[2 * PATH_MAX];
	snprintf(conf, sizeof conf, "%s/scripts/containers.conf", src);
	snprintf(ctrial, sizeof ctrial, "%s/ctrial", build);
	const char *eng = getenv("BENCH_ENGINE");
	int docker = eng && !strcmp(eng, "docker");
	const char *ename = docker ? "docker" : "podman";
	snprintf(cmd, sizeof cmd, "CONTAINERS_CONF=%s PODMAN=%s %s/scripts/podman-image.sh", conf,
		 ename, src);
	if (system(cmd) != 0) {
		fprintf(stderr, "bench_container: building the image failed (is %s installed?)\n",
			ename);
		return 1;
	}
	char dir[] = "/tmp/relish-bench-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char owner[32];
	snprintf(owner, sizeof owner, "bench%08x", (unsigned)getpid());

	uv_loop_t loop;
	uv_loop_init(&loop);
	container_mount mounts[] = {
		{"/usr", NULL, 1}, {"/etc/alternatives", NULL, 1}, {"/etc/ld.so.cache", NULL, 1},
		{build, NULL, 1}, {src, NULL, 1},
	};
	container_options o;
	container_options_default(&o);
	if (docker)
		o.engine = CONTAINER_DOCKER;
	o.containers_conf = conf;
	o.image = IMAGE;
	o.experiment = "bench";
	o.owner = owner;
	o.state_dir = dir;
	o.mounts = mounts;
	o.n_mounts = 5;
	rl_err err;
	rl_err_clear(&err);
	executor *px = NULL, *cx = NULL;
	if (exec_process_new(&loop, NULL, &px, &err) < 0 ||
	    exec_podman_new(&loop, &o, &cx, &err) < 0) {
		fprintf(stderr, "bench_container: %s\n", err.msg);
		return 1;
	}

	/* 1. per-segment cost */
	char *cargv[] = {ctrial, NULL};
	char *cenv[] = {"RELISH_TRIAL_ID=b", "RELISH_RESOURCE_FROM=0", "RELISH_RESOURCE_TO=1", NULL};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = cargv, .envp = cenv, .cpus = 1,
			.memory_limit_mib = 256, .a = {.trial_id = "b", .from = 0, .to = 1}};
	double *tp = calloc((size_t)n, sizeof *tp), *tc = calloc((size_t)n, sizeof *tc);
	if (!tp || !tc)
		return 1;
	for (int i = 0; i < n; i++) {
		tp[i] = one(&loop, px, &es);
		tc[i] = one(&loop, cx, &es);
		if (tp[i] < 0 || tc[i] < 0)
			return 1;
	}
	double mp = median(tp, n), mc = median(tc, n);
	printf("per-segment cost, ctrial 1 epoch of 0 ms, median of %d:\n", n);
	printf("  process  %8.1f ms\n  %-8s %8.1f ms\n  ratio    %8.1fx  (+%.1f ms per segment)\n",
	       mp * 1e3, ename, mc * 1e3, mc / mp, (mc - mp) * 1e3);
	free(tp);
	free(tc);

	/* 2. digits */
	if (digits && system("/usr/bin/python3 -c 'import torch, sklearn' >/dev/null 2>&1") != 0) {
		printf("digits: skipped (/usr/bin/python3 cannot import torch and sklearn)\n");
		digits = 0;
	}
	if (digits) {
		char train[PATH_MAX + 32];
		snprintf(train, sizeof train, "%s/examples/digits/train.py", src);
		char *dargv[] = {"/usr/bin/python3", train, NULL};
		double wall[2] = {0, 0};
		for (int e = 0; e < 2; e++) {
			char ck[64], env_ck[96], env_from[48], env_to[48];
			snprintf(ck, sizeof ck, "%s/digits-%d", dir, e);
			snprintf(env_ck, sizeof env_ck, "RELISH_CHECKPOINT_DIR=%s", ck);
			char *denv[] = {"RELISH_TRIAL_ID=d", "RELISH_PARAMS={\"model\":\"mlp\"}",
					"OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "HOME=/tmp",
					env_ck, env_from, env_to, NULL};
			for (int i = 0; i < s; i++) {
				snprintf(env_from, sizeof env_from, "RELISH_RESOURCE_FROM=%d", i);
				snprintf(env_to, sizeof env_to, "RELISH_RESOURCE_TO=%d", i + 1);
				exec_spec d = {.mode = TRIAL_MODE_ONESHOT, .argv = dargv, .envp = denv,
					       .cpus = 1, .memory_limit_mib = e ? 1024 : 0,
					       .a = {.trial_id = "d", .from = i, .to = i + 1,
						     .checkpoint_dir = ck}};
				double t = one(&loop, e ? cx : px, &d);
				if (t < 0)
					return 1;
				wall[e] += t;
			}
		}
		printf("digits MLP, %d one-epoch segments of one trial (resume from checkpoint):\n", s);
		printf("  process  %8.2f s\n  %-8s %8.2f s\n  ratio    %8.2fx\n", wall[0], ename,
		       wall[1], wall[1] / wall[0]);
	}
	finish(&loop, cx);
	finish(&loop, px);
	uv_loop_close(&loop);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
