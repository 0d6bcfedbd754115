/*
 * cmd_cancel.c - relish cancel EXPERIMENT [--server ADDR] [--json]: cancel
 * an experiment on relish serve (POST /api/v1/experiments/ID/cancel), by
 * id or name.  Only its owner, root or a member of the service's admin
 * group may; the service says why when it refuses.
 *
 * Exit status: 0 cancelled; 1 finished already; 3 no such experiment;
 * 6 refused (not the owner); 7 no server reachable.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_server.h"

static const char usage[] = "relish cancel EXPERIMENT [--server ADDR] [--json]";

enum { OPT_SERVER = 256 };

int cmd_cancel(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"server", required_argument, NULL, OPT_SERVER},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *server = NULL;
	int json = 0, c;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER: server = optarg; break;
		case 'j': json = 1; break;
		case 'h':
			printf("usage: %s\n\nCancels an experiment (its id or name) on relish serve:\n"
			       "queued segments are dropped, running ones stopped.  Only its owner,\n"
			       "root or the service's admin group may.\n"
			       "Exit status: 0 cancelled, 1 finished already, 3 not found,\n"
			       "6 refused, 7 no server reachable.\n", usage);
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
