/*
 * procmem.c - /proc readers for process-group memory.
 * See procmem.h.  Linux only; on a system without /proc every call fails
 * with RL_EIO and the executor simply records no peak.
 */
#include "telemetry/procmem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/procid.h"

/* The start of /proc/PID/NAME into buf (n bytes, NUL-terminated); -1 when
 * the process is gone or the file unreadable. */
static int read_proc(pid_t pid, const char *name, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, buf, n - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = '\0';
	return 0;
}

int procmem_parse_hwm(const char *text, uint64_t *bytes)
{
	const char *p = strncmp(text, "VmHWM:", 6) == 0 ? text : strstr(text, "\nVmHWM:");
	if (!p)
		return -1;
	p += *p == '\n' ? 7 : 6;
	char *end;
	errno = 0;
	unsigned long long kib = strtoull(p, &end, 10);
	if (end == p || errno)
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	if (strncmp(end, "kB", 2) != 0)
		return -1;
	*bytes = (uint64_t)kib << 10;
	return 0;
}

uint64_t procmem_hwm(pid_t pid)
{
	char buf[4096];
	uint64_t b;
	if (read_proc(pid, "status", buf, sizeof buf) < 0 || procmem_parse_hwm(buf, &b) < 0)
		return 0;
	return b;
}

int procmem_sample(const pid_t *pgids, size_t n, uint64_t *rss, uint64_t *hwm, int *nproc,
		   rl_err *err)
{
	DIR *d = opendir("/proc");
	if (!d)
		return rl_err_sys(err, RL_EIO, errno, "opening /proc");
	for (size_t i = 0; i < n; i++) {
		rss[i] = 0;
		if (hwm)
			hwm[i] = 0;
		if (nproc)
			nproc[i] = 0;
	}
	long page = sysconf(_SC_PAGESIZE);
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		procid_stat st;
		if (procid_read_stat((pid_t)atoi(de->d_name), &st, NULL) < 0 || st.state == 'Z')
			continue;
		for (size_t i = 0; i < n; i++)
			if (pgids[i] > 0 && st.pgid == pgids[i]) {
				rss[i] += st.rss_pages * (uint64_t)page;
				if (hwm && st.pid == pgids[i])
					hwm[i] = procmem_hwm(st.pid);
				if (nproc)
					nproc[i]++;
			}
	}
	closedir(d);
	return 0;
}

int procmem_reset_hwm(pid_t pid, rl_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/clear_refs", (int)pid);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "opening %s", path);
	/* "5": reset the peak RSS (Linux 4.0 and later) */
	int rc = 0;
	if (write(fd, "5", 1) != 1)
		rc = rl_err_sys(err, RL_EIO, errno, "resetting the peak RSS of process %d", (int)pid);
	close(fd);
	return rc;
}

int procmem_group_alive(pid_t pgid)
{
	uint64_t rss;
	int n = 0;
	if (procmem_sample(&pgid, 1, &rss, NULL, &n, NULL) < 0)
		return 0;
	return n;
}
