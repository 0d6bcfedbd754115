/*
 * waterfill.c - shares of a bounded memory among users (see waterfill.h).
 */
#include "common/waterfill.h"

#include <stdint.h>
#include <stdlib.h>

static int fewest_first(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	return a < b ? -1 : a > b;
}

size_t rl_waterfill(size_t *counts, size_t n, size_t want)
{
	qsort(counts, n, sizeof *counts, fewest_first);
	size_t left = want;
	for (size_t i = 0; i < n; i++) {
		size_t equal = left / (n - i);
		if (counts[i] > equal)
			return equal;
		left -= counts[i];
	}
	return SIZE_MAX;
}
