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

void cli_server_path(char *buf, size_t n, const char *prefix, const char *ref, const char *rest)
{
	char enc[768];
	size_t k = 0;
	for (const unsigned char *p = (const unsigned char *)ref; *p && k + 4 < sizeof enc; p++) {
		if (isalnum(*p) || strchr("-._~", *p))
			enc[k++] = (char)*p;
		else
			k += (size_t)snprintf(enc + k, sizeof enc - k, "%%%02X", *p);
	}
	enc[k] = '\0';
	snprintf(buf, n, "%s%s%s", prefix, enc, rest ? rest : "");
}
