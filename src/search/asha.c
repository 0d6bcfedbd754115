/*
 * asha.c - asynchronous successive halving (ASHA, Li et al., "A System for
 * Massively Parallel Hyperparameter Tuning", MLSys 2020), and the
 * successive-halving ladder that Hyperband (hyperband.c) reuses per bracket.
 *
 * Rungs are r_k = min * eta^k for k = 0, 1, ... while below max; the last
 * rung is max itself.  Decisions are taken at the boundary, without pausing
 * (the variant Ray Tune and Optuna run): when a trial reaches rung k with
 * loss L, and n losses (this one included, one per trial) have been
 * recorded at rung k so far, the trial is promoted iff
 *
 *     rank(L) <= max(1, floor(n / eta)),  rank(L) = 1 + #{other losses < L}
 *
 * and stopped otherwise.  Ties favour the newcomer: a loss equal to one
 * already recorded shares its rank (only strictly smaller losses count), so
 * two identical trials are treated alike whichever came first.  NaN ranks
 * below everything.  The alternative, pausing trials at a rung until enough
 * peers arrive (synchronous SHA), was rejected: it idles devices, and the
 * paper's system packs segments precisely to keep them busy.
 *
 * The state is a multiset of (trial, loss) per rung, so it does not depend
 * on arrival order: replaying history after a restart rebuilds it exactly.
 */
#include "search/stopper.h"

#include <math.h>
#include <stdlib.h>

int sha_ladder_init(sha_ladder *l, double first, double max, double eta, rl_err *err)
{
	/* Count first: rungs below max, then max itself. */
	size_t n = 1;
	for (size_t k = 0;; k++) {
		double r = first * pow(eta, (double)k);
		if (r >= max || stopper_same_resource(r, max))
			break;
		n++;
	}
	sha_rung *rungs = calloc(n, sizeof *rungs);
	if (!rungs)
		return rl_err_set(err, RL_ENOMEM, "creating %zu rungs", n);
	for (size_t k = 0; k + 1 < n; k++)
		rungs[k].resource = first * pow(eta, (double)k);
	rungs[n - 1].resource = max;
	l->n_rungs = n;
	l->rungs = rungs;
	return 0;
}

void sha_ladder_fini(sha_ladder *l)
{
	if (!l || !l->rungs)
		return;
	for (size_t k = 0; k < l->n_rungs; k++)
		free(l->rungs[k].e);
	free(l->rungs);
	l->rungs = NULL;
	l->n_rungs = 0;
}

double sha_ladder_next(const sha_ladder *l, double resource, double segment)
{
	for (size_t k = 0; k < l->n_rungs; k++) {
		double r = l->rungs[k].resource;
		if (r > resource && !stopper_same_resource(r, resource))
			return stopper_step(resource, segment, r);
	}
	return l->rungs[l->n_rungs - 1].resource;
}

/* Record trial's loss at rung, replacing an earlier one of the same trial. */
static int rung_put(sha_rung *r, uint64_t trial, double loss, rl_err *err)
{
	for (size_t i = 0; i < r->n; i++) {
		if (r->e[i].trial == trial) {
			r->e[i].loss = loss;
			return 0;
		}
	}
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		sha_entry *e = realloc(r->e, cap * sizeof *e);
		if (!e)
			return rl_err_set(err, RL_ENOMEM, "recording a rung value");
		r->e = e;
		r->cap = cap;
	}
	r->e[r->n++] = (sha_entry){.trial = trial, .loss = loss};
	return 0;
}

int sha_ladder_observe(sha_ladder *l, double eta, uint64_t trial, double resource,
		       double loss, stop_decision *out, rl_err *err)
{
	sha_rung *rung = NULL;
	size_t k;
	for (k = 0; k < l->n_rungs; k++) {
		if (stopper_same_resource(l->rungs[k].resource, resource)) {
			rung = &l->rungs[k];
			break;
		}
	}
	if (!rung) {
		/* A boundary between rungs (schedule.segment splits the gap). */
		if (out)
			*out = DECIDE_CONTINUE;
		return 0;
	}
	if (k + 1 == l->n_rungs) {
		if (out)
			*out = DECIDE_COMPLETE;
		return 0;
	}
	int rc = rung_put(rung, trial, loss, err);
	if (rc < 0 || !out)
		return rc;
	size_t better = 0;
	for (size_t i = 0; i < rung->n; i++)
		if (rung->e[i].trial != trial && rung->e[i].loss < loss)
			better++;
	/* The small epsilon keeps floor(6 / 3) from becoming 1 through rounding
	 * when eta is not exactly representable. */
	double top = floor((double)rung->n / eta + 1e-9);
	if (top < 1)
		top = 1;
	*out = (double)(better + 1) <= top ? DECIDE_PROMOTE : DECIDE_STOP;
	return 0;
}

/* ---- the ASHA stopper: one ladder starting at min ------------------------- */

typedef struct asha {
	stopper base;
	sha_ladder ladder;
} asha;

static double asha_first(stopper *s, uint64_t trial)
{
	asha *a = (asha *)s;
	return sha_ladder_next(&a->ladder, 0, s->segment);
}

static double asha_next(stopper *s, uint64_t trial, double resource)
{
	asha *a = (asha *)s;
	return sha_ladder_next(&a->ladder, resource, s->segment);
}

static int asha_observe(stopper *s, uint64_t trial, double resource, double loss,
			stop_decision *out, rl_err *err)
{
	asha *a = (asha *)s;
	return sha_ladder_observe(&a->ladder, s->eta, trial, resource, loss, out, err);
}

static void asha_destroy(stopper *s)
{
	asha *a = (asha *)s;
	sha_ladder_fini(&a->ladder);
	free(a);
}

static const stopper_ops asha_ops = {
	.name = "asha",
	.first_target = asha_first,
	.next_target = asha_next,
	.observe = asha_observe,
	.destroy = asha_destroy,
};

int stopper_asha_new(const spec *sp, stopper **out, rl_err *err)
{
	asha *a = calloc(1, sizeof *a);
	if (!a)
		return rl_err_set(err, RL_ENOMEM, "creating asha");
	stopper_base_init(&a->base, &asha_ops, sp);
	int rc = sha_ladder_init(&a->ladder, a->base.min, a->base.max, a->base.eta, err);
	if (rc < 0) {
		free(a);
		return rc;
	}
	*out = &a->base;
	return 0;
}
