/*
 * live_stand.h - a stand-in executor backend for tests of the live driver
 * (tests/test_live.c): exec_ops and exec_backend_ops (exec/exec.h) that run
 * no process.  Each launch asks the test's script what the segment does
 * (its metric lines, then how it ends, each after a delay on the driver's
 * own libuv loop), so the real driver (src/live) meets scripted segment
 * ends, as a scheduler test links the real scheduler against stubbed nodes
 * and replays a job list.
 *
 * The whole life cycle, so that the driver's adoption and reconcile are
 * tested without podman or Slurm: with a stand_world (what outlives a
 * driver, as containers and jobs outlive a killed relish), each segment
 * gets a handle the store records; a driver whose stand "crashes"
 * (world.crash) leaves its running segments in the world as units that
 * go on running; the next driver's first attach lists them (reconcile),
 * adopts those the store says are running (their lines again from the
 * start, then their scripted end), loses the rest and stops, before its
 * loop starts, the units no segment claimed (sweep).
 *
 * What it keeps for assertions: every launch (argv, environment, memory
 * limit, the segment's range) in launch order.  It writes each line to the
 * segment's log before reporting it, as the process executor does, so
 * recovery can read logs back.  Given to the driver through
 * live_options.backends (stand_rows) with the stand_box as the backend's
 * settings (stand_options).  Included by test files only (static
 * functions, one copy each).
 */
#ifndef RELISH_TEST_LIVE_STAND_H
#define RELISH_TEST_LIVE_STAND_H

#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "exec/contract.h"
#include "exec/exec.h"
#include "live/driver.h"

#define STAND_MAX_LINES 16
#define STAND_MAX_LAUNCHES 64
#define STAND_MAX_UNITS 16

/* What one segment does: lines (each after delay_ms), then its end. */
typedef struct stand_plan {
	size_t n_lines;
	char lines[STAND_MAX_LINES][160];
	unsigned delay_ms;          /* before each line and before the end */
	int hang;                   /* never ends by itself, only by cancel */
	int ignore_cancel;          /* a cancel does not end it either */
	exec_result end;            /* outcome, exit code, peak, reason ... */
} stand_plan;

/* A segment that outlived the driver that launched it (a crash), or one
 * the test put there: it goes on running, printing its plan's lines from
 * the start to whoever adopts it. */
typedef struct stand_unit {
	char handle[32];
	char experiment[64];
	char trial[32];             /* "t<store id>" */
	int seq;
	stand_plan plan;
	int running;                /* 0: it ended while no driver watched (gone) */
	int adopted, lost, swept;   /* what the next driver did with it */
} stand_unit;

/* What outlives a driver. */
typedef struct stand_world {
	stand_unit units[STAND_MAX_UNITS];
	size_t n_units;
	unsigned next_handle;
	int crash;                  /* the stand's shutdown leaves what runs in the world */
	size_t listed;              /* units the last reconcile found running */
} stand_world;

/* One launch as the driver asked for it. */
typedef struct stand_launch {
	char argv0[128];
	double from, to;
	uint64_t memory_limit_mib;
	char log_path[512];
} stand_launch;

typedef struct stand stand;
/* The test's script: fill *plan for the k-th launch (0, 1, ...). */
typedef void (*stand_plan_fn)(stand *st, size_t k, const exec_spec *es, stand_plan *plan);

struct stand {
	executor base;
	exec_backend backend;       /* its life cycle (stand_backend_ops) */
	const exec_host *host;
	stand_world *world;         /* NULL: nothing outlives the driver */
	int reconciled;
	uv_loop_t *loop;
	stand_plan_fn plan;
	void *ctx;                  /* the test's */
	stand_launch launches[STAND_MAX_LAUNCHES];
	size_t n_launches;
	size_t n_cancels;
	size_t n_running;
	struct exec_segment *segs;
	int destroyed;
};

struct exec_segment {
	stand *st;
	struct exec_segment *next;
	char handle[32];            /* with a world */
	char experiment[64];
	char trial[32];
	int seq;
	stand_plan plan;
	size_t step;
	exec_callbacks cb;
	void *ud;
	uv_timer_t timer;
	int cancelled, ended;
	int log_fd;
	uint64_t t0;
};

static void stand_maybe_free(stand *st)
{
	if (st->destroyed && !st->segs)
		free(st);
}

static void stand_closed(uv_handle_t *h)
{
	struct exec_segment *g = h->data;
	stand *st = g->st;
	for (struct exec_segment **p = &st->segs; *p; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	if (g->log_fd >= 0)
		close(g->log_fd);
	free(g);
	stand_maybe_free(st);
}

static void stand_end(struct exec_segment *g)
{
	if (g->ended)
		return;
	g->ended = 1;
	g->st->n_running--;
	exec_result r = g->plan.end;
	if (g->cancelled) {
		memset(&r, 0, sizeof r);
		r.outcome = SEG_OUT_CANCELLED;
		r.term_signal = SIGTERM;
		snprintf(r.reason, sizeof r.reason, "cancelled");
	}
	r.duration_s = (double)(uv_hrtime() - g->t0) / 1e9;
	uv_timer_stop(&g->timer);
	if (g->cb.on_end)
		g->cb.on_end(g->ud, g, &r);
	uv_close((uv_handle_t *)&g->timer, stand_closed);
}

static void stand_tick(uv_timer_t *t)
{
	struct exec_segment *g = t->data;
	if (g->ended)
		return;
	if (g->cancelled && !g->plan.ignore_cancel) {
		stand_end(g);
		return;
	}
	if (g->step < g->plan.n_lines) {
		const char *l = g->plan.lines[g->step++];
		if (g->log_fd >= 0) {
			/* Logged before it is parsed, as by the process executor. */
			if (write(g->log_fd, l, strlen(l)) < 0 || write(g->log_fd, "\n", 1) < 0) {
			}
		}
		contract_line cl;
		if (contract_parse_line(l, strlen(l), &cl) == CONTRACT_METRICS && g->cb.on_line)
			g->cb.on_line(g->ud, g, &cl);
		if (!g->ended)
			uv_timer_start(&g->timer, stand_tick, g->plan.delay_ms, 0);
		return;
	}
	if (g->plan.hang)
		return;
	stand_end(g);
}

static int stand_launch_fn(executor *ex, const exec_spec *es, const exec_callbacks *cb, void *ud,
			   exec_segment **out, rl_err *err)
{
	stand *st = (stand *)ex;
	if (st->n_launches >= STAND_MAX_LAUNCHES)
		return rl_err_set(err, RL_EINTERNAL, "stand-in: too many launches");
	struct exec_segment *g = calloc(1, sizeof *g);
	if (!g)
		return rl_err_set(err, RL_ENOMEM, "stand-in");
	stand_launch *l = &st->launches[st->n_launches];
	snprintf(l->argv0, sizeof l->argv0, "%s", es->argv && es->argv[0] ? es->argv[0] : "");
	l->from = es->a.from;
	l->to = es->a.to;
	l->memory_limit_mib = es->memory_limit_mib;
	snprintf(l->log_path, sizeof l->log_path, "%s", es->log_path ? es->log_path : "");
	g->plan.end.outcome = SEG_OUT_COMPLETED;
	g->plan.end.exited = 1;
	snprintf(g->plan.end.reason, sizeof g->plan.end.reason, "completed");
	st->plan(st, st->n_launches, es, &g->plan);
	st->n_launches++;
	if (st->world)
		snprintf(g->handle, sizeof g->handle, "unit-%u", ++st->world->next_handle);
	if (es->placed) {
		snprintf(g->experiment, sizeof g->experiment, "%s", es->placed->sp->name);
		g->seq = es->placed->seq;
	}
	snprintf(g->trial, sizeof g->trial, "%s", es->a.trial_id ? es->a.trial_id : "");
	g->st = st;
	g->cb = *cb;
	g->ud = ud;
	g->t0 = uv_hrtime();
	g->log_fd = es->log_path ? open(es->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
				 : -1;
	uv_timer_init(st->loop, &g->timer);
	g->timer.data = g;
	g->next = st->segs;
	st->segs = g;
	st->n_running++;
	uv_timer_start(&g->timer, stand_tick, g->plan.delay_ms, 0);
	*out = g;
	return 0;
}

static void stand_cancel(executor *ex, exec_segment *g)
{
	stand *st = (stand *)ex;
	if (g->ended || g->cancelled)
		return;
	st->n_cancels++;
	g->cancelled = 1;
	/* Ends on the loop, never inside the driver's call. */
	if (!g->plan.ignore_cancel)
		uv_timer_start(&g->timer, stand_tick, 0, 0);
}

static int stand_ident(executor *ex, const exec_segment *g, exec_ident *out)
{
	(void)ex;
	if (!g->handle[0])
		return RL_EUNSUPPORTED; /* no world: nothing to record */
	memset(out, 0, sizeof *out);
	snprintf(out->handle, sizeof out->handle, "%s", g->handle);
	return 0;
}

static int stand_reclaim(executor *ex, const exec_ident *id, rl_err *err)
{
	(void)ex, (void)id, (void)err;
	return 0;
}

static void stand_release(executor *ex, const char *key)
{
	(void)ex, (void)key;
}

static size_t stand_idle(executor *ex)
{
	(void)ex;
	return 0;
}

static void stand_shutdown(executor *ex)
{
	stand *st = (stand *)ex;
	for (struct exec_segment *g = st->segs; g; g = g->next) {
		if (g->ended)
			continue;
		if (st->world && st->world->crash && st->world->n_units < STAND_MAX_UNITS) {
			/* relish died: the segment runs on, nobody hears its end */
			stand_unit *u = &st->world->units[st->world->n_units++];
			memset(u, 0, sizeof *u);
			snprintf(u->handle, sizeof u->handle, "%s", g->handle);
			snprintf(u->experiment, sizeof u->experiment, "%s", g->experiment);
			snprintf(u->trial, sizeof u->trial, "%s", g->trial);
			u->seq = g->seq;
			u->plan = g->plan;
			u->running = 1;
			g->ended = 1;
			st->n_running--;
			uv_timer_stop(&g->timer);
			uv_close((uv_handle_t *)&g->timer, stand_closed);
			continue;
		}
		g->plan.ignore_cancel = 0;
		stand_cancel(ex, g);
	}
}

static void stand_destroy(executor *ex)
{
	stand *st = (stand *)ex;
	st->destroyed = 1;
	stand_maybe_free(st);
}

static const exec_ops stand_ops = {
	.name = "stand-in", .launch = stand_launch_fn, .cancel = stand_cancel,
	.ident = stand_ident, .reclaim = stand_reclaim, .release = stand_release,
	.idle_count = stand_idle, .shutdown = stand_shutdown, .destroy = stand_destroy,
};

/* ---- the backend: the life cycle ------------------------------------------ */

/* The test's handle on the backend the driver opens (its settings). */
typedef struct stand_box {
	stand_plan_fn plan;
	void *ctx;
	stand_world *world;         /* NULL: no handles, nothing outlives a driver */
	stand *st;                  /* set when the driver made it */
} stand_box;

static const exec_backend_ops stand_backend_ops;

static stand *stand_of(exec_backend *b)
{
	return (stand *)((char *)b - offsetof(stand, backend));
}

static int stand_open(const exec_host *host, const void *settings, spec *const *plan,
		      size_t n_plan, exec_backend **out, rl_err *err)
{
	(void)plan, (void)n_plan;
	const stand_box *b = settings;
	if (!b)
		return rl_err_set(err, RL_EINVAL, "stand-in: no stand_box given");
	stand *st = calloc(1, sizeof *st);
	if (!st)
		return rl_err_set(err, RL_ENOMEM, "stand-in");
	st->base.ops = &stand_ops;
	st->base.impl = st;
	st->backend.ops = &stand_backend_ops;
	st->host = host;
	st->world = b->world;
	st->loop = host->loop;
	st->plan = b->plan;
	st->ctx = b->ctx;
	((stand_box *)b)->st = st;
	*out = &st->backend;
	return 0;
}

static int stand_start(exec_backend *b, rl_err *err)
{
	(void)b, (void)err;
	return 0;
}

/* The first attach lists what an earlier driver left (reconcile). */
static int stand_attach(exec_backend *b, const exec_experiment *xp, executor **run, rl_err *err)
{
	(void)xp, (void)err;
	stand *st = stand_of(b);
	if (st->world && !st->reconciled) {
		st->reconciled = 1;
		st->world->listed = 0;
		for (size_t i = 0; i < st->world->n_units; i++)
			st->world->listed += st->world->units[i].running;
	}
	*run = &st->base;
	return 0;
}

static stand_unit *stand_unit_of(stand *st, const exec_found *f)
{
	for (size_t i = 0; st->world && i < st->world->n_units; i++) {
		stand_unit *u = &st->world->units[i];
		if (f->id.handle[0] && !strcmp(u->handle, f->id.handle) &&
		    !strcmp(u->experiment, f->experiment))
			return u;
	}
	return NULL;
}

static int stand_adoptable(exec_backend *b, executor *run, const exec_found *f)
{
	(void)run;
	stand_unit *u = stand_unit_of(stand_of(b), f);
	return u && u->running && !u->adopted;
}

/* Watch unit f again: its lines from the start, then its end. */
static int stand_adopt(exec_backend *b, executor *run, const exec_found *f, const exec_spec *es,
		       const exec_callbacks *cb, void *ud, exec_segment **out, char *said,
		       size_t n, rl_err *err)
{
	(void)run;
	stand *st = stand_of(b);
	stand_unit *u = stand_unit_of(st, f);
	if (!u || !u->running)
		return rl_err_set(err, RL_ENOTFOUND, "stand-in: no unit %s", f->id.handle);
	struct exec_segment *g = calloc(1, sizeof *g);
	if (!g)
		return rl_err_set(err, RL_ENOMEM, "stand-in");
	g->st = st;
	snprintf(g->handle, sizeof g->handle, "%s", u->handle);
	snprintf(g->experiment, sizeof g->experiment, "%s", u->experiment);
	snprintf(g->trial, sizeof g->trial, "%s", u->trial);
	g->seq = u->seq;
	g->plan = u->plan;
	g->cb = *cb;
	g->ud = ud;
	g->t0 = uv_hrtime();
	g->log_fd = es->log_path ? open(es->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)
				 : -1;
	uv_timer_init(st->loop, &g->timer);
	g->timer.data = g;
	g->next = st->segs;
	st->segs = g;
	st->n_running++;
	uv_timer_start(&g->timer, stand_tick, g->plan.delay_ms, 0);
	u->adopted = 1;
	snprintf(said, n, "its stand-in unit %s was still running and was adopted", u->handle);
	*out = g;
	return 0;
}

static void stand_lose(exec_backend *b, executor *run, const exec_found *f, char *said, size_t n)
{
	(void)run;
	stand_unit *u = stand_unit_of(stand_of(b), f);
	if (u && u->running) {
		u->running = 0;
		u->lost = 1;
		snprintf(said, n, "its stand-in unit %s was still running and was stopped", u->handle);
	} else {
		snprintf(said, n, "its stand-in unit %s was gone", f->id.handle[0] ? f->id.handle : "?");
	}
}

static void stand_sweep(exec_backend *b)
{
	stand *st = stand_of(b);
	size_t k = 0;
	for (size_t i = 0; st->world && i < st->world->n_units; i++) {
		stand_unit *u = &st->world->units[i];
		if (!u->running || u->adopted)
			continue;
		u->running = 0;
		u->swept = 1;
		k++;
	}
	if (k) {
		char line[120];
		snprintf(line, sizeof line, "stopped %zu stand-in unit%s left by an earlier relish", k,
			 k == 1 ? "" : "s");
		st->host->say(st->host->ud, line);
	}
}

static void stand_backend_shutdown(exec_backend *b)
{
	stand_shutdown(&stand_of(b)->base);
}

static void stand_close(exec_backend *b)
{
	stand_destroy(&stand_of(b)->base);
}

static const exec_backend_ops stand_backend_ops = {
	.name = "process", .title = "this machine", .units = "stand-in units",
	.open = stand_open, .start = stand_start, .attach = stand_attach,
	.adoptable = stand_adoptable, .adopt = stand_adopt, .lose = stand_lose,
	.sweep = stand_sweep, .shutdown = stand_backend_shutdown, .close = stand_close,
};

/* The table the driver looks trial.executor up in: process experiments
 * run on the stand-in. */
static const exec_backend_row stand_rows[] = {{EXEC_PROCESS, &stand_backend_ops}};

/* o runs its process experiments on the stand-in of box. */
static void stand_options(live_options *o, stand_box *box)
{
	o->backends = stand_rows;
	o->n_backends = 1;
	o->backend_settings[EXEC_PROCESS] = box;
}

/* Plan helpers: lines for epochs from+1 .. to with a value, then an end. */
static void stand_epochs(stand_plan *p, double from, double to, double value)
{
	for (int e = (int)from + 1; e <= (int)to && p->n_lines < STAND_MAX_LINES; e++)
		snprintf(p->lines[p->n_lines++], sizeof p->lines[0],
			 "RELISH epoch=%d accuracy=%.4f", e, value + e * 0.01);
}

static void stand_end_as(stand_plan *p, seg_outcome o, int exit_code, uint64_t peak_mib,
			 const char *reason)
{
	memset(&p->end, 0, sizeof p->end);
	p->end.outcome = o;
	p->end.exited = 1;
	p->end.exit_code = exit_code;
	p->end.peak_rss_bytes = peak_mib << 20;
	snprintf(p->end.reason, sizeof p->end.reason, "%s", reason);
}

#endif
