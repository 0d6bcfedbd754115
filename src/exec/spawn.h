/*
 * spawn.h - starting a trial process without copying relish (exec-internal;
 * the process executor's, see process.c).
 *
 * fork() duplicates relish's page tables and marks every private page
 * copy-on-write, so after each launch the daemon's own threads (the HTTP
 * threads of relish serve among them) fault on pages they write, for as
 * long as the child has not yet executed its program.  Here the child
 * shares relish's memory instead (clone with CLONE_VM | CLONE_VFORK): the
 * launching thread waits until the child has executed its program or
 * failed, the other threads run on, and nothing is copied.
 *
 * The child, on its own small stack, uses nothing but raw system calls (no
 * allocation, no stdio, no locks, no libuv: it shares the parent's heap and
 * the other threads keep using it).  With cgroup_fd (a v2 unit's folder)
 * the kernel starts it in that cgroup (clone3 with CLONE_INTO_CGROUP, Linux
 * 5.7+, x86-64 here): a migration afterwards takes a global lock that
 * waits for an RCU grace period, 10-20 ms measured on a 2-core machine,
 * with the launching thread suspended.  Otherwise (v1, an older kernel, a
 * cgroup clone3 refuses) the child joins by itself, writing "0" (itself) to
 * join_fd; either way relish never enters a trial's cgroup.  In order the
 * child: resets every signal disposition to the default, joins its cgroup
 * where it was not started in it, starts a new session
 * (its own process group), puts fds[] at 0..n_fds-1, closes every other
 * descriptor (what relish inherited or opened without close-on-exec never
 * reaches a trial), changes to cwd, sets an empty signal mask and executes
 * file, searched in envp's PATH as
 * execvp does (a file that is not a binary runs with /bin/sh).  A failure
 * before or at exec is reported through memory shared with the parent; the
 * child is reaped before spawn_process returns.
 *
 * Why not posix_spawn: it cannot start a process in a cgroup, nor let it
 * join one before exec.
 */
#ifndef RELISH_EXEC_SPAWN_H
#define RELISH_EXEC_SPAWN_H

#include <sys/types.h>

#define SPAWN_MAX_FDS 5

typedef struct spawn_req {
	const char *file;          /* program; searched in PATH when it has no '/' */
	char *const *argv;         /* NULL-terminated */
	char *const *envp;         /* NULL: relish's own environment */
	const char *cwd;           /* NULL: stay in relish's folder */
	int fds[SPAWN_MAX_FDS];    /* become the child's 0..n_fds-1 */
	int n_fds;
	int new_session;           /* setsid(): own session and process group */
	int cgroup_fd;             /* the cgroup v2 directory to start in; -1 none */
	int join_fd;               /* cgroup.procs or tasks, opened for writing; -1 none */
	int cpu_join_fd;           /* a second one (cgroup v1 cpu); -1 none */
	/* set on success */
	pid_t pid;
	int join_errno;            /* 0, or why the child could not join (it runs anyway) */
} spawn_req;

/*
 * Start r's program.  0 with r->pid (the caller reaps it), or a negative
 * errno (libuv's convention, for uv_strerror) when it could not be started
 * or executed: nothing runs then, the child is already reaped.  All signals
 * are blocked in the calling thread for the duration.
 */
int spawn_process(spawn_req *r);

/*
 * Prove that a child can join the cgroup whose join file is join_fd: a
 * throwaway child writes "0" there and exits.  0, or a negative errno.
 */
int spawn_probe_join(int join_fd);

#endif
