/*
 * model.c - co-location slowdown (see model.h for the rules and
 * docs/simulator.md for the sources).
 *
 * The measured pairs are kept as a dense n_profiles x n_profiles matrix of
 * speeds (NaN = not measured), so a lookup during the event loop is one
 * index; the trace has at most a few hundred profiles.
 */
#include "sim/model.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_model {
	const sim_trace *t;
	size_t np;
	float *pair;   /* pair[a * np + b]: speed of profile a beside b, NaN unknown */
	size_t n_pairs;
};

enum { F_MODEL1 = 1, F_DATASET1, F_GPUS1, F_BS1, F_AMP1, F_SPEED1,
       F_MODEL2, F_DATASET2, F_GPUS2, F_BS2, F_AMP2, F_SPEED2, F_MIN_FIELDS };

/* One data line of the pair table (NUL-terminated, no newline). */
static int read_pair(sim_model *m, char *line, const char *name, size_t lineno, rl_err *err)
{
	char *fl[F_MIN_FIELDS + 8];
	size_t n = 0;
	for (char *p = line; p && n < sizeof fl / sizeof fl[0];) {
		fl[n++] = p;
		char *c = strchr(p, ',');
		if (c)
			*c = '\0';
		p = c ? c + 1 : NULL;
	}
	if (n < F_MIN_FIELDS)
		return rl_err_set(err, RL_EPARSE, "%s:%zu: expected %d fields, got %zu", name, lineno,
				  F_MIN_FIELDS, n);
	char *end1, *end2, *e3, *e4, *e5, *e6;
	long bs1 = strtol(fl[F_BS1], &e3, 10), amp1 = strtol(fl[F_AMP1], &e4, 10);
	long bs2 = strtol(fl[F_BS2], &e5, 10), amp2 = strtol(fl[F_AMP2], &e6, 10);
	double s1 = strtod(fl[F_SPEED1], &end1), s2 = strtod(fl[F_SPEED2], &end2);
	if (e3 == fl[F_BS1] || e4 == fl[F_AMP1] || e5 == fl[F_BS2] || e6 == fl[F_AMP2] || *e3 ||
	    *e4 || *e5 || *e6 || *end1 || *end2 || !(s1 > 0) || !(s2 > 0) || bs1 < INT_MIN ||
	    bs1 > INT_MAX || bs2 < INT_MIN || bs2 > INT_MAX || amp1 < INT_MIN || amp1 > INT_MAX ||
	    amp2 < INT_MIN || amp2 > INT_MAX)
		return rl_err_set(err, RL_EPARSE,
				  "%s:%zu: batchsize/amp/speed: expected integers and positive speeds",
				  name, lineno);
	int a = sim_trace_find_profile(m->t, fl[F_MODEL1], fl[F_DATASET1], (int)bs1, (int)amp1);
	int b = sim_trace_find_profile(m->t, fl[F_MODEL2], fl[F_DATASET2], (int)bs2, (int)amp2);
	if (a < 0 || b < 0)
		return 0; /* configuration not in this trace */
	/* First measurement of a pair wins; speeds above 1 are noise. */
	float *ab = &m->pair[(size_t)a * m->np + (size_t)b];
	float *ba = &m->pair[(size_t)b * m->np + (size_t)a];
	if (isnan(*ab)) {
		*ab = (float)fmin(1.0, s1);
		m->n_pairs++;
	}
	if (isnan(*ba) && a != b) {
		*ba = (float)fmin(1.0, s2);
		m->n_pairs++;
	}
	return 0;
}

/* The pair table from text[0..len) (a copy is cut into lines: any length,
 * "\n" or "\r\n", a NUL ends the text). */
static int parse_pairs(sim_model *m, const char *text, size_t len, const char *name,
		       rl_err *err)
{
	char *buf = malloc(len + 1);
	if (!buf)
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", name);
	memcpy(buf, text, len);
	buf[len] = '\0';
	size_t lineno = 0;
	int rc = 0;
	for (char *p = buf; p && *p && rc == 0;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		size_t l = strlen(p);
		if (l && p[l - 1] == '\r')
			p[--l] = '\0';
		if (lineno == 1) { /* header; check it is the documented layout */
			if (!strstr(p, "model1") || !strstr(p, "speed2"))
				rc = rl_err_set(err, RL_EPARSE,
						"%s:1: header: expected ,model1,dataset1,gpu_num1,"
						"batchsize1,amp1,speed1,model2,...,speed2", name);
		} else if (l) {
			rc = read_pair(m, p, name, lineno, err);
		}
		p = nl ? nl + 1 : NULL;
	}
	free(buf);
	return rc;
}

static int model_alloc(const sim_trace *t, sim_model **out, rl_err *err)
{
	sim_model *m = calloc(1, sizeof *m);
	if (!m)
		return rl_err_set(err, RL_ENOMEM, "co-location model: out of memory");
	m->t = t;
	m->np = t->n_profiles;
	if (m->np) {
		m->pair = malloc(m->np * m->np * sizeof *m->pair);
		if (!m->pair) {
			free(m);
			return rl_err_set(err, RL_ENOMEM, "co-location model: out of memory");
		}
		for (size_t i = 0; i < m->np * m->np; i++)
			m->pair[i] = NAN;
	}
	*out = m;
	return 0;
}

int sim_model_parse(const sim_trace *t, const char *text, size_t len, const char *name,
		    sim_model **out, rl_err *err)
{
	sim_model *m;
	int rc = model_alloc(t, &m, err);
	if (rc < 0)
		return rc;
	if (m->np && (rc = parse_pairs(m, text, len, name ? name : "<co-location table>", err)) < 0) {
		sim_model_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

int sim_model_new(const sim_trace *t, const char *colocate_path, sim_model **out,
		  rl_err *err)
{
	if (!colocate_path || !t->n_profiles)
		return model_alloc(t, out, err);
	FILE *f = fopen(colocate_path, "rb");
	if (!f)
		return rl_err_sys(err, RL_EIO, errno, "opening co-location table %s", colocate_path);
	char *text = NULL;
	size_t len = 0, cap = 0;
	int bad = 0;
	for (;;) {
		if (len + 65536 > cap) {
			size_t nc = cap ? cap * 2 : 1 << 16;
			char *p = realloc(text, nc);
			if (!p) {
				bad = 1;
				break;
			}
			text = p;
			cap = nc;
		}
		size_t n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	bad |= ferror(f);
	fclose(f);
	if (bad) {
		free(text);
		return rl_err_set(err, RL_EIO, "reading co-location table %s", colocate_path);
	}
	int rc = sim_model_parse(t, text ? text : "", len, colocate_path, out, err);
	free(text);
	return rc;
}

void sim_model_free(sim_model *m)
{
	if (!m)
		return;
	free(m->pair);
	free(m);
}

size_t sim_model_pair_count(const sim_model *m)
{
	return m->n_pairs;
}

double sim_model_measured(const sim_model *m, int pa, int pb)
{
	if (pa < 0 || pb < 0 || (size_t)pa >= m->np || (size_t)pb >= m->np)
		return NAN;
	return m->pair[(size_t)pa * m->np + (size_t)pb];
}

double sim_model_pair(const sim_model *m, size_t a, size_t b)
{
	const sim_job *ja = &m->t->jobs[a], *jb = &m->t->jobs[b];
	if (ja->profile >= 0 && jb->profile >= 0) {
		float s = m->pair[(size_t)ja->profile * m->np + (size_t)jb->profile];
		if (!isnan(s))
			return s;
	}
	return fmin(1.0, 100.0 / (ja->util_pct + jb->util_pct));
}

double sim_model_speed(const sim_model *m, size_t a, const size_t *others, size_t n)
{
	if (n == 0)
		return 1.0;
	if (n == 1)
		return sim_model_pair(m, a, others[0]);
	double prod = 1.0, util = m->t->jobs[a].util_pct;
	for (size_t i = 0; i < n; i++) {
		prod *= sim_model_pair(m, a, others[i]);
		util += m->t->jobs[others[i]].util_pct;
	}
	return fmin(prod, fmin(1.0, 100.0 / util));
}

double sim_model_max_compute(const sim_model *m)
{
	/* Largest utilisation of each profile (jobs of one profile normally
	 * agree; the largest keeps the figure an upper bound). */
	double *u = calloc(m->np ? m->np : 1, sizeof *u);
	if (!u)
		return INFINITY; /* no bound rather than a wrong one */
	for (size_t j = 0; j < m->t->n_jobs; j++) {
		const sim_job *job = &m->t->jobs[j];
		if (job->profile >= 0 && job->util_pct > u[job->profile])
			u[job->profile] = job->util_pct;
	}
	double best = 100;
	for (size_t a = 0; a < m->np; a++)
		for (size_t b = 0; b < m->np; b++) {
			float sab = m->pair[a * m->np + b], sba = m->pair[b * m->np + a];
			if (isnan(sab) && isnan(sba))
				continue;
			double fb = fmin(1.0, 100.0 / (u[a] + u[b]));
			double c = u[a] * (isnan(sab) ? fb : sab) + u[b] * (isnan(sba) ? fb : sba);
			best = fmax(best, c);
		}
	free(u);
	return best;
}
