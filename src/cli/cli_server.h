/*
 * cli_server.h - the commands that talk to relish serve (submit, cancel,
 * and the read commands when a server is reachable) get their client
 * here: --server ADDR, else $RELISH_SERVER, else the default socket
 * (api/client.h).  One code path: everything they show of a server comes
 * from its HTTP API.
 */
#ifndef RELISH_CLI_SERVER_H
#define RELISH_CLI_SERVER_H

#include "api/client.h"
#include "common/err.h"

/* A client for the server to use: explicit (may be NULL), else
 * $RELISH_SERVER, else the default socket (also when nothing answers
 * there: the first request then fails with RL_ENOSERVER naming it). */
int cli_server_client(const char *explicit_addr, api_client **out, rl_err *err);

/* PREFIX + REF percent-encoded + REST into buf
 * ("/api/v1/experiments/" "my exp" "/cancel"); REF OWNER/NAME gives NAME
 * in the path and "?owner=OWNER" after REST (which then carries no
 * query of its own). */
void cli_server_path(char *buf, size_t n, const char *prefix, const char *ref, const char *rest);

#endif
