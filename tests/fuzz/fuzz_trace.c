/*
 * fuzz_trace.c - libFuzzer target for the simulator's trace reader
 * (sim_trace_parse, src/sim/trace.h: a CSV whose columns are found by name).
 * scripts/fuzz.sh builds and runs it; `make test` runs it briefly
 * (tests/test_fuzz.sh) and replays tests/fuzz/seeds/trace and
 * tests/fuzz/regress/trace without libFuzzer (fuzz_replay_trace).
 *
 * Checked besides the sanitizers: a failure has a message and hands back
 * nothing; a parsed trace keeps what trace.h promises of every job
 * (duration > 0, 1 <= GPUs <= 4096, utilisation in (0, 100], experiment
 * and profile indices in range, experiments' job counts adding up).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	sim_trace *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = sim_trace_parse((const char *)data, size, "fuzz.csv", &t, &err);
	if (rc < 0) {
		if (!err.msg[0] || t)
			abort(); /* a failure says why and hands back nothing */
		return 0;
	}
	size_t total = 0;
	for (size_t i = 0; i < t->n_exps; i++)
		total += t->exps[i].n_jobs;
	if (t->n_jobs == 0 || total != t->n_jobs)
		abort();
	for (size_t i = 0; i < t->n_jobs; i++) {
		const sim_job *j = &t->jobs[i];
		if (!(j->duration_s > 0) || !isfinite(j->duration_s) || !isfinite(j->submit_s) ||
		    j->num_gpus < 1 || j->num_gpus > 4096 || !(j->util_pct > 0) || j->util_pct > 100 ||
		    j->exp >= t->n_exps || j->profile < -1 || (j->profile >= 0 && (size_t)j->profile >= t->n_profiles) ||
		    (!j->has_hint && j->mem_hint_mib))
			abort();
	}
	sim_trace_free(t);
	return 0;
}
