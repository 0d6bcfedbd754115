/*
 * recover.c - resuming an experiment the store already holds: `relish run
 * SPEC` again after a crash, a SIGKILL, or Ctrl-C.
 *
 * The store is the truth (docs/state.md, "Recovery model"):
 *   1. segments left "running" belonged to the relish that died.  What
 *      ran them is asked of their backend (exec_backend_ops, exec/exec.h),
 *      which names no kind here: a oneshot segment it can watch again (a
 *      unit that outlived relish: an image's, a cluster's job) is adopted once
 *      the engine is rebuilt: the engine hands it out as running
 *      (engine_adopt), the core takes its stored placement (sched_adopt),
 *      and the backend reads its output again from the start (the metric
 *      lines stored already are reported to the engine, not stored twice)
 *      and its end; it ends as any segment does.  Any other is lost: its
 *      backend stops what is left of it (a process only when its pid AND
 *      kernel start time still match: a reused pid is someone else's) and
 *      says what became of it, so no orphan keeps a device's memory; the
 *      metric lines of its log that the store lacks are stored first
 *      (salvage_metrics): nothing the trial printed is lost;
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
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/contract.h"
#include "live/live_int.h"

/* What the store recorded of running segment g of x, for its backend. */
static void found_of(const live_exp *x, const store_segment *g, exec_found *f)
{
	memset(f, 0, sizeof *f);
	f->id.pid = g->pid;
	f->id.start_time = g->pid_start_time;
	if (g->handle)
		snprintf(f->id.handle, sizeof f->id.handle, "%s", g->handle);
	f->experiment = x->sp->name;
	f->trial = g->trial_id;
	f->seq = g->seq;
}

/* A running segment the store holds that can be adopted: a oneshot
 * segment with a placement whose backend can watch it again (a unit kept
 * running at start-up, or one whose end its backend may still tell). */
static int adoptable(const live_exp *x, const store_segment *g)
{
	if (x->sp->trial.mode != TRIAL_MODE_ONESHOT || !g->device || g->mem_reserved_mib < 0 ||
	    !x->be->ops->adoptable)
		return 0;
	exec_found f;
	found_of(x, g, &f);
	return x->be->ops->adoptable(x->be, x->ex, &f);
}

/*
 * The metric lines in a lost segment's log that the store does not hold
 * (its writes failed, or relish died between logging a line and storing
 * it): stored now as they would have been live, so nothing the trial
 * reported is lost even when its re-run resumes from a checkpoint past
 * them and never prints them again.  The log interleaves standard output
 * and error; a line is taken when it parses as a metric line, as live.
 * *added gets how many values were new.
 */
static int salvage_metrics(live *d, const live_exp *x, const store_segment *g, size_t *added,
			   rl_err *err)
{
	*added = 0;
	/* relish's own file in a folder of relish's; still, a regular file
	 * only, opened without following a link or blocking */
	int fd = g->log_path ? open(g->log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
			     : -1;
	struct stat st;
	FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0; /* no log (left, or never opened): nothing to take back */
	}
	/* The log is the trial's output, and its owner may write to it while
	 * no relish runs: read as live reads it, a line of at most
	 * CONTRACT_LINE_MAX bytes in a fixed buffer (a longer one is skipped
	 * whole, as live never parses one) and at most the log's size limit
	 * in all (a 400 MB line took a restarting service's memory to
	 * 852 MB before it listened). */
	char *line = malloc(CONTRACT_LINE_MAX + 2);
	if (!line) {
		fclose(f);
		return rl_err_set(err, RL_ENOMEM, "reading %s", g->log_path);
	}
	size_t n;
	uint64_t read_total = 0, limit = EXEC_LOG_MAX;
	double now = live__now(d);
	int rc = store_begin(d->st, err);
	size_t taken = 0;
	/* As many lines as a live segment stores (LIVE_METRIC_LINES_MAX). */
	while (rc == 0 && taken < LIVE_METRIC_LINES_MAX && read_total < limit &&
	       fgets(line, CONTRACT_LINE_MAX + 2, f)) {
		n = strlen(line);
		read_total += n;
		if (n && line[n - 1] != '\n' && !feof(f)) {
			/* too long: the rest of it goes unread into nothing */
			int c;
			while ((c = getc(f)) != EOF && c != '\n' && read_total < limit)
				read_total++;
			continue;
		}
		if (n && line[n - 1] == '\n')
			n--;
		contract_line l;
		if (contract_parse_line(line, (size_t)n, &l) != CONTRACT_METRICS || !l.n)
			continue;
		taken++;
		double res;
		if (!contract_metric_get(&l, x->sp->schedule.resource, &res))
			res = g->resource_to;
		store_metric m[CONTRACT_MAX_METRICS];
		for (size_t i = 0; i < l.n; i++)
			m[i] = (store_metric){.trial_id = g->trial_id, .segment_id = g->id,
					      .resource = res, .name = (char *)l.m[i].name,
					      .value = l.m[i].value, .at = now};
		size_t k = 0;
		rc = store_metrics_insert_missing(d->st, m, l.n, &k, err);
		*added += k;
	}
	free(line);
	fclose(f);
	if (rc == 0)
		rc = store_commit(d->st, err);
	if (rc < 0) {
		store_rollback(d->st);
		*added = 0;
	}
	return rc;
}

/* Step 1 for one segment: stop what the previous relish left; mark it lost. */
static int lose_segment(live *d, live_exp *x, const store_segment *g, const char *why,
			rl_err *err)
{
	double now = live__now(d);
	exec_found f;
	found_of(x, g, &f);
	char what[300];
	/* what became of it (its backend stops what is left), and why it
	 * was not adopted */
	x->be->ops->lose(x->be, x->ex, &f, what, sizeof what);
	snprintf(what + strlen(what), sizeof what - strlen(what), "%s", why ? why : "");
	size_t salvaged = 0;
	int rc = salvage_metrics(d, x, g, &salvaged, err);
	if (rc < 0)
		return rl_err_prefix(err, "taking back the metrics in %s", g->log_path);
	char msg[520], back[120] = "";
	if (salvaged)
		snprintf(back, sizeof back, "; %zu metric value%s the store had not kept taken back "
			 "from its log", salvaged, salvaged == 1 ? "" : "s");
	snprintf(msg, sizeof msg, "relish restarted; %s%s; re-run from the last checkpoint", what,
		 back);
	store_segment_end e = {.status = SEG_LOST, .exit_code = -1, .signal = 0,
			       .peak_mem_mib = -1, .ended_at = now, .message = msg};
	rc = store_segment_finish(d->st, g->id, &e, err);
	if (rc == 0)
		rc = store_event_append(d->st, now, x->id, g->trial_id, g->id, "segment.lost", msg,
					NULL, err);
	return rc;
}

/* The engine index of the trial with store id tid, -1 when none. */
static int64_t trial_index(const live_exp *x, int64_t tid)
{
	for (size_t i = 0; i < x->n_trials; i++)
		if (x->trials[i].store_id == tid)
			return (int64_t)i;
	return -1;
}

/*
 * Adopt segment g (after the engine was restored): the engine hands it out
 * as running, the core takes its stored placement (sched_adopt), and its
 * backend watches it again.  replay_upto: the last resource of
 * its stored metrics.  Returns 1 when adopted, 0 when it cannot be (*why
 * says why; the caller marks it lost), < 0 on errors.
 */
static int adopt_segment(live *d, live_exp *x, const store_segment *g, double replay_upto,
			 char *why, size_t why_n, rl_err *err)
{
	const spec *sp = x->sp;
	int64_t idx = trial_index(x, g->trial_id);
	int dev = -1;
	for (size_t i = 0; i < d->devs->n; i++)
		if (!strcmp(d->devs->dev[i].info.uuid, g->device))
			dev = (int)i;
	if (idx < 0 || dev < 0) {
		snprintf(why, why_n, " (%s)", idx < 0 ? "its trial is unknown" : "its device is gone");
		return 0;
	}
	engine_work w;
	rl_err e2 = {0};
	if (engine_adopt(x->eng, (uint64_t)idx, g->resource_from, g->resource_to, &w, &e2) < 0) {
		snprintf(why, why_n, " (%s)", e2.msg);
		return 0;
	}
	live_trial *t = &x->trials[idx];
	live_seg *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "adopting a segment");
	s->x = x;
	s->trial = (uint64_t)idx;
	s->from = g->resource_from;
	s->to = g->resource_to;
	s->seq = g->seq;
	s->store_id = g->id;
	s->last_obj = NAN;
	s->est_mem = g->est_mem_mib;
	s->adopted = 1;
	s->replay_upto = replay_upto;
	live__request_build(x, w.cfg, &s->req);
	s->req.seg_id = s->sched_id = ++d->next_sched_id;
	sched_mem_apply(&t->hist.mem, &s->req);
	s->req.job_id = t->store_id;
	s->req.attained_s = t->attained_before;
	/* The stored start is wall time; the core counts on the loop's clock. */
	s->req.submit_time = isnan(g->started_at) ? live__mono(d) : live__mono_of(d, g->started_at);
	live__profile_seed(d, &s->req);
	sched_placement pl = {.seg_id = s->sched_id, .n_dev = 1, .dev = {dev},
			      .mem_mib = (uint64_t)g->mem_reserved_mib,
			      .compute = isnan(g->compute_share) ? 0 : g->compute_share};
	for (int b = 0; b < 16; b++)
		if (g->basis && !strcmp(sched_basis_name((sched_basis)b), g->basis))
			pl.basis = (sched_basis)b;
	int rc = sched_adopt(d->core, &s->req, &pl, &e2);
	if (rc < 0) {
		free(s);
		engine_requeue(x->eng, (uint64_t)idx, g->resource_from, g->resource_to, NULL);
		snprintf(why, why_n, " (%s)", e2.msg);
		return 0;
	}
	s->placed = 1;
	s->dev = dev;
	s->mem_mib = pl.mem_mib;
	s->compute = pl.compute;
	s->basis = pl.basis;
	s->started_at = s->req.submit_time;
	int on_gpu = d->devs->dev[dev].info.is_gpu;
	/* run_as: the unit is its owner's (a cluster job is cancelled as them) */
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .log_path = g->log_path,
			.timeout_s = sp->trial.timeout_s,
			.memory_limit_mib = on_gpu ? 0 : pl.mem_mib,
			.run_as = x->owner.run_as ? &x->run_as : NULL};
	exec_found f;
	found_of(x, g, &f);
	char said[300];
	rc = x->be->ops->adopt(x->be, x->ex, &f, &es, &live_exec_callbacks, s, &s->es, said,
			       sizeof said, &e2);
	if (rc < 0) {
		sched_remove(d->core, s->sched_id);
		free(s);
		engine_requeue(x->eng, (uint64_t)idx, g->resource_from, g->resource_to, NULL);
		snprintf(why, why_n, " (%s)", e2.msg);
		return 0;
	}
	live__seg_link(d, s);
	x->n_active++;
	if (t->next_seq < g->seq + 1)
		t->next_seq = g->seq + 1;
	exec_ident id;
	if (exec_ident_of(live__exec(x), s->es, &id) == 0) {
		s->pid = id.pid;
		s->pid_start = id.start_time;
		if ((rc = store_segment_set_pid(d->st, g->id, id.pid, id.start_time,
						id.handle[0] ? id.handle : g->handle, err)) < 0)
			return rc;
	}
	char msg[400];
	snprintf(msg, sizeof msg, "relish restarted; %s", said);
	if ((rc = store_event_append(d->st, live__now(d), x->id, g->trial_id, g->id,
				     "segment.adopted", msg, NULL, err)) < 0)
		return rc;
	live__progress_line(d, "%s: trial %lld segment %g-%g: %s", sp->name, (long long)g->trial_id,
			   g->resource_from, g->resource_to, msg);
	return 1;
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

/* The trial's out-of-memory history again, from its stored segment ends in
 * order, through the core's rule (sched_mem_rule): the floor and the
 * run-alone flag its next request carries, as if relish had not stopped.
 * What ran beside a stored segment is not kept, so a whole device (basis
 * exclusive, or a reservation of all of it) counts as alone; a trial
 * still active never failed that way, so only its floor matters here. */
static void replay_memory(live *d, live_trial *lt, const store_segment *g)
{
	int dev = g->device ? device_list_find(d->devs, g->device) : -1;
	uint64_t dev_mib = dev >= 0 ? d->devs->dev[dev].info.mem_total_mib : 0;
	uint64_t res = g->mem_reserved_mib > 0 ? (uint64_t)g->mem_reserved_mib : 0;
	sched_mem_end e = {
		/* over its reservation: the memory policy's out-of-memory */
		.outcome = g->status == SEG_OOM || g->status == SEG_OVER_RESERVATION ? SEG_OUT_OOM
										    : SEG_OUT_COMPLETED,
		.peak_mib = g->peak_mem_mib > 0 ? (uint64_t)g->peak_mem_mib : 0,
		.reserved_mib = res, .device_mib = dev_mib,
		.is_gpu = dev >= 0 && d->devs->dev[dev].info.is_gpu,
		.alone = (g->basis && !strcmp(g->basis, sched_basis_name(SCHED_BASIS_EXCLUSIVE))) ||
			 (dev_mib && res >= dev_mib),
	};
	sched_mem_decision md;
	sched_mem_rule(d->core, &e, &lt->hist.mem, &md);
}

/* Steps 2 and 3 for one trial; segs/n_segs are its segments by seq. */
/* skip_seg: the segment to be adopted, whose metrics come again from its
 * output (0: none). */
static int restore_trial(live *d, live_exp *x, const store_trial *t, const store_segment *segs,
			 size_t n_segs, int64_t skip_seg, engine_point **rep, size_t *rep_cap,
			 engine_point **bnd, size_t *bnd_cap, rl_err *err)
{
	const spec *sp = x->sp;
	const char *obj = sp->objective.metric;
	size_t nr = 0, nb = 0;
	for (size_t i = 0; i < t->n_metrics; i++) {
		const store_metric *m = &t->metrics[i];
		if (strcmp(m->name, obj) != 0 || (skip_seg && m->segment_id == skip_seg))
			continue;
		if (grow_points(rep, rep_cap, nr + 1) < 0)
			return rl_err_set(err, RL_ENOMEM, "restoring trials");
		(*rep)[nr++] = (engine_point){m->resource, m->value};
	}
	live_trial *lt = live__trial_slot(x, (uint64_t)t->idx, err);
	if (!lt)
		return RL_ENOMEM;
	lt->store_id = t->id;
	lt->arrival = live__arrival(d, live__mono_of(d, t->created_at)); /* loop clock */
	lt->attained_before = 0;
	for (size_t k = 0; k < n_segs; k++) {
		const store_segment *g = &segs[k];
		if (!isnan(g->started_at) && !isnan(g->ended_at) && g->ended_at > g->started_at)
			lt->attained_before += g->ended_at - g->started_at;
		if (g->seq + 1 > lt->next_seq)
			lt->next_seq = g->seq + 1;
		if (g->status == SEG_FAILED || g->status == SEG_SIGNALED || g->status == SEG_TIMEOUT)
			lt->hist.retries++;
		if (g->status == SEG_OOM || g->status == SEG_OVER_RESERVATION ||
		    g->status == SEG_COMPLETED)
			replay_memory(d, lt, g);
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
	/* Side metrics (several objectives, constraints): the latest value
	 * of each up to the last boundary, as the engine had them. */
	size_t n_side = engine_n_side(x->eng);
	double side[SPEC_OBJECTIVES_MAX + SPEC_CONSTRAINTS_MAX];
	for (size_t k = 0; k < n_side; k++) {
		side[k] = NAN;
		const char *name = engine_side_metric(x->eng, k);
		for (size_t i = 0; nb && i < t->n_metrics; i++) {
			const store_metric *m = &t->metrics[i];
			if (!strcmp(m->name, name) && (!skip_seg || m->segment_id != skip_seg) &&
			    m->resource <= (*bnd)[nb - 1].resource)
				side[k] = m->value;
		}
	}
	engine_trial_record rec = {
		.index = (uint64_t)t->idx, .cfg = &cfg, .state = t->status,
		.n_reports = nr, .reports = *rep, .n_boundaries = nb, .boundaries = *bnd,
		.reason = t->error, .side = n_side ? side : NULL,
	};
	rc = engine_restore_trial(x->eng, &rec, err);
	config_fini(&cfg);
	if (rc < 0)
		return rl_err_prefix(err, "restoring trial %d of %s", t->idx, sp->name);
	return 0;
}

int live__resume(live *d, live_exp *x, const store_experiment *se, rl_err *err)
{
	if (se->status == EXP_DONE) {
		x->done = 1;
		return 0;
	}
	/* Step 1: segments left running are lost, except those their
	 * backend can watch again (adopted after step 2). */
	store_segment *run = NULL;
	size_t n_run = 0;
	int rc = store_segment_list_running(d->st, x->id, &run, &n_run, err);
	if (rc < 0)
		return rl_err_prefix(err, "resuming %s", x->sp->name);
	for (size_t i = 0; i < n_run && rc >= 0; i++)
		if (!adoptable(x, &run[i]))
			rc = lose_segment(d, x, &run[i], NULL, err);
	if (rc < 0) {
		store_segments_free(run, n_run);
		return rl_err_prefix(err, "resuming %s", x->sp->name);
	}
	store_trial *tv = NULL;
	size_t nt = 0;
	store_segment *sv = NULL;
	size_t ns = 0;
	engine_point *rep = NULL, *bnd = NULL;
	size_t rep_cap = 0, bnd_cap = 0;
	size_t n_adopted = 0;
	if ((rc = store_trial_list(d->st, x->id, STORE_LIST_METRICS, &tv, &nt, err)) < 0 ||
	    (rc = store_segment_list_experiment(d->st, x->id, &sv, &ns, err)) < 0)
		goto out;
	size_t j = 0;
	size_t n_rerun = 0;
	for (size_t i = 0; i < nt && rc >= 0; i++) {
		/* Both lists are in trial idx order: this trial's segments are
		 * the run starting at j, if it has any.  A trial without one (made,
		 * never launched) leaves j where it is: searching on to the end
		 * would hide every later trial's segments from it (they would
		 * start again at seq 0, and the next launch's insert fails). */
		size_t at = j;
		while (at < ns && sv[at].trial_id != tv[i].id)
			at++;
		if (at < ns)
			j = at;
		size_t k = j;
		while (k < ns && sv[k].trial_id == tv[i].id)
			k++;
		int64_t skip = 0;
		for (size_t r = 0; r < n_run; r++)
			if (run[r].trial_id == tv[i].id && adoptable(x, &run[r]))
				skip = run[r].id;
		rc = restore_trial(d, x, &tv[i], sv + j, k - j, skip, &rep, &rep_cap, &bnd, &bnd_cap,
				   err);
		if (tv[i].status == TRIAL_RUNNING || tv[i].status == TRIAL_PENDING ||
		    tv[i].status == TRIAL_CANCELLED)
			n_rerun++;
		j = k;
	}
	/* Adopt what still runs; what cannot be adopted is lost after all. */
	for (size_t r = 0; r < n_run && rc >= 0; r++) {
		if (!adoptable(x, &run[r]))
			continue;
		double upto = -INFINITY;
		for (size_t i = 0; i < nt; i++)
			for (size_t m = 0; tv[i].id == run[r].trial_id && m < tv[i].n_metrics; m++)
				if (tv[i].metrics[m].segment_id == run[r].id &&
				    tv[i].metrics[m].resource > upto)
					upto = tv[i].metrics[m].resource;
		char why[300] = "";
		rc = adopt_segment(d, x, &run[r], upto, why, sizeof why, err);
		if (rc == 1) {
			n_adopted++;
			n_rerun--;
			rc = 0;
		} else if (rc == 0) {
			rc = lose_segment(d, x, &run[r], why, err);
		}
	}
	if (rc < 0)
		goto out;
	double now = live__now(d);
	char msg[220];
	snprintf(msg, sizeof msg, "resumed: %zu trials restored, %zu to re-run from their checkpoint",
		 nt, n_rerun);
	if (n_adopted)
		snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ", %zu running in adopted %s",
			 n_adopted, x->be->ops->units);
	if ((rc = store_experiment_set_status(d->st, x->id, EXP_RUNNING, NAN, err)) == 0)
		rc = store_event_append(d->st, now, x->id, 0, 0, "experiment.resumed", msg, NULL, err);
	if (rc == 0)
		live__progress_line(d, "%s: %s", x->sp->name, msg);
	if (rc == 0 && engine_done(x->eng)) {
		/* Everything was final already (killed right after the last
		 * segment): record it done. */
		x->done = 1;
		rc = store_experiment_set_status(d->st, x->id, EXP_DONE, now, err);
	}
out:
	store_segments_free(run, n_run);
	store_trials_free(tv, nt);
	store_segments_free(sv, ns);
	free(rep);
	free(bnd);
	return rc;
}
