/*
 * median.c - the median stopping rule (Golovin et al., "Google Vizier",
 * KDD 2017), decided at segment boundaries.
 *
 * Boundaries fall every `step` = schedule.segment (or schedule.min when
 * segment is 0) up to max.  At a boundary r below max, a trial is stopped
 * iff all of:
 *   - r >= min (min is the warm-up: nothing is judged earlier);
 *   - at least max(grace, 1) other trials have recorded a loss at r;
 *   - the trial's best loss so far (the minimum over its boundaries up to
 *     r) is strictly worse than the median of the other trials' best
 *     losses up to r (the mean of the two middle values for an even count).
 * Otherwise it continues to r + step.  Best-so-far rather than the running
 * average (Vizier's choice) or the latest value: a noisy curve is not
 * stopped for one bad epoch, and it is what Optuna's MedianPruner compares.
 * "Other trials" are all trials that reported at r, whatever became of
 * them later, so the rule is asynchronous and order-free: its state is the
 * set of (trial, resource, loss) records.
 */
#include "search/stopper.h"

#include <math.h>
#include <stdlib.h>

typedef struct med_point {
	double resource;
	double loss;
} med_point;

typedef struct med_trial {
	size_t n, cap;
	med_point *p; /* owned */
} med_trial;

typedef struct median {
	stopper base;
	double step;
	size_t n_trials;    /* slots, indexed by trial index */
	med_trial *trials;  /* owned */
	double *scratch;    /* owned, n_trials long: the others' values */
} median;

static double med_first(stopper *s, uint64_t trial)
{
	return stopper_step(0, ((median *)s)->step, s->max);
}

static double med_next(stopper *s, uint64_t trial, double resource)
{
	return stopper_step(resource, ((median *)s)->step, s->max);
}

/* Make room for trial index t. */
static int med_reserve(median *m, uint64_t t, rl_err *err)
{
	if (t < m->n_trials)
		return 0;
	size_t n = m->n_trials ? m->n_trials : 16;
	while (n <= t)
		n *= 2;
	med_trial *tr = realloc(m->trials, n * sizeof *tr);
	if (!tr)
		return rl_err_set(err, RL_ENOMEM, "median rule: recording trial %llu",
				  (unsigned long long)t);
	m->trials = tr;
	for (size_t i = m->n_trials; i < n; i++)
		tr[i] = (med_trial){0};
	double *sc = realloc(m->scratch, n * sizeof *sc);
	if (!sc)
		return rl_err_set(err, RL_ENOMEM, "median rule: recording trial");
	m->scratch = sc;
	m->n_trials = n;
	return 0;
}

static int med_put(med_trial *t, double resource, double loss, rl_err *err)
{
	for (size_t i = 0; i < t->n; i++) {
		if (stopper_same_resource(t->p[i].resource, resource)) {
			t->p[i].loss = loss;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		med_point *p = realloc(t->p, cap * sizeof *p);
		if (!p)
			return rl_err_set(err, RL_ENOMEM, "median rule: recording a value");
		t->p = p;
		t->cap = cap;
	}
	t->p[t->n++] = (med_point){resource, loss};
	return 0;
}

/* Best loss of t up to r; sets *at when t has a record at exactly r. */
static double med_best_upto(const med_trial *t, double r, int *at)
{
	double best = INFINITY;
	*at = 0;
	for (size_t i = 0; i < t->n; i++) {
		int same = stopper_same_resource(t->p[i].resource, r);
		if (same)
			*at = 1;
		if ((same || t->p[i].resource < r) && t->p[i].loss < best)
			best = t->p[i].loss;
	}
	return best;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int med_observe(stopper *s, uint64_t trial, double resource, double loss,
		       stop_decision *out, rl_err *err)
{
	median *m = (median *)s;
	int rc = med_reserve(m, trial, err);
	if (rc < 0)
		return rc;
	rc = med_put(&m->trials[trial], resource, loss, err);
	if (rc < 0 || !out)
		return rc;
	*out = DECIDE_CONTINUE;
	if (resource < s->min && !stopper_same_resource(resource, s->min))
		return 0;
	size_t n = 0;
	for (size_t t = 0; t < m->n_trials; t++) {
		int at;
		if (t == trial)
			continue;
		double b = med_best_upto(&m->trials[t], resource, &at);
		if (at)
			m->scratch[n++] = b;
	}
	size_t need = s->grace > 1 ? (size_t)s->grace : 1;
	if (n < need)
		return 0;
	qsort(m->scratch, n, sizeof *m->scratch, cmp_double);
	double med = n % 2 ? m->scratch[n / 2] : 0.5 * (m->scratch[n / 2 - 1] + m->scratch[n / 2]);
	int at;
	double own = med_best_upto(&m->trials[trial], resource, &at);
	if (own > med)
		*out = DECIDE_STOP;
	return 0;
}

static void med_destroy(stopper *s)
{
	median *m = (median *)s;
	for (size_t t = 0; t < m->n_trials; t++)
		free(m->trials[t].p);
	free(m->trials);
	free(m->scratch);
	free(m);
}

static const stopper_ops median_ops = {
	.name = "median",
	.first_target = med_first,
	.next_target = med_next,
	.observe = med_observe,
	.destroy = med_destroy,
};

int stopper_median_new(const spec *sp, stopper **out, rl_err *err)
{
	median *m = calloc(1, sizeof *m);
	if (!m)
		return rl_err_set(err, RL_ENOMEM, "creating the median rule");
	stopper_base_init(&m->base, &median_ops, sp);
	m->step = sp->schedule.segment > 0 ? sp->schedule.segment
		  : sp->schedule.min > 0   ? sp->schedule.min
					   : sp->schedule.max;
	*out = &m->base;
	return 0;
}
