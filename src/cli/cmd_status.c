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
#include "cli/cli_source.h"
#include "cli/table.h"
#include "cli/cli_source.h"
#include "api/encode.h"

static const char usage[] = "relish status [--db FILE | --server ADDR] [--json] [--wide] [EXPERIMENT]";

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

enum { S_NAME, S_STATUS, S_TRIALS, S_DONE, S_RUN, S_STOP, S_FAIL, S_CANCEL, S_OBJ, S_BEST,
       S_STARTED, S_ELAPSED, S__N };
static const cli_col cols[S__N] = {
	[S_NAME] = {"EXPERIMENT", 0, 0, 1, 12}, [S_STATUS] = {"STATUS", 0, 0, 0, 0},
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

static int notes_add(struct notes *nt, const char *line, int k)
{
	size_t add = k < 0 ? 0 : (size_t)k;
	char *t = realloc(nt->text, nt->len + add + 1);
	if (!t)
		return RL_ENOMEM;
	memcpy(t + nt->len, line, add);
	nt->len += add;
	t[nt->len] = '\0';
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
	snprintf(n[S_CANCEL], 16, "%d", sum->count[TRIAL_CANCELLED]);
	const char *cells[S__N] = {
		[S_NAME] = e->name, [S_STATUS] = exp_status_name(e->status),
		[S_TRIALS] = n[S_TRIALS], [S_DONE] = n[S_DONE], [S_RUN] = n[S_RUN],
		[S_STOP] = n[S_STOP], [S_FAIL] = n[S_FAIL], [S_CANCEL] = n[S_CANCEL],
		[S_OBJ] = obj, [S_BEST] = best,
		[S_STARTED] = started, [S_ELAPSED] = el,
	};
	return cli_table_add(tb, cells);
}

static int status_run(cli_src *s, const cli_read_opts *o, rl_err *err)
{
	store_experiment *v = NULL;
	size_t n = 0;
	int rc;
	if ((rc = cli_src_experiments(s, o->experiment, &v, &n, err)) < 0)
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
		if (o->json)
			json_array_append_new(arr, status_json(&v[i], &sum, now));
		else if (status_row(tb, &v[i], &sum, now) < 0 || waits_note(&notes, &v[i], &sum) < 0 ||
			 said_note(&said, &v[i], &sum) < 0)
			rc = rl_err_set(err, RL_ENOMEM, "status table");
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
	free(notes.text);
	free(said.text);
	return 0;
}

int cmd_status(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne line per experiment: state, trials by state "
			"(done/running/stopped/failed), best objective, start and elapsed time.\n"
			"On a terminal the table fits its width (--wide: every column in full).\n",
		.flags = CLI_READ_EXP_ARG | CLI_READ_WIDE | CLI_READ_SERVER,
	};
	cli_read_opts o = {0};
	cli_src s;
	int rc = cli_src_begin(argc, argv, &spec, &o, &s, NULL, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	rc = status_run(&s, &o, err);
	cli_src_close(&s);
	return rc;
}
