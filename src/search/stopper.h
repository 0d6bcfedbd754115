/*
 * stopper.h - early stopping behind one ops struct: ASHA, Hyperband, the
 * median stopping rule, and none.
 *
 * A stopper decides, at each segment boundary of a trial, whether the trial
 * keeps training, has passed a rung (promote), is stopped early, or has
 * reached the maximum resource.  Rungs coincide with segment boundaries: the
 * stopper hands out the resource at which each segment ends
 * (stopper_first_target, next_target in stopper_decide), so a decision is
 * always taken exactly where a trial checkpoints.
 *
 * Stoppers minimise a loss; the engine negates objectives whose mode is max.
 * They are pure (no clock, files or processes) and deterministic: the state
 * after a set of observations depends only on the set (per trial and
 * resource, the latest value), never on the order they arrived in, so an
 * engine restarted after a crash rebuilds identical state with
 * stopper_record() and takes the same later decisions.  Exact rules and
 * worked examples: docs/early-stopping.md.
 */
#ifndef RELISH_STOPPER_H
#define RELISH_STOPPER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "spec/spec.h"

typedef enum stop_decision {
	DECIDE_CONTINUE, /* keep training: the boundary was not a rung */
	DECIDE_PROMOTE,  /* passed a rung: train on to the next target */
	DECIDE_STOP,     /* stopped early */
	DECIDE_COMPLETE, /* reached the maximum resource */
} stop_decision;

typedef struct stopper stopper;

typedef struct stopper_ops {
	const char *name;
	/* Resource at which the first segment of trial `trial` ends. */
	double (*first_target)(stopper *s, uint64_t trial);
	/* The boundary after `resource` on the trial's ladder (< max assumed). */
	double (*next_target)(stopper *s, uint64_t trial, double resource);
	/* Record loss of trial at resource (< max) and, when out is not NULL,
	 * decide: DECIDE_CONTINUE, DECIDE_PROMOTE or DECIDE_STOP. */
	int (*observe)(stopper *s, uint64_t trial, double resource, double loss,
		       stop_decision *out, rl_err *err);
	void (*destroy)(stopper *s);
} stopper_ops;

/* Base fields; implementations embed this first. */
struct stopper {
	const stopper_ops *ops;
	double min;     /* schedule.min */
	double max;     /* schedule.max: the resource of a complete trial */
	double eta;     /* schedule.reduction_factor */
	double segment; /* schedule.segment: split rung gaps into pieces, 0 = no */
	int grace;      /* schedule.grace (median) */
};

/*
 * Create the stopper that sp->schedule asks for.  Validates the schedule
 * fields it uses (min > 0, max >= min, reduction_factor > 1, segment >= 0)
 * and names the field in errors ("schedule.max: expected ...").  sp is only
 * read during the call.  *out is owned by the caller (stopper_free).
 */
int stopper_new(const spec *sp, stopper **out, rl_err *err);
void stopper_free(stopper *s);

/* Name of the algorithm ("asha", ...). */
const char *stopper_name(const stopper *s);

/*
 * Resource at which trial `trial`'s first segment (trained from 0) ends:
 *   none:      max, or `segment` when set;
 *   asha:      min (rung 0), or `segment` when smaller;
 *   hyperband: the first rung of the trial's bracket (same segment rule);
 *   median:    `segment`, or min when segment is 0.
 */
double stopper_first_target(stopper *s, uint64_t trial);

/* The boundary following `resource` for trial (max when resource >= max). */
double stopper_next_target(stopper *s, uint64_t trial, double resource);

/*
 * Decide at a segment boundary: trial has trained to `resource` (a value
 * handed out as a target) and its objective there, as a loss, is `loss`
 * (NaN counts as the worst possible loss).  Records the observation
 * (replacing an earlier one of the same trial at the same resource, so a
 * re-run boundary is harmless) and writes the decision into *out and the
 * resource at which the next segment ends into *next_target (for STOP,
 * `resource`; for COMPLETE, max).  Returns 0 or RL_EINVAL for a resource
 * that is not positive and finite.
 */
int stopper_decide(stopper *s, uint64_t trial, double resource, double loss,
		   stop_decision *out, double *next_target, rl_err *err);

/*
 * Record an observation without deciding: used to replay stored history
 * after a restart.  Leaves exactly the state stopper_decide would have left.
 */
int stopper_record(stopper *s, uint64_t trial, double resource, double loss, rl_err *err);

const char *stopper_decision_name(stop_decision d);

/* ---- for implementations (asha.c, hyperband.c, median.c) ---------------- */

/* Two resources are the same boundary when they differ by a relative 1e-9
 * (rungs are products of floating-point factors). */
int stopper_same_resource(double a, double b);

/* Map a loss for ranking: NaN becomes +infinity (worst). */
double stopper_loss_key(double loss);

/* resource + segment, snapped to limit when it reaches (or nearly reaches)
 * it; limit when segment is 0. */
double stopper_step(double resource, double segment, double limit);

/*
 * A successive-halving ladder: rungs from `first` growing by eta and capped
 * at max, with the losses recorded at each rung.  ASHA has one ladder;
 * Hyperband one per bracket.
 */
typedef struct sha_entry {
	uint64_t trial;
	double loss;
} sha_entry;

typedef struct sha_rung {
	double resource;
	size_t n, cap;
	sha_entry *e; /* owned */
} sha_rung;

typedef struct sha_ladder {
	size_t n_rungs;
	sha_rung *rungs; /* owned; the last rung's resource is max */
} sha_ladder;

int sha_ladder_init(sha_ladder *l, double first, double max, double eta, rl_err *err);
void sha_ladder_fini(sha_ladder *l);
/* Next boundary after resource on this ladder, honouring `segment`. */
double sha_ladder_next(const sha_ladder *l, double resource, double segment);
/* Record and (out != NULL) decide at resource; see asha.c for the rule. */
int sha_ladder_observe(sha_ladder *l, double eta, uint64_t trial, double resource,
		       double loss, stop_decision *out, rl_err *err);

/* Fill the base fields from sp->schedule. */
void stopper_base_init(stopper *s, const stopper_ops *ops, const spec *sp);

int stopper_none_new(const spec *sp, stopper **out, rl_err *err);
int stopper_asha_new(const spec *sp, stopper **out, rl_err *err);
int stopper_hyperband_new(const spec *sp, stopper **out, rl_err *err);
int stopper_median_new(const spec *sp, stopper **out, rl_err *err);

/* Hyperband introspection (for tests, docs and the dashboard). */
size_t hyperband_n_brackets(const stopper *s);
/* Bracket of a trial (0 = most aggressive, first rung = min). */
size_t hyperband_bracket_of(const stopper *s, uint64_t trial);
/* Weight (trials per cycle) of bracket b. */
uint64_t hyperband_bracket_weight(const stopper *s, size_t b);

#endif
