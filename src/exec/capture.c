/*
 * capture.c - a tool run to its end with its output captured (capture.h):
 * the one blocking way relish starts a tool.  posix_spawnp, both pipes
 * read with poll until the tool closes them, then the tool reaped.
 */
#include "exec/capture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct sink {
	char *buf;
	size_t len, cap, max; /* max: keep the last max bytes (0: all) */
	int failed;
} sink;

static void sink_add(sink *s, const char *p, size_t n)
{
	if (s->failed)
		return;
	if (s->max && n >= s->max) {
		p += n - s->max;
		n = s->max;
		s->len = 0;
	} else if (s->max && s->len + n > s->max) {
		size_t drop = s->len + n - s->max;
		memmove(s->buf, s->buf + drop, s->len - drop);
		s->len -= drop;
	}
	if (s->len + n + 1 > s->cap) {
		size_t c = (s->len + n + 1) * 2;
		char *q = realloc(s->buf, c);
		if (!q) {
			s->failed = 1;
			return;
		}
		s->buf = q;
		s->cap = c;
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	s->buf[s->len] = '\0';
}

int capture_run(char *const *argv, char *const *envp, char **out, char **err_text, rl_err *err)
{
	return capture_run_in(NULL, argv, envp, out, err_text, err);
}

int capture_run_in(const char *cwd, char *const *argv, char *const *envp, char **out,
		   char **err_text, rl_err *err)
{
	int po[2], pe[2];
	if (pipe2(po, O_CLOEXEC) < 0)
		return rl_err_sys(err, RL_EIO, errno, "running %s", argv[0]);
	if (pipe2(pe, O_CLOEXEC) < 0) {
		int e = errno;
		close(po[0]);
		close(po[1]);
		return rl_err_sys(err, RL_EIO, e, "running %s", argv[0]);
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (cwd)
		posix_spawn_file_actions_addchdir_np(&fa, cwd);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	pid_t pid;
	int src = posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (src != 0) {
		close(po[0]);
		close(pe[0]);
		return rl_err_sys(err, RL_ERUNTIME, src, "cannot run %s", argv[0]);
	}
	sink s[2] = {{0}, {.max = CAPTURE_ERR_MAX}};
	struct pollfd pf[2] = {{.fd = po[0], .events = POLLIN}, {.fd = pe[0], .events = POLLIN}};
	int open_fds = 2, read_errno = 0;
	while (open_fds > 0) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			read_errno = errno;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[8192];
			ssize_t r = read(pf[i].fd, buf, sizeof buf);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				if (r < 0)
					read_errno = errno;
				close(pf[i].fd);
				pf[i].fd = -1;
				open_fds--;
				continue;
			}
			sink_add(&s[i], buf, (size_t)r);
		}
	}
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	for (int i = 0; i < 2 && !s[i].failed; i++)
		if (!s[i].buf && !(s[i].buf = calloc(1, 1)))
			s[i].failed = 1;
	if (s[0].failed || s[1].failed || read_errno) {
		free(s[0].buf);
		free(s[1].buf);
		if (read_errno)
			return rl_err_sys(err, RL_EIO, read_errno, "reading what %s printed", argv[0]);
		return rl_err_set(err, RL_ENOMEM, "keeping what %s printed", argv[0]);
	}
	while (s[1].len > 0 && (s[1].buf[s[1].len - 1] == '\n' || s[1].buf[s[1].len - 1] == '\r'))
		s[1].buf[--s[1].len] = '\0';
	if (out)
		*out = s[0].buf;
	else
		free(s[0].buf);
	if (err_text)
		*err_text = s[1].buf;
	else
		free(s[1].buf);
	return rc;
}
