/*
 * sched.c - the core scheduler's state: devices, the queue of segments, the
 * life of a segment (submit, place, finish, remove, adopt) and read-only
 * views.  Placement decisions live in place.c, what the core knows about
 * memory in estimate.c, and how co-located segments slow each other in
 * colocate.c.  Everything here is pure: time comes in as an argument.
 *
 * The queue (sched_queue: a sorted front and a heap behind it) is ordered by
 * (priority, the order policy's key, submit_time, seg_id): the key is the
 * job's attained service (las), its Tiresias queue, or 0 (fifo), fixed at
 * submission; under fair each user has a queue of its own and place.c
 * merges them by the users' attained service.  Ties end at the driver's
 * id, so runs are reproducible.  The core counts service itself: devices x
 * seconds held, per job and per user, from placements and ends.
 */
#include "sched/sched_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------ */

const char *sched_basis_name(sched_basis b)
{
	static const char *const names[] = {
		[SCHED_BASIS_HINT] = "hint",     [SCHED_BASIS_PROFILE] = "profile",
		[SCHED_BASIS_FAMILY] = "family", [SCHED_BASIS_EXCLUSIVE] = "exclusive",
		[SCHED_BASIS_OOM] = "oom",       [SCHED_BASIS_PROBE] = "probe",
	};
	if ((int)b < 0 || (size_t)b >= sizeof names / sizeof names[0])
		return "unknown";
	return names[b];
}

void sched_options_default(sched_options *o, sharing_policy policy)
{
	memset(o, 0, sizeof *o);
	o->policy = policy;
	o->memory_margin = 0.2;
	/* relish: how low users' hints are is measured (est_hint_factor):
	 * one in a thousand too low.  On the Philly trace's noisy hints
	 * (0.8-1.6x the peak) 0.7 % of shapes peaked above 1.2x their
	 * hint, and out-of-memory ends at 64/128/256 GPUs went 76/69/61 ->
	 * 32/36/22 (0.99: unchanged; docs/evaluation.md) */
	o->hint_quantile = policy == SHARE_RELISH ? 0.999 : 0;
	/* ... and how often the family model's reservations were too low
	 * (est_family_factor), by the same one in a thousand: on the Philly
	 * trace one placement on a family estimate in ten ran out of memory
	 * (loo_rmse is one error for a whole family), and out-of-memory
	 * ends at 64/128/256 GPUs went 48/20/23 -> 11/13/12 at the same
	 * mean JCT (docs/evaluation.md) */
	o->family_quantile = policy == SHARE_RELISH ? 0.999 : 0;
	o->memory_floor_mib = 256;
	o->host_memory_floor_mib = 64;
	/* A quarter of the host, 1 to 8 GiB: on a 24 GiB machine 6 GiB,
	 * room for four first guesses beside each other; a CPU trial that
	 * needs more is stopped over its reservation and re-placed larger
	 * (mem.c), as after a low hint. */
	o->host_probe_share = 0.25;
	o->host_probe_min_mib = 1024;
	o->host_probe_max_mib = 8192;
	o->default_compute = 1.0;
	o->default_gpu_compute = 100.0;
	o->min_speedup = 1.0;
	o->aging_s = 1800.0;
	o->oom_factor = 1.5;
	o->oom_alone_after = 3;
	o->scan_max = 256;
	/* 16: on the Philly sweep (64 to 1,024 GPUs) windows of 8 to 64 gave
	 * the same mean JCT within 0.4 %; a larger window only costs time on
	 * large clusters (docs/evaluation.md, Speed and memory). */
	o->score_max = 16;
	o->solo_after_s = 0;
	o->share_gangs = policy == SHARE_RELISH || policy == SHARE_GANDIVA;
	o->family_probe = 1;
	/* relish: refused by the model everywhere, time-slice rather than
	 * wait (docs/evaluation.md: mean JCT -4 %, makespan -10 % at 64
	 * GPUs on the Philly trace; docs/scheduling.md says why) */
	o->timeslice_refused = policy == SHARE_RELISH;
	/* relish: gangs too (docs/evaluation.md: mean JCT at 64 GPUs on the
	 * Philly trace, with gang_probe, 101.1 -> 90.9 h) */
	o->timeslice_gangs = policy == SHARE_RELISH;
	/* relish: a gang's first segment bets on its hint as a single
	 * segment's does (docs/evaluation.md: with timeslice_gangs, mean
	 * JCT 100.7 -> 90.9 h at 64 GPUs, out-of-memory ends 45 -> 69) */
	o->gang_probe = policy == SHARE_RELISH;
	o->gang_scan_max = 0;
	/* the median |error| of the core's prior on Lucid's measured pairs
	 * (relish simulate --check-colocate; docs/scheduling.md) */
	o->colocate_margin = policy == SHARE_RELISH ? 0.044 : 0;
	/* Two tries of a pair whose gain is uncertain: one measurement, and
	 * a second when the first fell within the margin of no gain (the
	 * model's error, above); docs/scheduling.md, Exploration */
	o->explore_max = policy == SHARE_RELISH ? 2 : 0;
	/* Gandiva: two segments time-sliced on a GPU at most; on the Philly
	 * sweep this beat time-slicing as deep as memory allows in mean JCT
	 * at 64 and 128 GPUs and in makespan at every size
	 * (docs/simulator.md) */
	o->timeslice_max = policy == SHARE_GANDIVA ? 2 : 0;
	/* relish: on the Philly trace, makespan at 64 GPUs 3,472 -> 3,021
	 * h, mean JCT 90.9 -> 92.5 h (docs/evaluation.md).  The peers keep
	 * plain LAS, their best mean JCT: Gandiva in LAS order gains the
	 * makespan too (3,123 -> 2,959 h) but loses 1 % of mean JCT, and
	 * exclusive 10 %. */
	o->las_tail = policy == SHARE_RELISH ? 0.99 : 0;
	o->order = ORDER_DEFAULT;
	/* Slurm's PriorityDecayHalfLife default: last week's usage counts
	 * half, last month's a sixteenth */
	o->fair_half_life_s = 7 * 86400.0;
	/* Eight queues, thresholds doubling from half a GPU-hour: on the
	 * Philly sweep the best of the ladders tried for the Tiresias peer
	 * (docs/simulator.md) */
	for (int k = 0; k < SCHED_MAX_TIERS; k++)
		o->tiresias_limit_s[k] = 1800.0 * (double)(1 << k);
	o->foreign = SCHED_FOREIGN_SHARE;
	/* NVML is sampled every 0.2 s live: a tenth more, or 64 MiB, covers
	 * what a process allocates between two samples in most cases, and a
	 * sample that misses more only costs a re-queue (never a failure). */
	o->foreign_margin = 0.1;
	o->foreign_margin_mib = 64;
	o->oom_foreign_max = 5;
	o->lost_max = 5;
	o->learn_max = SCHED_LEARN_MAX;
}

/* ---- change stamps ---------------------------------------------------- */

void sched__touch_dev(sched *s, sched_dev *d)
{
	d->pend = 0; /* changed for everyone now (its list entry goes lazily) */
	d->stamp = ++s->stamp;
	s->hot[d - s->dev].stamp = d->stamp;
	d->ver++;
	s->hot[d - s->dev].ver = (uint32_t)d->ver;
	s->cls_stamp[d->cls] = d->stamp;
	/* to the front of the class's most-recently-changed list, so re-trying
	 * a segment on the devices changed since it was refused walks only
	 * those */
	devidx_touch(s, d);
}

void sched__touch_all(sched *s)
{
	s->all_stamp = ++s->stamp;
}

void sched__touch_prof(sched *s, size_t pi)
{
	for (size_t gi = s->prof[pi].run_head; gi != SCHED_NONE; gi = s->seg[gi].srun_next)
		for (int k = 0; k < s->seg[gi].pl.n_dev; k++)
			sched__touch_dev(s, &s->dev[s->seg[gi].pl.dev[k]]);
}

void sched__touch_shape(sched *s, uint64_t shape)
{
	size_t pi = est_profile_find(s, shape);
	if (pi != SCHED_NONE)
		sched__touch_prof(s, pi);
}

size_t sched__held_profiles(const sched *s, unsigned char *held)
{
	size_t n = 0;
	for (size_t gi = 0; gi < s->n_seg; gi++) {
		size_t pi = s->seg[gi].prof;
		if (s->seg[gi].state != SEG_FREE && !held[pi]) {
			held[pi] = 1;
			n++;
		}
	}
	return n;
}

static void queue_remap_prof(sched_queue *q, const size_t *remap)
{
	for (size_t i = 0; i < q->n_queue; i++) {
		sched_qent *e = &SCHED_Q(q, i);
		if (e->prof != UINT32_MAX)
			e->prof = (uint32_t)remap[e->prof];
	}
	for (size_t i = 0; i < q->n_back; i++)
		if (q->hbuf[i].prof != UINT32_MAX)
			q->hbuf[i].prof = (uint32_t)remap[q->hbuf[i].prof];
}

void sched__remap_prof(sched *s, const size_t *remap)
{
	for (size_t gi = 0; gi < s->n_seg; gi++)
		if (s->seg[gi].state != SEG_FREE)
			s->seg[gi].prof = remap[s->seg[gi].prof];
	queue_remap_prof(&s->q, remap);
	for (size_t i = 0; i < s->n_user; i++)
		queue_remap_prof(&s->user[i].q, remap);
}

/* ---- small containers ------------------------------------------------- */

int sched__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 8;
	while (n < need)
		n *= 2;
	void *p = realloc(*arr, n * elem);
	if (!p)
		return RL_ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

static size_t map_hash(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return (size_t)h;
}

size_t sched__map_get(const sched_map *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return SCHED_NONE;
	size_t mask = m->cap - 1;
	for (size_t i = map_hash(a, b) & mask;; i = (i + 1) & mask) {
		const sched_map_slot *sl = &m->slot[i];
		if (!sl->val)
			return SCHED_NONE;
		if (sl->a == a && sl->b == b)
			return sl->val - 1;
	}
}

static void map_insert(sched_map_slot *slot, size_t cap, uint64_t a, uint64_t b,
		       size_t val)
{
	size_t mask = cap - 1;
	for (size_t i = map_hash(a, b) & mask;; i = (i + 1) & mask) {
		if (!slot[i].val || (slot[i].a == a && slot[i].b == b)) {
			slot[i] = (sched_map_slot){ a, b, val };
			return;
		}
	}
}

int sched__map_put(sched_map *m, uint64_t a, uint64_t b, size_t val)
{
	if ((m->n + 1) * 2 > m->cap) { /* keep the load under one half */
		size_t ncap = m->cap ? m->cap * 2 : 64;
		sched_map_slot *ns = calloc(ncap, sizeof *ns);
		if (!ns)
			return RL_ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slot[i].val)
				map_insert(ns, ncap, m->slot[i].a, m->slot[i].b, m->slot[i].val);
		free(m->slot);
		m->slot = ns;
		m->cap = ncap;
	}
	if (sched__map_get(m, a, b) == SCHED_NONE)
		m->n++;
	map_insert(m->slot, m->cap, a, b, val + 1);
	return 0;
}

void sched__map_del(sched_map *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, i = map_hash(a, b) & mask;
	for (;; i = (i + 1) & mask) {
		if (!m->slot[i].val)
			return;
		if (m->slot[i].a == a && m->slot[i].b == b)
			break;
	}
	/* Backward-shift: move later members of the probe run into the hole
	 * when their home slot allows it, so lookups never need tombstones. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; m->slot[j].val; j = (j + 1) & mask) {
		size_t home = map_hash(m->slot[j].a, m->slot[j].b) & mask;
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			m->slot[hole] = m->slot[j];
			hole = j;
		}
	}
	m->slot[hole].val = 0;
	m->n--;
}

void sched__map_fini(sched_map *m)
{
	free(m->slot);
	memset(m, 0, sizeof *m);
}

/* ---- lifecycle -------------------------------------------------------- */

static void queue_fini(sched_queue *q);

int sched_new(const sched_options *opt, sched **out, rl_err *err)
{
	if (!opt || !out)
		return rl_err_set(err, RL_EINVAL, "sched_new: NULL argument");
	if (opt->policy != SHARE_EXCLUSIVE && opt->policy != SHARE_PACK &&
	    opt->policy != SHARE_RELISH && opt->policy != SHARE_GANDIVA)
		return rl_err_set(err, RL_EINVAL, "sched_new: unknown sharing policy %d",
				  (int)opt->policy);
	if (!(opt->memory_margin >= 0) || !(opt->min_speedup > 0) ||
	    !(opt->oom_factor >= 1) || opt->oom_alone_after < 0 || !(opt->default_compute > 0) ||
	    !(opt->default_gpu_compute > 0) || !(opt->foreign_margin >= 0) ||
	    opt->oom_foreign_max < 0 || opt->lost_max < 0 ||
	    (opt->foreign != SCHED_FOREIGN_SHARE && opt->foreign != SCHED_FOREIGN_AVOID))
		return rl_err_set(err, RL_EINVAL,
				  "sched_new: expected memory_margin >= 0, min_speedup > 0, "
				  "oom_factor >= 1, oom_alone_after >= 0, default compute > 0, "
				  "foreign_margin >= 0, oom_foreign_max >= 0, lost_max >= 0 and "
				  "foreign share|avoid");
	if (!(opt->colocate_margin >= 0) || opt->timeslice_max < 0 || opt->explore_max < 0)
		return rl_err_set(err, RL_EINVAL,
				  "sched_new: expected colocate_margin, timeslice_max and "
				  "explore_max >= 0");
	if (!(opt->las_tail >= 0 && opt->las_tail <= 1) ||
	    !(opt->hint_quantile >= 0 && opt->hint_quantile <= 1) ||
	    !(opt->family_quantile >= 0 && opt->family_quantile <= 1))
		return rl_err_set(err, RL_EINVAL,
				  "sched_new: expected las_tail, hint_quantile and "
				  "family_quantile in [0, 1]");
	if ((unsigned)opt->order > ORDER_FAIR)
		return rl_err_set(err, RL_EINVAL, "sched_new: unknown queue order %d", (int)opt->order);
	for (int k = 0; k < SCHED_MAX_TIERS && opt->tiresias_limit_s[k] != 0; k++)
		if (!(opt->tiresias_limit_s[k] > 0) || !isfinite(opt->tiresias_limit_s[k]) ||
		    (k && !(opt->tiresias_limit_s[k] > opt->tiresias_limit_s[k - 1])))
			return rl_err_set(err, RL_EINVAL,
					  "sched_new: tiresias_limit_s: expected ascending seconds > 0");
	sched *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "sched_new");
	s->opt = *opt;
	if (s->opt.order == ORDER_DEFAULT) {
		/* the named policy whose placement this is (policy.h) */
		for (int p = 0; p < SCHED_POLICY__COUNT; p++)
			if (sched_policy_placement((sched_policy)p) == opt->policy) {
				s->opt.order = sched_policy_order((sched_policy)p, ORDER_DEFAULT);
				break;
			}
	}
	s->free_head = SCHED_NONE;
	s->job_free = SCHED_NONE;
	s->stamp = 1;
	for (int c = 0; c < CLS__COUNT; c++)
		s->idx[c].mru_head = -1;
	*out = s;
	return 0;
}

void sched_free(sched *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_dev; i++)
		free(s->dev[i].run);
	for (size_t i = 0; i < s->n_seg; i++)
		free(s->seg[i].ov);
	free(s->dev);
	for (int c = 0; c < CLS__COUNT; c++)
		free(s->cls_dev[c]);
	devidx_fini(s);
	free(s->hot);
	free(s->seg);
	queue_fini(&s->q);
	for (size_t i = 0; i < s->n_user; i++)
		queue_fini(&s->user[i].q);
	free(s->user);
	free(s->uheap);
	spread_fini(s);
	sched__map_fini(&s->user_map);
	free(s->job);
	sched__map_fini(&s->job_map);
	sched__map_fini(&s->seg_map);
	est_fini(s);
	colo_fini(s);
	free(s);
}

int sched_add_device(sched *s, const sched_device_info *dev, rl_err *err)
{
	if (!dev->mem_total_mib || !(dev->compute_total > 0))
		return rl_err_set(err, RL_EINVAL,
				  "device %s: expected memory > 0 MiB and compute > 0",
				  dev->name);
	if (sched__grow((void **)&s->dev, &s->cap_dev, s->n_dev + 1, sizeof *s->dev) ||
	    sched__grow((void **)&s->hot, &s->cap_hot, s->n_dev + 1, sizeof *s->hot))
		return rl_err_set(err, RL_ENOMEM, "adding device %s", dev->name);
	memset(&s->hot[s->n_dev], 0, sizeof s->hot[0]);
	sched_dev *d = &s->dev[s->n_dev];
	memset(d, 0, sizeof *d);
	d->info = *dev;
	d->info.name[sizeof d->info.name - 1] = '\0';
	d->info.uuid[sizeof d->info.uuid - 1] = '\0';
	d->cls = dev->is_gpu ? CLS_GPU : CLS_HOST;
	if (sched__grow((void **)&s->cls_dev[d->cls], &s->cap_cls_dev[d->cls],
		       s->n_cls[d->cls] + 1, sizeof(int)))
		return rl_err_set(err, RL_ENOMEM, "adding device %s", dev->name);
	d->cpos = s->n_cls[d->cls];
	s->cls_dev[d->cls][s->n_cls[d->cls]++] = (int)s->n_dev;
	if (devidx_add(s, (int)s->n_dev)) {
		s->n_cls[d->cls]--;
		return rl_err_set(err, RL_ENOMEM, "adding device %s", dev->name);
	}
	sched__touch_dev(s, d);
	s->add_stamp = d->stamp;
	return (int)s->n_dev++;
}

size_t sched_device_count(const sched *s) { return s->n_dev; }

int sched__req_class(const sched *s, const sched_request *req)
{
	if (req->needs_gpu || !s->n_cls[CLS_HOST])
		return CLS_GPU;
	return CLS_HOST;
}

/* Queue order: (priority, the order policy's key, submit_time, seg_id).
 * The key is fixed when the segment is submitted: 0 (fifo), the job's
 * attained service (las, and within a user under fair) or its Tiresias
 * queue (tiresias).  Under fair the users' own order comes on top
 * (place.c): it moves with time, so it is not part of a key. */
static int key_less(const sched_seg *ga, const sched_seg *gb)
{
	const sched_request *a = &ga->req, *b = &gb->req;
	if (a->priority != b->priority)
		return a->priority < b->priority;
	if (ga->okey != gb->okey)
		return ga->okey < gb->okey;
	if (a->submit_time != b->submit_time)
		return a->submit_time < b->submit_time;
	return a->seg_id < b->seg_id;
}

static size_t queue_lower_bound(const sched *s, const sched_queue *q, const sched_seg *g)
{
	size_t lo = 0, hi = q->n_queue;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (key_less(&s->seg[SCHED_Q(q, mid).gi], g))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the back of a queue: a binary min-heap by key ---- */

static int heap_less(const sched *s, const sched_qent *a, const sched_qent *b)
{
	return key_less(&s->seg[a->gi], &s->seg[b->gi]);
}

static void heap_set(sched *s, sched_queue *q, size_t i, sched_qent e)
{
	q->hbuf[i] = e;
	s->seg[e.gi].hpos = i;
}

static void heap_up(sched *s, sched_queue *q, size_t i)
{
	sched_qent e = q->hbuf[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!heap_less(s, &e, &q->hbuf[p]))
			break;
		heap_set(s, q, i, q->hbuf[p]);
		i = p;
	}
	heap_set(s, q, i, e);
}

static void heap_down(sched *s, sched_queue *q, size_t i)
{
	sched_qent e = q->hbuf[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= q->n_back)
			break;
		if (c + 1 < q->n_back && heap_less(s, &q->hbuf[c + 1], &q->hbuf[c]))
			c++;
		if (!heap_less(s, &q->hbuf[c], &e))
			break;
		heap_set(s, q, i, q->hbuf[c]);
		i = c;
	}
	heap_set(s, q, i, e);
}

static int heap_push(sched *s, sched_queue *q, sched_qent e)
{
	if (sched__grow((void **)&q->hbuf, &q->cap_back, q->n_back + 1, sizeof *q->hbuf))
		return RL_ENOMEM;
	q->hbuf[q->n_back++] = e;
	heap_up(s, q, q->n_back - 1);
	return 0;
}

static void heap_remove(sched *s, sched_queue *q, size_t i)
{
	s->seg[q->hbuf[i].gi].hpos = SCHED_NONE;
	sched_qent last = q->hbuf[--q->n_back];
	if (i == q->n_back)
		return;
	q->hbuf[i] = last;
	if (i > 0 && heap_less(s, &last, &q->hbuf[(i - 1) / 2]))
		heap_up(s, q, i);
	else
		heap_down(s, q, i);
}

/* Most front entries before the largest moves to the back: room for one
 * scan, and as much again so that the front is not refilled every call. */
static size_t front_cap(const sched *s)
{
	return s->opt.scan_max ? 2 * s->opt.scan_max + 64 : SIZE_MAX;
}

/* Insert qe at front position pos, moving the shorter side. */
static int queue_insert_ent(sched *s, sched_queue *q, size_t pos, sched_qent qe)
{
	size_t n = q->n_queue;
	int front_room = q->q_lo > 0, back_room = q->q_lo + n < q->cap_queue;
	int front = pos < n / 2; /* the side that moves */
	if (front ? !front_room : !back_room) {
		/* The side that moves has no room.  Moving the whole queue
		 * by one slot into the other side would do that again at the
		 * next insertion (appends at the back while placements free the
		 * front make the queue crawl down the buffer, O(queue) every
		 * time); instead centre it, in a buffer of at least twice its
		 * length, so that each side has n/2 slots before this again. */
		size_t cap = q->cap_queue >= 2 * n + 64 ? q->cap_queue : 2 * n + 64;
		size_t lo = (cap - n) / 2;
		if (cap != q->cap_queue) {
			sched_qent *nb = malloc(cap * sizeof *nb);
			if (!nb)
				return RL_ENOMEM;
			if (n)
				memcpy(&nb[lo], &q->qbuf[q->q_lo], n * sizeof *nb);
			free(q->qbuf);
			q->qbuf = nb;
			q->cap_queue = cap;
		} else if (n) {
			memmove(&q->qbuf[lo], &q->qbuf[q->q_lo], n * sizeof *q->qbuf);
		}
		q->q_lo = lo;
		front_room = back_room = 1;
	}
	if (front_room && (front || !back_room)) {
		memmove(&q->qbuf[q->q_lo - 1], &q->qbuf[q->q_lo], pos * sizeof *q->qbuf);
		q->q_lo--;
	} else {
		memmove(&q->qbuf[q->q_lo + pos + 1], &q->qbuf[q->q_lo + pos],
			(n - pos) * sizeof *q->qbuf);
	}
	SCHED_Q(q, pos) = qe;
	s->seg[qe.gi].hpos = SCHED_NONE;
	q->n_queue++;
	return 0;
}

static sched_qent qent_new(const sched *s, size_t gi)
{
	const sched_seg *g = &s->seg[gi];
	return (sched_qent){
		.gi = gi,
		.comp = g->req.compute_hint,
		.prof = g->prof < UINT32_MAX ? (uint32_t)g->prof : UINT32_MAX,
		.n_whole = (uint16_t)(g->req.n_devices > 1 ? g->req.n_devices : 1),
	};
}

/* The queue a segment waits in. */
static sched_queue *seg_queue(sched *s, const sched_seg *g)
{
	return s->opt.order == ORDER_FAIR ? &s->user[g->user].q : &s->q;
}

/* Queue a new segment: into the heap when it sorts after the whole front
 * (and the heap is in use), else into the sorted front, whose largest
 * entry then moves to the heap when the front is over its cap. */
static int queue_add(sched *s, size_t gi)
{
	const sched_seg *g = &s->seg[gi];
	sched_queue *q = seg_queue(s, g);
	if (q->n_back && (!q->n_queue || key_less(&s->seg[SCHED_Q(q, q->n_queue - 1).gi], g)))
		return heap_push(s, q, qent_new(s, gi));
	if (queue_insert_ent(s, q, queue_lower_bound(s, q, g), qent_new(s, gi)))
		return RL_ENOMEM;
	if (q->n_queue > front_cap(s)) {
		sched_qent last = SCHED_Q(q, q->n_queue - 1);
		if (heap_push(s, q, last) == 0)
			q->n_queue--;
	}
	return 0;
}

int queue_refill(sched *s, sched_queue *q)
{
	size_t want = s->opt.scan_max ? s->opt.scan_max : SIZE_MAX;
	while (q->n_back && q->n_queue < want) {
		sched_qent top = q->hbuf[0];
		/* the smallest back key is above every front key: append */
		if (queue_insert_ent(s, q, q->n_queue, top))
			return RL_ENOMEM;
		heap_remove(s, q, 0);
	}
	return 0;
}

static void queue_erase(sched_queue *q, size_t pos)
{
	size_t n = q->n_queue;
	if (pos < n / 2) {
		memmove(&q->qbuf[q->q_lo + 1], &q->qbuf[q->q_lo], pos * sizeof *q->qbuf);
		q->q_lo++;
	} else {
		memmove(&q->qbuf[q->q_lo + pos], &q->qbuf[q->q_lo + pos + 1],
			(n - pos - 1) * sizeof *q->qbuf);
	}
	q->n_queue--;
}

static void queue_fini(sched_queue *q)
{
	free(q->qbuf);
	free(q->hbuf);
	memset(q, 0, sizeof *q);
}

static size_t seg_alloc(sched *s)
{
	if (s->free_head != SCHED_NONE) {
		size_t i = s->free_head;
		s->free_head = s->seg[i].next_free;
		return i;
	}
	if (sched__grow((void **)&s->seg, &s->cap_seg, s->n_seg + 1, sizeof *s->seg))
		return SCHED_NONE;
	memset(&s->seg[s->n_seg], 0, sizeof s->seg[0]);
	return s->n_seg++;
}

/* ---- users and jobs ---------------------------------------------------- */

double user_attained(const sched_user *u, double now)
{
	double a = u->closed_s + u->run_dev * now - u->run_dev_start;
	return a > u->closed_s ? a : u->closed_s;
}

size_t user_ensure(sched *s, uint32_t id)
{
	size_t i = sched__map_get(&s->user_map, id, 0);
	if (i != SCHED_NONE)
		return i;
	if (sched__grow((void **)&s->user, &s->cap_user, s->n_user + 1, sizeof *s->user) ||
	    sched__map_put(&s->user_map, id, 0, s->n_user))
		return SCHED_NONE;
	sched_user *u = &s->user[s->n_user];
	memset(u, 0, sizeof *u);
	u->id = id;
	u->weight = 1;
	return s->n_user++;
}

int sched_set_user_share(sched *s, uint32_t user, double weight)
{
	if (!(weight > 0) || !isfinite(weight))
		return RL_EINVAL;
	size_t i = user_ensure(s, user);
	if (i == SCHED_NONE)
		return RL_ENOMEM;
	s->user[i].weight = weight;
	return 0;
}

int sched_set_user_limits(sched *s, uint32_t user, const sched_user_limits *lim)
{
	if (!lim || lim->max_gpus < 0 || lim->max_segments < 0 || !(lim->max_cpus >= 0))
		return RL_EINVAL;
	size_t i = user_ensure(s, user);
	if (i == SCHED_NONE)
		return RL_ENOMEM;
	s->user[i].lim = *lim;
	s->any_limits = 0;
	for (size_t k = 0; k < s->n_user; k++) {
		const sched_user_limits *l = &s->user[k].lim;
		s->any_limits |= l->max_gpus || l->max_mem_mib || l->max_segments ||
				 l->max_host_mem_mib || l->max_cpus > 0;
	}
	/* A lower limit changes nothing that runs; a higher one may let a
	 * waiting segment start, which the next placement call sees (limits
	 * are checked on every call, outside the refusal memos). */
	return 0;
}

int sched_user_get(const sched *s, uint32_t user, double now, sched_user_state *out)
{
	size_t i = sched__map_get(&s->user_map, user, 0);
	if (i == SCHED_NONE)
		return RL_ENOTFOUND;
	const sched_user *u = &s->user[i];
	memset(out, 0, sizeof *out);
	out->user = u->id;
	out->share = u->weight;
	out->attained_gpu_s = user_attained(u, now);
	out->usage_gpu_s = user_usage(s, u, now);
	out->running = u->n_running;
	out->queued = u->n_queued;
	out->running_gpus = (int)u->run_gpus;
	out->mem_reserved_mib = u->mem_res - u->host_mem_res;
	out->limits = u->lim;
	return 0;
}

size_t sched_user_list(const sched *s, uint32_t *ids, size_t max)
{
	for (size_t i = 0; i < s->n_user && i < max; i++)
		ids[i] = s->user[i].id;
	return s->n_user;
}

static size_t job_ensure(sched *s, uint64_t id)
{
	size_t i = sched__map_get(&s->job_map, id, 0);
	if (i != SCHED_NONE)
		return i;
	if (s->job_free != SCHED_NONE) {
		i = s->job_free;
		s->job_free = (size_t)s->job[i].id;
	} else {
		if (sched__grow((void **)&s->job, &s->cap_job, s->n_job + 1, sizeof *s->job))
			return SCHED_NONE;
		i = s->n_job++;
	}
	if (sched__map_put(&s->job_map, id, 0, i)) {
		s->job[i].id = s->job_free;
		s->job_free = i;
		return SCHED_NONE;
	}
	s->job[i] = (sched_job){.id = id, .run_seg = SCHED_NONE};
	return i;
}

static void job_release(sched *s, size_t i)
{
	sched__map_del(&s->job_map, s->job[i].id, 0);
	s->job[i].id = s->job_free;
	s->job[i].n_live = 0;
	s->job[i].attained_s = 0;
	s->job_free = i;
}

double sched_job_attained(const sched *s, uint64_t job_id, double now)
{
	size_t i = job_id ? sched__map_get(&s->job_map, job_id, 0) : SCHED_NONE;
	if (i == SCHED_NONE)
		return 0;
	double a = s->job[i].attained_s;
	if (s->job[i].run_seg != SCHED_NONE) {
		const sched_seg *g = &s->seg[s->job[i].run_seg];
		if (now > g->svc_start)
			a += (now - g->svc_start) * g->pl.n_dev;
	}
	return a;
}

/* Quarter octaves of a GPU-seconds from 1 s: the bin of las_hist. */
static int las_bin(double a)
{
	int b = a > 1 ? (int)(log2(a) * 4) : 0;
	return b < SCHED_LAS_BINS ? b : SCHED_LAS_BINS - 1;
}

int sched__hist_upper(const double *hist, int bins, double n, double q)
{
	double want = q * n, c = 0;
	for (int b = 0; b < bins; b++)
		if ((c += hist[b]) >= want)
			return b + 1;
	return 0;
}

/* The las_tail quantile of ended jobs' service (the upper edge of its
 * bin), or 0 while too few ended. */
static double las_cap(const sched *s)
{
	if (!(s->opt.las_tail > 0) || s->las_n < SCHED_LAS_MIN_JOBS)
		return 0;
	int b = sched__hist_upper(s->las_hist, SCHED_LAS_BINS, s->las_n, s->opt.las_tail);
	return b ? exp2(b / 4.0) : 0;
}

void sched_job_forget(sched *s, uint64_t job_id)
{
	size_t i = job_id ? sched__map_get(&s->job_map, job_id, 0) : SCHED_NONE;
	if (i == SCHED_NONE)
		return;
	/* its service counts for the order's tail (an ended job's, whether
	 * it completed, failed or was stopped: what jobs here take) */
	if (s->job[i].attained_s > 0) {
		int b = las_bin(s->job[i].attained_s);
		s->las_hist[b] += 1;
		s->las_n += 1;
		s->las_lstamp[b] = ++s->learn_stamp;
	}
	if (s->job[i].n_live)
		s->job[i].forget = 1; /* when its last segment goes */
	else
		job_release(s, i);
}

/* The order key of a segment whose job has attained a GPU-seconds. */
static double order_key(const sched *s, double a)
{
	switch (s->opt.order) {
	case ORDER_LAS:
	case ORDER_FAIR: {
		double cap = las_cap(s);
		return cap > 0 && a > cap ? cap : a;
	}
	case ORDER_TIRESIAS: {
		int k = 0;
		while (k < SCHED_MAX_TIERS && s->opt.tiresias_limit_s[k] > 0 &&
		       a >= s->opt.tiresias_limit_s[k])
			k++;
		return k;
	}
	default:
		return 0;
	}
}

/* ---- segments ----------------------------------------------------------- */

static void seg_release_slot(sched *s, size_t gi)
{
	sched_seg *g = &s->seg[gi];
	sched__map_del(&s->seg_map, g->req.seg_id, 0);
	if (g->job != SCHED_NONE) {
		sched_job *j = &s->job[g->job];
		if (j->n_live)
			j->n_live--;
		if (!j->n_live && j->forget)
			job_release(s, g->job);
	}
	sched_overlap *ov = g->ov;
	size_t cap = g->cap_ov;
	memset(g, 0, sizeof *g);
	g->ov = ov; /* keep the overlap buffer for reuse */
	g->cap_ov = cap;
	g->state = SEG_FREE;
	g->next_free = s->free_head;
	s->free_head = gi;
}

static int check_request(const sched_request *req, rl_err *err)
{
	if (req->n_feat > SCHED_MAX_FEAT)
		return rl_err_set(err, RL_EINVAL, "segment %llu: n_feat %zu exceeds %d",
				  (unsigned long long)req->seg_id, req->n_feat, SCHED_MAX_FEAT);
	if (req->n_devices < 0 || req->n_devices > SCHED_MAX_GANG)
		return rl_err_set(err, RL_EINVAL,
				  "segment %llu: n_devices %d, expected 0..%d",
				  (unsigned long long)req->seg_id, req->n_devices, SCHED_MAX_GANG);
	if (!isfinite(req->submit_time) || !isfinite(req->priority) || !(req->compute_hint >= 0) ||
	    !(req->attained_s >= 0) || !isfinite(req->attained_s) || !(req->foreign_wait_s >= 0))
		return rl_err_set(err, RL_EINVAL,
				  "segment %llu: expected a finite submit_time and priority, "
				  "compute_hint >= 0, a finite attained_s >= 0 and foreign_wait_s >= 0",
				  (unsigned long long)req->seg_id);
	for (size_t i = 0; i < req->n_feat; i++)
		if (!isfinite(req->feat[i]))
			return rl_err_set(err, RL_EINVAL, "segment %llu: feat[%zu] not finite",
					  (unsigned long long)req->seg_id, i);
	return 0;
}

/* Allocate a segment record for req; its user and job are created when
 * new, and the job's service so far is added to its attained_s. */
static int seg_create(sched *s, const sched_request *req, size_t *out, rl_err *err)
{
	int rc = check_request(req, err);
	if (rc)
		return rc;
	if (sched__map_get(&s->seg_map, req->seg_id, 0) != SCHED_NONE)
		return rl_err_set(err, RL_EEXISTS, "segment %llu is already known",
				  (unsigned long long)req->seg_id);
	size_t ui = user_ensure(s, req->user);
	size_t ji = ui == SCHED_NONE ? SCHED_NONE : req->job_id ? job_ensure(s, req->job_id) : 0;
	size_t prof = ji == SCHED_NONE ? SCHED_NONE : est_profile_ensure(s, req);
	size_t gi = prof == SCHED_NONE ? SCHED_NONE : seg_alloc(s);
	if (gi == SCHED_NONE)
		return rl_err_set(err, RL_ENOMEM, "submitting segment");
	if (sched__map_put(&s->seg_map, req->seg_id, 0, gi)) {
		s->seg[gi].next_free = s->free_head;
		s->free_head = gi;
		return rl_err_set(err, RL_ENOMEM, "submitting segment");
	}
	sched_seg *g = &s->seg[gi];
	g->req = *req;
	if (g->req.n_devices == 0)
		g->req.n_devices = 1;
	g->prof = prof;
	g->n_ov = 0;
	g->user = ui;
	g->job = req->job_id ? ji : SCHED_NONE;
	if (g->job != SCHED_NONE) {
		s->job[ji].n_live++;
		g->req.attained_s += s->job[ji].attained_s;
	}
	g->okey = order_key(s, g->req.attained_s);
	g->foreign_seen = 0;
	g->wait_since = -1;
	g->explore_dev = -1;
	g->explore = 0;
	*out = gi;
	return 0;
}

int sched_submit(sched *s, const sched_request *req, rl_err *err)
{
	size_t gi;
	int rc = seg_create(s, req, &gi, err);
	if (rc)
		return rc;
	if (queue_add(s, gi)) {
		seg_release_slot(s, gi);
		return rl_err_set(err, RL_ENOMEM, "submitting segment");
	}
	s->seg[gi].state = SEG_QUEUED;
	s->user[s->seg[gi].user].n_queued++;
	s->n_queued++;
	return 0;
}

/* Take a running segment off its devices at time now, closing the overlap
 * records of every co-runner and counting the service it had. */
static void seg_unplace(sched *s, size_t gi, double now)
{
	sched_seg *g = &s->seg[gi];
	for (int k = 0; k < g->pl.n_dev; k++) {
		sched_dev *d = &s->dev[g->pl.dev[k]];
		d->mem_res -= g->pl.mem_mib <= d->mem_res ? g->pl.mem_mib : d->mem_res;
		d->comp_res -= g->pl.compute;
		if (g->held && d->held > 0)
			d->held--;
		if (d->comp_res < 1e-9)
			d->comp_res = 0;
		for (size_t i = 0; i < d->n_run; i++) {
			if (d->run[i] == gi) {
				memmove(&d->run[i], &d->run[i + 1], (d->n_run - i - 1) * sizeof *d->run);
				d->n_run--;
				break;
			}
		}
		d->g_U = d->n_run ? d->g_U - g->g_util : 0;
		/* an exploration ends with its segment, or when its partner
		 * leaves (nothing more to measure) */
		if (d->explore_gi1 == gi + 1 || d->n_run <= 1) {
			if (d->explore_gi1 && d->explore_gi1 != gi + 1)
				s->seg[d->explore_gi1 - 1].explore = 0;
			d->explore_gi1 = 0;
		}
		d->g_unmeasured -= d->g_unmeasured ? (size_t)g->g_unm : 0;
	}
	/* close its open overlaps, and each partner's entry for them */
	for (size_t j = 0; j < g->n_ov; j++) {
		sched_overlap *o = &g->ov[j];
		if (!o->open)
			continue;
		double dt = now > o->since ? now - o->since : 0;
		sched_overlap *p = &s->seg[o->seg].ov[o->peer];
		p->total += dt;
		p->open = 0;
		o->total += dt;
		o->open = 0;
	}
	for (int k = 0; k < g->pl.n_dev; k++) {
		devidx_update(s, &s->dev[g->pl.dev[k]]);
		sched__touch_dev(s, &s->dev[g->pl.dev[k]]);
	}
	/* off its shape's list of running segments */
	if (g->srun_prev != SCHED_NONE)
		s->seg[g->srun_prev].srun_next = g->srun_next;
	else
		s->prof[g->prof].run_head = g->srun_next;
	if (g->srun_next != SCHED_NONE)
		s->seg[g->srun_next].srun_prev = g->srun_prev;
	g->srun_prev = g->srun_next = SCHED_NONE;
	if (s->prof[g->prof].run_head == SCHED_NONE)
		est_running_changed(s, g->prof);
	/* service: devices x time held */
	double n = (double)g->pl.n_dev, svc = now > g->svc_start ? (now - g->svc_start) * n : 0;
	sched_user *u = &s->user[g->user];
	usage_end(s, u, now);
	u->closed_s += svc;
	u->run_dev -= n;
	u->run_dev_start -= n * g->svc_start;
	if (u->run_dev < 0.5)
		u->run_dev = u->run_dev_start = 0; /* no rounding left behind */
	u->n_running--;
	u->mem_res -= g->pl.mem_mib * (uint64_t)g->pl.n_dev;
	for (int k = 0; k < g->pl.n_dev; k++)
		if (!s->dev[g->pl.dev[k]].info.is_gpu) {
			u->host_mem_res -= g->pl.mem_mib <= u->host_mem_res ? g->pl.mem_mib : u->host_mem_res;
			u->host_cpu_res -= g->pl.compute > SCHED_CPU_LEAST ? g->pl.compute : SCHED_CPU_LEAST;
		} else if (u->run_gpus) {
			u->run_gpus--;
		}
	if (u->n_running == 0)
		u->host_cpu_res = 0; /* no rounding left behind */
	if (g->job != SCHED_NONE) {
		s->job[g->job].attained_s += svc;
		if (s->job[g->job].run_seg == gi)
			s->job[g->job].run_seg = SCHED_NONE;
	}
	s->n_running--;
}

int sched_remove(sched *s, uint64_t seg_id)
{
	size_t gi = sched__map_get(&s->seg_map, seg_id, 0);
	if (gi == SCHED_NONE)
		return 0;
	sched_seg *g = &s->seg[gi];
	if (g->state == SEG_QUEUED) {
		sched_queue *q = seg_queue(s, g);
		if (g->hpos != SCHED_NONE) {
			heap_remove(s, q, g->hpos);
		} else {
			size_t pos = queue_lower_bound(s, q, g);
			while (pos < q->n_queue && SCHED_Q(q, pos).gi != gi)
				pos++;
			if (pos < q->n_queue)
				queue_erase(q, pos);
		}
		s->user[g->user].n_queued--;
		s->n_queued--;
	} else if (g->state == SEG_RUNNING) {
		/* No clock here: overlaps close at the latest time the core saw. */
		seg_unplace(s, gi, s->last_now > g->start ? s->last_now : g->start);
	}
	seg_release_slot(s, gi);
	return 1;
}

size_t sched_place(sched *s, double now, sched_placement *out, size_t max)
{
	return place_run(s, now, out, max);
}

int sched_finished(sched *s, uint64_t seg_id, double now,
		   const sched_observation *obs, rl_err *err)
{
	size_t gi = sched__map_get(&s->seg_map, seg_id, 0);
	if (gi == SCHED_NONE || s->seg[gi].state != SEG_RUNNING)
		return rl_err_set(err, RL_ENOTFOUND, "segment %llu is not running",
				  (unsigned long long)seg_id);
	sched_seg *g = &s->seg[gi];
	if (now > s->last_now)
		s->last_now = now;
	seg_unplace(s, gi, now);
	if (obs) {
		/* Alone = its partners overlapped it for no more than
		 * SCHED_OVERLAP_NOISE of its life in all. */
		double life = now - g->start, shared = 0;
		for (size_t j = 0; j < g->n_ov; j++)
			shared += g->ov[j].total;
		int timed = !g->adopted && life > 0;
		int alone = timed && shared <= SCHED_OVERLAP_NOISE * life;
		uint64_t before = s->prof[g->prof].stamp;
		/* An out-of-memory beside others' memory says nothing about the
		 * shape (mem.c): the trial's own floor handles it. */
		est_hint_note(s, g->prof, &g->req, obs);
		est_family_note(s, g->prof, &g->pl, obs);
		if (obs->outcome != SEG_OUT_OOM || !g->foreign_seen)
			est_observe(s, g->prof, obs, !timed ? EST_UNTIMED : alone ? EST_ALONE : EST_SHARED,
				    g->pl.mem_mib);
		if (s->prof[g->prof].stamp != before)
			sched__touch_shape(s, g->req.shape); /* its utilisation moved */
		if (timed && !alone && obs->outcome == SEG_OUT_COMPLETED &&
		    obs->work > 0 && obs->duration_s > 0) {
			/* its own speed alone, or its group's (a trial whose
			 * every segment shared teaches through its group's) */
			double alone_thr = est_thr_alone(s, g->prof);
			if (alone_thr > 0)
				colo_observe(s, g, now, (obs->work / obs->duration_s) / alone_thr);
		}
	}
	seg_release_slot(s, gi);
	return 0;
}

int sched_segment_exploring(const sched *s, uint64_t seg_id)
{
	size_t gi = sched__map_get(&s->seg_map, seg_id, 0);
	if (gi == SCHED_NONE || s->seg[gi].state != SEG_RUNNING)
		return RL_ENOTFOUND;
	return s->seg[gi].explore;
}

int sched_adopt(sched *s, const sched_request *req, const sched_placement *pl,
		rl_err *err)
{
	if (!pl || pl->n_dev < 1 || pl->n_dev > SCHED_MAX_GANG)
		return rl_err_set(err, RL_EINVAL, "adopting segment %llu: expected 1..%d devices",
				  (unsigned long long)req->seg_id, SCHED_MAX_GANG);
	for (int k = 0; k < pl->n_dev; k++) {
		if (pl->dev[k] < 0 || (size_t)pl->dev[k] >= s->n_dev)
			return rl_err_set(err, RL_EINVAL, "adopting segment %llu: no device %d",
					  (unsigned long long)req->seg_id, pl->dev[k]);
		const sched_dev *d = &s->dev[pl->dev[k]];
		if (d->mem_res + pl->mem_mib > d->info.mem_total_mib)
			return rl_err_set(err, RL_ENOSPACE,
					  "adopting segment %llu: %llu MiB do not fit on device %d "
					  "(%llu of %llu MiB reserved)",
					  (unsigned long long)req->seg_id,
					  (unsigned long long)pl->mem_mib, pl->dev[k],
					  (unsigned long long)d->mem_res,
					  (unsigned long long)d->info.mem_total_mib);
	}
	size_t gi;
	int rc = seg_create(s, req, &gi, err);
	if (rc)
		return rc;
	sched_placement p = *pl;
	p.seg_id = req->seg_id;
	s->seg[gi].adopted = 1;
	rc = place_commit(s, gi, &p, 0);
	if (rc) {
		seg_release_slot(s, gi);
		return rl_err_set(err, rc, "adopting segment %llu", (unsigned long long)req->seg_id);
	}
	return 0;
}

/* ---- views ------------------------------------------------------------ */

int sched_device_get(const sched *s, int dev, sched_device_state *out)
{
	if (dev < 0 || (size_t)dev >= s->n_dev)
		return RL_ENOTFOUND;
	const sched_dev *d = &s->dev[dev];
	out->info = d->info;
	out->mem_reserved_mib = d->mem_res;
	out->compute_reserved = d->comp_res;
	out->n_running = d->n_run;
	out->foreign_mib = d->foreign_raw;
	out->foreign_counted_mib = d->foreign;
	out->mem_free_mib = sched__dev_free(d);
	out->avoided = d->avoided;
	return 0;
}

size_t sched_device_segments(const sched *s, int dev, uint64_t *ids, size_t max)
{
	if (dev < 0 || (size_t)dev >= s->n_dev)
		return 0;
	const sched_dev *d = &s->dev[dev];
	for (size_t i = 0; i < d->n_run && i < max; i++)
		ids[i] = s->seg[d->run[i]].req.seg_id;
	return d->n_run;
}

size_t sched_queue_length(const sched *s) { return s->n_queued; }
size_t sched_running_count(const sched *s) { return s->n_running; }

void sched_work_get(const sched *s, sched_work *out) { *out = s->work; }
