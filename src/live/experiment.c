/*
 * experiment.c - an experiment's coming and going in the live driver: added
 * (a new one created in the store, an existing one resumed, a changed spec
 * started anew), given to its executor backend, finished, removed, and what
 * relish run prints at the end about each.  Split from driver.c.
 */
#include "live/live_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

live_trial *live__trial_slot(live_exp *x, uint64_t idx, rl_err *err)
{
	if (idx >= x->cap_trials) {
		size_t cap = x->cap_trials ? x->cap_trials : 64;
		while (cap <= idx)
			cap *= 2;
		live_trial *t = realloc(x->trials, cap * sizeof *t);
		if (!t) {
			rl_err_set(err, RL_ENOMEM, "trial table");
			return NULL;
		}
		memset(t + x->cap_trials, 0, (cap - x->cap_trials) * sizeof *t);
		x->trials = t;
		x->cap_trials = cap;
	}
	if (idx >= x->n_trials)
		x->n_trials = idx + 1;
	return &x->trials[idx];
}

void live__experiment_finish(live *d, live_exp *x)
{
	rl_err err = {0};
	double now = live__now(d);
	x->done = 1;
	size_t c[TRIAL_N_STATES];
	engine_counts(x->eng, c);
	char fs[1200], msg[1400];
	live__failure_summary(d, x, fs, sizeof fs);
	snprintf(msg, sizeof msg, "done: %zu trials, %zu completed, %zu stopped, %zu failed%s%s",
		 (size_t)engine_n_trials(x->eng), c[TRIAL_COMPLETED], c[TRIAL_STOPPED],
		 c[TRIAL_FAILED], fs[0] ? ", " : "", fs);
	/* The line `relish run` prints is the event's message, for a
	 * service's submitter to read. */
	if (store_experiment_set_status(d->st, x->id, EXP_DONE, now, &err) < 0 ||
	    store_event_append(d->st, now, x->id, 0, 0, "experiment.done", msg, NULL, &err) < 0) {
		x->done = 0; /* a paused one finishes when resumed */
		live__store_failed(d, x, &err);
		return;
	}
	live__progress_line(d, "%s: %s", x->sp->name, msg);
}

void live__exp_free(live_exp *x)
{
	if (!x)
		return;
	live__backend_detach(x->d, x);
	contract_strv_free(x->user_env);
	engine_free(x->eng);
	spec_free(x->sp);
	free(x->trials);
	free(x->dir);
	free(x);
}

/* The spec as JSON without its file name, for "is this the same experiment". */
static char *spec_identity(spec *sp)
{
	char *src = sp->source;
	sp->source = NULL;
	char *j = spec_to_json(sp);
	sp->source = src;
	return j;
}

/*
 * The stored experiment se has another spec (changed), or --restart asks to
 * forget it: delete it from the store, so the caller creates it anew.  A
 * changed spec is taken without --restart only while no trial has
 * completed a segment: then no result depends on the old spec (a wrong
 * command fixed after the first failures is the usual case, and what the
 * failure messages advise).  Otherwise RL_EINVAL, naming --restart.
 */
static int start_anew(live *d, const spec *sp, const store_experiment *se, int changed,
		      rl_err *err)
{
	store_trial *tv = NULL;
	size_t nt = 0, done = 0;
	int rc = store_trial_list(d->st, se->id, 0, &tv, &nt, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; i < nt; i++)
		done += tv[i].resource_done > 0;
	store_trials_free(tv, nt);
	const char *src = sp->source ? sp->source : sp->name;
	if (changed && done && !d->opt.restart)
		return rl_err_set(err, RL_EINVAL,
				  "%s: experiment '%s' already exists in %s with a different spec, "
				  "and %zu of its trials completed segments under the old one; add "
				  "--restart to discard them and start anew, or use another name or "
				  "another --db", src, sp->name, d->db_path, done);
	if ((rc = store_experiment_delete(d->st, se->id, err)) < 0)
		return rc;
	if (!d->opt.quiet)
		fprintf(d->out, "%s: %s: %zu earlier trial%s discarded, starting anew\n", sp->name,
			d->opt.restart ? "--restart"
				       : "the spec changed and no segment had completed",
			nt, nt == 1 ? "" : "s");
	return 0;
}

int live_add_experiment(live *d, spec *sp, rl_err *err)
{
	live_owner self;
	live__owner_self(&self);
	return live__add_owned(d, sp, &self, 0, NULL, NULL, err);
}

int live__add_owned(live *d, spec *sp, const live_owner *ow, int must_be_new,
		   const char *submission, int64_t *id_out, rl_err *err)
{
	int rc;
	live_exp *x = NULL;
	char *ident = NULL;
	store_experiment se = {0};
	int found = 0;
	uv_update_time(&d->loop); /* a turn of its own, before the loop runs */
	if ((rc = spec_default_executor(sp, d->opt.default_executor, err)) < 0)
		goto fail;
	if (sp->trial.resources.gpus > 0 && !d->n_gpus && d->site) {
		rc = rl_err_set(err, RL_ESPEC,
				"%s: trial.resources.gpus is %g but %s has no GPU relish can use (%s)",
				sp->source ? sp->source : sp->name, sp->trial.resources.gpus,
				d->site->where,
				d->devs->notice[0] ? d->devs->notice : "its nodes list none");
		goto fail;
	}
	if (sp->trial.resources.gpus > 0 && !d->n_gpus) {
		rc = rl_err_set(err, RL_ESPEC,
				"%s: trial.resources.gpus is %g but relish sees no GPU (%s); "
				"use a devices file (--devices) or a machine with GPUs",
				sp->source ? sp->source : sp->name, sp->trial.resources.gpus,
				d->devs->notice[0] ? d->devs->notice : d->devs->source);
		goto fail;
	}
	for (size_t i = 0; i < d->n_exps; i++)
		if (strcmp(d->exps[i]->sp->name, sp->name) == 0 && d->exps[i]->owner.uid == ow->uid &&
		    !must_be_new) {
			/* (a service's: the store's row, checked below, says more) */
			rc = rl_err_set(err, RL_EINVAL, "experiment '%s' given twice", sp->name);
			goto fail;
		}
	if (!(ident = spec_identity(sp))) {
		rc = rl_err_set(err, RL_ENOMEM, "spec");
		goto fail;
	}
	/* Names are the owner's: another user's experiment of the same name
	 * is another experiment. */
	rc = store_experiment_find_owned(d->st, sp->name, (int64_t)ow->uid, &se, err);
	if (rc == 0 && must_be_new) {
		rc = rl_err_set(err, RL_EEXISTS,
				"%s: you have an experiment named '%s' already (id %lld, %s); submit "
				"this one under another name (relish submit --name NEW), or remove "
				"that one (relish delete %s%s)",
				sp->source ? sp->source : sp->name, sp->name, (long long)se.id,
				exp_status_name(se.status), sp->name,
				se.status == EXP_RUNNING ? ", after relish cancel" : "");
		goto fail;
	}
	if (rc == 0) {
		found = 1;
		int changed = !se.spec_text || strcmp(se.spec_text, ident) != 0;
		if (changed || d->opt.restart) {
			if ((rc = start_anew(d, sp, &se, changed, err)) < 0)
				goto fail;
			store_experiment_fini(&se);
			found = 0;
		}
	} else if (rc != RL_ENOTFOUND) {
		goto fail;
	}
	rl_err_clear(err);
	if (d->opt.max_concurrent > 0)
		sp->search.max_concurrent = d->opt.max_concurrent;
	if (!d->core && (rc = live__core_create(d, sp, err)) < 0)
		goto fail;
	x = calloc(1, sizeof *x);
	live_exp **v = realloc(d->exps, (d->n_exps + 1) * sizeof *v);
	/* A grown table is kept even when x failed: once realloc has moved the
	 * block the old pointer is gone (freeing v here left d->exps dangling). */
	if (v)
		d->exps = v;
	if (!x || !v) {
		rc = rl_err_set(err, RL_ENOMEM, "%s: out of memory adding the experiment",
				sp->name);
		goto fail;
	}
	x->d = d;
	x->sp = sp;
	sp = NULL;
	x->owner = *ow;
	if (ow->run_as && !(x->user_env = live__owner_env(ow))) {
		rc = rl_err_set(err, RL_ENOMEM, "%s: the trials' environment", x->sp->name);
		goto fail;
	}
	x->core_user = live__core_user(d, ow->uid);
	if (d->opt.service)
		live__user_apply(d, ow->uid);
	x->run_as = (exec_user){.uid = ow->uid, .gid = ow->gid, .n_groups = (size_t)ow->n_groups,
				.groups = x->owner.groups, .helper = d->runas_helper,
				.max_processes = d->opt.trial_processes};
	x->key = ++d->last_exp_key; /* not n_exps + 1: experiments may leave (live_delete) */
	/* The experiment's folder is named by its name and creation time, so
	 * a new database (or a deleted and recreated one) in the same place
	 * never resumes from another experiment's checkpoints; a resumed
	 * experiment finds its own folder again from the stored time. */
	double created = found ? se.created_at : live__now(d);
	for (;;) {
		if (asprintf(&x->dir, "%s/%s.%lld", d->runs_dir, x->sp->name,
			     (long long)llround(created * 1000)) < 0) {
			x->dir = NULL;
			rc = rl_err_set(err, RL_ENOMEM, "experiment");
			goto fail;
		}
		/* Two users' experiments of one name submitted in one turn of
		 * the loop (one clock reading): the second a millisecond later. */
		struct stat sb;
		if (found || stat(x->dir, &sb) != 0)
			break;
		free(x->dir);
		x->dir = NULL;
		created += 0.001;
	}
	if ((rc = live__make_dirs(x->dir, err)) < 0) {
		/* A service takes it on a full disk all the same: the folder
		 * is made with its first segment's, and it waits for space
		 * then (space.c). */
		if (!live__no_space(d, err))
			goto fail;
		rl_err_clear(err);
	}
	if ((rc = engine_new(x->sp, &x->eng, err)) < 0 || (rc = live__backend_attach(d, x, err)) < 0)
		goto fail;
	if (found) {
		x->id = se.id;
		x->resumed = 1;
		if ((rc = live__resume(d, x, &se, err)) < 0)
			goto fail;
	} else {
		store_experiment ne = {
			.name = x->sp->name, .spec_text = ident, .spec_path = x->sp->source,
			.created_at = created, .objective_metric = x->sp->objective.metric,
			.mode = (char *)spec_mode_name(x->sp->objective.mode),
			.owner_uid = (int64_t)ow->uid, .owner = (char *)ow->name,
			.submission = (char *)submission,
		};
		/* Several objectives: their list with the experiment, in one
		 * transaction (an experiment of one writes none). */
		size_t no = spec_n_objectives(x->sp);
		store_objective obj[SPEC_OBJECTIVES_MAX];
		for (size_t k = 0; k < no && no > 1; k++) {
			spec_objective o = spec_objective_at(x->sp, k);
			obj[k] = (store_objective){o.metric, (char *)spec_mode_name(o.mode)};
		}
		if (no == 1) {
			if ((rc = store_experiment_create(d->st, &ne, &x->id, err)) < 0)
				goto fail;
		} else if ((rc = store_begin(d->st, err)) < 0) {
			goto fail;
		} else if ((rc = store_experiment_create(d->st, &ne, &x->id, err)) < 0 ||
			   (rc = store_objectives_set(d->st, x->id, obj, no, err)) < 0 ||
			   (rc = store_commit(d->st, err)) < 0) {
			store_rollback(d->st);
			goto fail;
		}
	}
	d->exps[d->n_exps++] = x;
	if (id_out)
		*id_out = x->id;
	store_experiment_fini(&se);
	free(ident);
	return 0;
fail:
	store_experiment_fini(&se);
	free(ident);
	live__exp_free(x);
	spec_free(sp);
	return rc;
}

void live__exps_retire(live *d)
{
	for (size_t i = 0; i < d->n_exps;) {
		live_exp *x = d->exps[i];
		size_t left = 0;
		for (const live_seg *g = d->segs; g && x->done; g = g->next)
			left += g->x == x;
		if (!x->done || left) {
			i++;
			continue;
		}
		/* Its trials' records in the core go with it (ended trials
		 * left already; these are the ones it stopped short). */
		for (size_t k = 0; k < x->n_trials && d->core; k++)
			if (x->trials[k].store_id > 0)
				sched_job_forget(d->core, (uint64_t)x->trials[k].store_id);
		live__exp_remove(d, x); /* (moves the next one to i) */
	}
}

void live__exp_remove(live *d, live_exp *x)
{
	for (size_t i = 0; i < d->n_exps; i++)
		if (d->exps[i] == x) {
			memmove(&d->exps[i], &d->exps[i + 1], (d->n_exps - i - 1) * sizeof *d->exps);
			d->n_exps--;
			break;
		}
	live__exp_free(x);
}

size_t live_experiment_count(const live *d)
{
	return d->n_exps;
}

size_t live_segment_count(const live *d)
{
	size_t n = 0;
	for (const live_seg *g = d->segs; g; g = g->next)
		n++;
	return n;
}

int live_is_stopping(const live *d)
{
	return d->stopping || d->finished || d->stop_calls > 0;
}

int64_t live_experiment_id(const live *d, size_t i)
{
	return i < d->n_exps ? d->exps[i]->id : 0;
}

const char *live_experiment_name(const live *d, size_t i)
{
	return i < d->n_exps ? d->exps[i]->sp->name : NULL;
}

int live_experiment_has_value(const live *d, size_t i)
{
	if (i >= d->n_exps)
		return 0;
	store_trial t;
	if (store_trial_best(d->st, d->exps[i]->id, &t, NULL) < 0)
		return 0;
	store_trial_fini(&t);
	return 1;
}

void live_experiment_outcome(const live *d, size_t i, char *buf, size_t n)
{
	buf[0] = '\0';
	if (i >= d->n_exps)
		return;
	const live_exp *x = d->exps[i];
	char fs[1200];
	size_t failed = live__failure_summary(d, x, fs, sizeof fs);
	uint64_t nt = engine_n_trials(x->eng);
	if (failed)
		snprintf(buf, n, "%zu of %llu trials failed, %s", failed, (unsigned long long)nt, fs);
	else if (nt)
		snprintf(buf, n, "%llu trials, none failed", (unsigned long long)nt);
	else
		snprintf(buf, n, "no trial was started");
}
