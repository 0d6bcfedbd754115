/*
 * test_capture.c - a tool run to its end with its output captured
 * (exec/capture.c), the one blocking way relish starts a tool (a container
 * engine's and Slurm's at start-up): standard output whole, standard error
 * without its trailing newlines and cut to its end, the exit status or
 * 128 + the signal, standard input empty, the environment given; a program
 * that cannot be run is RL_ERUNTIME naming it, never a bare -1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "exec/capture.h"

static void test_output_and_status(void **state)
{
	(void)state;
	char *argv[] = {"/bin/sh", "-c", "printf 'a\\nb\\n'; printf 'oops\\n\\n' >&2; exit 3", NULL};
	char *out = NULL, *et = NULL;
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(capture_run(argv, NULL, &out, &et, &e), 3);
	assert_string_equal(out, "a\nb\n");
	assert_string_equal(et, "oops");
	free(out);
	free(et);
}

static void test_signal_stdin_env(void **state)
{
	(void)state;
	/* stdin is /dev/null (cat ends at once), the environment is the one given */
	char *argv[] = {"/bin/sh", "-c", "cat; printf '%s' \"$WHO\"; kill -TERM $$", NULL};
	char *envp[] = {"WHO=relish", "PATH=/usr/bin:/bin", NULL};
	char *out = NULL;
	assert_int_equal(capture_run(argv, envp, &out, NULL, NULL), 128 + 15);
	assert_string_equal(out, "relish");
	free(out);
}

static void test_long_stderr_keeps_its_end(void **state)
{
	(void)state;
	char *argv[] = {"/bin/sh", "-c",
			"i=0; while [ $i -lt 20000 ]; do echo 'line of noise'; i=$((i+1)); done >&2; "
			"echo 'the end' >&2",
			NULL};
	char *et = NULL;
	assert_int_equal(capture_run(argv, NULL, NULL, &et, NULL), 0);
	assert_true(strlen(et) <= CAPTURE_ERR_MAX);
	size_t n = strlen(et);
	assert_true(n >= 7);
	assert_string_equal(et + n - 7, "the end");
	free(et);
}

static void test_missing_program(void **state)
{
	(void)state;
	char *argv[] = {"/nonexistent/tool", "x", NULL};
	char *out = (char *)"untouched";
	assert_int_equal(capture_run(argv, NULL, &out, NULL, NULL), RL_ERUNTIME);
	assert_string_equal(out, "untouched");
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(capture_run(argv, NULL, NULL, NULL, &e), RL_ERUNTIME);
	if (!strstr(e.msg, "cannot run /nonexistent/tool"))
		fail_msg("unclear: %s", e.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_and_status),
		cmocka_unit_test(test_signal_stdin_env),
		cmocka_unit_test(test_long_stderr_keeps_its_end),
		cmocka_unit_test(test_missing_program),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
