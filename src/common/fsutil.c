/*
 * fsutil.c - file-system helpers every layer needs (fsutil.h).
 */
#include "common/fsutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Empty the folder open as dfd (closed here), depth first; depth bounds a
 * tree that would exhaust descriptors. */
static int empty_dir(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		errno = e;
		return -1;
	}
	int rc = 0, first_errno = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0 || errno == ENOENT)
			continue;
		if (errno != EISDIR && errno != EPERM) {
			/* EPERM: Linux's answer for unlink of a folder */
			if (!first_errno)
				first_errno = errno;
			continue;
		}
		int sub = depth < 256 ? openat(dirfd(d), de->d_name,
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
				      : -1;
		if (sub < 0 || empty_dir(sub, depth + 1) < 0 ||
		    (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0 && errno != ENOENT)) {
			if (!first_errno)
				first_errno = depth < 256 ? errno : ELOOP;
		}
	}
	closedir(d);
	if (first_errno) {
		errno = first_errno;
		rc = -1;
	}
	return rc;
}

int rl_remove_tree(const char *path)
{
	if (unlink(path) == 0 || errno == ENOENT)
		return 0; /* a file, a link, or nothing */
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -1;
	if (empty_dir(dfd, 0) < 0)
		return -1;
	return rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}
