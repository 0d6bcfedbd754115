/*
 * devindex.c - per-class indexes over the devices, so that a placement call
 * costs what changed, not the size of the cluster.
 *
 * For each device class (GPU, host) the core keeps:
 *   - a max segment tree over the class's devices keyed by free memory
 *     (0 for devices that are claimed by a starving request or held whole):
 *     the largest hole of the class is the root, read in O(1), updated in
 *     O(log n) when a reservation, a hold or a claim changes;
 *   - a count tree of empty, unclaimed devices: how many there are (root)
 *     and the k-th in index order in O(log n), which is what exclusive
 *     segments and gangs need;
 *   - a min tree of reserved memory over all devices, for the devices a
 *     starving request claims (the least reserved ones) in O(log n);
 *   - the class's devices in most-recently-changed order as a doubly linked
 *     list (move to front in O(1)), which place.c walks only as far as the
 *     devices changed since a segment was last refused;
 *   - for pack only, a treap of the unheld devices keyed by
 *     (free memory, position): best fit is one descent, O(log n) expected.
 *     Without it a segment never tried before walked every device, which
 *     made pack quadratic in cluster size (a 10x trace on a 10x cluster
 *     took 18x the time).  The treap's shape comes from a hash of the
 *     position, so runs stay deterministic; the answers do not depend on
 *     the shape anyway.
 * The alternative, rescanning every device at every call (what the first
 * version did), made the simulator quadratic in cluster size.
 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

/* Free memory counts what others use (sched__dev_free); a device avoided
 * for it is like a claimed one: nothing new starts there. */
static uint64_t free_mib(const sched_dev *d)
{
	return sched__dev_free(d);
}

static uint64_t leaf_key(const sched_dev *d)
{
	return d->claimed || d->held || d->avoided ? 0 : free_mib(d);
}

static uint32_t leaf_empty(const sched_dev *d)
{
	return !d->n_run && !d->claimed && !d->avoided;
}

static void minres_set(sched_devidx *x, size_t pos, uint64_t res)
{
	size_t i = x->P + pos;
	if (x->minres[i] == res)
		return;
	x->minres[i] = res;
	for (i /= 2; i >= 1; i /= 2) {
		uint64_t a = x->minres[2 * i], b = x->minres[2 * i + 1];
		uint64_t m = a < b ? a : b;
		if (x->minres[i] == m)
			break;
		x->minres[i] = m;
	}
}

int devidx_least_reserved(sched *s, int cls, const int *skip, int n_skip)
{
	sched_devidx *x = &s->idx[cls];
	if (!s->n_cls[cls])
		return -1;
	for (int k = 0; k < n_skip; k++)
		minres_set(x, s->dev[skip[k]].cpos, UINT64_MAX);
	int di = -1;
	if (x->minres[1] != UINT64_MAX) {
		size_t i = 1;
		while (i < x->P)
			i = x->minres[2 * i] <= x->minres[2 * i + 1] ? 2 * i : 2 * i + 1;
		di = s->cls_dev[cls][i - x->P];
	}
	for (int k = 0; k < n_skip; k++)
		minres_set(x, s->dev[skip[k]].cpos, s->dev[skip[k]].mem_res);
	return di;
}

static void tree_set(sched_devidx *x, size_t pos, uint64_t key, uint32_t empty)
{
	size_t i = x->P + pos;
	if (x->maxfree[i] == key && x->nempty[i] == empty)
		return; /* nothing above changes */
	x->maxfree[i] = key;
	x->nempty[i] = empty;
	for (i /= 2; i >= 1; i /= 2) {
		uint64_t a = x->maxfree[2 * i], b = x->maxfree[2 * i + 1];
		uint64_t m = a > b ? a : b;
		uint32_t e = x->nempty[2 * i] + x->nempty[2 * i + 1];
		if (x->maxfree[i] == m && x->nempty[i] == e)
			break; /* the rest of the path already agrees */
		x->maxfree[i] = m;
		x->nempty[i] = e;
	}
}

/* ---- best-fit treap ---- */

/* Keys are free << FIT_POS_BITS | position: unique, and ordered by free
 * memory then position (= device index order within a class). */
#define FIT_POS_BITS 20

static uint32_t fit_prio(int32_t pos)
{
	uint64_t z = (uint64_t)pos + 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (uint32_t)(z ^ (z >> 31));
}

/* Split t into keys < k (*l) and keys >= k (*r). */
static void fit_split(sched_devidx *x, int32_t t, uint64_t k, int32_t *l, int32_t *r)
{
	if (t < 0) {
		*l = *r = -1;
	} else if (x->tkey[t] < k) {
		fit_split(x, x->tr[t], k, &x->tr[t], r);
		*l = t;
	} else {
		fit_split(x, x->tl[t], k, l, &x->tl[t]);
		*r = t;
	}
}

/* Join a and b, every key of a below every key of b. */
static int32_t fit_merge(sched_devidx *x, int32_t a, int32_t b)
{
	if (a < 0)
		return b;
	if (b < 0)
		return a;
	if (x->tprio[a] > x->tprio[b]) {
		x->tr[a] = fit_merge(x, x->tr[a], b);
		return a;
	}
	x->tl[b] = fit_merge(x, a, x->tl[b]);
	return b;
}

/* The link (root or child slot) that holds pos, which is in the treap. */
static int32_t *fit_link(sched_devidx *x, int32_t pos)
{
	uint64_t k = x->tkey[pos];
	int32_t *link = &x->troot;
	while (*link != pos)
		link = k < x->tkey[*link] ? &x->tl[*link] : &x->tr[*link];
	return link;
}

/* Remove and insert each touch one path: the node's children merge into
 * its place; a new node goes where its priority puts it on its key's path
 * and takes what lies below, split by its key.  (A first version did three
 * splits and three merges per change; this took pack 11-28 % less time.) */
static void fit_set(sched_devidx *x, int32_t pos, int in, uint64_t free_mib)
{
	uint64_t key = in ? free_mib << FIT_POS_BITS | (uint64_t)pos : 0;
	if (x->tin[pos] == in && (!in || x->tkey[pos] == key))
		return;
	if (x->tin[pos]) {
		int32_t *link = fit_link(x, pos);
		*link = fit_merge(x, x->tl[pos], x->tr[pos]);
		x->tin[pos] = 0;
	}
	if (in) {
		x->tkey[pos] = key;
		int32_t *link = &x->troot;
		while (*link >= 0 && x->tprio[*link] > x->tprio[pos])
			link = key < x->tkey[*link] ? &x->tl[*link] : &x->tr[*link];
		fit_split(x, *link, key, &x->tl[pos], &x->tr[pos]);
		*link = pos;
		x->tin[pos] = 1;
	}
}

int devidx_fit_on(const sched *s, int cls)
{
	return s->idx[cls].fit_on;
}

int devidx_best_fit(const sched *s, int cls, uint64_t need)
{
	const sched_devidx *x = &s->idx[cls];
	if (!x->fit_on || need > UINT64_MAX >> FIT_POS_BITS)
		return -1;
	uint64_t q = need << FIT_POS_BITS;
	for (;;) {
		int32_t best = -1;
		for (int32_t t = x->troot; t >= 0;) {
			if (x->tkey[t] >= q) {
				best = t;
				t = x->tl[t];
			} else {
				t = x->tr[t];
			}
		}
		if (best < 0)
			return -1;
		int di = s->cls_dev[cls][best];
		if (!s->dev[di].claimed)
			return di;
		q = x->tkey[best] + 1; /* at most a few claimed devices: the next */
	}
}

void devidx_update(sched *s, const sched_dev *d)
{
	sched_devidx *x = &s->idx[d->cls];
	uint64_t key = leaf_key(d);
	s->hot[d - s->dev].free_key = key;
	tree_set(x, d->cpos, key, leaf_empty(d));
	minres_set(x, d->cpos, d->mem_res);
	/* Claims come and go every call; the treap keeps claimed devices
	 * and the query steps over them (there are at most a few). */
	if (x->fit_on)
		fit_set(x, (int32_t)d->cpos, !d->held && !d->avoided, free_mib(d));
}

int devidx_add(sched *s, int di)
{
	sched_dev *d = &s->dev[di];
	sched_devidx *x = &s->idx[d->cls];
	size_t n = s->n_cls[d->cls]; /* d is already counted */
	if (n > x->P) {
		size_t P = x->P ? x->P : 4;
		while (P < n)
			P *= 2;
		uint64_t *mf = calloc(2 * P, sizeof *mf);
		uint32_t *ne = calloc(2 * P, sizeof *ne);
		uint64_t *mr = malloc(2 * P * sizeof *mr);
		/* pack keeps a best-fit treap while positions fit in its keys */
		int fit = s->opt.policy == SHARE_PACK && P <= ((size_t)1 << FIT_POS_BITS);
		uint64_t *tk = fit ? calloc(P, sizeof *tk) : NULL;
		int32_t *tl = fit ? calloc(P, sizeof *tl) : NULL;
		int32_t *tr = fit ? calloc(P, sizeof *tr) : NULL;
		uint8_t *ti = fit ? calloc(P, sizeof *ti) : NULL;
		uint32_t *tp = fit ? malloc(P * sizeof *tp) : NULL;
		if (!mf || !ne || !mr || (fit && (!tk || !tl || !tr || !ti || !tp))) {
			free(mf);
			free(ne);
			free(mr);
			free(tk);
			free(tl);
			free(tr);
			free(ti);
			free(tp);
			return RL_ENOMEM;
		}
		for (size_t k = 0; fit && k < P; k++)
			tp[k] = fit_prio((int32_t)k);
		for (size_t k = 0; k < 2 * P; k++)
			mr[k] = UINT64_MAX; /* padding leaves never win */
		free(x->maxfree);
		free(x->nempty);
		free(x->minres);
		free(x->tkey);
		free(x->tl);
		free(x->tr);
		free(x->tin);
		free(x->tprio);
		x->maxfree = mf;
		x->nempty = ne;
		x->minres = mr;
		x->tkey = tk;
		x->tl = tl;
		x->tr = tr;
		x->tin = ti;
		x->tprio = tp;
		x->troot = -1;
		x->fit_on = fit;
		x->P = P;
		for (size_t k = 0; k + 1 < n; k++)
			devidx_update(s, &s->dev[s->cls_dev[d->cls][k]]);
	}
	if (n == 1 || d->info.mem_total_mib < x->min_total)
		x->min_total = d->info.mem_total_mib;
	if (n == 1 || d->info.compute_total < x->min_compute)
		x->min_compute = d->info.compute_total;
	if (n == 1 || d->info.compute_total > x->max_compute)
		x->max_compute = d->info.compute_total;
	if (d->info.mem_total_mib > x->max_total)
		x->max_total = d->info.mem_total_mib;
	d->mru_prev = -1;
	if (x->mru_head >= 0)
		s->dev[x->mru_head].mru_prev = di;
	s->hot[di].next = n > 1 ? x->mru_head : -1;
	x->mru_head = di;
	devidx_update(s, d);
	return 0;
}

void devidx_touch(sched *s, sched_dev *d)
{
	sched_devidx *x = &s->idx[d->cls];
	int di = (int)(d - s->dev);
	if (x->mru_head == di)
		return;
	int next = s->hot[di].next;
	if (d->mru_prev >= 0)
		s->hot[d->mru_prev].next = next;
	if (next >= 0)
		s->dev[next].mru_prev = d->mru_prev;
	d->mru_prev = -1;
	s->hot[di].next = x->mru_head;
	if (x->mru_head >= 0)
		s->dev[x->mru_head].mru_prev = di;
	x->mru_head = di;
}

uint64_t devidx_max_free(const sched *s, int cls)
{
	return s->n_cls[cls] ? s->idx[cls].maxfree[1] : 0;
}

size_t devidx_n_empty(const sched *s, int cls)
{
	return s->n_cls[cls] ? s->idx[cls].nempty[1] : 0;
}

int devidx_kth_empty(const sched *s, int cls, size_t k)
{
	const sched_devidx *x = &s->idx[cls];
	if (!s->n_cls[cls] || k >= x->nempty[1])
		return -1;
	size_t i = 1;
	while (i < x->P) {
		if (k < x->nempty[2 * i]) {
			i = 2 * i;
		} else {
			k -= x->nempty[2 * i];
			i = 2 * i + 1;
		}
	}
	return s->cls_dev[cls][i - x->P];
}

void devidx_fini(sched *s)
{
	for (int c = 0; c < CLS__COUNT; c++) {
		free(s->idx[c].maxfree);
		free(s->idx[c].nempty);
		free(s->idx[c].minres);
		free(s->idx[c].tkey);
		free(s->idx[c].tl);
		free(s->idx[c].tr);
		free(s->idx[c].tin);
		free(s->idx[c].tprio);
	}
}
