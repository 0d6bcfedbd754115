/*
 * bench_sim.c - speed and memory of the simulator.
 *
 * usage: bench_sim TRACE [GPUS [GPU_MEMORY_MIB [WINDOW]]]
 *
 * Replays TRACE under exclusive, pack and relish side by side (the figures
 * of relish simulate --policy all) and prints wall time, events per second
 * and peak RSS.  Then two scaling series of synthetic traces N times larger
 * with the same experiments (sim_trace_synthetic):
 *   denser  copies arriving over the original span, on clusters N times
 *           larger (GPUS x N), so the load per GPU is the same; factors
 *           BENCH_SIM_FACTORS (default "1 2 5 10");
 *   longer  copies arriving over N times the span (the same arrival rate),
 *           on BENCH_SIM_LONGER_GPUS GPUs throughout (default 2048, where
 *           no policy queues on the Philly trace; 0 skips the series);
 *           factors BENCH_SIM_LONGER_FACTORS (default "1 2 5 10 40").
 * The longer series does not simulate the same system for longer: the
 * Philly trace's jobs run up to 1,442 h while its arrivals span 227 h, so
 * at x1 most of the simulated time is a cluster draining, and each factor
 * up to about x40 sees more segments running at once (the "running"
 * column).  Time per event follows that state, not the trace's length;
 * hence the x40 against x10 line, where the state grows least.
 * Each policy runs alone (one thread, so that the figures do not depend on
 * how the threads shared the cores); the bench prints the median seconds
 * of repeated runs (BENCH_SIM_REPEAT; 5 up to x2, 3 beyond; interleaved
 * round by round over factors and policies), microseconds
 * per event, and the time of the last factor against the first (linear
 * scaling: their ratio).  Next to the times, the core's work per event
 * (sched_work: queue entries scanned, entries searched, device
 * evaluations, and the co-runners a placed segment found, share/ev) and
 * the segments running when a placement call began (running), which have
 * no noise (repeated runs must count the same, or the bench fails): work
 * per event that stays constant while time per event grows is the
 * machine's memory hierarchy, and the running state is what sets how much
 * of it an event touches; share/ev growing says the workload itself
 * shares more (every co-runner costs an overlap record and a re-timing in
 * the simulator).  With more than two factors the bench also prints the
 * scaling exponent k of seconds ~ factor^k (a least-squares fit over all
 * factors, so one noisy run moves it less than the ratio).
 * Figures only, no pass/fail: speed is never asserted in tests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "sim/sim.h"
#include "median.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * Run all three policies side by side (sim_run_tasks), as `relish simulate
 * --policy all` does; prints each policy's own wall time and the wall time
 * of the three together.  Returns that, or < 0 on error.
 */
static double run_all(const char *label, const sim_trace *t, const sim_model *m,
		      const sim_config *c)
{
	sim_task tasks[3];
	for (int p = 0; p < 3; p++)
		tasks[p] = (sim_task){.policy = (sched_policy)p, .cfg = c};
	double t0 = now_s();
	sim_run_tasks(t, m, tasks, 3);
	double total = now_s() - t0;
	size_t events = 0;
	int bad = 0;
	for (int p = 0; p < 3; p++) {
		sim_task *k = &tasks[p];
		if (k->rc < 0) {
			fprintf(stderr, "bench_sim: %s\n", k->err.msg);
			bad = 1;
			continue;
		}
		events += k->result->n_events;
		printf("  %-8s %-9s %8.3f s  %9zu events  %10.0f events/s  makespan %.0f h\n", label,
		       sched_policy_name(k->policy), k->wall_s, k->result->n_events,
		       (double)k->result->n_events / k->wall_s, k->result->makespan_s / 3600);
		sim_result_free(k->result);
	}
	if (bad)
		return -1;
	printf("  %-8s all three  %7.3f s  %9zu events  %10.0f events/s  peak RSS %.1f MB "
	       "(policies in parallel threads)\n", label, total, events, (double)events / total,
	       (double)peak_rss_kib() / 1024);
	return total;
}

typedef struct series {
	const char *coloc;        /* pair table, or NULL */
	int factors[16], n_f;
	int rep_small, rep_large; /* repetitions up to x2, and beyond */
} series;

/* A series' factors from a list such as "1 10 20" (def when unset). */
static void parse_factors(series *ser, const char *list, const char *def)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", list && *list ? list : def);
	ser->n_f = 0;
	for (char *tok = strtok(buf, " ,"); tok && ser->n_f < 16; tok = strtok(NULL, " ,"))
		if (atoi(tok) >= 1)
			ser->factors[ser->n_f++] = atoi(tok);
}

/* One factor and policy of a series: wall times of its runs, and the
 * first run's result (work counts, makespan) that the others must match. */
typedef struct cell {
	double wall[16];
	int n;
	sim_result *first;
} cell;

/* The time of factor index b against a, and (over more than two factors)
 * the exponent k of seconds ~ factor^k fitted over a..b. */
static void print_scaling(const char *name, const int *factors, double secs[][3], int a, int b)
{
	printf("scaling, %s: x%d against x%d took", name, factors[b], factors[a]);
	double ta = 0, tb = 0;
	for (int p = 0; p < 3; p++) {
		printf(" %s %.2fx%s", sched_policy_name((sched_policy)p), secs[b][p] / secs[a][p],
		       p < 2 ? "," : "");
		ta += secs[a][p];
		tb += secs[b][p];
	}
	printf("; all three %.2fx (linear = %.0f)\n", tb / ta, (double)factors[b] / factors[a]);
	if (b - a < 2)
		return;
	/* Every factor at once, less at the mercy of one noisy run: the
	 * least-squares slope of log seconds against log factor. */
	printf("scaling exponent, %s, over x%d..x%d (seconds ~ factor^k; linear: k = 1):", name,
	       factors[a], factors[b]);
	for (int p = 0; p < 3; p++) {
		double sx = 0, sy = 0, sxx = 0, sxy = 0, n = b - a + 1;
		for (int k = a; k <= b; k++) {
			double x = log((double)factors[k]), y = log(secs[k][p]);
			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
		}
		printf(" %s %.3f%s", sched_policy_name((sched_policy)p),
		       (n * sxy - sx * sy) / (n * sxx - sx * sx), p < 2 ? "," : "\n");
	}
}

/*
 * One scaling series: for each factor, a synthetic trace (mode) under each
 * policy alone, repeated; prints median seconds, time and work per event,
 * and the last factor against the first.  DENSER runs on clusters `factor`
 * times base->n_gpus; LONGER on gpus GPUs throughout.  The repetitions go
 * round by round over every factor and policy, so that a slow spell of
 * this shared machine falls on all of them rather than on one factor's
 * runs.  Returns < 0 on error.
 */
static int run_series(const series *ser, const sim_trace *t, const sim_config *base,
		      sim_synth_mode mode, int gpus)
{
	sim_trace *big[16] = {0};
	sim_model *mbig[16] = {0};
	sim_config ck[16];
	cell cells[16][3];
	double secs[16][3], scan[16][3], evals[16][3], share[16][3], running[16][3];
	int rc = -1;
	rl_err err;
	rl_err_clear(&err);
	memset(cells, 0, sizeof cells);
	if (mode == SIM_SYNTH_DENSER)
		printf("scaling, denser: synthetic traces x N arriving over the original span on "
		       "clusters N times larger (%d GPUs x N)", gpus);
	else
		printf("scaling, longer: synthetic traces x N arriving over N times the original "
		       "span, on %d GPUs throughout", gpus);
	printf("; each policy alone; median seconds of %d runs up to x2, %d beyond, "
	       "interleaved:\n", ser->rep_small, ser->rep_large);
	printf("  %-6s %8s %6s  %-9s %9s %9s %9s  %8s %8s %8s %8s %8s\n", "factor", "jobs", "GPUs",
	       "policy", "events", "seconds", "us/event", "scan/ev", "search/ev", "evals/ev",
	       "share/ev", "running");
	for (int k = 0; k < ser->n_f; k++) {
		int fk = ser->factors[k];
		if (sim_trace_synthetic(t, fk, mode, 1, &big[k], &err) < 0 ||
		    sim_model_new(big[k], ser->coloc, &mbig[k], &err) < 0) {
			fprintf(stderr, "bench_sim: %s\n", err.msg);
			goto out;
		}
		ck[k] = *base;
		ck[k].n_gpus = mode == SIM_SYNTH_DENSER ? gpus * fk : gpus;
		if (ck[k].window > 0 && mode == SIM_SYNTH_DENSER)
			ck[k].window *= fk;
	}
	int rounds = ser->rep_small > ser->rep_large ? ser->rep_small : ser->rep_large;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < ser->n_f; k++) {
			int fk = ser->factors[k];
			if (r >= (fk <= 2 ? ser->rep_small : ser->rep_large))
				continue;
			for (int p = 0; p < 3; p++) {
				cell *c = &cells[k][p];
				sim_task task = {.policy = (sched_policy)p, .cfg = &ck[k]};
				sim_run_tasks(big[k], mbig[k], &task, 1);
				if (task.rc < 0) {
					fprintf(stderr, "bench_sim: %s\n", task.err.msg);
					goto out;
				}
				c->wall[c->n++] = task.wall_s;
				if (!c->first) {
					c->first = task.result;
					continue;
				}
				/* the work counts depend on the inputs only */
				int same = !memcmp(&c->first->work, &task.result->work,
						   sizeof c->first->work) &&
					   c->first->makespan_s == task.result->makespan_s;
				sim_result_free(task.result);
				if (!same) {
					fprintf(stderr, "bench_sim: x%d %s: repeated runs differ\n", fk,
						sched_policy_name(task.policy));
					goto out;
				}
			}
		}
	}
	for (int k = 0; k < ser->n_f; k++) {
		for (int p = 0; p < 3; p++) {
			cell *c = &cells[k][p];
			double med = median(c->wall, c->n); /* sorts c->wall */
			secs[k][p] = med;
			double ev = (double)c->first->n_events;
			const sched_work *w = &c->first->work;
			scan[k][p] = (double)w->scanned / ev;
			evals[k][p] = (double)w->dev_evals / ev;
			share[k][p] = (double)w->partners / ev;
			running[k][p] = w->calls ? (double)w->running / (double)w->calls : 0;
			printf("  x%-5d %8zu %6d  %-9s %9zu %9.3f %9.2f  %8.2f %8.2f %8.2f %8.3f %8.0f\n",
			       ser->factors[k], big[k]->n_jobs, ck[k].n_gpus,
			       sched_policy_name((sched_policy)p), c->first->n_events, med,
			       1e6 * med / ev, (double)w->scanned / ev, (double)w->searched / ev,
			       (double)w->dev_evals / ev, share[k][p], running[k][p]);
		}
	}
	rc = 0;
out:
	for (int k = 0; k < ser->n_f; k++) {
		for (int p = 0; p < 3; p++)
			sim_result_free(cells[k][p].first);
		sim_model_free(mbig[k]);
		sim_trace_free(big[k]);
	}
	if (rc < 0)
		return rc;
	printf("  peak RSS %.1f MB\n", (double)peak_rss_kib() / 1024);
	if (ser->n_f < 2)
		return 0;
	int a = 0, b = ser->n_f - 1;
	const char *name = mode == SIM_SYNTH_DENSER ? "denser" : "longer";
	print_scaling(name, ser->factors, secs, a, b);
	/* x10 against x1 is the comparison the figures are quoted by; past
	 * x10 the longer series' running state grows least, the part of the
	 * curve that shows the cost of length alone. */
	for (int k = 1; k < b; k++) {
		if (ser->factors[k] == 10) {
			print_scaling(name, ser->factors, secs, a, k);
			print_scaling(name, ser->factors, secs, k, b);
		}
	}
	printf("work per event, %s, x%d against x%d (constant = 1):", name, ser->factors[b],
	       ser->factors[a]);
	for (int p = 0; p < 3; p++) {
		printf(" %s scan %.2fx", sched_policy_name((sched_policy)p), scan[b][p] / scan[a][p]);
		if (evals[a][p] > 0)
			printf(" evals %.2fx", evals[b][p] / evals[a][p]);
		if (share[a][p] > 0)
			printf(" share %.2fx", share[b][p] / share[a][p]);
		printf("%s", p < 2 ? "," : "\n");
	}
	printf("segments running per placement call, %s, x%d against x%d:", name,
	       ser->factors[b], ser->factors[a]);
	for (int p = 0; p < 3; p++)
		printf(" %s %.2fx%s", sched_policy_name((sched_policy)p),
		       running[a][p] > 0 ? running[b][p] / running[a][p] : 0, p < 2 ? "," : "\n");
	return 0;
}

int main(int argc, char **argv)
{
	/* line by line, so that a redirected run shows its progress */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: bench_sim TRACE [GPUS [GPU_MEMORY_MIB [WINDOW]]]\n");
		return 2;
	}
	sim_config c;
	sim_config_default(&c);
	c.n_gpus = argc > 2 ? atoi(argv[2]) : 64;
	c.gpu_mem_mib = argc > 3 ? (uint64_t)atoll(argv[3]) : 32768;
	if (argc > 4)
		c.window = atoi(argv[4]);
	rl_err err;
	rl_err_clear(&err);
	sim_trace *t = NULL;
	sim_model *m = NULL;
	double t0 = now_s();
	if (sim_trace_load(argv[1], &t, &err) < 0) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		return 1;
	}
	/* The pair table beside the trace, when there is one. */
	char coloc[4096];
	const char *slash = strrchr(argv[1], '/');
	snprintf(coloc, sizeof coloc, "%.*s/raw/lucid_colocate_info.csv",
		 slash ? (int)(slash - argv[1]) : 1, slash ? argv[1] : ".");
	FILE *f = fopen(coloc, "r");
	if (f)
		fclose(f);
	if (sim_model_new(t, f ? coloc : NULL, &m, &err) < 0) {
		fprintf(stderr, "bench_sim: %s\n", err.msg);
		return 1;
	}
	printf("bench_sim: %s, %zu jobs, %d GPUs x %llu MiB, window %d; loaded in %.3f s\n", argv[1],
	       t->n_jobs, c.n_gpus, (unsigned long long)c.gpu_mem_mib, c.window, now_s() - t0);
	double base = run_all("trace", t, m, &c);
	if (base < 0)
		return 1;
	/* The scaling series. */
	series ser = {.coloc = f ? coloc : NULL};
	parse_factors(&ser, getenv("BENCH_SIM_FACTORS"), "1 2 5 10");
	/* Medians of repeated runs: the short runs are the noisiest. */
	const char *rs = getenv("BENCH_SIM_REPEAT");
	ser.rep_small = 5;
	ser.rep_large = 3;
	if (rs && atoi(rs) >= 1)
		ser.rep_small = ser.rep_large = atoi(rs) < 16 ? atoi(rs) : 15;
	if (run_series(&ser, t, &c, SIM_SYNTH_DENSER, c.n_gpus) < 0)
		return 1;
	/* The same trace made longer, on a cluster that keeps up with it
	 * under every policy, so that no backlog grows with the trace (the
	 * running state still grows up to about x40: see the header). */
	const char *lg = getenv("BENCH_SIM_LONGER_GPUS");
	int longer_gpus = lg && *lg ? atoi(lg) : 2048;
	parse_factors(&ser, getenv("BENCH_SIM_LONGER_FACTORS"), "1 2 5 10 40");
	if (longer_gpus > 0 && run_series(&ser, t, &c, SIM_SYNTH_LONGER, longer_gpus) < 0)
		return 1;
	sim_model_free(m);
	sim_trace_free(t);
	return 0;
}
