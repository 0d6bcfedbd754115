/*
 * test_queue.c - the core's queue in two parts (a sorted front that a
 * placement call scans, a heap behind it): with thousands of segments,
 * random keys, removals from both parts and submissions between calls,
 * segments start exactly in key order (priority, submit time, id).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "sched_fixture.h"
#include "search/rng.h"

#define N 3000

typedef struct key {
	double prio, submit;
	uint64_t id;
	int removed, started;
} key;

static int key_cmp(const void *a, const void *b)
{
	const key *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

static void submit(sched *s, const key *k)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = k->id;
	r.shape = 7;
	r.needs_gpu = 1;
	r.n_devices = 1;
	r.priority = k->prio;
	r.submit_time = k->submit;
	rl_err e;
	assert_int_equal(sched_submit(s, &r, &e), 0);
}

static void test_order_through_front_and_heap(void **state)
{
	(void)state;
	rl_rng rng;
	rng_seed(&rng, 11);
	sched_options o;
	sched_options_default(&o, SHARE_EXCLUSIVE);
	o.aging_s = 0; /* no claims: pure key order */
	sched *s = fixture_sched(SHARE_EXCLUSIVE, &o, 1, 1000);
	rl_err e;

	static key k[N];
	for (int i = 0; i < N; i++) {
		/* few distinct priorities and times, so ties reach the id */
		k[i].prio = (double)rng_below(&rng, 50);
		k[i].submit = (double)rng_below(&rng, 20);
		k[i].id = 1000 + (uint64_t)i;
	}
	/* two thirds now, the rest later, between placements */
	int sent = 0;
	for (; sent < 2 * N / 3; sent++)
		submit(s, &k[sent]);
	assert_int_equal(sched_queue_length(s), 2 * N / 3);
	/* remove every seventh, wherever it sits (front or heap) */
	int removed = 0;
	for (int i = 0; i < sent; i += 7) {
		assert_int_equal(sched_remove(s, k[i].id), 1);
		k[i].removed = 1;
		removed++;
	}
	assert_int_equal(sched_queue_length(s), (size_t)(sent - removed));

	/* One device, exclusive: each call starts the least key queued. */
	uint64_t *order = calloc(N, sizeof *order);
	assert_non_null(order);
	size_t n_started = 0;
	double now = 100;
	for (;;) {
		sched_placement pl;
		size_t n = sched_place(s, now, &pl, 1);
		if (!n)
			break;
		/* it must be the least key among those queued right now */
		key *least = NULL;
		for (int i = 0; i < sent; i++)
			if (!k[i].removed && !k[i].started && (!least || key_cmp(&k[i], least) < 0))
				least = &k[i];
		assert_non_null(least);
		assert_int_equal(pl.seg_id, least->id);
		least->started = 1;
		order[n_started++] = pl.seg_id;
		sched_observation ob;
		memset(&ob, 0, sizeof ob);
		ob.outcome = SEG_OUT_COMPLETED;
		ob.duration_s = 1;
		ob.mean_util = -1;
		assert_int_equal(sched_finished(s, pl.seg_id, now, &ob, &e), 0);
		now += 1;
		/* trickle in the rest: some sort before what is queued */
		for (int m = 0; m < 3 && sent < N; m++, sent++)
			submit(s, &k[sent]);
	}
	assert_int_equal(n_started, (size_t)(N - removed));
	assert_int_equal(sched_queue_length(s), 0);
	free(order);
	sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_through_front_and_heap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
