/*
 * cli_source.h - where the read commands (status, trials, best, logs,
 * export) get their rows: a database file, or a relish service through
 * its HTTP API.  Both give the same store rows, so each command has one
 * table and one --json printer for either; from a service the rows are
 * the API's JSON decoded (api/encode.h), which the same encoders print
 * back as the server sent them.
 *
 * Which: --db FILE is a file; else --server ADDR, $RELISH_SERVER, or a
 * service answering on the default socket (api/client.h) is a service;
 * else ./relish.db.  Ownership: every row returned is the caller's, freed
 * with the store's *_free / *_fini.
 */
#ifndef RELISH_CLI_SOURCE_H
#define RELISH_CLI_SOURCE_H

#include <stdio.h>

#include "api/client.h"
#include "api/encode.h"
#include "cli/cli_common.h"

typedef struct cli_src {
	store *st;             /* a database file, or */
	api_client *api;       /* a service */
	json_t *exps;          /* a service's experiment list (summaries), cached */
} cli_src;

/* Open the source o names (see above).  cli_src_close releases it. */
int cli_src_open(const cli_read_opts *o, cli_src *src, rl_err *err);
void cli_src_close(cli_src *src);

/* cli_read_args, cli_src_open and, when e is not NULL, the experiment
 * (cli_src_pick with o->experiment); returns 1 after --help. */
int cli_src_begin(int argc, char **argv, const cli_read_spec *spec, cli_read_opts *o,
		  cli_src *src, store_experiment *e, rl_err *err);

/* The experiment called name, or the most recently created one (NULL). */
int cli_src_pick(cli_src *src, const char *name, store_experiment *e, rl_err *err);
/* Every experiment (name NULL) or the one called name, oldest first. */
int cli_src_experiments(cli_src *src, const char *name, store_experiment **v, size_t *n,
			rl_err *err);
/* A page of experiments as store_experiment_page filters them (from a
 * service: its list route's ?after=, ?limit=, ?status=, ?user=, ?since=);
 * *next gets the id the next page starts after, 0 at the end. */
int cli_src_exp_page(cli_src *src, const store_exp_filter *f, store_experiment **v, size_t *n,
		     int64_t *next, rl_err *err);
/* Trial counts and best of e (as `relish status` shows). */
int cli_src_summary(cli_src *src, const store_experiment *e, api_exp_summary *sum,
		    rl_err *err);
int cli_src_trials(cli_src *src, const store_experiment *e, store_trial **v, size_t *n,
		   rl_err *err);
/* The best trial; RL_ENOTFOUND while none has a value. */
int cli_src_best(cli_src *src, const store_experiment *e, store_trial *t, rl_err *err);
/* The front resource (api_front_json); *out a new reference. */
int cli_src_front(cli_src *src, const store_experiment *e, json_t **out, rl_err *err);
int cli_src_trial(cli_src *src, int64_t id, store_trial *t, rl_err *err);
int cli_src_segments(cli_src *src, int64_t trial_id, store_segment **v, size_t *n,
		     rl_err *err);
int cli_src_exp_segments(cli_src *src, const store_experiment *e, store_segment **v, size_t *n,
			 rl_err *err);
int cli_src_metrics(cli_src *src, const store_experiment *e, store_metric **v, size_t *n,
		    rl_err *err);
/* Write segment g's log to out (a file: its log_path; a service: the
 * API's log route).  A log that cannot be read is said inline, no error. */
int cli_src_log(cli_src *src, const store_segment *g, FILE *out, rl_err *err);

#endif
