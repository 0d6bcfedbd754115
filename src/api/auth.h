/*
 * auth.h - identity at the edge (internal to src/api).  A request's user
 * is decided once, before routing: on the unix socket it is the peer's
 * uid as the kernel reports it (SO_PEERCRED: nothing the client says);
 * over TCP it is the user a bearer token names in the token file.  Every
 * handler then reads the same api_user.
 *
 * The token file: one "TOKEN USER" per line ('#' starts a comment), USER
 * a name in the password database, TOKEN at least 16 characters of
 * [A-Za-z0-9._~+/=-].  It must be a regular file owned by the service's
 * user and readable by nobody else (mode 0600 or 0400): refused otherwise.
 */
#ifndef RELISH_API_AUTH_H
#define RELISH_API_AUTH_H

#include "api/api.h"

typedef struct api_tokens api_tokens;

int api_tokens_load(const char *path, api_tokens **out, rl_err *err);
void api_tokens_free(api_tokens *t);
/* A token set that holds none (every token refused); NULL: no memory. */
api_tokens *api_tokens_none(void);
size_t api_tokens_count(const api_tokens *t);

/* The uid a token names: 0 with *uid, RL_EAUTH when it names nobody.
 * Compares in time independent of where the tokens differ. */
int api_tokens_find(const api_tokens *t, const char *token, uid_t *uid, rl_err *err);

/* The user of uid (name, gid, root, admin under pol). */
void api_user_of_uid(uid_t uid, const api_policy *pol, api_via via, api_user *out);

/* The uid of the peer of a connected unix socket (SO_PEERCRED). */
int api_peer_uid(int fd, uid_t *uid, rl_err *err);

#endif
