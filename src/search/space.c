/*
 * space.c - parameter values, spaces, configurations and the unit-cube view
 * that every sampler shares.
 */
#include "search/space.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void value_fini(rl_value *v)
{
	if (!v)
		return;
	free(v->str);
	memset(v, 0, sizeof *v);
}

int value_copy(rl_value *dst, const rl_value *src, rl_err *err)
{
	rl_value tmp = *src;
	if (src->type == VAL_STR) {
		tmp.str = strdup(src->str ? src->str : "");
		if (!tmp.str)
			return rl_err_set(err, RL_ENOMEM, "copying a value");
	} else {
		tmp.str = NULL;
	}
	*dst = tmp;
	return 0;
}

double value_as_double(const rl_value *v)
{
	switch (v->type) {
	case VAL_FLOAT:
		return v->f;
	case VAL_INT:
	case VAL_BOOL:
		return (double)v->i;
	default:
		return NAN;
	}
}

int value_equal(const rl_value *a, const rl_value *b)
{
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case VAL_FLOAT:
		return a->f == b->f;
	case VAL_INT:
	case VAL_BOOL:
		return a->i == b->i;
	case VAL_STR:
		return strcmp(a->str ? a->str : "", b->str ? b->str : "") == 0;
	default:
		return 1;
	}
}

int value_format(const rl_value *v, char *buf, size_t len)
{
	switch (v->type) {
	case VAL_FLOAT: {
		/* Shortest text that reads back to the same double. */
		for (int prec = 6; prec <= 17; prec++) {
			int n = snprintf(buf, len, "%.*g", prec, v->f);
			if (n < 0 || (size_t)n >= len || strtod(buf, NULL) == v->f)
				return n;
		}
		return snprintf(buf, len, "%.17g", v->f);
	}
	case VAL_INT:
		return snprintf(buf, len, "%lld", (long long)v->i);
	case VAL_BOOL:
		return snprintf(buf, len, "%s", v->i ? "true" : "false");
	case VAL_STR:
		return snprintf(buf, len, "%s", v->str ? v->str : "");
	default:
		return snprintf(buf, len, "%s", "");
	}
}

void param_def_fini(param_def *p)
{
	if (!p)
		return;
	free(p->name);
	for (size_t i = 0; i < p->n_choices; i++)
		value_fini(&p->choices[i]);
	free(p->choices);
	value_fini(&p->fixed);
	for (size_t i = 0; i < p->n_when; i++)
		value_fini(&p->when[i]);
	free(p->when);
	value_fini(&p->dflt);
	memset(p, 0, sizeof *p);
}

void space_fini(space *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		param_def_fini(&s->params[i]);
	free(s->params);
	s->params = NULL;
	s->n = 0;
}

static int param_def_copy(param_def *dst, const param_def *src, rl_err *err)
{
	param_def t = *src;
	t.name = NULL;
	t.choices = NULL;
	t.fixed.str = NULL;
	t.when = NULL;
	t.n_when = 0;
	t.dflt.str = NULL;
	size_t n_choices = t.n_choices;
	t.n_choices = 0;
	t.name = strdup(src->name ? src->name : "");
	if (!t.name)
		goto nomem;
	if (n_choices) {
		t.choices = calloc(n_choices, sizeof *t.choices);
		if (!t.choices)
			goto nomem;
		for (size_t i = 0; i < n_choices; i++) {
			if (value_copy(&t.choices[i], &src->choices[i], err) < 0)
				goto nomem;
			t.n_choices = i + 1;
		}
	}
	if (src->n_when) {
		t.when = calloc(src->n_when, sizeof *t.when);
		if (!t.when)
			goto nomem;
		for (size_t i = 0; i < src->n_when; i++) {
			if (value_copy(&t.when[i], &src->when[i], err) < 0)
				goto nomem;
			t.n_when = i + 1;
		}
	}
	if (value_copy(&t.fixed, &src->fixed, err) < 0)
		goto nomem;
	if (value_copy(&t.dflt, &src->dflt, err) < 0) {
		t.dflt = (rl_value){0};
		goto nomem;
	}
	*dst = t;
	return 0;
nomem:
	param_def_fini(&t);
	return rl_err_set(err, RL_ENOMEM, "copying parameter %s", src->name);
}

int space_copy(space *dst, const space *src, rl_err *err)
{
	space t = {0};
	if (src->n) {
		t.params = calloc(src->n, sizeof *t.params);
		if (!t.params)
			return rl_err_set(err, RL_ENOMEM, "copying a space");
	}
	for (size_t i = 0; i < src->n; i++) {
		if (param_def_copy(&t.params[i], &src->params[i], err) < 0) {
			space_fini(&t);
			return err ? err->code : RL_ENOMEM;
		}
		t.n = i + 1;
	}
	*dst = t;
	return 0;
}

int space_find(const space *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->params[i].name, name))
			return (int)i;
	return -1;
}

int space_active(const space *s, size_t p, const config *c)
{
	const param_def *d = &s->params[p];
	if (!d->n_when)
		return 1;
	if (d->parent >= p || d->parent >= c->n)
		return 0;
	const rl_value *v = &c->v[d->parent];
	for (size_t i = 0; i < d->n_when; i++)
		if (value_equal(&d->when[i], v))
			return 1;
	return 0;
}

int space_has_conditions(const space *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->params[i].n_when)
			return 1;
	return 0;
}

int config_init(config *c, size_t n, rl_err *err)
{
	c->n = n;
	c->v = n ? calloc(n, sizeof *c->v) : NULL;
	if (n && !c->v)
		return rl_err_set(err, RL_ENOMEM, "allocating a configuration");
	return 0;
}

void config_fini(config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		value_fini(&c->v[i]);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

int config_copy(config *dst, const config *src, rl_err *err)
{
	config t;
	if (config_init(&t, src->n, err) < 0)
		return err ? err->code : RL_ENOMEM;
	for (size_t i = 0; i < src->n; i++)
		if (value_copy(&t.v[i], &src->v[i], err) < 0) {
			config_fini(&t);
			return RL_ENOMEM;
		}
	*dst = t;
	return 0;
}

static int param_is_log(const param_def *p)
{
	return p->kind == PARAM_LOGUNIFORM || (p->kind == PARAM_INT && p->log);
}

double space_to_unit(const param_def *p, const rl_value *v)
{
	switch (p->kind) {
	case PARAM_UNIFORM:
	case PARAM_LOGUNIFORM:
	case PARAM_INT: {
		double x = value_as_double(v);
		double lo = p->low, hi = p->high;
		if (p->kind == PARAM_INT) {
			/* Integers own the band [k - 0.5, k + 0.5]. */
			lo -= 0.5;
			hi += 0.5;
		}
		if (param_is_log(p)) {
			if (p->kind == PARAM_INT) {
				lo = p->low - 0.5 > 0 ? p->low - 0.5 : p->low * 0.5;
				hi = p->high + 0.5;
			}
			x = log(x);
			lo = log(lo);
			hi = log(hi);
		}
		if (hi <= lo)
			return 0.0;
		double u = (x - lo) / (hi - lo);
		return u < 0 ? 0 : u >= 1 ? nextafter(1.0, 0.0) : u;
	}
	case PARAM_CHOICE:
		for (size_t i = 0; i < p->n_choices; i++)
			if (value_equal(&p->choices[i], v))
				return ((double)i + 0.5) / (double)p->n_choices;
		return 0.0;
	case PARAM_FIXED:
	default:
		return 0.0;
	}
}

int space_from_unit(const param_def *p, double u, rl_value *out, rl_err *err)
{
	if (u < 0)
		u = 0;
	if (u > 1)
		u = 1;
	rl_value v = {0};
	switch (p->kind) {
	case PARAM_UNIFORM:
	case PARAM_LOGUNIFORM: {
		double x;
		if (p->kind == PARAM_LOGUNIFORM)
			x = exp(log(p->low) + u * (log(p->high) - log(p->low)));
		else
			x = p->low + u * (p->high - p->low);
		if (p->step > 0)
			x = p->low + round((x - p->low) / p->step) * p->step;
		if (x < p->low)
			x = p->low;
		if (x > p->high)
			x = p->high;
		v.type = VAL_FLOAT;
		v.f = x;
		break;
	}
	case PARAM_INT: {
		double x;
		if (p->log) {
			double lo = p->low - 0.5 > 0 ? p->low - 0.5 : p->low * 0.5;
			double hi = p->high + 0.5;
			x = exp(log(lo) + u * (log(hi) - log(lo)));
		} else {
			x = (p->low - 0.5) + u * (p->high - p->low + 1.0);
		}
		double k = round(x);
		if (p->step > 1)
			k = p->low + round((k - p->low) / p->step) * p->step;
		if (k < p->low)
			k = p->low;
		if (k > p->high)
			k = p->high;
		v.type = VAL_INT;
		v.i = (int64_t)k;
		break;
	}
	case PARAM_CHOICE: {
		size_t i = (size_t)(u * (double)p->n_choices);
		if (i >= p->n_choices)
			i = p->n_choices - 1;
		return value_copy(out, &p->choices[i], err);
	}
	case PARAM_FIXED:
		return value_copy(out, &p->fixed, err);
	}
	*out = v;
	return 0;
}

json_t *value_to_json(const rl_value *v)
{
	switch (v->type) {
	case VAL_FLOAT:
		return json_real(v->f);
	case VAL_INT:
		return json_integer((json_int_t)v->i);
	case VAL_BOOL:
		return json_boolean(v->i);
	case VAL_STR:
		return json_string(v->str ? v->str : "");
	default:
		return json_null();
	}
}

char *config_to_json(const space *s, const config *c)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	for (size_t i = 0; i < c->n && i < s->n; i++)
		if (c->v[i].type != VAL_NONE)
			json_object_set_new(o, s->params[i].name, value_to_json(&c->v[i]));
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	return text;
}

int config_from_json(const space *s, const char *text, config *c, rl_err *err)
{
	json_error_t jerr;
	json_t *o = json_loads(text, 0, &jerr);
	if (!o || !json_is_object(o)) {
		json_decref(o);
		return rl_err_set(err, RL_EPARSE, "parameters: %s", o ? "not an object" : jerr.text);
	}
	config t;
	if (config_init(&t, s->n, err) < 0) {
		json_decref(o);
		return RL_ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; i < s->n && rc == 0; i++) {
		json_t *j = json_object_get(o, s->params[i].name);
		rl_value *v = &t.v[i];
		int active = space_active(s, i, &t);
		if (!j && !active) {
			continue; /* inactive: VAL_NONE */
		} else if (!j) {
			rc = rl_err_set(err, RL_EPARSE, "parameters: missing %s", s->params[i].name);
		} else if (!active) {
			rc = rl_err_set(err, RL_EPARSE, "parameters: %s is given but inactive",
					s->params[i].name);
		} else if (json_is_integer(j)) {
			v->type = VAL_INT;
			v->i = json_integer_value(j);
			if (s->params[i].kind == PARAM_UNIFORM || s->params[i].kind == PARAM_LOGUNIFORM) {
				v->type = VAL_FLOAT;
				v->f = (double)v->i;
				v->i = 0;
			}
		} else if (json_is_real(j)) {
			v->type = VAL_FLOAT;
			v->f = json_real_value(j);
		} else if (json_is_boolean(j)) {
			v->type = VAL_BOOL;
			v->i = json_is_true(j);
		} else if (json_is_string(j)) {
			v->type = VAL_STR;
			v->str = strdup(json_string_value(j));
			if (!v->str)
				rc = rl_err_set(err, RL_ENOMEM, "parameters");
		} else {
			rc = rl_err_set(err, RL_EPARSE, "parameters: %s has an unsupported type",
					s->params[i].name);
		}
	}
	json_decref(o);
	if (rc < 0) {
		config_fini(&t);
		return rc;
	}
	*c = t;
	return 0;
}
