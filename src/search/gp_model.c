/*
 * gp_model.c - the GP sampler's regression model (gp_model.h).
 *
 * Fitting maximises log p(y | theta) + log p(theta) over the log-scale
 * hyperparameters, with the textbook gradient
 *     d log p(y | theta) / d theta_j = 1/2 tr((alpha alpha' - K^-1) dK/dtheta_j),
 * alpha = K^-1 y, from one Cholesky factorisation and one inverse per
 * evaluation (GSL: gsl_linalg_cholesky_decomp1, _solve, _invert).  The
 * priors are weak and only keep a fit on a handful of points sane (a
 * marginal likelihood alone lets a length scale run to the bound when
 * ten points cannot tell): log length scale ~ N(log 0.5, 1.5^2) per
 * input, log kernel variance ~ N(0, 2^2) (targets are standardised, so
 * about 1), noise variance ~ Exponential(rate 10) within [1e-6, 1].  The
 * bounds on theta (qn.c keeps them) stop a length scale at 1/400 or 90
 * times the unit cube.
 *
 * GSL's default error handler aborts the process; gp_model_init turns it
 * off (gsl_set_error_handler_off, process-wide and idempotent) so a
 * kernel matrix that is not positive definite comes back as an error code
 * and the fit backs off instead.
 */
#include "search/gp_model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_sf_erf.h>

#include "common/err.h"

#define SQRT5 2.23606797749979
#define RHO_MEAN 1.3862943611198906 /* -2 log 0.5: log inverse squared length scale */
#define RHO_SD 3.0                  /* 2 x 1.5 */
#define RHO_LO -9.0
#define RHO_HI 12.0
#define LOG_S2_SD 2.0
#define LOG_S2_LO -7.0
#define LOG_S2_HI 7.0
#define NOISE_RATE 10.0
#define LOG_NOISE_LO -13.815510557964274 /* log 1e-6 */
#define LOG_NOISE_HI 0.0

int gp_model_init(gp_model *m, size_t dc, size_t dk)
{
	memset(m, 0, sizeof *m);
	if (dc + dk == 0 || dc + dk > GP_MAX_DIM)
		return RL_EINVAL;
	m->dc = dc;
	m->dk = dk;
	m->dim = dc + dk;
	gp_model_default_theta(m, m->theta);
	gsl_set_error_handler_off();
	return 0;
}

void gp_model_fini(gp_model *m)
{
	free(m->x);
	free(m->y);
	free(m->chol);
	free(m->kinv);
	free(m->alpha);
	free(m->work);
	memset(m, 0, sizeof *m);
}

void gp_model_default_theta(const gp_model *m, double *theta)
{
	for (size_t d = 0; d < m->dim; d++)
		theta[d] = RHO_MEAN;
	theta[m->dim] = 0.0;
	theta[m->dim + 1] = log(1e-3);
}

static int reserve(gp_model *m, size_t n)
{
	if (n <= m->cap)
		return 0;
	size_t cap = m->cap ? m->cap : 32;
	while (cap < n)
		cap *= 2;
	double *x = realloc(m->x, cap * m->dim * sizeof *x);
	if (!x)
		return RL_ENOMEM;
	m->x = x;
	double **arrs[] = {&m->y, &m->alpha};
	for (size_t i = 0; i < 2; i++) {
		double *p = realloc(*arrs[i], cap * sizeof *p);
		if (!p)
			return RL_ENOMEM;
		*arrs[i] = p;
	}
	double **mats[] = {&m->chol, &m->kinv, &m->work};
	for (size_t i = 0; i < 3; i++) {
		double *p = realloc(*mats[i], cap * cap * sizeof *p);
		if (!p)
			return RL_ENOMEM;
		*mats[i] = p;
	}
	m->cap = cap;
	return 0;
}

int gp_model_set(gp_model *m, size_t n, const double *x, const double *y)
{
	if (reserve(m, n) < 0)
		return RL_ENOMEM;
	memcpy(m->x, x, n * m->dim * sizeof *x);
	memcpy(m->y, y, n * sizeof *y);
	m->n = n;
	return 0;
}

int gp_model_push(gp_model *m, const double *x, double y)
{
	if (reserve(m, m->n + 1) < 0)
		return RL_ENOMEM;
	memcpy(m->x + m->n * m->dim, x, m->dim * sizeof *x);
	m->y[m->n++] = y;
	return 0;
}

/* Squared scaled distance between a and b. */
static double dist2(const gp_model *m, const double *a, const double *b)
{
	double r2 = 0;
	for (size_t d = 0; d < m->dc; d++) {
		double t = a[d] - b[d];
		r2 += m->inv_ls2[d] * t * t;
	}
	for (size_t d = m->dc; d < m->dim; d++)
		r2 += a[d] != b[d] ? m->inv_ls2[d] : 0.0;
	return r2;
}

/* Matérn 5/2 as a function of r^2: f and df/d(r^2). */
static double matern(double r2, double *dfdr2)
{
	double r = sqrt(r2), e = exp(-SQRT5 * r);
	if (dfdr2)
		*dfdr2 = -(5.0 / 6.0) * (1.0 + SQRT5 * r) * e;
	return (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * e;
}

static void set_theta(gp_model *m, const double *theta)
{
	if (theta != m->theta)
		memcpy(m->theta, theta, (m->dim + 2) * sizeof *theta);
	for (size_t d = 0; d < m->dim; d++)
		m->inv_ls2[d] = exp(theta[d]);
	m->s2 = exp(theta[m->dim]);
	m->noise = exp(theta[m->dim + 1]);
}

double gp_model_nll(gp_model *m, const double *theta, double *grad)
{
	size_t n = m->n, dim = m->dim;
	set_theta(m, theta);
	/* K in chol (lower triangle), s2 df/dr2 per pair in work */
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++) {
			double df, k = m->s2 * matern(dist2(m, m->x + i * dim, m->x + j * dim), &df);
			m->chol[i * n + j] = m->chol[j * n + i] = k;
			m->work[i * n + j] = m->s2 * df;
		}
		m->chol[i * n + i] = m->s2 + m->noise;
	}
	gsl_matrix_view L = gsl_matrix_view_array(m->chol, n, n);
	if (gsl_linalg_cholesky_decomp1(&L.matrix) != GSL_SUCCESS)
		return INFINITY;
	double logdet = 0;
	for (size_t i = 0; i < n; i++)
		logdet += log(m->chol[i * n + i]);
	logdet *= 2;
	gsl_vector_const_view yv = gsl_vector_const_view_array(m->y, n);
	gsl_vector_view av = gsl_vector_view_array(m->alpha, n);
	if (gsl_linalg_cholesky_solve(&L.matrix, &yv.vector, &av.vector) != GSL_SUCCESS)
		return INFINITY;
	double fit = 0;
	for (size_t i = 0; i < n; i++)
		fit += m->y[i] * m->alpha[i];
	memcpy(m->kinv, m->chol, n * n * sizeof *m->kinv);
	gsl_matrix_view Ki = gsl_matrix_view_array(m->kinv, n, n);
	if (gsl_linalg_cholesky_invert(&Ki.matrix) != GSL_SUCCESS)
		return INFINITY;
	double nll = 0.5 * fit + 0.5 * logdet + 0.5 * (double)n * log(2 * M_PI);

	/* The priors' penalty (-log density, constants dropped). */
	double pen = 0;
	for (size_t d = 0; d < dim; d++) {
		double z = (theta[d] - RHO_MEAN) / RHO_SD;
		pen += 0.5 * z * z;
	}
	double zs = theta[dim] / LOG_S2_SD;
	pen += 0.5 * zs * zs;
	pen += NOISE_RATE * m->noise - theta[dim + 1]; /* the log-scale Jacobian */
	if (!grad)
		return nll + pen;

	/* d nll / d theta_j = -1/2 sum_ij W_ij dK_ij / dtheta_j, W = alpha alpha' - K^-1 */
	for (size_t j = 0; j < dim + 2; j++)
		grad[j] = 0;
	for (size_t i = 0; i < n; i++) {
		const double *xi = m->x + i * dim;
		for (size_t j = 0; j < i; j++) {
			const double *xj = m->x + j * dim;
			double w = 2.0 * (m->alpha[i] * m->alpha[j] - m->kinv[i * n + j]); /* both triangles */
			double wf = w * m->work[i * n + j];
			for (size_t d = 0; d < m->dc; d++) {
				double t = xi[d] - xj[d];
				grad[d] += wf * t * t;
			}
			for (size_t d = m->dc; d < dim; d++)
				if (xi[d] != xj[d])
					grad[d] += wf;
			/* dK/dlog s2 = K - noise I (the kernel part itself) */
			double kij = m->s2 * matern(dist2(m, xi, xj), NULL);
			grad[dim] += w * kij;
		}
		double wii = m->alpha[i] * m->alpha[i] - m->kinv[i * n + i];
		grad[dim] += wii * m->s2;
		grad[dim + 1] += wii * m->noise;
	}
	for (size_t d = 0; d < dim; d++)
		grad[d] *= m->inv_ls2[d]; /* dr2/drho_d = inv_ls2_d * delta^2 */
	for (size_t j = 0; j < dim + 2; j++)
		grad[j] *= -0.5;
	for (size_t d = 0; d < dim; d++)
		grad[d] += (theta[d] - RHO_MEAN) / (RHO_SD * RHO_SD);
	grad[dim] += theta[dim] / (LOG_S2_SD * LOG_S2_SD);
	grad[dim + 1] += NOISE_RATE * m->noise - 1.0;
	return nll + pen;
}

static double nll_fn(const double *theta, double *grad, void *ctx)
{
	return gp_model_nll(ctx, theta, grad);
}

int gp_model_condition(gp_model *m)
{
	double theta[QN_MAX_DIM];
	memcpy(theta, m->theta, (m->dim + 2) * sizeof *theta);
	return isfinite(gp_model_nll(m, theta, NULL)) ? 0 : RL_EINVAL;
}

int gp_model_fit(gp_model *m, int max_iter)
{
	size_t k = m->dim + 2;
	double lo[QN_MAX_DIM], hi[QN_MAX_DIM], theta[QN_MAX_DIM], fx;
	for (size_t d = 0; d < m->dim; d++) {
		lo[d] = RHO_LO;
		hi[d] = RHO_HI;
	}
	lo[m->dim] = LOG_S2_LO;
	hi[m->dim] = LOG_S2_HI;
	lo[m->dim + 1] = LOG_NOISE_LO;
	hi[m->dim + 1] = LOG_NOISE_HI;
	for (int attempt = 0; attempt < 2; attempt++) {
		if (attempt == 0)
			memcpy(theta, m->theta, k * sizeof *theta);
		else
			gp_model_default_theta(m, theta);
		if (qn_minimize(k, theta, lo, hi, nll_fn, m, max_iter, 1e-3, &fx) < 0)
			continue;
		memcpy(m->theta, theta, k * sizeof *theta);
		if (gp_model_condition(m) == 0)
			return 0;
	}
	/* Neither start gave a usable matrix: the default with more noise. */
	gp_model_default_theta(m, m->theta);
	m->theta[m->dim + 1] = log(1e-2);
	return gp_model_condition(m);
}

void gp_model_predict(const gp_model *m, const double *x, double *mu, double *var, double *dmu,
		      double *dvar)
{
	size_t n = m->n, dim = m->dim;
	double kbuf[256], fbuf[256];
	double *k = n <= 256 ? kbuf : malloc(2 * n * sizeof *k);
	double *fp = n <= 256 ? fbuf : (k ? k + n : NULL);
	if (!k) {
		*mu = 0;
		*var = m->s2;
		return;
	}
	double mean = 0;
	for (size_t i = 0; i < n; i++) {
		double df;
		k[i] = m->s2 * matern(dist2(m, x, m->x + i * dim), &df);
		fp[i] = m->s2 * df;
		mean += k[i] * m->alpha[i];
	}
	/* var = s2 - k' K^-1 k; w = K^-1 k for the gradient */
	double quad = 0;
	if (dmu)
		for (size_t c = 0; c < m->dc; c++)
			dmu[c] = dvar[c] = 0;
	for (size_t i = 0; i < n; i++) {
		const double *row = m->kinv + i * n;
		double w = 0;
		for (size_t j = 0; j < n; j++)
			w += row[j] * k[j];
		quad += w * k[i];
		if (dmu) {
			/* dk_i/dx_c = s2 f'(r2) 2 inv_ls2_c (x_c - X_ic) */
			const double *xi = m->x + i * dim;
			for (size_t c = 0; c < m->dc; c++) {
				double dk = fp[i] * 2.0 * m->inv_ls2[c] * (x[c] - xi[c]);
				dmu[c] += m->alpha[i] * dk;
				dvar[c] -= 2.0 * w * dk;
			}
		}
	}
	*mu = mean;
	double v = m->s2 - quad;
	*var = v > 1e-12 * m->s2 ? v : 1e-12 * m->s2;
	if (k != kbuf)
		free(k);
}

/*
 * log h(z) with h(z) = z Phi(z) + phi(z) (expected improvement = sigma h(z)),
 * and log Phi(z), both accurate far into the lower tail: there h is the
 * difference of two nearly equal numbers, so it is written through the
 * normal hazard lambda(t) = phi(t) / Q(t) (GSL's gsl_sf_hazard), t = -z:
 * h = phi(t) (lambda - t) / lambda, and beyond t = 40 by its asymptotic
 * series phi(t) / t^2 (1 - 3/t^2 + 15/t^4 - 105/t^6).
 */
double gp_log_h(double z, double *log_cdf)
{
	if (z > -6) {
		double cdf = 0.5 * erfc(-z * M_SQRT1_2);
		double pdf = exp(-0.5 * z * z) / 2.5066282746310002;
		*log_cdf = log(cdf);
		return log(z * cdf + pdf);
	}
	double t = -z, log_pdf = -0.5 * t * t - GP_LOG_SQRT_2PI;
	if (t > 40) {
		double u = 1.0 / (t * t);
		*log_cdf = log_pdf - log(t) + log1p(-u + 3 * u * u - 15 * u * u * u);
		return log_pdf + log(u) + log1p(-3 * u + 15 * u * u - 105 * u * u * u);
	}
	double lam = gsl_sf_hazard(t);
	*log_cdf = log_pdf - log(lam);
	return log_pdf + log((lam - t) / lam);
}
