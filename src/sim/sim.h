/*
 * sim.h - the trace-driven simulator: replays a job trace through the core
 * scheduler (sched/sched.h) with a virtual clock, the co-location model
 * (sim/model.h) and the honesty rules of docs/simulator.md, and measures
 * what each sharing policy does with it.
 *
 * Each job is cut into segments of at most segment_s seconds of exclusive
 * work; every segment is one sched_submit / sched_place / sched_finished
 * round trip, exactly as the live driver does it.  The simulator knows each
 * job's true peak memory and utilisation; the core only ever sees the
 * user's hint at submission and observations of segments that ran.
 *
 * Deterministic: the same trace, model and configuration give identical
 * results (events at equal times are handled ends first, then arrivals, in
 * a fixed order, and the core is a pure function of its inputs).
 */
#ifndef RELISH_SIM_H
#define RELISH_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "sched/sched.h"
#include "sim/model.h"
#include "sim/trace.h"

/* What a policy is told about a job's memory when it is submitted (a
 * mem_hint_mib column in the trace always wins). */
typedef enum sim_hints {
	SIM_HINTS_NOISY,  /* the user's guess: true peak x a per-job factor in
			     [0.8, 1.6), rounded up to 256 MiB (default) */
	SIM_HINTS_EXACT,  /* the true peak (an oracle; for comparison only) */
	SIM_HINTS_NONE,   /* nothing: the core must measure */
} sim_hints;

const char *sim_hints_name(sim_hints h);
int sim_hints_from_name(const char *s, sim_hints *out);
/*
 * The simulated policies are the core's named policies (sched/policy.h:
 * sched_policy, sched_policy_options), each a configuration of the same
 * core (docs/simulator.md, "Policies"):
 *   exclusive  a whole GPU per segment, FIFO: today's practice;
 *   pack       by declared memory, best fit, FIFO;
 *   relish     relish's own policy (measured memory, the co-location
 *              model), least attained service;
 *   tiresias   Tiresias (Gu et al., NSDI'19): whole GPUs, discretised
 *              2D-LAS queues;
 *   gandiva    Gandiva (Xiao et al., OSDI'18): packing by measured
 *              utilisation, time-slicing of over-subscribed GPUs, gangs
 *              included, FIFO.
 */

/* In which order queued segments are offered to the devices: the core's
 * order policy (sched_options.order; ORDER_DEFAULT = fifo for exclusive
 * and pack, las for relish).  las and tiresias order jobs by the
 * service the core counted for them (GPU-seconds held), decided at
 * segment boundaries: segmenting is what makes this possible without
 * killing work, since a job yields only where it checkpoints; fair
 * orders the trace's users by their attained GPU-time. */
typedef queue_order sim_order;

/* A background-occupancy series (background.c, docs/simulator.md "Foreign
 * load"): from t_s on, GPU gpu has mib MiB in use by processes relish does
 * not own, until the next step for that GPU.  Sorted by time, then file
 * order (seq). */
typedef struct sim_bg_step {
	double t_s;
	int gpu;
	uint64_t mib;
	size_t seq;
	size_t line;      /* in its file, for messages */
} sim_bg_step;

typedef struct sim_background {
	sim_bg_step *step;
	size_t n;
} sim_background;

/* Read a series (header "time_s,gpu,mib"); *out owned by the caller
 * (sim_background_free).  name is used in messages.  Errors name the file,
 * line and field. */
int sim_background_parse(const char *text, const char *name, sim_background **out, rl_err *err);
int sim_background_load(const char *path, sim_background **out, rl_err *err);
void sim_background_free(sim_background *b);
/* Options of the simulated policies other than their defaults (ablations,
 * `relish simulate --relish-*` and friends); a negative value, or a first
 * threshold of 0, leaves the default. */
typedef struct sim_tune {
	int relish_share_gangs;
	double relish_min_speedup;
	double relish_margin;
	double relish_solo_after_s;
	int relish_family_probe;
	int relish_timeslice;     /* relish: timeslice_refused (-1: default) */
	int relish_timeslice_gangs; /* relish: timeslice_gangs */
	int relish_gang_probe;    /* relish: gang_probe */
	double relish_hint_quantile; /* relish: hint_quantile (-1: default) */
	double relish_family_quantile; /* relish: family_quantile (-1: default) */
	double las_tail;          /* every policy: las_tail (-1: default) */
	int relish_explore;        /* explore_max */
	double tiresias_limit_s[SCHED_MAX_TIERS];
	int gandiva_timeslice_max;
	/* The Tiresias peer's preemption quantum: its segments are this long
	 * (seconds of exclusive work, at most segment_s), so it re-orders its
	 * queues every quantum of a job's service, where Tiresias itself
	 * preempts at any time (checkpointing on demand), and within a queue
	 * its running jobs come before its waiting ones; 0: segment_s and the
	 * core's order alone, as every other policy.  Default
	 * SIM_TIRESIAS_QUANTUM_S (docs/simulator.md). */
	double tiresias_quantum_s;
	double fair_half_life_s;   /* the fair order's half-life, any policy; 0: none */
} sim_tune;

/* The Tiresias peer's default quantum (sim_tune.tiresias_quantum_s): its
 * best mean JCT of those measured on the Philly trace (docs/evaluation.md,
 * "The peers' own settings"). */
#define SIM_TIRESIAS_QUANTUM_S 1800.0

/* Apply t to policy p's options o. */
void sim_tune_apply(const sim_tune *t, sched_policy p, sched_options *o);

typedef struct sim_config {
	int n_gpus;               /* >= 1 */
	uint64_t gpu_mem_mib;     /* per GPU */
	double segment_s;         /* exclusive-time work per segment (> 0) */
	double restart_cost_s;    /* paid by a segment that does not continue
				     seamlessly on the devices of its predecessor */
	sim_hints hints;
	sim_order order;
	/* Admission window: at most this many segments of one experiment
	 * wait in the core's queue; the experiment's others wait in the
	 * driver, segments of started jobs first, then new jobs in arrival
	 * order, as the live driver keeps them in the search engine.
	 * Default SCHED_ADMIT_WINDOW, the live driver's (sched/policy.h);
	 * <= 0 = unlimited (every ready segment goes straight in). */
	int window;
	double series_step_s;     /* > 0: record utilisation per step (for --out) */
	/* Memory that others use on the GPUs over time (may be NULL: none).
	 * The core is told each step as the live driver tells it what NVML
	 * shows (sched_device_set_foreign); a step that leaves a GPU's true
	 * use above its memory makes the segment placed there last run out of
	 * memory at once. */
	const sim_background *background;
	sim_tune tune;
	/* The core is told what a live driver would see, not the model's
	 * figures: each segment's observed time is its true time x (1 + e),
	 * e uniform in [-observe_noise, observe_noise], drawn from the
	 * segment's id (the progress rate a driver measures varies from run
	 * to run).  Default 0.05; 0 = exact. */
	double observe_noise;
	/* Optional observers (e.g. to compare with the live driver's
	 * decisions); called in event order.  May be NULL. */
	void (*on_place)(void *ctx, double now, const sched_request *req,
			 const sched_placement *pl);
	void (*on_finish)(void *ctx, double now, uint64_t seg_id,
			  const sched_observation *obs);
	void *ctx;
} sim_config;

/* The segment ids the simulator gives the core: (job index in trace order)
 * << 24 | n, with n the job's n-th submission to the core (1-based; each
 * segment and each retry after an out-of-memory counts). */
size_t sim_seg_job(uint64_t seg_id);
uint32_t sim_seg_number(uint64_t seg_id);

/* Optional per-placement CSV (`relish simulate --placements`), for
 * comparing decisions with the live driver's store: the header below, then
 * one row per placement from an on_place observer:
 *   time_s,job_id,segment,devices,mem_mib,compute,basis
 * devices are GPU indices joined by ';' (gangs), mem_mib the reservation on
 * each, basis sched_basis_name's word.  sim_placement_csv_row writes the
 * row (with its newline) into buf of size n and returns its length as
 * snprintf does (>= n: truncated); t is the trace that was run. */
#define SIM_PLACEMENTS_CSV_HEADER "time_s,job_id,segment,devices,mem_mib,compute,basis\n"
int sim_placement_csv_row(const sim_trace *t, double now, const sched_placement *pl,
			  char *buf, size_t n);

/* Defaults: 8 GPUs of 32 GiB, 3600 s segments, 30 s restart, noisy hints,
 * no series. */
void sim_config_default(sim_config *c);

/* One row of the utilisation time series (fractions of the cluster). */
typedef struct sim_sample {
	double t_s;               /* start of the step, relative to the first arrival */
	double busy;              /* GPUs with at least one segment */
	double mem_used;          /* true memory in use */
	double mem_reserved;      /* memory reserved by the core */
	double compute;           /* sum over GPUs of min(100, sum util x speed) */
	double queued;            /* segments waiting (time average, count) */
} sim_sample;

/* Finish-time fairness of one user's experiments (docs/simulator.md). */
typedef struct sim_user_result {
	size_t n_exps;            /* its experiments */
	double rho_mean, rho_max; /* over them */
	double attained_gpu_s;    /* device-seconds the core counted for it */
} sim_user_result;

typedef struct sim_result {
	sched_policy policy;
	sim_order order;          /* the queue order used */
	double segment_s;         /* its segment length (sim_tune's quantum) */
	size_t n_jobs, n_segments, n_events, oom_count, n_gang_capped;
	size_t oom_foreign_count; /* ... of oom_count: others' memory grew
				     under a running segment (background) */
	size_t n_hpo_exps;
	double makespan_s;        /* last completion - first arrival */
	double mean_jct_s, median_jct_s, p95_jct_s;
	double mean_burst_jct_s;  /* HPO experiments: last trial done - first arrival */
	double mean_queue_s;      /* per job: total time its segments waited */
	double gpu_mem_util;      /* time averages over the makespan, 0..1 */
	double gpu_mem_reserved;
	double gpu_compute_util;
	double gpu_busy;
	double lower_bound_makespan_s;
	double lb_critical_s, lb_memory_s, lb_compute_s; /* its three terms */
	double *jct_s;            /* per job, trace order (n_jobs) */
	double *queue_s;          /* per job, trace order */
	sim_sample *series;       /* n_series rows when series_step_s > 0 */
	/* Finish-time fairness (Themis, Mahajan et al., NSDI'20): rho of an
	 * experiment = its completion time (last trial done - first arrival)
	 * over its completion time on a private 1/N of the cluster, N the
	 * users with work during its life (sim_fairness).  rho <= 1: it did
	 * at least as well as with its own share. */
	double rho_mean, rho_median, rho_p95, rho_max;
	double rho_user_max;      /* the largest of the users' mean rho */
	size_t rho_worst_user;    /* that user (index into t->users) */
	size_t n_users;
	sim_user_result *users;   /* n_users, trace order of users */
	sched_work work;          /* the core's work counts (bench_sim) */
	size_t n_series;
} sim_result;

/*
 * Run trace t under policy with the given model and configuration.
 * On success *out is a new result owned by the caller (sim_result_free).
 * Fails with RL_EINVAL when a job can never be placed (its true memory is
 * larger than a GPU), with the core's error when it rejects a request.
 */
int sim_run(const sim_trace *t, const sim_model *m, const sim_config *c,
	    sched_policy policy, sim_result **out, rl_err *err);

/* One simulation of a batch: fill policy and cfg; sim_run_tasks fills the
 * rest (result owned by the caller: sim_result_free). */
typedef struct sim_task {
	sched_policy policy;
	const sim_config *cfg;
	sim_result *result;
	double wall_s;            /* this simulation's own wall time */
	rl_err err;
	int rc;                   /* 0 or sim_run's error */
} sim_task;

/*
 * Run n independent simulations side by side on a pool of threads, one
 * per processor, the most expensive policies first (the trace and model
 * are read-only, the core keeps no global state, and each run is
 * deterministic, so the results equal running them one after another).
 * The caller's thread is one of the workers, so every task runs even when
 * no thread can start.  The cfg observers (on_place, on_finish) are called
 * from the thread that runs the task.
 */
void sim_run_tasks(const sim_trace *t, const sim_model *m, sim_task *tasks, size_t n);

/*
 * Finish-time fairness of result r (its jct_s) on trace t under c: fills
 * r->rho_*, and r->users' n_exps and rho (r->users must hold t->n_users
 * entries; attained_gpu_s is left as it is).  For experiment e with first
 * arrival a, completion f and N users with a job in the system at some
 * time in [a, f] (arrived, not finished; e's own user included), its
 * ideal time on G/N GPUs is
 *   max( max_j (s_j - a + w_j x max(1, g_j N / G)),  sum_j g_j w_j N / G )
 * over its jobs j (arrival s_j, exclusive work w_j plus one restart, g_j
 * GPUs), and rho = (f - a) / ideal.
 */
int sim_fairness(const sim_trace *t, const sim_config *c, sim_result *r, rl_err *err);
void sim_result_free(sim_result *r);

/* The lower bound on makespan of docs/simulator.md (valid for every
 * policy): the largest of the critical path, the memory area and the
 * compute area (m may be NULL: no compute term).  The three terms are
 * written to parts[0..3) when parts is not NULL. */
double sim_lower_bound(const sim_trace *t, const sim_model *m, const sim_config *c,
		       double parts[3]);

/* The co-location model against measurements (colocheck.c). */
typedef struct sim_colo_err {
	size_t n;
	double median, p90;       /* of |predicted - measured| speed */
	double bias;              /* mean of predicted - measured */
} sim_colo_err;

typedef struct sim_colo_check {
	size_t lucid_pairs;       /* measured ordered pairs among t's profiles */
	size_t gavel_types;       /* Gavel V100 job types matched to a profile */
	size_t gavel_pairs;       /* their ordered pairs that ran together */
	size_t gavel_oom;         /* ... and those that did not fit together */
	size_t gavel_measured_in_lucid; /* Gavel pairs Lucid measured too */
	sim_colo_err prior_lucid, prior_gavel; /* the core's prior */
	sim_colo_err model_gavel;            /* the simulator's model */
	sim_colo_err lucid_vs_gavel;         /* Lucid's measurement, same pairs */
	sim_colo_err fit_lucid, fit_gavel;   /* the model fitted on Lucid */
	double fit_alpha, fit_beta;
} sim_colo_check;

/*
 * Score the co-location predictors (the core's prior, the simulator's
 * model m, a model fitted on m's measured pairs) on m's measured pairs and
 * on Gavel's V100 pairwise throughputs in gavel_json, with the
 * utilisations of t's configurations.  0, or RL_EPARSE / RL_EIO naming the
 * file, RL_ENOMEM.
 */
int sim_colocate_check(const sim_trace *t, const sim_model *m, const char *gavel_json,
		       sim_colo_check *out, rl_err *err);

#endif
