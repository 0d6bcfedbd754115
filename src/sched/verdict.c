/*
 * verdict.c - what a segment's end means for its trial, decided once in the
 * core for every driver: run the segment again (a retry, a loss that was
 * not the trial's fault, an out-of-memory the memory policy re-queues),
 * fail the trial, or let the engine's decision stand; and what the driver
 * records and shows for it (the message, the event, the words of a
 * failure).  The live driver (src/live/segment_end.c) calls
 * sched_end_decide, writes the record in one transaction and then tells
 * the core and the engine; nothing about retries or losses is decided in
 * the driver any more (issue 28: it counted retries and lost segments
 * itself, beside the memory policy here and fail_fast in the engine).
 *
 * Pure: the record is a function of the facts, the trial's history and
 * what the core knows of the running segment (its reservation, devices
 * and neighbours, through sched_mem_decide).  Only h is updated.
 */
#include "sched/sched_int.h"

#include <stdio.h>
#include <string.h>

const char *sched_end_action_name(sched_end_action a)
{
	static const char *const names[] = {
		[SCHED_END_DONE] = "done", [SCHED_END_REQUEUE] = "requeue",
		[SCHED_END_FAIL] = "fail",
	};
	return (unsigned)a < sizeof names / sizeof names[0] ? names[a] : "unknown";
}

const char *sched_end_cause_name(sched_end_cause c)
{
	static const char *const names[] = {
		[SCHED_CAUSE_NONE] = "none", [SCHED_CAUSE_OOM] = "oom",
		[SCHED_CAUSE_LOST] = "lost", [SCHED_CAUSE_RETRY] = "retry",
		[SCHED_CAUSE_EXHAUSTED] = "exhausted",
	};
	return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}

/* The words for an out-of-memory end: a container's reason names the limit
 * it hit, else the output that showed it, else the executor's words. */
static const char *oom_words(const sched_end_facts *f)
{
	const char *reason = f->reason ? f->reason : "";
	if (f->reason_names_limit && reason[0])
		return reason;
	if (f->oom_marker)
		return f->oom_marker;
	return reason[0] ? reason : "out of memory";
}

/* The trial's next step: the engine's decision stands unless it counts the
 * segment as failed; then the memory policy answers an out-of-memory, a
 * loss is re-run up to lost_max times (no retry used), any other failure
 * up to the spec's retries, and past those the trial fails. */
static void decide_action(const sched *s, const sched_end_facts *f, sched_trial_history *h,
			  sched_end_record *out)
{
	seg_outcome o = f->obs.outcome;
	out->action = SCHED_END_DONE;
	out->cause = SCHED_CAUSE_NONE;
	if (!f->engine_failed)
		return;
	if (o == SEG_OUT_OOM) {
		out->cause = SCHED_CAUSE_OOM;
		if (out->mem.verdict == SCHED_MEM_FAIL) {
			out->action = SCHED_END_FAIL;
			snprintf(out->fail_reason, sizeof out->fail_reason, "%s", out->mem.reason);
		} else {
			out->action = SCHED_END_REQUEUE;
		}
		return;
	}
	if (o == SEG_OUT_LOST && h->losses < s->opt.lost_max) {
		/* Its node failed or it was preempted: not the trial's fault. */
		h->losses++;
		out->action = SCHED_END_REQUEUE;
		out->cause = SCHED_CAUSE_LOST;
		return;
	}
	if (h->retries < f->retries) {
		h->retries++;
		out->action = SCHED_END_REQUEUE;
		out->cause = SCHED_CAUSE_RETRY;
		return;
	}
	out->action = SCHED_END_FAIL;
	out->cause = SCHED_CAUSE_EXHAUSTED;
	const char *why = f->ended_short ? f->engine_reason : f->reason;
	snprintf(out->fail_reason, sizeof out->fail_reason, "%s", why ? why : "");
}

/* The message kept with the segment and its event, and the progress
 * line's version of it (which prints the reservation and peak itself). */
static void describe(const sched_end_facts *f, uint64_t reserved_mib, sched_end_record *out)
{
	seg_outcome o = f->obs.outcome;
	const char *oname = seg_outcome_name(o);
	out->word = f->ended_short ? "ended" : oname;
	if (o == SEG_OUT_OOM && f->over_reservation) {
		/* relish's own limit: "oom" would read as the machine having
		 * run out of memory, and send a user to look for what used
		 * it (issue 30, item 8). */
		char then[200] = "";
		if (out->action == SCHED_END_REQUEUE)
			snprintf(then, sizeof then, "; %s", out->mem.reason);
		const char *what = f->reason && f->reason[0] ? f->reason : "stopped by relish";
		out->word = "over its reservation";
		snprintf(out->message, sizeof out->message,
			 "over its memory reservation (reserved %llu MiB, peak %llu MiB): %s%s",
			 (unsigned long long)reserved_mib, (unsigned long long)f->obs.peak_mem_mib,
			 what, then);
		snprintf(out->shown, sizeof out->shown, "%s%s", what, then);
		snprintf(out->event, sizeof out->event, "segment.over_reservation");
		return;
	} else if (o == SEG_OUT_OOM) {
		const char *what = oom_words(f);
		char then[200] = "";
		if (out->action == SCHED_END_REQUEUE)
			snprintf(then, sizeof then, "; %s", out->mem.reason);
		snprintf(out->message, sizeof out->message, "%s (reserved %llu MiB, peak %llu MiB)%s",
			 what, (unsigned long long)reserved_mib,
			 (unsigned long long)f->obs.peak_mem_mib, then);
		snprintf(out->shown, sizeof out->shown, "%s%s", what, then);
	} else if (f->ended_short) {
		snprintf(out->message, sizeof out->message, "%s",
			 f->engine_reason ? f->engine_reason : "");
		snprintf(out->shown, sizeof out->shown, "%s", out->message);
	} else if (o != SEG_OUT_COMPLETED) {
		snprintf(out->message, sizeof out->message, "%s",
			 f->reason && f->reason[0] ? f->reason : oname);
		snprintf(out->shown, sizeof out->shown, "%s", out->message);
	}
	if (o != SEG_OUT_COMPLETED)
		snprintf(out->event, sizeof out->event, "segment.%s", oname);
}

int sched_end_decide(const sched *s, uint64_t seg_id, const sched_end_facts *f,
		     sched_trial_history *h, sched_end_record *out, rl_err *err)
{
	sched_end_record r;
	memset(&r, 0, sizeof r);
	/* The memory policy sees every end: a completed one resets the
	 * trial's run of out-of-memory ends. */
	int rc = sched_mem_decide(s, seg_id, &f->obs, &h->mem, &r.mem, err);
	if (rc < 0)
		return rc;
	const sched_seg *g = &s->seg[sched__map_get(&s->seg_map, seg_id, 0)];
	decide_action(s, f, h, &r);
	describe(f, g->pl.mem_mib, &r);
	*out = r;
	return 0;
}
