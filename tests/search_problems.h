/*
 * search_problems.h - the objectives the sampler tests share (test_tpe.c,
 * test_gp.c): Branin over its usual box, the 4-D mixed problem of
 * tpe_mixed.h checked to have drawn one of its choices, and a space with a
 * region that crashes.  Include after
 * cmocka.h.  Static data and functions: one copy per including file.
 */
#ifndef RELISH_TEST_SEARCH_PROBLEMS_H
#define RELISH_TEST_SEARCH_PROBLEMS_H

#include <math.h>

#include "search/sampler.h"
#include "tpe_mixed.h"

static param_def branin_params[] = {
	{.name = "x1", .kind = PARAM_UNIFORM, .low = -5, .high = 10},
	{.name = "x2", .kind = PARAM_UNIFORM, .low = 0, .high = 15},
};
static const space branin_space = {.n = 2, .params = branin_params};
#define BRANIN_MIN 0.397887357729738

static double branin(const config *c)
{
	double x1 = c->v[0].f, x2 = c->v[1].f;
	double b = 5.1 / (4 * M_PI * M_PI), cc = 5 / M_PI, t = 1 / (8 * M_PI);
	double q = x2 - b * x1 * x1 + cc * x1 - 6;
	return q * q + 10 * (1 - t) * cos(x1) + 10;
}

/* The 4-D mixed problem (tpe_mixed.h); a sampled batch is always one of
 * the choices. */
static double mixed(const config *c)
{
	size_t b = mixed_batch_index(c);
	assert_true(b < 5);
	return mixed_loss(c, b);
}

/*
 * Issue 30, item 9: a region that crashes.  Choice c of `model` is the
 * best (no penalty) but every trial with c and x > 0.4 fails; the best
 * configuration that runs is c at x = 0.4.  A sampler that forgets failed
 * trials sees only c's successes at x <= 0.4, near its best x of 0.7, and
 * keeps proposing c beyond 0.4.
 */
static rl_value crash_models[] = {
	{.type = VAL_STR, .str = "a"}, {.type = VAL_STR, .str = "b"}, {.type = VAL_STR, .str = "c"}};
static param_def crash_params[] = {
	{.name = "model", .kind = PARAM_CHOICE, .n_choices = 3, .choices = crash_models},
	{.name = "x", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
};
static const space crash_space = {.n = 2, .params = crash_params};

/* Run s (on crash_space) one trial at a time for `trials` trials, telling
 * crashes as OBS_FAILED; returns the failures among trials from..end.
 * Frees s. */
static int crash_run(sampler *s, int trials, int from)
{
	static const double penalty[] = {0.3, 0.2, 0.0};
	int failures = 0;
	for (uint64_t i = 0; i < (uint64_t)trials; i++) {
		config c;
		assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
		size_t m = (size_t)(c.v[0].str[0] - 'a');
		double x = c.v[1].f;
		int crash = m == 2 && x > 0.4;
		failures += crash && i >= (uint64_t)from;
		assert_int_equal(sampler_tell(s, i, &c, crash ? NAN : (x - 0.7) * (x - 0.7) + penalty[m],
					      crash ? 0 : 1.0, crash ? OBS_FAILED : OBS_COMPLETE, NULL), 0);
		config_fini(&c);
	}
	sampler_free(s);
	return failures;
}

#endif
