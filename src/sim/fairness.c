/*
 * fairness.c - finish-time fairness of a simulated run (sim.h,
 * sim_fairness; docs/simulator.md, "Fairness between users").
 *
 * Each user's jobs in the system (arrival to finish) are merged into
 * disjoint intervals, sorted, so whether a user had work during an
 * experiment's life is one binary search: O(experiments x users x log).
 */
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct span {
	double a, b;
} span;

static int cmp_span(const void *x, const void *y)
{
	const span *p = x, *q = y;
	if (p->a != q->a)
		return (p->a > q->a) - (p->a < q->a);
	return (p->b > q->b) - (p->b < q->b);
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Some interval of the sorted, disjoint u[0..n) meets [a, b]. */
static int meets(const span *u, size_t n, double a, double b)
{
	size_t lo = 0, hi = n; /* first interval ending at or after a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u[mid].b < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && u[lo].a <= b;
}

static int gang_of(const sim_trace *t, const sim_config *c, size_t j)
{
	int g = t->jobs[j].num_gpus;
	if (g > SCHED_MAX_GANG)
		g = SCHED_MAX_GANG;
	if (g > c->n_gpus)
		g = c->n_gpus;
	return g;
}

int sim_fairness(const sim_trace *t, const sim_config *c, sim_result *r, rl_err *err)
{
	size_t nu = t->n_users ? t->n_users : 1, ne = t->n_exps, nj = t->n_jobs;
	span *sp = malloc((nj ? nj : 1) * sizeof *sp);
	size_t *ustart = calloc(nu + 1, sizeof *ustart);
	size_t *ufill = calloc(nu, sizeof *ufill);
	size_t *ulen = calloc(nu, sizeof *ulen);
	double *ea = malloc((ne ? ne : 1) * sizeof *ea);
	double *ef = malloc((ne ? ne : 1) * sizeof *ef);
	double *eshare = calloc(ne ? ne : 1, sizeof *eshare); /* GPUs of its 1/N */
	double *ecrit = calloc(ne ? ne : 1, sizeof *ecrit);
	double *earea = calloc(ne ? ne : 1, sizeof *earea);
	uint32_t *euser = calloc(ne ? ne : 1, sizeof *euser);
	double *rho = malloc((ne ? ne : 1) * sizeof *rho);
	int rc = 0;
	if (!sp || !ustart || !ufill || !ulen || !ea || !ef || !eshare || !ecrit || !earea ||
	    !euser || !rho) {
		rc = rl_err_set(err, RL_ENOMEM, "simulator: fairness: out of memory");
		goto done;
	}
	/* each user's jobs in the system, merged */
	for (size_t j = 0; j < nj; j++)
		ustart[t->jobs[j].user + 1]++;
	for (size_t u = 0; u < nu; u++)
		ustart[u + 1] += ustart[u];
	for (size_t j = 0; j < nj; j++) {
		const sim_job *job = &t->jobs[j];
		sp[ustart[job->user] + ufill[job->user]++] =
			(span){job->submit_s, job->submit_s + r->jct_s[j]};
	}
	for (size_t u = 0; u < nu; u++) {
		span *v = sp + ustart[u];
		size_t n = ustart[u + 1] - ustart[u], w = 0;
		qsort(v, n, sizeof *v, cmp_span);
		for (size_t i = 0; i < n; i++) {
			if (w && v[i].a <= v[w - 1].b) {
				if (v[i].b > v[w - 1].b)
					v[w - 1].b = v[i].b;
			} else {
				v[w++] = v[i];
			}
		}
		ulen[u] = w;
	}
	/* each experiment's arrival, completion and work */
	for (size_t e = 0; e < ne; e++) {
		ea[e] = INFINITY;
		ef[e] = -INFINITY;
	}
	for (size_t j = 0; j < nj; j++) {
		const sim_job *job = &t->jobs[j];
		size_t e = job->exp;
		ea[e] = fmin(ea[e], job->submit_s);
		ef[e] = fmax(ef[e], job->submit_s + r->jct_s[j]);
		euser[e] = job->user;
	}
	double G = (double)c->n_gpus;
	for (size_t e = 0; e < ne; e++) {
		size_t n_active = 0;
		for (size_t u = 0; u < nu; u++)
			n_active += u == euser[e] || meets(sp + ustart[u], ulen[u], ea[e], ef[e]);
		eshare[e] = G / (double)n_active;
	}
	/* on its share: critical path (a gang wider than the share is
	 * stretched) and area */
	for (size_t j = 0; j < nj; j++) {
		const sim_job *job = &t->jobs[j];
		size_t e = job->exp;
		int g = gang_of(t, c, j);
		double w = job->duration_s * job->num_gpus / g + c->restart_cost_s;
		double stretch = g > eshare[e] ? g / eshare[e] : 1;
		ecrit[e] = fmax(ecrit[e], job->submit_s - ea[e] + w * stretch);
		earea[e] += g * w / eshare[e];
	}
	for (size_t u = 0; u < r->n_users; u++) {
		r->users[u].n_exps = 0;
		r->users[u].rho_mean = 0;
		r->users[u].rho_max = 0;
	}
	double sum = 0;
	for (size_t e = 0; e < ne; e++) {
		double ideal = fmax(ecrit[e], earea[e]);
		rho[e] = ideal > 0 ? (ef[e] - ea[e]) / ideal : 1;
		sum += rho[e];
		if (euser[e] < r->n_users) {
			sim_user_result *ur = &r->users[euser[e]];
			ur->n_exps++;
			ur->rho_mean += rho[e];
			ur->rho_max = fmax(ur->rho_max, rho[e]);
		}
	}
	r->rho_user_max = 0;
	r->rho_worst_user = 0;
	for (size_t u = 0; u < r->n_users; u++) {
		sim_user_result *ur = &r->users[u];
		if (ur->n_exps)
			ur->rho_mean /= (double)ur->n_exps;
		if (ur->rho_mean > r->rho_user_max) {
			r->rho_user_max = ur->rho_mean;
			r->rho_worst_user = u;
		}
	}
	r->rho_mean = ne ? sum / (double)ne : 0;
	qsort(rho, ne, sizeof *rho, cmp_dbl);
	if (ne) {
		r->rho_median = ne % 2 ? rho[ne / 2] : (rho[ne / 2 - 1] + rho[ne / 2]) / 2;
		size_t k = (size_t)ceil(0.95 * (double)ne);
		r->rho_p95 = rho[k ? k - 1 : 0];
		r->rho_max = rho[ne - 1];
	}
done:
	free(sp);
	free(ustart);
	free(ufill);
	free(ulen);
	free(ea);
	free(ef);
	free(eshare);
	free(ecrit);
	free(earea);
	free(euser);
	free(rho);
	return rc;
}
