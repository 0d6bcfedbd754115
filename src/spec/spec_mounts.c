/*
 * spec_mounts.c - trial.mounts: the bind mounts a container executor adds
 * to every trial container (docs/spec.md, docs/containers.md).
 *
 * Each item is "HOST[:TARGET][:ro|rw]", the shape podman's and docker's -v
 * take, checked here so that a typo is a spec error with a line number and
 * not a runtime failure of every segment:
 *   - ${NAME} anywhere in the item is replaced by the environment variable
 *     NAME at load time (a build folder, a data set); an unset or empty
 *     variable is an error naming it.  Read for another (spec_origin: a
 *     service), NAME comes from the variables the author declared and
 *     never from this process's environment, and no message holds a
 *     value the author did not give;
 *   - a relative HOST is taken from the spec's folder, like trial.workdir,
 *     and an existing HOST is resolved (realpath: "..", symlinks), except
 *     when read for another (the service resolves it as the author);
 *   - TARGET, when given, must be absolute; without it the path inside is
 *     the host path;
 *   - the options are exactly "ro" or "rw" (default rw).
 * The parsed (absolute, expanded) mounts are what the spec's JSON holds, so
 * a resumed experiment compares what was really mounted.
 */
#include "spec/spec_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Expand ${NAME} from the environment; *out malloc'd. */
static int expand_env(sx *x, const node *at, const char *in, char **out)
{
	size_t cap = strlen(in) + 1, len = 0;
	char *buf = malloc(cap);
	if (!buf)
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	for (const char *p = in; *p;) {
		const char *add = p;
		size_t n = 1;
		char name[128];
		if (p[0] == '$' && p[1] == '{') {
			const char *end = strchr(p + 2, '}');
			size_t nl = end ? (size_t)(end - (p + 2)) : 0;
			if (!end || nl == 0 || nl >= sizeof name) {
				free(buf);
				return sx_fail(x, at, "\"%s\": expected ${NAME} with a closing brace", in);
			}
			memcpy(name, p + 2, nl);
			name[nl] = '\0';
			const char *val = !x->origin ? getenv(name)
					  : x->origin->var ? x->origin->var(name, x->origin->ctx)
							   : NULL;
			if ((!val || !*val) && x->origin) {
				free(buf);
				return sx_fail(x, at, "\"%s\": variable %s is not among those the "
					       "submission declares (relish submit sends the ones the "
					       "spec names from its environment; a service never reads "
					       "its own)", in, name);
			}
			if (!val || !*val) {
				free(buf);
				return sx_fail(x, at, "\"%s\": environment variable %s is not set", in, name);
			}
			add = val;
			n = strlen(val);
			p = end + 1;
		} else {
			p++;
		}
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
			}
			buf = nb;
		}
		memcpy(buf + len, add, n);
		len += n;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

static int parse_one(sx *x, const node *at, const char *dir, spec_mount *m)
{
	char *text = NULL;
	int rc = expand_env(x, at, at->text, &text);
	if (rc < 0)
		return rc;
	char *part[4] = {0};
	size_t np = 0;
	for (char *save = NULL, *tok = strtok_r(text, ":", &save); tok && np < 4;
	     tok = strtok_r(NULL, ":", &save))
		part[np++] = tok;
	int ro = 0;
	if (np >= 2 && (!strcmp(part[np - 1], "ro") || !strcmp(part[np - 1], "rw"))) {
		ro = !strcmp(part[np - 1], "ro");
		np--;
	}
	size_t tl = strlen(at->text);
	if (np < 1 || np > 2 || tl == 0 || at->text[0] == ':' || at->text[tl - 1] == ':' ||
	    strstr(at->text, "::")) {
		rc = sx_fail(x, at, "\"%s\": expected HOST[:TARGET][:ro|rw]", at->text);
		goto out;
	}
	if (np == 2 && part[1][0] != '/') {
		rc = sx_fail(x, at, "\"%s\": the path inside the container must be absolute, got \"%s\"",
			     at->text, part[1]);
		goto out;
	}
	char *host;
	if (part[0][0] == '/') {
		host = strdup(part[0]);
	} else {
		const char *rel = part[0];
		while (rel[0] == '.' && rel[1] == '/')
			rel += 2;
		size_t n = strlen(dir) + strlen(rel) + 2;
		host = malloc(n);
		if (host)
			snprintf(host, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", rel);
	}
	/* "dir/." and "dir/" read badly in command lines: drop the tail. */
	size_t hl = host ? strlen(host) : 0;
	if (hl > 2 && !strcmp(host + hl - 2, "/."))
		host[hl -= 2] = '\0';
	while (hl > 1 && host[hl - 1] == '/')
		host[--hl] = '\0';
	/* ".." and symlinks resolved where the path exists (it must, for the
	 * engine to mount it; a missing one fails at run time, named). */
	char *real = host && !x->origin ? realpath(host, NULL) : NULL;
	if (real) {
		free(host);
		host = real;
	}
	char *target = host ? strdup(np == 2 ? part[1] : host) : NULL;
	if (!host || !target) {
		free(host);
		free(target);
		rc = rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
		goto out;
	}
	m->host = host;
	m->target = target;
	m->read_only = ro;
out:
	free(text);
	return rc;
}

int spec_parse_mounts(sx *x, const node *v, const char *dir, spec_mount **out, size_t *n)
{
	spec_mount *m = calloc(v->n ? v->n : 1, sizeof *m);
	if (!m)
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	int rc = 0;
	size_t i;
	for (i = 0; i < v->n && rc == 0; i++) {
		size_t saved = sx_push_index(x, i);
		rc = parse_one(x, v->items[i], dir, &m[i]);
		/* One target once: the engine refuses a second mount there
		 * anyway, and admission reads each mount as one grant. */
		for (size_t j = 0; j < i && rc == 0; j++)
			if (!strcmp(m[j].target, m[i].target))
				rc = sx_fail(x, v->items[i], "expected each mount target once, got %s "
					     "again (item %zu mounts there)", m[i].target, j);
		sx_pop(x, saved);
	}
	if (rc < 0) {
		for (size_t j = 0; j < v->n; j++) {
			free(m[j].host);
			free(m[j].target);
		}
		free(m);
		return rc;
	}
	*out = m;
	*n = v->n;
	return 0;
}
