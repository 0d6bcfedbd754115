/*
 * test_sim.c - the simulator: trace parsing and its errors, the co-location
 * model, and small scenario traces replayed through the real core with
 * schedules computed by hand (worked out in the comments), memory honesty
 * (out-of-memory then recovery), gangs, and determinism.
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
#include <unistd.h>

#include "sim/model.h"
#include "sim/sim.h"
#include "sim/trace.h"

static sim_trace *parse(const char *csv)
{
	sim_trace *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = sim_trace_parse(csv, strlen(csv), "t.csv", &t, &err);
	if (rc < 0)
		fail_msg("parse: %s", err.msg);
	return t;
}

static sim_result *run(const sim_trace *t, const sim_model *m, const sim_config *c,
		       sched_policy p)
{
	sim_result *r = NULL;
	rl_err err;
	rl_err_clear(&err);
	if (sim_run(t, m, c, p, &r, &err) < 0)
		fail_msg("sim_run: %s", err.msg);
	return r;
}

static void expect_parse_error(const char *csv, const char *needle)
{
	sim_trace *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(sim_trace_parse(csv, strlen(csv), "t.csv", &t, &err), RL_EPARSE);
	assert_null(t);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_trace_formats(void **state)
{
	(void)state;
	/* The plain format, with an experiment and a hint. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct,experiment,mem_hint_mib\n"
			     "a,0,100,1,4000,50,e1,\n"
			     "b,5,200,2,3000,40,e1,3500\n"
			     "c,7,300,1,2000,,,\n");
	assert_int_equal(t->n_jobs, 3);
	assert_int_equal(t->n_exps, 2);
	assert_int_equal(t->jobs[1].num_gpus, 2);
	assert_int_equal(t->jobs[1].mem_hint_mib, 3500);
	assert_int_equal(t->jobs[1].has_hint, 1);
	assert_int_equal(t->jobs[0].has_hint, 0);
	assert_true(t->jobs[2].util_pct == 100.0); /* default */
	assert_int_equal(t->jobs[0].exp, t->jobs[1].exp);
	assert_true(t->exps[t->jobs[0].exp].hpo);
	assert_false(t->exps[t->jobs[2].exp].hpo); /* a lone job */
	assert_int_equal(t->jobs[0].profile, -1);
	sim_trace_free(t);

	/* The Philly columns (aliases), hpo_like = 0 splits a burst. */
	t = parse("job_id,user,submit_time_s,duration_s,num_gpus,status,burst_id,burst_size,hpo_like,"
		  "gpu_mem_mib_avg,gpu_util_pct_avg,gmem_bw_util_pct_avg,profile_model,profile_dataset,"
		  "profile_batchsize,profile_amp,profile_label\n"
		  "p-1,u1,0,10,1,Pass,b0,2,1,3216,86.1,33.9,MobileNetV3,ImageNet,128,1,1\n"
		  "p-2,u1,3,20,1,Pass,b0,2,1,2706,52.4,18.1,MobileNetV3,ImageNet,64,1,0\n"
		  "p-3,u2,9,30,1,Failed,b1,2,0,2706,52.4,18.1,MobileNetV3,ImageNet,64,1,0\n");
	assert_int_equal(t->n_jobs, 3);
	assert_int_equal(t->n_exps, 2);
	assert_int_equal(t->n_profiles, 2);
	assert_int_equal(t->jobs[0].mem_mib, 3216);
	assert_int_equal(t->jobs[1].profile, t->jobs[2].profile);
	assert_int_equal(sim_trace_find_profile(t, "MobileNetV3", "ImageNet", 64, 1), t->jobs[1].profile);
	assert_int_equal(sim_trace_find_profile(t, "MobileNetV3", "ImageNet", 32, 1), -1);
	sim_trace_free(t);
}

static void test_trace_errors(void **state)
{
	(void)state;
	expect_parse_error("job_id,submit_time_s,duration_s\nx,0,1\n",
			   "t.csv:1: header: missing column 'gpu_mem_mib'");
	expect_parse_error("job_id,submit_time_s,duration_s,gpu_mem_mib\na,0,10,100\nb,1,-5,100\n",
			   "t.csv:3: duration_s: expected a number of seconds > 0, got \"-5\"");
	expect_parse_error("job_id,submit_time_s,duration_s,gpu_mem_mib,num_gpus\na,0,10,100,0\n",
			   "t.csv:2: num_gpus: expected an integer from 1 to 4096, got \"0\"");
	expect_parse_error("job_id,submit_time_s,duration_s,gpu_mem_mib,gpu_util_pct\na,0,10,100,150\n",
			   "t.csv:2: gpu_util_pct: expected a percentage in (0, 100], got \"150\"");
	expect_parse_error("job_id,submit_time_s,duration_s,gpu_mem_mib\n", "t.csv: no jobs");
	expect_parse_error("job_id,submit_time_s,duration_s,gpu_mem_mib\na,0,10\n",
			   "t.csv:2: expected at least 4 fields, got 3");
}

static void test_model(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib,gpu_util_pct,model,dataset,batchsize,amp\n"
			     "a,0,10,100,60,M,D,32,0\n"
			     "b,0,10,100,80,N,D,64,1\n"
			     "c,0,10,100,30,,,,\n"
			     "d,0,10,100,30,,,,\n");
	char path[] = "/tmp/relish-test-coloc-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	FILE *f = fdopen(fd, "w");
	fputs(",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem\n"
	      "0,M,D,1,32,0,0.9,N,D,1,64,1,1.2,90,30,5000\n"
	      "1,X,D,1,32,0,0.5,N,D,1,64,1,0.5,90,30,5000\n", f);
	fclose(f);
	sim_model *m = NULL;
	rl_err err;
	assert_int_equal(sim_model_new(t, path, &m, &err), 0);
	unlink(path);
	assert_int_equal(sim_model_pair_count(m), 2); /* X is not in the trace */
	size_t b = 1, a = 0, c = 2, d = 3;
	assert_true(fabs(sim_model_speed(m, a, &b, 1) - 0.9) < 1e-6);  /* measured */
	assert_true(sim_model_speed(m, b, &a, 1) == 1.0);               /* 1.2 clamped */
	assert_true(sim_model_speed(m, c, &a, 1) == 1.0);               /* 30 + 60 <= 100 */
	assert_true(fabs(sim_model_speed(m, a, &c, 1) - 1.0) < 1e-12);
	/* fallback 100 / (80 + 30) */
	assert_true(fabs(sim_model_speed(m, b, &c, 1) - 100.0 / 110) < 1e-12);
	/* three on a GPU: min(product of pairs, 100 / sum of utils)
	 * c beside a (1.0) and d (1.0): product 1, cap 100 / 120 */
	size_t ad[2] = {0, 3};
	assert_true(fabs(sim_model_speed(m, c, ad, 2) - 100.0 / 120) < 1e-12);
	/* a beside b (0.9) and c (1.0): product 0.9 < cap 100 / 170? no: cap 0.588 */
	size_t bc[2] = {1, 2};
	assert_true(fabs(sim_model_speed(m, a, bc, 2) - 100.0 / 170) < 1e-12);
	(void)d;
	sim_model_free(m);
	sim_trace_free(t);
}

/* The pair table read from memory: lines of any length (a line past 1 KiB
 * was once cut in two and its tail taken for a row), CRLF, no final
 * newline; empty or out-of-range integers are errors naming the line. */
static void test_model_parse(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib,gpu_util_pct,model,dataset,batchsize,amp\n"
			     "a,0,10,100,60,M,D,32,0\n"
			     "b,0,10,100,80,N,D,64,1\n");
	char text[4096];
	char pad[2048];
	memset(pad, 'x', sizeof pad - 1);
	pad[sizeof pad - 1] = '\0';
	snprintf(text, sizeof text,
		 ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,speed2,note\r\n"
		 "0,M,D,1,32,0,0.9,N,D,1,64,1,0.7,%s\r\n"
		 "1,N,D,1,64,1,0.6,N,D,1,64,1,0.6", pad);
	sim_model *m = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(sim_model_parse(t, text, strlen(text), "c.csv", &m, &err), 0);
	assert_int_equal(sim_model_pair_count(m), 3);
	assert_true(fabs(sim_model_pair(m, 0, 1) - 0.9) < 1e-6);
	assert_true(fabs(sim_model_pair(m, 1, 0) - 0.7) < 1e-6);
	assert_true(fabs(sim_model_pair(m, 1, 1) - 0.6) < 1e-6);
	sim_model_free(m);

	/* Through a file too (sim_model_new reads it whole). */
	char path[] = "/tmp/relish-test-coloc-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(sim_model_new(t, path, &m, &err), 0);
	unlink(path);
	assert_int_equal(sim_model_pair_count(m), 3);
	sim_model_free(m);

	static const struct {
		const char *row, *msg;
	} bad[] = {
		{"0,M,D,1,,0,0.9,N,D,1,64,1,0.7", "c.csv:2: batchsize/amp/speed: expected integers and positive speeds"},
		{"0,M,D,1,32,0,0.9,N,D,1,99999999999,1,0.7", "c.csv:2: batchsize/amp/speed: expected integers and positive speeds"},
		{"0,M,D,1,32,0,nan,N,D,1,64,1,0.7", "c.csv:2: batchsize/amp/speed: expected integers and positive speeds"},
		{"0,M,D,1,32,0,0.9", "c.csv:2: expected 13 fields, got 7"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		snprintf(text, sizeof text,
			 ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,speed2\n%s\n",
			 bad[i].row);
		m = (sim_model *)&err; /* untouched on failure */
		rl_err_clear(&err);
		assert_int_equal(sim_model_parse(t, text, strlen(text), "c.csv", &m, &err), RL_EPARSE);
		assert_ptr_equal(m, (sim_model *)&err);
		assert_string_equal(err.msg, bad[i].msg);
	}
	assert_int_equal(sim_model_parse(t, "model1", 6, "c.csv", &m, &err), RL_EPARSE);
	assert_non_null(strstr(err.msg, "c.csv:1: header"));
	sim_trace_free(t);
}

static sim_config small_config(int gpus, uint64_t mem)
{
	sim_config c;
	sim_config_default(&c);
	c.n_gpus = gpus;
	c.gpu_mem_mib = mem;
	c.segment_s = 1000;
	c.restart_cost_s = 0;
	c.hints = SIM_HINTS_EXACT;
	return c;
}

#define FOUR_JOBS                                                              \
	"job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct\n" \
	"j1,0,100,1,4000,60\n"                                                 \
	"j2,0,200,1,4000,60\n"                                                 \
	"j3,0,300,1,4000,60\n"                                                 \
	"j4,10,100,1,4000,60\n"

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-6)
		fail_msg("got %.9f, want %.9f", got, want);
}

static void test_exclusive_schedule(void **state)
{
	(void)state;
	/* 2 GPUs.  t=0: j1 -> GPU, j2 -> GPU, j3 waits.  t=10: j4 waits
	 * behind j3.  t=100: j1 ends, j3 starts (ends 400).  t=200: j2
	 * ends, j4 starts (ends 300).  JCT 100, 200, 400, 290; queue 0, 0,
	 * 100, 190. */
	sim_trace *t = parse(FOUR_JOBS);
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(2, 10000);
	sim_result *r = run(t, m, &c, SCHED_POLICY_EXCLUSIVE);
	assert_near(r->jct_s[0], 100);
	assert_near(r->jct_s[1], 200);
	assert_near(r->jct_s[2], 400);
	assert_near(r->jct_s[3], 290);
	assert_near(r->makespan_s, 400);
	assert_near(r->mean_jct_s, 247.5);
	assert_near(r->median_jct_s, 245);
	assert_near(r->p95_jct_s, 400);
	assert_near(r->mean_queue_s, 72.5);
	assert_int_equal(r->oom_count, 0);
	/* bound: max(submit + duration) = 300; memory area is smaller */
	assert_near(r->lower_bound_makespan_s, 300);
	/* busy GPU-seconds: 100 + 200 + 300 + 100 = 700 over 2 x 400 */
	assert_near(r->gpu_busy, 700.0 / 800);
	/* memory used: 4000 MiB x 700 s over 2 x 10000 x 400 */
	assert_near(r->gpu_mem_util, 4000.0 * 700 / (2 * 10000.0 * 400));
	assert_near(r->gpu_compute_util, 0.6 * 700 / 800);
	sim_result_free(r);
	sim_model_free(m);
	sim_trace_free(t);
}

/* on_place observer: the placements CSV (`relish simulate --placements`). */
typedef struct csv_log {
	const sim_trace *t;
	char text[1024];
} csv_log;

static void log_row(void *ctx, double now, const sched_request *req, const sched_placement *pl)
{
	csv_log *lg = ctx;
	size_t k = strlen(lg->text);
	assert_true(sim_seg_job(req->seg_id) < lg->t->n_jobs);
	assert_true(sim_placement_csv_row(lg->t, now, pl, lg->text + k, sizeof lg->text - k) <
		    (int)(sizeof lg->text - k));
}

static void test_pack_schedule(void **state)
{
	(void)state;
	/* Pack with exact hints on 2 GPUs of 10000 MiB: two 4000 MiB jobs per
	 * GPU.  Best fit: j1 -> GPU0, j2 -> GPU0 (least left), j3 -> GPU1,
	 * j4 (t=10) -> GPU1.  Two jobs of 60 % share at 100/120 = 5/6.
	 * GPU0: j1 does 100 at 5/6 -> ends 120; j2 has done 100, alone
	 *       from 120 -> ends 220.
	 * GPU1: j3 alone 0..10 (10 done); with j4 from 10 at 5/6: j4 ends
	 *       10 + 120 = 130, j3 has 110 done, alone -> ends 320.
	 * JCT 120, 220, 320, 120. */
	sim_trace *t = parse(FOUR_JOBS);
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(2, 10000);
	sim_result *r = run(t, m, &c, SCHED_POLICY_PACK);
	assert_near(r->jct_s[0], 120);
	assert_near(r->jct_s[1], 220);
	assert_near(r->jct_s[2], 320);
	assert_near(r->jct_s[3], 120);
	assert_near(r->makespan_s, 320);
	assert_near(r->mean_jct_s, 195);
	assert_near(r->mean_queue_s, 0);
	assert_int_equal(r->n_segments, 4);
	sim_result_free(r);
	/* The same decisions as placements CSV rows (hint basis, the default
	 * 100 % compute share), in event order. */
	csv_log lg = {.t = t};
	snprintf(lg.text, sizeof lg.text, "%s", SIM_PLACEMENTS_CSV_HEADER);
	c.on_place = log_row;
	c.ctx = &lg;
	r = run(t, m, &c, SCHED_POLICY_PACK);
	assert_string_equal(lg.text, "time_s,job_id,segment,devices,mem_mib,compute,basis\n"
				     "0.000,j1,1,0,4000,100.0,hint\n"
				     "0.000,j2,1,0,4000,100.0,hint\n"
				     "0.000,j3,1,1,4000,100.0,hint\n"
				     "10.000,j4,1,1,4000,100.0,hint\n");
	sim_result_free(r);
	sim_model_free(m);
	sim_trace_free(t);
}

/* The admission window (sched/policy.h, SCHED_ADMIT_WINDOW = 2, the live
 * driver's): one GPU of 8000 MiB, pack, exact hints; one experiment of
 * four one-segment jobs of 100 s at t = 0 needing 6000, 6000, 6000 and
 * 1000 MiB.  Unlimited: A placed, B and C fit nowhere, D (1000) fits
 * beside A: D backfills at 0.  Window 2: only A and B are in the core
 * (A's start admits C); D is not handed over until a place is free in
 * the window, at 100 when A ends and B starts: D starts at 100, as live,
 * where the driver would not have taken D from the search engine yet.
 * (Until issue 28 the simulator's default was unlimited.) */
static void test_admission_window(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib,gpu_util_pct,experiment\n"
			     "A,0,100,6000,30,e\nB,0,100,6000,30,e\nC,0,100,6000,30,e\n"
			     "D,0,100,1000,30,e\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(1, 8000);
	assert_int_equal(c.window, SCHED_ADMIT_WINDOW);
	c.order = ORDER_FIFO;
	sim_result *r = run(t, m, &c, SCHED_POLICY_PACK);
	assert_near(r->jct_s[3], 200); /* D beside B from 100 */
	assert_near(r->queue_s[3], 100);
	assert_near(r->jct_s[2], 300);
	sim_result_free(r);
	c.window = 0;
	r = run(t, m, &c, SCHED_POLICY_PACK);
	assert_near(r->jct_s[3], 100); /* backfilled at 0 */
	assert_near(r->queue_s[3], 0);
	assert_near(r->jct_s[2], 300);
	sim_result_free(r);
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_segments_and_restart(void **state)
{
	(void)state;
	/* One job of 250 s in segments of 100 s with a 10 s restart cost:
	 * the first segment pays it (start-up), the next two continue on the
	 * same GPU at once and do not.  Ends at 10 + 250 = 260; 3 segments. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib\nj,0,250,1000\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(2, 10000);
	c.segment_s = 100;
	c.restart_cost_s = 10;
	for (int p = 0; p < 3; p++) {
		sim_result *r = run(t, m, &c, (sched_policy)p);
		assert_near(r->jct_s[0], 260);
		assert_int_equal(r->n_segments, 3);
		assert_near(r->lower_bound_makespan_s, 260);
		sim_result_free(r);
	}
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_oom_then_recovers(void **state)
{
	(void)state;
	/* True peak 6000 MiB, the user declares 4500.  pack reserves the hint,
	 * the segment runs out of memory at its end (t=100, its work lost);
	 * the core raises the shape to 4500 x 1.5 = 6750 >= 6000 and the
	 * rerun completes at 200.  exclusive reserves the whole GPU: no OOM. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib,mem_hint_mib\nj,0,100,6000,4500\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(1, 16384);
	sim_result *r = run(t, m, &c, SCHED_POLICY_PACK);
	assert_int_equal(r->oom_count, 1);
	assert_near(r->jct_s[0], 200);
	assert_int_equal(r->n_segments, 2);
	sim_result_free(r);
	r = run(t, m, &c, SCHED_POLICY_RELISH);
	assert_int_equal(r->oom_count, 1);
	assert_near(r->jct_s[0], 200);
	sim_result_free(r);
	r = run(t, m, &c, SCHED_POLICY_EXCLUSIVE);
	assert_int_equal(r->oom_count, 0);
	assert_near(r->jct_s[0], 100);
	sim_result_free(r);
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_las_order(void **state)
{
	(void)state;
	/* One GPU, 100 s segments, no restart cost.  A (300 s) arrives at 0,
	 * B (100 s) at 50.
	 * fifo: A runs its three segments back to back 0..300, B 300..400:
	 *       JCT A 300, B 350.
	 * las:  at A's first boundary (t=100) A has attained 100 GPU-s and B
	 *       0, so B runs 100..200 and A resumes 200..400: JCT A 400,
	 *       B 150.  Mean 325 -> 275. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib\nA,0,300,1000\nB,50,100,1000\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(1, 10000);
	c.segment_s = 100;
	c.order = ORDER_FIFO;
	sim_result *r = run(t, m, &c, SCHED_POLICY_EXCLUSIVE);
	assert_int_equal(r->order, ORDER_FIFO);
	assert_near(r->jct_s[0], 300);
	assert_near(r->jct_s[1], 350);
	sim_result_free(r);
	c.order = ORDER_LAS;
	r = run(t, m, &c, SCHED_POLICY_EXCLUSIVE);
	assert_int_equal(r->order, ORDER_LAS);
	assert_near(r->jct_s[0], 400);
	assert_near(r->jct_s[1], 150);
	assert_near(r->mean_jct_s, 275);
	sim_result_free(r);
	/* The default order: fifo for the baselines, las for relish. */
	assert_int_equal(sched_policy_order(SCHED_POLICY_EXCLUSIVE, ORDER_DEFAULT), ORDER_FIFO);
	assert_int_equal(sched_policy_order(SCHED_POLICY_PACK, ORDER_DEFAULT), ORDER_FIFO);
	assert_int_equal(sched_policy_order(SCHED_POLICY_RELISH, ORDER_DEFAULT), ORDER_LAS);
	assert_int_equal(sched_policy_order(SCHED_POLICY_RELISH, ORDER_FIFO), ORDER_FIFO);
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_tiresias_schedule(void **state)
{
	(void)state;
	/* Two GPUs, 1000 s segments.  A: a 2-GPU gang of 3000 s at 0; B: 2000 s
	 * at 500; C: 1000 s at 600.  Tiresias: whole GPUs, here two queues
	 * split at 3600 GPU-seconds of attained service (--tiresias-limits
	 * 3600), FIFO (by arrival) within a queue.
	 *   t=1000  A has 2 x 1000 = 2000 GPU-s: still in the first queue,
	 *           and the earliest there: A again, on both GPUs;
	 *   t=2000  A has 4000: second queue; B and C (first queue) run;
	 *   t=3000  C done (JCT 2400); B (1000 GPU-s) before A; A needs two
	 *           GPUs and waits;
	 *   t=4000  B done (JCT 3500); A runs its last segment: JCT 5000.
	 * fifo keeps A's turn (A 3000, C 3400, B 4500); las runs B and C at
	 * 1000 (A has most), then B again at 2000 (1000 < 2000): C 1400,
	 * B 2500, A 5000. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib\n"
			     "A,0,3000,2,1000\nB,500,2000,1,1000\nC,600,1000,1,1000\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(2, 10000);
	static const struct {
		sched_policy p;
		queue_order order;
		double a, b, cc;
	} want[] = {
		{SCHED_POLICY_TIRESIAS, ORDER_DEFAULT, 5000, 3500, 2400},
		{SCHED_POLICY_EXCLUSIVE, ORDER_DEFAULT, 3000, 4500, 3400},
		{SCHED_POLICY_EXCLUSIVE, ORDER_LAS, 5000, 2500, 1400},
	};
	c.tune.tiresias_limit_s[0] = 3600;
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		c.order = want[i].order;
		sim_result *r = run(t, m, &c, want[i].p);
		assert_near(r->jct_s[0], want[i].a);
		assert_near(r->jct_s[1], want[i].b);
		assert_near(r->jct_s[2], want[i].cc);
		assert_int_equal(r->order, i == 0 ? ORDER_TIRESIAS : i == 1 ? ORDER_FIFO : ORDER_LAS);
		sim_result_free(r);
	}
	sim_model_free(m);
	sim_trace_free(t);
}

/* The Tiresias peer's quantum (issue 26): within a queue its running job
 * is not preempted by the queue's waiting ones.  One GPU, 1000 s
 * segments, two queues split at 1500 GPU-s; A (4000 s) at 0, B (4000 s)
 * at 100.  A runs 0-2000 and enters the second queue; B (first queue)
 * runs from 2000 and enters the second at 4000, where B keeps running
 * (done at 6000, JCT 5900) and A follows (done at 8000).  Without the
 * quantum's rule (--tiresias-quantum-s 0) the second queue is FIFO by
 * arrival at every boundary, so at 4000 A takes the GPU back from B:
 * A 6000, B 7900. */
static void test_tiresias_running_first(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib\n"
			     "A,0,4000,1,1000\nB,100,4000,1,1000\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(1, 10000);
	c.tune.tiresias_limit_s[0] = 1500;
	static const struct {
		double quantum, a, b;
	} want[] = {{1000, 8000, 5900}, {0, 6000, 7900}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		c.tune.tiresias_quantum_s = want[i].quantum;
		sim_result *r = run(t, m, &c, SCHED_POLICY_TIRESIAS);
		assert_near(r->jct_s[0], want[i].a);
		assert_near(r->jct_s[1], want[i].b);
		assert_near(r->segment_s, 1000);
		sim_result_free(r);
	}
	/* a quantum shorter than a segment cuts the peer's segments (and
	 * only the peer's) */
	c.tune.tiresias_quantum_s = 500;
	sim_result *r = run(t, m, &c, SCHED_POLICY_TIRESIAS);
	assert_near(r->segment_s, 500);
	assert_int_equal(r->n_segments, 16);
	sim_result_free(r);
	r = run(t, m, &c, SCHED_POLICY_EXCLUSIVE);
	assert_near(r->segment_s, 1000);
	assert_int_equal(r->n_segments, 8);
	sim_result_free(r);
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_gandiva_schedule(void **state)
{
	(void)state;
	/* One GPU, 1000 s segments, utilisation fallback (no measured pairs).
	 * H1 and H2 (1000 s each, 100 % utilisation) arrive together.
	 * Gandiva: H1 on the idle GPU; H2's utilisation was never measured,
	 * so it cannot be packed, and it is time-sliced beside H1: 100/200 =
	 * 0.5 each, both end at 2000.  relish's model says the pair gains
	 * nothing (2 x 0.5 = 1 = H1 alone) and refuses it everywhere, so H2
	 * time-slices rather than waits (timeslice_refused): 2000 and 2000
	 * too.  exclusive, and relish without the time-slice, run them one
	 * after the other: 1000 and 2000. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib,gpu_util_pct\n"
			     "H1,0,1000,2000,100\nH2,0,1000,2000,100\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(1, 10000);
	sim_result *r = run(t, m, &c, SCHED_POLICY_GANDIVA);
	assert_near(r->jct_s[0], 2000);
	assert_near(r->jct_s[1], 2000);
	assert_int_equal(r->order, ORDER_FIFO);
	sim_result_free(r);
	r = run(t, m, &c, SCHED_POLICY_RELISH);
	assert_near(r->jct_s[0], 2000);
	assert_near(r->jct_s[1], 2000);
	sim_result_free(r);
	for (int p = SCHED_POLICY_EXCLUSIVE; p <= SCHED_POLICY_RELISH; p += SCHED_POLICY_RELISH - SCHED_POLICY_EXCLUSIVE) {
		c.tune.relish_timeslice = 0;
		r = run(t, m, &c, (sched_policy)p);
		assert_near(r->jct_s[0], 1000);
		assert_near(r->jct_s[1], 2000);
		sim_result_free(r);
	}
	c.tune.relish_timeslice = -1;
	sim_model_free(m);
	sim_trace_free(t);

	/* Two GPUs.  G: a 2-GPU gang of two 1000 s segments at 0 (50 %); S:
	 * 1000 s at 100 (50 %).  G starts on both idle GPUs on its hint (the
	 * Gandiva peer bets gangs on hints as it does single segments); at
	 * 100 S, unmeasured, cannot be packed and is time-sliced on the device
	 * with the fewest segments (a tie: the lower index), beside a member of
	 * the gang: 50 + 50 % costs neither anything, so S ends at 1100 (JCT
	 * 1000) and G at 2000.  exclusive: G holds both GPUs, S runs 2000 to
	 * 3000. */
	t = parse("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct\n"
		  "G,0,2000,2,2000,50\nS,100,1000,1,2000,50\n");
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	c = small_config(2, 10000);
	r = run(t, m, &c, SCHED_POLICY_GANDIVA);
	assert_near(r->jct_s[0], 2000);
	assert_near(r->jct_s[1], 1000);
	sim_result_free(r);
	r = run(t, m, &c, SCHED_POLICY_EXCLUSIVE);
	assert_near(r->jct_s[0], 2000);
	assert_near(r->jct_s[1], 2900);
	sim_result_free(r);
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_gangs(void **state)
{
	(void)state;
	/* Exclusive and pack: g (2 GPUs, 100 s) holds both GPUs; s (1 GPU,
	 * 50 s) waits until 100 (gangs run alone).  w asks for 4 GPUs on a
	 * 2-GPU cluster: capped to 2, its 100 s become 200 s (GPU-seconds
	 * kept); it starts at 150 and ends at 349 (arrived at 1).  relish:
	 * g bets on its hint (gang_probe) and s, which the model refuses
	 * beside it (both 100 % busy, nothing measured), time-slices beside
	 * g's member on GPU 1: both at half speed, s ends at 100; w then
	 * slices beside g (gain 0 again), g ends at 200 and w, alone from
	 * then, at 349 too. */
	sim_trace *t = parse("job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib\n"
			     "g,0,100,2,1000\ns,0,50,1,1000\nw,1,100,4,1000\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(2, 10000);
	for (int p = 0; p < 3; p++) {
		sim_result *r = run(t, m, &c, (sched_policy)p);
		int rel = (sched_policy)p == SCHED_POLICY_RELISH;
		assert_near(r->jct_s[0], rel ? 200 : 100);
		assert_near(r->jct_s[1], rel ? 100 : 150);
		assert_near(r->jct_s[2], 349);
		assert_int_equal(r->n_gang_capped, 1);
		sim_result_free(r);
	}
	sim_model_free(m);
	sim_trace_free(t);
}

static void test_unplaceable_job(void **state)
{
	(void)state;
	sim_trace *t = parse("job_id,submit_time_s,duration_s,gpu_mem_mib\nbig,0,10,20000\n");
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(1, 16384);
	sim_result *r = NULL;
	rl_err err;
	assert_int_equal(sim_run(t, m, &c, SCHED_POLICY_PACK, &r, &err), RL_EINVAL);
	assert_null(r);
	assert_non_null(strstr(err.msg, "job big needs 20000 MiB per GPU"));
	sim_model_free(m);
	sim_trace_free(t);
}

/* A busy little trace: HPO bursts of mixed shapes, lone jobs, gangs. */
static char *busy_trace(void)
{
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);
	len += (size_t)snprintf(s + len, cap - len,
				"job_id,submit_time_s,duration_s,num_gpus,gpu_mem_mib,gpu_util_pct,"
				"experiment,model,batchsize,amp\n");
	for (int i = 0; i < 120; i++) {
		int exp = i / 8, bs = 32 << (i % 3);
		len += (size_t)snprintf(s + len, cap - len, "j%d,%d,%d,%d,%d,%d,%s%d,m%d,%d,%d\n", i,
					(i * 37) % 900, 200 + (i * 131) % 5000, i % 17 == 0 ? 2 : 1,
					1500 + bs * 40 + (i % 5) * 300, 20 + (i * 7) % 70,
					i % 9 == 0 ? "" : "e", exp, exp % 4, bs, i % 2);
	}
	return s;
}

static void test_deterministic(void **state)
{
	(void)state;
	char *csv = busy_trace();
	sim_trace *t = parse(csv);
	free(csv);
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(4, 16384);
	c.segment_s = 600;
	c.restart_cost_s = 20;
	c.hints = SIM_HINTS_NOISY;
	c.series_step_s = 300;
	for (int p = 0; p < 3; p++) {
		sim_result *a = run(t, m, &c, (sched_policy)p);
		sim_result *b = run(t, m, &c, (sched_policy)p);
		assert_memory_equal(a->jct_s, b->jct_s, t->n_jobs * sizeof *a->jct_s);
		assert_int_equal(a->n_series, b->n_series);
		assert_memory_equal(a->series, b->series, a->n_series * sizeof *a->series);
		assert_true(a->makespan_s == b->makespan_s && a->oom_count == b->oom_count);
		/* sanity that holds for every policy */
		assert_true(a->makespan_s >= a->lower_bound_makespan_s - 1e-6);
		for (size_t j = 0; j < t->n_jobs; j++)
			assert_true(a->jct_s[j] >= t->jobs[j].duration_s - 1e-6);
		assert_true(a->gpu_mem_util > 0 && a->gpu_mem_util <= 1);
		assert_true(a->gpu_compute_util > 0 && a->gpu_compute_util <= 1);
		sim_result_free(a);
		sim_result_free(b);
	}
	sim_model_free(m);
	sim_trace_free(t);
}

/* A batch larger than any pool of workers, its policies in no order of
 * cost and one of them twice: every task runs, each into its own slot,
 * with the result of running it alone (sim_run_tasks takes the tasks
 * the most expensive first on one worker per processor). */
static void test_run_tasks(void **state)
{
	(void)state;
	char *csv = busy_trace();
	sim_trace *t = parse(csv);
	free(csv);
	sim_model *m = NULL;
	assert_int_equal(sim_model_new(t, NULL, &m, NULL), 0);
	sim_config c = small_config(4, 16384);
	c.segment_s = 600;
	c.hints = SIM_HINTS_NOISY;
	const sched_policy order[] = {SCHED_POLICY_TIRESIAS, SCHED_POLICY_EXCLUSIVE, SCHED_POLICY_RELISH, SCHED_POLICY_PACK,
				    SCHED_POLICY_GANDIVA, SCHED_POLICY_RELISH, SCHED_POLICY_EXCLUSIVE, SCHED_POLICY_TIRESIAS,
				    SCHED_POLICY_PACK, SCHED_POLICY_GANDIVA, SCHED_POLICY_TIRESIAS};
	enum { N = sizeof order / sizeof order[0] };
	sim_task tasks[N];
	for (size_t i = 0; i < N; i++)
		tasks[i] = (sim_task){.policy = order[i], .cfg = &c, .rc = -1};
	sim_run_tasks(t, m, tasks, N);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(tasks[i].rc, 0);
		assert_non_null(tasks[i].result);
		assert_int_equal(tasks[i].result->policy, order[i]);
		assert_true(tasks[i].wall_s >= 0);
		sim_result *alone = run(t, m, &c, order[i]);
		assert_memory_equal(tasks[i].result->jct_s, alone->jct_s,
				    t->n_jobs * sizeof *alone->jct_s);
		assert_true(tasks[i].result->makespan_s == alone->makespan_s);
		assert_int_equal(tasks[i].result->n_events, alone->n_events);
		sim_result_free(alone);
		sim_result_free(tasks[i].result);
	}
	sim_run_tasks(t, m, tasks, 0); /* nothing to run: returns */
	sim_model_free(m);
	sim_trace_free(t);
}

/* Experiment arrivals (first submission of each) of a trace: min, max. */
static void first_arrivals(const sim_trace *t, double *lo, double *hi)
{
	double *first = malloc(t->n_exps * sizeof *first);
	for (size_t e = 0; e < t->n_exps; e++)
		first[e] = INFINITY;
	for (size_t i = 0; i < t->n_jobs; i++)
		first[t->jobs[i].exp] = fmin(first[t->jobs[i].exp], t->jobs[i].submit_s);
	*lo = INFINITY;
	*hi = -INFINITY;
	for (size_t e = 0; e < t->n_exps; e++) {
		*lo = fmin(*lo, first[e]);
		*hi = fmax(*hi, first[e]);
	}
	free(first);
}

static void check_synthetic(const sim_trace *t, sim_synth_mode mode)
{
	sim_trace *s = NULL, *s2 = NULL;
	assert_int_equal(sim_trace_synthetic(t, 10, mode, 7, &s, NULL), 0);
	assert_int_equal(sim_trace_synthetic(t, 10, mode, 7, &s2, NULL), 0);
	assert_int_equal(s->n_exps, t->n_exps * 10);
	assert_int_equal(s->n_jobs, s2->n_jobs);
	assert_memory_equal(s->jobs, s2->jobs, s->n_jobs * sizeof *s->jobs);
	/* every experiment exactly 10 times, with all its trials */
	assert_int_equal(s->n_jobs, t->n_jobs * 10);
	size_t *per = calloc(t->n_exps, sizeof *per);
	for (size_t i = 0; i < s->n_exps; i++)
		for (size_t e = 0; e < t->n_exps; e++)
			if (!strcmp(strchr(s->exps[i].name, ':') + 1, t->exps[e].name))
				per[e]++;
	for (size_t e = 0; e < t->n_exps; e++)
		assert_int_equal(per[e], 10);
	free(per);
	/* Experiments arrive over the original span of submissions (denser)
	 * or ten times that span (longer), from the original start.  Copies
	 * are drawn uniformly, so with ten per experiment the latest lands in
	 * the last half of its span (deterministic for the seed). */
	double tlo = INFINITY, thi = -INFINITY, lo, hi;
	for (size_t i = 0; i < t->n_jobs; i++) {
		tlo = fmin(tlo, t->jobs[i].submit_s);
		thi = fmax(thi, t->jobs[i].submit_s);
	}
	first_arrivals(s, &lo, &hi);
	double span = (thi - tlo) * (mode == SIM_SYNTH_LONGER ? 10 : 1);
	assert_true(thi > tlo);
	assert_true(lo >= tlo);
	assert_true(hi <= tlo + span);
	assert_true(hi > tlo + span / 2);
	sim_trace_free(s);
	sim_trace_free(s2);
}

static void test_synthetic(void **state)
{
	(void)state;
	char *csv = busy_trace();
	sim_trace *t = parse(csv);
	free(csv);
	check_synthetic(t, SIM_SYNTH_DENSER);
	check_synthetic(t, SIM_SYNTH_LONGER);
	sim_trace *s = NULL;
	assert_int_equal(sim_trace_synthetic(t, 0, SIM_SYNTH_DENSER, 7, &s, NULL), RL_EINVAL);
	assert_null(s);
	sim_trace_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_formats),
		cmocka_unit_test(test_trace_errors),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_model_parse),
		cmocka_unit_test(test_exclusive_schedule),
		cmocka_unit_test(test_pack_schedule),
		cmocka_unit_test(test_segments_and_restart),
		cmocka_unit_test(test_oom_then_recovers),
		cmocka_unit_test(test_gangs),
		cmocka_unit_test(test_tiresias_schedule),
		cmocka_unit_test(test_tiresias_running_first),
		cmocka_unit_test(test_gandiva_schedule),
		cmocka_unit_test(test_unplaceable_job),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_run_tasks),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_las_order),
		cmocka_unit_test(test_admission_window),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
