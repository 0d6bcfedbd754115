/*
 * process.c - the process executor: trials as child processes of relish, on
 * the driver's libuv loop (see exec.h for the contract with the driver).
 *
 * Each trial process is started without copying relish (spawn.h: clone
 * with CLONE_VM | CLONE_VFORK, no fork) and leads its own session and
 * process group: SIGTERM goes to the whole group (a DataLoader's workers
 * hear it with their trial) and a terminal's Ctrl-C does not reach it.
 * Each also gets a confinement unit (confine.h: a cgroup, or /proc
 * tracking), which holds every process it starts however it detaches: the
 * child starts in its cgroup or joins it before exec, SIGKILL goes to the whole
 * unit, and when the leader exits the rest of the unit is killed.  An exec
 * failure (missing binary, no permission) is reported by the child before
 * the spawn returns, so launch returns RL_EEXEC synchronously and no
 * process is left.  Its exit is seen on a pidfd (uv_poll: readable when it
 * has exited), then it is reaped by pid; libuv's own children (the
 * container and Slurm executors' tools) are untouched, libuv reaps only
 * those.  stdout and stderr are pipes read
 * here: both go, interleaved in arrival order, to the segment's log file
 * (bounded by log_max_bytes), the last TAIL_MAX bytes are kept for
 * out-of-memory messages, and stdout is split into lines (at most
 * CONTRACT_LINE_MAX bytes kept per line, the rest of a longer line
 * discarded) and parsed live.
 *
 * A segment ends when its process has exited and both pipes reached EOF (or
 * DRAIN_S after the exit, if a stray descendant keeps them open), or, in
 * warm and worker modes, when the trial prints RELISH_DONE to=<its
 * segment's end>.
 *
 * Memory: one timer samples every unit's RSS (the sum over its live
 * members) and SIGKILLs a unit above its reservation * (1 + memory_margin),
 * which ends as OOM; a warm or worker process is sampled once more at its
 * done line, so that a segment shorter than the interval still reports a
 * peak.  The peak is the larger of the sampled RSS and the leader's kernel
 * high-water mark (VmHWM), which catches a spike between two samples; a
 * reused process's mark is reset when its next segment starts, and not
 * used if that fails.  Only current RSS is held against the limit: a spike
 * already over is not a reason to kill.  rlimits are not used: RLIMIT_AS
 * counts virtual memory, and PyTorch, CUDA and JAX reserve far more address
 * space than they touch, so any cap low enough to matter breaks them;
 * raising limits needs CAP_SYS_RESOURCE, which relish may not have; the
 * units use no cgroup controller (only membership), so that they work
 * where no controller is delegated.  The container executors enforce hard
 * limits instead.
 *
 * Log writes are plain write(2) on the loop thread: segment logs are regular
 * files, where a write does not block for long.
 */
#include "exec/exec.h"
#include "process/process.h"

#include "process/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/procid.h"
#include "exec/spawn.h"
#include "telemetry/procmem.h"

#define TAIL_MAX 8192      /* output kept for out-of-memory messages */
#define READ_BUF 65536
#define DRAIN_S 2.0        /* wait for pipe EOF after exit at most */

typedef struct pexec pexec;
typedef struct proc proc;

struct exec_segment {
	proc *p;
	exec_callbacks cb;
	void *ud;
	double from, to;
	uint64_t t_start;          /* uv_hrtime */
	uint64_t peak_rss;
	int hwm_ok;                /* the leader's VmHWM covers this segment only */
	uint64_t mem_limit;        /* bytes at which it is killed; 0: none */
	int reused;
	int cancelled, timed_out, mem_exceeded;
	char protocol[160];        /* protocol violation, "" if none */
	size_t metric_lines, bad_lines;
	int log_errno;             /* first failed log write, 0 none */
};

struct proc {
	pexec *ex;
	proc *next;
	uv_poll_t h;               /* on pidfd: readable once the process has exited */
	int pidfd;                 /* -1 until spawned */
	uv_pipe_t in, out, err;
	uv_timer_t t_timeout, t_kill, t_drain;
	int open_handles;          /* freed when it drops to 0 */
	int has_in;
	pid_t pid;
	uint64_t start_time;
	confine_unit *cu;          /* the process and all it starts (confine.h) */
	uint64_t t_spawn;
	double ready_s;
	trial_mode mode;
	char *key;
	exec_segment *seg;         /* NULL while parked */
	uint64_t idle_since;       /* uv_hrtime when parked */
	int exited, exit_code, term_signal;
	int out_eof, err_eof;
	int kill_stage;            /* 0 none, 1 SIGTERM sent, 2 SIGKILL sent */
	int finished;              /* segment end / close already done */
	int log_fd;
	uint64_t log_bytes;
	int log_truncated;
	char tail[TAIL_MAX + 1];
	size_t tail_len;
	char *line;                /* stdout line being assembled */
	size_t line_len;
	int line_overflow;
	char rbuf_out[READ_BUF], rbuf_err[READ_BUF];
};

struct pexec {
	executor base;
	uv_loop_t *loop;
	exec_options opt;
	char cpu_why[PATH_MAX + 200]; /* why no CPU limits, when asked for */
	uv_timer_t t_sample;
	confine *cf;
	proc *procs;
	int shutting_down;
	int destroyed;             /* destroy called: free once all is closed */
	int sampler_closed;
};

static const exec_ops process_ops;

static double secs_since(uint64_t t0)
{
	return (double)(uv_hrtime() - t0) / 1e9;
}

static uint64_t ms(double s)
{
	return s <= 0 ? 0 : (uint64_t)ceil(s * 1000.0);
}

/* ---- handles and teardown ----------------------------------------------- */

static void proc_unlink(proc *p)
{
	for (proc **pp = &p->ex->procs; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			return;
		}
}

static void pexec_maybe_free(pexec *ex)
{
	if (ex->destroyed && ex->sampler_closed && !ex->procs) {
		confine_free(ex->cf);
		free(ex);
	}
}

static void on_handle_closed(uv_handle_t *h)
{
	proc *p = h->data;
	if (--p->open_handles == 0) {
		pexec *ex = p->ex;
		proc_unlink(p);
		confine_unit_free(ex->cf, p->cu);
		if (p->pidfd >= 0)
			close(p->pidfd);
		if (p->log_fd >= 0)
			close(p->log_fd);
		free(p->line);
		free(p->key);
		free(p);
		pexec_maybe_free(ex);
	}
}

static void close_handle(proc *p, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_handle_closed);
}

/* SIGTERM reaches the trial's process group, as a terminal's would; a
 * SIGKILL reaches every process of its unit, however detached. */
static void signal_group(proc *p, int sig)
{
	if (p->pid <= 0)
		return;
	if (sig == SIGKILL)
		confine_unit_kill(p->ex->cf, p->cu);
	else
		confine_unit_signal_group(p->ex->cf, p->cu, sig);
}

/* The unit's memory now: summed RSS of every member, and the leader's
 * high-water mark. */
static int unit_sample(proc *p, uint64_t *rss, uint64_t *hwm)
{
	int n = 0;
	if (confine_unit_usage(p->ex->cf, p->cu, rss, &n) < 0)
		return -1;
	*hwm = procmem_hwm(p->pid);
	return 0;
}

static void kill_timer_cb(uv_timer_t *t)
{
	proc *p = t->data;
	if (p->exited)
		return;
	p->kill_stage = 2;
	signal_group(p, SIGKILL);
}

/* SIGTERM to the group now, SIGKILL after the grace period. */
static void proc_kill(proc *p)
{
	if (p->exited || p->kill_stage)
		return;
	p->kill_stage = 1;
	signal_group(p, SIGTERM);
	uv_timer_start(&p->t_kill, kill_timer_cb, ms(p->ex->opt.kill_grace_s), 0);
}

/* Immediate SIGKILL (memory emergency, protocol violation). */
static void proc_kill_now(proc *p)
{
	if (p->exited || p->kill_stage == 2)
		return;
	p->kill_stage = 2;
	signal_group(p, SIGKILL);
}

/* ---- log, tail and lines ------------------------------------------------ */

static void log_write(proc *p, const char *buf, size_t n)
{
	if (p->log_fd < 0 || p->log_truncated)
		return;
	uint64_t max = p->ex->opt.log_max_bytes;
	if (p->log_bytes + n > max) {
		n = (size_t)(max - p->log_bytes);
		p->log_truncated = 1;
	}
	while (n > 0) {
		ssize_t w = write(p->log_fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* Best effort (the lines are parsed regardless); the
			 * driver says once that logs are incomplete. */
			if (p->seg && !p->seg->log_errno)
				p->seg->log_errno = w < 0 ? errno : ENOSPC;
			break;
		}
		buf += w;
		n -= (size_t)w;
		p->log_bytes += (uint64_t)w;
	}
	if (p->log_truncated) {
		char note[96];
		int k = snprintf(note, sizeof note, "\n[relish: log truncated at %llu bytes]\n",
				 (unsigned long long)max);
		if (write(p->log_fd, note, (size_t)k) < 0) {
			/* nothing more to do: the log is best effort */
		}
	}
}

static void tail_add(proc *p, const char *buf, size_t n)
{
	if (n >= TAIL_MAX) {
		buf += n - TAIL_MAX;
		n = TAIL_MAX;
	}
	if (p->tail_len + n > TAIL_MAX) {
		size_t drop = p->tail_len + n - TAIL_MAX;
		memmove(p->tail, p->tail + drop, p->tail_len - drop);
		p->tail_len -= drop;
	}
	/* NUL bytes would hide what follows them from strstr. */
	for (size_t i = 0; i < n; i++)
		p->tail[p->tail_len + i] = buf[i] ? buf[i] : '?';
	p->tail_len += n;
	p->tail[p->tail_len] = '\0';
}

static void segment_end(proc *p, seg_outcome outcome, const char *why);

/* Fold one sample into the segment's peak: its group's RSS now, and the
 * leader's high-water mark when it covers this segment alone. */
static void seg_peak(exec_segment *seg, uint64_t rss, uint64_t hwm)
{
	if (seg->hwm_ok && hwm > rss)
		rss = hwm;
	if (rss > seg->peak_rss)
		seg->peak_rss = rss;
}

static void handle_line(proc *p, const char *s, size_t n, int overflow)
{
	exec_segment *seg = p->seg;
	if (overflow) {
		if (seg && n >= 6 && memcmp(s, "RELISH", 6) == 0)
			seg->bad_lines++;
		return;
	}
	contract_line l;
	switch (contract_parse_line(s, n, &l)) {
	case CONTRACT_READY:
		if (p->ready_s < 0)
			p->ready_s = secs_since(p->t_spawn);
		return;
	case CONTRACT_BAD:
	case CONTRACT_NEAR:
		/* Forwarded so the driver can say what went wrong with it. */
		if (seg && l.kind == CONTRACT_BAD)
			seg->bad_lines++;
		if (seg && seg->cb.on_line)
			seg->cb.on_line(seg->ud, seg, &l);
		return;
	case CONTRACT_METRICS:
		if (seg) {
			seg->metric_lines++;
			if (seg->cb.on_line)
				seg->cb.on_line(seg->ud, seg, &l);
		}
		return;
	case CONTRACT_DONE:
		if (!seg || p->mode == TRIAL_MODE_ONESHOT) {
			if (seg && seg->cb.on_line)
				seg->cb.on_line(seg->ud, seg, &l);
			return;
		}
		if (fabs(l.done_to - seg->to) > 1e-9) {
			snprintf(seg->protocol, sizeof seg->protocol,
				 "protocol: RELISH_DONE to=%g, but the segment ends at %g", l.done_to, seg->to);
			proc_kill_now(p);
			return;
		}
		if (seg->cb.on_line)
			seg->cb.on_line(seg->ud, seg, &l);
		/* The process lives on: one more sample now, so that a segment
		 * shorter than the sampling interval still reports a peak (its
		 * group's memory at the end, a lower bound as every sample is). */
		uint64_t rss, hwm;
		confine_scan(p->ex->cf);
		if (unit_sample(p, &rss, &hwm) == 0)
			seg_peak(seg, rss, hwm);
		segment_end(p, SEG_OUT_COMPLETED, "done line");
		return;
	default:
		return;
	}
}

static void feed_stdout(proc *p, const char *buf, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;
		size_t room = CONTRACT_LINE_MAX - p->line_len;
		size_t keep = take < room ? take : room;
		if (keep) {
			memcpy(p->line + p->line_len, buf, keep);
			p->line_len += keep;
		}
		if (take > keep)
			p->line_overflow = 1;
		if (!nl)
			return;
		handle_line(p, p->line, p->line_len, p->line_overflow);
		p->line_len = 0;
		p->line_overflow = 0;
		buf = nl + 1;
		n -= take + 1;
		if (!p->line) /* the process was torn down by a callback */
			return;
	}
}

/* ---- segment end and exit ----------------------------------------------- */

static void park(proc *p);

static void fill_reason(exec_result *r, const exec_segment *seg)
{
	if (seg->protocol[0]) {
		snprintf(r->reason, sizeof r->reason, "%s", seg->protocol);
		return;
	}
	switch (r->outcome) {
	case SEG_OUT_COMPLETED:
		snprintf(r->reason, sizeof r->reason, "completed");
		break;
	case SEG_OUT_CANCELLED:
		snprintf(r->reason, sizeof r->reason, "cancelled");
		break;
	case SEG_OUT_TIMEOUT:
		snprintf(r->reason, sizeof r->reason, "ran past its timeout");
		break;
	case SEG_OUT_OOM:
		if (seg->mem_exceeded)
			snprintf(r->reason, sizeof r->reason,
				 "relish stopped it at %llu MiB, above its reservation and "
				 "margin, not for want of memory",
				 (unsigned long long)(seg->peak_rss >> 20));
		else
			snprintf(r->reason, sizeof r->reason, "out of memory: \"%s\" in its output",
				 r->oom_marker ? r->oom_marker : "exit 137");
		break;
	case SEG_OUT_SIGNALED:
		snprintf(r->reason, sizeof r->reason, "killed by signal %d (%s)", r->term_signal,
			 strsignal(r->term_signal));
		break;
	default:
		if (r->exited)
			snprintf(r->reason, sizeof r->reason, "exit code %d", r->exit_code);
		else
			snprintf(r->reason, sizeof r->reason, "ended without a done line");
	}
}

/* End p's current segment with outcome (COMPLETED by a done line) or, when
 * the process has exited, with the classified exit. */
static void segment_end(proc *p, seg_outcome outcome, const char *why)
{
	exec_segment *seg = p->seg;
	if (!seg)
		return;
	(void)why;
	uv_timer_stop(&p->t_timeout);
	exec_result r;
	memset(&r, 0, sizeof r);
	r.exited = p->exited ? (p->term_signal == 0) : 0;
	r.exit_code = p->exit_code;
	r.term_signal = p->term_signal;
	r.peak_rss_bytes = seg->peak_rss;
	r.duration_s = secs_since(seg->t_start);
	r.ready_s = p->ready_s;
	r.reused = seg->reused;
	r.metric_lines = seg->metric_lines;
	r.bad_lines = seg->bad_lines;
	r.log_errno = seg->log_errno;
	if (p->exited) {
		contract_exit x = {
			.exited = r.exited, .exit_code = r.exit_code, .term_signal = r.term_signal,
			.cancelled = seg->cancelled, .timed_out = seg->timed_out,
			.mem_exceeded = seg->mem_exceeded, .log_tail = p->tail,
		};
		r.outcome = contract_classify(&x);
		if (r.outcome == SEG_OUT_OOM && !seg->mem_exceeded)
			r.oom_marker = contract_oom_marker(p->tail);
		r.over_reservation = r.outcome == SEG_OUT_OOM && seg->mem_exceeded;
		/* A warm/worker process must end a segment with its done line
		 * (warm trials that just exit 0 are accepted: a oneshot program
		 * run in warm mode still works). */
		if (r.outcome == SEG_OUT_COMPLETED && p->mode == TRIAL_MODE_WORKER)
			r.outcome = SEG_OUT_FAILED;
		/* relish killed it for breaking the protocol: its fault, not a
		 * signal's. */
		if (seg->protocol[0] &&
		    (r.outcome == SEG_OUT_COMPLETED || r.outcome == SEG_OUT_SIGNALED))
			r.outcome = SEG_OUT_FAILED;
	} else {
		r.outcome = outcome;
	}
	fill_reason(&r, seg);
	if (p->exited && r.outcome == SEG_OUT_FAILED && p->mode == TRIAL_MODE_WORKER &&
	    !seg->protocol[0] && r.exited && r.exit_code == 0)
		snprintf(r.reason, sizeof r.reason, "worker exited before its done line");
	p->seg = NULL;
	if (!p->exited)
		park(p);
	if (seg->cb.on_end)
		seg->cb.on_end(seg->ud, seg, &r);
	free(seg);
}

static void proc_close(proc *p)
{
	if (p->finished)
		return;
	p->finished = 1;
	segment_end(p, SEG_OUT_FAILED, "exit");
	close_handle(p, (uv_handle_t *)&p->h);
	close_handle(p, (uv_handle_t *)&p->out);
	close_handle(p, (uv_handle_t *)&p->err);
	if (p->has_in)
		close_handle(p, (uv_handle_t *)&p->in);
	close_handle(p, (uv_handle_t *)&p->t_timeout);
	close_handle(p, (uv_handle_t *)&p->t_kill);
	close_handle(p, (uv_handle_t *)&p->t_drain);
}

static void maybe_finish(proc *p)
{
	if (p->exited && p->out_eof && p->err_eof)
		proc_close(p);
}

/* At the end of standard output: a last line without its newline (a trial
 * that exits right after printf("RELISH ...")) is a line, parsed as such. */
static void flush_last_line(proc *p)
{
	if (!p->out_eof && p->line && (p->line_len || p->line_overflow)) {
		handle_line(p, p->line, p->line_len, p->line_overflow);
		p->line_len = 0;
		p->line_overflow = 0;
	}
}

static void drain_timer_cb(uv_timer_t *t)
{
	proc *p = t->data;
	flush_last_line(p);
	p->out_eof = p->err_eof = 1;
	maybe_finish(p);
}

/* The pidfd is readable: the process has exited.  Reap it (the zombie held
 * its pid until now, so the pid is still ours) and classify. */
static void exit_poll_cb(uv_poll_t *h, int status, int events)
{
	proc *p = h->data;
	(void)status;
	(void)events;
	if (p->exited)
		return;
	int st = 0;
	pid_t r;
	while ((r = waitpid(p->pid, &st, WNOHANG)) < 0 && errno == EINTR)
		;
	if (r == 0)
		return; /* not yet (a spurious wake-up) */
	uv_poll_stop(h);
	p->exited = 1;
	if (r < 0) {
		/* Reaped elsewhere (SIGCHLD ignored): the status is lost. */
		p->exit_code = -1;
		p->term_signal = 0;
	} else {
		p->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
		p->term_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	}
	uv_timer_stop(&p->t_kill);
	/* Everything it started dies with it: stray descendants would hold
	 * the pipes open and the memory reservation. */
	confine_unit_kill(p->ex->cf, p->cu);
	if (p->has_in && !uv_is_closing((uv_handle_t *)&p->in))
		uv_close((uv_handle_t *)&p->in, on_handle_closed);
	uv_timer_start(&p->t_drain, drain_timer_cb, ms(DRAIN_S), 0);
	maybe_finish(p);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	proc *p = h->data;
	(void)suggested;
	char *b = h == (uv_handle_t *)&p->out ? p->rbuf_out : p->rbuf_err;
	*buf = uv_buf_init(b, READ_BUF);
}

static void read_cb(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	proc *p = s->data;
	int is_out = s == (uv_stream_t *)&p->out;
	if (n > 0) {
		log_write(p, buf->base, (size_t)n);
		tail_add(p, buf->base, (size_t)n);
		if (is_out)
			feed_stdout(p, buf->base, (size_t)n);
		return;
	}
	if (n == 0)
		return;
	uv_read_stop(s);
	if (is_out)
		flush_last_line(p);
	if (is_out)
		p->out_eof = 1;
	else
		p->err_eof = 1;
	maybe_finish(p);
}

/* ---- timers ---------------------------------------------------------------- */

static void timeout_cb(uv_timer_t *t)
{
	proc *p = t->data;
	if (!p->seg)
		return;
	p->seg->timed_out = 1;
	proc_kill(p);
}

/*
 * Arm the segment's timeout.  libuv timers count from the loop's cached
 * time, which can lag real time by a whole callback's work; refreshing it
 * first makes the timeout never fire before timeout_s of real time has
 * passed since launch (durations are measured with uv_hrtime).
 */
static void timeout_arm(proc *p, double timeout_s)
{
	uv_update_time(p->ex->loop);
	uv_timer_start(&p->t_timeout, timeout_cb, ms(timeout_s), 0);
}

/* Stop a parked process: the stop command, then signals after the grace. */
static void stop_idle(proc *p)
{
	if (p->exited || p->kill_stage)
		return;
	if (p->has_in && !uv_is_closing((uv_handle_t *)&p->in)) {
		static char stop[] = CONTRACT_STOP_COMMAND;
		uv_buf_t b = uv_buf_init(stop, sizeof stop - 1);
		uv_try_write((uv_stream_t *)&p->in, &b, 1);
		uv_close((uv_handle_t *)&p->in, on_handle_closed);
	}
	/* Grace first, then the SIGTERM/SIGKILL ladder. */
	p->kill_stage = 1;
	uv_timer_start(&p->t_kill, kill_timer_cb, ms(p->ex->opt.kill_grace_s), 0);
}

static size_t idle_count(pexec *ex)
{
	size_t n = 0;
	for (proc *p = ex->procs; p; p = p->next)
		if (!p->seg && !p->exited && !p->kill_stage && !p->finished)
			n++;
	return n;
}

static void park(proc *p)
{
	if (p->mode == TRIAL_MODE_ONESHOT || p->ex->shutting_down) {
		proc_kill(p);
		return;
	}
	p->idle_since = uv_hrtime();
	/* Too many parked: stop the one parked longest. */
	while (idle_count(p->ex) > p->ex->opt.max_idle) {
		proc *old = NULL;
		for (proc *q = p->ex->procs; q; q = q->next)
			if (!q->seg && !q->exited && !q->kill_stage && !q->finished &&
			    (!old || q->idle_since < old->idle_since))
				old = q;
		if (!old)
			break;
		stop_idle(old);
	}
}

static void sample_cb(uv_timer_t *t)
{
	pexec *ex = t->data;
	int any = 0;
	for (proc *p = ex->procs; p; p = p->next) {
		if (p->exited)
			continue;
		if (!p->seg && !p->kill_stage && ex->opt.idle_timeout_s > 0 &&
		    secs_since(p->idle_since) > ex->opt.idle_timeout_s) {
			stop_idle(p);
			continue;
		}
		any |= p->seg != NULL;
	}
	if (!any)
		return;
	/* One /proc scan for every unit tracked there; cgroups are read each. */
	confine_scan(ex->cf);
	for (proc *p = ex->procs; p; p = p->next) {
		exec_segment *seg = p->seg;
		uint64_t rss, hwm;
		if (p->exited || !seg || unit_sample(p, &rss, &hwm) < 0)
			continue;
		seg_peak(seg, rss, hwm);
		if (seg->mem_limit && rss > seg->mem_limit && !seg->mem_exceeded) {
			seg->mem_exceeded = 1;
			proc_kill_now(p);
		}
	}
}

/* ---- launch ------------------------------------------------------------------ */

static void write_done_cb(uv_write_t *w, int status)
{
	(void)status; /* a failed write shows as the process's exit */
	free(w->data);
	free(w);
}

static int send_command(proc *p, const exec_assignment *a, rl_err *err)
{
	char *line = contract_run_command(a->trial_id, a->params_json, a->from, a->to,
					  a->checkpoint_dir);
	if (!line)
		return rl_err_set(err, RL_EINVAL, "building the run command (are the params JSON?)");
	uv_write_t *w = malloc(sizeof *w);
	if (!w) {
		free(line);
		return rl_err_set(err, RL_ENOMEM, "writing the run command");
	}
	w->data = line;
	uv_buf_t b = uv_buf_init(line, (unsigned)strlen(line));
	int rc = uv_write(w, (uv_stream_t *)&p->in, &b, 1, write_done_cb);
	if (rc < 0) {
		free(line);
		free(w);
		return rl_err_set(err, RL_EEXEC, "writing the run command: %s", uv_strerror(rc));
	}
	return 0;
}

static int open_log(proc *p, const char *path, rl_err *err)
{
	if (!path)
		return 0;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return rl_err_sys(err, RL_EIO, errno, "opening log %s", path);
	if (p->log_fd >= 0)
		close(p->log_fd);
	p->log_fd = fd;
	p->log_bytes = 0;
	p->log_truncated = 0;
	return 0;
}

static exec_segment *segment_new(proc *p, const exec_spec *es, const exec_callbacks *cb,
				 void *ud, int reused)
{
	exec_segment *seg = calloc(1, sizeof *seg);
	if (!seg)
		return NULL;
	seg->p = p;
	if (cb)
		seg->cb = *cb;
	seg->ud = ud;
	seg->from = es->a.from;
	seg->to = es->a.to;
	seg->t_start = uv_hrtime();
	seg->reused = reused;
	seg->hwm_ok = !reused; /* a new process's mark starts at its exec */
	if (es->memory_limit_mib)
		seg->mem_limit = (uint64_t)((double)(es->memory_limit_mib << 20) *
					    (1.0 + p->ex->opt.memory_margin));
	return seg;
}

static proc *find_idle(pexec *ex, const char *key, trial_mode mode)
{
	if (!key)
		return NULL;
	for (proc *p = ex->procs; p; p = p->next)
		if (!p->seg && !p->exited && !p->kill_stage && !p->finished && p->mode == mode &&
		    p->key && strcmp(p->key, key) == 0 && p->has_in &&
		    !uv_is_closing((uv_handle_t *)&p->in))
			return p;
	return NULL;
}

/* Give an assignment to a parked process. */
static int launch_reuse(proc *p, const exec_spec *es, const exec_callbacks *cb, void *ud,
			exec_segment **out, rl_err *err)
{
	int rc = open_log(p, es->log_path, err);
	if (rc < 0)
		return rc;
	exec_segment *seg = segment_new(p, es, cb, ud, 1);
	if (!seg)
		return rl_err_set(err, RL_ENOMEM, "starting a segment");
	/* the mark so far is the earlier segments' */
	seg->hwm_ok = procmem_reset_hwm(p->pid, NULL) == 0;
	rc = send_command(p, &es->a, err);
	if (rc < 0) {
		free(seg);
		return rc;
	}
	p->seg = seg;
	p->tail_len = 0;
	p->tail[0] = '\0';
	if (es->timeout_s > 0)
		timeout_arm(p, es->timeout_s);
	*out = seg;
	return 0;
}

/*
 * Run the trial as es->run_as (relish serve: its owner) through the
 * relish-runas helper (runas.h): r runs the helper instead, with an empty
 * environment of its own (root executes it), the trial's environment as
 * data on a fifth descriptor and the error pipe on a fourth; the helper
 * changes to the trial's folder itself once it is that user.
 */
static int runas_wrap(const exec_spec *es, spawn_req *r, runas_spawn *ras, rl_err *err)
{
	const char *file;
	char **args;
	int fds[2];
	int rc = runas_spawn_prepare(ras, es->run_as, es->argv, es->envp, es->cwd, &file, &args,
				     fds, err);
	if (rc < 0)
		return rc;
	r->fds[RUNAS_FD] = fds[0];
	r->fds[RUNAS_ENV_FD] = fds[1];
	r->n_fds = RUNAS_ENV_FD + 1;
	r->file = file;
	r->argv = args;
	r->envp = runas_helper_env;
	r->cwd = NULL;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The child's standard streams: stdin a pipe (warm, worker) or /dev/null,
 * stdout and stderr pipes; every end close-on-exec (the child's ends lose it
 * as they become 0, 1, 2).  ours[i] is relish's end (-1 for /dev/null).
 * 0 or a negative errno; on failure nothing stays open. */
static int stdio_open(int has_in, int child[3], int ours[3])
{
	int fds[2];
	for (int i = 0; i < 3; i++)
		child[i] = ours[i] = -1;
	if (has_in) {
		if (pipe2(fds, O_CLOEXEC) < 0)
			goto fail;
		child[0] = fds[0];
		ours[0] = fds[1];
	} else if ((child[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
		goto fail;
	}
	for (int i = 1; i < 3; i++) {
		if (pipe2(fds, O_CLOEXEC) < 0)
			goto fail;
		ours[i] = fds[0];
		child[i] = fds[1];
	}
	return 0;
fail:;
	int e = errno;
	for (int i = 0; i < 3; i++) {
		close_fd(&child[i]);
		close_fd(&ours[i]);
	}
	return -e;
}

/* Start the process of p: streams, unit, spawn, pidfd.  0, or a negative
 * errno with nothing running (the unit freed); *wrap_rc < 0 when
 * relish-runas could not even be prepared (err says why). */
static int proc_start(pexec *ex, proc *p, const exec_spec *es, int *wrap_rc, rl_err *err)
{
	int child[3], ours[3];
	int rc = stdio_open(p->has_in, child, ours);
	if (rc < 0)
		return rc;
	spawn_req r = {
		.file = es->argv[0], .argv = es->argv, .envp = es->envp, .cwd = es->cwd,
		.fds = {child[0], child[1], child[2], -1, -1}, .n_fds = 3,
		.new_session = 1, /* own session and process group */
		.cgroup_fd = -1, .join_fd = -1, .cpu_join_fd = -1,
	};
	runas_spawn ras = {.pipe_rd = -1, .pipe_wr = -1, .env_fd = -1};
	*wrap_rc = es->run_as ? runas_wrap(es, &r, &ras, err) : 0;
	rl_err cerr;
	/* relish serve: a trial's cpus: is a kernel limit where a cpu
	 * controller serves (exec_options.cpu_limit) */
	if (confine_unit_begin(ex->cf, ex->opt.cpu_limit ? es->cpus : 0, &p->cu, &cerr) < 0)
		p->cu = NULL; /* out of memory: its process group still holds it */
	r.cgroup_fd = confine_unit_dir_fd(p->cu);
	r.join_fd = confine_unit_join_fd(p->cu);
	r.cpu_join_fd = confine_unit_cpu_join_fd(p->cu);
	p->t_spawn = uv_hrtime();
	rc = *wrap_rc == 0 ? spawn_process(&r) : -EINVAL; /* err says why */
	for (int i = 0; i < 3; i++)
		close_fd(&child[i]);
	if (rc == 0) {
		p->pid = r.pid;
		procid_start_time(p->pid, &p->start_time, NULL); /* 0 if unread: never "ours" */
		int fd = (int)syscall(SYS_pidfd_open, p->pid, 0);
		rc = fd < 0 ? -errno : uv_poll_init(ex->loop, &p->h, fd);
		if (rc == 0) {
			/* The handle watches the pidfd from here (closed with p). */
			p->pidfd = fd;
			p->h.data = p;
		} else {
			/* Its exit could not be seen: do not let it run. */
			if (fd >= 0)
				close(fd);
			kill(-p->pid, SIGKILL);
			kill(p->pid, SIGKILL);
			while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
	}
	confine_unit_spawned(ex->cf, p->cu, rc == 0 ? p->pid : 0, p->start_time, r.join_errno);
	if (rc < 0)
		p->cu = NULL; /* freed by confine_unit_spawned */
	/* relish-runas says here whether the trial itself could be executed
	 * (a failed one is reaped; its unit goes with the handles). */
	if (rc == 0 && es->run_as)
		rc = runas_spawn_wait(&ras, p->pid);
	runas_spawn_done(&ras);
	if (rc < 0) {
		for (int i = 0; i < 3; i++)
			close_fd(&ours[i]);
		return rc;
	}
	uv_pipe_open(&p->out, ours[1]);
	uv_pipe_open(&p->err, ours[2]);
	if (p->has_in)
		uv_pipe_open(&p->in, ours[0]);
	else
		close_fd(&ours[0]);
	uv_poll_start(&p->h, UV_READABLE, exit_poll_cb);
	return 0;
}

static int launch_spawn(pexec *ex, const exec_spec *es, const exec_callbacks *cb, void *ud,
			exec_segment **out, rl_err *err)
{
	if (!es->argv || !es->argv[0])
		return rl_err_set(err, RL_EINVAL, "trial command is empty");
	proc *p = calloc(1, sizeof *p);
	if (!p)
		return rl_err_set(err, RL_ENOMEM, "starting a trial");
	p->ex = ex;
	p->log_fd = -1;
	p->pidfd = -1;
	p->ready_s = -1;
	p->mode = es->mode;
	p->line = malloc(CONTRACT_LINE_MAX);
	p->key = es->reuse_key ? strdup(es->reuse_key) : NULL;
	if (!p->line || (es->reuse_key && !p->key)) {
		free(p->line);
		free(p->key);
		free(p);
		return rl_err_set(err, RL_ENOMEM, "starting a trial");
	}
	int rc = open_log(p, es->log_path, err);
	if (rc < 0) {
		free(p->line);
		free(p->key);
		free(p);
		return rc;
	}
	exec_segment *seg = segment_new(p, es, cb, ud, 0);
	if (!seg) {
		if (p->log_fd >= 0)
			close(p->log_fd);
		free(p->line);
		free(p->key);
		free(p);
		return rl_err_set(err, RL_ENOMEM, "starting a trial");
	}
	p->has_in = es->mode != TRIAL_MODE_ONESHOT;
	uv_pipe_init(ex->loop, &p->out, 0);
	uv_pipe_init(ex->loop, &p->err, 0);
	if (p->has_in)
		uv_pipe_init(ex->loop, &p->in, 0);
	uv_timer_init(ex->loop, &p->t_timeout);
	uv_timer_init(ex->loop, &p->t_kill);
	uv_timer_init(ex->loop, &p->t_drain);
	p->out.data = p->err.data = p->in.data = p;
	p->t_timeout.data = p->t_kill.data = p->t_drain.data = p;
	p->open_handles = 6 + p->has_in;

	int wrap_rc = 0;
	rc = proc_start(ex, p, es, &wrap_rc, err);
	p->next = ex->procs;
	ex->procs = p;
	if (rc < 0) {
		/* Nothing runs; close the handles and report the exec error to
		 * the caller. */
		free(seg);
		p->finished = 1;
		p->exited = 1;
		if (p->pidfd >= 0)
			uv_close((uv_handle_t *)&p->h, on_handle_closed);
		else
			p->open_handles--; /* no process handle was made */
		uv_close((uv_handle_t *)&p->out, on_handle_closed);
		uv_close((uv_handle_t *)&p->err, on_handle_closed);
		if (p->has_in)
			uv_close((uv_handle_t *)&p->in, on_handle_closed);
		uv_close((uv_handle_t *)&p->t_timeout, on_handle_closed);
		uv_close((uv_handle_t *)&p->t_kill, on_handle_closed);
		uv_close((uv_handle_t *)&p->t_drain, on_handle_closed);
		if (wrap_rc < 0)
			return wrap_rc; /* err says why */
		return rl_err_set(err, RL_EEXEC, "starting %s: %s", es->argv[0], uv_strerror(rc));
	}
	p->seg = seg;
	uv_read_start((uv_stream_t *)&p->out, alloc_cb, read_cb);
	uv_read_start((uv_stream_t *)&p->err, alloc_cb, read_cb);
	if (es->mode == TRIAL_MODE_WORKER && send_command(p, &es->a, err) < 0) {
		/* The process is up but cannot be told what to do: stop it; its
		 * segment ends FAILED through the usual path. */
		rl_err_clear(err);
		snprintf(seg->protocol, sizeof seg->protocol, "protocol: could not send the assignment");
		proc_kill_now(p);
	}
	if (es->timeout_s > 0)
		timeout_arm(p, es->timeout_s);
	*out = seg;
	return 0;
}

static int px_launch(executor *e, const exec_spec *es, const exec_callbacks *cb, void *ud,
		     exec_segment **out, rl_err *err)
{
	pexec *ex = e->impl;
	if (ex->shutting_down)
		return rl_err_set(err, RL_EBUSY, "the executor is shutting down");
	if (es->mode != TRIAL_MODE_ONESHOT) {
		proc *p = find_idle(ex, es->reuse_key, es->mode);
		if (p)
			return launch_reuse(p, es, cb, ud, out, err);
	}
	return launch_spawn(ex, es, cb, ud, out, err);
}

static void px_cancel(executor *e, exec_segment *seg)
{
	(void)e;
	if (!seg || seg->cancelled)
		return;
	seg->cancelled = 1;
	proc_kill(seg->p);
}

static int px_ident(executor *e, const exec_segment *seg, exec_ident *out)
{
	(void)e;
	exec_ident id = {.pid = seg->p->pid, .start_time = seg->p->start_time};
	*out = id;
	return 0;
}

static int px_reclaim(executor *e, const exec_ident *id, rl_err *err)
{
	(void)e;
	(void)err;
	/* Its output pipes died with the previous relish, so it cannot report:
	 * stop the whole group if the pid is still the same process. */
	if (id->pid > 0 && procid_matches(id->pid, id->start_time))
		kill(-id->pid, SIGKILL);
	return 0;
}

static int px_members(executor *e, const exec_segment *seg, pid_t *out, size_t max)
{
	pexec *ex = e->impl;
	return confine_unit_members(ex->cf, seg->p->cu, out, max);
}

static void px_release(executor *e, const char *key)
{
	pexec *ex = e->impl;
	for (proc *p = ex->procs; p; p = p->next)
		if (!p->seg && p->key && key && strcmp(p->key, key) == 0)
			stop_idle(p);
}

static size_t px_idle_count(executor *e)
{
	return idle_count(e->impl);
}

static void px_shutdown(executor *e)
{
	pexec *ex = e->impl;
	ex->shutting_down = 1;
	for (proc *p = ex->procs; p; p = p->next) {
		if (p->seg)
			px_cancel(e, p->seg);
		else
			stop_idle(p);
	}
	uv_timer_stop(&ex->t_sample);
}

static void sample_closed(uv_handle_t *h)
{
	pexec *ex = h->data;
	ex->sampler_closed = 1;
	pexec_maybe_free(ex);
}

static void px_destroy(executor *e)
{
	pexec *ex = e->impl;
	/* Processes still listed are stopped first; the executor's memory goes
	 * when the last of their handles has closed (run the loop). */
	if (!ex->shutting_down)
		px_shutdown(e);
	ex->destroyed = 1;
	uv_close((uv_handle_t *)&ex->t_sample, sample_closed);
}

static const exec_ops process_ops = {
	.name = "process",
	.launch = px_launch,
	.cancel = px_cancel,
	.ident = px_ident,
	.reclaim = px_reclaim,
	.release = px_release,
	.idle_count = px_idle_count,
	.members = px_members,
	.shutdown = px_shutdown,
	.destroy = px_destroy,
};

int exec_process_new(uv_loop_t *loop, const exec_options *opt, executor **out, rl_err *err)
{
	pexec *ex = calloc(1, sizeof *ex);
	if (!ex)
		return rl_err_set(err, RL_ENOMEM, "creating the process executor");
	ex->loop = loop;
	if (opt)
		ex->opt = *opt;
	else
		exec_options_default(&ex->opt);
	int rc = confine_new(ex->opt.confine, &ex->cf, err);
	if (rc < 0) {
		free(ex);
		return rl_err_prefix(err, "process executor");
	}
	if (ex->opt.cpu_limit &&
	    confine_cpu_setup(ex->cf, ex->cpu_why, sizeof ex->cpu_why) < 0)
		ex->opt.cpu_limit = 0;
	ex->base.ops = &process_ops;
	ex->base.impl = ex;
	signal(SIGPIPE, SIG_IGN);
	uv_timer_init(loop, &ex->t_sample);
	ex->t_sample.data = ex;
	uint64_t every = ms(ex->opt.sample_interval_s > 0 ? ex->opt.sample_interval_s : 0.2);
	uv_timer_start(&ex->t_sample, sample_cb, every, every);
	/* The sampler alone must not keep the loop running. */
	uv_unref((uv_handle_t *)&ex->t_sample);
	*out = &ex->base;
	return 0;
}

exec_confine exec_process_confinement(const executor *e, const char **how)
{
	if (how)
		*how = NULL;
	if (!e || e->ops != &process_ops)
		return EXEC_CONFINE_AUTO;
	const pexec *ex = e->impl;
	if (how)
		*how = confine_describe(ex->cf);
	return confine_kind(ex->cf);
}

int exec_process_cpu_limits(const executor *e, const char **why)
{
	if (why)
		*why = NULL;
	if (!e || e->ops != &process_ops)
		return 0;
	const pexec *ex = e->impl;
	if (why && !ex->opt.cpu_limit && ex->cpu_why[0])
		*why = ex->cpu_why;
	return ex->opt.cpu_limit ? confine_cpu(ex->cf) : 0;
}
