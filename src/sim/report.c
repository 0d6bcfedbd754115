/*
 * report.c - what relish simulate says about its runs (sim/report.h): the
 * comparison table, the same as JSON (--json), and the --out folder (CSV
 * time series, per-job completion times, finish-time fairness per user,
 * summary.json, the plots' data and script, and the PNGs gnuplot draws
 * from them); --check-colocate's report.  Moved from cli/cmd_simulate.c,
 * which now only parses options and runs the policies.
 */
#include "sim/report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "exec/capture.h"

#define H(x) ((x) / 3600.0)

/*
 * The headline figures every comparison states, in the table's order:
 * all of them times, so below 1 is better and every ratio is the first
 * policy's figure over the other's (issue 30 item 6: the best-peer line
 * used to divide the other way, under lines that did not, and said
 * nothing of HPO-experiment time).
 */
static const struct figure {
	const char *words; /* in the summary lines */
	const char *key;   /* in --json's comparisons */
	size_t off;        /* the sim_result field, seconds */
} figures[] = {
	{"makespan", "makespan", offsetof(sim_result, makespan_s)},
	{"mean JCT", "mean_jct", offsetof(sim_result, mean_jct_s)},
	{"p95 JCT", "p95_jct", offsetof(sim_result, p95_jct_s)},
	{"HPO experiment time", "hpo_experiment", offsetof(sim_result, mean_burst_jct_s)},
	{"queueing", "queue", offsetof(sim_result, mean_queue_s)},
};
#define N_FIGURES (sizeof figures / sizeof figures[0])

static double figure_of(const sim_result *r, size_t k)
{
	return *(const double *)((const char *)r + figures[k].off);
}

/* For each figure, the best (lowest) policy other than relish; NULL where
 * relish has no peer. */
static void best_peers(sim_result *const *res, const sim_result *best[N_FIGURES])
{
	for (size_t k = 0; k < N_FIGURES; k++) {
		best[k] = NULL;
		for (int i = 0; i < SCHED_POLICY__COUNT; i++)
			if (res[i] && i != SCHED_POLICY_RELISH &&
			    (!best[k] || figure_of(res[i], k) < figure_of(best[k], k)))
				best[k] = res[i];
	}
}

/* For each figure, the best (lowest) run of a peer among the n runs (any
 * order); NULL where there is none.  Ties go to the first, policy-major. */
static void best_pairs(sim_result *const *runs, size_t n, const sim_result *best[N_FIGURES])
{
	for (size_t k = 0; k < N_FIGURES; k++) {
		best[k] = NULL;
		for (size_t i = 0; i < n; i++)
			if (runs[i] && runs[i]->policy != SCHED_POLICY_RELISH &&
			    (!best[k] || figure_of(runs[i], k) < figure_of(best[k], k)))
				best[k] = runs[i];
	}
}

/* A run's name among pairs: "gandiva-las". */
static const char *pair_label(const sim_result *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s-%s", sched_policy_name(r->policy), sched_order_name(r->order));
	return buf;
}

/* Which way a ratio of times goes, in words: "7% longer", "20% shorter". */
static void ratio_words(double v, double ref, char *buf, size_t n)
{
	double r = ref > 0 ? v / ref : NAN;
	if (!isfinite(r))
		snprintf(buf, n, "not comparable");
	else if (fabs(r - 1) < 0.005)
		snprintf(buf, n, "the same");
	else
		snprintf(buf, n, "%.0f%% %s", fabs(r - 1) * 100, r > 1 ? "longer" : "shorter");
}

void sim_report_table(FILE *out, const sim_report_setup *o, const sim_trace *t,
		      const sim_model *m, sim_result *const *res)
{
	const char *coloc = o->colocate;
	char scaled[96] = "";
	if (o->scale > 1 && o->scale_span)
		snprintf(scaled, sizeof scaled, " x %d (over %d times its span, seed %llu)", o->scale,
			 o->scale, (unsigned long long)o->scale_seed);
	else if (o->scale > 1)
		snprintf(scaled, sizeof scaled, " x %d (over its span, seed %llu)", o->scale,
			 (unsigned long long)o->scale_seed);
	/* The model counts ordered pairs (A beside B, B beside A) of the
	 * trace's own configurations, not the rows of the pairs file. */
	fprintf(out, "trace %s%s: %zu jobs, %zu experiments; %d GPUs x %lld MiB; segments %g s "
	       "(tiresias: %g s), restart %g s, hints %s; co-location: measured speeds for %zu ordered pairs of "
	       "the trace's configurations%s%s\n",
	       o->trace, scaled, t->n_jobs, t->n_exps, o->gpus, o->gpu_memory_mib, o->cfg->segment_s,
	       o->cfg->tune.tiresias_quantum_s > 0 ? fmin(o->cfg->tune.tiresias_quantum_s, o->cfg->segment_s)
						    : o->cfg->segment_s,
	       o->cfg->restart_cost_s, sim_hints_name(o->cfg->hints), sim_model_pair_count(m),
	       coloc ? " from " : " (none: utilisation fallback only)", coloc ? coloc : "");
	fprintf(out, "%-9s %8s %11s %10s %9s %9s %9s %10s %9s %5s %5s %6s %5s %5s\n", "policy", "order",
	       "makespan_h", "bound_h", "mean_jct", "med_jct", "p95_jct", "hpo_exp",
	       "queue_h", "mem%", "res%", "comp%", "busy%", "ooms");
	size_t n_rows = o->n_pairs ? o->n_pairs : SCHED_POLICY__COUNT;
	for (size_t i = 0; i < n_rows; i++) {
		const sim_result *r = o->n_pairs ? o->pairs[i] : res[i];
		if (!r)
			continue;
		fprintf(out, "%-9s %8s %11.1f %10.1f %9.2f %9.2f %9.2f %10.2f %9.2f %5.1f %5.1f %6.1f %5.1f %5zu\n",
		       sched_policy_name(r->policy), sched_order_name(r->order), H(r->makespan_s), H(r->lower_bound_makespan_s),
		       H(r->mean_jct_s), H(r->median_jct_s), H(r->p95_jct_s), H(r->mean_burst_jct_s),
		       H(r->mean_queue_s), 100 * r->gpu_mem_util, 100 * r->gpu_mem_reserved,
		       100 * r->gpu_compute_util, 100 * r->gpu_busy, r->oom_count);
	}
	fprintf(out, "(times in hours; hpo_exp: an HPO experiment's time, its first trial's arrival "
	       "to its last trial's end; mem%%/res%%/comp%%/busy%%: time-averaged GPU memory used "
	       "/ reserved, compute, GPUs busy)\n");
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		if (res[i])
			fprintf(out, "%s: finish-time fairness rho (experiment time over its time on a private "
			       "1/N of the cluster): mean %.2f, median %.2f, p95 %.2f, max %.2f; "
			       "worst user %s, mean %.2f (%zu users)\n",
			       sched_policy_name(res[i]->policy), res[i]->rho_mean, res[i]->rho_median,
			       res[i]->rho_p95, res[i]->rho_max,
			       res[i]->n_users && t->users[res[i]->rho_worst_user].name[0]
				       ? t->users[res[i]->rho_worst_user].name : "-",
			       res[i]->rho_user_max, res[i]->n_users);
	/* Each policy against exclusive, then relish against the best other
	 * policy of each figure: one direction, every headline figure. */
	fprintf(out, "(ratios: the first policy's time over the other's; below 1 is shorter, better)\n");
	for (int i = 1; res[0] && i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		const char *nm = sched_policy_name(res[i]->policy);
		fprintf(out, "%s vs exclusive: %s", nm, nm);
		for (size_t k = 0; k < N_FIGURES; k++) {
			char w[48];
			ratio_words(figure_of(res[i], k), figure_of(res[0], k), w, sizeof w);
			fprintf(out, "%s %s %.2fx exclusive's (%s)", k ? "," : "", figures[k].words,
			       figure_of(res[i], k) / figure_of(res[0], k), w);
		}
		fprintf(out, "; makespan / bound %.2f\n", res[i]->makespan_s / res[i]->lower_bound_makespan_s);
	}
	const sim_result *rr = res[SCHED_POLICY_RELISH], *best[N_FIGURES];
	best_peers(res, best);
	if (rr && best[0]) {
		fprintf(out, "relish vs the best peer: relish");
		for (size_t k = 0; k < N_FIGURES; k++) {
			char w[48];
			const char *pn = sched_policy_name(best[k]->policy);
			ratio_words(figure_of(rr, k), figure_of(best[k], k), w, sizeof w);
			fprintf(out, "%s %s %.2fx %s's (%s)", k ? "," : "", figures[k].words,
			       figure_of(rr, k) / figure_of(best[k], k), pn, w);
		}
		fprintf(out, "\n");
	}
	if (!o->n_pairs)
		return;
	/* --order all: the best (peer, order) pair of each figure, and relish
	 * against it */
	best_pairs(o->pairs, o->n_pairs, best);
	if (!best[0])
		return;
	fprintf(out, "best (peer, order) pair:");
	for (size_t k = 0; k < N_FIGURES; k++) {
		char l[64];
		fprintf(out, "%s %s %s %.2f h", k ? "," : "", figures[k].words,
			pair_label(best[k], l, sizeof l), H(figure_of(best[k], k)));
	}
	fprintf(out, "\n");
	if (!rr)
		return;
	fprintf(out, "relish vs the best (peer, order) pair: relish");
	for (size_t k = 0; k < N_FIGURES; k++) {
		char w[48], l[64];
		ratio_words(figure_of(rr, k), figure_of(best[k], k), w, sizeof w);
		fprintf(out, "%s %s %.2fx %s's (%s)", k ? "," : "", figures[k].words,
			figure_of(rr, k) / figure_of(best[k], k), pair_label(best[k], l, sizeof l), w);
	}
	fprintf(out, "\n");
}

/* Finish-time fairness: the summary and one row per user. */
static json_t *fairness_json(const sim_trace *t, const sim_result *r)
{
	json_t *users = json_array();
	for (size_t u = 0; users && u < r->n_users; u++) {
		const sim_user_result *ur = &r->users[u];
		json_array_append_new(users, json_pack("{s:s, s:I, s:f, s:f, s:f}", "user",
						       t->users[u].name, "experiments",
						       (json_int_t)ur->n_exps, "rho_mean", ur->rho_mean,
						       "rho_max", ur->rho_max, "attained_gpu_h",
						       ur->attained_gpu_s / 3600.0));
	}
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:s, s:o}", "rho_mean", r->rho_mean,
			 "rho_median", r->rho_median, "rho_p95", r->rho_p95, "rho_max", r->rho_max,
			 "rho_user_max", r->rho_user_max, "worst_user",
			 r->n_users ? t->users[r->rho_worst_user].name : "", "users", users);
}

static json_t *result_json(const sim_trace *t, const sim_result *r)
{
	json_t *j = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:I, s:I, s:I, s:I}",
			 "order", sched_order_name(r->order), "makespan_s", r->makespan_s, "mean_jct_s", r->mean_jct_s,
			 "median_jct_s", r->median_jct_s, "p95_jct_s", r->p95_jct_s,
			 "mean_burst_jct_s", r->mean_burst_jct_s, "mean_queue_s", r->mean_queue_s,
			 "gpu_mem_util", r->gpu_mem_util, "gpu_mem_reserved", r->gpu_mem_reserved,
			 "gpu_compute_util", r->gpu_compute_util, "gpu_busy", r->gpu_busy,
			 "lower_bound_makespan_s", r->lower_bound_makespan_s,
			 "lb_critical_s", r->lb_critical_s, "lb_memory_s", r->lb_memory_s,
			 "lb_compute_s", r->lb_compute_s,
			 "oom_count", (json_int_t)r->oom_count,
			 "makespan_over_bound", r->makespan_s / r->lower_bound_makespan_s,
			 "jobs", (json_int_t)r->n_jobs, "segments", (json_int_t)r->n_segments,
			 "events", (json_int_t)r->n_events, "gangs_capped", (json_int_t)r->n_gang_capped);
	if (j)
		json_object_set_new(j, "fairness", fairness_json(t, r));
	if (j)
		json_object_set_new(j, "segment_s", json_real(r->segment_s));
	if (j && r->oom_foreign_count)
		json_object_set_new(j, "oom_foreign", json_integer((json_int_t)r->oom_foreign_count));
	return j;
}

/* The summary's comparisons as data: each policy's figures over
 * exclusive's, and relish's over the best peer's (with who that is). */
static json_t *comparisons_json(const sim_report_setup *o, sim_result *const *res)
{
	json_t *c = json_object(), *vs_ex = json_object();
	for (int i = 1; res[0] && i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		json_t *one = json_object();
		for (size_t k = 0; k < N_FIGURES; k++)
			json_object_set_new(one, figures[k].key,
					    json_real(figure_of(res[i], k) / figure_of(res[0], k)));
		json_object_set_new(vs_ex, sched_policy_name(res[i]->policy), one);
	}
	json_object_set_new(c, "vs_exclusive", vs_ex);
	const sim_result *rr = res[SCHED_POLICY_RELISH], *best[N_FIGURES];
	best_peers(res, best);
	if (rr && best[0]) {
		json_t *peer = json_object();
		for (size_t k = 0; k < N_FIGURES; k++)
			json_object_set_new(peer, figures[k].key,
					    json_pack("{s:s, s:f}", "peer",
						      sched_policy_name(best[k]->policy), "ratio",
						      figure_of(rr, k) / figure_of(best[k], k)));
		json_object_set_new(c, "relish_vs_best_peer", peer);
	}
	if (!o->n_pairs)
		return c;
	best_pairs(o->pairs, o->n_pairs, best);
	if (!best[0])
		return c;
	json_t *bp = json_object(), *vs = rr ? json_object() : NULL;
	for (size_t k = 0; k < N_FIGURES; k++) {
		const char *pn = sched_policy_name(best[k]->policy);
		const char *on = sched_order_name(best[k]->order);
		json_object_set_new(bp, figures[k].key,
				    json_pack("{s:s, s:s, s:f}", "peer", pn, "order", on, "value_s",
					      figure_of(best[k], k)));
		if (vs)
			json_object_set_new(vs, figures[k].key,
					    json_pack("{s:s, s:s, s:f}", "peer", pn, "order", on, "ratio",
						      figure_of(rr, k) / figure_of(best[k], k)));
	}
	json_object_set_new(c, "best_pair", bp);
	if (vs)
		json_object_set_new(c, "relish_vs_best_pair", vs);
	return c;
}

json_t *sim_report_json(const sim_report_setup *o, const sim_trace *t, const sim_model *m,
			sim_result *const *res)
{
	const char *coloc = o->colocate;
	json_t *pol = json_object();
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		if (res[i])
			json_object_set_new(pol, sched_policy_name(res[i]->policy), result_json(t, res[i]));
	json_t *cfg = json_pack("{s:s, s:I, s:I, s:I, s:f, s:f, s:s, s:s?, s:I, s:I}",
				"trace", o->trace, "jobs", (json_int_t)t->n_jobs,
				"gpus", (json_int_t)o->gpus, "gpu_memory_mib", (json_int_t)o->gpu_memory_mib,
				"segment_s", o->cfg->segment_s, "restart_cost_s", o->cfg->restart_cost_s,
				"hints", sim_hints_name(o->cfg->hints), "colocate", coloc,
				"measured_pairs", (json_int_t)sim_model_pair_count(m),
				"scale", (json_int_t)o->scale);
	if (cfg) {
		json_object_set_new(cfg, "window", json_integer(o->cfg->window > 0 ? o->cfg->window : 0));
		json_object_set_new(cfg, "tiresias_quantum_s", json_real(o->cfg->tune.tiresias_quantum_s));
	}
	if (cfg && o->background) {
		json_object_set_new(cfg, "background", json_string(o->background));
		json_object_set_new(cfg, "background_steps",
				    json_integer((json_int_t)o->cfg->background->n));
	}
	if (cfg && o->scale > 1) {
		json_object_set_new(cfg, "scale_span", json_boolean(o->scale_span));
		json_object_set_new(cfg, "scale_seed", json_integer((json_int_t)o->scale_seed));
	}
	if (o->n_pairs) {
		json_t *pairs = json_object();
		for (size_t i = 0; pairs && i < o->n_pairs; i++) {
			char l[64];
			json_t *r = result_json(t, o->pairs[i]);
			if (r)
				json_object_set_new(r, "policy",
						    json_string(sched_policy_name(o->pairs[i]->policy)));
			json_object_set_new(pairs, pair_label(o->pairs[i], l, sizeof l), r);
		}
		if (cfg)
			json_object_set_new(cfg, "order", json_string("all"));
		json_t *j = json_pack("{s:o, s:o, s:o, s:o}", "policies", pol, "pairs", pairs, "config",
				      cfg, "comparisons", comparisons_json(o, res));
		return j;
	}
	return json_pack("{s:o, s:o, s:o}", "policies", pol, "config", cfg, "comparisons",
			 comparisons_json(o, res));
}

int sim_report_open(const char *dir, const char *name, FILE **f, rl_err *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	*f = fopen(path, "w");
	if (!*f)
		return rl_err_sys(err, RL_EIO, errno, "writing %s", path);
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The utilisation plot's data: the series averaged into at most
 * PLOT_POINTS bins (whole multiples of the series step), so that months of
 * hourly samples draw as a readable line rather than a solid band. */
#define PLOT_POINTS 300

static int write_smoothed(const char *dir, const sim_result *r, double step, rl_err *err)
{
	char name[80];
	snprintf(name, sizeof name, "series_%s_smooth.csv", sched_policy_name(r->policy));
	FILE *f;
	int rc = sim_report_open(dir, name, &f, err);
	if (rc < 0)
		return rc;
	size_t per = r->n_series > PLOT_POINTS ? (r->n_series + PLOT_POINTS - 1) / PLOT_POINTS : 1;
	fprintf(f, "t_days,busy,mem_used,mem_reserved,compute\n");
	for (size_t k = 0; k < r->n_series; k += per) {
		double b = 0, mu = 0, mr = 0, c = 0;
		size_t n = 0;
		for (size_t j = k; j < k + per && j < r->n_series; j++, n++) {
			b += r->series[j].busy;
			mu += r->series[j].mem_used;
			mr += r->series[j].mem_reserved;
			c += r->series[j].compute;
		}
		/* the bin's middle */
		double t = r->series[k].t_s + step * (double)n / 2;
		fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f\n", t / 86400, b / n, mu / n, mr / n, c / n);
	}
	if (fclose(f) != 0)
		return rl_err_sys(err, RL_EIO, errno, "writing %s/%s", dir, name);
	return 0;
}

/*
 * gnuplot script: utilisation over time with one panel per policy (three
 * series drawn on top of each other could not be told apart), from the
 * smoothed series, the cluster in the title; and the JCT CDF, one line per
 * policy.
 */
static int write_plots(const char *dir, const sim_report_setup *o, sim_result *const *res, size_t n_jobs, double bin_days,
		       rl_err *err)
{
	FILE *f;
	int rc = sim_report_open(dir, "plots.gp", &f, err);
	if (rc < 0)
		return rc;
	int n = 0;
	double span = 0; /* one x range for every panel, so they compare */
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		n += res[i] != NULL;
		if (res[i] && res[i]->n_series) {
			double end = res[i]->series[res[i]->n_series - 1].t_s + o->cfg->series_step_s;
			span = end > span ? end : span;
		}
	}
	char bin[48];
	if (bin_days >= 1)
		snprintf(bin, sizeof bin, "%.3g-day means", bin_days);
	else
		snprintf(bin, sizeof bin, "%.3g-hour means", bin_days * 24);
	fprintf(f, "# relish simulate: plots (run with gnuplot in this folder)\n"
		   "set terminal pngcairo size 900,%d noenhanced\nset datafile separator ','\n"
		   "set output 'utilisation.png'\n"
		   "set multiplot layout %d,1 title 'GPU compute and memory in use, %d GPUs x %lld MiB "
		   "(%s)'\n"
		   "set key outside right\nset grid\nset yrange [0:1.05]\nset xrange [0:%g]\n"
		   "set ylabel 'fraction of cluster'\n",
		n > 1 ? 260 * n + 60 : 500, n, o->gpus, o->gpu_memory_mib, bin, span > 0 ? span / 86400 : 1);
	int k = 0;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		const char *nm = sched_policy_name(res[i]->policy);
		k++;
		fprintf(f, "set title '%s'\nset xlabel '%s'\n"
			   "plot 'series_%s_smooth.csv' using 1:5 skip 1 with lines lw 2 lc %d "
			   "title 'compute', 'series_%s_smooth.csv' using 1:3 skip 1 with lines "
			   "dt 2 lw 2 lc %d title 'memory used'\n",
			nm, k == n ? "time since first arrival (days)" : "", nm, i + 1, nm, i + 1);
	}
	/* The CDF's x range from its data (the shortest and longest job of
	 * every policy, as jct_cdf_*.csv write them): the utilisation panels'
	 * range in days must not carry over to it (a leftover xrange of
	 * [0:1] hid most jobs). */
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		for (size_t j = 0; res[i] && j < n_jobs; j++) {
			double h = fmax(res[i]->jct_s[j], 1) / 3600.0;
			lo = h < lo ? h : lo;
			hi = h > hi ? h : hi;
		}
	if (!(hi > 0)) {
		lo = 0.01;
		hi = 1;
	}
	fprintf(f, "unset multiplot\n"
		   "set terminal pngcairo size 900,500 noenhanced\n"
		   "set output 'jct_cdf.png'\nset title 'Job completion time CDF, %d GPUs x %lld MiB'\n"
		   "set key outside right\nset grid\nset logscale x\n"
		   "set xrange [%.6g:%.6g]\n"
		   "set xlabel 'job completion time (hours, log scale)'\nset ylabel 'fraction of jobs'\n"
		   "set yrange [0:1]\nplot ", o->gpus, o->gpu_memory_mib, lo / 1.25, hi * 1.25);
	int first = 1;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		const char *nm = sched_policy_name(res[i]->policy);
		fprintf(f, "%s'jct_cdf_%s.csv' using 1:2 skip 1 with lines lw 2 lc %d title '%s'",
			first ? "" : ", ", nm, i + 1, nm);
		first = 0;
	}
	fprintf(f, "\n");
	if (fclose(f) != 0)
		return rl_err_sys(err, RL_EIO, errno, "writing %s/plots.gp", dir);
	return 0;
}

/* gnuplot in dir, its warnings ("empty x range") into dir/gnuplot.log,
 * not onto the screen: 0 when it drew. */
static int run_gnuplot(const char *dir)
{
	char *argv[] = {"gnuplot", "plots.gp", NULL};
	char *et = NULL;
	int rc = capture_run_in(dir, argv, NULL, NULL, &et, NULL);
	if (et) {
		FILE *f;
		if (sim_report_open(dir, "gnuplot.log", &f, NULL) == 0) {
			fprintf(f, "%s%s", et, et[0] ? "\n" : "");
			fclose(f);
		}
		free(et);
	}
	return rc == 0 ? 0 : -1;
}

int sim_report_write(const char *dir, const sim_report_setup *o, const sim_trace *t,
		     sim_result *const *res, json_t *report, rl_err *err)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", dir);
	FILE *f;
	int rc;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		const sim_result *r = res[i];
		if (!r)
			continue;
		const char *n = sched_policy_name(r->policy);
		char name[64];
		snprintf(name, sizeof name, "series_%s.csv", n);
		if ((rc = sim_report_open(dir, name, &f, err)) < 0)
			return rc;
		fprintf(f, "t_s,busy,mem_used,mem_reserved,compute,queued\n");
		for (size_t k = 0; k < r->n_series; k++) {
			const sim_sample *s = &r->series[k];
			fprintf(f, "%.0f,%.4f,%.4f,%.4f,%.4f,%.2f\n", s->t_s, s->busy, s->mem_used,
				s->mem_reserved, s->compute, s->queued);
		}
		fclose(f);
		snprintf(name, sizeof name, "jct_%s.csv", n);
		if ((rc = sim_report_open(dir, name, &f, err)) < 0)
			return rc;
		fprintf(f, "job_id,submit_s,jct_s,queue_s\n");
		for (size_t j = 0; j < t->n_jobs; j++)
			fprintf(f, "%s,%.0f,%.1f,%.1f\n", t->jobs[j].id, t->jobs[j].submit_s,
				r->jct_s[j], r->queue_s[j]);
		fclose(f);
		snprintf(name, sizeof name, "fairness_%s.csv", n);
		if ((rc = sim_report_open(dir, name, &f, err)) < 0)
			return rc;
		fprintf(f, "user,experiments,rho_mean,rho_max,attained_gpu_h\n");
		for (size_t u = 0; u < r->n_users; u++)
			fprintf(f, "%s,%zu,%.4f,%.4f,%.3f\n", t->users[u].name, r->users[u].n_exps,
				r->users[u].rho_mean, r->users[u].rho_max,
				r->users[u].attained_gpu_s / 3600.0);
		fclose(f);
		/* CDF at up to 500 points keeps the plot data small. */
		double *v = malloc(t->n_jobs * sizeof *v);
		if (!v)
			return rl_err_set(err, RL_ENOMEM, "writing %s: out of memory", dir);
		memcpy(v, r->jct_s, t->n_jobs * sizeof *v);
		qsort(v, t->n_jobs, sizeof *v, cmp_dbl);
		snprintf(name, sizeof name, "jct_cdf_%s.csv", n);
		if ((rc = sim_report_open(dir, name, &f, err)) < 0) {
			free(v);
			return rc;
		}
		fprintf(f, "jct_h,fraction\n");
		size_t stride = t->n_jobs > 500 ? t->n_jobs / 500 : 1;
		for (size_t k = 0; k < t->n_jobs; k += stride)
			fprintf(f, "%.5f,%.4f\n", fmax(v[k], 1) / 3600.0, (double)(k + 1) / (double)t->n_jobs);
		fprintf(f, "%.5f,1\n", fmax(v[t->n_jobs - 1], 1) / 3600.0);
		fclose(f);
		free(v);
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/summary.json", dir);
	if (json_dump_file(report, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
		return rl_err_set(err, RL_EIO, "writing %s", path);
	double bin_days = 0;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		if ((rc = write_smoothed(dir, res[i], o->cfg->series_step_s, err)) < 0)
			return rc;
		size_t per = res[i]->n_series > PLOT_POINTS
				     ? (res[i]->n_series + PLOT_POINTS - 1) / PLOT_POINTS : 1;
		bin_days = (double)per * o->cfg->series_step_s / 86400;
	}
	if ((rc = write_plots(dir, o, res, t->n_jobs, bin_days, err)) < 0)
		return rc;
	int plotted = run_gnuplot(dir) == 0;
	/* Say where it all went (stderr: stdout may be --json). */
	fprintf(stderr, "relish simulate: wrote %s/: summary.json, per policy series_*.csv "
		"(every %g s; *_smooth.csv for the plot), jct_*.csv, jct_cdf_*.csv, fairness_*.csv%s, "
		"plots.gp%s\n", dir, o->cfg->series_step_s, o->placements ? ", placements_*.csv" : "",
		plotted ? ", utilisation.png, jct_cdf.png"
			: " (gnuplot failed or is not installed: no PNGs; see gnuplot.log there)");
	return 0;
}

static void err_row(FILE *out, const char *what, const char *data, const sim_colo_err *e)
{
	fprintf(out, "%-34s %-22s %5zu %8.3f %8.3f %+8.3f\n", what, data, e->n, e->median, e->p90, e->bias);
}

static json_t *err_json(const sim_colo_err *e)
{
	return json_pack("{s:I, s:f, s:f, s:f}", "n", (json_int_t)e->n, "median_abs_error", e->median,
			 "p90_abs_error", e->p90, "bias", e->bias);
}


json_t *sim_report_colocate_json(const sim_colo_check *cc)
{
	const sim_colo_check c = *cc;
	json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:{s:o, s:o}, s:{s:o}, s:{s:o}, "
			      "s:{s:f, s:f, s:o, s:o}}",
			      "lucid_pairs", (json_int_t)c.lucid_pairs, "gavel_types",
			      (json_int_t)c.gavel_types, "gavel_pairs", (json_int_t)c.gavel_pairs,
			      "gavel_did_not_fit", (json_int_t)c.gavel_oom, "gavel_measured_in_lucid",
			      (json_int_t)c.gavel_measured_in_lucid,
			      "prior", "lucid", err_json(&c.prior_lucid), "gavel", err_json(&c.prior_gavel),
			      "model", "gavel", err_json(&c.model_gavel),
			      "lucid_measurement", "gavel", err_json(&c.lucid_vs_gavel),
			      "fit", "alpha", c.fit_alpha, "beta", c.fit_beta, "lucid",
			      err_json(&c.fit_lucid), "gavel", err_json(&c.fit_gavel));
	return j;
}

void sim_report_colocate_table(FILE *out, const sim_colo_check *cc)
{
	const sim_colo_check c = *cc;
	fprintf(out, "co-location model against measurements: %zu Lucid pairs among the trace's "
	       "configurations; Gavel V100: %zu job types matched, %zu ordered pairs that ran "
	       "together (%zu did not fit in memory together, left out), %zu of them measured "
	       "by Lucid too\n",
	       c.lucid_pairs, c.gavel_types, c.gavel_pairs, c.gavel_oom, c.gavel_measured_in_lucid);
	fprintf(out, "%-34s %-22s %5s %8s %8s %8s\n", "predictor", "measured by", "pairs", "median",
	       "p90", "bias");
	err_row(out, "core prior min(1, 100/(ua+ub))", "Lucid", &c.prior_lucid);
	err_row(out, "core prior min(1, 100/(ua+ub))", "Gavel V100", &c.prior_gavel);
	err_row(out, "simulator model (Lucid + prior)", "Gavel V100", &c.model_gavel);
	err_row(out, "Lucid's measurement of the pair", "Gavel V100", &c.lucid_vs_gavel);
	char fit[64];
	snprintf(fit, sizeof fit, "fit 1/(1+%.2f(U-%.0f)+/100)", c.fit_alpha, c.fit_beta);
	err_row(out, fit, "Lucid (fitted on)", &c.fit_lucid);
	err_row(out, fit, "Gavel V100", &c.fit_gavel);
	fprintf(out, "(|predicted - measured| speed relative to alone; bias = mean of predicted - measured)\n");
}
