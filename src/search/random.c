/*
 * random.c - independent uniform sampling in the unit-cube view of the
 * space.  Each trial draws from its own stream seeded by (seed, index), so
 * trial k's configuration does not depend on how many asks came before it or
 * in which order: a resumed experiment proposes exactly what it would have.
 */
#include "search/rng.h"
#include "search/sampler.h"

#include <stdlib.h>

typedef struct random_sampler {
	sampler base;
} random_sampler;

static int random_ask(sampler *s, uint64_t index, config *out, rl_err *err)
{
	rl_rng rng;
	rng_seed(&rng, rng_stream_seed(s->seed, index));
	config c;
	if (config_init(&c, s->space->n, err) < 0)
		return RL_ENOMEM;
	int rc = sampler_random_config(s->space, &rng, &c, err);
	if (rc < 0) {
		config_fini(&c);
		return rc;
	}
	*out = c;
	return 0;
}

int sampler_random_config(const space *sp, rl_rng *rng, config *c, rl_err *err)
{
	for (size_t i = 0; i < sp->n; i++) {
		/* Every parameter takes its draw, active or not, so that a
		 * parameter's draw does not depend on other parameters' values. */
		double u = rng_uniform(rng);
		if (!space_active(sp, i, c))
			continue; /* VAL_NONE */
		int rc = space_from_unit(&sp->params[i], u, &c->v[i], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int random_tell(sampler *s, uint64_t index, const config *c, double loss,
		       double resource, obs_state state, rl_err *err)
{
	return 0; /* random search learns nothing */
}

static void random_destroy(sampler *s)
{
	free(s);
}

static const sampler_ops random_ops = {
	.name = "random",
	.ask = random_ask,
	.tell = random_tell,
	.destroy = random_destroy,
	.tell_multi = sampler_tell_multi_ignore,
};

int sampler_random_new(const space *sp, uint64_t seed, const sampler_options *opt,
		       sampler **out, rl_err *err)
{
	random_sampler *r = calloc(1, sizeof *r);
	if (!r)
		return rl_err_set(err, RL_ENOMEM, "creating random sampler");
	r->base.ops = &random_ops;
	r->base.space = sp;
	r->base.seed = seed;
	*out = &r->base;
	return 0;
}
