/*
 * spec.c - entry points of the spec module: reading a spec file, choosing
 * the front end (YAML or JSON, node.c), handing the tree to the schema
 * (spec_schema.c), freeing, and expanding command templates.
 *
 * Placeholder expansion lives here rather than in the executors so that the
 * parser's check ("every {name} names a parameter or a built-in") and the
 * substitution at run time share one reading of the braces.
 */
#include "spec/spec.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "spec/node.h"
#include "spec/spec_internal.h"

/* Specs are small; anything larger is surely not one. */
#define SPEC_MAX_BYTES (4u << 20)

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcasecmp(s + a - b, suffix);
}

/* Absolute folder of the file called name, or the current folder when name
 * names no file (text given directly). Malloc'd. */
static char *spec_dir(const char *name)
{
	char *copy = strdup(name);
	if (!copy)
		return NULL;
	char *dir = realpath(dirname(copy), NULL);
	free(copy);
	if (dir)
		return dir;
	char cwd[PATH_MAX];
	return getcwd(cwd, sizeof cwd) ? strdup(cwd) : strdup("/");
}

int spec_parse_text(const char *text, size_t len, const char *name, int json, spec **out, rl_err *err)
{
	return spec_parse_text_in(text, len, name, NULL, json, out, err);
}

int spec_parse_text_in(const char *text, size_t len, const char *name, const char *in_dir,
		       int json, spec **out, rl_err *err)
{
	return spec_parse_text_from(text, len, name, in_dir, json, NULL, out, err);
}

int spec_parse_text_from(const char *text, size_t len, const char *name, const char *in_dir,
			 int json, const spec_origin *origin, spec **out, rl_err *err)
{
	node *root = NULL;
	int rc = node_parse(text, len, name, json, &root, err);
	if (rc < 0)
		return rc;
	char *dir = in_dir ? strdup(in_dir) : spec_dir(name);
	if (!dir) {
		node_free(root);
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", name);
	}
	spec *s = NULL;
	rc = spec_from_tree(root, name, dir, origin, &s, err);
	free(dir);
	node_free(root);
	if (rc < 0)
		return rc;
	*out = s;
	return 0;
}

int spec_load(const char *path, spec **out, rl_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rl_err_sys(err, errno == ENOENT ? RL_ENOTFOUND : RL_EIO, errno, "%s: cannot open", path);
	char *buf = malloc(SPEC_MAX_BYTES + 1);
	if (!buf) {
		fclose(f);
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", path);
	}
	size_t len = fread(buf, 1, SPEC_MAX_BYTES + 1, f);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return rl_err_set(err, RL_EIO, "%s: read error", path);
	}
	if (len > SPEC_MAX_BYTES) {
		free(buf);
		return rl_err_set(err, RL_ESPEC, "%s: larger than %u MiB; not a spec", path, SPEC_MAX_BYTES >> 20);
	}
	buf[len] = '\0';
	int rc = spec_parse_text(buf, len, path, ends_with(path, ".json"), out, err);
	free(buf);
	return rc;
}

void spec_free(spec *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->source);
	free(s->objective.metric);
	for (size_t i = 0; s->more_objectives && i < s->n_more_objectives; i++)
		free(s->more_objectives[i].metric);
	free(s->more_objectives);
	for (size_t i = 0; s->constraints && i < s->n_constraints; i++)
		free(s->constraints[i].metric);
	free(s->constraints);
	space_fini(&s->search.space);
	free(s->schedule.resource);
	for (size_t i = 0; s->trial.argv && i < s->trial.argc; i++)
		free(s->trial.argv[i]);
	free(s->trial.argv);
	for (size_t i = 0; i < s->trial.n_env; i++) {
		free(s->trial.env[i].name);
		free(s->trial.env[i].value);
	}
	free(s->trial.env);
	free(s->trial.workdir);
	free(s->trial.image);
	free(s->trial.network);
	for (size_t i = 0; s->trial.mounts && i < s->trial.n_mounts; i++) {
		free(s->trial.mounts[i].host);
		free(s->trial.mounts[i].target);
	}
	free(s->trial.mounts);
	for (size_t i = 0; i < s->trial.privileges.n_capabilities; i++)
		free(s->trial.privileges.capabilities[i]);
	free(s->trial.privileges.capabilities);
	free(s->trial.privileges.user);
	free(s->trial.slurm.partition);
	free(s->trial.slurm.account);
	free(s->trial.slurm.qos);
	for (size_t i = 0; s->trial.slurm.sbatch_args && i < s->trial.slurm.n_sbatch_args; i++)
		free(s->trial.slurm.sbatch_args[i]);
	free(s->trial.slurm.sbatch_args);
	for (size_t i = 0; s->trial.shape_params && i < s->trial.n_shape_params; i++)
		free(s->trial.shape_params[i]);
	free(s->trial.shape_params);
	free(s);
}

/* ---- templates --------------------------------------------------------- */

int spec_is_builtin(const char *name)
{
	static const char *const builtins[] = {"trial_id", "checkpoint_dir", "resource_from", "resource_to"};
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
		if (!strcmp(name, builtins[i]))
			return 1;
	return 0;
}

typedef struct strbuf {
	char *p;
	size_t len, cap;
} strbuf;

static int sb_add(strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int is_name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

int spec_expand(const char *tmpl, spec_lookup_fn lookup, void *ctx, char **out, rl_err *err)
{
	strbuf b = {0};
	char small[256];
	int rc = 0;
	if (sb_add(&b, "", 0) < 0)
		return rl_err_set(err, RL_ENOMEM, "expanding a template");
	for (size_t i = 0; tmpl[i] && rc == 0;) {
		char c = tmpl[i];
		if ((c == '{' && tmpl[i + 1] == '{') || (c == '}' && tmpl[i + 1] == '}')) {
			rc = sb_add(&b, &c, 1);
			i += 2;
			continue;
		}
		if (c != '{') {
			rc = sb_add(&b, &c, 1);
			i++;
			continue;
		}
		size_t j = i + 1;
		while (tmpl[j] && is_name_char(tmpl[j], j == i + 1) && j - i <= 64)
			j++;
		if (j == i + 1 || tmpl[j] != '}') {
			free(b.p);
			return rl_err_set(err, RL_ESPEC,
					  "malformed placeholder at character %zu: expected {name} (write {{ for a literal brace)",
					  i + 1);
		}
		char name[80];
		memcpy(name, tmpl + i + 1, j - i - 1);
		name[j - i - 1] = '\0';
		int n = lookup(name, small, sizeof small, ctx);
		if (n < 0) {
			free(b.p);
			return rl_err_set(err, RL_ESPEC, "unknown placeholder {%s}", name);
		}
		if ((size_t)n < sizeof small) {
			rc = sb_add(&b, small, (size_t)n);
		} else {
			char *big = malloc((size_t)n + 1);
			if (!big || lookup(name, big, (size_t)n + 1, ctx) != n)
				rc = -1;
			else
				rc = sb_add(&b, big, (size_t)n);
			free(big);
		}
		i = j + 1;
	}
	if (rc < 0) {
		free(b.p);
		return rl_err_set(err, RL_ENOMEM, "expanding a template");
	}
	*out = b.p;
	return 0;
}

struct config_ctx {
	const space *sp;
	const config *c;
	const spec_builtins *b;
};

static int config_lookup(const char *name, char *buf, size_t len, void *ctx)
{
	struct config_ctx *cc = ctx;
	int i = cc->sp ? space_find(cc->sp, name) : -1;
	if (i >= 0 && cc->c && (size_t)i < cc->c->n) {
		/* An inactive parameter gives its default; the parser refuses
		 * templates naming one that has none. */
		const rl_value *v = &cc->c->v[i];
		return value_format(v->type == VAL_NONE ? &cc->sp->params[i].dflt : v, buf, len);
	}
	const char *v = NULL;
	if (!strcmp(name, "trial_id"))
		v = cc->b ? cc->b->trial_id : NULL;
	else if (!strcmp(name, "checkpoint_dir"))
		v = cc->b ? cc->b->checkpoint_dir : NULL;
	else if (!strcmp(name, "resource_from"))
		v = cc->b ? cc->b->resource_from : NULL;
	else if (!strcmp(name, "resource_to"))
		v = cc->b ? cc->b->resource_to : NULL;
	else
		return -1;
	return snprintf(buf, len, "%s", v ? v : "");
}

int spec_expand_config(const char *tmpl, const space *sp, const config *c, const spec_builtins *b, char **out,
		       rl_err *err)
{
	struct config_ctx cc = {sp, c, b};
	return spec_expand(tmpl, config_lookup, &cc, out, err);
}

/* ---- grants ------------------------------------------------------------ */

size_t spec_grants(const spec *s, spec_grant *out, size_t max)
{
	size_t n = 0;
#define GRANT(k, ...)                                                         \
	do {                                                                  \
		if (n < max) {                                                \
			out[n].key = k;                                       \
			snprintf(out[n].value, sizeof out[n].value, __VA_ARGS__); \
		}                                                             \
		n++;                                                          \
	} while (0)
	if (s->trial.executor != EXEC_PODMAN && s->trial.executor != EXEC_DOCKER)
		return 0;
	const spec_privileges *p = &s->trial.privileges;
	if (s->trial.network && strcmp(s->trial.network, "none") != 0)
		GRANT("trial.network", "%s", s->trial.network);
	for (size_t i = 0; i < p->n_capabilities; i++)
		GRANT("trial.privileges.capabilities", "%s", p->capabilities[i]);
	if (p->user)
		GRANT("trial.privileges.user", "%s", p->user);
	if (p->writable_root)
		GRANT("trial.privileges.writable_root", "true");
	if (p->new_privileges)
		GRANT("trial.privileges.new_privileges", "true");
	for (size_t i = 0; i < s->trial.n_mounts; i++)
		GRANT("trial.mounts", "%s:%s:%s", s->trial.mounts[i].host, s->trial.mounts[i].target,
		      s->trial.mounts[i].read_only ? "ro" : "rw");
#undef GRANT
	return n;
}
