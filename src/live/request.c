/*
 * request.c - what the live driver tells the core scheduler about a
 * segment (its shape, family, memory features and declared needs), and the
 * memory profiles it keeps in the store so that a later run, or a resumed
 * one, starts with what earlier segments measured.
 *
 * A trial's shape is a hash of the command template and the values of the
 * parameters that change memory (trial.shape_params, or all of them): two
 * trials with equal shapes are expected to need the same memory.  Its
 * family is a hash of the command template and the image: the estimator
 * fits one model of peak memory over the numeric shape parameters of a
 * family (sched/estimate.c), so an unseen shape gets an estimate from its
 * measured neighbours.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/live_int.h"

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

uint64_t live_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	if (!h)
		h = FNV_OFFSET;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return live_hash(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

static int is_shape_param(const spec *sp, const char *name)
{
	if (!sp->trial.shape_params)
		return 1;
	for (size_t i = 0; i < sp->trial.n_shape_params; i++)
		if (strcmp(sp->trial.shape_params[i], name) == 0)
			return 1;
	return 0;
}

void live_request_build(const live_exp *x, const config *cfg, sched_request *out)
{
	const spec *sp = x->sp;
	sched_request r;
	memset(&r, 0, sizeof r);
	uint64_t cmd = 0;
	for (size_t i = 0; i < sp->trial.argc; i++)
		cmd = hash_str(cmd, sp->trial.argv[i]);
	r.family = hash_str(cmd, sp->trial.image);
	uint64_t shape = cmd;
	const space *spc = &sp->search.space;
	for (size_t i = 0; i < spc->n && i < cfg->n; i++) {
		if (!is_shape_param(sp, spc->params[i].name))
			continue;
		char buf[128];
		value_format(&cfg->v[i], buf, sizeof buf);
		shape = hash_str(shape, spc->params[i].name);
		shape = hash_str(shape, buf);
		double v = value_as_double(&cfg->v[i]);
		if (isfinite(v) && r.n_feat < SCHED_MAX_FEAT)
			r.feat[r.n_feat++] = v;
	}
	r.shape = shape ? shape : 1;
	r.exp_id = x->key;
	const spec_resources *res = &sp->trial.resources;
	r.needs_gpu = res->gpus > 0;
	if (r.needs_gpu) {
		r.mem_hint_mib = res->gpu_memory_mib;
		/* A fraction of a GPU is a compute hint in percent; whole GPUs
		 * take the device's default share. */
		if (res->gpus < 1)
			r.compute_hint = res->gpus * 100.0;
		r.n_devices = res->gpus >= 2 ? (int)res->gpus : 1;
	} else {
		r.mem_hint_mib = res->memory_mib;
		r.compute_hint = res->cpus;
		r.n_devices = 1;
	}
	*out = r;
}

/* ---- profiles ------------------------------------------------------------ */

int live_profiles_load(live *d, rl_err *err)
{
	int rc = store_profile_list(d->st, &d->profiles, &d->n_profiles, err);
	if (rc < 0)
		return rl_err_prefix(err, "reading memory profiles");
	d->profile_used = calloc(d->n_profiles ? d->n_profiles : 1, 1);
	if (!d->profile_used)
		return rl_err_set(err, RL_ENOMEM, "reading memory profiles");
	return 0;
}

/* Profiles the store had at start, handed to the core the first time a
 * request of their shape is seen (the request carries the features the
 * family model needs, which the profiles table does not). */
void live_profile_seed(live *d, const sched_request *req)
{
	char key[24];
	snprintf(key, sizeof key, "%016llx", (unsigned long long)req->shape);
	for (size_t i = 0; i < d->n_profiles; i++) {
		if (d->profile_used[i] || strcmp(d->profiles[i].shape, key) != 0)
			continue;
		d->profile_used[i] = 1;
		const store_profile *p = &d->profiles[i];
		if (p->peak_mem_mib <= 0)
			return;
		sched_observation o = {
			.outcome = SCHED_OUT_COMPLETED,
			.peak_mem_mib = (uint64_t)p->peak_mem_mib,
			.mean_util = isnan(p->mean_util) ? -1 : p->mean_util,
			.work = isnan(p->throughput) ? 0 : p->throughput,
			.duration_s = isnan(p->throughput) ? 0 : 1.0,
		};
		sched_learn(d->core, req, &o);
		return;
	}
}

int live_profile_update(live *d, const live_seg *g, uint64_t peak_mib, double duration_s,
			rl_err *err)
{
	if (!peak_mib)
		return 0;
	char key[24], fam[24];
	snprintf(key, sizeof key, "%016llx", (unsigned long long)g->req.shape);
	snprintf(fam, sizeof fam, "%016llx", (unsigned long long)g->req.family);
	store_profile old;
	int have = store_profile_get(d->st, key, &old, NULL) == 0;
	store_profile p = {
		.shape = key, .family = fam, .n = have ? old.n + 1 : 1,
		.peak_mem_mib = (int64_t)peak_mib, .mean_util = NAN,
		.est_mem_mib = g->est_mem, .est_error = NAN, .throughput = NAN,
		.updated_at = live_now(),
	};
	if (have && old.peak_mem_mib > p.peak_mem_mib)
		p.peak_mem_mib = old.peak_mem_mib;
	/* The estimator's error, once the real peak is known: what was
	 * predicted before this segment ran against what it used. */
	if (g->est_mem > 0)
		p.est_error = ((double)g->est_mem - (double)peak_mib) / (double)peak_mib;
	double work = g->to - g->from;
	if (duration_s > 0 && work > 0)
		p.throughput = work / duration_s;
	if (have && !isnan(old.throughput) && !isnan(p.throughput))
		p.throughput = 0.7 * old.throughput + 0.3 * p.throughput;
	int rc = store_profile_put(d->st, &p, err);
	if (have) {
		free(old.shape);
		free(old.family);
	}
	return rc;
}
