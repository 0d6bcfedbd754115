/*
 * serve.h - `relish serve`: the long-running service that owns this
 * machine's devices, one state folder (database, runs, socket) and runs
 * every user's experiments through the live driver (live/driver.h) in
 * service mode, with the HTTP API (api/api.h) on the same loop.
 * docs/serve.md describes it for users.
 *
 *   serve.c   start-up (state folder, lock, resume, listeners), signals
 *             (SIGTERM/SIGINT graceful, SIGHUP reload), shutdown;
 *   config.c  the service's config file: access, tokens, shares and limits
 *             per user, what specs may ask for beyond the default;
 *   log.c     one greppable line per event on stderr;
 *   presence.c  a running service found by `relish run` on the machine.
 */
#ifndef RELISH_SERVE_H
#define RELISH_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "api/api.h"
#include "common/err.h"
#include "spec/spec.h"

/* ---- presence.c ---- */

/* This service is running, for `relish run` on the same machine to find
 * whatever the state folder: an abstract unix socket named by the pid and
 * addr (where clients reach it); *fd_out (close-on-exec) keeps it while
 * open. */
int serve_presence_announce(const char *addr, int *fd_out, rl_err *err);
/* Accept and close what connected to the announcement (fd readable). */
void serve_presence_answer(int fd);
/* A relish serve (not this process) announced on this machine by root or
 * by this user (who listens is checked: a name alone is not believed): 1
 * with its pid and address (cut to addr_n), 0 when none. */
int serve_presence_find(pid_t *pid, char *addr, size_t addr_n);

/* ---- log.c ---- */

/* "2024-05-01T12:00:00.123Z level=info event=EVENT k=v ..." on stderr,
 * one line, written at once (no interleaving with other writers). */
void serve_log(const char *level, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same through a context pointer (the API's and driver's hooks). */
void serve_log_cb(void *ctx, const char *level, const char *event, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* --log-file: open path (append, 0640, no link followed) onto stderr, so
 * every line of the process goes there; serve_log_reopen, on SIGHUP, opens
 * the same path again (logrotate moved the old file), logging the outcome;
 * a failure keeps the old file.  Without --log-file stderr stays (a
 * service manager's journal takes it). */
int serve_log_open(const char *path, rl_err *err);
void serve_log_reopen(void);

/* ---- config.c ---- */

/* One user's share and limits (0 = none). */
typedef struct serve_user_rule {
	char name[64];
	uid_t uid;
	int is_default;          /* the "default" entry */
	double share;            /* weight, > 0 */
	int max_gpus;
	uint64_t max_mem_mib;
	int max_segments;
	int max_experiments;     /* running at once */
	uint64_t max_host_mem_mib; /* host memory its segments reserve at once */
	double max_cpus;         /* host CPUs its segments reserve at once */
	/* Grants for this user's specs only (users.NAME.allow), beside the
	 * top-level allow: (everyone's); entries as in serve_config.allow. */
	char **allow;
	size_t n_allow;
} serve_user_rule;

/* The slurm: section (docs/serve.md, docs/slurm.md): the service places
 * on a Slurm partition's nodes and runs segments as Slurm jobs, submitted
 * as their experiment's submitter. */
typedef struct serve_slurm {
	int enabled;             /* the section is there */
	int is_default;          /* specs that name no executor run on Slurm (default 1) */
	char *partition;         /* NULL: the cluster's default partition */
	char *account, *qos;     /* for specs that name none; NULL: none */
	char **sbatch_args;      /* before each spec's own */
	size_t n_sbatch_args;
	uint64_t gpu_memory_mib; /* GPUs of nodes without a gpumem_<size> feature */
	double poll_s;           /* squeue at most this often; 0: 1 s */
	double refresh_s;        /* scontrol show node this often; 0: 30 s */
	char *relish_path;       /* relish on the nodes; NULL: this binary's path */
} serve_slurm;

/* The retention: section (docs/serve.md, "Retention"): ended experiments
 * older than age (since they ended) or beyond the latest keep of their
 * owner are exported to archive, read back, then removed with their rows
 * and folder, every interval; never a running one. */
typedef struct serve_retention {
	int enabled;             /* the section is there */
	double age_s;            /* 0: no age limit */
	long keep;               /* per user; 0: no count limit */
	char *archive;           /* NULL: STATE/archive */
	double interval_s;       /* default 1 h */
} serve_retention;

typedef struct serve_config {
	char *path;              /* NULL: no file, defaults */
	sched_policy policy;     /* default relish */
	int policy_set;
	queue_order order;       /* default fair: users by attained service over share */
	double fair_half_life_s; /* fair: usage halves in this (default 7 days; 0: never) */
	double memory_margin;    /* default 0.2 */
	sched_foreign_policy foreign; /* devices others use: share (default) or avoid */
	double grace_s;          /* SIGTERM grace, default 60 */
	double max_segment_s;    /* no segment runs longer (default 24 h; 0: none) */
	uint64_t trial_memory_mib; /* a host trial naming no memory reserves this (2 GiB) */
	unsigned trial_processes; /* RLIMIT_NPROC of a trial's user (4096; 0: none) */
	api_policy api;          /* read, admin group, submit limit */
	char *tokens;            /* token file, NULL none */
	/* What a spec may ask beyond the default (spec_grants): entries
	 * "KEY" (any value) or "KEY=VALUE", e.g. "trial.network=host". */
	char **allow;
	size_t n_allow;
	serve_user_rule *users;
	size_t n_users;
	serve_user_rule dflt;    /* for users without an entry */
	serve_slurm slurm;
	serve_retention retention;
} serve_config;

void serve_config_default(serve_config *c);

/* ---- retention.c ---- */

/* One pass of r over the driver's store (on the loop): the ended
 * experiments it no longer keeps, each exported to the archive (default
 * STATE/archive), read back, then removed (live_delete); each logged
 * (event=serve.retention); at most 100 a pass.  Errors of one experiment
 * leave it and are logged; the return is for the store's. */
int serve_retention_pass(live *d, const serve_retention *r, const char *state, double now,
			 rl_err *err);

/* What to prune (relish prune; the retention pass is one of these). */
typedef struct serve_prune_opts {
	double age_s;            /* ended longer ago than this; 0: no age */
	long keep;               /* beyond each owner's latest keep ended; 0: no count */
	const char *archive;     /* where each is exported first (ARCHIVE/OWNER/ID-NAME.json) */
	const char *runs;        /* without a driver: the runs folder (NULL: from the logs) */
	int dry_run;             /* say what would go; export and remove nothing */
	size_t max;              /* at most this many a call (0: all); more set if left */
	const char *who;         /* for the log: who asked */
	const char *event;       /* the log's event (default serve.prune) */
} serve_prune_opts;

typedef struct serve_prune_result {
	json_t *items;           /* one object per experiment it chose (api JSON) */
	size_t removed, failed, would;
	int more;                /* candidates left beyond max */
} serve_prune_result;

/*
 * The ended experiments o no longer keeps, in st: each exported to
 * o->archive and read back, then removed with its rows and folder (by
 * the driver d when one runs: live_delete; d NULL: the caller holds st as
 * its driver (STORE_DRIVER) and the rows and folder go directly).  Never
 * a running experiment; an experiment whose export fails stays (counted
 * in failed, its error in its item).  Each logged (o->event).  RL_EINVAL
 * without an age or a count; else errors only of reading the store.
 * res is filled (serve_prune_result_fini) whatever the return.
 */
int serve_prune(store *st, live *d, const serve_prune_opts *o, double now, serve_prune_result *res,
		rl_err *err);
void serve_prune_result_fini(serve_prune_result *res);
/* The folder of e's checkpoints and logs (RUNS/NAME.MS when runs is
 * given, else found from its segments' logs); "" when none is known. */
int serve_experiment_folder(store *st, const store_experiment *e, const char *runs, char *out,
			    size_t n, rl_err *err);
/* Read path into c (defaults first).  Errors: "FILE:LINE:COL: key: ...". */
int serve_config_load(const char *path, serve_config *c, rl_err *err);
/* The same from text already read (len bytes, NUL-terminated after
 * them); path names it in messages and, ending in .json, makes it JSON. */
int serve_config_parse(const char *text, size_t len, const char *path, serve_config *c,
		       rl_err *err);
void serve_config_fini(serve_config *c);
/* The rule for uid (its entry, or the default one). */
const serve_user_rule *serve_config_user(const serve_config *c, uid_t uid);

/* What sp asks for beyond the default (spec_grants: a network, added
 * capabilities, a user such as root, new privileges, bind mounts, a
 * writable root) against c's allow list and u's own (users.NAME.allow, or
 * users.default.allow for a user without an entry; a writable root is
 * allowed always: the trial runs as its submitter without capabilities):
 * 0, or RL_EPERM naming each grant that is not allowed. */
int serve_admit(const serve_config *c, const api_user *u, const spec *sp, rl_err *err);

/* ---- serve.c ---- */

#define SERVE_DEFAULT_STATE "/var/lib/relish"
#define SERVE_SOCKET_NAME "relish.sock"

typedef struct serve_options {
	const char *state_dir;       /* NULL: SERVE_DEFAULT_STATE */
	const char *listen[API_MAX_LISTEN];
	size_t n_listen;             /* 0: unix:STATE/relish.sock */
	const char *config_path;     /* NULL: none */
	const char *devices_path;    /* NULL: discover */
	int log_reads;               /* log every request */
	const char *db_path;         /* --read-only: the database to show */
	const char *log_file;        /* --log-file: the log there, not on stderr */
} serve_options;

/* Run the service until SIGTERM / SIGINT.  Returns 0 after a clean stop,
 * or an error (bad config, state folder in use, a listener refused). */
int serve_run(const serve_options *o, rl_err *err);

/* ---- readonly.c ---- */

#define SERVE_READONLY_LISTEN "127.0.0.1:8765"

/* Serve the API and the dashboard over o->db_path, read-only (no driver:
 * nothing runs, submit and cancel are refused), until SIGTERM / SIGINT. */
int serve_run_readonly(const serve_options *o, rl_err *err);

#endif
