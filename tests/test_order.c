/*
 * test_order.c - the core's queue orders (fifo, las, tiresias, fair), the
 * service it counts per job and per user, and per-user limits, on the
 * worked examples of docs/scheduling.md ("Queue order"), each schedule
 * computed by hand there.
 *
 * A tiny driver: jobs of equal 100 s segments on GPUs of the exclusive
 * policy; at each instant the segments that end are finished (in the order
 * they started) and their jobs' next segments submitted, then arrivals,
 * then one sched_place.  A job's segments carry its arrival as submit_time,
 * as the simulator's and the live driver's do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sched/sched.h"
#include "sched_fixture.h"

#define SEG 100.0
#define MAXJ 16
#define MAXS 12

typedef struct job {
	const char *name;
	uint32_t user;
	double arrival;
	int n_segs;
	int n_dev;
	/* filled by the run */
	int done, running;      /* running: segments ended so far */
	double start[MAXS];
	double end_at, finish;
	uint64_t queued_id;     /* its segment in the queue, 0 none */
} job;

typedef struct world {
	sched *s;
	job *j;
	int n;
	uint64_t next_id;
	uint64_t run_id[MAXJ]; /* segment id running, 0 none */
	uint64_t order[MAXJ * MAXS]; /* start order, jobs by index */
	int n_started;
} world;

static void submit(world *w, int k)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = ++w->next_id;
	r.job_id = (uint64_t)k + 1;
	r.user = w->j[k].user;
	r.shape = 42;
	r.needs_gpu = 1;
	r.n_devices = w->j[k].n_dev ? w->j[k].n_dev : 1;
	r.submit_time = w->j[k].arrival;
	rl_err e;
	assert_int_equal(sched_submit(w->s, &r, &e), 0);
	w->j[k].queued_id = r.seg_id;
}

static void place(world *w, double now)
{
	sched_placement pl[MAXJ];
	size_t n = sched_place(w->s, now, pl, MAXJ);
	for (size_t i = 0; i < n; i++) {
		int k = -1;
		for (int q = 0; q < w->n; q++)
			if (w->j[q].queued_id == pl[i].seg_id)
				k = q;
		assert_true(k >= 0);
		job *jb = &w->j[k];
		jb->queued_id = 0;
		jb->start[jb->running] = now;
		jb->end_at = now + SEG;
		w->run_id[k] = pl[i].seg_id;
		w->order[w->n_started++] = (uint64_t)k;
	}
}

/* Run every job to its end under options o on n_gpu GPUs; returns the
 * core, still holding its books (the caller frees it). */
static sched *run(sched_options *o, int n_gpu, job *jobs, int n, double stop_at)
{
	world w;
	memset(&w, 0, sizeof w);
	w.s = fixture_sched(o->policy, o, n_gpu, 16000);
	w.j = jobs;
	w.n = n;
	for (int k = 0; k < n; k++) {
		jobs[k].done = jobs[k].running = 0;
		for (int i = 0; i < MAXS; i++)
			jobs[k].start[i] = -1;
		jobs[k].end_at = -1;
		jobs[k].queued_id = 0;
	}
	/* event times: arrivals and multiples of SEG after them */
	for (double now = 0; now <= 5000 && now <= stop_at; now += 1) {
		/* ends, in start order */
		for (int i = 0; i < w.n_started; i++) {
			int k = (int)w.order[i];
			job *jb = &jobs[k];
			if (!w.run_id[k] || jb->end_at != now)
				continue;
			sched_observation ob;
			memset(&ob, 0, sizeof ob);
			ob.outcome = SEG_OUT_COMPLETED;
			ob.duration_s = SEG;
			ob.mean_util = -1;
			rl_err e;
			assert_int_equal(sched_finished(w.s, w.run_id[k], now, &ob, &e), 0);
			w.run_id[k] = 0;
			jb->running++;
			if (jb->running == jb->n_segs) {
				jb->done = 1;
				jb->finish = now;
				sched_job_forget(w.s, (uint64_t)k + 1);
			} else {
				submit(&w, k);
			}
		}
		for (int k = 0; k < n; k++)
			if (jobs[k].arrival == now)
				submit(&w, k);
		place(&w, now);
	}
	return w.s;
}

/* The worked example: ann (user 1) has six jobs of two segments at t=0,
 * bob (user 2) one job of six segments at t=1; two GPUs. */
static int example(job *j)
{
	static const char *names[] = {"a1", "a2", "a3", "a4", "a5", "a6"};
	for (int k = 0; k < 6; k++)
		j[k] = (job){.name = names[k], .user = 1, .arrival = 0, .n_segs = 2};
	j[6] = (job){.name = "b", .user = 2, .arrival = 1, .n_segs = 6};
	return 7;
}

static void expect_starts(const job *jb, const double *want)
{
	for (int i = 0; i < jb->n_segs; i++) {
		if (jb->start[i] != want[i])
			print_error("%s segment %d: started at %g, expected %g\n", jb->name, i + 1,
				    jb->start[i], want[i]);
		assert_true(jb->start[i] == want[i]);
	}
}

static sched_options opts(queue_order order)
{
	sched_options o;
	sched_options_default(&o, SHARE_EXCLUSIVE);
	o.order = order;
	o.aging_s = 0; /* the order alone */
	return o;
}

static void test_fifo_starves_the_small_user(void **state)
{
	(void)state;
	job j[MAXJ];
	int n = example(j);
	sched_options o = opts(ORDER_FIFO);
	sched *s = run(&o, 2, j, n, 1e9);
	/* ann's twelve segments fill both GPUs until 600; bob then runs alone */
	double a12[] = {0, 300}, a34[] = {100, 400}, a56[] = {200, 500};
	expect_starts(&j[0], a12);
	expect_starts(&j[1], a12);
	expect_starts(&j[2], a34);
	expect_starts(&j[3], a34);
	expect_starts(&j[4], a56);
	expect_starts(&j[5], a56);
	double b[] = {600, 700, 800, 900, 1000, 1100};
	expect_starts(&j[6], b);
	assert_true(j[6].finish == 1200);
	sched_free(s);
}

static void test_las_runs_new_jobs_first(void **state)
{
	(void)state;
	job j[MAXJ];
	int n = example(j);
	sched_options o = opts(ORDER_LAS);
	sched *s = run(&o, 2, j, n, 1e9);
	/* every first segment (0 attained) before any second; among equals
	 * the earlier arrival: bob (arrived at 1) waits for ann's a3..a6 */
	double a1[] = {0, 300}, a2[] = {0, 400}, a3[] = {100, 400}, a4[] = {100, 500},
	       a5[] = {200, 500}, a6[] = {200, 600};
	expect_starts(&j[0], a1);
	expect_starts(&j[1], a2);
	expect_starts(&j[2], a3);
	expect_starts(&j[3], a4);
	expect_starts(&j[4], a5);
	expect_starts(&j[5], a6);
	double b[] = {300, 600, 700, 800, 900, 1000};
	expect_starts(&j[6], b);
	assert_true(j[6].finish == 1100);
	sched_free(s);
}

/* One segment of job job_id with service `before` (attained before the core
 * saw it), arriving at `at`. */
static void tail_submit(sched *s, uint64_t seg, uint64_t job_id, double before, double at)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = seg;
	r.job_id = job_id;
	r.shape = 42;
	r.needs_gpu = 1;
	r.n_devices = 1;
	r.attained_s = before;
	r.submit_time = at;
	rl_err e;
	assert_int_equal(sched_submit(s, &r, &e), 0);
}

/* Place one segment at now, end it at now + 10 (completed); returns it. */
static uint64_t tail_run_one(sched *s, double now)
{
	sched_placement pl[1];
	assert_int_equal(sched_place(s, now, pl, 1), 1);
	sched_observation ob;
	memset(&ob, 0, sizeof ob);
	ob.outcome = SEG_OUT_COMPLETED;
	ob.duration_s = 10;
	ob.mean_util = -1;
	rl_err e;
	assert_int_equal(sched_finished(s, pl[0].seg_id, now + 10, &ob, &e), 0);
	return pl[0].seg_id;
}

/* las_tail: once enough jobs have ended, a job whose service passed the
 * quantile of theirs keeps it as its key: two such jobs wait by arrival
 * (y, 5,000 s attained, arrived first, before x, 1,000 s), where plain
 * LAS would run x first and y last; a new job still comes first.  Fewer
 * than SCHED_LAS_MIN_JOBS ended jobs: plain LAS. */
static void test_las_tail_orders_long_jobs_by_arrival(void **state)
{
	(void)state;
	for (int mode = 0; mode < 3; mode++) {
		/* 0: tail on, 100 ended jobs; 1: tail off; 2: on, 99 ended */
		sched_options o = opts(ORDER_LAS);
		o.las_tail = mode == 1 ? 0 : 0.99;
		sched *s = fixture_sched(SHARE_EXCLUSIVE, &o, 1, 16000);
		int ended = mode == 2 ? 99 : 100;
		double now = 0;
		for (int i = 0; i < ended; i++, now += 10) {
			tail_submit(s, 1000 + (uint64_t)i, 1000 + (uint64_t)i, 0, now);
			tail_run_one(s, now);
			sched_job_forget(s, 1000 + (uint64_t)i);
		}
		tail_submit(s, 1, 1, 5000, 1); /* y */
		tail_submit(s, 2, 2, 1000, 5); /* x */
		tail_submit(s, 3, 3, 0, 9);    /* z, new */
		uint64_t first = tail_run_one(s, now);
		uint64_t second = tail_run_one(s, now + 10);
		uint64_t third = tail_run_one(s, now + 20);
		assert_int_equal(first, 3);
		assert_int_equal(second, mode == 0 ? 1 : 2);
		assert_int_equal(third, mode == 0 ? 2 : 1);
		sched_free(s);
	}
}

static void test_fair_shares_between_users(void **state)
{
	(void)state;
	job j[MAXJ];
	int n = example(j);
	sched_options o = opts(ORDER_FAIR);
	sched *s = run(&o, 2, j, n, 1e9);
	/* From the first boundary on, bob has attained less than ann at every
	 * one and gets one GPU of the two: half the cluster while both have
	 * work; within ann, least attained service first. */
	double a1[] = {0, 500}, a2[] = {0, 600}, a3[] = {100, 700}, a4[] = {200, 700},
	       a5[] = {300, 800}, a6[] = {400, 800};
	expect_starts(&j[0], a1);
	expect_starts(&j[1], a2);
	expect_starts(&j[2], a3);
	expect_starts(&j[3], a4);
	expect_starts(&j[4], a5);
	expect_starts(&j[5], a6);
	double b[] = {100, 200, 300, 400, 500, 600};
	expect_starts(&j[6], b);
	assert_true(j[6].finish == 700);
	/* the books at the end: device-seconds held */
	sched_user_state ua, ub;
	assert_int_equal(sched_user_get(s, 1, 900, &ua), 0);
	assert_int_equal(sched_user_get(s, 2, 900, &ub), 0);
	assert_true(fabs(ua.attained_gpu_s - 1200) < 1e-9);
	assert_true(fabs(ub.attained_gpu_s - 600) < 1e-9);
	assert_true(ua.share == 1 && ub.share == 1);
	assert_int_equal(ua.running + ua.queued + ub.running + ub.queued, 0);
	uint32_t ids[4];
	assert_int_equal(sched_user_list(s, ids, 4), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_int_equal(sched_user_get(s, 7, 0, &ua), RL_ENOTFOUND);
	sched_free(s);

	/* Mid-run (t = 150): ann holds a3 since 100 and has a4..a6, a1', a2'
	 * queued; bob holds b' since 100. */
	n = example(j);
	s = run(&o, 2, j, n, 150);
	assert_int_equal(sched_user_get(s, 1, 150, &ua), 0);
	assert_int_equal(sched_user_get(s, 2, 150, &ub), 0);
	assert_true(fabs(ua.attained_gpu_s - 250) < 1e-9);
	assert_true(fabs(ub.attained_gpu_s - 50) < 1e-9);
	assert_int_equal(ua.running, 1);
	assert_int_equal(ua.queued, 5);
	assert_int_equal(ua.running_gpus, 1);
	assert_int_equal(ub.running, 1);
	assert_int_equal(ub.queued, 0);
	/* a1 ended one segment (its second is queued); b is half-way
	 * through its first */
	assert_true(fabs(sched_job_attained(s, 1, 150) - 100) < 1e-9);
	assert_true(fabs(sched_job_attained(s, 7, 150) - 50) < 1e-9);
	assert_true(sched_job_attained(s, 99, 150) == 0);
	sched_free(s);
}

static void test_fair_two_free_devices_go_to_two_users(void **state)
{
	(void)state;
	/* Both users at 0 attained when two GPUs are free at once: the first
	 * placement ranks ann again with one device running, so bob gets the
	 * second GPU (not ann twice). */
	job j[MAXJ];
	int n = example(j);
	j[6].arrival = 0;
	sched_options o = opts(ORDER_FAIR);
	sched *s = run(&o, 2, j, n, 1e9);
	assert_true(j[0].start[0] == 0);
	assert_true(j[1].start[0] == 100);
	assert_true(j[6].start[0] == 0);
	assert_true(j[6].finish == 600);
	sched_free(s);

	/* Weights: bob with share 3 against ann's 1 still gets one GPU at a
	 * time (he has one job), and is ranked first at every boundary. */
	n = example(j);
	j[6].arrival = 0;
	sched_options o2 = opts(ORDER_FAIR);
	s = fixture_sched(SHARE_EXCLUSIVE, &o2, 0, 0);
	assert_int_equal(sched_set_user_share(s, 2, 3), 0);
	assert_int_equal(sched_set_user_share(s, 2, 0), RL_EINVAL);
	assert_int_equal(sched_set_user_share(s, 2, NAN), RL_EINVAL);
	sched_user_state ub;
	assert_int_equal(sched_user_get(s, 2, 0, &ub), 0);
	assert_true(ub.share == 3);
	sched_free(s);
}

/* Forgetting (docs/scheduling.md, the worked example continued): one GPU;
 * carol ran a job of ten segments from 0 to 1000, alone; at 1000 she
 * submits a new job of six (c1) and dave his first (d, six).  Without a
 * half-life carol's old 1000 GPU-s keep her behind dave until he has
 * attained as much or run out of work: d runs 1000..1600, c1 after it.
 * With a half-life of 150 s her past fades: 214.3 at 1000 against dave's
 * 0 (d), 135.0 against 80.1 at 1100 (d), 85.0 against 130.5 at 1200 (c1),
 * then they alternate. */
static int forgetting(job *j)
{
	j[0] = (job){.name = "c0", .user = 1, .arrival = 0, .n_segs = 10};
	j[1] = (job){.name = "c1", .user = 1, .arrival = 1000, .n_segs = 6};
	j[2] = (job){.name = "d", .user = 2, .arrival = 1000, .n_segs = 6};
	return 3;
}

static void test_fair_forgets_with_a_half_life(void **state)
{
	(void)state;
	job j[MAXJ];
	sched_options o = opts(ORDER_FAIR);
	assert_true(o.fair_half_life_s == 7 * 86400.0); /* Slurm's default */
	o.fair_half_life_s = 0;
	int n = forgetting(j);
	sched *s = run(&o, 1, j, n, 1e9);
	double c1[] = {1600, 1700, 1800, 1900, 2000, 2100};
	double d0[] = {1000, 1100, 1200, 1300, 1400, 1500};
	expect_starts(&j[1], c1);
	expect_starts(&j[2], d0);
	sched_user_state uc;
	assert_int_equal(sched_user_get(s, 1, 2200, &uc), 0);
	assert_true(fabs(uc.usage_gpu_s - uc.attained_gpu_s) < 1e-9); /* nothing decays */
	sched_free(s);

	o.fair_half_life_s = 150;
	n = forgetting(j);
	s = run(&o, 1, j, n, 1e9);
	double c1h[] = {1200, 1400, 1600, 1800, 2000, 2100};
	double dh[] = {1000, 1100, 1300, 1500, 1700, 1900};
	expect_starts(&j[1], c1h);
	expect_starts(&j[2], dh);
	/* 2200: carol's 1600 GPU-s attained; her usage is her last segment
	 * (2100..2200) and the faded rest */
	assert_int_equal(sched_user_get(s, 1, 2200, &uc), 0);
	assert_true(fabs(uc.attained_gpu_s - 1600) < 1e-9);
	double h = 150 / M_LN2, c_at_2100 = 132.8; /* the doc's figure, rounded */
	double want = c_at_2100 * exp2(-100.0 / 150) + h * (1 - exp2(-100.0 / 150));
	assert_true(fabs(uc.usage_gpu_s - want) < 0.2);
	sched_free(s);

	/* Mid-run, at 1000: carol's usage from her ten ended segments,
	 * h (1 - 2^(-1000/150)) = 214.3, without a segment running. */
	n = forgetting(j);
	s = run(&o, 1, j, n, 999);
	assert_int_equal(sched_user_get(s, 1, 1000, &uc), 0);
	assert_true(fabs(uc.usage_gpu_s - h * (1 - exp2(-1000.0 / 150))) < 1e-6);
	assert_true(fabs(uc.attained_gpu_s - 1000) < 1e-9);
	sched_free(s);
}

/* A restarted service gives the core its users' past segments
 * (sched_user_add_service): they count decayed from their end, exactly as
 * if the core had seen them run. */
static void test_fair_service_before_a_restart(void **state)
{
	(void)state;
	job j[MAXJ];
	sched_options o = opts(ORDER_FAIR);
	o.fair_half_life_s = 150;
	forgetting(j);
	sched *seen = run(&o, 1, j, 1, 1e9); /* c0 alone: 0..1000 */
	sched *told = fixture_sched(SHARE_EXCLUSIVE, &o, 1, 16000);
	for (int k = 0; k < 10; k++)
		assert_int_equal(sched_user_add_service(told, 1, k * 100.0, k * 100.0 + 100, 1), 0);
	sched_user_state a, b;
	for (double t = 1000; t < 2000; t += 250) {
		assert_int_equal(sched_user_get(seen, 1, t, &a), 0);
		assert_int_equal(sched_user_get(told, 1, t, &b), 0);
		assert_true(fabs(a.usage_gpu_s - b.usage_gpu_s) < 1e-9);
		assert_true(fabs(a.attained_gpu_s - b.attained_gpu_s) < 1e-9);
	}
	/* one interval of two devices, told at once, is the same again */
	sched *one = fixture_sched(SHARE_EXCLUSIVE, &o, 1, 16000);
	assert_int_equal(sched_user_add_service(one, 1, 0, 500, 2), 0);
	assert_int_equal(sched_user_get(one, 1, 1000, &b), 0);
	assert_int_equal(sched_user_get(seen, 1, 1000, &a), 0);
	assert_true(fabs(a.usage_gpu_s - b.usage_gpu_s) > 1); /* later service weighs more */
	assert_true(fabs(b.attained_gpu_s - 1000) < 1e-9);
	assert_int_equal(sched_user_add_service(one, 1, 5, 4, 1), RL_EINVAL);
	assert_int_equal(sched_user_add_service(one, 1, 0, NAN, 1), RL_EINVAL);
	assert_int_equal(sched_user_add_service(one, 1, 0, 1, 0), RL_EINVAL);
	sched_free(one);
	sched_free(told);
	sched_free(seen);
}

static void test_tiresias_queues(void **state)
{
	(void)state;
	/* One GPU.  X arrives at 0 with three segments, Y at 50 with one.
	 * las:      X 0, Y 100 (X had 100 GPU-s, Y 0), X 200, 300.
	 * tiresias, one threshold at 150 GPU-s: at 100 X (100) and Y (0) are
	 *           both in the first queue, FIFO there: X; at 200 X (200)
	 *           has moved down: Y, then X at 300.
	 * fifo:     X 0, 100, 200, Y 300. */
	job j[2] = {{.name = "X", .user = 0, .arrival = 0, .n_segs = 3},
		    {.name = "Y", .user = 0, .arrival = 50, .n_segs = 1}};
	sched_options o = opts(ORDER_LAS);
	sched *s = run(&o, 1, j, 2, 1e9);
	double xl[] = {0, 200, 300}, yl[] = {100};
	expect_starts(&j[0], xl);
	expect_starts(&j[1], yl);
	sched_free(s);
	o = opts(ORDER_TIRESIAS);
	o.tiresias_limit_s[0] = 150;
	s = run(&o, 1, j, 2, 1e9);
	double xt[] = {0, 100, 300}, yt[] = {200};
	expect_starts(&j[0], xt);
	expect_starts(&j[1], yt);
	sched_free(s);
	/* the default: eight thresholds doubling from half a GPU-hour, the
	 * first of which X never reaches here: FIFO */
	o = opts(ORDER_TIRESIAS);
	for (int k = 0; k < SCHED_MAX_TIERS; k++)
		assert_true(o.tiresias_limit_s[k] == 1800.0 * (1 << k));
	s = run(&o, 1, j, 2, 1e9);
	double xf[] = {0, 100, 200}, yf[] = {300};
	expect_starts(&j[0], xf);
	expect_starts(&j[1], yf);
	sched_free(s);
	/* a gang of 2 attains 2 GPU-s per second: 2D-LAS */
	o = opts(ORDER_TIRESIAS);
	o.tiresias_limit_s[0] = 150;
	job g[2] = {{.name = "G", .user = 0, .arrival = 0, .n_segs = 2, .n_dev = 2},
		    {.name = "H", .user = 0, .arrival = 50, .n_segs = 1, .n_dev = 2}};
	s = run(&o, 2, g, 2, 1e9);
	double gs[] = {0, 200}, hs[] = {100};
	expect_starts(&g[0], gs);
	expect_starts(&g[1], hs);
	sched_free(s);
	/* bad thresholds */
	sched *bad = NULL;
	rl_err e;
	o = opts(ORDER_TIRESIAS);
	o.tiresias_limit_s[0] = 100;
	o.tiresias_limit_s[1] = 50;
	assert_int_equal(sched_new(&o, &bad, &e), RL_EINVAL);
	o = opts(ORDER_TIRESIAS);
	o.order = (queue_order)9;
	assert_int_equal(sched_new(&o, &bad, &e), RL_EINVAL);
}

static void test_order_names_and_defaults(void **state)
{
	(void)state;
	assert_string_equal(sched_order_name(ORDER_FIFO), "fifo");
	assert_string_equal(sched_order_name(ORDER_LAS), "las");
	assert_string_equal(sched_order_name(ORDER_TIRESIAS), "tiresias");
	assert_string_equal(sched_order_name(ORDER_FAIR), "fair");
	assert_int_equal(sched_policy_order(SCHED_POLICY_EXCLUSIVE, ORDER_DEFAULT), ORDER_FIFO);
	assert_int_equal(sched_policy_order(SCHED_POLICY_PACK, ORDER_DEFAULT), ORDER_FIFO);
	assert_int_equal(sched_policy_order(SCHED_POLICY_RELISH, ORDER_DEFAULT), ORDER_LAS);
	assert_int_equal(sched_policy_order(SCHED_POLICY_RELISH, ORDER_FAIR), ORDER_FAIR);
	assert_int_equal(sched_policy_order(SCHED_POLICY_TIRESIAS, ORDER_DEFAULT), ORDER_TIRESIAS);
	assert_int_equal(sched_policy_order(SCHED_POLICY_GANDIVA, ORDER_DEFAULT), ORDER_FIFO);
	queue_order q;
	assert_int_equal(sched_order_from_name("tiresias", &q), 0);
	assert_int_equal(q, ORDER_TIRESIAS);
	assert_int_equal(sched_order_from_name("lifo", &q), RL_EINVAL);
}

/* The vocabulary is one table (sched/policy.h): every named policy has a
 * name that reads back, a placement and a default order; the peers are
 * presets of the core's placements (until issue 28 they lived in the
 * simulator only, and its Tiresias had the value of the core's Gandiva). */
static void test_policy_table(void **state)
{
	(void)state;
	for (int i = 0; i < SCHED_POLICY__COUNT; i++) {
		sched_policy p;
		const sched_policy_info *row = sched_policy_get((sched_policy)i);
		assert_non_null(row);
		assert_string_equal(row->name, sched_policy_names[i]);
		assert_int_equal(sched_policy_from_name(row->name, &p), 0);
		assert_int_equal(p, i);
		assert_non_null(strstr(sched_policy_list(), row->name));
	}
	assert_null(sched_policy_get(SCHED_POLICY__COUNT));
	assert_string_equal(sched_policy_list(), "exclusive, pack, relish, tiresias, gandiva");
	assert_int_equal(sched_policy_placement(SCHED_POLICY_TIRESIAS), SHARE_EXCLUSIVE);
	assert_int_equal(sched_policy_placement(SCHED_POLICY_GANDIVA), SHARE_GANDIVA);
	/* a preset's options: its placement's defaults and its order */
	sched_options o;
	sched_policy_options(SCHED_POLICY_TIRESIAS, &o);
	assert_int_equal(o.policy, SHARE_EXCLUSIVE);
	assert_int_equal(o.order, ORDER_TIRESIAS);
	sched_policy_options(SCHED_POLICY_GANDIVA, &o);
	assert_int_equal(o.policy, SHARE_GANDIVA);
	assert_int_equal(o.order, ORDER_FIFO);
	assert_int_equal(o.timeslice_max, 2);
	/* a core created with ORDER_DEFAULT takes its placement's order */
	sched_options_default(&o, SHARE_RELISH);
	assert_int_equal(o.order, ORDER_DEFAULT);
	sched_policy p;
	assert_int_equal(sched_policy_from_name("fair", &p), RL_EINVAL);
	sched_foreign_policy f;
	assert_int_equal(sched_foreign_policy_from_name("avoid", &f), 0);
	assert_int_equal(f, SCHED_FOREIGN_AVOID);
	assert_string_equal(sched_foreign_names[SCHED_FOREIGN_SHARE], "share");
}

static void test_user_limits(void **state)
{
	(void)state;
	/* ann may run one segment at a time: with two GPUs and only her work
	 * her jobs run one after another, while bob's job runs beside. */
	static const uint32_t users[3] = {1, 1, 2}; /* a1, a2, b */
	sched_options o = opts(ORDER_FIFO);
	sched_user_limits lim = {.max_segments = 1};
	sched *s = fixture_sched(SHARE_EXCLUSIVE, &o, 2, 16000);
	assert_int_equal(sched_set_user_limits(s, 1, &lim), 0);
	sched_request r;
	rl_err e;
	for (int k = 0; k < 3; k++) {
		memset(&r, 0, sizeof r);
		r.seg_id = (uint64_t)k + 1;
		r.job_id = (uint64_t)k + 1;
		r.user = users[k];
		r.shape = 7;
		r.needs_gpu = 1;
		r.n_devices = 1;
		assert_int_equal(sched_submit(s, &r, &e), 0);
	}
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 0, pl, 4), 2); /* a1 and b, not a2 */
	assert_true(pl[0].seg_id == 1 && pl[1].seg_id == 3);
	sched_user_state ua;
	assert_int_equal(sched_user_get(s, 1, 0, &ua), 0);
	assert_int_equal(ua.running, 1);
	assert_int_equal(ua.queued, 1);
	assert_int_equal(ua.limits.max_segments, 1);
	sched_observation ob = {.outcome = SEG_OUT_COMPLETED, .duration_s = 10, .mean_util = -1};
	assert_int_equal(sched_finished(s, 3, 10, &ob, &e), 0);
	assert_int_equal(sched_place(s, 10, pl, 4), 0); /* a GPU is free, ann is at her limit */
	assert_int_equal(sched_finished(s, 1, 20, &ob, &e), 0);
	assert_int_equal(sched_place(s, 20, pl, 4), 1);
	assert_true(pl[0].seg_id == 2);
	/* raising the limit lets a waiting segment start at the next call */
	memset(&r, 0, sizeof r);
	r.seg_id = 9;
	r.job_id = 9;
	r.user = 1;
	r.shape = 7;
	r.needs_gpu = 1;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	assert_int_equal(sched_place(s, 21, pl, 4), 0);
	lim.max_segments = 2;
	assert_int_equal(sched_set_user_limits(s, 1, &lim), 0);
	assert_int_equal(sched_place(s, 22, pl, 4), 1);
	assert_true(pl[0].seg_id == 9);
	sched_free(s);

	/* GPUs: a gang of two is over a limit of one GPU, a single is not. */
	s = fixture_sched(SHARE_EXCLUSIVE, &o, 4, 16000);
	sched_user_limits one = {.max_gpus = 1};
	assert_int_equal(sched_set_user_limits(s, 5, &one), 0);
	memset(&r, 0, sizeof r);
	r.seg_id = 1;
	r.user = 5;
	r.shape = 7;
	r.needs_gpu = 1;
	r.n_devices = 2;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	r.seg_id = 2;
	r.n_devices = 1;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	assert_true(pl[0].seg_id == 2);
	assert_int_equal(sched_queue_length(s), 1);
	sched_free(s);

	/* Memory: pack reserves the declared 3000 MiB; a limit of 5000 MiB
	 * admits one segment at a time although the GPU holds five. */
	sched_options op;
	sched_options_default(&op, SHARE_PACK);
	op.aging_s = 0;
	s = fixture_sched(SHARE_PACK, &op, 1, 16000);
	sched_user_limits mem = {.max_mem_mib = 5000};
	assert_int_equal(sched_set_user_limits(s, 3, &mem), 0);
	for (int k = 0; k < 3; k++) {
		memset(&r, 0, sizeof r);
		r.seg_id = (uint64_t)k + 1;
		r.user = 3;
		r.shape = 7;
		r.needs_gpu = 1;
		r.mem_hint_mib = 3000;
		assert_int_equal(sched_submit(s, &r, &e), 0);
	}
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	sched_user_state u3;
	assert_int_equal(sched_user_get(s, 3, 0, &u3), 0);
	assert_int_equal(u3.mem_reserved_mib, 3000);
	sched_user_limits neg = {.max_gpus = -1};
	assert_int_equal(sched_set_user_limits(s, 3, &neg), RL_EINVAL);
	sched_free(s);

	/* Host memory and CPUs (issue 25, item 9): a host of 16 CPUs and
	 * 64 GiB; a user limited to 2 CPUs and 6000 MiB runs two of its
	 * 1-CPU, 2000 MiB trials at once, not eight; a user limited to 10000
	 * MiB of host memory, three of them; another user is not held. */
	s = NULL;
	assert_int_equal(sched_new(&op, &s, &e), 0);
	sched_device_info host;
	memset(&host, 0, sizeof host);
	snprintf(host.name, sizeof host.name, "host");
	host.mem_total_mib = 65536;
	host.compute_total = 16;
	assert_int_equal(sched_add_device(s, &host, &e), 0);
	sched_user_limits hl = {.max_host_mem_mib = 6000, .max_cpus = 2};
	assert_int_equal(sched_set_user_limits(s, 4, &hl), 0);
	sched_user_limits hm = {.max_host_mem_mib = 10000};
	assert_int_equal(sched_set_user_limits(s, 6, &hm), 0);
	for (int k = 0; k < 24; k++) {
		memset(&r, 0, sizeof r);
		r.seg_id = (uint64_t)k + 1;
		r.user = k < 8 ? 4 : k < 16 ? 6 : 7;
		r.shape = 8;
		r.mem_hint_mib = 2000;
		r.compute_hint = 1;
		assert_int_equal(sched_submit(s, &r, &e), 0);
	}
	sched_placement hp[24];
	int placed = sched_place(s, 0, hp, 24);
	int per[8] = {0};
	for (int k = 0; k < placed; k++)
		per[hp[k].seg_id <= 8 ? 4 : hp[k].seg_id <= 16 ? 6 : 7]++;
	assert_int_equal(per[4], 2);
	assert_int_equal(per[6], 5);
	assert_int_equal(per[7], 8);
	sched_user_state u4;
	assert_int_equal(sched_user_get(s, 4, 0, &u4), 0);
	assert_int_equal(u4.running, 2);
	/* one ends: the next of the limited user's starts in its place */
	for (int k = 0; k < placed; k++)
		if (hp[k].seg_id <= 8) {
			assert_int_equal(sched_finished(s, hp[k].seg_id, 5, &ob, &e), 0);
			break;
		}
	assert_int_equal(sched_place(s, 5, hp, 24), 1);
	assert_true(hp[0].seg_id <= 8);
	sched_free(s);

	/* GPU limits count GPUs: a user with gpus 1 and gpu_memory 5000 MiB
	 * runs three 2000 MiB CPU trials beside one 3000 MiB GPU trial, and a
	 * second GPU trial waits though a GPU is free (the CPU trials' host
	 * device and RAM counted as a GPU and GPU memory, and held back every
	 * GPU trial). */
	s = NULL;
	assert_int_equal(sched_new(&op, &s, &e), 0);
	assert_int_equal(sched_add_device(s, &host, &e), 0);
	sched_device_info gpu;
	memset(&gpu, 0, sizeof gpu);
	snprintf(gpu.name, sizeof gpu.name, "gpu");
	gpu.is_gpu = 1;
	gpu.mem_total_mib = 16000;
	gpu.compute_total = 100;
	assert_int_equal(sched_add_device(s, &gpu, &e), 1); /* its index */
	assert_int_equal(sched_add_device(s, &gpu, &e), 2);
	sched_user_limits gl = {.max_gpus = 1, .max_mem_mib = 5000};
	assert_int_equal(sched_set_user_limits(s, 9, &gl), 0);
	for (int k = 0; k < 5; k++) {
		memset(&r, 0, sizeof r);
		r.seg_id = (uint64_t)k + 1;
		r.user = 9;
		r.shape = k < 3 ? 8 : 9;
		r.needs_gpu = k >= 3;
		r.mem_hint_mib = k < 3 ? 2000 : 3000;
		r.compute_hint = k < 3 ? 1 : 0;
		assert_int_equal(sched_submit(s, &r, &e), 0);
	}
	assert_int_equal(sched_place(s, 0, hp, 24), 4);
	sched_user_state u9;
	assert_int_equal(sched_user_get(s, 9, 0, &u9), 0);
	assert_int_equal(u9.running, 4);
	assert_int_equal(u9.running_gpus, 1);
	assert_int_equal(u9.mem_reserved_mib, 3000);
	assert_int_equal(sched_queue_length(s), 1);
	sched_free(s);

	/* A share below the kernel's least quota counts as that (0.01): a
	 * user limited to 0.05 CPUs runs 5 trials of 0.0001 CPUs, not 500. */
	s = NULL;
	assert_int_equal(sched_new(&op, &s, &e), 0);
	assert_int_equal(sched_add_device(s, &host, &e), 0);
	sched_user_limits tiny = {.max_cpus = 0.05};
	assert_int_equal(sched_set_user_limits(s, 4, &tiny), 0);
	for (int k = 0; k < 24; k++) {
		memset(&r, 0, sizeof r);
		r.seg_id = (uint64_t)k + 1;
		r.user = 4;
		r.shape = 8;
		r.mem_hint_mib = 100;
		r.compute_hint = 0.0001;
		assert_int_equal(sched_submit(s, &r, &e), 0);
	}
	assert_int_equal(sched_place(s, 0, hp, 24), 5);
	sched_user_limits badc = {.max_cpus = -1};
	assert_int_equal(sched_set_user_limits(s, 4, &badc), RL_EINVAL);
	sched_free(s);
}

static void test_fair_scan_window_is_per_user(void **state)
{
	(void)state;
	/* ann has 300 queued gangs of three GPUs on a two-GPU cluster (none
	 * can start), bob one single-GPU segment.  ann ranks first (both at
	 * 0, lower id), and a window of 256 shared by all users would end on
	 * her refusals; per user, bob's segment is looked at and starts. */
	sched_options o = opts(ORDER_FAIR);
	sched *s = fixture_sched(SHARE_EXCLUSIVE, &o, 2, 16000);
	sched_request r;
	rl_err e;
	for (int k = 0; k < 300; k++) {
		memset(&r, 0, sizeof r);
		r.seg_id = (uint64_t)k + 1;
		r.job_id = (uint64_t)k + 1;
		r.user = 1;
		r.shape = 7;
		r.needs_gpu = 1;
		r.n_devices = 3;
		assert_int_equal(sched_submit(s, &r, &e), 0);
	}
	memset(&r, 0, sizeof r);
	r.seg_id = 1000;
	r.job_id = 1000;
	r.user = 2;
	r.shape = 7;
	r.needs_gpu = 1;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	assert_true(pl[0].seg_id == 1000);
	sched_work wk;
	sched_work_get(s, &wk);
	assert_true(wk.scanned <= 256 + 1);
	/* removing queued segments keeps the books */
	assert_int_equal(sched_remove(s, 5), 1);
	sched_user_state ua;
	assert_int_equal(sched_user_get(s, 1, 0, &ua), 0);
	assert_int_equal(ua.queued, 299);
	assert_int_equal(sched_queue_length(s), 299);
	sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_starves_the_small_user),
		cmocka_unit_test(test_las_runs_new_jobs_first),
		cmocka_unit_test(test_las_tail_orders_long_jobs_by_arrival),
		cmocka_unit_test(test_fair_shares_between_users),
		cmocka_unit_test(test_fair_two_free_devices_go_to_two_users),
		cmocka_unit_test(test_fair_forgets_with_a_half_life),
		cmocka_unit_test(test_fair_service_before_a_restart),
		cmocka_unit_test(test_tiresias_queues),
		cmocka_unit_test(test_order_names_and_defaults),
		cmocka_unit_test(test_policy_table),
		cmocka_unit_test(test_user_limits),
		cmocka_unit_test(test_fair_scan_window_is_per_user),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
