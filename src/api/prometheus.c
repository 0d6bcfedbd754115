/*
 * prometheus.c - the service's Prometheus metrics (GET /metrics).
 *
 * Every metric is one row of metrics[] below: name, type, help and the
 * function that writes its samples, so the list in docs/dashboard.md and
 * the exposition cannot drift apart (test_metrics.sh checks both, and
 * runs promtool and a real Prometheus against the output).  Conventions:
 * base units (bytes, seconds, ratios 0..1), _bytes / _seconds / _total
 * suffixes, HELP and TYPE lines, no label with a trial, segment or
 * experiment id (their number is unbounded).  Device series carry
 * `UUID` (the GPU's NVML UUID) and `gpu` (its NVML index), labels of
 * NVIDIA's DCGM exporter (its camel-case modelName is left out: promtool
 * refuses camel case; the model is one join away), so that
 *   relish_gpu_memory_reserved_bytes * on(UUID) group_left DCGM_FI_DEV_FB_USED
 * joins relish's reservations with the driver's view of the same GPU.
 *
 * Values are read at scrape time from the store (experiments, trials,
 * segment outcomes) and from the live driver's views (devices, users);
 * a read-only service (serve --read-only) has no driver, so only the
 * store's series appear.  Request durations are counted here, per route
 * pattern (a bounded set), by api_prometheus_observe.
 */
#include "api/prometheus.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* ---- request durations (histogram per route) ---- */

static const double buckets[] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
				 0.05,   0.1,   0.25,   0.5,   1,    2.5};
#define N_BUCKETS (sizeof buckets / sizeof buckets[0])
#define MAX_ROUTES 64

typedef struct req_hist {
	unsigned long long bucket[N_BUCKETS]; /* cumulative at exposition, per bucket here */
	unsigned long long count;
	double sum;
} req_hist;

/* One service per process: the counts live with the module.  Index
 * api_n_routes counts the requests no route matched.  Requests end on the
 * HTTP threads and are shown on the loop thread: one lock for both. */
static pthread_mutex_t hist_lock = PTHREAD_MUTEX_INITIALIZER;
static req_hist hist[MAX_ROUTES + 1];
static const int status_codes[] = {200, 201, 400, 401, 403, 404, 405, 409, 413, 431, 500, 503};
#define N_CODES (sizeof status_codes / sizeof status_codes[0])
static unsigned long long by_code[N_CODES + 1]; /* the last: any other */

void api_prometheus_observe(const api_route *r, int status, double seconds)
{
	size_t i = r ? (size_t)(r - api_routes) : api_n_routes;
	if (i > api_n_routes || i > MAX_ROUTES)
		i = api_n_routes < MAX_ROUTES ? api_n_routes : MAX_ROUTES;
	pthread_mutex_lock(&hist_lock);
	req_hist *h = &hist[i];
	for (size_t b = 0; b < N_BUCKETS; b++)
		if (seconds <= buckets[b]) {
			h->bucket[b]++;
			break;
		}
	h->count++;
	h->sum += seconds;
	size_t c = 0;
	while (c < N_CODES && status_codes[c] != status)
		c++;
	by_code[c]++;
	pthread_mutex_unlock(&hist_lock);
}

/* ---- exposition ---- */

typedef struct expo {
	char *buf;
	size_t len, cap;
	int oom;
	api_req *rq;
	rl_err *err;
	int rc;              /* first store error, reported after the text */
} expo;

static void put(expo *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(expo *o, const char *fmt, ...)
{
	if (o->oom)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->oom = 1;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		size_t nc = o->cap * 2 + (size_t)n + 256;
		char *b = realloc(o->buf, nc);
		if (!b) {
			o->oom = 1;
			return;
		}
		o->buf = b;
		o->cap = nc;
	}
}

/* A label value, escaped as the text format wants (\\, \", \n). */
static const char *esc(const char *s, char *buf, size_t n)
{
	size_t k = 0;
	for (; s && *s && k + 3 < n; s++) {
		if (*s == '\\' || *s == '"') {
			buf[k++] = '\\';
			buf[k++] = *s;
		} else if (*s == '\n') {
			buf[k++] = '\\';
			buf[k++] = 'n';
		} else {
			buf[k++] = *s;
		}
	}
	buf[k] = '\0';
	return buf;
}

/* A sample value: integers without a fraction, reals with every digit. */
static void val(expo *o, double v)
{
	if (isnan(v))
		put(o, " NaN\n");
	else if (v == floor(v) && fabs(v) < 1e15)
		put(o, " %.0f\n", v);
	else
		put(o, " %.17g\n", v);
}

typedef enum mtype { M_GAUGE, M_COUNTER, M_HISTOGRAM } mtype;
typedef struct metric_def metric_def;
struct metric_def {
	const char *name;
	mtype type;
	const char *help;
	void (*samples)(expo *o, const metric_def *m);
	int needs_driver;    /* only with a live driver (not serve --read-only) */
};

static void store_failed(expo *o, int rc)
{
	if (o->rc == 0)
		o->rc = rc;
}

/* fn(ctx, e) for each experiment f selects, a page at a time without the
 * specs: a scrape's memory does not grow with the service's history. */
static int each_experiment(expo *o, store_exp_filter f,
			   void (*fn)(void *ctx, const store_experiment *e), void *ctx)
{
	f.brief = 1;
	f.limit = 1000;
	for (;;) {
		store_experiment *ev;
		size_t ne;
		int rc = store_experiment_page(o->rq->st, &f, &ev, &ne, o->err);
		if (rc < 0)
			return rc;
		for (size_t i = 0; i < ne; i++)
			fn(ctx, &ev[i]);
		if (ne)
			f.after = ev[ne - 1].id;
		store_experiments_free(ev, ne);
		if (ne < f.limit)
			return 0;
	}
}

static void count_state(void *ctx, const store_experiment *e)
{
	((size_t *)ctx)[e->status]++;
}

static void experiments_by_state(expo *o, const metric_def *m)
{
	size_t count[EXP__COUNT] = {0};
	int rc = each_experiment(o, STORE_EXP_FILTER_ALL, count_state, count);
	if (rc < 0)
		return store_failed(o, rc);
	for (int s = 0; s < EXP__COUNT; s++) {
		put(o, "%s{state=\"%s\"}", m->name, exp_status_name((exp_status)s));
		val(o, (double)count[s]);
	}
}

struct paused_count {
	const api_ctx *c;
	size_t n;
};

static void count_paused(void *ctx, const store_experiment *e)
{
	struct paused_count *p = ctx;
	p->n += p->c->paused(p->c->paused_ctx, e->id) != 0;
}

/* Experiments paused for want of space: their stored state stays
 * running and only the service knows (api_ctx.paused), so this is the
 * gauge to alert on for a full disk. */
static void experiments_paused(expo *o, const metric_def *m)
{
	struct paused_count p = {.c = o->rq->ctx};
	store_exp_filter f = STORE_EXP_FILTER_ALL;
	f.status = EXP_RUNNING;
	int rc = p.c->paused ? each_experiment(o, f, count_paused, &p) : 0;
	if (rc < 0)
		return store_failed(o, rc);
	put(o, "%s", m->name);
	val(o, (double)p.n);
}

static void trials_by_state(expo *o, const metric_def *m)
{
	int c[TRIAL__COUNT];
	long long total[TRIAL__COUNT] = {0};
	int rc = store_trial_counts(o->rq->st, 0, c, o->err);
	for (int s = 0; rc == 0 && s < TRIAL__COUNT; s++)
		total[s] = c[s];
	if (rc < 0)
		return store_failed(o, rc);
	for (int s = 0; s < TRIAL__COUNT; s++) {
		put(o, "%s{state=\"%s\"}", m->name, trial_status_name((trial_status)s));
		val(o, (double)total[s]);
	}
}

static int seg_counts(expo *o, size_t c[SEG__COUNT])
{
	int rc = store_segment_counts(o->rq->st, c, o->err);
	if (rc < 0)
		store_failed(o, rc);
	return rc;
}

static void segments_ended(expo *o, const metric_def *m)
{
	size_t c[SEG__COUNT];
	if (seg_counts(o, c) < 0)
		return;
	for (int s = SEG_COMPLETED; s < SEG__COUNT; s++) {
		put(o, "%s{outcome=\"%s\"}", m->name, seg_status_name((seg_status)s));
		val(o, (double)c[s]);
	}
}

static void oom_replacements(expo *o, const metric_def *m)
{
	size_t c[SEG__COUNT];
	if (seg_counts(o, c) < 0)
		return;
	put(o, "%s", m->name);
	val(o, (double)c[SEG_OOM]);
}

#define MAX_USERS 1024

/* The core's per-user read view (sched.h, through the driver). */
static void users(expo *o, const metric_def *m)
{
	live_user_view *uv = calloc(MAX_USERS, sizeof *uv);
	if (!uv) {
		o->oom = 1;
		return;
	}
	size_t n = live_users(o->rq->ctx->d, uv, MAX_USERS);
	if (n > MAX_USERS)
		n = MAX_USERS;
	char b[200];
	for (size_t i = 0; i < n; i++) {
		double v;
		if (!strcmp(m->name, "relish_user_segments_running"))
			v = (double)uv[i].running;
		else if (!strcmp(m->name, "relish_user_segments_queued"))
			v = (double)uv[i].queued;
		else if (!strcmp(m->name, "relish_user_attained_gpu_seconds_total"))
			v = uv[i].attained_s;
		else if (!strcmp(m->name, "relish_user_fair_usage_gpu_seconds"))
			v = uv[i].usage_s;
		else if (!strcmp(m->name, "relish_user_share_ratio"))
			v = uv[i].share_fraction;
		else
			v = (double)uv[i].n_experiments;
		if (isnan(v))
			continue;
		put(o, "%s{user=\"%s\"}", m->name, esc(uv[i].name, b, sizeof b));
		val(o, v);
	}
	free(uv);
}

#define MAX_RUNNING 4096

/* Per device: memory (total, reserved by the core, measured), the
 * compute reserved and the SM utilisation of relish's segments. */
static void devices(expo *o, const metric_def *m)
{
	live *d = o->rq->ctx->d;
	live_running_seg *run = NULL;
	size_t nr = 0;
	int util = !strcmp(m->name, "relish_gpu_utilization_ratio");
	if (util) {
		if (!(run = calloc(MAX_RUNNING, sizeof *run))) {
			o->oom = 1;
			return;
		}
		nr = live_running(d, run, MAX_RUNNING);
		if (nr > MAX_RUNNING)
			nr = MAX_RUNNING;
	}
	int gpu_family = !strncmp(m->name, "relish_gpu_", 11);
	char b1[200];
	for (size_t i = 0; i < live_device_count(d); i++) {
		live_device_view v;
		if (live_device_get(d, i, &v) < 0 || v.is_gpu != gpu_family)
			continue;
		double x;
		const char *f = m->name + (gpu_family ? 11 : 12);
		if (!strcmp(f, "memory_total_bytes"))
			x = (double)v.mem_total_mib * MIB;
		else if (!strcmp(f, "memory_reserved_bytes"))
			x = (double)v.mem_reserved_mib * MIB;
		else if (!strcmp(f, "memory_used_bytes"))
			x = v.mem_used_mib >= 0 ? (double)v.mem_used_mib * MIB : NAN;
		else if (!strcmp(f, "compute_reserved_ratio"))
			x = v.compute_total > 0 ? v.compute_reserved / v.compute_total : NAN;
		else if (!strcmp(f, "segments_running"))
			x = (double)v.n_running;
		else { /* utilization_ratio: the running segments' SM use, summed */
			x = 0;
			int known = 0;
			for (size_t k = 0; k < nr; k++)
				if (run[k].device == i && run[k].mean_util >= 0) {
					x += run[k].mean_util / 100.0;
					known = 1;
				}
			x = known ? (x > 1 ? 1 : x) : (v.n_running ? NAN : 0);
		}
		if (isnan(x))
			continue;
		if (gpu_family)
			put(o, "%s{gpu=\"%zu\",UUID=\"%s\"}", m->name, i, esc(v.uuid, b1, sizeof b1));
		else
			put(o, "%s", m->name);
		val(o, x);
	}
	free(run);
}

static void http_durations(expo *o, const metric_def *m)
{
	req_hist copy[MAX_ROUTES + 1];
	pthread_mutex_lock(&hist_lock);
	memcpy(copy, hist, sizeof copy);
	pthread_mutex_unlock(&hist_lock);
	for (size_t i = 0; i <= api_n_routes && i <= MAX_ROUTES; i++) {
		const req_hist *h = &copy[i];
		if (!h->count)
			continue;
		const char *method = i < api_n_routes ? api_routes[i].method : "any";
		const char *route = i < api_n_routes ? api_routes[i].pattern : "unmatched";
		unsigned long long cum = 0;
		for (size_t b = 0; b < N_BUCKETS; b++) {
			cum += h->bucket[b];
			put(o, "%s_bucket{method=\"%s\",route=\"%s\",le=\"%g\"} %llu\n", m->name, method,
			    route, buckets[b], cum);
		}
		put(o, "%s_bucket{method=\"%s\",route=\"%s\",le=\"+Inf\"} %llu\n", m->name, method,
		    route, h->count);
		put(o, "%s_sum{method=\"%s\",route=\"%s\"}", m->name, method, route);
		val(o, h->sum);
		put(o, "%s_count{method=\"%s\",route=\"%s\"} %llu\n", m->name, method, route, h->count);
	}
}

static void http_responses(expo *o, const metric_def *m)
{
	unsigned long long by[N_CODES + 1];
	pthread_mutex_lock(&hist_lock);
	memcpy(by, by_code, sizeof by);
	pthread_mutex_unlock(&hist_lock);
	for (size_t c = 0; c <= N_CODES; c++) {
		if (!by[c])
			continue;
		if (c < N_CODES)
			put(o, "%s{code=\"%d\"} %llu\n", m->name, status_codes[c], by[c]);
		else
			put(o, "%s{code=\"other\"} %llu\n", m->name, by[c]);
	}
}

static void up_since(expo *o, const metric_def *m)
{
	put(o, "%s", m->name);
	val(o, o->rq->ctx->started_at);
}

static void read_only(expo *o, const metric_def *m)
{
	put(o, "%s", m->name);
	val(o, o->rq->ctx->d ? 0 : 1);
}

/* The table: one row per metric, in exposition order. */
static const metric_def metrics[] = {
	{"relish_experiments", M_GAUGE, "Experiments by state.", experiments_by_state, 0},
	{"relish_experiments_paused", M_GAUGE,
	 "Experiments paused for want of space (their state stays running; each resumes once "
	 "space is free): a full disk.",
	 experiments_paused, 1},
	{"relish_trials", M_GAUGE, "Trials by state, all experiments.", trials_by_state, 0},
	{"relish_segments_ended_total", M_COUNTER,
	 "Segments that ended, by outcome (completed, oom, failed, ...).", segments_ended, 0},
	{"relish_oom_replacements_total", M_COUNTER,
	 "Segments that ran out of memory and were placed again from their checkpoint.",
	 oom_replacements, 0},
	{"relish_user_segments_running", M_GAUGE, "Segments running now, per user.", users, 1},
	{"relish_user_segments_queued", M_GAUGE, "Segments waiting to be placed, per user.", users,
	 1},
	{"relish_user_experiments_active", M_GAUGE, "Experiments still running, per user.", users,
	 1},
	{"relish_user_attained_gpu_seconds_total", M_COUNTER,
	 "Device-seconds the user's segments have held (the fair order's attained service).",
	 users, 1},
	{"relish_user_fair_usage_gpu_seconds", M_GAUGE,
	 "The user's device-seconds, each weighted by 2^(-age / fair_half_life): what the fair "
	 "order ranks users by.",
	 users, 1},
	{"relish_user_share_ratio", M_GAUGE,
	 "The user's share over the shares of the users with work (0..1).", users, 1},
	{"relish_gpu_memory_total_bytes", M_GAUGE, "GPU memory, per GPU.", devices, 1},
	{"relish_gpu_memory_reserved_bytes", M_GAUGE,
	 "GPU memory reserved by relish's scheduler for running segments, per GPU.", devices, 1},
	{"relish_gpu_memory_used_bytes", M_GAUGE,
	 "GPU memory measured (NVML) in use by relish's segments, per GPU.", devices, 1},
	{"relish_gpu_compute_reserved_ratio", M_GAUGE,
	 "Compute share reserved for running segments, per GPU (0..1).", devices, 1},
	{"relish_gpu_utilization_ratio", M_GAUGE,
	 "SM utilisation of relish's running segments (NVML), summed per GPU (0..1).", devices, 1},
	{"relish_gpu_segments_running", M_GAUGE, "Segments running now, per GPU.", devices, 1},
	{"relish_host_memory_total_bytes", M_GAUGE, "Memory of the host device.", devices, 1},
	{"relish_host_memory_reserved_bytes", M_GAUGE,
	 "Host memory reserved for segments that run on the host.", devices, 1},
	{"relish_host_memory_used_bytes", M_GAUGE,
	 "Host memory measured in use by relish's segments (RSS).", devices, 1},
	{"relish_host_compute_reserved_ratio", M_GAUGE,
	 "Host CPUs reserved for running segments (0..1).", devices, 1},
	{"relish_host_segments_running", M_GAUGE, "Segments running on the host now.", devices, 1},
	{"relish_http_request_duration_seconds", M_HISTOGRAM,
	 "Time to answer an API request, per route.", http_durations, 0},
	{"relish_http_responses_total", M_COUNTER, "API responses by HTTP status.", http_responses,
	 0},
	{"relish_start_time_seconds", M_GAUGE, "When the service started (unix time).", up_since,
	 0},
	{"relish_read_only", M_GAUGE, "1 when the service only reads a database (serve --read-only).",
	 read_only, 0},
};

static const char *type_name(mtype t)
{
	return t == M_COUNTER ? "counter" : t == M_HISTOGRAM ? "histogram" : "gauge";
}

int api_prometheus_text(api_req *rq, char **text, size_t *len, rl_err *err)
{
	expo o = {.rq = rq, .err = err};
	o.cap = 16384;
	if (!(o.buf = malloc(o.cap)))
		return rl_err_set(err, RL_ENOMEM, "metrics");
	o.buf[0] = '\0';
	for (size_t i = 0; i < sizeof metrics / sizeof metrics[0] && o.rc == 0; i++) {
		const metric_def *m = &metrics[i];
		if (m->needs_driver && !rq->ctx->d)
			continue;
		put(&o, "# HELP %s %s\n# TYPE %s %s\n", m->name, m->help, m->name,
		    type_name(m->type));
		m->samples(&o, m);
	}
	if (o.rc < 0 || o.oom) {
		free(o.buf);
		return o.rc < 0 ? o.rc : rl_err_set(err, RL_ENOMEM, "metrics");
	}
	*text = o.buf;
	*len = o.len;
	return 0;
}

int api_h_metrics(api_req *rq, api_resp *rs, rl_err *err)
{
	/* Every user's usage and experiments, by name: under read: own not
	 * for each user to read (docs/serve.md, "Security model"). */
	const api_user *u = rq->user;
	if (rq->pol->read_own && !u->root && !u->admin)
		return rl_err_set(err, RL_EPERM, "/metrics shows every user's work; under read: own "
				  "it is for root and the admin group (a token of theirs for a "
				  "scraper)");
	int rc = api_prometheus_text(rq, &rs->text, &rs->text_len, err);
	if (rc == 0)
		rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
	return rc;
}
