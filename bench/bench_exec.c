/*
 * bench_exec.c - what the process executor costs per segment.
 *
 * Runs the C trial (examples/ctrial, 1 epoch, 0 ms sleep) N times (default
 * 20) in three ways, interleaved so that load from other processes hits all
 * of them alike, and prints the median wall time of each:
 *   spawn   posix_spawn + waitpid of the same argv and environment, stdout
 *           to /dev/null: the floor any launcher pays (fork/exec, the
 *           program's own run, exit);
 *   launch  exec_launch (oneshot) on a libuv loop, from the call to on_end:
 *           pipes, a log file, the process group, RSS sampling, line
 *           parsing and outcome classification on top of the same work;
 *   reuse   one segment on a parked worker-mode ctrial (a JSON command on
 *           stdin, the done line back): what warm/worker modes pay instead.
 * overhead per segment = median(launch) - median(spawn).  The per-trial
 * overhead of a whole relish run (store, scheduler, search) is computed by
 * scripts/bench.sh from a ctrial experiment's database; see
 * docs/benchmarks.md.
 *
 * Usage: bench_exec [N] [CTRIAL]   (CTRIAL defaults to ctrial next to this
 * program, i.e. in the build folder).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/exec.h"
#include "process/process.h"
#include "median.h"

extern char **environ;

typedef struct run {
	int ended;
	exec_result r;
	uint64_t end_ns;
} run;

static void on_line(void *ud, exec_segment *seg, const contract_line *l)
{
	(void)ud;
	(void)seg;
	(void)l;
}

static void on_end(void *ud, exec_segment *seg, const exec_result *res)
{
	run *r = ud;
	(void)seg;
	r->end_ns = uv_hrtime();
	r->r = *res;
	r->ended = 1;
}

static const exec_callbacks cbs = {.on_line = on_line, .on_end = on_end};

/* Environment and argv of one segment of trial `id` in mode m. */
static char **segment_env(const char *id, const char *ck, trial_mode m)
{
	rl_value vals[2] = {{.type = VAL_FLOAT, .f = 0.3}, {.type = VAL_FLOAT, .f = 2}};
	param_def ps[2] = {{.name = "x", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
			   {.name = "y", .kind = PARAM_UNIFORM, .low = -5, .high = 5}};
	space sp = {.n = 2, .params = ps};
	config cf = {.n = 2, .v = vals};
	contract_vars v = {.space = m == TRIAL_MODE_WORKER ? NULL : &sp,
			   .config = m == TRIAL_MODE_WORKER ? NULL : &cf,
			   .trial_id = m == TRIAL_MODE_WORKER ? NULL : id,
			   .checkpoint_dir = m == TRIAL_MODE_WORKER ? NULL : ck,
			   .from = 0, .to = 1, .mode = m, .cpus = 1};
	char **env = NULL;
	rl_err err = {0};
	if (contract_env_build(environ, NULL, 0, &v, NULL, 0, &env, &err) < 0) {
		fprintf(stderr, "bench_exec: environment: %s\n", err.msg);
		exit(1);
	}
	return env;
}

static double time_spawn(char **argv, char **env)
{
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	uint64_t t0 = uv_hrtime();
	pid_t pid;
	int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "bench_exec: spawn %s: %s\n", argv[0], strerror(rc));
		exit(1);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	double dt = (double)(uv_hrtime() - t0) / 1e9;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench_exec: %s did not exit 0\n", argv[0]);
		exit(1);
	}
	return dt;
}

/* One segment through the executor; seconds from the launch call to on_end. */
static double time_launch(uv_loop_t *loop, executor *ex, char **argv, const char *dir, int i,
			  trial_mode m)
{
	char id[32], ck[PATH_MAX], logp[PATH_MAX];
	snprintf(id, sizeof id, "t%d", i);
	snprintf(ck, sizeof ck, "%s/%s", dir, id);
	snprintf(logp, sizeof logp, "%s/%s.log", dir, id);
	mkdir(ck, 0755);
	char **env = segment_env(id, ck, m);
	exec_spec es = {.mode = m, .reuse_key = m == TRIAL_MODE_WORKER ? "ctrial@cpu" : NULL,
			.argv = argv, .envp = env, .log_path = logp, .cpus = 1,
			.a = {.trial_id = id, .params_json = "{\"x\":0.3,\"y\":2}", .from = 0,
			      .to = 1, .checkpoint_dir = ck}};
	run r = {0};
	exec_segment *seg;
	rl_err err = {0};
	uint64_t t0 = uv_hrtime();
	if (exec_launch(ex, &es, &cbs, &r, &seg, &err) < 0) {
		fprintf(stderr, "bench_exec: launch: %s\n", err.msg);
		exit(1);
	}
	while (!r.ended)
		uv_run(loop, UV_RUN_ONCE);
	contract_strv_free(env);
	if (r.r.outcome != SEG_OUT_COMPLETED) {
		fprintf(stderr, "bench_exec: segment ended %s (%s)\n",
			seg_outcome_name(r.r.outcome), r.r.reason);
		exit(1);
	}
	return (double)(r.end_ns - t0) / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20;
	char ctrial[PATH_MAX];
	if (argc > 2) {
		snprintf(ctrial, sizeof ctrial, "%s", argv[2]);
	} else {
		char self[PATH_MAX];
		ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
		if (k <= 0) {
			perror("bench_exec: /proc/self/exe");
			return 1;
		}
		self[k] = '\0';
		snprintf(ctrial, sizeof ctrial, "%s/ctrial", dirname(self));
	}
	if (n < 1 || access(ctrial, X_OK) != 0) {
		fprintf(stderr, "usage: bench_exec [N>=1] [CTRIAL]  (%s: not executable)\n", ctrial);
		return 2;
	}
	char dir[] = "/tmp/relish-bench-exec-XXXXXX";
	if (!mkdtemp(dir)) {
		perror("bench_exec: mkdtemp");
		return 1;
	}

	uv_loop_t loop;
	uv_loop_init(&loop);
	executor *ex;
	rl_err err = {0};
	if (exec_process_new(&loop, NULL, &ex, &err) < 0) {
		fprintf(stderr, "bench_exec: %s\n", err.msg);
		return 1;
	}
	char *targv[] = {ctrial, "--sleep-ms", "0", NULL};
	double *sp = calloc((size_t)n, sizeof *sp), *la = calloc((size_t)n, sizeof *la),
	       *re = calloc((size_t)n, sizeof *re);
	/* One worker first, so every reuse sample finds it parked. */
	double first_worker = time_launch(&loop, ex, targv, dir, 1000000, TRIAL_MODE_WORKER);
	for (int i = 0; i < n; i++) {
		char id[32], ck[PATH_MAX];
		snprintf(id, sizeof id, "s%d", i);
		snprintf(ck, sizeof ck, "%s/%s", dir, id);
		mkdir(ck, 0755);
		char **env = segment_env(id, ck, TRIAL_MODE_ONESHOT);
		sp[i] = time_spawn(targv, env);
		contract_strv_free(env);
		la[i] = time_launch(&loop, ex, targv, dir, i, TRIAL_MODE_ONESHOT);
		re[i] = time_launch(&loop, ex, targv, dir, 1000 + i, TRIAL_MODE_WORKER);
	}
	double ms = median(sp, n) * 1e3, ml = median(la, n) * 1e3, mr = median(re, n) * 1e3;
	printf("bench_exec: ctrial 1 epoch, 0 ms sleep, median of %d (interleaved)\n", n);
	printf("  posix_spawn + waitpid          %8.3f ms\n", ms);
	printf("  exec_launch oneshot (to on_end) %7.3f ms\n", ml);
	printf("  overhead per segment (oneshot) %8.3f ms  (%.2fx spawn)\n", ml - ms, ml / ms);
	printf("  worker reuse, parked process   %8.3f ms  (first worker segment %.3f ms)\n", mr,
	       first_worker * 1e3);

	exec_shutdown(ex);
	uv_run(&loop, UV_RUN_DEFAULT);
	exec_free(ex);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	free(sp);
	free(la);
	free(re);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : 1;
}
