/*
 * client.c - HTTP requests from the CLI to relish serve (client.h), with
 * libcurl: a unix socket through CURLOPT_UNIX_SOCKET_PATH, TCP with a
 * bearer token.  One easy handle per client, kept alive across requests.
 */
#include "api/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "api/encode.h"

struct api_client {
	CURL *curl;
	char addr[1024];      /* as given */
	char from[64];
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* unix: the path */
	char base[1100];      /* "http://relish" or "http://HOST:PORT" */
	char auth[400];       /* "Authorization: Bearer ..." or "" */
};

typedef struct buf {
	char *p;
	size_t n, cap;
	int oom;
} buf;

static size_t write_cb(char *data, size_t size, size_t nmemb, void *ud)
{
	buf *b = ud;
	size_t n = size * nmemb;
	if (b->n + n + 1 > b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 8192;
		while (nc < b->n + n + 1)
			nc *= 2;
		char *p = realloc(b->p, nc);
		if (!p) {
			b->oom = 1;
			return 0;
		}
		b->p = p;
		b->cap = nc;
	}
	memcpy(b->p + b->n, data, n);
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

typedef struct hdrs {
	const char *name[2];
	char *val[2];
	size_t len[2];
} hdrs;

static size_t header_cb(char *data, size_t size, size_t nmemb, void *ud)
{
	hdrs *h = ud;
	size_t n = size * nmemb;
	for (int i = 0; i < 2; i++) {
		if (!h->name[i])
			continue;
		size_t k = strlen(h->name[i]);
		if (n > k + 1 && !strncasecmp(data, h->name[i], k) && data[k] == ':') {
			const char *v = data + k + 1;
			size_t vl = n - k - 1;
			while (vl && (*v == ' ' || *v == '\t')) {
				v++;
				vl--;
			}
			while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n'))
				vl--;
			snprintf(h->val[i], h->len[i], "%.*s", (int)vl, v);
		}
	}
	return n;
}

static int read_token(char *out, size_t n)
{
	const char *t = getenv("RELISH_TOKEN");
	if (t && *t) {
		snprintf(out, n, "%s", t);
		return 1;
	}
	const char *f = getenv("RELISH_TOKEN_FILE");
	if (!f || !*f)
		return 0;
	FILE *fp = fopen(f, "r");
	if (!fp)
		return 0;
	char line[400] = "";
	int ok = fgets(line, sizeof line, fp) != NULL;
	fclose(fp);
	line[strcspn(line, " \t\r\n")] = '\0';
	if (ok && line[0])
		snprintf(out, n, "%s", line);
	return ok && line[0];
}

int api_client_new(const char *addr, const char *from, api_client **out, rl_err *err)
{
	static int inited;
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = 1;
	}
	api_client *c = calloc(1, sizeof *c);
	if (!c)
		return rl_err_set(err, RL_ENOMEM, "API client");
	snprintf(c->addr, sizeof c->addr, "%s", addr);
	snprintf(c->from, sizeof c->from, "%s", from ? from : "--server");
	const char *path = NULL;
	if (!strncmp(addr, "unix:", 5))
		path = addr + 5;
	else if (addr[0] == '/' || addr[0] == '.')
		path = addr;
	if (path) {
		if (strlen(path) >= sizeof c->sock) {
			free(c);
			return rl_err_set(err, RL_EINVAL, "socket path %s is too long", path);
		}
		snprintf(c->sock, sizeof c->sock, "%s", path);
		snprintf(c->base, sizeof c->base, "http://relish");
	} else {
		const char *hp = !strncmp(addr, "http://", 7) ? addr + 7 : addr;
		snprintf(c->base, sizeof c->base, "http://%.*s", (int)strcspn(hp, "/"), hp);
		char tok[340];
		if (read_token(tok, sizeof tok))
			snprintf(c->auth, sizeof c->auth, "Authorization: Bearer %s", tok);
	}
	if (!(c->curl = curl_easy_init())) {
		free(c);
		return rl_err_set(err, RL_ENOMEM, "API client");
	}
	*out = c;
	return 0;
}

void api_client_free(api_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	memset(c->auth, 0, sizeof c->auth);
	free(c);
}

const char *api_client_address(const api_client *c)
{
	return c->addr;
}

/* Perform one request; *status and the body in b. */
static int perform(api_client *c, const char *method, const char *path, const char *body,
		   size_t body_len, const char *ctype, long *status, buf *b, hdrs *h, rl_err *err)
{
	char url[2400];
	snprintf(url, sizeof url, "%s%s", c->base, path);
	CURL *k = c->curl;
	curl_easy_reset(k);
	curl_easy_setopt(k, CURLOPT_URL, url);
	if (c->sock[0])
		curl_easy_setopt(k, CURLOPT_UNIX_SOCKET_PATH, c->sock);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, 120000L);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, b);
	if (h) {
		curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, header_cb);
		curl_easy_setopt(k, CURLOPT_HEADERDATA, h);
	}
	struct curl_slist *hl = NULL;
	if (c->auth[0])
		hl = curl_slist_append(hl, c->auth);
	if (body) {
		char ct[80];
		snprintf(ct, sizeof ct, "Content-Type: %s", ctype);
		hl = curl_slist_append(hl, ct);
		hl = curl_slist_append(hl, "Expect:"); /* no 100-continue round trip */
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	if (strcmp(method, "GET") && strcmp(method, "POST"))
		curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	else if (!strcmp(method, "POST") && !body) {
		curl_easy_setopt(k, CURLOPT_POST, 1L);
		curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE, 0L);
	}
	if (hl)
		curl_easy_setopt(k, CURLOPT_HTTPHEADER, hl);
	CURLcode r = curl_easy_perform(k);
	curl_slist_free_all(hl);
	if (r != CURLE_OK) {
		int noserver = r == CURLE_COULDNT_CONNECT || r == CURLE_COULDNT_RESOLVE_HOST ||
			       r == CURLE_OPERATION_TIMEDOUT || r == CURLE_GOT_NOTHING ||
			       r == CURLE_RECV_ERROR || r == CURLE_SEND_ERROR;
		if (noserver)
			return rl_err_set(err, RL_ENOSERVER,
					  "no relish server at %s (%s): %s; start one with `relish "
					  "serve` (docs/serve.md), or read a database file with --db",
					  c->addr, c->from, curl_easy_strerror(r));
		return rl_err_set(err, RL_EIO, "%s %s at %s: %s", method, path, c->addr,
				  curl_easy_strerror(r));
	}
	if (b->oom)
		return rl_err_set(err, RL_ENOMEM, "reading the server's answer");
	curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

/* An error document into err (or a generic message for one that is not). */
static int answer_error(long status, const buf *b, rl_err *err)
{
	json_error_t je;
	json_t *j = b->p ? json_loads(b->p, 0, &je) : NULL;
	json_t *e = json_object_get(j, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	int rc;
	if (code && msg)
		rc = rl_err_set(err, rl_err_from_name(code), "%s", msg);
	else
		rc = rl_err_set(err, status == 404 ? RL_ENOTFOUND : status >= 500 ? RL_EIO : RL_EINVAL,
				"the server answered %ld: %.200s", status, b->p ? b->p : "");
	json_decref(j);
	return rc;
}

int api_client_json(api_client *c, const char *method, const char *path, const json_t *body,
		    json_t **out, rl_err *err)
{
	char *text = body ? api_json_text(body, 1) : NULL;
	if (body && !text)
		return rl_err_set(err, RL_ENOMEM, "request body");
	buf b = {0};
	long status = 0;
	int rc = perform(c, method, path, text, text ? strlen(text) : 0, "application/json",
			 &status, &b, NULL, err);
	free(text);
	if (rc == 0 && (status < 200 || status > 299))
		rc = answer_error(status, &b, err);
	if (rc == 0 && out) {
		json_error_t je;
		*out = json_loads(b.p ? b.p : "", 0, &je);
		if (!*out)
			rc = rl_err_set(err, RL_EPARSE, "the server's answer to %s %s is not JSON: %s",
					method, path, je.text);
	}
	free(b.p);
	return rc;
}

int api_client_text(api_client *c, const char *path, char **text, size_t *len,
		    const char *hdr, char *hval, size_t hval_len, const char *hdr2, char *hval2,
		    size_t hval2_len, rl_err *err)
{
	buf b = {0};
	long status = 0;
	hdrs h = {.name = {hdr, hdr2}, .val = {hval, hval2}, .len = {hval_len, hval2_len}};
	if (hval)
		hval[0] = '\0';
	if (hval2)
		hval2[0] = '\0';
	int rc = perform(c, "GET", path, NULL, 0, NULL, &status, &b, &h, err);
	if (rc == 0 && (status < 200 || status > 299))
		rc = answer_error(status, &b, err);
	if (rc < 0) {
		free(b.p);
		return rc;
	}
	*text = b.p ? b.p : strdup("");
	*len = b.n;
	return *text ? 0 : rl_err_set(err, RL_ENOMEM, "log");
}

int api_client_socket_answers(const char *path)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof a.sun_path)
		return 0;
	memcpy(a.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

int api_client_pick(const char *explicit_addr, const char **addr, const char **from)
{
	if (explicit_addr && *explicit_addr) {
		*addr = explicit_addr;
		*from = "--server";
		return 1;
	}
	const char *env = getenv("RELISH_SERVER");
	if (env && *env) {
		*addr = env;
		*from = "RELISH_SERVER";
		return 1;
	}
	if (api_client_socket_answers(API_DEFAULT_SOCKET)) {
		*addr = "unix:" API_DEFAULT_SOCKET;
		*from = "the default socket";
		return 1;
	}
	return 0;
}
