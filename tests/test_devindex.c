/*
 * test_devindex.c - the core's device indexes against brute force, and the
 * monotonicity that relish's shared refusals rely on.
 *
 *  - best fit (pack's treap) and least reserved (claims' min tree): random
 *    device states on 61 GPUs of mixed sizes, after each change every
 *    answer equals a scan of all devices;
 *  - the co-location model with a candidate in no pair: the set's modelled
 *    throughput never grows with the candidate's utilisation, whatever
 *    pairs the members have among themselves (place.c remembers a refusal
 *    of (reservation, utilisation) for every larger pair of figures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sched/sched_int.h"
#include "sched_fixture.h"
#include "search/rng.h"

#define NDEV 61

static sched *mk(sharing_policy policy, rl_rng *r)
{
	static const uint64_t sizes[] = {16384, 24576, 32768, 81920};
	sched *s = fixture_sched(policy, NULL, 0, 0);
	for (int i = 0; i < NDEV; i++)
		fixture_gpu(s, sizes[rng_below(r, 4)], i);
	return s;
}

static int brute_best_fit(const sched *s, uint64_t need)
{
	int best = -1;
	uint64_t best_free = 0;
	for (size_t i = 0; i < s->n_dev; i++) {
		const sched_dev *d = &s->dev[i];
		uint64_t f = d->info.mem_total_mib - d->mem_res;
		if (d->claimed || d->held || f < need)
			continue;
		if (best < 0 || f < best_free) {
			best = (int)i;
			best_free = f;
		}
	}
	return best;
}

static int brute_least_reserved(const sched *s, const int *skip, int n_skip)
{
	int best = -1;
	for (size_t i = 0; i < s->n_dev; i++) {
		int dup = 0;
		for (int k = 0; k < n_skip; k++)
			dup |= skip[k] == (int)i;
		if (!dup && (best < 0 || s->dev[i].mem_res < s->dev[best].mem_res))
			best = (int)i;
	}
	return best;
}

/* The treap's shape: keys in search order, priorities in heap order, and
 * exactly the positions marked in it, each once.  Returns the nodes below t. */
static size_t treap_check(const sched_devidx *x, int32_t t, uint64_t lo, uint64_t hi,
			  uint32_t max_prio)
{
	if (t < 0)
		return 0;
	assert_true(x->tin[t]);
	assert_true(x->tkey[t] >= lo && x->tkey[t] <= hi);
	assert_true(x->tprio[t] <= max_prio);
	size_t n = 1;
	if (x->tkey[t] > 0)
		n += treap_check(x, x->tl[t], lo, x->tkey[t] - 1, x->tprio[t]);
	else
		assert_int_equal(x->tl[t], -1);
	return n + treap_check(x, x->tr[t], x->tkey[t] + 1, hi, x->tprio[t]);
}

static void check_treap(const sched *s)
{
	const sched_devidx *x = &s->idx[CLS_GPU];
	size_t in = 0;
	for (size_t k = 0; k < x->P; k++)
		in += x->tin[k];
	assert_int_equal(treap_check(x, x->troot, 0, UINT64_MAX, UINT32_MAX), in);
}

static void test_indexes_match_brute_force(void **state)
{
	(void)state;
	rl_rng r;
	rng_seed(&r, 7);
	sched *s = mk(SHARE_PACK, &r);
	assert_true(devidx_fit_on(s, CLS_GPU));
	size_t checks = 0;
	for (int step = 0; step < 4000; step++) {
		sched_dev *d = &s->dev[rng_below(&r, NDEV)];
		switch (rng_below(&r, 4)) {
		case 0: /* reservations come and go, often to the same sizes */
			d->mem_res = rng_below(&r, 5) * (d->info.mem_total_mib / 4);
			break;
		case 1:
			d->mem_res = rng_below(&r, d->info.mem_total_mib + 1);
			break;
		case 2:
			d->held = !d->held;
			break;
		default:
			d->claimed = rng_below(&r, 8) == 0; /* few claimed */
			break;
		}
		devidx_update(s, d);
		check_treap(s);
		for (int q = 0; q < 8; q++) {
			uint64_t need = 1 + rng_below(&r, 82000);
			assert_int_equal(devidx_best_fit(s, CLS_GPU, need), brute_best_fit(s, need));
			checks++;
		}
		int skip[4];
		int n_skip = (int)rng_below(&r, 4);
		for (int k = 0; k < n_skip; k++)
			skip[k] = (int)rng_below(&r, NDEV);
		int got = devidx_least_reserved(s, CLS_GPU, skip, n_skip);
		assert_int_equal(got, brute_least_reserved(s, skip, n_skip));
		/* skipping leaves the tree as it was */
		assert_int_equal(devidx_least_reserved(s, CLS_GPU, NULL, 0),
				 brute_least_reserved(s, NULL, 0));
	}
	assert_true(checks == 32000);
	sched_free(s);
}

static void test_fit_index_only_for_pack(void **state)
{
	(void)state;
	rl_rng r;
	rng_seed(&r, 1);
	sched *s = mk(SHARE_RELISH, &r);
	assert_false(devidx_fit_on(s, CLS_GPU));
	assert_int_equal(devidx_best_fit(s, CLS_GPU, 1), -1);
	sched_free(s);
}

static void test_unpaired_candidate_monotone(void **state)
{
	(void)state;
	rl_rng r;
	rng_seed(&r, 3);
	sched *s = mk(SHARE_RELISH, &r);
	/* members' shapes 1..6 with some observed pairs among them */
	for (uint64_t a = 1; a <= 6; a++)
		for (uint64_t b = 1; b <= 6; b++)
			if (rng_below(&r, 3) == 0)
				sched_colocate_seed(s, a, b, 0.3 + 0.7 * rng_uniform(&r), 0);
	const uint64_t cand = 99; /* in no pair */
	size_t sets = 0;
	for (int t = 0; t < 2000; t++) {
		uint64_t shapes[6];
		double util[6];
		size_t n = 1 + rng_below(&r, 4);
		for (size_t i = 0; i < n; i++) {
			shapes[i] = 1 + rng_below(&r, 6);
			util[i] = 100 * rng_uniform(&r);
		}
		shapes[n] = cand;
		double prev = 0;
		for (int k = 0; k <= 20; k++) {
			util[n] = 5.0 * k;
			double tput = sched_colocate_predict(s, shapes, util, n + 1, NULL);
			if (k)
				assert_true(tput <= prev + 1e-12);
			prev = tput;
		}
		sets++;
	}
	assert_true(sets == 2000);
	sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_indexes_match_brute_force),
		cmocka_unit_test(test_fit_index_only_for_pack),
		cmocka_unit_test(test_unpaired_candidate_monotone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
