/*
 * runas.c - the parent's side of running a trial as another user (see
 * runas.h): the helper's command line, the error pipe, the trial's
 * environment as data, and finding the helper program.
 */
#include "exec/runas.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

char *const runas_helper_env[] = {NULL};

void runas_spawn_done(runas_spawn *rs)
{
	if (!rs)
		return;
	if (rs->argv) {
		for (char **a = rs->argv; *a; a++)
			free(*a);
		free(rs->argv);
	}
	if (rs->pipe_rd >= 0)
		close(rs->pipe_rd);
	if (rs->pipe_wr >= 0)
		close(rs->pipe_wr);
	if (rs->env_fd >= 0)
		close(rs->env_fd);
	rs->argv = NULL;
	rs->pipe_rd = rs->pipe_wr = rs->env_fd = -1;
}

/* envp as NUL-separated strings in a memfd (close-on-exec here; the spawn
 * hands it to the helper as RUNAS_ENV_FD), positioned at its start.  The
 * fd, or a negative RL_E* with err set. */
static int env_blob(char *const *envp, rl_err *err)
{
	size_t total = 0;
	for (char *const *e = envp; e && *e; e++) {
		total += strlen(*e) + 1;
		if (total > RUNAS_ENV_MAX)
			return rl_err_set(err, RL_EINVAL,
					  "the trial's environment is over %u bytes (%s...)",
					  RUNAS_ENV_MAX, *e);
	}
	int fd = memfd_create("relish-trial-env", MFD_CLOEXEC);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "run-as environment");
	for (char *const *e = envp; e && *e; e++) {
		size_t len = strlen(*e) + 1, off = 0;
		while (off < len) {
			ssize_t w = write(fd, *e + off, len - off);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				int er = w < 0 ? errno : EIO;
				close(fd);
				return rl_err_sys(err, RL_EIO, er, "run-as environment");
			}
			off += (size_t)w;
		}
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		int er = errno;
		close(fd);
		return rl_err_sys(err, RL_EIO, er, "run-as environment");
	}
	return fd;
}

int runas_spawn_prepare(runas_spawn *rs, const exec_user *u, char *const *argv,
			char *const *envp, const char *cwd, const char **file, char ***args,
			int fds[2], rl_err *err)
{
	memset(rs, 0, sizeof *rs);
	rs->pipe_rd = rs->pipe_wr = rs->env_fd = -1;
	if (!u->helper || !*u->helper)
		return rl_err_set(err, RL_EINTERNAL, "no %s program to run trials as uid %u",
				  RUNAS_HELPER_NAME, (unsigned)u->uid);
	if (u->n_groups > RUNAS_MAX_GROUPS)
		return rl_err_set(err, RL_EINVAL, "uid %u has %zu groups; at most %d are kept",
				  (unsigned)u->uid, u->n_groups, RUNAS_MAX_GROUPS);
	size_t n = 0;
	while (argv[n])
		n++;
	/* helper UID GID GROUPS NPROC CWD FD ENVFD -- argv... NULL */
	rs->argv = calloc(n + 10, sizeof *rs->argv);
	if (!rs->argv)
		return rl_err_set(err, RL_ENOMEM, "run-as command");
	char groups[RUNAS_MAX_GROUPS * 12 + 2] = "-";
	size_t off = 0;
	for (size_t i = 0; i < u->n_groups; i++)
		off += (size_t)snprintf(groups + off, sizeof groups - off, "%s%u", i ? "," : "",
					(unsigned)u->groups[i]);
	char num[5][24];
	snprintf(num[0], sizeof num[0], "%u", (unsigned)u->uid);
	snprintf(num[1], sizeof num[1], "%u", (unsigned)u->gid);
	snprintf(num[2], sizeof num[2], "%d", RUNAS_FD);
	snprintf(num[3], sizeof num[3], "%d", RUNAS_ENV_FD);
	if (u->max_processes)
		snprintf(num[4], sizeof num[4], "%u", u->max_processes);
	else
		snprintf(num[4], sizeof num[4], "-");
	const char *head[] = {u->helper, num[0], num[1], groups, num[4], cwd && *cwd ? cwd : "-",
			      num[2], num[3], "--"};
	size_t k = 0;
	for (; k < sizeof head / sizeof head[0]; k++)
		if (!(rs->argv[k] = strdup(head[k])))
			goto oom;
	for (size_t i = 0; i < n; i++, k++)
		if (!(rs->argv[k] = strdup(argv[i])))
			goto oom;
	int fd = env_blob(envp, err);
	if (fd < 0) {
		runas_spawn_done(rs);
		return fd;
	}
	rs->env_fd = fd;
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		int e = errno;
		runas_spawn_done(rs);
		return rl_err_sys(err, RL_EIO, e, "run-as pipe");
	}
	rs->pipe_rd = p[0];
	rs->pipe_wr = p[1];
	*file = rs->argv[0];
	*args = rs->argv;
	fds[0] = rs->pipe_wr;
	fds[1] = rs->env_fd;
	return 0;
oom:
	runas_spawn_done(rs);
	return rl_err_set(err, RL_ENOMEM, "run-as command");
}

int runas_spawn_wait(runas_spawn *rs, pid_t pid)
{
	/* Our write end must go, or EOF never comes; the environment is the
	 * helper's now. */
	close(rs->pipe_wr);
	rs->pipe_wr = -1;
	if (rs->env_fd >= 0)
		close(rs->env_fd);
	rs->env_fd = -1;
	int code = 0;
	size_t got = 0;
	for (;;) {
		ssize_t r = read(rs->pipe_rd, (char *)&code + got, sizeof code - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == sizeof code)
			break;
	}
	if (got < sizeof code)
		return 0; /* EOF: the pipe closed on exec */
	/* The helper exits right after writing: reap it here, since the
	 * caller closes the process handle without waiting for it. */
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return code > 0 ? -code : -EPERM;
}

static int executable(const char *p)
{
	return access(p, X_OK) == 0;
}

/* Root executes the helper before it drops to the user: a helper, or a
 * folder holding it, that someone else could write would be root code
 * execution for them.  0, or RL_EPERM naming what is wrong. */
static int helper_safe(const char *path, rl_err *err)
{
	if (geteuid() != 0)
		return 0;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	const char *what[2] = {path, dirname(dir)};
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (stat(what[i], &st) != 0)
			return rl_err_sys(err, RL_ENOTFOUND, errno, "%s", what[i]);
		if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
			return rl_err_set(err, RL_EPERM,
					  "%s is owned by uid %u, mode %03o: root runs %s before it "
					  "becomes the trial's user, so it and its folder must be "
					  "root's and writable by no one else",
					  what[i], (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777),
					  RUNAS_HELPER_NAME);
	}
	return 0;
}

int runas_helper_find(char *buf, size_t len, rl_err *err)
{
	const char *env = getenv("RELISH_RUNAS");
	if (env && *env) {
		if (!executable(env))
			return rl_err_sys(err, RL_ENOTFOUND, errno, "RELISH_RUNAS=%s", env);
		snprintf(buf, len, "%s", env);
		return helper_safe(buf, err);
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return rl_err_sys(err, RL_ENOTFOUND, errno, "finding %s: /proc/self/exe",
				  RUNAS_HELPER_NAME);
	self[n] = '\0';
	char *dir = dirname(self);
	char a[PATH_MAX + 64], b[PATH_MAX + 64];
	snprintf(a, sizeof a, "%s/%s", dir, RUNAS_HELPER_NAME);
	snprintf(b, sizeof b, "%s/../libexec/relish/%s", dir, RUNAS_HELPER_NAME);
	if (executable(a)) {
		snprintf(buf, len, "%s", a);
		return helper_safe(buf, err);
	}
	if (executable(b)) {
		snprintf(buf, len, "%s", b);
		return helper_safe(buf, err);
	}
	return rl_err_set(err, RL_ENOTFOUND,
			  "%s not found (looked at %s and %s): it is built beside relish "
			  "(scripts/demo.sh and `make build` build it; alone: scripts/build.sh "
			  "release %s) and `make install` installs it beside relish; "
			  "RELISH_RUNAS=PATH names another",
			  RUNAS_HELPER_NAME, a, b, RUNAS_HELPER_NAME);
}

/* ---- paths as a user sees them ---- */

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The child: drop to u, answer each path as {int errno, int length, bytes}. */
static void realpath_child(const exec_user *u, const char *const *paths, size_t n, int wfd)
{
	/* Raw calls: glibc's wrappers would try to reach threads this
	 * process no longer has. */
	if (syscall(SYS_setgroups, u->n_groups, u->groups) != 0 ||
	    syscall(SYS_setresgid, u->gid, u->gid, u->gid) != 0 ||
	    syscall(SYS_setresuid, u->uid, u->uid, u->uid) != 0 ||
	    (u->uid != 0 && syscall(SYS_setresuid, 0, 0, 0) == 0))
		_exit(125);
	static char buf[PATH_MAX];
	for (size_t i = 0; i < n; i++) {
		int rec[2] = {0, 0};
		if (!realpath(paths[i], buf))
			rec[0] = errno ? errno : EINVAL;
		else
			rec[1] = (int)strlen(buf);
		if (write_all(wfd, rec, sizeof rec) < 0 ||
		    (rec[1] && write_all(wfd, buf, (size_t)rec[1]) < 0))
			_exit(124);
	}
	_exit(0);
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int runas_realpath(const exec_user *u, const char *const *paths, size_t n, char **out,
		   int *errs, rl_err *err)
{
	if (n == 0)
		return 0;
	if (u->n_groups > RUNAS_MAX_GROUPS)
		return rl_err_set(err, RL_EINVAL, "uid %u has more than %d groups", (unsigned)u->uid,
				  RUNAS_MAX_GROUPS);
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0)
		return rl_err_sys(err, RL_EIO, errno, "resolving paths as uid %u", (unsigned)u->uid);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return rl_err_sys(err, RL_EIO, e, "resolving paths as uid %u", (unsigned)u->uid);
	}
	if (pid == 0) {
		close(p[0]);
		realpath_child(u, paths, n, p[1]);
	}
	close(p[1]);
	size_t got = 0;
	int bad = 0;
	for (; got < n; got++) {
		int rec[2];
		if (read_all(p[0], rec, sizeof rec) < 0 || rec[1] < 0 || rec[1] >= PATH_MAX) {
			bad = 1;
			break;
		}
		out[got] = NULL;
		errs[got] = rec[0];
		if (rec[1]) {
			char *s = malloc((size_t)rec[1] + 1);
			if (!s || read_all(p[0], s, (size_t)rec[1]) < 0) {
				free(s);
				bad = 1;
				break;
			}
			s[rec[1]] = '\0';
			out[got] = s;
		}
	}
	close(p[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (bad || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		for (size_t i = 0; i < got; i++) {
			free(out[i]);
			out[i] = NULL;
		}
		return rl_err_set(err, RL_EIO, "resolving paths as uid %u: the child %s",
				  (unsigned)u->uid,
				  WIFEXITED(status) && WEXITSTATUS(status) == 125
					  ? "could not take the user's rights"
					  : "failed");
	}
	return 0;
}
