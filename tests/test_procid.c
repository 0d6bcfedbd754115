/*
 * test_procid.c - process identity (common/procid.h): the /proc stat parser,
 * start times, and the one strict check: a pid is "ours" only with the start
 * time it was recorded with, never when that start time is unknown (0), and
 * not once it is a zombie or gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/procid.h"

static void test_parse_stat(void **state)
{
	(void)state;
	procid_stat st;
	const char *text = "123 (we) ird (x)) S 1 100 101 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5555 1000 77 0 0\n";
	assert_int_equal(procid_parse_stat(text, &st, NULL), 0);
	assert_int_equal(st.pid, 123);
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 1);
	assert_int_equal(st.pgid, 100);
	assert_int_equal(st.sid, 101);
	assert_int_equal(st.start_time, 5555);
	assert_int_equal(st.rss_pages, 77);
	rl_err e;
	assert_int_equal(procid_parse_stat("123 (x) S 1 2", &st, &e), RL_EPARSE);
	assert_int_equal(procid_parse_stat("no paren", &st, &e), RL_EPARSE);
	assert_int_equal(procid_parse_stat("1 (x)", &st, &e), RL_EPARSE);
}

static void test_identity(void **state)
{
	(void)state;
	uint64_t mine = 0;
	assert_int_equal(procid_start_time(getpid(), &mine, NULL), 0);
	assert_true(mine > 0);
	assert_int_equal(procid_matches(getpid(), mine), 1);
	assert_int_equal(procid_matches(getpid(), mine + 1), 0); /* another process */
	/* A start time never read is nobody's: not "any process". */
	assert_int_equal(procid_matches(getpid(), 0), 0);
	assert_int_equal(procid_matches(0, mine), 0);
	assert_int_equal(procid_matches(-1, mine), 0);

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	uint64_t t = 0;
	assert_int_equal(procid_start_time(pid, &t, NULL), 0);
	assert_true(t >= mine);
	assert_int_equal(procid_matches(pid, t), 1);
	kill(pid, SIGKILL);
	/* A zombie is not running any more: not ours to signal. */
	for (int i = 0; i < 200 && procid_matches(pid, t); i++)
		usleep(5000);
	assert_int_equal(procid_matches(pid, t), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(procid_matches(pid, t), 0);
	rl_err e;
	uint64_t untouched = 42;
	assert_int_equal(procid_start_time(pid, &untouched, &e), RL_ENOTFOUND);
	assert_int_equal(untouched, 42);
	assert_int_equal(procid_start_time(0, &untouched, &e), RL_EINVAL);
}

/* A group is signalled by its leader's pid only while that pid is still
 * the leader (issue 25, item 10): a pid now another process's is never
 * signalled, and neither is one whose start time was never read. */
static void test_kill_group(void **state)
{
	(void)state;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(pid, pid);
	uint64_t st = 0;
	assert_int_equal(procid_start_time(pid, &st, NULL), 0);
	/* what a reused pid looks like: the same pid, another start time */
	assert_int_equal(procid_kill_group(pid, st + 1, SIGKILL), -1);
	assert_int_equal(procid_kill_group(pid, 0, SIGKILL), -1);
	assert_int_equal(kill(pid, 0), 0); /* still alive */
	assert_int_equal(procid_kill_group(pid, st, SIGKILL), 0);
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* gone, and the group with it: nothing to receive it, not an error */
	assert_int_equal(procid_kill_group(pid, st, SIGTERM), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_kill_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
