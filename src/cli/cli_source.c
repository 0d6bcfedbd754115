/*
 * cli_source.c - the read commands' rows from a database file or from a
 * relish service (cli_source.h).  The service path is GETs of the routes
 * of docs/api.md and the decoders of api/encode.h: nothing else.
 */
#include "cli/cli_source.h"

#include <math.h>

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli_common.h"
#include "cli/cli_server.h"

int cli_src_open(const cli_read_opts *o, cli_src *src, rl_err *err)
{
	memset(src, 0, sizeof *src);
	const char *addr, *from;
	if (!o->db && api_client_pick(o->server, &addr, &from))
		return api_client_new(addr, from, &src->api, err);
	return cli_open_read(o, &src->st, err);
}

void cli_src_close(cli_src *src)
{
	if (!src)
		return;
	store_close(src->st);
	api_client_free(src->api);
	json_decref(src->exps);
	memset(src, 0, sizeof *src);
}

int cli_src_begin(int argc, char **argv, const cli_read_spec *spec, cli_read_opts *o,
		  cli_src *src, store_experiment *e, rl_err *err)
{
	int rc = cli_read_args(argc, argv, spec, o, err);
	if (rc != 0)
		return rc;
	if ((rc = cli_src_open(o, src, err)) < 0)
		return rc;
	if (e && (rc = cli_src_pick(src, o->experiment, e, err)) < 0) {
		cli_src_close(src);
		return rc;
	}
	return 0;
}

/* GET path; *out the document, whose member key is returned (borrowed). */
static int get(cli_src *src, const char *path, json_t **out, rl_err *err)
{
	return api_client_json(src->api, "GET", path, NULL, out, err);
}

static json_t *get_list(cli_src *src, const char *path, const char *key, json_t **doc,
			rl_err *err)
{
	if (get(src, path, doc, err) < 0)
		return NULL;
	json_t *arr = json_object_get(*doc, key);
	if (!json_is_array(arr)) {
		rl_err_set(err, RL_EPARSE, "the server's answer to GET %s has no \"%s\" list", path,
			   key);
		json_decref(*doc);
		*doc = NULL;
		return NULL;
	}
	return arr;
}

/* GET path and every page after it (while the answer says "more", with
 * ?offset= its next_offset): the pages' key lists in one array, in *doc
 * (the first answer). */
static json_t *get_pages(cli_src *src, const char *path, const char *key, json_t **doc,
			 rl_err *err)
{
	json_t *arr = get_list(src, path, key, doc, err);
	while (arr && json_is_true(json_object_get(*doc, "more"))) {
		long long off = (long long)json_integer_value(json_object_get(*doc, "next_offset"));
		char next[256];
		snprintf(next, sizeof next, "%s%soffset=%lld", path, strchr(path, '?') ? "&" : "?", off);
		json_t *page = NULL;
		json_t *more = get_list(src, next, key, &page, err);
		if (!more || !json_array_size(more)) {
			json_decref(page);
			json_decref(*doc);
			*doc = NULL;
			if (!more)
				return NULL;
			rl_err_set(err, RL_EPARSE, "GET %s: \"more\" with an empty page", next);
			return NULL;
		}
		json_array_extend(arr, more);
		json_object_set(*doc, "more", json_object_get(page, "more"));
		json_object_set(*doc, "next_offset", json_object_get(page, "next_offset"));
		json_decref(page);
	}
	return arr;
}

/* The service's next page after a list answer, 0 at the end. */
static long long next_after(const json_t *doc)
{
	return json_integer_value(json_object_get(doc, "next_after"));
}

/* The experiment list, once per source (its summaries serve
 * cli_src_summary): every page, one after another, in one array. */
static json_t *exp_list(cli_src *src, rl_err *err)
{
	if (src->exps)
		return json_object_get(src->exps, "experiments");
	json_t *arr = get_list(src, "/api/v1/experiments", "experiments", &src->exps, err);
	for (long long after = arr ? next_after(src->exps) : 0; after > 0;) {
		char path[96];
		json_t *doc;
		snprintf(path, sizeof path, "/api/v1/experiments?after=%lld", after);
		json_t *more = get_list(src, path, "experiments", &doc, err);
		if (!more) {
			json_decref(src->exps);
			src->exps = NULL;
			return NULL;
		}
		json_array_extend(arr, more);
		after = next_after(doc);
		json_decref(doc);
	}
	return arr;
}

int cli_src_exp_page(cli_src *src, const store_exp_filter *f, store_experiment **v, size_t *n,
		     int64_t *next, rl_err *err)
{
	*next = 0;
	if (src->st) {
		int rc = store_experiment_page(src->st, f, v, n, err);
		if (rc == 0 && f->limit && *n == f->limit)
			*next = (*v)[*n - 1].id;
		return rc;
	}
	char path[640];
	int k = snprintf(path, sizeof path, "/api/v1/experiments?after=%lld",
			 (long long)f->after);
	if (f->limit)
		k += snprintf(path + k, sizeof path - (size_t)k, "&limit=%zu", f->limit);
	if (f->status >= 0)
		k += snprintf(path + k, sizeof path - (size_t)k, "&status=%s",
			      exp_status_name((exp_status)f->status));
	if (f->owner)
		k += snprintf(path + k, sizeof path - (size_t)k, "&user=%s", f->owner);
	if (!isnan(f->since))
		k += snprintf(path + k, sizeof path - (size_t)k, "&since=%.3f", f->since);
	if (k >= (int)sizeof path)
		return rl_err_set(err, RL_EINVAL, "the list's filters are too long");
	json_decref(src->exps);
	src->exps = NULL;
	json_t *arr = get_list(src, path, "experiments", &src->exps, err);
	if (!arr)
		return err->code;
	size_t cnt = json_array_size(arr), i = 0;
	store_experiment *out = calloc(cnt ? cnt : 1, sizeof *out);
	int rc = out ? 0 : rl_err_set(err, RL_ENOMEM, "experiments");
	for (; rc == 0 && i < cnt; i++)
		if ((rc = api_experiment_from_json(json_array_get(arr, i), &out[i], NULL, err)) < 0)
			break;
	if (rc < 0) {
		store_experiments_free(out, i);
		return rc;
	}
	*v = out;
	*n = cnt;
	*next = next_after(src->exps);
	return 0;
}

int cli_src_experiments(cli_src *src, const char *name, store_experiment **v, size_t *n,
			rl_err *err)
{
	if (src->st) {
		if (!name)
			return store_experiment_list(src->st, v, n, err);
		store_experiment *one = calloc(1, sizeof *one);
		if (!one)
			return rl_err_set(err, RL_ENOMEM, "experiments");
		int rc = cli_pick_experiment(src->st, name, one, err);
		if (rc < 0) {
			free(one);
			return rc;
		}
		*v = one;
		*n = 1;
		return 0;
	}
	json_t *arr = exp_list(src, err);
	if (!arr)
		return err->code;
	/* One experiment by reference, as the service resolves it: an id, a
	 * name (yours, else the only one so named) or OWNER/NAME. */
	char owner[256] = "";
	const char *nm = NULL;
	long long want_id = 0;
	if (name) {
		char *end;
		want_id = strtoll(name, &end, 10);
		if (!*name || *end || want_id <= 0)
			want_id = 0;
		cli_ref_split(name, owner, sizeof owner, &nm);
	}
	size_t cnt = json_array_size(arr), k = 0;
	store_experiment *out = calloc(cnt ? cnt : 1, sizeof *out);
	if (!out)
		return rl_err_set(err, RL_ENOMEM, "experiments");
	for (size_t i = 0; i < cnt; i++) {
		json_t *j = json_array_get(arr, i);
		const char *en = json_string_value(json_object_get(j, "experiment"));
		const char *eo = json_string_value(json_object_get(j, "owner"));
		if (want_id && json_integer_value(json_object_get(j, "id")) != want_id)
			continue;
		if (name && !want_id && (!en || strcmp(en, nm) != 0 ||
					 (owner[0] && (!eo || strcmp(eo, owner) != 0))))
			continue;
		int rc = api_experiment_from_json(j, &out[k], NULL, err);
		if (rc < 0) {
			store_experiments_free(out, k);
			return rc;
		}
		k++;
	}
	if (name && k == 0) {
		free(out);
		return rl_err_set(err, RL_ENOTFOUND, "no experiment %s%s '%s' at %s",
				  want_id ? "with id" : "named", owner[0] ? " of that owner" : "", name,
				  api_client_address(src->api));
	}
	if (name && k > 1) {
		/* several users' of that name: the caller's own, or say whose */
		size_t mine = k;
		for (size_t i = 0; i < k && mine == k; i++)
			if (out[i].owner_uid == (int64_t)getuid())
				mine = i;
		if (mine == k) {
			char list[400] = "";
			for (size_t i = 0; i < k && i < 4; i++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s's (id %lld)",
					 i ? ", " : "", out[i].owner ? out[i].owner : "nobody known",
					 (long long)out[i].id);
			store_experiments_free(out, k);
			return rl_err_set(err, RL_EINVAL, "%zu experiments are named '%s': %s%s; name "
					  "one by its id or as OWNER/NAME", k, nm, list, k > 4 ? ", ..." : "");
		}
		store_experiment keep = out[mine];
		memset(&out[mine], 0, sizeof out[mine]);
		store_experiments_free(out, k);
		out = calloc(1, sizeof *out);
		if (!out) {
			store_experiment_fini(&keep);
			return rl_err_set(err, RL_ENOMEM, "experiments");
		}
		out[0] = keep;
		k = 1;
	}
	*v = out;
	*n = k;
	return 0;
}

int cli_src_pick(cli_src *src, const char *name, store_experiment *e, rl_err *err)
{
	if (src->st)
		return cli_pick_experiment(src->st, name, e, err);
	store_experiment *v;
	size_t n;
	int rc = cli_src_experiments(src, name, &v, &n, err);
	if (rc < 0)
		return rc;
	if (n == 0) {
		free(v);
		return rl_err_set(err, RL_ENOTFOUND, "the service at %s holds no experiment yet",
				  api_client_address(src->api));
	}
	*e = v[n - 1]; /* oldest first: the last one is the most recent */
	memset(&v[n - 1], 0, sizeof v[n - 1]);
	store_experiments_free(v, n);
	return 0;
}

int cli_src_summary(cli_src *src, const store_experiment *e, api_exp_summary *sum,
		    rl_err *err)
{
	if (src->st)
		return api_exp_summarise(src->st, e, sum, err);
	json_t *arr = exp_list(src, err);
	if (!arr)
		return err->code;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		json_t *j = json_array_get(arr, i);
		if (json_integer_value(json_object_get(j, "id")) != e->id)
			continue;
		store_experiment tmp;
		int rc = api_experiment_from_json(j, &tmp, sum, err);
		if (rc == 0)
			store_experiment_fini(&tmp);
		return rc;
	}
	return rl_err_set(err, RL_ENOTFOUND, "no experiment with id %lld at %s", (long long)e->id,
			  api_client_address(src->api));
}

int cli_src_trials(cli_src *src, const store_experiment *e, store_trial **v, size_t *n,
		   rl_err *err)
{
	if (src->st)
		return store_trial_list(src->st, e->id, 0, v, n, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/experiments/%lld/trials", (long long)e->id);
	json_t *doc;
	json_t *arr = get_list(src, path, "trials", &doc, err);
	if (!arr)
		return err->code;
	size_t cnt = json_array_size(arr);
	store_trial *out = calloc(cnt ? cnt : 1, sizeof *out);
	int rc = out ? 0 : rl_err_set(err, RL_ENOMEM, "trials");
	size_t k = 0;
	for (; rc == 0 && k < cnt; k++)
		if ((rc = api_trial_from_json(json_array_get(arr, k), &out[k], err)) < 0)
			break;
	json_decref(doc);
	if (rc < 0) {
		store_trials_free(out, k);
		return rc;
	}
	*v = out;
	*n = cnt;
	return 0;
}

int cli_src_best(cli_src *src, const store_experiment *e, store_trial *t, rl_err *err)
{
	if (src->st)
		return store_trial_best(src->st, e->id, t, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/experiments/%lld/best", (long long)e->id);
	json_t *doc;
	int rc = get(src, path, &doc, err);
	if (rc < 0)
		return rc;
	rc = api_best_from_json(doc, t, err);
	json_decref(doc);
	return rc;
}

int cli_src_front(cli_src *src, const store_experiment *e, json_t **out, rl_err *err)
{
	if (src->st)
		return api_front_json(src->st, e, out, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/experiments/%lld/front", (long long)e->id);
	return get(src, path, out, err);
}

int cli_src_trial(cli_src *src, int64_t id, store_trial *t, rl_err *err)
{
	if (src->st)
		return store_trial_get(src->st, id, t, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/trials/%lld", (long long)id);
	json_t *doc;
	int rc = get(src, path, &doc, err);
	if (rc < 0)
		return rc;
	rc = api_trial_from_json(doc, t, err);
	json_decref(doc);
	return rc;
}

static int segments_from(cli_src *src, const char *path, store_segment **v, size_t *n,
			 rl_err *err)
{
	json_t *doc;
	json_t *arr = get_pages(src, path, "segments", &doc, err);
	if (!arr)
		return err->code;
	size_t cnt = json_array_size(arr);
	store_segment *out = calloc(cnt ? cnt : 1, sizeof *out);
	int rc = out ? 0 : rl_err_set(err, RL_ENOMEM, "segments");
	size_t k = 0;
	for (; rc == 0 && k < cnt; k++)
		if ((rc = api_segment_from_json(json_array_get(arr, k), &out[k], err)) < 0)
			break;
	json_decref(doc);
	if (rc < 0) {
		store_segments_free(out, k);
		return rc;
	}
	*v = out;
	*n = cnt;
	return 0;
}

int cli_src_segments(cli_src *src, int64_t trial_id, store_segment **v, size_t *n,
		     rl_err *err)
{
	if (src->st)
		return store_segment_list(src->st, trial_id, v, n, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/trials/%lld/segments", (long long)trial_id);
	return segments_from(src, path, v, n, err);
}

int cli_src_exp_segments(cli_src *src, const store_experiment *e, store_segment **v, size_t *n,
			 rl_err *err)
{
	if (src->st)
		return store_segment_list_experiment(src->st, e->id, v, n, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/experiments/%lld/segments", (long long)e->id);
	return segments_from(src, path, v, n, err);
}

int cli_src_metrics(cli_src *src, const store_experiment *e, store_metric **v, size_t *n,
		    rl_err *err)
{
	if (src->st)
		return store_metric_list(src->st, e->id, 0, v, n, err);
	char path[128];
	snprintf(path, sizeof path, "/api/v1/experiments/%lld/metrics", (long long)e->id);
	json_t *doc;
	json_t *arr = get_pages(src, path, "metrics", &doc, err);
	if (!arr)
		return err->code;
	size_t cnt = json_array_size(arr);
	store_metric *out = calloc(cnt ? cnt : 1, sizeof *out);
	int rc = out ? 0 : rl_err_set(err, RL_ENOMEM, "metrics");
	size_t k = 0;
	for (; rc == 0 && k < cnt; k++)
		if ((rc = api_metric_from_json(json_array_get(arr, k), &out[k], err)) < 0)
			break;
	json_decref(doc);
	if (rc < 0) {
		store_metrics_free(out, k);
		return rc;
	}
	*v = out;
	*n = cnt;
	return 0;
}

/* A file to out; one that cannot be opened is said inline. */
static int copy_file(const char *path, FILE *out, rl_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(out, "(log file %s cannot be read: %s)\n", path, strerror(errno));
		return 0;
	}
	char buf[65536];
	size_t n, last = 0;
	char tail = '\n';
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		if (fwrite(buf, 1, n, out) != n) {
			fclose(f);
			return rl_err_set(err, RL_EIO, "writing to standard output");
		}
		last = n;
		tail = buf[n - 1];
	}
	int bad = ferror(f);
	fclose(f);
	if (bad)
		return rl_err_set(err, RL_EIO, "reading %s", path);
	if (last && tail != '\n')
		fputc('\n', out);
	return 0;
}

int cli_src_log(cli_src *src, const store_segment *g, FILE *out, rl_err *err)
{
	if (src->st)
		return g->log_path ? copy_file(g->log_path, out, err) : 0;
	size_t offset = 0;
	char tail = '\n';
	for (;;) {
		char path[160], size_s[32], off_s[32];
		snprintf(path, sizeof path, "/api/v1/segments/%lld/log?offset=%zu", (long long)g->id,
			 offset);
		char *text;
		size_t len;
		int rc = api_client_text(src->api, path, &text, &len, "Relish-Log-Size", size_s,
					 sizeof size_s, "Relish-Log-Offset", off_s, sizeof off_s, err);
		if (rc < 0)
			return rc;
		if (len && fwrite(text, 1, len, out) != len) {
			free(text);
			return rl_err_set(err, RL_EIO, "writing to standard output");
		}
		if (len)
			tail = text[len - 1];
		free(text);
		offset += len;
		size_t size = (size_t)strtoull(size_s, NULL, 10);
		if (len == 0 || offset >= size)
			break;
	}
	if (offset && tail != '\n')
		fputc('\n', out);
	return 0;
}
