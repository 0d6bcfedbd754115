/*
 * container.c - the pure half of the container executor (container.h): the
 * engine's command line for a segment, names, labels, the owner id, reading
 * `ps` output, and what an exit code means when a container runtime sits
 * between relish and the trial.  Nothing here starts a process; podman.c
 * does, so everything here is tested without an engine.
 */
#include "container/container.h"
#include "spec/spec.h"

#include <ctype.h>
#include <stdarg.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

void container_options_default(container_options *o)
{
	memset(o, 0, sizeof *o);
	o->engine = CONTAINER_PODMAN;
	o->network = "none";
	o->check_image = 1;
	exec_options_default(&o->exec);
}

/* ---- a growable argv ------------------------------------------------------ */

typedef struct strv {
	char **v;
	size_t n, cap;
	int oom;
} strv;

static void sv_add(strv *s, const char *x)
{
	if (s->oom)
		return;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = 1;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	char *d = strdup(x);
	if (!d) {
		s->oom = 1;
		return;
	}
	s->v[s->n++] = d;
	s->v[s->n] = NULL;
}

static void sv_addf(strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sv_addf(strv *s, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof buf) {
		/* Long values (a big RELISH_PARAMS) take the slow path. */
		char *big = NULL;
		va_start(ap, fmt);
		if (vasprintf(&big, fmt, ap) < 0)
			big = NULL;
		va_end(ap);
		if (!big) {
			s->oom = 1;
			return;
		}
		sv_add(s, big);
		free(big);
		return;
	}
	sv_add(s, buf);
}

/* ---- names, owner --------------------------------------------------------- */

static void sanitize_into(char *dst, size_t n, const char *src)
{
	size_t j = strlen(dst);
	for (const char *p = src; *p && j + 1 < n; p++) {
		unsigned char c = (unsigned char)*p;
		dst[j++] = (isalnum(c) || c == '_' || c == '.' || c == '-') ? (char)c : '_';
	}
	dst[j] = '\0';
}

void container_name(const char *experiment, const char *trial_id, double to, uint32_t tag,
		    char *buf, size_t n)
{
	char tmp[121] = "relish-";
	char part[64];
	sanitize_into(tmp, 56, experiment && *experiment ? experiment : "x");
	strcat(tmp, "-");
	sanitize_into(tmp, 96, trial_id && *trial_id ? trial_id : "worker");
	snprintf(part, sizeof part, "-%g-%08x", to, tag);
	/* "%g" of a resource may hold '+' ("1e+06"): sanitise that too. */
	sanitize_into(tmp, sizeof tmp, part);
	snprintf(buf, n, "%s", tmp);
}

/* ---- environment ------------------------------------------------------------ */

/* Always passed, even when relish's own environment holds the same value:
 * they describe the segment, not the host. */
static const char *const pass_prefixes[] = {
	"RELISH_", "OMP_NUM_THREADS=", "OPENBLAS_NUM_THREADS=", "MKL_NUM_THREADS=",
	"CUDA_", "NVIDIA_", "TF_FORCE_GPU_ALLOW_GROWTH=",
};

static int env_passes(const char *kv)
{
	for (size_t i = 0; i < sizeof pass_prefixes / sizeof *pass_prefixes; i++)
		if (strncmp(kv, pass_prefixes[i], strlen(pass_prefixes[i])) == 0)
			return 1;
	for (char **e = environ; e && *e; e++)
		if (strcmp(*e, kv) == 0)
			return 0; /* inherited from relish unchanged */
	return 1;
}

/* ---- GPUs -------------------------------------------------------------------- */

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/*
 * Add the --device arguments for the devices listed in cvd (a
 * CUDA_VISIBLE_DEVICES value) and write, into inner (size n), the value the
 * trial sees inside: indices become 0..k-1 (the container sees only its own
 * devices, in the order given); UUIDs stay, being the same everywhere.
 */
static int gpu_args(const container_options *o, const char *cvd, strv *s, char *inner, size_t n,
		    rl_err *err)
{
	char list[1024];
	snprintf(list, sizeof list, "%s", cvd);
	inner[0] = '\0';
	size_t k = 0;
	char *save = NULL;
	for (char *d = strtok_r(list, ",", &save); d; d = strtok_r(NULL, ",", &save), k++) {
		while (*d == ' ')
			d++;
		int numeric = all_digits(d);
		if (o->gpu_mode == CONTAINER_GPU_CDI) {
			sv_addf(s, "--device=nvidia.com/gpu=%s", d);
		} else {
			long idx = -1;
			if (numeric) {
				idx = strtol(d, NULL, 10);
			} else {
				for (size_t i = 0; i < o->n_gpu_uuids; i++)
					if (o->gpu_uuids[i] && strcmp(o->gpu_uuids[i], d) == 0)
						idx = (long)i;
			}
			if (idx < 0)
				return rl_err_set(err, RL_EUNSUPPORTED,
						  "GPU %s: not among the %zu known devices; gpu mode "
						  "'devices' needs an index or a known UUID (or use CDI)",
						  d, o->n_gpu_uuids);
			sv_addf(s, "--device=/dev/nvidia%ld", idx);
		}
		size_t used = strlen(inner);
		if (numeric)
			snprintf(inner + used, n - used, "%s%zu", k ? "," : "", k);
		else
			snprintf(inner + used, n - used, "%s%s", k ? "," : "", d);
	}
	if (o->gpu_mode == CONTAINER_GPU_DEVICES && k > 0) {
		static const char *const ctl[] = {"/dev/nvidiactl", "/dev/nvidia-uvm",
						  "/dev/nvidia-uvm-tools"};
		for (size_t i = 0; i < sizeof ctl / sizeof *ctl; i++)
			sv_addf(s, "--device=%s", ctl[i]);
	}
	return 0;
}

/* ---- privileges -------------------------------------------------------------------- */

void container_default_user(char *buf, size_t n)
{
	uid_t uid = geteuid();
	if (uid == 0)
		snprintf(buf, n, "65534:65534");
	else
		snprintf(buf, n, "%lu:%lu", (unsigned long)uid, (unsigned long)getegid());
}

/* The trial's user inside the container (relish serve: its owner):
 * --user UID:GID and each supplementary group, numeric, so the image
 * needs no passwd entry and files on bind mounts keep the host's owner. */
static void add_user(strv *s, const exec_user *u)
{
	if (!u)
		return;
	sv_addf(s, "--user=%u:%u", (unsigned)u->uid, (unsigned)u->gid);
	for (size_t i = 0; i < u->n_groups; i++)
		if (u->groups[i] != u->gid)
			sv_addf(s, "--group-add=%u", (unsigned)u->groups[i]);
}

/* What the container may do (container.h, "Privileges"): each right is off
 * unless the options grant it.  The user: the spec's (a grant), else the
 * segment's run-as user (relish serve: the submitter), else the default. */
static void add_privileges(strv *s, const container_options *o, const exec_user *run_as)
{
	sv_add(s, "--cap-drop=all");
	for (size_t i = 0; i < o->n_cap_add; i++)
		sv_addf(s, "--cap-add=%s", o->cap_add[i]);
	if (!o->new_privileges)
		sv_add(s, "--security-opt=no-new-privileges");
	char user[32], own[32] = "";
	if (run_as)
		snprintf(own, sizeof own, "%u:%u", (unsigned)run_as->uid, (unsigned)run_as->gid);
	if (run_as && (!o->user || !*o->user || !strcmp(o->user, own))) {
		add_user(s, run_as); /* the owner, with their groups */
		user[0] = '\0';
	} else if (o->user && *o->user) {
		snprintf(user, sizeof user, "%s", o->user);
	} else {
		container_default_user(user, sizeof user);
		/* Rootless podman maps the invoking user to root inside; keep-id
		 * maps it to itself, so the trial owns what the user owns. */
		if (geteuid() != 0 && o->engine == CONTAINER_PODMAN)
			sv_add(s, "--userns=keep-id");
	}
	if (user[0])
		sv_addf(s, "--user=%s", user);
	if (!o->writable_root) {
		/* The trial writes its checkpoint folder (a bind mount) and
		 * /tmp; nothing of the image. */
		sv_add(s, "--read-only");
		sv_add(s, "--tmpfs=/tmp");
	}
}

/* ---- argv ---------------------------------------------------------------------- */

static const char *mode_name(trial_mode m)
{
	return m == TRIAL_MODE_WARM ? "warm" : m == TRIAL_MODE_WORKER ? "worker" : "oneshot";
}

/* One field of docker's --mount value, which is CSV: a field holding a comma
 * or a quote is quoted, quotes doubled. */
static void csv_field(char *out, size_t n, const char *key, const char *val)
{
	char f[PATH_MAX + 16];
	snprintf(f, sizeof f, "%s=%s", key, val);
	if (!strpbrk(f, ",\"")) {
		snprintf(out, n, "%s", f);
		return;
	}
	size_t k = 0;
	if (k + 1 < n)
		out[k++] = '"';
	for (const char *c = f; *c && k + 3 < n; c++) {
		if (*c == '"')
			out[k++] = '"';
		out[k++] = *c;
	}
	if (k + 1 < n)
		out[k++] = '"';
	out[k] = '\0';
}

/* A bind mount.  podman: --volume=HOST:TARGET[:ro], which fails on a host
 * path that does not exist.  docker's --volume would create it instead
 * (an empty folder, owned by root, for a mistyped path), so docker gets
 * --mount, which fails like podman. */
static void add_bind(strv *s, int docker, const char *host, const char *target, int ro)
{
	if (!docker) {
		sv_addf(s, "--volume=%s:%s%s", host, target, ro ? ":ro" : "");
		return;
	}
	char src[2 * PATH_MAX + 32], dst[2 * PATH_MAX + 32];
	csv_field(src, sizeof src, "source", host);
	csv_field(dst, sizeof dst, "target", target);
	sv_addf(s, "--mount=type=bind,%s,%s%s", src, dst, ro ? ",readonly" : "");
}

int container_build_argv(const container_options *o, const exec_spec *es, const char *name,
			 const char *cidfile, char ***out, rl_err *err)
{
	if (!es->argv || !es->argv[0])
		return rl_err_set(err, RL_EINVAL, "trial command is empty");
	if (!o->image || !*o->image)
		return rl_err_set(err, RL_EINVAL, "no container image given");
	/* the spec refused it already; a stored spec from before that rule,
	 * or a caller other than the spec, meets it here (spec_image.c) */
	const char *why = spec_image_problem(o->image);
	if (why)
		return rl_err_set(err, RL_EINVAL, "container image %s: expected %s", o->image, why);
	const char *lp = o->label_prefix ? o->label_prefix : "relish";
	int docker = o->engine == CONTAINER_DOCKER;
	const char *bin = o->binary ? o->binary : docker ? "docker" : "podman";
	strv s = {0};
	sv_add(&s, bin);
	sv_add(&s, "run");
	/* --rm for warm/worker containers: the engine removes one that ended
	 * on its own before its attach process exits; podman.c removes the
	 * rest.  Not for oneshot ones: with --rm, an attach process whose
	 * output pipe broke (relish was killed) stops and removes its
	 * container, which could otherwise be adopted after a restart;
	 * podman.c removes each oneshot container once it has ended. */
	if (es->mode != TRIAL_MODE_ONESHOT)
		sv_add(&s, "--rm");
	/* --init: without it the trial is PID 1, which ignores SIGTERM. */
	sv_add(&s, "--init");
	if (es->mode != TRIAL_MODE_ONESHOT)
		sv_add(&s, "-i"); /* warm/worker: the contract's commands on stdin */
	sv_addf(&s, "--name=%s", name);
	sv_addf(&s, "--label=%s.owner=%s", lp, o->owner ? o->owner : "");
	sv_addf(&s, "--label=%s.experiment=%s", lp, o->experiment ? o->experiment : "");
	sv_addf(&s, "--label=%s.trial=%s", lp, es->a.trial_id ? es->a.trial_id : "");
	sv_addf(&s, "--label=%s.segment=%g-%g", lp, es->a.from, es->a.to);
	sv_addf(&s, "--label=%s.mode=%s", lp, mode_name(es->mode));
	sv_addf(&s, "--network=%s", o->network && *o->network ? o->network : "none");
	/* Never reach for a registry: a missing image fails at once. */
	sv_add(&s, "--pull=never");
	add_privileges(&s, o, es->run_as);
	if (es->memory_limit_mib) {
		sv_addf(&s, "--memory=%llum", (unsigned long long)es->memory_limit_mib);
		/* Equal to --memory: no swap, so the limit is an OOM, not a crawl. */
		sv_addf(&s, "--memory-swap=%llum", (unsigned long long)es->memory_limit_mib);
	}
	if (es->cpus > 0)
		sv_addf(&s, "--cpus=%g", es->cpus);
	const char *cvd = es->envp ? contract_env_get(es->envp, "CUDA_VISIBLE_DEVICES") : NULL;
	int gpus = o->gpu_mode != CONTAINER_GPU_NONE && cvd && *cvd;
	if (gpus && o->mps_dir && *o->mps_dir) {
		/* MPS clients talk to the daemon through its pipe directory and
		 * shared memory: both must be the host's (a trial without a GPU
		 * gets neither: nothing of the host's IPC is its to see). */
		sv_add(&s, "--ipc=host");
		add_bind(&s, docker, o->mps_dir, o->mps_dir, 0);
	}
	for (size_t i = 0; i < o->n_mounts; i++) {
		const container_mount *m = &o->mounts[i];
		add_bind(&s, docker, m->host, m->target ? m->target : m->host, m->read_only);
	}
	if (es->a.checkpoint_dir && *es->a.checkpoint_dir)
		add_bind(&s, docker, es->a.checkpoint_dir, es->a.checkpoint_dir, 0);
	if (o->workdir && *o->workdir)
		sv_addf(&s, "--workdir=%s", o->workdir);
	if (cidfile)
		sv_addf(&s, "--cidfile=%s", cidfile);
	char inner[1024] = "";
	if (gpus) {
		int rc = gpu_args(o, cvd, &s, inner, sizeof inner, err);
		if (rc < 0) {
			contract_strv_free(s.v);
			return rc;
		}
	}
	if (gpus && o->mps_dir && *o->mps_dir &&
	    !(es->envp && contract_env_get(es->envp, "CUDA_MPS_PIPE_DIRECTORY")))
		sv_addf(&s, "--env=CUDA_MPS_PIPE_DIRECTORY=%s", o->mps_dir);
	for (char *const *e = es->envp; e && *e; e++) {
		if (!strchr(*e, '=') || !env_passes(*e))
			continue;
		/* NVIDIA_VISIBLE_DEVICES is the NVIDIA container hook's list
		 * of devices to add: never the trial's to choose (=all would
		 * give it every GPU); it is set below. */
		if (strncmp(*e, "NVIDIA_VISIBLE_DEVICES=", 23) == 0)
			continue;
		/* A trial that got no GPU gets no GPU variable at all: an
		 * image or a hook acting on one must find nothing. */
		if (!gpus && (strncmp(*e, "CUDA_", 5) == 0 || strncmp(*e, "NVIDIA_", 7) == 0))
			continue;
		if (gpus && strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) == 0)
			sv_addf(&s, "--env=CUDA_VISIBLE_DEVICES=%s", inner);
		else
			sv_addf(&s, "--env=%s", *e);
	}
	/* Under the NVIDIA hook an image's own NVIDIA_VISIBLE_DEVICES=all
	 * (CUDA base images set it) would add every GPU: a trial without
	 * GPUs says void (no device, what runc alone does), one with GPUs
	 * names the host's devices it was given. */
	if (gpus)
		sv_addf(&s, "--env=NVIDIA_VISIBLE_DEVICES=%s", cvd);
	else
		sv_add(&s, "--env=NVIDIA_VISIBLE_DEVICES=void");
	/* The end of the engine's options: whatever the image reference
	 * holds, it is never read as one (spec.c refuses a leading '-' too). */
	sv_add(&s, "--");
	sv_add(&s, o->image);
	for (char *const *a = es->argv; *a; a++)
		sv_add(&s, *a);
	if (s.oom) {
		contract_strv_free(s.v);
		return rl_err_set(err, RL_ENOMEM, "building the container command");
	}
	*out = s.v;
	return 0;
}

/* ---- classification ---------------------------------------------------------- */

/* Messages only the engine or the container's init print. */
static const struct {
	const char *marker;
	const char *meaning;
} runtime_markers[] = {
	{"image not known", "the image is missing (build or pull it)"},
	{"No such image", "the image is missing (build or pull it)"},
	{"Unable to find image", "the image is missing (build or pull it)"},
	{"failed to exec pid1", "the image cannot execute the trial's command"},
	/* docker's --init (tini): "[FATAL tini (7)] exec /x failed: ..." */
	{"[FATAL tini", "the image cannot execute the trial's command"},
	{"executable file not found", "the image cannot execute the trial's command"},
	{"container-init binary not found", "--init needs catatonit on the host"},
	{"OCI runtime", "the OCI runtime failed"},
};

/* The last line of tail in the engine's own words: podman's "Error: ...",
 * docker's "docker: Error response from daemon: ...", or an init's fatal
 * message ("ERROR (catatonit...", "[FATAL tini ..."). */
static void last_error_line(const char *tail, char *buf, size_t n)
{
	buf[0] = '\0';
	for (const char *p = tail; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if ((len >= 6 && strncmp(p, "Error:", 6) == 0) || (len >= 5 && strncmp(p, "ERROR", 5) == 0) ||
		    (len >= 13 && strncmp(p, "docker: Error", 13) == 0) ||
		    (len >= 11 && strncmp(p, "[FATAL tini", 11) == 0))
			snprintf(buf, n, "%.*s", (int)len, p);
		p = nl ? nl + 1 : p + len;
	}
}

void container_classify(exec_result *r, const char *log_tail, uint64_t mem_limit_mib)
{
	if (r->outcome == SEG_OUT_CANCELLED || r->outcome == SEG_OUT_TIMEOUT ||
	    r->outcome == SEG_OUT_COMPLETED)
		return;
	const char *meaning = NULL;
	for (size_t i = 0; log_tail && i < sizeof runtime_markers / sizeof *runtime_markers; i++)
		if (strstr(log_tail, runtime_markers[i].marker)) {
			meaning = runtime_markers[i].meaning;
			break;
		}
	int code = r->exited ? r->exit_code : -1;
	if (code == 125 || code == 126 || code == 127 || (r->exited && meaning)) {
		char line[160];
		last_error_line(log_tail, line, sizeof line);
		r->outcome = SEG_OUT_FAILED;
		r->fault = EXEC_FAULT_RUNTIME;
		r->oom_marker = NULL;
		snprintf(r->reason, sizeof r->reason, CONTAINER_RUNTIME_REASON "exit code %d: %s%s%s",
			 code,
			 meaning ? meaning
				 : code == 125 ? "the engine could not run the container"
				   : code == 126 ? "the command cannot be invoked"
						 : "the command was not found",
			 line[0] ? ": " : "", line);
		return;
	}
	if (code == 137) {
		r->outcome = SEG_OUT_OOM;
		r->oom_marker = "exit 137";
		if (mem_limit_mib) {
			/* --memory is its reservation: its own limit, not
			 * the machine's memory running out. */
			r->over_reservation = 1;
			snprintf(r->reason, sizeof r->reason,
				 "killed at the container's memory limit (%llu MiB), its "
				 "reservation",
				 (unsigned long long)mem_limit_mib);
		} else {
			snprintf(r->reason, sizeof r->reason,
				 "out of memory: exit 137 (SIGKILL inside the container)");
		}
	}
}

/* ---- ps output ------------------------------------------------------------------ */

static const char *label_of(json_t *labels, const char *key, char *buf, size_t n)
{
	buf[0] = '\0';
	if (json_is_object(labels)) {
		const char *v = json_string_value(json_object_get(labels, key));
		if (v)
			snprintf(buf, n, "%s", v);
	} else if (json_is_string(labels)) {
		/* docker: "k=v,k=v" */
		const char *s = json_string_value(labels);
		size_t kl = strlen(key);
		for (const char *p = s; p && *p;) {
			const char *end = strchr(p, ',');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=')
				snprintf(buf, n, "%.*s", (int)(len - kl - 1), p + kl + 1);
			p = end ? end + 1 : p + len;
		}
	}
	return buf;
}

static int add_info(json_t *obj, const char *lp, container_info **v, size_t *n, size_t *cap)
{
	if (!json_is_object(obj))
		return 0;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		container_info *nv = realloc(*v, c * sizeof *nv);
		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	container_info *ci = &(*v)[*n];
	memset(ci, 0, sizeof *ci);
	json_t *names = json_object_get(obj, "Names");
	const char *name = json_is_array(names) ? json_string_value(json_array_get(names, 0))
						: json_string_value(names);
	if (!name || !*name)
		return 0; /* unnamed: not ours */
	snprintf(ci->name, sizeof ci->name, "%s", name);
	const char *id = json_string_value(json_object_get(obj, "Id"));
	if (!id)
		id = json_string_value(json_object_get(obj, "ID"));
	snprintf(ci->id, sizeof ci->id, "%s", id ? id : "");
	const char *st = json_string_value(json_object_get(obj, "State"));
	snprintf(ci->state, sizeof ci->state, "%s", st ? st : "");
	json_t *labels = json_object_get(obj, "Labels");
	char key[96];
	snprintf(key, sizeof key, "%s.experiment", lp);
	label_of(labels, key, ci->experiment, sizeof ci->experiment);
	snprintf(key, sizeof key, "%s.trial", lp);
	label_of(labels, key, ci->trial, sizeof ci->trial);
	snprintf(key, sizeof key, "%s.segment", lp);
	label_of(labels, key, ci->segment, sizeof ci->segment);
	snprintf(key, sizeof key, "%s.mode", lp);
	label_of(labels, key, ci->mode, sizeof ci->mode);
	(*n)++;
	return 0;
}

int container_parse_ps(const char *text, const char *label_prefix, container_info **out,
		       size_t *n_out, rl_err *err)
{
	const char *lp = label_prefix ? label_prefix : "relish";
	container_info *v = NULL;
	size_t n = 0, cap = 0;
	json_error_t je;
	const char *p = text;
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p == '[') {
		json_t *arr = json_loads(p, 0, &je);
		if (!json_is_array(arr)) {
			json_decref(arr);
			return rl_err_set(err, RL_EPARSE, "container list: line %d: %s", je.line, je.text);
		}
		size_t i;
		json_t *o;
		json_array_foreach(arr, i, o) {
			if (add_info(o, lp, &v, &n, &cap) < 0) {
				json_decref(arr);
				free(v);
				return rl_err_set(err, RL_ENOMEM, "container list");
			}
		}
		json_decref(arr);
	} else if (*p) {
		/* One object per line (docker's {{json .}}). */
		json_t *o;
		size_t off = 0, len = strlen(p);
		while (off < len) {
			o = json_loadb(p + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
			if (!o) {
				free(v);
				return rl_err_set(err, RL_EPARSE, "container list: line %d: %s", je.line,
						  je.text);
			}
			off += je.position;
			int rc = add_info(o, lp, &v, &n, &cap);
			json_decref(o);
			if (rc < 0) {
				free(v);
				return rl_err_set(err, RL_ENOMEM, "container list");
			}
			while (off < len && (p[off] == '\n' || p[off] == ' ' || p[off] == '\r' || p[off] == '\t'))
				off++;
		}
	}
	if (n == 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	*n_out = n;
	return 0;
}
