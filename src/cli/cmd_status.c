/*
 * cmd_status.c - relish status [--db F] [--json] [EXPERIMENT]: one line per
 * experiment (or the one named): its state, trial counts by state, the best
 * objective so far and how long it has run, and below the table the trials
 * that wait for memory other processes hold.  Reads the state database only.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/table.h"

static const char usage[] = "relish status [--db FILE] [--json] [--wide] [EXPERIMENT]";

/* A trial whose segment waits for memory that processes relish does not
 * own hold: its latest wait event is segment.waiting (the live driver
 * writes segment.waited when it is placed, trial.failed when it gives up). */
struct exp_wait {
	int64_t trial_id;
	double since;
	char *message;
};

struct exp_summary {
	int count[TRIAL__COUNT];
	int total;
	int has_best;
	store_trial best;
	struct exp_wait *wait;
	size_t n_wait;
};

static void summary_fini(struct exp_summary *sum)
{
	store_trial_fini(&sum->best);
	for (size_t i = 0; i < sum->n_wait; i++)
		free(sum->wait[i].message);
	free(sum->wait);
	sum->wait = NULL;
	sum->n_wait = 0;
}

static int waits_read(store *s, const store_experiment *e, struct exp_summary *sum, rl_err *err)
{
	if (e->status != EXP_RUNNING)
		return 0;
	store_event *ev;
	size_t n;
	int rc = store_event_list(s, e->id, 0, 0, &ev, &n, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const store_event *v = &ev[i];
		int waiting = !strcmp(v->kind, "segment.waiting");
		if (!v->trial_id || (!waiting && strcmp(v->kind, "segment.waited") &&
				     strcmp(v->kind, "trial.failed")))
			continue;
		size_t k = 0;
		while (k < sum->n_wait && sum->wait[k].trial_id != v->trial_id)
			k++;
		if (k < sum->n_wait) { /* the older state of that trial goes */
			free(sum->wait[k].message);
			sum->wait[k] = sum->wait[--sum->n_wait];
		}
		if (!waiting)
			continue;
		struct exp_wait *w = realloc(sum->wait, (sum->n_wait + 1) * sizeof *w);
		char *m = strdup(v->message ? v->message : "");
		if (!w || !m) {
			free(m);
			if (w)
				sum->wait = w;
			rc = rl_err_set(err, RL_ENOMEM, "status");
			break;
		}
		sum->wait = w;
		sum->wait[sum->n_wait++] = (struct exp_wait){v->trial_id, v->at, m};
	}
	store_events_free(ev, n);
	return rc;
}

static int summarise(store *s, const store_experiment *e, struct exp_summary *sum, rl_err *err)
{
	memset(sum, 0, sizeof *sum);
	store_trial *tv;
	size_t nt;
	int rc = store_trial_list(s, e->id, 0, &tv, &nt, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nt; i++)
		sum->count[tv[i].status]++;
	sum->total = (int)nt;
	store_trials_free(tv, nt);
	rl_err e2;
	rc = store_trial_best(s, e->id, &sum->best, &e2);
	if (rc == 0)
		sum->has_best = 1;
	else if (rc != RL_ENOTFOUND)
		return rl_err_set(err, rc, "%s", e2.msg);
	return waits_read(s, e, sum, err);
}

static double elapsed(const store_experiment *e, double now)
{
	return (isnan(e->finished_at) ? now : e->finished_at) - e->created_at;
}

static json_t *status_json(const store_experiment *e, const struct exp_summary *sum, double now)
{
	json_t *trials = json_object();
	json_object_set_new(trials, "total", json_integer(sum->total));
	for (int i = 0; i < TRIAL__COUNT; i++)
		json_object_set_new(trials, trial_status_name((trial_status)i),
				    json_integer(sum->count[i]));
	json_t *best = json_null();
	if (sum->has_best)
		best = json_pack("{s:I, s:o, s:o}", "trial_id", (json_int_t)sum->best.id,
				 "value", cli_json_real(sum->best.objective), "resource",
				 cli_json_real(sum->best.objective_resource));
	json_t *waiting = json_array();
	for (size_t i = 0; i < sum->n_wait; i++)
		json_array_append_new(waiting, json_pack("{s:I, s:o, s:s}", "trial_id",
							 (json_int_t)sum->wait[i].trial_id, "since",
							 cli_json_real(sum->wait[i].since), "message",
							 sum->wait[i].message));
	return json_pack("{s:I, s:s, s:s, s:{s:s, s:s}, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "id", (json_int_t)e->id, "experiment", e->name, "status",
			 exp_status_name(e->status), "objective", "metric", e->objective_metric,
			 "mode", e->mode, "trials", trials, "best", best, "created_at",
			 cli_json_real(e->created_at), "finished_at", cli_json_real(e->finished_at),
			 "elapsed_s", cli_json_real(elapsed(e, now)), "spec_path", cli_json_str(e->spec_path),
			 "waiting", waiting);
}

enum { S_NAME, S_STATUS, S_TRIALS, S_DONE, S_RUN, S_STOP, S_FAIL, S_OBJ, S_BEST, S_STARTED,
       S_ELAPSED, S__N };
static const cli_col cols[S__N] = {
	[S_NAME] = {"EXPERIMENT", 0, 0, 1, 12}, [S_STATUS] = {"STATUS", 0, 0, 0, 0},
	[S_TRIALS] = {"TRIALS", 1, 0, 0, 0},    [S_DONE] = {"DONE", 1, 1, 0, 0},
	[S_RUN] = {"RUN", 1, 1, 0, 0},          [S_STOP] = {"STOP", 1, 2, 0, 0},
	[S_FAIL] = {"FAIL", 1, 1, 0, 0},        [S_BEST] = {"BEST", 0, 0, 1, 16},
	[S_OBJ] = {"OBJECTIVE", 0, 5, 0, 0},
	[S_STARTED] = {"STARTED", 0, 4, 0, 0},  [S_ELAPSED] = {"ELAPSED", 1, 3, 0, 0},
};

/* Lines printed below the table: each waiting trial, by experiment. */
struct notes {
	char *text;
	size_t len;
};

static int waits_note(struct notes *nt, const store_experiment *e, const struct exp_summary *sum)
{
	for (size_t i = 0; i < sum->n_wait; i++) {
		char since[32], line[700];
		cli_format_time(sum->wait[i].since, since, sizeof since);
		int k = snprintf(line, sizeof line, "  %s: trial %lld %s (since %s)\n", e->name,
				 (long long)sum->wait[i].trial_id, sum->wait[i].message, since);
		size_t add = k < 0 ? 0 : (size_t)k < sizeof line ? (size_t)k : sizeof line - 1;
		char *t = realloc(nt->text, nt->len + add + 1);
		if (!t)
			return RL_ENOMEM;
		memcpy(t + nt->len, line, add);
		nt->len += add;
		t[nt->len] = '\0';
		nt->text = t;
	}
	return 0;
}

static int status_row(cli_table *tb, const store_experiment *e, const struct exp_summary *sum,
		      double now)
{
	char best[160] = "-", started[32], el[32], n[S__N][16], obj[96];
	if (sum->has_best) {
		char v[40];
		cli_format_value(sum->best.objective, v, sizeof v);
		snprintf(best, sizeof best, "%s (trial %lld)", v, (long long)sum->best.id);
	}
	snprintf(obj, sizeof obj, "%s %s", e->mode, e->objective_metric);
	cli_format_time(e->created_at, started, sizeof started);
	cli_format_duration(elapsed(e, now), el, sizeof el);
	snprintf(n[S_TRIALS], 16, "%d", sum->total);
	snprintf(n[S_DONE], 16, "%d", sum->count[TRIAL_COMPLETED]);
	snprintf(n[S_RUN], 16, "%d", sum->count[TRIAL_RUNNING] + sum->count[TRIAL_PAUSED]);
	snprintf(n[S_STOP], 16, "%d", sum->count[TRIAL_STOPPED]);
	snprintf(n[S_FAIL], 16, "%d", sum->count[TRIAL_FAILED]);
	const char *cells[S__N] = {
		[S_NAME] = e->name, [S_STATUS] = exp_status_name(e->status),
		[S_TRIALS] = n[S_TRIALS], [S_DONE] = n[S_DONE], [S_RUN] = n[S_RUN],
		[S_STOP] = n[S_STOP], [S_FAIL] = n[S_FAIL], [S_OBJ] = obj, [S_BEST] = best,
		[S_STARTED] = started, [S_ELAPSED] = el,
	};
	return cli_table_add(tb, cells);
}

static int status_run(store *s, const cli_read_opts *o, rl_err *err)
{
	store_experiment *v = NULL;
	size_t n = 0;
	int rc;
	if (o->experiment) {
		store_experiment one;
		if ((rc = store_experiment_find(s, o->experiment, &one, err)) < 0)
			return rc;
		v = calloc(1, sizeof *v);
		if (!v) {
			store_experiment_fini(&one);
			return rl_err_set(err, RL_ENOMEM, "status");
		}
		v[0] = one;
		n = 1;
	} else if ((rc = store_experiment_list(s, &v, &n, err)) < 0) {
		return rc;
	}
	double now = cli_now();
	struct notes notes = {0};
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
		if (o->json)
			json_array_append_new(arr, status_json(&v[i], &sum, now));
		else if (status_row(tb, &v[i], &sum, now) < 0 || waits_note(&notes, &v[i], &sum) < 0)
			rc = rl_err_set(err, RL_ENOMEM, "status table");
		summary_fini(&sum);
	}
	store_experiments_free(v, n);
	if (rc < 0) {
		json_decref(arr);
		cli_table_free(tb);
		free(notes.text);
		return rc;
	}
	if (o->json)
		return cli_json_print(arr, err);
	cli_table_print(tb, stdout, cli_term_width(o->wide));
	cli_table_free(tb);
	if (notes.len)
		printf("waiting for memory that other processes hold:\n%s", notes.text);
	free(notes.text);
	return 0;
}

int cmd_status(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne line per experiment: state, trials by state "
			"(done/running/stopped/failed), best objective, start and elapsed time.\n"
			"On a terminal the table fits its width (--wide: every column in full).\n",
		.flags = CLI_READ_EXP_ARG | CLI_READ_WIDE,
	};
	cli_read_opts o = {0};
	store *s;
	int rc = cli_read_begin(argc, argv, &spec, &o, &s, NULL, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	rc = status_run(s, &o, err);
	store_close(s);
	return rc;
}
