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

/* pareto_front against a brute-force check, with ineligible rows and NaN. */
static void test_front_oracle(void **state)
{
	(void)state;
	rl_rng rng;
	rng_seed(&rng, 5);
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + (size_t)(rng_uniform(&rng) * 30), m = 2 + (size_t)round % 2;
		double pts[30 * 3];
		unsigned char ok[30], on[30];
		for (size_t i = 0; i < n; i++) {
			for (size_t q = 0; q < m; q++)
				pts[i * m + q] = floor(rng_uniform(&rng) * 6); /* ties happen */
			ok[i] = rng_uniform(&rng) < 0.7;
			if (rng_uniform(&rng) < 0.05)
				pts[i * m] = NAN;
		}
		size_t count = pareto_front(pts, n, m, ok, on), want_count = 0;
		for (size_t i = 0; i < n; i++) {
			int want = ok[i] && !isnan(pts[i * m]);
			for (size_t j = 0; j < n && want; j++)
				if (j != i && ok[j] && !isnan(pts[j * m]) &&
				    pareto_dominates(pts + j * m, pts + i * m, m))
					want = 0;
			assert_int_equal(on[i], want);
			want_count += (size_t)want;
		}
		assert_int_equal(count, want_count);
	}
}

/*
 * Constraints: the best losses lie where x + y > 0.6 (infeasible).  Told the
 * violation (sampler_tell_constrained), TPE keeps its proposals in the
 * feasible region; told the losses alone it follows them out of it.  Over
 * 5 seeds, trials 20-79, one objective and two; and GP (no
 * tell_constrained: infeasible counts as failed) steers away too.
 */
static double cons_violation(const config *c)
{
	double v = c->v[0].f + c->v[1].f - 0.6;
	return v > 0 ? v : 0;
}

static int feasible_share(search_algo algo, size_t n_obj, int constrained, int n_trials, int from)
{
	int feasible = 0;
	for (uint64_t seed = 0; seed < 5; seed++) {
		sampler_options opt = {.n_startup = 10, .n_candidates = 24, .pending = PENDING_WORST,
				       .multivariate = 1, .n_objectives = (int)n_obj};
		sampler *s;
		assert_int_equal(sampler_new(algo, &unit_space, seed, &opt, &s, NULL), 0);
		for (int i = 0; i < n_trials; i++) {
			config c;
			assert_int_equal(sampler_ask(s, (uint64_t)i, &c, NULL), 0);
			double x = c.v[0].f, y = c.v[1].f;
			double f[2] = {(x - 0.7) * (x - 0.7) + (y - 0.7) * (y - 0.7),
				       (x - 0.9) * (x - 0.9) + (y - 0.4) * (y - 0.4)};
			double v = cons_violation(&c);
			feasible += i >= from && v == 0;
			rl_err err = {0};
			int rc = constrained ? sampler_tell_constrained(s, (uint64_t)i, &c, f, n_obj, v, 1.0,
									OBS_COMPLETE, &err)
					     : sampler_tell_multi(s, (uint64_t)i, &c, f, n_obj, 1.0,
								  OBS_COMPLETE, &err);
			if (rc < 0)
				fail_msg("tell: %s", err.msg);
			config_fini(&c);
		}
		sampler_free(s);
	}
	return feasible;
}

static void test_constraints_steer(void **state)
{
	(void)state;
	int t1c = feasible_share(SEARCH_TPE, 1, 1, 80, 20), t1u = feasible_share(SEARCH_TPE, 1, 0, 80, 20);
	int t2c = feasible_share(SEARCH_TPE, 2, 1, 80, 20), t2u = feasible_share(SEARCH_TPE, 2, 0, 80, 20);
	int gc = feasible_share(SEARCH_GP, 1, 1, 30, 15), gu = feasible_share(SEARCH_GP, 1, 0, 30, 15);
	print_message("feasible proposals: tpe %d vs %d (one objective), %d vs %d (two) of 300; "
		      "gp %d vs %d of 75\n", t1c, t1u, t2c, t2u, gc, gu);
	assert_true(t1c > 2 * t1u && t1c > 150);
	assert_true(t2c > 2 * t2u && t2c > 150);
	assert_true(gc > gu + 10);
}

/* While every trial is infeasible, the ones closest to feasibility form
 * TPE's below set: proposals move towards the feasible region (ranking by
 * violation; counted as failures, the below set would be empty). */
static void test_constraints_rank_by_violation(void **state)
{
	(void)state;
	sampler_options opt = {.n_startup = 10, .n_candidates = 24, .pending = PENDING_WORST,
			       .multivariate = 1, .n_objectives = 1};
	sampler *s;
	assert_int_equal(sampler_new(SEARCH_TPE, &unit_space, 3, &opt, &s, NULL), 0);
	/* Feasible only where x + y <= 0.05; every told trial is infeasible. */
	double sum_first = 0, sum_last = 0;
	for (int i = 0; i < 60; i++) {
		config c;
		assert_int_equal(sampler_ask(s, (uint64_t)i, &c, NULL), 0);
		double x = c.v[0].f, y = c.v[1].f, v = fmax(0, x + y - 0.05) + 1e-3;
		double f = -x - y; /* the objective pulls the other way */
		if (i < 10)
			sum_first += x + y;
		if (i >= 50)
			sum_last += x + y;
		assert_int_equal(sampler_tell_constrained(s, (uint64_t)i, &c, &f, 1, v, 1.0, OBS_COMPLETE,
							  NULL), 0);
		config_fini(&c);
	}
	print_message("x + y: %.3f (start-up) to %.3f (last 10)\n", sum_first / 10, sum_last / 10);
	assert_true(sum_last / 10 < 0.5 * sum_first / 10);
	rl_err err = {0};
	config c;
	assert_int_equal(sampler_ask(s, 60, &c, NULL), 0);
	double f = 0;
	assert_int_equal(sampler_tell_constrained(s, 60, &c, &f, 1, NAN, 1.0, OBS_COMPLETE, &err),
			 RL_EINVAL);
	config_fini(&c);
	sampler_free(s);
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
		cmocka_unit_test(test_front_oracle),
		cmocka_unit_test(test_constraints_steer),
		cmocka_unit_test(test_constraints_rank_by_violation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
