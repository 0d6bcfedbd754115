/*
 * sched_fixture.h - what the core's tests (test_colocate.c, test_estimate.c,
 * test_devindex.c, test_queue.c) share: a core with the given options and
 * GPUs added one by one.  Included by test files only (static functions,
 * one copy each).
 */
#ifndef RELISH_TEST_SCHED_FIXTURE_H
#define RELISH_TEST_SCHED_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "sched/sched.h"

/* Add a GPU of mem_mib MiB and 100 % compute; asserts it got index want. */
static void fixture_gpu(sched *s, uint64_t mem_mib, int want)
{
	sched_device_info d;
	memset(&d, 0, sizeof d);
	d.is_gpu = 1;
	d.mem_total_mib = mem_mib;
	d.compute_total = 100;
	rl_err e;
	assert_int_equal(sched_add_device(s, &d, &e), want);
}

/* A core with options o (the policy's defaults when NULL) and n_gpu GPUs
 * of mem_mib MiB each. */
static sched *fixture_sched(sharing_policy policy, const sched_options *o, int n_gpu,
			    uint64_t mem_mib)
{
	sched_options def;
	if (!o) {
		sched_options_default(&def, policy);
		o = &def;
	}
	sched *s = NULL;
	rl_err e;
	assert_int_equal(sched_new(o, &s, &e), 0);
	for (int i = 0; i < n_gpu; i++)
		fixture_gpu(s, mem_mib, i);
	return s;
}

#endif
