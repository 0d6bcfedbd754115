/*
 * rng.c - xoshiro256** with splitmix64 seeding (public-domain algorithms by
 * Blackman and Vigna, written here from their description).
 */
#include "search/rng.h"

#include <math.h>

/* splitmix64's output function (Stafford's "Mix13" constants): a bijection
 * of 64-bit words in which every input bit flips every output bit with
 * probability close to 1/2. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x)
{
	return mix64(*x += 0x9e3779b97f4a7c15ULL);
}

void rng_seed(rl_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(rl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_uniform(rl_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

uint64_t rng_below(rl_rng *r, uint64_t n)
{
	/* Rejection keeps the draw unbiased for any n. */
	uint64_t limit = UINT64_MAX - UINT64_MAX % n;
	uint64_t x;
	do
		x = rng_next(r);
	while (x >= limit);
	return x % n;
}

double rng_normal(rl_rng *r)
{
	double u1 = rng_uniform(r);
	double u2 = rng_uniform(r);
	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/*
 * The seed is mixed on its own before the index joins it, so that no
 * arithmetic relation between two seeds carries over into their streams:
 * stream(s, k) = mix64(mix64(s + C1) + (k + 1) * C2), C2 odd.  For one seed
 * the map k -> stream is a bijection (multiplying by an odd number, adding
 * and mix64 all are), so a seed's trials never share a stream; two seeds
 * share one only when mix64(s + C1) - mix64(s' + C1) happens to be a small
 * multiple of C2, a 2^-64 event per pair of indices.
 */
uint64_t rng_stream_seed(uint64_t seed, uint64_t index)
{
	uint64_t a = mix64(seed + 0x9e3779b97f4a7c15ULL);
	return mix64(a + (index + 1) * 0xd1b54a32d192ed03ULL);
}

uint64_t rng_mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
	return splitmix64(&x);
}
