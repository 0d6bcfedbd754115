/*
 * pareto.h - several objectives: Pareto dominance, non-dominated sorting
 * and the hypervolume, for the samplers (TPE's split with several
 * objectives) and for whoever keeps a front.  Every objective is a loss
 * (minimised).  Pure functions, no allocation beyond what is documented.
 */
#ifndef RELISH_PARETO_H
#define RELISH_PARETO_H

#include <stddef.h>

/* Does a dominate b (no worse in every one of m losses, better in one)? */
int pareto_dominates(const double *a, const double *b, size_t m);

/*
 * Non-dominated sorting of n points of m losses (row-major pts): rank[i] =
 * 0 for the front, 1 for the front of the rest, and so on.  O(n^2 m).
 * Returns 0, or RL_ENOMEM.
 */
int pareto_ranks(const double *pts, size_t n, size_t m, int *rank);

/* The hypervolume dominated by the n points of 2 losses (row-major) and
 * bounded by ref: the area between the front and the reference point.
 * Points not strictly below ref in both losses add nothing.  Returns 0 for
 * none.  O(n log n); allocates a copy of the points (0 on failure too). */
double pareto_hypervolume2(const double *pts, size_t n, const double *ref);

/*
 * Choose k of the n points (all of one front, m losses) that keep the
 * front's shape: 2 losses, greedily by hypervolume contribution against
 * ref (the point that adds least is dropped first, as a subset-selection
 * heuristic); more, by crowding distance (largest first, ends kept).
 * keep[i] is set to 1 for the chosen, 0 for the others.  Returns 0, or
 * RL_ENOMEM.
 */
int pareto_select(const double *pts, size_t n, size_t m, size_t k, const double *ref,
		  unsigned char *keep);

/*
 * The front of n candidates of m losses (row-major pts): on[i] = 1 when
 * candidate i is eligible (eligible NULL: all are; a row with a NaN never
 * is) and no eligible candidate dominates it, else 0.  Equal points are
 * all on it.  O(n^2 m); no allocation.  Returns how many are on it.
 */
size_t pareto_front(const double *pts, size_t n, size_t m, const unsigned char *eligible,
		    unsigned char *on);

#endif
