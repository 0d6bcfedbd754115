/*
 * colocate.c - the co-location model: how fast each segment runs when it
 * shares a device, relative to running alone ("speed", 1 = no slowdown).
 * The relish policy (place.c) admits a segment onto a device only when the
 * modelled throughput of the device's set (the sum of speeds, in units of
 * "one job alone") grows by the factor min_speedup.
 *
 * Model.  Each ordered pair of shapes (a, b) has an interference d_ab =
 * 1/speed_ab - 1: the extra time a needs per unit of work when b runs beside
 * it.  In a set, a member's interferences add up to D_i, and it runs at
 * speed 1 / (1 + D_i).  Before any observation, a prior from utilisation:
 * a device does at most 100 % of work, so when the members' mean
 * utilisations u_i (percent of the device, counted at most 100) sum to
 * U > 100, each runs at speed min(1, 100 / U), i.e. D_i = P = max(0,
 * U/100 - 1).  Observations correct the prior pair by pair: an observed
 * d_ij replaces what the prior would say of that pair alone, p_ij =
 * max(0, (u_i + u_j)/100 - 1), so D_i = P + sum over observed j of
 * (d_ij - p_ij).  For two members that is d_ij itself; with no observation
 * it is the prior; an observation equal to its prior changes nothing.  (An
 * earlier version switched the whole set to pairwise priors as soon as one
 * pair was observed, so one observation could raise a set's modelled
 * throughput above the prior's, and a candidate could gain more than 1 by
 * joining.)  Two properties follow, for utilisations in [0, 100]: P >= the
 * sum of any member's p_ij, so every D_i >= its observed d_ij >= 0 (no
 * speed above 1); and a joining segment raises P by at least its p_ij with
 * every member, so no member speeds up: joining a set gains at most the
 * newcomer's own speed, at most 1, what it gains on an idle device (place.c
 * relies on this to take an idle device without comparing shared ones).
 *
 * Learning.  A segment that completed beside others reports its throughput;
 * divided by its shape's throughput alone (or its group's, when the shape
 * was never measured alone: est_thr_alone) that is its observed speed s.  If
 * all its partners had one shape b, which overlapped it for a fraction F of
 * its life (summed over partner segments), then 1/s = 1 + F * d_ab and d_ab
 * is updated (EWMA) from (1/s - 1)/F.  Segments that overlapped several
 * shapes, or a partner for less than a quarter of their life, teach no
 * pair: the signal cannot be attributed (but partners of several shapes
 * of one group teach that pair of groups: colo_observe); overlaps that
 * add up to no more than SCHED_OVERLAP_NOISE of the life (a neighbour's
 * tail or start-up) do not count as another shape.  Seeds
 * (sched_colocate_seed) count as one observation.  The model reads no
 * file: the simulator's ground truth stays separate from what the core
 * believes.
 *
 * Groups.  A pair of shapes is learnt only by running that pair, and an
 * HPO experiment makes a new shape of nearly every trial (a learning rate
 * or a seed is in the shape), so a set of three waits for each of its
 * pairs to be measured, and each new trial starts again from the prior.
 * When the driver names groups (sched_request.group: shapes expected to
 * interfere alike; the live driver's are the command, image and the values
 * of non-numeric parameters), every measured pair also counts for its
 * pair of groups (a beside b, ordered), and once a pair of groups has
 * COLO_GROUP_MIN measurements, its shapes' pairs never measured are
 * *derived*: they hold the groups' mean interference when the measured
 * speeds agree (span at most COLO_GROUP_SPAN), else the worst one measured
 * (they disagree: the groups say little, so nothing better than their
 * worst is promised; exploration may still try the pair).  A measurement
 * of the pair itself replaces a derived value.  Pairs are derived for the
 * COLO_GROUP_WINDOW newest shapes only (the ones an HPO burst runs), and
 * for a shape used again, with those; a shape's derived pairs go once it
 * left the window unless a segment of it is held (derived_sweep), so
 * their number stays bounded however many shapes come.
 */
#include "sched/sched_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLO_ALPHA 0.3
#define COLO_MIN_OVERLAP 0.25
#define COLO_MAX_SET 128
#define COLO_GROUP_MIN 2
#define COLO_GROUP_SPAN 0.15
#define COLO_GROUP_WINDOW 64

/* A segment keeps at most the whole device busy (and no less than none):
 * the model's properties above need utilisations in [0, 100]. */
static double colo_util(double u)
{
	return u > 100 ? 100 : u > 0 ? u : 0;
}

static void group_learn(sched *s, uint64_t ga, uint64_t gb, double d);
static void derived_sweep(sched *s);

/* ---- the pair filter ---- */

/* Bits per pair, at least (the filter holds 16 to 32): with two probes, at
 * most about 1.4 % of absent pairs pass. */
#define BLOOM_BITS_PER_PAIR 16

/* Two independent multiplies and a fold: the filter only needs its two
 * probes spread (the map answers for what passes, so the hash changes how
 * often the map is asked, never an answer), and the co-location model asks
 * it for most candidate devices it scores. */
static uint64_t bloom_hash(uint64_t a, uint64_t b)
{
	uint64_t h = (a * 0x9e3779b97f4a7c15ULL) ^ (b * 0xbf58476d1ce4e5b9ULL + 0x7f4a7c15ULL);
	return h ^ (h >> 29);
}

static void bloom_set(uint64_t *bits, size_t n_bits, uint64_t a, uint64_t b)
{
	uint64_t h = bloom_hash(a, b);
	size_t i = (size_t)h & (n_bits - 1), j = (size_t)(h >> 32) & (n_bits - 1);
	bits[i / 64] |= 1ULL << (i % 64);
	bits[j / 64] |= 1ULL << (j % 64);
}

static int bloom_maybe(const sched *s, uint64_t a, uint64_t b)
{
	if (!s->pair_bloom_bits)
		return 0; /* no pair yet */
	uint64_t h = bloom_hash(a, b);
	size_t m = s->pair_bloom_bits - 1, i = (size_t)h & m, j = (size_t)(h >> 32) & m;
	return (s->pair_bloom[i / 64] >> (i % 64) & 1) && (s->pair_bloom[j / 64] >> (j % 64) & 1);
}

/* The filter made again from the pairs, twice the bits it needs.  Out of
 * memory: -1, and the filter is off (every lookup goes to the map) until
 * the next pair tries again. */
static int bloom_rebuild(sched *s)
{
	size_t n_bits = 1024;
	while (n_bits < 2 * s->n_pair * BLOOM_BITS_PER_PAIR)
		n_bits *= 2;
	uint64_t *bits = calloc(n_bits / 64, sizeof *bits);
	free(s->pair_bloom);
	s->pair_bloom = bits;
	s->pair_bloom_bits = bits ? n_bits : 0;
	if (!bits)
		return -1;
	for (size_t k = 0; k < s->n_pair; k++)
		bloom_set(bits, n_bits, s->pair[k].a, s->pair[k].b);
	return 0;
}

/* Add the newest pair; the filter is made again, larger, when it holds
 * fewer bits per pair than it should. */
static int bloom_add(sched *s, uint64_t a, uint64_t b)
{
	if (s->pair_bloom_bits >= s->n_pair * BLOOM_BITS_PER_PAIR) {
		bloom_set(s->pair_bloom, s->pair_bloom_bits, a, b);
		return 0;
	}
	return bloom_rebuild(s);
}

static const sched_pair *pair_find(const sched *s, uint64_t a, uint64_t b)
{
	if (s->pair_bloom && !bloom_maybe(s, a, b))
		return NULL;
	size_t i = sched__map_get(&s->pair_map, a, b);
	return i == SCHED_NONE ? NULL : &s->pair[i];
}

/* ---- partner sets: which shapes a shape pairs with, as bits ---- */

static void psig_add(sched_psig *g, uint64_t shape)
{
	/* the shape is a hash already; the multiply spreads its top bits */
	unsigned bit = (unsigned)((shape * 0x9e3779b97f4a7c15ULL) >> 56);
	g->w[bit / 64] |= 1ULL << (bit % 64);
}

static int psig_meet(const sched_psig *a, const sched_psig *b)
{
	uint64_t m = 0;
	for (int i = 0; i < SCHED_PSIG_WORDS; i++)
		m |= a->w[i] & b->w[i];
	return m != 0;
}

/* The partner set of shape (created empty): its index, or SCHED_NONE
 * without memory. */
static size_t psig_ensure(sched *s, uint64_t shape)
{
	size_t i = sched__map_get(&s->paired_map, shape, 0);
	if (i != SCHED_NONE)
		return i;
	if (sched__grow((void **)&s->psig, &s->cap_psig, s->n_psig + 1, sizeof *s->psig))
		return SCHED_NONE;
	if (sched__map_put(&s->paired_map, shape, 0, s->n_psig))
		return SCHED_NONE;
	memset(&s->psig[s->n_psig], 0, sizeof s->psig[0]);
	/* the profile's copy (colo_eval reads that) */
	size_t pi = est_profile_find(s, shape);
	if (pi != SCHED_NONE) {
		s->prof[pi].paired = 1;
		s->prof[pi].psig = s->n_psig;
	}
	return s->n_psig++;
}

static sched_pair *pair_ensure(sched *s, uint64_t a, uint64_t b)
{
	size_t i = sched__map_get(&s->pair_map, a, b);
	if (i != SCHED_NONE)
		return &s->pair[i];
	if (sched__grow((void **)&s->pair, &s->cap_pair, s->n_pair + 1, sizeof *s->pair))
		return NULL;
	if (sched__map_put(&s->pair_map, a, b, s->n_pair))
		return NULL;
	size_t ia = psig_ensure(s, a), ib = psig_ensure(s, b);
	if (ia == SCHED_NONE || ib == SCHED_NONE)
		return NULL;
	psig_add(&s->psig[ia], b);
	psig_add(&s->psig[ib], a);
	sched_pair *p = &s->pair[s->n_pair++];
	memset(p, 0, sizeof *p);
	p->a = a;
	p->b = b;
	(void)bloom_add(s, a, b); /* without memory the map answers alone */
	return p;
}

static void pair_update(sched *s, uint64_t a, uint64_t b, double d)
{
	if (!isfinite(d))
		return;
	if (d < 0)
		d = 0; /* faster than alone is measurement noise */
	if (d > 100)
		d = 100;
	sched_pair *p = pair_ensure(s, a, b);
	if (!p)
		return;
	if (p->derived) {
		p->derived = 0; /* measured: the groups' figure goes */
		p->n = 0;
	}
	p->d = p->n ? p->d + COLO_ALPHA * (d - p->d) : d;
	p->n++;
	p->lstamp = ++s->learn_stamp;
	/* devices running either shape may now admit what they refused */
	sched__touch_shape(s, a);
	sched__touch_shape(s, b);
}

/* Speeds of a set; returns their sum.  *U_out (optional): the members'
 * utilisation summed in order; *any_out: whether some pair of members has
 * an observed interference (else the utilisation prior alone applied). */
static double set_speeds_ex(const sched *s, const uint64_t *shape, const double *util,
			    const unsigned char *paired, size_t n, double *speed,
			    double *U_out, int *any_out)
{
	int any = 0;
	size_t n_paired = 0;
	double U = 0;
	for (size_t i = 0; i < n; i++) {
		U += util[i];
		if (paired)
			n_paired += paired[i];
		else
			n_paired += s->n_pair && sched__map_get(&s->paired_map, shape[i], 0) != SCHED_NONE;
	}
	/* Pairs are looked up only among members that are in some pair. */
	for (size_t i = 0; i < n && n_paired >= 2 && !any; i++)
		for (size_t j = 0; j < n && !any; j++)
			if (i != j && pair_find(s, shape[i], shape[j]))
				any = 1;
	if (U_out)
		*U_out = U;
	if (any_out)
		*any_out = any;
	double sum = 0;
	if (!any) {
		double sp = U > 100 ? 100 / U : 1;
		for (size_t i = 0; i < n; i++)
			speed[i] = sp;
		return sp * (double)n;
	}
	double P = U > 100 ? U / 100 - 1 : 0;
	for (size_t i = 0; i < n; i++) {
		/* observed interferences, and the priors they replace */
		double obs = 0, pri = 0;
		for (size_t j = 0; j < n; j++) {
			if (i == j || (paired && (!paired[i] || !paired[j])))
				continue;
			const sched_pair *p = pair_find(s, shape[i], shape[j]);
			if (p) {
				double e = (util[i] + util[j]) / 100 - 1;
				obs += p->d;
				pri += e > 0 ? e : 0;
			}
		}
		/* P - pri first: exactly 0 for two members, so a pair's
		 * speeds are its observed ones to the last bit */
		speed[i] = 1 / (1 + (obs + (P - pri)));
		sum += speed[i];
	}
	return sum;
}

static double set_speeds(const sched *s, const uint64_t *shape, const double *util,
			 size_t n, double *speed)
{
	return set_speeds_ex(s, shape, util, NULL, n, speed, NULL, NULL);
}

/* colo_throughput but for its cache (below): a function of its own, not
 * inlined, so that the cached answer, the common case, costs a call
 * without this one's frame. */
static double __attribute__((noinline))
colo_throughput_compute(const sched *s, const sched_dev *d, int with_cand,
			uint64_t cand_shape, double cand_util);

double colo_throughput(const sched *s, const sched_dev *d, int with_cand,
		       uint64_t cand_shape, double cand_util)
{
	if (!with_cand && d->n_run + 1 <= COLO_MAX_SET && d->t0_call == s->call_id &&
	    d->t0_nrun == d->n_run)
		return d->t0; /* members and their profiles are fixed within a call */
	return colo_throughput_compute(s, d, with_cand, cand_shape, cand_util);
}

static double colo_throughput_compute(const sched *s, const sched_dev *d, int with_cand,
				      uint64_t cand_shape, double cand_util)
{
	uint64_t shape[COLO_MAX_SET];
	double util[COLO_MAX_SET], speed[COLO_MAX_SET];
	size_t n = 0;
	if (d->n_run + 1 > COLO_MAX_SET)
		return with_cand ? 0 : INFINITY; /* a set this large admits no one */
	if (!with_cand && d->t0_call == s->call_id && d->t0_nrun == d->n_run)
		return d->t0; /* members and their profiles are fixed within a call */
	sched_dev *md = (sched_dev *)d; /* caches, logically const */
	if (!with_cand && d->any_ver == d->ver && !d->any_pair) {
		/* No pair among the members (known since the set last changed):
		 * the prior alone, the sum in set_speeds_ex's order. */
		double U = 0, W = 0;
		size_t np = 0;
		memset(&md->t0_sig, 0, sizeof md->t0_sig);
		for (size_t i = 0; i < d->n_run; i++) {
			const sched_seg *g = &s->seg[d->run[i]];
			U += colo_util(est_util(s, &g->req, g->prof, d));
			W += (double)g->pl.n_dev;
			if (s->prof[g->prof].paired) {
				psig_add(&md->t0_sig, g->req.shape);
				if (np++ < SCHED_PSHAPES)
					md->t0_pshape[np - 1] = g->req.shape;
			}
		}
		md->t0_W = W;
		md->t0_npaired = np;
		double t = (U > 100 ? 100 / U : 1) * (double)d->n_run;
		md->t0 = t;
		md->t0_U = U;
		md->t0_any = 0;
		md->t0_call = s->call_id;
		md->t0_nrun = d->n_run;
		return t;
	}
	unsigned char paired[COLO_MAX_SET];
	double W = 0;
	size_t np = 0;
	if (!with_cand)
		memset(&md->t0_sig, 0, sizeof md->t0_sig);
	for (size_t i = 0; i < d->n_run; i++) {
		const sched_seg *g = &s->seg[d->run[i]];
		shape[n] = g->req.shape;
		util[n] = colo_util(est_util(s, &g->req, g->prof, d));
		paired[n] = (unsigned char)s->prof[g->prof].paired;
		W += (double)g->pl.n_dev;
		if (paired[n] && !with_cand)
			psig_add(&md->t0_sig, g->req.shape);
		if (paired[n] && np++ < SCHED_PSHAPES && !with_cand)
			md->t0_pshape[np - 1] = g->req.shape;
		n++;
	}
	if (with_cand) {
		shape[n] = cand_shape;
		util[n] = colo_util(cand_util);
		paired[n] = (unsigned char)colo_paired(s, cand_shape);
		n++;
	}
	double U = 0;
	int any = 0;
	double t = set_speeds_ex(s, shape, util, paired, n, speed, &U, &any);
	if (!with_cand) {
		md->t0 = t;
		md->t0_U = U;
		md->t0_W = W;
		md->t0_npaired = np;
		md->t0_any = any;
		md->any_pair = any;
		md->any_ver = d->ver;
		md->t0_call = s->call_id;
		md->t0_nrun = d->n_run;
	}
	return t;
}

int colo_paired(const sched *s, uint64_t shape)
{
	return s->n_pair && sched__map_get(&s->paired_map, shape, 0) != SCHED_NONE;
}

double colo_throughput_with(const sched *s, const sched_dev *d, uint64_t cand_shape,
			    double cand_util, int cand_paired)
{
	/* Common case: the running set's figures are cached for this call,
	 * no pair among its members was observed, and none between the
	 * candidate and a member, so the utilisation prior decides, and the
	 * sum below is the same one set_speeds_ex forms (members in order,
	 * then the candidate): the result is bit for bit the general path's. */
	if (d->n_run + 1 <= COLO_MAX_SET && d->t0_call == s->call_id &&
	    d->t0_nrun == d->n_run && !d->t0_any) {
		/* A candidate in some pair: the prior still decides unless it
		 * pairs with a member (then that member is in a pair too, so
		 * set_speeds_ex would look the pairs up). */
		for (size_t i = 0; cand_paired && i < d->n_run; i++) {
			const sched_seg *g = &s->seg[d->run[i]];
			uint64_t m = g->req.shape;
			if (s->prof[g->prof].paired &&
			    (pair_find(s, cand_shape, m) || pair_find(s, m, cand_shape)))
				return colo_throughput(s, d, 1, cand_shape, cand_util);
		}
		double U = d->t0_U + colo_util(cand_util);
		double sp = U > 100 ? 100 / U : 1;
		return sp * (double)(d->n_run + 1);
	}
	return colo_throughput(s, d, 1, cand_shape, cand_util);
}

/*
 * The candidate on device d, member by member: its own speed there, the
 * members' loss weighted by the devices each holds (a member that is a
 * gang of k slows on all k devices, since a gang advances at the speed of
 * its slowest member: counting k x its slowdown here is exact when d is
 * its slowest device and an upper bound on the loss otherwise), their
 * weighted throughput before, and the weight.  Joining never speeds a
 * member up, so the loss is <= 0.
 */
static void __attribute__((noinline))
colo_eval_general(const sched *s, const sched_dev *d, size_t cand_prof, double cand_util,
		  colo_cand *out);

void colo_eval(const sched *s, const sched_dev *d, size_t cand_prof, double cand_util,
	       colo_cand *out)
{
	/* The common case: the set's figures cached in this call, no pair
	 * among its members and none with the candidate, so the utilisation
	 * prior alone decides (what the general path below computes then,
	 * the same sums, without its frame) */
	const sched_profile *cp = &s->prof[cand_prof];
	if (d->n_run + 1 <= COLO_MAX_SET && d->t0_call == s->call_id && d->t0_nrun == d->n_run &&
	    !d->t0_any && (!cp->paired || !psig_meet(&s->psig[cp->psig], &d->t0_sig))) {
		double W = d->t0_W;
		double U0 = d->t0_U, U1 = U0 + colo_util(cand_util);
		double sp0 = U0 > 100 ? 100 / U0 : 1, sp1 = U1 > 100 ? 100 / U1 : 1;
		out->weight = W;
		out->speed = sp1;
		out->loss = W * (sp1 - sp0);
		out->t0 = W * sp0;
		return;
	}
	colo_eval_general(s, d, cand_prof, cand_util, out);
}

static void colo_eval_general(const sched *s, const sched_dev *d, size_t cand_prof,
			      double cand_util, colo_cand *out)
{
	const sched_profile *cp = &s->prof[cand_prof];
	uint64_t cand_shape = cp->shape;
	int cand_paired = cp->paired;
	size_t n = d->n_run;
	if (n + 1 > COLO_MAX_SET) {
		out->weight = (double)n;
		out->speed = 0;
		out->loss = -INFINITY;
		out->t0 = INFINITY;
		return;
	}
	(void)colo_throughput(s, d, 0, 0, 0); /* fills the device's cache */
	double W = d->t0_W;
	out->weight = W;
	int fast = !d->t0_any;
	/* No member's shape among the candidate's partners: no pair joins
	 * them, without looking the pairs up (the common case) */
	if (fast && cand_paired && !psig_meet(&s->psig[cp->psig], &d->t0_sig))
		cand_paired = 0;
	if (fast && cand_paired && d->t0_npaired <= SCHED_PSHAPES) {
		/* the members in some pair, kept with the cache */
		for (size_t i = 0; fast && i < d->t0_npaired; i++) {
			uint64_t m = d->t0_pshape[i];
			if (pair_find(s, cand_shape, m) || pair_find(s, m, cand_shape))
				fast = 0;
		}
	} else {
		for (size_t i = 0; fast && cand_paired && i < n; i++) {
			const sched_seg *g = &s->seg[d->run[i]];
			uint64_t m = g->req.shape;
			if (s->prof[g->prof].paired &&
			    (pair_find(s, cand_shape, m) || pair_find(s, m, cand_shape)))
				fast = 0;
		}
	}
	if (fast) {
		/* the utilisation prior alone: one speed for all, before and
		 * after (the same sums as set_speeds_ex) */
		double U0 = d->t0_U, U1 = U0 + colo_util(cand_util);
		double sp0 = U0 > 100 ? 100 / U0 : 1, sp1 = U1 > 100 ? 100 / U1 : 1;
		out->speed = sp1;
		out->loss = W * (sp1 - sp0);
		out->t0 = W * sp0;
		return;
	}
	uint64_t shape[COLO_MAX_SET];
	double util[COLO_MAX_SET], sp0[COLO_MAX_SET], sp1[COLO_MAX_SET];
	unsigned char paired[COLO_MAX_SET];
	for (size_t i = 0; i < n; i++) {
		const sched_seg *g = &s->seg[d->run[i]];
		shape[i] = g->req.shape;
		util[i] = colo_util(est_util(s, &g->req, g->prof, d));
		paired[i] = (unsigned char)s->prof[g->prof].paired;
	}
	if (!d->t0_any) {
		/* No pair among the members (the cache says so): their speeds
		 * alone are the prior's one speed, from the same sum of
		 * utilisations that set_speeds_ex would form, so the same
		 * bits without its pair lookups.  (Here the candidate pairs
		 * with a member.) */
		double U0 = d->t0_U, sp = U0 > 100 ? 100 / U0 : 1;
		for (size_t i = 0; i < n; i++)
			sp0[i] = sp;
	} else {
		(void)set_speeds_ex(s, shape, util, paired, n, sp0, NULL, NULL);
	}
	shape[n] = cand_shape;
	util[n] = colo_util(cand_util);
	paired[n] = (unsigned char)colo_paired(s, cand_shape);
	(void)set_speeds_ex(s, shape, util, paired, n + 1, sp1, NULL, NULL);
	double loss = 0, t0 = 0;
	for (size_t i = 0; i < n; i++) {
		double w = (double)s->seg[d->run[i]].pl.n_dev;
		loss += w * (sp1[i] - sp0[i]);
		t0 += w * sp0[i];
	}
	out->speed = sp1[n];
	out->loss = loss < 0 ? loss : 0;
	out->t0 = t0;
}

/* The group of a shape's profile, 0 when none. */
static uint64_t shape_group(const sched *s, uint64_t shape)
{
	size_t pi = est_profile_find(s, shape);
	return pi == SCHED_NONE ? 0 : s->prof[pi].group;
}

void colo_observe(sched *s, const sched_seg *g, double now, double speed)
{
	double life = now - g->start;
	if (!(life > 0) || !(speed > 0) || !g->n_ov)
		return;
	/* The partner is the shape g shared its device with longest.  The
	 * others are a device's turnover: on a device whose segments end a
	 * few milliseconds apart, nearly every segment overlaps the tail of
	 * the one it replaced, or the head of the one that replaced its
	 * partner, and counting each as a second partner shape left most
	 * shared segments unattributed (live, bench-share's free run: seven
	 * of the nine that could teach).  Under the additive model
	 * 1/s = 1 + sum_j F_j d_j, another shape whose pair with g the core
	 * knows (measured, or derived from groups that agree) is taken out
	 * at its estimate; the ones it does not know may add up to no more
	 * than noise.  (Live, the cost stand-in: of two heavy trials started
	 * together, the one that ended last met the next trial's head for a
	 * tenth of its life and taught nothing, so the pair of heavy groups
	 * stayed at one measurement, never stood in for its other shapes,
	 * and heavy pairs kept being time-sliced.) */
	double noise = SCHED_OVERLAP_NOISE * life;
	uint64_t partner = 0;
	double F = 0;
	for (size_t k = 0; k < g->n_ov; k++) {
		double t = 0;
		for (size_t j = 0; j < g->n_ov; j++)
			if (g->ov[j].shape == g->ov[k].shape)
				t += g->ov[j].total;
		if (t > F) {
			F = t;
			partner = g->ov[k].shape;
		}
	}
	if (!(F > noise))
		return;
	/* The same sums for the partner's group, when the driver names
	 * groups (the driver's word that its shapes interfere alike): a
	 * segment beside several shapes of one group teaches that pair of
	 * groups, since under the additive model 1/s = 1 + F d when every
	 * d_j is the groups' d. */
	uint64_t gp = g->req.group ? shape_group(s, partner) : 0;
	double known = 0, unknown = 0, Fg = 0, other_g = 0;
	for (size_t j = 0; j < g->n_ov; j++) {
		uint64_t sh = g->ov[j].shape;
		if (sh != partner) {
			const sched_pair *p = pair_find(s, g->req.shape, sh);
			if (p && p->derived != 2)
				known += g->ov[j].total * p->d;
			else
				unknown += g->ov[j].total;
		}
		if (gp && shape_group(s, sh) == gp)
			Fg += g->ov[j].total;
		else
			other_g += g->ov[j].total;
	}
	if (unknown > noise) {
		/* several partner shapes, unknown: no pair to attribute to */
		if (gp && other_g <= noise && Fg / life >= COLO_MIN_OVERLAP) {
			group_learn(s, g->req.group, gp, (1 / speed - 1) / (Fg / life));
			s->work.learnt++;
		}
		return;
	}
	F /= life;
	if (F < COLO_MIN_OVERLAP)
		return;
	double d = (1 / speed - 1 - known / life) / F;
	pair_update(s, g->req.shape, partner, d);
	s->work.learnt++;
	if (gp)
		group_learn(s, g->req.group, gp, d);
}

/* ---- groups: what pairs of groups measured stands in for their shapes ---- */

/* The value a derived pair of group pair q holds. */
static double group_value(const sched_gpair *q)
{
	return q->agreed ? q->d : q->d_max;
}

/* Pair (a, b) derived from q unless it was measured itself. */
static void group_derive(sched *s, uint64_t a, uint64_t b, const sched_gpair *q)
{
	sched_pair *p = (sched_pair *)pair_find(s, a, b);
	if (p && !p->derived)
		return;
	double v = group_value(q);
	if (p && p->d == v && p->derived == (q->agreed ? 1 : 2))
		return;
	if (!p) {
		if (!(p = pair_ensure(s, a, b)))
			return; /* without memory: the prior answers for the pair */
		s->n_derived_made++;
	}
	p->d = v;
	p->n = 0;
	p->derived = q->agreed ? 1 : 2;
	sched__touch_shape(s, a);
	sched__touch_shape(s, b);
}

/* The oldest profile index inside the window of newest shapes. */
static size_t group_window(const sched *s)
{
	return s->n_prof > COLO_GROUP_WINDOW ? s->n_prof - COLO_GROUP_WINDOW : 0;
}

/* Every pair of the window's shapes of groups q->a, q->b derived anew. */
static void group_spread(sched *s, const sched_gpair *q)
{
	if (q->n < COLO_GROUP_MIN)
		return;
	for (size_t i = group_window(s); i < s->n_prof; i++) {
		if (s->prof[i].group != q->a)
			continue;
		for (size_t j = group_window(s); j < s->n_prof; j++)
			if (s->prof[j].group == q->b)
				group_derive(s, s->prof[i].shape, s->prof[j].shape, q);
	}
}

/* The record of group a beside group b (created empty), NULL without
 * memory. */
static sched_gpair *gpair_ensure(sched *s, uint64_t ga, uint64_t gb)
{
	size_t i = sched__map_get(&s->gpair_map, ga, gb);
	if (i == SCHED_NONE) {
		if (sched__grow((void **)&s->gpair, &s->cap_gpair, s->n_gpair + 1, sizeof *s->gpair) ||
		    sched__map_put(&s->gpair_map, ga, gb, s->n_gpair))
			return NULL;
		i = s->n_gpair++;
		memset(&s->gpair[i], 0, sizeof s->gpair[i]);
		s->gpair[i].a = ga;
		s->gpair[i].b = gb;
	}
	return &s->gpair[i];
}

/* Agreed: enough measurements, and their speeds within the span. */
static int group_agrees(const sched_gpair *q)
{
	return q->n >= COLO_GROUP_MIN && q->s_max - q->s_min <= COLO_GROUP_SPAN;
}

static void group_learn(sched *s, uint64_t ga, uint64_t gb, double d)
{
	sched_gpair *q = gpair_ensure(s, ga, gb);
	if (!q)
		return;
	if (d < 0)
		d = 0;
	if (d > 100)
		d = 100;
	double sp = 1 / (1 + d);
	q->n++;
	q->d += (d - q->d) / (double)q->n;
	if (q->n == 1 || d > q->d_max)
		q->d_max = d;
	if (q->n == 1 || sp < q->s_min)
		q->s_min = sp;
	if (q->n == 1 || sp > q->s_max)
		q->s_max = sp;
	q->agreed = group_agrees(q);
	q->lstamp = ++s->learn_stamp;
	group_spread(s, q);
}

int colo_group_agreed(const sched *s, uint64_t a, uint64_t b)
{
	const sched_pair *p = pair_find(s, a, b), *q = pair_find(s, b, a);
	return (p && p->derived == 1) || (q && q->derived == 1);
}

static void group_shape(sched *s, size_t pi)
{
	uint64_t g = s->prof[pi].group, shape = s->prof[pi].shape;
	for (size_t k = 0; k < s->n_gpair; k++) {
		const sched_gpair *q = &s->gpair[k];
		if (q->n < COLO_GROUP_MIN || (q->a != g && q->b != g))
			continue;
		for (size_t j = group_window(s); j < s->n_prof; j++) {
			if (q->a == g && s->prof[j].group == q->b)
				group_derive(s, shape, s->prof[j].shape, q);
			if (q->b == g && s->prof[j].group == q->a)
				group_derive(s, s->prof[j].shape, shape, q);
		}
	}
}

void colo_group_shape(sched *s, size_t pi)
{
	group_shape(s, pi);
	if (s->n_derived_made >= s->derived_sweep_at)
		derived_sweep(s);
}

void colo_group_use(sched *s, size_t pi)
{
	if (pi < group_window(s))
		group_shape(s, pi);
}

/* ---- exploration counts ---- */

size_t colo_explored(const sched *s, uint64_t a, uint64_t b)
{
	size_t i = sched__map_get(&s->explore_map, a < b ? a : b, a < b ? b : a);
	return i == SCHED_NONE ? 0 : s->explore[i].n;
}

/* The record of shapes a, b (either order; created at 0), NULL without
 * memory. */
static sched_explore *explore_ensure(sched *s, uint64_t a, uint64_t b)
{
	uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
	size_t i = sched__map_get(&s->explore_map, lo, hi);
	if (i == SCHED_NONE) {
		if (sched__grow((void **)&s->explore, &s->cap_explore, s->n_explore + 1,
				sizeof *s->explore) ||
		    sched__map_put(&s->explore_map, lo, hi, s->n_explore))
			return NULL;
		i = s->n_explore++;
		s->explore[i] = (sched_explore){.a = lo, .b = hi};
	}
	return &s->explore[i];
}

void colo_explore_note(sched *s, uint64_t a, uint64_t b)
{
	/* without memory the count stays: one more try of the pair at most */
	sched_explore *x = explore_ensure(s, a, b);
	if (x) {
		x->n++;
		x->lstamp = ++s->learn_stamp;
	}
}

/* ---- what a driver keeps across restarts (learnt.c) ---- */

size_t colo_learnt_list(const sched *s, uint64_t since, sched_learnt *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_pair; i++) {
		const sched_pair *p = &s->pair[i];
		if (p->derived || p->lstamp <= since)
			continue;
		if (n < max)
			out[n] = (sched_learnt){.kind = SCHED_LEARNT_PAIR, .a = p->a, .b = p->b,
						.n = (double)p->n, .d = p->d};
		n++;
	}
	for (size_t i = 0; i < s->n_gpair; i++) {
		const sched_gpair *q = &s->gpair[i];
		if (q->lstamp <= since)
			continue;
		if (n < max)
			out[n] = (sched_learnt){.kind = SCHED_LEARNT_GROUPS, .a = q->a, .b = q->b,
						.n = (double)q->n, .d = q->d, .d_max = q->d_max,
						.s_min = q->s_min, .s_max = q->s_max};
		n++;
	}
	for (size_t i = 0; i < s->n_explore; i++) {
		const sched_explore *x = &s->explore[i];
		if (x->lstamp <= since)
			continue;
		if (n < max)
			out[n] = (sched_learnt){.kind = SCHED_LEARNT_EXPLORED, .a = x->a, .b = x->b,
						.n = (double)x->n};
		n++;
	}
	return n;
}

int colo_learnt_import(sched *s, const sched_learnt *row)
{
	if (row->kind == SCHED_LEARNT_PAIR) {
		sched_pair *p = pair_ensure(s, row->a, row->b);
		if (!p)
			return RL_ENOMEM;
		p->d = row->d;
		p->n = (size_t)row->n;
		p->derived = 0;
		p->lstamp = 0;
		sched__touch_shape(s, row->a);
		sched__touch_shape(s, row->b);
		return 0;
	}
	if (row->kind == SCHED_LEARNT_EXPLORED) {
		sched_explore *x = explore_ensure(s, row->a, row->b);
		if (!x)
			return RL_ENOMEM;
		x->n = (size_t)row->n;
		x->lstamp = 0;
		return 0;
	}
	sched_gpair *q = gpair_ensure(s, row->a, row->b);
	if (!q)
		return RL_ENOMEM;
	q->n = (size_t)row->n;
	q->d = row->d;
	q->d_max = row->d_max;
	q->s_min = row->s_min;
	q->s_max = row->s_max;
	q->agreed = group_agrees(q);
	q->lstamp = 0;
	group_spread(s, q);
	return 0;
}

/* ---- forgetting shapes (learnt.c), and derived pairs beyond the window ---- */

static int gone_has(const sched_map *gone, uint64_t shape)
{
	return sched__map_get(gone, shape, 0) != SCHED_NONE;
}

/* The pairs for which drop(s, pair, ctx) says so go.  With rebuild, the
 * partner sets, the profiles' copies of them and the filter are made
 * again from the pairs left (a partner set holds bits of every pair it
 * ever had, and the map of partner sets a key for every shape); without,
 * they keep bits of pairs gone, which costs a lookup that finds nothing,
 * never a wrong answer (both only say where a pair may be).  Returns how
 * many went. */
static size_t pairs_drop(sched *s, int (*drop)(const sched *, const sched_pair *, const void *),
			 const void *ctx, int rebuild)
{
	/* the map loses its dropped keys first, so that moving the others
	 * overwrites keys it holds and never grows it */
	size_t w = 0, n0 = s->n_pair;
	for (size_t k = 0; k < s->n_pair; k++)
		if (drop(s, &s->pair[k], ctx))
			sched__map_del(&s->pair_map, s->pair[k].a, s->pair[k].b);
	for (size_t k = 0; k < s->n_pair; k++) {
		const sched_pair *p = &s->pair[k];
		if (sched__map_get(&s->pair_map, p->a, p->b) != k)
			continue; /* dropped (its key is gone) */
		if (w != k) {
			s->pair[w] = *p;
			(void)sched__map_put(&s->pair_map, p->a, p->b, w);
		}
		w++;
	}
	s->n_pair = w;
	if (w == n0 || !rebuild)
		return n0 - w;
	sched__map_fini(&s->paired_map);
	memset(&s->paired_map, 0, sizeof s->paired_map);
	s->n_psig = 0;
	for (size_t i = 0; i < s->n_prof; i++) {
		s->prof[i].paired = 0;
		s->prof[i].psig = SCHED_NONE;
	}
	for (size_t k = 0; k < s->n_pair; k++) {
		uint64_t a = s->pair[k].a, b = s->pair[k].b;
		size_t ia = psig_ensure(s, a), ib = psig_ensure(s, b);
		if (ia == SCHED_NONE || ib == SCHED_NONE)
			continue; /* without memory the prior answers for it */
		psig_add(&s->psig[ia], b);
		psig_add(&s->psig[ib], a);
	}
	free(s->pair_bloom);
	s->pair_bloom = NULL;
	s->pair_bloom_bits = 0;
	if (s->n_pair)
		(void)bloom_rebuild(s);
	return n0 - w;
}

static int drop_gone(const sched *s, const sched_pair *p, const void *gone)
{
	(void)s;
	return gone_has(gone, p->a) || gone_has(gone, p->b);
}

void colo_forget(sched *s, const sched_map *gone)
{
	(void)pairs_drop(s, drop_gone, gone, 1);
	size_t w = 0;
	for (size_t k = 0; k < s->n_explore; k++)
		if (gone_has(gone, s->explore[k].a) || gone_has(gone, s->explore[k].b))
			sched__map_del(&s->explore_map, s->explore[k].a, s->explore[k].b);
	for (size_t k = 0; k < s->n_explore; k++) {
		const sched_explore *x = &s->explore[k];
		if (gone_has(gone, x->a) || gone_has(gone, x->b))
			continue;
		if (w != k) {
			s->explore[w] = *x;
			(void)sched__map_put(&s->explore_map, x->a, x->b, w);
		}
		w++;
	}
	s->n_explore = w;
}

/* Drop a derived pair when one of its shapes left the window of newest
 * shapes and no segment the core holds has it (held: by profile index). */
static int drop_stale(const sched *s, const sched_pair *p, const void *held)
{
	const unsigned char *h = held;
	if (!p->derived)
		return 0;
	size_t lo = group_window(s), ia = est_profile_find(s, p->a), ib = est_profile_find(s, p->b);
	return ia == SCHED_NONE || ib == SCHED_NONE || (ia < lo && !h[ia]) || (ib < lo && !h[ib]);
}

/*
 * Derived pairs are made for the window's shapes, and each new shape of a
 * group adds up to twice the window's size of them; kept after their
 * shapes left the window, they grew with every shape a service ever saw
 * (about 4 kB a shape, most of the core's memory: bench/bench_forget.c).
 * So the derived pairs of shapes that left the window go, unless a
 * segment the core holds has the shape; they are derived again when it is
 * used again (colo_group_use).  The walk over every pair is paid once the
 * pairs derived since the last one are as many as half the pairs, or
 * four windows' squares: a constant cost per derived pair.
 */
static void derived_sweep(sched *s)
{
	unsigned char *held = calloc(s->n_prof ? s->n_prof : 1, 1);
	if (!held)
		return; /* kept until the next sweep */
	(void)sched__held_profiles(s, held);
	if (pairs_drop(s, drop_stale, held, 0))
		sched__touch_all(s); /* refusals may have read a pair now gone */
	free(held);
	size_t every = 4 * COLO_GROUP_WINDOW * COLO_GROUP_WINDOW;
	s->derived_sweep_at = s->n_derived_made + (s->n_pair / 2 > every ? s->n_pair / 2 : every);
}

size_t sched_colocate_explored(const sched *s, uint64_t shape_a, uint64_t shape_b)
{
	return colo_explored(s, shape_a, shape_b);
}

void sched_colocate_seed(sched *s, uint64_t shape_a, uint64_t shape_b, double speed_a,
			 double speed_b)
{
	/* A seed replaces whatever was there and counts as one observation. */
	if (speed_a > 0) {
		sched_pair *p = pair_ensure(s, shape_a, shape_b);
		if (p) {
			p->n = 0;
			pair_update(s, shape_a, shape_b, 1 / speed_a - 1);
		}
		sched__touch_all(s); /* queued segments may pair differently */
	}
	if (speed_b > 0 && shape_a != shape_b) {
		sched_pair *p = pair_ensure(s, shape_b, shape_a);
		if (p) {
			p->n = 0;
			pair_update(s, shape_b, shape_a, 1 / speed_b - 1);
		}
	}
}

double sched_colocate_predict(const sched *s, const uint64_t *shapes, const double *util,
			      size_t n, double *speed)
{
	double ubuf[COLO_MAX_SET], sbuf[COLO_MAX_SET];
	if (n > COLO_MAX_SET)
		n = COLO_MAX_SET;
	for (size_t i = 0; i < n; i++) {
		if (util) {
			ubuf[i] = colo_util(util[i]);
		} else {
			size_t pi = est_profile_find(s, shapes[i]);
			ubuf[i] = pi != SCHED_NONE && s->prof[pi].util >= 0 ?
					  colo_util(s->prof[pi].util) : 100;
		}
	}
	double sum = set_speeds(s, shapes, ubuf, n, sbuf);
	if (speed)
		memcpy(speed, sbuf, n * sizeof sbuf[0]);
	return sum;
}

int sched_colocate_pair(const sched *s, uint64_t shape_a, uint64_t shape_b,
			double *speed_a, size_t *n_obs)
{
	const sched_pair *p = pair_find(s, shape_a, shape_b);
	if (!p)
		return RL_ENOTFOUND;
	if (speed_a)
		*speed_a = 1 / (1 + p->d);
	if (n_obs)
		*n_obs = p->n;
	return 0;
}

void colo_fini(sched *s)
{
	free(s->pair_bloom);
	free(s->psig);
	free(s->pair);
	sched__map_fini(&s->pair_map);
	sched__map_fini(&s->paired_map);
	sched__map_fini(&s->explore_map);
	free(s->explore);
	sched__map_fini(&s->gpair_map);
	free(s->gpair);
}
