/*
 * pareto.c - dominance, non-dominated sorting, hypervolume (pareto.h).
 *
 * The sort peels fronts with domination counts: count[j] is how many
 * points dominate j; a front is every point whose count is 0, and removing
 * it lowers the counts of what it dominates.  Each ordered pair is
 * compared once when its first point leaves, so O(n^2 m) with O(n) memory
 * (Deb's lists of dominated points would take O(n^2) memory).
 */
#include "search/pareto.h"

#include <math.h>
#include <stdlib.h>

#include "common/err.h"

int pareto_dominates(const double *a, const double *b, size_t m)
{
	int better = 0;
	for (size_t k = 0; k < m; k++) {
		if (a[k] > b[k])
			return 0;
		if (a[k] < b[k])
			better = 1;
	}
	return better;
}

int pareto_ranks(const double *pts, size_t n, size_t m, int *rank)
{
	size_t *count = calloc(n ? n : 1, sizeof *count);
	size_t *front = malloc((n ? n : 1) * sizeof *front);
	if (!count || !front) {
		free(count);
		free(front);
		return RL_ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != j && pareto_dominates(pts + j * m, pts + i * m, m))
				count[i]++;
	for (size_t i = 0; i < n; i++)
		rank[i] = -1;
	size_t done = 0;
	for (int r = 0; done < n; r++) {
		size_t nf = 0;
		for (size_t i = 0; i < n; i++)
			if (rank[i] < 0 && count[i] == 0)
				front[nf++] = i;
		for (size_t f = 0; f < nf; f++)
			rank[front[f]] = r;
		for (size_t f = 0; f < nf; f++)
			for (size_t j = 0; j < n; j++)
				if (rank[j] < 0 && pareto_dominates(pts + front[f] * m, pts + j * m, m))
					count[j]--;
		done += nf;
	}
	free(count);
	free(front);
	return 0;
}

static int cmp_f1(const void *a, const void *b)
{
	const double *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return (x[1] > y[1]) - (x[1] < y[1]);
}

double pareto_hypervolume2(const double *pts, size_t n, const double *ref)
{
	double *p = malloc((n ? n : 1) * 2 * sizeof *p);
	if (!p)
		return 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (pts[2 * i] < ref[0] && pts[2 * i + 1] < ref[1]) {
			p[2 * k] = pts[2 * i];
			p[2 * k + 1] = pts[2 * i + 1];
			k++;
		}
	qsort(p, k, 2 * sizeof *p, cmp_f1);
	double hv = 0, best2 = ref[1];
	for (size_t i = 0; i < k; i++)
		if (p[2 * i + 1] < best2) {
			hv += (ref[0] - p[2 * i]) * (best2 - p[2 * i + 1]);
			best2 = p[2 * i + 1];
		}
	free(p);
	return hv;
}

/* Order of indices by loss k (insertion sort: fronts are small). */
static void order_by(const double *pts, size_t m, size_t k, size_t *idx, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		size_t v = idx[i], j = i;
		while (j > 0 && pts[idx[j - 1] * m + k] > pts[v * m + k]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
}

int pareto_select(const double *pts, size_t n, size_t m, size_t k, const double *ref,
		  unsigned char *keep)
{
	for (size_t i = 0; i < n; i++)
		keep[i] = 1;
	if (k >= n)
		return 0;
	size_t *idx = malloc(n * sizeof *idx);
	double *score = malloc(n * sizeof *score);
	if (!idx || !score) {
		free(idx);
		free(score);
		return RL_ENOMEM;
	}
	if (m == 2) {
		/* Drop the point adding least hypervolume, one at a time: along a
		 * 2-D front sorted by the first loss, a point's own share is the
		 * box up to its neighbours (or ref). */
		size_t live = n;
		for (size_t i = 0; i < n; i++)
			idx[i] = i;
		order_by(pts, m, 0, idx, n);
		while (live > k) {
			size_t worst = 0;
			double least = INFINITY;
			for (size_t a = 0; a < live; a++) {
				const double *p = pts + idx[a] * m;
				double right = a + 1 < live ? pts[idx[a + 1] * m] : ref[0];
				double up = a > 0 ? pts[idx[a - 1] * m + 1] : ref[1];
				double c = fmax(right - p[0], 0) * fmax(up - p[1], 0);
				if (c < least) {
					least = c;
					worst = a;
				}
			}
			keep[idx[worst]] = 0;
			/* closed up by hand: GCC 12 at -O2 cannot see worst < live
			 * and warned of a memmove past the array */
			for (size_t a = worst; a + 1 < live; a++)
				idx[a] = idx[a + 1];
			live--;
		}
	} else {
		/* Crowding distance: the ends of each loss are kept first. */
		for (size_t i = 0; i < n; i++)
			score[i] = 0;
		for (size_t q = 0; q < m; q++) {
			for (size_t i = 0; i < n; i++)
				idx[i] = i;
			order_by(pts, m, q, idx, n);
			double span = pts[idx[n - 1] * m + q] - pts[idx[0] * m + q];
			score[idx[0]] = score[idx[n - 1]] = INFINITY;
			for (size_t i = 1; i + 1 < n; i++)
				if (span > 0)
					score[idx[i]] += (pts[idx[i + 1] * m + q] - pts[idx[i - 1] * m + q]) / span;
		}
		for (size_t drop = 0; drop < n - k; drop++) {
			size_t worst = n;
			for (size_t i = 0; i < n; i++)
				if (keep[i] && (worst == n || score[i] < score[worst]))
					worst = i;
			keep[worst] = 0;
		}
	}
	free(idx);
	free(score);
	return 0;
}

size_t pareto_front(const double *pts, size_t n, size_t m, const unsigned char *eligible,
		    unsigned char *on)
{
	size_t count = 0;
	for (size_t i = 0; i < n; i++) {
		int ok = !eligible || eligible[i];
		for (size_t q = 0; ok && q < m; q++)
			ok = !isnan(pts[i * m + q]);
		on[i] = (unsigned char)ok;
	}
	for (size_t i = 0; i < n; i++) {
		if (!on[i])
			continue;
		for (size_t j = 0; j < n; j++) {
			if (j == i || (eligible && !eligible[j]))
				continue;
			int nan = 0;
			for (size_t q = 0; q < m && !nan; q++)
				nan = isnan(pts[j * m + q]);
			if (!nan && pareto_dominates(pts + j * m, pts + i * m, m)) {
				on[i] = 0;
				break;
			}
		}
		count += on[i];
	}
	return count;
}
