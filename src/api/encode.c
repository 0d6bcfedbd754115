/*
 * encode.c - the JSON form of relish's resources, both ways (encode.h).
 *
 * Each encoder is the only place its resource's keys are spelled; the CLI's
 * --json output, `relish export --format json` and the HTTP API all call
 * it.  The decoders read exactly those keys back: a CLI talking to a
 * server prints its tables from what they return, through the same table
 * code as for a database file.  test_api_encode checks the round trip.
 */
#include "api/encode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/logtext.h"

/* Up to this many experiments are summarised one by one. */
#define API_SUMMARISE_FEW 8

json_t *api_json_real(double v)
{
	if (isnan(v) || isinf(v))
		return json_null();
	/* Whole numbers (resources, times, MiB) print as integers: "27", not "27.0". */
	if (v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return json_real(v);
}

json_t *api_json_str(const char *s)
{
	if (!s)
		return json_null();
	json_t *j = json_string(s);
	if (!j) {
		/* not UTF-8: shown with its bytes outside ASCII as \xHH, never
		 * dropped (a NULL value would fail the whole answer) */
		size_t n = strlen(s) * 4 + 1;
		char *q = malloc(n);
		if (q)
			j = json_string(rl_log_text(s, q, n));
		free(q);
	}
	return j;
}

json_t *api_json_params(const char *params_json)
{
	if (!params_json)
		return json_object();
	json_error_t je;
	json_t *j = json_loads(params_json, JSON_DECODE_ANY, &je);
	return j ? j : json_string(params_json);
}

json_t *api_json_int_or_null(long long v, int known)
{
	return known ? json_integer(v) : json_null();
}

char *api_json_text(const json_t *j, int compact)
{
	/* 16 significant digits: 0.1 prints as 0.1 (17 would print
	 * 0.10000000000000001) and values that came from decimal text read
	 * back exactly. */
	return json_dumps(j, (compact ? JSON_COMPACT : JSON_INDENT(2)) | JSON_REAL_PRECISION(16));
}

/* ---- experiments ---- */

void api_exp_summary_fini(api_exp_summary *sum)
{
	if (!sum)
		return;
	store_trial_fini(&sum->best);
	for (size_t i = 0; i < sum->n_wait; i++)
		free(sum->wait[i].message);
	free(sum->wait);
	for (size_t i = 0; i < sum->n_note; i++) {
		free(sum->note[i].kind);
		free(sum->note[i].message);
	}
	free(sum->note);
	memset(sum, 0, sizeof *sum);
}

static int note_add(api_exp_summary *sum, int64_t trial_id, double at, const char *kind,
		    const char *msg)
{
	api_exp_note *v = realloc(sum->note, (sum->n_note + 1) * sizeof *v);
	if (v)
		sum->note = v;
	char *k = strdup(kind ? kind : ""), *m = strdup(msg ? msg : "");
	if (!v || !k || !m) {
		free(k);
		free(m);
		return RL_ENOMEM;
	}
	sum->note[sum->n_note++] = (api_exp_note){trial_id, at, k, m};
	return 0;
}

static int wait_add(api_exp_summary *sum, int64_t trial_id, double since, const char *msg)
{
	api_exp_wait *w = realloc(sum->wait, (sum->n_wait + 1) * sizeof *w);
	char *m = strdup(msg ? msg : "");
	if (!w || !m) {
		free(m);
		if (w)
			sum->wait = w;
		return RL_ENOMEM;
	}
	sum->wait = w;
	sum->wait[sum->n_wait++] = (api_exp_wait){trial_id, since, m};
	return 0;
}

/* sum from the stats of its experiment, the waits among w[0..n) and the
 * notes among nv[0..nn) that are its (both by experiment id). */
static int summary_fill(api_exp_summary *sum, const store_exp_stats *x, const store_event *w,
			size_t n, const store_event *nv, size_t nn, rl_err *err)
{
	memset(sum, 0, sizeof *sum);
	memcpy(sum->count, x->count, sizeof sum->count);
	for (int i = 0; i < TRIAL__COUNT; i++)
		sum->total += sum->count[i];
	if (x->best_id) {
		sum->has_best = 1;
		sum->best.id = x->best_id;
		sum->best.experiment_id = x->experiment_id;
		sum->best.idx = x->best_idx;
		sum->best.status = x->best_status;
		sum->best.objective = x->best_objective;
		sum->best.objective_resource = x->best_resource;
	}
	int64_t id = x->experiment_id;
	for (size_t j = 0; j < n; j++) /* (the waits are few: a scan each) */
		if (w[j].experiment_id == id && wait_add(sum, w[j].trial_id, w[j].at, w[j].message) < 0)
			goto nomem;
	/* the notes: the run of this experiment's, found by bisection */
	size_t lo = 0, hi = nn;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (nv[mid].experiment_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < nn && nv[lo].experiment_id == id; lo++)
		if (note_add(sum, nv[lo].trial_id, nv[lo].at, nv[lo].kind, nv[lo].message) < 0)
			goto nomem;
	return 0;
nomem:
	api_exp_summary_fini(sum);
	return rl_err_set(err, RL_ENOMEM, "status");
}

int api_exp_summarise(store *s, const store_experiment *e, api_exp_summary *sum, rl_err *err)
{
	api_exp_summary one;
	int rc = api_exp_summarise_all(s, e, 1, &one, err);
	if (rc == 0)
		*sum = one;
	return rc;
}

int api_exp_summarise_all(store *s, const store_experiment *v, size_t n, api_exp_summary *sums,
			  rl_err *err)
{
	memset(sums, 0, n * sizeof *sums);
	if (n == 0)
		return 0;
	/* A few experiments (those a status read finds changed): each one's
	 * rows by the indexes, ~20 us each; more: all of them at once, a
	 * statement per kind whatever their number (50 running: 0.5 ms
	 * instead of 2-3 ms one by one with the best trial's segments), over
	 * the range of their ids, so a page of a long history reads its own
	 * rows; ids far apart (a filtered page, say) one by one again. */
	int64_t id_lo = n ? v[0].id : 0, id_hi = id_lo;
	for (size_t i = 1; i < n; i++) {
		id_lo = v[i].id < id_lo ? v[i].id : id_lo;
		id_hi = v[i].id > id_hi ? v[i].id : id_hi;
	}
	if (n > 1 && (n <= API_SUMMARISE_FEW || (uint64_t)(id_hi - id_lo) > 4 * (uint64_t)n)) {
		int rc = 0;
		size_t i = 0;
		for (; rc == 0 && i < n; i++)
			rc = api_exp_summarise_all(s, &v[i], 1, &sums[i], err);
		for (size_t j = 0; rc < 0 && j < i; j++)
			api_exp_summary_fini(&sums[j]);
		return rc;
	}
	store_exp_stats *x = NULL;
	size_t nx = 0;
	int rc = store_trial_stats_range(s, id_lo, id_hi, &x, &nx, err);
	if (rc < 0)
		return rc;
	store_event *w = NULL;
	size_t nw = 0;
	int any_running = 0;
	for (size_t i = 0; i < n; i++)
		any_running |= v[i].status == EXP_RUNNING;
	if (any_running && (rc = store_event_waiting_range(s, id_lo, id_hi, &w, &nw, err)) < 0) {
		free(x);
		return rc;
	}
	store_event *nv = NULL;
	size_t nn = 0;
	if ((rc = store_event_notes_range(s, id_lo, id_hi, API_NOTES_PER_EXP, &nv, &nn, err)) < 0) {
		free(x);
		store_events_free(w, nw);
		return rc;
	}
	/* x and w are by experiment id; v is in any order. */
	size_t done = 0;
	for (size_t i = 0; rc == 0 && i < n; i++, done++) {
		size_t lo = 0, hi = nx;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (x[mid].experiment_id < v[i].id)
				lo = mid + 1;
			else
				hi = mid;
		}
		const store_exp_stats *xs = lo < nx && x[lo].experiment_id == v[i].id ? &x[lo] : NULL;
		store_exp_stats none = {.experiment_id = v[i].id};
		rc = summary_fill(&sums[i], xs ? xs : &none, w, v[i].status == EXP_RUNNING ? nw : 0,
				  nv, nn, err);
	}
	free(x);
	store_events_free(w, nw);
	store_events_free(nv, nn);
	if (rc < 0)
		for (size_t i = 0; i < done; i++)
			api_exp_summary_fini(&sums[i]);
	return rc;
}

/* What the spec plans: "planned", its trial budget (search.max_trials,
 * read from the stored spec's JSON form by the store, on brief reads
 * too): a progress bar is done of planned, not ended of created, which
 * read 5 of 7 as 71 % with 5 of 30 done (issue 30, item 11); null when
 * unknown. */
static void plan_add(json_t *j, const store_experiment *e)
{
	json_object_set_new(j, "planned", e->planned > 0 ? json_integer(e->planned) : json_null());
}

json_t *api_json_experiment(const store_experiment *e, const api_exp_summary *sum, double now)
{
	json_t *trials = json_object();
	json_object_set_new(trials, "total", json_integer(sum->total));
	for (int i = 0; i < TRIAL__COUNT; i++)
		json_object_set_new(trials, trial_status_name((trial_status)i),
				    json_integer(sum->count[i]));
	json_t *best = json_null();
	if (sum->has_best)
		best = json_pack("{s:I, s:o, s:o}", "trial_id", (json_int_t)sum->best.id, "value",
				 api_json_real(sum->best.objective), "resource",
				 api_json_real(sum->best.objective_resource));
	json_t *waiting = json_array();
	for (size_t i = 0; i < sum->n_wait; i++)
		json_array_append_new(waiting, json_pack("{s:I, s:o, s:s}", "trial_id",
							 (json_int_t)sum->wait[i].trial_id, "since",
							 api_json_real(sum->wait[i].since), "message",
							 sum->wait[i].message));
	json_t *notes = json_array();
	for (size_t i = 0; i < sum->n_note; i++)
		json_array_append_new(notes, json_pack("{s:s, s:o, s:o, s:s}", "kind",
						       sum->note[i].kind, "trial_id",
						       api_json_int_or_null(sum->note[i].trial_id,
									    sum->note[i].trial_id > 0),
						       "at", api_json_real(sum->note[i].at), "message",
						       sum->note[i].message));
	double elapsed = (isnan(e->finished_at) ? now : e->finished_at) - e->created_at;
	json_t *j = json_pack("{s:I, s:s, s:s, s:{s:s, s:s}, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			      "id", (json_int_t)e->id, "experiment", e->name, "status",
			      exp_status_name(e->status), "objective", "metric",
			      e->objective_metric ? e->objective_metric : "", "mode",
			      e->mode ? e->mode : "", "trials", trials, "best", best, "created_at",
			      api_json_real(e->created_at), "finished_at",
			      api_json_real(e->finished_at), "elapsed_s", api_json_real(elapsed),
			      "spec_path", api_json_str(e->spec_path), "waiting", waiting);
	if (!j)
		return NULL;
	json_object_set_new(j, "notes", notes);
	json_object_set_new(j, "paused", json_boolean(sum->paused));
	json_object_set_new(j, "owner", api_json_str(e->owner));
	json_object_set_new(j, "owner_uid", api_json_int_or_null(e->owner_uid, e->owner != NULL &&
								   e->owner_uid >= 0));
	plan_add(j, e);
	return j;
}

/* ---- trials ---- */

double api_trial_est_error(const store_trial *t)
{
	if (t->last_est_mib <= 0 || t->last_peak_mib <= 0)
		return NAN;
	return ((double)t->last_est_mib - (double)t->last_peak_mib) / (double)t->last_peak_mib;
}

json_t *api_json_trial(const store_experiment *e, const store_trial *t)
{
	const char *error = t->error ? t->error : t->last_error;
	json_t *j = json_pack("{s:I, s:s, s:i, s:s, s:o, s:o, s:o, s:o, s:i, s:i, s:o, s:f, s:f}",
			      "id", (json_int_t)t->id, "experiment", e->name, "index", t->idx,
			      "status", trial_status_name(t->status), "resource",
			      api_json_real(t->resource_done), "objective",
			      api_json_real(t->objective), "objective_resource",
			      api_json_real(t->objective_resource), "params",
			      api_json_params(t->params_json), "segments", t->n_segments, "oom",
			      t->n_oom, "error", api_json_str(error), "created_at", t->created_at,
			      "updated_at", t->updated_at);
	if (!j)
		return NULL;
	json_object_set_new(j, "experiment_id", json_integer(t->experiment_id));
	json_object_set_new(j, "last_oom", api_json_str(t->last_oom));
	json_object_set_new(j, "basis", api_json_str(t->last_basis));
	json_object_set_new(j, "est_mem_mib", api_json_int_or_null(t->last_est_mib, t->last_est_mib > 0));
	json_object_set_new(j, "peak_mem_mib",
			    api_json_int_or_null(t->last_peak_mib, t->last_peak_mib > 0));
	json_object_set_new(j, "est_error", api_json_real(api_trial_est_error(t)));
	json_object_set_new(j, "mean_util", api_json_real(t->last_util));
	return j;
}

json_t *api_json_best(const store_experiment *e, const store_trial *t)
{
	return json_pack("{s:s, s:I, s:i, s:s, s:o, s:{s:s, s:s, s:o}, s:o}", "experiment",
			 e->name, "trial_id", (json_int_t)t->id, "index", t->idx, "status",
			 trial_status_name(t->status), "params", api_json_params(t->params_json),
			 "objective", "metric", e->objective_metric ? e->objective_metric : "",
			 "mode", e->mode ? e->mode : "", "value", api_json_real(t->objective),
			 "resource", api_json_real(t->objective_resource));
}

/* ---- segments, metrics, events ---- */

json_t *api_json_segment(const store_experiment *e, const store_segment *g)
{
	json_t *j = json_pack(
		"{s:s, s:I, s:I, s:i, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "experiment",
		e->name, "segment_id", (json_int_t)g->id, "trial_id", (json_int_t)g->trial_id,
		"seq", g->seq, "resource_from", api_json_real(g->resource_from), "resource_to",
		api_json_real(g->resource_to), "status", seg_status_name(g->status), "exit_code",
		api_json_int_or_null(g->exit_code, g->exit_code >= 0), "signal",
		api_json_int_or_null(g->signal, g->signal > 0), "device", api_json_str(g->device),
		"mem_reserved_mib",
		api_json_int_or_null(g->mem_reserved_mib, g->mem_reserved_mib >= 0),
		"compute_share", api_json_real(g->compute_share), "basis", api_json_str(g->basis));
	if (!j)
		return NULL;
	json_object_set_new(j, "est_mem_mib", api_json_int_or_null(g->est_mem_mib, g->est_mem_mib >= 0));
	json_object_set_new(j, "peak_mem_mib",
			    api_json_int_or_null(g->peak_mem_mib, g->peak_mem_mib >= 0));
	json_object_set_new(j, "mean_util", api_json_real(g->mean_util));
	json_object_set_new(j, "pid", api_json_int_or_null(g->pid, g->pid > 0));
	json_object_set_new(j, "handle", api_json_str(g->handle));
	json_object_set_new(j, "started_at", api_json_real(g->started_at));
	json_object_set_new(j, "ended_at", api_json_real(g->ended_at));
	json_object_set_new(j, "log_path", api_json_str(g->log_path));
	json_object_set_new(j, "message", api_json_str(g->message));
	return j;
}

json_t *api_json_metric(const store_experiment *e, const store_metric *m)
{
	return json_pack("{s:s, s:I, s:o, s:o, s:s, s:o, s:o}", "experiment", e->name,
			 "trial_id", (json_int_t)m->trial_id, "segment_id",
			 api_json_int_or_null(m->segment_id, m->segment_id > 0), "resource",
			 api_json_real(m->resource), "name", m->name ? m->name : "", "value",
			 api_json_real(m->value), "at", api_json_real(m->at));
}

json_t *api_json_event(const store_event *ev)
{
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:s, s:o}", "id", (json_int_t)ev->id, "at",
			 api_json_real(ev->at), "experiment_id",
			 api_json_int_or_null(ev->experiment_id, ev->experiment_id > 0), "trial_id",
			 api_json_int_or_null(ev->trial_id, ev->trial_id > 0), "segment_id",
			 api_json_int_or_null(ev->segment_id, ev->segment_id > 0), "kind",
			 ev->kind ? ev->kind : "", "message", api_json_str(ev->message));
}

/* ---- decoders ---- */

typedef struct dec {
	const json_t *obj;
	const char *what;
	int oom;
	const char *bad; /* first key that was missing or of the wrong type */
} dec;

static const json_t *dec_get(dec *d, const char *key, int required)
{
	const json_t *v = json_object_get(d->obj, key);
	if (!v && required && !d->bad)
		d->bad = key;
	return v;
}

/* A number (NAN for null or absent). */
static double dec_real(dec *d, const char *key)
{
	const json_t *v = dec_get(d, key, 0);
	if (!v || json_is_null(v))
		return NAN;
	if (!json_is_number(v)) {
		if (!d->bad)
			d->bad = key;
		return NAN;
	}
	return json_number_value(v);
}

static long long dec_int(dec *d, const char *key, long long dflt)
{
	double v = dec_real(d, key);
	return isnan(v) ? dflt : (long long)v;
}

/* A malloc'd copy of a string (NULL for null or absent). */
static char *dec_str(dec *d, const char *key)
{
	const json_t *v = dec_get(d, key, 0);
	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v)) {
		if (!d->bad)
			d->bad = key;
		return NULL;
	}
	char *s = strdup(json_string_value(v));
	if (!s)
		d->oom = 1;
	return s;
}

static int dec_end(dec *d, rl_err *err)
{
	if (d->oom)
		return rl_err_set(err, RL_ENOMEM, "reading a %s", d->what);
	if (d->bad)
		return rl_err_set(err, RL_EPARSE, "the server's %s has no valid \"%s\"", d->what,
				  d->bad);
	return 0;
}

static int status_of(dec *d, const char *key, int (*from)(const char *, void *, rl_err *),
		     void *out, rl_err *err)
{
	const json_t *v = dec_get(d, key, 1);
	if (!json_is_string(v)) {
		if (!d->bad)
			d->bad = key;
		return 0;
	}
	return from(json_string_value(v), out, err);
}

static int exp_status_cb(const char *s, void *out, rl_err *err)
{
	return exp_status_from_name(s, out, err);
}

static int trial_status_cb(const char *s, void *out, rl_err *err)
{
	return trial_status_from_name(s, out, err);
}

static int seg_status_cb(const char *s, void *out, rl_err *err)
{
	return seg_status_from_name(s, out, err);
}

int api_experiment_from_json(const json_t *j, store_experiment *out, api_exp_summary *sum,
			     rl_err *err)
{
	if (!json_is_object(j))
		return rl_err_set(err, RL_EPARSE, "the server's experiment is not an object");
	dec d = {.obj = j, .what = "experiment"};
	store_experiment e = {0};
	dec_get(&d, "id", 1);
	e.id = dec_int(&d, "id", 0);
	e.name = dec_str(&d, "experiment");
	if (!e.name && !d.bad)
		d.bad = "experiment";
	e.spec_path = dec_str(&d, "spec_path");
	e.created_at = dec_real(&d, "created_at");
	e.finished_at = dec_real(&d, "finished_at");
	e.owner = dec_str(&d, "owner");
	e.owner_uid = dec_int(&d, "owner_uid", -1);
	e.planned = dec_int(&d, "planned", 0);
	const json_t *obj = json_object_get(j, "objective");
	dec od = {.obj = obj, .what = "experiment's objective"};
	e.objective_metric = dec_str(&od, "metric");
	e.mode = dec_str(&od, "mode");
	int rc = status_of(&d, "status", exp_status_cb, &e.status, err);
	if (rc == 0)
		rc = dec_end(&d, err);
	if (rc == 0)
		rc = dec_end(&od, err);
	api_exp_summary s;
	memset(&s, 0, sizeof s);
	if (rc == 0 && sum) {
		const json_t *tr = json_object_get(j, "trials");
		dec td = {.obj = tr, .what = "experiment's trials"};
		s.total = (int)dec_int(&td, "total", 0);
		for (int i = 0; i < TRIAL__COUNT; i++)
			s.count[i] = (int)dec_int(&td, trial_status_name((trial_status)i), 0);
		const json_t *best = json_object_get(j, "best");
		if (json_is_object(best)) {
			dec bd = {.obj = best, .what = "experiment's best"};
			s.has_best = 1;
			s.best.id = dec_int(&bd, "trial_id", 0);
			s.best.objective = dec_real(&bd, "value");
			s.best.objective_resource = dec_real(&bd, "resource");
			rc = dec_end(&bd, err);
		}
		if (rc == 0)
			rc = dec_end(&td, err);
		/* (absent from a service older than the field: not paused) */
		s.paused = json_is_true(json_object_get(j, "paused"));
		size_t i;
		json_t *w;
		json_array_foreach(json_object_get(j, "waiting"), i, w)
		{
			if (rc < 0)
				break;
			dec wd = {.obj = w, .what = "experiment's waiting trial"};
			int64_t tid = dec_int(&wd, "trial_id", 0);
			double since = dec_real(&wd, "since");
			char *msg = dec_str(&wd, "message");
			if ((rc = dec_end(&wd, err)) == 0 && wait_add(&s, tid, since, msg) < 0)
				rc = rl_err_set(err, RL_ENOMEM, "experiment");
			free(msg);
		}
		json_array_foreach(json_object_get(j, "notes"), i, w)
		{
			if (rc < 0)
				break;
			dec nd = {.obj = w, .what = "experiment's note"};
			char *kind = dec_str(&nd, "kind");
			int64_t tid = dec_int(&nd, "trial_id", 0);
			double at = dec_real(&nd, "at");
			char *msg = dec_str(&nd, "message");
			if ((rc = dec_end(&nd, err)) == 0 && note_add(&s, tid, at, kind, msg) < 0)
				rc = rl_err_set(err, RL_ENOMEM, "experiment");
			free(kind);
			free(msg);
		}
	}
	if (rc < 0) {
		store_experiment_fini(&e);
		api_exp_summary_fini(&s);
		return rc;
	}
	*out = e;
	if (sum)
		*sum = s;
	return 0;
}

int api_trial_from_json(const json_t *j, store_trial *out, rl_err *err)
{
	if (!json_is_object(j))
		return rl_err_set(err, RL_EPARSE, "the server's trial is not an object");
	dec d = {.obj = j, .what = "trial"};
	store_trial t = {0};
	dec_get(&d, "id", 1);
	t.id = dec_int(&d, "id", 0);
	t.experiment_id = dec_int(&d, "experiment_id", 0);
	t.idx = (int)dec_int(&d, "index", 0);
	t.resource_done = dec_real(&d, "resource");
	t.objective = dec_real(&d, "objective");
	t.objective_resource = dec_real(&d, "objective_resource");
	t.n_segments = (int)dec_int(&d, "segments", 0);
	t.n_oom = (int)dec_int(&d, "oom", 0);
	t.error = dec_str(&d, "error");
	t.created_at = dec_real(&d, "created_at");
	t.updated_at = dec_real(&d, "updated_at");
	t.last_oom = dec_str(&d, "last_oom");
	t.last_basis = dec_str(&d, "basis");
	t.last_est_mib = dec_int(&d, "est_mem_mib", -1);
	t.last_peak_mib = dec_int(&d, "peak_mem_mib", -1);
	t.last_util = dec_real(&d, "mean_util");
	const json_t *p = json_object_get(j, "params");
	if (p && !json_is_null(p)) {
		t.params_json = json_is_string(p) ? strdup(json_string_value(p))
						  : json_dumps(p, JSON_COMPACT | JSON_REAL_PRECISION(17));
		if (!t.params_json)
			d.oom = 1;
	}
	int rc = status_of(&d, "status", trial_status_cb, &t.status, err);
	if (rc == 0)
		rc = dec_end(&d, err);
	if (rc < 0) {
		store_trial_fini(&t);
		return rc;
	}
	*out = t;
	return 0;
}

int api_segment_from_json(const json_t *j, store_segment *out, rl_err *err)
{
	if (!json_is_object(j))
		return rl_err_set(err, RL_EPARSE, "the server's segment is not an object");
	dec d = {.obj = j, .what = "segment"};
	store_segment g = {0};
	dec_get(&d, "segment_id", 1);
	g.id = dec_int(&d, "segment_id", 0);
	g.trial_id = dec_int(&d, "trial_id", 0);
	g.seq = (int)dec_int(&d, "seq", 0);
	g.resource_from = dec_real(&d, "resource_from");
	g.resource_to = dec_real(&d, "resource_to");
	g.exit_code = (int)dec_int(&d, "exit_code", -1);
	g.signal = (int)dec_int(&d, "signal", 0);
	g.device = dec_str(&d, "device");
	g.mem_reserved_mib = dec_int(&d, "mem_reserved_mib", -1);
	g.compute_share = dec_real(&d, "compute_share");
	g.basis = dec_str(&d, "basis");
	g.est_mem_mib = dec_int(&d, "est_mem_mib", -1);
	g.peak_mem_mib = dec_int(&d, "peak_mem_mib", -1);
	g.mean_util = dec_real(&d, "mean_util");
	g.pid = (pid_t)dec_int(&d, "pid", 0);
	g.handle = dec_str(&d, "handle");
	g.started_at = dec_real(&d, "started_at");
	g.ended_at = dec_real(&d, "ended_at");
	g.log_path = dec_str(&d, "log_path");
	g.message = dec_str(&d, "message");
	int rc = status_of(&d, "status", seg_status_cb, &g.status, err);
	if (rc == 0)
		rc = dec_end(&d, err);
	if (rc < 0) {
		store_segment_fini(&g);
		return rc;
	}
	*out = g;
	return 0;
}

int api_metric_from_json(const json_t *j, store_metric *out, rl_err *err)
{
	if (!json_is_object(j))
		return rl_err_set(err, RL_EPARSE, "the server's metric is not an object");
	dec d = {.obj = j, .what = "metric"};
	store_metric m = {0};
	dec_get(&d, "trial_id", 1);
	dec_get(&d, "name", 1);
	m.trial_id = dec_int(&d, "trial_id", 0);
	m.segment_id = dec_int(&d, "segment_id", 0);
	m.resource = dec_real(&d, "resource");
	m.name = dec_str(&d, "name");
	m.value = dec_real(&d, "value");
	m.at = dec_real(&d, "at");
	int rc = dec_end(&d, err);
	if (rc < 0) {
		free(m.name);
		return rc;
	}
	*out = m;
	return 0;
}

int api_best_from_json(const json_t *j, store_trial *out, rl_err *err)
{
	if (!json_is_object(j))
		return rl_err_set(err, RL_EPARSE, "the server's best trial is not an object");
	dec d = {.obj = j, .what = "best trial"};
	store_trial t = {0};
	dec_get(&d, "trial_id", 1);
	t.id = dec_int(&d, "trial_id", 0);
	t.idx = (int)dec_int(&d, "index", 0);
	t.objective_resource = dec_real(&d, "resource");
	const json_t *o = json_object_get(j, "objective");
	dec od = {.obj = o, .what = "best trial's objective"};
	t.objective = dec_real(&od, "value");
	const json_t *p = json_object_get(j, "params");
	if (p && !json_is_null(p) && !(t.params_json = json_dumps(p, JSON_COMPACT |
								  JSON_REAL_PRECISION(17))))
		d.oom = 1;
	int rc = status_of(&d, "status", trial_status_cb, &t.status, err);
	if (rc == 0)
		rc = dec_end(&d, err);
	if (rc == 0)
		rc = dec_end(&od, err);
	if (rc < 0) {
		store_trial_fini(&t);
		return rc;
	}
	*out = t;
	return 0;
}
