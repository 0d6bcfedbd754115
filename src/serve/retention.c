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
 * The export is `relish export --format json --what trials` of the one
 * experiment (a JSON array of trial objects, each naming its experiment),
 * so relish's readers and jq read it back: ARCHIVE/OWNER/ID-NAME.json.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/encode.h"
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

static int mkdir_one(const char *path, rl_err *err)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", path);
	struct stat sb;
	if (lstat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		return rl_err_set(err, RL_EIO, "%s is not a folder", path);
	return 0;
}

/* Export e's trials to ARCHIVE/OWNER/ID-NAME.json, read it back; *out
 * gets the path, *n_out the trials. */
static int export_one(store *st, const store_experiment *e, const char *archive, char *out,
		      size_t n, size_t *n_out, rl_err *err)
{
	char dir[PATH_MAX];
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
	json_t *arr = json_array();
	for (size_t i = 0; arr && i < nt; i++)
		if (json_array_append_new(arr, api_json_trial(e, &tv[i])) < 0) {
			json_decref(arr);
			arr = NULL;
		}
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

int serve_retention_pass(live *d, const serve_retention *r, const char *state, double now,
			 rl_err *err)
{
	if (!r->enabled)
		return 0;
	store *st = live_store(d);
	char archive[PATH_MAX];
	snprintf(archive, sizeof archive, "%s", r->archive ? r->archive : "");
	if (!archive[0])
		snprintf(archive, sizeof archive, "%s/archive", state);
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
					rc = rl_err_set(err, RL_ENOMEM, "retention");
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
	size_t removed = 0, failed = 0, rank = 0;
	for (size_t i = 0; i < nc && removed + failed < RETAIN_PER_PASS; i++) {
		rank = i && cv[i].uid == cv[i - 1].uid ? rank + 1 : 0;
		int old = r->age_s > 0 && cv[i].finished < now - r->age_s;
		int beyond = r->keep > 0 && rank >= (size_t)r->keep;
		if (!old && !beyond)
			continue;
		store_experiment e;
		rl_err e1;
		rl_err_clear(&e1);
		char path[PATH_MAX + 80];
		size_t nt = 0;
		int r1 = store_experiment_get(st, cv[i].id, &e, &e1);
		if (r1 < 0) {
			failed++;
			serve_log("error", "serve.retention", "id=%lld msg=\"%s\"", (long long)cv[i].id,
				  e1.msg);
			continue;
		}
		if ((r1 = export_one(st, &e, archive, path, sizeof path, &nt, &e1)) == 0)
			r1 = live_delete(d, e.id, "retention", &e1);
		if (r1 < 0) {
			failed++;
			serve_log("error", "serve.retention",
				  "experiment=%s id=%lld msg=\"%s; it stays\"", e.name, (long long)e.id,
				  e1.msg);
		} else {
			removed++;
			serve_log("info", "serve.retention",
				  "experiment=%s id=%lld owner=%s why=%s trials=%zu archive=%s", e.name,
				  (long long)e.id, e.owner ? e.owner : "-", old ? "age" : "keep", nt, path);
		}
		store_experiment_fini(&e);
	}
	free(cv);
	if (removed || failed)
		serve_log(failed ? "warn" : "info", "serve.retention", "removed=%zu failed=%zu",
			  removed, failed);
	return 0;
}
