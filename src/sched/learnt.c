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
 *
 * And what the core forgets: past learn_max shapes, the least recently
 * used with their pairs (learnt_forget), so that its memory is bounded
 * however long a service runs.
 */
#include "sched/sched_int.h"

#include "common/waterfill.h"

#include <math.h>
#include <stdlib.h>
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

/* ---- forgetting: a bounded memory for a service that never restarts ---- */

typedef struct use_rank {
	uint64_t used;
	size_t pi;
} use_rank;

static int newest_first(const void *x, const void *y)
{
	const use_rank *a = x, *b = y;
	return a->used < b->used ? 1 : a->used > b->used ? -1 : 0;
}

size_t learnt_forget_at(const sched *s)
{
	/* an eighth more than learn_max, or than the last forgetting kept
	 * (more when segments held more shapes), so that the sort is paid
	 * once per learn_max / 8 new shapes, never once per shape */
	size_t base = s->forget_kept > s->opt.learn_max ? s->forget_kept : s->opt.learn_max;
	return base + s->opt.learn_max / 8 + 1;
}

/*
 * Keep the learn_max shapes used last (and every shape a segment the core
 * holds has, however many: a queued or running segment reads its profile)
 * and forget the others with their pairs and exploration counts.  An HPO
 * service makes a new shape of nearly every trial (a learning rate is in
 * the shape), so without this its model grows for as long as it runs.
 * What is forgotten is what a shape never seen before starts from: its
 * family's model, its group's pairs (groups and families are kept: they
 * are as many as the commands), the histograms.  Called by
 * est_profile_ensure before a new shape once the core holds an eighth more
 * than learn_max (learnt_forget_at).  Without memory nothing is forgotten
 * this time.
 *
 * The shapes kept are shared among the users who last used them, so that
 * one user making new shapes by the thousand (a sweep over a seed, or an
 * attack on what the others' experiments learnt) forgets its own oldest,
 * not another user's few: each user keeps its newest up to its share
 * (rl_waterfill; a held shape counts in its user's share), and the
 * shares' rounding leaves slots that go to the newest of the rest.  With
 * one user, this is learn_max newest.
 */
void learnt_forget(sched *s)
{
	size_t n = s->n_prof, want = s->opt.learn_max, kept = 0, n_users = 0;
	unsigned char *keep = calloc(n ? n : 1, 1);
	use_rank *rank = malloc((n ? n : 1) * sizeof *rank);
	size_t *remap = malloc((n ? n : 1) * sizeof *remap);
	/* per profile its user (in order of first appearance); per user its
	 * shapes, its share of those kept and how many of them are kept */
	size_t *uix = malloc((n ? n : 1) * sizeof *uix);
	size_t *cnt = calloc(n ? n : 1, sizeof *cnt), *share = malloc((n ? n : 1) * sizeof *share);
	size_t *ukept = calloc(n ? n : 1, sizeof *ukept);
	sched_map gone = {0}, users = {0};
	if (!keep || !rank || !remap || !uix || !cnt || !share || !ukept)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t k = sched__map_get(&users, s->prof[i].user, 0);
		if (k == SCHED_NONE) {
			k = n_users++;
			if (sched__map_put(&users, s->prof[i].user, 0, k))
				goto out;
		}
		uix[i] = k;
		cnt[k]++;
	}
	rl_waterfill(cnt, n_users, want, share);
	kept = sched__held_profiles(s, keep);
	for (size_t i = 0; i < n; i++)
		ukept[uix[i]] += keep[i];
	for (size_t i = 0; i < n; i++)
		rank[i] = (use_rank){s->prof[i].used, i};
	qsort(rank, n, sizeof *rank, newest_first);
	for (size_t r = 0; r < n && kept < want; r++) {
		size_t pi = rank[r].pi;
		if (!keep[pi] && ukept[uix[pi]] < share[uix[pi]]) {
			keep[pi] = 1;
			ukept[uix[pi]]++;
			kept++;
		}
	}
	for (size_t r = 0; r < n && kept < want; r++)
		if (!keep[rank[r].pi]) {
			keep[rank[r].pi] = 1;
			kept++;
		}
	s->forget_kept = kept;
	if (kept == n)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (!keep[i] && sched__map_put(&gone, s->prof[i].shape, 0, 1))
			goto out; /* without memory: nothing forgotten */
	for (size_t i = 0, w = 0; i < n; i++)
		remap[i] = keep[i] ? w++ : SCHED_NONE;
	est_forget(s, remap);
	spread_forget(s, remap, n);
	sched__remap_prof(s, remap);
	colo_forget(s, &gone);
	s->work.forgotten += n - kept;
	/* refusals were decided with pairs now gone, and the window of newest
	 * shapes (colocate.c's groups) moved: every queued segment looks again */
	sched__touch_all(s);
out:
	sched__map_fini(&gone);
	sched__map_fini(&users);
	free(uix);
	free(cnt);
	free(share);
	free(ukept);
	free(keep);
	free(rank);
	free(remap);
}
