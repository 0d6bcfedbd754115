/*
 * route.h - the API's route table and what a handler sees (internal to
 * src/api).  Every route is one row of api_routes[] (routes.c): method,
 * path pattern ("{name}" matches one path segment), handler, who may call
 * it, on which thread it runs, the largest body it takes and a one-line
 * summary.  docs/api.md has
 * one "### METHOD PATTERN" heading per row; test_api_routes checks both
 * ways.  The dashboard's pages and /metrics are rows of the same table.
 */
#ifndef RELISH_API_ROUTE_H
#define RELISH_API_ROUTE_H

#include "api/api.h"

#define API_MAX_PARAMS 4
#define API_PARAM_MAX 256
/* Metric rows one read answers at most (?offset= ?limit= page on; the
 * answer says "more" and "next_offset"). */
#define API_METRICS_PAGE 20000

typedef enum api_access {
	API_PUBLIC, /* anyone, anonymous too */
	API_READ,   /* anyone who may read (anonymous only without tokens) */
	API_USER,   /* a known user (submit) */
	API_OWNER,  /* a known user; the handler checks ownership (api_may_change) */
} api_access;

const char *api_access_name(api_access a);

/*
 * Where a route's handler runs (http.c has the whole threading rule):
 *   API_READER  on one of the HTTP threads, with a read-only store of its
 *               own (rq->st): the route reads nothing but the store, the
 *               files the store names and what api_ctx holds unchanging
 *               (devices as at start); it never touches the driver;
 *   API_LOOP    on the driver's loop thread (handed over and waited for):
 *               the route changes something (submit, cancel) or shows the
 *               driver's and the core's live views (devices, queue,
 *               /metrics); rq->st is the driver's own store.
 */
typedef enum api_where { API_READER, API_LOOP } api_where;

/* Experiment resources made by one view, kept while the experiment's row
 * and change count say they hold (h_experiments.c). */
typedef struct api_exp_cache api_exp_cache;
void api_exp_cache_free(api_exp_cache *c); /* NULL accepted */

/* A store and what is kept with it between requests: each thread of
 * http.c's has one for itself at a time (a reader's, or the loop's).  The
 * JSON objects its caches hold may be shared with an answer, so an answer
 * is written out as text before its view is given back (http.c): no JSON
 * object (or its reference count) is ever touched by two threads. */
typedef struct api_view {
	store *st;
	api_exp_cache *exps; /* made on first use, freed with the view */
} api_view;

typedef struct api_req {
	api_ctx *ctx;
	store *st;           /* the store this request reads (api_where) */
	api_view *view;      /* st with its caches */
	const api_policy *pol; /* the policy as it was when the request came */
	const api_user *user;
	const char *method;
	const char *path;
	char param[API_MAX_PARAMS][API_PARAM_MAX]; /* {name} captures, in order */
	size_t n_param;
	/* ?key=value; NULL when absent */
	const char *(*query)(void *qctx, const char *key);
	void *qctx;
	const char *body;    /* NUL-terminated, body_len bytes */
	size_t body_len;
} api_req;

#define API_MAX_HEADERS 4
typedef struct api_resp {
	int status;          /* 0: 200 */
	json_t *json;        /* owned: the body as JSON, or */
	char *text;          /* owned: a body of content_type */
	size_t text_len;
	const char *content_type;
	char header[API_MAX_HEADERS][2][80]; /* extra headers: name, value */
	size_t n_header;
} api_resp;

void api_resp_header(api_resp *rs, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void api_resp_fini(api_resp *rs);

typedef int (*api_handler)(api_req *rq, api_resp *rs, rl_err *err);

typedef struct api_route {
	const char *method;  /* "GET", "POST" */
	const char *pattern; /* "/api/v1/experiments/{ref}" */
	api_handler fn;
	api_access access;
	api_where where;
	size_t body_max;     /* bytes; 0: no body; API_BODY_SUBMIT: the policy's */
	const char *summary;
} api_route;

#define API_BODY_SUBMIT ((size_t)-1)

extern const api_route api_routes[];
extern const size_t api_n_routes;

/*
 * The route for method and path: 0 with *out and the captures in rq, or
 * RL_ENOTFOUND (no pattern matches) / RL_EMETHOD (a pattern matches with
 * another method: err lists the allowed ones), err filled.
 */
int api_route_match(const char *method, const char *path, const api_route **out, api_req *rq,
		    rl_err *err);

/* The body limit of r under policy pol. */
size_t api_route_body_max(const api_route *r, const api_policy *pol);

/* Whether rq->user may call r at all (RL_EAUTH / RL_EPERM with the reason). */
int api_route_allowed(const api_route *r, const api_req *rq, int tokens_on, rl_err *err);

/* Run the route's handler; on error rs holds the error document. */
void api_dispatch(const api_route *r, api_req *rq, api_resp *rs);

/* The error document {"error": {"code", "status", "message"}} and its status. */
void api_resp_error(api_resp *rs, int code, const char *msg);

/* ---- helpers for handlers (handlers.c) ---- */

/* The experiment {ref} names: all digits is an id, else a name.  Reads
 * access too (read: own).  *e is the caller's (store_experiment_fini). */
int api_find_experiment(api_req *rq, const char *ref, store_experiment *e, rl_err *err);
/* May the user see (read) / change (cancel) what owner_uid owns? */
int api_may_read(const api_req *rq, const store_experiment *e, rl_err *err);
int api_may_change(const api_req *rq, const store_experiment *e, rl_err *err);
/* Query parameters: a number (absent: dflt; bad: RL_EINVAL naming it). */
int api_query_real(const api_req *rq, const char *key, double dflt, double *out, rl_err *err);
int api_query_int(const api_req *rq, const char *key, long long dflt, long long *out,
		  rl_err *err);

/* Handlers (h_*.c), one per row. */
int api_h_server(api_req *rq, api_resp *rs, rl_err *err);
int api_h_whoami(api_req *rq, api_resp *rs, rl_err *err);
int api_h_healthz(api_req *rq, api_resp *rs, rl_err *err);
int api_h_readyz(api_req *rq, api_resp *rs, rl_err *err);
int api_h_prune(api_req *rq, api_resp *rs, rl_err *err);
int api_h_experiments(api_req *rq, api_resp *rs, rl_err *err);
int api_h_submit(api_req *rq, api_resp *rs, rl_err *err);
int api_h_experiment(api_req *rq, api_resp *rs, rl_err *err);
int api_h_cancel(api_req *rq, api_resp *rs, rl_err *err);
int api_h_delete(api_req *rq, api_resp *rs, rl_err *err);
int api_h_best(api_req *rq, api_resp *rs, rl_err *err);
int api_h_front(api_req *rq, api_resp *rs, rl_err *err);
int api_h_exp_trials(api_req *rq, api_resp *rs, rl_err *err);
int api_h_exp_segments(api_req *rq, api_resp *rs, rl_err *err);
int api_h_exp_metrics(api_req *rq, api_resp *rs, rl_err *err);
int api_h_exp_events(api_req *rq, api_resp *rs, rl_err *err);
int api_h_trial(api_req *rq, api_resp *rs, rl_err *err);
int api_h_trial_metrics(api_req *rq, api_resp *rs, rl_err *err);
int api_h_trial_segments(api_req *rq, api_resp *rs, rl_err *err);
int api_h_segment_log(api_req *rq, api_resp *rs, rl_err *err);
int api_h_devices(api_req *rq, api_resp *rs, rl_err *err);
int api_h_queue(api_req *rq, api_resp *rs, rl_err *err);
int api_h_timeline(api_req *rq, api_resp *rs, rl_err *err);
int api_h_curves(api_req *rq, api_resp *rs, rl_err *err);
int api_h_page(api_req *rq, api_resp *rs, rl_err *err);
int api_h_asset(api_req *rq, api_resp *rs, rl_err *err);
int api_h_metrics(api_req *rq, api_resp *rs, rl_err *err);

#endif
