/*
 * tpe.c - the tree-structured Parzen estimator (Bergstra et al., NeurIPS
 * 2011), shaped like Optuna's default TPESampler (independent, univariate);
 * tpe_joint.c holds the multivariate estimator (search.multivariate).
 *
 * How a proposal is made (docs/search.md has the user's view):
 *   1. While fewer than n_startup trials have reported, trial k gets exactly
 *      the configuration the random sampler gives it (same per-index stream).
 *   2. Observations are ranked by (resource descending, loss ascending, trial
 *      index ascending): a trial stopped early ranks below every trial that
 *      trained further, as Optuna ranks pruned trials by their last step.
 *      Pending trials (proposed, not reported: OBS_PENDING) rank last.  The
 *      best gamma(n) = min(ceil(0.1 n), 25) of the n reported ones form the
 *      "below" set, the rest (pending included) the "above" set.
 *   3. Per parameter, in the unit-cube view of space.h (log scales already
 *      applied, integers as bands), each set becomes a Parzen mixture l(x)
 *      (below) and g(x) (above): one truncated normal on [0, 1] per
 *      observation where the parameter is active, plus a prior N(0.5, 1),
 *      weight 1.  Bandwidths follow Optuna: the larger gap to the sorted
 *      neighbours (the end observations use their one inner gap), clipped
 *      to [1 / min(100, 1 + kernels), 1] (the "magic clip").  Weights: below
 *      all 1; above, when it holds 25 or more, a linear ramp from 1/n to 1
 *      over the older trials (trial index order) and 1 for the newest 25.
 *      Kernels have equal heights (mass = weight x bandwidth): an
 *      observation stands for the stretch around it, and observations crowd
 *      where TPE already looked (docs/search.md).
 *   4. n_candidates draws from l, a kernel chosen in proportion to its mass;
 *      the one maximising log l(x) - log g(x) wins.  Floats and log-scale
 *      integers are scored by density; linear integers by the probability
 *      of their band; choices by Optuna's categorical kernels (each
 *      observation puts 1 on its choice plus prior_weight / kernels on every
 *      choice, normalised; the prior is uniform).
 *
 * Speed (bench/bench_tpe.c): observations are kept in three incrementally
 * sorted orders (rank, trial index, and per parameter by unit value), updated
 * by binary insertion on tell, so fitting is a few linear passes without any
 * sort.  g(x) is evaluated over kernels bucketed by bandwidth, each bucket
 * sorted by centre, skipping kernels farther than TPE_CUTOFF bandwidths from
 * x.  Every skipped kernel contributes less than its weight times
 * exp(-TPE_CUTOFF^2 / 2) / (sqrt(2 pi) 0.34 W) (0.34: the least mass of a
 * kernel centred in [0, 1] with bandwidth <= 1), while the prior alone keeps
 * g(x) above 0.92 / W, so the relative error of g is below 1.3 n exp(-32)
 * (< 1e-10 for n = 5000): results match the exhaustive sum to that
 * precision, with typically a fifth of the kernels visited.
 *
 * Determinism: ask(index) uses the stream rng_stream_seed(seed, index) and a
 * model that depends only on the set of observations (ties broken by trial
 * index), not on the order of tells.
 */
#include "search/grow.h"
#include "search/pareto.h"
#include "search/rng.h"
#include "search/sampler.h"
#include "search/tpe_internal.h"
#include "search/tpe_math.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Ordered slot arrays                                                  */

typedef int (*slot_cmp)(const tpe_sampler *t, size_t p, uint32_t a, uint32_t b);

static int cmp_rank(const tpe_sampler *t, size_t p, uint32_t a, uint32_t b)
{
	if (t->res[a] != t->res[b])
		return t->res[a] > t->res[b] ? -1 : 1;
	/* Constraints: feasible (0) first, infeasible by violation. */
	if (t->viol[a] != t->viol[b])
		return t->viol[a] < t->viol[b] ? -1 : 1;
	if (t->loss[a] != t->loss[b])
		return t->loss[a] < t->loss[b] ? -1 : 1;
	return t->idx[a] < t->idx[b] ? -1 : t->idx[a] > t->idx[b];
}

static int cmp_time(const tpe_sampler *t, size_t p, uint32_t a, uint32_t b)
{
	return t->idx[a] < t->idx[b] ? -1 : t->idx[a] > t->idx[b];
}

/* By unit value; inactive (NaN) after every value. */
static int cmp_unit(const tpe_sampler *t, size_t p, uint32_t a, uint32_t b)
{
	double ua = t->u[a * t->d + p], ub = t->u[b * t->d + p];
	if (isnan(ua) != isnan(ub))
		return isnan(ua) ? 1 : -1;
	if (ua != ub && !isnan(ua))
		return ua < ub ? -1 : 1;
	return cmp_time(t, p, a, b);
}

/* First position whose element does not order before slot s. */
static size_t order_lower(const tpe_sampler *t, const uint32_t *arr, size_t n, size_t p,
			  uint32_t s, slot_cmp cmp)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp(t, p, arr[mid], s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert s into arr (n elements, room for one more).  Appends in O(1) when
 * s orders last, the common case for the time order. */
static void order_insert(const tpe_sampler *t, uint32_t *arr, size_t n, size_t p, uint32_t s,
			 slot_cmp cmp)
{
	size_t at = (n && cmp(t, p, arr[n - 1], s) < 0) ? n : order_lower(t, arr, n, p, s, cmp);
	memmove(arr + at + 1, arr + at, (n - at) * sizeof *arr);
	arr[at] = s;
}

/* Remove s (present, keyed by its current values) from arr of n. */
static void order_remove(const tpe_sampler *t, uint32_t *arr, size_t n, size_t p, uint32_t s,
			 slot_cmp cmp)
{
	size_t at = order_lower(t, arr, n, p, s, cmp);
	if (at < n && arr[at] == s)
		memmove(arr + at, arr + at + 1, (n - at - 1) * sizeof *arr);
}

/* Slot holding trial index, or -1. */
static long find_slot(const tpe_sampler *t, uint64_t index)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->idx[t->by_time[mid]] < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->idx[t->by_time[lo]] == index ? (long)t->by_time[lo] : -1;
}

/* ------------------------------------------------------------------ */
/* Mixtures                                                             */

/* Phi(b) - Phi(a) for a <= b, accurate in both tails. */
double tpe_phi_diff(double a, double b)
{
	if (a >= 0)
		return 0.5 * (erfc(a * M_SQRT1_2) - erfc(b * M_SQRT1_2));
	if (b <= 0)
		return 0.5 * (erfc(-b * M_SQRT1_2) - erfc(-a * M_SQRT1_2));
	return 1.0 - 0.5 * erfc(-a * M_SQRT1_2) - 0.5 * erfc(b * M_SQRT1_2);
}

/* Mass of N(mu, sigma) inside [0, 1] when a tail reaches past 0 or 1 (the
 * inline tpe_unit_mass handles kernels well inside). */
double tpe_unit_mass_edge(double mu, double sigma)
{
	return tpe_phi_diff(-mu / sigma, (1.0 - mu) / sigma);
}

static int mixture_reserve(tpe_mixture *m, size_t n)
{
	if (n <= m->cap)
		return 0;
	size_t cap = m->cap ? m->cap : 32;
	while (cap < n)
		cap *= 2;
	double **arrs[] = {&m->mu, &m->inv_sigma, &m->coef, &m->sigma, &m->kmass};
	for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) {
		double *p = realloc(*arrs[i], cap * sizeof **arrs[i]);
		if (!p)
			return RL_ENOMEM;
		*arrs[i] = p;
	}
	m->cap = cap;
	return 0;
}

static void mixture_fini(tpe_mixture *m)
{
	free(m->mu);
	free(m->inv_sigma);
	free(m->coef);
	free(m->sigma);
	free(m->kmass);
}

/* Optuna's bandwidths for sorted centres mu[0..n): the larger gap to a
 * neighbour (0 and 1 act as neighbours of the ends, except that with two or
 * more points each end uses its inner gap), clipped to [sigma_min, 1].
 * The ends are taken out of the loop so the interior one has no branch on
 * the position and vectorises (it runs once per set and parameter at every
 * fit: a tenth of the multivariate sampler's instructions at 1,000 trials
 * with the checks inside). */
TPE_CLONES
void tpe_bandwidths(const double *restrict mu, size_t n, double *restrict sig)
{
	double sigma_min = 1.0 / fmin(100.0, 1.0 + (double)(n + 1));
	if (n == 0)
		return;
	if (n == 1) {
		double left = mu[0], right = 1.0 - mu[0];
		double s = left > right ? left : right;
		sig[0] = s < sigma_min ? sigma_min : s > 1.0 ? 1.0 : s;
		return;
	}
	double s0 = mu[1] - mu[0];
	sig[0] = s0 < sigma_min ? sigma_min : s0 > 1.0 ? 1.0 : s0;
	for (size_t i = 1; i + 1 < n; i++) {
		double left = mu[i] - mu[i - 1], right = mu[i + 1] - mu[i];
		double s = left > right ? left : right;
		sig[i] = s < sigma_min ? sigma_min : s > 1.0 ? 1.0 : s;
	}
	double s1 = mu[n - 1] - mu[n - 2];
	sig[n - 1] = s1 < sigma_min ? sigma_min : s1 > 1.0 ? 1.0 : s1;
}

/*
 * Fit mixture m from n sorted centres mu with bandwidths sig and raw weights
 * w (prior weight TPE_PRIOR_WEIGHT added), grouping kernels into bandwidth
 * buckets (each still sorted by centre) so evaluation can skip far kernels.
 * density: kernels are densities (a narrow one is tall, drawn by weight)
 * instead of equal heights (drawn by weight times bandwidth); TPE uses
 * them with several objectives (docs/search.md, "Several objectives").
 * The cut-off's error bound grows by at most 1 / sigma_min = 100 then
 * (1.3e-8 relative at 5,000 trials).
 */
static int mixture_fit(tpe_mixture *m, tpe_kind kind, const double *mu, const double *sig,
		       const double *w, size_t n, int density)
{
	if (mixture_reserve(m, n) < 0)
		return RL_ENOMEM;
	double total = TPE_PRIOR_WEIGHT;
	for (size_t i = 0; i < n; i++)
		total += w[i];
	double sigma_min = 1.0 / fmin(100.0, 1.0 + (double)(n + 1));
	size_t count[TPE_BUCKETS] = {0};
	int *bucket_of = NULL;
	int small[64];
	if (n > 64) {
		bucket_of = malloc(n * sizeof *bucket_of);
		if (!bucket_of)
			return RL_ENOMEM;
	} else {
		bucket_of = small;
	}
	for (size_t i = 0; i < n; i++) {
		int b = 0;
		if (sig[i] > sigma_min) {
			int e;
			frexp(sig[i] / sigma_min, &e);
			b = e < TPE_BUCKETS - 1 ? e : TPE_BUCKETS - 1;
		}
		bucket_of[i] = b;
		count[b]++;
	}
	m->bstart[0] = 0;
	for (int b = 0; b < TPE_BUCKETS; b++) {
		m->bstart[b + 1] = m->bstart[b] + count[b];
		m->bmax[b] = 0;
		count[b] = m->bstart[b]; /* fill cursor */
	}
	m->mass = TPE_PRIOR_WEIGHT;
	for (size_t i = 0; i < n; i++) {
		size_t at = count[bucket_of[i]]++;
		double s = sig[i], z = tpe_unit_mass(mu[i], s);
		m->mu[at] = mu[i];
		m->sigma[at] = s;
		m->inv_sigma[at] = 1.0 / s;
		/* Equal heights: the weight times the bandwidth (see
		 * fit_numeric). */
		double h = density ? 1.0 : s; /* a kernel's height times s */
		m->coef[at] = kind == TK_BAND ? w[i] * h / (total * z)
					      : w[i] * (h / s) / (total * TPE_SQRT_2PI * z);
		m->kmass[at] = w[i] * h;
		m->mass += w[i] * h;
		if (s > m->bmax[bucket_of[i]])
			m->bmax[bucket_of[i]] = s;
	}
	if (bucket_of != small)
		free(bucket_of);
	m->n = n;
	m->prior_w = TPE_PRIOR_WEIGHT / total;
	double zp = tpe_unit_mass(0.5, 1.0);
	m->prior_coef = kind == TK_BAND ? m->prior_w / zp : m->prior_w / (TPE_SQRT_2PI * zp);
	return 0;
}

/* Index of the first centre in mu[lo, hi) that is >= x. */
static size_t centre_lower(const double *mu, size_t lo, size_t hi, double x)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (mu[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Sum over n kernels of coef * exp(-((x - mu) * inv)^2 / 2): the inner loop
 * of the sampler.  The terms are computed in blocks into a buffer by a loop
 * without a reduction, which the compiler vectorises (built for AVX2+FMA as
 * well as the baseline where the compiler supports function clones), and
 * then added in a fixed order (eight interleaved partial sums), so the
 * result does not depend on the vector width the machine offers.
 */
TPE_CLONES
static double kernel_sum(const double *restrict mu, const double *restrict inv,
			 const double *restrict coef, double x, size_t n)
{
	double buf[256], part[8] = {0};
	for (size_t at = 0; at < n; at += 256) {
		size_t m = n - at < 256 ? n - at : 256;
		for (size_t i = 0; i < m; i++) {
			double t = (x - mu[at + i]) * inv[at + i];
			buf[i] = coef[at + i] * tpe_exp_neg(-0.5 * t * t);
		}
		/* Eight interleaved partial sums: an in-order sum would wait
		 * on every addition's latency. */
		size_t i = 0;
		for (; i + 8 <= m; i += 8)
			for (int j = 0; j < 8; j++)
				part[j] += buf[i + j];
		for (; i < m; i++)
			part[0] += buf[i];
	}
	return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

/*
 * Value of mixture m at x: the density (TK_CONT) or the probability of the
 * band [x - h, x + h] (TK_BAND).  Only kernels whose centre lies within
 * TPE_CUTOFF bandwidths (plus h) of x are visited; see the file comment for
 * the error bound.
 */
static double mixture_eval(const tpe_mixture *m, tpe_kind kind, double x, double h)
{
	double sum;
	if (kind == TK_BAND) {
		sum = m->prior_coef * tpe_phi_diff(x - h - 0.5, x + h - 0.5);
	} else {
		double t = x - 0.5;
		sum = m->prior_coef * exp(-0.5 * t * t);
	}
	for (int b = 0; b < TPE_BUCKETS; b++) {
		size_t end = m->bstart[b + 1];
		if (m->bstart[b] == end)
			continue;
		double reach = TPE_CUTOFF * m->bmax[b] + h;
		size_t lo = centre_lower(m->mu, m->bstart[b], end, x - reach);
		size_t hi = centre_lower(m->mu, lo, end, x + reach);
		const double *mu = m->mu, *inv = m->inv_sigma, *coef = m->coef;
		if (kind == TK_BAND) {
			for (size_t i = lo; i < hi; i++)
				sum += coef[i] * tpe_phi_diff((x - h - mu[i]) * inv[i],
							  (x + h - mu[i]) * inv[i]);
		} else {
			sum += kernel_sum(mu + lo, inv + lo, coef + lo, x, hi - lo);
		}
	}
	return sum;
}

/* Draw from the below mixture: every kernel (the prior included) has weight
 * 1 there, so the kernel is chosen uniformly; then a normal truncated to
 * [0, 1] by rejection. */
double tpe_truncnorm(double mu, double sigma, rl_rng *rng)
{
	for (int tries = 0; tries < 100; tries++) {
		double x = mu + sigma * rng_normal(rng);
		if (x >= 0.0 && x <= 1.0)
			return x;
	}
	return rng_uniform(rng); /* acceptance is >= 1/3 per try: unreachable in practice */
}

static double mixture_sample(const tpe_mixture *m, rl_rng *rng)
{
	/* A kernel in proportion to its mass (weight times bandwidth: the
	 * equal-height mixture that is scored), the prior's mass its weight. */
	double r = rng_uniform(rng) * m->mass;
	size_t k = m->n;
	for (size_t i = 0; i < m->n; i++) {
		r -= m->kmass[i];
		if (r < 0) {
			k = i;
			break;
		}
	}
	double mu = k < m->n ? m->mu[k] : 0.5;
	double sigma = k < m->n ? m->sigma[k] : 1.0;
	return tpe_truncnorm(mu, sigma, rng);
}

/* ------------------------------------------------------------------ */
/* Fitting                                                              */

/* Optuna's default weights for an n-point set, at position k in trial
 * order: 1 for fewer than 25 points; otherwise a ramp from 1/n to 1 over the
 * oldest n - 25 and 1 for the newest 25. */
static double ramp_weight(size_t k, size_t n)
{
	if (n < TPE_FLAT_WEIGHTS)
		return 1.0;
	size_t ramp = n - TPE_FLAT_WEIGHTS;
	if (k >= ramp)
		return 1.0;
	double first = 1.0 / (double)n;
	if (ramp == 1)
		return first;
	return first + (double)k * (1.0 - first) / (double)(ramp - 1);
}

static int fit_numeric(tpe_sampler *t, size_t p)
{
	tpe_param *pm = &t->pm[p];
	double bmu[TPE_MAX_BELOW], bsig[TPE_MAX_BELOW], bw[TPE_MAX_BELOW];
	size_t nb = 0, na = 0;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t s = t->by_u[p][i];
		double u = t->u[s * t->d + p];
		if (isnan(u))
			break; /* inactive from here on: not in the model */
		if (t->below[s]) {
			bmu[nb] = u;
			bw[nb++] = t->w[s];
		} else {
			t->scratch_mu[na] = u;
			t->scratch_w[na++] = t->w[s];
		}
	}
	tpe_bandwidths(bmu, nb, bsig);
	tpe_bandwidths(t->scratch_mu, na, t->scratch_sig);
	int density = t->n_obj > 1;
	if (mixture_fit(&pm->below, pm->kind, bmu, bsig, bw, nb, density) < 0 ||
	    mixture_fit(&pm->above, pm->kind, t->scratch_mu, t->scratch_sig, t->scratch_w, na,
			density) < 0)
		return RL_ENOMEM;
	return 0;
}

/* Categorical l and g: each observation's kernel puts prior_weight / kernels
 * on every choice and 1 on its own, normalised; the prior is uniform. */
static void cat_mixture(const double *sums, size_t nobs, size_t nc, double *out)
{
	double total = 0;
	for (size_t c = 0; c < nc; c++)
		total += sums[c];
	double pw = TPE_PRIOR_WEIGHT, share = pw / (double)(nobs + 1);
	double row = (double)nc * share + 1.0, all = total + pw;
	for (size_t c = 0; c < nc; c++)
		out[c] = ((total * share + sums[c]) / row + pw / (double)nc) / all;
}

static void fit_choice(tpe_sampler *t, size_t p)
{
	tpe_param *pm = &t->pm[p];
	size_t nc = t->base.space->params[p].n_choices, nb = 0, na = 0;
	memset(pm->sum_b, 0, nc * sizeof *pm->sum_b);
	memset(pm->sum_a, 0, nc * sizeof *pm->sum_a);
	for (size_t i = 0; i < t->n; i++) {
		uint32_t s = t->by_time[i];
		double u = t->u[s * t->d + p];
		if (isnan(u))
			continue; /* inactive */
		(t->below[s] ? pm->sum_b : pm->sum_a)[(size_t)u] += t->w[s];
		*(t->below[s] ? &nb : &na) += 1;
	}
	/* lcum holds l, score holds g, then both become their final form. */
	cat_mixture(pm->sum_b, nb, nc, pm->lcum);
	cat_mixture(pm->sum_a, na, nc, pm->score);
	double cum = 0;
	for (size_t c = 0; c < nc; c++) {
		double l = pm->lcum[c];
		pm->score[c] = log(l) - log(pm->score[c]);
		cum += l;
		pm->lcum[c] = cum;
	}
}

/*
 * The split with several objectives (as Optuna's multi-objective TPE):
 * gamma = ceil(0.1 n) of the n reported observations, uncapped, go below,
 * taken by resource (a trial that trained further first, as with one
 * objective), then by Pareto rank among equal resources, whole fronts
 * while they fit; the front that does not fit is thinned to the places
 * left by pareto_select (hypervolume contribution for two objectives,
 * crowding distance for more), against a reference point a tenth beyond
 * that front's worst losses.  Returns how many went below.
 */
static long split_multi(tpe_sampler *t)
{
	size_t m = t->n_obj, reported = t->n - t->n_pending - t->n_failed;
	size_t want = (size_t)ceil(0.1 * (double)reported), nb = 0;
	for (size_t i = 0; i < t->n; i++)
		t->below[t->by_rank[i]] = 0;
	double *pts = malloc((reported ? reported : 1) * m * sizeof *pts);
	int *rank = malloc((reported ? reported : 1) * sizeof *rank);
	unsigned char *keep = malloc(reported ? reported : 1);
	uint32_t *grp = malloc((reported ? reported : 1) * sizeof *grp);
	long rc = pts && rank && keep && grp ? 0 : RL_ENOMEM;
	/* by_rank holds the reported ones first, by resource descending. */
	for (size_t i = 0; rc == 0 && i < reported && nb < want;) {
		size_t g = 0;
		double res = t->res[t->by_rank[i]];
		while (i < reported && t->res[t->by_rank[i]] == res)
			grp[g++] = t->by_rank[i++];
		if (nb + g <= want) {
			for (size_t k = 0; k < g; k++)
				t->below[grp[k]] = 1;
			nb += g;
			continue;
		}
		/* Constraints: the feasible ones (viol 0, first in by_rank
		 * within the group) by Pareto rank; the infeasible after them,
		 * one rank each in by_rank's order (by violation). */
		size_t nf_ok = 0;
		while (nf_ok < g && t->viol[grp[nf_ok]] == 0)
			nf_ok++;
		for (size_t k = 0; k < nf_ok; k++)
			memcpy(pts + k * m, t->lossv + (size_t)grp[k] * m, m * sizeof *pts);
		if (pareto_ranks(pts, nf_ok, m, rank) < 0) {
			rc = RL_ENOMEM;
			break;
		}
		int top = -1;
		for (size_t k = 0; k < nf_ok; k++)
			top = rank[k] > top ? rank[k] : top;
		for (size_t k = nf_ok; k < g; k++)
			rank[k] = top + 1 + (int)(k - nf_ok);
		for (int r = 0; nb < want; r++) {
			size_t nf = 0;
			for (size_t k = 0; k < g; k++)
				if (rank[k] == r)
					nf++;
			if (nb + nf <= want) {
				for (size_t k = 0; k < g; k++)
					if (rank[k] == r)
						t->below[grp[k]] = 1;
				nb += nf;
				continue;
			}
			/* The front that does not fit, thinned. */
			size_t f = 0;
			double ref[64];
			for (size_t q = 0; q < m; q++)
				ref[q] = -INFINITY;
			for (size_t k = 0; k < g; k++)
				if (rank[k] == r) {
					memcpy(pts + f * m, t->lossv + (size_t)grp[k] * m, m * sizeof *pts);
					grp[f++] = grp[k];
				}
			for (size_t k = 0; k < f; k++)
				for (size_t q = 0; q < m; q++)
					ref[q] = fmax(ref[q], pts[k * m + q]);
			for (size_t q = 0; q < m; q++)
				ref[q] += 0.1 * fabs(ref[q]) + 1e-12;
			if (pareto_select(pts, f, m, want - nb, ref, keep) < 0) {
				rc = RL_ENOMEM;
				break;
			}
			for (size_t k = 0; k < f; k++)
				if (keep[k])
					t->below[grp[k]] = 1;
			nb = want;
		}
		break;
	}
	free(pts);
	free(rank);
	free(keep);
	free(grp);
	return rc < 0 ? rc : (long)nb;
}

static int tpe_fit(tpe_sampler *t)
{
	size_t n = t->n;
	/* gamma counts reported trials only: pending and failed ones rank
	 * last and always fall in the above set. */
	size_t nb = (size_t)ceil(0.1 * (double)(n - t->n_pending - t->n_failed));
	if (nb > TPE_MAX_BELOW)
		nb = TPE_MAX_BELOW;
	if (t->n_obj > 1) {
		long got = split_multi(t);
		if (got < 0)
			return RL_ENOMEM;
		nb = (size_t)got;
	} else {
		for (size_t i = 0; i < n; i++)
			t->below[t->by_rank[i]] = i < nb;
	}
	size_t na = n - nb;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t s = t->by_time[i];
		t->w[s] = t->below[s] ? 1.0 : ramp_weight(k++, na);
	}
	for (size_t p = 0; p < t->d; p++) {
		if (t->joint && tpe_joint_has(t->joint, p))
			continue;
		switch (t->pm[p].kind) {
		case TK_CONT:
		case TK_BAND:
			if (fit_numeric(t, p) < 0)
				return RL_ENOMEM;
			break;
		case TK_CAT:
			fit_choice(t, p);
			break;
		case TK_FIXED:
			break;
		}
	}
	if (t->joint && tpe_joint_fit(t) < 0)
		return RL_ENOMEM;
	t->dirty = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Ask and tell                                                         */

static int ask_numeric(tpe_sampler *t, size_t p, rl_rng *rng, rl_value *out, rl_err *err)
{
	const param_def *def = &t->base.space->params[p];
	const tpe_param *pm = &t->pm[p];
	double best = -INFINITY, best_x = 0.5;
	for (int j = 0; j < t->n_candidates; j++) {
		double x = mixture_sample(&pm->below, rng), at = x;
		if (pm->kind == TK_BAND) {
			/* score the integer the draw rounds to, by its band */
			rl_value v;
			if (space_from_unit(def, x, &v, err) < 0)
				return err ? err->code : RL_EINVAL;
			at = space_to_unit(def, &v);
		}
		double l = mixture_eval(&pm->below, pm->kind, at, pm->half_band);
		double g = mixture_eval(&pm->above, pm->kind, at, pm->half_band);
		double score = l > 0 ? log(l) - log(g) : -INFINITY;
		if (j == 0 || score > best) {
			best = score;
			best_x = x;
		}
	}
	return space_from_unit(def, best_x, out, err);
}

static int ask_choice(tpe_sampler *t, size_t p, rl_rng *rng, rl_value *out, rl_err *err)
{
	const param_def *def = &t->base.space->params[p];
	const tpe_param *pm = &t->pm[p];
	size_t nc = def->n_choices, best_c = 0;
	double best = -INFINITY;
	for (int j = 0; j < t->n_candidates; j++) {
		double r = rng_uniform(rng) * pm->lcum[nc - 1];
		size_t c = 0;
		while (c + 1 < nc && pm->lcum[c] <= r)
			c++;
		if (j == 0 || pm->score[c] > best) {
			best = pm->score[c];
			best_c = c;
		}
	}
	return value_copy(out, &def->choices[best_c], err);
}

static int tpe_ask(sampler *s, uint64_t index, config *out, rl_err *err)
{
	tpe_sampler *t = (tpe_sampler *)s;
	rl_rng rng;
	rng_seed(&rng, rng_stream_seed(s->seed, index));
	config c;
	if (config_init(&c, t->d, err) < 0)
		return RL_ENOMEM;
	int rc = 0;
	if (t->n - t->n_pending - t->n_failed < (size_t)t->n_startup) {
		/* Start-up: exactly the random sampler's draws for this index. */
		rc = sampler_random_config(s->space, &rng, &c, err);
	} else {
		if (t->dirty && tpe_fit(t) < 0)
			rc = rl_err_set(err, RL_ENOMEM, "tpe: fitting %zu observations", t->n);
		if (rc == 0 && t->joint)
			rc = tpe_joint_ask(t, &rng, &c, err);
		for (size_t p = 0; p < t->d && rc == 0; p++) {
			if (t->joint && tpe_joint_has(t->joint, p))
				continue;
			if (!space_active(s->space, p, &c))
				continue; /* inactive: stays VAL_NONE */
			switch (t->pm[p].kind) {
			case TK_CONT:
			case TK_BAND:
				rc = ask_numeric(t, p, &rng, &c.v[p], err);
				break;
			case TK_CAT:
				rc = ask_choice(t, p, &rng, &c.v[p], err);
				break;
			case TK_FIXED:
				rc = value_copy(&c.v[p], &s->space->params[p].fixed, err);
				break;
			}
		}
	}
	if (rc < 0) {
		config_fini(&c);
		return rc;
	}
	*out = c;
	return 0;
}

/* Make room for one more observation. */
static int tpe_reserve(tpe_sampler *t)
{
	if (t->n_free || t->used < t->cap)
		return 0;
	size_t cap = t->cap ? t->cap * 2 : 64;
	if (cap > UINT32_MAX)
		return RL_ENOMEM;
	SEARCH_GROW(t->idx, cap);
	SEARCH_GROW(t->loss, cap);
	SEARCH_GROW(t->viol, cap);
	SEARCH_GROW(t->res, cap);
	SEARCH_GROW(t->w, cap);
	SEARCH_GROW(t->u, cap * (t->d ? t->d : 1));
	SEARCH_GROW(t->below, cap);
	SEARCH_GROW(t->pend, cap);
	SEARCH_GROW(t->free_slots, cap);
	SEARCH_GROW(t->by_time, cap);
	SEARCH_GROW(t->by_rank, cap);
	SEARCH_GROW(t->scratch_mu, cap);
	SEARCH_GROW(t->scratch_sig, cap);
	SEARCH_GROW(t->scratch_w, cap);
	if (t->n_obj > 1)
		SEARCH_GROW(t->lossv, cap * t->n_obj);
	for (size_t p = 0; p < t->d; p++)
		if (t->by_u[p])
			SEARCH_GROW(t->by_u[p], cap);
	t->cap = cap;
	return 0;
}

static void tpe_remove(tpe_sampler *t, uint32_t s)
{
	for (size_t p = 0; p < t->d; p++)
		if (t->by_u[p])
			order_remove(t, t->by_u[p], t->n, p, s, cmp_unit);
	order_remove(t, t->by_rank, t->n, 0, s, cmp_rank);
	order_remove(t, t->by_time, t->n, 0, s, cmp_time);
	t->n--;
	t->n_pending -= t->pend[s] == OBS_MARK_PENDING;
	t->n_failed -= t->pend[s] == OBS_MARK_FAILED;
	t->pend[s] = OBS_MARK_NONE;
	t->free_slots[t->n_free++] = s;
	t->dirty = 1;
}

/* Unit value of parameter p in c (choice index for choices), or an error. */
static int tell_unit(const tpe_sampler *t, size_t p, const config *c, uint64_t index, double *u,
		     rl_err *err)
{
	const param_def *def = &t->base.space->params[p];
	const rl_value *v = &c->v[p];
	if (v->type == VAL_NONE && def->n_when) {
		*u = NAN; /* inactive: left out of this parameter's model */
		return 0;
	}
	switch (t->pm[p].kind) {
	case TK_FIXED:
		*u = 0;
		return 0;
	case TK_CAT:
		for (size_t k = 0; k < def->n_choices; k++)
			if (value_equal(&def->choices[k], v)) {
				*u = (double)k;
				return 0;
			}
		return rl_err_set(err, RL_EINVAL,
				  "tpe: trial %llu: parameter %s: value is not one of its choices",
				  (unsigned long long)index, def->name);
	default:
		if (!isfinite(value_as_double(v)))
			return rl_err_set(err, RL_EINVAL,
					  "tpe: trial %llu: parameter %s: expected a number",
					  (unsigned long long)index, def->name);
		*u = space_to_unit(def, v);
		return 0;
	}
}

static int tpe_tell_v(sampler *s, uint64_t index, const config *c, double loss, double violation,
		      double resource, obs_state state, rl_err *err)
{
	tpe_sampler *t = (tpe_sampler *)s;
	long found = find_slot(t, index);
	int pending = state == OBS_PENDING;
	if (pending) {
		/* A value already told stays; pending is only the lack of one. */
		if (t->pending == PENDING_IGNORE || found >= 0)
			return 0;
		loss = INFINITY;
		resource = -INFINITY;
	}
	int failed = !pending && (state == OBS_FAILED || isnan(loss));
	if (failed) {
		/* A bad outcome (issue 30): it ranks last, as a pending trial
		 * does, and stays in the above set, so the region that failed
		 * is not proposed again blindly.  It replaces any earlier
		 * report of the trial.  Without its configuration it can only
		 * be forgotten. */
		if (!c) {
			if (found >= 0)
				tpe_remove(t, (uint32_t)found);
			return 0;
		}
		loss = INFINITY;
		resource = -INFINITY;
	}
	if (!c || c->n != t->d)
		return rl_err_set(err, RL_EINVAL, "tpe: trial %llu: configuration has %zu values, the space %zu",
				  (unsigned long long)index, c ? c->n : 0, t->d);
	if (isnan(resource) || (!pending && !failed && resource == -INFINITY))
		return rl_err_set(err, RL_EINVAL, "tpe: trial %llu: resource is not a number",
				  (unsigned long long)index);
	double ustack[32], *u = t->d <= 32 ? ustack : malloc(t->d * sizeof *u);
	if (!u)
		return rl_err_set(err, RL_ENOMEM, "tpe: telling trial %llu", (unsigned long long)index);
	int rc = 0;
	for (size_t p = 0; p < t->d && rc == 0; p++)
		rc = tell_unit(t, p, c, index, &u[p], err);
	if (rc == 0 && found < 0 && tpe_reserve(t) < 0)
		rc = rl_err_set(err, RL_ENOMEM, "tpe: telling trial %llu", (unsigned long long)index);
	if (rc < 0) {
		if (u != ustack)
			free(u);
		return rc;
	}
	if (found >= 0) {
		/* Replace: re-key the slot in every order whose key changed. */
		uint32_t sl = (uint32_t)found;
		order_remove(t, t->by_rank, t->n, 0, sl, cmp_rank);
		t->n_pending -= t->pend[sl] == OBS_MARK_PENDING;
		t->n_failed -= t->pend[sl] == OBS_MARK_FAILED;
		t->pend[sl] = failed ? OBS_MARK_FAILED : OBS_MARK_NONE;
		t->n_failed += (size_t)failed;
		t->loss[sl] = loss;
		t->viol[sl] = pending || failed ? 0 : violation;
		t->res[sl] = resource;
		order_insert(t, t->by_rank, t->n - 1, 0, sl, cmp_rank);
		for (size_t p = 0; p < t->d; p++) {
			if (t->u[sl * t->d + p] == u[p])
				continue;
			if (t->by_u[p])
				order_remove(t, t->by_u[p], t->n, p, sl, cmp_unit);
			t->u[sl * t->d + p] = u[p];
			if (t->by_u[p])
				order_insert(t, t->by_u[p], t->n - 1, p, sl, cmp_unit);
		}
	} else {
		uint32_t sl = t->n_free ? t->free_slots[--t->n_free] : (uint32_t)t->used++;
		t->idx[sl] = index;
		t->pend[sl] = pending ? OBS_MARK_PENDING : failed ? OBS_MARK_FAILED : OBS_MARK_NONE;
		t->n_pending += (size_t)pending;
		t->n_failed += (size_t)failed;
		t->loss[sl] = loss;
		t->viol[sl] = pending || failed ? 0 : violation;
		t->res[sl] = resource;
		memcpy(&t->u[sl * t->d], u, t->d * sizeof *u);
		order_insert(t, t->by_time, t->n, 0, sl, cmp_time);
		order_insert(t, t->by_rank, t->n, 0, sl, cmp_rank);
		for (size_t p = 0; p < t->d; p++)
			if (t->by_u[p])
				order_insert(t, t->by_u[p], t->n, p, sl, cmp_unit);
		t->n++;
	}
	t->dirty = 1;
	if (u != ustack)
		free(u);
	return 0;
}

static int tpe_tell(sampler *s, uint64_t index, const config *c, double loss, double resource,
		    obs_state state, rl_err *err)
{
	return tpe_tell_v(s, index, c, loss, 0, resource, state, err);
}

/*
 * Constraints (as Optuna's constrained TPE): an infeasible observation is
 * reported, not failed, but ranks after every feasible one at its resource
 * and, among infeasible ones, by violation (cmp_rank; split_multi with
 * several objectives).  So while no trial is feasible, the "below" set is
 * the trials that came closest, and TPE moves towards the feasible region.
 */
static int tpe_tell_constrained(sampler *s, uint64_t index, const config *c, const double *losses,
				size_t n, double violation, double resource, obs_state state,
				rl_err *err)
{
	tpe_sampler *t = (tpe_sampler *)s;
	if (n != (t->n_obj > 1 ? t->n_obj : 1))
		return rl_err_set(err, RL_EINVAL, "tpe: trial %llu: %zu losses for %zu objectives",
				  (unsigned long long)index, n, t->n_obj > 1 ? t->n_obj : 1);
	if (isnan(violation) || violation < 0)
		return rl_err_set(err, RL_EINVAL, "tpe: trial %llu: violation %g is not >= 0",
				  (unsigned long long)index, violation);
	int bad = state == OBS_FAILED;
	for (size_t k = 0; k < n && state != OBS_PENDING; k++)
		bad |= isnan(losses[k]);
	int rc = tpe_tell_v(s, index, c, bad ? NAN : losses[0], violation, resource,
			    bad ? OBS_FAILED : state, err);
	if (rc < 0 || n == 1 || bad || state == OBS_PENDING)
		return rc;
	long sl = find_slot(t, index);
	if (sl >= 0)
		memcpy(t->lossv + (size_t)sl * n, losses, n * sizeof *losses);
	return 0;
}

static int tpe_tell_multi(sampler *s, uint64_t index, const config *c, const double *losses,
			  size_t n, double resource, obs_state state, rl_err *err)
{
	tpe_sampler *t = (tpe_sampler *)s;
	if (n != (t->n_obj > 1 ? t->n_obj : 1))
		return rl_err_set(err, RL_EINVAL, "tpe: trial %llu: %zu losses for %zu objectives",
				  (unsigned long long)index, n, t->n_obj > 1 ? t->n_obj : 1);
	int bad = state == OBS_FAILED;
	for (size_t k = 0; k < n && state != OBS_PENDING; k++)
		bad |= isnan(losses[k]);
	/* One objective's path does the bookkeeping, keyed by the first loss
	 * (which only single-objective ranking reads). */
	int rc = tpe_tell(s, index, c, bad ? NAN : losses[0], resource, bad ? OBS_FAILED : state, err);
	if (rc < 0 || n == 1 || bad || state == OBS_PENDING)
		return rc;
	long sl = find_slot(t, index);
	if (sl >= 0)
		memcpy(t->lossv + (size_t)sl * n, losses, n * sizeof *losses);
	return 0;
}

static void tpe_destroy(sampler *s)
{
	tpe_sampler *t = (tpe_sampler *)s;
	if (!t)
		return;
	for (size_t p = 0; t->pm && p < t->d; p++) {
		mixture_fini(&t->pm[p].below);
		mixture_fini(&t->pm[p].above);
		free(t->pm[p].lcum);
		free(t->pm[p].score);
		free(t->pm[p].sum_b);
		free(t->pm[p].sum_a);
		if (t->by_u)
			free(t->by_u[p]);
	}
	tpe_joint_free(t->joint);
	free(t->pm);
	free(t->by_u);
	free(t->idx);
	free(t->loss);
	free(t->viol);
	free(t->res);
	free(t->w);
	free(t->u);
	free(t->below);
	free(t->pend);
	free(t->free_slots);
	free(t->by_time);
	free(t->by_rank);
	free(t->scratch_mu);
	free(t->scratch_sig);
	free(t->scratch_w);
	free(t->lossv);
	free(t);
}

static const sampler_ops tpe_ops = {
	.name = "tpe",
	.ask = tpe_ask,
	.tell = tpe_tell,
	.destroy = tpe_destroy,
	.tell_multi = tpe_tell_multi,
	.tell_constrained = tpe_tell_constrained,
};

/* Options <= 0 (or opt NULL) take the defaults: 10 start-up trials, 24
 * candidates. */
int sampler_tpe_new(const space *sp, uint64_t seed, const sampler_options *opt, sampler **out,
		    rl_err *err)
{
	tpe_sampler *t = calloc(1, sizeof *t);
	if (!t)
		return rl_err_set(err, RL_ENOMEM, "creating tpe sampler");
	t->base.ops = &tpe_ops;
	t->base.space = sp;
	t->base.seed = seed;
	t->n_startup = opt && opt->n_startup > 0 ? opt->n_startup : 10;
	t->n_candidates = opt && opt->n_candidates > 0 ? opt->n_candidates : 24;
	t->pending = opt ? opt->pending : PENDING_WORST;
	t->multivariate = opt ? opt->multivariate : 0;
	t->n_obj = opt && opt->n_objectives > 1 ? (size_t)opt->n_objectives : 1;
	if (t->n_obj > 64) {
		size_t n_obj = t->n_obj;
		free(t);
		return rl_err_set(err, RL_EINVAL, "tpe: at most 64 objectives, not %zu", n_obj);
	}
	t->d = sp->n;
	t->dirty = 1;
	if (t->d) {
		t->pm = calloc(t->d, sizeof *t->pm);
		t->by_u = calloc(t->d, sizeof *t->by_u);
		if (!t->pm || !t->by_u)
			goto nomem;
	}
	for (size_t p = 0; p < t->d; p++) {
		const param_def *def = &sp->params[p];
		tpe_param *pm = &t->pm[p];
		switch (def->kind) {
		case PARAM_UNIFORM:
		case PARAM_LOGUNIFORM:
			pm->kind = TK_CONT;
			break;
		case PARAM_INT:
			pm->kind = def->log ? TK_CONT : TK_BAND;
			pm->half_band = (def->step > 1 ? def->step : 1.0) /
					(2.0 * (def->high - def->low + 1.0));
			break;
		case PARAM_CHOICE:
			pm->kind = TK_CAT;
			break;
		case PARAM_FIXED:
		default:
			pm->kind = TK_FIXED;
			break;
		}
		if (pm->kind == TK_CAT) {
			size_t nc = def->n_choices;
			if (nc == 0) {
				tpe_destroy(&t->base);
				return rl_err_set(err, RL_EINVAL, "tpe: parameter %s has no choices",
						  def->name);
			}
			pm->lcum = calloc(nc, sizeof *pm->lcum);
			pm->score = calloc(nc, sizeof *pm->score);
			pm->sum_b = calloc(nc, sizeof *pm->sum_b);
			pm->sum_a = calloc(nc, sizeof *pm->sum_a);
			if (!pm->lcum || !pm->score || !pm->sum_b || !pm->sum_a)
				goto nomem;
		}
		if (pm->kind == TK_CONT || pm->kind == TK_BAND) {
			t->by_u[p] = malloc(sizeof *t->by_u[p]); /* grown by tpe_reserve */
			if (!t->by_u[p])
				goto nomem;
		}
	}
	if (t->multivariate && tpe_joint_new(t, &t->joint) < 0)
		goto nomem;
	*out = &t->base;
	return 0;
nomem:
	tpe_destroy(&t->base);
	return rl_err_set(err, RL_ENOMEM, "creating tpe sampler");
}
