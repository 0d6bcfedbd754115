/*
 * err.h - the one error convention of relish.
 *
 * Every fallible function returns 0 (or a non-negative count) on success and a
 * negative RL_E* code on failure, and fills the rl_err object its caller
 * passed in.  Each layer on the way up may prepend what it was doing with
 * rl_err_prefix(); only the top (the CLI's main, the HTTP boundary, the event
 * dispatcher) prints the error.  The code list below is the single source of
 * the enum, the names, the default messages, the CLI exit codes and the HTTP
 * statuses, so they can never drift apart.
 */
#ifndef RELISH_ERR_H
#define RELISH_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* X(NAME, message, exit code, http status) */
#define RL_ERRNO_MAP(X)                                                        \
	X(NOMEM, "out of memory", 1, 500)                                      \
	X(INVAL, "invalid argument", 2, 400)                                   \
	X(USAGE, "bad command line", 2, 400)                                   \
	X(SPEC, "invalid experiment spec", 2, 400)                             \
	X(PARSE, "syntax error", 2, 400)                                       \
	X(IO, "input/output error", 1, 500)                                    \
	X(NOTFOUND, "not found", 3, 404)                                       \
	X(EXISTS, "already exists", 1, 409)                                    \
	X(STORE, "state database error", 4, 500)                               \
	X(EXEC, "could not start trial", 1, 500)                               \
	X(RUNTIME, "container runtime error", 1, 502)                          \
	X(UNSUPPORTED, "not supported", 1, 501)                                \
	X(NOSPACE, "no device can hold the segment", 1, 409)                   \
	X(BUSY, "resource busy", 1, 409)                                       \
	X(INTERRUPTED, "interrupted", 130, 503)                                \
	X(AUTH, "not authenticated", 6, 401)                                   \
	X(PERM, "permission denied", 6, 403)                                   \
	X(TOOBIG, "request too large", 2, 413)                                 \
	X(METHOD, "method not allowed", 2, 405)                                \
	X(NOSERVER, "no relish server reachable", 7, 503)                      \
	X(INTERNAL, "internal error", 70, 500)                                 \
	X(INUSE, "state database in use by another relish", 5, 409)            \
	X(LIMIT, "too many connections", 1, 429)

enum rl_errno {
	RL_OK = 0,
#define RL_ERR_ENUM_(name, msg, exitc, http) RL_E##name,
	RL_ERR_FIRST_ = -1000,
	RL_ERRNO_MAP(RL_ERR_ENUM_)
#undef RL_ERR_ENUM_
	RL_ERR_LAST_
};
/* Codes are negative: RL_ENOMEM == -999 and so on, so "rc < 0" means failed. */

#define RL_ERR_MSG_MAX 1024

typedef struct rl_err {
	int code;               /* RL_E* (negative) or 0 */
	int sys_errno;          /* errno at the point of failure, or 0 */
	char msg[RL_ERR_MSG_MAX]; /* full message, context prepended */
} rl_err;

/* Reset to "no error". */
void rl_err_clear(rl_err *e);

/*
 * Record an error and return its code, so callers can write
 *     return rl_err_set(err, RL_EINVAL, "bad %s", what);
 * err may be NULL (the error is then only returned).  A previous message in
 * err is replaced.
 */
int rl_err_set(rl_err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Same, appending ": strerror(errnum)" and recording errnum. */
int rl_err_sys(rl_err *e, int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Prepend context ("loading spec x.yaml: " + existing message).  Returns the
 * error's code unchanged, so "return rl_err_prefix(err, ...)" passes it up.
 */
int rl_err_prefix(rl_err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

const char *rl_strerror(int code);    /* default message of a code */
const char *rl_err_name(int code);    /* "RL_ESPEC" */
int rl_err_exit_code(int code);       /* process exit code for the CLI */
int rl_err_http_status(int code);     /* HTTP status for the API */
int rl_err_from_name(const char *name); /* "RL_ESPEC" -> RL_ESPEC; RL_EINTERNAL if unknown */

#endif
