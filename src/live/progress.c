/*
 * progress.c - what `relish run` shows while it runs.
 *
 * On a terminal: a compact block redrawn in place at most every 250 ms
 * (ANSI: cursor up, clear line), one line per experiment and one per
 * device:
 *   digits: 23/64 trials  done 5  running 2  stopped 14  failed 0  best accuracy=0.9861 (trial 17)
 *   host: 2 running, 1.2/23.1 GiB reserved, 1.9 GiB in use
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

#include "live/live_int.h"
#include "telemetry/procmem.h"

#define DRAW_EVERY_MS 250

static void erase(live *d)
{
	for (int i = 0; i < d->drawn_lines; i++)
		fputs("\033[1A\033[2K", d->out);
	d->drawn_lines = 0;
}

void live_progress_line(live *d, const char *fmt, ...)
{
	if (d->opt.quiet)
		return;
	if (d->tty)
		erase(d);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(d->out, fmt, ap);
	va_end(ap);
	fputc('\n', d->out);
	fflush(d->out);
}

static void fmt_res(double v, char *buf, size_t n)
{
	snprintf(buf, n, "%.10g", v);
}

void live_progress_segment(live *d, const live_seg *g, const char *outcome, uint64_t peak_mib,
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
	/* 0 is no sample: the segment ended before the first one (the core
	 * learns nothing from it either), not a segment that used nothing. */
	char peak[32] = "peak not sampled";
	if (peak_mib)
		snprintf(peak, sizeof peak, "peak %llu MiB", (unsigned long long)peak_mib);
	live_progress_line(d, "%s: trial %lld segment %s-%s %s%s on %s (reserved %llu MiB, %s)%s%s",
			   x->sp->name, (long long)x->trials[g->trial].store_id, a, b, outcome, val,
			   d->devs->dev[g->dev].info.uuid, (unsigned long long)g->mem_mib, peak,
			   why ? ": " : "", why ? why : "");
}

/* "341 MiB" below a GiB, "1.2 GiB" above. */
static void fmt_mem(uint64_t mib, char *buf, size_t n)
{
	if (mib < 1024)
		snprintf(buf, n, "%llu MiB", (unsigned long long)mib);
	else
		snprintf(buf, n, "%.1f GiB", (double)mib / 1024.0);
}

static uint64_t now_ms(live *d)
{
	return (uint64_t)(live_mono(d) * 1000.0);
}

/* Current RSS of every running segment (one /proc scan). */
static void sample_rss(live *d)
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

void live_progress_draw(live *d, int force)
{
	if (!d->tty || d->opt.quiet)
		return;
	uint64_t t = now_ms(d);
	if (!force && t - d->last_draw_ms < DRAW_EVERY_MS)
		return;
	d->last_draw_ms = t;
	sample_rss(d);
	erase(d);
	int lines = 0;
	for (size_t i = 0; i < d->n_exps; i++) {
		live_exp *x = d->exps[i];
		size_t c[TRIAL_N_STATES];
		engine_counts(x->eng, c);
		char best[160] = "";
		engine_trial_view bv;
		if (engine_best(x->eng, &bv, NULL) == 0)
			snprintf(best, sizeof best, "  best %s=%.6g (trial %lld)",
				 x->sp->objective.metric, bv.value,
				 (long long)x->trials[bv.index].store_id);
		fprintf(d->out, "%s: %llu/%d trials  done %zu  running %zu  stopped %zu  failed %zu%s%s\n",
			x->sp->name, (unsigned long long)engine_n_trials(x->eng),
			x->sp->search.max_trials, c[TRIAL_COMPLETED], engine_running(x->eng),
			c[TRIAL_STOPPED], c[TRIAL_FAILED], best, x->done ? "  (finished)" : "");
		lines++;
	}
	size_t nd = d->core ? sched_device_count(d->core) : 0;
	for (size_t i = 0; i < nd; i++) {
		sched_device_state ds;
		if (sched_device_get(d->core, (int)i, &ds) < 0)
			continue;
		uint64_t used = 0;
		for (live_seg *g = d->segs; g; g = g->next)
			if (g->es && g->dev == (int)i)
				used += ds.info.is_gpu ? g->gpu_peak_mib << 20 : g->rss_now;
		char r[32], tot[32], u[32];
		fmt_mem(ds.mem_reserved_mib, r, sizeof r);
		fmt_mem(ds.info.mem_total_mib, tot, sizeof tot);
		fmt_mem(used >> 20, u, sizeof u);
		fprintf(d->out, "%s: %zu running, %s / %s reserved, %s in use\n",
			ds.info.is_gpu ? ds.info.uuid : "host", ds.n_running, r, tot, u);
		lines++;
	}
	fflush(d->out);
	d->drawn_lines = lines;
}

void live_progress_clear(live *d)
{
	/* The last block stays on the screen: it is the run's summary. */
	d->drawn_lines = 0;
}
