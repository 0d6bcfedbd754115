/*
 * http.c - libmicrohttpd beside the driver's libuv loop (api.h).
 *
 * Each listener is one MHD daemon with its own threads (a pool of
 * api_options.threads, each polling its connections with epoll), so a
 * request never waits for the loop to finish launching a segment.  The
 * threading rule (api.h) is kept here, in one place:
 *   - identity, routing, access and body limits run on the HTTP thread;
 *   - API_READER routes run there too, on a view (route.h): a read-only
 *     store connection of its own and the caches that go with it, taken
 *     from a pool for the length of one request (views_take/views_give);
 *   - API_LOOP routes are handed to the loop thread: the connection is
 *     suspended (MHD_suspend_connection), the request goes on a queue and
 *     a uv_async_t wakes the loop, which runs the handler on the
 *     driver's own store, leaves the answer in the request and resumes
 *     the connection (MHD_resume_connection, allowed from any thread);
 *     MHD then calls on_request again and the HTTP thread sends it;
 *   - what both sides read that the loop may change (the policy and the
 *     tokens, on SIGHUP) is copied per request under conf_lock.
 * The loop thread never waits for an HTTP thread except when the server
 * closes (MHD_stop_daemon joins them); an HTTP thread never waits for the
 * loop.  Rejected: answering on the loop with MHD polled by libuv (what
 * this file did first): every read waited behind each spawn and every
 * other callback of the loop.
 *
 * Sockets are created here: a unix socket (mode 0666: anyone may
 * connect, the peer's uid says who they are) or TCP on an address that
 * must be loopback unless a token file is configured.  They are accepted
 * here too, by one thread (the acceptor), and handed to MHD
 * (MHD_add_connection) only once admitted, so that one user cannot take
 * the connections everyone shares (docs/serve.md, "Security model"):
 *   - at most max_connections open, every listener together;
 *   - at most per_peer held by one peer: a uid on the unix socket
 *     (SO_PEERCRED, read at accept), an address over TCP;
 *   - the last `reserve` of them only for root and the admin group;
 *   - a request's line and headers must be in within head_s of the
 *     connection (or of the end of its last request), its body within
 *     body_s of its headers: deadlines, not idle timeouts, so a byte now
 *     and then does not keep a connection (MHD's idle timeout, reset by
 *     any byte, stays as well).  The acceptor cuts a late connection
 *     (shutdown on a duplicate of its descriptor, which is ours alone,
 *     so a descriptor MHD closed and the kernel reused is never hit).
 * A connection over a limit is answered 429 (RL_ELIMIT) and closed at
 * once.  Other limits: the request line and headers (the connection's
 * memory pool: beyond it MHD answers 431), and per route the body (413
 * before the body is read when Content-Length says so, else as soon as it
 * exceeds).  Every error is the JSON document of route.h with the status
 * of its err.h code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api/auth.h"
#include "api/encode.h"
#include "api/prometheus.h"
#include "api/route.h"
#include "common/logtext.h"

/* Body bytes read and dropped after a route's limit before the connection
 * is cut (so that an honest client still reads its 413). */
#define DISCARD_MAX (16u << 20)
/* Closing: how long answers the loop gave may take to be sent. */
#define JOBS_DRAIN_S 2
/* Refused connections waited on at once (beyond: answered and closed at once). */
#define REFUSING_MAX 64

typedef struct listener {
	api_server *srv;
	int fd;
	int is_unix;
	char addr[300];      /* as shown: "unix:/path" or "127.0.0.1:40123" */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct MHD_Daemon *mhd;
} listener;

typedef struct req_state req_state;
typedef struct conn_state conn_state;

/* A reader's view (route.h) in the pool. */
typedef struct view_slot {
	api_view v;
	struct view_slot *next;      /* free list */
	struct view_slot *all_next;  /* every slot, for closing */
} view_slot;

struct api_server {
	uv_loop_t *loop;
	api_ctx *ctx;
	api_options opt;
	char *tokens_path;
	listener l[API_MAX_LISTEN];
	size_t n;
	/* conf_lock: what SIGHUP changes, read by every request */
	pthread_rwlock_t conf_lock;
	api_tokens *tokens;
	api_policy pol;
	/* lock: the queue of requests for the loop, the views, closing */
	pthread_mutex_t lock;
	req_state *jobs, *jobs_tail;
	size_t jobs_open;            /* handed to the loop and not yet completed */
	pthread_cond_t jobs_gone;    /* jobs_open fell to 0 */
	view_slot *free_views, *all_views;
	int closing;
	uv_async_t wake;             /* the loop: jobs are waiting */
	int wake_open;
	api_view loop_view;          /* the loop thread's: ctx->st and its caches */
	int freed_once;
	/* the acceptor (one thread for every listener) and what it admitted */
	pthread_t acceptor;
	int acceptor_on;
	int stop_pipe[2];            /* written to stop the acceptor */
	pthread_mutex_t conn_lock;   /* conns and every conn_state's phase */
	conn_state *conns;           /* every connection admitted, not yet closed */
	uint64_t refused, refused_logged_ns;
	/* refused connections whose request is awaited (a second at most),
	 * so the client reads its 429 instead of a broken pipe; acceptor's */
	struct refusing {
		int fd;
		uint64_t until_ns;
		char why[300];
	} refusing[REFUSING_MAX];
	size_t n_refusing;
};

/* A connection's phase, for its deadlines. */
enum { PH_HEAD, PH_BODY, PH_ANSWER };

/* Per connection, from its admission (the acceptor) until MHD closes it
 * (notify_connection); MHD's socket context. */
struct conn_state {
	conn_state *prev, *next;     /* srv->conns */
	listener *l;
	int fd;              /* MHD's: the descriptor accepted */
	int hold;            /* a duplicate: ours, to cut it with */
	int claimed;         /* MHD has started it */
	int cut;             /* cut by a deadline */
	char key[INET6_ADDRSTRLEN + 16]; /* whom it counts against: "uid 1001", an address */
	int privileged;      /* root or the admin group: may take the reserve */
	int phase;           /* PH_*, under conn_lock */
	uint64_t since_ns;   /* when the phase began */
	uint64_t born_ns;
	int have_peer;
	api_user peer;
	unsigned pol_gen;    /* the policy generation peer was decided under */
};

/* Per request, from its first call to its completion. */
enum { JOB_NONE, JOB_QUEUED, JOB_ANSWERED };

struct req_state {
	const api_route *route;
	api_req rq;
	api_user user;
	char *body;
	size_t len, cap, max;
	int too_big;
	size_t discarded;    /* body bytes dropped after too_big */
	int answered;        /* a response was queued early */
	int status;
	uint64_t t0_ns;
	char method[16];
	char path[512];
	api_policy pol;      /* as it was when the request came */
	/* API_LOOP: handed to the loop thread */
	int job;             /* JOB_*; set under srv->lock while queued */
	req_state *job_next;
	struct MHD_Connection *conn;
	api_resp resp;       /* the loop's answer, sent by the HTTP thread */
};

void api_options_default(api_options *o)
{
	memset(o, 0, sizeof *o);
	o->max_connections = 128;
	o->per_peer = 16;
	o->reserve = 8;
	o->timeout_s = 30;
	o->head_s = 10;
	o->body_s = 60;
	o->header_max = 16 * 1024;
	o->threads = 2;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define LOG(s, level, event, ...)                                                   \
	do {                                                                          \
		if ((s)->opt.log)                                                     \
			(s)->opt.log((s)->opt.log_ctx, level, event, __VA_ARGS__);    \
	} while (0)

/* ---- responses ---- */

static const char *query_cb(void *q, const char *key)
{
	return MHD_lookup_connection_value(q, MHD_GET_ARGUMENT_KIND, key);
}

/* The body of rs as text: a JSON body is written out and dropped.  Done
 * by the thread that made rs, while it still holds the view the JSON may
 * share objects with (route.h: a view's caches are one thread's at a
 * time), so no JSON object is touched by two threads. */
static void resp_render(api_resp *rs)
{
	if (rs->text)
		return;
	/* Every digit (17): a client reads back the very doubles the store
	 * holds (the CLI prints them as it would from the file). */
	char *body = rs->json ? json_dumps(rs->json, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
	if (!body)
		body = strdup("{\"error\":{\"code\":\"RL_ENOMEM\",\"status\":500,"
			      "\"message\":\"out of memory\"}}");
	json_decref(rs->json);
	rs->json = NULL;
	rs->text = body;
	rs->text_len = body ? strlen(body) : 0;
	rs->content_type = "application/json";
}

static enum MHD_Result send_resp(struct MHD_Connection *c, req_state *r, api_resp *rs)
{
	resp_render(rs);
	char *body = rs->text;
	size_t len = rs->text_len;
	const char *type = rs->content_type ? rs->content_type : "text/plain; charset=utf-8";
	rs->text = NULL;
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body ? body : "",
								     body ? MHD_RESPMEM_MUST_FREE
									  : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	for (size_t i = 0; i < rs->n_header; i++)
		MHD_add_response_header(resp, rs->header[i][0], rs->header[i][1]);
	int status = rs->status ? rs->status : 200;
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"relish\"");
	if (status == 405 && r->route == NULL)
		MHD_add_response_header(resp, "Allow", "GET, POST");
	r->status = status;
	enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *c, req_state *r, int code,
				  const char *msg)
{
	api_resp rs;
	memset(&rs, 0, sizeof rs);
	api_resp_error(&rs, code, msg);
	r->answered = 1;
	enum MHD_Result ret = send_resp(c, r, &rs);
	api_resp_fini(&rs);
	return ret;
}

/* ---- identity ---- */

/* Decide the user of this request: the connection's unix peer, or the
 * bearer token over TCP.  r->pol is the request's policy.  Returns 0, or
 * an error to answer with. */
static int identify(listener *l, struct MHD_Connection *c, req_state *r, rl_err *err)
{
	api_server *s = l->srv;
	const api_policy *pol = &r->pol;
	if (l->is_unix) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		conn_state *cs = ci ? (conn_state *)ci->socket_context : NULL;
		if (!cs || !cs->have_peer)
			return rl_err_set(err, RL_EAUTH, "the peer's credentials could not be read");
		/* Looked up once per connection (the password and group files),
		 * again after a reload (the admin group may have changed).  A
		 * connection is served by one HTTP thread. */
		if (cs->pol_gen != pol->generation) {
			api_user_of_uid(cs->peer.uid, pol, API_VIA_UNIX, &cs->peer);
			cs->pol_gen = pol->generation;
		}
		r->user = cs->peer;
		return 0;
	}
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	memset(&r->user, 0, sizeof r->user);
	r->user.via = API_VIA_NONE;
	snprintf(r->user.name, sizeof r->user.name, "anonymous");
	if (!auth)
		return 0; /* the route's access column decides */
	if (strncasecmp(auth, "Bearer ", 7) != 0)
		return rl_err_set(err, RL_EAUTH, "Authorization: expected \"Bearer TOKEN\"");
	const char *tok = auth + 7;
	while (*tok == ' ')
		tok++;
	uid_t uid;
	int rc;
	pthread_rwlock_rdlock(&s->conf_lock);
	if (!s->tokens)
		rc = rl_err_set(err, RL_EAUTH, "this service has no token file; connect through "
				"its unix socket");
	else
		rc = api_tokens_find(s->tokens, tok, &uid, err);
	pthread_rwlock_unlock(&s->conf_lock);
	if (rc < 0)
		return rc;
	api_user_of_uid(uid, pol, API_VIA_TOKEN, &r->user);
	return 0;
}

/* Host: an address or localhost (with a port or not).  Without tokens,
 * TCP answers anyone who reaches it; a web page of another site reaches a
 * loopback port through DNS rebinding (its name resolved to 127.0.0.1),
 * and what it sends then is Host: its own name.  Returns 1 when host may
 * be answered. */
static int host_is_address(const char *host)
{
	char h[256];
	if (!host || !*host)
		return 1; /* HTTP/1.0 without Host: not a browser's */
	if (host[0] == '[') {
		const char *end = strchr(host, ']');
		if (!end || (size_t)(end - host - 1) >= sizeof h || (end[1] && end[1] != ':'))
			return 0;
		memcpy(h, host + 1, (size_t)(end - host - 1));
		h[end - host - 1] = '\0';
		struct in6_addr a6;
		return inet_pton(AF_INET6, h, &a6) == 1;
	}
	size_t n = strcspn(host, ":");
	if (n >= sizeof h)
		return 0;
	memcpy(h, host, n);
	h[n] = '\0';
	struct in_addr a4;
	return inet_pton(AF_INET, h, &a4) == 1 || !strcasecmp(h, "localhost");
}

/* The policy now, and whether a token file is in use. */
static int conf_read(api_server *s, api_policy *pol)
{
	pthread_rwlock_rdlock(&s->conf_lock);
	*pol = s->pol;
	int tokens_on = s->tokens != NULL;
	pthread_rwlock_unlock(&s->conf_lock);
	return tokens_on;
}

static void conn_unlink(api_server *s, conn_state *cs)
{
	if (cs->prev)
		cs->prev->next = cs->next;
	else
		s->conns = cs->next;
	if (cs->next)
		cs->next->prev = cs->prev;
	cs->prev = cs->next = NULL;
	if (cs->hold >= 0)
		close(cs->hold);
	cs->hold = -1;
}

/* MHD starts a connection the acceptor admitted (found by its descriptor,
 * which stays its own until MHD closes it, after CLOSED) or closes one. */
static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	listener *l = cls;
	api_server *s = l->srv;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		conn_state *cs = *socket_context;
		*socket_context = NULL;
		if (!cs)
			return;
		pthread_mutex_lock(&s->conn_lock);
		conn_unlink(s, cs);
		pthread_mutex_unlock(&s->conn_lock);
		free(cs);
		return;
	}
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	conn_state *cs = NULL;
	pthread_mutex_lock(&s->conn_lock);
	for (conn_state *x = s->conns; ci && x; x = x->next)
		if (x->l == l && x->fd == ci->connect_fd && !x->claimed) {
			x->claimed = 1;
			cs = x;
			break;
		}
	pthread_mutex_unlock(&s->conn_lock);
	*socket_context = cs;
}

/* The connection's phase (PH_*) from now; cs may be NULL. */
static void conn_phase(api_server *s, struct MHD_Connection *c, int phase)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	conn_state *cs = ci ? (conn_state *)ci->socket_context : NULL;
	if (!cs)
		return;
	pthread_mutex_lock(&s->conn_lock);
	cs->phase = phase;
	cs->since_ns = mono_ns();
	pthread_mutex_unlock(&s->conn_lock);
}

/* ---- views: a reader's store, one request at a time ---- */

/* A view for one request on an HTTP thread: a free one, or a new one on
 * a new read-only connection (at most one per HTTP thread ever exists at
 * once, since each runs one request at a time). */
static api_view *views_take(api_server *s, rl_err *err)
{
	pthread_mutex_lock(&s->lock);
	view_slot *v = s->free_views;
	if (v)
		s->free_views = v->next;
	pthread_mutex_unlock(&s->lock);
	if (v)
		return &v->v;
	v = calloc(1, sizeof *v);
	if (!v) {
		rl_err_set(err, RL_ENOMEM, "a reader's store");
		return NULL;
	}
	if (store_open(s->ctx->db_path, STORE_READONLY, &v->v.st, err) < 0) {
		free(v);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	v->all_next = s->all_views;
	s->all_views = v;
	pthread_mutex_unlock(&s->lock);
	return &v->v;
}

static void views_give(api_server *s, api_view *view)
{
	view_slot *v = (view_slot *)view; /* v is the slot's first member */
	pthread_mutex_lock(&s->lock);
	v->next = s->free_views;
	s->free_views = v;
	pthread_mutex_unlock(&s->lock);
}

/* After the HTTP threads have stopped. */
static void views_close(api_server *s)
{
	view_slot *v = s->all_views;
	while (v) {
		view_slot *next = v->all_next;
		store_close(v->v.st);
		api_exp_cache_free(v->v.exps);
		free(v);
		v = next;
	}
	s->all_views = s->free_views = NULL;
	api_exp_cache_free(s->loop_view.exps);
	s->loop_view.exps = NULL;
}

/* ---- the loop's part: requests of API_LOOP routes ---- */

/* Loop thread: answer every queued request and resume its connection.
 * After MHD_resume_connection the HTTP thread may send and free r at
 * once: nothing of r is touched after it. */
static void answer_jobs(api_server *s, req_state *list, int refuse)
{
	while (list) {
		req_state *r = list;
		list = r->job_next;
		memset(&r->resp, 0, sizeof r->resp);
		if (refuse) {
			api_resp_error(&r->resp, RL_EINTERRUPTED, "the service is stopping");
		} else {
			r->rq.st = s->ctx->st;
			r->rq.view = &s->loop_view;
			api_dispatch(r->route, &r->rq, &r->resp);
		}
		resp_render(&r->resp); /* the HTTP thread sends text only */
		struct MHD_Connection *c = r->conn;
		pthread_mutex_lock(&s->lock);
		r->job = JOB_ANSWERED;
		pthread_mutex_unlock(&s->lock);
		MHD_resume_connection(c);
	}
}

void api_server_answer_queued(api_server *s)
{
	pthread_mutex_lock(&s->lock);
	req_state *list = s->jobs;
	s->jobs = s->jobs_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	answer_jobs(s, list, 0);
}

static void wake_cb(uv_async_t *a)
{
	api_server_answer_queued(a->data);
}

/* HTTP thread, from on_request: hand r to the loop, or answer 503 when
 * the server is closing. */
static enum MHD_Result hand_to_loop(api_server *s, struct MHD_Connection *c, req_state *r);

/* ---- requests ---- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	(void)version;
	listener *l = cls;
	api_server *s = l->srv;
	req_state *r = *con_cls;
	if (!r) {
		/* First call: headers are in.  Identity, route, access and the
		 * declared body size are decided before any body is read. */
		r = calloc(1, sizeof *r);
		if (!r)
			return MHD_NO;
		*con_cls = r;
		conn_phase(s, c, PH_BODY);
		r->t0_ns = mono_ns();
		snprintf(r->method, sizeof r->method, "%s", method);
		snprintf(r->path, sizeof r->path, "%s", url);
		rl_err err;
		rl_err_clear(&err);
		int tokens_on = conf_read(s, &r->pol);
		int rc = identify(l, c, r, &err);
		if (rc < 0)
			return send_error(c, r, rc, err.msg);
		const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
		if (!l->is_unix && !tokens_on && !host_is_address(host)) {
			char hq[200];
			snprintf(err.msg, sizeof err.msg,
				 "Host: %s: without a token file this service answers over TCP only "
				 "requests for an address (such as %s) or localhost, so that a web "
				 "page of another site cannot reach it (DNS rebinding)",
				 rl_log_text(host, hq, sizeof hq), l->addr);
			return send_error(c, r, RL_EPERM, err.msg);
		}
		r->rq.ctx = s->ctx;
		r->rq.pol = &r->pol;
		r->rq.user = &r->user;
		r->rq.method = r->method;
		r->rq.path = r->path;
		r->rq.query = query_cb;
		r->rq.qctx = c;
		if ((rc = api_route_match(method, url, &r->route, &r->rq, &err)) < 0) {
			r->route = NULL;
			return send_error(c, r, rc, err.msg);
		}
		if ((rc = api_route_allowed(r->route, &r->rq, tokens_on, &err)) < 0)
			return send_error(c, r, rc, err.msg);
		r->max = api_route_body_max(r->route, &r->pol);
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		if (cl) {
			char *end;
			unsigned long long n = strtoull(cl, &end, 10);
			if (*end == '\0' && n > r->max) {
				snprintf(err.msg, sizeof err.msg,
					 "%s %s takes a body of at most %zu bytes; this one has %llu",
					 method, r->route->pattern, r->max, n);
				return send_error(c, r, RL_ETOOBIG, err.msg);
			}
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;
		*upload_data_size = 0;
		if (r->answered)
			return MHD_YES; /* discard what follows an early answer */
		if (r->too_big || r->len + n > r->max) {
			/* Read on and drop the rest, so the client (still sending)
			 * gets the 413 instead of a broken pipe; cut it off only
			 * past DISCARD_MAX. */
			r->too_big = 1;
			r->discarded += n;
			if (r->discarded <= DISCARD_MAX)
				return MHD_YES;
			return send_error(c, r, RL_ETOOBIG, "request body too large");
		}
		if (r->len + n + 1 > r->cap) {
			size_t nc = r->cap ? r->cap : 4096;
			while (nc < r->len + n + 1)
				nc *= 2;
			char *b = realloc(r->body, nc);
			if (!b)
				return send_error(c, r, RL_ENOMEM, "request body");
			r->body = b;
			r->cap = nc;
		}
		memcpy(r->body + r->len, upload_data, n);
		r->len += n;
		r->body[r->len] = '\0';
		return MHD_YES;
	}
	if (r->answered)
		return MHD_YES;
	if (r->job != JOB_NONE) {
		/* Resumed: the loop has answered (or, spuriously, not yet). */
		pthread_mutex_lock(&s->lock);
		int answered = r->job == JOB_ANSWERED;
		pthread_mutex_unlock(&s->lock);
		if (!answered)
			return MHD_YES;
		r->answered = 1;
		enum MHD_Result ret = send_resp(c, r, &r->resp);
		api_resp_fini(&r->resp);
		return ret;
	}
	if (r->too_big) {
		char msg[200];
		snprintf(msg, sizeof msg, "%s %s takes a body of at most %zu bytes", r->method,
			 r->route->pattern, r->max);
		return send_error(c, r, RL_ETOOBIG, msg);
	}
	r->rq.body = r->body;
	r->rq.body_len = r->len;
	conn_phase(s, c, PH_ANSWER);
	if (r->route->where == API_LOOP)
		return hand_to_loop(s, c, r);
	rl_err err;
	rl_err_clear(&err);
	api_view *v = views_take(s, &err);
	if (!v)
		return send_error(c, r, err.code ? err.code : RL_ESTORE, err.msg);
	r->rq.st = v->st;
	r->rq.view = v;
	api_resp rs;
	memset(&rs, 0, sizeof rs);
	api_dispatch(r->route, &r->rq, &rs);
	r->answered = 1;
	enum MHD_Result ret = send_resp(c, r, &rs); /* renders it: the view is still ours */
	api_resp_fini(&rs);
	r->rq.st = NULL;
	r->rq.view = NULL;
	views_give(s, v);
	return ret;
}

static enum MHD_Result hand_to_loop(api_server *s, struct MHD_Connection *c, req_state *r)
{
	pthread_mutex_lock(&s->lock);
	if (s->closing) {
		pthread_mutex_unlock(&s->lock);
		return send_error(c, r, RL_EINTERRUPTED, "the service is stopping");
	}
	/* Suspended before it is queued: the loop may answer and resume it
	 * as soon as the lock is released. */
	MHD_suspend_connection(c);
	r->conn = c;
	r->job = JOB_QUEUED;
	s->jobs_open++;
	r->job_next = NULL;
	if (s->jobs_tail)
		s->jobs_tail->job_next = r;
	else
		s->jobs = r;
	s->jobs_tail = r;
	pthread_mutex_unlock(&s->lock);
	/* (Closing joins this thread before it closes the handle.) */
	uv_async_send(&s->wake);
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	listener *l = cls;
	api_server *s = l->srv;
	req_state *r = *con_cls;
	conn_phase(s, c, PH_HEAD); /* the next request's deadline runs from now */
	if (!r)
		return;
	double ms = (double)(mono_ns() - r->t0_ns) / 1e6;
	api_prometheus_observe(r->route, r->status, ms / 1e3);
	int change = strcmp(r->method, "GET") != 0;
	if (s->opt.log_reads || change || r->status >= 400 ||
	    toe != MHD_REQUEST_TERMINATED_COMPLETED_OK) {
		/* the method and path are the client's: quoted, escaped */
		char m[sizeof r->method * 4], p[sizeof r->path * 4], u[sizeof r->user.name * 4];
		LOG(s, r->status >= 500 ? "error" : "info", "http",
		    "method=%s path=%s status=%d user=%s via=%s ms=%.2f%s",
		    rl_log_value(r->method, m, sizeof m), rl_log_value(r->path, p, sizeof p),
		    r->status, rl_log_value(r->user.name[0] ? r->user.name : "-", u, sizeof u),
		    l->is_unix ? "unix" : "tcp", ms,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " aborted=1");
	}
	api_resp_fini(&r->resp); /* a loop's answer that was never sent */
	if (r->job != JOB_NONE) {
		pthread_mutex_lock(&s->lock);
		if (--s->jobs_open == 0)
			pthread_cond_broadcast(&s->jobs_gone);
		pthread_mutex_unlock(&s->lock);
	}
	free(r->body);
	free(r);
	*con_cls = NULL;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	listener *l = cls;
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	size_t n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	/* MHD is handed the unix socket's connections without being told
	 * they are not TCP (MHD_add_connection): its TCP options fail on
	 * them, harmlessly (a unix socket has no delay to push through). */
	if (l->is_unix && (strstr(buf, "TCP_NODELAY") || strstr(buf, "TCP_CORK") ||
			   strstr(buf, "Failed to push the data")))
		return;
	LOG(l->srv, "warn", "http.mhd", "listen=%s msg=\"%s\"", l->addr, buf);
}

/* ---- listeners ---- */

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

static int listen_unix(listener *l, const char *path, rl_err *err)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a.sun_path)
		return rl_err_set(err, RL_EINVAL, "socket path %s is longer than %zu bytes", path,
				  sizeof a.sun_path - 1);
	memcpy(a.sun_path, path, strlen(path) + 1);
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return rl_err_set(err, RL_EEXISTS, "%s exists and is not a socket", path);
		/* A socket someone answers on is another server's. */
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0) {
			close(probe);
			return rl_err_set(err, RL_EBUSY, "another relish serve answers on %s", path);
		}
		if (probe >= 0)
			close(probe);
		unlink(path); /* left by a server that died */
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "socket");
	if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || chmod(path, 0666) != 0 ||
	    listen(fd, 128) != 0) {
		int e = errno;
		close(fd);
		return rl_err_sys(err, RL_EIO, e, "listening on %s", path);
	}
	l->fd = fd;
	l->is_unix = 1;
	snprintf(l->path, sizeof l->path, "%s", path);
	snprintf(l->addr, sizeof l->addr, "unix:%s", path);
	return 0;
}

static int listen_tcp(listener *l, const char *where, int tokens_on, rl_err *err)
{
	char host[256];
	const char *colon = strrchr(where, ':');
	if (!colon || colon == where || !colon[1])
		return rl_err_set(err, RL_EINVAL, "--listen %s: expected unix:PATH, /PATH or HOST:PORT",
				  where);
	size_t hl = (size_t)(colon - where);
	if (where[0] == '[' && hl >= 2 && where[hl - 1] == ']') {
		where++;
		hl -= 2;
	}
	if (hl >= sizeof host)
		return rl_err_set(err, RL_EINVAL, "--listen %s: host too long", where);
	memcpy(host, where, hl);
	host[hl] = '\0';
	if (!strcmp(host, "localhost"))
		snprintf(host, sizeof host, "127.0.0.1");
	struct addrinfo hints, *ai = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	int g = getaddrinfo(host, colon + 1, &hints, &ai);
	if (g != 0)
		return rl_err_set(err, RL_EINVAL, "--listen %s: %s (give a numeric address, e.g. "
				  "127.0.0.1:8080)", where, gai_strerror(g));
	if (!is_loopback(ai->ai_addr) && !tokens_on) {
		freeaddrinfo(ai);
		return rl_err_set(err, RL_EINVAL,
				  "--listen %s is not a loopback address: anyone who can reach it "
				  "could submit as anyone; configure a token file (tokens: in the "
				  "config) or listen on 127.0.0.1", where);
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return rl_err_sys(err, RL_EIO, e, "listening on %s", where);
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char h[INET6_ADDRSTRLEN] = "?";
	int port = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *in = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &in->sin_addr, h, sizeof h);
			port = ntohs(in->sin_port);
		} else {
			struct sockaddr_in6 *in = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &in->sin6_addr, h, sizeof h);
			port = ntohs(in->sin6_port);
		}
	}
	l->fd = fd;
	snprintf(l->addr, sizeof l->addr, ss.ss_family == AF_INET6 ? "[%s]:%d" : "%s:%d", h, port);
	return 0;
}

/* ---- the acceptor: admission and deadlines ---- */

/* Answer a connection that is refused and close it: the 429 is written
 * to a fresh socket (its buffer is empty), what the client sent is read
 * and dropped so that closing does not reset the connection before the
 * client has read the answer. */
static void refuse(int fd, const char *msg)
{
	api_resp rs;
	memset(&rs, 0, sizeof rs);
	api_resp_error(&rs, RL_ELIMIT, msg);
	resp_render(&rs);
	char head[256];
	int n = snprintf(head, sizeof head,
			 "HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
			 "Cache-Control: no-store\r\nRetry-After: 1\r\nConnection: close\r\n"
			 "Content-Length: %zu\r\n\r\n", rs.text_len);
	if (n > 0 && send(fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n && rs.text)
		(void)!send(fd, rs.text, rs.text_len, MSG_NOSIGNAL | MSG_DONTWAIT);
	api_resp_fini(&rs);
	shutdown(fd, SHUT_WR);
	char sink[4096];
	for (int i = 0; i < 16 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; i++)
		;
	close(fd);
}

/* Answer fd 429 once its request is in (or a second has passed). */
static void refuse_later(api_server *s, int fd, const char *why)
{
	if (s->n_refusing == REFUSING_MAX) {
		refuse(fd, why);
		return;
	}
	struct refusing *r = &s->refusing[s->n_refusing++];
	r->fd = fd;
	r->until_ns = mono_ns() + 1000000000u;
	snprintf(r->why, sizeof r->why, "%s", why);
}

/* Admit fd, just accepted on l, or refuse it (over a limit).  Acceptor. */
static void admit(api_server *s, listener *l, int fd, const struct sockaddr *sa, socklen_t sl)
{
	conn_state *cs = calloc(1, sizeof *cs);
	if (!cs) {
		close(fd);
		return;
	}
	cs->l = l;
	cs->fd = fd;
	cs->hold = -1;
	if (l->is_unix) {
		uid_t uid;
		if (api_peer_uid(fd, &uid, NULL) == 0) {
			api_policy pol;
			conf_read(s, &pol);
			api_user_of_uid(uid, &pol, API_VIA_UNIX, &cs->peer);
			cs->pol_gen = pol.generation;
			cs->have_peer = 1;
			cs->privileged = cs->peer.root || cs->peer.admin;
			snprintf(cs->key, sizeof cs->key, "uid %u", (unsigned)uid);
		} else {
			snprintf(cs->key, sizeof cs->key, "a unix peer of unknown uid");
		}
	} else {
		char h[INET6_ADDRSTRLEN] = "?";
		if (sa->sa_family == AF_INET)
			inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, h, sizeof h);
		else if (sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, h, sizeof h);
		snprintf(cs->key, sizeof cs->key, "%s", h);
	}
	const api_options *o = &s->opt;
	char why[300] = "";
	unsigned total = 0, mine = 0;
	uint64_t now = mono_ns();
	pthread_mutex_lock(&s->conn_lock);
	for (conn_state *x = s->conns, *next; x; x = next) {
		next = x->next;
		if (x->fd == fd && !x->claimed) {
			/* MHD dropped it before starting it (the descriptor is
			 * free again): it holds nothing */
			conn_unlink(s, x);
			free(x);
			continue;
		}
		total++;
		mine += !strcmp(x->key, cs->key);
	}
	unsigned reserve = o->reserve < o->max_connections ? o->reserve : 0;
	if (total >= o->max_connections)
		snprintf(why, sizeof why, "the service has %u connections open, its most; try again",
			 total);
	else if (mine >= o->per_peer)
		snprintf(why, sizeof why, "%s holds %u connections to the service, the most one "
			 "peer may hold; close some", cs->key, mine);
	else if (total >= o->max_connections - reserve && !cs->privileged)
		snprintf(why, sizeof why, "the service has %u connections open; the last %u are "
			 "kept for root and the admin group; try again", total, reserve);
	else if ((cs->hold = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		snprintf(why, sizeof why, "the service is out of descriptors");
	if (!why[0]) {
		cs->phase = PH_HEAD;
		cs->since_ns = cs->born_ns = now;
		cs->next = s->conns;
		if (s->conns)
			s->conns->prev = cs;
		s->conns = cs;
	} else {
		s->refused++;
	}
	pthread_mutex_unlock(&s->conn_lock);
	if (why[0]) {
		/* One line per second at most: refusals are what an attack
		 * makes many of. */
		if (now - s->refused_logged_ns >= 1000000000u) {
			LOG(s, "warn", "http.refused", "listen=%s peer=\"%s\" refused=%llu msg=\"%s\"",
			    l->addr, cs->key, (unsigned long long)s->refused, why);
			s->refused_logged_ns = now;
		}
		free(cs);
		refuse_later(s, fd, why);
		return;
	}
	/* From here MHD may start, serve and close it on one of its threads
	 * (and free cs): cs is not touched again unless MHD refused it. */
	if (MHD_add_connection(l->mhd, fd, sa, sl) != MHD_YES) {
		pthread_mutex_lock(&s->conn_lock);
		conn_unlink(s, cs);
		pthread_mutex_unlock(&s->conn_lock);
		free(cs);
	}
}

/* Cut the connections past their deadline.  Acceptor. */
static void sweep(api_server *s)
{
	uint64_t now = mono_ns();
	uint64_t head = (uint64_t)s->opt.head_s * 1000000000u;
	uint64_t body = (uint64_t)s->opt.body_s * 1000000000u;
	pthread_mutex_lock(&s->conn_lock);
	for (conn_state *x = s->conns, *next; x; x = next) {
		next = x->next;
		if (!x->claimed && now - x->born_ns > head + 5000000000u) {
			conn_unlink(s, x); /* MHD never started it */
			free(x);
			continue;
		}
		if (x->cut)
			continue;
		uint64_t lim = x->phase == PH_HEAD ? head : x->phase == PH_BODY ? body : 0;
		if (!lim || now - x->since_ns <= lim)
			continue;
		/* MHD reads the end of the stream and closes it */
		shutdown(x->hold, SHUT_RDWR);
		x->cut = 1;
		LOG(s, "warn", "http.deadline", "listen=%s peer=\"%s\" phase=%s limit_s=%u",
		    x->l->addr, x->key, x->phase == PH_HEAD ? "headers" : "body",
		    x->phase == PH_HEAD ? s->opt.head_s : s->opt.body_s);
	}
	pthread_mutex_unlock(&s->conn_lock);
}

static void *acceptor_main(void *arg)
{
	api_server *s = arg;
	struct pollfd p[API_MAX_LISTEN + 1 + REFUSING_MAX];
	for (;;) {
		size_t n = 0;
		for (size_t i = 0; i < s->n; i++)
			p[n++] = (struct pollfd){.fd = s->l[i].fd, .events = POLLIN};
		p[n] = (struct pollfd){.fd = s->stop_pipe[0], .events = POLLIN};
		size_t nr = s->n_refusing;
		for (size_t i = 0; i < nr; i++)
			p[n + 1 + i] = (struct pollfd){.fd = s->refusing[i].fd, .events = POLLIN};
		int k = poll(p, n + 1 + nr, nr ? 50 : 250);
		if (k < 0 && errno != EINTR)
			break;
		if (k > 0 && p[n].revents)
			break;
		/* the refused whose request came, or whose second is up */
		uint64_t now = mono_ns();
		size_t keep = 0;
		for (size_t i = 0; i < nr; i++) {
			struct refusing *r = &s->refusing[i];
			if ((k > 0 && p[n + 1 + i].revents) || now >= r->until_ns)
				refuse(r->fd, r->why);
			else
				s->refusing[keep++] = *r;
		}
		s->n_refusing = keep;
		for (size_t i = 0; k > 0 && i < n; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			/* a bounded batch, so a flood on one listener
			 * leaves time for the others and the deadlines */
			for (int j = 0; j < 64; j++) {
				struct sockaddr_storage ss;
				socklen_t sl = sizeof ss;
				int fd = accept4(s->l[i].fd, (struct sockaddr *)&ss, &sl,
						 SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd < 0)
					break;
				admit(s, &s->l[i], fd, (struct sockaddr *)&ss, sl);
			}
		}
		sweep(s);
	}
	for (size_t i = 0; i < s->n_refusing; i++)
		close(s->refusing[i].fd);
	s->n_refusing = 0;
	return NULL;
}

static void server_maybe_free(api_server *s);

static void wake_closed(uv_handle_t *h)
{
	api_server *s = h->data;
	s->wake_open = 0;
	server_maybe_free(s);
}

static int start_listener(api_server *s, listener *l, const char *where, int tokens_on,
			  rl_err *err)
{
	l->srv = s;
	l->fd = -1;
	int rc;
	if (!strncmp(where, "unix:", 5))
		rc = listen_unix(l, where + 5, err);
	else if (where[0] == '/' || where[0] == '.')
		rc = listen_unix(l, where, err);
	else
		rc = listen_tcp(l, where, tokens_on, err);
	if (rc < 0)
		return rc;
	/* Its own threads (a pool of them; epoll each), suspend and resume
	 * for the requests the loop answers; connections come from the
	 * acceptor (MHD_add_connection), which keeps the limits, so MHD's
	 * own is never reached. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
			 MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET |
			 MHD_USE_ITC;
	unsigned threads = s->opt.threads ? s->opt.threads : 1;
	l->mhd = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
		MHD_OPTION_THREAD_POOL_SIZE, threads > 1 ? threads : 0u,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->opt.max_connections * 2 + 16,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->opt.timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)s->opt.header_max,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, l, MHD_OPTION_NOTIFY_CONNECTION,
		notify_connection, l, MHD_OPTION_END);
	if (!l->mhd)
		return rl_err_set(err, RL_EIO, "starting the HTTP server on %s", l->addr);
	LOG(s, "info", "serve.listening", "addr=%s threads=%u", l->addr, threads);
	return 0;
}

int api_server_start(uv_loop_t *loop, api_ctx *ctx, const api_options *o, api_server **out,
		     rl_err *err)
{
	if (!ctx->db_path)
		return rl_err_set(err, RL_EINVAL, "HTTP server: no database for its readers");
	api_server *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "HTTP server");
	s->loop = loop;
	s->ctx = ctx;
	s->opt = *o;
	api_options dflt;
	api_options_default(&dflt);
	if (!s->opt.max_connections)
		s->opt.max_connections = dflt.max_connections;
	if (!s->opt.per_peer)
		s->opt.per_peer = dflt.per_peer;
	if (!s->opt.head_s)
		s->opt.head_s = dflt.head_s;
	if (!s->opt.body_s)
		s->opt.body_s = dflt.body_s;
	if (!s->opt.timeout_s)
		s->opt.timeout_s = 30;
	if (!s->opt.header_max)
		s->opt.header_max = 16 * 1024;
	if (!s->opt.threads)
		s->opt.threads = 2;
	s->pol = *ctx->pol;
	s->loop_view.st = ctx->st;
	pthread_rwlock_init(&s->conf_lock, NULL);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->jobs_gone, NULL);
	pthread_mutex_init(&s->conn_lock, NULL);
	s->stop_pipe[0] = s->stop_pipe[1] = -1;
	for (size_t i = 0; i < API_MAX_LISTEN; i++)
		s->l[i].fd = -1;
	uv_async_init(loop, &s->wake, wake_cb);
	s->wake.data = s;
	s->wake_open = 1;
	int rc = 0;
	if (o->tokens_path) {
		if (!(s->tokens_path = strdup(o->tokens_path)))
			rc = rl_err_set(err, RL_ENOMEM, "HTTP server");
		else
			rc = api_tokens_load(o->tokens_path, &s->tokens, err);
	}
	for (size_t i = 0; rc == 0 && i < o->n_listen && i < API_MAX_LISTEN; i++) {
		s->n = i + 1;
		rc = start_listener(s, &s->l[i], o->listen[i], s->tokens != NULL, err);
	}
	if (rc == 0 && pipe2(s->stop_pipe, O_CLOEXEC) != 0)
		rc = rl_err_sys(err, RL_EIO, errno, "HTTP server");
	if (rc == 0) {
		int e = pthread_create(&s->acceptor, NULL, acceptor_main, s);
		if (e != 0)
			rc = rl_err_sys(err, RL_EIO, e, "HTTP server: the acceptor's thread");
		else
			s->acceptor_on = 1;
	}
	if (rc < 0) {
		api_server_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

const char *api_server_address(const api_server *s, size_t i)
{
	return s && i < s->n ? s->l[i].addr : NULL;
}

int api_server_reload_tokens(api_server *s, rl_err *err)
{
	if (!s->tokens_path)
		return 0;
	api_tokens *t;
	int rc = api_tokens_load(s->tokens_path, &t, err);
	if (rc < 0) {
		/* Fail closed: a file being rewritten to revoke a token must not
		 * leave the old tokens in force; none is taken until it reads
		 * well (and TCP does not become anonymous: the set is empty,
		 * not absent). */
		api_tokens *none = api_tokens_none();
		if (none) {
			pthread_rwlock_wrlock(&s->conf_lock);
			api_tokens *old = s->tokens;
			s->tokens = none;
			pthread_rwlock_unlock(&s->conf_lock);
			api_tokens_free(old);
		}
		return rc;
	}
	pthread_rwlock_wrlock(&s->conf_lock);
	api_tokens *old = s->tokens;
	s->tokens = t;
	pthread_rwlock_unlock(&s->conf_lock);
	api_tokens_free(old);
	return 0;
}

size_t api_server_waiting(api_server *s)
{
	size_t n = 0;
	pthread_mutex_lock(&s->lock);
	for (const req_state *r = s->jobs; r; r = r->job_next)
		n++;
	pthread_mutex_unlock(&s->lock);
	return n;
}

void api_server_set_policy(api_server *s, const api_policy *pol)
{
	if (!s)
		return;
	pthread_rwlock_wrlock(&s->conf_lock);
	s->pol = *pol;
	pthread_rwlock_unlock(&s->conf_lock);
}

static void server_maybe_free(api_server *s)
{
	if (!s->closing || s->wake_open || s->freed_once)
		return;
	s->freed_once = 1;
	for (int i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	while (s->conns) { /* admitted, never started by MHD */
		conn_state *x = s->conns;
		conn_unlink(s, x);
		free(x);
	}
	pthread_mutex_destroy(&s->conn_lock);
	views_close(s);
	api_tokens_free(s->tokens);
	free(s->tokens_path);
	pthread_rwlock_destroy(&s->conf_lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->jobs_gone);
	free(s);
}

void api_server_close(api_server *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	if (s->closing) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	/* From now on no request is queued for the loop (hand_to_loop
	 * answers 503); those queued already are answered 503 here, so no
	 * connection stays suspended (MHD_stop_daemon requires it). */
	s->closing = 1;
	req_state *list = s->jobs;
	s->jobs = s->jobs_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	/* Nothing new is admitted. */
	if (s->acceptor_on) {
		(void)!write(s->stop_pipe[1], "x", 1);
		pthread_join(s->acceptor, NULL);
		s->acceptor_on = 0;
	}
	answer_jobs(s, list, 1);
	/* Their answers (and those the loop gave just before) go out before
	 * the connections are closed; a client that does not read them does
	 * not hold the stop for more than JOBS_DRAIN_S. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += JOBS_DRAIN_S;
	pthread_mutex_lock(&s->lock);
	while (s->jobs_open > 0 &&
	       pthread_cond_timedwait(&s->jobs_gone, &s->lock, &until) == 0)
		;
	pthread_mutex_unlock(&s->lock);
	for (size_t i = 0; i < s->n; i++) {
		listener *l = &s->l[i];
		if (l->mhd)
			MHD_stop_daemon(l->mhd); /* joins its threads; closes its connections */
		if (l->fd >= 0)
			close(l->fd);
		l->mhd = NULL;
		l->fd = -1;
		if (l->is_unix && l->path[0])
			unlink(l->path);
	}
	/* The HTTP threads are gone: nothing sends on the handle any more.
	 * Freed once its close callback has run (the loop runs on). */
	if (s->wake_open)
		uv_close((uv_handle_t *)&s->wake, wake_closed);
	else
		server_maybe_free(s);
}
