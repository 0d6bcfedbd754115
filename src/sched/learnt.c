/*
 * learnt.c - what the core learnt beyond shapes, as rows a driver keeps
 * across restarts (sched.h, "What the core learnt beyond shapes"): the
 * measured pairs, pairs of groups and exploration counts (colocate.c lists
 * and takes back its own records) and the bins of the three histograms
 * (the hint's and the family model's headroom, estimate.c; the tail of
 * LAS, sched.c).
 *
 * Changes are found by stamp, not by a list of dirty records: every change
 * takes the next learn_stamp, and a listing scans the records for stamps
 * after the one asked.  The simulator, which never lists, pays a word per
 * record and nothing per change; a live driver lists after each segment
 * end, where a scan of its pairs (hundreds to thousands) is small beside
 * the store's transaction it goes into.
 *
 * A row given back is checked against what a core could have listed, so
 * that a damaged store cannot put a speed above 1 or a negative count into
 * the model (colocate.c's properties need interferences in [0, 100]).
 */
#include "sched/sched_int.h"

#include <math.h>
#include <string.h>

static const char *const kind_names[SCHED_LEARNT__COUNT] = {
	[SCHED_LEARNT_PAIR] = "pair",     [SCHED_LEARNT_GROUPS] = "groups",
	[SCHED_LEARNT_EXPLORED] = "explored", [SCHED_LEARNT_HINT] = "hint",
	[SCHED_LEARNT_FAMILY] = "family", [SCHED_LEARNT_LAS] = "las",
};

const char *sched_learnt_kind_name(sched_learnt_kind k)
{
	return (unsigned)k < SCHED_LEARNT__COUNT ? kind_names[k] : "unknown";
}

int sched_learnt_kind_parse(const char *name, sched_learnt_kind *out)
{
	for (int k = 0; k < SCHED_LEARNT__COUNT; k++)
		if (name && !strcmp(name, kind_names[k])) {
			*out = (sched_learnt_kind)k;
			return 0;
		}
	return RL_EINVAL;
}

/* A histogram of s by kind: its bins, their count, its total and the bins'
 * stamps. */
typedef struct hist_ref {
	double *bins;
	int n_bins;
	double *total;
	uint64_t *lstamp;
} hist_ref;

static hist_ref hist_of(sched *s, sched_learnt_kind k)
{
	switch (k) {
	case SCHED_LEARNT_HINT:
		return (hist_ref){s->hint_hist, SCHED_HINT_BINS, &s->hint_n, s->hint_lstamp};
	case SCHED_LEARNT_FAMILY:
		return (hist_ref){s->fam_hist, SCHED_HINT_BINS, &s->fam_n, s->fam_lstamp};
	case SCHED_LEARNT_LAS:
		return (hist_ref){s->las_hist, SCHED_LAS_BINS, &s->las_n, s->las_lstamp};
	default:
		return (hist_ref){0};
	}
}

size_t sched_learnt_list(const sched *s, uint64_t since, sched_learnt *out, size_t max,
			 uint64_t *next)
{
	size_t n = colo_learnt_list(s, since, out, max);
	for (int k = SCHED_LEARNT_HINT; k <= SCHED_LEARNT_LAS; k++) {
		hist_ref h = hist_of((sched *)s, (sched_learnt_kind)k);
		for (int b = 0; b < h.n_bins; b++) {
			if (h.lstamp[b] <= since)
				continue;
			if (n < max)
				out[n] = (sched_learnt){.kind = (sched_learnt_kind)k, .a = (uint64_t)b,
							.n = h.bins[b]};
			n++;
		}
	}
	if (next && n <= max)
		*next = s->learn_stamp;
	return n;
}

static int finite_in(double v, double lo, double hi)
{
	return isfinite(v) && v >= lo && v <= hi;
}

int sched_learnt_import(sched *s, const sched_learnt *row, rl_err *err)
{
	/* colocate.c keeps interferences in [0, 100] (pair_update), and
	 * speeds are 1 / (1 + d) */
	const double dmax = 100, smin = 1 / (1 + dmax);
	switch (row->kind) {
	case SCHED_LEARNT_PAIR:
		if (!finite_in(row->n, 1, 1e15) || !finite_in(row->d, 0, dmax))
			return rl_err_set(err, RL_EINVAL,
					  "a learnt pair needs n >= 1 and an interference in "
					  "[0, 100], got n %g, d %g", row->n, row->d);
		break;
	case SCHED_LEARNT_GROUPS:
		if (!finite_in(row->n, 1, 1e15) || !finite_in(row->d_max, 0, dmax) ||
		    !finite_in(row->d, 0, row->d_max) || !finite_in(row->s_min, smin, 1) ||
		    !finite_in(row->s_max, row->s_min, 1))
			return rl_err_set(err, RL_EINVAL,
					  "learnt groups need n >= 1, 0 <= d <= d_max <= 100 and "
					  "1/101 <= s_min <= s_max <= 1, got n %g, d %g, d_max %g, "
					  "s_min %g, s_max %g", row->n, row->d, row->d_max,
					  row->s_min, row->s_max);
		break;
	case SCHED_LEARNT_EXPLORED:
		if (!finite_in(row->n, 1, 1e15) || row->a > row->b)
			return rl_err_set(err, RL_EINVAL,
					  "a learnt exploration count needs n >= 1 and shapes in "
					  "order, got n %g", row->n);
		break;
	case SCHED_LEARNT_HINT:
	case SCHED_LEARNT_FAMILY:
	case SCHED_LEARNT_LAS: {
		hist_ref h = hist_of(s, row->kind);
		if (row->a >= (uint64_t)h.n_bins || row->b || !finite_in(row->n, 0, 1e15))
			return rl_err_set(err, RL_EINVAL,
					  "a learnt %s bin needs a bin below %d and a count >= 0, "
					  "got bin %llu (%llu), count %g",
					  kind_names[row->kind], h.n_bins, (unsigned long long)row->a,
					  (unsigned long long)row->b, row->n);
		/* the quantiles the bins feed move: every estimate and order
		 * key that reads them may change */
		*h.total += row->n - h.bins[row->a];
		h.bins[row->a] = row->n;
		h.lstamp[row->a] = 0;
		sched__touch_all(s);
		return 0;
	}
	default:
		return rl_err_set(err, RL_EINVAL, "unknown kind of learnt row %d", (int)row->kind);
	}
	if (colo_learnt_import(s, row) < 0)
		return rl_err_set(err, RL_ENOMEM, "giving back a learnt %s",
				  kind_names[row->kind]);
	return 0;
}
