/*
 * runas_main.c - relish-runas, the helper that runs a trial as its owner
 * (protocol in runas.h).  It is started by a root relish with the trial's
 * environment and standard streams already in place, and does, in order:
 * setgroups, setgid, setuid (all or nothing), a check that the uid and gid
 * stuck and that root cannot be regained, chdir to the trial's folder (as
 * the user, so folder permissions apply), then exec of the trial.  Any
 * failure is reported as an errno on the inherited pipe and exit 127;
 * nothing runs with mixed credentials.  libc only, so the extra exec costs
 * well under a millisecond.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_GROUPS 64

static int report_fd = -1;

static void fail(int code, const char *what)
{
	if (report_fd >= 0) {
		ssize_t r = write(report_fd, &code, sizeof code);
		(void)r;
	}
	fprintf(stderr, "relish-runas: %s: %s\n", what, strerror(code));
	_exit(127);
}

static unsigned long number(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end)
		fail(EINVAL, what);
	return v;
}

int main(int argc, char **argv)
{
	if (argc < 8 || strcmp(argv[6], "--") != 0) {
		fprintf(stderr, "usage: relish-runas UID GID GROUPS CWD FD -- PROGRAM [ARG...]\n"
				"(started by relish serve to run a trial as its owner)\n");
		return 2;
	}
	report_fd = (int)number(argv[5], "FD");
	if (fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0)
		report_fd = -1;
	uid_t uid = (uid_t)number(argv[1], "UID");
	gid_t gid = (gid_t)number(argv[2], "GID");
	gid_t groups[MAX_GROUPS];
	size_t ng = 0;
	if (strcmp(argv[3], "-") != 0) {
		char *list = argv[3];
		for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
			if (ng == MAX_GROUPS)
				fail(E2BIG, "too many groups");
			groups[ng++] = (gid_t)number(tok, "GROUPS");
		}
	}
	if (uid == 0)
		fail(EPERM, "refusing to run a trial as root through relish-runas");
	if (setgroups(ng, groups) != 0)
		fail(errno, "setgroups");
	if (setgid(gid) != 0)
		fail(errno, "setgid");
	if (setuid(uid) != 0)
		fail(errno, "setuid");
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid)
		fail(EPERM, "credentials did not change");
	if (setuid(0) == 0)
		fail(EPERM, "root could be regained");
	if (strcmp(argv[4], "-") != 0 && chdir(argv[4]) != 0)
		fail(errno, argv[4]);
	execvp(argv[7], argv + 7);
	fail(errno, argv[7]);
	return 127;
}
