/*
 * test_mem.c - the core's memory policy (src/sched/mem.c), which both
 * drivers apply: what an out-of-memory end means for its trial (re-queue
 * with a raised floor, run alone, fail), that only a measurement fails a
 * trial (an estimate above every device runs alone; a declaration above
 * every device cannot be placed), and the learner's one averaging rule.
 * Worked examples with figures; each names the old behaviour it replaces.
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

static sched *mk(sharing_policy pol)
{
	sched_options o;
	sched_options_default(&o, pol);
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(&o, &s, &e), 0);
	return s;
}

static int add_dev(sched *s, uint64_t mib, int gpu)
{
	sched_device_info d;
	memset(&d, 0, sizeof d);
	snprintf(d.name, sizeof d.name, "%s %llu MiB", gpu ? "GPU" : "host",
		 (unsigned long long)mib);
	d.is_gpu = gpu;
	d.mem_total_mib = mib;
	d.compute_total = gpu ? 100 : 4;
	rl_err e;
	int i = sched_add_device(s, &d, &e);
	assert_true(i >= 0);
	return i;
}

static sched_request rq(uint64_t id, uint64_t shape, uint64_t hint, int gpu)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.exp_id = 1;
	r.shape = shape;
	r.family = 5;
	r.mem_hint_mib = hint;
	r.needs_gpu = gpu;
	r.submit_time = (double)id;
	return r;
}

/* Submit r (with the trial's history applied), place it, return the placement. */
static sched_placement run1(sched *s, sched_request r, const sched_mem_history *h, double now)
{
	rl_err e;
	sched_mem_apply(h, &r);
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl[4];
	size_t n = sched_place(s, now, pl, 4);
	assert_int_equal(n, 1);
	assert_int_equal(pl[0].seg_id, r.seg_id);
	return pl[0];
}

/* End running segment id with outcome and peak; the decision, then finish. */
static sched_mem_decision end1(sched *s, uint64_t id, seg_outcome out, uint64_t peak,
			       sched_mem_history *h, double now)
{
	sched_observation o = {out, peak, -1, out == SEG_OUT_COMPLETED ? 1 : 0, 1, 0};
	sched_mem_decision md;
	rl_err e;
	assert_int_equal(sched_mem_decide(s, id, &o, h, &md, &e), 0);
	assert_int_equal(sched_finished(s, id, now, &o, &e), 0);
	return md;
}

/* A shared out-of-memory raises the floor to max(reservation x 1.5,
 * max(peak, reservation) x 1.2); the third in a row runs alone; alone on an empty device fails with
 * the measurement's words.  (Before: the live driver raised by x1.2 and
 * failed at the seventh, the simulator by x1.25+1 and ran alone after 3.) */
static void test_ladder_then_alone_then_fail(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_dev(s, 16000, 1);
	sched_mem_history h = {0};
	sched_placement p = run1(s, rq(1, 9, 1000, 1), &h, 0);
	assert_int_equal(p.mem_mib, 1000);
	assert_int_equal(p.basis, SCHED_BASIS_HINT);
	sched_mem_decision md = end1(s, 1, SEG_OUT_OOM, 900, &h, 1);
	assert_int_equal(md.verdict, SCHED_MEM_RAISE);
	assert_int_equal(md.min_mem_mib, 1500); /* max(1000 x 1.5, max(900, 1000) x 1.2) */
	assert_int_equal(h.ooms, 1);
	assert_int_equal(h.ooms_in_row, 1);
	assert_false(md.alone);
	assert_non_null(strstr(md.reason, "1500 MiB"));

	p = run1(s, rq(2, 9, 1000, 1), &h, 2);
	assert_int_equal(p.mem_mib, 1500); /* the profile's floor says the same */
	assert_int_equal(p.basis, SCHED_BASIS_OOM);
	md = end1(s, 2, SEG_OUT_OOM, 2000, &h, 3);
	assert_int_equal(md.verdict, SCHED_MEM_RAISE);
	assert_int_equal(md.min_mem_mib, 2400); /* max(2250, 2000 x 1.2) */

	p = run1(s, rq(3, 9, 1000, 1), &h, 4);
	assert_int_equal(p.mem_mib, 2400);
	md = end1(s, 3, SEG_OUT_OOM, 0, &h, 5);
	assert_int_equal(md.verdict, SCHED_MEM_ALONE); /* third in a row */
	assert_int_equal(h.exclusive, 1);
	assert_int_equal(md.min_mem_mib, 3600);

	p = run1(s, rq(4, 9, 1000, 1), &h, 6);
	assert_int_equal(p.basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(p.mem_mib, 16000);
	md = end1(s, 4, SEG_OUT_OOM, 15990, &h, 7);
	assert_int_equal(md.verdict, SCHED_MEM_FAIL);
	assert_true(md.alone);
	assert_string_equal(md.reason, "out of memory alone on an empty device (16000 MiB)");
	assert_int_equal(h.ooms, 4);
	sched_free(s);
}

/* Alone means a whole device and nothing beside it: a segment that shared
 * its device is re-queued, never failed; one whose reservation was all of
 * an empty device's memory (pack, a declared 8000 MiB) was alone. */
static void test_beside_others_is_not_alone(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_dev(s, 8000, 1);
	sched_mem_history ha = {0}, hb = {0};
	run1(s, rq(1, 1, 3000, 1), &ha, 0);
	run1(s, rq(2, 2, 5000, 1), &hb, 0); /* 3000 + 5000 = the whole device */
	sched_mem_decision md = end1(s, 2, SEG_OUT_OOM, 0, &hb, 1);
	assert_false(md.alone);
	assert_int_equal(md.verdict, SCHED_MEM_RAISE);
	assert_int_equal(md.min_mem_mib, 7500);
	md = end1(s, 1, SEG_OUT_COMPLETED, 2000, &ha, 2);
	sched_mem_history hc = {0};
	sched_placement p = run1(s, rq(3, 3, 8000, 1), &hc, 3);
	assert_int_equal(p.mem_mib, 8000);
	assert_int_equal(p.basis, SCHED_BASIS_HINT);
	md = end1(s, 3, SEG_OUT_OOM, 0, &hc, 4);
	assert_true(md.alone);
	assert_int_equal(md.verdict, SCHED_MEM_FAIL);
	sched_free(s);
}

/* A completed segment resets the in-a-row count and the run-alone flag;
 * the floor stays. */
static void test_completed_resets(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_dev(s, 16000, 1);
	sched_mem_history h = {0};
	run1(s, rq(1, 3, 1000, 1), &h, 0);
	end1(s, 1, SEG_OUT_OOM, 0, &h, 1);
	run1(s, rq(2, 3, 1000, 1), &h, 2);
	end1(s, 2, SEG_OUT_OOM, 0, &h, 3);
	assert_int_equal(h.ooms_in_row, 2);
	run1(s, rq(3, 3, 1000, 1), &h, 4);
	sched_mem_decision md = end1(s, 3, SEG_OUT_COMPLETED, 2000, &h, 5);
	assert_int_equal(md.verdict, SCHED_MEM_NONE);
	assert_int_equal(h.ooms_in_row, 0);
	assert_int_equal(h.exclusive, 0);
	assert_int_equal(h.min_mem_mib, 2250);
	assert_int_equal(h.ooms, 2);
	/* A non-memory failure is none of the policy's business. */
	run1(s, rq(4, 3, 1000, 1), &h, 6);
	md = end1(s, 4, SEG_OUT_FAILED, 2000, &h, 7);
	assert_int_equal(md.verdict, SCHED_MEM_NONE);
	assert_int_equal(h.ooms, 2);
	sched_free(s);
}

/* Devices of two sizes: alone on the smaller one is no proof; the trial
 * runs alone on the larger one next, and only there fails. */
static void test_alone_on_a_smaller_device(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_dev(s, 8000, 1);
	add_dev(s, 24000, 1);
	sched_mem_history h = {0};
	sched_placement p = run1(s, rq(1, 4, 0, 1), &h, 0);
	assert_int_equal(p.basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(p.dev[0], 0); /* unknown shape: the smallest empty device */
	sched_mem_decision md = end1(s, 1, SEG_OUT_OOM, 7990, &h, 1);
	assert_int_equal(md.verdict, SCHED_MEM_ALONE);
	assert_int_equal(md.min_mem_mib, 8001);
	p = run1(s, rq(2, 4, 0, 1), &h, 2);
	assert_int_equal(p.dev[0], 1);
	assert_int_equal(p.mem_mib, 24000);
	md = end1(s, 2, SEG_OUT_OOM, 23990, &h, 3);
	assert_int_equal(md.verdict, SCHED_MEM_FAIL);
	sched_free(s);
}

/* Issue 14 item 3: on a 1024 MiB host a shape measured at 802 MiB needs
 * 802 x 1.2 + 64 = 1027 MiB with its headroom, more than the host: it runs
 * alone on the whole host (before: "no device can ever hold its segment",
 * while a 962 MiB trial that ran out of memory was re-placed at 1024 and
 * completed).  Item 4: a family estimate above every GPU runs alone too.
 * Only a declared need above every device cannot be placed. */
static void test_estimate_above_capacity_runs_alone(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_dev(s, 1024, 0);
	sched_request r = rq(1, 8, 0, 0);
	sched_observation o = {SEG_OUT_COMPLETED, 802, -1, 1, 1, 0};
	sched_learn(s, &r, &o);
	sched_mem_estimate e;
	sched_estimate(s, &r, &e);
	assert_int_equal(e.basis, SCHED_BASIS_EXCLUSIVE);
	assert_true(fabs(e.peak_mib - 802) < 1e-9);
	assert_int_equal(sched_fits_ever(s, &r), 1);
	sched_mem_history h = {0};
	sched_placement p = run1(s, r, &h, 0);
	assert_int_equal(p.mem_mib, 1024);
	assert_int_equal(p.basis, SCHED_BASIS_EXCLUSIVE);

	/* declared: 2048 MiB on a 1024 MiB host can never be placed */
	char why[160];
	sched_request big = rq(2, 9, 2048, 0);
	assert_int_equal(sched_never_fits(s, &big, why, sizeof why), 1);
	assert_string_equal(why, "it declares 2048 MiB, more than any host device has (1024 MiB)");
	assert_int_equal(sched_fits_ever(s, &big), 0);
	/* declared within the host but above it with relish's headroom: alone */
	sched_request mid = rq(3, 10, 1000, 0);
	assert_int_equal(sched_fits_ever(s, &mid), 1);
	sched_estimate(s, &mid, &e);
	assert_int_equal(e.basis, SCHED_BASIS_EXCLUSIVE);
	sched_free(s);

	/* A family of GPU shapes whose model predicts past 8 GiB for a big
	 * batch: runs alone, is not refused. */
	s = mk(SHARE_RELISH);
	add_dev(s, 8192, 1);
	for (int b = 1; b <= 3; b++) {
		sched_request m = rq(10 + (uint64_t)b, 100 + (uint64_t)b, 0, 1);
		m.n_feat = 1;
		m.feat[0] = 64.0 * b;
		sched_observation mo = {SEG_OUT_COMPLETED, (uint64_t)(1000 + 2000 * b), -1, 1, 1, 0};
		sched_learn(s, &m, &mo);
	}
	sched_request u = rq(20, 200, 0, 1);
	u.n_feat = 1;
	u.feat[0] = 256; /* predicted 1000 + 2000 x 4 = 9000 MiB */
	sched_estimate(s, &u, &e);
	assert_true(e.peak_mib > 8192);
	assert_int_equal(e.basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(sched_fits_ever(s, &u), 1);
	sched_free(s);
}

/* A gang larger than the class can never be placed, with the reason. */
static void test_gang_never_fits(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_dev(s, 8000, 1);
	add_dev(s, 8000, 1);
	sched_request g = rq(1, 1, 0, 1);
	g.n_devices = 3;
	char why[160];
	assert_int_equal(sched_never_fits(s, &g, why, sizeof why), 1);
	assert_string_equal(why, "it needs 3 GPUs, and relish has 2");
	g.n_devices = 2;
	assert_int_equal(sched_never_fits(s, &g, why, sizeof why), 0);
	sched_free(s);
}

/* The rule on its own, as the live driver replays a trial's stored ends
 * after a restart (recover.c): the same floors as the running path. */
static void test_rule_replay(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_dev(s, 16000, 1);
	sched_mem_history h = {0};
	sched_mem_decision md;
	sched_mem_end e = {.outcome = SEG_OUT_OOM, .peak_mib = 0, .reserved_mib = 1000,
			   .device_mib = 16000, .is_gpu = 1};
	sched_mem_rule(s, &e, &h, &md);
	assert_int_equal(md.verdict, SCHED_MEM_RAISE);
	assert_int_equal(h.min_mem_mib, 1500);
	e.outcome = SEG_OUT_COMPLETED;
	sched_mem_rule(s, &e, &h, &md);
	assert_int_equal(h.ooms_in_row, 0);
	/* a need above every device is capped at the largest: run alone */
	e = (sched_mem_end){.outcome = SEG_OUT_OOM, .peak_mib = 14000, .reserved_mib = 12000,
			    .device_mib = 16000, .is_gpu = 1};
	sched_mem_rule(s, &e, &h, &md);
	assert_int_equal(md.verdict, SCHED_MEM_ALONE);
	assert_int_equal(h.min_mem_mib, 16000);
	assert_int_equal(sched_mem_verdict_name(md.verdict)[0], 'a');
	sched_free(s);
}

/* ---- foreign use: memory of processes relish does not own ---------------- */

static sched *mk_foreign(sharing_policy pol, sched_foreign_policy f)
{
	sched_options o;
	sched_options_default(&o, pol);
	o.foreign = f;
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(&o, &s, &e), 0);
	return s;
}

/* 3000 MiB of others on an 8192 MiB GPU count 3000 + max(64, 10 %) = 3300:
 * 4892 MiB free.  A 5000 MiB segment waits (visibly, with the device and
 * the figure), expires past its limit, and starts once the memory is gone. */
static void test_foreign_counts_and_wait(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_dev(s, 8192, 1);
	assert_int_equal(sched_device_set_foreign(s, 0, 3000, 1), 0);
	assert_int_equal(sched_device_set_foreign(s, 7, 3000, 1), RL_ENOTFOUND);
	sched_device_state st;
	assert_int_equal(sched_device_get(s, 0, &st), 0);
	assert_int_equal(st.foreign_mib, 3000);
	assert_int_equal(st.foreign_counted_mib, 3300);
	assert_int_equal(st.mem_free_mib, 4892);
	assert_false(st.avoided);
	rl_err e;
	sched_request r = rq(1, 1, 5000, 1);
	r.foreign_wait_s = 60;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl[2];
	assert_int_equal(sched_place(s, 2, pl, 2), 0);
	sched_wait_info wi;
	assert_int_equal(sched_foreign_wait(s, 1, 2, &wi), SCHED_WAIT_FOREIGN);
	assert_int_equal(wi.dev, 0);
	assert_int_equal(wi.foreign_mib, 3000);
	assert_int_equal(wi.need_mib, 5000);
	assert_true(wi.since == 2);
	assert_int_equal(sched_foreign_wait(s, 1, 30, &wi), SCHED_WAIT_FOREIGN);
	assert_true(wi.since == 2 && wi.waited_s == 28);
	assert_int_equal(sched_foreign_wait(s, 1, 62, &wi), SCHED_WAIT_EXPIRED);
	/* A smaller one fits beside the others' memory: no wait. */
	sched_request small = rq(2, 2, 4000, 1);
	assert_int_equal(sched_submit(s, &small, &e), 0);
	assert_int_equal(sched_place(s, 63, pl, 2), 1);
	assert_int_equal(pl[0].seg_id, 2);
	assert_int_equal(sched_foreign_wait(s, 2, 63, &wi), SCHED_WAIT_NONE);
	/* Segment 1 (5000) now waits for segment 2 (4000) as well: without
	 * the others' memory 4192 MiB would be free, still too little, so it
	 * waits for relish's own segment, not for foreign memory. */
	assert_int_equal(sched_foreign_wait(s, 1, 64, &wi), SCHED_WAIT_NONE);
	sched_observation o = {SEG_OUT_COMPLETED, 3900, -1, 1, 1, 0};
	assert_int_equal(sched_finished(s, 2, 65, &o, &e), 0);
	assert_int_equal(sched_place(s, 65, pl, 2), 0);
	assert_int_equal(sched_foreign_wait(s, 1, 65, &wi), SCHED_WAIT_FOREIGN);
	assert_true(wi.since == 65); /* a new wait */
	assert_int_equal(sched_device_set_foreign(s, 0, 0, 66), 0);
	assert_int_equal(sched_place(s, 66, pl, 2), 1);
	assert_int_equal(pl[0].seg_id, 1);
	assert_int_equal(pl[0].mem_mib, 5000);
	sched_free(s);
}

/* A segment alone on a GPU where others hold memory gets what they leave
 * (the least used GPU first); out of memory there, it is not failed: it
 * waits for a device with more than it had, and gets a whole clean one. */
static void test_foreign_oom_waits(void **state)
{
	(void)state;
	sched *s = mk(SHARE_RELISH);
	add_dev(s, 4096, 1);
	add_dev(s, 4096, 1);
	sched_device_set_foreign(s, 0, 1000, 0);
	sched_device_set_foreign(s, 1, 2600, 0);
	sched_mem_history h = {0};
	sched_placement p = run1(s, rq(1, 5, 0, 1), &h, 1); /* unknown: alone */
	assert_int_equal(p.basis, SCHED_BASIS_EXCLUSIVE);
	assert_int_equal(p.dev[0], 0);
	assert_int_equal(p.mem_mib, 4096 - 1100);
	sched_mem_decision md = end1(s, 1, SEG_OUT_OOM, 0, &h, 2);
	assert_int_equal(md.verdict, SCHED_MEM_WAIT);
	assert_int_equal(md.foreign_mib, 1000);
	assert_int_equal(h.min_mem_mib, 2997);
	assert_int_equal(h.exclusive, 1);
	assert_non_null(strstr(md.reason, "others used 1000 MiB"));
	rl_err e;
	sched_request r = rq(2, 5, 0, 1);
	sched_mem_apply(&h, &r);
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl[2];
	assert_int_equal(sched_place(s, 3, pl, 2), 0); /* 2996 free at most */
	sched_wait_info wi;
	assert_int_equal(sched_foreign_wait(s, 2, 3, &wi), SCHED_WAIT_FOREIGN);
	sched_device_set_foreign(s, 1, 0, 4);
	assert_int_equal(sched_place(s, 4, pl, 2), 1);
	assert_int_equal(pl[0].dev[0], 1);
	assert_int_equal(pl[0].mem_mib, 4096);
	/* Others' memory appearing while it runs counts as well (peak not
	 * sampled: it may need more than it had, so a whole clean device). */
	sched_device_set_foreign(s, 1, 300, 5);
	md = end1(s, 2, SEG_OUT_OOM, 0, &h, 6);
	assert_int_equal(md.verdict, SCHED_MEM_WAIT);
	assert_int_equal(h.min_mem_mib, 4096);
	/* Once the device is empty of others, alone is alone: it fails. */
	sched_device_set_foreign(s, 1, 0, 7);
	sched_device_set_foreign(s, 0, 0, 7);
	p = run1(s, rq(3, 5, 0, 1), &h, 8);
	assert_int_equal(p.mem_mib, 4096);
	md = end1(s, 3, SEG_OUT_OOM, 4090, &h, 9);
	assert_int_equal(md.verdict, SCHED_MEM_FAIL);
	assert_string_equal(md.reason, "out of memory alone on an empty device (4096 MiB)");
	sched_free(s);
}

/* Dying within its reservation beside others' memory: they took it; the
 * floor is not raised.  And the bound: after oom_foreign_max such ends in
 * a row the trial fails, saying why. */
static void test_foreign_oom_within_reservation_and_bound(void **state)
{
	(void)state;
	sched *s = mk(SHARE_PACK);
	add_dev(s, 8192, 1);
	sched_device_set_foreign(s, 0, 500, 0);
	sched_mem_history h = {0};
	for (int i = 1; i <= 6; i++) {
		sched_placement p = run1(s, rq((uint64_t)i, 6, 2000, 1), &h, i);
		assert_int_equal(p.mem_mib, 2000);
		sched_mem_decision md = end1(s, (uint64_t)i, SEG_OUT_OOM, 1800, &h, i + 0.5);
		if (i <= 5) {
			assert_int_equal(md.verdict, SCHED_MEM_WAIT);
			assert_int_equal(h.min_mem_mib, 2000);
			assert_int_equal(h.ooms_in_row, 0);
		} else {
			assert_int_equal(md.verdict, SCHED_MEM_FAIL);
			assert_string_equal(md.reason, "out of memory 6 times in a row while processes "
					    "relish does not own used its device (500 MiB)");
		}
	}
	sched_free(s);
}

/* avoid: a GPU that others use takes nothing new; the other one does.  With
 * only that GPU, the segment waits for it. */
static void test_foreign_avoid(void **state)
{
	(void)state;
	sched *s = mk_foreign(SHARE_PACK, SCHED_FOREIGN_AVOID);
	add_dev(s, 8192, 1);
	add_dev(s, 8192, 1);
	sched_device_set_foreign(s, 0, 200, 0);
	sched_device_state st;
	sched_device_get(s, 0, &st);
	assert_true(st.avoided);
	sched_mem_history h = {0};
	sched_placement p = run1(s, rq(1, 1, 1000, 1), &h, 1);
	assert_int_equal(p.dev[0], 1);
	sched_placement q = run1(s, rq(2, 2, 1000, 1), &h, 1); /* beside it, not on 0 */
	assert_int_equal(q.dev[0], 1);
	sched_free(s);

	s = mk_foreign(SHARE_RELISH, SCHED_FOREIGN_AVOID);
	add_dev(s, 8192, 1);
	sched_device_set_foreign(s, 0, 200, 0);
	rl_err e;
	sched_request r = rq(1, 1, 0, 1);
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl[2];
	assert_int_equal(sched_place(s, 1, pl, 2), 0);
	sched_wait_info wi;
	assert_int_equal(sched_foreign_wait(s, 1, 1, &wi), SCHED_WAIT_FOREIGN);
	assert_int_equal(wi.dev, 0);
	sched_device_set_foreign(s, 0, 0, 2);
	assert_int_equal(sched_place(s, 2, pl, 2), 1);
	assert_int_equal(pl[0].mem_mib, 8192);
	sched_free(s);

	sched_foreign_policy f;
	assert_int_equal(sched_foreign_policy_from_name("avoid", &f), 0);
	assert_int_equal(f, SCHED_FOREIGN_AVOID);
	assert_string_equal(sched_foreign_policy_name(SCHED_FOREIGN_SHARE), "share");
	assert_int_equal(sched_foreign_policy_from_name("never", &f), RL_EINVAL);
}

static void test_ewma(void **state)
{
	(void)state;
	assert_true(sched_ewma(NAN, 40) == 40);
	assert_true(sched_ewma(40, NAN) == 40);
	assert_true(fabs(sched_ewma(40, 50) - 43) < 1e-12);
	assert_true(isnan(sched_ewma(NAN, NAN)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ladder_then_alone_then_fail),
		cmocka_unit_test(test_beside_others_is_not_alone),
		cmocka_unit_test(test_completed_resets),
		cmocka_unit_test(test_alone_on_a_smaller_device),
		cmocka_unit_test(test_estimate_above_capacity_runs_alone),
		cmocka_unit_test(test_gang_never_fits),
		cmocka_unit_test(test_rule_replay),
		cmocka_unit_test(test_foreign_counts_and_wait),
		cmocka_unit_test(test_foreign_oom_waits),
		cmocka_unit_test(test_foreign_oom_within_reservation_and_bound),
		cmocka_unit_test(test_foreign_avoid),
		cmocka_unit_test(test_ewma),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
