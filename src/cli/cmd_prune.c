/*
 * cmd_prune.c - relish prune [--server ADDR | --state DIR | --db FILE]
 * [--age DURATION] [--keep N] [--config FILE] [--archive DIR] [--dry-run]
 * [--json]: the retention rule on demand.  Each ended experiment the rule
 * no longer keeps is exported (ARCHIVE/OWNER/ID-NAME.json: the trial
 * objects of `relish export --format json`), read back, and only then
 * removed with its rows and its folder; the database gives the pages back
 * (auto_vacuum=INCREMENTAL).  A running experiment is never a candidate;
 * one whose export fails stays.
 *
 * "prune", not "gc": what goes is a user's finished work chosen by a rule
 * (age, count), archived first, not unreachable garbage that nobody could
 * miss; the name says something is cut back on purpose.
 *
 * Where it runs: while a service runs on the database, through it (POST
 * /api/v1/prune): the service is the database's one driver, so it removes
 * on its own loop what it no longer holds, logs it in its log, and the
 * archive is the one its config names.  With the service stopped, --state
 * DIR (or --db FILE, a relish run database) opens the database as its
 * driver, refused while a service or a relish run holds it.
 *
 * Exit status: 0 every chosen experiment exported and removed (or none
 * chosen; --dry-run: listed); 1 some export or removal failed (those
 * stay; the others went); 2 bad command line or no rule; 3 no such
 * database; 4 the database cannot be read; 5 the database is held by a
 * service or a relish run (go through the service); 6 refused (not root
 * nor the admin group); 7 no service reachable.
 */
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/client.h"
#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_server.h"
#include "common/units.h"
#include "serve/serve.h"

static const char usage[] =
	"relish prune [--server ADDR | --state DIR | --db FILE] [--age DURATION] [--keep N]\n"
	"       [--config FILE] [--archive DIR] [--dry-run] [--json]";

typedef struct totals {
	size_t removed, failed, would;
	json_t *items;
} totals;

static void print_items(const json_t *items, int dry)
{
	size_t i;
	const json_t *it;
	json_array_foreach(items, i, it) {
		const char *name = json_string_value(json_object_get(it, "experiment"));
		const char *owner = json_string_value(json_object_get(it, "owner"));
		const char *why = json_string_value(json_object_get(it, "why"));
		const char *error = json_string_value(json_object_get(it, "error"));
		long long id = (long long)json_integer_value(json_object_get(it, "id"));
		if (error)
			printf("kept     %lld %s (%s): %s\n", id, name ? name : "?", owner ? owner : "-",
			       error);
		else if (dry)
			printf("would go %lld %s (%s): by %s\n", id, name, owner ? owner : "-", why);
		else
			printf("removed  %lld %s (%s): by %s, %lld trials exported to %s\n", id, name,
			       owner ? owner : "-", why,
			       (long long)json_integer_value(json_object_get(it, "trials")),
			       json_string_value(json_object_get(it, "archive")));
	}
}

static void add(totals *t, const json_t *items, size_t removed, size_t failed, size_t would)
{
	t->removed += removed;
	t->failed += failed;
	t->would += would;
	json_array_extend(t->items, (json_t *)items);
}

/* Through the service: 100 a call, again while more are left and the
 * last call removed some (a call that only fails would fail again). */
static int prune_server(const char *server, double age, long keep, int dry, totals *t,
			rl_err *err)
{
	api_client *cl;
	int rc = cli_server_client(server, &cl, err);
	if (rc < 0)
		return rc;
	json_t *body = json_pack("{s:b}", "dry_run", dry);
	if (age > 0)
		json_object_set_new(body, "age", json_real(age));
	if (keep > 0)
		json_object_set_new(body, "keep", json_integer(keep));
	for (;;) {
		json_t *ans = NULL;
		if ((rc = api_client_json(cl, "POST", "/api/v1/prune", body, &ans, err)) < 0)
			break;
		size_t removed = (size_t)json_integer_value(json_object_get(ans, "removed"));
		add(t, json_object_get(ans, "experiments"), removed,
		    (size_t)json_integer_value(json_object_get(ans, "failed")),
		    (size_t)json_integer_value(json_object_get(ans, "would")));
		int more = json_is_true(json_object_get(ans, "more"));
		json_decref(ans);
		if (!more || !removed)
			break;
	}
	json_decref(body);
	api_client_free(cl);
	return rc;
}

/* Without a service: this process is the database's driver. */
static int prune_local(const char *db, const char *runs, const char *archive, double age,
		       long keep, int dry, totals *t, rl_err *err)
{
	store *st;
	int rc = store_open(db, STORE_MUST_EXIST | STORE_DRIVER, &st, err);
	if (rc == RL_EINUSE)
		return rl_err_set(err, rc, "%s; while it runs, prune through it: relish prune "
				  "without --state/--db (RELISH_SERVER or --server names it)", err->msg);
	if (rc < 0)
		return rc;
	char who[64]; /* for the log: a user name, one word */
	const struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name[0])
		snprintf(who, sizeof who, "%s", pw->pw_name);
	else
		snprintf(who, sizeof who, "uid%u", (unsigned)getuid());
	serve_prune_opts o = {.age_s = age, .keep = keep, .archive = archive, .runs = runs,
			      .dry_run = dry, .who = who};
	serve_prune_result res;
	rc = serve_prune(st, NULL, &o, (double)time(NULL), &res, err);
	if (rc == 0)
		add(t, res.items, res.removed, res.failed, res.would);
	serve_prune_result_fini(&res);
	store_close(st);
	return rc;
}

enum { OPT_SERVER = 256, OPT_STATE, OPT_DB, OPT_AGE, OPT_KEEP, OPT_CONFIG, OPT_ARCHIVE,
       OPT_DRY };

int cmd_prune(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"server", required_argument, NULL, OPT_SERVER},
		{"state", required_argument, NULL, OPT_STATE},
		{"db", required_argument, NULL, OPT_DB},
		{"age", required_argument, NULL, OPT_AGE},
		{"keep", required_argument, NULL, OPT_KEEP},
		{"config", required_argument, NULL, OPT_CONFIG},
		{"archive", required_argument, NULL, OPT_ARCHIVE},
		{"dry-run", no_argument, NULL, OPT_DRY},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *server = NULL, *state = NULL, *db = NULL, *cfg_path = NULL, *archive = NULL;
	double age = 0;
	long keep = 0;
	int json = 0, dry = 0, c, rc;
	char *end;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER: server = optarg; break;
		case OPT_STATE: state = optarg; break;
		case OPT_DB: db = optarg; break;
		case OPT_CONFIG: cfg_path = optarg; break;
		case OPT_ARCHIVE: archive = optarg; break;
		case OPT_DRY: dry = 1; break;
		case 'j': json = 1; break;
		case OPT_AGE:
			if (units_parse_duration(optarg, &age) < 0 || !(age > 0))
				return cli_usage_error(err, usage, "--age %s: expected a duration such "
						       "as 90d, 12h or 30m", optarg);
			break;
		case OPT_KEEP:
			keep = strtol(optarg, &end, 10);
			if (end == optarg || *end || keep < 1)
				return cli_usage_error(err, usage, "--keep %s: expected a whole count "
						       "of experiments per user, at least 1", optarg);
			break;
		case 'h':
			printf("usage: %s\n\nThe retention rule on demand: each ended experiment older "
			       "than --age (since\nit ended) or beyond each user's latest --keep is "
			       "exported to\nARCHIVE/OWNER/ID-NAME.json (relish export's JSON), read "
			       "back, then removed\nwith its rows and folder; the database file "
			       "shrinks.  Running experiments\nare never touched; one whose export "
			       "fails stays.  Without --age and --keep\nthe rule is the config's "
			       "retention: (the service's own, or --config FILE).\n"
			       "  (default)      through the running service (root or the admin "
			       "group);\n                 its archive is the one its config names\n"
			       "  --state DIR    a stopped service's state (DIR/relish.db, DIR/runs;\n"
			       "                 archive DIR/archive unless --archive or the config)\n"
			       "  --db FILE      a relish run database (archive beside it: archive/)\n"
			       "  --dry-run      list what would go; export and remove nothing\n"
			       "Exit status: 0 done (or nothing to do), 1 some export or removal "
			       "failed\n(those stay), 2 bad command line or no rule, 3 no such "
			       "database,\n4 unreadable database, 5 a service or relish run holds it "
			       "(prune\nthrough the service), 6 refused, 7 no service reachable.\n",
			       usage);
			return 0;
		case ':':
			return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error(err, usage, "unexpected argument '%s'", argv[optind]);
	if ((db != NULL) + (state != NULL) + (server != NULL) > 1)
		return cli_usage_error(err, usage, "--server, --state and --db: one of them");
	int local = db || state;
	if (!local && (archive || cfg_path))
		return cli_usage_error(err, usage, "%s: only with --state or --db; through the "
				       "service its own config decides (it writes the archive)",
				       archive ? "--archive" : "--config");
	serve_config cfg;
	serve_config_default(&cfg);
	if (cfg_path && (rc = serve_config_load(cfg_path, &cfg, err)) < 0) {
		serve_config_fini(&cfg);
		return rc;
	}
	if (local && !(age > 0) && keep <= 0) {
		if (!cfg.retention.enabled) {
			serve_config_fini(&cfg);
			return cli_usage_error(err, usage, "which experiments? give --age, --keep or "
					       "both%s", cfg_path ? ": the config has no retention:"
								: ", or --config with retention:");
		}
		age = cfg.retention.age_s;
		keep = cfg.retention.keep;
	}
	char path[PATH_MAX], runs[PATH_MAX], arch[PATH_MAX];
	if (state) {
		snprintf(path, sizeof path, "%s/relish.db", state);
		snprintf(runs, sizeof runs, "%s/runs", state);
		snprintf(arch, sizeof arch, "%s/archive", state);
	} else if (db) {
		char copy[PATH_MAX];
		snprintf(path, sizeof path, "%s", db);
		snprintf(copy, sizeof copy, "%s", db);
		snprintf(arch, sizeof arch, "%s/archive", dirname(copy));
		runs[0] = '\0';
	}
	if (archive)
		snprintf(arch, sizeof arch, "%s", archive);
	else if (cfg.retention.archive && state)
		snprintf(arch, sizeof arch, "%s", cfg.retention.archive);
	serve_config_fini(&cfg);

	totals t = {.items = json_array()};
	rc = local ? prune_local(path, runs, arch, age, keep, dry, &t, err)
		   : prune_server(server, age, keep, dry, &t, err);
	if (rc == 0) {
		if (json) {
			json_t *j = json_pack("{s:b, s:I, s:I, s:I, s:O}", "dry_run", dry, "removed",
					      (json_int_t)t.removed, "failed", (json_int_t)t.failed,
					      "would", (json_int_t)t.would, "experiments", t.items);
			rc = cli_json_print(j, err);
		} else {
			print_items(t.items, dry);
			if (dry)
				printf("%zu experiments would go (dry run: nothing exported or removed)\n",
				       t.would);
			else
				printf("%zu experiments exported and removed, %zu kept for errors\n",
				       t.removed, t.failed);
		}
		if (rc == 0 && t.failed)
			rc = rl_err_set(err, RL_EIO, "%zu experiments could not be exported or removed; "
					"they stay", t.failed);
	}
	json_decref(t.items);
	return rc;
}
