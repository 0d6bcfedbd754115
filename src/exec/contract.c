/*
 * contract.c - the trial contract's pure parts: metric lines, argv
 * substitution, the trial environment, the warm/worker commands and the
 * classification of a segment's ending.  See contract.h and docs/trials.md.
 */
#include "exec/contract.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- metric lines ---------------------------------------------------- */

static int is_name_start(int c)
{
	return isalpha(c) || c == '_';
}

static int is_name_char(int c)
{
	return isalnum(c) || c == '_' || c == '.' || c == '/' || c == '-';
}

static contract_kind bad(contract_line *out, const char *why)
{
	out->kind = CONTRACT_BAD;
	out->n = 0;
	out->why = why;
	return CONTRACT_BAD;
}

/* Parse a decimal number spanning exactly s[0..len).  strtod would also take
 * hex, "inf" and "nan"; those are refused so that metrics stay plain. */
static int parse_number(const char *s, size_t len, double *v)
{
	char buf[64];
	if (len == 0 || len >= sizeof buf)
		return -1;
	for (size_t i = 0; i < len; i++)
		if (!strchr("0123456789+-.eE", s[i]))
			return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	double d = strtod(buf, &end);
	if (end != buf + len || !isfinite(d))
		return -1;
	*v = d;
	return 0;
}

/* Parse "name=value name=value ..." from s[0..len) into out. */
static contract_kind parse_pairs(const char *s, size_t len, contract_line *out)
{
	size_t i = 0;
	out->n = 0;
	while (i < len) {
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len)
			break;
		size_t ns = i;
		if (!is_name_start((unsigned char)s[i]))
			return bad(out, "a metric name must start with a letter or '_'");
		while (i < len && is_name_char((unsigned char)s[i]))
			i++;
		size_t nl = i - ns;
		if (i == len || s[i] != '=')
			return bad(out, "expected name=value");
		if (nl >= CONTRACT_NAME_MAX)
			return bad(out, "metric name longer than 63 characters");
		i++;
		size_t vs = i;
		while (i < len && s[i] != ' ' && s[i] != '\t')
			i++;
		double v;
		if (parse_number(s + vs, i - vs, &v) < 0)
			return bad(out, i - vs > 1 && s[i - 1] == ','
					    ? "name=value pairs are separated by spaces, not commas"
					    : "a metric value must be a finite decimal number");
		if (out->n == CONTRACT_MAX_METRICS)
			return bad(out, "more than 32 metrics on one line");
		for (size_t k = 0; k < out->n; k++)
			if (strlen(out->m[k].name) == nl && memcmp(out->m[k].name, s + ns, nl) == 0)
				return bad(out, "a metric name appears twice");
		memcpy(out->m[out->n].name, s + ns, nl);
		out->m[out->n].name[nl] = '\0';
		out->m[out->n].value = v;
		out->n++;
	}
	return CONTRACT_METRICS;
}

static int has_prefix(const char *s, size_t len, const char *p)
{
	size_t pl = strlen(p);
	return len >= pl && memcmp(s, p, pl) == 0;
}

/*
 * A log line that was meant as a metric line: blanks, the word relish in
 * any case, then ':' ',' or blanks, then a name=value.  "RELISH a=1"
 * itself never gets here; "RELISHX a=1" is another word.
 */
static const char *near_miss(const char *s, size_t len)
{
	size_t i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	int lead = i > 0;
	if (len - i < 6 || strncasecmp(s + i, "relish", 6) != 0)
		return NULL;
	int capitals = memcmp(s + i, "RELISH", 6) == 0;
	i += 6;
	size_t sep = i;
	while (i < len && (s[i] == ':' || s[i] == ',' || s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i == sep || i == len || !is_name_start((unsigned char)s[i]))
		return NULL;
	while (i < len && is_name_char((unsigned char)s[i]))
		i++;
	if (i == len || s[i] != '=')
		return NULL;
	if (memchr(s + sep, ':', i - sep) || memchr(s + sep, ',', i - sep))
		return "the prefix is \"RELISH \" in capitals and one space, no colon or comma";
	if (!capitals)
		return "the prefix is \"RELISH \" in capitals";
	if (lead)
		return "a metric line starts at the beginning of the line";
	return "the prefix is \"RELISH \" followed by one space";
}

contract_kind contract_parse_line(const char *line, size_t len, contract_line *out)
{
	memset(out, 0, sizeof *out);
	if (len > 0 && line[len - 1] == '\r')
		len--;
	out->text = line;
	out->len = len;
	int metric = has_prefix(line, len, CONTRACT_METRIC_PREFIX);
	int done = has_prefix(line, len, CONTRACT_DONE_PREFIX) &&
		   (len == strlen(CONTRACT_DONE_PREFIX) || line[strlen(CONTRACT_DONE_PREFIX)] == ' ');
	int ready = has_prefix(line, len, CONTRACT_READY_LINE);
	if (!metric && !done && !ready) {
		const char *why = len <= CONTRACT_LINE_MAX ? near_miss(line, len) : NULL;
		if (why) {
			out->why = why;
			return out->kind = CONTRACT_NEAR;
		}
		return out->kind = CONTRACT_LOG;
	}
	if (len > CONTRACT_LINE_MAX)
		return bad(out, "line longer than the 64 KiB limit");
	if (ready) {
		if (len != strlen(CONTRACT_READY_LINE))
			return bad(out, "RELISH_READY takes nothing after it");
		return out->kind = CONTRACT_READY;
	}
	if (metric) {
		size_t pl = strlen(CONTRACT_METRIC_PREFIX);
		if (parse_pairs(line + pl, len - pl, out) == CONTRACT_BAD)
			return CONTRACT_BAD;
		if (out->n == 0)
			return bad(out, "a metric line needs at least one name=value");
		return out->kind = CONTRACT_METRICS;
	}
	size_t pl = strlen(CONTRACT_DONE_PREFIX);
	if (parse_pairs(line + pl, len - pl, out) == CONTRACT_BAD)
		return CONTRACT_BAD;
	if (out->n != 1 || strcmp(out->m[0].name, "to") != 0)
		return bad(out, "expected RELISH_DONE to=VALUE");
	out->done_to = out->m[0].value;
	out->n = 0;
	return out->kind = CONTRACT_DONE;
}

int contract_metric_get(const contract_line *l, const char *name, double *v)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->m[i].name, name) == 0) {
			*v = l->m[i].value;
			return 1;
		}
	return 0;
}

/* ---- argv substitution ----------------------------------------------- */

/*
 * Placeholders are expanded by the spec module's expander, the same code
 * that validated them when the spec was loaded, so a template that passed
 * `relish validate` expands the same way here.
 */
static int expand(const char *tmpl, const contract_vars *v, char **out, rl_err *err)
{
	char from[64], to[64];
	rl_value fv = {.type = VAL_FLOAT, .f = v->from}, tv = {.type = VAL_FLOAT, .f = v->to};
	value_format(&fv, from, sizeof from);
	value_format(&tv, to, sizeof to);
	spec_builtins b = {.trial_id = v->trial_id, .checkpoint_dir = v->checkpoint_dir,
			   .resource_from = from, .resource_to = to};
	int rc = spec_expand_config(tmpl, v->space, v->config, &b, out, err);
	return rc < 0 ? rc : 0;
}

int contract_subst(const char *tmpl, const contract_vars *v, char **out, rl_err *err)
{
	int rc = expand(tmpl, v, out, err);
	if (rc < 0 && err)
		rl_err_prefix(err, "argument \"%s\"", tmpl);
	return rc;
}

void contract_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

int contract_subst_argv(char *const *argv, const contract_vars *v, char ***out, rl_err *err)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **r = calloc(n + 1, sizeof *r);
	if (!r)
		return rl_err_set(err, RL_ENOMEM, "substituting the command");
	for (size_t i = 0; i < n; i++) {
		int rc = contract_subst(argv[i], v, &r[i], err);
		if (rc < 0) {
			contract_strv_free(r);
			return rc;
		}
	}
	*out = r;
	return 0;
}

/* ---- environment ------------------------------------------------------ */

void contract_param_env_name(const char *param, char *buf, size_t len)
{
	int n = snprintf(buf, len, "RELISH_PARAM_");
	if (n < 0 || (size_t)n >= len)
		return;
	size_t i = (size_t)n;
	for (const char *p = param; *p && i + 1 < len; p++)
		buf[i++] = isalnum((unsigned char)*p) ? (char)toupper((unsigned char)*p) : '_';
	buf[i] = '\0';
}

const char *contract_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* An environment under construction: entries "NAME=value", unique names. */
typedef struct envb {
	char **v;
	size_t n, cap;
	int oom;
} envb;

static void env_put(envb *e, const char *name, size_t nl, const char *value)
{
	if (e->oom)
		return;
	size_t vl = strlen(value);
	char *s = malloc(nl + vl + 2);
	if (!s) {
		e->oom = 1;
		return;
	}
	memcpy(s, name, nl);
	s[nl] = '=';
	memcpy(s + nl + 1, value, vl + 1);
	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->v[i], name, nl) == 0 && e->v[i][nl] == '=') {
			free(e->v[i]);
			e->v[i] = s;
			return;
		}
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 64;
		char **t = realloc(e->v, cap * sizeof *t);
		if (!t) {
			free(s);
			e->oom = 1;
			return;
		}
		e->v = t;
		e->cap = cap;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
}

static void env_set(envb *e, const char *name, const char *value)
{
	env_put(e, name, strlen(name), value);
}

static void env_setd(envb *e, const char *name, double d)
{
	char buf[64];
	rl_value v = {.type = VAL_FLOAT, .f = d};
	value_format(&v, buf, sizeof buf);
	env_set(e, name, buf);
}

static const char *mode_name(trial_mode m)
{
	switch (m) {
	case TRIAL_MODE_WARM:
		return "warm";
	case TRIAL_MODE_WORKER:
		return "worker";
	default:
		return "oneshot";
	}
}

int contract_env_build(char *const *parent, const env_var *spec_env, size_t n_spec_env,
		       const contract_vars *v, const env_var *extra, size_t n_extra,
		       char ***out, rl_err *err)
{
	envb e = {0};
	for (char *const *p = parent; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		if (eq && eq != *p)
			env_put(&e, *p, (size_t)(eq - *p), eq + 1);
	}
	double cpus = v->cpus > 0 ? v->cpus : 1;
	char threads[32];
	snprintf(threads, sizeof threads, "%d", cpus < 1 ? 1 : (int)floor(cpus));
	env_set(&e, "OMP_NUM_THREADS", threads);
	env_set(&e, "OPENBLAS_NUM_THREADS", threads);
	env_set(&e, "MKL_NUM_THREADS", threads);
	/* The spec's values hold placeholders as arguments do (docs/spec.md):
	 * the same expansion, the result set as is (no shell). */
	for (size_t i = 0; i < n_spec_env; i++) {
		char *val = NULL;
		int rc = expand(spec_env[i].value, v, &val, err);
		if (rc < 0) {
			contract_strv_free(e.v);
			return rl_err_prefix(err, "trial.env.%s", spec_env[i].name);
		}
		env_set(&e, spec_env[i].name, val);
		free(val);
	}

	env_set(&e, "RELISH_MODE", mode_name(v->mode));
	env_setd(&e, "RELISH_CPUS", cpus);
	env_set(&e, "RELISH_RESOURCE", v->resource_name ? v->resource_name : "epoch");
	if (v->gpu_memory_mib) {
		char buf[32];
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->gpu_memory_mib);
		env_set(&e, "RELISH_GPU_MEMORY_MIB", buf);
	}
	if (v->mode != TRIAL_MODE_WORKER) {
		if (v->trial_id)
			env_set(&e, "RELISH_TRIAL_ID", v->trial_id);
		if (v->checkpoint_dir)
			env_set(&e, "RELISH_CHECKPOINT_DIR", v->checkpoint_dir);
		env_setd(&e, "RELISH_RESOURCE_FROM", v->from);
		env_setd(&e, "RELISH_RESOURCE_TO", v->to);
		if (v->space && v->config) {
			char *json = config_to_json(v->space, v->config);
			if (!json)
				e.oom = 1;
			else
				env_set(&e, "RELISH_PARAMS", json);
			free(json);
			for (size_t i = 0; i < v->space->n && i < v->config->n; i++) {
				char name[256], val[4096];
				if (v->config->v[i].type == VAL_NONE)
					continue; /* inactive: absent, as from RELISH_PARAMS */
				contract_param_env_name(v->space->params[i].name, name, sizeof name);
				value_format(&v->config->v[i], val, sizeof val);
				env_set(&e, name, val);
			}
		}
	}
	for (size_t i = 0; i < n_extra; i++)
		env_set(&e, extra[i].name, extra[i].value);
	if (e.oom || !e.v) {
		contract_strv_free(e.v);
		return rl_err_set(err, RL_ENOMEM, "building the trial environment");
	}
	*out = e.v;
	return 0;
}

/* ---- warm / worker commands ------------------------------------------- */

char *contract_run_command(const char *trial_id, const char *params_json, double from,
			   double to, const char *checkpoint_dir)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "cmd", json_string("run"));
	if (trial_id)
		json_object_set_new(o, "trial_id", json_string(trial_id));
	if (params_json) {
		json_t *p = json_loads(params_json, 0, NULL);
		if (!p || !json_is_object(p)) {
			json_decref(p);
			json_decref(o);
			return NULL;
		}
		json_object_set_new(o, "params", p);
	}
	/* Whole resources as integers, so that trials may read them with int(). */
	json_object_set_new(o, "from", from == floor(from) && fabs(from) < 1e15 ? json_integer((json_int_t)from) : json_real(from));
	json_object_set_new(o, "to", to == floor(to) && fabs(to) < 1e15 ? json_integer((json_int_t)to) : json_real(to));
	if (checkpoint_dir)
		json_object_set_new(o, "checkpoint_dir", json_string(checkpoint_dir));
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!text)
		return NULL;
	size_t n = strlen(text);
	char *line = realloc(text, n + 2);
	if (!line) {
		free(text);
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	return line;
}

/* ---- classification ---------------------------------------------------- */

/* Messages that frameworks print when memory runs out.  Matched
 * case-sensitively as substrings of the log tail; "out of memory" covers
 * CUDA's "CUDA out of memory", cudaErrorMemoryAllocation's text and many C
 * programs. */
static const char *const oom_markers[] = {
	"CUDA out of memory",          /* PyTorch */
	"OutOfMemoryError",            /* torch.cuda.OutOfMemoryError, Java */
	"RESOURCE_EXHAUSTED",          /* TensorFlow, JAX/XLA */
	"cudaErrorMemoryAllocation",   /* CUDA runtime */
	"CUBLAS_STATUS_ALLOC_FAILED",  /* cuBLAS */
	"CUDNN_STATUS_ALLOC_FAILED",   /* cuDNN */
	"CUDA_ERROR_OUT_OF_MEMORY",    /* CUDA driver API */
	"out of memory",               /* generic, CUDA's error string */
	"std::bad_alloc",              /* C++ */
	"MemoryError",                 /* Python */
	"Cannot allocate memory",      /* strerror(ENOMEM) */
};

const char *contract_oom_marker(const char *text)
{
	if (!text)
		return NULL;
	for (size_t i = 0; i < sizeof oom_markers / sizeof oom_markers[0]; i++)
		if (strstr(text, oom_markers[i]))
			return oom_markers[i];
	return NULL;
}

seg_outcome contract_classify(const contract_exit *x)
{
	if (x->cancelled)
		return SEG_OUT_CANCELLED;
	if (x->timed_out)
		return SEG_OUT_TIMEOUT;
	if (x->mem_exceeded)
		return SEG_OUT_OOM;
	if (x->exited && x->exit_code == 0)
		return SEG_OUT_COMPLETED;
	if (contract_oom_marker(x->log_tail))
		return SEG_OUT_OOM;
	if (x->container && x->exited && x->exit_code == 137)
		return SEG_OUT_OOM;
	if (!x->exited)
		return SEG_OUT_SIGNALED;
	return SEG_OUT_FAILED;
}
