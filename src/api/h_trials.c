/*
 * h_trials.c - the trial and segment routes: one trial, its metric rows,
 * its segments, and a segment's log (text, with an offset for following
 * and a tail for a quick look).
 */
#include "api/route.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/encode.h"

#define LOG_MAX_CHUNK (1u << 20) /* bytes of log one response carries at most */

int api_metrics_json(api_req *rq, const store_experiment *e, int64_t trial, json_t **out,
		     rl_err *err);

static int parse_id(const char *s, const char *what, int64_t *out, rl_err *err)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return rl_err_set(err, RL_ENOTFOUND, "no %s '%s' (ids are positive integers)", what, s);
	*out = v;
	return 0;
}

/* Trial {id} and its experiment, with the read rule applied: under
 * read: own another user's trial is "not found" in the store's own words
 * for a missing one, as api_find_experiment answers for experiments (a
 * 403 naming the owner told every user which ids ran, whose, and when). */
static int find_trial(api_req *rq, const char *ref, store_trial *t, store_experiment *e,
		      rl_err *err)
{
	int64_t id = 0;
	int rc = parse_id(ref, "trial", &id, err);
	if (rc < 0 || (rc = store_trial_get(rq->st, id, t, err)) < 0)
		return rc;
	if ((rc = store_experiment_get(rq->st, t->experiment_id, e, err)) == 0 &&
	    (rc = api_may_read(rq, e, err)) < 0) {
		store_experiment_fini(e);
		if (rc == RL_EPERM)
			rc = rl_err_set(err, RL_ENOTFOUND, "no trial with id %lld", (long long)id);
	}
	if (rc < 0)
		store_trial_fini(t);
	return rc;
}

int api_h_trial(api_req *rq, api_resp *rs, rl_err *err)
{
	store_trial t;
	store_experiment e;
	int rc = find_trial(rq, rq->param[0], &t, &e, err);
	if (rc < 0)
		return rc;
	/* store_trial_get has no segment summaries: the list row has them. */
	store_trial *tv;
	size_t nt;
	if ((rc = store_trial_list_since(rq->st, e.id, t.updated_at, &tv, &nt, err)) == 0) {
		for (size_t i = 0; i < nt; i++)
			if (tv[i].id == t.id)
				rs->json = api_json_trial(&e, &tv[i]);
		store_trials_free(tv, nt);
	}
	if (rc == 0 && !rs->json)
		rs->json = api_json_trial(&e, &t);
	store_trial_fini(&t);
	store_experiment_fini(&e);
	return rc;
}

int api_h_trial_metrics(api_req *rq, api_resp *rs, rl_err *err)
{
	store_trial t;
	store_experiment e;
	int rc = find_trial(rq, rq->param[0], &t, &e, err);
	if (rc < 0)
		return rc;
	rc = api_metrics_json(rq, &e, t.id, &rs->json, err);
	store_trial_fini(&t);
	store_experiment_fini(&e);
	return rc;
}

int api_h_trial_segments(api_req *rq, api_resp *rs, rl_err *err)
{
	store_trial t;
	store_experiment e;
	int rc = find_trial(rq, rq->param[0], &t, &e, err);
	if (rc < 0)
		return rc;
	store_segment *gv;
	size_t ng;
	if ((rc = store_segment_list(rq->st, t.id, &gv, &ng, err)) == 0) {
		json_t *arr = json_array();
		for (size_t i = 0; i < ng; i++)
			json_array_append_new(arr, api_json_segment(&e, &gv[i]));
		store_segments_free(gv, ng);
		rs->json = json_pack("{s:o}", "segments", arr);
	}
	store_trial_fini(&t);
	store_experiment_fini(&e);
	return rc;
}

/*
 * The log as text/plain.  ?offset=N: from byte N (following: ask again
 * from the offset the last answer ended at); ?tail=N: the last N bytes.
 * Headers: Relish-Log-Offset (first byte sent), Relish-Log-Size (the
 * file's size now), Relish-Segment-Status (running until it ended).
 */
int api_h_segment_log(api_req *rq, api_resp *rs, rl_err *err)
{
	int64_t id = 0;
	long long offset, tail;
	int rc = parse_id(rq->param[0], "segment", &id, err);
	if (rc == 0)
		rc = api_query_int(rq, "offset", 0, &offset, err);
	if (rc == 0)
		rc = api_query_int(rq, "tail", -1, &tail, err);
	if (rc < 0)
		return rc;
	store_segment g;
	if ((rc = store_segment_get(rq->st, id, &g, err)) < 0)
		return rc;
	store_trial t;
	store_experiment e;
	char ref[32];
	snprintf(ref, sizeof ref, "%lld", (long long)g.trial_id);
	if ((rc = find_trial(rq, ref, &t, &e, err)) < 0) {
		store_segment_fini(&g);
		if (rc == RL_ENOTFOUND) /* hidden: as a missing segment */
			rl_err_set(err, rc, "no segment with id %lld", (long long)id);
		return rc;
	}
	store_trial_fini(&t);
	store_experiment_fini(&e);
	size_t size = 0, start = 0, n = 0;
	char *buf = NULL;
	if (g.log_path) {
		int fd = open(g.log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
			size = (size_t)st.st_size;
			start = tail >= 0 ? (size > (size_t)tail ? size - (size_t)tail : 0)
					  : ((size_t)offset < size ? (size_t)offset : size);
			size_t want = size - start;
			if (want > LOG_MAX_CHUNK)
				want = LOG_MAX_CHUNK;
			buf = malloc(want + 1);
			if (!buf) {
				close(fd);
				store_segment_fini(&g);
				return rl_err_set(err, RL_ENOMEM, "log of segment %lld", (long long)id);
			}
			while (n < want) {
				ssize_t r = pread(fd, buf + n, want - n, (off_t)(start + n));
				if (r < 0 && errno == EINTR)
					continue;
				if (r <= 0)
					break;
				n += (size_t)r;
			}
		}
		if (fd >= 0)
			close(fd);
	}
	rs->text = buf ? buf : strdup("");
	rs->text_len = n;
	rs->content_type = "text/plain; charset=utf-8";
	api_resp_header(rs, "Relish-Log-Offset", "%zu", start);
	api_resp_header(rs, "Relish-Log-Size", "%zu", size);
	api_resp_header(rs, "Relish-Segment-Status", "%s", seg_status_name(g.status));
	store_segment_fini(&g);
	return rs->text ? 0 : rl_err_set(err, RL_ENOMEM, "log");
}
