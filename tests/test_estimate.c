/*
 * test_estimate.c - the memory estimator: profiles, reservation bases and
 * the family model, which must recover synthetic memory laws from a few
 * measured shapes and predict an unseen shape within a stated error.
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

static sched *mk(sharing_policy pol)
{
	return fixture_sched(pol, NULL, 1, 81920);
}

static sched_request shape_req(uint64_t shape, double batch, double width)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = shape;
	r.shape = shape;
	r.family = 9;
	r.n_feat = 2;
	r.feat[0] = batch;
	r.feat[1] = width;
	r.needs_gpu = 1;
	return r;
}

static void learn_peak(sched *s, const sched_request *r, double peak)
{
	sched_observation o = { SEG_OUT_COMPLETED, (uint64_t)llround(peak), 50, 1, 10 , 0};
	sched_learn(s, r, &o);
}

/* peak = 500 + 12 b + 0.5 b w: eight measured shapes, the pairwise model
 * is exact and wins; the unseen (48, 384) has peak 500 + 576 + 9216 =
 * 10292 MiB and is predicted within 1 %. */
static void test_family_pairwise_law(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	static const double bw[8][2] = { { 16, 128 }, { 32, 128 }, { 64, 128 }, { 16, 256 },
					 { 64, 256 }, { 16, 512 }, { 32, 512 }, { 64, 512 } };
	for (int i = 0; i < 8; i++) {
		sched_request r = shape_req(100 + (uint64_t)i, bw[i][0], bw[i][1]);
		learn_peak(s, &r, 500 + 12 * bw[i][0] + 0.5 * bw[i][0] * bw[i][1]);
	}
	sched_fit fit;
	size_t n;
	double loo;
	assert_int_equal(sched_family_fit(s, 9, &fit, &n, &loo), 0);
	assert_int_equal(fit, SCHED_FIT_PAIRWISE);
	assert_int_equal(n, 8);
	assert_true(loo < 5); /* MiB: the law is inside the model */
	sched_request u = shape_req(999, 48, 384);
	sched_mem_estimate e;
	sched_estimate(s, &u, &e);
	assert_int_equal(e.basis, SCHED_BASIS_FAMILY);
	assert_int_equal(e.fit, SCHED_FIT_PAIRWISE);
	assert_true(fabs(e.peak_mib - 10292) / 10292 < 0.01);
	/* reservation = prediction * 1.2 + 256 + LOO error */
	assert_true(fabs((double)e.reserve_mib - (e.peak_mib * 1.2 + 256 + e.loo_rmse_mib)) <= 1);
	/* the driver compares the prediction with the peak it then observes */
	learn_peak(s, &u, 10292);
	sched_estimate(s, &u, &e);
	assert_int_equal(e.basis, SCHED_BASIS_PROFILE);
	assert_true(e.peak_mib == 10292);
	assert_int_equal(e.reserve_mib, (uint64_t)ceil(10292 * 1.2 + 256));
	sched_free(s);
}

/* Two shapes of a line peak = 1000 + 20 b: a tie in LOO error between the
 * constant and the line goes to the line, which predicts b = 64 as 2280. */
static void test_family_two_points(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	sched_request a = shape_req(1, 16, 1), b = shape_req(2, 32, 1);
	a.n_feat = b.n_feat = 1;
	learn_peak(s, &a, 1320);
	sched_request u = shape_req(3, 64, 1);
	u.n_feat = 1;
	sched_basis basis;
	/* one measured shape is not a family model: unknown runs alone */
	assert_int_equal(sched_estimate_mem(s, &u, &basis), 0);
	assert_int_equal(basis, SCHED_BASIS_EXCLUSIVE);
	learn_peak(s, &b, 1640);
	sched_mem_estimate e;
	sched_estimate(s, &u, &e);
	assert_int_equal(e.basis, SCHED_BASIS_FAMILY);
	assert_int_equal(e.fit, SCHED_FIT_LINEAR);
	assert_true(fabs(e.peak_mib - 2280) < 2);
	/* relish believes the family model (fitted on measurements) before a
	 * declared hint */
	u.mem_hint_mib = 4000;
	assert_int_equal(sched_estimate_mem(s, &u, &basis), e.reserve_mib);
	assert_int_equal(basis, SCHED_BASIS_FAMILY);
	sched_free(s);
}

/* A power law peak = 40 b^0.75 over b = 2 .. 256: loglog is exact and
 * wins; b = 100 (true 1264.9) within 1 %. */
static void test_family_power_law(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	for (int i = 1; i <= 8; i++) {
		sched_request r = shape_req(200 + (uint64_t)i, pow(2, i), 1);
		r.n_feat = 1;
		learn_peak(s, &r, 40 * pow(pow(2, i), 0.75));
	}
	sched_fit fit;
	assert_int_equal(sched_family_fit(s, 9, &fit, NULL, NULL), 0);
	assert_int_equal(fit, SCHED_FIT_LOGLOG);
	sched_request u = shape_req(300, 100, 1);
	u.n_feat = 1;
	sched_mem_estimate e;
	sched_estimate(s, &u, &e);
	double truth = 40 * pow(100, 0.75);
	assert_true(fabs(e.peak_mib - truth) / truth < 0.01);
	sched_free(s);
}

/* Bases by policy: pack believes hints first, relish measurements first;
 * the exclusive policy reserves whole devices. */
static void test_bases_by_policy(void **state)
{
	(void)state;
	sharing_policy pols[3] = { SHARE_EXCLUSIVE, SHARE_PACK, SHARE_RELISH };
	sched_basis want[3] = { SCHED_BASIS_EXCLUSIVE, SCHED_BASIS_HINT, SCHED_BASIS_PROFILE };
	uint64_t mem[3] = { 0, 7000, (uint64_t)ceil(2000 * 1.2 + 256) };
	for (int i = 0; i < 3; i++) {
		sched *s = mk(pols[i]);
		sched_request r = shape_req(5, 8, 8);
		learn_peak(s, &r, 2000);
		r.mem_hint_mib = 7000;
		sched_basis b;
		assert_int_equal(sched_estimate_mem(s, &r, &b), mem[i]);
		assert_int_equal(b, want[i]);
		sched_shape_info si;
		assert_int_equal(sched_shape_get(s, 5, &si), 0);
		assert_int_equal(si.n_measured, 1);
		assert_int_equal(si.peak_mib, 2000);
		assert_true(si.util == 50);
		assert_int_equal(sched_shape_get(s, 6, &si), RL_ENOTFOUND);
		sched_free(s);
	}
	/* host devices use the host floor (64 MiB) */
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	sched *s = NULL;
	rl_err err;
	assert_int_equal(sched_new(&o, &s, &err), 0);
	sched_device_info h;
	memset(&h, 0, sizeof h);
	h.mem_total_mib = 64000;
	h.compute_total = 16;
	assert_int_equal(sched_add_device(s, &h, &err), 0);
	sched_request r = shape_req(5, 8, 8);
	r.needs_gpu = 0;
	learn_peak(s, &r, 1000);
	assert_int_equal(sched_estimate_mem(s, &r, NULL), 1000 * 1.2 + 64);
	sched_free(s);
}

/* A hint's headroom follows the hints measured so far (hint_quantile):
 * 19 shapes peaked at 0.8 of their hint, then one at 1.29.  With fewer
 * than SCHED_HINT_MIN shapes, or the quantile off, a hint of 1,000 MiB
 * reserves 1,200 (memory_margin); with 20 and the 0.999 quantile, the
 * largest ratio's hundredth, 1.30: 1,300.  A shape counts once, with its
 * first measurement. */
static void test_hint_headroom_measured(void **state)
{
	(void)state;
	for (int on = 0; on < 2; on++) {
		sched_options o;
		sched_options_default(&o, SHARE_RELISH);
		if (!on)
			o.hint_quantile = 0;
		sched *s = fixture_sched(SHARE_RELISH, &o, 1, 81920);
		sched_request fresh = shape_req(500, 8, 8);
		fresh.family = 500;
		fresh.mem_hint_mib = 1000;
		for (uint64_t i = 0; i < 19; i++) {
			sched_request r = shape_req(100 + i, 8, 8);
			r.family = 100 + i; /* no family model: the hint decides */
			r.mem_hint_mib = 1000;
			learn_peak(s, &r, 800);
		}
		sched_basis b;
		assert_int_equal(sched_estimate_mem(s, &fresh, &b), 1200);
		assert_int_equal(b, SCHED_BASIS_HINT);
		sched_request r = shape_req(119, 8, 8);
		r.family = 119;
		r.mem_hint_mib = 1000;
		learn_peak(s, &r, 1290);
		assert_int_equal(sched_estimate_mem(s, &fresh, &b), on ? 1300 : 1200);
		/* a second measurement of a counted shape adds nothing */
		r = shape_req(100, 8, 8);
		r.family = 100;
		r.mem_hint_mib = 100;
		learn_peak(s, &r, 5000);
		assert_int_equal(sched_estimate_mem(s, &fresh, &b), on ? 1300 : 1200);
		sched_free(s);
	}
}

/* The hints' headroom survives a restart (learnt.c): the 20 ratios of
 * test_hint_headroom_measured are two bins of the hint's histogram; a new
 * core given them back reserves 1,300 MiB for a fresh hint of 1,000 at
 * once, where one without them reserves the margin's 1,200. */
static void test_hint_headroom_kept(void **state)
{
	(void)state;
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	sched *s = fixture_sched(SHARE_RELISH, &o, 1, 81920);
	for (uint64_t i = 0; i < 20; i++) {
		sched_request r = shape_req(100 + i, 8, 8);
		r.family = 100 + i;
		r.mem_hint_mib = 1000;
		learn_peak(s, &r, i < 19 ? 800 : 1290);
	}
	sched_learnt rows[8];
	uint64_t next = 0;
	assert_int_equal(sched_learnt_list(s, 0, rows, 8, &next), 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rows[i].kind, SCHED_LEARNT_HINT);
		assert_true(rows[i].a == 80 ? rows[i].n == 19 : rows[i].a == 129 && rows[i].n == 1);
	}
	sched_request fresh = shape_req(500, 8, 8);
	fresh.family = 500;
	fresh.mem_hint_mib = 1000;
	sched_basis b;
	assert_int_equal(sched_estimate_mem(s, &fresh, &b), 1300);
	sched_free(s);
	for (int give = 0; give < 2; give++) {
		s = fixture_sched(SHARE_RELISH, &o, 1, 81920);
		rl_err e;
		for (int i = 0; give && i < 2; i++)
			assert_int_equal(sched_learnt_import(s, &rows[i], &e), 0);
		assert_int_equal(sched_estimate_mem(s, &fresh, &b), give ? 1300 : 1200);
		assert_int_equal(b, SCHED_BASIS_HINT);
		sched_free(s);
	}
}

/* The family model's reservations are raised as far as the peaks
 * measured against them say (family_quantile): a constant family (1,000
 * MiB), 19 new shapes placed on its estimate peak at 1,000 (0.69 of
 * their reservation), the 20th runs out of memory there and completes,
 * raised, at 1.295 of it (an out-of-memory is no measurement, its
 * completed peak is).  A new shape's family reservation is then the
 * model's (prediction x 1.2 + 256 + its error) times 1.30, the upper edge
 * of the largest ratio's hundredth; with the quantile off, or before 20
 * shapes, the model's alone. */
static void test_family_headroom_measured(void **state)
{
	(void)state;
	for (int on = 0; on < 2; on++) {
		sched_options o;
		sched_options_default(&o, SHARE_RELISH);
		assert_true(o.family_quantile == 0.999); /* relish's default */
		if (!on)
			o.family_quantile = 0;
		sched *s = fixture_sched(SHARE_RELISH, &o, 1, 81920);
		rl_err e;
		for (uint64_t i = 0; i < 2; i++) {
			sched_request r = shape_req(1 + i, 8 + (double)i, 1);
			r.n_feat = 1;
			learn_peak(s, &r, 1000);
		}
		sched_request u = shape_req(999, 20, 1);
		u.n_feat = 1;
		sched_mem_estimate est;
		for (uint64_t i = 0; i < 20; i++) {
			/* before the 20th shape the model's reservation alone */
			sched_estimate(s, &u, &est);
			assert_int_equal(est.basis, SCHED_BASIS_FAMILY);
			assert_true(fabs((double)est.reserve_mib -
					 (est.peak_mib * 1.2 + 256 + est.loo_rmse_mib)) <= 1);
			sched_request r = shape_req(100 + i, 16 + (double)i, 1);
			r.n_feat = 1;
			r.seg_id = 1000 + i;
			double t = 10 * (double)i;
			assert_int_equal(sched_submit(s, &r, &e), 0);
			sched_placement pl;
			assert_int_equal(sched_place(s, t, &pl, 1), 1);
			assert_int_equal(pl.basis, SCHED_BASIS_FAMILY);
			double peak = i < 19 ? 1000 : 1.295 * (double)pl.mem_mib;
			if (i == 19) {
				sched_observation oom = { SEG_OUT_OOM, pl.mem_mib, 50, 0, 1, 0 };
				assert_int_equal(sched_finished(s, r.seg_id, t + 1, &oom, &e), 0);
				r.seg_id = 2000;
				r.min_mem_mib = 2 * pl.mem_mib;
				assert_int_equal(sched_submit(s, &r, &e), 0);
				assert_int_equal(sched_place(s, t + 1, &pl, 1), 1);
				assert_int_equal(pl.basis, SCHED_BASIS_OOM);
			}
			sched_observation ok = { SEG_OUT_COMPLETED, (uint64_t)llround(peak), 50, 1, 1, 0 };
			assert_int_equal(sched_finished(s, r.seg_id, t + 2, &ok, &e), 0);
		}
		sched_estimate(s, &u, &est);
		assert_int_equal(est.basis, SCHED_BASIS_FAMILY);
		double model = est.peak_mib * 1.2 + 256 + est.loo_rmse_mib;
		assert_true(fabs((double)est.reserve_mib - (on ? model * 1.30 : model)) <= 1);
		sched_free(s);
	}
}

/* The profile the core exports is what a driver stores and imports in a
 * later run (issue 28: the live driver recomputed it beside the core):
 * throughput alone from a segment that ran alone, beside others from one
 * that shared for more than a twentieth of its life, the stored count and
 * figures given back as they were. */
static void test_profile_export_import(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	rl_err e;
	sched_request a = shape_req(1, 16, 128), b = shape_req(2, 16, 128);
	a.mem_hint_mib = b.mem_hint_mib = 1000;
	b.seg_id = 2;
	sched_learn(s, &a, &(sched_observation){SEG_OUT_COMPLETED, 900, 30, 1, 1, 0});
	sched_learn(s, &b, &(sched_observation){SEG_OUT_COMPLETED, 900, 30, 1, 1, 0});
	a.seg_id = 11;
	b.seg_id = 12;
	assert_int_equal(sched_submit(s, &a, &e), 0);
	assert_int_equal(sched_submit(s, &b, &e), 0);
	sched_placement pl[2];
	assert_int_equal(sched_place(s, 0, pl, 2), 2);
	assert_int_equal(pl[0].dev[0], pl[1].dev[0]); /* one device: they share */
	/* 10 units in 20 s beside the other */
	assert_int_equal(sched_finished(s, 11, 20, &(sched_observation){SEG_OUT_COMPLETED, 950, 30, 10, 20, 0}, &e), 0);
	sched_shape_info si;
	assert_int_equal(sched_shape_get(s, 1, &si), 0);
	assert_int_equal(si.n_measured, 2);
	assert_int_equal(si.peak_mib, 950);
	assert_true(fabs(si.thr_alone - 1) < 1e-12);  /* the learnt one */
	assert_true(fabs(si.thr_shared - 0.5) < 1e-12);
	assert_int_equal(si.n_shared, 1);

	/* a new core, as a later run: import, read back the same */
	sched *t = mk(SHARE_RELISH);
	sched_shape_info in = {.n_measured = 7, .peak_mib = 950, .util = 30, .thr_alone = 1,
			       .thr_shared = 0.5};
	sched_shape_import(t, &a, &in);
	sched_shape_info out;
	assert_int_equal(sched_shape_get(t, 1, &out), 0);
	assert_int_equal(out.n_measured, 7);
	assert_int_equal(out.peak_mib, 950);
	assert_true(fabs(out.util - 30) < 1e-12);
	assert_true(fabs(out.thr_alone - 1) < 1e-12);
	assert_true(fabs(out.thr_shared - 0.5) < 1e-12);
	sched_mem_estimate est;
	sched_estimate(t, &a, &est);
	assert_int_equal(est.basis, SCHED_BASIS_PROFILE); /* measured: no probe */
	sched_free(t);
	sched_free(s);
}

/* A core under relish with one host device of mem_mib MiB and 2 CPUs. */
static sched *mk_host(uint64_t mem_mib)
{
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	sched *s = NULL;
	rl_err err;
	assert_int_equal(sched_new(&o, &s, &err), 0);
	sched_device_info h;
	memset(&h, 0, sizeof h);
	snprintf(h.uuid, sizeof h.uuid, "host");
	h.mem_total_mib = mem_mib;
	h.compute_total = 2;
	assert_int_equal(sched_add_device(s, &h, &err), 0);
	return s;
}

static sched_request host_req(uint64_t shape, double lr)
{
	sched_request r = shape_req(shape, lr, 1);
	r.needs_gpu = 0;
	r.compute_hint = 0.5;
	return r;
}

/* The host's probe (issue 30, item 8): a CPU trial never measured reserves
 * a quarter of the host within 1 and 8 GiB, not the whole host (which made
 * every new experiment run alone); a probe as large as the host is whole;
 * a GPU's first segment stays whole; one probe of a shape at a time. */
static void test_host_probe(void **state)
{
	(void)state;
	static const struct { uint64_t host, want; sched_basis basis; } cases[] = {
		{ 24000, 6000, SCHED_BASIS_PROBE },  /* a quarter */
		{ 65536, 8192, SCHED_BASIS_PROBE },  /* at most 8 GiB */
		{ 2048, 1024, SCHED_BASIS_PROBE },   /* at least 1 GiB */
		{ 1024, 0, SCHED_BASIS_EXCLUSIVE },  /* 1 GiB is the whole host */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		sched *s = mk_host(cases[i].host);
		sched_request r = host_req(7, 0.1);
		sched_basis b;
		assert_int_equal(sched_estimate_mem(s, &r, &b), cases[i].want);
		assert_int_equal(b, cases[i].basis);
		sched_free(s);
	}
	/* a GPU's first segment: whole, as before */
	sched *g = mk(SHARE_RELISH);
	sched_request gr = shape_req(7, 8, 8);
	sched_basis gb;
	assert_int_equal(sched_estimate_mem(g, &gr, &gb), 0);
	assert_int_equal(gb, SCHED_BASIS_EXCLUSIVE);
	sched_free(g);

	/* Placed: the probe leaves room beside it; a second segment of its
	 * shape waits for the probe's measurement (whole), another
	 * experiment's probe runs beside it. */
	sched *s = mk_host(24000);
	rl_err e;
	sched_request a = host_req(7, 0.1), a2 = host_req(7, 0.1), other = host_req(8, 0.1);
	a.seg_id = 1;
	a2.seg_id = 2;
	other.seg_id = 3;
	other.family = 10;
	assert_int_equal(sched_submit(s, &a, &e), 0);
	assert_int_equal(sched_submit(s, &a2, &e), 0);
	assert_int_equal(sched_submit(s, &other, &e), 0);
	sched_placement pl[3];
	size_t n = sched_place(s, 0, pl, 3);
	assert_int_equal(n, 2);
	assert_int_equal(pl[0].seg_id, 1);
	assert_int_equal(pl[0].basis, SCHED_BASIS_PROBE);
	assert_int_equal(pl[0].mem_mib, 6000);
	assert_int_equal(pl[1].seg_id, 3);
	assert_int_equal(pl[1].basis, SCHED_BASIS_PROBE);
	/* measured (13 MiB): the shape's next segment has its profile */
	assert_int_equal(sched_finished(s, 1, 5, &(sched_observation){SEG_OUT_COMPLETED, 13, 20, 1, 5, 0}, &e), 0);
	n = sched_place(s, 5, pl, 3);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 2);
	assert_int_equal(pl[0].basis, SCHED_BASIS_PROFILE);
	assert_int_equal(pl[0].mem_mib, (uint64_t)ceil(13 * 1.2 + 64));
	sched_free(s);
}

/* Three failed starts (an import error: no metric line, peaks 6 to 14 MiB)
 * are no measurement of the family (issue 30, item 8): the fixed script
 * that follows gets the host's probe, not a family estimate of about
 * 25 MiB, which stopped it over its reservation at 111 MiB.  Counted as
 * measurements (no_work unset: what the driver passed before) they make
 * the family model this test must not see. */
static void test_failed_starts_not_measured(void **state)
{
	(void)state;
	static const double peaks[3] = { 6, 10, 14 };
	for (int counted = 0; counted <= 1; counted++) {
		sched *s = mk_host(24000);
		rl_err e;
		for (int i = 0; i < 3; i++) {
			sched_request r = host_req(20 + (uint64_t)i, 0.1 * (i + 1));
			r.seg_id = 100 + (uint64_t)i;
			assert_int_equal(sched_submit(s, &r, &e), 0);
			sched_placement pl;
			assert_int_equal(sched_place(s, i, &pl, 1), 1);
			sched_observation o = { SEG_OUT_FAILED, (uint64_t)peaks[i], 30, 1, 0.5,
						.no_work = !counted };
			assert_int_equal(sched_finished(s, r.seg_id, i + 0.5, &o, &e), 0);
		}
		sched_request fixed = host_req(30, 0.4);
		sched_mem_estimate est;
		sched_estimate(s, &fixed, &est);
		if (!counted) {
			assert_int_equal(sched_family_fit(s, 9, NULL, NULL, NULL), RL_ENOTFOUND);
			assert_int_equal(est.basis, SCHED_BASIS_PROBE);
			assert_int_equal(est.reserve_mib, 6000);
			sched_shape_info si;
			assert_int_equal(sched_shape_get(s, 20, &si), 0);
			assert_int_equal(si.n_measured, 0);
			assert_int_equal(si.peak_mib, 0);
		} else {
			/* the poisoned estimate the flag prevents */
			assert_int_equal(est.basis, SCHED_BASIS_FAMILY);
			assert_true(est.reserve_mib < 111);
		}
		sched_free(s);
	}
	/* An out-of-memory still raises the floor, work or none: the peak
	 * at death is a lower bound of what it needs. */
	sched *s = mk_host(24000);
	rl_err e;
	sched_request r = host_req(40, 0.5);
	r.seg_id = 1;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl;
	assert_int_equal(sched_place(s, 0, &pl, 1), 1);
	assert_int_equal(pl.mem_mib, 6000);
	sched_observation o = { SEG_OUT_OOM, 7300, -1, 1, 1, .no_work = 1 };
	assert_int_equal(sched_finished(s, 1, 1, &o, &e), 0);
	sched_shape_info si;
	assert_int_equal(sched_shape_get(s, 40, &si), 0);
	assert_true(si.oom_floor_mib >= 9000);
	sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_pairwise_law),
		cmocka_unit_test(test_family_two_points),
		cmocka_unit_test(test_family_power_law),
		cmocka_unit_test(test_bases_by_policy),
		cmocka_unit_test(test_hint_headroom_measured),
		cmocka_unit_test(test_family_headroom_measured),
		cmocka_unit_test(test_hint_headroom_kept),
		cmocka_unit_test(test_profile_export_import),
		cmocka_unit_test(test_host_probe),
		cmocka_unit_test(test_failed_starts_not_measured),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
