/*
 * sampler_pending.c - grid, TPE and Sobol constructors report "not
 * supported" until their implementations land (they replace this file).
 */
#include "search/sampler.h"

int sampler_grid_new(const space *sp, uint64_t seed, const sampler_options *opt,
		     sampler **out, rl_err *err)
{
	return rl_err_set(err, RL_EUNSUPPORTED, "grid search is not available in this build");
}

int sampler_tpe_new(const space *sp, uint64_t seed, const sampler_options *opt,
		    sampler **out, rl_err *err)
{
	return rl_err_set(err, RL_EUNSUPPORTED, "tpe is not available in this build");
}

int sampler_sobol_new(const space *sp, uint64_t seed, const sampler_options *opt,
		      sampler **out, rl_err *err)
{
	return rl_err_set(err, RL_EUNSUPPORTED, "sobol is not available in this build");
}

uint64_t sampler_grid_size(const space *sp)
{
	return 0;
}
