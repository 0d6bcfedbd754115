/*
 * space.c - a service's experiments paused for want of space.
 *
 * A full file system (the store's, or the runs folder's: blocks, inodes or
 * a user's quota) must not stop a service that every user shares, nor stop
 * another user's experiment: under relish serve a write that fails for
 * want of space (store_err_no_space: SQLite's "database or disk is full",
 * ENOSPC or EDQUOT making a segment's folder) pauses the one experiment it
 * concerns instead of ending the loop (live__fatal, which relish run keeps:
 * its user runs it again).
 *
 * Pausing reuses what a restart does, so that nothing new has to be right:
 * the experiment's running segments are stopped and nothing more of it is
 * written (the store keeps them "running"), and once none is left it leaves
 * the driver whole (engine, trials, core requests) and waits in d->held.
 * Every tick a held experiment whose time has come is resumed from the
 * store exactly as a starting service resumes it (live_resume_stored,
 * recover.c: its unfinished segments are lost and re-run from their
 * checkpoints, the metric lines they printed salvaged from their logs),
 * once both the runs folder and the database's folder have
 * LIVE_SPACE_FREE_MIN bytes and LIVE_SPACE_INODES_MIN inodes free; a resume
 * that fails for want of space again waits twice as long, up to
 * LIVE_SPACE_RETRY_MAX_S.  A held experiment can be cancelled (live_cancel)
 * and is resumed by the next start when the service stops meanwhile.
 *
 * What the service cannot do is tell whose writes filled a shared file
 * system: every experiment that needs space then pauses, and they resume
 * once the admin has freed it (docs/serve.md, "Security model": a file
 * system or quota of its own for runs/).
 */
#include "live/live_int.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#define LIVE_SPACE_RETRY_MIN_S 2.0
#define LIVE_SPACE_RETRY_MAX_S 60.0
#define LIVE_SPACE_FREE_MIN (16ull << 20) /* bytes free before a resume */
#define LIVE_SPACE_INODES_MIN 256        /* inodes free before a resume */

static void tell_paused(live *d, int64_t id, int paused)
{
	if (d->opt.on_paused)
		d->opt.on_paused(d->opt.on_paused_ctx, id, paused);
}

int live__no_space(const live *d, const rl_err *err)
{
	return d->opt.service && store_err_no_space(err);
}

void live__store_failed(live *d, live_exp *x, const rl_err *err)
{
	if (x && live__no_space(d, err)) {
		live__exp_suspend(d, x, err);
		return;
	}
	live__fatal(d, err);
}

void live__exp_suspend(live *d, live_exp *x, const rl_err *err)
{
	if (x->suspended || x->cancelled || d->fatal)
		return;
	x->suspended = 1;
	x->stalled = 1;
	tell_paused(d, x->id, 1);
	char msg[RL_ERR_MSG_MAX + 200];
	snprintf(msg, sizeof msg, "paused for want of space: %s; its running segments stop and it "
		 "resumes from its checkpoints once space is free", err->msg);
	live__progress_line(d, "%s: %s", x->sp->name, msg);
	/* Best effort: the store may be what is full. */
	store_event_append(d->st, live__now(d), x->id, 0, 0, "experiment.paused", msg, NULL, NULL);
	live__exp_stop_segments(d, x);
}

/* Free space at path (its file system): enough to resume? */
static int space_ok(const char *path)
{
	struct statvfs v;
	if (statvfs(path, &v) != 0)
		return 0;
	if ((unsigned long long)v.f_bavail * v.f_frsize < LIVE_SPACE_FREE_MIN)
		return 0;
	return v.f_files == 0 || v.f_favail >= LIVE_SPACE_INODES_MIN;
}

static int spaces_ok(const live *d)
{
	char db[PATH_MAX];
	snprintf(db, sizeof db, "%s", d->db_path);
	return space_ok(d->runs_dir) && space_ok(dirname(db));
}

/* x has stopped: it leaves the driver and waits in d->held. */
static void hold(live *d, live_exp *x)
{
	live_held *v = realloc(d->held, (d->n_held + 1) * sizeof *v);
	if (!v) {
		/* Not held: it stays "running" in the store, and the next
		 * start resumes it. */
		live__progress_line(d, "%s: out of memory holding it; it resumes at the next start",
				   x->sp->name);
		tell_paused(d, x->id, 0);
		live__exp_remove(d, x);
		return;
	}
	d->held = v;
	v[d->n_held++] = (live_held){.id = x->id, .owner = x->owner,
				     .retry_at = live__mono(d) + LIVE_SPACE_RETRY_MIN_S,
				     .wait_s = LIVE_SPACE_RETRY_MIN_S};
	live__exp_remove(d, x);
}

static void held_drop(live *d, size_t i)
{
	tell_paused(d, d->held[i].id, 0);
	memmove(&d->held[i], &d->held[i + 1], (d->n_held - i - 1) * sizeof *d->held);
	d->n_held--;
}

int live_hold_stored(live *d, const store_experiment *e, const live_owner *ow, rl_err *err)
{
	live_held *v = realloc(d->held, (d->n_held + 1) * sizeof *v);
	if (!v)
		return rl_err_set(err, RL_ENOMEM, "holding experiment %s", e->name);
	d->held = v;
	v[d->n_held++] = (live_held){.id = e->id, .owner = *ow,
				     .retry_at = LIVE_SPACE_RETRY_MIN_S,
				     .wait_s = LIVE_SPACE_RETRY_MIN_S};
	tell_paused(d, e->id, 1);
	return 0;
}

/* Resume held experiment i from the store: 1 resumed or dropped, 0 it
 * waits on. */
static int resume_held(live *d, size_t i, double now)
{
	live_held *h = &d->held[i];
	store_experiment e;
	rl_err err;
	rl_err_clear(&err);
	int rc = store_experiment_get(d->st, h->id, &e, &err);
	if (rc == 0 && e.status != EXP_RUNNING) {
		store_experiment_fini(&e);
		held_drop(d, i);
		return 1;
	}
	if (rc == 0) {
		live_owner ow = h->owner;
		/* (Admitted when it was submitted or when this service
		 * started; a grant taken out of allow: since then is checked
		 * at the next start.) */
		rc = live_resume_stored(d, &e, &ow, NULL, NULL, &err);
		if (rc == 0) {
			live__progress_line(d, "%s: space is free again: resumed", e.name);
			store_event_append(d->st, live__now(d), e.id, 0, 0, "experiment.resumed",
					   "space is free again: resumed from its checkpoints", NULL,
					   NULL);
		}
		store_experiment_fini(&e);
	}
	if (rc < 0 && store_err_no_space(&err)) {
		h->wait_s = fmin(h->wait_s * 2, LIVE_SPACE_RETRY_MAX_S);
		h->retry_at = now + h->wait_s;
		return 0;
	}
	if (rc < 0)
		live__progress_line(d, "experiment %lld could not be resumed: %s (the next start tries "
				   "again)", (long long)h->id, err.msg);
	held_drop(d, i);
	live__kick(d);
	return 1;
}

void live__space_tick(live *d)
{
	for (size_t i = 0; i < d->n_exps;) {
		live_exp *x = d->exps[i];
		if (x->suspended && x->n_active == 0) {
			hold(d, x);
			continue;
		}
		i++;
	}
	if (!d->n_held || d->stopping || d->fatal)
		return;
	double now = live__mono(d);
	int checked = 0, ok = 0;
	for (size_t i = 0; i < d->n_held;) {
		if (d->held[i].retry_at > now) {
			i++;
			continue;
		}
		if (!checked) {
			checked = 1;
			ok = spaces_ok(d);
		}
		if (!ok) {
			d->held[i].retry_at = now + LIVE_SPACE_RETRY_MIN_S;
			i++;
			continue;
		}
		if (!resume_held(d, i, now))
			i++;
	}
}

int live__held_cancel(live *d, int64_t id, const char *who, rl_err *err)
{
	for (size_t i = 0; i < d->n_held; i++) {
		if (d->held[i].id != id)
			continue;
		double now = live__now(d);
		char msg[200];
		snprintf(msg, sizeof msg, "cancelled by %s while paused for want of space",
			 who && *who ? who : "unknown");
		int rc = store_begin(d->st, err);
		if (rc == 0 &&
		    (rc = store_experiment_set_status(d->st, id, EXP_CANCELLED, now, err)) == 0 &&
		    (rc = store_event_append(d->st, now, id, 0, 0, "experiment.cancelled", msg, NULL,
					     err)) == 0)
			rc = store_commit(d->st, err);
		if (rc < 0) {
			store_rollback(d->st);
			if (store_err_no_space(err))
				rl_err_prefix(err, "experiment %lld is paused for want of space and its "
					      "cancellation cannot be written either (free space, or stop "
					      "the service and use relish cancel --db)", (long long)id);
			return rc;
		}
		live__progress_line(d, "experiment %lld: %s", (long long)id, msg);
		held_drop(d, i);
		return 1;
	}
	return 0;
}

size_t live_held_count(const live *d)
{
	return d->n_held;
}
