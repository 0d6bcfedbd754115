/*
 * cmd_devices.c - relish devices [--json] [--devices FILE] [--slurm
 * [--partition P] [--gpu-memory SIZE]] [--db FILE]
 *
 * Shows what relish would place segments on: each device's name, UUID and
 * memory (total / used / free as measured through NVML, or as declared in a
 * devices file), whether an MPS daemon is running, and with --db the memory
 * relish has reserved on each device, which running segments (and their
 * trials) share it, read through the store API, and the memory processes
 * outside those segments use on each GPU (OTHERS).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "cli/table.h"
#include "telemetry/inventory.h"
#include "telemetry/gpu_env.h"
#include "telemetry/nvml.h"
#include "slurm/slurm_nodes.h"
#include "common/units.h"

/* One running segment found in the store. */
struct seg_use {
	int dev;                 /* index in the device list */
	long long segment, trial;
	long long mem_mib;
	pid_t pid;               /* its process group, 0 not started */
};

struct store_use {
	size_t n;
	struct seg_use *seg;
	/* With --db and NVML: per device, memory of processes that are in no
	 * running segment's process group (others' use), -1 unknown. */
	long long *foreign;
};

/*
 * The running segments of every experiment in the database (opened read
 * only through the store API; a missing file is an error, not created).
 * segments.device holds the device's UUID ("host" for the host).
 */
static int store_running_segments(const char *path, const device_list *l, struct store_use *u,
				  rl_err *err)
{
	cli_read_opts o = {.db = path};
	store *s;
	int rc = cli_open_read(&o, &s, err);
	if (rc < 0)
		return rc;
	store_segment *gv;
	size_t ng;
	rc = store_segment_list_running(s, 0, &gv, &ng, err);
	store_close(s);
	if (rc < 0)
		return rl_err_prefix(err, "%s: reading running segments", path);
	u->seg = calloc(ng ? ng : 1, sizeof *u->seg);
	if (!u->seg) {
		store_segments_free(gv, ng);
		return rl_err_set(err, RL_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < ng; i++) {
		int idx = gv[i].device ? device_list_find(l, gv[i].device) : -1;
		if (idx < 0)
			continue; /* placed on a device this view does not show */
		u->seg[u->n++] = (struct seg_use){idx, gv[i].id, gv[i].trial_id,
						  gv[i].mem_reserved_mib > 0 ? gv[i].mem_reserved_mib : 0,
						  gv[i].pid};
	}
	store_segments_free(gv, ng);
	return 0;
}

/* Memory on each GPU of l used by processes of no running segment of the
 * database (the live driver counts the same, docs/gpu.md "Other users of a
 * GPU"): one NVML sample; a process that has gone counts for nobody. */
static void others_use(telemetry *t, const device_list *l, struct store_use *u)
{
	telemetry_snapshot snap;
	if (!t || !telemetry_available(t) || !(u->foreign = malloc((l->n ? l->n : 1) * sizeof *u->foreign)))
		return;
	for (size_t i = 0; i < l->n; i++)
		u->foreign[i] = -1;
	if (telemetry_sample(t, 0, &snap, NULL) < 0)
		return;
	for (size_t i = 0; i < l->n; i++) {
		int nv = l->dev[i].nvml_index;
		if (!l->dev[i].info.is_gpu || nv < 0)
			continue;
		long long sum = 0;
		for (size_t k = 0; k < snap.n_proc; k++) {
			const telemetry_proc_mem *p = &snap.proc[k];
			if (p->device != nv || p->used_mib == UINT64_MAX)
				continue;
			pid_t pg = getpgid((pid_t)p->pid);
			int ours = pg < 0; /* gone: nobody's */
			for (size_t j = 0; !ours && j < u->n; j++)
				ours = u->seg[j].pid > 0 && u->seg[j].pid == pg;
			if (!ours)
				sum += (long long)p->used_mib;
		}
		u->foreign[i] = sum;
	}
	telemetry_snapshot_fini(&snap);
}

static long long reserved_on(const struct store_use *u, int dev)
{
	long long sum = 0;
	for (size_t i = 0; i < u->n; i++)
		if (u->seg[i].dev == dev)
			sum += u->seg[i].mem_mib;
	return sum;
}

static int print_json(const device_list *l, const char *driver, int mps, const char *mps_dir,
		      const struct store_use *u, int have_db, rl_err *err)
{
	json_t *root = json_object();
	json_t *devs = json_array();
	json_object_set_new(root, "source", json_string(l->source));
	json_object_set_new(root, "driver", driver && *driver ? json_string(driver) : json_null());
	json_object_set_new(root, "notice", l->notice[0] ? json_string(l->notice) : json_null());
	json_t *jm = json_object();
	json_object_set_new(jm, "running", json_boolean(mps));
	json_object_set_new(jm, "pipe_directory", mps ? json_string(mps_dir) : json_null());
	json_object_set_new(root, "mps", jm);
	for (size_t i = 0; i < l->n; i++) {
		const device_entry *e = &l->dev[i];
		json_t *d = json_object();
		json_object_set_new(d, "index", json_integer((json_int_t)i));
		json_object_set_new(d, "name", json_string(e->info.name));
		json_object_set_new(d, "uuid", json_string(e->info.uuid));
		json_object_set_new(d, "is_gpu", json_boolean(e->info.is_gpu));
		json_object_set_new(d, "memory_total_mib",
				    json_integer((json_int_t)(e->has_usage && e->mem_machine_mib
								  ? e->mem_machine_mib
								  : e->info.mem_total_mib)));
		json_object_set_new(d, "memory_budget_mib", json_integer((json_int_t)e->info.mem_total_mib));
		json_object_set_new(d, "memory_used_mib",
				    e->has_usage ? json_integer((json_int_t)e->mem_used_mib) : json_null());
		json_object_set_new(d, "memory_free_mib",
				    e->has_usage ? json_integer((json_int_t)e->mem_free_mib) : json_null());
		json_object_set_new(d, "compute_total", json_real(e->info.compute_total));
		json_object_set_new(d, "memory_reserved_mib",
				    have_db ? json_integer(reserved_on(u, (int)i)) : json_null());
		json_object_set_new(d, "memory_foreign_mib",
				    u->foreign && u->foreign[i] >= 0 ? json_integer(u->foreign[i])
								      : json_null());
		json_t *segs = json_array();
		for (size_t k = 0; k < u->n; k++) {
			if (u->seg[k].dev != (int)i)
				continue;
			json_t *s = json_object();
			json_object_set_new(s, "segment", json_integer(u->seg[k].segment));
			json_object_set_new(s, "trial", json_integer(u->seg[k].trial));
			json_object_set_new(s, "memory_reserved_mib", json_integer(u->seg[k].mem_mib));
			json_array_append_new(segs, s);
		}
		json_object_set_new(d, "segments", segs);
		json_array_append_new(devs, d);
	}
	json_object_set_new(root, "devices", devs);
	int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (rc)
		return rl_err_set(err, RL_EIO, "writing JSON to standard output");
	putchar('\n');
	return 0;
}

static void mib_cell(char *buf, size_t n, int known, unsigned long long v)
{
	if (known)
		snprintf(buf, n, "%llu", v);
	else
		snprintf(buf, n, "-");
}

/* TOTAL, USED and FREE are the device's own (the whole GPU, the machine's
 * RAM); BUDGET is what relish may reserve on it (a GPU's total; the host's
 * RELISH_HOST_MEMORY, declared memory, or what was available when relish
 * started); OTHERS what processes in none of the database's running
 * segments use on a GPU, RESERVED what running segments hold now (--db). */
enum { D_DEV, D_NAME, D_UUID, D_TOTAL, D_USED, D_FREE, D_BUDGET, D_OTHERS, D_RES, D_SEGS, D__N };
static const cli_col cols[D__N] = {
	[D_DEV] = {"DEV", 1, 0, 0, 0},          [D_NAME] = {"NAME", 0, 1, 1, 8},
	[D_UUID] = {"UUID", 0, 3, 1, 10},       [D_TOTAL] = {"TOTAL_MiB", 1, 0, 0, 0},
	[D_USED] = {"USED_MiB", 1, 0, 0, 0},    [D_FREE] = {"FREE_MiB", 1, 0, 0, 0},
	[D_BUDGET] = {"BUDGET_MiB", 1, 1, 0, 0}, [D_OTHERS] = {"OTHERS_MiB", 1, 2, 0, 0},
	[D_RES] = {"RESERVED_MiB", 1, 2, 0, 0},
	[D_SEGS] = {"SEGMENTS", 0, 2, 1, 8},
};

static int print_table(const device_list *l, const char *driver, int mps, const char *mps_dir,
		       const struct store_use *u, int have_db, int width, rl_err *err)
{
	printf("source: %s%s%s\n", l->source, driver && *driver ? ", NVIDIA driver " : "",
	       driver ? driver : "");
	printf("MPS: %s%s\n", mps ? "running, pipe directory " : "not running", mps ? mps_dir : "");
	cli_table *tb = cli_table_new(cols, D__N);
	if (!tb)
		return rl_err_set(err, RL_ENOMEM, "devices table");
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < l->n; i++) {
		const device_entry *e = &l->dev[i];
		char dev[16], total[32], used[32], freec[32], budget[32], res[32], others[32],
			segs[256] = "";
		snprintf(dev, sizeof dev, "%zu", i);
		mib_cell(total, sizeof total, 1,
			 e->has_usage && e->mem_machine_mib ? e->mem_machine_mib
							    : e->info.mem_total_mib);
		mib_cell(used, sizeof used, e->has_usage, e->mem_used_mib);
		mib_cell(freec, sizeof freec, e->has_usage, e->mem_free_mib);
		mib_cell(budget, sizeof budget, 1, e->info.mem_total_mib);
		mib_cell(others, sizeof others, u->foreign && u->foreign[i] >= 0,
			 u->foreign ? (unsigned long long)u->foreign[i] : 0);
		mib_cell(res, sizeof res, have_db, (unsigned long long)reserved_on(u, (int)i));
		for (size_t k = 0; k < u->n; k++)
			if (u->seg[k].dev == (int)i)
				snprintf(segs + strlen(segs), sizeof segs - strlen(segs), "%s%lld(t%lld)",
					 segs[0] ? "," : "", u->seg[k].segment, u->seg[k].trial);
		const char *cells[D__N] = {
			[D_DEV] = dev, [D_NAME] = e->info.name, [D_UUID] = e->info.uuid,
			[D_TOTAL] = total, [D_USED] = used, [D_FREE] = freec, [D_BUDGET] = budget,
			[D_OTHERS] = others, [D_RES] = res, [D_SEGS] = segs[0] ? segs : "-",
		};
		if (cli_table_add(tb, cells) < 0)
			rc = rl_err_set(err, RL_ENOMEM, "devices table");
	}
	if (rc == 0)
		cli_table_print(tb, stdout, width);
	cli_table_free(tb);
	return rc;
}

struct dev_args {
	const char *devices_file;
	int slurm;
	const char *partition;
	uint64_t gpu_mem_mib;
};

/* --devices FILE, --slurm, --partition P, --gpu-memory SIZE (codes above
 * 255: the letters are cli_common's shared options') */
enum { OPT_SLURM = 300, OPT_PARTITION, OPT_GPU_MEMORY };
static int devices_opt(int c, const char *arg, void *ctx, rl_err *err)
{
	struct dev_args *a = ctx;
	switch (c) {
	case 'D': a->devices_file = arg; break;
	case OPT_SLURM: a->slurm = 1; break;
	case OPT_PARTITION: a->partition = arg; a->slurm = 1; break;
	case OPT_GPU_MEMORY:
		if (units_parse_size_mib(arg, &a->gpu_mem_mib) < 0 || !a->gpu_mem_mib)
			return rl_err_set(err, RL_EUSAGE, "--gpu-memory: expected a size such as 16GiB, "
					  "got '%s'", arg);
		a->slurm = 1;
		break;
	}
	return 0;
}

/* The Slurm view: each node's state, GPUs (and their shards), memory and
 * CPUs, before the device table. */
static void print_slurm_nodes(const slurm_cluster *c)
{
	printf("Slurm partition %s: %zu nodes\n", c->partition, c->n_nodes);
	printf("%-12s %-14s %5s %6s %7s %10s %10s\n", "NODE", "STATE", "GPUS", "SHARDS", "CPUS",
	       "MEM_MiB", "GPU_MiB");
	for (size_t i = 0; i < c->n_nodes; i++) {
		const slurm_node *n = &c->nodes[i];
		if (!slurm_node_in_partition(n, c->partition))
			continue;
		char gm[24];
		if (n->gpu_mem_mib)
			snprintf(gm, sizeof gm, "%llu", (unsigned long long)n->gpu_mem_mib);
		else
			snprintf(gm, sizeof gm, "-");
		printf("%-12s %-14s %5d %6d %7g %10llu %10s\n", n->name, n->state, n->gpus, n->shards,
		       n->cpus, (unsigned long long)n->mem_mib, gm);
	}
	printf("\n");
}

int cmd_devices(int argc, char **argv, rl_err *err)
{
	static const struct option own[] = {{"devices", required_argument, NULL, 'D'},
					    {"slurm", no_argument, NULL, OPT_SLURM},
					    {"partition", required_argument, NULL, OPT_PARTITION},
					    {"gpu-memory", required_argument, NULL, OPT_GPU_MEMORY},
					    {NULL, 0, NULL, 0}};
	struct dev_args a = {0};
	const cli_read_spec cmdline = {
		.usage = "relish devices [--json] [--wide] [--devices FILE] [--slurm [--partition P] "
			 "[--gpu-memory SIZE]] [--db FILE]",
		.help = "\nThe devices relish places segments on.  TOTAL, USED and FREE are the\n"
			"device's own memory (a whole GPU; the host's RAM), BUDGET what relish\n"
			"may reserve on it (the host: RELISH_HOST_MEMORY, the devices file, or\n"
			"what was available when relish started), RESERVED what running\n"
			"segments hold now (with --db).\n"
			"  --json             machine-readable output\n"
			"  --wide             every column in full\n"
			"  --devices FILE     declared devices (YAML/JSON) instead of discovery\n"
			"                     (also env RELISH_DEVICES)\n"
			"  --slurm            the nodes of a Slurm partition (SLURM_CONF), as\n"
			"                     executor slurm places on them (docs/slurm.md)\n"
			"  --partition P      that partition (default: the cluster's default)\n"
			"  --gpu-memory SIZE  memory of GPUs whose node has no gpumem_<size> feature\n"
			"  --db FILE          state database: show reservations and running segments\n",
		.own = own,
		.own_opt = devices_opt,
		.ctx = &a,
		.shorts = "h",
		.flags = CLI_READ_NO_EXPERIMENT | CLI_READ_WIDE,
	};
	cli_read_opts o = {0};
	int rc = cli_read_args(argc, argv, &cmdline, &o, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	int json = o.json;
	const char *db = o.db;
	const char *devices_file = a.devices_file;
	if (!devices_file && !a.slurm)
		devices_file = getenv("RELISH_DEVICES");

	device_list *l = NULL;
	telemetry *t = NULL;
	slurm_cluster sc = {0};
	if (a.slurm) {
		rc = slurm_cluster_read(NULL, a.partition, &sc, err);
		if (rc == 0)
			rc = slurm_devices_build(sc.nodes, sc.n_nodes, sc.partition, a.gpu_mem_mib, &l, err);
		if (rc == 0 && !json)
			print_slurm_nodes(&sc);
		slurm_cluster_fini(&sc);
	} else if (devices_file && *devices_file) {
		rc = devices_config_load(devices_file, NULL, &l, err);
	} else {
		rc = telemetry_open(&t, err);
		if (rc >= 0)
			rc = devices_from_telemetry(t, NULL, &l, err);
	}
	if (rc < 0) {
		telemetry_close(t);
		return rc;
	}
	if (l->notice[0])
		fprintf(stderr, "relish: %s\n", l->notice);
	char mps_dir[4096] = "";
	int mps = gpu_mps_detect(mps_dir, sizeof mps_dir);
	struct store_use u = {0};
	if (db && (rc = store_running_segments(db, l, &u, err)) < 0)
		goto out;
	if (db)
		others_use(t, l, &u);
	const char *driver = t ? telemetry_driver_version(t) : "";
	if (json)
		rc = print_json(l, driver, mps, mps_dir, &u, db != NULL, err);
	else
		rc = print_table(l, driver, mps, mps_dir, &u, db != NULL, cli_term_width(o.wide), err);
out:
	free(u.seg);
	free(u.foreign);
	device_list_free(l);
	telemetry_close(t);
	return rc < 0 ? rc : 0;
}
