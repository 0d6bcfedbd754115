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
/*
 * The seed of stream `index` of a run seeded with `seed` (trial k of a
 * sampler, dimension d of a scramble): full avalanche in both words (each
 * input bit flips each output bit with probability ~1/2), distinct for
 * every index of one seed, and unrelated across seeds, neighbouring ones
 * included (tests/test_rng.c).  Samplers seed every stream through this.
 */
uint64_t rng_stream_seed(uint64_t seed, uint64_t index);
/*
 * Combine two words that are already hashes into one (the simulator's
 * identities).  Not for seeds and indices: it is nearly linear in small
 * inputs, so (a + 1, b) and (a, b + 63) often give the same word.
 */
uint64_t rng_mix(uint64_t a, uint64_t b);

#endif
