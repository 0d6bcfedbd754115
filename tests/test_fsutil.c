/*
 * test_fsutil.c - the file-system helpers of src/common/fsutil.h on a real
 * temporary folder: rl_remove_tree removes a whole tree (files, folders,
 * an unreadable folder, links) and never follows a link out of it, so a
 * service removing a user's checkpoint folders as root cannot be led to
 * remove anything else; rl_mkdirs makes every missing parent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fsutil.h"

static char dir[64];

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("x\n", f);
	fclose(f);
}

static int exists(const char *path)
{
	struct stat sb;
	return lstat(path, &sb) == 0;
}

static void test_remove_tree(void **state)
{
	(void)state;
	char p[256], outside[256], tree[256];
	snprintf(tree, sizeof tree, "%s/tree", dir);
	snprintf(outside, sizeof outside, "%s/outside", dir);
	snprintf(p, sizeof p, "%s/a/b/c", tree);
	assert_int_equal(rl_mkdirs(p, 0755), 0);
	assert_int_equal(rl_mkdirs(outside, 0755), 0);
	snprintf(p, sizeof p, "%s/keep", outside);
	touch(p);
	snprintf(p, sizeof p, "%s/a/b/c/ckpt.pt", tree);
	touch(p);
	snprintf(p, sizeof p, "%s/a/seg-0.log", tree);
	touch(p);
	/* links out of the tree: to a folder and to a file */
	snprintf(p, sizeof p, "%s/a/b/link-dir", tree);
	assert_int_equal(symlink(outside, p), 0);
	snprintf(p, sizeof p, "%s/a/link-file", tree);
	char target[256];
	snprintf(target, sizeof target, "%s/keep", outside);
	assert_int_equal(symlink(target, p), 0);
	/* a folder its owner made unreadable */
	snprintf(p, sizeof p, "%s/a/locked", tree);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(target, sizeof target, "%s/a/locked/f", tree);
	touch(target);
	chmod(p, 0);
	int rc = rl_remove_tree(tree);
	if (rc != 0 && getuid() != 0) {
		/* without root the unreadable folder stays: that is the error */
		chmod(p, 0700);
		assert_int_equal(rl_remove_tree(tree), 0);
	} else {
		assert_int_equal(rc, 0);
	}
	assert_false(exists(tree));
	snprintf(p, sizeof p, "%s/keep", outside);
	assert_true(exists(p)); /* nothing behind a link was touched */
	assert_true(exists(outside));
	assert_int_equal(rl_remove_tree(tree), 0); /* not there: nothing to do */
	/* a file or a link named directly */
	assert_int_equal(rl_remove_tree(p), 0);
	assert_false(exists(p));
	snprintf(p, sizeof p, "%s/link", dir);
	assert_int_equal(symlink(outside, p), 0);
	assert_int_equal(rl_remove_tree(p), 0);
	assert_false(exists(p));
	assert_true(exists(outside));
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/relish-fsutil-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return rl_remove_tree(dir) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_remove_tree, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
