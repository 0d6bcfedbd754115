/*
 * background.c - the background-occupancy series of relish simulate
 * (--background FILE): memory on each simulated GPU that processes relish
 * does not own use, over time, so that foreign load can be simulated with
 * the same rules the live driver applies to what NVML shows
 * (docs/simulator.md, "Foreign load").
 *
 * Format: a CSV file with the header `time_s,gpu,mib`, then one row per
 * change: from time_s (the trace's clock, as submit_time_s) on, GPU gpu (0
 * to --gpus - 1) has mib MiB in use by others, until the next row for that
 * GPU.  Before its first row a GPU has none.  Rows may come in any order;
 * they are sorted by time (then file order).  Bad input is reported as
 * FILE:LINE: field: expected ..., got "...".
 */
#include "sim/sim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_step(const void *a, const void *b)
{
	const sim_bg_step *x = a, *y = b;
	if (x->t_s != y->t_s)
		return x->t_s < y->t_s ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Next comma-separated field of *p (trimmed), or NULL at the end. */
static char *field(char **p)
{
	if (!*p)
		return NULL;
	char *s = *p, *c = strchr(s, ',');
	if (c) {
		*c = '\0';
		*p = c + 1;
	} else {
		*p = NULL;
	}
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

static int number(const char *s, double lo, double *out)
{
	char *end;
	errno = 0;
	double d = s ? strtod(s, &end) : 0;
	if (!s || !*s || *end || errno || !isfinite(d) || d < lo)
		return -1;
	*out = d;
	return 0;
}

int sim_background_parse(const char *text, const char *name, sim_background **out, rl_err *err)
{
	sim_background *b = calloc(1, sizeof *b);
	char *copy = strdup(text ? text : "");
	if (!b || !copy) {
		free(b);
		free(copy);
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", name);
	}
	int rc = 0;
	size_t cap = 0, lineno = 0;
	int header = 0;
	for (char *line = copy, *nl; line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = '\0';
		lineno++;
		char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			continue;
		if (!header) {
			char *a = field(&p), *g = field(&p), *m = field(&p);
			if (!a || !g || !m || p || strcmp(a, "time_s") || strcmp(g, "gpu") || strcmp(m, "mib")) {
				rc = rl_err_set(err, RL_EINVAL, "%s:%zu: header: expected \"time_s,gpu,mib\"",
						name, lineno);
				break;
			}
			header = 1;
			continue;
		}
		const char *v[3];
		for (int k = 0; k < 3; k++) /* in order: field() moves p */
			v[k] = field(&p);
		static const char *const what[3] = {"time_s", "gpu", "mib"};
		static const char *const expect[3] = {"seconds >= 0", "a GPU index >= 0", "MiB >= 0"};
		double d[3];
		if (p) {
			rc = rl_err_set(err, RL_EINVAL, "%s:%zu: expected 3 fields (time_s,gpu,mib)", name,
					lineno);
			break;
		}
		for (int k = 0; k < 3 && rc == 0; k++)
			if (number(v[k], 0, &d[k]) < 0 || (k > 0 && d[k] != floor(d[k])) ||
			    (k == 1 && d[k] > 1e6) || (k == 2 && d[k] > 1e12))
				rc = rl_err_set(err, RL_EINVAL, "%s:%zu: %s: expected %s, got \"%s\"", name,
						lineno, what[k], expect[k], v[k] ? v[k] : "");
		if (rc)
			break;
		if (b->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			sim_bg_step *s = realloc(b->step, nc * sizeof *s);
			if (!s) {
				rc = rl_err_set(err, RL_ENOMEM, "%s: out of memory", name);
				break;
			}
			b->step = s;
			cap = nc;
		}
		b->step[b->n] = (sim_bg_step){d[0], (int)d[1], (uint64_t)d[2], b->n, lineno};
		b->n++;
	}
	free(copy);
	if (rc == 0 && !header)
		rc = rl_err_set(err, RL_EINVAL, "%s: empty: expected the header \"time_s,gpu,mib\"", name);
	if (rc) {
		sim_background_free(b);
		return rc;
	}
	qsort(b->step, b->n, sizeof *b->step, cmp_step);
	*out = b;
	return 0;
}

int sim_background_load(const char *path, sim_background **out, rl_err *err)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return rl_err_sys(err, errno == ENOENT ? RL_ENOTFOUND : RL_EIO, errno,
				  "background series %s", path);
	char *text = NULL;
	size_t len = 0, cap = 0;
	char buf[65536];
	size_t n;
	int rc = 0;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		if (len + n + 1 > cap) {
			size_t nc = cap ? cap * 2 : sizeof buf * 2;
			while (nc < len + n + 1)
				nc *= 2;
			char *t = realloc(text, nc);
			if (!t) {
				rc = rl_err_set(err, RL_ENOMEM, "%s: out of memory", path);
				break;
			}
			text = t;
			cap = nc;
		}
		memcpy(text + len, buf, n);
		len += n;
	}
	if (rc == 0 && ferror(f))
		rc = rl_err_sys(err, RL_EIO, errno, "reading %s", path);
	fclose(f);
	if (rc == 0) {
		if (text)
			text[len] = '\0';
		rc = sim_background_parse(text ? text : "", path, out, err);
	}
	free(text);
	return rc;
}

void sim_background_free(sim_background *b)
{
	if (!b)
		return;
	free(b->step);
	free(b);
}
