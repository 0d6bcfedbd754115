/*
 * test_share.c - placements that choose devices from the whole class
 * (src/sched/share.c): gangs that share devices under relish (a gang
 * advances at its slowest member's speed; a member that is a gang weighs
 * its devices), the admission rule with the model's margin, the Gandiva
 * peer's rules (idle, packing by measured utilisation, time-slicing,
 * unpacking a pair seen to lose), and, over random workloads, the memo
 * of each shape's best devices checked against a walk over all of them.
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
#include "search/rng.h"

static sched_request rq(uint64_t id, uint64_t shape, int n_dev)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.job_id = id;
	r.shape = shape;
	r.family = shape;
	r.needs_gpu = 1;
	r.n_devices = n_dev;
	r.submit_time = (double)id;
	return r;
}

/* The shape measured alone: peak MiB and utilisation. */
static void measured(sched *s, uint64_t shape, int n_dev, uint64_t peak, double util)
{
	sched_request r = rq(0, shape, n_dev);
	sched_observation o = {.outcome = SEG_OUT_COMPLETED, .peak_mem_mib = peak,
			       .mean_util = util, .work = 1, .duration_s = 10};
	sched_learn(s, &r, &o);
}

static void submit(sched *s, sched_request r)
{
	rl_err e;
	assert_int_equal(sched_submit(s, &r, &e), 0);
}

static sched *relish(int n_gpu, double margin)
{
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	o.share_gangs = 1;
	o.solo_after_s = 0;
	o.min_speedup = 1.0;
	o.colocate_margin = margin;
	o.aging_s = 0;
	o.timeslice_refused = 0; /* the model's admission alone (test_explore.c) */
	return fixture_sched(SHARE_RELISH, &o, n_gpu, 16000);
}

static void test_relish_gang_shares(void **state)
{
	(void)state;
	/* Two GPUs each run a single of 40 %; a gang of two at 50 % joins
	 * both (90 % each: nobody slows, gain 2 x 1 = 2, more than the
	 * margin 0.05 x (2 + 2) = 0.2). */
	sched *s = relish(2, 0.05);
	measured(s, 10, 1, 2000, 40);
	measured(s, 20, 2, 3000, 50);
	submit(s, rq(1, 10, 1));
	submit(s, rq(2, 10, 1));
	sched_placement pl[4];
	assert_int_equal(sched_place(s, 0, pl, 4), 2);
	assert_int_not_equal(pl[0].dev[0], pl[1].dev[0]);
	submit(s, rq(3, 20, 2));
	assert_int_equal(sched_place(s, 1, pl, 4), 1);
	assert_int_equal(pl[0].n_dev, 2);
	assert_int_equal(pl[0].basis, SCHED_BASIS_PROFILE);
	assert_int_equal(pl[0].mem_mib, (uint64_t)ceil(3000 * 1.2 + 256));
	sched_device_state d;
	assert_int_equal(sched_device_get(s, 0, &d), 0);
	assert_int_equal(d.n_running, 2);
	/* A 100 % gang of two is refused beside the 40 % singles and the
	 * 50 % gang: 190 % on each device, everyone at 100/190 = 0.53.  On
	 * each device the single loses 0.47 and the gang member, weighing its
	 * two devices, 2 x 0.47: 2.84 lost in all against the newcomer's 2 x
	 * 0.53 = 1.05. */
	measured(s, 30, 2, 3000, 100);
	submit(s, rq(4, 30, 2));
	assert_int_equal(sched_place(s, 2, pl, 4), 0);
	sched_free(s);
}

static void test_relish_gang_weighs_members(void **state)
{
	(void)state;
	/* Four GPUs run a gang of four at 60 %.  A single at 60 % asks to
	 * join one.
	 * Beside the gang it runs at 100/120 = 0.83 and slows the gang to
	 * 0.83: the gang advances at its slowest member, so its loss counts
	 * four times (4 x 0.17 = 0.67) against the single's 0.83: a gain of
	 * 0.17, kept with no margin, refused with a margin of 0.05 on each of
	 * the 1 + 4 speeds it changes (0.25).  Counted once (as if the gang
	 * were a single) the gain would have been 0.67. */
	for (int with_margin = 0; with_margin < 2; with_margin++) {
		sched *s = relish(4, with_margin ? 0.05 : 0);
		measured(s, 40, 4, 2000, 60);
		measured(s, 41, 1, 2000, 60);
		submit(s, rq(1, 40, 4));
		sched_placement pl[4];
		assert_int_equal(sched_place(s, 0, pl, 4), 1);
		assert_int_equal(pl[0].n_dev, 4);
		submit(s, rq(2, 41, 1));
		assert_int_equal(sched_place(s, 1, pl, 4), with_margin ? 0 : 1);
		sched_free(s);
	}
}

static void test_relish_gang_unmeasured_probe(void **state)
{
	(void)state;
	/* A gang never measured bets on its hint as a single segment does
	 * (gang_probe): one of the shape at a time, with the hint's headroom;
	 * while it runs, another gang of the shape runs whole.  Without
	 * gang_probe it runs whole from the start. */
	for (int probe = 0; probe < 2; probe++) {
		sched_options o;
		sched_options_default(&o, SHARE_RELISH);
		o.gang_probe = probe;
		o.aging_s = 0;
		sched *s = fixture_sched(SHARE_RELISH, &o, 4, 16000);
		sched_request r = rq(1, 50, 2);
		r.mem_hint_mib = 1000;
		submit(s, r);
		sched_placement pl[2];
		assert_int_equal(sched_place(s, 0, pl, 2), 1);
		assert_int_equal(pl[0].n_dev, 2);
		if (!probe) {
			assert_int_equal(pl[0].basis, SCHED_BASIS_EXCLUSIVE);
			assert_int_equal(pl[0].mem_mib, 16000);
			sched_free(s);
			continue;
		}
		assert_int_equal(pl[0].basis, SCHED_BASIS_HINT);
		assert_int_equal(pl[0].mem_mib, 1200);
		r = rq(2, 50, 2);
		r.mem_hint_mib = 1000;
		submit(s, r);
		assert_int_equal(sched_place(s, 1, pl, 2), 1);
		assert_int_equal(pl[0].basis, SCHED_BASIS_EXCLUSIVE);
		sched_free(s);
	}
}

/* A core whose refused segments time-slice (timeslice_refused), gangs
 * too unless told otherwise. */
static sched *relish_slicing(int n_gpu, double margin, int gangs)
{
	sched_options o;
	sched_options_default(&o, SHARE_RELISH);
	o.solo_after_s = 0;
	o.colocate_margin = margin;
	o.aging_s = 0;
	o.timeslice_refused = 1;
	o.timeslice_gangs = gangs;
	return fixture_sched(SHARE_RELISH, &o, n_gpu, 16000);
}

static void test_relish_gang_time_slices(void **state)
{
	(void)state;
	/* Three GPUs run singles of 90, 100 and 95 %.  A gang of two at
	 * 100 % beside any two: 190-200 % on each device, everyone at about
	 * 0.5, a gain of about 0.1 against a margin of 0.05 x (2 + 2): the
	 * model refuses it everywhere.  It time-slices beside the two least
	 * loaded (GPUs 0 and 2); without timeslice_gangs it waits. */
	for (int gangs = 0; gangs < 2; gangs++) {
		sched *s = relish_slicing(3, 0.05, gangs);
		measured(s, 10, 1, 2000, 90);
		measured(s, 11, 1, 2000, 100);
		measured(s, 12, 1, 2000, 95);
		measured(s, 20, 2, 3000, 100);
		sched_placement pl[4];
		for (uint64_t i = 0; i < 3; i++) {
			submit(s, rq(1 + i, 10 + i, 1));
			assert_int_equal(sched_place(s, (double)i, pl, 4), 1);
			assert_int_equal(pl[0].dev[0], (int)i);
		}
		submit(s, rq(4, 20, 2));
		assert_int_equal(sched_place(s, 3, pl, 4), gangs);
		if (gangs) {
			assert_int_equal(pl[0].n_dev, 2);
			int d0 = pl[0].dev[0] < pl[0].dev[1] ? pl[0].dev[0] : pl[0].dev[1];
			int d1 = pl[0].dev[0] < pl[0].dev[1] ? pl[0].dev[1] : pl[0].dev[0];
			assert_int_equal(d0, 0);
			assert_int_equal(d1, 2);
		}
		sched_free(s);
	}
}

static void test_relish_gang_slice_not_beside_measured(void **state)
{
	(void)state;
	/* As above on two GPUs with singles of 90 and 100 %, but the pair of
	 * the gang's shape and the 90 % single's was measured together: its
	 * refusal is a measurement's, and the gang waits (one device is not
	 * enough for two members).  Beside a member that holds its device
	 * (runs whole), never either. */
	sched *s = relish_slicing(2, 0.05, 1);
	measured(s, 10, 1, 2000, 90);
	measured(s, 11, 1, 2000, 100);
	measured(s, 20, 2, 3000, 100);
	sched_colocate_seed(s, 20, 10, 0.5, 0.5);
	sched_placement pl[4];
	submit(s, rq(1, 10, 1));
	submit(s, rq(2, 11, 1));
	assert_int_equal(sched_place(s, 0, pl, 4), 2);
	submit(s, rq(3, 20, 2));
	assert_int_equal(sched_place(s, 1, pl, 4), 0);
	sched_free(s);
	/* a single that runs whole (never measured, no hint) beside one of
	 * 100 %: nothing to slice beside */
	s = relish_slicing(2, 0.05, 1);
	measured(s, 11, 1, 2000, 100);
	measured(s, 20, 2, 3000, 100);
	submit(s, rq(1, 77, 1));
	submit(s, rq(2, 11, 1));
	assert_int_equal(sched_place(s, 0, pl, 4), 2);
	submit(s, rq(3, 20, 2));
	assert_int_equal(sched_place(s, 1, pl, 4), 0);
	sched_free(s);
}

static sched *gandiva(int n_gpu, int timeslice_max)
{
	sched_options o;
	sched_options_default(&o, SHARE_GANDIVA);
	o.aging_s = 0;
	o.timeslice_max = timeslice_max;
	return fixture_sched(SHARE_GANDIVA, &o, n_gpu, 16000);
}

static int dev_of(const sched_placement *pl) { return pl->dev[0]; }

static void test_gandiva_rules(void **state)
{
	(void)state;
	sched *s = gandiva(2, 0);
	assert_true(s != NULL);
	measured(s, 1, 1, 2000, 70);
	measured(s, 2, 1, 2000, 20);
	measured(s, 3, 1, 2000, 25);
	measured(s, 4, 1, 2000, 90);
	sched_placement pl[4];
	/* idle devices first: 70 % on GPU 0, 20 % on GPU 1 */
	submit(s, rq(1, 1, 1));
	assert_int_equal(sched_place(s, 0, pl, 4), 1);
	assert_int_equal(dev_of(&pl[0]), 0);
	submit(s, rq(2, 2, 1));
	assert_int_equal(sched_place(s, 1, pl, 4), 1);
	assert_int_equal(dev_of(&pl[0]), 1);
	/* 25 % packs where the sum stays lowest: GPU 1 (45 %), not 0 (95 %) */
	submit(s, rq(3, 3, 1));
	assert_int_equal(sched_place(s, 2, pl, 4), 1);
	assert_int_equal(dev_of(&pl[0]), 1);
	/* 90 % packs nowhere (160 %, 135 %): time-sliced on the device with
	 * the fewest segments, GPU 0 (one against two) */
	submit(s, rq(4, 4, 1));
	assert_int_equal(sched_place(s, 3, pl, 4), 1);
	assert_int_equal(dev_of(&pl[0]), 0);
	sched_free(s);

	/* At most one time-sliced partner (timeslice_max 2): the third heavy
	 * segment waits. */
	s = gandiva(1, 2);
	measured(s, 4, 1, 2000, 90);
	for (uint64_t i = 1; i <= 3; i++)
		submit(s, rq(i, 4, 1));
	assert_int_equal(sched_place(s, 0, pl, 4), 2);
	assert_int_equal(sched_queue_length(s), 1);
	sched_free(s);

	/* A pair seen to run slower together than time-slicing would (0.4 +
	 * 0.4 < 1) is not packed although 20 + 25 % fits, and time-slicing
	 * beside that partner comes last: the 25 % segment goes to the other
	 * device, time-sliced beside the 90 % one. */
	s = gandiva(2, 0);
	measured(s, 2, 1, 2000, 20);
	measured(s, 3, 1, 2000, 25);
	measured(s, 4, 1, 2000, 90);
	sched_colocate_seed(s, 2, 3, 0.4, 0.4);
	submit(s, rq(1, 2, 1));
	submit(s, rq(2, 4, 1));
	assert_int_equal(sched_place(s, 0, pl, 4), 2);
	int dev_light = pl[0].seg_id == 1 ? pl[0].dev[0] : pl[1].dev[0];
	submit(s, rq(3, 3, 1));
	assert_int_equal(sched_place(s, 1, pl, 4), 1);
	assert_int_not_equal(dev_of(&pl[0]), dev_light);
	sched_free(s);

	/* A measured gang is time-sliced on busy devices too (all members). */
	s = gandiva(2, 0);
	measured(s, 4, 1, 2000, 90);
	measured(s, 5, 2, 2000, 50);
	submit(s, rq(1, 4, 1));
	submit(s, rq(2, 4, 1));
	assert_int_equal(sched_place(s, 0, pl, 4), 2);
	submit(s, rq(3, 5, 2));
	assert_int_equal(sched_place(s, 1, pl, 4), 1);
	assert_int_equal(pl[0].n_dev, 2);
	sched_device_state d0, d1;
	assert_int_equal(sched_device_get(s, 0, &d0), 0);
	assert_int_equal(sched_device_get(s, 1, &d1), 0);
	assert_int_equal(d0.n_running + d1.n_running, 4);
	sched_free(s);
}

/* Random starts and ends under relish and gandiva with every shortcut
 * checked against the long way (self_check), and the books checked; the
 * third round is relish remembering 8 shapes while a new set of twelve
 * comes every 300 steps, so shapes are forgotten (learn_max) between
 * placements, beside running segments of older ones. */
static void test_memo_matches_full_walk(void **state)
{
	(void)state;
	for (int pol = 0; pol < 3; pol++) {
		sched_options o;
		sched_options_default(&o, pol == 1 ? SHARE_GANDIVA : SHARE_RELISH);
		if (pol == 2)
			o.learn_max = 8;
		o.share_gangs = 1;
		o.solo_after_s = 0;
		o.min_speedup = 1.0;
		o.colocate_margin = 0.05;
		o.self_check = 1;
		sched *s = fixture_sched(o.policy, &o, 24, 16000);
		rl_rng rng;
		rng_seed(&rng, 5 + (uint64_t)pol);
		/* twelve shapes: gangs of 1, 2, 4 and 8, various sizes */
		static const int gang[12] = {1, 1, 1, 1, 2, 2, 2, 4, 4, 8, 8, 1};
		for (uint64_t sh = 0; sh < 12; sh++)
			measured(s, 100 + sh, gang[sh], 1000 + 700 * sh, 10 + 8 * (double)sh);
		sched_colocate_seed(s, 100, 101, 0.9, 0.7);
		sched_colocate_seed(s, 104, 109, 0.6, 0.8);
		uint64_t running[512];
		size_t n_run = 0;
		uint64_t next = 1;
		double now = 0;
		sched_placement pl[64];
		uint64_t base = 100;
		for (int step = 0; step < 3000; step++) {
			now += 1;
			if (pol == 2 && step && step % 300 == 0) {
				base += 1000;
				for (uint64_t sh = 0; sh < 12; sh++)
					measured(s, base + sh, gang[sh], 1000 + 700 * sh,
						 10 + 8 * (double)sh);
				sched_colocate_seed(s, base, base + 1, 0.9, 0.7);
			}
			int r = (int)rng_below(&rng, 10);
			if (r < 5 || !n_run) {
				uint64_t sh = rng_below(&rng, 12);
				sched_request q = rq(next++, base + sh, gang[sh]);
				q.submit_time = now;
				submit(s, q);
			} else {
				size_t i = (size_t)rng_below(&rng, (uint64_t)n_run);
				sched_observation ob = {.outcome = SEG_OUT_COMPLETED, .mean_util = -1,
							.duration_s = 1};
				rl_err e;
				assert_int_equal(sched_finished(s, running[i], now, &ob, &e), 0);
				running[i] = running[--n_run];
			}
			size_t n = sched_place(s, now, pl, 64);
			for (size_t i = 0; i < n && n_run < 512; i++)
				running[n_run++] = pl[i].seg_id;
			for (int dv = 0; dv < 24; dv++) {
				sched_device_state d;
				assert_int_equal(sched_device_get(s, dv, &d), 0);
				assert_true(d.mem_reserved_mib <= d.info.mem_total_mib);
			}
		}
		sched_work w;
		sched_work_get(s, &w);
		assert_true(w.placed > 500);
		if (pol == 2)
			assert_true(w.forgotten >= 9 * 12);
		if (w.check_failures)
			print_error("policy %d: %llu shortcut answers differed from a full walk\n", pol,
				    (unsigned long long)w.check_failures);
		assert_int_equal(w.check_failures, 0);
		sched_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relish_gang_shares),
		cmocka_unit_test(test_relish_gang_weighs_members),
		cmocka_unit_test(test_relish_gang_unmeasured_probe),
		cmocka_unit_test(test_relish_gang_time_slices),
		cmocka_unit_test(test_relish_gang_slice_not_beside_measured),
		cmocka_unit_test(test_gandiva_rules),
		cmocka_unit_test(test_memo_matches_full_walk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
