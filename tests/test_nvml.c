/*
 * test_nvml.c - NVML telemetry: the pure helpers, then discovery and
 * sampling through the scripted stand-in library
 * (tests/support/libnvidia-ml-standin.c, opened with dlopen exactly as the
 * real libnvidia-ml.so.1 would be), and the no-driver paths.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <sys/wait.h>

#include "telemetry/nvml.h"
#include "telemetry/nvml_abi.h"

static char tmpdir[256];
static char standin[512];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/relish-test-nvml-XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	const char *b = getenv("RELISH_BUILD");
	snprintf(standin, sizeof standin, "%s/libnvidia-ml-standin.so", b ? b : ".");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write a script and point the loader at the stand-in. */
static void use_script(const char *text)
{
	char path[512];
	snprintf(path, sizeof path, "%s/script", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	setenv("RELISH_NVML_LIBRARY", standin, 1);
	setenv("RELISH_NVML_SCRIPT", path, 1);
}

static const char *two_gpus =
	"# two boards, one busy\n"
	"driver 550.54.15\n"
	"device GPU-standin-0 40960 NVIDIA Stand-in A100 40GB\n"
	"device GPU-standin-1 81920 NVIDIA Stand-in H100 80GB\n"
	"used 0 512\n"
	"proc 0 4001 1000\n"
	"proc 0 4002 2500\n"
	"proc 1 4003 300\n"
	"util 0 10 5\n"
	"util 0 90 40\n"
	"putil 0 4001 30 10 1000\n"
	"putil 0 4002 55 20 2000\n"
	"putil 0 4001 35 12 1500\n";

static void test_bytes_to_mib(void **state)
{
	(void)state;
	assert_int_equal(telemetry_bytes_to_mib(0), 0);
	assert_int_equal(telemetry_bytes_to_mib(1), 1);
	assert_int_equal(telemetry_bytes_to_mib(1048576), 1);
	assert_int_equal(telemetry_bytes_to_mib(1048577), 2);
	assert_int_equal(telemetry_bytes_to_mib(40ULL << 30), 40960);
}

static void test_code_mapping(void **state)
{
	(void)state;
	assert_string_equal(telemetry_nvml_code_name(0), "NVML_SUCCESS");
	assert_string_equal(telemetry_nvml_code_name(3), "NVML_ERROR_NOT_SUPPORTED");
	assert_string_equal(telemetry_nvml_code_name(9), "NVML_ERROR_DRIVER_NOT_LOADED");
	assert_string_equal(telemetry_nvml_code_name(15), "NVML_ERROR_GPU_IS_LOST");
	assert_string_equal(telemetry_nvml_code_name(999), "NVML_ERROR_UNKNOWN");
	assert_string_equal(telemetry_nvml_code_name(4242), "NVML_ERROR_UNRECOGNISED");
	assert_int_equal(telemetry_nvml_to_rl(0), RL_OK);
	assert_int_equal(telemetry_nvml_to_rl(NVML_RC_NOT_SUPPORTED), RL_EUNSUPPORTED);
	assert_int_equal(telemetry_nvml_to_rl(NVML_RC_MEMORY), RL_ENOMEM);
	assert_int_equal(telemetry_nvml_to_rl(NVML_RC_INVALID_ARGUMENT), RL_EINVAL);
	assert_int_equal(telemetry_nvml_to_rl(NVML_RC_GPU_IS_LOST), RL_EIO);
	assert_int_equal(telemetry_nvml_to_rl(4242), RL_EIO);
}

static void test_attribution_pure(void **state)
{
	(void)state;
	telemetry_proc_mem procs[] = {
		{100, 0, 1000}, {101, 0, 250}, {100, 1, 40},
		{102, 0, UINT64_MAX},  /* driver could not tell: skipped */
		{100, 0, 1000},        /* repeated record: counted once */
		{200, 0, 7},
	};
	telemetry_snapshot s = {.n_proc = 6, .proc = procs};
	uint32_t seg[] = {101, 100, 102, 100};
	/* device 0: 1000 (pid 100, once) + 250 (pid 101) */
	assert_int_equal(telemetry_snapshot_mem_for_pids(&s, 0, seg, 4), 1250);
	/* all devices: + 40 on device 1 */
	assert_int_equal(telemetry_snapshot_mem_for_pids(&s, -1, seg, 4), 1290);
	assert_int_equal(telemetry_snapshot_mem_for_pid(&s, 1, 100), 40);
	assert_int_equal(telemetry_snapshot_mem_for_pid(&s, 0, 999), 0);
	assert_int_equal(telemetry_snapshot_mem_for_pids(NULL, 0, seg, 4), 0);

	telemetry_proc_util u[] = {
		{100, 0, 30, 1, 1000}, {100, 0, 35, 1, 1500}, {101, 0, 20, 1, 900},
		{100, 1, 80, 1, 1200},
	};
	telemetry_snapshot su = {.n_util = 4, .util = u};
	/* newest of pid 100 on device 0 (35) + pid 101 (20) */
	assert_float_equal(telemetry_snapshot_util_for_pids(&su, 0, seg, 4), 55.0, 1e-9);
	assert_float_equal(telemetry_snapshot_util_for_pids(&su, -1, seg, 4), 135.0, 1e-9);
	uint32_t other = 7;
	assert_float_equal(telemetry_snapshot_util_for_pids(&su, 0, &other, 1), -1.0, 1e-9);
}

static void test_discovery(void **state)
{
	(void)state;
	use_script(two_gpus);
	telemetry *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(telemetry_open(&t, &err), 2);
	assert_true(telemetry_available(t));
	assert_string_equal(telemetry_driver_version(t), "550.54.15");
	assert_string_equal(telemetry_status(t), "NVML driver 550.54.15, 2 GPUs");
	assert_string_equal(telemetry_library(t), standin);
	assert_int_equal(telemetry_gpu_count(t), 2);
	const telemetry_gpu *g0 = telemetry_gpu_get(t, 0);
	const telemetry_gpu *g1 = telemetry_gpu_get(t, 1);
	assert_null(telemetry_gpu_get(t, 2));
	assert_int_equal(g0->index, 0);
	assert_string_equal(g0->uuid, "GPU-standin-0");
	assert_string_equal(g0->name, "NVIDIA Stand-in A100 40GB");
	assert_int_equal(g0->mem_total_mib, 40960);
	assert_int_equal(g0->mem_used_mib, 512 + 1000 + 2500);
	assert_int_equal(g0->mem_free_mib, 40960 - 4012);
	assert_string_equal(g1->uuid, "GPU-standin-1");
	assert_int_equal(g1->mem_total_mib, 81920);
	assert_int_equal(g1->mem_used_mib, 300);
	telemetry_close(t);
}

static void test_sampling(void **state)
{
	(void)state;
	use_script(two_gpus);
	telemetry *t = NULL;
	rl_err err;
	assert_int_equal(telemetry_open(&t, &err), 2);

	telemetry_snapshot s;
	assert_int_equal(telemetry_sample(t, 12.5, &s, &err), 0);
	assert_float_equal(s.now, 12.5, 0);
	assert_int_equal(s.n_dev, 2);
	assert_true(s.dev[0].util_valid);
	assert_int_equal(s.dev[0].util_gpu, 10);
	assert_int_equal(s.dev[0].util_mem, 5);
	assert_false(s.dev[1].util_valid); /* no util lines: not supported */
	assert_int_equal(s.dev[0].mem_used_mib, 4012);
	assert_int_equal(s.n_proc, 3);
	assert_int_equal(telemetry_snapshot_mem_for_pid(&s, 0, 4002), 2500);
	uint32_t seg[] = {4001, 4003};
	assert_int_equal(telemetry_snapshot_mem_for_pids(&s, -1, seg, 2), 1300);
	assert_int_equal(telemetry_snapshot_mem_for_pids(&s, 0, seg, 2), 1000);
	/* three per-process samples on GPU 0; pid 4001's newest says 35 */
	assert_int_equal(s.n_util, 3);
	assert_float_equal(telemetry_snapshot_util_for_pids(&s, 0, seg, 2), 35.0, 1e-9);
	telemetry_snapshot_fini(&s);
	telemetry_snapshot_fini(&s); /* idempotent */

	/* Next sample: utilisation advances to the second line; per-process
	 * samples already seen (timestamps <= 2000) are not returned again. */
	assert_int_equal(telemetry_sample(t, 13.0, &s, &err), 0);
	assert_int_equal(s.dev[0].util_gpu, 90);
	assert_int_equal(s.dev[0].util_mem, 40);
	assert_int_equal(s.n_util, 0);
	telemetry_snapshot_fini(&s);
	assert_int_equal(telemetry_sample(t, 14.0, &s, &err), 0);
	assert_int_equal(s.dev[0].util_gpu, 90); /* the last line repeats */
	telemetry_snapshot_fini(&s);
	telemetry_close(t);
}

/* More processes than the loader's first buffer: the grow-and-retry path. */
static void test_many_processes_and_pgid(void **state)
{
	(void)state;
	char script[4096];
	int n = snprintf(script, sizeof script, "device GPU-x 16384 Busy Board\n");
	/* Pids above the kernel's largest pid_max (2^22): no such process can
	 * exist, so none of them can be in our group.  (Pids near 5000 once
	 * were: a test run whose own pid was 5013.) */
	for (int i = 0; i < 20; i++)
		n += snprintf(script + n, sizeof script - (size_t)n, "proc 0 %d %d\n",
			      4194304 + 1 + i, 10 + i);
	/* this test process as a GPU client: its process group is its own */
	n += snprintf(script + n, sizeof script - (size_t)n, "proc 0 %d 777\n", (int)getpid());
	use_script(script);
	telemetry *t = NULL;
	rl_err err;
	assert_int_equal(telemetry_open(&t, &err), 1);
	telemetry_snapshot s;
	assert_int_equal(telemetry_sample(t, 0, &s, &err), 0);
	assert_int_equal(s.n_proc, 21);
	assert_int_equal(telemetry_snapshot_mem_for_pid(&s, 0, 4194304 + 20), 29);
	/* Ours holds 777 MiB. */
	assert_int_equal(telemetry_snapshot_mem_for_pgid(&s, 0, getpgrp()), 777);
	telemetry_snapshot_fini(&s);
	telemetry_close(t);
}

/* Dynamic mode: the "trial" changes its memory between samples.  The
 * stand-in lists only processes that exist (as NVML does), so the lines
 * name this test and its parent; a line of a process that has exited is
 * left out. */
static void test_dynamic_state(void **state)
{
	(void)state;
	char script[1024], statef[512];
	snprintf(statef, sizeof statef, "%s/state", tmpdir);
	snprintf(script, sizeof script, "device GPU-d 8192 Dyn\nstate %s\n", statef);
	use_script(script);
	telemetry *t = NULL;
	rl_err err;
	assert_int_equal(telemetry_open(&t, &err), 1);
	telemetry_snapshot s;
	assert_int_equal(telemetry_sample(t, 0, &s, &err), 0); /* no state file yet */
	assert_int_equal(s.n_proc, 0);
	assert_int_equal(s.dev[0].mem_used_mib, 0);
	telemetry_snapshot_fini(&s);

	FILE *f = fopen(statef, "w");
	assert_non_null(f);
	/* a child that has exited (reaped), so its pid names no process */
	pid_t gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	fprintf(f, "0 %d 1200\n0 %d 300\n0 %d 5000\n", (int)getpid(), (int)getppid(), (int)gone);
	fclose(f);
	assert_int_equal(telemetry_sample(t, 1, &s, &err), 0);
	assert_int_equal(s.n_proc, 2);
	assert_int_equal(s.dev[0].mem_used_mib, 1500);
	assert_int_equal(s.dev[0].mem_free_mib, 8192 - 1500);
	assert_int_equal(telemetry_snapshot_mem_for_pid(&s, 0, (uint32_t)getpid()), 1200);
	assert_int_equal(telemetry_snapshot_mem_for_pid(&s, 0, (uint32_t)gone), 0);
	telemetry_snapshot_fini(&s);
	telemetry_close(t);
}

/* The busy directive: time-based utilisation, so a process that uses a
 * sliver of the GPU reports 100 % as one that fills it (issue 26), and the
 * device reads 100 % while anything runs; an SM field still wins. */
static void test_busy_state(void **state)
{
	(void)state;
	char script[1024], statef[512];
	snprintf(statef, sizeof statef, "%s/state", tmpdir);
	snprintf(script, sizeof script, "device GPU-b0 4096 Busy\ndevice GPU-b1 4096 Busy\n"
		 "state %s\nbusy\n", statef);
	use_script(script);
	FILE *f = fopen(statef, "w");
	assert_non_null(f);
	fprintf(f, "0 %d 500\n0 %d 700 40\n", (int)getpid(), (int)getppid());
	fclose(f);
	telemetry *t = NULL;
	rl_err err;
	assert_int_equal(telemetry_open(&t, &err), 2);
	telemetry_snapshot s;
	assert_int_equal(telemetry_sample(t, 1, &s, &err), 0);
	assert_true(s.dev[0].util_valid);
	assert_int_equal(s.dev[0].util_gpu, 100);
	assert_true(s.dev[1].util_valid);
	assert_int_equal(s.dev[1].util_gpu, 0); /* nothing runs there */
	uint32_t me = (uint32_t)getpid(), parent = (uint32_t)getppid();
	assert_float_equal(telemetry_snapshot_util_for_pids(&s, 0, &me, 1), 100.0, 1e-9);
	assert_float_equal(telemetry_snapshot_util_for_pids(&s, 0, &parent, 1), 40.0, 1e-9);
	telemetry_snapshot_fini(&s);
	telemetry_close(t);
}

static void test_absent_library(void **state)
{
	(void)state;
	setenv("RELISH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	telemetry *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(telemetry_open(&t, &err), 0);
	assert_non_null(t);
	assert_false(telemetry_available(t));
	assert_int_equal(telemetry_gpu_count(t), 0);
	assert_string_equal(telemetry_status(t), "/nonexistent/libnvidia-ml.so.1 not found");
	telemetry_snapshot s;
	assert_int_equal(telemetry_sample(t, 3, &s, &err), 0);
	assert_int_equal(s.n_dev, 0);
	assert_int_equal(s.n_proc, 0);
	telemetry_snapshot_fini(&s);
	telemetry_close(t);
	telemetry_close(NULL);
}

static void test_library_without_nvml(void **state)
{
	(void)state;
	setenv("RELISH_NVML_LIBRARY", "libm.so.6", 1);
	telemetry *t = NULL;
	rl_err err;
	assert_int_equal(telemetry_open(&t, &err), 0);
	assert_false(telemetry_available(t));
	assert_string_equal(telemetry_status(t), "libm.so.6 lacks nvmlInit_v2");
	telemetry_close(t);
}

static void test_init_failure(void **state)
{
	(void)state;
	use_script("init_error 9\ndevice GPU-0 100 X\n");
	telemetry *t = NULL;
	rl_err err;
	assert_int_equal(telemetry_open(&t, &err), 0);
	assert_false(telemetry_available(t));
	assert_string_equal(telemetry_status(t),
			    "nvmlInit failed: NVML_ERROR_DRIVER_NOT_LOADED (Driver Not Loaded)");
	telemetry_close(t);
}

static void test_query_errors(void **state)
{
	(void)state;
	use_script("device GPU-0 100 X\nfail nvmlDeviceGetUUID 15\n");
	telemetry *t = NULL;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(telemetry_open(&t, &err), RL_EIO);
	assert_null(t);
	assert_string_equal(err.msg,
			    "NVML nvmlDeviceGetUUID on GPU 0: NVML_ERROR_GPU_IS_LOST (GPU is lost)");

	/* Unsupported per-process utilisation is no data, not an error... */
	use_script("device GPU-0 100 X\nproc 0 1 5\nfail nvmlDeviceGetProcessUtilization 3\n");
	assert_int_equal(telemetry_open(&t, &err), 1);
	telemetry_snapshot s;
	assert_int_equal(telemetry_sample(t, 0, &s, &err), 0);
	assert_int_equal(s.n_proc, 1);
	assert_int_equal(s.n_util, 0);
	telemetry_snapshot_fini(&s);
	telemetry_close(t);

	/* ...but a process list the driver refuses is. */
	use_script("device GPU-0 100 X\nfail nvmlDeviceGetComputeRunningProcesses_v3 4\n");
	assert_int_equal(telemetry_open(&t, &err), 1);
	memset(&s, 0x5a, sizeof s);
	telemetry_snapshot before = s;
	assert_int_equal(telemetry_sample(t, 0, &s, &err), RL_EIO);
	assert_memory_equal(&s, &before, sizeof s); /* untouched on failure */
	assert_string_equal(err.msg, "NVML nvmlDeviceGetComputeRunningProcesses on GPU 0: "
				     "NVML_ERROR_NO_PERMISSION (Insufficient Permissions)");
	telemetry_close(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_to_mib),
		cmocka_unit_test(test_code_mapping),
		cmocka_unit_test(test_attribution_pure),
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_sampling),
		cmocka_unit_test(test_many_processes_and_pgid),
		cmocka_unit_test(test_dynamic_state),
		cmocka_unit_test(test_busy_state),
		cmocka_unit_test(test_absent_library),
		cmocka_unit_test(test_library_without_nvml),
		cmocka_unit_test(test_init_failure),
		cmocka_unit_test(test_query_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
