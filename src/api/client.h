/*
 * client.h - the CLI's side of the HTTP API (libcurl).  `relish submit`,
 * `cancel`, and `status`, `trials`, `best`, `logs`, `export` against a
 * server talk to it through these calls only, so what the CLI shows of a
 * server is what the API answers.
 *
 * Where the server is: --server ADDR, else $RELISH_SERVER, else the
 * default socket (API_DEFAULT_SOCKET, where `relish serve` listens with its
 * default state folder).  ADDR is "unix:PATH", a path (starting with / or
 * .), or "HOST:PORT" / "http://HOST:PORT" for TCP, where a token is sent
 * from $RELISH_TOKEN or the file $RELISH_TOKEN_FILE.
 */
#ifndef RELISH_API_CLIENT_H
#define RELISH_API_CLIENT_H

#include <jansson.h>
#include <stddef.h>

#include "common/err.h"

#define API_DEFAULT_SOCKET "/var/lib/relish/relish.sock"

typedef struct api_client api_client;

/*
 * A client for addr; from says where addr came from ("--server",
 * "RELISH_SERVER", "the default socket") for messages.  Nothing is
 * connected yet.
 */
int api_client_new(const char *addr, const char *from, api_client **out, rl_err *err);
void api_client_free(api_client *c); /* NULL accepted */
const char *api_client_address(const api_client *c);

/*
 * One request; body may be NULL.  A 2xx answer is 0 with *out (may be
 * NULL) the parsed JSON document; an error document becomes its RL_E code
 * and message in err (the server's words); no server at the address is
 * RL_ENOSERVER with one line saying where the client looked and how to
 * start one.
 */
int api_client_json(api_client *c, const char *method, const char *path, const json_t *body,
		    json_t **out, rl_err *err);

/* A text answer (a segment's log): *text malloc'd (NUL-terminated, *len
 * bytes); the value of header hdr (may be NULL) into hval. */
int api_client_text(api_client *c, const char *path, char **text, size_t *len,
		    const char *hdr, char *hval, size_t hval_len, const char *hdr2, char *hval2,
		    size_t hval2_len, rl_err *err);

/*
 * The server the CLI should use, when it should: *addr and *from are set
 * and 1 returned for --server (explicit; may be NULL) or $RELISH_SERVER,
 * or for the default socket when something answers there; 0 when none
 * applies (use a database file).
 */
int api_client_pick(const char *explicit_addr, const char **addr, const char **from);

/* 1 when a server answers at the unix socket path (connect succeeds). */
int api_client_socket_answers(const char *path);

#endif
