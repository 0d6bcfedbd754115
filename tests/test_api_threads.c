/*
 * test_api_threads.c - the HTTP server's threading rule (api.h, http.c),
 * against a real libmicrohttpd server on a unix socket, a real store file
 * and a libuv loop run by the test:
 *   - a route that reads the store is answered while the loop thread is
 *     blocked (as it is while the driver spawns a segment): its answer
 *     comes from an HTTP thread with a read-only connection of its own,
 *     and sees what the loop's connection committed before;
 *   - a route of the loop (devices, queue, submit, cancel) is answered by
 *     the loop thread only: not while it is blocked, at once after;
 *   - closing the server while a request waits for the loop answers it
 *     503 and returns (no connection left suspended, no hang).
 * Waits are on conditions (with a generous cap that fails the test), not
 * on time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "store/store.h"

#define CAP_S 30.0 /* a condition not met by then fails the test */

static char dir[64], db[128], sock[128];
static atomic_int loop_blocked;

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef struct call {
	const char *path;
	pthread_t th;
	atomic_int done;
	long status;
	int blocked_at_answer; /* loop_blocked when the answer came */
	char body[4096];
	size_t len;
} call;

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
	call *c = ud;
	size_t k = sz * n;
	if (c->len + k < sizeof c->body) {
		memcpy(c->body + c->len, p, k);
		c->len += k;
		c->body[c->len] = '\0';
	}
	return k;
}

static void *call_thread(void *arg)
{
	call *c = arg;
	CURL *h = curl_easy_init();
	char url[256];
	snprintf(url, sizeof url, "http://relish%s", c->path);
	curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, sock);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)CAP_S);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status);
	else
		c->status = -1;
	c->blocked_at_answer = atomic_load(&loop_blocked);
	curl_easy_cleanup(h);
	atomic_store(&c->done, 1);
	return NULL;
}

static void call_start(call *c, const char *path)
{
	memset(c, 0, sizeof *c);
	c->path = path;
	assert_int_equal(pthread_create(&c->th, NULL, call_thread, c), 0);
}

/* Until cond() or CAP_S; 1 when it held. */
static int wait_until(int (*cond)(void *), void *arg)
{
	double t0 = mono();
	while (!cond(arg)) {
		if (mono() - t0 > CAP_S)
			return 0;
		usleep(1000);
	}
	return 1;
}

static int call_done(void *arg)
{
	return atomic_load(&((call *)arg)->done);
}

static api_server *srv;

/* A new state folder (dir, db, sock) for one test; its store open for
 * writing. */
static store *fresh_state(const char *name)
{
	snprintf(dir, sizeof dir, "/tmp/relish-api-%s-XXXXXX", name);
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof db, "%s/state.db", dir);
	snprintf(sock, sizeof sock, "%s/api.sock", dir);
	store *w;
	rl_err err;
	assert_int_equal(store_open(db, 0, &w, &err), 0);
	return w;
}

/* The server of ctx on the test's unix socket, run by *loop. */
static void serve_on_sock(uv_loop_t *loop, api_ctx *ctx)
{
	assert_int_equal(uv_loop_init(loop), 0);
	api_options o;
	api_options_default(&o);
	char where[160];
	snprintf(where, sizeof where, "unix:%s", sock);
	o.listen[0] = where;
	o.n_listen = 1;
	rl_err err;
	if (api_server_start(loop, ctx, &o, &srv, &err) < 0)
		fail_msg("api_server_start: %s", err.msg);
}

static int one_waiting(void *arg)
{
	(void)arg;
	return api_server_waiting(srv) == 1;
}

/* What the loop's timer callbacks do, phase by phase. */
static store *loop_st;
static call c_read, c_loop, c_close;
static int phase;
static uv_timer_t timer;

static void on_timer(uv_timer_t *t)
{
	rl_err err;
	if (phase == 0) {
		/* The loop is busy (a spawn, say): a read is answered anyway,
		 * and sees what this thread committed just before. */
		store_experiment e = {.name = (char *)"committed-on-the-loop",
				      .created_at = 1000.0, .objective_metric = (char *)"acc",
				      .mode = (char *)"max"};
		store *w;
		assert_int_equal(store_open(db, 0, &w, &err), 0);
		assert_int_equal(store_experiment_create(w, &e, NULL, &err), 0);
		store_close(w);
		atomic_store(&loop_blocked, 1);
		call_start(&c_read, "/api/v1/experiments");
		if (!wait_until(call_done, &c_read))
			fail_msg("a store read was not answered while the loop was blocked");
		/* A loop route now: it must wait for this callback to end. */
		call_start(&c_loop, "/api/v1/devices");
		if (!wait_until(one_waiting, NULL))
			fail_msg("the devices request was not handed to the loop");
		assert_false(atomic_load(&c_loop.done));
		atomic_store(&loop_blocked, 0);
		phase = 1;
		uv_timer_start(t, on_timer, 1, 0);
	} else if (phase == 1) {
		if (!atomic_load(&c_loop.done)) {
			uv_timer_start(t, on_timer, 1, 0); /* answered by the loop: soon */
			return;
		}
		/* Closing with a request queued for the loop: answered 503. */
		atomic_store(&loop_blocked, 1);
		call_start(&c_close, "/api/v1/queue");
		if (!wait_until(one_waiting, NULL))
			fail_msg("the queue request was not handed to the loop");
		api_server_close(srv);
		atomic_store(&loop_blocked, 0);
		uv_close((uv_handle_t *)t, NULL);
		phase = 2;
	}
	(void)loop_st;
}

static void test_threading_rule(void **state)
{
	(void)state;
	rl_err err;
	store *w = fresh_state("threads");
	store_device dev = {.name = (char *)"host", .uuid = (char *)"host", .is_gpu = 0,
			    .mem_total_mib = 1024, .compute_total = 2};
	assert_int_equal(store_device_put(w, &dev, NULL, &err), 0);
	store_close(w);
	/* As serve --read-only: no driver; the loop's own store reads. */
	assert_int_equal(store_open(db, STORE_READONLY, &loop_st, &err), 0);
	api_policy pol = {0};
	api_ctx ctx = {.d = NULL, .st = loop_st, .db_path = db, .pol = &pol, .state_dir = dir};
	uv_loop_t loop;
	serve_on_sock(&loop, &ctx);
	uv_timer_init(&loop, &timer);
	uv_timer_start(&timer, on_timer, 0, 0);
	uv_run(&loop, UV_RUN_DEFAULT);
	assert_int_equal(phase, 2);
	pthread_join(c_read.th, NULL);
	pthread_join(c_loop.th, NULL);
	pthread_join(c_close.th, NULL);
	/* the read: answered by an HTTP thread while the loop was blocked,
	 * with the row committed before */
	assert_int_equal(c_read.status, 200);
	assert_true(c_read.blocked_at_answer);
	assert_non_null(strstr(c_read.body, "committed-on-the-loop"));
	/* the loop's route: after the loop was free again */
	assert_int_equal(c_loop.status, 200);
	assert_false(c_loop.blocked_at_answer);
	assert_non_null(strstr(c_loop.body, "\"devices\""));
	/* closing: the waiting request got 503 (the service is stopping) */
	assert_int_equal(c_close.status, 503);
	assert_non_null(strstr(c_close.body, "RL_EINTERRUPTED"));
	assert_int_equal(uv_loop_close(&loop), 0);
	store_close(loop_st);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* One GET on the server's socket: its body parsed (the test fails on
 * anything but 200 and JSON). */
static json_t *get_json(const char *path)
{
	call c;
	call_start(&c, path);
	pthread_join(c.th, NULL);
	assert_int_equal(c.status, 200);
	json_error_t je;
	json_t *j = json_loads(c.body, 0, &je);
	if (!j)
		fail_msg("GET %s: not JSON (%s): %s", path, je.text, c.body);
	return j;
}

static json_t *exp_named(json_t *doc, const char *name)
{
	json_t *arr = json_object_get(doc, "experiments"), *x;
	size_t i;
	json_array_foreach(arr, i, x)
		if (!strcmp(json_string_value(json_object_get(x, "experiment")), name))
			return x;
	fail_msg("no experiment %s in the list", name);
	return NULL;
}

/* The status read keeps each experiment's answer while its change count
 * holds: a running one's elapsed_s still moves at every read, a change
 * of its trials shows at the next read, the list and the one-experiment
 * answer agree, and a finished one's elapsed_s is its run time. */
static void test_status_answers_kept(void **state)
{
	(void)state;
	rl_err err;
	store *w = fresh_state("status");
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	double t0 = (double)now.tv_sec - 100;
	store_experiment r = {.name = (char *)"runs", .created_at = t0, .finished_at = NAN,
			      .objective_metric = (char *)"acc", .mode = (char *)"max"};
	store_experiment f = {.name = (char *)"ended", .created_at = t0, .finished_at = NAN,
			      .objective_metric = (char *)"acc", .mode = (char *)"max"};
	int64_t rid, fid, t;
	assert_int_equal(store_experiment_create(w, &r, &rid, &err), 0);
	assert_int_equal(store_experiment_create(w, &f, &fid, &err), 0);
	assert_int_equal(store_experiment_set_status(w, fid, EXP_DONE, t0 + 42.5, &err), 0);
	assert_int_equal(store_trial_insert(w, rid, 0, "{}", t0, &t, &err), 0);
	assert_int_equal(store_trial_set_status(w, t, TRIAL_RUNNING, NULL, t0, &err), 0);
	api_policy pol = {0};
	store *rs;
	assert_int_equal(store_open(db, STORE_READONLY, &rs, &err), 0);
	api_ctx ctx = {.d = NULL, .st = rs, .db_path = db, .pol = &pol, .state_dir = dir};
	uv_loop_t loop;
	serve_on_sock(&loop, &ctx);
	double last = 0;
	for (int i = 0; i < 6; i++) {
		json_t *doc = get_json("/api/v1/experiments");
		json_t *x = exp_named(doc, "runs");
		double el = json_number_value(json_object_get(x, "elapsed_s"));
		if (!(el > last && el >= 99 && el < 1000))
			fail_msg("read %d: elapsed_s %g after %g", i, el, last);
		last = el;
		assert_true(json_is_null(json_object_get(x, "best")));
		assert_int_equal(json_integer_value(json_object_get(
					 json_object_get(x, "trials"), "running")), 1);
		json_t *y = exp_named(doc, "ended");
		assert_float_equal(json_number_value(json_object_get(y, "elapsed_s")), 42.5, 1e-9);
		json_decref(doc);
		usleep(2000);
	}
	/* a trial's report: the next reads (any view) show it */
	assert_int_equal(store_trial_set_progress(w, t, 3, 0.75, 3, t0 + 1, &err), 0);
	for (int i = 0; i < 4; i++) {
		json_t *doc = get_json("/api/v1/experiments");
		json_t *b = json_object_get(exp_named(doc, "runs"), "best");
		assert_float_equal(json_number_value(json_object_get(b, "value")), 0.75, 0);
		assert_int_equal(json_integer_value(json_object_get(b, "trial_id")), t);
		json_decref(doc);
	}
	/* the one-experiment answer is the list's entry (but for the time),
	 * and its search space (none here: no spec stored) */
	char path[64];
	snprintf(path, sizeof path, "/api/v1/experiments/%lld", (long long)rid);
	json_t *one = get_json(path), *doc = get_json("/api/v1/experiments");
	json_t *x = json_deep_copy(exp_named(doc, "runs"));
	assert_true(json_number_value(json_object_get(one, "elapsed_s")) >= last);
	assert_true(json_is_null(json_object_get(one, "space")));
	assert_null(json_object_get(x, "space"));
	json_object_del(one, "space");
	json_object_del(one, "elapsed_s");
	json_object_del(x, "elapsed_s");
	assert_true(json_equal(one, x));
	json_decref(one);
	json_decref(x);
	json_decref(doc);
	api_server_close(srv);
	uv_run(&loop, UV_RUN_DEFAULT); /* the server's handles close */
	assert_int_equal(uv_loop_close(&loop), 0);
	store_close(rs);
	store_close(w);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threading_rule),
		cmocka_unit_test(test_status_answers_kept),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
