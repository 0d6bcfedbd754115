/*
 * encode.h - one JSON encoder per resource (experiment, trial, segment,
 * metric, event, best trial), shared by the HTTP API and the CLI's --json,
 * so the two can never disagree; and the matching decoders, with which the
 * CLI turns the API's answers back into store rows for its tables (the CLI
 * talks to a server only through the API: one code path).
 *
 * Conventions (docs/api.md, docs/cli.md): unknown values are null, whole
 * numbers are integers, times are unix seconds.  Encoders return a new
 * reference (NULL only when out of memory); decoders fill caller memory
 * with malloc'd strings (free with the store's *_fini) and return 0, or
 * RL_EPARSE naming the field that is missing or of the wrong type.
 */
#ifndef RELISH_API_ENCODE_H
#define RELISH_API_ENCODE_H

#include <jansson.h>

#include "common/err.h"
#include "store/store.h"

/* Scalars: NAN -> null and whole numbers as integers; NULL -> null;
 * a params text parsed into an object (kept as a string if it is not JSON). */
json_t *api_json_real(double v);
json_t *api_json_str(const char *s);
json_t *api_json_params(const char *params_json);
/* An integer, or null when !known. */
json_t *api_json_int_or_null(long long v, int known);

/* A trial whose segment waits for memory that processes relish does not
 * own hold: its latest wait event is segment.waiting (the live driver
 * writes segment.waited when it is placed, trial.failed when it gives up). */
typedef struct api_exp_wait {
	int64_t trial_id;
	double since;
	char *message;
} api_exp_wait;

/* What explains an experiment to its submitter (store_event_notes): a
 * line that missed the metric format (trial.warning), why it stopped
 * (experiment.failed), how it ended (experiment.done): what `relish run`
 * prints, for `relish status`, `submit --follow` and the dashboard. */
typedef struct api_exp_note {
	int64_t trial_id;         /* 0: the experiment's */
	double at;
	char *kind, *message;
} api_exp_note;
#define API_NOTES_PER_EXP 4

/* What `relish status` shows of an experiment beside its row. */
typedef struct api_exp_summary {
	int count[TRIAL__COUNT];  /* trials by state */
	int total;
	int has_best;
	store_trial best;         /* when has_best: id, experiment_id, idx, status,
				   * objective and objective_resource (what the
				   * resource shows; no segment is read) */
	api_exp_wait *wait;       /* the trials waiting for memory (running only) */
	size_t n_wait;
	api_exp_note *note;       /* the latest API_NOTES_PER_EXP notes, oldest first */
	size_t n_note;
	int paused;               /* a service's: paused for want of space (its status
				   * stays running: it resumes by itself); a store
				   * alone does not know (api_ctx.paused) */
} api_exp_summary;

/* Count e's trials and find its best (store_trial_best's choice). */
int api_exp_summarise(store *s, const store_experiment *e, api_exp_summary *out, rl_err *err);
/* The same for v[0..n) into sums[0..n) (each freed with
 * api_exp_summary_fini), reading the trials of the experiments whose ids
 * lie between v's least and greatest in a few statements
 * (store_trial_stats_range, store_event_waiting_range), not a few per
 * experiment; ids far apart one by one: `relish status` and GET
 * /api/v1/experiments. */
int api_exp_summarise_all(store *s, const store_experiment *v, size_t n, api_exp_summary *sums,
			  rl_err *err);
void api_exp_summary_fini(api_exp_summary *sum);

/* The experiment resource: `relish status --json` rows and GET
 * /api/v1/experiments/{id}.  now gives elapsed_s while it runs. */
json_t *api_json_experiment(const store_experiment *e, const api_exp_summary *sum, double now);
/* The trial resource (`relish trials --json`, export, the API). */
json_t *api_json_trial(const store_experiment *e, const store_trial *t);
/* The best trial (`relish best --json`). */
json_t *api_json_best(const store_experiment *e, const store_trial *t);
json_t *api_json_segment(const store_experiment *e, const store_segment *g);
json_t *api_json_metric(const store_experiment *e, const store_metric *m);
json_t *api_json_event(const store_event *ev);

/*
 * The front resource (GET /api/v1/experiments/{ref}/front, `relish best`
 * with several objectives or constraints; api/front.c): the experiment's
 * objectives, whether it has constraints, and every trial with values:
 *   {"experiment", "objectives": [{"metric", "mode"}], "constrained",
 *    "front": [trial ids on the front],
 *    "trials": [{"trial_id", "index", "status", "params", "values": [one per
 *               objective], "violation" (null without constraints),
 *               "feasible", "front"}]}
 * The front: completed, feasible trials that no other such trial dominates
 * (pareto_front, each objective by its mode; O(n^2 m) in the n trials).
 * An experiment of one objective without constraints lists no trial
 * (api_front_is_multi is 0: its best trial says it all), so asking costs
 * two small reads.  *out is a new reference.
 */
int api_front_json(store *s, const store_experiment *e, json_t **out, rl_err *err);
/* 1 when e has several objectives or constraints (the front resource has
 * more to say than the best trial), else 0; from a front resource j. */
int api_front_is_multi(const json_t *j);

/* (estimate - peak) / peak of a trial's latest segment, NAN when unknown. */
double api_trial_est_error(const store_trial *t);

/* Decoders: the inverse of the encoders above (what the CLI's tables need). */
int api_best_from_json(const json_t *j, store_trial *t, rl_err *err);
int api_experiment_from_json(const json_t *j, store_experiment *e, api_exp_summary *sum,
			     rl_err *err);
int api_trial_from_json(const json_t *j, store_trial *t, rl_err *err);
int api_segment_from_json(const json_t *j, store_segment *g, rl_err *err);
int api_metric_from_json(const json_t *j, store_metric *m, rl_err *err);

/* Text of j for output: indented (or compact), 16 significant digits,
 * malloc'd, NULL when out of memory. */
char *api_json_text(const json_t *j, int compact);

#endif
