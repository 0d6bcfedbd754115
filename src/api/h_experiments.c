/*
 * h_experiments.c - the experiment routes: list, submit, get, cancel, and
 * what hangs off one experiment (best trial, trials, segments, metrics,
 * events).  docs/api.md documents each.
 */
#include "api/route.h"

#include <ctype.h>
#include <math.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "api/encode.h"
#include "common/units.h"

static double api_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The experiment resources a view made, as JSON text, by experiment id.
 * An entry holds while the row says the same (created_at: not another
 * experiment that got the id; status) and its change count is the same
 * (schema 5: the store's triggers count every write of its trials and
 * events, which is all a summary reads).  Without change counts (an older
 * database, read only) only what can no longer change is kept: a finished
 * experiment none of whose trials still runs (a cancelled one's running
 * segments end after its row says cancelled).  The text of an experiment
 * without a finish time lacks its elapsed_s value, written in at each
 * answer.  So a status read while 50 experiments run reads their rows,
 * summarises the few that changed (all of them in one go) and copies text.
 */
#define EXP_CACHE_SLOTS 1024 /* a power of two: entries per view, by id */

typedef struct exp_cached {
	int64_t id;           /* whose text this is; 0: none */
	char *text;           /* the resource as JSON text; NULL: none */
	size_t len;
	size_t at;            /* where the elapsed_s value goes; 0: it is in text */
	double created_at;
	exp_status status;
	int64_t changes;      /* -1: unknown (kept only when final) */
	int paused;           /* made while paused (exp_paused) */
	int keep;             /* made now: may go into the cache */
} exp_cached;

/* Direct-mapped, id modulo its size: a view holds at most EXP_CACHE_SLOTS
 * texts however many experiments the store has (a list page is at most
 * API_EXP_PAGE_MAX of them, dense ids, so a page seldom evicts itself). */
struct api_exp_cache {
	exp_cached v[EXP_CACHE_SLOTS];
};

void api_exp_cache_free(api_exp_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < EXP_CACHE_SLOTS; i++)
		free(c->v[i].text);
	free(c);
}

static exp_cached *cache_slot(api_view *v, int64_t id)
{
	if (!v || id <= 0)
		return NULL;
	if (!v->exps && !(v->exps = calloc(1, sizeof *v->exps)))
		return NULL;
	return &v->exps->v[(uint64_t)id & (EXP_CACHE_SLOTS - 1)];
}

static int cache_holds(const exp_cached *k, const store_experiment *e, int paused)
{
	return k && k->text && k->id == e->id && k->created_at == e->created_at &&
	       k->status == e->status && k->changes == e->changes && k->paused == paused;
}

/* e is paused for want of space: the service's word, not the store's
 * (a pause may be what could not be written). */
static int exp_paused(const api_req *rq, const store_experiment *e)
{
	const api_ctx *c = rq->ctx;
	return c && c->paused && e->status == EXP_RUNNING && c->paused(c->paused_ctx, e->id);
}

/* The text of the resource of e with summary sum into *tmp (the elapsed_s
 * value cut out unless it is final), marked keep when the cache may hold
 * it; the caller moves it there or frees it. */
static int cache_fill(exp_cached *tmp, const store_experiment *e, const api_exp_summary *sum,
		      rl_err *err)
{
	static const char key[] = ",\"elapsed_s\":";
	int open = isnan(e->finished_at);
	json_t *j = api_json_experiment(e, sum, 0);
	if (j && open)
		json_object_set_new(j, "elapsed_s", json_null());
	/* Every digit (17), as http.c writes a JSON answer. */
	char *text = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(j);
	if (!text)
		return rl_err_set(err, RL_ENOMEM, "experiment %lld", (long long)e->id);
	size_t len = strlen(text), at = 0;
	if (open) {
		/* `,"` cannot occur inside a JSON string (a quote there is
		 * escaped), so this is the key. */
		char *p = strstr(text, key);
		if (!p || strncmp(p + sizeof key - 1, "null", 4) != 0) {
			free(text);
			return rl_err_set(err, RL_EINTERNAL, "experiment %lld: no elapsed_s",
					  (long long)e->id);
		}
		at = (size_t)(p - text) + sizeof key - 1;
		memmove(text + at, text + at + 4, len - at - 4 + 1);
		len -= 4;
	}
	int running_trials = sum->count[TRIAL_RUNNING];
	int keep = e->changes >= 0 || (e->status != EXP_RUNNING && running_trials == 0);
	free(tmp->text);
	*tmp = (exp_cached){.id = e->id, .text = text, .len = len, .at = at,
			    .created_at = e->created_at, .status = e->status,
			    .changes = e->changes, .paused = sum->paused, .keep = keep};
	return 0;
}

/* A growing answer. */
typedef struct textbuf {
	char *p;
	size_t n, cap;
	int oom;
} textbuf;

static void tb_add(textbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

/* The JSON of api_json_real(v), as http.c would write it. */
static void tb_real(textbuf *b, double v)
{
	char num[40];
	int n;
	if (isnan(v) || isinf(v))
		n = snprintf(num, sizeof num, "null");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		n = snprintf(num, sizeof num, "%lld", (long long)v);
	else
		n = snprintf(num, sizeof num, "%.17g", v);
	tb_add(b, num, (size_t)n);
}

static void tb_experiment(textbuf *b, const exp_cached *k, const store_experiment *e, double now)
{
	if (!k->at) {
		tb_add(b, k->text, k->len);
		return;
	}
	tb_add(b, k->text, k->at);
	tb_real(b, now - e->created_at);
	tb_add(b, k->text + k->at, k->len - k->at);
}

/* The answers of v[0..n) that want[] marks, into b: "[...]" (list 1),
 * the same without the brackets (list 2, a part of a list) or the one
 * object (list 0). */
static int experiments_text(api_req *rq, const store_experiment *v, size_t n,
			    const unsigned char *want, int list, textbuf *b, rl_err *err)
{
	double now = api_now();
	/* The stale ones first, summarised together. */
	store_experiment *stale = NULL;
	unsigned char *paused = n ? calloc(n, 1) : NULL;
	size_t ns = 0;
	if (n && !paused)
		return rl_err_set(err, RL_ENOMEM, "experiments");
	for (size_t i = 0; i < n; i++) {
		if (want && !want[i])
			continue;
		paused[i] = (unsigned char)exp_paused(rq, &v[i]);
		if (!cache_holds(cache_slot(rq->view, v[i].id), &v[i], paused[i])) {
			if (!stale && !(stale = malloc(n * sizeof *stale))) {
				free(paused);
				return rl_err_set(err, RL_ENOMEM, "experiments");
			}
			stale[ns++] = v[i]; /* (a shallow copy: v owns the strings) */
		}
	}
	exp_cached *tmp = ns ? calloc(ns, sizeof *tmp) : NULL;
	int rc = ns && !tmp ? rl_err_set(err, RL_ENOMEM, "experiments") : 0;
	if (rc == 0 && ns) {
		api_exp_summary *sums = calloc(ns, sizeof *sums);
		if (!sums)
			rc = rl_err_set(err, RL_ENOMEM, "experiments");
		else if ((rc = api_exp_summarise_all(rq->st, stale, ns, sums, err)) == 0)
			for (size_t i = 0, vi = 0; i < ns; i++) {
				while (v[vi].id != stale[i].id) /* stale keeps v's order */
					vi++;
				sums[i].paused = paused[vi];
				if (rc == 0)
					rc = cache_fill(&tmp[i], &stale[i], &sums[i], err);
				api_exp_summary_fini(&sums[i]);
			}
		free(sums);
	}
	if (list == 1)
		tb_add(b, "[", 1);
	size_t si = 0, k = 0;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (want && !want[i])
			continue;
		const exp_cached *c = cache_slot(rq->view, v[i].id);
		if (si < ns && stale[si].id == v[i].id)
			c = &tmp[si++];
		if (k++ && list)
			tb_add(b, ",", 1);
		tb_experiment(b, c, &v[i], now);
	}
	if (list == 1)
		tb_add(b, "]", 1);
	/* Only now into the cache: a slot read above may be another's here. */
	for (size_t i = 0; i < ns; i++) {
		exp_cached *c = rc == 0 && tmp[i].keep ? cache_slot(rq->view, tmp[i].id) : NULL;
		if (c) {
			free(c->text);
			*c = tmp[i];
		} else {
			free(tmp[i].text);
		}
	}
	free(tmp);
	free(stale);
	free(paused);
	if (rc == 0 && b->oom)
		rc = rl_err_set(err, RL_ENOMEM, "experiments");
	return rc;
}

/* The JSON text in b as the answer (rc 0), or b freed and rc passed on. */
static int text_answer(textbuf *b, int rc, api_resp *rs)
{
	if (rc < 0) {
		free(b->p);
		return rc;
	}
	rs->text = b->p;
	rs->text_len = b->n;
	rs->content_type = "application/json";
	return 0;
}

/* The search space of e's stored spec (its JSON form: search.space, each
 * parameter's type, bounds and log flag) as JSON text, or "null" (a spec
 * stored before it was JSON, a brief row).  The dashboard draws a uniform
 * parameter on a linear axis and a log one on a log axis from it (issue
 * 30, item 11); only one experiment's answer has it, a list's do not (a
 * status read does not parse specs). */
static char *space_text(const store_experiment *e)
{
	json_t *js = e->spec_text ? json_loads(e->spec_text, 0, NULL) : NULL;
	json_t *sp = json_object_get(json_object_get(js, "search"), "space");
	char *t = json_is_object(sp) ? json_dumps(sp, JSON_COMPACT | JSON_REAL_PRECISION(17))
					: NULL;
	json_decref(js);
	return t ? t : strdup("null");
}

/* The experiment resource of e, as the answer: the list's object and its
 * "space". */
static int experiment_answer(api_req *rq, const store_experiment *e, api_resp *rs, rl_err *err)
{
	textbuf b = {0};
	int rc = experiments_text(rq, e, 1, NULL, 0, &b, err);
	char *text = rc == 0 ? space_text(e) : NULL;
	if (rc == 0 && (!text || b.n < 2 || b.p[b.n - 1] != '}'))
		rc = rl_err_set(err, text ? RL_EINTERNAL : RL_ENOMEM, "experiment %lld: its space",
				(long long)e->id);
	if (rc == 0) {
		b.n--; /* the closing brace, written again after the space */
		tb_add(&b, ",\"space\":", 9);
		tb_add(&b, text, strlen(text));
		tb_add(&b, "}", 1);
		if (b.oom)
			rc = rl_err_set(err, RL_ENOMEM, "experiment %lld", (long long)e->id);
	}
	free(text);
	return text_answer(&b, rc, rs);
}

/* A page of the experiment list: at most this many (?limit=, default and
 * most), so that no answer grows with the service's history. */
#define API_EXP_PAGE_MAX 1000

/* ?since=: a unix time (a plain number), or a duration back from now
 * ("90s", "12h", "7d"). */
static int query_since(api_req *rq, double *since, rl_err *err)
{
	const char *v = rq->query ? rq->query(rq->qctx, "since") : NULL;
	*since = NAN;
	if (!v || !*v)
		return 0;
	char *end;
	double d = strtod(v, &end);
	if (!*end && isfinite(d) && isdigit((unsigned char)v[0])) {
		*since = d;
		return 0;
	}
	if (units_parse_duration(v, &d) < 0)
		return rl_err_set(err, RL_EINVAL, "?since=: expected a unix time or a duration back "
				  "from now (90s, 12h, 7d), got '%s'", v);
	*since = api_now() - d;
	return 0;
}

int api_h_experiments(api_req *rq, api_resp *rs, rl_err *err)
{
	const char *user = rq->query ? rq->query(rq->qctx, "user") : NULL;
	const char *status = rq->query ? rq->query(rq->qctx, "status") : NULL;
	const char *order = rq->query ? rq->query(rq->qctx, "order") : NULL;
	exp_status want_status = EXP_RUNNING;
	if (status && *status && exp_status_from_name(status, &want_status, err) < 0)
		return rl_err_set(err, RL_EINVAL, "?status=: expected running, done, cancelled or "
				  "failed, got '%s'", status);
	if (order && *order && strcmp(order, "asc") && strcmp(order, "desc"))
		return rl_err_set(err, RL_EINVAL, "?order=: expected asc (oldest first) or desc "
				  "(newest first), got '%s'", order);
	long long limit, after;
	store_exp_filter f = STORE_EXP_FILTER_ALL;
	int rc = api_query_int(rq, "limit", API_EXP_PAGE_MAX, &limit, err);
	if (rc == 0)
		rc = api_query_int(rq, "after", 0, &after, err);
	if (rc == 0)
		rc = query_since(rq, &f.since, err);
	if (rc < 0)
		return rc;
	if (limit <= 0 || limit > API_EXP_PAGE_MAX)
		limit = API_EXP_PAGE_MAX;
	f.brief = 1;
	f.status = status && *status ? (int)want_status : -1;
	f.owner = user && *user ? user : NULL;
	f.after = after;
	f.limit = (size_t)limit;
	/* ?order=desc: newest first, ?after= the ids below (the dashboard's
	 * first page is the newest experiments) */
	f.desc = order && !strcmp(order, "desc");
	/* Rows the caller may not read (read: own) are left out; pages are
	 * read until this one is full or the list ends. */
	store_experiment *v = NULL;
	size_t n = 0, kept = 0;
	unsigned char *want = NULL;
	int more = 0;
	textbuf b = {0};
	tb_add(&b, "{\"experiments\":", 15);
	tb_add(&b, "[", 1);
	while (rc == 0 && kept < (size_t)limit) {
		f.limit = (size_t)limit - kept;
		if ((rc = store_experiment_page(rq->st, &f, &v, &n, err)) < 0)
			break;
		want = n ? malloc(n) : NULL;
		if (n && !want)
			rc = rl_err_set(err, RL_ENOMEM, "experiments");
		size_t w = 0;
		for (size_t i = 0; rc == 0 && i < n; i++) {
			rl_err quiet;
			want[i] = api_may_read(rq, &v[i], &quiet) == 0;
			w += want[i];
		}
		if (rc == 0 && w) {
			if (kept)
				tb_add(&b, ",", 1);
			rc = experiments_text(rq, v, n, want, 2, &b, err);
		}
		kept += w;
		more = n == f.limit;
		if (n)
			f.after = v[n - 1].id;
		free(want);
		want = NULL;
		store_experiments_free(v, n);
		v = NULL;
		if (!more)
			break;
	}
	tb_add(&b, "]", 1);
	/* The next page's ?after=, or null at the end. */
	char tail[64];
	int k = more ? snprintf(tail, sizeof tail, ",\"next_after\":%lld}", (long long)f.after)
		     : snprintf(tail, sizeof tail, ",\"next_after\":null}");
	tb_add(&b, tail, (size_t)k);
	if (rc == 0 && b.oom)
		rc = rl_err_set(err, RL_ENOMEM, "experiments");
	return text_answer(&b, rc, rs);
}

int api_h_experiment(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	int rc = api_find_experiment(rq, rq->param[0], &e, err);
	if (rc < 0)
		return rc;
	rc = experiment_answer(rq, &e, rs, err);
	store_experiment_fini(&e);
	return rc;
}

/* ---- submit ---- */

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcasecmp(s + a - b, suffix);
}

/*
 * The body: {"spec": TEXT or OBJECT, "name": "exp.yaml", "dir": "/abs",
 * "format": "yaml" | "json"}.  name is what messages call the spec (the
 * path the user typed, so errors read as `relish validate`'s); dir is
 * where its relative paths start (default: the user's home).
 */
int api_h_submit(api_req *rq, api_resp *rs, rl_err *err)
{
	if (!rq->ctx->d)
		return rl_err_set(err, RL_EPERM, "this service only shows %s (serve --read-only): "
				  "submit to a running `relish serve`", rq->ctx->state_dir);
	const api_user *u = rq->user;
	json_error_t je;
	json_t *body = json_loadb(rq->body ? rq->body : "", rq->body_len, 0, &je);
	if (!body || !json_is_object(body)) {
		json_decref(body);
		return rl_err_set(err, RL_EPARSE, "request body: expected a JSON object {\"spec\": "
				  "...}: %s (line %d, column %d)",
				  body ? "not an object" : je.text, je.line, je.column);
	}
	int rc = 0;
	char *text = NULL;
	const json_t *js = json_object_get(body, "spec");
	const char *name = json_string_value(json_object_get(body, "name"));
	const char *dir = json_string_value(json_object_get(body, "dir"));
	const char *format = json_string_value(json_object_get(body, "format"));
	const char *rename = json_string_value(json_object_get(body, "experiment"));
	int as_json = 0;
	if (json_is_string(js)) {
		text = strdup(json_string_value(js));
		as_json = format ? !strcmp(format, "json") : name && ends_with(name, ".json");
	} else if (json_is_object(js)) {
		text = json_dumps(js, JSON_COMPACT | JSON_REAL_PRECISION(17));
		as_json = 1;
	} else {
		rc = rl_err_set(err, RL_EINVAL, "request body: \"spec\" must be the spec's text or "
				"a JSON object");
	}
	if (rc == 0 && format && strcmp(format, "json") && strcmp(format, "yaml"))
		rc = rl_err_set(err, RL_EINVAL, "request body: \"format\": expected yaml or json, "
				"got '%s'", format);
	if (rc == 0 && dir && dir[0] != '/')
		rc = rl_err_set(err, RL_EINVAL, "request body: \"dir\" must be an absolute path, got "
				"'%s'", dir);
	/* "env": the variables ${NAME} in trial.mounts may name, as the
	 * submitter's client has them (the service's own are never read) */
	json_t *env = json_object_get(body, "env");
	if (rc == 0 && env && !json_is_object(env))
		rc = rl_err_set(err, RL_EINVAL, "request body: \"env\" must be an object of "
				"strings");
	for (void *it = json_object_iter(env); rc == 0 && it; it = json_object_iter_next(env, it))
		if (!json_is_string(json_object_iter_value(it)))
			rc = rl_err_set(err, RL_EINVAL, "request body: \"env\": %.64s: expected a "
					"string", json_object_iter_key(it));
	if (rc == 0 && !text)
		rc = rl_err_set(err, RL_ENOMEM, "submission");
	char home[4096] = "/";
	struct passwd pwb, *pw = NULL;
	char pbuf[4096];
	if (getpwuid_r(u->uid, &pwb, pbuf, sizeof pbuf, &pw) == 0 && pw && pw->pw_dir &&
	    pw->pw_dir[0] == '/')
		snprintf(home, sizeof home, "%s", pw->pw_dir);
	/* What is stored, and parsed: the same text a restart parses again. */
	char *submission = NULL;
	if (rc == 0) {
		json_t *sub = json_pack("{s:s, s:s, s:s, s:s}", "spec", text, "name",
					name && *name ? name : "spec", "dir", dir ? dir : home,
					"format", as_json ? "json" : "yaml");
		if (sub && rename)
			json_object_set_new(sub, "experiment", json_string(rename));
		if (sub && env && json_object_size(env))
			json_object_set(sub, "env", env);
		submission = sub ? json_dumps(sub, JSON_COMPACT) : NULL;
		json_decref(sub);
		if (!submission)
			rc = rl_err_set(err, RL_ENOMEM, "submission");
	}
	free(text);
	json_decref(body);
	spec *sp = NULL;
	live_owner ow;
	if (rc == 0)
		rc = live_owner_of_uid(u->uid, &ow, err);
	uid_t me = geteuid();
	if (rc == 0 && u->uid != me && me != 0)
		rc = rl_err_set(err, RL_EPERM, "this service runs as uid %u and cannot run trials as "
				"%s (uid %u); trials always run as their submitter",
				(unsigned)me, u->name, (unsigned)u->uid);
	ow.run_as = u->uid != me; /* root runs everyone else's trials as them */
	/* parsed as the submitter's: their variables, their view of paths */
	if (rc == 0)
		rc = live_submission_parse(submission, &ow, &sp, err);
	if (rc == 0 && rq->ctx->admit)
		rc = rq->ctx->admit(rq->ctx->admit_ctx, u, sp, err);
	if (rc < 0) {
		spec_free(sp);
		free(submission);
		return rc;
	}
	int64_t id;
	rc = live_submit(rq->ctx->d, sp, &ow, submission, &id, err);
	free(submission);
	if (rc < 0)
		return rc;
	store_experiment e;
	if ((rc = store_experiment_get(rq->st, id, &e, err)) < 0)
		return rc;
	rc = experiment_answer(rq, &e, rs, err);
	store_experiment_fini(&e);
	rs->status = 201;
	api_resp_header(rs, "Location", API_PREFIX "/experiments/%lld", (long long)id);
	return rc;
}

int api_h_cancel(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	int rc = api_find_experiment(rq, rq->param[0], &e, err);
	if (rc < 0)
		return rc;
	if (!rq->ctx->d)
		rc = rl_err_set(err, RL_EPERM, "this service only shows %s (serve --read-only): "
				"nothing runs here to cancel", rq->ctx->state_dir);
	else if ((rc = api_may_change(rq, &e, err)) == 0) {
		if (e.status != EXP_RUNNING)
			rc = rl_err_set(err, RL_EEXISTS, "experiment %lld (%s) is %s already",
					(long long)e.id, e.name, exp_status_name(e.status));
		else
			rc = live_cancel(rq->ctx->d, e.id, rq->user->name, err);
	}
	int64_t id = e.id;
	store_experiment_fini(&e);
	if (rc < 0)
		return rc;
	/* The row as cancelled (committed by live_cancel). */
	if ((rc = store_experiment_get(rq->st, id, &e, err)) < 0)
		return rc;
	rc = experiment_answer(rq, &e, rs, err);
	store_experiment_fini(&e);
	return rc;
}

int api_h_delete(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	int rc = api_find_experiment(rq, rq->param[0], &e, err);
	if (rc < 0)
		return rc;
	if (!rq->ctx->d)
		rc = rl_err_set(err, RL_EPERM, "this service only shows %s (serve --read-only): "
				"nothing is removed here", rq->ctx->state_dir);
	else if ((rc = api_may_change(rq, &e, err)) == 0)
		rc = live_delete(rq->ctx->d, e.id, rq->user->name, err);
	if (rc == 0)
		rs->json = json_pack("{s:I, s:s, s:s?, s:b}", "id", (json_int_t)e.id, "experiment",
				     e.name, "owner", e.owner, "deleted", 1);
	store_experiment_fini(&e);
	return rc;
}

/* ---- what hangs off one experiment ---- */

int api_h_best(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	int rc = api_find_experiment(rq, rq->param[0], &e, err);
	if (rc < 0)
		return rc;
	store_trial t;
	rc = store_trial_best(rq->st, e.id, &t, err);
	if (rc == 0) {
		rs->json = api_json_best(&e, &t);
		store_trial_fini(&t);
	} else if (rc == RL_ENOTFOUND) {
		rl_err_set(err, rc, "experiment '%s' has no trial with a value of %s yet", e.name,
			   e.objective_metric);
	}
	store_experiment_fini(&e);
	return rc;
}

/* Every trial's objectives and the Pareto front (api_front_json). */
int api_h_front(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	int rc = api_find_experiment(rq, rq->param[0], &e, err);
	if (rc < 0)
		return rc;
	rc = api_front_json(rq->st, &e, &rs->json, err);
	store_experiment_fini(&e);
	return rc;
}

int api_h_exp_trials(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	double after;
	long long limit, offset;
	int rc = api_query_real(rq, "after", NAN, &after, err);
	if (rc == 0)
		rc = api_query_int(rq, "limit", 0, &limit, err);
	if (rc == 0)
		rc = api_query_int(rq, "offset", 0, &offset, err);
	const char *status = rq->query ? rq->query(rq->qctx, "status") : NULL;
	trial_status want = TRIAL_PENDING;
	if (rc == 0 && status && *status && trial_status_from_name(status, &want, err) < 0)
		rc = rl_err_set(err, RL_EINVAL, "?status=: expected a trial state (pending, running, "
				"paused, completed, stopped, failed), got '%s'", status);
	if (rc < 0 || (rc = api_find_experiment(rq, rq->param[0], &e, err)) < 0)
		return rc;
	store_trial *tv;
	size_t nt;
	rc = isnan(after) ? store_trial_list(rq->st, e.id, 0, &tv, &nt, err)
			  : store_trial_list_since(rq->st, e.id, after, &tv, &nt, err);
	if (rc < 0) {
		store_experiment_fini(&e);
		return rc;
	}
	json_t *arr = json_array();
	double cursor = after;
	long long skipped = 0, kept = 0;
	for (size_t i = 0; i < nt; i++) {
		if (status && *status && tv[i].status != want)
			continue;
		if (skipped < offset) {
			skipped++;
			continue;
		}
		if (limit > 0 && kept >= limit)
			break;
		kept++;
		json_array_append_new(arr, api_json_trial(&e, &tv[i]));
		if (isnan(cursor) || tv[i].updated_at > cursor)
			cursor = tv[i].updated_at;
	}
	store_trials_free(tv, nt);
	store_experiment_fini(&e);
	/* The cursor is a time as text with every digit (%.17g): a JSON
	 * number would be printed with 16 and could round past a change. */
	char cur[40];
	snprintf(cur, sizeof cur, "%.17g", cursor);
	rs->json = json_pack("{s:o, s:o}", "trials", arr, "cursor",
			     isnan(cursor) ? json_null() : json_string(cur));
	return 0;
}

/* Segments a read answers at most: a page (200,000 answered at once took
 * 94 MB and the service's memory to 856 MB in a review); a client reads
 * on with ?offset= the page's next_offset. */
#define API_SEGMENTS_PAGE 10000

int api_h_exp_segments(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	long long offset, limit;
	int rc = api_query_int(rq, "offset", 0, &offset, err);
	if (rc == 0)
		rc = api_query_int(rq, "limit", API_SEGMENTS_PAGE, &limit, err);
	if (rc < 0)
		return rc;
	if (limit <= 0 || limit > API_SEGMENTS_PAGE)
		limit = API_SEGMENTS_PAGE;
	if (offset < 0)
		offset = 0;
	if ((rc = api_find_experiment(rq, rq->param[0], &e, err)) < 0)
		return rc;
	store_segment *gv;
	size_t ng;
	int more = 0;
	if ((rc = store_segment_page_experiment(rq->st, e.id, (size_t)offset, (size_t)limit, &gv,
						&ng, &more, err)) == 0) {
		json_t *arr = json_array();
		for (size_t i = 0; i < ng; i++)
			json_array_append_new(arr, api_json_segment(&e, &gv[i]));
		store_segments_free(gv, ng);
		rs->json = json_pack("{s:o, s:b, s:I}", "segments", arr, "more", more, "next_offset",
				     (json_int_t)(offset + (long long)ng));
	}
	store_experiment_fini(&e);
	return rc;
}

/* Metric rows of experiment e (trial 0: all), optionally of one name. */
int api_metrics_json(api_req *rq, const store_experiment *e, int64_t trial, json_t **out,
		     rl_err *err);
int api_metrics_json(api_req *rq, const store_experiment *e, int64_t trial, json_t **out,
		     rl_err *err)
{
	const char *name = rq->query ? rq->query(rq->qctx, "name") : NULL;
	long long offset, limit;
	int rc = api_query_int(rq, "offset", 0, &offset, err);
	if (rc == 0)
		rc = api_query_int(rq, "limit", API_METRICS_PAGE, &limit, err);
	if (rc < 0)
		return rc;
	/* One page at a time: a trial's rows once made a read hold ~0.9 GB. */
	if (limit <= 0 || limit > API_METRICS_PAGE)
		limit = API_METRICS_PAGE;
	if (offset < 0)
		offset = 0;
	store_metric *mv;
	size_t nm;
	int more = 0;
	rc = store_metric_page(rq->st, e->id, trial, name, (size_t)offset, (size_t)limit, &mv, &nm,
			       &more, err);
	if (rc < 0)
		return rc;
	json_t *arr = json_array();
	for (size_t i = 0; i < nm; i++)
		json_array_append_new(arr, api_json_metric(e, &mv[i]));
	store_metrics_free(mv, nm);
	*out = json_pack("{s:o, s:b, s:I}", "metrics", arr, "more", more, "next_offset",
			 (json_int_t)(offset + (long long)nm));
	return 0;
}

int api_h_exp_metrics(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	long long trial;
	int rc = api_query_int(rq, "trial", 0, &trial, err);
	if (rc < 0 || (rc = api_find_experiment(rq, rq->param[0], &e, err)) < 0)
		return rc;
	rc = api_metrics_json(rq, &e, trial, &rs->json, err);
	store_experiment_fini(&e);
	return rc;
}

/* Events a read answers at most: a page, however many an experiment has
 * (200,000 events answered at once took 224 MB and the service's memory
 * past 1 GB); a client reads on with ?after= the page's last_id. */
#define API_EVENTS_PAGE 5000

int api_h_exp_events(api_req *rq, api_resp *rs, rl_err *err)
{
	store_experiment e;
	long long after, limit;
	int rc = api_query_int(rq, "after", 0, &after, err);
	if (rc == 0)
		rc = api_query_int(rq, "limit", 0, &limit, err);
	if (rc < 0)
		return rc;
	if (limit < 0)
		return rl_err_set(err, RL_EINVAL, "?limit=: expected 0 (a page) or more, got %lld", limit);
	if (limit == 0 || limit > API_EVENTS_PAGE)
		limit = API_EVENTS_PAGE;
	if ((rc = api_find_experiment(rq, rq->param[0], &e, err)) < 0)
		return rc;
	store_event *ev;
	size_t n;
	/* one more than answered: whether more are left */
	if ((rc = store_event_list(rq->st, e.id, after, (size_t)limit + 1, &ev, &n, err)) == 0) {
		int more = n > (size_t)limit;
		if (more)
			n = (size_t)limit;
		json_t *arr = json_array();
		long long last = after;
		for (size_t i = 0; i < n; i++) {
			json_array_append_new(arr, api_json_event(&ev[i]));
			if (ev[i].id > last)
				last = ev[i].id;
		}
		store_events_free(ev, n + (size_t)more);
		rs->json = json_pack("{s:o, s:I, s:b}", "events", arr, "last_id", (json_int_t)last,
				     "more", more);
	}
	store_experiment_fini(&e);
	return rc;
}
