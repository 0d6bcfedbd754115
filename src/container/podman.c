/*
 * podman.c - the container executor (podman, or docker with the same
 * arguments): every trial process is a container (see container.h).
 *
 * Design: a wrapper around the process executor.  The trial's "process" is
 * the engine's attach process, `podman run --init ... IMAGE argv`,
 * whose stdout and stderr are the container's; so the process executor's
 * pipes, log, contract lines, timeouts, warm reuse and kill ladder all apply
 * unchanged, with no second copy of that code.  What this file adds:
 *   - the command line (container.c) and the engine's environment
 *     (CONTAINERS_CONF);
 *   - stopping: the ladder's SIGTERM reaches the attach process, which
 *     forwards it to the container's init and so to the trial; the SIGKILL
 *     after the grace kills only the attach process, so a container whose
 *     attach process died by a signal (or whose engine failed with 125-127)
 *     is removed with `rm -f -t 0` before the driver hears on_end: the
 *     driver never sees a segment end while its container still holds
 *     memory.  A container that ends on its own is removed by --rm before
 *     the attach process exits, at no extra cost.  (`podman stop` was the
 *     alternative: one more engine process per cancel, for what the signal
 *     proxy already does.);
 *   - exit codes read the container way (container_classify);
 *   - the memory peak, sampled from the container's memory cgroup (found
 *     through --cidfile), since the attach process's own RSS says nothing;
 *   - parked warm/worker containers are watched: once their attach process
 *     is gone, whatever is left of the container is removed;
 *   - after a restart, container_reconcile(_adoptable) removes what a
 *     crashed relish left (found by its owner label), and exec_podman_adopt
 *     watches a running oneshot container again through `wait` + `logs -f`
 *     (oneshot containers have no --rm so that a broken attach pipe does
 *     not take them down; each is removed here once it ended).
 * Engine calls made on the loop (rm) are uv_spawn'ed; the blocking ones
 * (image check, list, reconcile: exec/capture.h) are for start-up,
 * before the loop runs.
 */
#include "container/container.h"
#include "spec/spec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"

#include "common/procid.h"
#include "exec/capture.h"
#include "telemetry/procmem.h"
#include "process/process.h"

extern char **environ;

#define TAIL_READ 4096      /* log bytes read back for runtime messages */
#define SWEEP_MS 500        /* parked containers checked this often */

typedef struct cexec cexec;
typedef struct ctr ctr;
typedef struct cseg cseg;

/* One container: one engine attach process (one segment, or a warm/worker
 * process across segments). */
struct ctr {
	ctr *next;
	char name[128];
	char cidfile[PATH_MAX];
	char peak_path[PATH_MAX];   /* the cgroup's peak file, "" until found */
	pid_t pid;                  /* attach process */
	uint64_t start_time;
	cseg *seg;                  /* NULL while parked */
	int removing;
};

/* A segment as the driver sees it (handed out as exec_segment *). */
struct cseg {
	cexec *ex;
	ctr *c;
	exec_segment *inner;        /* the process executor's segment; NULL once it ended */
	exec_callbacks cb;
	void *ud;
	uint64_t mem_limit_mib;
	uint64_t peak;
	char log_path[PATH_MAX];
	int tmp_log;                /* log_path is ours: delete at the end */
	exec_result r;              /* kept while the container is being removed */
	int oneshot;                /* no --rm: removed once it ended */
};

typedef struct rmjob {
	cexec *ex;
	uv_process_t h;
	cseg *pending;              /* on_end delivered once the rm is done */
	ctr *c;                     /* dropped once the rm is done */
} rmjob;

struct cexec {
	executor base;
	uv_loop_t *loop;
	executor *inner;
	container_options o;        /* strings below are owned copies */
	char *binary, *image, *network, *mps_dir, *label_prefix, *experiment, *owner, *workdir;
	char *user;                 /* resolved "UID:GID" the containers run as */
	uid_t uid;                  /* its numbers, for the checkpoint folders */
	gid_t gid;
	char **cap_add;
	char *conf;
	char state_dir[PATH_MAX];
	container_mount *mounts;
	char **gpu_uuids;
	char **engine_env;          /* relish's environment + CONTAINERS_CONF */
	uv_timer_t t_sample, t_sweep;
	int timers_open;
	ctr *ctrs;
	size_t n_segs, n_rm;
	uint64_t shutdown_at;       /* uv_hrtime of shutdown, 0 before */
	int destroyed;
	uint32_t counter;
};

/* ---- small helpers ----------------------------------------------------------- */

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static void maybe_free(cexec *ex);

static uint32_t tag_next(cexec *ex)
{
	uint64_t h = uv_hrtime() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)++ex->counter * 0x9e3779b97f4a7c15ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

/*
 * The trial runs as ex->user, not as relish: when relish is root and that
 * user is not, the checkpoint folder (which relish made) becomes the
 * trial's, so it can write there.  Only the folder itself, never what is in
 * it (a trial's own files are already its own), and never through a link:
 * opened with O_NOFOLLOW and changed with fchown, so a symbolic link that a
 * trial left in a folder it shares (a worker's experiment folder) cannot
 * hand it some other file.  0, or -1 with errno.
 */
static int give_checkpoint_dir(cexec *ex, const char *dir)
{
	if (geteuid() != 0 || ex->uid == 0)
		return 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	int rc = fstat(fd, &st);
	if (rc == 0 && (st.st_uid != ex->uid || st.st_gid != ex->gid))
		rc = fchown(fd, ex->uid, ex->gid);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

static const char *engine_bin(const container_options *o)
{
	return o->binary ? o->binary : o->engine == CONTAINER_DOCKER ? "docker" : "podman";
}

/* relish's environment with CONTAINERS_CONF set (or inherited when conf is NULL). */
static char **engine_env_new(const char *conf)
{
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	char **v = calloc(n + 2, sizeof *v);
	if (!v)
		return NULL;
	size_t j = 0;
	for (char **e = environ; e && *e; e++) {
		if (conf && strncmp(*e, "CONTAINERS_CONF=", 16) == 0)
			continue;
		if (!(v[j++] = strdup(*e)))
			goto oom;
	}
	if (conf && asprintf(&v[j++], "CONTAINERS_CONF=%s", conf) < 0) {
		v[j - 1] = NULL;
		goto oom;
	}
	return v;
oom:
	contract_strv_free(v);
	return NULL;
}

/* ---- memory peak from the cgroup ---------------------------------------------- */

/* Where engines put a container's memory cgroup: directory prefix, the full
 * id, then this suffix. */
static const struct {
	const char *pre, *post;
} peak_paths[] = {
	{"/sys/fs/cgroup/memory/libpod_parent/libpod-", "/memory.max_usage_in_bytes"},
	{"/sys/fs/cgroup/memory/machine.slice/libpod-", ".scope/memory.max_usage_in_bytes"},
	{"/sys/fs/cgroup/memory/docker/", "/memory.max_usage_in_bytes"},
	{"/sys/fs/cgroup/memory/system.slice/docker-", ".scope/memory.max_usage_in_bytes"},
	{"/sys/fs/cgroup/libpod_parent/libpod-", "/memory.peak"},
	{"/sys/fs/cgroup/machine.slice/libpod-", ".scope/memory.peak"},
	{"/sys/fs/cgroup/system.slice/docker-", ".scope/memory.peak"},
	{"/sys/fs/cgroup/docker/", "/memory.peak"},
};

static int read_u64(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	unsigned long long x;
	int ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -1;
	*v = x;
	return 0;
}

static void find_peak_path(ctr *c)
{
	char id[80] = "";
	FILE *f = fopen(c->cidfile, "re");
	if (!f)
		return;
	if (!fgets(id, sizeof id, f))
		id[0] = '\0';
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
	if (strlen(id) < 12)
		return;
	for (size_t i = 0; i < sizeof peak_paths / sizeof *peak_paths; i++) {
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%s%s%s", peak_paths[i].pre, id, peak_paths[i].post);
		if (access(p, R_OK) == 0) {
			snprintf(c->peak_path, sizeof c->peak_path, "%s", p);
			return;
		}
	}
}

static void sample_peak(ctr *c)
{
	if (!c->seg)
		return;
	if (!c->peak_path[0])
		find_peak_path(c);
	uint64_t v;
	if (c->peak_path[0] && read_u64(c->peak_path, &v) == 0 && v > c->seg->peak)
		c->seg->peak = v;
}

static void sample_cb(uv_timer_t *t)
{
	cexec *ex = t->data;
	for (ctr *c = ex->ctrs; c; c = c->next)
		sample_peak(c);
}

/* ---- containers and their removal ---------------------------------------------- */

static void ctr_drop(cexec *ex, ctr *c)
{
	for (ctr **pp = &ex->ctrs; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->cidfile[0])
		unlink(c->cidfile);
	free(c);
}

static void deliver_end(cseg *s);

static void rm_closed(uv_handle_t *h)
{
	rmjob *j = h->data;
	cexec *ex = j->ex;
	if (j->c)
		ctr_drop(ex, j->c);
	if (j->pending)
		deliver_end(j->pending);
	free(j);
	ex->n_rm--;
	maybe_free(ex);
}

static void rm_exit(uv_process_t *h, int64_t status, int sig)
{
	(void)status;
	(void)sig; /* an rm that failed leaves the container to reconcile */
	uv_close((uv_handle_t *)h, rm_closed);
}

/* `rm -f -t 0 NAME` on the loop; then drop c and deliver pending (either
 * may be NULL).  If the engine cannot be started, both happen as its handle closes. */
static void remove_container(cexec *ex, const char *name, ctr *c, cseg *pending)
{
	if (c)
		c->removing = 1;
	rmjob *j = calloc(1, sizeof *j);
	char *argv[10];
	size_t k = 0;
	argv[k++] = ex->binary;
	argv[k++] = "rm";
	argv[k++] = "-f";
	if (ex->o.engine == CONTAINER_PODMAN) {
		argv[k++] = "-t";
		argv[k++] = "0";
		argv[k++] = "--ignore";
	}
	argv[k++] = (char *)name;
	argv[k] = NULL;
	uv_stdio_container_t io[3] = {{.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
	uv_process_options_t po;
	memset(&po, 0, sizeof po);
	po.exit_cb = rm_exit;
	po.file = ex->binary;
	po.args = argv;
	po.env = ex->engine_env;
	po.stdio_count = 3;
	po.stdio = io;
	if (!j) {
		if (c)
			ctr_drop(ex, c);
		if (pending)
			deliver_end(pending);
		return;
	}
	j->ex = ex;
	j->c = c;
	j->pending = pending;
	j->h.data = j;
	ex->n_rm++;
	if (uv_spawn(ex->loop, &j->h, &po) < 0)
		uv_close((uv_handle_t *)&j->h, rm_closed); /* libuv: close a failed spawn too */
}

/* Check parked containers: one whose attach process is gone is removed
 * (it was killed, or its trial did not stop); after shutdown plus the
 * grace, parked ones still alive are removed too. */
static void sweep_cb(uv_timer_t *t)
{
	cexec *ex = t->data;
	int late = ex->shutdown_at &&
		   (double)(uv_hrtime() - ex->shutdown_at) / 1e9 > ex->o.exec.kill_grace_s + 1.0;
	for (ctr *c = ex->ctrs, *next; c; c = next) {
		next = c->next;
		if (c->seg || c->removing)
			continue;
		if (!procid_matches(c->pid, c->start_time) || late)
			remove_container(ex, c->name, c, NULL);
	}
	if (ex->shutdown_at && !ex->ctrs)
		uv_timer_stop(t);
}

/* ---- segment end -------------------------------------------------------------------- */

static void read_tail(const char *path, char *buf, size_t n)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);
	off_t from = end > (off_t)(n - 1) ? end - (off_t)(n - 1) : 0;
	ssize_t k = pread(fd, buf, n - 1, from);
	close(fd);
	if (k < 0)
		k = 0;
	for (ssize_t i = 0; i < k; i++)
		if (!buf[i])
			buf[i] = '?';
	buf[k] = '\0';
}

static void deliver_end(cseg *s)
{
	cexec *ex = s->ex;
	/* A container's words name the limit it ran out of memory at. */
	s->r.reason_names_limit = s->r.outcome == SEG_OUT_OOM;
	if (s->cb.on_end)
		s->cb.on_end(s->ud, (exec_segment *)s, &s->r);
	if (s->tmp_log)
		unlink(s->log_path);
	free(s);
	ex->n_segs--;
	maybe_free(ex);
}

static void inner_line(void *ud, exec_segment *iseg, const contract_line *l)
{
	(void)iseg;
	cseg *s = ud;
	if (s->cb.on_line)
		s->cb.on_line(s->ud, (exec_segment *)s, l);
}

static void inner_end(void *ud, exec_segment *iseg, const exec_result *r)
{
	(void)iseg;
	cseg *s = ud;
	cexec *ex = s->ex;
	ctr *c = s->c;
	s->inner = NULL;
	sample_peak(c);
	s->r = *r;
	s->r.peak_rss_bytes = s->peak;
	/* A done line ended it and the container lives on (warm/worker). */
	int alive = !r->exited && r->term_signal == 0;
	c->seg = NULL;
	if (alive) {
		deliver_end(s);
		return;
	}
	if (r->outcome != SEG_OUT_COMPLETED) {
		char tail[TAIL_READ];
		read_tail(s->log_path, tail, sizeof tail);
		container_classify(&s->r, tail, s->mem_limit_mib);
	}

	int need_rm = s->oneshot || r->term_signal != 0 ||
		      (r->exited && r->exit_code >= 125 && r->exit_code <= 127);
	if (need_rm && !c->removing)
		remove_container(ex, c->name, c, s);
	else {
		if (!c->removing)
			ctr_drop(ex, c);
		deliver_end(s);
	}
}

/* ---- exec_ops --------------------------------------------------------------------- */

/* A new segment and its container record for a launch or an adoption
 * (both oneshot when adopting: the caller checked).  0, or -1 when out of
 * memory (nothing allocated then). */
static int cseg_new(cexec *ex, const exec_spec *es, const exec_callbacks *cb, void *ud,
		    cseg **out_s, ctr **out_c)
{
	cseg *s = calloc(1, sizeof *s);
	ctr *c = calloc(1, sizeof *c);
	if (!s || !c) {
		free(s);
		free(c);
		return -1;
	}
	s->ex = ex;
	if (cb)
		s->cb = *cb;
	s->ud = ud;
	s->mem_limit_mib = es->memory_limit_mib;
	s->oneshot = es->mode == TRIAL_MODE_ONESHOT;
	*out_s = s;
	*out_c = c;
	return 0;
}
static int cx_start(executor *e, const exec_spec *es, const exec_callbacks *cb, void *ud,
		    exec_segment **out, rl_err *err)
{
	cexec *ex = e->impl;
	if (ex->shutdown_at)
		return rl_err_set(err, RL_EBUSY, "the executor is shutting down");
	if (es->a.checkpoint_dir && *es->a.checkpoint_dir && rl_mkdirs(es->a.checkpoint_dir, 0755) < 0)
		return rl_err_sys(err, RL_EIO, errno, "creating checkpoint directory %s",
				  es->a.checkpoint_dir);
	if (es->a.checkpoint_dir && *es->a.checkpoint_dir &&
	    give_checkpoint_dir(ex, es->a.checkpoint_dir) < 0)
		return rl_err_sys(err, RL_EIO, errno, "giving checkpoint directory %s to uid %lu",
				  es->a.checkpoint_dir, (unsigned long)ex->uid);
	cseg *s;
	ctr *c;
	if (cseg_new(ex, es, cb, ud, &s, &c) < 0)
		return rl_err_set(err, RL_ENOMEM, "starting a container");
	container_name(ex->experiment, es->a.trial_id, es->a.to, tag_next(ex), c->name, sizeof c->name);
	snprintf(c->cidfile, sizeof c->cidfile, "%s/%s.cid", ex->state_dir, c->name);
	unlink(c->cidfile); /* the engine refuses an existing cid file */
	if (es->log_path) {
		snprintf(s->log_path, sizeof s->log_path, "%s", es->log_path);
	} else {
		snprintf(s->log_path, sizeof s->log_path, "%s/%s.log", ex->state_dir, c->name);
		s->tmp_log = 1;
	}
	char **argv = NULL;
	int rc = container_build_argv(&ex->o, es, c->name, c->cidfile, &argv, err);
	if (rc < 0) {
		free(s);
		free(c);
		return rl_err_prefix(err, "container for trial %s", es->a.trial_id ? es->a.trial_id : "?");
	}
	exec_spec is = *es;
	is.run_as = NULL; /* the engine runs as relish; the container gets --user */
	is.argv = argv;
	is.envp = ex->engine_env;
	is.cwd = NULL;
	is.log_path = s->log_path;
	is.memory_limit_mib = 0; /* the container enforces it, not RSS sampling */
	exec_callbacks icb = {.on_line = inner_line, .on_end = inner_end};
	exec_segment *iseg = NULL;
	rc = exec_launch(ex->inner, &is, &icb, s, &iseg, err);
	contract_strv_free(argv);
	if (rc < 0) {
		if (s->tmp_log)
			unlink(s->log_path);
		free(s);
		free(c);
		return rl_err_prefix(err, "%s run", ex->binary);
	}
	s->inner = iseg;
	ex->n_segs++;
	exec_ident id;
	exec_ident_of(ex->inner, iseg, &id);
	/* A parked warm/worker container took the segment? */
	ctr *old = NULL;
	for (ctr *q = ex->ctrs; q; q = q->next)
		if (q->pid == id.pid && q->start_time == id.start_time && !q->removing)
			old = q;
	if (old) {
		free(c);
		c = old;
		/* The cgroup's peak is the container's so far: restart it for
		 * this segment where the kernel allows (cgroup v1, root). */
		if (c->peak_path[0]) {
			int fd = open(c->peak_path, O_WRONLY | O_CLOEXEC);
			if (fd >= 0) {
				if (write(fd, "0", 1) < 0) {
					/* best effort: the peak then spans the container's life */
				}
				close(fd);
			}
		}
	} else {
		c->pid = id.pid;
		c->start_time = id.start_time;
		c->next = ex->ctrs;
		ex->ctrs = c;
	}
	c->seg = s;
	s->c = c;
	*out = (exec_segment *)s;
	return 0;
}

/* A segment the engine could not start, or that it refused, is the
 * runtime's failure, not the trial's: RL_ERUNTIME, in words that say so
 * (the driver records it with fault EXEC_FAULT_RUNTIME). */
static int cx_launch(executor *e, const exec_spec *es, const exec_callbacks *cb, void *ud,
		     exec_segment **out, rl_err *err)
{
	int rc = cx_start(e, es, cb, ud, out, err);
	if (rc < 0 && rc != RL_ENOMEM) {
		rl_err_prefix(err, "%.*s", (int)strlen(CONTAINER_RUNTIME_REASON) - 2,
			      CONTAINER_RUNTIME_REASON);
		if (err)
			err->code = RL_ERUNTIME;
		rc = RL_ERUNTIME;
	}
	return rc;
}

static const exec_ops podman_ops, docker_ops; /* below */

/* The watched process of an adopted container: wait first (its exit code
 * survives --rm only for a waiter already registered), then the output from
 * the start, then the code.  $1 engine, $2 name, $3 file for the code. */
static const char adopt_script[] =
	"\"$1\" wait \"$2\" >\"$3\" & w=$!\n"
	"\"$1\" logs -f \"$2\"\n"
	"wait $w || exit 1\n"
	"read c <\"$3\" && exit \"$c\"\n"
	"exit 1\n";

int exec_podman_adopt(executor *e, const char *name, const exec_spec *es,
		      const exec_callbacks *cb, void *ud, exec_segment **out, rl_err *err)
{
	if (!e || (e->ops != &podman_ops && e->ops != &docker_ops))
		return rl_err_set(err, RL_EINVAL, "adopting a container: not a container executor");
	if (es->mode != TRIAL_MODE_ONESHOT)
		return rl_err_set(err, RL_EINVAL, "adopting container %s: only oneshot containers "
				  "can be adopted (warm and worker ones need their stdin)", name);
	cexec *ex = e->impl;
	if (ex->shutdown_at)
		return rl_err_set(err, RL_EBUSY, "the executor is shutting down");
	cseg *s;
	ctr *c;
	if (cseg_new(ex, es, cb, ud, &s, &c) < 0)
		return rl_err_set(err, RL_ENOMEM, "adopting a container");
	snprintf(c->name, sizeof c->name, "%s", name);
	char codefile[PATH_MAX];
	snprintf(codefile, sizeof codefile, "%s/%s.exit", ex->state_dir, c->name);
	if (es->log_path) {
		snprintf(s->log_path, sizeof s->log_path, "%s", es->log_path);
	} else {
		snprintf(s->log_path, sizeof s->log_path, "%s/%s.log", ex->state_dir, c->name);
		s->tmp_log = 1;
	}
	char *argv[] = {"/bin/sh", "-c", (char *)adopt_script, "sh", ex->binary, c->name, codefile,
			NULL};
	exec_spec is = *es;
	is.run_as = NULL; /* the engine runs as relish; the container gets --user */
	is.argv = argv;
	is.envp = ex->engine_env;
	is.cwd = NULL;
	is.log_path = s->log_path;
	is.memory_limit_mib = 0;
	exec_callbacks icb = {.on_line = inner_line, .on_end = inner_end};
	exec_segment *iseg = NULL;
	int rc = exec_launch(ex->inner, &is, &icb, s, &iseg, err);
	if (rc < 0) {
		free(s);
		free(c);
		return rl_err_prefix(err, "adopting container %s", name);
	}
	s->inner = iseg;
	ex->n_segs++;
	exec_ident id;
	exec_ident_of(ex->inner, iseg, &id);
	c->pid = id.pid;
	c->start_time = id.start_time;
	c->next = ex->ctrs;
	ex->ctrs = c;
	c->seg = s;
	s->c = c;
	*out = (exec_segment *)s;
	return 0;
}

static void cx_cancel(executor *e, exec_segment *seg)
{
	cexec *ex = e->impl;
	cseg *s = (cseg *)seg;
	if (s && s->inner)
		exec_cancel(ex->inner, s->inner);
}

static int cx_ident(executor *e, const exec_segment *seg, exec_ident *out)
{
	(void)e;
	const cseg *s = (const cseg *)seg;
	exec_ident id = {.pid = s->c->pid, .start_time = s->c->start_time};
	snprintf(id.handle, sizeof id.handle, "%s", s->c->name);
	*out = id;
	return 0;
}

static int cx_reclaim(executor *e, const exec_ident *id, rl_err *err)
{
	cexec *ex = e->impl;
	(void)err;
	/* The old attach process (if it outlived relish) has no reader left. */
	if (id->pid > 0 && procid_matches(id->pid, id->start_time))
		kill(-id->pid, SIGKILL);
	if (id->handle[0])
		remove_container(ex, id->handle, NULL, NULL);
	return 0;
}

static void cx_release(executor *e, const char *key)
{
	cexec *ex = e->impl;
	exec_release(ex->inner, key);
}

static size_t cx_idle_count(executor *e)
{
	cexec *ex = e->impl;
	return ex->inner->ops->idle_count(ex->inner);
}

static void cx_shutdown(executor *e)
{
	cexec *ex = e->impl;
	if (ex->shutdown_at)
		return;
	ex->shutdown_at = uv_hrtime();
	if (!ex->shutdown_at)
		ex->shutdown_at = 1;
	exec_shutdown(ex->inner);
	/* Until the last container is gone the sweep keeps the loop alive. */
	uv_ref((uv_handle_t *)&ex->t_sweep);
}

static void timer_closed(uv_handle_t *h)
{
	cexec *ex = h->data;
	ex->timers_open--;
	maybe_free(ex);
}

static void maybe_free(cexec *ex)
{
	if (!ex->destroyed || ex->timers_open || ex->n_rm || ex->n_segs || ex->ctrs)
		return;
	free(ex->binary);
	free(ex->image);
	free(ex->network);
	free(ex->mps_dir);
	free(ex->label_prefix);
	free(ex->experiment);
	free(ex->owner);
	free(ex->workdir);
	free(ex->user);
	if (ex->cap_add) {
		for (size_t i = 0; i < ex->o.n_cap_add; i++)
			free(ex->cap_add[i]);
		free(ex->cap_add);
	}
	free(ex->conf);
	if (ex->mounts) {
		for (size_t i = 0; i < ex->o.n_mounts; i++) {
			free((char *)ex->mounts[i].host);
			free((char *)ex->mounts[i].target);
		}
		free(ex->mounts);
	}
	if (ex->gpu_uuids) {
		for (size_t i = 0; i < ex->o.n_gpu_uuids; i++)
			free(ex->gpu_uuids[i]);
		free(ex->gpu_uuids);
	}
	contract_strv_free(ex->engine_env);
	free(ex);
}

static void cx_destroy(executor *e)
{
	cexec *ex = e->impl;
	cx_shutdown(e);
	ex->destroyed = 1;
	/* Whatever is still listed goes now: nobody will sweep after this. */
	for (ctr *c = ex->ctrs, *next; c; c = next) {
		next = c->next;
		if (!c->seg && !c->removing)
			remove_container(ex, c->name, c, NULL);
	}
	exec_free(ex->inner);
	ex->inner = NULL;
	uv_close((uv_handle_t *)&ex->t_sample, timer_closed);
	uv_close((uv_handle_t *)&ex->t_sweep, timer_closed);
}

/* Both engines share every operation; only the name differs. */
#define CX_OPS(engine_name)                                                          \
	{                                                                            \
		.name = engine_name, .launch = cx_launch, .cancel = cx_cancel,       \
		.ident = cx_ident, .reclaim = cx_reclaim, .release = cx_release,     \
		.idle_count = cx_idle_count, .shutdown = cx_shutdown,                \
		.destroy = cx_destroy,                                               \
	}
static const exec_ops podman_ops = CX_OPS("podman");
static const exec_ops docker_ops = CX_OPS("docker");
#undef CX_OPS

/* ---- blocking engine calls (start-up only) ------------------------------------- */

/*
 * Run the engine with args (after the binary) and wait (capture.h).
 * *out_text gets stdout when out_text is not NULL; errtext the end of
 * stderr.  Returns the exit status (>= 0), or a negative RL_E* code when
 * the engine could not be started.
 */
static int run_engine(const container_options *o, char *const *args, char **out_text,
		      char *errtext, size_t errlen, rl_err *err)
{
	const char *bin = engine_bin(o);
	char *argv[64];
	size_t k = 0;
	argv[k++] = (char *)bin;
	for (; args[k - 1] && k < 63; k++)
		argv[k] = args[k - 1];
	argv[k] = NULL;
	char **env = engine_env_new(o->containers_conf);
	if (!env)
		return rl_err_set(err, RL_ENOMEM, "running %s", bin);
	char *etext = NULL;
	int rc = capture_run(argv, env, out_text, &etext, err);
	contract_strv_free(env);
	if (rc == RL_ERUNTIME)
		return rl_err_sys(err, RL_ERUNTIME, err ? err->sys_errno : 0,
				  "cannot run %s (is it installed? scripts/deps.sh test installs "
				  "podman)", bin);
	if (rc >= 0 && errtext) {
		size_t n = strlen(etext);
		snprintf(errtext, errlen, "%s", etext + (n > 4095 ? n - 4095 : 0));
	}
	free(etext);
	return rc;
}

int container_list(const container_options *o, container_info **out, size_t *n, rl_err *err)
{
	if (!o->owner || !*o->owner)
		return rl_err_set(err, RL_EINVAL, "container list: no owner label given");
	char filter[256];
	snprintf(filter, sizeof filter, "label=%s.owner=%s", o->label_prefix ? o->label_prefix : "relish",
		 o->owner);
	char *args[] = {"ps", "-a", "--no-trunc", "--filter", filter, "--format",
			o->engine == CONTAINER_DOCKER ? "{{json .}}" : "json", NULL};
	char *text = NULL;
	char etext[512];
	int rc = run_engine(o, args, &text, etext, sizeof etext, err);
	if (rc < 0)
		return rc;
	if (rc != 0) {
		free(text);
		return rl_err_set(err, RL_ERUNTIME, "%s ps: exit %d: %s", engine_bin(o), rc, etext);
	}
	rc = container_parse_ps(text, o->label_prefix, out, n, err);
	free(text);
	return rc < 0 ? rl_err_prefix(err, "%s ps", engine_bin(o)) : 0;
}

static int reconcile(const container_options *o, int keep, container_info **out, size_t *n_out,
		     rl_err *err)
{
	container_info *v = NULL;
	size_t n = 0;
	int rc = container_list(o, &v, &n, err);
	if (rc < 0)
		return rc;
	size_t n_rm = 0;
	char **names = calloc(n + 1, sizeof *names);
	if (!names) {
		free(v);
		return rl_err_set(err, RL_ENOMEM, "container list");
	}
	for (size_t i = 0; i < n; i++) {
		v[i].kept = keep && !strcmp(v[i].state, "running") && !strcmp(v[i].mode, "oneshot");
		if (!v[i].kept)
			names[n_rm++] = v[i].name;
	}
	for (size_t i = 0; i < n_rm; i += 50) {
		char *args[64];
		size_t k = 0;
		args[k++] = "rm";
		args[k++] = "-f";
		if (o->engine == CONTAINER_PODMAN) {
			args[k++] = "-t";
			args[k++] = "0";
			args[k++] = "--ignore";
		}
		for (size_t j = i; j < n_rm && j < i + 50; j++)
			args[k++] = names[j];
		args[k] = NULL;
		char etext[512];
		rc = run_engine(o, args, NULL, etext, sizeof etext, err);
		if (rc != 0) {
			free(names);
			free(v);
			if (rc < 0)
				return rc;
			return rl_err_set(err, RL_ERUNTIME, "%s rm: exit %d: %s", engine_bin(o), rc, etext);
		}
	}
	free(names);
	if (out) {
		*out = v;
		*n_out = n;
	} else {
		free(v);
	}
	return 0;
}

int container_reconcile(const container_options *o, container_info **out, size_t *n_out,
			rl_err *err)
{
	return reconcile(o, 0, out, n_out, err);
}

int container_reconcile_adoptable(const container_options *o, container_info **out, size_t *n_out,
				  rl_err *err)
{
	return reconcile(o, 1, out, n_out, err);
}

static int check_image(const container_options *o, rl_err *err)
{
	char *exists[] = {"image", "exists", (char *)o->image, NULL};
	char *inspect[] = {"image", "inspect", (char *)o->image, NULL};
	char etext[512];
	int rc = run_engine(o, o->engine == CONTAINER_DOCKER ? inspect : exists, NULL, etext,
			    sizeof etext, err);
	if (rc < 0)
		return rc;
	if (rc == 1)
		return rl_err_set(err, RL_ERUNTIME,
				  "container image %s not found (build it, e.g. scripts/podman-image.sh, "
				  "or pull it; docs/containers.md)", o->image);
	if (rc != 0)
		return rl_err_set(err, RL_ERUNTIME, "%s image check: exit %d: %s", engine_bin(o), rc,
				  etext);
	return 0;
}

/* ---- constructor ------------------------------------------------------------------- */

int exec_podman_new(uv_loop_t *loop, const container_options *o, executor **out, rl_err *err)
{
	if (!o->image || !*o->image)
		return rl_err_set(err, RL_EINVAL, "container executor: no image given");
	const char *why = spec_image_problem(o->image);
	if (why) /* before the image check, which hands it to the engine too */
		return rl_err_set(err, RL_EINVAL, "container image %s: expected %s", o->image, why);
	if (!o->experiment || !*o->experiment)
		return rl_err_set(err, RL_EINVAL, "container executor: no experiment name given");
	if (!o->owner || !*o->owner)
		return rl_err_set(err, RL_EINVAL, "container executor: no owner label given");
	char user[32];
	if (o->user && *o->user)
		snprintf(user, sizeof user, "%s", o->user);
	else
		container_default_user(user, sizeof user);
	unsigned long uid = 0, gid = 0;
	char tail;
	if (sscanf(user, "%lu:%lu%c", &uid, &gid, &tail) != 2)
		return rl_err_set(err, RL_EINVAL, "container executor: user %s: expected UID:GID", user);
	if (o->check_image) {
		int rc = check_image(o, err);
		if (rc < 0)
			return rc;
	}
	cexec *ex = calloc(1, sizeof *ex);
	if (!ex)
		return rl_err_set(err, RL_ENOMEM, "creating the container executor");
	ex->loop = loop;
	ex->o = *o;
	ex->binary = strdup(engine_bin(o));
	ex->image = strdup(o->image);
	ex->network = dup_or_null(o->network);
	ex->mps_dir = dup_or_null(o->mps_dir);
	ex->label_prefix = dup_or_null(o->label_prefix);
	ex->experiment = strdup(o->experiment);
	ex->owner = strdup(o->owner);
	ex->workdir = dup_or_null(o->workdir);
	ex->conf = dup_or_null(o->containers_conf);
	ex->user = strdup(user);
	ex->uid = (uid_t)uid;
	ex->gid = (gid_t)gid;
	ex->engine_env = engine_env_new(o->containers_conf);
	int oom = !ex->binary || !ex->image || !ex->experiment || !ex->owner || !ex->engine_env ||
		  !ex->user;
	if (o->n_mounts) {
		ex->mounts = calloc(o->n_mounts, sizeof *ex->mounts);
		oom |= !ex->mounts;
		for (size_t i = 0; ex->mounts && i < o->n_mounts; i++) {
			ex->mounts[i].host = dup_or_null(o->mounts[i].host);
			ex->mounts[i].target = dup_or_null(o->mounts[i].target);
			ex->mounts[i].read_only = o->mounts[i].read_only;
			oom |= !ex->mounts[i].host;
		}
	}
	if (o->n_cap_add) {
		ex->cap_add = calloc(o->n_cap_add, sizeof *ex->cap_add);
		oom |= !ex->cap_add;
		for (size_t i = 0; ex->cap_add && i < o->n_cap_add; i++)
			oom |= !(ex->cap_add[i] = dup_or_null(o->cap_add[i]));
	}
	if (o->n_gpu_uuids) {
		ex->gpu_uuids = calloc(o->n_gpu_uuids, sizeof *ex->gpu_uuids);
		oom |= !ex->gpu_uuids;
		for (size_t i = 0; ex->gpu_uuids && i < o->n_gpu_uuids; i++)
			ex->gpu_uuids[i] = dup_or_null(o->gpu_uuids[i]);
	}
	ex->o.binary = ex->binary;
	ex->o.image = ex->image;
	ex->o.network = ex->network;
	ex->o.mps_dir = ex->mps_dir;
	ex->o.label_prefix = ex->label_prefix;
	ex->o.experiment = ex->experiment;
	ex->o.owner = ex->owner;
	ex->o.workdir = ex->workdir;
	ex->o.containers_conf = ex->conf;
	ex->o.user = ex->user;
	ex->o.cap_add = (const char *const *)ex->cap_add;
	ex->o.mounts = ex->mounts;
	ex->o.gpu_uuids = (const char *const *)ex->gpu_uuids;
	const char *sd = o->state_dir ? o->state_dir : getenv("TMPDIR");
	snprintf(ex->state_dir, sizeof ex->state_dir, "%s", sd && *sd ? sd : "/tmp");
	ex->destroyed = 1; /* lets maybe_free below free a half-built one */
	if (oom) {
		maybe_free(ex);
		return rl_err_set(err, RL_ENOMEM, "creating the container executor");
	}
	if (rl_mkdirs(ex->state_dir, 0755) < 0) {
		int e = errno;
		maybe_free(ex);
		return rl_err_sys(err, RL_EIO, e, "container executor: state directory %s",
				  o->state_dir ? o->state_dir : "/tmp");
	}
	/* The attach processes stay in their process groups: the engine
	 * confines each container, and its monitor (conmon) must outlive the
	 * `podman run` that started it. */
	ex->o.exec.confine = EXEC_CONFINE_GROUP;
	int rc = exec_process_new(loop, &ex->o.exec, &ex->inner, err);
	if (rc < 0) {
		maybe_free(ex);
		return rl_err_prefix(err, "container executor");
	}
	ex->destroyed = 0;
	ex->base.ops = o->engine == CONTAINER_DOCKER ? &docker_ops : &podman_ops;
	ex->base.impl = ex;
	uv_timer_init(loop, &ex->t_sample);
	uv_timer_init(loop, &ex->t_sweep);
	ex->t_sample.data = ex->t_sweep.data = ex;
	ex->timers_open = 2;
	double si = ex->o.exec.sample_interval_s > 0 ? ex->o.exec.sample_interval_s : 0.2;
	uint64_t every = (uint64_t)(si * 1000.0 + 0.5);
	uv_timer_start(&ex->t_sample, sample_cb, every ? every : 1, every ? every : 1);
	uv_timer_start(&ex->t_sweep, sweep_cb, SWEEP_MS, SWEEP_MS);
	/* Neither timer alone keeps the loop running (shutdown refs the sweep). */
	uv_unref((uv_handle_t *)&ex->t_sample);
	uv_unref((uv_handle_t *)&ex->t_sweep);
	*out = &ex->base;
	return 0;
}
