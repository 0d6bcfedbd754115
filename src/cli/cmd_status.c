/*
 * cmd_status.c - relish status [--db F] [--json] [EXPERIMENT]: one line per
 * experiment (or the one named): its state, trial counts by state, the best
 * objective so far and how long it has run, and below the table the trials
 * that wait for memory other processes hold.  Reads the state database only.
 */
#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_source.h"
#include "cli/table.h"
#include "api/encode.h"
#include "common/logtext.h"
#include "common/units.h"

static const char usage[] = "relish status [--db FILE | --server ADDR] [--json] [--wide] "
			    "[--state S] [--user U] [--since AGE] [--limit N] [--after ID] "
			    "[EXPERIMENT]";

/* The list's filters and page (--state, --user, --since, --limit, --after). */
struct status_opts {
	store_exp_filter f;
	int paged;              /* one of them was given */
};

enum { OPT_STATE = 1000, OPT_USER, OPT_SINCE, OPT_LIMIT, OPT_AFTER };

static int status_opt(int c, const char *arg, void *ctx, rl_err *err)
{
	struct status_opts *so = ctx;
	char *end;
	so->paged = 1;
	switch (c) {
	case OPT_STATE: {
		exp_status st;
		if (exp_status_from_name(arg, &st, err) < 0)
			return cli_usage_error(err, usage, "--state: expected running, done, cancelled "
					       "or failed, got '%s'", arg);
		so->f.status = (int)st;
		return 0;
	}
	case OPT_USER:
		for (const char *p = arg; *p; p++)
			if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
				return cli_usage_error(err, usage, "--user: expected a user name, got "
						       "'%s'", arg);
		so->f.owner = arg;
		return 0;
	case OPT_SINCE: {
		double age;
		if (units_parse_duration(arg, &age) < 0)
			return cli_usage_error(err, usage, "--since: expected an age such as 90m, 12h "
					       "or 7d, got '%s'", arg);
		so->f.since = cli_now() - age;
		return 0;
	}
	case OPT_LIMIT:
	case OPT_AFTER: {
		long long v = strtoll(arg, &end, 10);
		if (!*arg || *end || v < (c == OPT_LIMIT))
			return cli_usage_error(err, usage, "--%s: expected a %s, got '%s'",
					       c == OPT_LIMIT ? "limit" : "after",
					       c == OPT_LIMIT ? "count above 0" : "experiment id",
					       arg);
		if (c == OPT_LIMIT)
			so->f.limit = (size_t)v;
		else
			so->f.after = v;
		return 0;
	}
	}
	return rl_err_set(err, RL_EINTERNAL, "status: option %d", c);
}

/* The summary beside each row (shared with the API, api/encode.h): trial
 * counts, the best, and the trials that wait for memory other processes
 * hold. */
#define exp_summary api_exp_summary

static void summary_fini(struct exp_summary *sum)
{
	api_exp_summary_fini(sum);
}

static int summarise(cli_src *s, const store_experiment *e, struct exp_summary *sum, rl_err *err)
{
	return cli_src_summary(s, e, sum, err);
}

static double elapsed(const store_experiment *e, double now)
{
	return (isnan(e->finished_at) ? now : e->finished_at) - e->created_at;
}

static json_t *status_json(const store_experiment *e, const struct exp_summary *sum, double now)
{
	return api_json_experiment(e, sum, now);
}

enum { S_NAME, S_OWNER, S_STATUS, S_TRIALS, S_DONE, S_RUN, S_STOP, S_FAIL, S_CANCEL, S_OBJ, S_BEST,
       S_STARTED, S_ELAPSED, S__N };
static const cli_col cols[S__N] = {
	[S_NAME] = {"EXPERIMENT", 0, 0, 1, 12}, [S_OWNER] = {"OWNER", 0, 1, 1, 8},
	[S_STATUS] = {"STATUS", 0, 0, 0, 0},
	[S_TRIALS] = {"TRIALS", 1, 0, 0, 0},    [S_DONE] = {"DONE", 1, 1, 0, 0},
	[S_RUN] = {"RUN", 1, 1, 0, 0},          [S_STOP] = {"STOP", 1, 2, 0, 0},
	[S_FAIL] = {"FAIL", 1, 1, 0, 0},        [S_CANCEL] = {"CANCEL", 1, 2, 0, 0},
	[S_BEST] = {"BEST", 0, 0, 1, 16},
	[S_OBJ] = {"OBJECTIVE", 0, 5, 0, 0},
	[S_STARTED] = {"STARTED", 0, 4, 0, 0},  [S_ELAPSED] = {"ELAPSED", 1, 3, 0, 0},
};

/* Lines printed below the table, by experiment. */
struct notes {
	char *text;
	size_t len;
};

/* A note holds what a trial printed: shown without its control bytes
 * (rl_term_text), so that no escape sequence reaches the terminal. */
static int notes_add(struct notes *nt, const char *line, int k)
{
	size_t add = k < 0 ? 0 : (size_t)k;
	char *raw = strndup(line, add);
	char *t = raw ? realloc(nt->text, nt->len + 4 * add + 1) : NULL;
	if (!t) {
		free(raw);
		return RL_ENOMEM;
	}
	rl_term_text(raw, t + nt->len, 4 * add + 1);
	free(raw);
	nt->len += strlen(t + nt->len);
	nt->text = t;
	return 0;
}

/* Each trial waiting for memory other processes hold. */
static int waits_note(struct notes *nt, const store_experiment *e, const struct exp_summary *sum)
{
	for (size_t i = 0; i < sum->n_wait; i++) {
		char since[32], line[700];
		cli_format_time(sum->wait[i].since, since, sizeof since);
		int k = snprintf(line, sizeof line, "  %s: trial %lld %s (since %s)\n", e->name,
				 (long long)sum->wait[i].trial_id, sum->wait[i].message, since);
		if (notes_add(nt, line, k < (int)sizeof line ? k : (int)sizeof line - 1) < 0)
			return RL_ENOMEM;
	}
	return 0;
}

/* What `relish run` would have printed (a service keeps it as notes): a
 * line that missed the metric format, why the experiment stopped, and how
 * it ended when some of its trials failed. */
static int said_note(struct notes *nt, const store_experiment *e, const struct exp_summary *sum)
{
	for (size_t i = 0; i < sum->n_note; i++) {
		const api_exp_note *n = &sum->note[i];
		if (!strcmp(n->kind, "experiment.done") && !sum->count[TRIAL_FAILED])
			continue; /* ended well: the table says it */
		char line[1600];
		int k;
		if (n->trial_id > 0)
			k = snprintf(line, sizeof line, "  %s: trial %lld: %s\n", e->name,
				     (long long)n->trial_id, n->message);
		else
			k = snprintf(line, sizeof line, "  %s: %s%s\n", e->name,
				     !strcmp(n->kind, "experiment.failed") ? "stopped: " : "", n->message);
		if (notes_add(nt, line, k < (int)sizeof line ? k : (int)sizeof line - 1) < 0)
			return RL_ENOMEM;
	}
	return 0;
}

/* front: the experiment's front resource when it has several objectives
 * or constraints (NULL otherwise): OBJECTIVE then names every objective and
 * BEST says how many trials are on the front (relish best lists them). */
static int status_row(cli_table *tb, const store_experiment *e, const struct exp_summary *sum,
		      double now, json_t *front)
{
	char best[160] = "-", started[32], el[32], n[S__N][16], obj[512];
	if (front) {
		json_t *t;
		size_t i, on = 0;
		json_array_foreach(json_object_get(front, "trials"), i, t)
			on += json_is_true(json_object_get(t, "front"));
		if (on)
			snprintf(best, sizeof best, "%zu on the front", on);
		cli_front_objectives_text(front, obj, sizeof obj);
	} else {
		if (sum->has_best) {
			char v[40];
			cli_format_value(sum->best.objective, v, sizeof v);
			snprintf(best, sizeof best, "%s (trial %lld)", v, (long long)sum->best.id);
		}
		snprintf(obj, sizeof obj, "%s %s", e->mode, e->objective_metric);
	}
	cli_format_time(e->created_at, started, sizeof started);
	cli_format_duration(elapsed(e, now), el, sizeof el);
	snprintf(n[S_TRIALS], 16, "%d", sum->total);
	snprintf(n[S_DONE], 16, "%d", sum->count[TRIAL_COMPLETED]);
	snprintf(n[S_RUN], 16, "%d", sum->count[TRIAL_RUNNING] + sum->count[TRIAL_PAUSED]);
	snprintf(n[S_STOP], 16, "%d", sum->count[TRIAL_STOPPED]);
	snprintf(n[S_FAIL], 16, "%d", sum->count[TRIAL_FAILED]);
	snprintf(n[S_CANCEL], 16, "%d", sum->count[TRIAL_CANCELLED]);
	const char *cells[S__N] = {
		[S_NAME] = e->name, [S_OWNER] = e->owner, /* NULL: "-" */
		[S_STATUS] = sum->paused ? "paused" : exp_status_name(e->status),
		[S_TRIALS] = n[S_TRIALS], [S_DONE] = n[S_DONE], [S_RUN] = n[S_RUN],
		[S_STOP] = n[S_STOP], [S_FAIL] = n[S_FAIL], [S_CANCEL] = n[S_CANCEL],
		[S_OBJ] = obj, [S_BEST] = best,
		[S_STARTED] = started, [S_ELAPSED] = el,
	};
	return cli_table_add(tb, cells);
}

static int status_run(cli_src *s, const cli_read_opts *o, const struct status_opts *so,
		      rl_err *err)
{
	store_experiment *v = NULL;
	size_t n = 0;
	int64_t next = 0;
	int rc;
	if (so->paged && o->experiment)
		return cli_usage_error(err, usage, "name an experiment or filter the list, not both");
	if ((rc = so->paged ? cli_src_exp_page(s, &so->f, &v, &n, &next, err)
			    : cli_src_experiments(s, o->experiment, &v, &n, err)) < 0)
		return rc;
	double now = cli_now();
	struct notes notes = {0}, said = {0};
	json_t *arr = o->json ? json_array() : NULL;
	cli_table *tb = o->json ? NULL : cli_table_new(cols, S__N);
	if (!o->json && !tb)
		rc = rl_err_set(err, RL_ENOMEM, "status table");
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct exp_summary sum;
		if ((rc = summarise(s, &v[i], &sum, err)) < 0) {
			summary_fini(&sum);
			break;
		}
		/* several objectives: the front resource names them all (for
		 * one objective it is two small reads and lists no trial) */
		json_t *front = NULL;
		if (cli_src_front(s, &v[i], &front, err) < 0 || !api_front_is_multi(front)) {
			json_decref(front);
			front = NULL;
		}
		rl_err_clear(err);
		if (o->json) {
			/* with several objectives, every one ("objectives": metric
			 * and mode, in the spec's order) and the trials on the
			 * front ("front": their ids, as relish best --json) */
			json_t *j = status_json(&v[i], &sum, now);
			if (j && front) {
				json_object_set(j, "objectives", json_object_get(front, "objectives"));
				json_object_set(j, "front", json_object_get(front, "front"));
			}
			json_array_append_new(arr, j);
		} else if (status_row(tb, &v[i], &sum, now, front) < 0 ||
			 waits_note(&notes, &v[i], &sum) < 0 || said_note(&said, &v[i], &sum) < 0)
			rc = rl_err_set(err, RL_ENOMEM, "status table");
		json_decref(front);
		summary_fini(&sum);
	}
	store_experiments_free(v, n);
	if (rc < 0) {
		json_decref(arr);
		cli_table_free(tb);
		free(notes.text);
		free(said.text);
		return rc;
	}
	if (o->json)
		return cli_json_print(arr, err);
	cli_table_print(tb, stdout, cli_term_width(o->wide));
	cli_table_free(tb);
	if (notes.len)
		printf("waiting for memory that other processes hold:\n%s", notes.text);
	if (said.len)
		printf("what the experiments said:\n%s", said.text);
	if (next)
		printf("more: relish status --after %lld%s\n", (long long)next,
		       " (with the same filters)");
	free(notes.text);
	free(said.text);
	return 0;
}

int cmd_status(int argc, char **argv, rl_err *err)
{
	static const struct option own[] = {
		{"state", required_argument, NULL, OPT_STATE},
		{"user", required_argument, NULL, OPT_USER},
		{"since", required_argument, NULL, OPT_SINCE},
		{"limit", required_argument, NULL, OPT_LIMIT},
		{"after", required_argument, NULL, OPT_AFTER},
		{0},
	};
	struct status_opts so = {.f = STORE_EXP_FILTER_ALL};
	const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne line per experiment: state, trials by state "
			"(done/running/stopped/failed), best objective, start and elapsed time.\n"
			"With several objectives (or constraints) OBJECTIVE names every objective and BEST says how many trials are on the Pareto front (relish best lists them).\n"
			"On a terminal the table fits its width (--wide: every column in full).\n"
			"A service's history can be long: --state running|done|cancelled|failed, "
			"--user NAME and --since AGE (90m, 12h, 7d) filter the list, --limit N "
			"shows N at most and --after ID the page after experiment ID (the line "
			"below the table names the next one).\n",
		.flags = CLI_READ_EXP_ARG | CLI_READ_WIDE | CLI_READ_SERVER,
		.own = own,
		.own_opt = status_opt,
		.ctx = &so,
	};
	cli_read_opts o = {0};
	cli_src s;
	int rc = cli_src_begin(argc, argv, &spec, &o, &s, NULL, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	rc = status_run(&s, &o, &so, err);
	cli_src_close(&s);
	return rc;
}
