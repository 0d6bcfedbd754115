/*
 * fsutil.c - file-system helpers every layer needs (fsutil.h).
 */
#include "common/fsutil.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

int rl_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	if (n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, mode) != 0 && errno != EEXIST ? -1 : 0;
}
