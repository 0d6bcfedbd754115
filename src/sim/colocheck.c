/*
 * colocheck.c - the co-location model checked against measurements it was
 * not made from (sim.h, sim_colocate_check; docs/simulator.md, "Is the
 * co-location model right?").
 *
 * Three predictors of the speed of job a beside job b (relative to alone),
 * each given the jobs' mean utilisation alone (the trace's, per
 * configuration):
 *   prior   the core's own prior, what relish's policy believes of a pair
 *           it has not observed: sched_colocate_predict on an empty core,
 *           i.e. min(1, 100 / (u_a + u_b));
 *   model   the simulator's model: Lucid's measured speed where the pair was
 *           measured, else the prior;
 *   fit     1 / (1 + alpha max(0, (u_a + u_b - beta) / 100)), alpha and beta
 *           fitted by least squares on Lucid's measured pairs (a grid of
 *           alpha 0.05..2 by 0.05 and beta 50..150 by 5).
 * They are scored on Lucid's pairs (what the fit was made from; for the
 * model that is its own data) and on Gavel's pairwise space-sharing
 * throughputs on V100s (Narayanan et al., OSDI'20), for the Gavel job types
 * whose model and batch size the trace has a configuration of (ResNet-18 =
 * ResNet18 on CIFAR-10, ResNet-50 = ResNet50 on ImageNet, Transformer =
 * Transformer on Multi30k, single-GPU, no mixed precision).  A Gavel speed
 * is the pair's throughput over the job's throughput alone, clamped to 1;
 * pairs with zero throughput did not fit in the V100's memory together and
 * are counted apart (a placement refuses them on memory, not speed).
 */
#include "sim/sim.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct obs {
	double ua, ub, speed, model;
} obs;

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* pred[i] against o[i].speed: median and p90 of |error|, mean error. */
static int score(const obs *o, const double *pred, size_t n, sim_colo_err *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (!n)
		return 0;
	double *e = malloc(n * sizeof *e);
	if (!e)
		return RL_ENOMEM;
	double bias = 0;
	for (size_t i = 0; i < n; i++) {
		e[i] = fabs(pred[i] - o[i].speed);
		bias += pred[i] - o[i].speed;
	}
	qsort(e, n, sizeof *e, cmp_dbl);
	out->median = n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2;
	size_t k = (size_t)ceil(0.9 * (double)n);
	out->p90 = e[k ? k - 1 : 0];
	out->bias = bias / (double)n;
	free(e);
	return 0;
}

static double fit_speed(double a, double b, double U)
{
	double x = (U - b) / 100;
	return 1 / (1 + a * (x > 0 ? x : 0));
}

/* Mean utilisation alone of each profile of t (the first job's). */
static double *profile_util(const sim_trace *t)
{
	double *u = malloc((t->n_profiles ? t->n_profiles : 1) * sizeof *u);
	if (!u)
		return NULL;
	for (size_t i = 0; i < t->n_profiles; i++)
		u[i] = -1;
	for (size_t j = 0; j < t->n_jobs; j++)
		if (t->jobs[j].profile >= 0 && u[t->jobs[j].profile] < 0)
			u[t->jobs[j].profile] = t->jobs[j].util_pct;
	return u;
}

/* "ResNet-18 (batch size 64)" with scale factor 1 -> the trace's profile,
 * or -1. */
static int gavel_profile(const sim_trace *t, const char *key)
{
	static const struct {
		const char *gavel, *model, *dataset;
	} map[] = {
		{"ResNet-18", "ResNet18", "CIFAR-10"},
		{"ResNet-50", "ResNet50", "ImageNet"},
		{"Transformer", "Transformer", "Multi30k"},
	};
	char name[64];
	int bs = 0, sf = 0;
	if (sscanf(key, "('%63[^(] (batch size %d)', %d)", name, &bs, &sf) != 3 || sf != 1)
		return -1;
	size_t l = strlen(name);
	while (l && name[l - 1] == ' ')
		name[--l] = '\0';
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(name, map[i].gavel))
			return sim_trace_find_profile(t, map[i].model, map[i].dataset, bs, 0);
	return -1;
}

int sim_colocate_check(const sim_trace *t, const sim_model *m, const char *gavel_path,
		       sim_colo_check *out, rl_err *err)
{
	memset(out, 0, sizeof *out);
	json_error_t je;
	json_t *root = json_load_file(gavel_path, 0, &je);
	if (!root)
		return rl_err_set(err, RL_EPARSE, "%s:%d:%d: %s", gavel_path, je.line, je.column, je.text);
	json_t *v100 = json_object_get(root, "v100");
	if (!json_is_object(v100)) {
		json_decref(root);
		return rl_err_set(err, RL_EPARSE, "%s: expected an object \"v100\" of job types", gavel_path);
	}
	size_t np = t->n_profiles, cap = np * np + json_object_size(v100) * json_object_size(v100) + 1;
	double *u = profile_util(t);
	obs *lu = malloc(cap * sizeof *lu), *gv = malloc(cap * sizeof *gv);
	double *pred = malloc(cap * sizeof *pred);
	sched *core = NULL;
	sched_options so;
	sched_options_default(&so, SHARE_RELISH);
	int rc = 0;
	if (!u || !lu || !gv || !pred || sched_new(&so, &core, err) < 0) {
		rc = rl_err_set(err, RL_ENOMEM, "co-location check: out of memory");
		goto done;
	}
	/* Lucid's measured pairs among the trace's profiles */
	size_t nl = 0;
	for (size_t a = 0; a < np; a++)
		for (size_t b = 0; b < np; b++) {
			double sp = sim_model_measured(m, (int)a, (int)b);
			if (isnan(sp) || u[a] < 0 || u[b] < 0)
				continue;
			lu[nl++] = (obs){u[a], u[b], sp, sp};
		}
	out->lucid_pairs = nl;
	/* Gavel's V100 pairs of job types the trace has */
	size_t ng = 0;
	const char *ka;
	json_t *va;
	json_object_foreach(v100, ka, va) {
		int pa = gavel_profile(t, ka);
		json_t *solo = json_object_get(va, "null");
		if (pa < 0 || u[pa] < 0 || !json_is_number(solo) || !(json_number_value(solo) > 0))
			continue;
		out->gavel_types++;
		const char *kb;
		json_t *vb;
		json_object_foreach(va, kb, vb) {
			int pb = gavel_profile(t, kb);
			if (pb < 0 || u[pb] < 0 || !json_is_array(vb) || json_array_size(vb) != 2)
				continue;
			double tp = json_number_value(json_array_get(vb, 0));
			if (!(tp > 0)) {
				out->gavel_oom++;
				continue;
			}
			double sp = fmin(1.0, tp / json_number_value(solo));
			double ms = sim_model_measured(m, pa, pb);
			gv[ng++] = (obs){u[pa], u[pb], sp, isnan(ms) ? -1 : ms};
			out->gavel_measured_in_lucid += !isnan(ms);
		}
	}
	out->gavel_pairs = ng;
	/* the core's prior */
	for (int set = 0; set < 2; set++) {
		obs *o = set ? gv : lu;
		size_t n = set ? ng : nl;
		for (size_t i = 0; i < n; i++) {
			uint64_t shapes[2] = {1, 2};
			double uu[2] = {o[i].ua, o[i].ub}, sp[2];
			sched_colocate_predict(core, shapes, uu, 2, sp);
			pred[i] = sp[0];
		}
		if ((rc = score(o, pred, n, set ? &out->prior_gavel : &out->prior_lucid)) < 0)
			goto done;
	}
	/* the simulator's model on Gavel's pairs, and Lucid's own
	 * measurement against Gavel's where both measured the pair */
	for (size_t i = 0; i < ng; i++)
		pred[i] = gv[i].model >= 0 ? gv[i].model : fmin(1.0, 100 / (gv[i].ua + gv[i].ub));
	if ((rc = score(gv, pred, ng, &out->model_gavel)) < 0)
		goto done;
	{
		obs *both = malloc((ng ? ng : 1) * sizeof *both);
		if (!both) {
			rc = rl_err_set(err, RL_ENOMEM, "co-location check: out of memory");
			goto done;
		}
		size_t nb = 0;
		for (size_t i = 0; i < ng; i++)
			if (gv[i].model >= 0) {
				both[nb] = gv[i];
				pred[nb++] = gv[i].model;
			}
		rc = score(both, pred, nb, &out->lucid_vs_gavel);
		free(both);
		if (rc < 0)
			goto done;
	}
	/* the fitted one */
	double best = INFINITY;
	for (int ia = 1; ia <= 40; ia++)
		for (int ib = 50; ib <= 150; ib += 5) {
			double a = 0.05 * ia, b = ib, sse = 0;
			for (size_t i = 0; i < nl; i++) {
				double e = fit_speed(a, b, lu[i].ua + lu[i].ub) - lu[i].speed;
				sse += e * e;
			}
			if (sse < best) {
				best = sse;
				out->fit_alpha = a;
				out->fit_beta = b;
			}
		}
	for (int set = 0; set < 2; set++) {
		obs *o = set ? gv : lu;
		size_t n = set ? ng : nl;
		for (size_t i = 0; i < n; i++)
			pred[i] = fit_speed(out->fit_alpha, out->fit_beta, o[i].ua + o[i].ub);
		if ((rc = score(o, pred, n, set ? &out->fit_gavel : &out->fit_lucid)) < 0)
			goto done;
	}
done:
	sched_free(core);
	json_decref(root);
	free(u);
	free(lu);
	free(gv);
	free(pred);
	return rc;
}
