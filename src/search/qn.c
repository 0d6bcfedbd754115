/*
 * qn.c - projected BFGS over a box (qn.h).
 *
 * Each iteration: the projected gradient (components pushing against a
 * bound the variable sits on are dropped) decides convergence and which
 * variables are free; the step is -H g over the free ones, H the BFGS
 * inverse-Hessian estimate; a backtracking (Armijo) line search along the
 * projected path x(t) = P(x + t d); then H is updated with the step and the
 * change of gradient restricted to the free variables, skipped when the
 * curvature s'y is not positive (the update would lose positive
 * definiteness).  When the direction is not one of descent (H went stale
 * after the free set changed) H restarts as the identity, scaled by the
 * last curvature.  The problems here have a few to a few dozen variables,
 * so a dense H costs nothing next to one evaluation of f.
 */
#include "search/qn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Is variable i held at a bound by a gradient pushing outward? */
static int held(double x, double g, double lo, double hi)
{
	return (x <= lo && g > 0) || (x >= hi && g < 0);
}

static void reset_h(double *h, size_t n, double scale)
{
	memset(h, 0, n * n * sizeof *h);
	for (size_t i = 0; i < n; i++)
		h[i * n + i] = scale;
}

int qn_minimize(size_t n, double *x, const double *lo, const double *hi, qn_fn f, void *ctx,
		int max_iter, double gtol, double *fx)
{
	if (n == 0 || n > QN_MAX_DIM)
		return -1;
	double g[QN_MAX_DIM], gn[QN_MAX_DIM], xn[QN_MAX_DIM], d[QN_MAX_DIM];
	double s[QN_MAX_DIM], y[QN_MAX_DIM], hy[QN_MAX_DIM];
	unsigned char freev[QN_MAX_DIM];
	double *h = malloc(n * n * sizeof *h);
	if (!h)
		return -1;
	for (size_t i = 0; i < n; i++)
		x[i] = clampd(x[i], lo[i], hi[i]);
	double f0 = f(x, g, ctx);
	if (!isfinite(f0)) {
		free(h);
		return -1;
	}
	reset_h(h, n, 1.0);
	int it = 0;
	for (; it < max_iter; it++) {
		double pg = 0;
		for (size_t i = 0; i < n; i++) {
			freev[i] = !held(x[i], g[i], lo[i], hi[i]);
			if (freev[i] && fabs(g[i]) > pg)
				pg = fabs(g[i]);
		}
		if (pg < gtol)
			break;
		double slope = 0;
		for (size_t i = 0; i < n; i++) {
			d[i] = 0;
			if (!freev[i])
				continue;
			for (size_t j = 0; j < n; j++)
				if (freev[j])
					d[i] -= h[i * n + j] * g[j];
			slope += d[i] * g[i];
		}
		if (!(slope < 0)) {
			reset_h(h, n, 1.0);
			slope = 0;
			for (size_t i = 0; i < n; i++) {
				d[i] = freev[i] ? -g[i] : 0;
				slope -= freev[i] ? g[i] * g[i] : 0;
			}
		}
		/* The first step of a steepest descent is scaled to move about
		 * a tenth of the box at most; later BFGS steps start at t = 1. */
		double t = 1.0;
		if (it == 0) {
			double dn = 0, span = 0;
			for (size_t i = 0; i < n; i++) {
				dn = fmax(dn, fabs(d[i]));
				span = fmax(span, hi[i] - lo[i]);
			}
			if (dn * t > 0.1 * span)
				t = 0.1 * span / dn;
		}
		double fn = NAN;
		int ok = 0;
		for (int ls = 0; ls < 40; ls++, t *= 0.5) {
			double dec = 0;
			for (size_t i = 0; i < n; i++) {
				xn[i] = clampd(x[i] + t * d[i], lo[i], hi[i]);
				dec += g[i] * (xn[i] - x[i]);
			}
			if (dec == 0)
				break; /* the step vanished against the bounds */
			fn = f(xn, gn, ctx);
			if (isfinite(fn) && fn <= f0 + 1e-4 * dec) {
				ok = 1;
				break;
			}
		}
		if (!ok)
			break;
		double sy = 0, yhy = 0;
		for (size_t i = 0; i < n; i++) {
			s[i] = xn[i] - x[i];
			y[i] = freev[i] ? gn[i] - g[i] : 0;
			sy += s[i] * y[i];
		}
		if (sy > 1e-12) {
			if (it == 0) {
				/* scale the initial H by the observed curvature */
				double yy = 0;
				for (size_t i = 0; i < n; i++)
					yy += y[i] * y[i];
				reset_h(h, n, sy / yy);
			}
			for (size_t i = 0; i < n; i++) {
				hy[i] = 0;
				for (size_t j = 0; j < n; j++)
					hy[i] += h[i * n + j] * y[j];
				yhy += y[i] * hy[i];
			}
			/* H += (1 + y'Hy / s'y) ss'/s'y - (Hy s' + s y'H) / s'y */
			double c = (1.0 + yhy / sy) / sy;
			for (size_t i = 0; i < n; i++)
				for (size_t j = 0; j < n; j++)
					h[i * n + j] += c * s[i] * s[j] - (hy[i] * s[j] + s[i] * hy[j]) / sy;
		}
		double change = f0 - fn;
		memcpy(x, xn, n * sizeof *x);
		memcpy(g, gn, n * sizeof *g);
		f0 = fn;
		if (change <= 1e-12 * (1.0 + fabs(f0)))
			break;
	}
	free(h);
	*fx = f0;
	return it;
}
