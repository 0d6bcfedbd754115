/*
 * test_spec_cases.c - every malformed spec in tests/spec_cases/ must fail
 * to load with exactly the message its .expect file holds (see the README
 * there).  This pins the wording, the positions and the key paths of the
 * parser's errors; tests/test_spec_validate.sh checks the same cases through
 * the relish binary.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spec/spec.h"

#define PREFIX "relish validate: "

static int is_case(const char *name)
{
	size_t n = strlen(name);
	return name[0] >= '0' && name[0] <= '9' &&
	       ((n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 5 && !strcmp(name + n - 5, ".json")));
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_every_case(void **state)
{
	(void)state;
	const char *src = getenv("RELISH_SRC");
	assert_non_null(src);
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/tests/spec_cases", src);
	assert_int_equal(chdir(dir), 0);

	DIR *d = opendir(".");
	assert_non_null(d);
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 512)
		if (is_case(e->d_name))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof names[0], cmp_names);
	/* The issue asks for at least 30; losing some by accident must fail. */
	assert_true(n >= 50);

	size_t failures = 0;
	for (size_t i = 0; i < n; i++) {
		char expect_path[512], expect[2048] = "";
		snprintf(expect_path, sizeof expect_path, "%.*s.expect", (int)(strlen(names[i]) - 5), names[i]);
		/* The whole file: a spec with several mistakes lists them all,
		 * one per line after its first. */
		FILE *f = fopen(expect_path, "r");
		size_t got = f ? fread(expect, 1, sizeof expect - 1, f) : 0;
		if (!f || !got) {
			print_error("%s: missing %s\n", names[i], expect_path);
			failures++;
			if (f)
				fclose(f);
			free(names[i]);
			continue;
		}
		fclose(f);
		expect[got] = '\0';
		if (got && expect[got - 1] == '\n')
			expect[got - 1] = '\0';
		assert_int_equal(strncmp(expect, PREFIX, strlen(PREFIX)), 0);

		spec *s = NULL;
		rl_err err;
		rl_err_clear(&err);
		int rc = spec_load(names[i], &s, &err);
		if (rc >= 0) {
			print_error("%s: loaded, expected: %s\n", names[i], expect);
			spec_free(s);
			failures++;
		} else if (strcmp(err.msg, expect + strlen(PREFIX))) {
			print_error("%s:\n  got      %s\n  expected %s\n", names[i], err.msg, expect + strlen(PREFIX));
			failures++;
		} else if (rc != RL_ESPEC && rc != RL_EPARSE) {
			print_error("%s: code %s, expected RL_ESPEC or RL_EPARSE\n", names[i], rl_err_name(rc));
			failures++;
		}
		free(names[i]);
	}
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_case),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
