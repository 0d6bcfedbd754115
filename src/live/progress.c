/*
 * progress.c - what `relish run` shows while it runs.
 *
 * On a terminal: a compact block redrawn in place at most every 250 ms,
 * one line per experiment and one per device (or one for all devices when
 * they would not fit the screen's height):
 *   digits  23/64 trials  5 done  2 running  14 stopped  best 0.986111 (trial 17)  3m05s  ETA 4m
 *   host  2 running  1.2/23.1 GiB reserved  1.9 GiB in use
 *   GPU-8f3c...  1 running  3.2/8.0 GiB reserved  2.9 GiB in use  2.6 GiB used by others
 * (an experiment's line adds "N waiting (others' memory)" while segments wait
 * for memory that processes relish does not own hold)
 * Every line fits the terminal's width: fields are dropped from the least
 * needed (the counts, the ETA) and what still does not fit ends in an
 * ellipsis, so no line ever wraps and the redraw (cursor up, clear to the
 * end of the screen) always starts where the block began.  The width is
 * read again when the terminal is resized (SIGWINCH, through libuv), and
 * the block is redrawn at once.  Elapsed time is this run's; the ETA is
 * the trials still to finish at the rate they finished in this run.
 * Events worth keeping (failures, out-of-memory, resume) are printed above
 * the block.  Otherwise (a pipe, a log file): one plain line per segment
 * end and per event, e.g.
 *   ctrial: trial 7 segment 1-3 completed accuracy=0.91 on host (reserved 512 MiB, peak 341 MiB)
 * --quiet prints nothing here.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "live/live_int.h"
#include "telemetry/procmem.h"

#define DRAW_EVERY_MS 250
#define LINE_BYTES 1024

/* ---- the terminal -------------------------------------------------------- */

/* Columns and rows of the progress terminal; 80x24 when it cannot tell. */
static void term_size(live *d)
{
	struct winsize ws;
	if (ioctl(fileno(d->out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		d->cols = ws.ws_col;
		d->rows = ws.ws_row > 0 ? ws.ws_row : 24;
	} else {
		d->cols = 80;
		d->rows = 24;
	}
}

/* Characters (UTF-8 code points) of s. */
static int text_width(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Cut s to at most w characters, the last one an ellipsis when cut. */
static void cut(char *s, int w)
{
	if (w < 1) {
		s[0] = '\0';
		return;
	}
	if (text_width(s) <= w)
		return;
	char *p = s;
	for (int k = 0; *p && k < w - 1; k++) {
		p++;
		while (((unsigned char)*p & 0xC0) == 0x80)
			p++;
	}
	/* room for 3 bytes: the line buffers are far larger than a screen */
	memcpy(p, "\xe2\x80\xa6", 4);
}

/*
 * Join fields[0..n) with two spaces into out, dropping fields while the
 * line is wider than w: the highest drop rank first (rank 0: never
 * dropped), later fields first among equals.  Then cut to w.
 */
static void fit(char *out, size_t size, int w, const char *const *fields, const int *rank,
		size_t n)
{
	int keep[16];
	for (size_t i = 0; i < n && i < 16; i++)
		keep[i] = fields[i] && fields[i][0];
	for (;;) {
		out[0] = '\0';
		size_t used = 0;
		for (size_t i = 0; i < n && i < 16; i++) {
			if (!keep[i])
				continue;
			int k = snprintf(out + used, size - used, "%s%s", used ? "  " : "", fields[i]);
			if (k > 0)
				used = used + (size_t)k < size ? used + (size_t)k : size - 1;
		}
		if (text_width(out) <= w)
			return;
		int worst = -1;
		for (size_t i = 0; i < n && i < 16; i++)
			if (keep[i] && rank[i] > 0 && (worst < 0 || rank[i] >= rank[worst]))
				worst = (int)i;
		if (worst < 0)
			break;
		keep[worst] = 0;
	}
	cut(out, w);
}

static void erase(live *d)
{
	if (!d->drawn_lines)
		return;
	/* Up to the block's first line, then clear to the end of the screen:
	 * the lines never wrapped, so this is exactly where it began. */
	fprintf(d->out, "\r\033[%dA\033[J", d->drawn_lines);
	d->drawn_lines = 0;
}

void live__progress_line(live *d, const char *fmt, ...)
{
	if (d->opt.quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	if (d->opt.line_fn) {
		/* service: one log line each */
		char buf[1024];
		vsnprintf(buf, sizeof buf, fmt, ap);
		va_end(ap);
		d->opt.line_fn(d->opt.line_ctx, buf);
		return;
	}
	if (d->tty)
		erase(d);
	vfprintf(d->out, fmt, ap);
	va_end(ap);
	fputc('\n', d->out);
	fflush(d->out);
}

static void fmt_res(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.10g", v);
}

void live__progress_segment(live *d, const live_seg *g, const char *outcome, uint64_t peak_mib,
			   const char *why)
{
	if (d->opt.quiet || (d->tty && !why))
		return;
	const live_exp *x = g->x;
	char a[32], b[32], val[64] = "";
	fmt_res(g->from, a, sizeof a);
	fmt_res(g->to, b, sizeof b);
	if (!isnan(g->last_obj))
		snprintf(val, sizeof val, " %s=%.6g", x->sp->objective.metric, g->last_obj);
	/* Trials are named by their id in the store, as `relish trials`,
	 * `best` and `logs` name them. */
	int64_t id = x->trials[g->trial].store_id;
	/* 0 is no sample: the segment ended before the first one (the core
	 * learns nothing from it either), not a segment that used nothing. */
	char peak[32] = "peak not sampled";
	if (peak_mib)
		snprintf(peak, sizeof peak, "peak %llu MiB", (unsigned long long)peak_mib);
	/* A segment that went wrong says where the rest of its story is. */
	char logs[600] = "";
	if (why) {
		char cmd[560];
		live__logs_command(d, id, cmd, sizeof cmd);
		snprintf(logs, sizeof logs, " (%s)", cmd);
	}
	live__progress_line(d, "%s: trial %lld segment %s-%s %s%s on %s (reserved %llu MiB, %s)%s%s%s",
			   x->sp->name, (long long)id, a, b, outcome, val,
			   d->devs->dev[g->dev].info.uuid, (unsigned long long)g->mem_mib, peak,
			   why ? ": " : "", why ? why : "", logs);
}

/* "341 MiB" below a GiB, "1.2 GiB" above. */
static void fmt_mem(uint64_t mib, char *buf, size_t n)
{
	if (mib < 1024)
		snprintf(buf, n, "%llu MiB", (unsigned long long)mib);
	else
		snprintf(buf, n, "%.1f GiB", (double)mib / 1024.0);
}

/* "12s", "3m05s", "1h02m", "2d03h". */
static void fmt_dur(double s, char *buf, size_t n)
{
	long long v = s > 0 ? (long long)(s + 0.5) : 0;
	if (v >= 86400)
		snprintf(buf, n, "%lldd%02lldh", v / 86400, v % 86400 / 3600);
	else if (v >= 3600)
		snprintf(buf, n, "%lldh%02lldm", v / 3600, v % 3600 / 60);
	else if (v >= 60)
		snprintf(buf, n, "%lldm%02llds", v / 60, v % 60);
	else
		snprintf(buf, n, "%llds", v);
}

static uint64_t now_ms(live *d)
{
	return (uint64_t)(live__mono(d) * 1000.0);
}

/* Current RSS of every running segment (one /proc scan). */
void live__sample_rss(live *d)
{
	pid_t pg[64];
	live_seg *gs[64];
	size_t n = 0;
	for (live_seg *g = d->segs; g && n < 64; g = g->next)
		if (g->es && g->pid > 0) {
			pg[n] = g->pid;
			gs[n++] = g;
		}
	uint64_t rss[64];
	if (n && procmem_sample(pg, n, rss, NULL, NULL, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			gs[i]->rss_now = rss[i];
}

static size_t final_trials(const live_exp *x)
{
	size_t c[TRIAL_N_STATES];
	engine_counts(x->eng, c);
	return c[TRIAL_COMPLETED] + c[TRIAL_STOPPED] + c[TRIAL_FAILED];
}

/* One experiment's line, fitted to w characters. */
static void exp_line(live *d, live_exp *x, double now, int w, char *out, size_t size)
{
	size_t c[TRIAL_N_STATES];
	engine_counts(x->eng, c);
	char trials[64], done[32], run[32], stop[32], failed[32], best[160] = "", el[32], eta[48] = "";
	snprintf(trials, sizeof trials, "%llu/%d trials", (unsigned long long)engine_n_trials(x->eng),
		 x->sp->search.max_trials);
	snprintf(done, sizeof done, "%zu done", c[TRIAL_COMPLETED]);
	snprintf(run, sizeof run, "%zu running", engine_running(x->eng));
	snprintf(stop, sizeof stop, "%zu stopped", c[TRIAL_STOPPED]);
	failed[0] = '\0';
	if (c[TRIAL_FAILED])
		snprintf(failed, sizeof failed, "%zu failed", c[TRIAL_FAILED]);
	engine_trial_view bv;
	if (engine_best(x->eng, &bv, NULL) == 0)
		snprintf(best, sizeof best, "best %.6g (trial %lld)", bv.value,
			 (long long)x->trials[bv.index].store_id);
	/* Segments waiting for memory that processes relish does not own hold. */
	size_t n_wait = 0;
	for (live_seg *g = d->segs; g; g = g->next)
		n_wait += g->x == x && !g->placed && g->waiting_since;
	char waiting[48] = "";
	if (n_wait)
		snprintf(waiting, sizeof waiting, "%zu waiting (others' memory)", n_wait);
	double elapsed = now - d->run_started;
	fmt_dur(elapsed, el, sizeof el);
	/* ETA: the trials left, at the rate this run has finished them. */
	size_t fin = final_trials(x);
	size_t gained = fin > x->final_at_start ? fin - x->final_at_start : 0;
	size_t left = (size_t)x->sp->search.max_trials > fin ? (size_t)x->sp->search.max_trials - fin : 0;
	if (x->done) {
		snprintf(eta, sizeof eta, "finished");
	} else if (gained > 0 && elapsed >= 2) {
		char t[32];
		fmt_dur(elapsed / (double)gained * (double)left, t, sizeof t);
		snprintf(eta, sizeof eta, "ETA %s", t);
	}
	/* A long name gives way first (to a third of the line), then the
	 * counts, the ETA, the elapsed time, the best. */
	char name[LINE_BYTES];
	snprintf(name, sizeof name, "%s", x->sp->name);
	int name_w = w / 3 > 12 ? w / 3 : 12;
	if (text_width(name) > name_w && text_width(name) + 40 > w)
		cut(name, name_w);
	const char *f[] = {name, trials, done, run, stop, failed, waiting, best, el, eta};
	static const int rank[] = {0, 0, 5, 4, 6, 3, 3, 1, 2, 2};
	fit(out, size, w, f, rank, sizeof f / sizeof f[0]);
}

/* One device's line (or all devices' when i < 0), fitted to w. */
static void dev_line(live *d, int i, int w, char *out, size_t size)
{
	size_t nd = sched_device_count(d->core);
	uint64_t reserved = 0, total = 0, used = 0, others = 0;
	size_t running = 0, shown = 0, avoided = 0;
	const char *name = "host";
	for (size_t k = 0; k < nd; k++) {
		if (i >= 0 && (int)k != i)
			continue;
		sched_device_state ds;
		if (sched_device_get(d->core, (int)k, &ds) < 0)
			continue;
		shown++;
		if (i >= 0)
			name = ds.info.is_gpu ? ds.info.uuid : "host";
		reserved += ds.mem_reserved_mib;
		total += ds.info.mem_total_mib;
		running += ds.n_running;
		others += ds.foreign_mib;
		avoided += ds.avoided;
		for (live_seg *g = d->segs; g; g = g->next)
			if (g->es && g->dev == (int)k)
				used += ds.info.is_gpu ? g->gpu_peak_mib << 20 : g->rss_now;
	}
	char nm[96], run[32], res[96], r[32], t[32], u[32], inuse[48];
	if (i < 0)
		snprintf(nm, sizeof nm, "%zu devices", shown);
	else
		snprintf(nm, sizeof nm, "%s", name);
	snprintf(run, sizeof run, "%zu running", running);
	fmt_mem(reserved, r, sizeof r);
	fmt_mem(total, t, sizeof t);
	fmt_mem(used >> 20, u, sizeof u);
	snprintf(res, sizeof res, "%s / %s reserved", r, t);
	snprintf(inuse, sizeof inuse, "%s in use", u);
	/* Memory of processes relish does not own, as such. */
	char oth[64] = "";
	if (others) {
		char o[32];
		fmt_mem(others, o, sizeof o);
		snprintf(oth, sizeof oth, "%s used by others%s", o, avoided ? " (avoided)" : "");
	}
	const char *f[] = {nm, run, res, inuse, oth};
	static const int rank[] = {0, 0, 1, 2, 1};
	fit(out, size, w, f, rank, sizeof f / sizeof f[0]);
}

void live__progress_draw(live *d, int force)
{
	if (!d->tty || d->opt.quiet)
		return;
	uint64_t t = now_ms(d);
	if (!force && t - d->last_draw_ms < DRAW_EVERY_MS)
		return;
	d->last_draw_ms = t;
	if (!d->cols)
		term_size(d);
	live__sample_rss(d);
	erase(d);
	/* Never at the last column: some terminals wrap a line that fills
	 * it, and the redraw must know where the block starts. */
	int w = d->cols > 1 ? d->cols - 1 : 1;
	double now = live__mono(d);
	char line[LINE_BYTES];
	int lines = 0;
	for (size_t i = 0; i < d->n_exps; i++) {
		exp_line(d, d->exps[i], now, w, line, sizeof line);
		fprintf(d->out, "%s\n", line);
		lines++;
	}
	size_t nd = d->core ? sched_device_count(d->core) : 0;
	/* The block must fit the screen's height too, or the redraw could not
	 * reach its top: one line for all devices when they would not. */
	if (nd > 0 && (int)(d->n_exps + nd) >= d->rows - 1) {
		dev_line(d, -1, w, line, sizeof line);
		fprintf(d->out, "%s\n", line);
		lines++;
	} else {
		for (size_t i = 0; i < nd; i++) {
			dev_line(d, (int)i, w, line, sizeof line);
			fprintf(d->out, "%s\n", line);
			lines++;
		}
	}
	fflush(d->out);
	d->drawn_lines = lines;
}

/* ---- resizes ----------------------------------------------------------------- */

static void winch_cb(uv_signal_t *h, int signum)
{
	(void)signum;
	live *d = h->data;
	term_size(d);
	live__progress_draw(d, 1);
}

void live__progress_begin(live *d)
{
	d->run_started = live__mono(d);
	for (size_t i = 0; i < d->n_exps; i++)
		d->exps[i]->final_at_start = final_trials(d->exps[i]);
	if (!d->tty || d->opt.quiet || d->winch_ready)
		return;
	term_size(d);
	if (uv_signal_init(&d->loop, &d->winch) == 0) {
		d->winch.data = d;
		d->winch_ready = 1;
		uv_signal_start(&d->winch, winch_cb, SIGWINCH);
	}
}

static void winch_closed(uv_handle_t *h)
{
	(void)h;
}

void live__progress_end(live *d)
{
	if (!d->winch_ready)
		return;
	d->winch_ready = 0;
	uv_close((uv_handle_t *)&d->winch, winch_closed);
}

void live__progress_clear(live *d)
{
	/* The last block stays on the screen: it is the run's summary. */
	d->drawn_lines = 0;
}
