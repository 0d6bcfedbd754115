/*
 * cmd_logs.c - relish logs TRIAL [--db F] [--segment N]: the output of a
 * trial's segments, in order, each under a header line naming the segment,
 * its range, outcome, device and log file.  The files are the ones the
 * driver recorded in segments.log_path; a missing file is reported in the
 * header, not an error (logs may have been cleaned up).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/cli_source.h"

static const char usage[] = "relish logs TRIAL [--db FILE | --server ADDR] [--segment N]";

static void segment_header(const store_trial *t, const store_segment *g)
{
	char from[40], to[40];
	cli_format_real(g->resource_from, from, sizeof from);
	cli_format_real(g->resource_to, to, sizeof to);
	printf("==> trial %lld segment %d [%s, %s] %s on %s", (long long)t->id, g->seq, from, to,
	       seg_status_name(g->status), g->device ? g->device : "-");
	if (g->exit_code >= 0)
		printf(" exit %d", g->exit_code);
	if (g->signal > 0)
		printf(" signal %d", g->signal);
	printf(" log %s <==\n", g->log_path ? g->log_path : "(none)");
}

static int parse_int(const char *s, const char *what, long *out, rl_err *err)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		return cli_usage_error(err, usage, "%s: expected a non-negative integer, got '%s'",
				       what, s);
	*out = v;
	return 0;
}

/* --segment N (the only option of its own). */
static int segment_opt(int c, const char *arg, void *ctx, rl_err *err)
{
	(void)c;
	return parse_int(arg, "--segment", ctx, err);
}

int cmd_logs(int argc, char **argv, rl_err *err)
{
	static const struct option own[] = {{"segment", required_argument, NULL, 's'},
					    {NULL, 0, NULL, 0}};
	long seg = -1, trial_id = 0;
	const cli_read_spec spec = {
		.usage = usage,
		.help = "\nPrints the log of each segment of trial TRIAL (its id, as in "
			"`relish trials`), in order.\n",
		.own = own,
		.own_opt = segment_opt,
		.ctx = &seg,
		.flags = CLI_READ_NO_JSON | CLI_READ_NO_EXPERIMENT | CLI_READ_ARGS | CLI_READ_SERVER,
	};
	cli_read_opts o = {0};
	int rc = cli_read_args(argc, argv, &spec, &o, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (o.argi >= argc)
		return cli_usage_error(err, usage, "which trial? give its id");
	if ((rc = parse_int(argv[o.argi], "TRIAL", &trial_id, err)) < 0)
		return rc;
	if (o.argi + 1 < argc)
		return cli_usage_error(err, usage, "unexpected argument '%s'", argv[o.argi + 1]);
	cli_src s;
	if ((rc = cli_src_open(&o, &s, err)) < 0)
		return rc;
	store_trial t;
	store_segment *gv = NULL;
	size_t ng = 0;
	if ((rc = cli_src_trial(&s, trial_id, &t, err)) < 0) {
		cli_src_close(&s);
		return rc;
	}
	rc = cli_src_segments(&s, t.id, &gv, &ng, err);
	int shown = 0;
	for (size_t i = 0; rc == 0 && i < ng; i++) {
		if (seg >= 0 && gv[i].seq != seg)
			continue;
		segment_header(&t, &gv[i]);
		fflush(stdout);
		rc = cli_src_log(&s, &gv[i], stdout, err);
		shown++;
	}
	if (rc == 0 && seg < 0 && !ng)
		printf("(trial %lld has no segments yet)\n", (long long)t.id);
	if (rc == 0 && seg >= 0 && !shown)
		rc = rl_err_set(err, RL_ENOTFOUND, "trial %lld has no segment %ld", (long long)t.id,
				seg);
	fflush(stdout);
	store_segments_free(gv, ng);
	store_trial_fini(&t);
	cli_src_close(&s);
	return rc;
}
