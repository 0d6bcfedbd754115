/*
 * trace.c - CSV trace loader (format in trace.h and docs/simulator.md) and
 * the synthetic scaled trace used by bench/bench_sim.c.
 *
 * The loader reads the header once, maps known column names (with the
 * Philly trace's aliases) to slots, and parses each row into a sim_job.
 * Experiments and profiles are interned through small open-addressing hash
 * tables so that a 14,000-row trace loads in a few milliseconds.
 */
#include "sim/trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "search/rng.h"

enum col {
	C_ID, C_SUBMIT, C_DUR, C_GPUS, C_MEM, C_UTIL, C_EXP, C_HPO, C_HINT,
	C_MODEL, C_DATASET, C_BS, C_AMP, C_USER, C__COUNT
};

/* Column names and aliases (first name is the documented one). */
static const struct {
	enum col col;
	const char *name;
} col_names[] = {
	{C_ID, "job_id"},
	{C_SUBMIT, "submit_time_s"},
	{C_DUR, "duration_s"},
	{C_GPUS, "num_gpus"},
	{C_MEM, "gpu_mem_mib"},
	{C_MEM, "gpu_mem_mib_avg"},
	{C_UTIL, "gpu_util_pct"},
	{C_UTIL, "gpu_util_pct_avg"},
	{C_EXP, "experiment"},
	{C_EXP, "burst_id"},
	{C_HPO, "hpo_like"},
	{C_HINT, "mem_hint_mib"},
	{C_MODEL, "model"},
	{C_MODEL, "profile_model"},
	{C_DATASET, "dataset"},
	{C_DATASET, "profile_dataset"},
	{C_BS, "batchsize"},
	{C_BS, "profile_batchsize"},
	{C_AMP, "amp"},
	{C_AMP, "profile_amp"},
	{C_USER, "user"},
};

static const char *col_doc[C__COUNT] = {
	"job_id", "submit_time_s", "duration_s", "num_gpus", "gpu_mem_mib",
	"gpu_util_pct", "experiment", "hpo_like", "mem_hint_mib", "model",
	"dataset", "batchsize", "amp", "user",
};

/* ---- interning ------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

typedef struct intern {
	int32_t *slot;  /* -1 empty, else index */
	size_t cap;     /* power of two */
} intern;

static int intern_init(intern *in, size_t want)
{
	in->cap = 64;
	while (in->cap < want * 2)
		in->cap <<= 1;
	in->slot = malloc(in->cap * sizeof *in->slot);
	if (!in->slot)
		return RL_ENOMEM;
	for (size_t i = 0; i < in->cap; i++)
		in->slot[i] = -1;
	return 0;
}

/* Find key (via key_of) or return the empty slot where it belongs. */
typedef const char *(*key_fn)(const sim_trace *t, int32_t idx, char *buf, size_t n);

static int32_t *intern_find(intern *in, const sim_trace *t, key_fn key_of,
			    const char *key)
{
	char buf[160];
	size_t i = (size_t)hash_str(key) & (in->cap - 1);
	for (;;) {
		if (in->slot[i] < 0 || !strcmp(key_of(t, in->slot[i], buf, sizeof buf), key))
			return &in->slot[i];
		i = (i + 1) & (in->cap - 1);
	}
}

static const char *exp_key(const sim_trace *t, int32_t idx, char *buf, size_t n)
{
	(void)buf;
	(void)n;
	return t->exps[idx].name;
}

static void profile_key_fmt(char *buf, size_t n, const char *model,
			    const char *dataset, int bs, int amp)
{
	snprintf(buf, n, "%s|%s|%d|%d", model, dataset, bs, amp);
}

static const char *user_key(const sim_trace *t, int32_t idx, char *buf, size_t n)
{
	(void)buf;
	(void)n;
	return t->users[idx].name;
}

static const char *profile_key(const sim_trace *t, int32_t idx, char *buf, size_t n)
{
	const sim_profile *p = &t->profiles[idx];
	profile_key_fmt(buf, n, p->model, p->dataset, p->batchsize, p->amp);
	return buf;
}

/* ---- field parsing --------------------------------------------------- */

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static int parse_long(const char *s, long long *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno)
		return -1;
	*out = v;
	return 0;
}

/* Split line (modified in place) on commas; returns the field count. */
static size_t split_csv(char *line, char **fields, size_t max)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		if (n < max)
			fields[n] = p;
		n++;
		char *c = strchr(p, ',');
		if (!c)
			break;
		*c = '\0';
		p = c + 1;
	}
	return n;
}

#define MAX_COLS 64

typedef struct loader {
	const char *name;
	sim_trace *t;
	size_t cap_jobs, cap_exps, cap_profiles, cap_users;
	intern exp_ix, prof_ix, user_ix;
	int idx[C__COUNT]; /* column index, -1 absent */
} loader;

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *p = realloc(*arr, nc * elem);
	if (!p)
		return RL_ENOMEM;
	*arr = p;
	*cap = nc;
	return 0;
}

static int intern_exp(loader *L, const char *name, int hpo, uint32_t *out)
{
	sim_trace *t = L->t;
	if (t->n_exps * 2 >= L->exp_ix.cap) { /* rehash into a table twice as big */
		free(L->exp_ix.slot);
		if (intern_init(&L->exp_ix, L->exp_ix.cap) < 0)
			return RL_ENOMEM;
		for (size_t i = 0; i < t->n_exps; i++)
			*intern_find(&L->exp_ix, t, exp_key, t->exps[i].name) = (int32_t)i;
	}
	int32_t *s = intern_find(&L->exp_ix, t, exp_key, name);
	if (*s < 0) {
		if (grow((void **)&t->exps, &L->cap_exps, t->n_exps + 1, sizeof *t->exps) < 0)
			return RL_ENOMEM;
		sim_exp *e = &t->exps[t->n_exps];
		memset(e, 0, sizeof *e);
		snprintf(e->name, sizeof e->name, "%s", name);
		e->hpo = hpo;
		*s = (int32_t)t->n_exps++;
	}
	t->exps[*s].n_jobs++;
	*out = (uint32_t)*s;
	return 0;
}

static int intern_user(loader *L, const char *name, uint32_t *out)
{
	sim_trace *t = L->t;
	if (t->n_users * 2 >= L->user_ix.cap) {
		free(L->user_ix.slot);
		if (intern_init(&L->user_ix, L->user_ix.cap) < 0)
			return RL_ENOMEM;
		for (size_t i = 0; i < t->n_users; i++)
			*intern_find(&L->user_ix, t, user_key, t->users[i].name) = (int32_t)i;
	}
	int32_t *s = intern_find(&L->user_ix, t, user_key, name);
	if (*s < 0) {
		if (grow((void **)&t->users, &L->cap_users, t->n_users + 1, sizeof *t->users) < 0)
			return RL_ENOMEM;
		snprintf(t->users[t->n_users].name, sizeof t->users[0].name, "%s", name);
		*s = (int32_t)t->n_users++;
	}
	*out = (uint32_t)*s;
	return 0;
}

static int intern_profile(loader *L, const char *model, const char *dataset,
			  int bs, int amp, int32_t *out)
{
	sim_trace *t = L->t;
	char key[160];
	profile_key_fmt(key, sizeof key, model, dataset, bs, amp);
	if (t->n_profiles * 2 >= L->prof_ix.cap) {
		free(L->prof_ix.slot);
		if (intern_init(&L->prof_ix, L->prof_ix.cap) < 0)
			return RL_ENOMEM;
		for (size_t i = 0; i < t->n_profiles; i++) {
			char k2[160];
			*intern_find(&L->prof_ix, t, profile_key,
				     profile_key(t, (int32_t)i, k2, sizeof k2)) = (int32_t)i;
		}
	}
	int32_t *s = intern_find(&L->prof_ix, t, profile_key, key);
	if (*s < 0) {
		if (grow((void **)&t->profiles, &L->cap_profiles, t->n_profiles + 1,
			 sizeof *t->profiles) < 0)
			return RL_ENOMEM;
		sim_profile *p = &t->profiles[t->n_profiles];
		memset(p, 0, sizeof *p);
		snprintf(p->model, sizeof p->model, "%s", model);
		snprintf(p->dataset, sizeof p->dataset, "%s", dataset);
		p->batchsize = bs;
		p->amp = amp;
		*s = (int32_t)t->n_profiles++;
	}
	*out = *s;
	return 0;
}

static int read_header(loader *L, char *line, rl_err *err)
{
	char *f[MAX_COLS];
	size_t n = split_csv(line, f, MAX_COLS);
	if (n > MAX_COLS)
		return rl_err_set(err, RL_EPARSE, "%s:1: more than %d columns", L->name, MAX_COLS);
	for (int c = 0; c < C__COUNT; c++)
		L->idx[c] = -1;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof col_names / sizeof col_names[0]; k++)
			if (!strcmp(f[i], col_names[k].name) && L->idx[col_names[k].col] < 0)
				L->idx[col_names[k].col] = (int)i;
	static const enum col required[] = {C_ID, C_SUBMIT, C_DUR, C_MEM};
	for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
		if (L->idx[required[k]] < 0)
			return rl_err_set(err, RL_EPARSE,
					  "%s:1: header: missing column '%s' (expected "
					  "job_id,submit_time_s,duration_s,gpu_mem_mib,...)",
					  L->name, col_doc[required[k]]);
	return 0;
}

#define BAD(col, what)                                                         \
	rl_err_set(err, RL_EPARSE, "%s:%zu: %s: expected %s, got \"%s\"", L->name, \
		   lineno, col_doc[col], what, field(col))

static int read_row(loader *L, char *line, size_t lineno, rl_err *err)
{
	char *f[MAX_COLS];
	size_t n = split_csv(line, f, MAX_COLS);
	if (n > MAX_COLS)
		n = MAX_COLS;
	const char *vals[C__COUNT];
	for (int c = 0; c < C__COUNT; c++)
		vals[c] = (L->idx[c] >= 0 && (size_t)L->idx[c] < n) ? f[L->idx[c]] : NULL;
#define field(c) (vals[c] ? vals[c] : "")
	for (int c = 0; c < C__COUNT; c++)
		if (vals[c] && strchr(vals[c], '"'))
			return rl_err_set(err, RL_EPARSE, "%s:%zu: %s: quoted fields are not supported",
					  L->name, lineno, col_doc[c]);
	if (L->idx[C_MEM] >= 0 && (size_t)L->idx[C_MEM] >= n)
		return rl_err_set(err, RL_EPARSE, "%s:%zu: expected at least %d fields, got %zu",
				  L->name, lineno, L->idx[C_MEM] + 1, n);

	sim_trace *t = L->t;
	if (grow((void **)&t->jobs, &L->cap_jobs, t->n_jobs + 1, sizeof *t->jobs) < 0)
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", L->name);
	sim_job *j = &t->jobs[t->n_jobs];
	memset(j, 0, sizeof *j);

	const char *id = field(C_ID);
	if (!*id || strlen(id) >= sizeof j->id)
		return BAD(C_ID, "a non-empty id of at most 39 characters");
	snprintf(j->id, sizeof j->id, "%s", id);
	if (parse_double(field(C_SUBMIT), &j->submit_s) < 0 || j->submit_s < 0)
		return BAD(C_SUBMIT, "a number of seconds >= 0");
	if (parse_double(field(C_DUR), &j->duration_s) < 0 || j->duration_s <= 0)
		return BAD(C_DUR, "a number of seconds > 0");
	long long v;
	j->num_gpus = 1;
	if (vals[C_GPUS]) {
		if (parse_long(vals[C_GPUS], &v) < 0 || v < 1 || v > 4096)
			return BAD(C_GPUS, "an integer from 1 to 4096");
		j->num_gpus = (int)v;
	}
	double d;
	if (parse_double(field(C_MEM), &d) < 0 || d <= 0 || d > 1e9)
		return BAD(C_MEM, "a positive number of MiB");
	j->mem_mib = (uint64_t)ceil(d);
	j->util_pct = 100.0;
	if (vals[C_UTIL] && *vals[C_UTIL]) {
		if (parse_double(vals[C_UTIL], &d) < 0 || d <= 0 || d > 100)
			return BAD(C_UTIL, "a percentage in (0, 100]");
		j->util_pct = d;
	}
	if (vals[C_HINT] && *vals[C_HINT]) {
		if (parse_double(vals[C_HINT], &d) < 0 || d <= 0 || d > 1e9)
			return BAD(C_HINT, "a positive number of MiB or nothing");
		j->mem_hint_mib = (uint64_t)ceil(d);
		j->has_hint = 1;
	}
	int hpo = 1;
	if (vals[C_HPO] && *vals[C_HPO]) {
		if (parse_long(vals[C_HPO], &v) < 0 || (v != 0 && v != 1))
			return BAD(C_HPO, "0 or 1");
		hpo = (int)v;
	}
	/* A row without an experiment, or outside an HPO-like burst, is an
	 * experiment of its own. */
	const char *exp = (vals[C_EXP] && *vals[C_EXP] && hpo) ? vals[C_EXP] : NULL;
	char own[64];
	if (!exp) {
		snprintf(own, sizeof own, "job:%s", j->id);
		exp = own;
		hpo = 0;
	}
	if (strlen(exp) >= sizeof t->exps[0].name)
		return BAD(C_EXP, "a name of at most 47 characters");
	if (intern_exp(L, exp, hpo, &j->exp) < 0)
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", L->name);

	const char *user = vals[C_USER] ? vals[C_USER] : "";
	if (strlen(user) >= sizeof t->users[0].name)
		return BAD(C_USER, "a name of at most 39 characters");
	if (intern_user(L, user, &j->user) < 0)
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", L->name);

	j->profile = -1;
	if (vals[C_MODEL] && *vals[C_MODEL]) {
		int bs = 0, amp = 0;
		if (vals[C_BS] && *vals[C_BS]) {
			if (parse_long(vals[C_BS], &v) < 0 || v < 0 || v > 1 << 24)
				return BAD(C_BS, "a non-negative integer");
			bs = (int)v;
		}
		if (vals[C_AMP] && *vals[C_AMP]) {
			if (parse_long(vals[C_AMP], &v) < 0 || (v != 0 && v != 1))
				return BAD(C_AMP, "0 or 1");
			amp = (int)v;
		}
		if (strlen(vals[C_MODEL]) >= 32 || (vals[C_DATASET] && strlen(vals[C_DATASET]) >= 32))
			return BAD(C_MODEL, "a model and dataset name of at most 31 characters");
		if (intern_profile(L, vals[C_MODEL], vals[C_DATASET] ? vals[C_DATASET] : "",
				   bs, amp, &j->profile) < 0)
			return rl_err_set(err, RL_ENOMEM, "%s: out of memory", L->name);
	}
#undef field
	t->n_jobs++;
	return 0;
}

int sim_trace_parse(const char *text, size_t len, const char *name,
		    sim_trace **out, rl_err *err)
{
	loader L;
	memset(&L, 0, sizeof L);
	L.name = name ? name : "<trace>";
	L.t = calloc(1, sizeof *L.t);
	char *buf = malloc(len + 1);
	int rc = RL_ENOMEM;
	if (!L.t || !buf || intern_init(&L.exp_ix, 256) < 0 || intern_init(&L.prof_ix, 64) < 0 ||
	    intern_init(&L.user_ix, 64) < 0) {
		rl_err_set(err, rc, "%s: out of memory", L.name);
		goto fail;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	size_t lineno = 0;
	int have_header = 0;
	for (char *p = buf; p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		size_t l = strlen(p);
		if (l && p[l - 1] == '\r')
			p[--l] = '\0';
		if (l && p[0] != '#') {
			rc = have_header ? read_row(&L, p, lineno, err) : read_header(&L, p, err);
			if (rc < 0)
				goto fail;
			have_header = 1;
		}
		p = nl ? nl + 1 : NULL;
	}
	if (!L.t->n_jobs) {
		rc = rl_err_set(err, RL_EPARSE, "%s: no jobs (expected a header row and at least one job)",
				L.name);
		goto fail;
	}
	free(buf);
	free(L.exp_ix.slot);
	free(L.prof_ix.slot);
	free(L.user_ix.slot);
	*out = L.t;
	return 0;
fail:
	free(buf);
	free(L.exp_ix.slot);
	free(L.prof_ix.slot);
	free(L.user_ix.slot);
	sim_trace_free(L.t);
	return rc;
}

int sim_trace_load(const char *path, sim_trace **out, rl_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rl_err_sys(err, RL_EIO, errno, "opening trace %s", path);
	char *text = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 65536 > cap) {
			cap = cap ? cap * 2 : 1 << 20;
			char *p = realloc(text, cap);
			if (!p) {
				free(text);
				fclose(f);
				return rl_err_set(err, RL_ENOMEM, "reading trace %s: out of memory", path);
			}
			text = p;
		}
		size_t n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(text);
		return rl_err_set(err, RL_EIO, "reading trace %s: read error", path);
	}
	int rc = sim_trace_parse(text ? text : "", len, path, out, err);
	free(text);
	return rc;
}

void sim_trace_free(sim_trace *t)
{
	if (!t)
		return;
	free(t->jobs);
	free(t->exps);
	free(t->profiles);
	free(t->users);
	free(t);
}

int sim_trace_find_profile(const sim_trace *t, const char *model,
			   const char *dataset, int batchsize, int amp)
{
	for (size_t i = 0; i < t->n_profiles; i++) {
		const sim_profile *p = &t->profiles[i];
		if (p->batchsize == batchsize && p->amp == amp && !strcmp(p->model, model) &&
		    !strcmp(p->dataset, dataset))
			return (int)i;
	}
	return -1;
}

int sim_trace_synthetic(const sim_trace *t, int factor, sim_synth_mode mode, uint64_t seed,
			sim_trace **out, rl_err *err)
{
	if (factor < 1 || !t->n_jobs)
		return rl_err_set(err, RL_EINVAL, "synthetic trace: factor must be >= 1");
	if (mode != SIM_SYNTH_DENSER && mode != SIM_SYNTH_LONGER)
		return rl_err_set(err, RL_EINVAL, "synthetic trace: unknown mode %d", (int)mode);
	/* Jobs of each experiment, and each experiment's first arrival. */
	size_t *start = calloc(t->n_exps + 1, sizeof *start);
	size_t *order = malloc(t->n_jobs * sizeof *order);
	double *first = malloc(t->n_exps * sizeof *first);
	sim_trace *s = calloc(1, sizeof *s);
	size_t n_out_exps = t->n_exps * (size_t)factor;
	if (s) {
		s->jobs = malloc(t->n_jobs * (size_t)factor * 2 * sizeof *s->jobs);
		s->exps = malloc(n_out_exps * sizeof *s->exps);
		s->profiles = malloc((t->n_profiles ? t->n_profiles : 1) * sizeof *s->profiles);
		s->users = malloc((t->n_users ? t->n_users : 1) * sizeof *s->users);
	}
	if (!start || !order || !first || !s || !s->jobs || !s->exps || !s->profiles || !s->users) {
		free(start);
		free(order);
		free(first);
		sim_trace_free(s);
		return rl_err_set(err, RL_ENOMEM, "synthetic trace: out of memory");
	}
	double t0 = INFINITY, t1 = -INFINITY;
	for (size_t e = 0; e < t->n_exps; e++)
		first[e] = INFINITY;
	for (size_t i = 0; i < t->n_jobs; i++) {
		const sim_job *j = &t->jobs[i];
		start[j->exp + 1]++;
		if (j->submit_s < first[j->exp])
			first[j->exp] = j->submit_s;
		t0 = fmin(t0, j->submit_s);
		t1 = fmax(t1, j->submit_s);
	}
	for (size_t e = 0; e < t->n_exps; e++)
		start[e + 1] += start[e];
	size_t *fill = calloc(t->n_exps, sizeof *fill);
	if (!fill) {
		free(start);
		free(order);
		free(first);
		sim_trace_free(s);
		return rl_err_set(err, RL_ENOMEM, "synthetic trace: out of memory");
	}
	for (size_t i = 0; i < t->n_jobs; i++)
		order[start[t->jobs[i].exp] + fill[t->jobs[i].exp]++] = i;
	free(fill);
	if (t->n_profiles)
		memcpy(s->profiles, t->profiles, t->n_profiles * sizeof *s->profiles);
	s->n_profiles = t->n_profiles;
	if (t->n_users)
		memcpy(s->users, t->users, t->n_users * sizeof *s->users);
	s->n_users = t->n_users;

	rl_rng rng;
	rng_seed(&rng, seed);
	double span = (t1 - t0) * (mode == SIM_SYNTH_LONGER ? (double)factor : 1.0);
	size_t cap_jobs = t->n_jobs * (size_t)factor * 2;
	for (size_t k = 0; k < n_out_exps; k++) {
		/* Each experiment exactly `factor` times, not drawn with
		 * replacement: experiment sizes are heavy-tailed, so a draw
		 * of x1 can miss the largest ones and a draw of x10 repeat
		 * them, and the series would compare different mixes. */
		size_t e = k % t->n_exps;
		double at = t0 + rng_uniform(&rng) * span;
		size_t nj = start[e + 1] - start[e];
		if (s->n_jobs + nj > cap_jobs) {
			cap_jobs = (s->n_jobs + nj) * 2;
			sim_job *p = realloc(s->jobs, cap_jobs * sizeof *p);
			if (!p) {
				free(start);
				free(order);
				free(first);
				sim_trace_free(s);
				return rl_err_set(err, RL_ENOMEM, "synthetic trace: out of memory");
			}
			s->jobs = p;
		}
		sim_exp *x = &s->exps[s->n_exps];
		*x = t->exps[e];
		snprintf(x->name, sizeof x->name, "s%zu:%.40s", k, t->exps[e].name);
		for (size_t q = start[e]; q < start[e + 1]; q++) {
			sim_job *j = &s->jobs[s->n_jobs++];
			*j = t->jobs[order[q]];
			snprintf(j->id, sizeof j->id, "s%zu:%.30s", k, t->jobs[order[q]].id);
			j->submit_s = at + (t->jobs[order[q]].submit_s - first[e]);
			j->exp = (uint32_t)s->n_exps;
		}
		s->n_exps++;
	}
	free(start);
	free(order);
	free(first);
	*out = s;
	return 0;
}
