/*
 * explain.c - the live driver's words for what went wrong, so a user never
 * has to guess: the last meaningful line of a failed segment's log (the
 * exception, not "exit code 1"), where to read the rest (`relish logs N`),
 * why a program was not found (PATH), which metrics a segment printed when
 * the objective was missing, a warning about a line that was meant as a
 * metric line, and at the end the run's failures in one sentence.
 *
 * Everything here reads what the driver already has (the segment's log
 * file, the engine's trial reasons) and writes text; decisions stay in
 * segment_end.c and the engine.
 */
#include "live/live_int.h"
#include "common/logtext.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TAIL_BYTES 8192
#define LINE_MAX_SHOWN 160

void live__logs_command(const live *d, int64_t trial_id, char *buf, size_t n)
{
	/* a service's users read logs through it, never from its file */
	if (d->opt.service || strcmp(d->db_path, STORE_DEFAULT_PATH) == 0)
		snprintf(buf, n, "relish logs %lld", (long long)trial_id);
	else
		snprintf(buf, n, "relish logs %lld --db %s", (long long)trial_id, d->db_path);
}

/* ---- metric lines ---------------------------------------------------------- */

static void remember_names(live_seg *g, const contract_line *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *name = l->m[i].name;
		if (!strcmp(name, g->x->sp->schedule.resource))
			continue; /* the resource count is no metric the user looks for */
		size_t nl = strlen(name), have = strlen(g->reported);
		/* already listed? */
		const char *p = g->reported;
		int found = 0;
		while ((p = strstr(p, name))) {
			if ((p == g->reported || p[-1] == ' ') && (p[nl] == ',' || !p[nl])) {
				found = 1;
				break;
			}
			p += nl;
		}
		if (found)
			continue;
		if (have + nl + 6 >= sizeof g->reported) {
			if (!strstr(g->reported, ", ..."))
				snprintf(g->reported + have, sizeof g->reported - have, ", ...");
			return;
		}
		snprintf(g->reported + have, sizeof g->reported - have, "%s%s", have ? ", " : "",
			 name);
	}
}

void live__explain_line(live *d, live_seg *g, const contract_line *l)
{
	if (l->kind == CONTRACT_METRICS) {
		remember_names(g, l);
		return;
	}
	if (l->kind != CONTRACT_BAD && l->kind != CONTRACT_NEAR)
		return;
	g->n_missed++;
	live_trial *t = &g->x->trials[g->trial];
	if (t->warned_line)
		return;
	t->warned_line = 1;
	int len = l->text ? (int)(l->len < LINE_MAX_SHOWN ? l->len : LINE_MAX_SHOWN) : 0;
	/* the trial's own bytes, stored for terminals to show: no escape
	 * sequence reaches them (rl_term_text) */
	char raw[LINE_MAX_SHOWN + 1], shown[4 * LINE_MAX_SHOWN + 1];
	snprintf(raw, sizeof raw, "%.*s", len, l->text ? l->text : "");
	rl_term_text(raw, shown, sizeof shown);
	char msg[1200];
	snprintf(msg, sizeof msg, "\"%s\" is not a metric line: %s; the format is \"RELISH "
		 "%s=3 %s=0.91\" (docs/trials.md; said once per trial)", shown,
		 l->why ? l->why : "bad format", g->x->sp->schedule.resource,
		 g->x->sp->objective.metric);
	live__progress_line(d, "%s: trial %lld: %s", g->x->sp->name, (long long)t->store_id, msg);
	/* Stored too, where a service's submitter reads it (`relish status`,
	 * `submit --follow`, the dashboard): best effort, it is a warning. */
	if (!d->fatal)
		store_event_append(d->st, live__now(d), g->x->id, t->store_id, g->store_id,
				   "trial.warning", msg, NULL, NULL);
}

void live__explain_missing(const live_seg *g, char *reason, size_t n)
{
	size_t have = strlen(reason);
	if (g->reported[0])
		snprintf(reason + have, n - have, "; it reported: %s", g->reported);
	else
		snprintf(reason + have, n - have, "; it printed no metric line");
	have = strlen(reason);
	if (g->n_missed)
		snprintf(reason + have, n - have, " (%d line%s missed the format)", g->n_missed,
			 g->n_missed == 1 ? "" : "s");
}

/* ---- a failed segment's last words ------------------------------------------- */

/* The last line of text[0..len) that says something: not blank, not a
 * metric or control line, not relish's own note.  Written trimmed into
 * buf; 0 when none. */
static int last_meaningful(const char *text, size_t len, char *buf, size_t n)
{
	size_t end = len;
	while (end > 0) {
		size_t start = end;
		while (start > 0 && text[start - 1] != '\n')
			start--;
		size_t a = start, b = end;
		while (a < b && (text[a] == ' ' || text[a] == '\t' || text[a] == '\r'))
			a++;
		while (b > a && (text[b - 1] == ' ' || text[b - 1] == '\t' || text[b - 1] == '\r' ||
				 text[b - 1] == '\n'))
			b--;
		/* relish's own notes in the log ("[relish: log truncated ...]")
		 * are not the trial's words. */
		if (b > a && !(b - a > 8 && !memcmp(text + a, "[relish:", 8))) {
			contract_line l;
			contract_kind k = contract_parse_line(text + a, b - a, &l);
			if (k == CONTRACT_LOG || k == CONTRACT_NEAR) {
				size_t m = b - a < LINE_MAX_SHOWN ? b - a : LINE_MAX_SHOWN;
				/* no control characters in a one-line message */
				size_t j = 0;
				for (size_t i = 0; i < m && j + 1 < n; i++)
					buf[j++] = (unsigned char)text[a + i] < 0x20 ? ' ' : text[a + i];
				buf[j] = '\0';
				return j > 0;
			}
		}
		end = start > 0 ? start - 1 : 0;
	}
	return 0;
}

/* The last meaningful line of g's log, whose path the store holds (the
 * launch wrote it there with the placement). */
static int log_last_line(const live *d, const live_seg *g, char *buf, size_t n)
{
	store_segment sg;
	if (!g->store_id || store_segment_get(d->st, g->store_id, &sg, NULL) < 0)
		return 0;
	/* The log is relish's own file in a folder of relish's; still, a
	 * regular file only, and nothing that could block or follow a link. */
	int fd = sg.log_path ? open(sg.log_path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)
			     : -1;
	store_segment_fini(&sg);
	if (fd < 0)
		return 0;
	struct stat st;
	char text[TAIL_BYTES];
	ssize_t got = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t from = st.st_size > TAIL_BYTES ? st.st_size - TAIL_BYTES : 0;
		got = pread(fd, text, sizeof text, from);
	}
	close(fd);
	return got > 0 && last_meaningful(text, (size_t)got, buf, n);
}

/* ---- which Python ran -------------------------------------------------------- */

/* The first executable NAME on path (a PATH value), into out. */
static int which(const char *name, const char *path, char *out, size_t n)
{
	for (const char *p = path; p && *p;) {
		const char *end = strchr(p, ':');
		size_t dl = end ? (size_t)(end - p) : strlen(p);
		int k = snprintf(out, n, "%.*s/%s", (int)dl, dl ? p : ".", name);
		if (k > 0 && (size_t)k < n && access(out, X_OK) == 0)
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* prog as exec finds it: a name without '/' on path, else as written
 * (relative to dir when relative). */
static int resolve_prog(const char *prog, const char *dir, const char *path, char *out, size_t n)
{
	if (!strchr(prog, '/'))
		return which(prog, path, out, n);
	int k = prog[0] == '/' || !dir ? snprintf(out, n, "%s", prog)
				       : snprintf(out, n, "%s/%s", dir, prog);
	return k > 0 && (size_t)k < n;
}

/* The interpreter a trial's command ran under: its program, through
 * `env NAME` and a "#!" line (one level each), resolved on path.  Writes
 * the path and returns 1, or 0 when it cannot tell. */
static int trial_interpreter(const spec *sp, const char *path, char *out, size_t n)
{
	char cur[PATH_MAX];
	const char *dir = sp->trial.workdir;
	if (!sp->trial.argc || !resolve_prog(sp->trial.argv[0], dir, path, cur, sizeof cur))
		return 0;
	const char *base = strrchr(cur, '/');
	base = base ? base + 1 : cur;
	if (!strcmp(base, "env")) {
		for (size_t i = 1; i < sp->trial.argc; i++) {
			const char *a = sp->trial.argv[i];
			if (a[0] == '-' || strchr(a, '='))
				continue; /* env's options and assignments */
			return resolve_prog(a, dir, path, out, n);
		}
		return 0;
	}
	/* A script names its interpreter on its first line. */
	char line[256];
	FILE *f = fopen(cur, "re");
	int got = f && fgets(line, sizeof line, f) && line[0] == '#' && line[1] == '!';
	if (f)
		fclose(f);
	if (!got) {
		snprintf(out, n, "%s", cur);
		return 1;
	}
	char *save = NULL, *w = strtok_r(line + 2, " \t\r\n", &save);
	if (!w)
		return 0;
	const char *wb = strrchr(w, '/');
	if (wb && !strcmp(wb + 1, "env")) {
		char *next;
		while ((next = strtok_r(NULL, " \t\r\n", &save)) && next[0] == '-')
			;
		return next && resolve_prog(next, dir, path, out, n);
	}
	snprintf(out, n, "%s", w);
	return 1;
}

/* A Python import that failed is about which Python ran: name it, and the
 * PATH it was found on (issue 30, item 10: with a pyenv, conda or venv
 * python3 first on PATH a trial failed "ModuleNotFoundError: numpy" with
 * no hint of which interpreter ran).  Appends to reason. */
static void explain_import(const live *d, const live_seg *g, const char *line, char *reason,
			   size_t n)
{
	if (!strstr(line, "ModuleNotFoundError") && !strstr(line, "ImportError"))
		return;
	const live_exp *x = g->x;
	if (x->be->ops->clean_env)
		return; /* an image's Python: its own system, not this PATH */
	const spec *sp = x->sp;
	const char *path = NULL;
	for (size_t i = 0; i < sp->trial.n_env; i++)
		if (!strcmp(sp->trial.env[i].name, "PATH"))
			path = sp->trial.env[i].value;
	if (!path)
		path = x->owner.run_as && x->user_env ? contract_env_get(x->user_env, "PATH")
						      : getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	size_t have = strlen(reason);
	if (x->owner.run_as) {
		/* The trial ran as its submitter; this is the service, root, on
		 * its one loop.  Finding the interpreter means looking up and
		 * opening paths the submitter chose: as root that tells what
		 * exists in folders they may not search and the first line of
		 * files they may not read, and a FIFO there holds the loop (and
		 * every user's work) until someone writes to it.  The PATH is
		 * the submitter's to look up. */
		snprintf(reason + have, n - have, " (found on PATH=%.200s%s; `command -v` there "
			 "names that Python; docs/trials.md, \"Which Python\")", path,
			 strlen(path) > 200 ? "..." : "");
		return;
	}
	char py[PATH_MAX];
	if (!trial_interpreter(sp, path, py, sizeof py))
		return;
	(void)d;
	snprintf(reason + have, n - have, " (the Python that ran: %s; PATH=%.200s%s; "
		 "docs/trials.md, \"Which Python\")", py, path, strlen(path) > 200 ? "..." : "");
}

int live__explain_result(const live *d, const live_seg *g, const exec_result *r,
			exec_result *out)
{
	if (r->outcome == SEG_OUT_COMPLETED || r->outcome == SEG_OUT_CANCELLED)
		return 0;
	const spec *sp = g->x->sp;
	if (r->fault == EXEC_FAULT_NOT_STARTED) {
		/* execvp looks a name without '/' up on PATH only, never in the
		 * working folder: say so where that is the mistake. */
		const char *prog = sp->trial.argv[0];
		if (strchr(prog, '/') || !strstr(r->reason, "no such file"))
			return 0;
		*out = *r;
		snprintf(out->reason, sizeof out->reason,
			 "%s: a program named without a '/' is looked up on PATH, not in "
			 "trial.workdir: write \"./%s\", or name its interpreter "
			 "([\"/usr/bin/python3\", \"%s\"])", r->reason, prog, prog);
		return 1;
	}
	if (r->fault != EXEC_FAULT_NONE || r->outcome == SEG_OUT_OOM)
		return 0; /* the runtime's or the OOM's own words say it */
	char line[LINE_MAX_SHOWN + 1];
	if (!log_last_line(d, g, line, sizeof line))
		return 0;
	if (strstr(r->reason, line))
		return 0;
	*out = *r;
	snprintf(out->reason, sizeof out->reason, "%s: %s", r->reason, line);
	explain_import(d, g, line, out->reason, sizeof out->reason);
	return 1;
}

/* ---- the run's failures in a sentence ---------------------------------------- */

struct failure {
	char key[128];
	uint64_t index;
};

static int failure_cmp(const void *a, const void *b)
{
	const struct failure *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : x->index < y->index ? -1 : x->index > y->index;
}

size_t live__failure_summary(const live *d, const live_exp *x, char *buf, size_t n)
{
	buf[0] = '\0';
	uint64_t nt = engine_n_trials(x->eng);
	size_t failed = 0;
	engine_trial_view v;
	for (uint64_t i = 0; i < nt; i++)
		failed += engine_trial(x->eng, i, &v, NULL) == 0 && v.state == TRIAL_FAILED;
	if (!failed)
		return 0;
	struct failure *f = malloc(failed * sizeof *f);
	if (!f)
		return failed;
	size_t k = 0;
	for (uint64_t i = 0; i < nt && k < failed; i++)
		if (engine_trial(x->eng, i, &v, NULL) == 0 && v.state == TRIAL_FAILED) {
			engine_failure_key(v.reason, f[k].key, sizeof f[k].key);
			f[k++].index = i;
		}
	/* Sorted by kind, then trial: each run is one kind, its first
	 * element the kind's first trial. */
	qsort(f, k, sizeof *f, failure_cmp);
	size_t best_count = 0;
	uint64_t best_first = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && !strcmp(f[j].key, f[i].key))
			j++;
		if (j - i > best_count || (j - i == best_count && f[i].index < best_first)) {
			best_count = j - i;
			best_first = f[i].index;
		}
		i = j;
	}
	free(f);
	if (engine_trial(x->eng, best_first, &v, NULL) < 0)
		return 0;
	int64_t id = best_first < x->n_trials ? x->trials[best_first].store_id : 0;
	char logs[600];
	live__logs_command(d, id, logs, sizeof logs);
	if (failed == 1)
		snprintf(buf, n, "\"%s\" (trial %lld: %s)", v.reason, (long long)id, logs);
	else if (best_count == failed)
		snprintf(buf, n, "%s the same way: \"%s\" (trial %lld: %s)",
			 failed == 2 ? "both" : "all", v.reason, (long long)id, logs);
	else
		snprintf(buf, n, "most common (%zu of them): \"%s\" (trial %lld: %s)", best_count,
			 v.reason, (long long)id, logs);
	return failed;
}
