/*
 * test_err.c - the error convention: codes, tables and context prefixes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "common/err.h"

static void test_set_and_prefix(void **state)
{
	(void)state;
	rl_err e;
	rl_err_clear(&e);
	int rc = rl_err_set(&e, RL_ESPEC, "%s: expected a number", "search.space.lr.low");
	assert_int_equal(rc, RL_ESPEC);
	assert_true(rc < 0);
	assert_int_equal(rl_err_prefix(&e, "loading %s", "x.yaml"), RL_ESPEC);
	assert_string_equal(e.msg, "loading x.yaml: search.space.lr.low: expected a number");
}

static void test_sys(void **state)
{
	(void)state;
	rl_err e;
	rl_err_sys(&e, RL_EIO, ENOENT, "open %s", "f");
	assert_int_equal(e.sys_errno, ENOENT);
	assert_non_null(strstr(e.msg, "open f: "));
	assert_non_null(strstr(e.msg, strerror(ENOENT)));
}

static void test_tables(void **state)
{
	(void)state;
	assert_string_equal(rl_err_name(RL_ESPEC), "RL_ESPEC");
	assert_int_equal(rl_err_exit_code(RL_ESPEC), 2);
	assert_int_equal(rl_err_exit_code(RL_OK), 0);
	assert_int_equal(rl_err_http_status(RL_ENOTFOUND), 404);
	assert_string_equal(rl_strerror(RL_ENOMEM), "out of memory");
	assert_string_equal(rl_strerror(12345), "unknown error");
	/* NULL error objects are allowed: the code still comes back. */
	assert_int_equal(rl_err_set(NULL, RL_EIO, "x"), RL_EIO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_and_prefix),
		cmocka_unit_test(test_sys),
		cmocka_unit_test(test_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
