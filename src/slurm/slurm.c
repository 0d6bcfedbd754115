/*
 * slurm.c - the slurm executor: one Slurm job per segment (slurm/slurm.h,
 * docs/slurm.md).
 *
 * Everything runs on the driver's libuv loop, and nothing on it waits for
 * Slurm: every tool is a child process (uv_spawn) whose output is read from
 * a pipe and parsed when it exits, and job output files are read with
 * uv_fs requests (libuv's thread pool).  One timer drives the rest:
 *   - submissions: sbatch per segment, at most SUBMIT_MAX at once (a burst
 *     of placements queues here, not in slurmctld);
 *   - one squeue per poll for every job of the executor (-u, all states),
 *     at most once per poll_interval_s, and at most every FAST_POLL_MS while
 *     a job's wrapper has printed its end line and Slurm has not yet
 *     called the job final: the request rate is bounded whatever the
 *     number of jobs;
 *   - jobs that squeue no longer lists (an earlier relish's job that ended
 *     long ago, MinJobAge passed) are looked up with one sacct for all of
 *     them where the cluster keeps accounting, else with one grep of the
 *     job-completion file (jobcomp/filetxt);
 *   - cancels: one scancel per timer turn for every job that asked (one
 *     per user: a job is cancelled by the user it runs as);
 *   - output: each started job's file is read from where the last read
 *     stopped; metric lines go to on_line as they appear, the step
 *     wrapper's start and end lines are taken here.
 * A job ends (on_end) once Slurm calls it final and its output has been
 * read to the end.
 *
 * Jobs of another user (exec_spec.run_as: relish serve runs a trial as its
 * submitter) are submitted and cancelled as that user: sbatch and scancel
 * run through relish-runas (runas.h: setgroups, setgid, setuid, exec), so
 * munge vouches for the submitter and Slurm's accounting, limits, fair
 * share and partition access are the submitter's, and the job (its step
 * wrapper, its trial, its output file) runs as them on the node.  squeue
 * lists the jobs of every user the executor has jobs of (-u UID,UID...).
 */
#include "slurm/slurm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/fsutil.h"

#define TICK_MS 100          /* the executor's timer */
#define FAST_POLL_MS 250     /* squeue while a job's end is awaited */
#define SUBMIT_MAX 4         /* sbatch processes at once */
#define READ_CHUNK 65536     /* output bytes per read (a buffer only while reading) */
#define IDLE_READ_MS 500     /* a job whose last read found nothing is read this often */
#define TAIL_KEEP 8192       /* output kept for out-of-memory messages */
#define TOOL_OUT_MAX (64u << 20) /* a tool's output beyond this is cut */
#define MISSING_POLLS 2      /* polls without a job before it is looked up */
#define LOOKUP_TRIES 3       /* completion-record lookups before it is lost */

typedef struct sexec sexec;
typedef struct sjob sjob;
typedef struct tool tool;

typedef enum jstate {
	J_WAIT,       /* sbatch not started yet (a submission slot is busy) */
	J_SUBMITTING, /* sbatch running */
	J_ACTIVE,     /* has a job id; pending or running in Slurm */
	J_FINAL,      /* Slurm says it is over; output read to the end, then on_end */
} jstate;

struct sjob {
	sexec *ex;
	sjob *next, *prev;
	exec_callbacks cb;
	void *ud;
	jstate st;
	uint64_t id;
	char handle[32];
	char **sbatch_argv, **sbatch_env; /* until sbatch runs */
	char *log_path;
	int64_t log_off;
	int fd;                     /* output file, -1 until opened */
	int fs_busy;                /* an open or read is in flight */
	int req_after_final;        /* ... and was issued after Slurm called it final */
	uv_fs_t fs;
	char *rbuf;                 /* READ_CHUNK while a read is in flight, else NULL */
	uint64_t idle_since_ms;     /* loop time of a read that found nothing; 0: it found some */
	char *line;                 /* partial line */
	size_t line_len, line_cap;
	int line_skip;              /* inside an over-long line */
	char tail[TAIL_KEEP];
	size_t tail_len;
	double submit_at, start_at; /* wall clock; 0 unknown */
	double timeout_s;
	int cancel_want, cancel_sent, timed_out, adopted;
	int missing, lookups;
	int end_line_seen;
	int started_sent;
	int drained;                /* FINAL and the output read to its end */
	int delivered;
	char final_state[24], final_reason[64];
	int final_raw;
	char lost_why[160];         /* FINAL without Slurm's word */
	int runtime_fault;
	char runtime_why[240];
	slurm_step_line start_line, end_line;
	size_t metric_lines, bad_lines;
	char node[64];
	/* whom the job runs as (run_as); relish's own user when !as_user */
	int as_user;
	uid_t uid;
	gid_t gid;
	size_t n_groups;
	gid_t groups[RUNAS_MAX_GROUPS];
	char *helper;
	char *cwd;                  /* where sbatch runs (the trial's folder) */
};

struct tool {
	sexec *ex;
	tool *next;
	uv_process_t proc;
	uv_pipe_t out, err;
	int open;                   /* handles not closed yet */
	char *obuf, *ebuf;
	size_t olen, ocap, elen, ecap;
	int64_t status;
	int term_signal;
	int spawned;
	void (*done)(tool *t);
	void *ud;
	sjob *job;
	runas_spawn ras;            /* run as another user: its error pipe */
	uid_t uid;                  /* cancel: whose jobs */
};

struct sexec {
	executor base;
	uv_loop_t *loop;
	slurm_options o;            /* strings below are owned copies */
	char *sbatch, *squeue, *scancel, *scontrol, *partition, *account, *qos, *experiment,
		*owner, *state_dir, *step_program, *jobcomp, *sacct;
	char **sbatch_args;
	char script[PATH_MAX];
	char **tool_env;            /* relish's environment without SLURM_* */
	char **user_env;            /* a user's scancel: tool_env's PATH and SLURM_CONF only */
	uid_t self_uid;
	uv_timer_t timer;
	int timer_open, timer_on;
	sjob *jobs;
	size_t n_jobs, n_submitting;
	tool *tools;
	size_t n_tools;
	int polling, looking_up, nodes_busy;
	size_t cancelling;          /* scancel processes running */
	uint64_t n_polls, looked_up_at; /* squeue answers so far; the one the last lookup followed */
	uint64_t last_poll_ms;
	int shutting_down, destroyed;
};

static const exec_ops slurm_ops;

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

static const char *tool_name(const char *opt, const char *env, const char *dflt)
{
	if (opt && *opt)
		return opt;
	const char *v = getenv(env);
	return v && *v ? v : dflt;
}

static void maybe_free(sexec *ex);
static void timer_cb(uv_timer_t *h);

static void timer_want(sexec *ex)
{
	if (ex->timer_open && !ex->timer_on && !ex->destroyed) {
		uv_timer_start(&ex->timer, timer_cb, TICK_MS, TICK_MS);
		ex->timer_on = 1;
	}
}

/* ---- tools: a child process and its output ------------------------------------ */

static void tool_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	(void)hint;
	tool *t = h->data;
	int is_out = h == (uv_handle_t *)&t->out;
	char **b = is_out ? &t->obuf : &t->ebuf;
	size_t *len = is_out ? &t->olen : &t->elen, *cap = is_out ? &t->ocap : &t->ecap;
	if (*cap - *len < 4096 && *cap < TOOL_OUT_MAX) {
		size_t c = *cap ? *cap * 2 : 8192;
		char *p = realloc(*b, c + 1);
		if (p) {
			*b = p;
			*cap = c;
		}
	}
	if (!*b || *cap == *len) {
		/* Out of memory or over the limit: read into a scratch buffer
		 * that is dropped (the pipe must still be drained). */
		static char scratch[4096];
		*buf = uv_buf_init(scratch, sizeof scratch);
		return;
	}
	*buf = uv_buf_init(*b + *len, (unsigned)(*cap - *len));
}

static void tool_closed(uv_handle_t *h)
{
	tool *t = h->data;
	if (--t->open > 0)
		return;
	sexec *ex = t->ex;
	if (t->obuf)
		t->obuf[t->olen] = '\0';
	if (t->ebuf)
		t->ebuf[t->elen] = '\0';
	for (tool **p = &ex->tools; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			break;
		}
	ex->n_tools--;
	if (t->done)
		t->done(t);
	runas_spawn_done(&t->ras);
	free(t->obuf);
	free(t->ebuf);
	free(t);
	maybe_free(ex);
}

static void tool_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	tool *t = s->data;
	if (n > 0) {
		int is_out = s == (uv_stream_t *)&t->out;
		char *b = is_out ? t->obuf : t->ebuf;
		size_t *len = is_out ? &t->olen : &t->elen;
		if (b && buf->base >= b && buf->base < b + (is_out ? t->ocap : t->ecap))
			*len += (size_t)n;
		return;
	}
	if (n < 0)
		uv_close((uv_handle_t *)s, tool_closed);
}

static void tool_exit(uv_process_t *p, int64_t status, int sig)
{
	tool *t = p->data;
	t->status = status;
	t->term_signal = sig;
	uv_close((uv_handle_t *)p, tool_closed);
}

/*
 * Run argv (argv[0] via PATH) with env (NULL: the executor's), as user
 * (NULL: relish's own user; else through relish-runas, which changes to
 * cwd as that user first); done runs once the process has exited and both
 * pipes are drained, with t->obuf / t->ebuf NUL-terminated (may be NULL:
 * nothing printed).  A tool that cannot be started still calls done, with
 * status -1 and the reason in ebuf; one the helper could not start as the
 * user exits 127 with the helper's words on stderr.  Returns 0, or
 * RL_ENOMEM.
 */
static int tool_run_as(sexec *ex, char *const *argv, char **env, const exec_user *user,
		       const char *cwd, void (*done)(tool *), void *ud, sjob *job)
{
	tool *t = calloc(1, sizeof *t);
	if (!t)
		return RL_ENOMEM;
	t->ex = ex;
	t->done = done;
	t->ud = ud;
	t->job = job;
	t->ras.pipe_rd = t->ras.pipe_wr = t->ras.env_fd = -1;
	t->next = ex->tools;
	ex->tools = t;
	ex->n_tools++;
	uv_pipe_init(ex->loop, &t->out, 0);
	uv_pipe_init(ex->loop, &t->err, 0);
	t->out.data = t->err.data = t->proc.data = t;
	uv_stdio_container_t stdio[5] = {
		{.flags = UV_IGNORE},
		{.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&t->out},
		{.flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE, .data.stream = (uv_stream_t *)&t->err},
		{.flags = UV_IGNORE},
		{.flags = UV_IGNORE},
	};
	uv_process_options_t po = {
		.exit_cb = tool_exit, .file = argv[0], .args = (char **)argv,
		.env = env ? env : ex->tool_env, .stdio_count = 3, .stdio = stdio,
	};
	int rc = 0;
	rl_err e;
	rl_err_clear(&e);
	if (user) {
		/* Root executes the helper: with an empty environment, the
		 * tool's travelling as data (runas.h). */
		const char *file;
		char **args;
		int fds[2];
		if (runas_spawn_prepare(&t->ras, user, argv, po.env, cwd, &file, &args, fds, &e) < 0) {
			rc = UV_EINVAL;
		} else {
			stdio[RUNAS_FD].flags = UV_INHERIT_FD;
			stdio[RUNAS_FD].data.fd = fds[0];
			stdio[RUNAS_ENV_FD].flags = UV_INHERIT_FD;
			stdio[RUNAS_ENV_FD].data.fd = fds[1];
			po.file = file;
			po.args = args;
			po.env = (char **)runas_helper_env;
			po.stdio_count = RUNAS_ENV_FD + 1;
		}
	}
	if (rc == 0)
		rc = uv_spawn(ex->loop, &t->proc, &po);
	if (user) {
		/* The helper's complaint, if any, stays readable in the pipe
		 * (it also says it on stderr, which done reads); our end for
		 * writing and the environment must go. */
		if (t->ras.pipe_wr >= 0)
			close(t->ras.pipe_wr);
		if (t->ras.env_fd >= 0)
			close(t->ras.env_fd);
		t->ras.pipe_wr = t->ras.env_fd = -1;
	}
	if (rc < 0) {
		t->status = -1;
		char msg[400];
		int m = e.code ? snprintf(msg, sizeof msg, "cannot run %s as uid %u: %s", argv[0],
					  (unsigned)user->uid, e.msg)
			       : snprintf(msg, sizeof msg, "cannot run %s: %s", argv[0],
					  uv_strerror(rc));
		if (m >= (int)sizeof msg)
			m = (int)sizeof msg - 1;
		t->ebuf = malloc((size_t)m + 1);
		if (t->ebuf) {
			memcpy(t->ebuf, msg, (size_t)m + 1);
			t->elen = t->ecap = (size_t)m;
		}
		t->open = 2;
		uv_close((uv_handle_t *)&t->out, tool_closed);
		uv_close((uv_handle_t *)&t->err, tool_closed);
		return 0;
	}
	t->spawned = 1;
	t->open = 3;
	uv_read_start((uv_stream_t *)&t->out, tool_alloc, tool_read);
	uv_read_start((uv_stream_t *)&t->err, tool_alloc, tool_read);
	return 0;
}

static int tool_run(sexec *ex, char *const *argv, char **env, void (*done)(tool *), void *ud,
		    sjob *job)
{
	return tool_run_as(ex, argv, env, NULL, NULL, done, ud, job);
}

/* Copies of env's entries that start with a or b (a NULL-terminated
 * list, owned by the caller; NULL when out of memory). */
static char **env_only(char *const *env, const char *a, const char *b)
{
	size_t n = 0;
	for (char *const *e = env; *e; e++)
		n++;
	char **v = calloc(n + 1, sizeof *v);
	size_t k = 0;
	for (char *const *e = env; v && *e; e++) {
		if (strncmp(*e, a, strlen(a)) != 0 && strncmp(*e, b, strlen(b)) != 0)
			continue;
		if (!(v[k++] = strdup(*e))) {
			contract_strv_free(v);
			return NULL;
		}
	}
	return v;
}

/* Whom job j runs as: NULL for relish's own user, else u filled in. */
static const exec_user *job_user(const sjob *j, exec_user *u)
{
	if (!j->as_user)
		return NULL;
	*u = (exec_user){.uid = j->uid, .gid = j->gid, .n_groups = j->n_groups,
			 .groups = j->groups, .helper = j->helper};
	return u;
}

/* The first line of a tool's complaint, for a reason. */
static void first_line(const char *text, char *buf, size_t n)
{
	if (!text)
		text = "";
	while (*text == '\n' || *text == ' ')
		text++;
	size_t l = strcspn(text, "\n");
	if (l >= n)
		l = n - 1;
	memcpy(buf, text, l);
	buf[l] = '\0';
}

/* ---- jobs ------------------------------------------------------------------------ */

static void job_free(sjob *j)
{
	contract_strv_free(j->sbatch_argv);
	contract_strv_free(j->sbatch_env);
	free(j->log_path);
	free(j->helper);
	free(j->cwd);
	free(j->rbuf);
	free(j->line);
	free(j);
}

static void job_unlink(sexec *ex, sjob *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		ex->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	ex->n_jobs--;
}

static sjob *job_new(sexec *ex, const exec_spec *es, const exec_callbacks *cb, void *ud)
{
	sjob *j = calloc(1, sizeof *j);
	if (!j)
		return NULL;
	j->ex = ex;
	j->cb = *cb;
	j->ud = ud;
	j->fd = -1;
	j->final_raw = -1;
	j->timeout_s = es->timeout_s;
	j->log_path = strdup(es->log_path);
	int oom = !j->log_path || (es->cwd && !(j->cwd = strdup(es->cwd)));
	if (es->run_as && !oom) {
		const exec_user *u = es->run_as;
		j->as_user = 1;
		j->uid = u->uid;
		j->gid = u->gid;
		j->n_groups = u->n_groups < RUNAS_MAX_GROUPS ? u->n_groups : RUNAS_MAX_GROUPS;
		if (j->n_groups)
			memcpy(j->groups, u->groups, j->n_groups * sizeof *j->groups);
		oom = !(j->helper = strdup(u->helper ? u->helper : ""));
	}
	if (oom) {
		job_free(j);
		return NULL;
	}
	j->next = ex->jobs;
	if (ex->jobs)
		ex->jobs->prev = j;
	ex->jobs = j;
	ex->n_jobs++;
	return j;
}

static void tail_add(sjob *j, const char *p, size_t n)
{
	if (n >= TAIL_KEEP) {
		memcpy(j->tail, p + n - (TAIL_KEEP - 1), TAIL_KEEP - 1);
		j->tail_len = TAIL_KEEP - 1;
	} else {
		if (j->tail_len + n >= TAIL_KEEP) {
			size_t drop = j->tail_len + n - (TAIL_KEEP - 1);
			memmove(j->tail, j->tail + drop, j->tail_len - drop);
			j->tail_len -= drop;
		}
		memcpy(j->tail + j->tail_len, p, n);
		j->tail_len += n;
	}
	j->tail[j->tail_len] = '\0';
}

static void send_started(sjob *j)
{
	if (j->started_sent || !j->cb.on_event)
		return;
	j->started_sent = 1;
	exec_event ev = {.kind = EXEC_EV_STARTED, .handle = j->handle,
			 .node = j->start_line.node[0] ? j->start_line.node : j->node};
	ev.n_gpus = j->start_line.n_gpus;
	for (int i = 0; i < ev.n_gpus; i++)
		ev.gpu[i] = j->start_line.gpu[i];
	ev.queued_s = j->submit_at > 0 && j->start_at > j->submit_at ? j->start_at - j->submit_at : 0;
	j->cb.on_event(j->ud, (exec_segment *)j, &ev);
}

static void take_line(sjob *j, const char *p, size_t n)
{
	slurm_step_line sl;
	if (n >= strlen(SLURM_STEP_PREFIX) && slurm_parse_step_line(p, n, &sl) == 0) {
		if (sl.kind == 1 && !j->start_line.kind) {
			j->start_line = sl;
			if (sl.at > 0)
				j->start_at = sl.at;
			else if (j->start_at <= 0)
				j->start_at = wall_now();
			send_started(j);
		} else if (sl.kind == 2) {
			j->end_line = sl;
			j->end_line_seen = 1;
		}
		return;
	}
	contract_line cl;
	switch (contract_parse_line(p, n, &cl)) {
	case CONTRACT_METRICS:
		j->metric_lines++;
		if (j->cb.on_line)
			j->cb.on_line(j->ud, (exec_segment *)j, &cl);
		break;
	case CONTRACT_BAD:
	case CONTRACT_NEAR:
		/* Forwarded so the driver can say what went wrong with it. */
		if (cl.kind == CONTRACT_BAD)
			j->bad_lines++;
		if (j->cb.on_line)
			j->cb.on_line(j->ud, (exec_segment *)j, &cl);
		break;
	default:
		break;
	}
}

/* Split freshly read output into lines. */
static void take_bytes(sjob *j, const char *p, size_t n)
{
	tail_add(j, p, n);
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n;
		if (!j->line_skip) {
			if (j->line_len + k > CONTRACT_LINE_MAX) {
				/* Longer than any line relish parses: log. */
				j->line_skip = 1;
				j->line_len = 0;
			} else {
				if (j->line_len + k + 1 > j->line_cap) {
					size_t c = j->line_cap ? j->line_cap : 256;
					while (c < j->line_len + k + 1)
						c *= 2;
					char *q = realloc(j->line, c);
					if (!q) {
						j->line_skip = 1;
						j->line_len = 0;
						goto next;
					}
					j->line = q;
					j->line_cap = c;
				}
				memcpy(j->line + j->line_len, p, k);
				j->line_len += k;
			}
		}
next:
		if (!nl)
			return;
		if (!j->line_skip)
			take_line(j, j->line ? j->line : "", j->line_len);
		j->line_len = 0;
		j->line_skip = 0;
		p = nl + 1;
		n -= k + 1;
	}
}

static void job_finish(sjob *j);
static void read_more(sjob *j);
static void close_fd(sjob *j);

/* A request finished after the executor was destroyed: drop the job. */
static int dropped(sjob *j)
{
	sexec *ex = j->ex;
	if (!ex->destroyed)
		return 0;
	close_fd(j);
	job_unlink(ex, j);
	job_free(j);
	maybe_free(ex);
	return 1;
}

static void on_read(uv_fs_t *req)
{
	sjob *j = req->data;
	ssize_t n = req->result;
	uv_fs_req_cleanup(req);
	j->fs_busy = 0;
	if (dropped(j))
		return;
	if (n > 0) {
		j->log_off += n;
		j->idle_since_ms = 0;
		take_bytes(j, j->rbuf, (size_t)n);
	} else {
		j->idle_since_ms = uv_now(j->ex->loop);
	}
	free(j->rbuf);
	j->rbuf = NULL;
	if (n > 0) {
		if (n == READ_CHUNK) {
			read_more(j);
			return;
		}
	}
	if (j->st == J_FINAL && !j->drained) {
		if (!j->req_after_final) {
			/* Read before Slurm called it over: the job may have
			 * written more since. */
			read_more(j);
			return;
		}
		/* What was read is all there is (a last partial line too). */
		if (j->line_len && !j->line_skip)
			take_line(j, j->line, j->line_len);
		j->line_len = 0;
		j->drained = 1;
	}
	if (j->drained)
		job_finish(j);
}

static void on_open(uv_fs_t *req)
{
	sjob *j = req->data;
	ssize_t fd = req->result;
	uv_fs_req_cleanup(req);
	j->fs_busy = 0;
	if (fd >= 0) {
		j->fd = (int)fd;
		if (dropped(j))
			return;
		read_more(j);
		return;
	}
	if (dropped(j))
		return;
	/* Not there yet (pending, or the node has not created it); a final
	 * job without a file has nothing more to say. */
	if (j->st == J_FINAL) {
		if (!j->req_after_final) {
			read_more(j);
			return;
		}
		j->drained = 1;
		job_finish(j);
	}
}

static void read_more(sjob *j)
{
	if (j->fs_busy || j->ex->destroyed)
		return;
	j->fs.data = j;
	j->req_after_final = j->st == J_FINAL;
	if (j->fd < 0) {
		if (uv_fs_open(j->ex->loop, &j->fs, j->log_path, O_RDONLY | O_CLOEXEC, 0, on_open) == 0)
			j->fs_busy = 1;
		return;
	}
	if (!j->rbuf && !(j->rbuf = malloc(READ_CHUNK)))
		return; /* out of memory: the next tick tries again */
	uv_buf_t b = uv_buf_init(j->rbuf, READ_CHUNK);
	if (uv_fs_read(j->ex->loop, &j->fs, j->fd, &b, 1, j->log_off, on_read) == 0)
		j->fs_busy = 1;
}

static void close_fd(sjob *j)
{
	if (j->fd >= 0) {
		uv_fs_t req;
		uv_fs_close(NULL, &req, j->fd, NULL);
		uv_fs_req_cleanup(&req);
		j->fd = -1;
	}
}

/* The result of an ended job, from Slurm's state and the wrapper's words. */
static void job_result(sjob *j, exec_result *r)
{
	memset(r, 0, sizeof *r);
	if (j->runtime_fault) {
		r->outcome = SEG_OUT_FAILED;
		r->exited = 1;
		r->exit_code = -1;
		r->fault = EXEC_FAULT_RUNTIME;
		snprintf(r->reason, sizeof r->reason, "%s", j->runtime_why);
		return;
	}
	if (j->lost_why[0]) {
		r->outcome = SEG_OUT_LOST;
		r->exit_code = -1;
		snprintf(r->reason, sizeof r->reason, "%s", j->lost_why);
	} else {
		slurm_job_outcome(j->final_state, j->final_raw, j->final_reason, r);
	}
	int ended = j->end_line_seen;
	if (r->outcome == SEG_OUT_CANCELLED && j->timed_out) {
		r->outcome = SEG_OUT_TIMEOUT;
		snprintf(r->reason, sizeof r->reason, "ran past its timeout of %g s (cancelled)",
			 j->timeout_s);
	} else if (r->outcome == SEG_OUT_CANCELLED && j->cancel_want) {
		snprintf(r->reason, sizeof r->reason, "cancelled");
	} else if ((r->outcome == SEG_OUT_FAILED || r->outcome == SEG_OUT_COMPLETED) && ended) {
		/* The wrapper saw the trial's own exit. */
		if (j->end_line.exited) {
			r->exited = 1;
			r->exit_code = j->end_line.exit_code;
			if (r->exit_code && r->outcome == SEG_OUT_FAILED)
				snprintf(r->reason, sizeof r->reason, "exit code %d", r->exit_code);
		} else if (r->outcome == SEG_OUT_FAILED) {
			r->outcome = SEG_OUT_SIGNALED;
			r->exited = 0;
			r->term_signal = j->end_line.term_signal;
			snprintf(r->reason, sizeof r->reason, "killed by SIG%s",
				 sigabbrev_np(r->term_signal) ? sigabbrev_np(r->term_signal) : "?");
		}
	}
	if (r->outcome == SEG_OUT_FAILED || r->outcome == SEG_OUT_SIGNALED ||
	    (r->outcome == SEG_OUT_CANCELLED && !j->cancel_want)) {
		/* Where Slurm samples memory (JobAcctGatherParams=OverMemoryKill)
		 * instead of the kernel enforcing it, a job over --mem ends
		 * FAILED or CANCELLED with slurmstepd's words in its output. */
		static const char overmem[] =
			"Slurm: over the job's --mem (slurmstepd: Exceeded job memory limit)";
		const char *m = strstr(j->tail, "xceeded job memory limit") ? overmem
									 : contract_oom_marker(j->tail);
		if (m) {
			r->outcome = SEG_OUT_OOM;
			r->oom_marker = m;
			if (m == overmem)
				snprintf(r->reason, sizeof r->reason, "%s", m);
		}
	}
	if (ended) {
		r->peak_rss_bytes = j->end_line.peak_rss_mib << 20;
		r->peak_gpu_mib = j->end_line.peak_gpu_mib;
	}
	double start = j->start_at, end = ended && j->end_line.at > 0 ? j->end_line.at : wall_now();
	r->duration_s = start > 0 && end > start ? end - start : 0;
	r->ready_s = -1;
	r->metric_lines = j->metric_lines;
	r->bad_lines = j->bad_lines;
}

/* Deliver on_end once the job is final and drained (or never submitted). */
static void job_finish(sjob *j)
{
	if (j->delivered || j->fs_busy)
		return;
	j->delivered = 1;
	sexec *ex = j->ex;
	close_fd(j);
	exec_result r;
	job_result(j, &r);
	job_unlink(ex, j);
	exec_callbacks cb = j->cb;
	void *ud = j->ud;
	if (cb.on_end)
		cb.on_end(ud, (exec_segment *)j, &r);
	job_free(j);
	maybe_free(ex);
}

/* Slurm's word that the job is over. */
static void job_final(sjob *j, const char *state, int raw, const char *reason)
{
	if (j->st == J_FINAL)
		return;
	j->st = J_FINAL;
	snprintf(j->final_state, sizeof j->final_state, "%s", state);
	snprintf(j->final_reason, sizeof j->final_reason, "%s", reason ? reason : "");
	j->final_raw = raw;
	if (j->start_at <= 0 && strcmp(state, "CANCELLED") != 0)
		j->start_at = j->submit_at;
	read_more(j);
}

/* Over without a job to ask about (never submitted, or sbatch refused). */
static void job_final_now(sjob *j)
{
	j->st = J_FINAL;
	j->drained = 1;
}

/* ---- sbatch ------------------------------------------------------------------------- */

static void submit_done(tool *t)
{
	sjob *j = t->job;
	sexec *ex = t->ex;
	ex->n_submitting--;
	uint64_t id = 0;
	const char *o = t->obuf ? t->obuf : "";
	/* --parsable: "ID" or "ID;CLUSTER" */
	char *end;
	errno = 0;
	unsigned long long v = strtoull(o, &end, 10);
	if (t->spawned && t->status == 0 && !t->term_signal && end != o && !errno &&
	    (*end == '\n' || *end == ';' || *end == '\0'))
		id = v;
	if (!id) {
		char why[200];
		first_line(t->ebuf && *t->ebuf ? t->ebuf : o, why, sizeof why);
		j->runtime_fault = 1;
		snprintf(j->runtime_why, sizeof j->runtime_why, "slurm: sbatch refused the job: %s",
			 why[0] ? why : "no job id printed");
		job_final_now(j);
		timer_want(ex);
		return;
	}
	j->id = id;
	snprintf(j->handle, sizeof j->handle, "%llu", (unsigned long long)id);
	j->st = J_ACTIVE;
	if (j->cb.on_event) {
		exec_event ev = {.kind = EXEC_EV_SUBMITTED, .handle = j->handle};
		j->cb.on_event(j->ud, (exec_segment *)j, &ev);
	}
	timer_want(ex);
}

static void submit_start(sexec *ex, sjob *j)
{
	j->st = J_SUBMITTING;
	ex->n_submitting++;
	j->submit_at = wall_now();
	exec_user u;
	int rc = tool_run_as(ex, j->sbatch_argv, j->sbatch_env, job_user(j, &u), j->cwd, submit_done,
			     NULL, j);
	contract_strv_free(j->sbatch_argv);
	contract_strv_free(j->sbatch_env);
	j->sbatch_argv = j->sbatch_env = NULL;
	if (rc < 0) {
		ex->n_submitting--;
		j->runtime_fault = 1;
		snprintf(j->runtime_why, sizeof j->runtime_why, "slurm: out of memory submitting");
		job_final_now(j);
	}
}

/* ---- squeue ------------------------------------------------------------------------- */

static int job_cmp(const void *a, const void *b)
{
	uint64_t x = ((const slurm_job *)a)->id, y = ((const slurm_job *)b)->id;
	return x < y ? -1 : x > y;
}

/* Pending reasons that mean the job can never start as asked. */
static int reason_never(const char *r)
{
	static const char *const never[] = {"BadConstraints", "InvalidAccount", "InvalidQOS",
					    "PartitionConfig", "QOSJobLimit"};
	for (size_t i = 0; i < sizeof never / sizeof *never; i++)
		if (!strcmp(r, never[i]))
			return 1;
	return 0;
}

static void poll_done(tool *t)
{
	sexec *ex = t->ex;
	ex->polling = 0;
	if (!t->spawned || t->status != 0 || t->term_signal)
		return; /* slurmctld busy or unreachable: the next poll asks again */
	slurm_job *rows = NULL;
	size_t n = 0;
	if (slurm_parse_squeue(t->obuf ? t->obuf : "", &rows, &n, NULL) < 0)
		return;
	if (n)
		qsort(rows, n, sizeof *rows, job_cmp);
	ex->n_polls++;
	double now = wall_now();
	for (sjob *j = ex->jobs; j; j = j->next) {
		if (j->st != J_ACTIVE)
			continue;
		slurm_job key = {.id = j->id};
		slurm_job *row = n ? bsearch(&key, rows, n, sizeof *rows, job_cmp) : NULL;
		if (!row) {
			j->missing++;
			continue;
		}
		j->missing = 0;
		if (row->node[0] && strcmp(row->node, "(null)") != 0)
			snprintf(j->node, sizeof j->node, "%s", row->node);
		if (slurm_state_final(row->state)) {
			job_final(j, row->state, row->exit_raw, row->reason);
		} else if (!strcmp(row->state, "PENDING")) {
			if (reason_never(row->reason) && !j->cancel_want) {
				j->runtime_fault = 1;
				snprintf(j->runtime_why, sizeof j->runtime_why,
					 "slurm: job %s can never start (%s)", j->handle, row->reason);
				j->cancel_want = 1;
			}
		} else if (j->start_at <= 0) {
			/* Running (or completing) and no wrapper line read yet. */
			j->start_at = now;
		}
	}
	free(rows);
	timer_want(ex);
}

/* "UID,UID,...": relish's own user and every user a job of ours runs as
 * (relish serve: its submitters), each once.  malloc'd; NULL: no memory. */
static char *poll_users(sexec *ex)
{
	size_t cap = 32, len = 0;
	char *v = malloc(cap);
	if (!v)
		return NULL;
	len = (size_t)snprintf(v, cap, "%u", (unsigned)ex->self_uid);
	for (sjob *j = ex->jobs; j; j = j->next) {
		if (!j->as_user || j->uid == ex->self_uid || j->st != J_ACTIVE)
			continue;
		int seen = 0;
		for (sjob *k = ex->jobs; k != j && !seen; k = k->next)
			seen = k->as_user && k->uid == j->uid && k->st == J_ACTIVE;
		if (seen)
			continue;
		if (cap - len < 16) {
			char *w = realloc(v, cap * 2);
			if (!w) {
				free(v);
				return NULL;
			}
			v = w;
			cap *= 2;
		}
		len += (size_t)snprintf(v + len, cap - len, ",%u", (unsigned)j->uid);
	}
	return v;
}

static void poll_start(sexec *ex)
{
	char *users = poll_users(ex);
	if (!users)
		return; /* out of memory: the next tick asks again */
	char *argv[] = {ex->squeue, "-h", "-t", "all", "-u", users, "-O", SLURM_SQUEUE_FORMAT,
			NULL};
	ex->polling = 1;
	ex->last_poll_ms = uv_now(ex->loop);
	if (tool_run(ex, argv, NULL, poll_done, NULL, NULL) < 0)
		ex->polling = 0;
	free(users);
}

/* ---- jobs squeue no longer lists: the job-completion file ------------------------------- */

static void lookup_done(tool *t)
{
	sexec *ex = t->ex;
	ex->looking_up = 0;
	const char *text = t->obuf ? t->obuf : "";
	for (sjob *j = ex->jobs; j; j = j->next) {
		if (j->st != J_ACTIVE || j->missing < MISSING_POLLS)
			continue;
		int found = 0;
		for (const char *p = text; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			char line[2048];
			if (len < sizeof line) {
				memcpy(line, p, len);
				line[len] = '\0';
				slurm_job row;
				int ok = ex->o.use_sacct ? slurm_parse_sacct_line(line, &row)
							 : slurm_parse_jobcomp_line(line, &row);
				if (ok == 0 && row.id == j->id) {
					/* the last record of the id wins (ids wrap
					 * around on long-lived clusters) */
					found = 1;
					if (row.node[0])
						snprintf(j->node, sizeof j->node, "%s", row.node);
					snprintf(j->final_state, sizeof j->final_state, "%s", row.state);
					j->final_raw = row.exit_raw;
				}
			}
			p = nl ? nl + 1 : p + len;
		}
		if (found && slurm_state_final(j->final_state)) {
			char st[24];
			snprintf(st, sizeof st, "%s", j->final_state);
			int raw = j->final_raw;
			j->final_state[0] = '\0';
			job_final(j, st, raw, "");
		} else if (++j->lookups >= LOOKUP_TRIES) {
			snprintf(j->lost_why, sizeof j->lost_why,
				 "Slurm no longer knows job %s (not in squeue, no completion record)",
				 j->handle);
			job_final(j, "", -1, "");
		}
	}
	timer_want(ex);
}

static void lookup_start(sexec *ex)
{
	size_t n = 0;
	for (sjob *j = ex->jobs; j; j = j->next)
		n += j->st == J_ACTIVE && j->missing >= MISSING_POLLS;
	if (!n)
		return;
	if (ex->o.use_sacct) {
		/* sacct -n -P -X -j 1,2,3 -o JobID,State,ExitCode,NodeList */
		size_t cap = 16 + n * 22;
		char *ids = malloc(cap);
		if (!ids)
			return;
		size_t len = 0;
		ids[0] = '\0';
		for (sjob *j = ex->jobs; j; j = j->next)
			if (j->st == J_ACTIVE && j->missing >= MISSING_POLLS)
				len += (size_t)snprintf(ids + len, cap - len, "%s%s", len ? "," : "",
							j->handle);
		char *argv[] = {ex->sacct, "-n", "-P", "-X", "-j", ids, "-o", SLURM_SACCT_FORMAT, NULL};
		ex->looking_up = 1;
		if (tool_run(ex, argv, NULL, lookup_done, NULL, NULL) < 0)
			ex->looking_up = 0;
		free(ids);
		return;
	}
	if (!ex->jobcomp) {
		/* No record to read: what squeue forgot is lost. */
		for (sjob *j = ex->jobs; j; j = j->next)
			if (j->st == J_ACTIVE && j->missing >= MISSING_POLLS) {
				snprintf(j->lost_why, sizeof j->lost_why,
					 "Slurm no longer lists job %s and there is no completion "
					 "record to read", j->handle);
				job_final(j, "", -1, "");
			}
		return;
	}
	/* grep -h -E '^JobId=(1|2|3) ' FILE */
	size_t cap = 32 + n * 22;
	char *re = malloc(cap);
	if (!re)
		return;
	size_t len = (size_t)snprintf(re, cap, "^JobId=(");
	int first = 1;
	for (sjob *j = ex->jobs; j; j = j->next)
		if (j->st == J_ACTIVE && j->missing >= MISSING_POLLS) {
			len += (size_t)snprintf(re + len, cap - len, "%s%s", first ? "" : "|", j->handle);
			first = 0;
		}
	snprintf(re + len, cap - len, ") ");
	char *argv[] = {"grep", "-h", "-E", re, ex->jobcomp, NULL};
	ex->looking_up = 1;
	if (tool_run(ex, argv, NULL, lookup_done, NULL, NULL) < 0)
		ex->looking_up = 0;
	free(re);
}

/* ---- scancel ------------------------------------------------------------------------------ */

static void cancel_done(tool *t)
{
	t->ex->cancelling--;
	/* The jobs end when squeue says so (a job that ended meanwhile
	 * makes scancel complain: nothing to do). */
	timer_want(t->ex);
}

static int cancel_due(const sjob *j)
{
	return j->st == J_ACTIVE && j->cancel_want && !j->cancel_sent;
}

/* One scancel for every job due of one user, as that user (its own jobs:
 * Slurm records who cancelled), then the next user's. */
static void cancel_start(sexec *ex)
{
	for (;;) {
		sjob *first = NULL;
		size_t n = 0;
		for (sjob *j = ex->jobs; j; j = j->next)
			if (cancel_due(j)) {
				if (!first)
					first = j;
				n += j->as_user == first->as_user && j->uid == first->uid;
			}
		if (!first)
			return;
		char **argv = calloc(n + 3, sizeof *argv);
		if (!argv)
			return;
		size_t k = 0;
		argv[k++] = ex->scancel;
		argv[k++] = "--quiet";
		int as_user = first->as_user;
		uid_t uid = first->uid;
		for (sjob *j = ex->jobs; j; j = j->next)
			if (cancel_due(j) && j->as_user == as_user && j->uid == uid) {
				argv[k++] = j->handle;
				j->cancel_sent = 1;
			}
		exec_user u;
		ex->cancelling++;
		/* scancel as the user, from the root folder (it needs none),
		 * with nothing of relish's environment but where Slurm is */
		const exec_user *who = job_user(first, &u);
		if (tool_run_as(ex, argv, who ? ex->user_env : NULL, who, "/", cancel_done, NULL,
				NULL) < 0)
			ex->cancelling--;
		free(argv);
	}
}

/* ---- the timer ------------------------------------------------------------------------------ */

static void timer_cb(uv_timer_t *h)
{
	sexec *ex = h->data;
	double now = wall_now();
	int ending = 0;
	sjob *next;
	for (sjob *j = ex->jobs; j; j = next) {
		next = j->next;
		if (j->st == J_WAIT && (j->cancel_want || ex->shutting_down)) {
			/* never submitted: nothing to cancel */
			snprintf(j->final_state, sizeof j->final_state, "CANCELLED");
			job_final_now(j);
		}
		if (j->st == J_WAIT && ex->n_submitting < SUBMIT_MAX)
			submit_start(ex, j);
		if (j->st == J_FINAL && j->drained) {
			job_finish(j);
			continue;
		}
		if (j->st == J_ACTIVE && j->timeout_s > 0 && j->start_at > 0 && !j->cancel_want &&
		    now - j->start_at > j->timeout_s) {
			j->timed_out = 1;
			j->cancel_want = 1;
		}
		/* Output: read at every turn while it grows, every IDLE_READ_MS
		 * while it does not (thousands of quiet jobs cost little). */
		if ((j->st == J_ACTIVE && (!j->idle_since_ms ||
					   uv_now(ex->loop) - j->idle_since_ms >= IDLE_READ_MS)) ||
		    (j->st == J_FINAL && !j->drained))
			read_more(j);
		ending |= j->st == J_ACTIVE && (j->end_line_seen || j->cancel_sent);
	}
	if (!ex->cancelling)
		cancel_start(ex);
	uint64_t ms = uv_now(ex->loop);
	uint64_t gap = ending ? FAST_POLL_MS : (uint64_t)(ex->o.poll_interval_s * 1000);
	int any_active = 0;
	for (sjob *j = ex->jobs; j; j = j->next)
		any_active |= j->st == J_ACTIVE;
	if (any_active && !ex->polling && ms - ex->last_poll_ms >= gap)
		poll_start(ex);
	/* at most one lookup per squeue answer: a job counts as missing
	 * poll by poll, and its lookups are spaced the same way */
	if (!ex->looking_up && !ex->polling && ex->looked_up_at != ex->n_polls) {
		ex->looked_up_at = ex->n_polls;
		lookup_start(ex);
	}
	if (!ex->jobs && ex->timer_on) {
		uv_timer_stop(&ex->timer);
		ex->timer_on = 0;
	}
}

/* ---- exec_ops ------------------------------------------------------------------------------- */

static int slurm_launch(executor *e, const exec_spec *es, const exec_callbacks *cb, void *ud,
			exec_segment **out, rl_err *err)
{
	sexec *ex = e->impl;
	if (es->mode != TRIAL_MODE_ONESHOT)
		return rl_err_set(err, RL_EUNSUPPORTED,
				  "slurm: only oneshot segments run as Slurm jobs (trial.mode)");
	if (ex->shutting_down)
		return rl_err_set(err, RL_EINVAL, "slurm: the executor is stopping");
	char **argv = NULL;
	int rc = slurm_build_sbatch_argv(&ex->o, es, ex->script, &argv, err);
	if (rc < 0)
		return rc;
	char **env = slurm_submit_env(es->envp);
	sjob *j = env ? job_new(ex, es, cb, ud) : NULL;
	if (!j) {
		contract_strv_free(argv);
		contract_strv_free(env);
		return rl_err_set(err, RL_ENOMEM, "slurm: a job");
	}
	j->sbatch_argv = argv;
	j->sbatch_env = env;
	/* A fresh segment's output starts where the file ends now (the
	 * contract appends). */
	struct stat stt;
	if (stat(j->log_path, &stt) == 0)
		j->log_off = stt.st_size;
	j->st = J_WAIT;
	if (ex->n_submitting < SUBMIT_MAX)
		submit_start(ex, j);
	timer_want(ex);
	*out = (exec_segment *)j;
	return 0;
}

static void slurm_cancel(executor *e, exec_segment *seg)
{
	(void)e;
	sjob *j = (sjob *)seg;
	if (!j || j->delivered)
		return;
	j->cancel_want = 1;
	timer_want(j->ex);
}

static int slurm_ident_of(executor *e, const exec_segment *seg, exec_ident *out)
{
	(void)e;
	const sjob *j = (const sjob *)seg;
	memset(out, 0, sizeof *out);
	snprintf(out->handle, sizeof out->handle, "%s", j->handle);
	return 0;
}

static int slurm_reclaim(executor *e, const exec_ident *id, rl_err *err)
{
	(void)err;
	sexec *ex = e->impl;
	if (!id->handle[0])
		return 0;
	char *argv[] = {ex->scancel, "--quiet", (char *)id->handle, NULL};
	tool_run(ex, argv, NULL, NULL, NULL, NULL);
	return 0;
}

static void slurm_release(executor *e, const char *key)
{
	(void)e;
	(void)key;
}

static size_t slurm_idle_count(executor *e)
{
	(void)e;
	return 0;
}

static void slurm_shutdown(executor *e)
{
	sexec *ex = e->impl;
	ex->shutting_down = 1;
	for (sjob *j = ex->jobs; j; j = j->next)
		j->cancel_want = 1;
	if (ex->jobs)
		timer_want(ex);
}

static void timer_closed(uv_handle_t *h)
{
	sexec *ex = h->data;
	ex->timer_open = 0;
	maybe_free(ex);
}

static void maybe_free(sexec *ex)
{
	if (!ex->destroyed || ex->n_tools || ex->timer_open || ex->jobs)
		return;
	free(ex->sbatch);
	free(ex->squeue);
	free(ex->scancel);
	free(ex->scontrol);
	free(ex->partition);
	free(ex->account);
	free(ex->qos);
	free(ex->experiment);
	free(ex->owner);
	free(ex->state_dir);
	free(ex->step_program);
	free(ex->jobcomp);
	free(ex->sacct);
	contract_strv_free(ex->sbatch_args);
	contract_strv_free(ex->tool_env);
	contract_strv_free(ex->user_env);
	free(ex);
}

static void slurm_destroy(executor *e)
{
	sexec *ex = e->impl;
	if (ex->destroyed)
		return;
	ex->destroyed = 1;
	/* Jobs still listed were never seen to end (the loop stopped first):
	 * they are dropped without a callback, and Slurm keeps them; a
	 * restarted relish adopts or cancels them. */
	sjob *next;
	for (sjob *j = ex->jobs; j; j = next) {
		next = j->next;
		if (j->fs_busy)
			continue; /* its request ends on the loop, which drops it */
		close_fd(j);
		job_unlink(ex, j);
		job_free(j);
	}
	if (ex->timer_open)
		uv_close((uv_handle_t *)&ex->timer, timer_closed);
	maybe_free(ex);
}

static const exec_ops slurm_ops = {
	.name = "slurm",
	.launch = slurm_launch,
	.cancel = slurm_cancel,
	.ident = slurm_ident_of,
	.reclaim = slurm_reclaim,
	.release = slurm_release,
	.idle_count = slurm_idle_count,
	.shutdown = slurm_shutdown,
	.destroy = slurm_destroy,
};

/* ---- creation ------------------------------------------------------------------------------- */

/* The step script: sbatch sends its text to slurmctld, so it need not be
 * on a shared folder; the relish binary it names must be on the nodes. */
static int write_script(sexec *ex, rl_err *err)
{
	if (rl_mkdirs(ex->state_dir, 0755) < 0)
		return rl_err_sys(err, RL_EIO, errno, "slurm: creating %s", ex->state_dir);
	snprintf(ex->script, sizeof ex->script, "%s/relish-step.sh", ex->state_dir);
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof tmp, "%s.tmp", ex->script);
	FILE *f = fopen(tmp, "we");
	if (!f)
		return rl_err_sys(err, RL_EIO, errno, "slurm: writing %s", tmp);
	fprintf(f, "#!/bin/sh\n"
		   "# relish: one trial segment as a Slurm job (docs/slurm.md).  The trial's\n"
		   "# argv follows the script's name and reaches it verbatim.\n"
		   "exec '");
	for (const char *p = ex->step_program; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fprintf(f, "' slurm-step -- \"$@\"\n");
	int bad = ferror(f);
	if (fclose(f) != 0 || bad || chmod(tmp, 0755) != 0 || rename(tmp, ex->script) != 0) {
		int e = errno;
		unlink(tmp);
		return rl_err_sys(err, RL_EIO, e, "slurm: writing %s", ex->script);
	}
	return 0;
}

int exec_slurm_new(uv_loop_t *loop, const slurm_options *o, executor **out, rl_err *err)
{
	if (!o->experiment || !o->owner || !o->state_dir)
		return rl_err_set(err, RL_EINVAL, "slurm: experiment, owner and state folder are required");
	sexec *ex = calloc(1, sizeof *ex);
	if (!ex)
		return rl_err_set(err, RL_ENOMEM, "slurm executor");
	ex->loop = loop;
	ex->o = *o;
	if (ex->o.poll_interval_s <= 0)
		ex->o.poll_interval_s = 1.0;
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	self[sl > 0 ? sl : 0] = '\0';
	ex->sbatch = strdup(tool_name(o->sbatch, "RELISH_SBATCH", "sbatch"));
	ex->squeue = strdup(tool_name(o->squeue, "RELISH_SQUEUE", "squeue"));
	ex->scancel = strdup(tool_name(o->scancel, "RELISH_SCANCEL", "scancel"));
	ex->scontrol = strdup(tool_name(o->scontrol, "RELISH_SCONTROL", "scontrol"));
	ex->sacct = strdup(tool_name(NULL, "RELISH_SACCT", "sacct"));
	ex->partition = dup_or_null(o->partition);
	ex->account = dup_or_null(o->account);
	ex->qos = dup_or_null(o->qos);
	ex->experiment = strdup(o->experiment);
	ex->owner = strdup(o->owner);
	ex->state_dir = strdup(o->state_dir);
	ex->step_program = strdup(o->step_program ? o->step_program : self);
	ex->jobcomp = dup_or_null(o->jobcomp_path && *o->jobcomp_path ? o->jobcomp_path : NULL);
	ex->sbatch_args = calloc(o->n_sbatch_args + 1, sizeof *ex->sbatch_args);
	ex->tool_env = slurm_submit_env(NULL);
	ex->user_env = ex->tool_env ? env_only(ex->tool_env, "PATH=", "SLURM_CONF=") : NULL;
	int oom = !ex->sbatch || !ex->squeue || !ex->scancel || !ex->scontrol || !ex->sacct ||
		  !ex->experiment ||
		  !ex->owner || !ex->state_dir || !ex->step_program || !ex->sbatch_args ||
		  !ex->tool_env || !ex->user_env || (o->partition && !ex->partition) ||
		  (o->account && !ex->account) || (o->qos && !ex->qos);
	for (size_t i = 0; !oom && i < o->n_sbatch_args; i++)
		oom = !(ex->sbatch_args[i] = strdup(o->sbatch_args[i]));
	ex->o.sbatch = ex->sbatch;
	ex->o.partition = ex->partition;
	ex->o.account = ex->account;
	ex->o.qos = ex->qos;
	ex->o.experiment = ex->experiment;
	ex->o.owner = ex->owner;
	ex->o.state_dir = ex->state_dir;
	ex->o.step_program = ex->step_program;
	ex->o.jobcomp_path = ex->jobcomp;
	ex->o.sbatch_args = (const char *const *)ex->sbatch_args;
	ex->self_uid = getuid();
	ex->base.ops = &slurm_ops;
	ex->base.impl = ex;
	int rc = oom ? rl_err_set(err, RL_ENOMEM, "slurm executor") : write_script(ex, err);
	if (rc < 0) {
		ex->destroyed = 1;
		maybe_free(ex);
		return rc;
	}
	uv_timer_init(loop, &ex->timer);
	ex->timer.data = ex;
	ex->timer_open = 1;
	*out = &ex->base;
	return 0;
}

int exec_slurm_adopt(executor *e, uint64_t job_id, const exec_spec *es,
		     const exec_callbacks *cb, void *ud, exec_segment **out, rl_err *err)
{
	if (!e || e->ops != &slurm_ops)
		return rl_err_set(err, RL_EINVAL, "adopting a job: not a slurm executor");
	if (!es->log_path)
		return rl_err_set(err, RL_EINVAL, "adopting job %llu: no output file",
				  (unsigned long long)job_id);
	sexec *ex = e->impl;
	sjob *j = job_new(ex, es, cb, ud);
	if (!j)
		return rl_err_set(err, RL_ENOMEM, "adopting a job");
	j->id = job_id;
	j->adopted = 1;
	snprintf(j->handle, sizeof j->handle, "%llu", (unsigned long long)job_id);
	j->st = J_ACTIVE;
	j->log_off = 0;
	/* poll at once: the job may have ended while no relish watched it */
	ex->last_poll_ms = 0;
	timer_want(ex);
	*out = (exec_segment *)j;
	return 0;
}

void exec_slurm_set_poll_interval(executor *e, double seconds)
{
	if (!e || e->ops != &slurm_ops)
		return;
	sexec *ex = e->impl;
	ex->o.poll_interval_s = seconds > 0 ? seconds : 1.0;
}

/* ---- node listing ------------------------------------------------------------------------ */

typedef struct nodes_req {
	slurm_text_cb cb;
	void *ud;
} nodes_req;

static void nodes_done(tool *t)
{
	nodes_req *q = t->ud;
	t->ex->nodes_busy = 0;
	if (t->spawned && t->status == 0 && !t->term_signal) {
		q->cb(q->ud, t->obuf ? t->obuf : "", NULL);
	} else {
		rl_err e = {0};
		char why[200];
		first_line(t->ebuf, why, sizeof why);
		rl_err_set(&e, RL_ERUNTIME, "scontrol show node: %s", why[0] ? why : "failed");
		q->cb(q->ud, NULL, &e);
	}
	free(q);
}

int exec_slurm_show_nodes(executor *e, slurm_text_cb cb, void *ud, rl_err *err)
{
	if (!e || e->ops != &slurm_ops)
		return rl_err_set(err, RL_EINVAL, "listing nodes: not a slurm executor");
	sexec *ex = e->impl;
	if (ex->nodes_busy)
		return rl_err_set(err, RL_EBUSY, "a node listing is running");
	nodes_req *q = malloc(sizeof *q);
	if (!q)
		return rl_err_set(err, RL_ENOMEM, "listing nodes");
	q->cb = cb;
	q->ud = ud;
	char *argv[] = {ex->scontrol, "show", "node", "-o", NULL};
	ex->nodes_busy = 1;
	if (tool_run(ex, argv, NULL, nodes_done, q, NULL) < 0) {
		ex->nodes_busy = 0;
		free(q);
		return rl_err_set(err, RL_ENOMEM, "listing nodes");
	}
	return 0;
}
