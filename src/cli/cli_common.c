/*
 * cli_common.c - shared option handling and output helpers of the read
 * commands (see cli_common.h).
 */
#include "cli/cli_common.h"

#include "api/encode.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <unistd.h>

void cli_getopt_reset(void)
{
	/* 0 (not 1) makes glibc re-initialise fully, so a command run after
	 * another in one process (tests) parses from scratch. */
	optind = 0;
	opterr = 0;
}

int cli_usage_error(rl_err *err, const char *usage, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return rl_err_set(err, RL_EUSAGE, "%s\nusage: %s", msg, usage);
}

int cli_read_opt(int c, char **argv, const char *usage, cli_read_opts *o, rl_err *err)
{
	switch (c) {
	case CLI_OPT_DB:
		o->db = optarg;
		return 1;
	case CLI_OPT_JSON:
		o->json = 1;
		return 1;
	case CLI_OPT_EXPERIMENT:
		o->experiment = optarg;
		return 1;
	case CLI_OPT_HELP:
		o->help = 1;
		return 1;
	case CLI_OPT_WIDE:
		o->wide = 1;
		return 1;
	case CLI_OPT_SERVER:
		o->server = optarg;
		return 1;
	case ':':
		return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
	case '?':
		if (optopt)
			return cli_usage_error(err, usage, "unknown option '-%c'", optopt);
		return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
	default:
		return 0;
	}
}

/* Room for the shared options, the command's own and the terminator. */
#define CLI_MAX_OPTS 16

int cli_read_args(int argc, char **argv, const cli_read_spec *spec, cli_read_opts *o,
		  rl_err *err)
{
	static const struct option common[] = {CLI_READ_LONGOPTS};
	struct option opts[CLI_MAX_OPTS];
	size_t n = 0;
	for (size_t i = 0; i < sizeof common / sizeof common[0]; i++) {
		if ((common[i].val == CLI_OPT_JSON && (spec->flags & CLI_READ_NO_JSON)) ||
		    (common[i].val == CLI_OPT_EXPERIMENT && (spec->flags & CLI_READ_NO_EXPERIMENT)))
			continue;
		opts[n++] = common[i];
	}
	if (spec->flags & CLI_READ_WIDE)
		opts[n++] = (struct option){"wide", no_argument, NULL, CLI_OPT_WIDE};
	if (spec->flags & CLI_READ_SERVER)
		opts[n++] = (struct option){"server", required_argument, NULL, CLI_OPT_SERVER};
	for (const struct option *p = spec->own; p && p->name; p++) {
		if (n + 1 >= CLI_MAX_OPTS)
			return rl_err_set(err, RL_EINTERNAL, "%s: too many options", spec->usage);
		opts[n++] = *p;
	}
	opts[n] = (struct option){NULL, 0, NULL, 0};
	char shorts[16] = ":";
	if (spec->shorts)
		snprintf(shorts, sizeof shorts, ":%s", spec->shorts);

	int c, rc;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		if ((rc = cli_read_opt(c, argv, spec->usage, o, err)) < 0)
			return rc;
		if (rc == 1)
			continue;
		if (!spec->own_opt)
			return rl_err_set(err, RL_EINTERNAL, "%s: option '%c' not handled",
					  spec->usage, c);
		if ((rc = spec->own_opt(c, optarg, spec->ctx, err)) < 0)
			return rc;
	}
	if (o->help) {
		printf("usage: %s\n%s", spec->usage, spec->help);
		return 1;
	}
	if (spec->flags & CLI_READ_ARGS) {
		o->argi = optind;
		return 0;
	}
	if ((spec->flags & CLI_READ_EXP_ARG) && optind < argc) {
		if (o->experiment)
			return cli_usage_error(err, spec->usage, "give the experiment once");
		o->experiment = argv[optind++];
	}
	if (optind < argc)
		return cli_usage_error(err, spec->usage, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cli_read_begin(int argc, char **argv, const cli_read_spec *spec, cli_read_opts *o,
		   store **s, store_experiment *e, rl_err *err)
{
	int rc = cli_read_args(argc, argv, spec, o, err);
	if (rc != 0)
		return rc;
	store *st;
	if ((rc = cli_open_read(o, &st, err)) < 0)
		return rc;
	if (e && (rc = cli_pick_experiment(st, o->experiment, e, err)) < 0) {
		store_close(st);
		return rc;
	}
	*s = st;
	return 0;
}

int cli_open_read(const cli_read_opts *o, store **out, rl_err *err)
{
	return store_open(o->db ? o->db : STORE_DEFAULT_PATH, STORE_READONLY, out, err);
}

void cli_ref_split(const char *ref, char *owner, size_t n, const char **name)
{
	const char *slash = strchr(ref, '/');
	owner[0] = '\0';
	*name = ref;
	if (slash) {
		snprintf(owner, n, "%.*s", (int)(slash - ref), ref);
		*name = slash + 1;
	}
}

int cli_pick_experiment(store *s, const char *name, store_experiment *out, rl_err *err)
{
	if (name) {
		/* by id, else by name: yours, or OWNER/NAME */
		char *end;
		long long id = strtoll(name, &end, 10);
		if (*name && !*end && id > 0)
			return store_experiment_get(s, id, out, err);
		char owner[256];
		const char *nm;
		cli_ref_split(name, owner, sizeof owner, &nm);
		return store_experiment_find(s, nm, owner[0] ? owner : NULL, (int64_t)getuid(), out,
					     err);
	}
	store_experiment *v;
	size_t n;
	int rc = store_experiment_list(s, &v, &n, err);
	if (rc < 0)
		return rc;
	if (n == 0) {
		store_experiments_free(v, n);
		return rl_err_set(err, RL_ENOTFOUND, "%s holds no experiment yet", store_path(s));
	}
	/* Oldest first: the last one is the most recent. */
	*out = v[n - 1];
	memset(&v[n - 1], 0, sizeof v[n - 1]);
	store_experiments_free(v, n);
	return 0;
}

/* The trial's own error if it has one, else the last failed segment's. */
const char *cli_trial_error(const store_trial *t)
{
	return t->error ? t->error : t->last_error;
}

/* The trial resource has one encoder, shared with the HTTP API. */
json_t *cli_trial_json(const store_experiment *e, const store_trial *t)
{
	return api_json_trial(e, t);
}

json_t *cli_json_real(double v)
{
	return api_json_real(v);
}

json_t *cli_json_str(const char *s)
{
	return api_json_str(s);
}

json_t *cli_json_params(const char *params_json)
{
	return api_json_params(params_json);
}

const char *cli_params_text(const char *params_json, char *buf, size_t n)
{
	if (!params_json)
		return "{}";
	json_error_t je;
	json_t *j = json_loads(params_json, JSON_DECODE_ANY, &je);
	if (!j)
		return params_json;
	size_t need = json_dumpb(j, buf, n, JSON_COMPACT | JSON_REAL_PRECISION(6));
	json_decref(j);
	if (need == 0 || need >= n)
		return params_json;
	buf[need] = '\0';
	return buf;
}

int cli_json_print(json_t *j, rl_err *err)
{
	if (!j)
		return rl_err_set(err, RL_ENOMEM, "building JSON output");
	/* 16 significant digits: 0.1 prints as 0.1 (17 would print
	 * 0.10000000000000001) and values that came from decimal text read back
	 * exactly; only results of arithmetic may lose their last bit. */
	int r = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(16));
	json_decref(j);
	if (r != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0)
		return rl_err_set(err, RL_EIO, "writing to standard output");
	return 0;
}

void cli_csv_field(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const char *p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

void cli_format_real(double v, char *buf, size_t len)
{
	if (isnan(v)) {
		snprintf(buf, len, "-");
		return;
	}
	/* Shortest of %.15g..%.17g that reads back exactly: 0.1 prints as 0.1. */
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void cli_format_value(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.6g", v);
}

void cli_csv_real(FILE *f, double v)
{
	if (isnan(v))
		return;
	char buf[40];
	cli_format_real(v, buf, sizeof buf);
	fputs(buf, f);
}

void cli_format_time(double t, char *buf, size_t len)
{
	if (isnan(t)) {
		snprintf(buf, len, "-");
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%.0f", t);
}

void cli_format_duration(double s, char *buf, size_t len)
{
	if (isnan(s) || s < 0) {
		snprintf(buf, len, "-");
		return;
	}
	long long v = (long long)(s + 0.5);
	if (v >= 86400)
		snprintf(buf, len, "%lldd%02lldh", v / 86400, v % 86400 / 3600);
	else if (v >= 3600)
		snprintf(buf, len, "%lldh%02lldm", v / 3600, v % 3600 / 60);
	else if (v >= 60)
		snprintf(buf, len, "%lldm%02llds", v / 60, v % 60);
	else
		snprintf(buf, len, "%llds", v);
}

double cli_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void cli_front_objectives_text(json_t *front, char *buf, size_t n)
{
	json_t *objs = json_object_get(front, "objectives"), *o;
	size_t i, at = 0;
	buf[0] = '\0';
	json_array_foreach(objs, i, o) {
		const char *m = json_string_value(json_object_get(o, "metric"));
		const char *mode = json_string_value(json_object_get(o, "mode"));
		int k = snprintf(buf + at, n - at, "%s%s %s", i ? ", " : "", mode ? mode : "?",
				 m ? m : "?");
		if (k < 0 || (size_t)k >= n - at)
			break; /* truncated: what fits stays */
		at += (size_t)k;
	}
}

static int front_row_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct cli_front_row *)a)->trial_id;
	int64_t y = ((const struct cli_front_row *)b)->trial_id;
	return (x > y) - (x < y);
}

int cli_front_values_init(cli_front_values *fv, json_t *front)
{
	json_t *trials = json_object_get(front, "trials"), *t;
	size_t i;
	fv->n = 0;
	fv->rows = calloc(json_array_size(trials) + 1, sizeof *fv->rows);
	if (!fv->rows)
		return RL_ENOMEM;
	json_array_foreach(trials, i, t) {
		fv->rows[fv->n].trial_id = (int64_t)json_integer_value(json_object_get(t, "trial_id"));
		fv->rows[fv->n++].trial = t;
	}
	qsort(fv->rows, fv->n, sizeof *fv->rows, front_row_cmp);
	return 0;
}

void cli_front_values_fini(cli_front_values *fv)
{
	free(fv->rows);
	fv->rows = NULL;
	fv->n = 0;
}

json_t *cli_front_values_get(const cli_front_values *fv, int64_t trial_id)
{
	struct cli_front_row key = {.trial_id = trial_id};
	const struct cli_front_row *r =
		fv->n ? bsearch(&key, fv->rows, fv->n, sizeof *fv->rows, front_row_cmp) : NULL;
	return r ? r->trial : NULL;
}

void cli_front_values_text(const cli_front_values *fv, int64_t trial_id, char *buf, size_t n)
{
	json_t *r = cli_front_values_get(fv, trial_id);
	json_t *vals = r ? json_object_get(r, "values") : NULL;
	if (!json_array_size(vals)) {
		snprintf(buf, n, "-");
		return;
	}
	size_t i, at = 0;
	json_t *v;
	buf[0] = '\0';
	json_array_foreach(vals, i, v) {
		char one[40];
		cli_format_value(json_is_number(v) ? json_number_value(v) : NAN, one, sizeof one);
		int k = snprintf(buf + at, n - at, "%s%s", i ? ", " : "", one);
		if (k < 0 || (size_t)k >= n - at)
			return;
		at += (size_t)k;
	}
	if (json_is_true(json_object_get(r, "front")))
		snprintf(buf + at, n - at, " *");
}
