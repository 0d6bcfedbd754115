/*
 * api.h - relish's HTTP JSON API (docs/api.md), served by `relish serve`
 * beside the live driver's libuv loop.
 *
 * The pieces, one file each:
 *   http.c     libmicrohttpd with its own threads (a small pool per
 *              listener), listeners (a unix socket by default,
 *              127.0.0.1:PORT opt-in), limits on connections, headers,
 *              bodies and time, errors as JSON, and the threading rule
 *              below;
 *   auth.c     identity at the edge: the unix peer's uid (SO_PEERCRED) or a
 *              bearer token from the token file becomes an api_user once,
 *              before any handler runs; the access rules;
 *   routes.c   the route table (method, pattern, handler, access, thread,
 *              body limit), matching and dispatch; docs/api.md is checked
 *              against it by test_api_routes;
 *   h_*.c      handlers: plain functions over the driver's interface
 *              (live/driver.h) and the store, returning RL_E* codes whose
 *              HTTP statuses come from common/err.h's list;
 *   encode.c   one JSON encoder per resource, shared with the CLI.
 * The core never learns about sockets or users' files: the API calls the
 * driver, the driver feeds the core.
 *
 * Threading rule.  The driver (live *) and its store are the loop
 * thread's alone: the driver is not thread-safe, and launching a segment
 * blocks its loop for a while (a spawn).  So requests are answered on the
 * HTTP threads, and each route's row says where its handler runs
 * (route.h, api_where): routes that only read the store run on an HTTP
 * thread with a read-only SQLite connection of their own (WAL lets them
 * read beside the driver's writes, and a commit is visible to every read
 * that starts after it); routes that change something or show the
 * driver's views are handed to the loop thread (a uv_async_t wakes it)
 * and their connection waits, suspended, until the loop has answered.  A
 * reader never touches api_ctx.d; what it needs of the driver that never
 * changes (the devices) is copied into api_ctx at start.
 */
#ifndef RELISH_API_API_H
#define RELISH_API_API_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "common/err.h"
#include "live/driver.h"
#include "spec/spec.h"
#include "store/store.h"

#define API_PREFIX "/api/v1"

/* Who is asking, decided once per request at the edge (auth.c). */
typedef enum api_via { API_VIA_NONE, API_VIA_UNIX, API_VIA_TOKEN } api_via;

typedef struct api_user {
	api_via via;         /* NONE: anonymous (TCP without a token file) */
	uid_t uid;
	gid_t gid;
	char name[64];
	int root;            /* uid 0 */
	int admin;           /* member of the configured admin group */
} api_user;

/* What the service's configuration decides for the API (serve/config.c
 * fills it; SIGHUP replaces it between requests). */
typedef struct api_policy {
	int read_own;        /* users see only their own experiments */
	int have_admin_gid;
	gid_t admin_gid;     /* members may cancel anyone's experiment */
	char admin_group[64];
	size_t submit_max;   /* bytes of a submission's body */
	unsigned generation; /* changes with every reload (users are looked up again) */
} api_policy;

typedef struct api_ctx api_ctx;

/*
 * Prune on demand (POST /api/v1/prune, on the loop): the service applies
 * its retention rule, or the one req names ({"age": S, "keep": N,
 * "dry_run": B}), and answers what it did in *out.  Root's and the admin
 * group's alone (the handler checks).
 */
typedef int (*api_prune_fn)(void *ctx, const api_user *u, const json_t *req, json_t **out,
			    rl_err *err);

/* A device as the service started with it: what never changes while it
 * runs (readers show it without asking the driver). */
typedef struct api_device {
	char name[64];
	char uuid[96];
	int is_gpu;
	uint64_t mem_total_mib;
	double compute_total;
} api_device;

/*
 * May user run sp?  The service's rules (serve/config.c): escalations a
 * spec asks for (a host network, ...) are refused unless the config
 * allows them.  0, or RL_EPERM with the reason.
 */
typedef int (*api_admit_fn)(void *ctx, const api_user *u, const spec *sp, rl_err *err);

/* The service the handlers act on.  Set before api_server_start and not
 * changed after it (the policy changes through api_server_set_policy). */
struct api_ctx {
	live *d;             /* the driver (NULL: serve --read-only); API_LOOP routes only */
	store *st;           /* the loop thread's store: the driver's (or the read-only one) */
	const char *db_path; /* what HTTP threads open read-only, one connection each */
	const api_policy *pol; /* the policy at start */
	api_admit_fn admit;  /* may be NULL: admit everything */
	void *admit_ctx;
	api_prune_fn prune;  /* may be NULL: the route answers 501 */
	void *prune_ctx;
	/* 1 when experiment id is paused for want of space (the store still
	 * says running: only the driver knows); any thread may call it.
	 * NULL: none is (serve --read-only). */
	int (*paused)(void *ctx, int64_t id);
	void *paused_ctx;
	double started_at;
	const char *state_dir;
	/* the core's user ids: user (uid) -> core id, and back (serve.c) */
	uint32_t (*core_user)(void *ctx, uid_t uid);
	void *core_user_ctx;
	/* The driver's devices as at start (NULL, 0: read-only service). */
	const api_device *devices;
	size_t n_devices;
};

/* Options of the listeners. */
#define API_MAX_LISTEN 4
typedef struct api_options {
	const char *listen[API_MAX_LISTEN]; /* "unix:PATH", "/PATH", "HOST:PORT" */
	size_t n_listen;
	const char *tokens_path;  /* token file (mode 0600); NULL: none */
	unsigned max_connections; /* open at once, every listener together; default 128 */
	unsigned per_peer;        /* held by one uid (unix) or address (TCP); default 16 */
	unsigned reserve;         /* the last ones, for root and the admin group; default 8 */
	unsigned timeout_s;       /* idle connection timeout, default 30 */
	unsigned head_s;          /* a request line and headers, from the end of the last
				   * request (or the connection), in at most; default 10 */
	unsigned body_s;          /* a body, from its headers, in at most; default 60 */
	size_t header_max;        /* request line + headers, default 16 KiB */
	unsigned threads;         /* HTTP threads per listener, default 2 */
	/* one line per notable request and per listener event */
	void (*log)(void *ctx, const char *level, const char *event, const char *fmt, ...)
		__attribute__((format(printf, 4, 5)));
	void *log_ctx;
	int log_reads;            /* 1: log every request, not only changes and errors */
} api_options;

void api_options_default(api_options *o);

typedef struct api_server api_server;

/*
 * Listen on every address of o and serve ctx on loop.  Refused at start:
 * an address that is not loopback without a token file, a token file that
 * others may read, a unix socket another server answers on.  ctx must
 * outlive the server.
 */
int api_server_start(uv_loop_t *loop, api_ctx *ctx, const api_options *o, api_server **out,
		     rl_err *err);
/* Where listener i listens ("unix:/path", "127.0.0.1:40123"); NULL past the end. */
const char *api_server_address(const api_server *s, size_t i);
/* Read the token file again (SIGHUP).  On error no token is taken until
 * a reload reads it well (the old ones are dropped: a file rewritten to
 * revoke one must not leave it in force).  Loop thread; requests in
 * flight finish with the tokens they began with. */
int api_server_reload_tokens(api_server *s, rl_err *err);
/* How many requests are queued for the loop thread now (handed over, not
 * yet taken up by it).  Any thread. */
size_t api_server_waiting(api_server *s);
/* Answer the requests queued for the loop now, as its wake-up would (the
 * driver calls it before each launch: live_options.before_launch, so they
 * do not wait behind launches begun after they came).  Loop thread. */
void api_server_answer_queued(api_server *s);
/* The policy requests see from now on (SIGHUP); copied.  Loop thread. */
void api_server_set_policy(api_server *s, const api_policy *pol);
/* Stop accepting and close every connection (requests waiting for the
 * loop are answered 503 first); the HTTP threads are joined and the unix
 * socket is removed.  The server is freed once its handle's close
 * callback has run: call it on the loop thread while the loop will still
 * run (before uv_loop_close).  NULL accepted. */
void api_server_close(api_server *s);

#endif
