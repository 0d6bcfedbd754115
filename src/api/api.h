/*
 * api.h - relish's HTTP JSON API (docs/api.md), served by `relish serve`
 * on the live driver's libuv loop.
 *
 * The pieces, one file each:
 *   http.c     libmicrohttpd on the loop (its epoll descriptor polled by
 *              libuv, no thread of its own), listeners (a unix socket by
 *              default, 127.0.0.1:PORT opt-in), limits on connections,
 *              headers, bodies and time, errors as JSON;
 *   auth.c     identity at the edge: the unix peer's uid (SO_PEERCRED) or a
 *              bearer token from the token file becomes an api_user once,
 *              before any handler runs; the access rules;
 *   routes.c   the route table (method, pattern, handler, access, body
 *              limit), matching and dispatch; docs/api.md is checked
 *              against it by test_api_routes;
 *   h_*.c      handlers: plain functions over the driver's interface
 *              (live/driver.h) and the store, returning RL_E* codes whose
 *              HTTP statuses come from common/err.h's list;
 *   encode.c   one JSON encoder per resource, shared with the CLI.
 * The core never learns about sockets or users' files: the API calls the
 * driver, the driver feeds the core.
 */
#ifndef RELISH_API_API_H
#define RELISH_API_API_H

#include <jansson.h>
#include <stddef.h>
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
 * May user run sp?  The service's rules (serve/config.c): escalations a
 * spec asks for (a host network, ...) are refused unless the config
 * allows them.  0, or RL_EPERM with the reason.
 */
typedef int (*api_admit_fn)(void *ctx, const api_user *u, const spec *sp, rl_err *err);

/* The service the handlers act on. */
struct api_ctx {
	live *d;             /* the driver: submissions, cancellations, views */
	store *st;           /* its store, for reads (same thread) */
	const api_policy *pol;
	api_admit_fn admit;  /* may be NULL: admit everything */
	void *admit_ctx;
	double started_at;
	const char *state_dir;
	/* the core's user ids: user (uid) -> core id, and back (serve.c) */
	uint32_t (*core_user)(void *ctx, uid_t uid);
	void *core_user_ctx;
	/* Finished experiments' resources by id (they no longer change);
	 * made on first use, the owner of ctx frees it with json_decref. */
	json_t *final_cache;
};

/* Options of the listeners. */
#define API_MAX_LISTEN 4
typedef struct api_options {
	const char *listen[API_MAX_LISTEN]; /* "unix:PATH", "/PATH", "HOST:PORT" */
	size_t n_listen;
	const char *tokens_path;  /* token file (mode 0600); NULL: none */
	unsigned max_connections; /* default 128 */
	unsigned timeout_s;       /* idle connection timeout, default 30 */
	size_t header_max;        /* request line + headers, default 16 KiB */
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
/* Read the token file again (SIGHUP).  On error the old tokens stay. */
int api_server_reload_tokens(api_server *s, rl_err *err);
/* Stop accepting and close every connection; the unix socket is removed.
 * The server is freed once its handles' close callbacks have run: call it
 * while the loop will still run (before uv_loop_close).  NULL accepted. */
void api_server_close(api_server *s);

#endif
