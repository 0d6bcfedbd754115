/*
 * procid.c - process identity from /proc (procid.h).
 */
#include "common/procid.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int procid_parse_stat(const char *text, procid_stat *out, rl_err *err)
{
	/* "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	 *  majflt cmajflt utime stime cutime cstime priority nice threads
	 *  itrealvalue starttime vsize rss ..."; comm may contain ") ", so the
	 *  fields start after the last ')'. */
	const char *rp = strrchr(text, ')');
	if (!rp)
		return rl_err_set(err, RL_EPARSE, "/proc stat: no command name");
	procid_stat s = {0};
	s.pid = (pid_t)strtol(text, NULL, 10);
	const char *p = rp + 1;
	unsigned long long f[21]; /* fields 4..24 */
	while (*p == ' ')
		p++;
	if (!*p)
		return rl_err_set(err, RL_EPARSE, "/proc stat: truncated");
	s.state = *p++;
	for (int field = 4; field <= 24; field++) {
		while (*p == ' ')
			p++;
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		if (end == p || errno)
			return rl_err_set(err, RL_EPARSE, "/proc stat: field %d is not a number", field);
		f[field - 4] = (unsigned long long)(v < 0 ? 0 : v);
		p = end;
	}
	s.ppid = (pid_t)f[4 - 4];
	s.pgid = (pid_t)f[5 - 4];
	s.sid = (pid_t)f[6 - 4];
	s.start_time = f[22 - 4];
	s.rss_pages = f[24 - 4];
	*out = s;
	return 0;
}

int procid_read_stat(pid_t pid, procid_stat *out, rl_err *err)
{
	if (pid <= 0)
		return rl_err_set(err, RL_EINVAL, "invalid pid %d", (int)pid);
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ESRCH)
			return rl_err_set(err, RL_ENOTFOUND, "no process %d", (int)pid);
		return rl_err_sys(err, RL_EIO, errno, "%s", path);
	}
	ssize_t got = read(fd, buf, sizeof buf - 1);
	int e = errno;
	close(fd);
	if (got < 0) /* ESRCH: it exited between the open and the read */
		return e == ESRCH ? rl_err_set(err, RL_ENOTFOUND, "no process %d", (int)pid)
				  : rl_err_sys(err, RL_EIO, e, "%s", path);
	buf[got] = '\0';
	return procid_parse_stat(buf, out, err);
}

int procid_start_time(pid_t pid, uint64_t *out, rl_err *err)
{
	procid_stat st;
	int rc = procid_read_stat(pid, &st, err);
	if (rc < 0)
		return rc;
	*out = st.start_time;
	return 0;
}

int procid_matches(pid_t pid, uint64_t start_time)
{
	procid_stat st;
	if (pid <= 0 || start_time == 0 || procid_read_stat(pid, &st, NULL) < 0)
		return 0;
	return st.state != 'Z' && st.start_time == start_time;
}

int procid_kill_group(pid_t leader, uint64_t start_time, int sig)
{
	if (leader <= 0 || start_time == 0)
		return -1;
	procid_stat st;
	rl_err err;
	int rc = procid_read_stat(leader, &st, &err);
	if (rc == 0 && st.start_time != start_time)
		return -1; /* the pid is another process's now */
	if (rc < 0 && rc != RL_ENOTFOUND)
		return -1; /* cannot tell */
	if (kill(-leader, sig) < 0 && errno != ESRCH)
		return -1;
	return 0;
}
