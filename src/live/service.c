/*
 * service.c - the live driver's service mode, behind `relish serve`
 * (src/serve/): experiments submitted and cancelled while the loop runs,
 * experiments resumed from the store when the service starts, a graceful
 * stop with a grace period, owners (trials run as their submitter), and
 * the read views the HTTP API shows (devices, running segments).
 *
 * Everything here runs on the loop thread, between the driver's own
 * callbacks (the API is driven by the same loop), so it sees the driver's
 * state whole and never races a launch.  The rules of the loop stay the
 * driver's: each change is committed to the store before it is acted on
 * (a submission is acknowledged only after its row is committed; a
 * cancellation is recorded before any segment is stopped).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"
#include "common/procid.h"
#include "exec/runas.h"
#include "live/live_int.h"

/* ---- owners ---------------------------------------------------------------- */

static void owner_fill(live_owner *o, const struct passwd *pw, uid_t uid, gid_t gid)
{
	memset(o, 0, sizeof *o);
	o->uid = uid;
	o->gid = gid;
	if (pw)
		snprintf(o->name, sizeof o->name, "%s", pw->pw_name);
	else
		snprintf(o->name, sizeof o->name, "uid%u", (unsigned)uid);
}

void live__owner_self(live_owner *out)
{
	uid_t uid = getuid();
	struct passwd pwb, *pw = NULL;
	char buf[4096];
	getpwuid_r(uid, &pwb, buf, sizeof buf, &pw);
	owner_fill(out, pw, uid, getgid());
}

char **live__owner_env(const live_owner *ow)
{
	static const char *const keep[] = {"PATH", "LANG", "LC_ALL", "TZ"};
	struct passwd pwb, *pw = NULL;
	char buf[4096];
	getpwuid_r(ow->uid, &pwb, buf, sizeof buf, &pw);
	char **v = calloc(16, sizeof *v);
	if (!v)
		return NULL;
	size_t n = 0;
	int oom = 0;
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
		const char *val = getenv(keep[i]);
		if (val && asprintf(&v[n], "%s=%s", keep[i], val) >= 0)
			n++;
		else if (val)
			oom = 1;
	}
	const char *home = pw && pw->pw_dir ? pw->pw_dir : "/";
	const char *shell = pw && pw->pw_shell ? pw->pw_shell : "/bin/sh";
	if (asprintf(&v[n], "HOME=%s", home) >= 0)
		n++;
	else
		oom = 1;
	if (asprintf(&v[n], "USER=%s", ow->name) >= 0)
		n++;
	else
		oom = 1;
	if (asprintf(&v[n], "LOGNAME=%s", ow->name) >= 0)
		n++;
	else
		oom = 1;
	if (asprintf(&v[n], "SHELL=%s", shell) >= 0)
		n++;
	else
		oom = 1;
	if (oom) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return NULL;
	}
	return v;
}

int live_owner_of_uid(uid_t uid, live_owner *out, rl_err *err)
{
	struct passwd pwb, *pw = NULL;
	char buf[4096];
	int e = getpwuid_r(uid, &pwb, buf, sizeof buf, &pw);
	if (!pw)
		return rl_err_sys(err, RL_ENOTFOUND, e, "uid %u is not in the password database",
				  (unsigned)uid);
	live_owner o;
	owner_fill(&o, pw, uid, pw->pw_gid);
	int n = LIVE_OWNER_GROUPS_MAX;
	if (getgrouplist(pw->pw_name, pw->pw_gid, o.groups, &n) < 0)
		return rl_err_set(err, RL_EINVAL, "user %s is in more than %d groups", pw->pw_name,
				  LIVE_OWNER_GROUPS_MAX);
	o.n_groups = n;
	*out = o;
	return 0;
}

/* ---- folders ---------------------------------------------------------------- */

/* mkdir that accepts an existing folder (not a symlink or file). */
static int dir_make(const char *path, mode_t mode, rl_err *err)
{
	if (mkdir(path, mode) == 0)
		return 1;
	if (errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", path);
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return rl_err_set(err, RL_EIO, "%s exists and is not a folder", path);
	return 0;
}

/* mkdir -p of the parents relish owns (0755). */
static int dirs_make(const char *path, rl_err *err)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf)
		return rl_err_set(err, RL_EINVAL, "path too long: %s", path);
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int rc = dir_make(buf, 0755, err);
		if (rc < 0)
			return rc;
		*p = '/';
	}
	int rc = dir_make(buf, 0755, err);
	return rc < 0 ? rc : 0;
}

/*
 * The trial folder (logs) stays relish's and the checkpoint folder inside
 * it becomes the owner's.  Because the owner cannot write the trial folder,
 * they cannot swap the checkpoint folder or a log file for a link that
 * would make relish write elsewhere; every owner change goes through a
 * descriptor opened without following links.
 */
int live__segment_dirs(live *d, const live_exp *x, const char *trial_dir, const char *ckpt,
		      const char *log_path, rl_err *err)
{
	(void)d;
	int rc = dirs_make(trial_dir, err);
	if (rc < 0)
		return rc;
	if (!x->owner.run_as)
		return dirs_make(ckpt, err);
	if ((rc = dir_make(ckpt, 0700, err)) < 0)
		return rc;
	int fd = open(ckpt, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "opening %s", ckpt);
	struct stat st;
	if (fstat(fd, &st) == 0 && (st.st_uid != x->owner.uid || st.st_gid != x->owner.gid) &&
	    fchown(fd, x->owner.uid, x->owner.gid) != 0) {
		int e = errno;
		close(fd);
		return rl_err_sys(err, RL_EIO, e, "giving %s to %s", ckpt, x->owner.name);
	}
	close(fd);
	/* 0600: a group such as "users" holds others too, whose logs are
	 * not theirs to read */
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "creating log %s", log_path);
	rc = fchmod(fd, 0600) == 0 && fchown(fd, x->owner.uid, x->owner.gid) == 0
		     ? 0 : rl_err_sys(err, RL_EIO, errno, "giving %s to %s", log_path, x->owner.name);
	close(fd);
	return rc;
}

/* ---- submit, resume, cancel --------------------------------------------------- */

static live_exp *exp_by_id(const live *d, int64_t id)
{
	for (size_t i = 0; i < d->n_exps; i++)
		if (d->exps[i]->id == id)
			return d->exps[i];
	return NULL;
}

static const live_user_policy *user_policy(const live *d, uid_t uid);

int live_submit(live *d, spec *sp, const live_owner *ow, const char *submission, int64_t *id,
		rl_err *err)
{
	if (d->stopping) {
		spec_free(sp);
		return rl_err_set(err, RL_EINTERRUPTED, "the service is stopping; submit again "
				  "once it runs");
	}
	int max = user_policy(d, ow->uid)->max_experiments;
	if (max > 0) {
		int running = 0;
		for (size_t i = 0; i < d->n_exps; i++)
			running += d->exps[i]->owner.uid == ow->uid && !d->exps[i]->done &&
				   !d->exps[i]->cancelled;
		for (size_t i = 0; i < d->n_held; i++)
			running += d->held[i].owner.uid == ow->uid;
		if (running >= max) {
			spec_free(sp);
			return rl_err_set(err, RL_EBUSY, "%s runs %d experiments, the most the service "
					  "allows one user at once (users.NAME.experiments in its config); "
					  "submit again when one has ended, or cancel one", ow->name,
					  running);
		}
	}
	int rc = live__add_owned(d, sp, ow, 1, submission, id, err);
	if (rc < 0)
		return rc;
	live__kick(d);
	return 0;
}

/* ${NAME} in trial.mounts: what the submission declares. */
static const char *submission_var(const char *name, void *ctx)
{
	return json_string_value(json_object_get(ctx, name));
}

/* The mounts' host paths as ow sees them (spec_origin left them as
 * written). */
static int mounts_resolve(spec *sp, const live_owner *ow, rl_err *err)
{
	size_t n = sp->trial.n_mounts;
	if (!n)
		return 0;
	const char **paths = calloc(n, sizeof *paths);
	char **res = calloc(n, sizeof *res);
	int *errs = calloc(n, sizeof *errs);
	int rc = paths && res && errs ? 0 : rl_err_set(err, RL_ENOMEM, "resolving mounts");
	for (size_t i = 0; rc == 0 && i < n; i++)
		paths[i] = sp->trial.mounts[i].host;
	if (rc == 0 && ow->run_as) {
		exec_user u = {.uid = ow->uid, .gid = ow->gid, .n_groups = (size_t)ow->n_groups,
			       .groups = ow->groups};
		rc = runas_realpath(&u, paths, n, res, errs, err);
	} else {
		for (size_t i = 0; rc == 0 && i < n; i++)
			if (!(res[i] = realpath(paths[i], NULL)))
				errs[i] = errno;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		spec_mount *m = &sp->trial.mounts[i];
		if (!res[i] && errs[i] != ENOENT) {
			rc = rl_err_set(err, RL_EPERM, "%s: trial.mounts[%zu]: %s: %s cannot reach it "
					"(%s)", sp->source ? sp->source : sp->name, i, m->host,
					ow->name, strerror(errs[i]));
			break;
		}
		if (!res[i])
			continue; /* missing: the engine names it when it runs */
		if (!strcmp(m->target, m->host)) {
			char *t = strdup(res[i]);
			if (!t) {
				rc = rl_err_set(err, RL_ENOMEM, "resolving mounts");
				break;
			}
			free(m->target);
			m->target = t;
		}
		free(m->host);
		m->host = res[i];
		res[i] = NULL;
	}
	for (size_t i = 0; rc == 0 && i < n; i++)
		for (size_t j = 0; j < i && rc == 0; j++)
			if (!strcmp(sp->trial.mounts[i].target, sp->trial.mounts[j].target))
				rc = rl_err_set(err, RL_ESPEC, "%s: trial.mounts[%zu]: expected each "
						"mount target once, got %s again (item %zu mounts "
						"there)", sp->source ? sp->source : sp->name, i,
						sp->trial.mounts[i].target, j);
	for (size_t i = 0; res && i < n; i++)
		free(res[i]);
	free(paths);
	free(res);
	free(errs);
	return rc;
}

int live_submission_parse(const char *submission, const live_owner *ow, spec **out,
			  rl_err *err)
{
	json_error_t je;
	json_t *j = json_loads(submission, 0, &je);
	const char *text = json_string_value(json_object_get(j, "spec"));
	const char *name = json_string_value(json_object_get(j, "name"));
	const char *dir = json_string_value(json_object_get(j, "dir"));
	const char *format = json_string_value(json_object_get(j, "format"));
	/* relish submit --name: the experiment's name instead of the spec's */
	const char *rename = json_string_value(json_object_get(j, "experiment"));
	json_t *env = json_object_get(j, "env");
	spec_origin origin = {.var = json_is_object(env) ? submission_var : NULL, .ctx = env};
	int rc;
	spec *sp = NULL;
	if (!text || !name || !dir)
		rc = rl_err_set(err, RL_ESPEC, "a submission needs \"spec\", \"name\" and \"dir\"");
	else
		rc = spec_parse_text_from(text, strlen(text), name, dir,
					  format && !strcmp(format, "json"), &origin, &sp, err);
	if (rc == 0 && rename)
		rc = spec_rename(sp, rename, err);
	if (rc == 0)
		rc = mounts_resolve(sp, ow, err);
	if (rc < 0)
		spec_free(sp);
	else
		*out = sp;
	json_decref(j);
	return rc;
}

int live_resume_stored(live *d, const store_experiment *e, const live_owner *ow,
		       int (*admit)(void *ctx, const live_owner *ow, const spec *sp, rl_err *err),
		       void *admit_ctx, rl_err *err)
{
	if (!e->submission)
		return rl_err_set(err, RL_ESPEC, "experiment %s was not submitted to a service (it "
				  "has no stored submission); resume it with relish run", e->name);
	spec *sp = NULL;
	int rc = live_submission_parse(e->submission, ow, &sp, err);
	if (rc < 0)
		return rl_err_prefix(err, "experiment %s: its stored submission", e->name);
	if (admit && (rc = admit(admit_ctx, ow, sp, err)) < 0) {
		spec_free(sp);
		return rl_err_prefix(err, "experiment %s is not resumed", e->name);
	}
	return live__add_owned(d, sp, ow, 0, NULL, NULL, err);
}

int live_cancel(live *d, int64_t id, const char *who, rl_err *err)
{
	live_exp *x = exp_by_id(d, id);
	if (!x) {
		int rc = live__held_cancel(d, id, who, err);
		if (rc != 0)
			return rc < 0 ? rc : 0;
		return rl_err_set(err, RL_ENOTFOUND, "experiment %lld is not running",
				  (long long)id);
	}
	if (x->done || x->cancelled)
		return rl_err_set(err, RL_EEXISTS, "experiment %s is finished already", x->sp->name);
	double now = live__now(d);
	char msg[200];
	snprintf(msg, sizeof msg, "cancelled by %s", who && *who ? who : "unknown");
	int rc = store_begin(d->st, err);
	if (rc == 0 && (rc = store_experiment_set_status(d->st, x->id, EXP_CANCELLED, now, err)) == 0 &&
	    (rc = store_event_append(d->st, now, x->id, 0, 0, "experiment.cancelled", msg, NULL,
				     err)) == 0)
		rc = store_commit(d->st, err);
	if (rc < 0) {
		store_rollback(d->st);
		return rc;
	}
	x->cancelled = 1;
	x->stalled = 1;
	live__progress_line(d, "%s: %s", x->sp->name, msg);
	live__exp_stop_segments(d, x);
	/* Parked warm processes of its trials go too. */
	if (x->sp->trial.mode == TRIAL_MODE_WARM)
		for (size_t i = 0; i < x->n_trials; i++) {
			char key[160];
			snprintf(key, sizeof key, "%s/t%lld", x->sp->name,
				 (long long)x->trials[i].store_id);
			exec_release(live__exec(x), key);
		}
	live__check_end(d);
	return 0;
}

int live_delete(live *d, int64_t id, const char *who, rl_err *err)
{
	store_experiment e;
	int rc = store_experiment_get(d->st, id, &e, err);
	if (rc < 0)
		return rc;
	live_exp *x = exp_by_id(d, id);
	size_t left = 0;
	for (const live_seg *g = d->segs; g && x; g = g->next)
		left += g->x == x;
	char dir[PATH_MAX + 200];
	if (e.status == EXP_RUNNING)
		rc = rl_err_set(err, RL_EBUSY, "experiment %lld (%s) is running; cancel it first "
				"(relish cancel %lld), then remove it", (long long)id, e.name,
				(long long)id);
	else if (left)
		rc = rl_err_set(err, RL_EBUSY, "experiment %lld (%s): %zu of its segments are still "
				"stopping; remove it once they have", (long long)id, e.name, left);
	else if (x)
		snprintf(dir, sizeof dir, "%s", x->dir);
	else /* not in memory (finished before a restart): its folder's name */
		snprintf(dir, sizeof dir, "%s/%s.%lld", d->runs_dir, e.name,
			 (long long)llround(e.created_at * 1000));
	if (rc == 0 && (rc = store_experiment_delete(d->st, id, err)) == 0) {
		if (x)
			live__exp_remove(d, x);
		if (rl_remove_tree(dir) < 0)
			live__progress_line(d, "%s: removed experiment %lld, but not all of its folder "
					   "%s (%s)", e.name, (long long)id, dir, strerror(errno));
		else
			live__progress_line(d, "%s: experiment %lld removed by %s, with its folder %s",
					   e.name, (long long)id, who && *who ? who : "unknown", dir);
	}
	store_experiment_fini(&e);
	return rc;
}

/* ---- graceful stop ------------------------------------------------------------ */

/* Stop the segments still running: recorded as interrupted (re-run when
 * the service starts again); the loop ends when the last has gone. */
static void stop_running(live *d)
{
	for (live_seg *g = d->segs; g; g = g->next)
		if (g->es && !g->interrupted) {
			g->interrupted = 1;
			exec_cancel(live__exec(g->x), g->es);
		}
	live__check_end(d);
}

static void grace_cb(uv_timer_t *t)
{
	live *d = t->data;
	size_t n = 0;
	for (const live_seg *g = d->segs; g; g = g->next)
		n += g->es != NULL;
	live__progress_line(d, "grace period over: stopping %zu running segments", n);
	stop_running(d);
}

void live_stop(live *d, double grace_s)
{
	d->stop_calls++;
	if (d->stop_calls > 1) {
		/* Second request: no grace, and a third kills. */
		if (d->stop_calls > 2)
			for (live_seg *g = d->segs; g; g = g->next)
				if (g->es && g->pid > 0)
					procid_kill_group(g->pid, g->pid_start, SIGKILL);
		stop_running(d);
		return;
	}
	d->stopping = 1;
	double now = live__now(d);
	for (size_t i = 0; i < d->n_exps; i++) {
		live_exp *x = d->exps[i];
		if (x->done || x->cancelled)
			continue;
		store_event_append(d->st, now, x->id, 0, 0, "experiment.interrupted",
				   "the service stopped; it resumes when relish serve starts again",
				   NULL, NULL);
	}
	/* Queued segments are dropped (their trials re-run on resume). */
	live_seg *g = d->segs;
	while (g) {
		live_seg *next = g->next;
		if (!g->es && !g->placed) {
			sched_remove(d->core, g->sched_id);
			live__seg_unqueued(g);
			live__seg_unlink_free(d, g);
		}
		g = next;
	}
	if (!d->segs) {
		live__check_end(d);
		return;
	}
	if (grace_s <= 0) {
		stop_running(d);
		return;
	}
	if (d->handles_ready)
		uv_timer_start(&d->grace, grace_cb, (uint64_t)llround(grace_s * 1000.0), 0);
	live__check_end(d);
}

/* ---- views --------------------------------------------------------------------- */

uv_loop_t *live_loop(live *d)
{
	return &d->loop;
}

store *live_store(live *d)
{
	return d->st;
}

size_t live_device_count(const live *d)
{
	return d->devs ? d->devs->n : 0;
}

static int64_t seg_used_mib(const live *d, const live_seg *g)
{
	if (d->devs->dev[g->dev].info.is_gpu)
		return g->gpu_peak_mib > 0 ? (int64_t)g->gpu_peak_mib : -1;
	return g->rss_now > 0 ? (int64_t)(g->rss_now >> 20) : -1;
}

int live_device_get(const live *d, size_t i, live_device_view *out)
{
	if (!d->devs || i >= d->devs->n)
		return RL_ENOTFOUND;
	const sched_device_info *di = &d->devs->dev[i].info;
	live_device_view v;
	memset(&v, 0, sizeof v);
	snprintf(v.name, sizeof v.name, "%s", di->name);
	snprintf(v.uuid, sizeof v.uuid, "%s", di->uuid);
	v.is_gpu = di->is_gpu;
	v.mem_total_mib = di->mem_total_mib;
	v.compute_total = di->compute_total;
	v.mem_used_mib = -1;
	sched_device_state ds;
	if (d->core && sched_device_get(d->core, (int)i, &ds) == 0) {
		v.mem_reserved_mib = ds.mem_reserved_mib;
		v.compute_reserved = ds.compute_reserved;
		v.n_running = ds.n_running;
	}
	int64_t used = 0;
	int known = 0;
	for (const live_seg *g = d->segs; g; g = g->next) {
		if (!g->es || g->dev != (int)i)
			continue;
		int64_t m = seg_used_mib(d, g);
		if (m >= 0) {
			used += m;
			known = 1;
		}
	}
	if (known)
		v.mem_used_mib = used;
	*out = v;
	return 0;
}

size_t live_running(const live *d, live_running_seg *out, size_t max)
{
	size_t n = 0;
	for (const live_seg *g = d->segs; g; g = g->next) {
		if (!g->es)
			continue;
		if (n < max) {
			const live_exp *x = g->x;
			out[n] = (live_running_seg){
				.segment_id = g->store_id,
				.trial_id = x->trials[g->trial].store_id,
				.experiment_id = x->id,
				.experiment = x->sp->name,
				.owner = x->owner.name,
				.owner_uid = x->owner.uid,
				.device = (size_t)g->dev,
				.mem_reserved_mib = g->mem_mib,
				.compute = g->compute,
				.resource_from = g->from,
				.resource_to = g->to,
				/* unix time, as the API's times are: the
				 * launch was this long before the loop's now */
				.started_at = d->now_wall - (d->now_mono - g->started_at),
				.mem_used_mib = seg_used_mib(d, g),
				.pid = g->pid,
				.mean_util = live__seg_mean_util(g),
			};
		}
		n++;
	}
	return n;
}

size_t live_queued_count(const live *d, int64_t experiment_id)
{
	const live_exp *x = exp_by_id(d, experiment_id);
	return x ? x->n_queued : 0;
}

int live_is_active(const live *d, int64_t experiment_id)
{
	const live_exp *x = exp_by_id(d, experiment_id);
	return x && !x->done && !x->cancelled;
}

/* ---- users' shares and limits ------------------------------------------------ */

uint32_t live__core_user(const live *d, uid_t uid)
{
	return d->opt.service ? (uint32_t)uid + 1 : 0;
}

static uid_t uid_of_core_user(uint32_t user)
{
	return (uid_t)(user - 1);
}

static const live_user_policy *user_policy(const live *d, uid_t uid)
{
	for (size_t i = 0; i < d->n_user_rules; i++)
		if (d->user_rules[i].uid == uid)
			return &d->user_rules[i].p;
	return &d->user_default;
}

/* Tell the core uid's share and limits (the rule, else the default). */
void live__user_apply(live *d, uid_t uid)
{
	if (!d->core || !d->opt.service)
		return;
	const live_user_policy *p = user_policy(d, uid);
	uint32_t u = live__core_user(d, uid);
	sched_set_user_share(d->core, u, p->share > 0 ? p->share : 1);
	sched_user_limits lim = {.max_gpus = p->max_gpus, .max_mem_mib = p->max_mem_mib,
				 .max_segments = p->max_segments,
				 .max_host_mem_mib = p->max_host_mem_mib, .max_cpus = p->max_cpus};
	sched_set_user_limits(d->core, u, &lim);
}

struct usage_load {
	live *d;
	size_t bad;
};

static void usage_row(void *ctx, int64_t owner_uid, double started, double ended)
{
	struct usage_load *u = ctx;
	if (owner_uid < 0) {
		u->bad++;
		return;
	}
	live *d = u->d;
	uint32_t user = live__core_user(d, (uid_t)owner_uid);
	if (sched_user_add_service(d->core, user, live__mono_of(d, started), live__mono_of(d, ended),
				   1) < 0)
		u->bad++;
}

int live__service_usage_load(live *d, rl_err *err)
{
	/* Older than forty half-lives weighs less than 1e-12 of its time */
	double h = d->fair_half_life_s;
	double since = h > 0 && isfinite(h) ? live__now(d) - 40 * h : -INFINITY;
	struct usage_load u = {.d = d};
	int rc = store_owner_service(d->st, since, usage_row, &u, err);
	if (rc < 0)
		return rl_err_prefix(err, "the users' service so far");
	return 0;
}

/* Apply the rules to every user the core or the experiments know. */
static void users_apply_all(live *d)
{
	if (!d->core)
		return;
	uint32_t ids[1024];
	size_t n = sched_user_list(d->core, ids, 1024);
	for (size_t i = 0; i < n && i < 1024; i++)
		if (ids[i] > 0)
			live__user_apply(d, uid_of_core_user(ids[i]));
	for (size_t i = 0; i < d->n_exps; i++)
		live__user_apply(d, d->exps[i]->owner.uid);
	for (size_t i = 0; i < d->n_user_rules; i++)
		live__user_apply(d, d->user_rules[i].uid);
}

void live_set_trial_limits(live *d, double max_segment_s, uint64_t default_memory_mib,
			   unsigned trial_processes)
{
	d->opt.max_segment_s = max_segment_s;
	d->opt.default_memory_mib = default_memory_mib;
	d->opt.trial_processes = trial_processes;
}

void live_set_user_policy(live *d, uid_t uid, const live_user_policy *p)
{
	size_t i = 0;
	while (i < d->n_user_rules && d->user_rules[i].uid != uid)
		i++;
	if (i == d->n_user_rules) {
		struct live_user_rule *v = realloc(d->user_rules, (d->n_user_rules + 1) * sizeof *v);
		if (!v)
			return;
		d->user_rules = v;
		d->n_user_rules++;
	}
	d->user_rules[i] = (struct live_user_rule){.uid = uid, .p = *p};
	live__user_apply(d, uid);
}

void live_clear_user_policies(live *d)
{
	free(d->user_rules);
	d->user_rules = NULL;
	d->n_user_rules = 0;
}

void live_set_default_user_policy(live *d, const live_user_policy *p)
{
	d->user_default = *p;
	users_apply_all(d);
}

/* The view of uid in out[0..n), added when missing; NULL when full. */
static live_user_view *user_slot(const live *d, live_user_view *out, size_t *n, size_t max,
				 uid_t uid)
{
	for (size_t i = 0; i < *n && i < max; i++)
		if (out[i].uid == uid)
			return &out[i];
	size_t k = (*n)++;
	if (k >= max)
		return NULL;
	memset(&out[k], 0, sizeof out[k]);
	out[k].uid = uid;
	const char *name = NULL;
	for (size_t i = 0; i < d->n_exps && !name; i++)
		if (d->exps[i]->owner.uid == uid)
			name = d->exps[i]->owner.name;
	if (name) {
		snprintf(out[k].name, sizeof out[k].name, "%s", name);
	} else {
		live_owner o;
		if (live_owner_of_uid(uid, &o, NULL) == 0)
			snprintf(out[k].name, sizeof out[k].name, "%s", o.name);
		else
			snprintf(out[k].name, sizeof out[k].name, "uid%u", (unsigned)uid);
	}
	const live_user_policy *p = user_policy(d, uid);
	out[k].share = p->share > 0 ? p->share : 1;
	out[k].share_fraction = NAN;
	out[k].attained_s = 0;
	out[k].max_gpus = p->max_gpus;
	out[k].max_mem_mib = p->max_mem_mib;
	out[k].max_segments = p->max_segments;
	return &out[k];
}

/*
 * The core is the one source of shares, attained service and segment
 * counts (its read view, sched_user_get); the driver adds who the users
 * are and how many experiments each has running.
 */
size_t live_users(live *d, live_user_view *out, size_t max)
{
	size_t n = 0;
	double now = live__mono(d); /* the core's clock */
	if (d->core) {
		uint32_t ids[1024];
		size_t nu = sched_user_list(d->core, ids, 1024);
		for (size_t i = 0; i < nu && i < 1024; i++) {
			sched_user_state us;
			if (ids[i] == 0 || sched_user_get(d->core, ids[i], now, &us) < 0)
				continue;
			live_user_view *v = user_slot(d, out, &n, max, uid_of_core_user(ids[i]));
			if (!v)
				continue;
			v->share = us.share;
			v->attained_s = us.attained_gpu_s;
			v->usage_s = us.usage_gpu_s;
			v->running = us.running;
			v->queued = us.queued;
			v->max_gpus = us.limits.max_gpus;
			v->max_mem_mib = us.limits.max_mem_mib;
			v->max_segments = us.limits.max_segments;
		}
	}
	for (size_t i = 0; i < d->n_exps; i++) {
		const live_exp *x = d->exps[i];
		if (x->done || x->cancelled)
			continue;
		live_user_view *v = user_slot(d, out, &n, max, x->owner.uid);
		if (v)
			v->n_experiments++;
	}
	double busy = 0;
	for (size_t i = 0; i < n && i < max; i++)
		if (out[i].running + out[i].queued > 0)
			busy += out[i].share;
	for (size_t i = 0; i < n && i < max; i++)
		out[i].share_fraction = out[i].running + out[i].queued > 0 && busy > 0
						? out[i].share / busy : NAN;
	return n;
}
