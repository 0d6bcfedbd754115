/*
 * slurm_nodes.h - a Slurm cluster as relish's devices: what `scontrol show
 * node -o` and `scontrol show partition -o` say, parsed, and turned into
 * a device list the core places on (docs/slurm.md, "What relish sees").
 *
 * Per usable node of the partition: one device per GPU (name "N gpuI",
 * uuid "slurm:N:gpuI", memory from the node's feature gpumem_<size> or the
 * configured GPU memory, compute 100) and one host device (name "N", uuid
 * "slurm:N", memory RealMemory, compute the node's CPUs) for CPU trials.
 * The GPU index I is Slurm's (gres.conf order; SLURM_JOB_GPUS in a job).
 * A node's shards (Gres=shard:S) are taken to be spread evenly over its
 * GPUs, S / G per GPU, as Slurm does for a gres.conf `Name=shard Count=S`.
 * Nodes that are down, drained, failing, powered down or not responding
 * are left out (refreshes say when they come back).
 */
#ifndef RELISH_SLURM_NODES_H
#define RELISH_SLURM_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "telemetry/inventory.h"

/* GPUs counted on one node at most (each is a device of relish's): eight
 * or sixteen are what GPU servers hold; a larger Gres count is taken as
 * this many rather than believed. */
#define SLURM_NODE_GPUS_MAX 256

typedef struct slurm_node {
	char name[64];
	char state[64];            /* "IDLE", "MIXED", "DOWN*", "IDLE+DRAIN", ... */
	int usable;                /* 1 unless down, drained, failing, ... */
	double cpus;               /* CPUEfctv, else CPUTot */
	double alloc_cpus;         /* CPUAlloc */
	uint64_t mem_mib;          /* RealMemory */
	uint64_t alloc_mem_mib;    /* AllocMem */
	int gpus;                  /* GPUs in Gres */
	char gpu_type[32];         /* gpu:TYPE:N, "" without a type */
	int shards;                /* shards in Gres (the node's total) */
	uint64_t gpu_mem_mib;      /* feature gpumem_<size>; 0 unknown */
	char partitions[256];      /* "main,gpu" */
} slurm_node;

typedef struct slurm_partition {
	char name[64];
	int is_default;            /* Default=YES */
	int up;                    /* State=UP */
} slurm_partition;

/* Parse `scontrol show node -o` (one node a line).  *out malloc'd. */
int slurm_nodes_parse(const char *text, slurm_node **out, size_t *n, rl_err *err);

/* Parse `scontrol show partition -o`.  *out malloc'd. */
int slurm_partitions_parse(const char *text, slurm_partition **out, size_t *n, rl_err *err);

/* 1 when node lists partition among its Partitions. */
int slurm_node_in_partition(const slurm_node *node, const char *partition);

/* Shards per GPU of a node: shards / gpus, 0 when it has none. */
unsigned slurm_node_shards_per_gpu(const slurm_node *node);

/*
 * The device list of the usable nodes of partition (NULL: every node),
 * GPUs of a node without gpumem_<size> taking gpu_mem_mib (0: such GPUs
 * are left out, and notice says so).  source says "slurm partition P".
 * *out is freed with device_list_free.
 */
int slurm_devices_build(const slurm_node *nodes, size_t n, const char *partition,
			uint64_t gpu_mem_mib, device_list **out, rl_err *err);

/* A device's node and GPU index from its uuid: 0, with *gpu -1 for a
 * node's host device; -1 when uuid is not a Slurm device's. */
int slurm_device_parse(const char *uuid, char *node, size_t node_n, int *gpu);

/* What slurm_cluster_read found (blocking: for start-up). */
typedef struct slurm_cluster {
	slurm_node *nodes;
	size_t n_nodes;
	slurm_partition *parts;
	size_t n_parts;
	char partition[64];        /* the partition used: the named or the default one */
	char accounting[64];       /* AccountingStorageType */
	char jobcomp_type[64];     /* JobCompType */
	char jobcomp_loc[1024];    /* JobCompLoc */
} slurm_cluster;

/*
 * Ask Slurm (scontrol; binary NULL: env RELISH_SCONTROL, else "scontrol")
 * for its nodes, partitions and configuration, synchronously (for
 * start-up, before the loop runs; relish's refreshes run scontrol on the
 * loop).  partition NULL takes the default partition.  Errors: RL_ERUNTIME
 * when scontrol cannot be run or fails (its words quoted); RL_ESPEC when
 * the partition does not exist (the partitions that do are named) or the
 * cluster has no default one.
 */
int slurm_cluster_read(const char *scontrol, const char *partition, slurm_cluster *out,
		       rl_err *err);
void slurm_cluster_fini(slurm_cluster *c);

#endif
