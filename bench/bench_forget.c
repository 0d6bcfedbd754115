/*
 * bench_forget.c - the scheduling core's memory in a service that never
 * restarts, where every trial is a new shape (a learning rate or a seed is
 * in the shape).
 *
 * usage: bench_forget [SHAPES [LEARN_MAX]]
 *
 * Feeds one core SHAPES new shapes (default 1,000,000), two at a time: both
 * measured alone (sched_learn), then run side by side on the one GPU and
 * ended, so that each step also teaches a pair of shapes each way and the
 * pair of their groups (8 groups, as many commands).  Runs the stream
 * twice, each in a child process of its own so that peak RSS is its own:
 * with learn_max LEARN_MAX (default SCHED_LEARN_MAX, the core's default)
 * and with no bound (learn_max 0, the core before it had one).  Prints
 * for each the resident memory after every fifth of the stream (VmRSS),
 * the peak (ru_maxrss), the shapes forgotten, and microseconds per shape;
 * the last line is the bounded run's time over the unbounded one's (what
 * forgetting costs).  Figures only, no pass/fail (docs/benchmarks.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched/sched.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* VmRSS of this process, MiB (0 when /proc cannot say). */
static double rss_mib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kib = 0;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = atof(line + 6);
	if (f)
		fclose(f);
	return kib / 1024;
}

/* A new shape's key: any well-spread 64-bit value other than 0. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return (x ^ (x >> 31)) | 1;
}

static sched_request req(uint64_t id, uint64_t i)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.job_id = id;
	r.shape = mix(i);
	r.family = 1 + i % 8;
	r.group = 1 + i % 8;
	r.needs_gpu = 1;
	r.n_devices = 1;
	r.mem_hint_mib = 3000;
	r.submit_time = (double)id;
	return r;
}

/* The stream under learn_max; prints its line.  Returns 0, or 1 when the
 * core refused something (a bug: the bench stops). */
static int run(size_t shapes, size_t learn_max)
{
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	o.learn_max = learn_max;
	sched *s;
	rl_err e;
	if (sched_new(&o, &s, &e) < 0) {
		fprintf(stderr, "bench_forget: %s\n", e.msg);
		return 1;
	}
	sched_device_info gpu = {.name = "gpu0", .is_gpu = 1, .mem_total_mib = 81920,
				 .compute_total = 100};
	if (sched_add_device(s, &gpu, &e) < 0) {
		fprintf(stderr, "bench_forget: %s\n", e.msg);
		return 1;
	}
	sched_observation alone = {.outcome = SEG_OUT_COMPLETED, .peak_mem_mib = 2500,
				   .mean_util = 40, .work = 10, .duration_s = 100};
	/* side by side each runs at 0.8 of its speed alone */
	sched_observation shared = alone;
	shared.work = 8;
	printf("  learn_max %-6zu RSS MiB after each fifth:", learn_max);
	size_t fifth = shapes / 5 - shapes / 5 % 2;
	double t0 = now_s(), t = 0;
	for (size_t i = 0; i < shapes; i += 2) {
		sched_request a = req(i + 1, i), b = req(i + 2, i + 1);
		sched_learn(s, &a, &alone);
		sched_learn(s, &b, &alone);
		sched_placement pl[2];
		if (sched_submit(s, &a, &e) < 0 || sched_submit(s, &b, &e) < 0 ||
		    sched_place(s, t, pl, 2) != 2) {
			fprintf(stderr, "bench_forget: step %zu: not placed side by side\n", i);
			return 1;
		}
		t += 100;
		if (sched_finished(s, a.seg_id, t, &shared, &e) < 0 ||
		    sched_finished(s, b.seg_id, t, &shared, &e) < 0) {
			fprintf(stderr, "bench_forget: %s\n", e.msg);
			return 1;
		}
		/* each trial ends with its one segment, as the live driver says */
		sched_job_forget(s, a.job_id);
		sched_job_forget(s, b.job_id);
		if (fifth && (i + 2) % fifth == 0)
			printf(" %.0f", rss_mib());
	}
	double dt = now_s() - t0;
	sched_work w;
	sched_work_get(s, &w);
	printf("\n  learn_max %-6zu %zu shapes in %.2f s, %.2f us per shape, %llu forgotten, "
	       "%llu pair measurements\n",
	       learn_max, shapes, dt, dt * 1e6 / (double)shapes, (unsigned long long)w.forgotten,
	       (unsigned long long)w.learnt);
	fflush(stdout);
	sched_free(s);
	return 0;
}

/* run() in a child; its seconds (from the child's CPU time) and peak RSS. */
static int child(size_t shapes, size_t learn_max, double *cpu_s, double *peak_mib)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(run(shapes, learn_max));
	int st;
	struct rusage ru;
	if (wait4(pid, &st, 0, &ru) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -1;
	*cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
		 (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
	*peak_mib = (double)ru.ru_maxrss / 1024;
	return 0;
}

int main(int argc, char **argv)
{
	size_t shapes = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	size_t learn_max = argc > 2 ? strtoull(argv[2], NULL, 10) : SCHED_LEARN_MAX;
	if (shapes < 2) {
		fprintf(stderr, "usage: bench_forget [SHAPES [LEARN_MAX]]\n");
		return 2;
	}
	printf("bench_forget: %zu new shapes, two at a time measured alone, then side by side "
	       "on one GPU\n", shapes);
	double cpu[2], peak[2];
	if (child(shapes, learn_max, &cpu[0], &peak[0]) < 0 ||
	    child(shapes, 0, &cpu[1], &peak[1]) < 0) {
		fprintf(stderr, "bench_forget: a run failed\n");
		return 1;
	}
	printf("  peak RSS: %.1f MiB with learn_max %zu, %.1f MiB with no bound\n", peak[0],
	       learn_max, peak[1]);
	printf("  CPU time: %.2f s against %.2f s: forgetting costs %.2fx\n", cpu[0], cpu[1],
	       cpu[0] / cpu[1]);
	return 0;
}
