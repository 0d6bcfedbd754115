/*
 * retention.c - the config's retention: ended experiments older than its
 * age (since they ended), or beyond the latest `keep` of their owner, are
 * exported, read back, then removed with their rows and their folder
 * (live_delete, which gives the file's pages back: store_experiment_delete).
 * Never a running experiment: only ended rows are candidates, and
 * live_delete refuses one that runs or whose segments are still stopping.
 * Nothing is removed without its export: written beside its name, synced,
 * renamed, read back and counted; any failure leaves the experiment and is
 * logged.  Runs on the loop (a timer in serve.c), at most RETAIN_PER_PASS
 * experiments a pass, so a long history is pruned over several passes
 * without holding the loop.
 *
 * serve_prune is the same rule on demand (relish prune): through a running
 * service (POST /api/v1/prune, on its loop, with its driver), or, with no
 * service, over a database this process holds as its driver (d NULL: the
 * rows go by store_experiment_delete and the folder by its path).
 *
 * The export is `relish export --format json --what trials` of the one
 * experiment (a JSON array of trial objects, each naming its experiment),
 * so relish's readers and jq read it back: ARCHIVE/OWNER/ID-NAME.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/encode.h"
#include "common/fsutil.h"
#include "serve/serve.h"

#define RETAIN_PER_PASS 100

typedef struct cand {
	int64_t id;
	int64_t uid;
	double finished;
} cand;

/* By owner, then the latest ended first. */
static int cand_cmp(const void *a, const void *b)
{
	const cand *x = a, *y = b;
	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	if (x->finished != y->finished)
		return x->finished > y->finished ? -1 : 1;
	return x->id > y->id ? -1 : x->id < y->id;
}

/* A folder of the archive, made 0700 or already there: ours and writable
 * by nobody else, or refused.  The service writes archives as root; a
 * folder another user owns or may write (an archive: under /tmp, made by
 * that user first) would let them swap ARCHIVE/OWNER for a link between
 * this check and the write, and root would write wherever it points. */
static int mkdir_one(const char *path, rl_err *err)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", path);
	struct stat sb;
	if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return rl_err_set(err, RL_EIO, "%s is not a folder", path);
	if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH)))
		return rl_err_set(err, RL_EIO,
				  "%s belongs to uid %u or others may write it; an archive "
				  "folder must be its writer's (uid %u) and no one else's to write",
				  path, (unsigned)sb.st_uid, (unsigned)geteuid());
	return 0;
}

/* The front's fields of trial id into j (relish export's, cmd_export.c). */
static void front_fields(json_t *j, const json_t *front, int64_t id)
{
	const json_t *fr = NULL, *t;
	size_t i;
	json_array_foreach(json_object_get(front, "trials"), i, t)
		if (json_integer_value(json_object_get(t, "trial_id")) == id)
			fr = t;
	json_object_set(j, "values", fr ? json_object_get(fr, "values") : json_null());
	json_object_set(j, "violation", fr ? json_object_get(fr, "violation") : json_null());
	json_object_set(j, "feasible", fr ? json_object_get(fr, "feasible") : json_null());
	json_object_set_new(j, "front", json_boolean(fr && json_is_true(json_object_get(fr, "front"))));
}

/* Export e's trials to ARCHIVE/OWNER/ID-NAME.json, read it back; *out
 * gets the path, *n_out the trials. */
static int export_one(store *st, const store_experiment *e, const char *archive, char *out,
		      size_t n, size_t *n_out, rl_err *err)
{
	char dir[PATH_MAX];
	/* names from the database, made paths: one component each, never
	 * '..' (an owner "../../etc" wrote outside the archive) */
	const char *parts[] = {e->owner ? e->owner : "unknown", e->name};
	for (size_t i = 0; i < 2; i++)
		if (!parts[i] || !parts[i][0] || strchr(parts[i], '/') || !strcmp(parts[i], ".") ||
		    !strcmp(parts[i], ".."))
			return rl_err_set(err, RL_EINVAL, "experiment %lld: '%s' cannot name a file "
					  "in %s", (long long)e->id, parts[i] ? parts[i] : "", archive);
	int rc = mkdir_one(archive, err);
	if (rc < 0)
		return rc;
	if (snprintf(dir, sizeof dir, "%s/%s", archive, e->owner ? e->owner : "unknown") >=
	    (int)sizeof dir)
		return rl_err_set(err, RL_EINVAL, "%s: path too long", archive);
	if ((rc = mkdir_one(dir, err)) < 0)
		return rc;
	if (snprintf(out, n, "%s/%lld-%s.json", dir, (long long)e->id, e->name) >= (int)n)
		return rl_err_set(err, RL_EINVAL, "%s: path too long", dir);
	store_trial *tv = NULL;
	size_t nt = 0;
	if ((rc = store_trial_list(st, e->id, 0, &tv, &nt, err)) < 0)
		return rc;
	/* Several objectives or constraints: each trial's values, violation,
	 * feasibility and place on the front, as relish export writes them. */
	json_t *front = NULL;
	rl_err e2 = {0};
	if (api_front_json(st, e, &front, &e2) < 0 || !api_front_is_multi(front)) {
		json_decref(front);
		front = NULL;
	}
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < nt; i++) {
		json_t *j = api_json_trial(e, &tv[i]);
		if (j && front)
			front_fields(j, front, tv[i].id);
		if (json_array_append_new(arr, j) < 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	json_decref(front);
	store_trials_free(tv, nt);
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof tmp, "%s.part", out);
	char *text = arr ? json_dumps(arr, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) : NULL;
	json_decref(arr);
	if (!text)
		return rl_err_set(err, RL_ENOMEM, "exporting experiment %lld", (long long)e->id);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	size_t len = strlen(text);
	if (fd < 0)
		rc = rl_err_sys(err, RL_EIO, errno, "writing %s", tmp);
	else if (write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 || fsync(fd) != 0)
		rc = rl_err_sys(err, RL_EIO, errno, "writing %s", tmp);
	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = rl_err_sys(err, RL_EIO, errno, "writing %s", tmp);
	free(text);
	if (rc == 0 && rename(tmp, out) != 0)
		rc = rl_err_sys(err, RL_EIO, errno, "naming %s", out);
	if (rc < 0) {
		unlink(tmp);
		return rc;
	}
	/* Read back: the file holds every trial. */
	json_error_t je;
	json_t *back = json_load_file(out, 0, &je);
	size_t got = json_is_array(back) ? json_array_size(back) : (size_t)-1;
	json_decref(back);
	if (got != nt)
		return rl_err_set(err, RL_EIO, "%s does not read back (%s)", out,
				  back ? "another number of trials" : je.text);
	*n_out = nt;
	return 0;
}

/* The folder of e's checkpoints and logs: RUNS/NAME.CREATED_MS when runs
 * is given (a service's state), else where its segments' logs are
 * (DIR/NAME.CREATED_MS/trial-K/seg-S.log, checked to be that experiment's:
 * relish run's); "" when none is known. */
int serve_experiment_folder(store *st, const store_experiment *e, const char *runs, char *out,
			    size_t n, rl_err *err)
{
	out[0] = '\0';
	char want[300];
	snprintf(want, sizeof want, "%s.%lld", e->name, (long long)llround(e->created_at * 1000));
	if (runs && runs[0]) {
		if (snprintf(out, n, "%s/%s", runs, want) >= (int)n)
			return rl_err_set(err, RL_EINVAL, "%s: path too long", runs);
		return 0;
	}
	store_segment *v = NULL;
	size_t nv = 0;
	int rc = store_segment_list_experiment(st, e->id, &v, &nv, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nv && !out[0]; i++) {
		if (!v[i].log_path)
			continue;
		char buf[PATH_MAX];
		snprintf(buf, sizeof buf, "%s", v[i].log_path);
		char *trial = dirname(buf); /* .../NAME.MS/trial-K */
		char tcopy[PATH_MAX];
		snprintf(tcopy, sizeof tcopy, "%s", trial);
		char *exp = dirname(tcopy);
		char ecopy[PATH_MAX];
		snprintf(ecopy, sizeof ecopy, "%s", exp);
		if (!strcmp(basename(ecopy), want))
			snprintf(out, n, "%s", exp);
	}
	store_segments_free(v, nv);
	return 0;
}

/* Without a driver: e's rows, then its folder.  The caller holds the
 * database as its driver, so nothing runs e meanwhile; a row still
 * "running" (its relish run was killed) is not ended and never comes
 * here. */
static int delete_offline(store *st, const store_experiment *e, const char *runs, rl_err *err)
{
	char dir[PATH_MAX];
	int rc = serve_experiment_folder(st, e, runs, dir, sizeof dir, err);
	if (rc == 0)
		rc = store_experiment_delete(st, e->id, err);
	if (rc == 0 && dir[0] && rl_remove_tree(dir) < 0 && errno != ENOENT)
		serve_log("warn", "serve.prune", "experiment=%s id=%lld msg=\"removed, but not all "
			  "of its folder %s (%s)\"", e->name, (long long)e->id, dir, strerror(errno));
	return rc;
}

int serve_prune(store *st, live *d, const serve_prune_opts *o, double now, serve_prune_result *res,
		rl_err *err)
{
	*res = (serve_prune_result){.items = json_array()};
	if (!res->items)
		return rl_err_set(err, RL_ENOMEM, "prune");
	if (!(o->age_s > 0) && o->keep <= 0)
		return rl_err_set(err, RL_EINVAL, "which experiments? an age, a keep count or both: "
				  "without either everything is kept");
	const char *event = o->event ? o->event : "serve.prune";
	/* Every ended experiment, briefly (id, owner, end), page by page. */
	cand *cv = NULL;
	size_t nc = 0, cap = 0;
	store_exp_filter f = STORE_EXP_FILTER_ALL;
	f.brief = 1;
	f.limit = 1000;
	int rc = 0;
	for (;;) {
		store_experiment *v;
		size_t n;
		if ((rc = store_experiment_page(st, &f, &v, &n, err)) < 0)
			break;
		for (size_t i = 0; i < n; i++) {
			if (v[i].status == EXP_RUNNING || isnan(v[i].finished_at))
				continue;
			if (nc == cap) {
				size_t nw = cap ? 2 * cap : 256;
				cand *g = realloc(cv, nw * sizeof *g);
				if (!g) {
					rc = rl_err_set(err, RL_ENOMEM, "prune");
					break;
				}
				cv = g;
				cap = nw;
			}
			cv[nc++] = (cand){v[i].id, v[i].owner_uid, v[i].finished_at};
		}
		if (n)
			f.after = v[n - 1].id;
		store_experiments_free(v, n);
		if (rc < 0 || n < f.limit)
			break;
	}
	if (rc < 0) {
		free(cv);
		return rc;
	}
	qsort(cv, nc, sizeof *cv, cand_cmp);
	size_t rank = 0, max = o->max ? o->max : (size_t)-1;
	for (size_t i = 0; i < nc; i++) {
		rank = i && cv[i].uid == cv[i - 1].uid ? rank + 1 : 0;
		int old = o->age_s > 0 && cv[i].finished < now - o->age_s;
		int beyond = o->keep > 0 && rank >= (size_t)o->keep;
		if (!old && !beyond)
			continue;
		if (res->removed + res->failed + res->would >= max) {
			res->more = 1;
			break;
		}
		const char *why = old ? "age" : "keep";
		store_experiment e;
		rl_err e1;
		rl_err_clear(&e1);
		char path[PATH_MAX + 80];
		path[0] = '\0';
		size_t nt = 0;
		int r1 = store_experiment_get(st, cv[i].id, &e, &e1);
		if (r1 < 0) {
			res->failed++;
			serve_log("error", event, "id=%lld msg=\"%s\"", (long long)cv[i].id, e1.msg);
			json_array_append_new(res->items, json_pack("{s:I, s:s, s:s}", "id",
					      (json_int_t)cv[i].id, "why", why, "error", e1.msg));
			continue;
		}
		json_t *item = json_pack("{s:I, s:s, s:s?, s:s, s:f}", "id", (json_int_t)e.id,
					 "experiment", e.name, "owner", e.owner, "why", why,
					 "finished_at", e.finished_at);
		if (o->dry_run) {
			res->would++;
			json_object_set_new(item, "removed", json_false());
		} else {
			if ((r1 = export_one(st, &e, o->archive, path, sizeof path, &nt, &e1)) == 0)
				r1 = d ? live_delete(d, e.id, o->who ? o->who : "prune", &e1)
				       : delete_offline(st, &e, o->runs, &e1);
			if (r1 < 0) {
				res->failed++;
				serve_log("error", event, "experiment=%s id=%lld msg=\"%s; it stays\"",
					  e.name, (long long)e.id, e1.msg);
				json_object_set_new(item, "removed", json_false());
				json_object_set_new(item, "error", json_string(e1.msg));
			} else {
				res->removed++;
				serve_log("info", event, "experiment=%s id=%lld owner=%s why=%s trials=%zu "
					  "archive=%s by=%s", e.name, (long long)e.id,
					  e.owner ? e.owner : "-", why, nt, path,
					  o->who ? o->who : "-");
				json_object_set_new(item, "removed", json_true());
				json_object_set_new(item, "trials", json_integer((json_int_t)nt));
				json_object_set_new(item, "archive", json_string(path));
			}
		}
		json_array_append_new(res->items, item);
		store_experiment_fini(&e);
	}
	free(cv);
	if (res->removed || res->failed)
		serve_log(res->failed ? "warn" : "info", event, "removed=%zu failed=%zu more=%d",
			  res->removed, res->failed, res->more);
	return 0;
}

void serve_prune_result_fini(serve_prune_result *res)
{
	json_decref(res->items);
	res->items = NULL;
}

int serve_retention_pass(live *d, const serve_retention *r, const char *state, double now,
			 rl_err *err)
{
	if (!r->enabled)
		return 0;
	char archive[PATH_MAX];
	snprintf(archive, sizeof archive, "%s", r->archive ? r->archive : "");
	if (!archive[0])
		snprintf(archive, sizeof archive, "%s/archive", state);
	serve_prune_opts o = {.age_s = r->age_s, .keep = r->keep, .archive = archive,
			      .max = RETAIN_PER_PASS, .who = "retention",
			      .event = "serve.retention"};
	serve_prune_result res;
	int rc = serve_prune(live_store(d), d, &o, now, &res, err);
	serve_prune_result_fini(&res);
	return rc;
}
