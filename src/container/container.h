/*
 * container.h - trials as containers: the podman (and docker) executor and
 * the pieces around it (docs/containers.md is the user's version).
 *
 * One container per trial process: a oneshot segment is one container; a
 * warm or worker process is one container that lives across segments
 * (`run -i`, the contract's stdin commands).  The executor (podman.c) builds
 * a `podman run` command line (container.c, pure) and hands it to the process
 * executor, which already does the pipes, the log, the contract's lines,
 * timeouts, warm reuse and the SIGTERM/SIGKILL ladder; the engine's attach
 * process forwards SIGTERM to the container (--init makes the trial receive
 * it), and whatever outlives the ladder is removed with `rm -f`.  podman.c
 * adds what only a container has: hard limits (--memory, --cpus), the memory
 * peak from the container's cgroup, exit codes read the container way (125,
 * 126, 127 and "failed to exec" are the runtime's fault; 137 is the memory
 * limit), and labels by which a restarted relish finds what it left behind.
 *
 * Labels on every container (prefix configurable, "relish" by default):
 *   relish.owner       exec_owner_id(state database path): whose it is
 *   relish.experiment  the experiment's name
 *   relish.trial       trial id ("" for a worker process)
 *   relish.segment     "FROM-TO" of the segment the container was started for
 *   relish.mode        oneshot | warm | worker
 * Names: relish-<experiment>-<trial>-<to>-<8 hex>, sanitised to the
 * engine's [A-Za-z0-9][A-Za-z0-9_.-]* and at most 120 characters.
 *
 * docker takes the same arguments (run --init --rm --name --label --network
 * --memory --cpus -e --pull never, and the least-privilege ones: --cap-drop
 * --cap-add --security-opt --user --read-only --tmpfs) except bind mounts, which are --mount
 * (docker's -v would create a missing host path).  CI runs podman;
 * scripts/docker-check.sh runs the same container tests against a real,
 * private docker daemon (docs/containers.md).
 */
#ifndef RELISH_CONTAINER_CONTAINER_H
#define RELISH_CONTAINER_CONTAINER_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "exec/exec.h"

typedef enum container_engine { CONTAINER_PODMAN, CONTAINER_DOCKER } container_engine;

/* How a segment's GPUs (the CUDA_VISIBLE_DEVICES the driver put in its
 * environment: UUIDs from gpu_env, or indices) reach the container. */
typedef enum container_gpu_mode {
	CONTAINER_GPU_NONE,    /* no GPU devices are passed (CPU trials) */
	CONTAINER_GPU_CDI,     /* --device nvidia.com/gpu=<uuid or index> */
	CONTAINER_GPU_DEVICES, /* --device /dev/nvidiaN + nvidiactl, nvidia-uvm(-tools) */
} container_gpu_mode;

typedef struct container_mount {
	const char *host;            /* absolute host path */
	const char *target;          /* path inside; NULL: same as host */
	int read_only;
} container_mount;

/* Everything borrowed: exec_podman_new copies what it keeps. */
typedef struct container_options {
	container_engine engine;
	const char *binary;          /* NULL: "podman" or "docker" (via PATH) */
	const char *containers_conf; /* CONTAINERS_CONF for every engine call; NULL: inherited */
	const char *image;           /* required, used verbatim */
	const char *network;         /* NULL: "none" */
	const container_mount *mounts; /* extra bind mounts */
	size_t n_mounts;
	container_gpu_mode gpu_mode;
	/* GPU_DEVICES with UUIDs in CUDA_VISIBLE_DEVICES: uuid of /dev/nvidia<i>
	 * at index i (NVML index order; minor numbers are assumed to follow it). */
	const char *const *gpu_uuids;
	size_t n_gpu_uuids;
	const char *mps_dir;         /* MPS pipe directory: mounted, --ipc host; NULL: no MPS */
	const char *label_prefix;    /* NULL: "relish" */
	const char *experiment;      /* required */
	const char *owner;           /* required: exec_owner_id() of the store */
	const char *workdir;         /* -w inside; NULL: the image's (exec_spec.cwd is a host path) */
	const char *state_dir;       /* cid files and fallback logs; NULL: $TMPDIR or /tmp */
	/* Privileges (docs/containers.md, "Privileges"): the defaults (all
	 * zero) are the least that works for a trial: --cap-drop=all,
	 * --security-opt=no-new-privileges, a user that is not root, a
	 * read-only root file system with a tmpfs /tmp. */
	const char *user;            /* "UID:GID"; NULL: container_default_user() */
	const char *const *cap_add;  /* capability names added back (--cap-add) */
	size_t n_cap_add;
	int writable_root;           /* 1: no --read-only */
	int new_privileges;          /* 1: no no-new-privileges */
	int check_image;             /* exec_podman_new verifies the image exists (blocking) */
	exec_options exec;           /* grace, sampling, idle limits (exec_options_default) */
} container_options;

/* Defaults: podman, network none, check_image 1, exec_options_default. */
void container_options_default(container_options *o);

/*
 * The container executor on loop.  Fails with RL_ERUNTIME when the engine
 * cannot be run or (check_image) the image is missing, naming the image and
 * how to get it; with RL_EINVAL when image, experiment or owner is missing.
 * The checks run the engine synchronously (tenths of a second): call it
 * before the loop runs.  Sets SIGPIPE to ignored, as the process executor.
 *
 * In exec_spec: argv goes verbatim after the image; envp entries become -e
 * (those identical to relish's own environment are left out, except the
 * ones in container.c's pass table: the host's PATH or HOME do not belong in
 * an image); memory_limit_mib becomes --memory and --memory-swap (0: none),
 * cpus --cpus (<= 0: none); a.checkpoint_dir is bind-mounted read-write at
 * the same path (created if missing); cwd is ignored (see workdir);
 * log_path as for processes (NULL: a temporary log read for runtime errors,
 * then deleted).  exec_result.peak_rss_bytes is the container's memory
 * cgroup peak (page cache included) as last sampled, 0 if never sampled.
 * ident fills handle with the container name and pid with the engine's
 * attach process; reclaim removes the named container and returns 0
 * (exec_podman_adopt takes over a running oneshot container instead).
 */
int exec_podman_new(uv_loop_t *loop, const container_options *o, executor **out, rl_err *err);

/* ---- pure helpers (container.c) ---------------------------------------- */

/*
 * The user a trial container runs as when nothing else is asked: relish's
 * own uid:gid when relish is not root (the files it writes, its checkpoint
 * folders, are the user's), else 65534:65534 (nobody:nogroup), so that a
 * rootful engine never runs a trial as root by default.  buf holds >= 32.
 */
void container_default_user(char *buf, size_t n);

/* The reason of a segment the runtime failed starts with this text (for
 * people: the driver reads exec_result.fault == EXEC_FAULT_RUNTIME). */
#define CONTAINER_RUNTIME_REASON "container runtime: "

/*
 * Reclassify a segment's end as seen through the engine's attach process:
 * r (from the process executor) is rewritten in place.  log_tail is the end
 * of the segment's output (may be NULL), mem_limit_mib its --memory.
 * Rules, first match wins: CANCELLED, TIMEOUT and COMPLETED stay; exit 125,
 * 126, 127 or a runtime message in log_tail -> FAILED, fault
 * EXEC_FAULT_RUNTIME, with a CONTAINER_RUNTIME_REASON reason; exit 137 ->
 * OOM; otherwise r stays.
 */
void container_classify(exec_result *r, const char *log_tail, uint64_t mem_limit_mib);

/*
 * The engine's argv (NULL-terminated, malloc'd, free with
 * contract_strv_free) for one trial container: binary run --init [--rm: warm, worker]
 * [-i] --name NAME --label ... --network N --pull never --cap-drop=all
 * [--cap-add=C...] [--security-opt=no-new-privileges] --user U
 * [--userns=keep-id: podman, relish not root, default user] [--read-only
 * --tmpfs=/tmp] [--memory M --memory-swap M] [--cpus C] [--ipc host]
 * -v mounts... [-w W] [--device ...] [--cidfile F] -e NAME=value... IMAGE
 * argv...  name must already be valid
 * (container_name); cidfile may be NULL.  Errors: RL_EINVAL for an empty
 * argv, RL_EUNSUPPORTED for a GPU UUID that GPU_DEVICES cannot map.
 */
int container_build_argv(const container_options *o, const exec_spec *es, const char *name,
			 const char *cidfile, char ***out, rl_err *err);

/* A container name for a segment, from the experiment, the trial id, the
 * segment's end and a random 32-bit tag (all sanitised, see above). */
void container_name(const char *experiment, const char *trial_id, double to, uint32_t tag,
		    char *buf, size_t n);

/* One container found by label. */
typedef struct container_info {
	char name[128];
	char id[72];
	char state[32];              /* "running", "exited", "created", ... */
	char experiment[128];
	char trial[128];
	char segment[64];
	char mode[16];               /* oneshot | warm | worker */
	int kept;                    /* container_reconcile_adoptable left it running */
} container_info;

/*
 * Parse `podman ps -a --format json` (a JSON array of objects with Names
 * [array], Id, State, Labels {object}) or docker's `ps -a --format
 * '{{json .}}'` (one object per line, Names and Labels as strings
 * "k=v,k=v").  label_prefix NULL means "relish".  On success *out is a
 * malloc'd array of *n entries (NULL when 0).
 */
int container_parse_ps(const char *text, const char *label_prefix, container_info **out,
		       size_t *n, rl_err *err);

/* ---- after a restart (podman.c; blocking: call before the loop runs) ---- */

/* The containers labelled with o->owner (any state).  *out as above. */
int container_list(const container_options *o, container_info **out, size_t *n, rl_err *err);

/*
 * Find every container of o->owner and remove it (`rm -f -t 0`), running or
 * not: the segments they ran are lost and the driver re-runs them from
 * their checkpoints.
 * Only one relish may use a state database at a time (the store's lock), so
 * nothing of a live relish is touched.  On success *out (may be NULL: not
 * wanted) lists what was removed, with its labels, for the driver to match
 * against the store.
 */
int container_reconcile(const container_options *o, container_info **out, size_t *n,
			rl_err *err);

/*
 * As container_reconcile, except that running oneshot containers are left
 * alone and marked kept: the driver may adopt them (exec_podman_adopt) when
 * the store says their segment is running, and removes the rest
 * (exec_reclaim) before its loop starts.  Warm and worker containers read
 * the contract's commands on stdin, which died with the old relish: they
 * are removed as before.
 */
int container_reconcile_adoptable(const container_options *o, container_info **out, size_t *n,
				  rl_err *err);

/*
 * Take over a running oneshot container that an earlier relish started
 * (its segment still running in the store): the segment's output is read
 * again from the start with `ENGINE logs -f NAME` (metric lines already
 * stored come again: the caller skips them), and the segment ends when the
 * container does, with its exit code from `ENGINE wait NAME` (started
 * before the logs, so that --rm cannot take the code away).  es gives
 * mode (must be oneshot), log_path (rewritten from the start),
 * memory_limit_mib (for the out-of-memory classification) and timeout_s;
 * argv and envp are ignored.  Cancelling removes the container.  The
 * callbacks, *out and ident are as for launch.  RL_EINVAL for another mode
 * or an executor that is not a container executor.
 */
int exec_podman_adopt(executor *e, const char *name, const exec_spec *es,
		      const exec_callbacks *cb, void *ud, exec_segment **out, rl_err *err);

/* Executors podman and docker as backends of the live driver (backend.c):
 * their rows in exec_backends. */
extern const exec_backend_ops podman_backend_ops;
extern const exec_backend_ops docker_backend_ops;

#endif
