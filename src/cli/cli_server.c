/*
 * cli_server.c - choosing the server the CLI talks to (cli_server.h).
 */
#include "cli/cli_server.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

int cli_server_client(const char *explicit_addr, api_client **out, rl_err *err)
{
	const char *addr, *from;
	if (!api_client_pick(explicit_addr, &addr, &from)) {
		addr = "unix:" API_DEFAULT_SOCKET;
		from = "the default socket; no --server, no RELISH_SERVER";
	}
	return api_client_new(addr, from, out, err);
}

/* s %-encoded into enc (n bytes). */
static void url_encode(const char *s, size_t len, char *enc, size_t n)
{
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)s; len-- && *p && k + 4 < n; p++) {
		if (isalnum(*p) || strchr("-._~", *p))
			enc[k++] = (char)*p;
		else
			k += (size_t)snprintf(enc + k, n - k, "%%%02X", *p);
	}
	enc[k] = '\0';
}

void cli_server_path(char *buf, size_t n, const char *prefix, const char *ref, const char *rest)
{
	/* OWNER/NAME: the name in the path, the owner as ?owner= (a '/' in a
	 * path segment would split it). */
	const char *slash = strchr(ref, '/');
	char name[768], owner[300] = "";
	url_encode(slash ? slash + 1 : ref, (size_t)-1, name, sizeof name);
	if (slash)
		url_encode(ref, (size_t)(slash - ref), owner, sizeof owner);
	snprintf(buf, n, "%s%s%s%s%s", prefix, name, rest ? rest : "", slash ? "?owner=" : "",
		 owner);
}
