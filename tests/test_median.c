/*
 * test_median.c - the median stopping rule against a worked example:
 * grace, the warm-up below min, best-so-far versus latest value, ties.
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
 * min 1, max 4, segment 1, grace 2.  "others" are the other trials'
 * best-so-far up to r among those that reported at r.
 *   trial r  loss  own best  others at r            median  decision   next
 *   t0    1  .80   .80       -                      -       continue   2
 *   t1    1  .60   .60       .80 (1 < grace)        -       continue   2
 *   t2    1  .90   .90       .80 .60                .70     stop       1
 *   t3    1  .70   .70       .80 .60 .90            .80     continue   2
 *   t0    2  .50   .50       -                      -       continue   3
 *   t1    2  .65   .60       .50 (1 < grace)        -       continue   3
 *   t3    2  .62   .62       .50 .60                .55     stop       2
 *   t4    1  .55   .55       .80 .60 .90 .70        .75     continue   2
 *   t4    2  .61   .55       .50 .60 .62            .60     continue   3  (latest .61 would stop)
 *   t0    3  .45   .45       -                      -       continue   4
 *   t1    3  .58   .58       .45 (1 < grace)        -       continue   4
 *   t4    3  .70   .55       .45 .58                .515    stop       3
 *   t0    4  .40   -         max                    -       complete   4
 */
static const step worked[] = {
	{0, 1, .80, DECIDE_CONTINUE, 2}, {1, 1, .60, DECIDE_CONTINUE, 2},
	{2, 1, .90, DECIDE_STOP, 1},     {3, 1, .70, DECIDE_CONTINUE, 2},
	{0, 2, .50, DECIDE_CONTINUE, 3}, {1, 2, .65, DECIDE_CONTINUE, 3},
	{3, 2, .62, DECIDE_STOP, 2},     {4, 1, .55, DECIDE_CONTINUE, 2},
	{4, 2, .61, DECIDE_CONTINUE, 3}, {0, 3, .45, DECIDE_CONTINUE, 4},
	{1, 3, .58, DECIDE_CONTINUE, 4}, {4, 3, .70, DECIDE_STOP, 3},
	{0, 4, .40, DECIDE_COMPLETE, 4},
};


static void test_worked_example(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_MEDIAN, 1, 4, 3, 1, 2);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_string_equal(stopper_name(s), "median");
	assert_true(stopper_first_target(s, 0) == 1);
	check_steps(s, worked, sizeof worked / sizeof worked[0]);
	stopper_free(s);
}

/* Replaying the first eight steps (in reverse) leaves the same state. */
static void test_replay(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_MEDIAN, 1, 4, 3, 1, 2);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	for (size_t i = 8; i-- > 0;)
		assert_int_equal(stopper_record(s, worked[i].trial, worked[i].resource,
						worked[i].loss, &err), 0);
	check_steps(s, worked + 8, sizeof worked / sizeof worked[0] - 8);
	stopper_free(s);
}

/* min 2 is a warm-up: nothing is judged at 1 even with grace met; a loss
 * equal to the median is not worse (values are exact in binary so the
 * tie is a real tie).  Segment 0 steps by min. */
static void test_warmup_and_ties(void **state)
{
	(void)state;
	spec sp = schedule_spec(SCHED_MEDIAN, 2, 5, 3, 1, 1);
	stopper *s;
	rl_err err;
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	/*  trial r  loss   others at r           median  decision
	 *  t0    1  .25    -                     -       continue (no one else)
	 *  t1    1  .75    .25                   -       continue (1 < min = 2)
	 *  t0    2  .25    -                     -       continue
	 *  t1    2  .75    .25                   .25     stop
	 *  t2    2  .25    .25 .75               .5      continue
	 *  t3    2  .5     .25 .75 .25           .25     stop
	 *  t4    2  .375   .25 .75 .25 .5        .375    continue (tie) */
	static const step st[] = {
		{0, 1, .25, DECIDE_CONTINUE, 2}, {1, 1, .75, DECIDE_CONTINUE, 2},
		{0, 2, .25, DECIDE_CONTINUE, 3}, {1, 2, .75, DECIDE_STOP, 2},
		{2, 2, .25, DECIDE_CONTINUE, 3}, {3, 2, .5, DECIDE_STOP, 2},
		{4, 2, .375, DECIDE_CONTINUE, 3},
	};
	check_steps(s, st, sizeof st / sizeof st[0]);
	stopper_free(s);

	sp = schedule_spec(SCHED_MEDIAN, 2, 5, 3, 0, 5);
	assert_int_equal(stopper_new(&sp, &s, &err), 0);
	assert_true(stopper_first_target(s, 0) == 2);
	assert_true(stopper_next_target(s, 0, 2) == 4);
	assert_true(stopper_next_target(s, 0, 4) == 5);
	stopper_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_worked_example),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_warmup_and_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
