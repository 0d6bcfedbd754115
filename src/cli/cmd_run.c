/*
 * cmd_run.c - relish run SPEC [SPEC...]: run experiments in the foreground
 * on this machine's devices (src/live/driver.h), with live progress, then
 * print each experiment's best trial exactly as `relish best` does.
 * Running the same command again on the same database resumes what a
 * killed or interrupted run left (src/live/recover.c).
 *
 * Exit status: 0 every experiment done with a best trial; 1 an experiment
 * produced no objective value, or a runtime failure; 2 bad spec or command
 * line (also: the name exists in the db with another spec); 4 state
 * database error (a failed write: the run stops, resumable); 5 another
 * relish run holds the database; 130 interrupted (SIGINT / SIGTERM).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "api/client.h"
#include "live/driver.h"
#include "serve/serve.h"
#include "spec/spec.h"

static const char usage[] =
	"relish run SPEC [SPEC...] [--db FILE] [--policy exclusive|pack|relish|tiresias|gandiva] "
	"[--order fifo|las|tiresias|fair] "
	"[--max-concurrent N] [--runs-dir DIR] [--devices FILE] [--restart] [--quiet] [--json] "
	"[--stats]";

static int run_help(void)
{
	printf("usage: %s\n\n"
	       "Runs experiments to completion, resuming any the database already holds.\n"
	       "  --db FILE            state database (default ./%s)\n"
	       "  --policy P           sharing policy for every experiment: exclusive, pack,\n"
	       "                       relish, tiresias or gandiva (default: the spec's;\n"
	       "                       docs/scheduling.md)\n"
	       "  --order O            queue order: fifo, las, tiresias or fair (default: the\n"
	       "                       spec's sharing.order; docs/scheduling.md)\n"
	       "  --max-concurrent N   segments running at once per experiment (default: the spec's)\n"
	       "  --runs-dir DIR       logs and checkpoints (default: relish-runs/ next to the db)\n"
	       "  --devices FILE       devices file instead of discovery (docs/gpu.md)\n"
	       "  --restart            forget what the database holds of these experiments\n"
	       "                       (trials, segments, metrics) and start them anew\n"
	       "  --quiet              no progress output\n"
	       "  --json               print the best trial(s) as JSON\n"
	       "  --stats              print wall time and relish's peak memory at the end\n"
	       "Running it again resumes.  A changed spec starts an experiment anew while\n"
	       "none of its trials has completed a segment (say, the command was fixed after\n"
	       "the first failures); after that a changed spec needs --restart.\n"
	       "Exit status: 0 done, 1 no trial finished with a value / runtime failure\n"
	       "(failures in words on stderr), 2 bad spec or usage, 4 state database error,\n"
	       "5 another relish run holds the database, "
	       "130 interrupted (run again to resume).\n",
	       usage, STORE_DEFAULT_PATH);
	return 0;
}

static double wall(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Print the best trial of experiment name through `relish best`. */
static int print_best(const char *db, const char *name, int json, rl_err *err)
{
	char *av[] = {"best", "--db", (char *)db, "--experiment", (char *)name,
		      json ? "--json" : NULL, NULL};
	return cmd_best(json ? 6 : 5, av, err);
}

enum { OPT_POLICY = 256, OPT_ORDER, OPT_MAXC, OPT_RUNS, OPT_DEVICES, OPT_QUIET, OPT_STATS,
       OPT_RESTART };

int cmd_run(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"db", required_argument, NULL, 'd'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{"policy", required_argument, NULL, OPT_POLICY},
		{"order", required_argument, NULL, OPT_ORDER},
		{"max-concurrent", required_argument, NULL, OPT_MAXC},
		{"runs-dir", required_argument, NULL, OPT_RUNS},
		{"devices", required_argument, NULL, OPT_DEVICES},
		{"quiet", no_argument, NULL, OPT_QUIET},
		{"stats", no_argument, NULL, OPT_STATS},
		{"restart", no_argument, NULL, OPT_RESTART},
		{NULL, 0, NULL, 0},
	};
	live_options lo;
	live_options_default(&lo);
	int json = 0, stats = 0, c;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'd': lo.db_path = optarg; break;
		case 'j': json = 1; break;
		case 'h': return run_help();
		case OPT_POLICY:
			if (sched_policy_from_name(optarg, &lo.policy) < 0)
				return cli_usage_error(err, usage, "--policy: expected %s, got '%s'",
						       sched_policy_list(), optarg);
			lo.policy_set = 1;
			break;
		case OPT_ORDER:
			if (sched_order_from_name(optarg, &lo.order) < 0)
				return cli_usage_error(err, usage, "--order: expected default, fifo, "
						       "las, tiresias or fair, got '%s'", optarg);
			lo.order_set = 1;
			break;
		case OPT_MAXC:
			lo.max_concurrent = (int)strtol(optarg, &end, 10);
			if (*end || lo.max_concurrent < 1)
				return cli_usage_error(err, usage, "--max-concurrent: expected a "
						       "positive integer, got '%s'", optarg);
			break;
		case OPT_RUNS: lo.runs_dir = optarg; break;
		case OPT_DEVICES: lo.devices_path = optarg; break;
		case OPT_QUIET: lo.quiet = 1; break;
		case OPT_STATS: stats = 1; break;
		case OPT_RESTART: lo.restart = 1; break;
		case ':':
			return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(err, usage, "missing SPEC");
	int first = optind;
	/* From here on a Ctrl-C or SIGTERM stops the run the documented way
	 * (exit 130), however early it comes. */
	live_signals_early();
	double t0 = wall();

	/* A service that owns this machine's devices would not know of our
	 * segments, nor we of its: both would use every device.  Found
	 * wherever its state folder is (serve/presence.c), or named. */
	pid_t spid;
	char saddr[200];
	if (serve_presence_find(&spid, saddr, sizeof saddr))
		return rl_err_set(err, RL_EBUSY,
				  "a relish service owns this machine's devices (pid %d, listening "
				  "on %s); submit to it with `relish submit --server %s %s`, or stop "
				  "it first", (int)spid, saddr, saddr, argv[first]);
	const char *srv, *from;
	if (api_client_pick(NULL, &srv, &from) &&
	    (strncmp(srv, "unix:", 5) != 0 || api_client_socket_answers(srv + 5)))
		return rl_err_set(err, RL_EBUSY,
				  "a relish service owns this machine's devices (%s, from %s); "
				  "submit to it with `relish submit %s`, or unset RELISH_SERVER if "
				  "that service runs elsewhere",
				  srv, from, argv[first]);

	/* Every spec is read and checked before anything is opened or
	 * created, so a typo never leaves a new database behind. */
	int n_specs = argc - first, rc = 0;
	spec **specs = calloc((size_t)n_specs, sizeof *specs);
	if (!specs)
		return rl_err_set(err, RL_ENOMEM, "reading specs");
	for (int i = 0; i < n_specs && rc == 0; i++) {
		if ((rc = spec_load(argv[first + i], &specs[i], err)) < 0) {
			/* A spec that cannot be read is a bad spec: exit 2. */
			if (rl_err_exit_code(rc) != 2 && rc != RL_ENOMEM)
				err->code = rc = RL_ESPEC;
		}
	}
	/* The driver opens the executors the specs name before anything is
	 * created (a cluster's partition that does not exist is said first). */
	lo.plan = specs;
	lo.n_plan = (size_t)n_specs;
	live *d = NULL;
	if (rc == 0)
		rc = live_new(&lo, &d, err);
	for (int i = 0; i < n_specs; i++) {
		/* live_add_experiment takes each spec, also when it fails. */
		if (rc == 0)
			rc = live_add_experiment(d, specs[i], err);
		else
			spec_free(specs[i]);
	}
	free(specs);
	if (rc < 0) {
		live_free(d);
		return rc;
	}
	rc = live_run(d, err);
	if (rc == 0) {
		int missing = 0;
		for (size_t i = 0; i < live_experiment_count(d); i++) {
			const char *name = live_experiment_name(d, i);
			if (!live_experiment_has_value(d, i)) {
				/* In words: which trials failed and how, not just
				 * that no value came (trials may have reported
				 * and then crashed). */
				char why[1400];
				live_experiment_outcome(d, i, why, sizeof why);
				fprintf(stderr, "relish run: %s: no trial finished with a value of its "
					"objective: %s\n", name, why);
				missing = 1;
				continue;
			}
			fflush(stderr);
			if ((rc = print_best(live_db_path(d), name, json, err)) < 0)
				break;
		}
		if (rc == 0 && missing)
			rc = 1;
	}
	if (stats)
		fprintf(stderr, "relish run: wall %.1f s, peak RSS %.1f MiB\n", wall() - t0,
			(double)live_max_rss_kib() / 1024.0);
	live_free(d);
	return rc;
}
