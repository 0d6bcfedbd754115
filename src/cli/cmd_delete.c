/*
 * cmd_delete.c - relish delete EXPERIMENT [--server ADDR | --db FILE]
 * [--json]: remove an experiment that has ended (done, cancelled, failed)
 * with its trials, segments, metrics, events and its folder of
 * checkpoints and logs, so that its owner may use the name again.
 *
 * On relish serve (DELETE /api/v1/experiments/REF): only its owner, root
 * or the admin group may, and a running one is refused (cancel it first).
 * With --db, in a `relish run` database: opened as its driver would open
 * it, so it is refused while a relish run holds the file; the folder is
 * the one its segments' logs are in.
 *
 * EXPERIMENT: an id, a name (yours, else the only one so named) or
 * OWNER/NAME.  Exit status: 0 removed; 1 it still runs; 3 no such
 * experiment; 5 a relish run holds the database; 6 refused; 7 no server.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_server.h"
#include "common/fsutil.h"
#include "serve/serve.h"

static const char usage[] = "relish delete EXPERIMENT [--server ADDR | --db FILE] [--json]";

static int delete_local(const char *db, const char *ref, int json, rl_err *err)
{
	store *st;
	int rc = store_open(db, STORE_MUST_EXIST | STORE_DRIVER, &st, err);
	if (rc < 0)
		return rc;
	store_experiment e;
	if ((rc = cli_pick_experiment(st, ref, &e, err)) < 0) {
		store_close(st);
		return rc;
	}
	char dir[PATH_MAX];
	if ((rc = serve_experiment_folder(st, &e, NULL, dir, sizeof dir, err)) == 0)
		rc = store_experiment_delete(st, e.id, err);
	store_close(st);
	if (rc == 0 && dir[0] && rl_remove_tree(dir) < 0)
		fprintf(stderr, "relish delete: %s: removed from %s, but not all of its folder %s (%m)\n",
			e.name, db, dir);
	if (rc == 0) {
		if (json)
			printf("{\"id\": %lld, \"experiment\": \"%s\", \"deleted\": true}\n",
			       (long long)e.id, e.name);
		else
			printf("deleted experiment %lld (%s)%s%s\n", (long long)e.id, e.name,
			       dir[0] ? " and its folder " : "", dir);
	}
	store_experiment_fini(&e);
	return rc;
}

enum { OPT_SERVER = 256, OPT_DB };

int cmd_delete(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"server", required_argument, NULL, OPT_SERVER},
		{"db", required_argument, NULL, OPT_DB},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *server = NULL, *db = NULL;
	int json = 0, c;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER: server = optarg; break;
		case OPT_DB: db = optarg; break;
		case 'j': json = 1; break;
		case 'h':
			printf("usage: %s\n\nRemoves an experiment that has ended (done, cancelled,\n"
			       "failed): its trials, segments, metrics, events and its folder of\n"
			       "checkpoints and logs; its name is then free for its owner again.\n"
			       "EXPERIMENT: an id, a name (yours, else the only one so named) or\n"
			       "OWNER/NAME.  On relish serve only its owner, root or the admin group\n"
			       "may, and a running one must be cancelled first; --db FILE removes\n"
			       "it from a relish run database (refused while a relish run holds it).\n"
			       "Exit status: 0 removed, 1 still running, 3 not found, 5 database in\n"
			       "use, 6 refused, 7 no server reachable.\n", usage);
			return 0;
		case ':':
			return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(err, usage, "which experiment? give its id or name");
	if (optind + 1 < argc)
		return cli_usage_error(err, usage, "unexpected argument '%s'", argv[optind + 1]);
	if (db && server)
		return cli_usage_error(err, usage, "--db and --server: one or the other");
	if (db)
		return delete_local(db, argv[optind], json, err);
	api_client *cl;
	int rc = cli_server_client(server, &cl, err);
	if (rc < 0)
		return rc;
	char path[1024];
	cli_server_path(path, sizeof path, "/api/v1/experiments/", argv[optind], NULL);
	json_t *ans = NULL;
	rc = api_client_json(cl, "DELETE", path, NULL, &ans, err);
	api_client_free(cl);
	if (rc < 0)
		return rc;
	if (json)
		return cli_json_print(ans, err);
	printf("deleted experiment %lld (%s)\n",
	       (long long)json_integer_value(json_object_get(ans, "id")),
	       json_string_value(json_object_get(ans, "experiment")));
	json_decref(ans);
	return 0;
}
