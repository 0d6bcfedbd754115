/*
 * tpe_math.h - the exponential used by TPE's kernel sums (private to
 * src/search; tests/test_tpe.c checks it against libm).
 *
 * Evaluating g(x) means one exp() per kernel near x: at 1,000 trials that is
 * tens of thousands of calls per ask, and libm's exp (a call plus its
 * errno/overflow checks) was three quarters of the sampler's time.  This
 * inline version handles only what the kernels need, arguments in
 * [-700, 0], and is branch-free so the compiler can vectorise it: 2^k by
 * building the exponent bits, e^r on |r| <= ln2/2 by a degree-12 Taylor
 * polynomial (truncation error below 2e-16 relative).  It has no clamp: a
 * compare in the loop stops GCC from vectorising under the default
 * -ftrapping-math, and the callers' windows already bound the argument (TPE
 * evaluates kernels within 16 bandwidths, so arguments stay above -128).
 */
#ifndef RELISH_TPE_MATH_H
#define RELISH_TPE_MATH_H

#include <stdint.h>

/*
 * TPE_CLONES: build a kernel loop for AVX-512, AVX2 and baseline x86-64 and
 * pick one at load time (GCC's function clones).  The clones differ in ISA
 * only, never in -march: GCC inlines a function into a clone only when the
 * clone's architecture equals the function's, and a clone for
 * "arch=haswell" (as these loops were once built) could not inline
 * tpe_exp_neg, so on CPUs that select it every kernel paid a call and
 * nothing vectorised.  The build's ISO C mode keeps floating-point
 * contraction off (no FMA is formed), so every clone computes the same
 * bits.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TPE_CLONES \
	__attribute__((target_clones("avx512f", "avx2", "default"), optimize("no-trapping-math")))
#else
#define TPE_CLONES
#endif

/* e^x for -700 <= x <= 0 (outside: garbage), relative error a few 1e-16.
 * Always inlined: the TPE_CLONES loops are built with options of their own,
 * and GCC does not inline a plain inline function into a function whose
 * options differ. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline double tpe_exp_neg(double x)
{
	const double log2e = 1.4426950408889634;
	const double ln2_hi = 0.6931471805598903; /* ln 2 split so k * ln2_hi is exact */
	const double ln2_lo = 5.497923018708371e-14;
	const double shifter = 0x1.8p52; /* adding it rounds to an integer */
	union {
		double d;
		uint64_t u;
	} t, scale;
	t.d = x * log2e + shifter;
	double k = t.d - shifter;
	double r = (x - k * ln2_hi) - k * ln2_lo;
	double p = 1.0 / 479001600.0;
	p = p * r + 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	/* t's low mantissa bits hold k (t = 1.5 * 2^52 + k), so adding the
	 * exponent bias and shifting into place yields the bits of 2^k; the
	 * shifter's own bits vanish in the shift (a union is C11's
	 * sanctioned way to reinterpret the bits). */
	scale.u = (t.u + 1023) << 52;
	return p * scale.d;
}

#endif
