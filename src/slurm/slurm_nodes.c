/*
 * slurm_nodes.c - a Slurm cluster as devices (slurm/slurm_nodes.h):
 * parsers of `scontrol show node -o` and `scontrol show partition -o`, the
 * device list built from them, and the blocking start-up read.  The live
 * driver refreshes the same text on its loop (exec_slurm_show_nodes) and
 * parses it here.
 */
#include "slurm/slurm_nodes.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/units.h"
#include "exec/capture.h"


/* The value of " Key=" on a line (up to the next space), or NULL. */
static const char *field(const char *line, const char *key, char *buf, size_t n)
{
	size_t kl = strlen(key);
	for (const char *p = line; (p = strstr(p, key)); p += kl) {
		if ((p != line && p[-1] != ' ') || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t len = strcspn(v, " \n");
		if (len >= n)
			len = n - 1;
		memcpy(buf, v, len);
		buf[len] = '\0';
		return buf;
	}
	return NULL;
}

/* A count or a size in MiB from scontrol's text: 0 when absent or not a
 * number, and never more than INT_MAX, so that the int and uint64_t fields
 * it is stored in can hold it (NaN, inf or 1e300 from a broken or hostile
 * scontrol would make the conversion undefined). */
static double num(const char *s)
{
	if (!s)
		return 0;
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0))
		return 0;
	return v > INT_MAX ? INT_MAX : v;
}

/* A Gres count added to a node's total, which stays at most `max`: each
 * GPU becomes a device of its own, so a broken or hostile scontrol line
 * claiming gpu:15000 (or many gpu items whose sum overflows an int) must
 * not make thousands of devices. */
static int gres_add(int total, long v, int max)
{
	return v >= max - total ? max : total + (int)v;
}

/* Gres=gpu:2,shard:8 / gpu:a100:4(S:0-1),shard:a100:16(S:0-1) */
static void parse_gres(const char *g, slurm_node *nd)
{
	const char *p = g;
	while (p && *p) {
		const char *end = p;
		int depth = 0;
		while (*end && (depth || *end != ',')) {
			depth += *end == '(';
			depth -= *end == ')' && depth;
			end++;
		}
		char item[128];
		size_t len = (size_t)(end - p);
		if (len >= sizeof item)
			len = sizeof item - 1;
		memcpy(item, p, len);
		item[len] = '\0';
		char *paren = strchr(item, '(');
		if (paren)
			*paren = '\0';
		/* name[:type]:count */
		char *c1 = strchr(item, ':');
		if (c1) {
			*c1 = '\0';
			char *c2 = strrchr(c1 + 1, ':');
			const char *type = c2 ? c1 + 1 : "";
			const char *count = c2 ? c2 + 1 : c1 + 1;
			if (c2)
				*c2 = '\0';
			long v = strtol(count, NULL, 10);
			if (v > 0 && v < 100000) {
				if (!strcmp(item, "gpu")) {
					nd->gpus = gres_add(nd->gpus, v, SLURM_NODE_GPUS_MAX);
					if (*type && strcmp(type, "(null)") != 0)
						snprintf(nd->gpu_type, sizeof nd->gpu_type, "%s", type);
				} else if (!strcmp(item, "shard")) {
					nd->shards = gres_add(nd->shards, v, SLURM_NODE_GPUS_MAX * 1024);
				}
			}
		}
		p = *end ? end + 1 : end;
	}
}

/* gpumem_80G (also gpumem-80G, gpumem=80G) among a node's features. */
static uint64_t feature_gpu_mem(const char *features)
{
	if (!features)
		return 0;
	char buf[512];
	snprintf(buf, sizeof buf, "%s", features);
	char *save;
	for (char *f = strtok_r(buf, ",&|", &save); f; f = strtok_r(NULL, ",&|", &save)) {
		if (strncmp(f, "gpumem", 6) != 0 || !strchr("_-=", f[6]))
			continue;
		uint64_t mib;
		if (units_parse_size_mib(f + 7, &mib) == 0 && mib > 0)
			return mib;
	}
	return 0;
}

static int state_usable(const char *st)
{
	static const char *const bad[] = {"DOWN", "DRAIN", "FAIL", "FUTURE", "POWER", "MAINT",
					  "REBOOT", "INVAL", "UNKNOWN"};
	if (strchr(st, '*') || strchr(st, '~') || strchr(st, '#'))
		return 0; /* not responding, powered off, powering up */
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (strstr(st, bad[i]))
			return 0;
	return 1;
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 16;
	void *w = realloc(*v, c * size);
	if (!w)
		return -1;
	*v = w;
	*cap = c;
	return 0;
}

int slurm_nodes_parse(const char *text, slurm_node **out, size_t *n, rl_err *err)
{
	slurm_node *v = NULL;
	size_t nv = 0, cap = 0;
	char line[8192], b[1024];
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len < sizeof line && !strncmp(p, "NodeName=", 9)) {
			memcpy(line, p, len);
			line[len] = '\0';
			slurm_node nd;
			memset(&nd, 0, sizeof nd);
			field(line, "NodeName", nd.name, sizeof nd.name);
			if (!field(line, "State", nd.state, sizeof nd.state))
				snprintf(nd.state, sizeof nd.state, "UNKNOWN");
			nd.usable = state_usable(nd.state);
			nd.cpus = num(field(line, "CPUEfctv", b, sizeof b));
			if (nd.cpus <= 0)
				nd.cpus = num(field(line, "CPUTot", b, sizeof b));
			nd.alloc_cpus = num(field(line, "CPUAlloc", b, sizeof b));
			nd.mem_mib = (uint64_t)num(field(line, "RealMemory", b, sizeof b));
			nd.alloc_mem_mib = (uint64_t)num(field(line, "AllocMem", b, sizeof b));
			if (field(line, "Gres", b, sizeof b) && strcmp(b, "(null)") != 0)
				parse_gres(b, &nd);
			nd.gpu_mem_mib = feature_gpu_mem(field(line, "AvailableFeatures", b, sizeof b));
			if (!field(line, "Partitions", nd.partitions, sizeof nd.partitions))
				nd.partitions[0] = '\0';
			if (nd.name[0]) {
				if (grow((void **)&v, &cap, nv, sizeof *v) < 0) {
					free(v);
					return rl_err_set(err, RL_ENOMEM, "slurm nodes");
				}
				v[nv++] = nd;
			}
		}
		p = nl ? nl + 1 : p + len;
	}
	*out = v;
	*n = nv;
	return 0;
}

int slurm_partitions_parse(const char *text, slurm_partition **out, size_t *n, rl_err *err)
{
	slurm_partition *v = NULL;
	size_t nv = 0, cap = 0;
	char line[8192], b[64];
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len < sizeof line && !strncmp(p, "PartitionName=", 14)) {
			memcpy(line, p, len);
			line[len] = '\0';
			slurm_partition pt;
			memset(&pt, 0, sizeof pt);
			field(line, "PartitionName", pt.name, sizeof pt.name);
			pt.is_default = field(line, "Default", b, sizeof b) && !strcmp(b, "YES");
			pt.up = field(line, "State", b, sizeof b) && !strcmp(b, "UP");
			if (grow((void **)&v, &cap, nv, sizeof *v) < 0) {
				free(v);
				return rl_err_set(err, RL_ENOMEM, "slurm partitions");
			}
			v[nv++] = pt;
		}
		p = nl ? nl + 1 : p + len;
	}
	*out = v;
	*n = nv;
	return 0;
}

int slurm_node_in_partition(const slurm_node *node, const char *partition)
{
	if (!partition)
		return 1;
	size_t l = strlen(partition);
	for (const char *p = node->partitions; *p;) {
		size_t k = strcspn(p, ",");
		if (k == l && !strncmp(p, partition, l))
			return 1;
		p += k;
		if (*p == ',')
			p++;
	}
	return 0;
}

unsigned slurm_node_shards_per_gpu(const slurm_node *node)
{
	return node->gpus > 0 && node->shards > 0 ? (unsigned)(node->shards / node->gpus) : 0;
}

static device_entry *add(device_list *l, rl_err *err)
{
	device_entry *p = realloc(l->dev, (l->n + 1) * sizeof *p);
	if (!p) {
		rl_err_set(err, RL_ENOMEM, "slurm devices");
		return NULL;
	}
	l->dev = p;
	device_entry *e = &l->dev[l->n++];
	memset(e, 0, sizeof *e);
	e->nvml_index = -1;
	return e;
}

int slurm_devices_build(const slurm_node *nodes, size_t n, const char *partition,
			uint64_t gpu_mem_mib, device_list **out, rl_err *err)
{
	device_list *l = calloc(1, sizeof *l);
	if (!l)
		return rl_err_set(err, RL_ENOMEM, "slurm devices");
	l->from_config = 1;
	snprintf(l->source, sizeof l->source, "slurm partition %s", partition ? partition : "(all)");
	size_t unknown = 0, down = 0;
	char unknown_names[200] = "", down_names[200] = "";
	/* GPUs first, then the nodes' hosts (the list's usual order) */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			const slurm_node *nd = &nodes[i];
			if (!slurm_node_in_partition(nd, partition))
				continue;
			if (!nd->usable) {
				if (pass == 0) {
					down++;
					snprintf(down_names + strlen(down_names),
						 sizeof down_names - strlen(down_names), "%s%s (%s)",
						 down_names[0] ? ", " : "", nd->name, nd->state);
				}
				continue;
			}
			if (pass == 1) {
				device_entry *e = add(l, err);
				if (!e) {
					device_list_free(l);
					return RL_ENOMEM;
				}
				snprintf(e->info.name, sizeof e->info.name, "%s", nd->name);
				snprintf(e->info.uuid, sizeof e->info.uuid, "slurm:%s", nd->name);
				e->info.is_gpu = 0;
				e->info.mem_total_mib = nd->mem_mib ? nd->mem_mib : 1;
				e->info.compute_total = nd->cpus > 0 ? nd->cpus : 1;
				continue;
			}
			uint64_t gm = nd->gpu_mem_mib ? nd->gpu_mem_mib : gpu_mem_mib;
			if (nd->gpus > 0 && !gm) {
				unknown++;
				snprintf(unknown_names + strlen(unknown_names),
					 sizeof unknown_names - strlen(unknown_names), "%s%s",
					 unknown_names[0] ? ", " : "", nd->name);
				continue;
			}
			for (int g = 0; g < nd->gpus; g++) {
				device_entry *e = add(l, err);
				if (!e) {
					device_list_free(l);
					return RL_ENOMEM;
				}
				snprintf(e->info.name, sizeof e->info.name, "%s gpu%d%s%s", nd->name, g,
					 nd->gpu_type[0] ? " " : "", nd->gpu_type);
				snprintf(e->info.uuid, sizeof e->info.uuid, "slurm:%s:gpu%d", nd->name, g);
				e->info.is_gpu = 1;
				e->info.mem_total_mib = gm;
				e->info.compute_total = 100;
			}
		}
	}
	if (unknown)
		snprintf(l->notice, sizeof l->notice,
			 "the GPUs of %s are left out: their memory is unknown (give "
			 "trial.slurm.gpu_memory, or a node feature gpumem_<size>)", unknown_names);
	else if (down)
		snprintf(l->notice, sizeof l->notice, "nodes left out, not usable now: %s", down_names);
	*out = l;
	return 0;
}

int slurm_device_parse(const char *uuid, char *node, size_t node_n, int *gpu)
{
	if (!uuid || strncmp(uuid, "slurm:", 6) != 0)
		return -1;
	const char *p = uuid + 6;
	const char *c = strchr(p, ':');
	size_t l = c ? (size_t)(c - p) : strlen(p);
	if (!l || l >= node_n)
		return -1;
	memcpy(node, p, l);
	node[l] = '\0';
	*gpu = -1;
	if (c) {
		if (strncmp(c + 1, "gpu", 3) != 0)
			return -1;
		char *end;
		long g = strtol(c + 4, &end, 10);
		if (end == c + 4 || *end || g < 0 || g > 4096)
			return -1;
		*gpu = (int)g;
	}
	return 0;
}

/* ---- start-up: run scontrol and wait ------------------------------------------- */

static int scontrol_show(const char *bin, const char *what, char **out, rl_err *err)
{
	char *argv[] = {(char *)bin, "show", (char *)what, "-o", NULL};
	if (!strcmp(what, "config"))
		argv[3] = NULL;
	char *et = NULL;
	int st = capture_run(argv, NULL, out, &et, err);
	if (st < 0) {
		rl_err_prefix(err, "asking Slurm for its %ss", what);
		return st;
	}
	if (st != 0) {
		size_t l = strcspn(et ? et : "", "\n");
		rl_err_set(err, RL_ERUNTIME, "%s show %s failed (exit %d): %.*s", bin, what, st,
			   (int)(l > 300 ? 300 : l), et ? et : "");
		free(et);
		free(*out);
		*out = NULL;
		return RL_ERUNTIME;
	}
	free(et);
	return 0;
}

/* "Key = value" lines of `scontrol show config`. */
static void config_value(const char *text, const char *key, char *buf, size_t n)
{
	buf[0] = '\0';
	size_t kl = strlen(key);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > kl && !strncmp(p, key, kl) && (p[kl] == ' ' || p[kl] == '=')) {
			const char *v = p + kl;
			while (v < p + len && (*v == ' ' || *v == '='))
				v++;
			size_t vl = (size_t)(p + len - v);
			if (vl >= n)
				vl = n - 1;
			memcpy(buf, v, vl);
			buf[vl] = '\0';
			return;
		}
		p = nl ? nl + 1 : p + len;
	}
}

void slurm_cluster_fini(slurm_cluster *c)
{
	if (!c)
		return;
	free(c->nodes);
	free(c->parts);
	memset(c, 0, sizeof *c);
}

int slurm_cluster_read(const char *scontrol, const char *partition, slurm_cluster *out,
		       rl_err *err)
{
	const char *bin = scontrol && *scontrol ? scontrol : getenv("RELISH_SCONTROL");
	if (!bin || !*bin)
		bin = "scontrol";
	slurm_cluster c;
	memset(&c, 0, sizeof c);
	char *nodes = NULL, *parts = NULL, *conf = NULL;
	int rc;
	if ((rc = scontrol_show(bin, "partition", &parts, err)) < 0 ||
	    (rc = scontrol_show(bin, "node", &nodes, err)) < 0 ||
	    (rc = scontrol_show(bin, "config", &conf, err)) < 0)
		goto out;
	if ((rc = slurm_partitions_parse(parts, &c.parts, &c.n_parts, err)) < 0 ||
	    (rc = slurm_nodes_parse(nodes, &c.nodes, &c.n_nodes, err)) < 0)
		goto out;
	config_value(conf, "AccountingStorageType", c.accounting, sizeof c.accounting);
	config_value(conf, "JobCompType", c.jobcomp_type, sizeof c.jobcomp_type);
	config_value(conf, "JobCompLoc", c.jobcomp_loc, sizeof c.jobcomp_loc);
	const slurm_partition *found = NULL;
	for (size_t i = 0; i < c.n_parts; i++)
		if (partition ? !strcmp(c.parts[i].name, partition) : c.parts[i].is_default)
			found = &c.parts[i];
	if (!found) {
		char names[400] = "";
		for (size_t i = 0; i < c.n_parts; i++)
			snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s%s",
				 i ? ", " : "", c.parts[i].name, c.parts[i].is_default ? " (default)" : "");
		rc = partition ? rl_err_set(err, RL_ESPEC,
					    "Slurm has no partition '%s' (it has: %s)", partition,
					    names[0] ? names : "none")
			       : rl_err_set(err, RL_ESPEC,
					    "Slurm has no default partition; name one (it has: %s)",
					    names[0] ? names : "none");
		goto out;
	}
	snprintf(c.partition, sizeof c.partition, "%s", found->name);
	*out = c;
	memset(&c, 0, sizeof c);
	rc = 0;
out:
	free(nodes);
	free(parts);
	free(conf);
	slurm_cluster_fini(&c);
	return rc;
}
