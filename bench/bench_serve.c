/*
 * bench_serve.c - relish serve under load: 50 experiments of quick C
 * trials from 5 users, and the API's latency and throughput while the
 * service schedules them.
 *
 * It makes 5 Unix users (useradd; removed at the end), starts `relish
 * serve` on a temporary state folder, and measures:
 *   submit   each user (a child process with the user's uid: the socket's
 *            peer credentials name it) submits 10 experiments, one after
 *            another; latency of each POST /api/v1/experiments, which
 *            returns once the experiment is committed;
 *   reads    open loop at RATE requests/s (default 500) for SECONDS
 *            (default 10) from 4 connections, alternating status (GET
 *            /api/v1/experiments, all 50 with their summaries) and trials
 *            (GET /api/v1/experiments/K/trials); latency from the send;
 *            sends that fell behind schedule are counted;
 *   faults   the daemon's minor page faults (all threads) during the reads:
 *            where a launch forks the daemon, copy-on-write shows here;
 *   max      closed loop: 4 connections as fast as the service answers
 *            GET /api/v1/experiments/K for 5 s: requests per second;
 *   RSS      the daemon's peak and current resident memory (VmHWM, VmRSS).
 * Reference in the same command: the status read done straight on the
 * database (a read-only store_open and the same summaries the handler
 * builds), so the API's cost is the difference.
 * Goals (issue 17, 2-core machine): submit p99 < 20 ms, reads p99 < 5 ms
 * at 500 req/s, RSS < 100 MB.
 *
 * Usage (root): bench_serve [RELISH [CTRIAL]]   (default: relish and
 * ctrial next to this program).  RATE=, SECONDS= override the read phase.
 */
#include <curl/curl.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
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

#define N_USERS 5
#define EXP_PER_USER 10
#define N_CONN 4

static char work[PATH_MAX], sock[PATH_MAX + 32], relish[PATH_MAX], ctrial[PATH_MAX];
static char users[N_USERS][32];
static int n_made;
static pid_t serve_pid;

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t sink(char *p, size_t s, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return s * n;
}

static CURL *conn(void)
{
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	return c;
}

/* One GET on c; latency in seconds, or -1 on failure. */
static double get(CURL *c, const char *path)
{
	char url[512];
	snprintf(url, sizeof url, "http://relish%s", path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	double t0 = mono();
	long code = 0;
	if (curl_easy_perform(c) != CURLE_OK)
		return -1;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	return code == 200 ? mono() - t0 : -1;
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
	int k = (int)ceil(p * n) - 1;
	return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

static void cleanup(void)
{
	if (serve_pid > 0) {
		kill(serve_pid, SIGTERM);
		waitpid(serve_pid, NULL, 0);
		serve_pid = 0;
	}
	char cmd[PATH_MAX + 64];
	for (int i = 0; i < n_made; i++) {
		snprintf(cmd, sizeof cmd, "pkill -9 -u %s 2>/dev/null; userdel %s 2>/dev/null", users[i],
			 users[i]);
		if (system(cmd) < 0)
			perror("userdel");
	}
	n_made = 0;
	if (work[0] && !getenv("KEEP")) {
		snprintf(cmd, sizeof cmd, "rm -rf %s", work);
		if (system(cmd) < 0)
			perror("rm");
	}
}

static void die(const char *what)
{
	fprintf(stderr, "bench_serve: %s\n", what);
	cleanup();
	exit(1);
}

static void on_signal(int s)
{
	(void)s;
	cleanup();
	_exit(130);
}

/* ---- submit: one child per user ---- */

static void write_spec(const char *path, const char *name)
{
	FILE *f = fopen(path, "w");
	if (!f)
		die("writing a spec");
	fprintf(f,
		"name: %s\n"
		"objective: {metric: accuracy, mode: max}\n"
		"search: {algorithm: random, seed: 5, max_trials: 12, max_concurrent: 2,\n"
		"         space: {x: {type: uniform, low: 0.0, high: 1.0}, y: {type: uniform, low: -5.0, high: 5.0}}}\n"
		"schedule: {algorithm: asha, resource: epoch, min: 1, max: 9, reduction_factor: 3}\n"
		"trial:\n"
		"  command: [\"%s\", \"--x\", \"{x}\", \"--y\", \"{y}\", \"--sleep-ms\", \"20\"]\n"
		"  resources: {memory: 32MiB, cpus: 0.5}\n"
		"sharing: {policy: pack}\n",
		name, ctrial);
	fclose(f);
	chmod(path, 0644);
}

static void submit_child(int u, int fd)
{
	struct passwd *pw = getpwnam(users[u]);
	if (!pw || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
		_exit(2);
	CURL *c = conn();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_URL, "http://relish/api/v1/experiments");
	for (int k = 0; k < EXP_PER_USER; k++) {
		char path[PATH_MAX + 64], name[64];
		snprintf(name, sizeof name, "bench-u%d-e%d", u, k);
		snprintf(path, sizeof path, "%s/%s.yaml", work, name);
		FILE *f = fopen(path, "r");
		char text[4096];
		size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
		if (f)
			fclose(f);
		text[n] = '\0';
		json_t *body = json_pack("{s:s, s:s, s:s}", "spec", text, "name", path, "dir", work);
		char *b = json_dumps(body, JSON_COMPACT);
		json_decref(body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, b);
		double t0 = mono();
		long code = 0;
		int ok = curl_easy_perform(c) == CURLE_OK;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		double dt = ok && code == 201 ? mono() - t0 : -1;
		free(b);
		if (write(fd, &dt, sizeof dt) != sizeof dt)
			_exit(3);
	}
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	_exit(0);
}

/* ---- reads ---- */

typedef struct reader {
	int id;
	double rate;      /* per connection */
	double seconds;
	double *lat;
	int n, late, failed;
	int closed;       /* closed loop: as fast as it answers */
} reader;

static atomic_int exp_count = 50;

static void *read_loop(void *arg)
{
	reader *r = arg;
	CURL *c = conn();
	double t0 = mono(), next = t0;
	int k = 0;
	while (mono() - t0 < r->seconds) {
		if (!r->closed) {
			double now = mono();
			if (now < next) {
				struct timespec ts = {0, (long)((next - now) * 1e9)};
				nanosleep(&ts, NULL);
			} else if (now - next > 0.001) {
				r->late++;
			}
			next += 1.0 / r->rate;
		}
		char path[128];
		int e = 1 + (k * N_CONN + r->id) % atomic_load(&exp_count);
		if (r->closed)
			snprintf(path, sizeof path, "/api/v1/experiments/%d", e);
		else if (k % 2 == 0)
			snprintf(path, sizeof path, "/api/v1/experiments");
		else
			snprintf(path, sizeof path, "/api/v1/experiments/%d/trials", e);
		double dt = get(c, path);
		if (dt < 0)
			r->failed++;
		else
			r->lat[r->n++] = dt;
		k++;
	}
	curl_easy_cleanup(c);
	return NULL;
}

static void run_readers(int closed, double rate, double seconds, reader *rv)
{
	pthread_t th[N_CONN];
	for (int i = 0; i < N_CONN; i++) {
		rv[i] = (reader){.id = i, .rate = rate / N_CONN, .seconds = seconds, .closed = closed};
		rv[i].lat = malloc(sizeof(double) * (size_t)(closed ? 2000000 : rate * seconds + 100));
		pthread_create(&th[i], NULL, read_loop, &rv[i]);
	}
	for (int i = 0; i < N_CONN; i++)
		pthread_join(th[i], NULL);
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

/* The daemon's minor page faults so far (every thread's): what copy-on-write
 * after a fork of the daemon costs shows here. */
static long serve_minflt(void)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)serve_pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long v;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %lu", &v) != 1)
		return -1;
	return (long)v;
}

/* The reference: the status read on the database directly. */
static double direct_status(const char *db)
{
	store *s;
	rl_err err;
	if (store_open(db, STORE_MUST_EXIST, &s, &err) < 0)
		return -1;
	double t0 = mono();
	store_experiment *v;
	size_t n;
	if (store_experiment_list_brief(s, &v, &n, &err) == 0) {
		api_exp_summary *sums = calloc(n ? n : 1, sizeof *sums);
		if (sums && api_exp_summarise_all(s, v, n, sums, &err) == 0)
			for (size_t i = 0; i < n; i++) {
				json_decref(api_json_experiment(&v[i], &sums[i], 0));
				api_exp_summary_fini(&sums[i]);
			}
		free(sums);
		store_experiments_free(v, n);
	}
	double dt = mono() - t0;
	store_close(s);
	return dt;
}

int main(int argc, char **argv)
{
	if (geteuid() != 0) {
		fprintf(stderr, "bench_serve: needs root (it makes 5 users and runs trials as them)\n");
		return 2;
	}
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
	double rate = getenv("RATE") ? atof(getenv("RATE")) : 500;
	double seconds = getenv("SECONDS") ? atof(getenv("SECONDS")) : 10;
	snprintf(work, sizeof work, "/tmp/relish-bench-serve-XXXXXX");
	if (!mkdtemp(work))
		die("mkdtemp");
	chmod(work, 0755);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	/* binaries where the users can run them */
	char cmd[4 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cp %s %s/relish-runas %s %s/ && chmod 755 %s/relish %s/ctrial %s/relish-runas",
		 relish, dir, ctrial, work, work, work, work);
	if (system(cmd) != 0)
		die("copying relish, relish-runas and ctrial");
	snprintf(relish, sizeof relish, "%s/relish", work);
	snprintf(ctrial, sizeof ctrial, "%s/ctrial", work);
	unsigned tag = (unsigned)getpid() ^ (unsigned)time(NULL);
	for (int i = 0; i < N_USERS; i++) {
		snprintf(users[i], sizeof users[i], "rlb%05xu%d", tag & 0xfffff, i);
		snprintf(cmd, sizeof cmd, "useradd -M -d /nonexistent -s /usr/sbin/nologin %s", users[i]);
		if (system(cmd) != 0)
			die("useradd");
		n_made++;
	}
	for (int u = 0; u < N_USERS; u++)
		for (int k = 0; k < EXP_PER_USER; k++) {
			char path[PATH_MAX + 64], name[64];
			snprintf(name, sizeof name, "bench-u%d-e%d", u, k);
			snprintf(path, sizeof path, "%s/%s.yaml", work, name);
			write_spec(path, name);
		}
	char devices[PATH_MAX + 32], state[PATH_MAX + 32], log[PATH_MAX + 32];
	snprintf(devices, sizeof devices, "%s/devices.yaml", work);
	snprintf(state, sizeof state, "%s/state", work);
	snprintf(sock, sizeof sock, "%s/state/relish.sock", work);
	snprintf(log, sizeof log, "%s/serve.log", work);
	FILE *df = fopen(devices, "w");
	if (!df)
		die("devices file");
	/* the machine's own CPUs: 2 segments of 0.5 CPU per CPU */
	fprintf(df, "host:\n  memory: 8GiB\n  cpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	fclose(df);
	serve_pid = fork();
	if (serve_pid == 0) {
		if (!freopen(log, "w", stderr))
			_exit(1);
		if (getenv("LOG_REQUESTS")) /* every request's time in the service's log */
			execl(relish, relish, "serve", "--state", state, "--devices", devices,
			      "--log-requests", (char *)NULL);
		execl(relish, relish, "serve", "--state", state, "--devices", devices, (char *)NULL);
		_exit(127);
	}
	CURL *probe = conn();
	int up = 0;
	for (int i = 0; i < 400 && !up; i++) {
		up = get(probe, "/api/v1/server") >= 0;
		if (!up)
			usleep(25000);
	}
	curl_easy_cleanup(probe);
	if (!up)
		die("relish serve did not answer");

	/* submit: 5 users at once, 10 each */
	int pfd[2];
	if (pipe(pfd) != 0)
		die("pipe");
	double t_sub = mono();
	pid_t kids[N_USERS];
	for (int u = 0; u < N_USERS; u++) {
		kids[u] = fork();
		if (kids[u] == 0) {
			close(pfd[0]);
			submit_child(u, pfd[1]);
		}
	}
	close(pfd[1]);
	double sub[N_USERS * EXP_PER_USER];
	int ns = 0, sub_fail = 0;
	double dt;
	while (read(pfd[0], &dt, sizeof dt) == sizeof dt) {
		if (dt < 0)
			sub_fail++;
		else
			sub[ns++] = dt;
	}
	close(pfd[0]);
	for (int u = 0; u < N_USERS; u++)
		while (waitpid(kids[u], NULL, 0) < 0 && errno == EINTR)
			;
	t_sub = mono() - t_sub;
	if (ns == 0)
		die("no submission succeeded");

	/* reads at RATE while the 50 experiments run */
	reader rv[N_CONN];
	long flt0 = serve_minflt();
	run_readers(0, rate, seconds, rv);
	long flt = flt0 >= 0 ? serve_minflt() - flt0 : -1;
	int nl = 0, late = 0, rfail = 0;
	for (int i = 0; i < N_CONN; i++)
		nl += rv[i].n;
	double *lat = malloc(sizeof(double) * (size_t)(nl ? nl : 1));
	int k = 0;
	for (int i = 0; i < N_CONN; i++) {
		memcpy(lat + k, rv[i].lat, sizeof(double) * (size_t)rv[i].n);
		k += rv[i].n;
		late += rv[i].late;
		rfail += rv[i].failed;
		free(rv[i].lat);
	}
	/* closed loop */
	reader cv[N_CONN];
	run_readers(1, 0, 5, cv);
	long total = 0;
	int cfail = 0;
	double *clat = malloc(sizeof(double) * 2000000 * N_CONN);
	int nc = 0;
	for (int i = 0; i < N_CONN; i++) {
		total += cv[i].n;
		cfail += cv[i].failed;
		memcpy(clat + nc, cv[i].lat, sizeof(double) * (size_t)cv[i].n);
		nc += cv[i].n;
		free(cv[i].lat);
	}
	/* the same reads once every experiment has ended: the service alone,
	 * without the loop's scheduling work between requests */
	double t_wait = mono();
	CURL *pc = conn();
	for (;;) {
		get(pc, "/api/v1/queue");
		store *qs;
		rl_err qe;
		int running = 1;
		char qdb[PATH_MAX + 32];
		snprintf(qdb, sizeof qdb, "%s/state/relish.db", work);
		if (store_open(qdb, STORE_MUST_EXIST, &qs, &qe) == 0) {
			store_experiment *v;
			size_t n;
			if (store_experiment_list(qs, &v, &n, &qe) == 0) {
				running = 0;
				for (size_t i = 0; i < n; i++)
					running += v[i].status == EXP_RUNNING;
				store_experiments_free(v, n);
			}
			store_close(qs);
		}
		if (!running || mono() - t_wait > 240)
			break;
		usleep(200000);
	}
	curl_easy_cleanup(pc);
	reader iv[N_CONN];
	run_readers(0, rate, 5, iv);
	int ni = 0;
	for (int i = 0; i < N_CONN; i++)
		ni += iv[i].n;
	double *ilat = malloc(sizeof(double) * (size_t)(ni ? ni : 1));
	int ki = 0, ifail = 0;
	for (int i = 0; i < N_CONN; i++) {
		memcpy(ilat + ki, iv[i].lat, sizeof(double) * (size_t)iv[i].n);
		ki += iv[i].n;
		ifail += iv[i].failed;
		free(iv[i].lat);
	}
	/* how far the experiments got meanwhile */
	char db[PATH_MAX + 32];
	snprintf(db, sizeof db, "%s/relish.db", state);
	double ref[9];
	for (int i = 0; i < 9; i++)
		ref[i] = direct_status(db);
	long hwm = status_kib("VmHWM:"), rss = status_kib("VmRSS:");
	store *st;
	rl_err err;
	long segs = 0, done = 0;
	if (store_open(db, STORE_MUST_EXIST, &st, &err) == 0) {
		store_experiment *v;
		size_t n;
		if (store_experiment_list(st, &v, &n, &err) == 0) {
			for (size_t i = 0; i < n; i++) {
				done += v[i].status == EXP_DONE;
				store_segment *gv;
				size_t ng;
				if (store_segment_list_experiment(st, v[i].id, &gv, &ng, &err) == 0) {
					segs += (long)ng;
					store_segments_free(gv, ng);
				}
			}
			store_experiments_free(v, n);
		}
		store_close(st);
	}

	double load[3] = {0};
	if (getloadavg(load, 3) < 0)
		load[0] = NAN;
	printf("bench_serve: %d users x %d experiments of ctrial (12 trials, ASHA 1..9 epochs, 20 ms/epoch,"
	       " 0.5 CPU each), host device = this machine's %ld CPUs, load %.1f\n", N_USERS,
	       EXP_PER_USER, sysconf(_SC_NPROCESSORS_ONLN), load[0]);
	double p50 = median(sub, ns), p99 = pct(sub, ns, 0.99);
	printf("submit   %d in %.2f s (5 users at once): median %.2f ms, p99 %.2f ms, max %.2f ms, "
	       "failed %d   [goal p99 < 20 ms: %s]\n", ns, t_sub, p50 * 1e3, p99 * 1e3,
	       pct(sub, ns, 1.0) * 1e3, sub_fail, p99 < 0.020 ? "met" : "MISSED");
	double r50 = nl ? median(lat, nl) : NAN, r99 = nl ? pct(lat, nl, 0.99) : NAN;
	printf("reads    %d in %.0f s at %.0f/s offered (status and trials alternating, %d "
	       "connections): median %.2f ms, p99 %.2f ms, max %.2f ms, late sends %d, failed %d   "
	       "[goal p99 < 5 ms: %s]\n", nl, seconds, rate, N_CONN, r50 * 1e3, r99 * 1e3,
	       nl ? pct(lat, nl, 1.0) * 1e3 : NAN, late, rfail, r99 < 0.005 ? "met" : "MISSED");
	printf("faults   relish serve minor page faults during the reads: %ld (%.0f/s)\n", flt,
	       (double)flt / seconds);
	printf("max      %.0f requests/s sustained (GET one experiment, %d connections, closed loop "
	       "5 s): median %.2f ms, p99 %.2f ms, failed %d\n", (double)total / 5.0, N_CONN,
	       nc ? median(clat, nc) * 1e3 : NAN, nc ? pct(clat, nc, 0.99) * 1e3 : NAN, cfail);
	printf("idle     %d reads in 5 s at %.0f/s once every experiment has ended: median %.2f ms, "
	       "p99 %.2f ms, failed %d\n", ni, rate, ni ? median(ilat, ni) * 1e3 : NAN,
	       ni ? pct(ilat, ni, 0.99) * 1e3 : NAN, ifail);
	printf("reference status read straight on the database (same summaries, no HTTP): "
	       "median %.2f ms\n", median(ref, 9) * 1e3);
	free(ilat);
	printf("RSS      relish serve peak %.1f MiB, now %.1f MiB   [goal < 100 MB: %s]\n",
	       (double)hwm / 1024.0, (double)rss / 1024.0, hwm * 1024.0 < 100e6 ? "met" : "MISSED");
	printf("all: %ld segments scheduled, %ld of 50 experiments done (the read and max phases ran "
	       "while they were scheduled)\n", segs, done);
	free(lat);
	free(clat);
	cleanup();
	return 0;
}
