/*
 * trace.h - job traces for the simulator (relish simulate).
 *
 * A trace is a CSV file with a header row; columns are found by name, so the
 * shared Philly evaluation trace (../shared/traces/philly_hpo_trace.csv) and a
 * user's own file load through the same code.  docs/simulator.md documents
 * the format:
 *
 *   required  job_id, submit_time_s, duration_s, gpu_mem_mib (alias
 *             gpu_mem_mib_avg)
 *   optional  num_gpus (1), gpu_util_pct (alias gpu_util_pct_avg; 100),
 *             experiment (alias burst_id; the job alone), hpo_like (1; 0 makes
 *             the row an experiment of its own), mem_hint_mib (empty = none),
 *             model / dataset / batchsize / amp (aliases profile_*: the
 *             configuration, used for measured co-location pairs and as the
 *             memory-relevant shape the core learns per experiment),
 *             user (who submitted it: fair share and per-user fairness;
 *             empty or absent = one user for the whole trace)
 *
 * Fields are plain (no quoting); unknown columns are ignored.  Bad input is
 * reported as FILE:LINE: field: expected ..., got "...".
 *
 * Jobs keep file order; the simulator orders arrivals itself.
 */
#ifndef RELISH_SIM_TRACE_H
#define RELISH_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

/* A training configuration (model, dataset, batch size, mixed precision). */
typedef struct sim_profile {
	char model[32];
	char dataset[32];
	int batchsize;
	int amp;
} sim_profile;

typedef struct sim_job {
	char id[40];
	double submit_s;        /* seconds, any origin */
	double duration_s;      /* run time holding its GPUs exclusively, > 0 */
	int num_gpus;           /* >= 1 */
	uint64_t mem_mib;       /* true per-GPU peak memory (never shown to a policy) */
	double util_pct;        /* GPU utilisation when alone, (0, 100] */
	uint64_t mem_hint_mib;  /* user's declared need from the trace, 0 = none */
	int has_hint;           /* the trace gave mem_hint_mib */
	uint32_t exp;           /* experiment index into sim_trace.exps */
	uint32_t user;          /* index into sim_trace.users */
	int32_t profile;        /* index into sim_trace.profiles, -1 = none */
} sim_job;

typedef struct sim_exp {
	char name[48];
	int hpo;                /* an HPO-like burst (several trials), not a lone job */
	uint32_t n_jobs;
} sim_exp;

typedef struct sim_user {
	char name[40];          /* "" = the trace names no users */
} sim_user;

typedef struct sim_trace {
	sim_job *jobs;
	size_t n_jobs;
	sim_exp *exps;
	size_t n_exps;
	sim_user *users;        /* at least one */
	size_t n_users;
	sim_profile *profiles;
	size_t n_profiles;
} sim_trace;

/* Load a trace file.  On success *out is a new trace owned by the caller
 * (sim_trace_free); on failure *out is untouched and err names the file and
 * line.  name is used in messages only (may be NULL: path is used). */
int sim_trace_load(const char *path, sim_trace **out, rl_err *err);

/* Same from text in memory (tests, synthetic traces). */
int sim_trace_parse(const char *text, size_t len, const char *name,
		    sim_trace **out, rl_err *err);

void sim_trace_free(sim_trace *t);

/* Index of a profile with these keys, -1 when the trace has none. */
int sim_trace_find_profile(const sim_trace *t, const char *model,
			   const char *dataset, int batchsize, int amp);

/*
 * A synthetic trace `factor` times larger with the same statistics: every
 * experiment of t copied exactly `factor` times, with its trials and their
 * offsets, each copy arriving at a time drawn uniformly (rng seeded by
 * seed) over
 *   SIM_SYNTH_DENSER  the original span: the arrival rate grows with
 *                     factor, so a cluster `factor` times larger sees the
 *                     same load per GPU;
 *   SIM_SYNTH_LONGER  a span `factor` times longer: the same arrival rate,
 *                     for the same cluster.
 * Each copy keeps its experiment's user (the same people, more work).
 * Owned by the caller.
 */
typedef enum sim_synth_mode {
	SIM_SYNTH_DENSER,
	SIM_SYNTH_LONGER,
} sim_synth_mode;

int sim_trace_synthetic(const sim_trace *t, int factor, sim_synth_mode mode, uint64_t seed,
			sim_trace **out, rl_err *err);

#endif
