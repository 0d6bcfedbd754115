/*
 * space.h - search spaces, parameter values and configurations.
 *
 * A space is an ordered list of parameter definitions; a configuration is an
 * array of values indexed like the space.  Samplers work in a unit-cube view
 * of the space (space_to_unit / space_from_unit) so that grid, Sobol and TPE
 * share one notion of log scales and integer rounding.
 */
#ifndef RELISH_SPACE_H
#define RELISH_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef enum param_kind {
	PARAM_UNIFORM,    /* float in [low, high] */
	PARAM_LOGUNIFORM, /* float in [low, high], sampled on a log scale; low > 0 */
	PARAM_INT,        /* integer in [low, high]; log flag for a log scale */
	PARAM_CHOICE,     /* one of n_choices values (numbers or strings) */
	PARAM_FIXED,      /* always the same value */
} param_kind;

typedef enum value_type {
	VAL_NONE = 0,
	VAL_FLOAT,
	VAL_INT,
	VAL_STR,
	VAL_BOOL,
} value_type;

/* A parameter value.  str is owned by whoever owns the value. */
typedef struct rl_value {
	value_type type;
	double f;       /* VAL_FLOAT */
	int64_t i;      /* VAL_INT, VAL_BOOL (0/1) */
	char *str;      /* VAL_STR */
} rl_value;

typedef struct param_def {
	char *name;          /* owned */
	param_kind kind;
	double low, high;    /* UNIFORM, LOGUNIFORM, INT */
	int log;             /* INT: sample on a log scale */
	double step;         /* UNIFORM/INT: quantisation step, 0 = none */
	int grid_points;     /* continuous params under grid search, default 5 */
	size_t n_choices;    /* CHOICE */
	rl_value *choices;   /* CHOICE: owned array */
	rl_value fixed;      /* FIXED */
	/* Conditional parameters (search.space.<name>.when): active only when
	 * parameter `parent` (a choice declared earlier) has one of the n_when
	 * values in `when`; n_when == 0: always active.  An inactive
	 * parameter's value in a configuration is VAL_NONE. */
	size_t parent;
	size_t n_when;
	rl_value *when;      /* owned array of n_when */
	rl_value dflt;       /* {name} text while inactive; VAL_NONE: none */
} param_def;

typedef struct space {
	size_t n;
	param_def *params;   /* owned array of n */
} space;

/* A configuration: n values, one per parameter of its space.  Owned. */
typedef struct config {
	size_t n;
	rl_value *v;
} config;

void value_fini(rl_value *v);
int value_copy(rl_value *dst, const rl_value *src, rl_err *err);
/* Numeric view of a value (ints and bools as doubles, strings NaN). */
double value_as_double(const rl_value *v);
int value_equal(const rl_value *a, const rl_value *b);
/* Format for argv substitution: ints plain, floats with %.17g shortest
 * round-trip, strings verbatim, bools true/false.  Returns chars written
 * (like snprintf). */
int value_format(const rl_value *v, char *buf, size_t len);

void param_def_fini(param_def *p);
void space_fini(space *s);
int space_copy(space *dst, const space *src, rl_err *err);
/* Index of the parameter called name, or -1. */
int space_find(const space *s, const char *name);

/* Is parameter p of s active in c?  Reads only the values of parameters
 * before p (a parent comes first), so a sampler may ask while filling c in
 * order.  Always 1 for an unconditional parameter; 0 when the parent is
 * itself inactive (its value is VAL_NONE, which matches no value). */
int space_active(const space *s, size_t p, const config *c);

/* Does any parameter of s have a condition? */
int space_has_conditions(const space *s);

int config_init(config *c, size_t n, rl_err *err);
void config_fini(config *c);
int config_copy(config *dst, const config *src, rl_err *err);

/*
 * Unit-cube mapping.  space_to_unit maps a value of parameter p into [0, 1)
 * (log scales for LOGUNIFORM and log INT, choices as their index band);
 * space_from_unit maps u in [0, 1] back to a valid value (rounding integers,
 * applying step, clamping).  FIXED maps to 0 and back to its value.
 */
double space_to_unit(const param_def *p, const rl_value *v);
int space_from_unit(const param_def *p, double u, rl_value *out, rl_err *err);

/* A value as a new jansson node (the caller owns the reference). */
struct json_t;
struct json_t *value_to_json(const rl_value *v);

/* Serialise a configuration as a JSON object text {"lr":0.01,...}, without
 * inactive parameters (VAL_NONE); the returned string is malloc'd and owned
 * by the caller. */
char *config_to_json(const space *s, const config *c);
/* Parse the JSON object produced above back into c (owned by caller); a
 * parameter absent from it must be inactive (then VAL_NONE), one present
 * must be active. */
int config_from_json(const space *s, const char *json, config *c, rl_err *err);

#endif
