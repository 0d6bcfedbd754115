/*
 * cmd_simulate.c - relish simulate: replay a job trace through the core
 * scheduler under exclusive, pack and relish, and compare them
 * (docs/simulator.md).  The work is in sim/, the report too (sim/report.h:
 * the table, --json, the --out files and plots); this file parses options,
 * runs the policies (with --placements, every placement decision written as
 * it is made, to compare with a live run) and says where the report goes.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/units.h"
#include "sim/report.h"
#include "sim/sim.h"

static const char usage_text[] =
	"usage: relish simulate --trace FILE --gpus N --gpu-memory SIZE [options]\n"
	"\n"
	"Replay a job trace through relish's scheduling core with a virtual clock\n"
	"and compare sharing policies (docs/simulator.md).\n"
	"\n"
	"  --trace FILE         trace CSV (Philly evaluation trace or the plain format)\n"
	"  --gpus N             GPUs in the simulated cluster\n"
	"  --gpu-memory SIZE    memory per GPU: 32GiB, 32G, 40960MiB; a plain number is MiB\n"
	"  --policy P           exclusive, pack, relish, tiresias, gandiva, a comma-\n"
	"                       separated list of them, or all (default all)\n"
	"  --segment-s S        exclusive-time work per segment (default 3600)\n"
	"  --restart-cost-s C   cost of starting or moving a segment (default 30)\n"
	"  --hints H            user memory hints: noisy (default), exact, none\n"
	"  --order O            queue order: default (fifo for exclusive and pack, las for\n"
	"                       relish), fifo, las (least attained service first),\n"
	"                       tiresias (discretised 2D-LAS queues) or fair (users by\n"
	"                       attained GPU-time over their share, LAS within a user);\n"
	"                       all: every peer in fifo, las and tiresias order, relish\n"
	"                       in its own, and relish against the best (peer, order)\n"
	"                       pair\n"
	"  --half-life-s S      fair: each GPU-second a user attained counts half after\n"
	"                       S seconds (default 604800, 7 days; 0: never forgets)\n"
	"  --colocate FILE      measured co-location pairs (Lucid format), or 'none';\n"
	"                       default: raw/lucid_colocate_info.csv beside the trace\n"
	"  --scale N            replay a trace N times larger (what if N times the load\n"
	"                       arrived?): every experiment N times, each copy at a\n"
	"                       uniformly drawn time over the trace's span, its trials\n"
	"                       keeping their offsets (default 1: the trace as it is)\n"
	"  --scale-span         with --scale: draw over N times the span instead (the\n"
	"                       same load, N times as long)\n"
	"  --scale-seed S       with --scale: seed of the draw (default 1)\n"
	"  --window N           segments of one experiment waiting in the core's queue\n"
	"                       at most; its others wait in the driver, started jobs\n"
	"                       first (default 2, the live driver's; 0 = unlimited)\n"
	"  --background FILE    memory others use on the GPUs over time: CSV time_s,gpu,mib\n"
	"                       (from time_s on, GPU gpu has mib MiB of others; the core\n"
	"                       places around it as live, docs/simulator.md)\n"
	"  --series-step-s S    time-series resolution for --out (default 3600)\n"
	"  --json               print {\"policies\": {...}} instead of a table\n"
	"  --out DIR            write CSV time series, per-job JCTs and PNG plots\n"
	"  --placements         with --out: also write placements_POLICY.csv, one row\n"
	"                       per placement (time, job, devices, reservation, basis)\n"
	"  --las-tail Q         las order: jobs past the Q quantile of ended jobs'\n"
	"                       service wait by arrival among themselves (relish 0.99,\n"
	"                       the others 0: off)\n"
	"  --relish-gangs on|off   relish: gangs share devices (default on)\n"
	"  --relish-margin X       relish: the co-location model's margin per speed\n"
	"                          (default 0.044)\n"
	"  --relish-min-speedup X  relish: admit only if the throughput grows by X (1)\n"
	"  --relish-solo-after-s S relish: jobs with S GPU-seconds of service run alone\n"
	"                          (default 0: off)\n"
	"  --relish-timeslice on|off  relish: a segment the co-location model refuses\n"
	"                          everywhere time-slices beside a device's one member\n"
	"                          unless the pair was measured (default on)\n"
	"  --relish-timeslice-gangs on|off  relish: gangs time-slice so too, each\n"
	"                          member beside at most one (default on)\n"
	"  --relish-hint-quantile Q  relish: a hint's headroom is at least the Q quantile\n"
	"                          of measured peak over hint (0.999; 0: the margin)\n"
	"  --relish-family-quantile Q  relish: a family-model reservation grows by the\n"
	"                          Q quantile of measured peak over such reservations\n"
	"                          when above 1 (0.999; 0: the model's margin alone)\n"
	"  --relish-gang-probe on|off  relish: a gang never measured bets on its hint\n"
	"                          as a single segment does, else runs whole (on)\n"
	"  --relish-family-probe on|off  relish: one segment of a shape never measured\n"
	"                          at a time on a family estimate (default on)\n"
	"  --relish-explore N      relish: co-locations of a pair of shapes tried while\n"
	"                          their gain is uncertain (default 2; 0: never explore)\n"
	"  --observe-noise X       relative error of the progress rate the core is told\n"
	"                          (uniform in [-X, X] per segment; default 0.05)\n"
	"  --tiresias-limits L     tiresias: queue thresholds, GPU-seconds, comma-separated\n"
	"                          (default 1800,3600,...,230400)\n"
	"  --tiresias-quantum-s Q  tiresias: its preemption quantum, the length of its\n"
	"                          segments (default 1800; 0: --segment-s)\n"
	"  --gandiva-timeslice N   gandiva: most segments time-sliced on a GPU (0: memory)\n"
	"  --check-colocate F   instead of simulating: score the co-location model against\n"
	"                       Gavel's V100 pairwise throughputs in F (and Lucid's pairs);\n"
	"                       needs --trace only\n";

typedef struct sim_opts {
	const char *trace, *colocate, *out, *background, *check;
	int gpus, json, placements, policies[SCHED_POLICY__COUNT];
	int all_orders;             /* --order all */
	long long mem;
	int scale, scale_span, seed_set;
	uint64_t scale_seed;
	sim_config cfg;
} sim_opts;

static int parse_num(const char *opt, const char *v, double lo, double *out, rl_err *err)
{
	/* set on failure too: gcc cannot see that rl_err_set's value is
	 * negative, and warned that callers read *out uninitialised */
	*out = 0;
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(d) || d < lo)
		return rl_err_set(err, RL_EUSAGE, "%s: expected a number >= %g, got \"%s\"", opt, lo, v);
	*out = d;
	return 0;
}

/* on|off into *out (1 or 0). */
static int parse_onoff(const char *opt, const char *v, int *out, rl_err *err)
{
	if (strcmp(v, "on") && strcmp(v, "off"))
		return rl_err_set(err, RL_EUSAGE, "%s: expected on or off, got \"%s\"", opt, v);
	*out = !strcmp(v, "on");
	return 0;
}

/* A quantile in [0, 1] into *out. */
static int parse_quantile(const char *opt, const char *v, double *out, rl_err *err)
{
	double d = 0;
	int rc = parse_num(opt, v, 0, &d, err);
	if (rc < 0)
		return rc;
	if (d > 1)
		return rl_err_set(err, RL_EUSAGE, "%s: expected a quantile in [0, 1], got \"%s\"", opt, v);
	*out = d;
	return 0;
}

static int parse_opts(int argc, char **argv, sim_opts *o, rl_err *err)
{
	enum { O_TRACE = 1, O_GPUS, O_MEM, O_POLICY, O_SEG, O_RESTART, O_HINTS,
	       O_COLOC, O_STEP, O_JSON, O_OUT, O_WINDOW, O_ORDER, O_PLACEMENTS,
	       O_SCALE, O_SCALE_SPAN, O_SCALE_SEED, O_BACKGROUND, O_CHECK, O_R_GANGS, O_R_MARGIN,
	       O_R_SPEEDUP, O_R_SOLO, O_R_FPROBE, O_LAS_TAIL, O_R_TSLICE, O_R_TSGANGS, O_R_GPROBE, O_R_HINTQ, O_R_FAMQ, O_R_EXPLORE, O_NOISE, O_T_LIMITS, O_T_QUANTUM, O_G_TS, O_HALF_LIFE, O_HELP };
	static const struct option longopts[] = {
		{"trace", required_argument, NULL, O_TRACE},
		{"gpus", required_argument, NULL, O_GPUS},
		{"gpu-memory", required_argument, NULL, O_MEM},
		{"policy", required_argument, NULL, O_POLICY},
		{"segment-s", required_argument, NULL, O_SEG},
		{"restart-cost-s", required_argument, NULL, O_RESTART},
		{"hints", required_argument, NULL, O_HINTS},
		{"order", required_argument, NULL, O_ORDER},
		{"colocate", required_argument, NULL, O_COLOC},
		{"series-step-s", required_argument, NULL, O_STEP},
		{"json", no_argument, NULL, O_JSON},
		{"out", required_argument, NULL, O_OUT},
		{"window", required_argument, NULL, O_WINDOW},
		{"placements", no_argument, NULL, O_PLACEMENTS},
		{"scale", required_argument, NULL, O_SCALE},
		{"scale-span", no_argument, NULL, O_SCALE_SPAN},
		{"scale-seed", required_argument, NULL, O_SCALE_SEED},
		{"background", required_argument, NULL, O_BACKGROUND},
		{"check-colocate", required_argument, NULL, O_CHECK},
		{"las-tail", required_argument, NULL, O_LAS_TAIL},
		{"relish-gangs", required_argument, NULL, O_R_GANGS},
		{"relish-margin", required_argument, NULL, O_R_MARGIN},
		{"relish-min-speedup", required_argument, NULL, O_R_SPEEDUP},
		{"relish-solo-after-s", required_argument, NULL, O_R_SOLO},
		{"relish-family-probe", required_argument, NULL, O_R_FPROBE},
		{"relish-timeslice", required_argument, NULL, O_R_TSLICE},
		{"relish-timeslice-gangs", required_argument, NULL, O_R_TSGANGS},
		{"relish-gang-probe", required_argument, NULL, O_R_GPROBE},
		{"relish-hint-quantile", required_argument, NULL, O_R_HINTQ},
		{"relish-family-quantile", required_argument, NULL, O_R_FAMQ},
		{"relish-explore", required_argument, NULL, O_R_EXPLORE},
		{"observe-noise", required_argument, NULL, O_NOISE},
		{"tiresias-limits", required_argument, NULL, O_T_LIMITS},
		{"tiresias-quantum-s", required_argument, NULL, O_T_QUANTUM},
		{"gandiva-timeslice", required_argument, NULL, O_G_TS},
		{"half-life-s", required_argument, NULL, O_HALF_LIFE},
		{"help", no_argument, NULL, O_HELP},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof *o);
	sim_config_default(&o->cfg);
	o->cfg.series_step_s = 3600;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		o->policies[i] = 1;
	o->scale = 1;
	o->scale_seed = 1;
	double d = 0;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_TRACE: o->trace = optarg; break;
		case O_GPUS:
			if ((rc = parse_num("--gpus", optarg, 1, &d, err)) < 0)
				return rc;
			if (d != floor(d) || d > 1e6)
				return rl_err_set(err, RL_EUSAGE, "--gpus: expected a whole number, got \"%s\"", optarg);
			o->gpus = (int)d;
			break;
		case O_MEM: {
			/* The units of the spec and the devices file (units.h). */
			uint64_t mib = 0;
			if (units_parse_size_mib(optarg, &mib) < 0 || mib == 0)
				return rl_err_set(err, RL_EUSAGE,
						  "--gpu-memory: expected a size like 32GiB, 32G or "
						  "40960 (MiB), got \"%s\"", optarg);
			o->mem = (long long)mib;
			break;
		}
		case O_POLICY: {
			/* one name, a comma-separated list, or all */
			int all = !strcmp(optarg, "all");
			for (int i = 0; i < SCHED_POLICY__COUNT; i++)
				o->policies[i] = all;
			char buf[128];
			snprintf(buf, sizeof buf, "%s", optarg);
			for (char *tok = all ? NULL : strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
				sched_policy pol;
				if (sched_policy_from_name(tok, &pol) < 0)
					return rl_err_set(err, RL_EUSAGE,
							  "--policy: expected exclusive, pack, relish, tiresias, "
							  "gandiva, a comma-separated list of them or all, got \"%s\"",
							  optarg);
				o->policies[pol] = 1;
			}
			break;
		}
		case O_SEG:
			if ((rc = parse_num("--segment-s", optarg, 1, &o->cfg.segment_s, err)) < 0)
				return rc;
			break;
		case O_RESTART:
			if ((rc = parse_num("--restart-cost-s", optarg, 0, &o->cfg.restart_cost_s, err)) < 0)
				return rc;
			break;
		case O_ORDER:
			o->all_orders = !strcmp(optarg, "all");
			if (o->all_orders)
				o->cfg.order = ORDER_DEFAULT;
			else if (sched_order_from_name(optarg, &o->cfg.order) < 0)
				return rl_err_set(err, RL_EUSAGE,
						  "--order: expected default, fifo, las, tiresias, fair or all, "
						  "got \"%s\"", optarg);
			break;
		case O_HINTS:
			if (sim_hints_from_name(optarg, &o->cfg.hints) < 0)
				return rl_err_set(err, RL_EUSAGE, "--hints: expected noisy, exact or none, got \"%s\"", optarg);
			break;
		case O_COLOC: o->colocate = optarg; break;
		case O_BACKGROUND: o->background = optarg; break;
		case O_STEP:
			if ((rc = parse_num("--series-step-s", optarg, 1, &o->cfg.series_step_s, err)) < 0)
				return rc;
			break;
		case O_JSON: o->json = 1; break;
		case O_OUT: o->out = optarg; break;
		case O_PLACEMENTS: o->placements = 1; break;
		case O_WINDOW:
			if ((rc = parse_num("--window", optarg, 0, &d, err)) < 0)
				return rc;
			if (d != floor(d) || d > 1e9)
				return rl_err_set(err, RL_EUSAGE, "--window: expected a whole number, got \"%s\"", optarg);
			o->cfg.window = (int)d;
			break;
		case O_SCALE:
			if ((rc = parse_num("--scale", optarg, 1, &d, err)) < 0)
				return rc;
			if (d != floor(d) || d > 1000)
				return rl_err_set(err, RL_EUSAGE,
						  "--scale: expected a whole number from 1 to 1000, got \"%s\"", optarg);
			o->scale = (int)d;
			break;
		case O_SCALE_SPAN: o->scale_span = 1; break;
		case O_SCALE_SEED:
			if ((rc = parse_num("--scale-seed", optarg, 0, &d, err)) < 0)
				return rc;
			if (d != floor(d) || d > 9007199254740992.0)
				return rl_err_set(err, RL_EUSAGE, "--scale-seed: expected a whole number, got \"%s\"", optarg);
			o->scale_seed = (uint64_t)d;
			o->seed_set = 1;
			break;
		case O_CHECK: o->check = optarg; break;
		case O_R_GANGS:
			if ((rc = parse_onoff("--relish-gangs", optarg, &o->cfg.tune.relish_share_gangs, err)) < 0)
				return rc;
			break;
		case O_R_FPROBE:
			if ((rc = parse_onoff("--relish-family-probe", optarg, &o->cfg.tune.relish_family_probe, err)) < 0)
				return rc;
			break;
		case O_R_TSLICE:
			if ((rc = parse_onoff("--relish-timeslice", optarg, &o->cfg.tune.relish_timeslice, err)) < 0)
				return rc;
			break;
		case O_LAS_TAIL:
			if ((rc = parse_quantile("--las-tail", optarg, &o->cfg.tune.las_tail, err)) < 0)
				return rc;
			break;
		case O_R_TSGANGS:
			if ((rc = parse_onoff("--relish-timeslice-gangs", optarg, &o->cfg.tune.relish_timeslice_gangs, err)) < 0)
				return rc;
			break;
		case O_R_HINTQ:
			if ((rc = parse_quantile("--relish-hint-quantile", optarg, &o->cfg.tune.relish_hint_quantile, err)) < 0)
				return rc;
			break;
		case O_R_FAMQ:
			if ((rc = parse_quantile("--relish-family-quantile", optarg, &o->cfg.tune.relish_family_quantile, err)) < 0)
				return rc;
			break;
		case O_R_GPROBE:
			if ((rc = parse_onoff("--relish-gang-probe", optarg, &o->cfg.tune.relish_gang_probe, err)) < 0)
				return rc;
			break;
		case O_R_EXPLORE: {
			double v;
			if ((rc = parse_num("--relish-explore", optarg, 0, &v, err)) < 0)
				return rc;
			if (v != floor(v) || v > 1000)
				return rl_err_set(err, RL_EUSAGE, "--relish-explore: expected a whole number 0..1000, got \"%s\"", optarg);
			o->cfg.tune.relish_explore = (int)v;
			break;
		}
		case O_NOISE:
			if ((rc = parse_num("--observe-noise", optarg, 0, &o->cfg.observe_noise, err)) < 0)
				return rc;
			if (o->cfg.observe_noise >= 1)
				return rl_err_set(err, RL_EUSAGE, "--observe-noise: expected a number in [0, 1), got \"%s\"", optarg);
			break;
		case O_R_MARGIN:
			if ((rc = parse_num("--relish-margin", optarg, 0, &o->cfg.tune.relish_margin, err)) < 0)
				return rc;
			break;
		case O_R_SPEEDUP:
			if ((rc = parse_num("--relish-min-speedup", optarg, 0.01, &o->cfg.tune.relish_min_speedup, err)) < 0)
				return rc;
			break;
		case O_R_SOLO:
			if ((rc = parse_num("--relish-solo-after-s", optarg, 0, &o->cfg.tune.relish_solo_after_s, err)) < 0)
				return rc;
			break;
		case O_T_LIMITS: {
			char buf[256];
			snprintf(buf, sizeof buf, "%s", optarg);
			memset(o->cfg.tune.tiresias_limit_s, 0, sizeof o->cfg.tune.tiresias_limit_s);
			int k = 0;
			double prev = 0;
			for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
				if (k == SCHED_MAX_TIERS || parse_num("--tiresias-limits", tok, 1, &d, err) < 0 ||
				    d <= prev)
					return rl_err_set(err, RL_EUSAGE,
							  "--tiresias-limits: expected up to %d ascending GPU-second "
							  "thresholds >= 1, comma-separated, got \"%s\"",
							  SCHED_MAX_TIERS, optarg);
				o->cfg.tune.tiresias_limit_s[k++] = prev = d;
			}
			break;
		}
		case O_T_QUANTUM:
			if ((rc = parse_num("--tiresias-quantum-s", optarg, 0, &o->cfg.tune.tiresias_quantum_s, err)) < 0)
				return rc;
			break;
		case O_G_TS:
			if ((rc = parse_num("--gandiva-timeslice", optarg, 0, &d, err)) < 0)
				return rc;
			if (d != floor(d) || d > 1e6)
				return rl_err_set(err, RL_EUSAGE, "--gandiva-timeslice: expected a whole number, got \"%s\"", optarg);
			o->cfg.tune.gandiva_timeslice_max = (int)d;
			break;
		case O_HALF_LIFE:
			if ((rc = parse_num("--half-life-s", optarg, 0, &o->cfg.tune.fair_half_life_s, err)) < 0)
				return rc;
			break;
		case O_HELP:
			fputs(usage_text, stdout);
			return 1;
		default:
			return rl_err_set(err, RL_EUSAGE, "unknown or incomplete option '%s' (see relish simulate --help)",
					  argv[optind - 1]);
		}
	}
	if (optind < argc)
		return rl_err_set(err, RL_EUSAGE, "unexpected argument '%s'", argv[optind]);
	if (o->trace && o->check)
		return 0; /* the check needs the trace's configurations only */
	if (!o->trace || !o->gpus || !o->mem)
		return rl_err_set(err, RL_EUSAGE, "--trace, --gpus and --gpu-memory are required (see relish simulate --help)");
	if (o->placements && !o->out)
		return rl_err_set(err, RL_EUSAGE, "--placements needs --out DIR (see relish simulate --help)");
	if ((o->scale_span || o->seed_set) && o->scale < 2)
		return rl_err_set(err, RL_EUSAGE, "%s needs --scale N with N >= 2 (see relish simulate --help)",
				  o->scale_span ? "--scale-span" : "--scale-seed");
	o->cfg.n_gpus = o->gpus;
	o->cfg.gpu_mem_mib = (uint64_t)o->mem;
	if (!o->out)
		o->cfg.series_step_s = 0;
	return 0;
}

/* The default pair table: raw/lucid_colocate_info.csv in the trace's folder. */
static char *default_colocate(const char *trace)
{
	const char *slash = strrchr(trace, '/');
	int dir = slash ? (int)(slash - trace) : 1;
	char *p = NULL;
	if (asprintf(&p, "%.*s/raw/lucid_colocate_info.csv", dir, slash ? trace : ".") < 0)
		return NULL;
	if (access(p, R_OK) != 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* --placements: the on_place observer writes one CSV row per decision. */
typedef struct place_log {
	FILE *f;
	const sim_trace *t;
} place_log;

static void log_placement(void *ctx, double now, const sched_request *req,
			  const sched_placement *pl)
{
	(void)req;
	place_log *lg = ctx;
	char row[512];
	if (sim_placement_csv_row(lg->t, now, pl, row, sizeof row) < (int)sizeof row)
		fputs(row, lg->f);
}

/* --order all: the orders each peer runs in (relish runs in its own). */
static const queue_order peer_orders[] = {ORDER_FIFO, ORDER_LAS, ORDER_TIRESIAS};
#define N_PEER_ORDERS (sizeof peer_orders / sizeof peer_orders[0])
#define MAX_RUNS (SCHED_POLICY__COUNT * N_PEER_ORDERS)

/*
 * Run the chosen policies side by side (sim_run_tasks: a thread per processor,
 * results identical to running them in turn), each in the order asked, or
 * with --order all each peer in every order of peer_orders: runs[0..*n_runs)
 * in policy-major order, and res[policy] the run in the policy's own order
 * (the table's and --json's "policies").  With --placements, each writes
 * DIR/placements_POLICY.csv (placements_POLICY-ORDER.csv with --order all)
 * through its on_place observer.
 */
static int run_policies(const sim_opts *o, const sim_trace *t, const sim_model *m,
			sim_result **res, sim_result **runs, size_t *n_runs, rl_err *err)
{
	sim_task tasks[MAX_RUNS];
	sim_config cfg[MAX_RUNS];
	place_log lg[MAX_RUNS];
	char name[MAX_RUNS][64];
	size_t n = 0;
	int rc = 0;
	*n_runs = 0;
	if (o->placements && mkdir(o->out, 0777) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", o->out);
	for (int i = 0; i < SCHED_POLICY__COUNT && rc == 0; i++) {
		if (!o->policies[i])
			continue;
		sched_policy p = (sched_policy)i;
		size_t n_orders = o->all_orders && p != SCHED_POLICY_RELISH ? N_PEER_ORDERS : 1;
		for (size_t k = 0; k < n_orders && rc == 0; k++) {
			cfg[n] = o->cfg;
			if (o->all_orders && p != SCHED_POLICY_RELISH)
				cfg[n].order = peer_orders[k];
			if (o->placements) {
				if (o->all_orders)
					snprintf(name[n], sizeof name[n], "placements_%s-%s.csv",
						 sched_policy_name(p),
						 sched_order_name(sched_policy_order(p, cfg[n].order)));
				else
					snprintf(name[n], sizeof name[n], "placements_%s.csv",
						 sched_policy_name(p));
				lg[n] = (place_log){.t = t};
				if ((rc = sim_report_open(o->out, name[n], &lg[n].f, err)) < 0)
					break;
				fputs(SIM_PLACEMENTS_CSV_HEADER, lg[n].f);
				cfg[n].on_place = log_placement;
				cfg[n].ctx = &lg[n];
			}
			tasks[n] = (sim_task){.policy = p, .cfg = &cfg[n]};
			n++;
		}
	}
	if (rc == 0)
		sim_run_tasks(t, m, tasks, n);
	for (size_t k = 0; k < n; k++) {
		if (rc == 0 && tasks[k].rc < 0) {
			rc = tasks[k].rc;
			*err = tasks[k].err;
			rl_err_prefix(err, "policy %s", sched_policy_name(tasks[k].policy));
		}
		if (o->placements && lg[k].f && fclose(lg[k].f) != 0 && rc == 0)
			rc = rl_err_sys(err, RL_EIO, errno, "writing %s/%s", o->out, name[k]);
		sim_result *r = tasks[k].result;
		if (!r)
			continue;
		runs[(*n_runs)++] = r;
		/* the policy's own order (or the one forced) is its run in
		 * "policies" */
		if (!res[tasks[k].policy] &&
		    r->order == sched_policy_order(tasks[k].policy, o->all_orders ? ORDER_DEFAULT
										   : o->cfg.order))
			res[tasks[k].policy] = r;
	}
	return rc;
}

/* --check-colocate: the co-location model against measurements. */
static int check_colocate(const sim_opts *o, const sim_trace *t, const sim_model *m, rl_err *err)
{
	sim_colo_check c;
	int rc = sim_colocate_check(t, m, o->check, &c, err);
	if (rc < 0)
		return rc;
	if (!o->json) {
		sim_report_colocate_table(stdout, &c);
		return 0;
	}
	json_t *j = sim_report_colocate_json(&c);
	if (!j)
		return rl_err_set(err, RL_ENOMEM, "building the report: out of memory");
	json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
	putchar('\n');
	json_decref(j);
	return 0;
}

int cmd_simulate(int argc, char **argv, rl_err *err)
{
	sim_opts o;
	int rc = parse_opts(argc, argv, &o, err);
	if (rc != 0)
		return rc > 0 ? 0 : rc;
	sim_trace *t = NULL;
	sim_model *m = NULL;
	sim_result *res[SCHED_POLICY__COUNT] = {NULL}, *runs[MAX_RUNS] = {NULL};
	size_t n_runs = 0;
	json_t *report = NULL;
	char *coloc = NULL;
	sim_background *bg = NULL;
	if ((rc = sim_trace_load(o.trace, &t, err)) < 0)
		goto done;
	if (o.background) {
		if ((rc = sim_background_load(o.background, &bg, err)) < 0)
			goto done;
		o.cfg.background = bg;
	}
	if (o.scale > 1) {
		sim_trace *big = NULL;
		rc = sim_trace_synthetic(t, o.scale, o.scale_span ? SIM_SYNTH_LONGER : SIM_SYNTH_DENSER,
					 o.scale_seed, &big, err);
		if (rc < 0)
			goto done;
		sim_trace_free(t);
		t = big;
	}
	if (o.colocate && strcmp(o.colocate, "none"))
		coloc = strdup(o.colocate);
	else if (!o.colocate)
		coloc = default_colocate(o.trace);
	if ((rc = sim_model_new(t, coloc, &m, err)) < 0)
		goto done;
	if (o.check) {
		rc = check_colocate(&o, t, m, err);
		goto done;
	}
	if ((rc = run_policies(&o, t, m, res, runs, &n_runs, err)) < 0)
		goto done;
	sim_report_setup rs = {
		.trace = o.trace, .gpus = o.gpus, .gpu_memory_mib = o.mem, .scale = o.scale,
		.scale_span = o.scale_span, .scale_seed = o.scale_seed, .background = o.background,
		.colocate = coloc, .cfg = &o.cfg, .placements = o.placements,
		.pairs = o.all_orders ? runs : NULL, .n_pairs = o.all_orders ? n_runs : 0,
	};
	report = sim_report_json(&rs, t, m, res);
	if (!report) {
		rc = rl_err_set(err, RL_ENOMEM, "building the report: out of memory");
		goto done;
	}
	if (o.json) {
		json_dumpf(report, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		putchar('\n');
	} else {
		sim_report_table(stdout, &rs, t, m, res);
	}
	if (o.out && (rc = sim_report_write(o.out, &rs, t, res, report, err)) < 0)
		goto done;
	rc = 0;
done:
	json_decref(report);
	for (size_t i = 0; i < n_runs; i++)
		sim_result_free(runs[i]);
	sim_model_free(m);
	sim_trace_free(t);
	sim_background_free(bg);
	free(coloc);
	return rc;
}
