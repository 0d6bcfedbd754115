/*
 * log.c - the service's log: one line per event on stderr,
 *   2024-05-01T12:00:00.123Z level=info event=http method=POST path=... status=201
 * so `grep event=submit` or `grep level=error` finds what happened.  Each
 * line is formatted first and written with one write(2), so lines from the
 * driver, the API and libmicrohttpd never interleave.
 */
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
