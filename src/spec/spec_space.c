/*
 * spec_space.c - reads search.space into a `space` (search/space.h).
 *
 * A parameter is written in full, { type: uniform, low: 1e-4, high: 0.1 },
 * or in two short forms: a list is a choice and a scalar is fixed.  Each
 * type has its own keys (table below); a key of another type is an error
 * that names the keys the type does take.  The parser also fills
 * grid_points for every parameter with the number of values a grid search
 * takes from it, so that the grid sampler and the default grid max_trials
 * agree (docs/spec.md, "Grid search").
 */
#include "search/sampler.h"
#include "spec/spec_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const spec_param_kind_names[5] = {"uniform", "loguniform", "int", "choice", "fixed"};

static const char *const param_keys_all[] = {"type",   "low",   "high", "log",    "step",
					      "grid_points", "values", "value", "when", "default"};
#define N_PARAM_KEYS (sizeof param_keys_all / sizeof param_keys_all[0])

/* One-line help per key, parallel to param_keys_all (docs/spec.md). */
static const char *const param_keys_help[N_PARAM_KEYS] = {
	"uniform | loguniform | int | choice | fixed (required in the long form)",
	"lower bound (uniform, loguniform: > 0, int: log needs >= 1)",
	"upper bound, > low",
	"int: sample on a log scale (default false)",
	"uniform, int: quantisation step, > 0 and <= high - low",
	"grid search: values taken from a continuous (or large int) range, default 5",
	"choice: non-empty list of numbers or strings, no duplicates",
	"fixed: the value (number or string)",
	"active only when an earlier choice parameter has a value: {model: cnn} or {model: [cnn, vit]}",
	"with when: the {name} text while the parameter is inactive (a number or string)",
};

/* Keys every type takes (conditions). */
static int key_common(const char *key)
{
	return !strcmp(key, "when") || !strcmp(key, "default");
}

/* Keys each type takes, indexed by param_kind. */
static const char *const param_keys[5][6] = {
	[PARAM_UNIFORM] = {"type", "low", "high", "step", "grid_points"},
	[PARAM_LOGUNIFORM] = {"type", "low", "high", "grid_points"},
	[PARAM_INT] = {"type", "low", "high", "log", "step", "grid_points"},
	[PARAM_CHOICE] = {"type", "values"},
	[PARAM_FIXED] = {"type", "value"},
};

/* Integer ranges up to this many values are enumerated whole by grid search
 * unless grid_points is given. */
#define GRID_ENUM_MAX 100
#define GRID_POINTS_DEFAULT 5

static size_t count_keys(const char *const *keys)
{
	size_t n = 0;
	while (n < 6 && keys[n])
		n++;
	return n;
}

static int key_allowed(param_kind k, const char *key)
{
	for (size_t i = 0; i < count_keys(param_keys[k]); i++)
		if (!strcmp(param_keys[k][i], key))
			return 1;
	return 0;
}

/* Read one optional/required child `key` of map m with reader fn. */
static int child_number(sx *x, const node *m, const char *key, int is_int, int required, double *out,
			const node **at)
{
	const node *v = node_get(m, key);
	if (!v) {
		if (required)
			return sx_fail(x, m, "missing required key \"%s\"", key);
		return 0;
	}
	size_t saved = sx_push(x, key);
	int rc;
	if (is_int) {
		int64_t i;
		rc = sx_int(x, v, -(INT64_C(1) << 53), INT64_C(1) << 53, "an integer", &i);
		if (rc == 0)
			*out = (double)i;
	} else {
		rc = sx_number(x, v, NULL, out);
	}
	sx_pop(x, saved);
	if (at)
		*at = v;
	return rc;
}

static int check_range(sx *x, param_def *p, const node *lo_at)
{
	int is_int = p->kind == PARAM_INT;
	char got[96];
	size_t saved = sx_push(x, "low");
	int rc = 0;
	if (!(p->low < p->high))
		rc = sx_fail(x, lo_at, "expected %s < high (%.15g), got %s", is_int ? "an integer" : "a number",
			     p->high, sx_got(lo_at, got, sizeof got));
	else if (p->kind == PARAM_LOGUNIFORM && !(p->low > 0))
		rc = sx_fail(x, lo_at, "expected a number > 0 (loguniform samples on a log scale), got %s",
			     sx_got(lo_at, got, sizeof got));
	else if (is_int && p->log && p->low < 1)
		rc = sx_fail(x, lo_at, "expected an integer >= 1 (log: true samples on a log scale), got %s",
			     sx_got(lo_at, got, sizeof got));
	sx_pop(x, saved);
	return rc;
}

static int parse_choices(sx *x, const node *list, param_def *p)
{
	if (list->kind != NODE_SEQ || list->n == 0) {
		char got[96];
		return sx_fail(x, list, "expected a non-empty list of numbers or strings, got %s",
			       list->kind == NODE_SEQ ? "an empty list" : sx_got(list, got, sizeof got));
	}
	p->choices = calloc(list->n, sizeof *p->choices);
	if (!p->choices)
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	for (size_t i = 0; i < list->n; i++) {
		size_t saved = sx_push_index(x, i);
		int rc = sx_value(x, list->items[i], &p->choices[i]);
		for (size_t j = 0; rc == 0 && j < i; j++) {
			if (value_equal(&p->choices[j], &p->choices[i])) {
				char got[96];
				rc = sx_fail(x, list->items[i], "duplicate choice %s (also item %zu)",
					     sx_got(list->items[i], got, sizeof got), j);
			}
		}
		sx_pop(x, saved);
		if (rc < 0) {
			value_fini(&p->choices[i]);
			return rc;
		}
		p->n_choices = i + 1;
	}
	return 0;
}

/* Number of values grid search takes from p (see file comment). */
static int grid_count(const param_def *p, int explicit_points)
{
	double n;
	switch (p->kind) {
	case PARAM_UNIFORM:
		if (p->step > 0)
			return (int)fmin(floor((p->high - p->low) / p->step + 1e-9) + 1, 1e6);
		return explicit_points ? explicit_points : GRID_POINTS_DEFAULT;
	case PARAM_LOGUNIFORM:
		return explicit_points ? explicit_points : GRID_POINTS_DEFAULT;
	case PARAM_INT:
		n = floor((p->high - p->low) / (p->step > 1 ? p->step : 1)) + 1;
		if (explicit_points)
			return n < explicit_points ? (int)n : explicit_points;
		return n <= GRID_ENUM_MAX ? (int)n : GRID_POINTS_DEFAULT;
	case PARAM_CHOICE:
		return (int)p->n_choices;
	default:
		return 1;
	}
}

static int parse_full(sx *x, const node *m, param_def *p)
{
	const node *t = node_get(m, "type");
	if (!t)
		return sx_fail(x, m, "missing required key \"type\" (one of uniform, loguniform, int, choice, fixed)");
	int rc = sx_check_keys(x, m, param_keys_all, N_PARAM_KEYS);
	if (rc < 0)
		return rc;
	size_t saved = sx_push(x, "type");
	int kind;
	rc = sx_enum(x, t, spec_param_kind_names, 5, &kind);
	sx_pop(x, saved);
	if (rc < 0)
		return rc;
	p->kind = (param_kind)kind;
	for (size_t i = 0; i < m->n; i++) {
		if (key_allowed(p->kind, m->keys[i]->text) || key_common(m->keys[i]->text))
			continue;
		char list[128] = "";
		for (size_t j = 0; j < count_keys(param_keys[p->kind]); j++)
			snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
				 param_keys[p->kind][j]);
		saved = sx_push(x, m->keys[i]->text);
		rc = sx_fail(x, m->keys[i], "not used by type %s (its keys: %s)", spec_param_kind_names[kind], list);
		sx_pop(x, saved);
		return rc;
	}

	int explicit_points = 0;
	switch (p->kind) {
	case PARAM_UNIFORM:
	case PARAM_LOGUNIFORM:
	case PARAM_INT: {
		int is_int = p->kind == PARAM_INT;
		const node *lo_at = NULL, *at = NULL;
		if ((rc = child_number(x, m, "low", is_int, 1, &p->low, &lo_at)) < 0 ||
		    (rc = child_number(x, m, "high", is_int, 1, &p->high, NULL)) < 0)
			return rc;
		const node *lg = node_get(m, "log");
		if (lg) {
			saved = sx_push(x, "log");
			rc = sx_bool(x, lg, &p->log);
			sx_pop(x, saved);
			if (rc < 0)
				return rc;
		}
		if ((rc = check_range(x, p, lo_at)) < 0)
			return rc;
		if ((rc = child_number(x, m, "step", is_int, 0, &p->step, &at)) < 0)
			return rc;
		if (at) {
			char got[96];
			saved = sx_push(x, "step");
			if (!(p->step > 0) || p->step > p->high - p->low)
				rc = sx_fail(x, at, "expected %s > 0 and <= high - low (%.15g), got %s",
					     is_int ? "an integer" : "a number", p->high - p->low,
					     sx_got(at, got, sizeof got));
			sx_pop(x, saved);
			if (rc < 0)
				return rc;
		}
		const node *gp = node_get(m, "grid_points");
		if (gp) {
			int64_t v;
			saved = sx_push(x, "grid_points");
			rc = sx_int(x, gp, 1, 1000000, NULL, &v);
			if (rc == 0 && at)
				rc = sx_fail(x, gp, "give either step or grid_points, not both");
			sx_pop(x, saved);
			if (rc < 0)
				return rc;
			explicit_points = (int)v;
		}
		break;
	}
	case PARAM_CHOICE: {
		const node *v = node_get(m, "values");
		if (!v)
			return sx_fail(x, m, "missing required key \"values\"");
		saved = sx_push(x, "values");
		rc = parse_choices(x, v, p);
		sx_pop(x, saved);
		if (rc < 0)
			return rc;
		break;
	}
	case PARAM_FIXED: {
		const node *v = node_get(m, "value");
		if (!v)
			return sx_fail(x, m, "missing required key \"value\"");
		saved = sx_push(x, "value");
		rc = sx_value(x, v, &p->fixed);
		sx_pop(x, saved);
		if (rc < 0)
			return rc;
		break;
	}
	}
	p->grid_points = grid_count(p, explicit_points);
	return 0;
}

/*
 * search.space.<name>.when: {PARENT: VALUE} or {PARENT: [VALUE, ...]}, where
 * PARENT is a choice parameter before this one (parents[0..n_before)) and
 * every VALUE one of its choices.  Earlier parameters come first so that
 * samplers fill a configuration in order and always know the parent.
 */
static int parse_when(sx *x, const node *w, const space *before, size_t n_before, param_def *p)
{
	char got[96];
	if (w->kind != NODE_MAP || w->n != 1)
		return sx_fail(x, w, "expected a map of one earlier choice parameter to its value(s), "
				     "e.g. {model: cnn}, got %s",
			       w->kind == NODE_MAP ? "a map of several keys" : sx_got(w, got, sizeof got));
	const node *k = w->keys[0], *v = w->items[0];
	size_t saved = sx_push(x, k->text);
	/* An earlier parameter whose own parse failed may have no name: the
	 * walk goes on after errors (sx_finish), so skip those. */
	int parent = -1;
	for (size_t i = 0; i < n_before; i++)
		if (before->params[i].name && !strcmp(before->params[i].name, k->text))
			parent = (int)i;
	int rc = 0;
	if (parent < 0) {
		const char **cands = calloc(n_before ? n_before : 1, sizeof *cands);
		if (!cands) {
			sx_pop(x, saved);
			return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
		}
		size_t nc = 0;
		for (size_t i = 0; i < n_before; i++)
			if (before->params[i].name)
				cands[nc++] = before->params[i].name;
		const char *sugg = sx_suggest(k->text, cands, nc);
		if (!strcmp(k->text, p->name))
			rc = sx_fail(x, k, "a parameter cannot depend on itself");
		else if (sugg)
			rc = sx_fail(x, k, "\"%s\" is not a parameter declared before this one (did you mean "
					   "\"%s\"?)", k->text, sugg);
		else
			rc = sx_fail(x, k, "\"%s\" is not a parameter declared before this one (a condition "
					   "names an earlier choice parameter)", k->text);
		free(cands);
	} else if (before->params[parent].kind != PARAM_CHOICE) {
		rc = sx_fail(x, k, "expected a choice parameter, \"%s\" is %s", k->text,
			     spec_param_kind_names[before->params[parent].kind]);
	}
	if (rc < 0) {
		sx_pop(x, saved);
		return rc;
	}
	const param_def *par = &before->params[parent];
	size_t n = v->kind == NODE_SEQ ? v->n : 1;
	if (v->kind == NODE_MAP || (v->kind == NODE_SEQ && v->n == 0)) {
		rc = sx_fail(x, v, "expected a value of %s or a non-empty list of them, got %s", k->text,
			     sx_got(v, got, sizeof got));
		sx_pop(x, saved);
		return rc;
	}
	p->when = calloc(n, sizeof *p->when);
	if (!p->when) {
		sx_pop(x, saved);
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	}
	p->parent = (size_t)parent;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const node *item = v->kind == NODE_SEQ ? v->items[i] : v;
		size_t saved2 = v->kind == NODE_SEQ ? sx_push_index(x, i) : x->plen;
		rl_value val = {0};
		rc = sx_value(x, item, &val);
		int known = 0;
		for (size_t c = 0; rc == 0 && c < par->n_choices; c++)
			known |= value_equal(&par->choices[c], &val);
		if (rc == 0 && !known) {
			char list[256] = "";
			for (size_t c = 0; c < par->n_choices; c++) {
				char b[64];
				value_format(&par->choices[c], b, sizeof b);
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", c ? ", " : "", b);
			}
			rc = sx_fail(x, item, "%s is not one of %s's choices (%s)", sx_got(item, got, sizeof got),
				     k->text, list);
		}
		if (rc == 0) {
			p->when[i] = val;
			p->n_when = i + 1;
		} else {
			value_fini(&val);
		}
		sx_pop(x, saved2);
	}
	sx_pop(x, saved);
	return rc;
}

/* The condition keys of a long-form parameter, after its type's keys. */
static int parse_condition(sx *x, const node *m, const space *before, size_t n_before, param_def *p)
{
	const node *w = node_get(m, "when"), *d = node_get(m, "default");
	int rc = 0;
	if (w) {
		size_t saved = sx_push(x, "when");
		rc = parse_when(x, w, before, n_before, p);
		sx_pop(x, saved);
	}
	if (rc == 0 && d) {
		size_t saved = sx_push(x, "default");
		if (!w)
			rc = sx_fail(x, d, "applies to conditional parameters only (give \"when\" too)");
		else if (d->kind == NODE_MAP || d->kind == NODE_SEQ || node_is_null(d)) {
			char got[96];
			rc = sx_fail(x, d, "expected a number or a string, got %s", sx_got(d, got, sizeof got));
		} else {
			rc = sx_value(x, d, &p->dflt);
		}
		sx_pop(x, saved);
	}
	return rc;
}

static int parse_param(sx *x, const node *key, const node *v, const space *before, size_t n_before,
		       param_def *p)
{
	if (!sx_is_identifier(key->text) || key->len > 64)
		return sx_fail(x, key,
			       "expected a parameter name of letters, digits and '_' (not starting with a digit, "
			       "at most 64 characters)");
	if (spec_is_builtin(key->text))
		return sx_fail(x, key, "is a built-in placeholder name; choose another parameter name");
	p->name = strdup(key->text);
	if (!p->name)
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	int rc;
	switch (v->kind) {
	case NODE_MAP:
		rc = parse_full(x, v, p);
		return rc < 0 ? rc : parse_condition(x, v, before, n_before, p);
	case NODE_SEQ:
		p->kind = PARAM_CHOICE;
		rc = parse_choices(x, v, p);
		break;
	default:
		p->kind = PARAM_FIXED;
		if (node_is_null(v))
			return sx_fail(x, v, "expected a parameter: a map with a type, a list of choices or a fixed "
					     "value, got %s", v->len ? "null" : "nothing");
		rc = sx_value(x, v, &p->fixed);
		break;
	}
	if (rc == 0)
		p->grid_points = grid_count(p, 0);
	return rc;
}

int spec_parse_space(sx *x, const node *n, space *out)
{
	char got[96];
	if (n->kind != NODE_MAP)
		return sx_fail(x, n, "expected a map of parameters, got %s", sx_got(n, got, sizeof got));
	if (n->n == 0)
		return sx_fail(x, n, "expected at least one parameter, got an empty map");
	space sp = {0};
	sp.params = calloc(n->n, sizeof *sp.params);
	if (!sp.params)
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	/* Every parameter is read, so each one's first mistake is reported. */
	int failed = 0;
	for (size_t i = 0; i < n->n; i++) {
		size_t saved = sx_push(x, n->keys[i]->text);
		sp.n = i + 1;
		int rc = parse_param(x, n->keys[i], n->items[i], &sp, i, &sp.params[i]);
		sx_pop(x, saved);
		if (rc < 0 && rc != RL_ESPEC) {
			space_fini(&sp);
			return rc;
		}
		if (rc < 0)
			failed = rc;
	}
	if (failed) {
		space_fini(&sp);
		return failed;
	}
	*out = sp;
	return 0;
}

struct inactive_check {
	const space *sp;
	int found; /* a conditional parameter without a default */
};

static int inactive_lookup(const char *name, char *buf, size_t len, void *ctx)
{
	struct inactive_check *c = ctx;
	int i = space_find(c->sp, name);
	if (i >= 0 && c->found < 0 && c->sp->params[i].n_when && c->sp->params[i].dflt.type == VAL_NONE)
		c->found = i;
	if (len)
		buf[0] = '\0';
	return 0;
}

int spec_check_inactive_placeholders(sx *x, const space *sp, const node *at, const char *tmpl)
{
	struct inactive_check c = {sp, -1};
	char *out = NULL;
	rl_err e;
	rl_err_clear(&e);
	if (spec_expand(tmpl, inactive_lookup, &c, &out, &e) < 0)
		return 0; /* malformed: check_template reports it */
	free(out);
	if (c.found < 0)
		return 0;
	const param_def *p = &sp->params[c.found];
	char vals[160] = "";
	for (size_t i = 0; i < p->n_when; i++) {
		char v[64];
		value_format(&p->when[i], v, sizeof v);
		snprintf(vals + strlen(vals), sizeof vals - strlen(vals), "%s%s",
			 i == 0 ? "" : i + 1 == p->n_when ? " or " : ", ", v);
	}
	return sx_fail(x, at,
		       "{%s} is set only when %s is %s (search.space.%s.when) and has no default; "
		       "give search.space.%s a default or read it from RELISH_PARAMS",
		       p->name, sp->params[p->parent].name, vals, p->name, p->name);
}

int spec_check_conditions(sx *x, const spec *s, const node *algo_at)
{
	if ((s->search.algorithm != SEARCH_GRID && s->search.algorithm != SEARCH_GP) ||
	    !space_has_conditions(&s->search.space))
		return 0;
	const char *name = "";
	for (size_t i = 0; i < s->search.space.n; i++)
		if (s->search.space.params[i].n_when) {
			name = s->search.space.params[i].name;
			break;
		}
	size_t saved = sx_push(x, "search.algorithm");
	int rc = sx_fail(x, algo_at,
			 "%s does not support conditional parameters (search.space.%s.when); use "
			 "random, sobol or tpe", spec_search_name(s->search.algorithm), name);
	sx_pop(x, saved);
	return rc;
}

void spec_space_foreach(void (*fn)(const char *path, const char *help, void *ctx), void *ctx)
{
	char path[64];
	for (size_t i = 0; i < N_PARAM_KEYS; i++) {
		snprintf(path, sizeof path, "search.space.<name>.%s", param_keys_all[i]);
		fn(path, param_keys_help[i], ctx);
	}
}

uint64_t spec_grid_size(const space *sp)
{
	/* The grid sampler builds the axes, so the count is the number of
	 * points it will really visit (rounded log-spaced integers can
	 * coincide); it returns 0 on overflow. */
	uint64_t n = sampler_grid_size(sp);
	return n ? n : UINT64_MAX;
}
