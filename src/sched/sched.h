/*
 * sched.h - the core scheduler: queue, devices, placement policy, memory
 * estimator and co-location model.  Pure: no clock (now is an argument), no
 * files, no processes.  The live driver (cli/run, exec/) and the simulator
 * (sim/) feed it the same events and apply the same decisions, which is what
 * makes simulated results say something about live runs.
 *
 * Life of a segment:
 *   driver: sched_submit(request)            -> queued
 *   driver: sched_place(now) -> placements   -> running on a device with a
 *           memory reservation and a compute share
 *   driver: sched_finished(seg, observation) -> reservation released; the
 *           observed peak memory and throughput update the shape's profile;
 *           the devices x seconds it held count as service of its job and
 *           its user, which the queue orders (las, tiresias, fair) read
 * An out-of-memory segment is reported with outcome SEG_OUT_OOM; what it
 * means (re-queue with a raised floor, run alone, fail the trial) is the
 * core's decision too (sched_mem_decide, mem.c), and the estimator raises
 * the shape's reservation.
 *
 * Ownership: sched_new returns an object freed with sched_free; requests and
 * observations are copied; placements are written into caller memory.
 */
#ifndef RELISH_SCHED_H
#define RELISH_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/outcome.h"
#include "sched/policy.h"

#define SCHED_MAX_FEAT 8
#define SCHED_MAX_GANG 16
#define SCHED_MAX_TIERS 8

typedef struct sched sched;

typedef struct sched_device_info {
	char name[64];          /* "NVIDIA H100 80GB HBM3", "host" */
	char uuid[96];          /* GPU-..., or "host" */
	int is_gpu;
	uint64_t mem_total_mib; /* GPU memory, or host RAM relish may use */
	double compute_total;   /* GPU: 100 (percent); host: number of CPUs */
} sched_device_info;

/* How a segment ended (SEG_OUT_*, seg_outcome_name): common/outcome.h,
 * shared with the executors. */

/* Where a reservation came from (reported per placement, kept in the store). */
typedef enum sched_basis {
	SCHED_BASIS_HINT,      /* the user's declared need */
	SCHED_BASIS_PROFILE,   /* measured peak of this shape + margin */
	SCHED_BASIS_FAMILY,    /* estimated from measured shapes of the same command */
	SCHED_BASIS_EXCLUSIVE, /* unknown: runs alone to be measured */
	SCHED_BASIS_OOM,       /* raised after an out-of-memory */
	SCHED_BASIS_PROBE,     /* unknown, on the host: a bounded first guess
				  (host_probe_*), measured while others run */
} sched_basis;

const char *sched_basis_name(sched_basis b);

typedef struct sched_request {
	uint64_t seg_id;         /* unique, chosen by the driver */
	uint64_t exp_id;         /* experiment (fairness across experiments) */
	uint64_t job_id;         /* the job (trial) the segment belongs to: the
				    core adds up the service each job attains
				    over its segments (least attained service);
				    0 = a job of its own */
	uint32_t user;           /* who submitted it (fair share, limits);
				    0 = the default user */
	uint64_t shape;          /* hash: command + memory-relevant params */
	uint64_t family;         /* hash: command; shapes of one family share a model */
	uint64_t group;          /* hash: shapes expected to interfere alike
				    (relish: a pair of groups measured to
				    agree stands in for pairs of its shapes
				    never measured, colocate.c); 0 = none,
				    each shape learnt on its own.  The live
				    driver: the command, image and the values
				    of non-numeric parameters */
	size_t n_feat;           /* numeric memory-relevant params (raw values) */
	double feat[SCHED_MAX_FEAT];
	uint64_t mem_hint_mib;   /* declared need, 0 = unknown */
	double compute_hint;     /* declared CPUs (host) or GPU percent; 0 = default */
	int needs_gpu;           /* place on a GPU device */
	int n_devices;           /* > 1: gang of whole devices (multi-GPU job) */
	uint64_t min_mem_mib;    /* floor, e.g. after an out-of-memory; 0 = none */
	int exclusive;           /* must run alone (e.g. OOM with nothing better known) */
	double submit_time;      /* orders the queue after the order policy's
				    key (then seg_id) */
	double priority;         /* a class before everything else, lower
				    first; 0 for all (what every driver
				    passes) leaves the order to the core's
				    order policy (sched_options.order) */
	double attained_s;       /* GPU-seconds of service the job had before
				    the core saw it (e.g. before a restart);
				    the core adds what it measures itself.
				    Read by the order policies and by
				    solo_after_s */
	double foreign_wait_s;   /* waiting for memory that processes relish
				    does not own hold: give up after this
				    long (sched_foreign_wait); 0 = no limit */
} sched_request;

typedef struct sched_placement {
	uint64_t seg_id;
	int n_dev;
	int dev[SCHED_MAX_GANG]; /* device indices from sched_add_device */
	uint64_t mem_mib;        /* reservation on each device */
	double compute;          /* share on each device (CPUs or GPU percent) */
	sched_basis basis;
} sched_placement;

/* What the driver saw of a finished segment. */
typedef struct sched_observation {
	seg_outcome outcome;
	uint64_t peak_mem_mib;   /* measured peak (device memory, or RSS on host); 0 unknown */
	double mean_util;        /* mean compute utilisation (percent of one device), <0 unknown */
	double work;             /* resource units trained (b - a) */
	double duration_s;       /* wall time of the segment */
	int no_work;             /* it ended before doing any work (no metric
				    line: an import error, a bad argument, an
				    early exit): its peak is no measurement of
				    the shape, and the core learns nothing
				    from it but an out-of-memory's floor */
} sched_observation;

/* sched_foreign_policy (share or avoid devices others use), the named
 * policies and the queue orders: sched/policy.h. */

typedef struct sched_options {
	sharing_policy policy;
	double memory_margin;    /* relative headroom on measured peaks (0.2 = +20 %) */
	uint64_t memory_floor_mib; /* absolute headroom added to every estimate */
	double default_compute;  /* compute share when none is declared (1 CPU / 100 %) */
	double min_speedup;      /* relish: admit a co-location only if the
				    modelled throughput of the devices it
				    joins grows by this factor (after the
				    margin); 1 = any gain */
	/* Additions (see docs/scheduling.md for the defaults and why). */
	uint64_t host_memory_floor_mib; /* memory_floor_mib for host devices */
	/* relish: a shape never measured, without a hint or a family model,
	 * on the host (CPU trials) reserves host_probe_share of the largest
	 * host device, at least host_probe_min_mib and at most
	 * host_probe_max_mib, instead of the whole host: one process's RAM is
	 * seldom a large part of a machine's, and a probe that holds the
	 * whole host stops everything else (docs/scheduling.md, "The host's
	 * probe").  A probe as large as the host is a whole-host one
	 * (basis exclusive).  host_probe_share 0: off. */
	double host_probe_share;
	uint64_t host_probe_min_mib;
	uint64_t host_probe_max_mib;
	double default_gpu_compute;     /* GPU percent when none is declared (100) */
	double aging_s;          /* a request that cannot be placed and has waited
				    this long claims a device: nothing new starts
				    there until it fits (no starvation); <= 0 off */
	double oom_factor;       /* after an OOM the shape needs at least
				    reservation * oom_factor (1.5) */
	int oom_alone_after;     /* a trial out of memory this many times in a
				    row (no completed segment between) runs
				    alone from then on (3); see sched_mem_rule */
	size_t scan_max;         /* most queued segments one sched_place call
				    looks at without placing them (a backfill
				    window, like Slurm's bf_max_job_test);
				    0 = the whole queue */
	size_t score_max;        /* relish: a placement compares at most this
				    many devices that admit the segment, the
				    most recently changed first (like
				    Kubernetes' percentageOfNodesToScore);
				    refusals still look at every device;
				    0 = all */
	int share_gangs;         /* gangs may share devices (relish, gandiva):
				    a gang of k reserves memory on k devices
				    like k single segments and advances at
				    the speed of its slowest member; 0 =
				    gangs take whole empty devices */
	size_t gang_scan_max;    /* with share_gangs: after this many gangs of
				    one size were refused in a call, the
				    others of that size wait for the next
				    call (0 = no limit) */
	double colocate_margin;  /* relish: the co-location model's error on
				    one predicted speed; a co-location is
				    admitted only if its modelled gain stays
				    positive with every speed it changes
				    lowered by this (docs/scheduling.md) */
	int timeslice_refused;   /* relish: a segment the co-location model
				    refuses on every device (it would wait)
				    time-slices beside the one single-device
				    member of a device where its memory
				    fits, unless that pair was measured
				    together, the least loaded first (on for
				    relish; docs/scheduling.md) */
	double hint_quantile;    /* relish: a hint's headroom is at least this
				    quantile of measured peak over hint, over
				    the shapes measured so far (each shape's
				    first completed measurement, after an
				    out-of-memory one too: uncensored), once
				    SCHED_HINT_MIN were; never less than
				    memory_margin (0.99: about one hint in a
				    hundred too low; 0 = memory_margin alone) */
	double family_quantile;  /* relish: a family-model reservation is
				    raised by this quantile of measured peak
				    over such reservations (each shape's
				    first family reservation against its
				    first completed measurement: uncensored),
				    once SCHED_HINT_MIN were, when it is
				    above 1 (0 = the model's margin alone) */
	int gang_probe;          /* relish: a gang of a shape never measured
				    bets on its hint (or family estimate) as
				    a single segment does, one segment of the
				    shape at a time, the others whole; 0 =
				    such a gang runs whole until measured
				    (it then waits for k idle devices: on a
				    full cluster, for hours; docs/evaluation.md) */
	int timeslice_gangs;     /* relish, with timeslice_refused: a gang the
				    model refuses time-slices too, each
				    member beside at most one member of its
				    device (idle devices first, then the
				    least loaded), under the same rule as a
				    single segment's fallback */
	int family_probe;        /* relish: of a shape never measured, one
				    segment at a time runs on a family-model
				    estimate, the others whole (as the hint's
				    probe); 0 = all of them on the estimate */
	int timeslice_max;       /* gandiva: most segments a device takes
				    when it is over-subscribed (0 = as many
				    as its memory holds) */
	double las_tail;         /* las (and fair within a user): a job whose
				    attained service passed this quantile of
				    the service of jobs that ended keeps that
				    figure as its key, so that such jobs wait
				    by arrival among themselves instead of the
				    longest starving behind all others (the
				    last queue of Tiresias; docs/scheduling.md);
				    relish 0.99, the others 0 = plain LAS */
	queue_order order;       /* queue order (docs/scheduling.md): fifo,
				    las, tiresias or fair; ORDER_DEFAULT =
				    las under relish, fifo otherwise */
	double fair_half_life_s; /* fair: users are ranked by usage, their
				    device-seconds each weighted by
				    2^(-age / this) (7 days, as Slurm's
				    PriorityDecayHalfLife); <= 0: never
				    forgets (usage.c) */
	double tiresias_limit_s[SCHED_MAX_TIERS]; /* tiresias: attained
				    GPU-seconds at which a job moves down one
				    queue, ascending, 0 ends the list
				    (default {3600}: two queues) */
	sched_foreign_policy foreign; /* devices others use: share what is free
				    (default) or avoid them */
	double foreign_margin;   /* foreign memory counts with this much more
				    for what may grow between samples (0.1)... */
	uint64_t foreign_margin_mib; /* ... and at least this much (64) */
	int oom_foreign_max;     /* out-of-memory ends in a row beside foreign
				    memory before the trial fails anyway (5;
				    0 = no limit) */
	int lost_max;            /* segments of one trial lost through no fault
				    of its own (its node failed, it was
				    preempted) that are run again before the
				    trial fails (5; sched_end_decide) */
	int self_check;          /* tests: every shortcut the core takes is
				    checked against the long way, and
				    disagreements counted in
				    sched_work.check_failures (slow) */
	int explore_max;         /* relish: co-locations of a pair of shapes
				    tried while their gain is uncertain (the
				    model's optimistic side admits it, its
				    pessimistic side does not), one at a time
				    per device, so that it gets measured
				    (docs/scheduling.md, Exploration); 0 =
				    never explore */
	double solo_after_s;     /* relish: a segment whose job has attained
				    this much service runs alone (run times
				    are heavy-tailed, so a job that has run
				    long will likely run long: slowing it by
				    co-location stretches the makespan more
				    than packing gains); <= 0 off */
	size_t learn_max;        /* shapes the core remembers (SCHED_LEARN_MAX):
				    past that, when a new shape comes, the
				    least recently seen ones beyond it are
				    forgotten with their pairs and
				    exploration counts (segments the core
				    holds keep theirs), so that a service
				    that never restarts, whose trials make a
				    new shape each, stays bounded; 0 = no
				    bound */
} sched_options;

/* The default sched_options.learn_max, and the rows of each kind a driver
 * keeps across restarts (profiles, learnt rows): what a few months of a
 * busy service's trials make, a few tens of MB. */
#define SCHED_LEARN_MAX 65536

/* The core's defaults for a placement rule (the order ORDER_DEFAULT). */
void sched_options_default(sched_options *o, sharing_policy policy);
/* The options of a named policy (policy.h): its placement's defaults and
 * its queue order. */
void sched_policy_options(sched_policy p, sched_options *o);

int sched_new(const sched_options *opt, sched **out, rl_err *err);
void sched_free(sched *s);

/* Returns the new device's index (>= 0) or a negative error. */
int sched_add_device(sched *s, const sched_device_info *dev, rl_err *err);
size_t sched_device_count(const sched *s);

int sched_submit(sched *s, const sched_request *req, rl_err *err);

/* Remove a queued or running segment (its reservation is released without
 * learning anything).  Returns 1 when found, 0 otherwise. */
int sched_remove(sched *s, uint64_t seg_id);

/*
 * Place queued segments that fit now, in the order policy's order
 * (sched_options.order; a segment that does not fit does not block smaller
 * ones behind it).  now also counts the service of running segments (fair).
 * Writes at most max placements into out and returns how many.  Placed
 * segments are running from the core's point of view until sched_finished
 * or sched_remove.
 */
size_t sched_place(sched *s, double now, sched_placement *out, size_t max);

/* A running segment ended: release its reservation and learn from obs. */
int sched_finished(sched *s, uint64_t seg_id, double now,
		   const sched_observation *obs, rl_err *err);

/* Tell the core about a segment that is already running (recovery after a
 * restart: the driver found it alive and adopted it). */
int sched_adopt(sched *s, const sched_request *req, const sched_placement *pl,
		rl_err *err);

/* Read-only views for status displays and tests. */
typedef struct sched_device_state {
	sched_device_info info;
	uint64_t mem_reserved_mib;
	double compute_reserved;
	size_t n_running;
	uint64_t foreign_mib;    /* memory others use, as last told */
	uint64_t foreign_counted_mib; /* ... with the margin: what placement
				    takes off the device's free memory */
	uint64_t mem_free_mib;   /* total - reserved - foreign counted, >= 0 */
	int avoided;             /* SCHED_FOREIGN_AVOID and others use it */
} sched_device_state;

/*
 * Foreign use: memory on device dev in use by processes relish does not own
 * (the live driver measures it through NVML at each sample; the simulator
 * reads a background-occupancy series).  The core places against what is
 * really free: total - reserved - (mib + margin), the margin being
 * max(foreign_margin_mib, mib x foreign_margin) for what may grow between
 * samples; under SCHED_FOREIGN_AVOID a device with any foreign use takes
 * no new segment.  A segment that runs out of memory while foreign memory
 * was on its device was not alone on an empty device: it is re-queued,
 * never failed for it (sched_mem_decide).  now is the time of the sample.
 * Returns 0, or RL_ENOTFOUND for an unknown device.
 */
int sched_device_set_foreign(sched *s, int dev, uint64_t mib, double now);

/* Whether queued segment seg_id waits for foreign memory: it cannot be
 * placed now, and some device of its class would take it if the memory
 * others use there were free (or, avoiding such devices, if nobody used
 * it).  The core notes when the wait began; *info gets the device,
 * its foreign memory, since when and how long the segment has waited. */
typedef enum sched_wait {
	SCHED_WAIT_NONE,      /* not waiting for foreign memory */
	SCHED_WAIT_FOREIGN,   /* waiting */
	SCHED_WAIT_EXPIRED,   /* waited past its request's foreign_wait_s */
} sched_wait;

typedef struct sched_wait_info {
	int dev;              /* the device others' memory keeps it from, -1 */
	uint64_t foreign_mib; /* ... their memory there */
	uint64_t need_mib;    /* what the segment needs there (0: a whole device) */
	double since;         /* when its wait began */
	double waited_s;
} sched_wait_info;

sched_wait sched_foreign_wait(sched *s, uint64_t seg_id, double now, sched_wait_info *info);

int sched_device_get(const sched *s, int dev, sched_device_state *out);
size_t sched_queue_length(const sched *s);
size_t sched_running_count(const sched *s);

/* Counts of the core's work so far.  They depend only on the inputs (no
 * clock), so bench_sim divides them by events to show how the cost of an
 * event changes with trace and cluster size, free of the machine's noise
 * and caches. */
typedef struct sched_work {
	uint64_t calls;       /* sched_place calls that looked at the queue */
	uint64_t scanned;     /* queue entries they looked at */
	uint64_t searched;    /* ... of which the estimate and devices were
				 looked at (no shortcut from the last refusal) */
	uint64_t dev_evals;   /* devices whose fit and (relish) gain a shared
				 placement computed, and index answers */
	uint64_t placed;      /* segments placed */
	uint64_t partners;    /* segments already running beside a placed one:
				 the overlap records opened (each is closed
				 once), which grow with how densely the
				 workload shares, not with the queue */
	uint64_t check_failures; /* self_check: shortcuts that disagreed with
				    the long way (0 unless a bug) */
	uint64_t running;     /* segments running when each of those calls
				 began, summed: the size of the state that
				 a call, and the events around it, work on */
	uint64_t explored;    /* placements that were explorations (relish:
				 a co-location tried to measure it) */
	uint64_t learnt;      /* pair observations taken from segments that
				 shared their device */
	uint64_t forgotten;   /* shapes forgotten (sched_options.learn_max) */
} sched_work;

void sched_work_get(const sched *s, sched_work *out);

/* ---- Users: fair share, limits, service ------------------------------- */

/* A user's share of the devices under the fair order (weight > 0; every
 * user has weight 1 until told otherwise).  0 or RL_EINVAL / RL_ENOMEM. */
int sched_set_user_share(sched *s, uint32_t user, double weight);

/* Optional per-user limits; 0 in a field = no limit.  A segment that would
 * take its user past one waits (it is skipped, not refused: others pass
 * it).  GPUs count the devices its segments hold (a gang counts each of
 * its devices), max_mem_mib their reservations on GPUs (each GPU of a
 * gang); host memory and CPUs count only what its segments on host
 * devices (CPU trials) reserve: memory and compute share (CPUs). */
typedef struct sched_user_limits {
	int max_gpus;
	uint64_t max_mem_mib;    /* GPU memory (the service's gpu_memory) */
	int max_segments;        /* running at once */
	uint64_t max_host_mem_mib;
	double max_cpus;
} sched_user_limits;

int sched_set_user_limits(sched *s, uint32_t user, const sched_user_limits *lim);

/* What the core knows of a user at time now (the API's queue view and
 * /metrics).  attained_gpu_s = device-seconds its segments have held,
 * running ones counted up to now (a segment on a gang of k devices
 * attains k per second, one sharing a device 1); usage_gpu_s = the same
 * with each second weighted by 2^(-age / fair_half_life_s), what the fair
 * order ranks users by (attained_gpu_s when nothing decays). */
typedef struct sched_user_state {
	uint32_t user;
	double share;            /* its weight */
	double attained_gpu_s;
	double usage_gpu_s;
	size_t running, queued;  /* segments */
	int running_gpus;        /* GPUs its running segments hold */
	uint64_t mem_reserved_mib; /* ... and their reservations on GPUs */
	sched_user_limits limits;
} sched_user_state;

/* 0, or RL_ENOTFOUND for a user the core has never heard of. */
int sched_user_get(const sched *s, uint32_t user, double now, sched_user_state *out);
/* Service user's segments had before the core existed (a restarted
 * service: the segments its store holds): n_dev devices held over
 * [start, end], on the core's clock.  Counts in attained_gpu_s and, decayed
 * from end on, in the usage.  0, RL_EINVAL (not finite, end < start,
 * n_dev <= 0) or RL_ENOMEM. */
int sched_user_add_service(sched *s, uint32_t user, double start, double end, double n_dev);
/* The usage at now of n_dev devices held over [start, end] under a
 * half-life (<= 0: none, the device-seconds themselves): the rule the
 * fair order uses, for views of a store nothing drives. */
double sched_usage_of(double n_dev, double start, double end, double now, double half_life_s);
/* Users the core knows, in the order they first appeared; returns how
 * many there are and writes at most max ids. */
size_t sched_user_list(const sched *s, uint32_t *ids, size_t max);

/* Service the core has counted for a job (device-seconds of its ended
 * segments, plus its running one up to now; 0 for an unknown job), and a
 * way to forget a job that will send no more segments. */
double sched_job_attained(const sched *s, uint64_t job_id, double now);
void sched_job_forget(sched *s, uint64_t job_id);

/* The memory the core would reserve for req right now, and on what basis. */
uint64_t sched_estimate_mem(const sched *s, const sched_request *req,
			    sched_basis *basis);

/* Seed the profile of a shape with an earlier measurement (from the store).
 * The observation is taken as measured alone (throughput alone). */
void sched_learn(sched *s, const sched_request *req, const sched_observation *obs);

/* ---- Additions: estimator, co-location model, helpers ---------------- */

/* The family model the estimator chose (see estimate.c). */
typedef enum sched_fit {
	SCHED_FIT_NONE,     /* fewer than 2 measured shapes */
	SCHED_FIT_CONST,    /* mean peak */
	SCHED_FIT_LINEAR,   /* peak = w0 + sum w_i x_i */
	SCHED_FIT_PAIRWISE, /* ... + sum w_ij x_i x_j (n_feat <= 4) */
	SCHED_FIT_LOGLOG,   /* log peak = w0 + sum w_i log x_i (power law) */
} sched_fit;

const char *sched_fit_name(sched_fit f);

/* The estimator's full answer for one request (sched_estimate_mem is the
 * short form).  peak_mib is the predicted peak without headroom (0 when
 * nothing is known); reserve_mib is what the policy would reserve (0 with
 * basis EXCLUSIVE: a whole device).  The driver keeps peak_mib and compares
 * it with the observed peak to report the estimator's error. */
typedef struct sched_mem_estimate {
	uint64_t reserve_mib;
	double peak_mib;
	sched_basis basis;
	sched_fit fit;          /* FAMILY basis: the model used */
	double loo_rmse_mib;    /* FAMILY basis: leave-one-out RMS error, MiB */
} sched_mem_estimate;

void sched_estimate(const sched *s, const sched_request *req,
		    sched_mem_estimate *out);

/* The family model of a family: fit kind, points used and LOO error.
 * Returns 0, or RL_ENOTFOUND when the family has no model yet. */
int sched_family_fit(const sched *s, uint64_t family, sched_fit *fit,
		     size_t *n_points, double *loo_rmse_mib);

/* What is known about one shape (tests, status displays, the store).
 * Returns 0 or RL_ENOTFOUND. */
typedef struct sched_shape_info {
	size_t n_measured;       /* observations with a peak */
	uint64_t peak_mib;       /* max observed peak */
	uint64_t oom_floor_mib;  /* raised after an out-of-memory, 0 none */
	double util;             /* EWMA of mean utilisation, <0 unknown */
	double thr_alone;        /* EWMA of work/s measured alone, 0 unknown */
	size_t n_alone;
	double thr_shared;       /* EWMA of work/s measured beside others
				    (another segment on its device for more
				    than a twentieth of its life), 0 unknown */
	size_t n_shared;
} sched_shape_info;

/* The core's profile of a shape is what a driver keeps (the store's
 * profiles table): read with sched_shape_get after sched_finished, given
 * back with sched_shape_import when the shape is seen again (a later run;
 * its peak, utilisation, throughputs and count, taken as measured; a
 * shape without a peak teaches nothing).  The driver computes none of it. */
int sched_shape_get(const sched *s, uint64_t shape, sched_shape_info *out);
void sched_shape_import(sched *s, const sched_request *req, const sched_shape_info *in);

/* 1 when some set of empty devices of the request's class could ever hold
 * it, else 0: the request declares more memory (mem_hint_mib) than any
 * device of its class has, or is a gang larger than the class.  Only such a
 * declaration fails a trial before it runs: an estimate above every device
 * (profile + margin, family model, an out-of-memory floor) means "run
 * alone on a whole device", never "cannot fit".  sched_never_fits says why
 * (why may be NULL). */
int sched_fits_ever(const sched *s, const sched_request *req);
int sched_never_fits(const sched *s, const sched_request *req, char *why, size_t why_n);

/* ---- The memory policy (mem.c): what an out-of-memory means ---------- */

/* The learner's one rule (profiles in the core, and the figures a driver
 * keeps beside them, e.g. the store's profile rows): an exponentially
 * weighted moving average with weight SCHED_EWMA_ALPHA on the new sample.
 * NAN is "unknown": an unknown old value gives the sample, an unknown
 * sample keeps the old value. */
#define SCHED_EWMA_ALPHA 0.3
double sched_ewma(double old, double sample);

/* A trial's out-of-memory history.  The core keeps segments, not trials, so
 * the driver keeps one per trial (zeroed at first), passes it to
 * sched_mem_decide at every segment end (which updates it) and builds the
 * trial's next request with sched_mem_apply. */
typedef struct sched_mem_history {
	int ooms;              /* out-of-memory ends so far */
	int ooms_in_row;       /* ... since its last completed segment */
	uint64_t min_mem_mib;  /* reservation floor of its next segments */
	int exclusive;         /* its next segment runs alone */
	int foreign_ooms;      /* out-of-memory ends in a row with memory of
				  others on the device */
} sched_mem_history;

typedef enum sched_mem_verdict {
	SCHED_MEM_NONE,   /* not an out-of-memory: the driver's own rules
			     (retries) apply */
	SCHED_MEM_RAISE,  /* re-queue from its checkpoint with the raised floor */
	SCHED_MEM_ALONE,  /* re-queue to run alone on a whole device */
	SCHED_MEM_WAIT,   /* others' memory was on its device: re-queue; it
			     waits until a device has the memory it needs */
	SCHED_MEM_FAIL,   /* fail the trial (reason says why) */
} sched_mem_verdict;

const char *sched_mem_verdict_name(sched_mem_verdict v);

/* The facts of a segment's end that the memory policy reads. */
typedef struct sched_mem_end {
	seg_outcome outcome;
	uint64_t peak_mib;      /* measured peak, 0 unknown */
	uint64_t reserved_mib;  /* its reservation */
	uint64_t device_mib;    /* memory of its (smallest) device */
	int is_gpu;             /* its device class */
	int alone;              /* it ran alone: a whole device (held, or a
				   reservation of all of it) and no other
				   segment of relish beside it */
	uint64_t foreign_mib;   /* most memory processes relish does not own
				   used on its devices while it ran; 0 none */
} sched_mem_end;

typedef struct sched_mem_decision {
	sched_mem_verdict verdict;
	uint64_t min_mem_mib;   /* the floor of the next request (= history's) */
	int exclusive;          /* the next request runs alone (= history's) */
	int alone;              /* the segment had a whole device to itself */
	uint64_t foreign_mib;   /* = sched_mem_end.foreign_mib */
	char reason[192];       /* FAIL: the trial's failure reason; RAISE and
				   ALONE: what the re-queue asks for */
} sched_mem_decision;

/*
 * The rule, once for every driver.  For an out-of-memory end:
 *   - with memory of others on its device (foreign_mib > 0) it was not
 *     alone on an empty device, whatever relish reserved: never FAIL.
 *     Died below its reservation (peak known and smaller): the others
 *     took the memory; WAIT, asking for no more than it had (the shape's
 *     profile learns nothing from it either).  Alone on the whole
 *     device otherwise: WAIT for a device with more than it had free
 *     (floor = reservation + 1, at most the largest device).  Beside
 *     segments of relish: as below.  After oom_foreign_max such ends in a
 *     row the trial fails, saying that others used the device;
 *   - alone on a device empty of others: FAIL, "out of memory alone on an
 *     empty device" (a measurement: it needs more than the device has);
 *   - otherwise the need is max(reservation x oom_factor, max(peak,
 *     reservation) x (1 + memory_margin)); when that reaches the largest device of the class,
 *     or the trial ran out of memory oom_alone_after times in a row, the
 *     next segment runs alone (ALONE), else it is re-queued with that
 *     floor (RAISE).
 * A completed segment resets the in-a-row count and the run-alone flag
 * (what it measured now guides the estimate); the floor stays.  Pure: s is
 * read (options, device sizes) and h updated; out gets the decision.
 */
void sched_mem_rule(const sched *s, const sched_mem_end *e, sched_mem_history *h,
		    sched_mem_decision *out);

/*
 * The same for running segment seg_id, whose placement the core knows
 * (reservation, devices, whether anything ran beside it): call it at the
 * segment's end, before sched_finished (which then releases the
 * reservation and teaches the profile).  Changes nothing in s.  Returns
 * 0, or RL_ENOTFOUND when seg_id is not running.
 */
int sched_mem_decide(const sched *s, uint64_t seg_id, const sched_observation *obs,
		     sched_mem_history *h, sched_mem_decision *out, rl_err *err);

/* Copy the history's floor and run-alone flag into a trial's request. */
void sched_mem_apply(const sched_mem_history *h, sched_request *req);

/* ---- After a segment (verdict.c): what its end means for its trial ---- */

/* What a driver keeps per trial for the core's decisions (zeroed at
 * first): sched_end_decide updates it, sched_mem_apply copies its memory
 * part into the trial's next request. */
typedef struct sched_trial_history {
	int retries;             /* failed segments run again so far */
	int losses;              /* segments lost through no fault of their
				    own (a node failed) run again so far */
	sched_mem_history mem;   /* out-of-memory history */
} sched_trial_history;

/* The facts of a segment's end that the driver saw. */
typedef struct sched_end_facts {
	sched_observation obs;   /* outcome, peak, utilisation, work, time */
	int engine_failed;       /* the engine counts the segment as failed
				    (its ENG_FAILED): a re-run or a failure
				    of the trial follows */
	int ended_short;         /* it exited cleanly without reporting the
				    objective (engine_failed is set too) */
	const char *engine_reason; /* the engine's words for that */
	const char *reason;      /* the executor's words ("exit code 1: ...") */
	const char *oom_marker;  /* out of memory: the output that showed it,
				    or NULL */
	int reason_names_limit;  /* out of memory: reason names the limit it
				    hit (containers): say it first */
	int over_reservation;    /* out of memory: stopped at relish's limit
				    from its reservation, not because its
				    device or the machine ran out (worded
				    so: word, message, event) */
	int retries;             /* the spec's trial.retries */
} sched_end_facts;

typedef enum sched_end_action {
	SCHED_END_DONE,          /* the engine's decision stands (the segment
				    completed, or the trial stopped) */
	SCHED_END_REQUEUE,       /* run the segment again from the trial's
				    checkpoint (engine_requeue) */
	SCHED_END_FAIL,          /* the trial fails with fail_reason */
} sched_end_action;

typedef enum sched_end_cause {
	SCHED_CAUSE_NONE,
	SCHED_CAUSE_OOM,         /* out of memory: mem says what follows */
	SCHED_CAUSE_LOST,        /* lost, re-run without using a retry */
	SCHED_CAUSE_RETRY,       /* failed, one of trial.retries used */
	SCHED_CAUSE_EXHAUSTED,   /* failed with no retry left */
} sched_end_cause;

const char *sched_end_action_name(sched_end_action a);
const char *sched_end_cause_name(sched_end_cause c);

/* One record: the decision and what to keep and show of it. */
typedef struct sched_end_record {
	sched_end_action action;
	sched_end_cause cause;
	sched_mem_decision mem;  /* the memory policy's verdict (every end) */
	const char *word;        /* how the progress line names the end:
				    "ended" (no objective), "over its
				    reservation" or the outcome */
	char event[32];          /* "segment.oom": the event to append with
				    message; "" for a completed segment */
	char message[800];       /* the segment's stored message and its
				    event's text; "" for a clean completion */
	char shown[800];         /* the same as the progress line shows it
				    (it prints reservation and peak itself);
				    "" none */
	char fail_reason[512];   /* FAIL: the trial's failure reason */
} sched_end_record;

/*
 * What running segment seg_id's end means (call it before sched_finished,
 * as sched_mem_decide, which it calls for every end).  When the engine
 * counts the segment as failed: an out-of-memory follows the memory
 * policy (re-queue, or FAIL with its reason); a LOST segment runs again
 * while h->losses < lost_max; any other failure while h->retries <
 * f->retries; else the trial FAILs with the executor's words (the
 * engine's, when it ended without its objective).  Pure: only h is
 * updated.  Returns 0, or RL_ENOTFOUND when seg_id is not running.
 */
int sched_end_decide(const sched *s, uint64_t seg_id, const sched_end_facts *f,
		     sched_trial_history *h, sched_end_record *out, rl_err *err);

/* Co-location model.  Seed (or overwrite) the pair (a, b): speed_a is a's
 * throughput beside b relative to a alone (0 < speed <= ~1), speed_b the
 * same for b.  Seeds count as one observation each; later observations are
 * averaged in. */
void sched_colocate_seed(sched *s, uint64_t shape_a, uint64_t shape_b,
			 double speed_a, double speed_b);

/* Predicted relative speed of each member of a set of n shapes running
 * together on one device (speed[i] for shapes[i]).  util[i] is the member's
 * mean utilisation in percent of the device; pass util == NULL to use the
 * shapes' profiles (100 when unknown).  Returns the sum of speeds (the
 * modelled throughput of the set in "jobs alone" units). */
double sched_colocate_predict(const sched *s, const uint64_t *shapes,
			      const double *util, size_t n, double *speed);

/* Learned pair speed of a beside b: 0 and *speed_a written when observed or
 * seeded, RL_ENOTFOUND otherwise. */
int sched_colocate_pair(const sched *s, uint64_t shape_a, uint64_t shape_b,
			double *speed_a, size_t *n_obs);

/* Co-locations of shapes a and b (either order) the core has tried as
 * explorations so far (relish, sched_options.explore_max). */
size_t sched_colocate_explored(const sched *s, uint64_t shape_a, uint64_t shape_b);

/* Whether running segment seg_id was placed as an exploration: beside
 * a partner whose co-location with it was not yet measured to gain.
 * 1, 0, or RL_ENOTFOUND when it is not running. */
int sched_segment_exploring(const sched *s, uint64_t seg_id);

/* Running segments of a device (ids in placement order); returns how many
 * there are and writes at most max of them. */
size_t sched_device_segments(const sched *s, int dev, uint64_t *ids, size_t max);

/* ---- What the core learnt beyond shapes (learnt.c) ------------------- */

/* Shapes' profiles are not all the core learns (sched_shape_get): it also
 * measures how pairs of shapes and of groups run side by side
 * (colocate.c) and keeps three histograms (the hint's and the family
 * model's headroom, estimate.c; the tail of LAS, sched.c).  Lost at a
 * restart, a service would explore again the pairs it had measured to
 * lose and run on the margin alone until 20 shapes and 100 jobs had
 * ended again.  So the core hands them to its driver as rows: every row
 * changed since a stamp, and the stamp to ask with next time; a driver
 * stores them (the store's learnt table) and gives them back to a new
 * core before its first submission.  The driver computes none of it.
 * Exploration counts are kept too: a pair measured within the margin of
 * no gain is stopped by its count alone.  Not kept: pairs derived from
 * their groups (derived again when their shapes come back). */
typedef enum sched_learnt_kind {
	SCHED_LEARNT_PAIR,      /* shape a beside shape b: d, n */
	SCHED_LEARNT_GROUPS,    /* group a beside group b: n, d, d_max, s_min, s_max */
	SCHED_LEARNT_EXPLORED,  /* shapes a < b: n co-locations tried as
				   explorations (sched_options.explore_max) */
	SCHED_LEARNT_HINT,      /* histograms: bin a (b 0), its count n */
	SCHED_LEARNT_FAMILY,
	SCHED_LEARNT_LAS,
	SCHED_LEARNT__COUNT
} sched_learnt_kind;

typedef struct sched_learnt {
	sched_learnt_kind kind;
	uint64_t a, b;
	double n;               /* observations (explored: tries; a bin: its
				   count) */
	double d;               /* interference: 1/speed - 1 (a pair: its
				   estimate; groups: their mean) */
	double d_max;           /* groups: the worst interference measured, */
	double s_min, s_max;    /* and the speeds measured, their range */
} sched_learnt;

/* "pair", "groups", "explored", "hint", "family", "las"; parse: 0 or
 * RL_EINVAL. */
const char *sched_learnt_kind_name(sched_learnt_kind k);
int sched_learnt_kind_parse(const char *name, sched_learnt_kind *out);

/* Rows changed after stamp since (0: everything learnt), in no set
 * order: returns how many there are and writes at most max of them; *next
 * (when every row fitted) is the stamp to pass next time. */
size_t sched_learnt_list(const sched *s, uint64_t since, sched_learnt *out, size_t max,
			 uint64_t *next);

/* Give back a row a core listed: 0, or RL_EINVAL (nothing changed) for a
 * row no core lists (an unknown kind, a bin out of range, a count or
 * interference negative or not finite, a range upside down).  Rows given
 * back are not listed again until they change. */
int sched_learnt_import(sched *s, const sched_learnt *row, rl_err *err);

#endif
