/*
 * test_colocate.c - the co-location model: the utilisation prior, seeded
 * pairs, the additive interference of larger sets, learning a pair from
 * segments that really shared a device, and admission by min_speedup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "sched/sched.h"
#include "sched_fixture.h"
#include "search/rng.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static sched *mk(int n_gpu)
{
	return fixture_sched(SHARE_RELISH, NULL, n_gpu, 40000);
}

static sched_request rq(uint64_t id, uint64_t shape, double t)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.shape = shape;
	r.family = shape;
	r.needs_gpu = 1;
	r.submit_time = t;
	return r;
}

/* Prior: speeds min(1, 100 / sum of utilisations). */
static void test_prior(void **state)
{
	(void)state;
	sched *s = mk(1);
	uint64_t sh[3] = { 1, 2, 3 };
	double sp[3];
	double u2[2] = { 30, 40 };
	NEAR(sched_colocate_predict(s, sh, u2, 2, sp), 2.0);
	NEAR(sp[0], 1.0);
	double u60[2] = { 60, 60 };
	NEAR(sched_colocate_predict(s, sh, u60, 2, sp), 2 * 100.0 / 120);
	NEAR(sp[1], 100.0 / 120);
	double u40[3] = { 40, 40, 40 };
	NEAR(sched_colocate_predict(s, sh, u40, 3, sp), 3 * 100.0 / 120);
	/* a segment keeps at most the whole device busy: 150 % counts as 100 */
	double u150[2] = { 150, 50 };
	NEAR(sched_colocate_predict(s, sh, u150, 2, sp), 2 * 100.0 / 150);
	/* without utilisations: unknown shapes count as 100 % busy */
	NEAR(sched_colocate_predict(s, sh, NULL, 2, sp), 1.0);
	NEAR(sp[0], 0.5);
	assert_int_equal(sched_colocate_pair(s, 1, 2, NULL, NULL), RL_ENOTFOUND);
	sched_free(s);
}

/* Seeds: 1 beside 2 at 0.8, 2 beside 1 at 0.6 (d12 = 0.25, d21 = 2/3).
 * In {1, 2, 3}, all at 50 %: the set-wide prior P = 150/100 - 1 = 0.5, and
 * the observed pair replaces its own prior p12 = max(0, 100/100 - 1) = 0,
 * so speeds 1/(1 + 0.5 + 0.25), 1/(1 + 0.5 + 2/3) and 1/(1 + 0.5): below
 * the unobserved prior's 2/3 each for 1 and 2, which were seen to slow each
 * other down. */
static void test_seeded_pairs_and_sets(void **state)
{
	(void)state;
	sched *s = mk(1);
	sched_colocate_seed(s, 1, 2, 0.8, 0.6);
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, 1, 2, &v, &n), 0);
	NEAR(v, 0.8);
	assert_int_equal(n, 1);
	assert_int_equal(sched_colocate_pair(s, 2, 1, &v, &n), 0);
	NEAR(v, 0.6);
	uint64_t sh[3] = { 1, 2, 3 };
	double u[3] = { 50, 50, 50 }, sp[3];
	NEAR(sched_colocate_predict(s, sh, u, 2, sp), 1.4);
	NEAR(sp[0], 0.8);
	NEAR(sp[1], 0.6);
	NEAR(sched_colocate_predict(s, sh, u, 3, sp), 1 / 1.75 + 1 / (1.5 + 2.0 / 3) + 1 / 1.5);
	NEAR(sp[0], 1 / 1.75);
	NEAR(sp[1], 1 / (1.5 + 2.0 / 3));
	NEAR(sp[2], 1 / 1.5);
	/* with 3 at 80 %: P = 0.8, p12 still 0:
	 * speed1 = 1/(1 + 0.8 + 0.25), speed2 = 1/(1 + 0.8 + 2/3),
	 * speed3 = 1/(1 + 0.8) */
	u[2] = 80;
	sched_colocate_predict(s, sh, u, 3, sp);
	NEAR(sp[0], 1 / 2.05);
	NEAR(sp[1], 1 / (1.8 + 2.0 / 3));
	NEAR(sp[2], 1 / 1.8);
	sched_free(s);
}

/* The model's properties (colocate.c), on random sets with random observed
 * pairs and utilisations in [0, 100]:
 *  - every speed is in (0, 1];
 *  - a segment joining a set slows every member or leaves it be, so the
 *    set gains at most the newcomer's speed, at most 1 (place.c takes an
 *    idle device without comparing shared ones because of this);
 *  - observing a pair at exactly its prior changes no speed.
 * The first model (pairwise priors as soon as one pair was observed)
 * failed the last two. */
static void test_model_properties(void **state)
{
	(void)state;
	rl_rng r;
	rng_seed(&r, 11);
	for (int t = 0; t < 500; t++) {
		sched *s = mk(1);
		for (uint64_t a = 1; a <= 6; a++)
			for (uint64_t b = 1; b <= 6; b++)
				if (a != b && rng_below(&r, 3) == 0)
					sched_colocate_seed(s, a, b, 0.2 + 0.8 * rng_uniform(&r), 0);
		uint64_t sh[7];
		double u[7], before[7], after[7];
		size_t n = 1 + rng_below(&r, 5);
		for (size_t i = 0; i <= n; i++) {
			sh[i] = 1 + rng_below(&r, 6);
			u[i] = 100 * rng_uniform(&r);
		}
		double t0 = sched_colocate_predict(s, sh, u, n, before);
		double t1 = sched_colocate_predict(s, sh, u, n + 1, after);
		for (size_t i = 0; i <= n; i++) {
			assert_true(after[i] > 0 && after[i] <= 1 + 1e-12);
			if (i < n)
				assert_true(after[i] <= before[i] + 1e-12);
		}
		assert_true(t1 - t0 <= after[n] + 1e-12);
		/* a new pair (shapes 7 and 8, in no pair yet) seen at its prior */
		sh[0] = 7;
		sh[1] = n > 1 ? 8 : sh[1];
		sched_colocate_predict(s, sh, u, n + 1, before);
		double p01 = (u[0] + u[1]) / 100 - 1;
		sched_colocate_seed(s, sh[0], sh[1], 1 / (1 + (p01 > 0 ? p01 : 0)), 0);
		sched_colocate_predict(s, sh, u, n + 1, after);
		for (size_t i = 0; i <= n; i++)
			NEAR(after[i], before[i]);
		sched_free(s);
	}
}

static void finish(sched *s, uint64_t id, double now, double work, double dur)
{
	sched_observation o = { SEG_OUT_COMPLETED, 2000, 40, work, dur , 0};
	rl_err e;
	assert_int_equal(sched_finished(s, id, now, &o, &e), 0);
}

/* Learning: A and B measured alone at 0.1 work/s, 40 % busy.  They share
 * the only GPU from t = 0; A finishes at t = 100 having done 5 units:
 * speed 0.5 over a full overlap, so d_AB = 1, speed 0.5.  Then A2 runs
 * beside B2 for half of its life at speed 0.8: d = (1/0.8 - 1) / 0.5 =
 * 0.5, averaged in with weight 0.3: d = 1 + 0.3 (0.5 - 1) = 0.85. */
static void test_learning_from_sharing(void **state)
{
	(void)state;
	sched *s = mk(1);
	enum { A = 10, B = 20 };
	sched_request ra = rq(1, A, 0), rb = rq(2, B, 0);
	sched_observation alone = { SEG_OUT_COMPLETED, 2000, 40, 10, 100 , 0};
	sched_learn(s, &ra, &alone);
	sched_learn(s, &rb, &alone);
	rl_err e;
	assert_int_equal(sched_submit(s, &ra, &e), 0);
	assert_int_equal(sched_submit(s, &rb, &e), 0);
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 0, pl, 4), 2); /* 40 + 40: no slowdown modelled */
	finish(s, 1, 100, 5, 100);
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	NEAR(v, 0.5);
	assert_int_equal(n, 1);
	/* B finishes at 150, overlap with A 100 of 150 s (2/3 >= 1/4); its
	 * speed (7.5 units / 150 s) / 0.1 = 0.5: d_BA = (2 - 1) / (2/3) = 1.5 */
	finish(s, 2, 150, 7.5, 150);
	assert_int_equal(sched_colocate_pair(s, B, A, &v, &n), 0);
	NEAR(v, 1 / 2.5);
	/* partial overlap: A2 from 200, B2 joins at 250, A2 ends at 300 */
	sched_request a2 = rq(3, A, 200), b2 = rq(4, B, 250);
	assert_int_equal(sched_submit(s, &a2, &e), 0);
	assert_int_equal(sched_place(s, 200, pl, 4), 1); /* the GPU is empty */
	assert_int_equal(sched_submit(s, &b2, &e), 0);
	assert_int_equal(sched_place(s, 250, pl, 4), 0); /* modelled 0.5 + 0.4 < 1.05 */
	sched_colocate_seed(s, A, B, 0.99, 0.99); /* now compatible: 1.98 */
	assert_int_equal(sched_place(s, 250, pl, 4), 1);
	finish(s, 3, 300, 8, 100); /* speed 0.8, F = 0.5 */
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	double d = (1 / 0.99 - 1) + 0.3 * (0.5 - (1 / 0.99 - 1));
	NEAR(v, 1 / (1 + d));
	assert_int_equal(n, 2);
	sched_free(s);
}

/* Admission: a candidate is admitted beside a set only when the set's
 * modelled throughput grows beyond the margins.  Utilisations 100 + 5:
 * speeds 100/105, throughput 1.905 -> admitted; with the pair seeded at
 * 0.52 each (1.04: a gain of 0.04 < two margins of 0.044) -> refused,
 * unless exploration may try it (0.04 + 0.088 > 0: uncertain; then it
 * runs as an exploration, test_explore.c). */
static void test_admission(void **state)
{
	(void)state;
	for (int seeded = 0; seeded < 3; seeded++) {
		sched_options o;
		sched_options_default(&o, SHARE_RELISH);
		if (seeded < 2)
			o.explore_max = 0;
		o.timeslice_refused = 0; /* the rule alone (test_explore.c) */
		sched *s = fixture_sched(SHARE_RELISH, &o, 1, 40000);
		sched_request r1 = rq(1, 1, 0), r2 = rq(2, 2, 1);
		sched_observation o1 = { SEG_OUT_COMPLETED, 1000, 100, 1, 10 , 0};
		sched_observation o2 = { SEG_OUT_COMPLETED, 1000, 5, 1, 10 , 0};
		sched_learn(s, &r1, &o1);
		sched_learn(s, &r2, &o2);
		if (seeded)
			sched_colocate_seed(s, 1, 2, 0.52, 0.52);
		rl_err e;
		assert_int_equal(sched_submit(s, &r1, &e), 0);
		assert_int_equal(sched_submit(s, &r2, &e), 0);
		sched_placement pl[2];
		assert_int_equal(sched_place(s, 1, pl, 2), seeded == 1 ? 1 : 2);
		if (seeded == 2)
			assert_int_equal(sched_segment_exploring(s, 2), 1);
		sched_free(s);
	}
}

/* Many pairs: every one seeded is found with its speed, through the
 * filter's regrowths (it starts at 64 pairs' worth of bits), and the
 * reversed pairs, never seeded, are not. */
static void test_many_pairs(void **state)
{
	(void)state;
	sched *s = mk(1);
	enum { N = 3000 };
	for (uint64_t k = 0; k < N; k++)
		sched_colocate_seed(s, 1000 + k, 500000 + k * 7, 0.5 + (double)(k % 40) / 100, 0);
	size_t absent = 0;
	for (uint64_t k = 0; k < N; k++) {
		double sp = 0;
		size_t n = 0;
		assert_int_equal(sched_colocate_pair(s, 1000 + k, 500000 + k * 7, &sp, &n), 0);
		NEAR(sp, 0.5 + (double)(k % 40) / 100);
		assert_int_equal(n, 1);
		absent += sched_colocate_pair(s, 500000 + k * 7, 1000 + k, NULL, NULL) == RL_ENOTFOUND;
	}
	assert_int_equal(absent, N);
	sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prior),
		cmocka_unit_test(test_seeded_pairs_and_sets),
		cmocka_unit_test(test_model_properties),
		cmocka_unit_test(test_learning_from_sharing),
		cmocka_unit_test(test_admission),
		cmocka_unit_test(test_many_pairs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
