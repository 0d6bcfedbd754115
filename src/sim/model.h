/*
 * model.h - the simulator's model of co-location slowdown
 * (docs/simulator.md, "Models").
 *
 * speed (work per second relative to running alone, <= 1) of a job sharing a
 * GPU with others:
 *   - one other job, pair measured in the Lucid co-location table
 *     (raw/lucid_colocate_info.csv): the measured speed, clamped to 1
 *     (values above 1 are measurement noise: sharing never speeds a job up);
 *   - one other job, pair not measured: min(1, 100 / (u_a + u_b)), u = mean
 *     GPU utilisation alone (a GPU delivers at most 100 % between them);
 *   - k >= 2 others: min(product of the pair speeds,
 *     min(1, 100 / sum of all u)) - the product treats slowdowns as
 *     independent, the cap keeps three light jobs from claiming more than
 *     the device.
 * The model is consulted by the simulator only, never by a policy.
 */
#ifndef RELISH_SIM_MODEL_H
#define RELISH_SIM_MODEL_H

#include <stddef.h>

#include "common/err.h"
#include "sim/trace.h"

typedef struct sim_model sim_model;

/*
 * Build the model for trace t.  colocate_path names a Lucid-format pair file
 * (header ,model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,...,speed2,
 * ...); NULL uses the utilisation fallback alone.  Pairs whose configurations
 * do not occur in t are skipped.  *out is owned by the caller (sim_model_free);
 * t must outlive the model.
 */
int sim_model_new(const sim_trace *t, const char *colocate_path, sim_model **out,
		  rl_err *err);
/* Same from the pair table's text in memory (text[0..len), not necessarily
 * NUL-terminated; name is used in messages, NULL: "<co-location table>"). */
int sim_model_parse(const sim_trace *t, const char *text, size_t len, const char *name,
		    sim_model **out, rl_err *err);
void sim_model_free(sim_model *m);

/* Measured pairs loaded (ordered pairs of the trace's profiles). */
size_t sim_model_pair_count(const sim_model *m);

/* Speed of job a sharing its GPU with jobs others[0..n) (indices into t). */
double sim_model_speed(const sim_model *m, size_t a, const size_t *others, size_t n);

/* The measured speed of profile pa beside profile pb (indices into
 * t->profiles), NaN when that pair was not measured. */
double sim_model_measured(const sim_model *m, int pa, int pb);

/* Speed of a beside b alone (the pair term); 1 when a == b is not meaningful. */
double sim_model_pair(const sim_model *m, size_t a, size_t b);

/* The most compute (sum over members of utilisation x speed, percent of one
 * GPU) any set of jobs can deliver on one GPU under this model: 100 for
 * unmeasured sets (the fallback and the cap of sets of three or more keep
 * the sum at or below 100), more only for a measured pair whose members
 * both keep most of their speed.  The lower bound on makespan divides the
 * trace's compute work by it. */
double sim_model_max_compute(const sim_model *m);

#endif
