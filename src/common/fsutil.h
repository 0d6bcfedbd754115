/*
 * fsutil.h - file-system helpers every layer needs.
 */
#ifndef RELISH_COMMON_FSUTIL_H
#define RELISH_COMMON_FSUTIL_H

#include <sys/types.h>

/* mkdir -p: path and every missing parent, each with mode; folders that
 * exist already (or links to them) are accepted.  0, or -1 with errno
 * set (ENAMETOOLONG for a path of PATH_MAX or more). */
int rl_mkdirs(const char *path, mode_t mode);

#endif
