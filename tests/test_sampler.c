/*
 * test_sampler.c - the samplers behind sampler.h: reproducibility by seed
 * (random, grid, tpe, sobol), exact grid enumeration and axis values, value
 * types and bounds for every sampler, and Sobol stratification.
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

#include "search/sampler.h"

/* A space with every kind of parameter. */
static rl_value opt_choices[] = {
	{.type = VAL_STR, .str = "adam"}, {.type = VAL_INT, .i = 3}, {.type = VAL_FLOAT, .f = 0.5}};
static param_def all_params[] = {
	{.name = "u", .kind = PARAM_UNIFORM, .low = -1, .high = 2},
	{.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-3, .high = 10},
	{.name = "k", .kind = PARAM_INT, .low = 3, .high = 9},
	{.name = "hidden", .kind = PARAM_INT, .low = 16, .high = 1024, .log = 1},
	{.name = "opt", .kind = PARAM_CHOICE, .n_choices = 3, .choices = opt_choices},
	{.name = "tag", .kind = PARAM_FIXED, .fixed = {.type = VAL_STR, .str = "x"}},
};
static const space all_space = {.n = 6, .params = all_params};

static const search_algo algos[] = {SEARCH_RANDOM, SEARCH_GRID, SEARCH_TPE, SEARCH_SOBOL};

/* Deterministic loss so that TPE leaves its start-up phase. */
static double toy_loss(const config *c)
{
	return fabs(c->v[0].f - 0.3) + fabs(log10(c->v[1].f) + 1) + (double)c->v[2].i * 0.1;
}

static int configs_equal(const config *a, const config *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++)
		if (!value_equal(&a->v[i], &b->v[i]))
			return 0;
	return 1;
}

/* Runs n ask(+tell) steps of algo with seed, keeping the configs in out. */
static void run(search_algo algo, uint64_t seed, int n, config *out)
{
	sampler *s;
	assert_int_equal(sampler_new(algo, &all_space, seed, NULL, &s, NULL), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(sampler_ask(s, (uint64_t)i, &out[i], NULL), 0);
		assert_int_equal(sampler_tell(s, (uint64_t)i, &out[i], toy_loss(&out[i]), 1.0,
					      OBS_COMPLETE, NULL),
				 0);
	}
	sampler_free(s);
}

static void test_seeds_reproduce(void **state)
{
	enum { N = 30 };
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		config x[N], y[N], z[N];
		run(algos[a], 42, N, x);
		run(algos[a], 42, N, y);
		run(algos[a], 43, N, z);
		int same = 0, other = 0;
		for (int i = 0; i < N; i++) {
			same += configs_equal(&x[i], &y[i]);
			other += configs_equal(&x[i], &z[i]);
			config_fini(&x[i]);
			config_fini(&y[i]);
			config_fini(&z[i]);
		}
		printf("algo %d: %d/%d equal with the same seed, %d with another\n", (int)algos[a], same,
		       N, other);
		assert_int_equal(same, N);
		assert_true(other < N / 2);
	}
}

/* Checks the type and range of every value of c against all_space. */
static void check_config(const config *c)
{
	assert_int_equal(c->n, 6);
	assert_int_equal(c->v[0].type, VAL_FLOAT);
	assert_true(c->v[0].f >= -1 && c->v[0].f <= 2);
	assert_int_equal(c->v[1].type, VAL_FLOAT);
	assert_true(c->v[1].f >= 1e-3 && c->v[1].f <= 10);
	assert_int_equal(c->v[2].type, VAL_INT);
	assert_in_range(c->v[2].i, 3, 9);
	assert_int_equal(c->v[3].type, VAL_INT);
	assert_in_range(c->v[3].i, 16, 1024);
	int member = 0;
	for (int k = 0; k < 3; k++)
		member += value_equal(&c->v[4], &opt_choices[k]);
	assert_int_equal(member, 1);
	assert_int_equal(c->v[5].type, VAL_STR);
	assert_string_equal(c->v[5].str, "x");
}

static void test_types_and_bounds(void **state)
{
	for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
		enum { N = 120 };
		config c[N];
		/* 5 x 5 x 5 x 5 x 3 x 1 = 1875 grid points, so 120 fit. */
		run(algos[a], 9, N, c);
		for (int i = 0; i < N; i++) {
			check_config(&c[i]);
			config_fini(&c[i]);
		}
	}
}

static void test_grid_enumerates_product_once(void **state)
{
	rl_value abc[] = {{.type = VAL_STR, .str = "a"}, {.type = VAL_STR, .str = "b"},
			  {.type = VAL_STR, .str = "c"}};
	param_def ps[] = {
		{.name = "letter", .kind = PARAM_CHOICE, .n_choices = 3, .choices = abc},
		{.name = "n", .kind = PARAM_INT, .low = 1, .high = 4},
		{.name = "mode", .kind = PARAM_FIXED, .fixed = {.type = VAL_INT, .i = 7}},
	};
	space sp = {.n = 3, .params = ps};
	assert_int_equal(sampler_grid_size(&sp), 12);
	for (uint64_t seed = 0; seed < 3; seed++) {
		sampler *s;
		assert_int_equal(sampler_new(SEARCH_GRID, &sp, seed, NULL, &s, NULL), 0);
		int seen[3][4] = {{0}};
		int row_major = 1;
		for (uint64_t i = 0; i < 12; i++) {
			config c;
			assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
			int l = c.v[0].str[0] - 'a';
			assert_in_range(l, 0, 2);
			assert_int_equal(c.v[1].type, VAL_INT);
			assert_in_range(c.v[1].i, 1, 4);
			assert_int_equal(c.v[2].i, 7);
			seen[l][c.v[1].i - 1]++;
			row_major &= (uint64_t)(l + 3 * (c.v[1].i - 1)) == i;
			config_fini(&c);
		}
		for (int l = 0; l < 3; l++)
			for (int n = 0; n < 4; n++)
				assert_int_equal(seen[l][n], 1);
		assert_false(row_major); /* the seed permutes the order */
		config c;
		rl_err err = {0};
		assert_int_equal(sampler_ask(s, 12, &c, &err), RL_ENOTFOUND);
		assert_non_null(strstr(err.msg, "12-point grid"));
		sampler_free(s);
	}
}

/* Collects the distinct values grid search gives parameter p (alone in its
 * space) and compares them with want. */
static void check_axis(param_def p, const double *want, size_t n_want)
{
	space sp = {.n = 1, .params = &p};
	assert_int_equal(sampler_grid_size(&sp), n_want);
	sampler *s;
	assert_int_equal(sampler_new(SEARCH_GRID, &sp, 5, NULL, &s, NULL), 0);
	double got[64];
	for (size_t i = 0; i < n_want; i++) {
		config c;
		assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
		got[i] = value_as_double(&c.v[0]);
		config_fini(&c);
	}
	config c;
	assert_int_equal(sampler_ask(s, n_want, &c, NULL), RL_ENOTFOUND);
	sampler_free(s);
	for (size_t k = 0; k < n_want; k++) {
		int hits = 0;
		for (size_t i = 0; i < n_want; i++)
			hits += fabs(got[i] - want[k]) <= 1e-12 * fabs(want[k]) + 1e-15;
		if (hits != 1)
			fail_msg("%s: value %.17g found %d times", p.name, want[k], hits);
	}
}

static void test_grid_axes(void **state)
{
	check_axis((param_def){.name = "u", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
		   (double[]){0, 0.25, 0.5, 0.75, 1}, 5);
	check_axis((param_def){.name = "u3", .kind = PARAM_UNIFORM, .low = 0, .high = 1, .grid_points = 3},
		   (double[]){0, 0.5, 1}, 3);
	check_axis((param_def){.name = "ustep", .kind = PARAM_UNIFORM, .low = 0, .high = 0.5, .step = 0.1},
		   (double[]){0, 0.1, 0.2, 0.3, 0.4, 0.5}, 6);
	check_axis((param_def){.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-4, .high = 1},
		   (double[]){1e-4, 1e-3, 1e-2, 1e-1, 1}, 5);
	/* small int range: every integer */
	check_axis((param_def){.name = "k", .kind = PARAM_INT, .low = -1, .high = 2},
		   (double[]){-1, 0, 1, 2}, 4);
	/* large int range: 5 evenly spaced, rounded (25.75 -> 26, 50.5 -> 51, 75.25 -> 75) */
	check_axis((param_def){.name = "big", .kind = PARAM_INT, .low = 1, .high = 100},
		   (double[]){1, 26, 51, 75, 100}, 5);
	/* log ints 1, 6^.25 = 1.57, 6^.5 = 2.45, 6^.75 = 3.83, 6 round to
	 * 1, 2, 2, 4, 6: the repeated 2 appears once. */
	check_axis((param_def){.name = "logk", .kind = PARAM_INT, .low = 1, .high = 6, .log = 1},
		   (double[]){1, 2, 4, 6}, 4);
	check_axis((param_def){.name = "hid", .kind = PARAM_INT, .low = 16, .high = 256, .log = 1},
		   (double[]){16, 32, 64, 128, 256}, 5);
}

/* Unit coordinate of Sobol dimension d in [0, 1): params are uniform [0, 1]. */
static void test_sobol_stratifies(void **state)
{
	enum { D = 21, M = 8, N = 1 << M };
	param_def ps[D];
	char names[D][8];
	for (int d = 0; d < D; d++) {
		snprintf(names[d], sizeof names[d], "x%d", d);
		ps[d] = (param_def){.name = names[d], .kind = PARAM_UNIFORM, .low = 0, .high = 1};
	}
	space sp = {.n = D, .params = ps};
	for (uint64_t seed = 0; seed < 3; seed++) {
		sampler *s;
		assert_int_equal(sampler_new(SEARCH_SOBOL, &sp, seed, NULL, &s, NULL), 0);
		static int cell2[16][16], cell1[D][N];
		memset(cell2, 0, sizeof cell2);
		memset(cell1, 0, sizeof cell1);
		for (uint64_t i = 0; i < N; i++) {
			config c;
			assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
			for (int d = 0; d < D; d++) {
				assert_true(c.v[d].f >= 0 && c.v[d].f < 1);
				cell1[d][(int)(c.v[d].f * N)]++;
			}
			cell2[(int)(c.v[0].f * 16)][(int)(c.v[1].f * 16)]++;
			config_fini(&c);
		}
		/* 2^8 points: every cell of the 16 x 16 grid of the first two
		 * dimensions holds exactly one, and every one-dimensional
		 * projection puts exactly one point in each 1/256 interval. */
		for (int a = 0; a < 16; a++)
			for (int b = 0; b < 16; b++)
				assert_int_equal(cell2[a][b], 1);
		for (int d = 0; d < D; d++)
			for (int k = 0; k < N; k++)
				if (cell1[d][k] != 1)
					fail_msg("seed %d dim %d interval %d holds %d points", (int)seed, d,
						 k, cell1[d][k]);
		sampler_free(s);
	}
	/* One dimension more than the direction-number table is refused. */
	param_def more[D + 1];
	memcpy(more, ps, sizeof ps);
	more[D] = ps[0];
	space big = {.n = D + 1, .params = more};
	sampler *s = NULL;
	rl_err err = {0};
	assert_int_equal(sampler_new(SEARCH_SOBOL, &big, 0, NULL, &s, &err), RL_EUNSUPPORTED);
	assert_null(s);
}

/* ---- conditional parameters ---------------------------------------- */

static rl_value model_choices[] = {{.type = VAL_STR, .str = "mlp"}, {.type = VAL_STR, .str = "cnn"}};
static rl_value when_cnn[] = {{.type = VAL_STR, .str = "cnn"}};
static rl_value when_mlp[] = {{.type = VAL_STR, .str = "mlp"}};
static rl_value ch_choices[] = {{.type = VAL_INT, .i = 4}, {.type = VAL_INT, .i = 8}, {.type = VAL_INT, .i = 16}};
static param_def cond_params[] = {
	{.name = "model", .kind = PARAM_CHOICE, .n_choices = 2, .choices = model_choices},
	{.name = "channels", .kind = PARAM_CHOICE, .n_choices = 3, .choices = ch_choices,
	 .parent = 0, .n_when = 1, .when = when_cnn},
	{.name = "hidden", .kind = PARAM_INT, .low = 16, .high = 256, .log = 1,
	 .parent = 0, .n_when = 1, .when = when_mlp},
	{.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-4, .high = 1e-1},
};
static const space cond_space = {.n = 4, .params = cond_params};

/* cnn is best with 16 channels; mlp is best with hidden 64 and worse. */
static double cond_loss(const config *c)
{
	double lr = fabs(log10(c->v[3].f) + 2);
	if (!strcmp(c->v[0].str, "cnn"))
		return lr + (c->v[1].i == 16 ? 0 : 0.5);
	return 0.3 + lr + fabs(log2((double)c->v[2].i) - 6) / 4;
}

/* Every sampler but grid: a parameter is VAL_NONE exactly when its
 * condition is false, and a value of its own kind otherwise. */
static void test_conditional_values(void **state)
{
	(void)state;
	const search_algo with_cond[] = {SEARCH_RANDOM, SEARCH_TPE, SEARCH_SOBOL};
	for (size_t a = 0; a < 3; a++) {
		sampler *s;
		assert_int_equal(sampler_new(with_cond[a], &cond_space, 5, NULL, &s, NULL), 0);
		int seen_cnn = 0, seen_mlp = 0;
		for (uint64_t i = 0; i < 80; i++) {
			config c;
			assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
			int cnn = !strcmp(c.v[0].str, "cnn");
			seen_cnn += cnn;
			seen_mlp += !cnn;
			assert_int_equal(c.v[1].type, cnn ? VAL_INT : VAL_NONE);
			assert_int_equal(c.v[2].type, cnn ? VAL_NONE : VAL_INT);
			assert_int_equal(c.v[3].type, VAL_FLOAT);
			assert_int_equal(sampler_tell(s, i, &c, cond_loss(&c), 1.0, OBS_COMPLETE, NULL), 0);
			config_fini(&c);
		}
		assert_true(seen_cnn > 0 && seen_mlp > 0);
		sampler_free(s);
	}
	/* grid refuses them (the spec says so first). */
	sampler *g;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(sampler_new(SEARCH_GRID, &cond_space, 5, NULL, &g, &err), RL_EUNSUPPORTED);
}

/* TPE models a conditional parameter from the trials where it was active
 * only: after 60 trials it proposes cnn with 16 channels far more often
 * than chance, and an unconditional parameter left VAL_NONE is an error. */
static void test_conditional_tpe_learns(void **state)
{
	(void)state;
	sampler *s;
	assert_int_equal(sampler_new(SEARCH_TPE, &cond_space, 8, NULL, &s, NULL), 0);
	for (uint64_t i = 0; i < 60; i++) {
		config c;
		assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
		assert_int_equal(sampler_tell(s, i, &c, cond_loss(&c), 1.0, OBS_COMPLETE, NULL), 0);
		config_fini(&c);
	}
	int cnn16 = 0;
	for (uint64_t i = 100; i < 200; i++) {
		config c;
		assert_int_equal(sampler_ask(s, i, &c, NULL), 0);
		cnn16 += !strcmp(c.v[0].str, "cnn") && c.v[1].i == 16;
		config_fini(&c);
	}
	print_message("tpe: cnn with 16 channels in %d of 100 proposals (chance: 17)\n", cnn16);
	assert_true(cnn16 > 50);
	config c;
	assert_int_equal(config_init(&c, 4, NULL), 0);
	c.v[0] = (rl_value){.type = VAL_STR, .str = strdup("cnn")};
	c.v[1] = (rl_value){.type = VAL_INT, .i = 8};
	c.v[2] = (rl_value){.type = VAL_INT, .i = 32};
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(sampler_tell(s, 300, &c, 1.0, 1.0, OBS_COMPLETE, &err), RL_EINVAL);
	assert_non_null(strstr(err.msg, "lr"));
	config_fini(&c);
	sampler_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seeds_reproduce),
		cmocka_unit_test(test_types_and_bounds),
		cmocka_unit_test(test_grid_enumerates_product_once),
		cmocka_unit_test(test_grid_axes),
		cmocka_unit_test(test_sobol_stratifies),
		cmocka_unit_test(test_conditional_values),
		cmocka_unit_test(test_conditional_tpe_learns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
