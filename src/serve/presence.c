/*
 * presence.c - a running `relish serve` can be found on this machine
 * whatever its state folder (serve.h, "presence"), so that `relish run`,
 * which would use every device the service owns, refuses to start beside
 * it (docs/serve.md).
 *
 * The service binds an abstract unix socket (Linux: a name in the network
 * namespace, no file) named "relish/serve/<machine>/<pid>/<address>",
 * <address> being where clients reach it and <machine> "-", or
 * $RELISH_MACHINE where that names the devices' owner otherwise (the test
 * suite gives each test its own, so that tests running side by side, each
 * with its own fake devices, do not refuse each other); `relish run`
 * reads /proc/net/unix, which lists every bound socket of the namespace,
 * abstract ones with a leading '@'.  Rejected alternatives: a file in a well-known folder (stale after a
 * kill -9, and /tmp is private to a unit with PrivateTmp=; /run needs
 * root); scanning /proc for processes named relish (a renamed binary, or
 * a read-only service that owns no device, would fool it).  The kernel
 * removes the name with the last descriptor, so a killed service leaves
 * nothing behind; the socket is close-on-exec, so no trial holds it.
 *
 * Anyone may bind any abstract name, so a name alone proves nothing: a
 * user who bound one would stop every other user's `relish run` (a denial
 * of service).  The socket listens, and `relish run` connects to it and
 * reads who listens (SO_PEERCRED: the kernel's word, set at listen()):
 * only root, or the caller itself, with the pid the name gives, counts.  A
 * service run by another unprivileged user is not believed (it could be
 * anyone's); docs/serve.md says so.  The service accepts and closes
 * these connections at once (serve_presence_answer, on its loop; a
 * connection is queued, and its credentials read, before it is accepted,
 * so a busy loop delays nothing).
 */
#include "serve/serve.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PRESENCE_PREFIX "relish/serve/"

/* "relish/serve/<machine>/" into buf. */
static size_t presence_prefix(char *buf, size_t n)
{
	const char *m = getenv("RELISH_MACHINE");
	int k = snprintf(buf, n, PRESENCE_PREFIX "%s/", m && *m ? m : "-");
	return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

int serve_presence_announce(const char *addr, int *fd_out, rl_err *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char prefix[64];
	presence_prefix(prefix, sizeof prefix);
	/* sun_path[0] = '\0': abstract.  An address too long to fit is cut:
	 * the pid before it is what identifies the service. */
	int n = snprintf(sa.sun_path + 1, sizeof sa.sun_path - 1, "%s%d/%s", prefix,
			 (int)getpid(), addr ? addr : "");
	size_t len = n < 0 ? 0 : (size_t)n < sizeof sa.sun_path - 1 ? (size_t)n : sizeof sa.sun_path - 2;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "announcing the service on this machine");
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) < 0 ||
	    listen(fd, 64) < 0) {
		int e = errno;
		close(fd);
		return rl_err_sys(err, RL_EIO, e, "announcing the service on this machine");
	}
	*fd_out = fd;
	return 0;
}

void serve_presence_answer(int fd)
{
	for (int i = 0; i < 256; i++) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return;
		close(c);
	}
}

/* Who listens on the abstract name (len bytes): 0 with its credentials,
 * -1 when nobody does (or a full queue: not believed either). */
static int presence_owner(const char *name, size_t len, struct ucred *cr)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (len == 0 || len > sizeof sa.sun_path - 1)
		return -1;
	memcpy(sa.sun_path + 1, name, len);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	socklen_t cl = sizeof *cr;
	int rc = connect(fd, (struct sockaddr *)&sa,
			 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) == 0 &&
				 getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cr, &cl) == 0
			 ? 0
			 : -1;
	close(fd);
	return rc;
}

int serve_presence_find(pid_t *pid, char *addr, size_t addr_n)
{
	FILE *f = fopen("/proc/net/unix", "r");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	pid_t self = getpid();
	char prefix[64];
	size_t plen = presence_prefix(prefix, sizeof prefix);
	while (!found && getline(&line, &cap, f) > 0) {
		/* "Num RefCount Protocol Flags Type St Inode Path": the path
		 * is what follows the seventh field. */
		char *p = line;
		for (int field = 0; field < 7 && p; field++) {
			p += strspn(p, " ");
			p = strchr(p, ' ');
		}
		if (!p)
			continue;
		p += strspn(p, " ");
		if (*p != '@' || strncmp(p + 1, prefix, plen) != 0)
			continue;
		char *name = p + 1;
		name[strcspn(name, "\n")] = '\0';
		p += 1 + plen;
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || *end != '/' || v <= 0 || (pid_t)v == self)
			continue;
		end++;
		struct ucred cr;
		if (presence_owner(name, strlen(name), &cr) < 0 || cr.pid != (pid_t)v ||
		    (cr.uid != 0 && cr.uid != getuid()))
			continue; /* a name anyone could have bound */
		*pid = (pid_t)v;
		snprintf(addr, addr_n, "%s", end);
		found = 1;
	}
	free(line);
	fclose(f);
	return found;
}
