/*
 * test_devices.c - the device list (devices file, NVML through the
 * stand-in, host measurement), sizes, and the environment a GPU segment
 * gets, with and without MPS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/units.h"
#include "telemetry/inventory.h"
#include "telemetry/gpu_env.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/relish-test-devices-XXXXXX");
	unsetenv("RELISH_DEVICES");
	unsetenv("RELISH_HOST_MEMORY");
	unsetenv("RELISH_HOST_CPUS");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Sizes in a devices file follow the spec's rules (common/units.h, tested
 * in test_units.c): GiB binary, GB decimal. */
static void test_sizes(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t mib;
	} good[] = {
		{"40GiB", 40960}, {"1.5G", 1536}, {"512", 512}, {"512 MiB", 512},
		{"2T", 2097152}, {"100K", 1}, {"80gb", 76294}, {" 7Mi", 7}, {"0.5GiB", 512},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		uint64_t v = 0;
		assert_int_equal(units_parse_size_mib(good[i].s, &v), 0);
		assert_int_equal(v, good[i].mib);
	}
	static const char *bad[] = {"abc", "-1G", "4GX", "", "G", "1e400", "12 parsecs"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t v = 99;
		assert_int_equal(units_parse_size_mib(bad[i], &v), UNITS_NOT_A_SIZE);
		assert_int_equal(v, 99); /* untouched on failure */
	}
	/* Through a devices file: 40GB is 40e9 bytes = 38147 MiB (rounded up). */
	device_list *l = NULL;
	rl_err err = {0};
	static const char text[] = "devices:\n  - name: A\n    memory: 40GB\n";
	assert_int_equal(devices_config_parse(text, sizeof text - 1, "t.yaml", NULL, &l, &err), 0);
	assert_string_equal(l->dev[0].info.name, "A");
	assert_int_equal(l->dev[0].info.mem_total_mib, 38147);
	device_list_free(l);
}

static void test_meminfo(void **state)
{
	(void)state;
	uint64_t t = 0, a = 0;
	assert_int_equal(devices_parse_meminfo("MemTotal:       25165824 kB\n"
					       "MemFree:         1000000 kB\n"
					       "MemAvailable:   16777216 kB\n", &t, &a), 0);
	assert_int_equal(t, 24576);
	assert_int_equal(a, 16384);
	assert_int_equal(devices_parse_meminfo("MemTotal: 1024 kB\n", &t, &a), -1);
}

static const char *good_yaml =
	"# planning: four A100s, one H100, a small host\n"
	"devices:\n"
	"  - name: A100\n"
	"    uuid: GPU-fake\n"
	"    memory: 40GiB\n"
	"    count: 4\n"
	"  - {name: H100, uuid: GPU-h100-0, memory: 80G}\n"
	"  - name: T4\n"
	"    memory: 15360\n"
	"host:\n"
	"  memory: 16GiB\n"
	"  cpus: 2\n";

static void test_config_yaml(void **state)
{
	(void)state;
	device_list *l = NULL;
	rl_err err;
	assert_int_equal(devices_config_parse(good_yaml, strlen(good_yaml), "plan.yaml", NULL, &l,
					      &err), 0);
	assert_int_equal(l->n, 7);
	assert_true(l->from_config);
	assert_string_equal(l->source, "plan.yaml");
	assert_string_equal(l->notice, "");
	static const char *uuids[] = {"GPU-fake-0", "GPU-fake-1", "GPU-fake-2", "GPU-fake-3",
				      "GPU-h100-0", "GPU-declared-5", "host"};
	static const uint64_t mem[] = {40960, 40960, 40960, 40960, 81920, 15360, 16384};
	for (size_t i = 0; i < 7; i++) {
		assert_string_equal(l->dev[i].info.uuid, uuids[i]);
		assert_int_equal(l->dev[i].info.mem_total_mib, mem[i]);
		assert_int_equal(l->dev[i].info.is_gpu, i < 6);
		assert_int_equal(l->dev[i].nvml_index, -1);
	}
	assert_string_equal(l->dev[0].info.name, "A100");
	assert_string_equal(l->dev[4].info.name, "H100");
	assert_float_equal(l->dev[0].info.compute_total, 100, 0);
	assert_string_equal(l->dev[6].info.name, "host");
	assert_float_equal(l->dev[6].info.compute_total, 2, 0);
	assert_int_equal(device_list_find(l, "GPU-fake-2"), 2);
	assert_int_equal(device_list_find(l, "host"), 6);
	assert_int_equal(device_list_find(l, "GPU-nope"), -1);
	device_list_free(l);
	device_list_free(NULL);
}

static void test_config_json_and_host(void **state)
{
	(void)state;
	const char *json = "{\n"
			   "  \"devices\": [\n"
			   "    {\"name\": \"L4\", \"uuid\": \"GPU-l4\", \"memory\": \"24GiB\", \"count\": 2}\n"
			   "  ],\n"
			   "  \"host\": \"none\"\n"
			   "}\n";
	device_list *l = NULL;
	rl_err err;
	assert_int_equal(devices_config_parse(json, strlen(json), "plan.json", NULL, &l, &err), 0);
	assert_int_equal(l->n, 2);
	assert_string_equal(l->dev[1].info.uuid, "GPU-l4-1");
	assert_int_equal(l->dev[1].info.mem_total_mib, 24576);
	device_list_free(l);

	/* host absent: measured here (RAM available, CPUs we may use); an
	 * explicit option wins over measurement, and env over nothing. */
	const char *gpus_only = "devices: [{name: X, memory: 1G}]\n";
	assert_int_equal(devices_config_parse(gpus_only, strlen(gpus_only), "g.yaml", NULL, &l,
					      &err), 0);
	assert_int_equal(l->n, 2);
	assert_true(l->dev[1].info.mem_total_mib > 0);
	assert_true(l->dev[1].info.compute_total >= 1);
	assert_int_equal(l->dev[1].info.mem_total_mib, l->dev[1].mem_free_mib);
	device_list_free(l);

	devices_options o = {.host_mem_mib = 3000, .host_cpus = 1.5};
	assert_int_equal(devices_config_parse(gpus_only, strlen(gpus_only), "g.yaml", &o, &l,
					      &err), 0);
	assert_int_equal(l->dev[1].info.mem_total_mib, 3000);
	assert_float_equal(l->dev[1].info.compute_total, 1.5, 0);
	device_list_free(l);

	setenv("RELISH_HOST_MEMORY", "8GiB", 1);
	setenv("RELISH_HOST_CPUS", "3", 1);
	assert_int_equal(devices_config_parse(gpus_only, strlen(gpus_only), "g.yaml", NULL, &l,
					      &err), 0);
	assert_int_equal(l->dev[1].info.mem_total_mib, 8192);
	assert_float_equal(l->dev[1].info.compute_total, 3, 0);
	device_list_free(l);
	setenv("RELISH_HOST_MEMORY", "plenty", 1);
	assert_int_equal(devices_config_parse(gpus_only, strlen(gpus_only), "g.yaml", NULL, &l,
					      &err), RL_EINVAL);
	assert_string_equal(err.msg, "RELISH_HOST_MEMORY: expected a size like 16GiB, got \"plenty\"");
	unsetenv("RELISH_HOST_MEMORY");
	unsetenv("RELISH_HOST_CPUS");
}

static void test_config_errors(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{"devices:\n  - name: A100\n    memroy: 40GiB\n",
		 "bad.yaml:3:5: devices[0]: unknown key \"memroy\" (expected one of: name, uuid, "
		 "memory, count)"},
		{"devices:\n  - name: A\n    memory: lots\n",
		 "bad.yaml:3:13: devices[0].memory: expected a size like 40GiB, got \"lots\""},
		{"devices:\n  - name: A\n  - name: B\n",
		 "bad.yaml:2:5: devices[0].memory: required"},
		{"devices:\n  - {name: A, memory: 1G, count: 0}\n",
		 "bad.yaml:2:34: devices[0].count: expected a whole number from 1 to 1024, got \"0\""},
		{"devices:\n  - {name: A, memory: 1G, uuid: GPU-a}\n  - {name: B, memory: 1G, uuid: GPU-a}\n",
		 "bad.yaml:3:33: devices[1]: UUID GPU-a is declared twice"},
		{"- name: A\n", "bad.yaml:1:1: (top): expected a mapping with devices: and/or host:, got a list"},
		{"", "bad.yaml:1:1: (top): expected a mapping with devices: and/or host:, got an empty file"},
		{"host:\n  cpus: many\n", "bad.yaml:2:9: host.cpus: expected a positive number, got \"many\""},
		{"host: none\n", "bad.yaml:1:1: (top): declares no device (no devices and host: none)"},
		{"devices: {name: A}\n", "bad.yaml:1:10: devices: expected a list of devices, got a mapping"},
		{"devices: []\ndevices: []\n", "bad.yaml:2:1: (top): key \"devices\" appears twice"},
		{"gpus: []\n", "bad.yaml:1:1: (top): unknown key \"gpus\" (expected one of: devices, host)"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		device_list *l = (device_list *)0x1;
		rl_err err;
		rl_err_clear(&err);
		int rc = devices_config_parse(cases[i].text, strlen(cases[i].text), "bad.yaml", NULL,
					      &l, &err);
		if (rc != RL_EPARSE || strcmp(err.msg, cases[i].msg))
			print_error("case %zu: rc %d msg '%s'\n", i, rc, err.msg);
		assert_int_equal(rc, RL_EPARSE);
		assert_string_equal(err.msg, cases[i].msg);
		assert_ptr_equal(l, (device_list *)0x1); /* untouched */
	}
	/* A syntax error names the place libyaml found it. */
	const char *broken = "devices:\n  - name: [A\n";
	device_list *l = NULL;
	rl_err err;
	assert_int_equal(devices_config_parse(broken, strlen(broken), "bad.yaml", NULL, &l, &err),
			 RL_EPARSE);
	assert_int_equal(strncmp(err.msg, "bad.yaml:3:1: ", 14), 0);
}

static void test_config_file_and_env(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/devices.yaml", tmpdir);
	write_file(path, good_yaml);
	setenv("RELISH_DEVICES", path, 1);
	device_list *l = NULL;
	rl_err err;
	assert_int_equal(devices_discover(NULL, &l, &err), 0);
	assert_true(l->from_config);
	assert_string_equal(l->source, path);
	assert_int_equal(l->n, 7);
	device_list_free(l);
	unsetenv("RELISH_DEVICES");

	devices_options o = {.config_path = "/nonexistent/devices.yaml"};
	assert_int_equal(devices_discover(&o, &l, &err), RL_EIO);
	assert_string_equal(err.msg, "devices file /nonexistent/devices.yaml: No such file or directory");
}

static void test_from_nvml_standin(void **state)
{
	(void)state;
	char script[512], lib[512];
	snprintf(script, sizeof script, "%s/nvml-script", tmpdir);
	write_file(script, "driver 535.1\n"
			   "device GPU-s-0 24576 NVIDIA Stand-in L4\n"
			   "device GPU-s-1 24576 NVIDIA Stand-in L4\n"
			   "proc 1 77 2048\n");
	const char *b = getenv("RELISH_BUILD");
	snprintf(lib, sizeof lib, "%s/libnvidia-ml-standin.so", b ? b : ".");
	setenv("RELISH_NVML_LIBRARY", lib, 1);
	setenv("RELISH_NVML_SCRIPT", script, 1);
	device_list *l = NULL;
	rl_err err;
	devices_options o = {.host_mem_mib = 1000, .host_cpus = 2};
	assert_int_equal(devices_discover(&o, &l, &err), 0);
	assert_string_equal(l->source, "nvml");
	assert_string_equal(l->notice, "");
	assert_int_equal(l->n, 3);
	assert_string_equal(l->dev[0].info.uuid, "GPU-s-0");
	assert_string_equal(l->dev[1].info.name, "NVIDIA Stand-in L4");
	assert_int_equal(l->dev[1].nvml_index, 1);
	assert_int_equal(l->dev[1].info.mem_total_mib, 24576);
	assert_int_equal(l->dev[1].mem_used_mib, 2048);
	assert_int_equal(l->dev[1].mem_free_mib, 24576 - 2048);
	assert_float_equal(l->dev[1].info.compute_total, 100, 0);
	assert_string_equal(l->dev[2].info.uuid, "host");
	assert_int_equal(l->dev[2].info.mem_total_mib, 1000);
	device_list_free(l);

	/* No driver: host only, and a notice to print once. */
	setenv("RELISH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
	assert_int_equal(devices_discover(&o, &l, &err), 0);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->source, "host");
	assert_string_equal(l->notice, "no NVIDIA driver (/nonexistent/libnvidia-ml.so.1 not found): "
				       "using the host only");
	device_list_free(l);
	unsetenv("RELISH_NVML_LIBRARY");
	unsetenv("RELISH_NVML_SCRIPT");
}

static const char *env_get(const env_var *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return v[i].value;
	return NULL;
}

static void test_gpu_env(void **state)
{
	(void)state;
	const char *one[] = {"GPU-aaaa"};
	gpu_env_request r = {.n_dev = 1, .uuids = one, .mem_mib = 4096, .compute_pct = 50};
	env_var *v = NULL;
	size_t n = 0;
	rl_err err;
	assert_int_equal(gpu_env_build(&r, &v, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0].name, "CUDA_VISIBLE_DEVICES");
	assert_string_equal(v[0].value, "GPU-aaaa");
	assert_string_equal(v[1].name, "RELISH_GPU_MEMORY_MIB");
	assert_string_equal(v[1].value, "4096");
	assert_string_equal(v[2].name, "TF_FORCE_GPU_ALLOW_GROWTH");
	assert_string_equal(v[2].value, "true");
	gpu_env_free(v, n);

	/* MPS: the share and the cap become limits the server enforces. */
	r.mps = 1;
	r.mps_pipe_dir = "/run/mps";
	assert_int_equal(gpu_env_build(&r, &v, &n, &err), 0);
	assert_int_equal(n, 6);
	assert_string_equal(v[3].name, "CUDA_MPS_PIPE_DIRECTORY");
	assert_string_equal(v[3].value, "/run/mps");
	assert_string_equal(v[4].name, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
	assert_string_equal(v[4].value, "50");
	assert_string_equal(v[5].name, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
	assert_string_equal(v[5].value, "0=4096MB");
	gpu_env_free(v, n);

	/* A gang of two devices: ordinals as the trial sees them. */
	const char *two[] = {"GPU-aaaa", "GPU-bbbb"};
	gpu_env_request g = {.n_dev = 2, .uuids = two, .mem_mib = 2048, .compute_pct = 33.5,
			     .mps = 1, .mps_pipe_dir = "/tmp/nvidia-mps"};
	assert_int_equal(gpu_env_build(&g, &v, &n, &err), 0);
	assert_string_equal(env_get(v, n, "CUDA_VISIBLE_DEVICES"), "GPU-aaaa,GPU-bbbb");
	assert_string_equal(env_get(v, n, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=2048MB,1=2048MB");
	assert_string_equal(env_get(v, n, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "34");
	gpu_env_free(v, n);

	/* Shares are clamped to 1..100; no reservation means no caps. */
	static const struct {
		double pct;
		const char *want;
	} clamp[] = {{0.3, "1"}, {140, "100"}, {99.4, "99"}};
	for (size_t i = 0; i < 3; i++) {
		gpu_env_request c = {.n_dev = 1, .uuids = one, .compute_pct = clamp[i].pct,
				     .mps = 1, .mps_pipe_dir = "/d"};
		assert_int_equal(gpu_env_build(&c, &v, &n, &err), 0);
		assert_string_equal(env_get(v, n, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), clamp[i].want);
		assert_null(env_get(v, n, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"));
		assert_null(env_get(v, n, "RELISH_GPU_MEMORY_MIB"));
		gpu_env_free(v, n);
	}
	gpu_env_free(NULL, 0);

	/* Bad requests. */
	v = (env_var *)0x1;
	const char *bad[] = {"GPU-a,GPU-b"};
	gpu_env_request e1 = {.n_dev = 1, .uuids = bad};
	assert_int_equal(gpu_env_build(&e1, &v, &n, &err), RL_EINVAL);
	assert_string_equal(err.msg, "GPU environment: device 0: expected a UUID, got \"GPU-a,GPU-b\"");
	gpu_env_request e2 = {.n_dev = 1, .uuids = one, .mps = 1};
	assert_int_equal(gpu_env_build(&e2, &v, &n, &err), RL_EINVAL);
	assert_string_equal(err.msg, "GPU environment: MPS needs its pipe directory");
	gpu_env_request e3 = {.n_dev = 0, .uuids = one};
	assert_int_equal(gpu_env_build(&e3, &v, &n, &err), RL_EINVAL);
	assert_ptr_equal(v, (env_var *)0x1);
}

static void test_mps_detect(void **state)
{
	(void)state;
	char dir[512] = "unchanged", mps[512], ctl[600];
	snprintf(mps, sizeof mps, "%s/mps", tmpdir);
	assert_int_equal(gpu_mps_detect_in(mps, dir, sizeof dir), 0); /* no directory */
	assert_string_equal(dir, "unchanged");
	assert_int_equal(mkdir(mps, 0700), 0);
	snprintf(ctl, sizeof ctl, "%s/control", mps);
	write_file(ctl, "stale\n");
	assert_int_equal(gpu_mps_detect_in(mps, dir, sizeof dir), 0); /* leftover file */
	assert_int_equal(unlink(ctl), 0);
	assert_int_equal(mkfifo(ctl, 0600), 0);
	assert_int_equal(gpu_mps_detect_in(mps, dir, sizeof dir), 1);
	assert_string_equal(dir, mps);
	setenv("CUDA_MPS_PIPE_DIRECTORY", mps, 1);
	strcpy(dir, "x");
	assert_int_equal(gpu_mps_detect(dir, sizeof dir), 1);
	assert_string_equal(dir, mps);
	unsetenv("CUDA_MPS_PIPE_DIRECTORY");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_config_yaml),
		cmocka_unit_test(test_config_json_and_host),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_file_and_env),
		cmocka_unit_test(test_from_nvml_standin),
		cmocka_unit_test(test_gpu_env),
		cmocka_unit_test(test_mps_detect),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
