/*
 * spec_util.c - the parse context and scalar readers of the spec schema.
 *
 * Every message is built here, so that all of them share one shape:
 *   FILE:LINE:COL: key.path: expected X, got Y
 * The readers are strict about types (a quoted "0.1" is not a number) but
 * accept both plain and quoted text where the value is naturally text with
 * a unit (sizes like 4GiB, durations like 5m), since JSON can only quote.
 */
#include "spec/spec_internal.h"
#include "common/suggest.h"
#include "common/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int sx_fail(sx *x, const node *at, const char *fmt, ...)
{
	char msg[RL_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	char where[128];
	if (at && at->line > 0)
		snprintf(where, sizeof where, ":%d:%d", at->line, at->col);
	else
		where[0] = '\0';
	int rc;
	if (x->plen)
		rc = rl_err_set(x->err, RL_ESPEC, "%s%s: %s: %s", x->file, where, x->path, msg);
	else
		rc = rl_err_set(x->err, RL_ESPEC, "%s%s: %s", x->file, where, msg);
	if (x->n_errs < SX_MAX_ERRORS) {
		snprintf(x->errs[x->n_errs], SX_ERROR_MAX, "%s", x->err->msg);
		snprintf(x->err_path[x->n_errs], sizeof x->err_path[0], "%s", x->path);
	}
	x->n_errs++;
	return rc;
}

int sx_failed_under(const sx *x, const char *path)
{
	size_t n = strlen(path);
	for (int i = 0; i < x->n_errs && i < SX_MAX_ERRORS; i++)
		if (!strncmp(x->err_path[i], path, n) &&
		    (x->err_path[i][n] == '\0' || x->err_path[i][n] == '.' || x->err_path[i][n] == '['))
			return 1;
	/* Beyond the recorded ones the paths are unknown: assume the worst. */
	return x->n_errs > SX_MAX_ERRORS;
}

int sx_finish(sx *x)
{
	if (x->n_errs == 0)
		return 0;
	if (x->n_errs == 1)
		return rl_err_set(x->err, RL_ESPEC, "%s", x->errs[0]);
	char buf[RL_ERR_MSG_MAX];
	int kept = x->n_errs < SX_MAX_ERRORS ? x->n_errs : SX_MAX_ERRORS;
	size_t used = (size_t)snprintf(buf, sizeof buf, "%d errors in %s:", x->n_errs, x->file);
	/* A file name longer than the buffer (a submission names its own)
	 * leaves used past its end: counted from there, the writes below
	 * would land beyond buf. */
	if (used >= sizeof buf)
		used = sizeof buf - 1;
	int shown = 0;
	for (; shown < kept; shown++) {
		size_t need = 1 + strlen(x->errs[shown]);
		/* keep room for the "... and N more" line */
		if (used + need + 40 >= sizeof buf)
			break;
		used += (size_t)snprintf(buf + used, sizeof buf - used, "\n%s", x->errs[shown]);
	}
	if (shown < x->n_errs)
		snprintf(buf + used, sizeof buf - used, "\n... and %d more (fix these first)",
			 x->n_errs - shown);
	return rl_err_set(x->err, RL_ESPEC, "%s", buf);
}

size_t sx_push(sx *x, const char *key)
{
	size_t saved = x->plen;
	int n = snprintf(x->path + x->plen, sizeof x->path - x->plen, "%s%s", x->plen ? "." : "", key);
	if (n > 0)
		x->plen += (size_t)n < sizeof x->path - x->plen ? (size_t)n : sizeof x->path - x->plen - 1;
	return saved;
}

size_t sx_push_index(sx *x, size_t i)
{
	size_t saved = x->plen;
	int n = snprintf(x->path + x->plen, sizeof x->path - x->plen, "[%zu]", i);
	if (n > 0)
		x->plen += (size_t)n < sizeof x->path - x->plen ? (size_t)n : sizeof x->path - x->plen - 1;
	return saved;
}

void sx_pop(sx *x, size_t saved)
{
	x->plen = saved;
	x->path[saved] = '\0';
}

/* ---- lexical classes --------------------------------------------------- */

int sx_is_int_text(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	return *s == '\0';
}

/* JSON-like numbers: sign, digits with an optional fraction, exponent.
 * Hex, inf and nan, which strtod would take, are refused on purpose. */
int sx_is_number_text(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	int digits = 0;
	while (isdigit((unsigned char)*s)) {
		s++;
		digits++;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			s++;
			digits++;
		}
	}
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == '\0';
}

int sx_is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (s++; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static int is_bool_text(const char *s, int *v)
{
	static const char *const t[] = {"true", "True", "TRUE"}, *const f[] = {"false", "False", "FALSE"};
	for (int i = 0; i < 3; i++) {
		if (!strcmp(s, t[i])) {
			*v = 1;
			return 1;
		}
		if (!strcmp(s, f[i])) {
			*v = 0;
			return 1;
		}
	}
	return 0;
}

const char *sx_got(const node *n, char *buf, size_t len)
{
	if (!n)
		return "nothing";
	if (n->kind == NODE_MAP)
		return "a map";
	if (n->kind == NODE_SEQ)
		return "a list";
	if (node_is_null(n))
		return n->len ? "null" : "nothing";
	int b;
	int bare = !n->quoted && (sx_is_number_text(n->text) || is_bool_text(n->text, &b));
	/* Keep messages one line and short: control bytes become '?'. */
	char clean[64];
	size_t j = 0;
	for (size_t i = 0; i < n->len && j < sizeof clean - 4; i++)
		clean[j++] = (unsigned char)n->text[i] < 0x20 || n->text[i] == 0x7f ? '?' : n->text[i];
	if (j < n->len && j >= sizeof clean - 4) {
		memcpy(clean + j, "...", 3);
		j += 3;
	}
	clean[j] = '\0';
	snprintf(buf, len, bare ? "%s" : "\"%s\"", clean);
	return buf;
}

/* ---- did you mean ------------------------------------------------------ */

const char *sx_suggest(const char *word, const char *const *cands, size_t n)
{
	return rl_suggest(word, cands, n);
}

static void join_names(const char *const *names, size_t n, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

int sx_check_keys(sx *x, const node *map, const char *const *allowed, size_t n)
{
	int failed = 0;
	for (size_t i = 0; i < map->n; i++) {
		const node *k = map->keys[i];
		size_t j = 0;
		while (j < n && strcmp(k->text, allowed[j]))
			j++;
		if (j < n)
			continue;
		size_t saved = sx_push(x, k->text);
		const char *s = sx_suggest(k->text, allowed, n);
		int rc;
		if (s) {
			rc = sx_fail(x, k, "unknown key (did you mean \"%s\"?)", s);
		} else {
			char list[512];
			join_names(allowed, n, list, sizeof list);
			rc = sx_fail(x, k, "unknown key (expected one of: %s)", list);
		}
		sx_pop(x, saved);
		failed = rc; /* every unknown key is reported, not just the first */
	}
	return failed;
}

/* ---- scalar readers ---------------------------------------------------- */

static int expect_fail(sx *x, const node *n, const char *expect)
{
	char got[96];
	return sx_fail(x, n, "expected %s, got %s", expect, sx_got(n, got, sizeof got));
}

int sx_string(sx *x, const node *n, char **out)
{
	if (n->kind != NODE_SCALAR || node_is_null(n))
		return expect_fail(x, n, "a string");
	if (strlen(n->text) != n->len)
		return sx_fail(x, n, "expected a string without NUL characters");
	char *s = strdup(n->text);
	if (!s)
		return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	*out = s;
	return 0;
}

int sx_int(sx *x, const node *n, int64_t lo, int64_t hi, const char *expect, int64_t *out)
{
	char desc[64];
	if (!expect) {
		if (hi == INT64_MAX)
			snprintf(desc, sizeof desc, "an integer >= %lld", (long long)lo);
		else
			snprintf(desc, sizeof desc, "an integer from %lld to %lld", (long long)lo, (long long)hi);
		expect = desc;
	}
	if (n->kind != NODE_SCALAR || n->quoted || !sx_is_int_text(n->text))
		return expect_fail(x, n, expect);
	errno = 0;
	long long v = strtoll(n->text, NULL, 10);
	if (errno == ERANGE || v < lo || v > hi)
		return expect_fail(x, n, expect);
	*out = v;
	return 0;
}

int sx_number(sx *x, const node *n, const char *expect, double *out)
{
	if (n->kind != NODE_SCALAR || n->quoted || !sx_is_number_text(n->text))
		return expect_fail(x, n, expect ? expect : "a number");
	double v = strtod(n->text, NULL);
	if (!isfinite(v))
		return expect_fail(x, n, expect ? expect : "a finite number");
	*out = v;
	return 0;
}

int sx_bool(sx *x, const node *n, int *out)
{
	int v;
	if (n->kind != NODE_SCALAR || n->quoted || !is_bool_text(n->text, &v))
		return expect_fail(x, n, "true or false");
	*out = v;
	return 0;
}

int sx_enum(sx *x, const node *n, const char *const *names, size_t count, int *out)
{
	char list[256];
	join_names(names, count, list, sizeof list);
	if (n->kind == NODE_SCALAR && !node_is_null(n)) {
		for (size_t i = 0; i < count; i++) {
			if (!strcmp(n->text, names[i])) {
				*out = (int)i;
				return 0;
			}
		}
		const char *s = sx_suggest(n->text, names, count);
		if (s) {
			char got[96];
			return sx_fail(x, n, "expected one of %s, got %s (did you mean \"%s\"?)", list,
				       sx_got(n, got, sizeof got), s);
		}
	}
	char expect[300];
	snprintf(expect, sizeof expect, "one of %s", list);
	return expect_fail(x, n, expect);
}

/* Text of a scalar that may be a plain number or a quoted string with a
 * unit; NULL for maps, lists and nulls. */
static const char *unit_text(const node *n)
{
	if (n->kind != NODE_SCALAR || node_is_null(n) || strlen(n->text) != n->len)
		return NULL;
	return n->text;
}

struct unit {
	const char *name;
	double factor;
};

int sx_memory(sx *x, const node *n, uint64_t *mib)
{
	/* The rules are units_parse_size_mib's (common/units.h); this layer adds
	 * the node's position and the field's path to the message. */
	const char *s = unit_text(n);
	int rc = s ? units_parse_size_mib(s, mib) : UNITS_NOT_A_SIZE;
	if (rc == UNITS_TOO_LARGE)
		return expect_fail(x, n, "a size of at most 1PiB");
	if (rc < 0)
		return expect_fail(x, n, "a size such as 512MiB, 4GiB or 2G (a plain number is MiB)");
	return 0;
}

int sx_duration(sx *x, const node *n, double *seconds)
{
	const char *expect = "a duration such as 90, 30s, 5m or 1h30m (a plain number is seconds)";
	const char *s = unit_text(n);
	if (!s || !*s)
		return expect_fail(x, n, expect);
	if (sx_is_number_text(s)) {
		double v = strtod(s, NULL);
		if (!(v >= 0) || !isfinite(v))
			return expect_fail(x, n, expect);
		*seconds = v;
		return 0;
	}
	if (units_parse_duration(s, seconds) < 0)
		return expect_fail(x, n, expect);
	return 0;
}

int sx_value(sx *x, const node *n, rl_value *out)
{
	if (n->kind != NODE_SCALAR || node_is_null(n))
		return expect_fail(x, n, "a number or a string");
	rl_value v = {0};
	int b;
	if (!n->quoted && sx_is_int_text(n->text)) {
		errno = 0;
		v.i = strtoll(n->text, NULL, 10);
		if (errno == ERANGE)
			return expect_fail(x, n, "a 64-bit integer");
		v.type = VAL_INT;
	} else if (!n->quoted && sx_is_number_text(n->text)) {
		v.f = strtod(n->text, NULL);
		if (!isfinite(v.f))
			return expect_fail(x, n, "a finite number");
		v.type = VAL_FLOAT;
	} else if (!n->quoted && is_bool_text(n->text, &b)) {
		v.type = VAL_BOOL;
		v.i = b;
	} else {
		if (strlen(n->text) != n->len)
			return sx_fail(x, n, "expected a string without NUL characters");
		v.type = VAL_STR;
		v.str = strdup(n->text);
		if (!v.str)
			return rl_err_set(x->err, RL_ENOMEM, "%s: out of memory", x->file);
	}
	*out = v;
	return 0;
}
