/*
 * share.c - placements that choose their devices from the whole class:
 * gangs that share devices (relish and the Gandiva peer, with
 * sched_options.share_gangs), and every placement of the Gandiva peer.
 *
 * A gang of k reserves its memory on k devices, like k single segments,
 * and advances at the speed of its slowest member (the simulator does the
 * same).  The devices are found in one walk over the class, each device
 * scored for one member of the segment, and the best k taken:
 *
 *   relish   the member's modelled speed on the device plus the loss it
 *            causes the device's members (colocate.c, colo_eval), less the
 *            model's margin on each speed it predicts.  The gang is taken
 *            when its gain, k x its slowest member's speed plus the losses,
 *            passes the same admission rule as a single segment
 *            (place_admits).  Idle devices score 1 and lose nothing, so
 *            they come first.  The k best by score is a greedy choice: the
 *            best set could trade a better score for a faster slowest
 *            member; it is not searched for.  A gang the rule refuses
 *            time-slices (timeslice_gangs, spread_slice): k devices that
 *            each run at most one segment the gang may slice beside
 *            (place_slice_ok), idle ones first, then the least loaded.
 *            Until then such a gang waited for devices its model would
 *            admit, which a full cluster seldom had at once: most of
 *            relish's gap to Gandiva on the Philly trace was gangs
 *            waiting (docs/evaluation.md).
 *   gandiva  (Xiao et al., OSDI'18, as docs/simulator.md simplifies it)
 *            an idle device first; else packing: a device whose members'
 *            measured utilisations and the segment's own sum to at most
 *            100 % and where no observed pair of the segment and a member
 *            ran slower together than time-slicing would (speeds summing
 *            below 1: Gandiva's introspection unpacks such pairs), the
 *            lowest resulting sum first; else time-slicing: the device
 *            with the fewest segments, while it has fewer than
 *            timeslice_max (0: as many as its memory holds), beside a
 *            partner seen to lose only when nothing else is left.  Every member
 *            of a gang is placed the same way.  Memory must fit on each
 *            device, as for everyone else.
 *
 * Cost: one walk over the devices of the class that have the memory (the
 * compact hot array), then a sort of the candidates; k idle devices are
 * read from the device index without a walk.
 */
#include "sched/sched_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Devices a shape's memo keeps (three times the largest gang: a memo
 * stays usable while at least k of them are unchanged). */
#define SPREAD_KEEP (3 * SCHED_MAX_GANG)

typedef struct spread_cand {
	double score;           /* larger first */
	int32_t di;
	uint32_t ver;           /* the device's version when scored (truncated,
				   as in sched_hot) */
	int8_t rank;            /* gandiva: 0 idle, 1 pack, 2 time-slice, 3 ... */
	int8_t busy;            /* something runs there (idle devices first on
				   ties: a start only moves a device later in
				   this order, which the memo below needs; best
				   fit would move it earlier) */
	float speed, loss, t0, weight; /* relish: colo_eval's figures (for the
				   gang's gain; the order uses score) */
} spread_cand;

static int cand_cmp(const void *a, const void *b)
{
	const spread_cand *x = a, *y = b;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	if (x->score != y->score)
		return x->score > y->score ? -1 : 1;
	if (x->busy != y->busy)
		return x->busy - y->busy;
	return x->di - y->di;
}

/* Gandiva's view of a device for a member of g: -1 not eligible, else
 * its rank (0 idle, 1 pack, 2 time-slice, 3 time-slice beside a partner it
 * was seen to lose with) and *score.  A start on the device can only make
 * both worse, which share.c's memo relies on. */
static int gandiva_rank(const sched *s, const sched_seg *g, const sched_dev *d, double *score)
{
	if (!d->n_run)
		return *score = 0, 0;
	/* the members' utilisation as known when each started (the device
	 * keeps the sum, place.c) */
	const sched_profile *p = &s->prof[g->prof];
	int measured = p->util >= 0 && !d->g_unmeasured, bad = 0;
	double U = d->g_U + (p->util >= 0 ? p->util : 100);
	int packs = measured && U <= 100; /* if no pair is bad */
	/* A device that cannot pack and is full for time-slicing refuses
	 * whatever the pairs say: decided before looking them up (the
	 * common case on a full cluster, in the placement scan's walks). */
	if (!packs && s->opt.timeslice_max && d->n_run >= (size_t)s->opt.timeslice_max)
		return -1;
	for (size_t i = 0; p->paired && !bad && i < d->n_run; i++) {
		const sched_seg *m = &s->seg[d->run[i]];
		double sa, sb;
		if (s->prof[m->prof].paired &&
		    sched_colocate_pair(s, g->req.shape, m->req.shape, &sa, NULL) == 0 &&
		    sched_colocate_pair(s, m->req.shape, g->req.shape, &sb, NULL) == 0 && sa + sb < 1)
			bad = 1; /* seen to lose against time-slicing */
	}
	if (packs && !bad) {
		*score = -U; /* pack: the least loaded first */
		return 1;
	}
	if (s->opt.timeslice_max && d->n_run >= (size_t)s->opt.timeslice_max)
		return -1;
	*score = -(double)d->n_run - U / 1000.0; /* fewest segments, then least loaded */
	return bad ? 3 : 2;
}

/* Insert x into the best list c[0..*n) (sorted by cand_cmp, at most cap
 * long). */
static void best_insert(spread_cand *c, size_t *n, size_t cap, const spread_cand *x)
{
	size_t i = *n;
	if (i == cap) {
		if (cand_cmp(x, &c[cap - 1]) >= 0)
			return;
		i = cap - 1;
	} else {
		(*n)++;
	}
	while (i > 0 && cand_cmp(x, &c[i - 1]) < 0) {
		c[i] = c[i - 1];
		i--;
	}
	c[i] = *x;
}

/* A device scored for one member of g into *x; 0 when it cannot take one
 * (*x then unread). */
static int spread_eval(sched *s, const sched_seg *g, int cls, int di, uint64_t res,
		       double gpu_util, spread_cand *x)
{
	const sched_dev *d = &s->dev[di];
	s->work.dev_evals++;
	if (cls == CLS_HOST &&
	    d->comp_res + est_compute(s, &g->req, g->prof, d) > d->info.compute_total + 1e-9)
		return 0;
	if (s->opt.policy == SHARE_GANDIVA) {
		/* ranked first: most devices of a full cluster are not
		 * eligible, and then *x is not read */
		double score;
		int rank = gandiva_rank(s, g, d, &score);
		if (rank < 0)
			return 0;
		memset(x, 0, sizeof *x);
		x->di = di;
		x->ver = (uint32_t)d->ver;
		x->busy = d->n_run > 0;
		x->score = score;
		x->rank = (int8_t)rank;
		return 1;
	}
	memset(x, 0, sizeof *x);
	x->di = di;
	x->ver = (uint32_t)d->ver;
	x->busy = d->n_run > 0;
	if (s->opt.policy != SHARE_RELISH)
		return 1; /* best fit decides */
	/* a GPU's utilisation figure is the same on every GPU (all are 100 %
	 * of compute), hosts' CPU counts differ */
	double util = gpu_util >= 0 ? gpu_util : est_util(s, &g->req, g->prof, d);
	if (d->n_run) {
		colo_cand cc;
		colo_eval(s, d, g->prof, util, &cc);
		x->speed = (float)cc.speed;
		x->loss = (float)cc.loss;
		x->t0 = (float)cc.t0;
		x->weight = (float)cc.weight;
		x->score = cc.speed + cc.loss - s->opt.colocate_margin * (1 + cc.weight);
	} else {
		double sp = colo_throughput(s, d, 1, g->req.shape, util);
		x->speed = (float)sp;
		x->score = sp;
	}
	if (!(x->speed > 0))
		return 0;
	return 1;
}

/*
 * What the last walk for a shape found: the best devices (at most
 * SPREAD_KEEP, sorted) as they were at stamp.  While the shape's
 * estimate, its family and the device list are as old, a device not
 * changed since (stamp) scores what it scored then, and every device that
 * scored lower than the last kept one still does; so the best k of the
 * devices changed since and the kept ones that did not change are the
 * best k of all (a device where something started since, which changes
 * its version but not its stamp, can only score lower: a kept one is
 * scored again, the others stay below), provided that at least k kept
 * ones are unchanged or the
 * memo was complete (it kept every device that could take a member).  The
 * walk then stops at the first device older than stamp (the
 * most-recently-changed list is in stamp order).  Devices claimed for
 * the current call are scored and kept too (a claim ends without changing
 * a device's stamp), though not taken.
 */
typedef struct spread_memo {
	uint64_t stamp, res;
	double comp;
	int cls, k;
	int complete;           /* it holds every device that could take one;
				   else every device it does not hold ranks
				   after bound (cand_cmp) */
	spread_cand bound;
	uint64_t refused_call;  /* refused in this sched_place call ... */
	uint64_t refused_res;   /* ... with this reservation (the devices only
				   fill up within a call: refused again) */
	/* spread_slice's last answer that found fewer than slice_k devices
	 * (0: none): the devices that could take a member as they were at
	 * slice_stamp, with at least slice_res MiB free */
	uint64_t slice_stamp, slice_res;
	int slice_k, n_slice;
	int32_t slice_di[SCHED_MAX_GANG];
	size_t n;
	spread_cand c[SPREAD_KEEP];
} spread_memo;

static spread_memo *memo_of(sched *s, size_t pi)
{
	if (pi >= s->n_smemo) {
		size_t cap = s->cap_smemo;
		if (sched__grow((void **)&s->smemo, &cap, pi + 1, sizeof *s->smemo))
			return NULL;
		memset(&s->smemo[s->n_smemo], 0, (cap - s->n_smemo) * sizeof *s->smemo);
		s->cap_smemo = cap;
		s->n_smemo = cap;
	}
	if (!s->smemo[pi])
		s->smemo[pi] = calloc(1, sizeof *s->smemo[pi]);
	return s->smemo[pi];
}

/* floor(u / 20), the bucket gmemo compares.  Truncation is floor for a
 * non-negative quotient and exact below 2^53; floor itself is a library
 * call on this target (no SSE4.1), and this runs for most queued gangs in
 * every placement call. */
static double util_bucket(double u)
{
	double q = u / 20;
	return q >= 0 && q < 0x1p52 ? (double)(int64_t)q : floor(q);
}

/* Refused in this call: a gang of k as large whose utilisation, to 5
 * points, was no larger, and, unless what refused it was its gain (every
 * other device had the memory, and the best k did not pay), whose
 * reservation was no larger.  The buckets let the look-alike gangs of an
 * HPO burst count as one; a gain refusal does not look at memory. */
static int gmemo_dominated(const sched *s, int cls, int k, uint64_t res, double util, double comp)
{
	/* Every entry is of the call that noted last (gmemo_note drops the
	 * older ones), so when the first is of an earlier call, none counts:
	 * the common case in the placement scan, decided without a walk. */
	size_t n = s->n_gmemo[cls];
	if (!n || s->gmemo[cls][0].call != s->call_id)
		return 0;
	double bucket = util_bucket(util);
	for (size_t i = 0; i < n; i++) {
		const sched_gmemo *q = &s->gmemo[cls][i];
		if (q->call == s->call_id && q->k == k && q->comp <= comp &&
		    (q->gain || q->res <= res) && q->ubucket <= bucket)
			return 1;
	}
	return 0;
}

int spread_refused(const sched *s, size_t prof, int cls, int k, uint64_t res, double util,
		   double comp)
{
	const spread_memo *m = prof < s->n_smemo ? s->smemo[prof] : NULL;
	if (m && m->refused_call == s->call_id && m->k == k && m->cls == cls && res >= m->refused_res &&
	    comp >= m->comp)
		return 1;
	return gmemo_dominated(s, cls, k, res, util, comp);
}

/* Note a refusal in this call; entries of earlier calls and those the new
 * one makes redundant go. */
static void gmemo_note(sched *s, int cls, int k, uint64_t res, double util, double comp, int gain)
{
	sched_gmemo *v = s->gmemo[cls];
	size_t n = s->n_gmemo[cls], w = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].call == s->call_id &&
		    !(v[i].k == k && (gain || res <= v[i].res) && util <= v[i].util && comp <= v[i].comp))
			v[w++] = v[i];
	if (w == SCHED_XMEMO)
		w--; /* full: the newest replaces the last */
	v[w++] = (sched_gmemo){.call = s->call_id, .k = k, .res = res, .util = util, .comp = comp,
			       .ubucket = util_bucket(util), .gain = gain};
	s->n_gmemo[cls] = w;
}

/* Devices a memo for gangs of k keeps: k and as many again, and 8 more
 * (the memo answers while k of them are unchanged). */
static size_t memo_cap(int k)
{
	size_t c = 2 * (size_t)k + 8;
	return c < SPREAD_KEEP ? c : SPREAD_KEEP;
}

/* x into memo m (sorted, at most memo_cap(m->k)): what ranks at or after the
 * bound stays out, and what falls off the end becomes the bound. */
static void memo_insert(spread_memo *m, int *has_bound, spread_cand *bound, const spread_cand *x)
{
	if (*has_bound && cand_cmp(x, bound) >= 0)
		return;
	size_t cap = memo_cap(m->k);
	if (m->n >= cap) {
		const spread_cand *last = &m->c[cap - 1];
		if (cand_cmp(x, last) >= 0) {
			*bound = *x;
			*has_bound = 1;
			return;
		}
		*bound = *last;
		*has_bound = 1;
		m->n = cap - 1;
	}
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cand_cmp(&m->c[mid], x) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(&m->c[lo + 1], &m->c[lo], (m->n - lo) * sizeof m->c[0]);
	m->n++;
	size_t i = lo;
	m->c[i] = *x;
}

/* One device for spread_slice: 1 and *x when g may slice beside it; 2
 * when it could but for a claim of this call (a claim ends without
 * moving the device's stamp, so the memo must keep such a device). */
static int slice_eval(sched *s, const sched_seg *g, int di, uint64_t res, spread_cand *x)
{
	const sched_dev *d = &s->dev[di];
	int specific = 0;
	int claimed = 0;
	if (s->hot[di].free_key < res) {
		if (!(d->claimed && !d->held && !d->avoided && dev_free(d) >= res))
			return 0;
		claimed = 1;
	}
	if (d->n_run > 1 || d->explore_gi1)
		return 0;
	s->work.dev_evals++;
	if (!place_slice_ok(s, g, d, &specific))
		return 0;
	memset(x, 0, sizeof *x);
	x->di = di;
	x->ver = (uint32_t)d->ver;
	x->busy = d->n_run > 0;
	x->score = -(double)d->n_run * 1000.0 - d->g_U;
	return claimed ? 2 : 1;
}

/*
 * relish's time-slice fallback for a gang of k the model refused: into
 * best[0..k), k devices with res MiB free, each running at most one
 * segment that g may slice beside (place_slice_ok): idle devices first,
 * then the fewest members' utilisation.  Returns whether k were found.
 * A refusal is kept in the shape's memo m: a device can newly take a
 * member only when something ended there (its stamp moves; a start only
 * fills it, and a measured pair only forbids more), so the next try
 * walks the devices changed since and looks again at the few the
 * refusal found, instead of the whole class each time the gang waits.
 */
static int spread_slice(sched *s, const sched_seg *g, int cls, int k, uint64_t res,
			spread_memo *m, spread_cand *best)
{
	size_t n = 0;
	spread_cand x;
	int32_t keep[SCHED_MAX_GANG];
	int n_keep = 0, overflow = 0;
	int reuse = m && m->slice_k == k && m->cls == cls && res >= m->slice_res &&
		    m->slice_stamp >= s->all_stamp && m->slice_stamp >= s->add_stamp;
	uint64_t since = reuse ? m->slice_stamp : 0;
	for (int walk = 0; walk < 2; walk++) {
		/* 0: the devices the last refusal kept and that have not
		 * changed since (the changed ones come in the walk); 1: the
		 * devices changed since it (all of them without a memo) */
		int i = 0;
		int di = walk ? s->idx[cls].mru_head : -1;
		for (;;) {
			if (walk == 0) {
				if (!reuse || i >= m->n_slice)
					break;
				di = m->slice_di[i++];
				if (s->hot[di].stamp > since)
					continue;
			} else {
				if (di < 0 || s->hot[di].stamp <= since)
					break; /* unchanged since the refusal */
			}
			int r = slice_eval(s, g, di, res, &x);
			if (r && n_keep < SCHED_MAX_GANG)
				keep[n_keep++] = di;
			else if (r)
				overflow = 1;
			if (r == 1)
				best_insert(best, &n, (size_t)k, &x);
			if (walk)
				di = s->hot[di].next;
		}
	}
	if (s->opt.self_check && since) {
		/* the memo's answer against a walk over every device */
		spread_cand full[SCHED_MAX_GANG];
		size_t nf = 0;
		for (int di = s->idx[cls].mru_head; di >= 0; di = s->hot[di].next)
			if (slice_eval(s, g, di, res, &x) == 1)
				best_insert(full, &nf, (size_t)k, &x);
		int bad = (nf == (size_t)k) != (n == (size_t)k);
		for (size_t i = 0; !bad && n == (size_t)k && i < n; i++)
			bad = full[i].di != best[i].di;
		s->work.check_failures += (uint64_t)bad;
	}
	if (m) {
		m->slice_k = 0;
		if (n < (size_t)k && !overflow) {
			m->slice_stamp = s->stamp;
			m->slice_res = res;
			m->slice_k = k;
			m->n_slice = n_keep;
			memcpy(m->slice_di, keep, sizeof keep[0] * (size_t)n_keep);
		}
	}
	return n == (size_t)k;
}

int place_spread(sched *s, const pass *ps, sched_seg *g, int cls,
		 const sched_mem_estimate *e, sched_placement *pl)
{
	int k = g->req.n_devices > 1 ? g->req.n_devices : 1;
	uint64_t res = e->reserve_mib ? e->reserve_mib : 1;
	if (res > ps->max_free[cls] || (size_t)k > s->n_cls[cls])
		return 0;
	int relish = s->opt.policy == SHARE_RELISH;
	const sched_profile *p = &s->prof[g->prof];
	int chosen[SCHED_MAX_GANG];
	int n_chosen = 0;

	/* k idle devices that fit: the best any policy here can do (an idle
	 * device costs no one anything), from the index.  One size of
	 * device only: otherwise the walk compares them. */
	if (ps->n_empty[cls] >= (size_t)k && s->idx[cls].min_total == s->idx[cls].max_total &&
	    s->idx[cls].min_total >= res) {
		for (; n_chosen < k; n_chosen++) {
			chosen[n_chosen] = devidx_kth_empty(s, cls, (size_t)n_chosen);
			s->work.dev_evals++;
			/* (an empty device others use may lack the memory) */
			if (chosen[n_chosen] < 0 || dev_free(&s->dev[chosen[n_chosen]]) < res)
				break;
		}
	}
	if (n_chosen < k) {
		n_chosen = 0;
		spread_cand best[SCHED_MAX_GANG], x;
		size_t nb = 0;
		/* refused in this call: a gang at least as large, as hungry and
		 * as busy, in no observed pair (refusal is monotone in them,
		 * as for single segments, place.c's xmemo) */
		double util = est_util(s, &g->req, g->prof, &s->dev[s->cls_dev[cls][0]]);
		/* the candidate's utilisation is the same on every device of a
		 * class whose devices have one compute size (GPUs: 100 %) */
		double dev_util = s->idx[cls].min_compute == s->idx[cls].max_compute ? util : -1;
		int unpaired = 1; /* (paired ones too: see gmemo_dominated) */
		if (gmemo_dominated(s, cls, k, res, util, g->req.compute_hint))
			return 0;
		spread_memo *m = memo_of(s, g->prof);
		if (m && m->refused_call == s->call_id && m->k == k && m->cls == cls &&
		    res >= m->refused_res && g->req.compute_hint >= m->comp)
			return 0;
		uint64_t fstamp = s->fstamp[p->fam];
		int reuse = m && m->k == k && m->cls == cls && m->res <= res &&
			    m->comp == g->req.compute_hint && m->stamp >= p->stamp &&
			    m->stamp >= fstamp && m->stamp >= s->all_stamp && m->stamp >= s->add_stamp;
		spread_memo tmp;
		if (!m) { /* no memory for a memo: a walk over every device */
			memset(&tmp, 0, sizeof tmp);
			m = &tmp;
			reuse = 0;
		}
	again:;
		uint64_t since = reuse ? m->stamp : 0;
		int has_bound = reuse && !m->complete;
		spread_cand bound = has_bound ? m->bound : (spread_cand){0};
		/* 1. the kept devices that changed go (those with a new stamp
		 * are walked below; those where something started, which
		 * changes no stamp and can only lower their score, are scored
		 * again now) */
		spread_cand redo[SPREAD_KEEP];
		size_t nr = 0, w = 0;
		for (size_t i = 0; reuse && i < m->n; i++) {
			int di = m->c[i].di;
			const sched_hot *h = &s->hot[di];
			if (h->stamp > since)
				continue;
			if (h->ver != m->c[i].ver) {
				const sched_dev *d = &s->dev[di];
				int ok = h->free_key >= res || (d->claimed && !d->held && !d->avoided && dev_free(d) >= res);
				if (ok && spread_eval(s, g, cls, di, res, dev_util, &x))
					redo[nr++] = x;
				continue;
			}
			if (w != i)
				m->c[w] = m->c[i];
			w++;
		}
		m->n = w;
		m->k = k; /* (memo_cap reads it) */
		/* 2. the devices changed since (every device without a memo),
		 * claimed ones included: a claim lasts this call, and ends
		 * without changing a device's stamp */
		for (size_t i = 0; i < nr; i++)
			memo_insert(m, &has_bound, &bound, &redo[i]);
		for (int di = s->idx[cls].mru_head; di >= 0; di = s->hot[di].next) {
			if (s->hot[di].stamp <= since)
				break; /* unchanged since the memo: it answers */
			if (s->hot[di].free_key < res) {
				const sched_dev *d = &s->dev[di];
				if (!(d->claimed && !d->held && !d->avoided && dev_free(d) >= res))
					continue; /* held, or too little memory */
			}
			if (spread_eval(s, g, cls, di, res, dev_util, &x))
				memo_insert(m, &has_bound, &bound, &x);
		}
		m->stamp = s->stamp;
		m->res = res;
		m->comp = g->req.compute_hint;
		m->cls = cls;
		m->k = k;
		m->complete = !has_bound;
		m->bound = bound;
		/* 3. the best k that this call may take (all that is read
		 * below) */
		for (size_t i = 0; i < m->n && nb < (size_t)k; i++)
			if (s->hot[m->c[i].di].free_key >= res)
				best[nb++] = m->c[i];
		if (nb < (size_t)k && has_bound && reuse) {
			/* devices the memo does not hold might do: look at all */
			reuse = 0;
			nb = 0;
			goto again;
		}
		if (s->opt.self_check && since) {
			/* the memo's answer against a walk over every device */
			spread_cand full[SCHED_MAX_GANG];
			size_t nf = 0;
			for (int di = s->idx[cls].mru_head; di >= 0; di = s->hot[di].next)
				if (s->hot[di].free_key >= res && spread_eval(s, g, cls, di, res, dev_util, &x))
					best_insert(full, &nf, SCHED_MAX_GANG, &x);
			size_t cmpn = nf < (size_t)k ? nf : (size_t)k;
			int bad = (nf >= (size_t)k) != (nb >= (size_t)k);
			for (size_t i = 0; !bad && i < cmpn; i++)
				bad = full[i].di != best[i].di || full[i].score != best[i].score;
			s->work.check_failures += (uint64_t)bad;
		}
		if (m == &tmp)
			m = NULL;
		if (nb < (size_t)k) {
			if (m) {
				m->refused_call = s->call_id;
				m->refused_res = res;
			}
			if (unpaired)
				gmemo_note(s, cls, k, res, util, g->req.compute_hint, 0);
			if (k == 1) {
				/* the shape refused everywhere in this call with
				 * this much memory: place.c's per-call memo, which
				 * its fast path reads (single segments only: a gang
				 * of the shape is refused its own way) */
				sched_profile *pm = &s->prof[g->prof];
				if (pm->memo_call != s->call_id || pm->memo_cls != cls || res < pm->memo_mem ||
				    g->req.compute_hint < pm->memo_comp) {
					pm->memo_call = s->call_id;
					pm->memo_mem = res;
					pm->memo_comp = g->req.compute_hint;
					pm->memo_cls = cls;
				}
			}
			return 0;
		}
		if (relish) {
			/* the gang's gain: k x its slowest member's speed, plus
			 * what it costs the members of its devices */
			double slow = INFINITY, loss = 0, t0 = 0, changed = 0;
			for (int i = 0; i < k; i++) {
				slow = fmin(slow, best[i].speed);
				loss += best[i].loss;
				t0 += best[i].t0;
				if (s->dev[best[i].di].n_run)
					changed += 1 + best[i].weight;
			}
			double gain = (double)k * slow + loss;
			if (changed > 0 && !place_admits(s, gain, changed, t0)) {
				/* refused by the model: time-slice rather than
				 * wait, as a single segment does (its refusal
				 * then depends on memory, not on the gain) */
				int sliced = s->opt.timeslice_refused && s->opt.timeslice_gangs &&
					     spread_slice(s, g, cls, k, res, m, best);
				if (!sliced) {
					if (m) {
						m->refused_call = s->call_id;
						m->refused_res = res;
					}
					/* a gain refusal, for look-alikes of this
					 * call too when the slice found too few
					 * devices (one needing less memory might
					 * have found them: it waits for the next
					 * call; retrying each kept the simulator
					 * a third slower) */
					if (unpaired)
						gmemo_note(s, cls, k, res, util, g->req.compute_hint, 1);
					return 0;
				}
			}
		}
		for (int i = 0; i < k; i++)
			chosen[n_chosen++] = best[i].di;
	}
	double comp = INFINITY;
	for (int i = 0; i < k; i++) {
		comp = fmin(comp, est_compute(s, &g->req, g->prof, &s->dev[chosen[i]]));
		pl->dev[i] = chosen[i];
	}
	pl->n_dev = k;
	pl->mem_mib = res;
	pl->compute = comp;
	pl->basis = e->basis;
	return 1;
}

void spread_forget(sched *s, const size_t *remap, size_t n_old)
{
	/* remap[i] <= i: each memo moves down to a slot already passed */
	for (size_t i = 0; i < s->n_smemo; i++) {
		spread_memo *m = s->smemo[i];
		s->smemo[i] = NULL;
		if (i < n_old && remap[i] != SCHED_NONE)
			s->smemo[remap[i]] = m;
		else
			free(m);
	}
}

void spread_fini(sched *s)
{
	for (size_t i = 0; i < s->n_smemo; i++)
		free(s->smemo[i]);
	free(s->smemo);
	s->smemo = NULL;
	s->n_smemo = s->cap_smemo = 0;
}
