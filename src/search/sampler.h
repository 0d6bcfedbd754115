/*
 * sampler.h - search algorithms behind one ops struct.
 *
 * A sampler proposes configurations (ask) and learns from observations
 * (tell).  Every sampler minimises: the engine negates objectives whose mode
 * is max.  Samplers are deterministic for (space, seed, sequence of calls).
 *
 * Observations are keyed by trial index: telling the same trial again
 * replaces its earlier observation (a trial reports at every segment
 * boundary; the latest report, at the largest resource, counts).  `resource`
 * lets samplers rank trials stopped early below trials that trained further,
 * as Optuna's TPE does for pruned trials.
 */
#ifndef RELISH_SAMPLER_H
#define RELISH_SAMPLER_H

#include <stdint.h>

#include "common/err.h"
#include "search/space.h"
#include "spec/spec.h"

typedef struct sampler sampler;

typedef enum obs_state {
	OBS_RUNNING,   /* intermediate value of a trial still training */
	OBS_COMPLETE,  /* trained to the maximum resource */
	OBS_STOPPED,   /* stopped early by the scheduler (pruned) */
	OBS_FAILED,    /* failed for good: a bad outcome, no value */
	OBS_PENDING,   /* proposed, no value yet: running or queued (loss and
			* resource are ignored); a later report replaces it */
} obs_state;

typedef struct sampler_ops {
	const char *name;
	/* Propose the configuration of trial `index` (0, 1, 2, ... in order).
	 * Writes a new config into *out (owned by the caller).  Returns 0, or
	 * RL_ENOTFOUND when the space is exhausted (grid), or another error. */
	int (*ask)(sampler *s, uint64_t index, config *out, rl_err *err);
	/* Record an observation; loss is minimised.  OBS_FAILED (and a NaN
	 * loss) is a bad outcome: loss and resource are ignored, it replaces
	 * an earlier observation of the trial, and models that learn count
	 * it worse than every reported value (docs/search.md, "Failed
	 * trials").  OBS_PENDING marks a trial proposed and not yet reported;
	 * it never replaces a value already told.  Samplers that do not learn
	 * ignore every tell. */
	int (*tell)(sampler *s, uint64_t index, const config *c, double loss,
		    double resource, obs_state state, rl_err *err);
	void (*destroy)(sampler *s);
	/* Several objectives (optional; NULL: the sampler takes one): as tell,
	 * with n losses (n == the n_objectives it was made for); a NaN among
	 * them makes the observation a failure. */
	int (*tell_multi)(sampler *s, uint64_t index, const config *c, const double *losses,
			  size_t n, double resource, obs_state state, rl_err *err);
	/* Constraints (optional; NULL: see sampler_tell_constrained): as
	 * tell_multi with the trial's violation, 0 when feasible, > 0 by how
	 * much it misses.  Infeasible observations rank after every feasible
	 * one, among themselves by violation (a constraint-aware split). */
	int (*tell_constrained)(sampler *s, uint64_t index, const config *c, const double *losses,
				size_t n, double violation, double resource, obs_state state,
				rl_err *err);
} sampler_ops;

/* Base fields; implementations embed this first. */
struct sampler {
	const sampler_ops *ops;
	const space *space; /* borrowed: must outlive the sampler */
	uint64_t seed;
};

typedef struct sampler_options {
	int n_startup;      /* TPE, GP: random trials before modelling (default 10) */
	int n_candidates;   /* TPE: candidates scored per ask (default 24) */
	pending_rule pending; /* TPE: pending trials (default PENDING_WORST) */
	int multivariate;   /* TPE: one joint estimator (default 0: per parameter) */
	int n_objectives;   /* TPE: losses per observation (0 or 1: one); several are
			     * told with sampler_tell_multi (docs/search.md) */
} sampler_options;

/* Create a sampler for algorithm.  *out owned by caller (sampler_free). */
int sampler_new(search_algo algo, const space *sp, uint64_t seed,
		const sampler_options *opt, sampler **out, rl_err *err);
void sampler_free(sampler *s);

static inline int sampler_ask(sampler *s, uint64_t index, config *out, rl_err *err)
{
	return s->ops->ask(s, index, out, err);
}

static inline int sampler_tell(sampler *s, uint64_t index, const config *c, double loss,
			       double resource, obs_state state, rl_err *err)
{
	return s->ops->tell(s, index, c, loss, resource, state, err);
}

/* tell_multi of the samplers that learn nothing (random, grid, sobol). */
int sampler_tell_multi_ignore(sampler *s, uint64_t index, const config *c, const double *losses,
			      size_t n, double resource, obs_state state, rl_err *err);

/* Several losses (n >= 1): samplers without tell_multi take n == 1 only. */
static inline int sampler_tell_multi(sampler *s, uint64_t index, const config *c,
				     const double *losses, size_t n, double resource,
				     obs_state state, rl_err *err)
{
	if (s->ops->tell_multi)
		return s->ops->tell_multi(s, index, c, losses, n, resource, state, err);
	if (n != 1)
		return rl_err_set(err, RL_EUNSUPPORTED, "%s: takes one objective, not %zu",
				  s->ops->name, n);
	return s->ops->tell(s, index, c, losses[0], resource, state, err);
}

/*
 * Several losses and a violation (>= 0; 0: feasible).  A sampler without
 * tell_constrained learns an infeasible observation as a failed trial (a
 * bad outcome: GP's liar at the worst value), so it too steers away from
 * infeasible regions, though without ranking them by violation.
 */
static inline int sampler_tell_constrained(sampler *s, uint64_t index, const config *c,
					   const double *losses, size_t n, double violation,
					   double resource, obs_state state, rl_err *err)
{
	if (s->ops->tell_constrained)
		return s->ops->tell_constrained(s, index, c, losses, n, violation, resource, state,
						err);
	if (violation > 0 && state != OBS_PENDING)
		state = OBS_FAILED;
	return sampler_tell_multi(s, index, c, losses, n, resource, state, err);
}

/* The random sampler's configuration from rng: one uniform draw per
 * parameter in order, inactive parameters left VAL_NONE (c from
 * config_init, values filled here).  TPE's start-up trials use it too. */
struct rl_rng;
int sampler_random_config(const space *sp, struct rl_rng *rng, config *c, rl_err *err);

/* Number of points of the full grid (choices x ints x grid_points), or 0 if
 * it overflows or an axis holds more than SAMPLER_GRID_AXIS_MAX values.
 * Used for grid's default max_trials; arithmetic, never an enumeration. */
uint64_t sampler_grid_size(const space *sp);
/* The most values one parameter's grid axis may hold (a `step` or
 * `grid_points` asking for more is a spec error under grid search): an
 * axis of rounded, spread integers is held as a table of its values. */
#define SAMPLER_GRID_AXIS_MAX 100000u
/* The values p's grid axis has, by arithmetic (before rounded integers
 * that coincide are merged; UINT64_MAX when past 2^64). */
uint64_t sampler_grid_axis_count(const param_def *p);

/* Implementations (one file each). */
int sampler_random_new(const space *sp, uint64_t seed, const sampler_options *opt,
		       sampler **out, rl_err *err);
int sampler_grid_new(const space *sp, uint64_t seed, const sampler_options *opt,
		     sampler **out, rl_err *err);
int sampler_tpe_new(const space *sp, uint64_t seed, const sampler_options *opt,
		    sampler **out, rl_err *err);
int sampler_sobol_new(const space *sp, uint64_t seed, const sampler_options *opt,
		      sampler **out, rl_err *err);
int sampler_gp_new(const space *sp, uint64_t seed, const sampler_options *opt, sampler **out,
		   rl_err *err);

#endif
