/*
 * qn.h - a small box-constrained quasi-Newton minimiser (projected BFGS),
 * used by the GP sampler twice: to fit the kernel's hyperparameters (the
 * negative log marginal likelihood, bounds keep them in a sane range) and
 * to maximise the acquisition function over the unit cube.  Private to
 * src/search.
 *
 * Why not GSL's gsl_multimin (the GP's linear algebra is GSL's): its BFGS
 * is unconstrained, and both problems here have bounds that matter (an
 * acquisition's best point is often on the cube's face; a length scale
 * must not run off to infinity).  A transform to an unbounded variable
 * (a sigmoid) flattens the gradient exactly where those optima lie.
 */
#ifndef RELISH_QN_H
#define RELISH_QN_H

#include <stddef.h>

/* The function to minimise: returns f(x) and writes its gradient into g
 * (n values).  A non-finite return value means "outside the domain": the
 * line search backs off. */
typedef double (*qn_fn)(const double *x, double *g, void *ctx);

#define QN_MAX_DIM 72

/*
 * Minimise f over the box [lo, hi] (n <= QN_MAX_DIM) from x (projected into
 * the box first), for at most max_iter iterations or until the projected
 * gradient's largest component is below gtol.  On return x holds the best
 * point found and *fx its value.  Returns the number of iterations, or -1
 * when f is not finite at the (projected) start.
 */
int qn_minimize(size_t n, double *x, const double *lo, const double *hi, qn_fn f, void *ctx,
		int max_iter, double gtol, double *fx);

#endif
