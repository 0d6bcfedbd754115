/*
 * spec_internal.h - what the files of src/spec share and nobody else needs:
 * the parse context that builds "FILE:LINE:COL: key.path: ..." messages and
 * the scalar readers (numbers, sizes, durations, enums) the schema tables
 * use.  spec_util.c implements the context and readers, spec_space.c the
 * search space, spec_schema.c the tables and cross-field checks.
 */
#ifndef RELISH_SPEC_INTERNAL_H
#define RELISH_SPEC_INTERNAL_H

#include <stdint.h>

#include "spec/node.h"
#include "spec/spec.h"

#define SX_PATH_MAX 512
#define SX_MAX_ERRORS 10     /* errors of one spec reported together */
#define SX_ERROR_MAX 400     /* one error's message */

/* Parse context: the file name for messages, the key path being read, and
 * the errors found so far: the walk goes on after an error, so one run of
 * `relish validate` reports every mistake of a spec (up to SX_MAX_ERRORS;
 * the rest are counted). */
typedef struct sx {
	const char *file;
	rl_err *err;
	const spec_origin *origin;                /* NULL: the author's own process */
	char path[SX_PATH_MAX];
	size_t plen;
	int n_errs;                               /* all errors found */
	char errs[SX_MAX_ERRORS][SX_ERROR_MAX];   /* the first ones, in order */
	char err_path[SX_MAX_ERRORS][64];         /* their key paths */
} sx;

/*
 * Record a schema error at node `at` (NULL: no position) under the current
 * path: "FILE:LINE:COL: path: message".  Returns RL_ESPEC.  The caller may
 * go on with the next key; sx_finish turns what was recorded into err.
 */
int sx_fail(sx *x, const node *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* 1 when an error was recorded at path or below it ("search" covers
 * "search.space.lr"), so checks that need that part can be skipped. */
int sx_failed_under(const sx *x, const char *path);

/* The walk is over: 0 when no error was recorded, else RL_ESPEC with
 * x->err holding the one message, or "N errors in FILE:" and one line
 * each (as many as fit; "... and K more"). */
int sx_finish(sx *x);

/* Path handling: push returns the previous length, to give to sx_pop. */
size_t sx_push(sx *x, const char *key);
size_t sx_push_index(sx *x, size_t i);
void sx_pop(sx *x, size_t saved);

/* What a node holds, for "got ...": 12, "abc", a map, a list, null. */
const char *sx_got(const node *n, char *buf, size_t len);

/* Closest candidate to word within a small edit distance, or NULL. */
const char *sx_suggest(const char *word, const char *const *cands, size_t n);

/* Scalar readers.  Each reports "expected <expect>, got ..." on failure
 * (expect NULL: a generic description) and writes *out only on success. */
int sx_string(sx *x, const node *n, char **out);
int sx_int(sx *x, const node *n, int64_t lo, int64_t hi, const char *expect, int64_t *out);
int sx_number(sx *x, const node *n, const char *expect, double *out);
int sx_bool(sx *x, const node *n, int *out);
int sx_enum(sx *x, const node *n, const char *const *names, size_t count, int *out);
int sx_memory(sx *x, const node *n, uint64_t *mib);
int sx_duration(sx *x, const node *n, double *seconds);
/* A choice or fixed value: plain integers, numbers and booleans keep their
 * type, anything else is a string. */
int sx_value(sx *x, const node *n, rl_value *out);

/* Unknown-key check of a map against allowed keys (did-you-mean). */
int sx_check_keys(sx *x, const node *map, const char *const *allowed, size_t n);

/* Lexical classes of plain scalars. */
int sx_is_int_text(const char *s);
int sx_is_number_text(const char *s);
int sx_is_identifier(const char *s);

/* The search space under search.space (spec_space.c).  Fills out. */
int spec_parse_space(sx *x, const node *n, space *out);

/* A template (trial.command item, trial.env value at node at) that names a
 * parameter which can be inactive and has no default: RL_ESPEC, naming it
 * and the way out.  Malformed templates are left to the caller. */
int spec_check_inactive_placeholders(sx *x, const space *sp, const node *at, const char *tmpl);

/* Conditions the chosen algorithm cannot honour (grid): RL_ESPEC at
 * algo_at (search.algorithm's node). */
int spec_check_conditions(sx *x, const spec *s, const node *algo_at);

/* Paths and help of the parameter keys, for spec_schema_foreach. */
void spec_space_foreach(void (*fn)(const char *path, const char *help, void *ctx), void *ctx);

/* trial.mounts (spec_mounts.c): parse the list node v, each item
 * "HOST[:TARGET][:ro|rw]" with ${NAME} taken from the environment and a
 * relative HOST from dir.  On success *out is a malloc'd array of *n. */
int spec_parse_mounts(sx *x, const node *v, const char *dir, spec_mount **out, size_t *n);

/* Tree to spec (spec_schema.c).  dir is the absolute folder relative
 * workdirs are resolved against.  *out owned by the caller. */
int spec_from_tree(const node *root, const char *file, const char *dir,
		   const spec_origin *origin, spec **out, rl_err *err);

/* Names of param kinds, indexed by param_kind. */
extern const char *const spec_param_kind_names[5];

#endif
