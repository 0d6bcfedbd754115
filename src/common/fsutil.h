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

/* rm -r path, never following a link: each folder is opened relative to
 * the one above it (O_NOFOLLOW), so a link put in place of a folder while
 * this runs is removed as a link, and nothing outside path is touched,
 * whoever owns the files under it (relish serve removes its users'
 * checkpoint folders as root).  A path that is not there is 0.  0, or -1
 * with errno set (what was left is left). */
int rl_remove_tree(const char *path);

#endif
