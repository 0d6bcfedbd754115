/*
 * routes.c - the API's route table, matching and dispatch (route.h).
 *
 * One row per route; the table is the specification.  Matching walks the
 * rows in order and compares path segments, "{name}" capturing one; a
 * path that matches some pattern with another method is 405 rather than
 * 404, so a client learns what is allowed there.  Access is checked here,
 * before any handler runs, from the row's column; ownership (cancel by
 * the owner, root or an admin) needs the experiment and is the handler's
 * call to api_may_change.
 */
#include "api/route.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/logtext.h"

#define KIB 1024u

const api_route api_routes[] = {
	{"GET", API_PREFIX "/server", api_h_server, API_PUBLIC, API_READER, 0,
	 "the service: version, uptime, state folder, devices, policy"},
	{"GET", API_PREFIX "/whoami", api_h_whoami, API_PUBLIC, API_READER, 0,
	 "the caller as the service sees them"},
	{"GET", API_PREFIX "/experiments", api_h_experiments, API_READ, API_READER, 0,
	 "experiments, oldest first, a page at a time (?user= ?status= ?since= ?limit= ?after=)"},
	{"POST", API_PREFIX "/experiments", api_h_submit, API_USER, API_LOOP, API_BODY_SUBMIT,
	 "submit a spec: 201 once it is committed"},
	{"GET", API_PREFIX "/experiments/{ref}", api_h_experiment, API_READ, API_READER, 0,
	 "one experiment (by id or name)"},
	{"POST", API_PREFIX "/experiments/{ref}/cancel", api_h_cancel, API_OWNER, API_LOOP, 4 * KIB,
	 "cancel: the owner, root or the admin group"},
	{"DELETE", API_PREFIX "/experiments/{ref}", api_h_delete, API_OWNER, API_LOOP, 0,
	 "remove an ended experiment with its folder: the owner, root or the admin group"},
	{"GET", API_PREFIX "/experiments/{ref}/best", api_h_best, API_READ, API_READER, 0,
	 "its best trial"},
	{"GET", API_PREFIX "/experiments/{ref}/front", api_h_front, API_READ, API_READER, 0,
	 "its trials' objectives, feasibility and Pareto front"},
	{"GET", API_PREFIX "/experiments/{ref}/trials", api_h_exp_trials, API_READ, API_READER, 0,
	 "its trials (?after= for what changed, ?status= ?limit= ?offset=)"},
	{"GET", API_PREFIX "/experiments/{ref}/segments", api_h_exp_segments, API_READ, API_READER, 0,
	 "its segments, by trial then sequence"},
	{"GET", API_PREFIX "/experiments/{ref}/metrics", api_h_exp_metrics, API_READ, API_READER, 0,
	 "its metric rows (?name= ?trial=)"},
	{"GET", API_PREFIX "/experiments/{ref}/events", api_h_exp_events, API_READ, API_READER, 0,
	 "its events (?after=ID ?limit=)"},
	{"GET", API_PREFIX "/trials/{id}", api_h_trial, API_READ, API_READER, 0, "one trial"},
	{"GET", API_PREFIX "/trials/{id}/metrics", api_h_trial_metrics, API_READ, API_READER, 0,
	 "a trial's metric rows in report order (?name=)"},
	{"GET", API_PREFIX "/trials/{id}/segments", api_h_trial_segments, API_READ, API_READER, 0,
	 "a trial's segments"},
	{"GET", API_PREFIX "/segments/{id}/log", api_h_segment_log, API_READ, API_READER, 0,
	 "a segment's log as text (?offset= ?tail=)"},
	{"GET", API_PREFIX "/devices", api_h_devices, API_READ, API_LOOP, 0,
	 "devices: reserved and used memory, what runs where"},
	{"GET", API_PREFIX "/queue", api_h_queue, API_READ, API_LOOP, 0,
	 "per user: share, attained GPU-time, running and waiting segments"},
	/* The dashboard (docs/dashboard.md): its data routes, its page and
	 * files (embedded in the binary), and Prometheus metrics. */
	{"GET", API_PREFIX "/timeline", api_h_timeline, API_READ, API_READER, 0,
	 "the devices timeline: segments per device over a window (?from= ?to= ?limit=)"},
	{"GET", API_PREFIX "/experiments/{ref}/curves", api_h_curves, API_READ, API_READER, 0,
	 "learning curves as [resource, value] arrays (?name= ?limit= ?after=)"},
	{"GET", "/", api_h_page, API_PUBLIC, API_READER, 0, "the dashboard's page"},
	{"GET", "/ui/{file}", api_h_asset, API_PUBLIC, API_READER, 0,
	 "the dashboard's modules, styles and uPlot"},
	{"GET", "/metrics", api_h_metrics, API_READ, API_LOOP, 0, "Prometheus metrics (text format 0.0.4)"},
	{"POST", API_PREFIX "/prune", api_h_prune, API_USER, API_LOOP, 4 * KIB,
	 "export, then remove ended experiments by the retention rule (root and the admin group)"},
	/* Probes (a service manager's, a load balancer's): no secrets, anyone. */
	{"GET", "/healthz", api_h_healthz, API_PUBLIC, API_LOOP, 0,
	 "liveness: the loop answers; what it holds in memory"},
	{"GET", "/readyz", api_h_readyz, API_PUBLIC, API_LOOP, 0,
	 "readiness: the database answers and the service is not stopping (else 503)"},
};

const size_t api_n_routes = sizeof api_routes / sizeof api_routes[0];

const char *api_access_name(api_access a)
{
	static const char *const names[] = {"public", "read", "user", "owner"};
	return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "?";
}

/* Compare pattern and path segment by segment, capturing {name}s. */
static int match_path(const char *pat, const char *path, api_req *rq)
{
	size_t np = 0;
	while (*pat && *path) {
		if (*pat != '/' || *path != '/')
			return 0;
		pat++;
		path++;
		const char *pe = strchr(pat, '/');
		const char *se = strchr(path, '/');
		size_t pl = pe ? (size_t)(pe - pat) : strlen(pat);
		size_t sl = se ? (size_t)(se - path) : strlen(path);
		if (pl >= 2 && pat[0] == '{' && pat[pl - 1] == '}') {
			if (sl == 0 || sl >= API_PARAM_MAX || np >= API_MAX_PARAMS)
				return 0;
			if (rq) {
				memcpy(rq->param[np], path, sl);
				rq->param[np][sl] = '\0';
			}
			np++;
		} else if (pl != sl || memcmp(pat, path, pl) != 0) {
			return 0;
		}
		pat += pl;
		path += sl;
	}
	if (*pat || *path)
		return 0;
	if (rq)
		rq->n_param = np;
	return 1;
}

int api_route_match(const char *method, const char *path, const api_route **out, api_req *rq,
		    rl_err *err)
{
	/* One trailing slash is tolerated ("/api/v1/experiments/"). */
	char buf[2048];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return rl_err_set(err, RL_ENOTFOUND, "no route for a path of %zu bytes", n);
	memcpy(buf, path, n + 1);
	if (n > 1 && buf[n - 1] == '/')
		buf[n - 1] = '\0';
	char allowed[64] = "";
	for (size_t i = 0; i < api_n_routes; i++) {
		const api_route *r = &api_routes[i];
		if (!match_path(r->pattern, buf, NULL))
			continue;
		if (strcmp(r->method, method) == 0) {
			match_path(r->pattern, buf, rq);
			*out = r;
			return 0;
		}
		if (!strstr(allowed, r->method))
			snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s",
				 allowed[0] ? ", " : "", r->method);
	}
	if (allowed[0])
		return rl_err_set(err, RL_EMETHOD, "%s %s: this path takes %s", method, buf, allowed);
	return rl_err_set(err, RL_ENOTFOUND, "no route %s %s (docs/api.md lists them)", method,
			  buf);
}

size_t api_route_body_max(const api_route *r, const api_policy *pol)
{
	return r->body_max == API_BODY_SUBMIT ? pol->submit_max : r->body_max;
}

int api_route_allowed(const api_route *r, const api_req *rq, int tokens_on, rl_err *err)
{
	const api_user *u = rq->user;
	if (r->access == API_PUBLIC || u->via != API_VIA_NONE)
		return 0;
	if (tokens_on)
		return rl_err_set(err, RL_EAUTH, "%s %s needs a token: send \"Authorization: Bearer "
				  "TOKEN\" with a token from the service's token file", rq->method,
				  rq->path);
	if (r->access == API_READ && !rq->pol->read_own)
		return 0;
	return rl_err_set(err, RL_EAUTH, "%s %s needs to know who you are: connect through the "
			  "unix socket (the service has no token file for TCP)", rq->method,
			  rq->path);
}

void api_resp_header(api_resp *rs, const char *name, const char *fmt, ...)
{
	if (rs->n_header >= API_MAX_HEADERS)
		return;
	snprintf(rs->header[rs->n_header][0], sizeof rs->header[0][0], "%s", name);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rs->header[rs->n_header][1], sizeof rs->header[0][1], fmt, ap);
	va_end(ap);
	rs->n_header++;
}

void api_resp_fini(api_resp *rs)
{
	json_decref(rs->json);
	free(rs->text);
	memset(rs, 0, sizeof *rs);
}

void api_resp_error(api_resp *rs, int code, const char *msg)
{
	json_decref(rs->json);
	free(rs->text);
	rs->text = NULL;
	rs->status = rl_err_http_status(code);
	const char *m = msg && *msg ? msg : rl_strerror(code);
	rs->json = json_pack("{s:{s:s, s:i, s:s}}", "error", "code", rl_err_name(code), "status",
			     rs->status, "message", m);
	if (!rs->json) {
		/* Not UTF-8 (a request's path echoed, bytes and all): JSON
		 * cannot hold it as it is, so the bytes outside ASCII are
		 * written \xHH, rather than the answer losing its body (it
		 * read "out of memory"). */
		char *q = malloc(RL_ERR_MSG_MAX * 4);
		if (q) {
			rs->json = json_pack("{s:{s:s, s:i, s:s}}", "error", "code", rl_err_name(code),
					     "status", rs->status, "message",
					     rl_log_text(m, q, RL_ERR_MSG_MAX * 4));
			free(q);
		}
	}
}

void api_dispatch(const api_route *r, api_req *rq, api_resp *rs)
{
	rl_err err;
	rl_err_clear(&err);
	int rc = r->fn(rq, rs, &err);
	if (rc < 0)
		api_resp_error(rs, rc, err.msg);
	else if (!rs->json && !rs->text)
		api_resp_error(rs, RL_EINTERNAL, "the handler sent nothing");
}
