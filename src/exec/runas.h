/*
 * runas.h - running a trial as another user (relish serve runs every trial
 * as its submitter, never as the service's own user).
 *
 * The Slurm executor spawns through libuv, whose child setup has no hook
 * between fork and exec, and whose own uid/gid options clear the
 * supplementary groups instead of setting the user's; the process
 * executor's child (spawn.h) shares relish's memory and may use raw system
 * calls only, where glibc's setuid and setgroups would signal relish's
 * other threads to change their credentials too.  So a root relish
 * starts a small helper, relish-runas (src/exec/runas_main.c, nothing but
 * libc), that sets the groups, the gid and the uid, checks that root cannot
 * be regained, changes to the trial's folder as that user and executes the
 * trial in its own process (same pid, so process groups, memory sampling
 * and recovery by pid and start time are unchanged).  If the trial cannot
 * be executed the helper writes the errno to an inherited pipe, which
 * relish reads right after the spawn: launch still fails synchronously
 * with RL_EEXEC, as it does without the helper.
 *
 * The helper runs as root until it has dropped to the user, and root
 * executes it: a dynamically linked program honours LD_PRELOAD,
 * LD_LIBRARY_PATH, LD_AUDIT, GCONV_PATH... from its environment, and the
 * trial's environment is the submitter's to choose (trial.env).  So the
 * helper is always executed with runas_helper_env (empty), and the
 * trial's environment travels as data: NUL-separated "NAME=VALUE" strings
 * in a memfd the helper inherits as RUNAS_ENV_FD and reads only
 * after setuid, when nothing it reads can act with root's rights.  The
 * helper also marks every descriptor above 2 close-on-exec before it
 * executes the trial (whatever the service inherited stays out of it).
 *
 *   relish-runas UID GID GROUPS NPROC CWD FD ENVFD -- PROGRAM [ARG...]
 * GROUPS is a comma-separated list of gids or "-" for none; NPROC the
 * most processes the user may have at once (RLIMIT_NPROC, soft and hard,
 * set while still root so the user cannot raise it) or "-"; CWD a folder
 * or "-" to stay; FD the pipe's number; ENVFD the environment's, or "-"
 * for an empty environment.
 */
#ifndef RELISH_EXEC_RUNAS_H
#define RELISH_EXEC_RUNAS_H

#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#include "common/err.h"

#define RUNAS_HELPER_NAME "relish-runas"
#define RUNAS_MAX_GROUPS 64
#define RUNAS_FD 3 /* the helper's error pipe, after stdin, stdout, stderr */
#define RUNAS_ENV_FD 4 /* the trial's environment (a memfd) */
#define RUNAS_ENV_MAX (2u << 20) /* bytes of environment; execve's own limit is near */

/* The environment relish-runas is executed with (NULL-terminated, empty):
 * nothing of the submitter's may reach a program root executes. */
extern char *const runas_helper_env[];

/* Whom to run as; borrowed for the duration of a launch. */
typedef struct exec_user {
	uid_t uid;
	gid_t gid;
	size_t n_groups;             /* supplementary groups; at most RUNAS_MAX_GROUPS */
	const gid_t *groups;
	const char *helper;          /* path of relish-runas */
	unsigned max_processes;      /* RLIMIT_NPROC as the user (0: unchanged) */
} exec_user;

/* The wrapped command of one spawn (parent side). */
typedef struct runas_spawn {
	char **argv;                 /* helper argv, owned */
	int pipe_rd, pipe_wr;        /* error pipe, -1 when closed */
	int env_fd;                  /* the environment's memfd, -1 when closed */
} runas_spawn;

/*
 * Prepare a spawn of argv with environment envp (NULL: an empty one) in
 * cwd (NULL: stay) as u: *file and *args are what the spawn gets instead
 * (they point into rs); the spawn's environment must be runas_helper_env;
 * fds[0] is the pipe end the child must inherit as RUNAS_FD, fds[1] the
 * environment it must inherit as RUNAS_ENV_FD.  An environment over
 * RUNAS_ENV_MAX bytes is RL_EINVAL.  runas_spawn_done frees rs.
 */
int runas_spawn_prepare(runas_spawn *rs, const exec_user *u, char *const *argv,
			char *const *envp, const char *cwd, const char **file, char ***args,
			int fds[2], rl_err *err);

/*
 * After uv_spawn succeeded with pid: wait for the helper to execute the
 * trial.  0 when it did; a negative errno (libuv convention, for
 * uv_strerror) when the trial could not be executed, the helper reaped.
 */
int runas_spawn_wait(runas_spawn *rs, pid_t pid);

void runas_spawn_done(runas_spawn *rs);

/*
 * Where relish-runas is: $RELISH_RUNAS, else beside the running binary
 * (/proc/self/exe's folder), else ../libexec/relish/ from there.  Writes
 * into buf; RL_ENOTFOUND (err names the places) when none is executable.
 */
int runas_helper_find(char *buf, size_t len, rl_err *err);

/*
 * Resolve paths[0..n) (realpath: "..", links) with the rights of u (its
 * groups, gid and uid; u->helper unused), so that what a user names is
 * seen as that user sees it: a link to a folder they cannot enter, or a
 * file in one, resolves for them to EACCES, whether it exists or not.
 * Done in a child process (fork) that drops to u with raw system calls
 * and writes the answers to a pipe.  out[i] is the resolved path
 * (malloc'd) or NULL with errs[i] the errno u got.  0, or RL_EIO when the
 * child could not run (nothing is written then).
 */
int runas_realpath(const exec_user *u, const char *const *paths, size_t n, char **out,
		   int *errs, rl_err *err);

#endif
