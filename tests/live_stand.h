/*
 * live_stand.h - a stand-in executor for tests of the live driver
 * (tests/test_live.c): an exec_ops implementation that runs no process.
 * Each launch asks the test's script what the segment does (its metric
 * lines, then how it ends, each after a delay on the driver's own libuv
 * loop), so the real driver (src/live) meets scripted segment ends, as a
 * scheduler test links the real scheduler against stubbed nodes and
 * replays a job list.
 *
 * What it keeps for assertions: every launch (argv, environment, memory
 * limit, the segment's range) in launch order.  It writes each line to the
 * segment's log before reporting it, as the process executor does, so
 * recovery can read logs back.  Included by test files only (static
 * functions, one copy each).
 */
#ifndef RELISH_TEST_LIVE_STAND_H
#define RELISH_TEST_LIVE_STAND_H

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "exec/contract.h"
#include "exec/exec.h"

#define STAND_MAX_LINES 16
#define STAND_MAX_LAUNCHES 64

/* What one segment does: lines (each after delay_ms), then its end. */
typedef struct stand_plan {
	size_t n_lines;
	char lines[STAND_MAX_LINES][160];
	unsigned delay_ms;          /* before each line and before the end */
	int hang;                   /* never ends by itself, only by cancel */
	int ignore_cancel;          /* a cancel does not end it either */
	exec_result end;            /* outcome, exit code, peak, reason ... */
} stand_plan;

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
		r.outcome = SCHED_OUT_CANCELLED;
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
	g->plan.end.outcome = SCHED_OUT_COMPLETED;
	g->plan.end.exited = 1;
	snprintf(g->plan.end.reason, sizeof g->plan.end.reason, "completed");
	st->plan(st, st->n_launches, es, &g->plan);
	st->n_launches++;
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
	(void)ex, (void)g, (void)out;
	return RL_EUNSUPPORTED; /* no process: nothing to record */
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
	for (struct exec_segment *g = st->segs; g; g = g->next)
		if (!g->ended) {
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

/* The test's handle on the executor the driver makes (live_options
 * executor_new with ctx = a stand_box). */
typedef struct stand_box {
	stand_plan_fn plan;
	void *ctx;
	stand *st;                  /* set when the driver made it */
} stand_box;

static int stand_new(struct uv_loop_s *loop, void *ctx, struct executor **out, rl_err *err)
{
	stand_box *b = ctx;
	stand *st = calloc(1, sizeof *st);
	if (!st)
		return rl_err_set(err, RL_ENOMEM, "stand-in");
	st->base.ops = &stand_ops;
	st->base.impl = st;
	st->loop = loop;
	st->plan = b->plan;
	st->ctx = b->ctx;
	b->st = st;
	*out = &st->base;
	return 0;
}

/* Plan helpers: lines for epochs from+1 .. to with a value, then an end. */
static void stand_epochs(stand_plan *p, double from, double to, double value)
{
	for (int e = (int)from + 1; e <= (int)to && p->n_lines < STAND_MAX_LINES; e++)
		snprintf(p->lines[p->n_lines++], sizeof p->lines[0],
			 "RELISH epoch=%d accuracy=%.4f", e, value + e * 0.01);
}

static void stand_end_as(stand_plan *p, sched_outcome o, int exit_code, uint64_t peak_mib,
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
