/*
 * test_rng.c - the seed/trial mixer (rng_stream_seed): full avalanche, no
 * shared streams across seeds, and random-search configurations of two
 * seeds that coincide no more often than chance allows.  The old mixer
 * (rng_mix, which samplers used until then) passes the avalanche test but
 * fails the other three: seed s+1's trial k drew what seed s's trial k+63
 * drew, so 36 of 100 Branin configurations repeated between neighbouring
 * seeds.
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

#include "search/rng.h"
#include "search/sampler.h"

/* Strict avalanche: flipping any one of the 128 input bits (seed, index)
 * flips each of the 64 output bits with probability 1/2.  With 4,000
 * random inputs each estimate has a standard deviation of 0.0079; 8,192
 * estimates stay within 5 of them (0.04) unless the mixer is biased. */
static void test_avalanche(void **state)
{
	(void)state;
	enum { N = 4000 };
	static unsigned flips[128][64];
	memset(flips, 0, sizeof flips);
	rl_rng r;
	rng_seed(&r, 12345);
	for (int t = 0; t < N; t++) {
		/* Half the inputs small (seeds and indices as users write
		 * them), half arbitrary. */
		uint64_t s = t % 2 ? rng_next(&r) : rng_below(&r, 1000);
		uint64_t k = t % 2 ? rng_next(&r) : rng_below(&r, 100000);
		uint64_t base = rng_stream_seed(s, k);
		for (int b = 0; b < 128; b++) {
			uint64_t d = b < 64 ? rng_stream_seed(s ^ (1ULL << b), k)
					    : rng_stream_seed(s, k ^ (1ULL << (b - 64)));
			d ^= base;
			for (int o = 0; o < 64; o++)
				flips[b][o] += (unsigned)((d >> o) & 1);
		}
	}
	double worst = 0;
	int wb = 0, wo = 0;
	for (int b = 0; b < 128; b++)
		for (int o = 0; o < 64; o++) {
			double dev = fabs((double)flips[b][o] / N - 0.5);
			if (dev > worst) {
				worst = dev;
				wb = b;
				wo = o;
			}
		}
	printf("avalanche: largest deviation from 1/2 is %.4f (input bit %d, output bit %d)\n", worst,
	       wb, wo);
	assert_true(worst < 0.04);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Seeds 0..199 (neighbours, the case users hit) times trials 0..999: 200,000
 * stream seeds, all distinct (a collision among them has probability about
 * 1e-9).  The old mixer had (s + 1, k) == (s, k + 63) for most k. */
static void test_streams_distinct_across_seeds(void **state)
{
	(void)state;
	enum { SEEDS = 200, TRIALS = 1000 };
	uint64_t *all = malloc(SEEDS * TRIALS * sizeof *all);
	assert_non_null(all);
	for (uint64_t s = 0; s < SEEDS; s++)
		for (uint64_t k = 0; k < TRIALS; k++)
			all[s * TRIALS + k] = rng_stream_seed(s, k);
	qsort(all, SEEDS * TRIALS, sizeof *all, cmp_u64);
	size_t same = 0;
	for (size_t i = 1; i < SEEDS * TRIALS; i++)
		same += all[i] == all[i - 1];
	free(all);
	assert_int_equal(same, 0);
}

/* First n configurations of the random sampler with seed. */
static config *random_configs(const space *sp, uint64_t seed, int n)
{
	sampler *s;
	assert_int_equal(sampler_new(SEARCH_RANDOM, sp, seed, NULL, &s, NULL), 0);
	config *c = calloc((size_t)n, sizeof *c);
	assert_non_null(c);
	for (int i = 0; i < n; i++)
		assert_int_equal(sampler_ask(s, (uint64_t)i, &c[i], NULL), 0);
	sampler_free(s);
	return c;
}

static void free_configs(config *c, int n)
{
	for (int i = 0; i < n; i++)
		config_fini(&c[i]);
	free(c);
}

static int configs_equal(const config *a, const config *b)
{
	for (size_t i = 0; i < a->n; i++)
		if (!value_equal(&a->v[i], &b->v[i]))
			return 0;
	return 1;
}

/* Pairs (i, j), i and j < n, where seed a's trial i equals seed b's trial j. */
static long shared_pairs(const space *sp, uint64_t a, uint64_t b, int n)
{
	config *ca = random_configs(sp, a, n), *cb = random_configs(sp, b, n);
	long same = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			same += configs_equal(&ca[i], &cb[j]);
	free_configs(ca, n);
	free_configs(cb, n);
	return same;
}

static param_def grid_params[] = {
	{.name = "i", .kind = PARAM_INT, .low = 0, .high = 31},
	{.name = "j", .kind = PARAM_INT, .low = 0, .high = 31},
};
static const space grid_space = {.n = 2, .params = grid_params};

/*
 * Two seeds, 1,000 random configurations each, on a space of 32 x 32 = 1,024
 * points: under independence the number of equal pairs (i, j) has mean
 * 1e6 / 1024 = 977 and a standard deviation of about 55 (a sum over points
 * of products of two multinomial counts).  Every pair of seeds must stay
 * below mean + 6 sd = 1,300: neighbouring seeds, seeds one bit apart, and
 * seeds far apart.  The old mixer gave about 1,900 for neighbours (937
 * pairs drawn from the same stream on top of chance).
 */
static void test_random_configs_share_chance_only(void **state)
{
	(void)state;
	const uint64_t pairs[][2] = {{0, 1}, {1, 2}, {41, 42}, {7, 8}, {0, 2}, {0, 64},
				     {5, 5 ^ (1ULL << 40)}, {3, 1000003}};
	double expect = 1e6 / 1024.0;
	for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
		long same = shared_pairs(&grid_space, pairs[p][0], pairs[p][1], 1000);
		printf("seeds %llu and %llu: %ld equal pairs of 10^6 (chance: %.0f +- 55)\n",
		       (unsigned long long)pairs[p][0], (unsigned long long)pairs[p][1], same, expect);
		assert_true(same < 1300);
		assert_true(same > 650); /* and not fewer than chance either */
	}
}

static param_def branin_params[] = {
	{.name = "x1", .kind = PARAM_UNIFORM, .low = -5, .high = 10},
	{.name = "x2", .kind = PARAM_UNIFORM, .low = 0, .high = 15},
};
static const space branin_space = {.n = 2, .params = branin_params};

/* On a continuous space chance allows no equal configuration at all
 * (53-bit coordinates): none between seeds 0..9 and their neighbours. */
static void test_continuous_configs_never_repeat(void **state)
{
	(void)state;
	for (uint64_t s = 0; s < 10; s++)
		assert_int_equal(shared_pairs(&branin_space, s, s + 1, 1000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_avalanche),
		cmocka_unit_test(test_streams_distinct_across_seeds),
		cmocka_unit_test(test_random_configs_share_chance_only),
		cmocka_unit_test(test_continuous_configs_never_repeat),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
