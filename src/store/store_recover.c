/*
 * store_recover.c - what recovery needs beyond queries: naming a process
 * for good.  A pid alone is not enough after a restart (the kernel reuses
 * pids), so the store records the pid together with the process's start
 * time, field 22 of /proc/PID/stat (clock ticks after boot).  A segment found
 * "running" whose pid is alive with the same start time is relish's child
 * (adopt or kill it); anything else is gone (mark the segment lost and re-run
 * it from its checkpoint).
 */
#include "store/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int store_pid_start_time(pid_t pid, uint64_t *out, rl_err *err)
{
	if (pid <= 0)
		return rl_err_set(err, RL_EINVAL, "invalid pid %d", (int)pid);
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f) {
		if (errno == ENOENT)
			return rl_err_set(err, RL_ENOTFOUND, "no process %d", (int)pid);
		return rl_err_sys(err, RL_EIO, errno, "%s", path);
	}
	char buf[1024];
	size_t len = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[len] = '\0';
	/* Field 2 (comm) is in parentheses and may hold spaces and ')': fields
	 * after it start past the last ')'. */
	char *p = strrchr(buf, ')');
	if (!p)
		return rl_err_set(err, RL_EIO, "%s: unexpected format", path);
	p++;
	/* After ')' come fields 3, 4, ...; field 22 is the 20th of them. */
	for (int field = 3; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return rl_err_set(err, RL_EIO, "%s: too few fields", path);
	}
	char *end;
	errno = 0;
	unsigned long long v = strtoull(p + 1, &end, 10);
	if (errno || end == p + 1)
		return rl_err_set(err, RL_EIO, "%s: bad start time field", path);
	*out = (uint64_t)v;
	return 0;
}

int store_pid_is_ours(pid_t pid, uint64_t start_time)
{
	uint64_t t;
	if (store_pid_start_time(pid, &t, NULL) < 0)
		return 0;
	return t == start_time;
}
