/*
 * test_explore.c - co-location learnt from what runs (relish): a pair of
 * shapes whose gain the model cannot promise (both measured 100 % busy,
 * as NVML's time-based utilisation reports most training processes) is
 * tried, one exploration per device at a time and at most explore_max
 * times per pair; what the tries measure moves the pair's estimate; a
 * pair measured to gain is packed from then on, one measured to lose is
 * kept apart from its next segment on; nothing is tried where memory does
 * not fit, and an idle device still wins over any co-location.  With
 * groups (sched_request.group), what a pair of groups measured stands in
 * for their shapes' pairs never measured: a new shape of a group measured
 * to gain joins, three share at once, and a new shape of a group measured
 * to lose is kept apart without being tried.
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

enum { A = 10, B = 20, C = 30, D = 11, H1 = 41, H2 = 42, H3 = 43 };

/* Groups named (1: A, B, C, D; 2: H1-H3), or none (0). */
static int use_groups;

static sched_request rq(uint64_t id, uint64_t shape, double t)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.shape = shape;
	r.family = shape;
	r.group = !use_groups ? 0 : shape > 40 ? 2 : 1;
	r.needs_gpu = 1;
	r.submit_time = t;
	return r;
}

/* The time-slice fallback (timeslice_refused) is off in the tests of
 * exploration, which look at exploration alone, and on in its own tests
 * below. */
static int g_slice;

/* A core with n_gpu GPUs of mem MiB and shapes A, B (and C at util_c)
 * measured alone: 2000 MiB, 10 units in 100 s, A and B 100 % busy. */
static sched *mk(int n_gpu, uint64_t mem, int explore_max, double util_c)
{
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	assert_int_equal(o.timeslice_refused, 1); /* relish's default */
	o.timeslice_refused = g_slice;
	if (explore_max >= 0)
		o.explore_max = explore_max;
	sched *s = fixture_sched(SHARE_RELISH, &o, n_gpu, mem);
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100 , 0};
	sched_observation light = { SEG_OUT_COMPLETED, 2000, util_c, 10, 100 , 0};
	sched_request ra = rq(900, A, 0), rb = rq(901, B, 0), rc = rq(902, C, 0);
	sched_learn(s, &ra, &busy);
	sched_learn(s, &rb, &busy);
	sched_learn(s, &rc, &light);
	return s;
}

static void submit(sched *s, uint64_t id, uint64_t shape, double t)
{
	sched_request r = rq(id, shape, t);
	rl_err e;
	assert_int_equal(sched_submit(s, &r, &e), 0);
}

/* Finish segment id at now having done work units (speed = work / 10
 * over a segment of 100 s, measured alone at 0.1 units per second). */
static void finish(sched *s, uint64_t id, double now, double work)
{
	sched_observation o = { SEG_OUT_COMPLETED, 2000, 100, work, 100 , 0};
	rl_err e;
	assert_int_equal(sched_finished(s, id, now, &o, &e), 0);
}

static size_t place(sched *s, double now, sched_placement *pl)
{
	return sched_place(s, now, pl, 8);
}

/* round_shared for shapes a and b. */
static int round_pair(sched *s, uint64_t id, uint64_t a, uint64_t b, double t, double sp)
{
	sched_placement pl[8];
	submit(s, id, a, t);
	submit(s, id + 1, b, t);
	assert_int_equal(place(s, t, pl), 2);
	assert_int_equal(pl[0].dev[0], pl[1].dev[0]);
	int explored = sched_segment_exploring(s, id + 1);
	finish(s, id, t + 100, 10 * sp);
	finish(s, id + 1, t + 100, 10 * sp);
	return explored;
}

/* One round: a's and b's segments submitted at t, both start at t (b
 * beside a), both end at t + 100 having run at speed sp.  Returns
 * whether b explored. */
static int round_shared(sched *s, uint64_t id, double t, double sp)
{
	sched_placement pl[8];
	submit(s, id, A, t);
	submit(s, id + 1, B, t);
	assert_int_equal(place(s, t, pl), 2);
	assert_int_equal(pl[0].dev[0], pl[1].dev[0]);
	int explored = sched_segment_exploring(s, id + 1);
	assert_int_equal(sched_segment_exploring(s, id), 0);
	finish(s, id, t + 100, 10 * sp);
	finish(s, id + 1, t + 100, 10 * sp);
	return explored;
}

/* The prior alone (100 % + 100 %) predicts no gain, and its margin
 * refuses: without exploration nothing is ever tried, and nothing learnt
 * (the behaviour this replaces). */
static void test_no_exploration_no_sharing(void **state)
{
	(void)state;
	sched *s = mk(1, 40000, 0, 100);
	sched_placement pl[8];
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	assert_int_equal(place(s, 0, pl), 1);
	assert_int_equal(sched_colocate_explored(s, A, B), 0);
	sched_free(s);
}

/* Learning moves the estimate: from the prior's 0.5 to what the
 * exploration measured (0.95 each way), and the pair, measured to gain,
 * stays packed without exploring again. */
static void test_learn_and_keep_packed(void **state)
{
	(void)state;
	sched *s = mk(1, 40000, -1, 100);
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), RL_ENOTFOUND);
	uint64_t sh[2] = { A, B };
	double sp[2];
	sched_colocate_predict(s, sh, NULL, 2, sp);
	assert_true(fabs(sp[0] - 0.5) < 1e-9); /* the prior */
	assert_int_equal(round_shared(s, 1, 0, 0.95), 1);
	assert_int_equal(sched_colocate_explored(s, A, B), 1);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	assert_true(fabs(v - 0.95) < 1e-9);
	assert_int_equal(n, 1);
	assert_int_equal(sched_colocate_pair(s, B, A, &v, &n), 0);
	assert_true(fabs(v - 0.95) < 1e-9);
	/* measured to gain (0.95 + 0.95 - 1 beyond the margins): packed
	 * again at the next boundaries, as an exploit, not a try */
	for (int k = 0; k < 3; k++)
		assert_int_equal(round_shared(s, 10 + 2 * (uint64_t)k, 100 + 100 * k, 0.95), 0);
	assert_int_equal(sched_colocate_explored(s, A, B), 1);
	/* each round moved the estimate (EWMA): 0.9 now pulls it down */
	assert_int_equal(round_shared(s, 20, 400, 0.9), 0);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	assert_true(v < 0.95 && v > 0.9);
	sched_free(s);
}

/* A pair measured to lose (0.4 each: 0.8 of one device's work) is
 * separated at its next segment boundary: a's next segment starts alone,
 * b's waits until a's ends, and the pair is never tried again. */
static void test_loser_separated(void **state)
{
	(void)state;
	sched *s = mk(1, 40000, -1, 100);
	sched_placement pl[8];
	assert_int_equal(round_shared(s, 1, 0, 0.4), 1);
	submit(s, 3, A, 100);
	submit(s, 4, B, 100);
	assert_int_equal(place(s, 100, pl), 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(place(s, 150, pl), 0);
	finish(s, 3, 200, 10);
	assert_int_equal(place(s, 200, pl), 1);
	assert_int_equal(pl[0].seg_id, 4);
	submit(s, 5, A, 250);
	assert_int_equal(place(s, 250, pl), 0);
	assert_int_equal(sched_colocate_explored(s, A, B), 1);
	sched_free(s);
}

/* Bounded per pair: a pair measured at no gain (0.5 + 0.5: within the
 * margin either way) is tried again, up to explore_max (2) times in all,
 * then kept apart. */
static void test_bounded_per_pair(void **state)
{
	(void)state;
	sched *s = mk(1, 40000, -1, 100);
	sched_placement pl[8];
	assert_int_equal(round_shared(s, 1, 0, 0.5), 1);
	assert_int_equal(round_shared(s, 3, 100, 0.5), 1);
	assert_int_equal(sched_colocate_explored(s, A, B), 2);
	submit(s, 5, A, 200);
	submit(s, 6, B, 200);
	assert_int_equal(place(s, 200, pl), 1);
	assert_int_equal(sched_colocate_explored(s, A, B), 2);
	sched_free(s);
}

/* Bounded per device: while b explores beside a, nothing else joins the
 * device, not even c, whom the model would admit (5 % busy: modelled
 * gain 0.46 against a margin of 0.13); once the exploration ends, c
 * joins. */
static void test_one_per_device(void **state)
{
	(void)state;
	sched *s = mk(1, 40000, -1, 5);
	sched_placement pl[8];
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	assert_int_equal(place(s, 0, pl), 2);
	assert_int_equal(sched_segment_exploring(s, 2), 1);
	submit(s, 3, C, 10);
	assert_int_equal(place(s, 10, pl), 0);
	finish(s, 2, 50, 4);
	assert_int_equal(place(s, 50, pl), 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(sched_segment_exploring(s, 3), 0);
	/* without exploration c joins a and b at once */
	sched_free(s);
	s = mk(1, 40000, 0, 5);
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	submit(s, 3, C, 0);
	assert_int_equal(place(s, 0, pl), 2); /* a, then c beside it; b refused */
	assert_int_equal(pl[1].seg_id, 3);
	sched_free(s);
}

/* A neighbour's tail is noise, not a partner: a's segment shares its
 * device with c for its first 2 s (c ends; b then explores beside a for
 * the other 98 s), and what a measured is b's doing, learnt with the
 * overlap's fraction (0.98).  With 10 s of c (more than
 * SCHED_OVERLAP_NOISE, a twentieth of the life) and the pair a beside c
 * never measured, the slowdown cannot be told apart and nothing is learnt
 * of the pair (test_tail_known_taken_out: with it measured, it is).  (Live, a device's
 * segments end milliseconds apart, and counting each tail as a partner
 * left seven of nine shared segments that could teach teaching nothing.) */
static void test_tail_is_noise(void **state)
{
	(void)state;
	for (int tail = 2; tail <= 10; tail += 8) {
		sched *s = mk(1, 40000, -1, 5);
		sched_placement pl[8];
		submit(s, 1, A, 0);
		submit(s, 2, C, 0);
		assert_int_equal(place(s, 0, pl), 2); /* c joins a (5 % busy) */
		finish(s, 2, tail, 10);
		submit(s, 3, B, tail);
		assert_int_equal(place(s, tail, pl), 1);
		assert_int_equal(sched_segment_exploring(s, 3), 1);
		finish(s, 1, 100, 10 * 0.9);
		double v;
		size_t n;
		int rc = sched_colocate_pair(s, A, B, &v, &n);
		if (tail == 2) {
			assert_int_equal(rc, 0);
			double d = (1 / 0.9 - 1) / 0.98;
			assert_true(fabs(v - 1 / (1 + d)) < 1e-9);
		} else {
			assert_int_equal(rc, RL_ENOTFOUND);
		}
		sched_free(s);
	}
}

/* A neighbour whose pair with the segment is known is taken out at its
 * estimate: a's second segment shares with c for its first 10 s (more
 * than noise) and with b for the other 90, and the pair a beside c was
 * measured before (a at 0.95 beside c alone), so a's slowdown is b's
 * once c's share is taken out:
 * 1/0.9 - 1 = 0.1 d_ac + 0.9 d_ab.  (Live, the cost stand-in: of two
 * heavy trials started together the one that ended last met the next
 * trial's head and taught nothing, and heavy pairs went on sharing.) */
static void test_tail_known_taken_out(void **state)
{
	(void)state;
	sched *s = mk(1, 40000, -1, 5);
	sched_placement pl[8];
	submit(s, 1, A, 0);
	submit(s, 2, C, 0);
	assert_int_equal(place(s, 0, pl), 2); /* c joins a (5 % busy) */
	finish(s, 2, 100, 10);
	finish(s, 1, 100, 10 * 0.95);
	double v, d_ac = 1 / 0.95 - 1;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, A, C, &v, &n), 0);
	assert_true(fabs(v - 1 / (1 + d_ac)) < 1e-9);
	submit(s, 3, A, 200);
	submit(s, 4, C, 200);
	assert_int_equal(place(s, 200, pl), 2);
	finish(s, 4, 210, 10);
	submit(s, 5, B, 210);
	assert_int_equal(place(s, 210, pl), 1);
	assert_int_equal(sched_segment_exploring(s, 5), 1);
	finish(s, 3, 300, 10 * 0.9);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	double d_ab = (1 / 0.9 - 1 - 0.1 * d_ac) / 0.9;
	assert_true(fabs(v - 1 / (1 + d_ab)) < 1e-9);
	sched_free(s);
}

/* No exploration where memory does not fit (two reservations of 2656 MiB
 * on 4 GiB), and an idle device beats any co-location. */
static void test_memory_and_idle_first(void **state)
{
	(void)state;
	sched *s = mk(1, 4096, -1, 100);
	sched_placement pl[8];
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	assert_int_equal(place(s, 0, pl), 1);
	assert_int_equal(sched_colocate_explored(s, A, B), 0);
	sched_free(s);
	s = mk(2, 40000, -1, 100);
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	assert_int_equal(place(s, 0, pl), 2);
	assert_true(pl[0].dev[0] != pl[1].dev[0]);
	assert_int_equal(sched_colocate_explored(s, A, B), 0);
	sched_free(s);
}

/* Groups: one exploration of A beside B (0.95 each) teaches the group
 * (two measurements that agree), and D, of the same group, never run
 * beside anyone, then joins A as a decision, not a try, and B joins them
 * both (a set of three, each pair known).  Without groups nothing is
 * derived. */
static void test_group_stands_in(void **state)
{
	(void)state;
	use_groups = 1;
	sched *s = mk(1, 40000, -1, 100);
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request rd = rq(903, D, 0);
	sched_learn(s, &rd, &busy);
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, A, D, &v, &n), RL_ENOTFOUND);
	assert_int_equal(round_pair(s, 1, A, B, 0, 0.95), 1);
	assert_int_equal(sched_colocate_pair(s, A, D, &v, &n), 0);
	assert_true(fabs(v - 0.95) < 1e-9);
	assert_int_equal(n, 0); /* derived, not measured */
	assert_int_equal(sched_colocate_pair(s, D, B, &v, &n), 0);
	sched_placement pl[8];
	submit(s, 3, A, 100);
	submit(s, 4, D, 100);
	submit(s, 5, B, 100);
	assert_int_equal(place(s, 100, pl), 3);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(pl[k].dev[0], 0);
		assert_int_equal(sched_segment_exploring(s, pl[k].seg_id), 0);
	}
	assert_int_equal(sched_colocate_explored(s, A, D), 0);
	sched_free(s);
	use_groups = 0;
	s = mk(1, 40000, -1, 100);
	sched_learn(s, &rd, &busy);
	assert_int_equal(round_pair(s, 1, A, B, 0, 0.95), 1);
	assert_int_equal(sched_colocate_pair(s, A, D, &v, &n), RL_ENOTFOUND);
	sched_free(s);
}

/* With groups: H1, H2 and H3 (group 2) measured alone, then H1 beside
 * H2 measured to lose (0.4 each): the pair of groups (2, 2) loses. */
static sched *mk_group_loses(void)
{
	use_groups = 1;
	sched *s = mk(1, 40000, -1, 100);
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request r1 = rq(904, H1, 0), r2 = rq(905, H2, 0), r3 = rq(906, H3, 0);
	sched_learn(s, &r1, &busy);
	sched_learn(s, &r2, &busy);
	sched_learn(s, &r3, &busy);
	assert_int_equal(round_pair(s, 1, H1, H2, 0, 0.4), 1);
	return s;
}

/* A group measured to lose (H1 beside H2, 0.4 each): H3, new, is kept
 * apart from H1 without a try, and measured pairs keep their own figure. */
static void test_group_loser_kept_apart(void **state)
{
	(void)state;
	sched *s = mk_group_loses();
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, H3, H1, &v, &n), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	sched_placement pl[8];
	submit(s, 3, H1, 100);
	submit(s, 4, H3, 100);
	assert_int_equal(place(s, 100, pl), 1);
	assert_int_equal(place(s, 150, pl), 0);
	assert_int_equal(sched_colocate_explored(s, H1, H3), 0);
	/* the light group learnt nothing from the heavy one */
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), RL_ENOTFOUND);
	sched_free(s);
	use_groups = 0;
}

/* Refused everywhere, a segment time-slices rather than waits: without
 * exploration the model refuses b beside a (100 % + 100 %: no gain beyond
 * the margin), and b shares a's device at once; a third segment (c, as
 * busy) is not put on a device that already time-slices two: it waits. */
static void test_refused_time_slices(void **state)
{
	(void)state;
	g_slice = 1;
	sched *s = mk(1, 40000, 0, 100);
	sched_placement pl[8];
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	submit(s, 3, C, 0);
	assert_int_equal(place(s, 0, pl), 2);
	assert_int_equal(pl[0].seg_id, 1);
	assert_int_equal(pl[1].seg_id, 2);
	assert_int_equal(pl[0].dev[0], pl[1].dev[0]);
	assert_int_equal(sched_segment_exploring(s, 2), 0);
	assert_int_equal(place(s, 10, pl), 0);
	/* what the slice measured is learnt like any pair's ends */
	finish(s, 1, 100, 5);
	finish(s, 2, 100, 5);
	double v;
	assert_int_equal(sched_colocate_pair(s, A, B, &v, NULL), 0);
	assert_true(fabs(v - 0.5) < 1e-9);
	/* an idle device still comes first: two GPUs, two devices */
	sched_free(s);
	s = mk(2, 40000, 0, 100);
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	assert_int_equal(place(s, 0, pl), 2);
	assert_true(pl[0].dev[0] != pl[1].dev[0]);
	/* memory still decides: 2656 MiB twice does not fit 4 GiB */
	sched_free(s);
	s = mk(1, 4096, 0, 100);
	submit(s, 1, A, 0);
	submit(s, 2, B, 0);
	assert_int_equal(place(s, 0, pl), 1);
	sched_free(s);
	g_slice = 0;
}

/* A pair measured to lose (0.4 + 0.4 < 1: worse than taking turns) is
 * not time-sliced either: b waits for a's device; a pair measured at no
 * gain (0.5 + 0.5) is, once its explorations are spent. */
static void test_slice_not_with_loser(void **state)
{
	(void)state;
	g_slice = 1;
	sched *s = mk(1, 40000, -1, 100);
	sched_placement pl[8];
	assert_int_equal(round_shared(s, 1, 0, 0.4), 1);
	submit(s, 3, A, 100);
	submit(s, 4, B, 100);
	assert_int_equal(place(s, 100, pl), 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(place(s, 150, pl), 0);
	sched_free(s);
	s = mk(1, 40000, -1, 100);
	assert_int_equal(round_shared(s, 1, 0, 0.5), 1);
	assert_int_equal(round_shared(s, 3, 100, 0.5), 1);
	/* explorations spent, and the pair measured to do no more than take
	 * turns (0.5 + 0.5): no time-slice either, the measurement refused it
	 * (slicing it kept two heavy trials on one device in the live cost
	 * bench) */
	submit(s, 5, A, 200);
	submit(s, 6, B, 200);
	assert_int_equal(place(s, 200, pl), 1);
	assert_int_equal(pl[0].seg_id, 5);
	assert_int_equal(sched_colocate_explored(s, A, B), 2);
	sched_free(s);
	g_slice = 0;
}

/* What was learnt survives a restart (learnt.c): a core that measured
 * H1 beside H2 to lose lists the two pairs, the pair of groups and the
 * pair's exploration; a new core given those rows back keeps H3, new,
 * apart from H1 without a try and counts the exploration of H1 beside H2
 * already made; rows given back are not listed again, a listing after a
 * stamp holds only what changed after it, and rows no core lists are
 * refused. */
static void test_learnt_survives_restart(void **state)
{
	(void)state;
	use_groups = 1;
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request r1 = rq(904, H1, 0), r2 = rq(905, H2, 0), r3 = rq(906, H3, 0);
	sched *s = mk(1, 40000, -1, 100);
	sched_learn(s, &r1, &busy);
	sched_learn(s, &r2, &busy);
	sched_learn(s, &r3, &busy);
	uint64_t next = 0;
	sched_learnt rows[16];
	assert_int_equal(sched_learnt_list(s, 0, rows, 16, &next), 0);
	assert_int_equal(round_pair(s, 1, H1, H2, 0, 0.4), 1);
	size_t n = sched_learnt_list(s, 0, rows, 16, &next);
	assert_int_equal(n, 4);
	int pairs = 0, groups = 0, explored = 0;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].kind == SCHED_LEARNT_PAIR) {
			pairs++;
			assert_true(fabs(1 / (1 + rows[i].d) - 0.4) < 1e-9);
			assert_true(rows[i].n == 1);
		} else if (rows[i].kind == SCHED_LEARNT_EXPLORED) {
			explored++;
			assert_int_equal(rows[i].a, H1);
			assert_int_equal(rows[i].b, H2);
			assert_true(rows[i].n == 1);
		} else {
			assert_int_equal(rows[i].kind, SCHED_LEARNT_GROUPS);
			assert_int_equal(rows[i].a, 2);
			assert_int_equal(rows[i].b, 2);
			assert_true(rows[i].n == 2);
			groups++;
		}
	}
	assert_int_equal(pairs, 2);
	assert_int_equal(groups, 1);
	assert_int_equal(explored, 1);
	/* too small a buffer: the count, and no stamp to move on to */
	uint64_t keep = 77;
	assert_int_equal(sched_learnt_list(s, 0, rows, 1, &keep), 4);
	assert_int_equal(keep, 77);
	assert_int_equal(sched_learnt_list(s, next, rows + n, 16 - n, NULL), 0);

	/* restarted without the rows: H3 is tried beside H1 */
	sched *fresh = mk(1, 40000, -1, 100);
	sched_learn(fresh, &r1, &busy);
	sched_learn(fresh, &r3, &busy);
	sched_placement pl[8];
	submit(fresh, 3, H1, 100);
	submit(fresh, 4, H3, 100);
	assert_int_equal(place(fresh, 100, pl), 2);
	assert_int_equal(sched_colocate_explored(fresh, H1, H3), 1);
	sched_free(fresh);

	/* restarted with them: kept apart, nothing tried */
	sched *t = mk(1, 40000, -1, 100);
	rl_err e;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sched_learnt_import(t, &rows[i], &e), 0);
	sched_learn(t, &r1, &busy);
	sched_learn(t, &r2, &busy);
	sched_learn(t, &r3, &busy);
	double v;
	size_t nobs;
	assert_int_equal(sched_colocate_pair(t, H1, H2, &v, &nobs), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	assert_int_equal(nobs, 1);
	assert_int_equal(sched_colocate_pair(t, H3, H1, &v, &nobs), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	assert_int_equal(nobs, 0); /* derived from the groups given back */
	submit(t, 3, H1, 100);
	submit(t, 4, H3, 100);
	submit(t, 5, H2, 100);
	assert_int_equal(place(t, 100, pl), 1);
	assert_int_equal(place(t, 150, pl), 0);
	assert_int_equal(sched_colocate_explored(t, H1, H3), 0);
	assert_int_equal(sched_colocate_explored(t, H1, H2), 1);
	assert_int_equal(sched_learnt_list(t, 0, rows + n, 16 - n, NULL), 0);
	sched_free(t);

	/* another measurement: only the pairs it changed, and their groups */
	assert_int_equal(round_pair(s, 6, A, B, 200, 0.95), 1);
	n = sched_learnt_list(s, next, rows, 16, &next);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		assert_true(rows[i].kind == SCHED_LEARNT_GROUPS ? rows[i].a == 1 :
			    rows[i].a == A || rows[i].a == B);
	sched_free(s);

	/* rows no core lists */
	s = mk(1, 40000, -1, 100);
	sched_learnt bad[] = {
		{.kind = SCHED_LEARNT_PAIR, .a = A, .b = B, .n = 1, .d = -0.5},
		{.kind = SCHED_LEARNT_PAIR, .a = A, .b = B, .n = 0, .d = 0.5},
		{.kind = SCHED_LEARNT_PAIR, .a = A, .b = B, .n = 1, .d = NAN},
		{.kind = SCHED_LEARNT_GROUPS, .a = 1, .b = 1, .n = 2, .d = 0.5, .d_max = 0.4,
		 .s_min = 0.6, .s_max = 0.7},
		{.kind = SCHED_LEARNT_GROUPS, .a = 1, .b = 1, .n = 2, .d = 0.5, .d_max = 0.6,
		 .s_min = 0.7, .s_max = 0.6},
		{.kind = SCHED_LEARNT_EXPLORED, .a = B, .b = A, .n = 1},
		{.kind = SCHED_LEARNT_EXPLORED, .a = A, .b = B, .n = 0.5},
		{.kind = SCHED_LEARNT_HINT, .a = 400, .n = 1},
		{.kind = SCHED_LEARNT_LAS, .a = 3, .b = 1, .n = 1},
		{.kind = SCHED_LEARNT_FAMILY, .a = 3, .n = -1},
		{.kind = SCHED_LEARNT__COUNT, .a = 3, .n = 1},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(sched_learnt_import(s, &bad[i], &e), RL_EINVAL);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, NULL), RL_ENOTFOUND);
	assert_int_equal(sched_learnt_list(s, 0, rows, 16, NULL), 0);
	sched_learnt_kind k;
	for (int i = 0; i < SCHED_LEARNT__COUNT; i++) {
		assert_int_equal(sched_learnt_kind_parse(sched_learnt_kind_name(i), &k), 0);
		assert_int_equal(k, i);
	}
	assert_int_equal(sched_learnt_kind_parse("pairs", &k), RL_EINVAL);
	sched_free(s);
	use_groups = 0;
}

/* A segment beside partners of two shapes of one group teaches that pair
 * of groups (colocate.c, colo_observe): A runs 0-100 s at speed 0.8,
 * beside D (group 1, never measured alone) for its first half and B
 * (group 1) for its second; B, measured alone, runs at 0.9 beside A.  The
 * pair of groups (1, 1) then holds both measurements (speeds 0.8 and
 * 0.9), where only B's taught it before; no pair of A's is learnt (two
 * shapes).  Partners of two groups (D, then H1) teach nothing of A's; and
 * without groups nothing is learnt from A at all. */
static sched *half_and_half(uint64_t second, double *t_end)
{
	sched *s = mk(1, 40000, -1, 100);
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request rh = rq(904, H1, 0), rd = rq(905, D, 0);
	sched_learn(s, &rh, &busy);
	/* D's peak measured, never its speed alone */
	sched_observation peak_only = { SEG_OUT_COMPLETED, 2000, 100, 0, 0, 0 };
	sched_learn(s, &rd, &peak_only);
	sched_placement pl[8];
	submit(s, 1, A, 0);
	submit(s, 2, D, 0);
	assert_int_equal(place(s, 0, pl), 2);
	/* D's end reports no work: what D itself teaches through its group's
	 * speed is test_group_lends_speed's; here only A's end matters */
	sched_observation od = { SEG_OUT_COMPLETED, 2000, 100, 0, 50, 0 };
	rl_err e;
	assert_int_equal(sched_finished(s, 2, 50, &od, &e), 0);
	submit(s, 3, second, 50);
	assert_int_equal(place(s, 50, pl), 1);
	assert_int_equal(pl[0].dev[0], 0);
	finish(s, 1, 100, 8);
	sched_observation ob = { SEG_OUT_COMPLETED, 2000, 100, 0.1 * 0.9 * 50, 50, 0 };
	assert_int_equal(sched_finished(s, 3, 100, &ob, &e), 0);
	*t_end = 100;
	return s;
}

static void test_group_from_several_shapes(void **state)
{
	(void)state;
	double t;
	sched_learnt rows[16];
	use_groups = 1;
	sched *s = half_and_half(B, &t);
	size_t n = sched_learnt_list(s, 0, rows, 16, NULL);
	int groups = 0;
	for (size_t i = 0; i < n; i++) {
		assert_true(rows[i].kind != SCHED_LEARNT_PAIR || rows[i].a == B);
		if (rows[i].kind != SCHED_LEARNT_GROUPS)
			continue;
		groups++;
		assert_true(rows[i].n == 2);
		assert_true(fabs(rows[i].s_min - 0.8) < 1e-9);
		assert_true(fabs(rows[i].s_max - 0.9) < 1e-9);
	}
	assert_int_equal(groups, 1);
	sched_free(s);
	/* D then H1: two groups, nothing of A's */
	s = half_and_half(H1, &t);
	n = sched_learnt_list(s, 0, rows, 16, NULL);
	for (size_t i = 0; i < n; i++) {
		assert_true(rows[i].kind != SCHED_LEARNT_PAIR || rows[i].a == H1);
		assert_true(rows[i].kind != SCHED_LEARNT_GROUPS || rows[i].a == 2);
	}
	sched_free(s);
	use_groups = 0;
	s = half_and_half(B, &t);
	n = sched_learnt_list(s, 0, rows, 16, NULL);
	for (size_t i = 0; i < n; i++)
		assert_true(rows[i].kind != SCHED_LEARNT_GROUPS &&
			    (rows[i].kind != SCHED_LEARNT_PAIR || rows[i].a == B));
	sched_free(s);
}

/* A service that never restarts makes a new shape of nearly every trial:
 * past learn_max the least recently used shapes are forgotten with their
 * pairs and exploration counts, the shapes in use are kept whatever their
 * age, and a forgotten pair starts again from the prior (explored anew).
 * Every shortcut is checked against the long way meanwhile (self_check). */
static void test_forget_bounded(void **state)
{
	(void)state;
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	assert_int_equal(o.learn_max, SCHED_LEARN_MAX);
	o.timeslice_refused = 0;
	o.learn_max = 16;
	o.self_check = 1;
	sched *s = fixture_sched(SHARE_RELISH, &o, 1, 40000);
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request ra = rq(900, A, 0), rb = rq(901, B, 0);
	sched_learn(s, &ra, &busy);
	sched_learn(s, &rb, &busy);
	assert_int_equal(round_shared(s, 1, 0, 0.4), 1); /* measured to lose */
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);

	/* a running segment's shape Q, never used again, and 200 new shapes
	 * while A and B are in use */
	enum { Q = 77, FIRST = 1000, MANY = 200 };
	sched_placement pl[8];
	submit(s, 10, Q, 200);
	assert_int_equal(place(s, 200, pl), 1);
	for (uint64_t i = 0; i < MANY; i++) {
		sched_request r = rq(2000 + i, FIRST + i, 200);
		sched_learn(s, &r, &busy);
		if (i % 4 == 0) {
			sched_learn(s, &ra, &busy);
			sched_learn(s, &rb, &busy);
		}
	}
	sched_work w;
	sched_work_get(s, &w);
	assert_true(w.forgotten >= MANY - 16);
	size_t held = 0;
	sched_shape_info info;
	for (uint64_t i = 0; i < MANY; i++)
		held += sched_shape_get(s, FIRST + i, &info) == 0;
	assert_true(held >= 10 && held <= 16 + 16 / 8 + 1);
	assert_int_equal(sched_shape_get(s, FIRST + MANY - 1, &info), 0); /* the newest */
	assert_int_equal(sched_shape_get(s, FIRST, &info), RL_ENOTFOUND);  /* the oldest */
	assert_int_equal(sched_shape_get(s, Q, &info), 0); /* in use */
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	finish(s, 10, 300, 10);

	/* A and B no longer used: forgotten with their pair and its count */
	for (uint64_t i = MANY; i < 2 * MANY; i++) {
		sched_request r = rq(2000 + i, FIRST + i, 300);
		sched_learn(s, &r, &busy);
	}
	assert_int_equal(sched_shape_get(s, A, &info), RL_ENOTFOUND);
	assert_int_equal(sched_shape_get(s, Q, &info), RL_ENOTFOUND);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), RL_ENOTFOUND);
	assert_int_equal(sched_colocate_explored(s, A, B), 0);
	sched_learnt rows[64];
	size_t nl = sched_learnt_list(s, 0, rows, 64, NULL);
	for (size_t i = 0; i < nl; i++)
		assert_int_not_equal(rows[i].kind, SCHED_LEARNT_PAIR);

	/* met again: from the prior, so the pair is explored again, and
	 * learnt again */
	sched_learn(s, &ra, &busy);
	sched_learn(s, &rb, &busy);
	assert_int_equal(round_shared(s, 20, 400, 0.5), 1);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	assert_true(fabs(v - 0.5) < 1e-9);
	sched_work_get(s, &w);
	assert_int_equal(w.check_failures, 0);
	sched_free(s);
}

/* What the core forgets is shared among users: one user making new shapes
 * by the thousand (an attacker, or a sweep over a learning rate) keeps its
 * newest share of learn_max, and another user's few shapes, older than
 * all of them, stay with what was learnt of them (a measured pair). */
static void test_forget_fair_among_users(void **state)
{
	(void)state;
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	o.timeslice_refused = 0;
	o.learn_max = 16;
	o.self_check = 1;
	sched *s = fixture_sched(SHARE_RELISH, &o, 1, 40000);
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	/* user 1: A, B (a pair measured to lose) and 3 more shapes */
	enum { MINE = 3, THEIRS = 1000, MANY = 300 };
	sched_request ra = rq(900, A, 0), rb = rq(901, B, 0);
	ra.user = rb.user = 1;
	sched_learn(s, &ra, &busy);
	sched_learn(s, &rb, &busy);
	assert_int_equal(round_shared(s, 1, 0, 0.4), 1);
	for (uint64_t i = 0; i < MINE; i++) {
		sched_request r = rq(950 + i, 500 + i, 10);
		r.user = 1;
		sched_learn(s, &r, &busy);
	}
	/* user 2: MANY new shapes, each used once, after all of user 1's */
	for (uint64_t i = 0; i < MANY; i++) {
		sched_request r = rq(3000 + i, THEIRS + i, 200);
		r.user = 2;
		sched_learn(s, &r, &busy);
	}
	sched_work w;
	sched_work_get(s, &w);
	assert_true(w.forgotten >= MANY - 16);
	sched_shape_info info;
	double v;
	size_t n, theirs = 0;
	assert_int_equal(sched_shape_get(s, A, &info), 0);
	assert_int_equal(sched_shape_get(s, B, &info), 0);
	for (uint64_t i = 0; i < MINE; i++)
		assert_int_equal(sched_shape_get(s, 500 + i, &info), 0);
	assert_int_equal(sched_colocate_pair(s, A, B, &v, &n), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	/* user 2 keeps its newest, no more than the bound (and the eighth
	 * a forgetting waits for) leaves beside user 1's 5 */
	for (uint64_t i = 0; i < MANY; i++)
		theirs += sched_shape_get(s, THEIRS + i, &info) == 0;
	assert_true(theirs >= 16 - 5 && theirs <= 16 - 5 + 16 / 8 + 1);
	assert_int_equal(sched_shape_get(s, THEIRS + MANY - 1, &info), 0);
	assert_int_equal(sched_shape_get(s, THEIRS, &info), RL_ENOTFOUND);

	/* eight more users, each with more than its share (11 users, 16
	 * shapes): each keeps its newest, none is left with none */
	for (uint64_t u = 3; u < 3 + 8; u++)
		for (uint64_t i = 0; i < 4; i++) {
			sched_request r = rq(10000 + u * 10 + i, 20000 + u * 10 + i, 300);
			r.user = (uint32_t)u;
			sched_learn(s, &r, &busy);
		}
	for (uint64_t u = 3; u < 3 + 8; u++)
		assert_int_equal(sched_shape_get(s, 20000 + u * 10 + 3, &info), 0);
	sched_work_get(s, &w);
	assert_int_equal(w.check_failures, 0);
	sched_free(s);
}

/* Pairs derived from groups are made for the window of newest shapes;
 * those of shapes that left it go (else each new shape of a service would
 * add a window's worth of pairs for ever), a measured pair stays, and a
 * shape used again derives its pairs with the window anew. */
static void test_derived_pairs_follow_window(void **state)
{
	(void)state;
	sched *s = mk_group_loses();
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request r3 = rq(906, H3, 0);
	enum { FIRST = 5000, MANY = 1000 };
	for (uint64_t i = 0; i < MANY; i++) {
		sched_request r = rq(3000 + i, FIRST + i, 200);
		sched_learn(s, &r, &busy);
	}
	double v;
	size_t n, found = 0;
	for (uint64_t i = 0; i + 1 < MANY; i++)
		found += sched_colocate_pair(s, FIRST + i, FIRST + i + 1, &v, &n) == 0;
	/* the window's, and what was derived since the last walk (without the
	 * walks: all 999) */
	assert_true(found >= 63 && found < 400);
	assert_int_equal(sched_colocate_pair(s, FIRST, FIRST + 1, &v, &n), RL_ENOTFOUND);
	assert_int_equal(sched_colocate_pair(s, FIRST + MANY - 2, FIRST + MANY - 1, &v, &n), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	assert_int_equal(n, 0); /* derived */
	assert_int_equal(sched_colocate_pair(s, H1, H2, &v, &n), 0); /* measured */
	assert_int_equal(n, 1);
	/* H3 left the window long ago: used again, it pairs with the window */
	assert_int_equal(sched_colocate_pair(s, H3, FIRST + MANY - 1, &v, &n), RL_ENOTFOUND);
	sched_learn(s, &r3, &busy);
	assert_int_equal(sched_colocate_pair(s, H3, FIRST + MANY - 1, &v, &n), 0);
	assert_int_equal(sched_colocate_pair(s, FIRST + MANY - 1, H3, &v, &n), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	sched_free(s);
	use_groups = 0;
}

/* A trial whose every segment shared was never measured alone, so its
 * slowdown could not be told: its group's speed alone stands in when the
 * group's shapes measured alone agree (HPO trials differing by a
 * learning rate run as fast), and nothing is learnt when they disagree. */
static void test_group_lends_speed(void **state)
{
	(void)state;
	use_groups = 1;
	sched *s = mk(1, 40000, -1, 100); /* A, B, C: group 1, 0.1 units/s */
	sched_observation busy = { SEG_OUT_COMPLETED, 2000, 100, 10, 100, 0 };
	sched_request r1 = rq(904, H1, 0), r2 = rq(905, H2, 0);
	sched_learn(s, &r1, &busy);
	sched_learn(s, &r2, &busy); /* group 2 agrees: 0.1 units/s */
	enum { H4 = 44, E = 12, F2 = 13 };
	/* group 1 disagrees once F2 runs twice as fast alone */
	sched_observation fast = busy;
	fast.work = 20;
	sched_request rd = rq(907, F2, 0);
	sched_learn(s, &rd, &fast);
	struct { uint64_t first, fresh; } cases[2] = {{H1, H4}, {A, E}};
	for (int c = 0; c < 2; c++) {
		sched_placement pl[8];
		uint64_t id = 10 + 10 * (uint64_t)c;
		double t = 1000 * (c + 1);
		submit(s, id, cases[c].first, t);
		sched_request r = rq(id + 1, cases[c].fresh, t);
		r.mem_hint_mib = 2000; /* a probe on its hint: it may share */
		rl_err e;
		assert_int_equal(sched_submit(s, &r, &e), 0);
		assert_int_equal(place(s, t, pl), 2);
		assert_int_equal(pl[0].dev[0], pl[1].dev[0]);
		finish(s, id, t + 100, 4);
		finish(s, id + 1, t + 100, 4);
		sched_shape_info info;
		assert_int_equal(sched_shape_get(s, cases[c].fresh, &info), 0);
		assert_true(info.n_alone == 0); /* never measured alone */
	}
	double v;
	size_t n;
	assert_int_equal(sched_colocate_pair(s, H4, H1, &v, &n), 0);
	assert_true(fabs(v - 0.4) < 1e-9);
	assert_int_equal(n, 1);
	assert_int_equal(sched_colocate_pair(s, E, A, &v, &n), RL_ENOTFOUND);
	assert_int_equal(sched_colocate_pair(s, A, E, &v, &n), 0); /* A's own */
	sched_free(s);
	use_groups = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_exploration_no_sharing),
		cmocka_unit_test(test_learn_and_keep_packed),
		cmocka_unit_test(test_loser_separated),
		cmocka_unit_test(test_bounded_per_pair),
		cmocka_unit_test(test_one_per_device),
		cmocka_unit_test(test_memory_and_idle_first),
		cmocka_unit_test(test_tail_is_noise),
		cmocka_unit_test(test_tail_known_taken_out),
		cmocka_unit_test(test_group_stands_in),
		cmocka_unit_test(test_group_loser_kept_apart),
		cmocka_unit_test(test_refused_time_slices),
		cmocka_unit_test(test_slice_not_with_loser),
		cmocka_unit_test(test_learnt_survives_restart),
		cmocka_unit_test(test_group_from_several_shapes),
		cmocka_unit_test(test_forget_bounded),
		cmocka_unit_test(test_forget_fair_among_users),
		cmocka_unit_test(test_derived_pairs_follow_window),
		cmocka_unit_test(test_group_lends_speed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
