/*
 * engine.h - the experiment engine: trial bookkeeping for ONE experiment,
 * combining a sampler (which configuration next) and a stopper (how far
 * each trial trains), and handing out segments.
 *
 * The engine is pure: no processes, files or clock.  A driver (the live
 * runner, the simulator, a test) loops:
 *
 *     while (!engine_done(e)) {
 *         while (engine_next(e, &w, err) == 1)   start segment w somewhere;
 *         wait for a segment to end, feeding engine_report() with every
 *         objective value the trial prints, then engine_segment_done();
 *     }
 *
 * A trial counts as running from engine_next until engine_segment_done (or
 * engine_requeue).  Work is handed out in a fixed order that depends only
 * on the engine's state, never on call history, so an engine rebuilt with
 * engine_restore_trial after a restart hands out the same work and takes
 * the same decisions as one that never stopped:
 *   1. re-runs of interrupted or failed segments, lowest trial index first;
 *   2. continuations of trials that passed a boundary, the furthest trained
 *      first (the most promising trials under ASHA), then lowest index;
 *   3. new trials, until search.max_trials have been created.
 *
 * Objective values are in the user's units; the engine turns them into a
 * loss for the sampler and the stopper (negated when the mode is max).
 */
#ifndef RELISH_ENGINE_H
#define RELISH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/trial_state.h"
#include "search/sampler.h"
#include "search/space.h"
#include "search/stopper.h"
#include "spec/spec.h"

/* trial_state (TRIAL_PENDING ... TRIAL_FAILED, TRIAL_N_STATES) lives in
 * common/trial_state.h: the store uses the same enum. */

/* "pending", "running", ... (for the store and --json). */
const char *engine_state_name(trial_state s);
/* Inverse of engine_state_name; RL_EINVAL for an unknown name. */
int engine_state_from_name(const char *name, trial_state *out, rl_err *err);

/* One objective value at a resource, in objective units. */
typedef struct engine_point {
	double resource;
	double value;
} engine_point;

/* A segment to run. */
typedef struct engine_work {
	uint64_t trial;     /* trial index, 0, 1, 2, ... */
	const config *cfg;  /* borrowed: valid until engine_free */
	double from, to;    /* train from resource `from` (0 or a checkpoint) to `to` */
	int is_new_trial;   /* first segment of a trial just created */
	int is_retry;       /* re-run of an interrupted or failed segment */
} engine_work;

typedef enum engine_outcome {
	ENG_CONTINUE, /* boundary between rungs: next segment queued */
	ENG_PROMOTE,  /* passed a rung: next segment queued */
	ENG_STOP,     /* stopped early */
	ENG_COMPLETE, /* reached schedule.max */
	ENG_FAILED,   /* segment failed: driver calls engine_requeue or engine_trial_failed */
} engine_outcome;

typedef struct engine_decision {
	engine_outcome outcome;
	double resource;  /* boundary reached (the segment's `to`); on failure
			   * the trial's last good boundary */
	double value;     /* objective at the boundary, objective units; NaN on failure.
			   * The store keeps it: engine_restore_trial needs it. */
	double next_to;   /* CONTINUE / PROMOTE: where the next segment ends */
	char reason[512]; /* ENG_FAILED: why, for the user */
} engine_decision;

typedef struct engine engine;

/*
 * Create the engine of experiment sp: validates search.max_trials (> 0) and
 * search.max_concurrent (>= 0), builds the sampler through the factory and
 * the stopper from sp->schedule.  sp is borrowed and must outlive the engine
 * (the sampler reads sp->search.space).  *out is owned by the caller.
 */
int engine_new(const spec *sp, engine **out, rl_err *err);
void engine_free(engine *e);

/*
 * Next segment that may start now, in the order given above.  Returns 1 and
 * fills *out, 0 when nothing can start (search.max_concurrent segments are
 * running, or every trial is created and the rest are running), or a
 * negative code (the sampler failed).  A grid sampler running out of points
 * ends trial creation early without an error.
 */
int engine_next(engine *e, engine_work *out, rl_err *err);
/* The same, but only work of trials already created (a next segment, a
 * re-run): never a new trial.  A driver whose admission window is full of
 * new trials still hands out the started trials' next segments
 * (SCHED_ADMIT_WINDOW). */
int engine_next_started(engine *e, engine_work *out, rl_err *err);

/*
 * Several objectives and constraints (docs/search.md, "Several objectives"
 * and "Constraints").  Besides the first objective (engine_report), the
 * engine watches "side" metrics: the objectives after the first, then each
 * constraint's metric, in the spec's order (a name may come twice: as an
 * objective and as a constraint).  The latest value of each that a trial
 * printed counts at its boundary; the sampler is told every objective and
 * the trial's violation (the sum of its constraints'
 * spec_constraint_violation; a constraint never reported counts as
 * violated).  Early stopping decides on the first objective alone.
 */
size_t engine_n_side(const engine *e);
/* The metric side value k stands for (borrowed from the spec). */
const char *engine_side_metric(const engine *e, size_t k);
/* A value of side metric k the running trial printed.  RL_ENOTFOUND for an
 * unknown trial or k, RL_EINVAL when the trial is not running. */
int engine_report_side(engine *e, uint64_t trial, size_t k, double value, rl_err *err);

/*
 * An objective value the running trial printed, at `resource` (any number
 * per segment).  It joins the trial's learning curve; the last one of a
 * segment is the trial's objective at that segment's boundary.
 * RL_ENOTFOUND for an unknown trial, RL_EINVAL when it is not running.
 */
int engine_report(engine *e, uint64_t trial, double resource, double value, rl_err *err);

/*
 * The running segment of trial has ended.  segment_ok: it exited cleanly.
 * reached_resource: how far it trained by its own count, or a negative
 * number when unknown (taken as the segment's end).  On success the
 * stopper decides at the boundary with the segment's last reported value,
 * the sampler is told, and the next segment (if any) is queued.  A segment
 * that reported no value but whose end the trial's curve already holds (a
 * value at resource `to`, restored from the store or reported by an
 * earlier attempt) is complete with that value: its checkpoint covered it.
 * A segment that failed, ended early, or reported no objective value yields
 * ENG_FAILED with a reason; the trial then waits (TRIAL_PENDING) until the
 * driver calls engine_requeue (retry) or engine_trial_failed (give up).
 * Returns 0 with *out filled, or RL_ENOTFOUND / RL_EINVAL (not running).
 */
int engine_segment_done(engine *e, uint64_t trial, int segment_ok, double reached_resource,
			engine_decision *out, rl_err *err);

/*
 * Put a segment back to be run again before anything else: one that was
 * interrupted while running (out of memory, preempted) or that failed and
 * is retried.  `from` must be the trial's last boundary (where its
 * checkpoint is) and `to` > from.  A running trial stops counting as running.
 */
int engine_requeue(engine *e, uint64_t trial, double from, double to, rl_err *err);

/* Give up on a trial that is not running (after a failed segment, or a
 * queued one); the sampler is told OBS_FAILED.  reason may be NULL.
 * Before any segment has completed, trials that fail the same way (equal
 * engine_failure_key) count towards trial.fail_fast: when that many have,
 * the engine hands out nothing more and is done once nothing runs
 * (engine_failed_fast says so).  Failures restored by engine_restore_trial
 * do not count, so a run after a fix starts afresh; a restored completed
 * boundary disarms it for good. */
int engine_trial_failed(engine *e, uint64_t trial, const char *reason, rl_err *err);

/* 1 when trial.fail_fast stopped the experiment: *first_trial is the index
 * of the first trial that failed that way, *count how many did (either may
 * be NULL); 0 otherwise. */
int engine_failed_fast(const engine *e, uint64_t *first_trial, int *count);

/* What makes two failures "the same way": the reason with every run of
 * digits written as '#' ("exit code 1: trial 7 diverged" and "exit code 1:
 * trial 9 diverged" agree).  Writes at most n bytes; returns the length. */
size_t engine_failure_key(const char *reason, char *buf, size_t n);

/* A trial as stored, for engine_restore_trial. */
typedef struct engine_trial_record {
	uint64_t index;
	const config *cfg;                /* copied */
	trial_state state;                /* as last stored */
	size_t n_reports;
	const engine_point *reports;      /* learning curve, in report order (copied) */
	size_t n_boundaries;
	const engine_point *boundaries;   /* each completed segment's end and the
					   * objective there (engine_decision.resource
					   * and .value), in order (copied) */
	const char *reason;               /* failed trials: why (may be NULL) */
	const double *side;               /* engine_n_side values at the last
					   * boundary (copied); NULL: none known */
} engine_trial_record;

/*
 * Rebuild one trial after a restart, before the first engine_next.  The
 * boundaries are replayed into the stopper (order across trials does not
 * matter) and the last one into the sampler (restore trials in index order
 * for samplers that learn).  A trial stored as running or pending has its
 * next segment queued as a re-run; paused, as a continuation; completed,
 * stopped and failed are final.  New trials continue after the largest
 * restored index.  RL_EEXISTS for an index restored twice, RL_EINVAL after
 * engine_next has been called.
 */
int engine_restore_trial(engine *e, const engine_trial_record *rec, rl_err *err);

/*
 * After engine_restore_trial (and before the first engine_next): the
 * segment [from, to] that trial was running at the crash is still running
 * (the driver adopted its container), so it is handed out now instead of
 * being queued as a re-run: the trial is running, *out describes the work
 * (is_retry 1).  RL_ENOTFOUND for an unknown trial; RL_EINVAL when the
 * trial has no re-run queued or the re-run is not [from, to] (the driver
 * then treats the segment as lost).
 */
int engine_adopt(engine *e, uint64_t trial, double from, double to, engine_work *out,
		 rl_err *err);

/* All trials created (or the sampler exhausted) and every trial final. */
int engine_done(const engine *e);

/* Segments running now. */
size_t engine_running(const engine *e);

/* Number of trial slots (largest index + 1): trial indices are < this. */
uint64_t engine_n_trials(const engine *e);

/* Trials by state. */
void engine_counts(const engine *e, size_t counts[TRIAL_N_STATES]);

/* A trial as the engine sees it; pointers borrowed until the next call
 * that changes the engine. */
typedef struct engine_trial_view {
	uint64_t index;
	trial_state state;
	const config *cfg;
	double resource;               /* last boundary reached (0 = none) */
	double value;                  /* objective there, NaN when none */
	size_t n_reports;
	const engine_point *reports;   /* learning curve */
	size_t n_boundaries;
	const engine_point *boundaries;
	const char *reason;            /* failed: why; otherwise "" */
	/* Several objectives and constraints, at the last boundary (before
	 * one: NaN): every objective in the spec's order, objectives[0] ==
	 * value (NULL when the spec has one objective and no constraint),
	 * and the violation (0 when the spec has no constraint). */
	const double *objectives;
	double violation;
	int feasible;                  /* violation == 0 */
} engine_trial_view;

/* RL_ENOTFOUND when no trial has that index. */
int engine_trial(const engine *e, uint64_t index, engine_trial_view *out, rl_err *err);

/*
 * The best trial: among completed trials, the best objective at max (with
 * constraints, a feasible trial before every infeasible one; with several
 * objectives, by the first); when
 * none has completed yet, among the trials that trained furthest, the best
 * objective at that resource (a value at a lower resource is not
 * comparable: curves improve with training).  Ties go to the lower index;
 * NaN values never win.  RL_ENOTFOUND when no trial has a value yet.
 */
int engine_best(const engine *e, engine_trial_view *out, rl_err *err);

/*
 * The Pareto front: the completed, feasible trials that no other such trial
 * dominates in every objective (engine_trial_view.objectives, each by its
 * mode).  Writes at most max trial indices to out, ascending, and returns
 * how many there are (out may be NULL with max 0), or RL_ENOMEM.  With one
 * objective, the best completed feasible trial(s): every one tied at the
 * best value.
 */
long engine_front(const engine *e, uint64_t *out, size_t max);

/* The stopper and sampler in use (borrowed), for introspection. */
const stopper *engine_stopper(const engine *e);

#endif
