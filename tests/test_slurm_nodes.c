/*
 * test_slurm_nodes.c - a Slurm cluster as devices (slurm/slurm_nodes.c):
 * `scontrol show node -o` and `show partition -o` lines as Slurm 22.05
 * prints them (with typed GRES, socket bindings, features), which nodes
 * are usable, the device list the core places on (GPUs with their memory
 * from a feature or the configured size, one host per node, partitions),
 * and device uuids back to node and GPU; a scontrol that cannot be run is
 * RL_ERUNTIME naming it (the capture once returned -1, which became
 * RL_EINTERNAL on the way up).
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm_nodes.h"

static const char nodes_text[] =
	"NodeName=n1 Arch=x86_64 CoresPerSocket=1  CPUAlloc=3 CPUEfctv=4 CPUTot=4 CPULoad=3.98 "
	"AvailableFeatures=(null) ActiveFeatures=(null) Gres=gpu:2,shard:8 NodeAddr=127.0.0.1 "
	"NodeHostName=localhost Port=50729 Version=22.05.8 OS=Linux 6.18 #1 SMP  RealMemory=4096 "
	"AllocMem=300 FreeMem=22171 Sockets=4 Boards=1 State=MIXED ThreadsPerCore=1 TmpDisk=0 "
	"Weight=1 Owner=N/A MCS_label=N/A Partitions=main  BootTime=2026-12-01T19:41:51 "
	"CfgTRES=cpu=4,mem=4G,billing=4 AllocTRES=cpu=3,mem=300M CapWatts=n/a\n"
	"NodeName=g7 Arch=x86_64 CPUAlloc=0 CPUTot=64 AvailableFeatures=a100,gpumem_80G "
	"ActiveFeatures=a100,gpumem_80G Gres=gpu:a100:4(S:0-1),shard:a100:32(S:0-1) "
	"RealMemory=515000 AllocMem=0 State=IDLE Partitions=gpu,main\n"
	"NodeName=n3 CPUTot=8 Gres=gpu:1 RealMemory=8000 State=DOWN* Partitions=main\n"
	"NodeName=n4 CPUTot=8 Gres=(null) RealMemory=8000 State=IDLE+DRAIN Partitions=main\n"
	"NodeName=c1 CPUTot=16 Gres=(null) RealMemory=32000 State=ALLOCATED Partitions=cpu,main\n";

static void test_parse_nodes(void **state)
{
	(void)state;
	slurm_node *v = NULL;
	size_t n = 0;
	assert_int_equal(slurm_nodes_parse(nodes_text, &v, &n, NULL), 0);
	assert_int_equal(n, 5);
	assert_string_equal(v[0].name, "n1");
	assert_true(v[0].usable);
	assert_true(v[0].cpus == 4 && v[0].alloc_cpus == 3);
	assert_int_equal(v[0].mem_mib, 4096);
	assert_int_equal(v[0].alloc_mem_mib, 300);
	assert_int_equal(v[0].gpus, 2);
	assert_int_equal(v[0].shards, 8);
	assert_int_equal(slurm_node_shards_per_gpu(&v[0]), 4);
	assert_int_equal(v[0].gpu_mem_mib, 0);
	assert_string_equal(v[1].gpu_type, "a100");
	assert_int_equal(v[1].gpus, 4);
	assert_int_equal(v[1].shards, 32);
	assert_int_equal(slurm_node_shards_per_gpu(&v[1]), 8);
	assert_int_equal(v[1].gpu_mem_mib, 80 * 1024);
	assert_true(slurm_node_in_partition(&v[1], "gpu"));
	assert_true(slurm_node_in_partition(&v[1], "main"));
	assert_false(slurm_node_in_partition(&v[1], "mai"));
	assert_false(slurm_node_in_partition(&v[0], "gpu"));
	assert_false(v[2].usable); /* DOWN*, not responding */
	assert_false(v[3].usable); /* draining */
	assert_true(v[4].usable);  /* busy is usable */
	assert_int_equal(v[4].gpus, 0);
	assert_int_equal(slurm_node_shards_per_gpu(&v[4]), 0);
	free(v);
}

/* Numbers a broken or hostile scontrol may print: huge, NaN, a Gres count
 * of thousands (each GPU would be a device) or a sum past INT_MAX. */
static void test_parse_absurd_numbers(void **state)
{
	(void)state;
	const char *text =
		"NodeName=x1 CPUTot=1e300 RealMemory=nan AllocMem=inf State=IDLE "
		"Gres=gpu:15000,gpu:99999,gpu:99999 Partitions=p\n";
	slurm_node *v = NULL;
	size_t n = 0;
	assert_int_equal(slurm_nodes_parse(text, &v, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].gpus, SLURM_NODE_GPUS_MAX);
	assert_true(v[0].cpus == INT_MAX);
	assert_int_equal(v[0].mem_mib, 0);
	assert_int_equal(v[0].alloc_mem_mib, INT_MAX);
	device_list *l = NULL;
	assert_int_equal(slurm_devices_build(v, n, NULL, 1024, &l, NULL), 0);
	assert_int_equal(l->n, SLURM_NODE_GPUS_MAX + 1);
	device_list_free(l);
	free(v);
}

static void test_parse_partitions(void **state)
{
	(void)state;
	const char *t = "PartitionName=main AllowGroups=ALL Default=YES State=UP Nodes=n[1-2]\n"
			"PartitionName=gpu Default=NO State=DOWN Nodes=g7\n";
	slurm_partition *p = NULL;
	size_t n = 0;
	assert_int_equal(slurm_partitions_parse(t, &p, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0].name, "main");
	assert_true(p[0].is_default && p[0].up);
	assert_false(p[1].is_default || p[1].up);
	free(p);
}

static void test_devices(void **state)
{
	(void)state;
	slurm_node *v = NULL;
	size_t n = 0;
	assert_int_equal(slurm_nodes_parse(nodes_text, &v, &n, NULL), 0);
	device_list *l = NULL;
	/* main with 16 GiB for GPUs without a feature: n1's 2 GPUs, g7's 4
	 * (80 GiB from its feature), then the hosts n1, g7, c1; n3 and n4
	 * are not usable */
	assert_int_equal(slurm_devices_build(v, n, "main", 16384, &l, NULL), 0);
	assert_int_equal(l->n, 9);
	assert_string_equal(l->dev[0].info.uuid, "slurm:n1:gpu0");
	assert_string_equal(l->dev[0].info.name, "n1 gpu0");
	assert_int_equal(l->dev[0].info.mem_total_mib, 16384);
	assert_true(l->dev[0].info.is_gpu);
	assert_true(l->dev[0].info.compute_total == 100);
	assert_string_equal(l->dev[2].info.uuid, "slurm:g7:gpu0");
	assert_string_equal(l->dev[2].info.name, "g7 gpu0 a100");
	assert_int_equal(l->dev[5].info.mem_total_mib, 81920);
	assert_string_equal(l->dev[6].info.uuid, "slurm:n1");
	assert_false(l->dev[6].info.is_gpu);
	assert_int_equal(l->dev[6].info.mem_total_mib, 4096);
	assert_true(l->dev[6].info.compute_total == 4);
	assert_string_equal(l->dev[8].info.uuid, "slurm:c1");
	assert_string_equal(l->source, "slurm partition main");
	assert_non_null(strstr(l->notice, "n3 (DOWN*)"));
	assert_non_null(strstr(l->notice, "n4 (IDLE+DRAIN)"));
	device_list_free(l);
	/* no size given: n1's GPUs are left out, and the notice says why */
	assert_int_equal(slurm_devices_build(v, n, "main", 0, &l, NULL), 0);
	assert_int_equal(l->n, 7);
	assert_string_equal(l->dev[0].info.uuid, "slurm:g7:gpu0");
	assert_non_null(strstr(l->notice, "GPUs of n1 are left out"));
	assert_non_null(strstr(l->notice, "gpu_memory"));
	device_list_free(l);
	/* another partition */
	assert_int_equal(slurm_devices_build(v, n, "cpu", 0, &l, NULL), 0);
	assert_int_equal(l->n, 1);
	assert_string_equal(l->dev[0].info.uuid, "slurm:c1");
	device_list_free(l);
	free(v);
}

static void test_device_parse(void **state)
{
	(void)state;
	char node[64];
	int gpu;
	assert_int_equal(slurm_device_parse("slurm:n1:gpu3", node, sizeof node, &gpu), 0);
	assert_string_equal(node, "n1");
	assert_int_equal(gpu, 3);
	assert_int_equal(slurm_device_parse("slurm:c1", node, sizeof node, &gpu), 0);
	assert_string_equal(node, "c1");
	assert_int_equal(gpu, -1);
	assert_int_equal(slurm_device_parse("GPU-abc", node, sizeof node, &gpu), -1);
	assert_int_equal(slurm_device_parse("slurm:", node, sizeof node, &gpu), -1);
	assert_int_equal(slurm_device_parse("slurm:n1:cpu0", node, sizeof node, &gpu), -1);
	assert_int_equal(slurm_device_parse("slurm:n1:gpu", node, sizeof node, &gpu), -1);
	assert_int_equal(slurm_device_parse("host", node, sizeof node, &gpu), -1);
}

/* A scontrol that cannot be run: the code says so, with or without words. */
static void test_scontrol_missing(void **state)
{
	(void)state;
	slurm_cluster c;
	memset(&c, 0, sizeof c);
	assert_int_equal(slurm_cluster_read("/nonexistent/scontrol", NULL, &c, NULL), RL_ERUNTIME);
	rl_err e;
	rl_err_clear(&e);
	assert_int_equal(slurm_cluster_read("/nonexistent/scontrol", NULL, &c, &e), RL_ERUNTIME);
	if (!strstr(e.msg, "asking Slurm for its partitions: cannot run /nonexistent/scontrol"))
		fail_msg("unclear: %s", e.msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_nodes),
		cmocka_unit_test(test_parse_absurd_numbers),
		cmocka_unit_test(test_parse_partitions),
		cmocka_unit_test(test_devices),
		cmocka_unit_test(test_device_parse),
		cmocka_unit_test(test_scontrol_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
