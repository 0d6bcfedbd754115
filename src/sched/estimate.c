/*
 * estimate.c - what the core knows about memory and compute: one profile per
 * shape (command + memory-relevant parameters) and one model per family
 * (command), and the rule that turns them into a reservation.
 *
 * Profile of a shape: number of measurements, maximum observed peak, an OOM
 * floor, an EWMA of mean utilisation and of throughput (work/second) measured
 * alone.  Throughput beside others is kept per partner shape by colocate.c.
 *
 * Family model: a shape never measured, whose family has >= 2 measured
 * shapes, gets its peak predicted from its numeric features (batch size,
 * width, ...).  Four least-squares models are fitted on the family's measured
 * shapes and the one with the smallest leave-one-out (LOO) error wins:
 *   const     peak = w0
 *   linear    peak = w0 + sum w_i x_i
 *   pairwise  linear + sum_{i<=j} w_ij x_i x_j   (only with <= 4 features:
 *             activation memory is often batch * width)
 *   loglog    log peak = w0 + sum w_i log x_i     (power laws; x > 0)
 * Columns are standardised and a tiny ridge term (1e-6 * n) keeps
 * under-determined fits solvable (they then interpolate with minimum norm),
 * so LOO is computed by honest refits without the dropped point.  Models are
 * tried in the order const, linear, loglog, pairwise; a later one must have
 * a strictly smaller LOO error, except that a tie displaces const (the
 * features were declared memory-relevant: with two points, a line).
 * Refits run whenever a shape's peak changes while a family has fewer than
 * 16 shapes and then after every n/8 changes, on the 48 most recently
 * measured shapes: bounded work even when a trace has thousands of shapes.
 */
#include "sched/sched_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIT_MAX_POINTS 48
#define FIT_EAGER 16
#define UTIL_RESTAMP 1.0 /* percentage points */

const char *sched_fit_name(sched_fit f)
{
	static const char *const names[] = { "none", "const", "linear", "pairwise", "loglog" };
	return (int)f >= 0 && (size_t)f < sizeof names / sizeof names[0] ? names[f] : "unknown";
}

size_t est_profile_find(const sched *s, uint64_t shape)
{
	return sched__map_get(&s->prof_map, shape, 0);
}

static size_t family_ensure(sched *s, uint64_t family)
{
	size_t fi = sched__map_get(&s->fam_map, family, 0);
	if (fi != SCHED_NONE)
		return fi;
	if (sched__grow((void **)&s->fam, &s->cap_fam, s->n_fam + 1, sizeof *s->fam) ||
	    sched__grow((void **)&s->fstamp, &s->cap_fstamp, s->n_fam + 1, sizeof *s->fstamp))
		return SCHED_NONE;
	fi = s->n_fam;
	if (sched__map_put(&s->fam_map, family, 0, fi))
		return SCHED_NONE;
	memset(&s->fam[fi], 0, sizeof s->fam[fi]);
	s->fam[fi].family = family;
	s->fam[fi].util_stamped = -1;
	s->fam[fi].guess_head = SCHED_NONE;
	s->fstamp[fi] = 0;
	s->n_fam++;
	return fi;
}

size_t est_profile_ensure(sched *s, const sched_request *req)
{
	size_t pi = est_profile_find(s, req->shape);
	if (pi != SCHED_NONE) {
		s->prof[pi].used = ++s->use_clock;
		s->prof[pi].user = req->user;
		if (!s->prof[pi].group && req->group) {
			/* imported before a request named its group */
			s->prof[pi].group = req->group;
			if (s->n_gpair)
				colo_group_shape(s, pi);
		} else if (s->prof[pi].group && s->n_gpair) {
			colo_group_use(s, pi);
		}
		return pi;
	}
	/* past the bound by an eighth, the least recently used go */
	if (s->opt.learn_max && s->n_prof >= learnt_forget_at(s))
		learnt_forget(s);
	size_t fi = family_ensure(s, req->family);
	if (fi == SCHED_NONE)
		return SCHED_NONE;
	if (sched__grow((void **)&s->prof, &s->cap_prof, s->n_prof + 1, sizeof *s->prof) ||
	    sched__grow((void **)&s->pstamp, &s->cap_pstamp, s->n_prof + 1, sizeof *s->pstamp))
		return SCHED_NONE;
	pi = s->n_prof;
	if (sched__map_put(&s->prof_map, req->shape, 0, pi))
		return SCHED_NONE;
	sched_profile *p = &s->prof[pi];
	memset(p, 0, sizeof *p);
	p->shape = req->shape;
	p->fam = fi;
	p->group = req->group;
	p->n_feat = req->n_feat;
	memcpy(p->feat, req->feat, req->n_feat * sizeof req->feat[0]);
	p->util = -1;
	p->used = ++s->use_clock;
	p->user = req->user;
	p->run_head = SCHED_NONE;
	p->guess_prev = p->guess_next = SCHED_NONE;
	p->psig = s->n_pair ? sched__map_get(&s->paired_map, req->shape, 0) : SCHED_NONE;
	p->paired = p->psig != SCHED_NONE;
	s->pstamp[pi] = (sched_est_stamp){ 0, fi };
	s->n_prof++;
	if (p->group && s->n_gpair)
		colo_group_shape(s, pi);
	return pi;
}

/* ---- family model ------------------------------------------------------ */

/* Raw design row of a model (intercept excluded); returns the column count,
 * or SCHED_NONE when the model cannot use these features. */
static size_t design_row(sched_fit fit, const double *x, size_t k, double *row)
{
	size_t c = 0;
	switch (fit) {
	case SCHED_FIT_CONST:
		return 0;
	case SCHED_FIT_LINEAR:
		for (size_t i = 0; i < k; i++)
			row[c++] = x[i];
		return c;
	case SCHED_FIT_PAIRWISE:
		if (k > 4)
			return SCHED_NONE;
		for (size_t i = 0; i < k; i++)
			row[c++] = x[i];
		for (size_t i = 0; i < k; i++)
			for (size_t j = i; j < k; j++)
				row[c++] = x[i] * x[j];
		return c;
	case SCHED_FIT_LOGLOG:
		for (size_t i = 0; i < k; i++) {
			if (!(x[i] > 0))
				return SCHED_NONE;
			row[c++] = log(x[i]);
		}
		return c;
	default:
		return SCHED_NONE;
	}
}

/* Solve A w = b (n x n, row-major) by Gaussian elimination with partial
 * pivoting; A and b are overwritten.  Returns 0, or -1 when singular. */
static int solve(double *A, double *b, size_t n)
{
	for (size_t c = 0; c < n; c++) {
		size_t piv = c;
		for (size_t r = c + 1; r < n; r++)
			if (fabs(A[r * n + c]) > fabs(A[piv * n + c]))
				piv = r;
		if (fabs(A[piv * n + c]) < 1e-300)
			return -1;
		if (piv != c) {
			for (size_t j = 0; j < n; j++) {
				double t = A[c * n + j];
				A[c * n + j] = A[piv * n + j];
				A[piv * n + j] = t;
			}
			double t = b[c];
			b[c] = b[piv];
			b[piv] = t;
		}
		for (size_t r = c + 1; r < n; r++) {
			double f = A[r * n + c] / A[c * n + c];
			if (f == 0)
				continue;
			for (size_t j = c; j < n; j++)
				A[r * n + j] -= f * A[c * n + j];
			b[r] -= f * b[c];
		}
	}
	for (size_t c = n; c-- > 0;) {
		double v = b[c];
		for (size_t j = c + 1; j < n; j++)
			v -= A[c * n + j] * b[j];
		b[c] = v / A[c * n + c];
	}
	return 0;
}

/* Ridge fit on standardised rows Z (n x p, first column 1), skipping row
 * skip (SCHED_NONE: none).  Writes p weights.  Returns 0 or -1. */
static int ridge_fit(const double *Z, const double *y, size_t n, size_t p,
		     size_t skip, double *w)
{
	double A[SCHED_MAX_COEF * SCHED_MAX_COEF];
	memset(A, 0, p * p * sizeof A[0]);
	memset(w, 0, p * sizeof w[0]);
	size_t used = 0;
	for (size_t r = 0; r < n; r++) {
		if (r == skip)
			continue;
		used++;
		const double *z = &Z[r * p];
		for (size_t i = 0; i < p; i++) {
			w[i] += z[i] * y[r];
			for (size_t j = 0; j < p; j++)
				A[i * p + j] += z[i] * z[j];
		}
	}
	for (size_t i = 1; i < p; i++)
		A[i * p + i] += 1e-6 * (double)(used ? used : 1);
	return solve(A, w, p);
}

/* Fit one model kind on the family's points; on success fill the family's
 * coefficients when its LOO error beats *best (ties: richer wins). */
static void fit_candidate(sched_family *f, sched_fit fit, const sched *s,
			  const size_t *pts, size_t n, double *best)
{
	size_t k = f->n_feat;
	double raw[SCHED_MAX_COEF];
	double Z[FIT_MAX_POINTS * SCHED_MAX_COEF]; /* 14 KiB: fine on a stack */
	double y[FIT_MAX_POINTS], mean[SCHED_MAX_COEF] = { 0 }, scale[SCHED_MAX_COEF];
	size_t p = 0;
	for (size_t r = 0; r < n; r++) {
		const sched_profile *pr = &s->prof[pts[r]];
		size_t c = design_row(fit, pr->feat, k, raw);
		if (c == SCHED_NONE)
			return;
		p = c + 1;
		Z[r * p] = 1;
		memcpy(&Z[r * p + 1], raw, c * sizeof raw[0]);
		y[r] = fit == SCHED_FIT_LOGLOG ? log((double)pr->peak) : (double)pr->peak;
	}
	/* standardise columns 1..p-1 */
	for (size_t j = 1; j < p; j++) {
		double m = 0, v = 0;
		for (size_t r = 0; r < n; r++)
			m += Z[r * p + j];
		m /= (double)n;
		for (size_t r = 0; r < n; r++)
			v += (Z[r * p + j] - m) * (Z[r * p + j] - m);
		v = sqrt(v / (double)n);
		mean[j] = m;
		scale[j] = v > 1e-12 ? v : 1;
		for (size_t r = 0; r < n; r++)
			Z[r * p + j] = (Z[r * p + j] - m) / scale[j];
	}
	double w[SCHED_MAX_COEF], sse = 0;
	for (size_t r = 0; r < n; r++) {
		if (ridge_fit(Z, y, n, p, r, w))
			return;
		double pred = 0;
		for (size_t j = 0; j < p; j++)
			pred += w[j] * Z[r * p + j];
		if (fit == SCHED_FIT_LOGLOG)
			pred = exp(pred);
		double yr = fit == SCHED_FIT_LOGLOG ? exp(y[r]) : y[r];
		sse += (pred - yr) * (pred - yr);
	}
	double rmse = sqrt(sse / (double)n);
	if (rmse > *best * (1 + 1e-9) + 1e-9)
		return;
	/* A tie displaces only the constant model (features were declared
	 * memory-relevant); otherwise the simpler model already chosen stays. */
	if (rmse >= *best * (1 - 1e-9) - 1e-9 && f->fit != SCHED_FIT_CONST)
		return;
	if (ridge_fit(Z, y, n, p, SCHED_NONE, w))
		return;
	*best = rmse;
	f->fit = fit;
	f->n_coef = p;
	memcpy(FAM_COEF(f), w, p * sizeof w[0]);
	memcpy(FAM_MEAN(f), mean, p * sizeof mean[0]);
	memcpy(FAM_SCALE(f), scale, p * sizeof scale[0]);
	f->loo_rmse = rmse;
	f->n_points = n;
}

static void family_fit(sched *s, sched_family *f)
{
	size_t n = f->n_shapes < FIT_MAX_POINTS ? f->n_shapes : FIT_MAX_POINTS;
	const size_t *pts = f->shapes + (f->n_shapes - n); /* most recent */
	f->since_fit = 0;
	if (n < 2)
		return;
	if (!f->model && !(f->model = malloc(3 * SCHED_MAX_COEF * sizeof *f->model)))
		return; /* no memory: no model yet, estimates fall back */
	size_t k = SCHED_MAX_FEAT;
	for (size_t r = 0; r < n; r++)
		if (s->prof[pts[r]].n_feat < k)
			k = s->prof[pts[r]].n_feat;
	f->n_feat = k;
	double best = INFINITY;
	f->fit = SCHED_FIT_NONE;
	static const sched_fit order[] = { SCHED_FIT_CONST, SCHED_FIT_LINEAR,
					   SCHED_FIT_LOGLOG, SCHED_FIT_PAIRWISE };
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		if (k > 0 || order[i] == SCHED_FIT_CONST)
			fit_candidate(f, order[i], s, pts, n, &best);
	f->fit_id++;
	f->stamp = s->est_stamp = ++s->stamp;
	s->fstamp[f - s->fam] = f->stamp;
}

/* Predicted peak (MiB) of an unmeasured shape with features feat, or 0
 * when no model.  p (may be NULL) caches the answer. */
static double family_predict(const sched *s, size_t fi, const double *feat, size_t n_feat,
			     const sched_profile *p)
{
	if (fi == SCHED_NONE)
		return 0;
	const sched_family *f = &s->fam[fi];
	if (f->fit == SCHED_FIT_NONE || n_feat < f->n_feat)
		return 0;
	if (p && p->pred_fit == f->fit_id)
		return p->pred;
	double raw[SCHED_MAX_COEF];
	size_t c = design_row(f->fit, feat, f->n_feat, raw);
	if (c == SCHED_NONE || c + 1 != f->n_coef)
		return 0;
	const double *coef = FAM_COEF(f), *mean = FAM_MEAN(f), *scale = FAM_SCALE(f);
	double v = coef[0];
	for (size_t j = 1; j < f->n_coef; j++)
		v += coef[j] * (raw[j - 1] - mean[j]) / scale[j];
	if (f->fit == SCHED_FIT_LOGLOG)
		v = exp(v);
	if (!(v >= 1))
		v = 1;
	if (p) { /* the cache is logically const: it depends only on the fit */
		sched_profile *mp = (sched_profile *)p;
		mp->pred = v;
		mp->pred_fit = f->fit_id;
	}
	return v;
}

/* ---- reservation ------------------------------------------------------- */

static uint64_t ceil_mib(double v)
{
	if (!(v > 0))
		return 0;
	if (v > 1e15)
		return (uint64_t)1e15;
	return (uint64_t)ceil(v - 1e-9);
}

uint64_t est_host_probe_mib(const sched *s)
{
	const sched_options *o = &s->opt;
	if (!(o->host_probe_share > 0))
		return 0;
	double v = (double)s->idx[CLS_HOST].max_total * o->host_probe_share;
	if (o->host_probe_max_mib && v > (double)o->host_probe_max_mib)
		v = (double)o->host_probe_max_mib;
	if (v < (double)o->host_probe_min_mib)
		v = (double)o->host_probe_min_mib;
	return ceil_mib(v);
}

/* A measured peak over a guess, by hundredths (the last bin: all above). */
static int ratio_bin(uint64_t peak, uint64_t guess)
{
	double r = (double)peak / (double)guess * 100;
	return r < SCHED_HINT_BINS - 1 ? (int)r : SCHED_HINT_BINS - 1;
}

void est_hint_note(sched *s, size_t pi, const sched_request *req, const sched_observation *obs)
{
	if (obs->outcome != SEG_OUT_COMPLETED || obs->no_work || !obs->peak_mem_mib ||
	    !req->mem_hint_mib || s->prof[pi].n_measured)
		return;
	int b = ratio_bin(obs->peak_mem_mib, req->mem_hint_mib);
	s->hint_hist[b] += 1;
	s->hint_n += 1;
	s->hint_lstamp[b] = ++s->learn_stamp;
}

/* The factor on a family-model reservation: 1, or more when the peaks
 * measured so far exceeded such reservations more often than one time in
 * 1 / (1 - family_quantile): that quantile of peak over reservation (the
 * upper edge of its hundredth).  Censoring as for hints: a shape out of
 * memory on its estimate counts with its later, completed peak. */
static double est_family_factor(const sched *s)
{
	if (!(s->opt.family_quantile > 0) || s->fam_n < SCHED_HINT_MIN)
		return 1;
	int b = sched__hist_upper(s->fam_hist, SCHED_HINT_BINS, s->fam_n, s->opt.family_quantile);
	return fmax(1, (b ? b : SCHED_HINT_BINS) / 100.0);
}

void est_family_note(sched *s, size_t pi, const sched_placement *pl, const sched_observation *obs)
{
	sched_profile *p = &s->prof[pi];
	if (p->n_measured)
		return;
	if (pl->basis == SCHED_BASIS_FAMILY && !p->fam_res)
		p->fam_res = pl->mem_mib;
	if (!p->fam_res || obs->outcome != SEG_OUT_COMPLETED || obs->no_work || !obs->peak_mem_mib)
		return;
	double before = est_family_factor(s);
	int b = ratio_bin(obs->peak_mem_mib, p->fam_res);
	s->fam_hist[b] += 1;
	s->fam_n += 1;
	s->fam_lstamp[b] = ++s->learn_stamp;
	if (est_family_factor(s) != before)
		sched__touch_all(s); /* every family estimate moved */
}

/*
 * A hint's reservation factor: 1 + memory_margin, or more when the peaks
 * measured so far say hints are lower than that often: the hint_quantile
 * of peak over hint (the upper edge of its hundredth).  Every shape
 * counts once, with its first completed measurement: a shape whose hint
 * was too low ran out of memory first and completes later with a larger
 * reservation, so its true ratio is in the sample too (a sample of the
 * hint placements that completed would stop at the headroom itself).
 */
static double est_hint_factor(const sched *s)
{
	double f = 1 + s->opt.memory_margin;
	if (!(s->opt.hint_quantile > 0) || s->hint_n < SCHED_HINT_MIN)
		return f;
	int b = sched__hist_upper(s->hint_hist, SCHED_HINT_BINS, s->hint_n, s->opt.hint_quantile);
	return fmax(f, (b ? b : SCHED_HINT_BINS) / 100.0);
}

void est_reserve(const sched *s, const sched_request *req, size_t pi, int cls,
		 sched_mem_estimate *out)
{
	const sched_options *o = &s->opt;
	const sched_profile *p = pi == SCHED_NONE ? NULL : &s->prof[pi];
	double floor_mib = (double)(cls == CLS_HOST ? o->host_memory_floor_mib : o->memory_floor_mib);
	double m = o->memory_margin;
	memset(out, 0, sizeof *out);
	out->basis = SCHED_BASIS_EXCLUSIVE;
	int measured = p && p->n_measured > 0;
	size_t fi = p ? p->fam : sched__map_get(&s->fam_map, req->family, 0);
	double fam_pred = measured ? 0 : family_predict(s, fi, req->feat, req->n_feat, p);

	if (measured)
		out->peak_mib = (double)p->peak;
	else if (fam_pred > 0)
		out->peak_mib = fam_pred;
	else if (req->mem_hint_mib)
		out->peak_mib = (double)req->mem_hint_mib;

	/* Whole devices: the baseline policy, gangs and segments told to run
	 * alone ignore every estimate. */
	if (o->policy == SHARE_EXCLUSIVE || req->exclusive ||
	    (req->n_devices > 1 && !o->share_gangs))
		return;
	if (o->policy == SHARE_RELISH && o->solo_after_s > 0 && req->attained_s >= o->solo_after_s)
		return;

	uint64_t res = 0;
	sched_basis basis = SCHED_BASIS_EXCLUSIVE;
	uint64_t prof_res = measured ? ceil_mib((double)p->peak * (1 + m) + floor_mib) : 0;
	uint64_t fam_res = 0;
	if (fam_pred > 0) {
		const sched_family *f = &s->fam[fi];
		fam_res = ceil_mib((fam_pred * (1 + m) + floor_mib + f->loo_rmse) *
				   est_family_factor(s));
	}
	/* pack believes the user first; relish believes measurements first
	 * (this shape's peak, then the family model fitted on measured shapes
	 * of the same command), and treats a hint as one more estimate: it
	 * gets the same headroom as a measured peak, since users' guesses
	 * are as often a little low as high. */
	if (o->policy == SHARE_PACK && req->mem_hint_mib) {
		res = req->mem_hint_mib;
		basis = SCHED_BASIS_HINT;
	} else if (prof_res) {
		res = prof_res;
		basis = SCHED_BASIS_PROFILE;
	} else if (fam_res) {
		res = fam_res;
		basis = SCHED_BASIS_FAMILY;
	} else if (est_measures_first(s) && req->mem_hint_mib &&
		   (req->n_devices <= 1 || o->policy != SHARE_RELISH || o->gang_probe)) {
		/* (A gang bets on its hint as a single segment does, under
		 * relish only with gang_probe: an out-of-memory loses the
		 * segment on all k devices, but a gang that runs whole until
		 * measured waits for k idle devices, which a full cluster
		 * seldom has; place_is_whole.)
		 * With the headroom it may no longer fit any device: then it
		 * runs alone (whole device) and gets measured.  One segment of
		 * a shape never measured runs on the hint at a time (the
		 * probe); while it runs, the shape's other segments run alone
		 * rather than all bet on the same hint: an HPO burst starts many
		 * trials of one configuration at once, and a low hint would
		 * send every one of them out of memory together (on the Philly
		 * trace this cut relish's out-of-memory events by a third at
		 * the same mean JCT; docs/evaluation.md). */
		if (p && p->run_head != SCHED_NONE)
			return;
		uint64_t h = ceil_mib((double)req->mem_hint_mib * est_hint_factor(s));
		if (h <= s->idx[cls].max_total) {
			res = h;
			basis = SCHED_BASIS_HINT;
		}
	} else if (est_measures_first(s) && cls == CLS_HOST && req->n_devices <= 1 &&
		   !req->mem_hint_mib) {
		/* Nothing known, on the host: a bounded guess (the host's
		 * probe), one segment of the shape at a time, as a hint's.
		 * A GPU's probe stays whole: GPU memory is not swapped nor
		 * shared gracefully, and a GPU job's first guess is far
		 * less often a small part of its device. */
		if (p && p->run_head != SCHED_NONE)
			return;
		uint64_t h = est_host_probe_mib(s);
		if (h && h < s->idx[cls].max_total) {
			res = h;
			basis = SCHED_BASIS_PROBE;
		}
	}
	if (basis == SCHED_BASIS_FAMILY) {
		out->fit = s->fam[fi].fit;
		out->loo_rmse_mib = s->fam[fi].loo_rmse;
	}
	/* An out-of-memory raises every basis, and turns an unknown shape
	 * (which would run alone) into one with a known minimum. */
	uint64_t oom = p ? p->oom_floor : 0;
	if (req->min_mem_mib > oom)
		oom = req->min_mem_mib;
	if (oom > res) {
		res = oom;
		basis = SCHED_BASIS_OOM;
	}
	/* An estimate above every device of the class is no reason to wait
	 * forever, nor to fail: the segment runs alone on a whole device and
	 * is measured there (only a measurement fails a trial, mem.c).  pack
	 * takes a declared figure as it is: larger than every device, it is
	 * placed nowhere (drivers fail it first, sched_never_fits). */
	if (res > s->idx[cls].max_total && basis != SCHED_BASIS_HINT) {
		out->fit = SCHED_FIT_NONE;
		out->loo_rmse_mib = 0;
		return;
	}
	out->reserve_mib = res;
	out->basis = basis;
}

void sched_estimate(const sched *s, const sched_request *req, sched_mem_estimate *out)
{
	est_reserve(s, req, est_profile_find(s, req->shape), sched__req_class(s, req), out);
}

uint64_t sched_estimate_mem(const sched *s, const sched_request *req, sched_basis *basis)
{
	sched_mem_estimate e;
	sched_estimate(s, req, &e);
	if (basis)
		*basis = e.basis;
	return e.reserve_mib;
}

double est_compute(const sched *s, const sched_request *req, size_t pi, const sched_dev *d)
{
	const sched_options *o = &s->opt;
	const sched_profile *p = pi == SCHED_NONE ? NULL : &s->prof[pi];
	double total = d->info.compute_total, c;
	if (est_measures_first(s) && p && p->util >= 0) {
		c = p->util / 100.0 * total;
		if (c < 0.01 * total)
			c = 0.01 * total; /* an idle-looking job still needs a slice */
	} else if (req->compute_hint > 0) {
		c = req->compute_hint;
	} else {
		c = d->cls == CLS_GPU ? o->default_gpu_compute : o->default_compute;
	}
	return c < total ? c : total;
}

double est_util(const sched *s, const sched_request *req, size_t pi, const sched_dev *d)
{
	const sched_profile *p = pi == SCHED_NONE ? NULL : &s->prof[pi];
	if (p && p->util >= 0)
		return p->util;
	if (p && s->fam[p->fam].util_n)
		return s->fam[p->fam].util_sum / (double)s->fam[p->fam].util_n;
	return est_compute(s, req, pi, d) / d->info.compute_total * 100.0;
}

/* ---- learning ---------------------------------------------------------- */

static void family_add_measure(sched *s, size_t pi, int new_shape)
{
	sched_family *f = &s->fam[s->prof[pi].fam];
	if (new_shape) {
		if (sched__grow((void **)&f->shapes, &f->cap_shapes, f->n_shapes + 1,
			       sizeof *f->shapes))
			return; /* the model just misses one point */
		f->shapes[f->n_shapes++] = pi;
	}
	f->since_fit++;
	if (f->n_shapes < FIT_EAGER || f->since_fit * 8 >= f->n_shapes)
		family_fit(s, f);
}

/* Mark profile pi's estimate changed (and its dense copy). */
static void prof_stamp(sched *s, size_t pi)
{
	s->prof[pi].stamp = s->est_stamp = ++s->stamp;
	s->pstamp[pi].stamp = s->prof[pi].stamp;
}

/*
 * A running shape never measured to completion has its family's mean
 * utilisation as its own (est_util), so when that mean moves, the devices
 * it runs on judge candidates differently although nothing started or
 * stopped there: their refusals must be re-opened, or a device that
 * refused a candidate beside the default 100 % keeps refusing it after
 * the family turns out to use 10 %.  Each family lists such shapes.
 */
static void guess_set(sched *s, size_t pi)
{
	sched_profile *p = &s->prof[pi];
	int want = est_measures_first(s) && p->util < 0 && p->run_head != SCHED_NONE;
	if (want == p->on_guess)
		return;
	sched_family *f = &s->fam[p->fam];
	if (want) {
		p->guess_prev = SCHED_NONE;
		p->guess_next = f->guess_head;
		if (f->guess_head != SCHED_NONE)
			s->prof[f->guess_head].guess_prev = pi;
		f->guess_head = pi;
	} else {
		if (p->guess_prev != SCHED_NONE)
			s->prof[p->guess_prev].guess_next = p->guess_next;
		else
			f->guess_head = p->guess_next;
		if (p->guess_next != SCHED_NONE)
			s->prof[p->guess_next].guess_prev = p->guess_prev;
		p->guess_prev = p->guess_next = SCHED_NONE;
	}
	p->on_guess = want;
}

/* Family fi's mean utilisation changed; when materially (as for one
 * shape, UTIL_RESTAMP points since the last time), stamp the family (its
 * queued shapes' refusals are re-examined) and touch the devices of its
 * running shapes that use the mean. */
static void family_util_moved(sched *s, size_t fi)
{
	sched_family *f = &s->fam[fi];
	double mean = f->util_n ? f->util_sum / (double)f->util_n : -1;
	if (mean < 0 || (f->util_stamped >= 0 && fabs(mean - f->util_stamped) < UTIL_RESTAMP))
		return;
	f->util_stamped = mean;
	f->stamp = s->est_stamp = ++s->stamp;
	s->fstamp[fi] = f->stamp;
	for (size_t pi = f->guess_head; pi != SCHED_NONE; pi = s->prof[pi].guess_next)
		sched__touch_prof(s, pi);
}

void est_running_changed(sched *s, size_t pi)
{
	/* Only a shape never measured reserves by whether it runs (its
	 * probe, est_reserve); only relish has probes. */
	if (est_measures_first(s) && !s->prof[pi].n_measured)
		prof_stamp(s, pi);
	guess_set(s, pi);
}

/* ---- a group's throughput alone ------------------------------------------ */

/* The group's shapes measured alone agree when their first throughputs
 * span at most this much of the lowest: a shape of the group is then
 * taken to run as fast as their mean.  HPO trials of one command differ
 * by a learning rate or a seed, which move no step's time; a group whose
 * shapes differ in speed (a batch size, a width) disagrees, and lends
 * nothing. */
#define GROUP_THR_SPAN 0.10

static void gspeed_note(sched *s, uint64_t group, double thr)
{
	if (!(thr > 0) || !isfinite(thr))
		return;
	size_t i = sched__map_get(&s->gspeed_map, group, 0);
	if (i == SCHED_NONE) {
		if (sched__grow((void **)&s->gspeed, &s->cap_gspeed, s->n_gspeed + 1,
				sizeof *s->gspeed) ||
		    sched__map_put(&s->gspeed_map, group, 0, s->n_gspeed))
			return; /* without memory the group lends nothing */
		i = s->n_gspeed++;
		s->gspeed[i] = (sched_gspeed){.group = group, .lo = thr, .hi = thr};
	}
	sched_gspeed *g = &s->gspeed[i];
	g->n++;
	g->sum += thr;
	if (thr < g->lo)
		g->lo = thr;
	if (thr > g->hi)
		g->hi = thr;
}

double est_thr_alone(const sched *s, size_t pi)
{
	const sched_profile *p = &s->prof[pi];
	if (p->thr_alone > 0 || !p->group)
		return p->thr_alone;
	size_t i = sched__map_get(&s->gspeed_map, p->group, 0);
	if (i == SCHED_NONE)
		return 0;
	const sched_gspeed *g = &s->gspeed[i];
	return g->n >= 2 && g->hi <= g->lo * (1 + GROUP_THR_SPAN) ? g->sum / (double)g->n : 0;
}

void est_observe(sched *s, size_t pi, const sched_observation *obs, int company,
		 uint64_t reserved_mib)
{
	sched_profile *p = &s->prof[pi];
	if (obs->outcome == SEG_OUT_OOM) {
		/* The peak seen at death is a lower bound; the segment needed
		 * more than it had: the memory policy's floor (mem.c). */
		uint64_t need = mem_oom_need(s, obs->peak_mem_mib, reserved_mib);
		if (need > p->oom_floor)
			p->oom_floor = need;
		prof_stamp(s, pi);
		return;
	}
	/* A segment that ended before doing any work (an import error, a
	 * bad argument) measured the interpreter, not the trial: counted as
	 * the shape's peak, three failed starts at 10 MiB gave the fixed
	 * script a family estimate of 25 MiB and a stop over its
	 * reservation at 111 MiB (issue 30, item 8). */
	if (obs->no_work)
		return;
	if (obs->peak_mem_mib > 0) {
		int new_shape = p->n_measured == 0;
		p->n_measured++;
		if (obs->peak_mem_mib > p->peak || new_shape) {
			if (obs->peak_mem_mib > p->peak)
				p->peak = obs->peak_mem_mib;
			prof_stamp(s, pi);
			family_add_measure(s, pi, new_shape);
		}
	}
	if (obs->outcome != SEG_OUT_COMPLETED)
		return;
	if (obs->mean_util >= 0 && isfinite(obs->mean_util)) {
		sched_family *f = &s->fam[p->fam];
		int first = p->util < 0;
		if (first) {
			p->util = obs->mean_util;
			guess_set(s, pi); /* its own figure from now on */
		} else {
			f->util_sum -= p->util;
			f->util_n--;
			p->util = sched_ewma(p->util, obs->mean_util);
		}
		/* Only a material change (UTIL_RESTAMP points since the last
		 * one) reopens the shape's refusals: the EWMA of a steady job
		 * creeps forever, and each creep would cost a rescan of every
		 * device for every queued segment of the shape. */
		if (first || fabs(p->util - p->util_stamped) >= UTIL_RESTAMP) {
			p->util_stamped = p->util;
			prof_stamp(s, pi);
		}
		f->util_sum += p->util;
		f->util_n++;
		family_util_moved(s, p->fam);
	}
	if (company != EST_UNTIMED && obs->work > 0 && obs->duration_s > 0) {
		double thr = obs->work / obs->duration_s;
		if (company == EST_ALONE) {
			if (!p->n_alone && p->group)
				gspeed_note(s, p->group, thr);
			p->thr_alone = p->n_alone ? sched_ewma(p->thr_alone, thr) : thr;
			p->n_alone++;
		} else {
			p->thr_shared = p->n_shared ? sched_ewma(p->thr_shared, thr) : thr;
			p->n_shared++;
		}
	}
}

void sched_learn(sched *s, const sched_request *req, const sched_observation *obs)
{
	size_t pi = est_profile_ensure(s, req);
	if (pi == SCHED_NONE || !obs)
		return;
	est_hint_note(s, pi, req, obs);
	est_observe(s, pi, obs, EST_ALONE, 0);
	sched__touch_all(s); /* what was rejected may fit now */
}

void sched_shape_import(sched *s, const sched_request *req, const sched_shape_info *in)
{
	size_t pi = est_profile_ensure(s, req);
	if (pi == SCHED_NONE || !in || !in->peak_mib)
		return;
	/* One observation teaches the estimator (the peak, the family's
	 * point, the utilisation), then the counts are the stored ones. */
	sched_observation o = {
		.outcome = SEG_OUT_COMPLETED, .peak_mem_mib = in->peak_mib,
		.mean_util = in->util, .work = in->thr_alone > 0 ? in->thr_alone : 0,
		.duration_s = in->thr_alone > 0 ? 1 : 0,
	};
	est_observe(s, pi, &o, EST_ALONE, 0);
	sched_profile *p = &s->prof[pi];
	if (in->n_measured > p->n_measured)
		p->n_measured = in->n_measured;
	if (in->thr_shared > 0) {
		p->thr_shared = in->thr_shared;
		p->n_shared = in->n_shared ? in->n_shared : 1;
	}
	sched__touch_all(s); /* what was rejected may fit now */
}

int sched_family_fit(const sched *s, uint64_t family, sched_fit *fit, size_t *n_points,
		     double *loo_rmse_mib)
{
	size_t fi = sched__map_get(&s->fam_map, family, 0);
	if (fi == SCHED_NONE || s->fam[fi].fit == SCHED_FIT_NONE)
		return RL_ENOTFOUND;
	if (fit)
		*fit = s->fam[fi].fit;
	if (n_points)
		*n_points = s->fam[fi].n_points;
	if (loo_rmse_mib)
		*loo_rmse_mib = s->fam[fi].loo_rmse;
	return 0;
}

int sched_shape_get(const sched *s, uint64_t shape, sched_shape_info *out)
{
	size_t pi = est_profile_find(s, shape);
	if (pi == SCHED_NONE)
		return RL_ENOTFOUND;
	const sched_profile *p = &s->prof[pi];
	out->n_measured = p->n_measured;
	out->peak_mib = p->peak;
	out->oom_floor_mib = p->oom_floor;
	out->util = p->util;
	out->thr_alone = p->thr_alone;
	out->n_alone = p->n_alone;
	out->thr_shared = p->thr_shared;
	out->n_shared = p->n_shared;
	return 0;
}

void est_forget(sched *s, const size_t *remap)
{
	size_t n_old = s->n_prof, w = 0;
	/* the map first loses the forgotten, so that moving the others
	 * overwrites keys it holds and never grows it (no failure here) */
	for (size_t i = 0; i < n_old; i++)
		if (remap[i] == SCHED_NONE)
			sched__map_del(&s->prof_map, s->prof[i].shape, 0);
	for (size_t i = 0; i < n_old; i++) {
		if (remap[i] == SCHED_NONE)
			continue;
		if (w != i) {
			s->prof[w] = s->prof[i];
			s->pstamp[w] = s->pstamp[i];
			(void)sched__map_put(&s->prof_map, s->prof[w].shape, 0, w);
		}
		sched_profile *p = &s->prof[w];
		/* only running shapes are on a guess list, and they stay */
		if (p->guess_prev != SCHED_NONE)
			p->guess_prev = remap[p->guess_prev];
		if (p->guess_next != SCHED_NONE)
			p->guess_next = remap[p->guess_next];
		w++;
	}
	s->n_prof = w;
	for (size_t fi = 0; fi < s->n_fam; fi++) {
		sched_family *f = &s->fam[fi];
		size_t k = 0;
		for (size_t j = 0; j < f->n_shapes; j++)
			if (remap[f->shapes[j]] != SCHED_NONE)
				f->shapes[k++] = remap[f->shapes[j]];
		f->n_shapes = k;
		if (f->guess_head != SCHED_NONE)
			f->guess_head = remap[f->guess_head];
	}
}

void est_fini(sched *s)
{
	for (size_t i = 0; i < s->n_fam; i++) {
		free(s->fam[i].shapes);
		free(s->fam[i].model);
	}
	free(s->fam);
	free(s->prof);
	free(s->pstamp);
	free(s->fstamp);
	free(s->gspeed);
	sched__map_fini(&s->gspeed_map);
	sched__map_fini(&s->fam_map);
	sched__map_fini(&s->prof_map);
}
