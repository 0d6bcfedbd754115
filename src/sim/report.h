/*
 * report.h - relish simulate's report (report.c): the comparison of the
 * policies' runs as a table, as JSON, and as the files of --out; the report
 * of --check-colocate.  The numbers are sim_run's (sim.h); this says them.
 */
#ifndef RELISH_SIM_REPORT_H
#define RELISH_SIM_REPORT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"
#include "sim/sim.h"

/* What the runs were, besides their results (relish simulate's options);
 * everything borrowed. */
typedef struct sim_report_setup {
	const char *trace;           /* the trace's path */
	int gpus;
	long long gpu_memory_mib;
	int scale, scale_span;       /* --scale, --scale-span */
	uint64_t scale_seed;
	const char *background;      /* --background's path, or NULL */
	const char *colocate;        /* the pair table used, or NULL */
	const sim_config *cfg;
	int placements;              /* placements_*.csv were written */
	/* --order all: every run, each peer in every order (policy-major);
	 * NULL / 0 otherwise.  The table then has a row per run and says
	 * which (peer, order) pair is best at each figure, and relish
	 * against it; --json adds "pairs" and the comparisons
	 * "best_pair" and "relish_vs_best_pair". */
	sim_result *const *pairs;
	size_t n_pairs;
} sim_report_setup;

/* res: SCHED_POLICY__COUNT results by policy, NULL for a policy not run. */

/* The comparison table, with each policy against exclusive and relish
 * against the best peer (every ratio the first policy's time over the
 * other's). */
void sim_report_table(FILE *out, const sim_report_setup *s, const sim_trace *t,
		      const sim_model *m, sim_result *const *res);

/* {"policies", "config", "comparisons"}: a new reference (NULL when out of
 * memory). */
json_t *sim_report_json(const sim_report_setup *s, const sim_trace *t, const sim_model *m,
			sim_result *const *res);

/* dir/name opened for writing (created or truncated): RL_EIO naming it. */
int sim_report_open(const char *dir, const char *name, FILE **f, rl_err *err);

/* The --out folder dir (made if missing): per policy series_*.csv,
 * jct_*.csv, jct_cdf_*.csv, fairness_*.csv and the plots' smoothed series,
 * summary.json (report), plots.gp, and gnuplot's PNGs where it runs; says
 * on stderr what it wrote. */
int sim_report_write(const char *dir, const sim_report_setup *s, const sim_trace *t,
		     sim_result *const *res, json_t *report, rl_err *err);

/* --check-colocate: the co-location model's errors against the
 * measurements, as a table or as JSON (a new reference, NULL when out of
 * memory). */
void sim_report_colocate_table(FILE *out, const sim_colo_check *c);
json_t *sim_report_colocate_json(const sim_colo_check *c);

#endif
