/*
 * gp_model.h - Gaussian-process regression for the GP sampler (gp.c):
 * a Matérn-5/2 kernel with one length scale per input (automatic relevance
 * determination), its hyperparameters fitted by maximising the marginal
 * likelihood (with weak priors, qn.c's bounded quasi-Newton), and the
 * posterior mean and variance with their gradients.  The linear algebra
 * (Cholesky factorisation, solves, the inverse) is GSL's.  Private to
 * src/search.
 *
 * Inputs: `dc` continuous coordinates in [0, 1] (the unit-cube view of
 * space.h) followed by `dk` categorical ones holding a choice's index;
 * their distance counts 0 for equal choices and 1 for different ones
 * (a Hamming kernel: no order is invented between choices).  Targets are
 * given standardised (mean 0, variance 1) by the caller.
 *
 * Hyperparameters, all on a log scale (theta): [0, dim) the inverse
 * squared length scales, [dim] the kernel's variance, [dim + 1] the noise
 * variance.
 */
#ifndef RELISH_GP_MODEL_H
#define RELISH_GP_MODEL_H

#include <stddef.h>

#include "search/qn.h"

#define GP_MAX_DIM (QN_MAX_DIM - 2)

typedef struct gp_model {
	size_t dc, dk, dim;      /* continuous, categorical, both */
	size_t n, cap;           /* points, room */
	double *x;               /* n x dim, row-major */
	double *y;               /* n standardised targets */
	double theta[QN_MAX_DIM];
	/* The factorisation at theta, set by gp_model_fit / gp_model_condition. */
	double *chol;            /* n x n: K = L L', L in the lower triangle */
	double *kinv;            /* n x n: K^-1, full */
	double *alpha;           /* n: K^-1 y */
	double *work;            /* n x n scratch: dK factors */
	double inv_ls2[GP_MAX_DIM], s2, noise;
} gp_model;

/* A model over dc continuous and dk categorical inputs (dim <= GP_MAX_DIM);
 * theta starts at gp_model_default_theta.  Returns 0 or RL_ENOMEM /
 * RL_EINVAL; fini frees (safe on a zeroed struct). */
int gp_model_init(gp_model *m, size_t dc, size_t dk);
void gp_model_fini(gp_model *m);
void gp_model_default_theta(const gp_model *m, double *theta);

/* Replace the points: n inputs (row-major, dim each) and targets.  Copies. */
int gp_model_set(gp_model *m, size_t n, const double *x, const double *y);
/* Append one point (the sampler's believed values of pending trials). */
int gp_model_push(gp_model *m, const double *x, double y);

/* Fit theta from m->theta (the previous fit: a warm start) by at most
 * max_iter quasi-Newton iterations; falls back to the default theta when
 * the warm start fails.  Leaves the model conditioned on its points.
 * Returns 0, or RL_EINVAL when no theta gives a positive-definite kernel
 * matrix. */
int gp_model_fit(gp_model *m, int max_iter);
/* Condition on the current points at the current theta (no fitting). */
int gp_model_condition(gp_model *m);

/* Negative log marginal likelihood plus the priors' penalty at theta, and
 * its gradient into grad (may be NULL); conditions the model at theta.
 * +inf when the kernel matrix is not positive definite. */
double gp_model_nll(gp_model *m, const double *theta, double *grad);

/* Posterior mean and variance of the latent function at x (dim values);
 * with dmu and dvar (dc values each, or NULL) their gradients over the
 * continuous inputs.  The model must be conditioned. */
void gp_model_predict(const gp_model *m, const double *x, double *mu, double *var, double *dmu,
		      double *dvar);

#define GP_LOG_SQRT_2PI 0.91893853320467274

/* log h(z), h(z) = z Phi(z) + phi(z) (the expected improvement is sigma
 * h(z), z = (best - mu) / sigma), and log Phi(z) into *log_cdf; both
 * accurate for any z, far into the lower tail where h underflows. */
double gp_log_h(double z, double *log_cdf);

#endif
