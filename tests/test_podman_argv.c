/*
 * test_podman_argv.c - the container executor's pure half (container.c),
 * without an engine: the exact `podman run` / `docker run` command line for
 * CPU, CDI, device-node and MPS segments; environment filtering; names and
 * the owner id; `ps` output of both engines; and how exit codes seen
 * through an engine are classified.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/container.h"

/* Compare a NULL-terminated argv with the expected list, printing both. */
static void assert_argv(char **got, const char *const *want)
{
	size_t i = 0;
	for (; want[i]; i++) {
		if (!got[i])
			fail_msg("argv ends at %zu, expected \"%s\"", i, want[i]);
		if (strcmp(got[i], want[i]) != 0)
			fail_msg("argv[%zu] = \"%s\", expected \"%s\"", i, got[i], want[i]);
	}
	if (got[i])
		fail_msg("argv has extra \"%s\" at %zu", got[i], i);
}

/* The user is fixed here, so that the lines do not depend on who runs the
 * test; test_privileges checks the default user. */
static void base_options(container_options *o)
{
	container_options_default(o);
	o->image = "localhost/relish-host:latest";
	o->experiment = "exp 1";
	o->owner = "0123456789abcdef";
	o->user = "65534:65534";
}

/* What every container gets unless the spec grants more. */
#define LEAST "--cap-drop=all", "--security-opt=no-new-privileges", "--user=65534:65534", \
	      "--read-only", "--tmpfs=/tmp"

static void test_cpu_oneshot(void **state)
{
	(void)state;
	setenv("HOSTONLY", "same", 1);
	setenv("HOSTONLY2", "host", 1);
	setenv("RELISH_MODE", "oneshot", 1);
	container_options o;
	base_options(&o);
	container_mount m[] = {{"/usr", NULL, 1}, {"/data", "/in", 0}};
	o.mounts = m;
	o.n_mounts = 2;
	char *argv[] = {"/bin/ctrial", "--x", "0.3", NULL};
	/* HOSTONLY=same is relish's own value: inherited, left out.
	 * RELISH_MODE equals relish's too but describes the segment: kept. */
	char *envp[] = {"RELISH_TRIAL_ID=t7", "OMP_NUM_THREADS=1", "MY_VAR=x", "HOSTONLY=same",
			"HOSTONLY2=diff", "RELISH_MODE=oneshot", NULL};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .envp = envp,
			.memory_limit_mib = 512, .cpus = 1.5, .cwd = "/host/dir",
			.a = {.trial_id = "t7", .from = 3, .to = 9, .checkpoint_dir = "/ck/t7"}};
	char name[128];
	container_name(o.experiment, "t7", 9, 0xabcd, name, sizeof name);
	assert_string_equal(name, "relish-exp_1-t7-9-0000abcd");
	char **got = NULL;
	assert_int_equal(container_build_argv(&o, &es, name, "/tmp/x.cid", &got, NULL), 0);
	const char *want[] = {
		"podman", "run", "--init", "--name=relish-exp_1-t7-9-0000abcd",
		"--label=relish.owner=0123456789abcdef", "--label=relish.experiment=exp 1",
		"--label=relish.trial=t7", "--label=relish.segment=3-9", "--label=relish.mode=oneshot",
		"--network=none", "--pull=never", LEAST, "--memory=512m", "--memory-swap=512m", "--cpus=1.5",
		"--volume=/usr:/usr:ro", "--volume=/data:/in", "--volume=/ck/t7:/ck/t7",
		"--cidfile=/tmp/x.cid", "--env=RELISH_TRIAL_ID=t7", "--env=OMP_NUM_THREADS=1",
		"--env=MY_VAR=x", "--env=HOSTONLY2=diff", "--env=RELISH_MODE=oneshot",
		"--env=NVIDIA_VISIBLE_DEVICES=void", "--", "localhost/relish-host:latest", "/bin/ctrial", "--x", "0.3", NULL};
	assert_argv(got, want);
	contract_strv_free(got);

	/* docker, a network, a label prefix, no limits, no checkpoint. */
	o.engine = CONTAINER_DOCKER;
	o.network = "bridge";
	o.label_prefix = "hpo";
	o.n_mounts = 0;
	o.workdir = "/work";
	exec_spec es2 = {.mode = TRIAL_MODE_ONESHOT, .argv = argv,
			 .a = {.trial_id = "t8", .from = 0, .to = 1.5}};
	assert_int_equal(container_build_argv(&o, &es2, "n", NULL, &got, NULL), 0);
	const char *want2[] = {
		"docker", "run", "--init", "--name=n", "--label=hpo.owner=0123456789abcdef",
		"--label=hpo.experiment=exp 1", "--label=hpo.trial=t8", "--label=hpo.segment=0-1.5",
		"--label=hpo.mode=oneshot", "--network=bridge", "--pull=never", LEAST, "--workdir=/work",
		"--env=NVIDIA_VISIBLE_DEVICES=void", "--", "localhost/relish-host:latest", "/bin/ctrial", "--x", "0.3", NULL};
	assert_argv(got, want2);
	contract_strv_free(got);

	/* docker's bind mounts are --mount (a missing host path fails, where
	 * --volume would create it); a field with a comma or a quote is
	 * quoted as CSV. */
	container_mount dm[] = {{"/usr", NULL, 1}, {"/data,v1", "/in", 0}, {"/a\"b", "/q", 1}};
	o.mounts = dm;
	o.n_mounts = 3;
	o.network = NULL;
	o.workdir = NULL;
	o.mps_dir = "/tmp/mps";
	exec_spec es3 = {.mode = TRIAL_MODE_ONESHOT, .argv = argv,
			 .a = {.trial_id = "t9", .from = 0, .to = 1, .checkpoint_dir = "/ck/t9"}};
	assert_int_equal(container_build_argv(&o, &es3, "n", NULL, &got, NULL), 0);
	const char *want3[] = {
		"docker", "run", "--init", "--name=n", "--label=hpo.owner=0123456789abcdef",
		"--label=hpo.experiment=exp 1", "--label=hpo.trial=t9", "--label=hpo.segment=0-1",
		"--label=hpo.mode=oneshot", "--network=none", "--pull=never", LEAST,
		"--mount=type=bind,source=/usr,target=/usr,readonly",
		"--mount=type=bind,\"source=/data,v1\",target=/in",
		"--mount=type=bind,\"source=/a\"\"b\",target=/q,readonly",
		"--mount=type=bind,source=/ck/t9,target=/ck/t9",
		"--env=NVIDIA_VISIBLE_DEVICES=void", "--", "localhost/relish-host:latest", "/bin/ctrial", "--x", "0.3", NULL};
	assert_argv(got, want3);
	contract_strv_free(got);
}

static void test_gpu_cdi_mps_warm(void **state)
{
	(void)state;
	container_options o;
	base_options(&o);
	o.gpu_mode = CONTAINER_GPU_CDI;
	o.mps_dir = "/tmp/mps";
	char *argv[] = {"python3", "train.py", NULL};
	char *envp[] = {"CUDA_VISIBLE_DEVICES=GPU-a,GPU-b", "RELISH_GPU_MEMORY_MIB=4096", NULL};
	exec_spec es = {.mode = TRIAL_MODE_WARM, .argv = argv, .envp = envp,
			.a = {.trial_id = "t1", .from = 0, .to = 3}};
	char **got = NULL;
	assert_int_equal(container_build_argv(&o, &es, "c1", NULL, &got, NULL), 0);
	const char *want[] = {
		"podman", "run", "--rm", "--init", "-i", "--name=c1",
		"--label=relish.owner=0123456789abcdef", "--label=relish.experiment=exp 1",
		"--label=relish.trial=t1", "--label=relish.segment=0-3", "--label=relish.mode=warm",
		"--network=none", "--pull=never", LEAST, "--ipc=host", "--volume=/tmp/mps:/tmp/mps",
		"--device=nvidia.com/gpu=GPU-a", "--device=nvidia.com/gpu=GPU-b",
		"--env=CUDA_MPS_PIPE_DIRECTORY=/tmp/mps", "--env=CUDA_VISIBLE_DEVICES=GPU-a,GPU-b",
		"--env=RELISH_GPU_MEMORY_MIB=4096", "--env=NVIDIA_VISIBLE_DEVICES=GPU-a,GPU-b", "--",
		"localhost/relish-host:latest", "python3",
		"train.py", NULL};
	assert_argv(got, want);
	contract_strv_free(got);

	/* Indices: the container sees its devices as 0..k-1. */
	o.mps_dir = NULL;
	char *envp2[] = {"CUDA_VISIBLE_DEVICES=2,5", NULL};
	es.envp = envp2;
	es.mode = TRIAL_MODE_ONESHOT;
	assert_int_equal(container_build_argv(&o, &es, "c2", NULL, &got, NULL), 0);
	const char *want2[] = {
		"podman", "run", "--init", "--name=c2",
		"--label=relish.owner=0123456789abcdef", "--label=relish.experiment=exp 1",
		"--label=relish.trial=t1", "--label=relish.segment=0-3", "--label=relish.mode=oneshot",
		"--network=none", "--pull=never", LEAST, "--device=nvidia.com/gpu=2",
		"--device=nvidia.com/gpu=5", "--env=CUDA_VISIBLE_DEVICES=0,1",
		"--env=NVIDIA_VISIBLE_DEVICES=2,5", "--", "localhost/relish-host:latest", "python3", "train.py", NULL};
	assert_argv(got, want2);
	contract_strv_free(got);
}

static void test_gpu_devices(void **state)
{
	(void)state;
	container_options o;
	base_options(&o);
	o.gpu_mode = CONTAINER_GPU_DEVICES;
	const char *uuids[] = {"GPU-x", "GPU-y"};
	o.gpu_uuids = uuids;
	o.n_gpu_uuids = 2;
	char *argv[] = {"t", NULL};
	char *envp[] = {"CUDA_VISIBLE_DEVICES=GPU-y", NULL};
	exec_spec es = {.mode = TRIAL_MODE_WORKER, .argv = argv, .envp = envp, .a = {.to = 1}};
	char **got = NULL;
	assert_int_equal(container_build_argv(&o, &es, "c3", NULL, &got, NULL), 0);
	const char *want[] = {
		"podman", "run", "--rm", "--init", "-i", "--name=c3",
		"--label=relish.owner=0123456789abcdef", "--label=relish.experiment=exp 1",
		"--label=relish.trial=", "--label=relish.segment=0-1", "--label=relish.mode=worker",
		"--network=none", "--pull=never", LEAST, "--device=/dev/nvidia1", "--device=/dev/nvidiactl",
		"--device=/dev/nvidia-uvm", "--device=/dev/nvidia-uvm-tools",
		"--env=CUDA_VISIBLE_DEVICES=GPU-y",
		"--env=NVIDIA_VISIBLE_DEVICES=GPU-y", "--", "localhost/relish-host:latest", "t", NULL};
	assert_argv(got, want);
	contract_strv_free(got);

	char *envp2[] = {"CUDA_VISIBLE_DEVICES=GPU-unknown", NULL};
	es.envp = envp2;
	rl_err err;
	rl_err_clear(&err);
	got = NULL;
	assert_int_equal(container_build_argv(&o, &es, "c4", NULL, &got, &err), RL_EUNSUPPORTED);
	assert_null(got);
	assert_non_null(strstr(err.msg, "GPU-unknown"));

	char *none[] = {NULL};
	es.argv = none;
	assert_int_equal(container_build_argv(&o, &es, "c5", NULL, &got, &err), RL_EINVAL);
}

/* A transport is never handed to the engine, whatever let it through:
 * the command line is refused (spec_image.c). */
static void test_image_transport_refused(void **state)
{
	(void)state;
	container_options o;
	base_options(&o);
	char *argv[] = {"/bin/true", NULL};
	exec_spec es = {.argv = argv};
	char **out = NULL;
	rl_err err = {0};
	static const char *const images[] = {"docker-archive:/root/x.tar", "oci:/l:t", "dir:/root",
					     "--privileged"};
	for (size_t i = 0; i < sizeof images / sizeof images[0]; i++) {
		o.image = images[i];
		assert_int_equal(container_build_argv(&o, &es, "n", NULL, &out, &err), RL_EINVAL);
		assert_null(out);
		assert_non_null(strstr(err.msg, "expected"));
	}
	o.image = "localhost/relish-host:latest";
	assert_int_equal(container_build_argv(&o, &es, "n", NULL, &out, &err), 0);
	assert_non_null(out);
	contract_strv_free(out);
}

static void test_names_owner(void **state)
{
	(void)state;
	char name[128];
	container_name("my exp/1", "t:7", 1e6, 0xdeadbeef, name, sizeof name);
	assert_string_equal(name, "relish-my_exp_1-t_7-1e_06-deadbeef");
	container_name("e", NULL, 2, 1, name, sizeof name);
	assert_string_equal(name, "relish-e-worker-2-00000001");
	/* Long parts are cut, the tag always survives. */
	char longid[300];
	memset(longid, 'a', sizeof longid - 1);
	longid[sizeof longid - 1] = '\0';
	container_name(longid, longid, 3, 7, name, sizeof name);
	assert_true(strlen(name) <= 120);
	assert_non_null(strstr(name, "-3-00000007"));

	char id[32];
	/* FNV-1a 64 of the path (it does not exist, so it is used as given). */
	exec_owner_id("/nonexistent/relish/state.db", id, sizeof id);
	assert_string_equal(id, "7d7508dafc36c239");
	char id2[32];
	exec_owner_id("/nonexistent/relish/other.db", id2, sizeof id2);
	assert_string_not_equal(id, id2);
}

static const char podman_ps[] =
	"[\n {\"AutoRemove\": true, \"Id\": \"9155b16e03c2\", \"Labels\": {\"relish.owner\": \"abc\",\n"
	"   \"relish.trial\": \"t9\", \"relish.segment\": \"0-3\", \"relish.experiment\": \"e\"},\n"
	"  \"Names\": [\"relish-e-t9-3-00000001\"], \"State\": \"running\"},\n"
	" {\"Id\": \"77\", \"Labels\": {\"relish.owner\": \"abc\"}, \"Names\": [\"other\"],"
	" \"State\": \"exited\"}\n]\n";

static const char docker_ps[] =
	"{\"ID\":\"aa11\",\"Labels\":\"relish.owner=abc,relish.trial=t1,relish.segment=3-9\","
	"\"Names\":\"relish-e-t1-9-00000002\",\"State\":\"running\"}\n"
	"{\"ID\":\"bb22\",\"Labels\":\"relish.owner=abc\",\"Names\":\"x2\",\"State\":\"created\"}\n";

static void test_parse_ps(void **state)
{
	(void)state;
	container_info *v = NULL;
	size_t n = 0;
	assert_int_equal(container_parse_ps(podman_ps, NULL, &v, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "relish-e-t9-3-00000001");
	assert_string_equal(v[0].id, "9155b16e03c2");
	assert_string_equal(v[0].state, "running");
	assert_string_equal(v[0].trial, "t9");
	assert_string_equal(v[0].segment, "0-3");
	assert_string_equal(v[0].experiment, "e");
	assert_string_equal(v[1].name, "other");
	assert_string_equal(v[1].state, "exited");
	assert_string_equal(v[1].trial, "");
	free(v);

	assert_int_equal(container_parse_ps(docker_ps, "relish", &v, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].name, "relish-e-t1-9-00000002");
	assert_string_equal(v[0].id, "aa11");
	assert_string_equal(v[0].trial, "t1");
	assert_string_equal(v[0].segment, "3-9");
	assert_string_equal(v[1].state, "created");
	free(v);

	assert_int_equal(container_parse_ps("[]\n", NULL, &v, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	assert_int_equal(container_parse_ps("", NULL, &v, &n, NULL), 0);
	assert_int_equal(n, 0);
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(container_parse_ps("[{\"Names\": ", NULL, &v, &n, &err), RL_EPARSE);
	assert_non_null(strstr(err.msg, "container list"));
}

/* 1 when argv holds s. */
static int has_arg(char **argv, const char *s)
{
	for (; *argv; argv++)
		if (!strcmp(*argv, s))
			return 1;
	return 0;
}

/*
 * Least privilege by default, for both engines: every capability dropped,
 * no new privileges, a user that is not root (nobody when relish is root,
 * relish's own uid otherwise), a read-only root with a tmpfs /tmp.  What
 * the options grant (trial.privileges) comes back, and only that.
 */
static void test_privileges(void **state)
{
	(void)state;
	char *argv[] = {"/bin/ctrial", NULL};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .a = {.trial_id = "t1", .to = 1}};
	char def[32], user_arg[48];
	container_default_user(def, sizeof def);
	snprintf(user_arg, sizeof user_arg, "--user=%s", def);
	if (geteuid() == 0)
		assert_string_equal(def, "65534:65534");
	else
		assert_string_not_equal(def, "0:0");
	for (int docker = 0; docker < 2; docker++) {
		container_options o;
		base_options(&o);
		o.user = NULL;
		o.engine = docker ? CONTAINER_DOCKER : CONTAINER_PODMAN;
		char **got = NULL;
		assert_int_equal(container_build_argv(&o, &es, "n", NULL, &got, NULL), 0);
		assert_true(has_arg(got, "--cap-drop=all"));
		assert_true(has_arg(got, "--security-opt=no-new-privileges"));
		assert_true(has_arg(got, user_arg));
		assert_true(has_arg(got, "--read-only"));
		assert_true(has_arg(got, "--tmpfs=/tmp"));
		assert_true(has_arg(got, "--network=none"));
		assert_int_equal(has_arg(got, "--userns=keep-id"), !docker && geteuid() != 0);
		for (char **a = got; *a; a++)
			assert_true(strncmp(*a, "--cap-add", 9) != 0 && strcmp(*a, "--privileged") != 0);
		contract_strv_free(got);

		const char *caps[] = {"NET_RAW", "SYS_PTRACE"};
		o.cap_add = caps;
		o.n_cap_add = 2;
		o.user = "0:0";
		o.writable_root = 1;
		o.new_privileges = 1;
		assert_int_equal(container_build_argv(&o, &es, "n", NULL, &got, NULL), 0);
		const char *want[] = {
			docker ? "docker" : "podman", "run", "--init", "--name=n",
			"--label=relish.owner=0123456789abcdef", "--label=relish.experiment=exp 1",
			"--label=relish.trial=t1", "--label=relish.segment=0-1",
			"--label=relish.mode=oneshot", "--network=none", "--pull=never",
			"--cap-drop=all", "--cap-add=NET_RAW", "--cap-add=SYS_PTRACE", "--user=0:0",
			"--env=NVIDIA_VISIBLE_DEVICES=void", "--", "localhost/relish-host:latest", "/bin/ctrial", NULL};
		assert_argv(got, want);
		contract_strv_free(got);
	}
}

static exec_result ended(seg_outcome o, int exited, int code, int sig)
{
	exec_result r;
	memset(&r, 0, sizeof r);
	r.outcome = o;
	r.exited = exited;
	r.exit_code = code;
	r.term_signal = sig;
	snprintf(r.reason, sizeof r.reason, "exit code %d", code);
	return r;
}

static void test_classify(void **state)
{
	(void)state;
	exec_result r = ended(SEG_OUT_FAILED, 1, 125, 0);
	container_classify(&r, "Trying...\nError: localhost/nope: image not known\n", 0);
	assert_int_equal(r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r.fault, EXEC_FAULT_RUNTIME);
	assert_string_equal(r.reason, "container runtime: exit code 125: the image is missing (build "
				      "or pull it): Error: localhost/nope: image not known");

	/* docker's words, as a real docker 20.10 prints them */
	r = ended(SEG_OUT_FAILED, 1, 125, 0);
	container_classify(&r, "docker: Error response from daemon: No such image: "
			       "localhost/nope:latest.\nSee 'docker run --help'.\n", 0);
	assert_string_equal(r.reason, "container runtime: exit code 125: the image is missing (build "
				      "or pull it): docker: Error response from daemon: No such image: "
				      "localhost/nope:latest.");

	/* docker's init (tini) could not start the command: exit 127 */
	r = ended(SEG_OUT_FAILED, 1, 127, 0);
	container_classify(&r, "[FATAL tini (7)] exec /nonexistent/prog failed: No such file or "
			       "directory\n", 0);
	assert_string_equal(r.reason, "container runtime: exit code 127: the image cannot execute the "
				      "trial's command: [FATAL tini (7)] exec /nonexistent/prog failed: "
				      "No such file or directory");

	r = ended(SEG_OUT_FAILED, 1, 1, 0);
	container_classify(&r, "ERROR (catatonit:6): failed to exec pid1: No such file or directory\n", 0);
	assert_int_equal(r.fault, EXEC_FAULT_RUNTIME);
	assert_non_null(strstr(r.reason, "cannot execute the trial's command"));

	r = ended(SEG_OUT_FAILED, 1, 127, 0);
	container_classify(&r, NULL, 0);
	assert_string_equal(r.reason, "container runtime: exit code 127: the command was not found");

	r = ended(SEG_OUT_FAILED, 1, 137, 0);
	container_classify(&r, "RELISH epoch=1 accuracy=0.1\n", 64);
	assert_int_equal(r.outcome, SEG_OUT_OOM);
	assert_int_equal(r.fault, EXEC_FAULT_NONE);
	assert_string_equal(r.reason, "killed at the container\'s memory limit (64 MiB), its reservation");
	assert_string_equal(r.oom_marker, "exit 137");

	/* The trial's own failure stays the trial's. */
	r = ended(SEG_OUT_FAILED, 1, 1, 0);
	container_classify(&r, "Traceback ...\nValueError: bad lr\n", 64);
	assert_int_equal(r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r.fault, EXEC_FAULT_NONE);
	assert_string_equal(r.reason, "exit code 1");

	/* relish stopped it: whatever the code, it was cancelled / timed out. */
	r = ended(SEG_OUT_CANCELLED, 1, 137, 0);
	container_classify(&r, NULL, 64);
	assert_int_equal(r.outcome, SEG_OUT_CANCELLED);
	r = ended(SEG_OUT_TIMEOUT, 0, 0, 9);
	container_classify(&r, NULL, 64);
	assert_int_equal(r.outcome, SEG_OUT_TIMEOUT);
	/* The attach process killed by a signal: not an exit code of the trial. */
	r = ended(SEG_OUT_SIGNALED, 0, 0, 9);
	container_classify(&r, NULL, 64);
	assert_int_equal(r.outcome, SEG_OUT_SIGNALED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_cpu_oneshot),
		cmocka_unit_test(test_gpu_cdi_mps_warm),
		cmocka_unit_test(test_gpu_devices),
		cmocka_unit_test(test_names_owner),
		cmocka_unit_test(test_image_transport_refused),
		cmocka_unit_test(test_parse_ps),
		cmocka_unit_test(test_classify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
