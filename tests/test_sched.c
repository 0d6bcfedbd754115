/*
 * test_sched.c - the core scheduler's life cycle and policies: exclusive,
 * pack and relish placements with worked examples, backfill and aging, gang
 * placement, the OOM raise, adopt and remove, and a randomised run that
 * checks the capacity invariant after every step.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sched/sched.h"
#include "search/rng.h"

/* ---- helpers ----------------------------------------------------------- */

static sched *mk(sharing_policy pol)
{
	sched_options o;
	sched_options_default(&o, pol);
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(&o, &s, &e), 0);
	return s;
}

static int add_gpu(sched *s, uint64_t mib)
{
	sched_device_info d;
	memset(&d, 0, sizeof d);
	snprintf(d.name, sizeof d.name, "test GPU %llu MiB", (unsigned long long)mib);
	d.is_gpu = 1;
	d.mem_total_mib = mib;
	d.compute_total = 100;
	rl_err e;
	int i = sched_add_device(s, &d, &e);
	assert_true(i >= 0);
	return i;
}

static int add_host(sched *s, uint64_t mib, double cpus)
{
	sched_device_info d;
	memset(&d, 0, sizeof d);
	strcpy(d.name, "host");
	d.mem_total_mib = mib;
	d.compute_total = cpus;
	rl_err e;
	int i = sched_add_device(s, &d, &e);
	assert_true(i >= 0);
	return i;
}

static sched_request rq(uint64_t id, double t, uint64_t shape, uint64_t hint)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.exp_id = 1;
	r.shape = shape;
	r.family = 77;
	r.mem_hint_mib = hint;
	r.needs_gpu = 1;
	r.submit_time = t;
	return r;
}

static void submit(sched *s, sched_request r)
{
	rl_err e;
	assert_int_equal(sched_submit(s, &r, &e), 0);
}

static sched_observation ob(seg_outcome out, uint64_t peak, double util, double work,
			    double dur)
{
	sched_observation o = { out, peak, util, work, dur, 0 };
	return o;
}

static void finish(sched *s, uint64_t id, double now, sched_observation o)
{
	rl_err e;
	assert_int_equal(sched_finished(s, id, now, &o, &e), 0);
}

/* Capacity invariant: reservations never exceed any device. */
static void check_capacity(const sched *s)
{
	for (size_t i = 0; i < sched_device_count(s); i++) {
		sched_device_state st;
		assert_int_equal(sched_device_get(s, (int)i, &st), 0);
		assert_true(st.mem_reserved_mib <= st.info.mem_total_mib);
		if (!st.info.is_gpu)
			assert_true(st.compute_reserved <= st.info.compute_total + 1e-9);
	}
}

static const sched_placement *find_pl(const sched_placement *pl, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (pl[i].seg_id == id)
			return &pl[i];
	return NULL;
}

/* Segment id was placed with this basis and reservation. */
static void expect_pl(const sched_placement *pl, size_t n, uint64_t id, sched_basis basis,
		      uint64_t mem_mib)
{
	const sched_placement *p = find_pl(pl, n, id);
	assert_non_null(p);
	assert_int_equal(p->basis, basis);
	assert_int_equal(p->mem_mib, mem_mib);
}

/* ---- tests ------------------------------------------------------------- */

static void test_relish_spreads_when_idle(void **state)
{
	(void)state;
	/* Shapes 300 and 301 were measured alone at 30 % utilisation, so the
	 * co-location prior expects a pair of them to run at full speed: the
	 * gain of sharing a GPU equals that of an idle one.  relish then
	 * spreads (sharing gains nothing over an idle device and risks
	 * interference) and shares only once no GPU is idle. */
	sched *s = mk(SHARE_RELISH);
	add_gpu(s, 16000);
	add_gpu(s, 16000);
	sched_placement pl[4];
	submit(s, rq(1, 0, 300, 1000));
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	finish(s, 1, 10, ob(SEG_OUT_COMPLETED, 1000, 30, 1, 10));
	submit(s, rq(2, 10, 301, 1000));
	assert_int_equal(sched_place(s, 10, pl, 4), 1);
	finish(s, 2, 20, ob(SEG_OUT_COMPLETED, 1000, 30, 1, 10));

	submit(s, rq(3, 20, 300, 1000));
	assert_int_equal(sched_place(s, 20, pl, 4), 1);
	int d3 = pl[0].dev[0];
	submit(s, rq(4, 21, 301, 1000));
	assert_int_equal(sched_place(s, 21, pl, 4), 1);
	assert_int_not_equal(pl[0].dev[0], d3); /* spread: an idle GPU was there */
	submit(s, rq(5, 22, 300, 1000));
	assert_int_equal(sched_place(s, 22, pl, 4), 1); /* no idle GPU: share */
	sched_device_state a, b;
	assert_int_equal(sched_device_get(s, 0, &a), 0);
	assert_int_equal(sched_device_get(s, 1, &b), 0);
	assert_int_equal(a.n_running + b.n_running, 3);
	sched_free(s);
}

static void test_priority_and_solo(void **state)
{
	(void)state;
	/* Queue order is (priority, submit_time, seg_id): a later request
	 * with a lower priority goes first on a GPU that holds one. */
	sched *s = mk(SHARE_EXCLUSIVE);
	add_gpu(s, 16000);
	sched_placement pl[4];
	sched_request a = rq(1, 0, 100, 1000), b = rq(2, 5, 101, 1000);
	a.priority = 3600;
	b.priority = 0;
	submit(s, a);
	submit(s, b);
	assert_int_equal(sched_place(s, 10, pl, 4), 1);
	assert_int_equal(pl[0].seg_id, 2);
	sched_free(s);

	/* relish with solo_after_s (off by default): a segment whose job
	 * has attained that much service runs alone (whole device) even with
	 * a small hint; a fresh one of the same size shares. */
	sched_options so;
	sched_options_default(&so, SHARE_RELISH);
	so.solo_after_s = 86400;
	rl_err se;
	assert_int_equal(sched_new(&so, &s, &se), 0);
	add_gpu(s, 16000);
	add_gpu(s, 16000);
	sched_request old = rq(3, 0, 200, 1000), young = rq(4, 0, 201, 1000);
	old.attained_s = 86400;
	submit(s, old);
	submit(s, young);
	size_t n = sched_place(s, 1, pl, 4);
	assert_int_equal(n, 2);
	expect_pl(pl, n, 3, SCHED_BASIS_EXCLUSIVE, 16000);
	expect_pl(pl, n, 4, SCHED_BASIS_HINT, 1200);
	assert_int_not_equal(find_pl(pl, n, 3)->dev[0], find_pl(pl, n, 4)->dev[0]);
	sched_free(s);
}

static void test_names_and_defaults(void **state)
{
	(void)state;
	for (int i = 0; i < SEG_OUT__COUNT; i++) {
		seg_outcome o;
		assert_int_equal(seg_outcome_from_name(seg_outcome_name((seg_outcome)i), &o), 0);
		assert_int_equal(o, i);
	}
	seg_outcome o;
	assert_int_equal(seg_outcome_from_name("exploded", &o), RL_EINVAL);
	assert_string_equal(seg_outcome_name(SEG_OUT_OOM), "oom");
	assert_string_equal(sched_basis_name(SCHED_BASIS_FAMILY), "family");
	assert_string_equal(sched_basis_name(SCHED_BASIS_EXCLUSIVE), "exclusive");
	sched_options opt;
	sched_options_default(&opt, SHARE_RELISH);
	assert_true(opt.memory_margin == 0.2);
	assert_int_equal(opt.memory_floor_mib, 256);
	assert_int_equal(opt.host_memory_floor_mib, 64);
	assert_true(opt.min_speedup == 1.0);
	assert_true(opt.colocate_margin == 0.044);
	assert_true(opt.share_gangs == 1);
	assert_true(opt.solo_after_s == 0);
	opt.oom_factor = 0.5;
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(&opt, &s, &e), RL_EINVAL);
	assert_null(s);
	sched_free(NULL);
}

static void test_exclusive_policy(void **state)
{
	(void)state;
	sched *s = mk(SHARE_EXCLUSIVE);
	add_gpu(s, 81920);
	add_gpu(s, 81920);
	for (uint64_t i = 1; i <= 3; i++)
		submit(s, rq(i, (double)i, 100 + i, 1000));
	sched_placement pl[8];
	size_t n = sched_place(s, 3, pl, 8);
	assert_int_equal(n, 2);
	assert_int_equal(pl[0].seg_id, 1);
	assert_int_equal(pl[0].dev[0], 0);
	assert_int_equal(pl[0].mem_mib, 81920);
	assert_true(pl[0].compute == 100);
	assert_int_equal(pl[0].basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(pl[1].seg_id, 2);
	assert_int_equal(pl[1].dev[0], 1);
	assert_int_equal(sched_queue_length(s), 1);
	assert_int_equal(sched_place(s, 4, pl, 8), 0);
	finish(s, 2, 10, ob(SEG_OUT_COMPLETED, 900, 30, 1, 7));
	n = sched_place(s, 10, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(pl[0].dev[0], 1);
	check_capacity(s);
	assert_int_equal(sched_running_count(s), 2);
	/* The work counts bench_sim reads: three calls saw a queue, running
	 * 0, then 2, then 1 (after segment 2 ended) as each began. */
	sched_work w;
	sched_work_get(s, &w);
	assert_int_equal(w.calls, 3);
	assert_int_equal(w.running, 3);
	assert_int_equal(w.placed, 3);
	sched_free(s);
}

/* Worked example: two 10000 MiB GPUs, hints A 6000, B 6000, C 5000,
 * D 3000 in that order.  Best fit: A -> 0 (tie, lower index), B -> 1 (the
 * only fit), C fits nowhere (4000 free each), D backfills onto 0. */
static void test_pack_best_fit_backfill(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_gpu(s, 10000);
	add_gpu(s, 10000);
	submit(s, rq(1, 1, 11, 6000));
	submit(s, rq(2, 2, 12, 6000));
	submit(s, rq(3, 3, 13, 5000));
	submit(s, rq(4, 4, 14, 3000));
	sched_placement pl[8];
	size_t n = sched_place(s, 5, pl, 8);
	assert_int_equal(n, 3);
	assert_int_equal(find_pl(pl, n, 1)->dev[0], 0);
	assert_int_equal(find_pl(pl, n, 2)->dev[0], 1);
	assert_int_equal(find_pl(pl, n, 4)->dev[0], 0);
	assert_null(find_pl(pl, n, 3));
	assert_int_equal(find_pl(pl, n, 4)->mem_mib, 3000);
	assert_int_equal(find_pl(pl, n, 4)->basis, SCHED_BASIS_HINT);
	assert_true(find_pl(pl, n, 4)->compute == 100);
	sched_device_state st;
	sched_device_get(s, 0, &st);
	assert_int_equal(st.mem_reserved_mib, 9000);
	assert_int_equal(st.n_running, 2);
	assert_true(st.compute_reserved == 200); /* GPUs may be oversubscribed */
	uint64_t ids[4];
	assert_int_equal(sched_device_segments(s, 0, ids, 4), 2);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 4);
	/* B ends: C (5000) now fits on device 1. */
	finish(s, 2, 20, ob(SEG_OUT_COMPLETED, 5500, 60, 1, 15));
	n = sched_place(s, 20, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(pl[0].dev[0], 1);
	check_capacity(s);
	sched_free(s);
}

/* pack without a hint: unknown shapes run alone; once measured, the
 * reservation is peak * 1.2 + 256 = 3000 * 1.2 + 256 = 3856 MiB. */
static void test_pack_profile_fallback(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_gpu(s, 40000);
	submit(s, rq(1, 1, 50, 0));
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 1, pl, 4), 1);
	assert_int_equal(pl[0].basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(pl[0].mem_mib, 40000);
	submit(s, rq(2, 2, 50, 0));
	submit(s, rq(3, 3, 51, 1000));
	assert_int_equal(sched_place(s, 3, pl, 4), 0); /* device held whole */
	finish(s, 1, 10, ob(SEG_OUT_COMPLETED, 3000, 40, 1, 9));
	sched_request r2 = rq(2, 2, 50, 0);
	sched_basis b;
	assert_int_equal(sched_estimate_mem(s, &r2, &b), 3856);
	assert_int_equal(b, SCHED_BASIS_PROFILE);
	size_t n = sched_place(s, 10, pl, 4);
	assert_int_equal(n, 2);
	assert_int_equal(find_pl(pl, n, 2)->mem_mib, 3856);
	assert_int_equal(find_pl(pl, n, 3)->mem_mib, 1000);
	check_capacity(s);
	sched_free(s);
}

/* Backfill, then aging: with aging_s = 1800 the big segment B claims the
 * device once it has waited that long, and a small one that would fit is
 * held back until B starts. */
static void test_backfill_and_aging(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_gpu(s, 10000);
	sched_placement pl[4];
	submit(s, rq(1, 0, 1, 6000)); /* X */
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	submit(s, rq(2, 1, 2, 8000)); /* B: does not fit */
	submit(s, rq(3, 2, 3, 2000)); /* S1: backfills */
	size_t n = sched_place(s, 2, pl, 4);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 3);
	submit(s, rq(4, 1990, 4, 1000)); /* S3 */
	/* t = 1000: B has waited 999 s, no claim; S3 would fit but is not
	 * there yet; then at t = 2000 B has waited 1999 s >= 1800: it claims
	 * the device and S3 (1000 <= 2000 free) must wait. */
	n = sched_place(s, 2000, pl, 4);
	assert_int_equal(n, 0);
	assert_int_equal(sched_queue_length(s), 2);
	finish(s, 1, 2100, ob(SEG_OUT_COMPLETED, 5000, 50, 1, 2100));
	n = sched_place(s, 2100, pl, 4);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 2);
	assert_int_equal(pl[0].mem_mib, 8000);
	check_capacity(s);
	/* Without aging, S3 is placed at t = 2000 (pure backfill). */
	sched_options o;
	sched_options_default(&o, SHARE_PACK);
	o.aging_s = 0;
	sched *s2 = NULL;
	rl_err e;
	assert_int_equal(sched_new(&o, &s2, &e), 0);
	add_gpu(s2, 10000);
	submit(s2, rq(1, 0, 1, 6000));
	submit(s2, rq(2, 1, 2, 8000));
	submit(s2, rq(3, 2, 3, 2000));
	submit(s2, rq(4, 1990, 4, 1000));
	n = sched_place(s2, 2000, pl, 4);
	assert_int_equal(n, 3); /* 6000 + 2000 + 1000 <= 10000 */
	assert_int_equal(pl[0].seg_id, 1);
	assert_int_equal(pl[1].seg_id, 3);
	assert_int_equal(pl[2].seg_id, 4);
	assert_int_equal(sched_queue_length(s2), 1);
	sched_free(s2);
	sched_free(s);
}

/* A claim that ends without being made again frees its device for what it
 * held back, although nothing changed on the device.  GPU 0 runs X, GPU 1
 * runs Y with 500 MiB left; the starving B claims GPU 0 at t = 2000, and S,
 * which would fit there but not on GPU 1, is refused; B is then withdrawn,
 * and the next call must place S on GPU 0.  (A claim that ends leaves its
 * device pending, not touched, place.c; without the pending devices
 * counted as changed, S's refusal would stand until something changed on
 * GPU 0.)  For pack (the device index answers) and relish (a walk over
 * the devices changed since the refusal). */
static void claim_withdrawn(sharing_policy pol)
{
	sched *s = mk(pol);
	add_gpu(s, 10000);
	add_gpu(s, 10000);
	sched_placement pl[4];
	int relish = pol == SHARE_RELISH;
	if (relish) {
		/* measured shapes: reservations (peak x 1.2 + 256) of 3856,
		 * 9496, 9856 and 1456 MiB */
		const uint64_t peak[4] = { 3000, 7700, 8000, 1000 };
		for (int k = 0; k < 4; k++) {
			sched_request r = rq(101 + (uint64_t)k, 0, 1 + (uint64_t)k, 0);
			sched_observation o = ob(SEG_OUT_COMPLETED, peak[k], 30, 1, 10);
			sched_learn(s, &r, &o);
		}
	}
	submit(s, rq(1, 0, 1, relish ? 0 : 6000)); /* X */
	submit(s, rq(2, 0, 2, relish ? 0 : 9500)); /* Y */
	size_t n = sched_place(s, 0, pl, 4);
	assert_int_equal(n, 2);
	assert_int_equal(find_pl(pl, n, 1)->dev[0], 0);
	assert_int_equal(find_pl(pl, n, 2)->dev[0], 1);
	submit(s, rq(3, 1, 3, relish ? 0 : 8000)); /* B: fits nowhere */
	assert_int_equal(sched_place(s, 1, pl, 4), 0);
	submit(s, rq(4, 1990, 4, relish ? 0 : 1000)); /* S: fits on GPU 0 only */
	/* B has waited 1999 s: it claims GPU 0 (the least reserved), S is
	 * held back, in this call and the next (claimed again) */
	assert_int_equal(sched_place(s, 2000, pl, 4), 0);
	assert_int_equal(sched_place(s, 2001, pl, 4), 0);
	assert_int_equal(sched_remove(s, 3), 1);
	n = sched_place(s, 2002, pl, 4);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 4);
	assert_int_equal(pl[0].dev[0], 0);
	assert_int_equal(sched_queue_length(s), 0);
	check_capacity(s);
	sched_free(s);
}

static void test_claim_withdrawn_pack(void **state)
{
	(void)state;
	claim_withdrawn(SHARE_PACK);
}

static void test_claim_withdrawn_relish(void **state)
{
	(void)state;
	claim_withdrawn(SHARE_RELISH);
}

/* Gangs take whole empty GPUs and hold them; singles pack elsewhere. */
static void test_gang(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	for (int i = 0; i < 4; i++)
		add_gpu(s, 20000);
	sched_request g = rq(1, 1, 5, 1000);
	g.n_devices = 2;
	submit(s, g);
	submit(s, rq(2, 2, 6, 1000));
	sched_request g3 = rq(3, 3, 7, 1000);
	g3.n_devices = 3;
	submit(s, g3);
	sched_placement pl[4];
	size_t n = sched_place(s, 3, pl, 4);
	assert_int_equal(n, 2);
	const sched_placement *p1 = find_pl(pl, n, 1);
	assert_int_equal(p1->n_dev, 2);
	assert_int_equal(p1->dev[0], 0);
	assert_int_equal(p1->dev[1], 1);
	assert_int_equal(p1->mem_mib, 20000);
	assert_int_equal(p1->basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(find_pl(pl, n, 2)->dev[0], 2);
	/* the 3-gang needs three empty GPUs: only device 3 is empty */
	assert_int_equal(sched_queue_length(s), 1);
	sched_request g5 = rq(5, 4, 6, 1000);
	g5.needs_gpu = 1;
	submit(s, g5);
	n = sched_place(s, 4, pl, 4);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].dev[0], 2); /* best fit: beside segment 2, not on 3 */
	finish(s, 1, 50, ob(SEG_OUT_COMPLETED, 0, -1, 0, 0));
	n = sched_place(s, 50, pl, 4);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(pl[0].n_dev, 3);
	assert_int_equal(pl[0].dev[0], 0);
	assert_int_equal(pl[0].dev[1], 1);
	assert_int_equal(pl[0].dev[2], 3);
	sched_request big = rq(9, 5, 8, 0);
	big.n_devices = 5;
	assert_int_equal(sched_fits_ever(s, &big), 0);
	big.n_devices = 4;
	assert_int_equal(sched_fits_ever(s, &big), 1);
	check_capacity(s);
	sched_free(s);
}

/* OOM: peak 4000 measured -> reservation 4000 * 1.2 + 256 = 5056; an OOM
 * then raises the need to max(peak 5000, 5056 * 1.5 = 7584) = 7584. */
static void test_oom_raise(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_gpu(s, 16000);
	sched_request r = rq(1, 0, 42, 0);
	sched_observation o = ob(SEG_OUT_COMPLETED, 4000, 50, 10, 100);
	sched_learn(s, &r, &o);
	sched_basis b;
	assert_int_equal(sched_estimate_mem(s, &r, &b), 5056);
	assert_int_equal(b, SCHED_BASIS_PROFILE);
	submit(s, r);
	sched_placement pl[2];
	assert_int_equal(sched_place(s, 0, pl, 2), 1);
	assert_int_equal(pl[0].mem_mib, 5056);
	finish(s, 1, 5, ob(SEG_OUT_OOM, 5000, -1, 0, 5));
	sched_request r2 = rq(2, 5, 42, 0);
	assert_int_equal(sched_estimate_mem(s, &r2, &b), 7584);
	assert_int_equal(b, SCHED_BASIS_OOM);
	sched_shape_info si;
	assert_int_equal(sched_shape_get(s, 42, &si), 0);
	assert_int_equal(si.oom_floor_mib, 7584);
	assert_int_equal(si.peak_mib, 4000); /* an OOM peak is not a measurement */
	/* a driver-set floor above that wins */
	r2.min_mem_mib = 9000;
	assert_int_equal(sched_estimate_mem(s, &r2, &b), 9000);
	/* exclusive: a whole device whatever is known */
	r2.exclusive = 1;
	submit(s, r2);
	assert_int_equal(sched_place(s, 6, pl, 2), 1);
	assert_int_equal(pl[0].mem_mib, 16000);
	assert_int_equal(pl[0].basis, SCHED_BASIS_EXCLUSIVE);
	/* An OOM with the whole device raises the shape's floor past every
	 * device: an estimate, so the shape runs alone (a whole device), and
	 * the request can still be placed.  Whether the trial fails is the
	 * memory policy's decision (test_mem). */
	finish(s, 2, 9, ob(SEG_OUT_OOM, 15900, -1, 0, 3));
	assert_int_equal(sched_shape_get(s, 42, &si), 0);
	assert_int_equal(si.oom_floor_mib, 24000);
	sched_request r3 = rq(3, 9, 42, 0);
	assert_int_equal(sched_estimate_mem(s, &r3, &b), 0);
	assert_int_equal(b, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(sched_fits_ever(s, &r3), 1);
	sched_free(s);
}

/* relish: unknown shapes run alone, hints are used, measured shapes pack
 * when the co-location model says throughput grows. */
static void test_relish_policy(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_gpu(s, 40000);
	add_gpu(s, 40000);
	sched_placement pl[8];
	submit(s, rq(1, 0, 100, 0));    /* unknown, no hint: alone */
	sched_request r2 = rq(2, 1, 200, 5000); /* unknown with a hint */
	r2.family = 88; /* another family: its utilisation stays unknown */
	submit(s, r2);
	size_t n = sched_place(s, 1, pl, 8);
	assert_int_equal(n, 2);
	expect_pl(pl, n, 1, SCHED_BASIS_EXCLUSIVE, 40000);
	expect_pl(pl, n, 2, SCHED_BASIS_HINT, 6000); /* hint + 20 % margin */
	int d1 = find_pl(pl, n, 1)->dev[0], d2 = find_pl(pl, n, 2)->dev[0];
	assert_int_not_equal(d1, d2);
	/* shape 100 measured alone: 3000 MiB, 40 % busy, 2 epochs/100 s */
	finish(s, 1, 101, ob(SEG_OUT_COMPLETED, 3000, 40, 2, 100));
	sched_shape_info si;
	assert_int_equal(sched_shape_get(s, 100, &si), 0);
	assert_true(si.util == 40);
	assert_true(si.thr_alone == 0.02);
	/* shape 200 (5000 hint, default 100 % compute) holds d2; a 40 % shape
	 * beside a 100 % one: prior speeds 100/140 each, throughput 1.43 >
	 * 1.05: admitted, but the empty device gives a full 1.0 gain > 0.43:
	 * segment 3 goes to the empty device. */
	submit(s, rq(3, 102, 100, 0));
	n = sched_place(s, 102, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].dev[0], d1);
	assert_int_equal(pl[0].basis, SCHED_BASIS_PROFILE);
	assert_int_equal(pl[0].mem_mib, 3856);
	assert_true(pl[0].compute == 40);
	/* A second 40 % segment: beside segment 3 (40 + 40 <= 100, gain 1)
	 * ties with beside segment 2 (gain 0.43)?  No: gain 1 wins. */
	submit(s, rq(4, 103, 100, 0));
	n = sched_place(s, 103, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].dev[0], d1);
	/* Seed: shape 100 beside itself runs at half speed: a third one is
	 * refused on d1 (3 members at 1/(1+1+1) = 1.0 < 1.05 * 1.0), and on
	 * d2 beside shape 200 the prior pair (40 + 100) gives 1.43 -> placed
	 * on d2. */
	sched_colocate_seed(s, 100, 100, 0.5, 0.5);
	submit(s, rq(5, 104, 100, 0));
	n = sched_place(s, 104, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].dev[0], d2);
	/* and one more is refused everywhere */
	submit(s, rq(6, 105, 100, 0));
	assert_int_equal(sched_place(s, 105, pl, 8), 0);
	check_capacity(s);
	sched_free(s);
}

/* One probe per unmeasured shape: relish trusts a hint (+ 20 %) for the
 * first segment of a shape it has never measured; while that probe runs,
 * more segments of the shape (an HPO burst of one configuration) run alone
 * instead of all betting on the same hint, and once the probe is measured
 * they share on its measurement. */
static void test_relish_probe_per_shape(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_gpu(s, 40000);
	add_gpu(s, 40000);
	sched_placement pl[8];
	for (uint64_t id = 1; id <= 3; id++) {
		sched_request r = rq(id, (double)id, 300, 5000);
		r.family = 99;
		submit(s, r);
	}
	size_t n = sched_place(s, 10, pl, 8);
	assert_int_equal(n, 2);
	expect_pl(pl, n, 1, SCHED_BASIS_HINT, 6000);
	expect_pl(pl, n, 2, SCHED_BASIS_EXCLUSIVE, 40000);
	assert_int_not_equal(find_pl(pl, n, 1)->dev[0], find_pl(pl, n, 2)->dev[0]);
	/* segment 3: no empty device left, and not on a hint while the probe
	 * runs */
	assert_null(find_pl(pl, n, 3));
	/* the whole-device run ends unmeasured (killed): still one probe */
	assert_int_equal(sched_remove(s, 2), 1);
	n = sched_place(s, 11, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, 3);
	assert_int_equal(pl[0].basis, SCHED_BASIS_EXCLUSIVE);
	/* the probe is measured: the next segment shares on its peak */
	finish(s, 1, 100, ob(SEG_OUT_COMPLETED, 4000, 30, 1, 90));
	sched_request r4 = rq(4, 101, 300, 5000);
	r4.family = 99;
	submit(s, r4);
	n = sched_place(s, 101, pl, 8);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].basis, SCHED_BASIS_PROFILE);
	assert_int_equal(pl[0].mem_mib, 5056); /* 4000 x 1.2 + 256 */
	check_capacity(s);
	sched_free(s);
}

/* A refusal stays valid only while what it was judged on stays: here a
 * device refused segment 4 beside a shape never measured, whose
 * utilisation was the default 100 %; a sibling of that shape (same family)
 * is then measured at 10 %, which becomes the family's estimate for the
 * running one, so the device now admits segment 4, though nothing ran or
 * stopped on it.  (Without exploration, which would try the refused
 * pairs: test_explore.c.) */
static void test_relish_family_util_reopens(void **state)
{
	(void)state;
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	o.explore_max = 0;
	o.timeslice_refused = 0; /* the model's admission alone */
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(&o, &s, &e), 0);
	int d0 = add_gpu(s, 40000), d1 = add_gpu(s, 40000);
	sched_placement pl[8];
	/* two busy measured shapes of other families */
	sched_request c = rq(900, 0, 500, 0), f = rq(901, 0, 600, 0);
	c.family = 55;
	f.family = 66;
	sched_learn(s, &c, &(sched_observation){ SEG_OUT_COMPLETED, 3000, 95, 1, 10 , 0});
	sched_learn(s, &f, &(sched_observation){ SEG_OUT_COMPLETED, 3000, 97, 1, 10 , 0});
	/* probes of two unmeasured shapes of family 99, one per device */
	for (uint64_t id = 1; id <= 2; id++) {
		sched_request r = rq(id, (double)id, 299 + id, 5000);
		r.family = 99;
		submit(s, r);
	}
	size_t n = sched_place(s, 1, pl, 8);
	assert_int_equal(n, 2);
	assert_int_equal(find_pl(pl, n, 1)->dev[0], d0);
	assert_int_equal(find_pl(pl, n, 2)->dev[0], d1);
	/* 97 % and 95 % beside a 100 % default: 200/197 and 200/195 < 1.05,
	 * refused on both devices */
	sched_request r3 = rq(3, 2, 600, 0), r4 = rq(4, 3, 500, 0);
	r3.family = 66;
	r4.family = 55;
	submit(s, r3);
	submit(s, r4);
	assert_int_equal(sched_place(s, 3, pl, 8), 0);
	/* segment 2's shape measured at 10 %: family 99's estimate for shape
	 * 300 is now 10 %.  Segment 3 takes the freed d1 (an idle device
	 * wins); segment 4 is refused beside it (95 + 97: 200/192 < 1.05)
	 * and admitted on d0 beside shape 300 (200/105 = 1.9). */
	finish(s, 2, 10, ob(SEG_OUT_COMPLETED, 4000, 10, 1, 9));
	n = sched_place(s, 10, pl, 8);
	assert_int_equal(n, 2);
	assert_int_equal(find_pl(pl, n, 3)->dev[0], d1);
	assert_non_null(find_pl(pl, n, 4));
	assert_int_equal(find_pl(pl, n, 4)->dev[0], d0);
	check_capacity(s);
	sched_free(s);
}

/* Host devices: CPU shares must fit.  8 CPUs, 3 CPUs each: two fit. */
static void test_host_compute(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_gpu(s, 20000);
	int h = add_host(s, 16000, 8);
	for (uint64_t i = 1; i <= 3; i++) {
		sched_request r = rq(i, (double)i, 300 + i, 1000);
		r.needs_gpu = 0;
		r.compute_hint = 3;
		submit(s, r);
	}
	sched_placement pl[4];
	size_t n = sched_place(s, 5, pl, 4);
	assert_int_equal(n, 2);
	assert_int_equal(pl[0].dev[0], h);
	assert_int_equal(pl[1].dev[0], h);
	assert_true(pl[0].compute == 3);
	sched_device_state st;
	sched_device_get(s, h, &st);
	assert_true(st.compute_reserved == 6);
	check_capacity(s);
	sched_free(s);
	/* Without a host device, CPU-only requests go to the GPUs. */
	s = mk(SHARE_PACK);
	add_gpu(s, 20000);
	sched_request r = rq(1, 0, 1, 1000);
	r.needs_gpu = 0;
	submit(s, r);
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	assert_int_equal(pl[0].dev[0], 0);
	sched_free(s);
}

static void test_adopt_remove(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_gpu(s, 10000);
	rl_err e;
	sched_request r = rq(7, 0, 1, 3000);
	sched_placement p = { 7, 1, { 0 }, 3000, 100, SCHED_BASIS_HINT };
	assert_int_equal(sched_adopt(s, &r, &p, &e), 0);
	assert_int_equal(sched_adopt(s, &r, &p, &e), RL_EEXISTS);
	sched_request r2 = rq(8, 0, 1, 3000);
	p.dev[0] = 3;
	assert_int_equal(sched_adopt(s, &r2, &p, &e), RL_EINVAL);
	p.dev[0] = 0;
	p.mem_mib = 8000;
	assert_int_equal(sched_adopt(s, &r2, &p, &e), RL_ENOSPACE);
	assert_non_null(strstr(e.msg, "do not fit"));
	sched_device_state st;
	sched_device_get(s, 0, &st);
	assert_int_equal(st.mem_reserved_mib, 3000);
	assert_int_equal(sched_running_count(s), 1);
	submit(s, rq(9, 1, 2, 8000));
	submit(s, rq(10, 2, 3, 500));
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 2, pl, 4), 1); /* only 10 fits */
	assert_int_equal(sched_remove(s, 9), 1);       /* queued */
	assert_int_equal(sched_queue_length(s), 0);
	assert_int_equal(sched_remove(s, 10), 1);      /* running */
	assert_int_equal(sched_remove(s, 10), 0);
	sched_device_get(s, 0, &st);
	assert_int_equal(st.mem_reserved_mib, 3000);
	assert_int_equal(sched_finished(s, 10, 3, NULL, &e), RL_ENOTFOUND);
	/* the adopted segment finishes; an adopted peak teaches memory */
	finish(s, 7, 10, ob(SEG_OUT_COMPLETED, 2500, 30, 1, 10));
	sched_shape_info si;
	assert_int_equal(sched_shape_get(s, 1, &si), 0);
	assert_int_equal(si.peak_mib, 2500);
	assert_int_equal(si.n_alone, 0); /* no start time: no throughput */
	sched_device_get(s, 0, &st);
	assert_int_equal(st.mem_reserved_mib, 0);
	assert_int_equal(sched_running_count(s), 0);
	/* bad requests */
	sched_request bad = rq(11, 0, 1, 0);
	bad.n_feat = SCHED_MAX_FEAT + 1;
	assert_int_equal(sched_submit(s, &bad, &e), RL_EINVAL);
	sched_free(s);
}

/* Queue order is (submit_time, seg_id), whatever the submission order;
 * max limits how many are returned per call. */
static void test_queue_order_and_max(void **state)
{
	(void)state;
	sched *s = mk(SHARE_EXCLUSIVE);
	for (int i = 0; i < 4; i++)
		add_gpu(s, 1000);
	submit(s, rq(5, 2.0, 1, 0));
	submit(s, rq(3, 2.0, 1, 0));
	submit(s, rq(9, 1.0, 1, 0));
	submit(s, rq(1, 3.0, 1, 0));
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 5, pl, 2), 2);
	assert_int_equal(pl[0].seg_id, 9);
	assert_int_equal(pl[1].seg_id, 3);
	assert_int_equal(sched_place(s, 5, pl, 4), 2);
	assert_int_equal(pl[0].seg_id, 5);
	assert_int_equal(pl[1].seg_id, 1);
	sched_free(s);
}

/* Random events under every policy: the capacity invariant and the
 * books (device sums = sum of live placements) hold after every step. */
static void test_random_invariants(void **state)
{
	(void)state;
	enum { NSEG = 400 };
	for (int pol = SHARE_EXCLUSIVE; pol <= SHARE_RELISH; pol++) {
		rl_rng rng;
		rng_seed(&rng, 1234 + (uint64_t)pol);
		sched *s = mk((sharing_policy)pol);
		add_gpu(s, 16000);
		add_gpu(s, 24000);
		add_gpu(s, 24000);
		add_host(s, 32000, 8);
		static sched_placement live[NSEG + 1];
		static int running[NSEG + 1];
		memset(running, 0, sizeof running);
		uint64_t next = 1;
		double now = 0;
		for (int step = 0; step < 3000; step++) {
			now += rng_uniform(&rng) * 10;
			int act = (int)rng_below(&rng, 10);
			if (act < 4 && next <= NSEG) {
				sched_request r = rq(next, now, rng_below(&rng, 12), 0);
				r.family = r.shape % 3;
				r.n_feat = 1;
				r.feat[0] = (double)(r.shape + 1);
				if (rng_below(&rng, 2))
					r.mem_hint_mib = 500 + rng_below(&rng, 12000);
				r.needs_gpu = rng_below(&rng, 4) != 0;
				r.n_devices = rng_below(&rng, 10) == 0 ? 2 : 1;
				r.compute_hint = r.needs_gpu ? 0 : 1 + (double)rng_below(&rng, 3);
				submit(s, r);
				next++;
			} else if (act < 8) {
				uint64_t id = 1 + rng_below(&rng, next);
				if (id < next && running[id]) {
					seg_outcome o = rng_below(&rng, 8) == 0 ? SEG_OUT_OOM
										  : SEG_OUT_COMPLETED;
					uint64_t peak = 200 + (id * 7919) % 9000;
					finish(s, id, now, ob(o, peak, (double)(id % 90) + 5, 1, 10));
					running[id] = 0;
				}
			} else if (act < 9) {
				uint64_t id = 1 + rng_below(&rng, next);
				if (id < next && sched_remove(s, id))
					running[id] = 0;
			} else {
				sched_placement pl[16];
				size_t n = sched_place(s, now, pl, 16);
				for (size_t i = 0; i < n; i++) {
					assert_true(pl[i].seg_id < next);
					assert_false(running[pl[i].seg_id]);
					running[pl[i].seg_id] = 1;
					live[pl[i].seg_id] = pl[i];
					if (pol == SHARE_EXCLUSIVE)
						assert_int_equal(pl[i].basis, SCHED_BASIS_EXCLUSIVE);
				}
			}
			check_capacity(s);
			uint64_t sum[4] = { 0 };
			size_t cnt[4] = { 0 }, nrun = 0;
			for (uint64_t id = 1; id < next; id++) {
				if (!running[id])
					continue;
				nrun++;
				for (int k = 0; k < live[id].n_dev; k++) {
					sum[live[id].dev[k]] += live[id].mem_mib;
					cnt[live[id].dev[k]]++;
				}
			}
			assert_int_equal(nrun, sched_running_count(s));
			for (int d = 0; d < 4; d++) {
				sched_device_state st;
				sched_device_get(s, d, &st);
				assert_int_equal(st.mem_reserved_mib, sum[d]);
				assert_int_equal(st.n_running, cnt[d]);
				if (pol == SHARE_EXCLUSIVE)
					assert_true(st.n_running <= 1);
			}
		}
		sched_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names_and_defaults),
		cmocka_unit_test(test_exclusive_policy),
		cmocka_unit_test(test_pack_best_fit_backfill),
		cmocka_unit_test(test_pack_profile_fallback),
		cmocka_unit_test(test_backfill_and_aging),
		cmocka_unit_test(test_claim_withdrawn_pack),
		cmocka_unit_test(test_claim_withdrawn_relish),
		cmocka_unit_test(test_gang),
		cmocka_unit_test(test_oom_raise),
		cmocka_unit_test(test_relish_policy),
		cmocka_unit_test(test_relish_probe_per_shape),
		cmocka_unit_test(test_relish_family_util_reopens),
		cmocka_unit_test(test_priority_and_solo),
		cmocka_unit_test(test_relish_spreads_when_idle),
		cmocka_unit_test(test_host_compute),
		cmocka_unit_test(test_adopt_remove),
		cmocka_unit_test(test_queue_order_and_max),
		cmocka_unit_test(test_random_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
