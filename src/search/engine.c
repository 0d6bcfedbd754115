/*
 * engine.c - the experiment engine (see engine.h): trial slots indexed by
 * trial index, the work order, boundary decisions and restoring after a
 * restart.
 *
 * Queued work is not kept in a FIFO: engine_next scans the slots for the
 * best queued segment by a fixed key (class, resource, index).  A FIFO
 * would make the order depend on when decisions arrived, which a restarted
 * engine cannot know; the scan is O(trials) per call, negligible next to a
 * segment that trains for minutes.
 */
#include "search/engine.h"
#include "search/pareto.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum queue_class { Q_NONE, Q_RETRY, Q_CONT };

typedef struct trial_slot {
	trial_state state;
	config cfg;                /* owned */
	int queued;                /* queue_class of the queued segment */
	double from, to;           /* the running or queued segment */
	double resource;           /* last boundary reached */
	double value;              /* objective there (NaN: none) */
	int seg_reported;          /* a value arrived during the running segment */
	double seg_value;          /* the last such value */
	size_t n_reports, cap_reports;
	engine_point *reports;     /* owned */
	size_t n_bounds, cap_bounds;
	engine_point *bounds;      /* owned */
	char reason[512];
	/* Several objectives or constraints (e->n_side > 0), else NULL: */
	double *side;              /* owned: latest value of each side metric */
	double *obj;               /* owned: every objective at the last boundary */
	double violation;          /* there; 0 without constraints */
} trial_slot;

struct engine {
	const spec *sp;            /* borrowed */
	size_t n_obj;              /* objectives (spec_n_objectives) */
	size_t n_side;             /* objectives after the first, then constraints */
	sampler *smp;              /* owned */
	stopper *stp;              /* owned */
	uint64_t n_slots, cap_slots;
	trial_slot **slots;        /* owned, indexed by trial index, NULL = none;
				    * one allocation per trial so that the config
				    * pointers handed out stay put as the table grows */
	uint64_t n_created;        /* trials that exist */
	uint64_t next_index;       /* index of the next new trial */
	size_t running;
	int exhausted;             /* the sampler has no more points */
	int started;               /* engine_next has been called */
	/* Fail-fast (trial.fail_fast): the failures seen before any segment
	 * completed, by kind (engine_failure_key); tripped when one kind
	 * reached the threshold.  Failures restored after a restart do not
	 * count: the run after a fix starts counting afresh. */
	int any_ok;                /* a segment has completed (also restored) */
	int ff_tripped;
	size_t ff_kind;            /* the kind that tripped it */
	size_t n_ff;
	struct {
		char key[128];
		int count;
		uint64_t first;    /* its first trial */
	} ff[8];
};

static const char *const state_names[TRIAL_N_STATES] = {
	[TRIAL_PENDING] = "pending",     [TRIAL_RUNNING] = "running",
	[TRIAL_PAUSED] = "paused",       [TRIAL_COMPLETED] = "completed",
	[TRIAL_STOPPED] = "stopped",     [TRIAL_FAILED] = "failed",
	[TRIAL_CANCELLED] = "cancelled",
};

const char *engine_state_name(trial_state s)
{
	return (unsigned)s < TRIAL_N_STATES ? state_names[s] : "?";
}

int engine_state_from_name(const char *name, trial_state *out, rl_err *err)
{
	for (int i = 0; i < TRIAL_N_STATES; i++) {
		if (strcmp(name, state_names[i]) == 0) {
			*out = (trial_state)i;
			return 0;
		}
	}
	return rl_err_set(err, RL_EINVAL,
			  "unknown trial state \"%s\" (expected pending, running, paused, "
			  "completed, stopped, failed or cancelled)", name);
}

static int is_final(trial_state s)
{
	return s == TRIAL_COMPLETED || s == TRIAL_STOPPED || s == TRIAL_FAILED;
}

/* ---- life cycle ------------------------------------------------------------ */

int engine_new(const spec *sp, engine **out, rl_err *err)
{
	const char *src = sp->source ? sp->source : "spec";
	if (sp->search.max_trials <= 0)
		return rl_err_set(err, RL_ESPEC,
				  "%s: search.max_trials: expected a positive integer, got %d", src,
				  sp->search.max_trials);
	if (sp->search.max_concurrent < 0)
		return rl_err_set(err, RL_ESPEC,
				  "%s: search.max_concurrent: expected an integer >= 0, got %d", src,
				  sp->search.max_concurrent);
	engine *e = calloc(1, sizeof *e);
	if (!e)
		return rl_err_set(err, RL_ENOMEM, "creating the experiment engine");
	e->sp = sp;
	e->n_obj = spec_n_objectives(sp);
	e->n_side = e->n_obj - 1 + sp->n_constraints;
	sampler_options opt = {.n_startup = sp->search.n_startup > 0 ? sp->search.n_startup : 10,
			       .n_candidates = 24, .pending = sp->search.pending,
			       .multivariate = sp->search.multivariate,
			       .n_objectives = (int)e->n_obj};
	int rc = sampler_new(sp->search.algorithm, &sp->search.space, sp->search.seed, &opt,
			     &e->smp, err);
	if (rc == 0)
		rc = stopper_new(sp, &e->stp, err);
	if (rc < 0) {
		engine_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

static void slot_free(trial_slot *t)
{
	if (!t)
		return;
	config_fini(&t->cfg);
	free(t->reports);
	free(t->bounds);
	free(t->side);
	free(t->obj);
	free(t);
}

void engine_free(engine *e)
{
	if (!e)
		return;
	for (uint64_t i = 0; i < e->n_slots; i++)
		slot_free(e->slots[i]);
	free(e->slots);
	sampler_free(e->smp);
	stopper_free(e->stp);
	free(e);
}

/* Allocate the (empty) slot of trial `index`; it must not exist yet.  The
 * table grows to index + 1 entries. */
static trial_slot *slot_add(engine *e, uint64_t index, rl_err *err)
{
	if (index >= e->cap_slots) {
		uint64_t cap = e->cap_slots ? e->cap_slots : 32;
		while (cap <= index)
			cap *= 2;
		trial_slot **s = realloc(e->slots, cap * sizeof *s);
		if (!s) {
			rl_err_set(err, RL_ENOMEM, "growing the trial table");
			return NULL;
		}
		e->slots = s;
		e->cap_slots = cap;
	}
	trial_slot *t = calloc(1, sizeof *t);
	if (t && e->n_side) {
		t->side = malloc(e->n_side * sizeof *t->side);
		t->obj = malloc(e->n_obj * sizeof *t->obj);
		if (!t->side || !t->obj) {
			slot_free(t);
			t = NULL;
		}
		for (size_t k = 0; t && k < e->n_side; k++)
			t->side[k] = NAN;
		for (size_t k = 0; t && k < e->n_obj; k++)
			t->obj[k] = NAN;
	}
	if (!t) {
		rl_err_set(err, RL_ENOMEM, "creating trial %llu", (unsigned long long)index);
		return NULL;
	}
	if (index >= e->n_slots) {
		memset(&e->slots[e->n_slots], 0, (index + 1 - e->n_slots) * sizeof *e->slots);
		e->n_slots = index + 1;
	}
	e->slots[index] = t;
	return t;
}

/* Undo slot_add (the table keeps its length). */
static void slot_remove(engine *e, uint64_t index)
{
	slot_free(e->slots[index]);
	e->slots[index] = NULL;
}

static trial_slot *slot_get(const engine *e, uint64_t index)
{
	return index < e->n_slots ? e->slots[index] : NULL;
}

static int points_push(engine_point **p, size_t *n, size_t *cap, engine_point v, rl_err *err)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 16;
		engine_point *q = realloc(*p, c * sizeof *q);
		if (!q)
			return rl_err_set(err, RL_ENOMEM, "recording a trial value");
		*p = q;
		*cap = c;
	}
	(*p)[(*n)++] = v;
	return 0;
}

/* Objective units to the loss that samplers and stoppers minimise. */
static double to_loss(const engine *e, double value)
{
	return e->sp->objective.mode == MODE_MAX ? -value : value;
}

/* Objective k's value to its loss. */
static double to_loss_k(const engine *e, size_t k, double value)
{
	return spec_objective_at(e->sp, k).mode == MODE_MAX ? -value : value;
}

/* The boundary's objectives and violation from the first objective's value
 * and the side metrics' latest values. */
static void side_settle(const engine *e, trial_slot *t)
{
	if (!e->n_side)
		return;
	t->obj[0] = t->value;
	for (size_t k = 1; k < e->n_obj; k++)
		t->obj[k] = t->side[k - 1];
	double v = 0;
	for (size_t c = 0; c < e->sp->n_constraints; c++)
		v += spec_constraint_violation(&e->sp->constraints[c], t->side[e->n_obj - 1 + c]);
	t->violation = v;
}

static int tell(engine *e, uint64_t index, const trial_slot *t, obs_state st, rl_err *err)
{
	/* A NaN objective is no usable observation for a model. */
	if (isnan(t->value) && st != OBS_FAILED)
		st = OBS_FAILED;
	int rc;
	if (e->n_side) {
		double loss[SPEC_OBJECTIVES_MAX];
		for (size_t k = 0; k < e->n_obj; k++)
			loss[k] = to_loss_k(e, k, t->obj[k]);
		rc = sampler_tell_constrained(e->smp, index, &t->cfg, loss, e->n_obj, t->violation,
					      t->resource, st, err);
	} else {
		rc = sampler_tell(e->smp, index, &t->cfg, to_loss(e, t->value), t->resource, st, err);
	}
	if (rc < 0)
		return rl_err_prefix(err, "trial %llu: telling the sampler",
				     (unsigned long long)index);
	return 0;
}

/* ---- handing out work ------------------------------------------------------ */

/* Is queued slot a better pick than b (both queued)? */
static int queue_before(const trial_slot *a, uint64_t ia, const trial_slot *b, uint64_t ib)
{
	if (a->queued != b->queued)
		return a->queued == Q_RETRY;
	if (a->queued == Q_CONT && a->from != b->from)
		return a->from > b->from;
	return ia < ib;
}

static int can_create(const engine *e)
{
	return !e->exhausted && e->n_created < (uint64_t)e->sp->search.max_trials;
}

static void start_segment(engine *e, uint64_t index, trial_slot *t, engine_work *out,
			  int is_new, int is_retry)
{
	t->queued = Q_NONE;
	t->state = TRIAL_RUNNING;
	t->seg_reported = 0;
	t->seg_value = NAN;
	e->running++;
	*out = (engine_work){.trial = index, .cfg = &t->cfg, .from = t->from, .to = t->to,
			     .is_new_trial = is_new, .is_retry = is_retry};
}

int engine_adopt(engine *e, uint64_t trial, double from, double to, engine_work *out,
		 rl_err *err)
{
	trial_slot *t = trial < e->n_slots ? e->slots[trial] : NULL;
	if (!t)
		return rl_err_set(err, RL_ENOTFOUND, "adopt: no trial %llu",
				  (unsigned long long)trial);
	if (e->started || t->queued != Q_RETRY || t->from != from || t->to != to)
		return rl_err_set(err, RL_EINVAL,
				  "adopt: trial %llu has no re-run of segment %g-%g queued",
				  (unsigned long long)trial, from, to);
	start_segment(e, trial, t, out, 0, 1);
	return 0;
}

/* engine_next; with create 0 (engine_next_started) no trial is created. */
static int next_work(engine *e, engine_work *out, int create, rl_err *err)
{
	e->started = 1;
	if (e->ff_tripped)
		return 0;
	int limit = e->sp->search.max_concurrent;
	if (limit > 0 && e->running >= (size_t)limit)
		return 0;
	trial_slot *pick = NULL;
	uint64_t pick_i = 0;
	for (uint64_t i = 0; i < e->n_slots; i++) {
		trial_slot *t = e->slots[i];
		if (t && t->queued != Q_NONE &&
		    (!pick || queue_before(t, i, pick, pick_i))) {
			pick = t;
			pick_i = i;
		}
	}
	if (pick) {
		start_segment(e, pick_i, pick, out, 0, pick->queued == Q_RETRY);
		return 1;
	}
	if (!create || !can_create(e))
		return 0;

	uint64_t index = e->next_index;
	config c;
	int rc = sampler_ask(e->smp, index, &c, err);
	if (rc == RL_ENOTFOUND) {
		e->exhausted = 1; /* a finite space (grid) has no more points */
		return 0;
	}
	if (rc < 0)
		return rl_err_prefix(err, "proposing trial %llu", (unsigned long long)index);
	trial_slot *t = slot_add(e, index, err);
	if (!t) {
		config_fini(&c);
		return RL_ENOMEM;
	}
	t->cfg = c;
	/* The sampler counts the trial as pending until it reports (so that
	 * proposals made meanwhile know it is being tried).  On failure the
	 * trial is not created at all. */
	rc = sampler_tell(e->smp, index, &t->cfg, NAN, 0, OBS_PENDING, err);
	if (rc < 0) {
		slot_remove(e, index);
		return rl_err_prefix(err, "trial %llu: telling the sampler",
				     (unsigned long long)index);
	}
	t->resource = 0;
	t->value = NAN;
	t->from = 0;
	t->to = stopper_first_target(e->stp, index);
	e->next_index++;
	e->n_created++;
	start_segment(e, index, t, out, 1, 0);
	return 1;
}

int engine_next(engine *e, engine_work *out, rl_err *err)
{
	return next_work(e, out, 1, err);
}

int engine_next_started(engine *e, engine_work *out, rl_err *err)
{
	return next_work(e, out, 0, err);
}

/* ---- results ----------------------------------------------------------------- */

static trial_slot *running_slot(engine *e, uint64_t trial, const char *what, rl_err *err,
				int *rc)
{
	trial_slot *t = slot_get(e, trial);
	if (!t) {
		*rc = rl_err_set(err, RL_ENOTFOUND, "%s: no trial %llu", what,
				 (unsigned long long)trial);
		return NULL;
	}
	if (t->state != TRIAL_RUNNING) {
		*rc = rl_err_set(err, RL_EINVAL, "%s: trial %llu is %s, not running", what,
				 (unsigned long long)trial, engine_state_name(t->state));
		return NULL;
	}
	return t;
}

size_t engine_n_side(const engine *e)
{
	return e->n_side;
}

const char *engine_side_metric(const engine *e, size_t k)
{
	if (k + 1 < e->n_obj)
		return spec_objective_at(e->sp, k + 1).metric;
	k -= e->n_obj - 1;
	return k < e->sp->n_constraints ? e->sp->constraints[k].metric : NULL;
}

int engine_report_side(engine *e, uint64_t trial, size_t k, double value, rl_err *err)
{
	int rc = 0;
	trial_slot *t = running_slot(e, trial, "report", err, &rc);
	if (!t)
		return rc;
	if (k >= e->n_side)
		return rl_err_set(err, RL_ENOTFOUND, "report: no side metric %zu", k);
	t->side[k] = value;
	return 0;
}

int engine_report(engine *e, uint64_t trial, double resource, double value, rl_err *err)
{
	int rc = 0;
	trial_slot *t = running_slot(e, trial, "report", err, &rc);
	if (!t)
		return rc;
	rc = points_push(&t->reports, &t->n_reports, &t->cap_reports,
			 (engine_point){resource, value}, err);
	if (rc < 0)
		return rc;
	t->seg_reported = 1;
	t->seg_value = value;
	return 0;
}

static void segment_failed(trial_slot *t, engine_decision *out, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_fast_note(engine *e, uint64_t trial, const char *reason);

static void segment_failed(trial_slot *t, engine_decision *out, const char *fmt, ...)
{
	t->state = TRIAL_PENDING; /* waits for engine_requeue or engine_trial_failed */
	t->queued = Q_NONE;
	*out = (engine_decision){.outcome = ENG_FAILED, .resource = t->resource,
				 .value = NAN, .next_to = t->to};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof out->reason, fmt, ap);
	va_end(ap);
	snprintf(t->reason, sizeof t->reason, "%s", out->reason);
}

int engine_segment_done(engine *e, uint64_t trial, int segment_ok, double reached_resource,
			engine_decision *out, rl_err *err)
{
	int rc = 0;
	trial_slot *t = running_slot(e, trial, "segment done", err, &rc);
	if (!t)
		return rc;
	e->running--;
	if (!segment_ok) {
		segment_failed(t, out, "segment %g-%g failed", t->from, t->to);
		return 0;
	}
	if (reached_resource >= 0 && reached_resource < t->to &&
	    !stopper_same_resource(reached_resource, t->to)) {
		segment_failed(t, out, "segment %g-%g ended at resource %g, before its end",
			       t->from, t->to, reached_resource);
		return 0;
	}
	if (!t->seg_reported) {
		/* A value at the segment's end reported before (the store's,
		 * restored after a restart, or an earlier attempt's): the
		 * trial's checkpoint covers the segment, so it trained nothing
		 * and printed nothing, and the segment is complete (a trial
		 * need not print again what relish already has). */
		for (size_t i = t->n_reports; i-- > 0;)
			if (stopper_same_resource(t->reports[i].resource, t->to)) {
				t->seg_reported = 1;
				t->seg_value = t->reports[i].value;
				break;
			}
	}
	if (!t->seg_reported) {
		segment_failed(t, out,
			       "segment %g-%g ended without reporting the objective \"%s\"",
			       t->from, t->to,
			       e->sp->objective.metric ? e->sp->objective.metric : "?");
		return 0;
	}

	double boundary = t->to, value = t->seg_value;
	stop_decision d;
	double next;
	rc = stopper_decide(e->stp, trial, boundary, to_loss(e, value), &d, &next, err);
	if (rc < 0) {
		e->running++; /* nothing changed: the trial is still running */
		return rl_err_prefix(err, "trial %llu", (unsigned long long)trial);
	}
	rc = points_push(&t->bounds, &t->n_bounds, &t->cap_bounds,
			 (engine_point){boundary, value}, err);
	if (rc < 0) {
		e->running++;
		return rc;
	}
	t->resource = boundary;
	t->value = value;
	side_settle(e, t);
	e->any_ok = 1;
	t->from = boundary;
	t->to = next;
	obs_state obs = OBS_RUNNING;
	engine_outcome oc;
	switch (d) {
	case DECIDE_CONTINUE:
	case DECIDE_PROMOTE:
		oc = d == DECIDE_CONTINUE ? ENG_CONTINUE : ENG_PROMOTE;
		t->state = TRIAL_PAUSED;
		t->queued = Q_CONT;
		break;
	case DECIDE_STOP:
		oc = ENG_STOP;
		t->state = TRIAL_STOPPED;
		obs = OBS_STOPPED;
		break;
	default:
		oc = ENG_COMPLETE;
		t->state = TRIAL_COMPLETED;
		obs = OBS_COMPLETE;
		break;
	}
	*out = (engine_decision){.outcome = oc, .resource = boundary, .value = value,
				 .next_to = next};
	return tell(e, trial, t, obs, err);
}

int engine_requeue(engine *e, uint64_t trial, double from, double to, rl_err *err)
{
	trial_slot *t = slot_get(e, trial);
	if (!t)
		return rl_err_set(err, RL_ENOTFOUND, "requeue: no trial %llu",
				  (unsigned long long)trial);
	if (is_final(t->state))
		return rl_err_set(err, RL_EINVAL, "requeue: trial %llu is %s",
				  (unsigned long long)trial, engine_state_name(t->state));
	if (!stopper_same_resource(from, t->resource) || !(to > from))
		return rl_err_set(err, RL_EINVAL,
				  "requeue: trial %llu: segment %g-%g must start at its last "
				  "boundary %g and end after it",
				  (unsigned long long)trial, from, to, t->resource);
	if (t->state == TRIAL_RUNNING)
		e->running--;
	t->state = TRIAL_PENDING;
	t->queued = Q_RETRY;
	t->from = t->resource; /* exactly, not the caller's rounding */
	t->to = to;
	return 0;
}

int engine_trial_failed(engine *e, uint64_t trial, const char *reason, rl_err *err)
{
	trial_slot *t = slot_get(e, trial);
	if (!t)
		return rl_err_set(err, RL_ENOTFOUND, "trial failed: no trial %llu",
				  (unsigned long long)trial);
	if (t->state == TRIAL_RUNNING || is_final(t->state))
		return rl_err_set(err, RL_EINVAL, "trial failed: trial %llu is %s",
				  (unsigned long long)trial, engine_state_name(t->state));
	t->state = TRIAL_FAILED;
	t->queued = Q_NONE;
	if (reason)
		snprintf(t->reason, sizeof t->reason, "%s", reason);
	fail_fast_note(e, trial, t->reason);
	return tell(e, trial, t, OBS_FAILED, err);
}

size_t engine_failure_key(const char *reason, char *buf, size_t n)
{
	size_t j = 0;
	if (!n)
		return 0;
	for (const char *p = reason ? reason : ""; *p && j + 1 < n; p++) {
		if (*p >= '0' && *p <= '9') {
			while (p[1] >= '0' && p[1] <= '9')
				p++;
			buf[j++] = '#';
		} else {
			buf[j++] = *p;
		}
	}
	buf[j] = '\0';
	return j;
}

static void fail_fast_note(engine *e, uint64_t trial, const char *reason)
{
	int limit = e->sp->trial.fail_fast;
	if (limit <= 0 || e->any_ok || e->ff_tripped)
		return;
	char key[sizeof e->ff[0].key];
	engine_failure_key(reason, key, sizeof key);
	size_t k = 0;
	while (k < e->n_ff && strcmp(e->ff[k].key, key))
		k++;
	if (k == e->n_ff) {
		if (k == sizeof e->ff / sizeof e->ff[0])
			return; /* eight different failures: not one cause */
		snprintf(e->ff[k].key, sizeof e->ff[k].key, "%s", key);
		e->ff[k].first = trial;
		e->n_ff++;
	}
	if (++e->ff[k].count >= limit) {
		e->ff_tripped = 1;
		e->ff_kind = k;
	}
}

int engine_failed_fast(const engine *e, uint64_t *first_trial, int *count)
{
	if (!e->ff_tripped)
		return 0;
	if (first_trial)
		*first_trial = e->ff[e->ff_kind].first;
	if (count)
		*count = e->ff[e->ff_kind].count;
	return 1;
}

/* ---- restore ------------------------------------------------------------------- */

static int copy_points(engine_point **dst, size_t *n, size_t *cap, const engine_point *src,
		       size_t count, rl_err *err)
{
	for (size_t i = 0; i < count; i++) {
		int rc = points_push(dst, n, cap, src[i], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int engine_restore_trial(engine *e, const engine_trial_record *rec, rl_err *err)
{
	unsigned long long idx = (unsigned long long)rec->index;
	if (e->started)
		return rl_err_set(err, RL_EINVAL,
				  "restoring trial %llu: the engine has already handed out work", idx);
	if ((unsigned)rec->state >= TRIAL_N_STATES)
		return rl_err_set(err, RL_EINVAL, "restoring trial %llu: bad state %d", idx,
				  (int)rec->state);
	if (slot_get(e, rec->index))
		return rl_err_set(err, RL_EEXISTS, "restoring trial %llu twice", idx);
	for (size_t i = 0; i < rec->n_boundaries; i++)
		if (!(rec->boundaries[i].resource > 0) ||
		    (i > 0 && rec->boundaries[i].resource <= rec->boundaries[i - 1].resource))
			return rl_err_set(err, RL_EINVAL,
					  "restoring trial %llu: boundary %zu at resource %g is "
					  "not positive and increasing", idx, i,
					  rec->boundaries[i].resource);
	trial_slot *t = slot_add(e, rec->index, err);
	if (!t)
		return RL_ENOMEM;
	int rc = config_copy(&t->cfg, rec->cfg, err);
	if (rc == 0)
		rc = copy_points(&t->reports, &t->n_reports, &t->cap_reports, rec->reports,
			 rec->n_reports, err);
	if (rc == 0)
		rc = copy_points(&t->bounds, &t->n_bounds, &t->cap_bounds, rec->boundaries,
				 rec->n_boundaries, err);
	for (size_t i = 0; rc == 0 && i < rec->n_boundaries; i++)
		rc = stopper_record(e->stp, rec->index, rec->boundaries[i].resource,
				    to_loss(e, rec->boundaries[i].value), err);
	if (rc < 0) {
		slot_remove(e, rec->index);
		return rl_err_prefix(err, "restoring trial %llu", idx);
	}
	t->resource = rec->n_boundaries ? rec->boundaries[rec->n_boundaries - 1].resource : 0;
	t->value = rec->n_boundaries ? rec->boundaries[rec->n_boundaries - 1].value : NAN;
	if (e->n_side && rec->side)
		memcpy(t->side, rec->side, e->n_side * sizeof *t->side);
	if (rec->n_boundaries)
		side_settle(e, t);
	if (rec->n_boundaries)
		e->any_ok = 1;
	if (rec->reason)
		snprintf(t->reason, sizeof t->reason, "%s", rec->reason);
	t->state = rec->state;
	if (!is_final(t->state) && t->resource > 0 &&
	    stopper_next_target(e->stp, rec->index, t->resource) <= t->resource)
		t->state = TRIAL_COMPLETED; /* reached max; the final state was not stored */
	if (!is_final(t->state)) {
		t->from = t->resource;
		t->to = t->resource > 0 ? stopper_next_target(e->stp, rec->index, t->resource)
					: stopper_first_target(e->stp, rec->index);
		if (t->state == TRIAL_PAUSED && rec->n_boundaries > 0) {
			t->queued = Q_CONT;
		} else {
			t->state = TRIAL_PENDING; /* running at the crash: re-run */
			t->queued = Q_RETRY;
		}
	}
	e->n_created++;
	if (rec->index >= e->next_index)
		e->next_index = rec->index + 1;

	obs_state obs = t->state == TRIAL_COMPLETED ? OBS_COMPLETE
			: t->state == TRIAL_STOPPED ? OBS_STOPPED
			: t->state == TRIAL_FAILED  ? OBS_FAILED
						    : OBS_RUNNING;
	if (rec->n_boundaries > 0 || obs == OBS_FAILED)
		return tell(e, rec->index, t, obs, err);
	if (!is_final(t->state)) {
		/* Created, never reported: pending, as in engine_next. */
		rc = sampler_tell(e->smp, rec->index, &t->cfg, NAN, 0, OBS_PENDING, err);
		if (rc < 0)
			return rl_err_prefix(err, "restoring trial %llu", idx);
	}
	return 0;
}

/* ---- queries ------------------------------------------------------------------- */

int engine_done(const engine *e)
{
	if (e->ff_tripped)
		return e->running == 0;
	if (can_create(e))
		return 0;
	for (uint64_t i = 0; i < e->n_slots; i++)
		if (e->slots[i] && !is_final(e->slots[i]->state))
			return 0;
	return 1;
}

size_t engine_running(const engine *e)
{
	return e->running;
}

uint64_t engine_n_trials(const engine *e)
{
	return e->n_slots;
}

void engine_counts(const engine *e, size_t counts[TRIAL_N_STATES])
{
	for (int s = 0; s < TRIAL_N_STATES; s++)
		counts[s] = 0;
	for (uint64_t i = 0; i < e->n_slots; i++)
		if (e->slots[i])
			counts[e->slots[i]->state]++;
}

static void view_of(uint64_t index, const trial_slot *t, engine_trial_view *out)
{
	*out = (engine_trial_view){
		.index = index, .state = t->state, .cfg = &t->cfg,
		.resource = t->resource, .value = t->value,
		.n_reports = t->n_reports, .reports = t->reports,
		.n_boundaries = t->n_bounds, .boundaries = t->bounds,
		.reason = t->reason, .objectives = t->obj, .violation = t->violation,
		.feasible = t->violation == 0,
	};
}

int engine_trial(const engine *e, uint64_t index, engine_trial_view *out, rl_err *err)
{
	const trial_slot *t = slot_get(e, index);
	if (!t)
		return rl_err_set(err, RL_ENOTFOUND, "no trial %llu", (unsigned long long)index);
	view_of(index, t, out);
	return 0;
}

long engine_front(const engine *e, uint64_t *out, size_t max)
{
	size_t n = 0, m = e->n_obj;
	for (uint64_t i = 0; i < e->n_slots; i++)
		n += e->slots[i] && e->slots[i]->state == TRIAL_COMPLETED;
	double *pts = malloc((n ? n : 1) * m * sizeof *pts);
	uint64_t *idx = malloc((n ? n : 1) * sizeof *idx);
	unsigned char *ok = malloc(n ? n : 1), *on = malloc(n ? n : 1);
	long count = 0;
	if (!pts || !idx || !ok || !on) {
		count = RL_ENOMEM;
		goto out;
	}
	size_t j = 0;
	for (uint64_t i = 0; i < e->n_slots; i++) {
		const trial_slot *t = e->slots[i];
		if (!t || t->state != TRIAL_COMPLETED)
			continue;
		idx[j] = i;
		ok[j] = t->violation == 0;
		for (size_t k = 0; k < m; k++)
			pts[j * m + k] = to_loss_k(e, k, e->n_side ? t->obj[k] : t->value);
		j++;
	}
	pareto_front(pts, n, m, ok, on);
	for (size_t i = 0; i < n; i++)
		if (on[i]) {
			if ((size_t)count < max)
				out[count] = idx[i];
			count++;
		}
out:
	free(pts);
	free(idx);
	free(ok);
	free(on);
	return count;
}

/* Is a better than b (trial slots with values), by the rule in engine.h? */
static int best_before(const engine *e, const trial_slot *a, const trial_slot *b)
{
	int ac = a->state == TRIAL_COMPLETED, bc = b->state == TRIAL_COMPLETED;
	if (ac != bc)
		return ac;
	if ((a->violation == 0) != (b->violation == 0))
		return a->violation == 0; /* 0 for both without constraints */
	if (!stopper_same_resource(a->resource, b->resource))
		return a->resource > b->resource;
	return to_loss(e, a->value) < to_loss(e, b->value);
}

int engine_best(const engine *e, engine_trial_view *out, rl_err *err)
{
	const trial_slot *best = NULL;
	uint64_t best_i = 0;
	for (uint64_t i = 0; i < e->n_slots; i++) {
		const trial_slot *t = e->slots[i];
		if (!t || t->n_bounds == 0 || isnan(t->value))
			continue;
		/* Strict order: on a tie the lower index, seen first, stays. */
		if (!best || best_before(e, t, best)) {
			best = t;
			best_i = i;
		}
	}
	if (!best)
		return rl_err_set(err, RL_ENOTFOUND, "no trial has reported the objective yet");
	view_of(best_i, best, out);
	return 0;
}

const stopper *engine_stopper(const engine *e)
{
	return e->stp;
}
