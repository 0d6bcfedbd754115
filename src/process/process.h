/*
 * process.h - the process executor: each segment a child process of relish
 * on this machine (process.c, on the driver's libuv loop), its descendants
 * kept with it (confine.h).  The container executor runs the engine's
 * process through it (container/podman.c).
 */
#ifndef RELISH_PROCESS_PROCESS_H
#define RELISH_PROCESS_PROCESS_H

#include <uv.h>

#include "common/err.h"
#include "exec/exec.h"

/* The process executor on loop.  opt may be NULL for the defaults.  Sets
 * SIGPIPE to ignored (a trial that closes its stdin must not kill relish). */
int exec_process_new(uv_loop_t *loop, const exec_options *opt, executor **out, rl_err *err);

/* How the process executor ex confines each trial process and its
 * descendants; *how (may be NULL) gets words for people, e.g. "cgroup v2
 * (/sys/fs/cgroup/unified/relish.12.345.1)" or "/proc tracking (no writable
 * cgroup: ...)", owned by ex.  EXEC_CONFINE_AUTO (and *how NULL) for an
 * executor that is not the process executor. */
exec_confine exec_process_confinement(const executor *ex, const char **how);

/* Whether ex limits each trial's CPUs in the kernel (exec_options.cpu_limit):
 * 2 cgroup v2 cpu.max, 1 cgroup v1 cpu quota, 0 not (then *why, when asked
 * for and refused, says why; NULL otherwise). */
int exec_process_cpu_limits(const executor *ex, const char **why);

/* The process executor as a backend of the live driver (backend.c): its
 * row in exec_backends. */
extern const exec_backend_ops process_backend_ops;

#endif
