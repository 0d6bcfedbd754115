/*
 * test_contract.c - the trial contract's pure parts: metric lines (good,
 * bad, garbage, huge), argv substitution, the environment, the warm/worker
 * command and the outcome classification table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/contract.h"

static void test_metric_line(void **state)
{
	(void)state;
	contract_line l;
	const char *s = "RELISH epoch=3 accuracy=0.91 loss=0.3";
	assert_int_equal(contract_parse_line(s, strlen(s), &l), CONTRACT_METRICS);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.m[0].name, "epoch");
	assert_float_equal(l.m[0].value, 3, 0);
	assert_string_equal(l.m[1].name, "accuracy");
	assert_float_equal(l.m[1].value, 0.91, 0);
	double v;
	assert_true(contract_metric_get(&l, "loss", &v));
	assert_float_equal(v, 0.3, 0);
	assert_false(contract_metric_get(&l, "nope", &v));

	s = "RELISH  step=10\tval/acc=1e-3 top-1.x=-2.5\r";
	assert_int_equal(contract_parse_line(s, strlen(s), &l), CONTRACT_METRICS);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.m[1].name, "val/acc");
	assert_float_equal(l.m[1].value, 0.001, 0);
	assert_string_equal(l.m[2].name, "top-1.x");
	assert_float_equal(l.m[2].value, -2.5, 0);
}

static void test_control_lines(void **state)
{
	(void)state;
	contract_line l;
	assert_int_equal(contract_parse_line("RELISH_DONE to=9", 16, &l), CONTRACT_DONE);
	assert_float_equal(l.done_to, 9, 0);
	assert_int_equal(contract_parse_line("RELISH_READY", 12, &l), CONTRACT_READY);
	assert_int_equal(contract_parse_line("RELISH_READY!", 13, &l), CONTRACT_BAD);
	assert_int_equal(contract_parse_line("RELISH_DONE", 11, &l), CONTRACT_BAD);
	assert_int_equal(contract_parse_line("RELISH_DONE at=3", 16, &l), CONTRACT_BAD);
	assert_int_equal(contract_parse_line("RELISH_DONE to=3 x=1", 20, &l), CONTRACT_BAD);
	/* Not addressed to relish: plain log. */
	const char *logs[] = {"", "training loss=0.3", "RELISHX a=1", "RELISH_DONEX to=1",
			      "RELISH", "relish is starting", "relish: epoch 3 done",
			      "Relishing a=1"};
	for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++)
		assert_int_equal(contract_parse_line(logs[i], strlen(logs[i]), &l), CONTRACT_LOG);
	/* Log that looks like a metric line that missed the format: NEAR,
	 * with a why that says what the format wants. */
	const struct {
		const char *line, *why;
	} near[] = {
		{"relish: epoch=3 val_acc=0.91", "no colon"},
		{"RELISH: epoch=1 val_acc=0.9", "no colon"},
		{"relish epoch=1", "in capitals"},
		{"  RELISH a=1", "beginning of the line"},
		{"RELISH\ta=1", "one space"},
		{"Relish, a=1", "no colon or comma"},
	};
	for (size_t i = 0; i < sizeof near / sizeof near[0]; i++) {
		assert_int_equal(contract_parse_line(near[i].line, strlen(near[i].line), &l),
				 CONTRACT_NEAR);
		assert_non_null(strstr(l.why, near[i].why));
		assert_int_equal(l.n, 0);
	}
	/* Commas between pairs: BAD, and the why says so. */
	assert_int_equal(contract_parse_line("RELISH epoch=1, val_acc=0.9", 27, &l), CONTRACT_BAD);
	assert_non_null(strstr(l.why, "not commas"));
}

static void test_bad_metric_lines(void **state)
{
	(void)state;
	const char *bads[] = {
		"RELISH ",            "RELISH a",           "RELISH a=",
		"RELISH a=nan",       "RELISH a=inf",       "RELISH a=0x10",
		"RELISH a=1 a=2",     "RELISH 1a=2",        "RELISH a=1e400",
		"RELISH a=1,b=2",     "RELISH =3",          "RELISH a=1.2.3",
		"RELISH a==1",
	};
	contract_line l;
	for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
		assert_int_equal(contract_parse_line(bads[i], strlen(bads[i]), &l), CONTRACT_BAD);
		assert_non_null(l.why);
		assert_int_equal(l.n, 0);
	}
	/* 63-character name is fine, 64 is not; 32 pairs fine, 33 not. */
	char line[4096];
	snprintf(line, sizeof line, "RELISH %s=1", "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabc");
	assert_int_equal(contract_parse_line(line, strlen(line), &l), CONTRACT_METRICS);
	snprintf(line, sizeof line, "RELISH %s=1", "abcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcdefghijabcd");
	assert_int_equal(contract_parse_line(line, strlen(line), &l), CONTRACT_BAD);
	strcpy(line, "RELISH");
	for (int i = 0; i < 32; i++)
		sprintf(line + strlen(line), " m%d=%d", i, i);
	assert_int_equal(contract_parse_line(line, strlen(line), &l), CONTRACT_METRICS);
	assert_int_equal(l.n, 32);
	assert_float_equal(l.m[31].value, 31, 0);
	strcat(line, " m32=32");
	assert_int_equal(contract_parse_line(line, strlen(line), &l), CONTRACT_BAD);
}

static void test_huge_and_garbage(void **state)
{
	(void)state;
	size_t n = 10u << 20;
	char *big = malloc(n);
	assert_non_null(big);
	memset(big, 'A', n);
	contract_line l;
	assert_int_equal(contract_parse_line(big, n, &l), CONTRACT_LOG);
	memcpy(big, "RELISH a=1 ", 11);
	assert_int_equal(contract_parse_line(big, n, &l), CONTRACT_BAD);
	/* Random bytes (with NULs and newlines inside): never a crash; the
	 * RELISH-prefixed ones are BAD or METRICS, all else LOG. */
	uint64_t s = 7;
	for (int k = 0; k < 20000; k++) {
		size_t len = k % 200;
		for (size_t i = 0; i < len; i++) {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			big[i] = (char)(s >> 56);
		}
		if (k % 3 == 0 && len > 7)
			memcpy(big, "RELISH ", 7);
		contract_kind kd = contract_parse_line(big, len, &l);
		if (k % 3 == 0 && len > 7)
			assert_true(kd == CONTRACT_BAD || kd == CONTRACT_METRICS);
		assert_true(l.n <= CONTRACT_MAX_METRICS);
	}
	free(big);
}

/* lr (loguniform) 0.001, hidden (int) 64, model (choice) "cnn", drop_out_rate 0.25 */
static rl_value ch[2] = {{.type = VAL_STR, .str = "mlp"}, {.type = VAL_STR, .str = "cnn"}};
static param_def ps[4] = {
	{.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-4, .high = 1e-1},
	{.name = "hidden", .kind = PARAM_INT, .low = 16, .high = 256, .log = 1},
	{.name = "model", .kind = PARAM_CHOICE, .n_choices = 2, .choices = ch},
	{.name = "drop_out_rate", .kind = PARAM_UNIFORM, .low = 0, .high = 0.5},
};
static rl_value vals[4] = {{.type = VAL_FLOAT, .f = 0.001}, {.type = VAL_INT, .i = 64},
			   {.type = VAL_STR, .str = "cnn"}, {.type = VAL_FLOAT, .f = 0.25}};
static space sp = {.n = 4, .params = ps};
static config cf = {.n = 4, .v = vals};

static contract_vars vars(void)
{
	contract_vars v = {.space = &sp, .config = &cf, .trial_id = "t7", .checkpoint_dir = "/ck/t7",
			   .from = 3, .to = 9, .mode = TRIAL_MODE_ONESHOT, .cpus = 2.5};
	return v;
}

static void expect_subst(const char *tmpl, const char *want)
{
	contract_vars v = vars();
	char *out = NULL;
	assert_int_equal(contract_subst(tmpl, &v, &out, NULL), 0);
	assert_string_equal(out, want);
	free(out);
}

static void expect_subst_error(const char *tmpl, const char *in_msg)
{
	contract_vars v = vars();
	char *out = (char *)"untouched";
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(contract_subst(tmpl, &v, &out, &e), RL_ESPEC);
	assert_string_equal(out, "untouched");
	assert_non_null(strstr(e.msg, in_msg));
}

static void test_subst(void **state)
{
	(void)state;
	expect_subst("--lr={lr}", "--lr=0.001");
	expect_subst("{model}-{hidden}", "cnn-64");
	expect_subst("{drop_out_rate}", "0.25");
	expect_subst("{trial_id}:{checkpoint_dir}:{resource_from}:{resource_to}", "t7:/ck/t7:3:9");
	expect_subst("{{lr}} {{{lr}}} }}{{", "{lr} {0.001} }{");
	expect_subst("plain", "plain");
	expect_subst("", "");
	expect_subst_error("{nope}", "unknown placeholder {nope}");
	expect_subst_error("--x={lr", "malformed placeholder");
	expect_subst("a}b", "a}b"); /* a lone closing brace is literal, as in the spec */
	expect_subst_error("{}", "malformed placeholder");

	char *argv[] = {"python3", "train.py", "--lr", "{lr}", "--ckpt={checkpoint_dir}", NULL};
	char **out;
	contract_vars v = vars();
	assert_int_equal(contract_subst_argv(argv, &v, &out, NULL), 0);
	assert_string_equal(out[3], "0.001");
	assert_string_equal(out[4], "--ckpt=/ck/t7");
	assert_null(out[5]);
	contract_strv_free(out);
	char *bad[] = {"x", "{zzz}", NULL};
	assert_int_equal(contract_subst_argv(bad, &v, &out, NULL), RL_ESPEC);
}

/* trial.env values hold placeholders as arguments do, never through a
 * shell: "$x" and quotes stay verbatim. */
static void test_env_placeholders(void **state)
{
	(void)state;
	env_var senv[] = {
		{.name = "EV", .value = "[lr={lr}] TID=[{trial_id}]"},
		{.name = "CK", .value = "{checkpoint_dir}/{resource_from}-{resource_to}"},
		{.name = "LIT", .value = "{{lr}} $HOME '{model}'"},
	};
	contract_vars v = vars();
	char **env = NULL;
	assert_int_equal(contract_env_build(NULL, senv, 3, &v, NULL, 0, &env, NULL), 0);
	assert_string_equal(contract_env_get(env, "EV"), "[lr=0.001] TID=[t7]");
	assert_string_equal(contract_env_get(env, "CK"), "/ck/t7/3-9");
	assert_string_equal(contract_env_get(env, "LIT"), "{lr} $HOME 'cnn'");
	contract_strv_free(env);

	env_var bad[] = {{.name = "B", .value = "x={zzz}"}};
	rl_err e;
	rl_err_clear(&e);
	env = NULL;
	assert_int_equal(contract_env_build(NULL, bad, 1, &v, NULL, 0, &env, &e), RL_ESPEC);
	assert_null(env);
	assert_non_null(strstr(e.msg, "trial.env.B"));
	assert_non_null(strstr(e.msg, "unknown placeholder {zzz}"));
}

static void test_env(void **state)
{
	(void)state;
	char *parent[] = {"PATH=/bin", "OMP_NUM_THREADS=8", "HOME=/root", "RELISH_TRIAL_ID=old", NULL};
	env_var senv[] = {{.name = "FOO", .value = "bar"}};
	env_var extra[] = {{.name = "CUDA_VISIBLE_DEVICES", .value = "1"}};
	contract_vars v = vars();
	v.gpu_memory_mib = 2048;
	char **env;
	assert_int_equal(contract_env_build(parent, senv, 1, &v, extra, 1, &env, NULL), 0);
	struct { const char *k, *v; } want[] = {
		{"PATH", "/bin"}, {"HOME", "/root"}, {"FOO", "bar"},
		{"OMP_NUM_THREADS", "2"}, {"OPENBLAS_NUM_THREADS", "2"}, {"MKL_NUM_THREADS", "2"},
		{"RELISH_TRIAL_ID", "t7"}, {"RELISH_CHECKPOINT_DIR", "/ck/t7"},
		{"RELISH_RESOURCE_FROM", "3"}, {"RELISH_RESOURCE_TO", "9"}, {"RELISH_MODE", "oneshot"},
		{"RELISH_CPUS", "2.5"}, {"RELISH_RESOURCE", "epoch"}, {"RELISH_GPU_MEMORY_MIB", "2048"},
		{"RELISH_PARAM_LR", "0.001"}, {"RELISH_PARAM_HIDDEN", "64"}, {"RELISH_PARAM_MODEL", "cnn"},
		{"RELISH_PARAM_DROP_OUT_RATE", "0.25"}, {"CUDA_VISIBLE_DEVICES", "1"},
		{"RELISH_PARAMS", "{\"lr\":0.001,\"hidden\":64,\"model\":\"cnn\",\"drop_out_rate\":0.25}"},
	};
	size_t n = 0;
	while (env[n])
		n++;
	assert_int_equal(n, sizeof want / sizeof want[0]); /* no duplicates */
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const char *got = contract_env_get(env, want[i].k);
		assert_non_null(got);
		assert_string_equal(got, want[i].v);
	}
	contract_strv_free(env);

	/* The spec may set the thread count; a small share still gets 1. */
	env_var omp[] = {{.name = "OMP_NUM_THREADS", .value = "4"}};
	v.cpus = 0.5;
	assert_int_equal(contract_env_build(NULL, omp, 1, &v, NULL, 0, &env, NULL), 0);
	assert_string_equal(contract_env_get(env, "OMP_NUM_THREADS"), "4");
	assert_string_equal(contract_env_get(env, "OPENBLAS_NUM_THREADS"), "1");
	contract_strv_free(env);

	/* Worker mode: the assignment comes on stdin, not in the environment. */
	v.mode = TRIAL_MODE_WORKER;
	v.cpus = 0;
	assert_int_equal(contract_env_build(parent, NULL, 0, &v, NULL, 0, &env, NULL), 0);
	assert_string_equal(contract_env_get(env, "RELISH_MODE"), "worker");
	assert_string_equal(contract_env_get(env, "RELISH_TRIAL_ID"), "old"); /* parent's, untouched */
	assert_null(contract_env_get(env, "RELISH_PARAMS"));
	assert_null(contract_env_get(env, "RELISH_PARAM_LR"));
	assert_string_equal(contract_env_get(env, "OMP_NUM_THREADS"), "1");
	contract_strv_free(env);

	char name[64];
	contract_param_env_name("batch_size", name, sizeof name);
	assert_string_equal(name, "RELISH_PARAM_BATCH_SIZE");
	contract_param_env_name("Ä-x", name, sizeof name);
	assert_string_equal(name, "RELISH_PARAM____X"); /* prefix _, two UTF-8 bytes, then - */
}

static void test_run_command(void **state)
{
	(void)state;
	char *c = contract_run_command("t7", "{\"lr\":0.001}", 3, 9, "/ck");
	assert_string_equal(c, "{\"cmd\":\"run\",\"trial_id\":\"t7\",\"params\":{\"lr\":0.001},"
			       "\"from\":3,\"to\":9,\"checkpoint_dir\":\"/ck\"}\n");
	free(c);
	c = contract_run_command(NULL, NULL, 2.5, 4, NULL);
	assert_string_equal(c, "{\"cmd\":\"run\",\"from\":2.5,\"to\":4}\n");
	free(c);
	assert_null(contract_run_command("t", "not json", 0, 1, NULL));
	assert_string_equal(CONTRACT_STOP_COMMAND, "{\"cmd\":\"stop\"}\n");
}

static void test_classify(void **state)
{
	(void)state;
	const char *markers[] = {
		"RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB",
		"torch.OutOfMemoryError: ...",
		"tensorflow.python.framework.errors_impl.ResourceExhaustedError: RESOURCE_EXHAUSTED: OOM",
		"CUDA error: cudaErrorMemoryAllocation",
		"CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate",
		"cuDNN error: CUDNN_STATUS_ALLOC_FAILED",
		"jaxlib.xla_extension.XlaRuntimeError: CUDA_ERROR_OUT_OF_MEMORY",
		"terminate called after throwing an instance of 'std::bad_alloc'",
		"MemoryError",
		"fork: Cannot allocate memory",
		"malloc: out of memory",
	};
	for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
		contract_exit x = {.exited = 1, .exit_code = 1, .log_tail = markers[i]};
		assert_int_equal(contract_classify(&x), SEG_OUT_OOM);
		contract_exit ok = {.exited = 1, .exit_code = 0, .log_tail = markers[i]};
		assert_int_equal(contract_classify(&ok), SEG_OUT_COMPLETED);
	}
	struct { contract_exit x; seg_outcome want; } rows[] = {
		{{.exited = 1, .exit_code = 0}, SEG_OUT_COMPLETED},
		{{.exited = 1, .exit_code = 1, .log_tail = "ValueError: bad"}, SEG_OUT_FAILED},
		{{.exited = 1, .exit_code = 137}, SEG_OUT_FAILED},
		{{.exited = 1, .exit_code = 137, .container = 1}, SEG_OUT_OOM},
		{{.exited = 0, .term_signal = 9}, SEG_OUT_SIGNALED},
		{{.exited = 0, .term_signal = 11}, SEG_OUT_SIGNALED},
		{{.exited = 0, .term_signal = 6, .log_tail = "std::bad_alloc"}, SEG_OUT_OOM},
		{{.exited = 0, .term_signal = 9, .mem_exceeded = 1}, SEG_OUT_OOM},
		{{.exited = 0, .term_signal = 15, .timed_out = 1}, SEG_OUT_TIMEOUT},
		{{.exited = 1, .exit_code = 0, .cancelled = 1}, SEG_OUT_CANCELLED},
		{{.exited = 0, .term_signal = 9, .cancelled = 1, .timed_out = 1}, SEG_OUT_CANCELLED},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
		assert_string_equal(seg_outcome_name(contract_classify(&rows[i].x)),
				    seg_outcome_name(rows[i].want));
	assert_null(contract_oom_marker("all fine"));
	assert_null(contract_oom_marker(NULL));
	assert_string_equal(contract_oom_marker("x CUDA out of memory y"), "CUDA out of memory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_line),     cmocka_unit_test(test_control_lines),
		cmocka_unit_test(test_bad_metric_lines), cmocka_unit_test(test_huge_and_garbage),
		cmocka_unit_test(test_subst),           cmocka_unit_test(test_env),
		cmocka_unit_test(test_env_placeholders),
		cmocka_unit_test(test_run_command),     cmocka_unit_test(test_classify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
