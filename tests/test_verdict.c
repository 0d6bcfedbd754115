/*
 * test_verdict.c - the core's decision after a segment (src/sched/verdict.c,
 * sched_end_decide): re-run, fail or let the engine's decision stand, and
 * the one record the live driver writes (message, event, failure reason,
 * the progress line's words).  Until issue 28 the live driver decided
 * retries and losses itself and built these texts inline in
 * live__end_segment; each case here is a rule it followed, now asserted on
 * the function alone, without a process, a store or an engine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sched/sched.h"

/* One GPU of 16000 MiB under pack, which reserves the declared hint. */
static sched *mk(void)
{
	sched_options o;
	sched_options_default(&o, SHARE_PACK);
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(&o, &s, &e), 0);
	sched_device_info d;
	memset(&d, 0, sizeof d);
	snprintf(d.name, sizeof d.name, "GPU");
	d.is_gpu = 1;
	d.mem_total_mib = 16000;
	d.compute_total = 100;
	assert_int_equal(sched_add_device(s, &d, &e), 0);
	return s;
}

/* Submit segment id with a hint of hint MiB (the trial's floor applied)
 * and place it. */
static void start(sched *s, uint64_t id, uint64_t hint, const sched_trial_history *h)
{
	sched_request r;
	memset(&r, 0, sizeof r);
	r.seg_id = id;
	r.exp_id = 1;
	r.shape = 7;
	r.family = 7;
	r.mem_hint_mib = hint;
	r.needs_gpu = 1;
	r.submit_time = (double)id;
	sched_mem_apply(&h->mem, &r);
	rl_err e;
	assert_int_equal(sched_submit(s, &r, &e), 0);
	sched_placement pl[2];
	assert_int_equal(sched_place(s, (double)id, pl, 2), 1);
	assert_int_equal(pl[0].seg_id, id);
}

static sched_end_facts facts(seg_outcome o, uint64_t peak, int engine_failed,
			     const char *reason)
{
	sched_end_facts f;
	memset(&f, 0, sizeof f);
	f.obs.outcome = o;
	f.obs.peak_mem_mib = peak;
	f.obs.mean_util = -1;
	f.obs.work = o == SEG_OUT_COMPLETED ? 1 : 0;
	f.obs.duration_s = 1;
	f.engine_failed = engine_failed;
	f.reason = reason;
	return f;
}

/* Decide, then finish the segment in the core as a driver does. */
static sched_end_record end(sched *s, uint64_t id, const sched_end_facts *f,
			    sched_trial_history *h)
{
	sched_end_record r;
	rl_err e;
	assert_int_equal(sched_end_decide(s, id, f, h, &r, &e), 0);
	assert_int_equal(sched_finished(s, id, (double)id + 0.5, &f->obs, &e), 0);
	return r;
}

/* A clean completion: the engine's decision stands, nothing is recorded
 * beyond the segment itself, and the progress line says "completed". */
static void test_completed(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	start(s, 1, 1000, &h);
	sched_end_facts f = facts(SEG_OUT_COMPLETED, 900, 0, "completed");
	sched_end_record r = end(s, 1, &f, &h);
	assert_int_equal(r.action, SCHED_END_DONE);
	assert_int_equal(r.cause, SCHED_CAUSE_NONE);
	assert_int_equal(r.mem.verdict, SCHED_MEM_NONE);
	assert_string_equal(r.word, "completed");
	assert_string_equal(r.event, "");
	assert_string_equal(r.message, "");
	assert_string_equal(r.shown, "");
	assert_string_equal(r.fail_reason, "");
	assert_int_equal(h.retries, 0);
	sched_free(s);
}

/* Exited cleanly without the objective: the engine's words (with what it
 * printed) are the message and, with no retry left, the failure; no
 * segment event (it completed), the progress line says "ended". */
static void test_ended_short(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	start(s, 1, 1000, &h);
	sched_end_facts f = facts(SEG_OUT_COMPLETED, 900, 1, "completed");
	f.ended_short = 1;
	f.engine_reason = "the segment reported no accuracy; it reported: loss";
	sched_end_record r = end(s, 1, &f, &h);
	assert_int_equal(r.action, SCHED_END_FAIL);
	assert_int_equal(r.cause, SCHED_CAUSE_EXHAUSTED);
	assert_string_equal(r.word, "ended");
	assert_string_equal(r.event, "");
	assert_string_equal(r.message, f.engine_reason);
	assert_string_equal(r.shown, f.engine_reason);
	assert_string_equal(r.fail_reason, f.engine_reason);
	sched_free(s);
}

/* trial.retries 2: two failures run again, the third fails the trial with
 * the executor's words; every one is a segment.failed event. */
static void test_retries(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	for (uint64_t id = 1; id <= 3; id++) {
		start(s, id, 1000, &h);
		sched_end_facts f = facts(SEG_OUT_FAILED, 500, 1, "exit code 1: ValueError: nan");
		f.retries = 2;
		sched_end_record r = end(s, id, &f, &h);
		assert_string_equal(r.event, "segment.failed");
		assert_string_equal(r.message, "exit code 1: ValueError: nan");
		assert_string_equal(r.word, "failed");
		if (id < 3) {
			assert_int_equal(r.action, SCHED_END_REQUEUE);
			assert_int_equal(r.cause, SCHED_CAUSE_RETRY);
			assert_int_equal(h.retries, (int)id);
			assert_string_equal(r.fail_reason, "");
		} else {
			assert_int_equal(r.action, SCHED_END_FAIL);
			assert_int_equal(r.cause, SCHED_CAUSE_EXHAUSTED);
			assert_string_equal(r.fail_reason, "exit code 1: ValueError: nan");
		}
	}
	sched_free(s);
}

/* A lost segment (its node failed) runs again lost_max (5) times without
 * using a retry; the sixth counts as a failure, here with no retry left. */
static void test_losses(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	for (uint64_t id = 1; id <= 6; id++) {
		start(s, id, 1000, &h);
		sched_end_facts f = facts(SEG_OUT_LOST, 0, 1, "node n1 failed");
		sched_end_record r = end(s, id, &f, &h);
		assert_string_equal(r.event, "segment.lost");
		if (id <= 5) {
			assert_int_equal(r.action, SCHED_END_REQUEUE);
			assert_int_equal(r.cause, SCHED_CAUSE_LOST);
			assert_int_equal(h.losses, (int)id);
		} else {
			assert_int_equal(r.action, SCHED_END_FAIL);
			assert_string_equal(r.fail_reason, "node n1 failed");
		}
	}
	assert_int_equal(h.retries, 0);
	sched_free(s);
}

/* An out-of-memory beside the hint: the memory policy re-queues it with a
 * raised floor; the message carries reservation and peak, the progress
 * line the words alone, both what the re-queue asks for.  The output's
 * marker names it, unless a container's reason names the limit. */
static void test_oom_requeued(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	start(s, 1, 1000, &h);
	sched_end_facts f = facts(SEG_OUT_OOM, 990, 1, "out of memory: \"CUDA out of memory\"");
	f.oom_marker = "CUDA out of memory";
	sched_end_record r = end(s, 1, &f, &h);
	assert_int_equal(r.action, SCHED_END_REQUEUE);
	assert_int_equal(r.cause, SCHED_CAUSE_OOM);
	assert_int_equal(r.mem.verdict, SCHED_MEM_RAISE);
	assert_int_equal(h.mem.min_mem_mib, 1500);
	assert_string_equal(r.event, "segment.oom");
	char want[400];
	snprintf(want, sizeof want, "CUDA out of memory (reserved 1000 MiB, peak 990 MiB); %s",
		 r.mem.reason);
	assert_string_equal(r.message, want);
	snprintf(want, sizeof want, "CUDA out of memory; %s", r.mem.reason);
	assert_string_equal(r.shown, want);

	start(s, 2, 1000, &h);
	f = facts(SEG_OUT_OOM, 1400, 1, "over its memory limit (1500 MiB)");
	f.oom_marker = "Killed";
	f.reason_names_limit = 1;
	r = end(s, 2, &f, &h);
	assert_int_equal(r.action, SCHED_END_REQUEUE);
	assert_non_null(strstr(r.message, "over its memory limit (1500 MiB) (reserved 1500 MiB"));
	sched_free(s);
}

/* Stopped at relish's own limit (the process executor's RSS limit from the
 * reservation): the same memory policy as an out-of-memory (re-queued,
 * raised), but said to be over its reservation, in the word, the message
 * and the event, never "oom": nothing ran out (issue 30, item 8). */
static void test_over_reservation(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	start(s, 1, 95, &h);
	sched_end_facts f = facts(SEG_OUT_OOM, 111, 1,
				  "relish stopped it at 111 MiB, above its reservation and margin, "
				  "not for want of memory");
	f.over_reservation = 1;
	sched_end_record r = end(s, 1, &f, &h);
	assert_int_equal(r.action, SCHED_END_REQUEUE);
	assert_int_equal(r.cause, SCHED_CAUSE_OOM);
	assert_int_equal(r.mem.verdict, SCHED_MEM_RAISE);
	assert_string_equal(r.word, "over its reservation");
	assert_string_equal(r.event, "segment.over_reservation");
	char want[400];
	snprintf(want, sizeof want,
		 "over its memory reservation (reserved 95 MiB, peak 111 MiB): relish stopped it "
		 "at 111 MiB, above its reservation and margin, not for want of memory; %s",
		 r.mem.reason);
	assert_string_equal(r.message, want);
	assert_null(strstr(r.shown, "out of memory"));
	/* the same end without the flag is an out-of-memory */
	start(s, 2, 95, &h);
	f.over_reservation = 0;
	r = end(s, 2, &f, &h);
	assert_string_equal(r.word, "oom");
	assert_string_equal(r.event, "segment.oom");
	sched_free(s);
}

/* Out of memory alone on the whole empty device: a measurement, the trial
 * fails with the memory policy's words, whatever retries are left. */
static void test_oom_alone_fails(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	start(s, 1, 16000, &h);
	sched_end_facts f = facts(SEG_OUT_OOM, 15990, 1, "");
	f.retries = 3;
	sched_end_record r = end(s, 1, &f, &h);
	assert_int_equal(r.action, SCHED_END_FAIL);
	assert_int_equal(r.cause, SCHED_CAUSE_OOM);
	assert_int_equal(r.mem.verdict, SCHED_MEM_FAIL);
	assert_string_equal(r.fail_reason, "out of memory alone on an empty device (16000 MiB)");
	assert_string_equal(r.message, "out of memory (reserved 16000 MiB, peak 15990 MiB)");
	assert_string_equal(r.shown, "out of memory");
	assert_int_equal(h.retries, 0);
	sched_free(s);
}

/* A failed outcome the engine does not count as failed (a trial that
 * stopped) is recorded, but nothing is run again. */
static void test_engine_decides(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	start(s, 1, 1000, &h);
	sched_end_facts f = facts(SEG_OUT_TIMEOUT, 0, 0, "ran past its timeout");
	f.retries = 1;
	sched_end_record r = end(s, 1, &f, &h);
	assert_int_equal(r.action, SCHED_END_DONE);
	assert_string_equal(r.event, "segment.timeout");
	assert_string_equal(r.message, "ran past its timeout");
	assert_int_equal(h.retries, 0);
	sched_free(s);
}

/* Only a running segment has an end. */
static void test_not_running(void **state)
{
	(void)state;
	sched *s = mk();
	sched_trial_history h = {0};
	sched_end_facts f = facts(SEG_OUT_FAILED, 0, 1, "exit code 1");
	sched_end_record r;
	rl_err e;
	assert_int_equal(sched_end_decide(s, 42, &f, &h, &r, &e), RL_ENOTFOUND);
	assert_non_null(strstr(e.msg, "not running"));
	assert_string_equal(sched_end_action_name(SCHED_END_REQUEUE), "requeue");
	assert_string_equal(sched_end_cause_name(SCHED_CAUSE_LOST), "lost");
	sched_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_completed),     cmocka_unit_test(test_ended_short),
		cmocka_unit_test(test_retries),       cmocka_unit_test(test_losses),
		cmocka_unit_test(test_oom_requeued),  cmocka_unit_test(test_oom_alone_fails),
		cmocka_unit_test(test_over_reservation),
		cmocka_unit_test(test_engine_decides), cmocka_unit_test(test_not_running),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
