/*
 * mem.c - the memory policy, once for every driver: what a segment's
 * out-of-memory end means for its trial (re-queue with a raised floor, run
 * alone, fail), when a request can never be placed, and the learner's
 * averaging rule.  The live driver (src/live/segment_end.c, recover.c) and
 * the simulator (src/sim/sim.c) call these functions and apply what they
 * return; neither decides anything about memory itself, so a simulated
 * out-of-memory makes the same decision as a live one.
 *
 * Why these rules (docs/scheduling.md, "Out of memory"):
 *   - Only a measurement fails a trial: running out of memory alone on a
 *     device empty of others, or declaring more memory than any device has.
 *     An estimate above every device (a measured peak plus its margin, a
 *     family prediction, an out-of-memory floor) means "run alone", because
 *     the same configuration may well fit a whole device.
 *   - The floor after an out-of-memory grows geometrically (oom_factor on
 *     the reservation it had, or the peak seen plus the margin), and after
 *     oom_alone_after in a row the trial runs alone: a trial whose memory
 *     keeps growing reaches a whole device after a few attempts and is then
 *     measured, instead of climbing a long ladder of small raises or being
 *     failed after an arbitrary count.
 */
#include "sched/sched_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double sched_ewma(double old, double sample)
{
	if (isnan(old))
		return sample;
	if (isnan(sample))
		return old;
	return old + SCHED_EWMA_ALPHA * (sample - old);
}

const char *sched_mem_verdict_name(sched_mem_verdict v)
{
	static const char *const names[] = {
		[SCHED_MEM_NONE] = "none", [SCHED_MEM_RAISE] = "raise",
		[SCHED_MEM_ALONE] = "alone", [SCHED_MEM_WAIT] = "wait",
		[SCHED_MEM_FAIL] = "fail",
	};
	return (unsigned)v < sizeof names / sizeof names[0] ? names[v] : "unknown";
}

static uint64_t ceil_mib(double v)
{
	if (!(v > 0))
		return 0;
	if (v > 1e15)
		return (uint64_t)1e15;
	return (uint64_t)ceil(v - 1e-9);
}

uint64_t mem_oom_need(const sched *s, uint64_t peak_mib, uint64_t reserved_mib)
{
	uint64_t by_res = ceil_mib((double)reserved_mib * s->opt.oom_factor);
	uint64_t held = peak_mib > reserved_mib ? peak_mib : reserved_mib;
	uint64_t by_peak = ceil_mib((double)held * (1.0 + s->opt.memory_margin));
	uint64_t need = by_res > by_peak ? by_res : by_peak;
	/* It needed more than it had, whatever the factors say. */
	if (need <= reserved_mib)
		need = reserved_mib + 1;
	return need;
}

void sched_mem_rule(const sched *s, const sched_mem_end *e, sched_mem_history *h,
		    sched_mem_decision *out)
{
	memset(out, 0, sizeof *out);
	out->alone = e->alone;
	if (e->outcome == SEG_OUT_COMPLETED) {
		h->ooms_in_row = 0;
		h->foreign_ooms = 0;
		h->exclusive = 0;
	}
	if (e->outcome != SEG_OUT_OOM) {
		out->verdict = SCHED_MEM_NONE;
		out->min_mem_mib = h->min_mem_mib;
		out->exclusive = h->exclusive;
		return;
	}
	h->ooms++;
	int cls = e->is_gpu || !s->n_cls[CLS_HOST] ? CLS_GPU : CLS_HOST;
	uint64_t largest = s->idx[cls].max_total;
	if (e->foreign_mib > 0) {
		/* Others' memory was on the device: it was not alone on an
		 * empty device, so this is no proof of anything it needs. */
		h->foreign_ooms++;
		if (s->opt.oom_foreign_max > 0 && h->foreign_ooms > s->opt.oom_foreign_max) {
			out->verdict = SCHED_MEM_FAIL;
			snprintf(out->reason, sizeof out->reason,
				 "out of memory %d times in a row while processes relish does not "
				 "own used its device (%llu MiB)",
				 h->foreign_ooms, (unsigned long long)e->foreign_mib);
		} else if (e->peak_mib && e->peak_mib < e->reserved_mib) {
			/* It died within what it had: the others took it. */
			out->verdict = SCHED_MEM_WAIT;
			snprintf(out->reason, sizeof out->reason,
				 "others used %llu MiB of its device; re-queued with %llu MiB",
				 (unsigned long long)e->foreign_mib,
				 (unsigned long long)(h->min_mem_mib > e->reserved_mib
							      ? h->min_mem_mib : e->reserved_mib));
			if (e->reserved_mib > h->min_mem_mib && !e->alone)
				h->min_mem_mib = e->reserved_mib;
		} else if (e->alone) {
			/* It had all the others left: wait for a device with more. */
			uint64_t need = e->reserved_mib + 1;
			if (largest && need > largest)
				need = largest;
			if (need > h->min_mem_mib)
				h->min_mem_mib = need;
			h->exclusive = 1;
			out->verdict = SCHED_MEM_WAIT;
			snprintf(out->reason, sizeof out->reason,
				 "others used %llu MiB of its device; waiting for a device with "
				 "%llu MiB free", (unsigned long long)e->foreign_mib,
				 (unsigned long long)h->min_mem_mib);
		} else {
			h->ooms_in_row++;
			uint64_t need = mem_oom_need(s, e->peak_mib, e->reserved_mib);
			if (largest && need > largest)
				need = largest;
			if (need > h->min_mem_mib)
				h->min_mem_mib = need;
			out->verdict = SCHED_MEM_WAIT;
			snprintf(out->reason, sizeof out->reason,
				 "others used %llu MiB of its device; re-queued with at least %llu MiB",
				 (unsigned long long)e->foreign_mib,
				 (unsigned long long)h->min_mem_mib);
		}
		out->min_mem_mib = h->min_mem_mib;
		out->exclusive = h->exclusive;
		out->foreign_mib = e->foreign_mib;
		return;
	}
	h->foreign_ooms = 0;
	h->ooms_in_row++;
	if (e->alone && e->device_mib < largest) {
		/* Alone on a device smaller than others: try a larger one. */
		if (e->device_mib + 1 > h->min_mem_mib)
			h->min_mem_mib = e->device_mib + 1;
		h->exclusive = 1;
		out->verdict = SCHED_MEM_ALONE;
		snprintf(out->reason, sizeof out->reason,
			 "re-placed to run alone on a device larger than %llu MiB",
			 (unsigned long long)e->device_mib);
	} else if (e->alone) {
		out->verdict = SCHED_MEM_FAIL;
		snprintf(out->reason, sizeof out->reason,
			 "out of memory alone on an empty device (%llu MiB)",
			 (unsigned long long)(e->reserved_mib ? e->reserved_mib : e->device_mib));
	} else {
		uint64_t need = mem_oom_need(s, e->peak_mib, e->reserved_mib);
		if (largest && need > largest)
			need = largest;
		if (need > h->min_mem_mib)
			h->min_mem_mib = need;
		if ((largest && h->min_mem_mib >= largest) ||
		    (s->opt.oom_alone_after > 0 && h->ooms_in_row >= s->opt.oom_alone_after)) {
			h->exclusive = 1;
			out->verdict = SCHED_MEM_ALONE;
			/* "stopped for memory": out of memory or over its
			 * reservation, which this rule counts alike; "out of
			 * memory" read as the machine having run out (issue 30,
			 * item 8) */
			snprintf(out->reason, sizeof out->reason,
				 "re-placed to run alone (stopped for memory %d time%s in a row)",
				 h->ooms_in_row, h->ooms_in_row == 1 ? "" : "s");
		} else {
			out->verdict = SCHED_MEM_RAISE;
			snprintf(out->reason, sizeof out->reason,
				 "re-placed with at least %llu MiB",
				 (unsigned long long)h->min_mem_mib);
		}
	}
	out->min_mem_mib = h->min_mem_mib;
	out->exclusive = h->exclusive;
}

int sched_mem_decide(const sched *s, uint64_t seg_id, const sched_observation *obs,
		     sched_mem_history *h, sched_mem_decision *out, rl_err *err)
{
	size_t gi = sched__map_get(&s->seg_map, seg_id, 0);
	if (gi == SCHED_NONE || s->seg[gi].state != SEG_RUNNING)
		return rl_err_set(err, RL_ENOTFOUND, "segment %llu is not running",
				  (unsigned long long)seg_id);
	const sched_seg *g = &s->seg[gi];
	sched_mem_end e = {
		.outcome = obs->outcome, .peak_mib = obs->peak_mem_mib,
		.reserved_mib = g->pl.mem_mib,
	};
	uint64_t dev_mib = UINT64_MAX;
	for (int k = 0; k < g->pl.n_dev; k++) {
		const sched_dev *d = &s->dev[g->pl.dev[k]];
		if (d->info.mem_total_mib < dev_mib)
			dev_mib = d->info.mem_total_mib;
		e.is_gpu = d->cls == CLS_GPU;
	}
	e.device_mib = dev_mib == UINT64_MAX ? 0 : dev_mib;
	/* Alone: its devices were whole (held, or all their memory reserved
	 * to it, so nothing else could fit) and no segment overlapped it.
	 * An adopted segment's past is unknown: not alone. */
	int whole = g->held || (e.device_mib && g->pl.mem_mib >= e.device_mib);
	e.alone = whole && g->n_ov == 0 && !g->adopted;
	e.foreign_mib = g->foreign_seen;
	sched_mem_rule(s, &e, h, out);
	return 0;
}

void sched_mem_apply(const sched_mem_history *h, sched_request *req)
{
	req->min_mem_mib = h->min_mem_mib;
	req->exclusive = h->exclusive;
}

static int class_fits(const sched *s, const sched_request *req, int cls, char *why, size_t n)
{
	int k = req->n_devices > 1 ? req->n_devices : 1;
	if ((size_t)k > s->n_cls[cls]) {
		if (why)
			snprintf(why, n, "it needs %d %s, and relish has %zu", k,
				 cls == CLS_GPU ? "GPUs" : "host devices", s->n_cls[cls]);
		return 0;
	}
	return 1;
}

int sched_never_fits(const sched *s, const sched_request *req, char *why, size_t why_n)
{
	int cls = sched__req_class(s, req);
	if (why && why_n)
		why[0] = '\0';
	if (!class_fits(s, req, cls, why, why_n))
		return 1;
	uint64_t largest = s->idx[cls].max_total;
	if (req->mem_hint_mib && req->mem_hint_mib > largest) {
		if (why)
			snprintf(why, why_n,
				 "it declares %llu MiB, more than any %s has (%llu MiB)",
				 (unsigned long long)req->mem_hint_mib,
				 cls == CLS_GPU ? "GPU" : "host device", (unsigned long long)largest);
		return 1;
	}
	return 0;
}

int sched_fits_ever(const sched *s, const sched_request *req)
{
	return !sched_never_fits(s, req, NULL, 0);
}

int mem_class_placeable(const sched *s, const sched_request *req)
{
	return class_fits(s, req, sched__req_class(s, req), NULL, 0);
}

/* ---- foreign use ---------------------------------------------------------- */

int sched_device_set_foreign(sched *s, int dev, uint64_t mib, double now)
{
	if (dev < 0 || (size_t)dev >= s->n_dev)
		return RL_ENOTFOUND;
	if (now > s->last_now)
		s->last_now = now;
	sched_dev *d = &s->dev[dev];
	/* Running segments remember the most they saw beside them: an
	 * out-of-memory among others' memory is not one alone. */
	for (size_t i = 0; mib && i < d->n_run; i++)
		if (s->seg[d->run[i]].foreign_seen < mib)
			s->seg[d->run[i]].foreign_seen = mib;
	uint64_t counted = 0;
	if (mib) {
		uint64_t margin = ceil_mib((double)mib * s->opt.foreign_margin);
		if (margin < s->opt.foreign_margin_mib)
			margin = s->opt.foreign_margin_mib;
		counted = mib + margin;
		if (counted > d->info.mem_total_mib)
			counted = d->info.mem_total_mib;
	}
	int avoided = s->opt.foreign == SCHED_FOREIGN_AVOID && mib > 0;
	if (counted == d->foreign && avoided == d->avoided) {
		d->foreign_raw = mib;
		return 0;
	}
	uint64_t before = sched__dev_free(d);
	int was_avoided = d->avoided, had = d->foreign || d->avoided;
	d->foreign_raw = mib;
	d->foreign = counted;
	d->avoided = avoided;
	int has = d->foreign || d->avoided;
	if (had != has) {
		if (has)
			s->n_foreign[d->cls]++;
		else
			s->n_foreign[d->cls]--;
	}
	devidx_update(s, d);
	/* More free memory, or no longer avoided: what was refused there
	 * may fit now.  Less needs no touch: a refusal stays a refusal. */
	if (sched__dev_free(d) > before || (was_avoided && !avoided))
		sched__touch_dev(s, d);
	return 0;
}

sched_wait sched_foreign_wait(sched *s, uint64_t seg_id, double now, sched_wait_info *info)
{
	sched_wait_info wi = {.dev = -1, .since = -1};
	size_t gi = sched__map_get(&s->seg_map, seg_id, 0);
	if (gi == SCHED_NONE || s->seg[gi].state != SEG_QUEUED) {
		if (info)
			*info = wi;
		return SCHED_WAIT_NONE;
	}
	sched_seg *g = &s->seg[gi];
	int cls = sched__req_class(s, &g->req);
	sched_mem_estimate e;
	est_reserve(s, &g->req, g->prof, cls, &e);
	int whole = e.basis == SCHED_BASIS_EXCLUSIVE || g->req.n_devices > 1;
	size_t n = g->req.n_devices > 1 ? (size_t)g->req.n_devices : 1;
	uint64_t need = whole ? 0 : (e.reserve_mib ? e.reserve_mib : 1);
	uint64_t floor = g->req.min_mem_mib;
	if (s->prof[g->prof].oom_floor > floor)
		floor = s->prof[g->prof].oom_floor;
	if (floor > s->idx[cls].max_total)
		floor = s->idx[cls].max_total;
	if (floor < 1)
		floor = 1;
	/* Devices that take it now, and that would without others' memory
	 * (memory only: a relish refusal for interference is no wait). */
	size_t now_ok = 0, clean_ok = 0;
	for (size_t k = 0; k < s->n_cls[cls]; k++) {
		const sched_dev *d = &s->dev[s->cls_dev[cls][k]];
		uint64_t total = d->info.mem_total_mib;
		uint64_t clean_free = d->mem_res < total ? total - d->mem_res : 0;
		int c = whole ? !d->n_run && total >= floor : !d->held && clean_free >= need;
		int ok = c && !d->avoided && sched__dev_free(d) >= (whole ? floor : need);
		now_ok += ok;
		clean_ok += c;
		if (c && !ok && (wi.dev < 0 || d->foreign_raw > wi.foreign_mib)) {
			wi.dev = s->cls_dev[cls][k];
			wi.foreign_mib = d->foreign_raw;
		}
	}
	if (now_ok >= n || clean_ok < n || wi.dev < 0) {
		g->wait_since = -1;
		if (info)
			*info = (sched_wait_info){.dev = -1, .since = -1};
		return SCHED_WAIT_NONE;
	}
	if (g->wait_since < 0)
		g->wait_since = now;
	wi.need_mib = need;
	wi.since = g->wait_since;
	wi.waited_s = now > g->wait_since ? now - g->wait_since : 0;
	if (info)
		*info = wi;
	if (g->req.foreign_wait_s > 0 && wi.waited_s >= g->req.foreign_wait_s)
		return SCHED_WAIT_EXPIRED;
	return SCHED_WAIT_FOREIGN;
}
