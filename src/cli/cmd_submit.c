/*
 * cmd_submit.c - relish submit SPEC... [--server ADDR] [--follow] [--json]:
 * send experiment specs to relish serve (POST /api/v1/experiments), which
 * validates them, records them and runs their trials as you.  Prints one
 * line per spec, "ID NAME", once the service has committed it; with
 * --follow it then prints each trial's progress until every experiment
 * has ended, and each one's best trial as `relish best` does.
 *
 * The spec is sent as text with the name you gave it (so a bad spec is
 * reported as `relish validate` reports it, FILE:LINE:COL) and your
 * current folder (where its relative paths start).
 *
 * Exit status: 0 all submitted (and, with --follow, all done with a
 * value); 1 an experiment failed, was cancelled or has no value; 2 a bad
 * spec or usage; 6 refused (not permitted); 7 no server reachable.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "api/encode.h"
#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_server.h"
#include "common/logtext.h"
#include "spec/spec.h"

#define SPEC_MAX_BYTES (4u << 20)
#define FOLLOW_POLL_MS 500

static const char usage[] =
	"relish submit SPEC [SPEC...] [--name NAME] [--server ADDR] [--follow] [--json]";

static int submit_help(void)
{
	printf("usage: %s\n\n"
	       "Submits experiments to relish serve; their trials run as you.\n"
	       "Prints \"ID NAME\" per spec once the service has recorded it.\n"
	       "  --name NAME     the experiment's name instead of the spec's (one SPEC);\n"
	       "                  names are yours: another user's of the same name is another\n"
	       "  --server ADDR   the service (unix:PATH, PATH or HOST:PORT; default\n"
	       "                  $RELISH_SERVER, else %s)\n"
	       "  --follow        print trial progress until the experiments end, then the best\n"
	       "  --json          print each submitted experiment as JSON instead\n"
	       "Exit status: 0 submitted (with --follow: done), 1 failed, cancelled or no value,\n"
	       "2 bad spec or usage, 6 refused, 7 no server reachable.\n",
	       usage, API_DEFAULT_SOCKET);
	return 0;
}

static int read_file(const char *path, char **out, rl_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rl_err_sys(err, errno == ENOENT ? RL_ENOTFOUND : RL_EIO, errno,
				  "%s: cannot open", path);
	char *buf = malloc(SPEC_MAX_BYTES + 1);
	size_t len = buf ? fread(buf, 1, SPEC_MAX_BYTES + 1, f) : 0;
	int bad = ferror(f);
	fclose(f);
	if (!buf)
		return rl_err_set(err, RL_ENOMEM, "%s", path);
	if (bad || len > SPEC_MAX_BYTES) {
		free(buf);
		return rl_err_set(err, bad ? RL_EIO : RL_ESPEC, "%s: %s", path,
				  bad ? "read error" : "larger than 4 MiB; not a spec");
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcasecmp(s + a - b, suffix);
}

static int submit_one(api_client *c, const char *path, const char *rename, int json,
		      int64_t *id, char *name, size_t name_len, rl_err *err)
{
	char *text = NULL;
	int rc = read_file(path, &text, err);
	if (rc < 0)
		return rc == RL_ENOMEM ? rc : rl_err_set(err, RL_ESPEC, "%s", err->msg);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof cwd))
		snprintf(cwd, sizeof cwd, "/");
	/* Relative paths in the spec start at its own folder, as for
	 * `relish run`: send that folder, absolute. */
	char dir[PATH_MAX + 8];
	const char *slash = strrchr(path, '/');
	if (path[0] == '/')
		snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
	else if (slash)
		snprintf(dir, sizeof dir, "%s/%.*s", cwd, (int)(slash - path), path);
	else
		snprintf(dir, sizeof dir, "%s", cwd);
	char *real = realpath(dir, NULL);
	json_t *body = json_pack("{s:s, s:s, s:s, s:s}", "spec", text, "name", path, "dir",
				 real ? real : dir, "format", ends_with(path, ".json") ? "json" : "yaml");
	free(real);
	free(text);
	if (!body)
		return rl_err_set(err, RL_ENOMEM, "%s", path);
	if (rename)
		json_object_set_new(body, "experiment", json_string(rename));
	/* ${NAME} in trial.mounts is expanded by the service from what the
	 * submission declares, never from its own environment: declare the
	 * ones the spec names that this environment has. */
	json_t *env = json_object();
	for (const char *p = json_string_value(json_object_get(body, "spec")); p && env &&
	     (p = strstr(p, "${"));) {
		p += 2;
		size_t nl = strcspn(p, "}");
		char var[128];
		if (p[nl] == '}' && nl > 0 && nl < sizeof var) {
			memcpy(var, p, nl);
			var[nl] = '\0';
			const char *v = getenv(var);
			if (v && *v)
				json_object_set_new(env, var, json_string(v));
		}
	}
	if (env && json_object_size(env))
		json_object_set_new(body, "env", env);
	else
		json_decref(env);
	json_t *ans = NULL;
	rc = api_client_json(c, "POST", "/api/v1/experiments", body, &ans, err);
	json_decref(body);
	if (rc < 0)
		return rc;
	*id = (int64_t)json_integer_value(json_object_get(ans, "id"));
	snprintf(name, name_len, "%s", json_string_value(json_object_get(ans, "experiment"))
					       ? json_string_value(json_object_get(ans, "experiment"))
					       : "?");
	if (json) {
		rc = cli_json_print(ans, err);
		ans = NULL;
	} else {
		printf("%lld %s\n", (long long)*id, name);
		fflush(stdout);
	}
	json_decref(ans);
	return rc;
}

/* ---- --follow ---- */

typedef struct followed {
	int64_t id;
	char name[128];
	double cursor;       /* trials ?after= */
	long long last_event; /* events ?after= */
	int ended;
	int paused;          /* the service said so last round */
	char status[16];
	/* last status and resource printed per trial id */
	size_t n, cap;
	struct seen {
		int64_t trial;
		char status[16];
		double resource;
	} *seen;
} followed;

static struct seen *seen_slot(followed *f, int64_t trial)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->seen[i].trial == trial)
			return &f->seen[i];
	if (f->n == f->cap) {
		size_t nc = f->cap ? f->cap * 2 : 32;
		struct seen *v = realloc(f->seen, nc * sizeof *v);
		if (!v)
			return NULL;
		f->seen = v;
		f->cap = nc;
	}
	struct seen *s = &f->seen[f->n++];
	memset(s, 0, sizeof *s);
	s->trial = trial;
	s->resource = NAN;
	return s;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* One round for experiment f: new trial states and the experiment's own. */
static int follow_round(api_client *c, followed *f, rl_err *err)
{
	char path[512];
	if (isnan(f->cursor))
		snprintf(path, sizeof path, "/api/v1/experiments/%lld/trials", (long long)f->id);
	else
		snprintf(path, sizeof path, "/api/v1/experiments/%lld/trials?after=%.17g",
			 (long long)f->id, f->cursor);
	json_t *ans;
	int rc = api_client_json(c, "GET", path, NULL, &ans, err);
	if (rc < 0)
		return rc;
	const char *cur = json_string_value(json_object_get(ans, "cursor"));
	if (cur)
		f->cursor = strtod(cur, NULL);
	size_t i;
	json_t *tj;
	json_array_foreach(json_object_get(ans, "trials"), i, tj)
	{
		store_trial t;
		if (api_trial_from_json(tj, &t, err) < 0) {
			json_decref(ans);
			return RL_EPARSE;
		}
		struct seen *s = seen_slot(f, t.id);
		const char *st = trial_status_name(t.status);
		if (s && (strcmp(s->status, st) != 0 ||
			  (!isnan(t.resource_done) && t.resource_done != s->resource))) {
			char res[40], obj[40], why[4096];
			cli_format_real(t.resource_done, res, sizeof res);
			cli_format_real(t.objective, obj, sizeof obj);
			/* what the trial printed, without its control bytes */
			rl_term_text(t.error, why, sizeof why);
			printf("%s: trial %lld %s at resource %s, objective %s%s%s\n", f->name,
			       (long long)t.id, st, res, obj, t.error ? ": " : "", why);
			snprintf(s->status, sizeof s->status, "%s", st);
			s->resource = t.resource_done;
		}
		store_trial_fini(&t);
	}
	json_decref(ans);
	/* What `relish run` prints beside the trials' lines, the service
	 * stores as events: a line that missed the metric format, why the
	 * experiment stopped, how it ended. */
	/* (a page at a time: the service answers at most a page) */
	int more;
	do {
		snprintf(path, sizeof path, "/api/v1/experiments/%lld/events?after=%lld", (long long)f->id,
			 f->last_event);
		if ((rc = api_client_json(c, "GET", path, NULL, &ans, err)) < 0)
			return rc;
		more = json_is_true(json_object_get(ans, "more"));
		json_t *ev;
		json_array_foreach(json_object_get(ans, "events"), i, ev)
		{
			const char *kind = json_string_value(json_object_get(ev, "kind"));
			const char *msg = json_string_value(json_object_get(ev, "message"));
			long long tid = (long long)json_integer_value(json_object_get(ev, "trial_id"));
			f->last_event = (long long)json_integer_value(json_object_get(ev, "id"));
			if (!kind || !msg)
				continue;
			char shown[4096];
			msg = rl_term_text(msg, shown, sizeof shown);
			if (!strcmp(kind, "trial.warning"))
				printf("%s: trial %lld: %s\n", f->name, tid, msg);
			else if (!strcmp(kind, "experiment.failed"))
				printf("%s: stopped: %s\n", f->name, msg);
			else if (!strcmp(kind, "experiment.done"))
				printf("%s: %s\n", f->name, msg);
		}
		json_decref(ans);
	} while (more);
	snprintf(path, sizeof path, "/api/v1/experiments/%lld", (long long)f->id);
	if ((rc = api_client_json(c, "GET", path, NULL, &ans, err)) < 0)
		return rc;
	const char *st = json_string_value(json_object_get(ans, "status"));
	snprintf(f->status, sizeof f->status, "%s", st ? st : "?");
	f->ended = st && strcmp(st, "running") != 0;
	/* A pause for want of space is the service's word (the event may be
	 * the write that failed): said when it starts and when it ends (an
	 * experiment done since was resumed, between two rounds maybe; one
	 * cancelled while paused was not, and its end says so). */
	int paused = json_is_true(json_object_get(ans, "paused"));
	if (paused != f->paused && (!f->ended || (!paused && !strcmp(f->status, "done"))))
		printf(paused ? "%s: paused for want of space on the service; it resumes from its "
				"checkpoints once space is free\n"
			      : "%s: resumed\n", f->name);
	f->paused = paused;
	json_decref(ans);
	fflush(stdout);
	return 0;
}

static int follow(api_client *c, followed *fv, size_t n, rl_err *err)
{
	for (;;) {
		int all = 1;
		for (size_t i = 0; i < n; i++) {
			if (fv[i].ended)
				continue;
			int rc = follow_round(c, &fv[i], err);
			if (rc < 0)
				return rc;
			if (fv[i].ended)
				printf("%s: %s\n", fv[i].name, fv[i].status);
			else
				all = 0;
		}
		if (all)
			break;
		sleep_ms(FOLLOW_POLL_MS);
	}
	int worst = 0;
	for (size_t i = 0; i < n; i++) {
		char path[256];
		snprintf(path, sizeof path, "/api/v1/experiments/%lld/best", (long long)fv[i].id);
		json_t *b;
		rl_err e2;
		rl_err_clear(&e2);
		if (api_client_json(c, "GET", path, NULL, &b, &e2) < 0) {
			/* One that stopped has said why (its events, above);
			 * "no trial with a value" would only repeat it. */
			if (e2.code != RL_ENOTFOUND || !strcmp(fv[i].status, "done"))
				fprintf(stderr, "relish submit: %s: %s\n", fv[i].name, e2.msg);
			worst = 1;
			continue;
		}
		const json_t *o = json_object_get(b, "objective");
		char v[40], r[40], pbuf[1024];
		cli_format_real(json_number_value(json_object_get(o, "value")), v, sizeof v);
		cli_format_real(json_number_value(json_object_get(b, "resource")), r, sizeof r);
		char *params = json_dumps(json_object_get(b, "params"), JSON_COMPACT |
					  JSON_REAL_PRECISION(17));
		printf("%s: trial %lld (index %lld, %s): %s = %s (%s) at resource %s, params %s\n",
		       fv[i].name, (long long)json_integer_value(json_object_get(b, "trial_id")),
		       (long long)json_integer_value(json_object_get(b, "index")),
		       json_string_value(json_object_get(b, "status")),
		       json_string_value(json_object_get(o, "metric")), v,
		       json_string_value(json_object_get(o, "mode")), r,
		       cli_params_text(params, pbuf, sizeof pbuf));
		free(params);
		json_decref(b);
		if (strcmp(fv[i].status, "done") != 0)
			worst = 1;
	}
	fflush(stdout);
	return worst;
}

enum { OPT_SERVER = 256, OPT_FOLLOW, OPT_NAME };

int cmd_submit(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"server", required_argument, NULL, OPT_SERVER},
		{"follow", no_argument, NULL, OPT_FOLLOW},
		{"name", required_argument, NULL, OPT_NAME},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *server = NULL, *rename = NULL;
	int json = 0, do_follow = 0, c;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER: server = optarg; break;
		case OPT_FOLLOW: do_follow = 1; break;
		case OPT_NAME: rename = optarg; break;
		case 'j': json = 1; break;
		case 'h': return submit_help();
		case ':':
			return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(err, usage, "missing SPEC");
	if (rename && optind + 1 < argc)
		return cli_usage_error(err, usage, "--name names one experiment: give one SPEC");
	if (rename && !spec_name_valid(rename))
		return cli_usage_error(err, usage, "--name: expected 1-64 characters of A-Z a-z 0-9 "
				       "_ . -, got '%s'", rename);
	api_client *cl;
	int rc = cli_server_client(server, &cl, err);
	if (rc < 0)
		return rc;
	size_t n = (size_t)(argc - optind), ok = 0;
	followed *fv = calloc(n, sizeof *fv);
	if (!fv) {
		api_client_free(cl);
		return rl_err_set(err, RL_ENOMEM, "submit");
	}
	int first_rc = 0;
	rl_err first;
	rl_err_clear(&first);
	for (size_t i = 0; i < n; i++) {
		rl_err e2;
		rl_err_clear(&e2);
		followed *f = &fv[ok];
		f->cursor = NAN;
		int r = submit_one(cl, argv[optind + i], rename, json, &f->id, f->name, sizeof f->name,
				   &e2);
		if (r < 0) {
			if (r == RL_ENOSERVER) {
				/* Nothing else can be submitted either. */
				first_rc = r;
				first = e2;
				break;
			}
			/* The others are still tried; the first error decides the exit. */
			fprintf(stderr, "relish submit: %s\n", e2.msg);
			if (!first_rc) {
				first_rc = r;
				first = e2;
			}
			continue;
		}
		ok++;
	}
	if (first_rc == RL_ENOSERVER || (first_rc && !ok)) {
		*err = first;
		rc = first_rc;
		if (first_rc != RL_ENOSERVER)
			rc = rl_err_exit_code(first_rc); /* already printed */
	} else if (do_follow && ok) {
		rc = follow(cl, fv, ok, err);
		if (rc == 0 && first_rc)
			rc = rl_err_exit_code(first_rc);
	} else if (first_rc) {
		rc = rl_err_exit_code(first_rc);
	}
	for (size_t i = 0; i < n; i++)
		free(fv[i].seen);
	free(fv);
	api_client_free(cl);
	return rc;
}
