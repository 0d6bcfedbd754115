/*
 * log.c - the service's log: one line per event on stderr (or --log-file,
 * opened onto stderr so libmicrohttpd's and the driver's lines go there
 * too, and opened again on SIGHUP after logrotate moved it),
 *   2024-05-01T12:00:00.123Z level=info event=http method=POST path=... status=201
 * so `grep event=submit` or `grep level=error` finds what happened.  Each
 * line is formatted first and written with one write(2), so lines from the
 * driver, the API and libmicrohttpd never interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve.h"

static void vlog(const char *level, const char *event, const char *fmt, va_list ap)
{
	char line[2048];
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct tm tm;
	gmtime_r(&tv.tv_sec, &tm);
	size_t n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ level=%s event=%s ",
			      (long)(tv.tv_usec / 1000), level, event);
	if (n < sizeof line)
		n += (size_t)vsnprintf(line + n, sizeof line - n, fmt, ap);
	if (n >= sizeof line - 1)
		n = sizeof line - 2;
	/* One event, one line: newlines inside a message become spaces. */
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, n);
	(void)w;
}

void serve_log(const char *level, const char *event, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog(level, event, fmt, ap);
	va_end(ap);
}

void serve_log_cb(void *ctx, const char *level, const char *event, const char *fmt, ...)
{
	(void)ctx;
	va_list ap;
	va_start(ap, fmt);
	vlog(level, event, fmt, ap);
	va_end(ap);
}

static char log_path[PATH_MAX]; /* --log-file, "" none: stderr as it is */

int serve_log_open(const char *path, rl_err *err)
{
	if (path) {
		if (snprintf(log_path, sizeof log_path, "%s", path) >= (int)sizeof log_path)
			return rl_err_set(err, RL_EINVAL, "--log-file %s: path too long", path);
	}
	if (!log_path[0])
		return 0;
	/* Append, never follow a link planted where the log goes; 0640. */
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "--log-file %s", log_path);
	int rc = dup2(fd, STDERR_FILENO) < 0 ? rl_err_sys(err, RL_EIO, errno, "--log-file %s",
							 log_path)
					      : 0;
	close(fd);
	return rc;
}

void serve_log_reopen(void)
{
	if (!log_path[0])
		return;
	rl_err err;
	rl_err_clear(&err);
	if (serve_log_open(NULL, &err) < 0) /* the old file stays in use */
		serve_log("error", "serve.log", "msg=\"%s; still writing to the old file\"", err.msg);
	else
		serve_log("info", "serve.log", "file=%s msg=\"reopened\"", log_path);
}
