/*
 * test_gp.c - the GP sampler (src/search/gp.c) and its model
 * (gp_model.c): the marginal likelihood's and the posterior's gradients
 * against finite differences, log expected improvement in the far tail,
 * start-up equal to random search, determinism (seed, tell order),
 * pending trials pushing proposals apart, valid values on a mixed space,
 * conditional spaces refused, and search quality against random search.
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

#include "search/gp_model.h"
#include "search/rng.h"
#include "search/sampler.h"
#include "search_problems.h"

/* ---- the model ------------------------------------------------------- */

/* A model on 12 points over 2 continuous inputs and one 3-way choice. */
static void small_model(gp_model *m)
{
	assert_int_equal(gp_model_init(m, 2, 1), 0);
	double x[12 * 3], y[12];
	rl_rng rng;
	rng_seed(&rng, 5);
	for (int i = 0; i < 12; i++) {
		x[i * 3] = rng_uniform(&rng);
		x[i * 3 + 1] = rng_uniform(&rng);
		x[i * 3 + 2] = (double)(i % 3);
		y[i] = sin(6 * x[i * 3]) + x[i * 3 + 1] * x[i * 3 + 1] + 0.3 * (i % 3) - 0.5;
	}
	assert_int_equal(gp_model_set(m, 12, x, y), 0);
	double theta[] = {1.0, 0.3, -0.5, 0.2, -4.0};
	memcpy(m->theta, theta, sizeof theta);
}

static void test_nll_gradient(void **state)
{
	gp_model m;
	small_model(&m);
	double theta[5], g[5];
	memcpy(theta, m.theta, sizeof theta);
	double f0 = gp_model_nll(&m, theta, g);
	assert_true(isfinite(f0));
	for (int j = 0; j < 5; j++) {
		double h = 1e-6, tp[5], tm[5];
		memcpy(tp, theta, sizeof tp);
		memcpy(tm, theta, sizeof tm);
		tp[j] += h;
		tm[j] -= h;
		double fd = (gp_model_nll(&m, tp, NULL) - gp_model_nll(&m, tm, NULL)) / (2 * h);
		printf("d nll / d theta_%d: analytic %.8f, finite difference %.8f\n", j, g[j], fd);
		assert_true(fabs(fd - g[j]) <= 1e-5 * (1 + fabs(fd)));
	}
	gp_model_fini(&m);
}

static void test_fit_lowers_nll(void **state)
{
	gp_model m;
	small_model(&m);
	double before = gp_model_nll(&m, m.theta, NULL);
	assert_int_equal(gp_model_fit(&m, 100), 0);
	double after = gp_model_nll(&m, m.theta, NULL);
	printf("nll %.4f -> %.4f\n", before, after);
	assert_true(after < before);
	gp_model_fini(&m);
}

static void test_predict_gradient(void **state)
{
	gp_model m;
	small_model(&m);
	assert_int_equal(gp_model_condition(&m), 0);
	double x[3] = {0.31, 0.77, 1}, mu, var, dmu[2], dvar[2];
	gp_model_predict(&m, x, &mu, &var, dmu, dvar);
	for (int c = 0; c < 2; c++) {
		double h = 1e-6, xp[3], xm[3], mp, vp, mm, vm;
		memcpy(xp, x, sizeof xp);
		memcpy(xm, x, sizeof xm);
		xp[c] += h;
		xm[c] -= h;
		gp_model_predict(&m, xp, &mp, &vp, NULL, NULL);
		gp_model_predict(&m, xm, &mm, &vm, NULL, NULL);
		printf("input %d: dmu %.8f (fd %.8f), dvar %.8f (fd %.8f)\n", c, dmu[c],
		       (mp - mm) / (2 * h), dvar[c], (vp - vm) / (2 * h));
		assert_true(fabs((mp - mm) / (2 * h) - dmu[c]) <= 1e-5 * (1 + fabs(dmu[c])));
		assert_true(fabs((vp - vm) / (2 * h) - dvar[c]) <= 1e-5 * (1 + fabs(dvar[c])));
	}
	/* At a training point with little noise the variance nearly vanishes. */
	m.theta[4] = -12;
	assert_int_equal(gp_model_condition(&m), 0);
	gp_model_predict(&m, m.x, &mu, &var, NULL, NULL);
	assert_true(var < 1e-2);
	assert_true(fabs(mu - m.y[0]) < 0.05);
	gp_model_fini(&m);
}

/* log h(z) against a direct long double evaluation where that is exact
 * enough, and continuous where the method changes (z = -6 and -40). */
static void test_log_ei_tail(void **state)
{
	double lc;
	for (double z = -5.5; z <= 5; z += 0.5) {
		long double cdf = 0.5L * erfcl(-(long double)z / sqrtl(2.0L));
		long double pdf = expl(-0.5L * z * z) / sqrtl(2.0L * 3.14159265358979323846L);
		double want = (double)logl(z * cdf + pdf);
		double got = gp_log_h(z, &lc);
		assert_true(fabs(got - want) < 1e-9 * (1 + fabs(want)));
		assert_true(fabs(lc - (double)logl(cdf)) < 1e-9 * (1 + fabs(lc)));
	}
	const double edges[] = {-6, -40};
	for (int i = 0; i < 2; i++) {
		double a = gp_log_h(edges[i] + 1e-9, &lc), b = gp_log_h(edges[i] - 1e-9, &lc);
		printf("log h at %g: %.12f / %.12f\n", edges[i], a, b);
		assert_true(fabs(a - b) < 1e-6 * fabs(a));
	}
	/* Far below: finite, decreasing, about -z^2/2 - 2 log|z|. */
	double prev = gp_log_h(-50, &lc);
	for (double z = -100; z >= -1e4; z *= 10) {
		double v = gp_log_h(z, &lc);
		assert_true(isfinite(v) && isfinite(lc) && v < prev);
		assert_true(fabs(v - (-0.5 * z * z - GP_LOG_SQRT_2PI - 2 * log(-z))) < 1e-3);
		prev = v;
	}
}

/* ---- the sampler ----------------------------------------------------- */

static sampler *gp_new(const space *sp, uint64_t seed)
{
	sampler *s;
	rl_err err = {0};
	sampler_options opt = {.n_startup = 10};
	assert_int_equal(sampler_new(SEARCH_GP, sp, seed, &opt, &s, &err), 0);
	return s;
}

/* Best value after n trials of one seed, one at a time. */
static double best_after(search_algo algo, const space *sp, double (*f)(const config *),
			 uint64_t seed, int n)
{
	sampler *s;
	sampler_options opt = {.n_startup = 10};
	assert_int_equal(sampler_new(algo, sp, seed, &opt, &s, NULL), 0);
	double best = INFINITY;
	for (int i = 0; i < n; i++) {
		config c;
		rl_err err = {0};
		assert_int_equal(sampler_ask(s, (uint64_t)i, &c, &err), 0);
		double y = f(&c);
		best = y < best ? y : best;
		assert_int_equal(sampler_tell(s, (uint64_t)i, &c, y, 1.0, OBS_COMPLETE, &err), 0);
		config_fini(&c);
	}
	sampler_free(s);
	return best;
}

static void test_startup_is_random(void **state)
{
	sampler *g = gp_new(&branin_space, 3), *r;
	assert_int_equal(sampler_new(SEARCH_RANDOM, &branin_space, 3, NULL, &r, NULL), 0);
	for (uint64_t i = 0; i < 10; i++) {
		config a, b;
		assert_int_equal(sampler_ask(g, i, &a, NULL), 0);
		assert_int_equal(sampler_ask(r, i, &b, NULL), 0);
		assert_true(value_equal(&a.v[0], &b.v[0]) && value_equal(&a.v[1], &b.v[1]));
		assert_int_equal(sampler_tell(g, i, &a, branin(&a), 1.0, OBS_COMPLETE, NULL), 0);
		config_fini(&a);
		config_fini(&b);
	}
	sampler_free(g);
	sampler_free(r);
}

/* The same observations told in two orders give the same proposal. */
static void test_tell_order(void **state)
{
	sampler *a = gp_new(&branin_space, 7), *b = gp_new(&branin_space, 7);
	config cs[15];
	rl_rng rng;
	rng_seed(&rng, 11);
	for (int i = 0; i < 15; i++) {
		assert_int_equal(config_init(&cs[i], 2, NULL), 0);
		cs[i].v[0] = (rl_value){.type = VAL_FLOAT, .f = -5 + 15 * rng_uniform(&rng)};
		cs[i].v[1] = (rl_value){.type = VAL_FLOAT, .f = 15 * rng_uniform(&rng)};
	}
	for (int i = 0; i < 15; i++)
		assert_int_equal(sampler_tell(a, (uint64_t)i, &cs[i], branin(&cs[i]), 1, OBS_COMPLETE, NULL), 0);
	for (int i = 14; i >= 0; i--)
		assert_int_equal(sampler_tell(b, (uint64_t)i, &cs[i], branin(&cs[i]), 1, OBS_COMPLETE, NULL), 0);
	config pa, pb;
	assert_int_equal(sampler_ask(a, 15, &pa, NULL), 0);
	assert_int_equal(sampler_ask(b, 15, &pb, NULL), 0);
	printf("proposal: (%.6f, %.6f) and (%.6f, %.6f)\n", pa.v[0].f, pa.v[1].f, pb.v[0].f, pb.v[1].f);
	assert_true(value_equal(&pa.v[0], &pb.v[0]) && value_equal(&pa.v[1], &pb.v[1]));
	config_fini(&pa);
	config_fini(&pb);
	for (int i = 0; i < 15; i++)
		config_fini(&cs[i]);
	sampler_free(a);
	sampler_free(b);
}

/* Trials proposed while others are pending go elsewhere: without the
 * believed points every ask would climb to the same maximum. */
static void test_pending_spread(void **state)
{
	sampler *s = gp_new(&branin_space, 2);
	for (uint64_t i = 0; i < 20; i++) {
		config c;
		assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
		assert_int_equal(sampler_tell(s, i, &c, branin(&c), 1.0, OBS_COMPLETE, NULL), 0);
		config_fini(&c);
	}
	config p[4];
	for (int k = 0; k < 4; k++) {
		assert_int_equal(sampler_ask(s, 20 + (uint64_t)k, &p[k], NULL), 0);
		assert_int_equal(sampler_tell(s, 20 + (uint64_t)k, &p[k], NAN, 0, OBS_PENDING, NULL), 0);
	}
	double closest = INFINITY;
	for (int a = 0; a < 4; a++)
		for (int b = a + 1; b < 4; b++) {
			double dx = (p[a].v[0].f - p[b].v[0].f) / 15, dy = (p[a].v[1].f - p[b].v[1].f) / 15;
			closest = fmin(closest, sqrt(dx * dx + dy * dy));
		}
	printf("closest pair of 4 proposals made while the others were pending: %.4f of the cube\n",
	       closest);
	assert_true(closest > 0.01);
	/* The first result replaces the pending mark. */
	assert_int_equal(sampler_tell(s, 20, &p[0], branin(&p[0]), 1.0, OBS_COMPLETE, NULL), 0);
	for (int k = 0; k < 4; k++)
		config_fini(&p[k]);
	sampler_free(s);
}

/* Log ints, a choice, a log-uniform float: every value valid, and better
 * than random search on average. */
static void test_mixed_space(void **state)
{
	double gp = 0, rnd = 0;
	const int seeds = 4, trials = 50;
	for (int k = 0; k < seeds; k++) {
		sampler *s = gp_new(&mixed_space, (uint64_t)k);
		double best = INFINITY;
		for (int i = 0; i < trials; i++) {
			config c;
			assert_int_equal(sampler_ask(s, (uint64_t)i, &c, NULL), 0);
			assert_int_equal(c.v[1].type, VAL_INT);
			assert_true(c.v[1].i >= mixed_params[1].low && c.v[1].i <= mixed_params[1].high);
			assert_true(mixed_batch_index(&c) < 5);
			assert_true(c.v[0].f >= mixed_params[0].low && c.v[0].f <= mixed_params[0].high);
			double y = mixed(&c);
			best = fmin(best, y);
			assert_int_equal(sampler_tell(s, (uint64_t)i, &c, y, 1.0, OBS_COMPLETE, NULL), 0);
			config_fini(&c);
		}
		sampler_free(s);
		gp += best; /* the optimum is 0 */
		rnd += best_after(SEARCH_RANDOM, &mixed_space, mixed, (uint64_t)k, trials);
	}
	printf("mixed: mean regret after %d trials over %d seeds: gp %.5f random %.5f\n", trials,
	       seeds, gp / seeds, rnd / seeds);
	assert_true(gp < rnd);
}

static void test_branin_quality(void **state)
{
	double gp = 0, rnd = 0;
	const int seeds = 4, trials = 40;
	for (int k = 0; k < seeds; k++) {
		gp += best_after(SEARCH_GP, &branin_space, branin, (uint64_t)k, trials) - BRANIN_MIN;
		rnd += best_after(SEARCH_RANDOM, &branin_space, branin, (uint64_t)k, trials) - BRANIN_MIN;
	}
	gp /= seeds;
	rnd /= seeds;
	printf("branin: mean regret after %d trials over %d seeds: gp %.6f random %.6f\n", trials,
	       seeds, gp, rnd);
	/* Random search gets about 1 here; the GP converges. */
	assert_true(gp < 0.01 && gp < rnd / 20);
}

/* A region that crashes (search_problems.h's crash_space, as in
 * test_tpe.c): choice c is best but fails beyond x = 0.4.  Failed trials enter the
 * model at the worst value, so the GP stops proposing there; forgetting
 * them (before issue 30) it failed 114 times in these 120 trials. */
static void test_failed_region_avoided(void **state)
{
	int failures = 0;
	for (uint64_t seed = 0; seed < 3; seed++)
		failures += crash_run(gp_new(&crash_space, seed), 50, 10);
	printf("crashing region: %d of 120 trials failed\n", failures);
	assert_true(failures < 40);
}

static void test_conditional_refused(void **state)
{
	rl_value when = {.type = VAL_STR, .str = "cnn"};
	rl_value models[] = {{.type = VAL_STR, .str = "mlp"}, {.type = VAL_STR, .str = "cnn"}};
	param_def params[] = {
		{.name = "model", .kind = PARAM_CHOICE, .n_choices = 2, .choices = models},
		{.name = "ch", .kind = PARAM_INT, .low = 1, .high = 8, .parent = 0, .n_when = 1,
		 .when = &when},
	};
	space sp = {.n = 2, .params = params};
	sampler *s = NULL;
	rl_err err = {0};
	assert_int_equal(sampler_new(SEARCH_GP, &sp, 0, NULL, &s, &err), RL_EUNSUPPORTED);
	assert_non_null(strstr(err.msg, "conditional"));
	assert_null(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nll_gradient),
		cmocka_unit_test(test_fit_lowers_nll),
		cmocka_unit_test(test_predict_gradient),
		cmocka_unit_test(test_log_ei_tail),
		cmocka_unit_test(test_startup_is_random),
		cmocka_unit_test(test_tell_order),
		cmocka_unit_test(test_pending_spread),
		cmocka_unit_test(test_mixed_space),
		cmocka_unit_test(test_branin_quality),
		cmocka_unit_test(test_failed_region_avoided),
		cmocka_unit_test(test_conditional_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
