/*
 * segment_end.c - the live driver's side of a running segment: each metric
 * line it prints (stored, one transaction per line, and reported to the
 * engine) and its end, where the executor's outcome decides what happens
 * next: completed -> engine_segment_done; out of memory -> re-queued with a
 * raised floor, or run alone, or the trial fails; other failures retried
 * from the checkpoint up to trial.retries; a runtime failure (the
 * executor's engine failed, or refused the segment) stops the experiment.  The outcome, progress, events and the shape's
 * profile are committed in one transaction before the core (sched_finished)
 * and the engine move on (docs/architecture.md, "Segment end").  Split from
 * driver.c, which launches segments with live_exec_callbacks.
 */
#include "live/live_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/contract.h"
#include "telemetry/procmem.h"

/* ---- a segment's output and end ------------------------------------------- */

static void on_line(void *ud, exec_segment *seg, const contract_line *line)
{
	(void)seg;
	live_seg *g = ud;
	live__explain_line(g->x->d, g, line);
	if (line->kind != CONTRACT_METRICS || !line->n)
		return;
	live_exp *x = g->x;
	live *d = x->d;
	if (d->fatal || x->suspended)
		return; /* stopping or paused; the segment re-runs on resume */
	double resource;
	if (!contract_metric_get(line, x->sp->schedule.resource, &resource))
		resource = g->to;
	double v;
	if (g->n_lines >= LIVE_METRIC_LINES_MAX) {
		/* Counted, not stored nor kept by the engine; the last
		 * objective is (drop_flush, at the segment's end). */
		if (!g->n_dropped++) {
			char msg[300];
			snprintf(msg, sizeof msg, "trial %lld printed more than %d metric lines in one "
				 "segment: the rest are counted and dropped (its last objective value "
				 "is kept)", (long long)x->trials[g->trial].store_id,
				 LIVE_METRIC_LINES_MAX);
			live__progress_line(d, "%s: %s", x->sp->name, msg);
			rl_err e2 = {0};
			if (store_event_append(d->st, live__now(d), x->id, x->trials[g->trial].store_id,
					       g->store_id, "trial.warning", msg, NULL, &e2) < 0)
				live__store_failed(d, x, &e2);
		}
		g->drop_res = resource;
		if (!contract_metric_get(line, x->sp->objective.metric, &g->drop_obj))
			g->drop_obj = NAN;
		return;
	}
	g->n_lines++;
	if (g->adopted && resource <= g->replay_upto) {
		/* Read again from the adopted segment's start: stored
		 * already, and left out of the engine's restored curve. */
		if (contract_metric_get(line, x->sp->objective.metric, &v) &&
		    engine_report(x->eng, g->trial, resource, v, NULL) == 0)
			g->last_obj = v;
		live__report_side(x, g, line);
		return;
	}
	store_metric m[CONTRACT_MAX_METRICS];
	double now = live__now(d);
	for (size_t i = 0; i < line->n; i++) {
		m[i] = (store_metric){
			.trial_id = x->trials[g->trial].store_id, .segment_id = g->store_id,
			.resource = resource, .name = (char *)line->m[i].name,
			.value = line->m[i].value, .at = now,
		};
	}
	rl_err err = {0};
	if (store_metrics_insert(d->st, m, line->n, &err) < 0) {
		/* A value the store could not keep: the run stops, and since
		 * nothing more is written the segment stays "running" in the
		 * store, so the next run re-runs it from its last boundary and
		 * takes back from its log what the trial printed (recover.c).
		 * A service's store that is full pauses this experiment only. */
		live__store_failed(d, x, &err);
		return;
	}
	if (contract_metric_get(line, x->sp->objective.metric, &v) &&
	    engine_report(x->eng, g->trial, resource, v, NULL) == 0)
		g->last_obj = v;
	live__report_side(x, g, line);
}

/* Several objectives and constraints: each side metric the line holds
 * (engine.h), the latest counting at the segment's boundary. */
void live__report_side(live_exp *x, live_seg *g, const contract_line *line)
{
	double v;
	for (size_t k = 0; k < engine_n_side(x->eng); k++)
		if (contract_metric_get(line, engine_side_metric(x->eng, k), &v))
			engine_report_side(x->eng, g->trial, k, v, NULL);
}

/* The segment ends: the last objective among its dropped lines (when the
 * lines after the bound carried one) is stored and reported, so the
 * engine decides on the value the trial printed last. */
static int drop_flush(live *d, live_seg *g, rl_err *err)
{
	live_exp *x = g->x;
	if (!g->n_dropped || isnan(g->drop_obj))
		return 0;
	store_metric m = {.trial_id = x->trials[g->trial].store_id, .segment_id = g->store_id,
			  .resource = g->drop_res, .name = x->sp->objective.metric,
			  .value = g->drop_obj, .at = live__now(d)};
	int rc = store_metrics_insert(d->st, &m, 1, err);
	if (rc < 0)
		return rc;
	if (engine_report(x->eng, g->trial, g->drop_res, g->drop_obj, NULL) == 0)
		g->last_obj = g->drop_obj;
	g->drop_obj = NAN;
	return 0;
}

void live__log_failed(live *d, const live_seg *g, int errnum)
{
	if (d->log_warned)
		return;
	d->log_warned = 1;
	char msg[600];
	snprintf(msg, sizeof msg, "writing segment logs under %s failed (%s); trials keep running "
		 "and their results are stored, but their logs are incomplete", d->runs_dir,
		 strerror(errnum));
	live__progress_line(d, "relish: %s", msg);
	/* Best effort: the database may well be on another disk. */
	store_event_append(d->st, live__now(d), g->x->id, g->x->trials[g->trial].store_id,
			   g->store_id, "run.log_failed", msg, NULL, NULL);
}

static seg_status seg_status_of(seg_outcome o)
{
	static const seg_status map[SEG_OUT__COUNT] = {
		[SEG_OUT_COMPLETED] = SEG_COMPLETED, [SEG_OUT_FAILED] = SEG_FAILED,
		[SEG_OUT_SIGNALED] = SEG_SIGNALED,   [SEG_OUT_OOM] = SEG_OOM,
		[SEG_OUT_TIMEOUT] = SEG_TIMEOUT,     [SEG_OUT_CANCELLED] = SEG_CANCELLED,
		[SEG_OUT_LOST] = SEG_LOST,
	};
	return (unsigned)o < SEG_OUT__COUNT ? map[o] : SEG_FAILED;
}

/* Record a segment that ended because relish is stopping: cancelled in the
 * store, its trial left running there so the next run re-runs it. */
static void end_interrupted(live *d, live_seg *g, const exec_result *r, uint64_t peak)
{
	rl_err err = {0};
	double now = live__now(d);
	store_segment_end e = {
		.status = SEG_CANCELLED, .exit_code = r->exited ? r->exit_code : -1,
		.signal = r->exited ? 0 : r->term_signal, .peak_mem_mib = peak ? (int64_t)peak : -1,
		.ended_at = now,
		.message = g->x->cancelled ? "cancelled: the experiment was cancelled"
			   : g->x->runtime_failed
				   ? "stopped: the executor's runtime failed for this experiment; re-run on resume"
				   : "interrupted: relish was stopped; re-run on resume",
	};
	if (!d->fatal && !g->x->suspended && store_segment_finish(d->st, g->store_id, &e, &err) < 0)
		live__store_failed(d, g->x, &err);
	live__seg_drop(d, g);
}

/* Every segment of x ends: running ones are cancelled (and end as
 * interrupted through their executor), queued ones leave the core. */
void live__exp_stop_segments(live *d, live_exp *x)
{
	live_seg *g = d->segs;
	while (g) {
		live_seg *next = g->next;
		if (g->x == x) {
			if (g->es) {
				g->interrupted = 1;
				exec_cancel(live__exec(x), g->es);
			} else if (!g->placed) {
				sched_remove(d->core, g->sched_id);
				live__seg_unqueued(g);
				live__seg_unlink_free(d, g);
			}
		}
		g = next;
	}
}

/* What both stops advise; recover.c's live_add_experiment makes it true
 * (a changed spec starts anew while no segment has completed). */
#define LIVE_RERUN_ADVICE                                                              \
	"then run the same command again: it resumes, or starts anew with a changed " \
	"spec while no segment has completed (else add --restart)"

/* Stop experiment x after a runtime failure (the executor's engine failed,
 * or the trial's command cannot be started at all) or when trials failed
 * fast: cancel its running segments (recorded as interrupted, re-run on
 * resume), drop its queued ones, launch nothing more.  live_run then fails
 * with d->runtime_err: "NAME: WHY; ADVICE". */
static void stop_experiment(live *d, live_exp *x, const char *why, const char *advice)
{
	double now = live__now(d);
	x->runtime_failed = 1;
	x->stalled = 1;
	if (!d->runtime_err.code)
		rl_err_set(&d->runtime_err, RL_ERUNTIME, "%s: %s; %s", x->sp->name, why, advice);
	store_experiment_set_status(d->st, x->id, EXP_FAILED, now, NULL);
	store_event_append(d->st, now, x->id, 0, 0, "experiment.failed", why, NULL, NULL);
	live__progress_line(d, "%s: stopped: %s", x->sp->name, why);
	live__exp_stop_segments(d, x);
}

/*
 * The executor's runtime failed (engine error, missing image, a mount that
 * does not exist), or the command cannot be started (missing program): not
 * the trial's fault, so it is no failed attempt and
 * uses none of trial.retries.  The segment is recorded failed with the
 * runtime's words, the trial goes back to re-run from its checkpoint, and
 * the experiment stops: every further segment would fail the same way.
 */
static void end_runtime_failed(live *d, live_seg *g, const exec_result *r)
{
	live_exp *x = g->x;
	live_trial *t = &x->trials[g->trial];
	rl_err err = {0};
	double now = live__now(d);
	engine_decision dec;
	engine_trial_view tv;
	if (engine_segment_done(x->eng, g->trial, 0, -1, &dec, &err) < 0 ||
	    (dec.outcome == ENG_FAILED &&
	     engine_requeue(x->eng, g->trial, dec.resource, g->to, &err) < 0) ||
	    engine_trial(x->eng, g->trial, &tv, &err) < 0) {
		live__store_failed(d, x, &err);
		live__seg_drop(d, g);
		return;
	}
	store_segment_end se = {
		.status = SEG_FAILED, .exit_code = r->exited ? r->exit_code : -1,
		.signal = r->exited ? 0 : r->term_signal, .peak_mem_mib = -1, .ended_at = now,
		.message = r->reason,
	};
	int rc = store_begin(d->st, &err);
	if (rc == 0 && (rc = store_segment_finish(d->st, g->store_id, &se, &err)) == 0 &&
	    (rc = store_trial_set_status(d->st, t->store_id, tv.state, NULL, now, &err)) == 0 &&
	    (rc = store_event_append(d->st, now, x->id, t->store_id, g->store_id,
				     "segment.runtime_failed", r->reason, NULL, &err)) == 0)
		rc = store_commit(d->st, &err);
	if (rc < 0) {
		store_rollback(d->st);
		live__store_failed(d, x, &err);
		live__seg_drop(d, g);
		return;
	}
	sched_remove(d->core, g->sched_id);
	live__progress_segment(d, g, "failed", 0, r->reason);
	x->n_seg_done++;
	live__seg_unlink_free(d, g);
	if (!x->runtime_failed)
		stop_experiment(d, x, r->reason,
				"nothing more was launched for it (fix the command, engine or image, "
				LIVE_RERUN_ADVICE ")");
}

/* trial.fail_fast: the first trials all failed the same way before any
 * segment completed (the engine's count): stop with that failure in words. */
static void check_fail_fast(live *d, live_exp *x)
{
	uint64_t first;
	int count;
	if (x->runtime_failed || !engine_failed_fast(x->eng, &first, &count))
		return;
	engine_trial_view v;
	if (engine_trial(x->eng, first, &v, NULL) < 0)
		return;
	int64_t id = first < x->n_trials ? x->trials[first].store_id : 0;
	char logs[600], why[1000], advice[400];
	live__logs_command(d, id, logs, sizeof logs);
	snprintf(why, sizeof why,
		 "the first %d trials failed the same way before any segment completed: \"%s\" "
		 "(trial %lld: %s)", count, v.reason, (long long)id, logs);
	snprintf(advice, sizeof advice,
		 "nothing more was launched (trial.fail_fast is %d; 0 never stops). Fix it, "
		 LIVE_RERUN_ADVICE, x->sp->trial.fail_fast);
	stop_experiment(d, x, why, advice);
}

/* How many metric lines the segment printed past the bound, as an event
 * in its end's transaction. */
static int drop_record(live *d, const live_seg *g, double now, rl_err *err)
{
	if (!g->n_dropped)
		return 0;
	char msg[200];
	snprintf(msg, sizeof msg, "%zu metric lines past the %d one segment may store were dropped",
		 g->n_dropped, LIVE_METRIC_LINES_MAX);
	return store_event_append(d->st, now, g->x->id, g->x->trials[g->trial].store_id, g->store_id,
				  "segment.metrics_dropped", msg, NULL, err);
}

void live__end_segment(live *d, live_seg *g, const exec_result *r)
{
	live_exp *x = g->x;
	const spec *sp = x->sp;
	live_trial *t = &x->trials[g->trial];
	const device_entry *de = &d->devs->dev[g->dev];
	double now = live__now(d);
	rl_err err = {0};
	uint64_t rss_mib = telemetry_bytes_to_mib(r->peak_rss_bytes);
	/* GPU: this machine's NVML samples, or what the executor measured
	 * where the segment ran (a cluster's node) */
	uint64_t gpu_peak = g->gpu_peak_mib > r->peak_gpu_mib ? g->gpu_peak_mib : r->peak_gpu_mib;
	uint64_t peak = de->info.is_gpu ? gpu_peak : rss_mib;

	if (r->log_errno)
		live__log_failed(d, g, r->log_errno);
	if (d->fatal || x->suspended) {
		/* The store failed or another driver owns it, or x is paused
		 * for want of space: write nothing (the segment, "running" in
		 * the store, re-runs on resume). */
		live__seg_drop(d, g);
		live__check_end(d);
		return;
	}
	if (g->interrupted || (d->stopping && r->outcome == SEG_OUT_CANCELLED)) {
		end_interrupted(d, g, r, peak);
		live__check_end(d);
		return;
	}
	/* The failure in more words (its last log line, the PATH rule). */
	exec_result rx;
	if (live__explain_result(d, g, r, &rx))
		r = &rx;
	if (r->fault != EXEC_FAULT_NONE) {
		end_runtime_failed(d, g, r);
		live__check_end(d);
		return;
	}

	/* Decide: the engine's view of the segment, then the core's record
	 * of what its end means (retries, losses, the memory policy). */
	if (drop_flush(d, g, &err) < 0)
		goto fatal;
	int ok = r->outcome == SEG_OUT_COMPLETED;
	engine_decision dec;
	if (engine_segment_done(x->eng, g->trial, ok, -1, &dec, &err) < 0)
		goto fatal;
	/* It exited cleanly but the engine wants more (no objective): say
	 * what it did print. */
	int ended_short = ok && dec.outcome == ENG_FAILED;
	if (ended_short)
		live__explain_missing(g, dec.reason, sizeof dec.reason);
	/* Out of memory on a GPU: sample once more first, so that memory
	 * others hold right now is known to the core (an out-of-memory
	 * beside it is no proof of anything). */
	if (r->outcome == SEG_OUT_OOM && de->info.is_gpu)
		live__gpu_sample(d);
	sched_end_facts facts = {
		.obs = {.outcome = r->outcome, .peak_mem_mib = peak,
			.mean_util = live__seg_mean_util(g), .work = g->to - g->from,
			.duration_s = r->duration_s,
			/* not one metric line: it failed to start (an
			 * import error, a bad argument) */
			.no_work = !g->reported[0] && r->metric_lines == 0 && !g->adopted},
		.engine_failed = dec.outcome == ENG_FAILED, .ended_short = ended_short,
		.engine_reason = dec.reason, .reason = r->reason, .oom_marker = r->oom_marker,
		.reason_names_limit = r->reason_names_limit,
		.over_reservation = r->over_reservation,
		.retries = sp->trial.retries,
	};
	sched_end_record rec;
	if (sched_end_decide(d->core, g->sched_id, &facts, &t->hist, &rec, &err) < 0)
		goto fatal;
	const char *fail_reason = rec.action == SCHED_END_FAIL ? rec.fail_reason : NULL;
	if (rec.action == SCHED_END_REQUEUE &&
	    engine_requeue(x->eng, g->trial, dec.resource, g->to, &err) < 0)
		goto fatal;
	if (fail_reason && engine_trial_failed(x->eng, g->trial, fail_reason, &err) < 0)
		goto fatal;

	/* The core learns (the shape's profile, the co-location it saw) and
	 * releases the reservation: nothing is placed before the record is
	 * committed (placement waits for the next kick), and a failed commit
	 * stops the driver. */
	if (sched_finished(d->core, g->sched_id, live__mono(d), &facts.obs, &err) < 0)
		goto fatal;

	/* Record: the segment, the trial and the profile the core now holds,
	 * in one transaction. */
	engine_trial_view tv;
	if (engine_trial(x->eng, g->trial, &tv, &err) < 0)
		goto fatal;
	/* Exited 0 without its objective: the segment failed its contract,
	 * and its trial may fail for it; stored "completed" it showed as a
	 * green completed pill beside a failed trial (dashboard, relish logs;
	 * issue 30, item 11). */
	store_segment_end se = {
		.status = ended_short ? SEG_FAILED
			  /* relish's own limit, said so in the store too
			   * (the verdict's message and event say it) */
			  : r->outcome == SEG_OUT_OOM && r->over_reservation ? SEG_OVER_RESERVATION
			  : seg_status_of(r->outcome),
		.exit_code = r->exited ? r->exit_code : -1,
		.signal = r->exited ? 0 : r->term_signal, .peak_mem_mib = peak ? (int64_t)peak : -1,
		.ended_at = now, .message = rec.message[0] ? rec.message : NULL,
	};
	int rc = store_begin(d->st, &err);
	if (rc == 0 && (rc = store_segment_finish(d->st, g->store_id, &se, &err)) == 0 &&
	    (rc = store_trial_set_progress(d->st, t->store_id, tv.resource, tv.value,
					   isnan(tv.value) ? NAN : tv.resource, now, &err)) == 0 &&
	    (rc = store_trial_set_status(d->st, t->store_id, tv.state, fail_reason, now, &err)) == 0 &&
	    (!tv.objectives || isnan(tv.value) ||
	     (rc = store_trial_set_values(d->st, t->store_id, tv.objectives, spec_n_objectives(sp),
					  sp->n_constraints ? tv.violation : NAN, &err)) == 0) &&
	    (!rec.event[0] ||
	     (rc = store_event_append(d->st, now, x->id, t->store_id, g->store_id, rec.event,
				      rec.message, NULL, &err)) == 0) &&
	    (!fail_reason || (rc = store_event_append(d->st, now, x->id, t->store_id, g->store_id,
						      "trial.failed", fail_reason, NULL, &err)) == 0) &&
	    (rc = drop_record(d, g, now, &err)) == 0 &&
	    (rc = live__gpu_record(d, g, &err)) == 0 &&
	    (r->outcome != SEG_OUT_COMPLETED ||
	     (rc = live__profile_update(d, g, peak, &err)) == 0) &&
	    (rc = live__learnt_save(d, &err)) == 0)
		rc = store_commit(d->st, &err);
	if (rc < 0) {
		store_rollback(d->st);
		goto fatal;
	}

	/* Notify: the executor, the display, the experiment. */
	if (rec.cause == SCHED_CAUSE_LOST && x->be->ops->suspect)
		x->be->ops->suspect(x->be, g->dev); /* its node may have failed */
	int final = tv.state == TRIAL_COMPLETED || tv.state == TRIAL_STOPPED ||
		    tv.state == TRIAL_FAILED;
	if (g->reuse_key && sp->trial.mode == TRIAL_MODE_WARM && final)
		exec_release(live__exec(x), g->reuse_key);
	/* It sends no more segments: the core forgets its service (a
	 * trial's record there would otherwise last as long as relish). */
	if (final)
		sched_job_forget(d->core, (uint64_t)t->store_id);
	live__progress_segment(d, g, rec.word, peak, rec.shown[0] ? rec.shown : NULL);
	x->n_seg_done++;
	live__seg_unlink_free(d, g);
	if (fail_reason)
		check_fail_fast(d, x);
	if (!x->done && !x->runtime_failed && engine_done(x->eng) && x->n_active == 0)
		live__experiment_finish(d, x);
	live__kick(d);
	live__check_end(d);
	return;
fatal:
	/* Every way out drops the segment, or the loop, waiting for it to
	 * end, would never end (the hang behind issue 14's items 1 and 2).
	 * A service's full store pauses x alone (space.c): it leaves the
	 * driver, engine and all, and is resumed from the store. */
	live__store_failed(d, x, &err);
	live__seg_drop(d, g);
	live__check_end(d);
}

static void on_end(void *ud, exec_segment *seg, const exec_result *r)
{
	(void)seg;
	live_seg *g = ud;
	g->es = NULL;
	live__end_segment(g->x->d, g, r);
}

static void on_event(void *ud, exec_segment *seg, const exec_event *ev)
{
	(void)seg;
	live_seg *g = ud;
	live__seg_event(g->x->d, g, ev);
}

const exec_callbacks live_exec_callbacks = {.on_line = on_line, .on_end = on_end, .on_event = on_event};
