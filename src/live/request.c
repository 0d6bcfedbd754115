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
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "live/live_int.h"

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

uint64_t live__hash(uint64_t h, const void *p, size_t n)
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
	return live__hash(h, s ? s : "", s ? strlen(s) + 1 : 1);
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

void live__request_build(const live_exp *x, const config *cfg, sched_request *out)
{
	const spec *sp = x->sp;
	sched_request r;
	memset(&r, 0, sizeof r);
	r.user = x->core_user; /* fair share between users (service mode) */
	uint64_t cmd = 0;
	for (size_t i = 0; i < sp->trial.argc; i++)
		cmd = hash_str(cmd, sp->trial.argv[i]);
	r.family = hash_str(cmd, sp->trial.image);
	/* The co-location group: the family and the values of non-numeric
	 * parameters (a model's name, a kind of workload); numeric ones (a
	 * learning rate, a seed) are taken to interfere alike until measured
	 * otherwise (the core checks that its measurements agree). */
	uint64_t group = r.family;
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
		if (!isfinite(v)) {
			group = hash_str(group, spc->params[i].name);
			group = hash_str(group, buf);
		}
	}
	r.shape = shape ? shape : 1;
	r.group = group ? group : 1;
	r.exp_id = x->key;
	r.foreign_wait_s = sp->sharing.foreign_wait_s;
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
		/* A service never lets a trial that names no memory reserve
		 * the whole host (what relish run does to measure it first):
		 * it reserves the service's default, and a trial that needs
		 * more ends out of memory and is placed again with more. */
		if (!r.mem_hint_mib && x->d->opt.service) {
			/* (never more than the largest host holds: a small
			 * host's trials take it whole, as before) */
			uint64_t most = 0;
			for (size_t i = 0; i < x->d->devs->n; i++)
				if (!x->d->devs->dev[i].info.is_gpu &&
				    x->d->devs->dev[i].info.mem_total_mib > most)
					most = x->d->devs->dev[i].info.mem_total_mib;
			if (x->d->opt.default_memory_mib < most)
				r.mem_hint_mib = x->d->opt.default_memory_mib;
		}
		r.compute_hint = res->cpus;
		r.n_devices = 1;
	}
	*out = r;
}

/* ---- profiles ------------------------------------------------------------ */

int live__profiles_load(live *d, rl_err *err)
{
	/* the shapes the core would remember (its learn_max), the newest:
	 * a service's trials make a new shape each */
	int rc = store_profile_trim(d->st, SCHED_LEARN_MAX, err);
	if (rc == 0)
		rc = store_profile_list(d->st, &d->profiles, &d->n_profiles, err);
	if (rc < 0)
		return rl_err_prefix(err, "reading memory profiles");
	d->profile_used = calloc(d->n_profiles ? d->n_profiles : 1, 1);
	if (!d->profile_used)
		return rl_err_set(err, RL_ENOMEM, "reading memory profiles");
	return 0;
}

/* Give a stored profile back to the core (sched_shape_import): the row is
 * what the core exported when it was written (live__profile_update). */
static void learn_profile(live *d, const sched_request *req, const store_profile *p)
{
	sched_shape_info in = {
		.n_measured = p->n > 0 ? (size_t)p->n : 1,
		.peak_mib = p->peak_mem_mib > 0 ? (uint64_t)p->peak_mem_mib : 0,
		.util = isnan(p->mean_util) ? -1 : p->mean_util,
		.thr_alone = isnan(p->throughput) ? 0 : p->throughput,
		.thr_shared = isnan(p->thr_shared) ? 0 : p->thr_shared,
	};
	sched_shape_import(d->core, req, &in);
}

/* A profile written since schema 2 carries its family and numeric features:
 * hand it to the core as a measured point of that family, so the family
 * model estimates unseen shapes from everything measured in earlier runs
 * (a resumed experiment, or another experiment of the same command), not
 * only from shapes this run has met again.  Returns 1 when seeded. */
static int seed_with_features(live *d, const store_profile *p)
{
	if (!p->features || !p->family || p->peak_mem_mib <= 0)
		return 0;
	sched_request r;
	memset(&r, 0, sizeof r);
	char *end;
	r.shape = strtoull(p->shape, &end, 16);
	if (*end || !r.shape)
		return 0;
	r.family = strtoull(p->family, &end, 16);
	if (*end)
		return 0;
	json_error_t je;
	json_t *a = json_loads(p->features, 0, &je);
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) {
		if (!json_is_number(v) || r.n_feat >= SCHED_MAX_FEAT)
			break;
		r.feat[r.n_feat++] = json_number_value(v);
	}
	int ok = json_is_array(a) && r.n_feat == json_array_size(a);
	json_decref(a);
	if (!ok)
		return 0;
	learn_profile(d, &r, p);
	return 1;
}

/* Profiles the store had at start.  The first call (the core exists by
 * then) seeds every profile with features; older rows without them are
 * handed to the core the first time a request of their shape is seen (the
 * request carries the features the family model needs). */
void live__profile_seed(live *d, const sched_request *req)
{
	if (!d->profiles_seeded) {
		d->profiles_seeded = 1;
		for (size_t i = 0; i < d->n_profiles; i++)
			if (seed_with_features(d, &d->profiles[i]))
				d->profile_used[i] = 1;
	}
	/* the rows are in shape order (store_profile_list), and a shape's
	 * key is fixed-width hex: a binary search, once per request */
	char key[24];
	snprintf(key, sizeof key, "%016llx", (unsigned long long)req->shape);
	size_t lo = 0, hi = d->n_profiles;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(d->profiles[mid].shape, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == d->n_profiles || d->profile_used[lo] || strcmp(d->profiles[lo].shape, key) != 0)
		return;
	d->profile_used[lo] = 1;
	const store_profile *p = &d->profiles[lo];
	if (p->peak_mem_mib > 0)
		learn_profile(d, req, p);
}

/* The shape's parameters of g's trial as a JSON object (malloc'd), for
 * `relish profiles`; NULL when the engine no longer knows the trial. */
static char *shape_params_json(const live_seg *g)
{
	const spec *sp = g->x->sp;
	engine_trial_view tv;
	if (engine_trial(g->x->eng, g->trial, &tv, NULL) < 0 || !tv.cfg)
		return NULL;
	char *all = config_to_json(&sp->search.space, tv.cfg);
	json_error_t je;
	json_t *o = all ? json_loads(all, 0, &je) : NULL;
	free(all);
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	const char *k;
	json_t *v, *keep = json_object();
	json_object_foreach(o, k, v)
		if (is_shape_param(sp, k))
			json_object_set(keep, k, v);
	json_decref(o);
	char *txt = json_dumps(keep, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(keep);
	return txt;
}

static char *features_json(const sched_request *r)
{
	json_t *a = json_array();
	for (size_t i = 0; i < r->n_feat; i++)
		json_array_append_new(a, json_real(r->feat[i]));
	char *txt = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return txt;
}

int live__profile_update(live *d, const live_seg *g, uint64_t peak_mib, rl_err *err)
{
	/* What the core learnt of the shape, after sched_finished: the
	 * driver keeps it and computes none of it. */
	sched_shape_info core;
	if (!peak_mib || sched_shape_get(d->core, g->req.shape, &core) < 0 || !core.peak_mib)
		return 0;
	char key[24], fam[24];
	snprintf(key, sizeof key, "%016llx", (unsigned long long)g->req.shape);
	snprintf(fam, sizeof fam, "%016llx", (unsigned long long)g->req.family);
	store_profile old = {0};
	int have = store_profile_get(d->st, key, &old, NULL) == 0;
	store_profile p = {
		.shape = key, .family = fam, .n = (int64_t)core.n_measured,
		.peak_mem_mib = (int64_t)core.peak_mib, .mean_util = core.util >= 0 ? core.util : NAN,
		.est_mem_mib = g->est_mem, .est_error = NAN,
		.throughput = core.thr_alone > 0 ? core.thr_alone : NAN,
		.thr_shared = core.thr_shared > 0 ? core.thr_shared : NAN,
		.updated_at = live__now(d),
		.params = shape_params_json(g), .features = features_json(&g->req),
		.est_basis = (char *)sched_basis_name(g->basis),
		/* whose it is, for the trim's shares (a service's users; relish
		 * run's rows are one user's) */
		.uid = g->x->core_user ? (int64_t)g->x->owner.uid : -1,
	};
	/* The estimator's error, once the real peak is known: what was
	 * predicted before this segment ran against what it used.  A later
	 * segment of a measured shape keeps the first estimate's figures (the
	 * one that mattered: made before anything of this shape was known). */
	if (g->est_mem > 0)
		p.est_error = ((double)g->est_mem - (double)peak_mib) / (double)peak_mib;
	if (have && old.est_basis && old.est_mem_mib > 0 && !isnan(old.est_error)) {
		p.est_mem_mib = old.est_mem_mib;
		p.est_error = old.est_error;
		p.est_basis = old.est_basis;
	}
	int rc = store_profile_put(d->st, &p, err);
	free(p.params);
	free(p.features);
	if (have)
		store_profile_fini(&old);
	return rc;
}

/* ---- what the core learnt beyond shapes (the store's learnt table) ---- */


static int parse_key(const char *t, uint64_t *out)
{
	char *end;
	errno = 0;
	*out = strtoull(t, &end, 16);
	return !*t || *end || errno ? -1 : 0;
}

int live__learnt_load(live *d)
{
	store_learnt *v;
	size_t n, bad = 0;
	rl_err e = {0}, first = {0};
	/* What was learnt is an aid: a relish that cannot read it starts
	 * without it (and measures again), as a new one would. */
	if (store_learnt_load(d->st, SCHED_LEARN_MAX, &v, &n, &e) < 0) {
		live__progress_line(d, "relish: what the scheduler learnt before is left out: %s",
				    e.msg);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		sched_learnt r = {.n = v[i].n, .d = v[i].d, .d_max = v[i].d_max,
				  .s_min = v[i].s_min, .s_max = v[i].s_max};
		if (sched_learnt_kind_parse(v[i].kind, &r.kind) < 0 || parse_key(v[i].a, &r.a) < 0 ||
		    parse_key(v[i].b, &r.b) < 0) {
			if (!bad++)
				rl_err_set(&first, RL_EINVAL, "kind '%s', keys '%s' '%s'", v[i].kind,
					   v[i].a, v[i].b);
			continue;
		}
		if (sched_learnt_import(d->core, &r, bad ? NULL : &first) < 0)
			bad++;
	}
	free(v);
	if (bad)
		live__progress_line(d, "relish: %zu row%s of the learnt table left out (the first: %s)",
				    bad, bad == 1 ? "" : "s", first.msg);
	return 0;
}

int live__learnt_save(live *d, rl_err *err)
{
	uint64_t next = 0;
	size_t n;
	while ((n = sched_learnt_list(d->core, d->learnt_since, d->learnt, d->cap_learnt, &next)) >
	       d->cap_learnt) {
		size_t cap = n + n / 2;
		sched_learnt *nv = realloc(d->learnt, cap * sizeof *nv);
		if (!nv)
			return rl_err_set(err, RL_ENOMEM, "saving what the scheduler learnt");
		d->learnt = nv;
		d->cap_learnt = cap;
	}
	if (!n)
		return 0;
	store_learnt *rows = calloc(n, sizeof *rows);
	if (!rows)
		return rl_err_set(err, RL_ENOMEM, "saving what the scheduler learnt");
	double now = live__now(d);
	for (size_t i = 0; i < n; i++) {
		const sched_learnt *l = &d->learnt[i];
		store_learnt *r = &rows[i];
		int pair = l->kind == SCHED_LEARNT_PAIR, groups = l->kind == SCHED_LEARNT_GROUPS;
		snprintf(r->kind, sizeof r->kind, "%s", sched_learnt_kind_name(l->kind));
		snprintf(r->a, sizeof r->a, "%016llx", (unsigned long long)l->a);
		snprintf(r->b, sizeof r->b, "%016llx", (unsigned long long)l->b);
		r->n = l->n;
		r->d = pair || groups ? l->d : NAN;
		r->d_max = groups ? l->d_max : NAN;
		r->s_min = groups ? l->s_min : NAN;
		r->s_max = groups ? l->s_max : NAN;
		r->updated_at = now;
	}
	int rc = store_learnt_put(d->st, rows, n, err);
	free(rows);
	if (rc == 0)
		d->learnt_since = next;
	return rc;
}
