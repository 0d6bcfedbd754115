/*
 * cmd_trials.c - relish trials [--db F] [--json] [--experiment NAME]: one
 * row per trial of an experiment (the latest one by default): id, state,
 * resource reached, latest objective, its latest segment's reservation
 * basis with the estimated and measured peak memory and the estimate's
 * error, that segment's mean GPU utilisation, parameters, how many segments
 * it ran, how many of them ran out of memory, and its last error (with
 * --json also the last out-of-memory message on its own).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"

static const char usage[] = "relish trials [--db FILE] [--json] [--experiment NAME]";

/* (estimate - peak) / peak, NAN when either is unknown. */
static double est_error(const store_trial *t)
{
	if (t->last_est_mib <= 0 || t->last_peak_mib <= 0)
		return NAN;
	return ((double)t->last_est_mib - (double)t->last_peak_mib) / (double)t->last_peak_mib;
}

static void mib_cell(char *buf, size_t n, int64_t v)
{
	if (v > 0)
		snprintf(buf, n, "%lld", (long long)v);
	else
		snprintf(buf, n, "-");
}

static void trial_line(const store_trial *t)
{
	char res[40], obj[40], est[24], peak[24], errp[24], util[24];
	cli_format_real(t->resource_done, res, sizeof res);
	cli_format_real(t->objective, obj, sizeof obj);
	mib_cell(est, sizeof est, t->last_est_mib);
	mib_cell(peak, sizeof peak, t->last_peak_mib);
	double e = est_error(t);
	if (isnan(e))
		snprintf(errp, sizeof errp, "-");
	else
		snprintf(errp, sizeof errp, "%+.1f", 100.0 * e);
	if (isnan(t->last_util))
		snprintf(util, sizeof util, "-");
	else
		snprintf(util, sizeof util, "%.0f", t->last_util);
	const char *error = cli_trial_error(t);
	/* One line per trial: keep only the first line of a multi-line error. */
	int elen = error ? (int)strcspn(error, "\r\n") : 1;
	char pbuf[1024];
	printf("%6lld  %5d  %-9s  %8s  %12s  %-9s  %7s  %8s  %6s  %4s  %4d  %3d  %-40s  %.*s\n",
	       (long long)t->id, t->idx, trial_status_name(t->status), res, obj,
	       t->last_basis ? t->last_basis : "-", est, peak, errp, util, t->n_segments, t->n_oom,
	       cli_params_text(t->params_json, pbuf, sizeof pbuf), elen, error ? error : "-");
}

/* The shared trial object plus the memory columns of this command. */
static json_t *trial_json(const store_experiment *e, const store_trial *t)
{
	json_t *j = cli_trial_json(e, t);
	json_object_set_new(j, "last_oom", cli_json_str(t->last_oom));
	json_object_set_new(j, "basis", cli_json_str(t->last_basis));
	json_object_set_new(j, "est_mem_mib",
			    t->last_est_mib > 0 ? json_integer(t->last_est_mib) : json_null());
	json_object_set_new(j, "peak_mem_mib",
			    t->last_peak_mib > 0 ? json_integer(t->last_peak_mib) : json_null());
	json_object_set_new(j, "est_error", cli_json_real(est_error(t)));
	json_object_set_new(j, "mean_util", cli_json_real(t->last_util));
	return j;
}

int cmd_trials(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne row per trial: id, index, status, resource reached, objective,\n"
			"its latest segment's reservation basis, estimated and measured peak "
			"memory\n(MiB) and the estimate's error, that segment's mean GPU "
			"utilisation (%),\nsegments run, out-of-memory count, params, last error.\n",
	};
	cli_read_opts o = {0};
	store *s;
	store_experiment e;
	int rc = cli_read_begin(argc, argv, &spec, &o, &s, &e, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	store_trial *tv;
	size_t nt;
	rc = store_trial_list(s, e.id, 0, &tv, &nt, err);
	if (rc == 0) {
		if (o.json) {
			json_t *arr = json_array();
			for (size_t i = 0; i < nt; i++)
				json_array_append_new(arr, trial_json(&e, &tv[i]));
			rc = cli_json_print(arr, err);
		} else {
			printf("# experiment %s (%s %s)\n", e.name, e.mode, e.objective_metric);
			printf("%6s  %5s  %-9s  %8s  %12s  %-9s  %7s  %8s  %6s  %4s  %4s  %3s  %-40s"
			       "  %s\n", "ID", "INDEX", "STATUS", "RESOURCE", "OBJECTIVE", "BASIS",
			       "EST_MiB", "PEAK_MiB", "ERR%", "UTIL", "SEGS", "OOM", "PARAMS",
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
