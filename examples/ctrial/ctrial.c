/*
 * ctrial.c - a dependency-free trial program (libm only) that follows the
 * relish trial contract (docs/trials.md); the fast tests and demos run it
 * where a PyTorch trial would take seconds.
 *
 * Objective (maximize "accuracy"; its optimum is known):
 *   q(x, y)       = 1 / (1 + 10 (x - 0.3)^2 + 0.1 (y - 2)^2)     max 1 at x=0.3, y=2
 *   accuracy(e)   = q * (1 - 0.5^(e / 3)) + noise,  clamped to [0, 1]
 *   noise         = uniform in [-0.01, 0.01] from a hash of (trial id, epoch),
 *                   so one trial's curve is the same on every run
 *   loss          = 1 - accuracy
 * Each epoch it sleeps --sleep-ms (default 0), prints
 *   RELISH epoch=E accuracy=A loss=L
 * and writes "epoch E" to $RELISH_CHECKPOINT_DIR/state (tmp + rename), from
 * which a later segment resumes.  It trains epochs from+1 .. to of the
 * segment [from, to] (RELISH_RESOURCE_FROM / _TO, default 0 / 10); when the
 * checkpoint is behind `from` it catches up from the checkpoint; when it is
 * ahead, the epochs up to it are not trained again but their lines are
 * printed again (docs/trials.md, "Checkpoints").
 *
 * Parameters: RELISH_PARAM_X / RELISH_PARAM_Y or --x / --y (flags win).
 * Modes: RELISH_MODE (or --mode) oneshot | warm | worker.  warm: after each
 * segment print RELISH_DONE to=B and read a command line from stdin; worker:
 * print RELISH_READY, then read commands.  Commands are the contract's JSON
 * lines; this program reads only the keys it needs with a tiny scanner
 * (good for relish's own output, not a general JSON parser).
 *
 * Misbehaviour knobs for tests: --fail-at E (exit 1 at epoch E), --segv-at E,
 * --hang-at E (sleep forever), --alloc-mb N (touch N MiB at start, then run),
 * --spike-mb N (touch N MiB at start and free it at once: a short peak),
 * --garbage (random bytes and an unterminated 10 MB line on stdout first),
 * --oom-message (print PyTorch's CUDA OOM text to stderr and exit 1),
 * --bad-done (worker/warm: announce the wrong end of segment),
 * --ignore-term (ignore SIGTERM), --save-at-end (checkpoint only at the end of
 * a segment, as trials with costly checkpoints do: an interrupted segment
 * retrains, and reports again, from its start).
 */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct opts {
	double x, y;
	int sleep_ms;
	int fail_at, segv_at, hang_at;
	long alloc_mb, spike_mb;
	int garbage, oom_message, bad_done, ignore_term, save_at_end;
	const char *mode;
};

struct seg {
	char trial_id[256];
	char ckdir[1024];
	double from, to;
	double x, y;
};

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static double noise(const char *trial_id, int epoch)
{
	uint64_t h = 1469598103934665603ULL;
	for (const char *p = trial_id; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = mix(h ^ (uint64_t)epoch * 0x9e3779b97f4a7c15ULL);
	return ((double)(h >> 11) / 9007199254740992.0) * 0.02 - 0.01;
}

static double accuracy(double x, double y, int epoch, const char *id)
{
	double q = 1.0 / (1.0 + 10 * (x - 0.3) * (x - 0.3) + 0.1 * (y - 2) * (y - 2));
	double a = q * (1 - pow(0.5, epoch / 3.0)) + noise(id, epoch);
	return a < 0 ? 0 : a > 1 ? 1 : a;
}

static double env_num(const char *name, double dflt)
{
	const char *v = getenv(name);
	return v && *v ? atof(v) : dflt;
}

static void sleep_ms(int n)
{
	struct timespec ts = {n / 1000, (long)(n % 1000) * 1000000L};
	while (n > 0 && nanosleep(&ts, &ts) != 0) {
	}
}

static int load_checkpoint(const char *dir)
{
	char path[1100];
	int e = 0;
	if (!dir[0])
		return 0;
	snprintf(path, sizeof path, "%s/state", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "epoch %d", &e) != 1)
		e = 0;
	fclose(f);
	return e;
}

static void save_checkpoint(const char *dir, int epoch)
{
	char path[1100], tmp[1110];
	if (!dir[0])
		return;
	snprintf(path, sizeof path, "%s/state", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "epoch %d\n", epoch);
	fclose(f);
	rename(tmp, path);
}

static void garbage(void)
{
	uint64_t s = 42;
	for (int i = 0; i < 4096; i++) {
		s = mix(s + 1);
		putchar((int)(s & 0xff));
	}
	putchar('\n');
	fputs("RELISH epoch=oops accuracy=\n", stdout);
	fputs("RELISH_DONE nope\n", stdout);
	/* 10 MB without a newline, then the end of that line. */
	for (int i = 0; i < 10 * 1024 * 1024; i++)
		putchar('A' + i % 26);
	putchar('\n');
	fflush(stdout);
}

/* Train one segment.  Returns the exit status on a deliberate failure, or 0. */
static int run_segment(const struct opts *o, const struct seg *s)
{
	int start = load_checkpoint(s->ckdir);
	int from = (int)s->from, to = (int)s->to;
	if (start > from) {
		/* Trained further already (the run that got there died before
		 * relish recorded the segment's end): do not redo it, but print
		 * those epochs' lines again, as the contract asks, since relish
		 * may have died before it read them (it stores each value once).
		 * The curve repeats exactly, so they are the same values. */
		for (int e = from + 1; e <= start && e <= to; e++) {
			double a = accuracy(s->x, s->y, e, s->trial_id);
			printf("RELISH epoch=%d accuracy=%.6f loss=%.6f\n", e, a, 1 - a);
		}
		fflush(stdout);
		from = start;
	} else if (start < from) {
		from = start; /* behind: catch up from the checkpoint */
	}
	if (from >= to && to > 0)
		return 0; /* trained this far: its lines are printed above */
	for (int e = from + 1; e <= to; e++) {
		if (e == o->fail_at) {
			fprintf(stderr, "ctrial: failing at epoch %d as asked\n", e);
			return 1;
		}
		if (e == o->segv_at)
			raise(SIGSEGV);
		if (e == o->hang_at)
			for (;;)
				pause();
		sleep_ms(o->sleep_ms);
		double a = accuracy(s->x, s->y, e, s->trial_id);
		printf("RELISH epoch=%d accuracy=%.6f loss=%.6f\n", e, a, 1 - a);
		fflush(stdout);
		if (!o->save_at_end || e == to)
			save_checkpoint(s->ckdir, e);
	}
	return 0;
}

/* Find "key": in a JSON line and return a pointer to its value, or NULL.
 * Searches from start. */
static const char *json_find(const char *start, const char *key)
{
	char pat[80];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(start, pat);
	return p ? p + strlen(pat) : NULL;
}

static void json_str(const char *line, const char *key, char *out, size_t len)
{
	const char *v = json_find(line, key);
	if (!v || *v != '"')
		return;
	size_t i = 0;
	for (v++; *v && *v != '"' && i + 1 < len; v++)
		out[i++] = *v;
	out[i] = '\0';
}

static void json_num(const char *line, const char *key, double *out)
{
	const char *v = json_find(line, key);
	if (v)
		*out = atof(v);
}

/* Apply a run command to s.  Returns 1 for run, 0 for stop (or EOF). */
static int read_command(struct seg *s)
{
	static char line[1 << 16];
	if (!fgets(line, sizeof line, stdin))
		return 0;
	if (strstr(line, "\"cmd\":\"stop\""))
		return 0;
	json_str(line, "trial_id", s->trial_id, sizeof s->trial_id);
	json_str(line, "checkpoint_dir", s->ckdir, sizeof s->ckdir);
	json_num(line, "from", &s->from);
	json_num(line, "to", &s->to);
	const char *params = json_find(line, "params");
	if (params) {
		json_num(params, "x", &s->x);
		json_num(params, "y", &s->y);
	}
	return 1;
}

static void done(const struct opts *o, const struct seg *s)
{
	printf("RELISH_DONE to=%g\n", o->bad_done ? s->to + 1 : s->to);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct opts o = {.x = env_num("RELISH_PARAM_X", 0.5), .y = env_num("RELISH_PARAM_Y", 0),
			 .sleep_ms = (int)env_num("CTRIAL_SLEEP_MS", 0),
			 .mode = getenv("RELISH_MODE") ? getenv("RELISH_MODE") : "oneshot"};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define FLAG(name) (strcmp(a, name) == 0)
#define VAL(name) (FLAG(name) && v && (i++, 1))
		if (VAL("--x"))
			o.x = atof(v);
		else if (VAL("--y"))
			o.y = atof(v);
		else if (VAL("--sleep-ms"))
			o.sleep_ms = atoi(v);
		else if (VAL("--fail-at"))
			o.fail_at = atoi(v);
		else if (VAL("--segv-at"))
			o.segv_at = atoi(v);
		else if (VAL("--hang-at"))
			o.hang_at = atoi(v);
		else if (VAL("--alloc-mb"))
			o.alloc_mb = atol(v);
		else if (VAL("--spike-mb"))
			o.spike_mb = atol(v);
		else if (VAL("--mode"))
			o.mode = v;
		else if (FLAG("--garbage"))
			o.garbage = 1;
		else if (FLAG("--oom-message"))
			o.oom_message = 1;
		else if (FLAG("--bad-done"))
			o.bad_done = 1;
		else if (FLAG("--ignore-term"))
			o.ignore_term = 1;
		else if (FLAG("--save-at-end"))
			o.save_at_end = 1;
		else {
			fprintf(stderr, "ctrial: unknown argument %s\n", a);
			return 2;
		}
	}
	if (o.ignore_term)
		signal(SIGTERM, SIG_IGN);
	if (o.alloc_mb > 0) {
		size_t n = (size_t)o.alloc_mb << 20;
		char *m = malloc(n);
		if (!m) {
			fprintf(stderr, "ctrial: Cannot allocate memory\n");
			return 1;
		}
		memset(m, 1, n); /* touch every page: resident, not just reserved */
		fprintf(stderr, "ctrial: holding %ld MiB\n", o.alloc_mb);
	}
	if (o.spike_mb > 0) {
		size_t n = (size_t)o.spike_mb << 20;
		char *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "ctrial: Cannot allocate memory\n");
			return 1;
		}
		memset(m, 1, n);
		munmap(m, n); /* given back: only the high-water mark remembers */
	}
	if (o.garbage)
		garbage();
	if (o.oom_message) {
		fprintf(stderr, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n");
		return 1;
	}

	struct seg s = {.from = env_num("RELISH_RESOURCE_FROM", 0),
			.to = env_num("RELISH_RESOURCE_TO", 10), .x = o.x, .y = o.y};
	snprintf(s.trial_id, sizeof s.trial_id, "%s",
		 getenv("RELISH_TRIAL_ID") ? getenv("RELISH_TRIAL_ID") : "t0");
	snprintf(s.ckdir, sizeof s.ckdir, "%s",
		 getenv("RELISH_CHECKPOINT_DIR") ? getenv("RELISH_CHECKPOINT_DIR") : "");

	if (getenv("RELISH_TRIAL_ID"))
		fprintf(stderr, "ctrial: trial %s\n", s.trial_id);
	if (strcmp(o.mode, "worker") == 0) {
		puts("RELISH_READY");
		fflush(stdout);
		while (read_command(&s)) {
			int rc = run_segment(&o, &s);
			if (rc)
				return rc;
			done(&o, &s);
		}
		return 0;
	}
	int rc = run_segment(&o, &s);
	if (rc || strcmp(o.mode, "warm") != 0)
		return rc;
	done(&o, &s);
	while (read_command(&s)) {
		rc = run_segment(&o, &s);
		if (rc)
			return rc;
		done(&o, &s);
	}
	return 0;
}
