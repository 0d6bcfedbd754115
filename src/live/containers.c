/*
 * containers.c - the live driver's side of trial.executor podman | docker
 * (docs/containers.md, "relish run with containers").
 *
 * An experiment whose trials run in containers gets its own container
 * executor (container/container.h): the image, network, mounts, labels and GPU
 * hand-over are per experiment, while the memory limit, CPU share,
 * checkpoint mount and environment come with every launch from the
 * placement.  Before the first such executor starts, the driver removes
 * every container a previous relish left behind on this state database
 * (found by its owner label), except running oneshot containers: recover.c
 * adopts those whose segment the store says is running (their output is
 * read again with `logs -f`, their exit code with `wait`); the rest are
 * removed when the loop starts (live_container_sweep).  Segments of removed
 * containers are marked lost and re-run from their checkpoints; warm and
 * worker containers are always removed (their stdin died with relish).
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "container/container.h"
#include "live/live_int.h"

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
 * running oneshot containers stay for recover.c to adopt.  In d->removed,
 * kept is 1 + the engine (podman, docker) for such a container until it is
 * adopted (then -1) or swept (live_container_sweep, then 0). */
static int reconcile_once(live *d, const container_options *o, rl_err *err)
{
	int e = o->engine == CONTAINER_DOCKER;
	if (d->reconciled[e])
		return 0;
	container_info *v = NULL;
	size_t n = 0;
	int rc = container_reconcile_adoptable(o, &v, &n, err);
	if (rc < 0)
		return rl_err_prefix(err, "removing containers left by an earlier relish");
	d->reconciled[e] = 1;
	if (!n)
		return 0;
	container_info *all = realloc(d->removed, (d->n_removed + n) * sizeof *all);
	if (!all) {
		free(v);
		return rl_err_set(err, RL_ENOMEM, "container list");
	}
	memcpy(all + d->n_removed, v, n * sizeof *v);
	d->removed = all;
	d->n_removed += n;
	free(v);
	size_t running = 0, kept = 0;
	for (size_t i = d->n_removed - n; i < d->n_removed; i++) {
		container_info *ci = &d->removed[i];
		if (ci->kept) {
			ci->kept = 1 + e;
			kept++;
		} else {
			running += !strcmp(ci->state, "running");
		}
	}
	if (n > kept)
		live_progress_line(d, "removed %zu container%s left by an earlier relish (%zu still running); "
				   "their segments re-run from their checkpoints",
				   n - kept, n - kept == 1 ? "" : "s", running);
	return 0;
}

container_info *live_container_removed(live *d, const char *name)
{
	for (size_t i = 0; name && i < d->n_removed; i++)
		if (!strcmp(d->removed[i].name, name))
			return &d->removed[i];
	return NULL;
}

void live_container_sweep(live *d)
{
	for (size_t i = 0; i < d->n_removed; i++) {
		container_info *ci = &d->removed[i];
		if (ci->kept <= 0)
			continue;
		int e = ci->kept - 1;
		for (size_t k = 0; k < d->n_exps; k++) {
			live_exp *x = d->exps[k];
			if (!x->ex || (x->sp->trial.executor == EXEC_DOCKER) != e)
				continue;
			exec_ident id = {0};
			snprintf(id.handle, sizeof id.handle, "%s", ci->name);
			x->ex->ops->reclaim(x->ex, &id, NULL);
			live_progress_line(d, "removed container %s left running by an earlier relish "
					   "(no running segment of this run to adopt it)", ci->name);
			ci->kept = 0;
			break;
		}
	}
}

int live_container_setup(live *d, live_exp *x, rl_err *err)
{
	const spec *sp = x->sp;
	if (sp->trial.executor != EXEC_PODMAN && sp->trial.executor != EXEC_DOCKER)
		return 0;
	container_options o;
	container_options_default(&o);
	o.engine = sp->trial.executor == EXEC_DOCKER ? CONTAINER_DOCKER : CONTAINER_PODMAN;
	o.binary = getenv(o.engine == CONTAINER_DOCKER ? "RELISH_DOCKER" : "RELISH_PODMAN");
	if (o.binary && !*o.binary)
		o.binary = NULL;
	o.image = sp->trial.image;
	o.network = sp->trial.network;
	o.experiment = sp->name;
	char owner[24];
	container_owner_id(d->db_path, owner, sizeof owner);
	o.owner = owner;
	o.mps_dir = d->mps ? d->mps_dir : NULL;
	/* Least privilege unless the spec grants more (trial.privileges,
	 * docs/containers.md; spec_grants lists what it asks). */
	const spec_privileges *pv = &sp->trial.privileges;
	o.cap_add = (const char *const *)pv->capabilities;
	o.n_cap_add = pv->n_capabilities;
	o.user = pv->user;
	/* relish serve: the container's user is the experiment's owner (a
	 * user the spec names instead is a grant the service allowed) */
	char owner_user[48];
	if (!pv->user && x->owner.run_as) {
		snprintf(owner_user, sizeof owner_user, "%u:%u", (unsigned)x->owner.uid,
			 (unsigned)x->owner.gid);
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
			m[nm - 1] = (container_mount){.host = x->dir, .target = x->dir, .read_only = 0};
		o.mounts = m;
		o.n_mounts = nm;
	}
	if (sp->trial.resources.gpus > 0) {
		if ((rc = gpu_mode_choose(&o.gpu_mode, err)) < 0)
			goto out;
		/* Device nodes with UUIDs: /dev/nvidia<i> is the GPU at NVML index i. */
		int max = -1;
		for (size_t i = 0; i < d->devs->n; i++)
			if (d->devs->dev[i].nvml_index > max)
				max = d->devs->dev[i].nvml_index;
		if (max >= 0) {
			if (!(uuids = calloc((size_t)max + 1, sizeof *uuids))) {
				rc = rl_err_set(err, RL_ENOMEM, "container GPUs");
				goto out;
			}
			for (size_t i = 0; i < d->devs->n; i++)
				if (d->devs->dev[i].nvml_index >= 0)
					uuids[d->devs->dev[i].nvml_index] = d->devs->dev[i].info.uuid;
			for (int i = 0; i <= max; i++)
				if (!uuids[i])
					uuids[i] = "";
			o.gpu_uuids = uuids;
			o.n_gpu_uuids = (size_t)max + 1;
		}
	}
	if (asprintf(&state, "%s/containers", x->dir) < 0) {
		state = NULL;
		rc = rl_err_set(err, RL_ENOMEM, "container state folder");
		goto out;
	}
	o.state_dir = state;
	if ((rc = reconcile_once(d, &o, err)) < 0 ||
	    (rc = exec_podman_new(&d->loop, &o, &x->ex, err)) < 0)
		rl_err_prefix(err, "%s", sp->source ? sp->source : sp->name);
out:
	free(m);
	free(uuids);
	free(state);
	return rc;
}
