/*
 * stopper_steps.h - what the early-stopping tests (test_asha.c,
 * test_hyperband.c, test_median.c) share: a schedule-only spec, the row of
 * a worked example (one decision at one boundary) and the check that
 * replays rows through a stopper, naming the first row that differs.
 * Included by those test files only (static functions, one copy each).
 */
#ifndef RELISH_TEST_STOPPER_STEPS_H
#define RELISH_TEST_STOPPER_STEPS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "search/stopper.h"

/* A spec with just a schedule section (and a source name for messages). */
static inline spec schedule_spec(schedule_algo algo, double min, double max, double eta,
				 double segment, int grace)
{
	spec sp;
	memset(&sp, 0, sizeof sp);
	sp.source = "exp.yaml";
	sp.schedule.algorithm = algo;
	sp.schedule.min = min;
	sp.schedule.max = max;
	sp.schedule.reduction_factor = eta;
	sp.schedule.segment = segment;
	sp.schedule.grace = grace;
	return sp;
}

/* One row of a worked example: trial reports loss at resource, and the
 * stopper must answer want, with the next segment ending at want_next. */
typedef struct step {
	uint64_t trial;
	double resource, loss;
	stop_decision want;
	double want_next;
} step;

/* Decide row i and fail, naming it, unless the answer is the one written. */
static inline void check_step(stopper *s, const step *st, size_t i)
{
	stop_decision d;
	double next = -1;
	rl_err err;
	assert_int_equal(stopper_decide(s, st->trial, st->resource, st->loss, &d, &next, &err), 0);
	if (d != st->want || next != st->want_next)
		fail_msg("step %zu (trial %llu at %g): got %s next %g, want %s next %g", i,
			 (unsigned long long)st->trial, st->resource, stopper_decision_name(d), next,
			 stopper_decision_name(st->want), st->want_next);
}

static inline void check_steps(stopper *s, const step *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_step(s, &st[i], i);
}

#endif
