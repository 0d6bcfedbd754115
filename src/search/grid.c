/*
 * grid.c - grid search: the full Cartesian product of per-parameter value
 * lists, visited in a seed-determined order.
 *
 * Each parameter contributes an axis of values (axis_value): every
 * choice, every integer of a small int range (or grid_points evenly spaced
 * integers of a large one), grid_points values or `step` spacing for floats,
 * one value for a fixed parameter.  Point p of the product is decoded as a
 * mixed-radix number, first parameter fastest.
 *
 * Trial `index` gets point perm(index), where perm is a bijection of
 * [0, size) fixed by the seed.  A plain row-major order would spend the first
 * trials of a partial grid (max_trials < size) on one corner; the permutation
 * spreads them over the space.  perm is a keyed bijection on the next power of
 * two (odd multiplications, xor-shifts and key additions, all invertible modulo
 * 2^k) with cycle walking back into [0, size), so it needs O(1) memory however
 * large the grid is, and ask(index) does not depend on earlier asks.
 *
 * An axis is computed, not held: the value at position t of a range is
 * arithmetic, so a grid's size and its points cost nothing whatever the
 * ranges (a `step: 1` over 2^24 values once cost seconds and a gigabyte per
 * submission).  Only rounded, spread integers, which can coincide, are held
 * as a table, of at most grid_points values; every axis holds at most
 * SAMPLER_GRID_AXIS_MAX values (the spec refuses more under grid search).
 */
#include "search/rng.h"
#include "search/sampler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID_DEFAULT_POINTS 5

typedef struct grid_axis {
	uint64_t n;
	rl_value *values; /* owned, n values; NULL: computed from the parameter
			   * (axis_value) when asked, never held */
} grid_axis;

typedef struct grid_sampler {
	sampler base;
	grid_axis *axes;  /* one per parameter */
	uint64_t size;    /* product of axis sizes (0 if it overflows) */
	unsigned bits;    /* permutation domain is [0, 2^bits) >= size */
	uint64_t key[4];  /* round keys drawn from the seed */
} grid_sampler;

static int axis_points(const param_def *p)
{
	return p->grid_points > 0 ? p->grid_points : GRID_DEFAULT_POINTS;
}

/* floor(x) + 1 as a count, UINT64_MAX when it does not fit (a cast of a
 * double past 2^64 is undefined). */
static uint64_t count_of(double x)
{
	double n = floor(x) + 1;
	if (!(n >= 1))
		return 0;
	return n >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)n;
}

/* Values of an int range (every integer at the step's spacing). */
static uint64_t int_every(const param_def *p)
{
	double step = p->step > 1 ? p->step : 1;
	return count_of((p->high - p->low) / step);
}

/* Number of values the axis of p holds (before removing duplicates that
 * rounding may create, which only shrinks it), by arithmetic: an axis is
 * never enumerated to be counted. */
static uint64_t axis_count(const param_def *p)
{
	switch (p->kind) {
	case PARAM_CHOICE:
		return p->n_choices;
	case PARAM_FIXED:
		return 1;
	case PARAM_INT: {
		uint64_t every = int_every(p);
		uint64_t gp = (uint64_t)axis_points(p);
		return every <= gp ? every : gp;
	}
	case PARAM_UNIFORM:
	case PARAM_LOGUNIFORM:
	default:
		if (p->kind == PARAM_UNIFORM && p->step > 0)
			return count_of((p->high - p->low) / p->step + 1e-9);
		return (uint64_t)axis_points(p);
	}
}

/* Rounded, spread integers can coincide: only those axes are built as a
 * table (at most grid_points values), the rest are computed per point. */
static int axis_tabled(const param_def *p)
{
	return p->kind == PARAM_INT && int_every(p) > axis_count(p);
}

/* The t-th of n evenly spaced positions in [0, 1] (the middle when n == 1). */
static double axis_frac(uint64_t t, uint64_t n)
{
	return n > 1 ? (double)t / (double)(n - 1) : 0.5;
}

/* Value t of p's axis of n values (before duplicates are removed). */
static int axis_value(const param_def *p, uint64_t t, uint64_t n, rl_value *out, rl_err *err)
{
	rl_value v = {0};
	switch (p->kind) {
	case PARAM_CHOICE:
		return value_copy(out, &p->choices[t], err);
	case PARAM_FIXED:
		return value_copy(out, &p->fixed, err);
	case PARAM_INT: {
		double step = p->step > 1 ? p->step : 1;
		uint64_t every = int_every(p);
		double k;
		if (every <= n)
			k = p->low + (double)t * step;
		else if (p->log && p->low > 0)
			k = round(exp(log(p->low) + axis_frac(t, n) * (log(p->high) - log(p->low))));
		else
			k = round(p->low + axis_frac(t, n) * (p->high - p->low));
		if (every > n && step > 1)
			k = p->low + round((k - p->low) / step) * step;
		if (k > p->high)
			k = p->high;
		v.type = VAL_INT;
		v.i = (int64_t)k;
		break;
	}
	case PARAM_UNIFORM:
	case PARAM_LOGUNIFORM:
	default: {
		double x;
		if (p->kind == PARAM_UNIFORM && p->step > 0)
			x = p->low + (double)t * p->step;
		else if (p->kind == PARAM_LOGUNIFORM)
			x = exp(log(p->low) + axis_frac(t, n) * (log(p->high) - log(p->low)));
		else
			x = p->low + axis_frac(t, n) * (p->high - p->low);
		/* exp(log(high)) may miss high by an ulp: keep the ends exact. */
		if (t == 0 && n > 1)
			x = p->low;
		if (t == n - 1 && n > 1 && !(p->kind == PARAM_UNIFORM && p->step > 0))
			x = p->high;
		v.type = VAL_FLOAT;
		v.f = x < p->low ? p->low : x > p->high ? p->high : x;
		break;
	}
	}
	*out = v;
	return 0;
}

static int axis_build(const param_def *p, grid_axis *ax, rl_err *err)
{
	uint64_t n = axis_count(p);
	if (n == 0 || n > SAMPLER_GRID_AXIS_MAX)
		return rl_err_set(err, RL_EINVAL,
				  "grid: parameter %s has %llu grid values (expected 1 to %u)",
				  p->name, (unsigned long long)n, SAMPLER_GRID_AXIS_MAX);
	if (!axis_tabled(p)) {
		ax->n = n;
		ax->values = NULL;
		return 0;
	}
	rl_value *vals = calloc(n, sizeof *vals);
	if (!vals)
		return rl_err_set(err, RL_ENOMEM, "grid: parameter %s", p->name);
	size_t m = 0;
	for (uint64_t t = 0; t < n; t++) {
		rl_value v = {0};
		int rc = axis_value(p, t, n, &v, err);
		if (rc < 0) {
			for (size_t i = 0; i < m; i++)
				value_fini(&vals[i]);
			free(vals);
			return rc;
		}
		/* Rounding log-spaced integers can repeat a value: keep it once. */
		if (m > 0 && value_equal(&vals[m - 1], &v))
			continue;
		vals[m++] = v;
	}
	ax->n = m;
	ax->values = vals;
	return 0;
}

static void axis_fini(grid_axis *ax)
{
	for (size_t j = 0; ax->values && j < ax->n; j++)
		value_fini(&ax->values[j]);
	free(ax->values);
	ax->values = NULL;
	ax->n = 0;
}

/* Only an axis of rounded, spread integers is built to be counted (its
 * values can coincide; it holds at most grid_points); every other count is
 * arithmetic, so a spec's grid size costs nothing whatever its ranges. */
uint64_t sampler_grid_size(const space *sp)
{
	uint64_t size = 1;
	for (size_t i = 0; i < sp->n; i++) {
		const param_def *p = &sp->params[i];
		uint64_t n = axis_count(p);
		if (n > SAMPLER_GRID_AXIS_MAX)
			return 0;
		if (axis_tabled(p)) {
			grid_axis ax = {0};
			if (axis_build(p, &ax, NULL) < 0)
				return 0;
			n = ax.n;
			axis_fini(&ax);
		}
		if (n == 0 || size > UINT64_MAX / n)
			return 0;
		size *= n;
	}
	return size;
}

uint64_t sampler_grid_axis_count(const param_def *p)
{
	return axis_count(p);
}

/* One keyed, invertible mixing of [0, 2^bits). */
static uint64_t perm_round(uint64_t x, uint64_t key, unsigned bits, uint64_t mask)
{
	unsigned sh = bits / 2 + 1;
	x = (x + key) & mask;
	x = (x * ((key >> 1) | 1)) & mask; /* odd multiplier: invertible mod 2^bits */
	x ^= x >> sh;                      /* xor-shift: invertible */
	x = (x * 0x9e3779b97f4a7c15ULL) & mask;
	x ^= x >> sh;
	return x;
}

static uint64_t grid_perm(const grid_sampler *g, uint64_t i)
{
	if (g->bits == 0)
		return 0;
	uint64_t mask = g->bits >= 64 ? UINT64_MAX : (1ULL << g->bits) - 1;
	uint64_t x = i;
	/* Cycle walking: the bijection on [0, 2^bits) restricted to [0, size)
	 * by re-applying it until the value lands inside; since size > 2^(bits-1)
	 * fewer than two rounds are needed on average. */
	do {
		for (int r = 0; r < 4; r++)
			x = perm_round(x, g->key[r], g->bits, mask);
	} while (x >= g->size);
	return x;
}

static int grid_ask(sampler *s, uint64_t index, config *out, rl_err *err)
{
	grid_sampler *g = (grid_sampler *)s;
	if (index >= g->size)
		return rl_err_set(err, RL_ENOTFOUND,
				  "grid: trial %llu is past the end of the %llu-point grid",
				  (unsigned long long)index, (unsigned long long)g->size);
	uint64_t point = grid_perm(g, index);
	config c;
	if (config_init(&c, s->space->n, err) < 0)
		return RL_ENOMEM;
	for (size_t i = 0; i < s->space->n; i++) {
		const grid_axis *ax = &g->axes[i];
		uint64_t t = point % ax->n;
		int rc = ax->values ? value_copy(&c.v[i], &ax->values[t], err)
				    : axis_value(&s->space->params[i], t, ax->n, &c.v[i], err);
		point /= ax->n;
		if (rc < 0) {
			config_fini(&c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

static int grid_tell(sampler *s, uint64_t index, const config *c, double loss, double resource,
		     obs_state state, rl_err *err)
{
	return 0; /* the grid is fixed in advance */
}

static void grid_destroy(sampler *s)
{
	grid_sampler *g = (grid_sampler *)s;
	if (!g)
		return;
	for (size_t i = 0; g->axes && i < s->space->n; i++)
		axis_fini(&g->axes[i]);
	free(g->axes);
	free(g);
}

static const sampler_ops grid_ops = {
	.name = "grid",
	.ask = grid_ask,
	.tell = grid_tell,
	.destroy = grid_destroy,
	.tell_multi = sampler_tell_multi_ignore,
};

int sampler_grid_new(const space *sp, uint64_t seed, const sampler_options *opt, sampler **out,
		     rl_err *err)
{
	/* A product grid would repeat every point once per value of each
	 * inactive parameter; the spec refuses the combination first. */
	if (space_has_conditions(sp))
		return rl_err_set(err, RL_EUNSUPPORTED, "grid: conditional parameters are not supported");
	grid_sampler *g = calloc(1, sizeof *g);
	if (!g)
		return rl_err_set(err, RL_ENOMEM, "creating grid sampler");
	g->base.ops = &grid_ops;
	g->base.space = sp;
	g->base.seed = seed;
	g->axes = sp->n ? calloc(sp->n, sizeof *g->axes) : NULL;
	if (sp->n && !g->axes) {
		free(g);
		return rl_err_set(err, RL_ENOMEM, "creating grid sampler");
	}
	g->size = 1;
	for (size_t i = 0; i < sp->n; i++) {
		int rc = axis_build(&sp->params[i], &g->axes[i], err);
		if (rc < 0) {
			grid_destroy(&g->base);
			return rc;
		}
		if (g->size > UINT64_MAX / g->axes[i].n) {
			grid_destroy(&g->base);
			return rl_err_set(err, RL_EINVAL, "grid: the grid has more than 2^64 points");
		}
		g->size *= g->axes[i].n;
	}
	while (g->bits < 64 && (1ULL << g->bits) < g->size)
		g->bits++;
	rl_rng rng;
	rng_seed(&rng, rng_stream_seed(seed, 0x67726964 /* "grid" */));
	for (int r = 0; r < 4; r++)
		g->key[r] = rng_next(&rng);
	*out = &g->base;
	return 0;
}
