/*
 * stopper.c - the early-stopping front end: the factory table, the checks
 * every stopper shares, the generic decide/record wrappers, and the `none`
 * stopper (train every trial to max, optionally in fixed segments).
 *
 * The front end owns the rule common to all algorithms: a boundary at or
 * beyond max completes the trial.  Implementations only ever see
 * boundaries below max.
 */
#include "search/stopper.h"

#include <math.h>
#include <stdlib.h>

/* ---- shared helpers ------------------------------------------------------ */

int stopper_same_resource(double a, double b)
{
	double scale = fmax(1.0, fmax(fabs(a), fabs(b)));
	return fabs(a - b) <= 1e-9 * scale;
}

double stopper_loss_key(double loss)
{
	return isnan(loss) ? INFINITY : loss;
}

double stopper_step(double resource, double segment, double limit)
{
	if (segment <= 0)
		return limit;
	double t = resource + segment;
	if (t >= limit || stopper_same_resource(t, limit))
		return limit;
	return t;
}

const char *stopper_decision_name(stop_decision d)
{
	static const char *const names[] = {
		[DECIDE_CONTINUE] = "continue",
		[DECIDE_PROMOTE] = "promote",
		[DECIDE_STOP] = "stop",
		[DECIDE_COMPLETE] = "complete",
	};
	if ((unsigned)d < sizeof names / sizeof names[0])
		return names[d];
	return "?";
}

void stopper_base_init(stopper *s, const stopper_ops *ops, const spec *sp)
{
	s->ops = ops;
	s->min = sp->schedule.min;
	s->max = sp->schedule.max;
	s->eta = sp->schedule.reduction_factor;
	s->segment = sp->schedule.segment;
	s->grace = sp->schedule.grace;
}

/* ---- none ---------------------------------------------------------------- */

static double none_first(stopper *s, uint64_t trial)
{
	return stopper_step(0, s->segment, s->max);
}

static double none_next(stopper *s, uint64_t trial, double resource)
{
	return stopper_step(resource, s->segment, s->max);
}

static int none_observe(stopper *s, uint64_t trial, double resource, double loss,
			stop_decision *out, rl_err *err)
{
	if (out)
		*out = DECIDE_CONTINUE;
	return 0;
}

static void none_destroy(stopper *s)
{
	free(s);
}

static const stopper_ops none_ops = {
	.name = "none",
	.first_target = none_first,
	.next_target = none_next,
	.observe = none_observe,
	.destroy = none_destroy,
};

int stopper_none_new(const spec *sp, stopper **out, rl_err *err)
{
	stopper *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "creating stopper");
	stopper_base_init(s, &none_ops, sp);
	*out = s;
	return 0;
}

/* ---- factory --------------------------------------------------------------- */

typedef int (*stopper_ctor)(const spec *, stopper **, rl_err *);

/* What each algorithm needs from the schedule section. */
enum { NEED_MIN = 1, NEED_ETA = 2 };

static const struct {
	schedule_algo algo;
	stopper_ctor ctor;
	unsigned needs;
} stopper_table[] = {
	{SCHED_NONE, stopper_none_new, 0},
	{SCHED_ASHA, stopper_asha_new, NEED_MIN | NEED_ETA},
	{SCHED_HYPERBAND, stopper_hyperband_new, NEED_MIN | NEED_ETA},
	{SCHED_MEDIAN, stopper_median_new, 0},
};

static int check_schedule(const spec *sp, unsigned needs, rl_err *err)
{
	const char *src = sp->source ? sp->source : "spec";
	double min = sp->schedule.min, max = sp->schedule.max;
	double eta = sp->schedule.reduction_factor, seg = sp->schedule.segment;
	/* isfinite() rejects NaN too, so every comparison below is meaningful. */
	if (!isfinite(max) || max <= 0)
		return rl_err_set(err, RL_ESPEC, "%s: schedule.max: expected a positive number, got %g",
				  src, max);
	if (!isfinite(seg) || seg < 0)
		return rl_err_set(err, RL_ESPEC,
				  "%s: schedule.segment: expected a number >= 0, got %g", src, seg);
	if (!isfinite(min) || min < 0 || ((needs & NEED_MIN) && min <= 0))
		return rl_err_set(err, RL_ESPEC, "%s: schedule.min: expected a number %s 0, got %g",
				  src, (needs & NEED_MIN) ? ">" : ">=", min);
	/* none and median may leave min at its default above a small max. */
	if ((needs & NEED_MIN) && min > max)
		return rl_err_set(err, RL_ESPEC,
				  "%s: schedule.min: expected at most schedule.max (%g), got %g", src,
				  max, min);
	if ((needs & NEED_ETA) && (!isfinite(eta) || eta <= 1))
		return rl_err_set(err, RL_ESPEC,
				  "%s: schedule.reduction_factor: expected a number > 1, got %g", src,
				  eta);
	return 0;
}

int stopper_new(const spec *sp, stopper **out, rl_err *err)
{
	for (size_t i = 0; i < sizeof stopper_table / sizeof stopper_table[0]; i++) {
		if (stopper_table[i].algo != sp->schedule.algorithm)
			continue;
		int rc = check_schedule(sp, stopper_table[i].needs, err);
		if (rc < 0)
			return rc;
		return stopper_table[i].ctor(sp, out, err);
	}
	return rl_err_set(err, RL_EUNSUPPORTED, "unknown early-stopping algorithm %d",
			  (int)sp->schedule.algorithm);
}

void stopper_free(stopper *s)
{
	if (s)
		s->ops->destroy(s);
}

const char *stopper_name(const stopper *s)
{
	return s->ops->name;
}

/* ---- front end ------------------------------------------------------------- */

double stopper_first_target(stopper *s, uint64_t trial)
{
	return s->ops->first_target(s, trial);
}

double stopper_next_target(stopper *s, uint64_t trial, double resource)
{
	if (resource >= s->max || stopper_same_resource(resource, s->max))
		return s->max;
	return s->ops->next_target(s, trial, resource);
}

static int check_resource(double resource, rl_err *err)
{
	if (!isfinite(resource) || resource <= 0)
		return rl_err_set(err, RL_EINVAL,
				  "early stopping: resource at a boundary must be positive, got %g",
				  resource);
	return 0;
}

static int at_max(const stopper *s, double resource)
{
	return resource >= s->max || stopper_same_resource(resource, s->max);
}

int stopper_decide(stopper *s, uint64_t trial, double resource, double loss,
		   stop_decision *out, double *next_target, rl_err *err)
{
	int rc = check_resource(resource, err);
	if (rc < 0)
		return rc;
	if (at_max(s, resource)) {
		*out = DECIDE_COMPLETE;
		*next_target = s->max;
		return 0;
	}
	stop_decision d;
	rc = s->ops->observe(s, trial, resource, stopper_loss_key(loss), &d, err);
	if (rc < 0)
		return rc;
	*out = d;
	*next_target = d == DECIDE_STOP ? resource : s->ops->next_target(s, trial, resource);
	return 0;
}

int stopper_record(stopper *s, uint64_t trial, double resource, double loss, rl_err *err)
{
	int rc = check_resource(resource, err);
	if (rc < 0)
		return rc;
	if (at_max(s, resource))
		return 0; /* nothing is ever decided at max */
	return s->ops->observe(s, trial, resource, stopper_loss_key(loss), NULL, err);
}
