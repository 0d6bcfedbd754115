/*
 * fuzz_api_routes.c - libFuzzer target for the API's requests as relish
 * serve handles them once libmicrohttpd has read them: the route table
 * (api_route_match: path, {name} captures, 404 against 405), who may call
 * a route (api_route_allowed), the body limit, then the handler itself
 * (api_dispatch) with its query parameters and body: submissions (the
 * JSON envelope, the spec inside, "env", admission against a config),
 * cancels, reads of experiments, trials, segments, metrics, events,
 * timelines, devices, queue, /metrics, the dashboard's pages.  The
 * handlers act on a real driver in service mode (its store a database in
 * a temporary folder, a host of 4 GiB and 4 CPUs, no loop run: nothing is
 * launched), set up once; a user may hold 4 running experiments, so
 * inputs cannot grow the store for ever.  Not built by default:
 * scripts/fuzz.sh builds and runs it; fuzz_replay_api_routes replays the
 * seeds and regression inputs.
 *
 * The input: byte 0 chooses the caller (bits 0-1: a user of uid 1000,
 * root, anonymous TCP, a user by token; bit 2: read: own; bit 3: tokens
 * on); then the request line "METHOD PATH[?QUERY]" up to the first
 * newline; the rest is the body.  Checked besides the sanitizers: every
 * request is answered with a status from 200 to 599 and a body (JSON or
 * text), an error answer is the error document, and a route refused to
 * its caller never reaches its handler (its answer is the refusal).
 */
#include <ftw.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/route.h"
#include "live/driver.h"
#include "serve/serve.h"
#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static live *drv;
static api_ctx ctx;
static api_policy pol;
static serve_config conf;
static api_view view;
static char dir[64], db[128], runs[128];

static int admit(void *c, const api_user *u, const spec *sp, rl_err *err)
{
	(void)c;
	return serve_admit(&conf, u, sp, err);
}

static void quiet(void *ud, const char *line)
{
	(void)ud, (void)line;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void teardown(void)
{
	live_free(drv);
	drv = NULL;
	serve_config_fini(&conf);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/relish-fuzz-api-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	char dev[128];
	snprintf(dev, sizeof dev, "%s/devices.yaml", dir);
	FILE *f = fopen(dev, "w");
	if (!f)
		abort();
	fputs("host:\n  memory: 4GiB\n  cpus: 4\n", f);
	fclose(f);
	snprintf(db, sizeof db, "%s/relish.db", dir);
	snprintf(runs, sizeof runs, "%s/runs", dir);
	if (mkdir(runs, 0755) < 0)
		abort();
	const char *cf = "allow: [trial.network=host]\n"
			 "users: {default: {experiments: 4, allow: [trial.mounts]}}\n";
	rl_err err;
	rl_err_clear(&err);
	serve_config_default(&conf);
	if (serve_config_parse(cf, strlen(cf), "fuzz.yaml", &conf, &err) < 0)
		abort();
	live_options lo;
	live_options_default(&lo);
	lo.service = 1;
	lo.db_path = db;
	lo.runs_dir = runs;
	lo.devices_path = dev;
	lo.progress = 0;
	lo.line_fn = quiet;
	if (live_new(&lo, &drv, &err) < 0) {
		fprintf(stderr, "fuzz_api_routes: %s\n", err.msg);
		abort();
	}
	live_user_policy up = {.share = 1, .max_experiments = 4};
	live_set_default_user_policy(drv, &up);
	pol = conf.api;
	static api_device host = {.name = "host", .uuid = "host", .mem_total_mib = 4096,
				  .compute_total = 4};
	ctx = (api_ctx){.d = drv, .st = live_store(drv), .db_path = db, .pol = &pol,
			.admit = admit, .state_dir = dir, .devices = &host, .n_devices = 1};
	view.st = ctx.st;
	atexit(teardown);
}

/* ?key=value&... of the request line, as MHD hands them: %XX and '+'
 * decoded; the last value of a key repeated. */
typedef struct query {
	char *keys[16], *vals[16];
	size_t n;
} query;

static void url_decode(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r == '+') {
			*w++ = ' ';
		} else if (*r == '%' && r[1] && r[2]) {
			char hex[3] = {r[1], r[2], 0};
			char *end;
			long v = strtol(hex, &end, 16);
			if (*end || v == 0) {
				*w++ = *r;
				continue;
			}
			*w++ = (char)v;
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

static const char *query_get(void *qc, const char *key)
{
	const query *q = qc;
	const char *v = NULL;
	for (size_t i = 0; i < q->n; i++)
		if (!strcmp(q->keys[i], key))
			v = q->vals[i];
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2 || size > (2u << 20))
		return 0;
	if (!drv)
		setup();
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	char *body = strchr(s, '\n');
	size_t body_len = 0;
	if (body) {
		*body++ = '\0';
		body_len = (size_t)(s + size - 1 - body);
	}
	char *path = strchr(s, ' ');
	if (!path) {
		free(s);
		return 0;
	}
	*path++ = '\0';
	const char *method = s;
	query q = {0};
	char *qs = strchr(path, '?');
	if (qs) {
		*qs++ = '\0';
		for (char *save = NULL, *kv = strtok_r(qs, "&", &save); kv && q.n < 16;
		     kv = strtok_r(NULL, "&", &save)) {
			char *eq = strchr(kv, '=');
			if (eq)
				*eq++ = '\0';
			url_decode(kv);
			if (eq)
				url_decode(eq);
			q.keys[q.n] = kv;
			q.vals[q.n++] = eq ? eq : "";
		}
	}
	url_decode(path); /* MHD hands the path decoded */

	int who = data[0] & 3;
	api_user u = {.via = who == 2 ? API_VIA_NONE : who == 3 ? API_VIA_TOKEN : API_VIA_UNIX,
		      .uid = who == 1 ? 0 : 1000, .gid = 1000, .root = who == 1};
	snprintf(u.name, sizeof u.name, "%s", who == 1 ? "root" : who == 2 ? "" : "fuzz");
	api_policy p = pol;
	p.read_own = !!(data[0] & 4);
	int tokens_on = !!(data[0] & 8);

	api_req rq = {.ctx = &ctx, .pol = &p, .user = &u, .method = method, .path = path,
		      .query = query_get, .qctx = &q, .body = body ? body : "",
		      .body_len = body_len};
	api_resp rs = {0};
	rl_err err;
	rl_err_clear(&err);
	const api_route *r = NULL;
	int rc = api_route_match(method, path, &r, &rq, &err);
	if (rc == 0 && (rc = api_route_allowed(r, &rq, tokens_on, &err)) == 0 &&
	    body_len > api_route_body_max(r, &p))
		rc = RL_ETOOBIG;
	if (rc < 0) {
		if (!err.msg[0] && rc != RL_ETOOBIG)
			abort(); /* refused without saying why */
		api_resp_error(&rs, rc, err.msg);
	} else {
		rq.st = view.st;
		rq.view = &view;
		api_dispatch(r, &rq, &rs);
	}
	int status = rs.status ? rs.status : 200;
	if (getenv("RELISH_FUZZ_VERBOSE") && !rs.json) /* what each input was answered */
		fprintf(stderr, "%s %s: %d %.160s\n", method, path, status, rs.text ? rs.text : "(none)");
	if (status < 200 || status > 599)
		abort();
	if (!rs.json && !rs.text)
		abort(); /* every answer has a body */
	if (status >= 400 && rs.json && !json_object_get(rs.json, "error") && !rs.text)
		abort(); /* an error answer is the error document */
	if (rs.json) {
		char *out = json_dumps(rs.json, JSON_COMPACT);
		if (!out)
			abort();
		if (getenv("RELISH_FUZZ_VERBOSE")) /* what each input was answered */
			fprintf(stderr, "%s %s: %d %.160s\n", method, path, status, out);
		free(out);
	}
	api_resp_fini(&rs);
	free(s);
	return 0;
}
