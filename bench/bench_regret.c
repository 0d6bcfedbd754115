/*
 * bench_regret.c - search quality: simple regret of relish's samplers on
 * Branin (2-D) and Hartmann6 (6-D) after 100 trials, over many seeds, run
 * one at a time and 4 at a time, beside Optuna 3.1's TPE measured the same
 * way (bench/optuna_regret.py; scripts/bench-regret.sh runs both and passes
 * Optuna's runs in with --optuna).
 *
 * Each run goes through the real engine (engine.h) built from a spec text,
 * so the sampler sees exactly what `relish run` would tell it.  A parallel
 * run is simulated as a real one unfolds (docs/search.md, "Regret"):
 *   - at most `concurrent` trials run; a new one is asked for as soon as a
 *     slot is free, while the others are still running;
 *   - trial k of seed s takes duration(s, k) = 0.5 + U(s, k) time units,
 *     U uniform in [0, 1) from a hash of (s, k) that optuna_regret.py
 *     computes identically, so both tools see trials finish in the same
 *     order by index;
 *   - results arrive in completion order (the earliest finish first; equal
 *     finishes by trial index).
 * With concurrent = 1 this is the sequential run.  The regret of a run is
 * the best value found minus the function's minimum.
 *
 * Usage: bench_regret [--all] [--seeds N] [--trials N] [--optuna FILE]
 *                     [--runs FUNCTION VARIANT CONCURRENT]
 *   --all           also the functions outside the goals (mixed4: the 4-D
 *                   mixed space of tests/tpe_mixed.h; styblinski4; camel),
 *                   a check that a change does not fit two functions only
 *   --optuna FILE   lines "optuna FUNCTION VARIANT CONCURRENT SEED REGRET"
 *                   (optuna_regret.py's output) join the table and goals
 *   --runs ...      print each seed's best value of one setting instead
 *                   (scripts/bench-regret.sh compares them with relish run)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cell.h"
#include "search/engine.h"
#include "spec/spec.h"

#define MAX_RUNS 4096

/* ---- the functions ------------------------------------------------------ */

static double branin(const double *x)
{
	double b = 5.1 / (4 * M_PI * M_PI), c = 5 / M_PI, t = 1 / (8 * M_PI);
	double q = x[1] - b * x[0] * x[0] + c * x[0] - 6;
	return q * q + 10 * (1 - t) * cos(x[0]) + 10;
}

static double hartmann6(const double *x)
{
	static const double alpha[4] = {1.0, 1.2, 3.0, 3.2};
	static const double a[4][6] = {{10, 3, 17, 3.5, 1.7, 8},
				       {0.05, 10, 17, 0.1, 8, 14},
				       {3, 3.5, 1.7, 10, 17, 8},
				       {17, 8, 0.05, 10, 0.1, 14}};
	static const double p[4][6] = {{0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886},
				       {0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991},
				       {0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650},
				       {0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381}};
	double sum = 0;
	for (int i = 0; i < 4; i++) {
		double e = 0;
		for (int j = 0; j < 6; j++)
			e += a[i][j] * (x[j] - p[i][j]) * (x[j] - p[i][j]);
		sum += alpha[i] * exp(-e);
	}
	return -sum;
}

/* The 4-D mixed problem of tests/tpe_mixed.h (log-uniform, log int, a
 * 5-way choice, uniform), through the configuration's values. */
static double mixed4(const double *x)
{
	static const double batch[] = {16, 32, 64, 128, 256}, penalty[] = {0.3, 0.1, 0.0, 0.05, 0.2};
	double pen = 1;
	for (int b = 0; b < 5; b++)
		if (x[2] == batch[b])
			pen = penalty[b];
	double a = log10(x[0]) + 2.5, h = log2(x[1]) - 7, d = x[3] - 0.2;
	return a * a + h * h / 4 + pen + d * d * 4;
}

/* Styblinski-Tang in 4-D, scaled by 1/d: many local minima, separable. */
static double styblinski4(const double *x)
{
	double sum = 0;
	for (int i = 0; i < 4; i++)
		sum += pow(x[i], 4) - 16 * x[i] * x[i] + 5 * x[i];
	return sum / 2 / 4;
}

/* Six-hump camel: two global minima among six. */
static double camel(const double *x)
{
	double a = x[0], b = x[1];
	return (4 - 2.1 * a * a + pow(a, 4) / 3) * a * a + a * b + (-4 + 4 * b * b) * b * b;
}

typedef struct function {
	const char *name;
	int dims;
	double (*f)(const double *x);
	double minimum;
	const char *space; /* YAML flow map of search.space */
	int goal;          /* one of issue 16's two functions (always run) */
} function;

static const function functions[] = {
	{"branin", 2, branin, 0.397887357729738,
	 "{x0: {type: uniform, low: -5, high: 10}, x1: {type: uniform, low: 0, high: 15}}", 1},
	{"hartmann6", 6, hartmann6, -3.32236801141551,
	 "{x0: {type: uniform, low: 0, high: 1}, x1: {type: uniform, low: 0, high: 1},"
	 " x2: {type: uniform, low: 0, high: 1}, x3: {type: uniform, low: 0, high: 1},"
	 " x4: {type: uniform, low: 0, high: 1}, x5: {type: uniform, low: 0, high: 1}}", 1},
	{"mixed4", 4, mixed4, 0.0,
	 "{lr: {type: loguniform, low: 1.0e-5, high: 1.0e-1},"
	 " hidden: {type: int, low: 16, high: 1024, log: true},"
	 " batch: [16, 32, 64, 128, 256], dropout: {type: uniform, low: 0, high: 0.7}}", 0},
	{"styblinski4", 4, styblinski4, -39.16616570377142,
	 "{x0: {type: uniform, low: -5, high: 5}, x1: {type: uniform, low: -5, high: 5},"
	 " x2: {type: uniform, low: -5, high: 5}, x3: {type: uniform, low: -5, high: 5}}", 0},
	{"camel", 2, camel, -1.031628453489877,
	 "{x0: {type: uniform, low: -3, high: 3}, x1: {type: uniform, low: -2, high: 2}}", 0},
};
#define N_FUNCTIONS (sizeof functions / sizeof functions[0])

/* ---- relish's settings, one row each ------------------------------------- */

typedef struct variant {
	const char *name;
	const char *search; /* extra keys of the search section */
	int parallel_same;  /* the sampler ignores running trials: 4 at a time
			     * proposes what sequential does, print once */
} variant;

static const variant variants[] = {
	{"random", "algorithm: random", 1},
	{"sobol", "algorithm: sobol", 1},
	{"tpe", "algorithm: tpe", 0},
	{"tpe univariate", "algorithm: tpe\n  multivariate: false", 0},
	{"tpe pending=ignore", "algorithm: tpe\n  pending: ignore", 0},
	{"gp", "algorithm: gp", 0},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

/* ---- the simulated run ---------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Duration of trial k of seed s (optuna_regret.py: duration()). */
static double duration(uint64_t s, uint64_t k)
{
	uint64_t h = mix64(mix64(s + 0x9e3779b97f4a7c15ULL) + (k + 1) * 0xd1b54a32d192ed03ULL);
	return 0.5 + (double)(h >> 11) * 0x1.0p-53;
}

/* CPU time of the asks of trials ASK_FROM..trials-1 (about 100 trials in
 * the history at the default budget), per variant: the cost of an ask. */
#define ASK_FROM 90
static double ask_ms_sum[16];
static long ask_count[16];

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct running {
	uint64_t trial;
	double finish, value;
} running;

static void die(const char *what, const rl_err *err)
{
	fprintf(stderr, "bench_regret: %s: %s\n", what, err->msg);
	exit(1);
}

/* Best value of one run. */
static double run_once(const function *fn, const variant *v, int concurrent, uint64_t seed,
		       int trials)
{
	char text[2048];
	snprintf(text, sizeof text,
		 "name: regret\n"
		 "objective: {metric: value, mode: min}\n"
		 "search:\n  %s\n  seed: %llu\n  max_trials: %d\n  max_concurrent: %d\n"
		 "  space: %s\n"
		 "trial: {command: [\"true\"]}\n",
		 v->search, (unsigned long long)seed, trials, concurrent, fn->space);
	rl_err err = {0};
	spec *sp;
	engine *e;
	if (spec_parse_text(text, strlen(text), "regret.yaml", 0, &sp, &err) < 0)
		die("spec", &err);
	if (engine_new(sp, &e, &err) < 0)
		die("engine", &err);
	running run[64];
	int n_run = 0;
	double now = 0, best = INFINITY;
	while (!engine_done(e)) {
		engine_work w;
		int rc;
		double c0 = cpu_ms();
		while ((rc = engine_next(e, &w, &err)) == 1) {
			if (w.trial >= ASK_FROM && w.is_new_trial) {
				ask_ms_sum[v - variants] += cpu_ms() - c0;
				ask_count[v - variants]++;
			}
			double x[16];
			for (int d = 0; d < fn->dims; d++)
				x[d] = value_as_double(&w.cfg->v[d]);
			run[n_run++] = (running){w.trial, now + duration(seed, w.trial), fn->f(x)};
			c0 = cpu_ms();
		}
		if (rc < 0)
			die("engine_next", &err);
		if (n_run == 0)
			break;
		int first = 0;
		for (int i = 1; i < n_run; i++)
			if (run[i].finish < run[first].finish ||
			    (run[i].finish == run[first].finish && run[i].trial < run[first].trial))
				first = i;
		running r = run[first];
		run[first] = run[--n_run];
		now = r.finish;
		engine_decision d;
		if (engine_report(e, r.trial, 1.0, r.value, &err) < 0 ||
		    engine_segment_done(e, r.trial, 1, 1.0, &d, &err) < 0)
			die("reporting", &err);
		if (r.value < best)
			best = r.value;
	}
	engine_free(e);
	spec_free(sp);
	return best;
}

/* ---- statistics and the table ------------------------------------------- */

static void print_cell(const cell *c)
{
	if (!c->n)
		printf(" %-24s", "-");
	else
		printf(" %9.4g +- %-8.2g (%3d)", cell_mean(c), cell_se(c), c->n);
}

/* Optuna's runs, read from optuna_regret.py's output. */
#define MAX_OPTUNA_VARIANTS 8
typedef struct optuna_row {
	char name[32];
	cell seq[N_FUNCTIONS], par[N_FUNCTIONS];
} optuna_row;

static optuna_row optuna[MAX_OPTUNA_VARIANTS];
static int n_optuna;

static optuna_row *optuna_find(const char *name, int create)
{
	for (int i = 0; i < n_optuna; i++)
		if (!strcmp(optuna[i].name, name))
			return &optuna[i];
	if (!create || n_optuna == MAX_OPTUNA_VARIANTS)
		return NULL;
	optuna_row *r = &optuna[n_optuna++];
	snprintf(r->name, sizeof r->name, "%s", name);
	return r;
}

static int function_index(const char *name)
{
	for (size_t i = 0; i < N_FUNCTIONS; i++)
		if (!strcmp(functions[i].name, name))
			return (int)i;
	return -1;
}

static void read_optuna(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		perror(path);
		exit(1);
	}
	char line[256], fname[32], vname[32];
	int conc;
	unsigned long long seed;
	double regret;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "optuna %31s %31s %d %llu %lf", fname, vname, &conc, &seed,
			   &regret) != 5)
			continue;
		int fi = function_index(fname);
		optuna_row *r = optuna_find(vname, 1);
		if (fi < 0 || !r)
			continue;
		cell_add(conc == 1 ? &r->seq[fi] : &r->par[fi], regret);
	}
	fclose(f);
}

static const char *verdict(int ok)
{
	return ok ? "MET" : "NOT MET";
}

/* Is a's mean at most b's, or within one standard error of the
 * difference (sqrt(se_a^2 + se_b^2))?  "MET", "EQUAL within one s.e." or
 * "NOT MET". */
static const char *at_most(const cell *a, const cell *b)
{
	double ma = cell_mean(a), mb = cell_mean(b);
	if (ma <= mb)
		return "MET";
	double se = sqrt(cell_se(a) * cell_se(a) + cell_se(b) * cell_se(b));
	return ma - mb <= se ? "EQUAL within one s.e. (counts as met)" : "NOT MET";
}

static int listed(const char *list, const char *name)
{
	if (!list)
		return 1;
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return 1;
		p += len + (e != NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int seeds = 200, gp_seeds = 50, trials = 100, par = 4;
	const char *optuna_path = NULL, *only = NULL;
	const char *runs_fn = NULL, *runs_variant = NULL;
	int runs_conc = 1, all = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--all"))
			all = 1;
		else if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--gp-seeds") && i + 1 < argc)
			gp_seeds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trials") && i + 1 < argc)
			trials = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--optuna") && i + 1 < argc)
			optuna_path = argv[++i];
		else if (!strcmp(argv[i], "--variants") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "--runs") && i + 3 < argc) {
			runs_fn = argv[++i];
			runs_variant = argv[++i];
			runs_conc = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: bench_regret [--all] [--seeds N] [--gp-seeds N] [--trials N] "
					"[--variants NAME,...] [--optuna FILE] "
					"[--runs FUNCTION VARIANT CONCURRENT]\n");
			return 2;
		}
	}
	if (seeds < 1 || seeds > MAX_RUNS || gp_seeds < 1 || trials < 1) {
		fprintf(stderr, "bench_regret: seeds 1-%d and trials >= 1\n", MAX_RUNS);
		return 2;
	}

	if (runs_fn) {
		int fi = function_index(runs_fn);
		const variant *v = NULL;
		for (size_t i = 0; i < N_VARIANTS; i++)
			if (!strcmp(variants[i].name, runs_variant))
				v = &variants[i];
		if (fi < 0 || !v || runs_conc < 1) {
			fprintf(stderr, "bench_regret: --runs: unknown function or variant\n");
			return 2;
		}
		for (int s = 0; s < seeds; s++)
			printf("%d %.17g\n", s, run_once(&functions[fi], v, runs_conc, (uint64_t)s, trials));
		return 0;
	}

	if (optuna_path)
		read_optuna(optuna_path);

	cell seq[N_FUNCTIONS][N_VARIANTS] = {{{0}}}, four[N_FUNCTIONS][N_VARIANTS] = {{{0}}};
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t f = 0; f < N_FUNCTIONS; f++)
		for (size_t v = 0; v < N_VARIANTS && (all || functions[f].goal); v++) {
			if (!listed(only, variants[v].name))
				continue;
			/* GP costs milliseconds an ask: fewer seeds. */
			int n_seeds = strcmp(variants[v].name, "gp") ? seeds : gp_seeds;
			for (int s = 0; s < n_seeds; s++) {
				const function *fn = &functions[f];
				double b = run_once(fn, &variants[v], 1, (uint64_t)s, trials);
				cell_add(&seq[f][v], b - fn->minimum);
				if (variants[v].parallel_same)
					continue;
				b = run_once(fn, &variants[v], par, (uint64_t)s, trials);
				cell_add(&four[f][v], b - fn->minimum);
			}
		}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("simple regret after %d trials (best value - minimum), mean +- standard error "
	       "(seeds); %d at a time: asks while %d others run, results in completion order\n",
	       trials, par, par - 1);
	printf("%-10s %-26s %-26s %-26s\n", "function", "sampler", " sequential",
	       " 4 at a time");
	for (size_t f = 0; f < N_FUNCTIONS; f++) {
		if (!all && !functions[f].goal)
			continue;
		for (size_t v = 0; v < N_VARIANTS; v++) {
			if (!listed(only, variants[v].name))
				continue;
			char name[64];
			snprintf(name, sizeof name, "relish %s", variants[v].name);
			printf("%-10s %-26s", functions[f].name, name);
			print_cell(&seq[f][v]);
			if (variants[v].parallel_same)
				printf("  (same: ignores running trials)");
			else
				print_cell(&four[f][v]);
			printf("\n");
		}
		for (int o = 0; o < n_optuna; o++) {
			char name[64];
			snprintf(name, sizeof name, "optuna %s", optuna[o].name);
			printf("%-10s %-26s", functions[f].name, name);
			print_cell(&optuna[o].seq[f]);
			print_cell(&optuna[o].par[f]);
			printf("\n");
		}
	}
	printf("relish: %.1f s\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	for (size_t v = 0; v < N_VARIANTS; v++)
		if (ask_count[v])
			printf("relish %s: %.2f ms cpu per ask of trials %d-%d (mean of %ld asks)\n",
			       variants[v].name, ask_ms_sum[v] / (double)ask_count[v], ASK_FROM,
			       trials - 1, ask_count[v]);

	/* The goals of issue 29. */
	size_t tv = N_VARIANTS, gv = N_VARIANTS;
	for (size_t v = 0; v < N_VARIANTS; v++) {
		if (!strcmp(variants[v].name, "tpe"))
			tv = v;
		if (!strcmp(variants[v].name, "gp"))
			gv = v;
	}
	const optuna_row *ot = optuna_find("tpe", 0), *og = optuna_find("gp", 0);
	for (size_t f = 0; f < N_FUNCTIONS; f++) {
		if (!functions[f].goal)
			continue;
		const char *fname = functions[f].name;
		if (ot && seq[f][tv].n) {
			printf("goal %s default tpe sequential <= optuna 5 tpe: %.4f vs %.4f: %s\n", fname,
			       cell_mean(&seq[f][tv]), cell_mean(&ot->seq[f]),
			       at_most(&seq[f][tv], &ot->seq[f]));
			printf("goal %s default tpe 4 at a time <= optuna 5 tpe: %.4f vs %.4f: %s\n", fname,
			       cell_mean(&four[f][tv]), cell_mean(&ot->par[f]),
			       at_most(&four[f][tv], &ot->par[f]));
		}
		if (gv < N_VARIANTS && seq[f][gv].n) {
			double s = cell_mean(&seq[f][gv]), p = cell_mean(&four[f][gv]);
			if (og && og->seq[f].n) {
				double o = cell_mean(&og->seq[f]);
				printf("goal %s gp sequential within 3x optuna 5 gp: %.3g vs %.3g (%.2fx): %s\n",
				       fname, s, o, s / o, verdict(s <= 3 * o));
			}
			printf("goal %s gp 4 at a time within 2x its sequential: %.3g vs %.3g (%.2fx): %s\n",
			       fname, p, s, p / s, verdict(p <= 2 * s));
		}
	}
	if (gv < N_VARIANTS && ask_count[gv]) {
		double ms = ask_ms_sum[gv] / (double)ask_count[gv];
		printf("goal gp at most 50 ms per ask at 100 trials: %.2f ms: %s\n", ms,
		       verdict(ms <= 50));
	}
	return 0;
}
