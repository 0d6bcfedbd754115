/*
 * test_asha.c - ASHA decisions against a worked example written out by
 * hand, segment splitting between rungs, replay after a restart, and the
 * checks on the schedule section.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "search/stopper.h"
#include "stopper_steps.h"



/*
 * min = 1, max = 27, eta = 3: rungs 1, 3, 9, 27.  At a rung with n values
 * (this one included) the top max(1, floor(n/3)) are promoted; rank counts
 * only strictly smaller losses, so ties promote.
 *
 *  #  trial  r   loss  values at rung r (after)           n top rank  decision next
 *  0  t0     1   0.50  .50                                1  1   1    promote  3
 *  1  t1     1   0.60  .50 .60                            2  1   2    stop     1
 *  2  t2     1   0.40  .50 .60 .40                        3  1   1    promote  3
 *  3  t3     1   0.45  .50 .60 .40 .45                    4  1   2    stop     1
 *  4  t0     3   0.30  .30                                1  1   1    promote  9
 *  5  t4     1   0.35  +.35                               5  1   1    promote  3
 *  6  t5     1   0.42  +.42                               6  2   3    stop     1
 *  7  t6     1   0.38  +.38                               7  2   2    promote  3
 *  8  t2     3   0.32  .30 .32                            2  1   2    stop     3
 *  9  t4     3   0.25  .30 .32 .25                        3  1   1    promote  9
 * 10  t0     9   0.20  .20                                1  1   1    promote  27
 * 11  t6     3   0.30  .30 .32 .25 .30 (tie with t0)      4  1   2    stop     3
 * 12  t7     1   0.35  ties t4's .35: rank 1              8  2   1    promote  3
 * 13  t4     9   0.22  .20 .22                            2  1   2    stop     9
 * 14  t0     27  0.15  max reached                        -  -   -    complete 27
 * 15  t8     1   0.90  worst of 9                         9  3   9    stop     1
 * 16  t7     3   0.26  .30 .32 .25 .30 .26                5  1   2    stop     3
 */
static const step worked[] = {
	{0, 1, 0.50, DECIDE_PROMOTE, 3},   {1, 1, 0.60, DECIDE_STOP, 1},
	{2, 1, 0.40, DECIDE_PROMOTE, 3},   {3, 1, 0.45, DECIDE_STOP, 1},
	{0, 3, 0.30, DECIDE_PROMOTE, 9},   {4, 1, 0.35, DECIDE_PROMOTE, 3},
	{5, 1, 0.42, DECIDE_STOP, 1},      {6, 1, 0.38, DECIDE_PROMOTE, 3},
	{2, 3, 0.32, DECIDE_STOP, 3},      {4, 3, 0.25, DECIDE_PROMOTE, 9},
	{0, 9, 0.20, DECIDE_PROMOTE, 27},  {6, 3, 0.30, DECIDE_STOP, 3},
	{7, 1, 0.35, DECIDE_PROMOTE, 3},   {4, 9, 0.22, DECIDE_STOP, 9},
	{0, 27, 0.15, DECIDE_COMPLETE, 27}, {8, 1, 0.90, DECIDE_STOP, 1},
	{7, 3, 0.26, DECIDE_STOP, 3},
};
#define N_WORKED (sizeof worked / sizeof worked[0])


static void test_worked_example(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_ASHA, 1, 27, 3, 0, 5);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_string_equal(stopper_name(s), "asha");
	assert_true(stopper_first_target(s, 0) == 1);
	assert_true(stopper_first_target(s, 41) == 1);
	for (size_t i = 0; i < N_WORKED; i++)
		check_step(s, &worked[i], i);
	stopper_free(s);
}

/* After a restart the engine replays stored history with stopper_record in
 * whatever order the store returns it; later decisions must not change. */
static void test_replay_matches(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_ASHA, 1, 27, 3, 0, 5);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	const size_t half = 9;
	/* Replay the first half backwards: the state is a set, order is moot. */
	for (size_t i = half; i-- > 0;)
		assert_int_equal(stopper_record(s, worked[i].trial, worked[i].resource,
						worked[i].loss, &err), 0);
	/* A re-run boundary (same trial, same rung) replaces, not adds. */
	assert_int_equal(stopper_record(s, worked[0].trial, worked[0].resource, worked[0].loss,
					&err), 0);
	for (size_t i = half; i < N_WORKED; i++)
		check_step(s, &worked[i], i);
	stopper_free(s);
}

/* The replay check has teeth: the same later boundary is decided
 * differently when one replayed value is corrupted. */
static void test_replay_detects_difference(void **state)
{
	(void)state;
	rl_err err;
	for (int corrupt = 0; corrupt <= 1; corrupt++) {
		spec sp = schedule_spec(SCHED_ASHA, 1, 27, 3, 0, 5);
		stopper *s;
		assert_int_equal(stopper_new(&sp, &s, &err), 0);
		for (size_t i = 0; i < 9; i++)
			assert_int_equal(stopper_record(s, worked[i].trial, worked[i].resource,
							corrupt && i == 4 ? 0.99 : worked[i].loss,
							&err), 0);
		/* Rung 3 holds t0 .30 and t2 .32; t9 arrives with .31: n = 3, top 1,
		 * rank 2 -> stop.  With t0's value corrupted to .99, rank 1 -> promote. */
		stop_decision d;
		double next;
		assert_int_equal(stopper_decide(s, 9, 3, 0.31, &d, &next, &err), 0);
		assert_int_equal(d, corrupt ? DECIDE_PROMOTE : DECIDE_STOP);
		/* A NaN loss ranks last. */
		assert_int_equal(stopper_decide(s, 10, 1, NAN, &d, &next, &err), 0);
		assert_int_equal(d, DECIDE_STOP);
		stopper_free(s);
	}
}

/* segment = 2 splits the gaps between rungs: 0-1, 1-3, 3-5-7-9, 9-11-...-27. */
static void test_segments_between_rungs(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_ASHA, 1, 27, 3, 2, 5);
	stopper *s;
	rl_err err;
	stop_decision d;
	double next;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 0) == 1);
	assert_int_equal(stopper_decide(s, 0, 1, 0.5, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_PROMOTE);
	assert_true(next == 3);
	assert_int_equal(stopper_decide(s, 0, 3, 0.4, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_PROMOTE);
	assert_true(next == 5);
	assert_int_equal(stopper_decide(s, 0, 5, 0.9, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_CONTINUE); /* not a rung: never judged */
	assert_true(next == 7);
	assert_int_equal(stopper_decide(s, 0, 7, 0.9, &d, &next, &err), 0);
	assert_true(next == 9);
	assert_true(stopper_next_target(s, 0, 25) == 27);
	assert_true(stopper_next_target(s, 0, 27) == 27);
	stopper_free(s);

	/* segment larger than min: the first segment still ends at rung 0. */
	sp = schedule_spec(SCHED_ASHA, 2, 20, 3, 5, 5);
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 0) == 2);
	assert_true(stopper_next_target(s, 0, 2) == 6);   /* rung 6 < 2 + 5 */
	assert_true(stopper_next_target(s, 0, 6) == 11);
	assert_true(stopper_next_target(s, 0, 11) == 16);
	assert_true(stopper_next_target(s, 0, 16) == 18); /* rung 18 */
	assert_true(stopper_next_target(s, 0, 18) == 20); /* max is the last rung */
	stopper_free(s);
}

static void test_none_segments(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_ASHA, 1, 10, 3, 0, 5);
	sp.schedule.algorithm = SCHED_NONE;
	stopper *s;
	rl_err err;
	stop_decision d;
	double next;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 3) == 10); /* one segment 0..max */
	assert_int_equal(stopper_decide(s, 3, 10, 0.1, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_COMPLETE);
	stopper_free(s);
	sp.schedule.segment = 4;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 0) == 4);
	assert_int_equal(stopper_decide(s, 0, 4, 100, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_CONTINUE);
	assert_true(next == 8);
	assert_int_equal(stopper_decide(s, 0, 8, 100, &d, &next, &err), 0);
	assert_true(next == 10);
	stopper_free(s);
}

static void test_bad_schedule(void **state)
{
	(void)state;
	static const struct {
		double min, max, eta, segment;
		const char *want;
	} rows[] = {
		{1, 27, 1, 0, "exp.yaml: schedule.reduction_factor: expected a number > 1, got 1"},
		{0, 27, 3, 0, "exp.yaml: schedule.min: expected a number > 0, got 0"},
		{5, 4, 3, 0, "exp.yaml: schedule.min: expected at most schedule.max (4), got 5"},
		{1, 0, 3, 0, "exp.yaml: schedule.max: expected a positive number, got 0"},
		{1, 9, 3, -1, "exp.yaml: schedule.segment: expected a number >= 0, got -1"},
		{1, NAN, 3, 0, "exp.yaml: schedule.max: expected a positive number, got nan"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		spec sp = schedule_spec(SCHED_ASHA, rows[i].min, rows[i].max, rows[i].eta, rows[i].segment, 5);
		stopper *s = NULL;
		rl_err err;
		rl_err_clear(&err);
		assert_int_equal(stopper_new(&sp, &s, &err), RL_ESPEC);
		assert_null(s);
		assert_string_equal(err.msg, rows[i].want);
	}
	spec sp = schedule_spec(SCHED_ASHA, 1, 9, 3, 0, 5);
	stopper *s;
	rl_err err;
	stop_decision d;
	double next;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_int_equal(stopper_decide(s, 0, 0, 0.1, &d, &next, &err), RL_EINVAL);
	assert_int_equal(stopper_decide(s, 0, NAN, 0.1, &d, &next, &err), RL_EINVAL);
	stopper_free(s);
	stopper_free(NULL);
}

/* Non-integer eta and max off the geometric ladder: rungs 1, 2.5, 6.25, 10. */
static void test_rungs_real_eta(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_ASHA, 1, 10, 2.5, 0, 5);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 0) == 1);
	assert_true(stopper_next_target(s, 0, 1) == 2.5);
	assert_true(stopper_next_target(s, 0, 2.5) == 6.25);
	assert_true(stopper_next_target(s, 0, 6.25) == 10);
	/* floor(5 / 2.5) = 2: with five values the two best are promoted. */
	const double loss[5] = {0.5, 0.4, 0.3, 0.2, 0.45};
	const stop_decision want[5] = {DECIDE_PROMOTE, DECIDE_PROMOTE, DECIDE_PROMOTE,
				       DECIDE_PROMOTE, DECIDE_STOP};
	/* n=1 top1 rank1; n=2 top1 rank1; n=3 top1 rank1; n=4 top1 rank1;
	 * n=5 top2: .2 .3 .4 better than .45 -> rank 4: stop. */
	for (int i = 0; i < 5; i++) {
		stop_decision d;
		double next;
		assert_int_equal(stopper_decide(s, (uint64_t)i, 1, loss[i], &d, &next, &err), 0);
		assert_int_equal(d, want[i]);
	}
	stop_decision d;
	double next;
	assert_int_equal(stopper_decide(s, 5, 1, 0.25, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_PROMOTE); /* n=6 top 2, rank 2 */
	stopper_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_replay_matches),
		cmocka_unit_test(test_replay_detects_difference),
		cmocka_unit_test(test_segments_between_rungs),
		cmocka_unit_test(test_none_segments),
		cmocka_unit_test(test_bad_schedule),
		cmocka_unit_test(test_rungs_real_eta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
