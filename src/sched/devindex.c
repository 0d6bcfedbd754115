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
 *   - the class's devices in most-recently-changed order as a doubly linked
 *     list (move to front in O(1)), which place.c walks only as far as the
 *     devices changed since a segment was last refused.
 * The alternative, rescanning every device at every call (what the first
 * version did), made the simulator quadratic in cluster size.
 */
#include "sched/sched_int.h"

#include <stdlib.h>
#include <string.h>

static uint64_t leaf_key(const sched_dev *d)
{
	if (d->claimed || d->held)
		return 0;
	return d->info.mem_total_mib - (d->mem_res <= d->info.mem_total_mib ?
					d->mem_res : d->info.mem_total_mib);
}

static uint32_t leaf_empty(const sched_dev *d)
{
	return !d->n_run && !d->claimed;
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

void devidx_update(sched *s, const sched_dev *d)
{
	tree_set(&s->idx[d->cls], d->cpos, leaf_key(d), leaf_empty(d));
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
		if (!mf || !ne) {
			free(mf);
			free(ne);
			return RL_ENOMEM;
		}
		free(x->maxfree);
		free(x->nempty);
		x->maxfree = mf;
		x->nempty = ne;
		x->P = P;
		for (size_t k = 0; k + 1 < n; k++)
			devidx_update(s, &s->dev[s->cls_dev[d->cls][k]]);
	}
	if (n == 1 || d->info.mem_total_mib < x->min_total)
		x->min_total = d->info.mem_total_mib;
	if (d->info.mem_total_mib > x->max_total)
		x->max_total = d->info.mem_total_mib;
	d->mru_prev = d->mru_next = -1;
	if (x->mru_head >= 0)
		s->dev[x->mru_head].mru_prev = di;
	d->mru_next = n > 1 ? x->mru_head : -1;
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
	if (d->mru_prev >= 0)
		s->dev[d->mru_prev].mru_next = d->mru_next;
	if (d->mru_next >= 0)
		s->dev[d->mru_next].mru_prev = d->mru_prev;
	d->mru_prev = -1;
	d->mru_next = x->mru_head;
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
	}
}
