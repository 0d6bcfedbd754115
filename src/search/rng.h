/*
 * rng.h - a small, seedable, portable random generator (xoshiro256**,
 * seeded through splitmix64).  Samplers own one each so that a seed fixes
 * every draw on every platform; libc's rand() is neither portable nor
 * re-entrant.
 */
#ifndef RELISH_RNG_H
#define RELISH_RNG_H

#include <stdint.h>

typedef struct rl_rng {
	uint64_t s[4];
} rl_rng;

void rng_seed(rl_rng *r, uint64_t seed);
uint64_t rng_next(rl_rng *r);
/* Uniform double in [0, 1). */
double rng_uniform(rl_rng *r);
/* Uniform integer in [0, n); n > 0. */
uint64_t rng_below(rl_rng *r, uint64_t n);
/* Standard normal (Box-Muller, no caching, so state stays one word set). */
double rng_normal(rl_rng *r);
/* Mix several words into one seed (for per-trial streams). */
uint64_t rng_mix(uint64_t a, uint64_t b);

#endif
