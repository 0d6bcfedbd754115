/*
 * gp.c - Bayesian optimisation with a Gaussian process (search.algorithm:
 * gp); docs/search.md has the user's view and when to choose it over TPE.
 *
 * How a proposal is made:
 *   1. While fewer than n_startup trials have reported, trial k gets the
 *      random sampler's configuration for k (the same stream as random
 *      and TPE).
 *   2. Inputs: every parameter that is not fixed is one input: numeric
 *      ones in the unit-cube view of space.h (log scales applied, integers
 *      at the centre of their band), choices by their index under a
 *      Hamming distance (gp_model.h).  Conditional parameters are refused
 *      (a GP needs every input of every trial; TPE models them).
 *   3. The model (gp_model.c: Matérn 5/2 with one length scale per input,
 *      hyperparameters by maximum marginal likelihood under weak priors,
 *      warm-started from the previous ask's fit) is fitted on the trials
 *      that reported at the largest resource any reached (all of them
 *      without early stopping), their losses standardised.
 *   4. Trials without such a value (pending ones, and ones stopped early
 *      or still training at a lower resource, which are not comparable)
 *      enter as "believed" points: the model's mean at their inputs is
 *      added as if observed, with the hyperparameters kept (the kriging
 *      believer).  The variance there collapses, so the acquisition moves
 *      away from points already being tried, while the mean, and the best
 *      value the improvement is measured from, stay those of real results.
 *      A failed trial (or a NaN) is a bad outcome, not a lack of one
 *      (issue 30): it enters at the worst real value (a liar), so the
 *      model's mean rises where trials crash.
 *   5. The acquisition, log expected improvement over the best real value
 *      (computed in log space so it keeps a gradient far from the
 *      incumbent, where expected improvement itself underflows to zero),
 *      is maximised: 512 uniform points plus 16 perturbations of each of
 *      the 5 best trials are scored, and the best 5 of them together with
 *      the best trial start a projected quasi-Newton ascent over the
 *      numeric inputs (qn.c); then each choice input is tried at every
 *      value at the winner.  The winner, mapped back (integers rounded), is
 *      proposed.
 *
 * Determinism: trial k's random draws come from rng_stream_seed(seed, k),
 * and the model from the set of observations sorted by trial index, so
 * the same set gives the same proposal whatever order the tells came in;
 * the warm start makes a fit depend on the previous one, which one trial
 * at a time is itself a function of the seed.
 *
 * Cost (bench/bench_tpe.c): O(n^3) per marginal-likelihood evaluation
 * (a Cholesky factorisation and an inverse), a few dozen evaluations per
 * fit, then O(n^2) per scored point; about 10-30 ms per ask at 100 trials.
 * Beyond a few hundred trials TPE is the sampler to use.
 */
#include "search/gp_model.h"
#include "search/grow.h"
#include "search/rng.h"
#include "search/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GP_RANDOM 512     /* uniform points scored per ask */
#define GP_TOP 5          /* best trials perturbed, and starts of the ascent */
#define GP_PERTURB 16     /* perturbations per best trial */
#define GP_PERTURB_SD 0.05
#define GP_FIT_ITER 60
#define GP_ASCENT_ITER 60

/* What an observation holds besides a reported value. */
enum { MARK_NONE, MARK_PENDING, MARK_FAILED };

typedef struct gp_sampler {
	sampler base;
	int n_startup;
	size_t dim, dc, dk;
	int *input_of;          /* per parameter: its input, or -1 (fixed) */
	size_t *param_of;       /* per input: its parameter */
	/* Observations sorted by trial index (struct of arrays). */
	size_t n, cap;
	uint64_t *idx;
	double *loss, *res;
	unsigned char *pend;    /* MARK_* */
	double *x;              /* n x dim */
	gp_model model;
	double *bx, *by;        /* scratch: the fitted points */
	double y_best;          /* standardised best real value (set per ask) */
} gp_sampler;

/* ---- observations --------------------------------------------------------- */

static size_t obs_lower(const gp_sampler *g, uint64_t index)
{
	size_t lo = 0, hi = g->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->idx[mid] < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int obs_reserve(gp_sampler *g)
{
	if (g->n < g->cap)
		return 0;
	size_t cap = g->cap ? 2 * g->cap : 64;
	SEARCH_GROW(g->idx, cap);
	SEARCH_GROW(g->loss, cap);
	SEARCH_GROW(g->res, cap);
	SEARCH_GROW(g->pend, cap);
	SEARCH_GROW(g->x, cap * g->dim);
	SEARCH_GROW(g->bx, cap * g->dim);
	SEARCH_GROW(g->by, cap);
	g->cap = cap;
	return 0;
}

static void obs_remove(gp_sampler *g, size_t at)
{
	size_t tail = g->n - at - 1;
	memmove(g->idx + at, g->idx + at + 1, tail * sizeof *g->idx);
	memmove(g->loss + at, g->loss + at + 1, tail * sizeof *g->loss);
	memmove(g->res + at, g->res + at + 1, tail * sizeof *g->res);
	memmove(g->pend + at, g->pend + at + 1, tail * sizeof *g->pend);
	memmove(g->x + at * g->dim, g->x + (at + 1) * g->dim, tail * g->dim * sizeof *g->x);
	g->n--;
}

/* The inputs of configuration c into x (dim values). */
static int encode(const gp_sampler *g, uint64_t index, const config *c, double *x, rl_err *err)
{
	const space *sp = g->base.space;
	for (size_t q = 0; q < g->dim; q++) {
		size_t p = g->param_of[q];
		const param_def *def = &sp->params[p];
		const rl_value *v = &c->v[p];
		if (def->kind == PARAM_CHOICE) {
			size_t k = 0;
			while (k < def->n_choices && !value_equal(&def->choices[k], v))
				k++;
			if (k == def->n_choices)
				return rl_err_set(err, RL_EINVAL,
						  "gp: trial %llu: parameter %s: value is not one of its choices",
						  (unsigned long long)index, def->name);
			x[q] = (double)k;
		} else {
			if (!isfinite(value_as_double(v)))
				return rl_err_set(err, RL_EINVAL,
						  "gp: trial %llu: parameter %s: expected a number",
						  (unsigned long long)index, def->name);
			x[q] = space_to_unit(def, v);
		}
	}
	return 0;
}

static int gp_tell(sampler *s, uint64_t index, const config *c, double loss, double resource,
		   obs_state state, rl_err *err)
{
	gp_sampler *g = (gp_sampler *)s;
	size_t at = obs_lower(g, index);
	int found = at < g->n && g->idx[at] == index;
	int pending = state == OBS_PENDING;
	if (pending && found)
		return 0; /* a value already told stays */
	int failed = !pending && (state == OBS_FAILED || !isfinite(loss) || !isfinite(resource));
	if (failed && !c) {
		if (found)
			obs_remove(g, at);
		return 0;
	}
	if (!c || c->n != g->base.space->n)
		return rl_err_set(err, RL_EINVAL, "gp: trial %llu: configuration has %zu values, the space %zu",
				  (unsigned long long)index, c ? c->n : 0, g->base.space->n);
	double xs[GP_MAX_DIM];
	int rc = encode(g, index, c, xs, err);
	if (rc < 0)
		return rc;
	if (!found) {
		if (obs_reserve(g) < 0)
			return rl_err_set(err, RL_ENOMEM, "gp: telling trial %llu", (unsigned long long)index);
		size_t tail = g->n - at;
		memmove(g->idx + at + 1, g->idx + at, tail * sizeof *g->idx);
		memmove(g->loss + at + 1, g->loss + at, tail * sizeof *g->loss);
		memmove(g->res + at + 1, g->res + at, tail * sizeof *g->res);
		memmove(g->pend + at + 1, g->pend + at, tail * sizeof *g->pend);
		memmove(g->x + (at + 1) * g->dim, g->x + at * g->dim, tail * g->dim * sizeof *g->x);
		g->n++;
		g->idx[at] = index;
	}
	g->pend[at] = pending ? MARK_PENDING : failed ? MARK_FAILED : MARK_NONE;
	g->loss[at] = pending || failed ? NAN : loss;
	g->res[at] = pending || failed ? -INFINITY : resource;
	memcpy(g->x + at * g->dim, xs, g->dim * sizeof *xs);
	return 0;
}

/* ---- the acquisition ------------------------------------------------------ */

/* log expected improvement below y_best at input x; with grad (dc values),
 * its gradient over the numeric inputs. */
static double log_ei(const gp_sampler *g, const double *x, double *grad)
{
	double mu, var, dmu[GP_MAX_DIM], dvar[GP_MAX_DIM];
	gp_model_predict(&g->model, x, &mu, &var, grad ? dmu : NULL, grad ? dvar : NULL);
	double sd = sqrt(var), z = (g->y_best - mu) / sd, log_cdf;
	double lh = gp_log_h(z, &log_cdf), v = log(sd) + lh;
	if (grad) {
		/* d log EI / d mu = -Phi(z) / (sd h), d log EI / d sd = phi(z) / (sd h) */
		double dl_dmu = -exp(log_cdf - lh) / sd;
		double dl_dsd = exp(-0.5 * z * z - GP_LOG_SQRT_2PI - lh) / sd;
		for (size_t c = 0; c < g->dc; c++)
			grad[c] = dl_dmu * dmu[c] + dl_dsd * dvar[c] / (2 * sd);
	}
	return v;
}

typedef struct ascent_ctx {
	const gp_sampler *g;
	double *x; /* the full input; the numeric part is what qn moves */
} ascent_ctx;

static double neg_log_ei(const double *xc, double *grad, void *ctx)
{
	ascent_ctx *a = ctx;
	memcpy(a->x, xc, a->g->dc * sizeof *xc);
	double v = log_ei(a->g, a->x, grad);
	for (size_t c = 0; c < a->g->dc; c++)
		grad[c] = -grad[c];
	return -v;
}

/* A uniform random input. */
static void random_input(const gp_sampler *g, rl_rng *rng, double *x)
{
	for (size_t q = 0; q < g->dim; q++)
		x[q] = q < g->dc ? rng_uniform(rng)
				 : (double)rng_below(rng, g->base.space->params[g->param_of[q]].n_choices);
}

/* Insert (v, x) into the k best kept in vals/xs (descending), k <= GP_TOP + 1. */
static void keep_best(double *vals, double *xs, size_t *n, size_t k, size_t dim, double v,
		      const double *x)
{
	if (!isfinite(v))
		return;
	size_t at = *n;
	while (at > 0 && vals[at - 1] < v)
		at--;
	if (at >= k)
		return;
	size_t last = *n < k ? *n : k - 1;
	memmove(vals + at + 1, vals + at, (last - at) * sizeof *vals);
	memmove(xs + (at + 1) * dim, xs + at * dim, (last - at) * dim * sizeof *xs);
	vals[at] = v;
	memcpy(xs + at * dim, x, dim * sizeof *x);
	if (*n < k)
		(*n)++;
}

/* Maximise log EI; the winner into best (dim values). */
static void maximise(gp_sampler *g, rl_rng *rng, size_t n_fit, double *best)
{
	size_t dim = g->dim;
	double top_v[GP_TOP + 1], top_x[(GP_TOP + 1) * GP_MAX_DIM], x[GP_MAX_DIM];
	size_t n_top = 0;
	for (int i = 0; i < GP_RANDOM; i++) {
		random_input(g, rng, x);
		keep_best(top_v, top_x, &n_top, GP_TOP, dim, log_ei(g, x, NULL), x);
	}
	/* Perturbations of the best fitted points (by their standardised
	 * value): where improvement is likeliest. */
	size_t order[GP_TOP];
	size_t n_best = 0;
	for (size_t i = 0; i < n_fit; i++) {
		size_t at = n_best;
		while (at > 0 && g->by[order[at - 1]] > g->by[i])
			at--;
		if (at >= GP_TOP)
			continue;
		size_t last = n_best < GP_TOP ? n_best : GP_TOP - 1;
		memmove(order + at + 1, order + at, (last - at) * sizeof *order);
		order[at] = i;
		if (n_best < GP_TOP)
			n_best++;
	}
	for (size_t b = 0; b < n_best; b++) {
		const double *xb = g->bx + order[b] * dim;
		for (int i = 0; i < GP_PERTURB; i++) {
			memcpy(x, xb, dim * sizeof *x);
			for (size_t c = 0; c < g->dc; c++) {
				double v = x[c] + GP_PERTURB_SD * rng_normal(rng);
				x[c] = v < 0 ? 0 : v > 1 ? 1 : v;
			}
			keep_best(top_v, top_x, &n_top, GP_TOP, dim, log_ei(g, x, NULL), x);
		}
	}
	/* The best trial itself starts an ascent too. */
	if (n_best)
		keep_best(top_v, top_x, &n_top, GP_TOP + 1, dim,
			  log_ei(g, g->bx + order[0] * dim, NULL), g->bx + order[0] * dim);
	double best_v = -INFINITY;
	if (n_top == 0) {
		random_input(g, rng, best);
		return;
	}
	memcpy(best, top_x, dim * sizeof *best);
	best_v = top_v[0];
	double lo[GP_MAX_DIM], hi[GP_MAX_DIM];
	for (size_t c = 0; c < g->dc; c++) {
		lo[c] = 0;
		hi[c] = 1;
	}
	for (size_t s = 0; s < n_top && g->dc; s++) {
		memcpy(x, top_x + s * dim, dim * sizeof *x);
		ascent_ctx a = {.g = g, .x = x};
		double xc[GP_MAX_DIM], fx;
		memcpy(xc, x, g->dc * sizeof *xc);
		if (qn_minimize(g->dc, xc, lo, hi, neg_log_ei, &a, GP_ASCENT_ITER, 1e-6, &fx) < 0)
			continue;
		if (-fx > best_v) {
			best_v = -fx;
			memcpy(best, xc, g->dc * sizeof *xc);
			memcpy(best + g->dc, x + g->dc, g->dk * sizeof *x);
		}
	}
	/* Each choice input at every value, the others kept. */
	for (size_t q = g->dc; q < dim; q++) {
		size_t nc = g->base.space->params[g->param_of[q]].n_choices;
		memcpy(x, best, dim * sizeof *x);
		for (size_t k = 0; k < nc; k++) {
			x[q] = (double)k;
			double v = log_ei(g, x, NULL);
			if (v > best_v) {
				best_v = v;
				best[q] = (double)k;
			}
		}
	}
}

/* ---- ask ------------------------------------------------------------------- */

/* Fit the model and believe the other trials; returns the fitted count, 0
 * when there is nothing to fit (the caller samples at random), or an error. */
static long prepare(gp_sampler *g)
{
	double top = -INFINITY;
	for (size_t i = 0; i < g->n; i++)
		if (g->pend[i] == MARK_NONE && g->res[i] > top)
			top = g->res[i];
	size_t nf = 0;
	double mean = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (g->pend[i] != MARK_NONE || g->res[i] < top)
			continue;
		memcpy(g->bx + nf * g->dim, g->x + i * g->dim, g->dim * sizeof *g->x);
		g->by[nf++] = g->loss[i];
		mean += g->loss[i];
	}
	if (nf < 2)
		return 0;
	mean /= (double)nf;
	double ss = 0;
	for (size_t i = 0; i < nf; i++)
		ss += (g->by[i] - mean) * (g->by[i] - mean);
	double sd = sqrt(ss / (double)nf);
	if (!(sd > 0))
		sd = 1;
	g->y_best = INFINITY;
	for (size_t i = 0; i < nf; i++) {
		g->by[i] = (g->by[i] - mean) / sd;
		if (g->by[i] < g->y_best)
			g->y_best = g->by[i];
	}
	if (gp_model_set(&g->model, nf, g->bx, g->by) < 0)
		return RL_ENOMEM;
	int rc = gp_model_fit(&g->model, GP_FIT_ITER);
	if (rc < 0)
		return rc;
	/* The kriging believer: every trial without a comparable value at
	 * the model's mean there (means from the real points only); a failed
	 * trial, a bad outcome (issue 30), at the worst real value. */
	double worst = -INFINITY;
	for (size_t i = 0; i < nf; i++)
		worst = fmax(worst, g->by[i]);
	size_t nb = 0;
	for (size_t i = 0; i < g->n; i++) {
		if (g->pend[i] == MARK_NONE && g->res[i] >= top)
			continue;
		double mu = worst, var;
		if (g->pend[i] != MARK_FAILED)
			gp_model_predict(&g->model, g->x + i * g->dim, &mu, &var, NULL, NULL);
		/* by/bx past nf hold the believed points */
		memcpy(g->bx + (nf + nb) * g->dim, g->x + i * g->dim, g->dim * sizeof *g->x);
		g->by[nf + nb++] = mu;
	}
	for (size_t i = 0; i < nb; i++)
		if (gp_model_push(&g->model, g->bx + (nf + i) * g->dim, g->by[nf + i]) < 0)
			return RL_ENOMEM;
	if (nb && gp_model_condition(&g->model) < 0)
		return RL_EINVAL;
	return (long)nf;
}

static int gp_ask(sampler *s, uint64_t index, config *out, rl_err *err)
{
	gp_sampler *g = (gp_sampler *)s;
	const space *sp = s->space;
	rl_rng rng;
	rng_seed(&rng, rng_stream_seed(s->seed, index));
	config c;
	if (config_init(&c, sp->n, err) < 0)
		return RL_ENOMEM;
	size_t reported = 0;
	for (size_t i = 0; i < g->n; i++)
		reported += g->pend[i] == MARK_NONE;
	long nf = 0;
	if (g->dim && reported >= (size_t)g->n_startup) {
		nf = prepare(g);
		if (nf < 0) {
			config_fini(&c);
			return rl_err_set(err, (int)nf, "gp: fitting the model to %zu trials", reported);
		}
	}
	int rc = 0;
	if (nf == 0) {
		/* Start-up (or nothing comparable yet): the random sampler's draws. */
		rc = sampler_random_config(sp, &rng, &c, err);
	} else {
		double best[GP_MAX_DIM];
		maximise(g, &rng, (size_t)nf, best);
		for (size_t p = 0; p < sp->n && rc == 0; p++) {
			const param_def *def = &sp->params[p];
			int q = g->input_of[p];
			if (q < 0)
				rc = value_copy(&c.v[p], &def->fixed, err);
			else if (def->kind == PARAM_CHOICE)
				rc = value_copy(&c.v[p], &def->choices[(size_t)best[q]], err);
			else
				rc = space_from_unit(def, best[q], &c.v[p], err);
		}
	}
	if (rc < 0) {
		config_fini(&c);
		return rc;
	}
	*out = c;
	return 0;
}

static void gp_destroy(sampler *s)
{
	gp_sampler *g = (gp_sampler *)s;
	if (!g)
		return;
	gp_model_fini(&g->model);
	free(g->input_of);
	free(g->param_of);
	free(g->idx);
	free(g->loss);
	free(g->res);
	free(g->pend);
	free(g->x);
	free(g->bx);
	free(g->by);
	free(g);
}

static const sampler_ops gp_ops = {
	.name = "gp",
	.ask = gp_ask,
	.tell = gp_tell,
	.destroy = gp_destroy,
};

/* Options: n_startup (<= 0: 10); the rest are TPE's and ignored. */
int sampler_gp_new(const space *sp, uint64_t seed, const sampler_options *opt, sampler **out,
		   rl_err *err)
{
	if (space_has_conditions(sp))
		return rl_err_set(err, RL_EUNSUPPORTED,
				  "gp does not support conditional parameters; use tpe");
	gp_sampler *g = calloc(1, sizeof *g);
	if (!g)
		return rl_err_set(err, RL_ENOMEM, "creating gp sampler");
	g->base.ops = &gp_ops;
	g->base.space = sp;
	g->base.seed = seed;
	g->n_startup = opt && opt->n_startup > 0 ? opt->n_startup : 10;
	g->input_of = calloc(sp->n ? sp->n : 1, sizeof *g->input_of);
	g->param_of = calloc(sp->n ? sp->n : 1, sizeof *g->param_of);
	if (!g->input_of || !g->param_of) {
		gp_destroy(&g->base);
		return rl_err_set(err, RL_ENOMEM, "creating gp sampler");
	}
	/* Numeric inputs first, then the choices. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t p = 0; p < sp->n; p++) {
			param_kind k = sp->params[p].kind;
			if (k == PARAM_FIXED || (k == PARAM_CHOICE) != pass)
				continue;
			if (pass == 0)
				g->dc++;
			else
				g->dk++;
			g->param_of[g->dim] = p;
			g->input_of[p] = (int)g->dim++;
		}
	for (size_t p = 0; p < sp->n; p++)
		if (sp->params[p].kind == PARAM_FIXED)
			g->input_of[p] = -1;
	if (g->dim > GP_MAX_DIM) {
		gp_destroy(&g->base);
		return rl_err_set(err, RL_EUNSUPPORTED, "gp takes at most %d parameters that are not fixed",
				  GP_MAX_DIM);
	}
	if (g->dim && gp_model_init(&g->model, g->dc, g->dk) < 0) {
		gp_destroy(&g->base);
		return rl_err_set(err, RL_ENOMEM, "creating gp sampler");
	}
	*out = &g->base;
	return 0;
}
