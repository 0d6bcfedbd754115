/*
 * test_hyperband.c - Hyperband bracket weights and assignment, worked out
 * by hand, and a worked sequence of decisions showing that every bracket
 * keeps its own rung records.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "search/stopper.h"
#include "stopper_steps.h"


/*
 * min 1, max 9, eta 3: s_max = floor(log3 9) = 2, three brackets.
 *   bracket b  first rung  s = 2-b  n_b = ceil(3 * 3^s / (s+1))
 *   0          1           2        ceil(27/3) = 9
 *   1          3           1        ceil(9/2)  = 5
 *   2          9           0        ceil(3/1)  = 3      W = 17
 * Smooth weighted round-robin (credits += 9,5,3; the largest takes the
 * index and pays 17; ties to the lower bracket):
 *   idx     0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16
 *   credit  9 10 10 12 11 13 12  7 13 16 14  9 15  8 16 12 17   (winner's, before paying)
 *   bracket 0  1  0  2  0  1  0  2  0  1  0  1  0  2  0  1  0
 */
static const size_t want_bracket[17] = {0, 1, 0, 2, 0, 1, 0, 2, 0, 1, 0, 1, 0, 2, 0, 1, 0};

static void test_brackets(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_HYPERBAND, 1, 9, 3, 0, 5);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_string_equal(stopper_name(s), "hyperband");
	assert_int_equal(hyperband_n_brackets(s), 3);
	assert_int_equal(hyperband_bracket_weight(s, 0), 9);
	assert_int_equal(hyperband_bracket_weight(s, 1), 5);
	assert_int_equal(hyperband_bracket_weight(s, 2), 3);
	for (uint64_t i = 0; i < 17; i++) {
		assert_int_equal(hyperband_bracket_of(s, i), want_bracket[i]);
		assert_int_equal(hyperband_bracket_of(s, i + 17), want_bracket[i]); /* periodic */
		static const double first[3] = {1, 3, 9};
		assert_true(stopper_first_target(s, i) == first[want_bracket[i]]);
	}
	stopper_free(s);

	/* min 1, max 27, eta 3: s_max 3, n_b = ceil(4*27/4), ceil(4*9/3),
	 * ceil(4*3/2), ceil(4*1/1) = 27, 12, 6, 4. */
	sp = schedule_spec(SCHED_HYPERBAND, 1, 27, 3, 0, 5);
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_int_equal(hyperband_n_brackets(s), 4);
	assert_int_equal(hyperband_bracket_weight(s, 0), 27);
	assert_int_equal(hyperband_bracket_weight(s, 1), 12);
	assert_int_equal(hyperband_bracket_weight(s, 2), 6);
	assert_int_equal(hyperband_bracket_weight(s, 3), 4);
	size_t count[4] = {0};
	for (uint64_t i = 0; i < 49; i++)
		count[hyperband_bracket_of(s, i)]++;
	assert_int_equal(count[0], 27);
	assert_int_equal(count[1], 12);
	assert_int_equal(count[2], 6);
	assert_int_equal(count[3], 4);
	stopper_free(s);

	/* max == min: one bracket that trains straight to max. */
	sp = schedule_spec(SCHED_HYPERBAND, 4, 4, 3, 0, 5);
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_int_equal(hyperband_n_brackets(s), 1);
	assert_true(stopper_first_target(s, 5) == 4);
	stopper_free(s);

	/* Too many brackets is a spec error naming the field. */
	sp = schedule_spec(SCHED_HYPERBAND, 1, 1e6, 1.01, 0, 5);
	assert_int_equal(stopper_new(&sp, &s, &err), RL_ESPEC);
	assert_non_null(strstr(err.msg, "schedule: hyperband"));
}


/*
 * Same config (brackets of trials from the table above):
 *  trial(b)  r  loss  records of that bracket's rung r   decision  next
 *  t0 (0)    1  .50   b0@1: .50                           promote   3
 *  t2 (0)    1  .60   b0@1: .50 .60  n2 top1 rank2        stop      1
 *  t1 (1)    3  .70   b1@3: .70                           promote   9
 *  t0 (0)    3  .80   b0@3: .80 (b1's .70 not counted)    promote   9
 *  t3 (2)    9  .30   max                                 complete  9
 *  t5 (1)    3  .65   b1@3: .70 .65  rank1                promote   9
 *  t9 (1)    3  .90   b1@3: n3 top1 rank3                 stop      3
 *  t4 (0)    1  .55   b0@1: .50 .60 .55  rank2            stop      1
 *  t6 (0)    1  .45   b0@1: n4 top1 rank1                 promote   3
 *  t8 (0)    1  .52   b0@1: n5 top1 rank3                 stop      1
 *  t10 (0)   1  .48   b0@1: n6 top2 rank2 (.45 better)    promote   3
 *  t1 (1)    9  .20   max                                 complete  9
 */
static const step worked[] = {
	{0, 1, .50, DECIDE_PROMOTE, 3}, {2, 1, .60, DECIDE_STOP, 1},
	{1, 3, .70, DECIDE_PROMOTE, 9}, {0, 3, .80, DECIDE_PROMOTE, 9},
	{3, 9, .30, DECIDE_COMPLETE, 9}, {5, 3, .65, DECIDE_PROMOTE, 9},
	{9, 3, .90, DECIDE_STOP, 3},    {4, 1, .55, DECIDE_STOP, 1},
	{6, 1, .45, DECIDE_PROMOTE, 3}, {8, 1, .52, DECIDE_STOP, 1},
	{10, 1, .48, DECIDE_PROMOTE, 3}, {1, 9, .20, DECIDE_COMPLETE, 9},
};

static void test_worked_decisions(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_HYPERBAND, 1, 9, 3, 0, 5);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	check_steps(s, worked, sizeof worked / sizeof worked[0]);
	stopper_free(s);
}

/* Segments split the gaps of a bracket's own ladder: bracket 1 of the
 * config above with segment 2 ends segments at 2, 3, 5, 7, 9. */
static void test_bracket_segments(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_HYPERBAND, 1, 9, 3, 2, 5);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 1) == 2);
	assert_true(stopper_next_target(s, 1, 2) == 3);
	assert_true(stopper_next_target(s, 1, 3) == 5);
	assert_true(stopper_next_target(s, 1, 5) == 7);
	assert_true(stopper_next_target(s, 1, 7) == 9);
	stop_decision d;
	double next;
	assert_int_equal(stopper_decide(s, 1, 2, 5.0, &d, &next, &err), 0);
	assert_int_equal(d, DECIDE_CONTINUE); /* 2 is no rung of bracket 1 */
	assert_true(next == 3);
	assert_true(stopper_first_target(s, 3) == 2); /* bracket 2: 0-2-4-6-8-9 */
	assert_true(stopper_next_target(s, 3, 8) == 9);
	stopper_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_brackets),
		cmocka_unit_test(test_worked_decisions),
		cmocka_unit_test(test_bracket_segments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
