/*
 * sobol.c - scrambled Sobol quasi-random sampling.
 *
 * Sobol points fill the unit cube far more evenly than independent uniform
 * draws: the first 2^m points of each pair of dimensions put exactly the same
 * number of points into every dyadic box of volume 2^-m' (m' <= m - t).  Each
 * parameter takes one dimension; values go through space_from_unit like every
 * other sampler.
 *
 * Point `index` is computed directly (Gray-code order, the standard Sobol
 * sequence order), so ask(index) does not depend on earlier asks.
 *
 * Scrambling (so that different seeds give different, equally good point
 * sets): a random linear matrix scramble plus a random digital shift
 * (Matousek 1998).  Output digit k is input digit k xor a random combination
 * of the more significant input digits, then xor a random bit.  The map is a
 * bijection on every prefix of digits, so the stratification of the
 * unscrambled net is kept exactly; since it is linear over GF(2) it is applied
 * once to the direction numbers at construction.
 *
 * Direction numbers: the primitive polynomials and initial values m_i of Joe
 * and Kuo (2008, "new-joe-kuo-6.21201"), dimensions 2-21 below; dimension 1 is
 * the van der Corput sequence.  The generated points were checked against an
 * independent implementation (SciPy's unscrambled Sobol) for all 21 dimensions.
 */
#include "search/rng.h"
#include "search/sampler.h"

#include <stdlib.h>

#define SOBOL_BITS 64
#define SOBOL_MAX_M 7

/* One row per dimension from the second on: degree s of the primitive
 * polynomial, its coefficient bits a, and the s initial odd integers m_i. */
static const struct {
	int s;
	unsigned a;
	unsigned m[SOBOL_MAX_M];
} sobol_table[] = {
	{1, 0, {1}},
	{2, 1, {1, 3}},
	{3, 1, {1, 3, 1}},
	{3, 2, {1, 1, 1}},
	{4, 1, {1, 1, 3, 3}},
	{4, 4, {1, 3, 5, 13}},
	{5, 2, {1, 1, 5, 5, 17}},
	{5, 4, {1, 1, 5, 5, 5}},
	{5, 7, {1, 1, 7, 11, 19}},
	{5, 11, {1, 1, 5, 1, 1}},
	{5, 13, {1, 1, 1, 3, 11}},
	{5, 14, {1, 3, 5, 5, 31}},
	{6, 1, {1, 3, 3, 9, 7, 49}},
	{6, 13, {1, 1, 1, 15, 21, 21}},
	{6, 16, {1, 3, 1, 13, 27, 49}},
	{6, 19, {1, 1, 1, 15, 7, 5}},
	{6, 22, {1, 3, 1, 15, 13, 25}},
	{6, 25, {1, 1, 5, 5, 19, 61}},
	{7, 1, {1, 3, 7, 11, 23, 15, 103}},
	{7, 4, {1, 3, 7, 13, 13, 15, 69}},
};

#define SOBOL_MAX_DIMS (1 + sizeof sobol_table / sizeof sobol_table[0])

typedef struct sobol_sampler {
	sampler base;
	size_t dims;
	uint64_t (*v)[SOBOL_BITS]; /* scrambled direction numbers, dims rows */
	uint64_t *shift;           /* digital shift per dimension */
} sobol_sampler;

/* Unscrambled direction numbers of dimension d (0-based); bit 63 is the
 * first binary digit after the point. */
static void sobol_directions(size_t d, uint64_t v[SOBOL_BITS])
{
	if (d == 0) {
		for (int i = 0; i < SOBOL_BITS; i++)
			v[i] = 1ULL << (SOBOL_BITS - 1 - i);
		return;
	}
	int s = sobol_table[d - 1].s;
	unsigned a = sobol_table[d - 1].a;
	for (int i = 0; i < SOBOL_BITS; i++) {
		if (i < s) {
			v[i] = (uint64_t)sobol_table[d - 1].m[i] << (SOBOL_BITS - 1 - i);
			continue;
		}
		/* v_i = a_1 v_{i-1} ^ ... ^ a_{s-1} v_{i-s+1} ^ v_{i-s} ^ (v_{i-s} >> s) */
		uint64_t x = v[i - s] ^ (v[i - s] >> s);
		for (int k = 1; k < s; k++)
			if ((a >> (s - 1 - k)) & 1)
				x ^= v[i - k];
		v[i] = x;
	}
}

/* Apply the lower-triangular scramble: output digit k (bit 63 - k) is the
 * parity of row[k] & x, where row[k] has digit k set and random more
 * significant digits. */
static uint64_t scramble(const uint64_t row[SOBOL_BITS], uint64_t x)
{
	uint64_t y = 0;
	for (int k = 0; k < SOBOL_BITS; k++)
		y |= (uint64_t)__builtin_parityll(row[k] & x) << (SOBOL_BITS - 1 - k);
	return y;
}

static int sobol_ask(sampler *s, uint64_t index, config *out, rl_err *err)
{
	sobol_sampler *q = (sobol_sampler *)s;
	uint64_t gray = index ^ (index >> 1);
	config c;
	if (config_init(&c, s->space->n, err) < 0)
		return RL_ENOMEM;
	for (size_t d = 0; d < q->dims; d++) {
		uint64_t x = q->shift[d];
		for (int i = 0; i < SOBOL_BITS && (gray >> i); i++)
			if ((gray >> i) & 1)
				x ^= q->v[d][i];
		double u = (double)(x >> 11) * 0x1.0p-53; /* [0, 1) */
		if (!space_active(s->space, d, &c))
			continue; /* inactive: VAL_NONE (its dimension unused) */
		int rc = space_from_unit(&s->space->params[d], u, &c.v[d], err);
		if (rc < 0) {
			config_fini(&c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

static int sobol_tell(sampler *s, uint64_t index, const config *c, double loss, double resource,
		      obs_state state, rl_err *err)
{
	return 0; /* the sequence is fixed in advance */
}

static void sobol_destroy(sampler *s)
{
	sobol_sampler *q = (sobol_sampler *)s;
	if (!q)
		return;
	free(q->v);
	free(q->shift);
	free(q);
}

static const sampler_ops sobol_ops = {
	.name = "sobol",
	.ask = sobol_ask,
	.tell = sobol_tell,
	.destroy = sobol_destroy,
	.tell_multi = sampler_tell_multi_ignore,
};

int sampler_sobol_new(const space *sp, uint64_t seed, const sampler_options *opt, sampler **out,
		      rl_err *err)
{
	if (sp->n > SOBOL_MAX_DIMS)
		return rl_err_set(err, RL_EUNSUPPORTED,
				  "sobol: the space has %zu parameters; at most %zu are supported",
				  sp->n, (size_t)SOBOL_MAX_DIMS);
	sobol_sampler *q = calloc(1, sizeof *q);
	if (!q)
		return rl_err_set(err, RL_ENOMEM, "creating sobol sampler");
	q->base.ops = &sobol_ops;
	q->base.space = sp;
	q->base.seed = seed;
	q->dims = sp->n;
	if (sp->n) {
		q->v = calloc(sp->n, sizeof *q->v);
		q->shift = calloc(sp->n, sizeof *q->shift);
		if (!q->v || !q->shift) {
			sobol_destroy(&q->base);
			return rl_err_set(err, RL_ENOMEM, "creating sobol sampler");
		}
	}
	for (size_t d = 0; d < q->dims; d++) {
		rl_rng rng;
		rng_seed(&rng, rng_stream_seed(seed, 0x736f626f6c000000ULL + d)); /* "sobol" + d */
		uint64_t row[SOBOL_BITS];
		for (int k = 0; k < SOBOL_BITS; k++) {
			/* digit k itself plus random more significant digits */
			uint64_t self = 1ULL << (SOBOL_BITS - 1 - k);
			uint64_t above = k ? ~((1ULL << (SOBOL_BITS - k)) - 1) : 0;
			row[k] = self | (rng_next(&rng) & above);
		}
		uint64_t raw[SOBOL_BITS];
		sobol_directions(d, raw);
		for (int i = 0; i < SOBOL_BITS; i++)
			q->v[d][i] = scramble(row, raw[i]);
		q->shift[d] = rng_next(&rng);
	}
	*out = &q->base;
	return 0;
}
