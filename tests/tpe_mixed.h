/*
 * tpe_mixed.h - the 4-D mixed search problem that tests/test_tpe.c measures
 * TPE's regret on and bench/bench_tpe.c times TPE on (one definition, so the
 * benchmark times the space the test checks): log-uniform lr, log int
 * hidden, a 5-way batch choice and a uniform dropout.  Known optimum 0 at
 * lr = 10^-2.5, hidden = 128, batch = 64, dropout = 0.2.  Static data and
 * functions: one copy per including file.
 */
#ifndef RELISH_TEST_TPE_MIXED_H
#define RELISH_TEST_TPE_MIXED_H

#include <math.h>

#include "search/sampler.h"

static rl_value batch_choices[] = {
	{.type = VAL_INT, .i = 16}, {.type = VAL_INT, .i = 32}, {.type = VAL_INT, .i = 64},
	{.type = VAL_INT, .i = 128}, {.type = VAL_INT, .i = 256},
};
static param_def mixed_params[] = {
	{.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-5, .high = 1e-1},
	{.name = "hidden", .kind = PARAM_INT, .low = 16, .high = 1024, .log = 1},
	{.name = "batch", .kind = PARAM_CHOICE, .n_choices = 5, .choices = batch_choices},
	{.name = "dropout", .kind = PARAM_UNIFORM, .low = 0, .high = 0.7},
};
static const space mixed_space = {.n = 4, .params = mixed_params};

/* The batch's index among batch_choices (5 when it is none of them). */
static size_t mixed_batch_index(const config *c)
{
	size_t b = 0;
	while (b < 5 && batch_choices[b].i != c->v[2].i)
		b++;
	return b;
}

/* The loss; b must be mixed_batch_index(c) < 5. */
static double mixed_loss(const config *c, size_t b)
{
	static const double batch_penalty[] = {0.3, 0.1, 0.0, 0.05, 0.2};
	double a = log10(c->v[0].f) + 2.5, h = log2((double)c->v[1].i) - 7, d = c->v[3].f - 0.2;
	return a * a + h * h / 4 + batch_penalty[b] + d * d * 4;
}

#endif
