/*
 * tpe_joint.c - multivariate TPE (search.multivariate): one joint Parzen
 * estimator over the parameters, as Optuna's TPESampler(multivariate=True),
 * instead of one estimator per parameter.
 *
 * Each observation of a set (below or above, split as in tpe.c) is one
 * kernel over all joint parameters at once: a product of one truncated
 * normal per numeric parameter (a band probability for linear integers)
 * and one categorical kernel per choice.  l(x) and g(x) are mixtures of
 * those products, so a candidate scores high only where good trials had
 * that *combination* of values; the univariate estimator scores each
 * parameter on its own and cannot tell that x0 = 0.2 is good only together
 * with x1 = 0.8.  Proposals draw one kernel of l (or the prior) and then
 * every coordinate from it.
 *
 * Bandwidths: per observation and parameter, the neighbour-gap rule of the
 * univariate estimator (tpe_bandwidths: the larger gap to the sorted
 * neighbours within the set, clipped), applied to each joint dimension on
 * its own; kernels are truncated-normal densities (1 / bandwidth
 * included), so a crowd of good trials makes a tall narrow peak that
 * proposals refine.  Optuna 5's multivariate TPE is built the same way.
 * One difference: a pending trial (the constant liar, above set) gets a
 * kernel of its own width but does not narrow its reported neighbours'
 * kernels: their widths come from the gaps among reported observations
 * alone.  A pending trial is no information about the stretch around its
 * neighbours, and letting it narrow them (Optuna does) made 4 trials at a
 * time 47 % worse than one at a time on Hartmann6 (docs/search.md has the
 * figures).  Rejected before (docs/search.md): Scott's rule, one width
 * per set and parameter 0.2 m^(-1/(d+4)), with equal-height kernels
 * (Optuna 3.1's; Branin's three narrow basins stayed blurred, regret 3x
 * this rule's); widths from nearest neighbours in the joint space.  The
 * weights, the prior (N(0.5, 1) per numeric parameter, uniform per choice,
 * weight 1) and the categorical kernels are the univariate ones.
 * Parameters with a condition (`when`) and fixed ones stay univariate: a
 * joint kernel needs every coordinate of every observation.
 *
 * Cost: scoring a candidate visits every kernel of both sets in every joint
 * dimension, O(n d) per candidate with no kernel skipped (a product kernel
 * is negligible only when one of its factors is); the sums run over
 * contiguous per-dimension arrays and vectorise.
 */
#include "search/grow.h"
#include "search/tpe_internal.h"
#include "search/tpe_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One set's joint mixture: kernels 0..m-1 are observations, kernel m the
 * prior.  Numeric dimension q of kernel k is at [q * (m + 1) + k]. */
typedef struct joint_set {
	size_t m, cap;
	double *wfrac;    /* normalised weight, per kernel */
	double *mu, *inv; /* centre, 1 / bandwidth */
	double *sig;
	double *kconst;   /* per kernel: log weight plus the numeric factors'
			   * normalisers (TK_CONT: -log(sqrt(2 pi) sigma Z);
			   * TK_BAND: -log(Z)), so scoring adds only what
			   * depends on the candidate */
	uint32_t *cat;    /* choice of kernel k in categorical dimension q: [q * (m + 1) + k] */
	double *cat_own, *cat_other; /* per categorical dimension: log probabilities */
	double *acc;      /* scratch: per-kernel log density of one candidate */
} joint_set;

struct tpe_joint {
	size_t nn, nc;     /* numeric and categorical joint dimensions */
	size_t *num_p;     /* parameter of numeric dimension q */
	size_t *cat_p;     /* parameter of categorical dimension q */
	unsigned char *in; /* per parameter: modelled jointly */
	joint_set below, above;
	uint32_t *kernel_of; /* slot -> kernel index in the set being fitted */
	size_t kcap;
};

static void set_fini(joint_set *s)
{
	free(s->wfrac);
	free(s->mu);
	free(s->inv);
	free(s->sig);
	free(s->kconst);
	free(s->cat);
	free(s->cat_own);
	free(s->cat_other);
	free(s->acc);
}

void tpe_joint_free(struct tpe_joint *j)
{
	if (!j)
		return;
	set_fini(&j->below);
	set_fini(&j->above);
	free(j->num_p);
	free(j->cat_p);
	free(j->in);
	free(j->kernel_of);
	free(j);
}

int tpe_joint_has(const struct tpe_joint *j, size_t p)
{
	return j && j->in[p];
}

int tpe_joint_new(tpe_sampler *t, struct tpe_joint **out)
{
	struct tpe_joint *j = calloc(1, sizeof *j);
	if (!j)
		return RL_ENOMEM;
	size_t d = t->d ? t->d : 1;
	j->num_p = calloc(d, sizeof *j->num_p);
	j->cat_p = calloc(d, sizeof *j->cat_p);
	j->in = calloc(d, 1);
	if (!j->num_p || !j->cat_p || !j->in) {
		tpe_joint_free(j);
		return RL_ENOMEM;
	}
	for (size_t p = 0; p < t->d; p++) {
		if (t->base.space->params[p].n_when)
			continue;
		switch (t->pm[p].kind) {
		case TK_CONT:
		case TK_BAND:
			j->num_p[j->nn++] = p;
			j->in[p] = 1;
			break;
		case TK_CAT:
			j->cat_p[j->nc++] = p;
			j->in[p] = 1;
			break;
		case TK_FIXED:
			break;
		}
	}
	*out = j;
	return 0;
}

static int set_reserve(joint_set *s, size_t m, size_t nn, size_t nc)
{
	size_t k = m + 1;
	if (k <= s->cap)
		return 0;
	size_t cap = s->cap ? s->cap : 32;
	while (cap < k)
		cap *= 2;
	size_t nn1 = nn ? nn : 1, nc1 = nc ? nc : 1;
	SEARCH_GROW(s->wfrac, cap);
	SEARCH_GROW(s->acc, cap);
	SEARCH_GROW(s->mu, cap * nn1);
	SEARCH_GROW(s->inv, cap * nn1);
	SEARCH_GROW(s->sig, cap * nn1);
	SEARCH_GROW(s->kconst, cap);
	SEARCH_GROW(s->cat, cap * nc1);
	SEARCH_GROW(s->cat_own, nc1);
	SEARCH_GROW(s->cat_other, nc1);
	s->cap = cap;
	return 0;
}

static int scratch_reserve(struct tpe_joint *j, size_t slots)
{
	if (slots <= j->kcap)
		return 0;
	size_t cap = j->kcap ? j->kcap : 64;
	while (cap < slots)
		cap *= 2;
	uint32_t *k = realloc(j->kernel_of, cap * sizeof *k);
	if (!k)
		return RL_ENOMEM;
	j->kernel_of = k;
	j->kcap = cap;
	return 0;
}

/*
 * Centres and neighbour-gap widths of joint dimension p (parameter p) for
 * the set's kernels, walking the observations in unit-value order
 * (t->by_u, kept sorted by tpe.c) so no sort is needed.  pass 0: every
 * reported observation of the set, widths from the gaps among them alone;
 * pass 1: every observation of the set, pending ones included, and only
 * the pending ones' widths written (a pending trial gets the width its
 * place among all gives it, but never narrows a reported one's).
 */
static void set_widths(tpe_sampler *t, const struct tpe_joint *j, size_t p, int below,
		       int pass, double *mu, double *sig)
{
	size_t c = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t sl = t->by_u[p][i];
		if (t->below[sl] != below || (pass == 0 && t->pend[sl] == OBS_MARK_PENDING))
			continue;
		t->scratch_mu[c] = t->u[sl * t->d + p];
		t->scratch_slot[c++] = sl;
	}
	tpe_bandwidths(t->scratch_mu, c, t->scratch_sig);
	for (size_t i = 0; i < c; i++) {
		uint32_t sl = t->scratch_slot[i];
		if (pass == 1 && t->pend[sl] != OBS_MARK_PENDING)
			continue;
		mu[j->kernel_of[sl]] = t->scratch_mu[i];
		sig[j->kernel_of[sl]] = t->scratch_sig[i];
	}
}

/* Fit the mixture of the observations whose below flag is `below`. */
static int fit_set(tpe_sampler *t, struct tpe_joint *j, joint_set *s, int below)
{
	size_t m = 0;
	double total = TPE_PRIOR_WEIGHT;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t sl = t->by_time[i];
		if (t->below[sl] == below) {
			j->kernel_of[sl] = (uint32_t)m++;
			total += t->w[sl];
		}
	}
	if (set_reserve(s, m, j->nn, j->nc) < 0)
		return RL_ENOMEM;
	s->m = m;
	size_t k1 = m + 1;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t sl = t->by_time[i];
		if (t->below[sl] == below)
			s->wfrac[j->kernel_of[sl]] = t->w[sl] / total;
	}
	s->wfrac[m] = TPE_PRIOR_WEIGHT / total;

	/* The normalisers and the weight multiply per kernel and are logged
	 * once (a log per kernel and dimension was a sixth of an ask at 1,000
	 * trials). */
	double *norm = s->acc;
	for (size_t k = 0; k < k1; k++)
		norm[k] = 1.0;
	for (size_t q = 0; q < j->nn; q++) {
		size_t p = j->num_p[q];
		const tpe_param *pm = &t->pm[p];
		double *mu = s->mu + q * k1, *inv = s->inv + q * k1, *sig = s->sig + q * k1;
		set_widths(t, j, p, below, 0, mu, sig);
		if (!below && t->n_pending)
			set_widths(t, j, p, below, 1, mu, sig);
		mu[m] = 0.5;
		sig[m] = 1.0;
		for (size_t k = 0; k < k1; k++) {
			double z = tpe_unit_mass(mu[k], sig[k]);
			inv[k] = 1.0 / sig[k];
			norm[k] *= pm->kind == TK_BAND ? z : TPE_SQRT_2PI * sig[k] * z;
		}
	}
	for (size_t k = 0; k < k1; k++)
		s->kconst[k] = -log(norm[k] / s->wfrac[k]);
	for (size_t q = 0; q < j->nc; q++) {
		size_t p = j->cat_p[q];
		size_t nc = t->base.space->params[p].n_choices;
		uint32_t *cat = s->cat + q * k1;
		for (size_t i = 0; i < t->n; i++) {
			uint32_t sl = t->by_time[i];
			if (t->below[sl] == below)
				cat[j->kernel_of[sl]] = (uint32_t)t->u[sl * t->d + p];
		}
		cat[m] = UINT32_MAX; /* the prior: uniform */
		/* Each observation: 1 on its choice plus prior_weight / (m + 1)
		 * on every choice, normalised (the univariate kernels). */
		double share = TPE_PRIOR_WEIGHT / (double)(m + 1), row = 1.0 + (double)nc * share;
		s->cat_own[q] = log((1.0 + share) / row);
		s->cat_other[q] = log(share / row);
	}
	return 0;
}

int tpe_joint_fit(tpe_sampler *t)
{
	struct tpe_joint *j = t->joint;
	if (scratch_reserve(j, t->used) < 0 || fit_set(t, j, &j->below, 1) < 0 ||
	    fit_set(t, j, &j->above, 0) < 0)
		return RL_ENOMEM;
	return 0;
}

/* sum of e^(acc[k] - top) over k < n, where top is the largest acc[k]:
 * the log-sum-exp's inner sum, with tpe_math.h's vectorisable exp (libm's
 * was a third of the multivariate sampler's time).  Terms below e^-700 are
 * taken at e^-700 (tpe_exp_neg's domain): at most n e^-700 in a sum >= 1. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2,arch=haswell", "default")))
#endif
static double sum_exp(const double *restrict acc, size_t n, double top)
{
	double part[8] = {0};
	size_t k = 0;
	for (; k + 8 <= n; k += 8)
		for (int i = 0; i < 8; i++) {
			double a = acc[k + i] - top;
			part[i] += tpe_exp_neg(a > -700.0 ? a : -700.0);
		}
	for (; k < n; k++) {
		double a = acc[k] - top;
		part[0] += tpe_exp_neg(a > -700.0 ? a : -700.0);
	}
	return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* log of the set's mixture at candidate x (numeric unit values xn, choice
 * indices xc). */
static double set_logpdf(const tpe_sampler *t, const struct tpe_joint *j, joint_set *s,
			 const double *xn, const uint32_t *xc)
{
	size_t k1 = s->m + 1;
	double *acc = s->acc;
	memcpy(acc, s->kconst, k1 * sizeof *acc);
	for (size_t q = 0; q < j->nn; q++) {
		const double *mu = s->mu + q * k1, *inv = s->inv + q * k1;
		double x = xn[q];
		const tpe_param *pm = &t->pm[j->num_p[q]];
		if (pm->kind == TK_BAND) {
			double h = pm->half_band;
			for (size_t k = 0; k < k1; k++) {
				double pr = tpe_phi_diff((x - h - mu[k]) * inv[k], (x + h - mu[k]) * inv[k]);
				acc[k] += log(pr > 1e-300 ? pr : 1e-300);
			}
		} else {
			for (size_t k = 0; k < k1; k++) {
				double z = (x - mu[k]) * inv[k];
				acc[k] -= 0.5 * z * z;
			}
		}
	}
	for (size_t q = 0; q < j->nc; q++) {
		const uint32_t *cat = s->cat + q * k1;
		double own = s->cat_own[q], other = s->cat_other[q];
		size_t nc = t->base.space->params[j->cat_p[q]].n_choices;
		for (size_t k = 0; k < s->m; k++)
			acc[k] += cat[k] == xc[q] ? own : other;
		acc[s->m] += -log((double)nc);
	}
	double top = -INFINITY;
	for (size_t k = 0; k < k1; k++)
		if (acc[k] > top)
			top = acc[k];
	return top + log(sum_exp(acc, k1, top));
}

int tpe_joint_ask(tpe_sampler *t, rl_rng *rng, config *c, rl_err *err)
{
	struct tpe_joint *j = t->joint;
	const space *sp = t->base.space;
	double xn[64], best_xn[64], at[64];
	uint32_t xc[64], best_xc[64];
	if (j->nn > 64 || j->nc > 64)
		return rl_err_set(err, RL_EUNSUPPORTED,
				  "tpe: multivariate takes at most 64 numeric and 64 choice parameters");
	joint_set *b = &j->below;
	size_t k1 = b->m + 1;
	double best = -INFINITY;
	for (int cand = 0; cand < t->n_candidates; cand++) {
		/* Below's weights are all equal (observations and prior 1). */
		size_t k = (size_t)rng_below(rng, k1);
		for (size_t q = 0; q < j->nn; q++) {
			xn[q] = tpe_truncnorm(b->mu[q * k1 + k], b->sig[q * k1 + k], rng);
			at[q] = xn[q];
			const param_def *def = &sp->params[j->num_p[q]];
			if (t->pm[j->num_p[q]].kind == TK_BAND) {
				/* score the integer the draw rounds to, by its band */
				rl_value v;
				if (space_from_unit(def, xn[q], &v, err) < 0)
					return err ? err->code : RL_EINVAL;
				at[q] = space_to_unit(def, &v);
			}
		}
		for (size_t q = 0; q < j->nc; q++) {
			size_t nc = sp->params[j->cat_p[q]].n_choices;
			uint32_t own = b->cat[q * k1 + k];
			if (own == UINT32_MAX || nc == 1) {
				xc[q] = (uint32_t)rng_below(rng, nc);
			} else {
				/* own choice with its kernel's probability, else
				 * one of the others uniformly */
				double r = rng_uniform(rng);
				if (r < exp(b->cat_own[q])) {
					xc[q] = own;
				} else {
					uint32_t o = (uint32_t)rng_below(rng, nc - 1);
					xc[q] = o >= own ? o + 1 : o;
				}
			}
		}
		double score = set_logpdf(t, j, &j->below, at, xc) - set_logpdf(t, j, &j->above, at, xc);
		if (cand == 0 || score > best) {
			best = score;
			memcpy(best_xn, xn, j->nn * sizeof *xn);
			memcpy(best_xc, xc, j->nc * sizeof *xc);
		}
	}
	for (size_t q = 0; q < j->nn; q++) {
		int rc = space_from_unit(&sp->params[j->num_p[q]], best_xn[q], &c->v[j->num_p[q]], err);
		if (rc < 0)
			return rc;
	}
	for (size_t q = 0; q < j->nc; q++) {
		const param_def *def = &sp->params[j->cat_p[q]];
		int rc = value_copy(&c->v[j->cat_p[q]], &def->choices[best_xc[q]], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}
