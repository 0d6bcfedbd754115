/*
 * cmd_simulate.c - relish simulate: replay a job trace through the core
 * scheduler under exclusive, pack and relish, and compare them
 * (docs/simulator.md).  The work is in sim/; this file parses options,
 * prints the comparison (a table, or --json) and writes --out files: CSV
 * time series and per-job completion times, PNG plots drawn by gnuplot and,
 * with --placements, every placement decision (to compare with a live run).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/units.h"
#include "sim/sim.h"

extern char **environ;

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
	"                       attained GPU-time over their share, LAS within a user)\n"
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
	"  --relish-gangs on|off   relish: gangs share devices (default on)\n"
	"  --relish-margin X       relish: the co-location model's margin per speed\n"
	"                          (default 0.044)\n"
	"  --relish-min-speedup X  relish: admit only if the throughput grows by X (1)\n"
	"  --relish-solo-after-s S relish: jobs with S GPU-seconds of service run alone\n"
	"                          (default 0: off)\n"
	"  --relish-family-probe on|off  relish: one segment of a shape never measured\n"
	"                          at a time on a family estimate (default on)\n"
	"  --tiresias-limits L     tiresias: queue thresholds, GPU-seconds, comma-separated\n"
	"                          (default 1800,3600,...,230400)\n"
	"  --gandiva-timeslice N   gandiva: most segments time-sliced on a GPU (0: memory)\n"
	"  --check-colocate F   instead of simulating: score the co-location model against\n"
	"                       Gavel's V100 pairwise throughputs in F (and Lucid's pairs);\n"
	"                       needs --trace only\n";

typedef struct sim_opts {
	const char *trace, *colocate, *out, *background, *check;
	int gpus, json, placements, policies[SCHED_POLICY__COUNT];
	long long mem;
	int scale, scale_span, seed_set;
	uint64_t scale_seed;
	sim_config cfg;
} sim_opts;

static int parse_num(const char *opt, const char *v, double lo, double *out, rl_err *err)
{
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(d) || d < lo)
		return rl_err_set(err, RL_EUSAGE, "%s: expected a number >= %g, got \"%s\"", opt, lo, v);
	*out = d;
	return 0;
}

static int parse_opts(int argc, char **argv, sim_opts *o, rl_err *err)
{
	enum { O_TRACE = 1, O_GPUS, O_MEM, O_POLICY, O_SEG, O_RESTART, O_HINTS,
	       O_COLOC, O_STEP, O_JSON, O_OUT, O_WINDOW, O_ORDER, O_PLACEMENTS,
	       O_SCALE, O_SCALE_SPAN, O_SCALE_SEED, O_BACKGROUND, O_CHECK, O_R_GANGS, O_R_MARGIN,
	       O_R_SPEEDUP, O_R_SOLO, O_R_FPROBE, O_T_LIMITS, O_G_TS, O_HALF_LIFE, O_HELP };
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
		{"relish-gangs", required_argument, NULL, O_R_GANGS},
		{"relish-margin", required_argument, NULL, O_R_MARGIN},
		{"relish-min-speedup", required_argument, NULL, O_R_SPEEDUP},
		{"relish-solo-after-s", required_argument, NULL, O_R_SOLO},
		{"relish-family-probe", required_argument, NULL, O_R_FPROBE},
		{"tiresias-limits", required_argument, NULL, O_T_LIMITS},
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
			if (sched_order_from_name(optarg, &o->cfg.order) < 0)
				return rl_err_set(err, RL_EUSAGE,
						  "--order: expected default, fifo, las, tiresias or fair, got \"%s\"",
						  optarg);
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
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				return rl_err_set(err, RL_EUSAGE, "--relish-gangs: expected on or off, got \"%s\"", optarg);
			o->cfg.tune.relish_share_gangs = !strcmp(optarg, "on");
			break;
		case O_R_FPROBE:
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				return rl_err_set(err, RL_EUSAGE, "--relish-family-probe: expected on or off, got \"%s\"", optarg);
			o->cfg.tune.relish_family_probe = !strcmp(optarg, "on");
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

#define H(x) ((x) / 3600.0)

/*
 * The headline figures every comparison states, in the table's order:
 * all of them times, so below 1 is better and every ratio is the first
 * policy's figure over the other's (issue 30 item 6: the best-peer line
 * used to divide the other way, under lines that did not, and said
 * nothing of HPO-experiment time).
 */
static const struct figure {
	const char *words; /* in the summary lines */
	const char *key;   /* in --json's comparisons */
	size_t off;        /* the sim_result field, seconds */
} figures[] = {
	{"makespan", "makespan", offsetof(sim_result, makespan_s)},
	{"mean JCT", "mean_jct", offsetof(sim_result, mean_jct_s)},
	{"p95 JCT", "p95_jct", offsetof(sim_result, p95_jct_s)},
	{"HPO experiment time", "hpo_experiment", offsetof(sim_result, mean_burst_jct_s)},
	{"queueing", "queue", offsetof(sim_result, mean_queue_s)},
};
#define N_FIGURES (sizeof figures / sizeof figures[0])

static double figure_of(const sim_result *r, size_t k)
{
	return *(const double *)((const char *)r + figures[k].off);
}

/* For each figure, the best (lowest) policy other than relish; NULL where
 * relish has no peer. */
static void best_peers(sim_result **res, const sim_result *best[N_FIGURES])
{
	for (size_t k = 0; k < N_FIGURES; k++) {
		best[k] = NULL;
		for (int i = 0; i < SCHED_POLICY__COUNT; i++)
			if (res[i] && i != SCHED_POLICY_RELISH &&
			    (!best[k] || figure_of(res[i], k) < figure_of(best[k], k)))
				best[k] = res[i];
	}
}

/* Which way a ratio of times goes, in words: "7% longer", "20% shorter". */
static void ratio_words(double v, double ref, char *buf, size_t n)
{
	double r = ref > 0 ? v / ref : NAN;
	if (!isfinite(r))
		snprintf(buf, n, "not comparable");
	else if (fabs(r - 1) < 0.005)
		snprintf(buf, n, "the same");
	else
		snprintf(buf, n, "%.0f%% %s", fabs(r - 1) * 100, r > 1 ? "longer" : "shorter");
}

static void print_table(const sim_opts *o, const sim_trace *t, const sim_model *m,
			sim_result **res, const char *coloc)
{
	char scaled[96] = "";
	if (o->scale > 1 && o->scale_span)
		snprintf(scaled, sizeof scaled, " x %d (over %d times its span, seed %llu)", o->scale,
			 o->scale, (unsigned long long)o->scale_seed);
	else if (o->scale > 1)
		snprintf(scaled, sizeof scaled, " x %d (over its span, seed %llu)", o->scale,
			 (unsigned long long)o->scale_seed);
	/* The model counts ordered pairs (A beside B, B beside A) of the
	 * trace's own configurations, not the rows of the pairs file. */
	printf("trace %s%s: %zu jobs, %zu experiments; %d GPUs x %lld MiB; segments %g s, "
	       "restart %g s, hints %s; co-location: measured speeds for %zu ordered pairs of "
	       "the trace's configurations%s%s\n",
	       o->trace, scaled, t->n_jobs, t->n_exps, o->gpus, o->mem, o->cfg.segment_s,
	       o->cfg.restart_cost_s, sim_hints_name(o->cfg.hints), sim_model_pair_count(m),
	       coloc ? " from " : " (none: utilisation fallback only)", coloc ? coloc : "");
	printf("%-9s %8s %11s %10s %9s %9s %9s %10s %9s %5s %5s %6s %5s %5s\n", "policy", "order",
	       "makespan_h", "bound_h", "mean_jct", "med_jct", "p95_jct", "hpo_exp",
	       "queue_h", "mem%", "res%", "comp%", "busy%", "ooms");
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		const sim_result *r = res[i];
		if (!r)
			continue;
		printf("%-9s %8s %11.1f %10.1f %9.2f %9.2f %9.2f %10.2f %9.2f %5.1f %5.1f %6.1f %5.1f %5zu\n",
		       sched_policy_name(r->policy), sched_order_name(r->order), H(r->makespan_s), H(r->lower_bound_makespan_s),
		       H(r->mean_jct_s), H(r->median_jct_s), H(r->p95_jct_s), H(r->mean_burst_jct_s),
		       H(r->mean_queue_s), 100 * r->gpu_mem_util, 100 * r->gpu_mem_reserved,
		       100 * r->gpu_compute_util, 100 * r->gpu_busy, r->oom_count);
	}
	printf("(times in hours; hpo_exp: an HPO experiment's time, its first trial's arrival "
	       "to its last trial's end; mem%%/res%%/comp%%/busy%%: time-averaged GPU memory used "
	       "/ reserved, compute, GPUs busy)\n");
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		if (res[i])
			printf("%s: finish-time fairness rho (experiment time over its time on a private "
			       "1/N of the cluster): mean %.2f, median %.2f, p95 %.2f, max %.2f; "
			       "worst user %s, mean %.2f (%zu users)\n",
			       sched_policy_name(res[i]->policy), res[i]->rho_mean, res[i]->rho_median,
			       res[i]->rho_p95, res[i]->rho_max,
			       res[i]->n_users && t->users[res[i]->rho_worst_user].name[0]
				       ? t->users[res[i]->rho_worst_user].name : "-",
			       res[i]->rho_user_max, res[i]->n_users);
	/* Each policy against exclusive, then relish against the best other
	 * policy of each figure: one direction, every headline figure. */
	printf("(ratios: the first policy's time over the other's; below 1 is shorter, better)\n");
	for (int i = 1; res[0] && i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		const char *nm = sched_policy_name(res[i]->policy);
		printf("%s vs exclusive: %s", nm, nm);
		for (size_t k = 0; k < N_FIGURES; k++) {
			char w[48];
			ratio_words(figure_of(res[i], k), figure_of(res[0], k), w, sizeof w);
			printf("%s %s %.2fx exclusive's (%s)", k ? "," : "", figures[k].words,
			       figure_of(res[i], k) / figure_of(res[0], k), w);
		}
		printf("; makespan / bound %.2f\n", res[i]->makespan_s / res[i]->lower_bound_makespan_s);
	}
	const sim_result *rr = res[SCHED_POLICY_RELISH], *best[N_FIGURES];
	best_peers(res, best);
	if (rr && best[0]) {
		printf("relish vs the best peer: relish");
		for (size_t k = 0; k < N_FIGURES; k++) {
			char w[48];
			const char *pn = sched_policy_name(best[k]->policy);
			ratio_words(figure_of(rr, k), figure_of(best[k], k), w, sizeof w);
			printf("%s %s %.2fx %s's (%s)", k ? "," : "", figures[k].words,
			       figure_of(rr, k) / figure_of(best[k], k), pn, w);
		}
		printf("\n");
	}
}

/* Finish-time fairness: the summary and one row per user. */
static json_t *fairness_json(const sim_trace *t, const sim_result *r)
{
	json_t *users = json_array();
	for (size_t u = 0; users && u < r->n_users; u++) {
		const sim_user_result *ur = &r->users[u];
		json_array_append_new(users, json_pack("{s:s, s:I, s:f, s:f, s:f}", "user",
						       t->users[u].name, "experiments",
						       (json_int_t)ur->n_exps, "rho_mean", ur->rho_mean,
						       "rho_max", ur->rho_max, "attained_gpu_h",
						       ur->attained_gpu_s / 3600.0));
	}
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:s, s:o}", "rho_mean", r->rho_mean,
			 "rho_median", r->rho_median, "rho_p95", r->rho_p95, "rho_max", r->rho_max,
			 "rho_user_max", r->rho_user_max, "worst_user",
			 r->n_users ? t->users[r->rho_worst_user].name : "", "users", users);
}

static json_t *result_json(const sim_trace *t, const sim_result *r)
{
	json_t *j = json_pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f, s:I, s:I, s:I, s:I}",
			 "order", sched_order_name(r->order), "makespan_s", r->makespan_s, "mean_jct_s", r->mean_jct_s,
			 "median_jct_s", r->median_jct_s, "p95_jct_s", r->p95_jct_s,
			 "mean_burst_jct_s", r->mean_burst_jct_s, "mean_queue_s", r->mean_queue_s,
			 "gpu_mem_util", r->gpu_mem_util, "gpu_mem_reserved", r->gpu_mem_reserved,
			 "gpu_compute_util", r->gpu_compute_util, "gpu_busy", r->gpu_busy,
			 "lower_bound_makespan_s", r->lower_bound_makespan_s,
			 "lb_critical_s", r->lb_critical_s, "lb_memory_s", r->lb_memory_s,
			 "lb_compute_s", r->lb_compute_s,
			 "oom_count", (json_int_t)r->oom_count,
			 "makespan_over_bound", r->makespan_s / r->lower_bound_makespan_s,
			 "jobs", (json_int_t)r->n_jobs, "segments", (json_int_t)r->n_segments,
			 "events", (json_int_t)r->n_events, "gangs_capped", (json_int_t)r->n_gang_capped);
	if (j)
		json_object_set_new(j, "fairness", fairness_json(t, r));
	if (j && r->oom_foreign_count)
		json_object_set_new(j, "oom_foreign", json_integer((json_int_t)r->oom_foreign_count));
	return j;
}

/* The summary's comparisons as data: each policy's figures over
 * exclusive's, and relish's over the best peer's (with who that is). */
static json_t *comparisons_json(sim_result **res)
{
	json_t *c = json_object(), *vs_ex = json_object();
	for (int i = 1; res[0] && i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		json_t *one = json_object();
		for (size_t k = 0; k < N_FIGURES; k++)
			json_object_set_new(one, figures[k].key,
					    json_real(figure_of(res[i], k) / figure_of(res[0], k)));
		json_object_set_new(vs_ex, sched_policy_name(res[i]->policy), one);
	}
	json_object_set_new(c, "vs_exclusive", vs_ex);
	const sim_result *rr = res[SCHED_POLICY_RELISH], *best[N_FIGURES];
	best_peers(res, best);
	if (rr && best[0]) {
		json_t *peer = json_object();
		for (size_t k = 0; k < N_FIGURES; k++)
			json_object_set_new(peer, figures[k].key,
					    json_pack("{s:s, s:f}", "peer",
						      sched_policy_name(best[k]->policy), "ratio",
						      figure_of(rr, k) / figure_of(best[k], k)));
		json_object_set_new(c, "relish_vs_best_peer", peer);
	}
	return c;
}

static json_t *report_json(const sim_opts *o, const sim_trace *t, const sim_model *m,
			   sim_result **res, const char *coloc)
{
	json_t *pol = json_object();
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		if (res[i])
			json_object_set_new(pol, sched_policy_name(res[i]->policy), result_json(t, res[i]));
	json_t *cfg = json_pack("{s:s, s:I, s:I, s:I, s:f, s:f, s:s, s:s?, s:I, s:I}",
				"trace", o->trace, "jobs", (json_int_t)t->n_jobs,
				"gpus", (json_int_t)o->gpus, "gpu_memory_mib", (json_int_t)o->mem,
				"segment_s", o->cfg.segment_s, "restart_cost_s", o->cfg.restart_cost_s,
				"hints", sim_hints_name(o->cfg.hints), "colocate", coloc,
				"measured_pairs", (json_int_t)sim_model_pair_count(m),
				"scale", (json_int_t)o->scale);
	if (cfg)
		json_object_set_new(cfg, "window", json_integer(o->cfg.window > 0 ? o->cfg.window : 0));
	if (cfg && o->background) {
		json_object_set_new(cfg, "background", json_string(o->background));
		json_object_set_new(cfg, "background_steps",
				    json_integer((json_int_t)o->cfg.background->n));
	}
	if (cfg && o->scale > 1) {
		json_object_set_new(cfg, "scale_span", json_boolean(o->scale_span));
		json_object_set_new(cfg, "scale_seed", json_integer((json_int_t)o->scale_seed));
	}
	return json_pack("{s:o, s:o, s:o}", "policies", pol, "config", cfg, "comparisons",
			 comparisons_json(res));
}

static int write_file(const char *dir, const char *name, FILE **f, rl_err *err)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	*f = fopen(path, "w");
	if (!*f)
		return rl_err_sys(err, RL_EIO, errno, "writing %s", path);
	return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The utilisation plot's data: the series averaged into at most
 * PLOT_POINTS bins (whole multiples of the series step), so that months of
 * hourly samples draw as a readable line rather than a solid band. */
#define PLOT_POINTS 300

static int write_smoothed(const char *dir, const sim_result *r, double step, rl_err *err)
{
	char name[80];
	snprintf(name, sizeof name, "series_%s_smooth.csv", sched_policy_name(r->policy));
	FILE *f;
	int rc = write_file(dir, name, &f, err);
	if (rc < 0)
		return rc;
	size_t per = r->n_series > PLOT_POINTS ? (r->n_series + PLOT_POINTS - 1) / PLOT_POINTS : 1;
	fprintf(f, "t_days,busy,mem_used,mem_reserved,compute\n");
	for (size_t k = 0; k < r->n_series; k += per) {
		double b = 0, mu = 0, mr = 0, c = 0;
		size_t n = 0;
		for (size_t j = k; j < k + per && j < r->n_series; j++, n++) {
			b += r->series[j].busy;
			mu += r->series[j].mem_used;
			mr += r->series[j].mem_reserved;
			c += r->series[j].compute;
		}
		/* the bin's middle */
		double t = r->series[k].t_s + step * (double)n / 2;
		fprintf(f, "%.4f,%.4f,%.4f,%.4f,%.4f\n", t / 86400, b / n, mu / n, mr / n, c / n);
	}
	if (fclose(f) != 0)
		return rl_err_sys(err, RL_EIO, errno, "writing %s/%s", dir, name);
	return 0;
}

/*
 * gnuplot script: utilisation over time with one panel per policy (three
 * series drawn on top of each other could not be told apart), from the
 * smoothed series, the cluster in the title; and the JCT CDF, one line per
 * policy.
 */
static int write_plots(const sim_opts *o, sim_result **res, size_t n_jobs, double bin_days,
		       rl_err *err)
{
	const char *dir = o->out;
	FILE *f;
	int rc = write_file(dir, "plots.gp", &f, err);
	if (rc < 0)
		return rc;
	int n = 0;
	double span = 0; /* one x range for every panel, so they compare */
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		n += res[i] != NULL;
		if (res[i] && res[i]->n_series) {
			double end = res[i]->series[res[i]->n_series - 1].t_s + o->cfg.series_step_s;
			span = end > span ? end : span;
		}
	}
	char bin[48];
	if (bin_days >= 1)
		snprintf(bin, sizeof bin, "%.3g-day means", bin_days);
	else
		snprintf(bin, sizeof bin, "%.3g-hour means", bin_days * 24);
	fprintf(f, "# relish simulate: plots (run with gnuplot in this folder)\n"
		   "set terminal pngcairo size 900,%d noenhanced\nset datafile separator ','\n"
		   "set output 'utilisation.png'\n"
		   "set multiplot layout %d,1 title 'GPU compute and memory in use, %d GPUs x %lld MiB "
		   "(%s)'\n"
		   "set key outside right\nset grid\nset yrange [0:1.05]\nset xrange [0:%g]\n"
		   "set ylabel 'fraction of cluster'\n",
		n > 1 ? 260 * n + 60 : 500, n, o->gpus, o->mem, bin, span > 0 ? span / 86400 : 1);
	int k = 0;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		const char *nm = sched_policy_name(res[i]->policy);
		k++;
		fprintf(f, "set title '%s'\nset xlabel '%s'\n"
			   "plot 'series_%s_smooth.csv' using 1:5 skip 1 with lines lw 2 lc %d "
			   "title 'compute', 'series_%s_smooth.csv' using 1:3 skip 1 with lines "
			   "dt 2 lw 2 lc %d title 'memory used'\n",
			nm, k == n ? "time since first arrival (days)" : "", nm, i + 1, nm, i + 1);
	}
	/* The CDF's x range from its data (the shortest and longest job of
	 * every policy, as jct_cdf_*.csv write them): the utilisation panels'
	 * range in days must not carry over to it (a leftover xrange of
	 * [0:1] hid most jobs). */
	double lo = INFINITY, hi = 0;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		for (size_t j = 0; res[i] && j < n_jobs; j++) {
			double h = fmax(res[i]->jct_s[j], 1) / 3600.0;
			lo = h < lo ? h : lo;
			hi = h > hi ? h : hi;
		}
	if (!(hi > 0)) {
		lo = 0.01;
		hi = 1;
	}
	fprintf(f, "unset multiplot\n"
		   "set terminal pngcairo size 900,500 noenhanced\n"
		   "set output 'jct_cdf.png'\nset title 'Job completion time CDF, %d GPUs x %lld MiB'\n"
		   "set key outside right\nset grid\nset logscale x\n"
		   "set xrange [%.6g:%.6g]\n"
		   "set xlabel 'job completion time (hours, log scale)'\nset ylabel 'fraction of jobs'\n"
		   "set yrange [0:1]\nplot ", o->gpus, o->mem, lo / 1.25, hi * 1.25);
	int first = 1;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		const char *nm = sched_policy_name(res[i]->policy);
		fprintf(f, "%s'jct_cdf_%s.csv' using 1:2 skip 1 with lines lw 2 lc %d title '%s'",
			first ? "" : ", ", nm, i + 1, nm);
		first = 0;
	}
	fprintf(f, "\n");
	if (fclose(f) != 0)
		return rl_err_sys(err, RL_EIO, errno, "writing %s/plots.gp", dir);
	return 0;
}

static int run_gnuplot(const char *dir)
{
	pid_t pid;
	char *argv[] = {"gnuplot", "plots.gp", NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, dir);
	/* its warnings ("empty x range") into the folder, not onto the screen */
	posix_spawn_file_actions_addopen(&fa, 2, "gnuplot.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -1;
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
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

/*
 * Run the chosen policies side by side (sim_run_tasks: a thread per processor,
 * results identical to running them in turn); with --placements, each
 * writes DIR/placements_POLICY.csv through its on_place observer.
 */
static int run_policies(const sim_opts *o, const sim_trace *t, const sim_model *m,
			sim_result **res, rl_err *err)
{
	sim_task tasks[SCHED_POLICY__COUNT];
	sim_config cfg[SCHED_POLICY__COUNT];
	place_log lg[SCHED_POLICY__COUNT];
	char name[SCHED_POLICY__COUNT][64];
	size_t n = 0;
	int rc = 0;
	if (o->placements && mkdir(o->out, 0777) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", o->out);
	for (int i = 0; i < SCHED_POLICY__COUNT && rc == 0; i++) {
		if (!o->policies[i])
			continue;
		cfg[n] = o->cfg;
		if (o->placements) {
			snprintf(name[n], sizeof name[n], "placements_%s.csv",
				 sched_policy_name((sched_policy)i));
			lg[n] = (place_log){.t = t};
			if ((rc = write_file(o->out, name[n], &lg[n].f, err)) < 0)
				break;
			fputs(SIM_PLACEMENTS_CSV_HEADER, lg[n].f);
			cfg[n].on_place = log_placement;
			cfg[n].ctx = &lg[n];
		}
		tasks[n] = (sim_task){.policy = (sched_policy)i, .cfg = &cfg[n]};
		n++;
	}
	if (rc == 0)
		sim_run_tasks(t, m, tasks, n);
	for (size_t k = 0; k < n; k++) {
		if (rc == 0 && tasks[k].rc < 0) {
			rc = tasks[k].rc;
			*err = tasks[k].err;
			rl_err_prefix(err, "policy %s", sched_policy_name(tasks[k].policy));
		}
		if (o->placements && fclose(lg[k].f) != 0 && rc == 0)
			rc = rl_err_sys(err, RL_EIO, errno, "writing %s/%s", o->out, name[k]);
		res[tasks[k].policy] = tasks[k].result;
	}
	return rc;
}

static int write_out(const sim_opts *o, const sim_trace *t, sim_result **res,
		     json_t *report, rl_err *err)
{
	if (mkdir(o->out, 0777) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", o->out);
	FILE *f;
	int rc;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		const sim_result *r = res[i];
		if (!r)
			continue;
		const char *n = sched_policy_name(r->policy);
		char name[64];
		snprintf(name, sizeof name, "series_%s.csv", n);
		if ((rc = write_file(o->out, name, &f, err)) < 0)
			return rc;
		fprintf(f, "t_s,busy,mem_used,mem_reserved,compute,queued\n");
		for (size_t k = 0; k < r->n_series; k++) {
			const sim_sample *s = &r->series[k];
			fprintf(f, "%.0f,%.4f,%.4f,%.4f,%.4f,%.2f\n", s->t_s, s->busy, s->mem_used,
				s->mem_reserved, s->compute, s->queued);
		}
		fclose(f);
		snprintf(name, sizeof name, "jct_%s.csv", n);
		if ((rc = write_file(o->out, name, &f, err)) < 0)
			return rc;
		fprintf(f, "job_id,submit_s,jct_s,queue_s\n");
		for (size_t j = 0; j < t->n_jobs; j++)
			fprintf(f, "%s,%.0f,%.1f,%.1f\n", t->jobs[j].id, t->jobs[j].submit_s,
				r->jct_s[j], r->queue_s[j]);
		fclose(f);
		snprintf(name, sizeof name, "fairness_%s.csv", n);
		if ((rc = write_file(o->out, name, &f, err)) < 0)
			return rc;
		fprintf(f, "user,experiments,rho_mean,rho_max,attained_gpu_h\n");
		for (size_t u = 0; u < r->n_users; u++)
			fprintf(f, "%s,%zu,%.4f,%.4f,%.3f\n", t->users[u].name, r->users[u].n_exps,
				r->users[u].rho_mean, r->users[u].rho_max,
				r->users[u].attained_gpu_s / 3600.0);
		fclose(f);
		/* CDF at up to 500 points keeps the plot data small. */
		double *v = malloc(t->n_jobs * sizeof *v);
		if (!v)
			return rl_err_set(err, RL_ENOMEM, "writing %s: out of memory", o->out);
		memcpy(v, r->jct_s, t->n_jobs * sizeof *v);
		qsort(v, t->n_jobs, sizeof *v, cmp_dbl);
		snprintf(name, sizeof name, "jct_cdf_%s.csv", n);
		if ((rc = write_file(o->out, name, &f, err)) < 0) {
			free(v);
			return rc;
		}
		fprintf(f, "jct_h,fraction\n");
		size_t stride = t->n_jobs > 500 ? t->n_jobs / 500 : 1;
		for (size_t k = 0; k < t->n_jobs; k += stride)
			fprintf(f, "%.5f,%.4f\n", fmax(v[k], 1) / 3600.0, (double)(k + 1) / (double)t->n_jobs);
		fprintf(f, "%.5f,1\n", fmax(v[t->n_jobs - 1], 1) / 3600.0);
		fclose(f);
		free(v);
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/summary.json", o->out);
	if (json_dump_file(report, path, JSON_INDENT(2) | JSON_SORT_KEYS) != 0)
		return rl_err_set(err, RL_EIO, "writing %s", path);
	double bin_days = 0;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		if (!res[i])
			continue;
		if ((rc = write_smoothed(o->out, res[i], o->cfg.series_step_s, err)) < 0)
			return rc;
		size_t per = res[i]->n_series > PLOT_POINTS
				     ? (res[i]->n_series + PLOT_POINTS - 1) / PLOT_POINTS : 1;
		bin_days = (double)per * o->cfg.series_step_s / 86400;
	}
	if ((rc = write_plots(o, res, t->n_jobs, bin_days, err)) < 0)
		return rc;
	int plotted = run_gnuplot(o->out) == 0;
	/* Say where it all went (stderr: stdout may be --json). */
	fprintf(stderr, "relish simulate: wrote %s/: summary.json, per policy series_*.csv "
		"(every %g s; *_smooth.csv for the plot), jct_*.csv, jct_cdf_*.csv, fairness_*.csv%s, "
		"plots.gp%s\n", o->out, o->cfg.series_step_s, o->placements ? ", placements_*.csv" : "",
		plotted ? ", utilisation.png, jct_cdf.png"
			: " (gnuplot failed or is not installed: no PNGs; see gnuplot.log there)");
	return 0;
}

static void err_row(const char *what, const char *data, const sim_colo_err *e)
{
	printf("%-34s %-22s %5zu %8.3f %8.3f %+8.3f\n", what, data, e->n, e->median, e->p90, e->bias);
}

static json_t *err_json(const sim_colo_err *e)
{
	return json_pack("{s:I, s:f, s:f, s:f}", "n", (json_int_t)e->n, "median_abs_error", e->median,
			 "p90_abs_error", e->p90, "bias", e->bias);
}

/* --check-colocate: the co-location model against measurements. */
static int check_colocate(const sim_opts *o, const sim_trace *t, const sim_model *m, rl_err *err)
{
	sim_colo_check c;
	int rc = sim_colocate_check(t, m, o->check, &c, err);
	if (rc < 0)
		return rc;
	if (o->json) {
		json_t *j = json_pack("{s:I, s:I, s:I, s:I, s:I, s:{s:o, s:o}, s:{s:o}, s:{s:o}, "
				      "s:{s:f, s:f, s:o, s:o}}",
				      "lucid_pairs", (json_int_t)c.lucid_pairs, "gavel_types",
				      (json_int_t)c.gavel_types, "gavel_pairs", (json_int_t)c.gavel_pairs,
				      "gavel_did_not_fit", (json_int_t)c.gavel_oom, "gavel_measured_in_lucid",
				      (json_int_t)c.gavel_measured_in_lucid,
				      "prior", "lucid", err_json(&c.prior_lucid), "gavel", err_json(&c.prior_gavel),
				      "model", "gavel", err_json(&c.model_gavel),
				      "lucid_measurement", "gavel", err_json(&c.lucid_vs_gavel),
				      "fit", "alpha", c.fit_alpha, "beta", c.fit_beta, "lucid",
				      err_json(&c.fit_lucid), "gavel", err_json(&c.fit_gavel));
		if (!j)
			return rl_err_set(err, RL_ENOMEM, "building the report: out of memory");
		json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
		putchar('\n');
		json_decref(j);
		return 0;
	}
	printf("co-location model against measurements: %zu Lucid pairs among the trace's "
	       "configurations; Gavel V100: %zu job types matched, %zu ordered pairs that ran "
	       "together (%zu did not fit in memory together, left out), %zu of them measured "
	       "by Lucid too\n",
	       c.lucid_pairs, c.gavel_types, c.gavel_pairs, c.gavel_oom, c.gavel_measured_in_lucid);
	printf("%-34s %-22s %5s %8s %8s %8s\n", "predictor", "measured by", "pairs", "median",
	       "p90", "bias");
	err_row("core prior min(1, 100/(ua+ub))", "Lucid", &c.prior_lucid);
	err_row("core prior min(1, 100/(ua+ub))", "Gavel V100", &c.prior_gavel);
	err_row("simulator model (Lucid + prior)", "Gavel V100", &c.model_gavel);
	err_row("Lucid's measurement of the pair", "Gavel V100", &c.lucid_vs_gavel);
	char fit[64];
	snprintf(fit, sizeof fit, "fit 1/(1+%.2f(U-%.0f)+/100)", c.fit_alpha, c.fit_beta);
	err_row(fit, "Lucid (fitted on)", &c.fit_lucid);
	err_row(fit, "Gavel V100", &c.fit_gavel);
	printf("(|predicted - measured| speed relative to alone; bias = mean of predicted - measured)\n");
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
	sim_result *res[SCHED_POLICY__COUNT] = {NULL};
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
	if ((rc = run_policies(&o, t, m, res, err)) < 0)
		goto done;
	report = report_json(&o, t, m, res, coloc);
	if (!report) {
		rc = rl_err_set(err, RL_ENOMEM, "building the report: out of memory");
		goto done;
	}
	if (o.json) {
		json_dumpf(report, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
		putchar('\n');
	} else {
		print_table(&o, t, m, res, coloc);
	}
	if (o.out && (rc = write_out(&o, t, res, report, err)) < 0)
		goto done;
	rc = 0;
done:
	json_decref(report);
	for (int i = 0; i < SCHED_POLICY__COUNT; i++)
		sim_result_free(res[i]);
	sim_model_free(m);
	sim_trace_free(t);
	sim_background_free(bg);
	free(coloc);
	return rc;
}
