/*
 * test_slurm_cmd.c - the slurm executor's pure half (slurm/slurm_cmd.c),
 * without Slurm: the exact sbatch command line for GPU, shard and CPU
 * segments; the job's name and comment and their parser; squeue output,
 * the job-completion file and the step wrapper's lines, as Slurm 22.05 and
 * sacct and relish slurm-step print them; job states as outcomes; shards from a
 * memory reservation; the environment sbatch gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"

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

static void test_shards(void **state)
{
	(void)state;
	/* 16 GiB GPU in 4 shards of 4 GiB */
	assert_int_equal(slurm_shards_for(6144, 16384, 4), 2);  /* 1.5 shards: 2 */
	assert_int_equal(slurm_shards_for(8192, 16384, 4), 2);  /* exactly 2 */
	assert_int_equal(slurm_shards_for(8193, 16384, 4), 3);
	assert_int_equal(slurm_shards_for(12288, 16384, 4), 3);
	assert_int_equal(slurm_shards_for(1, 16384, 4), 1);
	assert_int_equal(slurm_shards_for(0, 16384, 4), 1);
	/* the whole GPU (or more): ask for the GPU, not shards */
	assert_int_equal(slurm_shards_for(12289, 16384, 4), 0);
	assert_int_equal(slurm_shards_for(16384, 16384, 4), 0);
	assert_int_equal(slurm_shards_for(40000, 16384, 4), 0);
	/* unknown sizes */
	assert_int_equal(slurm_shards_for(4096, 0, 4), 0);
	assert_int_equal(slurm_shards_for(4096, 16384, 0), 0);
	/* 80 GiB in 8 */
	assert_int_equal(slurm_shards_for(20000, 81920, 8), 2);
}

static void test_sbatch_argv_shards(void **state)
{
	(void)state;
	slurm_options o;
	slurm_options_default(&o);
	o.experiment = "svc";
	o.owner = "0123456789abcdef";
	o.partition = "gpu";
	o.qos = "normal";
	const char *svc[] = {"--exclusive=user"};
	o.sbatch_args = svc;
	o.n_sbatch_args = 1;
	const char *pre[] = {"--constraint=a100"};
	const char *own[] = {"--mail-type=NONE", "--reservation=hpo"};
	exec_cluster_request c = {.node = "n2", .shards = 2, .mem_mib = 2048, .seq = 3,
				  .experiment = "exp.1", .account = "ml", .pre_args = pre,
				  .n_pre_args = 1, .args = own, .n_args = 2};
	char *argv[] = {"/opt/ctrial", "--x", "0.3 $HOME", NULL};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .cwd = "/work/exp",
			.log_path = "/shared/runs/t7/seg-3.log", .timeout_s = 90, .cpus = 1.5,
			.a = {.trial_id = "t7", .from = 3, .to = 9}, .cluster = &c};
	char **got = NULL;
	assert_int_equal(slurm_build_sbatch_argv(&o, &es, "/state/relish-step.sh", &got, NULL), 0);
	const char *want[] = {
		"sbatch", "--parsable", "--job-name=relish-exp.1-t7-s3",
		"--comment=relish owner=0123456789abcdef experiment=exp.1 trial=t7 segment=3-9 seq=3",
		"--output=/shared/runs/t7/seg-3.log", "--error=/shared/runs/t7/seg-3.log",
		"--open-mode=append", "--no-requeue", "--nodes=1", "--ntasks=1", "--cpus-per-task=2",
		"--mem=2048M", "--gres=shard:2", "--nodelist=n2", "--time=2", "--partition=gpu",
		"--account=ml", "--qos=normal", "--exclusive=user", "--constraint=a100",
		"--mail-type=NONE", "--reservation=hpo", "--export=ALL", "--chdir=/work/exp",
		"/state/relish-step.sh", "/opt/ctrial", "--x", "0.3 $HOME", NULL};
	assert_argv(got, want);
	contract_strv_free(got);
}

static void test_sbatch_argv_gpu_cpu(void **state)
{
	(void)state;
	slurm_options o;
	slurm_options_default(&o);
	o.experiment = "exp 2";
	o.owner = "ffff";
	o.sbatch = "/usr/local/bin/sbatch";
	o.default_mem_mib = 1000;
	/* a gang of two whole GPUs, no node, memory from the default */
	exec_cluster_request c = {.gpus = 2, .seq = 0};
	char *argv[] = {"python3", NULL};
	exec_spec es = {.mode = TRIAL_MODE_ONESHOT, .argv = argv, .log_path = "/l",
			.a = {.trial_id = "t1", .from = 0, .to = 1.5}, .cluster = &c};
	char **got = NULL;
	assert_int_equal(slurm_build_sbatch_argv(&o, &es, "/s.sh", &got, NULL), 0);
	const char *want[] = {
		"/usr/local/bin/sbatch", "--parsable", "--job-name=relish-exp_2-t1-s0",
		"--comment=relish owner=ffff experiment=exp 2 trial=t1 segment=0-1.5 seq=0",
		"--output=/l", "--error=/l", "--open-mode=append", "--no-requeue", "--nodes=1",
		"--ntasks=1", "--cpus-per-task=1", "--mem=1000M", "--gres=gpu:2", "--export=ALL",
		"/s.sh", "python3", NULL};
	assert_argv(got, want);
	contract_strv_free(got);

	/* a host (CPU) segment: the reservation is --mem, no gres; a timeout
	 * of exactly one minute is one minute */
	exec_cluster_request h = {.node = "n1", .mem_mib = 185, .seq = 4};
	es.cluster = &h;
	es.memory_limit_mib = 999; /* cluster->mem_mib wins */
	es.timeout_s = 60;
	es.cpus = 2;
	assert_int_equal(slurm_build_sbatch_argv(&o, &es, "/s.sh", &got, NULL), 0);
	const char *want2[] = {
		"/usr/local/bin/sbatch", "--parsable", "--job-name=relish-exp_2-t1-s4",
		"--comment=relish owner=ffff experiment=exp 2 trial=t1 segment=0-1.5 seq=4",
		"--output=/l", "--error=/l", "--open-mode=append", "--no-requeue", "--nodes=1",
		"--ntasks=1", "--cpus-per-task=2", "--mem=185M", "--nodelist=n1", "--time=1",
		"--export=ALL", "/s.sh", "python3", NULL};
	assert_argv(got, want2);
	contract_strv_free(got);

	/* what is missing is said */
	rl_err err = {0};
	es.cluster = NULL;
	assert_int_equal(slurm_build_sbatch_argv(&o, &es, "/s.sh", &got, &err), RL_EINVAL);
	assert_non_null(strstr(err.msg, "cluster request"));
	es.cluster = &h;
	es.log_path = NULL;
	assert_int_equal(slurm_build_sbatch_argv(&o, &es, "/s.sh", &got, &err), RL_EINVAL);
	assert_non_null(strstr(err.msg, "output file"));
}

static void test_identity(void **state)
{
	(void)state;
	char name[64];
	slurm_job_name("my exp/1", "t12", 7, name, sizeof name);
	assert_string_equal(name, "relish-my_exp_1-t12-s7");
	slurm_ident id = {.owner = "0123456789abcdef", .experiment = "ctrial", .trial = "t3",
			  .from = 2.5, .to = 27, .seq = 11};
	char c[256];
	slurm_job_comment(&id, c, sizeof c);
	assert_string_equal(c, "relish owner=0123456789abcdef experiment=ctrial trial=t3 "
			       "segment=2.5-27 seq=11");
	slurm_ident back;
	assert_int_equal(slurm_parse_comment(c, &back), 0);
	assert_string_equal(back.owner, id.owner);
	assert_string_equal(back.experiment, "ctrial");
	assert_string_equal(back.trial, "t3");
	assert_true(back.from == 2.5 && back.to == 27);
	assert_int_equal(back.seq, 11);
	/* not relish's */
	assert_int_equal(slurm_parse_comment("(null)", &back), -1);
	assert_int_equal(slurm_parse_comment("", &back), -1);
	assert_int_equal(slurm_parse_comment("relish owner=x experiment=e trial=t1", &back), -1);
	assert_int_equal(slurm_parse_comment("relish owner=x experiment=e trial=t1 segment=a-b seq=1",
					     &back), -1);
	assert_int_equal(slurm_parse_comment("relish owner=x experiment=e trial=t1 segment=0-1 seq=-2",
					     &back), -1);
	/* a key inside another word is not the key */
	assert_int_equal(slurm_parse_comment("relish xowner=x experiment=e trial=t1 segment=0-1 seq=2",
					     &back), -1);
}

/* squeue -h -t all -u 0 -O SLURM_SQUEUE_FORMAT, as printed by 22.05 */
static const char squeue_text[] =
	"12248346|CANCELLED|Resources|0||j.sh|(null)|\n"
	"12248350|FAILED|NonZeroExitCode|768|n1|k.sh|(null)|\n"
	"12248354|FAILED|JobLaunchFailure|11|n2|k.sh|(null)|\n"
	"12248352|OUT_OF_MEMORY|OutOfMemory|253|n1|k.sh|(null)|\n"
	"12248353|COMPLETING|None|0|n1|relish-x-t1-s0|relish owner=abc experiment=x trial=t1 "
	"segment=0-1 seq=0|\n"
	"12248360|PENDING|Resources|0||relish-x-t2-s1|relish owner=abc experiment=x trial=t2 "
	"segment=1-3 seq=1|\n"
	"99|RUNNING|None|0|n2|other|a comment | with bars|\n"
	"not a job line\n"
	"12248361|RUNNING|None|0|n1|short";

static void test_parse_squeue(void **state)
{
	(void)state;
	slurm_job *v = NULL;
	size_t n = 0;
	assert_int_equal(slurm_parse_squeue(squeue_text, &v, &n, NULL), 0);
	assert_int_equal(n, 7);
	assert_int_equal(v[0].id, 12248346);
	assert_string_equal(v[0].state, "CANCELLED");
	assert_string_equal(v[0].node, "");
	assert_false(v[0].is_relish);
	assert_int_equal(v[1].exit_raw, 768);
	assert_string_equal(v[1].reason, "NonZeroExitCode");
	assert_int_equal(v[2].exit_raw, 11);
	assert_string_equal(v[3].state, "OUT_OF_MEMORY");
	assert_true(v[4].is_relish);
	assert_string_equal(v[4].ident.owner, "abc");
	assert_string_equal(v[4].ident.trial, "t1");
	assert_string_equal(v[4].name, "relish-x-t1-s0");
	assert_string_equal(v[4].node, "n1");
	assert_true(v[5].is_relish);
	assert_int_equal(v[5].ident.seq, 1);
	assert_string_equal(v[5].state, "PENDING");
	/* someone's comment with bars: kept whole, not relish's */
	assert_int_equal(v[6].id, 99);
	assert_false(v[6].is_relish);
	free(v);
	assert_int_equal(slurm_parse_squeue("", &v, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_null(v);
}

static void test_parse_jobcomp(void **state)
{
	(void)state;
	slurm_job j;
	const char *l1 =
		"JobId=12248350 UserId=root(0) GroupId=root(0) Name=k.sh JobState=FAILED "
		"Partition=main TimeLimit=UNLIMITED StartTime=2026-12-01T20:03:45 "
		"EndTime=2026-12-01T20:03:45 NodeList=n1 NodeCnt=1 ProcCnt=1 WorkDir=/tmp "
		"ReservationName= Tres=cpu=1,mem=100M,node=1,billing=1 Account= QOS= WcKey= "
		"Cluster=unknown SubmitTime=2026-12-01T20:03:45 EligibleTime=2026-12-01T20:03:45 "
		"DerivedExitCode=0:0 ExitCode=3:0 ";
	assert_int_equal(slurm_parse_jobcomp_line(l1, &j), 0);
	assert_int_equal(j.id, 12248350);
	assert_string_equal(j.state, "FAILED");
	assert_string_equal(j.node, "n1");
	assert_string_equal(j.name, "k.sh");
	assert_int_equal(j.exit_raw, 3 << 8);
	const char *l2 = "JobId=7 UserId=root(0) Name=relish-e-t1-s0 JobState=CANCELLED "
			 "NodeList=(null) DerivedExitCode=0:0 ExitCode=0:11 ";
	assert_int_equal(slurm_parse_jobcomp_line(l2, &j), 0);
	assert_string_equal(j.state, "CANCELLED");
	assert_string_equal(j.node, "");
	assert_int_equal(j.exit_raw, 11);
	assert_int_equal(slurm_parse_jobcomp_line("garbage JobId=3", &j), -1);
	assert_int_equal(slurm_parse_jobcomp_line("JobId=x JobState=FAILED", &j), -1);
	assert_int_equal(slurm_parse_jobcomp_line("JobId=4 Name=a", &j), -1);
}

static void test_parse_sacct(void **state)
{
	(void)state;
	slurm_job j;
	assert_int_equal(slurm_parse_sacct_line("4242|COMPLETED|0:0|n1", &j), 0);
	assert_int_equal(j.id, 4242);
	assert_string_equal(j.state, "COMPLETED");
	assert_int_equal(j.exit_raw, 0);
	assert_string_equal(j.node, "n1");
	assert_int_equal(slurm_parse_sacct_line("7|FAILED|3:0|n2\n", &j), 0);
	assert_int_equal(j.exit_raw, 3 << 8);
	assert_string_equal(j.node, "n2");
	assert_int_equal(slurm_parse_sacct_line("8|CANCELLED by 0|0:15|None assigned", &j), 0);
	assert_string_equal(j.state, "CANCELLED");
	assert_int_equal(j.exit_raw, 15);
	assert_string_equal(j.node, "");
	assert_int_equal(slurm_parse_sacct_line("8.batch|CANCELLED|0:15|n1", &j), -1);
	assert_int_equal(slurm_parse_sacct_line("JobID|State|ExitCode|NodeList", &j), -1);
	assert_int_equal(slurm_parse_sacct_line("9|OUT_OF_MEMORY", &j), -1);
}

static void test_states(void **state)
{
	(void)state;
	const char *fin[] = {"COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED",
			     "CANCELLED by 0", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"};
	for (size_t i = 0; i < sizeof fin / sizeof *fin; i++)
		if (!slurm_state_final(fin[i]))
			fail_msg("%s should be final", fin[i]);
	const char *live[] = {"PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED",
			      "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT", "COMPLETEDX"};
	for (size_t i = 0; i < sizeof live / sizeof *live; i++)
		if (slurm_state_final(live[i]))
			fail_msg("%s should not be final", live[i]);

	exec_result r;
	slurm_job_outcome("COMPLETED", 0, "None", &r);
	assert_int_equal(r.outcome, SEG_OUT_COMPLETED);
	assert_int_equal(r.exited, 1);
	assert_int_equal(r.exit_code, 0);
	slurm_job_outcome("FAILED", 768, "NonZeroExitCode", &r);
	assert_int_equal(r.outcome, SEG_OUT_FAILED);
	assert_int_equal(r.exit_code, 3);
	assert_string_equal(r.reason, "exit code 3");
	slurm_job_outcome("FAILED", 11, "JobLaunchFailure", &r);
	assert_int_equal(r.outcome, SEG_OUT_SIGNALED);
	assert_int_equal(r.term_signal, SIGSEGV);
	assert_non_null(strstr(r.reason, "SIGSEGV"));
	slurm_job_outcome("FAILED", -1, "JobLaunchFailure", &r);
	assert_int_equal(r.outcome, SEG_OUT_FAILED);
	assert_non_null(strstr(r.reason, "JobLaunchFailure"));
	slurm_job_outcome("TIMEOUT", 0, "TimeLimit", &r);
	assert_int_equal(r.outcome, SEG_OUT_TIMEOUT);
	slurm_job_outcome("OUT_OF_MEMORY", 253, "OutOfMemory", &r);
	assert_int_equal(r.outcome, SEG_OUT_OOM);
	assert_non_null(strstr(r.reason, "OUT_OF_MEMORY"));
	slurm_job_outcome("CANCELLED", 0, "None", &r);
	assert_int_equal(r.outcome, SEG_OUT_CANCELLED);
	slurm_job_outcome("NODE_FAIL", 0, "NodeDown", &r);
	assert_int_equal(r.outcome, SEG_OUT_LOST);
	assert_non_null(strstr(r.reason, "NODE_FAIL"));
	slurm_job_outcome("PREEMPTED", 0, "None", &r);
	assert_int_equal(r.outcome, SEG_OUT_LOST);
	slurm_job_outcome("REVOKED", 0, "None", &r);
	assert_int_equal(r.outcome, SEG_OUT_FAILED);
	assert_non_null(strstr(r.reason, "REVOKED"));
}

static void test_step_lines(void **state)
{
	(void)state;
	slurm_step_line s;
	const char *a = "relish-slurm: start node=n2 gpus=0,1 at=1796156182.171803";
	assert_int_equal(slurm_parse_step_line(a, strlen(a), &s), 0);
	assert_int_equal(s.kind, 1);
	assert_string_equal(s.node, "n2");
	assert_int_equal(s.n_gpus, 2);
	assert_int_equal(s.gpu[0], 0);
	assert_int_equal(s.gpu[1], 1);
	assert_true(s.at > 1796156182.17 && s.at < 1796156182.18);
	const char *b = "relish-slurm: start node=n1 gpus= at=5\r";
	assert_int_equal(slurm_parse_step_line(b, strlen(b), &s), 0);
	assert_int_equal(s.n_gpus, 0);
	const char *c = "relish-slurm: end exit=3 peak_rss_mib=413 peak_gpu_mib=1200 at=7.5";
	assert_int_equal(slurm_parse_step_line(c, strlen(c), &s), 0);
	assert_int_equal(s.kind, 2);
	assert_int_equal(s.exited, 1);
	assert_int_equal(s.exit_code, 3);
	assert_int_equal(s.peak_rss_mib, 413);
	assert_int_equal(s.peak_gpu_mib, 1200);
	const char *d = "relish-slurm: end signal=9 peak_rss_mib=6 peak_gpu_mib=0 at=7";
	assert_int_equal(slurm_parse_step_line(d, strlen(d), &s), 0);
	assert_int_equal(s.exited, 0);
	assert_int_equal(s.term_signal, 9);
	const char *bad[] = {"relish-slurm: end peak_rss_mib=1", "relish-slurm: begin x=1",
			     "RELISH epoch=1 accuracy=0.5", "relish-slurm: cannot run x: No such file",
			     "relish-slurm: end exit=300 at=1"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (slurm_parse_step_line(bad[i], strlen(bad[i]), &s) == 0)
			fail_msg("\"%s\" parsed as a wrapper line", bad[i]);
}

static void test_submit_env(void **state)
{
	(void)state;
	char *envp[] = {"PATH=/usr/bin", "SLURM_JOB_ID=5", "SLURM_CONF=/etc/x.conf",
			"SLURM_MEM_PER_NODE=100", "RELISH_TRIAL_ID=t1", "SLURMX=kept", NULL};
	char **v = slurm_submit_env(envp);
	assert_non_null(v);
	const char *want[] = {"PATH=/usr/bin", "SLURM_CONF=/etc/x.conf", "RELISH_TRIAL_ID=t1",
			      "SLURMX=kept", NULL};
	setenv("SLURM_CONF", "/relish/own.conf", 1);
	assert_argv(v, want);
	contract_strv_free(v);
	/* a trial environment without SLURM_CONF gets relish's own */
	v = slurm_submit_env(envp + 3);
	const char *want2[] = {"RELISH_TRIAL_ID=t1", "SLURMX=kept", "SLURM_CONF=/relish/own.conf",
			       NULL};
	assert_argv(v, want2);
	contract_strv_free(v);
	unsetenv("SLURM_CONF");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shards),
		cmocka_unit_test(test_sbatch_argv_shards),
		cmocka_unit_test(test_sbatch_argv_gpu_cpu),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_parse_squeue),
		cmocka_unit_test(test_parse_jobcomp),
		cmocka_unit_test(test_parse_sacct),
		cmocka_unit_test(test_states),
		cmocka_unit_test(test_step_lines),
		cmocka_unit_test(test_submit_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
