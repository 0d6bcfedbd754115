/*
 * backend.c - executors podman and docker as backends of the live driver
 * (exec_backend_ops, exec/exec.h; docs/containers.md, "relish run with
 * containers").  One backend per engine.
 *
 * Each experiment gets an executor of its own (exec_podman_new): the image,
 * network, mounts, labels, user and GPU hand-over are per experiment, while
 * the memory limit, CPU share, checkpoint mount and environment come with
 * every launch from the placement.  Before the first such executor starts,
 * the backend removes every container an earlier relish left on this
 * state database (found by its owner label), except running oneshot
 * containers: those whose segment the store says is running are adopted
 * (their output read again with `logs -f`, their exit code with `wait`);
 * the rest are removed before the loop starts (sweep).  Segments of
 * removed containers are lost and re-run from their checkpoints; warm and
 * worker containers are always removed (their stdin died with relish).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/procid.h"
#include "container/container.h"
#include "telemetry/inventory.h"

typedef struct cbackend {
	exec_backend base;
	const exec_host *host;
	container_engine engine;
	int reconciled;
	/* What the reconcile found (removed, or kept running for adoption):
	 * kept 1 until it is adopted (then -1) or removed (then 0). */
	container_info *found;
	size_t n_found;
	executor **runs;             /* each attached experiment's executor: the */
	size_t n_runs, n_live;       /* first n_live are attached, the rest detached */
} cbackend;

static int c_open(const exec_host *host, container_engine engine, const exec_backend_ops *ops,
		  exec_backend **out, rl_err *err)
{
	cbackend *b = calloc(1, sizeof *b);
	if (!b)
		return rl_err_set(err, RL_ENOMEM, "container executor");
	b->base.ops = ops;
	b->host = host;
	b->engine = engine;
	*out = &b->base;
	return 0;
}

static int podman_open(const exec_host *host, const void *settings, spec *const *plan,
		       size_t n_plan, exec_backend **out, rl_err *err)
{
	(void)settings, (void)plan, (void)n_plan;
	return c_open(host, CONTAINER_PODMAN, &podman_backend_ops, out, err);
}

static int docker_open(const exec_host *host, const void *settings, spec *const *plan,
		       size_t n_plan, exec_backend **out, rl_err *err)
{
	(void)settings, (void)plan, (void)n_plan;
	return c_open(host, CONTAINER_DOCKER, &docker_backend_ops, out, err);
}

static int c_start(exec_backend *eb, rl_err *err)
{
	(void)eb, (void)err;
	return 0; /* each experiment's executor starts at attach */
}

/* CDI or device nodes: RELISH_CONTAINER_GPUS=cdi|devices chooses; without
 * it CDI when a CDI spec for NVIDIA devices is installed (the engines only
 * read /etc/cdi and /var/run/cdi), device nodes otherwise. */
static int gpu_mode_choose(container_gpu_mode *out, rl_err *err)
{
	const char *v = getenv("RELISH_CONTAINER_GPUS");
	if (v && *v) {
		if (!strcmp(v, "cdi"))
			*out = CONTAINER_GPU_CDI;
		else if (!strcmp(v, "devices"))
			*out = CONTAINER_GPU_DEVICES;
		else
			return rl_err_set(err, RL_EINVAL,
					  "RELISH_CONTAINER_GPUS=%s: expected cdi or devices", v);
		return 0;
	}
	static const char *const dirs[] = {"/etc/cdi", "/var/run/cdi"};
	for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
		DIR *dp = opendir(dirs[i]);
		if (!dp)
			continue;
		int found = 0;
		for (struct dirent *e; !found && (e = readdir(dp));)
			found = strstr(e->d_name, "nvidia") != NULL;
		closedir(dp);
		if (found) {
			*out = CONTAINER_GPU_CDI;
			return 0;
		}
	}
	*out = CONTAINER_GPU_DEVICES;
	return 0;
}

/* Remove what a previous relish left on this database, once per engine;
 * running oneshot containers stay (kept) for adoption. */
static int reconcile_once(cbackend *b, const container_options *o, rl_err *err)
{
	if (b->reconciled)
		return 0;
	container_info *v = NULL;
	size_t n = 0;
	int rc = container_reconcile_adoptable(o, &v, &n, err);
	if (rc < 0)
		return rl_err_prefix(err, "removing containers left by an earlier relish");
	b->reconciled = 1;
	b->found = v;
	b->n_found = n;
	size_t running = 0, kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].kept)
			kept++;
		else
			running += !strcmp(v[i].state, "running");
	}
	if (n > kept) {
		char line[300];
		snprintf(line, sizeof line, "removed %zu container%s left by an earlier relish (%zu "
			 "still running); their segments re-run from their checkpoints",
			 n - kept, n - kept == 1 ? "" : "s", running);
		b->host->say(b->host->ud, line);
	}
	return 0;
}

static container_info *found_named(cbackend *b, const char *name)
{
	for (size_t i = 0; name && *name && i < b->n_found; i++)
		if (!strcmp(b->found[i].name, name))
			return &b->found[i];
	return NULL;
}

static int c_attach(exec_backend *eb, const exec_experiment *xp, executor **run, rl_err *err)
{
	cbackend *b = (cbackend *)eb;
	const exec_host *h = b->host;
	const device_list *devs = h->devs;
	const spec *sp = xp->sp;
	executor **runs = realloc(b->runs, (b->n_runs + 1) * sizeof *runs);
	if (!runs)
		return rl_err_set(err, RL_ENOMEM, "container executor");
	b->runs = runs;
	container_options o;
	container_options_default(&o);
	o.engine = b->engine;
	o.binary = getenv(o.engine == CONTAINER_DOCKER ? "RELISH_DOCKER" : "RELISH_PODMAN");
	if (o.binary && !*o.binary)
		o.binary = NULL;
	o.image = sp->trial.image;
	/* A service attaches on its loop, where every user's requests wait:
	 * `podman image exists` there cost ~0.7 s per container submission.
	 * A missing image is told by the first launch instead (--pull=never:
	 * "the image is missing", and the experiment stops; container.c). */
	if (h->service)
		o.check_image = 0;
	o.network = sp->trial.network;
	o.experiment = sp->name;
	o.owner = h->owner;
	o.mps_dir = h->mps_dir;
	/* Least privilege unless the spec grants more (trial.privileges,
	 * docs/containers.md; spec_grants lists what it asks). */
	const spec_privileges *pv = &sp->trial.privileges;
	o.cap_add = (const char *const *)pv->capabilities;
	o.n_cap_add = pv->n_capabilities;
	o.user = pv->user;
	/* relish serve: the container's user is the experiment's owner (a
	 * user the spec names instead is a grant the service allowed) */
	char owner_user[48];
	if (!pv->user && xp->run_as) {
		snprintf(owner_user, sizeof owner_user, "%u:%u", (unsigned)xp->run_as->uid,
			 (unsigned)xp->run_as->gid);
		o.user = owner_user;
	}
	o.writable_root = pv->writable_root;
	o.new_privileges = pv->new_privileges;

	container_mount *m = NULL;
	const char **uuids = NULL;
	char *state = NULL;
	int rc = 0;
	/* A worker container trains one trial after another: the launch
	 * mounts only its first segment's checkpoint folder, so the whole
	 * experiment folder (every trial-N/ckpt) is mounted for the rest. */
	int worker = sp->trial.mode == TRIAL_MODE_WORKER;
	size_t nm = sp->trial.n_mounts + (size_t)worker;
	if (nm) {
		if (!(m = calloc(nm, sizeof *m))) {
			rc = rl_err_set(err, RL_ENOMEM, "container mounts");
			goto out;
		}
		for (size_t i = 0; i < sp->trial.n_mounts; i++) {
			m[i].host = sp->trial.mounts[i].host;
			m[i].target = sp->trial.mounts[i].target;
			m[i].read_only = sp->trial.mounts[i].read_only;
			/* The working folder inside: trial.workdir, where a mount
			 * puts it at the same path (the image's otherwise). */
			size_t hl = strlen(m[i].host);
			const char *wd = sp->trial.workdir;
			if (wd && !strcmp(m[i].host, m[i].target) && !strncmp(wd, m[i].host, hl) &&
			    (wd[hl] == '/' || wd[hl] == '\0'))
				o.workdir = wd;
		}
		if (worker)
			m[nm - 1] = (container_mount){.host = xp->dir, .target = xp->dir, .read_only = 0};
		o.mounts = m;
		o.n_mounts = nm;
	}
	if (sp->trial.resources.gpus > 0) {
		if ((rc = gpu_mode_choose(&o.gpu_mode, err)) < 0)
			goto out;
		/* Device nodes with UUIDs: /dev/nvidia<i> is the GPU at NVML index i. */
		int max = -1;
		for (size_t i = 0; i < devs->n; i++)
			if (devs->dev[i].nvml_index > max)
				max = devs->dev[i].nvml_index;
		if (max >= 0) {
			if (!(uuids = calloc((size_t)max + 1, sizeof *uuids))) {
				rc = rl_err_set(err, RL_ENOMEM, "container GPUs");
				goto out;
			}
			for (size_t i = 0; i < devs->n; i++)
				if (devs->dev[i].nvml_index >= 0)
					uuids[devs->dev[i].nvml_index] = devs->dev[i].info.uuid;
			for (int i = 0; i <= max; i++)
				if (!uuids[i])
					uuids[i] = "";
			o.gpu_uuids = uuids;
			o.n_gpu_uuids = (size_t)max + 1;
		}
	}
	if (asprintf(&state, "%s/containers", xp->dir) < 0) {
		state = NULL;
		rc = rl_err_set(err, RL_ENOMEM, "container state folder");
		goto out;
	}
	o.state_dir = state;
	if ((rc = reconcile_once(b, &o, err)) < 0 ||
	    (rc = exec_podman_new(h->loop, &o, run, err)) < 0)
		rl_err_prefix(err, "%s", sp->source ? sp->source : sp->name);
	else {
		/* attached ones first */
		if (b->n_live < b->n_runs)
			b->runs[b->n_runs] = b->runs[b->n_live];
		b->n_runs++;
		b->runs[b->n_live++] = *run;
	}
out:
	free(m);
	free(uuids);
	free(state);
	return rc;
}

static void c_detach(exec_backend *eb, executor *run)
{
	cbackend *b = (cbackend *)eb;
	/* Stopped now; freed with the backend, once the loop has let its
	 * containers go (close). */
	exec_shutdown(run);
	for (size_t i = 0; i < b->n_live; i++)
		if (b->runs[i] == run) {
			b->runs[i] = b->runs[--b->n_live];
			b->runs[b->n_live] = run;
			break;
		}
}

static int c_adoptable(exec_backend *eb, executor *run, const exec_found *f)
{
	(void)run;
	container_info *ci = found_named((cbackend *)eb, f->id.handle);
	return ci && ci->kept > 0 && !strcmp(ci->experiment, f->experiment);
}

static int c_adopt(exec_backend *eb, executor *run, const exec_found *f, const exec_spec *es,
		   const exec_callbacks *cb, void *ud, exec_segment **out, char *said, size_t n,
		   rl_err *err)
{
	int rc = exec_podman_adopt(run, f->id.handle, es, cb, ud, out, err);
	if (rc < 0)
		return rc;
	container_info *ci = found_named((cbackend *)eb, f->id.handle);
	if (ci)
		ci->kept = -1; /* not swept */
	snprintf(said, n, "its container %s was still running and was adopted", f->id.handle);
	return 0;
}

static void c_lose(exec_backend *eb, executor *run, const exec_found *f, char *said, size_t n)
{
	cbackend *b = (cbackend *)eb;
	if (f->id.handle[0]) {
		/* The reconcile already removed what the earlier relish left;
		 * reclaim kills a surviving attach process and removes the
		 * name again if needed. */
		container_info *ci = found_named(b, f->id.handle);
		snprintf(said, n, "its container %s %s", f->id.handle,
			 !ci ? "was gone"
			 : !strcmp(ci->state, "running") ? "was still running and was removed"
							  : "had stopped and was removed");
		if (ci && ci->kept > 0)
			ci->kept = 0;
	} else {
		int alive = f->id.pid > 0 && procid_matches(f->id.pid, f->id.start_time);
		snprintf(said, n, "%s", alive ? "its process was still running and was stopped"
					      : "its process was gone");
	}
	if (f->id.pid > 0 || f->id.handle[0])
		run->ops->reclaim(run, &f->id, NULL);
}

static void c_sweep(exec_backend *eb)
{
	cbackend *b = (cbackend *)eb;
	if (!b->n_live)
		return;
	executor *ex = b->runs[0];
	for (size_t i = 0; i < b->n_found; i++) {
		container_info *ci = &b->found[i];
		if (ci->kept <= 0)
			continue;
		exec_ident id = {0};
		snprintf(id.handle, sizeof id.handle, "%s", ci->name);
		ex->ops->reclaim(ex, &id, NULL);
		char line[300];
		snprintf(line, sizeof line, "removed container %s left running by an earlier relish "
			 "(no running segment of this run to adopt it)", ci->name);
		b->host->say(b->host->ud, line);
		ci->kept = 0;
	}
}

static void c_shutdown(exec_backend *eb)
{
	cbackend *b = (cbackend *)eb;
	for (size_t i = 0; i < b->n_runs; i++)
		exec_shutdown(b->runs[i]);
}

static void c_close(exec_backend *eb)
{
	cbackend *b = (cbackend *)eb;
	for (size_t i = 0; i < b->n_runs; i++)
		exec_free(b->runs[i]);
	free(b->runs);
	free(b->found);
	free(b);
}

#define C_OPS(engine_name, open_fn)                                                       \
	{                                                                                 \
		.name = engine_name, .title = engine_name, .units = "containers",         \
		.clean_env = 1, .open = open_fn, .start = c_start, .attach = c_attach,    \
		.detach = c_detach, .adoptable = c_adoptable, .adopt = c_adopt,           \
		.lose = c_lose, .sweep = c_sweep, .shutdown = c_shutdown, .close = c_close, \
	}
const exec_backend_ops podman_backend_ops = C_OPS("podman", podman_open);
const exec_backend_ops docker_backend_ops = C_OPS("docker", docker_open);
#undef C_OPS
