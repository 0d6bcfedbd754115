/*
 * cell.h - a mean and its standard error over runs (seeds), which the
 * search-quality benchmarks (bench_regret.c, bench_mo.c) print for every
 * sampler and compare against Optuna's.
 */
#ifndef RELISH_BENCH_CELL_H
#define RELISH_BENCH_CELL_H

#include <math.h>

typedef struct cell {
	int n;
	double sum, sum2;
} cell;

static inline void cell_add(cell *c, double x)
{
	c->n++;
	c->sum += x;
	c->sum2 += x * x;
}

static inline double cell_mean(const cell *c)
{
	return c->n ? c->sum / c->n : NAN;
}

/* Standard error of the mean (NaN below two runs). */
static inline double cell_se(const cell *c)
{
	if (c->n < 2)
		return NAN;
	double m = cell_mean(c);
	double var = (c->sum2 - c->n * m * m) / (c->n - 1);
	return sqrt(var > 0 ? var : 0) / sqrt(c->n);
}

#endif
