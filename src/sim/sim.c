/*
 * sim.c - the discrete-event loop of relish simulate (interface in sim.h,
 * models and rules in docs/simulator.md).
 *
 * Events: job arrivals (the trace, sorted once) and segment ends (a binary
 * heap ordered by time, then by a sequence number so that ties resolve the
 * same way on every run).  A segment's end moves whenever the set of
 * segments on one of its GPUs changes: its progress is brought up to date,
 * its speed recomputed, and a new end event pushed; the old one is
 * recognised as stale by a per-job version number (lazy deletion, cheaper
 * than a decrease-key heap).
 *
 * At each distinct time: ends are handled first (sched_finished, then the
 * job's next segment is submitted), then arrivals (sched_submit), then one
 * sched_place(now) whose placements are applied in the order the core gave.
 */
#include "sim/sim.h"

#include <time.h>
#include <unistd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/rng.h"

/* ---- configuration ---------------------------------------------------- */

static const char *const hints_names[] = {"noisy", "exact", "none"};

const char *sim_hints_name(sim_hints h)
{
	return (unsigned)h < 3 ? hints_names[h] : "?";
}

int sim_hints_from_name(const char *s, sim_hints *out)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(s, hints_names[i])) {
			*out = (sim_hints)i;
			return 0;
		}
	return RL_EINVAL;
}

void sim_tune_apply(const sim_tune *t, sched_policy p, sched_options *o)
{
	if (p == SCHED_POLICY_RELISH) {
		if (t->relish_share_gangs >= 0)
			o->share_gangs = t->relish_share_gangs;
		if (t->relish_min_speedup > 0)
			o->min_speedup = t->relish_min_speedup;
		if (t->relish_margin >= 0)
			o->colocate_margin = t->relish_margin;
		if (t->relish_solo_after_s >= 0)
			o->solo_after_s = t->relish_solo_after_s;
		if (t->relish_family_probe >= 0)
			o->family_probe = t->relish_family_probe;
		if (t->relish_timeslice >= 0)
			o->timeslice_refused = t->relish_timeslice;
		if (t->relish_timeslice_gangs >= 0)
			o->timeslice_gangs = t->relish_timeslice_gangs;
		if (t->relish_gang_probe >= 0)
			o->gang_probe = t->relish_gang_probe;
		if (t->relish_hint_quantile >= 0)
			o->hint_quantile = t->relish_hint_quantile;
		if (t->relish_family_quantile >= 0)
			o->family_quantile = t->relish_family_quantile;
		if (t->relish_explore >= 0)
			o->explore_max = t->relish_explore;
	}
	if (p == SCHED_POLICY_TIRESIAS && t->tiresias_limit_s[0] > 0)
		memcpy(o->tiresias_limit_s, t->tiresias_limit_s, sizeof o->tiresias_limit_s);
	if (p == SCHED_POLICY_GANDIVA && t->gandiva_timeslice_max >= 0)
		o->timeslice_max = t->gandiva_timeslice_max;
	if (t->las_tail >= 0)
		o->las_tail = t->las_tail; /* every policy: --order las is */
	if (t->fair_half_life_s >= 0)
		o->fair_half_life_s = t->fair_half_life_s; /* every policy: --order fair is */
}

void sim_config_default(sim_config *c)
{
	memset(c, 0, sizeof *c);
	c->n_gpus = 8;
	c->gpu_mem_mib = 32768;
	c->segment_s = 3600;
	c->restart_cost_s = 30;
	c->hints = SIM_HINTS_NOISY;
	c->window = SCHED_ADMIT_WINDOW;
	c->tune.relish_share_gangs = -1;
	c->tune.relish_min_speedup = -1;
	c->tune.relish_margin = -1;
	c->tune.relish_solo_after_s = -1;
	c->tune.relish_family_probe = -1;
	c->tune.relish_timeslice = -1;
	c->tune.relish_timeslice_gangs = -1;
	c->tune.relish_gang_probe = -1;
	c->tune.relish_hint_quantile = -1;
	c->tune.relish_family_quantile = -1;
	c->tune.las_tail = -1;
	c->tune.relish_explore = -1;
	c->observe_noise = 0.05;
	c->tune.gandiva_timeslice_max = -1;
	c->tune.tiresias_quantum_s = SIM_TIRESIAS_QUANTUM_S;
	c->tune.fair_half_life_s = -1;
}

/* ---- per-job and per-device state -------------------------------------- */

typedef struct jstate {
	double remaining;       /* exclusive-time work left (s), gang-adjusted */
	double seg_left;        /* work left in the running segment (incl. restart) */
	double seg_work;        /* job work the running segment completes */
	double rate;            /* current speed, work per second */
	double last_t;          /* when seg_left was last brought up to date */
	double queued_at;       /* when the current segment became ready (its
				   job's arrival, or its predecessor's end) */
	size_t wait_next;       /* held by the driver: the next job of its
				   experiment's list (SIZE_MAX: last) */
	int fresh;              /* its queued segment is its first: it holds
				   a place in the admission window */
	double queue_total;
	double prev_end;        /* end of the previous segment, -1 none */
	double finish;
	double seg_start;       /* when the running segment was placed */
	uint64_t res_mib;       /* reservation of the running segment */
	sched_mem_history mem;  /* out-of-memory history (the core's rule) */
	uint32_t version;       /* bumps on every reschedule */
	size_t hpos;            /* its end event's index in the heap, SIZE_MAX none */
	uint32_t attempts;      /* segments submitted */
	int gang;               /* GPUs used (num_gpus capped) */
	int running;
	int doomed;             /* this segment's true peak exceeds its reservation */
	int killed;             /* others' memory grew under it: out of memory now */
	int n_dev, prev_n_dev;
	int dev[SCHED_MAX_GANG];
	int prev_dev[SCHED_MAX_GANG];
	double dspeed[SCHED_MAX_GANG]; /* its speed on each of its devices */
} jstate;

typedef struct dstate {
	size_t *run;            /* job indices running here */
	size_t n, cap;
	double compute;         /* min(100, sum util x rate) */
	uint64_t mem_used, mem_res;
	uint64_t bg;            /* memory others use (the background series) */
} dstate;

/* Per experiment: the admission window (sched/policy.h,
 * SCHED_ADMIT_WINDOW): at most `window` of its new jobs' first segments
 * wait in the core's queue; the rest wait here, as the live driver leaves
 * them in the search engine, in arrival order.  Segments of started jobs
 * go in at once (the engine hands those out before it creates a trial,
 * and a full window does not hold them back). */
typedef struct xstate {
	size_t n_queued;        /* its new jobs' first segments in the core's
				   queue */
	size_t cont_head, cont_tail; /* started jobs waiting (SIZE_MAX: none) */
	size_t new_head, new_tail;   /* arrived jobs never submitted */
} xstate;

typedef struct ev {
	double t;
	uint64_t seq;
	size_t job;
	uint32_t version;
} ev;

typedef struct simctx {
	const sim_trace *t;
	const sim_model *m;
	const sim_config *c;
	sched *s;
	jstate *js;
	dstate *ds;
	xstate *xs;             /* per experiment (windowed runs only) */
	size_t window;          /* SIZE_MAX: unlimited */
	size_t admitted;        /* submissions from the driver's lists (to
				   know that placing again may place more) */
	ev *heap;
	size_t n_heap, cap_heap;
	uint64_t seq;
	size_t *others;         /* scratch for speed computations */
	double t0, now, last_int;
	/* running totals and their integrals */
	double busy, mem_used, mem_res, compute;
	double i_busy, i_mem_used, i_mem_res, i_compute, i_queued;
	sim_result *r;
	size_t cap_series;
	sim_order order;        /* resolved for this policy */
	double segment_s;       /* this policy's segment length (the
				   Tiresias peer's quantum, else segment_s) */
	int quantum;            /* the Tiresias peer with its quantum:
				   running jobs first within a queue
				   (submit_segment) */
} simctx;

/* ---- heap ------------------------------------------------------------- */

/* One end event per running job, re-keyed in place when the job is
 * re-timed (an index from job to heap slot), so the heap holds the running
 * jobs and nothing superseded.  Equal times pop in the order they were
 * last (re)scheduled (seq), as when superseded events were left behind. */
static int ev_less(const ev *a, const ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_place(simctx *x, size_t i, ev e)
{
	x->heap[i] = e;
	x->js[e.job].hpos = i;
}

static void heap_sift(simctx *x, size_t i)
{
	ev e = x->heap[i];
	while (i > 0 && ev_less(&e, &x->heap[(i - 1) / 2])) {
		heap_place(x, i, x->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const ev *best = &e;
		if (l < x->n_heap && ev_less(&x->heap[l], best)) {
			m = l;
			best = &x->heap[l];
		}
		if (r < x->n_heap && ev_less(&x->heap[r], best))
			m = r;
		if (m == i)
			break;
		heap_place(x, i, x->heap[m]);
		i = m;
	}
	heap_place(x, i, e);
}

static int heap_push(simctx *x, double t, size_t job, uint32_t version)
{
	ev e = {t, x->seq++, job, version};
	size_t i = x->js[job].hpos;
	if (i == SIZE_MAX) {
		if (x->n_heap == x->cap_heap) {
			size_t nc = x->cap_heap ? x->cap_heap * 2 : 1024;
			ev *p = realloc(x->heap, nc * sizeof *p);
			if (!p)
				return RL_ENOMEM;
			x->heap = p;
			x->cap_heap = nc;
		}
		i = x->n_heap++;
	}
	x->heap[i] = e;
	heap_sift(x, i);
	return 0;
}

static ev heap_pop(simctx *x)
{
	ev top = x->heap[0];
	x->js[top.job].hpos = SIZE_MAX;
	ev last = x->heap[--x->n_heap];
	if (x->n_heap) {
		x->heap[0] = last;
		heap_sift(x, 0);
	}
	return top;
}

/* ---- helpers ---------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

/* The user's declared need for job j (0 = none), per the hints rule. */
static uint64_t job_hint(const sim_trace *t, const sim_config *c, size_t j)
{
	const sim_job *job = &t->jobs[j];
	if (job->has_hint)
		return job->mem_hint_mib;
	switch (c->hints) {
	case SIM_HINTS_EXACT:
		return job->mem_mib;
	case SIM_HINTS_NONE:
		return 0;
	case SIM_HINTS_NOISY:
	default: {
		uint64_t h = rng_mix(hash_str(job->id), 0x72656c697368ULL);
		double f = 0.8 + 0.8 * (double)(h >> 11) * 0x1.0p-53;
		uint64_t mib = (uint64_t)ceil((double)job->mem_mib * f);
		return (mib + 255) / 256 * 256;
	}
	}
}

static int job_gang(const sim_trace *t, const sim_config *c, size_t j)
{
	int g = t->jobs[j].num_gpus;
	if (g > SCHED_MAX_GANG)
		g = SCHED_MAX_GANG;
	if (g > c->n_gpus)
		g = c->n_gpus;
	return g;
}

/* Exclusive-time work of job j on `gang` GPUs: GPU-seconds are kept when the
 * gang is capped (a 32-GPU job on 16 GPUs runs twice as long). */
static double job_work(const sim_trace *t, size_t j, int gang)
{
	return t->jobs[j].duration_s * (double)t->jobs[j].num_gpus / (double)gang;
}

double sim_lower_bound(const sim_trace *t, const sim_model *m, const sim_config *c,
		       double parts[3])
{
	/* Every job runs at speed <= 1, so it needs at least its exclusive
	 * work after its arrival (critical path); its true memory stays
	 * reserved for at least that long (memory area); and on one GPU the
	 * members of a set deliver at most cmax percent of compute in
	 * utilisation x speed, while job j consumes util_j x work_j of it per
	 * GPU whatever its speed (compute area).  One restart each. */
	double t0 = INFINITY, crit = 0, area = 0, comp = 0;
	double cmax = m ? sim_model_max_compute(m) : INFINITY;
	for (size_t j = 0; j < t->n_jobs; j++)
		t0 = fmin(t0, t->jobs[j].submit_s);
	for (size_t j = 0; j < t->n_jobs; j++) {
		int g = job_gang(t, c, j);
		double w = job_work(t, j, g) + c->restart_cost_s;
		crit = fmax(crit, t->jobs[j].submit_s - t0 + w);
		area += (double)t->jobs[j].mem_mib * g * w;
		comp += t->jobs[j].util_pct * g * w;
	}
	double mem = area / ((double)c->n_gpus * (double)c->gpu_mem_mib);
	double cpt = isfinite(cmax) ? comp / ((double)c->n_gpus * cmax) : 0;
	if (parts) {
		parts[0] = crit;
		parts[1] = mem;
		parts[2] = cpt;
	}
	return fmax(crit, fmax(mem, cpt));
}

/* Bring the running totals' integrals (and the series) up to now. */
static int integrate(simctx *x, double now)
{
	double dt = now - x->last_int;
	if (dt <= 0)
		return 0;
	double q = (double)sched_queue_length(x->s);
	x->i_busy += x->busy * dt;
	x->i_mem_used += x->mem_used * dt;
	x->i_mem_res += x->mem_res * dt;
	x->i_compute += x->compute * dt;
	x->i_queued += q * dt;
	double step = x->c->series_step_s;
	if (step > 0) {
		double a = x->last_int - x->t0, b = now - x->t0;
		while (a < b) {
			size_t k = (size_t)(a / step);
			double end = fmin(b, (double)(k + 1) * step), w = end - a;
			sim_result *r = x->r;
			while (r->n_series <= k) {
				if (r->n_series == x->cap_series) {
					size_t nc = x->cap_series ? x->cap_series * 2 : 256;
					sim_sample *p = realloc(r->series, nc * sizeof *p);
					if (!p)
						return RL_ENOMEM;
					r->series = p;
					x->cap_series = nc;
				}
				memset(&r->series[r->n_series], 0, sizeof r->series[0]);
				r->series[r->n_series].t_s = (double)r->n_series * step;
				r->n_series++;
			}
			sim_sample *sp = &r->series[k];
			sp->busy += x->busy * w;
			sp->mem_used += x->mem_used * w;
			sp->mem_reserved += x->mem_res * w;
			sp->compute += x->compute * w;
			sp->queued += q * w;
			a = end;
		}
	}
	x->last_int = now;
	return 0;
}

/* Bring job j's segment progress up to now at its current rate. */
static void advance(simctx *x, size_t j, double now)
{
	jstate *s = &x->js[j];
	s->seg_left -= s->rate * (now - s->last_t);
	if (s->seg_left < 0)
		s->seg_left = 0;
	s->last_t = now;
}

/* Speed of running job j on its k-th device, from that device's set. */
static double dev_speed(simctx *x, size_t j, int k)
{
	dstate *d = &x->ds[x->js[j].dev[k]];
	size_t n = 0;
	for (size_t i = 0; i < d->n; i++)
		if (d->run[i] != j)
			x->others[n++] = d->run[i];
	return sim_model_speed(x->m, j, x->others, n);
}

/* Speed of running job j: the slowest of its GPUs (a gang advances at
 * the speed of its slowest member), from the per-device figures that
 * device_changed keeps current. */
static double job_speed(const jstate *s)
{
	double v = 1.0;
	for (int k = 0; k < s->n_dev; k++)
		v = fmin(v, s->dspeed[k]);
	return v;
}

static void device_compute(simctx *x, int dev)
{
	dstate *d = &x->ds[dev];
	double c = 0;
	for (size_t i = 0; i < d->n; i++)
		c += x->t->jobs[d->run[i]].util_pct * x->js[d->run[i]].rate;
	c = fmin(100.0, c);
	x->compute += c - d->compute;
	d->compute = c;
}

/* Before re-timing after a change to several devices at once (a gang
 * placed or ended): every job on them gets its speed on each of them, so
 * that a job on two of them is re-timed once, with its final speed. */
static void devices_refresh(simctx *x, const int *devs, int n)
{
	for (int k = 0; k < n; k++) {
		dstate *d = &x->ds[devs[k]];
		for (size_t i = 0; i < d->n; i++) {
			jstate *s = &x->js[d->run[i]];
			for (int q = 0; q < s->n_dev; q++)
				if (s->dev[q] == devs[k])
					s->dspeed[q] = dev_speed(x, d->run[i], q);
		}
	}
}

/* Device dev's set changed at now: each job on it gets its speed there
 * again, and is re-timed when its own speed moved; then the compute use of
 * dev, and of the other devices of the jobs that moved, is refreshed.  The
 * other devices of a job keep their figures: their sets did not change. */
static int device_changed(simctx *x, int dev, double now)
{
	dstate *d = &x->ds[dev];
	for (size_t i = 0; i < d->n; i++) {
		size_t j = d->run[i];
		jstate *s = &x->js[j];
		for (int k = 0; k < s->n_dev; k++)
			if (s->dev[k] == dev)
				s->dspeed[k] = dev_speed(x, j, k);
		double v = job_speed(s);
		if (v == s->rate)
			continue; /* unchanged; its end event stands */
		advance(x, j, now);
		s->rate = v;
		s->version++;
		if (heap_push(x, now + s->seg_left / v, j, s->version) < 0)
			return RL_ENOMEM;
		for (int k = 0; k < s->n_dev; k++)
			if (s->dev[k] != dev)
				device_compute(x, s->dev[k]);
	}
	device_compute(x, dev);
	return 0;
}

/* ---- the core round trip ---------------------------------------------- */

static uint64_t seg_id_of(size_t job, uint32_t attempt)
{
	return ((uint64_t)job << 24) | (attempt & 0xffffffu);
}

size_t sim_seg_job(uint64_t seg_id)
{
	return (size_t)(seg_id >> 24);
}

uint32_t sim_seg_number(uint64_t seg_id)
{
	return (uint32_t)(seg_id & 0xffffffu);
}

int sim_placement_csv_row(const sim_trace *t, double now, const sched_placement *pl,
			  char *buf, size_t n)
{
	size_t j = sim_seg_job(pl->seg_id);
	char devs[SCHED_MAX_GANG * 8] = "";
	size_t k = 0;
	for (int i = 0; i < pl->n_dev && i < SCHED_MAX_GANG; i++)
		k += (size_t)snprintf(devs + k, sizeof devs - k, "%s%d", i ? ";" : "", pl->dev[i]);
	return snprintf(buf, n, "%.3f,%s,%u,%s,%llu,%.1f,%s\n", now,
			j < t->n_jobs ? t->jobs[j].id : "?", (unsigned)sim_seg_number(pl->seg_id), devs,
			(unsigned long long)pl->mem_mib, pl->compute, sched_basis_name(pl->basis));
}

/* Hand job j's next segment to the core; it has been ready since
 * ready_at. */
static int submit_segment(simctx *x, size_t j, double now, double ready_at, rl_err *err)
{
	const sim_job *job = &x->t->jobs[j];
	jstate *s = &x->js[j];
	sched_request q;
	memset(&q, 0, sizeof q);
	s->attempts++;
	q.seg_id = seg_id_of(j, s->attempts);
	q.exp_id = (uint64_t)job->exp + 1;
	/* Memory-relevant identity: the configuration within its experiment
	 * (another user's command is another command); a job without a known
	 * configuration is a shape of its own. */
	const char *ename = x->t->exps[job->exp].name;
	if (job->profile >= 0) {
		const sim_profile *p = &x->t->profiles[job->profile];
		q.family = rng_mix(hash_str(ename), hash_str(p->model));
		q.shape = rng_mix(q.family, ((uint64_t)p->batchsize << 1) | (uint64_t)p->amp);
		q.n_feat = 2;
		q.feat[0] = p->batchsize;
		q.feat[1] = p->amp;
	} else {
		q.family = rng_mix(hash_str(ename), 0);
		q.shape = rng_mix(q.family, hash_str(job->id));
	}
	q.mem_hint_mib = job_hint(x->t, x->c, j);
	q.needs_gpu = 1;
	q.n_devices = s->gang;
	/* The floor and run-alone flag the core's memory policy set after
	 * out-of-memory ends (sched_mem_decide), as for a live trial. */
	sched_mem_apply(&s->mem, &q);
	q.submit_time = job->submit_s;
	/* The Tiresias peer with its quantum: within its queue a running job
	 * is not preempted by the queue's waiting jobs (Tiresias preempts
	 * only for a higher queue; its simulator keeps a queue's running jobs
	 * ahead of its pending ones), so a segment that continues its job at
	 * once comes before every segment already waiting in its queue: the
	 * later it is submitted, the earlier its key.  A new job waits by its
	 * arrival, behind them; a job that a higher queue preempted (its
	 * continuing segment left waiting) stays ahead of those, the most
	 * recently preempted first. */
	if (x->quantum)
		q.submit_time = ready_at == s->prev_end ? -1e12 - ready_at : ready_at;
	/* The order is the core's: it counts the service each job (and
	 * each user) attains from its placements and ends. */
	q.job_id = (uint64_t)j + 1;
	q.user = job->user + 1;
	s->queued_at = ready_at;
	int rc = sched_submit(x->s, &q, err);
	if (rc == 0 && x->xs && s->fresh)
		x->xs[job->exp].n_queued++;
	if (rc < 0)
		return rl_err_prefix(err, "simulating job %s", job->id);
	return 0;
}

static void list_push(simctx *x, size_t *head, size_t *tail, size_t j)
{
	x->js[j].wait_next = SIZE_MAX;
	if (*tail == SIZE_MAX)
		*head = j;
	else
		x->js[*tail].wait_next = j;
	*tail = j;
}

static size_t list_pop(simctx *x, size_t *head, size_t *tail)
{
	size_t j = *head;
	*head = x->js[j].wait_next;
	if (*head == SIZE_MAX)
		*tail = SIZE_MAX;
	return j;
}

/* Fill experiment e's share of the core's queue up to the window. */
static int admit(simctx *x, size_t e, double now, rl_err *err)
{
	xstate *xe = &x->xs[e];
	while (xe->cont_head != SIZE_MAX || (xe->n_queued < x->window && xe->new_head != SIZE_MAX)) {
		int cont = xe->cont_head != SIZE_MAX;
		size_t j = cont ? list_pop(x, &xe->cont_head, &xe->cont_tail)
				: list_pop(x, &xe->new_head, &xe->new_tail);
		x->js[j].fresh = !cont;
		int rc = submit_segment(x, j, now, x->js[j].queued_at, err);
		if (rc < 0)
			return rc;
		x->admitted++;
	}
	return 0;
}

/* Job j's next segment is ready at now (it arrived: is_new, or its
 * previous segment ended): into the core, or, with a window, onto its
 * experiment's list and in as the window allows. */
static int job_ready(simctx *x, size_t j, int is_new, double now, rl_err *err)
{
	if (!x->xs)
		return submit_segment(x, j, now, now, err);
	size_t e = x->t->jobs[j].exp;
	xstate *xe = &x->xs[e];
	x->js[j].queued_at = now;
	if (is_new)
		list_push(x, &xe->new_head, &xe->new_tail, j);
	else
		list_push(x, &xe->cont_head, &xe->cont_tail, j);
	return admit(x, e, now, err);
}

static int apply_placement(simctx *x, const sched_placement *pl, double now,
			   rl_err *err)
{
	size_t j = (size_t)(pl->seg_id >> 24);
	if (j >= x->t->n_jobs || x->js[j].running || pl->n_dev < 1 || pl->n_dev > SCHED_MAX_GANG)
		return rl_err_set(err, RL_EINTERNAL, "simulator: unexpected placement of segment %llu",
				  (unsigned long long)pl->seg_id);
	const sim_job *job = &x->t->jobs[j];
	jstate *s = &x->js[j];
	s->queue_total += now - s->queued_at;
	s->running = 1;
	s->n_dev = pl->n_dev;
	memcpy(s->dev, pl->dev, sizeof pl->dev[0] * (size_t)pl->n_dev);
	s->res_mib = pl->mem_mib;
	s->doomed = job->mem_mib > pl->mem_mib;
	s->killed = 0;
	s->seg_work = fmin(x->segment_s, s->remaining);
	/* Restart cost unless the segment continues at once on the same GPUs
	 * (the live driver keeps a warm process there). */
	int seamless = s->prev_end == now && s->prev_n_dev == s->n_dev &&
		       !memcmp(s->prev_dev, s->dev, sizeof s->dev[0] * (size_t)s->n_dev);
	s->seg_left = s->seg_work + (seamless ? 0 : x->c->restart_cost_s);
	s->last_t = now;
	s->seg_start = now;
	s->rate = 0; /* forces a (re)computation below */
	uint64_t used = job->mem_mib < pl->mem_mib ? job->mem_mib : pl->mem_mib;
	for (int k = 0; k < s->n_dev; k++) {
		int dv = s->dev[k];
		if (dv < 0 || (size_t)dv >= sched_device_count(x->s))
			return rl_err_set(err, RL_EINTERNAL, "simulator: placement on unknown device %d", dv);
		dstate *d = &x->ds[dv];
		if (d->n == d->cap) {
			size_t nc = d->cap ? d->cap * 2 : 4;
			size_t *p = realloc(d->run, nc * sizeof *p);
			if (!p)
				return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
			d->run = p;
			d->cap = nc;
		}
		if (!d->n)
			x->busy += 1;
		d->run[d->n++] = j;
		d->mem_used += used;
		d->mem_res += pl->mem_mib;
		x->mem_used += (double)used;
		x->mem_res += (double)pl->mem_mib;
	}
	if (s->n_dev > 1)
		devices_refresh(x, s->dev, s->n_dev);
	else
		s->dspeed[0] = dev_speed(x, j, 0);
	for (int k = 0; k < s->n_dev; k++)
		if (device_changed(x, s->dev[k], now) < 0)
			return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
	x->r->n_segments++;
	return 0;
}

static void remove_from_devices(simctx *x, size_t j)
{
	const sim_job *job = &x->t->jobs[j];
	jstate *s = &x->js[j];
	uint64_t used = job->mem_mib < s->res_mib ? job->mem_mib : s->res_mib;
	for (int k = 0; k < s->n_dev; k++) {
		dstate *d = &x->ds[s->dev[k]];
		for (size_t i = 0; i < d->n; i++)
			if (d->run[i] == j) {
				d->run[i] = d->run[--d->n];
				break;
			}
		if (!d->n)
			x->busy -= 1;
		d->mem_used -= used;
		d->mem_res -= s->res_mib;
		x->mem_used -= (double)used;
		x->mem_res -= (double)s->res_mib;
	}
	s->rate = 0;
	s->running = 0;
}

static int segment_ended(simctx *x, size_t j, double now, rl_err *err)
{
	const sim_job *job = &x->t->jobs[j];
	jstate *s = &x->js[j];
	sched_observation o;
	memset(&o, 0, sizeof o);
	/* What the live driver would see: a completed segment's measured peak
	 * and utilisation; an out-of-memory one only that it hit its limit. */
	if (s->killed) {
		/* Others' memory took what it was using: it dies within its
		 * reservation, with the peak it reached (the driver sampled it). */
		o.outcome = SEG_OUT_OOM;
		o.peak_mem_mib = job->mem_mib < s->res_mib ? job->mem_mib : s->res_mib;
		o.mean_util = -1;
		o.work = 0;
		x->r->oom_count++;
		x->r->oom_foreign_count++;
	} else if (s->doomed) {
		o.outcome = SEG_OUT_OOM;
		o.peak_mem_mib = s->res_mib;
		o.mean_util = -1;
		o.work = 0;
		x->r->oom_count++;
	} else {
		o.outcome = SEG_OUT_COMPLETED;
		o.peak_mem_mib = job->mem_mib;
		o.mean_util = job->util_pct;
		o.work = s->seg_work;
		s->remaining -= s->seg_work;
	}
	uint64_t seg = seg_id_of(j, s->attempts);
	o.duration_s = now - s->seg_start;
	if (x->c->observe_noise > 0) {
		/* the measured rate's error (sim.h, observe_noise) */
		uint64_t h = rng_mix(seg, 0x6e6f697365ULL);
		double e = (2 * ((double)(h >> 11) * 0x1.0p-53) - 1) * x->c->observe_noise;
		o.duration_s *= 1 + e;
	}
	/* What the end means for memory: the core's decision, as live. */
	sched_mem_decision md;
	int rc = sched_mem_decide(x->s, seg, &o, &s->mem, &md, err);
	if (rc < 0)
		return rl_err_prefix(err, "simulating job %s", job->id);
	if (md.verdict == SCHED_MEM_FAIL)
		return rl_err_set(err, RL_EINTERNAL, "simulating job %s: %s, although it needs "
				  "%llu MiB", job->id, md.reason, (unsigned long long)job->mem_mib);
	int n_dev = s->n_dev;
	int devs[SCHED_MAX_GANG];
	memcpy(devs, s->dev, sizeof devs);
	remove_from_devices(x, j);
	s->prev_end = now;
	s->prev_n_dev = n_dev;
	memcpy(s->prev_dev, devs, sizeof devs);
	if (x->c->on_finish)
		x->c->on_finish(x->c->ctx, now, seg, &o);
	rc = sched_finished(x->s, seg, now, &o, err);
	if (rc < 0)
		return rl_err_prefix(err, "simulating job %s", job->id);
	if (n_dev > 1)
		devices_refresh(x, devs, n_dev);
	for (int k = 0; k < n_dev; k++)
		if (device_changed(x, devs[k], now) < 0)
			return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
	if (s->remaining <= 1e-9) {
		s->finish = now;
		sched_job_forget(x->s, (uint64_t)j + 1);
		return 0;
	}
	return job_ready(x, j, 0, now, err);
}

/* ---- results ---------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int cmp_arrival(const void *a, const void *b, void *arg)
{
	const sim_trace *t = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = t->jobs[i].submit_s, y = t->jobs[j].submit_s;
	if (x != y)
		return (x > y) - (x < y);
	return (i > j) - (i < j);
}

static int summarise(simctx *x, rl_err *err)
{
	const sim_trace *t = x->t;
	sim_result *r = x->r;
	size_t n = t->n_jobs;
	double *sorted = malloc(n * sizeof *sorted);
	double *exp_first = malloc(t->n_exps * sizeof *exp_first);
	double *exp_last = calloc(t->n_exps, sizeof *exp_last);
	if (!sorted || !exp_first || !exp_last) {
		free(sorted);
		free(exp_first);
		free(exp_last);
		return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
	}
	for (size_t e = 0; e < t->n_exps; e++)
		exp_first[e] = INFINITY;
	double end = x->t0, sum = 0, qsum = 0;
	for (size_t j = 0; j < n; j++) {
		const sim_job *job = &t->jobs[j];
		r->jct_s[j] = x->js[j].finish - job->submit_s;
		r->queue_s[j] = x->js[j].queue_total;
		sorted[j] = r->jct_s[j];
		sum += r->jct_s[j];
		qsum += r->queue_s[j];
		end = fmax(end, x->js[j].finish);
		exp_first[job->exp] = fmin(exp_first[job->exp], job->submit_s);
		exp_last[job->exp] = fmax(exp_last[job->exp], x->js[j].finish);
	}
	qsort(sorted, n, sizeof *sorted, cmp_double);
	r->makespan_s = end - x->t0;
	r->mean_jct_s = sum / (double)n;
	r->median_jct_s = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	size_t k95 = (size_t)ceil(0.95 * (double)n);
	r->p95_jct_s = sorted[k95 ? k95 - 1 : 0];
	r->mean_queue_s = qsum / (double)n;
	double bsum = 0;
	for (size_t e = 0; e < t->n_exps; e++)
		if (t->exps[e].hpo) {
			bsum += exp_last[e] - exp_first[e];
			r->n_hpo_exps++;
		}
	r->mean_burst_jct_s = r->n_hpo_exps ? bsum / (double)r->n_hpo_exps : 0;
	double span = r->makespan_s > 0 ? r->makespan_s : 1;
	double g = (double)x->c->n_gpus, cap = g * (double)x->c->gpu_mem_mib;
	r->gpu_busy = x->i_busy / (span * g);
	r->gpu_mem_util = x->i_mem_used / (span * cap);
	r->gpu_mem_reserved = x->i_mem_res / (span * cap);
	r->gpu_compute_util = x->i_compute / (span * g * 100.0);
	for (size_t i = 0; i < r->n_series; i++) {
		sim_sample *sp = &r->series[i];
		double w = fmin(x->c->series_step_s, span - sp->t_s);
		if (w <= 0)
			w = x->c->series_step_s;
		sp->busy /= w * g;
		sp->mem_used /= w * cap;
		sp->mem_reserved /= w * cap;
		sp->compute /= w * g * 100.0;
		sp->queued /= w;
	}
	free(sorted);
	free(exp_first);
	free(exp_last);
	return 0;
}

void sim_result_free(sim_result *r)
{
	if (!r)
		return;
	free(r->jct_s);
	free(r->queue_s);
	free(r->series);
	free(r->users);
	free(r);
}

/* ---- the loop ---------------------------------------------------------- */

/* ---- foreign load (the background series) ------------------------------ */

/*
 * One step of the series at time now: the core is told, as the live driver
 * tells it what NVML shows; then, while the GPU's true use (what its
 * segments use, at most their reservations, plus the others') is above its
 * memory, the segment placed there last runs out of memory now, as the
 * allocation that no longer fits fails on a real GPU.
 */
static int background_step(simctx *x, const sim_bg_step *st, double now, rl_err *err)
{
	dstate *d = &x->ds[st->gpu];
	d->bg = st->mib;
	sched_device_set_foreign(x->s, st->gpu, st->mib, now);
	while (d->n && d->mem_used + d->bg > x->c->gpu_mem_mib) {
		size_t last = d->run[0];
		for (size_t i = 1; i < d->n; i++) {
			const jstate *a = &x->js[d->run[i]], *b = &x->js[last];
			if (a->seg_start > b->seg_start ||
			    (a->seg_start == b->seg_start && d->run[i] > last))
				last = d->run[i];
		}
		x->js[last].killed = 1;
		int rc = segment_ended(x, last, now, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int check_inputs(const sim_trace *t, const sim_config *c, rl_err *err)
{
	if (c->n_gpus < 1 || c->gpu_mem_mib < 1 || !(c->segment_s > 0) || c->restart_cost_s < 0)
		return rl_err_set(err, RL_EINVAL,
				  "simulator: expected --gpus >= 1, --gpu-memory >= 1, "
				  "--segment-s > 0 and --restart-cost-s >= 0");
	for (size_t i = 0; c->background && i < c->background->n; i++)
		if (c->background->step[i].gpu >= c->n_gpus)
			return rl_err_set(err, RL_EINVAL,
					  "background series, line %zu: gpu: expected 0 to %d (--gpus %d), "
					  "got %d", c->background->step[i].line, c->n_gpus - 1, c->n_gpus,
					  c->background->step[i].gpu);
	for (size_t j = 0; j < t->n_jobs; j++)
		if (t->jobs[j].mem_mib > c->gpu_mem_mib)
			return rl_err_set(err, RL_EINVAL,
					  "job %s needs %llu MiB per GPU, more than --gpu-memory %llu MiB",
					  t->jobs[j].id, (unsigned long long)t->jobs[j].mem_mib,
					  (unsigned long long)c->gpu_mem_mib);
	return 0;
}

static int setup(simctx *x, sched_policy policy, rl_err *err)
{
	const sim_trace *t = x->t;
	const sim_config *c = x->c;
	size_t n = t->n_jobs;
	x->js = calloc(n, sizeof *x->js);
	x->ds = calloc((size_t)c->n_gpus, sizeof *x->ds);
	x->others = malloc((n + 1) * sizeof *x->others);
	x->r = calloc(1, sizeof *x->r);
	if (!x->js || !x->ds || !x->others || !x->r)
		return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
	x->window = c->window > 0 ? (size_t)c->window : SIZE_MAX;
	if (c->window > 0) {
		x->xs = malloc((t->n_exps ? t->n_exps : 1) * sizeof *x->xs);
		if (!x->xs)
			return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
		for (size_t e = 0; e < t->n_exps; e++)
			x->xs[e] = (xstate){0, SIZE_MAX, SIZE_MAX, SIZE_MAX, SIZE_MAX};
	}
	x->r->jct_s = calloc(n, sizeof *x->r->jct_s);
	x->r->queue_s = calloc(n, sizeof *x->r->queue_s);
	if (!x->r->jct_s || !x->r->queue_s)
		return rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
	x->r->policy = policy;
	x->order = sched_policy_order(policy, x->c->order);
	x->r->order = x->order;
	x->segment_s = policy == SCHED_POLICY_TIRESIAS && c->tune.tiresias_quantum_s > 0
			       ? fmin(c->tune.tiresias_quantum_s, c->segment_s) : c->segment_s;
	x->r->segment_s = x->segment_s;
	x->quantum = policy == SCHED_POLICY_TIRESIAS && c->tune.tiresias_quantum_s > 0;
	x->r->n_jobs = n;
	x->t0 = INFINITY;
	for (size_t j = 0; j < n; j++) {
		jstate *s = &x->js[j];
		s->gang = job_gang(t, c, j);
		if (s->gang != t->jobs[j].num_gpus)
			x->r->n_gang_capped++;
		s->remaining = job_work(t, j, s->gang);
		s->prev_end = -1;
		s->hpos = SIZE_MAX;
		x->t0 = fmin(x->t0, t->jobs[j].submit_s);
	}
	x->last_int = x->t0;
	sched_options o;
	sched_policy_options(policy, &o);
	o.order = x->order;
	sim_tune_apply(&c->tune, policy, &o);

	int rc = sched_new(&o, &x->s, err);
	if (rc < 0)
		return rl_err_prefix(err, "simulator");
	for (int g = 0; g < c->n_gpus; g++) {
		sched_device_info d;
		memset(&d, 0, sizeof d);
		snprintf(d.name, sizeof d.name, "simulated GPU (%llu MiB)",
			 (unsigned long long)c->gpu_mem_mib);
		snprintf(d.uuid, sizeof d.uuid, "GPU-sim-%d", g);
		d.is_gpu = 1;
		d.mem_total_mib = c->gpu_mem_mib;
		d.compute_total = 100;
		rc = sched_add_device(x->s, &d, err);
		if (rc < 0)
			return rl_err_prefix(err, "simulator");
	}
	return 0;
}

static int place_all(simctx *x, sched_placement *buf, size_t cap, rl_err *err)
{
	for (;;) {
		size_t admitted = x->admitted;
		size_t n = sched_place(x->s, x->now, buf, cap);
		for (size_t i = 0; i < n; i++) {
			if (x->c->on_place) {
				size_t j = (size_t)(buf[i].seg_id >> 24);
				sched_request q;
				memset(&q, 0, sizeof q);
				q.seg_id = buf[i].seg_id;
				q.exp_id = j < x->t->n_jobs ? (uint64_t)x->t->jobs[j].exp + 1 : 0;
				q.n_devices = j < x->t->n_jobs ? x->js[j].gang : 0;
				x->c->on_place(x->c->ctx, x->now, &q, &buf[i]);
			}
			int rc = apply_placement(x, &buf[i], x->now, err);
			if (rc < 0)
				return rc;
			if (x->xs) {
				/* its place in the window is free for the next */
				size_t jj = sim_seg_job(buf[i].seg_id);
				size_t e = x->t->jobs[jj].exp;
				if (x->js[jj].fresh) {
					x->js[jj].fresh = 0;
					x->xs[e].n_queued--;
				}
				if ((rc = admit(x, e, x->now, err)) < 0)
					return rc;
			}
		}
		if (n < cap && x->admitted == admitted)
			return 0;
	}
}

static void teardown(simctx *x)
{
	sched_free(x->s);
	if (x->ds)
		for (int g = 0; g < x->c->n_gpus; g++)
			free(x->ds[g].run);
	free(x->ds);
	free(x->js);
	free(x->xs);
	free(x->heap);
	free(x->others);
}

int sim_run(const sim_trace *t, const sim_model *m, const sim_config *c,
	    sched_policy policy, sim_result **out, rl_err *err)
{
	int rc = check_inputs(t, c, err);
	if (rc < 0)
		return rc;
	simctx x;
	memset(&x, 0, sizeof x);
	x.t = t;
	x.m = m;
	x.c = c;
	size_t *order = malloc(t->n_jobs * sizeof *order);
	size_t pcap = (size_t)c->n_gpus * 4 + 64;
	sched_placement *pbuf = malloc(pcap * sizeof *pbuf);
	if (!order || !pbuf) {
		rc = rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
		goto done;
	}
	rc = setup(&x, policy, err);
	if (rc < 0)
		goto done;
	for (size_t j = 0; j < t->n_jobs; j++)
		order[j] = j;
	qsort_r(order, t->n_jobs, sizeof *order, cmp_arrival, (void *)t);

	size_t next = 0;
	/* The background series: steps up to the first arrival hold from the
	 * start; later ones are events of their own, after the ends and
	 * before the arrivals of their time. */
	const sim_background *bg = c->background;
	size_t nb = 0, n_bg = bg ? bg->n : 0;
	for (; nb < n_bg && bg->step[nb].t_s <= x.t0; nb++)
		if ((rc = background_step(&x, &bg->step[nb], x.t0, err)) < 0)
			goto done;
	while (next < t->n_jobs || x.n_heap || (nb < n_bg && sched_queue_length(x.s))) {
		double ta = next < t->n_jobs ? t->jobs[order[next]].submit_s : INFINITY;
		double te = x.n_heap ? x.heap[0].t : INFINITY;
		double tb = nb < n_bg ? bg->step[nb].t_s : INFINITY;
		x.now = fmin(fmin(ta, te), tb);
		if ((rc = integrate(&x, x.now)) < 0) {
			rl_err_set(err, rc, "simulator: out of memory");
			goto done;
		}
		while (x.n_heap && x.heap[0].t == x.now) {
			ev e = heap_pop(&x);
			if (e.version != x.js[e.job].version || !x.js[e.job].running)
				continue; /* not its current end (the heap keeps one per job) */
			x.r->n_events++;
			if ((rc = segment_ended(&x, e.job, x.now, err)) < 0)
				goto done;
		}
		for (; nb < n_bg && bg->step[nb].t_s == x.now; nb++)
			if ((rc = background_step(&x, &bg->step[nb], x.now, err)) < 0)
				goto done;
		/* Arrivals, in arrival order, after the ends of their time;
		 * then one placement pass (placing frees room in the window,
		 * and place_all places again what that admits). */
		while (next < t->n_jobs && t->jobs[order[next]].submit_s == x.now) {
			x.r->n_events++;
			if ((rc = job_ready(&x, order[next], 1, x.now, err)) < 0)
				goto done;
			next++;
		}
		if ((rc = place_all(&x, pbuf, pcap, err)) < 0)
			goto done;
		if (!x.n_heap && next == t->n_jobs && sched_queue_length(x.s) && nb == n_bg) {
			rc = rl_err_set(err, RL_ENOSPACE,
					"simulator: %zu segments can never be placed on %d GPUs of "
					"%llu MiB (policy %s)", sched_queue_length(x.s), c->n_gpus,
					(unsigned long long)c->gpu_mem_mib, sched_policy_name(policy));
			goto done;
		}
	}
	if ((rc = summarise(&x, err)) < 0)
		goto done;
	/* per user: the service the core counted, and finish-time fairness */
	x.r->n_users = t->n_users;
	x.r->users = calloc(t->n_users ? t->n_users : 1, sizeof *x.r->users);
	if (!x.r->users) {
		rc = rl_err_set(err, RL_ENOMEM, "simulator: out of memory");
		goto done;
	}
	for (size_t u = 0; u < t->n_users; u++) {
		sched_user_state us;
		if (sched_user_get(x.s, (uint32_t)u + 1, x.now, &us) == 0)
			x.r->users[u].attained_gpu_s = us.attained_gpu_s;
	}
	if ((rc = sim_fairness(t, c, x.r, err)) < 0)
		goto done;
	double parts[3];
	x.r->lower_bound_makespan_s = sim_lower_bound(t, m, c, parts);
	x.r->lb_critical_s = parts[0];
	x.r->lb_memory_s = parts[1];
	x.r->lb_compute_s = parts[2];
	sched_work_get(x.s, &x.r->work);
	*out = x.r;
	x.r = NULL;
	rc = 0;
done:
	sim_result_free(x.r);
	teardown(&x);
	free(order);
	free(pbuf);
	return rc;
}
