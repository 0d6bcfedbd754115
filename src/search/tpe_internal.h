/*
 * tpe_internal.h - the TPE sampler's state, shared by tpe.c (observations,
 * the univariate estimators, ask and tell) and tpe_joint.c (the joint,
 * multivariate estimator).  Private to src/search.
 */
#ifndef RELISH_TPE_INTERNAL_H
#define RELISH_TPE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "search/rng.h"
#include "search/sampler.h"

#define TPE_MAX_BELOW 25      /* gamma(n) = min(ceil(0.1 n), 25) */
#define TPE_FLAT_WEIGHTS 25   /* newest above-set trials with weight 1 */
#define TPE_PRIOR_WEIGHT 1.0
#define TPE_CUTOFF 8.0        /* kernels beyond 8 bandwidths are skipped */
#define TPE_BUCKETS 12
#define TPE_SQRT_2PI 2.5066282746310002

typedef enum tpe_kind { TK_CONT, TK_BAND, TK_CAT, TK_FIXED } tpe_kind;

/* What an observation slot holds besides a reported value. */
enum { OBS_MARK_NONE, OBS_MARK_PENDING, OBS_MARK_FAILED };

/* A fitted mixture over [0, 1] for one numeric parameter and one set. */
typedef struct tpe_mixture {
	size_t n, cap;          /* kernels, prior excluded */
	double *mu, *inv_sigma; /* centre and 1 / bandwidth */
	double *coef;           /* TK_CONT: w / (W sqrt(2 pi) Z); TK_BAND: w sigma / (W Z) */
	double *sigma;
	double *kmass;          /* w sigma: a kernel's mass (equal heights) */
	double mass;            /* sum of kmass plus the prior's weight */
	size_t bstart[TPE_BUCKETS + 1]; /* bucket b is [bstart[b], bstart[b+1]) */
	double bmax[TPE_BUCKETS];       /* largest bandwidth in bucket b */
	double prior_coef, prior_w;     /* prior N(0.5, 1), normalised weight */
} tpe_mixture;

typedef struct tpe_param {
	tpe_kind kind;
	double half_band;       /* TK_BAND: half width of an integer's band */
	tpe_mixture below, above;
	double *lcum;           /* TK_CAT: cumulative l over choices */
	double *score;          /* TK_CAT: log l(c) - log g(c) */
	double *sum_b, *sum_a;  /* TK_CAT: observation weight per choice */
} tpe_param;

typedef struct tpe_sampler {
	sampler base;
	int n_startup, n_candidates;
	pending_rule pending;
	size_t d;                /* parameters */
	/* Observation slots (struct of arrays). */
	size_t cap, used;
	uint64_t *idx;
	double *loss, *res, *u;  /* u[slot * d + p]: unit value or choice index */
	double *viol;            /* constraint violation, 0 when feasible (and
				  * for pending and failed trials) */
	double *w;               /* weight in its set, set by fit */
	unsigned char *below;
	unsigned char *pend;     /* OBS_MARK_*: a pending or failed trial
				  * ranks last (loss +inf, resource -inf) and
				  * is always in the above set */
	uint32_t *free_slots;
	size_t n_free;
	/* Live observations in three orders (slot ids). */
	size_t n, n_pending, n_failed;
	/* Several objectives (n_obj > 1): each slot's losses, [slot * n_obj];
	 * the split is by Pareto rank (tpe.c, split_multi). */
	size_t n_obj;
	double *lossv;
	uint32_t *by_time, *by_rank;
	uint32_t **by_u;         /* per numeric parameter, else NULL */
	/* The fitted model, rebuilt lazily after a tell. */
	int dirty;
	tpe_param *pm;
	int multivariate;        /* search.multivariate: joint over `joint` */
	struct tpe_joint *joint; /* NULL unless multivariate */
	double *scratch_mu, *scratch_sig, *scratch_w;
} tpe_sampler;

/* Phi(b) - Phi(a) for a <= b, accurate in both tails. */
double tpe_phi_diff(double a, double b);
double tpe_unit_mass_edge(double mu, double sigma);
/* Mass of N(mu, sigma) inside [0, 1]: the truncation normaliser.  Inline:
 * the fits call it once per kernel and parameter, and most kernels lie
 * well inside. */
static inline double tpe_unit_mass(double mu, double sigma)
{
	if (mu >= TPE_CUTOFF * sigma && 1.0 - mu >= TPE_CUTOFF * sigma)
		return 1.0; /* both tails below 1e-15 */
	return tpe_unit_mass_edge(mu, sigma);
}
/* Bandwidths of n sorted centres (the neighbour-gap rule, clipped). */
void tpe_bandwidths(const double *mu, size_t n, double *sig);
/* Draw from N(mu, sigma) truncated to [0, 1]. */
double tpe_truncnorm(double mu, double sigma, rl_rng *rng);

/* The joint estimator (tpe_joint.c) over every parameter that is always
 * active and not fixed; the others stay univariate. */
int tpe_joint_new(tpe_sampler *t, struct tpe_joint **out);
void tpe_joint_free(struct tpe_joint *j);
/* Refit from t's observations (after tpe_fit set below[] and w[]). */
int tpe_joint_fit(tpe_sampler *t);
/* Sample the joint parameters of a proposal into c (others untouched). */
int tpe_joint_ask(tpe_sampler *t, rl_rng *rng, config *c, rl_err *err);
/* Is parameter p modelled jointly? */
int tpe_joint_has(const struct tpe_joint *j, size_t p);

#endif
