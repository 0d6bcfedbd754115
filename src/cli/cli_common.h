/*
 * cli_common.h - what the read commands (status, trials, best, logs,
 * export, profiles, devices) share: argument parsing with the common options
 * (--db, --json, --experiment, --help), opening the state database without creating it, choosing an experiment,
 * and output helpers (JSON through jansson, RFC 4180 CSV, times).
 *
 * Every helper follows the error convention: it returns 0 or a negative
 * RL_E* code with err filled; the command passes that up to main, which
 * prints it and exits with the code's exit status (docs/cli.md).
 */
#ifndef RELISH_CLI_COMMON_H
#define RELISH_CLI_COMMON_H

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>

#include "common/err.h"
#include "store/store.h"

/* Options every read command understands; commands add their own. */
typedef struct cli_read_opts {
	const char *db;         /* --db FILE; default STORE_DEFAULT_PATH */
	int json;               /* --json */
	const char *experiment; /* --experiment NAME (or a positional name) */
	int help;               /* --help was given */
	int wide;               /* --wide (commands with CLI_READ_WIDE): every column in full */
	const char *server;     /* --server ADDR (commands with CLI_READ_SERVER) */
	int argi;               /* CLI_READ_ARGS: index of the first positional */
} cli_read_opts;

/* Long options shared by the read commands, for getopt_long tables. */
#define CLI_OPT_DB 'd'
#define CLI_OPT_JSON 'j'
#define CLI_OPT_EXPERIMENT 'e'
#define CLI_OPT_HELP 'h'
#define CLI_OPT_WIDE 'W'
#define CLI_OPT_SERVER 'S'
#define CLI_READ_LONGOPTS                                            \
	{"db", required_argument, NULL, CLI_OPT_DB},                 \
	{"json", no_argument, NULL, CLI_OPT_JSON},                   \
	{"experiment", required_argument, NULL, CLI_OPT_EXPERIMENT}, \
	{"help", no_argument, NULL, CLI_OPT_HELP}

/*
 * What a read command's argument parsing needs to know (cli_read_args).
 * The shared options are --db and --help always, --json and --experiment
 * unless flags leave them out; `own` adds the command's options, each handed
 * to own_opt(c, optarg, ctx, err) (0 or a negative RL_E* code).
 */
typedef struct cli_read_spec {
	const char *usage;        /* one-line synopsis, also under usage errors */
	const char *help;         /* --help prints "usage: USAGE\n" then this */
	const struct option *own; /* the command's own options, {0}-ended; or NULL */
	int (*own_opt)(int c, const char *arg, void *ctx, rl_err *err);
	void *ctx;                /* passed to own_opt */
	const char *shorts;       /* short options besides the long ones ("h"), or NULL */
	unsigned flags;           /* CLI_READ_* below */
} cli_read_spec;

enum {
	CLI_READ_NO_JSON = 1u << 0,       /* no --json */
	CLI_READ_NO_EXPERIMENT = 1u << 1, /* no --experiment */
	CLI_READ_EXP_ARG = 1u << 2,       /* one optional positional EXPERIMENT */
	CLI_READ_ARGS = 1u << 3,          /* positionals are the command's: o->argi */
	CLI_READ_WIDE = 1u << 4,          /* a table: --wide shows every column in full */
	CLI_READ_SERVER = 1u << 5,        /* --server ADDR: read from relish serve (cli_source.h) */
};

/*
 * Parse a read command's argv: the option loop, --help (prints the help to
 * stdout and returns 1), positional arguments (refused unless flags say
 * otherwise).  Returns 0 when the command should go on, 1 after help, or a
 * negative RL_E* code (RL_EUSAGE with the synopsis for bad arguments).
 * Pointers in *o point into argv.
 */
int cli_read_args(int argc, char **argv, const cli_read_spec *spec, cli_read_opts *o,
		  rl_err *err);

/*
 * cli_read_args, then open the database (cli_open_read) and, when e is not
 * NULL, choose the experiment (cli_pick_experiment with o->experiment).
 * Returns 1 after help (nothing opened), 0 with *s open (store_close) and *e
 * filled (store_experiment_fini), or a negative RL_E* code with nothing left
 * open.
 */
int cli_read_begin(int argc, char **argv, const cli_read_spec *spec, cli_read_opts *o,
		   store **s, store_experiment *e, rl_err *err);

/*
 * Prepare getopt_long for a command's argv (resets its state, silences its
 * own messages).  Call before the loop.
 */
void cli_getopt_reset(void);

/*
 * Handle one option character returned by getopt_long if it is a common
 * one: returns 1 when handled, 0 when it is the command's own, and RL_EUSAGE
 * (err names the bad option; usage is the command's one-line synopsis) for
 * '?' and ':'.
 */
int cli_read_opt(int c, char **argv, const char *usage, cli_read_opts *o, rl_err *err);

/* A usage error: "MESSAGE\nusage: USAGE" with RL_EUSAGE. */
int cli_usage_error(rl_err *err, const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Open the database for reading (STORE_READONLY: nothing is written, so a
 * database on read-only media can be read): a missing file is RL_ENOTFOUND
 * and no file is created.  *out is closed with store_close. */
int cli_open_read(const cli_read_opts *o, store **out, rl_err *err);

/*
 * The experiment name refers to (its id; a name: yours, else the only one
 * so named, store_experiment_find; OWNER/NAME), or when name is NULL the
 * most recently created one; RL_ENOTFOUND when there is none.  *out is the caller's
 * (store_experiment_fini).
 */
int cli_pick_experiment(store *s, const char *name, store_experiment *out, rl_err *err);
/* An experiment's reference: OWNER/NAME (owner into owner, n bytes; *name
 * after the slash), or a name (owner ""). */
void cli_ref_split(const char *ref, char *owner, size_t n, const char **name);

/* JSON helpers.  cli_json_real: NAN -> null, whole numbers as integers.  cli_json_str: NULL -> null.
 * cli_json_params parses a params text into an object (a string on error). */
json_t *cli_json_real(double v);
json_t *cli_json_str(const char *s);
json_t *cli_json_params(const char *params_json);
/* A trial's params for a table or a sentence: compact JSON with reals to 6
 * significant digits (0.483003, not 0.48300251266298522); --json output and
 * the store keep every digit.  Returns buf, or the text itself when it is
 * not JSON or does not fit. */
const char *cli_params_text(const char *params_json, char *buf, size_t n);
/* A trial's error for display: its own, else its last failed segment's. */
const char *cli_trial_error(const store_trial *t);
/* One trial as the JSON object of `relish trials --json` and export. */
json_t *cli_trial_json(const store_experiment *e, const store_trial *t);
/* Print j (indented, one trailing newline) to stdout and release it.
 * Returns 0 or RL_EIO / RL_ENOMEM. */
int cli_json_print(json_t *j, rl_err *err);

/* Write s as one RFC 4180 CSV field (quoted when it holds , " CR or LF;
 * quotes doubled).  NULL writes an empty field. */
void cli_csv_field(FILE *f, const char *s);
/* A number field: shortest round-trip text, empty for NAN. */
void cli_csv_real(FILE *f, double v);

/* "2024-05-01 12:00:00" (local time), "-" for NAN. */
void cli_format_time(double t, char *buf, size_t len);
/* "3h02m", "4m05s", "12s"; "-" for NAN or negative. */
void cli_format_duration(double seconds, char *buf, size_t len);
/* Shortest text that reads back as v ("0.98", "27"); "-" for NAN.  For
 * CSV and wherever every digit matters. */
void cli_format_real(double v, char *buf, size_t len);
/* v to 6 significant digits ("0.991667", "27"), what tables and sentences
 * on the screen show; "-" for NAN.  --json keeps every digit. */
void cli_format_value(double v, char *buf, size_t len);
/*
 * Several objectives (issue 29): tables show every objective, read from an
 * experiment's front resource (api_front_json, cli_src_front).
 * cli_front_objectives_text: "min f1, max f2" (the objectives in order).
 * cli_front_values: the values of the front resource's trials by trial id,
 * so a table of n trials finds each in O(log n); cli_front_values_text:
 * trial id's values as "0.1, 0.3" (6 significant digits, "-" for one not
 * reported), with " *" after a trial on the front; "-" for a trial the
 * front resource does not list.
 */
void cli_front_objectives_text(json_t *front, char *buf, size_t n);
typedef struct cli_front_values {
	size_t n;
	struct cli_front_row {
		int64_t trial_id;
		json_t *trial; /* borrowed from the front resource */
	} *rows;
} cli_front_values;
int cli_front_values_init(cli_front_values *fv, json_t *front);
void cli_front_values_fini(cli_front_values *fv);
void cli_front_values_text(const cli_front_values *fv, int64_t trial_id, char *buf, size_t n);
/* trial id's entry of the front resource (borrowed), or NULL. */
json_t *cli_front_values_get(const cli_front_values *fv, int64_t trial_id);

/* Seconds since the epoch now (wall clock; display only). */
double cli_now(void);

#endif
