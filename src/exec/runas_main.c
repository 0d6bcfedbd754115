/*
 * runas_main.c - relish-runas, the helper that runs a trial as its owner
 * (protocol in runas.h).  It is started by a root relish with an empty
 * environment (nothing of the submitter's reaches a program root runs:
 * LD_PRELOAD and its kin would be obeyed by the loader) and the trial's
 * standard streams already in place, and does, in order: the user's
 * process limit (RLIMIT_NPROC, while root, so the user cannot raise it), setgroups,
 * setgid, setuid (all or nothing), a check that the uid and gid stuck and
 * that root cannot be regained, reading the trial's environment from its
 * descriptor (as the user), chdir to the trial's folder (as the user, so
 * folder permissions apply), marking every descriptor above 2
 * close-on-exec, then exec of the trial with that environment.  Any
 * failure is reported as an errno on the inherited pipe and exit 127;
 * nothing runs with mixed credentials.  libc only, so the extra exec costs
 * well under a millisecond.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/version.h"

#define MAX_GROUPS 64
#define ENV_MAX (2u << 20) /* RUNAS_ENV_MAX */
#define ARG_FIRST 9        /* argv[9] is the program */

extern char **environ;

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

/* The environment from fd: NUL-separated NAME=VALUE strings (anything
 * else is dropped), at most ENV_MAX bytes.  Never returns NULL. */
static char **read_env(int fd)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf)
		fail(ENOMEM, "environment");
	for (;;) {
		if (len == cap) {
			if (cap >= ENV_MAX)
				fail(E2BIG, "environment");
			cap *= 2;
			char *nb = realloc(buf, cap + 1);
			if (!nb)
				fail(ENOMEM, "environment");
			buf = nb;
		}
		ssize_t r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail(errno, "reading the environment");
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = '\0';
	size_t n = 0;
	for (size_t i = 0; i < len; i++)
		n += buf[i] == '\0';
	char **env = calloc(n + 2, sizeof *env);
	if (!env)
		fail(ENOMEM, "environment");
	size_t k = 0;
	for (size_t i = 0; i < len;) {
		char *s = buf + i;
		size_t sl = strlen(s);
		char *eq = strchr(s, '=');
		if (eq && eq != s)
			env[k++] = s;
		i += sl + 1;
	}
	env[k] = NULL;
	return env;
}

/* Every descriptor above 2 close-on-exec: what relish (or whoever started
 * it) left open without the flag must not reach the trial. */
static void cloexec_rest(void)
{
#if defined(SYS_close_range)
	if (syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0)
		return;
#endif
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
			   ? (long)rl.rlim_cur
			   : 65536;
	if (max > 1 << 20)
		max = 1 << 20;
	for (int fd = 3; fd < max; fd++)
		fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* --help and --version (its manual page is made from them), on standard
 * output; relish itself never passes either. */
static int info(const char *arg)
{
	if (strcmp(arg, "--version") == 0) {
		printf("relish-runas %s\n", RELISH_VERSION);
		return 1;
	}
	if (strcmp(arg, "--help") != 0)
		return 0;
	printf("usage: relish-runas UID GID GROUPS NPROC CWD FD ENVFD -- PROGRAM [ARG...]\n"
	       "\n"
	       "Runs PROGRAM as a trial's owner.  relish serve, as root, starts it for\n"
	       "each trial of each submitter; nobody else needs to.  In order it lowers\n"
	       "the process limit to NPROC, sets the supplementary GROUPS (gids,\n"
	       "comma-separated), GID and UID, checks that root cannot be regained,\n"
	       "reads the trial's environment from descriptor ENVFD (NUL-separated\n"
	       "NAME=VALUE) as the user, changes to the folder CWD as the user, marks\n"
	       "every descriptor above 2 close-on-exec and executes PROGRAM.  A - for\n"
	       "GROUPS, NPROC, CWD or ENVFD means none (no limit, no folder change).\n"
	       "It starts with an empty environment: nothing of the submitter's\n"
	       "reaches a program root runs.\n"
	       "\n"
	       "Exit status: PROGRAM's; 127 when a step fails, its errno then written\n"
	       "to descriptor FD; 2 for a wrong command line.\n");
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && info(argv[1]))
		return 0;
	if (argc <= ARG_FIRST || strcmp(argv[ARG_FIRST - 1], "--") != 0) {
		fprintf(stderr, "usage: relish-runas UID GID GROUPS NPROC CWD FD ENVFD -- PROGRAM [ARG...]\n"
				"(started by relish serve to run a trial as its owner)\n");
		return 2;
	}
	report_fd = (int)number(argv[6], "FD");
	if (fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0)
		report_fd = -1;
	int env_fd = strcmp(argv[7], "-") != 0 ? (int)number(argv[7], "ENVFD") : -1;
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
	/* Counted by the kernel over all of the user's processes (fork fails
	 * with EAGAIN past it): a fork bomb fills the user's part of the
	 * process table, never all of it.  Hard as well as soft, and set as
	 * root, so the trial cannot raise it. */
	if (strcmp(argv[4], "-") != 0) {
		/* Only ever lowered: a hard limit already below it (a
		 * container's default, 1,024 under podman) stands, as raising
		 * it needs CAP_SYS_RESOURCE, which a contained service lacks. */
		struct rlimit np, now;
		np.rlim_cur = number(argv[4], "NPROC");
		if (getrlimit(RLIMIT_NPROC, &now) == 0 && now.rlim_max != RLIM_INFINITY &&
		    now.rlim_max < np.rlim_cur)
			np.rlim_cur = now.rlim_max;
		np.rlim_max = np.rlim_cur;
		if (setrlimit(RLIMIT_NPROC, &np) != 0)
			fail(errno, "setrlimit NPROC");
	}
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
	/* Only now, as the user: the trial's environment. */
	static char *empty[] = {NULL};
	environ = env_fd >= 0 ? read_env(env_fd) : empty;
	if (strcmp(argv[5], "-") != 0 && chdir(argv[5]) != 0)
		fail(errno, argv[5]);
	cloexec_rest();
	execvp(argv[ARG_FIRST], argv + ARG_FIRST);
	fail(errno, argv[ARG_FIRST]);
	return 127;
}
