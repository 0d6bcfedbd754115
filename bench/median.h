/*
 * median.h - the median of n timings, which every bench reports: single
 * runs on a shared machine are noisy.  Sorts v in place.
 */
#ifndef RELISH_BENCH_MEDIAN_H
#define RELISH_BENCH_MEDIAN_H

#include <stdlib.h>

static int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
