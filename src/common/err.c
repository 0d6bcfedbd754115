/*
 * err.c - error objects and the tables generated from RL_ERRNO_MAP.
 */
#include "common/err.h"

#include <stdio.h>
#include <string.h>

struct err_row {
	int code;
	const char *name;
	const char *msg;
	int exit_code;
	int http;
};

static const struct err_row err_rows[] = {
	{RL_OK, "RL_OK", "success", 0, 200},
#define RL_ERR_ROW_(name, msg, exitc, http) {RL_E##name, "RL_E" #name, msg, exitc, http},
	RL_ERRNO_MAP(RL_ERR_ROW_)
#undef RL_ERR_ROW_
};

static const struct err_row *err_find(int code)
{
	for (size_t i = 0; i < sizeof err_rows / sizeof err_rows[0]; i++)
		if (err_rows[i].code == code)
			return &err_rows[i];
	return NULL;
}

void rl_err_clear(rl_err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->sys_errno = 0;
	e->msg[0] = '\0';
}

static int err_vset(rl_err *e, int code, int errnum, const char *fmt, va_list ap)
{
	if (!e)
		return code;
	e->code = code;
	e->sys_errno = errnum;
	int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	if (n < 0)
		e->msg[0] = '\0';
	if (errnum && n >= 0 && (size_t)n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", strerror(errnum));
	return code;
}

int rl_err_set(rl_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(e, code, 0, fmt, ap);
	va_end(ap);
	return code;
}

int rl_err_sys(rl_err *e, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(e, code, errnum, fmt, ap);
	va_end(ap);
	return code;
}

int rl_err_prefix(rl_err *e, const char *fmt, ...)
{
	if (!e)
		return RL_EINTERNAL;
	char head[RL_ERR_MSG_MAX];
	char old[RL_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(head, sizeof head, fmt, ap);
	va_end(ap);
	if (n < 0)
		return e->code;
	memcpy(old, e->msg, sizeof old);
	if (old[0])
		snprintf(e->msg, sizeof e->msg, "%s: %s", head, old);
	else
		snprintf(e->msg, sizeof e->msg, "%s", head);
	return e->code;
}

const char *rl_strerror(int code)
{
	const struct err_row *r = err_find(code);
	return r ? r->msg : "unknown error";
}

const char *rl_err_name(int code)
{
	const struct err_row *r = err_find(code);
	return r ? r->name : "RL_E?";
}

int rl_err_exit_code(int code)
{
	const struct err_row *r = err_find(code);
	return r ? r->exit_code : 1;
}

int rl_err_http_status(int code)
{
	const struct err_row *r = err_find(code);
	return r ? r->http : 500;
}

int rl_err_from_name(const char *name)
{
	for (size_t i = 0; name && i < sizeof err_rows / sizeof err_rows[0]; i++)
		if (!strcmp(err_rows[i].name, name))
			return err_rows[i].code;
	return RL_EINTERNAL;
}
