/*
 * slurm_cmd.c - the pure half of the slurm executor (slurm/slurm.h): the
 * sbatch command line, the job's identity, parsers of what squeue, the
 * job-completion file and the step wrapper print, and Slurm's job states
 * as relish's outcomes.  No process, file or clock here; slurm.c runs the
 * tools and feeds their output through these functions, and the unit
 * tests (tests/test_slurm_cmd.c) hold them to the formats Slurm 22.05
 * prints.
 */
#include "slurm/slurm.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

void slurm_options_default(slurm_options *o)
{
	memset(o, 0, sizeof *o);
	o->poll_interval_s = 1.0;
}

/* ---- identity ------------------------------------------------------------ */

void slurm_job_name(const char *experiment, const char *trial, int seq, char *buf, size_t n)
{
	if (!n)
		return;
	snprintf(buf, n, "relish-%s-%s-s%d", experiment ? experiment : "", trial ? trial : "", seq);
	for (char *p = buf; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			*p = '_';
}

void slurm_job_comment(const slurm_ident *id, char *buf, size_t n)
{
	snprintf(buf, n, "relish owner=%s experiment=%s trial=%s segment=%.17g-%.17g seq=%d",
		 id->owner, id->experiment, id->trial, id->from, id->to, id->seq);
}

/* The value of " key=" in text (up to the next space) copied into buf;
 * 0, or -1 when absent or too long. */
static int kv_get(const char *text, const char *key, char *buf, size_t n)
{
	size_t kl = strlen(key);
	for (const char *p = text; (p = strstr(p, key)); p += kl) {
		if ((p != text && p[-1] != ' ') || p[kl] != '=')
			continue;
		const char *v = p + kl + 1;
		size_t len = strcspn(v, " \n");
		if (len >= n)
			return -1;
		memcpy(buf, v, len);
		buf[len] = '\0';
		return 0;
	}
	return -1;
}

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v))
		return -1;
	*out = v;
	return (int)(end - s);
}

int slurm_parse_comment(const char *text, slurm_ident *out)
{
	if (!text || strncmp(text, "relish ", 7) != 0)
		return -1;
	slurm_ident id;
	memset(&id, 0, sizeof id);
	char seg[80], seq[24];
	if (kv_get(text, "owner", id.owner, sizeof id.owner) < 0 ||
	    kv_get(text, "experiment", id.experiment, sizeof id.experiment) < 0 ||
	    kv_get(text, "trial", id.trial, sizeof id.trial) < 0 ||
	    kv_get(text, "segment", seg, sizeof seg) < 0 || kv_get(text, "seq", seq, sizeof seq) < 0)
		return -1;
	/* "A-B" where A may itself be negative ("-1-3" does not occur:
	 * resources are >= 0, but parse it right anyway). */
	int k = parse_double(seg, &id.from);
	if (k <= 0 || seg[k] != '-' || parse_double(seg + k + 1, &id.to) <= 0)
		return -1;
	char *end;
	errno = 0;
	long q = strtol(seq, &end, 10);
	if (*end || errno || q < 0 || q > 1000000000L)
		return -1;
	id.seq = (int)q;
	*out = id;
	return 0;
}

/* ---- requests ---------------------------------------------------------------- */

unsigned slurm_shards_for(uint64_t mem_mib, uint64_t gpu_mem_mib, unsigned shards_per_gpu)
{
	if (!gpu_mem_mib || !shards_per_gpu)
		return 0;
	/* ceil(mem * shards / gpu_mem) without overflow for sane sizes */
	long double need = ceill((long double)mem_mib * shards_per_gpu / (long double)gpu_mem_mib);
	if (need < 1)
		need = 1;
	return need >= shards_per_gpu ? 0 : (unsigned)need;
}

typedef struct strv {
	char **v;
	size_t n, cap;
	int oom;
} strv;

static void sv_add(strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sv_add(strv *s, const char *fmt, ...)
{
	if (s->oom)
		return;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v) {
			s->oom = 1;
			return;
		}
		s->v = v;
		s->cap = cap;
	}
	va_list ap;
	va_start(ap, fmt);
	char *p;
	if (vasprintf(&p, fmt, ap) < 0) {
		s->oom = 1;
		p = NULL;
	}
	va_end(ap);
	if (!p)
		return;
	s->v[s->n++] = p;
	s->v[s->n] = NULL;
}

static void sv_free(strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

int slurm_build_sbatch_argv(const slurm_options *o, const exec_spec *es, const char *script,
			    char ***out, rl_err *err)
{
	if (!es->argv || !es->argv[0])
		return rl_err_set(err, RL_EINVAL, "slurm: empty command");
	if (!es->log_path || !*es->log_path)
		return rl_err_set(err, RL_EINVAL, "slurm: a segment needs an output file");
	if (!es->cluster)
		return rl_err_set(err, RL_EINVAL, "slurm: a segment needs a cluster request");
	const exec_cluster_request *c = es->cluster;
	char name[200], comment[400];
	const char *exp = c->experiment ? c->experiment : o->experiment;
	slurm_job_name(exp, es->a.trial_id, c->seq, name, sizeof name);
	slurm_ident id;
	memset(&id, 0, sizeof id);
	snprintf(id.owner, sizeof id.owner, "%s", o->owner ? o->owner : "");
	snprintf(id.experiment, sizeof id.experiment, "%s", exp ? exp : "");
	snprintf(id.trial, sizeof id.trial, "%s", es->a.trial_id ? es->a.trial_id : "");
	id.from = es->a.from;
	id.to = es->a.to;
	id.seq = c->seq;
	slurm_job_comment(&id, comment, sizeof comment);

	strv s = {0};
	sv_add(&s, "%s", o->sbatch ? o->sbatch : "sbatch");
	sv_add(&s, "--parsable");
	sv_add(&s, "--job-name=%s", name);
	sv_add(&s, "--comment=%s", comment);
	sv_add(&s, "--output=%s", es->log_path);
	sv_add(&s, "--error=%s", es->log_path);
	sv_add(&s, "--open-mode=append");
	/* relish re-runs a segment itself (from its checkpoint, elsewhere
	 * when a node failed); Slurm's own requeue would run it again
	 * behind relish's back. */
	sv_add(&s, "--no-requeue");
	sv_add(&s, "--nodes=1");
	sv_add(&s, "--ntasks=1");
	double cpus = es->cpus > 0 ? ceil(es->cpus - 1e-9) : 1;
	sv_add(&s, "--cpus-per-task=%d", cpus < 1 ? 1 : (int)cpus);
	uint64_t mem = c->mem_mib ? c->mem_mib : es->memory_limit_mib ? es->memory_limit_mib
								    : o->default_mem_mib;
	if (mem)
		sv_add(&s, "--mem=%lluM", (unsigned long long)mem);
	if (c->gpus > 0)
		sv_add(&s, "--gres=gpu:%d", c->gpus);
	else if (c->shards > 0)
		sv_add(&s, "--gres=shard:%d", c->shards);
	if (c->node && *c->node)
		sv_add(&s, "--nodelist=%s", c->node);
	if (es->timeout_s > 0) {
		double min = ceil(es->timeout_s / 60.0 - 1e-9);
		sv_add(&s, "--time=%.0f", min < 1 ? 1 : min);
	}
	if (o->partition && *o->partition)
		sv_add(&s, "--partition=%s", o->partition);
	const char *account = c->account ? c->account : o->account;
	const char *qos = c->qos ? c->qos : o->qos;
	if (account && *account)
		sv_add(&s, "--account=%s", account);
	if (qos && *qos)
		sv_add(&s, "--qos=%s", qos);
	for (size_t i = 0; i < o->n_sbatch_args; i++)
		sv_add(&s, "%s", o->sbatch_args[i]);
	for (size_t i = 0; i < c->n_pre_args; i++)
		sv_add(&s, "%s", c->pre_args[i]);
	for (size_t i = 0; i < c->n_args; i++)
		sv_add(&s, "%s", c->args[i]);
	sv_add(&s, "--export=ALL");
	if (es->cwd && *es->cwd)
		sv_add(&s, "--chdir=%s", es->cwd);
	sv_add(&s, "%s", script);
	for (char *const *a = es->argv; *a; a++)
		sv_add(&s, "%s", *a);
	if (s.oom) {
		sv_free(&s);
		return rl_err_set(err, RL_ENOMEM, "slurm: sbatch arguments");
	}
	*out = s.v;
	return 0;
}

char **slurm_submit_env(char *const *envp)
{
	char *const *src = envp ? envp : environ;
	size_t n = 0;
	int has_conf = 0;
	for (char *const *e = src; e && *e; e++) {
		n++;
		has_conf |= !strncmp(*e, "SLURM_CONF=", 11);
	}
	/* sbatch must find the cluster relish talks to, whatever the trial's
	 * environment says (relish's own SLURM_CONF when it has none). */
	const char *own = has_conf ? NULL : getenv("SLURM_CONF");
	char **v = calloc(n + 2, sizeof *v);
	if (!v)
		return NULL;
	size_t j = 0;
	for (char *const *e = src; e && *e; e++) {
		/* An allocation's SLURM_* variables (job id, node list, memory
		 * per node...) would be read by sbatch as options. */
		if (!strncmp(*e, "SLURM_", 6) && strncmp(*e, "SLURM_CONF=", 11) != 0)
			continue;
		if (!(v[j++] = strdup(*e)))
			goto oom;
	}
	if (own && *own && asprintf(&v[j++], "SLURM_CONF=%s", own) < 0) {
		v[j - 1] = NULL;
		goto oom;
	}
	return v;
oom:
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
	return NULL;
}

/* ---- squeue, the job-completion file --------------------------------------------- */

static void copy_field(char *dst, size_t n, const char *src, size_t len)
{
	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	if (!len || len > 20)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* One squeue line: JobID|State|Reason|exit_code|NodeList|Name|Comment| */
static int parse_squeue_line(const char *line, size_t len, slurm_job *j)
{
	const char *col[7];
	size_t cl[7];
	const char *p = line, *end = line + len;
	for (int i = 0; i < 6; i++) {
		const char *bar = memchr(p, '|', (size_t)(end - p));
		if (!bar)
			return -1;
		col[i] = p;
		cl[i] = (size_t)(bar - p);
		p = bar + 1;
	}
	/* The comment is the rest without its closing bar: anyone's comment
	 * may hold a bar, relish's never do. */
	col[6] = p;
	cl[6] = (size_t)(end - p);
	if (cl[6] && col[6][cl[6] - 1] == '|')
		cl[6]--;
	memset(j, 0, sizeof *j);
	if (parse_u64(col[0], cl[0], &j->id) < 0)
		return -1;
	copy_field(j->state, sizeof j->state, col[1], cl[1]);
	copy_field(j->reason, sizeof j->reason, col[2], cl[2]);
	uint64_t ex;
	j->exit_raw = parse_u64(col[3], cl[3], &ex) == 0 && ex <= 0xffff ? (int)ex : -1;
	copy_field(j->node, sizeof j->node, col[4], cl[4]);
	copy_field(j->name, sizeof j->name, col[5], cl[5]);
	char comment[512];
	copy_field(comment, sizeof comment, col[6], cl[6]);
	j->is_relish = slurm_parse_comment(comment, &j->ident) == 0;
	return 0;
}

int slurm_parse_squeue(const char *text, slurm_job **out, size_t *n, rl_err *err)
{
	slurm_job *v = NULL;
	size_t nv = 0, cap = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		slurm_job j;
		if (parse_squeue_line(p, len, &j) == 0) {
			if (nv == cap) {
				size_t c = cap ? cap * 2 : 16;
				slurm_job *w = realloc(v, c * sizeof *w);
				if (!w) {
					free(v);
					return rl_err_set(err, RL_ENOMEM, "slurm: squeue output");
				}
				v = w;
				cap = c;
			}
			v[nv++] = j;
		}
		p = nl ? nl + 1 : p + len;
	}
	*out = v;
	*n = nv;
	return 0;
}

int slurm_parse_jobcomp_line(const char *line, slurm_job *out)
{
	if (strncmp(line, "JobId=", 6) != 0)
		return -1;
	slurm_job j;
	memset(&j, 0, sizeof j);
	char id[32], ec[32];
	if (kv_get(line, "JobId", id, sizeof id) < 0 || parse_u64(id, strlen(id), &j.id) < 0 ||
	    kv_get(line, "JobState", j.state, sizeof j.state) < 0)
		return -1;
	if (kv_get(line, "NodeList", j.node, sizeof j.node) < 0 || !strcmp(j.node, "(null)"))
		j.node[0] = '\0';
	if (kv_get(line, "Name", j.name, sizeof j.name) < 0)
		j.name[0] = '\0';
	snprintf(j.reason, sizeof j.reason, "None");
	j.exit_raw = -1;
	/* ExitCode=CODE:SIGNAL */
	unsigned code, sig;
	if (kv_get(line, "ExitCode", ec, sizeof ec) == 0 && sscanf(ec, "%u:%u", &code, &sig) == 2 &&
	    code < 256 && sig < 128)
		j.exit_raw = sig ? (int)sig : (int)(code << 8);
	*out = j;
	return 0;
}

int slurm_parse_sacct_line(const char *line, slurm_job *out)
{
	const char *b1 = strchr(line, '|');
	const char *b2 = b1 ? strchr(b1 + 1, '|') : NULL;
	const char *b3 = b2 ? strchr(b2 + 1, '|') : NULL;
	if (!b3)
		return -1;
	slurm_job j;
	memset(&j, 0, sizeof j);
	if (parse_u64(line, (size_t)(b1 - line), &j.id) < 0)
		return -1; /* a step ("7.batch") or a header */
	/* "CANCELLED by 0" -> CANCELLED */
	size_t sl = strcspn(b1 + 1, " |");
	copy_field(j.state, sizeof j.state, b1 + 1, sl);
	if (!j.state[0])
		return -1;
	unsigned code, sig;
	char ec[32];
	copy_field(ec, sizeof ec, b2 + 1, (size_t)(b3 - b2 - 1));
	j.exit_raw = sscanf(ec, "%u:%u", &code, &sig) == 2 && code < 256 && sig < 128
			     ? (sig ? (int)sig : (int)(code << 8))
			     : -1;
	size_t nl = strcspn(b3 + 1, "|\n");
	copy_field(j.node, sizeof j.node, b3 + 1, nl);
	if (!strcmp(j.node, "None assigned"))
		j.node[0] = '\0';
	snprintf(j.reason, sizeof j.reason, "None");
	*out = j;
	return 0;
}

static const char *const final_states[] = {
	"COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED", "NODE_FAIL",
	"BOOT_FAIL", "PREEMPTED", "DEADLINE", "REVOKED", "SPECIAL_EXIT",
};

int slurm_state_final(const char *state)
{
	for (size_t i = 0; i < sizeof final_states / sizeof *final_states; i++) {
		size_t l = strlen(final_states[i]);
		/* sacct says "CANCELLED by 0"; squeue the bare word */
		if (!strncmp(state, final_states[i], l) && (state[l] == '\0' || state[l] == ' ' ||
							    state[l] == '+'))
			return 1;
	}
	return 0;
}

static int state_is(const char *state, const char *word)
{
	size_t l = strlen(word);
	return !strncmp(state, word, l) && (state[l] == '\0' || state[l] == ' ' || state[l] == '+');
}

void slurm_job_outcome(const char *state, int exit_raw, const char *reason, exec_result *r)
{
	r->exited = 1;
	r->exit_code = 0;
	r->term_signal = 0;
	int sig = exit_raw > 0 ? exit_raw & 0x7f : 0;
	int code = exit_raw > 0 ? (exit_raw >> 8) & 0xff : 0;
	if (state_is(state, "COMPLETED")) {
		r->outcome = SEG_OUT_COMPLETED;
		r->reason[0] = '\0';
	} else if (state_is(state, "FAILED")) {
		if (sig) {
			r->outcome = SEG_OUT_SIGNALED;
			r->exited = 0;
			r->term_signal = sig;
			snprintf(r->reason, sizeof r->reason, "killed by SIG%s (Slurm: FAILED)",
				 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
		} else {
			r->outcome = SEG_OUT_FAILED;
			r->exit_code = exit_raw < 0 ? -1 : code;
			if (exit_raw < 0)
				snprintf(r->reason, sizeof r->reason, "Slurm: FAILED (%s)",
					 reason && *reason ? reason : "exit code unknown");
			else
				snprintf(r->reason, sizeof r->reason, "exit code %d", code);
		}
	} else if (state_is(state, "TIMEOUT") || state_is(state, "DEADLINE")) {
		r->outcome = SEG_OUT_TIMEOUT;
		r->exited = 0;
		snprintf(r->reason, sizeof r->reason, "Slurm: %s (the job's time limit)", state);
	} else if (state_is(state, "OUT_OF_MEMORY")) {
		r->outcome = SEG_OUT_OOM;
		r->exited = 0;
		snprintf(r->reason, sizeof r->reason, "Slurm: OUT_OF_MEMORY (over the job's --mem)");
	} else if (state_is(state, "CANCELLED")) {
		r->outcome = SEG_OUT_CANCELLED;
		r->exited = 0;
		snprintf(r->reason, sizeof r->reason, "Slurm: CANCELLED");
	} else if (state_is(state, "NODE_FAIL") || state_is(state, "BOOT_FAIL") ||
		   state_is(state, "PREEMPTED")) {
		r->outcome = SEG_OUT_LOST;
		r->exited = 0;
		snprintf(r->reason, sizeof r->reason, "Slurm: %s (not the trial's fault: re-run "
			 "from its checkpoint)", state);
	} else {
		r->outcome = SEG_OUT_FAILED;
		r->exit_code = exit_raw < 0 ? -1 : code;
		snprintf(r->reason, sizeof r->reason, "Slurm: the job ended %s", state);
	}
}

/* ---- the step wrapper's lines --------------------------------------------------- */

int slurm_parse_step_line(const char *line, size_t len, slurm_step_line *out)
{
	size_t pl = strlen(SLURM_STEP_PREFIX);
	if (len < pl || memcmp(line, SLURM_STEP_PREFIX, pl) != 0)
		return -1;
	char buf[512];
	if (len >= sizeof buf)
		return -1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	if (len && buf[len - 1] == '\r')
		buf[len - 1] = '\0';
	const char *rest = buf + pl;
	slurm_step_line s;
	memset(&s, 0, sizeof s);
	if (!strncmp(rest, "start", 5) && (rest[5] == ' ' || !rest[5]))
		s.kind = 1;
	else if (!strncmp(rest, "end", 3) && (rest[3] == ' ' || !rest[3]))
		s.kind = 2;
	else
		return -1;
	char v[160];
	if (kv_get(rest, "node", s.node, sizeof s.node) < 0)
		s.node[0] = '\0';
	if (kv_get(rest, "at", v, sizeof v) < 0 || parse_double(v, &s.at) <= 0)
		s.at = 0;
	if (kv_get(rest, "gpus", v, sizeof v) == 0) {
		for (char *p = v; *p && s.n_gpus < EXEC_MAX_GPUS;) {
			char *end;
			long g = strtol(p, &end, 10);
			if (end == p || g < 0 || g > 4096)
				break;
			s.gpu[s.n_gpus++] = (int)g;
			p = *end == ',' ? end + 1 : end;
			if (*end != ',')
				break;
		}
	}
	if (s.kind == 2) {
		uint64_t u;
		if (kv_get(rest, "exit", v, sizeof v) == 0 && parse_u64(v, strlen(v), &u) == 0 &&
		    u < 256) {
			s.exited = 1;
			s.exit_code = (int)u;
		} else if (kv_get(rest, "signal", v, sizeof v) == 0 &&
			   parse_u64(v, strlen(v), &u) == 0 && u < 128) {
			s.term_signal = (int)u;
		} else {
			return -1;
		}
		if (kv_get(rest, "peak_rss_mib", v, sizeof v) == 0 &&
		    parse_u64(v, strlen(v), &u) == 0)
			s.peak_rss_mib = u;
		if (kv_get(rest, "peak_gpu_mib", v, sizeof v) == 0 &&
		    parse_u64(v, strlen(v), &u) == 0)
			s.peak_gpu_mib = u;
	}
	*out = s;
	return 0;
}
