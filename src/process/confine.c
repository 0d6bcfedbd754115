/*
 * confine.c - confinement of a trial process and all it starts (confine.h).
 *
 * Why cgroups first and not relish as child subreaper: a subreaper inherits
 * every orphan below it, including the container monitors that podman
 * double-forks on purpose, and libuv reaps only the children it spawned, so
 * relish would collect zombies it could not reap without stealing libuv's
 * exit statuses.  A cgroup holds a trial's descendants however they
 * detach, is killed in one write, and after a crash still names what the
 * dead relish left behind.  The /proc tracking below is the fallback for
 * machines where no cgroup is writable.
 */
#include "process/confine.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/procid.h"
#include "exec/spawn.h"
#include "telemetry/procmem.h"

#define FREEZE_WAIT_MS 100  /* cgroup v1: wait for FROZEN at most */
#define KILL_ROUNDS 50      /* kill-every-member rounds without cgroup.kill */

/* A process remembered by pid and start time (proc tracking). */
typedef struct member {
	pid_t pid;
	uint64_t start;
} member;

struct confine_unit {
	confine_unit *next;
	pid_t leader;
	uint64_t leader_start;
	char dir[PATH_MAX];         /* cgroup directory; "" without one */
	int join_fd;                /* dir's join file until the spawn; -1 */
	int dir_fd;                 /* v2: dir itself until the spawn; -1 */
	int tracked;                /* proc tracking (no cgroup for this unit) */
	member *known;              /* proc: every member seen */
	size_t n_known, cap_known;
	uint64_t rss;               /* proc, group: from the last scan */
	int n_members;
	pid_t *pids;                /* proc, group: the members of the last scan */
	size_t cap_pids;
	int scanned;
	char cpu_dir[PATH_MAX];     /* cgroup v1 cpu: its own cgroup there; "" none */
	int cpu_join_fd;            /* cpu_dir's join file until the spawn; -1 */
};

struct confine {
	exec_confine kind;
	char mount[PATH_MAX];       /* cgroup hierarchy mount point */
	char own[PATH_MAX];         /* relish's cgroup directory (mount + path) */
	char parent[PATH_MAX];      /* own/relish.<pid>.<start>.<k> */
	char desc[PATH_MAX + 64];
	unsigned seq;
	size_t swept;
	confine_unit *units;        /* live units (proc/group scans) */
	char **dead;                /* cgroup dirs awaiting rmdir */
	size_t n_dead, cap_dead;
	/* CPU limits (confine_cpu_setup): 2, cpu.max in each v2 unit; 1, a
	 * cgroup of the v1 cpu hierarchy per unit (CFS quota); 0 none. */
	int cpu;
	char cpu_parent[PATH_MAX];  /* v1: <cpu mount><own path>/relish.<pid>.<start>.<k> */
	unsigned cpu_seq;
};

const char *exec_confine_name(exec_confine k)
{
	switch (k) {
	case EXEC_CONFINE_AUTO:
		return "auto";
	case EXEC_CONFINE_CGROUP2:
		return "cgroup2";
	case EXEC_CONFINE_CGROUP1:
		return "cgroup1";
	case EXEC_CONFINE_PROC:
		return "proc";
	case EXEC_CONFINE_GROUP:
		return "group";
	}
	return "unknown";
}

/* ---- small file helpers ------------------------------------------------- */

static int write_str(const char *dir, const char *file, const char *text)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = strlen(text);
	ssize_t w = write(fd, text, n);
	int e = errno;
	close(fd);
	errno = e;
	return w == (ssize_t)n ? 0 : -1;
}

/* The pids listed in dir/cgroup.procs (at most max); -1 when unreadable. */
static int read_procs(const char *dir, pid_t *out, size_t max)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int n = 0;
	long v;
	while ((size_t)n < max && fscanf(f, "%ld", &v) == 1)
		out[n++] = (pid_t)v;
	fclose(f);
	return n;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- finding relish's own cgroup ------------------------------------------ */

/* The mount point of the hierarchy (v2: fstype cgroup2; v1: a cgroup mount
 * whose options hold controller) and the root of that mount within it. */
static int find_mount(int v2, const char *controller, char *mnt, size_t n, char *root, size_t rn)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -1;
	char line[4096];
	int found = -1;
	while (found < 0 && fgets(line, sizeof line, f)) {
		/* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
		char *sep = strstr(line, " - ");
		if (!sep)
			continue;
		char r[PATH_MAX], m[PATH_MAX], fstype[64], src[256], sopts[1024] = "";
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(sep + 3, "%63s %255s %1023s", fstype, src, sopts) < 2)
			continue;
		if (v2 ? strcmp(fstype, "cgroup2") != 0 : strcmp(fstype, "cgroup") != 0)
			continue;
		if (!v2) {
			int has = 0;
			for (char *save = NULL, *o = strtok_r(sopts, ",", &save); o; o = strtok_r(NULL, ",", &save))
				has |= !strcmp(o, controller);
			if (!has)
				continue;
		}
		snprintf(mnt, n, "%s", m);
		snprintf(root, rn, "%s", r);
		found = 0;
	}
	fclose(f);
	return found;
}

/* relish's path in the hierarchy: the "0::" line (v2) or the line naming
 * controller (v1) of /proc/self/cgroup. */
static int own_path(int v2, const char *controller, char *out, size_t n)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -1;
	char line[4096];
	int found = -1;
	while (found < 0 && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		const char *ctrls = c1 + 1;
		int match = 0;
		if (v2) {
			match = !strcmp(line, "0") && !*ctrls;
		} else {
			char buf[256];
			snprintf(buf, sizeof buf, "%s", ctrls);
			for (char *save = NULL, *o = strtok_r(buf, ",", &save); o; o = strtok_r(NULL, ",", &save))
				match |= !strcmp(o, controller);
		}
		if (match) {
			snprintf(out, n, "%s", c2 + 1);
			found = 0;
		}
	}
	fclose(f);
	return found;
}

/* Where a process joins by writing "0" (v1: the writing thread; the
 * trial's child is a single thread then). */
static const char *join_file(const confine *c)
{
	return c->kind == EXEC_CONFINE_CGROUP1 ? "tasks" : "cgroup.procs";
}

static int open_join(const confine *c, const char *dir)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%s", dir, join_file(c));
	return open(path, O_WRONLY | O_CLOEXEC);
}

/* ---- killing a cgroup ------------------------------------------------------- */

/* SIGKILL everything in the cgroup at dir.  v2: cgroup.kill when the kernel
 * has it (5.14+); v1: freeze first so that no member forks meanwhile;
 * otherwise rounds of kill-every-listed-member. */
static void cgroup_kill(exec_confine kind, const char *dir)
{
	if (kind == EXEC_CONFINE_CGROUP2 && write_str(dir, "cgroup.kill", "1") == 0)
		return;
	int frozen = 0;
	if (kind == EXEC_CONFINE_CGROUP1 && write_str(dir, "freezer.state", "FROZEN") == 0) {
		char path[PATH_MAX + 32], st[32];
		snprintf(path, sizeof path, "%s/freezer.state", dir);
		for (int i = 0; i < FREEZE_WAIT_MS && !frozen; i++) {
			FILE *f = fopen(path, "re");
			if (f) {
				frozen = fgets(st, sizeof st, f) && !strncmp(st, "FROZEN", 6);
				fclose(f);
			}
			if (!frozen)
				sleep_ms(1);
		}
	}
	pid_t pids[512];
	for (int round = 0; round < KILL_ROUNDS; round++) {
		int n = read_procs(dir, pids, sizeof pids / sizeof *pids);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		if (frozen)
			break; /* nobody could fork: one round took them all */
	}
	if (kind == EXEC_CONFINE_CGROUP1)
		write_str(dir, "freezer.state", "THAWED");
}

/* rmdir now, or keep dir for a later try. */
static void cgroup_remove(confine *c, const char *dir)
{
	if (rmdir(dir) == 0 || errno == ENOENT)
		return;
	if (c->n_dead == c->cap_dead) {
		size_t cap = c->cap_dead ? c->cap_dead * 2 : 8;
		char **v = realloc(c->dead, cap * sizeof *v);
		if (!v)
			return; /* swept by the next relish */
		c->dead = v;
		c->cap_dead = cap;
	}
	char *d = strdup(dir);
	if (d)
		c->dead[c->n_dead++] = d;
}

static void retry_dead(confine *c)
{
	size_t k = 0;
	for (size_t i = 0; i < c->n_dead; i++) {
		if (rmdir(c->dead[i]) == 0 || errno == ENOENT) {
			free(c->dead[i]);
			continue;
		}
		if (errno == EBUSY)
			cgroup_kill(c->kind, c->dead[i]);
		c->dead[k++] = c->dead[i];
	}
	c->n_dead = k;
}

/* ---- set-up: probe a hierarchy, sweep what dead relish processes left --------- */

/* Kill and remove every relish.<pid>.<start>.<k> directory under own whose
 * relish is gone (its units, then itself). */
static void sweep_stale(confine *c)
{
	DIR *d = opendir(c->own);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		long pid;
		unsigned long long st;
		unsigned k;
		char tail;
		if (sscanf(e->d_name, "relish.%ld.%llu.%u%c", &pid, &st, &k, &tail) != 3)
			continue;
		if (procid_matches((pid_t)pid, (uint64_t)st))
			continue; /* a running relish's: not ours to touch */
		char pdir[PATH_MAX];
		snprintf(pdir, sizeof pdir, "%s/%s", c->own, e->d_name);
		DIR *u = opendir(pdir);
		if (u) {
			for (struct dirent *ue; (ue = readdir(u));) {
				if (ue->d_name[0] == '.')
					continue;
				char udir[PATH_MAX + 16];
				snprintf(udir, sizeof udir, "%s/%s", pdir, ue->d_name);
				cgroup_kill(c->kind, udir);
				for (int i = 0; i < 100 && rmdir(udir) < 0 && errno == EBUSY; i++)
					sleep_ms(1);
				c->swept++;
			}
			closedir(u);
		}
		rmdir(pdir);
	}
	closedir(d);
}

/* Set c up for the hierarchy (kind v2 or v1 freezer) and prove that relish
 * can create a cgroup there and that a child can join it (relish itself
 * never enters one).  0, or -1 with why. */
static int cgroup_setup(confine *c, exec_confine kind, char *why, size_t wn)
{
	int v2 = kind == EXEC_CONFINE_CGROUP2;
	const char *ctl = v2 ? NULL : "freezer";
	char root[PATH_MAX], path[PATH_MAX];
	c->kind = kind;
	if (find_mount(v2, ctl, c->mount, sizeof c->mount, root, sizeof root) < 0) {
		snprintf(why, wn, "no %s hierarchy is mounted", v2 ? "cgroup v2" : "cgroup v1 freezer");
		return -1;
	}
	if (own_path(v2, ctl, path, sizeof path) < 0) {
		snprintf(why, wn, "/proc/self/cgroup names no %s cgroup", v2 ? "v2" : "freezer");
		return -1;
	}
	/* The mount shows the hierarchy from root down. */
	size_t rl = strlen(root);
	const char *rel = path;
	if (strcmp(root, "/") != 0) {
		if (strncmp(path, root, rl) != 0 || (path[rl] && path[rl] != '/')) {
			snprintf(why, wn, "relish's cgroup %s is outside the mounted %s", path, root);
			return -1;
		}
		rel = path + rl;
	}
	snprintf(c->own, sizeof c->own, "%s%s", c->mount, strcmp(rel, "/") ? rel : "");
	uint64_t st = 0;
	if (procid_start_time(getpid(), &st, NULL) < 0) {
		snprintf(why, wn, "cannot read relish's own start time");
		return -1;
	}
	/* One directory per executor: a relish may hold several. */
	static unsigned instances;
	snprintf(c->parent, sizeof c->parent, "%s/relish.%ld.%llu.%u", c->own, (long)getpid(),
		 (unsigned long long)st, ++instances);
	if (mkdir(c->parent, 0755) < 0 && errno != EEXIST) {
		snprintf(why, wn, "cannot create %s: %s", c->parent, strerror(errno));
		return -1;
	}
	/* A throwaway child joins a probe cgroup, as every trial will. */
	char probe[PATH_MAX + 16];
	snprintf(probe, sizeof probe, "%s/probe", c->parent);
	if (mkdir(probe, 0755) < 0 && errno != EEXIST) {
		snprintf(why, wn, "cannot create %s: %s", probe, strerror(errno));
		rmdir(c->parent);
		return -1;
	}
	int fd = open_join(c, probe);
	int rc = fd < 0 ? -errno : spawn_probe_join(fd);
	if (fd >= 0)
		close(fd);
	if (rc < 0) {
		snprintf(why, wn, "a child cannot join %s: %s", probe, strerror(-rc));
		rmdir(probe);
		rmdir(c->parent);
		return -1;
	}
	/* The probe child is reaped: the cgroup is empty (a v1 exit may take
	 * a moment to leave it). */
	for (int i = 0; i < 100 && rmdir(probe) < 0 && errno == EBUSY; i++)
		sleep_ms(1);
	sweep_stale(c);
	snprintf(c->desc, sizeof c->desc, "%s (%s)", v2 ? "cgroup v2" : "cgroup v1 freezer", c->parent);
	return 0;
}

int confine_new(exec_confine want, confine **out, rl_err *err)
{
	confine *c = calloc(1, sizeof *c);
	if (!c)
		return rl_err_set(err, RL_ENOMEM, "process confinement");
	if (want == EXEC_CONFINE_AUTO) {
		const char *env = getenv("RELISH_CONFINE");
		if (env && *env) {
			exec_confine k;
			for (k = EXEC_CONFINE_CGROUP2; k <= EXEC_CONFINE_GROUP; k++)
				if (!strcmp(env, exec_confine_name(k)))
					break;
			if (k > EXEC_CONFINE_GROUP) {
				free(c);
				return rl_err_set(err, RL_EINVAL, "RELISH_CONFINE=%s: expected cgroup2, "
						  "cgroup1, proc or group", env);
			}
			want = k;
		}
	}
	char why2[PATH_MAX + 80] = "", why1[PATH_MAX + 80] = "";
	int ok = 0;
	switch (want) {
	case EXEC_CONFINE_AUTO:
		ok = cgroup_setup(c, EXEC_CONFINE_CGROUP2, why2, sizeof why2) == 0 ||
		     cgroup_setup(c, EXEC_CONFINE_CGROUP1, why1, sizeof why1) == 0;
		if (!ok) {
			c->kind = EXEC_CONFINE_PROC;
			snprintf(c->desc, sizeof c->desc,
				 "/proc tracking (no writable cgroup: %.200s; %.200s)", why2, why1);
			ok = 1;
		}
		break;
	case EXEC_CONFINE_CGROUP2:
	case EXEC_CONFINE_CGROUP1:
		if (cgroup_setup(c, want, why2, sizeof why2) < 0) {
			free(c);
			return rl_err_set(err, RL_EUNSUPPORTED, "confining trials in %s: %s",
					  exec_confine_name(want), why2);
		}
		ok = 1;
		break;
	case EXEC_CONFINE_PROC:
		c->kind = want;
		snprintf(c->desc, sizeof c->desc, "/proc tracking");
		ok = 1;
		break;
	case EXEC_CONFINE_GROUP:
		c->kind = want;
		snprintf(c->desc, sizeof c->desc, "process group");
		ok = 1;
		break;
	}
	(void)ok;
	*out = c;
	return 0;
}

/* ---- CPU limits ------------------------------------------------------------------ */

#define CPU_PERIOD_US 100000

/* Does the cgroup v2 folder dir offer the cpu controller to its children
 * (its cgroup.controllers lists "cpu")? */
static int v2_has_cpu(const char *dir, const char *file)
{
	char path[PATH_MAX + 32], line[1024] = "";
	snprintf(path, sizeof path, "%s/%s", dir, file);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int has = 0;
	if (fgets(line, sizeof line, f))
		for (char *save = NULL, *w = strtok_r(line, " \n", &save); w;
		     w = strtok_r(NULL, " \n", &save))
			has |= !strcmp(w, "cpu");
	fclose(f);
	return has;
}

int confine_cpu_setup(confine *c, char *why, size_t wn)
{
	if (c->cpu)
		return 0;
	char v2why[PATH_MAX + 80] = "no cgroup v2 units";
	if (c->kind == EXEC_CONFINE_CGROUP2) {
		/* The controller must reach relish's folder's children: its
		 * own folder enables it for them (refused while relish's folder
		 * holds processes, unless it is the root: the kernel keeps
		 * controllers off folders with processes of their own). */
		if (!v2_has_cpu(c->parent, "cgroup.controllers") && v2_has_cpu(c->own, "cgroup.controllers"))
			write_str(c->own, "cgroup.subtree_control", "+cpu");
		if (!v2_has_cpu(c->parent, "cgroup.controllers")) {
			snprintf(v2why, sizeof v2why, "the cgroup v2 cpu controller is not delegated to %s",
				 c->own);
		} else if (write_str(c->parent, "cgroup.subtree_control", "+cpu") < 0) {
			snprintf(v2why, sizeof v2why, "cannot enable cpu in %s: %s", c->parent,
				 strerror(errno));
		} else {
			c->cpu = 2;
			return 0;
		}
	}
	/* The v1 cpu hierarchy, beside whatever confines (the hybrid layout). */
	char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX];
	if (find_mount(0, "cpu", mnt, sizeof mnt, root, sizeof root) < 0 ||
	    own_path(0, "cpu", path, sizeof path) < 0) {
		snprintf(why, wn, "%s; no cgroup v1 cpu hierarchy", v2why);
		return -1;
	}
	size_t rl = strlen(root);
	const char *rel = path;
	if (strcmp(root, "/") != 0) {
		if (strncmp(path, root, rl) != 0 || (path[rl] && path[rl] != '/')) {
			snprintf(why, wn, "%s; relish's cpu cgroup is outside the mounted one", v2why);
			return -1;
		}
		rel = path + rl;
	}
	uint64_t st = 0;
	procid_start_time(getpid(), &st, NULL);
	static unsigned instances;
	snprintf(c->cpu_parent, sizeof c->cpu_parent, "%s%s/relish.%ld.%llu.%u", mnt,
		 strcmp(rel, "/") ? rel : "", (long)getpid(), (unsigned long long)st, ++instances);
	char quota[PATH_MAX + 32];
	snprintf(quota, sizeof quota, "%s/cpu.cfs_quota_us", c->cpu_parent);
	if ((mkdir(c->cpu_parent, 0755) < 0 && errno != EEXIST) || access(quota, W_OK) < 0) {
		snprintf(why, wn, "%s; cannot make a cgroup in the v1 cpu hierarchy (%s): %s", v2why,
			 c->cpu_parent, strerror(errno));
		rmdir(c->cpu_parent);
		c->cpu_parent[0] = '\0';
		return -1;
	}
	c->cpu = 1;
	return 0;
}

int confine_cpu(const confine *c)
{
	return c->cpu;
}

/* Limit u (begun, not spawned) to cpus CPUs: quota per 100 ms period. */
static void unit_cpu_limit(confine *c, confine_unit *u, double cpus)
{
	if (!(cpus > 0) || !c->cpu)
		return;
	double q = cpus * CPU_PERIOD_US;
	long quota = q < 1000 ? 1000 : q > 1e12 ? -1 : (long)q; /* the kernel's least: 1 ms */
	char text[64];
	if (c->cpu == 2) {
		if (!u->dir[0])
			return;
		if (quota < 0)
			snprintf(text, sizeof text, "max %d", CPU_PERIOD_US);
		else
			snprintf(text, sizeof text, "%ld %d", quota, CPU_PERIOD_US);
		write_str(u->dir, "cpu.max", text);
		return;
	}
	snprintf(u->cpu_dir, sizeof u->cpu_dir, "%s/p%u", c->cpu_parent, ++c->cpu_seq);
	snprintf(text, sizeof text, "%d", CPU_PERIOD_US);
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/cgroup.procs", u->cpu_dir);
	if (mkdir(u->cpu_dir, 0755) < 0 || write_str(u->cpu_dir, "cpu.cfs_period_us", text) < 0 ||
	    (snprintf(text, sizeof text, "%ld", quota), write_str(u->cpu_dir, "cpu.cfs_quota_us", text)) < 0 ||
	    (u->cpu_join_fd = open(path, O_WRONLY | O_CLOEXEC)) < 0) {
		rmdir(u->cpu_dir);
		u->cpu_dir[0] = '\0';
	}
}

void confine_free(confine *c)
{
	if (!c)
		return;
	while (c->units)
		confine_unit_free(c, c->units);
	for (int i = 0; i < 100 && c->n_dead; i++) {
		retry_dead(c);
		if (c->n_dead)
			sleep_ms(1);
	}
	for (size_t i = 0; i < c->n_dead; i++)
		free(c->dead[i]);
	free(c->dead);
	if (c->parent[0])
		rmdir(c->parent);
	if (c->cpu_parent[0])
		rmdir(c->cpu_parent);
	free(c);
}

exec_confine confine_kind(const confine *c)
{
	return c->kind;
}

const char *confine_describe(const confine *c)
{
	return c->desc;
}

size_t confine_swept(const confine *c)
{
	return c->swept;
}

/* ---- units ----------------------------------------------------------------- */

static int is_cgroup(const confine *c)
{
	return c->kind == EXEC_CONFINE_CGROUP2 || c->kind == EXEC_CONFINE_CGROUP1;
}

int confine_unit_begin(confine *c, double cpus, confine_unit **out, rl_err *err)
{
	*out = NULL;
	confine_unit *u = calloc(1, sizeof *u);
	if (!u)
		return rl_err_set(err, RL_ENOMEM, "confining a trial");
	u->tracked = c->kind == EXEC_CONFINE_PROC;
	u->join_fd = u->dir_fd = u->cpu_join_fd = -1;
	if (is_cgroup(c)) {
		/* A cgroup that cannot be made or joined (too many, a
		 * hierarchy gone read-only) leaves this one process tracked
		 * through /proc rather than not confined at all. */
		snprintf(u->dir, sizeof u->dir, "%s/p%u", c->parent, ++c->seq);
		if (mkdir(u->dir, 0755) < 0) {
			u->dir[0] = '\0';
			u->tracked = 1;
		} else if ((u->join_fd = open_join(c, u->dir)) < 0) {
			rmdir(u->dir);
			u->dir[0] = '\0';
			u->tracked = 1;
		} else if (c->kind == EXEC_CONFINE_CGROUP2) {
			/* to start the child in it (spawn.h); -1 is fine */
			u->dir_fd = open(u->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	unit_cpu_limit(c, u, cpus);
	u->next = c->units;
	c->units = u;
	*out = u;
	return 0;
}

int confine_unit_cpu_join_fd(const confine_unit *u)
{
	return u ? u->cpu_join_fd : -1;
}

static void unit_unlink(confine *c, confine_unit *u)
{
	for (confine_unit **pp = &c->units; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			return;
		}
}

static void known_add(confine_unit *u, pid_t pid, uint64_t start)
{
	for (size_t i = 0; i < u->n_known; i++)
		if (u->known[i].pid == pid && u->known[i].start == start)
			return;
	if (u->n_known == u->cap_known) {
		size_t cap = u->cap_known ? u->cap_known * 2 : 8;
		member *v = realloc(u->known, cap * sizeof *v);
		if (!v)
			return;
		u->known = v;
		u->cap_known = cap;
	}
	u->known[u->n_known++] = (member){pid, start};
}

int confine_unit_join_fd(const confine_unit *u)
{
	return u ? u->join_fd : -1;
}

int confine_unit_dir_fd(const confine_unit *u)
{
	return u ? u->dir_fd : -1;
}

void confine_unit_spawned(confine *c, confine_unit *u, pid_t leader, uint64_t start_time,
			  int join_errno)
{
	if (!u)
		return;
	if (u->join_fd >= 0) {
		close(u->join_fd);
		u->join_fd = -1;
	}
	if (u->dir_fd >= 0) {
		close(u->dir_fd);
		u->dir_fd = -1;
	}
	if (u->cpu_join_fd >= 0) {
		close(u->cpu_join_fd);
		u->cpu_join_fd = -1;
	}
	if (u->dir[0] && leader > 0 && join_errno) {
		/* The child runs outside its cgroup: track it through /proc. */
		rmdir(u->dir);
		u->dir[0] = '\0';
		u->tracked = 1;
	}
	if (leader <= 0) {
		confine_unit_free(c, u);
		return;
	}
	u->leader = leader;
	u->leader_start = start_time;
	known_add(u, leader, start_time);
}

/* One /proc entry of the scan. */
typedef struct pent {
	procid_stat st;
	int mark;
} pent;

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = ((const pent *)a)->st.pid, y = ((const pent *)b)->st.pid;
	return (x > y) - (x < y);
}

static pent *find_pid(pent *v, size_t n, pid_t pid)
{
	pent key = {.st.pid = pid};
	return bsearch(&key, v, n, sizeof *v, cmp_pid);
}

/* Read every live process's stat; *out malloc'd, sorted by pid. */
static int scan_proc(pent **out, size_t *n_out)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	pent *v = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		procid_stat st;
		if (procid_read_stat((pid_t)atol(e->d_name), &st, NULL) < 0 || st.state == 'Z')
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 512;
			pent *nv = realloc(v, nc * sizeof *nv);
			if (!nv)
				break;
			v = nv;
			cap = nc;
		}
		v[n++] = (pent){.st = st};
	}
	closedir(d);
	qsort(v, n, sizeof *v, cmp_pid);
	*out = v;
	*n_out = n;
	return 0;
}

/* Mark u's members in the scan: its group, the processes it knew (same pid
 * and start time), and (proc) every descendant of a member. */
static void mark_unit(confine_unit *u, pent *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		v[i].mark = v[i].st.pgid == u->leader;
		for (size_t k = 0; !v[i].mark && k < u->n_known; k++)
			v[i].mark = u->known[k].pid == v[i].st.pid && u->known[k].start == v[i].st.start_time;
	}
	if (!u->tracked)
		return;
	for (int changed = 1, depth = 0; changed && depth < 64; depth++) {
		changed = 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i].mark)
				continue;
			pent *parent = find_pid(v, n, v[i].st.ppid);
			if (parent && parent->mark)
				v[i].mark = changed = 1;
		}
	}
}

void confine_scan(confine *c)
{
	retry_dead(c);
	int need = 0;
	for (confine_unit *u = c->units; u && !need; u = u->next)
		need = u->leader > 0 && !u->dir[0];
	if (!need)
		return;
	pent *v;
	size_t n;
	if (scan_proc(&v, &n) < 0)
		return;
	long page = sysconf(_SC_PAGESIZE);
	for (confine_unit *u = c->units; u; u = u->next) {
		if (u->leader <= 0 || u->dir[0])
			continue;
		mark_unit(u, v, n);
		u->rss = 0;
		u->n_members = 0;
		size_t marked = 0;
		for (size_t i = 0; i < n; i++)
			marked += v[i].mark != 0;
		if (marked > u->cap_pids) {
			pid_t *np = realloc(u->pids, marked * sizeof *np);
			if (np) {
				u->pids = np;
				u->cap_pids = marked;
			}
		}
		/* What is known and gone is forgotten: its pid may come back
		 * as another process. */
		size_t k = 0;
		for (size_t j = 0; j < u->n_known; j++) {
			pent *p = find_pid(v, n, u->known[j].pid);
			if (p && p->st.start_time == u->known[j].start)
				u->known[k++] = u->known[j];
		}
		u->n_known = k;
		for (size_t i = 0; i < n; i++) {
			if (!v[i].mark)
				continue;
			u->rss += v[i].st.rss_pages * (uint64_t)page;
			if ((size_t)u->n_members < u->cap_pids)
				u->pids[u->n_members] = v[i].st.pid;
			u->n_members++;
			if (u->tracked)
				known_add(u, v[i].st.pid, v[i].st.start_time);
		}
		u->scanned = 1;
	}
	free(v);
}

int confine_unit_usage(confine *c, confine_unit *u, uint64_t *rss, int *members)
{
	if (!u)
		return -1;
	if (!u->dir[0]) {
		if (!u->scanned)
			return -1;
		*rss = u->rss;
		*members = u->n_members;
		return 0;
	}
	pid_t pids[1024];
	int n = read_procs(u->dir, pids, sizeof pids / sizeof *pids);
	if (n < 0)
		return -1;
	long page = sysconf(_SC_PAGESIZE);
	uint64_t sum = 0;
	int live = 0;
	for (int i = 0; i < n; i++) {
		procid_stat st;
		if (procid_read_stat(pids[i], &st, NULL) < 0 || st.state == 'Z')
			continue;
		sum += st.rss_pages * (uint64_t)page;
		live++;
	}
	(void)c;
	*rss = sum;
	*members = live;
	return 0;
}

int confine_unit_members(confine *c, confine_unit *u, pid_t *out, size_t max)
{
	(void)c;
	if (!u)
		return -1;
	if (u->dir[0])
		return read_procs(u->dir, out, max);
	if (!u->scanned)
		return -1;
	size_t n = (size_t)u->n_members < u->cap_pids ? (size_t)u->n_members : u->cap_pids;
	if (n > max)
		n = max;
	if (n) /* a unit whose scans found no member has no list at all */
		memcpy(out, u->pids, n * sizeof *out);
	return (int)n;
}

void confine_unit_signal_group(confine *c, confine_unit *u, int sig)
{
	(void)c;
	/* Never by a pid alone: once the leader is reaped its pid may be
	 * another user's process (procid.h). */
	if (u && u->leader > 0)
		procid_kill_group(u->leader, u->leader_start, sig);
}

void confine_unit_kill(confine *c, confine_unit *u)
{
	if (!u || u->leader <= 0)
		return;
	procid_kill_group(u->leader, u->leader_start, SIGKILL);
	if (u->dir[0]) {
		cgroup_kill(c->kind, u->dir);
		return;
	}
	if (!u->tracked)
		return;
	/* Find what was started since the last sample (twice: a member may
	 * fork while the first round is sent), then kill by identity. */
	for (int round = 0; round < 2; round++) {
		pent *v;
		size_t n;
		if (scan_proc(&v, &n) == 0) {
			mark_unit(u, v, n);
			for (size_t i = 0; i < n; i++)
				if (v[i].mark)
					known_add(u, v[i].st.pid, v[i].st.start_time);
			free(v);
		}
		for (size_t k = 0; k < u->n_known; k++)
			if (procid_matches(u->known[k].pid, u->known[k].start))
				kill(u->known[k].pid, SIGKILL);
	}
}

void confine_unit_free(confine *c, confine_unit *u)
{
	if (!u)
		return;
	unit_unlink(c, u);
	confine_unit_kill(c, u);
	if (u->join_fd >= 0)
		close(u->join_fd);
	if (u->dir_fd >= 0)
		close(u->dir_fd);
	if (u->cpu_join_fd >= 0)
		close(u->cpu_join_fd);
	if (u->dir[0])
		cgroup_remove(c, u->dir); /* still busy: retried at the next scan */
	if (u->cpu_dir[0])
		cgroup_remove(c, u->cpu_dir);
	free(u->known);
	free(u->pids);
	free(u);
}
