/*
 * bench_mo.c - search quality with two objectives: the hypervolume relish
 * reaches after 200 trials on ZDT1 (6 variables) and DTLZ2 (4 variables,
 * 2 objectives), over many seeds, beside Optuna 5's default
 * multi-objective sampler measured the same way (bench/optuna_mo.py; pass
 * its output with --optuna).  docs/benchmarks.md, "Several objectives".
 *
 * A run goes through the real engine (engine.h) built from a spec text
 * whose objective is the list of both metrics, as a user writes it, so the
 * sampler sees what `relish run` would tell it: trials one at a time, each
 * reports f1 (engine_report) and f2 (engine_report_side), then its segment
 * ends.  Its hypervolume is that of every point it evaluated, against the
 * reference point (1.1, 1.1), by pareto_hypervolume2 (optuna_mo.py
 * computes the same sweep).  Random search is the floor.  "tpe" is the
 * spec's default with several objectives (the univariate estimator with
 * density kernels, docs/search.md), which is also what Optuna's default
 * does for several objectives; the joint one (`multivariate: true`) is
 * printed beside it.
 *
 * Usage: bench_mo [--seeds N] [--trials N] [--optuna FILE]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cell.h"
#include "search/engine.h"
#include "search/pareto.h"
#include "spec/spec.h"

static const double ref[2] = {1.1, 1.1};

static void zdt1(const double *x, size_t n, double *f)
{
	double s = 0;
	for (size_t i = 1; i < n; i++)
		s += x[i];
	double g = 1 + 9 * s / (double)(n - 1);
	f[0] = x[0];
	f[1] = g * (1 - sqrt(x[0] / g));
}

static void dtlz2(const double *x, size_t n, double *f)
{
	double g = 0;
	for (size_t i = 1; i < n; i++)
		g += (x[i] - 0.5) * (x[i] - 0.5);
	f[0] = (1 + g) * cos(x[0] * M_PI / 2);
	f[1] = (1 + g) * sin(x[0] * M_PI / 2);
}

typedef struct problem {
	const char *name;
	size_t dims;
	void (*f)(const double *x, size_t n, double *out);
} problem;

static const problem problems[] = {{"zdt1", 6, zdt1}, {"dtlz2", 4, dtlz2}};
#define N_PROBLEMS 2

typedef struct variant {
	const char *name;
	const char *search; /* the spec's search: lines besides seed, budget, space */
} variant;

static const variant variants[] = {
	{"random", "algorithm: random"},
	{"tpe", "algorithm: tpe"}, /* the default: univariate with several objectives */
	{"tpe multivariate", "algorithm: tpe\n  multivariate: true"},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static void die(const char *what, const rl_err *err)
{
	fprintf(stderr, "bench_mo: %s: %s\n", what, err->msg);
	exit(1);
}

/* Hypervolume of one run. */
static double run_once(const problem *p, const variant *v, uint64_t seed, int trials)
{
	char text[2048], box[1024];
	size_t at = 0;
	for (size_t d = 0; d < p->dims; d++)
		at += (size_t)snprintf(box + at, sizeof box - at, "%sx%zu: {type: uniform, low: 0, high: 1}",
				       d ? ", " : "", d);
	snprintf(text, sizeof text,
		 "name: mo\n"
		 "objective:\n  - {metric: f1, mode: min}\n  - {metric: f2, mode: min}\n"
		 "search:\n  %s\n  seed: %llu\n  max_trials: %d\n  max_concurrent: 1\n"
		 "  space: {%s}\n"
		 "trial: {command: [\"true\"]}\n",
		 v->search, (unsigned long long)seed, trials, box);
	rl_err err = {0};
	spec *sp;
	engine *e;
	if (spec_parse_text(text, strlen(text), "mo.yaml", 0, &sp, &err) < 0)
		die("spec", &err);
	if (engine_new(sp, &e, &err) < 0)
		die("engine", &err);
	if (engine_n_side(e) != 1 || strcmp(engine_side_metric(e, 0), "f2"))
		die("engine", &(rl_err){.msg = "expected f2 as the one side metric"});
	double *pts = malloc((size_t)trials * 2 * sizeof *pts);
	size_t n = 0;
	while (!engine_done(e)) {
		engine_work w;
		int rc = engine_next(e, &w, &err);
		if (rc < 0)
			die("engine_next", &err);
		if (rc == 0)
			break;
		double x[8], *f = pts + 2 * n++;
		for (size_t d = 0; d < p->dims; d++)
			x[d] = value_as_double(&w.cfg->v[d]);
		p->f(x, p->dims, f);
		engine_decision dec;
		if (engine_report(e, w.trial, 1.0, f[0], &err) < 0 ||
		    engine_report_side(e, w.trial, 0, f[1], &err) < 0 ||
		    engine_segment_done(e, w.trial, 1, 1.0, &dec, &err) < 0)
			die("reporting", &err);
	}
	if (n != (size_t)trials)
		die("engine", &(rl_err){.msg = "the run ended before its max_trials"});
	double hv = pareto_hypervolume2(pts, n, ref);
	free(pts);
	engine_free(e);
	spec_free(sp);
	return hv;
}

int main(int argc, char **argv)
{
	int seeds = 20, trials = 200;
	const char *optuna_path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--optuna") && i + 1 < argc)
			optuna_path = argv[++i];
		else {
			fprintf(stderr, "usage: bench_mo [--seeds N] [--trials N] [--optuna FILE]\n");
			return 2;
		}
	}
	if (seeds < 1 || trials < 1) {
		fprintf(stderr, "bench_mo: seeds and trials >= 1\n");
		return 2;
	}
	cell rel[N_PROBLEMS][N_VARIANTS] = {{{0}}}, opt[N_PROBLEMS] = {{0}};
	if (optuna_path) {
		FILE *f = fopen(optuna_path, "r");
		if (!f) {
			perror(optuna_path);
			return 1;
		}
		char line[256], name[32];
		int seed;
		double hv;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "optuna %31s %d %lf", name, &seed, &hv) == 3)
				for (int p = 0; p < N_PROBLEMS; p++)
					if (!strcmp(name, problems[p].name))
						cell_add(&opt[p], hv);
		fclose(f);
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int p = 0; p < N_PROBLEMS; p++)
		for (size_t v = 0; v < N_VARIANTS; v++)
			for (int s = 0; s < seeds; s++)
				cell_add(&rel[p][v], run_once(&problems[p], &variants[v], (uint64_t)s, trials));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("hypervolume after %d trials, reference point (1.1, 1.1), one at a time; mean +- "
	       "standard error (seeds)\n", trials);
	printf("%-8s %-26s %s\n", "problem", "sampler", "hypervolume");
	for (int p = 0; p < N_PROBLEMS; p++) {
		for (size_t v = 0; v < N_VARIANTS; v++)
			printf("%-8s relish %-19s %.4f +- %.4f (%d)\n", problems[p].name,
			       variants[v].name, cell_mean(&rel[p][v]), cell_se(&rel[p][v]), rel[p][v].n);
		if (opt[p].n)
			printf("%-8s %-26s %.4f +- %.4f (%d)\n", problems[p].name, "optuna 5 tpe (default)",
			       cell_mean(&opt[p]), cell_se(&opt[p]), opt[p].n);
	}
	printf("relish: %.1f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (int p = 0; p < N_PROBLEMS && optuna_path; p++) {
		const cell *a = &rel[p][1], *b = &opt[p];
		double d = cell_mean(b) - cell_mean(a), s = sqrt(cell_se(a) * cell_se(a) + cell_se(b) * cell_se(b));
		printf("goal %s hypervolume >= optuna 5's default: %.4f vs %.4f: %s\n", problems[p].name,
		       cell_mean(a), cell_mean(b),
		       d <= 0 ? "MET" : d <= s ? "EQUAL within one s.e. (counts as met)" : "NOT MET");
	}
	return 0;
}
