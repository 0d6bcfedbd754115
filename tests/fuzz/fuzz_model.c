/*
 * fuzz_model.c - libFuzzer target for the co-location model's pair table
 * reader (sim_model_parse, src/sim/model.h: the Lucid-format CSV of
 * measured pair speeds).  scripts/fuzz.sh builds and runs it; `make test`
 * runs it briefly (tests/test_fuzz.sh) and replays tests/fuzz/seeds/model
 * and tests/fuzz/regress/model without libFuzzer (fuzz_replay_model).
 *
 * The trace is fixed: three jobs of three configurations, so rows naming
 * them load and others are skipped.  Checked besides the sanitizers: a
 * failure has a message and hands back nothing; every pair term and every
 * speed the model gives is in (0, 1], and at most 9 ordered pairs load.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char trace_text[] =
	"job_id,submit_time_s,duration_s,gpu_mem_mib,gpu_util_pct,model,dataset,batchsize,amp\n"
	"a,0,10,100,60,resnet18,cifar10,32,0\n"
	"b,0,10,100,80,bert,squad,64,1\n"
	"c,5,10,100,30,dcgan,lsun,128,0\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static sim_trace *t;
	if (!t && sim_trace_parse(trace_text, strlen(trace_text), "fixed.csv", &t, NULL) < 0)
		abort();
	sim_model *m = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = sim_model_parse(t, (const char *)data, size, "fuzz.csv", &m, &err);
	if (rc < 0) {
		if (!err.msg[0] || m)
			abort();
		return 0;
	}
	if (sim_model_pair_count(m) > 9)
		abort();
	for (size_t a = 0; a < t->n_jobs; a++) {
		size_t others[2], k = 0;
		for (size_t b = 0; b < t->n_jobs; b++) {
			if (b == a)
				continue;
			double p = sim_model_pair(m, a, b);
			if (!(p > 0) || p > 1)
				abort();
			others[k++] = b;
		}
		double s = sim_model_speed(m, a, others, k);
		if (!(s > 0) || s > 1)
			abort();
	}
	sim_model_free(m);
	return 0;
}
