/*
 * h_timeline.c - the routes the dashboard's pictures need beyond the
 * resources of docs/api.md's first rows:
 *   GET /api/v1/timeline                  the devices timeline: which
 *        segments of which experiments held each device over a window,
 *        from the store's segment rows (reserved, measured peak, mean
 *        utilisation, outcome), with the devices they ran on;
 *   GET /api/v1/experiments/{ref}/curves  learning curves as compact
 *        [resource, value] arrays, chosen by the server when there are
 *        many (of `limit`: the best half by objective and the other half
 *        spread over the remaining ranks, and every running trial),
 *        incremental with ?after=.
 * Both are reads over the store, so they answer in a read-only service
 * (serve --read-only) as in a running one.
 */
#include "api/route.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/encode.h"

#define TIMELINE_LIMIT 5000
#define TIMELINE_MAX 50000

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const store_experiment *exp_of(const store_experiment *v, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++) /* experiments are few beside segments */
		if (v[i].id == id)
			return &v[i];
	return NULL;
}

/* The experiments of the segments shown (ids eid[0..n)), each once: not
 * the whole list, which grows with the service's history. */
static int segment_experiments(api_req *rq, const int64_t *eid, size_t n, store_experiment **out,
			       size_t *nout, rl_err *err)
{
	store_experiment *v = NULL;
	size_t nv = 0;
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (exp_of(v, nv, eid[i]))
			continue;
		store_experiment *nvv = realloc(v, (nv + 1) * sizeof *v);
		if (!nvv) {
			rc = rl_err_set(err, RL_ENOMEM, "timeline");
			break;
		}
		v = nvv;
		rc = store_experiment_get(rq->st, eid[i], &v[nv], err);
		if (rc == 0)
			nv++;
		else if (rc == RL_ENOTFOUND) /* deleted meanwhile: shown without */
			rl_err_clear(err), rc = 0;
	}
	if (rc < 0) {
		store_experiments_free(v, nv);
		return rc;
	}
	*out = v;
	*nout = nv;
	return 0;
}

/* May the caller see e's names (read: own shows others' segments bare)? */
static int sees(const api_req *rq, const store_experiment *e)
{
	const api_user *u = rq->user;
	if (!rq->pol->read_own || u->root || u->admin)
		return 1;
	return e && u->via != API_VIA_NONE && e->owner && e->owner_uid == (int64_t)u->uid;
}

static json_t *device_json(size_t index, const char *name, const char *uuid, int is_gpu,
			   long long mem_total, double compute_total)
{
	return json_pack("{s:I, s:s, s:s, s:b, s:I, s:o}", "index", (json_int_t)index, "name",
			 name ? name : "", "uuid", uuid ? uuid : "", "is_gpu", is_gpu,
			 "mem_total_mib", (json_int_t)mem_total, "compute_total",
			 api_json_real(compute_total));
}

static int has_uuid(json_t *devs, const char *uuid)
{
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d)
	{
		if (!strcmp(json_string_value(json_object_get(d, "uuid")), uuid))
			return 1;
	}
	return 0;
}

/* The devices: the live driver's, else (read-only) the store's; then any
 * device a segment names that neither knows. */
static json_t *timeline_devices(api_req *rq, const store_segment *gv, size_t ng, rl_err *err)
{
	json_t *devs = json_array();
	const api_ctx *c = rq->ctx;
	if (c->d) {
		/* (An HTTP thread: the devices as the service started with them.) */
		for (size_t i = 0; i < c->n_devices; i++) {
			const api_device *v = &c->devices[i];
			json_array_append_new(devs, device_json(i, v->name, v->uuid, v->is_gpu,
								(long long)v->mem_total_mib,
								v->compute_total));
		}
	} else {
		store_device *sd;
		size_t nd;
		if (store_device_list(rq->st, &sd, &nd, err) < 0) {
			json_decref(devs);
			return NULL;
		}
		size_t gpu = 0;
		for (size_t i = 0; i < nd; i++)
			json_array_append_new(devs, device_json(sd[i].is_gpu ? gpu++ : json_array_size(devs),
								sd[i].name, sd[i].uuid, sd[i].is_gpu,
								sd[i].mem_total_mib, sd[i].compute_total));
		store_devices_free(sd, nd);
	}
	for (size_t i = 0; i < ng; i++)
		if (gv[i].device && !has_uuid(devs, gv[i].device))
			json_array_append_new(devs, device_json(json_array_size(devs), gv[i].device,
								gv[i].device,
								strcmp(gv[i].device, "host") != 0, 0,
								NAN));
	return devs;
}

int api_h_timeline(api_req *rq, api_resp *rs, rl_err *err)
{
	double now = wall_now(), from, to, span;
	long long limit;
	int rc = api_query_real(rq, "from", 0, &from, err);
	if (rc == 0)
		rc = api_query_real(rq, "to", NAN, &to, err);
	if (rc == 0)
		rc = api_query_real(rq, "span", NAN, &span, err);
	if (rc == 0)
		rc = api_query_int(rq, "limit", TIMELINE_LIMIT, &limit, err);
	if (rc < 0)
		return rc;
	if (limit <= 0 || limit > TIMELINE_MAX)
		return rl_err_set(err, RL_EINVAL, "?limit=: expected 1 to %d segments, got %lld",
				  TIMELINE_MAX, limit);
	if (!isnan(span) && !(span > 0))
		return rl_err_set(err, RL_EINVAL, "?span=: expected seconds > 0");
	store_segment *gv;
	int64_t *eid;
	size_t ng, total;
	store_experiment *ev;
	size_t ne;
	/* The window ends now; read-only (nothing runs), where the last
	 * segment ended. */
	if (isnan(to) && !rq->ctx->d) {
		if ((rc = store_segment_list_between(rq->st, 0, INFINITY, 0, &gv, &eid, &ng,
						     &total, err)) < 0)
			return rc;
		to = ng ? -INFINITY : now;
		for (size_t i = 0; i < ng; i++) {
			double e = isnan(gv[i].ended_at) ? gv[i].started_at : gv[i].ended_at;
			if (e > to)
				to = e;
		}
		store_segments_free(gv, ng);
		free(eid);
	}
	if (isnan(to))
		to = now;
	if (!isnan(span))
		from = to - span;
	if (!(to >= from))
		return rl_err_set(err, RL_EINVAL, "?from= and ?to=: from must not be after to");
	if ((rc = store_segment_list_between(rq->st, from, to, (size_t)limit, &gv, &eid, &ng,
					     &total, err)) < 0)
		return rc;
	if ((rc = segment_experiments(rq, eid, ng, &ev, &ne, err)) < 0) {
		store_segments_free(gv, ng);
		free(eid);
		return rc;
	}
	/* Without ?from=, the window starts at the first segment shown. */
	if (from <= 0 && ng)
		from = gv[0].started_at;
	json_t *segs = json_array();
	for (size_t i = 0; i < ng; i++) {
		const store_segment *g = &gv[i];
		const store_experiment *e = exp_of(ev, ne, eid[i]);
		int show = sees(rq, e);
		json_array_append_new(
			segs,
			json_pack("{s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:o, "
				  "s:o, s:o}",
				  "segment_id", api_json_int_or_null(g->id, show), "trial_id",
				  api_json_int_or_null(g->trial_id, show), "experiment_id",
				  api_json_int_or_null(eid[i], show), "experiment",
				  api_json_str(show && e ? e->name : NULL), "owner",
				  api_json_str(show && e ? e->owner : NULL), "device", g->device,
				  "status", seg_status_name(g->status), "started_at",
				  api_json_real(g->started_at), "ended_at", api_json_real(g->ended_at),
				  "mem_reserved_mib",
				  api_json_int_or_null(g->mem_reserved_mib, g->mem_reserved_mib >= 0),
				  "peak_mem_mib",
				  api_json_int_or_null(g->peak_mem_mib, g->peak_mem_mib >= 0),
				  "mean_util", api_json_real(g->mean_util), "compute_share",
				  api_json_real(g->compute_share), "resource_from",
				  api_json_real(show ? g->resource_from : NAN), "resource_to",
				  api_json_real(show ? g->resource_to : NAN)));
	}
	json_t *devs = timeline_devices(rq, gv, ng, err);
	store_segments_free(gv, ng);
	free(eid);
	store_experiments_free(ev, ne);
	if (!devs) {
		json_decref(segs);
		return err->code ? err->code : rl_err_set(err, RL_ENOMEM, "timeline");
	}
	rs->json = json_pack("{s:o, s:o, s:o, s:o, s:o, s:I, s:b}", "from", api_json_real(from), "to",
			     api_json_real(to), "now", api_json_real(now), "devices", devs,
			     "segments", segs, "total", (json_int_t)total, "truncated",
			     total > ng);
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "timeline");
}

/* ---- curves ---- */

/* Points kept per curve: CURVES_POINTS shared among an experiment's
 * trials, each between CURVE_MIN and CURVE_MAX.  A plot is a few hundred
 * pixels wide, and a trial may report millions of values (10,000 lines a
 * segment, segments without end): read as a stream, a curve keeps every
 * stride-th point, doubling the stride and halving what it holds each
 * time it is full, so a read holds a bounded number of points however
 * many rows the store has (all of them, 2 million rows of one attacker,
 * took the service from 23 to 259 MB a request). */
#define CURVES_POINTS (1u << 18)
#define CURVE_MIN 64
#define CURVE_MAX 4096

typedef struct curve {
	const store_trial *t;
	size_t n, cap;       /* points kept, and at most */
	double *r, *v;       /* kept points in report order: every stride-th */
	size_t seen, stride; /* points read, and the stride kept */
	double last_r, last_v; /* the newest point, kept or not */
	double last_at;      /* newest point's time */
	int selected;
	int maximise;        /* the experiment's direction, for cmp_objective */
} curve;

static int cmp_trial_id(const void *a, const void *b)
{
	const curve *x = a, *y = b;
	return x->t->id < y->t->id ? -1 : x->t->id > y->t->id;
}

/* qsort gives its comparator no context, and this handler runs on several
 * HTTP threads at once: the direction travels in every curve rather than
 * in a static that two requests would overwrite for each other. */
static int cmp_objective(const void *a, const void *b)
{
	const curve *x = *(const curve *const *)a, *y = *(const curve *const *)b;
	int maximise = x->maximise;
	double p = x->t->objective, q = y->t->objective;
	if (isnan(p) || isnan(q))
		return isnan(p) - isnan(q);
	if (p == q)
		return x->t->idx - y->t->idx;
	return (maximise ? p > q : p < q) ? -1 : 1;
}

static int add_point(curve *c, double r, double v, double at)
{
	if (!(at <= c->last_at))
		c->last_at = at;
	c->last_r = r;
	c->last_v = v;
	size_t j = c->seen++;
	if (j % c->stride)
		return 0;
	if (c->n == c->cap) {
		/* full: every other point goes, and the stride doubles */
		for (size_t i = 0; 2 * i < c->n; i++) {
			c->r[i] = c->r[2 * i];
			c->v[i] = c->v[2 * i];
		}
		c->n = (c->n + 1) / 2;
		c->stride *= 2;
		if (j % c->stride)
			return 0;
	}
	c->r[c->n] = r;
	c->v[c->n] = v;
	c->n++;
	return 0;
}

struct curves_read {
	curve *cv;
	size_t nt;
	double cursor;
};

static int curve_row(const store_metric *m, void *ctx)
{
	struct curves_read *cr = ctx;
	store_trial key = {.id = m->trial_id};
	curve kc = {.t = &key};
	curve *c = bsearch(&kc, cr->cv, cr->nt, sizeof *cr->cv, cmp_trial_id);
	if (!c)
		return 0;
	add_point(c, m->resource, m->value, m->at);
	if (isnan(cr->cursor) || m->at > cr->cursor)
		cr->cursor = m->at;
	return 0;
}

int api_h_curves(api_req *rq, api_resp *rs, rl_err *err)
{
	double after;
	long long limit;
	int rc = api_query_real(rq, "after", NAN, &after, err);
	if (rc == 0)
		rc = api_query_int(rq, "limit", 0, &limit, err);
	if (rc < 0)
		return rc;
	if (limit < 0)
		return rl_err_set(err, RL_EINVAL, "?limit=: expected 0 (all) or more, got %lld", limit);
	store_experiment e;
	if ((rc = api_find_experiment(rq, rq->param[0], &e, err)) < 0)
		return rc;
	const char *name = rq->query ? rq->query(rq->qctx, "name") : NULL;
	if (!name || !*name)
		name = e.objective_metric;
	store_trial *tv = NULL;
	size_t nt = 0;
	curve *cv = NULL;
	curve **order = NULL;
	json_t *arr = NULL, *sel = NULL;
	if ((rc = store_trial_list(rq->st, e.id, 0, &tv, &nt, err)) < 0)
		goto out;
	cv = calloc(nt ? nt : 1, sizeof *cv);
	order = calloc(nt ? nt : 1, sizeof *order);
	size_t keep = nt ? CURVES_POINTS / nt : CURVE_MAX;
	keep = keep < CURVE_MIN ? CURVE_MIN : keep > CURVE_MAX ? CURVE_MAX : keep;
	int oom = !cv || !order;
	int maximise = !e.mode || strcmp(e.mode, "min") != 0;
	for (size_t i = 0; i < nt && !oom; i++) {
		cv[i].t = &tv[i];
		cv[i].last_at = -INFINITY;
		cv[i].maximise = maximise;
		cv[i].cap = keep;
		cv[i].stride = 1;
		cv[i].r = malloc(keep * sizeof *cv[i].r);
		cv[i].v = malloc(keep * sizeof *cv[i].v);
		oom = !cv[i].r || !cv[i].v;
	}
	if (oom) {
		rc = rl_err_set(err, RL_ENOMEM, "curves");
		goto out;
	}
	qsort(cv, nt, sizeof *cv, cmp_trial_id);
	struct curves_read cr = {.cv = cv, .nt = nt, .cursor = NAN};
	if ((rc = store_metric_each(rq->st, e.id, name, curve_row, &cr, err)) < 0)
		goto out;
	double cursor = cr.cursor;
	/* Choose: every trial with points, or the best `limit` by objective
	 * and every running one. */
	size_t with = 0;
	for (size_t i = 0; i < nt; i++)
		if (cv[i].n)
			order[with++] = &cv[i];
	qsort(order, with, sizeof *order, cmp_objective);
	/* With a limit K: the best half of K, the other half spread evenly
	 * over the remaining ranks (so early-stopped curves stay in view),
	 * and every running trial. */
	size_t want = limit > 0 ? (size_t)limit : with;
	size_t best = (want + 1) / 2, spread = want - best;
	for (size_t i = 0; i < with; i++)
		order[i]->selected = limit == 0 || i < best || order[i]->t->status == TRIAL_RUNNING;
	if (limit > 0 && with > best)
		for (size_t j = 0; j < spread; j++)
			order[best + (j * (with - best)) / spread]->selected = 1;
	arr = json_array();
	sel = json_array();
	for (size_t i = 0; i < nt; i++) {
		curve *c = &cv[i];
		if (!c->selected)
			continue;
		json_array_append_new(sel, json_integer(c->t->id));
		if (!isnan(after) && c->last_at < after)
			continue;
		json_t *pts = json_array();
		for (size_t k = 0; k < c->n; k++)
			json_array_append_new(pts, json_pack("[o, o]", api_json_real(c->r[k]),
							     api_json_real(c->v[k])));
		if ((c->seen - 1) % c->stride) /* the newest point, thinned out */
			json_array_append_new(pts, json_pack("[o, o]", api_json_real(c->last_r),
							     api_json_real(c->last_v)));
		json_array_append_new(arr, json_pack("{s:I, s:i, s:s, s:o, s:o}", "trial_id",
						     (json_int_t)c->t->id, "index", c->t->idx,
						     "status", trial_status_name(c->t->status),
						     "objective", api_json_real(c->t->objective),
						     "points", pts));
	}
	char cur[40];
	snprintf(cur, sizeof cur, "%.17g", cursor);
	rs->json = json_pack("{s:s, s:I, s:b, s:o, s:I, s:O, s:O}", "metric", name, "total",
			     (json_int_t)with, "full", isnan(after), "cursor",
			     isnan(cursor) ? json_null() : json_string(cur), "points_max",
			     (json_int_t)keep, "selected", sel, "trials", arr);
	if (!rs->json)
		rc = rl_err_set(err, RL_ENOMEM, "curves");
out:
	json_decref(arr);
	json_decref(sel);
	for (size_t i = 0; cv && i < nt; i++) {
		free(cv[i].r);
		free(cv[i].v);
	}
	free(cv);
	free(order);
	store_trials_free(tv, nt);
	store_experiment_fini(&e);
	return rc;
}
