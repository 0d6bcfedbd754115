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
	uint32_t *kernel_of; /* slot -> kernel index in its set */
	/* Scratch of the fit, per numeric dimension: the below set's reported
	 * observations, the above set's reported ones, the above set's all
	 * (pending included), each in unit-value order. */
	double *lmu[3], *lsig;
	uint32_t *lslot[3];
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
	for (int l = 0; l < 3; l++) {
		free(j->lmu[l]);
		free(j->lslot[l]);
	}
	free(j->lsig);
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
	SEARCH_GROW(j->kernel_of, cap);
	for (int l = 0; l < 3; l++) {
		SEARCH_GROW(j->lmu[l], cap);
		SEARCH_GROW(j->lslot[l], cap);
	}
	SEARCH_GROW(j->lsig, cap);
	j->kcap = cap;
	return 0;
}

/* Give the kernels of list l (n centres in order, their slots) their
 * centres and neighbour-gap widths in dimension q of set s; with
 * only_pending, only the pending observations' (see fit_widths). */
static void scatter_widths(const tpe_sampler *t, struct tpe_joint *j, joint_set *s, size_t q,
			   int l, size_t n, int only_pending)
{
	size_t k1 = s->m + 1;
	double *mu = s->mu + q * k1, *sig = s->sig + q * k1;
	tpe_bandwidths(j->lmu[l], n, j->lsig);
	for (size_t i = 0; i < n; i++) {
		uint32_t sl = j->lslot[l][i];
		if (only_pending && t->pend[sl] != OBS_MARK_PENDING)
			continue;
		mu[j->kernel_of[sl]] = j->lmu[l][i];
		sig[j->kernel_of[sl]] = j->lsig[i];
	}
}

/*
 * Centres and neighbour-gap widths of numeric dimension q for both sets,
 * from one walk over the observations in unit-value order (t->by_u, kept
 * sorted by tpe.c, so no sort is needed).  The below set's kernels and the
 * above set's reported ones take their widths from the gaps among the
 * set's reported observations alone; a pending observation (above set)
 * takes the width its place among all of the set's gives it, and never
 * narrows a reported one's.
 */
static void fit_widths(const tpe_sampler *t, struct tpe_joint *j, size_t q)
{
	size_t p = j->num_p[q], nb = 0, na = 0, nall = 0;
	int with_pending = t->n_pending > 0;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t sl = t->by_u[p][i];
		double u = t->u[sl * t->d + p];
		int pend = t->pend[sl] == OBS_MARK_PENDING;
		if (t->below[sl]) {
			if (!pend) {
				j->lmu[0][nb] = u;
				j->lslot[0][nb++] = sl;
			}
			continue;
		}
		if (!pend) {
			j->lmu[1][na] = u;
			j->lslot[1][na++] = sl;
		}
		if (with_pending) {
			j->lmu[2][nall] = u;
			j->lslot[2][nall++] = sl;
		}
	}
	scatter_widths(t, j, &j->below, q, 0, nb, 0);
	scatter_widths(t, j, &j->above, q, 1, na, 0);
	if (with_pending)
		scatter_widths(t, j, &j->above, q, 2, nall, 1);
}

/* The per-kernel constants of set s once its centres, widths and weights
 * are in: 1 / width, kconst (the log weight minus the log of the numeric
 * factors' normalisers) and the categorical kernels' log probabilities. */
static void set_constants(const tpe_sampler *t, const struct tpe_joint *j, joint_set *s)
{
	size_t m = s->m, k1 = m + 1;
	/* The normalisers and the weight multiply per kernel and are logged
	 * once (a log per kernel and dimension was a sixth of an ask at 1,000
	 * trials). */
	double *norm = s->acc;
	for (size_t k = 0; k < k1; k++)
		norm[k] = 1.0;
	for (size_t q = 0; q < j->nn; q++) {
		const tpe_param *pm = &t->pm[j->num_p[q]];
		double *mu = s->mu + q * k1, *inv = s->inv + q * k1, *sig = s->sig + q * k1;
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
		size_t nc = t->base.space->params[j->cat_p[q]].n_choices;
		s->cat[q * k1 + m] = UINT32_MAX; /* the prior: uniform */
		/* Each observation: 1 on its choice plus prior_weight / (m + 1)
		 * on every choice, normalised (the univariate kernels). */
		double share = TPE_PRIOR_WEIGHT / (double)(m + 1), row = 1.0 + (double)nc * share;
		s->cat_own[q] = log((1.0 + share) / row);
		s->cat_other[q] = log(share / row);
	}
}

/* Refit both sets' mixtures (after tpe_fit set below[] and w[]): kernel k
 * of a set is its k-th observation by trial index, kernel m its prior.
 * Every pass over the observations serves both sets. */
int tpe_joint_fit(tpe_sampler *t)
{
	struct tpe_joint *j = t->joint;
	joint_set *b = &j->below, *a = &j->above;
	if (scratch_reserve(j, t->used) < 0)
		return RL_ENOMEM;
	size_t mb = 0, ma = 0;
	double tb = TPE_PRIOR_WEIGHT, ta = TPE_PRIOR_WEIGHT;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t sl = t->by_time[i];
		if (t->below[sl]) {
			j->kernel_of[sl] = (uint32_t)mb++;
			tb += t->w[sl];
		} else {
			j->kernel_of[sl] = (uint32_t)ma++;
			ta += t->w[sl];
		}
	}
	if (set_reserve(b, mb, j->nn, j->nc) < 0 || set_reserve(a, ma, j->nn, j->nc) < 0)
		return RL_ENOMEM;
	b->m = mb;
	a->m = ma;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t sl = t->by_time[i];
		int in_b = t->below[sl];
		joint_set *s = in_b ? b : a;
		size_t k = j->kernel_of[sl], k1 = s->m + 1;
		s->wfrac[k] = t->w[sl] / (in_b ? tb : ta);
		for (size_t q = 0; q < j->nc; q++)
			s->cat[q * k1 + k] = (uint32_t)t->u[sl * t->d + j->cat_p[q]];
	}
	b->wfrac[mb] = TPE_PRIOR_WEIGHT / tb;
	a->wfrac[ma] = TPE_PRIOR_WEIGHT / ta;
	for (size_t q = 0; q < j->nn; q++)
		fit_widths(t, j, q);
	set_constants(t, j, b);
	set_constants(t, j, a);
	return 0;
}

/* sum of e^(acc[k] - top) over k < n, where top is the largest acc[k]:
 * the log-sum-exp's inner sum, with tpe_math.h's vectorisable exp (libm's
 * was a third of the multivariate sampler's time).  Terms below e^-700 are
 * taken at e^-700 (tpe_exp_neg's domain): at most n e^-700 in a sum >= 1.
 * As kernel_sum in tpe.c: the terms go to a buffer in a loop without a
 * reduction (which vectorises; a reduction into the eight partial sums
 * directly did not), then are added in a fixed order, eight interleaved
 * partial sums, whatever the vector width. */
TPE_CLONES
static double sum_exp(const double *restrict acc, size_t n, double top)
{
	double buf[256], part[8] = {0};
	for (size_t at = 0; at < n; at += 256) {
		size_t m = n - at < 256 ? n - at : 256;
		for (size_t i = 0; i < m; i++) {
			double a = acc[at + i] - top;
			buf[i] = tpe_exp_neg(a > -700.0 ? a : -700.0);
		}
		size_t i = 0;
		for (; i + 8 <= m; i += 8)
			for (int l = 0; l < 8; l++)
				part[l] += buf[i + l];
		for (; i < m; i++)
			part[0] += buf[i];
	}
	return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/* acc[k] -= ((x - mu[k]) inv[k])^2 / 2 for k < n: one numeric dimension's
 * Gaussian exponents (the normalisers are in kconst). */
TPE_CLONES
static void add_gauss(double *restrict acc, const double *restrict mu, const double *restrict inv,
		      double x, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		double z = (x - mu[k]) * inv[k];
		acc[k] -= 0.5 * z * z;
	}
}

/* acc[k] = kconst[k] - ((x - mu[k]) inv[k])^2 / 2 for k < n: the first
 * numeric dimension, with the constants (what a copy of kconst and then
 * add_gauss computed, in one pass). */
TPE_CLONES
static void start_gauss(double *restrict acc, const double *restrict kconst,
			const double *restrict mu, const double *restrict inv, double x, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		double z = (x - mu[k]) * inv[k];
		acc[k] = kconst[k] - 0.5 * z * z;
	}
}

/* acc[k] += own or other, as kernel k's choice is xc or not, for k < n. */
TPE_CLONES
static void add_cat(double *restrict acc, const uint32_t *restrict cat, uint32_t xc, double own,
		    double other, size_t n)
{
	for (size_t k = 0; k < n; k++)
		acc[k] += cat[k] == xc ? own : other;
}

/* The largest of acc[0..n) (exact: the order does not matter). */
TPE_CLONES
static double max_of(const double *restrict acc, size_t n)
{
	double part[8];
	for (int i = 0; i < 8; i++)
		part[i] = -INFINITY;
	size_t k = 0;
	for (; k + 8 <= n; k += 8)
		for (int i = 0; i < 8; i++)
			part[i] = acc[k + i] > part[i] ? acc[k + i] : part[i];
	for (; k < n; k++)
		part[0] = acc[k] > part[0] ? acc[k] : part[0];
	double top = part[0];
	for (int i = 1; i < 8; i++)
		top = part[i] > top ? part[i] : top;
	return top;
}

/* log of the set's mixture at candidate x (numeric unit values xn, choice
 * indices xc).  The dimensions are added in a fixed order (numeric ones by
 * q, then choices), each by a loop over the kernels that vectorises. */
static double set_logpdf(const tpe_sampler *t, const struct tpe_joint *j, joint_set *s,
			 const double *xn, const uint32_t *xc)
{
	size_t k1 = s->m + 1;
	double *acc = s->acc;
	size_t q0 = 0;
	if (j->nn && t->pm[j->num_p[0]].kind != TK_BAND)
		start_gauss(acc, s->kconst, s->mu, s->inv, xn[q0++], k1);
	else
		memcpy(acc, s->kconst, k1 * sizeof *acc);
	for (size_t q = q0; q < j->nn; q++) {
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
			add_gauss(acc, mu, inv, x, k1);
		}
	}
	for (size_t q = 0; q < j->nc; q++) {
		size_t nc = t->base.space->params[j->cat_p[q]].n_choices;
		add_cat(acc, s->cat + q * k1, xc[q], s->cat_own[q], s->cat_other[q], s->m);
		acc[s->m] += -log((double)nc);
	}
	double top = max_of(acc, k1);
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
