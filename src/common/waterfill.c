/*
 * waterfill.c - shares of a bounded memory among users (see waterfill.h).
 */
#include "common/waterfill.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fewest_first(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	return a < b ? -1 : a > b;
}

void rl_waterfill(const size_t *counts, size_t n, size_t want, size_t *shares)
{
	memcpy(shares, counts, n * sizeof *shares);
	qsort(shares, n, sizeof *shares, fewest_first);
	size_t left = want, q = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t equal = left / (n - i);
		if (shares[i] > equal) {
			q = equal;
			break;
		}
		left -= shares[i];
	}
	for (size_t i = 0; i < n; i++)
		shares[i] = counts[i] < q ? counts[i] : q;
}
