/*
 * bench_history.c - relish serve with a long history: memory follows what
 * runs, and reads stay fast however many experiments the store holds.
 *
 * It writes a history straight into a new state database (the schema from
 * store_open, then plain SQL in one transaction): HIST_EXPS finished
 * experiments (default 10,000) of 5 owners with HIST_TRIALS trials in all
 * (default 1,000,000) and an experiment.done event each.  Then it starts
 * `relish serve` on that state and submits WAVES waves (default 6) of WAVE
 * experiments (default 50) of quick C trials as root, each wave finished
 * before the next, and measures:
 *   RSS      the daemon's resident memory after each wave (VmRSS, once the
 *            wave's experiments have left the driver), the peak (VmHWM),
 *            and the slope of RSS over the waves after the first (least
 *            squares, KiB per finished experiment);
 *   reads    while the first wave runs, closed loop on one connection,
 *            READS requests (default 2000) of each kind: a page of the list
 *            (GET /api/v1/experiments?limit=50&after=RANDOM), the running
 *            ones (?status=running), one experiment (GET
 *            /api/v1/experiments/ID) and a page of one's trials; p50, p99.
 * Reference in the same command: the same list page and experiment read
 * done straight on the database (store_experiment_page and the handler's
 * summaries, no HTTP), so the API's cost is the difference.
 * Goals (issue 27): RSS < 100 MB and flat after warm-up; list and status
 * reads p99 < 20 ms.
 *
 * Usage (root): bench_history [RELISH [CTRIAL]]   (default: relish and
 * ctrial next to this program).  Env: HIST_EXPS, HIST_TRIALS, WAVES, WAVE,
 * READS, WARMUP (waves left out of the slope, default 1); SLOPE_MAX=KIB
 * makes it exit 1 when the slope per experiment is above KIB (the soak test, tests/test_serve_soak.sh, uses this); KEEP=1
 * keeps the work folder.
 */
#include <curl/curl.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/encode.h"
#include "median.h"
#include "store/store.h"

static char work[PATH_MAX], sock[PATH_MAX + 32], relish[PATH_MAX], ctrial[PATH_MAX];
static pid_t serve_pid;

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cleanup(void)
{
	if (serve_pid > 0) {
		kill(serve_pid, SIGTERM);
		waitpid(serve_pid, NULL, 0);
		serve_pid = 0;
	}
	if (work[0] && !getenv("KEEP")) {
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof cmd, "rm -rf %s", work);
		if (system(cmd) < 0)
			perror("rm");
	}
}

static void die(const char *what)
{
	fprintf(stderr, "bench_history: %s\n", what);
	cleanup();
	exit(2);
}

static void on_signal(int s)
{
	(void)s;
	cleanup();
	_exit(130);
}

static long env_long(const char *k, long dflt)
{
	const char *v = getenv(k);
	return v && *v ? atol(v) : dflt;
}

/* ---- the history, written straight into the database ---- */

static void sql_ok(sqlite3 *db, int rc, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
		fprintf(stderr, "bench_history: %s: %s\n", what, sqlite3_errmsg(db));
		die("writing the history");
	}
}

static void write_history(const char *path, long n_exps, long n_trials)
{
	store *s;
	rl_err err;
	if (store_open(path, 0, &s, &err) < 0) /* the schema, as relish makes it */
		die(err.msg);
	store_close(s);
	sqlite3 *db;
	sql_ok(NULL, sqlite3_open(path, &db), "open");
	sql_ok(db, sqlite3_exec(db, "PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL), "begin");
	sqlite3_stmt *xe, *xt, *xv;
	sql_ok(db, sqlite3_prepare_v2(db,
		"INSERT INTO experiments(id, name, spec_text, spec_path, status, created_at,"
		" finished_at, objective_metric, mode, owner_uid, owner, submission)"
		" VALUES(?1, ?2, ?3, '/home/h/exp.yaml', 'done', ?4, ?5, 'accuracy', 'max', ?6, ?7,"
		" NULL)", -1, &xe, NULL), "prepare");
	sql_ok(db, sqlite3_prepare_v2(db,
		"INSERT INTO trials(experiment_id, idx, params_json, status, resource_done,"
		" objective, objective_resource, created_at, updated_at)"
		" VALUES(?1, ?2, ?3, ?4, 9, ?5, 9, ?6, ?7)", -1, &xt, NULL), "prepare");
	sql_ok(db, sqlite3_prepare_v2(db,
		"INSERT INTO events(at, experiment_id, kind, message)"
		" VALUES(?1, ?2, 'experiment.done', ?3)", -1, &xv, NULL), "prepare");
	static const char spec[] =
		"{\"name\":\"h\",\"objective\":{\"metric\":\"accuracy\",\"mode\":\"max\"},"
		"\"search\":{\"algorithm\":\"random\",\"max_trials\":100}}";
	double t0 = (double)time(NULL) - 400.0 * 86400.0; /* a year and more ago */
	long per = n_exps ? n_trials / n_exps : 0, left = n_trials;
	unsigned rng = 12345;
	for (long e = 1; e <= n_exps; e++) {
		double created = t0 + (double)e * 3000.0, finished = created + 2000.0;
		char name[64], owner[16], msg[96];
		snprintf(name, sizeof name, "history-%ld", e);
		snprintf(owner, sizeof owner, "hist%ld", e % 5);
		sqlite3_bind_int64(xe, 1, e);
		sqlite3_bind_text(xe, 2, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(xe, 3, spec, -1, SQLITE_STATIC);
		sqlite3_bind_double(xe, 4, created);
		sqlite3_bind_double(xe, 5, finished);
		sqlite3_bind_int64(xe, 6, 200000 + e % 5);
		sqlite3_bind_text(xe, 7, owner, -1, SQLITE_TRANSIENT);
		sql_ok(db, sqlite3_step(xe), "experiment");
		sqlite3_reset(xe);
		long nt = e == n_exps ? left : per;
		left -= nt;
		for (long k = 0; k < nt; k++) {
			rng = rng * 1103515245u + 12345u;
			double x = (double)(rng >> 8) / 16777216.0;
			char params[80];
			snprintf(params, sizeof params, "{\"x\":%.6f,\"y\":%.6f}", x, 1.0 - x);
			static const char *const st[] = {"completed", "stopped", "stopped", "failed"};
			const char *status = st[(rng >> 4) & 3];
			sqlite3_bind_int64(xt, 1, e);
			sqlite3_bind_int64(xt, 2, k);
			sqlite3_bind_text(xt, 3, params, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(xt, 4, status, -1, SQLITE_STATIC);
			if (status[0] == 'f')
				sqlite3_bind_null(xt, 5);
			else
				sqlite3_bind_double(xt, 5, x);
			sqlite3_bind_double(xt, 6, created + (double)k);
			sqlite3_bind_double(xt, 7, created + (double)k + 60.0);
			sql_ok(db, sqlite3_step(xt), "trial");
			sqlite3_reset(xt);
		}
		snprintf(msg, sizeof msg, "done: %ld trials", nt);
		sqlite3_bind_double(xv, 1, finished);
		sqlite3_bind_int64(xv, 2, e);
		sqlite3_bind_text(xv, 3, msg, -1, SQLITE_TRANSIENT);
		sql_ok(db, sqlite3_step(xv), "event");
		sqlite3_reset(xv);
	}
	sqlite3_finalize(xe);
	sqlite3_finalize(xt);
	sqlite3_finalize(xv);
	sql_ok(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
	sqlite3_close(db);
}

/* ---- the service ---- */

struct body {
	char *p;
	size_t n;
};

static size_t keep_body(char *p, size_t s, size_t n, void *ud)
{
	struct body *b = ud;
	char *q = realloc(b->p, b->n + s * n + 1);
	if (!q)
		return 0;
	memcpy(q + b->n, p, s * n);
	b->n += s * n;
	q[b->n] = '\0';
	b->p = q;
	return s * n;
}

static CURL *conn(struct body *b)
{
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	return c;
}

/* One request on c (body NULL: GET); its latency in seconds, or -1 when it
 * failed or answered other than want. */
static double req(CURL *c, struct body *b, const char *path, const char *body, long want)
{
	char url[512];
	snprintf(url, sizeof url, "http://relish%s", path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	else
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	b->n = 0;
	double t0 = mono();
	long code = 0;
	if (curl_easy_perform(c) != CURLE_OK)
		return -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code == want ? mono() - t0 : -1;
}

static long status_kib(const char *key)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/status", (int)serve_pid);
	FILE *f = fopen(path, "r");
	long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, strlen(key)))
			v = strtol(line + strlen(key) + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static void submit(CURL *c, struct body *b, int wave, int k)
{
	char spec[2048];
	snprintf(spec, sizeof spec,
		 "name: wave%d-e%d\n"
		 "objective: {metric: accuracy, mode: max}\n"
		 "search: {algorithm: random, seed: %d, max_trials: 4, max_concurrent: 2,\n"
		 "         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, "
		 "low: -5.0, high: 5.0}}}\n"
		 "schedule: {algorithm: asha, resource: epoch, min: 1, max: 3, reduction_factor: 3}\n"
		 "trial:\n"
		 "  command: [\"%s\", \"--x\", \"{x}\", \"--y\", \"{y}\", \"--sleep-ms\", \"50\"]\n"
		 "  resources: {memory: 32MiB, cpus: 0.5}\n",
		 wave, k, k + 1, ctrial);
	json_t *j = json_pack("{s:s, s:s, s:s}", "spec", spec, "name", "wave.yaml", "dir", work);
	char *text = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	double dt = req(c, b, "/api/v1/experiments", text, 201);
	free(text);
	if (dt < 0) {
		fprintf(stderr, "bench_history: submit: %s\n", b->p ? b->p : "(no answer)");
		die("a submission failed");
	}
}

/* How many experiments run (the service's list, filtered). */
static long running(CURL *c, struct body *b)
{
	if (req(c, b, "/api/v1/experiments?status=running&limit=1000", NULL, 200) < 0)
		return -1;
	json_t *j = json_loads(b->p, 0, NULL);
	long n = (long)json_array_size(json_object_get(j, "experiments"));
	json_decref(j);
	return n;
}

/* ---- reads ---- */

enum { R_PAGE, R_RUNNING, R_ONE, R_TRIALS, R__N };
static const char *const read_name[R__N] = {
	"list page (limit 50, after a random id)", "running (?status=running)",
	"one experiment (GET /experiments/ID)", "trials (one's, ?limit=100)"};

static void reads(CURL *c, struct body *b, long n_exps, long n, double *lat[R__N], int nl[R__N])
{
	unsigned rng = 777;
	for (long i = 0; i < n * R__N; i++) {
		int kind = (int)(i % R__N);
		rng = rng * 1103515245u + 12345u;
		long id = n_exps ? 1 + (long)((rng >> 8) % (unsigned)n_exps) : 1;
		char path[160];
		switch (kind) {
		case R_PAGE:
			snprintf(path, sizeof path, "/api/v1/experiments?limit=50&after=%ld", id);
			break;
		case R_RUNNING:
			snprintf(path, sizeof path, "/api/v1/experiments?status=running");
			break;
		case R_ONE:
			snprintf(path, sizeof path, "/api/v1/experiments/%ld", id);
			break;
		default:
			snprintf(path, sizeof path, "/api/v1/experiments/%ld/trials?limit=100", id);
		}
		double dt = req(c, b, path, NULL, 200);
		if (dt >= 0)
			lat[kind][nl[kind]++] = dt;
	}
}

static double med(double *v, int n)
{
	return n > 0 ? median(v, n) : NAN;
}

static double pct(double *v, int n, double p)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	int k = (int)ceil(p * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* The reference: a list page and one experiment read on the database. */
static void direct_reads(const char *db, long n_exps, double *page, double *one, int n)
{
	store *s;
	rl_err err;
	if (store_open(db, STORE_READONLY, &s, &err) < 0)
		die(err.msg);
	for (int i = 0; i < n; i++) {
		store_exp_filter f = STORE_EXP_FILTER_ALL;
		f.brief = 1;
		f.limit = 50;
		f.after = n_exps ? (i * 7919) % n_exps : 0;
		for (int pass = 0; pass < 2; pass++) {
			double t0 = mono();
			store_experiment *v;
			size_t ne;
			if (pass == 1)
				f.limit = 1, f.after = f.after ? f.after - 1 : 0;
			if (store_experiment_page(s, &f, &v, &ne, &err) < 0)
				die(err.msg);
			api_exp_summary *sums = calloc(ne ? ne : 1, sizeof *sums);
			if (sums && api_exp_summarise_all(s, v, ne, sums, &err) == 0)
				for (size_t k = 0; k < ne; k++) {
					json_t *j = api_json_experiment(&v[k], &sums[k], 0);
					free(json_dumps(j, JSON_COMPACT));
					json_decref(j);
					api_exp_summary_fini(&sums[k]);
				}
			free(sums);
			store_experiments_free(v, ne);
			(pass ? one : page)[i] = mono() - t0;
		}
	}
	store_close(s);
}

int main(int argc, char **argv)
{
	if (geteuid() != 0) {
		fprintf(stderr, "bench_history: needs root (relish serve, trials as the submitter)\n");
		return 2;
	}
	long n_exps = env_long("HIST_EXPS", 10000), n_trials = env_long("HIST_TRIALS", 1000000);
	long waves = env_long("WAVES", 6), wave = env_long("WAVE", 50);
	long n_reads = env_long("READS", 2000), warmup = env_long("WARMUP", 1);
	if (warmup < 0 || waves < warmup + 2 || wave < 1 || n_exps < 0 || n_trials < 0 ||
	    n_reads < 1)
		die("WARMUP >= 0, WAVES >= WARMUP + 2, WAVE >= 1, HIST_EXPS >= 0, HIST_TRIALS >= 0, "
		    "READS >= 1");
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	self[sl > 0 ? sl : 0] = '\0';
	char *dir = dirname(self);
	snprintf(relish, sizeof relish, "%s", argc > 1 ? argv[1] : "");
	if (!relish[0])
		snprintf(relish, sizeof relish, "%s/relish", dir);
	snprintf(ctrial, sizeof ctrial, "%s/ctrial", dir);
	if (argc > 2)
		snprintf(ctrial, sizeof ctrial, "%s", argv[2]);
	snprintf(work, sizeof work, "/tmp/relish-bench-history-XXXXXX");
	if (!mkdtemp(work))
		die("mkdtemp");
	chmod(work, 0755);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	char state[PATH_MAX + 32], db[PATH_MAX + 48], devices[PATH_MAX + 32], log[PATH_MAX + 32];
	snprintf(state, sizeof state, "%s/state", work);
	snprintf(db, sizeof db, "%s/relish.db", state);
	snprintf(devices, sizeof devices, "%s/devices.yaml", work);
	snprintf(log, sizeof log, "%s/serve.log", work);
	snprintf(sock, sizeof sock, "%s/relish.sock", state);
	if (mkdir(state, 0755) != 0)
		die("mkdir state");
	double t_gen = mono();
	write_history(db, n_exps, n_trials);
	t_gen = mono() - t_gen;
	struct stat sb;
	double db_mib = stat(db, &sb) == 0 ? (double)sb.st_size / 1048576.0 : NAN;
	FILE *df = fopen(devices, "w");
	if (!df)
		die("devices file");
	fprintf(df, "host:\n  memory: 8GiB\n  cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	fclose(df);
	serve_pid = fork();
	if (serve_pid == 0) {
		if (!freopen(log, "w", stderr))
			_exit(1);
		execl(relish, relish, "serve", "--state", state, "--devices", devices, (char *)NULL);
		_exit(127);
	}
	struct body b = {0};
	CURL *c = conn(&b);
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	int up = 0;
	for (int i = 0; i < 800 && !up; i++) {
		up = req(c, &b, "/api/v1/server", NULL, 200) >= 0;
		if (!up)
			usleep(25000);
	}
	if (!up)
		die("relish serve did not answer");
	long rss0 = status_kib("VmRSS:");

	double *lat[R__N];
	int nl[R__N] = {0};
	for (int k = 0; k < R__N; k++)
		if (!(lat[k] = malloc(sizeof(double) * (size_t)n_reads)))
			die("memory");
	long *rss = calloc((size_t)waves, sizeof *rss);
	double *secs = calloc((size_t)waves, sizeof *secs);
	if (!rss || !secs)
		die("memory");
	for (long w = 0; w < waves; w++) {
		double t0 = mono();
		for (long k = 0; k < wave; k++)
			submit(c, &b, (int)w, (int)k);
		if (w == 0)
			reads(c, &b, n_exps, n_reads, lat, nl);
		long r;
		while ((r = running(c, &b)) != 0) {
			if (r < 0)
				die("reading the running experiments");
			if (mono() - t0 > 900)
				die("a wave ran longer than 15 minutes");
			usleep(200000);
		}
		secs[w] = mono() - t0;
		usleep(600000); /* a few ticks: the ended ones leave the driver */
		rss[w] = status_kib("VmRSS:");
	}
	long hwm = status_kib("VmHWM:");
	double ref_page[64], ref_one[64];
	direct_reads(db, n_exps, ref_page, ref_one, 64);

	/* The slope after the warm-up waves, per finished experiment. */
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	long m = waves - warmup;
	for (long w = warmup; w < waves; w++) {
		double x = (double)(w * wave), y = (double)rss[w];
		sx += x, sy += y, sxx += x * x, sxy += x * y;
	}
	double slope = (m * sxy - sx * sy) / (m * sxx - sx * sx); /* KiB per experiment */
	double load[3] = {0};
	if (getloadavg(load, 3) < 0)
		load[0] = NAN;
	printf("bench_history: a history of %ld finished experiments and %ld trials (written in "
	       "%.1f s, %.0f MiB), then %ld waves of %ld experiments of ctrial (4 trials, ASHA 1..3 "
	       "epochs, 0.5 CPU each) on this machine's %ld CPUs, load %.1f\n", n_exps, n_trials,
	       t_gen, db_mib, waves, wave, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
	printf("RSS      at start %.1f MiB; after each wave:", (double)rss0 / 1024.0);
	for (long w = 0; w < waves; w++)
		printf(" %.1f", (double)rss[w] / 1024.0);
	printf(" MiB (waves took");
	for (long w = 0; w < waves; w++)
		printf(" %.0f", secs[w]);
	printf(" s)\n");
	int flat = slope <= (getenv("SLOPE_MAX") ? atof(getenv("SLOPE_MAX")) : 4.0);
	printf("slope    %.2f KiB per finished experiment after %ld warm-up wave%s (%.0f KiB over "
	       "%ld experiments)   [goal flat, <= %s KiB: %s]\n", slope, warmup,
	       warmup == 1 ? "" : "s", slope * (double)(m - 1) * (double)wave, (m - 1) * wave,
	       getenv("SLOPE_MAX") ? getenv("SLOPE_MAX") : "4", flat ? "met" : "MISSED");
	printf("peak     relish serve VmHWM %.1f MiB   [goal < 100 MB: %s]\n", (double)hwm / 1024.0,
	       hwm * 1024.0 < 100e6 ? "met" : "MISSED");
	int fast = 1;
	for (int k = 0; k < R__N; k++) {
		double p99 = pct(lat[k], nl[k], 0.99);
		printf("read     %-40s %5d: median %.2f ms, p99 %.2f ms, max %.2f ms", read_name[k],
		       nl[k], med(lat[k], nl[k]) * 1e3, p99 * 1e3, pct(lat[k], nl[k], 1.0) * 1e3);
		if (k != R_TRIALS) {
			printf("   [goal p99 < 20 ms: %s]", p99 < 0.020 ? "met" : "MISSED");
			fast &= p99 < 0.020;
		}
		printf("\n");
	}
	double rp = median(ref_page, 64), ro = median(ref_one, 64);
	printf("reference straight on the database (no HTTP, same summaries): list page median "
	       "%.2f ms (API/direct %.2f), one experiment %.2f ms (API/direct %.2f)\n", rp * 1e3,
	       med(lat[R_PAGE], nl[R_PAGE]) / rp, ro * 1e3, med(lat[R_ONE], nl[R_ONE]) / ro);
	for (int k = 0; k < R__N; k++)
		free(lat[k]);
	free(rss);
	free(secs);
	free(b.p);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	cleanup();
	return getenv("SLOPE_MAX") && !flat ? 1 : 0;
}
