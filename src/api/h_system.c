/*
 * h_system.c - routes about the service rather than one experiment: the
 * server itself, who the caller is, the devices (what runs where, reserved
 * against used memory) and the queue per user (share, attained GPU-time,
 * running and waiting segments).
 */
#include "api/route.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/encode.h"
#include "common/version.h"
#include "sched/sched.h"

static double api_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *via_name(api_via v)
{
	return v == API_VIA_UNIX ? "unix" : v == API_VIA_TOKEN ? "token" : "anonymous";
}

int api_h_server(api_req *rq, api_resp *rs, rl_err *err)
{
	const api_ctx *c = rq->ctx;
	double now = api_now();
	/* (An HTTP thread: the devices as at start, not the driver's.) */
	size_t ndev = c->n_devices;
	if (!c->d) { /* read-only: the devices the database knows */
		store_device *sd;
		if (store_device_list(rq->st, &sd, &ndev, err) < 0)
			return err->code;
		store_devices_free(sd, ndev);
	}
	rs->json = json_pack("{s:s, s:i, s:o, s:o, s:s, s:I, s:b, s:{s:s, s:o}}", "version",
			     RELISH_VERSION, "pid", (int)getpid(), "started_at",
			     api_json_real(c->started_at), "uptime_s",
			     api_json_real(now - c->started_at), "state_dir",
			     c->state_dir ? c->state_dir : "", "devices", (json_int_t)ndev,
			     "read_only", c->d == NULL, "access", "read",
			     rq->pol->read_own ? "own" : "all", "admin_group",
			     api_json_str(rq->pol->have_admin_gid ? rq->pol->admin_group : NULL));
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "server");
}

/* The service's resident memory in bytes, -1 unknown. */
static long long rss_bytes(void)
{
	long long pages = -1, size, res;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f && fscanf(f, "%lld %lld", &size, &res) == 2)
		pages = res;
	if (f)
		fclose(f);
	return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

/* Liveness: answered by the loop itself (an API_LOOP route), so a loop
 * that no longer turns answers nothing and the probe times out. */
int api_h_healthz(api_req *rq, api_resp *rs, rl_err *err)
{
	const live *d = rq->ctx->d;
	rs->json = json_pack("{s:s, s:o, s:I, s:I, s:I}", "status", "ok", "uptime_s",
			     api_json_real(api_now() - rq->ctx->started_at), "experiments_in_memory",
			     (json_int_t)(d ? live_experiment_count(d) : 0), "segments",
			     (json_int_t)(d ? live_segment_count(d) : 0), "rss_bytes",
			     (json_int_t)rss_bytes());
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "healthz");
}

/* Readiness: the database answers and the service takes submissions
 * (not stopping); 503 otherwise, with why. */
int api_h_readyz(api_req *rq, api_resp *rs, rl_err *err)
{
	const char *why = NULL;
	if (store_schema_version(rq->st) < 0)
		why = "the state database does not answer";
	else if (rq->ctx->d && live_is_stopping(rq->ctx->d))
		why = "the service is stopping";
	rs->status = why ? 503 : 200;
	rs->json = json_pack("{s:b, s:o}", "ready", !why, "reason", api_json_str(why));
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "readyz");
}

/* relish prune through the service: root's and the admin group's, since
 * it removes everyone's history; the rule and the archive are the
 * service's (serve.c's api_prune_fn), the body may name an age and a
 * count instead (never an archive: the service writes it as root). */
int api_h_prune(api_req *rq, api_resp *rs, rl_err *err)
{
	if (!rq->ctx->d)
		return rl_err_set(err, RL_EPERM, "this service only shows %s (serve --read-only): "
				  "nothing is removed here", rq->ctx->state_dir);
	if (!rq->user->root && !rq->user->admin)
		return rl_err_set(err, RL_EPERM, "pruning removes every user's history: root's "
				  "and the admin group's%s%s alone", rq->pol->admin_group[0] ? " " : "",
				  rq->pol->admin_group);
	if (!rq->ctx->prune)
		return rl_err_set(err, RL_EUNSUPPORTED, "this service does not prune");
	json_error_t je;
	json_t *body = rq->body_len ? json_loadb(rq->body, rq->body_len, 0, &je) : json_object();
	if (!json_is_object(body)) {
		json_decref(body);
		return rl_err_set(err, RL_EPARSE, "request body: expected a JSON object {\"age\": "
				  "SECONDS, \"keep\": N, \"dry_run\": BOOL}: %s",
				  body ? "not an object" : je.text);
	}
	int rc = rq->ctx->prune(rq->ctx->prune_ctx, rq->user, body, &rs->json, err);
	json_decref(body);
	return rc;
}

int api_h_whoami(api_req *rq, api_resp *rs, rl_err *err)
{
	const api_user *u = rq->user;
	int known = u->via != API_VIA_NONE;
	rs->json = json_pack("{s:o, s:o, s:s, s:b, s:b}", "user", api_json_str(known ? u->name : NULL),
			     "uid", api_json_int_or_null(u->uid, known), "via", via_name(u->via),
			     "root", known && u->root, "admin", known && u->admin);
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "whoami");
}

/* May the caller see segment r's experiment?  (read: own hides others'.) */
static int sees(const api_req *rq, const live_running_seg *r)
{
	const api_user *u = rq->user;
	return !rq->pol->read_own || u->root || u->admin ||
	       (u->via != API_VIA_NONE && r->owner_uid == u->uid);
}

/* May the caller see user uid's row of /queue?  (read: own: only their
 * own; the totals still count everyone's.) */
static int sees_user(const api_req *rq, uid_t uid)
{
	const api_user *u = rq->user;
	return !rq->pol->read_own || u->root || u->admin ||
	       (u->via != API_VIA_NONE && u->uid == uid);
}

#define MAX_RUNNING 4096

/* Read-only (serve --read-only): the devices the store knows, nothing
 * running on them. */
static int devices_stored(api_req *rq, api_resp *rs, rl_err *err)
{
	store_device *sd;
	size_t nd;
	int rc = store_device_list(rq->st, &sd, &nd, err);
	if (rc < 0)
		return rc;
	json_t *arr = json_array();
	size_t gpu = 0;
	for (size_t i = 0; i < nd; i++)
		json_array_append_new(
			arr, json_pack("{s:I, s:s, s:s, s:b, s:I, s:o, s:I, s:o, s:n, s:I, s:[]}", "index",
				       (json_int_t)(sd[i].is_gpu ? gpu++ : i), "name",
				       sd[i].name ? sd[i].name : "", "uuid", sd[i].uuid ? sd[i].uuid : "",
				       "is_gpu", sd[i].is_gpu, "mem_total_mib",
				       (json_int_t)sd[i].mem_total_mib, "compute_total",
				       api_json_real(sd[i].compute_total), "mem_reserved_mib",
				       (json_int_t)0, "compute_reserved", api_json_real(0),
				       "mem_used_mib", "running", (json_int_t)0, "segments"));
	store_devices_free(sd, nd);
	rs->json = json_pack("{s:o}", "devices", arr);
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "devices");
}

int api_h_devices(api_req *rq, api_resp *rs, rl_err *err)
{
	live *d = rq->ctx->d;
	if (!d)
		return devices_stored(rq, rs, err);
	live_running_seg *run = calloc(MAX_RUNNING, sizeof *run);
	if (!run)
		return rl_err_set(err, RL_ENOMEM, "devices");
	size_t nr = live_running(d, run, MAX_RUNNING);
	if (nr > MAX_RUNNING)
		nr = MAX_RUNNING;
	json_t *arr = json_array();
	for (size_t i = 0; i < live_device_count(d); i++) {
		live_device_view v;
		if (live_device_get(d, i, &v) < 0)
			continue;
		json_t *segs = json_array();
		for (size_t k = 0; k < nr; k++) {
			const live_running_seg *r = &run[k];
			if (r->device != i)
				continue;
			int show = sees(rq, r);
			json_t *s = json_pack(
				"{s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o}", "segment_id",
				api_json_int_or_null(r->segment_id, show), "trial_id",
				api_json_int_or_null(r->trial_id, show), "experiment_id",
				api_json_int_or_null(r->experiment_id, show), "experiment",
				api_json_str(show ? r->experiment : NULL), "owner",
				api_json_str(show ? r->owner : NULL), "mem_reserved_mib",
				(json_int_t)r->mem_reserved_mib, "compute_share",
				api_json_real(r->compute), "mem_used_mib",
				api_json_int_or_null(r->mem_used_mib, r->mem_used_mib >= 0),
				"resource_from", api_json_real(show ? r->resource_from : NAN),
				"resource_to", api_json_real(show ? r->resource_to : NAN), "started_at",
				api_json_real(r->started_at));
			json_array_append_new(segs, s);
		}
		json_t *j = json_pack("{s:I, s:s, s:s, s:b, s:I, s:o, s:I, s:o, s:o, s:I, s:o}",
				      "index", (json_int_t)i, "name", v.name, "uuid", v.uuid,
				      "is_gpu", v.is_gpu, "mem_total_mib",
				      (json_int_t)v.mem_total_mib, "compute_total",
				      api_json_real(v.compute_total), "mem_reserved_mib",
				      (json_int_t)v.mem_reserved_mib, "compute_reserved",
				      api_json_real(v.compute_reserved), "mem_used_mib",
				      api_json_int_or_null(v.mem_used_mib, v.mem_used_mib >= 0),
				      "running", (json_int_t)v.n_running, "segments", segs);
		json_array_append_new(arr, j);
	}
	free(run);
	rs->json = json_pack("{s:o}", "devices", arr);
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "devices");
}

#define MAX_USERS 1024

/* Read-only: per owner, the device-seconds its segments held and their
 * usage now under the default half-life (from the store's rows); nothing
 * runs or waits. */
struct owner_sum {
	int64_t uid;
	double attained, usage;
	size_t n_exp;
	const char *name;
};

struct owner_sums {
	struct owner_sum *v;
	size_t n, cap;
	double now, half_life;
	int oom;
};

static struct owner_sum *owner_slot(struct owner_sums *o, int64_t uid)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].uid == uid)
			return &o->v[i];
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 16;
		struct owner_sum *v = realloc(o->v, cap * sizeof *v);
		if (!v) {
			o->oom = 1;
			return NULL;
		}
		o->v = v;
		o->cap = cap;
	}
	o->v[o->n] = (struct owner_sum){.uid = uid};
	return &o->v[o->n++];
}

static void owner_row(void *ctx, int64_t uid, double started, double ended)
{
	struct owner_sums *o = ctx;
	struct owner_sum *u = owner_slot(o, uid);
	if (!u)
		return;
	u->attained += ended - started;
	u->usage += sched_usage_of(1, started, ended, o->now, o->half_life);
}

static int queue_stored(api_req *rq, api_resp *rs, rl_err *err)
{
	sched_options so;
	sched_options_default(&so, SHARE_RELISH);
	struct owner_sums o = {.now = api_now(), .half_life = so.fair_half_life_s};
	store_experiment *ev = NULL;
	size_t ne = 0;
	int rc = store_owner_service(rq->st, -INFINITY, owner_row, &o, err);
	if (rc >= 0)
		rc = store_experiment_list_brief(rq->st, &ev, &ne, err);
	for (size_t k = 0; rc >= 0 && k < ne; k++) {
		struct owner_sum *u = owner_slot(&o, ev[k].owner_uid);
		if (u && !u->name)
			u->name = ev[k].owner;
		if (u)
			u->n_exp += ev[k].status == EXP_RUNNING;
	}
	if (rc >= 0 && o.oom)
		rc = rl_err_set(err, RL_ENOMEM, "queue");
	json_t *arr = rc >= 0 ? json_array() : NULL;
	for (size_t i = 0; arr && i < o.n; i++) {
		const struct owner_sum *u = &o.v[i];
		if (!sees_user(rq, (uid_t)u->uid))
			continue;
		json_array_append_new(
			arr, json_pack("{s:s, s:I, s:f, s:n, s:o, s:o, s:I, s:I, s:I, s:{s:n, s:n, s:n}}",
				       "user", u->name ? u->name : "unknown", "uid",
				       (json_int_t)u->uid, "share", 1.0, "share_fraction",
				       "attained_gpu_s", api_json_real(u->attained), "usage_gpu_s",
				       api_json_real(u->usage), "running", (json_int_t)0, "queued",
				       (json_int_t)0, "experiments", (json_int_t)u->n_exp, "limits",
				       "gpus", "gpu_memory_mib", "segments"));
	}
	free(o.v);
	store_experiments_free(ev, ne);
	if (rc < 0)
		return rc;
	rs->json = json_pack("{s:o, s:I, s:I}", "users", arr, "running", (json_int_t)0, "queued",
			     (json_int_t)0);
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "queue");
}

int api_h_queue(api_req *rq, api_resp *rs, rl_err *err)
{
	live *d = rq->ctx->d;
	if (!d)
		return queue_stored(rq, rs, err);
	live_user_view *uv = calloc(MAX_USERS, sizeof *uv);
	if (!uv)
		return rl_err_set(err, RL_ENOMEM, "queue");
	size_t n = live_users(d, uv, MAX_USERS);
	if (n > MAX_USERS)
		n = MAX_USERS;
	json_t *arr = json_array();
	size_t running = 0, queued = 0;
	for (size_t i = 0; i < n; i++) {
		const live_user_view *v = &uv[i];
		running += v->running;
		queued += v->queued;
		if (!sees_user(rq, v->uid))
			continue; /* counted in the totals, not shown */
		json_t *lim = json_pack("{s:o, s:o, s:o}", "gpus",
					api_json_int_or_null(v->max_gpus, v->max_gpus > 0),
					"gpu_memory_mib",
					api_json_int_or_null((long long)v->max_mem_mib, v->max_mem_mib > 0),
					"segments",
					api_json_int_or_null(v->max_segments, v->max_segments > 0));
		json_array_append_new(
			arr, json_pack("{s:s, s:I, s:o, s:o, s:o, s:o, s:I, s:I, s:I, s:o}", "user",
				       v->name, "uid", (json_int_t)v->uid, "share",
				       api_json_real(v->share), "share_fraction",
				       api_json_real(v->share_fraction), "attained_gpu_s",
				       api_json_real(v->attained_s), "usage_gpu_s",
				       api_json_real(v->usage_s), "running",
				       (json_int_t)v->running, "queued", (json_int_t)v->queued,
				       "experiments", (json_int_t)v->n_experiments, "limits", lim));
	}
	free(uv);
	rs->json = json_pack("{s:o, s:I, s:I}", "users", arr, "running", (json_int_t)running,
			     "queued", (json_int_t)queued);
	return rs->json ? 0 : rl_err_set(err, RL_ENOMEM, "queue");
}
