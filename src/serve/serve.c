/*
 * serve.c - `relish serve` (serve.h): start-up, signals, shutdown.
 *
 * Start-up, in order, each step refusing clearly:
 *   1. the config (bad key or value: FILE:LINE:COL, exit 2);
 *   2. the state folder (mode 0711: users reach the socket and their
 *      checkpoint folders, nothing else) and its lock (serve.lock, flock:
 *      a second service on the same state is refused, naming the first);
 *   3. the live driver in service mode on STATE/relish.db and STATE/runs
 *      (the store's own checks apply: schema, another writer); with the
 *      config's slurm: section its devices are a Slurm partition's nodes
 *      (a partition that does not exist, or a Slurm that does not answer,
 *      is refused here) and specs that name no executor run as Slurm jobs;
 *   4. every experiment the store holds as running is resumed, as its
 *      owner (a killed service restarts where it stopped: the driver's
 *      recovery kills what the old one left and re-runs from checkpoints);
 *   5. the listeners (a non-loopback address without tokens is refused);
 *   6. the loop, until SIGTERM or SIGINT: nothing new is launched, running
 *      segments may reach their end within the grace period, then they are
 *      stopped and recorded as interrupted (resumed at the next start).
 *      A second signal stops them at once.  SIGHUP reads the config and
 *      the token file again (a bad one is logged and the old one kept;
 *      what only a start reads is kept as it was, and the log says so).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/logtext.h"
#include "exec/runas.h"
#include "live/driver.h"
#include "serve/serve.h"
#include "slurm/slurm.h"
#include "store/store.h"

typedef struct service {
	serve_options opt;
	char state[PATH_MAX];
	char db[PATH_MAX + 32], runs[PATH_MAX + 32], sock[PATH_MAX + 32], lock[PATH_MAX + 32];
	char listen_buf[API_MAX_LISTEN][PATH_MAX + 40];
	char runas[PATH_MAX];
	int lock_fd;
	int presence_fd;         /* serve_presence_announce's, -1 before */
	uv_poll_t presence_poll; /* answers those who check it */
	int presence_polled;
	serve_config cfg;
	api_policy pol;          /* what the API reads; replaced on reload */
	live *d;
	api_ctx actx;
	api_device *devices;     /* the driver's devices as at start (actx.devices) */
	api_server *api;
	uv_signal_t sig_term, sig_int, sig_hup;
	uv_timer_t retain;       /* the config's retention: every interval */
	int retain_ready;
	int signals;
	int stopping;
	/* Experiments paused for want of space, as the driver tells them
	 * (on_paused, loop thread) for the API's readers (is_paused, any
	 * thread): a few ids, under paused_mu. */
	pthread_mutex_t paused_mu;
	int64_t *paused;
	size_t n_paused, cap_paused;
} service;

static void on_paused(void *ctx, int64_t id, int paused)
{
	service *s = ctx;
	pthread_mutex_lock(&s->paused_mu);
	size_t i = 0;
	while (i < s->n_paused && s->paused[i] != id)
		i++;
	if (!paused && i < s->n_paused) {
		s->paused[i] = s->paused[--s->n_paused];
	} else if (paused && i == s->n_paused) {
		if (s->n_paused == s->cap_paused) {
			size_t cap = s->cap_paused ? 2 * s->cap_paused : 8;
			int64_t *v = realloc(s->paused, cap * sizeof *v);
			if (v) {
				s->paused = v;
				s->cap_paused = cap;
			}
		}
		/* (without memory it shows as running, which it is in the store) */
		if (s->n_paused < s->cap_paused)
			s->paused[s->n_paused++] = id;
	}
	pthread_mutex_unlock(&s->paused_mu);
}

static int is_paused(void *ctx, int64_t id)
{
	service *s = ctx;
	int found = 0;
	pthread_mutex_lock(&s->paused_mu);
	for (size_t i = 0; i < s->n_paused && !found; i++)
		found = s->paused[i] == id;
	pthread_mutex_unlock(&s->paused_mu);
	return found;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The driver's progress lines become log lines. */
static void driver_line(void *ctx, const char *line)
{
	(void)ctx;
	/* it may hold a trial's own output: quoted, escaped */
	char q[1600];
	serve_log("info", "driver", "msg=\"%s\"", rl_log_text(line, q, sizeof q));
}

/* The Slurm backend's settings from the config's slurm: section (borrowed
 * from c). */
static void slurm_config(const serve_slurm *c, slurm_site_config *out)
{
	*out = (slurm_site_config){
		.partition = c->partition, .account = c->account, .qos = c->qos,
		.sbatch_args = (const char *const *)c->sbatch_args,
		.n_sbatch_args = c->n_sbatch_args, .gpu_memory_mib = c->gpu_memory_mib,
		.poll_interval_s = c->poll_s, .refresh_s = c->refresh_s,
		.step_program = c->relish_path,
	};
}

static int same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/*
 * On a reload, the slurm: settings a running service can take (account,
 * qos, sbatch_args, the intervals) go to the driver; the ones it was
 * started with (whether there is a section, default, partition,
 * gpu_memory, relish_path: its devices, executor and step script were made
 * from them) are kept in c as they were, and the log says which changed.
 */
static void slurm_reload(service *s, serve_config *c)
{
	serve_slurm *old = &s->cfg.slurm, *nw = &c->slurm;
	char changed[200] = "";
	size_t off = 0;
#define KEPT(cond, name)                                                                     \
	if (cond)                                                                            \
		off += (size_t)snprintf(changed + off, sizeof changed - off, "%s%s", off ? "," : "", \
					name)
	KEPT(old->enabled != nw->enabled, "slurm");
	KEPT(old->enabled && nw->enabled && old->is_default != nw->is_default, "slurm.default");
	KEPT(old->enabled && nw->enabled && !same_text(old->partition, nw->partition),
	     "slurm.partition");
	KEPT(old->enabled && nw->enabled && old->gpu_memory_mib != nw->gpu_memory_mib,
	     "slurm.gpu_memory");
	KEPT(old->enabled && nw->enabled && !same_text(old->relish_path, nw->relish_path),
	     "slurm.relish_path");
#undef KEPT
	if (changed[0])
		serve_log("warn", "serve.reload", "keys=%s msg=\"these change at the next start\"",
			  changed);
	if (!old->enabled || !nw->enabled) {
		/* no cluster now, or none to reconfigure: keep the section as started */
		serve_slurm keep = *old;
		*old = *nw;
		*nw = keep;
		return;
	}
	/* what only a start reads, as started */
	char *p = nw->partition, *r = nw->relish_path;
	nw->partition = old->partition;
	nw->relish_path = old->relish_path;
	old->partition = p;
	old->relish_path = r;
	nw->is_default = old->is_default;
	nw->gpu_memory_mib = old->gpu_memory_mib;
	slurm_site_config lc;
	slurm_config(nw, &lc);
	rl_err err;
	rl_err_clear(&err);
	if (live_backend_reconfigure(s->d, EXEC_SLURM, &lc, &err) < 0)
		serve_log("error", "serve.reload", "msg=\"slurm: %s\"", err.msg);
}

static int admit(void *ctx, const api_user *u, const spec *sp, rl_err *err)
{
	service *s = ctx;
	return serve_admit(&s->cfg, u, sp, err);
}

/* relish prune through the service (POST /api/v1/prune, on the loop): the
 * caller's age and count, else the config's retention rule; the archive
 * is always the config's (or STATE/archive).  At most 100 a call. */
static int prune(void *ctx, const api_user *u, const json_t *req, json_t **out, rl_err *err)
{
	service *s = ctx;
	const serve_retention *r = &s->cfg.retention;
	const json_t *ja = json_object_get(req, "age"), *jk = json_object_get(req, "keep");
	int dry = json_is_true(json_object_get(req, "dry_run"));
	if ((ja && !json_is_number(ja)) || (jk && !json_is_integer(jk)) ||
	    (ja && json_number_value(ja) < 0) || (jk && json_integer_value(jk) < 0))
		return rl_err_set(err, RL_EINVAL, "request body: \"age\" is seconds (a number) "
				  "and \"keep\" a whole count, neither negative");
	serve_prune_opts o = {.dry_run = dry, .max = dry ? 0 : 100, .who = u->name};
	if (ja || jk) {
		o.age_s = ja ? json_number_value(ja) : 0;
		o.keep = jk ? (long)json_integer_value(jk) : 0;
	} else if (r->enabled) {
		o.age_s = r->age_s;
		o.keep = r->keep;
	} else {
		return rl_err_set(err, RL_EINVAL, "which experiments? the service's config has no "
				  "retention: rule; give an age or a keep count (relish prune "
				  "--age 90d, --keep 100)");
	}
	char archive[PATH_MAX + 16];
	if (r->archive)
		snprintf(archive, sizeof archive, "%s", r->archive);
	else
		snprintf(archive, sizeof archive, "%s/archive", s->state);
	o.archive = archive;
	serve_prune_result res;
	int rc = serve_prune(live_store(s->d), s->d, &o, now_s(), &res, err);
	if (rc == 0) {
		*out = json_pack("{s:b, s:f, s:I, s:s, s:I, s:I, s:I, s:b, s:O}", "dry_run", dry,
				 "age", o.age_s, "keep", (json_int_t)o.keep, "archive", archive,
				 "removed", (json_int_t)res.removed, "failed", (json_int_t)res.failed,
				 "would", (json_int_t)res.would, "more", res.more, "experiments",
				 res.items);
		if (!*out)
			rc = rl_err_set(err, RL_ENOMEM, "prune");
	}
	serve_prune_result_fini(&res);
	return rc;
}

/* ---- state folder and lock ---- */

/* dir must be a folder of the service's user that no one else may write
 * (else another user could put links where the service writes, or take
 * its database): refused, naming what is wrong. */
static int state_dir_check(const char *dir, rl_err *err)
{
	struct stat st;
	if (lstat(dir, &st) != 0)
		return rl_err_sys(err, RL_EIO, errno, "state folder %s", dir);
	if (!S_ISDIR(st.st_mode))
		return rl_err_set(err, RL_EINVAL, "%s is not a folder (a link or a file): the "
				  "service's state must be a folder of its own", dir);
	if (st.st_uid != geteuid())
		return rl_err_set(err, RL_EPERM, "%s belongs to uid %u, not to the service's user "
				  "(uid %u): chown it, or give another --state", dir,
				  (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 022)
		return rl_err_set(err, RL_EPERM, "%s is mode %04o: others may write into it; chmod "
				  "711 %s", dir, (unsigned)(st.st_mode & 07777), dir);
	return 0;
}

static int state_prepare(service *s, rl_err *err)
{
	const char *dir = s->opt.state_dir ? s->opt.state_dir : SERVE_DEFAULT_STATE;
	if (mkdir(dir, 0711) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating the state folder %s", dir);
	if (!realpath(dir, s->state))
		return rl_err_sys(err, RL_EIO, errno, "state folder %s", dir);
	int rc = state_dir_check(s->state, err);
	if (rc < 0)
		return rc;
	snprintf(s->db, sizeof s->db, "%s/relish.db", s->state);
	snprintf(s->runs, sizeof s->runs, "%s/runs", s->state);
	snprintf(s->sock, sizeof s->sock, "%s/%s", s->state, SERVE_SOCKET_NAME);
	snprintf(s->lock, sizeof s->lock, "%s/serve.lock", s->state);
	if (mkdir(s->runs, 0711) != 0 && errno != EEXIST)
		return rl_err_sys(err, RL_EIO, errno, "creating %s", s->runs);
	if ((rc = state_dir_check(s->runs, err)) < 0)
		return rc;
	/* Not through a link; truncated only once it is ours (flock). */
	s->lock_fd = open(s->lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (s->lock_fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "opening %s", s->lock);
	if (flock(s->lock_fd, LOCK_EX | LOCK_NB) != 0) {
		char pid[32] = "?";
		ssize_t n = pread(s->lock_fd, pid, sizeof pid - 1, 0);
		if (n > 0) {
			pid[n] = '\0';
			pid[strcspn(pid, "\n")] = '\0';
		}
		return rl_err_set(err, RL_EBUSY, "another relish serve (pid %s) runs on %s", pid,
				  s->state);
	}
	char pid[32];
	int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
	/* Written over the old pid, then cut to length: on a full disk the
	 * file keeps the block it had (a start there must work; space.c). */
	if (pwrite(s->lock_fd, pid, (size_t)n, 0) != n || ftruncate(s->lock_fd, n) != 0) {
		if (errno != ENOSPC && errno != EDQUOT)
			return rl_err_sys(err, RL_EIO, errno, "writing %s", s->lock);
		serve_log("warn", "serve.lock", "msg=\"writing its pid into %s: %s\"", s->lock,
			  strerror(errno));
	}
	/* The database holds everyone's specs and parameters: the service's only. */
	int fd = open(s->db, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* ---- users' shares and limits ---- */

static void apply_users(service *s)
{
	live_clear_user_policies(s->d);
	for (size_t i = 0; i < s->cfg.n_users; i++) {
		const serve_user_rule *r = &s->cfg.users[i];
		live_user_policy up = {.share = r->share, .max_gpus = r->max_gpus,
				       .max_mem_mib = r->max_mem_mib,
				       .max_segments = r->max_segments,
				       .max_experiments = r->max_experiments,
				       .max_host_mem_mib = r->max_host_mem_mib,
				       .max_cpus = r->max_cpus};
		live_set_user_policy(s->d, r->uid, &up);
	}
	const serve_user_rule *r = &s->cfg.dflt;
	live_user_policy up = {.share = r->share, .max_gpus = r->max_gpus,
			       .max_mem_mib = r->max_mem_mib, .max_segments = r->max_segments,
			       .max_experiments = r->max_experiments,
			       .max_host_mem_mib = r->max_host_mem_mib, .max_cpus = r->max_cpus};
	live_set_default_user_policy(s->d, &up);
}

/* ---- resume ---- */

/* A resumed experiment is admitted again, under the rules of now: a
 * grant taken out of allow: since it was submitted is not kept. */
static int admit_owner(void *ctx, const live_owner *ow, const spec *sp, rl_err *err)
{
	service *s = ctx;
	api_user u = {.via = API_VIA_UNIX, .uid = ow->uid, .gid = ow->gid, .root = ow->uid == 0};
	snprintf(u.name, sizeof u.name, "%s", ow->name);
	return serve_admit(&s->cfg, &u, sp, err);
}

static int resume_all(service *s, rl_err *err)
{
	store_experiment *v;
	size_t n;
	store_exp_filter f = STORE_EXP_FILTER_ALL;
	f.status = EXP_RUNNING; /* not the finished ones: they may be many */
	int rc = store_experiment_page(live_store(s->d), &f, &v, &n, err);
	if (rc < 0)
		return rc;
	size_t resumed = 0, skipped = 0;
	for (size_t i = 0; i < n; i++) {
		store_experiment *e = &v[i];
		if (e->status != EXP_RUNNING)
			continue;
		rl_err e2;
		rl_err_clear(&e2);
		live_owner ow;
		int r = e->owner && e->owner_uid >= 0
				? live_owner_of_uid((uid_t)e->owner_uid, &ow, &e2)
				: rl_err_set(&e2, RL_ENOTFOUND, "it has no owner");
		if (r == 0) {
			ow.run_as = ow.uid != geteuid();
			r = live_resume_stored(s->d, e, &ow, admit_owner, s, &e2);
			/* A full disk: held, resumed once there is space (the
			 * service starts all the same, so an admin can act). */
			if (r < 0 && store_err_no_space(&e2) && live_hold_stored(s->d, e, &ow, &e2) == 0) {
				serve_log("warn", "serve.resume", "experiment=%s id=%lld msg=\"paused for "
					  "want of space: %s\"", e->name, (long long)e->id, e2.msg);
				skipped++;
				continue;
			}
		}
		if (r < 0) {
			/* One bad experiment does not keep the others down. */
			char q[RL_ERR_MSG_MAX * 4];
			serve_log("error", "serve.resume", "experiment=%s id=%lld msg=\"%s\"", e->name,
				  (long long)e->id, rl_log_text(e2.msg, q, sizeof q));
			skipped++;
			if (r == RL_ESTORE) {
				store_experiments_free(v, n);
				*err = e2;
				return r;
			}
			continue;
		}
		serve_log("info", "serve.resume", "experiment=%s id=%lld owner=%s", e->name,
			  (long long)e->id, e->owner);
		resumed++;
	}
	store_experiments_free(v, n);
	serve_log("info", "serve.resumed", "experiments=%zu skipped=%zu", resumed, skipped);
	return 0;
}

/* ---- signals ---- */

static void close_cb(uv_handle_t *h)
{
	(void)h;
}

/* The driver is about to launch a segment: the requests queued for the
 * loop are answered first (a launch blocks the loop until its child has
 * executed: a few ms, more on a busy machine). */
static void answer_queued(void *ctx)
{
	service *s = ctx;
	if (s->api)
		api_server_answer_queued(s->api);
}

static void presence_cb(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	service *s = h->data;
	serve_presence_answer(s->presence_fd);
}

/* The driver is done: close what keeps the loop alive besides it. */
static void on_finish(void *ctx)
{
	service *s = ctx;
	if (s->presence_polled) {
		s->presence_polled = 0;
		uv_close((uv_handle_t *)&s->presence_poll, close_cb);
	}
	if (s->retain_ready) {
		s->retain_ready = 0;
		uv_close((uv_handle_t *)&s->retain, close_cb);
	}
	if (s->signals) {
		s->signals = 0;
		uv_close((uv_handle_t *)&s->sig_term, close_cb);
		uv_close((uv_handle_t *)&s->sig_int, close_cb);
		uv_close((uv_handle_t *)&s->sig_hup, close_cb);
	}
	api_server_close(s->api);
	s->api = NULL;
}

static void retain_cb(uv_timer_t *t)
{
	service *s = t->data;
	rl_err err;
	rl_err_clear(&err);
	if (s->stopping || !s->cfg.retention.enabled)
		return;
	if (serve_retention_pass(s->d, &s->cfg.retention, s->state, now_s(), &err) < 0)
		serve_log("error", "serve.retention", "msg=\"%s\"", err.msg);
}

/* (Re)start the retention timer as the config says: the first pass soon
 * after start or reload, then every interval. */
static void retain_schedule(service *s)
{
	if (!s->retain_ready)
		return;
	uv_timer_stop(&s->retain);
	if (s->cfg.retention.enabled) {
		uint64_t every = (uint64_t)(s->cfg.retention.interval_s * 1000);
		uv_timer_start(&s->retain, retain_cb, 1000, every ? every : 3600000);
	}
}

static void reload(service *s)
{
	serve_log_reopen(); /* first: what follows goes to the new file */
	char q[RL_ERR_MSG_MAX * 4];
	if (!s->opt.config_path) {
		serve_log("info", "serve.reload", "msg=\"no config file; tokens re-read\"");
	} else {
		serve_config c;
		rl_err err;
		rl_err_clear(&err);
		if (serve_config_load(s->opt.config_path, &c, &err) < 0) {
			serve_log("error", "serve.reload", "config=%s msg=\"%s; the old config stays\"",
				  s->opt.config_path, rl_log_text(err.msg, q, sizeof q));
			return;
		}
		if (c.policy != s->cfg.policy || c.order != s->cfg.order ||
		    c.foreign != s->cfg.foreign ||
		    fabs(c.memory_margin - s->cfg.memory_margin) > 1e-12 ||
		    c.fair_half_life_s != s->cfg.fair_half_life_s)
			serve_log("warn", "serve.reload",
				  "msg=\"policy, order, fair_half_life, foreign and memory_margin change "
				  "at the next start\"");
		c.policy = s->cfg.policy;
		c.order = s->cfg.order;
		c.fair_half_life_s = s->cfg.fair_half_life_s;
		c.foreign = s->cfg.foreign;
		c.memory_margin = s->cfg.memory_margin;
		slurm_reload(s, &c);
		serve_config_fini(&s->cfg);
		s->cfg = c;
		unsigned gen = s->pol.generation;
		s->pol = s->cfg.api;
		s->pol.generation = gen + 1;
		api_server_set_policy(s->api, &s->pol);
		apply_users(s);
		/* before, these changed only at the next start, silently */
		live_set_trial_limits(s->d, s->cfg.max_segment_s, s->cfg.trial_memory_mib,
				      s->cfg.trial_processes);
		retain_schedule(s); /* retention: changes at once */
	}
	rl_err err;
	rl_err_clear(&err);
	int tokens_bad = s->api && api_server_reload_tokens(s->api, &err) < 0;
	if (tokens_bad)
		serve_log("error", "serve.reload", "msg=\"%s; no token is taken until the file "
			  "reads well (SIGHUP again)\"", rl_log_text(err.msg, q, sizeof q));
	serve_log(tokens_bad ? "warn" : "info", "serve.reloaded", "config=%s read=%s users=%zu tokens=%s",
		  s->opt.config_path ? s->opt.config_path : "-", s->pol.read_own ? "own" : "all",
		  s->cfg.n_users, !s->cfg.tokens ? "-" : tokens_bad ? "none-taken" : "read");
}

static void signal_cb(uv_signal_t *h, int signum)
{
	service *s = h->data;
	if (signum == SIGHUP) {
		reload(s);
		return;
	}
	s->stopping++;
	serve_log("info", "serve.stopping", "signal=%s grace_s=%g%s", strsignal(signum),
		  s->cfg.grace_s, s->stopping > 1 ? " again=1" : "");
	live_stop(s->d, s->cfg.grace_s);
}

/* ---- run ---- */

/* Signals that come while the service starts (the config read, the
 * database opened and migrated, experiments resumed, segments adopted or
 * launched: seconds with a long history or a busy machine), before its
 * loop watches for them: kept here and raised again once it does, so
 * they are answered as later ones (SIGTERM and SIGINT: a graceful stop,
 * exit 0; SIGHUP: a reload).  Before, their default action ended the
 * service mid-start (exit 143, or 129 for a logrotate's SIGHUP), leaving
 * what it had launched behind.  A second SIGTERM or SIGINT meanwhile has
 * its default action: signals always work. */
static volatile sig_atomic_t early_stop, early_hup;

static void early_handler(int signum)
{
	if (signum == SIGHUP) {
		early_hup = 1;
		return;
	}
	if (early_stop) {
		signal(signum, SIG_DFL);
		raise(signum);
		return;
	}
	early_stop = signum;
}

static void signals_early(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = early_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int serve_run(const serve_options *o, rl_err *err)
{
	signals_early();
	service *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "relish serve");
	s->opt = *o;
	s->lock_fd = -1;
	if (o->log_file && serve_log_open(o->log_file, err) < 0) {
		free(s);
		return err->code;
	}
	pthread_mutex_init(&s->paused_mu, NULL);
	s->presence_fd = -1;
	int rc = 0;
	serve_config_default(&s->cfg);
	if (o->config_path && (rc = serve_config_load(o->config_path, &s->cfg, err)) < 0)
		goto out;
	s->pol = s->cfg.api;
	if ((rc = state_prepare(s, err)) < 0)
		goto out;
	if (geteuid() == 0 && (rc = runas_helper_find(s->runas, sizeof s->runas, err)) < 0) {
		rl_err_prefix(err, "trials run as their submitters");
		goto out;
	}
	slurm_site_config lsc;
	live_options lo;
	live_options_default(&lo);
	if (s->cfg.slurm.enabled) {
		if (o->devices_path) {
			rc = rl_err_set(err, RL_EINVAL, "--devices %s and the config's slurm: section: "
					"a service places either on the devices of a file or on a "
					"Slurm partition's nodes, not both", o->devices_path);
			goto out;
		}
		slurm_config(&s->cfg.slurm, &lsc);
		lo.backend_settings[EXEC_SLURM] = &lsc;
		lo.default_executor = s->cfg.slurm.is_default ? EXEC_SLURM : EXEC_PROCESS;
	}
	lo.service = 1;
	lo.db_path = s->db;
	lo.runs_dir = s->runs;
	lo.devices_path = o->devices_path;
	lo.policy_set = 1;
	lo.policy = s->cfg.policy;
	lo.order_set = 1;
	lo.order = s->cfg.order;
	lo.memory_margin = s->cfg.memory_margin;
	lo.fair_half_life_set = 1;
	lo.fair_half_life_s = s->cfg.fair_half_life_s;
	lo.foreign_set = 1;
	lo.foreign = s->cfg.foreign;
	lo.max_segment_s = s->cfg.max_segment_s;
	lo.default_memory_mib = s->cfg.trial_memory_mib;
	lo.trial_processes = s->cfg.trial_processes;
	lo.progress = 0;
	lo.line_fn = driver_line;
	lo.runas_helper = s->runas[0] ? s->runas : NULL;
	lo.on_finish = on_finish;
	lo.on_finish_ctx = s;
	lo.before_launch = answer_queued;
	lo.before_launch_ctx = s;
	lo.on_paused = on_paused;
	lo.on_paused_ctx = s;
	if ((rc = live_new(&lo, &s->d, err)) < 0)
		goto out;
	apply_users(s);
	if ((rc = resume_all(s, err)) < 0)
		goto out;
	/* What the HTTP threads show of the devices: they never touch the
	 * driver (api.h, the threading rule). */
	size_t ndev = live_device_count(s->d);
	s->devices = calloc(ndev ? ndev : 1, sizeof *s->devices);
	if (!s->devices) {
		rc = rl_err_set(err, RL_ENOMEM, "relish serve");
		goto out;
	}
	for (size_t i = 0; i < ndev; i++) {
		live_device_view v;
		if (live_device_get(s->d, i, &v) < 0)
			continue;
		api_device *a = &s->devices[i];
		snprintf(a->name, sizeof a->name, "%s", v.name);
		snprintf(a->uuid, sizeof a->uuid, "%s", v.uuid);
		a->is_gpu = v.is_gpu;
		a->mem_total_mib = v.mem_total_mib;
		a->compute_total = v.compute_total;
	}
	s->actx = (api_ctx){.d = s->d, .st = live_store(s->d), .db_path = s->db, .pol = &s->pol,
			    .admit = admit, .admit_ctx = s, .prune = prune, .prune_ctx = s,
			    .paused = is_paused, .paused_ctx = s, .started_at = now_s(),
			    .state_dir = s->state, .devices = s->devices, .n_devices = ndev};
	api_options ao;
	api_options_default(&ao);
	/* The state folder's socket is kept whenever no --listen names a
	 * unix socket: it is how the users of this machine are told apart
	 * (SO_PEERCRED) and where every client looks by default, so adding a
	 * TCP listener for the dashboard must not take it away (a
	 * `--listen 127.0.0.1:8080` alone used to, and every submit failed). */
	int have_unix = 0;
	for (size_t i = 0; i < o->n_listen; i++)
		have_unix |= !strncmp(o->listen[i], "unix:", 5) || o->listen[i][0] == '/' ||
			     o->listen[i][0] == '.';
	if (!have_unix && o->n_listen >= API_MAX_LISTEN) {
		rc = rl_err_set(err, RL_EUSAGE, "--listen: %d TCP addresses leave no room for the "
				"state folder's socket (%s), which the service always keeps: give "
				"at most %d", API_MAX_LISTEN, s->sock, API_MAX_LISTEN - 1);
		goto out;
	}
	if (!have_unix) {
		snprintf(s->listen_buf[0], sizeof s->listen_buf[0], "unix:%s", s->sock);
		ao.listen[0] = s->listen_buf[0];
		ao.n_listen = 1;
	}
	for (size_t i = 0; i < o->n_listen && ao.n_listen < API_MAX_LISTEN; i++)
		ao.listen[ao.n_listen++] = o->listen[i];
	ao.tokens_path = s->cfg.tokens;
	ao.log = serve_log_cb;
	ao.log_reads = o->log_reads;
	if ((rc = api_server_start(live_loop(s->d), &s->actx, &ao, &s->api, err)) < 0)
		goto out;
	/* Found by `relish run` on this machine, whatever the state folder. */
	if ((rc = serve_presence_announce(ao.listen[0], &s->presence_fd, err)) < 0)
		goto out;
	uv_loop_t *loop = live_loop(s->d);
	if (uv_poll_init(loop, &s->presence_poll, s->presence_fd) == 0) {
		s->presence_poll.data = s;
		s->presence_polled = 1;
		uv_poll_start(&s->presence_poll, UV_READABLE, presence_cb);
	}
	uv_signal_init(loop, &s->sig_term);
	uv_signal_init(loop, &s->sig_int);
	uv_signal_init(loop, &s->sig_hup);
	s->sig_term.data = s->sig_int.data = s->sig_hup.data = s;
	s->signals = 1;
	uv_signal_start(&s->sig_term, signal_cb, SIGTERM);
	uv_signal_start(&s->sig_int, signal_cb, SIGINT);
	uv_signal_start(&s->sig_hup, signal_cb, SIGHUP);
	/* What came while starting, now that the loop watches (its handler
	 * queues them for the first turn of the loop). */
	if (early_hup) /* first: a stop would end the loop before a reload */
		raise(SIGHUP);
	if (early_stop)
		raise(early_stop);
	early_stop = early_hup = 0;
	uv_timer_init(loop, &s->retain);
	s->retain.data = s;
	s->retain_ready = 1;
	retain_schedule(s);
	serve_log("info", "serve.started", "pid=%d state=%s devices=%zu policy=%s order=%s "
		  "fair_half_life_s=%g foreign=%s read=%s tokens=%s grace_s=%g executor=%s slurm=%s",
		  (int)getpid(), s->state, live_device_count(s->d), sched_policy_name(s->cfg.policy),
		  sched_order_name(s->cfg.order), s->cfg.fair_half_life_s,
		  sched_foreign_policy_name(s->cfg.foreign), s->pol.read_own ? "own" : "all",
		  s->cfg.tokens ? s->cfg.tokens : "-", s->cfg.grace_s,
		  !s->cfg.slurm.enabled ? "process"
		  : s->cfg.slurm.is_default ? "slurm" : "slurm-when-named",
		  !s->cfg.slurm.enabled ? "-"
		  : s->cfg.slurm.partition ? s->cfg.slurm.partition : "default-partition");
	rc = live_run(s->d, err);
	if (rc == RL_EINTERRUPTED)
		rc = 0; /* a stop is the service's normal end */
	serve_log(rc < 0 ? "error" : "info", "serve.stopped", "rc=%d%s%s%s", rc,
		  rc < 0 ? " msg=\"" : "", rc < 0 ? err->msg : "", rc < 0 ? "\"" : "");
out:
	if (s->signals || s->presence_polled)
		on_finish(s);
	if (s->api) {
		api_server_close(s->api);
		s->api = NULL;
	}
	live_free(s->d);
	free(s->devices);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->presence_fd >= 0)
		close(s->presence_fd);
	serve_config_fini(&s->cfg);
	pthread_mutex_destroy(&s->paused_mu);
	free(s->paused);
	free(s);
	return rc;
}
