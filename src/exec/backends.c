/*
 * backends.c - the table of executor backends: one row per kind a spec's
 * trial.executor names (spec/spec.h), each row's ops defined in the
 * backend's own folder.  The live driver looks experiments up here and
 * calls only exec_backend_ops (exec.h), so adding a backend is a folder
 * (its executor and its exec_backend_ops) and a row below; the rows are
 * declared here rather than included, so that exec/ stays below the
 * backends it lists (tests/test_layering.sh).
 */
#include "exec/exec.h"

extern const exec_backend_ops process_backend_ops; /* src/process/backend.c */
extern const exec_backend_ops podman_backend_ops;  /* src/container/backend.c */
extern const exec_backend_ops docker_backend_ops;  /* src/container/backend.c */
extern const exec_backend_ops slurm_backend_ops;   /* src/slurm/site.c */

const exec_backend_row exec_backends[] = {
	{EXEC_PROCESS, &process_backend_ops},
	{EXEC_PODMAN, &podman_backend_ops},
	{EXEC_DOCKER, &docker_backend_ops},
	{EXEC_SLURM, &slurm_backend_ops},
};

const size_t exec_n_backends = sizeof exec_backends / sizeof *exec_backends;
