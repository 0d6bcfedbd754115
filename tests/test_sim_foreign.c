/*
 * test_sim_foreign.c - foreign load in the simulator (--background): the
 * series reader and its errors, and worked schedules in which memory that
 * others use is placed around, grows under a running segment (which runs
 * out of memory then, and is re-queued, never failed), and goes away.  The
 * same core rules as live (src/sched/mem.c): what the simulator adds is
 * only the series and the physical overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/model.h"
#include "sim/sim.h"
#include "sim/trace.h"

static sim_trace *parse(const char *csv)
{
	sim_trace *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	if (sim_trace_parse(csv, strlen(csv), "t.csv", &t, &err) < 0)
		fail_msg("parse: %s", err.msg);
	return t;
}

static sim_background *bg(const char *csv)
{
	sim_background *b = NULL;
	rl_err err;
	rl_err_clear(&err);
	if (sim_background_parse(csv, "bg.csv", &b, &err) < 0)
		fail_msg("background: %s", err.msg);
	return b;
}

static void expect_bg_error(const char *csv, const char *msg)
{
	sim_background *b = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(sim_background_parse(csv, "bg.csv", &b, &err), RL_EINVAL);
	assert_null(b);
	assert_string_equal(err.msg, msg);
}

typedef struct plog {
	char rows[16][96];
	int n;
} plog;

static void on_place(void *ctx, double now, const sched_request *req, const sched_placement *pl)
{
	plog *l = ctx;
	(void)req;
	if (l->n < 16)
		snprintf(l->rows[l->n++], sizeof l->rows[0], "%.0f %zu/%u gpu%d %llu %s", now,
			 sim_seg_job(pl->seg_id), (unsigned)sim_seg_number(pl->seg_id), pl->dev[0],
			 (unsigned long long)pl->mem_mib, sched_basis_name(pl->basis));
}

static sim_result *run(const sim_trace *t, const sim_background *b, sched_policy p, plog *l)
{
	sim_model *m = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(sim_model_new(t, NULL, &m, &err), 0);
	sim_config c;
	sim_config_default(&c);
	c.n_gpus = 2;
	c.gpu_mem_mib = 8192;
	c.restart_cost_s = 0;
	c.hints = SIM_HINTS_EXACT;
	c.background = b;
	/* the placements below are relish's model around foreign memory;
	 * its time-slice fallback (a segment refused everywhere shares a
	 * device) is test_explore.c's and test_sim.c's */
	c.tune.relish_timeslice = 0;
	c.on_place = on_place;
	c.ctx = l;
	sim_result *r = NULL;
	if (sim_run(t, m, &c, p, &r, &err) < 0)
		fail_msg("sim_run: %s", err.msg);
	sim_model_free(m);
	return r;
}

static void test_reader(void **state)
{
	(void)state;
	sim_background *b = bg("time_s,gpu,mib\n# a comment\n60,1,7000\n\n0,0,6000\n50,0,0\n");
	assert_int_equal(b->n, 3);
	/* sorted by time */
	assert_true(b->step[0].t_s == 0 && b->step[0].gpu == 0 && b->step[0].mib == 6000);
	assert_true(b->step[1].t_s == 50 && b->step[1].mib == 0);
	assert_true(b->step[2].t_s == 60 && b->step[2].gpu == 1 && b->step[2].line == 3);
	sim_background_free(b);
	expect_bg_error("", "bg.csv: empty: expected the header \"time_s,gpu,mib\"");
	expect_bg_error("t,gpu,mib\n", "bg.csv:1: header: expected \"time_s,gpu,mib\"");
	expect_bg_error("time_s,gpu,mib\n5,0\n", "bg.csv:2: mib: expected MiB >= 0, got \"\"");
	expect_bg_error("time_s,gpu,mib\n5,0,1,2\n", "bg.csv:2: expected 3 fields (time_s,gpu,mib)");
	expect_bg_error("time_s,gpu,mib\n\n-1,0,5\n", "bg.csv:3: time_s: expected seconds >= 0, got \"-1\"");
	expect_bg_error("time_s,gpu,mib\n1,0.5,5\n", "bg.csv:2: gpu: expected a GPU index >= 0, got \"0.5\"");

	/* a GPU the cluster does not have */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib\nj,0,10,100\n");
	b = bg("time_s,gpu,mib\n0,5,100\n");
	sim_model *m = NULL;
	rl_err err;
	assert_int_equal(sim_model_new(t, NULL, &m, &err), 0);
	sim_config c;
	sim_config_default(&c);
	c.n_gpus = 2;
	c.background = b;
	sim_result *r = NULL;
	assert_int_equal(sim_run(t, m, &c, SCHED_POLICY_RELISH, &r, &err), RL_EINVAL);
	assert_string_equal(err.msg, "background series, line 2: gpu: expected 0 to 1 (--gpus 2), got 5");
	sim_model_free(m);
	sim_background_free(b);
	sim_trace_free(t);
}

/*
 * Two jobs of 3000 MiB (100 s, 50 % SM, their own experiments), relish,
 * exact hints: reservation 3000 x 1.2 = 3600.  GPU 0 has 6000 MiB of
 * others at first (counted 6600: 1592 free), until t=50; at t=60 GPU 1
 * gets 7000.
 *   t=0   a on GPU 1; b fits nowhere (GPU 0: 1592 free; beside a the
 *         model, which knows neither utilisation yet, sees no gain)
 *   t=50  GPU 0 is free of others: b there
 *   t=60  7000 + a's 3000 > 8192 on GPU 1: a runs out of memory at once,
 *         within its reservation: the others took it; re-queued with no
 *         raise (basis hint again), not failed; GPU 1 has 492 free, GPU 0
 *         holds b: a waits
 *   t=150 b ends; a on GPU 0 (3600, hint); ends at 250.
 */
static void test_relish_around_foreign_load(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct,experiment\n"
			     "a,0,100,1,3000,50,ea\nb,0,100,1,3000,50,eb\n");
	sim_background *b = bg("time_s,gpu,mib\n0,0,6000\n50,0,0\n60,1,7000\n");
	plog l = {0};
	sim_result *r = run(t, b, SCHED_POLICY_RELISH, &l);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.rows[0], "0 0/1 gpu1 3600 hint");
	assert_string_equal(l.rows[1], "50 1/1 gpu0 3600 hint");
	assert_string_equal(l.rows[2], "150 0/2 gpu0 3600 hint");
	assert_int_equal(r->oom_count, 1);
	assert_int_equal(r->oom_foreign_count, 1);
	assert_true(fabs(r->makespan_s - 250) < 1e-9);
	assert_true(fabs(r->jct_s[0] - 250) < 1e-9 && fabs(r->jct_s[1] - 150) < 1e-9);
	sim_result_free(r);

	/* Without the series: both at once, nothing lost. */
	plog l2 = {0};
	r = run(t, NULL, SCHED_POLICY_RELISH, &l2);
	assert_int_equal(r->oom_count, 0);
	assert_true(fabs(r->makespan_s - 100) < 1e-9);
	sim_result_free(r);
	sim_background_free(b);
	sim_trace_free(t);
}

/*
 * exclusive: a whole device is what others leave.  One job of 3000 MiB;
 * GPU 0 has 500 MiB of others, GPU 1 none: it takes GPU 1 (the least used
 * by others) with all 8192.  With 500 on both, it takes GPU 0 with 8192 -
 * 564 = 7628 and completes (3000 fit).
 */
static void test_exclusive_takes_what_others_leave(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib\nj,0,100,3000\n");
	sim_background *b = bg("time_s,gpu,mib\n0,0,500\n");
	plog l = {0};
	sim_result *r = run(t, b, SCHED_POLICY_EXCLUSIVE, &l);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.rows[0], "0 0/1 gpu1 8192 exclusive");
	assert_int_equal(r->oom_count, 0);
	sim_result_free(r);
	sim_background_free(b);
	b = bg("time_s,gpu,mib\n0,0,500\n0,1,500\n");
	plog l2 = {0};
	r = run(t, b, SCHED_POLICY_EXCLUSIVE, &l2);
	assert_string_equal(l2.rows[0], "0 0/1 gpu0 7628 exclusive");
	assert_int_equal(r->oom_count, 0);
	sim_result_free(r);
	sim_background_free(b);
	sim_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader),
		cmocka_unit_test(test_relish_around_foreign_load),
		cmocka_unit_test(test_exclusive_takes_what_others_leave),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
