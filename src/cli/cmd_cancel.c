/*
 * cmd_cancel.c - relish cancel EXPERIMENT [--server ADDR | --db FILE]
 * [--json]: cancel an experiment on relish serve (POST
 * /api/v1/experiments/ID/cancel), by id or name.  Only its owner, root or
 * a member of the service's admin group may; the service says why when it
 * refuses.
 *
 * With --db, in the database itself, while nothing runs on it (opened as
 * its driver would open it: refused while a service or a relish run holds
 * it): the experiment is marked cancelled, so the next start does not
 * resume it.  This is the admin's way out when the service cannot run an
 * experiment away (one that fills the disk each time it resumes): stop the
 * service, free space, cancel, start it again.  Whoever can write the
 * database file may (a service's is root's, mode 0600).
 *
 * Exit status: 0 cancelled; 1 finished already; 3 no such experiment;
 * 5 something holds the database; 6 refused (not the owner); 7 no server
 * reachable.
 */
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_server.h"

static const char usage[] = "relish cancel EXPERIMENT [--server ADDR | --db FILE] [--json]";

enum { OPT_SERVER = 256, OPT_DB };

static int cancel_local(const char *db, const char *ref, int json, rl_err *err)
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
	if (e.status != EXP_RUNNING) {
		rc = rl_err_set(err, RL_EEXISTS, "experiment %lld (%s) is %s already", (long long)e.id,
				e.name, exp_status_name(e.status));
	} else {
		struct passwd *pw = getpwuid(getuid());
		char msg[200];
		snprintf(msg, sizeof msg, "cancelled by %s in the database (relish cancel --db)",
			 pw ? pw->pw_name : "?");
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		double now = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		rc = store_begin(st, err);
		if (rc == 0 && (rc = store_experiment_set_status(st, e.id, EXP_CANCELLED, now, err)) == 0 &&
		    (rc = store_event_append(st, now, e.id, 0, 0, "experiment.cancelled", msg, NULL,
					     err)) == 0)
			rc = store_commit(st, err);
		if (rc < 0)
			store_rollback(st);
	}
	store_close(st);
	if (rc == 0) {
		if (json)
			printf("{\"id\": %lld, \"experiment\": \"%s\", \"cancelled\": true}\n",
			       (long long)e.id, e.name);
		else
			printf("cancelled experiment %lld (%s) in %s\n", (long long)e.id, e.name, db);
	}
	store_experiment_fini(&e);
	return rc;
}

int cmd_cancel(int argc, char **argv, rl_err *err)
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
			printf("usage: %s\n\nCancels an experiment (its id or name) on relish serve:\n"
			       "queued segments are dropped, running ones stopped.  Only its owner,\n"
			       "root or the service's admin group may.  --db FILE marks it\n"
			       "cancelled in a database nothing runs on (a stopped service's\n"
			       "STATE/relish.db): the next start does not resume it.\n"
			       "Exit status: 0 cancelled, 1 finished already, 3 not found,\n"
			       "5 the database is in use, 6 refused, 7 no server reachable.\n", usage);
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
		return cancel_local(db, argv[optind], json, err);
	api_client *cl;
	int rc = cli_server_client(server, &cl, err);
	if (rc < 0)
		return rc;
	char path[1024];
	cli_server_path(path, sizeof path, "/api/v1/experiments/", argv[optind], "/cancel");
	json_t *ans = NULL;
	rc = api_client_json(cl, "POST", path, NULL, &ans, err);
	api_client_free(cl);
	if (rc < 0)
		return rc;
	if (json)
		return cli_json_print(ans, err);
	printf("cancelled experiment %lld (%s)\n",
	       (long long)json_integer_value(json_object_get(ans, "id")),
	       json_string_value(json_object_get(ans, "experiment")));
	json_decref(ans);
	return 0;
}
