/*
 * capture.h - a tool run to its end with its output captured: blocking,
 * for start-up (a container engine's `ps`, `rm` and image checks, Slurm's
 * `scontrol` and `squeue` before the loop runs) and for the plots of relish
 * simulate (gnuplot).  On the loop, tools run
 * as libuv processes instead (slurm.c, podman.c); trials through spawn.h.
 */
#ifndef RELISH_EXEC_CAPTURE_H
#define RELISH_EXEC_CAPTURE_H

#include "common/err.h"

/* stderr beyond this is cut from its start: its end says what failed */
#define CAPTURE_ERR_MAX 65536

/*
 * Run argv (argv[0] searched in PATH) with envp (NULL: relish's own
 * environment) and standard input from /dev/null, and wait for it.  *out
 * gets its standard output (NUL-terminated; out may be NULL: not wanted),
 * *err_text its standard error without trailing newlines (at most the
 * last CAPTURE_ERR_MAX bytes; NULL: not wanted); both malloc'd, written
 * only on success.  Returns its exit status (>= 0; 128 + the signal that
 * killed it), or a negative RL_E* code with err: RL_ERUNTIME "cannot run
 * ARGV0: ..." when it could not be started, RL_ENOMEM or RL_EIO when its
 * output could not be kept.
 */
int capture_run(char *const *argv, char *const *envp, char **out, char **err_text, rl_err *err);
/* The same in folder cwd (NULL: relish's own): a program whose files are
 * named relative to it (gnuplot and its plots.gp). */
int capture_run_in(const char *cwd, char *const *argv, char *const *envp, char **out,
		   char **err_text, rl_err *err);

#endif
