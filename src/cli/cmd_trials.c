/*
 * cmd_trials.c - relish trials [--db F] [--json] [--experiment NAME]: one
 * row per trial of an experiment (the latest one by default): id, state,
 * resource reached, latest objective, parameters, how many segments it ran,
 * how many of them ran out of memory, and its last error.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"

static const char usage[] = "relish trials [--db FILE] [--json] [--experiment NAME]";

static void trial_line(const store_trial *t)
{
	char res[40], obj[40];
	cli_format_real(t->resource_done, res, sizeof res);
	cli_format_real(t->objective, obj, sizeof obj);
	const char *error = cli_trial_error(t);
	/* One line per trial: keep only the first line of a multi-line error. */
	int elen = error ? (int)strcspn(error, "\r\n") : 1;
	printf("%6lld  %5d  %-9s  %8s  %12s  %4d  %3d  %-40s  %.*s\n", (long long)t->id, t->idx,
	       trial_status_name(t->status), res, obj, t->n_segments, t->n_oom,
	       t->params_json ? t->params_json : "{}", elen, error ? error : "-");
}

int cmd_trials(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {CLI_READ_LONGOPTS, {NULL, 0, NULL, 0}};
	cli_read_opts o = {0};
	int c, rc;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		if ((rc = cli_read_opt(c, argv, usage, &o, err)) < 0)
			return rc;
	}
	if (o.help) {
		printf("usage: %s\n\nOne row per trial: id, index, status, resource reached, "
		       "objective, segments run, out-of-memory count, params, last error.\n",
		       usage);
		return 0;
	}
	if (optind < argc)
		return cli_usage_error(err, usage, "unexpected argument '%s'", argv[optind]);
	store *s;
	if ((rc = cli_open_read(&o, &s, err)) < 0)
		return rc;
	store_experiment e;
	if ((rc = cli_pick_experiment(s, o.experiment, &e, err)) < 0) {
		store_close(s);
		return rc;
	}
	store_trial *tv;
	size_t nt;
	rc = store_trial_list(s, e.id, 0, &tv, &nt, err);
	if (rc == 0) {
		if (o.json) {
			json_t *arr = json_array();
			for (size_t i = 0; i < nt; i++)
				json_array_append_new(arr, cli_trial_json(&e, &tv[i]));
			rc = cli_json_print(arr, err);
		} else {
			printf("# experiment %s (%s %s)\n", e.name, e.mode, e.objective_metric);
			printf("%6s  %5s  %-9s  %8s  %12s  %4s  %3s  %-40s  %s\n", "ID", "INDEX",
			       "STATUS", "RESOURCE", "OBJECTIVE", "SEGS", "OOM", "PARAMS",
			       "LAST ERROR");
			for (size_t i = 0; i < nt; i++)
				trial_line(&tv[i]);
		}
		store_trials_free(tv, nt);
	}
	store_experiment_fini(&e);
	store_close(s);
	return rc;
}
