/*
 * cmd_profiles.c - relish profiles [--db F] [--json]: what relish has
 * measured of each trial shape (the command plus the parameters that change
 * memory), across all experiments of the database: segments measured, peak
 * memory, mean GPU utilisation, throughput alone and beside other segments,
 * and the estimate made before the shape's first measurement (its basis:
 * "family" when the family model predicted it from other shapes of the same
 * command) with its error against the measured peak.  The profiles are what
 * a later `relish run` seeds its estimator with (docs/gpu.md).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"

static const char usage[] = "relish profiles [--db FILE] [--json]";

/* A figure with `digits` decimals (precision -1: 3 significant), or "-". */
static void real_cell(char *buf, size_t n, double v, int digits, int sign)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else if (digits < 0)
		snprintf(buf, n, "%.3g", v);
	else
		snprintf(buf, n, sign ? "%+.*f" : "%.*f", digits, v);
}

static void profile_line(const store_profile *p)
{
	char util[24], thr[24], thrs[24], est[24], errp[24];
	real_cell(util, sizeof util, p->mean_util, 0, 0);
	real_cell(thr, sizeof thr, p->throughput, -1, 0);
	real_cell(thrs, sizeof thrs, p->thr_shared, -1, 0);
	real_cell(est, sizeof est, p->est_mem_mib > 0 ? (double)p->est_mem_mib : NAN, 0, 0);
	real_cell(errp, sizeof errp, 100.0 * p->est_error, 1, 1);
	printf("%-16s  %4d  %8lld  %4s  %9s  %9s  %-9s  %7s  %6s  %s\n", p->shape, p->n,
	       (long long)p->peak_mem_mib, util, thr, thrs, p->est_basis ? p->est_basis : "-", est,
	       errp, p->params ? p->params : "-");
}

static json_t *profile_json(const store_profile *p)
{
	json_t *j = json_object();
	json_object_set_new(j, "shape", json_string(p->shape));
	json_object_set_new(j, "family", cli_json_str(p->family));
	json_object_set_new(j, "params", p->params ? cli_json_params(p->params) : json_null());
	json_object_set_new(j, "segments", json_integer(p->n));
	json_object_set_new(j, "peak_mem_mib",
			    p->peak_mem_mib > 0 ? json_integer(p->peak_mem_mib) : json_null());
	json_object_set_new(j, "mean_util", cli_json_real(p->mean_util));
	json_object_set_new(j, "throughput_alone", cli_json_real(p->throughput));
	json_object_set_new(j, "throughput_shared", cli_json_real(p->thr_shared));
	json_object_set_new(j, "est_basis", cli_json_str(p->est_basis));
	json_object_set_new(j, "est_mem_mib",
			    p->est_mem_mib > 0 ? json_integer(p->est_mem_mib) : json_null());
	json_object_set_new(j, "est_error", cli_json_real(p->est_error));
	json_object_set_new(j, "updated_at", cli_json_real(p->updated_at));
	return j;
}

int cmd_profiles(int argc, char **argv, rl_err *err)
{
	static const cli_read_spec spec = {
		.usage = usage,
		.help = "\nOne row per trial shape measured: shape, segments measured, peak MiB,\n"
			"mean GPU utilisation (%), throughput alone and shared (resource "
			"units/s),\nthe basis of the estimate made before it was measured, that "
			"estimate (MiB)\nand its error against the peak (%), and the shape's "
			"parameters.\n",
	};
	cli_read_opts o = {0};
	int rc = cli_read_args(argc, argv, &spec, &o, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (o.experiment)
		return cli_usage_error(err, usage,
				       "profiles belong to the database, not to one experiment");
	store *s;
	if ((rc = cli_open_read(&o, &s, err)) < 0)
		return rc;
	store_profile *pv;
	size_t np;
	rc = store_profile_list(s, &pv, &np, err);
	if (rc == 0) {
		if (o.json) {
			json_t *arr = json_array();
			for (size_t i = 0; i < np; i++)
				json_array_append_new(arr, profile_json(&pv[i]));
			rc = cli_json_print(arr, err);
		} else {
			printf("%-16s  %4s  %8s  %4s  %9s  %9s  %-9s  %7s  %6s  %s\n", "SHAPE", "SEGS",
			       "PEAK_MiB", "UTIL", "THR_ALONE", "THR_SHARED", "EST_BASIS", "EST_MiB",
			       "ERR%", "PARAMS");
			for (size_t i = 0; i < np; i++)
				profile_line(&pv[i]);
		}
		store_profiles_free(pv, np);
	}
	store_close(s);
	return rc;
}
