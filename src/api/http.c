/*
 * http.c - libmicrohttpd on the driver's libuv loop (api.h).
 *
 * Each listener is one MHD daemon in "external polling" mode with epoll:
 * MHD keeps its sockets in one epoll descriptor, which libuv polls; when
 * it is readable, or when MHD's next timeout is due, the loop calls
 * MHD_run.  So requests are handled on the loop thread, between the
 * driver's own callbacks, and handlers call the driver directly: no lock,
 * no second thread, no copy of the driver's state.  Handlers are short
 * (SQLite reads, one commit for a submission).
 *
 * Sockets are created here and handed to MHD (MHD_OPTION_LISTEN_SOCKET):
 * a unix socket (mode 0666: anyone may connect, the peer's uid says who
 * they are) or TCP on an address that must be loopback unless a token
 * file is configured.  Limits: connections (MHD_OPTION_CONNECTION_LIMIT),
 * an idle timeout, the request line and headers (the connection's memory
 * pool: beyond it MHD answers 431), and per route the body (413 before
 * the body is read when Content-Length says so, else as soon as it
 * exceeds).  Every error is the JSON document of route.h with the status
 * of its err.h code.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "api/auth.h"
#include "api/encode.h"
#include "api/metrics.h"
#include "api/route.h"

/* Body bytes read and dropped after a route's limit before the connection
 * is cut (so that an honest client still reads its 413). */
#define DISCARD_MAX (16u << 20)

typedef struct listener {
	api_server *srv;
	int fd;
	int is_unix;
	char addr[300];      /* as shown: "unix:/path" or "127.0.0.1:40123" */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct MHD_Daemon *mhd;
	uv_poll_t poll;
	uv_timer_t timer;
	int handles;         /* poll and timer initialised */
	int open_handles;
} listener;

struct api_server {
	uv_loop_t *loop;
	api_ctx *ctx;
	api_options opt;
	char *tokens_path;
	api_tokens *tokens;
	listener l[API_MAX_LISTEN];
	size_t n;
	int closing;
};

/* Per connection: the unix peer's user, decided once. */
typedef struct conn_state {
	int have_peer;
	api_user peer;
	unsigned pol_gen;    /* the policy generation peer was decided under */
} conn_state;

/* Per request, from its first call to its completion. */
typedef struct req_state {
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
} req_state;

void api_options_default(api_options *o)
{
	memset(o, 0, sizeof *o);
	o->max_connections = 128;
	o->timeout_s = 30;
	o->header_max = 16 * 1024;
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

static enum MHD_Result send_resp(struct MHD_Connection *c, req_state *r, api_resp *rs)
{
	char *body;
	size_t len;
	const char *type;
	if (rs->text) {
		body = rs->text;
		len = rs->text_len;
		rs->text = NULL;
		type = rs->content_type ? rs->content_type : "text/plain; charset=utf-8";
	} else {
		/* Every digit (17): a client reads back the very doubles the
		 * store holds (the CLI prints them as it would from the file). */
		body = rs->json ? json_dumps(rs->json, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
		if (!body)
			body = strdup("{\"error\":{\"code\":\"RL_ENOMEM\",\"status\":500,"
				      "\"message\":\"out of memory\"}}");
		len = body ? strlen(body) : 0;
		type = "application/json";
	}
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
 * bearer token over TCP.  Returns 0, or an error to answer with. */
static int identify(listener *l, struct MHD_Connection *c, req_state *r, rl_err *err)
{
	api_server *s = l->srv;
	const api_policy *pol = s->ctx->pol;
	if (l->is_unix) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		conn_state *cs = ci ? (conn_state *)ci->socket_context : NULL;
		if (!cs || !cs->have_peer)
			return rl_err_set(err, RL_EAUTH, "the peer's credentials could not be read");
		/* Looked up once per connection (the password and group files),
		 * again after a reload (the admin group may have changed). */
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
	if (!s->tokens)
		return rl_err_set(err, RL_EAUTH, "this service has no token file; connect through "
				  "its unix socket");
	const char *tok = auth + 7;
	while (*tok == ' ')
		tok++;
	uid_t uid;
	int rc = api_tokens_find(s->tokens, tok, &uid, err);
	if (rc < 0)
		return rc;
	api_user_of_uid(uid, pol, API_VIA_TOKEN, &r->user);
	return 0;
}

static void notify_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	listener *l = cls;
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		free(*socket_context);
		*socket_context = NULL;
		return;
	}
	if (!l->is_unix)
		return;
	conn_state *cs = calloc(1, sizeof *cs);
	if (!cs)
		return;
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	uid_t uid;
	if (ci && api_peer_uid(ci->connect_fd, &uid, NULL) == 0) {
		api_user_of_uid(uid, l->srv->ctx->pol, API_VIA_UNIX, &cs->peer);
		cs->pol_gen = l->srv->ctx->pol->generation;
		cs->have_peer = 1;
	}
	*socket_context = cs;
}

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
		r->t0_ns = mono_ns();
		snprintf(r->method, sizeof r->method, "%s", method);
		snprintf(r->path, sizeof r->path, "%s", url);
		rl_err err;
		rl_err_clear(&err);
		int rc = identify(l, c, r, &err);
		if (rc < 0)
			return send_error(c, r, rc, err.msg);
		r->rq.ctx = s->ctx;
		r->rq.user = &r->user;
		r->rq.method = r->method;
		r->rq.path = r->path;
		r->rq.query = query_cb;
		r->rq.qctx = c;
		if ((rc = api_route_match(method, url, &r->route, &r->rq, &err)) < 0) {
			r->route = NULL;
			return send_error(c, r, rc, err.msg);
		}
		if ((rc = api_route_allowed(r->route, &r->rq, s->tokens != NULL, &err)) < 0)
			return send_error(c, r, rc, err.msg);
		r->max = api_route_body_max(r->route, s->ctx->pol);
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
	if (r->too_big) {
		char msg[200];
		snprintf(msg, sizeof msg, "%s %s takes a body of at most %zu bytes", r->method,
			 r->route->pattern, r->max);
		return send_error(c, r, RL_ETOOBIG, msg);
	}
	r->rq.body = r->body;
	r->rq.body_len = r->len;
	api_resp rs;
	memset(&rs, 0, sizeof rs);
	api_dispatch(r->route, &r->rq, &rs);
	r->answered = 1;
	enum MHD_Result ret = send_resp(c, r, &rs);
	api_resp_fini(&rs);
	return ret;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	(void)c;
	listener *l = cls;
	api_server *s = l->srv;
	req_state *r = *con_cls;
	if (!r)
		return;
	double ms = (double)(mono_ns() - r->t0_ns) / 1e6;
	api_metrics_observe(r->route, r->status, ms / 1e3);
	int change = strcmp(r->method, "GET") != 0;
	if (s->opt.log_reads || change || r->status >= 400 || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		LOG(s, r->status >= 500 ? "error" : "info", "http",
		    "method=%s path=%s status=%d user=%s via=%s ms=%.2f%s", r->method, r->path,
		    r->status, r->user.name[0] ? r->user.name : "-", l->is_unix ? "unix" : "tcp", ms,
		    toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " aborted=1");
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
	LOG(l->srv, "warn", "http.mhd", "listen=%s msg=\"%s\"", l->addr, buf);
}

/* ---- the loop ---- */

static void rearm(listener *l);

static void run_mhd(listener *l)
{
	MHD_run(l->mhd);
	rearm(l);
}

static void timer_cb(uv_timer_t *t)
{
	run_mhd(t->data);
}

static void poll_cb(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	run_mhd(p->data);
}

static void rearm(listener *l)
{
	MHD_UNSIGNED_LONG_LONG to;
	if (MHD_get_timeout(l->mhd, &to) == MHD_YES)
		uv_timer_start(&l->timer, timer_cb, (uint64_t)to, 0);
	else
		uv_timer_stop(&l->timer);
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

static void server_maybe_free(api_server *s);

static void handle_closed(uv_handle_t *h)
{
	listener *l = h->data;
	l->open_handles--;
	server_maybe_free(l->srv);
}

static int start_listener(api_server *s, listener *l, const char *where, rl_err *err)
{
	l->srv = s;
	l->fd = -1;
	int rc;
	if (!strncmp(where, "unix:", 5))
		rc = listen_unix(l, where + 5, err);
	else if (where[0] == '/' || where[0] == '.')
		rc = listen_unix(l, where, err);
	else
		rc = listen_tcp(l, where, s->tokens != NULL, err);
	if (rc < 0)
		return rc;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	l->mhd = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, l, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, l,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)l->fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)s->opt.max_connections,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s->opt.timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)s->opt.header_max,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, l, MHD_OPTION_NOTIFY_CONNECTION,
		notify_connection, l, MHD_OPTION_END);
	if (!l->mhd)
		return rl_err_set(err, RL_EIO, "starting the HTTP server on %s", l->addr);
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(l->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di)
		return rl_err_set(err, RL_EIO, "the HTTP server on %s has no epoll descriptor", l->addr);
	uv_poll_init(s->loop, &l->poll, di->epoll_fd);
	uv_timer_init(s->loop, &l->timer);
	l->poll.data = l->timer.data = l;
	l->handles = 1;
	l->open_handles = 2;
	uv_poll_start(&l->poll, UV_READABLE, poll_cb);
	rearm(l);
	LOG(s, "info", "serve.listening", "addr=%s", l->addr);
	return 0;
}

int api_server_start(uv_loop_t *loop, api_ctx *ctx, const api_options *o, api_server **out,
		     rl_err *err)
{
	api_server *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "HTTP server");
	s->loop = loop;
	s->ctx = ctx;
	s->opt = *o;
	if (!s->opt.max_connections)
		s->opt.max_connections = 128;
	if (!s->opt.timeout_s)
		s->opt.timeout_s = 30;
	if (!s->opt.header_max)
		s->opt.header_max = 16 * 1024;
	for (size_t i = 0; i < API_MAX_LISTEN; i++)
		s->l[i].fd = -1;
	int rc = 0;
	if (o->tokens_path) {
		if (!(s->tokens_path = strdup(o->tokens_path)))
			rc = rl_err_set(err, RL_ENOMEM, "HTTP server");
		else
			rc = api_tokens_load(o->tokens_path, &s->tokens, err);
	}
	for (size_t i = 0; rc == 0 && i < o->n_listen && i < API_MAX_LISTEN; i++) {
		s->n = i + 1;
		rc = start_listener(s, &s->l[i], o->listen[i], err);
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
	if (rc < 0)
		return rc;
	api_tokens_free(s->tokens);
	s->tokens = t;
	return 0;
}

static void server_maybe_free(api_server *s)
{
	if (!s->closing)
		return;
	for (size_t i = 0; i < s->n; i++)
		if (s->l[i].open_handles > 0)
			return;
	api_tokens_free(s->tokens);
	free(s->tokens_path);
	free(s);
}

void api_server_close(api_server *s)
{
	if (!s || s->closing)
		return;
	s->closing = 1;
	for (size_t i = 0; i < s->n; i++) {
		listener *l = &s->l[i];
		if (l->handles) {
			uv_poll_stop(&l->poll);
			uv_close((uv_handle_t *)&l->poll, handle_closed);
			uv_close((uv_handle_t *)&l->timer, handle_closed);
		}
		if (l->mhd)
			MHD_stop_daemon(l->mhd); /* closes every connection and the socket */
		else if (l->fd >= 0)
			close(l->fd);
		l->mhd = NULL;
		l->fd = -1;
		if (l->is_unix && l->path[0])
			unlink(l->path);
	}
	/* Freed once the close callbacks have run (the loop runs on). */
	server_maybe_free(s);
}
