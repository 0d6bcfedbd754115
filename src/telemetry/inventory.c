/*
 * inventory.c - the device list: NVML GPUs plus the host, or a devices file
 * (see inventory.h).  The file is read with libyaml's document API so that
 * every error can name the line and column of the node at fault; JSON files
 * go through the same parser (JSON is YAML flow syntax).
 */
#include "telemetry/inventory.h"
#include "common/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#define HOST_NAME "host"

void device_list_free(device_list *l)
{
	if (!l)
		return;
	free(l->dev);
	free(l);
}

int device_list_find(const device_list *l, const char *uuid)
{
	for (size_t i = 0; l && uuid && i < l->n; i++)
		if (!strcmp(l->dev[i].info.uuid, uuid))
			return (int)i;
	return -1;
}

static device_entry *list_add(device_list *l, rl_err *err)
{
	device_entry *p = realloc(l->dev, (l->n + 1) * sizeof *p);
	if (!p) {
		rl_err_set(err, RL_ENOMEM, "devices: out of memory");
		return NULL;
	}
	l->dev = p;
	device_entry *e = &l->dev[l->n++];
	memset(e, 0, sizeof *e);
	e->nvml_index = -1;
	return e;
}

int devices_parse_meminfo(const char *text, uint64_t *total_mib, uint64_t *avail_mib)
{
	unsigned long long total = 0, avail = 0;
	int have_t = 0, have_a = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		unsigned long long kb;
		if (sscanf(p, "MemTotal: %llu kB", &kb) == 1) {
			total = kb;
			have_t = 1;
		} else if (sscanf(p, "MemAvailable: %llu kB", &kb) == 1) {
			avail = kb;
			have_a = 1;
		}
	}
	if (!have_t || !have_a)
		return -1;
	*total_mib = total / 1024;
	*avail_mib = avail / 1024;
	return 0;
}

/* Host RAM and CPUs as measured here. */
static int measure_host(uint64_t *total, uint64_t *avail, double *cpus, rl_err *err)
{
	FILE *f = fopen("/proc/meminfo", "r");
	if (!f)
		return rl_err_sys(err, RL_EIO, errno, "reading /proc/meminfo");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	if (devices_parse_meminfo(buf, total, avail) < 0)
		return rl_err_set(err, RL_EIO, "/proc/meminfo: no MemTotal/MemAvailable line");
	/* The CPUs this process may use (a cpuset or taskset narrows them). */
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		*cpus = CPU_COUNT(&set);
	else
		*cpus = (double)sysconf(_SC_NPROCESSORS_ONLN);
	return 0;
}

/* The host device: declared values win, then env, then measurement. */
static int add_host(device_list *l, const devices_options *o, uint64_t mem_decl,
		    double cpus_decl, rl_err *err)
{
	uint64_t total = 0, avail = 0, mem = mem_decl;
	double cpus = cpus_decl, measured_cpus = 0;
	int rc = measure_host(&total, &avail, &measured_cpus, err);
	if (rc < 0)
		return rc;
	if (!mem && o && o->host_mem_mib)
		mem = o->host_mem_mib;
	const char *env = getenv("RELISH_HOST_MEMORY");
	if (!mem && env && *env && units_parse_size_mib(env, &mem) < 0)
		return rl_err_set(err, RL_EINVAL,
				  "RELISH_HOST_MEMORY: expected a size like 16GiB, got \"%s\"", env);
	if (!mem)
		mem = avail;
	if (cpus <= 0 && o && o->host_cpus > 0)
		cpus = o->host_cpus;
	env = getenv("RELISH_HOST_CPUS");
	if (cpus <= 0 && env && *env) {
		char *end;
		cpus = strtod(env, &end);
		if (*end || !(cpus > 0))
			return rl_err_set(err, RL_EINVAL,
					  "RELISH_HOST_CPUS: expected a positive number, got \"%s\"", env);
	}
	if (cpus <= 0)
		cpus = measured_cpus;
	device_entry *e = list_add(l, err);
	if (!e)
		return RL_ENOMEM;
	snprintf(e->info.name, sizeof e->info.name, HOST_NAME);
	snprintf(e->info.uuid, sizeof e->info.uuid, HOST_NAME);
	e->info.is_gpu = 0;
	e->info.mem_total_mib = mem;
	e->info.compute_total = cpus;
	/* The host's info total is relish's budget (MemAvailable when relish
	 * started, unless declared); the machine's own figures beside it. */
	e->has_usage = 1;
	e->mem_machine_mib = total;
	e->mem_used_mib = total > avail ? total - avail : 0;
	e->mem_free_mib = avail;
	return 0;
}

int devices_from_telemetry(const telemetry *t, const devices_options *o,
			   device_list **out, rl_err *err)
{
	device_list *l = calloc(1, sizeof *l);
	if (!l)
		return rl_err_set(err, RL_ENOMEM, "devices: out of memory");
	if (telemetry_available(t)) {
		snprintf(l->source, sizeof l->source, "nvml");
		for (size_t i = 0; i < telemetry_gpu_count(t); i++) {
			const telemetry_gpu *g = telemetry_gpu_get(t, i);
			device_entry *e = list_add(l, err);
			if (!e) {
				device_list_free(l);
				return RL_ENOMEM;
			}
			snprintf(e->info.name, sizeof e->info.name, "%s", g->name);
			snprintf(e->info.uuid, sizeof e->info.uuid, "%s", g->uuid);
			e->info.is_gpu = 1;
			e->info.mem_total_mib = g->mem_total_mib;
			e->info.compute_total = 100;
			e->nvml_index = g->index;
			e->has_usage = 1;
			e->mem_machine_mib = g->mem_total_mib;
			e->mem_used_mib = g->mem_used_mib;
			e->mem_free_mib = g->mem_free_mib;
		}
	} else {
		snprintf(l->source, sizeof l->source, "host");
		snprintf(l->notice, sizeof l->notice, "no NVIDIA driver (%s): using the host only",
			 telemetry_status(t));
	}
	if (!(o && o->no_host)) {
		int rc = add_host(l, o, 0, 0, err);
		if (rc < 0) {
			device_list_free(l);
			return rc;
		}
	}
	*out = l;
	return 0;
}

int devices_discover(const devices_options *o, device_list **out, rl_err *err)
{
	const char *cfg = o && o->config_path ? o->config_path : getenv("RELISH_DEVICES");
	if (cfg && *cfg)
		return devices_config_load(cfg, o, out, err);
	telemetry *t = NULL;
	int rc = telemetry_open(&t, err);
	if (rc < 0)
		return rl_err_prefix(err, "discovering GPUs");
	rc = devices_from_telemetry(t, o, out, err);
	telemetry_close(t);
	return rc;
}

/* ---- the devices file ---- */

struct cfg {
	yaml_document_t doc;
	const char *name;
	rl_err *err;
};

static int cfg_fail(struct cfg *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int cfg_fail(struct cfg *c, const yaml_node_t *n, const char *path, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return rl_err_set(c->err, RL_EPARSE, "%s:%zu:%zu: %s: %s", c->name,
			  n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1, path,
			  what);
}

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static const char *node_kind(const yaml_node_t *n)
{
	if (!n)
		return "nothing";
	return n->type == YAML_MAPPING_NODE ? "a mapping"
	       : n->type == YAML_SEQUENCE_NODE ? "a list"
					       : "a scalar";
}

static int cfg_size(struct cfg *c, const yaml_node_t *n, const char *path, uint64_t *out)
{
	const char *s = scalar(n);
	if (!s)
		return cfg_fail(c, n, path, "expected a size like 40GiB, got %s", node_kind(n));
	if (units_parse_size_mib(s, out) < 0 || *out == 0)
		return cfg_fail(c, n, path, "expected a size like 40GiB, got \"%s\"", s);
	return 0;
}

static int cfg_number(struct cfg *c, const yaml_node_t *n, const char *path, double *out)
{
	const char *s = scalar(n);
	char *end = NULL;
	double v = s ? strtod(s, &end) : 0;
	if (!s || !*s || *end || !(v > 0) || !isfinite(v))
		return cfg_fail(c, n, path, "expected a positive number, got %s%s%s",
				s ? "\"" : "", s ? s : node_kind(n), s ? "\"" : "");
	*out = v;
	return 0;
}

/* Check a mapping's keys against allowed (NULL-terminated) and duplicates. */
static int cfg_keys(struct cfg *c, const yaml_node_t *m, const char *path,
		    const char *const *allowed)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		yaml_node_t *k = yaml_document_get_node(&c->doc, p->key);
		const char *ks = scalar(k);
		int ok = 0;
		for (size_t i = 0; ks && allowed[i]; i++)
			ok |= !strcmp(ks, allowed[i]);
		if (!ok) {
			char list[256] = "";
			for (size_t i = 0; allowed[i]; i++)
				snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
					 i ? ", " : "", allowed[i]);
			return cfg_fail(c, k, path, "unknown key \"%s\" (expected one of: %s)",
					ks ? ks : "?", list);
		}
		for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(scalar(yaml_document_get_node(&c->doc, q->key)), ks))
				return cfg_fail(c, k, path, "key \"%s\" appears twice", ks);
	}
	return 0;
}

static yaml_node_t *cfg_get(struct cfg *c, const yaml_node_t *m, const char *key)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
		const char *ks = scalar(yaml_document_get_node(&c->doc, p->key));
		if (ks && !strcmp(ks, key))
			return yaml_document_get_node(&c->doc, p->value);
	}
	return NULL;
}

static const char *const gpu_keys[] = {"name", "uuid", "memory", "count", NULL};
static const char *const host_keys[] = {"memory", "cpus", NULL};
static const char *const top_keys[] = {"devices", "host", NULL};

static int cfg_gpu(struct cfg *c, const yaml_node_t *n, size_t idx, device_list *l)
{
	char path[64];
	snprintf(path, sizeof path, "devices[%zu]", idx);
	if (n->type != YAML_MAPPING_NODE)
		return cfg_fail(c, n, path, "expected a mapping with name, memory, uuid, count; got %s",
				node_kind(n));
	int rc = cfg_keys(c, n, path, gpu_keys);
	if (rc < 0)
		return rc;
	char fpath[96];
	const yaml_node_t *name = cfg_get(c, n, "name");
	snprintf(fpath, sizeof fpath, "%s.name", path);
	if (!name)
		return cfg_fail(c, n, fpath, "required");
	if (!scalar(name) || !*scalar(name) || strlen(scalar(name)) >= sizeof l->dev->info.name)
		return cfg_fail(c, name, fpath, "expected a name of 1 to 63 characters");
	uint64_t mem = 0;
	const yaml_node_t *mn = cfg_get(c, n, "memory");
	snprintf(fpath, sizeof fpath, "%s.memory", path);
	if (!mn)
		return cfg_fail(c, n, fpath, "required");
	if ((rc = cfg_size(c, mn, fpath, &mem)) < 0)
		return rc;
	long count = 1;
	const yaml_node_t *cn = cfg_get(c, n, "count");
	if (cn) {
		snprintf(fpath, sizeof fpath, "%s.count", path);
		const char *s = scalar(cn);
		char *end = NULL;
		count = s ? strtol(s, &end, 10) : 0;
		if (!s || !*s || *end || count < 1 || count > 1024)
			return cfg_fail(c, cn, fpath, "expected a whole number from 1 to 1024, got %s%s%s",
					s ? "\"" : "", s ? s : node_kind(cn), s ? "\"" : "");
	}
	const yaml_node_t *un = cfg_get(c, n, "uuid");
	const char *uuid = NULL;
	if (un) {
		snprintf(fpath, sizeof fpath, "%s.uuid", path);
		uuid = scalar(un);
		if (!uuid || !*uuid || strchr(uuid, ',') || strlen(uuid) > 80)
			return cfg_fail(c, un, fpath, "expected a UUID like GPU-fake-0 (no commas)");
	}
	for (long k = 0; k < count; k++) {
		char u[96];
		if (uuid && count == 1)
			snprintf(u, sizeof u, "%s", uuid);
		else if (uuid)
			snprintf(u, sizeof u, "%s-%ld", uuid, k);
		else
			snprintf(u, sizeof u, "GPU-declared-%zu", l->n);
		if (device_list_find(l, u) >= 0)
			return cfg_fail(c, un ? un : n, path, "UUID %s is declared twice", u);
		device_entry *e = list_add(l, c->err);
		if (!e)
			return RL_ENOMEM;
		snprintf(e->info.name, sizeof e->info.name, "%s", scalar(name));
		snprintf(e->info.uuid, sizeof e->info.uuid, "%s", u);
		e->info.is_gpu = 1;
		e->info.mem_total_mib = mem;
		e->info.compute_total = 100;
	}
	return 0;
}

/* Parse the host section into mem/cpus (0 = measure), or set *none for
 * "host: none".  Returns 0 or a negative error. */
static int cfg_host(struct cfg *c, const yaml_node_t *h, uint64_t *mem, double *cpus, int *none)
{
	const char *s = scalar(h);
	if (s) {
		if (!*s || !strcmp(s, "none") || !strcmp(s, "null") || !strcmp(s, "~") ||
		    !strcmp(s, "false")) {
			*none = 1;
			return 0;
		}
		return cfg_fail(c, h, "host", "expected a mapping with memory and cpus, or none; got \"%s\"",
				s);
	}
	if (h->type != YAML_MAPPING_NODE)
		return cfg_fail(c, h, "host", "expected a mapping with memory and cpus, got %s",
				node_kind(h));
	int rc = cfg_keys(c, h, "host", host_keys);
	if (rc < 0)
		return rc;
	const yaml_node_t *m = cfg_get(c, h, "memory");
	if (m && (rc = cfg_size(c, m, "host.memory", mem)) < 0)
		return rc;
	const yaml_node_t *n = cfg_get(c, h, "cpus");
	if (n && (rc = cfg_number(c, n, "host.cpus", cpus)) < 0)
		return rc;
	return 0;
}

static int cfg_document(struct cfg *c, const devices_options *o, device_list *l)
{
	yaml_node_t *root = yaml_document_get_root_node(&c->doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		return cfg_fail(c, root, "(top)", "expected a mapping with devices: and/or host:, got %s",
				!root || (scalar(root) && !*scalar(root)) ? "an empty file"
									 : node_kind(root));
	int rc = cfg_keys(c, root, "(top)", top_keys);
	if (rc < 0)
		return rc;
	yaml_node_t *devs = cfg_get(c, root, "devices");
	if (devs) {
		const char *s = scalar(devs);
		if (devs->type != YAML_SEQUENCE_NODE && !(s && !*s))
			return cfg_fail(c, devs, "devices", "expected a list of devices, got %s",
					node_kind(devs));
		if (devs->type == YAML_SEQUENCE_NODE) {
			size_t i = 0;
			for (yaml_node_item_t *it = devs->data.sequence.items.start;
			     it < devs->data.sequence.items.top; it++, i++)
				if ((rc = cfg_gpu(c, yaml_document_get_node(&c->doc, *it), i, l)) < 0)
					return rc;
		}
	}
	uint64_t mem = 0;
	double cpus = 0;
	int none = o && o->no_host;
	yaml_node_t *host = cfg_get(c, root, "host");
	if (host && (rc = cfg_host(c, host, &mem, &cpus, &none)) < 0)
		return rc;
	if (!none && (rc = add_host(l, o, mem, cpus, c->err)) < 0)
		return rc;
	if (l->n == 0)
		return cfg_fail(c, root, "(top)", "declares no device (no devices and host: none)");
	return 0;
}

int devices_config_parse(const char *text, size_t len, const char *name,
			 const devices_options *o, device_list **out, rl_err *err)
{
	struct cfg c = {.name = name, .err = err};
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &c.doc)) {
		int rc = rl_err_set(err, RL_EPARSE, "%s:%zu:%zu: %s%s%s", name,
				    parser.problem_mark.line + 1, parser.problem_mark.column + 1,
				    parser.problem ? parser.problem : "syntax error",
				    parser.context ? " " : "", parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		return rc;
	}
	yaml_parser_delete(&parser);
	device_list *l = calloc(1, sizeof *l);
	if (!l) {
		yaml_document_delete(&c.doc);
		return rl_err_set(err, RL_ENOMEM, "%s: out of memory", name);
	}
	l->from_config = 1;
	snprintf(l->source, sizeof l->source, "%s", name);
	int rc = cfg_document(&c, o, l);
	yaml_document_delete(&c.doc);
	if (rc < 0) {
		device_list_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

int devices_config_load(const char *path, const devices_options *o, device_list **out,
			rl_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return rl_err_sys(err, RL_EIO, errno, "devices file %s", path);
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			char *p = realloc(buf, cap);
			if (!p) {
				free(buf);
				fclose(f);
				return rl_err_set(err, RL_ENOMEM, "devices file %s: out of memory", path);
			}
			buf = p;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return rl_err_set(err, RL_EIO, "devices file %s: read error", path);
	}
	int rc = devices_config_parse(buf, len, path, o, out, err);
	free(buf);
	return rc;
}
