/*
 * cmd_serve.c - relish serve [--state DIR] [--listen ADDR]... [--config FILE]
 * [--devices FILE] [--log-requests]: the multi-user service (src/serve/,
 * docs/serve.md).  It runs in the foreground, logs one line per event on
 * stderr, stops gracefully on SIGTERM or SIGINT and reloads its config on
 * SIGHUP.
 *
 * Exit status: 0 after a clean stop; 1 a runtime failure (a listener or
 * the state folder in use); 2 a bad option or config; 4 a state database
 * error.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "serve/serve.h"

static const char usage[] = "relish serve [--state DIR] [--listen ADDR]... [--config FILE] "
			    "[--devices FILE] [--log-requests] [--log-file FILE]\n"
			    "       relish serve --read-only --db FILE [--listen ADDR]... [--config FILE]";

static int serve_help(void)
{
	printf("usage: %s\n\n"
	       "Runs the service that shares this machine's devices among every user's\n"
	       "experiments (submit with `relish submit`; docs/serve.md).\n"
	       "  --state DIR        database, runs and socket (default %s)\n"
	       "  --listen ADDR      unix:PATH or PATH (default unix:STATE/%s), or\n"
	       "                     127.0.0.1:PORT for HTTP; may be given up to %d times;\n"
	       "                     an address other than loopback needs a token file\n"
	       "  --config FILE      users' shares and limits, access, tokens (docs/serve.md)\n"
	       "  --devices FILE     devices file instead of discovery (docs/gpu.md)\n"
	       "  --log-requests     log every request, not only changes and errors\n"
	       "  --log-file FILE    log there instead of on stderr (appended; SIGHUP\n"
	       "                     opens it again, for logrotate)\n"
	       "  --read-only        show a database without running anything (the\n"
	       "                     dashboard of a `relish run`: --db FILE; listens on\n"
	       "                     %s unless --listen says otherwise)\n"
	       "  --db FILE          with --read-only: the database to show\n"
	       "Signals: SIGTERM/SIGINT stop gracefully (a second one stops segments at\n"
	       "once), SIGHUP reloads the config and the token file and reopens --log-file.\n"
	       "Exit status: 0 stopped, 1 runtime failure, 2 bad option or config,\n"
	       "4 state database error.\n",
	       usage, SERVE_DEFAULT_STATE, SERVE_SOCKET_NAME, API_MAX_LISTEN, SERVE_READONLY_LISTEN);
	return 0;
}

enum { OPT_STATE = 256, OPT_LISTEN, OPT_CONFIG, OPT_DEVICES, OPT_LOGREQ, OPT_RO, OPT_DB,
       OPT_LOGFILE };

int cmd_serve(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"state", required_argument, NULL, OPT_STATE},
		{"listen", required_argument, NULL, OPT_LISTEN},
		{"config", required_argument, NULL, OPT_CONFIG},
		{"devices", required_argument, NULL, OPT_DEVICES},
		{"log-requests", no_argument, NULL, OPT_LOGREQ},
		{"read-only", no_argument, NULL, OPT_RO},
		{"db", required_argument, NULL, OPT_DB},
		{"log-file", required_argument, NULL, OPT_LOGFILE},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	serve_options so;
	memset(&so, 0, sizeof so);
	int c, read_only = 0;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_STATE: so.state_dir = optarg; break;
		case OPT_LISTEN:
			if (so.n_listen == API_MAX_LISTEN)
				return cli_usage_error(err, usage, "--listen: at most %d addresses",
						       API_MAX_LISTEN);
			so.listen[so.n_listen++] = optarg;
			break;
		case OPT_CONFIG: so.config_path = optarg; break;
		case OPT_DEVICES: so.devices_path = optarg; break;
		case OPT_LOGREQ: so.log_reads = 1; break;
		case OPT_RO: read_only = 1; break;
		case OPT_DB: so.db_path = optarg; break;
		case OPT_LOGFILE: so.log_file = optarg; break;
		case 'h': return serve_help();
		case ':':
			return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cli_usage_error(err, usage, "unexpected argument '%s'", argv[optind]);
	if (read_only) {
		if (!so.db_path)
			return cli_usage_error(err, usage, "--read-only needs --db FILE");
		if (so.state_dir || so.devices_path)
			return cli_usage_error(err, usage, "--read-only runs nothing: no --state or "
					       "--devices");
		return serve_run_readonly(&so, err);
	}
	if (so.db_path)
		return cli_usage_error(err, usage, "--db FILE goes with --read-only (a service keeps "
				       "its database in --state DIR)");
	return serve_run(&so, err);
}
