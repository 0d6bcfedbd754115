/*
 * hyperband.c - Hyperband (Li et al., "Hyperband: A Novel Bandit-Based
 * Approach to Hyperparameter Optimization", JMLR 2017) run asynchronously:
 * several brackets of successive halving that differ in how early they
 * start judging, each an ASHA ladder (asha.c) with its own rung records.
 *
 * With s_max = floor(log_eta(max / min)) there are s_max + 1 brackets.
 * Bracket b (b = 0 .. s_max) has its first rung at min * eta^b and halves
 * s = s_max - b times on its way to max; bracket 0 is the most aggressive.
 * Hyperband gives bracket b
 *
 *     n_b = ceil((s_max + 1) * eta^s / (s + 1)),   s = s_max - b
 *
 * configurations, so every bracket spends about the same budget.  Trials
 * are assigned to brackets by their index alone (no randomness, no
 * dependence on timing) with smooth weighted round-robin over a cycle of
 * W = sum n_b indices: at each index every bracket's credit grows by its
 * weight, the bracket with the largest credit (lowest b on ties) takes the
 * index and pays W.  This interleaves brackets evenly, so an experiment
 * with fewer than W trials still samples every bracket in proportion; a
 * block assignment (the first n_0 trials to bracket 0, ...) was rejected
 * because small budgets would never leave bracket 0.  Optuna's
 * HyperbandPruner uses the same n_b but hashes the trial number instead.
 * When W would exceed 4096 the weights are scaled down to about 4096 in
 * total (each at least 1) to keep the cycle table small.
 */
#include "search/stopper.h"

#include <math.h>
#include <stdlib.h>

enum { HB_MAX_BRACKETS = 64, HB_MAX_CYCLE = 4096 };

typedef struct hyperband {
	stopper base;
	size_t n_brackets;
	sha_ladder *ladders;   /* owned, one per bracket */
	uint64_t *weight;      /* owned, n_b per bracket */
	size_t cycle_len;      /* W */
	unsigned char *cycle;  /* owned: bracket of index i is cycle[i % W] */
} hyperband;

static size_t bracket_of(const hyperband *h, uint64_t trial)
{
	return h->cycle[trial % h->cycle_len];
}

static double hb_first(stopper *s, uint64_t trial)
{
	hyperband *h = (hyperband *)s;
	return sha_ladder_next(&h->ladders[bracket_of(h, trial)], 0, s->segment);
}

static double hb_next(stopper *s, uint64_t trial, double resource)
{
	hyperband *h = (hyperband *)s;
	return sha_ladder_next(&h->ladders[bracket_of(h, trial)], resource, s->segment);
}

static int hb_observe(stopper *s, uint64_t trial, double resource, double loss,
		      stop_decision *out, rl_err *err)
{
	hyperband *h = (hyperband *)s;
	return sha_ladder_observe(&h->ladders[bracket_of(h, trial)], s->eta, trial, resource,
				  loss, out, err);
}

static void hb_destroy(stopper *s)
{
	hyperband *h = (hyperband *)s;
	if (h->ladders)
		for (size_t b = 0; b < h->n_brackets; b++)
			sha_ladder_fini(&h->ladders[b]);
	free(h->ladders);
	free(h->weight);
	free(h->cycle);
	free(h);
}

static const stopper_ops hyperband_ops = {
	.name = "hyperband",
	.first_target = hb_first,
	.next_target = hb_next,
	.observe = hb_observe,
	.destroy = hb_destroy,
};

/* Bracket weights n_b, scaled when their sum would exceed HB_MAX_CYCLE. */
static void hb_weights(hyperband *h, double eta)
{
	size_t smax = h->n_brackets - 1;
	double w[HB_MAX_BRACKETS], sum = 0;
	for (size_t b = 0; b <= smax; b++) {
		double s = (double)(smax - b);
		/* The epsilon keeps an exact quotient (4 * 27 / 4) from rounding up. */
		w[b] = ceil((double)(smax + 1) * pow(eta, s) / (s + 1) - 1e-9);
		sum += w[b];
	}
	double scale = sum > HB_MAX_CYCLE ? HB_MAX_CYCLE / sum : 1.0;
	h->cycle_len = 0;
	for (size_t b = 0; b <= smax; b++) {
		double v = scale < 1.0 ? fmax(1.0, round(w[b] * scale)) : w[b];
		h->weight[b] = (uint64_t)v;
		h->cycle_len += h->weight[b];
	}
}

/* Smooth weighted round-robin over one cycle (see the file comment). */
static void hb_cycle(hyperband *h)
{
	int64_t credit[HB_MAX_BRACKETS] = {0};
	for (size_t i = 0; i < h->cycle_len; i++) {
		size_t best = 0;
		for (size_t b = 0; b < h->n_brackets; b++) {
			credit[b] += (int64_t)h->weight[b];
			if (credit[b] > credit[best])
				best = b;
		}
		credit[best] -= (int64_t)h->cycle_len;
		h->cycle[i] = (unsigned char)best;
	}
}

int stopper_hyperband_new(const spec *sp, stopper **out, rl_err *err)
{
	double min = sp->schedule.min, max = sp->schedule.max;
	double eta = sp->schedule.reduction_factor;
	double smax_f = floor(log(max / min) / log(eta) + 1e-9);
	if (smax_f + 1 > HB_MAX_BRACKETS)
		return rl_err_set(err, RL_ESPEC,
				  "%s: schedule: hyperband with max/min = %g and reduction_factor %g "
				  "needs %.0f brackets; expected at most %d (raise reduction_factor)",
				  sp->source ? sp->source : "spec", max / min, eta, smax_f + 1,
				  HB_MAX_BRACKETS);
	hyperband *h = calloc(1, sizeof *h);
	if (!h)
		return rl_err_set(err, RL_ENOMEM, "creating hyperband");
	stopper_base_init(&h->base, &hyperband_ops, sp);
	h->n_brackets = (size_t)smax_f + 1;
	h->ladders = calloc(h->n_brackets, sizeof *h->ladders);
	h->weight = calloc(h->n_brackets, sizeof *h->weight);
	if (!h->ladders || !h->weight)
		goto nomem;
	hb_weights(h, eta);
	h->cycle = malloc(h->cycle_len);
	if (!h->cycle)
		goto nomem;
	hb_cycle(h);
	for (size_t b = 0; b < h->n_brackets; b++) {
		int rc = sha_ladder_init(&h->ladders[b], min * pow(eta, (double)b), max, eta, err);
		if (rc < 0) {
			hb_destroy(&h->base);
			return rc;
		}
	}
	*out = &h->base;
	return 0;
nomem:
	hb_destroy(&h->base);
	return rl_err_set(err, RL_ENOMEM, "creating hyperband brackets");
}

size_t hyperband_n_brackets(const stopper *s)
{
	return s->ops == &hyperband_ops ? ((const hyperband *)s)->n_brackets : 0;
}

size_t hyperband_bracket_of(const stopper *s, uint64_t trial)
{
	return s->ops == &hyperband_ops ? bracket_of((const hyperband *)s, trial) : 0;
}

uint64_t hyperband_bracket_weight(const stopper *s, size_t b)
{
	if (s->ops != &hyperband_ops || b >= ((const hyperband *)s)->n_brackets)
		return 0;
	return ((const hyperband *)s)->weight[b];
}
