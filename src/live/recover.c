/*
 * recover.c - resuming an experiment the store already holds: `relish run
 * SPEC` again after a crash, a SIGKILL, or Ctrl-C.
 *
 * The store is the truth (docs/state.md, "Recovery model"):
 *   1. segments left "running" belonged to the relish that died.  Their
 *      processes cannot report any more (their pipes died with it), so the
 *      executor stops each one whose pid AND kernel start time still match
 *      (a reused pid is someone else's process and is left alone), and the
 *      segment is marked lost: no orphan keeps a device's memory;
 *   2. each trial is rebuilt in the engine (engine_restore_trial) from its
 *      stored state, its learning curve (objective metric rows, in report
 *      order) and its boundaries: every completed segment that reported the
 *      objective ends at a boundary, whose value is the last objective the
 *      segment reported (what engine_segment_done decided on).  Trials
 *      stored running or pending are re-run from their last boundary, where
 *      their checkpoint is;
 *   3. the driver's per-trial counters (next seq, retries, out-of-memory
 *      floor) are recomputed from the segments.
 * Finished segments, metrics and decisions are never redone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "live/live_int.h"

/* Step 1: stop what the previous relish left running; mark it lost. */
static int reclaim_running(live *d, live_exp *x, rl_err *err)
{
	store_segment *v = NULL;
	size_t n = 0;
	int rc = store_segment_list_running(d->st, x->id, &v, &n, err);
	if (rc < 0)
		return rc;
	double now = live_now();
	for (size_t i = 0; i < n && rc >= 0; i++) {
		exec_ident id = {.pid = v[i].pid, .start_time = v[i].pid_start_time};
		int alive = v[i].pid > 0 && store_pid_is_ours(v[i].pid, v[i].pid_start_time);
		if (v[i].pid > 0)
			d->ex->ops->reclaim(d->ex, &id, NULL);
		char msg[200];
		snprintf(msg, sizeof msg, "relish restarted; %s; re-run from the last checkpoint",
			 alive ? "its process was still running and was stopped"
			       : "its process was gone");
		store_segment_end e = {.status = SEG_LOST, .exit_code = -1, .signal = 0,
				       .peak_mem_mib = -1, .ended_at = now, .message = msg};
		if ((rc = store_segment_finish(d->st, v[i].id, &e, err)) == 0)
			rc = store_event_append(d->st, now, x->id, v[i].trial_id, v[i].id,
						"segment.lost", msg, NULL, err);
	}
	store_segments_free(v, n);
	return rc;
}

static int grow_points(engine_point **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	engine_point *q = realloc(*p, c * sizeof *q);
	if (!q)
		return RL_ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* Steps 2 and 3 for one trial; segs/n_segs are its segments by seq. */
static int restore_trial(live *d, live_exp *x, const store_trial *t, const store_segment *segs,
			 size_t n_segs, engine_point **rep, size_t *rep_cap, engine_point **bnd,
			 size_t *bnd_cap, rl_err *err)
{
	const spec *sp = x->sp;
	const char *obj = sp->objective.metric;
	size_t nr = 0, nb = 0;
	for (size_t i = 0; i < t->n_metrics; i++) {
		const store_metric *m = &t->metrics[i];
		if (strcmp(m->name, obj) != 0)
			continue;
		if (grow_points(rep, rep_cap, nr + 1) < 0)
			return rl_err_set(err, RL_ENOMEM, "restoring trials");
		(*rep)[nr++] = (engine_point){m->resource, m->value};
	}
	live_trial *lt = live_trial_slot(x, (uint64_t)t->idx, err);
	if (!lt)
		return RL_ENOMEM;
	lt->store_id = t->id;
	for (size_t k = 0; k < n_segs; k++) {
		const store_segment *g = &segs[k];
		if (g->seq + 1 > lt->next_seq)
			lt->next_seq = g->seq + 1;
		if (g->status == SEG_FAILED || g->status == SEG_SIGNALED || g->status == SEG_TIMEOUT)
			lt->retries++;
		if (g->status == SEG_OOM) {
			lt->ooms++;
			double base = (double)(g->peak_mem_mib > g->mem_reserved_mib ? g->peak_mem_mib
										  : g->mem_reserved_mib);
			uint64_t need = (uint64_t)ceil(base * (1.0 + sp->sharing.memory_margin));
			if (need > lt->min_mem_mib)
				lt->min_mem_mib = need;
		}
		if (g->status != SEG_COMPLETED)
			continue;
		/* The boundary's value: the last objective this segment reported. */
		double v = NAN;
		for (size_t i = 0; i < t->n_metrics; i++)
			if (t->metrics[i].segment_id == g->id && strcmp(t->metrics[i].name, obj) == 0)
				v = t->metrics[i].value;
		if (isnan(v))
			continue;
		if (grow_points(bnd, bnd_cap, nb + 1) < 0)
			return rl_err_set(err, RL_ENOMEM, "restoring trials");
		(*bnd)[nb++] = (engine_point){g->resource_to, v};
	}
	config cfg = {0};
	int rc = config_from_json(&sp->search.space, t->params_json ? t->params_json : "{}", &cfg,
				  err);
	if (rc < 0)
		return rl_err_prefix(err, "trial %d of %s", t->idx, sp->name);
	engine_trial_record rec = {
		.index = (uint64_t)t->idx, .cfg = &cfg, .state = t->status,
		.n_reports = nr, .reports = *rep, .n_boundaries = nb, .boundaries = *bnd,
		.reason = t->error,
	};
	rc = engine_restore_trial(x->eng, &rec, err);
	config_fini(&cfg);
	if (rc < 0)
		return rl_err_prefix(err, "restoring trial %d of %s", t->idx, sp->name);
	return 0;
}

int live_resume(live *d, live_exp *x, const store_experiment *se, rl_err *err)
{
	if (se->status == EXP_DONE) {
		x->done = 1;
		return 0;
	}
	int rc = reclaim_running(d, x, err);
	if (rc < 0)
		return rl_err_prefix(err, "resuming %s", x->sp->name);
	store_trial *tv = NULL;
	size_t nt = 0;
	store_segment *sv = NULL;
	size_t ns = 0;
	engine_point *rep = NULL, *bnd = NULL;
	size_t rep_cap = 0, bnd_cap = 0;
	if ((rc = store_trial_list(d->st, x->id, STORE_LIST_METRICS, &tv, &nt, err)) < 0 ||
	    (rc = store_segment_list_experiment(d->st, x->id, &sv, &ns, err)) < 0)
		goto out;
	size_t j = 0;
	size_t n_rerun = 0;
	for (size_t i = 0; i < nt && rc >= 0; i++) {
		/* Both lists are in trial idx order: this trial's segments are
		 * the run starting at j. */
		while (j < ns && sv[j].trial_id != tv[i].id)
			j++;
		size_t k = j;
		while (k < ns && sv[k].trial_id == tv[i].id)
			k++;
		rc = restore_trial(d, x, &tv[i], sv + j, k - j, &rep, &rep_cap, &bnd, &bnd_cap, err);
		if (tv[i].status == TRIAL_RUNNING || tv[i].status == TRIAL_PENDING)
			n_rerun++;
		j = k;
	}
	if (rc < 0)
		goto out;
	double now = live_now();
	char msg[160];
	snprintf(msg, sizeof msg, "resumed: %zu trials restored, %zu to re-run from their checkpoint",
		 nt, n_rerun);
	if ((rc = store_experiment_set_status(d->st, x->id, EXP_RUNNING, NAN, err)) == 0)
		rc = store_event_append(d->st, now, x->id, 0, 0, "experiment.resumed", msg, NULL, err);
	if (rc == 0)
		live_progress_line(d, "%s: %s", x->sp->name, msg);
	if (rc == 0 && engine_done(x->eng)) {
		/* Everything was final already (killed right after the last
		 * segment): record it done. */
		x->done = 1;
		rc = store_experiment_set_status(d->st, x->id, EXP_DONE, now, err);
	}
out:
	store_trials_free(tv, nt);
	store_segments_free(sv, ns);
	free(rep);
	free(bnd);
	return rc;
}
