/*
 * sampler.c - the sampler factory: one table row per algorithm.
 */
#include "search/sampler.h"

#include <stdlib.h>

typedef int (*sampler_ctor)(const space *, uint64_t, const sampler_options *, sampler **,
			    rl_err *);

static const struct {
	search_algo algo;
	sampler_ctor ctor;
} sampler_table[] = {
	{SEARCH_RANDOM, sampler_random_new},
	{SEARCH_GRID, sampler_grid_new},
	{SEARCH_TPE, sampler_tpe_new},
	{SEARCH_SOBOL, sampler_sobol_new},
	{SEARCH_GP, sampler_gp_new},
};

int sampler_new(search_algo algo, const space *sp, uint64_t seed, const sampler_options *opt,
		sampler **out, rl_err *err)
{
	sampler_options defaults = {.n_startup = 10, .n_candidates = 24};
	if (!opt)
		opt = &defaults;
	for (size_t i = 0; i < sizeof sampler_table / sizeof sampler_table[0]; i++)
		if (sampler_table[i].algo == algo)
			return sampler_table[i].ctor(sp, seed, opt, out, err);
	return rl_err_set(err, RL_EUNSUPPORTED, "unknown search algorithm %d", (int)algo);
}

int sampler_tell_multi_ignore(sampler *s, uint64_t index, const config *c, const double *losses,
			      size_t n, double resource, obs_state state, rl_err *err)
{
	return 0;
}

void sampler_free(sampler *s)
{
	if (s)
		s->ops->destroy(s);
}
