/*
 * place.c - the placement policies: which queued segments start now, where,
 * with what memory reservation and compute share.
 *
 * One pass over the queue in the order policy's order (sched.c: fifo, las,
 * tiresias by a key fixed at submission; fair by users, scan_fair below).
 * Each segment is
 * tried against the devices of its class (GPU, or the host when a host
 * device exists); one that does not fit is skipped, so smaller segments
 * behind it may start (backfill).  Against starvation, the first segment of
 * each class that cannot be placed claims devices once it has waited
 * aging_s: nothing younger starts on a claimed device, which therefore
 * drains until the old segment fits.  Only that one head per class claims
 * (as in EASY backfilling), so packing elsewhere goes on.
 *
 * Policies:
 *   exclusive  every segment takes a whole empty device (the baseline);
 *   pack       reservation = declared hint, else the estimator's figure,
 *              else a whole device; best fit: the device left with the
 *              least free memory; host devices must also fit CPU shares,
 *              GPUs may be oversubscribed in compute (time-slicing);
 *   relish     reservation from measured profiles (estimate.c); among the
 *              devices where memory (and host CPUs) fit, only those where
 *              the co-location model (colocate.c) says the set's throughput
 *              grows by min_speedup; the largest modelled gain wins, near
 *              ties (0.02) go to best fit.
 * Segments with basis EXCLUSIVE (unknown shape, exclusive flag, the
 * exclusive policy) and gangs (n_devices > 1) take whole empty devices and
 * hold them: nothing else is placed there while they run.
 *
 * Cost: a segment whose reservation exceeds the largest free hole of its
 * class is rejected in O(1); a shape rejected everywhere is remembered until
 * the next placement or release, so a queue of thousands of look-alike
 * segments costs one device scan; when no device of any class has a free
 * byte the pass stops.  So a call is about O(queue + placed x devices).
 */
#include "sched/sched_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GAIN_TIE 0.02


/* The pass's view of a class: read from the device index (devindex.c).
 * Only here does max_free change, so the saturation flag is kept here. */
static void pass_refresh(const sched *s, pass *ps, int cls)
{
	ps->max_free[cls] = devidx_max_free(s, cls);
	ps->n_empty[cls] = devidx_n_empty(s, cls);
	ps->saturated = 1;
	for (int c = 0; c < CLS__COUNT; c++)
		if (s->n_cls[c] && ps->max_free[c] > 0)
			ps->saturated = 0;
}

/*
 * Pending claims.  A claim lasts one call; a device whose claim may have
 * refused something must then count as changed, or what it refused is
 * never looked at there again.  But a starving head claims the same
 * devices call after call, and touching them at every end (a new stamp,
 * the front of the most-recently-changed list) made every queued segment
 * look at them again in every call, only to find them claimed once more:
 * on the Philly trace at 64 GPUs, seven of every ten touches.  So a claim
 * that ends with refusals behind it leaves its device pending, and the
 * next call settles it: a segment looked at before the class's head (when
 * nothing is claimed yet) counts the pending devices as changed since
 * pend_stamp; once the head has claimed again, the pending devices it did
 * not claim are touched, and those it did stay pending.  A class whose
 * head is not seen in a call has its pending devices touched at the end.
 */
static int pend_open(const sched *s, const pass *ps, int cls, uint64_t m)
{
	return !ps->head_seen[cls] && s->n_pend[cls] && s->pend_stamp[cls] > m;
}

/* Touch class cls's pending devices that are not claimed now (all of
 * them: all set); the list keeps the others. */
static void pend_settle(sched *s, int cls, int all)
{
	size_t w = 0;
	for (size_t i = 0; i < s->n_pend[cls]; i++) {
		int di = s->pend_list[cls][i];
		sched_dev *d = &s->dev[di];
		if (!d->pend)
			continue; /* touched since (its entry goes now) */
		if (!all && d->claimed)
			s->pend_list[cls][w++] = di;
		else
			sched__touch_dev(s, d);
	}
	s->n_pend[cls] = w;
}

int place_commit(sched *s, size_t gi, const sched_placement *pl, double now)
{
	sched_seg *g = &s->seg[gi];
	size_t partners = 0;
	/* Grow everything first so that nothing can fail half-way. */
	/* One overlap record per partner segment, however many devices two
	 * gangs share (the learning divides by the overlap's length). */
	uint64_t mark = ++s->commit_id;
	for (int k = 0; k < pl->n_dev; k++) {
		sched_dev *d = &s->dev[pl->dev[k]];
		if (sched__grow((void **)&d->run, &d->cap_run, d->n_run + 1, sizeof *d->run))
			return RL_ENOMEM;
		for (size_t i = 0; i < d->n_run; i++) {
			sched_seg *y = &s->seg[d->run[i]];
			if (y->ov_mark == mark)
				continue;
			y->ov_mark = mark;
			partners++;
			if (sched__grow((void **)&y->ov, &y->cap_ov, y->n_ov + 1, sizeof *y->ov))
				return RL_ENOMEM;
		}
	}
	if (sched__grow((void **)&g->ov, &g->cap_ov, g->n_ov + partners, sizeof *g->ov))
		return RL_ENOMEM;
	s->work.partners += partners;
	/* the user's and the job's books */
	sched_user *u = &s->user[g->user];
	if (g->state == SEG_QUEUED) {
		u->n_queued--;
		s->n_queued--;
	}
	g->svc_start = g->adopted ? g->req.submit_time : now;
	double nd = (double)pl->n_dev;
	usage_start(s, u, nd, g->svc_start, now);
	u->n_running++;
	u->run_dev += nd;
	u->run_dev_start += nd * g->svc_start;
	u->mem_res += pl->mem_mib * (uint64_t)pl->n_dev;
	for (int k = 0; k < pl->n_dev; k++)
		if (!s->dev[pl->dev[k]].info.is_gpu) {
			u->host_mem_res += pl->mem_mib;
			u->host_cpu_res += pl->compute > SCHED_CPU_LEAST ? pl->compute : SCHED_CPU_LEAST;
		} else {
			u->run_gpus++;
		}
	if (g->job != SCHED_NONE)
		s->job[g->job].run_seg = gi;
	g->foreign_seen = 0;
	for (int k = 0; k < pl->n_dev; k++)
		if (s->dev[pl->dev[k]].foreign_raw > g->foreign_seen)
			g->foreign_seen = s->dev[pl->dev[k]].foreign_raw;
	g->wait_since = -1;
	g->g_util = s->prof[g->prof].util >= 0 ? s->prof[g->prof].util : 100;
	g->g_unm = s->prof[g->prof].util < 0;
	g->pl = *pl;
	g->start = now;
	g->state = SEG_RUNNING;
	g->held = pl->basis == SCHED_BASIS_EXCLUSIVE || (pl->n_dev > 1 && !s->opt.share_gangs);
	g->n_claim = 0;
	/* an exploration (place_shared chose it as one): the device's one,
	 * and one more try of the pair */
	g->explore = 0;
	if (g->explore_dev >= 0 && pl->n_dev == 1 && pl->dev[0] == g->explore_dev &&
	    !g->held && s->dev[pl->dev[0]].n_run == 1 && !s->dev[pl->dev[0]].explore_gi1) {
		sched_dev *d = &s->dev[pl->dev[0]];
		g->explore = 1;
		d->explore_gi1 = gi + 1;
		colo_explore_note(s, g->req.shape, s->seg[d->run[0]].req.shape);
		s->work.explored++;
	}
	g->explore_dev = -1;
	mark = ++s->commit_id;
	for (int k = 0; k < pl->n_dev; k++) {
		sched_dev *d = &s->dev[pl->dev[k]];
		for (size_t i = 0; i < d->n_run; i++) {
			size_t yi = d->run[i];
			sched_seg *y = &s->seg[yi];
			if (y->ov_mark == mark)
				continue;
			y->ov_mark = mark;
			uint32_t a = (uint32_t)g->n_ov++, b = (uint32_t)y->n_ov++;
			y->ov[b] = (sched_overlap){ gi, g->req.shape, now, 0, a, 1 };
			g->ov[a] = (sched_overlap){ yi, y->req.shape, now, 0, b, 1 };
		}
		d->run[d->n_run++] = gi;
		d->g_U += g->g_util;
		d->g_unmeasured += g->g_unm;
		d->ver++;
		s->hot[pl->dev[k]].ver = (uint32_t)d->ver;
		d->mem_res += pl->mem_mib;
		d->comp_res += pl->compute;
		if (g->held)
			d->held++;
		devidx_update(s, d);
	}
	/* onto its shape's list of running segments */
	sched_profile *p = &s->prof[g->prof];
	int first = p->run_head == SCHED_NONE;
	g->srun_prev = SCHED_NONE;
	g->srun_next = p->run_head;
	if (p->run_head != SCHED_NONE)
		s->seg[p->run_head].srun_prev = gi;
	p->run_head = gi;
	if (first)
		est_running_changed(s, g->prof);
	s->n_running++;
	return 0;
}

/* Whole empty devices for an exclusive segment or a gang.  Single devices
 * go to the smallest empty device (best fit, keeping big ones for big
 * work); gangs take the first n empty devices in index order. */
static int place_whole(sched *s, const pass *ps, const sched_seg *g, int cls,
		       sched_placement *pl)
{
	int n = g->req.n_devices > 1 ? g->req.n_devices : 1;
	if (ps->n_empty[cls] < (size_t)n)
		return 0;
	int chosen[SCHED_MAX_GANG], m = 0;
	if (!s->n_foreign[cls] && (n > 1 || s->idx[cls].min_total == s->idx[cls].max_total)) {
		/* the first n empty devices in index order, from the index */
		for (; m < n; m++)
			chosen[m] = devidx_kth_empty(s, cls, (size_t)m);
	} else {
		/* Devices of several sizes, or memory that others use on some:
		 * the empty devices whose free memory holds what an
		 * out-of-memory taught (a floor above every device asks for
		 * the largest), the least used by others first, then the
		 * smallest (keeping big ones for big work), then index order.
		 * Without foreign memory this is what the index answers for
		 * devices of one size. */
		uint64_t floor = g->req.min_mem_mib;
		if (s->prof[g->prof].oom_floor > floor)
			floor = s->prof[g->prof].oom_floor;
		if (floor > s->idx[cls].max_total)
			floor = s->idx[cls].max_total;
		for (size_t k = 0; k < s->n_cls[cls]; k++) {
			int di = s->cls_dev[cls][k];
			const sched_dev *d = &s->dev[di];
			if (d->n_run || d->claimed || d->avoided || sched__dev_free(d) < floor ||
			    !sched__dev_free(d))
				continue;
			/* insertion into the n best so far */
			int at = m < n ? m : n;
			while (at > 0) {
				const sched_dev *c = &s->dev[chosen[at - 1]];
				int better = d->foreign != c->foreign ? d->foreign < c->foreign
					     : n == 1 && d->info.mem_total_mib != c->info.mem_total_mib
						     ? d->info.mem_total_mib < c->info.mem_total_mib
						     : 0;
				if (!better)
					break;
				at--;
			}
			if (at >= n)
				continue;
			int last = m < n ? m : n - 1;
			for (int q = last; q > at; q--)
				chosen[q] = chosen[q - 1];
			chosen[at] = di;
			if (m < n)
				m++;
		}
	}
	if (m < n)
		return 0;
	uint64_t mem = UINT64_MAX;
	double comp = INFINITY;
	for (int k = 0; k < n; k++) {
		const sched_dev *d = &s->dev[chosen[k]];
		/* all of the device that others leave free */
		uint64_t whole = sched__dev_free(d);
		if (whole < mem)
			mem = whole;
		if (d->info.compute_total < comp)
			comp = d->info.compute_total;
		pl->dev[k] = chosen[k];
	}
	pl->n_dev = n;
	pl->mem_mib = mem;
	pl->compute = comp;
	pl->basis = SCHED_BASIS_EXCLUSIVE;
	return 1;
}

/*
 * Refusals shared between shapes (relish, GPU class).  For a candidate in
 * no observed pair, whether a device refuses it is monotone: more memory
 * fits on fewer devices, and a higher utilisation only lowers the modelled
 * throughput of the set it joins (the set-wide prior grows, and the
 * candidate has no observed pair to correct it).  So a candidate with
 * reservation and utilisation at least those of one refused everywhere at
 * stamp m needs to look only at devices changed after m, whatever its
 * shape: above all the first segment of every new job, which has no
 * refusal of its own and used to look at every device of a cluster that
 * was full.
 */
static int xmemo_usable(const sched *s, int cls)
{
	return s->opt.policy == SHARE_RELISH && cls == CLS_GPU &&
	       s->idx[cls].min_compute == s->idx[cls].max_compute;
}

static uint64_t xmemo_since(const sched *s, int cls, uint64_t res, double util)
{
	uint64_t best = 0;
	for (size_t i = 0; i < s->n_xmemo[cls]; i++) {
		const sched_xmemo *m = &s->xmemo[cls][i];
		if (m->res <= res && m->util <= util && m->stamp > best && m->stamp >= s->all_stamp)
			best = m->stamp;
	}
	return best;
}

static void xmemo_note(sched *s, int cls, uint64_t res, double util)
{
	sched_xmemo *v = s->xmemo[cls];
	size_t n = s->n_xmemo[cls], w = 0;
	/* drop what the new refusal makes redundant (it is the newest) */
	for (size_t i = 0; i < n; i++)
		if (!(res <= v[i].res && util <= v[i].util))
			v[w++] = v[i];
	if (w == SCHED_XMEMO) {
		/* full: forget the oldest */
		size_t old = 0;
		for (size_t i = 1; i < w; i++)
			if (v[i].stamp < v[old].stamp)
				old = i;
		v[old] = v[--w];
	}
	v[w++] = (sched_xmemo){res, util, s->stamp};
	s->n_xmemo[cls] = w;
}

/*
 * Exploration (relish): may candidate g, refused on device d by the
 * model's pessimistic side, try it there so that the pair gets measured?
 * Only beside one single-device member (the measurement is then the
 * pair's, colo_observe), one exploration per device at a time, at most
 * explore_max tries per pair of shapes, when the optimistic side admits
 * it (the gain is uncertain, not measured to lose), when one of the
 * two shapes has been measured alone (else the try teaches nothing:
 * a group's speed lends to learning, est_thr_alone, but not here, where
 * it was measured to add heavy pairs' tries), and
 * unless the pair holds its groups' agreed figure (colocate.c: measured
 * enough already).
 * *specific is set when the answer depends on the candidate's shape
 * beyond its reservation and utilisation (refusals of other shapes then
 * say nothing about it: xmemo).
 */
static int explore_ok(const sched *s, const sched_seg *g, const sched_dev *d, double gain,
		      double n_changed, double t0, int *specific)
{
	if (!s->opt.explore_max || d->n_run != 1 || d->explore_gi1)
		return 0;
	const sched_seg *m = &s->seg[d->run[0]];
	if (m->pl.n_dev != 1 || m->held)
		return 0;
	if (!place_may_gain(s, gain, n_changed, t0))
		return 0;
	if (colo_explored(s, g->req.shape, m->req.shape) >= (size_t)s->opt.explore_max ||
	    (!(s->prof[g->prof].thr_alone > 0) && !(s->prof[m->prof].thr_alone > 0)) ||
	    (g->req.group && colo_group_agreed(s, g->req.shape, m->req.shape))) {
		*specific = 1;
		return 0;
	}
	return 1;
}

/*
 * The time-slice fallback (relish, timeslice_refused): may g, refused by
 * the model on device d, which runs at most one segment, time-slice
 * beside it because the model refuses it everywhere?  Not beside a member
 * that holds its device, and not with a partner the pair was measured
 * with at all (or that its groups' measurements stand in for): then the
 * model's refusal is a measurement's (Gandiva's introspection), not the
 * prior's.  Slicing a pair measured to do no more than take turns (speeds
 * summing near 1) kept two heavy trials on one device for most of the
 * live cost bench and held room a pair that gains could have used
 * (bench-share: free 1.50x -> 1.41x, heavy beside heavy 0-2 s -> 6.6 s).
 * Under the prior two segments that share a device do at least a
 * device's work between them (colocate.c), so the set loses nothing the
 * model can see while the segment no longer waits; the margin guards
 * gains, not the choice between a zero gain and a wait.  The pair's ends
 * then measure it (colo_observe).  *specific is set when the answer
 * looked at the pair (not monotone in reservation and utilisation:
 * place.c's xmemo).  Single segments (place_shared) and gangs, one
 * device per member (share.c, timeslice_gangs), ask the same question.
 */
int place_slice_ok(const sched *s, const sched_seg *g, const sched_dev *d, int *specific)
{
	for (size_t i = 0; i < d->n_run; i++) {
		const sched_seg *m = &s->seg[d->run[i]];
		if (m->held)
			return 0;
		if (s->prof[g->prof].paired && s->prof[m->prof].paired &&
		    (sched_colocate_pair(s, g->req.shape, m->req.shape, NULL, NULL) == 0 ||
		     sched_colocate_pair(s, m->req.shape, g->req.shape, NULL, NULL) == 0)) {
			*specific = 1;
			return 0;
		}
	}
	return 1;
}

/* A shared placement: reservation res, best device by policy. */
static int place_shared(sched *s, const pass *ps, sched_seg *g, int cls,
			const sched_mem_estimate *e, uint64_t since, sched_placement *pl)
{
	uint64_t res = e->reserve_mib ? e->reserve_mib : 1;
	if (res > ps->max_free[cls])
		return 0;
	sched_profile *p = &s->prof[g->prof];
	int relish = s->opt.policy == SHARE_RELISH;
	int best = -1;
	double best_gain = -INFINITY, best_comp = 0;
	uint64_t best_left = UINT64_MAX;
	int best_empty = 0;
	int best_explore = 0, specific = 0;
	/* the time-slice fallback (timeslice_refused): the least loaded
	 * device with one member the model refused */
	int slice = -1;
	double slice_U = INFINITY;
	g->explore_dev = -1;
	int cand_paired = p->paired; /* the candidate's shape is in some pair */
	/* answered by an index: no walk */
	int answered = !relish && cls != CLS_HOST && devidx_fit_on(s, cls);
	if (answered) {
		/* pack on GPUs: memory alone decides, so best fit is a query.
		 * Devices unchanged since the refusal (stamp <= since) refused
		 * this reservation then and cannot take it now, so the global
		 * best fit is the walk's answer too. */
		best = devidx_best_fit(s, cls, res);
		s->work.dev_evals++;
		if (best >= 0)
			best_comp = est_compute(s, &g->req, g->prof, &s->dev[best]);
	}
	/* relish, a candidate in no pair: refusals of other shapes count */
	int xmemo = 0;
	double xutil = 0;
	if (relish && xmemo_usable(s, cls)) {
		if (!cand_paired) {
			xmemo = 1;
			xutil = est_util(s, &g->req, g->prof, &s->dev[s->cls_dev[cls][0]]);
			uint64_t m = xmemo_since(s, cls, res, xutil);
			if (m > since)
				since = m;
		}
	}
	/* relish, and an idle device that fits: an idle device wins.  Its
	 * gain is the candidate alone, 1 when its utilisation is at most
	 * 100 %; joining a set gains at most the candidate's own speed (it
	 * never speeds a member up, see colocate.c), so a shared device is
	 * either clearly worse or a near tie, which goes to the idle one.
	 * Among idle devices of one size, best fit is the first.  The walk's
	 * answer, without the walk. */
	if (relish && cls == CLS_GPU && ps->n_empty[cls] &&
	    s->idx[cls].min_total == s->idx[cls].max_total) {
		int di = devidx_kth_empty(s, cls, 0);
		const sched_dev *d = di >= 0 ? &s->dev[di] : NULL;
		s->work.dev_evals++;
		if (d && dev_free(d) >= res && est_util(s, &g->req, g->prof, d) <= 100) {
			best = di;
			best_comp = est_compute(s, &g->req, g->prof, d);
			answered = 1;
		}
	}
	size_t n_admit = 0;
	/* The devices changed since the refusal: the pending claims first
	 * (where their touch would have put them), then the
	 * most-recently-changed list down to the refusal's stamp. */
	size_t n_pend = !answered && pend_open(s, ps, cls, since) ? s->n_pend[cls] : 0, pi = 0;
	int next = answered ? -1 : s->idx[cls].mru_head;
	for (;;) {
		int di;
		if (pi < n_pend) {
			di = s->pend_list[cls][pi++];
			if (!s->dev[di].pend || s->hot[di].stamp > since)
				continue; /* not pending now, or on the list below */
		} else {
			di = next;
			if (di < 0 || s->hot[di].stamp <= since)
				break; /* the rest has not changed since the refusal */
			next = s->hot[di].next;
		}
		const sched_hot *h = &s->hot[di];
		if (h->free_key < res)
			continue; /* claimed, held, or too little memory */
		const sched_dev *d = &s->dev[di];
		s->work.dev_evals++;
		double comp = est_compute(s, &g->req, g->prof, d);
		if (cls == CLS_HOST && d->comp_res + comp > d->info.compute_total + 1e-9)
			continue;
		double gain = 0;
		int explore = 0;
		if (relish) {
			double util = est_util(s, &g->req, g->prof, d);
			if (d->n_run) {
				/* an exploration runs here: its measurement
				 * stays the pair's alone */
				if (d->explore_gi1)
					continue;
				colo_cand cc;
				colo_eval(s, d, g->prof, util, &cc);
				gain = cc.speed + cc.loss;
				if (!place_admits(s, gain, 1 + cc.weight, cc.t0)) {
					if (!explore_ok(s, g, d, gain, 1 + cc.weight, cc.t0, &specific)) {
						if (s->opt.timeslice_refused && d->n_run == 1 &&
						    d->g_U < slice_U && place_slice_ok(s, g, d, &specific)) {
							slice = di;
							slice_U = d->g_U;
						}
						continue;
					}
					/* after every device the model admits */
					explore = 1;
					gain -= 2;
				}
			} else {
				gain = colo_throughput(s, d, 1, g->req.shape, util);
			}
		}
		uint64_t left = dev_free(d) - res;
		int empty = d->n_run == 0;
		int better;
		if (best < 0)
			better = 1;
		else if (relish && fabs(gain - best_gain) > GAIN_TIE)
			better = gain > best_gain;
		else if (relish && empty != best_empty)
			/* Sharing that gains nothing over an idle device only
			 * risks interference: spread while devices are idle,
			 * pack once they are not. */
			better = empty;
		else
			better = left < best_left || (left == best_left && di < best);
		if (better) {
			best = di;
			best_gain = gain;
			best_left = left;
			best_comp = comp;
			best_empty = empty;
			best_explore = explore;
		}
		/* enough candidates compared (a refusal still looks at all) */
		if (relish && s->opt.score_max && ++n_admit >= s->opt.score_max)
			break;
	}
	if (best < 0 && slice >= 0) {
		best = slice;
		best_comp = est_compute(s, &g->req, g->prof, &s->dev[slice]);
	}
	if (best < 0) {
		if (xmemo && !specific)
			xmemo_note(s, cls, res, xutil);
		/* Remember: this shape with at least this reservation and
		 * compute fits nowhere until something changes. */
		if (p->memo_call != s->call_id || p->memo_cls != cls || res < p->memo_mem ||
		    g->req.compute_hint < p->memo_comp) {
			p->memo_call = s->call_id;
			p->memo_mem = res;
			p->memo_comp = g->req.compute_hint;
			p->memo_cls = cls;
		}
		/* ... and across calls: refused on every device as it is now,
		 * so later segments of the shape need only look at devices
		 * changed after this stamp (until its estimate changes) */
		p->memo_at = s->stamp;
		p->memo_at_mem = res;
		p->memo_at_comp = g->req.compute_hint;
		p->memo_at_cls = cls;
		return 0;
	}
	pl->n_dev = 1;
	pl->dev[0] = best;
	pl->mem_mib = res;
	pl->compute = best_comp;
	pl->basis = e->basis;
	if (best_explore)
		g->explore_dev = best;
	return 1;
}

/* Pick devices for a starving head and mark them claimed. */
static void claim_for(sched *s, pass *ps, sched_seg *g, int cls, int whole,
		      uint64_t res)
{
	(void)whole;
	int n = g->req.n_devices > 1 ? g->req.n_devices : 1;
	int ok = g->n_claim == n;
	for (int k = 0; ok && k < g->n_claim; k++) {
		int di = g->claim[k];
		ok = di >= 0 && (size_t)di < s->n_dev && s->dev[di].cls == cls &&
		     s->dev[di].info.mem_total_mib >= res;
	}
	if (!ok) {
		/* Fresh claim: the devices closest to fitting it (least
		 * reserved memory beyond what the head can share). */
		g->n_claim = 0;
		int used[SCHED_MAX_GANG];
		/* every device is big enough: the index answers */
		int indexed = s->idx[cls].min_total >= res;
		for (int m = 0; m < n && indexed; m++) {
			used[m] = devidx_least_reserved(s, cls, used, m);
			if (used[m] < 0)
				return;
		}
		for (int m = 0; m < n && !indexed; m++) {
			int pick = -1;
			uint64_t pick_res = UINT64_MAX;
			for (size_t k = 0; k < s->n_cls[cls]; k++) {
				int di = s->cls_dev[cls][k];
				const sched_dev *d = &s->dev[di];
				int dup = 0;
				for (int u = 0; u < m; u++)
					dup |= used[u] == di;
				if (dup || d->info.mem_total_mib < res)
					continue;
				if (d->mem_res < pick_res) {
					pick = di;
					pick_res = d->mem_res;
				}
			}
			if (pick < 0)
				return;
			used[m] = pick;
		}
		memcpy(g->claim, used, (size_t)n * sizeof used[0]);
		g->n_claim = n;
	}
	for (int k = 0; k < g->n_claim; k++) {
		sched_dev *d = &s->dev[g->claim[k]];
		if (!d->claimed && s->n_claimed < sizeof s->claimed_list / sizeof s->claimed_list[0]) {
			d->claimed = 1;
			s->claimed_list[s->n_claimed++] = g->claim[k];
			s->noted_whole = 0;
			s->noted_res = UINT64_MAX;
			devidx_update(s, d);
		}
	}
	pass_refresh(s, ps, cls);
}

/* A refusal while devices are claimed: note the claimed devices that could
 * have taken the segment, so that releasing the claim reopens them (and
 * only them: a claim that refused nothing changes nothing). */
static void claim_note(sched *s, int whole, uint64_t res)
{
	if (s->n_claim_blocked == s->n_claimed)
		return; /* all noted already */
	/* Claimed devices do not change during a pass (nothing is placed on
	 * them), so a note repeats an earlier one when it is whole again or
	 * asks for no less memory than a shared one noted since the claimed
	 * list last grew. */
	if (whole ? s->noted_whole : res >= s->noted_res)
		return;
	if (whole)
		s->noted_whole = 1;
	else
		s->noted_res = res;
	for (size_t i = 0; i < s->n_claimed; i++) {
		sched_dev *d = &s->dev[s->claimed_list[i]];
		if (!d->claim_blocked && (whole ? !d->n_run : !d->held && dev_free(d) >= res)) {
			d->claim_blocked = 1;
			s->n_claim_blocked++;
		}
	}
}

static int pass_saturated(const sched *s, const pass *ps)
{
	(void)s;
	return ps->saturated;
}

/* The utilisation est_util gives a GPU segment of profile pi when it is
 * known without the request (measured, or the family's mean), else -1. */
static double prof_util(const sched *s, uint32_t pi)
{
	const sched_profile *p = &s->prof[pi];
	if (p->util >= 0)
		return p->util;
	const sched_family *f = &s->fam[p->fam];
	return f->util_n ? f->util_sum / (double)f->util_n : -1;
}

/* A user's limits let segment g, of n_whole devices, start (the memory
 * limit is checked once the reservation is known).  The GPU limit counts
 * GPUs: a CPU trial's host device is none (it held back GPU trials). */
static int user_may_start(const sched *s, const sched_user *u, const sched_seg *g, int n_whole)
{
	const sched_user_limits *l = &u->lim;
	if (l->max_segments && u->n_running >= (size_t)l->max_segments)
		return 0;
	if (l->max_gpus && u->run_gpus + n_whole > l->max_gpus &&
	    sched__req_class(s, &g->req) == CLS_GPU)
		return 0;
	return 1;
}

static int user_mem_ok(const sched *s, const sched_user *u, const sched_placement *pl)
{
	uint64_t hm = 0, gm = 0;
	double hc = 0;
	for (int k = 0; k < pl->n_dev; k++)
		if (!s->dev[pl->dev[k]].info.is_gpu) {
			hm += pl->mem_mib;
			hc += pl->compute > SCHED_CPU_LEAST ? pl->compute : SCHED_CPU_LEAST;
		} else {
			gm += pl->mem_mib;
		}
	/* device memory counts GPUs only: host memory has its own limit
	 * (a CPU trial's RAM counted in gpu_memory held back GPU trials) */
	if (u->lim.max_mem_mib && gm && u->mem_res - u->host_mem_res + gm > u->lim.max_mem_mib)
		return 0;
	if (u->lim.max_host_mem_mib && hm && u->host_mem_res + hm > u->lim.max_host_mem_mib)
		return 0;
	/* a little slack: shares such as 0.1 do not add up exactly */
	return !(u->lim.max_cpus > 0) || !(hc > 0) || u->host_cpu_res + hc <= u->lim.max_cpus + 1e-9;
}

/* What scan_one did with a queue entry. */
enum { SCAN_KEEP, SCAN_KEEP_NEW, SCAN_PLACED };

/*
 * One queued segment (its entry *qe, in the queue): try to place it now.
 * SCAN_PLACED: committed, *out written (the caller drops the entry).
 * SCAN_KEEP: it stays queued and its entry is unchanged; SCAN_KEEP_NEW: it
 * stays with *qe updated (a new refusal memo).  The caller keeps the queue
 * in order.
 */
static int scan_search(sched *s, pass *ps, sched_qent *qe, double now, sched_placement *out);

static inline int scan_one(sched *s, pass *ps, sched_qent *qe, double now, sched_placement *out)
{
	/* Over its user's limits: passed over, nothing learnt or claimed. */
	if (s->any_limits &&
	    !user_may_start(s, &s->user[s->seg[qe->gi].user], &s->seg[qe->gi], qe->n_whole))
		return SCAN_KEEP;
	/* Fastest path: refused before with a reservation that can only
	 * grow, bigger than every hole of its class now. */
	if (qe->memo && qe->grows && qe->memo_res > ps->max_free[qe->cls] &&
	    ps->head_seen[qe->cls] && qe->memo >= s->all_stamp && qe->memo >= s->add_stamp)
		return SCAN_KEEP;
	/* Fast path, reading the queue entry only: refused before, no
	 * estimate anywhere changed since, and either bigger than any
	 * hole or no device of its class changed. */
	if (qe->memo && qe->memo >= s->est_stamp && qe->memo >= s->all_stamp &&
	    ps->head_seen[qe->cls] &&
	    ((qe->memo_res && qe->memo_res > ps->max_free[qe->cls]) ||
	     qe->memo >= s->cls_stamp[qe->cls]))
		return SCAN_KEEP;
	/* Refused before with an estimate that has not changed since
	 * (its profile, its family, every device's set and the device
	 * list are older than the refusal): decide from the queue entry
	 * and the profile alone, doing exactly what the full path below
	 * would do on a refusal (new memo, claims noted).  Anything that
	 * may place the segment takes the full path. */
	if (qe->memo && ps->head_seen[qe->cls] && qe->memo >= s->all_stamp &&
	    qe->memo >= s->add_stamp && qe->prof != UINT32_MAX &&
	    qe->memo >= s->pstamp[qe->prof].stamp &&
	    qe->memo >= s->fstamp[s->pstamp[qe->prof].fam]) {
		const sched_profile *p = &s->prof[qe->prof];
		int cls = qe->cls;
		if (qe->memo >= s->cls_stamp[cls] ||
		    (qe->memo_res && qe->memo_res > ps->max_free[cls]))
			return SCAN_KEEP;
		int refused;
		if (!qe->memo_res) {
			refused = ps->n_empty[cls] < qe->n_whole;
		} else {
			uint64_t res = qe->memo_res;
			refused = p->memo_call == s->call_id && p->memo_cls == cls &&
				  res >= p->memo_mem && qe->comp >= p->memo_comp;
			if (!refused && p->memo_at > qe->memo && p->memo_at_cls == cls &&
			    p->memo_at >= p->stamp && p->memo_at >= s->fstamp[p->fam] &&
			    p->memo_at >= s->all_stamp && res >= p->memo_at_mem &&
			    qe->comp >= p->memo_at_comp)
				refused = p->memo_at >= s->cls_stamp[cls];
		}
		if (refused) {
			qe->memo = s->stamp;
			claim_note(s, !qe->memo_res, qe->memo_res);
			return SCAN_KEEP_NEW;
		}
	}
	/* A gang that shares (or any Gandiva segment: share.c places them
	 * all), refused before with an estimate that has not changed since,
	 * whose shape (or a gang no larger) was refused in this call already:
	 * the devices only fill up within a call.  (From the
	 * queue entry and the profile: the segment's record is not read.) */
	if (((qe->n_whole > 1 && s->opt.share_gangs) || s->opt.policy == SHARE_GANDIVA) &&
	    qe->memo && qe->memo_res &&
	    ps->head_seen[qe->cls] && qe->prof != UINT32_MAX && qe->memo >= s->pstamp[qe->prof].stamp &&
	    qe->memo >= s->fstamp[s->pstamp[qe->prof].fam] && qe->memo >= s->all_stamp &&
	    qe->memo >= s->add_stamp) {
		double u = prof_util(s, qe->prof);
		if (u < 0 && qe->cls == CLS_GPU && s->idx[CLS_GPU].max_compute == 100 &&
		    s->idx[CLS_GPU].min_compute == 100) {
			/* as est_util: the compute share, at most 100 (this is
			 * fmin(100, c), NaN included, without a library call
			 * in the scan's inner loop) */
			double c = qe->comp > 0 ? qe->comp : s->opt.default_gpu_compute;
			u = c < 100 ? c : 100;
		}
		if (u >= 0 && spread_refused(s, qe->prof, qe->cls, qe->n_whole, qe->memo_res, u, qe->comp)) {
			qe->memo = s->stamp;
			claim_note(s, 0, qe->memo_res);
			return SCAN_KEEP_NEW;
		}
	}
	return scan_search(s, ps, qe, now, out);
}

/* scan_one past its shortcuts: the segment's record, its estimate and
 * the devices are looked at (a function of its own, so that the
 * shortcuts, which decide most entries, cost no more than they read). */
static int __attribute__((noinline))
scan_search(sched *s, pass *ps, sched_qent *qe, double now, sched_placement *out)
{
	size_t gi = qe->gi;
	sched_seg *g = &s->seg[gi];
	/* Gangs that share: after gang_scan_max refusals of gangs of one
	 * size in this call, the others of that size wait for the next call
	 * (each costs a walk over the devices that changed; see
	 * docs/scheduling.md, Cost). */
	int k = g->req.n_devices;
	if (k > 1 && s->opt.share_gangs && s->opt.gang_scan_max && s->gang_call[k] == s->call_id &&
	    s->gang_refused[k] >= s->opt.gang_scan_max)
		return SCAN_KEEP;
	s->work.searched++;
	const sched_profile *p = &s->prof[g->prof];
	uint64_t fstamp = s->fstamp[p->fam]; /* = s->fam[p->fam].stamp */
	int cls = sched__req_class(s, &g->req);
	/* Rejected before and nothing that could change the answer
	 * happened since: no need to look again.  Own-estimate changes
	 * reopen every device, device releases only that device. */
	int own_same = qe->memo && qe->cls == cls && qe->memo >= s->all_stamp &&
		       qe->memo >= p->stamp && qe->memo >= fstamp;
	int ok = 0, whole = 0, have_e = 0;
	sched_mem_estimate e;
	memset(&e, 0, sizeof e);
	/* Same estimate as at the rejection and bigger than any hole:
	 * rejected again without recomputing anything. */
	if (own_same && qe->memo_res && qe->memo_res > ps->max_free[cls])
		own_same = 2;
	if (own_same != 2 &&
	    !(own_same && qe->memo >= s->cls_stamp[cls] && !pend_open(s, ps, cls, qe->memo))) {
		uint64_t since = own_same ? qe->memo : 0;
		est_reserve(s, &g->req, g->prof, cls, &e);
		have_e = 1;
		whole = place_is_whole(s, g, &e);
		sched_placement pl;
		memset(&pl, 0, sizeof pl);
		pl.seg_id = g->req.seg_id;
		if (whole) {
			ok = place_whole(s, ps, g, cls, &pl);
		} else if (g->req.n_devices > 1 || s->opt.policy == SHARE_GANDIVA) {
			/* gangs that share, and every Gandiva placement: k
			 * devices chosen from all of them (share.c) */
			ok = place_spread(s, ps, g, cls, &e, &pl);
		} else {
			uint64_t res = e.reserve_mib ? e.reserve_mib : 1;
			int memo = p->memo_call == s->call_id && p->memo_cls == cls &&
				   res >= p->memo_mem && g->req.compute_hint >= p->memo_comp;
			/* The shape was refused everywhere at memo_at with
			 * no more than this: only devices changed since
			 * then can take it. */
			if (!memo && p->memo_at > since && p->memo_at_cls == cls &&
			    p->memo_at >= p->stamp && p->memo_at >= fstamp &&
			    p->memo_at >= s->all_stamp && res >= p->memo_at_mem &&
			    g->req.compute_hint >= p->memo_at_comp) {
				since = p->memo_at;
				memo = since >= s->cls_stamp[cls] && !pend_open(s, ps, cls, since);
			}
			ok = !memo && place_shared(s, ps, g, cls, &e, since, &pl);
		}
		/* A place was found but its memory would take the user past
		 * its limit: passed over like a segment at its limits. */
		if (ok && s->any_limits && !user_mem_ok(s, &s->user[g->user], &pl))
			return SCAN_KEEP;
		if (ok && place_commit(s, gi, &pl, now) == 0) {
			*out = pl;
			s->work.placed++;
			pass_refresh(s, ps, cls);
			return SCAN_PLACED;
		}
		if (k > 1 && s->opt.share_gangs && !whole) {
			if (s->gang_call[k] != s->call_id) {
				s->gang_call[k] = s->call_id;
				s->gang_refused[k] = 0;
			}
			s->gang_refused[k]++;
		}
		qe->memo = s->stamp;
		qe->memo_res = whole ? 0 : (e.reserve_mib ? e.reserve_mib : 1);
		qe->cls = (int8_t)cls;
		qe->grows = !whole && s->opt.policy == SHARE_PACK && g->req.mem_hint_mib > 0;
		claim_note(s, whole, qe->memo_res);
	}
	if (!ps->head_seen[cls]) {
		ps->head_seen[cls] = 1;
		if (s->opt.aging_s > 0 && now - g->req.submit_time >= s->opt.aging_s &&
		    mem_class_placeable(s, &g->req)) {
			if (!have_e) {
				est_reserve(s, &g->req, g->prof, cls, &e);
				whole = place_is_whole(s, g, &e);
			}
			claim_for(s, ps, g, cls, whole, whole ? 0 : e.reserve_mib);
		} else {
			g->n_claim = 0;
		}
		/* the pending claims the head did not make again end now */
		if (s->n_pend[cls])
			pend_settle(s, cls, 0);
	}
	return SCAN_KEEP_NEW;
}

/* The scanned prefix [0, r) of q, with w entries kept, closes up: the
 * kept ones move up to the unscanned tail (cheaper than moving the tail
 * down). */
static void queue_close(sched_queue *q, size_t r, size_t w)
{
	if (w < r) {
		memmove(&q->qbuf[q->q_lo + r - w], &q->qbuf[q->q_lo], w * sizeof *q->qbuf);
		q->q_lo += r - w;
		q->n_queue -= r - w;
	}
}

/* One queue in key order (every order but fair). */
static size_t scan_queue(sched *s, pass *ps, sched_queue *q, double now,
			 sched_placement *out, size_t max)
{
	size_t placed = 0, tried = 0, w = 0, r = 0;
	for (; r < q->n_queue; r++) {
		if (placed >= max || pass_saturated(s, ps) ||
		    (s->opt.scan_max && tried >= s->opt.scan_max))
			break;
		/* in place: scan_one changes the entry only when it says so */
		sched_qent *qe = &SCHED_Q(q, r);
		tried++;
		s->work.scanned++;
		int act = scan_one(s, ps, qe, now, &out[placed]);
		if (act == SCAN_PLACED) {
			placed++;
			continue;
		}
		if (w != r)
			SCHED_Q(q, w) = *qe;
		w++;
	}
	queue_close(q, r, w);
	return placed;
}

/*
 * Fair share: the users' queues merged, the user with the least attained
 * device-time relative to its weight first (ties: fewer devices running
 * relative to the weight, then the lower id), each user's own queue in
 * its key order (least attained service within the user).  Attained
 * service does not move within a call (time does not), but what runs
 * does: a user whose segment is placed is ranked again with one more
 * device running, so that two free devices at one instant go to two
 * users whose service is equal, not both to the first.  scan_max applies
 * per user, as Slurm's bf_max_job_user bounds the backfill per user.
 */
static int user_before(const sched *s, size_t a, size_t b)
{
	const sched_user *x = &s->user[a], *y = &s->user[b];
	if (x->pass_key != y->pass_key)
		return x->pass_key < y->pass_key;
	double rx = x->run_dev / x->weight, ry = y->run_dev / y->weight;
	if (rx != ry)
		return rx < ry;
	return x->id < y->id;
}

static void uheap_down(sched *s, size_t n, size_t i)
{
	size_t *h = s->uheap;
	size_t e = h[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && user_before(s, h[c + 1], h[c]))
			c++;
		if (!user_before(s, h[c], e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

static size_t scan_fair(sched *s, pass *ps, double now, sched_placement *out, size_t max)
{
	if (sched__grow((void **)&s->uheap, &s->cap_uheap, s->n_user, sizeof *s->uheap))
		return scan_queue(s, ps, &s->user[0].q, now, out, max); /* degraded, not wrong */
	size_t n = 0;
	for (size_t i = 0; i < s->n_user; i++) {
		sched_user *u = &s->user[i];
		(void)queue_refill(s, &u->q);
		u->scan_r = u->scan_w = u->scan_tried = 0;
		if (!u->q.n_queue)
			continue;
		u->pass_key = user_usage(s, u, now) / u->weight;
		s->uheap[n++] = i;
	}
	size_t m = n; /* users touched, to close their queues after */
	for (size_t i = n / 2; i-- > 0;)
		uheap_down(s, n, i);
	size_t placed = 0;
	while (n && placed < max && !pass_saturated(s, ps)) {
		sched_user *u = &s->user[s->uheap[0]];
		sched_queue *q = &u->q;
		if (u->scan_r >= q->n_queue || (s->opt.scan_max && u->scan_tried >= s->opt.scan_max)) {
			size_t last = s->uheap[--n];
			s->uheap[n] = s->uheap[0]; /* kept past the heap, for closing */
			s->uheap[0] = last;
			if (n)
				uheap_down(s, n, 0);
			continue;
		}
		size_t r = u->scan_r++;
		sched_qent *qe = &SCHED_Q(q, r);
		u->scan_tried++;
		s->work.scanned++;
		int act = scan_one(s, ps, qe, now, &out[placed]);
		if (act == SCAN_PLACED) {
			placed++;
			uheap_down(s, n, 0); /* it runs one more: ranked again */
			continue;
		}
		if (u->scan_w != r)
			SCHED_Q(q, u->scan_w) = *qe;
		u->scan_w++;
	}
	for (size_t k = 0; k < m; k++) {
		sched_user *u = &s->user[s->uheap[k]];
		queue_close(&u->q, u->scan_r, u->scan_w);
	}
	return placed;
}

size_t place_run(sched *s, double now, sched_placement *out, size_t max)
{
	if (now > s->last_now)
		s->last_now = now;
	int fair = s->opt.order == ORDER_FAIR;
	/* the front must hold what this call may scan; without memory for
	 * that, the call scans what the front holds */
	if (!fair)
		(void)queue_refill(s, &s->q);
	if (!max || !s->n_queued || !s->n_dev)
		return 0;
	s->call_id++;
	s->work.calls++;
	s->work.running += s->n_running;
	s->noted_whole = 0;
	s->noted_res = UINT64_MAX;
	pass ps;
	memset(&ps, 0, sizeof ps);
	for (int c = 0; c < CLS__COUNT; c++)
		pass_refresh(s, &ps, c);

	size_t placed = fair ? scan_fair(s, &ps, now, out, max)
			     : scan_queue(s, &ps, &s->q, now, out, max);
	/* Claims last one call: released devices where a refusal may have
	 * been due to the claim count as changed, so what was refused there
	 * is looked at again: pending, settled by the next call (above,
	 * pend_open). */
	for (int c = 0; c < CLS__COUNT; c++)
		if (s->n_pend[c] && !ps.head_seen[c])
			pend_settle(s, c, 1); /* no head claimed them again */
	for (size_t i = 0; i < s->n_claimed; i++) {
		sched_dev *d = &s->dev[s->claimed_list[i]];
		d->claimed = 0;
		devidx_update(s, d);
		if (d->claim_blocked && !d->pend) {
			size_t *n = &s->n_pend[d->cls];
			if (*n < sizeof s->pend_list[0] / sizeof s->pend_list[0][0]) {
				d->pend = 1;
				s->pend_list[d->cls][(*n)++] = s->claimed_list[i];
			} else {
				sched__touch_dev(s, d); /* no room: changed for all now */
			}
		}
		d->claim_blocked = 0;
	}
	for (int c = 0; c < CLS__COUNT; c++)
		if (s->n_pend[c])
			s->pend_stamp[c] = ++s->stamp;
	s->n_claimed = 0;
	s->n_claim_blocked = 0;
	return placed;
}
