/*
 * runas.c - the parent's side of running a trial as another user (see
 * runas.h): the helper's command line, the error pipe, and finding the
 * helper program.
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
#include <sys/wait.h>
#include <unistd.h>

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
	rs->argv = NULL;
	rs->pipe_rd = rs->pipe_wr = -1;
}

int runas_spawn_prepare(runas_spawn *rs, const exec_user *u, char *const *argv,
			const char *cwd, const char **file, char ***args, int *extra_fd,
			rl_err *err)
{
	memset(rs, 0, sizeof *rs);
	rs->pipe_rd = rs->pipe_wr = -1;
	if (!u->helper || !*u->helper)
		return rl_err_set(err, RL_EINTERNAL, "no %s program to run trials as uid %u",
				  RUNAS_HELPER_NAME, (unsigned)u->uid);
	if (u->n_groups > RUNAS_MAX_GROUPS)
		return rl_err_set(err, RL_EINVAL, "uid %u has %zu groups; at most %d are kept",
				  (unsigned)u->uid, u->n_groups, RUNAS_MAX_GROUPS);
	size_t n = 0;
	while (argv[n])
		n++;
	/* helper UID GID GROUPS CWD FD -- argv... NULL */
	rs->argv = calloc(n + 8, sizeof *rs->argv);
	if (!rs->argv)
		return rl_err_set(err, RL_ENOMEM, "run-as command");
	char groups[RUNAS_MAX_GROUPS * 12 + 2] = "-";
	size_t off = 0;
	for (size_t i = 0; i < u->n_groups; i++)
		off += (size_t)snprintf(groups + off, sizeof groups - off, "%s%u", i ? "," : "",
					(unsigned)u->groups[i]);
	char num[3][24];
	snprintf(num[0], sizeof num[0], "%u", (unsigned)u->uid);
	snprintf(num[1], sizeof num[1], "%u", (unsigned)u->gid);
	snprintf(num[2], sizeof num[2], "%d", RUNAS_FD);
	const char *head[] = {u->helper, num[0], num[1], groups, cwd && *cwd ? cwd : "-",
			      num[2], "--"};
	size_t k = 0;
	for (; k < sizeof head / sizeof head[0]; k++)
		if (!(rs->argv[k] = strdup(head[k])))
			goto oom;
	for (size_t i = 0; i < n; i++, k++)
		if (!(rs->argv[k] = strdup(argv[i])))
			goto oom;
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
	*extra_fd = rs->pipe_wr;
	return 0;
oom:
	runas_spawn_done(rs);
	return rl_err_set(err, RL_ENOMEM, "run-as command");
}

int runas_spawn_wait(runas_spawn *rs, pid_t pid)
{
	/* Our write end must go, or EOF never comes. */
	close(rs->pipe_wr);
	rs->pipe_wr = -1;
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

int runas_helper_find(char *buf, size_t len, rl_err *err)
{
	const char *env = getenv("RELISH_RUNAS");
	if (env && *env) {
		if (!executable(env))
			return rl_err_sys(err, RL_ENOTFOUND, errno, "RELISH_RUNAS=%s", env);
		snprintf(buf, len, "%s", env);
		return 0;
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
		return 0;
	}
	if (executable(b)) {
		snprintf(buf, len, "%s", b);
		return 0;
	}
	return rl_err_set(err, RL_ENOTFOUND,
			  "%s not found (looked at %s and %s): it is built beside relish "
			  "(scripts/demo.sh and `make build` build it; alone: scripts/build.sh "
			  "release %s) and `make install` installs it beside relish; "
			  "RELISH_RUNAS=PATH names another",
			  RUNAS_HELPER_NAME, a, b, RUNAS_HELPER_NAME);
}
