/*
 * test_pareto.c - several objectives in the search core: dominance,
 * non-dominated sorting against a brute-force oracle, the 2-D hypervolume
 * on hand-computed fronts, front thinning, and TPE with two objectives
 * (sampler_tell_multi): a larger hypervolume than random search, the
 * losses' count checked, samplers that learn nothing accepting any count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/pareto.h"
#include "search/rng.h"
#include "search/sampler.h"

static void test_dominates(void **state)
{
	double a[] = {1, 2}, b[] = {1, 3}, c[] = {0, 4};
	assert_true(pareto_dominates(a, b, 2));
	assert_false(pareto_dominates(b, a, 2));
	assert_false(pareto_dominates(a, a, 2)); /* equal: neither */
	assert_false(pareto_dominates(a, c, 2));
	assert_false(pareto_dominates(c, a, 2));
}

/* Ranks against the definition: rank r = 1 + the largest rank among the
 * points that dominate it (0 when none does). */
static void test_ranks_oracle(void **state)
{
	rl_rng rng;
	rng_seed(&rng, 3);
	for (int round = 0; round < 20; round++) {
		size_t n = 1 + (size_t)rng_below(&rng, 40), m = 2 + (size_t)rng_below(&rng, 2);
		double pts[40 * 3];
		for (size_t i = 0; i < n * m; i++)
			pts[i] = (double)rng_below(&rng, 6); /* ties on purpose */
		int rank[40], want[40];
		assert_int_equal(pareto_ranks(pts, n, m, rank), 0);
		for (size_t i = 0; i < n; i++)
			want[i] = -1;
		for (int done = 0; !done;) {
			done = 1;
			for (size_t i = 0; i < n; i++) {
				int r = 0, ok = 1;
				for (size_t j = 0; j < n; j++)
					if (pareto_dominates(pts + j * m, pts + i * m, m)) {
						if (want[j] < 0)
							ok = 0;
						else if (want[j] + 1 > r)
							r = want[j] + 1;
					}
				if (want[i] < 0 && ok) {
					want[i] = r;
					done = 0;
				}
			}
		}
		for (size_t i = 0; i < n; i++)
			assert_int_equal(rank[i], want[i]);
	}
}

static void test_hypervolume2(void **state)
{
	double ref[] = {4, 4};
	/* Front (1,3) (2,2) (3,1): 3x1 + 2x1 + 1x1 = 6; a dominated point and
	 * one beyond ref change nothing. */
	double pts[] = {2, 2, 1, 3, 3, 1, 3, 3, 5, 0};
	assert_true(fabs(pareto_hypervolume2(pts, 5, ref) - 6.0) < 1e-12);
	assert_true(fabs(pareto_hypervolume2(pts, 1, ref) - 4.0) < 1e-12);
	assert_true(pareto_hypervolume2(pts + 8, 1, ref) == 0.0);
}

static void test_select_keeps_shape(void **state)
{
	/* Five points on a line; keeping 3 by hypervolume keeps the two ends
	 * (each owns a large box against ref) and one inside. */
	double pts[] = {0, 4, 1, 3, 2, 2, 3, 1, 4, 0}, ref[] = {6, 6};
	unsigned char keep[5];
	assert_int_equal(pareto_select(pts, 5, 2, 3, ref, keep), 0);
	assert_int_equal(keep[0] + keep[1] + keep[2] + keep[3] + keep[4], 3);
	assert_true(keep[0] && keep[4]);
	double p3[] = {0, 0, 9, 1, 1, 5, 2, 2, 5, 9, 0, 9}, r3[] = {10, 10, 10};
	unsigned char k3[4];
	assert_int_equal(pareto_select(p3, 4, 3, 2, r3, k3), 0);
	assert_int_equal(k3[0] + k3[1] + k3[2] + k3[3], 2);
}

/* ---- TPE with two objectives ---------------------------------------- */

static param_def unit2[] = {
	{.name = "a", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
	{.name = "b", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
	{.name = "c", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
};
static const space unit_space = {.n = 3, .params = unit2};

/* ZDT1 in 3 variables. */
static void zdt1(const config *c, double *f)
{
	double g = 1 + 9 * (c->v[1].f + c->v[2].f) / 2;
	f[0] = c->v[0].f;
	f[1] = g * (1 - sqrt(c->v[0].f / g));
}

static double run_hv(search_algo algo, int multivariate, uint64_t seed)
{
	sampler_options opt = {.n_startup = 10, .n_candidates = 24, .multivariate = multivariate,
			       .n_objectives = 2};
	sampler *s;
	assert_int_equal(sampler_new(algo, &unit_space, seed, &opt, &s, NULL), 0);
	double pts[2 * 80], ref[] = {1.1, 1.1};
	for (int i = 0; i < 80; i++) {
		config c;
		assert_int_equal(sampler_ask(s, (uint64_t)i, &c, NULL), 0);
		zdt1(&c, pts + 2 * i);
		assert_int_equal(sampler_tell_multi(s, (uint64_t)i, &c, pts + 2 * i, 2, 1.0,
						    OBS_COMPLETE, NULL), 0);
		config_fini(&c);
	}
	sampler_free(s);
	return pareto_hypervolume2(pts, 80, ref);
}

static void test_tpe_two_objectives(void **state)
{
	double tpe = 0, uni = 0, rnd = 0;
	for (uint64_t k = 0; k < 6; k++) {
		tpe += run_hv(SEARCH_TPE, 1, k) / 6;
		uni += run_hv(SEARCH_TPE, 0, k) / 6;
		rnd += run_hv(SEARCH_RANDOM, 0, k) / 6;
	}
	printf("zdt1 (3 variables), hypervolume after 80 trials over 6 seeds: tpe %.4f, "
	       "univariate %.4f, random %.4f\n", tpe, uni, rnd);
	assert_true(tpe > rnd && uni > rnd);
}

static void test_tell_multi_counts(void **state)
{
	sampler_options opt = {.n_startup = 10, .n_objectives = 2};
	sampler *t, *r, *g;
	rl_err err = {0};
	assert_int_equal(sampler_new(SEARCH_TPE, &unit_space, 1, &opt, &t, NULL), 0);
	assert_int_equal(sampler_new(SEARCH_RANDOM, &unit_space, 1, &opt, &r, NULL), 0);
	assert_int_equal(sampler_new(SEARCH_GP, &unit_space, 1, &opt, &g, NULL), 0);
	config c;
	assert_int_equal(sampler_ask(t, 0, &c, NULL), 0);
	double three[] = {1, 2, 3};
	assert_int_equal(sampler_tell_multi(t, 0, &c, three, 3, 1, OBS_COMPLETE, &err), RL_EINVAL);
	assert_non_null(strstr(err.msg, "3 losses for 2 objectives"));
	assert_int_equal(sampler_tell_multi(r, 0, &c, three, 3, 1, OBS_COMPLETE, &err), 0);
	assert_int_equal(sampler_tell_multi(g, 0, &c, three, 2, 1, OBS_COMPLETE, &err), RL_EUNSUPPORTED);
	/* A NaN among the losses is a failure, not an error. */
	double nan2[] = {0.5, NAN};
	assert_int_equal(sampler_tell_multi(t, 0, &c, nan2, 2, 1, OBS_COMPLETE, &err), 0);
	config_fini(&c);
	sampler_free(t);
	sampler_free(r);
	sampler_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dominates),
		cmocka_unit_test(test_ranks_oracle),
		cmocka_unit_test(test_hypervolume2),
		cmocka_unit_test(test_select_keeps_shape),
		cmocka_unit_test(test_tpe_two_objectives),
		cmocka_unit_test(test_tell_multi_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
