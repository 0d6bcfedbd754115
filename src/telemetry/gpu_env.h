/*
 * gpu_env.h - what a segment placed on a GPU finds in its environment, and
 * whether an MPS server is there to enforce shares.
 *
 * The scheduler decides a placement (device, memory reservation, compute
 * share); the executor starts the trial with the variables built here:
 *   CUDA_VISIBLE_DEVICES=GPU-uuid[,GPU-uuid...]   the device(s), by UUID so
 *                                                 indices cannot be remapped
 *   RELISH_GPU_MEMORY_MIB=N                       the reservation, for trials
 *                                                 that cap their allocator
 *   TF_FORCE_GPU_ALLOW_GROWTH=true                TensorFlow must not grab
 *                                                 the whole device
 * and, when an MPS control daemon runs (relish never starts one, never
 * changes compute mode or MIG; docs/gpu.md):
 *   CUDA_MPS_PIPE_DIRECTORY=DIR
 *   CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=P           the compute share, 1..100
 *   CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=NMB[,1=NMB] the reservation as a hard
 *                                                 cap, per visible ordinal
 */
#ifndef RELISH_TELEMETRY_GPU_ENV_H
#define RELISH_TELEMETRY_GPU_ENV_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "spec/spec.h" /* env_var */

#define GPU_MPS_DEFAULT_PIPE_DIR "/tmp/nvidia-mps"

typedef struct gpu_env_request {
	size_t n_dev;               /* >= 1 */
	const char *const *uuids;   /* n_dev device UUIDs, borrowed */
	uint64_t mem_mib;           /* reservation on each device; 0 = none */
	double compute_pct;         /* share of each device, percent; <= 0 = none */
	int mps;                    /* an MPS daemon serves these devices */
	const char *mps_pipe_dir;   /* its pipe directory (required when mps) */
} gpu_env_request;

/*
 * Build the variables for r, in the order listed above.  On success *out is
 * a new array of *n_out variables (names and values owned; free with
 * gpu_env_free).  Errors: no device, an empty UUID or one holding a comma,
 * mps without a pipe directory.
 */
int gpu_env_build(const gpu_env_request *r, env_var **out, size_t *n_out, rl_err *err);

/* Free what gpu_env_build returned.  Accepts NULL. */
void gpu_env_free(env_var *v, size_t n);

/*
 * Is an MPS control daemon listening?  Looks in pipe_dir_env (the value of
 * CUDA_MPS_PIPE_DIRECTORY, or NULL/"" for the default /tmp/nvidia-mps) for
 * the daemon's "control" socket or pipe.  Returns 1 and copies the
 * directory into dir (size n) when found, else 0 and leaves dir alone.
 */
int gpu_mps_detect_in(const char *pipe_dir_env, char *dir, size_t n);

/* Same, reading CUDA_MPS_PIPE_DIRECTORY from the environment. */
int gpu_mps_detect(char *dir, size_t n);

#endif
